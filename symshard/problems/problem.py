"""A problem and its answers: the values the engine makes, and the grading of an answer.

Part of :mod:`symshard.problems`, below the drawing (:mod:`~symshard.problems.drawing`) that makes
them and the writers that export them: a :class:`Problem` holds its statement, hints, solution and
:class:`Answer` records; an answer grades what a student gives (:class:`Grade`), recognising the
family's common mistakes (:class:`Mistake`).

Examples:
    >>> from symshard.problems import family, variant
    >>> p = variant(family("allgather-time"), 7)
    >>> p.id, show_value(p.answer("time").value, "s")
    ('allgather-time-7', '5.87 ms')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.units import format_bytes, format_flops, format_number, format_seconds, json_value, parse_quantity
from ..errors import AnswerError, TemplateError, did_you_mean
from ..messages import say
from .family import Family
from .faults import reason
from .textforms import forms, normal

if TYPE_CHECKING:
    from ..render import Figure

__all__ = ["Answer", "Grade", "Mistake", "Problem", "as_float", "show_value", "value_key"]


@dataclass(frozen=True, slots=True)
class Mistake:
    """What a common mistake gives, and the feedback for it."""

    value: object
    feedback: str

    @property
    def number(self) -> float | None:
        return as_float(self.value)


@dataclass(frozen=True, slots=True)
class Grade:
    """The verdict on one answer: whether it is right, feedback, and the expected value as shown."""

    correct: bool
    feedback: str
    expected: str


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer record: computed value, unit, relative tolerance and common mistakes."""

    name: str
    label: str
    value: object
    unit: str
    rel_tol: float
    mistakes: tuple[Mistake, ...] = ()

    @property
    def number(self) -> float | None:
        """The value as a float in SI units (None for a text answer)."""
        return as_float(self.value)

    @property
    def show(self) -> str:
        """The value with sensible units: ``559 µs``, ``32 MiB``, ``8.59 GFLOP``."""
        return show_value(self.value, self.unit)

    def __str__(self) -> str:
        return self.show

    def grade(self, given: object) -> Grade:
        """Check a student's answer: right within the tolerance, a known mistake, or neither.

        ``given`` is a number in SI units or text with a unit (``'186 µs'``, ``'32 MiB'``).

        Raises:
            AnswerError: ``given`` cannot be read as a value of this answer's unit.

        Examples:
            >>> from symshard.problems import family, variant
            >>> a = variant(family("allgather-time"), 7).answer("time")
            >>> a.show, a.grade("5.9 ms").correct, a.grade(0.00293).feedback[:40]
            ('5.87 ms', True, 'This counts one byte per element, but ea')
        """
        if self.unit == "text":
            said = normal(str(given))
            if said in {normal(form) for form in forms(self.value, self.label)}:
                return Grade(True, say("Right."), self.show)
            for m in self.mistakes:
                if said in {normal(form) for form in forms(m.value, self.label)}:
                    return Grade(False, m.feedback, self.show)
            return Grade(False, say("Not what the solution finds ({value}).", value=self.show), self.show)
        try:
            number = float(parse_quantity(given, self.unit))  # type: ignore[arg-type]
        except ValueError as err:
            raise AnswerError(
                say("cannot read {given} as the answer '{name}' ({label}): {why}",
                    given=repr(given), name=self.name, label=self.label, why=reason(err)),
                hint=say("type a number in {unit} or with a unit, like {example}",
                         unit=self.unit, example=repr(self.show)),
            ) from None  # fmt: skip
        tol = max(self.rel_tol, 1e-9)
        if _close(number, self.number, tol):
            return Grade(True, say("Right."), self.show)
        for m in self.mistakes:
            if _close(number, m.number, tol):
                return Grade(False, m.feedback, self.show)
        return Grade(
            False,
            say("Not within {tolerance} of the solution's value; see the worked solution.", tolerance=f"{tol:.0%}"),
            self.show,
        )

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "label": self.label,
            "value": json_value(self.value) if self.unit != "text" else str(self.value),
            "unit": self.unit,
            "rel_tol": self.rel_tol,
            "display": self.show,
            "mistakes": [
                {"value": json_value(m.value) if self.unit != "text" else str(m.value), "display":
                 show_value(m.value, self.unit), "feedback": m.feedback}
                for m in self.mistakes
            ],
        }  # fmt: skip

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Answer", self.name, {"value": self.show, "unit": self.unit, "rel_tol": self.rel_tol,
                       "mistakes": len(self.mistakes)})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Problem:
    """One rendered problem."""

    family: Family
    seed: int
    params: tuple[tuple[str, object], ...]
    statement: str
    hints: tuple[str, ...]
    solution: str
    answers: tuple[Answer, ...]
    path: tuple[tuple[str, str], ...] = ()
    language: str = "en"
    attempt: int = field(default=0, compare=False)
    figures: tuple[tuple[str, Figure], ...] = field(default=(), compare=False)
    """``(file name, figure)`` for each figure the template drew, in order (see :mod:`~symshard.problems.figures`)."""

    def __post_init__(self) -> None:
        if self.figures:
            _check_figures(self.id, self.figures)

    @property
    def id(self) -> str:
        return f"{self.family.name}-{self.seed}"

    @property
    def title(self) -> str:
        """The family's title in the problem's language."""
        return self.family.title_in(self.language)

    @property
    def objective(self) -> str:
        """The family's objective in the problem's language."""
        return self.family.objective_in(self.language)

    def answer(self, name: str) -> Answer:
        """The answer record called ``name``.

        Raises:
            AnswerError: there is no such answer (the message lists the ones there are).
        """
        for a in self.answers:
            if a.name == name:
                return a
        names = [a.name for a in self.answers]
        raise AnswerError(
            say("problem {problem} has no answer '{name}'", problem=self.id, name=name), hint=did_you_mean(name, names)
        )

    def key(self) -> tuple:
        """What makes two variants the same: family, answers and reasoning path."""
        return (self.family.name, tuple((a.name, value_key(a.value)) for a in self.answers), self.path)

    def to_dict(self) -> dict:
        """The JSON record (DESIGN's keys: id, family, seed, statement, solution, answers)."""
        return {
            "id": self.id,
            "family": self.family.name,
            "seed": self.seed,
            "language": self.language,
            "title": self.title,
            "difficulty": self.family.difficulty,
            "tags": list(self.family.tags),
            "objective": self.objective,
            "params": {k: json_value(v) if not isinstance(v, str) else v for k, v in self.params},
            "statement": self.statement,
            "hints": list(self.hints),
            "solution": self.solution,
            "answers": [a.to_dict() for a in self.answers],
            "figures": [{"name": name, "title": f.title, "alt": f.alt, "svg": f.svg} for name, f in self.figures],
        }

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Problem", self.id, {"answers": {a.name: a.show for a in self.answers}},
                       language=self.language)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _check_figures(problem: str, figures: object) -> None:
    """Refuse figures the engine did not name: each must be a :class:`~symshard.render.Figure` filed as
    ``<problem id>-<n>.svg``, numbered from 1 in order, so that no name can leave a folder or a package.

    Raises:
        TemplateError: anything else in the list.
    """
    from ..render.figure import Figure

    if not isinstance(figures, tuple):
        figures = (figures,)
    for n, item in enumerate(figures, 1):
        expected = f"{problem}-{n}.svg"
        if not (isinstance(item, tuple) and len(item) == 2 and item[0] == expected and isinstance(item[1], Figure)):
            raise TemplateError(
                say("problem {problem}: figure {number} is not a figure filed as {name}",
                    problem=problem, number=n, name=expected),
                hint=say("figures come from figure(kind, ...) in the template; the engine names their files"),
            )  # fmt: skip


def as_float(value: object) -> float | None:
    """``value`` as a float in SI units; None for text, a truth value, or an expression with a symbol left."""
    if isinstance(value, bool) or isinstance(value, str):
        return None
    try:
        return float(as_expr(value))
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def _close(x: float, target: float | None, rel_tol: float) -> bool:
    return target is not None and abs(x - target) <= rel_tol * abs(target)


def value_key(value: object) -> object:
    """What tells two values apart (in :meth:`Problem.key`): the number to 12 significant digits, else the text."""
    number = as_float(value)
    return float(f"{number:.12g}") if number is not None else str(value)


def show_value(value: object, unit: str) -> str:
    """A value in its unit for people (the unit decides the formatting)."""
    if unit == "text":
        return str(value)
    if unit == "s":
        return format_seconds(value)
    if unit == "B":
        return format_bytes(value)
    if unit == "FLOP":
        return format_flops(value)
    if unit == "FLOP/s":
        return format_flops(value) + "/s"
    if unit == "B/s":
        return format_number(value) + " B/s"
    return format_number(value)

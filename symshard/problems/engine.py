"""Making problems: seeded variants of a family, rendered in the sandbox, and problem sets.

A variant is a pure function of (family, seed). Each parameter draws from its
own random stream, seeded by a hash of (family, seed, parameter, attempt), so
editing one parameter's choices does not reshuffle the others. The family's
``let`` values are computed by the algebra, its ``checks`` reject degenerate
variants (the next attempt draws again), its answers are evaluated, and the
statement, hints and solution are rendered from the template. A problem set
takes variants round-robin over the chosen families and drops duplicates:
two variants are the same when their answers and reasoning path are.

Examples:
    >>> p = variant(family("allgather-time"), 7)
    >>> p.id, [a.name for a in p.answers]
    ('allgather-time-7', ['time'])
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import random
import re
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import jinja2.meta
import jinja2.sandbox
import sympy

from ..algebra.mathtext import as_expr
from ..algebra.units import format_bytes, format_flops, format_number, format_seconds, json_value, parse_quantity
from ..errors import (
    AnswerError,
    HardwareError,
    SymshardError,
    TemplateError,
    TooLargeError,
    UnknownHardwareError,
    did_you_mean,
)
from ..machines.presets import hardware_files
from ..messages import Clauses, Message, say
from .budget import Budget, run
from .family import DIFFICULTIES, FAMILY_NAME, AnswerSpec, Family, key_positions, load_family, read_spec
from .figures import FigureBook
from .sandbox import environment, family_file
from .textforms import forms, normal

if TYPE_CHECKING:
    from ..render import Figure

__all__ = [
    "Answer",
    "FamilyInfo",
    "Grade",
    "Mistake",
    "Problem",
    "families",
    "family",
    "generate",
    "variant",
    "variants_of",
]

MAX_ATTEMPTS = 200

MAX_PROBLEMS = 1_000
"""The most problems one set may have: each takes its own draw, and every export holds them all (a set of
200 in every format takes a quarter of a minute and 500 MB)."""
"""Draws tried for one variant before the family is declared unable to produce it."""


@dataclass(frozen=True, slots=True)
class Mistake:
    """What a common mistake gives, and the feedback for it."""

    value: object
    feedback: str

    @property
    def number(self) -> float | None:
        return _as_float(self.value)


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
        return _as_float(self.value)

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
                    given=repr(given), name=self.name, label=self.label, why=_reason(err)),
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
        return (self.family.name, tuple((a.name, _key(a.value)) for a in self.answers), self.path)

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


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    """What templates see as ``family``: its name, title, difficulty, tags and objective, never its folder
    (no machine path can reach a problem). It prints as the family's name.

    Examples:
        >>> info = FamilyInfo.of(family("allgather-time"))
        >>> str(info), info.difficulty
        ('allgather-time', 'medium')
    """

    name: str
    title: str
    difficulty: str
    tags: tuple[str, ...]
    objective: str

    @classmethod
    def of(cls, fam: Family) -> FamilyInfo:
        return cls(fam.name, fam.title, fam.difficulty, fam.tags, fam.objective)

    def __str__(self) -> str:
        return self.name


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


def _as_float(value: object) -> float | None:
    if isinstance(value, bool) or isinstance(value, str):
        return None
    try:
        return float(as_expr(value))
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def _close(x: float, target: float | None, rel_tol: float) -> bool:
    return target is not None and abs(x - target) <= rel_tol * abs(target)


def _key(value: object) -> object:
    number = _as_float(value)
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


# -- loading ---------------------------------------------------------------------------------


def _builtin_root() -> Path:
    try:
        return Path(str(importlib.resources.files("symshard.families")))
    except ModuleNotFoundError:  # a source tree that was never installed: the families sit beside the package
        return Path(__file__).resolve().parents[2] / "problems"


def _roots(extra: Iterable[Path | str] = ()) -> list[Path]:
    roots = [_builtin_root()]
    env_dirs = os.environ.get("SYMSHARD_FAMILIES", "")
    roots += [Path(p) for p in env_dirs.split(os.pathsep) if p]
    roots += [Path(p) for p in extra]
    return roots


def family_folders(extra: Iterable[Path | str] = ()) -> dict[str, Path]:
    """Every family folder, by name; nothing is loaded yet.

    A family never replaces another: two folders with one name (a family in ``$SYMSHARD_FAMILIES``
    or ``extra`` called like a built-in one, or like one in another folder) are refused, so that
    a set or a page never shows someone else's family under a name it trusts.

    Raises:
        TemplateError: a family root that does not exist, a family folder whose name is not a
            family's name, or two families with one name.
    """
    found: dict[str, Path] = {}
    for root in _roots(extra):
        if not root.is_dir():
            raise TemplateError(
                say("family folder '{path}' does not exist", path=str(root)),
                hint=say("point at a folder of family folders"),
            )
        for sub in sorted(root.iterdir()):
            # a family is a real folder of the root: a link to a folder elsewhere is not followed
            if not (sub.is_dir() and not sub.is_symlink() and (sub / "family.toml").exists()):
                continue
            if not FAMILY_NAME.match(sub.name):
                raise TemplateError(
                    say("the family folder '{path}' has a name that is not a family's name", path=str(sub)),
                    hint=say("rename it: a letter, then letters, digits, '-' or '_' (at most 80 characters)"),
                )
            path = sub.absolute()  # the worker may run in another folder later
            known = found.get(sub.name)
            if known is not None and not _same_folder(known, path):
                raise TemplateError(
                    say("two problem families are called '{name}': '{first}' and '{second}'",
                        name=sub.name, first=str(known), second=str(path)),
                    hint=say("rename one of the folders: a family never replaces another, a built-in one included"),
                )  # fmt: skip
            found[sub.name] = path
    return dict(sorted(found.items()))


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def families(extra: Iterable[Path | str] = ()) -> dict[str, Family]:
    """Every family, by name: the built-in ones, those in ``$SYMSHARD_FAMILIES`` and in ``extra``.

    Raises:
        TemplateError: a family folder whose spec is broken.
    """
    return {name: _load(path) for name, path in family_folders(extra).items()}


_LOADED: dict[tuple[Path, float], Family] = {}


def _load(path: Path) -> Family:
    try:
        stamp = (path, os.lstat(path / "family.toml").st_mtime_ns)
    except OSError:
        return load_family(path)  # it reports the missing file
    if stamp not in _LOADED:
        _LOADED[stamp] = load_family(path)
    return _LOADED[stamp]


def family(name: str, extra: Iterable[Path | str] = ()) -> Family:
    """The family called ``name``.

    Raises:
        TemplateError: no such family.
    """
    folders = family_folders(extra)
    if name not in folders:
        raise TemplateError(say("unknown problem family '{name}'", name=name), hint=did_you_mean(name, list(folders)))
    return _load(folders[name])


# -- one variant ----------------------------------------------------------------------------------


class _DrawRejectedError(Exception):
    """A drawn variant failed a check (or the algebra refused it): draw again.

    Its arguments: the check's name and None, or the expression's place and what the algebra said.
    """


def _reason(err: BaseException) -> str:
    """What an exception says, kept as a message when it is one (``str(err)`` would be English text)."""
    said = getattr(err, "message", err.args[0] if len(err.args) == 1 else None)
    return said if isinstance(said, Message) and said == str(err) else str(err)


def _one_line(err: SymshardError) -> str:
    """:meth:`SymshardError.one_line` as a message, to say in any language."""
    what, hint = err.message, err.hint
    if err.text is not None and err.span is not None:
        column = err.span[0] + 1
        if f"'{err.text}'" in what:
            if hint:
                return say("{what} (at column {column}); hint: {hint}", what=what, column=column, hint=hint)
            return say("{what} (at column {column})", what=what, column=column)
        if hint:
            return say("{what} (at column {column} of '{text}'); hint: {hint}",
                       what=what, column=column, text=err.text, hint=hint)  # fmt: skip
        return say("{what} (at column {column} of '{text}')", what=what, column=column, text=err.text)
    if hint:
        return say("{what}; hint: {hint}", what=what, hint=hint)
    return what


def _stream(*parts: object) -> random.Random:
    digest = hashlib.sha256("\0".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@lru_cache(maxsize=4096)
def _compiled(folder: Path, source: str) -> Callable[[dict], object]:
    """A compiled expression that runs in a given scope (globals plus values) without copying it.

    Jinja's own ``compile_expression`` builds a fresh context, globals copied, on every
    call; a variant evaluates dozens of expressions, so it shares one scope instead.
    """
    env = environment(folder)
    tmpl = env.compile_expression(source, undefined_to_none=False)._template  # the expression's template

    def run(scope: dict) -> object:
        context = jinja2.runtime.Context(env, scope, tmpl.name, tmpl.blocks)
        for _ in tmpl.root_render_func(context):
            pass
        return context.vars["result"]

    return run


@lru_cache(maxsize=4096)
def _compiled_template(folder: Path, source: str) -> jinja2.Template:
    return environment(folder).from_string(source)


@lru_cache(maxsize=256)
def _positions(folder: Path, stamp: int) -> dict[tuple[object, ...], tuple[int, int]]:
    try:
        return key_positions(read_spec(folder))
    except TemplateError:
        return {}


def _in_spec(fam: Family, where: str, why: str) -> Message:
    """An error of the expression at ``where`` in ``family.toml``: ``why`` is a message or a library's own words."""
    return say("family '{family}', family.toml {where}: {why}", family=fam.name, where=_spec_place(fam, where), why=why)


def _at_line(fam: Family, file: str, line: object, why: str) -> Message:
    """An error at ``line`` of the family's template ``file``."""
    return say("family '{family}', {file} line {line}: {why}", family=fam.name, file=file, line=line, why=why)


def _spec_place(fam: Family, where: str) -> str:
    """``line 12 (let.cost)``: where in ``family.toml`` an expression is written (its name alone if not found)."""
    parts: list[object] = []
    for piece in where.split("."):
        name, _, index = piece.partition("[")
        parts.append(name)
        if index:
            parts.append(int(index.rstrip("]")))
    if parts[:1] == ["answers"] and len(parts) > 1:  # answers are named in messages, indexed in the file
        names = [a.name for a in fam.answers]
        parts[1:2] = ["answers", names.index(parts[1])] if parts[1] in names else []
        parts = parts[1:]
    if len(parts) >= 3 and parts[0] == "answers" and parts[2] == "mistakes" and len(parts) >= 4:
        parts = [*parts[:4], "value"]
    elif parts[:1] == ["answers"] and len(parts) == 2:
        parts.append("value")
    try:
        stamp = os.lstat(fam.path / "family.toml").st_mtime_ns
    except OSError:
        stamp = 0
    line = _positions(fam.path, stamp).get(tuple(parts))
    return say("line {line} ({where})", line=line[0], where=where) if line else where


def _evaluate(fam: Family, where: str, source: str, scope: dict, *, rejects: bool = True) -> object:
    """Evaluate one expression of ``family.toml`` in ``scope`` (the sandbox's globals and the values).

    With ``rejects`` (lets and checks), a value the algebra refuses rejects the draw; otherwise
    (answers, mistakes, identity) it is the family's error, reported as such.
    """
    try:
        value = _compiled(fam.path, source)(scope)
    except SymshardError as err:
        if isinstance(err, TemplateError):
            raise
        if rejects:
            raise _DrawRejectedError(where, _one_line(err)) from None
        raise TemplateError(
            _in_spec(fam, where, say("the algebra refuses it: {why}", why=_one_line(err))),
            text=source,
            hint=say(
                "an answer must be computable in every draw that passes the checks: fix the expression, "
                "or add a check that rejects such draws"
            ),
        ) from None
    except jinja2.exceptions.SecurityError as err:
        raise TemplateError(
            _in_spec(fam, where, say("refused by the sandbox: {why}", why=_reason(err))),
            text=source,
            hint=say("family expressions may use their values and the algebra, never Python, files or unbounded work"),
        ) from None
    except jinja2.TemplateSyntaxError as err:
        raise TemplateError(
            _in_spec(fam, where, err.message or str(err)),
            text=source,
            hint=say("the value must be one Jinja expression"),
        ) from None
    except jinja2.UndefinedError as err:
        raise TemplateError(_in_spec(fam, where, _reason(err)), text=source,
                            hint=say("only parameters, earlier lets and the algebra are in scope")) from None  # fmt: skip
    except (MemoryError, RecursionError):
        raise  # the budget reports these (symshard.problems.budget)
    except Exception as err:
        raise TemplateError(
            _in_spec(fam, where, f"{type(err).__name__}: {err}"),  # Python's own words
            text=source,
            hint=say("check the expression"),
        ) from None
    if isinstance(value, jinja2.Undefined):
        try:
            str(value)
        except (jinja2.UndefinedError, jinja2.exceptions.SecurityError) as err:
            raise TemplateError(_in_spec(fam, where, _reason(err)), text=source,
                                hint=say("only parameters, earlier lets and the algebra are in scope")) from None  # fmt: skip
    return value


@lru_cache(maxsize=4096)
def _names(folder: Path, source: str) -> frozenset[str]:
    env = environment(folder)
    try:
        return frozenset(jinja2.meta.find_undeclared_variables(env.parse("{{ " + source + " }}")))
    except jinja2.TemplateSyntaxError:
        return frozenset()  # reported with its position when the expression is evaluated


def _attempt(fam: Family, seed: int, attempt: int, language: str) -> Problem:
    ctx: dict[str, object] = {p.name: p.draw(_stream(fam.name, seed, p.name, attempt)) for p in fam.params}
    params = tuple((p.name, ctx[p.name]) for p in fam.params)
    globals_ = environment(fam.path).globals
    scope: dict[str, object] = {**globals_, **ctx}
    pending = list(fam.checks)

    def run_checks() -> None:
        for name, source in list(pending):
            if _names(fam.path, source) <= scope.keys():
                pending.remove((name, source))
                if not _evaluate(fam, f"checks.{name}", source, scope):
                    raise _DrawRejectedError(name, None)

    run_checks()
    for name, source in fam.lets:
        ctx[name] = scope[name] = _evaluate(fam, f"let.{name}", source, scope)
        run_checks()
    run_checks()
    answers = tuple(_answer(fam, spec, ctx, scope, language) for spec in fam.answers)
    path = tuple((k, str(_evaluate(fam, f"identity.{k}", s, scope, rejects=False))) for k, s in fam.identity)
    ctx["answers"] = {a.name: a for a in answers}
    ctx["family"] = FamilyInfo.of(fam)
    ctx["seed"] = seed
    book = FigureBook(f"{fam.name}-{seed}", language)
    statement, hints, solution = _render(fam, ctx, language, book)
    return Problem(fam, seed, params, statement, hints, solution, answers, path, language, attempt, book.items)


def _answer(fam: Family, spec: AnswerSpec, ctx: Mapping[str, object], scope: dict, language: str = "en") -> Answer:
    where = f"answers.{spec.name}"
    value = _evaluate(fam, where, spec.value, scope, rejects=False)
    if spec.unit != "text" and _as_float(value) is None:
        raise TemplateError(
            say("family '{family}', family.toml {where}: the value {value} is not a number",
                family=fam.name, where=_spec_place(fam, where), value=str(value)),
            hint=say("numeric answers need every size and constant known (give the chip and the shapes)"),
        )  # fmt: skip
    mistakes: dict[object, Mistake] = {}
    right = _key(value)
    for i, m in enumerate(spec.mistakes):
        wrong = _evaluate(fam, f"{where}.mistakes[{i}]", m.value, scope, rejects=False)
        k = _key(wrong)
        if k == right or _within(wrong, value, spec.rel_tol):
            continue  # here the mistake lands within the answer's tolerance: a grader could not tell
        source = fam.feedback_in(spec, i, language)
        feedback = _render_string(fam, f"{where}.mistakes[{i}].feedback", source, {**ctx, "wrong": wrong})
        if k in mistakes:  # two mistakes, one wrong value: say both
            feedback = mistakes[k].feedback + (" 或者：" if language == "zh" else " Or: ") + feedback
        mistakes[k] = Mistake(mistakes[k].value if k in mistakes else wrong, feedback.strip())
    label = fam.label_in(spec, language)
    label = _render_string(fam, f"{where}.label", label, ctx) if "{" in label else label
    _check_text(fam, f"family.toml {where}.label", label)
    for known in mistakes.values():
        _check_text(fam, f"family.toml {where}.mistakes", known.feedback)
    if spec.unit == "text":
        _check_text(fam, f"family.toml {where}.value", str(value))
    return Answer(spec.name, label, value, spec.unit, spec.rel_tol, tuple(mistakes.values()))


def _within(wrong: object, right: object, rel_tol: float) -> bool:
    a, b = _as_float(wrong), _as_float(right)
    if a is None or b is None:
        return False
    return abs(a - b) <= rel_tol * abs(b)


def _template_line(err: BaseException, filename: str, tmpl: jinja2.Template | None = None) -> int | None:
    """The template line an error comes from (Jinja compiles templates to Python; map back)."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if frame.filename and frame.filename.endswith(filename) and frame.lineno is not None:
            return tmpl.get_corresponding_lineno(frame.lineno) if tmpl is not None else frame.lineno
    return getattr(err, "lineno", None)


def _render(
    fam: Family, ctx: Mapping[str, object], language: str, book: FigureBook
) -> tuple[str, tuple[str, ...], str]:
    env = environment(fam.path)
    name = fam.template_for(language)
    tmpl = None
    ctx = {"figure": book.drawer(), **ctx}  # a parameter or let called figure wins, as a name in a template does
    try:
        tmpl = env.get_template(name)
        context = tmpl.new_context(dict(ctx))
        if _has_top_level_code(tmpl):
            # run the body once so that macros and sets written outside the blocks exist inside them
            for _ in tmpl.root_render_func(context):
                pass
            book.clear()  # that pass drew the blocks' figures too; the real pass below draws them again
            context = tmpl.new_context({**ctx, **context.vars})
        blocks = {}
        for block in ("statement", "hint1", "hint2", "hint3", "solution"):
            if block in tmpl.blocks:
                blocks[block] = "".join(tmpl.blocks[block](context)).strip() + "\n"
    except SymshardError as err:
        if isinstance(err, TemplateError):
            raise
        line = _template_line(err, name, tmpl)
        raise TemplateError(_at_line(fam, name, line, _one_line(err)),
                            hint=say("the template called the algebra with values it refuses")) from None  # fmt: skip
    except jinja2.TemplateSyntaxError as err:
        raise TemplateError(_at_line(fam, name, err.lineno, err.message or str(err)),
                            hint=say("check the Jinja syntax")) from None  # fmt: skip
    except jinja2.TemplateNotFound as err:
        raise TemplateError(say("family '{family}', {file}: template '{name}' not found",
                                family=fam.name, file=name, name=err.name),
                            hint=say("templates may only include files of their own family folder")) from None  # fmt: skip
    except jinja2.exceptions.SecurityError as err:
        line = _template_line(err, name, tmpl)
        raise TemplateError(_at_line(fam, name, line, say("refused by the sandbox: {why}", why=_reason(err))),
                            hint=say("templates may use their values and the algebra, never Python, files outside "
                                     "their folder or unbounded work")) from None  # fmt: skip
    except (MemoryError, RecursionError):
        raise  # the budget reports these (symshard.problems.budget)
    except Exception as err:
        line = _template_line(err, name, tmpl)
        raise TemplateError(_at_line(fam, name, line, f"{type(err).__name__}: {err}"),  # Python's own words
                            hint=say("only parameters, lets, answers and the algebra are in scope")) from None  # fmt: skip
    for block in ("statement", "solution"):
        if block not in blocks or not blocks[block].strip():
            raise TemplateError(say("family '{family}', {file}: the {block} block is missing or empty",
                                    family=fam.name, file=name, block=block),
                                hint=say("write {{% block {block} %}}...{{% endblock %}}", block=block))  # fmt: skip
    for block, text in blocks.items():
        _check_text(fam, f"{name}, the {block} block", text)
    hints = tuple(blocks[h] for h in ("hint1", "hint2", "hint3") if h in blocks and blocks[h].strip())
    return blocks["statement"], hints, blocks["solution"]


_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters no export can carry: control characters (but tab and line ends), lone surrogates, U+FFFE, U+FFFF."""


def _check_text(fam: Family, where: str, text: str) -> None:
    """Refuse text that holds a character no export can carry (XML, UTF-8 and Typst all refuse some).

    Raises:
        TemplateError: names the family, the place and the character.
    """
    bad = _NOT_TEXT.search(text)
    if bad is not None:
        raise TemplateError(
            say("family '{family}', {where}: the text holds the character {char}, which no export can carry",
                family=fam.name, where=where, char=f"U+{ord(bad.group(0)):04X}"),
            hint=say("remove it from the template, or from the value that prints it"),
        )  # fmt: skip


@lru_cache(maxsize=1024)
def _top_level(folder: Path, name: str, source: str) -> bool:
    outside = re.sub(r"\{%-?\s*block\b.*?\{%-?\s*endblock\b[^%]*%\}", "", source, flags=re.S)
    return bool(re.search(r"\{%-?\s*(macro|set|import|from)\b", outside))


def _has_top_level_code(tmpl: jinja2.Template) -> bool:
    """Whether the template defines macros or variables outside its blocks."""
    env = tmpl.environment
    if env.loader is None or tmpl.name is None:
        return False
    source = env.loader.get_source(env, tmpl.name)[0]
    return _top_level(Path(tmpl.filename or ""), tmpl.name, source)


def _render_string(fam: Family, where: str, source: str, ctx: Mapping[str, object]) -> str:
    try:
        return _compiled_template(fam.path, source).render(**ctx)
    except (MemoryError, RecursionError):
        raise  # the budget reports these (symshard.problems.budget)
    except Exception as err:
        detail = say("refused by the sandbox: {why}", why=_reason(err)) if isinstance(
            err, jinja2.exceptions.SecurityError) else f"{type(err).__name__}: {err}"  # fmt: skip
        raise TemplateError(_in_spec(fam, where, detail),
                            hint=say("feedback is a Jinja template over the same values")) from None  # fmt: skip


def variant(fam: Family, seed: int, language: str = "en", *, budget: Budget | None = None) -> Problem:
    """The problem of family ``fam`` for ``seed`` (the first draw that passes every check).

    The drawing and rendering run in a worker process within ``budget`` (default:
    :meth:`Budget.from_environment <symshard.problems.budget.Budget.from_environment>`),
    whatever the family's templates and expressions ask for.

    Raises:
        TemplateError: a broken family, no text in ``language``, no valid draw in
            ``MAX_ATTEMPTS`` tries, or work past the budget
            (:class:`~symshard.problems.budget.BudgetExceeded`).
    """
    fam.template_for(language)  # an unknown language fails before any drawing
    chosen = budget if budget is not None else Budget.from_environment()
    return run(_variant, (fam, seed, language), chosen, what=say("family '{family}' (seed {seed})", family=fam.name,
                                                                  seed=seed))  # fmt: skip


MAX_HARDWARE_FILE_BYTES = 100_000
"""The largest hardware file a family may name (``hardware("my-chip.toml")``)."""


def _hardware_reader(fam: Family) -> Callable[[str], str]:
    """How a family's hardware files are read: files of its own folder only, under the template loader's
    rules (no absolute path, no ``..``, no link, a regular file of at most :data:`MAX_HARDWARE_FILE_BYTES`)."""

    def read(name: str) -> str:
        try:
            data = family_file(fam.path, name, MAX_HARDWARE_FILE_BYTES)
        except jinja2.TemplateNotFound:
            raise UnknownHardwareError(
                say("hardware file '{path}' does not exist in the folder of family '{family}'",
                    path=name, family=fam.name),
                hint=say("a family names a preset (tpu-v5e, h100, ...) or a hardware file of its own folder"),
            ) from None  # fmt: skip
        except (jinja2.exceptions.SecurityError, OSError) as err:
            why = _reason(err) if isinstance(err, jinja2.exceptions.SecurityError) else (err.strerror or str(err))
            raise HardwareError(
                say("family '{family}' may not read the hardware file '{path}': {why}",
                    family=fam.name, path=name, why=why),
                hint=say("a family names a preset, or a hardware file of its own folder (no absolute path, "
                         "no '..', no link)"),
            ) from None  # fmt: skip
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise HardwareError(
                say("hardware file '{path}' is not UTF-8 text ({why} at byte {offset})",
                    path=name, why=err.reason, offset=err.start),
                hint=say("save it as UTF-8"),
            ) from None  # fmt: skip

    return read


def _variant(fam: Family, seed: int, language: str) -> Problem:
    """:func:`variant`'s work, in the worker."""
    with hardware_files(_hardware_reader(fam)):
        return _draw(fam, seed, language)


def _draw(fam: Family, seed: int, language: str) -> Problem:
    reasons: Counter[tuple[str, str | None]] = Counter()
    for attempt in range(MAX_ATTEMPTS):
        try:
            return _attempt(fam, seed, attempt, language)
        except _DrawRejectedError as why:
            reasons[why.args] += 1
    ((where, top), count), *others = reasons.most_common()
    if top is None:
        hint = say("check {name} failed in {times} of {count} {count:draw|draws}: widen its parameters or loosen that check",
                   name=where, times=count, count=MAX_ATTEMPTS)  # fmt: skip
    else:
        hint = say("the algebra refused {where} in {times} of {count} {count:draw|draws}: fix that expression, "
                   "or add a check on the parameters that rejects such draws first",
                   where=where, times=count, count=MAX_ATTEMPTS)  # fmt: skip
    shown = Clauses(
        say("check {name} failed ({times}×)", name=name, times=n)
        if why is None
        else say("{where}: {why} ({times}×)", where=name, why=why, times=n)
        for (name, why), n in [((where, top), count), *others[:2]]
    )
    raise TemplateError(
        say("family '{family}' found no valid variant for seed {seed} in {count} {count:draw|draws}: {reasons}",
            family=fam.name, seed=seed, count=MAX_ATTEMPTS, reasons=shown),
        hint=hint,
    )  # fmt: skip


# -- problem sets --------------------------------------------------------------------------------


def _variant_seed(set_seed: int, name: str, index: int, retry: int) -> int:
    digest = hashlib.sha256(f"{set_seed}\0{name}\0{index}\0{retry}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def select(
    folders: Mapping[str, Path],
    names: Sequence[str] | None = None,
    difficulty: Sequence[str] | None = None,
) -> list[Family]:
    """The families to draw from, by name and difficulty.

    Raises:
        TemplateError: an unknown family name, or nothing selected.
    """
    if names:
        for n in names:
            if n not in folders:
                raise TemplateError(say("unknown problem family '{name}'", name=n), hint=did_you_mean(n, list(folders)))
        chosen = [_load(folders[n]) for n in names]
    else:
        chosen = [_load(path) for path in folders.values()]
    if difficulty:
        chosen = [f for f in chosen if f.difficulty in difficulty]
    if not chosen:
        raise TemplateError(
            say("no family matches the selection"), hint=say("see '{command}'", command="symshard problems list")
        )
    return sorted(chosen, key=lambda f: DIFFICULTIES.index(f.difficulty))  # stable: names keep their order


def generate(
    seed: int,
    count: int | None = None,
    *,
    names: Sequence[str] | None = None,
    difficulty: Sequence[str] | None = None,
    per_family: int | None = None,
    language: str = "en",
    extra: Iterable[Path | str] = (),
    progress: Callable[[int, int], None] | None = None,
    budget: Budget | None = None,
) -> list[Problem]:
    """A problem set: ``per_family`` variants of each chosen family, or ``count`` problems
    taken round-robin over them (alternating difficulties); reproducible from ``seed``, without
    duplicates, and ordered from easy to hard.

    Raises:
        TemplateError: a broken family, or one that cannot produce enough distinct variants.
        TooLargeError: more than :data:`MAX_PROBLEMS` problems.
    """
    chosen = select(family_folders(extra), names, difficulty)
    asked = per_family * len(chosen) if per_family is not None else count if count is not None else len(chosen)
    if asked > MAX_PROBLEMS:
        raise TooLargeError(
            say("a set of {count} {count:problem|problems} is more than generate takes ({limit})", count=f"{asked:,}",
                limit=f"{MAX_PROBLEMS:,}"),
            hint=say("ask for fewer, or make several sets with different seeds"),
        )  # fmt: skip
    if per_family is not None:
        plan_ = [(f, k) for f in chosen for k in range(per_family)]
    else:
        total = count if count is not None else len(chosen)
        # one round alternates easy, medium and hard, each level started at a seed-chosen family: a set
        # shorter than a round mixes levels and leaves out different families for different seeds
        queues = []
        for level in DIFFICULTIES:
            fams = [f for f in chosen if f.difficulty == level]
            if fams:
                start = _variant_seed(seed, level, 0, 0) % len(fams)
                queues.append(fams[start:] + fams[:start])
        order = [q[i] for i in range(max(map(len, queues))) for q in queues if i < len(q)]
        taken = [(order[i % len(order)], i // len(order)) for i in range(total)]
        plan_ = sorted(taken, key=lambda fk: (DIFFICULTIES.index(fk[0].difficulty), fk[1], fk[0].name))
    seen: set[tuple] = set()
    out: list[Problem] = []
    for n, (fam, index) in enumerate(plan_):
        for retry in range(50):
            problem = variant(fam, _variant_seed(seed, fam.name, index, retry), language, budget=budget)
            key = problem.key()
            if key not in seen:
                seen.add(key)
                out.append(problem)
                break
        else:
            raise TemplateError(
                say("family '{family}' keeps repeating itself: no new variant in 50 draws", family=fam.name),
                hint=say("widen its parameters, or ask for fewer problems of it"),
            )
        if progress is not None:
            progress(n + 1, len(plan_))
    return out


def variants_of(
    problems: Sequence[Problem],
    seed: int,
    count: int,
    *,
    budget: Budget | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[Problem, ...]]:
    """For each problem of a set, ``count`` variants of its family, the problem itself first: what a course
    platform draws from so that each student gets their own numbers. The other variants' seeds are drawn from
    the set's ``seed`` (and the problem's place in the set), so the same set and count give the same variants;
    no two variants in the whole answer are the same (see :meth:`Problem.key`).

    Raises:
        TemplateError: a family that cannot produce that many distinct variants.

    Examples:
        >>> week = generate(2026, 2, difficulty=["easy"])
        >>> groups = variants_of(week, 2026, 3)
        >>> [len(g) for g in groups], groups[0][0] is week[0], len({p.id for g in groups for p in g})
        ([3, 3], True, 6)
    """
    seen = {p.key() for p in problems}
    out: list[tuple[Problem, ...]] = []
    total = len(problems) * max(count - 1, 0)
    done = 0
    for index, first in enumerate(problems):
        group = [first]
        for k in range(1, count):
            for retry in range(50):
                drawn = _variant_seed(seed, f"{first.family.name}\0variant\0{k}", index, retry)
                problem = variant(first.family, drawn, first.language, budget=budget)
                if problem.key() not in seen:
                    seen.add(problem.key())
                    group.append(problem)
                    break
            else:
                raise TemplateError(
                    say(
                        "family '{family}' keeps repeating itself: no new variant in 50 draws", family=first.family.name
                    ),
                    hint=say("ask for fewer variants (--variants), or widen the family's parameters"),
                )
            done += 1
            if progress is not None:
                progress(done, total)
        out.append(tuple(group))
    return out

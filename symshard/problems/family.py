"""Problem families as data: reading and checking ``family.toml``.

A family is a folder with two files. ``family.toml`` says what the problem is
about and how to make variants of it::

    [family]
    title = "AllGather time on a TPU slice"
    difficulty = "medium"            # easy, medium or hard
    tags = ["collectives", "allgather"]
    objective = "Compute an AllGather's time from the array, the axis and the chip."

    [params.E]                       # one table per parameter
    choices = [1024, 2048, 4096]     # or: range = [1, 64] (with step = ..., or powers_of_two = true)

    [let]                            # values the algebra computes, in order (Jinja expressions)
    cost = "parse('AllGather_Y([E_Y, F])').cost(mesh, {'E': E, 'F': F}, hardware=chip)"

    [checks]                         # every one must hold, or the variant is drawn again
    bandwidth_bound = "cost.regime == 'bandwidth'"

    [[answers]]
    name = "time"
    label = "the AllGather's time"
    value = "cost.time"
    unit = "s"                       # s, B, FLOP, count, ratio or text
    rel_tol = 0.02
    [[answers.mistakes]]
    value = "2 * cost.time"
    feedback = "That is an AllReduce's time: an AllGather moves the array once."

Every text field may have a sibling in another language, ``title_zh``,
``objective_zh``, ``label_zh``, ``feedback_zh``, used with ``problem.zh.md.j2``.

``problem.md.j2`` holds the wording, in Jinja blocks ``statement``,
``hint1``..``hint3`` and ``solution``; every number in it comes from the values
above. No Python is needed to add a family.
"""

from __future__ import annotations

import math
import random
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import TemplateError

__all__ = ["AnswerSpec", "Family", "MistakeSpec", "ParamSpec", "load_family"]

DIFFICULTIES = ("easy", "medium", "hard")
UNITS = ("s", "B", "FLOP", "FLOP/s", "B/s", "count", "ratio", "text")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _fail(family: str, message: str, hint: str, file: str = "family.toml") -> TemplateError:
    return TemplateError(f"family '{family}', {file}: {message}", hint=hint)


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """How to draw one parameter: from a list of choices or an integer range."""

    name: str
    choices: tuple[object, ...] = ()
    low: int | None = None
    high: int | None = None
    step: int = 1
    powers_of_two: bool = False

    def values(self) -> tuple[object, ...]:
        """Every value the parameter can take."""
        if self.choices:
            return self.choices
        assert self.low is not None and self.high is not None  # checked when loaded
        if self.powers_of_two:
            lo = max(0, math.ceil(math.log2(self.low)))
            hi = math.floor(math.log2(self.high))
            return tuple(2**k for k in range(lo, hi + 1))
        return tuple(range(self.low, self.high + 1, self.step))

    def draw(self, rng: random.Random) -> object:
        """One value, drawn from ``rng`` (the parameter's own stream)."""
        values = self.values()
        return values[rng.randrange(len(values))]


def _localized(family: str, where: str, english: str, translations: tuple[tuple[str, str], ...], language: str) -> str:
    """The text in ``language``: the English field, or its ``_LANG`` sibling from family.toml."""
    if language == "en":
        return english
    for lang, text in translations:
        if lang == language:
            return text
    raise TemplateError(
        f"family '{family}', family.toml: {where} has no text in '{language}'",
        hint=f'add {where.rsplit(".", 1)[-1]}_{language} = "..." next to it',
    )


def _translations(table: dict, key: str) -> tuple[tuple[str, str], ...]:
    """The ``key_LANG`` siblings of ``key`` in a TOML table, sorted by language."""
    found = []
    for k, v in table.items():
        m = re.fullmatch(re.escape(key) + r"_([a-z]{2,3})", k)
        if m:
            found.append((m.group(1), str(v)))
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class MistakeSpec:
    """A value a common mistake produces, and what to tell the student who gave it."""

    value: str
    feedback: str
    feedback_i18n: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerSpec:
    """One answer: an expression the algebra evaluates, its unit and tolerance."""

    name: str
    label: str
    value: str
    unit: str
    rel_tol: float
    mistakes: tuple[MistakeSpec, ...] = ()
    label_i18n: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Family:
    """A problem family loaded from its folder."""

    name: str
    path: Path
    title: str
    difficulty: str
    tags: tuple[str, ...]
    objective: str
    params: tuple[ParamSpec, ...]
    lets: tuple[tuple[str, str], ...]
    checks: tuple[tuple[str, str], ...]
    answers: tuple[AnswerSpec, ...]
    identity: tuple[tuple[str, str], ...] = ()
    template: str = "problem.md.j2"
    title_i18n: tuple[tuple[str, str], ...] = ()
    objective_i18n: tuple[tuple[str, str], ...] = ()

    def title_in(self, language: str) -> str:
        """The title in ``language`` (``title_zh`` in family.toml for Chinese).

        Raises:
            TemplateError: the family has no title in that language.
        """
        return _localized(self.name, "family.title", self.title, self.title_i18n, language)

    def objective_in(self, language: str) -> str:
        """The objective in ``language``.

        Raises:
            TemplateError: the family has no objective in that language.
        """
        return _localized(self.name, "family.objective", self.objective, self.objective_i18n, language)

    def label_in(self, answer: AnswerSpec, language: str) -> str:
        """An answer's label in ``language``."""
        return _localized(self.name, f"answers.{answer.name}.label", answer.label, answer.label_i18n, language)

    def feedback_in(self, answer: AnswerSpec, index: int, language: str) -> str:
        """A mistake's feedback in ``language``."""
        m = answer.mistakes[index]
        where = f"answers.{answer.name}.mistakes[{index}].feedback"
        return _localized(self.name, where, m.feedback, m.feedback_i18n, language)

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages this family has text in: ``en`` and every ``problem.LANG.md.j2`` beside it."""
        found = {p.name.split(".")[1] for p in self.path.glob("problem.*.md.j2")}
        return ("en", *sorted(found - {"en"}))

    def template_for(self, language: str) -> str:
        """The template file for a language: ``problem.md.j2`` for English, ``problem.zh.md.j2`` for Chinese.

        Raises:
            TemplateError: the family has no text in ``language`` (a silent English fallback
                would label English text as another language).
        """
        if language == "en":
            return self.template
        localized = f"problem.{language}.md.j2"
        if re.fullmatch(r"[a-z]{2,3}(-[A-Za-z]{2,4})?", language) and (self.path / localized).is_file():
            return localized
        raise TemplateError(
            f"problem family '{self.name}' has no text in language '{language}' (no {localized})",
            hint=f"its languages: {', '.join(self.languages)}; pass --lang en, or add {localized} to {self.path}",
        )


def load_family(path: Path) -> Family:
    """Read and check the family in folder ``path``.

    Raises:
        TemplateError: a missing file, bad TOML, or a spec that breaks the format above;
            the message names the family and file.
    """
    name = path.name
    spec_file = path / "family.toml"
    if not spec_file.is_file():
        raise _fail(name, "is missing", "a family folder needs family.toml and problem.md.j2")
    if not (path / "problem.md.j2").is_file():
        raise _fail(name, "is missing", "write the wording in problem.md.j2", file="problem.md.j2")
    try:
        data = tomllib.loads(spec_file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise _fail(name, f"is not valid TOML ({err})", "check the quoting and brackets") from None
    meta = data.get("family")
    if not isinstance(meta, dict):
        raise _fail(name, "has no [family] table", "give title, difficulty, tags and objective")
    for key in ("title", "difficulty", "tags", "objective"):
        if key not in meta:
            raise _fail(name, f"[family] has no {key}", "give title, difficulty, tags and objective")
    if meta["difficulty"] not in DIFFICULTIES:
        raise _fail(name, f"difficulty '{meta['difficulty']}' is not one of {', '.join(DIFFICULTIES)}", "pick one")
    params = []
    for pname, p in (data.get("params") or {}).items():
        if not _NAME.match(pname):
            raise _fail(name, f"parameter name '{pname}' is not an identifier", "use letters, digits and _")
        if not isinstance(p, dict):
            raise _fail(name, f"[params.{pname}] must be a table", "give choices = [...] or range = [lo, hi]")
        if "choices" in p:
            choices = tuple(p["choices"])
            if not choices:
                raise _fail(name, f"[params.{pname}] has no choices", "list at least one value")
            params.append(ParamSpec(pname, choices=choices))
        elif "range" in p:
            lo, hi = p["range"]
            if not (isinstance(lo, int) and isinstance(hi, int) and 0 < lo <= hi):
                raise _fail(
                    name, f"[params.{pname}] range {p['range']} is not [lo, hi] with 0 < lo <= hi", "e.g. [1, 64]"
                )
            params.append(ParamSpec(pname, low=lo, high=hi, step=int(p.get("step", 1)),
                                    powers_of_two=bool(p.get("powers_of_two", False))))  # fmt: skip
        else:
            raise _fail(name, f"[params.{pname}] gives neither choices nor range", "e.g. choices = [2, 4, 8]")
    lets = tuple((k, _expr(name, f"let.{k}", v)) for k, v in (data.get("let") or {}).items())
    checks = tuple((k, _expr(name, f"checks.{k}", v)) for k, v in (data.get("checks") or {}).items())
    identity = tuple((k, _expr(name, f"identity.{k}", v)) for k, v in (data.get("identity") or {}).items())
    answers = []
    for i, a in enumerate(data.get("answers") or []):
        where = f"answers[{i}]"
        for key in ("name", "label", "value", "unit"):
            if key not in a:
                raise _fail(name, f"{where} has no {key}", "give name, label, value, unit (and rel_tol)")
        if a["unit"] not in UNITS:
            raise _fail(name, f"{where} unit '{a['unit']}' is not one of {', '.join(UNITS)}", "pick one")
        mistakes = tuple(
            MistakeSpec(
                _expr(name, f"{where}.mistakes", m.get("value", "")),
                str(m.get("feedback", "")),
                _translations(m, "feedback"),
            )
            for m in a.get("mistakes", [])
        )
        for m in mistakes:
            if not m.feedback:
                raise _fail(name, f"{where} has a mistake without feedback", "say what the mistake was")
        answers.append(
            AnswerSpec(
                name=str(a["name"]),
                label=str(a["label"]),
                value=_expr(name, f"{where}.value", a["value"]),
                unit=str(a["unit"]),
                rel_tol=float(a.get("rel_tol", 0.01 if a["unit"] != "text" else 0.0)),
                mistakes=mistakes,
                label_i18n=_translations(a, "label"),
            )
        )
    if not answers:
        raise _fail(name, "declares no [[answers]]", "every problem needs at least one answer")
    names = [p.name for p in params] + [k for k, _ in lets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise _fail(name, f"defines {', '.join(dupes)} twice", "give every parameter and let its own name")
    return Family(
        name=name,
        path=path,
        title=str(meta["title"]),
        difficulty=str(meta["difficulty"]),
        tags=tuple(str(t) for t in meta["tags"]),
        objective=str(meta["objective"]),
        params=tuple(params),
        lets=lets,
        checks=checks,
        answers=tuple(answers),
        identity=identity,
        title_i18n=_translations(meta, "title"),
        objective_i18n=_translations(meta, "objective"),
    )


def _expr(family: str, where: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(family, f"{where} must be a Jinja expression in a string", 'e.g. "cost.time"')
    return value

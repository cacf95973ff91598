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
import os
import random
import re
import stat
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import TemplateError, did_you_mean

__all__ = ["AnswerSpec", "Family", "MistakeSpec", "ParamSpec", "key_positions", "load_family", "read_spec"]

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

    def values(self) -> Sequence[object]:
        """Every value the parameter can take (a range stays a lazy ``range``)."""
        if self.choices:
            return self.choices
        if self.low is None or self.high is None:
            raise TemplateError(f"parameter {self.name} has neither choices nor a range", hint="give one")
        if self.powers_of_two:
            lo = max(0, math.ceil(math.log2(self.low)))
            hi = math.floor(math.log2(self.high))
            return tuple(2**k for k in range(lo, hi + 1))
        return range(self.low, self.high + 1, self.step)

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


MAX_SPEC_BYTES = 1_000_000
"""The largest ``family.toml`` read."""

_EXPR_CHARS = 4000
"""The longest expression a ``family.toml`` value may hold."""

_MAX_CHOICES = 10_000
"""The most choices one parameter may list."""

_TABLES = ("family", "params", "let", "checks", "identity", "answers")
_FAMILY_KEYS = ("title", "difficulty", "tags", "objective")
_PARAM_KEYS = ("choices", "range", "step", "powers_of_two")
_ANSWER_KEYS = ("name", "label", "value", "unit", "rel_tol", "mistakes")
_MISTAKE_KEYS = ("value", "feedback")
_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_KEY_LINE = re.compile(rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*=")
_HEADER = re.compile(rf"(\[\[?)\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*\]\]?")
_TRIPLE_QUOTES = ('"' * 3, "'" * 3)


def _key_parts(text: str) -> tuple[str, ...]:
    parts = re.findall(_KEY, text)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def key_positions(source: str) -> dict[tuple[object, ...], tuple[int, int]]:
    """Where each table and key of a TOML text starts: ``('params', 'E', 'range') -> (line, column)``.

    Array tables count from 0 (``('answers', 1, 'unit')``). Used to point errors at the spot;
    the TOML itself is read by ``tomllib``.

    Examples:
        >>> key_positions('[family]\\ntitle = "t"\\n[[answers]]\\n  name = "x"\\n')[("answers", 0, "name")]
        (4, 3)
    """
    found: dict[tuple[object, ...], tuple[int, int]] = {}
    counts: dict[tuple[object, ...], int] = {}
    table: tuple[object, ...] = ()
    closing: str | None = None  # the delimiter of a multi-line string we are inside
    depth = 0  # brackets of a value continued on the next lines
    for number, line in enumerate(source.splitlines(), 1):
        at = 0
        if closing is not None:
            end = line.find(closing)
            if end < 0:
                continue
            closing, at = None, end + 3
        elif depth == 0:
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            header = _HEADER.match(stripped)
            if header:
                parts = _key_parts(header.group(2))
                if header.group(1) == "[[":
                    parent: tuple[object, ...] = ()
                    for p in parts[:-1]:  # [[answers.mistakes]] nests in the latest [[answers]]
                        parent = (*parent, p)
                        if parent in counts:
                            parent = (*parent, counts[parent] - 1)
                    base = (*parent, parts[-1])
                    counts[base] = counts.get(base, 0) + 1
                    table = (*base, counts[base] - 1)
                else:
                    table = parts
                found.setdefault(table, (number, indent + 1))
                continue
            key = _KEY_LINE.match(line)
            if key:
                found.setdefault((*table, *_key_parts(key.group(1))), (number, key.start(1) + 1))
                at = key.end()
        closing, depth = _rest_of_line(line, at, depth)
    return found


def _rest_of_line(line: str, i: int, depth: int) -> tuple[str | None, int]:
    """Skip strings and comments from ``i``; return an unclosed multi-line string's delimiter and the bracket depth."""
    while i < len(line):
        ch = line[i]
        if ch == "#":
            break
        if line.startswith(_TRIPLE_QUOTES, i):
            end = line.find(line[i : i + 3], i + 3)
            if end < 0:
                return line[i : i + 3], depth
            i = end + 3
            continue
        if ch in "\"'":
            i += 1
            while i < len(line) and line[i] != ch:
                i += 2 if ch == '"' and line[i] == "\\" else 1
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None, depth


def _kind(value: object) -> str:
    kinds = {str: "text", bool: "true/false", int: "a whole number", float: "a number", list: "a list", dict: "a table"}
    return kinds.get(type(value), type(value).__name__)


class _Spec:
    """Reads one parsed ``family.toml``, checking every table, key and type, with positions for errors."""

    def __init__(self, family: str, source: str) -> None:
        self.family = family
        self.positions = key_positions(source)

    def fail(self, where: tuple[object, ...], message: str, hint: str) -> TemplateError:
        at = where
        while at and at not in self.positions:
            at = at[:-1]
        line, column = self.positions.get(at, (1, 1))
        return TemplateError(f"family '{self.family}', family.toml line {line}, column {column}: {message}", hint=hint)

    def table(self, value: object, where: tuple[object, ...], name: str, hint: str) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"{name} must be a table, not {_kind(value)}", hint)
        return value

    def keys(
        self,
        table: dict,
        where: tuple[object, ...],
        name: str,
        allowed: tuple[str, ...],
        localized: tuple[str, ...] = (),
    ) -> None:
        for key in table:
            base, _, lang = key.rpartition("_")
            if key in allowed or (base in localized and re.fullmatch(r"[a-z]{2,3}", lang)):
                continue
            hint: str = did_you_mean(key, [*allowed, *(f"{k}_zh" for k in localized)])
            if not hint.startswith("did"):
                hint = f"the keys of {name} are {', '.join(allowed)}"
            raise self.fail((*where, key), f"{name} has no key '{key}'", hint)

    def text(self, table: dict, key: str, where: tuple[object, ...], name: str, *, required: bool = True) -> str:
        if key not in table:
            if required:
                raise self.fail(where, f"{name} has no {key}", f'give {key} = "..."')
            return ""
        value = table[key]
        if not isinstance(value, str):
            raise self.fail((*where, key), f"{name}.{key} must be text, not {_kind(value)}", f'write {key} = "..."')
        return value

    def expression(self, value: object, where: tuple[object, ...], name: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"{name} must be an expression in a string, not {_kind(value)}", 'e.g. "cost.time"')
        if len(value) > _EXPR_CHARS:
            raise self.fail(where, f"{name} is {len(value):,} characters long", f"keep it under {_EXPR_CHARS:,}")
        return value

    def translations(self, table: dict, key: str, where: tuple[object, ...], name: str) -> tuple[tuple[str, str], ...]:
        for k in table:
            if re.fullmatch(re.escape(key) + r"_[a-z]{2,3}", k):
                self.text(table, k, where, name)
        return _translations(table, key)


def read_spec(path: Path) -> str:
    """The text of ``family.toml`` in folder ``path``, refusing links, devices and huge files.

    Raises:
        TemplateError: the file is missing, a link, not a regular file, too large or not UTF-8.
    """
    name = path.name
    spec_file = path / "family.toml"
    try:
        info = os.lstat(spec_file)
    except OSError:
        raise _fail(name, "is missing", "a family folder needs family.toml and problem.md.j2") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise _fail(name, "is a link or not a regular file", "families may only read their own regular files")
    if info.st_size > MAX_SPEC_BYTES:
        raise _fail(name, f"is {info.st_size:,} bytes", f"a family.toml is at most {MAX_SPEC_BYTES:,} bytes")
    try:
        return spec_file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise _fail(name, f"is not UTF-8 text ({err.reason} at byte {err.start})", "save it as UTF-8") from None
    except OSError as err:
        raise _fail(name, f"cannot be read ({err.strerror})", "check the file's permissions") from None


def load_family(path: Path) -> Family:
    """Read and check the family in folder ``path``.

    Every table, key and type of ``family.toml`` is checked (unknown names are errors with
    a suggestion); errors give the line and column.

    Raises:
        TemplateError: a missing file, bad TOML, or a spec that breaks the format above;
            the message names the family, the file and the spot.
    """
    name = path.name
    source = read_spec(path)
    try:
        info = os.lstat(path / "problem.md.j2")
    except OSError:
        raise _fail(name, "is missing", "write the wording in problem.md.j2", file="problem.md.j2") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise _fail(name, "is a link or not a regular file", "families may only read their own regular files",
                    file="problem.md.j2")  # fmt: skip
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as err:
        raise _fail(name, f"is not valid TOML ({err})", "check the quoting and brackets") from None
    spec = _Spec(name, source)
    for table in data:
        if table not in _TABLES:
            hint = did_you_mean(table, list(_TABLES))
            raise spec.fail((table,), f"has an unknown table [{table}]",
                            hint if hint.startswith("did") else "the tables are " + ", ".join(_TABLES))  # fmt: skip
    if "family" not in data:
        raise spec.fail((), "has no [family] table", "give title, difficulty, tags and objective")
    meta = spec.table(data["family"], ("family",), "[family]", "give title, difficulty, tags and objective")
    spec.keys(meta, ("family",), "[family]", _FAMILY_KEYS, ("title", "objective"))
    title = spec.text(meta, "title", ("family",), "[family]")
    objective = spec.text(meta, "objective", ("family",), "[family]")
    difficulty = spec.text(meta, "difficulty", ("family",), "[family]")
    if difficulty not in DIFFICULTIES:
        raise spec.fail(("family", "difficulty"), f"difficulty '{difficulty}' is not one of {', '.join(DIFFICULTIES)}",
                        "pick one")  # fmt: skip
    if "tags" not in meta:
        raise spec.fail(("family",), "[family] has no tags", 'give tags = ["collectives", ...]')
    tags = meta["tags"]
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) and t.strip() for t in tags):
        raise spec.fail(("family", "tags"), f"tags must be a non-empty list of words, not {_kind(tags)}",
                        'e.g. tags = ["collectives", "allgather"]')  # fmt: skip
    params = []
    param_tables = spec.table(data.get("params", {}), ("params",), "[params]", "one [params.NAME] table per parameter")
    for pname, p in param_tables.items():
        where = ("params", pname)
        if not _NAME.match(pname):
            raise spec.fail(where, f"parameter name '{pname}' is not an identifier", "use letters, digits and _")
        p = spec.table(p, where, f"[params.{pname}]", "give choices = [...] or range = [lo, hi]")
        spec.keys(p, where, f"[params.{pname}]", _PARAM_KEYS)
        params.append(_param(spec, pname, p, where))
    lets = _expressions(spec, data, "let")
    checks = _expressions(spec, data, "checks")
    identity = _expressions(spec, data, "identity")
    answer_tables = data.get("answers", [])
    if not isinstance(answer_tables, list):
        raise spec.fail(("answers",), "answers must be [[answers]] tables", "write each answer under [[answers]]")
    answers = [_answer(spec, i, a) for i, a in enumerate(answer_tables)]
    if not answers:
        raise spec.fail((), "declares no [[answers]]", "every problem needs at least one answer")
    answer_names = [a.name for a in answers]
    twice = sorted({n for n in answer_names if answer_names.count(n) > 1})
    if twice:
        raise spec.fail(("answers",), f"names the answer {', '.join(twice)} twice", "give each answer its own name")
    names = [p.name for p in params] + [k for k, _ in lets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise spec.fail(("let", dupes[0]), f"defines {', '.join(dupes)} twice",
                        "give every parameter and let its own name")  # fmt: skip
    return Family(
        name=name,
        path=path,
        title=title,
        difficulty=difficulty,
        tags=tuple(tags),
        objective=objective,
        params=tuple(params),
        lets=lets,
        checks=checks,
        answers=tuple(answers),
        identity=identity,
        title_i18n=spec.translations(meta, "title", ("family",), "[family]"),
        objective_i18n=spec.translations(meta, "objective", ("family",), "[family]"),
    )


def _param(spec: _Spec, pname: str, p: dict, where: tuple[object, ...]) -> ParamSpec:
    name = f"[params.{pname}]"
    if ("choices" in p) == ("range" in p):
        raise spec.fail(
            where, f"{name} must give either choices or range", "e.g. choices = [2, 4, 8] or range = [1, 64]"
        )
    if "choices" in p:
        choices = p["choices"]
        if not isinstance(choices, list) or not choices:
            raise spec.fail((*where, "choices"), f"{name} choices must be a non-empty list", "e.g. [2, 4, 8]")
        if len(choices) > _MAX_CHOICES:
            raise spec.fail((*where, "choices"), f"{name} has {len(choices):,} choices", f"at most {_MAX_CHOICES:,}")
        for c in choices:
            if not isinstance(c, (str, int, float, bool)):
                raise spec.fail((*where, "choices"), f"{name} choice {c!r} is {_kind(c)}",
                                "choices are numbers, text or true/false")  # fmt: skip
        for key in ("step", "powers_of_two"):
            if key in p:
                raise spec.fail((*where, key), f"{name} {key} goes with range, not choices", f"drop {key}")
        return ParamSpec(pname, choices=tuple(choices))
    rng = p["range"]
    whole = isinstance(rng, list) and len(rng) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in rng)
    if not whole or not 0 < rng[0] <= rng[1]:
        raise spec.fail((*where, "range"), f"{name} range {rng!r} is not [lo, hi] with whole numbers 0 < lo <= hi",
                        "e.g. range = [1, 64]")  # fmt: skip
    step = p.get("step", 1)
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise spec.fail((*where, "step"), f"{name} step {step!r} is not a whole number of at least 1", "e.g. step = 64")
    powers = p.get("powers_of_two", False)
    if not isinstance(powers, bool):
        raise spec.fail((*where, "powers_of_two"), f"{name} powers_of_two must be true or false, not {_kind(powers)}",
                        "write powers_of_two = true")  # fmt: skip
    if powers and "step" in p:
        raise spec.fail((*where, "step"), f"{name} gives both step and powers_of_two", "keep one of them")
    out = ParamSpec(pname, low=rng[0], high=rng[1], step=step, powers_of_two=powers)
    if not out.values():
        raise spec.fail((*where, "range"), f"{name} has no power of two in {rng}", "widen the range")
    return out


def _expressions(spec: _Spec, data: dict, table: str) -> tuple[tuple[str, str], ...]:
    values = spec.table(data.get(table, {}), (table,), f"[{table}]", f'write name = "expression" under [{table}]')
    out = []
    for key, value in values.items():
        if not _NAME.match(key):
            raise spec.fail((table, key), f"[{table}] name '{key}' is not an identifier", "use letters, digits and _")
        out.append((key, spec.expression(value, (table, key), f"{table}.{key}")))
    return tuple(out)


def _answer(spec: _Spec, i: int, given: object) -> AnswerSpec:
    where: tuple[object, ...] = ("answers", i)
    name = f"answers[{i}]"
    a = spec.table(given, where, name, "write each answer under [[answers]]")
    spec.keys(a, where, name, _ANSWER_KEYS, ("label",))
    for key in ("name", "label", "value", "unit"):
        if key not in a:
            raise spec.fail(where, f"{name} has no {key}", "give name, label, value, unit (and rel_tol)")
    answer_name = spec.text(a, "name", where, name)
    if not _NAME.match(answer_name):
        raise spec.fail((*where, "name"), f"{name} name '{answer_name}' is not an identifier", 'e.g. name = "time"')
    unit = spec.text(a, "unit", where, name)
    if unit not in UNITS:
        raise spec.fail((*where, "unit"), f"{name} unit '{unit}' is not one of {', '.join(UNITS)}", "pick one")
    rel_tol = a.get("rel_tol", 0.01 if unit != "text" else 0.0)
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, (int, float)) or not 0 <= rel_tol < 1:
        raise spec.fail((*where, "rel_tol"), f"{name} rel_tol {rel_tol!r} is not a fraction from 0 up to 1",
                        "e.g. rel_tol = 0.02 for 2%")  # fmt: skip
    mistake_tables = a.get("mistakes", [])
    if not isinstance(mistake_tables, list):
        raise spec.fail((*where, "mistakes"), f"{name}.mistakes must be [[answers.mistakes]] tables",
                        "write each mistake under [[answers.mistakes]]")  # fmt: skip
    mistakes = []
    for j, given_mistake in enumerate(mistake_tables):
        mwhere = (*where, "mistakes", j)
        mname = f"{name}.mistakes[{j}]"
        m = spec.table(given_mistake, mwhere, mname, "write each mistake under [[answers.mistakes]]")
        spec.keys(m, mwhere, mname, _MISTAKE_KEYS, ("feedback",))
        if "value" not in m:
            raise spec.fail(mwhere, f"{mname} has no value", 'give value = "expression"')
        feedback = spec.text(m, "feedback", mwhere, mname, required=False)
        if not feedback.strip():
            raise spec.fail(mwhere, f"{mname} has a mistake without feedback", "say what the mistake was")
        mistakes.append(
            MistakeSpec(
                spec.expression(m["value"], (*mwhere, "value"), f"{mname}.value"),
                feedback,
                spec.translations(m, "feedback", mwhere, mname),
            )
        )
    return AnswerSpec(
        name=answer_name,
        label=spec.text(a, "label", where, name),
        value=spec.expression(a["value"], (*where, "value"), f"{name}.value"),
        unit=unit,
        rel_tol=float(rel_tol),
        mistakes=tuple(mistakes),
        label_i18n=spec.translations(a, "label", where, name),
    )

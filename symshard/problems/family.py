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
from ..messages import Message, say

__all__ = ["AnswerSpec", "Family", "MistakeSpec", "ParamSpec", "key_positions", "load_family", "read_spec"]

DIFFICULTIES = ("easy", "medium", "hard")
UNITS = ("s", "B", "FLOP", "FLOP/s", "B/s", "count", "ratio", "text")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

FAMILY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,79}\Z")
"""A family's name (its folder's): a letter, then letters, digits, ``-`` or ``_``. Problem ids, figure
files, zip entries, XML identifiers and the PrairieLearn question folders are made from it."""

_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_LINE_BREAK = re.compile("[\n\r\x85\u2028\u2029]")
_ONE_LINE = ("title", "objective", "label")
"""Text fields that head a page or fill a table cell: one line each, translations included."""


def _fail(family: str, message: Message, hint: Message, file: str = "family.toml") -> TemplateError:
    return TemplateError(say("family '{family}', {file}: {why}", family=family, file=file, why=message), hint=hint)


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
            raise TemplateError(
                say("parameter {name} has neither choices nor a range", name=self.name), hint=say("give one")
            )
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
        say(
            "family '{family}', family.toml: {where} has no text in '{language}'",
            family=family,
            where=where,
            language=language,
        ),
        hint=say('add {key} = "..." next to it', key=f"{where.rsplit('.', 1)[-1]}_{language}"),
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
            say(
                "problem family '{name}' has no text in language '{language}' (no {file})",
                name=self.name,
                language=language,
                file=localized,
            ),
            hint=say(
                "its languages: {languages}; pass --lang en, or add {file} to {path}",
                languages=", ".join(self.languages),
                file=localized,
                path=str(self.path),
            ),
        )

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Family", self.name, {"difficulty": self.difficulty, "params": [p.name for p in self.params],
                       "answers": [a.name for a in self.answers]}, {"languages": list(self.languages)})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


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

    Array tables count from 0 (``('answers', 1, 'unit')``); a dotted header (``[params.E]``) also places
    the tables it defines implicitly (``('params',)``) at its first line. Used to point errors at the spot;
    the TOML itself is read by ``tomllib``.

    Examples:
        >>> key_positions('[family]\\ntitle = "t"\\n[[answers]]\\n  name = "x"\\n')[("answers", 0, "name")]
        (4, 3)
        >>> key_positions('[family]\\n\\n[param.X]\\nchoices = [2]\\n')[("param",)]
        (3, 1)
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
                    for end in range(1, len(parts)):  # [param.X] defines [param] here, implicitly
                        found.setdefault(parts[:end], (number, indent + 1))
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
    kinds = {
        str: say("text"),
        bool: say("true/false"),
        int: say("a whole number"),
        float: say("a number"),
        list: say("a list"),
        dict: say("a table"),
    }
    return kinds.get(type(value), type(value).__name__)


class _Spec:
    """Reads one parsed ``family.toml``, checking every table, key and type, with positions for errors."""

    def __init__(self, family: str, source: str) -> None:
        self.family = family
        self.positions = key_positions(source)

    def fail(self, where: tuple[object, ...], message: Message, hint: Message) -> TemplateError:
        at = where
        while at and at not in self.positions:
            at = at[:-1]
        line, column = self.positions.get(at, (1, 1))
        return TemplateError(
            say("family '{family}', family.toml line {line}, column {column}: {why}",
                family=self.family, line=line, column=column, why=message),
            hint=hint,
        )  # fmt: skip

    def table(self, value: object, where: tuple[object, ...], name: str, hint: Message) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, say("{where} must be a table, not {kind}", where=name, kind=_kind(value)), hint)
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
            hint = did_you_mean(key, [*allowed, *(f"{k}_zh" for k in localized)])
            if not hint.startswith("did"):
                hint = say("the keys of {where} are {names}", where=name, names=", ".join(allowed))
            raise self.fail((*where, key), say("{where} has no key '{key}'", where=name, key=key), hint)

    def text(self, table: dict, key: str, where: tuple[object, ...], name: str, *, required: bool = True) -> str:
        if key not in table:
            if required:
                raise self.fail(
                    where, say("{where} has no {key}", where=name, key=key), say('give {key} = "..."', key=key)
                )
            return ""
        value = table[key]
        if not isinstance(value, str):
            raise self.fail(
                (*where, key),
                say("{where} must be text, not {kind}", where=f"{name}.{key}", kind=_kind(value)),
                say('write {key} = "..."', key=key),
            )
        self.check_text(value, (*where, key), f"{name}.{key}", one_line=key.partition("_")[0] in _ONE_LINE)
        return value

    def check_text(self, value: str, where: tuple[object, ...], name: str, *, one_line: bool) -> None:
        """Refuse a character no export can carry, and a line break in text that must be one line."""
        bad = _NOT_TEXT.search(value) or (_LINE_BREAK.search(value) if one_line else None)
        if bad is None:
            return
        char = f"U+{ord(bad.group(0)):04X}"
        if _LINE_BREAK.match(bad.group(0)):
            raise self.fail(where, say("{where} must be one line, but it holds a line break ({char})", where=name,
                                       char=char), say("write it on one line"))  # fmt: skip
        raise self.fail(where, say("{where} holds the character {char}, which no export can carry", where=name,
                                   char=char), say("remove it"))  # fmt: skip

    def expression(self, value: object, where: tuple[object, ...], name: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(
                where,
                say("{where} must be an expression in a string, not {kind}", where=name, kind=_kind(value)),
                say("e.g. {example}", example='"cost.time"'),
            )
        if len(value) > _EXPR_CHARS:
            raise self.fail(
                where,
                say("{where} is {count} {count:character|characters} long", where=name, count=f"{len(value):,}"),
                say("keep it under {limit}", limit=f"{_EXPR_CHARS:,}"),
            )
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
        raise _fail(name, say("is missing"), say("a family folder needs family.toml and problem.md.j2")) from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise _fail(name, say("is a link or not a regular file"), say("families may only read their own regular files"))
    if info.st_size > MAX_SPEC_BYTES:
        raise _fail(
            name,
            say("is {size} {size:byte|bytes}", size=f"{info.st_size:,}"),
            say("a family.toml is at most {size} {size:byte|bytes}", size=f"{MAX_SPEC_BYTES:,}"),
        )
    try:
        return spec_file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        why = say("is not UTF-8 text ({why} at byte {offset})", why=err.reason, offset=err.start)
        raise _fail(name, why, say("save it as UTF-8")) from None
    except OSError as err:
        raise _fail(
            name, say("cannot be read ({why})", why=err.strerror), say("check the file's permissions")
        ) from None


def load_family(path: Path) -> Family:
    """Read and check the family in folder ``path``.

    Every table, key and type of ``family.toml`` is checked (unknown names are errors with
    a suggestion); errors give the line and column.

    Raises:
        TemplateError: a missing file, bad TOML, or a spec that breaks the format above;
            the message names the family, the file and the spot.
    """
    name = path.name
    if not FAMILY_NAME.match(name):
        raise TemplateError(
            say("the family folder '{path}' has a name that is not a family's name", path=str(path)),
            hint=say("rename it: a letter, then letters, digits, '-' or '_' (at most 80 characters)"),
        )
    source = read_spec(path)
    try:
        info = os.lstat(path / "problem.md.j2")
    except OSError:
        raise _fail(name, say("is missing"), say("write the wording in problem.md.j2"), file="problem.md.j2") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise _fail(name, say("is a link or not a regular file"), say("families may only read their own regular files"),
                    file="problem.md.j2")  # fmt: skip
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as err:
        raise _fail(
            name, say("is not valid TOML ({why})", why=str(err)), say("check the quoting and brackets")
        ) from None
    spec = _Spec(name, source)
    for table in data:
        if table not in _TABLES:
            hint = did_you_mean(table, list(_TABLES))
            if not hint.startswith("did"):
                hint = say("the tables are {names}", names=", ".join(_TABLES))
            raise spec.fail((table,), say("has an unknown table [{table}]", table=table), hint)
    if "family" not in data:
        raise spec.fail((), say("has no [family] table"), say("give title, difficulty, tags and objective"))
    meta = spec.table(data["family"], ("family",), "[family]", say("give title, difficulty, tags and objective"))
    spec.keys(meta, ("family",), "[family]", _FAMILY_KEYS, ("title", "objective"))
    title = spec.text(meta, "title", ("family",), "[family]")
    objective = spec.text(meta, "objective", ("family",), "[family]")
    difficulty = spec.text(meta, "difficulty", ("family",), "[family]")
    if difficulty not in DIFFICULTIES:
        raise spec.fail(("family", "difficulty"),
                        say("difficulty '{value}' is not one of {options}", value=difficulty,
                            options=", ".join(DIFFICULTIES)),
                        say("pick one"))  # fmt: skip
    if "tags" not in meta:
        raise spec.fail(("family",), say("[family] has no {key}", key="tags"), say('give tags = ["collectives", ...]'))
    tags = meta["tags"]
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) and t.strip() for t in tags):
        raise spec.fail(("family", "tags"), say("tags must be a non-empty list of words, not {kind}", kind=_kind(tags)),
                        say("e.g. {example}", example='tags = ["collectives", "allgather"]'))  # fmt: skip
    for i, tag in enumerate(tags):
        spec.check_text(tag, ("family", "tags"), f"[family].tags[{i}]", one_line=True)
    params = []
    param_tables = spec.table(
        data.get("params", {}), ("params",), "[params]", say("one [params.NAME] table per parameter")
    )
    for pname, p in param_tables.items():
        where = ("params", pname)
        if not _NAME.match(pname):
            raise spec.fail(
                where, say("parameter name '{name}' is not an identifier", name=pname), say("use letters, digits and _")
            )
        p = spec.table(p, where, f"[params.{pname}]", say("give choices = [...] or range = [lo, hi]"))
        spec.keys(p, where, f"[params.{pname}]", _PARAM_KEYS)
        params.append(_param(spec, pname, p, where))
    lets = _expressions(spec, data, "let")
    checks = _expressions(spec, data, "checks")
    identity = _expressions(spec, data, "identity")
    answer_tables = data.get("answers", [])
    if not isinstance(answer_tables, list):
        raise spec.fail(
            ("answers",), say("answers must be [[answers]] tables"), say("write each answer under [[answers]]")
        )
    answers = [_answer(spec, i, a) for i, a in enumerate(answer_tables)]
    if not answers:
        raise spec.fail((), say("declares no [[answers]]"), say("every problem needs at least one answer"))
    answer_names = [a.name for a in answers]
    twice = sorted({n for n in answer_names if answer_names.count(n) > 1})
    if twice:
        raise spec.fail(
            ("answers",),
            say("names the answer {names} twice", names=", ".join(twice)),
            say("give each answer its own name"),
        )
    names = [p.name for p in params] + [k for k, _ in lets]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise spec.fail(("let", dupes[0]), say("defines {names} twice", names=", ".join(dupes)),
                        say("give every parameter and let its own name"))  # fmt: skip
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
            where,
            say("{where} must give either choices or range", where=name),
            say("e.g. choices = [2, 4, 8] or range = [1, 64]"),
        )
    if "choices" in p:
        choices = p["choices"]
        if not isinstance(choices, list) or not choices:
            raise spec.fail(
                (*where, "choices"),
                say("{where} choices must be a non-empty list", where=name),
                say("e.g. {example}", example="[2, 4, 8]"),
            )
        if len(choices) > _MAX_CHOICES:
            raise spec.fail(
                (*where, "choices"),
                say("{where} has {count} {count:choice|choices}", where=name, count=f"{len(choices):,}"),
                say("at most {limit}", limit=f"{_MAX_CHOICES:,}"),
            )
        for c in choices:
            if not isinstance(c, (str, int, float, bool)):
                raise spec.fail((*where, "choices"), say("{where} choice {value} is {kind}", where=name, value=repr(c),
                                                         kind=_kind(c)),
                                say("choices are numbers, text or true/false"))  # fmt: skip
        for key in ("step", "powers_of_two"):
            if key in p:
                raise spec.fail(
                    (*where, key),
                    say("{where} {key} goes with range, not choices", where=name, key=key),
                    say("drop {key}", key=key),
                )
        return ParamSpec(pname, choices=tuple(choices))
    rng = p["range"]
    whole = isinstance(rng, list) and len(rng) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in rng)
    if not whole or not 0 < rng[0] <= rng[1]:
        raise spec.fail((*where, "range"),
                        say("{where} range {range} is not [lo, hi] with whole numbers 0 < lo <= hi", where=name,
                            range=repr(rng)),
                        say("e.g. {example}", example="range = [1, 64]"))  # fmt: skip
    step = p.get("step", 1)
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise spec.fail(
            (*where, "step"),
            say("{where} step {step} is not a whole number of at least 1", where=name, step=repr(step)),
            say("e.g. {example}", example="step = 64"),
        )
    powers = p.get("powers_of_two", False)
    if not isinstance(powers, bool):
        raise spec.fail((*where, "powers_of_two"),
                        say("{where} powers_of_two must be true or false, not {kind}", where=name, kind=_kind(powers)),
                        say("write {example}", example="powers_of_two = true"))  # fmt: skip
    if powers and "step" in p:
        raise spec.fail(
            (*where, "step"), say("{where} gives both step and powers_of_two", where=name), say("keep one of them")
        )
    out = ParamSpec(pname, low=rng[0], high=rng[1], step=step, powers_of_two=powers)
    if not out.values():
        raise spec.fail(
            (*where, "range"), say("{where} has no power of two in {range}", where=name, range=str(rng)),
            say("widen the range"),
        )  # fmt: skip
    return out


def _expressions(spec: _Spec, data: dict, table: str) -> tuple[tuple[str, str], ...]:
    values = spec.table(
        data.get(table, {}), (table,), f"[{table}]", say('write name = "expression" under [{table}]', table=table)
    )
    out = []
    for key, value in values.items():
        if not _NAME.match(key):
            raise spec.fail(
                (table, key),
                say("[{table}] name '{name}' is not an identifier", table=table, name=key),
                say("use letters, digits and _"),
            )
        out.append((key, spec.expression(value, (table, key), f"{table}.{key}")))
    return tuple(out)


def _answer(spec: _Spec, i: int, given: object) -> AnswerSpec:
    where: tuple[object, ...] = ("answers", i)
    name = f"answers[{i}]"
    a = spec.table(given, where, name, say("write each answer under [[answers]]"))
    spec.keys(a, where, name, _ANSWER_KEYS, ("label",))
    for key in ("name", "label", "value", "unit"):
        if key not in a:
            raise spec.fail(
                where, say("{where} has no {key}", where=name, key=key),
                say("give name, label, value, unit (and rel_tol)"),
            )  # fmt: skip
    answer_name = spec.text(a, "name", where, name)
    if not _NAME.match(answer_name):
        raise spec.fail(
            (*where, "name"),
            say("answers[{index}] name '{name}' is not an identifier", index=i, name=answer_name),
            say("e.g. {example}", example='name = "time"'),
        )
    unit = spec.text(a, "unit", where, name)
    if unit not in UNITS:
        raise spec.fail(
            (*where, "unit"),
            say("{where} unit '{unit}' is not one of {units}", where=name, unit=unit, units=", ".join(UNITS)),
            say("pick one"),
        )
    rel_tol = a.get("rel_tol", 0.01 if unit != "text" else 0.0)
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, (int, float)) or not 0 <= rel_tol < 1:
        raise spec.fail((*where, "rel_tol"),
                        say("{where} rel_tol {value} is not a fraction from 0 up to 1", where=name,
                            value=repr(rel_tol)),
                        say("e.g. rel_tol = 0.02 for 2%"))  # fmt: skip
    mistake_tables = a.get("mistakes", [])
    if not isinstance(mistake_tables, list):
        raise spec.fail((*where, "mistakes"),
                        say("{where} must be [[answers.mistakes]] tables", where=f"{name}.mistakes"),
                        say("write each mistake under [[answers.mistakes]]"))  # fmt: skip
    mistakes = []
    for j, given_mistake in enumerate(mistake_tables):
        mwhere = (*where, "mistakes", j)
        mname = f"{name}.mistakes[{j}]"
        m = spec.table(given_mistake, mwhere, mname, say("write each mistake under [[answers.mistakes]]"))
        spec.keys(m, mwhere, mname, _MISTAKE_KEYS, ("feedback",))
        if "value" not in m:
            raise spec.fail(
                mwhere, say("{where} has no {key}", where=mname, key="value"), say('give value = "expression"')
            )
        feedback = spec.text(m, "feedback", mwhere, mname, required=False)
        if not feedback.strip():
            raise spec.fail(
                mwhere, say("{where} has a mistake without feedback", where=mname), say("say what the mistake was")
            )
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

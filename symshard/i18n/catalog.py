"""The message catalogue: what symshard says, in a language other than English.

English stays in the code that knows what it means (:func:`symshard.messages.say` templates and
the keyed tables named ``ENGLISH``), so ``import symshard`` and every English answer read nothing
from here. Another language is a folder of gettext catalogues beside this module
(``zh/*.po``), read with polib on its first use: a keyed word is found by its key (the
``msgctxt``) and its English, a sentence by its English template (the ``msgid``); the
translation is a template with the same :meth:`str.format` fields, and :func:`render` fills
it with the message's values, each said in the same language in turn.

A few sentences are still written as English text rather than built as messages; until they
are, ``zh.toml`` matches them with patterns (:func:`translate`). The tests list those that are
left, and :func:`render` never uses a pattern for a message it finds in the catalogue.

Examples:
    >>> translate("unknown dtype 'bf61'", "zh")
    "未知的数据类型 'bf61'"
    >>> translate("did you mean 'tpu-v5e' or 'tpu-v5p'?", "zh")
    "是不是想写 'tpu-v5e' 或 'tpu-v5p'？"
    >>> text("report.best_unknown", "zh")
    '最优：尺寸或常数仍是符号，无法判定（请给出 --shape 和 --hw）'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files

from ..errors import UsageError, did_you_mean
from ..messages import ENGLISH_JOINS, Choices, Clauses, Message, Names, fill, say
from ..messages import join as join_list
from .languages import LANGUAGES

__all__ = ["Catalogue", "catalogue", "condition", "join", "render", "text", "translate"]

# What a field of each kind matches; a field that recurs must match the same text again. Only
# `any` may contain " in '": the parser appends " in '<the input>'" to its messages, and a
# general pattern near the end of the catalogue places that quote in the translation, so a
# field must not swallow it.
_FIELD = r"(?:(?! in ').)+?"
_KINDS = {
    "text": _FIELD,
    "msg": _FIELD,
    "list": _FIELD,
    "or": _FIELD,
    "int": r"[0-9][0-9,]*",
    "word": r"[^\s']+",
    "any": r".+?",
}
_TOKEN = re.compile(r"\{\{|\}\}|\{(\w+)(?::(\w+))?\}")


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    kinds: dict[str, str]
    template: str


@dataclass(frozen=True, slots=True)
class Catalogue:
    """One language's catalogue, as read from its gettext files (``symshard/i18n/<language>/*.po``).

    ``entries`` maps ``(msgctxt, msgid)`` (the context is ``""`` for a sentence) to the translated
    template; ``texts`` maps the keys of keyed words (the msgctxt) to theirs.
    """

    language: str
    entries: dict[tuple[str, str], str]
    texts: dict[str, str]
    patterns: tuple[_Pattern, ...]


def _read_po(language: str) -> dict[tuple[str, str], str]:
    import polib

    entries: dict[tuple[str, str], str] = {}
    folder = files("symshard.i18n").joinpath(language)
    for item in sorted(folder.iterdir(), key=lambda f: f.name):
        if not item.name.endswith(".po"):
            continue
        for entry in polib.pofile(item.read_text(encoding="utf-8")):
            if entry.msgstr and not entry.obsolete and "fuzzy" not in entry.flags:
                entries[(entry.msgctxt or "", entry.msgid)] = entry.msgstr
    return entries


def _compile(english: str) -> tuple[re.Pattern[str], dict[str, str]]:
    parts: list[str] = []
    kinds: dict[str, str] = {}
    pos = 0
    for m in _TOKEN.finditer(english):
        parts.append(re.escape(english[pos : m.start()]))
        pos = m.end()
        if m.group(0) in ("{{", "}}"):
            parts.append(re.escape(m.group(0)[0]))
            continue
        name, kind = m.group(1), m.group(2) or "text"
        if kind not in _KINDS:
            raise ValueError(f"unknown field kind '{kind}' in the pattern {english!r}")
        if name in kinds:
            parts.append(f"(?P={name})")
            continue
        kinds[name] = kind
        parts.append(f"(?P<{name}>{_KINDS[kind]})")
    parts.append(re.escape(english[pos:]))
    return re.compile("".join(parts), re.DOTALL), kinds


@cache
def catalogue(language: str) -> Catalogue:
    """The catalogue of ``language``, read and compiled once.

    Raises:
        UsageError: a language symshard has no catalogue for.
    """
    if language not in LANGUAGES or language == "en":
        raise UsageError(
            say("unknown language '{name}'", name=language)
            if language not in LANGUAGES
            else say("English has no catalogue"),
            hint=did_you_mean(language, [x for x in LANGUAGES if x != "en"]),
        )
    entries = _read_po(language)
    texts = {context: template for (context, _), template in entries.items() if context}
    data = tomllib.loads(files("symshard.i18n").joinpath(f"{language}.toml").read_text(encoding="utf-8"))
    patterns = []
    for entry in data.get("sentence", []):
        regex, kinds = _compile(entry["en"])
        patterns.append(_Pattern(regex, kinds, entry[language]))
    return Catalogue(language, entries, texts, tuple(patterns))


def join(names: tuple[str, ...] | list[str], language: str) -> str:
    """Names as a list in running text: ``J, K and L`` / ``J、K 和 L``."""
    names = list(names)
    return join_list(names, Names, ENGLISH_JOINS if language == "en" else _joins(language))


def text(key: str, language: str, **values: object) -> str:
    """The keyed text ``key`` of ``language``, with ``values`` filled in.

    Raises:
        UsageError: the catalogue has no such key.
    """
    texts = catalogue(language).texts
    if key not in texts:
        raise UsageError(
            say("the {language} catalogue has no text '{key}'", language=language, key=key),
            hint=did_you_mean(key, sorted(texts)),
        )
    return texts[key].format(**values)


def _field(value: str, kind: str, language: str) -> str:
    if kind == "msg":
        return translate(value, language)
    if kind == "list":
        names = re.split(r", | and ", value)
        return join(names, language)
    if kind == "or":
        return text("word.or", language).join(value.split(" or "))
    return value


def render(value: object, language: str) -> str:
    """What symshard says, in ``language``: a :class:`~symshard.messages.Message` is looked up in the
    language's catalogue by its template (and context) and its values are said in turn; a list
    (:class:`~symshard.messages.Names`, ``Choices``, ``Clauses``) is joined in the language's way.

    A message the catalogue lacks stays in English (the tests look for those).

    Examples:
        >>> from symshard.messages import Choices, say
        >>> render(say("did you mean {options}?", options=Choices(["'tpu-v5e'", "'tpu-v5p'"])), "zh")
        "是不是想写 'tpu-v5e' 或 'tpu-v5p'？"
    """
    said = _render(value, language)
    return said if isinstance(said, str) else str(said)


def _render(value: object, language: str) -> object:
    if language == "en":
        return str(value) if isinstance(value, (Message, Names, Choices, Clauses)) else value
    if isinstance(value, Message):
        found = catalogue(language).entries.get((value.context, value.template))
        if found is None:
            return _translate_text(str(value), language)
        return fill(found, value.values, lambda v: _render(v, language))
    if isinstance(value, (Names, Choices, Clauses)):
        return join_list((str(_render(v, language)) for v in value), type(value), _joins(language))
    if isinstance(value, str):
        return _translate_text(value, language)
    return value


@cache
def _joins(language: str) -> dict[str, str]:
    texts = catalogue(language).texts
    return {key: texts.get(key, english) for key, english in ENGLISH_JOINS.items()}


def translate(sentence: str, language: str) -> str:
    """An English sentence symshard wrote, in ``language``; unchanged when no pattern matches.

    A sentence made of clauses joined by ``; `` that no pattern covers as a whole is
    translated clause by clause.
    """
    if isinstance(sentence, Message):
        return render(sentence, language)
    return _translate_text(sentence, language)


def _translate_text(sentence: str, language: str) -> str:
    if language == "en" or not sentence:
        return sentence
    found = _translate(sentence, language)
    return sentence if found is None else found


@lru_cache(maxsize=4096)
def _translate(sentence: str, language: str) -> str | None:
    for p in catalogue(language).patterns:
        m = p.regex.fullmatch(sentence)
        if m is not None:
            values = {name: _field(m.group(name), kind, language) for name, kind in p.kinds.items()}
            return p.template.format(**values)
    if "; " in sentence:
        parts = [_translate(part, language) for part in sentence.split("; ")]
        if any(part is not None for part in parts):
            semicolon = text("word.semicolon", language)
            return semicolon.join(p if p is not None else e for p, e in zip(parts, sentence.split("; "), strict=True))
    return None


def condition(formula: str, language: str) -> str:
    """A condition as symshard prints it (``B < C/W_ici and D > 2·B``, ``never``) in ``language``:
    the relations stay as they are, the words between them are translated.

    Examples:
        >>> condition("(D > C/W_ici and B < D) or (D = C/W_ici)", "zh")
        '(D > C/W_ici 且 B < D) 或 (D = C/W_ici)'
    """
    if language == "en":
        return formula
    if formula in ("never", "always"):
        return translate(formula, language)
    words = {" and ": text("word.and_formula", language), " or ": text("word.or_formula", language)}
    return re.sub(r" (?:and|or) ", lambda m: words[m.group(0)], formula)

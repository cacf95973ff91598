"""The message catalogue: what symshard says, in a language other than English.

English stays in the code that knows what it means (:func:`symshard.messages.say` templates and
the keyed tables named ``ENGLISH``), so ``import symshard`` and every English answer read nothing
from here. Another language is a folder of gettext catalogues beside this module
(``zh/*.po``), read with polib on its first use: a keyed word is found by its key (the
``msgctxt``) and its English, a sentence by its English template (the ``msgid``); the
translation is a template with the same :meth:`str.format` fields, and :func:`render` fills
it with the message's values, each said in the same language in turn. Nothing here reads an
English sentence back: text that is not a message (a name, the user's input, a third party's
words) is quoted as it is.

Examples:
    >>> from symshard.messages import say
    >>> render(say("unknown dtype '{name}'", name="bf61"), "zh")
    "未知的数据类型 'bf61'"
    >>> text("report.best_unknown", "zh")
    '最优：尺寸或常数仍是符号，无法判定（请给出 --shape 和 --hw）'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from ..errors import UsageError, did_you_mean
from ..messages import ENGLISH_JOINS, Message, Names, fill, is_list, say
from ..messages import join as join_list
from .languages import LANGUAGES

__all__ = ["Catalogue", "catalogue", "condition", "join", "render", "text", "translate"]


@dataclass(frozen=True, slots=True)
class Catalogue:
    """One language's catalogue, as read from its gettext files (``symshard/i18n/<language>/*.po``).

    ``entries`` maps ``(msgctxt, msgid)`` (the context is ``""`` for a sentence) to the translated
    template; ``texts`` maps the keys of keyed words (the msgctxt) to theirs.
    """

    language: str
    entries: dict[tuple[str, str], str]
    texts: dict[str, str]


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


@cache
def catalogue(language: str) -> Catalogue:
    """The catalogue of ``language``, read once.

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
    return Catalogue(language, entries, texts)


def join(names: tuple[str, ...] | list[str], language: str) -> str:
    """Names as a list in running text: ``J, K and L`` / ``J、K 和 L``."""
    return join_list(list(names), Names, ENGLISH_JOINS if language == "en" else _joins(language))


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
    return fill(texts[key], **values)


def render(value: object, language: str) -> str:
    """What symshard says, in ``language``: a :class:`~symshard.messages.Message` is looked up in the
    language's catalogue by its template (and context) and its values are said in turn; a list
    (:class:`~symshard.messages.Names`, ``Choices``, ``Clauses``, ``AllOf``, ``AnyOf``) is joined in
    the language's way; any other value is shown as it is.

    A message the catalogue lacks stays in English (the tests look for those).

    Examples:
        >>> from symshard.messages import Choices, say
        >>> render(say("did you mean {options}?", options=Choices(["'tpu-v5e'", "'tpu-v5p'"])), "zh")
        "是不是想写 'tpu-v5e' 或 'tpu-v5p'？"
    """
    said = _render(value, language)
    return said if isinstance(said, str) and type(said) is str else str(said)


def _render(value: object, language: str) -> object:
    if language == "en":
        return str(value) if isinstance(value, Message) or is_list(value) else value
    if isinstance(value, Message):
        found = catalogue(language).entries.get((value.context, value.template))
        if found is None:
            return str(value)
        return type(value).format_with(found, tuple((k, _said(v, language)) for k, v in value.values))
    if is_list(value):
        return join_list((str(_render(v, language)) for v in value), type(value), _joins(language))  # type: ignore[attr-defined]
    return value


def _said(value: object, language: str) -> object:
    """A message's value said in ``language``; the items of a plain tuple or dict (the arguments of a
    ``%`` template) each in turn."""
    if isinstance(value, dict):
        return {k: _render(v, language) for k, v in value.items()}
    if isinstance(value, tuple) and not is_list(value):
        return tuple(_render(v, language) for v in value)
    return _render(value, language)


@cache
def _joins(language: str) -> dict[str, str]:
    texts = catalogue(language).texts
    return {key: texts.get(key, english) for key, english in ENGLISH_JOINS.items()}


def translate(said: object, language: str) -> str:
    """What symshard said (a message, or text quoted as it is), in ``language``: :func:`render`."""
    return render(said, language)


def condition(formula: object, language: str) -> str:
    """A condition's text (the message of ``Condition.text()``, ``B < C/W_ici and D > 2·B``) in
    ``language``: the relations stay as they are, the words between them are the language's.

    Examples:
        >>> import sympy
        >>> from symshard.algebra.conditions import Case, Condition
        >>> B, D = sympy.symbols("B D", positive=True)
        >>> c = Condition((Case("", (sympy.Lt(B, D), sympy.Gt(D, 2 * B))), Case("", (sympy.Gt(B, 3),))))
        >>> condition(c.text(), "zh")
        '(B < D 且 D > 2·B) 或 (B > 3)'
    """
    return render(formula, language)

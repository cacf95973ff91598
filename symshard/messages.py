"""Sentences kept as data: an English template and its values, put into words only at the edge.

A :class:`Message` is what the library says, before any language is chosen: a template in
:meth:`str.format` syntax (the English source, and the ``msgid`` of the gettext catalogues in
``symshard/i18n/<language>/*.po``) and the values that fill it. It *is* the English sentence
(a :class:`str`), so code that only needs English treats it as text; the command line, the
site, notebooks and problem writers say it in another language with
:func:`symshard.i18n.render`, which looks the template up in that language's catalogue and
fills in the values, each said in the same language in turn. No regular expression ever
reads an English sentence back.

A count says its noun in the form that agrees with it, through one helper, :func:`fill`: the
template writes ``{count} {count:strategy|strategies}`` (singular, a bar, plural), so English says
``1 strategy`` and ``5 strategies``; a language without plurals writes ``{count} 个策略``. No code
chooses a plural ending itself.

A value is text that is the same in every language (notation, names, the user's input), a
number, a nested :class:`Message`, or one of three lists that each language joins in its own
way: :class:`Names` (``J, K and L``), :class:`Choices` (``'a' or 'b'``), :class:`Clauses`
(sentences joined by ``; ``), and :class:`AllOf` and :class:`AnyOf` (the relations of a condition,
joined by ``and`` and ``or``).

This module is a leaf: it imports nothing from symshard, so every module may use it.

Examples:
    >>> m = say("unknown dtype '{name}'", name="bf61")
    >>> m
    "unknown dtype 'bf61'"
    >>> m.template, m.values
    ("unknown dtype '{name}'", (('name', 'bf61'),))
    >>> str(say("shard {dims} over {axis}", dims=Names(["I", "J", "K"]), axis="X"))
    'shard I, J and K over X'
    >>> str(say("{count} {count:strategy|strategies}", count=1)), str(say("{count} {count:chip|chips}", count="8,960"))
    ('1 strategy', '8,960 chips')
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "AllOf",
    "AnyOf",
    "Choices",
    "Clauses",
    "Message",
    "Names",
    "PercentMessage",
    "fields",
    "fill",
    "is_list",
    "is_one",
    "keyed",
    "say",
]


class _List(tuple):  # type: ignore[type-arg]
    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class Names(_List):
    """Names listed in running text, the last joined by "and": ``J, K and L`` (``J、K 和 L``)."""

    __slots__ = ()


class Choices(_List):
    """Alternatives, joined by "or": ``'a' or 'b'`` (``'a' 或 'b'``)."""

    __slots__ = ()


class Clauses(_List):
    """Sentences joined by a semicolon: ``a; b`` (``a；b``)."""

    __slots__ = ()


class AllOf(_List):
    """Relations that all hold, joined by "and": ``B < D and D > 2·B`` (``B < D 且 D > 2·B``)."""

    __slots__ = ()


class AnyOf(_List):
    """Alternatives of which one holds, joined by "or": ``(B < D) or (D = C)`` (``(B < D) 或 (D = C)``)."""

    __slots__ = ()


# How each list joins in English; another language's joins are entries of its catalogue
# (msgctxt "join.comma", "join.and", "join.or", "join.clauses").
ENGLISH_JOINS = {
    "join.comma": ", ",
    "join.and": " and ",
    "join.or": " or ",
    "join.clauses": "; ",
    "join.all": " and ",
    "join.any": " or ",
}


def join(items: Iterable[str], kind: type, words: Mapping[str, str]) -> str:
    """Items already said in one language, joined as ``kind`` lists are, with that language's ``words``.

    Examples:
        >>> join(["I", "J", "K"], Names, ENGLISH_JOINS)
        'I, J and K'
        >>> join(["'a'", "'b'", "'c'"], Choices, ENGLISH_JOINS)
        "'a' or 'b' or 'c'"
    """
    items = list(items)
    if kind is Clauses:
        return words["join.clauses"].join(items)
    if kind is AllOf:
        return words["join.all"].join(items)
    if kind is AnyOf:
        return words["join.any"].join(items)
    if kind is Choices:
        return words["join.or"].join(items)
    if len(items) <= 1:
        return "".join(items)
    return words["join.comma"].join(items[:-1]) + words["join.and"] + items[-1]


def is_one(count: object) -> bool:
    """Whether a count is one, so its noun is singular: a number, or its text as a report shows it
    (``'1'``, ``'1.0'``); anything else (``'8,960'``, a symbol such as ``'N'``) takes the plural.

    Examples:
        >>> is_one(1), is_one("1"), is_one("1,000"), is_one("N"), is_one(0)
        (True, True, False, False, False)
    """
    if isinstance(count, str):
        text = count.strip().replace(",", "").replace("_", "")
        try:
            return float(text) == 1
        except ValueError:
            return False
    try:
        return bool(count == 1)
    except (TypeError, ValueError):  # a value that cannot be compared with a number
        return False


class _Formatter(string.Formatter):
    """:meth:`str.format`, with one more format spec: ``{count:one|many}`` is the noun that agrees with
    ``count``."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        if "|" in format_spec:
            one, _, many = format_spec.partition("|")
            return one if is_one(value) else many
        return super().format_field(value, format_spec)


_FORMATTER = _Formatter()


def fill(template: str, /, **values: object) -> str:
    """``template.format(**values)``, where ``{count:one|many}`` says the noun that agrees with ``count``:
    the one helper that puts a plural into words.

    Examples:
        >>> fill("{n} {n:chip|chips} of {hbm}", n=1, hbm="16 GiB"), fill("{n:,} {n:file|files}", n=1200)
        ('1 chip of 16 GiB', '1,200 files')
    """
    if "|" not in template:
        return template.format(**values)
    return _FORMATTER.vformat(template, (), values)


def is_list(value: object) -> bool:
    """Whether ``value`` is one of the lists each language joins its own way."""
    return isinstance(value, _List)


def _english(value: object) -> object:
    if isinstance(value, Message):
        return str(value)
    if isinstance(value, _List):
        return join((str(_english(v)) for v in value), type(value), ENGLISH_JOINS)
    return value


class Message(str):
    """A sentence as its English template and values; the object is the English text itself.

    Args:
        template: the English, in :meth:`str.format` syntax (``{name}``, ``{count:,}``).
        values: ``(name, value)`` pairs for the template's fields.
        context: a key that tells apart two uses of the same English (gettext's ``msgctxt``);
            the words of tables and reports are keyed this way (``"report.best"``).

    Messages compare, hash and show (``repr``) as their English text, and pickle with their values.

    Examples:
        >>> m = Message("{count:,} strategies", (("count", 12345),))
        >>> m, m.template, dict(m.values)
        ('12,345 strategies', '{count:,} strategies', {'count': 12345})
        >>> m == "12,345 strategies"
        True
    """

    template: str
    values: tuple[tuple[str, object], ...]
    context: str

    def __new__(cls, template: str, values: Iterable[tuple[str, object]] = (), context: str = "") -> Message:
        pairs = tuple(values)
        self = super().__new__(cls, cls.format_with(template, tuple((k, _english(v)) for k, v in pairs)))
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "values", pairs)
        object.__setattr__(self, "context", context)
        return self

    @staticmethod
    def format_with(template: str, values: tuple[tuple[str, object], ...]) -> str:
        """``template`` (this message's or a translation of it) filled with values already said (:func:`fill`)."""
        return fill(template, **dict(values))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Message is immutable: cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.template, self.values, self.context))

    def __repr__(self) -> str:
        # shown as the English text it is, like any string; .template and .values hold the rest
        return str.__repr__(self)

    def __str__(self) -> str:
        return str.__str__(self)


class PercentMessage(Message):
    """A message whose template is in ``%`` syntax, as the standard library's own gettext messages are
    (argparse's ``'the following arguments are required: %s'``); its one value, ``args``, is what
    goes after the ``%``: one value, a tuple or a dict.

    Examples:
        >>> m = PercentMessage("expected %s arguments", (("args", 2),), "argparse")
        >>> str(m), m.context
        ('expected 2 arguments', 'argparse')
    """

    @staticmethod
    def format_with(template: str, values: tuple[tuple[str, object], ...]) -> str:
        args = dict(values).get("args", ())
        return template % args  # type: ignore[no-any-return]


def say(template: str, /, **values: object) -> Message:
    """A sentence to say in any language: ``template`` is its English (and its catalogue msgid).

    The name is what the catalogue check (and ``pybabel extract -k say``) looks for: write the
    template as a literal string so it can be found.

    Examples:
        >>> m = say("mesh axis {axis} is given twice", axis="X")
        >>> m, m.template, m.values
        ('mesh axis X is given twice', 'mesh axis {axis} is given twice', (('axis', 'X'),))
    """
    return Message(template, tuple(values.items()))


def keyed(english: Mapping[str, str], key: str, /, **values: object) -> Message:
    """The words of ``key`` from a module's table of English (``english[key]``), kept with its key.

    Examples:
        >>> m = keyed({"report.best": "best: {name}"}, "report.best", name="1")
        >>> m, m.template, m.context
        ('best: 1', 'best: {name}', 'report.best')
    """
    return Message(english[key], tuple(values.items()), key)


def fields(template: str) -> set[str]:
    """The names of a template's fields.

    Examples:
        >>> sorted(fields("{count:,} of {name!r}; {{literal}}"))
        ['count', 'name']
    """
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}

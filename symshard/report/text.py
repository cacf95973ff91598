"""The pieces every text report is made of: aligned two-column tables, a formula beside its number,
the words for regimes and conditions, and the row labels that cost tables share.

A terminal shows a CJK character in two columns, so tables measure text by columns, not characters.
The keys keep the ``cli.`` prefix they were first translated under (``symshard/i18n/zh/*.po`` finds
them by key).

Examples:
    >>> print(table([("bytes", "1 MiB"), ("hops", "3")]))
    bytes  1 MiB
    hops   3
    >>> from symshard.algebra.units import format_bytes
    >>> from symshard.algebra.symbols import dim
    >>> equation(dim("I") * 2, 2048, format_bytes)
    '2·I = 2,048 B (2 KiB)'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

from ..algebra.mathtext import as_expr
from ..algebra.units import format_number, format_seconds, format_seconds_expr, pretty

ENGLISH: dict[str, str] = {
    "cli.one_device": "(one device)",
    "cli.hardware": "hardware",
    "cli.hops": "hops",
    "cli.bandwidth": "bandwidth",
    "cli.latency": "latency",
    "cli.time": "time",
    "cli.regime": ", {regime}",
    "cli.latency_below": " ({regime} below V = {bytes})",
    "cli.note": "note: {note}",
}
"""The English of the words several reports share, by key; other languages are in the catalogue."""

Format = Callable[[object], str]
"""A function that shows a number with its unit (:func:`symshard.algebra.units.format_bytes`, ...)."""


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal (a CJK character takes two).

    Examples:
        >>> width("time"), width("时间")
        (4, 4)
    """
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def ljust(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns.

    Examples:
        >>> ljust("时间", 6) + "|"
        '时间  |'
    """
    return text + " " * max(0, columns - width(text))


def table(rows: Sequence[tuple[str, str]]) -> str:
    """Labels and values in two columns, the values aligned (see the module's example)."""
    columns = max(width(k) for k, _ in rows)
    return "\n".join(f"{ljust(k, columns)}  {v}" for k, v in rows)


def equation(symbolic: object, numeric: object, fmt: Format) -> str:
    """``formula = number`` when they differ, else just one of them.

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> equation(2 * dim("I"), 8, format_number)
        '2·I = 8'
    """
    sym = pretty(symbolic)
    value = as_expr(numeric)
    if value == as_expr(symbolic):
        return sym
    if not value.is_number:
        text = format_seconds_expr(value) if fmt is format_seconds else pretty(value)
        return sym if text == sym else f"{sym} = {text}"
    number = fmt(value)
    return number if sym == format_number(value) or sym == str(value) else f"{sym} = {number}"


def shown(x: object, fmt: Format) -> str:
    """A value as a number with its unit, or its formula while a symbol is left.

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> shown(dim("I") / 2, format_number), shown(0.5, format_seconds)
        ('I/2', '500 ms')
    """
    value = as_expr(x)
    return fmt(value) if value.is_number else pretty(value)


def bound(word: str, language: str) -> str:
    """``compute-bound``, ``bandwidth-bound``, ... in ``language`` (the glossary's terms).

    Examples:
        >>> bound("latency", "en")
        'latency-bound'
    """
    if language == "en":
        return f"{word}-bound"
    from ..i18n import term

    return term(f"{word}_bound", language)


def condition(formula: str, language: str) -> str:
    """A condition's relations as they are, the words between them in ``language``.

    Examples:
        >>> condition("B > 240 or X < 2", "en")
        'B > 240 or X < 2'
    """
    if language == "en":
        return formula
    from ..i18n.catalog import condition as words_between

    return words_between(formula, language)

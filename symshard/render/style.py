"""The look of every figure: colours, type sizes, the partial-sum hatch, text measuring.

One place decides the style so that a layout, a collective and a regime plot
read as one family of pictures. The block colours are the Okabe–Ito palette
(distinguishable with the common colour-vision deficiencies), then the same
hues lighter and darker; colour is never the only cue, since every block also
carries its label. Partial sums get a second cue, a diagonal hatch.

Examples:
    >>> block_colour(0), block_colour(7), block_colour(14)
    ('#E69F00', '#F2CF80', '#AC7700')
    >>> text_colour("#0072B2"), text_colour("#F0E442")
    ('#ffffff', '#1f2328')
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from .canvas import ID

__all__ = [
    "FRAME",
    "GRID",
    "HATCH",
    "INK",
    "LINE_COLOURS",
    "MUTED",
    "PALETTE",
    "SIZE",
    "SMALL",
    "TITLE",
    "block_colour",
    "hatch_defs",
    "subscript",
    "text_colour",
    "text_width",
]

PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
"""Okabe–Ito without black: orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple."""

LINE_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
"""The palette reordered for lines on white: the darker hues first, yellow left out."""

INK = "#1f2328"
MUTED = "#57606a"
GRID = "#d0d7de"
FRAME = "#444c56"

TITLE = 15
SIZE = 12
SMALL = 11

HATCH = f"url(#{ID}-hatch)"
"""The fill that hatches a partial sum (drawn over the block's colour)."""


def _mix(colour: str, other: tuple[int, int, int], t: float) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    mixed = (round(c + (o - c) * t) for c, o in zip((r, g, b), other, strict=True))
    return "#" + "".join(f"{c:02X}" for c in mixed)


@lru_cache(maxsize=1024)
def block_colour(index: int) -> str:
    """The colour of block ``index``: the palette, then its tints, then its shades, then again."""
    n = len(PALETTE)
    base = PALETTE[index % n]
    variant = (index // n) % 3
    if variant == 1:
        return _mix(base, (255, 255, 255), 0.5)
    if variant == 2:
        return _mix(base, (0, 0, 0), 0.25)
    return base


def _luminance(colour: str) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@lru_cache(maxsize=1024)
def text_colour(fill: str) -> str:
    """Ink or white, whichever contrasts more with ``fill``."""
    lum = _luminance(fill)
    return "#ffffff" if (1.05 / (lum + 0.05)) > ((lum + 0.05) / (_luminance(INK) + 0.05)) else INK


_NARROW = set("ijlI.,:;!|'()[]{} ")
_SUBSCRIPT = set("₀₁₂₃₄₅₆₇₈₉")
_WIDE = set("MWmw@%")


def _units(ch: str) -> float:
    """The width of ``ch`` in ems: a Chinese character or full-width punctuation is a whole em (East
    Asian width W or F); ambiguous ones (``·``, ``→``, ``①``) are drawn narrow in a Latin face."""
    if ch in _NARROW:
        return 0.34
    if ch in _SUBSCRIPT:
        return 0.52
    if ch in _WIDE:
        return 0.9
    return 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.62


@lru_cache(maxsize=8192)
def text_width(text: str, size: float, *, bold: bool = False) -> float:
    """A generous estimate of the width of ``text`` in a sans-serif face (no font files to measure).

    Examples:
        >>> text_width("B (log scale)", 12), text_width("B（对数坐标）", 12)
        (76.56, 79.44)
    """
    units = sum(_units(ch) for ch in text)
    return units * size * (1.1 if bold else 1.0)


_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(n: int) -> str:
    """``12`` as ``₁₂``."""
    return str(n).translate(_SUB)


def hatch_defs() -> str:
    """The ``<pattern>`` behind :data:`HATCH`."""
    return (
        f'<pattern id="{ID}-hatch" width="7" height="7" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        f'<rect width="7" height="7" fill="#ffffff" fill-opacity="0.18"/>'
        f'<line x1="0" y1="0" x2="0" y2="7" stroke="{INK}" stroke-width="2.6" stroke-opacity="0.55"/>'
        "</pattern>"
    )

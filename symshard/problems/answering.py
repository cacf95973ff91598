"""How a student enters each answer on a course platform: the unit, the number, the tolerance, the choices.

Every export that grades (Moodle, QTI, PrairieLearn) and the PDF key agree on these
facts, so they live here once. A numeric answer is typed in an *entry unit* chosen
for its size (``2.94 ms``, not ``0.00294 s``); the value and the tolerance are
given in that unit, the tolerance absolute (``rel_tol`` times the value), as the
platforms want it. Platforms that convert units (Moodle) also get every unit
``symshard problems check`` reads, each with its multiplier relative to the entry
unit, so that ``2.94 ms`` and ``2940 µs`` both grade. A text answer whose common
mistakes are known becomes a multiple choice: the right value and the mistakes,
sorted so the right one is not always first.

Examples:
    >>> from symshard.problems import family, variant
    >>> a = variant(family("allgather-time"), 7).answer("time")
    >>> e = entry(a)
    >>> e.unit, number(e.value), number(e.tolerance)
    ('ms', '5.87203', '0.117441')
    >>> [(name, number(k)) for name, k in unit_multipliers(a)][:3]
    [('s', '0.001'), ('ms', '1'), ('µs', '1000')]
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..algebra.mathtext import as_expr
from ..algebra.units import unit_scales
from ..messages import fill
from .engine import Answer, Mistake, show_value

__all__ = [
    "Choice",
    "Entry",
    "choices",
    "entry",
    "entry_unit",
    "is_choice",
    "mistake_entry",
    "number",
    "prompt",
    "shown",
    "unit_multipliers",
    "word",
]

_ENTRY_UNITS = {
    "s": (("s", Fraction(1)), ("ms", Fraction(1, 10**3)), ("µs", Fraction(1, 10**6)), ("ns", Fraction(1, 10**9))),
    "B": (("GiB", Fraction(2**30)), ("MiB", Fraction(2**20)), ("KiB", Fraction(2**10)), ("B", Fraction(1))),
    "FLOP": (
        ("TFLOP", Fraction(10**12)),
        ("GFLOP", Fraction(10**9)),
        ("MFLOP", Fraction(10**6)),
        ("FLOP", Fraction(1)),
    ),
}

_WORDS = {
    "en": {
        "give": "Give {what}.",
        "in_unit": "{what}, in {unit}",
        "other_units": "(other units such as {units} are converted)",
        "choose": "Choose {what}.",
        "right": "Right: {value}.",
        "not_within": "Not within {tol} of the right value; see the worked solution.",
        "not_value": "Not the right value; see the worked solution.",
        "if_you_got": "If you got {value}: {feedback}",
        "part": "{n}({letter})",
        "exact": "exact",
    },
    "zh": {
        "give": "请给出{what}。",
        "in_unit": "{what}（单位：{unit}）",
        "other_units": "（也可以带其他单位作答，如 {units}，会自动换算）",
        "choose": "请选择{what}。",
        "right": "正确：{value}。",
        "not_within": "与正确值的偏差超过 {tol}，请对照详细解答。",
        "not_value": "这不是正确的数值，请对照详细解答。",
        "if_you_got": "如果你的答案是 {value}：{feedback}",
        "part": "{n}（{letter}）",
        "exact": "精确",
    },
}


def word(language: str, key: str, **values: object) -> str:
    """An export's own words around the problems' text, in ``language`` (English if it has none)."""
    return fill(_WORDS.get(language, _WORDS["en"])[key], **values)


def number(x: float | Fraction) -> str:
    """A number as platforms read it: integers whole, others to 6 significant figures, never an exponent.

    Examples:
        >>> number(2097152), number(0.000123456789), number(1.5e-9), number(Fraction(1, 3))
        ('2097152', '0.000123457', '0.0000000015', '0.333333')
    """
    if isinstance(x, Fraction) and x.denominator == 1:
        return str(x.numerator)
    value = float(x)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = format(Decimal(format(value, ".6g")), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def entry_unit(a: Answer) -> tuple[str, Fraction]:
    """The unit a student types the answer in, and its size in SI units (``('µs', Fraction(1, 10**6))``)."""
    table = _ENTRY_UNITS.get(a.unit)
    if not table:
        return "", Fraction(1)
    x = abs(a.number or 0.0) * (1 + 1e-9)  # 1 µs arrives as 0.99999... µs in binary floating point
    for unit, scale in table:
        if x >= scale:
            return unit, scale
    return table[-1]


@dataclass(frozen=True, slots=True)
class Entry:
    """A numeric answer as a student enters it: the unit, the value and the absolute tolerance in that unit."""

    unit: str
    scale: Fraction
    value: float
    tolerance: float


def entry(a: Answer) -> Entry:
    """The entry form of a numeric answer."""
    unit, scale = entry_unit(a)
    value = float(Fraction(a.number or 0.0) / scale)
    return Entry(unit, scale, value, abs(value) * a.rel_tol)


def mistake_entry(a: Answer, m: Mistake) -> Entry:
    """A mistake's value in the answer's entry unit, with the answer's relative tolerance around it."""
    unit, scale = entry_unit(a)
    value = float(Fraction(float(as_expr(m.value))) / scale)
    return Entry(unit, scale, value, abs(value) * a.rel_tol)


def unit_multipliers(a: Answer) -> list[tuple[str, Fraction]]:
    """Every unit ``symshard problems check`` reads for this answer, with Moodle's multiplier: how
    many of that unit make one entry unit (the entry unit's own is 1). Empty for a unitless answer."""
    unit, scale = entry_unit(a)
    if not unit:
        return []
    return [(name, scale / size) for name, size in unit_scales(a.unit).items()]


def prompt(a: Answer, language: str) -> str:
    """What the student is asked: the answer's label, with its entry unit."""
    unit, _ = entry_unit(a)
    return word(language, "in_unit", what=a.label, unit=unit) if unit else a.label


def is_choice(a: Answer) -> bool:
    """A text answer with known mistakes: asked as a multiple choice."""
    return a.unit == "text" and bool(a.mistakes)


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a multiple-choice answer."""

    text: str
    correct: bool
    feedback: str


def choices(a: Answer, language: str) -> list[Choice]:
    """The options of a multiple-choice answer, sorted by their text (the right one is not always first)."""
    options = [Choice(str(a.value), True, word(language, "right", value=a.show))]
    options += [Choice(str(m.value), False, m.feedback) for m in a.mistakes]
    return sorted(options, key=lambda c: (c.text.casefold(), c.text))


def shown(a: Answer, value: object) -> str:
    """A value of this answer's unit for people (a mistake's, say)."""
    return show_value(value, a.unit)

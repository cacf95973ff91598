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

import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..algebra.mathtext import as_expr
from ..algebra.units import unit_scales
from ..errors import SymshardError
from ..messages import fill
from ..notation.parser import parse_array
from .problem import Answer, Mistake, show_value
from .textforms import forms

__all__ = [
    "Choice",
    "Entry",
    "accepted",
    "choices",
    "entry",
    "entry_unit",
    "is_choice",
    "mistake_entry",
    "notation_tex",
    "number",
    "prompt",
    "shown",
    "text_markdown",
    "unit_multipliers",
    "value_markdown",
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
    """One option of a multiple-choice answer: its text as the family gives it, whether it is right, the
    feedback for choosing it (Markdown), and the option as it is shown (:attr:`markdown`)."""

    text: str
    correct: bool
    feedback: str

    @property
    def markdown(self) -> str:
        """The option to show, as Markdown: notation as math (see :func:`text_markdown`)."""
        return text_markdown(self.text)


def choices(a: Answer, language: str) -> list[Choice]:
    """The options of a multiple-choice answer, sorted by their text (the right one is not always first)."""
    options = [Choice(str(a.value), True, word(language, "right", value=value_markdown(a)))]
    options += [Choice(str(m.value), False, m.feedback) for m in a.mistakes]
    return sorted(options, key=lambda c: (c.text.casefold(), c.text))


def shown(a: Answer, value: object) -> str:
    """A value of this answer's unit for people (a mistake's, say)."""
    return show_value(value, a.unit)


def accepted(a: Answer, language: str) -> tuple[str, ...]:
    """Every way to type a text answer that means its value (see :mod:`~symshard.problems.textforms`), the
    value first: what platforms that take a list of right answers are given.

    Examples:
        >>> from symshard.problems import Answer
        >>> accepted(Answer("w", "1-D or 2-D?", "2-D", "text", 0), "en")
        ('2-D', '2D', '2 D')
    """
    return forms(a.value, a.label, language)


_COLLECTIVE = re.compile(
    r"(AllGather|ReduceScatter|AllReduce|AllToAll|CollectivePermute)_(\{[^{}]*\}|[A-Za-z]+)(?:\((.+)\))?\Z"
)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")


def notation_tex(text: str) -> str | None:
    r"""The LaTeX of a text answer written in the chapter's notation (an array, a collective such as
    ``ReduceScatter_{XY,D}`` or ``AllGather_X(A)``), or None for a word.

    Examples:
        >>> notation_tex("ReduceScatter_{XY,D}")
        '\\text{ReduceScatter}_{XY,D}'
        >>> notation_tex("y[B_X, E]{U_Y}")
        '\\mathbf{y}[B_{X}, E]\\{U_{Y}\\}'
        >>> notation_tex("compute") is None
        True
    """
    m = _COLLECTIVE.match(text.strip())
    if m:
        tex = rf"\text{{{m.group(1)}}}_{{{m.group(2).strip('{}')}}}"
        if m.group(3) is None:
            return tex
        operand = m.group(3).strip()
        inner = rf"\mathbf{{{operand}}}" if _NAME.match(operand) else notation_tex(operand)
        return None if inner is None else f"{tex}({inner})"
    if "[" not in text:
        return None
    try:
        return parse_array(text.strip()).latex()
    except (SymshardError, ValueError):
        return None


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|$~])")


def text_markdown(text: str) -> str:
    r"""A text value (an answer or an option) as Markdown to show: notation as ``$...$`` math, a word as
    itself with Markdown's special characters escaped.

    Examples:
        >>> text_markdown("ReduceScatter_{XY,D}"), text_markdown("2-D")
        ('$\\text{ReduceScatter}_{XY,D}$', '2-D')
    """
    tex = notation_tex(text)
    return f"${tex}$" if tex is not None else _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def value_markdown(a: Answer, value: object = None) -> str:
    """A value of this answer (its own by default) as Markdown to show: a text value as :func:`text_markdown`
    gives it (notation as math), a number with its unit."""
    shown_value = a.value if value is None else value
    return text_markdown(str(shown_value)) if a.unit == "text" else show_value(shown_value, a.unit)

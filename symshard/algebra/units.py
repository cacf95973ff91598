"""Numbers for people: seconds in µs or ms, bytes with binary units, FLOPs in GFLOP.

Formatting happens at the edge (the CLI, reports, problem text); the algebra
keeps exact SymPy values. Three significant figures unless asked otherwise.

Examples:
    >>> format_seconds(5.592405e-4), format_seconds(3e-6), format_seconds(2.5)
    ('559 µs', '3 µs', '2.5 s')
    >>> format_bytes(1048576), format_bytes(16384), format_bytes(100)
    ('1,048,576 B (1 MiB)', '16,384 B (16 KiB)', '100 B')
    >>> format_flops(2 * 1024**3)
    '2.15 GFLOP'
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

import sympy

from ..messages import say
from .mathtext import as_expr

__all__ = [
    "format_bytes",
    "format_flops",
    "format_number",
    "format_seconds",
    "format_seconds_expr",
    "json_value",
    "parse_quantity",
    "pretty",
    "sig",
    "unit_scales",
]


def sig(x: Any, digits: int = 3) -> str:
    """``x`` with ``digits`` significant figures, without trailing zeros (``'559'``, ``'2.18'``)."""
    x = float(x)
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def format_seconds(seconds: Any, digits: int = 3) -> str:
    """Seconds in the largest unit that keeps the number ≥ 1: s, ms, µs or ns."""
    x = float(f"{float(seconds):.{digits}g}")  # round first: 0.00099956 is 1 ms, not 1e3 µs
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(x) >= scale or unit == "ns":
            return f"{sig(x / scale, digits)} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def format_bytes(n: object, digits: int = 3) -> str:
    """Bytes exactly, with a binary unit beside them from 1 KiB up."""
    value = as_expr(n)
    exact = f"{int(value):,} B" if value.is_integer else f"{float(value):,.1f} B"
    x = float(value)
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if x >= 1024**power:
            return f"{exact} ({sig(x / 1024**power, digits)} {unit})"
    return exact


def format_flops(flops: Any, digits: int = 3) -> str:
    """FLOPs with a decimal prefix: FLOP, MFLOP, GFLOP, TFLOP, PFLOP."""
    x = float(f"{float(flops):.{digits}g}")
    for power, unit in ((15, "PFLOP"), (12, "TFLOP"), (9, "GFLOP"), (6, "MFLOP")):
        if abs(x) >= 10**power:
            return f"{sig(x / 10**power, digits)} {unit}"
    return f"{sig(x, digits)} FLOP"


def format_number(x: object, digits: int = 3) -> str:
    """An integer below a million with thousands separators, anything else to ``digits`` figures.

    Examples:
        >>> format_number(16384), format_number(4.5e10), format_number(sympy.Rational(1, 3))
        ('16,384', '4.5e10', '0.333')
    """
    value = as_expr(x)
    if value.is_Integer and abs(value) < 10**6:
        return f"{int(value):,}"
    if value.is_number:
        rounded = float(f"{float(value):.{digits}g}")
        if 10**digits <= abs(rounded) < 10**6:
            return f"{int(rounded):,}"  # 2188.89 -> 2,190 rather than 2.19e3
        return sig(rounded, digits)
    return str(value)


def format_seconds_expr(expr: object) -> str:
    """A time that may still hold symbols: numbers in seconds units, ``max(291 ns, 3·T_hop)``."""
    value = as_expr(expr)
    if value.is_number:
        return format_seconds(value)
    if isinstance(value, (sympy.Max, sympy.Min)):
        name = "max" if isinstance(value, sympy.Max) else "min"
        parts = sorted((format_seconds_expr(a) for a in value.args), key=lambda t: (not t[0].isdigit(), t))
        return f"{name}({', '.join(parts)})"
    fractions = {r: sympy.Float(r, 4) for r in value.atoms(sympy.Rational) if not r.is_Integer}
    return pretty(value.xreplace(fractions))


def json_value(x: object) -> object:
    """A JSON-ready value: int for exact integers, float for other numbers, text for expressions."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    value = as_expr(x)
    if value.is_Integer:
        return int(value)
    if value.is_number:
        return float(value)
    return str(value)


def pretty(expr: object) -> str:
    """An expression for a terminal: ``4·I·J/(W_hbm·|X|·|Y|)``, ``max(...)`` in lower case."""
    text = sympy.sstr(as_expr(expr))
    return text.replace("**", "^").replace("*", "·").replace("Max(", "max(").replace("Min(", "min(")


_SCALES: dict[str, dict[str, Fraction]] = {
    "s": {"s": Fraction(1), "ms": Fraction(1, 10**3), "µs": Fraction(1, 10**6), "μs": Fraction(1, 10**6),
          "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9)},
    "B": {"B": Fraction(1), "KiB": Fraction(1024), "MiB": Fraction(1024**2), "GiB": Fraction(1024**3),
          "TiB": Fraction(1024**4), "kB": Fraction(10**3), "KB": Fraction(10**3), "MB": Fraction(10**6),
          "GB": Fraction(10**9), "TB": Fraction(10**12)},
    "FLOP": {"FLOP": Fraction(1), "kFLOP": Fraction(10**3), "MFLOP": Fraction(10**6), "GFLOP": Fraction(10**9),
             "TFLOP": Fraction(10**12), "PFLOP": Fraction(10**15)},
}  # fmt: skip
_QUANTITY = re.compile(r"\s*([-+]?[0-9][0-9,_]*(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?(?:\s*/\s*[0-9]+)?)\s*([A-Za-zµμ]*)\s*")


def unit_scales(unit: str) -> dict[str, Fraction]:
    """The units :func:`parse_quantity` reads for values of ``unit``, each with its size in ``unit``.

    Examples:
        >>> unit_scales("s")["ms"], unit_scales("count")
        (Fraction(1, 1000), {})
    """
    return dict(_SCALES.get(unit, {}))


def parse_quantity(text: str | float | int | Fraction, unit: str) -> Fraction:
    """A value typed by a person, in SI units: ``'186 µs'`` or ``'1.86e-4'`` for seconds, ``'32 MiB'`` for bytes.

    Accepts the units this module prints (s, ms, µs or us, ns; B, KiB ... TiB and
    decimal kB ... TB; FLOP, MFLOP ... PFLOP), thousands separators, exponents and
    fractions such as ``1/4``, and bytes as :func:`format_bytes` prints them. A bare
    number is taken to be in ``unit`` already.
    ``FLOPs`` reads as ``FLOP``.

    Raises:
        ValueError: the text is not a number, or its unit does not measure ``unit``.

    Examples:
        >>> parse_quantity("186 µs", "s"), parse_quantity("32 MiB", "B"), parse_quantity("1/4", "ratio")
        (Fraction(93, 500000), Fraction(33554432, 1), Fraction(1, 4))
        >>> float(parse_quantity("8.59 GFLOPs", "FLOP"))
        8590000000.0
    """
    if isinstance(text, bool):
        raise ValueError(say("expected a number, got {value}", value=repr(text)))
    if isinstance(text, (int, Fraction)):
        return Fraction(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise ValueError(say("{value} is not a finite number", value=repr(text)))
        return Fraction(repr(text))
    match = _QUANTITY.fullmatch(re.sub(r"\s*\([^()]*\)\s*$", "", str(text)))  # '16,384 B (16 KiB)' as printed
    if not match:
        raise ValueError(say("'{text}' is not a number with a unit, such as 186 µs, 32 MiB or 1/4", text=str(text)))
    number, suffix = match.groups()
    exponent = re.search(r"[eE]([-+]?[0-9]+)", number)
    if (exponent and abs(int(exponent.group(1))) > 400) or len(number) > 400:
        raise ValueError(
            say(
                "'{text}' is out of range: numbers go up to {high} and down to {low}",
                text=str(text),
                high="1e400",
                low="1e-400",
            )
        )
    try:
        value = Fraction(re.sub(r"[\s,_]", "", number))
    except (ValueError, ZeroDivisionError):
        raise ValueError(say("'{text}' is not a number, such as 186 µs, 32 MiB or 1/4", text=str(text))) from None
    if suffix.endswith("FLOPs"):
        suffix = suffix[:-1]
    if not suffix:
        return value
    scales = _SCALES.get(unit, {})
    if suffix not in scales:
        if not scales:
            raise ValueError(
                say(
                    "'{text}' has the unit '{suffix}', but a {unit} has no units: type the bare number",
                    text=str(text),
                    suffix=suffix,
                    unit=unit,
                )
            )
        raise ValueError(
            say(
                "'{text}' has the unit '{suffix}', which does not measure {unit} (units: {units})",
                text=str(text),
                suffix=suffix,
                unit=unit,
                units=", ".join(scales),
            )
        )
    return value * scales[suffix]

"""The planner's raw costs: exact Python numbers on the fast path, SymPy expressions otherwise.

The planner costs thousands of strategies; with SymPy alone that would take seconds. When every size
and constant is a number it works in Python ``int`` and ``Fraction`` instead (exact, and many times
faster), and in SymPy only when something is symbolic. :data:`Value` names such a raw cost; the
helpers here convert and divide raw costs without leaving the fast path.

This is the bottom of the planner's modules in :mod:`symshard.planning`: :mod:`.strategies` shows raw
costs as SymPy, :mod:`.costenv` computes them, and every module above passes them around.

Examples:
    >>> from fractions import Fraction
    >>> sym(Fraction(3, 4)), exact_ratio(12, 4), exact_ratio(3, 4)
    (3/4, 3, Fraction(3, 4))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import sympy

from ..algebra.mathtext import as_expr

__all__ = ["Value", "as_exact", "exact_ratio", "is_number", "sym"]


Value = Any
"""A raw cost: an ``int`` or ``Fraction`` on the fast numeric path, a SymPy expression otherwise."""


def as_exact(value: sympy.Expr) -> int | Fraction:
    """A SymPy rational as a Python int (when whole) or Fraction: the fast, exact numbers."""
    p, q = int(value.p), int(value.q)
    return p if q == 1 else Fraction(p, q)


def sym(value: Value) -> sympy.Expr:
    """A raw planner value (Fraction, int or SymPy) as a SymPy expression."""
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return as_expr(value)


def _fast(value: Value) -> bool:
    return isinstance(value, (int, Fraction))


def exact_ratio(num, den):
    """``num / den`` exactly: an int when it divides, a Fraction for ints, SymPy otherwise.

    Examples:
        >>> exact_ratio(12, 4), exact_ratio(3, 4)
        (3, Fraction(3, 4))
        >>> from symshard.algebra.symbols import C
        >>> exact_ratio(2, C)
        2/C
    """
    if isinstance(num, int) and isinstance(den, int):
        return num // den if num % den == 0 else Fraction(num, den)
    return num / den


def is_number(value: Value) -> bool:
    """Whether a raw value is a number (an int, a Fraction or a SymPy number), not a formula."""
    return isinstance(value, (int, Fraction)) or (isinstance(value, sympy.Basic) and value.is_number)


def _peak(values: Sequence):
    """The largest of several byte counts; symbolic sums of positive terms are pruned by
    dominance first (a sum whose every term another sum also has, no smaller, is dropped),
    which keeps SymPy's pairwise comparisons out of the planner's hot path."""
    if all(isinstance(v, (int, Fraction)) for v in values):
        return max(values)
    terms = []
    for v in dict.fromkeys(sym(v) for v in values):
        terms.append((v, sympy.expand(v).as_coefficients_dict()))
    kept = []
    for i, (v, t) in enumerate(terms):
        dominated = any(
            j != i and all(u.get(k, 0) >= c for k, c in t.items()) and (u != t or j < i)
            for j, (_, u) in enumerate(terms)
        )
        if not dominated:
            kept.append(v)
    return kept[0] if len(kept) == 1 else sympy.Max(*kept, evaluate=False)

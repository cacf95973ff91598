"""Sums of monomials with exact rational coefficients: the terms every cost is a sum of.

A matmul strategy's FLOPs are one monomial (``2·B·D·F/(|X|·|Y|)``), its bytes a monomial per array,
and a collective's time a sum of them. A :class:`Signomial` is such a sum, with exact rational
coefficients of either sign (``V·(|X| - 1)/(|X|·w)`` has a negative term): added, multiplied and
divided without SymPy (hundreds of times faster than its general algebra), and valued at a point in
floats or exactly. A :data:`Monomial` is a term without its coefficient: the powers of its atoms, in
a fixed order.

It is the bottom of symshard's exact sums in :mod:`symshard.algebra`: :mod:`.domains` proves the
sign of a signomial, :mod:`.monomials` takes the largest of several (the shape every cost has), and
:mod:`.comparisons` compares those.

Examples:
    >>> from symshard.algebra.symbols import axis, dim
    >>> B, X = Signomial.atom(dim("B")), Signomial.atom(axis("X"))
    >>> ((B + 2) * 3).expr(), (B / X).monomial[1] == mono_mul(B.monomial[1], mono_inv(X.monomial[1]))
    (3*B + 6, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import sympy

__all__ = ["Monomial", "Number", "Signomial", "as_number", "mono_inv", "mono_mul"]

Number = int | Fraction
Monomial = tuple[tuple[sympy.Expr, int], ...]
"""``((atom, exponent), ...)`` in a fixed order of atoms, exponents never zero; ``()`` is 1."""

_RANK: dict[sympy.Expr, int] = {}


def _rank(atom: sympy.Expr) -> int:
    found = _RANK.get(atom)
    if found is None:
        found = _RANK[atom] = len(_RANK)
    return found


def mono_mul(a: Monomial, b: Monomial) -> Monomial:
    """The product of two monomials (exponents of one atom add up; an atom whose exponent becomes 0 goes)."""
    if not a:
        return b
    if not b:
        return a
    powers = dict(a)
    for atom, e in b:
        powers[atom] = powers.get(atom, 0) + e
    return tuple(sorted(((k, v) for k, v in powers.items() if v), key=lambda kv: _rank(kv[0])))


def mono_inv(a: Monomial) -> Monomial:
    """``1/a``: every exponent negated."""
    return tuple((k, -v) for k, v in a)


def as_number(value: object) -> Number:
    """An exact number as a :data:`Number`: an int, or a Fraction that is not a whole number.

    Raises:
        TypeError: ``value`` is neither an int nor a Fraction.
    """
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else value
    if isinstance(value, int):
        return value
    raise TypeError(f"not an exact number: {value!r}")


class Signomial:
    """A sum of monomials with exact rational coefficients (of either sign). Immutable.

    Examples:
        >>> from symshard.algebra.monomials import from_expr
        >>> from symshard.algebra.symbols import dim
        >>> s = from_expr(dim("B") + 2) * 3
        >>> s.expr(), s.value({dim("B"): 1.0})
        (3*B + 6, 9.0)
    """

    __slots__ = ("_compiled", "_hash", "_positive", "terms")

    terms: dict[Monomial, Number]

    def __init__(self, terms: Mapping[Monomial, Number]) -> None:
        self.terms = {m: c for m, c in terms.items() if c}
        self._hash: int | None = None
        self._compiled: list | None = None
        self._positive: bool | None = None

    @classmethod
    def constant(cls, value: Number) -> Signomial:
        return cls({(): as_number(value)} if value else {})

    @classmethod
    def atom(cls, atom: sympy.Expr, exponent: int = 1) -> Signomial:
        _rank(atom)
        return cls({((atom, exponent),): 1})

    # -- structure
    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, Fraction)):
            other = Signomial.constant(other)
        return isinstance(other, Signomial) and self.terms == other.terms

    def __repr__(self) -> str:
        return f"Signomial({self.expr()})"

    @property
    def is_zero(self) -> bool:
        return not self.terms

    @property
    def positive(self) -> bool:
        """Whether every coefficient is positive."""
        found = self._positive
        if found is None:
            found = self._positive = all(c > 0 for c in self.terms.values())
        return found

    @property
    def monomial(self) -> tuple[Number, Monomial] | None:
        """``(coefficient, monomial)`` when this is one term, else None."""
        if len(self.terms) == 1:
            ((m, c),) = self.terms.items()
            return c, m
        return None

    @property
    def atoms(self) -> set[sympy.Expr]:
        return {a for m in self.terms for a, _ in m}

    # -- arithmetic
    def __add__(self, other: object) -> Signomial:
        if isinstance(other, (int, Fraction)):
            other = Signomial.constant(other)
        if not isinstance(other, Signomial):
            return NotImplemented
        if not other.terms:
            return self
        if not self.terms:
            return other
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) + c
        return Signomial(out)

    __radd__ = __add__

    def __neg__(self) -> Signomial:
        return Signomial({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: object) -> Signomial:
        if isinstance(other, (int, Fraction)):
            other = Signomial.constant(other)
        if not isinstance(other, Signomial):
            return NotImplemented
        return self + (-other)

    def __mul__(self, other: object) -> Signomial:
        if isinstance(other, (int, Fraction)):
            if other == 1:
                return self
            return Signomial({m: as_number(c * other) for m, c in self.terms.items()})
        if not isinstance(other, Signomial):
            return NotImplemented
        out: dict[Monomial, Number] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = mono_mul(m1, m2)
                out[m] = as_number(out.get(m, 0) + c1 * c2)
        return Signomial(out)

    __rmul__ = __mul__

    def inverse(self) -> Signomial:
        """``1/self`` for a single term; for a sum, the sum as an opaque positive atom to the power -1."""
        one = self.monomial
        if one is not None:
            c, m = one
            return Signomial({mono_inv(m): as_number(Fraction(1) / c)})
        return Signomial.atom(self.expr(), -1)

    def __truediv__(self, other: object) -> Signomial:
        if isinstance(other, (int, Fraction)):
            return self * (Fraction(1) / other)
        if not isinstance(other, Signomial):
            return NotImplemented
        return self * other.inverse()

    def over(self, monomial: Monomial) -> Signomial:
        """``self`` divided by ``monomial`` (each term's powers less its own, as ``self / monomial`` gives, but
        without a general product: inequalities divide out the factor their terms share this way).

        Examples:
            >>> from symshard.algebra.symbols import dim
            >>> B, D = Signomial.atom(dim("B")), Signomial.atom(dim("D"))
            >>> (B * D + B * B).over(B.monomial[1]).expr()
            B + D
        """
        shift = dict(monomial)
        out: dict[Monomial, Number] = {}
        for m, c in self.terms.items():
            powers = dict(m)
            for a, e in shift.items():
                powers[a] = powers.get(a, 0) - e
            key = tuple(sorted(((a, e) for a, e in powers.items() if e), key=lambda ae: _rank(ae[0])))
            out[key] = c
        return Signomial(out)

    def substitute(self, atom: sympy.Expr, value: Signomial) -> Signomial:
        """``self`` with ``atom`` replaced by ``value``, a single term (a monomial times a number)."""
        one = value.monomial
        if one is None:
            raise ValueError("only a single term can replace an atom")
        c, m = one
        out: dict[Monomial, Number] = {}
        for mono, coef in self.terms.items():
            e = next((k for a, k in mono if a == atom), 0)
            if not e:
                out[mono] = as_number(out.get(mono, 0) + coef)
                continue
            rest = tuple((a, k) for a, k in mono if a != atom)
            new = mono_mul(rest, tuple((a, k * e) for a, k in m))
            out[new] = as_number(out.get(new, 0) + coef * Fraction(c) ** e)
        return Signomial(out)

    def power_of(self, atom: sympy.Expr) -> dict[int, Signomial]:
        """The signomial as a polynomial in ``atom``: ``{exponent: coefficient signomial}``."""
        out: dict[int, dict[Monomial, Number]] = {}
        for m, c in self.terms.items():
            e = 0
            rest = []
            for a, k in m:
                if a == atom:
                    e = k
                else:
                    rest.append((a, k))
            out.setdefault(e, {})[tuple(rest)] = c
        return {e: Signomial(t) for e, t in out.items()}

    # -- values
    def value(self, point: Mapping[sympy.Expr, float]) -> float:
        """The value at ``point`` (every atom given as a float)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = [(float(c), m) for m, c in self.terms.items()]
        total = 0.0
        for c, m in compiled:
            for a, e in m:
                c *= point[a] ** e
            total += c
        return total

    def exact(self, point: Mapping[sympy.Expr, Number]) -> Number:
        """The exact value at ``point`` (every atom given as an int or Fraction)."""
        total: Number = 0
        for m, c in self.terms.items():
            v: Number = c
            for a, e in m:
                v = v * (Fraction(point[a]) ** e)
            total = total + v
        return as_number(Fraction(total))

    def expr(self) -> sympy.Expr:
        """The SymPy expression (for printing)."""
        out = []
        for m, c in self.terms.items():
            coef = sympy.Rational(c.numerator, c.denominator) if isinstance(c, Fraction) else sympy.Integer(c)
            out.append(sympy.Mul(coef, *[a**e for a, e in m]))
        return sympy.Add(*out)

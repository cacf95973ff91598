"""Costs as exact sums of monomials: the shape every cost has, and its arithmetic.

A matmul strategy's FLOPs are one monomial (``2·B·D·F/(|X|·|Y|)``), its bytes a monomial
per array, and a collective's time a sum of monomials, or the largest of a few sums when a
latency term or several links are involved (``max(T_hop·|X|/2, 2·D·F/W_ici)``). Everything
the planner adds up keeps that shape: a :class:`~symshard.algebra.signomials.Signomial` (a sum of
monomials with exact rational coefficients, of either sign) and a :class:`Maximum` (the largest of
several signomials), with :class:`Lazy` keeping sums of maxima as a tree until they are compared.
Working on that structure directly is hundreds of times faster than SymPy's general algebra, and it
lets two costs be compared *for every value of their symbols* term by term
(:mod:`symshard.algebra.comparisons`, on the proofs of :mod:`symshard.algebra.domains`).

Anything that is not a product of powers of symbols (``floor(|X|/2)``, ``1/(2·w + w·|X|/(|X| - 1))``)
becomes an *atom*, a positive quantity with no known bound, so it only cancels against itself.

It sits in :mod:`symshard.algebra` above :mod:`.signomials` and :mod:`.domains`, and below
:mod:`.comparisons`.

Examples:
    >>> import sympy
    >>> from symshard.algebra.symbols import axis, dim, W_ici
    >>> D, F, X = dim("D"), dim("F"), axis("X")
    >>> from_expr(sympy.Max(2 * D * F / W_ici, D * F / W_ici + D * F / (W_ici * X))).reduced(Domain.of([X])).expr()
    2*D*F/W_ici
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from .domains import Domain, nonnegative
from .mathtext import as_expr
from .signomials import Number, Signomial, as_number

__all__ = ["Lazy", "Maximum", "covers", "from_expr"]


@dataclass(frozen=True, slots=True)
class Maximum:
    """The largest of several signomials (one of them when there is a single part).

    Sums and products distribute over the maximum (``max(a, b) + c = max(a + c, b + c)``;
    costs are positive, so ``max(a, b)·m = max(a·m, b·m)`` for a positive ``m``).
    """

    parts: tuple[Signomial, ...]

    @classmethod
    def of(cls, parts: Iterable[Signomial | Number]) -> Maximum:
        seen = list(dict.fromkeys(p if isinstance(p, Signomial) else Signomial.constant(p) for p in parts))
        return cls(tuple(_drop_covered(seen)))

    def __add__(self, other: object) -> Maximum | Lazy:
        if isinstance(other, (int, Fraction, Signomial)):
            if isinstance(other, (int, Fraction)) and other == 0:
                return self
            other = Maximum((other if isinstance(other, Signomial) else Signomial.constant(other),))
        if isinstance(other, Lazy):
            return Lazy("sum", (self, *other.terms)) if other.kind == "sum" else Lazy("sum", (self, other))
        if not isinstance(other, Maximum):
            return NotImplemented
        if len(self.parts) == 1 and len(other.parts) == 1:
            return Maximum((self.parts[0] + other.parts[0],))
        return Lazy("sum", (self, other))  # expanded only when compared exactly

    def add(self, other: Maximum) -> Maximum:
        """``self + other`` expanded now: the maximum of the sums of their parts."""
        if len(self.parts) == 1 and len(other.parts) == 1:
            return Maximum((self.parts[0] + other.parts[0],))
        return Maximum.of(a + b for a in self.parts for b in other.parts)

    __radd__ = __add__

    def __mul__(self, other: object) -> Maximum:
        if isinstance(other, (int, Fraction, Signomial)):
            if len(self.parts) == 1:
                return Maximum((self.parts[0] * other,))
            return Maximum.of(p * other for p in self.parts)
        if not isinstance(other, Maximum):
            return NotImplemented
        if len(self.parts) == 1 and len(other.parts) == 1:
            return Maximum((self.parts[0] * other.parts[0],))
        return Maximum.of(a * b for a in self.parts for b in other.parts)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Maximum:
        if isinstance(other, Maximum) and len(other.parts) == 1:
            other = other.parts[0]
        if isinstance(other, (int, Fraction, Signomial)):
            if len(self.parts) == 1:
                return Maximum((self.parts[0] / other,))
            return Maximum.of(p / other for p in self.parts)
        return NotImplemented

    def substitute(self, atom: sympy.Expr, value: Maximum) -> Maximum:
        """``self`` with ``atom`` replaced by ``value``, a single term."""
        (one,) = value.parts
        return Maximum.of(p.substitute(atom, one) for p in self.parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, Fraction)):
            other = Maximum((Signomial.constant(other),))
        return isinstance(other, Maximum) and set(self.parts) == set(other.parts)

    def __hash__(self) -> int:
        return hash(frozenset(self.parts))

    @staticmethod
    def largest(values: Sequence[Maximum | Signomial | Lazy | Number]) -> Maximum | Lazy:
        """The largest of several costs."""
        if any(isinstance(v, Lazy) for v in values):
            return Lazy("max", tuple(v if isinstance(v, (Lazy, Maximum)) else from_expr(v) for v in values))
        parts: list[Signomial] = []
        for v in values:
            if isinstance(v, Maximum):
                parts.extend(v.parts)
            elif isinstance(v, Signomial):
                parts.append(v)
            elif isinstance(v, (int, Fraction)) and v:
                parts.append(Signomial.constant(v))
        return Maximum.of(parts) if parts else ZERO

    @property
    def is_zero(self) -> bool:
        return all(p.is_zero for p in self.parts)

    @property
    def atoms(self) -> set[sympy.Expr]:
        return set().union(*(p.atoms for p in self.parts)) if self.parts else set()

    def value(self, point: Mapping[sympy.Expr, float]) -> float:
        return max(p.value(point) for p in self.parts) if self.parts else 0.0

    def exactly(self) -> Maximum:
        """Itself (a :class:`Lazy` expands here)."""
        return self

    def exact(self, point: Mapping[sympy.Expr, Number]) -> Number:
        return max(p.exact(point) for p in self.parts) if self.parts else 0

    def reduced(self, domain: Domain) -> Maximum:
        """The same maximum without the parts another part is at least everywhere on ``domain``."""
        parts = self.parts
        kept: list[Signomial] = []
        for i, p in enumerate(parts):
            # dropped when another part is at least p everywhere; of two equal parts the first stays
            if any(
                j != i and nonnegative(q - p, domain) and (j < i or not nonnegative(p - q, domain))
                for j, q in enumerate(parts)
            ):
                continue
            kept.append(p)
        return Maximum(tuple(kept))

    def expr(self) -> sympy.Expr:
        if not self.parts:
            return sympy.Integer(0)
        if len(self.parts) == 1:
            return self.parts[0].expr()
        return sympy.Max(*[p.expr() for p in self.parts], evaluate=False)


ZERO = Maximum((Signomial({}),))


class Lazy:
    """Sums and maxima of :class:`Maximum` costs, kept as a tree: adding up maxima multiplies their parts
    (``max(a, b) + max(c, d)`` has four), so a sum is expanded only when it is compared exactly
    (:meth:`exactly`); its value at a point needs no expansion.

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> a, b, c = (from_expr(dim(n)) for n in "ABC")
        >>> total = Maximum.largest([a, b]) + Maximum.largest([b, c])
        >>> type(total).__name__, len(total.exactly().parts)
        ('Lazy', 4)
    """

    __slots__ = ("_exact", "kind", "terms")

    def __init__(self, kind: str, terms: tuple[Maximum | Lazy, ...]) -> None:
        self.kind = kind  # "sum" or "max"
        self.terms = terms
        self._exact: Maximum | None = None

    def __add__(self, other: object) -> Lazy:
        if isinstance(other, (int, Fraction)):
            if other == 0:
                return self
            other = Maximum((Signomial.constant(other),))
        if isinstance(other, Signomial):
            other = Maximum((other,))
        if not isinstance(other, (Maximum, Lazy)):
            return NotImplemented
        mine = self.terms if self.kind == "sum" else (self,)
        theirs = other.terms if isinstance(other, Lazy) and other.kind == "sum" else (other,)
        return Lazy("sum", (*mine, *theirs))

    __radd__ = __add__

    @property
    def atoms(self) -> set[sympy.Expr]:
        return set().union(*(t.atoms for t in self.terms))

    @property
    def is_zero(self) -> bool:
        return all(t.is_zero for t in self.terms)

    def value(self, point: Mapping[sympy.Expr, float]) -> float:
        values = [t.value(point) for t in self.terms]
        return sum(values) if self.kind == "sum" else max(values)

    def exact(self, point: Mapping[sympy.Expr, Number]) -> Number:
        values = [t.exact(point) for t in self.terms]
        return sum(values) if self.kind == "sum" else max(values)

    def exactly(self) -> Maximum:
        """The :class:`Maximum` this tree stands for, expanded (and kept)."""
        if self._exact is None:
            expanded = [t.exactly() for t in self.terms]
            if self.kind == "max":
                out = Maximum.of(p for e in expanded for p in e.parts)
            else:
                out = expanded[0]
                for t in expanded[1:]:
                    out = out.add(t)
            self._exact = out
        return self._exact

    def expr(self) -> sympy.Expr:
        return self.exactly().expr()


def covers(big: Signomial, small: Signomial) -> bool:
    """``big ≥ small`` everywhere, seen without any assumption: ``big - small`` has no negative coefficient."""
    b, s = big.terms, small.terms
    if len(s) > len(b) or not s.keys() <= b.keys():
        return False  # a positive term of small that big lacks (costs are positive, so all of them are)
    for m, c in s.items():
        if b[m] < c:
            return False
    return big.positive or all(c >= 0 or m in s for m, c in b.items())


def _drop_covered(parts: list[Signomial]) -> list[Signomial]:
    """Drop parts another part covers (see :func:`covers`): keeps maxima short as they are added up."""
    if len(parts) < 2:
        return parts
    kept: list[Signomial] = []
    for i, p in enumerate(parts):
        if any(j != i and covers(q, p) and (not covers(p, q) or j < i) for j, q in enumerate(parts)):
            continue
        kept.append(p)
    return kept


# -- conversion from SymPy ---------------------------------------------------------------------


def from_expr(expr: object) -> Maximum:
    """A cost written as a SymPy expression (or a number), as a :class:`Maximum` of signomials.

    ``Max`` becomes the maximum; sums and products distribute over it; a power of a sum, a
    function such as ``floor`` or anything else not a product of powers becomes an atom.
    """
    if isinstance(expr, Lazy):
        return expr.exactly()
    if isinstance(expr, Maximum):
        return expr
    if isinstance(expr, Signomial):
        return Maximum((expr,))
    if isinstance(expr, (int, Fraction)):
        return Maximum((Signomial.constant(expr),))
    cached = _CONVERTED.get(expr)
    if cached is None:
        if len(_CONVERTED) > 65536:
            _CONVERTED.clear()
        cached = _CONVERTED[expr] = _convert(as_expr(expr))
    return cached


_CONVERTED: dict[object, Maximum] = {}


def _convert(e: sympy.Basic) -> Maximum:
    if e.is_Number:
        if e.is_Rational:
            return Maximum((Signomial.constant(Fraction(int(e.p), int(e.q))),))
        return Maximum((Signomial.constant(Fraction(str(e))),))
    if e.is_Symbol:
        return Maximum((Signomial.atom(e),))
    if isinstance(e, sympy.Max):
        return Maximum.of(p for a in e.args for p in _convert(a).parts)
    if e.is_Add:
        total: Maximum = Maximum((Signomial({}),))
        for a in e.args:
            total = total.add(_convert(a))
        return total
    if e.is_Mul:
        product = Maximum((Signomial.constant(1),))
        for a in e.args:
            product = product * _convert(a)
        return product
    if e.is_Pow and e.exp.is_Integer:
        n = int(e.exp)
        base = _convert(e.base)
        if len(base.parts) == 1 and base.parts[0].monomial is not None:
            c, m = base.parts[0].monomial  # type: ignore[misc]
            return Maximum((Signomial({tuple((a, k * n) for a, k in m): as_number(Fraction(c) ** n)}),))
        if n > 0:
            out = Maximum((Signomial.constant(1),))
            for _ in range(n):
                out = out * base
            return out
        return Maximum((Signomial.atom(e.base, n),))
    return Maximum((Signomial.atom(e),))

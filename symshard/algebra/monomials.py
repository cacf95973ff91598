"""Exact sums of monomials: the shape every cost has, and the comparisons dominance and crossovers need.

A matmul strategy's FLOPs are one monomial (``2·B·D·F/(|X|·|Y|)``), its bytes a monomial
per array, and a collective's time a sum of monomials, or the largest of a few sums when a
latency term or several links are involved (``max(T_hop·|X|/2, 2·D·F/W_ici)``). Everything
the planner adds up keeps that shape: a :class:`Signomial` (a sum of monomials with exact
rational coefficients, of either sign: ``V·(|X| - 1)/(|X|·w)`` has a negative term) and a
:class:`Maximum` (the largest of several signomials). Working on that structure directly
is hundreds of times faster than SymPy's general algebra, and it lets two costs be compared
*for every value of their symbols* term by term.

**How a comparison is decided.** ``p ≤ q`` for every point of a :class:`Domain` (all symbols
positive; mesh-axis sizes at least 2; a dim at least the devices that shard it) is proved,
never guessed: ``q - p`` is written as one signomial and each of its negative terms ``-a·μ``
must be paid for by positive terms ``b·ν`` whose ratio ``ν/μ`` has a positive lower bound
``L`` on the domain (``|X|`` is at least 2, ``D/|X|`` at least 1 when X shards D), with
``Σ b·L ≥ a`` over the positive terms it uses, each positive term spent once. A monomial
ratio has a positive lower bound only when every symbol it leaves unbounded below (a
constant such as ``W_ici``, a dim or axis in the denominator with nothing to cancel it)
is absent, so the test is sound: it never claims ``p ≤ q`` where it fails. It can miss a
true inequality whose proof needs more than this term matching; then a caller keeps a
strategy it could have dropped, which costs time, never correctness. For maxima,
``max(p_i) ≤ max(q_j)`` is proved by finding, for every ``p_i``, one ``q_j`` above it.

Anything that is not a product of powers of symbols (``floor(|X|/2)``, ``1/(2·w + w·|X|/(|X| - 1))``)
becomes an *atom*, a positive quantity with no known bound, so it only cancels against itself.

Examples:
    >>> import sympy
    >>> from symshard.algebra.symbols import axis, dim, W_ici
    >>> B, D, F, X = dim("B"), dim("D"), dim("F"), axis("X")
    >>> gather = from_expr(2 * D * F / W_ici)
    >>> reduce = from_expr(4 * B * F / W_ici)
    >>> less_equal(from_expr(2 * B * D * F / X), from_expr(2 * B * D * F), Domain.of([X]))
    True
    >>> less_equal(gather, reduce, Domain.of([X])), less_equal(reduce, gather, Domain.of([X]))
    (False, False)
    >>> from_expr(sympy.Max(2 * D * F / W_ici, D * F / W_ici + D * F / (W_ici * X))).reduced(Domain.of([X])).expr()
    2*D*F/W_ici
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy

from .mathtext import as_expr
from .symbols import is_axis_symbol

__all__ = ["Domain", "Lazy", "Maximum", "Signomial", "from_expr", "less_equal", "nonnegative", "values_at"]

Number = int | Fraction
Monomial = tuple[tuple[sympy.Expr, int], ...]
"""``((atom, exponent), ...)`` in a fixed order of atoms, exponents never zero; ``()`` is 1."""

_RANK: dict[sympy.Expr, int] = {}


def _rank(atom: sympy.Expr) -> int:
    found = _RANK.get(atom)
    if found is None:
        found = _RANK[atom] = len(_RANK)
    return found


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers = dict(a)
    for atom, e in b:
        powers[atom] = powers.get(atom, 0) + e
    return tuple(sorted(((k, v) for k, v in powers.items() if v), key=lambda kv: _rank(kv[0])))


def _mono_inv(a: Monomial) -> Monomial:
    return tuple((k, -v) for k, v in a)


def _number(value: object) -> Number:
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else value
    if isinstance(value, int):
        return value
    raise TypeError(f"not an exact number: {value!r}")


class Signomial:
    """A sum of monomials with exact rational coefficients (of either sign). Immutable.

    Examples:
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
        return cls({(): _number(value)} if value else {})

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
            return Signomial({m: _number(c * other) for m, c in self.terms.items()})
        if not isinstance(other, Signomial):
            return NotImplemented
        out: dict[Monomial, Number] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = _mono_mul(m1, m2)
                out[m] = _number(out.get(m, 0) + c1 * c2)
        return Signomial(out)

    __rmul__ = __mul__

    def inverse(self) -> Signomial:
        """``1/self`` for a single term; for a sum, the sum as an opaque positive atom to the power -1."""
        one = self.monomial
        if one is not None:
            c, m = one
            return Signomial({_mono_inv(m): _number(Fraction(1) / c)})
        return Signomial.atom(self.expr(), -1)

    def __truediv__(self, other: object) -> Signomial:
        if isinstance(other, (int, Fraction)):
            return self * (Fraction(1) / other)
        if not isinstance(other, Signomial):
            return NotImplemented
        return self * other.inverse()

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
                out[mono] = _number(out.get(mono, 0) + coef)
                continue
            rest = tuple((a, k) for a, k in mono if a != atom)
            new = _mono_mul(rest, tuple((a, k * e) for a, k in m))
            out[new] = _number(out.get(new, 0) + coef * Fraction(c) ** e)
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
        return _number(Fraction(total))

    def expr(self) -> sympy.Expr:
        """The SymPy expression (for printing)."""
        out = []
        for m, c in self.terms.items():
            coef = sympy.Rational(c.numerator, c.denominator) if isinstance(c, Fraction) else sympy.Integer(c)
            out.append(sympy.Mul(coef, *[a**e for a, e in m]))
        return sympy.Add(*out)


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


def _covers(big: Signomial, small: Signomial) -> bool:
    """``big ≥ small`` everywhere, seen without any assumption: ``big - small`` has no negative coefficient."""
    b, s = big.terms, small.terms
    if not s.keys() <= b.keys():
        return False  # a positive term of small that big lacks (costs are positive, so all of them are)
    for m, c in s.items():
        if b[m] < c:
            return False
    return big.positive or all(c >= 0 or m in s for m, c in b.items())


def _drop_covered(parts: list[Signomial]) -> list[Signomial]:
    """Drop parts another part covers (see :func:`_covers`): keeps maxima short as they are added up."""
    if len(parts) < 2:
        return parts
    kept: list[Signomial] = []
    for i, p in enumerate(parts):
        if any(j != i and _covers(q, p) and (not _covers(p, q) or j < i) for j, q in enumerate(parts)):
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
            return Maximum((Signomial({tuple((a, k * n) for a, k in m): _number(Fraction(c) ** n)}),))
        if n > 0:
            out = Maximum((Signomial.constant(1),))
            for _ in range(n):
                out = out * base
            return out
        return Maximum((Signomial.atom(e.base, n),))
    return Maximum((Signomial.atom(e),))


# -- the domain and the comparisons ---------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Domain:
    """Where costs are compared: every symbol positive, each mesh-axis size at least 2, and each
    dim at least the product of the axes that shard it (``groups``: dim symbol to sets of axis
    symbols whose product it is a multiple of). A numeric axis size is a number, not a symbol.

    Examples:
        >>> from symshard.algebra.symbols import axis, dim
        >>> d = Domain.of([axis("X")], {dim("D"): [frozenset({axis("X")})]}, {dim("D"): 4})
        >>> d.floor(((dim("D"), 1), (axis("X"), -1)))
        1
    """

    axes: frozenset[sympy.Expr] = frozenset()
    groups: Mapping[sympy.Expr, tuple[frozenset[sympy.Expr], ...]] = field(default_factory=dict)
    floors: Mapping[sympy.Expr, Number] = field(default_factory=dict)
    memo: dict = field(default_factory=dict, compare=False, repr=False)  # comparisons already decided here

    @classmethod
    def of(
        cls,
        axes: Iterable[sympy.Expr] = (),
        groups: Mapping[sympy.Expr, Iterable[frozenset[sympy.Expr]]] | None = None,
        floors: Mapping[sympy.Expr, Number] | None = None,
    ) -> Domain:
        return cls(
            frozenset(axes),
            {d: tuple(gs) for d, gs in (groups or {}).items()},
            dict(floors or {}),
        )

    @classmethod
    def around(cls, atoms: Iterable[sympy.Expr]) -> Domain:
        """The plain domain of ``atoms``: mesh axes at least 2, everything else positive."""
        return cls(frozenset(a for a in atoms if is_axis_symbol(a)))

    def floor(self, m: Monomial) -> Number:
        """A lower bound of the monomial ``m`` over the domain (0 when it is unbounded below)."""
        exps = dict(m)
        # dims with a positive power cancel negative powers of the axes that shard them (D ≥ |X|·|Y|)
        for d, e in list(exps.items()):
            if e <= 0 or d not in self.groups:
                continue
            for group in self.groups[d]:
                need = max((-exps.get(a, 0) for a in group), default=0)
                t = min(exps[d], need)
                if t <= 0:
                    continue
                exps[d] -= t
                for a in group:
                    exps[a] = exps.get(a, 0) + t
                if not exps[d]:
                    break
        bound: Number = 1
        for a, e in exps.items():
            if e == 0:
                continue
            if a in self.axes:
                if e < 0:
                    return 0
                bound *= 2**e
            elif a in self.floors or (a.is_Symbol and a.is_integer):
                if e < 0:
                    return 0
                bound *= _number(Fraction(self.floors.get(a, 1)) ** e)
            else:
                return 0
        return bound


def nonnegative(s: Signomial, domain: Domain) -> bool:
    """Whether ``s ≥ 0`` at every point of ``domain``, proved by paying each negative term with positive
    terms (see the module docstring). False means "not proved"."""
    negatives = [(m, -c) for m, c in s.terms.items() if c < 0]
    if not negatives:
        return True
    budget = {m: Fraction(c) for m, c in s.terms.items() if c > 0}
    if not budget:
        return False
    for mu, need in negatives:
        need = Fraction(need)
        inverse = _mono_inv(mu)
        offers = []
        for nu, left in budget.items():
            if left <= 0:
                continue
            ratio = domain.floor(_mono_mul(nu, inverse))
            if ratio > 0:
                offers.append((ratio, nu))
        offers.sort(key=lambda o: -o[0])
        for ratio, nu in offers:
            left = budget[nu]
            pay = left * ratio
            if pay >= need:
                budget[nu] = left - need / ratio
                need = Fraction(0)
                break
            budget[nu] = Fraction(0)
            need -= pay
        if need > 0:
            return False
    return True


def less_equal(
    p: Maximum | Signomial | Lazy,
    q: Maximum | Signomial | Lazy,
    domain: Domain,
    points: Sequence[Mapping[sympy.Expr, float]] = (),
) -> bool:
    """Whether ``p ≤ q`` at every point of ``domain`` (proved; False means not proved).

    Maxima are compared part by part (every part of ``p`` below some part of ``q``). Sums of costs, all
    non-negative, are first matched term by term (each term of ``p`` below its own term of ``q``, the
    rest of ``q`` only adding). Then, given sample ``points`` of the domain (each giving every atom a
    value), each part of ``p`` is compared with the parts of ``q``'s expansion that are largest at those
    points, found without expanding ``q`` (:func:`_active`); any one part of the expansion is at most
    ``q`` everywhere, so a proof against it is a proof against ``q``. Last, a sum is expanded into its
    maximum of parts, only when that is small.
    """
    if isinstance(p, Signomial):
        p = Maximum((p,))
    if isinstance(q, Signomial):
        q = Maximum((q,))
    if isinstance(p, Maximum) and isinstance(q, Maximum):
        key = (p, q)
        found = domain.memo.get(key)
        if found is None:
            found = domain.memo[key] = all(
                any(_covers(b, a) or nonnegative(b - a, domain) for b in q.parts) for a in p.parts
            )
        return found
    if isinstance(p, Lazy) and p.kind == "max":
        return all(less_equal(c, q, domain, points) for c in p.terms)
    if isinstance(q, Lazy) and q.kind == "max":
        if any(less_equal(p, c, domain, points) for c in q.terms):
            return True
    else:
        ps = list(p.terms) if isinstance(p, Lazy) else [p]
        qs = list(q.terms) if isinstance(q, Lazy) else [q]
        if len(ps) <= len(qs) and _matched(ps, qs, domain, points):
            return True
    if points and isinstance(p, Maximum) and _below_active(p, q, domain, points):
        return True
    return _expandable(p, q) and less_equal(p.exactly(), q.exactly(), domain)


def values_at(
    costs: Sequence[Maximum | Signomial | Lazy], points: Sequence[Mapping[sympy.Expr, float]]
) -> list[tuple[float, ...]]:
    """Each cost's values at ``points`` (as its ``value`` gives them), with the signomials, maxima and sums
    that several costs share (the planner's strategies share their legs) worked out once.

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> leg = from_expr(dim("A"))
        >>> values_at([leg, leg + from_expr(dim("B"))], [{dim("A"): 1.0, dim("B"): 2.0}])
        [(1.0,), (3.0,)]
    """
    memo: dict[int, tuple[float, ...]] = {}  # by identity: every node is reachable from costs meanwhile
    none = (0.0,) * len(points)

    def of(c: Maximum | Signomial | Lazy) -> tuple[float, ...]:
        found = memo.get(id(c))
        if found is None:
            if isinstance(c, Signomial):
                found = tuple(c.value(pt) for pt in points)
            elif isinstance(c, Maximum):
                found = (
                    tuple(map(max, *(of(p) for p in c.parts)))
                    if len(c.parts) > 1
                    else of(c.parts[0])
                    if c.parts
                    else none
                )
            else:
                terms = [of(t) for t in c.terms]
                found = tuple(sum(v) if c.kind == "sum" else max(v) for v in zip(*terms, strict=True))
            memo[id(c)] = found
        return found

    return [of(c) for c in costs]


def _active(c: Maximum | Lazy, point: Mapping[sympy.Expr, float]) -> Signomial:
    """The part of ``c``'s expansion that is largest at ``point``, built without expanding ``c``: the
    largest part of a maximum, the sum of its terms' such parts for a sum."""
    if isinstance(c, Maximum):
        return max(c.parts, key=lambda s: s.value(point)) if c.parts else Signomial({})
    if c._exact is not None:
        return _active(c._exact, point)
    if c.kind == "max":
        return _active(max(c.terms, key=lambda t: t.value(point)), point)
    total = Signomial({})
    for t in c.terms:
        total = total + _active(t, point)
    return total


class Samples(list):
    """Sample points of a domain (each giving every atom a value) that keep, for each cost compared
    against them, its parts largest at the points (:func:`_active`): a planner compares one cost with
    many others at the same points.

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> points = Samples([{dim("A"): 1.0}])
        >>> len(points), points[0][dim("A")]
        (1, 1.0)
    """

    def __init__(self, points: Iterable[Mapping[sympy.Expr, float]]) -> None:
        super().__init__(points)
        self.active: dict[Maximum | Lazy, list[Signomial]] = {}


def _below_active(p: Maximum, q: Maximum | Lazy, domain: Domain, points: Sequence[Mapping[sympy.Expr, float]]) -> bool:
    """Whether every part of ``p`` is proved below one of the parts of ``q`` active at ``points``."""
    kept = points.active if isinstance(points, Samples) else None
    picks = kept.get(q) if kept is not None else None
    if picks is None:
        picks = list(dict.fromkeys(_active(q, pt) for pt in points))
        if kept is not None:
            kept[q] = picks
    return all(any(_covers(b, a) or nonnegative(b - a, domain) for b in picks) for a in p.parts)


def _matched(ps: list, qs: list, domain: Domain, points: Sequence[Mapping[sympy.Expr, float]] = ()) -> bool:
    """Whether each of ``ps`` can be paired with its own one of ``qs`` that is at least it (augmenting paths)."""
    below = [[j for j, b in enumerate(qs) if less_equal(a, b, domain, points)] for a in ps]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in below[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(place(i, set()) for i in sorted(range(len(ps)), key=lambda i: len(below[i])))


def _size(c: Maximum | Lazy) -> int:
    """How many parts the expansion of ``c`` has at most."""
    if isinstance(c, Maximum):
        return len(c.parts)
    if c._exact is not None:
        return len(c._exact.parts)
    sizes = [_size(t) for t in c.terms]
    return math.prod(sizes) if c.kind == "sum" else sum(sizes)


def _expandable(p: Maximum | Lazy, q: Maximum | Lazy) -> bool:
    return _size(p) * _size(q) <= 256


def log_uniform(rng, lo: float, hi: float) -> float:
    """A number between ``lo`` and ``hi``, uniform in its logarithm."""
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))

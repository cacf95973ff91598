"""Whether one cost is at most another everywhere: the comparison dominance and crossovers need.

:func:`less_equal` decides ``p ≤ q`` for every point of a :class:`~symshard.algebra.domains.Domain`
on costs kept as :mod:`.monomials` has them: the largest of sums of monomials, or sums and maxima of
those kept lazy. ``max(p_i) ≤ max(q_j)`` is proved by finding, for every ``p_i``, one ``q_j`` above
it (each pair by :func:`~symshard.algebra.domains.nonnegative`); sums are matched term by term, then
compared at the parts of ``q`` largest at sample points (:class:`Samples`), and expanded only when
that stays small. A False answer means "not proved", which costs a planner time, never correctness.
:func:`values_at` gives many costs' values at sample points, their shared parts worked out once.

It sits at the top of symshard's exact sums in :mod:`symshard.algebra`, above :mod:`.monomials`.

Examples:
    >>> import sympy
    >>> from symshard.algebra.domains import Domain
    >>> from symshard.algebra.monomials import from_expr
    >>> from symshard.algebra.symbols import axis, dim, W_ici
    >>> B, D, F, X = dim("B"), dim("D"), dim("F"), axis("X")
    >>> gather = from_expr(2 * D * F / W_ici)
    >>> reduce = from_expr(4 * B * F / W_ici)
    >>> less_equal(from_expr(2 * B * D * F / X), from_expr(2 * B * D * F), Domain.of([X]))
    True
    >>> less_equal(gather, reduce, Domain.of([X])), less_equal(reduce, gather, Domain.of([X]))
    (False, False)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import sympy

from .domains import Domain, nonnegative
from .monomials import Lazy, Maximum, covers
from .signomials import Signomial

__all__ = ["Samples", "less_equal", "log_uniform", "values_at"]


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
                any(covers(b, a) or nonnegative(b - a, domain) for b in q.parts) for a in p.parts
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
        >>> from symshard.algebra.monomials import from_expr
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
    return all(any(covers(b, a) or nonnegative(b - a, domain) for b in picks) for a in p.parts)


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

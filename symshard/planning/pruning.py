"""Pruning by dominance: dropping the routes and strategies that can never win, before they are built.

A route of one leg that another route of it beats in every way (communication time, the links it keeps
busy, peak bytes, steps) is never part of a winning strategy: :func:`prune_numeric` drops those when the
costs are numbers, :func:`prune_symbolic` when they are symbolic, comparing sums of monomials exactly
(:func:`~symshard.algebra.monomials.less_equal`) on the :class:`Domains` where the routes are valid.
Whole symbolic strategies (:class:`SymbolicCandidate`) go the same way: :func:`pareto` keeps those no
other dominates, and :func:`witnesses` finds a sample point where each one kept is the fastest.

In :mod:`symshard.planning` it sits above :mod:`.shardings` and :mod:`.costenv`, below :mod:`.builder`
(a builder keeps only the routes that can win) and :mod:`.enumeration`, whose searches call it.

Examples:
    >>> from symshard.planning.strategies import Leg
    >>> slow, fast = Route(0, Leg((), 3, 8, 8), frozenset()), Route(1, Leg((), 2, 8, 8), frozenset())
    >>> [r.index for r in prune_numeric((slow, fast), "axes")]
    [1]
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import sympy

from ..algebra.comparisons import Samples, less_equal, log_uniform, values_at
from ..algebra.domains import Domain
from ..algebra.mathtext import as_expr
from ..algebra.monomials import Lazy, Maximum, from_expr
from ..machines.presets import constant_ranges
from .costenv import CostEnv
from .rawcosts import Value
from .shardings import Product, Route
from .strategies import Reason

__all__ = ["Domains", "SymbolicCandidate", "pareto", "probe_cost", "prune_numeric", "prune_symbolic", "witnesses"]


def probe_cost(value: Value) -> Maximum | Lazy:
    """A probe cost as compared: sums of monomials, kept lazy when they are (see :class:`Lazy`)."""
    return value if isinstance(value, (Maximum, Lazy)) else from_expr(value)


def prune_numeric(routes: tuple[Route, ...], comm_overlap: str) -> list[Route]:
    """The routes of one leg that no other route beats in every way: communication, the links it keeps
    busy, peak bytes and steps (and, all equal, its place in the order)."""

    def beats(r: Route, s: Route) -> bool:
        a = (r.leg.comm, r.leg.peak, len(r.leg.steps))
        b = (s.leg.comm, s.leg.peak, len(s.leg.steps))
        if not all(x <= y for x, y in zip(a, b, strict=True)):
            return False
        if comm_overlap != "none" and not r.links <= s.links:
            return False
        return a != b or r.links != s.links or r.index < s.index

    return [s for s in routes if not any(r is not s and beats(r, s) for r in routes)]


@dataclass(frozen=True, slots=True)
class SymbolicCandidate:
    """A symbolic strategy before it is built: its costs as sums of monomials and what it needs to divide."""

    product: Product
    picks: tuple[int, int, int]
    metrics: tuple[Maximum | Lazy, ...]  # compute time, communication time, memory, HBM time
    needs: frozenset[tuple[str, tuple[str, ...]]]
    order: tuple


class Domains:
    """The domains symbolic costs are compared on: where a strategy is valid (every axis at least 2
    devices; each dim a multiple of, so at least, the devices that shard it), and the sample points
    that rule most comparisons out before they are proved."""

    def __init__(self, env: CostEnv, base: frozenset[tuple[str, tuple[str, ...]]]) -> None:
        self.env = env
        self.base = base
        self._cache: dict[frozenset, Domain] = {}
        self._by_content: dict[tuple[frozenset, frozenset], Domain] = {}
        self.axes = frozenset(as_expr(v) for v in env.axis.values() if not as_expr(v).is_number)
        self.points: list[dict[sympy.Expr, float]] = []
        self._normals: dict[tuple[str, tuple[str, ...]], tuple[str, int, frozenset[str]]] = {}

    def of(self, needs: frozenset[tuple[str, tuple[str, ...]]]) -> Domain:
        """The domain where a strategy that needs these divisibilities (and the given arrays') is valid."""
        needs = needs | self.base
        found = self._cache.get(needs)
        if found is None:
            groups: dict[sympy.Expr, list[frozenset[sympy.Expr]]] = {}
            floors: dict[sympy.Expr, Fraction] = {}
            env = self.env
            for d, axes in needs:
                size = as_expr(env.sizes[d])
                if size.is_number:
                    continue
                symbolic = frozenset(as_expr(env.mesh.size(a)) for a in axes if not as_expr(env.mesh.size(a)).is_number)
                numeric = math.prod(int(as_expr(env.mesh.size(a))) for a in axes if as_expr(env.mesh.size(a)).is_number)
                if symbolic:
                    groups.setdefault(size, []).append(symbolic)
                floor = Fraction(numeric * 2 ** len(symbolic))
                floors[size] = max(floors.get(size, Fraction(1)), floor)
            # many sets of needs bound the same dims alike: they share one domain, and with it the
            # comparisons already proved there
            content = (frozenset((d, frozenset(gs)) for d, gs in groups.items()), frozenset(floors.items()))
            found = self._by_content.get(content)
            if found is None:
                found = self._by_content[content] = Domain.of(self.axes, groups, floors)
            self._cache[needs] = found
        return found

    def _normal(self, need: tuple[str, tuple[str, ...]]) -> tuple[str, int, frozenset[str]]:
        """A need as (dim, product of its numeric axes' sizes, its symbolic axes)."""
        found = self._normals.get(need)
        if found is None:
            d, axes = need
            mesh = self.env.mesh
            sizes = [as_expr(mesh.size(a)) for a in axes]
            known = math.prod(int(n) for n in sizes if n.is_number)
            found = self._normals[need] = (
                d,
                known,
                frozenset(a for a, n in zip(axes, sizes, strict=True) if not n.is_number),
            )
        return found

    def implied(self, small: frozenset, big: frozenset) -> bool:
        """Whether every divisibility in ``small`` follows from those in ``big`` (and the given arrays'):
        ``H`` a multiple of the devices of some axes follows from ``H`` a multiple of those of more axes,
        or of as many devices (numeric axes)."""
        if small <= big or small <= self.base:
            return True
        big_normal = [self._normal(x) for x in big | self.base]
        for need in small:
            d, known, symbolic = self._normal(need)
            if not any(e == d and more % known == 0 and symbolic <= other for e, more, other in big_normal):
                return False
        return True

    def inside(self, atoms: set[sympy.Expr], n: int) -> list[dict[sympy.Expr, float]]:
        """``n`` points (deterministic) inside every domain: each dim a multiple of every mesh axis's
        devices together (so of those that shard it, in any strategy), axes of 2 to 16 devices, constants
        over the hardware catalogue's range; none when an atom is not a symbol (an opaque quantity such as
        ``floor(|X|/2)`` has no value of its own)."""
        if any(not a.is_Symbol for a in atoms):
            return []
        rng = random.Random(29)
        ranges = constant_ranges()
        atoms_sorted = sorted(atoms, key=str)
        fixed = math.prod(int(as_expr(v)) for v in self.env.axis.values() if as_expr(v).is_number)
        out = []
        for _ in range(n):
            point: dict[sympy.Expr, float] = {}
            for a in atoms_sorted:
                if a in self.axes:
                    point[a] = float(2 ** rng.randint(1, 4))
            devices = fixed * math.prod(point.values())
            for a in atoms_sorted:
                if a in self.axes:
                    continue
                if a.is_integer:
                    point[a] = float(devices * 2 ** rng.randint(0, 10))
                else:
                    point[a] = _constant_at(rng, a, ranges)
            out.append(point)
        return out

    def sample(self, atoms: set[sympy.Expr], n: int) -> list[dict[sympy.Expr, float]]:
        """``n`` sample points (deterministic) over ``atoms``: dims and axes of realistic sizes, constants
        over the range of the hardware catalogue."""
        rng = random.Random(17)
        ranges = constant_ranges()
        atoms_sorted = sorted(atoms, key=str)
        out = []
        for _ in range(n):
            point: dict[sympy.Expr, float] = {}
            for a in atoms_sorted:
                if a in self.axes:
                    point[a] = float(2 ** rng.randint(1, 6))
                elif a.is_Symbol and a.is_integer:
                    point[a] = float(2 ** rng.randint(7, 17))
                else:
                    point[a] = _constant_at(rng, a, ranges)
            out.append(point)
        return out


def _constant_at(rng: random.Random, atom: sympy.Expr, ranges: Mapping[sympy.Expr, tuple[float, float]]) -> float:
    """A sample value of a chip constant: log-uniform over the hardware catalogue's range of it (``ranges``),
    or over 1e-3 to 1e3 for a symbol the catalogue does not hold."""
    lo, hi = ranges.get(atom, (1e-3, 1e3))
    return log_uniform(rng, lo, hi)


def prune_symbolic(routes: tuple[Route, ...], comm_overlap: str, domains: Domains) -> list[Route]:
    """The routes of one leg that no other route is at least as good as everywhere (communication, links,
    peak bytes, and valid wherever it is); of equal ones, the one with fewest collectives and steps."""
    costs = [(probe_cost(r.leg.comm), probe_cost(r.leg.peak)) for r in routes]
    kept: list[Route] = []
    for i, s in enumerate(routes):
        dom = domains.of(s.needs)
        dropped = False
        for j, r in enumerate(routes):
            if i == j or not domains.implied(r.needs, s.needs):
                continue
            if comm_overlap != "none" and not r.links <= s.links:
                continue
            if less_equal(costs[j][0], costs[i][0], dom) and less_equal(costs[j][1], costs[i][1], dom):
                tie = (
                    less_equal(costs[i][0], costs[j][0], dom)
                    and less_equal(costs[i][1], costs[j][1], dom)
                    and r.links == s.links
                    and domains.implied(s.needs, r.needs)
                )
                if not tie or (r.collectives, len(r.leg.steps), r.index) < (s.collectives, len(s.leg.steps), s.index):
                    dropped = True
                    break
        if not dropped:
            kept.append(s)
    return kept


def pareto(candidates: list[SymbolicCandidate], domains: Domains) -> list[SymbolicCandidate]:
    """The candidates no other candidate dominates (see :meth:`~symshard.planning.enumeration.Enumeration._undominated`): candidates are
    taken in order of their costs at sample points (a dominating one is never later), each compared, at
    the sample points first and then exactly, with those kept so far."""
    atoms: set[sympy.Expr] = set()
    for c in candidates:
        for m in c.metrics:
            atoms |= m.atoms
    points = Samples(domains.sample(atoms, 6))
    at = values_at([m for c in candidates for m in c.metrics], points)  # legs shared by many, valued once
    width = len(candidates[0].metrics) if candidates else 0
    values = [
        tuple(at[width * i + k][p] for p in range(len(points)) for k in range(width)) for i in range(len(candidates))
    ]
    scale = [max(v[k] for v in values) or 1.0 for k in range(len(values[0]))] if values else []
    # more points where every candidate is valid, only to rule comparisons out before a proof is tried (a
    # counterexample there is one: the candidates kept are the same, found sooner)
    inside = domains.inside(atoms, 24)
    refute: list[tuple[float, ...]] = [()] * len(candidates)
    if inside:
        more = values_at([m for c in candidates for m in c.metrics], inside)
        refute = [tuple(more[width * i + k][p] for p in range(len(inside)) for k in range(width))
                  for i in range(len(candidates))]  # fmt: skip
    order = sorted(
        range(len(candidates)),
        key=lambda i: (sum(v / s for v, s in zip(values[i], scale, strict=True)), candidates[i].order),
    )
    kept: list[int] = []

    def below(i: int, j: int) -> bool:  # candidate i at least as good as j everywhere j is valid
        vi, vj = values[i], values[j]
        if any(a > b * (1 + 1e-9) + 1e-300 for a, b in zip(vi, vj, strict=True)):
            return False
        if any(a > b * (1 + 1e-9) + 1e-300 for a, b in zip(refute[i], refute[j], strict=True)):
            return False
        ci, cj = candidates[i], candidates[j]
        if not domains.implied(ci.needs, cj.needs):
            return False
        dom = domains.of(cj.needs)
        # the single-sum metrics (FLOPs time, memory, HBM time) first: their proofs are cheap and fail fast
        return all(less_equal(ci.metrics[k], cj.metrics[k], dom, points) for k in (0, 2, *range(3, width), 1))

    for j in order:
        if any(below(i, j) for i in kept):
            continue
        kept = [i for i in kept if not (below(j, i) and not below(i, j))]
        kept.append(j)
    return [candidates[i] for i in sorted(kept, key=lambda i: candidates[i].order)]


def witnesses(kept: list[SymbolicCandidate], domains: Domains, overlap: bool) -> list[Reason]:
    """For each kept candidate, a sample point where it is the fastest (``fastest_at``), else
    ``undominated``."""
    atoms: set[sympy.Expr] = set()
    for c in kept:
        for m in (*c.metrics[:2], *c.metrics[3:]):
            atoms |= m.atoms
    points = domains.sample(atoms, 48)
    found: dict[int, dict[sympy.Expr, float]] = {}
    # every metric at every point at once, the legs the candidates share valued once (the same values)
    at = values_at([m for c in kept for m in (c.metrics[0], c.metrics[1], *c.metrics[3:])], points)
    shapes: list[tuple[int, int, range]] = []
    start = 0
    for c in kept:
        shapes.append((start, start + 1, range(start + 2, start + len(c.metrics) - 1)))
        start += len(c.metrics) - 1
    for n, pt in enumerate(points):
        times = []
        for first, second, rest in shapes:
            math_, comm = at[first][n], at[second][n]
            local = max(math_, *(at[r][n] for r in rest))  # the local product: FLOPs or HBM
            times.append(max(local, comm) if overlap else local + comm)
        best = min(times)
        winners = [i for i, t in enumerate(times) if t <= best * (1 + 1e-9)]
        if len(winners) == 1 and winners[0] not in found:
            found[winners[0]] = pt
    out = []
    for i in range(len(kept)):
        witness = found.get(i)
        if witness is None:
            out.append(Reason("undominated"))
        else:
            items = sorted(witness.items(), key=lambda kv: str(kv[0]))
            shown = tuple((str(a), _round(v)) for a, v in items if a.is_Symbol)
            out.append(Reason("fastest_at", (("point", shown),)))
    return out


def _round(v: float) -> object:
    """A sample value as it is shown: a whole number when it is one, else three significant digits."""
    if v == int(v) and abs(v) < 2**53:
        return int(v)
    return float(f"{v:.3g}")

"""Which strategies can be the fastest, and which regions touch: what
:func:`~symshard.planning.crossovers.compare` decides before it derives any condition.

A strategy some other is at least as fast as everywhere it is valid is left out, proved on sums of
monomials (:func:`dominated_strategies`); the others are swept along lines through sample points, one
symbol varying (:func:`sweep`): those fastest somewhere are kept, and two are neighbours where the
fastest changes from one to the other along a line. Neighbours are then added until the regions agree
with every sample (:func:`consistent_pairs`). The points come from fixed seeds, so the same question gives
the same answer on any machine.

Part of :mod:`symshard.planning`, below :mod:`~symshard.planning.crossovers`, above
:mod:`~symshard.planning.crossover_costs` (the times it weighs).

Examples:
    >>> from symshard.algebra.domains import Domain
    >>> from symshard.planning.crossover_costs import compared_costs
    >>> from symshard.planning.planner import plan
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", hbm=False)
    >>> costs = [compared_costs(s, Domain.around(s.compute_time.free_symbols | s.bandwidth_comm_time.free_symbols),
    ...                         p) for s in p.strategies]
    >>> times = {i: c.time(serial=False) for i, c in enumerate(costs, 1)}
    >>> atoms = sorted({a for t in times.values() for a in t.atoms}, key=str)
    >>> winners, pairs, seen, order = sweep(times, atoms, {}, [c.domain for c in costs])
    >>> sorted(winners), sorted(pairs)
    ([1, 2, 3], [(1, 3), (2, 3)])
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Mapping, Sequence

import sympy

from ..algebra.comparisons import less_equal
from ..algebra.domains import Domain
from ..algebra.monomials import Maximum
from ..algebra.signomials import Signomial
from ..algebra.symbols import is_axis_symbol
from ..machines.presets import constant_ranges
from .crossover_costs import ComparedCosts

__all__ = ["consistent_pairs", "dominated_strategies", "sweep"]


def dominated_strategies(
    costs: dict[int, ComparedCosts], needs: dict[int, frozenset], serial: bool, fixed: Mapping[sympy.Expr, float]
) -> dict[int, int]:
    """Each strategy some other is at least as fast as everywhere it is valid (valid there too), with it."""
    times = {i: c.time(serial) for i, c in costs.items()}
    # a point where every strategy is valid and one is slower than another rules that one out before a proof
    points = _inside({a for t in times.values() for a in t.atoms}, fixed, 16)
    at = {i: [t.value(pt) for pt in points] for i, t in times.items()}

    def slower(i: int, j: int) -> bool:  # i slower than j somewhere
        return any(a > b * (1 + 1e-9) + 1e-300 for a, b in zip(at[i], at[j], strict=True))

    out: dict[int, int] = {}
    for j in costs:
        for i in costs:
            if i == j or i in out or not needs[i] <= needs[j] or slower(i, j):
                continue
            dom = costs[j].domain
            if less_equal(times[i], times[j], dom) and (
                i < j or not (needs[j] <= needs[i] and not slower(j, i) and less_equal(times[j], times[i], dom))
            ):
                out[j] = i
                break
    return out


def _inside(atoms: set[sympy.Expr], fixed: Mapping[sympy.Expr, float], n: int) -> list[dict[sympy.Expr, float]]:
    """``n`` points (deterministic) where every strategy is valid: axes of 2 to 16 devices, each dim a
    multiple of all of them together, constants as ``fixed`` or over the hardware catalogue's range; none
    when an atom is not a symbol (an opaque quantity has no value of its own)."""
    if any(not a.is_Symbol for a in atoms if a not in fixed):
        return []
    rng = random.Random(29)
    ranges = constant_ranges()
    ordered = sorted(atoms, key=str)
    out = []
    for _ in range(n):
        pt: dict[sympy.Expr, float] = {a: float(v) for a, v in fixed.items()}
        for a in ordered:
            if a not in pt and is_axis_symbol(a):
                pt[a] = float(2 ** rng.randint(1, 4))
        devices = math.prod(pt[a] for a in ordered if is_axis_symbol(a) and a not in fixed)
        for a in ordered:
            if a in pt:
                continue
            if a.is_integer:
                pt[a] = devices * 2 ** rng.randint(0, 10)
            elif a in ranges:
                pt[a] = math.exp(rng.uniform(math.log(ranges[a][0]), math.log(ranges[a][1])))
            else:
                pt[a] = math.exp(rng.uniform(math.log(1e-3), math.log(1e3)))
        out.append(pt)
    return out


def _sample_points(
    atoms: Sequence[sympy.Expr], fixed: Mapping[sympy.Expr, float], domains: Sequence[Domain], n: int, seed: int
):
    """``n`` random points (deterministic): axes 2 to 64, dims 16 to 2^20 and at least the devices that
    shard them, constants over the hardware catalogue's range unless ``fixed``."""
    rng = random.Random(seed)
    ranges = constant_ranges()
    floors: dict[sympy.Expr, float] = {}
    for d in domains:
        for a, f in d.floors.items():
            floors[a] = max(floors.get(a, 1.0), float(f))
    points = []
    for _ in range(n):
        pt: dict[sympy.Expr, float] = dict(fixed)
        for a in atoms:
            if a in pt:
                continue
            if is_axis_symbol(a):
                pt[a] = 2 ** rng.uniform(1, 6)
        for a in atoms:
            if a in pt:
                continue
            if a.is_Symbol and a.is_integer:
                low = max(
                    floors.get(a, 1.0),
                    *(pt[g] for d in domains for gs in d.groups.get(a, ()) for g in gs if g in pt),
                    16.0,
                )
                pt[a] = math.exp(rng.uniform(math.log(low), math.log(max(low * 4, 2.0**20))))
            elif a in ranges:
                lo, hi = ranges[a]
                pt[a] = math.exp(rng.uniform(math.log(lo), math.log(hi)))
            else:
                pt[a] = math.exp(rng.uniform(math.log(1e-3), math.log(1e3)))
        points.append(pt)
    return points


class _Lines:
    """Every compared time along lines through a point, one symbol varying: each part of each time, along
    the line, is a few powers of that symbol with coefficients fixed by the point (``A·t + B/t``), so the
    values at all the line's steps come from the point's monomials, worked out once, and lists of powers.
    Parts shared by several strategies (the planner's strategies share their legs) are worked out once.
    """

    def __init__(self, times: dict[int, Maximum]) -> None:
        self.order = sorted(times)
        index: dict[Signomial, int] = {}
        self.shape: list[list[int]] = []  # each strategy's parts, as indices into self.parts
        for i in self.order:
            self.shape.append([index.setdefault(p, len(index)) for p in times[i].parts])
        self.parts = list(index)
        monos: dict[tuple, int] = {}
        self.terms = [[(float(c), monos.setdefault(m, len(monos))) for m, c in p.terms.items()] for p in self.parts]
        self.monos = list(monos)
        self._powers: dict[sympy.Expr, list[list[tuple[int, list[tuple[float, int]]]]]] = {}

    def grouped(self, a: sympy.Expr) -> list[list[tuple[int, list[tuple[float, int]]]]]:
        """Each part's terms grouped by their power of ``a``."""
        found = self._powers.get(a)
        if found is None:
            found = []
            for terms in self.terms:
                groups: dict[int, list[tuple[float, int]]] = {}
                for c, m in terms:
                    e = next((k for b, k in self.monos[m] if b == a), 0)
                    groups.setdefault(e, []).append((c, m))
                found.append(sorted(groups.items()))
            self._powers[a] = found
        return found

    def along(self, base: Mapping[sympy.Expr, float], a: sympy.Expr, steps: Sequence[float]) -> list[tuple]:
        """Every strategy's time (in :attr:`order`) at each step of ``a``, the other symbols at ``base``."""
        at = dict(base)
        at[a] = 1.0
        mono = []
        for powers_of in self.monos:
            v = 1.0
            for b, e in powers_of:
                v *= at[b] ** e
            mono.append(v)
        powers: dict[int, list[float]] = {}

        def power(e: int) -> list[float]:
            pw = powers.get(e)
            if pw is None:
                pw = powers[e] = [t**e for t in steps] if e else [1.0] * len(steps)
            return pw

        # a part of one power of the symbol is a number times that power; a part of several, a list
        single: list[tuple[int, float] | None] = []
        values: list[list[float] | None] = []
        for groups in self.grouped(a):
            rows = []
            for e, terms in groups:
                coef = 0.0
                for c, m in terms:
                    coef += c * mono[m]
                rows.append((e, coef))
            if len(rows) == 1:
                single.append(rows[0])
                values.append(None)
            elif len(rows) == 2:
                (e0, c0), (e1, c1) = rows
                single.append(None)
                values.append([c0 * x + c1 * y for x, y in zip(power(e0), power(e1), strict=True)])
            else:
                single.append(None)
                values.append([sum(c * power(e)[k] for e, c in rows) for k in range(len(steps))])
        times = []
        for shape in self.shape:
            # the largest of a strategy's parts of one power, for each power: the largest number times it
            # (multiplying by the same positive float keeps the order, so this is the same maximum)
            top: dict[int, float] = {}
            lists: list[list[float]] = []
            for k in shape:
                one = single[k]
                if one is None:
                    found = values[k]
                    assert found is not None
                    lists.append(found)
                elif one[1] > top.get(one[0], -math.inf):
                    top[one[0]] = one[1]
            for e, c in top.items():
                lists.append([c * x for x in power(e)])
            times.append(lists[0] if len(lists) == 1 else list(map(max, *lists)))
        return list(zip(*times, strict=True))


def sweep(
    times: dict[int, Maximum], atoms: Sequence[sympy.Expr], fixed: Mapping[sympy.Expr, float], domains: Sequence[Domain]
) -> tuple[set[int], set[tuple[int, int]], list[tuple[int, tuple]], list[int]]:
    """Which strategies are the fastest somewhere, which regions touch, every point's winner with every
    time there (in the order of the last item, the strategies' numbers): lines along each free symbol
    through random points."""
    free = [a for a in atoms if a not in fixed]
    bases = _sample_points(atoms, fixed, domains, 48 if len(times) > 2 else 16, 17)
    lines = _Lines(times)
    order = lines.order
    winners: set[int] = set()
    pairs: set[tuple[int, int]] = set()
    seen: list[tuple[int, tuple]] = []

    for base in bases:
        for a in free:
            lo = 2.0 if is_axis_symbol(a) else base[a] / 2**12
            hi = 64.0 if is_axis_symbol(a) else base[a] * 2**12
            if not (a.is_Symbol and (a.is_integer or is_axis_symbol(a))):
                lo, hi = base[a] / 100, base[a] * 100
            # an axis has 2 to 64 devices: 13 steps, a third apart, sample it as finely as 25 steps, a factor
            # of 2 apart, sample the 2^24 around a dim's value
            n = 12 if is_axis_symbol(a) else 24
            steps = [math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * k / n) for k in range(n + 1)]
            prev = None
            for values in lines.along(base, a, steps):
                best = min(values)
                k = values.index(best)
                if len(values) > 1 and min(values[:k] + values[k + 1 :]) <= best * (1 + 1e-9):
                    continue  # a tie: no one strategy is the fastest here
                w = order[k]
                winners.add(w)
                seen.append((w, values))
                if prev is not None and prev != w:
                    pairs.add((min(prev, w), max(prev, w)))
                prev = w
    return winners, pairs, seen, order


def consistent_pairs(
    order: list[int], winners: set[int], pairs: set[tuple[int, int]], seen: list[tuple[int, tuple]]
) -> set[tuple[int, int]]:
    """Neighbours enough for the regions to agree with every sample: where a strategy beats all its
    neighbours at a point another is faster at, that one is a neighbour too."""
    pairs = set(pairs)
    where = {i: k for k, i in enumerate(order)}
    for _ in range(8):
        added = False
        # each winner's value and its neighbours' at a point, read with one call each
        ahead = {}
        for a in sorted(winners):
            nbrs = [where[b if x == a else x] for x, b in pairs if a in (x, b)]
            ahead[a] = (where[a], operator.itemgetter(*nbrs) if len(nbrs) > 1 else None, nbrs)
        for w, values in seen:
            tw = values[where[w]] * (1 + 1e-9)
            for a, (k, many, nbrs) in ahead.items():
                ta = values[k]
                if ta <= tw or a == w:
                    continue
                if many is not None:
                    if ta >= min(many(values)):
                        continue
                elif nbrs and ta >= values[nbrs[0]]:
                    continue
                pair = (min(a, w), max(a, w))
                if pair not in pairs:
                    pairs.add(pair)
                    added = True
        if not added:
            break
    return pairs

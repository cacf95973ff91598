"""Crossover conditions between strategies: when is a plan communication- or memory-bound, which
strategies can be the fastest at all, and where each one is.

The strategies are the plan's, numbered as ``symshard matmul`` numbers them for the same options. Each
one's time is ``max(T_math, T_hbm, T_comms)`` (bandwidth-bound collective times, as the chapter reasons;
``T_hbm`` the local product's HBM traffic, left out when the plan leaves it out, as the chapter does). For
a chosen symbol ``x`` (a dim such as B, an axis size, a hardware constant) :func:`compare`

1. keeps the strategies that can be the fastest anywhere: those no other strategy is at least as fast
   as everywhere it is valid (decided exactly on the sums of monomials the times are,
   :mod:`symshard.algebra.monomials`), then those a sweep over sample points finds fastest somewhere;
2. finds their *neighbours*, the pairs whose regions touch, from the same sweep (lines along every
   symbol through many points; a strategy whose conditions hold at a sample point where another is
   faster gets that one as a neighbour too, until the regions agree with every sample);
3. derives each strategy's regime: communication-bound iff ``T_comms > T_math``, the chapter's question
   (``B < C/W_ici``), and memory-bound where ``T_hbm`` is the largest term; and, for each pair of
   neighbours, when each is faster, in the fewest relations (each term of one below some term of the
   other), every relation solved for ``x`` and simplified in the book's form
   (:mod:`symshard.algebra.inequalities`): no part implied by another, bounds merged;
4. describes each strategy's region: where it beats each of its neighbours.

With ``strategies`` listed explicitly, every pair of them is compared; with HBM left out, as the chapter's
case analysis: one case per combination of regimes, the active terms compared. A condition is a
:class:`~symshard.algebra.conditions.Condition` (a union of labelled cases) or
:class:`~symshard.algebra.conditions.Clauses` (a conjunction of them), printable as text and LaTeX,
evaluable at a point and on a named chip (``C/W_ici`` becomes 2550 on a TPU v5p).

Examples:
    >>> c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies=[2, 1])
    >>> c.regimes[1].communication_bound.text()
    'B < C/W_ici'
    >>> compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies="1,2", hardware="v5p").pairs[0].numeric_a_wins.text()
    '(D > 5100) or (271·B·F < 9·B·D + 9·D·F) or (B < D/2)'
    >>> compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies="1,2", hbm=False).pairs[0].a_wins.cases[0].text()
    'D < 2·C·|X|/W_ici and B < C/W_ici and B < D/2'
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy

from ..algebra.comparisons import less_equal
from ..algebra.conditions import Case, Clauses, Condition, merge_labels, regime_label
from ..algebra.domains import Domain
from ..algebra.inequalities import Inequality, Relation, minimal, solve
from ..algebra.mathtext import as_expr
from ..algebra.monomials import Maximum, from_expr
from ..algebra.signomials import Signomial
from ..algebra.solving import solve_less
from ..algebra.symbols import is_axis_symbol
from ..costs.placement import ShapeLike
from ..errors import PlanError, TooLargeError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import constant_ranges
from ..machines.presets import hardware as lookup_hardware
from ..memo import memoized
from ..messages import say
from ..notation.einsums import Matmul, matmul
from .planner import plan
from .strategies import Plan, Strategy

__all__ = [
    "MAX_COMPARED",
    "MAX_PAIRED",
    "Case",
    "Comparison",
    "Condition",
    "PairComparison",
    "Regime",
    "Region",
    "check_compared",
    "compare",
    "solve_less",
]

_Cases = list[list[Relation]]

MAX_COMPARED = 500
"""The most strategies :func:`compare` looks for winners among (``strategies='all'`` or the plan's): the
four-axis plan of the README's matmul has 441, compared in about twenty seconds; the work grows faster
than their number (every strategy is checked against every other)."""

MAX_PAIRED = 16
"""The most strategies :func:`compare` takes by number, every pair of them compared case by case (120
pairs, about ten seconds on a plan of three axes)."""


# -- results -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Regime:
    """When one strategy is communication-bound, when memory-bound, and otherwise compute-bound.

    ``communication_bound`` compares ``T_comms`` with ``T_math``, as the chapter does (``B < C/W_ici``);
    ``memory_bound`` says where ``T_hbm`` is the largest of the three (None when the comparison leaves HBM
    out), and wins over the other where both hold: the strategy waits on memory there, whichever of
    ``T_comms`` and ``T_math`` is the larger. ``numeric`` and ``numeric_memory`` are the same on the
    chip compared on.
    """

    index: int
    strategy: Strategy
    communication_bound: Condition
    numeric: Condition | None
    memory_bound: Clauses | None = None
    numeric_memory: Clauses | None = None

    def bound(self, values: Mapping) -> str | None:
        """``'memory'``, ``'communication'`` or ``'compute'`` at a point, as the conditions say (None if
        one cannot be decided there); a tie goes to compute, then memory, as
        :attr:`~symshard.planning.strategies.Strategy.bound` has it."""
        if self.memory_bound is not None:
            memory = self.memory_bound.holds(values)
            if memory is None:
                return None
            if memory:
                return "memory"
        comms = self.communication_bound.holds(values)
        if comms is None:
            return None
        return "communication" if comms else "compute"

    def __repr__(self) -> str:
        from ..shown import summary

        numeric = None if self.numeric is None else self.numeric.formula()
        memory = None if self.numeric_memory is None else self.numeric_memory.formula()
        return summary("Regime", self.strategy.name, {"index": self.index,
                       "communication_bound": self.communication_bound.formula()},
                       {"numeric": numeric, "memory_bound": memory})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class _OnChip:
    """A chip's numbers to put into conditions, and the symbol to solve for again: the conditions on the
    chip are worked out when first read (a short answer reads few of them)."""

    values: Mapping[sympy.Expr, object]
    symbol: sympy.Symbol

    def of(self, condition: Condition | Clauses) -> Condition | Clauses:
        return condition.subs(self.values, self.symbol)


@dataclass(frozen=True, slots=True)
class PairComparison:
    """When strategy ``a`` is faster than strategy ``b``; ``numeric_a_wins`` and ``numeric_b_wins``: the
    same on the chip compared on (None without one)."""

    a: int
    b: int
    a_wins: Condition | Clauses
    b_wins: Condition | Clauses
    chip: _OnChip | None = field(default=None, repr=False, compare=False)

    @property
    def numeric_a_wins(self) -> Condition | Clauses | None:
        return self.chip.of(self.a_wins) if self.chip is not None else None

    @property
    def numeric_b_wins(self) -> Condition | Clauses | None:
        return self.chip.of(self.b_wins) if self.chip is not None else None

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("PairComparison", None, {"a": self.a, "b": self.b}, {"a_wins": self.a_wins.formula()},
                       {"b_wins": self.b_wins.formula()})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class Region:
    """Where one strategy is the fastest: where it beats each of its neighbours (the strategies whose
    regions touch its own), as one conjunction of the pairs' clauses; ``numeric``: the same on the chip
    compared on (None without one)."""

    index: int
    strategy: Strategy
    neighbours: tuple[int, ...]
    condition: Clauses
    chip: _OnChip | None = field(default=None, repr=False, compare=False)

    @property
    def numeric(self) -> Clauses | None:
        if self.chip is None:
            return None
        found = self.chip.of(self.condition)
        assert isinstance(found, Clauses)
        return found

    def holds(self, values: Mapping) -> bool | None:
        """Whether the point lies in the region (None if a clause cannot be decided there)."""
        return self.condition.holds(values)

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Region", self.strategy.name, {"index": self.index, "neighbours": list(self.neighbours)},
                       {"condition": self.condition.formula()})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Regime boundaries and crossovers for a plan's strategies, solved for one symbol.

    ``strategies`` are the strategies compared, numbered as ``regimes`` and ``pairs`` number them (the
    plan's numbers, or with ``strategies="all"`` their numbers in ``plan.all_strategies()``).
    ``best`` is each strategy that can be the fastest with its :class:`Region` (empty when the
    strategies were listed explicitly), ``dominated`` the others with the strategy at least as fast
    everywhere (0 when none is proved, only never faster at the sample points).
    """

    plan: Plan
    symbol: sympy.Symbol
    regimes: tuple[Regime, ...]
    pairs: tuple[PairComparison, ...]
    hardware: Hardware | None
    assumptions: tuple[str, ...]
    strategies: tuple[tuple[int, Strategy], ...] = ()
    best: tuple[Region, ...] = ()
    dominated: tuple[tuple[int, int], ...] = ()
    domain: Domain | None = field(default=None, repr=False, compare=False)
    mode: str = "explicit"
    serial: bool = False
    hbm: bool = False

    def time(self, index: int) -> Maximum:
        """Strategy ``index``'s time as the comparison weighs it: ``T_math`` and the bandwidth-bound
        ``T_comms`` (the busiest link's total), overlapped or added as compared, on sums of monomials."""
        s = self.strategy(index)
        domain = self.domain or Domain.around(s.compute_time.free_symbols)
        return _costs(s, domain, self.plan, hbm=self.hbm).time(self.serial)

    def strategy(self, index: int) -> Strategy:
        """A compared strategy by its number."""
        for i, s in self.strategies:
            if i == index:
                return s
        raise PlanError(
            say("strategy {index} is not in this comparison", index=index),
            hint=say("pick a number the comparison lists"),
        )

    def region(self, index: int) -> Region | None:
        """Where strategy ``index`` is the fastest (None if it never is)."""
        return next((r for r in self.best if r.index == index), None)

    def fastest(self, values: Mapping) -> int | None:
        """The number of the region that holds the point (None if none does or it cannot be decided)."""
        for r in self.best:
            if r.holds(values):
                return r.index
        return None

    def __repr__(self) -> str:
        from ..shown import summary

        return summary(
            "Comparison", str(self.plan.matmul), {"strategies": [i for i, _ in self.strategies],
            "fastest": [r.index for r in self.best] or None, "mode": self.mode},
            solve_for=str(self.symbol), hardware=self.hardware and self.hardware.name,
        )  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


# -- the costs as compared: bandwidth-bound times on sums of monomials -----------------------------------


@dataclass(frozen=True, slots=True)
class _Costs:
    """A strategy's ``T_math``, ``T_hbm`` (None when left out) and the parts of ``T_comms`` (the busiest
    link's total is the largest part)."""

    math: Signomial
    comms: tuple[Signomial, ...]
    domain: Domain
    hbm: Signomial | None = None

    @property
    def local(self) -> list[Signomial]:
        """The local product's terms: ``T_math`` and ``T_hbm``."""
        return [self.math] if self.hbm is None else [self.math, self.hbm]

    def terms(self, serial: bool) -> list[Signomial]:
        """The terms whose largest is the time: each local term plus each part of ``T_comms`` when they add
        up (``serial``), else every term on its own."""
        if serial:
            return [m + c for m in self.local for c in self.comms] or self.local
        return [*self.local, *self.comms]

    def time(self, serial: bool) -> Maximum:
        return Maximum.of(self.terms(serial))


def _costs(
    s: Strategy, base: Domain, p: Plan, formulas: tuple[sympy.Expr, ...] | None = None, hbm: bool = True
) -> _Costs:
    """``s``'s terms as compared, from its formulas (``(T_math, T_comms, T_hbm)``, read from ``s`` if not
    given)."""
    if formulas is None:
        formulas = (s.compute_time, s.bandwidth_comm_time, *((s.hbm_time,) if p.hbm and hbm else ()))
    math_ = from_expr(formulas[0]).parts
    comm = from_expr(formulas[1]).reduced(base)
    domain = _domain(s, p, base)
    comms = tuple(c for c in comm.parts if not c.is_zero)
    local = from_expr(formulas[2]).parts if len(formulas) > 2 else ()
    return _Costs(math_[0], comms, domain, local[0] if len(local) == 1 and not local[0].is_zero else None)


def _domain(s: Strategy, p: Plan, base: Domain) -> Domain:
    """Where ``s`` is valid: each dim at least the devices that shard it (a multiple of them)."""
    sizes = dict(p.sizes)
    groups: dict[sympy.Expr, list[frozenset[sympy.Expr]]] = {d: list(g) for d, g in base.groups.items()}
    floors: dict[sympy.Expr, Fraction] = {d: Fraction(f) for d, f in base.floors.items()}
    for d, axes in s.divisibility:
        size = as_expr(sizes[d])
        if size.is_number:
            continue
        counts = [as_expr(p.mesh.size(a)) for a in axes]
        symbolic = frozenset(n for n in counts if not n.is_number)
        known = math.prod(int(n) for n in counts if n.is_number)
        if symbolic and symbolic not in groups.get(size, []):
            groups.setdefault(size, []).append(symbolic)
        floors[size] = max(floors.get(size, Fraction(1)), Fraction(known * 2 ** len(symbolic)))
    return _canonical(Domain.of(base.axes, groups, floors))


def _union(a: Domain, b: Domain) -> Domain:
    groups = {d: list(g) for d, g in a.groups.items()}
    for d, gs in b.groups.items():
        for g in gs:
            if g not in groups.setdefault(d, []):
                groups[d].append(g)
    floors = dict(a.floors)
    for d, f in b.floors.items():
        floors[d] = max(floors.get(d, 0), f)
    return _canonical(Domain.of(a.axes | b.axes, groups, floors))


_DOMAINS: dict[tuple, Domain] = {}


def _canonical(d: Domain) -> Domain:
    """One object for each domain (the strategies of a plan share a few): what is proved or solved on
    it (kept in its memo, and by :func:`_solved`) is worked out once."""
    key = (
        d.axes,
        frozenset((k, frozenset(gs)) for k, gs in d.groups.items()),
        frozenset((k, Fraction(f)) for k, f in d.floors.items()),
    )
    found = _DOMAINS.get(key)
    if found is None:
        if len(_DOMAINS) > 4096:
            _DOMAINS.clear()
        found = _DOMAINS[key] = d
    return found


_SOLVED: dict[tuple, list[list[Relation]]] = {}


def _solved(p: Signomial, q: Signomial, x, domain: Domain, split: bool | str) -> list[list[Relation]]:
    """``p < q`` solved for ``x`` on ``domain`` (see :func:`~symshard.algebra.inequalities.solve`), each
    pair of terms once: the strategies of a plan share their terms, and neighbours share strategies."""
    key = (p, q, x, domain, split)
    found = _SOLVED.get(key)
    if found is None:
        if len(_SOLVED) > 65536:
            _SOLVED.clear()
        mirror = _SOLVED.get((q, p, x, domain, split)) if p != q else None
        found = _SOLVED[key] = _reversed(mirror) if mirror is not None else None  # type: ignore[assignment]
        if found is None:
            found = _SOLVED[key] = solve(Inequality.less(p, q, True), x, domain, split)
    return found


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _reversed(cases: list[list[Relation]]) -> list[list[Relation]] | None:
    """``q < p`` from ``p < q`` solved (two different sides): never where it always held and the other way
    round, and one bound turned round (both strict: they differ only where the sides are equal); None when
    the answer is anything else (solved afresh)."""
    if not cases:
        return [[]]
    if cases == [[]]:
        return []
    if len(cases) != 1 or len(cases[0]) != 1:
        return None
    (r,) = cases[0]
    src = r.source
    if r.target is None or not src.strict:
        return None
    turned = Inequality(-src.expr, True, src.right, src.left)
    return [[Relation(r.target, _FLIP[r.op], r.num, r.den, r.power, turned)]]


# -- solving the comparisons ------------------------------------------------------------------------


def _product(parts: Sequence[_Cases], domain: Domain) -> _Cases:
    """The conjunction of unions of cases, distributed, each case simplified (contradictions dropped)."""
    out: _Cases = [[]]
    for part in parts:
        grown: _Cases = []
        for a in out:
            for b in part:
                labelled = minimal([("", [*a, *b])], domain)
                grown.extend(rels for _, rels in labelled)
        out = grown
        if not out:
            break
    return out


SPLIT = "once"
"""How conditions are solved (:func:`~symshard.algebra.inequalities.solve`): with a case for each sign of
the solved symbol's coefficient only when that sign is one relation, else as one comparison of sums."""


def _less(p: Signomial | Sequence[Signomial], q: Signomial | Sequence[Signomial], x, domain, strict) -> _Cases:
    """``max(p) < max(q)``: every part of ``p`` below some part of ``q``."""
    ps = [p] if isinstance(p, Signomial) else list(p)
    qs = [q] if isinstance(q, Signomial) else list(q)
    unions = []
    for a in ps:
        union: _Cases = []
        for b in qs:
            union.extend(solve(Inequality.less(a, b, strict), x, domain, SPLIT))
        unions.append(union)
    return _product(unions, domain)


_Regimes = dict[str, _Cases]


def _regimes(c: _Costs, x, domain: Domain) -> _Regimes:
    """Where each term is the largest, as cases (a partition but for the boundaries): ``communication-bound``
    (``T_comms`` above both others), ``compute-bound`` (``T_math`` at least both, ties included) and
    ``memory-bound`` (``T_hbm`` above ``T_math`` and at least ``T_comms``), as
    :attr:`~symshard.planning.strategies.Strategy.bound` breaks ties."""
    out: _Regimes = {}
    if c.comms:
        out["communication-bound"] = _less(c.local, c.comms, x, domain, True)
    below: list[Sequence[Signomial]] = [c.comms] if c.comms else []
    if c.hbm is not None:
        below.append([c.hbm])
    out["compute-bound"] = _product([_less(b, c.math, x, domain, False) for b in below], domain)
    if c.hbm is not None:
        parts = [_less(c.math, c.hbm, x, domain, True)]
        if c.comms:
            parts.append(_less(c.comms, c.hbm, x, domain, False))
        out["memory-bound"] = _product(parts, domain)
    return out


def _active(c: _Costs, regime: str) -> list[Signomial]:
    """The terms a strategy's time is in ``regime``."""
    if regime == "communication-bound":
        return list(c.comms)
    if regime == "memory-bound":
        return [c.hbm] if c.hbm is not None else []
    return [c.math]


def _labelled(label: str, cases: _Cases, domain: Domain) -> Condition:
    """A union of cases under one label, in minimal form."""
    return Condition.of(minimal([(label, cs) for cs in cases], domain), domain, SPLIT)


def _wins(
    a: _Costs, b: _Costs, ia: int, ib: int, x, serial: bool, domain: Domain, ra: _Regimes, rb: _Regimes
) -> Condition:
    """When strategy ``a`` is faster than ``b``: the book's case analysis, one case per combination of the
    two strategies' regimes, the terms that are the time in each compared."""
    if serial:
        cases = _less(a.terms(True), b.terms(True), x, domain, True)
        return Condition.of(
            minimal([(say("no overlap: T_math + T_comms"), c) for c in cases], domain, merge_labels), domain, SPLIT
        )
    labelled: list[tuple[str, list[Relation]]] = []
    for a_regime, a_cases in ra.items():
        for b_regime, b_cases in rb.items():
            a_active, b_active = _active(a, a_regime), _active(b, b_regime)
            if not a_cases or not b_cases or not a_active or not b_active:
                continue
            better = _less(a_active, b_active, x, domain, True)
            for case in _product([a_cases, b_cases, better], domain):
                labelled.append((regime_label((ia, a_regime), (ib, b_regime)), case))
    return Condition.of(minimal(labelled, domain, merge_labels), domain, SPLIT)


def _beats(a: _Costs, b: _Costs, x, serial: bool, domain: Domain) -> Clauses:
    """When ``a`` is faster than ``b``, with the fewest relations: ``max(a's terms) < max(b's terms)``
    holds iff every term of ``a`` is below some term of ``b``: one clause per term of ``a`` (a union over
    ``b``'s terms), the clauses that always hold left out (``T_math`` of a strategy that splits the
    work over more devices is below the other's)."""
    ta, tb = a.terms(serial), b.terms(serial)
    clauses: list[Condition] = []
    for p in ta:
        union: list[tuple[str, list[Relation]]] = []
        for q in tb:
            union.extend(("", case) for case in _solved(p, q, x, domain, False))
        if any(not case for _, case in union):
            continue  # this term is always below one of b's
        clause = Condition.of(minimal(union, domain), domain, split=False)
        if clause.key() not in {c.key() for c in clauses}:
            clauses.append(clause)
    return Clauses(tuple(clauses), domain).simplified()


# -- which strategies can be the fastest, and their neighbours ---------------------------------------------


def _dominated(
    costs: dict[int, _Costs], needs: dict[int, frozenset], serial: bool, fixed: Mapping[sympy.Expr, float]
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


def _sweep(
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


def _consistent(
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


# -- compare -----------------------------------------------------------------------------------------------


def _resolve_symbol(name: str | sympy.Symbol, candidates: Sequence[tuple[sympy.Expr, ...]]) -> sympy.Symbol:
    """The symbol ``name`` stands for among the symbols of the strategies' cost formulas."""
    if isinstance(name, sympy.Symbol):
        return name
    pool: dict[str, sympy.Symbol] = {}
    for formulas in candidates:
        for e in formulas:
            for f in e.free_symbols:
                pool.setdefault(f.name, f)
    key = name.strip()
    for cand in (key, f"|{key}|", key.strip("|")):
        if cand in pool:
            return pool[cand]
    raise PlanError(
        say("'{name}' does not appear in the strategies' costs", name=name),
        hint=say(
            "solve for one of {names} (leave it out of --shape so it stays symbolic)", names=", ".join(sorted(pool))
        ),
    )


def _parts(strategies: Sequence[int | str] | str | None) -> list[int | str] | None:
    """The strategies asked for by number or name, read without the plan; None for ``'all'`` or the plan's."""
    if strategies is None or (isinstance(strategies, str) and strategies.strip().lower() in ("", "all")):
        return None
    parts: list[int | str] = []
    items = strategies.split(",") if isinstance(strategies, str) else list(strategies)
    for item in items:
        if isinstance(item, str):
            text = item.strip()
            if not text:
                continue
            if text.isdigit():
                parts.append(int(text))
                continue
            if isinstance(strategies, str) and not any(ch in text for ch in "→(_"):
                raise PlanError(
                    say("strategies takes strategy numbers (or names), not '{text}'", text=text),
                    hint=say("give the numbers the plan lists: strategies=[1, 2], '1,2' or 'all'"),
                )
            parts.append(text)
        elif isinstance(item, int) and not isinstance(item, bool):
            parts.append(item)
        else:
            raise PlanError(
                say("strategies takes strategy numbers (or names), not {item}", item=repr(item)),
                hint=say("give the numbers the plan lists: strategies=[1, 2], '1,2' or 'all'"),
            )
    return parts


def _picked(
    strategies: Sequence[int | str] | str | None, parts: list[int | str] | None, p: Plan
) -> tuple[str, list[tuple[int, Strategy]]]:
    """How to compare (``explicit``, ``all`` or ``best``) and the numbered candidates."""
    if parts is None and isinstance(strategies, str) and strategies.strip().lower() == "all":
        every = p.all_strategies()
        check_compared(str(p.matmul), "all", len(every))  # before each strategy is built
        return "all", list(enumerate(every, 1))
    if parts is None:
        return "best", list(enumerate(p.strategies, 1))
    out: list[tuple[int, Strategy]] = []
    for key in parts:
        s = p.strategy(key)  # range check; a name may be a strategy the plan does not list
        if isinstance(key, int):
            number = key
        else:
            listed = [i for i, t in enumerate(p.strategies, 1) if t == s]
            number = listed[0] if listed else len(p.strategies) + 1 + len(out)
        out.append((number, s))
    return "explicit", out


@memoized(maxsize=1024)
def compare(
    mm: Matmul | Plan | str,
    symbol: str | sympy.Symbol,
    *,
    strategies: Sequence[int | str] | str | None = None,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    dtype: str = "bf16",
    hardware: Hardware | str | None = None,
    model: str = "book",
    overlap: bool | None = None,
    hbm: bool = True,
) -> Comparison:
    """Derive when each strategy is communication-bound, which strategies can be the fastest, and where.

    The formulas stay symbolic in the hardware constants; with ``hardware`` the chip's wiring applies
    to the mesh and each condition is also given with its constants substituted (``B < 2550`` on a
    TPU v5p).

    Args:
        mm: the matmul (or an already symbolic :class:`~symshard.planning.strategies.Plan`).
        symbol: what to solve for: a dim (``"B"``), an axis (``"X"`` for ``|X|``), a constant.
        strategies: which strategies to compare. Default: the plan's (those that can win somewhere):
            those that can be the fastest are kept, and each is compared with its neighbours. ``'all'``:
            the same over every valid strategy. Numbers or names (a list, or text such as ``'1,2'``):
            those strategies, every pair compared.
        overlap: time as ``max(T_math, T_hbm, T_comms)`` (True, the chapter's default) or
            ``max(T_math, T_hbm) + T_comms`` (False); None takes the plan's setting.
        hbm: whether ``T_hbm`` (the local product reading and writing HBM) counts, as ``plan`` and
            ``symshard matmul`` count it by default: the plan compare makes is theirs, the same
            strategies numbered alike. False compares ``T_math`` with ``T_comms`` alone, as the chapter
            reasons (the plan made then leaves HBM out too; a plan given keeps its strategies and
            their numbers either way, and one that leaves HBM out is compared without it).

    Raises:
        PlanError: the symbol does not appear in the costs, or a strategy number is out of range.
    """
    hw = lookup_hardware(hardware) if hardware is not None else None
    parts = _parts(strategies)
    if parts is not None:
        check_compared("", "explicit", len(parts))  # before the plan is made
    if isinstance(mm, Plan):
        p = mm
    else:
        mesh_ = mesh
        if mesh is not None and not isinstance(mesh, Mesh) and hw is not None:
            mesh_ = Mesh(mesh, hardware=hw)
        elif mesh is None and hw is not None:
            m0 = plan(mm, None, shape, dtype=dtype, model=model, hbm=hbm).mesh
            mesh_ = Mesh({a.name: a.size for a in m0.axes}, hardware=hw)
        if parts is None and isinstance(strategies, str) and strategies.strip().lower() == "all":
            every = plan(mm, mesh_, shape, dtype=dtype, model=model, all=True, hbm=hbm).strategies  # a listing is quick
            check_compared(str(matmul(mm) if isinstance(mm, str) else mm), "all", len(every))
        # the plan symshard matmul lists for the same options: the same strategies, numbered alike
        p = plan(mm, mesh_, shape, dtype=dtype, model=model, hbm=hbm)
    mode, numbered = _picked(strategies, parts, p)
    if mode == "best":
        check_compared(str(p.matmul), mode, len(numbered))
    if not numbered:
        raise PlanError(
            say("there is nothing to compare: no strategy was picked"),
            hint=say("e.g. {example}", example="strategies=[1, 2]"),
        )
    # each strategy's formulas, written once: T_math, T_comms bandwidth-bound, T_hbm (where it counts)
    counted = p.hbm and hbm  # T_hbm where the plan counts it and it is not left out here
    formulas = {i: (s.compute_time, s.bandwidth_comm_time, *((s.hbm_time,) if counted else ())) for i, s in numbered}
    x = _resolve_symbol(symbol, list(formulas.values()))
    serial = not (p.overlap if overlap is None else overlap)
    values = {k: v for k, v in (dict(hw.constants(p.dtype)) if hw is not None else {}).items() if k != x}

    atoms: set[sympy.Expr] = {x}
    for exprs in formulas.values():
        for e in exprs:
            atoms |= e.free_symbols
    base = Domain.around(atoms)
    costs = {i: _costs(s, base, p, formulas[i]) for i, s in numbered}
    by_index = dict(numbered)

    dominated: dict[int, int] = {}
    neighbours: set[tuple[int, int]]
    if mode == "explicit":
        shown = sorted({i for i, _ in numbered})
        neighbours = {(min(a, b), max(a, b)) for a, b in itertools.combinations(shown, 2)}
        winners: list[int] = []
    else:
        needs = {i: frozenset(s.divisibility) for i, s in numbered}
        dominated = _dominated(costs, needs, serial, {k: float(v) for k, v in values.items()})
        alive = {i: costs[i].time(serial) for i in costs if i not in dominated}
        fixed = {k: float(v) for k, v in values.items()}
        ordered_atoms = sorted(atoms, key=str)
        found, pairs, seen, order = _sweep(alive, ordered_atoms, fixed, [c.domain for c in costs.values()])
        if not found:  # every sample a tie: the first strategy stands for them all
            found = {min(alive)}
        pairs = _consistent(order, found, {pr for pr in pairs if pr[0] in found and pr[1] in found}, seen)
        for i in alive:
            if i not in found:
                dominated[i] = 0  # never the fastest at a sample point (nothing proved at least as fast)
        winners = sorted(found)
        shown = winners if mode == "best" else [i for i, _ in numbered]
        neighbours = pairs

    chip = _OnChip(values, x) if values else None
    cases_by_index = {}
    regimes = []
    for i in shown:
        c = costs[i]
        if mode == "explicit" and not counted:
            cases_by_index[i] = _regimes(c, x, c.domain)
        # the chapter's question: is T_comms above T_math (B < C/W_ici)
        comm_cases = _less(c.math, c.comms, x, c.domain, True) if c.comms else []
        cond = _labelled(say("communication-bound"), comm_cases, c.domain)
        memory = None
        if c.hbm is not None:  # T_hbm the largest of the three: memory-bound whatever the other two say
            above = [_less(c.math, c.hbm, x, c.domain, True)]
            above += [_less(part, c.hbm, x, c.domain, False) for part in c.comms]
            memory = Clauses(tuple(_labelled(say("memory-bound"), cs, c.domain) for cs in above), c.domain)
            memory = memory.simplified()
        regimes.append(
            Regime(
                i,
                by_index[i],
                cond,
                cond.subs(values, x) if values else None,
                memory,
                memory.subs(values, x) if values and memory is not None else None,
            )
        )

    pairs_out = []
    for a, b in sorted(neighbours):
        dom = _union(costs[a].domain, costs[b].domain)
        a_wins: Condition | Clauses
        b_wins: Condition | Clauses
        if mode == "explicit" and not counted:  # the book's case analysis: a case per combination of regimes
            ra, rb = cases_by_index[a], cases_by_index[b]
            a_wins = _wins(costs[a], costs[b], a, b, x, serial, dom, ra, rb)
            b_wins = _wins(costs[b], costs[a], b, a, x, serial, dom, rb, ra)
        else:  # neighbours, or any pair once T_hbm counts (nine regime combinations): the fewest relations
            a_wins = _beats(costs[a], costs[b], x, serial, dom)
            b_wins = _beats(costs[b], costs[a], x, serial, dom)
        pairs_out.append(PairComparison(a, b, a_wins, b_wins, chip))
    if mode == "explicit":
        pairs_out = _in_given_order(pairs_out, [i for i, _ in numbered])

    regions = []
    for i in winners:
        mine: list[Condition] = []
        nbrs = []
        for pr in pairs_out:
            if i in (pr.a, pr.b):
                nbrs.append(pr.b if pr.a == i else pr.a)
                won = pr.a_wins if pr.a == i else pr.b_wins
                mine.extend(won.parts if isinstance(won, Clauses) else (won,))
        unique = list({c.key(): c for c in mine}.values())
        condition = Clauses(tuple(unique), costs[i].domain).simplified()
        regions.append(Region(i, by_index[i], tuple(nbrs), condition, chip))
    assumptions = (
        say("collective times are bandwidth-bound (hop latency left out), as the chapter reasons"),
        _time_said(serial, counted),
        say("every mesh axis has at least 2 devices (signs of |X| - 1 and the like are decided with that)"),
        say("solved for {symbol} > 0; other symbols are positive", symbol=str(x)),
        say("every dim is at least the number of devices that shard it (it is a multiple of it)"),
        *p.assumptions,
    )
    return Comparison(
        p,
        x,
        tuple(regimes),
        tuple(pairs_out),
        hw,
        assumptions,
        tuple(numbered),
        tuple(regions),
        tuple(sorted(dominated.items())),
        base,
        mode,
        serial,
        counted,
    )


def _time_said(serial: bool, hbm: bool) -> str:
    """How a strategy's time is weighed, in the words of the comparison's header."""
    if hbm:
        return (
            say("time = max(T_math, T_hbm) + T_comms (no overlap)")
            if serial
            else say("time = max(T_math, T_hbm, T_comms)")
        )
    return say("time = T_math + T_comms (no overlap)") if serial else say("time = max(T_math, T_comms)")


def check_compared(product: str, mode: str, count: int) -> None:
    """Refuse, before any work, more strategies than :data:`MAX_COMPARED` to find winners among (``mode``
    ``'all'`` or ``'best'``, of the matmul ``product``), or more than :data:`MAX_PAIRED` to compare pair by
    pair (``'explicit'``).

    Raises:
        TooLargeError: too many, with the number and how to pick fewer.

    Examples:
        >>> check_compared("X[B, D] · Y[D_X, F] -> Z[B, F]", "explicit", 3)
    """
    if mode == "explicit" and count > MAX_PAIRED:
        raise TooLargeError(
            say(
                "comparing {count} {count:strategy|strategies} pair by pair is {pairs} comparisons, more than "
                "compare takes ({limit} {limit:strategy|strategies})",
                count=count,
                pairs=f"{count * (count - 1) // 2:,}",
                limit=MAX_PAIRED,
            ),
            hint=say("pick fewer strategies (--strategies 1,2), or leave them out to compare those that can win"),
        )
    if mode != "explicit" and count > MAX_COMPARED:
        raise TooLargeError(
            say(
                "{matmul} has {count} {count:strategy|strategies} to compare, more than compare takes ({limit})",
                matmul=product,
                count=f"{count:,}",
                limit=f"{MAX_COMPARED:,}",
            ),
            hint=say("compare only those that can win (without --strategies all), pick some (--strategies 1,2), "
                     "or use fewer mesh axes")
            if mode == "all"
            else say("pick some of them (--strategies 1,2), or use fewer mesh axes"),
        )  # fmt: skip


def _in_given_order(pairs: list[PairComparison], order: list[int]) -> list[PairComparison]:
    """Pairs of explicitly listed strategies in the order of the list (``[2, 1]``: the pair (2, 1))."""
    out = []
    for a, b in itertools.combinations(order, 2):
        pr = next(p for p in pairs if {p.a, p.b} == {a, b})
        if pr.a != a:
            pr = PairComparison(a, b, pr.b_wins, pr.a_wins, pr.chip)
        out.append(pr)
    return out

"""Crossover conditions between strategies: when is a plan communication-bound, which strategies can be
the fastest at all, and where each one is.

Each strategy's time is ``max(T_math, T_comms)`` (bandwidth-bound collective times, as the chapter
reasons). For a chosen symbol ``x`` (a dim such as B, an axis size, a hardware constant) :func:`compare`

1. keeps the strategies that can be the fastest anywhere: those no other strategy is at least as fast
   as everywhere it is valid (decided exactly on the sums of monomials the times are,
   :mod:`symshard.algebra.monomials`), then those a sweep over sample points finds fastest somewhere;
2. finds their *neighbours*, the pairs whose regions touch, from the same sweep (lines along every
   symbol through many points; a strategy whose conditions hold at a sample point where another is
   faster gets that one as a neighbour too, until the regions agree with every sample);
3. derives each strategy's regime boundary (communication-bound iff ``T_comms > T_math``, solved for
   ``x``: ``B < C/W_ici``) and, for each pair of neighbours, when each is faster: one case per
   combination of regimes, the active terms compared, every case solved and simplified in the book's
   form (:mod:`symshard.algebra.inequalities`);
4. describes each strategy's region: where it beats each of its neighbours.

With ``strategies`` listed explicitly, every pair of them is compared, as before. A condition is a
:class:`~symshard.algebra.conditions.Condition`: a union of labelled cases, printable as text and LaTeX,
evaluable at a point and on a named chip (``C/W_ici`` becomes 2550 on a TPU v5p).

Examples:
    >>> c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies=[2, 1])
    >>> c.regimes[1].communication_bound.text()
    'B < C/W_ici'
    >>> compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies="1,2").pairs[0].a_wins.cases[0].text()
    'D < 2·C·|X|/W_ici and B < C/W_ici and B < D/2'
"""

from __future__ import annotations

import itertools
import math
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
    """When one strategy is communication-bound (and so, otherwise, compute-bound)."""

    index: int
    strategy: Strategy
    communication_bound: Condition
    numeric: Condition | None

    def __repr__(self) -> str:
        from ..shown import summary

        numeric = None if self.numeric is None else self.numeric.formula()
        return summary("Regime", self.strategy.name, {"index": self.index,
                       "communication_bound": self.communication_bound.formula(), "numeric": numeric})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class PairComparison:
    """When strategy ``a`` is faster than strategy ``b``."""

    a: int
    b: int
    a_wins: Condition | Clauses
    b_wins: Condition | Clauses
    numeric_a_wins: Condition | Clauses | None
    numeric_b_wins: Condition | Clauses | None

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
    regions touch its own), as one conjunction of the pairs' clauses."""

    index: int
    strategy: Strategy
    neighbours: tuple[int, ...]
    condition: Clauses
    numeric: Clauses | None = None

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

    def time(self, index: int) -> Maximum:
        """Strategy ``index``'s time as the comparison weighs it: ``T_math`` and the bandwidth-bound
        ``T_comms`` (the busiest link's total), overlapped or added as compared, on sums of monomials."""
        s = self.strategy(index)
        return _costs(s, self.domain or Domain.around(s.compute_time.free_symbols), self.plan).time(self.serial)

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
    """A strategy's ``T_math`` and the parts of ``T_comms`` (the busiest link's total is the largest part)."""

    math: Signomial
    comms: tuple[Signomial, ...]
    domain: Domain

    def time(self, serial: bool) -> Maximum:
        if serial:
            return Maximum.of([self.math + c for c in self.comms] or [self.math])
        return Maximum.of([self.math, *self.comms])


def _costs(s: Strategy, base: Domain, p: Plan) -> _Costs:
    math_ = from_expr(s.compute_time).parts
    comm = from_expr(s.bandwidth_comm_time).reduced(base)
    domain = _domain(s, p, base)
    parts = tuple(c for c in comm.parts if not c.is_zero)
    return _Costs(math_[0], parts, domain)


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
    return Domain.of(base.axes, groups, floors)


def _union(a: Domain, b: Domain) -> Domain:
    groups = {d: list(g) for d, g in a.groups.items()}
    for d, gs in b.groups.items():
        for g in gs:
            if g not in groups.setdefault(d, []):
                groups[d].append(g)
    floors = dict(a.floors)
    for d, f in b.floors.items():
        floors[d] = max(floors.get(d, 0), f)
    return Domain.of(a.axes | b.axes, groups, floors)


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


def _less(p: Signomial | Sequence[Signomial], q: Signomial | Sequence[Signomial], x, domain, strict) -> _Cases:
    """``max(p) < max(q)``: every part of ``p`` below some part of ``q``."""
    ps = [p] if isinstance(p, Signomial) else list(p)
    qs = [q] if isinstance(q, Signomial) else list(q)
    unions = []
    for a in ps:
        union: _Cases = []
        for b in qs:
            union.extend(solve(Inequality.less(a, b, strict), x, domain))
        unions.append(union)
    return _product(unions, domain)


def _regimes(c: _Costs, x, domain: Domain) -> tuple[_Cases, _Cases]:
    """(communication-bound cases, compute-bound cases)."""
    if not c.comms:
        return [], [[]]
    return _less(c.math, c.comms, x, domain, True), _less(c.comms, c.math, x, domain, False)


def _wins(a: _Costs, b: _Costs, ia: int, ib: int, x, serial: bool, domain: Domain, ra, rb) -> Condition:
    """When strategy ``a`` is faster than ``b``."""
    if serial:
        ta = [a.math + c for c in a.comms] or [a.math]
        tb = [b.math + c for c in b.comms] or [b.math]
        cases = _less(ta, tb, x, domain, True)
        return Condition.of(
            minimal([(say("no overlap: T_math + T_comms"), c) for c in cases], domain, merge_labels), domain
        )
    labelled: list[tuple[str, list[Relation]]] = []
    for na, (a_regime, a_active) in enumerate((("communication-bound", a.comms), ("compute-bound", [a.math]))):
        for nb, (b_regime, b_active) in enumerate((("communication-bound", b.comms), ("compute-bound", [b.math]))):
            if not ra[na] or not rb[nb] or not a_active or not b_active:
                continue
            better = _less(a_active, b_active, x, domain, True)
            for case in _product([ra[na], rb[nb], better], domain):
                labelled.append((regime_label((ia, a_regime), (ib, b_regime)), case))
    return Condition.of(minimal(labelled, domain, merge_labels), domain)


def _beats(a: _Costs, b: _Costs, x, serial: bool, domain: Domain) -> Clauses:
    """When ``a`` is faster than ``b``, with the fewest relations: ``max(a's terms) < max(b's terms)``
    holds iff every term of ``a`` is below some term of ``b``: one clause per term of ``a`` (a union over
    ``b``'s terms), the clauses that always hold left out (``T_math`` of a strategy that splits the
    work over more devices is below the other's)."""
    ta = ([a.math + c for c in a.comms] or [a.math]) if serial else [a.math, *a.comms]
    tb = ([b.math + c for c in b.comms] or [b.math]) if serial else [b.math, *b.comms]
    clauses: list[Condition] = []
    for p in ta:
        union: list[tuple[str, list[Relation]]] = []
        for q in tb:
            union.extend(("", case) for case in solve(Inequality.less(p, q, True), x, domain, split=False))
        if any(not case for _, case in union):
            continue  # this term is always below one of b's
        clause = Condition.of(minimal(union, domain), domain, split=False)
        if clause.key() not in {c.key() for c in clauses}:
            clauses.append(clause)
    return Clauses(tuple(clauses), domain)


# -- which strategies can be the fastest, and their neighbours ---------------------------------------------


def _dominated(costs: dict[int, _Costs], needs: dict[int, frozenset], serial: bool) -> dict[int, int]:
    """Each strategy some other is at least as fast as everywhere it is valid (valid there too), with it."""
    times = {i: c.time(serial) for i, c in costs.items()}
    out: dict[int, int] = {}
    for j in costs:
        for i in costs:
            if i == j or i in out or not needs[i] <= needs[j]:
                continue
            dom = costs[j].domain
            if less_equal(times[i], times[j], dom) and (
                i < j or not (needs[j] <= needs[i] and less_equal(times[j], times[i], dom))
            ):
                out[j] = i
                break
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


def _sweep(
    times: dict[int, Maximum], atoms: Sequence[sympy.Expr], fixed: Mapping[sympy.Expr, float], domains: Sequence[Domain]
) -> tuple[set[int], set[tuple[int, int]], list[tuple[dict, int]]]:
    """Which strategies are the fastest somewhere, which regions touch, and every point with its winner:
    lines along each free symbol through random points."""
    free = [a for a in atoms if a not in fixed]
    bases = _sample_points(atoms, fixed, domains, 48 if len(times) > 2 else 16, 17)
    order = sorted(times)
    winners: set[int] = set()
    pairs: set[tuple[int, int]] = set()
    seen: list[tuple[dict, int]] = []

    def winner(pt) -> int | None:
        values = [(times[i].value(pt), i) for i in order]
        best = min(values)
        close = [i for v, i in values if v <= best[0] * (1 + 1e-9)]
        return close[0] if len(close) == 1 else None

    for base in bases:
        for a in free:
            lo = 2.0 if is_axis_symbol(a) else base[a] / 2**12
            hi = 64.0 if is_axis_symbol(a) else base[a] * 2**12
            if not (a.is_Symbol and (a.is_integer or is_axis_symbol(a))):
                lo, hi = base[a] / 100, base[a] * 100
            prev = None
            for k in range(25):
                pt = dict(base)
                pt[a] = math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * k / 24)
                w = winner(pt)
                if w is None:
                    continue
                winners.add(w)
                seen.append((pt, w))
                if prev is not None and prev != w:
                    pairs.add((min(prev, w), max(prev, w)))
                prev = w
    return winners, pairs, seen


def _consistent(
    times: dict[int, Maximum], winners: set[int], pairs: set[tuple[int, int]], seen
) -> set[tuple[int, int]]:
    """Neighbours enough for the regions to agree with every sample: where a strategy beats all its
    neighbours at a point another is faster at, that one is a neighbour too."""
    pairs = set(pairs)
    for _ in range(8):
        added = False
        nbrs = {i: {b if a == i else a for a, b in pairs if i in (a, b)} for i in winners}
        for pt, w in seen:
            tw = times[w].value(pt)
            for a in winners:
                if a == w or (min(a, w), max(a, w)) in pairs:
                    continue
                ta = times[a].value(pt)
                if ta <= tw * (1 + 1e-9):
                    continue
                if all(ta < times[b].value(pt) for b in nbrs[a]):
                    pairs.add((min(a, w), max(a, w)))
                    added = True
        if not added:
            break
    return pairs


# -- compare -----------------------------------------------------------------------------------------------


def _resolve_symbol(name: str | sympy.Symbol, candidates: Sequence[Strategy]) -> sympy.Symbol:
    if isinstance(name, sympy.Symbol):
        return name
    pool: dict[str, sympy.Symbol] = {}
    for s in candidates:
        for e in (s.compute_time, s.bandwidth_comm_time):
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
        overlap: time as ``max(T_math, T_comms)`` (True, the chapter's default) or the sum (False);
            None takes the plan's setting.

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
            m0 = plan(mm, None, shape, dtype=dtype, model=model, hbm=False).mesh
            mesh_ = Mesh({a.name: a.size for a in m0.axes}, hardware=hw)
        if parts is None and isinstance(strategies, str) and strategies.strip().lower() == "all":
            every = plan(
                mm, mesh_, shape, dtype=dtype, model=model, all=True, hbm=False
            ).strategies  # a listing is quick
            check_compared(str(matmul(mm) if isinstance(mm, str) else mm), "all", len(every))
        # the chapter's reasoning: T_math against the collectives' bandwidth time (HBM left out here)
        p = plan(mm, mesh_, shape, dtype=dtype, model=model, hbm=False)
    mode, numbered = _picked(strategies, parts, p)
    if mode == "best":
        check_compared(str(p.matmul), mode, len(numbered))
    if not numbered:
        raise PlanError(
            say("there is nothing to compare: no strategy was picked"),
            hint=say("e.g. {example}", example="strategies=[1, 2]"),
        )
    x = _resolve_symbol(symbol, [s for _, s in numbered])
    serial = not (p.overlap if overlap is None else overlap)
    values = {k: v for k, v in (dict(hw.constants(p.dtype)) if hw is not None else {}).items() if k != x}

    atoms: set[sympy.Expr] = {x}
    for _, s in numbered:
        atoms |= s.compute_time.free_symbols | s.bandwidth_comm_time.free_symbols
    base = Domain.around(atoms)
    costs = {i: _costs(s, base, p) for i, s in numbered}
    by_index = dict(numbered)

    dominated: dict[int, int] = {}
    neighbours: set[tuple[int, int]]
    if mode == "explicit":
        shown = sorted({i for i, _ in numbered})
        neighbours = {(min(a, b), max(a, b)) for a, b in itertools.combinations(shown, 2)}
        winners: list[int] = []
    else:
        needs = {i: frozenset(s.divisibility) for i, s in numbered}
        dominated = _dominated(costs, needs, serial)
        alive = {i: costs[i].time(serial) for i in costs if i not in dominated}
        fixed = {k: float(v) for k, v in values.items()}
        ordered_atoms = sorted(atoms, key=str)
        found, pairs, seen = _sweep(alive, ordered_atoms, fixed, [c.domain for c in costs.values()])
        if not found:  # every sample a tie: the first strategy stands for them all
            found = {min(alive)}
        pairs = _consistent(alive, found, {pr for pr in pairs if pr[0] in found and pr[1] in found}, seen)
        for i in alive:
            if i not in found:
                dominated[i] = 0  # never the fastest at a sample point (nothing proved at least as fast)
        winners = sorted(found)
        shown = winners if mode == "best" else [i for i, _ in numbered]
        neighbours = pairs

    cases_by_index = {}
    regimes = []
    for i in shown:
        c = costs[i]
        comm_cases, math_cases = _regimes(c, x, c.domain)
        cases_by_index[i] = (comm_cases, math_cases)
        cond = Condition.of(minimal([(say("communication-bound"), cs) for cs in comm_cases], c.domain), c.domain)
        regimes.append(Regime(i, by_index[i], cond, cond.subs(values, x) if values else None))

    pairs_out = []
    for a, b in sorted(neighbours):
        dom = _union(costs[a].domain, costs[b].domain)
        a_wins: Condition | Clauses
        b_wins: Condition | Clauses
        if mode == "explicit":  # the book's case analysis: one case per combination of regimes
            ra, rb = cases_by_index[a], cases_by_index[b]
            a_wins = _wins(costs[a], costs[b], a, b, x, serial, dom, ra, rb)
            b_wins = _wins(costs[b], costs[a], b, a, x, serial, dom, rb, ra)
        else:  # neighbours: the fewest relations
            a_wins = _beats(costs[a], costs[b], x, serial, dom)
            b_wins = _beats(costs[b], costs[a], x, serial, dom)
        pairs_out.append(
            PairComparison(
                a,
                b,
                a_wins,
                b_wins,
                a_wins.subs(values, x) if values else None,
                b_wins.subs(values, x) if values else None,
            )
        )
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
        condition = Clauses(tuple(unique), costs[i].domain)
        numeric = condition.subs(values, x) if values else None
        regions.append(Region(i, by_index[i], tuple(nbrs), condition, numeric))
    assumptions = (
        say("collective times are bandwidth-bound (hop latency left out), as the chapter reasons"),
        say("time = T_math + T_comms (no overlap)") if serial else say("time = max(T_math, T_comms)"),
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
    )


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
            pr = PairComparison(a, b, pr.b_wins, pr.a_wins, pr.numeric_b_wins, pr.numeric_a_wins)
        out.append(pr)
    return out

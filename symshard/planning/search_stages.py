"""One stage of the best-sharding search: every way to run one matmul of a chain from each sharding the
stage before leaves, costed as integers and pruned to their fronts.

Part of :mod:`symshard.planning`, below :mod:`~symshard.planning.search`, whose dynamic program asks
:func:`stage_options` for each matmul of the chain. An operand is stored as its compute sharding, or
split further along axes the product does not use (its storages, without those another beats in every
way); a product's partial sums are all-reduced, reduce-scattered onto a dim or, between stages, kept.
The ways are listed first (:class:`_Ways`), then compared exactly but on integers: every time and byte
count is rational, so each is scaled by the least common multiple of their denominators
(:class:`_Scale`). What is kept is a :class:`StageOption` each.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import PlanError
from ..notation.arrays import Array, Dim
from ..notation.einsums import local_product
from .builder import Builder
from .costenv import CostEnv
from .rawcosts import Value, exact_ratio
from .shardings import KEEP, compute_array

__all__ = ["StageOption", "stage_options"]


@dataclass(frozen=True, slots=True)
class StageOption:
    """One way to run one matmul of the chain: what it stores, which sharding it starts from and leaves its
    result in, its costs as ints of its stage's scales (:func:`_fronts`), and what its exact costs and its
    :class:`~symshard.planning.strategies.Strategy` are worked out from if it is picked
    (:func:`~symshard.planning.search._candidate`)."""

    carried_in: Array | None
    carried_out: Array
    stored: tuple[tuple[str, Array], ...]
    lhs: Array  # the operands as they start: stored, or carried
    rhs: Array
    stage: _Stage
    stored_bytes: int
    time: int
    comm: int
    transient: int  # bytes the stage needs besides what is stored (its temporaries, the carried array)
    routes: tuple  # the route of each leg: lhs, rhs, result


def _extensions(arr: Array, used: set[str], free_axes: Sequence[str]) -> list[Array]:
    """``arr`` split further along axes it does not use (each on one of its dims, or not at all)."""
    spare = [a for a in free_axes if a not in used]
    out = []
    for combo in itertools.product(*[[None, *arr.dim_names] for _ in spare]):
        extra: dict[str, list[str]] = {}
        for a, d in zip(spare, combo, strict=True):
            if d is not None:
                extra.setdefault(d, []).append(a)
        out.append(
            Array(arr.name, tuple(Dim(d.name, d.axes + tuple(extra.get(d.name, ()))) for d in arr.dims), arr.unreduced)
        )
    return out


def _resolutions(local: Array, final: bool) -> list[Array]:
    """Shardings a product can be left in: each partial-sum axis all-reduced, reduce-scattered
    onto a dim, or (between stages) kept unreduced."""
    axes = sorted(local.unreduced)
    options_per_axis = [[None, *local.dim_names] + ([KEEP] if not final else []) for _ in axes]
    out = []
    for combo in itertools.product(*options_per_axis):
        extra: dict[str, list[str]] = {}
        keep = set()
        for a, c in zip(axes, combo, strict=True):
            if c == KEEP:
                keep.add(a)
            elif c is not None:
                extra.setdefault(c, []).append(a)
        try:
            out.append(
                Array(
                    local.name,
                    tuple(Dim(d.name, d.axes + tuple(extra.get(d.name, ()))) for d in local.dims),
                    frozenset(keep),
                )
            )
        except Exception:  # pragma: no cover - axes are distinct by construction
            continue
    return out


def stage_options(
    mm, carried_states, carried_name, fixed, env, builder, rank, names, target, last, overlap
) -> tuple[dict[Array | None, list[StageOption]], tuple[int, int]]:
    """Every way to run one matmul from each carried sharding, costed; of those that start from the same
    sharding and leave the same result, only those no other is at least as fast with no more bytes stored
    and no larger temporaries. What does not depend on the carried sharding is worked out once.

    The ways are listed first (:class:`_Ways`), then compared (:func:`_fronts`). No way is met twice: the
    blocks a compute sharding multiplies name every axis it uses (each dim of a matmul is an operand's), so
    two compute shardings never share their blocks, and within one the carried states, storages and
    results are distinct."""
    # partial sums a carried array may keep through the product make no compute sharding of their own here
    # (the written operand has none), so the compute shardings are the same for every carried state
    per_axis = [[None] if env.axis[a] == 1 else [None, *mm.dims] for a in names]
    operands = [mm.lhs, mm.rhs]
    roles = ("lhs", "rhs")
    target_dims, out_name = mm.out_dims, mm.out_name
    groups: list[_Ways] = []
    results: dict[Array, Array] = {}
    # bytes per device of each array met, by identity: every array here lives as long as this call, and the
    # ways run to tens of thousands, where hashing arrays would be most of what they cost
    sizes: dict[int, Value] = {}

    def size(arr: Array) -> Value:
        found = sizes.get(id(arr))
        if found is None:
            found = sizes[id(arr)] = env.bytes(arr)
        return found

    # each operand's sources (the carried array, or its storages) for one block, those that hold no partial
    # sums the product does not keep: (array, what is stored or None for the carried array, its bytes, its
    # routes to the block); by identity of the carried array and the block, one object per block
    blocks: dict[Array, Array] = {}
    known: dict[tuple[int, int, int], list[tuple]] = {}
    carries = [op.name == carried_name for op in operands]

    def sources(k: int, carried: Array | None, block: Array) -> list[tuple]:
        key = (k, id(carried), id(block))
        found = known.get(key)
        if found is None:
            op, role = operands[k], roles[k]
            if carried is not None:
                arrays: tuple[Array, ...] = (carried,)
            elif op.name in fixed:
                arrays = (fixed[op.name],)
            else:
                arrays = _storages(block, names, env, builder, role)
            found = known[key] = [
                (arr, None if carried is not None else (op.name, arr), size(arr), builder.kept_routes(arr, block, role))
                for arr in arrays
                if block.unreduced <= arr.unreduced
            ]
        return found

    for combo in itertools.product(*per_axis):
        sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
        computes = [compute_array(op, sigma, rank) for op in operands]
        try:
            local = local_product(computes[0], computes[1], target_dims, out_name)
        except PlanError:
            continue
        if not (env.fits(computes[0]) and env.fits(computes[1]) and env.fits(local)):
            continue
        lhs_c, rhs_c = (blocks.setdefault(c, c) for c in computes)
        if target is not None and target.name != local.name:  # the product takes the required result's name
            local = Array(target.name, local.dims, local.unreduced)
        targets = [target] if target is not None else [x for x in _resolutions(local, last) if env.fits(x)]
        # one object for each result, whichever compute sharding leaves it: the fronts and the next stage's
        # states are keyed by it, and equal arrays that are not the same object compare field by field
        targets = [results.setdefault(t, t) for t in targets if t.unreduced <= local.unreduced]
        flops = env.flops(lhs_c, rhs_c)
        sharding = tuple((a, sigma.get(a)) for a in names)
        stage = _Stage(
            lhs_c, rhs_c, sharding, local, size(local), flops, exact_ratio(flops, env.flops_rate),
            env.hbm_time(lhs_c, rhs_c, local),
        )  # fmt: skip
        ways_out = [builder.kept_routes(local, t, "out") for t in targets]
        for carried in carried_states:
            lhs = sources(0, carried if carries[0] else None, lhs_c)
            rhs = sources(1, carried if carries[1] else None, rhs_c)
            if lhs and rhs:
                for tgt, legs_o in zip(targets, ways_out, strict=True):
                    groups.append(_Ways(carried, tgt, stage, legs_o, lhs, rhs))
    return _fronts(groups, env, overlap)


@dataclass(frozen=True, slots=True)
class _Stage:
    """What one compute sharding of a matmul gives: the blocks multiplied, its product, FLOPs, compute time
    and HBM time."""

    lhs: Array
    rhs: Array
    sharding: tuple[tuple[str, str | None], ...]
    local: Array
    local_bytes: Value
    flops: Value
    compute_time: Value
    hbm_time: Value = 0

    @property
    def local_time(self) -> Value:
        """The local product's time: the larger of its compute and HBM times."""
        return self.hbm_time if self.hbm_time > self.compute_time else self.compute_time


@dataclass(frozen=True, slots=True)
class _Ways:
    """The ways to run one matmul from one carried sharding to one result around the product of ``stage``:
    every source of each operand (``lhs``, ``rhs``: the array, what is stored or None for the carried array,
    its bytes, its routes to the block), every route of each leg, the result's among ``legs_o``."""

    carried: Array | None
    target: Array
    stage: _Stage
    legs_o: tuple
    lhs: list[tuple]
    rhs: list[tuple]


class _Scale:
    """Exact rational values as ints: each multiplied by the least common multiple of their denominators
    (ints compare and add without the gcd every ``Fraction`` operation takes).

    Examples:
        >>> from fractions import Fraction
        >>> per = _Scale([Fraction(1, 6), Fraction(3, 4), 2])
        >>> per.factor, per(Fraction(1, 6)), per(Fraction(3, 4)), per(2)
        (12, 2, 9, 24)
    """

    def __init__(self, values) -> None:
        factor = 1
        for v in values:
            if v.denominator != 1:
                factor = math.lcm(factor, v.denominator)
        self.factor = factor

    def __call__(self, value: Value) -> int:
        if isinstance(value, int):
            return value * self.factor
        return value.numerator * (self.factor // value.denominator)


def _fronts(
    groups: Sequence[_Ways], env: CostEnv, overlap: bool
) -> tuple[dict[Array | None, list[StageOption]], tuple[int, int]]:
    """Of each carried sharding's ways to the same result, those no other is at least as fast with no more
    stored and no more temporary bytes (the first of equals), in the order they were found.

    The ways are compared exactly, but on integers: every time and byte count here is a rational number,
    so each is scaled by the least common multiple of their denominators (:class:`_Scale`) and compared
    as an int, which orders them as the exact values do, ties included. ``Fraction`` arithmetic (a gcd
    per operation) is left for the candidates ranked in the end (:func:`~symshard.planning.search._candidate`).
    Returns the ways kept for each carried sharding and the two scales (of times, of bytes)."""
    sides = {id(s): s for g in groups for s in (g.lhs, g.rhs)}.values()
    routes = {id(r): r for legs in itertools.chain((g.legs_o for g in groups), (x[3] for s in sides for x in s))
              for r in legs}.values()  # fmt: skip
    times = _Scale(
        itertools.chain(
            (g.stage.local_time for g in groups),
            (v for r in routes for v in (r.leg.comm, *(t for _, t in r.leg.loads)))
        )
    )  # fmt: skip
    space = _Scale(
        itertools.chain(
            (g.stage.local_bytes for g in groups),
            (x[2] for s in sides for x in s),
            (v for r in routes for v in (r.leg.peak, r.leg.final)),
        )
    )
    serial = env.comm_overlap == "none"
    # per route: its communication time, its links' busy times (None if it uses none), peak and final bytes
    scaled = {
        id(r): (
            times(r.leg.comm),
            {link: times(t) for link, t in r.leg.loads} if r.leg.loads else None,
            space(r.leg.peak),
            space(r.leg.final),
            r,
        )
        for r in routes
    }
    # per source of an operand: the bytes it adds to what is stored and to what is not (the carried array),
    # its routes scaled, and the source
    sourced = {
        id(s): [
            (0, space(x[2]), [scaled[id(r)] for r in x[3]], x)
            if x[1] is None
            else (space(x[2]), 0, [scaled[id(r)] for r in x[3]], x)
            for x in s
        ]
        for s in sides
    }
    fronts: dict[tuple, list[tuple]] = {}
    for g in groups:
        st = g.stage
        compute = times(st.local_time)
        local = space(st.local_bytes)
        front = fronts.setdefault((g.carried, g.target), [])
        legs_o = [scaled[id(c)] for c in g.legs_o]
        rhs_side = sourced[id(g.rhs)]
        for stored_l, carried_l, routes_l, src_l in sourced[id(g.lhs)]:
            for stored_r, carried_r, routes_r, src_r in rhs_side:
                # Builder.memory less what is stored: the carried operand and the busiest moment's temporaries
                stored, base = stored_l + stored_r, carried_l + carried_r
                for comm_a, loads_a, peak_a, final_a, a in routes_l:
                    for comm_b, loads_b, peak_b, final_b, b in routes_r:
                        # CostEnv.join of the two legs so far: the one leg with links, or each link's total
                        if loads_a is None:
                            single, merged = (comm_b, loads_b) if loads_b is not None else (0, None)
                        elif loads_b is None:
                            single, merged = comm_a, loads_a
                        else:
                            single, merged = None, dict(loads_a)
                            for link, t in loads_b.items():
                                merged[link] = merged[link] + t if link in merged else t
                        peak_ab = max(peak_a, final_a + peak_b, final_a + final_b + local)
                        for comm_c, loads_c, peak_c, _, c in legs_o:
                            if serial:
                                comm = comm_a + comm_b + comm_c
                            elif loads_c is None:
                                comm = single if single is not None else max(merged.values())  # type: ignore[union-attr]
                            elif merged is None:
                                comm = comm_c
                            else:
                                busy = dict(merged)
                                for link, t in loads_c.items():
                                    busy[link] = busy[link] + t if link in busy else t
                                comm = max(busy.values())
                            time = (comm if comm > compute else compute) if overlap else compute + comm
                            transient = base + (peak_ab if peak_ab >= peak_c else peak_c)
                            for o in front:
                                if o[0] <= time and o[1] <= stored and o[2] <= transient:
                                    break
                            else:
                                front[:] = [
                                    o for o in front if not (time <= o[0] and stored <= o[1] and transient <= o[2])
                                ]
                                front.append((time, stored, transient, comm, g, src_l, src_r, (a, b, c)))
    out: dict[Array | None, list[StageOption]] = {}
    for (carried, _), front in fronts.items():
        kept = out.setdefault(carried, [])
        for time, stored, transient, comm, g, src_l, src_r, routes in front:
            what = tuple(x[1] for x in (src_l, src_r) if x[1] is not None)
            kept.append(
                StageOption(carried, g.target, what, src_l[0], src_r[0], g.stage, stored, time, comm, transient, routes)
            )
    return out, (times.factor, space.factor)


def _storages(comp: Array, names: Sequence[str], env: CostEnv, builder: Builder, role: str) -> tuple[Array, ...]:
    """How an operand can be stored to reach its compute sharding ``comp``: ``comp`` split further along
    axes it does not use, without those another storage beats in every way (no more bytes, and for each
    of its routes to ``comp`` one at least as good: communication, links, peak bytes)."""
    key = (comp, tuple(names), role, id(builder))
    found = _STORAGES.get(key)
    if found is not None:
        return found
    used = set(comp.axes) | set(comp.unreduced)
    options = [x for x in _extensions(comp, used, names) if env.fits(x)]
    costs = []
    for x in options:
        routes = builder.kept_routes(x, comp, role)
        costs.append((env.bytes(x), [(r.leg.comm, r.links, r.leg.peak) for r in routes]))

    def beats(i: int, j: int) -> bool:
        (bi, ri), (bj, rj) = costs[i], costs[j]
        if bi > bj or not ri:
            return False
        if not all(any(c1 <= c2 and l1 <= l2 and p1 <= p2 for c1, l1, p1 in ri) for c2, l2, p2 in rj):
            return False
        tie = bi == bj and all(any(c2 <= c1 and l2 <= l1 and p2 <= p1 for c2, l2, p2 in rj) for c1, l1, p1 in ri)
        return not tie or i < j

    kept = tuple(
        x for j, x in enumerate(options) if costs[j][1] and not any(i != j and beats(i, j) for i in range(len(options)))
    )
    if len(_STORAGES) > 4096:
        _STORAGES.clear()
    _STORAGES[key] = kept
    return kept


_STORAGES: dict[tuple, tuple[Array, ...]] = {}

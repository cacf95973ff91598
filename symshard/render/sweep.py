"""A planned matmul swept along one dim: each strategy's time as an exact function, and its crossovers.

The planner costs a strategy at one set of sizes. Along one dim ``x`` its parts
scale in known ways: the FLOPs per device, and so ``T_math``, are proportional
to ``x``; a collective's bandwidth term is proportional to the bytes it moves,
so to ``x`` when ``x`` is a dim of the array it moves, and constant otherwise;
its latency term is constant. One costing at ``x0`` therefore fixes every
strategy's time for every ``x`` as a :class:`~symshard.render.piecewise.Piecewise`,
with the planner's own exact numbers and the same ``max``/sum rules.

From those functions :func:`sweep` finds, exactly, where the fastest strategy
changes and where the fastest one turns from communication- to compute-bound.

Examples:
    >>> import symshard as ss
    >>> p = ss.plan("X[B, D] · Y[D_X, F] -> Z[B, F]", "X=64", "B=4096,D=1024,F=4096", hardware="tpu-v5p")
    >>> s = sweep(p, "B")
    >>> [(str(e.x), e.kind) for e in s.events]
    [('2550', 'regime')]
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..algebra.dtypes import dtype_bytes
from ..errors import PlanError
from ..messages import say
from ..planning.strategies import Plan, Strategy
from .piecewise import Piecewise

__all__ = ["Curve", "Event", "Sweep", "sweep"]


def _exact(value: object) -> Fraction:
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    return Fraction(int(value.p), int(value.q))  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Curve:
    """One strategy's times along the dim.

    Attributes:
        index: the strategy's 1-based number among every valid strategy of the plan (``plan.all_strategies()``).
        strategy: the strategy.
        math: ``T_math``.
        comm: ``T_comms`` (its collectives, each latency-aware, added up as the plan says).
        time: ``max(T_math, T_comms)``, or their sum without overlap.
        turns: where the strategy changes regime (``T_comms = T_math`` with a sign change).
    """

    index: int
    strategy: Strategy
    math: Piecewise
    comm: Piecewise
    time: Piecewise
    turns: tuple[Fraction, ...] = ()

    def regime(self, x: Fraction) -> str:
        """``'communication'`` or ``'compute'`` just right of ``x`` (compute on a tie, as the planner)."""
        c, m = self.comm.at(x), self.math.at(x)
        return "communication" if c > m else "compute"

    def knees(self) -> list[Fraction]:
        """Where this strategy changes regime."""
        return list(self.turns)


@dataclass(frozen=True, slots=True)
class Event:
    """A point of interest along the dim.

    Attributes:
        x: where (an exact number).
        kind: ``'fastest'`` (another strategy becomes the fastest) or ``'regime'``
            (the fastest one changes regime).
        before: the curve index that was fastest just below ``x``.
        after: the one fastest just above.
        regime: the regime of the fastest strategy just above ``x``.
    """

    x: Fraction
    kind: str
    before: int
    after: int
    regime: str


@dataclass(frozen=True, slots=True)
class Sweep:
    """Every strategy of a plan as a function of one dim, with the crossovers."""

    plan: Plan
    dim: str
    x0: Fraction
    curves: tuple[Curve, ...]
    fastest: tuple[tuple[Fraction, int], ...]  # (from x, index into curves)
    events: tuple[Event, ...]

    def best_at(self, x: Fraction) -> int:
        """The index into ``curves`` of the fastest strategy just right of ``x``."""
        best = self.fastest[0][1]
        for start, i in self.fastest:
            if start <= x:
                best = i
        return best


def _hbm_line(s: Strategy, dim: str, x0: Fraction, plan: Plan) -> Piecewise:
    """The local product's HBM time along ``dim``: the bytes of its arrays that hold ``dim`` grow with it,
    the others stay (each array read or written once, as the planner counts them)."""
    hbm_time, hbm_bytes = _exact(s.raw_hbm_time), _exact(s.raw_hbm_bytes)
    if not hbm_time or not hbm_bytes:
        return Piecewise.line(0)
    sizes = {d: _exact(v) for d, v in plan.sizes}
    shards = {a.name: _exact(a.size) for a in plan.mesh.axes}
    element = _exact(dtype_bytes(plan.dtype))
    growing = fixed = Fraction(0)
    for arr in (s.local.lhs, s.local.rhs, s.local.output):
        size = element
        for d in arr.dims:
            size *= sizes[d.name]
            for a in d.axes:
                size /= shards[a]
        if dim in arr.dim_names:
            growing += size
        else:
            fixed += size
    per_byte = hbm_time / hbm_bytes
    return Piecewise.line(growing * per_byte / x0, fixed * per_byte)


def _curve(index: int, s: Strategy, dim: str, x0: Fraction, overlap: bool, plan: Plan) -> Curve:
    # the local product: its FLOPs grow with every dim; its HBM traffic partly; it takes the larger
    math = Piecewise.line(_exact(s.raw_compute_time) / x0).maximum(_hbm_line(s, dim, x0, plan))
    # each collective as the planner adds it up (symshard.costs.costmodels): latency and bandwidth terms by its
    # latency model; the reshards of each operand and of the result one after another; those three at once
    # on disjoint links (the busiest link's total), or all in turn
    legs: dict[str, tuple[Piecewise, frozenset[str]]] = {}
    serial = Piecewise.line(0)
    for step in s.collectives:
        t = step.cost
        bw = _exact(t.bandwidth_time)
        lat = _exact(t.latency_time)
        grows = dim in step.op.operand.dim_names  # type: ignore[union-attr]
        band = Piecewise.line(bw / x0) if grows else Piecewise.line(0, bw)
        if not lat:
            one = band
        elif t.latency_model == "nccl":
            one = band + Piecewise.line(0, lat)
        else:
            one = band.maximum(Piecewise.line(0, lat))
        serial = serial + one
        total, links = legs.get(step.role, (Piecewise.line(0), frozenset()))
        legs[step.role] = (total + one, links | t.resources)
    loads: dict[str, Piecewise] = {}
    for total, links in legs.values():
        for r in links or frozenset({""}):
            loads[r] = loads[r] + total if r in loads else total
    if s.comm_overlap == "none" or len(loads) < 2:
        comm = serial
    else:
        parts = list(loads.values())
        comm = parts[0]
        for part in parts[1:]:
            comm = comm.maximum(part)
    time = math.maximum(comm) if overlap else math + comm
    if time(x0) != _exact(s.raw_time):  # the scaling rules must give back the planner's own number
        raise PlanError(
            say("cannot sweep '{name}' along {dim}: its time does not scale as expected", name=s.name, dim=dim),
            hint=say("this is a bug in symshard; please report it with the plan"),
        )
    return Curve(index, s, math, comm, time, tuple(comm.roots_of_difference(math)))


def _first_drop(d: Piecewise, x: Fraction) -> Fraction | None:
    """The first point after ``x`` where ``d`` goes below zero (``d ≥ 0`` just right of ``x``)."""
    pieces = d.pieces
    for i, (s, k, c) in enumerate(pieces):
        end = pieces[i + 1][0] if i + 1 < len(pieces) else None
        if end is not None and end <= x:
            continue
        lo = max(s, x)
        if k < 0:
            r = -c / k
            r = max(r, lo)
            if r > x and (end is None or r < end):
                return r
    return None


def _best(curves: tuple[Curve, ...], x: Fraction) -> int:
    return min(range(len(curves)), key=lambda i: (*curves[i].time.at(x), i))


def sweep(plan: Plan, dim: str) -> Sweep:
    """Every strategy of ``plan`` as an exact function of ``dim``, and where the fastest one changes.

    Args:
        plan: a plan whose costs are numbers (sizes, mesh and hardware all given).
        dim: one of the matmul's dims.

    Raises:
        PlanError: a symbolic plan, or a dim the matmul lacks.
    """
    if dim not in plan.matmul.dims:
        raise PlanError(
            say("'{dim}' is not a dim of {matmul}", dim=dim, matmul=str(plan.matmul)),
            hint=say("sweep one of its dims: {dims}", dims=", ".join(plan.matmul.dims)),
        )
    if not plan.numeric:
        raise PlanError(
            say("the plan for {matmul} still has symbols in its costs", matmul=str(plan.matmul)),
            hint=say(
                "give the mesh sizes, every dim's size and a chip (hardware=...); GPUs need a hop latency too, "
                "e.g. constants={{T_hop: sympy.Rational(1, 10**6)}}"
            ),
        )
    x0 = _exact(dict(plan.sizes)[dim])
    # every valid strategy, not only those that win at these sizes: another may win at another size
    every = plan.all_strategies()
    curves = tuple(_curve(i, s, dim, x0, plan.overlap, plan) for i, s in enumerate(every, 1))
    # the lower envelope, swept from 0: the next change is the first point where another curve dips below
    x = Fraction(0)
    best = _best(curves, x)
    fastest = [(x, best)]
    for _ in range(100 * len(curves) * max(len(c.time.pieces) for c in curves) + 100):
        drops = [
            r
            for j, c in enumerate(curves)
            if j != best and (r := _first_drop(c.time - curves[best].time, x)) is not None
        ]
        if not drops:
            break
        x = min(drops)
        new = _best(curves, x)
        if new != best:
            best = new
            fastest.append((x, best))
    else:  # pragma: no cover - a lower envelope of piecewise-linear functions has finitely many changes
        raise PlanError(
            say("cannot sweep {matmul} along {dim}", matmul=str(plan.matmul), dim=dim),
            hint=say("this is a bug in symshard; please report it"),
        )
    events = []
    for n, (start, i) in enumerate(fastest):
        end = fastest[n + 1][0] if n + 1 < len(fastest) else None
        if n:
            prev = fastest[n - 1][1]
            events.append(Event(start, "fastest", curves[prev].index, curves[i].index, curves[i].regime(start)))
        for k in curves[i].knees():
            if k > start and (end is None or k < end):
                events.append(Event(k, "regime", curves[i].index, curves[i].index, curves[i].regime(k)))
    return Sweep(plan, dim, x0, curves, tuple(fastest), tuple(sorted(events, key=lambda e: e.x)))

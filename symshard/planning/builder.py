"""Building costed strategies from compute shardings: the legs that reshard the operands and the result.

For one compute sharding a strategy is three legs around the local product: each operand resharded to
its compute sharding, and the product resharded to the requested result. :func:`costed_leg` costs one
leg's steps; :class:`Builder` costs every route of each leg once and shares it between the strategies
that take it, and assembles a :class:`~symshard.planning.strategies.Strategy` from three legs;
:func:`peak_memory` adds up the bytes alive at the busiest step.

In :mod:`symshard.planning` it sits above :mod:`.pruning` (a builder keeps only the routes that can
win, :meth:`Builder.kept_routes`); the planner's enumeration (:mod:`.enumeration`) and the sharding
search (:mod:`.search`) build their strategies through it.

Examples:
    >>> from symshard.machines.mesh import resolve_mesh
    >>> from symshard.notation.parser import parse_array
    >>> from symshard.planning.costenv import CostEnv
    >>> env = CostEnv(resolve_mesh("X=4", ["X"]), {"I": 64, "J": 8}, "bf16", None, None, "book")
    >>> leg = costed_leg(env, parse_array("A[I_X, J]"), parse_array("A[I, J]"), "lhs", resident=True)
    >>> [s.label() for s in leg.steps], leg.final
    (['AllGather_X(A)'], 1024)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..algebra.mathtext import as_expr
from ..costs.collectives import DynamicSlice
from ..costs.costmodels import tally
from ..costs.kernels import hbm_traffic
from ..errors import PlanError
from ..notation.arrays import Array
from ..notation.einsums import LocalMatmul, LocalSum, local_product
from .costenv import CostEnv
from .pruning import prune_numeric
from .rawcosts import Value, exact_ratio
from .routes import reshard_routes, reshard_steps
from .shardings import Route
from .strategies import Leg, PlanStep, Strategy

__all__ = ["Builder", "Prelude", "costed_leg", "peak_memory"]


def costed_leg(env: CostEnv, src: Array, dst: Array, role: str, resident: bool, exprs=None) -> Leg:
    """The leg that reshards ``src`` to ``dst`` by the steps ``exprs`` (default: :func:`reshard_steps`'s),
    costed in ``env``; ``resident`` when ``src`` stays in memory anyway (an operand, not the local product)."""
    if exprs is None:
        exprs = reshard_steps(src, dst)
    if not exprs:
        return Leg((), 0, 0, 0)
    steps = []
    timings = []
    peaks: list[Value] = []
    for expr in exprs:
        timing = env.timing(expr)
        steps.append(PlanStep(role, expr, timing))
        if not isinstance(expr.op, DynamicSlice):
            timings.append(timing)
        before = 0 if (resident and (expr.operand is src or expr.operand == src)) else env.bytes(expr.operand)
        peaks.append(before + env.bytes(expr.output))
    comm, per_link = tally(timings, env.comm_overlap)
    return Leg(tuple(steps), comm, env.largest(peaks), env.bytes(dst), per_link)


@dataclass(frozen=True, slots=True)
class Prelude:
    """What every strategy of a product with summed dims does first: each operand that has dims of its own
    that the product drops sums them locally (:class:`~symshard.notation.einsums.LocalSum`), before any
    collective, as XLA does. The same steps and costs for every compute sharding, in one environment."""

    lhs: tuple[PlanStep, ...]  # the left operand's local sum (or nothing)
    rhs: tuple[PlanStep, ...]
    flops: Value  # the sums' adds per device
    hbm_bytes: Value  # each sum reads its operand's block and writes the summed block once
    hbm_time: Value
    resident: Value  # the operands before their sums, which stay in memory beside the summed blocks

    @property
    def empty(self) -> bool:
        return not (self.lhs or self.rhs)


def prelude(env: CostEnv, sums: tuple[LocalSum | None, LocalSum | None]) -> Prelude:
    """The :class:`Prelude` of the local sums ``sums`` (the left operand's, the right's; None where there is
    none), costed in ``env``."""
    steps: list[tuple[PlanStep, ...]] = []
    flops: Value = 0
    hbm: Value = 0
    resident: Value = 0
    for role, s in zip(("lhs", "rhs"), sums, strict=True):
        if s is None:
            steps.append(())
            continue
        adds = env.sum_flops(s.operand, s.output)
        steps.append((PlanStep(role, s, None, adds),))
        flops = adds if flops == 0 else flops + adds
        moved = env.bytes(s.operand) + env.bytes(s.output)
        hbm = moved if hbm == 0 else hbm + moved
        resident = env.bytes(s.operand) if resident == 0 else resident + env.bytes(s.operand)
    hbm_time: Value = exact_ratio(hbm, env.hbm_rate) if env.hbm and not steps == [(), ()] else 0
    return Prelude(steps[0], steps[1], flops, hbm if env.hbm else 0, hbm_time, resident)


class Builder:
    """Builds costed strategies from compute shardings, sharing resharding legs between them; ``sums``, the
    operands' local sums (see :class:`Prelude`), come first in every strategy it builds."""

    def __init__(
        self,
        env: CostEnv,
        overlap: bool,
        xla: bool = False,
        wide: bool = False,
        sums: tuple[LocalSum | None, LocalSum | None] = (None, None),
    ) -> None:
        self.env = env
        self.prelude = prelude(env, sums)
        self.overlap = overlap
        self.xla = xla
        self.wide = wide
        self.legs: dict[tuple[Array, Array, str], Leg] = {}
        self.route_legs: dict[tuple[Array, Array, str], tuple[Leg, ...]] = {}
        self.kept: dict[tuple[Array, Array, str], tuple[Route, ...]] = {}
        mesh = env.mesh
        numeric = all(as_expr(a.size).is_number for a in mesh.axes)
        self.sizes = tuple(sorted((a.name, int(a.size)) for a in mesh.axes)) if numeric else None

    def leg(self, src: Array, dst: Array, role: str) -> Leg:
        key = (src, dst, role)
        if key not in self.legs:
            self.legs[key] = costed_leg(self.env, src, dst, role, resident=role != "out")
        return self.legs[key]

    def routes(self, src: Array, dst: Array, role: str) -> tuple[Leg, ...]:
        """Every costed route from ``src`` to ``dst`` (:func:`reshard_routes`), the plain one first."""
        key = (src, dst, role)
        found = self.route_legs.get(key)
        if found is None:
            alts = reshard_routes(src, dst, self.sizes, self.xla, self.wide)
            found = (
                self.leg(src, dst, role),
                *(costed_leg(self.env, src, dst, role, role != "out", r) for r in alts[1:]),
            )
            self.route_legs[key] = found
        return found

    def kept_routes(self, src: Array, dst: Array, role: str) -> tuple[Route, ...]:
        """The routes of one leg whose every array divides evenly, without those another route of the leg
        beats in every way (numbers only: communication, links, peak bytes, steps)."""
        key = (src, dst, role)
        found = self.kept.get(key)
        if found is None:
            env = self.env
            valid = tuple(
                Route(i, leg, frozenset())
                for i, leg in enumerate(self.routes(src, dst, role))
                if all(env.fits(st.op.output) for st in leg.steps)
            )
            found = self.kept[key] = tuple(prune_numeric(valid, env.comm_overlap))
        return found

    def strategy(
        self,
        lhs: Array,
        rhs: Array,
        lhs_c: Array,
        rhs_c: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
    ) -> Strategy | None:
        """The strategy that reshards ``lhs``/``rhs`` to ``lhs_c``/``rhs_c``, multiplies, and
        reshards the product to ``target``; None if the blocks cannot give ``target``."""
        found = self.strategies(lhs, rhs, lhs_c, rhs_c, target, sharding, routes=False)
        return found[0] if found else None

    def strategies(
        self,
        lhs: Array,
        rhs: Array,
        lhs_c: Array,
        rhs_c: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
        routes: bool = True,
    ) -> list[Strategy]:
        """The strategies with these compute shardings: the plain resharding first, then (with
        ``routes``) every combination of the routes through a collective-permute."""
        prep = self.prepare(lhs, rhs, lhs_c, rhs_c, target)
        if prep is None:
            return []
        local_out, flops, compute_time, hbm_time = prep
        legs_l: tuple[Leg, ...]
        legs_r: tuple[Leg, ...]
        legs_o: tuple[Leg, ...]
        if not routes:
            legs_l = (self.leg(lhs, lhs_c, "lhs"),)
            legs_r = (self.leg(rhs, rhs_c, "rhs"),)
            legs_o = (self.leg(local_out, target, "out"),)
        else:
            legs_l = self.routes(lhs, lhs_c, "lhs")
            legs_r = self.routes(rhs, rhs_c, "rhs")
            legs_o = self.routes(local_out, target, "out")
        product = PlanStep("matmul", LocalMatmul(lhs_c, rhs_c, local_out), None, flops)
        build = self.build
        return [
            build(lhs, rhs, target, sharding, product, compute_time, local_out, pre_l, pre_r, post, hbm_time)
            for pre_l in legs_l
            for pre_r in legs_r
            for post in legs_o
        ]

    def prepare(
        self, lhs: Array, rhs: Array, lhs_c: Array, rhs_c: Array, target: Array
    ) -> tuple[Array, Value, Value, Value] | None:
        """The local product's result, FLOPs, compute time and HBM time for these compute shardings, or
        None when the blocks cannot give ``target``."""
        try:
            local_out = local_product(lhs_c, rhs_c, target.dim_names, target.name)
        except PlanError:
            return None
        if not target.unreduced <= local_out.unreduced:
            return None
        if not lhs_c.unreduced <= lhs.unreduced or not rhs_c.unreduced <= rhs.unreduced:
            return None
        flops, compute_time, hbm_time = self.local_costs(lhs_c, rhs_c, local_out)
        return local_out, flops, compute_time, hbm_time

    def local_costs(self, lhs_c: Array, rhs_c: Array, local_out: Array) -> tuple[Value, Value, Value]:
        """The local product's FLOPs, and the compute and HBM time of the local work (the product, and the
        operands' local sums before it: :attr:`prelude`)."""
        env, pre = self.env, self.prelude
        flops = env.flops(lhs_c, rhs_c)
        hbm_time = env.hbm_time(lhs_c, rhs_c, local_out)
        if pre.empty:
            return flops, exact_ratio(flops, env.flops_rate), hbm_time
        return flops, exact_ratio(flops + pre.flops, env.flops_rate), hbm_time + pre.hbm_time

    def memory(self, lhs: Array, rhs: Array, pre_l: Leg, pre_r: Leg, post: Leg, local_out: Array) -> Value:
        """Peak bytes per device of the strategy made of these legs (the operands before their local sums
        stay resident too)."""
        env = self.env
        peak = peak_memory(env.bytes(lhs), env.bytes(rhs), env.bytes(local_out), pre_l, pre_r, post, env.largest)
        return peak if self.prelude.empty else peak + self.prelude.resident

    def build(
        self,
        lhs: Array,
        rhs: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
        product: PlanStep,
        compute_time: Value,
        local_out: Array,
        pre_l: Leg,
        pre_r: Leg,
        post: Leg,
        hbm_time: Value = None,
    ) -> Strategy:
        """One costed strategy: these legs around the local product (``hbm_time``: its ``T_hbm``, worked out
        here when not given)."""
        env, pre = self.env, self.prelude
        local = product.op
        assert isinstance(local, LocalMatmul)  # the product step of a strategy
        if hbm_time is None:
            hbm_time = self.local_costs(local.lhs, local.rhs, local.output)[2]
        hbm_bytes = hbm_traffic(env.bytes(local.lhs), env.bytes(local.rhs), env.bytes(local.output)) if env.hbm else 0
        flops = product.flops
        if not pre.empty:
            flops = flops + pre.flops
            hbm_bytes = hbm_bytes + pre.hbm_bytes if env.hbm else 0
        return Strategy(
            steps=(*pre.lhs, *pre_l.steps, *pre.rhs, *pre_r.steps, product, *post.steps),
            sharding=sharding,
            output=target,
            model=self.env.model,
            overlap=self.overlap,
            raw_flops=flops,
            raw_compute_time=compute_time,
            raw_comm_time=self.env.join((pre_l, pre_r, post)),
            raw_memory=self.memory(lhs, rhs, pre_l, pre_r, post, local_out),
            comm_overlap=self.env.comm_overlap,
            raw_hbm_time=hbm_time,
            raw_hbm_bytes=hbm_bytes,
        )


def peak_memory(lhs: Value, rhs: Value, local_out: Value, pre_l: Leg, pre_r: Leg, post: Leg, largest) -> Value:
    """Peak bytes per device of a strategy from the bytes of its operands and local product and its legs:
    the operands stay resident; the lhs's leg, then the rhs's (the lhs's result alive), then the product
    (both results alive), then the result's leg. ``largest`` takes the largest of several values."""
    peak = largest([pre_l.peak, pre_l.final + pre_r.peak, pre_l.final + pre_r.final + local_out, post.peak])
    return lhs + rhs + peak

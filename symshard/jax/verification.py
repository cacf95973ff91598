"""Does symshard's plan match what XLA does? One matmul, checked three ways.

:func:`verify` plans a matmul with symshard, then:

1. runs every strategy of a plan of at most :data:`~symshard.jax.running.AUTO_RUN`, else a seeded
   sample of that many (or every one, the best, or a sample of any size:
   :func:`~symshard.jax.running.choose`) under ``shard_map``, within a time limit if given, and
   compares the result with the unsharded product and every device's blocks with symshard's local
   shapes (:mod:`symshard.jax.execution`); a listed strategy holding a block that does not divide
   is reported as not runnable, never run;
2. jits the same product with the same input and output shardings on a mesh whose
   axes are ``AxisType.Auto``, so that XLA's SPMD partitioner picks the collectives,
   and reads them from the compiled module printed with every constant
   (:func:`symshard.jax.hlo.module_text`), with its dots' FLOPs and the total of
   ``compiled.cost_analysis()``, compared apart;
3. looks for a symshard strategy with exactly XLA's collectives (kind, mesh axes,
   elements each device contributes) and says where it ranks under symshard's cost
   model, as ``matmul --hw --all`` ranks the planner's strategies (the chip's wiring, one
   question, one ranking: :meth:`~symshard.planning.strategies.Plan.position`), or why none
   matches, and, where none but one pairing other devices in a permute has XLA's collectives,
   bytes and FLOPs, that it is equal in cost (:attr:`~symshard.jax.results.Verification.equal_in_cost`);
   where the plan does not list XLA's further orders (batch
   or head dims on three axes: millions of strategies), they are searched for XLA's
   collectives (:meth:`~symshard.planning.planner.Plan.matching`), and a strategy found so is run
   and placed among the listed (:attr:`~symshard.jax.results.Verification.further`); failing that,
   the routes of every leg are searched through the whole algebra, step by step from XLA's
   collectives (:func:`symshard.planning.route_search.every_route`): a strategy found so, which no
   plan lists, counts only if it runs correctly under ``shard_map``
   (:attr:`~symshard.jax.results.Verification.routed`).

The two plans' costs are compared by the bytes each device receives in their collectives
(:func:`~symshard.jax.xla_plans.received_elements`) and the FLOPs of their products.

Lowering is accounted for explicitly and recorded in ``lowering``: XLA writes a
reduce-scatter as an all-reduce plus a partition-indexed ``dynamic-slice``, which the
CPU backend runs as it is (read back as the reduce-scatter it is, after evaluating
the slice's offsets for every device), and a bf16 dot and its reductions run in f32,
so the HLO's collectives move twice the bytes of the bf16 plan; the match compares
elements, which are exact, and both byte counts are reported. A product that contracts no dim
is a ``multiply`` in XLA's module (counted as a dot contracting one element), and a dim only one
operand has is summed by a ``reduce`` before the dot, as symshard's strategies sum it
(:class:`~symshard.notation.einsums.LocalSum`). Device groups and
slices are named by mesh axes or, where XLA splits an axis, by its sub-axes
(``X:(2)2``, Shardy's notation), which no strategy over whole mesh axes uses.

Where XLA's plan uses sub-axes, :func:`~symshard.jax.searches.refine` plans the matmul again with
those axes in parts (``plan(..., split="X=2x2")``, :mod:`symshard.machines.subaxes`): the same
devices in the same order, X used as X1 (Shardy's ``X:(1)2``) and X2 (``X:(2)2``), ``I_X`` read as
``I_{X1,X2}``, with ``routes="xla"``; XLA's groups are read in the parts, and a strategy with exactly
XLA's collectives and FLOPs is run under ``shard_map``. Such a match is reported apart from a match
by whole axes (:attr:`~symshard.jax.results.Verification.matched_on`).

The result is a frozen :class:`~symshard.jax.results.Verification` with ``text()`` and ``to_json()``
forms.

This module is the top of the check in :mod:`symshard.jax`, which it puts together from its parts:
:mod:`.xla_plans` (XLA's plan and symshard's strategies in the same terms), :mod:`.matching` (XLA's
plan among the listed strategies, or the reason it is not), :mod:`.searches` (the searches beyond
the listing, and the check with axes in parts), :mod:`.running` (which strategies run under
``shard_map``) and :mod:`.results` (the values and the report's words).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from ..algebra.dtypes import dtype_bytes
from ..costs.placement import ShapeLike
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..messages import Message, say
from ..notation.einsums import Matmul, matmul
from ..planning.planner import Plan, Strategy, plan
from .execution import Execution
from .hlo import ELIDED, READ_BACK_FURTHER
from .matching import compare_with_kind
from .results import AtScale, Refinement, Verification, cheaper, clauses, search_words
from .running import AUTO_RUN, attempt, check_run, choose
from .searches import in_time, matching_strategy, refine, stopped_clause
from .xla_plans import XlaPlan, signature, signature_received, sizes_of, strategy_flops, xla_plan

__all__ = ["verify"]


def _refined_reason(reason: str, r: Refinement) -> Message:
    """The reason by whole axes, followed by what the plan with axes in parts showed."""
    command = f"symshard matmul --split {r.split}"
    where = {"label": r.label, "mesh": r.mesh, "matmul": r.matmul, "command": command}
    if r.matched is not None and not r.match:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "XLA's collectives are exactly {name}, which did NOT run correctly",
            name=r.matched,
            **where,
        )
    elif r.match and r.routed:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "XLA's collectives are exactly {name}, a route of symshard's collectives that its planner does not "
            "list, found step by step from XLA's collectives, which ran correctly under shard_map: a match by "
            "parts of axes",
            name=r.matched,
            **where,
        )
    elif r.match and r.searched:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "XLA's collectives are exactly {name}, found by a search for them among symshard's strategies and "
            "XLA's further orders (not ranked), which ran correctly under shard_map: a match by parts of axes",
            name=r.matched,
            **where,
        )
    elif r.match:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; "
            "{command}), as {matmul}, XLA's collectives are exactly symshard's strategy {rank} of {count} ({name}), "
            "which ran correctly under shard_map: a match by parts of axes",
            rank=r.rank,
            count=r.ranked,
            name=r.matched,
            **where,
        )
    elif r.stopped:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "the search for XLA's collectives through {search} stopped at the time limit",
            search=search_words(r.stopped),
            **where,
        )
    elif r.searched:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "none of symshard's {count} {count:strategy|strategies}, nor of XLA's further orders, has exactly XLA's collectives "
            "and FLOPs (searched by its collectives: too many to list)",
            count=f"{r.strategies:,}",
            **where,
        )
    else:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; "
            "{command}), as {matmul}, still no strategy: {reason}",
            reason=r.reason,
            **where,
        )
    return clauses([reason, shown])


def verify(
    mm: Matmul | str,
    mesh: Mesh | Mapping[str, object] | str,
    shape: ShapeLike,
    *,
    dtype: str = "fp32",
    hardware: Hardware | str | None = "tpu-v5e",
    model: str = "book",
    run: str = "auto",
    sample: int | None = None,
    seed: int = 0,
    time_limit: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    fused: bool = True,
    memo: dict | None = None,
    scale: int | None = None,
    outer: bool = False,
) -> Verification:
    """Check symshard's plan for ``mm`` against JAX (execution) and XLA (its own plan).

    Args:
        mm: the matmul with its output sharding, e.g. ``'A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]'``.
        mesh: the mesh, with sizes; JAX needs that many devices.
        shape: every dim's size.
        dtype: ``fp32`` or ``bf16`` (on CPU, XLA runs bf16 dots in f32: see ``lowering``).
        hardware: the chip whose constants rank symshard's strategies.
        model: symshard's collective cost model.
        run: which strategies to run under ``shard_map``: ``'auto'`` (every one when there are at most
            :data:`AUTO_RUN`, else a seeded sample of that many), ``'all'``, ``'best'`` or ``'none'``.
        sample: with ``run='all'`` or ``'auto'``, run at most this many: the best, the one matching XLA's
            plan, and others drawn with ``seed`` (see :func:`choose`).
        seed: the seed of the sample.
        time_limit: seconds for the whole check. A search for XLA's plan still going then stops, and
            the case is left undecided (:attr:`Verification.search_stopped` says which search);
            strategies still to run are left (counted in :attr:`Verification.not_run`); the report says so.
        progress: called with (strategies run, strategies chosen) after each one.
        fused: one program per strategy (True) or cached programs per leg (False).
        memo: shared between calls on the same mesh, shape and dtype (a sweep): placed operands
            and operand legs already run (see :func:`symshard.jax.execution.execute`).
        scale: where XLA's plan is a symshard strategy that costs less than symshard's best (fewer bytes
            received, no more FLOPs, or the other way round), also cost both with every dim this many times
            larger (:attr:`Verification.at_scale`): is the cheaper plan also the faster one at real sizes?
        outer: accept operands that share no dim (an outer product, which XLA writes as a ``multiply``);
            without it such a product is refused as a typo, as :func:`~symshard.matmul` refuses it.

    A listed strategy holding a block that does not divide is reported in
    :attr:`Verification.unrunnable`, not run; one whose run raises is a failed execution.

    Raises:
        PlanError, ShardingError, ...: as :func:`symshard.plan`; MeshError: too few devices;
        UsageError: a bad ``run`` or ``sample``.
    """
    started = time.perf_counter()
    m_ = matmul(mm, outer=outer) if isinstance(mm, str) else mm
    check_run(run, sample)  # before any work
    start = time.perf_counter()
    p = plan.__wrapped__(m_, mesh, shape, dtype=dtype, hardware=hardware, model=model, routes="xla")  # type: ignore[attr-defined]
    # the ranking `matmul --hw --all` gives (the planner's own routes, the chip's wiring): the best and XLA's
    # rank are said in it; the plan with XLA's orders is where XLA's plan is looked for
    ranking = plan.__wrapped__(m_, mesh, shape, dtype=dtype, hardware=hardware, model=model, all=True)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    x = xla_plan(p)
    compared = compare_with_kind(p, x, refined=False, number=lambda _, s: ranking.position(s)[0])
    strategy, reason, equivalent = compared.strategy, compared.reason, compared.equivalent
    deadline = None if time_limit is None else started + time_limit
    stopped = ""  # the search the time limit cut short, if one was
    # XLA's further orders, which the plan may not list (see planner._wide), searched for XLA's collectives
    further = None
    if strategy is None and not x.sub_axes:
        further, stopped = in_time(lambda: matching_strategy(p, x, further=True, deadline=deadline), "further")
    if further is not None:
        strategy, reason, equivalent = further, "", None
    # failing those, any route of symshard's collectives, found step by step from XLA's: a match only
    # if it runs correctly, for no plan lists it
    routed: Execution | None = None
    if strategy is None and not x.sub_axes and not stopped:
        found, stopped = in_time(lambda: matching_strategy(p, x, any_route=True, deadline=deadline), "routes")
        if found is not None:
            done = attempt(p, found, fused=fused, memo=memo)
            if isinstance(done, Execution) and done.correct and done.shapes_ok:
                strategy, reason, routed, equivalent = found, "", done, None
            else:
                broken = say(
                    "XLA's collectives are exactly {name}, a route of symshard's collectives that its planner does "
                    "not list, found step by step from XLA's collectives, which did NOT run correctly",
                    name=found.name,
                )
                reason = clauses([reason, broken])
    if stopped:
        reason = clauses([c for c in (reason, stopped_clause(stopped)) if c])
    refined = None
    if strategy is None and x.sub_axes:
        refined = refine(p, x, model=model, fused=fused, memo=memo, deadline=deadline)
    if refined is not None:
        reason = _refined_reason(reason, refined)
    rank, among = ranking.position(strategy) if strategy is not None else (None, False)
    same_cost = (
        None if strategy is not None or equivalent is None else (ranking.position(equivalent)[0], equivalent.name)
    )
    sizes = {k: int(v) for k, v in p.sizes}
    total = 2
    for d in m_.product.dims:  # the product's dims: a dim summed inside one operand is gone before it
        total *= sizes[d]
    devices = int(p.mesh.devices)
    repeats = x.dot_flops * devices > total
    # FLOPs: against the matched strategy; without one, where XLA repeats no work, against the
    # product's FLOPs split over every device (what symshard counts for a fully split product)
    flops_agree: bool | None = None
    total_agree: bool | None = None
    if strategy is not None:
        flops_agree = int(strategy.raw_product_flops) == x.dot_flops
        total_agree = int(strategy.raw_flops) == x.flops
    elif not repeats:
        every = {strategy_flops(p, i) for i in range(len(p.strategies))}
        flops_agree = x.dot_flops in every
        total_agree = x.flops in every
    lowering = _lowering_notes(p, x)
    by_default = run == "auto" and sample is None and len(p.strategies) > AUTO_RUN
    if run == "auto":
        run, sample = "all", AUTO_RUN if by_default else sample
    chosen = choose(p, run, sample=sample, seed=seed, keep=strategy if further is None and routed is None else None)
    if further is not None:
        chosen.append(further)  # not listed, so never chosen: run as the match it is
    executions: list[Execution] = [routed] if routed is not None else []  # run already: never chosen
    unrunnable: list[tuple[str, str]] = []
    not_run = 0
    for i, s in enumerate(chosen):
        if time_limit is not None and time.perf_counter() - started > time_limit:
            not_run = len(chosen) - i
            break
        done = attempt(p, s, fused=fused, memo=memo)
        if isinstance(done, str):
            unrunnable.append((s.name, done))
        else:
            executions.append(done)
        if progress is not None:
            progress(i + 1, len(chosen))
    best = ranking.strategies[0]
    dtype = p.dtype
    xla_bytes = x.received_bytes(dtype)
    best_bytes = signature_received(signature(best, ranking), sizes_of(ranking), dtype)
    is_cheaper = cheaper((xla_bytes, x.dot_flops), (best_bytes, int(best.raw_product_flops)))
    at_scale = None
    if scale is not None and strategy is not None and is_cheaper:
        at_scale = _at_scale(ranking, strategy, scale, model)
    return Verification(
        matmul=str(m_),
        mesh=str(p.mesh),
        shape=",".join(f"{k}={v}" for k, v in p.sizes),
        dtype=p.dtype,
        hardware=p.hardware.name if p.hardware else None,
        strategies=len(p.strategies),
        best=best.name,
        xla=tuple(c.describe() for c in x.collectives),
        xla_flops=x.flops,
        xla_dot_flops=x.dot_flops,
        xla_repeats_work=repeats,
        match=strategy is not None,
        matched=strategy.name if strategy is not None else None,
        rank=rank,
        flops_agree=flops_agree,
        reason=reason,
        lowering=lowering,
        executions=tuple(executions),
        symshard_seconds=seconds,
        xla_compile_seconds=x.compile_seconds,
        refined=refined,
        further=further is not None,
        routed=routed is not None,
        xla_reduction_flops=x.reduction_flops,
        total_flops_agree=total_agree,
        xla_bytes=xla_bytes,
        best_bytes=best_bytes,
        best_flops=int(best.raw_product_flops),
        chosen=len(chosen),
        sample=sample if run == "all" and sample is not None and sample < len(p.strategies) else None,
        sampled_by_default=by_default,
        seed=seed,
        unrunnable=tuple(unrunnable),
        not_run=not_run,
        time_limit=time_limit,
        stopped=stopped,
        seconds=time.perf_counter() - started,
        equivalent=same_cost,
        ranked=len(ranking.strategies),
        among_ranked=among,
        best_regime=regime_of(best),
        at_scale=at_scale,
        xla_sum_flops=x.sum_flops,
        xla_multiply_flops=x.multiply_flops,
        flops=int((strategy or best).raw_flops),
    )


def regime_of(s: Strategy) -> str | None:
    """What bounds ``s``'s time: ``"compute"`` or ``"memory"`` (its local work), else its collectives,
    ``"latency"`` when every one of them waits on its hops' latency more than on its bytes (a few KiB per
    device: the ranking then follows hops), ``"bandwidth"`` otherwise; None while symbolic."""
    bound = s.bound
    if bound != "communication":
        return bound
    timings = [st.cost for st in s.collectives]
    return "latency" if timings and all(t.regime == "latency" for t in timings) else "bandwidth"


def _at_scale(ranking: Plan, strategy: Strategy, scale: int, model: str) -> AtScale | None:
    """``strategy`` (XLA's plan) and symshard's best with every dim ``scale`` times larger (see :class:`AtScale`)."""
    shape = ",".join(f"{k}={int(v) * scale}" for k, v in ranking.sizes)
    big = plan.__wrapped__(  # type: ignore[attr-defined]
        ranking.matmul, ranking.mesh, shape, dtype=ranking.dtype, hardware=ranking.hardware, model=model
    )
    best = big.best
    xla = big.source.rebuild(strategy)
    if best is None or xla is None:
        return None
    sizes = sizes_of(big)
    return AtScale(
        scale,
        float(xla.raw_time),
        float(best.raw_time),
        signature_received(signature(xla, big), sizes, big.dtype),
        signature_received(signature(best, big), sizes, big.dtype),
        xla.bound,
        best.bound,
        best.name,
    )


def _lowering_notes(p: Plan, x: XlaPlan) -> tuple[str, ...]:
    """What the comparison undid or left out of XLA's module, one note each."""
    lowering = []
    if any(c.lowered for c in x.collectives):
        lowering.append(
            say(
                "XLA's SPMD partitioner writes a reduce-scatter as an all-reduce followed by a dynamic-slice whose "
                "offsets come from partition-id (the GPU backend fuses the pair into a reduce-scatter, the CPU backend "
                "runs it as it is); evaluated for every device, the offsets give each member of the all-reduce's "
                "group a different share of one dim, its position in the group choosing the share: read back as "
                "that reduce-scatter"
            )
        )
    if any(c.lowered == READ_BACK_FURTHER for c in x.collectives):
        lowering.append(
            say(
                "the slice after an all-reduce read back as a reduce-scatter also cuts each device's share further, "
                "the same way on every member of the group: read back as the reduce-scatter followed by that free "
                "slice (XLA's GPU pass fuses only a slice that is exactly one share)"
            )
        )
    hlo_types = {c.hlo_dtype for c in x.collectives}
    if p.dtype == "bf16" and "f32" in hlo_types:
        lowering.append(
            say(
                "bf16 on CPU: XLA runs the dot and its reductions in f32, so the HLO's collectives move 4-byte "
                "elements where the bf16 plan moves {bytes}; elements are compared, not bytes",
                bytes=dtype_bytes("bf16"),
            )
        )
    if x.multiply_flops:
        lowering.append(
            say(
                "XLA writes a product that contracts no dim as an elementwise multiply of broadcasts, not a dot; "
                "it is counted as a dot contracting one element, 2 FLOPs per element of the result, as symshard "
                "counts a product ({flops} FLOPs per device; the multiply does half as many)",
                flops=f"{x.multiply_flops:,}",
            )
        )
    if x.sum_flops:
        lowering.append(
            say(
                "jnp.einsum sums a dim that only one operand has before the dot (a reduce, {adds} adds per device "
                "in the module's total): symshard's strategies sum it first too, in a step of their own, and XLA's "
                "dots are compared with the FLOPs of the product that follows",
                adds=f"{x.sum_flops:,}",
            )
        )
    if ELIDED in x.hlo:
        lowering.append(
            say(
                "this jaxlib prints constants of more than ten elements as constant({{...}}) and offers no option to "
                "print them; a reduce-scatter whose offset table is one of them stays the all-reduce it is written as"
            )
        )
    return tuple(lowering)

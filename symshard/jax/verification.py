"""Does symshard's plan match what XLA does? One matmul, checked three ways.

:func:`verify` plans a matmul with symshard, then:

1. runs every strategy of a plan of at most :data:`AUTO_RUN`, else a seeded sample of that many (or
   every one, the best, or a sample of any size: :func:`choose`) under ``shard_map``,
   within a time limit if given, and compares the result with the unsharded product and every
   device's blocks with symshard's local shapes (:mod:`symshard.jax.execution`); a listed strategy
   holding a block that does not divide is reported as not runnable, never run;
2. jits the same product with the same input and output shardings on a mesh whose
   axes are ``AxisType.Auto``, so that XLA's SPMD partitioner picks the collectives,
   and reads them from the compiled module printed with every constant
   (:func:`symshard.jax.hlo.module_text`), with its dots' FLOPs and the total of
   ``compiled.cost_analysis()``, compared apart;
3. looks for a symshard strategy with exactly XLA's collectives (kind, mesh axes,
   elements each device contributes) and says where it ranks under symshard's cost
   model, or why none matches; where the plan does not list XLA's further orders (batch
   or head dims on three axes: millions of strategies), they are searched for XLA's
   collectives (:meth:`~symshard.planning.planner.Plan.matching`), and a strategy found so is run
   and placed among the listed (:attr:`Verification.further`); failing that, the routes of
   every leg are searched through the whole algebra, step by step from XLA's collectives
   (:func:`symshard.planning.routes.every_route`): a strategy found so, which no plan lists, counts
   only if it runs correctly under ``shard_map`` (:attr:`Verification.routed`).

Lowering is accounted for explicitly and recorded in ``lowering``: XLA writes a
reduce-scatter as an all-reduce plus a partition-indexed ``dynamic-slice``, which the
CPU backend runs as it is (read back as the reduce-scatter it is, after evaluating
the slice's offsets for every device), and a bf16 dot and its reductions run in f32,
so the HLO's collectives move twice the bytes of the bf16 plan; the match compares
elements, which are exact, and both byte counts are reported. Device groups and
slices are named by mesh axes or, where XLA splits an axis, by its sub-axes
(``X:(2)2``, Shardy's notation), which no strategy over whole mesh axes uses.

Where XLA's plan uses sub-axes, :func:`refine` plans the matmul again with those axes in parts
(``plan(..., split="X=2x2")``, :mod:`symshard.machines.subaxes`): the same devices in the same order, X
used as X1 (Shardy's ``X:(1)2``) and X2 (``X:(2)2``), ``I_X`` read as ``I_{X1,X2}``, with
``routes="xla"``; XLA's groups are read in the parts, and a strategy with exactly XLA's collectives
and FLOPs is run under ``shard_map``. Such a match is reported apart from a match by whole axes
(:attr:`Verification.matched_on`).

The result is a frozen :class:`Verification` with ``text()`` and ``to_json()`` forms.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..algebra.dtypes import dtype_bytes
from ..costs.collectives import CollectiveExpr, DynamicSlice
from ..costs.placement import ShapeLike
from ..errors import ShardingError, TimeLimitError, UsageError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..messages import Clauses, Message, Names, keyed, say
from ..notation.einsums import Matmul, matmul
from ..planning.listing import StrategyList
from ..planning.planner import plan
from ..planning.strategies import Leg, Plan, PlanStep, Strategy
from .execution import Execution, execute, jax_dtype, undivided
from .hlo import (
    ELIDED,
    READ_BACK_FURTHER,
    HloCollective,
    collectives,
    dot_flops,
    group_sub_axes,
    module_text,
    reduction_flops,
    sub_axis_slices,
)
from .interop import jax_mesh, partition_spec
from .runtime import require_jax

__all__ = [
    "Refinement",
    "Signature",
    "Verification",
    "XlaCollective",
    "XlaPlan",
    "choose",
    "refine",
    "signature",
    "signatures",
    "verify",
    "xla_plan",
]

Signature = tuple[tuple[str, tuple[str, ...], int], ...]
"""A plan's communication, order-free: sorted (kind, mesh axes, elements per device) triples."""


@dataclass(frozen=True, slots=True)
class XlaCollective:
    """One collective XLA inserted, in symshard's terms."""

    kind: str
    axes: tuple[str, ...] | None  # mesh axes or sub-axes (``X:(2)2``); None: the groups follow neither
    elements: int
    hlo_dtype: str
    hlo_bytes: int
    dim: int | None
    lowered: str = ""

    def describe(self) -> Message:
        axes = ",".join(self.axes) if self.axes is not None else "?"
        values = {"collective": f"{self.kind}_{axes}", "count": self.elements, "bytes": self.hlo_bytes}
        if self.lowered:
            return say(
                "{collective} ({count} elements, {bytes} B as {dtype}, {lowered})",
                dtype=self.hlo_dtype,
                lowered=self.lowered,
                **values,
            )
        return say("{collective} ({count} elements, {bytes} B as {dtype})", dtype=self.hlo_dtype, **values)


@dataclass(frozen=True, slots=True)
class XlaPlan:
    """What XLA compiled for one sharded matmul."""

    collectives: tuple[XlaCollective, ...]
    flops: int  # compiled.cost_analysis()["flops"], per device
    dot_flops: int  # the dots alone, from the HLO
    compile_seconds: float
    hlo: str = field(repr=False, compare=False)
    sliced_sub_axes: tuple[str, ...] = ()  # sub-axes (part of a mesh axis) by which XLA's slices pick blocks
    reduction_flops: int = 0  # the adds of its all-reduces, one per element reduced, as cost_analysis counts them

    @property
    def sub_axes(self) -> tuple[str, ...]:
        """Every sub-axis the plan shards by: in its collectives' device groups or in its slices. Sorted."""
        found = set(self.sliced_sub_axes)
        found.update(a for c in self.collectives if c.axes for a in c.axes if ":" in a)
        return tuple(sorted(found))

    @property
    def signature(self) -> Signature:
        return tuple(sorted((c.kind, tuple(sorted(c.axes or ("?",))), c.elements) for c in self.collectives))


def signature(strategy: Strategy, plan_: Plan) -> Signature:
    """The (kind, axes, elements per device) of each communication step of ``strategy``."""
    sizes = {k: int(v) for k, v in plan_.sizes}
    axes = {a.name: int(a.size) for a in plan_.mesh.axes}
    return tuple(sorted(_step_signature(st.op, sizes, axes) for st in strategy.collectives))  # type: ignore[arg-type]


def signatures(plan_: Plan) -> list[Signature]:
    """:func:`signature` of every strategy of ``plan_``, in order, each distinct step worked out once
    (plans on meshes of three or four axes list hundreds of thousands of strategies sharing steps)."""
    sizes = {k: int(v) for k, v in plan_.sizes}
    axes = {a.name: int(a.size) for a in plan_.mesh.axes}
    known: dict[Any, tuple[str, tuple[str, ...], int]] = {}

    def of(steps: Sequence[PlanStep]) -> list[tuple[str, tuple[str, ...], int]]:
        sig = []
        for st in steps:
            if not st.is_communication:
                continue
            triple = known.get(st.op)
            if triple is None:
                triple = known[st.op] = _step_signature(st.op, sizes, axes)  # type: ignore[arg-type]
            sig.append(triple)
        return sig

    listed = plan_.strategies
    if not isinstance(listed, StrategyList):
        return [tuple(sorted(of(s.steps))) for s in listed]
    # a listing of every strategy: read from the legs, which strategies share, without building any
    by_leg: dict[int, tuple[tuple[str, tuple[str, ...], int], ...]] = {}

    def of_leg(leg: Leg) -> tuple[tuple[str, tuple[str, ...], int], ...]:
        found = by_leg.get(id(leg))  # the legs live in the plan's caches while it is read
        if found is None:
            found = by_leg[id(leg)] = tuple(of(leg.steps))
        return found

    return listed.combined(of_leg)


def _flops(p: Plan, i: int) -> int:
    """The FLOPs per device of ``p``'s strategy ``i``, without building it where the plan lists every one."""
    listed = p.strategies
    return int(listed.flops(i) if isinstance(listed, StrategyList) else listed[i].raw_flops)


def _step_signature(
    expr: CollectiveExpr, sizes: Mapping[str, int], axes: Mapping[str, int]
) -> tuple[str, tuple[str, ...], int]:
    # a permute sends one block of its result (cut from the operand's block when that is larger)
    moved = expr.output if expr.op.kind == "CollectivePermute" else expr.operand
    elements = 1
    for d in moved.dims:
        n = sizes[d.name]
        for a in d.axes:
            n //= axes[a]
        elements *= n
    return (expr.op.kind, tuple(sorted(expr.op.axes)), elements)


def _einsum(mm: Matmul) -> str:
    letters: dict[str, str] = {}
    for d in (*mm.lhs.dim_names, *mm.rhs.dim_names):
        letters.setdefault(d, "abcdefghijklmnopqrstuvwxyz"[len(letters)])
    return (
        "".join(letters[d] for d in mm.lhs.dim_names)
        + ","
        + "".join(letters[d] for d in mm.rhs.dim_names)
        + "->"
        + "".join(letters[d] for d in mm.out_dims)
    )


def xla_plan(p: Plan) -> XlaPlan:
    """Compile ``p``'s matmul with its shardings and let XLA choose the collectives."""
    jax = require_jax()
    mm = p.matmul
    out = p.strategies[0].output
    mesh = Mesh({a.name: a.size for a in p.mesh.axes})
    jm = jax_mesh(mesh, axis_types="auto")
    sizes = {k: int(v) for k, v in p.sizes}
    dtype = jax_dtype(p.dtype)
    S = jax.sharding.NamedSharding
    spec = _einsum(mm)
    fn = jax.jit(
        lambda a, b: jax.numpy.einsum(spec, a, b),
        in_shardings=(S(jm, partition_spec(mm.lhs)), S(jm, partition_spec(mm.rhs))),
        out_shardings=S(jm, partition_spec(out)),
    )
    args = [jax.ShapeDtypeStruct(tuple(sizes[d] for d in arr.dim_names), dtype) for arr in (mm.lhs, mm.rhs)]
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    seconds = time.perf_counter() - start
    text = module_text(compiled)
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    devices = int(mesh.devices)
    shape = [(a.name, int(a.size)) for a in mesh.axes]
    found = tuple(_translate(c, shape, p.dtype) for c in collectives(text, devices))
    return XlaPlan(
        found,
        int(cost.get("flops", 0)),
        dot_flops(text),
        seconds,
        text,
        sub_axis_slices(text, shape),
        reduction_flops(text),
    )


def _reread(x: XlaPlan, shape: list[tuple[str, int]], dtype: str) -> XlaPlan:
    """``x``'s compiled module read again on a mesh of the same devices with other axes (axes in parts)."""
    devices = 1
    for _, n in shape:
        devices *= n
    found = tuple(_translate(c, shape, dtype) for c in collectives(x.hlo, devices))
    return XlaPlan(
        found, x.flops, x.dot_flops, x.compile_seconds, x.hlo, sub_axis_slices(x.hlo, shape), x.reduction_flops
    )


def _translate(c: HloCollective, shape: list[tuple[str, int]], dtype: str) -> XlaCollective:
    if c.kind == "CollectivePermute":
        sizes = [s for _, s in shape]

        def coords(dev: int) -> list[int]:
            out = []
            for size in reversed(sizes):
                out.append(dev % size)
                dev //= size
            return out[::-1]

        changed = {i for a, b in c.groups for i, (x, y) in enumerate(zip(coords(a), coords(b), strict=True)) if x != y}
        axes = tuple(shape[i][0] for i in sorted(changed))
        return XlaCollective(c.kind, axes, c.operand_elements, c.dtype, c.operand_bytes, None)
    return XlaCollective(
        c.kind, group_sub_axes(c.groups, shape), c.operand_elements, c.dtype, c.operand_bytes, c.dim, c.lowered
    )


ENGLISH: dict[str, str] = {
    "cli.verify.mesh": "mesh",
    "cli.verify.mesh_value": "{mesh}; shape {shape}; {dtype}",
    "cli.verify.symshard_value": "{count} strategies; best: {best}",
    "cli.verify.no_collectives": "no collectives",
    "cli.verify.agreement": "agreement",
    "cli.verify.yes": "yes: XLA's plan is symshard's strategy {rank}, {name}",
    "cli.verify.yes_further": "yes: XLA's plan is {name}, one of XLA's further orders, which symshard does not "
    "list for this matmul but finds by its collectives; it would rank {rank} among the listed",
    "cli.verify.yes_routed": "yes: XLA's plan is {name}, a route of symshard's collectives that its planner "
    "does not list, found step by step from XLA's collectives and run correctly; it would rank {rank} among the listed",
    "cli.verify.no": "no: {reason}",
    "cli.verify.no_in_time": "not found before the time limit: {reason}",
    "cli.verify.no_on_mesh": "not by whole axes, yes by parts of axes (below): {reason}",
    "cli.verify.refined": "axes in parts",
    "cli.verify.refined_value": "{label} ({mesh}): {matmul}; {count} strategies",
    "cli.verify.refined_yes": "yes: symshard's strategy {rank} there, {name}, ran correctly",
    "cli.verify.refined_yes_searched": "yes: {name}, found by a search for XLA's collectives, ran correctly",
    "cli.verify.refined_yes_routed": "yes: {name}, a route of symshard's collectives that its planner does not "
    "list, found step by step from XLA's collectives, ran correctly",
    "cli.verify.refined_broken": "collectives of {name}, but it did NOT run correctly",
    "cli.verify.cost": "cost",
    "cli.verify.cost_value": "XLA's plan {xla_bytes} B into collectives and {xla_flops} FLOPs per device, "
    "symshard's best {best_bytes} B and {best_flops} FLOPs",
    "cli.verify.cheaper": "; XLA's plan is cheaper: planner work",
    "cli.verify.parts_cost": "; with axes in parts, symshard's best {best_bytes} B and {best_flops} FLOPs",
    "cli.verify.flops": "XLA {total} per device in all, {dots} in dots",
    "cli.verify.flops_extra": " ({adds} adds of reductions, {other} converts and index arithmetic)",
    "cli.verify.flops_both": "; symshard's count equals the dots and the total",
    "cli.verify.flops_dots": "; symshard's count equals the dots, not the total",
    "cli.verify.flops_total": "; symshard's count equals the total, not the dots",
    "cli.verify.flops_neither": "; symshard's count DIFFERS from the dots and the total",
    "cli.verify.repeats": "; XLA repeats work across devices",
    "cli.verify.ran": "{ok} of {total} strategies ran and matched the product",
    "cli.verify.ran_none": "none of the {chosen} strategies chosen ran",
    "cli.verify.sampled": " (a sample: {chosen} of {count}, seed {seed})",
    "cli.verify.sampled_auto": " (a sample: {chosen} of {count}, seed {seed}, since there are more than {limit}; "
    "--run all runs every one)",
    "cli.verify.unrunnable": "not runnable",
    "cli.verify.unrunnable_value": "{count} listed strategies hold a block that does not divide, which JAX "
    "cannot hold (first: {name}: {why}); not run",
    "cli.verify.time_limit": "time limit",
    "cli.verify.time_limit_value": "{limit} s reached: {left} of the {chosen} chosen strategies did not run; "
    "run a seeded sample with --sample N, or allow more with --time-limit",
    "cli.verify.search_stopped_value": "{limit} s reached: the search for XLA's plan through {search} stopped, "
    "and the plan may yet be there; allow more with --time-limit",
    "cli.verify.search_search": "symshard's strategies by XLA's collectives",
    "cli.verify.search_further": "XLA's further orders",
    "cli.verify.search_routes": "every route of symshard's collectives taken step by step",
    "cli.verify.search_parts": "{search} with axes in parts",
    "cli.verify.failed": "  failed",
    "cli.verify.time": "time",
    "cli.verify.time_value": "symshard {symshard} ms; XLA compile {xla} ms",
    "cli.verify.lowering": "lowering",
}
"""The English of the report's words by key (the keys are the command line's, whose report this is);
other languages are in the catalogue."""


def _word(key: str, **values: object) -> Message:
    return keyed(ENGLISH, key, **values)


def _clauses(items: Sequence[str]) -> Message:
    """Sentences said one after another, joined by a semicolon in each language's way."""
    return say("{clauses}", clauses=Clauses(items))


def _search_words(stopped: str) -> Message:
    """The search :attr:`Verification.search_stopped` names, in words: ``"search"`` (XLA's collectives among
    a plan too long to list), ``"further"`` (XLA's further orders) or ``"routes"`` (every route step by
    step), in the order :func:`verify` runs them; with axes in parts (:func:`refine`), prefixed ``parts_``."""
    if stopped.startswith("parts_"):
        return _word("cli.verify.search_parts", search=_search_words(stopped[len("parts_") :]))
    return _word("cli.verify.search_" + stopped)


def _stopped_clause(stopped: str) -> Message:
    """The clause a reason gets when the time limit cut the search ``stopped`` short."""
    return say("the search through {search} stopped at the time limit", search=_search_words(stopped))


def _in_time(search: Callable[[], Strategy | None], name: str) -> tuple[Strategy | None, str]:
    """``search()``'s strategy and ``""``, or None and ``name`` when the search ran past its deadline."""
    try:
        return search(), ""
    except TimeLimitError:
        return None, name


Row = tuple[tuple[str, ...], tuple[str, ...]]
"""A row of the report: the pieces of its label and of its value, each said in turn and put one after
the other (a :class:`~symshard.messages.Message`, or text that is the same in every language)."""


@dataclass(frozen=True, slots=True)
class Verification:
    """symshard's plan for one matmul next to JAX's execution and XLA's own plan.

    FLOPs are compared twice, separately: XLA's dots against symshard's FLOPs (``flops_agree``),
    and the module's total as ``cost_analysis`` counts it (``xla_flops``: the dots, the adds of
    its reductions, ``xla_reduction_flops``, and converts and index arithmetic) against the same
    figure (``total_flops_agree``): symshard counts a matmul's FLOPs, 2 × the product of its dims
    over the devices that split it, as the book does, and no adds of reductions.
    """

    matmul: str
    mesh: str
    shape: str
    dtype: str
    hardware: str | None
    strategies: int
    best: str
    xla: tuple[str, ...]
    xla_flops: int
    xla_dot_flops: int
    xla_repeats_work: bool
    match: bool
    matched: str | None
    rank: int | None
    flops_agree: bool | None
    reason: str
    lowering: tuple[str, ...]
    executions: tuple[Execution, ...]
    symshard_seconds: float
    xla_compile_seconds: float
    refined: Refinement | None = None  # where XLA shards by sub-axes: the check with those axes in parts
    further: bool = False  # the match is one of XLA's further orders the plan does not list, found by search
    routed: bool = False  # the match's legs are routes no plan lists, found step by step (ran correctly)
    xla_reduction_flops: int = 0
    total_flops_agree: bool | None = None
    xla_bytes: int = 0  # bytes each device contributes to XLA's collectives, in the plan's dtype
    best_bytes: int = 0  # the same for symshard's best strategy
    best_flops: int = 0  # FLOPs per device of symshard's best strategy
    chosen: int = 0  # strategies chosen to run under shard_map (all, the best, or a sample)
    sample: int | None = None  # how many of the strategies were run (--sample N, or run='auto' on a large plan)
    sampled_by_default: bool = False  # run='auto' drew the sample, the plan having more than AUTO_RUN
    seed: int = 0
    unrunnable: tuple[tuple[str, str], ...] = ()  # (strategy, why): blocks that do not divide
    not_run: int = 0  # chosen strategies left when the time limit was reached
    time_limit: float | None = None
    stopped: str = ""  # the search for XLA's plan the time limit cut short: "further" or "routes" (see _search_words)
    seconds: float = 0.0  # the whole check: planning, XLA's compile, every run

    @property
    def refined_match(self) -> bool:
        """No strategy over whole axes is XLA's plan, but one with axes in parts is, and ran correctly."""
        return not self.match and self.refined is not None and self.refined.match

    @property
    def planned(self) -> bool:
        """XLA's plan is one the planner offers: listed, or among XLA's further orders (not a route found
        only step by step, :attr:`routed`)."""
        return self.match and not self.routed

    @property
    def matched_on(self) -> str | None:
        """``"mesh"`` (by whole axes), ``"mesh in parts X=X1·X2"`` (see :class:`Refinement`), or None."""
        if self.match:
            return "mesh"
        if self.refined_match and self.refined is not None:
            return f"mesh in parts {self.refined.label}"
        return None

    @property
    def executed_ok(self) -> bool:
        """Every strategy that ran gave the unsharded product with symshard's block shapes."""
        return all(e.correct and e.shapes_ok for e in self.executions)

    @property
    def search_stopped(self) -> str:
        """The search for XLA's plan the time limit cut short (by whole axes, else with axes in parts), as
        :func:`_search_words` names it; empty when none was."""
        if self.stopped:
            return self.stopped
        r = self.refined
        return "parts_" + r.stopped if r is not None and r.stopped else ""

    @property
    def time_limit_reached(self) -> bool:
        """The time limit came first: a search for XLA's plan was cut short, or chosen strategies did not run."""
        return self.not_run > 0 or bool(self.search_stopped)

    @property
    def xla_cheaper(self) -> bool:
        """XLA's plan costs less than symshard's best on both counts that need no cost model: its
        collectives take no more bytes from each device and its dots do no more FLOPs, one of them
        strictly fewer."""
        return _cheaper((self.xla_bytes, self.xla_dot_flops), (self.best_bytes, self.best_flops))

    @property
    def planner_work(self) -> bool:
        """XLA's plan is none of the strategies symshard's planner offers (listed, or among XLA's further
        orders), by whole axes or with axes in parts, and costs less than symshard's best both ways (see
        :attr:`xla_cheaper`), also than its best with the axes XLA splits in parts where those were
        planned: a route symshard's planner lacks, even where a search step by step finds it (:attr:`routed`)."""
        r = self.refined
        if self.planned or (self.refined_match and r is not None and not r.routed) or not self.xla_cheaper:
            return False
        r = self.refined
        return r is None or _cheaper((self.xla_bytes, self.xla_dot_flops), (r.best_bytes, r.best_flops))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "matmul": self.matmul,
            "mesh": self.mesh,
            "shape": self.shape,
            "dtype": self.dtype,
            "hardware": self.hardware,
            "strategies": self.strategies,
            "best": self.best,
            "best_bytes_per_device": self.best_bytes,
            "best_flops_per_device": self.best_flops,
            "xla_collectives": list(self.xla),
            "xla_bytes_per_device": self.xla_bytes,
            "xla_flops_per_device": self.xla_flops,
            "xla_dot_flops_per_device": self.xla_dot_flops,
            "xla_reduction_flops_per_device": self.xla_reduction_flops,
            "xla_repeats_work": self.xla_repeats_work,
            "xla_cheaper": self.xla_cheaper,
            "match": self.match,
            "matched_strategy": self.matched,
            "rank": self.rank,
            "further": self.further,
            "routed": self.routed,
            "matched_on": self.matched_on,
            "flops_agree": self.flops_agree,
            "total_flops_agree": self.total_flops_agree,
            "reason": self.reason,
            "refined": self.refined.to_json() if self.refined is not None else None,
            "lowering": list(self.lowering),
            "chosen": self.chosen,
            "sample": self.sample,
            "sampled_by_default": self.sampled_by_default,
            "seed": self.seed,
            "executed": [
                {
                    "strategy": e.strategy,
                    "correct": e.correct,
                    "exact": e.exact,
                    "max_error": e.max_error,
                    "shapes_ok": e.shapes_ok,
                    "shape_problems": list(e.shape_problems),
                }
                for e in self.executions
            ],
            "executed_ok": self.executed_ok,
            "unrunnable": [{"strategy": name, "why": why} for name, why in self.unrunnable],
            "not_run": self.not_run,
            "time_limit_s": self.time_limit,
            "time_limit_reached": self.time_limit_reached,
            "search_stopped": self.search_stopped or None,
            "symshard_seconds": round(self.symshard_seconds, 6),
            "xla_compile_seconds": round(self.xla_compile_seconds, 6),
            "seconds": round(self.seconds, 6),
        }

    def json(self) -> str:
        """:meth:`to_json` as text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)

    @property
    def flops_verdict(self) -> str:
        """The key of what symshard's FLOPs equal: XLA's dots, its total, both or neither."""
        both = {(True, True): "both", (True, False): "dots", (False, True): "total", (False, False): "neither"}
        return "cli.verify.flops_" + both[bool(self.flops_agree), bool(self.total_flops_agree)]

    def flops_row(self) -> Row:
        """The FLOPs row: XLA's total and its dots, each compared with symshard's count on its own."""
        parts = [_word("cli.verify.flops", total=f"{self.xla_flops:,}", dots=f"{self.xla_dot_flops:,}")]
        extra = self.xla_flops - self.xla_dot_flops
        if extra:
            adds, other = f"{self.xla_reduction_flops:,}", f"{extra - self.xla_reduction_flops:,}"
            parts.append(_word("cli.verify.flops_extra", adds=adds, other=other))
        if self.flops_agree is not None:
            parts.append(_word(self.flops_verdict))
        if self.xla_repeats_work:
            parts.append(_word("cli.verify.repeats"))
        return (("FLOPs",), tuple(parts))

    def flops_text(self) -> str:
        """:meth:`flops_row`'s value, in English."""
        return "".join(self.flops_row()[1])

    def run_rows(self) -> list[Row]:
        """The rows about running strategies under ``shard_map``: what ran, what could not, what was left."""
        rows: list[Row] = []
        if self.executions or (self.chosen and self.sample):
            ok = sum(e.correct and e.shapes_ok for e in self.executions)
            ran: list[str] = [
                _word("cli.verify.ran", ok=ok, total=len(self.executions))
                if self.executions
                else _word("cli.verify.ran_none", chosen=f"{self.chosen:,}")
            ]
            if self.sample:
                chosen, count = f"{self.chosen:,}", f"{self.strategies:,}"
                if self.sampled_by_default:
                    said = _word("cli.verify.sampled_auto", chosen=chosen, count=count, seed=self.seed, limit=AUTO_RUN)
                else:
                    said = _word("cli.verify.sampled", chosen=chosen, count=count, seed=self.seed)
                ran.append(said)
            rows.append((("shard_map",), tuple(ran)))
            for e in self.executions:
                if not (e.correct and e.shapes_ok):
                    why = _clauses(e.shape_problems) if e.shape_problems else str(e.max_error)
                    rows.append(((_word("cli.verify.failed"),), (e.strategy, ": ", why)))
        if self.unrunnable:
            name, why = self.unrunnable[0]
            said = _word("cli.verify.unrunnable_value", count=len(self.unrunnable), name=name, why=why)
            rows.append(((_word("cli.verify.unrunnable"),), (said,)))
        limit = f"{self.time_limit:g}" if self.time_limit is not None else ""
        if self.search_stopped:
            said = _word("cli.verify.search_stopped_value", limit=limit, search=_search_words(self.search_stopped))
            rows.append(((_word("cli.verify.time_limit"),), (said,)))
        if self.not_run:
            left, chosen = f"{self.not_run:,}", f"{self.chosen:,}"
            said = _word("cli.verify.time_limit_value", limit=limit, left=left, chosen=chosen)
            rows.append(((_word("cli.verify.time_limit"),), (said,)))
        return rows

    def rows(self) -> list[Row]:
        """The report as rows of messages, to say in any language (:meth:`text` says them in English)."""
        mesh = _word("cli.verify.mesh_value", mesh=self.mesh, shape=self.shape, dtype=self.dtype)
        rows: list[Row] = [
            ((_word("cli.verify.mesh"),), (_clauses([mesh, self.hardware]) if self.hardware else mesh,)),
            (("symshard",), (_word("cli.verify.symshard_value", count=f"{self.strategies:,}", best=self.best),)),
            (("XLA",), (_clauses(self.xla) if self.xla else _word("cli.verify.no_collectives"),)),
        ]
        agreement = _word("cli.verify.agreement")
        if self.match:
            said = (
                "cli.verify.yes_routed"
                if self.routed
                else "cli.verify.yes_further"
                if self.further
                else "cli.verify.yes"
            )
            rows.append(((agreement,), (_word(said, rank=self.rank, name=self.matched),)))
        elif self.refined is not None and self.refined.match:
            rows.append(((agreement,), (_word("cli.verify.no_on_mesh", reason=self.reason),)))
        elif self.stopped:
            rows.append(((agreement,), (_word("cli.verify.no_in_time", reason=self.reason),)))
        else:
            rows.append(((agreement,), (_word("cli.verify.no", reason=self.reason),)))
        r = self.refined
        if r is not None:
            value = _word(
                "cli.verify.refined_value", label=r.label, mesh=r.mesh, matmul=r.matmul, count=f"{r.strategies:,}"
            )
            rows.append(((_word("cli.verify.refined"),), (value,)))
            rows.append((("  XLA",), (_clauses(r.xla) if r.xla else _word("cli.verify.no_collectives"),)))
            if r.match and r.routed:
                said = _word("cli.verify.refined_yes_routed", name=r.matched)
            elif r.match and r.rank is None:
                said = _word("cli.verify.refined_yes_searched", name=r.matched)
            elif r.match:
                said = _word("cli.verify.refined_yes", rank=r.rank, name=r.matched)
            elif r.matched is not None:
                said = _word("cli.verify.refined_broken", name=r.matched)
            elif r.stopped:
                said = _word("cli.verify.no_in_time", reason=r.reason)
            else:
                said = _word("cli.verify.no", reason=r.reason)
            rows.append((("  ", agreement), (said,)))
        if not self.planned:  # XLA's plan next to symshard's best, where the planner does not offer it
            rows.append(((_word("cli.verify.cost"),), self.cost_parts()))
        rows.append(self.flops_row())
        rows += self.run_rows()
        times = _word(
            "cli.verify.time_value",
            symshard=f"{self.symshard_seconds * 1e3:.1f}",
            xla=f"{self.xla_compile_seconds * 1e3:.1f}",
        )
        rows.append(((_word("cli.verify.time"),), (times,)))
        rows += [((_word("cli.verify.lowering"),), (note,)) for note in self.lowering]
        return rows

    def text(self) -> str:
        """The report, for people."""
        rows = [("".join(k), "".join(v)) for k, v in self.rows()]
        width = max(len(k) for k, _ in rows)
        return self.matmul + "\n" + "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)

    def cost_parts(self) -> tuple[str, ...]:
        """XLA's plan and symshard's best side by side: bytes into collectives and FLOPs, per device."""
        said = _word(
            "cli.verify.cost_value",
            xla_bytes=f"{self.xla_bytes:,}",
            xla_flops=f"{self.xla_dot_flops:,}",
            best_bytes=f"{self.best_bytes:,}",
            best_flops=f"{self.best_flops:,}",
        )
        out = [said]
        r = self.refined
        if r is not None and r.best:
            out.append(_word("cli.verify.parts_cost", best_bytes=f"{r.best_bytes:,}", best_flops=f"{r.best_flops:,}"))
        if self.planner_work:
            out.append(_word("cli.verify.cheaper"))
        return tuple(out)

    def cost_text(self) -> str:
        """:meth:`cost_parts`, in English."""
        return "".join(self.cost_parts())


def _cheaper(xla: tuple[int, int], best: tuple[int, int]) -> bool:
    """``(bytes, FLOPs)`` of XLA's plan no more than ``best``'s both ways, and not the same."""
    return xla[0] <= best[0] and xla[1] <= best[1] and xla != best


def _describe(sig: Signature) -> str:
    return " + ".join(f"{k}_{''.join(a) if all(len(x) == 1 for x in a) else ','.join(a)}[{n}]" for k, a, n in sig)


def _sub_axis_reason(p: Plan, x: XlaPlan, subs: tuple[str, ...]) -> Message:
    """Why a plan that shards by part of a mesh axis is no symshard strategy, naming the parts."""
    sizes = {a.name: int(a.size) for a in p.mesh.axes}
    parents = sorted({s.split(":")[0] for s in subs})
    parts = []
    for a in parents:
        mine = [s for s in subs if s.split(":")[0] == a]
        factors = sorted({int(s.rsplit(")", 1)[1]) for s in mine})
        named: Message | None = None
        for s in reversed(mine):  # "X:(1)2 (the major factor) and X:(2)2 (the minor factor)"
            if s.split(":(")[1].startswith("1)"):
                named = (
                    say("{sub} (the major factor)", sub=s)
                    if named is None
                    else (say("{sub} (the major factor) and {rest}", sub=s, rest=named))
                )
            else:
                named = (
                    say("{sub} (the minor factor)", sub=s)
                    if named is None
                    else (say("{sub} (the minor factor) and {rest}", sub=s, rest=named))
                )
        parts.append(
            say(
                "{axis} ({n} devices) into sub-axes of {sizes} devices: {named}",
                axis=a,
                n=sizes[a],
                sizes="/".join(map(str, factors)),
                named=named,
            )
        )  # fmt: skip
    groups = sorted({a for c in x.collectives if c.axes for a in c.axes if ":" in a})
    kinds = Names(sorted({c.kind for c in x.collectives if c.axes and any(":" in a for a in c.axes)}))
    sliced = ", ".join(x.sliced_sub_axes)
    if groups and sliced:
        uses = say("runs {kinds} over {groups} and slices blocks by {subs}", kinds=kinds, groups=", ".join(groups),
                   subs=sliced)  # fmt: skip
    elif groups:
        uses = say("runs {kinds} over {groups}", kinds=kinds, groups=", ".join(groups))
    else:
        uses = say("slices blocks by {subs}", subs=sliced)
    return say(
        "XLA splits mesh axis {parts}, as Shardy writes them, and {uses}: a sharding by part of a mesh axis, "
        "so no strategy over whole mesh axes can be this plan",
        parts=Clauses(parts),
        uses=uses,
    )


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
            count=r.strategies,
            name=r.matched,
            **where,
        )
    elif r.stopped:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "the search for XLA's collectives through {search} stopped at the time limit",
            search=_search_words(r.stopped),
            **where,
        )
    elif r.searched:
        shown = say(
            "with axes in parts {label} ({mesh}, the same devices in the same order; {command}), as {matmul}, "
            "none of symshard's {count} strategies, nor of XLA's further orders, has exactly XLA's collectives "
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
    return _clauses([reason, shown])


def _roundabout(x: XlaPlan, *, refined: bool = False) -> Message | None:
    """A permute followed by a gather over one of its axes on as many elements: the reason, if so.

    On the mesh, the permute moves shards from axes the array is already sharded by, so gathering
    over those alone gives the same array; with axes in parts that is not claimed."""
    order = list(x.collectives)
    for i, c in enumerate(order):
        if c.kind != "CollectivePermute" or not c.axes:
            continue
        for g in order[i + 1 :]:
            if (
                g.kind == "AllGather"
                and g.axes
                and len(g.axes) == 1
                and g.axes[0] in c.axes
                and g.elements == c.elements
            ):
                other = [a for a in c.axes if a != g.axes[0]]
                if refined:
                    return _clauses(
                        [
                            say(
                                "XLA first moves blocks with a collective-permute over {axes} ({elements} elements "
                                "per device), then runs an all-gather over {axis} on as many elements per device",
                                axes=",".join(c.axes),
                                elements=c.elements,
                                axis=g.axes[0],
                            ),
                            say(
                                "symshard's routes through a permute (straight to the destination's sharding, to it "
                                "in another axis order, to it with some or all of the departing axes kept at the "
                                "minor end of a dim, or swapping one axis for an unused one) give no strategy with "
                                "this sequence and the rest of XLA's plan"
                            ),
                        ]
                    )
                if other:
                    return say(
                        "XLA first moves shards from {other} onto {axis} with a collective-permute ({elements} "
                        "elements per device), then gathers them over {axis}, where gathering over {other} alone "
                        "gives the same array without the permute: a roundabout route, which symshard lists among "
                        "XLA's orders but in no strategy with the rest of XLA's plan",
                        other="/".join(other),
                        axis=g.axes[0],
                        elements=c.elements,
                    )
                return say(
                    "XLA first moves shards from one axis onto {axis} with a collective-permute ({elements} elements "
                    "per device), then gathers them over {axis}, where gathering over the first axis alone gives the "
                    "same array without the permute: a roundabout route, which symshard lists among XLA's orders but "
                    "in no strategy with the rest of XLA's plan",
                    axis=g.axes[0],
                    elements=c.elements,
                )
    return None


def _loose(sig: Signature) -> Signature:
    """A signature with the collective-permutes' axes left out."""
    return tuple(sorted((k, () if k == "CollectivePermute" else a, n) for k, a, n in sig))


def compare(p: Plan, x: XlaPlan, *, refined: bool = False) -> tuple[Strategy | None, int | None, str]:
    """The best-ranked strategy whose communication is exactly XLA's and whose devices do as many FLOPs
    as XLA's dots, its rank, and the reason when there is none (``refined``: ``p`` has axes in parts)."""
    strategy, rank, reason, _ = _compare(p, x, refined=refined)
    return strategy, rank, reason


def _compare(p: Plan, x: XlaPlan, *, refined: bool) -> tuple[Strategy | None, int | None, str, Message | None]:
    """:func:`compare`, with the kind of the disagreement (for grouping) when there is one: a few words
    for the disagreements a sweep meets often, else the reason's first clause."""
    target = x.signature
    sigs = signatures(p)
    hits = [(i, p.strategies[i]) for i, sig in enumerate(sigs) if sig == target]
    same_flops = [(i, s) for i, s in hits if int(s.raw_flops) == x.dot_flops]
    if same_flops:
        i, s = same_flops[0]
        return s, i + 1, "", None
    reasons: list[Message] = []
    kind: Message | None = None  # set with the first clause, when that clause is of a known kind
    if hits:
        i, s = hits[0]
        values = {"index": i + 1, "name": s.name, "xla": f"{x.dot_flops:,}", "mine": f"{int(s.raw_flops):,}"}
        if x.dot_flops > int(s.raw_flops):
            reasons.append(
                say(
                    "XLA runs the collectives of strategy {index} ({name}), but each device's dots do {xla} FLOPs "
                    "where that strategy does {mine}: XLA multiplies bigger blocks, gathering before the dot (or "
                    "slicing after it) what the strategy handles on the other side, and no symshard strategy does "
                    "that with these collectives",
                    **values,
                )
            )
        else:
            reasons.append(
                say(
                    "XLA runs the collectives of strategy {index} ({name}), but each device's dots do {xla} FLOPs "
                    "where that strategy does {mine}: XLA multiplies smaller blocks, gathering after the dot (or "
                    "slicing before it) what the strategy handles on the other side, and no symshard strategy does "
                    "that with these collectives",
                    **values,
                )
            )
        kind = say("the collectives of a symshard strategy, but other FLOPs per device")
    wanted = _loose(target)
    loose = [
        (i, p.strategies[i]) for i, sig in enumerate(sigs) if _loose(sig) == wanted and _flops(p, i) == x.dot_flops
    ]
    if loose and not hits:
        i, s = loose[0]
        theirs = sorted({",".join(a) for k, a, _ in sigs[i] if k == "CollectivePermute"})
        ours = sorted({",".join(c.axes or ("?",)) for c in x.collectives if c.kind == "CollectivePermute"})
        reasons.append(
            say(
                "XLA's collectives and FLOPs are those of strategy {index} ({name}) but for the collective-permute's "
                "axes: XLA's source-target pairs cross {ours}, that strategy's permute {theirs}: the devices holding "
                "the block a device needs differ along more axes than those, and symshard pairs each device with one "
                "that differs only along its permute's axes where XLA picks another, so it is not counted as a match",
                index=i + 1,
                name=s.name,
                ours=Names(ours),
                theirs=Names(theirs),
            )
        )
        kind = say("a symshard strategy's collectives and FLOPs, but for the collective-permute's axes")
    subs = x.sub_axes
    if subs:
        reasons.append(_sub_axis_reason(p, x, subs))
    steps = {t for sig in sigs for t in sig}
    wider = [
        c
        for c in x.collectives
        if c.kind in ("AllGather", "AllToAll")
        and c.axes is not None
        and len(c.axes) > 1
        and (c.kind, tuple(sorted(c.axes)), c.elements) not in steps
    ]
    if wider and not subs:
        c = wider[0]
        reasons.append(
            _clauses(
                [
                    say(
                        "XLA runs {kind} over {axes} on {elements} elements per device, which no symshard strategy "
                        "does: it first slices along an axis the array is replicated over, then moves the data over "
                        "more axes at once",
                        kind=c.kind,
                        axes=",".join(c.axes or ()),
                        elements=c.elements,
                    ),
                    say(
                        "symshard gathers, or moves to another dim in one all-to-all, only the axes that shard the "
                        "array"
                    ),
                ]
            )
        )
    if any(c.axes is None for c in x.collectives if c.kind != "CollectivePermute"):
        reasons.append(say("XLA's device groups are neither whole mesh axes nor sub-axes of them"))
    roundabout = _roundabout(x, refined=refined) if not subs else None
    if roundabout:
        if refined and not reasons:
            kind = say(
                "a collective-permute, then an all-gather over one of its axes: a sequence no symshard strategy has"
            )
        reasons.append(roundabout)
    if not reasons:
        for c in x.collectives:
            if c.kind != "CollectivePermute":
                continue
            where = ",".join(c.axes or ("?",))
            if (c.kind, tuple(sorted(c.axes or ("?",))), c.elements) not in steps:
                reasons.append(
                    say(
                        "XLA runs a collective-permute over {axes} on {elements} elements per device, which no "
                        "symshard strategy runs: none of symshard's routes moves those blocks across those axes",
                        axes=where,
                        elements=c.elements,
                    )
                )
            else:
                reasons.append(
                    _clauses(
                        [
                            say(
                                "XLA runs a collective-permute over {axes} on {elements} elements per device",
                                axes=where,
                                elements=c.elements,
                            ),
                            say("the symshard strategies with that permute run other collectives with it than XLA's"),
                        ]
                    )
                )
            kind = say("a collective-permute that no symshard strategy runs with XLA's other collectives")
            break
    xla_counts = Counter(target)

    def distance(sig: Signature) -> int:
        mine = Counter(sig)
        return sum(((mine - xla_counts) + (xla_counts - mine)).values())

    first: dict[Signature, int] = {}  # each distinct signature at its best rank
    for i, sig in enumerate(sigs):
        first.setdefault(sig, i)
    closest_i = min(first.values(), key=lambda i: (distance(sigs[i]), i))
    closest = p.strategies[closest_i]
    reasons.append(say("XLA runs {a}", a=_describe(target)) if target else say("XLA runs nothing"))
    said = {"index": closest_i + 1, "name": closest.name}
    if sigs[closest_i]:
        reasons.append(
            say("the closest symshard strategy ({index}, {name}) runs {mine}", mine=_describe(sigs[closest_i]), **said)
        )
    else:
        reasons.append(say("the closest symshard strategy ({index}, {name}) runs nothing", **said))
    return None, None, _clauses(reasons), kind or _first_clause(reasons[0])


def _first_clause(reason: Message) -> Message:
    """The first sentence of a reason (a reason of several clauses starts with the first of them)."""
    values = dict(reason.values)
    if reason.template == "{clauses}" and values["clauses"]:
        return _first_clause(values["clauses"][0])  # type: ignore[index]
    return reason


@dataclass(frozen=True, slots=True)
class Refinement:
    """One matmul whose XLA plan shards by sub-axes, checked again with those mesh axes in parts: the
    same devices, in the same order, each split axis used as one axis per part (:mod:`symshard.machines.subaxes`).

    On mesh ``X=4,Y=2`` XLA may treat X as two halves, ``X:(1)2`` (major) and ``X:(2)2``
    (minor); split as ``X=2x2`` the mesh is ``X1=2,X2=2,Y=2``, the same eight devices (device
    ``(x1*2 + x2)*2 + y`` is device ``x*2 + y`` of the mesh as written, with ``x = 2*x1 + x2``), on
    which ``I_X`` is ``I_{X1,X2}`` and the halves are the parts X1 and X2. The matmul is planned again
    so (``plan(..., split=..., routes="xla")``), XLA's compiled module (the same one) is read with the
    parts as axes, and its collectives are looked for among that plan's strategies; a strategy that
    has them is run under ``shard_map`` and counts as a match only if it gives the product (:attr:`match`).
    """

    label: str  # "X=X1·X2": which axis became which parts
    mesh: str  # the mesh with the parts, "X1=2,X2=2,Y=2"
    matmul: str  # the matmul with every split axis replaced by its parts, major first
    strategies: int
    xla: tuple[str, ...]  # XLA's collectives over the parts
    matched: str | None
    rank: int | None
    reason: str
    executions: tuple[Execution, ...]  # the matched strategy under shard_map
    kind: Message | None = None  # the kind of the disagreement, for grouping (see compare); None: no reason
    split: str = ""  # the split as the CLI takes it, "X=2x2"
    searched: bool = False  # found (or not) by a search for XLA's collectives, not in a listing: no rank
    routed: bool = False  # found only step by step, through routes no plan lists (see Verification.routed)
    best: str = ""  # symshard's fastest strategy with the axes in parts
    best_bytes: int = 0  # bytes each device puts into its collectives, in the plan's dtype
    best_flops: int = 0  # its FLOPs per device
    stopped: str = ""  # the search the time limit cut short: "search", "further" or "routes" (see _search_words)

    @property
    def match(self) -> bool:
        """XLA's collectives are exactly a strategy of the plan with axes in parts, and that strategy, run under
        ``shard_map``, gave the product with symshard's block shapes."""
        return (
            self.matched is not None
            and bool(self.executions)
            and all(e.correct and e.shapes_ok for e in self.executions)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "refined_mesh": self.label,
            "split": self.split,
            "mesh": self.mesh,
            "matmul": self.matmul,
            "strategies": self.strategies,
            "xla_collectives": list(self.xla),
            "match": self.match,
            "matched_strategy": self.matched,
            "rank": self.rank,
            "reason": self.reason,
            "reason_kind": None if self.match else self.kind or "",
            "searched": self.searched,
            "routed": self.routed,
            "stopped": self.stopped or None,
            "best": self.best,
            "best_bytes": self.best_bytes,
            "best_flops": self.best_flops,
            "executed": [
                {"strategy": e.strategy, "correct": e.correct, "exact": e.exact, "shapes_ok": e.shapes_ok}
                for e in self.executions
            ],
        }


def _split_axes(p: Plan, x: XlaPlan) -> dict[str, tuple[int, ...]]:
    """Each mesh axis XLA's plan splits, with the sizes of its parts, major first: the cuts of every
    sub-axis ``X:(pre)sub`` it uses (after the ``pre`` major devices' worth, and after ``pre*sub``)
    cut the axis into consecutive parts (named ``X1, X2, ...`` by :func:`symshard.machines.subaxes.split_mesh`)."""
    sizes = {a.name: int(a.size) for a in p.mesh.axes}
    out: dict[str, tuple[int, ...]] = {}
    for parent in sorted({s.split(":")[0] for s in x.sub_axes}):
        n = sizes[parent]
        cuts = {1, n}
        for s in x.sub_axes:
            head, _, rest = s.partition(":(")
            if head != parent:
                continue
            pre, _, sub = rest.partition(")")
            cuts |= {int(pre), int(pre) * int(sub)}
        ordered = sorted(cuts)
        if any(b % a for a, b in itertools.pairwise(ordered)):
            return {}
        out[parent] = tuple(b // a for a, b in itertools.pairwise(ordered))
    return out


REFINED_AXES = 4
"""The most axes a mesh with axes in parts may have for :func:`verify` to list and rank its plan: 2-D arrays on
four axes list in seconds (a few hundred thousand strategies), 3-D ones on four axes millions, so beyond
three axes only a 2-D product's plan is listed; the others are searched for XLA's collectives."""


def _listable(p: Plan, x: XlaPlan) -> bool:
    """Whether the plan with the axes ``x`` splits in parts is small enough to list and rank: below
    :data:`REFINED_AXES` mesh axes, or that many with 2-D arrays; beyond, it is searched instead."""
    split = _split_axes(p, x)
    count = sum(len(split.get(a.name, (0,))) for a in p.mesh.axes)
    dims = max(len(a.dims) for a in (p.matmul.lhs, p.matmul.rhs))
    return count < REFINED_AXES or (count == REFINED_AXES and dims <= 2)


def refine(
    p: Plan,
    x: XlaPlan,
    *,
    model: str = "book",
    fused: bool = True,
    memo: dict | None = None,
    deadline: float | None = None,
) -> Refinement | None:
    """``p``'s matmul checked with the mesh axes XLA's plan ``x`` splits in parts (see :class:`Refinement`);
    None when ``x`` uses no sub-axes or they do not cut their axes into parts. A plan too long to list
    (:func:`_listable`) is searched for XLA's collectives instead, and its match is not ranked. A search
    still going at ``deadline`` (a ``time.perf_counter()`` instant) stops there, and the refinement says
    which (:attr:`Refinement.stopped`)."""
    split = _split_axes(p, x)
    if not split:
        return None
    listed = _listable(p, x)
    mm = p.matmul
    out = mm.out if mm.out is not None else p.strategies[0].output
    sizes = ",".join(f"{k}={v}" for k, v in p.sizes)
    # the plan on the mesh as written, with the split axes usable in parts; XLA's orders are the mesh's
    rp = plan.__wrapped__(  # type: ignore[attr-defined]
        Matmul(mm.lhs, mm.rhs, out), p.mesh, sizes, dtype=p.dtype, hardware=p.hardware, model=model, routes="xla",
        split=split, all=listed,
    )  # fmt: skip
    shape = [(a.name, int(a.size)) for a in rp.mesh.axes]
    mesh_text = ",".join(f"{n}={s}" for n, s in shape)
    rx = _reread(x, shape, p.dtype)
    kind: Message | None
    stopped = ""
    if listed:
        strategy, rank, reason, kind = _compare(rp, rx, refined=True)
        count = len(rp.strategies)
    else:
        rank, count, reason, kind = None, rp.source.count(), "", None
        strategy, stopped = _in_time(lambda: _searched(rp, rx, deadline=deadline), "search")
    searched = not listed
    routed = False
    if strategy is None and not stopped:
        # XLA's further orders, which a plan with axes in parts does not list (see planner._wide)
        strategy, stopped = _in_time(lambda: _searched(rp, rx, further=True, deadline=deadline), "further")
        searched = searched or strategy is not None
        if strategy is None and not stopped:
            # any route of symshard's collectives, found step by step from XLA's
            strategy, stopped = _in_time(lambda: _searched(rp, rx, any_route=True, deadline=deadline), "routes")
            routed = strategy is not None
            searched = searched or routed
        if strategy is not None:
            rank, reason, kind = None, "", None
        elif not listed and not stopped:
            kind = say("no strategy with exactly XLA's collectives and FLOPs, searched by its collectives")
            reason = kind
    if stopped:
        kind = say("the search stopped at the time limit")
        reason = _clauses([c for c in (reason, _stopped_clause(stopped)) if c])
    executions: tuple[Execution, ...] = ()
    if strategy is not None:
        key = ("refined mesh", mesh_text)
        own = None if memo is None else memo.setdefault(key, {})
        done = _attempt(rp, strategy, fused=fused, memo=own)
        executions = (done,) if isinstance(done, Execution) else ()
    return Refinement(
        label="; ".join(s.label for s in rp.split),
        mesh=mesh_text,
        matmul=str(rp.matmul),
        strategies=count,
        xla=tuple(c.describe() for c in rx.collectives),
        matched=strategy.name if strategy is not None else None,
        rank=rank,
        reason=reason,
        executions=executions,
        kind=kind,
        split=",".join(s.spec for s in rp.split),
        searched=searched,
        routed=routed,
        stopped=stopped,
        best=rp.strategies[0].name,
        best_bytes=_bytes(signature(rp.strategies[0], rp), p.dtype),
        best_flops=int(rp.strategies[0].raw_flops),
    )


def _attempt(p: Plan, s: Strategy, *, fused: bool, memo: dict | None) -> Execution | str:
    """``s`` run under ``shard_map``, or why it cannot run (a block that does not divide). A
    :class:`~symshard.errors.ShardingError` while running (a block shape JAX and symshard disagree
    on) is kept as a failed :class:`Execution` carrying its message, never raised."""
    why = undivided(p, s)
    if why is not None:
        return why
    try:
        return execute(p, s, fused=fused, memo=memo)
    except ShardingError as err:
        return Execution(s.name, False, False, math.inf, 0.0, False, (err.message,), 0)


def _bytes(sig: Signature, dtype: str) -> int:
    """Bytes each device contributes to the collectives of ``sig``, elements in ``dtype``."""
    return int(sum(n for _, _, n in sig) * dtype_bytes(dtype))


AUTO_RUN = 100
"""With ``run='auto'`` (verify's default), every strategy runs when a plan has at most this many; a larger
plan (a mesh of three or four axes lists thousands to millions) runs a seeded sample of this many."""


def _check_run(run: str, sample: int | None) -> None:
    if run not in ("auto", "all", "best", "none"):
        raise UsageError(
            say("run must be auto, all, best or none, not {value}", value=repr(run)), hint=say("e.g. run='best'")
        )
    if sample is not None and (sample < 1 or run not in ("all", "auto")):
        raise UsageError(
            say("a sample of {count} strategies with run={run} cannot be drawn", count=sample, run=repr(run)),
            hint=say("sample at least 1 strategy, with run='auto' or 'all' (the sample is drawn from all strategies)"),
        )


def choose(
    p: Plan, run: str, *, sample: int | None = None, seed: int = 0, keep: Strategy | None = None
) -> list[Strategy]:
    """The strategies of ``p`` to run under ``shard_map``, in the plan's order.

    ``run`` is ``'all'``, ``'best'`` or ``'none'``; with ``'all'``, ``sample`` runs at most that
    many: the best and ``keep`` (the strategy matching XLA's plan) always, the rest drawn with
    ``random.Random(seed)``, so the same seed picks the same strategies.

    Raises:
        UsageError: an unknown ``run``, or a ``sample`` below 1 or with a ``run`` other than ``'all'``.
    """
    _check_run(run, sample)
    if run == "none":
        return []
    if run == "best":
        return list(p.strategies[:1])
    if sample is None or sample >= len(p.strategies):
        return list(p.strategies)
    listed = p.strategies
    where = listed.index_of if isinstance(listed, StrategyList) else listed.index
    always = {0} | ({where(keep)} if keep is not None else set())
    others = [i for i in range(len(p.strategies)) if i not in always]
    drawn = random.Random(seed).sample(others, max(0, min(sample - len(always), len(others))))
    return [p.strategies[i] for i in sorted(always | set(drawn))]


def _searched(
    p: Plan, x: XlaPlan, *, further: bool = False, any_route: bool = False, deadline: float | None = None
) -> Strategy | None:
    """The fastest of ``p``'s strategies (with ``further``, also of XLA's further orders; with ``any_route``,
    of the strategies whose legs are any routes of symshard's collectives) with exactly XLA's collectives
    and dot FLOPs, found by a search for those collectives rather than a listing.

    Raises:
        TimeLimitError: the search was still going at ``deadline`` (a ``time.perf_counter()`` instant).
    """
    if any(c.axes is None for c in x.collectives):
        return None
    sizes = {k: int(v) for k, v in p.sizes}
    axes = {a.name: int(a.size) for a in p.mesh.axes}

    def steps_signature(steps: tuple[CollectiveExpr, ...]) -> Signature:
        return tuple(sorted(_step_signature(e, sizes, axes) for e in steps if not isinstance(e.op, DynamicSlice)))

    kinds = Counter(c.kind for c in x.collectives)
    found = p.matching(
        steps_signature, x.signature, further=further, any_route=any_route, kinds=kinds, deadline=deadline
    )
    return next((s for s in found if int(s.raw_flops) == x.dot_flops), None)


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

    A listed strategy holding a block that does not divide is reported in
    :attr:`Verification.unrunnable`, not run; one whose run raises is a failed execution.

    Raises:
        PlanError, ShardingError, ...: as :func:`symshard.plan`; MeshError: too few devices;
        UsageError: a bad ``run`` or ``sample``.
    """
    started = time.perf_counter()
    m_ = matmul(mm) if isinstance(mm, str) else mm
    _check_run(run, sample)  # before any work
    start = time.perf_counter()
    p = plan.__wrapped__(m_, mesh, shape, dtype=dtype, hardware=hardware, model=model, routes="xla")  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    x = xla_plan(p)
    strategy, rank, reason = compare(p, x)
    deadline = None if time_limit is None else started + time_limit
    stopped = ""  # the search the time limit cut short, if one was
    # XLA's further orders, which the plan may not list (see planner._wide), searched for XLA's collectives
    further = None
    if strategy is None and not x.sub_axes:
        further, stopped = _in_time(lambda: _searched(p, x, further=True, deadline=deadline), "further")
    if further is not None:
        strategy, rank, reason = further, p.place(further), ""
    # failing those, any route of symshard's collectives, found step by step from XLA's: a match only
    # if it runs correctly, for no plan lists it
    routed: Execution | None = None
    if strategy is None and not x.sub_axes and not stopped:
        found, stopped = _in_time(lambda: _searched(p, x, any_route=True, deadline=deadline), "routes")
        if found is not None:
            done = _attempt(p, found, fused=fused, memo=memo)
            if isinstance(done, Execution) and done.correct and done.shapes_ok:
                strategy, rank, reason, routed = found, p.place(found), "", done
            else:
                broken = say(
                    "XLA's collectives are exactly {name}, a route of symshard's collectives that its planner does "
                    "not list, found step by step from XLA's collectives, which did NOT run correctly",
                    name=found.name,
                )
                reason = _clauses([reason, broken])
    if stopped:
        reason = _clauses([c for c in (reason, _stopped_clause(stopped)) if c])
    refined = None
    if strategy is None and x.sub_axes:
        refined = refine(p, x, model=model, fused=fused, memo=memo, deadline=deadline)
    if refined is not None:
        reason = _refined_reason(reason, refined)
    sizes = {k: int(v) for k, v in p.sizes}
    total = 2
    for d in m_.dims:
        total *= sizes[d]
    devices = int(p.mesh.devices)
    repeats = x.dot_flops * devices > total
    # FLOPs: against the matched strategy; without one, where XLA repeats no work, against the
    # product's FLOPs split over every device (what symshard counts for a fully split product)
    flops_agree: bool | None = None
    total_agree: bool | None = None
    if strategy is not None:
        flops_agree = int(strategy.raw_flops) == x.dot_flops
        total_agree = int(strategy.raw_flops) == x.flops
    elif not repeats:
        every = {_flops(p, i) for i in range(len(p.strategies))}
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
        done = _attempt(p, s, fused=fused, memo=memo)
        if isinstance(done, str):
            unrunnable.append((s.name, done))
        else:
            executions.append(done)
        if progress is not None:
            progress(i + 1, len(chosen))
    best = p.strategies[0]
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
        xla_bytes=_bytes(x.signature, p.dtype),
        best_bytes=_bytes(signature(best, p), p.dtype),
        best_flops=int(best.raw_flops),
        chosen=len(chosen),
        sample=sample if run == "all" and sample is not None and sample < len(p.strategies) else None,
        sampled_by_default=by_default,
        seed=seed,
        unrunnable=tuple(unrunnable),
        not_run=not_run,
        time_limit=time_limit,
        stopped=stopped,
        seconds=time.perf_counter() - started,
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
    if ELIDED in x.hlo:
        lowering.append(
            say(
                "this jaxlib prints constants of more than ten elements as constant({{...}}) and offers no option to "
                "print them; a reduce-scatter whose offset table is one of them stays the all-reduce it is written as"
            )
        )
    return tuple(lowering)

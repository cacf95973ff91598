"""XLA's plan for one sharded matmul, read in symshard's terms, and symshard's strategies in the same terms.

Two plans compare only in one vocabulary: each collective as (kind, mesh axes, elements each device
contributes), a plan's communication as the sorted tuple of those (:data:`Signature`). Here XLA's
compiled module becomes an :class:`XlaPlan` of :class:`XlaCollective` (:func:`xla_plan`: the product
jitted with the plan's shardings on a mesh of ``AxisType.Auto`` axes, its HLO's collectives read back),
and a symshard strategy its :func:`signature` (:func:`signatures` for a whole plan, each distinct step
worked out once).

The bottom of :mod:`symshard.jax`'s check of one matmul: :mod:`.matching` compares the two plans,
:mod:`.searches` looks further for XLA's, :mod:`.verification` puts the check together. Only
:func:`xla_plan` loads JAX.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..algebra.dtypes import dtype_bytes
from ..costs.collectives import CollectiveExpr
from ..machines.mesh import Mesh
from ..messages import Message, say
from ..notation.einsums import Matmul
from ..planning.listing import StrategyList
from ..planning.strategies import Leg, Plan, PlanStep, Strategy
from .execution import jax_dtype
from .hlo import (
    HloCollective,
    collectives,
    dot_flops,
    group_sub_axes,
    module_text,
    multiply_flops,
    reduction_flops,
    sub_axis_slices,
    sum_flops,
)
from .interop import jax_mesh, partition_spec
from .runtime import require_jax

__all__ = [
    "Signature",
    "XlaCollective",
    "XlaPlan",
    "axis_devices",
    "received_elements",
    "reread",
    "signature",
    "signature_bytes",
    "signature_received",
    "signatures",
    "sizes_of",
    "step_signature",
    "strategy_flops",
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
    group: int = 0  # devices in each of its groups (0: a permute, whose pairs are no groups)

    def describe(self) -> Message:
        axes = ",".join(self.axes) if self.axes is not None else "?"
        values = {"collective": f"{self.kind}_{axes}", "count": self.elements, "bytes": self.hlo_bytes}
        if self.lowered:
            return say(
                "{collective} ({count} {count:element|elements}, {bytes} B as {dtype}, {lowered})",
                dtype=self.hlo_dtype,
                lowered=self.lowered,
                **values,
            )
        return say(
            "{collective} ({count} {count:element|elements}, {bytes} B as {dtype})", dtype=self.hlo_dtype, **values
        )


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
    sum_flops: int = 0  # the adds of its local sums (reduce), as cost_analysis counts them
    multiply_flops: int = 0  # the share of dot_flops XLA wrote as a multiply (a product contracting nothing)

    @property
    def sub_axes(self) -> tuple[str, ...]:
        """Every sub-axis the plan shards by: in its collectives' device groups or in its slices. Sorted."""
        found = set(self.sliced_sub_axes)
        found.update(a for c in self.collectives if c.axes for a in c.axes if ":" in a)
        return tuple(sorted(found))

    @property
    def signature(self) -> Signature:
        return tuple(sorted((c.kind, tuple(sorted(c.axes or ("?",))), c.elements) for c in self.collectives))

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("XlaPlan", None, {"collectives": [f"{k}_{''.join(a)}" for k, a, _ in self.signature],
                       "flops": self.flops})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)

    def received_bytes(self, dtype: str) -> int:
        """Bytes each device receives in the plan's collectives, elements in ``dtype`` (see
        :func:`received_elements`)."""
        got = sum(received_elements(c.kind, c.group, c.elements) for c in self.collectives)
        return math.ceil(got * Fraction(dtype_bytes(dtype)))


def signature(strategy: Strategy, plan_: Plan) -> Signature:
    """The (kind, axes, elements per device) of each communication step of ``strategy``."""
    sizes = {k: int(v) for k, v in plan_.sizes}
    axes = {a.name: int(a.size) for a in plan_.mesh.axes}
    return tuple(sorted(step_signature(st.op, sizes, axes) for st in strategy.collectives))  # type: ignore[arg-type]


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
                triple = known[st.op] = step_signature(st.op, sizes, axes)  # type: ignore[arg-type]
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


def signature_bytes(sig: Signature, dtype: str) -> int:
    """Bytes each device contributes to the collectives of ``sig``, elements in ``dtype``."""
    return int(sum(n for _, _, n in sig) * dtype_bytes(dtype))


def received_elements(kind: str, group: int, elements: int) -> Fraction:
    """Elements each device receives in one collective over groups of ``group`` devices to which it
    contributes ``elements``: what it lacks and must be sent, whatever the algorithm (a ring's steps, a
    tree's), and for an all-reduce what the bandwidth-optimal one (a reduce-scatter, then an all-gather)
    receives. An all-gather receives the ``group - 1`` other blocks, a reduce-scatter ``group - 1`` shares
    of the others' partial sums, an all-to-all the ``group - 1`` pieces the others send it, a permute one
    block.

    Examples:
        >>> received_elements("AllGather", 8, 512), received_elements("ReduceScatter", 8, 4096)
        (Fraction(3584, 1), Fraction(3584, 1))
        >>> received_elements("AllReduce", 4, 100), received_elements("CollectivePermute", 0, 64)
        (Fraction(150, 1), Fraction(64, 1))
    """
    n = max(group, 1)
    if kind == "AllGather":
        return Fraction((n - 1) * elements)
    if kind in ("ReduceScatter", "AllToAll"):
        return Fraction(elements * (n - 1), n)
    if kind == "AllReduce":
        return Fraction(2 * elements * (n - 1), n)
    return Fraction(elements)  # a permute: one block in


def axis_devices(axis: str, sizes: Mapping[str, int]) -> int:
    """Devices along a mesh axis (``sizes``) or a sub-axis ``X:(2)2`` (its last number).

    Examples:
        >>> axis_devices("X", {"X": 4}), axis_devices("X:(1)2", {"X": 4})
        (4, 2)
    """
    if ":" in axis:
        return int(axis.rsplit(")", 1)[1])
    return int(sizes[axis])


def sizes_of(p: Plan) -> dict[str, int]:
    """The sizes of the axes of ``p``'s mesh, by name."""
    return {a.name: int(a.size) for a in p.mesh.axes}


def signature_received(sig: Signature, sizes: Mapping[str, int], dtype: str) -> int:
    """Bytes each device receives in the collectives of ``sig`` on a mesh of axis ``sizes``, elements in
    ``dtype`` (:func:`received_elements`, rounded up to a whole byte).

    Examples:
        >>> signature_received((("AllGather", ("X",), 512),), {"X": 8}, "fp32")
        14336
    """
    got = sum(received_elements(k, math.prod(axis_devices(a, sizes) for a in axes), n) for k, axes, n in sig)
    return math.ceil(got * Fraction(dtype_bytes(dtype)))


def strategy_flops(p: Plan, i: int) -> int:
    """The FLOPs per device of ``p``'s strategy ``i``'s local product (what XLA's dots do), without building it
    where the plan lists every one."""
    listed = p.strategies
    return int(listed.flops(i) if isinstance(listed, StrategyList) else listed[i].raw_product_flops)


def step_signature(
    expr: CollectiveExpr, sizes: Mapping[str, int], axes: Mapping[str, int]
) -> tuple[str, tuple[str, ...], int]:
    """One communication step as (kind, mesh axes, elements each device contributes), given every dim's
    size and every mesh axis's: the terms in which :func:`signature` and XLA's collectives compare.

    Examples:
        >>> from symshard.costs.collectives import AllGather
        >>> from symshard.notation.arrays import Array
        >>> step_signature(AllGather(("X",))(Array.parse("A[I_X, J]")), {"I": 8, "J": 4}, {"X": 2})
        ('AllGather', ('X',), 16)
    """
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
        sum_flops(text),
        multiply_flops(text),
    )


def reread(x: XlaPlan, shape: list[tuple[str, int]], dtype: str) -> XlaPlan:
    """``x``'s compiled module read again on a mesh of the same devices with other axes (axes in parts)."""
    devices = 1
    for _, n in shape:
        devices *= n
    found = tuple(_translate(c, shape, dtype) for c in collectives(x.hlo, devices))
    return XlaPlan(
        found,
        x.flops,
        x.dot_flops,
        x.compile_seconds,
        x.hlo,
        sub_axis_slices(x.hlo, shape),
        x.reduction_flops,
        x.sum_flops,
        x.multiply_flops,
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
    group = len(c.groups[0]) if c.groups else 1
    return XlaCollective(
        c.kind, group_sub_axes(c.groups, shape), c.operand_elements, c.dtype, c.operand_bytes, c.dim, c.lowered, group
    )

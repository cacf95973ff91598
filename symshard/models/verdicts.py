"""A given batch on a given slice: the best FSDP × TP split of its chips, and whether a scheme is compute-bound.

:func:`symshard.models.parallelism.roofline` states when a scheme is compute-bound, as a condition;
this module answers for numbers. :func:`best_split` costs every divisor split ``|X|·|Y| = N`` of
the chips (through the network's levels on a GPU) and returns the cheapest beside the continuous
optimum (:class:`SplitChoice`); :func:`verdict` says whether ``dp``, ``fsdp``, ``tp``, ``fsdp+tp`` or
``pods`` is compute-bound for ``B`` tokens on ``N`` chips (:class:`Verdict`). It sits in the models
layer, on :mod:`.parallelism`.

Examples:
    >>> verdict("dp", batch=4_000_000, chips=8960, model="llama3-70b", hardware="v5p").bound
    'communication'
    >>> split = best_split(4_000_000, 8960, model="llama3-70b", hardware="v5p")
    >>> split.x, split.y, split.compute_bound
    (1120, 8, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from ..algebra.conditions import Condition
from ..algebra.dtypes import canonical_dtype
from ..algebra.mathtext import as_expr
from ..algebra.symbols import axis, dim
from ..errors import HardwareError, ModelError, PlanError, SymshardError
from ..machines.chips import Hardware
from ..machines.presets import hardware as lookup_hardware
from ..messages import say
from .bounds import OVERLAPS, fabric_of, overlap_key, scheme_key
from .networked import through_network
from .parallelism import forward_groups, known_values, roofline, split_optimum
from .schemes import N, layer
from .training import BatchPerChip, batch_per_chip, chip_count
from .transformer import Model, positive_number
from .transformer import model as lookup_model

__all__ = ["SplitChoice", "Verdict", "best_split", "verdict"]


@dataclass(frozen=True, slots=True)
class SplitChoice:
    """The best split of ``N`` chips into ``|X|`` (FSDP) × ``|Y|`` (TP) for a batch.

    Attributes:
        chips: ``N``.
        batch: ``B`` tokens.
        optimum: the continuous optimum of ``|X|``, as a formula and on these numbers.
        x, y: the best divisor split ``|X|·|Y| = N``.
        comm_time: forward ``T_comms`` at ``(x, y)``.
        math_time: forward ``T_math``.
        convention: how the collectives combine.
        even: whether ``|X|`` divides the batch and ``D`` and ``|Y|`` divides ``D`` and ``F`` (else XLA pads).
        by_divisor: ``(x, y, T_comms, even)`` of every divisor split.
    """

    chips: int
    batch: sympy.Expr
    optimum_formula: sympy.Expr
    optimum: sympy.Expr
    x: int
    y: int
    comm_time: sympy.Expr
    math_time: sympy.Expr
    convention: str
    even: bool
    by_divisor: tuple[tuple[int, int, sympy.Expr, bool], ...]

    @property
    def compute_bound(self) -> bool | None:
        """Whether the forward pass is compute-bound at the best divisor split."""
        if not as_expr(self.comm_time).is_number:
            return None
        return bool(self.comm_time <= self.math_time)

    @property
    def note(self) -> str | None:
        """What XLA does when the best split's shards do not divide the sizes (None when they do)."""
        if self.even:
            return None
        return (
            f"|X| = {self.x} and |Y| = {self.y} do not divide the batch and the model dims evenly: "
            "XLA pads the shards, and the times are those of the unpadded sizes"
        )

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        return summary("SplitChoice", None, {"X": self.x, "Y": self.y, "optimum": self.optimum, "T_math":
                       format_seconds_expr(self.math_time), "T_comms": format_seconds_expr(self.comm_time)},
                       chips=self.chips, batch=self.batch)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _comm_at(fabric: str, mode: str, point: Mapping[sympy.Symbol, sympy.Expr], dtype: str = "bf16") -> sympy.Expr:
    groups = [as_expr(g).xreplace(point) for g in forward_groups(fabric, dtype)]
    return sympy.Max(*groups) if mode == "axes" else sympy.Add(*groups)


def _places(x: int, y: int, sizes: Mapping[str, int]) -> bool:
    from ..costs.placement import place

    lay = layer("fsdp+tp")
    try:
        for name in lay.program.held:
            for arr in lay.program.versions(name):
                place(arr, {"X": x, "Y": y}, {d: sizes[d] for d in arr.dim_names if d in sizes})
    except SymshardError:
        return False
    return True


def best_split(
    batch: object,
    chips: object,
    *,
    model: Model | str | None = None,
    hardware: Hardware | str,
    overlap: str = "axes",
    spreads: Mapping[str, int] | None = None,
    dtype: str = "bf16",
) -> SplitChoice:
    """The FSDP × TP split of ``chips`` chips that moves the least for a batch of ``batch`` tokens.

    Every divisor pair ``|X|·|Y| = N`` whose arrays place (the batch and ``D`` divide by ``|X|``,
    ``D`` and ``F`` by ``|Y|``) is costed with the forward pass's collectives, combined by
    ``overlap``; the cheapest is returned with the continuous optimum beside it. On a GPU each pair's
    collectives are costed through the network's levels (Y, the faster-varying axis, fills the node
    first), so a split that keeps TP inside the node wins where it should.

    Raises:
        ModelError: a batch or chip count that is not a positive whole number.
        PlanError: an unknown overlap convention.
    """
    mode = overlap_key(overlap)
    hw = lookup_hardware(hardware)
    mdl = lookup_model(model) if model is not None else None
    b = positive_number(batch, "batch", integer=True)
    n = int(chip_count(chips))
    fabric = fabric_of(hw)
    values = known_values(hw, mdl, dtype, spreads)
    if mdl is None:
        raise ModelError(say("best_split needs a model for D and F"), hint=say("pass model='llama3-70b' or a Model"))
    values[dim("B")] = b
    split = split_optimum(fabric, mode, canonical_dtype(dtype))
    optimum = as_expr(split.x).xreplace({**values, N: n})
    math = as_expr(split.math_time).xreplace({**values, N: n})
    sizes = {"B": int(b), "D": int(mdl.d_model), "F": int(mdl.d_ff)}
    dt = canonical_dtype(dtype)
    gpu = fabric == "nvlink"
    prog = layer("fsdp+tp", fabric=fabric, dtype=dt, comm_overlap=mode).program
    rows = []
    for x in (d for d in range(1, n + 1) if n % d == 0):
        y = n // x
        point = {**values, axis("X"): sympy.Integer(x), axis("Y"): sympy.Integer(y)}
        t = None
        if gpu:  # the split decides which collectives leave the node: cost each through the network's levels
            try:
                t = through_network(prog, hw, {"X": x, "Y": y}).comm_time(prog, "forward").xreplace(point)
            except HardwareError:  # a level without a figure (an A100's scale-out): one NVLink domain's W
                t = None
        if t is None:
            t = _comm_at(fabric, mode, point, dt)
        rows.append((x, y, t, _places(x, y, sizes)))
    # a split whose shards do not divide the sizes still runs (XLA pads them), so every divisor pair
    # competes; among equally cheap ones an even split wins
    x, y, t, even = min(rows, key=lambda r: (r[2], not r[3], r[0]))
    return SplitChoice(n, b, split.x, optimum, x, y, t, math, OVERLAPS[mode], even, tuple(rows))


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether one scheme is compute-bound for a given batch on a given slice.

    Attributes:
        scheme: the scheme.
        batch: tokens per step.
        chips: chips in the slice.
        per_chip: the batch per chip (real, with XLA's padding).
        math_time, comm_time: ``T_math`` and ``T_comms`` of the binding pass of one layer, seconds.
        bound: ``'compute'`` or ``'communication'``.
        condition: the numeric condition on this chip.
        detail: the split or degree used (FSDP × TP: ``{'X': .., 'Y': ..}``).
    """

    scheme: str
    batch: sympy.Expr
    chips: sympy.Expr
    per_chip: BatchPerChip
    math_time: sympy.Expr
    comm_time: sympy.Expr
    bound: str
    condition: Condition | None
    detail: Mapping[str, object] = field(default_factory=dict)

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        return summary("Verdict", self.scheme, {"bound": self.bound, "T_math": format_seconds_expr(self.math_time),
                       "T_comms": format_seconds_expr(self.comm_time)}, batch=self.batch, chips=self.chips)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def verdict(
    scheme: str,
    *,
    batch: object,
    chips: object,
    model: Model | str,
    hardware: Hardware | str,
    overlap: str = "axes",
    spreads: Mapping[str, int] | None = None,
    pods: int = 2,
    dtype: str = "bf16",
) -> Verdict:
    """Whether ``scheme`` is compute-bound for ``batch`` tokens on ``chips`` chips of ``hardware``.

    ``dp`` and ``fsdp`` put every chip on X, ``tp`` every chip on Y, ``fsdp+tp`` takes the best
    divisor split (:func:`best_split`), ``pods`` splits the chips into ``pods`` pods. On a GPU the
    collectives are costed through the network's levels for that many chips. The batch per chip is a
    real number; when the chips do not divide the batch XLA pads it and the padded batch is what each
    chip computes.

    Raises:
        PlanError: a scheme without a per-batch verdict (``pipeline``, ``expert``).
    """
    key = scheme_key(scheme)
    hw = lookup_hardware(hardware)
    mdl = lookup_model(model)
    b = positive_number(batch, "batch", integer=True)
    n = chip_count(chips)
    per = batch_per_chip(b, n)
    # on a GPU the chips decide how far the collectives reach (dp, fsdp, tp through the network's levels)
    across = n if fabric_of(hw) == "nvlink" and key in ("dp", "fsdp", "tp") and n.is_number else None
    roof = roofline(key, hardware=hw, model=mdl, overlap=overlap, spreads=spreads, dtype=dtype, chips=across)
    values = {**roof.values, dim("B"): b, dim("D"): mdl.d_model, dim("F"): mdl.d_ff}
    detail: dict[str, object] = {}
    if key in ("dp", "fsdp"):
        point = {**values, axis("X"): n}
        math, comm = as_expr(roof.math_time).xreplace(point), as_expr(roof.comm_time).xreplace(point)
    elif key == "tp":
        point = {**values, axis("Y"): n}
        math, comm = as_expr(roof.math_time).xreplace(point), as_expr(roof.comm_time).xreplace(point)
        detail["Y"] = int(n)
    elif key == "fsdp+tp":
        choice = best_split(b, n, model=mdl, hardware=hw, overlap=overlap, spreads=spreads, dtype=dtype)
        math, comm = choice.math_time, choice.comm_time
        detail.update({"X": choice.x, "Y": choice.y})
    elif key == "pods":
        if int(n) % pods:
            raise PlanError(
                say("{pods} {pods:pod|pods} do not split {chips} {chips:chip|chips} evenly", pods=pods, chips=n),
                hint=say("give a pod count that divides the chips"),
            )
        point = {**values, axis("P"): pods, axis("X"): n / pods}
        math, comm = as_expr(roof.math_time).xreplace(point), as_expr(roof.comm_time).xreplace(point)
        detail["pods"] = pods
    else:
        raise PlanError(say("no per-batch verdict for {name}", name=key), hint=say("use dp, fsdp, tp, fsdp+tp or pods"))
    bound = "compute" if comm <= math else "communication"
    return Verdict(key, b, n, per, math, comm, bound, roof.numeric, detail)

"""When each way of splitting a model over chips is compute-bound, derived from the layer programs.

The book's training chapter reasons per layer: a scheme is compute-bound when the collectives
of a pass take no longer than its matmuls. :mod:`symshard.models.schemes` writes the MLP block under
data parallelism, FSDP, tensor parallelism and FSDP × TP as programs of sharded einsums; this
module turns each program into the roofline of a whole model: the compute-bound condition as a
symbolic inequality (:class:`~symshard.algebra.conditions.Condition`), its value on a chip, and
FSDP × TP's best split in closed form. The block is the chapter's
(two matrices, no gating); a gated MLP raises ``T_math`` by 3/2 for the same activation traffic,
so its TP bound is 3/2 higher than the one given here.

It is one of four modules of the models layer on rooflines: the value it returns and the algebra it
solves with are :mod:`.bounds`; how far a scheme's collectives reach on a GPU's network, and what the
bound then says, is :mod:`.roofline_network`; the best divisor split and the verdict for a given
batch on a given slice are :mod:`.verdicts`, which build on this module.

=============  ======================================================  ========================
scheme         what is derived from                                    compute-bound when
=============  ======================================================  ========================
``dp``         ``layer("dp")``, both passes                            ``B_chip ≥ C/(M_X·W)``
``fsdp``       ``layer("fsdp")``                                       ``B_chip ≥ C/(M_X·W)``
``tp``         ``layer("tp")``                                         ``|Y| ≤ F·M_Y·W/C``
``fsdp+tp``    ``layer("fsdp+tp")``, forward pass, best split          ``B_chip ≥ C²/(F·M_X·M_Y·W²)``
``pods``       :func:`symshard.models.schemes.pods` (DCN between pods)         ``B_pod ≥ C/W_dcn``
``pipeline``   a ``CollectivePermute`` of one microbatch's activations  ``N_stages ≤ 2·w·F·L/C``
``pipeline+dp``   ``layer("dp")``, the stages multiplying the chips       ``B_chip ≥ C/(M_X·N_stages·W)``
``pipeline+fsdp`` ``layer("fsdp")``, weights gathered per microbatch      ``B_chip ≥ N_MB·C/(M_X·N_stages·W)``
``expert``     the GPU chapter's AllToAll across nodes (a formula)     a bound on ``F``
=============  ======================================================  ========================

**Pipelining with data parallelism or FSDP** (the GPU chapter: "the 16-way PP reduces the cost of the
data parallel AllReduce by 16x"). ``N = |X|·N_stages`` chips: each holds ``L/N_stages`` layers and
runs the ``B/|X|`` tokens of its data-parallel replica through them. Per layer, the backward pass
does ``8·(B/|X|)·D·F/C`` of matmuls and all-reduces the layer's ``4·D·F`` bytes of gradients over
the ``|X|`` chips holding that layer (:func:`~symshard.models.schemes.layer`'s ``dp`` program):
``8·D·F/(M_X·W)``. Compute-bound when ``B/|X| ≥ C/(M_X·W)``, that is, per chip of the whole slice,
``B_chip = B/N ≥ C/(M_X·N_stages·W)``: the stages multiply the bandwidth. On GPUs the stages sit
across nodes and each data-parallel group fills whole nodes, so ``W`` is the node's scale-out
egress (4e11 B/s on an H100: 2475/N_stages tokens per GPU, 309 for 8 stages, the chapter's answer for
LLaMA-3 70B). Under FSDP (ZeRO-3) every microbatch gathers the weights again (the chapter: pipelining
"makes ZeRO-3 impossible"): each microbatch's ``B/N_MB`` tokens must pay for a full gather, and the
bound grows by ``N_MB``. The gradients of a stage can be reduced only after its last microbatch; the
bound assumes that reduction hides under the rest of the step, as the chapter's rooflines do.

**Through the network's levels** (GPUs). Without a chip count a GPU's bound is written with
``W_nvlink`` and holds inside one NVLink domain only, and says so. Given ``chips`` (or ``mesh``), each
collective of the scheme's program is costed through the chip's network as ``symshard collective``
costs it (:mod:`symshard.models.networked`): NVLink inside a node, the scale-out network of the leaf
switches, the spine (:mod:`.roofline_network` finds how far they reach); the level that binds gives
``W_collective``, which takes ``W``'s place. Data
parallelism over 16 H100s (2 nodes) needs ``C/W_collective`` = 990e12/4e11 = 2475 tokens per GPU, where
8 GPUs need 2200; :attr:`~symshard.models.bounds.Roofline.global_batch` multiplies the bound by the
chips.

For a mixture of experts the data-parallel and FSDP thresholds (and the pods') grow by ``E/k``:
every chip moves the weights of all ``E`` experts while each token works through ``k`` of them.

**Overlap across axes.** FSDP × TP gathers weights over X and activations over Y. The book (and
symshard's MODELS.md) lets the two overlap, since they use different links: ``T_comms`` is the
larger of the two, the best split is where they are equal, and the batch per chip must reach
``C²/(F·M_X·M_Y·W²)``. The cost engine's :meth:`~symshard.planning.program.Program.comm_time` adds every
collective of a pass with ``comm_overlap="none"``, which moves the best split nowhere but the bound up
by 4: pass ``overlap="none"`` (or ``"serial"``) for that convention, as
:func:`symshard.models.schemes.fsdp_tp_split` and ``--comm-overlap`` name it. Each
result records the one it used. The optimum and the bounds are solved in closed form
(:func:`~symshard.models.bounds.balance`), never with ``sympy.solve``, whose root simplification
imports a SymPy module that parses text, which a problem family's worker refuses.

Examples:
    >>> roofline("fsdp+tp").condition.text()
    'B_chip ≥ C^2/(F·M_X·M_Y·W_ici^2)'
    >>> roofline("fsdp+tp", overlap="none").condition.text()
    'B_chip ≥ 4·C^2/(F·M_X·M_Y·W_ici^2)'
    >>> roofline("dp", hardware="v5p").numeric.text()
    'B_chip ≥ 2550'
    >>> from symshard.models.transformer import model
    >>> roofline("fsdp", hardware="v5p", model=model("mixtral-8x7b")).numeric.text()
    'B_chip ≥ 10200'
    >>> across = roofline("dp", hardware="h100", chips=16)
    >>> across.numeric.text(), across.binding.fabric.value
    ('B_chip ≥ 2475', 'dcn')
    >>> roofline("pipeline+dp").condition.text()
    'B_chip ≥ C/(M_X·N_stages·W_ici)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from ..algebra.conditions import Case, Condition
from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..algebra.symbols import C, W_dcn, axis, dim
from ..costs.collectives import parse_collective
from ..errors import HardwareError, PlanError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware as lookup_hardware
from ..messages import Message, say
from ..planning.program import spread
from .bounds import (
    NETWORKED,
    OVERLAPS,
    PIPELINED,
    SCHEMES,
    Roofline,
    all_at_most,
    balance,
    fabric_of,
    overlap_key,
    scheme_key,
    solve_at_most,
    tidy_bound,
)
from .networked import Network, through_network
from .roofline_network import network_note, one_domain_note, scheme_mesh, slice_of
from .schemes import B_CHIP, B_POD, Layer, N, layer, pods
from .training import chip_count
from .transformer import SIZE_SYMBOLS, Model
from .transformer import model as lookup_model

__all__ = [
    "N_MB",
    "N_NODE",
    "N_STAGES",
    "SplitOptimum",
    "bubble",
    "forward_groups",
    "known_values",
    "roofline",
    "rooflines",
    "split_optimum",
]

N_MB = sympy.Symbol("N_MB", positive=True, integer=True)
"""Microbatches per step (pipeline parallelism)."""

N_STAGES = sympy.Symbol("N_stages", positive=True, integer=True)
"""Pipeline stages."""

N_NODE = sympy.Symbol("N_node", positive=True, integer=True)
"""GPUs per node (one NVLink domain); the GPU chapter's 8."""

_BOOK_GPU = "How to Scale Your Model, GPU chapter"


def known_values(hw: Hardware | None, mdl: Model | None, dtype: str, spreads: Mapping[str, int] | None) -> dict:
    """The numbers a roofline substitutes: the chip's constants for ``dtype`` (with its GPUs per node and
    the axes' spreads, 1 unless given) and the model's sizes."""
    out: dict[sympy.Symbol, sympy.Expr] = {}
    if hw is not None:
        out.update(hw.constants(dtype))
        if hw.node_size is not None:
            out[N_NODE] = sympy.Integer(hw.node_size)
        for a in "XYP":
            out[spread(a)] = sympy.Integer((spreads or {}).get(a, 1))
    if mdl is not None:
        out.update(mdl.values())
    return out


def _moe(mdl: Model | None) -> tuple[sympy.Expr, sympy.Expr]:
    if mdl is None or not mdl.is_moe:
        return sympy.Integer(1), sympy.Integer(1)
    return mdl.experts, mdl.experts_per_token


def _max_terms(expr: sympy.Expr) -> tuple[sympy.Expr, ...]:
    """The terms a ``T_comms`` is the largest of (itself, unless collectives on disjoint links overlap)."""
    expr = as_expr(expr)
    return tuple(expr.args) if isinstance(expr, sympy.Max) else (expr,)


def _at_most(lay: Layer, net: Network | None, subs: Mapping, x: sympy.Symbol, experts: object, top: object,
             phases: tuple[str, ...] | None = None) -> Condition:  # fmt: skip
    """Every pass of ``lay`` compute-bound (its collectives, on one network or through ``net``, within
    its matmuls), solved for ``x``; the MoE factors scale the collectives and the matmuls."""
    parts = []
    for ph in phases or lay.phases:
        comm = lay.comm_time(ph) if net is None else net.comm_time(lay.program, ph)
        math = lay.math_time(ph).xreplace(subs) * top
        parts += [(term.xreplace(subs) * experts, math) for term in _max_terms(comm)]
    return all_at_most(parts, x)


def roofline(
    scheme: str,
    *,
    hardware: Hardware | str | None = None,
    model: Model | str | None = None,
    overlap: str = "axes",
    spreads: Mapping[str, int] | None = None,
    dtype: str = "bf16",
    chips: object = None,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    stages: object = None,
    microbatches: object = None,
    cost_model: str = "book",
) -> Roofline:
    """The compute-bound condition of ``scheme`` for a whole model, symbolic and (with a chip) numeric.

    Args:
        scheme: a key of :data:`~symshard.models.bounds.SCHEMES` (``dp``, ``fsdp``, ``tp``, ``fsdp+tp``,
            ``pods``, ``pipeline``, ``pipeline+dp``, ``pipeline+fsdp``, ``expert``).
        hardware: the chip (its constants fill :attr:`~symshard.models.bounds.Roofline.numeric`; a GPU
            uses ``W_nvlink`` unless ``chips`` or ``mesh`` say how far the collectives reach).
        model: a model (its ``F``, ``L``, ``E``, ``k`` enter the conditions); None keeps the symbols.
        overlap: ``axes`` (the book's: collectives over different axes overlap) or ``none`` (``serial``).
        spreads: physical axes each logical axis spans (``{"X": 2}``; default 1 on a chip).
        dtype: every array's dtype: it picks the chip's peak ``C`` (8-bit dtypes use the 8-bit peak) and
            the bytes the collectives move, so that precision cancels on a chip, as the book says.
        chips: the chips of the slice: on a GPU the collectives are costed through the network's levels
            (NVLink, scale-out, spine) for that many (``dp``, ``fsdp``: all on X; ``tp``: all on Y;
            ``pipeline+*``: ``stages`` × the rest); :attr:`~symshard.models.bounds.Roofline.global_batch`
            multiplies the bound by it.
        mesh: the mesh instead (``"X=4,Y=8"`` for ``fsdp+tp``, ``"S=8,X=16"`` for ``pipeline+dp``).
        stages: pipeline stages (``N_stages``) of ``pipeline+dp`` and ``pipeline+fsdp``.
        microbatches: microbatches per step (``N_MB``) of ``pipeline+fsdp``.
        cost_model: how the network's collectives are costed, ``book`` (the chapter's) or ``ring``.

    Raises:
        PlanError: an unknown scheme or overlap convention, a mesh that is not the scheme's.
        ModelError: a chip, stage or microbatch count that is not a positive whole number.

    Examples:
        >>> roofline("tp", hardware="h100", chips=16).numeric.text()
        '|Y| ≤ F/2475'
        >>> roofline("dp", hardware="h100", chips=16000).global_batch
        39600000
    """
    key = scheme_key(scheme)
    mode = overlap_key(overlap)
    dt = canonical_dtype(dtype)
    hw = None if hardware is None else lookup_hardware(hardware)
    mdl = None if model is None else lookup_model(model)
    values = known_values(hw, mdl, dt, spreads)
    fabric = fabric_of(hw)
    experts, top = _moe(mdl)
    n, sizes = slice_of(hw, chips, mesh)
    n_stages = None if stages is None else chip_count(stages, "stages")
    n_mb = None if microbatches is None else chip_count(microbatches, "microbatches")
    notes: list[Message] = []
    gpu = hw is not None and fabric == "nvlink"
    net: Network | None = None
    if gpu and hw is not None and key in NETWORKED:
        placed = scheme_mesh(key, n, sizes, n_stages)
        lay0 = layer(key.removeprefix("pipeline+"), fabric=fabric, dtype=dt, comm_overlap=mode)
        if placed is not None:
            try:
                net = through_network(lay0.program, hw, placed, model=cost_model)  # type: ignore[arg-type]
            except HardwareError as err:  # a level without a figure: say so, and keep the one-domain bound
                notes.append(say("{why}; {fix}: until then {bound}", why=err.message, fix=err.hint,
                                 bound=one_domain_note(hw, key)))  # fmt: skip
            else:
                notes.append(network_note(hw, net))
                if key == "fsdp+tp":
                    values.update({axis(a): sympy.Integer(v) for a, v in placed.items()})
        else:
            notes.append(one_domain_note(hw, key))
    common = {"hardware": hw, "values": values, "chips": n, "network": net, "dtype": dt}
    if key in ("dp", "fsdp", *PIPELINED):
        base = key.removeprefix("pipeline+")
        lay = layer(base, fabric=fabric, dtype=dt)
        per_chip = B_CHIP * lay.devices
        if key in PIPELINED:
            # N = |X|·N_stages chips; under FSDP each microbatch of B/N_MB tokens gathers the weights again
            per_chip = per_chip * N_STAGES / (N_MB if base == "fsdp" else 1)
            values.update({N_STAGES: n_stages} if n_stages is not None else {})
            values.update({N_MB: n_mb} if n_mb is not None and base == "fsdp" else {})
        subs = {dim("B"): per_chip}
        ph = "backward"
        comm = (lay.comm_time(ph) if net is None else net.comm_time(lay.program, ph)) * experts
        math = lay.math_time(ph) * top
        cond = _at_most(lay, None, subs, B_CHIP, experts, top)
        net_cond = None if net is None else _at_most(lay, net, subs, B_CHIP, experts, top)
        source = f"symshard.models.schemes.layer('{base}'): both passes"
        if key in PIPELINED:
            source += ", per stage: N = |X|·N_stages chips" + (", a gather per microbatch" if base == "fsdp" else "")
            notes.append(say("a stage's gradients are reduced after its last microbatch: the bound assumes the "
                             "reduction hides under the rest of the step, as the chapter's rooflines do"))  # fmt: skip
        if experts != 1:
            notes.append(
                say("an MoE model moves the weights of all E experts while each token works through k of them")
            )
        return Roofline(key, B_CHIP, math, comm, cond, OVERLAPS[mode], source, notes=tuple(notes),
                        network_condition=net_cond, **common)  # type: ignore[arg-type]  # fmt: skip
    if key == "tp":
        lay = layer("tp", fabric=fabric, dtype=dt)
        cond = lay.condition("Y")
        net_cond = None if net is None else _at_most(lay, net, {}, axis("Y"), 1, 1)
        comm = lay.comm_time("forward") if net is None else net.comm_time(lay.program, "forward")
        source = "symshard.models.schemes.layer('tp'): both passes"
        notes.append(say("a gated MLP does 3/2 the FLOPs of the chapter's block for the same activations moved"))
        return Roofline(key, axis("Y"), lay.math_time("forward"), comm, cond, OVERLAPS[mode], source,
                        notes=tuple(notes), network_condition=net_cond, **common)  # type: ignore[arg-type]  # fmt: skip
    if key == "fsdp+tp":
        split = split_optimum(fabric, mode, dt)
        cond = Condition((Case("compute-bound", (sympy.Ge(B_CHIP, split.min_batch_per_chip),)),))
        source = "symshard.models.schemes.layer('fsdp+tp'): forward pass, the best split of N = |X|·|Y|"
        comm, net_cond = split.comm_time, None
        if net is not None:
            lay = layer("fsdp+tp", fabric=fabric, dtype=dt, comm_overlap=mode)
            subs = {dim("B"): B_CHIP * lay.devices}
            net_cond = _at_most(lay, net, subs, B_CHIP, 1, 1, ("forward",))
            comm = net.comm_time(lay.program, "forward")
            notes.append(say("the condition is the best split's; the numbers are the mesh's ({mesh}), through "
                             "the network's levels", mesh=str(net.mesh)))  # fmt: skip
        if experts != 1:
            notes.append(
                say("for an MoE model this is one expert's MLP over the whole batch: the E/k factor is not applied")
            )
        return Roofline(key, B_CHIP, split.math_time, comm, cond, OVERLAPS[mode], source, notes=tuple(notes),
                        optimum=split.x, network_condition=net_cond, **common)  # type: ignore[arg-type]  # fmt: skip
    if key == "pods":
        p = pods(dt)
        lay = p.layer
        sub = {dim("B"): B_POD * axis("P")}
        comm = lay.comm_time("backward", fabric="dcn").xreplace(sub) * experts
        math = lay.math_time("backward").xreplace(sub) * top
        cond = all_at_most([(comm, math)], B_POD)
        source = "symshard.models.schemes.pods(): FSDP inside a pod over ICI, data parallelism across pods over DCN"
        return Roofline(key, B_POD, math, comm, cond, OVERLAPS[mode], source, hw, values, chips=n, dtype=dt)
    if key == "pipeline":
        return _pipeline(hw, values, mdl, dt, n)
    return _expert(hw, values, dt, n)


@dataclass(frozen=True, slots=True)
class SplitOptimum:
    """FSDP × TP's best split in closed form: the continuous optimum ``|X|`` (``|Y| = N/|X|``), the
    forward pass's ``T_comms`` and ``T_math`` there, the least batch per chip, and the collective time
    on each set of axes."""

    x: sympy.Expr
    comm_time: sympy.Expr
    math_time: sympy.Expr
    min_batch_per_chip: sympy.Expr
    groups: tuple[sympy.Expr, ...]


def forward_groups(fabric: str, dtype: str = "bf16") -> tuple[sympy.Expr, ...]:
    """The forward pass's collective time on each set of axes (summed within a set)."""
    lay = layer("fsdp+tp", fabric=fabric, dtype=dtype)
    groups: dict[tuple[str, ...], sympy.Expr] = {}
    for st in lay.collectives("forward"):
        k = tuple(sorted(st.axes))
        groups[k] = groups.get(k, sympy.Integer(0)) + st.time
    return tuple(groups[k] for k in sorted(groups))


def split_optimum(fabric: str, mode: str, dtype: str = "bf16") -> SplitOptimum:
    """FSDP × TP's best split of ``N`` chips on ``fabric``, its collectives combined by ``mode``
    (:data:`~symshard.models.bounds.OVERLAPS`), solved in closed form."""
    lay = layer("fsdp+tp", fabric=fabric, dtype=dtype)
    t = sympy.Symbol("t", positive=True)
    sub = {axis("X"): t, axis("Y"): N / t}
    groups = [as_expr(g).xreplace(sub) for g in forward_groups(fabric, dtype)]
    if len(groups) != 2:  # pragma: no cover - one group over X, one over Y
        raise PlanError(say("FSDP + TP should move data over two axes"), hint=say("this is a bug in symshard"))
    # one group grows with |X| and the other shrinks: both their larger and their sum are least
    # where they are equal (the sum is then twice either)
    x = balance(groups[0], groups[1], t)
    total = groups[0] if mode == "axes" else groups[0] + groups[1]
    comm = sympy.factor_terms(total.xreplace({t: x}))
    math = sympy.factor_terms(lay.math_time("forward").xreplace(sub))
    sub_b = {dim("B"): B_CHIP * N}
    # T_comms grows like sqrt(B) at the best split, T_math like B: compute-bound above their crossing
    bound = tidy_bound(balance(comm.xreplace(sub_b), math.xreplace(sub_b), B_CHIP))
    return SplitOptimum(x, comm, math, bound, tuple(forward_groups(fabric, dtype)))


def bubble(microbatches: object = None, stages: object = None) -> sympy.Expr:
    """The pipeline's idle fraction, ``(N_stages − 1)/(N_MB + N_stages − 1)`` (GPU chapter).

    Examples:
        >>> bubble(), bubble(16, 4)
        ((N_stages - 1)/(N_MB + N_stages - 1), 3/19)
    """
    mb = N_MB if microbatches is None else chip_count(microbatches, "microbatches")
    st = N_STAGES if stages is None else chip_count(stages, "stages")
    return (st - 1) / (mb + st - 1)


def _pipeline(hw: Hardware | None, values: dict, mdl: Model | None, dtype: str, chips: sympy.Expr | None) -> Roofline:
    gpu = hw is not None and hw.ici_link_bandwidth is None
    mesh = Mesh({"S": None}, topology="switch" if gpu else "ring", fabric="nvlink" if gpu else "ici")
    # one microbatch's activations, M = B/N_MB tokens, sent to the next stage: the engine's CollectivePermute
    hop = parse_collective("CollectivePermute_S(Act[M, D])").cost(mesh, dtype=dtype).bandwidth_time
    per_mb = as_expr(hop).xreplace({dim("M"): dim("B") / N_MB})
    comm = sympy.factor_terms(per_mb * (N_MB + N_STAGES - 2))
    # a stage's forward matmuls for that microbatch: L/N_stages layers of the chapter's block
    block = layer("dp", training=False, fabric="nvlink" if gpu else "ici").math_time("forward")
    math_mb = block.xreplace({dim("B"): dim("B") / N_MB, axis("X"): 1}) * SIZE_SYMBOLS["layers"] / N_STAGES
    cond = all_at_most([(per_mb, math_mb)], N_STAGES)
    notes = (
        say(
            "the transfers hide under each stage's compute; the price of pipelining is the bubble, "
            "(N_stages − 1)/(N_MB + N_stages − 1) of the step idle"
        ),
    )
    source = "a CollectivePermute of one microbatch's activations per stage boundary, N_MB + N_stages − 2 in a row"
    return Roofline("pipeline", N_STAGES, sympy.factor_terms(math_mb * N_MB), comm, cond,
                    say("transfers overlap the stage's matmuls (one microbatch each)"), source, hw, values, notes,
                    chips=chips, dtype=dtype)  # fmt: skip


def _expert(hw: Hardware | None, values: dict, dtype: str, chips: sympy.Expr | None) -> Roofline:
    z, n = axis("Z"), N_NODE
    b, d, f = dim("B"), dim("D"), dim("F")
    k = SIZE_SYMBOLS["experts_per_token"]
    w_node = n * W_dcn  # a node's scale-out egress: N_node GPUs, each with its own NIC share
    # the GPU chapter: dispatch and combine AllToAlls of B·D bf16 activations, the (Z − N_node)/Z of
    # destinations outside the node, each token sent once per node it needs (min(N_node·k/Z, 1))
    # (the chapter's 4·B·D is two AllToAlls of bf16 activations: 2 bytes an element; other dtypes scale it)
    moved = 2 * dtype_bytes(dtype) * b * d
    comm = moved * (z - n) / (w_node * z) * sympy.Min(n * k / z, 1)
    math = 4 * b * k * d * f / (z * C)
    cases = []
    for when, factor in ((sympy.Ge(z, n * k), n * k / z), (sympy.Lt(z, n * k), sympy.Integer(1))):
        part = moved * (z - n) / (w_node * z) * factor
        for c in solve_at_most(part, math, f):
            cases.append(Case("compute-bound", (when, *c)))
    notes = (say("a formula from the GPU chapter (not a program): to move into the cost engine with GPU network levels"),
             say("B is the batch on the Z GPUs of the expert-parallel group; W_dcn is one GPU's scale-out bandwidth"))  # fmt: skip
    return Roofline("expert", f, math, comm, Condition(tuple(cases)), say("the AllToAlls overlap the experts' matmuls"),
                    f"{_BOOK_GPU}: expert parallelism across nodes", hw, values, notes, chips=chips,
                    dtype=dtype)  # fmt: skip


def rooflines(
    *,
    hardware: Hardware | str | None = None,
    model: Model | str | None = None,
    overlap: str = "axes",
    spreads: Mapping[str, int] | None = None,
    dtype: str = "bf16",
    chips: object = None,
    stages: object = None,
    microbatches: object = None,
) -> tuple[Roofline, ...]:
    """:func:`roofline` of every scheme in :data:`~symshard.models.bounds.SCHEMES` (``expert`` only for a GPU
    or without a chip; the pipelined ones, :data:`~symshard.models.bounds.PIPELINED`, only when ``stages``
    is given), for ``chips`` chips."""
    hw = None if hardware is None else lookup_hardware(hardware)
    out = []
    for s in SCHEMES:
        if s == "expert" and hw is not None and hw.node_size is None:
            continue
        if s in PIPELINED and stages is None:
            continue
        out.append(roofline(s, hardware=hw, model=model, overlap=overlap, spreads=spreads, dtype=dtype, chips=chips,
                            stages=stages, microbatches=microbatches))  # fmt: skip
    return tuple(out)

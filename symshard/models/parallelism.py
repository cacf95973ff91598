"""When each way of splitting a model over chips is compute-bound, derived from the layer programs.

The book's training chapter reasons per layer: a scheme is compute-bound when the collectives
of a pass take no longer than its matmuls. :mod:`symshard.models.schemes` writes the MLP block under
data parallelism, FSDP, tensor parallelism and FSDP × TP as programs of sharded einsums; this
module turns each program into the roofline of a whole model: the compute-bound condition as a
symbolic inequality (:class:`~symshard.planning.crossovers.Condition`), its value on a chip, the best
FSDP/TP split, and the verdict for a given batch on a given slice. The block is the chapter's
(two matrices, no gating); a gated MLP raises ``T_math`` by 3/2 for the same activation traffic,
so its TP bound is 3/2 higher than the one given here.

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
switches, the spine; the level that binds gives ``W_collective``, which takes ``W``'s place. Data
parallelism over 16 H100s (2 nodes) needs ``C/W_collective`` = 990e12/4e11 = 2475 tokens per GPU, where
8 GPUs need 2200; :attr:`Roofline.global_batch` multiplies the bound by the chips.

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
(:func:`balance`), never with ``sympy.solve``, whose root simplification imports a SymPy module
that parses text, which a problem family's worker refuses.

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
from dataclasses import dataclass, field

import sympy

from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..algebra.symbols import C, W_dcn, axis, dim
from ..algebra.units import format_number
from ..costs.collectives import parse_collective
from ..errors import HardwareError, ModelError, PlanError, SymshardError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware as lookup_hardware
from ..messages import Message, say
from ..planning.crossovers import Case, Condition, solve_less
from ..planning.program import spread
from .networked import LevelShare, Network, through_network
from .schemes import B_CHIP, B_POD, Layer, N, layer, pods
from .training import BatchPerChip, batch_per_chip, chip_count
from .transformer import SIZE_SYMBOLS, Model, positive_number
from .transformer import model as lookup_model

__all__ = [
    "N_MB",
    "N_NODE",
    "N_STAGES",
    "OVERLAPS",
    "PIPELINED",
    "SCHEMES",
    "Roofline",
    "SplitChoice",
    "Verdict",
    "all_at_most",
    "balance",
    "best_split",
    "bubble",
    "roofline",
    "rooflines",
    "solve_at_most",
    "verdict",
]

SCHEMES = ("dp", "fsdp", "tp", "fsdp+tp", "pods", "pipeline", "pipeline+dp", "pipeline+fsdp", "expert")
"""The schemes :func:`roofline` knows."""

_NETWORKED = ("dp", "fsdp", "tp", "fsdp+tp", "pipeline+dp", "pipeline+fsdp")  # costed through a GPU network

PIPELINED = ("pipeline+dp", "pipeline+fsdp")
"""The schemes that combine pipeline stages with data parallelism or FSDP (:func:`rooflines` gives them
when the stages are known)."""

OVERLAPS: dict[str, str] = {
    "axes": say("collectives over different mesh axes overlap (the larger counts); on one axis they add up"),
    "none": say("every collective of a pass adds up, one after another"),
}
"""How the collectives of one pass combine, by name."""

N_MB = sympy.Symbol("N_MB", positive=True, integer=True)
"""Microbatches per step (pipeline parallelism)."""

N_STAGES = sympy.Symbol("N_stages", positive=True, integer=True)
"""Pipeline stages."""

N_NODE = sympy.Symbol("N_node", positive=True, integer=True)
"""GPUs per node (one NVLink domain); the GPU chapter's 8."""

_BOOK_GPU = "How to Scale Your Model, GPU chapter"
_ALIASES = {"data": "dp", "zero3": "fsdp", "zero-3": "fsdp", "tensor": "tp", "mixed": "fsdp+tp", "fsdpxtp": "fsdp+tp",
            "fsdp×tp": "fsdp+tp", "dcn": "pods", "pod": "pods", "pp": "pipeline", "ep": "expert", "moe": "expert",
            "pp+dp": "pipeline+dp", "dp+pp": "pipeline+dp", "dp+pipeline": "pipeline+dp", "pipeline+data": "pipeline+dp",
            "pp+fsdp": "pipeline+fsdp", "fsdp+pp": "pipeline+fsdp", "fsdp+pipeline": "pipeline+fsdp",
            "pipeline+zero3": "pipeline+fsdp"}  # fmt: skip


def _scheme(name: str) -> str:
    key = str(name).strip().lower().replace(" ", "").replace("_", "+")
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        raise PlanError(
            say("unknown parallelism scheme '{name}'", name=name),
            hint=say("use one of {options}", options=", ".join(SCHEMES)),
        )
    return key


def _overlap(name: str) -> str:
    key = {"serial": "none"}.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in OVERLAPS:
        raise PlanError(say("unknown overlap convention '{name}'", name=name), hint=say("use axes or none (serial)"))
    return key


@dataclass(frozen=True)
class Roofline:
    """When one scheme is compute-bound, for a whole model: per layer, as the chapter reasons.

    Attributes:
        scheme: a key of :data:`SCHEMES`.
        symbol: what the condition is solved for (``B_chip``, ``|Y|``, ``B_pod``, ``N_stages``, ``F``).
        math_time: ``T_math`` of the binding pass of one layer.
        comm_time: ``T_comms`` of that pass (at the best split for FSDP × TP; through the network's
            levels when :attr:`network` is set).
        condition: compute-bound iff this holds (the symbolic form, on one network).
        convention: how the collectives combine (:data:`OVERLAPS`) or the formula's assumption.
        source: what it is derived from.
        hardware: the chip for :attr:`numeric` (None: symbolic only).
        values: the numbers substituted on that chip (constants, spreads, the model's sizes).
        notes: caveats.
        optimum: FSDP × TP's best ``|X|`` (``|Y| = N/|X|``); None for the other schemes.
        chips: the chips of the slice, when given.
        network: the scheme's collectives costed through the chip's network levels (GPUs, with ``chips``
            or ``mesh``); None when the formula's one network is used.
        network_condition: :attr:`condition` with each collective's ``W_collective`` in place of ``W``.
        dtype: the arrays' dtype.
    """

    scheme: str
    symbol: sympy.Symbol
    math_time: sympy.Expr
    comm_time: sympy.Expr
    condition: Condition
    convention: str
    source: str
    hardware: Hardware | None = None
    values: Mapping[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    optimum: sympy.Expr | None = None
    chips: sympy.Expr | None = None
    network: Network | None = None
    network_condition: Condition | None = None
    dtype: str = "bf16"

    @property
    def numeric(self) -> Condition | None:
        """The condition with the chip's constants (and the model's sizes) substituted; through the
        network's levels when they were costed."""
        if self.hardware is None and not self.values:
            return None
        cond = self.network_condition if self.network_condition is not None else self.condition
        return cond.subs(dict(self.values), self.symbol)

    @property
    def binding(self) -> LevelShare | None:
        """The network level that binds (None when the network was not costed)."""
        crossing = None if self.network is None else self.network.binding
        return None if crossing is None else crossing.binding

    @property
    def inside_one_domain(self) -> bool | None:
        """On a GPU: whether the bound holds only inside one NVLink domain (True without a chip count,
        the formula's ``W_nvlink``), or the collectives were costed across the network (False when they
        leave a domain). None off a GPU."""
        if self.hardware is None or _fabric(self.hardware) != "nvlink" or self.scheme not in _NETWORKED:
            return None
        if self.network is None:
            return True
        return self.network.inside_one_domain

    @property
    def global_batch(self) -> sympy.Expr | None:
        """For a bound on ``B_chip`` with the chips known: the least tokens per step, the bound times
        the chips (None otherwise)."""
        numeric = self.numeric
        if self.symbol != B_CHIP or numeric is None or self.chips is None or not as_expr(self.chips).is_number:
            return None
        if self.inside_one_domain and self.network is None:  # a GPU bound that holds inside one node only
            return None
        for case in numeric.cases:
            for r in case.relations:
                if isinstance(r, (sympy.GreaterThan, sympy.StrictGreaterThan)) and r.lhs == B_CHIP:
                    bound = as_expr(r.rhs)
                    return bound * self.chips if bound.is_number else None
        return None

    def holds(self, values: Mapping[sympy.Symbol, object]) -> bool | None:
        """Whether the scheme is compute-bound at a point (None if undecided)."""
        cond = self.network_condition if self.network_condition is not None else self.condition
        return cond.holds({**self.values, **values})

    def text(self) -> str:
        return self.condition.text()

    def latex(self) -> str:
        return self.condition.latex()

    def _repr_latex_(self) -> str:
        return "$" + self.latex() + "$"

    def __repr__(self) -> str:
        from ..shown import summary

        numeric = self.numeric
        return summary("Roofline", self.scheme, {"condition": self.condition.formula()},
                       {"numeric": None if numeric is None else numeric.formula()},
                       hardware=self.hardware and self.hardware.name, chips=self.chips)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def solve_at_most(lhs: sympy.Expr, rhs: sympy.Expr, x: sympy.Symbol) -> list[list[sympy.Basic]]:
    """``lhs ≤ rhs`` for positive sides, solved for ``x`` (square roots squared away first): a union of
    cases, each a list of relations with ``x`` on the left (see :func:`symshard.planning.crossovers.solve_less`).

    Examples:
        >>> B, C, W = sympy.symbols("B C W", positive=True)
        >>> solve_at_most(2 / W, 2 * B / C, B)
        [[B >= C/W]]
    """
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    (a, p), (b, q) = (sympy.expand(e).as_coeff_exponent(x) for e in (lhs, rhs))
    if x not in a.free_symbols | b.free_symbols and p != q and a.is_positive and b.is_positive:
        # two powers of x (the usual case): they cross once, where balance() puts it
        point = _tidy(balance(lhs, rhs, x))
        return [[sympy.Ge(x, point) if q > p else sympy.Le(x, point)]]
    out = []
    for case in solve_less(lhs, rhs, x, strict=False):
        oriented = []
        for r in case:
            if isinstance(r, sympy.core.relational.Relational) and r.rhs == x and x not in r.lhs.free_symbols:
                r = r.reversed
            oriented.append(r)
        out.append(oriented)
    return out


def _tidy(expr: sympy.Expr) -> sympy.Expr:
    """A bound as the chapter prints it: ``C**2/(F*M_X*M_Y*W_ici**2)``, not a square root of a square."""
    return sympy.factor_terms(sympy.powsimp(sympy.expand_power_base(expr, force=True), force=True))


def all_at_most(parts: list[tuple[sympy.Expr, sympy.Expr]], x: sympy.Symbol, extra: tuple = ()) -> Condition:
    """The condition that every ``comm ≤ math`` of ``parts`` holds at once, solved for ``x``; a part
    whose ``comm`` is 0 always holds. ``extra`` relations join every case."""
    import itertools

    solved = [solve_at_most(c, m, x) for c, m in parts if as_expr(c) != 0]
    cases = []
    for combo in itertools.product(*solved):
        rels = tuple(dict.fromkeys([*extra, *[r for case in combo for r in case]]))
        cases.append(Case("compute-bound", rels))
    return Condition(tuple(cases))


def _values(hw: Hardware | None, mdl: Model | None, dtype: str, spreads: Mapping[str, int] | None) -> dict:
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


def _fabric(hw: Hardware | None) -> str:
    if hw is None or hw.ici_link_bandwidth is not None:
        return "ici"
    return "nvlink"


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


def _slice(
    hw: Hardware | None, chips: object, mesh: Mesh | Mapping[str, object] | str | None
) -> tuple[sympy.Expr | None, dict[str, sympy.Expr] | None]:
    """The chip count and the mesh's sizes (in order) from ``chips`` and ``mesh``.

    Raises:
        ModelError: a chip count that is not a positive whole number.
        PlanError: a mesh and a chip count that disagree, or a mesh whose sizes are not numbers.
    """
    n = None if chips is None else chip_count(chips)
    if mesh is None:
        return n, None
    m = mesh if isinstance(mesh, Mesh) else Mesh(mesh, hardware=hw)
    sizes = {a.name: a.size for a in m.axes}
    if not all(v.is_number for v in sizes.values()):
        raise PlanError(
            say("the mesh {mesh} needs a size for every axis", mesh=str(m)), hint=say("e.g. mesh='X=2,Y=8'")
        )
    total = sympy.prod(sizes.values())
    if n is not None and n != total:
        raise PlanError(
            say("{chips} {chips:chip|chips} and the mesh {mesh} ({count} {count:chip|chips}) disagree", chips=str(n), mesh=str(m),
                count=str(total)),
            hint=say("give one of them"),
        )  # fmt: skip
    return sympy.Integer(total), sizes


def _scheme_mesh(key: str, n: sympy.Expr | None, sizes: dict | None, stages: sympy.Expr | None) -> dict | None:
    """The mesh a scheme's collectives run on (mesh order, the last axis fastest), from the chips or the
    mesh given; None when the network cannot be costed from them (FSDP × TP without its split, pipelining
    without its stages).

    Raises:
        PlanError: a mesh whose axes are not the scheme's.
    """
    axes = {"dp": ("X",), "fsdp": ("X",), "tp": ("Y",), "fsdp+tp": ("X", "Y"), "pipeline+dp": ("S", "X"),
            "pipeline+fsdp": ("S", "X")}[key]  # fmt: skip
    if sizes is not None:
        if set(sizes) != set(axes) and not (key in PIPELINED and set(sizes) == {"X"}):
            raise PlanError(
                say("the {scheme} scheme runs on mesh axes {axes}, not {given}", scheme=key, axes=", ".join(axes),
                    given=", ".join(sizes)),
                hint=say("e.g. mesh='{example}'", example=",".join(f"{a}={8 if a != 'S' else 4}" for a in axes)),
            )  # fmt: skip
        return sizes
    if n is None:
        return None
    if key in PIPELINED:
        if stages is None or not stages.is_number:
            return None
        if n % stages:
            raise PlanError(
                say(
                    "{stages} pipeline {stages:stage|stages} do not split {chips} {chips:chip|chips} evenly",
                    stages=str(stages),
                    chips=str(n),
                ),
                hint=say("give a stage count that divides the chips"),
            )
        return {"S": stages, "X": n / stages}  # the stages across nodes, each data-parallel group inside
    if key == "fsdp+tp":
        return None
    return {axes[0]: n}


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
        scheme: a key of :data:`SCHEMES` (``dp``, ``fsdp``, ``tp``, ``fsdp+tp``, ``pods``, ``pipeline``,
            ``pipeline+dp``, ``pipeline+fsdp``, ``expert``).
        hardware: the chip (its constants fill :attr:`Roofline.numeric`; a GPU uses ``W_nvlink`` unless
            ``chips`` or ``mesh`` say how far the collectives reach).
        model: a model (its ``F``, ``L``, ``E``, ``k`` enter the conditions); None keeps the symbols.
        overlap: ``axes`` (the book's: collectives over different axes overlap) or ``none`` (``serial``).
        spreads: physical axes each logical axis spans (``{"X": 2}``; default 1 on a chip).
        dtype: every array's dtype: it picks the chip's peak ``C`` (8-bit dtypes use the 8-bit peak) and
            the bytes the collectives move, so that precision cancels on a chip, as the book says.
        chips: the chips of the slice: on a GPU the collectives are costed through the network's levels
            (NVLink, scale-out, spine) for that many (``dp``, ``fsdp``: all on X; ``tp``: all on Y;
            ``pipeline+*``: ``stages`` × the rest); :attr:`Roofline.global_batch` multiplies the bound by it.
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
    key = _scheme(scheme)
    mode = _overlap(overlap)
    dt = canonical_dtype(dtype)
    hw = None if hardware is None else lookup_hardware(hardware)
    mdl = None if model is None else lookup_model(model)
    values = _values(hw, mdl, dt, spreads)
    fabric = _fabric(hw)
    experts, top = _moe(mdl)
    n, sizes = _slice(hw, chips, mesh)
    n_stages = None if stages is None else chip_count(stages, "stages")
    n_mb = None if microbatches is None else chip_count(microbatches, "microbatches")
    notes: list[Message] = []
    gpu = hw is not None and fabric == "nvlink"
    net: Network | None = None
    if gpu and hw is not None and key in _NETWORKED:
        placed = _scheme_mesh(key, n, sizes, n_stages)
        lay0 = layer(key.removeprefix("pipeline+"), fabric=fabric, dtype=dt, comm_overlap=mode)
        if placed is not None:
            try:
                net = through_network(lay0.program, hw, placed, model=cost_model)  # type: ignore[arg-type]
            except HardwareError as err:  # a level without a figure: say so, and keep the one-domain bound
                notes.append(say("{why}; {fix}: until then {bound}", why=err.message, fix=err.hint,
                                 bound=_one_domain_note(hw, key)))  # fmt: skip
            else:
                notes.append(_network_note(hw, net))
                if key == "fsdp+tp":
                    values.update({axis(a): sympy.Integer(v) for a, v in placed.items()})
        else:
            notes.append(_one_domain_note(hw, key))
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
        split = _split(fabric, mode, dt)
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


def _one_domain_note(hw: Hardware, key: str) -> Message:
    """Why a GPU bound without a mesh holds inside one NVLink domain only."""
    what = say("give the mesh (mesh='X=..,Y=..')") if key == "fsdp+tp" else (
        say("give the chips and the stages (chips=, stages=)") if key in PIPELINED else say("give the chips (chips=)"))  # fmt: skip
    return say(
        "this bound uses W_nvlink: it holds inside one NVLink domain of {node} {node:GPU|GPUs}; {what} to cost the "
        "collectives through the network's levels",
        node=str(hw.node_size) if hw.node_size is not None else "?",
        what=what,
    )


def _network_note(hw: Hardware, net: Network) -> Message:
    """Which level binds the scheme's collectives, in words."""
    c = net.binding
    if c is None:
        return say("nothing moves: every axis has one chip")
    if c.inside_one_domain:
        return say(
            "the collectives stay inside one NVLink domain of {node} {node:GPU|GPUs}: W_collective = W_nvlink = {bandwidth} B/s",
            node=str(hw.node_size) if hw.node_size is not None else "?",
            bandwidth=_rate(c.bandwidth),
        )
    return say(
        "the collectives over {axes} cross {levels}; {level} binds: W_collective = {bandwidth} B/s",
        axes=", ".join(c.axes),
        levels=", ".join(f"{lv.fabric.value} ({lv.devices})" for lv in c.levels),
        level=c.binding.fabric.describe,
        bandwidth=_rate(c.bandwidth),
    )


def _rate(value: sympy.Expr) -> str:
    """A bandwidth as the reports print it (``4e11``, ``5.14e11``)."""
    return format_number(value)


@dataclass(frozen=True, slots=True)
class _Split:
    x: sympy.Expr
    comm_time: sympy.Expr
    math_time: sympy.Expr
    min_batch_per_chip: sympy.Expr
    groups: tuple[sympy.Expr, ...]


def _forward_groups(fabric: str, dtype: str = "bf16") -> tuple[sympy.Expr, ...]:
    """The forward pass's collective time on each set of axes (summed within a set)."""
    lay = layer("fsdp+tp", fabric=fabric, dtype=dtype)
    groups: dict[tuple[str, ...], sympy.Expr] = {}
    for st in lay.collectives("forward"):
        k = tuple(sorted(st.axes))
        groups[k] = groups.get(k, sympy.Integer(0)) + st.time
    return tuple(groups[k] for k in sorted(groups))


def _split(fabric: str, mode: str, dtype: str = "bf16") -> _Split:
    lay = layer("fsdp+tp", fabric=fabric, dtype=dtype)
    t = sympy.Symbol("t", positive=True)
    sub = {axis("X"): t, axis("Y"): N / t}
    groups = [as_expr(g).xreplace(sub) for g in _forward_groups(fabric, dtype)]
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
    bound = _tidy(balance(comm.xreplace(sub_b), math.xreplace(sub_b), B_CHIP))
    return _Split(x, comm, math, bound, tuple(_forward_groups(fabric, dtype)))


def balance(first: sympy.Expr, second: sympy.Expr, t: sympy.Symbol) -> sympy.Expr:
    """Where two monomials in ``t``, ``a·t^p`` and ``b·t^q`` (``p ≠ q``), are equal: ``(b/a)^(1/(p − q))``.

    For ``a·t + b/t`` this is also the minimum of the sum, and for ``max(a·t, b/t)`` the minimum of
    the larger. Solved in closed form rather than with ``sympy.solve``, which simplifies its roots
    with machinery that parses text (refused while a problem family runs).

    Raises:
        PlanError: either side is not a monomial in ``t``, or both have the same power.

    Examples:
        >>> a, b, t = sympy.symbols("a b t", positive=True)
        >>> balance(a * t, b / t, t)
        sqrt(b)/sqrt(a)
    """
    (a, p), (b, q) = (sympy.expand(e).as_coeff_exponent(t) for e in (first, second))
    if t in a.free_symbols or t in b.free_symbols or p == q:
        raise PlanError(
            say("cannot balance two terms that are not powers of one size"), hint=say("this is a bug in symshard")
        )
    return sympy.powsimp((b / a) ** (1 / (p - q)), force=True)


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
    """:func:`roofline` of every scheme in :data:`SCHEMES` (``expert`` only for a GPU or without a chip;
    the pipelined ones, :data:`PIPELINED`, only when ``stages`` is given), for ``chips`` chips."""
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


# -- a given batch on a given slice --------------------------------------------------------------------


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
    groups = [as_expr(g).xreplace(point) for g in _forward_groups(fabric, dtype)]
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
    mode = _overlap(overlap)
    hw = lookup_hardware(hardware)
    mdl = lookup_model(model) if model is not None else None
    b = positive_number(batch, "batch", integer=True)
    n = int(chip_count(chips))
    fabric = _fabric(hw)
    values = _values(hw, mdl, dtype, spreads)
    if mdl is None:
        raise ModelError(say("best_split needs a model for D and F"), hint=say("pass model='llama3-70b' or a Model"))
    values[dim("B")] = b
    split = _split(fabric, mode, canonical_dtype(dtype))
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
    key = _scheme(scheme)
    hw = lookup_hardware(hardware)
    mdl = lookup_model(model)
    b = positive_number(batch, "batch", integer=True)
    n = chip_count(chips)
    per = batch_per_chip(b, n)
    # on a GPU the chips decide how far the collectives reach (dp, fsdp, tp through the network's levels)
    across = n if _fabric(hw) == "nvlink" and key in ("dp", "fsdp", "tp") and n.is_number else None
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

"""Parallelism schemes for a Transformer MLP block, derived from programs of sharded einsums.

The block (no nonlinearity or gating, bf16) is two matmuls,
``In[B, D] · W_in[D, F] -> Tmp[B, F]`` and ``Tmp[B, F] · W_out[F, D] -> Out[B, D]``;
the backward pass computes, for each, the gradient of its input activation and of
its weight. Mesh axis X carries data or FSDP sharding, Y tensor sharding:

=========  ==================  =============================  =====================================
scheme     activations         weights as stored              what moves
=========  ==================  =============================  =====================================
dp         ``In[B_X, D]``      replicated                     weight gradients all-reduced over X
fsdp       ``In[B_X, D]``      ``W_in[D_X, F]``, ``W_out[F, D_X]``  weights gathered, gradients reduce-scattered
tp         ``In[B, D_Y]``      ``W_in[D, F_Y]``, ``W_out[F_Y, D]``  activations gathered / reduce-scattered over Y
fsdp+tp    ``In[B_X, D_Y]``    ``W_in[D_X, F_Y]``, ``W_out[F_Y, D_X]``  both
=========  ==================  =============================  =====================================

:func:`layer` writes the scheme as a :class:`~symshard.planning.program.Program` and
derives everything from its steps: FLOPs, bytes and time of every collective,
``T_math`` and ``T_comms`` per pass, memory per device, and the condition for each
pass to be compute-bound (``T_comms ≤ T_math``, bandwidth-only, collectives of a
pass overlapping that pass's matmuls, as the chapter reasons), solved with SymPy
for any symbol. :func:`fsdp_tp_split` minimises the communication of FSDP + TP
over the split of N chips, and :func:`pods` adds data parallelism across pods
over the data-centre network.

Examples:
    >>> dp = layer("dp")
    >>> dp.comm_time("backward")
    8*D*F/(M_X*W_ici)
    >>> dp.condition("B_chip").text()
    'B_chip ≥ C/(M_X·W_ici)'
    >>> layer("tp").condition("Y").text()
    '|Y| ≤ F·M_Y·W_ici/C'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import sympy

from ..algebra.conditions import Case, Condition, drop_subsumed
from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..algebra.solving import merge_bounds, solve_less
from ..algebra.symbols import W_nvlink, axis, dim
from ..costs.costmodels import check_comm_overlap
from ..errors import MeshError, PlanError, SymshardError, UnknownModelError
from ..machines.chips import Hardware
from ..machines.presets import hardware as lookup_hardware
from ..machines.topology import Fabric
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import LocalMatmul
from ..planning.program import Program, spread

if TYPE_CHECKING:
    from .networked import Network

__all__ = [
    "ADAM_BYTES_PER_PARAM",
    "B_CHIP",
    "B_POD",
    "SCHEMES",
    "Layer",
    "Memory",
    "N",
    "Pods",
    "Split",
    "bytes_per_param",
    "fsdp_tp_split",
    "largest_tp",
    "layer",
    "pods",
    "scheme_program",
]

SCHEMES = ("dp", "fsdp", "tp", "fsdp+tp")
"""The schemes :func:`layer` knows."""

ADAM_BYTES_PER_PARAM = 12
"""Optimizer bytes per parameter assumed for Adam: an fp32 master copy and the fp32 moments m and v (4 + 4 + 4)."""


def bytes_per_param(dtype: str = "bf16") -> sympy.Expr:
    """Bytes of training state a layer keeps per parameter: the weights and their gradients in ``dtype``, and
    Adam's :data:`ADAM_BYTES_PER_PARAM` (a mixed-precision trainer's count; the whole-model count of
    :mod:`symshard.models.training` is the training chapter's, with no master copy and no gradients kept).

    Examples:
        >>> bytes_per_param(), bytes_per_param("fp32")
        (16, 20)
    """
    return 2 * dtype_bytes(canonical_dtype(dtype)) + ADAM_BYTES_PER_PARAM


N = sympy.Symbol("N", positive=True, integer=True)
"""The number of chips."""

B_CHIP = sympy.Symbol("B_chip", positive=True)
"""Tokens per chip, ``B / N`` (``N`` the number of chips in the mesh)."""

B_POD = sympy.Symbol("B_pod", positive=True)
"""Tokens per pod, ``B / |P|``."""

_LAYOUT = {
    # scheme: how In, W_in and W_out are stored
    "dp": ("In[B_X, D]", "W_in[D, F]", "W_out[F, D]"),
    "fsdp": ("In[B_X, D]", "W_in[D_X, F]", "W_out[F, D_X]"),
    "tp": ("In[B, D_Y]", "W_in[D, F_Y]", "W_out[F_Y, D]"),
    "fsdp+tp": ("In[B_X, D_Y]", "W_in[D_X, F_Y]", "W_out[F_Y, D_X]"),
}


def _check_scheme(scheme: str) -> str:
    key = scheme.strip().lower().replace(" ", "").replace("_", "+")
    key = {"data": "dp", "zero3": "fsdp", "zero-3": "fsdp", "tensor": "tp", "mixed": "fsdp+tp"}.get(key, key)
    if key not in _LAYOUT:
        raise PlanError(
            say("unknown parallelism scheme '{name}'", name=scheme),
            hint=say("use one of {options}", options=", ".join(SCHEMES)),
        )
    return key


def scheme_program(
    scheme: str,
    *,
    training: bool = True,
    fabric: str = "ici",
    batch_axes: str = "X",
    axis_fabric: Mapping[str, str] | None = None,
    spread_values: Mapping[str, object] | None = None,
    comm_overlap: str = "axes",
    dtype: str = "bf16",
) -> Program:
    """The MLP block under ``scheme`` as a program: forward, and with ``training`` the backward pass.

    ``batch_axes`` are the axes sharding the batch (``"PX"`` adds a pod axis P in front of X); every
    array is of ``dtype`` (its bytes are what the collectives move).

    Raises:
        PlanError: an unknown scheme or fabric.
    """
    key = _check_scheme(scheme)
    p = Program(
        key,
        fabric=dict(axis_fabric or {}),
        spread=dict(spread_values or {}),
        default_fabric=fabric,
        comm_overlap=comm_overlap,
        dtype=dtype,
    )
    bx = batch_axes if key != "tp" else batch_axes.replace("X", "")
    b = f"B_{bx}" if bx else "B"
    y = "Y" if key in ("tp", "fsdp+tp") else ""
    x = "X" if key in ("fsdp", "fsdp+tp") else ""
    f = f"F_{y}" if y else "F"
    dx = f"D_{x}" if x else "D"
    p.input(f"In[{b}, {'D_Y' if y else 'D'}]")
    p.input(f"W_in[{dx}, {f}]", role="weight")
    p.input(f"W_out[{f}, {dx}]", role="weight")
    act_out = f"[{b}, D_Y]" if y else f"[{b}, D]"
    p.matmul(f"In[{b}, D] · W_in[D, {f}] -> Tmp[{b}, {f}]", keep=("In",), purpose="the up-projection")
    p.matmul(f"Tmp[{b}, {f}] · W_out[{f}, D] -> Out{act_out}", purpose="the down-projection")
    if not training:
        return p
    p.input(f"dOut{act_out}", role="gradient")
    bw = "backward"
    p.matmul(f"dOut[{b}, D] · W_out[{f}, D] -> dTmp[{b}, {f}]", phase=bw, keep=("dOut",), role="gradient",
             purpose="the gradient of Tmp")  # fmt: skip
    p.matmul(f"Tmp[{b}, {f}] · dOut[{b}, D] -> dW_out[{f}, {dx}]", phase=bw, role="weight-gradient",
             purpose="the gradient of W_out")  # fmt: skip
    p.matmul(f"dTmp[{b}, {f}] · W_in[D, {f}] -> dIn{act_out}", phase=bw, role="gradient",
             purpose="the gradient of In")  # fmt: skip
    p.matmul(f"In[{b}, D] · dTmp[{b}, {f}] -> dW_in[{dx}, {f}]", phase=bw, role="weight-gradient",
             purpose="the gradient of W_in")  # fmt: skip
    return p


@dataclass(frozen=True, slots=True)
class Memory:
    """Peak bytes per device of one layer, by kind (SymPy expressions).

    Attributes:
        weights: the weights as stored (bf16).
        gradients: the weight gradients, sharded like the weights (bf16; 0 when serving).
        optimizer: Adam's state, :data:`ADAM_BYTES_PER_PARAM` bytes per stored parameter (0 when serving).
        activations: the activations the forward pass keeps for the backward pass (0 when serving).
        transient: the largest set of temporary copies one matmul needs at once (gathered operands it
            does not keep, plus its result).
        peak: the sum.
    """

    weights: sympy.Expr
    gradients: sympy.Expr
    optimizer: sympy.Expr
    activations: sympy.Expr
    transient: sympy.Expr
    peak: sympy.Expr


@dataclass(frozen=True)
class Layer:
    """One MLP block under one scheme: its program and everything derived from it."""

    scheme: str
    program: Program
    training: bool
    fabric: str
    _conditions: dict = field(default_factory=dict, compare=False, repr=False)

    # -- costs ---------------------------------------------------------------------------------

    @property
    def phases(self) -> tuple[str, ...]:
        return ("forward", "backward") if self.training else ("forward",)

    @property
    def W(self) -> sympy.Symbol:
        """The bandwidth constant the in-pod axes use (``W_ici``, ``W_nvlink``)."""
        return Fabric.parse(self.fabric).bandwidth

    @property
    def devices(self) -> sympy.Expr:
        """Chips in the mesh: the product of the axis sizes the program uses."""
        names = sorted({a for s in self.program.steps for arr in _arrays(s) for a in arr.axes})
        names = sorted(set(names) | {a for arr in self._stored() for a in arr.axes})
        return sympy.Mul(*[axis(a) for a in names])

    def _stored(self) -> list:
        return [self.program.array(n) for n in self.program.held if self.program.roles[n] == "weight"] + [
            self.program.array("In")
        ]

    def flops(self, phase: str | None = None) -> sympy.Expr:
        """FLOPs per device (``None``: every pass)."""
        return self.program.flops(phase)

    def total_flops(self, phase: str | None = None) -> sympy.Expr:
        """FLOPs over all devices."""
        return sympy.simplify(self.flops(phase) * self.devices)

    def math_time(self, phase: str | None = None) -> sympy.Expr:
        return self.program.math_time(phase)

    @property
    def comm_overlap(self) -> str:
        """How the collectives of a pass add up: ``axes`` (disjoint links at once, the book's) or ``none``."""
        return self.program.comm_overlap

    def comm_time(self, phase: str | None = None, fabric: str | None = None) -> sympy.Expr:
        """``T_comms`` of a pass (None: both), bandwidth-only, added up as :attr:`comm_overlap` says."""
        return self.program.comm_time(phase, fabric)

    def comm_bytes(self, phase: str | None = None) -> sympy.Expr:
        return self.program.comm_bytes(phase)

    def collectives(self, phase: str | None = None):
        return self.program.collectives(phase)

    # -- memory ---------------------------------------------------------------------------------

    @property
    def memory(self) -> Memory:
        """Bytes per device: weights, gradients, optimizer state, saved activations, transients."""
        p = self.program
        weights = [n for n in p.held if p.roles[n] == "weight"]
        w = sympy.Add(*[p.bytes(p.array(n)) for n in weights])
        params = sympy.Add(*[p._elements(p.array(n)) for n in weights])
        grads = sympy.Add(*[p.bytes(p.array(n)) for n in p.held if p.roles[n] == "weight-gradient"])
        opt = ADAM_BYTES_PER_PARAM * params if self.training else sympy.Integer(0)
        acts = sympy.Integer(0)
        if self.training:
            acts = sympy.Add(*[p.bytes(arr) for n, arr in p.kept() if p.roles[n] == "activation"])
        transients = []
        for s in p.matmuls():
            op = s.op
            assert isinstance(op, LocalMatmul)  # matmuls() returns local products only
            held = [a for n in (op.lhs.name, op.rhs.name) for a in p.versions(n)]
            extra = [p.bytes(a) for a in (op.lhs, op.rhs) if a not in held]
            transients.append(sympy.Add(*extra, p.bytes(op.output)))
        transient = _largest(transients)
        return Memory(w, grads, opt, acts, transient, w + grads + opt + acts + transient)

    # -- conditions -----------------------------------------------------------------------------

    def _symbol(self, name: str | sympy.Symbol) -> tuple[sympy.Symbol, dict]:
        """The symbol to solve for and the substitutions that introduce it."""
        if isinstance(name, sympy.Symbol):
            return name, {}
        key = name.strip()
        if key in ("B_chip", "B/N", "batch_per_chip"):
            return B_CHIP, {dim("B"): B_CHIP * self.devices}
        if key in ("B_pod", "B/P", "batch_per_pod"):
            return B_POD, {dim("B"): B_POD * axis("P")}
        pool = set()
        for ph in self.phases:
            pool |= self.math_time(ph).free_symbols | self.comm_time(ph).free_symbols
        by_name = {s.name: s for s in pool}
        for cand in (key, f"|{key}|", key.strip("|")):
            if cand in by_name:
                return by_name[cand], {}
        raise PlanError(
            say("'{name}' does not appear in the {scheme} costs", name=name, scheme=self.scheme),
            hint=say("solve for one of {names}", names=", ".join(sorted(by_name | {"B_chip": B_CHIP}))),
        )

    def condition(
        self,
        symbol: str | sympy.Symbol = "B_chip",
        phase: str = "train",
        fabric: str | None = None,
        network: Network | None = None,
    ) -> Condition:
        """When the layer is compute-bound (``T_comms ≤ T_math``), solved for ``symbol``.

        ``phase``: ``forward``, ``backward``, ``train`` (forward and backward each compute-bound;
        serving means ``forward``) or ``step`` (the sums over both passes). ``fabric`` counts only
        the collectives over that network (``dcn`` for the cross-pod condition). ``network`` (from
        :meth:`network`) costs the collectives through a GPU network's levels instead.
        """
        if network is not None:
            return self._condition(symbol, phase, fabric, network)
        key = (symbol, phase, fabric)
        if key not in self._conditions:
            self._conditions[key] = self._condition(symbol, phase, fabric)
        return self._conditions[key]

    def network(self, mesh: Mapping[str, object], hardware: Hardware | str, model: str = "book") -> Network:
        """The layer's collectives costed through ``hardware``'s network levels on a mesh of these sizes
        (:func:`symshard.models.networked.through_network`).

        Examples:
            >>> net = layer("tp", hardware="h100").network({"Y": 16}, "h100")
            >>> net.binding.binding.fabric.value, net.binding.bandwidth
            ('dcn', 400000000000)
        """
        from .networked import through_network

        return through_network(self.program, hardware, mesh, model=model)

    def _condition(
        self, symbol: str | sympy.Symbol, phase: str, fabric: str | None, network: Network | None = None
    ) -> Condition:
        x, subs = self._symbol(symbol)
        phases = self.phases if phase == "train" else (None,) if phase == "step" else (phase,)
        parts: list[list[list[sympy.Basic]]] = []
        for ph in phases:
            comm = (self.comm_time(ph, fabric) if network is None else network.comm_time(self.program, ph)).xreplace(
                subs
            )
            mth = self.math_time(ph).xreplace(subs)
            if comm == 0:
                continue
            for term in _terms(comm):  # max(a, b) ≤ T_math: each of them is
                parts.append(_solve_le(term, mth, x))
        return _conjunction("compute-bound", parts, x)

    def communication_bound(self, symbol: str | sympy.Symbol = "B_chip", phase: str = "forward") -> Condition:
        """When one pass is communication-bound (``T_math < T_comms``), solved for ``symbol``."""
        x, subs = self._symbol(symbol)
        comm = self.comm_time(phase).xreplace(subs)
        if comm == 0:
            return Condition(())
        mth = self.math_time(phase).xreplace(subs)
        either = [case for term in _terms(comm) for case in _solve_le(mth, term, x, strict=True)]  # T_math < any
        return _conjunction("communication-bound", [either], x)

    # -- the expected time on a calibrated chip -------------------------------------------------------

    def expected_math_time(
        self, phase: str, hardware: Hardware | None, values: Mapping[sympy.Symbol, object]
    ) -> sympy.Expr | None:
        """The matmuls of a pass as ``hardware`` is expected to run them, from the rates it attained in
        measurements (``symshard calibrate --chip``): each matmul's FLOPs and HBM bytes (its blocks and its
        result) priced by :func:`~symshard.costs.kernels.expected_time`, one after another, summed as
        :meth:`math_time` sums them. None on a chip without attained rates for the layer's dtype, or while
        ``values`` leave a symbol."""
        from ..machines.chips import attained_rates

        rates = attained_rates(hardware, self.program.dtype)
        if rates is None:
            return None
        from ..costs.kernels import expected_time

        point = {as_expr(k): as_expr(v) for k, v in values.items()}
        total = sympy.Add(*[expected_time(as_expr(s.flops).xreplace(point), as_expr(s.hbm_bytes).xreplace(point),
                                          rates) for s in self.program.matmuls(phase)])  # fmt: skip
        return total if total.is_number else None

    def expected_time(
        self,
        phase: str,
        hardware: Hardware | None,
        values: Mapping[sympy.Symbol, object],
        *,
        comm: sympy.Expr | None = None,
    ) -> sympy.Expr | None:
        """A pass as ``hardware`` is expected to run it: the larger of :meth:`expected_math_time` and
        ``T_comms`` (:meth:`comm_time` unless ``comm`` gives it, e.g. through a network's levels), as the
        bound weighs ``T_math`` against ``T_comms`` (the collectives overlap the matmuls). None without
        attained rates or numbers.

        Examples:
            >>> lay = layer("tp", training=False)
            >>> lay.expected_time("forward", lookup_hardware("h200"), lay.values({"Y": 8}, {"B": 64, "D": 4096,
            ...                   "F": 14336}, "h200")) is None  # a preset: the data sheet only
            True
        """
        math = self.expected_math_time(phase, hardware, values)
        if math is None:
            return None
        t = as_expr(self.comm_time(phase) if comm is None else comm).xreplace(
            {as_expr(k): as_expr(v) for k, v in values.items()}
        )
        return max(math, t) if t.is_number else None

    # -- numbers -----------------------------------------------------------------------------------

    def values(
        self,
        mesh: Mapping[str, int] | None = None,
        shape: Mapping[str, int] | None = None,
        hardware: Hardware | str | None = None,
        spread_values: Mapping[str, int] | None = None,
    ) -> dict[sympy.Symbol, sympy.Expr]:
        """The substitutions for a mesh, a shape and a chip (each logical axis one physical axis unless
        ``spread_values`` says otherwise)."""
        out: dict[sympy.Symbol, sympy.Expr] = {}
        for a, size in (mesh or {}).items():
            out[axis(a)] = sympy.Integer(size)
            out[spread(a)] = sympy.Integer((spread_values or {}).get(a, 1))
        for a, m in (spread_values or {}).items():
            out[spread(a)] = sympy.Integer(m)
        for d, size in (shape or {}).items():
            out[dim(d)] = sympy.Integer(size)
        if hardware is not None:
            out.update(lookup_hardware(hardware).constants(self.program.dtype))
        return out

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Layer", self.scheme, {"training": self.training, "collectives": len(self.collectives()),
                       "fabric": self.fabric}, {"T_comms": self.program.comm_time()})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _arrays(step) -> tuple:
    op = step.op
    if hasattr(op, "lhs"):
        return (op.lhs, op.rhs, op.output)
    return (op.operand, op.output)


def _terms(comm: sympy.Expr) -> tuple[sympy.Expr, ...]:
    """The terms a ``T_comms`` is the largest of (itself, unless collectives on disjoint links overlap)."""
    return tuple(comm.args) if isinstance(comm, sympy.Max) else (comm,)


def _largest(values: Sequence[sympy.Expr]) -> sympy.Expr:
    values = list(dict.fromkeys(as_expr(v) for v in values))
    if not values:
        return sympy.Integer(0)
    return values[0] if len(values) == 1 else sympy.Max(*values)


def _solve_le(lhs: sympy.Expr, rhs: sympy.Expr, x: sympy.Symbol, strict: bool = False) -> list[list[sympy.Basic]]:
    """``lhs ≤ rhs`` (``<`` with ``strict``) for positive sides, solved for ``x``; square roots are
    squared away first (both sides are positive, so squaring keeps the order)."""
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    if lhs.has(sympy.Pow) and any(
        e.exp.is_Rational and not e.exp.is_Integer for e in (lhs + rhs).atoms(sympy.Pow) if x in e.free_symbols
    ):
        lhs, rhs = sympy.expand(lhs**2), sympy.expand(rhs**2)
    return [[_orient(r, x) for r in case] for case in solve_less(lhs, rhs, x, strict=strict)]


def _orient(rel: sympy.Basic, x: sympy.Symbol) -> sympy.Basic:
    """``bound ≤ x`` written ``x ≥ bound``: the symbol solved for on the left."""
    if isinstance(rel, sympy.core.relational.Relational) and rel.rhs == x and x not in rel.lhs.free_symbols:
        return rel.reversed
    return rel


def _conjunction(label: str, parts: list[list[list[sympy.Basic]]], x: sympy.Symbol) -> Condition:
    if not parts:
        return Condition((Case(label, ()),))
    cases = []
    for combo in _product(parts):
        rels = [r for c in combo for r in c]
        merged = merge_bounds(rels, x)
        if merged is not None:
            cases.append(Case(label, merged))
    return Condition(drop_subsumed(cases))


def _product(parts):
    import itertools

    return itertools.product(*parts)


# -- the public entry points ----------------------------------------------------------------------


def _fabric_for(hardware: Hardware | str | None, fabric: str | None) -> str:
    if fabric is not None:
        try:
            return Fabric.parse(fabric).value
        except MeshError as err:
            raise PlanError(err.message, hint=err.hint) from None
    if hardware is None:
        return "ici"
    hw = lookup_hardware(hardware)
    return "ici" if hw.ici_link_bandwidth is not None else "nvlink"


@cache
def _layer(key: str, training: bool, fabric: str, comm_overlap: str, dtype: str) -> Layer:
    program = scheme_program(key, training=training, fabric=fabric, comm_overlap=comm_overlap, dtype=dtype)
    return Layer(key, program, training, fabric)


def layer(
    scheme: str,
    *,
    training: bool = True,
    hardware: Hardware | str | None = None,
    fabric: str | None = None,
    comm_overlap: str = "axes",
    dtype: str = "bf16",
) -> Layer:
    """One MLP block under ``scheme`` (``dp``, ``fsdp``, ``tp``, ``fsdp+tp``), symbolic in every size.

    ``hardware`` only picks the network the formulas use: ``W_ici`` on a TPU, ``W_nvlink`` (a GPU's
    one-way NVLink egress, switch-connected) on a GPU; numbers come from :meth:`Layer.values`.
    ``comm_overlap`` says how a pass's collectives add up: ``axes`` (the book's current convention:
    collectives on different ICI axes run at the same time, so FSDP + TP's ``T_comms`` is the larger of
    its two axes' totals) or ``none`` (their sum). On a GPU every axis inside the node shares the GPUs'
    NVLink ports, so the two agree there. ``dtype`` is every array's: in int8 the collectives move half the
    bytes of bf16 while the chip's 8-bit peak is twice its bf16 one, so the bounds on a chip do not move
    (the book: precision cancels).

    Raises:
        PlanError: an unknown scheme or overlap.
        UnknownDtypeError: an unknown dtype.

    Examples:
        >>> layer("fsdp").total_flops()
        12*B*D*F
        >>> layer("fsdp+tp").comm_time("forward")
        Max(4*B*D/(M_Y*W_ici*|X|), 4*D*F/(M_X*W_ici*|Y|))
        >>> layer("fsdp+tp", comm_overlap="none").comm_time("forward")
        4*B*D/(M_Y*W_ici*|X|) + 4*D*F/(M_X*W_ici*|Y|)
    """
    try:
        how = check_comm_overlap(comm_overlap)
    except UnknownModelError as err:
        raise PlanError(err.message, hint=err.hint) from None
    return _layer(_check_scheme(scheme), bool(training), _fabric_for(hardware, fabric), how, canonical_dtype(dtype))


@dataclass(frozen=True, slots=True)
class Split:
    """The split of N chips between X (FSDP) and Y (TP) that minimises communication.

    Attributes:
        x: the optimal ``|X|`` as a formula (``|Y| = N / |X|``).
        comm_time: ``T_comms`` at that split.
        math_time: ``T_math`` (it does not depend on the split).
        min_batch_per_chip: the tokens per chip ``B / N`` below which the pass is
            communication-bound even at the best split.
        phase: the pass (or ``step``) whose communication is minimised.
        comm_overlap: ``axes`` (the two axes' collectives run at the same time: ``T_comms`` is the larger
            total, the book's convention) or ``none`` (their sum).
    """

    x: sympy.Expr
    comm_time: sympy.Expr
    math_time: sympy.Expr
    min_batch_per_chip: sympy.Expr
    phase: str
    comm_overlap: str = "axes"

    def best_integer(self, n: int, values: Mapping[sympy.Symbol, object], *, divides: Mapping[int, int] | None = None):
        """The best ``(|X|, |Y|)`` among the divisor pairs of ``n``, ranked by ``T_comms`` under ``values``
        (which must give B, D, F, the spreads and W; None when a size is left symbolic); pairs that do not
        divide the dims are skipped."""
        lay = layer("fsdp+tp", fabric=_fabric_of(self.comm_time), comm_overlap=self.comm_overlap)
        comm = lay.comm_time(None if self.phase == "step" else self.phase)
        best = None
        for x in range(1, n + 1):
            if n % x:
                continue
            y = n // x
            point = {**values, axis("X"): x, axis("Y"): y}
            if not _divisible(point, x, y):
                continue
            t = as_expr(comm).xreplace({k: as_expr(v) for k, v in point.items()})
            if not t.is_number:  # a size left symbolic: no ranking of the pairs by number
                return None
            if best is None or t < best[2]:
                best = (x, y, t)
        return best


def _fabric_of(expr: sympy.Expr) -> str:
    return "nvlink" if W_nvlink in as_expr(expr).free_symbols else "ici"


def _divisible(point: Mapping, x: int, y: int) -> bool:
    b, d, f = (point.get(dim(n)) for n in "BDF")
    return all(v is None or int(v) % k == 0 for v, k in ((b, x), (d, x), (d, y), (f, y)))


def fsdp_tp_split(
    phase: str = "forward",
    *,
    hardware: Hardware | str | None = None,
    fabric: str | None = None,
    comm_overlap: str = "axes",
) -> Split:
    """Minimise FSDP + TP communication over ``|X| · |Y| = N``, and the batch per chip it needs.

    ``T_comms`` has a term in ``1/|Y|`` (gathering weights over X) and one in ``1/|X|``
    (gathering and reduce-scattering activations over Y); with ``|Y| = N/|X|`` the best split makes
    the two equal when they overlap (``comm_overlap="axes"``, the book's convention: ``T_comms`` is
    the larger), and zeroes the derivative of their sum otherwise (``"none"``); both give the same
    split, but the batch per chip it needs differs by a factor of 4. ``phase``: ``forward`` (the
    binding pass: the backward pass moves at most twice as much for twice the FLOPs), ``backward``
    or ``step`` (both passes).

    Examples:
        >>> fsdp_tp_split().x
        sqrt(B)*sqrt(M_X)*sqrt(N)/(sqrt(F)*sqrt(M_Y))
        >>> fsdp_tp_split().min_batch_per_chip, fsdp_tp_split(comm_overlap="none").min_batch_per_chip
        (C**2/(F*M_X*M_Y*W_ici**2), 4*C**2/(F*M_X*M_Y*W_ici**2))
    """
    lay = layer("fsdp+tp", hardware=hardware, fabric=fabric, comm_overlap=comm_overlap)
    ph = None if phase == "step" else phase
    if ph not in (None, *lay.phases):
        raise PlanError(say("unknown phase '{name}'", name=phase), hint=say("use forward, backward or step"))
    t = sympy.Symbol("t", positive=True)
    subs = {axis("X"): t, axis("Y"): N / t}
    comm = as_expr(lay.comm_time(ph)).xreplace(subs)
    terms = _terms(comm)
    if len(terms) == 2:  # max(a·t, b/t) is least where the two meet
        roots = [r for r in sympy.solve(terms[0] - terms[1], t) if r.is_positive is not False]
    else:
        roots = [r for r in sympy.solve(sympy.diff(comm, t), t) if r.is_positive is not False]
    if len(roots) != 1:  # pragma: no cover - the cost is a·t + b/t
        raise PlanError(say("could not minimise the FSDP + TP communication"), hint=say("this is a bug in symshard"))
    x_opt = sympy.simplify(roots[0])
    best = sympy.simplify(terms[0].xreplace({t: x_opt}) if len(terms) == 2 else comm.xreplace({t: x_opt}))
    mth = sympy.simplify(lay.math_time(ph).xreplace(subs))
    # the batch per chip at which T_comms (best split) = T_math
    sub_b = {dim("B"): B_CHIP * N}
    cond = _solve_le(best.xreplace(sub_b), mth.xreplace(sub_b), B_CHIP)
    bound = _lower_bound(cond, B_CHIP)
    return Split(x_opt, best, mth, bound, phase, lay.comm_overlap)


def _lower_bound(cases: list[list[sympy.Basic]], x: sympy.Symbol) -> sympy.Expr:
    for case in cases:
        for r in case:
            if isinstance(r, (sympy.GreaterThan, sympy.StrictGreaterThan)) and r.lhs == x:
                return r.rhs
    raise PlanError(say("no lower bound found"), hint=say("this is a bug in symshard"))  # pragma: no cover


@dataclass(frozen=True)
class Pods:
    """Data parallelism across pods over the data-centre network, FSDP over X inside each pod."""

    layer: Layer
    min_batch_per_pod: sympy.Expr
    condition: Condition

    def numeric_min_batch(self, hardware: Hardware | str) -> sympy.Expr:
        """The tokens per pod needed on ``hardware`` (its per-chip DCN bandwidth)."""
        hw = lookup_hardware(hardware)
        if hw.dcn_bandwidth is None:
            raise PlanError(
                say("{chip} has no DCN bandwidth figure", chip=hw.label),
                hint=say("set one with {option}", option="--hw-set W_dcn=..."),
            )
        return as_expr(self.min_batch_per_pod).xreplace(hw.constants())

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Pods", self.layer.scheme, {"min_batch_per_pod": self.min_batch_per_pod,
                       "condition": self.condition.formula()})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@cache
def pods(dtype: str = "bf16") -> Pods:
    """FSDP inside each pod (axis X, ICI) and pure data parallelism across pods (axis P, DCN).

    Inside a pod the gradients are reduce-scattered over X; each chip then all-reduces its shard
    with the chips holding the same shard in the other pods, over DCN. That AllReduce can overlap
    the backward pass's matmuls; the condition compares the DCN time with them, per pod batch.
    Every array is of ``dtype``.

    Examples:
        >>> pods().min_batch_per_pod
        C/W_dcn
    """
    prog = scheme_program("fsdp", batch_axes="PX", axis_fabric={"P": "dcn"}, spread_values={"P": 1},
                          dtype=canonical_dtype(dtype))  # fmt: skip
    lay = Layer("fsdp", prog, True, "ici")
    cond = lay.condition("B_pod", phase="backward", fabric="dcn")
    comm = lay.comm_time("backward", fabric="dcn").xreplace({dim("B"): B_POD * axis("P")})
    mth = lay.math_time("backward").xreplace({dim("B"): B_POD * axis("P")})
    bound = _lower_bound(_solve_le(comm, mth, B_POD), B_POD)
    return Pods(lay, bound, cond)


def largest_tp(
    f: int, values: Mapping[sympy.Symbol, object], hardware_fabric: str = "ici", shape: Mapping[str, int] | None = None
) -> int:
    """The largest integer ``|Y|`` for which TP stays compute-bound (both passes) under ``values``.

    With ``shape`` (sizes of ``B``, ``D`` and ``F``), the largest such degree that the layout can
    actually use: every array of the TP layer, in every sharding it is held in, must place on an
    axis ``Y`` of that size (``Y`` splits ``D`` of the activations and ``F`` of the weights, so it
    must divide both): on a TPU v5e the bound for ``F = 20480`` is 9.4, and 8 is the degree that divides.

    Examples:
        >>> values = layer("tp").values({}, {}, "tpu-v5e", {"Y": 1})
        >>> largest_tp(20480, values), largest_tp(20480, values, shape={"B": 4096, "D": 16384, "F": 20480})
        (9, 8)
    """
    lay = layer("tp", fabric=hardware_fabric)
    cond = lay.condition("Y")
    bound = None
    for case in cond.cases:
        for r in case.relations:
            if isinstance(r, (sympy.LessThan, sympy.StrictLessThan)) and r.lhs == axis("Y"):
                bound = as_expr(r.rhs).xreplace({dim("F"): f, **{as_expr(k): v for k, v in values.items()}})
    if bound is None:  # pragma: no cover
        raise PlanError(say("TP has no upper bound on |Y|"), hint=say("this is a bug in symshard"))
    top = int(sympy.floor(bound))
    if shape is None:
        return top
    held = [a for versions in lay.program.held.values() for a in versions]
    for degree in range(top, 0, -1):
        if all(_places(a, {"Y": degree}, shape) for a in held):
            return degree
    raise PlanError(
        say(
            "no TP degree up to {top} splits the layer's arrays evenly with sizes {sizes}",
            top=top,
            sizes=str(dict(shape)),
        ),
        hint=say("give sizes for B, D and F"),
    )


def _places(array: Array, mesh: Mapping[str, int], shape: Mapping[str, int]) -> bool:
    """Whether ``array`` places on ``mesh`` with ``shape`` (every sharded dim divides)."""
    from ..costs.placement import place

    try:
        place(array, mesh, {d: shape[d] for d in array.dim_names if d in shape})
    except SymshardError:
        return False
    return True

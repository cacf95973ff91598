"""Serving a whole model: the KV cache, the largest batch, decode rooflines and how far to split.

The book's inference chapters reason about generation the way the sharding chapter reasons about
matmuls, and this module derives each of their answers:

* **KV cache.** A token adds a key and a value of ``K·H`` elements in every layer,
  ``2·L·K·H`` elements; a sequence of ``T`` tokens ``T`` times that.
* **Fit.** The slice is one chip unless a mesh or a chip count says otherwise. The weights are
  split over all ``N`` chips; the KV cache as the user states (:data:`KV_SHARDINGS`): over the KV
  heads (at most ``K`` ways: a KV head is not split, so beyond ``K`` chips it is repeated), over the
  batch (whole sequences per chip) or over the sequence (``T/N`` tokens of each). The largest batch
  is what is left of the chips' HBM over one sequence's cache, given whenever the chip count is known.
* **Decode step.** Each step reads every weight and every sequence's cache from HBM:
  ``T_hbm = (weights/N + B·KV/min(N, K)) / W_hbm`` over the heads. It computes ``2·P_active`` FLOPs
  per token (plus attention over the context), ``T_math = B·FLOPs/(N·C)``, and moves activations
  between the chips of the model axis (the tensor-parallel block's collectives, a
  :class:`~symshard.planning.program.Program`, times ``L``; on a GPU slice through the network's
  levels). How the terms combine is a recorded choice (:data:`DECODES`): the largest of the three
  (the cache's read overlapped with the rest; memory-bound at small batch, compute-bound above a batch
  where ``T_math = T_hbm``), or the book's ``T_kv + max(T_weights, T_math, T_comms)``.
* **How far to split.** Prefill is compute-bound while ``|Y| ≤ F·M_Y·W_ici/C`` (the TP layer's
  forward condition); a decode step with weights sharded over ``Y`` chips must spend longer
  loading its weights from HBM than moving activations over ICI, ``|Y| ≤ F·M_Y·W_ici/(B·W_hbm)``
  (both derived from ``layer("tp")``'s program).
* **1-D or 2-D weight-stationary.** Two layouts of the MLP over ``X × Y × Z = N`` chips, written
  as programs; the 2-D layout's best ``|X|`` is ``sqrt(N·D/(2·F))`` and it moves less than the
  1-D layout once ``N > 18·F/D`` (the chapter's ``32·(F/D)·(3/4)²``).
* **Latency.** Decode activations are small: each collective is costed by the engine on the real
  slice (its wiring and hop latency) and reported latency- or bandwidth-bound.

Examples:
    >>> s = serve("llama3-70b", batch=32, context=8192, mesh="X=4,Y=2", hardware="v5e", dtype="int8")
    >>> s.kv_bytes_per_token, s.fits, s.max_batch
    (163840, True, 42)
    >>> s.regime
    'memory'
    >>> decode_tp_limit().condition.text()
    '|Y| ≤ F·M_Y·W_ici/(B·W_hbm)'
    >>> weight_stationary().crossover.text()
    'N > 18·F/D'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from ..algebra.conditions import Condition
from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..algebra.symbols import C, W_hbm, axis, dim
from ..costs.collective_cost import CollectiveCost
from ..errors import HardwareError, ModelError, PlanError
from ..machines.chips import Hardware, attained_rates
from ..machines.mesh import Mesh
from ..machines.presets import hardware as lookup_hardware
from ..messages import Message, say
from ..planning.program import Program
from .bounds import all_at_most, balance, solve_at_most
from .networked import Network, through_network
from .schemes import N, layer
from .step_kernels import StepKernel, decode_kernels, expected_sum, prefill_kernels
from .training import M_HBM
from .transformer import Model, model, positive_number

__all__ = [
    "DECODES",
    "KV_CACHE",
    "KV_SHARDINGS",
    "Serving",
    "TPLimit",
    "WeightStationary",
    "block_program",
    "decode_tp_limit",
    "kv_cache_bytes",
    "latency_threshold",
    "prefill_tp_limit",
    "serve",
    "weight_stationary",
]

KV_CACHE = "2·L·K·H elements per token: a key and a value of K·H in every layer"


def kv_cache_bytes(m: Model | str, context: object = None, *, dtype: str = "bf16") -> sympy.Expr:
    """Bytes of one sequence's KV cache: ``2·L·K·H·T`` elements of ``dtype`` (``T`` symbolic by default;
    ``context=1`` gives the bytes per token).

    Examples:
        >>> kv_cache_bytes("llama3-70b", 1), kv_cache_bytes("llama3-70b", 8192, dtype="int8")
        (327680, 1342177280)
    """
    mdl = model(m)
    t = dim("T") if context is None else positive_number(context, "context", integer=True)
    return dtype_bytes(canonical_dtype(dtype)) * mdl.kv_elements_per_token() * t


def block_program(axes: str = "Y", *, gated: bool = True, fabric: str = "ici") -> Program:
    """One Transformer block under tensor parallelism over ``axes``, as a program (forward, bf16).

    The attention projections (``W_qkv[D, A]`` with ``A = (N + 2K)·H`` and ``W_o[O, D]`` with
    ``O = N·H``) and the MLP (``W_up[D, G]`` with ``G = 2·F`` for the fused gate and up
    projections, ``W_down[F, D]``) are split over the heads and the hidden units; the attention
    core and the nonlinearity are local, so the block gathers its input and reduce-scatters its
    output twice: ``8·B·D`` bytes moved per layer.

    Examples:
        >>> block_program().comm_time()
        8*B*D/(M_Y*W_ici)
    """
    g = "G" if gated else "F"
    p = Program("tensor-parallel block", default_fabric=fabric, comm_overlap="none")  # a decode step's chain
    p.input(f"In[B, D_{axes}]")
    p.input(f"W_qkv[D, A_{axes}]", role="weight")
    p.input(f"W_o[O_{axes}, D]", role="weight")
    p.input(f"W_up[D, {g}_{axes}]", role="weight")
    p.input(f"W_down[F_{axes}, D]", role="weight")
    p.matmul(f"In[B, D] · W_qkv[D, A_{axes}] -> Qkv[B, A_{axes}]", purpose="the query, key and value projections")
    p.input(f"Att[B, O_{axes}]")  # each chip's heads, attended locally
    p.matmul(f"Att[B, O_{axes}] · W_o[O_{axes}, D] -> Mid[B, D_{axes}]", purpose="the attention's output projection")
    p.matmul(f"Mid[B, D] · W_up[D, {g}_{axes}] -> Up[B, {g}_{axes}]", purpose="the MLP's gate and up projections")
    p.input(f"Act[B, F_{axes}]")  # after the nonlinearity, local
    p.matmul(f"Act[B, F_{axes}] · W_down[F_{axes}, D] -> Out[B, D_{axes}]", purpose="the MLP's down projection")
    return p


def _block_sizes(mdl: Model) -> dict[sympy.Symbol, sympy.Expr]:
    n, k, h = mdl.heads, mdl.kv_heads, mdl.head_dim
    return {dim("A"): (n + 2 * k) * h, dim("O"): n * h, dim("G"): 2 * mdl.d_ff, dim("D"): mdl.d_model,
            dim("F"): mdl.d_ff}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TPLimit:
    """The largest tensor-parallel degree ``|Y|`` that keeps a pass on the right side of a roofline.

    Attributes:
        phase: ``prefill`` (compute against ICI) or ``decode`` (HBM weight loads against ICI).
        condition: the inequality in ``|Y|``.
        first, second: the two times compared (``T_math`` or ``T_hbm``, then ``T_comms``).
        bound: the largest ``|Y|`` as a formula.
    """

    phase: str
    condition: Condition
    first: sympy.Expr
    second: sympy.Expr
    bound: sympy.Expr

    def at(self, values: Mapping[sympy.Symbol, object]) -> sympy.Expr:
        """The bound with numbers substituted."""
        return as_expr(self.bound).xreplace({as_expr(k): as_expr(v) for k, v in values.items()})

    def _repr_latex_(self) -> str:
        return "$" + self.condition.latex() + "$"


def _upper_bound(cond: Condition, x: sympy.Symbol) -> sympy.Expr:
    for case in cond.cases:
        for r in case.relations:
            if isinstance(r, (sympy.LessThan, sympy.StrictLessThan)) and r.lhs == x:
                return r.rhs
    raise PlanError(say("no upper bound found"), hint=say("this is a bug in symshard"))  # pragma: no cover


def prefill_tp_limit(*, fabric: str = "ici") -> TPLimit:
    """Prefill (many tokens) stays compute-bound under TP while ``|Y| ≤ F·M_Y·W/C``: the TP layer's
    forward program, ``T_comms ≤ T_math``.

    Examples:
        >>> prefill_tp_limit().bound
        F*M_Y*W_ici/C
    """
    lay = layer("tp", training=False, fabric=fabric)
    cond = lay.condition("Y", phase="forward")
    return TPLimit("prefill", cond, lay.math_time("forward"), lay.comm_time("forward"), _upper_bound(cond, axis("Y")))


def decode_tp_limit(*, fabric: str = "ici") -> TPLimit:
    """A decode step over ``Y`` chips stays HBM-bound (not ICI-bound) while loading its share of the
    weights takes longer than moving the activations: from the TP layer's forward program, its
    weights' bytes per chip over ``W_hbm`` against its collectives, ``|Y| ≤ F·M_Y·W/(B·W_hbm)``
    (``F/(B·β)`` with ``β = W_hbm/W_ici``).

    Examples:
        >>> decode_tp_limit().first
        4*D*F/(W_hbm*|Y|)
    """
    lay = layer("tp", training=False, fabric=fabric)
    prog = lay.program
    hbm = sympy.Add(*[prog.bytes(prog.array(n)) for n in prog.held if prog.roles[n] == "weight"]) / W_hbm
    comm = lay.comm_time("forward")
    cond = all_at_most([(comm, hbm)], axis("Y"))
    return TPLimit("decode", cond, hbm, comm, _upper_bound(cond, axis("Y")))


def latency_threshold(hardware: Hardware | str) -> sympy.Expr:
    """Bytes per shard below which a collective on decode activations is latency-bound: one link's
    one-way bandwidth times the hop latency (45 kB on a TPU v5e).

    Raises:
        HardwareError: a chip without an ICI link bandwidth or a hop latency figure.

    Examples:
        >>> latency_threshold("v5e")
        45000
    """
    hw = lookup_hardware(hardware)
    one_way = hw.ici_link_bandwidth or hw.nvlink_bandwidth
    if one_way is None or hw.hop_latency is None:
        raise HardwareError(say("{chip} has no link bandwidth or hop latency figure", chip=hw.label),
                            hint=say("set them with --hw-set W_ici=...,T_hop=..."))  # fmt: skip
    return one_way * hw.hop_latency


@dataclass(frozen=True, slots=True)
class WeightStationary:
    """The MLP's 1-D and 2-D weight-stationary layouts over ``X × Y × Z = N`` chips, and their crossover.

    Attributes:
        one_d: the 1-D program (``W_in[D, F_XYZ]``: one AllReduce of the output over all chips).
        two_d: the 2-D program (``W_in[D_X, F_YZ]``: an AllReduce over X, then one over Y and Z).
        one_d_time: ``T_comms`` of the 1-D layout, ``4·B·D/(3·W_ici)``.
        two_d_time: ``T_comms`` of the 2-D layout in ``|X|``, ``|Y|``, ``|Z|``.
        best_x: the ``|X|`` that minimises it with ``|Y|·|Z| = N/|X|``.
        best_time: the 2-D ``T_comms`` there.
        crossover: when the 2-D layout moves less (a condition on ``N``).
    """

    one_d: Program
    two_d: Program
    one_d_time: sympy.Expr
    two_d_time: sympy.Expr
    best_x: sympy.Expr
    best_time: sympy.Expr
    crossover: Condition

    @property
    def crossover_chips(self) -> sympy.Expr:
        """The ``N`` above which the 2-D layout wins."""
        for case in self.crossover.cases:
            for r in case.relations:
                if isinstance(r, (sympy.GreaterThan, sympy.StrictGreaterThan)) and r.lhs == N:
                    return r.rhs
        raise PlanError(say("no crossover found"), hint=say("this is a bug in symshard"))  # pragma: no cover

    def _repr_latex_(self) -> str:
        return "$" + self.crossover.latex() + "$"

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("WeightStationary", None, {"one_d": self.one_d_time}, {"two_d": self.best_time},
                       {"best_x": self.best_x})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def weight_stationary(*, fabric: str = "ici") -> WeightStationary:
    """Derive the 1-D and 2-D weight-stationary layouts' communication and their crossover.

    Examples:
        >>> ws = weight_stationary()
        >>> ws.best_x
        sqrt(2)*sqrt(D)*sqrt(N)/(2*sqrt(F))
    """
    spreads = {"X": 1, "Y": 1, "Z": 1}
    # each collective feeds the next matmul, so within the layer they run one after another (the chapter adds them)
    one = Program("1-D weight-stationary", spread=spreads, default_fabric=fabric, comm_overlap="none")
    one.input("In[B, D]")
    one.input("W_in[D, F_XYZ]", role="weight")
    one.input("W_out[F_XYZ, D]", role="weight")
    one.matmul("In[B, D] · W_in[D, F_XYZ] -> Tmp[B, F_XYZ]", purpose="the up-projection")
    one.matmul("Tmp[B, F_XYZ] · W_out[F_XYZ, D] -> Out[B, D]", purpose="the down-projection")
    two = Program("2-D weight-stationary", spread=spreads, default_fabric=fabric, comm_overlap="none")
    two.input("In[B, D_X]")
    two.input("W_in[D_X, F_YZ]", role="weight")
    two.input("W_out[F_YZ, D_X]", role="weight")
    two.matmul("In[B, D_X] · W_in[D_X, F_YZ] -> Tmp[B, F_YZ]", purpose="the up-projection")
    two.matmul("Tmp[B, F_YZ] · W_out[F_YZ, D_X] -> Out[B, D_X]", purpose="the down-projection")
    t1, t2 = one.comm_time(), two.comm_time()
    t = sympy.Symbol("t", positive=True)
    along = as_expr(t2).xreplace({axis("X"): t, axis("Z"): N / (t * axis("Y"))})
    terms = sympy.Add.make_args(sympy.expand(along))
    if len(terms) != 2:  # pragma: no cover - a·t + b/t
        raise PlanError(say("could not minimise the 2-D layout's communication"), hint=say("this is a bug in symshard"))
    best_x = balance(terms[0], terms[1], t)
    best = sympy.factor_terms(along.xreplace({t: best_x}))
    cases = solve_at_most(best, t1, N)
    rels = tuple(sympy.StrictGreaterThan(r.lhs, r.rhs) if isinstance(r, sympy.GreaterThan) else r
                 for case in cases for r in case)  # fmt: skip
    from ..algebra.conditions import Case

    return WeightStationary(one, two, t1, t2, best_x, best, Condition((Case("2-D wins", rels),)))


# -- serving a model on a slice ----------------------------------------------------------------------------

KV_SHARDINGS: dict[str, Message] = {
    "heads": say("over the KV heads: each chip holds its heads' cache of every sequence (beyond K chips a "
                 "head's cache is repeated)"),
    "batch": say("over the batch: each chip holds the whole caches of its B/N sequences"),
    "sequence": say("over the sequence: each chip holds T/N of every sequence's tokens"),
}  # fmt: skip
"""How the KV cache can be split over the chips of the slice, by name (the weights are split over all of
them either way). The attention runs where the cache lives; over the batch or the sequence it moves the
queries (or partial attention outputs) between chips, a few ``N·H`` per token, which the step leaves out."""

DECODES: dict[str, Message] = {
    "overlap": say("the KV cache's read overlaps the weights' read and the matmuls: "
                   "step = max(T_hbm, T_math, T_comms), T_hbm = (weights + KV cache)/W_hbm"),
    "book": say("the book's: the KV cache's read, then the larger of the weights' read and the matmuls: "
                "step = T_kv + max(T_weights, T_math, T_comms)"),
}  # fmt: skip
"""How a decode step's terms combine, by name."""


def _choice(value: str, options: Mapping[str, Message], what: Message) -> str:
    key = str(value).strip().lower()
    key = {"head": "heads", "kv-heads": "heads", "sequences": "batch", "seq": "sequence", "context": "sequence",
           "max": "overlap", "overlapped": "overlap", "chapter": "book"}.get(key, key)  # fmt: skip
    if key not in options:
        raise ModelError(
            say("unknown {what} '{value}'", what=what, value=value),
            hint=say("use one of {options}", options=", ".join(options)),
        )
    return key


@dataclass(frozen=True)
class Serving:
    """A model served from a slice: memory, the decode step's roofline and the limits on splitting it.

    Every figure is a SymPy expression (seconds, bytes, tokens); numbers when the sizes, the batch,
    the context and the chip are given.

    Attributes:
        model: the model.
        hardware: the chip (None: symbols).
        dtype: the weights' dtype; ``kv_dtype`` the cache's.
        batch: ``B`` sequences decoding together (one token each per step).
        context: ``T`` tokens of context per sequence.
        mesh: the slice; every axis holds a share of the model (tensor parallelism over all chips).
        chips: ``N``.
        weight_bytes: all the weights.
        kv_bytes_per_token, kv_bytes_per_sequence: the cache of one token and of one sequence.
        kv_split: how many ways the cache is split: ``min(N, K)`` over the heads, ``N`` otherwise.
        memory_per_chip: the weights' share plus the cache's.
        max_batch: the most sequences whose caches fit beside the weights (with ``M_hbm`` where the
            chip gives no HBM size; None only while the chip count is a symbol).
        memory_time, math_time, comm_time: ``T_hbm``, ``T_math``, ``T_comms`` of one decode step.
        prefill_time: processing the whole context of the batch, compute-bound.
        notes: caveats (KV heads repeated, weights that do not fit, ...).
        kv_shard: how the cache is split (a key of :data:`KV_SHARDINGS`).
        decode: how the step's terms combine (a key of :data:`DECODES`).
        kv_time: the cache's part of ``T_hbm``; the weights' part is ``memory_time - kv_time``.
        network: on a GPU slice, the block's collectives costed through the network's levels.
    """

    model: Model
    hardware: Hardware | None
    dtype: str
    kv_dtype: str
    batch: sympy.Expr
    context: sympy.Expr
    mesh: Mesh
    chips: sympy.Expr
    weight_bytes: sympy.Expr
    kv_bytes_per_token: sympy.Expr
    kv_bytes_per_sequence: sympy.Expr
    kv_split: sympy.Expr
    memory_per_chip: sympy.Expr
    max_batch: sympy.Expr | None
    memory_time: sympy.Expr
    math_time: sympy.Expr
    comm_time: sympy.Expr
    prefill_time: sympy.Expr
    program: Program
    values: Mapping[sympy.Symbol, sympy.Expr]
    notes: tuple[str, ...] = ()
    kv_shard: str = "heads"
    decode: str = "overlap"
    kv_time: sympy.Expr = sympy.S.Zero
    network: Network | None = None

    @property
    def kv_bytes(self) -> sympy.Expr:
        """The whole batch's cache."""
        return self.batch * self.kv_bytes_per_sequence

    @property
    def kv_bytes_per_chip(self) -> sympy.Expr:
        """The cache each chip holds (the fullest chip's)."""
        return self.memory_per_chip - self.weight_bytes / self.chips

    @property
    def weights_time(self) -> sympy.Expr:
        """The weights' part of ``T_hbm``: each chip reads its share once per step."""
        return self.memory_time - self.kv_time

    @property
    def fits(self) -> bool | None:
        """Whether each chip's share fits in its HBM (None while symbolic)."""
        if self.hardware is None or self.hardware.hbm_bytes is None or not as_expr(self.memory_per_chip).is_number:
            return None
        return bool(self.memory_per_chip <= self.hardware.hbm_bytes)

    def _terms(self) -> dict[str, sympy.Expr]:
        """The terms the step takes the largest of: all of ``T_hbm`` under ``overlap``; the weights' read
        under ``book``, whose cache read is added outside the largest."""
        hbm = self.memory_time if self.decode == "overlap" else self.weights_time
        return {"memory": as_expr(hbm), "compute": as_expr(self.math_time), "communication": as_expr(self.comm_time)}

    @property
    def step_time(self) -> sympy.Expr:
        """One decode step: the largest of ``T_hbm``, ``T_math`` and ``T_comms`` (they overlap), or under the
        book's combination ``T_kv + max(T_weights, T_math, T_comms)``."""
        terms = list(self._terms().values())
        largest = max(terms) if all(t.is_number for t in terms) else sympy.Max(*terms)
        return largest if self.decode == "overlap" else self.kv_time + largest

    @property
    def regime(self) -> str | None:
        """``'memory'``, ``'compute'`` or ``'communication'``: which term sets the step (None if symbolic);
        under the book's combination, the largest of the terms the cache's read is added to."""
        terms = self._terms()
        if not all(t.is_number for t in terms.values()):
            return None
        return max(terms, key=lambda k: (terms[k], k == "memory"))

    @property
    def throughput(self) -> sympy.Expr:
        """Tokens generated per second by the slice: ``B / step``."""
        return self.batch / self.step_time

    @property
    def compute_bound_batch(self) -> sympy.Expr | None:
        """The batch above which ``T_math ≥ T_hbm`` (None if the cache grows faster than the work;
        symbolic, it assumes the work grows faster); under the book's combination, ``T_math ≥ T_weights``."""
        return _crossover_batch(self)

    @property
    def decode_kernels(self) -> tuple[StepKernel, ...]:
        """The kernels one chip runs in a decode step, in order (:func:`~.step_kernels.decode_kernels`): its
        ``1/N`` share of every weight and its share of the cache, the work the bound counts."""
        return decode_kernels(self.model, batch=self.batch, context=self.context, kv_bytes=self.kv_bytes_per_chip,
                              chips=self.chips, dtype=self.dtype)  # fmt: skip

    @property
    def prefill_kernels(self) -> tuple[StepKernel, ...]:
        """The kernels one chip runs to prefill the batch's context (the attention left out, as the bound's
        prefill leaves it out)."""
        return prefill_kernels(self.model, tokens=self.batch * self.context, chips=self.chips, dtype=self.dtype)

    @property
    def expected_step_time(self) -> sympy.Expr | None:
        """The decode step this chip is expected to take, from the rates it attained in measurements
        (``symshard calibrate --chip``); None on a chip without them for the weights' dtype, or while the
        step is symbolic. :attr:`step_time` stays the data sheet's bound.

        The chip's kernels (:attr:`decode_kernels`) run one after another, each priced by
        :func:`~symshard.costs.kernels.expected_time`; the communication is the bound's ``T_comms``, combined
        as :attr:`decode` says: ``overlap`` takes the larger of the kernels' sum and ``T_comms``; ``book``
        adds the attention kernels (the cache's read) to the larger of the other kernels' sum and
        ``T_comms``, as the book's ``T_kv + max(T_weights, T_math, T_comms)``.

        Examples:
            >>> serve("llama3-8b", batch=1, context=4096, hardware="h200").expected_step_time is None
            True
        """
        rates = attained_rates(self.hardware, self.dtype)
        if rates is None:
            return None
        kernels = self.decode_kernels
        comm = as_expr(self.comm_time)
        if self.decode == "overlap":
            local, first = expected_sum(kernels, rates), sympy.Integer(0)
        else:
            local = expected_sum([k for k in kernels if k.name != "attention"], rates)
            first = expected_sum([k for k in kernels if k.name == "attention"], rates)
        if not (local.is_number and first.is_number and comm.is_number):
            return None
        return first + max(local, comm)

    @property
    def expected_throughput(self) -> sympy.Expr | None:
        """Tokens per second at the expected step (None without it)."""
        step = self.expected_step_time
        return None if step is None else self.batch / step

    @property
    def expected_prefill_time(self) -> sympy.Expr | None:
        """The prefill this chip is expected to take: :attr:`prefill_kernels` one after another at the
        attained rates (no communication, as the bound's :attr:`prefill_time` counts none). None without
        attained rates for the weights' dtype, or while symbolic."""
        rates = attained_rates(self.hardware, self.dtype)
        if rates is None:
            return None
        total = expected_sum(self.prefill_kernels, rates)
        return total if total.is_number else None

    def decode_collectives(self) -> tuple[CollectiveCost, ...]:
        """Each distinct collective of the block on this slice, costed by the engine (wiring, hops and
        latency): on decode activations most are latency-bound.

        Raises:
            PlanError: without a chip or a numeric batch.
        """
        if self.hardware is None or not self.batch.is_number:
            raise PlanError(
                say("costing the decode collectives needs a chip and a batch"), hint=say("pass hardware= and batch=")
            )
        return tuple(_engine_costs(self.program, self.mesh, self.batch, self.model, self.hardware, full=True).values())

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        expected = self.expected_step_time
        shown = {} if expected is None else {"expected": format_seconds_expr(expected)}
        return summary("Serving", self.model.name, {"batch": self.batch, "context": self.context, "mesh": str(self.mesh),
                       "dtype": self.dtype}, {"fits": self.fits, "max_batch": self.max_batch, "regime": self.regime,
                       "step": format_seconds_expr(self.step_time), **shown},
                       hardware=self.hardware and self.hardware.name)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _engine_costs(prog: Program, mesh: Mesh, batch: sympy.Expr, mdl: Model, hw: Hardware, *, full: bool = False):
    """Each collective of the block costed by the engine on ``mesh`` (bf16 activations): its
    latency-aware time, or the whole :class:`CollectiveCost` with ``full``."""
    from ..costs.collectives import CollectiveExpr

    shape = {"B": int(batch), "D": int(mdl.d_model)}
    out: dict[int, object] = {}
    for st in prog.collectives():
        op = st.op
        if isinstance(op, CollectiveExpr):
            cost = op.cost(mesh, shape, hardware=hw, dtype="bf16")
            out[st.index] = cost if full else cost.time
    return out


def _crossover_batch(s: Serving) -> sympy.Expr | None:
    per_seq = s.kv_bytes_per_sequence / s.kv_split
    hbm = _hbm_bandwidth(s.hardware)
    peak = _peak(s.hardware, s.dtype)
    # T_hbm = fixed + slope·b and T_math = work·b: they meet once when the work grows faster (the book's
    # combination compares the matmuls with the weights' read only)
    fixed = s.weight_bytes / s.chips / hbm
    slope = per_seq / hbm if s.decode == "overlap" else 0
    work = s.model.flops_per_token(training=False, context=s.context) / (s.chips * peak)
    gap = sympy.factor_terms(work - slope)
    if gap.is_number and gap <= 0:
        return None
    return fixed / gap


def _hbm_bandwidth(hw: Hardware | None) -> sympy.Expr:
    """The chip's HBM bandwidth, or the symbol ``W_hbm`` where it gives none."""
    return W_hbm if hw is None or hw.hbm_bandwidth is None else hw.hbm_bandwidth


def _peak(hw: Hardware | None, dtype: str) -> sympy.Expr:
    """The chip's peak FLOP/s for ``dtype``, or the symbol ``C`` where it gives none."""
    return C if hw is None else hw.constants(dtype).get(C, C)


def _ceil_div(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """``ceil(a / b)`` for numbers, ``a / b`` while symbolic."""
    return sympy.ceiling(a / b) if (a.is_number and b.is_number) else a / b


def _kv_layout(kv_shard: str, b: sympy.Expr, t: sympy.Expr, n: sympy.Expr, mdl: Model, per_token: sympy.Expr):
    """How many ways the cache is split, the cache on the fullest chip, and the cache one more sequence
    adds to each chip that holds it (for the largest batch), under ``kv_shard``."""
    per_seq = per_token * t
    if kv_shard == "heads":
        split = sympy.Min(n, mdl.kv_heads) if not (n.is_number and mdl.kv_heads.is_number) else min(n, mdl.kv_heads)
        return split, b * per_seq / split, per_seq / split
    if kv_shard == "batch":  # whole sequences per chip
        return n, _ceil_div(b, n) * per_seq, per_seq
    return n, b * _ceil_div(t, n) * per_token, _ceil_div(t, n) * per_token  # T/N tokens of each sequence


def serve(
    m: Model | str,
    *,
    batch: object = None,
    context: object = None,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    chips: object = None,
    hardware: Hardware | str | None = None,
    dtype: str = "bf16",
    kv_dtype: str | None = None,
    kv_shard: str = "heads",
    decode: str = "overlap",
) -> Serving:
    """Serve ``m`` from a slice: memory, the largest batch, the decode step and its regime.

    The slice is ``mesh`` (its wiring follows the chip's rules) or ``chips`` chips on one axis; one chip
    when neither is given. The model is split over all of them (tensor parallelism over every axis).
    Anything else left out is a symbol: ``B``, ``T`` and the chip's constants.

    Args:
        m: a model or a preset name.
        batch: sequences decoding together.
        context: tokens of context per sequence.
        mesh: the slice (``"X=4,Y=2"``), or ``chips`` for one axis.
        hardware: the chip.
        dtype: the weights' dtype (``int8`` uses the chip's 8-bit peak).
        kv_dtype: the cache's dtype (default: the weights').
        kv_shard: how the KV cache is split over the chips: ``heads`` (the default), ``batch`` or
            ``sequence`` (:data:`KV_SHARDINGS`).
        decode: how a decode step's terms combine: ``overlap`` (the default, the largest of the three) or
            ``book`` (:data:`DECODES`).

    Raises:
        ModelError: a batch, context or chip count that is not a positive whole number; an unknown
            ``kv_shard`` or ``decode``.
        UnknownPresetError, UnknownHardwareError, MeshError: bad names or meshes.

    Examples:
        >>> s = serve("llama3-8b", context=4096, hardware="h100")  # one chip
        >>> s.chips, s.max_batch
        (1, 119)
        >>> serve("llama3-8b", batch=8, context=4096, hardware="h100", decode="book").regime
        'memory'
    """
    mdl = model(m)
    hw = None if hardware is None else lookup_hardware(hardware)
    wdt = canonical_dtype(dtype)
    kdt = canonical_dtype(kv_dtype or dtype)
    shard = _choice(kv_shard, KV_SHARDINGS, say("KV cache sharding"))
    combine = _choice(decode, DECODES, say("decode step"))
    b = dim("B") if batch is None else positive_number(batch, "batch", integer=True)
    t = dim("T") if context is None else positive_number(context, "context", integer=True)
    if mesh is not None and chips is not None:
        raise ModelError(
            say("give the slice as a mesh or as a chip count, not both"), hint=say("drop --chips or --mesh")
        )
    if mesh is None:
        count = 1 if chips is None else int(positive_number(chips, "chips", integer=True))
        mesh_obj = Mesh({"Y": count}, hardware=hw)
    else:
        mesh_obj = mesh if isinstance(mesh, Mesh) else Mesh(mesh, hardware=hw)
    n = mesh_obj.devices
    axes = "".join(mesh_obj.names) if all(len(a) == 1 for a in mesh_obj.names) else "Y"
    if axes == "Y" and len(mesh_obj.names) > 1:
        raise ModelError(say("serve() needs single-letter mesh axis names"), hint=say("name the axes X, Y, Z"))
    fabric = "ici" if hw is None or hw.ici_link_bandwidth is not None else "nvlink"
    prog = block_program(axes, gated=mdl.gated, fabric=fabric)
    values: dict[sympy.Symbol, sympy.Expr] = {**_block_sizes(mdl), dim("B"): b}
    for a in mesh_obj.axes:
        values[axis(a.name)] = a.size
        values[sympy.Symbol(f"M_{a.name}", positive=True, integer=True)] = sympy.Integer(1)
    peak = _peak(hw, wdt)
    hbm_bw = _hbm_bandwidth(hw)
    if hw is not None:
        values.update(hw.constants(wdt))
    weight_bytes = dtype_bytes(wdt) * mdl.params.total
    per_token = kv_cache_bytes(mdl, 1, dtype=kdt)
    per_seq = per_token * t
    split, kv_chip, per_more = _kv_layout(shard, b, t, n, mdl, per_token)
    notes: list[Message] = []
    if shard == "heads" and n.is_number and mdl.kv_heads.is_number and n > mdl.kv_heads:
        notes.append(
            say(
                "{chips} {chips:chip|chips} for {heads} KV {heads:head|heads}: each KV head's cache is kept on {copies} {copies:chip|chips}",
                chips=str(n),
                heads=str(mdl.kv_heads),
                copies=str(n / mdl.kv_heads),
            )
        )
    if shard != "heads" and n != 1:
        notes.append(say("the attention runs where the cache lives: the queries (or partial outputs) it moves "
                         "between chips are left out of the step"))  # fmt: skip
    per_chip = weight_bytes / n + kv_chip
    max_batch = None
    if n.is_number:
        hbm = hw.hbm_bytes if hw is not None and hw.hbm_bytes is not None else M_HBM
        room = hbm - weight_bytes / n
        if room.is_number and room <= 0:
            max_batch = sympy.Integer(0)
            notes.append(say("the weights alone do not fit in the chips' HBM"))
        elif shard == "batch":
            max_batch = n * sympy.floor(room / per_more)
        else:
            max_batch = sympy.floor(room / per_more)
    kv_time = kv_chip / hbm_bw
    memory_time = per_chip / hbm_bw
    math_time = b * mdl.flops_per_token(training=False, context=t) / (n * peak)
    comm = as_expr(prog.comm_time()).xreplace(values) * mdl.layers
    net = None
    if n == 1:
        comm = sympy.Integer(0)
    elif hw is not None and b.is_number and n.is_number:
        # on a real slice the engine costs each collective with its wiring, its network's levels and its
        # latency: decode activations are small, so the latency term often sets the time
        engine = mdl.layers * sympy.Add(*_engine_costs(prog, mesh_obj, b, mdl, hw).values())
        if engine.is_number:
            comm = engine
        if fabric == "nvlink":
            try:
                net = through_network(prog, hw, mesh_obj)
            except HardwareError:  # a level the chip has no figure for: the TP limits keep W_nvlink
                net = None
    prefill = b * t * mdl.flops_per_token(training=False) / (n * peak)
    return Serving(mdl, hw, wdt, kdt, b, t, mesh_obj, n, weight_bytes, per_token, per_seq, split, per_chip,
                   max_batch, memory_time, math_time, comm, prefill, prog, values, tuple(notes), shard, combine,
                   kv_time, net)  # fmt: skip

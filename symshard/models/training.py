"""Training a whole model: memory by kind, the fewest chips that hold it, and how long it takes.

The book's training chapters answer three questions about a model before any sharding is
chosen, and this module answers them exactly, symbolically or on a preset:

* **Memory.** Weights in their dtype (bf16, 2 bytes), the optimizer's state (Adam's two fp32
  moments, 8 bytes per parameter: the chapter's ``2 + 4 + 4 = 10`` bytes with the weights),
  gradients when they are kept (the chapter leaves them out: they are consumed as they are
  produced), and the activations kept for the backward pass under a named checkpointing
  policy. The fewest chips that hold it is the total over a chip's HBM, rounded up; on a slice
  of ``n`` chips each holds ``total / n`` when everything is sharded.
* **Time.** ``6·P_active`` FLOPs per token (:meth:`~symshard.models.transformer.Model.flops_per_token`),
  so training on ``tokens`` tokens takes ``6·P·tokens / (N·C·MFU)`` seconds on ``N`` chips that
  reach a fraction ``MFU`` of their peak ``C``.
* **The batch per chip.** ``B / N`` as a real number: when ``N`` does not divide ``B`` XLA pads
  the remainder, so every chip computes ``ceil(B / N)`` tokens and the note says how many are
  padding. Nothing is refused.

Examples:
    >>> from symshard.models.transformer import model
    >>> run = train(model("llama3-70b"), tokens="15e12", chips=8960, hardware="v5p", mfu=0.4)
    >>> round(float(run.days), 1)
    44.7
    >>> mem = training_memory(model("llama3-70b"))
    >>> mem.bytes_per_param, mem.chips_to_fit("v5p")  # weights and Adam, no activations
    (10, 8)
    >>> print(batch_per_chip(1000, 3).note)
    the 3 chips do not divide the batch of 1,000 tokens: XLA pads it to 1,002, so each chip computes 334 tokens (2 of them padding, 0.2% of the work)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..algebra.symbols import C, dim
from ..algebra.units import format_number
from ..errors import HardwareError, ModelError, did_you_mean
from ..machines.chips import Hardware, attained_rates
from ..machines.presets import hardware as lookup_hardware
from ..messages import say
from .step_kernels import StepKernel, expected_sum, training_kernels
from .transformer import Model, model, positive_number

__all__ = [
    "MFU",
    "M_HBM",
    "OPTIMIZERS",
    "POLICIES",
    "SECONDS_PER_DAY",
    "TOKENS",
    "BatchPerChip",
    "P",
    "Training",
    "TrainingMemory",
    "activation_elements",
    "batch_per_chip",
    "chip_count",
    "train",
    "training_memory",
]

M_HBM = sympy.Symbol("M_hbm", positive=True)
"""HBM capacity of one chip, bytes (the preset's ``hbm_bytes``)."""

MFU = sympy.Symbol("MFU", positive=True)
"""Model FLOPs utilisation: the fraction of the chips' peak FLOP/s a training run reaches."""

TOKENS = sympy.Symbol("tokens", positive=True)
"""Tokens a whole training run processes."""

P = sympy.Symbol("P", positive=True, integer=True)
"""A model's (active) parameters, as the chapter's formulas write them."""

SECONDS_PER_DAY = 86400

OPTIMIZERS: dict[str, tuple[int, str]] = {
    "adam": (8, "Adam's two moments in fp32 (4 + 4 bytes per parameter), the chapter's count"),
    "adam-master": (
        12,
        "an fp32 master copy and Adam's two fp32 moments (4 + 4 + 4), as symshard.models.schemes counts",
    ),
    "sgd-momentum": (4, "one fp32 momentum per parameter"),
    "sgd": (0, "no optimizer state"),
}
"""Optimizer state in bytes per parameter, with what it holds."""

POLICIES: dict[str, str] = {
    "mlp": "the MLP's input and its two hidden activations per layer: 2·L·B·(D + 2·F) bytes in bf16",
    "layer": "one checkpoint per layer, its input (everything else recomputed): 2·L·B·D bytes in bf16",
    "none": "no activations counted",
}
"""The named activation-checkpointing policies; an integer ``c`` keeps ``c`` arrays of size ``D`` per layer."""


def _hardware(hw: Hardware | str | None) -> Hardware | None:
    return None if hw is None else lookup_hardware(hw)


def activation_elements(m: Model, policy: str | int = "mlp") -> sympy.Expr:
    """Elements kept per token and per layer for the backward pass under ``policy``.

    ``'mlp'``: ``D + 2·F``; ``'layer'``: ``D``; an integer ``c``: ``c·D`` (the chapter's ``c``
    checkpoints of size ``D``); ``'none'``: 0.

    Raises:
        ModelError: an unknown policy or a count that is not a positive whole number.
    """
    if isinstance(policy, str) and policy.strip().isdigit():
        policy = int(policy.strip())
    if isinstance(policy, int) and not isinstance(policy, bool):
        if policy < 1:
            raise ModelError(
                say("a checkpoint count must be at least 1, got {value}", value=policy),
                hint=say("e.g. 4 (or 'none')"),
            )
        return policy * m.d_model
    key = str(policy).strip().lower()
    if key == "mlp":
        return m.d_model + 2 * m.d_ff
    if key == "layer":
        return m.d_model
    if key == "none":
        return sympy.Integer(0)
    raise ModelError(
        say("unknown checkpointing policy '{name}'", name=policy),
        hint=say("{hint}, or a number of checkpoints of size D per layer", hint=did_you_mean(key, sorted(POLICIES))),
    )


def _optimizer(name: str) -> str:
    key = str(name).strip().lower().replace("_", "-")
    if key not in OPTIMIZERS:
        raise ModelError(say("unknown optimizer '{name}'", name=name), hint=did_you_mean(key, sorted(OPTIMIZERS)))
    return key


def chip_count(value: object, what: str = "chips") -> sympy.Expr:
    """A number of chips: a positive whole number, or a symbol (``N`` by default elsewhere).

    Raises:
        ModelError: not a positive whole number.
    """
    return positive_number(value, what, integer=True)


@dataclass(frozen=True, slots=True)
class TrainingMemory:
    """What training a model keeps in HBM, by kind, over all chips (SymPy expressions, bytes).

    Attributes:
        model: the model.
        batch: ``B``, tokens per step (the activations scale with it).
        policy: the checkpointing policy (``'mlp'``, ``'layer'``, ``'none'`` or a count).
        optimizer: a key of :data:`OPTIMIZERS`.
        weights: the weights in their dtype.
        optimizer_state: the optimizer's state.
        gradients: the gradients in the weights' dtype when kept, else 0.
        activations: the checkpoints kept for the backward pass.
    """

    model: Model
    batch: sympy.Expr
    policy: str
    optimizer: str
    weights: sympy.Expr
    optimizer_state: sympy.Expr
    gradients: sympy.Expr
    activations: sympy.Expr

    @property
    def total(self) -> sympy.Expr:
        """Everything, in bytes."""
        return self.weights + self.optimizer_state + self.gradients + self.activations

    @property
    def parameter_state(self) -> sympy.Expr:
        """Weights, optimizer state and gradients: what does not depend on the batch."""
        return self.weights + self.optimizer_state + self.gradients

    @property
    def bytes_per_param(self) -> sympy.Expr:
        """Bytes of parameter state per parameter (10 for bf16 weights and Adam)."""
        return sympy.cancel(self.parameter_state / self.model.params.total)

    def kinds(self) -> dict[str, sympy.Expr]:
        """The memory by kind, then the total."""
        return {
            "weights": self.weights,
            "optimizer": self.optimizer_state,
            "gradients": self.gradients,
            "activations": self.activations,
            "total": self.total,
        }

    def chips_to_fit(self, hardware: Hardware | str | None = None, *, activations: bool | None = None) -> sympy.Expr:
        """The fewest chips whose HBM holds it all: ``ceil(total / M_hbm)``.

        Args:
            hardware: a chip (its ``hbm_bytes``); None keeps the symbol ``M_hbm``.
            activations: count the activations (default: when the batch is a number).

        Raises:
            HardwareError: the chip has no HBM capacity figure.
        """
        use_acts = self.batch.is_number if activations is None else activations
        need = self.total if use_acts else self.parameter_state
        return sympy.ceiling(need / _hbm(hardware))

    def per_chip(self, chips: object) -> sympy.Expr:
        """Bytes each of ``chips`` chips holds when everything is sharded over them: ``total / n``."""
        return self.total / chip_count(chips)

    def fits(self, chips: object, hardware: Hardware | str) -> bool | None:
        """Whether the share of each of ``chips`` chips fits in its HBM (None while symbolic)."""
        share = as_expr(self.per_chip(chips))
        hbm = _hbm(hardware)
        return bool(share <= hbm) if share.is_number else None

    def scheme_per_chip(self, scheme: str, chips: object = None, *, least: bool = False) -> sympy.Expr | None:
        """Bytes each chip holds under a parallelism scheme on ``chips`` chips (the symbol ``N`` when None).

        Pure data parallelism (``dp``) keeps the whole parameter state on every chip and splits only the
        activations; ``fsdp`` and ``fsdp+tp`` shard everything. With ``least``, a batch or a chip count left
        as a symbol counts no activations, so the share is the least any batch and slice need. None for a scheme whose share
        depends on a split not known here (``tp``'s ``|Y|``, a pipeline's stages).

        Examples:
            >>> from symshard.models.transformer import model
            >>> mem = training_memory(model("llama3-70b"))
            >>> mem.scheme_per_chip("dp", least=True) == mem.parameter_state, mem.scheme_per_chip("tp")
            (True, None)
        """
        from .schemes import N

        n = N if chips is None else chip_count(chips)
        activations = self.activations
        if least and not (self.batch.is_number and n.is_number):
            activations = sympy.Integer(0)
        if scheme == "dp":
            return self.parameter_state + activations / n
        if scheme in ("fsdp", "fsdp+tp"):
            return (self.parameter_state + activations) / n
        return None

    def largest_data_parallel_model(self, hardware: Hardware | str | None = None) -> sympy.Expr:
        """Parameters one chip can hold with a full copy of the parameter state on every chip
        (pure data parallelism): HBM over the bytes per parameter."""
        return _hbm(hardware) / self.bytes_per_param

    def _repr_latex_(self) -> str:
        from ..algebra.symbols import latex

        return "$M_{\\text{train}} = " + latex(self.total) + "$"

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("TrainingMemory", self.model.name, {"total": self.total, "bytes_per_param": self.bytes_per_param},
                       batch=self.batch, optimizer=self.optimizer, policy=self.policy)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _hbm(hardware: Hardware | str | None) -> sympy.Expr:
    if hardware is None:
        return M_HBM
    hw = lookup_hardware(hardware)
    if hw.hbm_bytes is None:
        raise HardwareError(
            say("{chip} has no HBM capacity figure", chip=hw.label),
            hint=say("set one with {option}", option="--hw-set M_hbm=16e9"),
        )
    return hw.hbm_bytes


def training_memory(
    m: Model | str,
    batch: object = None,
    *,
    policy: str | int = "mlp",
    optimizer: str = "adam",
    gradients: bool = False,
    dtype: str = "bf16",
) -> TrainingMemory:
    """Training memory by kind for ``m`` at a batch of ``batch`` tokens (symbol ``B`` by default).

    Activations are bf16 (2 bytes) under ``policy``; the optimizer state is counted for every
    stored parameter (all experts of an MoE model).

    Raises:
        ModelError: an unknown policy or optimizer, a batch that is not a positive whole number.
        UnknownPresetError: an unknown model name.

    Examples:
        >>> from symshard.models.transformer import Model
        >>> training_memory(Model.symbolic()).activations
        2*B*L*(D + 2*F)
    """
    mdl = model(m)
    b = dim("B") if batch is None else positive_number(batch, "batch", integer=True)
    opt = _optimizer(optimizer)
    params = mdl.params.total
    weight_bytes = dtype_bytes(canonical_dtype(dtype))
    acts = 2 * mdl.layers * b * activation_elements(mdl, policy)
    grads = weight_bytes * params if gradients else sympy.Integer(0)
    return TrainingMemory(mdl, b, str(policy), opt, weight_bytes * params, OPTIMIZERS[opt][0] * params, grads, acts)


@dataclass(frozen=True, slots=True)
class BatchPerChip:
    """``B / N`` tokens per chip as a real number, and what XLA does when ``N`` does not divide ``B``.

    Attributes:
        batch: ``B``.
        chips: ``N``.
        per_chip: ``B / N`` (exact; a fraction when ``N`` does not divide ``B``).
        padded: ``ceil(B / N)``, the tokens each chip computes after XLA pads the batch.
        padding: tokens of padding per step, ``N·ceil(B/N) − B``.
    """

    batch: sympy.Expr
    chips: sympy.Expr
    per_chip: sympy.Expr
    padded: sympy.Expr
    padding: sympy.Expr

    @property
    def even(self) -> bool | None:
        """Whether ``N`` divides ``B`` (None while symbolic)."""
        return bool(self.padding == 0) if self.padding.is_number else None

    @property
    def note(self) -> str | None:
        """What XLA does with an uneven batch (None when it divides)."""
        if self.even is not False:
            return None
        total = self.batch + self.padding
        share = float(self.padding / total) * 100
        return say(
            "the {chips} {chips:chip|chips} do not divide the batch of {batch} {batch:token|tokens}: XLA pads it to {padded}, so each chip "
            "computes {per_chip} {per_chip:token|tokens} ({padding} of them padding, {share}% of the work)",
            chips=format_number(self.chips),
            batch=_count(self.batch),
            padded=_count(total),
            per_chip=_count(self.padded),
            padding=_count(self.padding),
            share=f"{share:.2g}",
        )


def _count(x: sympy.Expr) -> str:
    return f"{int(x):,}" if as_expr(x).is_Integer else format_number(x)


def batch_per_chip(batch: object, chips: object) -> BatchPerChip:
    """``B / N`` as a real number, with the padding XLA adds when ``N`` does not divide ``B``.

    Raises:
        ModelError: a batch or chip count that is not a positive whole number.

    Examples:
        >>> b = batch_per_chip(4_000_000, 8960)
        >>> b.per_chip, b.padded, b.padding
        (3125/7, 447, 5120)
    """
    b = positive_number(batch, "batch", integer=True)
    n = chip_count(chips)
    per = b / n
    padded = sympy.ceiling(per)
    return BatchPerChip(b, n, per, padded, n * padded - b)


@dataclass(frozen=True, slots=True)
class Training:
    """A training run: FLOPs, time at an MFU, memory, and the batch per chip.

    Attributes:
        model: the model.
        tokens: tokens of the whole run.
        chips: ``N``.
        mfu: the fraction of peak FLOP/s reached.
        hardware: the chip (None: the symbol ``C``).
        dtype: the dtype whose peak ``C`` is used.
        batch: tokens per step (None if not given).
        memory: the memory by kind at that batch.
        flops_per_token: ``6·P_active`` (plus attention with a context).
        flops: FLOPs of the whole run.
        seconds: ``flops / (N · C · MFU)``.
        step_seconds: one step of ``batch`` tokens (None without a batch).
        per_chip: the batch per chip (None without a batch).
        context: the sequence length whose attention FLOPs are counted (None: left out).
    """

    model: Model
    tokens: sympy.Expr
    chips: sympy.Expr
    mfu: sympy.Expr
    hardware: Hardware | None
    dtype: str
    batch: sympy.Expr | None
    memory: TrainingMemory
    flops_per_token: sympy.Expr
    flops: sympy.Expr
    seconds: sympy.Expr
    step_seconds: sympy.Expr | None
    per_chip: BatchPerChip | None
    context: sympy.Expr | None = None

    @property
    def days(self) -> sympy.Expr:
        """The run's length in days."""
        return self.seconds / SECONDS_PER_DAY

    @property
    def steps(self) -> sympy.Expr | None:
        """Steps of ``batch`` tokens in the run (None without a batch)."""
        return None if self.batch is None else self.tokens / self.batch

    @property
    def step_kernels(self) -> tuple[StepKernel, ...] | None:
        """The kernels one chip runs in a step (:func:`~.step_kernels.training_kernels`): its ``batch / N``
        tokens through every layer's matmuls, forward and backward; None without a batch."""
        if self.batch is None:
            return None
        return training_kernels(self.model, tokens=self.batch / self.chips, context=self.context, dtype=self.dtype)

    @property
    def expected_step_seconds(self) -> sympy.Expr | None:
        """The step this chip is expected to take, from the rates it attained in measurements (``symshard
        calibrate --chip``): :attr:`step_kernels` one after another, each priced by
        :func:`~symshard.costs.kernels.expected_time` (the attained FLOP/s and HBM bandwidth and a fixed cost
        per kernel, where :attr:`step_seconds` assumes an MFU). Communication is left out, as the MFU figure
        leaves it out. None on a chip without attained rates for the dtype, without a batch, or while symbolic.

        Examples:
            >>> train("llama3-8b", batch=4096, chips=8, hardware="h200").expected_step_seconds is None  # a preset
            True
        """
        rates = attained_rates(self.hardware, self.dtype)
        kernels = self.step_kernels
        if rates is None or kernels is None:
            return None
        total = expected_sum(kernels, rates)
        return total if total.is_number else None

    @property
    def formula(self) -> sympy.Expr:
        """The time as the chapter writes it: ``6·P·tokens / (N·C·MFU)`` (``P`` the active parameters;
        with a context, the attention term ``12·L·N·H·T`` joins ``6·P``)."""
        from .schemes import N

        per_token = 6 * P
        if self.context is not None:
            per_token = per_token + 3 * Model.symbolic().attention_flops_per_token()
        return per_token * TOKENS / (N * C * MFU)

    def _repr_latex_(self) -> str:
        from ..algebra.symbols import latex

        return "$T_{\\text{train}} = " + latex(self.formula) + "$"

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        expected = self.expected_step_seconds
        shown = {} if expected is None else {"expected_step": format_seconds_expr(expected)}
        return summary("Training", self.model.name, {"tokens": self.tokens, "chips": self.chips, "mfu": self.mfu},
                       {"flops": self.flops, "time": format_seconds_expr(self.seconds), **shown},
                       hardware=self.hardware and self.hardware.name)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def train(
    m: Model | str,
    *,
    tokens: object = None,
    chips: object = None,
    hardware: Hardware | str | None = None,
    mfu: object = None,
    batch: object = None,
    policy: str | int = "mlp",
    optimizer: str = "adam",
    gradients: bool = False,
    dtype: str = "bf16",
    context: object = None,
) -> Training:
    """How long training ``m`` takes and what it keeps in memory.

    Anything left out stays a symbol: ``tokens``, ``chips`` (``N``), ``mfu`` (``MFU``), the chip's
    ``C``, the batch ``B``. With ``context`` the attention FLOPs of a sequence of that length are
    added to the ``6·P`` per token.

    Raises:
        ModelError: an MFU above 1, a non-positive count, an unknown policy or optimizer.
        UnknownPresetError, UnknownHardwareError: unknown names.
    """
    from .schemes import N

    mdl = model(m)
    hw = _hardware(hardware)
    toks = TOKENS if tokens is None else positive_number(tokens, "tokens")
    n = N if chips is None else chip_count(chips)
    u = MFU if mfu is None else positive_number(mfu, "MFU")
    if u.is_number and u > 1:
        raise ModelError(
            say("MFU must be at most 1, got {value}", value=f"{float(u):g}"),
            hint=say("MFU is a fraction of peak, e.g. 0.4"),
        )
    canonical = canonical_dtype(dtype)
    # a chip without a FLOP/s figure keeps the symbol C: the answer stays a formula in it
    c: sympy.Expr = C if hw is None else hw.constants(canonical).get(C, C)
    b = None if batch is None else positive_number(batch, "batch", integer=True)
    ctx = None if context is None else positive_number(context, "context", integer=True)
    per_token = mdl.flops_per_token(context=ctx)
    flops = per_token * toks
    seconds = flops / (n * c * u)
    step = None if b is None else per_token * b / (n * c * u)
    memory = training_memory(mdl, b, policy=policy, optimizer=optimizer, gradients=gradients)
    per_chip = None if b is None or not n.is_number else batch_per_chip(b, n)
    return Training(mdl, toks, n, u, hw, canonical, b, memory, per_token, flops, seconds, step, per_chip, ctx)

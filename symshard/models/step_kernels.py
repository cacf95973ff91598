"""The kernels one chip runs in a model's step, so that a calibrated chip can say how long the step takes.

The data sheet's bound of a decode step (:mod:`.inference`) prices the whole step as one roofline:
every weight and the KV cache read once from HBM, every FLOP at the peak. A chip does not run one
kernel per step: it runs, layer after layer, the QKV projection, attention over the cache, the output
projection and the MLP's matmuls, then the unembedding, one after another. A calibrated chip
(``symshard calibrate --chip``) knows what one kernel attains (:class:`~symshard.machines.chips.AttainedRates`:
a fixed cost per kernel, rates below the peaks, compute and memory partly overlapping), so the step's
expected time is the sum of its kernels' expected times, each from
:func:`symshard.costs.kernels.expected_time` (the one place a kernel's expected time is computed).

The kernels count exactly the work the bound counts, so that the two figures compare:

* **bytes**: each weight matrix once (the chip's ``1/N`` share under tensor parallelism), the RMSNorm
  vectors with the matmul they feed, the router with the MLP's first matmul, the embedding table
  (untied) as its own kernel, the KV cache by the attention of each layer; activations are left out,
  as the bound leaves them out;
* **FLOPs**: ``2`` per active parameter and token, and the attention's ``4·N·H·T`` per token and layer.

Examples:
    >>> from symshard.models.transformer import model
    >>> m = model("llama3-8b")  # one sequence of 4,096 tokens: 512 MiB of bf16 cache
    >>> ks = decode_kernels(m, batch=1, context=4096, kv_bytes=2**29)
    >>> [(k.name, k.runs) for k in ks]  # doctest: +NORMALIZE_WHITESPACE
    [('embedding', 1), ('qkv', 32), ('attention', 32), ('output', 32), ('gate_up', 32), ('down', 32),
     ('unembedding', 1)]
    >>> flops, hbm = work(ks)  # the bound's count: 2·P_active + 4·L·N·H·T FLOPs, every weight and the cache
    >>> flops == m.flops_per_token(training=False, context=4096), hbm == 2 * m.params.total + 2**29
    (True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..machines.chips import AttainedRates
from .transformer import Model

__all__ = ["KERNELS", "StepKernel", "decode_kernels", "expected_sum", "prefill_kernels",
           "training_kernels", "work"]  # fmt: skip

KERNELS: dict[str, str] = {
    "embedding": "the embedding table (the bound counts all of it read and multiplied, untied only)",
    "qkv": "the query, key and value projections, with the attention's RMSNorm",
    "attention": "the attention over the KV cache: its read and its scores and weighted sum",
    "output": "the attention's output projection",
    "gate_up": "the MLP's gate and up projections (up alone ungated), with its RMSNorm and an MoE's router",
    "down": "the MLP's down projection",
    "unembedding": "the unembedding, with the final RMSNorm",
}
"""What each kernel of a step is, by name (the names the JSON gives)."""


@dataclass(frozen=True, slots=True)
class StepKernel:
    """One kernel of a model's step on one chip, and how many times the step runs it.

    Attributes:
        name: a key of :data:`KERNELS`.
        runs: how many times one step runs it (``L`` for a layer's kernel, 1 for the unembedding; three
            times that in training: the forward pass, the input's gradient and the weight's).
        flops: FLOPs of one run on this chip.
        hbm_bytes: bytes of HBM one run reads or writes, as the bound counts them.
    """

    name: str
    runs: sympy.Expr
    flops: sympy.Expr
    hbm_bytes: sympy.Expr

    def expected_time(self, rates: AttainedRates) -> sympy.Expr:
        """One run's expected time at ``rates`` (:func:`symshard.costs.kernels.expected_time`)."""
        from ..costs.kernels import expected_time

        return expected_time(self.flops, self.hbm_bytes, rates)


def _kernels(m: Model, *, tokens: object, chips: object, dtype: str, passes: int = 1,
             attention: tuple[sympy.Expr, sympy.Expr] | None = None) -> tuple[StepKernel, ...]:  # fmt: skip
    """The step's kernels: ``tokens`` tokens on a chip holding ``1/chips`` of every weight (in ``dtype``),
    each kernel run ``passes`` times per layer; ``attention``: the FLOPs and bytes of one run of the
    attention kernel, None to leave it out."""
    t, n, width = as_expr(tokens), as_expr(chips), dtype_bytes(canonical_dtype(dtype))
    d, f, heads, k, h = m.d_model, m.d_ff, m.heads, m.kv_heads, m.head_dim
    routed = d * m.experts if m.is_moe else sympy.Integer(0)
    up = m.mlp_matrices - 1  # the gate and up projections (the up projection alone ungated)
    per_layer = passes * m.layers

    def kernel(name: str, runs: object, stored: sympy.Expr, used: sympy.Expr) -> StepKernel:
        # ``stored`` parameters read once per run (all of an MoE's experts, as the bound reads them);
        # ``used`` parameters each token multiplies by (2 FLOPs each)
        return StepKernel(name, as_expr(runs), 2 * t * used / n, width * stored / n)

    qkv = d * (heads + 2 * k) * h + d  # the projections and the attention's RMSNorm before them
    gate_up = (m.experts * up * d * f + d + routed, m.experts_per_token * up * d * f + d + routed)
    out = [] if m.tied_embeddings else [kernel("embedding", passes, m.vocab * d, m.vocab * d)]
    out.append(kernel("qkv", per_layer, qkv, qkv))
    if attention is not None:
        out.append(StepKernel("attention", as_expr(per_layer), as_expr(attention[0]), as_expr(attention[1])))
    out.append(kernel("output", per_layer, heads * h * d, heads * h * d))
    out.append(kernel("gate_up", per_layer, *gate_up))
    out.append(kernel("down", per_layer, m.experts * d * f, m.experts_per_token * d * f))
    out.append(kernel("unembedding", passes, m.vocab * d + d, m.vocab * d + d))
    return tuple(out)


def decode_kernels(m: Model, *, batch: object, context: object, kv_bytes: object, chips: object = 1,
                   dtype: str = "bf16") -> tuple[StepKernel, ...]:  # fmt: skip
    """The kernels of one decode step on one chip: ``batch`` sequences, one token each, attending to
    ``context`` tokens; the chip holds ``1/chips`` of the weights (tensor parallelism over the slice) and
    reads ``kv_bytes`` of cache over all layers (its share, as the bound counts it).

    The attention kernel of a layer reads that layer's cache and does ``4·N·H·T`` FLOPs per sequence,
    divided over the chips as the bound divides them.

    Examples:
        >>> from symshard.models.transformer import model
        >>> ks = decode_kernels(model("llama3-8b"), batch=1, context=4096, kv_bytes=2**29)
        >>> next(k for k in ks if k.name == "attention")
        StepKernel(name='attention', runs=32, flops=67108864, hbm_bytes=16777216)
    """
    n = as_expr(chips)
    per_run = as_expr(batch) * m.attention_flops_per_token(context) / m.layers / n
    return _kernels(m, tokens=batch, chips=n, dtype=dtype, attention=(per_run, as_expr(kv_bytes) / m.layers))


def prefill_kernels(m: Model, *, tokens: object, chips: object = 1, dtype: str = "bf16") -> tuple[StepKernel, ...]:
    """The kernels of a prefill on one chip: ``tokens`` tokens (the batch times its context) through its
    ``1/chips`` share of the weights. The attention is left out, as the bound's prefill leaves it out.

    Examples:
        >>> from symshard.models.transformer import model
        >>> flops, _ = work(prefill_kernels(model("llama3-8b"), tokens=4096))
        >>> flops == 4096 * model("llama3-8b").flops_per_token(training=False)
        True
    """
    return _kernels(m, tokens=tokens, chips=chips, dtype=dtype)


def training_kernels(
    m: Model, *, tokens: object, context: object = None, dtype: str = "bf16"
) -> tuple[StepKernel, ...]:
    """The kernels of one training step on one chip computing ``tokens`` tokens (its share of the batch)
    against whole weights: each kernel three times a layer (the forward pass, the gradient of its input,
    the gradient of its weight), each run as many FLOPs as the forward's and its weight's bytes; with
    ``context``, the attention's ``3·4·N·H·T`` FLOPs per token (no bytes: the step's count has none).

    Examples:
        >>> from symshard.models.transformer import model
        >>> flops, _ = work(training_kernels(model("llama3-8b"), tokens=1024, context=4096))
        >>> flops == 1024 * model("llama3-8b").flops_per_token(context=4096)
        True
    """
    attention = None
    if context is not None:
        attention = (as_expr(tokens) * m.attention_flops_per_token(context) / m.layers, sympy.Integer(0))
    return _kernels(m, tokens=tokens, chips=1, dtype=dtype, passes=3, attention=attention)


def work(kernels: Sequence[StepKernel]) -> tuple[sympy.Expr, sympy.Expr]:
    """The FLOPs and the HBM bytes of all the kernels, every run counted."""
    return (sympy.Add(*[k.runs * k.flops for k in kernels]), sympy.Add(*[k.runs * k.hbm_bytes for k in kernels]))


def expected_sum(kernels: Sequence[StepKernel], rates: AttainedRates) -> sympy.Expr:
    """The kernels run one after another: the sum of each run's expected time
    (:func:`symshard.costs.kernels.expected_time`).

    Examples:
        >>> from symshard.machines.chips import AttainedRates
        >>> rates = AttainedRates("bf16", "5e14", "4e12", "1e-5", None)
        >>> expected_sum([StepKernel("down", sympy.Integer(2), sympy.Integer(10**9), sympy.Integer(10**6))], rates)
        3/125000
    """
    return sympy.Add(*[k.runs * k.expected_time(rates) for k in kernels])

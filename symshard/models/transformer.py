"""Whole Transformers: their sizes, named presets with sources, parameter counts and FLOPs per token.

The sharding chapter costs one matmul at a time; the book's later chapters ask about whole
models: how many parameters, how many FLOPs per token, how much memory. A :class:`Model`
records the sizes a decoder-only Transformer is built from, each a SymPy value, so one object
answers symbolically (``Model.symbolic()``) and with exact numbers (a preset such as
``model("llama3-70b")``). The counts follow the book:

* a gated MLP has ``3·D·F`` parameters per layer (two input matrices and one output; an
  ungated block, the chapter's, ``2·D·F``), times ``E`` experts in total and ``k`` per token;
* attention has ``2·D·N·H`` (query and output) plus ``2·D·K·H`` (key and value) per layer;
* the embedding and the unembedding have ``V·D`` each (once when they are tied);
* each layer has two RMSNorm vectors and the model one more, ``(2·L + 1)·D``, which the book
  drops as negligible; they are counted here (as ``norms``) so that a preset's total is the
  published count; an MoE layer's router has ``D·E``.

The query heads are the symbol ``N_q`` (the book's ``N``), because ``N`` is the number of
chips in the parallelism formulas of :mod:`symshard.models.schemes`.

Examples:
    >>> m = model("llama3-70b")
    >>> m.params.total, m.params.mlp
    (70553706496, 56371445760)
    >>> Model.symbolic().params.attention
    L*(2*D*H*K + 2*D*H*N_q)
    >>> round(float(m.flops_per_token()) / 1e9)  # 6·P per token for training
    423
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.symbols import dim, latex
from ..errors import ModelError, UnknownPresetError, did_you_mean
from ..messages import say

__all__ = ["MODELS", "SIZE_SYMBOLS", "Model", "ParameterCount", "model", "positive_number"]

SIZE_SYMBOLS: dict[str, sympy.Symbol] = {
    "layers": dim("L"),
    "d_model": dim("D"),
    "d_ff": dim("F"),
    "heads": dim("N_q"),
    "kv_heads": dim("K"),
    "head_dim": dim("H"),
    "vocab": dim("V"),
    "experts": dim("E"),
    "experts_per_token": dim("k"),
}
"""The symbol of each size of a :class:`Model` (``layers`` is ``L``, ``heads`` is ``N_q``, ...)."""

_SIZES = tuple(SIZE_SYMBOLS)


def positive_number(value: object, what: str, *, integer: bool = False, error: type = ModelError) -> sympy.Expr:
    """``value`` as an exact SymPy value: a number (``15e12``, ``'4.5e10'``, ``0.4``) becomes a rational,
    text is read by :mod:`symshard.algebra.mathtext`, a symbolic expression is kept.

    Raises:
        ModelError (or ``error``): not a number or formula, not positive, or not a whole number when
            ``integer`` is asked.

    Examples:
        >>> positive_number(0.4, "MFU"), positive_number("15e12", "tokens", integer=True)
        (2/5, 15000000000000)
    """
    if isinstance(value, bool):
        raise error(
            say("{name} must be a number, got {value}", name=what, value=repr(value)),
            hint=say("write {name}=8", name=what),
        )
    try:
        if isinstance(value, float):
            expr = sympy.Rational(repr(value)) if value == value and abs(value) != float("inf") else None
        else:
            expr = as_expr(value)
    except (TypeError, ValueError):
        expr = None
    if expr is None or not isinstance(expr, sympy.Expr):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise error(
            say("{name} must be a number, got {value}", name=what, value=shown),
            hint=say("write {name}=8 or leave it symbolic", name=what),
        )
    if expr.is_number:
        if not expr.is_positive:
            raise error(
                say("{name} must be positive, got {value}", name=what, value=_shown(expr)),
                hint=say("give {name} a value above 0", name=what),
            )
        if integer and not expr.is_integer:
            raise error(
                say("{name} must be a whole number, got {value}", name=what, value=_shown(expr)),
                hint=say("round {name} to an integer", name=what),
            )
    elif expr.is_positive is False:
        raise error(
            say("{name} = {value} is not positive", name=what, value=str(expr)),
            hint=say("use symbols declared positive (symshard.algebra.symbols.dim)"),
        )
    return expr


def _shown(expr: sympy.Expr) -> str:
    return str(expr) if expr.is_Integer else f"{float(expr):g}"


@dataclass(frozen=True, slots=True)
class ParameterCount:
    """A model's parameters by part, each a SymPy expression (an exact integer on a preset).

    Attributes:
        mlp: the MLP weights of every layer and expert.
        attention: query, key, value and output projections.
        embeddings: the embedding and unembedding matrices (one of them when tied).
        norms: the RMSNorm vectors, ``(2·L + 1)·D``.
        router: the MoE routers, ``L·D·E`` (0 for a dense model).
        total: every parameter stored.
        active: the parameters one token uses (``k`` of the ``E`` experts).
    """

    mlp: sympy.Expr
    attention: sympy.Expr
    embeddings: sympy.Expr
    norms: sympy.Expr
    router: sympy.Expr
    total: sympy.Expr
    active: sympy.Expr

    def parts(self) -> dict[str, sympy.Expr]:
        """The parts that add up to :attr:`total`, by name."""
        return {
            "mlp": self.mlp,
            "attention": self.attention,
            "embeddings": self.embeddings,
            "norms": self.norms,
            "router": self.router,
        }

    def subs(self, values: Mapping[sympy.Symbol, object]) -> ParameterCount:
        """The counts with the sizes substituted."""
        point = {k: as_expr(v) for k, v in values.items()}
        return ParameterCount(*(as_expr(getattr(self, f.name)).xreplace(point) for f in fields(self)))

    def _repr_latex_(self) -> str:
        return "$P = " + latex(self.total) + "$"


@dataclass(frozen=True, slots=True)
class Model:
    """A decoder-only Transformer, every size a SymPy value (numbers or symbols).

    Attributes:
        name: catalogue key (``'llama3-70b'``) or a label of your own.
        label: display name (``'LLaMA-3 70B'``).
        layers: ``L``.
        d_model: ``D``, the residual stream's width.
        d_ff: ``F``, the MLP's hidden width (per expert).
        heads: ``N``, query heads (the symbol ``N_q``).
        kv_heads: ``K``, key/value heads (``K = N`` without grouped-query attention).
        head_dim: ``H``.
        vocab: ``V``.
        experts: ``E`` (1 for a dense model).
        experts_per_token: ``k`` (1 for a dense model).
        gated: a gated MLP (three matrices, ``3·D·F``) or the chapter's two (``2·D·F``).
        tied_embeddings: one matrix for the embedding and the unembedding.
        published_params: the size the model's card or paper gives, for checking (None if unknown).
        sources: ``(what, citation)`` pairs.

    Raises:
        ModelError: a size that is not a positive whole number, more KV heads than query heads (or a
            number that does not divide them), more experts per token than experts.
    """

    name: str
    label: str
    layers: sympy.Expr
    d_model: sympy.Expr
    d_ff: sympy.Expr
    heads: sympy.Expr
    kv_heads: sympy.Expr
    head_dim: sympy.Expr
    vocab: sympy.Expr
    experts: sympy.Expr = field(default_factory=lambda: sympy.Integer(1))
    experts_per_token: sympy.Expr = field(default_factory=lambda: sympy.Integer(1))
    gated: bool = True
    tied_embeddings: bool = False
    published_params: int | None = None
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        for name in _SIZES:
            object.__setattr__(self, name, positive_number(getattr(self, name), name, integer=True))
        n, k = self.heads, self.kv_heads
        if n.is_number and k.is_number and (k > n or n % k != 0):
            raise ModelError(
                say("{model} has {k} KV {k:head|heads} for {n} query heads", model=self.name, k=k, n=n),
                hint=say("each KV head serves a whole group of query heads: K must divide N"),
            )
        e, top = self.experts, self.experts_per_token
        if e.is_number and top.is_number and top > e:
            raise ModelError(
                say("{model} routes each token to {k} of {e} {e:expert|experts}", model=self.name, k=top, e=e),
                hint=say("experts_per_token (k) is at most experts (E)"),
            )

    # -- building ----------------------------------------------------------------------------------

    @classmethod
    def symbolic(cls, *, moe: bool = False, gated: bool = True, tied_embeddings: bool = False) -> Model:
        """Every size a symbol (``L``, ``D``, ``F``, ``N_q``, ``K``, ``H``, ``V``; ``E`` and ``k`` with ``moe``)."""
        sizes = {n: s for n, s in SIZE_SYMBOLS.items() if moe or n not in ("experts", "experts_per_token")}
        return cls("symbolic", "a Transformer", gated=gated, tied_embeddings=tied_embeddings, **sizes)  # type: ignore[arg-type]

    def with_sizes(self, **sizes: object) -> Model:
        """A copy with some sizes (or flags) replaced: ``model("llama3-8b").with_sizes(layers=16)``.

        Raises:
            ModelError: an unknown size name, or a value that is not valid.
        """
        known = {*_SIZES, "gated", "tied_embeddings", "name", "label"}
        unknown = sorted(set(sizes) - known)
        if unknown:
            raise ModelError(
                say("a model has no size '{name}'", name=unknown[0]), hint=did_you_mean(unknown[0], sorted(known))
            )
        name = str(sizes.pop("name", self.name if not sizes else f"{self.name} (modified)"))
        return replace(self, name=name, published_params=None, **sizes)  # type: ignore[arg-type]

    # -- sizes as symbols and numbers ---------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        """Whether the model has more than one expert (or a symbolic number of them)."""
        return self.experts != 1

    @property
    def is_numeric(self) -> bool:
        """Whether every size is a number."""
        return all(getattr(self, n).is_number for n in _SIZES)

    def sizes(self) -> dict[str, sympy.Expr]:
        """The sizes by field name."""
        return {n: getattr(self, n) for n in _SIZES}

    def values(self) -> dict[sympy.Symbol, sympy.Expr]:
        """``{L: 80, D: 8192, ...}``: the numeric sizes by symbol, to substitute into symbolic formulas."""
        return {SIZE_SYMBOLS[n]: v for n, v in self.sizes().items() if v.is_number}

    # -- counting ------------------------------------------------------------------------------------

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of one MLP: 3 gated, 2 for the chapter's block."""
        return 3 if self.gated else 2

    @property
    def params(self) -> ParameterCount:
        """The parameters by part, total and active."""
        L, D, F = self.layers, self.d_model, self.d_ff
        N, K, H, V = self.heads, self.kv_heads, self.head_dim, self.vocab
        E, k = self.experts, self.experts_per_token
        per_expert = self.mlp_matrices * D * F
        mlp = L * E * per_expert
        attention = L * (2 * D * N * H + 2 * D * K * H)
        embeddings = (1 if self.tied_embeddings else 2) * V * D
        norms = (2 * L + 1) * D
        router = L * D * E if self.is_moe else sympy.Integer(0)
        shared = attention + embeddings + norms + router
        total = mlp + shared
        active = L * k * per_expert + shared
        return ParameterCount(mlp, attention, embeddings, norms, router, total, active)

    def attention_flops_per_token(self, context: object = None) -> sympy.Expr:
        """FLOPs of the attention scores and the weighted sum for one token against ``context`` tokens,
        forward only: ``4·L·N·H·T`` (``2·N·H·T`` each; the book's O(T) term).

        Args:
            context: ``T``, the tokens attended to (default the symbol ``T``).
        """
        t = dim("T") if context is None else positive_number(context, "context")
        return 4 * self.layers * self.heads * self.head_dim * t

    def flops_per_token(self, *, training: bool = True, context: object = None) -> sympy.Expr:
        """FLOPs per token: ``6·P_active`` for training (2 forward, 4 backward), ``2·P_active`` for
        inference; with ``context``, the attention term (times 3 for training) is added.

        Examples:
            >>> Model.symbolic().flops_per_token(training=False) == 2 * Model.symbolic().params.active
            True
        """
        per_param = 6 if training else 2
        out = per_param * self.params.active
        if context is not None:
            out = out + (3 if training else 1) * self.attention_flops_per_token(context)
        return out

    def kv_elements_per_token(self) -> sympy.Expr:
        """Elements of the KV cache one token adds: a key and a value of ``K·H`` in every layer, ``2·L·K·H``."""
        return 2 * self.layers * self.kv_heads * self.head_dim

    # -- display -------------------------------------------------------------------------------------

    def source(self, what: str) -> str | None:
        """Where the figure ``what`` comes from (``'sizes'``, ``'published_params'``)."""
        return dict(self.sources).get(what)

    def __str__(self) -> str:
        return self.label

    def latex(self) -> str:
        """``P = ... = 70,553,706,496``: the parameter count as LaTeX."""
        total = self.params.total
        if self.is_numeric:
            return r"P_{\text{" + self.label + "}} = " + f"{int(total):,}".replace(",", "{,}")
        return "P = " + latex(total)

    def _repr_latex_(self) -> str:
        return "$" + self.latex() + "$"

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Model", self.name, {"L": self.layers, "D": self.d_model, "F": self.d_ff, "N": self.heads,
                       "K": self.kv_heads, "H": self.head_dim, "V": self.vocab, "E": self.experts if self.is_moe else None},
                       {"params": self.params.total})  # fmt: skip


_BOOK = "How to Scale Your Model (the book's Transformer and training chapters; symshard's MODELS.md table)"


def _preset(name, label, L, D, F, N, K, H, V, *, card, published, published_source, **extra) -> Model:
    sources = (("sizes", f"{card}; {_BOOK}"), ("published_params", published_source))
    return Model(name, label, L, D, F, N, K, H, V, published_params=published, sources=sources, **extra)


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        _preset("llama2-13b", "LLaMA-2 13B", 40, 5120, 13824, 40, 40, 128, 32000,
                card="Touvron et al. 2023, 'Llama 2: Open Foundation and Fine-Tuned Chat Models', Table 1; "
                     "config.json of meta-llama/Llama-2-13b-hf",
                published=13_000_000_000, published_source="the Llama 2 paper and model card: 13B"),
        _preset("llama3-8b", "LLaMA-3 8B", 32, 4096, 14336, 32, 8, 128, 128256,
                card="Llama Team 2024, 'The Llama 3 Herd of Models', Table 3; config.json of meta-llama/Meta-Llama-3-8B",
                published=8_030_000_000, published_source="the Meta-Llama-3-8B model card: 8.03B parameters"),
        _preset("llama3-70b", "LLaMA-3 70B", 80, 8192, 28672, 64, 8, 128, 128256,
                card="Llama Team 2024, 'The Llama 3 Herd of Models', Table 3; config.json of meta-llama/Meta-Llama-3-70B",
                published=70_600_000_000, published_source="the Meta-Llama-3-70B model card: 70.6B parameters"),
        _preset("llama3-405b", "LLaMA-3 405B", 126, 16384, 53248, 128, 8, 128, 128256,
                card="Llama Team 2024, 'The Llama 3 Herd of Models', Table 3; config.json of "
                     "meta-llama/Llama-3.1-405B",
                published=405_000_000_000, published_source="the Llama 3 paper and Llama-3.1-405B model card: 405B"),
        _preset("gemma-7b", "Gemma 7B", 28, 3072, 24576, 16, 16, 256, 256000, tied_embeddings=True,
                card="Gemma Team 2024, 'Gemma: Open Models Based on Gemini Research and Technology', Table 1 "
                     "(the feedforward width 49152 there counts the gate and the up projection); config.json of "
                     "google/gemma-7b (input and output embeddings shared)",
                published=8_537_680_896,
                published_source="the Gemma paper, Table 2: 786,432,000 embedding and 7,751,248,896 "
                                 "non-embedding parameters"),
        _preset("mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 14336, 32, 8, 128, 32000, experts=8, experts_per_token=2,
                card="Jiang et al. 2024, 'Mixtral of Experts', Table 1; config.json of mistralai/Mixtral-8x7B-v0.1",
                published=46_700_000_000,
                published_source="Mistral AI, 'Mixtral of experts' (2023): 46.7B total, 12.9B used per token"),
    )
}  # fmt: skip
"""The preset catalogue, keyed by canonical name, each with its sources."""

_ALIASES = {
    "llama213b": "llama2-13b",
    "llama38b": "llama3-8b",
    "llama318b": "llama3-8b",
    "llama370b": "llama3-70b",
    "llama3170b": "llama3-70b",
    "llama3405b": "llama3-405b",
    "llama31405b": "llama3-405b",
    "gemma7b": "gemma-7b",
    "mixtral8x7b": "mixtral-8x7b",
    "mixtral": "mixtral-8x7b",
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def model(name: str | Model) -> Model:
    """The preset called ``name`` (forgiving case, spaces, dots and dashes: ``'LLaMA-3 70B'``).

    Raises:
        UnknownPresetError: the name matches no preset.

    Examples:
        >>> model("LLaMA 3 70B").name, model("llama3.1-405b").label
        ('llama3-70b', 'LLaMA-3 405B')
    """
    if isinstance(name, Model):
        return name
    key = _key(str(name))
    lookup = {_key(k): k for k in MODELS} | _ALIASES
    if key in lookup:
        return MODELS[lookup[key]]
    raise UnknownPresetError(
        say("unknown model '{name}'", name=name),
        hint=say("{hint} (or build one with Model(...))", hint=did_you_mean(str(name).lower(), sorted(MODELS))),
    )

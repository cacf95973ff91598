"""The canonical SymPy symbols of symshard, each made once with its assumptions.

``Symbol('X', positive=True) != Symbol('X')``: one stray plain symbol would split
a cost into two unrelated variables. Every symbol symshard puts into an
expression therefore comes from here:

* ``dim("B")``: the size of array dimension B (a positive integer), printed ``B``.
* ``axis("X")``: the size of mesh axis X (a positive integer), printed ``|X|``
  as in the book, so that a dim and an axis with the same letter never collide.
* hardware constants: ``C`` (FLOP/s per chip), ``W_hbm`` (HBM bytes/s),
  ``W_ici`` (the book's *bidirectional* ICI bandwidth of one mesh axis, bytes/s),
  ``W_nvlink`` (a GPU's one-way NVLink egress, bytes/s), ``W_dcn`` (a chip's
  one-way egress into the data-centre or scale-out network, bytes/s), ``W_spine``
  (a GPU's share of a fat tree's spine bandwidth, bytes/s), ``W_pcie`` (one chip's
  PCIe bandwidth to its host, bytes/s), ``T_hop`` (latency of
  one hop on ICI, seconds) and NCCL's latency terms ``T_base`` (a collective's base
  latency), ``T_nvlink`` and ``T_net`` (the latency of one ring step over NVLink or
  the network).

Examples:
    >>> dim("B") * dim("D") / axis("X")
    B*D/|X|
    >>> latex(2 * dim("B") * dim("D") / (axis("X") * W_ici))
    '\\\\frac{2 B D}{W_{\\\\text{ici}} \\\\lvert X \\\\rvert}'
"""

from __future__ import annotations

from functools import cache

import sympy

__all__ = [
    "HARDWARE_SYMBOLS",
    "C",
    "T_base",
    "T_hop",
    "T_net",
    "T_nvlink",
    "W_dcn",
    "W_hbm",
    "W_ici",
    "W_nvlink",
    "W_pcie",
    "W_spine",
    "axis",
    "dim",
    "is_axis_symbol",
    "latex",
]


@cache
def dim(name: str) -> sympy.Symbol:
    """The size of the array dimension ``name``: a positive integer symbol."""
    return sympy.Symbol(name, positive=True, integer=True)


@cache
def axis(name: str) -> sympy.Symbol:
    """The size of the mesh axis ``name``: a positive integer symbol printed ``|name|``."""
    return sympy.Symbol(f"|{name}|", positive=True, integer=True)


def is_axis_symbol(symbol: sympy.Basic) -> bool:
    """Whether ``symbol`` is the size of a mesh axis made by :func:`axis`."""
    return isinstance(symbol, sympy.Symbol) and symbol.name.startswith("|")


C = sympy.Symbol("C", positive=True)
"""Peak matmul FLOP/s of one chip (bf16 unless a dtype says otherwise)."""

W_hbm = sympy.Symbol("W_hbm", positive=True)
"""HBM bandwidth of one chip, bytes/s."""

W_ici = sympy.Symbol("W_ici", positive=True)
"""The book's ICI bandwidth of one mesh axis: both directions of a wraparound ring, bytes/s."""

W_nvlink = sympy.Symbol("W_nvlink", positive=True)
"""One GPU's NVLink egress in one direction inside its switch domain, bytes/s."""

W_dcn = sympy.Symbol("W_dcn", positive=True)
"""One chip's egress to the data-centre network (DCN or InfiniBand), bytes/s."""

W_spine = sympy.Symbol("W_spine", positive=True)
"""One GPU's share of a fat tree's spine bandwidth (the spine's total over the GPUs below it), bytes/s."""

W_pcie = sympy.Symbol("W_pcie", positive=True)
"""One chip's PCIe bandwidth to its host, bytes/s."""

T_hop = sympy.Symbol("T_hop", positive=True)
"""Latency of one hop of a collective, seconds."""

T_base = sympy.Symbol("T_base", positive=True)
"""A collective's base latency in NCCL's tuning model (launch and synchronisation), seconds."""

T_nvlink = sympy.Symbol("T_nvlink", positive=True)
"""The latency of one ring step over NVLink in NCCL's tuning model, seconds."""

T_net = sympy.Symbol("T_net", positive=True)
"""The latency of one ring step over the network (InfiniBand, Ethernet) in NCCL's tuning model, seconds."""

HARDWARE_SYMBOLS: dict[str, sympy.Symbol] = {
    s.name: s for s in (C, W_hbm, W_ici, W_nvlink, W_dcn, W_spine, W_pcie, T_hop, T_base, T_nvlink, T_net)
}
"""The hardware constants by name, for ``--hw-set W_hbm=3.4e12`` and friends."""

_LATEX_NAMES = {
    W_hbm: r"W_{\text{hbm}}",
    W_ici: r"W_{\text{ici}}",
    W_nvlink: r"W_{\text{nvlink}}",
    W_dcn: r"W_{\text{dcn}}",
    W_spine: r"W_{\text{spine}}",
    T_hop: r"T_{\text{hop}}",
    T_base: r"T_{\text{base}}",
    T_nvlink: r"T_{\text{nvlink}}",
    T_net: r"T_{\text{net}}",
}


def latex(expr: sympy.Basic) -> str:
    """``sympy.latex`` with symshard's symbol names (``|X|`` as ``\\lvert X \\rvert``)."""
    names = {}
    for s in sympy.sympify(expr, strict=True).free_symbols:
        if s in _LATEX_NAMES:
            names[s] = _LATEX_NAMES[s]
        elif is_axis_symbol(s):
            inner = s.name[1:-1]
            shown = inner if len(inner) == 1 else rf"\mathrm{{{inner}}}"
            names[s] = rf"\lvert {shown} \rvert"
    return sympy.latex(expr, symbol_names=names)

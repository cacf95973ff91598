"""The sandbox families run in: a Jinja ``SandboxedEnvironment`` whose globals are the algebra.

Templates and ``family.toml`` expressions see the public algebra (``parse``,
``mesh``, ``hardware``, ``place``, ``matmul``, ``plan``, ``compare``,
``best_sharding``, the collectives and the symbols) and formatting filters
(``seconds``, ``bytes``, ``flops``, ``num``, ``tex``, ``text``), and nothing
else: no Python builtins beyond a few pure ones, no imports, no files outside
the family's folder. ``StrictUndefined`` turns every misspelt name into an
error instead of an empty string; an attempt to reach ``__class__`` and the like
is a :class:`~symshard.errors.TemplateError`. Templates (not ``family.toml``) also
see ``figure(kind, ...)``, which the engine adds for the problem being rendered
(see :mod:`symshard.problems.figures`).

Examples:
    >>> env = environment(None)
    >>> env.from_string("{{ parse('AllGather_X(A[I_X])').output }}").render()
    'A[I]'
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
import jinja2.sandbox
import sympy

from .. import symbols
from ..arrays import Array
from ..collectives import AllGather, AllReduce, AllToAll, CollectivePermute, DynamicSlice, ReduceScatter
from ..crossovers import compare
from ..dtypes import dtype_bytes
from ..hardware import hardware
from ..mathtext import as_expr
from ..matmul import local_product, matmul
from ..mesh import Mesh
from ..notation import parse_array
from ..placement import place
from ..planner import plan
from ..read import parse
from ..schemes import fsdp_tp_split, largest_tp
from ..schemes import layer as mlp_layer
from ..search import best_sharding
from ..units import format_bytes, format_flops, format_number, format_seconds, pretty, sig

__all__ = ["environment", "margin"]


def margin(a: object, b: object) -> float:
    """How far apart two positive quantities are, relative to the larger: 0 for a tie, near 1 for far apart."""
    x, y = abs(float(as_expr(a))), abs(float(as_expr(b)))
    top = max(x, y)
    return 0.0 if top == 0 else abs(x - y) / top


def _short_bytes(n: object) -> str:
    """``32 MiB`` rather than ``33,554,432 B (32 MiB)``."""
    full = format_bytes(n)
    return full[full.index("(") + 1 : -1] if "(" in full else full


def _texnum(value: object, digits: int = 3) -> str:
    """A number for LaTeX: ``4.5 \\times 10^{10}``, ``1{,}048{,}576``, ``0.25``."""
    v = as_expr(value)
    if v.is_Integer and abs(v) < 10**7:
        return f"{int(v):,}".replace(",", "{,}")
    text = sig(float(v), digits)
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def _tex_unit(text: str) -> str:
    """``559 µs`` -> ``559\\,\\mu\\text{s}`` (a quantity inside LaTeX math)."""
    number, _, unit = text.partition(" ")
    unit = unit.replace("µ", "\\mu\\text{") + "}" if "µ" in unit else "\\text{" + unit + "}"
    return f"{number}\\,{unit}" if unit else number


def _axes_text(mesh: Mesh) -> str:
    """A mesh for a sentence: ``$X$ (8 chips), $Y$ (4 chips) and $Z$ (2 chips)``."""
    parts = [f"${a.name}$ ({a.size} chip{'s' if a.size != 1 else ''})" for a in mesh.axes]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _book_mesh(mesh: Mesh) -> str:
    """A mesh as the chapter writes it: ``Mesh({'X': 8, 'Y': 2})``."""
    return "Mesh({" + ", ".join(f"'{a.name}': {a.size}" for a in mesh.axes) + "})"


@lru_cache(maxsize=8192)
def _tex_expr(expr: sympy.Basic) -> str:
    return symbols.latex(expr)


def _tex(value: object) -> str:
    if isinstance(value, Mesh):
        return ", ".join(f"|{a.name}| = {a.size}" for a in value.axes)
    if isinstance(value, Array):
        return value.latex()
    latex_method = getattr(value, "latex", None)
    if callable(latex_method) and not isinstance(value, sympy.Basic):
        return str(latex_method())
    return _tex_expr(as_expr(value))


_GLOBALS = {
    # the algebra
    "parse": parse,
    "array": parse_array,
    "mesh": Mesh,
    "hardware": hardware,
    "place": place,
    "matmul": matmul,
    "local_product": local_product,
    "plan": plan,
    "compare": compare,
    "best_sharding": best_sharding,
    "mlp_layer": mlp_layer,
    "fsdp_tp_split": fsdp_tp_split,
    "largest_tp": largest_tp,
    "AllGather": AllGather,
    "ReduceScatter": ReduceScatter,
    "AllReduce": AllReduce,
    "AllToAll": AllToAll,
    "CollectivePermute": CollectivePermute,
    "DynamicSlice": DynamicSlice,
    "dtype_bytes": dtype_bytes,
    "dim": symbols.dim,
    "axis": symbols.axis,
    "C": symbols.C,
    "W_ici": symbols.W_ici,
    "W_hbm": symbols.W_hbm,
    "W_nvlink": symbols.W_nvlink,
    "W_dcn": symbols.W_dcn,
    "T_hop": symbols.T_hop,
    "simplify": sympy.simplify,
    "factor": sympy.factor,
    "Rational": sympy.Rational,
    # small pure helpers
    "margin": margin,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    "len": len,
    "sum": sum,
    "sorted": sorted,
    "enumerate": enumerate,
    "zip": zip,
}

_FILTERS = {
    "seconds": format_seconds,
    "bytes": format_bytes,
    "size": _short_bytes,
    "flops": format_flops,
    "num": format_number,
    "sig": sig,
    "tex": _tex,
    "texnum": _texnum,
    "tex_seconds": lambda v: _tex_unit(format_seconds(v)),
    "tex_size": lambda v: _tex_unit(_short_bytes(v)),
    "tex_flops": lambda v: _tex_unit(format_flops(v)),
    "text": pretty,
    "axes": _axes_text,
    "book_mesh": _book_mesh,
}


@lru_cache(maxsize=256)
def environment(folder: Path | None) -> jinja2.sandbox.SandboxedEnvironment:
    """The sandboxed environment for templates in ``folder`` (None: strings only)."""
    loader = jinja2.FileSystemLoader(str(folder)) if folder is not None else None
    env = jinja2.sandbox.SandboxedEnvironment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(_GLOBALS)
    env.filters.update(_FILTERS)
    return env

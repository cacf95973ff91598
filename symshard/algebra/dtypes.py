"""Element sizes of the dtypes symshard knows, in bytes (int4 is half a byte).

Names are matched case-insensitively and through common aliases (``bfloat16``,
``float32``, ``f32``, ...); :func:`canonical_dtype` gives the short name symshard
prints.

Examples:
    >>> dtype_bytes("bfloat16"), dtype_bytes("fp32"), dtype_bytes("int4")
    (2, 4, 1/2)
    >>> canonical_dtype("Float32")
    'fp32'
"""

from __future__ import annotations

import sympy

from ..errors import UnknownDtypeError, did_you_mean
from ..messages import say

__all__ = ["DTYPE_BYTES", "canonical_dtype", "dtype_bytes"]

DTYPE_BYTES: dict[str, sympy.Rational] = {
    "fp64": sympy.Integer(8),
    "fp32": sympy.Integer(4),
    "bf16": sympy.Integer(2),
    "fp16": sympy.Integer(2),
    "fp8": sympy.Integer(1),
    "int32": sympy.Integer(4),
    "int16": sympy.Integer(2),
    "int8": sympy.Integer(1),
    "int4": sympy.Rational(1, 2),
}
"""Bytes per element, keyed by canonical dtype name."""

_ALIASES = {
    "float64": "fp64",
    "f64": "fp64",
    "double": "fp64",
    "float32": "fp32",
    "f32": "fp32",
    "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "f16": "fp16",
    "half": "fp16",
    "float8": "fp8",
    "f8": "fp8",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
    "s32": "int32",
    "s16": "int16",
    "s8": "int8",
    "uint8": "int8",
    "u8": "int8",
    "s4": "int4",
    "uint4": "int4",
}


def canonical_dtype(name: str) -> str:
    """The canonical short name of ``name`` (``'bfloat16'`` becomes ``'bf16'``).

    Raises:
        UnknownDtypeError: if the name is not a known dtype or alias.
    """
    key = str(name).strip().lower()
    if key in DTYPE_BYTES:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    raise UnknownDtypeError(
        say("unknown dtype '{name}'", name=name),
        hint=did_you_mean(key, sorted(DTYPE_BYTES) + sorted(_ALIASES)),
    )


def dtype_bytes(name: str) -> sympy.Rational:
    """Bytes per element of the dtype ``name`` as an exact SymPy number."""
    return DTYPE_BYTES[canonical_dtype(name)]

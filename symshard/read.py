"""One entry point for any notation string: :func:`parse`.

The grammar lives in :mod:`symshard.notation.parser`; this module only decides what a
string is (an array, a collective or a matmul) and returns the matching checked value.

Examples:
    >>> parse("A[I_{XY}, J] \\\\{U_Z\\\\}")
    Array.parse('A[I_XY, J]{U_Z}')
    >>> parse("AllToAll_{X,J}(A[I_X, J])")
    parse_collective('AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]')
"""

from __future__ import annotations

from .costs.collectives import CollectiveExpr, parse_collective
from .notation.arrays import Array
from .notation.einsums import Matmul, matmul
from .notation.parser import classify, parse_array

__all__ = ["parse"]


def parse(text: str) -> Array | CollectiveExpr | Matmul:
    """Parse an array (``'A[I_X, J]'``), a collective (``'AllGather_X(A[I_X, J])'``) or a
    matmul (``'A[I, J_X] · B[J_X, K] -> C[I, K]'``).

    Raises:
        NotationError: the text does not parse.
        ShardingError: an array that breaks a sharding rule.
        CollectiveError: a collective that does not fit its operand.
        PlanError: a matmul whose dims do not fit together.
    """
    kind = classify(text)
    if kind == "collective":
        return parse_collective(text)
    if kind == "matmul":
        return matmul(text)
    return parse_array(text)

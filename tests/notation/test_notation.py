"""Parsing and printing the notation: canonical forms, LaTeX input, and errors that teach."""

from __future__ import annotations

import pytest

from symshard import Array, Dim, parse
from symshard.costs.collectives import parse_collective
from symshard.errors import (
    CollectiveError,
    NotationError,
    ShardingError,
    SymshardError,
)
from symshard.notation.parser import classify, parse_array, parse_dim

# (input, canonical form)
ARRAYS = [
    ("A[I_XY, J]{U_Z}", "A[I_XY, J]{U_Z}"),
    ("A[ I_X,J ]", "A[I_X, J]"),  # spaces are free
    ("A[I_X, J_Y]", "A[I_X, J_Y]"),
    ("A[I, J]", "A[I, J]"),  # fully replicated
    ("A[I_YX, J]", "A[I_YX, J]"),  # axis order is kept: it fixes the traversal
    ("C[I, K]{U_YX}", "C[I, K]{U_XY}"),  # unreduced axes are a set, printed sorted
    ("[E_Y, F]", "[E_Y, F]"),  # anonymous, as in AllGather_Y([E_Y, F])
    ("W_in[D_X, F_Y]", "W_in[D_X, F_Y]"),  # underscores in array names
    ("dW_out[F, D]", "dW_out[F, D]"),
    ("A'[I_X]", "A'[I_X]"),  # a gradient
    ("x[B, S, D]", "x[B, S, D]"),  # 3-D
    ("A[I_{data,model}, J]", "A[I_{data,model}, J]"),  # multi-letter axis names need braces
    ("A[I_{data}, J]", "A[I_{data}, J]"),
    ("A[I_{XY}, J]", "A[I_XY, J]"),  # LaTeX braces around one-letter axes
    ("A[I_{X,Y}, J]", "A[I_XY, J]"),
    (r"\mathbf{A}[I_{XY}, J] \{U_Z\}", "A[I_XY, J]{U_Z}"),  # LaTeX input
    (r"A[I_{XY}, J] \{ U_{Z} \}", "A[I_XY, J]{U_Z}"),
    (r"$\textbf{A}[I_X, J]$", "A[I_X, J]"),
    (r"\mathbf{W\_in}[D, F]", "W_in[D, F]"),
    ("A[I_X, J]{U_{data}}", "A[I_X, J]{U_{data}}"),
    ("Tmp[B_X, F_Y]", "Tmp[B_X, F_Y]"),
    ("A[I_xy, J]", "A[I_xy, J]"),  # lower-case one-letter axes
]


@pytest.mark.parametrize(("text", "canonical"), ARRAYS)
def test_array_canonical_form(text, canonical):
    a = parse_array(text)
    assert str(a) == canonical
    assert parse_array(canonical) == a  # round trip
    assert parse_array(a.latex()) == a  # the LaTeX form parses back
    assert eval(repr(a), {"Array": Array}) == a  # repr evaluates back
    assert a._repr_latex_() == f"${a.latex()}$"
    assert a.unicode() == canonical


@pytest.mark.parametrize(
    ("array", "latex"),
    [
        ("A[I_XY, J]{U_Z}", r"\mathbf{A}[I_{XY}, J]\{U_{Z}\}"),
        ("A[I_{data,model}, J]", r"\mathbf{A}[I_{\mathrm{data},\mathrm{model}}, J]"),
        ("[E_Y, F]", "[E_{Y}, F]"),
        ("W_in[D, F]", r"\mathbf{W\_in}[D, F]"),
    ],
)
def test_latex_form(array, latex):
    assert parse_array(array).latex() == latex


def test_structure():
    a = parse_array("A[I_XY, J]{U_Z}")
    assert a == Array("A", (Dim("I", ("X", "Y")), Dim("J")), frozenset({"Z"}))
    assert a == Array("A", ("I_XY", "J"), "Z")  # strings are read as dims
    assert a.axes == ("X", "Y")
    assert a.dim_names == ("I", "J")
    assert a.sharded_dim("Y") == "I"
    assert a.sharded_dim("Z") is None
    assert parse_dim("I_{data,model}") == Dim("I", ("data", "model"))
    assert hash(a) == hash(parse_array("A[ I_XY , J ] {U_Z}"))


# (input, error class, message pattern): invalid inputs, each next to a valid near-miss above
INVALID = [
    ("A[I_X, J_X]", ShardingError, r"mesh axis X shards both I and J in 'A\[I_X, J_X\]'"),
    ("A[I_XX]", ShardingError, r"mesh axis X appears twice in the sharding of I"),
    ("A[I_X, J]{U_X}", ShardingError, r"mesh axis X both shards I and marks 'A\[I_X, J\]\{U_X\}' unreduced"),
    ("A[I_X]{U_ZZ}", ShardingError, r"mesh axis Z is listed twice as unreduced"),
    ("A[I, I]", NotationError, r"dim I appears twice in 'A\[I, I\]'"),
    ("A[I_X, J", NotationError, r"unbalanced brackets in 'A\[I_X, J': '\[' at column 2 is never closed"),
    ("A[I_X, J]]", NotationError, r"unbalanced brackets .* '\]' closes nothing"),
    ("A[I_X)", NotationError, r"'\)' closes '\[' opened at column 2"),
    ("A[I_{X]", NotationError, r"unbalanced brackets"),
    ("A[]", NotationError, r"array has no dims"),
    ("A[I,,J]", NotationError, r"found an empty dim"),
    ("A[I, ]", NotationError, r"found an empty dim"),
    ("A[I_, J]", NotationError, r"expected mesh axes after '_'"),
    ("A[I_{}, J]", NotationError, r"empty sharding of I"),
    ("A[I_X1]", NotationError, r"'X1' is not a run of one-letter axis names"),
    ("A[I_{DP}]", None, None),  # capital runs are one axis per letter: this is D and P (valid)
    ("A[I_X] B", NotationError, r"unexpected 'B' after the array"),
    ("A[I_X]{V_X}", NotationError, r"expected U_ after '\{'"),
    ("A(I_X, J)", NotationError, r"expected '\[' after the array name but found '\('"),
    ("", NotationError, r"expected an array but found the end"),
    ("A[I_X, J] % 2", NotationError, r"unexpected character '%'"),
    (r"A[I_X] \frac{1}{2}", NotationError, r"unknown LaTeX command '\\frac'"),
    ("A[1, J]", NotationError, r"found '1' where a dim name belongs"),
    ("A[I', J]", NotationError, r"'I'' is not a valid dim name"),
    ("A[I_{x y}]", NotationError, r"expected ',' or '\}'"),
]


@pytest.mark.parametrize(("text", "error", "pattern"), INVALID)
def test_invalid_arrays(text, error, pattern):
    if error is None:
        parse_array(text)
        return
    with pytest.raises(error, match=pattern) as info:
        parse_array(text)
    err = info.value
    assert isinstance(err, SymshardError)
    assert err.hint  # every error offers a fix
    if text:
        assert err.text == text  # and points into the user's own text
        assert err.span is not None
        assert 0 <= err.span[0] <= len(text)


def test_error_points_at_the_offending_spot():
    with pytest.raises(ShardingError) as info:
        parse_array("A[I_X, J_X]")
    lines = str(info.value).splitlines()
    assert lines[0] == "mesh axis X shards both I and J in 'A[I_X, J_X]'"
    assert lines[1] == "  A[I_X, J_X]"
    assert lines[2] == "  " + " " * 9 + "^"  # under the second X
    assert lines[3].startswith("hint: a mesh axis can shard at most one dimension")


def test_errors_are_also_builtin_errors():
    with pytest.raises(ValueError):
        parse_array("A[I_X, J_X]")
    with pytest.raises(ValueError):
        parse_array("A[I_X")


def test_programmatic_arrays_are_checked_too():
    with pytest.raises(ShardingError, match=r"mesh axis X shards both I and J in 'A\[I_X, J_X\]'"):
        Array("A", (Dim("I", ("X",)), Dim("J", ("X",))))
    with pytest.raises(NotationError, match="is not a valid mesh axis name"):
        Dim("I", ("1X",))
    with pytest.raises(NotationError, match="would read as the axes D, P"):
        Dim("I", ("DP",))


# -- collectives --------------------------------------------------------------------------------

COLLECTIVES = [
    ("AllGather_X(A[I_X, J])", "AllGather_X(A[I_X, J]) -> A[I, J]"),
    ("AllGather_XY(A[I_XY, J])", "AllGather_XY(A[I_XY, J]) -> A[I, J]"),
    ("AllGather_Y(A[I_XY, J])", "AllGather_Y(A[I_XY, J]) -> A[I_X, J]"),  # partial gather
    ("AllGather_Y([E_Y, F]) -> [E, F]", "AllGather_Y([E_Y, F]) -> [E, F]"),
    ("AllGather_{X,Y}(A[I_X, J_Y])", "AllGather_XY(A[I_X, J_Y]) -> A[I, J]"),
    ("ReduceScatter_{X,K}(C[I, K]{U_X})", "ReduceScatter_{X,K}(C[I, K]{U_X}) -> C[I, K_X]"),
    ("ReduceScatter_{Y,J}(A[I_X, J]{U_Y})", "ReduceScatter_{Y,J}(A[I_X, J]{U_Y}) -> A[I_X, J_Y]"),
    ("ReduceScatter_{XY,K}(C[I, K]{U_XY})", "ReduceScatter_{XY,K}(C[I, K]{U_XY}) -> C[I, K_XY]"),
    ("ReduceScatter_X(A'[I]{U_X})", "ReduceScatter_X(A'[I]{U_X}) -> A'[I_X]"),  # one dim: no need to name it
    ("AllReduce_X(C[I, K]{U_X})", "AllReduce_X(C[I, K]{U_X}) -> C[I, K]"),
    ("AllReduce_Y(A[I_X, J]{U_Y})", "AllReduce_Y(A[I_X, J]{U_Y}) -> A[I_X, J]"),
    ("AllReduce(C[I, K]{U_XY})", "AllReduce_XY(C[I, K]{U_XY}) -> C[I, K]"),  # no axes: all unreduced
    ("AllToAll_{X,J}(A[I_X, J])", "AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]"),
    ("AllToAll_X(A[I_X, J])", "AllToAll_X(A[I_X, J]) -> A[I, J_X]"),  # the only other dim
    ("CollectivePermute_X(A[I_X, J])", "CollectivePermute_X(A[I_X, J]) -> A[I_X, J]"),
    ("ppermute_X(A[I_X, J])", "CollectivePermute_X(A[I_X, J]) -> A[I_X, J]"),
    ("psum_X(C[I]{U_X})", "AllReduce_X(C[I]{U_X}) -> C[I]"),
    ("all_gather_X(A[I_X])", "AllGather_X(A[I_X]) -> A[I]"),
    ("psum_scatter_{X,I}(C[I]{U_X})", "ReduceScatter_{X,I}(C[I]{U_X}) -> C[I_X]"),
    (r"\textbf{AllGather}_{XY}(A[I_{XY}, J]) \rightarrow A[I, J]", "AllGather_XY(A[I_XY, J]) -> A[I, J]"),
    (r"\textbf{AllReduce}_X C[I, K] \{ U_X \} \rightarrow C[I, K]", "AllReduce_X(C[I, K]{U_X}) -> C[I, K]"),
    ("AllGather_X[I, J_X] → A[I, J]", "AllGather_X([I, J_X]) -> [I, J]"),  # the book's shorthand
    ("AllGather_{data}(x[B_{data}, D])", "AllGather_{data}(x[B_{data}, D]) -> x[B, D]"),
    ("ReduceScatter_{data,model,K}(C[I, K]{U_{data,model}})",
     "ReduceScatter_{data,model,K}(C[I, K]{U_{data,model}}) -> C[I, K_{data,model}]"),
    # several moves in one all-to-all, as the planner prints them; in any order, with any arrow
    ("AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X])", "AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X]) -> P[B_Y, H_X, S, T]"),
    ("AllToAll_{Y->B, X->H}(P[B, H, S_Y, T_X])", "AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X]) -> P[B_Y, H_X, S, T]"),
    (r"\text{AllToAll}_{X\to H,Y\to B}(P[B, H, S_Y, T_X])",
     "AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X]) -> P[B_Y, H_X, S, T]"),
    ("AllToAll_{XZ→H,Y→B}(P[B, H, S_Y, T_XZ])", "AllToAll_{XZ→H,Y→B}(P[B, H, S_Y, T_XZ]) -> P[B_Y, H_XZ, S, T]"),
    ("AllToAll_{X→H}(P[B, H, S_Y, T_X])", "AllToAll_{X,H}(P[B, H, S_Y, T_X]) -> P[B, H_X, S_Y, T]"),  # one move
]  # fmt: skip


@pytest.mark.parametrize(("text", "canonical"), COLLECTIVES)
def test_collective_canonical_form(text, canonical):
    e = parse_collective(text)
    assert str(e) == canonical
    assert parse_collective(canonical) == e
    assert parse(text) == e
    assert classify(text) == "collective"
    assert e.unicode() == canonical.replace("->", "→")
    assert e._repr_latex_().startswith(r"$\text{")


INVALID_COLLECTIVES = [
    ("AllGather_X(A[I_Y, J])", r"AllGather_X\(A\[I_Y, J\]\) is not possible: it is not sharded along X"),
    ("AllGather_X(C[I, K]{U_X})", r"it is not sharded along X"),
    ("ReduceScatter_{X,K}(C[I, K])", r"it is not unreduced over X"),
    ("ReduceScatter_{X,L}(C[I, K]{U_X})", r"it has no dim L"),
    ("ReduceScatter_X(C[I, K]{U_X})", r"it does not say which dim to shard"),
    ("AllReduce_X(C[I_X, K])", r"it is not unreduced over X"),
    ("AllReduce(C[I, K])", r"it has no unreduced axis"),
    ("AllToAll_{X,I}(A[I_X, J])", r"X already shards I"),
    ("AllToAll_{Y,J}(A[I_X, J])", r"it is not sharded along Y"),
    ("AllToAll_X(A[I_X, J, K])", r"does not say which dim receives"),
    ("CollectivePermute_XY(A[I_X, J])", r"a permute runs along exactly one axis"),
    ("AllGather_XX(A[I_X])", r"mesh axis X is listed twice"),
    ("AllGather_X(A[I_X, J]) -> A[I_X, J]", r"gives A\[I, J\], not A\[I_X, J\]"),
    ("AllToAll_{X→H,Y→H}(P[B, H, S_Y, T_X])", r"its moves share a dim"),
    ("AllToAll_{X→T,Y→B}(P[B, H, S_Y, T_X])", r"its moves share a dim"),  # T loses X and gains it
    ("AllToAll_{X→H,Z→B}(P[B, H, S_Y, T_X])", r"it is not sharded along Z"),
]


@pytest.mark.parametrize(("text", "pattern"), INVALID_COLLECTIVES)
def test_invalid_collectives(text, pattern):
    with pytest.raises(CollectiveError, match=pattern) as info:
        parse_collective(text)
    assert info.value.hint
    assert info.value.text == text


def test_invalid_collective_syntax():
    with pytest.raises(NotationError, match="expected a collective"):
        parse_collective("Gather_X(A[I_X])")
    with pytest.raises(NotationError, match=r"expected '\)' closing the operand"):
        parse_collective("AllGather_X(A[I_X] B[J])")
    with pytest.raises(NotationError, match="expected an axis name"):
        parse_collective("AllGather_{,X}(A[I_X])")
    # an all-to-all's moves: axes, an arrow, a dim, separated by commas
    with pytest.raises(NotationError, match="expected '→' after the axes of a move in the subscript of AllToAll"):
        parse_collective("AllToAll_{X→H,Y}(P[B, H, S_Y, T_X])")
    with pytest.raises(NotationError, match="',' is not a dim name") as info:
        parse_collective("AllToAll_{X→,Y→B}(P[B, H, S_Y, T_X])")
    assert info.value.span == (12, 13) and "AllToAll_{X→H,Y→B}" in info.value.hint
    with pytest.raises(NotationError, match="expected ',' or '}' in the subscript of AllToAll but found 'Y'"):
        parse_collective("AllToAll_{X→H Y→B}(P[B, H, S_Y, T_X])")


def test_classify():
    assert classify("A[I_X]") == "array"
    assert classify("psum[I]") == "array"  # an array named psum
    assert classify("AllGather_X(A[I_X])") == "collective"
    assert isinstance(parse("A[I_X]"), Array)

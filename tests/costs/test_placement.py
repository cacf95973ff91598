"""What each device holds: local shapes, bytes, copies, HBM time; exact or symbolic."""

from __future__ import annotations

import pytest
import sympy

from symshard.algebra.symbols import W_hbm, axis, dim
from symshard.costs.placement import place, resolve_shape
from symshard.errors import DivisibilityError, ShapeError, UnknownAxisError, UnknownDtypeError
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware

I_, J, K = dim("I"), dim("J"), dim("K")
X, Y, Z = axis("X"), axis("Y"), axis("Z")


@pytest.mark.parametrize(
    ("array", "local"),
    [
        ("A[I, J]", (I_, J)),  # fully replicated
        ("A[I_X, J]", (I_ / X, J)),
        ("A[I_X, J_Y]", (I_ / X, J / Y)),
        ("A[I_XY, J]", (I_ / (X * Y), J)),
        ("A[I_YX, J]", (I_ / (X * Y), J)),
        ("A[I, J]{U_X}", (I_, J)),  # partial sums are full-size
        ("A[I_Z, J, K_X]", (I_ / Z, J, K / X)),
    ],
)
def test_symbolic_local_shape(array, local):
    p = place(array)
    assert p.local_shape == local
    assert p.bytes_per_device == 2 * sympy.prod(local)  # bf16 by default


def test_example_from_the_figure():
    # A[I_X, J_Y] with global shape (4, 128) on a 2x2 mesh: local (2, 64), a quarter per device
    p = place("A[I_X, J_Y]", "X=2,Y=2", "I=4,J=128")
    assert p.local_shape == (2, 64)
    assert p.bytes_per_device * 4 == p.logical_bytes


def test_jax_snippet_local_shapes():
    # the chapter's code: A (8, 2048) with P('X', 'Y') and B (2048, 8192) with P(None, 'Y') on a 4x2 mesh
    mesh = Mesh("X=4,Y=2")
    assert place("A[B_X, D_Y]", mesh, "B=8,D=2048").local_shape == (2, 1024)
    assert place("B[D, F_Y]", mesh, "D=2048,F=8192").local_shape == (2048, 4096)


def test_copies_partial_sums_and_totals():
    p = place("C[I_X, K]{U_Y}", "X=2,Y=4,Z=8", "I=16,K=16", dtype="fp32")
    assert p.copies == 8
    assert p.partial_sums == 4
    assert p.shards == 2
    assert p.total_bytes == p.bytes_per_device * 64 == p.logical_bytes * 8 * 4


@pytest.mark.parametrize(("dtype", "size"), [("fp32", 4), ("bfloat16", 2), ("fp8", 1), ("int8", 1), ("int4", 0.5)])
def test_dtypes(dtype, size):
    assert place("A[I]", None, "I=8", dtype=dtype).bytes_per_device == sympy.nsimplify(size) * 8


def test_hbm_time():
    p = place("A[I_X, J]", "X=4", "I=1024,J=1024")
    assert p.hbm_time() == p.bytes_per_device / W_hbm
    assert p.hbm_time("v5e") == sympy.Rational(2 * 256 * 1024, 82 * 10**10)
    assert p.hbm_time(hardware("v5e")) == p.hbm_time("tpu-v5e")


def test_mixed_symbolic_and_numeric():
    p = place("A[I_X, J]", "X=4", "I=1024")
    assert p.local_shape == (256, J)
    p = place("A[I_X, J]", "X", "I=1024,J=8")
    assert p.local_shape == (1024 / X, 8)


def test_divisibility():
    with pytest.raises(DivisibilityError, match=r"dim I of size 1000 does not split evenly over the 16 devices"):
        place("A[I_XY, J]", "X=8,Y=2", "I=1000,J=8")
    with pytest.raises(DivisibilityError) as info:
        place("A[I, J_X]", "X=3", "J=8")
    assert "make J a multiple of 3" in info.value.hint
    assert info.value.text == "A[I, J_X]" and info.value.span == (5, 6)


def test_unknown_axis():
    with pytest.raises(UnknownAxisError, match=r"mesh axis Z in 'A\[I_Z, J\]' is not in the mesh X=8,Y=2") as info:
        place("A[I_Z, J]", "X=8,Y=2")
    assert info.value.span == (4, 5)
    with pytest.raises(UnknownAxisError, match="mesh axis Z"):
        place("A[I_X, J]{U_Z}", "X=8")


@pytest.mark.parametrize(
    ("shape", "pattern"),
    [
        ("I=0", "is not a positive integer"),
        ("I=-4", "is not a positive integer"),
        ("I=1.5", "is not a positive integer"),
        ("I=abc", "is not a positive integer"),
        ("K=8", "has no such dim"),
        ("I=8,I=16", "dim I is given twice"),
        ({"I": 0}, "is not a positive integer"),
        ({"I": 2.5}, "is not a positive integer"),
        ({"I": [8]}, "is not a positive integer"),
        (42, "cannot read the shape"),
    ],
)
def test_bad_shapes(shape, pattern):
    with pytest.raises(ShapeError, match=pattern):
        place("A[I, J]", None, shape)


def test_size_spellings():
    assert resolve_shape("I=1_024,J=2^10,K=2**10", ("I", "J", "K"), context="") == {"I": 1024, "J": 1024, "K": 1024}
    assert resolve_shape("I=8e3,J=?", ("I", "J"), context="") == {"I": 8000, "J": J}
    assert resolve_shape({"I": 1024.0}, ("I",), context="") == {"I": 1024}


def test_unknown_dtype():
    with pytest.raises(UnknownDtypeError, match="unknown dtype 'bf61'"):
        place("A[I]", dtype="bf61")

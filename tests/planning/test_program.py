"""Programs: chains of sharded einsums over named arrays, with the collectives between them."""

from __future__ import annotations

import pytest
import sympy

from symshard.algebra.symbols import W_dcn, W_ici, W_nvlink, axis, dim
from symshard.errors import PlanError
from symshard.planning.program import Program, spread

B, D, F = dim("B"), dim("D"), dim("F")
X, Y = axis("X"), axis("Y")


def _fsdp_forward() -> Program:
    p = Program("fsdp")
    p.input("In[B_X, D]")
    p.input("W_in[D_X, F]", role="weight")
    p.input("W_out[F, D_X]", role="weight")
    p.matmul("In[B_X, D] · W_in[D, F] -> Tmp[B_X, F]")
    p.matmul("Tmp[B_X, F] · W_out[F, D] -> Out[B_X, D]")
    return p


def test_operands_are_gathered_and_the_stored_sharding_is_kept():
    p = _fsdp_forward()
    assert [s.kind for s in p.steps] == ["AllGather", "matmul", "AllGather", "matmul"]
    assert str(p.array("W_in")) == "W_in[D_X, F]"  # the gathered copy was transient
    assert p.versions("W_in") == (p.array("W_in"),)
    assert sympy.simplify(p.comm_time() - 4 * D * F / (spread("X") * W_ici)) == 0
    assert p.flops() == 4 * B * D * F / X


@pytest.mark.parametrize(
    ("target", "kinds"),
    [
        ("Out[B, D_Y]", ["AllGather", "matmul", "matmul", "ReduceScatter"]),  # partial sums scattered onto D
        ("Out[B, D]", ["AllGather", "matmul", "matmul", "AllReduce"]),  # ... or all-reduced
    ],
)
def test_partial_sums_are_reduced_into_the_requested_sharding(target, kinds):
    p = Program()
    p.input("In[B, D_Y]")
    p.input("W_in[D, F_Y]", role="weight")
    p.input("W_out[F_Y, D]", role="weight")
    p.matmul("In[B, D] · W_in[D, F_Y] -> Tmp[B, F_Y]", keep=("In",))
    p.matmul(f"Tmp[B, F_Y] · W_out[F_Y, D] -> {target}")
    assert [s.kind for s in p.steps] == kinds
    assert str(p.array("Out")) == target
    assert len(p.versions("In")) == 2  # the gathered copy is kept


def test_a_kept_copy_is_reused_without_communication():
    p = Program()
    p.input("In[B, D_Y]")
    p.input("W[D, F_Y]", role="weight")
    p.matmul("In[B, D] · W[D, F_Y] -> T[B, F_Y]", keep=("In",))
    p.matmul("In[B, D] · T[B, F_Y] -> G[D, F_Y]", phase="backward")
    assert p.collectives("backward") == []


def test_overlap_needs_independence():
    p = _fsdp_forward()
    first, second = p.collectives()
    assert p.overlaps(first) == ()  # the first matmul waits for it
    assert [m.index for m in p.overlaps(second)] == [1]  # W_out's gather runs under the first matmul


@pytest.mark.parametrize(
    ("fabric", "w", "factor"),
    [("ici", W_ici, 2), ("nvlink", W_nvlink, 2), ("dcn", W_dcn, 2)],
)
def test_fabrics_and_spread(fabric, w, factor):
    p = Program(fabric={"X": fabric}, spread={"X": 3})
    p.input("A[I, J]{U_X}")
    p.reshard("A[I, J]")  # an AllReduce: twice V over the axis bandwidth
    (step,) = p.collectives()
    v = 2 * dim("I") * dim("J")
    assert sympy.simplify(step.time - factor * v / (3 * w)) == 0
    assert step.fabric == fabric


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda p: p.matmul("Nope[B, D] · W[D, F] -> T[B, F]"), r"no array called Nope"),
        (lambda p: p.matmul("In[B_X, D] · W[D, F]"), r"names no result"),
        (lambda p: p.matmul("In[B_X, D] · W[D, F] -> In[B_X, F]"), r"exists already"),
        (lambda p: p.input("In[B, D]"), r"already has an array called In"),
        (lambda p: p.matmul("In[B_X, D] · W[D, F] -> T[B_X, F]", phase="sideways"), r"unknown phase"),
        (lambda p: p.reshard("In[B, D]{U_Y}"), r"no collective creates partial sums"),
    ],
)
def test_errors(build, match):
    p = Program()
    p.input("In[B_X, D]")
    p.input("W[D, F]", role="weight")
    with pytest.raises(PlanError, match=match):
        build(p)


def test_unknown_fabric():
    with pytest.raises(PlanError, match="unknown fabric 'wifi'"):
        Program(fabric={"X": "wifi"})


def test_kept_lists_what_the_backward_pass_reads():
    p = _fsdp_forward()
    p.input("dOut[B_X, D]", role="gradient")
    p.matmul("Tmp[B_X, F] · dOut[B_X, D] -> dW_out[F, D_X]", phase="backward")
    names = {n for n, _ in p.kept()}
    assert "Tmp" in names and "In" not in names

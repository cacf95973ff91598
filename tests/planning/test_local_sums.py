"""A dim summed inside one operand (issue 36, point 3): each operand sums its own dims first, a step of every
strategy, costed (its adds in the FLOPs, its bytes in HBM) and said in English and Chinese.

``A[I, J_X, L] · B[J_X, K] -> C[I, K]``: L is A's alone and the product drops it, so
``C = Σ_J (Σ_L A) · B``. XLA (``jnp.einsum``) sums L first, then multiplies and reduces; the planner does the
same (``Sum_L(A)``), so that its best plan is XLA's (checked against XLA in tests/test_jax_real_einsums.py).
Expected figures are worked out here from the sizes, not read from the planner.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import assume, given
from hypothesis import strategies as st

import symshard as ss
from symshard.algebra.symbols import axis, dim
from symshard.notation.arrays import Array
from symshard.notation.einsums import LocalSum, local_sums, matmul
from symshard.planning.planner import best_strategy, plan
from symshard.planning.strategies import PlanStep

ISSUE = "A[I, J_X, L] · B[J_X, K] -> C[I, K]"
SIZES = {"I": 64, "J": 64, "K": 64, "L": 16}
SHAPE = ",".join(f"{k}={v}" for k, v in SIZES.items())


# -- the step ---------------------------------------------------------------------------------------

SUMS = [
    # (operand, summed dims, what each device holds after)
    ("A[I, J_X, L]", ("L",), "A[I, J_X]"),  # L whole on every device: a plain sum
    ("A[I, J, L_X]", ("L",), "A[I, J]{U_X}"),  # L split: partial sums over X
    ("A[I_Y, L_X, M]", ("L", "M"), "A[I_Y]{U_X}"),  # two dims at once
    ("A[I, L_XY]{U_Z}", ("L",), "A[I]{U_XYZ}"),  # partial sums already there stay
]


@pytest.mark.parametrize(("operand", "dims", "out"), SUMS)
def test_a_local_sum_leaves_partial_sums_where_its_dims_were_split(operand, dims, out):
    s = LocalSum(Array.parse(operand), dims)
    assert s.output == Array.parse(out)
    assert str(s) == f"{s.label}({operand}) -> {out}"


def test_the_summed_dims_are_found_per_operand():
    lhs, rhs = local_sums(matmul("A[I, J, L] · B[J, K, M_X] -> C[I, K]"))
    assert lhs is not None and rhs is not None
    assert (lhs.dims, rhs.dims, str(rhs.output)) == (("L",), ("M",), "B[J, K]{U_X}")
    assert local_sums(matmul("A[I, J] · B[J, K] -> C[I, K]")) == (None, None)
    assert str(matmul(ISSUE).product) == "A[I, J_X] · B[J_X, K] -> C[I, K]"


# -- in every strategy, costed -----------------------------------------------------------------------


def test_every_strategy_sums_first_and_counts_the_adds_and_bytes():
    p = plan(ISSUE, "X=4,Y=2", SHAPE, dtype="fp32", hardware="tpu-v5e", all=True)
    block = SIZES["I"] * SIZES["J"] // 4 * SIZES["L"]  # A's block: J split over X
    summed = block // SIZES["L"]
    for s in p.strategies:
        first = s.steps[0]
        assert isinstance(first.op, LocalSum) and first.role == "lhs" and first.label() == "Sum_L(A)"
        assert first.flops == block - summed  # one add per element, less one per sum
        assert s.raw_flops == s.raw_product_flops + block - summed
        assert s.name.startswith("Sum_L(A) → ")
    best = p.strategies[0]
    assert best.name == "Sum_L(A) → matmul → AllReduce_X(C)"
    # the product is the summed A's: 2·I·(J/4)·K, not 2·I·(J/4)·K·L
    assert best.raw_product_flops == 2 * SIZES["I"] * SIZES["J"] // 4 * SIZES["K"]
    # HBM: the sum reads A's block and writes the summed one, then the product reads both blocks, writes C
    fp32 = 4
    product = (summed + SIZES["J"] // 4 * SIZES["K"] + SIZES["I"] * SIZES["K"]) * fp32
    assert best.raw_hbm_bytes == product + (block + summed) * fp32
    # memory: A stays resident beside its sum
    assert best.raw_memory >= (block + summed + SIZES["J"] // 4 * SIZES["K"]) * fp32


def test_a_sharded_summed_dim_is_reduced_before_or_after_the_product():
    p = plan("A[I, J, L_X] · B[J, K] -> C[I, K]", "X=4,Y=2", SHAPE, dtype="fp32", hardware="tpu-v5e", all=True)
    names = {s.name for s in p.strategies}
    # the partial sums of A over X: all-reduced (XLA's way), reduce-scattered, or kept through the product
    assert "Sum_L(A) → AllReduce_X(A) → matmul" in names
    assert "Sum_L(A) → ReduceScatter_{X,I}(A) → matmul → AllGather_X(C)" in names
    assert "Sum_L(A) → matmul → AllReduce_X(C)" in names


def test_the_winners_the_listing_and_the_best_agree():
    for shape_of in ("X=4,Y=2", "X=2,Y=2,Z=2"):
        listed = plan(ISSUE, shape_of, SHAPE, dtype="fp32", hardware="tpu-v5e", all=True)
        winners = plan(ISSUE, shape_of, SHAPE, dtype="fp32", hardware="tpu-v5e")
        fastest = best_strategy(ISSUE, shape_of, SHAPE, dtype="fp32", hardware="tpu-v5e")
        assert listed.strategies[0].name == winners.strategies[0].name == fastest.name
        assert listed.strategies[0].raw_time == winners.strategies[0].raw_time == fastest.raw_time
        assert listed.strategy(fastest.name).name == fastest.name  # found by name too


def test_symbolic_plans_sum_first_too():
    p = plan("A[I, J_X, L] · B[J_X, K, M] -> C[I, K]")
    I, J, K, L, M = (dim(n) for n in "IJKLM")  # noqa: E741 - the dims of the einsum
    X = axis("X")
    adds = (I * J * L - I * J) / X + (J * K * M - J * K) / X  # each operand's block, less its sums
    assert p.strategies
    for s in p.strategies:
        sums = [st for st in s.steps if isinstance(st.op, LocalSum)]
        assert [st.label() for st in sums] == ["Sum_L(A)", "Sum_M(B)"] and s.steps[0] is sums[0]
        assert sympy.simplify(sympy.Add(*(st.flops for st in sums)) - adds) == 0
        assert sympy.simplify(s.flops_per_device - sympy.sympify(s.raw_product_flops) - adds) == 0


def test_a_strategy_costed_at_other_sizes_keeps_its_steps():
    small = plan(ISSUE, "X=4,Y=2", SHAPE, dtype="fp32", hardware="tpu-v5e")
    big = plan(ISSUE, "X=4,Y=2", "I=4096,J=4096,K=4096,L=64", dtype="fp32", hardware="tpu-v5e")
    again = big.source.rebuild(small.strategies[0])
    assert again is not None and again.name == small.strategies[0].name
    assert again.raw_product_flops == 2 * 4096 * 4096 // 4 * 4096
    assert again.raw_flops - again.raw_product_flops == 4096 * 4096 // 4 * (64 - 1)


@given(
    st.sampled_from(["L", "L_X", "L_Y", "L_XY"]),
    st.sampled_from(["J", "J_X", "J_Y"]),
    st.sampled_from([2, 4, 8]),
)
def test_the_adds_are_the_blocks_elements_less_the_sums(l_dim, j_dim, l_size):
    assume(not set(l_dim[2:]) & set(j_dim[2:]))  # an axis shards one dim at most
    mm = f"A[I, {j_dim}, {l_dim}] · B[{j_dim}, K] -> C[I, K]"
    sizes = {"I": 16, "J": 16, "K": 8, "L": l_size * 4}
    p = plan(mm, "X=2,Y=2", ",".join(f"{k}={v}" for k, v in sizes.items()), dtype="fp32", hardware="tpu-v5e")
    arr = Array.parse(f"A[I, {j_dim}, {l_dim}]")
    shards = {d.name: 2 ** len(d.axes) for d in arr.dims}
    block = Fraction(sizes["I"] * sizes["J"] * sizes["L"], shards["J"] * shards["L"])
    summed = Fraction(sizes["I"] * sizes["J"], shards["J"])
    for s in p.strategies:
        sums = [st for st in s.steps if isinstance(st.op, LocalSum)]
        assert len(sums) == 1 and sums[0].flops == block - summed
        assert s.raw_flops - s.raw_product_flops == block - summed


# -- said, in both languages, and drawn -----------------------------------------------------------------


def test_the_sum_is_explained_in_english_and_chinese():
    p = plan("A[I, J, L_X] · B[J, K] -> C[I, K]", "X=4,Y=2", SHAPE, dtype="fp32", hardware="tpu-v5e")
    s = p.strategy("Sum_L(A) → AllReduce_X(A) → matmul")
    english = ss.explain(s, mesh=p.mesh).splitlines()
    chinese = ss.explain(s, "zh", mesh=p.mesh).splitlines()
    assert english[0] == (
        "Each device sums its block of A over L, which only A has and the product drops, before the product: "
        "L is split along X, so each device holds a partial sum, A[I, J]{U_X}, to be added up over X."
    )
    assert chinese[0].startswith("在相乘之前，每个设备先沿 L 对自己持有的 A 块求和") and "A[I, J]{U_X}" in chinese[0]
    whole = plan(ISSUE, "X=4,Y=2", SHAPE, dtype="fp32", hardware="tpu-v5e").strategies[0]
    assert "with no communication: A[I, J_X]." in ss.explain(whole.steps[0])
    assert len(english) == len(chinese) == len(s.steps)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sum_in_the_reports(lang, capsys):
    from symshard.cli import main

    argv = ["matmul", ISSUE, "--mesh", "X=4,Y=2", "--shape", SHAPE, "--hw", "tpu-v5e", "--top", "1", "--explain"]
    assert main([*argv, "--lang", lang]) == 0
    out = capsys.readouterr().out
    assert "1. Sum_L(A) → matmul → AllReduce_X(C)" in out and "Sum_L(A[I, J_X, L]) -> A[I, J_X]" in out
    said = (
        "Each device sums its block of A over L" if lang == "en" else "在相乘之前，每个设备先沿 L 对自己持有的 A 块求和"
    )
    assert said in out


def test_the_sum_in_the_html_and_the_json(capsys):
    import json

    from symshard.cli import main
    from symshard.report.html import strategy_html, strategy_name

    p = plan(ISSUE, "X=4,Y=2", SHAPE, dtype="fp32", hardware="tpu-v5e")
    assert "Sum" in strategy_name(p.strategies[0]) and "Sum" in strategy_html(p.strategies[0])
    argv = ["matmul", ISSUE, "--mesh", "X=4,Y=2", "--shape", SHAPE, "--hw", "tpu-v5e", "--dtype", "fp32", "--json"]
    assert main(argv) == 0
    best = json.loads(capsys.readouterr().out)["strategies"][0]
    assert best["steps"][0] == "Sum_L(A[I, J_X, L]) -> A[I, J_X]"
    assert best["explanation"][0].startswith("Each device sums its block of A over L")
    assert best["flops_per_device"] == p.strategies[0].raw_flops


def test_a_plan_step_of_a_sum_has_no_timing():
    step = PlanStep("lhs", LocalSum(Array.parse("A[I, L]"), ("L",)), None, 3)
    assert not step.is_communication and step.label() == "Sum_L(A)"

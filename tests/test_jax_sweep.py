"""The sweep: every sharding of A[I, J] · B[J, K] -> C[I, K] on a 4×2 mesh, checked against JAX and XLA.

11 shardings per array (each mesh axis on at most one dim, two axes on one dim in both
orders) make 1331 cases. For each: every strategy symshard proposes runs under
``shard_map`` and must give the unsharded product with symshard's block shapes; XLA
compiles the same product with the same shardings, and its collectives are matched
against symshard's strategies. Compiled programs and operand legs are shared between
cases, so the whole sweep takes a few minutes on two cores. Marked ``jax``.
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pytest

pytest.importorskip("jax")

from symshard.jax.sweep import Sweep, sweep

pytestmark = pytest.mark.jax

AGREEMENT_TARGET = 0.95


@pytest.fixture(scope="module")
def result() -> Sweep:
    return sweep("X=4,Y=2", "I=64,J=64,K=64", dtype="fp32", hardware="tpu-v5e")


def test_every_case_is_there(result):
    assert len(result.cases) == 11**3
    assert len({v.matmul for v in result.cases}) == 11**3


def test_every_strategy_runs_and_gives_the_product(result):
    failed = [(v.matmul, e.strategy) for v in result.cases for e in v.executions if not (e.correct and e.shapes_ok)]
    assert result.strategies_run == sum(v.strategies for v in result.cases)
    assert all(e.exact for v in result.cases for e in v.executions)  # small integers: no tolerance
    assert failed == []


def test_flops_agree_where_xla_repeats_no_work(result):
    checked = [v for v in result.cases if not v.xla_repeats_work]
    assert checked
    assert [v.matmul for v in checked if v.flops_agree is not True] == []
    # and against the strategy XLA's plan matched, wherever there is one
    assert [v.matmul for v in result.cases if v.match and v.flops_agree is not True] == []


def test_every_disagreement_has_a_reason(result):
    for v in result.disagreements:
        assert v.reason and "closest symshard strategy" in v.reason, v.matmul


@pytest.mark.xfail(
    strict=True,
    reason="80.2 %, not 95 %: XLA still takes resharding routes symshard's planner lacks (a collective-permute "
    "combined with an all-to-all or ahead of a reduction; gathers over device groups that are not whole mesh axes; "
    "a two-axis reduce-scatter the CPU lowers as two all-reduces and a slice; slicing along an idle axis, then "
    "moving over more axes at once): see the docs page's disagreements",
)
def test_agreement_target(result):
    assert result.agreement >= AGREEMENT_TARGET


def test_bf16_cases_agree_and_run():
    # bf16: on CPU the dot and its reductions run in f32 (recorded as a lowering note); compared on elements
    small = sweep("X=4,Y=2", "I=64,J=64,K=64", dtype="bf16", hardware="tpu-v5e", run="best", limit=40)
    assert all(v.executed_ok for v in small.cases)
    assert any("bf16 on CPU" in note for v in small.cases for note in v.lowering)
    f32 = sweep("X=4,Y=2", "I=64,J=64,K=64", dtype="fp32", hardware="tpu-v5e", run="none", limit=40)
    assert [v.match for v in small.cases] == [v.match for v in f32.cases]

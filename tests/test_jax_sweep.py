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


# every case XLA plans with whole mesh axes, and no roundabout permute, agrees (1253 of 1331); the 78
# others: XLA shards by part of X (72), or permutes shards onto X only to gather them over X (6)
MATCHES_FLOOR = 1253


def test_agreement_does_not_fall(result):
    assert sum(v.match for v in result.cases) >= MATCHES_FLOOR


def test_every_disagreement_is_one_of_the_known_kinds(result):
    for v in result.disagreements:
        assert "as Shardy writes them" in v.reason or "a roundabout route" in v.reason, (v.matmul, v.reason)


@pytest.mark.xfail(
    strict=True,
    reason="94.1 %, not 95 %: in 72 cases XLA shards by part of mesh axis X (its sub-axes X:(1)2 and X:(2)2, "
    "which symshard's notation cannot write), in 6 it permutes shards onto X only to gather them over X",
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

"""The sweep: every sharding of A[I, J] · B[J, K] -> C[I, K] on a 4×2 mesh, checked against JAX and XLA.

11 shardings per array (each mesh axis on at most one dim, two axes on one dim in both
orders) make 1331 cases. For each: every strategy symshard proposes runs under
``shard_map`` and must give the unsharded product with symshard's block shapes; XLA
compiles the same product with the same shardings, and its collectives are matched
against symshard's strategies; where XLA shards by part of a mesh axis, they are matched
again on the refined mesh (the same devices, the split axis as two axes), and a match there
counts apart, only if the matched strategy runs correctly. Compiled programs and operand legs are shared between
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


# every case XLA plans with whole mesh axes agrees (1259 of 1331, the 6 in which XLA permutes shards
# onto X only to gather them over X included); the 72 others: XLA shards by part of X
MATCHES_FLOOR = 1259


def test_agreement_does_not_fall(result):
    assert sum(v.match for v in result.cases) >= MATCHES_FLOOR


def test_every_disagreement_is_one_of_the_known_kinds(result):
    # only sub-axes are left: every whole-axis plan of XLA's is a symshard strategy
    for v in result.disagreements:
        assert "as Shardy writes them" in v.reason, (v.matmul, v.reason)


def test_sub_axis_cases_are_checked_on_the_refined_mesh(result):
    # exactly the cases whose XLA plan shards by part of X are re-planned, on P=2,Q=2,Y=2 (X = P·Q)
    refined = [v for v in result.cases if v.refined is not None]
    assert [v.matmul for v in refined] == [
        v.matmul for v in result.disagreements if "as Shardy writes them" in v.reason
    ]
    assert all(v.refined.mesh == "P=2,Q=2,Y=2" and v.refined.label == "X=P·Q" for v in refined)
    assert all("X" not in v.refined.matmul for v in refined)
    assert all(":" not in c for v in refined for c in v.refined.xla)  # every group is whole refined axes
    # a refined match is a strategy with XLA's collectives that ran correctly under shard_map
    for v in result.cases:
        if v.refined_match:
            assert v.matched_on == "refined mesh X=P·Q" and not v.match
            assert v.refined.executions and all(e.correct and e.shapes_ok and e.exact for e in v.refined.executions)
        else:
            assert v.matched_on == ("mesh" if v.match else None)
    data = result.to_json()
    assert data["matches"] == sum(v.match for v in result.cases)
    assert data["matches_refined"] == result.matches_refined
    assert data["agreement_combined"] == round((data["matches"] + data["matches_refined"]) / data["cases"], 4)


def test_refined_mesh_is_the_same_devices():
    # A[I, J] · B[J, K_X] -> C[I, K_Y]: XLA gathers over X:(1)2; on the refined mesh B is B[J, K_PQ] and
    # XLA's groups are whole axes P, Q, Y; a refined strategy with its collectives runs under shard_map
    import importlib

    from symshard.jax.execute import execute
    from symshard.planner import plan

    verify_module = importlib.import_module("symshard.jax.verify")
    v = verify_module.verify(
        "A[I, J] · B[J, K_X] -> C[I, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", dtype="fp32", hardware="tpu-v5e", run="none"
    )
    r = v.refined
    assert r is not None and not v.match
    assert r.matmul == "A[I, J] · B[J, K_PQ] -> C[I, K_Y]"
    assert [c.split(" (")[0] for c in r.xla] == ["CollectivePermute_P,Q,Y", "AllGather_P"]
    assert "on the refined mesh X=P·Q (P=2,Q=2,Y=2" in v.reason
    # XLA permutes B's blocks to K_YP (P kept as a minor axis), then gathers P before the dot
    assert r.match and r.matched == "CollectivePermute_{PQY,K_YP}(B) → AllGather_P(B) → matmul"
    assert v.matched_on == "refined mesh X=P·Q"
    p = plan(r.matmul, r.mesh, "I=64,J=64,K=64", dtype="fp32", hardware="tpu-v5e", routes="xla")
    same = [s for s in p.strategies if s.name == r.matched]
    assert len(same) == 1
    e = execute(p, same[0])
    assert e.correct and e.shapes_ok


def test_agreement_target(result):
    # counting refined-mesh matches: each is a strategy that ran correctly under shard_map
    assert result.agreement_combined >= AGREEMENT_TARGET


# of the 72 sub-axis cases, 70 are a strategy on the refined mesh that runs correctly; in the 2 left
# XLA's permute pairs devices across P,Q,Y where symshard's, with the same collectives and FLOPs,
# crosses only Q,Y
REFINED_FLOOR = 70


def test_refined_matches_do_not_fall(result):
    assert result.matches_refined >= REFINED_FLOOR


def test_bf16_cases_agree_and_run():
    # bf16: on CPU the dot and its reductions run in f32 (recorded as a lowering note); compared on elements
    small = sweep("X=4,Y=2", "I=64,J=64,K=64", dtype="bf16", hardware="tpu-v5e", run="best", limit=40)
    assert all(v.executed_ok for v in small.cases)
    assert any("bf16 on CPU" in note for v in small.cases for note in v.lowering)
    f32 = sweep("X=4,Y=2", "I=64,J=64,K=64", dtype="fp32", hardware="tpu-v5e", run="none", limit=40)
    assert [v.match for v in small.cases] == [v.match for v in f32.cases]

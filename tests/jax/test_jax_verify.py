"""``symshard verify`` at scale: 16-device meshes read right, samples, progress, strategies that cannot
run, a time limit, and FLOPs compared two ways. In JAX on 16 simulated CPU devices (see conftest);
marked ``jax``.
"""

from __future__ import annotations

import json
import re

import pytest

jax = pytest.importorskip("jax")

import symshard as ss  # noqa: E402
from symshard.cli import main  # noqa: E402
from symshard.jax import hlo  # noqa: E402
from symshard.jax.execution import undivided  # noqa: E402
from symshard.jax.running import choose  # noqa: E402
from symshard.jax.verification import verify  # noqa: E402
from symshard.jax.xla_plans import xla_plan  # noqa: E402

pytestmark = pytest.mark.jax

# the issue's reproducer: on 16 devices the partition-offset table has 16 entries, which XLA's
# default printer elides as constant({...}); the reduce-scatter must still be read back
REPRODUCER = "A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K_Y]"

# attention's scores where H = 4 is split over X·Y = 8 devices in some listed strategies (the issue's)
UNDIVIDED = ("Q[B_X, H, S, E] · R[B, H_X, T, E] -> C[B_X, H, S, T]", "X=4,Y=2", "B=8,H=4,S=16,T=16,E=32")


def test_the_module_is_read_with_its_large_constants():
    p = ss.plan(REPRODUCER, "X=4,Y=4", "I=64,J=64,K=64")
    x = xla_plan(p)
    assert hlo.ELIDED not in x.hlo
    # the table XLA's own printer elides is there, all 16 entries
    tables = [line for line in x.hlo.splitlines() if " constant({" in line and "[16]" in line]
    assert tables and all(line.count(",") >= 15 for line in tables)
    # XLA's default text elides it (the reason the module is printed again), module_text keeps it
    import symshard.jax as sj

    shardings = [sj.named_sharding(a, "X=4,Y=4") for a in ("A[I_X, J_Y]", "B[J_Y, K]", "C[I_X, K_Y]")]
    fn = jax.jit(lambda a, b: a @ b, in_shardings=tuple(shardings[:2]), out_shardings=shardings[2])
    compiled = fn.lower(*[jax.ShapeDtypeStruct((64, 64), jax.numpy.float32)] * 2).compile()
    assert hlo.ELIDED in compiled.as_text() and hlo.ELIDED not in hlo.module_text(compiled)
    assert hlo.collectives(hlo.module_text(compiled), 16)[0].kind == "ReduceScatter"
    assert hlo.collectives(compiled.as_text(), 16)[0].kind == "AllReduce"  # the false disagreement


def test_the_16_device_reproducer_agrees():
    v = verify(REPRODUCER, "X=4,Y=4", "I=64,J=64,K=64", run="best")
    assert v.match and v.rank == 1 and v.matched == "matmul → ReduceScatter_{Y,K}(C)"
    assert v.xla == ("ReduceScatter_Y (1024 elements, 4096 B as f32, read back from all-reduce + dynamic-slice)",)


def test_the_reproducer_from_the_command_line(capsys):
    argv = ["verify", REPRODUCER, "--mesh", "X=4,Y=4", "--shape", "I=64,J=64,K=64", "--run", "best"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "agreement  yes: XLA's plan is symshard's strategy 1, matmul → ReduceScatter_{Y,K}(C)" in out


@pytest.mark.parametrize(
    ("mesh", "case"),
    [
        ("X=2,Y=2,Z=4", "A[I_Z, J_Y] · B[J_Y, K_X] -> C[I_Z, K_XY]"),  # a reduce-scatter over Y, 16 devices
        ("X=4,Y=4", "A[I, J_XY] · B[J_XY, K] -> C[I_X, K_Y]"),  # two reduce-scatters, 16 devices
        ("X=8", "A[I, J_X] · B[J_X, K] -> C[I_X, K]"),  # one axis of 8
    ],
)
def test_reduce_scatters_on_16_and_8_devices_are_read_back(mesh, case):
    v = verify(case, mesh, "I=96,J=48,K=80", run="best")
    assert v.match and v.executed_ok, v.reason
    assert any("ReduceScatter" in c and "read back" in c for c in v.xla)


# -- which strategies run ----------------------------------------------------------------------------


def test_a_sample_is_seeded_and_keeps_the_best_and_xlas():
    p = ss.plan("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", routes="xla")
    keep = p.strategies[40]
    one = choose(p, "all", sample=10, seed=1, keep=keep)
    assert one == choose(p, "all", sample=10, seed=1, keep=keep)  # the same seed, the same strategies
    assert one != choose(p, "all", sample=10, seed=2, keep=keep)
    assert len(one) == 10 and one[0] is p.strategies[0] and keep in one
    assert [p.strategies.index(s) for s in one] == sorted(p.strategies.index(s) for s in one)  # plan order
    assert choose(p, "all", sample=len(p.strategies) + 5) == list(p.strategies)
    assert choose(p, "best") == [p.strategies[0]] and choose(p, "none") == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sample", "0"], "--sample 0 runs no strategy"),
        (["--sample", "3", "--run", "best"], "--sample 3 draws from all strategies, but --run is best"),
        (["--time-limit", "0"], "--time-limit 0 leaves no time"),
    ],
)
def test_bad_sample_and_time_limit_options(argv, message, capsys):
    base = ["verify", REPRODUCER, "--mesh", "X=4,Y=2", "--shape", "I=64,J=64,K=64"]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1  # one line, no traceback


def test_the_issue_case_lists_only_strategies_that_run(capsys):
    # the issue's case: --run all used to end with "JAX's block has shape (8, 0, 16, 16)" and no report;
    # now the planner lists no strategy that splits H = 4 over 8 devices, so every one runs
    symbolic = ss.plan(UNDIVIDED[0], UNDIVIDED[1], routes="xla")
    numeric = ss.plan(UNDIVIDED[0], UNDIVIDED[1], UNDIVIDED[2], hardware="tpu-v5e", routes="xla")
    splits_h = [s for s in symbolic.strategies if undivided(numeric, s)]
    assert splits_h and any(
        re.search(r"splits H = 4 over (X·Y|Y·X), 8 devices", undivided(numeric, s)) for s in splits_h
    )
    assert not any(undivided(numeric, s) for s in numeric.strategies)
    names = {s.name for s in numeric.strategies}
    assert not names & {s.name for s in splits_h}
    argv = ["verify", UNDIVIDED[0], "--mesh", UNDIVIDED[1], "--shape", UNDIVIDED[2], "--sample", "6", "--seed", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "not runnable" not in out and "(a sample: 6 of " in out and "seed 3)" in out
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unrunnable"] == [] and len(data["executed"]) == data["chosen"] == 6
    assert data["executed_ok"] and data["not_run"] == 0


def test_every_listed_strategy_runs():
    # every strategy of a small plan runs correctly: those that would split J = 2 over 4 devices are not listed
    v = verify("A[I_X, J] · B[J, K] -> C[I_X, K]", "X=4", "I=8,J=2,K=4", run="all")
    assert len(v.executions) == v.strategies == v.chosen and not v.unrunnable and v.executed_ok
    assert not any("J_X" in e.strategy for e in v.executions)


def test_a_time_limit_stops_the_runs_and_says_so(capsys):
    v = verify(REPRODUCER, "X=4,Y=2", "I=64,J=64,K=64", run="all", time_limit=1e-9)
    assert v.not_run == v.chosen == v.strategies and not v.executions and v.time_limit_reached
    assert "did not run; run a seeded sample with --sample N" in v.text()
    argv = ["verify", REPRODUCER, "--mesh", "X=4,Y=2", "--shape", "I=64,J=64,K=64", "--time-limit", "0.000001"]
    assert main([*argv, "--run", "all"]) == 0
    out = capsys.readouterr().out
    assert f"time limit  1e-06 s reached: {v.strategies} of the {v.strategies} chosen strategies did not run" in out


def test_by_default_a_large_plan_runs_a_seeded_sample_and_says_so(capsys):
    from symshard.jax.running import AUTO_RUN

    small = verify("A[I_X, J] · B[J, K] -> C[I_X, K]", "X=4", "I=8,J=2,K=4")
    assert small.strategies <= AUTO_RUN and small.chosen == small.strategies and not small.sampled_by_default
    assert small.sample is None and "a sample" not in small.text()
    # 259 strategies: a seeded sample of AUTO_RUN, the best and XLA's match among them (the time limit
    # leaves them unrun, which keeps the test quick)
    v = verify(REPRODUCER, "X=4,Y=2", "I=64,J=64,K=64", time_limit=1e-9)
    assert v.strategies > AUTO_RUN and v.chosen == v.not_run == AUTO_RUN == v.sample and v.sampled_by_default
    assert f"(a sample: {AUTO_RUN} of {v.strategies}, seed 0, since there are more than {AUTO_RUN}" in v.text()
    assert v.to_json()["sampled_by_default"] is True
    every = verify(REPRODUCER, "X=4,Y=2", "I=64,J=64,K=64", run="all", time_limit=1e-9)
    assert every.chosen == every.strategies and not every.sampled_by_default
    asked = verify(REPRODUCER, "X=4,Y=2", "I=64,J=64,K=64", sample=7, time_limit=1e-9)
    assert asked.chosen == 7 and not asked.sampled_by_default and "since there are more" not in asked.text()
    argv = ["verify", REPRODUCER, "--mesh", "X=4,Y=2", "--shape", "I=64,J=64,K=64", "--time-limit", "0.000001"]
    assert main(argv) == 0
    assert f"of the {AUTO_RUN} chosen strategies did not run" in capsys.readouterr().out


def test_progress_shows_on_a_terminal_only(capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    argv = ["verify", REPRODUCER, "--mesh", "X=4,Y=2", "--shape", "I=64,J=64,K=64", "--sample", "3"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "\rrunning strategies: 3 of 3 (" in captured.err and "running" not in captured.out
    # before the runs, what takes the time on a large plan, then overwritten in place
    assert captured.err.startswith("\rlisting symshard's strategies, compiling XLA's plan")
    assert captured.err.rstrip("\n").split("\r")[-1].startswith("running strategies: 3 of 3")
    assert main([*argv, "--json"]) == 0  # never with --json
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["chosen"] == 3
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)  # nor when stderr is not a terminal
    assert main(argv) == 0
    assert capsys.readouterr().err == ""


# -- FLOPs, two ways -----------------------------------------------------------------------------------


def test_dot_and_total_flops_are_compared_apart(capsys):
    # a reduce-scatter: XLA's total counts one add per element of the all-reduce it writes; symshard's
    # count is the dots'
    v = verify("A[I, J_X] · B[J_X, K] -> C[I, K_X]", "X=4,Y=2", "I=64,J=64,K=64", run="best")
    assert v.match and v.flops_agree is True and v.total_flops_agree is False
    assert v.xla_reduction_flops == 64 * 64  # the all-reduce's result: the whole C on every device
    assert 0 <= v.xla_flops - v.xla_dot_flops - v.xla_reduction_flops <= 16
    assert "symshard's count equals the dots, not the total" in v.text()
    assert f"{v.xla_reduction_flops:,} adds of reductions" in v.text()
    # no collective: nothing but the dots, so both agree
    free = verify("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", run="none")
    assert free.flops_agree is True and free.total_flops_agree is True


def test_a_disagreement_names_both_plans_costs():
    # XLA shards by part of X here: no strategy on the mesh is its plan; both plans' costs are named
    v = verify("A[I, J] · B[J, K_X] -> C[I, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", run="none")
    assert not v.match
    said = f"per device, XLA's plan receives {v.xla_bytes:,} B in its collectives and its dots do {v.xla_dot_flops:,}"
    assert said in v.text()
    assert f"symshard's best receives {v.best_bytes:,} B and its product does {v.best_flops:,} FLOPs" in v.text()
    # XLA's device receives less here than symshard's best's on the mesh: planner work, said so
    assert v.xla_cheaper == (v.xla_bytes < v.best_bytes and v.xla_dot_flops <= v.best_flops)


# -- sub-axes and bf16 ---------------------------------------------------------------------------------


def test_axes_in_parts_are_the_same_devices():
    # A[I, J] · B[J, K_X] -> C[I, K_Y]: XLA gathers over X:(1)2; with X in parts X1·X2 B is B[J, K_{X1,X2}] and
    # XLA's groups are whole axes X1, X2, Y; a strategy with its collectives runs under shard_map
    from symshard.jax.execution import execute

    v = verify("A[I, J] · B[J, K_X] -> C[I, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", run="none")
    r = v.refined
    assert r is not None and not v.match
    assert r.matmul == "A[I, J] · B[J, K_{X1,X2}] -> C[I, K_Y]" and r.split == "X=2x2"
    assert [c.split(" (")[0] for c in r.xla] == ["CollectivePermute_X1,X2,Y", "AllGather_X1"]
    assert "with axes in parts X=X1·X2 (X1=2,X2=2,Y=2" in v.reason and "symshard matmul --split X=2x2" in v.reason
    # XLA permutes B's blocks to K_{Y,X1} (X1 kept as a minor axis), then gathers X1 before the dot
    assert r.match and r.matched == "CollectivePermute_{X1,X2,Y,K_{Y,X1}}(B) → AllGather_{X1}(B) → matmul"
    assert v.matched_on == "mesh in parts X=X1·X2"
    # the same strategy from the planner's own split, run again
    p = ss.plan(v.matmul, "X=4,Y=2", "I=64,J=64,K=64", routes="xla", split="X=2x2")
    assert str(p.mesh) == r.mesh and str(p.matmul) == r.matmul
    same = [s for s in p.strategies if s.name == r.matched]
    assert len(same) == 1
    e = execute(p, same[0])
    assert e.correct and e.shapes_ok


@pytest.mark.slow(reason="searches millions of orders with axes in parts for XLA's plan: about 10 s")
def test_axes_in_parts_too_many_to_list_are_searched():
    # Z=4 split in two on a 3-axis mesh makes four axes; with 3-D arrays that plan has millions of strategies,
    # too many to list and rank: it is searched for XLA's collectives instead (here none has them all)
    v = verify(
        "A[G_Z, I_Y, J] · B[G_X, J_Y, K_Z] -> C[G_X, I_Z, K_Y]", "X=2,Y=2,Z=4", "G=16,I=48,J=32,K=80", run="none"
    )
    r = v.refined
    assert not v.match and r is not None and r.searched and not r.match and r.rank is None
    assert r.strategies > 1_000_000 and r.mesh == "X=2,Y=2,Z1=2,Z2=2"
    assert "none of symshard's 1,864,019 strategies, nor of XLA's further orders" in v.reason


def test_a_match_among_xlas_further_orders_is_found_by_search_and_runs():
    # a batched matmul on three axes: its plan lists XLA's other orders, not the further ones (millions);
    # XLA's plan is one of those, found by a search for its collectives, placed among the listed, and run
    v = verify("A[G, I_Y, J_Z] · B[G, J, K_X] -> C[G_Y, I_XZ, K]", "X=2,Y=2,Z=2", "G=16,I=48,J=32,K=80", run="none")
    assert v.match and v.further and v.matched_on == "mesh"
    assert v.matched.startswith("DynamicSlice_{X,G}(A) → AllToAll_{Z,I}(A) → CollectivePermute_{XY,G_Y,I_XZ}(A)")
    assert 1 < v.rank <= v.strategies + 1
    assert len(v.executions) == 1 and v.executed_ok  # run though run="none": a match is always checked
    assert "one of XLA's further orders" in v.text()
    assert v.to_json()["further"] is True


ODD = "I=96,J=48,K=80"
THREE_PERMUTES = "A[I, J_XY] · B[J_Y, K_X] -> C[I, K_Y]"


def test_a_route_no_plan_lists_is_found_step_by_step_and_runs():
    # XLA permutes A, gathers it over X and permutes it again, then permutes B: a route of symshard's collectives
    # that no plan lists (nor XLA's further orders); found step by step from XLA's collectives, run, and said so
    v = verify(THREE_PERMUTES, "X=4,Y=4", ODD, run="none")
    assert v.match and v.routed and not v.further and not v.planned and v.matched_on == "mesh"
    assert v.matched == (
        "CollectivePermute_{XY,J_YX}(A) → AllGather_X(A) → CollectivePermute_{XY,J_X}(A) → "
        "CollectivePermute_{XY,J_X,K_Y}(B) → matmul → AllReduce_X(C)"
    )
    # its place among the 55 strategies `matmul --all` ranks (it is not one of them): after every one
    assert v.rank == 56 and v.ranked == 55 and v.strategies == 1040 and not v.among_ranked
    assert len(v.executions) == 1 and v.executed_ok and v.flops_agree
    assert "a route of symshard's collectives that its planner does not list, found step by step" in v.text()
    assert v.to_json()["routed"] is True
    # counted by the bytes each device receives, XLA's route (five collectives) receives less than symshard's best
    # (four, fewer hops: at these tiny sizes latency ranks) and its dots do less: shown side by side, planner work
    assert (v.xla_bytes, v.xla_dot_flops) < (v.best_bytes, v.best_flops) and v.xla_dot_flops < v.best_flops
    assert v.xla_cheaper and v.planner_work and "XLA's plan is cheaper: planner work" in v.text()


def test_a_route_found_step_by_step_counts_only_if_it_runs(monkeypatch):
    import symshard.jax.verification as verification

    monkeypatch.setattr(verification, "attempt", lambda *args, **kwargs: "a block that does not divide")
    v = verify(THREE_PERMUTES, "X=4,Y=4", ODD, run="none")
    assert not v.match and not v.routed
    assert "found step by step from XLA's collectives, which did NOT run correctly" in v.reason


def test_a_cheaper_route_found_step_by_step_is_still_planner_work():
    # XLA's plan is cheaper than any plan symshard offers, so planner work, though the search finds it among the
    # routes of symshard's collectives (and places it among the listed)
    v = verify("A[I_YX, J] · B[J_X, K_Y] -> C[I_Y, K_X]", "X=4,Y=4", ODD, run="none")
    assert v.match and v.routed and v.xla_cheaper and v.planner_work and v.rank == 21
    assert (
        v.matched == "AllToAll_{X,J}(A) → AllGather_X(A) → CollectivePermute_{XY,J_Y,K_X}(B) → AllGather_Y(B) → matmul"
    )
    assert "planner work" in v.text()


@pytest.mark.slow(reason="a route with axes in parts found step by step, then run: about 11 s")
def test_a_route_found_step_by_step_with_axes_in_parts():
    v = verify("A[G, I_Z, J_Y] · B[G, J, K_Z] -> C[G, I_X, K_YZ]", "X=2,Y=2,Z=4", "G=16,I=48,J=32,K=80", run="none")
    r = v.refined
    assert not v.match and r is not None and r.match and r.routed and r.rank is None
    assert v.matched_on == "mesh in parts Z=Z1·Z2"
    assert r.matched.startswith("CollectivePermute_{X,Y,Z1,Z2,I_XY,J_{Z1}}(A) → AllGather_{Z1}(A)")
    assert "found step by step from XLA's collectives, ran correctly" in v.text()
    assert v.to_json()["refined"]["routed"] is True


ATTENTION = "B=16,H=16,S=48,T=32,E=16"


def test_xlas_all_to_all_over_two_axes_is_a_fused_all_to_all_and_runs():
    # XLA reshards P in one all-to-all over X and Y that moves S's axis to B and T's to H at once; the planner
    # lists that route, the match is its own (not found step by step), and the strategy runs under shard_map
    v = verify("P[B, H, S_Y, T_X] · V[B, H, T, E] -> O[B_Y, H_X, S, E]", "X=4,Y=2", ATTENTION, sample=2)
    assert [c.split(" (")[0] for c in v.xla] == ["AllToAll_Y,X"]
    assert v.match and v.planned and not v.routed and v.flops_agree
    assert v.matched == "AllToAll_{X→H,Y→B}(P) → DynamicSlice_{Y,B}(V) → DynamicSlice_{X,H}(V) → matmul"
    assert v.matched in [e.strategy for e in v.executions] and v.executed_ok  # XLA's plan is always run
    # on three axes, a run of two axes moved with another axis: AllToAll_{XZ→H,Y→B}, then a permute
    v = verify("P[B, H, S_XZ, T_Y] · V[B, H, T_ZXY, E] -> O[B_Y, H_ZX, S, E]", "X=2,Y=2,Z=2", ATTENTION, sample=2)
    assert v.match and v.planned and v.matched.startswith("AllToAll_{XZ→H,Y→B}(P) → CollectivePermute_{XZ,H_ZX}(P)")
    assert v.matched in [e.strategy for e in v.executions] and v.executed_ok


def test_a_time_limit_stops_the_searches_and_says_so(capsys):
    # the further orders are searched once the listing has no match: a limit already past stops that search,
    # the case is left undecided (not a miss found by the whole search), and nothing chosen runs
    v = verify(THREE_PERMUTES, "X=4,Y=4", ODD, run="best", time_limit=1e-9)
    assert not v.match and v.stopped == v.search_stopped == "further" and v.time_limit_reached
    assert v.not_run == v.chosen == 1 and not v.executions
    assert v.reason.endswith("the search through XLA's further orders stopped at the time limit")
    text = v.text()
    assert re.search(r"^agreement +not found before the time limit: ", text, re.M)
    assert "1e-09 s reached: the search for XLA's plan through XLA's further orders stopped" in text
    assert v.to_json()["search_stopped"] == "further" and v.to_json()["time_limit_reached"] is True
    argv = ["verify", THREE_PERMUTES, "--mesh", "X=4,Y=4", "--shape", ODD, "--run", "none", "--time-limit", "1e-9"]
    assert main([*argv, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["search_stopped"] == "further" and shown["match"] is False


def test_a_time_limit_stops_the_search_step_by_step(monkeypatch):
    import symshard.jax.verification as verification
    from symshard.errors import TimeLimitError

    searched = verification.matching_strategy

    def slow_step_by_step(p, x, *, further=False, any_route=False, deadline=None):
        if any_route:  # a search of every route that outlives its limit, as on four axes
            raise TimeLimitError("the search ran past its time limit")
        return searched(p, x, further=further, deadline=deadline)

    monkeypatch.setattr(verification, "matching_strategy", slow_step_by_step)
    v = verify(THREE_PERMUTES, "X=4,Y=4", ODD, run="none", time_limit=600)
    assert not v.match and not v.routed and v.search_stopped == "routes" and v.time_limit_reached
    assert "through every route of symshard's collectives taken step by step stopped" in v.text()
    assert v.not_run == 0  # the limit was the search's, not the runs'


def test_a_time_limit_stops_the_search_with_axes_in_parts(monkeypatch):
    import symshard.jax.searches as searches
    import symshard.jax.verification as verification
    from symshard.errors import TimeLimitError

    def out_of_time(*args, **kwargs):
        raise TimeLimitError("the search ran past its time limit")

    # with X split in two no listed strategy has XLA's collectives, so XLA's further orders are searched next:
    # the limit stops that search, and the refinement says which search it cut short
    for module in (verification, searches):  # verify's searches, and refine's with axes in parts
        monkeypatch.setattr(module, "matching_strategy", out_of_time)
    batched = ("A[G_X, I_Y, J] · B[G, J_X, K_Y] -> C[G_Y, I, K_X]", "X=4,Y=2", "G=16,I=48,J=32,K=80")
    v = verify(*batched, run="none", time_limit=600)
    r = v.refined
    assert not v.match and r is not None and not r.match and r.stopped == "further"
    assert v.search_stopped == "parts_further" and v.time_limit_reached
    assert v.reason.endswith("the search for XLA's collectives through XLA's further orders stopped at the time limit")
    text = v.text()
    assert re.search(r"^  agreement +not found before the time limit: ", text, re.M)
    assert "600 s reached: the search for XLA's plan through XLA's further orders with axes in parts stopped" in text
    assert v.to_json()["refined"]["stopped"] == "further"


@pytest.mark.slow(reason="12 bf16 cases compiled by XLA and run on 8 simulated devices: about 10 s")
def test_bf16_cases_agree_as_fp32_ones_and_run():
    # bf16: on CPU the dot and its reductions run in f32 (a lowering note); plans are compared on elements
    from symshard.jax.sweeps import FAMILIES, Batch, sweep

    bf16 = sweep([Batch(FAMILIES["matmul"], "X=4,Y=2", "bf16", count=12)], seed=3, sample=1)
    assert all(v.executed_ok and v.executions for v in bf16.cases)
    assert any("bf16 on CPU" in note for v in bf16.cases for note in v.lowering)
    fp32 = [verify(v.matmul, "X=4,Y=2", "I=64,J=64,K=64", run="none") for v in bf16.cases]
    assert [v.match for v in bf16.cases] == [v.match for v in fp32]
    assert [v.xla_dot_flops for v in bf16.cases] == [v.xla_dot_flops for v in fp32]

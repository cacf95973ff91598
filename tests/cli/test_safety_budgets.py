"""Every command on a budget: work too large to finish is refused before it starts, the rest is stopped.

Issue 38, point 7. Each attack is what a stranger could type or send (a matmul on a dozen mesh axes, an
einsum of two thousand dims, a family whose statement nests three thousand list items) and each must end
quickly, with one line that names the limit it hit and how to raise it or shrink the question, and exit 2:

* **refused up front** where the size tells (:class:`~symshard.errors.TooLargeError`): dims per array,
  mesh axes, compute shardings a plan would try, strategies to list, compare or print, the work of a
  best-sharding search, the Markdown a problem hands the exports;
* **stopped by the budget** otherwise (:class:`~symshard.errors.BudgetError`): ``--time-limit`` and
  ``--memory-limit`` (or ``$SYMSHARD_TIME_LIMIT`` and ``$SYMSHARD_MEMORY_LIMIT``) on every command.

The numbers the messages must quote are computed here from the question (options per axis to the power
of the axes, the plan's own count of strategies), never typed.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from helpers import probe_family_toml
from hypothesis import given, settings
from hypothesis import strategies as st

import symshard as ss
from symshard.cli import argument_parser, main
from symshard.cli.budget import COMMAND, PROBLEM_MEMORY, Limits, hold, limits_for, running
from symshard.costs.placement import resolve_shape
from symshard.errors import BudgetError, TooLargeError
from symshard.machines.mesh import MAX_AXES, Mesh, resolve_mesh
from symshard.notation.arrays import MAX_DIMS, Array
from symshard.notation.einsums import matmul
from symshard.planning.costenv import CostEnv
from symshard.planning.crossovers import MAX_COMPARED, MAX_PAIRED, compare
from symshard.planning.enumeration import MAX_SHARDINGS, MAX_SYMBOLIC_SHARDINGS, Enumeration
from symshard.planning.planner import best_strategy, natural_outputs, plan
from symshard.planning.search import MAX_SEARCH, best_sharding
from symshard.planning.shardings import interchangeable_axes, sharding_combos
from symshard.problems.budget import Budget, run, stop_worker
from symshard.report.markdown import MAX_MARKDOWN, check_markdown

MATMUL = "X[B, D] · Y[D, F] -> Z[B, F]"
"""A 2-D matmul: each mesh axis splits one of its three dims or none, four choices."""

FOUR_DIMS = "A[I_X, J_Y, L] · B[J_Y, K_Z] -> C[I_X, L, K_Z]"


AXES = "PQRSTUVWACEG"
"""Axis names for meshes of up to twelve axes (none is a dim of the matmuls here)."""


def _mesh(count: int, sizes: bool = True, distinct: bool = False) -> str:
    """A mesh of ``count`` axes: symbolic, all of size 2 (interchangeable), or of sizes 2, 3, 4, ..."""
    names = AXES[:count]
    if not sizes:
        return ",".join(names)
    return ",".join(f"{n}={2 + i if distinct else 2}" for i, n in enumerate(names))


def _einsum(dims: int) -> str:
    names = [f"D{i}" for i in range(dims)]
    return f"A[{', '.join(names)}] · B[{', '.join(names[: dims // 2])}] -> C[{', '.join(names[dims // 2 :])}]"


def _one_line(capsys, argv: list[str], *, seconds: float = 5.0) -> str:
    """Run ``argv``: exit 2, one line on stderr, nothing on stdout, within ``seconds``; the line.

    The work is timed in CPU seconds: on a machine shared by several test runs the wall clock measures the
    neighbours too (the budget's own timer, a wall clock, is checked with a bound of its own where it stops).
    """
    started, cpu = time.perf_counter(), time.process_time()
    code = main(argv)
    elapsed, worked = time.perf_counter() - started, time.process_time() - cpu
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert out == "" and err.startswith(("symshard: error: ", "symshard: 错误：")) and err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err
    assert worked < seconds, f"{argv[:2]} worked {worked:.1f} s"
    assert elapsed < 12 * seconds, f"{argv[:2]} took {elapsed:.1f} s"
    return err


# -- the attacks, and more of their kinds: refused before any work ---------------------------------------

# (name, command line, fragments of the one line: the number, the limit, the hint)
REFUSED: list[tuple[str, list[str], list[str]]] = [
    (
        "matmul --all on 12 axes",
        ["matmul", MATMUL, "--mesh", _mesh(12), "--all"],
        [f"{4**12:,} compute shardings", f"({MAX_SHARDINGS:,})", "without --all"],
    ),
    (
        "matmul on 8 symbolic axes",
        ["matmul", MATMUL, "--mesh", _mesh(8, sizes=False)],
        [f"{4**8:,} compute shardings", f"({MAX_SYMBOLIC_SHARDINGS:,})", "fewer mesh axes"],
    ),
    (
        "matmul on 8 axes of different sizes",
        [
            "matmul",
            MATMUL,
            "--mesh",
            _mesh(8, distinct=True),
            "--shape",
            "B=362880,D=362880,F=362880",
            "--hw",
            "tpu-v5e",
        ],
        [f"{4**8:,} compute shardings", f"({MAX_SHARDINGS:,})", "fewer mesh axes"],
    ),
    (
        "matmul on 6 axes of different sizes, sizes symbolic",
        ["matmul", MATMUL, "--mesh", _mesh(6, distinct=True), "--hw", "tpu-v5e"],
        [f"{4**6:,} compute shardings", f"({MAX_SYMBOLIC_SHARDINGS:,})", "--shape and --hw"],
    ),
    (
        "a 2,000-dim einsum",
        ["matmul", _einsum(2000), "--hw", "tpu-v5e"],
        ["array A has 2,000 dims", f"({MAX_DIMS})", "split the einsum"],
    ),
    (
        "an array of 500 dims",
        ["shard", "A[" + ", ".join(f"D{i}" for i in range(500)) + "]"],
        ["array A has 500 dims", f"({MAX_DIMS})", "merge dims"],
    ),
    (
        "a collective on an array of 100 dims",
        ["collective", "AllGather_X(A[" + ", ".join(f"D{i}" for i in range(99)) + ", E_X])"],
        ["array A has 100 dims", f"({MAX_DIMS})"],
    ),
    (
        "a mesh of 40 axes",
        ["shard", "A[I, J]", "--mesh", ",".join(f"Q{i}=2" for i in range(40))],
        ["a mesh of 40 axes", f"({MAX_AXES})", "X=2,Y=2 as X=4"],
    ),
    (
        "compare 40 strategies pair by pair",
        ["compare", FOUR_DIMS, "--solve-for", "I", "--mesh", "X,Y,Z", "--strategies", ",".join(map(str, range(1, 41)))],
        ["comparing 40 strategies", f"{40 * 39 // 2:,} comparisons", f"({MAX_PAIRED} strategies)", "--strategies 1,2"],
    ),
    (
        "best-sharding of one matmul on six axes",
        ["best-sharding", MATMUL, "--mesh", _mesh(6), "--shape", "B=4096,D=4096,F=4096", "--hw", "tpu-v5e"],
        [f"about {8 * 4**6:,} steps", f"({MAX_SEARCH:,})", "fewer mesh axes"],
    ),
    (
        "best-sharding of two matmuls on four axes",
        [
            "best-sharding",
            "x[B, D] · W[D, F] -> H[B, F]",
            "H[B, F] · V[F, D] -> O[B, D]",
            "--mesh",
            _mesh(4),
            "--shape",
            "B=4096,D=4096,F=4096",
            "--hw",
            "tpu-v5e",
        ],
        [f"about {8 * 4**4 + 4**4 * 4**4:,} steps", f"({MAX_SEARCH:,})", "shorter chain"],
    ),
]


@pytest.mark.parametrize(("name", "argv", "fragments"), REFUSED, ids=[r[0] for r in REFUSED])
def test_work_too_large_is_refused_before_it_starts(capsys, name, argv, fragments):
    err = _one_line(capsys, argv)
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert "more than" in err and "; hint: " in err


def test_compare_of_every_strategy_is_refused_with_the_plan_s_count(capsys):
    """The issue's compare: four dims on three axes against every valid strategy (90 s before)."""
    count = len(plan(FOUR_DIMS, "X,Y,Z", all=True).strategies)
    assert count > MAX_COMPARED
    err = _one_line(capsys, ["compare", FOUR_DIMS, "--solve-for", "I", "--mesh", "X,Y,Z", "--strategies", "all"])
    assert f"has {count:,} strategies to compare, more than compare takes ({MAX_COMPARED})" in err
    assert "without --strategies all" in err


def test_printing_every_strategy_of_a_large_symbolic_plan_is_refused(capsys):
    count = len(plan(FOUR_DIMS, "X,Y,Z", all=True).strategies)
    err = _one_line(capsys, ["matmul", FOUR_DIMS, "--mesh", "X,Y,Z", "--all", "--top", "1000000"])
    assert f"printing {count:,} strategies" in err and "--top N" in err
    assert main(["matmul", FOUR_DIMS, "--mesh", "X,Y,Z", "--all", "--json"]) == 2
    assert f"printing {count:,} strategies" in json.loads(capsys.readouterr().out)["error"]["message"]
    # the same listing, its first ten printed, is fine
    assert main(["matmul", FOUR_DIMS, "--mesh", "X,Y,Z", "--all", "--top", "10"]) == 0
    assert f"{count} strategies" in capsys.readouterr().out


def test_the_refusals_are_json_with_json_and_chinese_with_lang_zh(capsys):
    argv = ["matmul", MATMUL, "--mesh", _mesh(12), "--all"]
    assert main([*argv, "--json"]) == 2
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert err == "" and error["type"] == "TooLargeError" and f"{4**12:,}" in error["message"] and error["hint"]
    err = _one_line(capsys, ["--lang", "zh", *argv])
    assert f"需要尝试 {4**12:,} 种计算分片" in err and "提示" in err


# -- the library refuses the same, before any work ---------------------------------------------------------------


def test_the_library_refuses_oversized_work_up_front():
    with pytest.raises(TooLargeError, match=r"65,536 compute shardings"):
        ss.plan(MATMUL, _mesh(8, sizes=False))
    with pytest.raises(TooLargeError, match=r"16,777,216 compute shardings"):
        ss.plan(MATMUL, _mesh(12), all=True)
    with pytest.raises(TooLargeError, match=r"compute shardings"):
        best_strategy(MATMUL, _mesh(8, distinct=True), "B=362880,D=362880,F=362880", hardware="tpu-v5e")
    with pytest.raises(TooLargeError, match=r"more than compare takes"):
        compare(FOUR_DIMS, "I", mesh="X,Y,Z", strategies="all")
    with pytest.raises(TooLargeError, match=r"steps of work"):
        best_sharding(MATMUL, _mesh(6), "B=4096,D=4096,F=4096", hardware="tpu-v5e")
    with pytest.raises(TooLargeError, match=rf"has {MAX_DIMS + 1} dims"):
        Array("A", tuple(f"D{i}" for i in range(MAX_DIMS + 1)))
    with pytest.raises(TooLargeError, match=rf"a mesh of {MAX_AXES + 1} axes"):
        Mesh({f"Q{i}": 2 for i in range(MAX_AXES + 1)})
    # a refusal is a ValueError too, and at the limits the work is taken
    assert issubclass(TooLargeError, ValueError)
    assert len(Array("A", tuple(f"D{i}" for i in range(MAX_DIMS))).dims) == MAX_DIMS
    assert len(Mesh({f"Q{i}": 1 for i in range(MAX_AXES)}).axes) == MAX_AXES


def test_legitimate_large_questions_still_run():
    # eight interchangeable axes (the benchmark's): one compute sharding per multiset of choices
    p = ss.plan("A[I, J] · B[J, K] -> C[I, K]", _mesh(8), "I=8192,J=8192,K=8192", hardware="tpu-v5p")
    assert p.source.shardings(symmetric=True) == math.comb(4 + 8 - 1, 8) < MAX_SHARDINGS and p.best is not None
    # XLA's orders on three axes list every valid strategy (what verify does): 157,000 of them
    listed = ss.plan("A[I_Z, J_X] · B[J_Y, K] -> C[I_X, K_Z]", "X=2,Y=2,Z=2", "I=96,J=96,K=40", dtype="fp32",
                     hardware="tpu-v5p", routes="xla")  # fmt: skip
    assert len(listed.strategies) > 10**5


def _enumeration(mm: str, mesh: str, wide: bool) -> Enumeration:
    """The enumeration :func:`~symshard.planning.planner.plan` makes for ``mm`` on ``mesh`` (symbolic sizes), unwalked."""
    m = matmul(mm)
    arrays = [m.lhs, m.rhs] + ([m.out] if m.out is not None else [])
    mesh_ = resolve_mesh(mesh or None, [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))], None)
    env = CostEnv(mesh_, resolve_shape(None, m.dims, context=str(m)), "bf16", None, None, "book", "axes")
    targets = (m.out,) if m.out is not None else natural_outputs(m)
    return Enumeration(m, env, targets, True, wide, wide=wide)


@st.composite
def _questions(draw):
    mm = draw(st.sampled_from([MATMUL, "A[I_X, J] · B[J, K] -> C[I_X, K]", FOUR_DIMS, "A[I, J] · B[J, K]"]))
    named = sorted({a for a in mm if a in "XYZ"})
    extra = draw(st.lists(st.sampled_from("PQRS"), unique=True, max_size=3))
    numeric = draw(st.booleans())
    sizes = {a: draw(st.sampled_from([1, 2, 2, 4])) if numeric else None for a in [*named, *extra]}
    mesh = ",".join(f"{a}={s}" if s else a for a, s in sizes.items())
    wide = mm == MATMUL and len(sizes) == 3 and draw(st.booleans())  # XLA's further orders: 2-D, three axes
    return mm, mesh, wide, draw(st.booleans())


@given(_questions())
@settings(max_examples=60, deadline=None)
def test_the_count_up_front_is_the_number_of_shardings_walked(question):
    """Compute it two ways: the count the refusal reads, and the compute shardings the enumeration walks."""
    mm, mesh, wide, symmetric = question
    source = _enumeration(mm, mesh, wide)
    options = [opts for _, opts in source.choices]
    classes = interchangeable_axes(source.mm, source.env, source.targets) if symmetric else []
    walked = len(sharding_combos(options, classes)) * len(source.targets) * (3 if wide else 1)
    assert source.shardings(symmetric=symmetric) == walked


# -- the exports of a set -----------------------------------------------------------------------------------------

FAMILY = probe_family_toml(objective="Probe the exports.")

STATEMENTS = [
    # (name, statement template, fragment of the refusal)
    ("nested-list", '{% for i in range(3000) %}{{ " " * (2 * i) }}- item {{ i }}\n{% endfor %}',
     "characters of Markdown, more than the exports take"),
    ("nested-quotes", '{{ "> " * 60 }}deep', "nests lists or quotes"),
    ("nested-bullets", '{{ "- " * 60 }}deep', "nests lists or quotes"),
    ("nested-list-short", '{% for i in range(40) %}{{ " " * (2 * i) }}- item {{ i }}\n{% endfor %}',
     "nests lists or quotes"),
    ("long-text", '{% for i in range(30) %}{{ "word " * 1000 }}\n\n{% endfor %}',
     "characters of Markdown, more than the exports take"),
]  # fmt: skip


def _statement_family(root: Path, name: str, statement: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "family.toml").write_text(FAMILY, encoding="utf-8")
    (folder / "problem.md.j2").write_text(
        "{% block statement %}" + statement + "{% endblock %}{% block solution %}s{% endblock %}", encoding="utf-8"
    )
    return folder


@pytest.mark.parametrize(("name", "statement", "fragment"), STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_a_set_whose_markdown_the_exports_do_not_take_is_refused_before_any_export(
    tmp_path, capsys, name, statement, fragment
):
    _statement_family(tmp_path / "families", name, statement)
    out = tmp_path / "set"
    argv = ["problems", "generate", "--seed", "1", "--count", "1", "--family", name, "--families",
            str(tmp_path / "families"), "--out", str(out)]  # fmt: skip
    err = _one_line(capsys, argv)
    assert f"the statement of problem {name}-" in err and fragment in err
    assert "; hint: " in err and ("shorten" in err or "flatten" in err)
    assert not (out / "problems.md").exists() and not (out / "problems.json").exists()


def test_a_set_of_too_many_problems_is_refused_before_any_draw(tmp_path, capsys):
    from symshard.problems.engine import MAX_PROBLEMS

    err = _one_line(capsys, ["problems", "generate", "--seed", "1", "--count", str(10**9), "--out", str(tmp_path)])
    assert f"a set of {10**9:,} problems is more than generate takes ({MAX_PROBLEMS:,})" in err and "seeds" in err
    err = _one_line(capsys, ["problems", "generate", "--seed", "1", "--per-family", str(MAX_PROBLEMS), "--out",
                             str(tmp_path)])  # fmt: skip
    assert "problems is more than generate takes" in err
    assert not list(tmp_path.iterdir())


def test_markdown_at_the_limits_is_taken():
    check_markdown("x" * MAX_MARKDOWN, "a text")
    check_markdown("".join(" " * (2 * i) + f"- item {i}\n" for i in range(6)), "a text")  # six nested lists
    with pytest.raises(TooLargeError, match=f"{MAX_MARKDOWN + 1:,} characters"):
        check_markdown("x" * (MAX_MARKDOWN + 1), "a text")


# -- stopped by the budget -----------------------------------------------------------------------------------------

SLOW = ["matmul", MATMUL, "--mesh", _mesh(7, distinct=True), "--shape", "B=40320,D=40320,F=40320", "--hw", "tpu-v5e"]
"""Under every up-front limit, but seconds of work (16,384 compute shardings with numbers)."""


def test_a_command_past_its_time_limit_is_stopped_in_one_line(capsys):
    err = _one_line(capsys, [*SLOW, "--time-limit", "0.5"], seconds=3)
    assert "the command 'symshard matmul' ran longer than its time limit of 0.5 s and was stopped" in err
    assert "--time-limit SECONDS (or $SYMSHARD_TIME_LIMIT)" in err and "fewer mesh axes" in err


def _hog(args) -> tuple[str, dict]:
    """A command that only asks for memory, a megabyte at a time (the planners grow theirs more slowly)."""
    held = []
    while True:
        held.append(bytearray(2**20))


def test_a_command_past_its_memory_limit_is_stopped_in_one_line(capsys, monkeypatch):
    from symshard.cli.commands import COMMANDS

    monkeypatch.setitem(COMMANDS, "book", _hog)
    err = _one_line(capsys, ["book", "--memory-limit", "64MiB"])
    assert "the command 'symshard book' needed more than its memory limit of 64 MiB and was stopped" in err
    assert "--memory-limit SIZE (or $SYMSHARD_MEMORY_LIMIT)" in err
    # the process keeps its memory: the next command runs as usual
    monkeypatch.undo()
    assert main(["matmul", MATMUL, "--mesh", "X=8", "--shape", "B=1024,D=8192,F=16384", "--hw", "tpu-v5e"]) == 0
    capsys.readouterr()


def test_the_environment_sets_every_command_s_budget(capsys, monkeypatch):
    monkeypatch.setenv("SYMSHARD_TIME_LIMIT", "0.5 s")
    err = _one_line(capsys, SLOW, seconds=3)
    assert "time limit of 0.5 s" in err
    monkeypatch.setenv("SYMSHARD_TIME_LIMIT", "soon")
    err = _one_line(capsys, ["hardware"])
    assert "cannot read the SYMSHARD_TIME_LIMIT 'soon'" in err


def test_a_stopped_command_says_so_in_json_and_in_chinese(capsys):
    assert main([*SLOW, "--time-limit", "0.5", "--json"]) == 2
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert (
        err == "" and error["type"] == "BudgetError" and "0.5 s" in error["message"] and "--time-limit" in error["hint"]
    )
    err = _one_line(capsys, ["--lang", "zh", *SLOW, "--time-limit", "0.5"], seconds=3)
    assert "命令 'symshard matmul'的运行时间超过了时间限制 0.5 s" in err and "提示：用 --time-limit SECONDS" in err


def test_bad_limits_are_one_line(capsys):
    assert "cannot read the time limit 'soon'" in _one_line(capsys, ["hardware", "--time-limit", "soon"])
    assert "between 64 MiB and 16 TiB" in _one_line(capsys, ["book", "--memory-limit", "1KiB"])
    assert "not a number of seconds between 0 and 86400" in _one_line(capsys, ["matmul", MATMUL, "--time-limit", "-1"])


# -- each command's budget ----------------------------------------------------------------------------------------


def _limits(*argv: str) -> tuple[Limits, object]:
    args = argument_parser().parse_args(list(argv))
    return limits_for(args), args


def test_each_command_has_a_budget_with_its_own_defaults(monkeypatch):
    monkeypatch.delenv("SYMSHARD_TIME_LIMIT", raising=False)
    monkeypatch.delenv("SYMSHARD_MEMORY_LIMIT", raising=False)
    for argv in (["shard", "A[I_X]"], ["matmul", MATMUL], ["compare", MATMUL, "--solve-for", "B"], ["book"],
                 ["hardware"], ["model", "--list"], ["problems", "list"], ["completion", "bash"]):  # fmt: skip
        assert _limits(*argv)[0] == COMMAND, argv
    assert _limits("matmul", MATMUL, "--time-limit", "120 s", "--memory-limit", "4GiB")[0] == Limits(120.0, 2**32)
    site, _ = _limits("site", "build")
    assert site.seconds >= 600 and site.memory >= 4 * 2**30
    # verify: its own time limit is the check's (read here, text too), the hard stop a minute later, and
    # its memory resident (JAX reserves address space up front)
    verify, args = _limits("verify", MATMUL, "--time-limit", "600 s")
    assert args.time_limit == 600.0 and verify.seconds == 660.0 and verify.resident
    assert _limits("verify", MATMUL)[1].time_limit == 600.0
    # a problem command's limits are each variant's; the command gets a minute more than its variants together
    generate, _ = _limits("problems", "generate", "--seed", "1", "--count", "10", "--out", "x", "--time-limit", "2")
    assert generate.seconds == 60 + 10 * 2 and generate.memory == COMMAND.memory + 10 * PROBLEM_MEMORY
    show, _ = _limits("problems", "show", "allgather-time", "--memory-limit", "1GiB")
    assert show.seconds == 60 + Budget().seconds and show.memory == 4 * 2**30 + PROBLEM_MEMORY


def test_verify_refuses_a_time_limit_that_leaves_no_time():
    with pytest.raises(ss.SymshardError, match="--time-limit 0 leaves no time"):
        _limits("verify", MATMUL, "--time-limit", "0")


def _spin(seconds: float) -> int:
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def test_a_stop_during_a_family_s_variant_leaves_no_stale_answer():
    """The command's budget ending while the worker computes: the worker is stopped, and the next task gets its own
    answer, not the abandoned one's."""
    assert run(pow, (2, 1), Budget(seconds=60), what="a start") == 2  # the worker is up before the budget starts
    started = time.perf_counter()
    with pytest.raises(BudgetError, match=r"time limit of 0\.5 s"), running(Limits(0.5, None), "probe"):
        run(_spin, (20.0,), Budget(seconds=30), what="a spin")
    assert time.perf_counter() - started < 3
    assert run(pow, (2, 5), Budget(seconds=10), what="a power") == 32
    stop_worker()


def test_the_timer_waits_for_a_held_write_to_finish():
    finished = []
    with pytest.raises(BudgetError, match=r"time limit of 0\.2 s"), running(Limits(0.2, None), "probe"):
        with hold():
            _spin(0.6)  # past the limit, inside the write
            finished.append(True)
        finished.append(False)  # never reached: the timer raises as the write ends
    assert finished == [True]


def test_a_command_inside_another_runs_on_the_outer_budget(capsys):
    with running(Limits(30.0, None), "site build"):
        assert main(["matmul", MATMUL, "--mesh", "X=8", "--time-limit", "0.001"]) == 0  # not its own 1 ms
    assert "X[B, D] · Y[D, F] -> Z[B, F]" in capsys.readouterr().out


def test_resident_memory_is_watched_where_address_space_cannot_be_capped():
    chunks = []
    started = time.perf_counter()
    with pytest.raises(BudgetError, match="memory limit of 64 MiB"), running(Limits(30.0, 64 * 2**20, True), "verify"):
        while True:
            chunks.append(b"x" * 2**20)  # written, so resident
            time.sleep(0.001)
    chunks.clear()
    assert time.perf_counter() - started < 5

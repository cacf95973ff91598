"""The command line, end to end and in-process: readable text, JSON keys, one-line errors with exit 2."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from symshard.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""
    return json.loads(out)


def test_shard_json_pop_quiz(capsys):
    data = run_json(
        capsys, "shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--shape", "I=1024,J=4096", "--dtype", "fp32",
        "--hw", "h100", "--hw-set", "W_hbm=3.4e12",
    )  # fmt: skip
    assert {"array", "local_shape", "bytes_per_device", "total_bytes", "copies", "hbm_time_s"} <= set(data)
    assert data["array"] == "A[I_XY, J]"
    assert data["local_shape"] == [64, 4096]
    assert data["bytes_per_device"] == 1048576
    assert data["total_bytes"] == 16 * 1048576
    assert data["copies"] == 1
    assert data["hbm_time_s"] == pytest.approx(1048576 / 3.4e12)
    assert data["formulas"]["bytes_per_device"] == r"\frac{4 I J}{\lvert X \rvert \lvert Y \rvert}"


def test_shard_symbolic(capsys):
    data = run_json(capsys, "shard", "A[I_XY, J]")
    assert data["local_shape"] == ["I/(|X|*|Y|)", "J"]
    assert data["hbm_time_s"] is None
    code, out, _ = run(capsys, "shard", "A[I_XY, J]{U_Z}", "--mesh", "X=2,Y=8,Z=2", "--shape", "I=128,J=2048")
    assert code == 0
    assert "local shape       [I/(|X|·|Y|), J] = [8, 2048]" in out
    assert "partial sums" in out


def test_shard_text_shows_formula_then_number(capsys):
    code, out, _ = run(
        capsys, "shard", "A[I_XY, J]", "--mesh", "X=2,Y=8,Z=2", "--shape", "I=128,J=2048", "--dtype", "int8",
        "--hw", "v5e",
    )  # fmt: skip
    assert code == 0
    assert "bytes per device  I·J/(|X|·|Y|) = 16,384 B (16 KiB)" in out
    assert "total bytes       I·J·|Z| = 524,288 B (512 KiB) over 32 devices" in out
    assert "copies            |Z| = 2" in out
    assert "HBM read time" in out and "on TPU v5e" in out


def test_collective_json_pop_quiz_2(capsys):
    data = run_json(
        capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=2048,F=8192",
        "--hw", "tpu-v5e",
    )  # fmt: skip
    assert {"output", "bytes", "hops", "time_s", "regime", "formula", "model"} <= set(data)
    assert data["output"] == "[E, F]"
    assert data["bytes"] == 2048 * 8192 * 2
    assert data["hops"] == 3
    assert data["time_s"] == pytest.approx(559.24e-6, rel=1e-4)
    assert data["regime"] == "bandwidth"
    assert data["model"] == "book"
    assert r"W_{\text{ici}}" in data["formula"] and r"T_{\text{hop}}" in data["formula"]
    assert [a["topology"] for a in data["mesh"]] == ["line", "line"]


def test_collective_options(capsys):
    ring = run_json(
        capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=2048,F=8192",
        "--hw", "tpu-v5e", "--topology", "Y=ring",
    )  # fmt: skip
    assert ring["time_s"] == pytest.approx(33554432 / 9e10)
    exact = run_json(
        capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=2048,F=8192",
        "--hw", "tpu-v5e", "--topology", "Y=ring", "--model", "ring",
    )  # fmt: skip
    assert exact["time_s"] == pytest.approx(0.75 * 33554432 / 9e10)
    assert exact["hops"] == 2
    small = run_json(
        capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=256,F=256", "--hw", "v5e"
    )
    assert small["regime"] == "latency" and small["time_s"] == pytest.approx(3e-6)


def test_collective_symbolic_and_gpu(capsys):
    data = run_json(capsys, "collective", "ReduceScatter_{X,K}(C[I, K]{U_X})")
    assert data["time_s"].startswith("Max(")
    assert "2*I*K/W_ici" in data["time_s"] and "T_hop*|X|/2" in data["time_s"]
    assert data["regime"] is None
    gpu = run_json(capsys, "collective", "AllGather_X(A[I_X])", "--mesh", "X=8", "--shape", "I=4096", "--hw", "h100")
    assert isinstance(gpu["bandwidth_time_s"], float)
    # GPU latency from NCCL's tuning model (2.7.5, ring, LL): 3.6 us + 7 NVLink steps of 0.47 us
    assert gpu["latency_time_s"] == pytest.approx(3.6e-6 + 7 * 0.47e-6) and gpu["latency_model"] == "nccl"
    assert gpu["regime"] == "latency" and gpu["time_s"] == pytest.approx(
        gpu["latency_time_s"] + gpu["bandwidth_time_s"]
    )
    code, out, _ = run(
        capsys, "collective", "AllGather_X(A[I_X])", "--mesh", "X=8", "--shape", "I=4096", "--hw", "h100"
    )
    assert code == 0 and "NCCL's tuning model" in out
    timed = run_json(
        capsys, "collective", "AllGather_X(A[I_X])", "--mesh", "X=8", "--shape", "I=4096", "--hw", "h100",
        "--hw-set", "T_nvlink=1e-5",
    )  # fmt: skip
    assert timed["latency_time_s"] == pytest.approx(3.6e-6 + 7e-5)


def test_collective_with_several_moves(capsys):
    # the planner's fused all-to-all, pasted from a plan, is costed as one all-to-all over all its axes
    fused = "AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X])"
    args = ["collective", fused, "--mesh", "X=4,Y=2", "--shape", "B=16,H=16,S=48,T=32", "--hw", "tpu-v5e"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X]) -> P[B_Y, H_X, S, T]"
    assert "hops       |X| + |Y| - 2 = 4" in out
    # a move without its dim: one line, exit 2
    assert main(["collective", "AllToAll_{X→H,Y}(P[B, H, S_Y, T_X])"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "expected '→' after the axes of a move" in err


def test_collective_text(capsys):
    code, out, _ = run(
        capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=2048,F=8192", "--hw", "v5e"
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "AllGather_Y([E_Y, F]) -> [E, F]"
    assert any(line.startswith("V          2·E·F = 33,554,432 B (32 MiB)") for line in lines)
    assert any(line.startswith("time ") and "= 559 µs, bandwidth-bound" in line for line in lines)


def test_hardware_and_book(capsys):
    listing = run_json(capsys, "hardware")
    assert {h["name"] for h in listing["hardware"]} >= {"tpu-v5e", "h100"}
    one = run_json(capsys, "hardware", "v5p")
    assert one["ici_link_bandwidth"] == 9e10 and "ici_link_bandwidth" in one["sources"]
    book = run_json(capsys, "book")
    assert book["agree"] == book["total"] >= 14
    code, out, _ = run(capsys, "book")
    assert code == 0 and "agree with the book" in out


ERROR_CASES = [
    (["shard", "A[I_X, J_X]"], "mesh axis X shards both I and J"),
    (["shard", "A[I_X, J]", "--mesh", "Y=2"], "mesh axis X in 'A[I_X, J]' is not in the mesh Y=2"),
    (["shard", "A[I_X, J]", "--mesh", "X=3", "--shape", "I=10"], "does not split evenly"),
    (["shard", "A[I_X", "--mesh", "X=3"], "unbalanced brackets"),
    (["shard", "A[I_X]", "--hw", "tpu-v9"], "unknown hardware 'tpu-v9'"),
    (["shard", "A[I_X]", "--dtype", "bf61"], "unknown dtype 'bf61'"),
    (["shard", "A[I_X]", "--shape", "K=4", "--strict"], "has no such dim"),
    (["shard", "A[I_X]", "--hw-set", "W_foo=1"], "unknown hardware constant 'W_foo'"),
    (["shard", "A[I_X]", "--hw-set", "W_hbm"], "has no value"),
    (["shard", "A[I_X]", "--mesh", "X=4", "--topology", "X=torus9"], "unknown topology 'torus9'"),
    (["collective", "AllGather_X(A[I_Y])"], "is not sharded along X"),
    (["collective", "AllGather_X(A[I_X])", "--model", "exact"], "unknown cost model 'exact'"),
    (["collective", "A[I_X]"], "expected a collective"),
    (["hardware", "gtx1080"], "unknown hardware 'gtx1080'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["shard"], "the following arguments are required: array"),
    (["shard", "A[I]", "--bogus"], "unrecognized arguments: --bogus"),
]


@pytest.mark.parametrize(("argv", "pattern"), ERROR_CASES)
def test_errors_are_one_line_with_status_2(capsys, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("symshard: error: ")
    assert pattern in err
    assert "hint:" in err
    assert "Traceback" not in err


def test_help_and_version(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "shard" in out and "collective" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("symshard ")
    code, out, _ = run(capsys)
    assert code == 0 and "usage" in out


def test_python_dash_m():
    proc = subprocess.run(
        [sys.executable, "-m", "symshard", "shard", "A[I_X, J_X]"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("symshard: error: mesh axis X shards both I and J")
    ok = subprocess.run(
        [sys.executable, "-m", "symshard", "collective", "AllGather_X(A[I_X])", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(ok.stdout)["output"] == "A[I]"


def test_readme_console_examples_are_current(capsys):
    import shlex
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    block = readme.split("```console\n", 1)[1].split("```", 1)[0]
    checked = 0
    for chunk in block.split("\n\n"):
        lines = chunk.strip("\n").splitlines()
        if not lines or not lines[0].startswith("$ symshard ") or any(x.startswith("$") for x in lines[1:]):
            continue  # only a command followed by its output is compared
        argv = shlex.split(lines[0][len("$ symshard ") :])
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert out.rstrip("\n").splitlines() == lines[1:]
        checked += 1
    assert checked >= 1


# -- matmul, compare, best-sharding ------------------------------------------------------------------


def test_matmul_json(capsys):
    data = run_json(
        capsys, "matmul", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--hw", "tpu-v5p", "--mesh", "X=4,Y=4,Z=4",
        "--shape", "B=1024,D=8192,F=32768",
    )  # fmt: skip
    assert data["case"] == 2
    assert "Y shards the contracting dim D along X" in data["reason"]
    # listed: those that can win (the fastest, then the fastest within less memory) and the chapter's rule
    listed = data["strategies"]
    assert listed[0]["why"]["key"] == "fastest" and not data["complete"]
    assert {s["why"]["key"] for s in listed} <= {"fastest", "fastest_within", "natural"}
    within = [s["memory_bytes_per_device"] for s in listed if s["why"]["key"] != "natural"]
    assert within == sorted(within, reverse=True)  # each next one is slower and leaner
    keys = {"name", "steps", "flops_per_device", "compute_time_s", "comm_time_s", "time_s", "bound",
            "memory_bytes_per_device"}  # fmt: skip
    assert keys <= set(listed[0])
    assert data["best"]["index"] == 1 and data["best"]["name"] == listed[0]["name"]
    every = run_json(
        capsys, "matmul", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--hw", "tpu-v5p", "--mesh", "X=4,Y=4,Z=4",
        "--shape", "B=1024,D=8192,F=32768", "--all",
    )  # fmt: skip
    assert len(every["strategies"]) == 169 and every["complete"]  # 64 compute shardings, with their other routes
    times = [s["time_s"] for s in every["strategies"]]
    assert times == sorted(times) and times[0] == listed[0]["time_s"]
    assert all(s["bound"] in ("compute", "communication") for s in every["strategies"])


def test_matmul_symbolic_text(capsys):
    code, out, _ = run(capsys, "matmul", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--hw", "tpu-v5p")
    assert code == 0
    assert "Case 2" in out
    assert "AllGather_X(Y[D_X, F]) -> Y[D, F]" in out
    assert "T_math  = 2·B·D·F/C" in out  # formulas stay symbolic while sizes are
    assert "best: undecided" in out
    assert "TPU v5p: C = 4.59e14" in out
    serial = run_json(capsys, "matmul", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--serial", "--mesh", "X=4",
                      "--shape", "B=64,D=64,F=64", "--hw", "v5p")  # fmt: skip
    assert serial["overlap"] is False
    s = serial["strategies"][0]
    assert s["time_s"] == pytest.approx(max(s["compute_time_s"], s["hbm_time_s"]) + s["comm_time_s"])


def test_compare_json_question_4(capsys):
    q4 = ["compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "B", "--hw", "tpu-v5p"]
    for hbm in ([], ["--no-hbm"]):  # the chapter's answer, with T_hbm counted or left out
        data = run_json(capsys, *q4, *hbm)
        regimes = {r["name"]: r for r in data["conditions"]["regimes"]}
        gather = regimes["AllGather_X(Y) → matmul"]
        assert gather["communication_bound_if"]["text"] == "B < C/W_ici"
        assert gather["communication_bound_if"]["latex"] == r"B < \frac{C}{W_{\text{ici}}}"
        assert gather["numeric"]["text"] == "B < 2550"
        assert ("memory_bound_if" in gather) == (not hbm) and data["hbm"] == (not hbm)
    # as the chapter reasons (HBM left out): the strategies that can be the fastest (1, 2 and the AllToAll, 3)
    # and the pairs whose regions touch
    assert [r["strategy"] for r in data["fastest"]] == [1, 2, 3]
    assert [(p["a"], p["b"]) for p in data["conditions"]["pairs"]] == [(1, 3), (2, 3)]
    assert data["fastest"][0]["numeric"]["text"] == "2·B·D < 5100·B·|X| + 1275·D·|X| and ((D > 5100·|X|) or (B < D/4))"
    code, out, _ = run(capsys, "compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "B", "--hw", "v5p",
                       "--strategies", "1,2")  # fmt: skip
    assert code == 0 and "B < D/2" in out and "[TPU v5p: B < 2550]" in out


@pytest.mark.parametrize(
    "options",
    [
        [],  # T_hbm counted, as matmul counts it by default
        ["--no-hbm"],  # left out in both
        ["--mesh", "X=4,Y=4", "--shape", "K=4096"],  # the chip's wiring and sizes given
        ["--serial", "--comm-overlap", "none"],
    ],
)
def test_compare_numbers_the_strategies_as_matmul_does(capsys, options):
    """One numbering: compare's strategies (the map's and --pairs' too) are matmul's for the same options."""
    mm, chip = "A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", ["--hw", "tpu-v5e"]
    listed = run_json(capsys, "matmul", mm, *chip, *options)["strategies"]
    compared = run_json(capsys, "compare", mm, "--solve-for", "I", *chip, *options)
    assert [s["name"] for s in compared["strategies"]] == [s["name"] for s in listed]
    names = {i: s["name"] for i, s in enumerate(listed, 1)}
    assert all(names[r["strategy"]] == r["name"] for r in compared["conditions"]["regimes"])
    assert all(names[f["strategy"]] == f["name"] for f in compared["fastest"])
    never = [n["strategy"] for n in compared["never_fastest"]]
    assert sorted(never + [f["strategy"] for f in compared["fastest"]]) == sorted(names)  # each said once


def screen_lines(text: str, columns: int = 100) -> int:
    """How many lines ``text`` takes on a terminal ``columns`` wide (long lines wrap)."""
    return sum(max(1, -(-len(line) // columns)) for line in text.splitlines())


SHORT_ANSWERS = [
    # (matmul, solve for, chip, language, most lines at 100 columns for each strategy that can be the fastest:
    # its name, times and regime, its region where that fits two lines)
    ("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", "tpu-v5p", "en", 7),
    ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "I", "tpu-v5e", "en", 7),
    ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "I", "tpu-v5e", "zh", 7),
    ("A[I_X, J_Y] · B[J_Y, K_Z] -> C[I_X, K_Z]", "I", "tpu-v5e", "en", 8),
]


@pytest.mark.parametrize(("mm", "symbol", "chip", "lang", "most"), SHORT_ANSWERS)
def test_compare_answers_shortly_and_pairs_brings_the_rest_back(capsys, mm, symbol, chip, lang, most):
    argv = ["compare", mm, "--solve-for", symbol, "--hw", chip, "--lang", lang]
    data = run_json(capsys, *argv)
    code, out, _ = run(capsys, *argv)
    assert code == 0 and screen_lines(out) <= 6 + most * len(data["fastest"])
    lines = out.splitlines()
    if lang == "en":  # nothing but the headings, each strategy's lines and the neighbours: no pair's condition
        said = ("T_math = ", "communication-bound", "memory-bound", "never communication-bound", "fastest iff", "[")
        body = [line for line in lines[3:-3] if not re.match(r"\d+\. ", line)]
        assert all(line.lstrip().startswith(said) for line in body), body
    # every strategy that can be the fastest has its regime (communication-bound or why not), said once
    regime_lines = [line for line in lines if "communication-bound" in line or "通信受限" in line]
    assert len(regime_lines) == len(data["fastest"])
    label = "fastest iff " if lang == "en" else "最快，当且仅当 "
    # each strategy that can win, once, with its times, and its region where that fits two lines
    fitting = 0
    for best in data["fastest"]:
        heading = f"{best['strategy']}. {best['name']}"
        assert lines.count(heading) == 1
        assert lines[lines.index(heading) + 1].lstrip().startswith("T_math = ")
        where, numeric = best["where"]["text"], best["numeric"]["text"]
        fits = len(f"     fastest iff {where}") <= 200 and len(f"       [{chip}: {numeric}]") <= 200
        fitting += fits
        if lang == "en":
            assert (f"     fastest iff {where}" in lines) == fits
    assert sum(1 for line in lines if line.lstrip().startswith(label)) == fitting
    # the others as one count (why, in numbers), and the neighbours: every pair whose conditions make the regions
    never = data["never_fastest"]
    as_fast = sum(1 for n in never if n["as_fast"])
    if lang == "en":  # counts said as counts, the first with its noun
        assert f"{len(data['fastest'])} of {len(data['strategies'])} can be the fastest" in lines[2]
        sampled, said = len(never) - as_fast, []
        for count, why in ((as_fast, "dominated everywhere"), (sampled, "wins nowhere in the sampled region")):
            if count:
                noun = "" if said else " strategy" if count == 1 else " strategies"
                said.append(f"{count}{noun} ({'' if count == 1 else 'each '}{why})")
        assert lines[2].endswith(f"; never the fastest: {', '.join(said)}" if said else "can be the fastest")
    (neighbours,) = [line for line in lines if line.startswith(("neighbours: ", "相邻策略："))]
    groups = re.split("：|: ", neighbours, maxsplit=1)[1].split("; ")
    listed = {(int(a), int(b)) for group in groups for a, bs in [group.split(": ")] for b in bs.split(",")}
    assert listed == {(p["a"], p["b"]) for p in data["conditions"]["pairs"]}
    assert "--pairs" in lines[-2] and "--map" in lines[-1]
    # --pairs: each pair's condition and each strategy's regime come back, as --json has them
    code, full, _ = run(capsys, *argv, "--pairs")
    assert code == 0 and "--pairs" not in full
    beats = "{a} beats {b} iff {c}" if lang == "en" else "{a} 优于 {b}，当且仅当 {c}"
    for pair in data["conditions"]["pairs"]:
        if lang == "en":
            assert beats.format(a=pair["a"], b=pair["b"], c=pair["a_wins_if"]["text"]) in full
        else:
            assert beats.format(a=pair["a"], b=pair["b"], c="") in full
    for regime in data["conditions"]["regimes"]:
        assert f"{regime['strategy']}. {regime['name']}" in full
        if lang == "en":
            assert f"communication-bound iff {regime['communication_bound_if']['text']}" in full


def test_compare_with_strategies_listed_keeps_every_pair(capsys):
    # strategies picked by number, HBM left out: the book's case analysis, every pair
    argv = ["compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "B", "--hw", "tpu-v5p", "--strategies", "1,2"]
    code, out, _ = run(capsys, *argv, "--no-hbm")
    assert code == 0 and "1 beats 2 iff:" in out and "--pairs" not in out
    assert "     communication-bound iff B < C/W_ici [TPU v5p: B < 2550]" in out.splitlines()
    # with T_hbm counted (nine combinations of regimes), each pair in the fewest relations, as the README shows it
    code, out, _ = run(capsys, *argv)
    lines = out.splitlines()
    assert code == 0 and "     communication-bound iff B < C/W_ici [TPU v5p: B < 2550]" in lines
    (beats,) = [line for line in lines if line.startswith("1 beats 2 iff ")]
    assert "(D > 2·C/W_ici)" in beats and "(B < D/2)" in beats  # the chapter's "D > 2B" and "D > 5100", and HBM's
    assert sum(line.lstrip().startswith("memory-bound (T_hbm the largest) iff ") for line in lines) == 2


def test_best_sharding_command(capsys):
    data = run_json(
        capsys, "best-sharding", "x[B, D] · W_in[D, F] -> Tmp[B, F]", "Tmp[B, F] · W_out[F, D] -> Out[B, D]",
        "--mesh", "X=2,Y=2", "--shape", "B=128,D=8192,F=32768", "--hw", "v5e", "--memory", "300MB",
    )  # fmt: skip
    assert data["best"]["stored"]["W_in"] in ("W_in[D, F_XY]", "W_in[D, F_YX]")
    assert data["best"]["memory_bytes_per_device"] <= 300e6
    assert data["fitting"] <= data["considered"]
    code, out, _ = run(capsys, "best-sharding", "A[I, J] · B[J, K] -> C[I, K]", "--mesh", "X=4",
                       "--shape", "I=4096,J=4096,K=4096", "--hw", "v5e", "--out", "C[I, K]")  # fmt: skip
    assert code == 0 and out.startswith("A[I, J] · B[J, K] -> C[I, K]") and "best: store" in out
    code, out, _ = run(capsys, "best-sharding", "x[B, D] · W[D, F] -> y[B, F]", "--mesh", "X=2,Y=2",
                       "--shape", "B=128,D=8192,F=32768", "--hw", "v5e", "--memory", "1MB")  # fmt: skip
    assert code == 1 and "nothing fits in 1,000,000 B" in out  # exit 1: no answer, but not bad input
    assert "to fit: allow more memory per device (--memory)" in out  # and what to change


PLANNER_ERROR_CASES = [
        (["matmul", "A[I, J] ·_K B[J, K]"], "names K under the product sign"),
        (["matmul", "A[I, J] B[J, K]"], "expected a product sign"),
        (["matmul", "A[I_X, J] · B[J, K] -> C[I_X, K_X]"], "mesh axis X shards both I and K"),
        (["compare", "A[I, J] · B[J, K]", "--solve-for", "Q"], "'Q' does not appear in the strategies' costs"),
        (["compare", "A[I, J_X] · B[J, K]", "--solve-for", "I", "--strategies", "1,x"], "takes strategy numbers"),
        (["compare", "A[I, J_X] · B[J, K]", "--solve-for", "I", "--strategies", "9"], "there is no strategy 9"),
        (["best-sharding", "A[I, J] · B[J, K]", "--mesh", "X=2", "--shape", "I=4,J=4,K=4"], "needs a chip"),
        (["best-sharding", "A[I, J] · B[J, K]", "--mesh", "X=2", "--hw", "v5e"], "needs every dim's size"),
        (["best-sharding", "A[I, J] · B[J, K]", "--mesh", "X=2", "--shape", "I=4,J=4,K=4", "--hw", "v5e",
          "--memory", "lots"], "cannot read the memory limit 'lots'"),
        (["best-sharding", "A[I, J] · B[J, K] -> C[I, K]", "Q[K, L] · R[L, M] -> S[K, M]", "--mesh", "X=2",
          "--shape", "I=4,J=4,K=4,L=4,M=4", "--hw", "v5e"], "does not use C, the result of matmul 1"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "pattern"), PLANNER_ERROR_CASES)
def test_planner_errors_are_one_line(capsys, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("symshard: error: ") and err.count("\n") == 1
    assert pattern in err


# -- the command line in Chinese ---------------------------------------------------------------------


def english_in(text):
    """English left in Chinese output, ignoring quoted input, command-line options and lists of names."""
    from helpers import english_left

    return english_left(re.sub(r"'[^']*'|--[\w-]+|[\w+-]+(?:, [\w+-]+)+", " ", text))


def numbers(text):
    """The numbers of a report, in order of size: the same in every language."""
    return sorted(re.findall(r"(?<![\w|])[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?", text))


MORE_BAD_INPUTS = [
    ["shard", "A[I_X, J]", "--mesh", "X=0"],
    ["shard", "A[I_X, J]", "--mesh", "X=2,X=4"],
    ["shard", "A[I, I]"],
    ["shard", "A[I_X]", "--shape", "I=-4"],
    ["shard", "A[I_X]", "--shape", "I=4,I=8"],
    ["shard", "A[I_X]", "--hw-set", "W_hbm=-1"],
    ["shard", "A[I_X]", "--hw-set", "W_hbm=fast"],
    ["shard", "A[I_X]", "--mesh", "X=2", "--topology", "Y=ring"],
    ["shard", "A[I_X]", "--mesh", "X=1e40"],
    ["collective", "AllGather_XX(A[I_X])"],
    ["collective", "ReduceScatter_X(C[I, K]{U_X})"],
    ["collective", "AllToAll_{X,I}(A[I_X, J])"],
    ["collective", "AllGather_X(A[I_X]) -> A[I_X]"],
    ["matmul", "A[I, J] · B[J, K] -> C[I, L]"],
    ["matmul", "A[I_X, J] · B[J, K]", "--mesh", "X=2", "--model", "exact"],
    ["matmul", "A[I_X, J] · B[J, K]", "--top", "x"],
    ["matmul", "A[I_X, J] · B[J, K]", "--overlap", "--serial"],
    ["matmul", "A[I_X, J] · B[J, K]", "--mesh"],
    ["matmul", "A[I_X, J] ·_LOCAL B[J, K] -> C[I, K]"],
    ["compare", "A[I, J_X] · B[J, K]"],
    ["verify", "A[I_X, J] · B[J, K]"],
    ["verify", "A[I_X, J] · B[J, K]", "--mesh", "X,Y", "--shape", "I=4,J=4,K=4"],
    ["best-sharding", "A[I, J] · B[J, K]", "--mesh", "X=2", "--shape", "I=4,J=4,K=4", "--hw", "v5e", "--memory", "-3MB"],
    ["layer", "--scheme", "zp"],
    ["layer", "--scheme", "tp", "--mesh", "Q=2"],
    ["layer", "--scheme", "tp", "--shape", "Z=2"],
    ["layer", "--scheme", "tp", "--mesh", "Y=0"],
    ["layer", "--scheme", "tp", "--solve-for", "Q"],
    ["problems", "show", "nosuch"],
    ["problems", "check", "device-memory", "bogus=3"],
    ["problems", "check", "device-memory", "rows=lots"],
    ["problems", "check", "device-memory", "3"],
    ["problems", "generate", "--seed", "1", "--out", "/tmp/x"],
    ["problems", "generate", "--seed", "1", "--count", "0", "--out", "/tmp/x"],
    ["problems", "list", "--families", "/no/such/folder"],
    ["hardware", "gtx1080"],
]  # fmt: skip


def _chinese_error_cases():
    from notation.test_notation import INVALID, INVALID_COLLECTIVES  # the notation tests' table of bad input

    cases = [argv for argv, _ in ERROR_CASES + PLANNER_ERROR_CASES] + MORE_BAD_INPUTS
    cases += [["shard", text] for text, error, _ in INVALID if error is not None]
    cases += [["collective", text] for text, _ in INVALID_COLLECTIVES]
    cases += [["collective", "Gather_X(A[I_X])"], ["collective", "AllGather_{,X}(A[I_X])"]]
    return cases


@pytest.mark.parametrize("argv", _chinese_error_cases())
def test_errors_in_chinese(capsys, argv):
    code, out, english = run(capsys, *argv)
    assert code == 2 and english.startswith("symshard: error: ")
    code, out, err = run(capsys, *argv, "--lang", "zh")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("symshard: 错误："), err
    assert english_in(err) is None, f"untranslated: {err}"
    message, _, hint = err.partition("；提示：")
    assert re.search(r"[\u4e00-\u9fff]", message.removeprefix("symshard: 错误："))
    assert bool(hint) == ("; hint: " in english)
    if hint:
        assert re.search(r"[\u4e00-\u9fff]", hint)
    for given in argv:  # the input is quoted unchanged
        if f"'{given}'" in english:
            assert f"'{given}'" in err, (given, err)
    assert run(capsys, *argv)[2] == english  # and English is still English


def test_language_before_the_command_and_from_the_environment(capsys, monkeypatch):
    _, _, err = run(capsys, "--lang", "zh", "shard", "A[I_X, J_X]")
    assert err.startswith("symshard: 错误：在 'A[I_X, J_X]' 中，网格轴 X 同时切分了 I 和 J")
    monkeypatch.setenv("SYMSHARD_LANG", "zh")
    _, _, err = run(capsys, "shard", "A[I_X, J_X]")
    assert err.startswith("symshard: 错误：")
    _, _, err = run(capsys, "frobnicate")
    assert err.startswith("symshard: 错误：参数 COMMAND：无效的选项 'frobnicate'")
    code, out, _ = run(capsys, "shard", "A[I_X, J]", "--lang", "en")
    assert code == 0 and out.startswith("A[I_X, J] on mesh X, bf16")
    code, out, _ = run(capsys, "problems", "show", "device-memory")
    assert code == 0 and "提示 1" in out
    monkeypatch.setenv("SYMSHARD_LANG", "fr")
    code, _, err = run(capsys, "shard", "A[I_X]")
    assert code == 2 and err.startswith("symshard: error: unknown language 'fr' in $SYMSHARD_LANG")
    monkeypatch.delenv("SYMSHARD_LANG")
    code, _, err = run(capsys, "shard", "A[I_X]", "--lang", "fr")
    assert code == 2 and "unknown language 'fr'" in err and "did you mean" not in err
    code, _, err = run(capsys, "problems", "show", "allgather-time", "--lang", "fr")
    assert code == 2 and "has no text in language 'fr'" in err  # the family says which languages it has
    code, out, _ = run(capsys, "matmul", "--help")
    assert code == 0 and "SYMSHARD_LANG" in out and "--explain" in out


COMMANDS = [
    ["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--shape", "I=1024,J=4096", "--hw", "tpu-v5e"],
    ["shard", "A[I_X, J]{U_Y}"],
    ["collective", "AllGather_Y(A[E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=2048,F=8192", "--hw", "tpu-v5e"],
    ["collective", "AllReduce_X(C[I, K]{U_X})"],
    ["collective", "AllGather_X(A[I_XY, J])", "--hw", "h100", "--mesh", "X=8,Y=2"],
    ["collective", "AllReduce_X(G[I]{U_X})", "--hw", "h100", "--mesh", "X=1024", "--shape", "I=1048576"],
    ["collective", "AllToAll_{X,J}(A[I_X, J])", "--mesh", "X=4", "--hw", "v5p", "--model", "ring"],
    ["matmul", "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "--mesh", "X=4,Y=2", "--shape", "I=1024,J=1024,K=1024",
     "--hw", "tpu-v5e", "--top", "4", "--explain"],
    ["matmul", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--hw", "tpu-v5p", "--explain"],
    ["matmul", "A[I_X, J] · B[J, K_X]", "--serial", "--top", "100"],
    ["matmul", "A[I, J_X, L_Y] · B[J_X, K] -> C[I, K]"],
    ["compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "B", "--hw", "tpu-v5p"],
    ["compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "D", "--strategies", "1,2", "--serial"],
    ["best-sharding", "x[B, D] · W_in[D, F] -> Tmp[B, F]", "Tmp[B, F] · W_out[F, D] -> Out[B, D]", "--mesh",
     "X=2,Y=2", "--shape", "B=128,D=8192,F=32768", "--hw", "v5e", "--memory", "300MB"],
    ["best-sharding", "x[B, D] · W_in[D, F] -> Tmp[B, F]", "--mesh", "X=2,Y=2", "--shape", "B=128,D=8192,F=32768",
     "--hw", "v5e", "--memory", "1MB"],
    ["layer", "--scheme", "fsdp+tp", "--mesh", "X=4,Y=4", "--shape", "B=8192,D=8192,F=32768", "--hw", "tpu-v5p"],
    ["layer", "--scheme", "dp"],
    ["layer", "--scheme", "tp", "--serve", "--hw", "v5e"],
    ["layer", "--scheme", "fsdp+tp", "--hw", "tpu-v5p", "--comm-overlap", "none"],
    ["hardware"],
    ["hardware", "v5p"],
    ["hardware", "h100"],
    ["problems", "list"],
    ["problems", "check", "device-memory", "rows=128", "bytes=1 MiB"],
    pytest.param(["verify", "A[I_X, J] · B[J_X, K] -> C[I, K_X]", "--mesh", "X=4,Y=2", "--shape", "I=64,J=64,K=64",
                  "--dtype", "bf16", "--run", "best"], marks=pytest.mark.jax),
]  # fmt: skip


def _run_anywhere(capsys, *argv):
    if argv[0] != "verify":
        return run(capsys, *argv)
    # JAX needs its simulated devices before it is imported: a fresh process
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    proc = subprocess.run([sys.executable, "-m", "symshard", *argv], capture_output=True, text=True, env=env)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("argv", COMMANDS)
def test_commands_in_chinese(capsys, argv):
    if argv[0] == "verify":
        pytest.importorskip("jax")
    english = _run_anywhere(capsys, *argv)
    chinese = _run_anywhere(capsys, *argv, "--lang", "zh")
    assert english[0] == chinese[0] and chinese[2] == ""
    out = chinese[1]
    assert re.search(r"[\u4e00-\u9fff]", out)
    lines = out.splitlines()
    if argv[:2] == ["problems", "list"]:  # family names and difficulties are names, titles are text
        lines = [line.split(None, 2)[-1] for line in lines]
    left = [line for line in lines if english_in(line)]
    if argv[0] == "hardware" and len(argv) > 1:  # the sources are citations of English books and pages
        left = [line for line in left if "[" not in line]
    assert left == []
    if argv[0] not in ("verify", "problems"):  # (verify's timings differ from run to run)
        assert numbers(out) == numbers(english[1])  # numbers, units and formulas do not change
    assert len(out.splitlines()) == len(english[1].splitlines())


def test_matmul_explain_and_json_in_chinese(capsys):
    argv = ["matmul", "A[I, J_X] · B[J_X, K] -> C[I, K]", "--mesh", "X=4", "--shape", "I=64,J=64,K=64", "--hw", "v5e"]
    code, out, _ = run(capsys, *argv, "--explain", "--top", "1")
    assert (
        code == 0 and "\n         Each device multiplies its own blocks, A[I, J_X] · B[J_X, K] -> C[I, K]{U_X}" in out
    )
    english = run_json(capsys, *argv)
    chinese = run_json(capsys, *argv, "--lang", "zh")
    assert set(english) <= set(chinese)  # keys are kept; Chinese sits beside the English
    assert {k for k in chinese if k not in english} == {"language", "reason_zh", "notes_zh", "assumptions_zh"}
    assert all(chinese[k] == english[k] for k in english if k != "strategies")
    assert chinese["reason"] == english["reason"] and chinese["reason_zh"].startswith("两个操作数都沿 X")
    s_en, s_zh = english["strategies"][0], chinese["strategies"][0]
    assert s_zh == {**s_en, "explanation_zh": s_zh["explanation_zh"], "why_zh": s_zh["why_zh"]}
    assert s_en["why"]["text"] == "the fastest" and s_zh["why_zh"] == "最快"
    assert len(s_en["explanation"]) == len(s_zh["explanation_zh"]) == len(s_en["steps"])
    data = run_json(capsys, "compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "B", "--lang", "zh")
    assert data["conditions"]["regimes"][1]["communication_bound_if"]["text"] == "B < C/W_ici"
    assert data["assumptions_zh"][0] == "集合通信时间按带宽受限计算（不计每跳延迟），与本章的推理一致"


# -- a newcomer's first hour: what tripped a new user, each pinned ---------------------------------


def test_a_matmul_without_an_output_never_calls_it_c(capsys):
    code, out, _ = run(capsys, "matmul", "A[I_X, J] · B[J, K]", "--mesh", "X=4")
    assert code == 0 and "Out[I_X, K]" in out
    assert not re.search(r"\bC\[", out)  # C is the chip's FLOP/s in every formula on the same screen


def test_layer_numbers_its_steps_and_defines_its_symbols(capsys):
    code, out, _ = run(capsys, "layer", "--scheme", "fsdp+tp", "--mesh", "X=8,Y=4", "--shape", "B=4096,D=8192,F=32768",
                       "--hw", "tpu-v5p")  # fmt: skip
    assert code == 0
    numbered = re.findall(r"^ +(\d+)\. ", out, flags=re.M)
    assert numbered == [str(n) for n in range(1, len(numbered) + 1)] and len(numbered) >= 10
    for steps in re.findall(r"overlaps steps ([\d, ]+)", out):  # every step it points at is a numbered matmul
        for n in steps.split(", "):
            assert re.search(rf"^ +{n}\. .* · .*FLOPs", out, flags=re.M), n
    assert "M_X, M_Y: how many physical mesh axes each logical axis spans (--spread); here M_X = 1, M_Y = 1" in out
    data = run_json(capsys, "layer", "--scheme", "fsdp", "--mesh", "X=8", "--hw", "tpu-v5p")
    steps = [c["step"] for ph in data["phases"].values() for c in ph["collectives"]]
    assert min(steps) >= 1  # the JSON numbers steps as the text does


def test_help_texts_are_whole_and_fit_their_command(capsys):
    for argv in (["layer", "--help"], ["problems", "generate", "--help"], ["best-sharding", "--help"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        flat = " ".join(out.split())
        if argv[0] == "problems":  # it used to end mid-sentence: "... shows each family's"
            assert "gives each family's languages" in flat
        if argv[0] == "best-sharding":
            assert "1 when nothing fits" in flat
    assert main(["layer", "--help"]) == 0
    out = capsys.readouterr().out
    assert "I=1024,J=4096" not in out and "--shape B=4096,D=8192,F=32768" in out and "examples:" in out


def test_a_shape_can_serve_several_commands(capsys):
    shape = "E=2048,F=8192,B=16"
    code, out, _ = run(capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "Y=4", "--shape", shape, "--hw", "v5e")
    assert code == 0 and "559 µs" in out
    assert out.rstrip().endswith("note: --shape's sizes for B were set aside: 'AllGather_Y([E_Y, F]) -> [E, F]' has no "
                                 "such dim (--strict refuses them)")  # fmt: skip
    data = run_json(capsys, "shard", "[E_Y, F]", "--mesh", "Y=4", "--shape", shape)
    assert data["unused_sizes"] == ["B"] and data["local_shape"] == [512, 8192]
    code, _, err = run(capsys, "collective", "AllGather_Y([E_Y, F])", "--mesh", "Y=4", "--shape", shape, "--strict")
    assert code == 2 and "the shape gives a size for B" in err


def test_shell_completion_completes_commands_and_options(capsys, tmp_path):
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "_shtab_symshard" in script
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash to run the completion script in")
    (tmp_path / "symshard.bash").write_text(script, encoding="utf-8")
    probe = (
        f"source {tmp_path / 'symshard.bash'}\n"
        'COMP_WORDS=(symshard ma); COMP_CWORD=1; _shtab_symshard; echo "${COMPREPLY[@]}"\n'
        'COMP_WORDS=(symshard matmul --mes); COMP_CWORD=2; _shtab_symshard; echo "${COMPREPLY[@]}"\n'
        'COMP_WORDS=(symshard problems ge); COMP_CWORD=2; _shtab_symshard; echo "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run([bash, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["matmul", "--mesh", "generate"]
    assert main(["completion", "fish"]) == 2  # not a shell it writes for: one line, exit 2


def test_long_commands_show_progress_on_a_terminal_only(capsys, monkeypatch, tmp_path):
    argv = ["problems", "generate", "--seed", "3", "--count", "30", "--format", "json"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().err == ""  # not a terminal: no bar
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "problems:" in err and "30/30" in err  # tqdm's bar, drawn on stderr
    assert main([*argv, "--out", str(tmp_path / "c"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["count"] == 30  # never under --json


@pytest.mark.parametrize(
    ("scheme", "mesh", "hint"),
    [
        ("dp", "X=8,Y=4", "it shards over one axis, X: --mesh X=32"),
        ("fsdp", "X=8,Y=4", "it shards over one axis, X: --mesh X=32"),
        ("tp", "X=8", "it shards over one axis, Y: --mesh Y=8"),
        ("fsdp+tp", "A=8,B=4", "its axes are X, Y: --mesh X=8,Y=4"),
    ],
)
def test_a_mesh_written_for_another_scheme_gets_a_mesh_to_paste(capsys, scheme, mesh, hint):
    # a newcomer's first hour: one mesh reused across `layer --scheme ...` runs
    assert main(["layer", "--scheme", scheme, "--mesh", mesh, "--hw", "tpu-v5e"]) == 2
    err = capsys.readouterr().err
    assert f"hint: {hint}" in err and err.count("\n") == 1
    assert main(["layer", "--scheme", scheme, "--mesh", hint.split("--mesh ")[1], "--hw", "tpu-v5e"]) == 0


def test_a_chinese_problem_set_has_a_chinese_title_unless_one_is_given(tmp_path, capsys):
    # a newcomer's first hour: `problems generate --lang zh` wrote "# Problem set" above Chinese problems
    for lang, title in (("zh", "# 习题集"), ("en", "# Problem set")):
        out = tmp_path / lang
        assert main(["problems", "generate", "--seed", "3", "--count", "2", "--lang", lang, "--format", "md",
                     "--out", str(out)]) == 0  # fmt: skip
        assert (out / "problems.md").read_text(encoding="utf-8").splitlines()[0] == title
    given = tmp_path / "given"
    assert main(["problems", "generate", "--seed", "3", "--count", "2", "--lang", "zh", "--format", "md",
                 "--title", "Week 3", "--out", str(given)]) == 0  # fmt: skip
    assert (given / "problems.md").read_text(encoding="utf-8").startswith("# Week 3\n")
    capsys.readouterr()


def _example_lines():
    from symshard.cli import EXAMPLES

    for path, lines in EXAMPLES.items():
        for line in lines:
            yield pytest.param(path, line, id=line[9:60])


@pytest.mark.parametrize(("path", "line"), list(_example_lines()))
def test_every_example_in_the_help_runs_as_written(tmp_path, monkeypatch, capsys, path, line):
    import shlex

    from symshard.cli import argument_parser

    # the example is in the command's own --help
    with pytest.raises(SystemExit):
        argument_parser().parse_args([*path, "--help"])
    assert line in capsys.readouterr().out
    if path[0] in ("site", "verify", "measure"):
        # the site commands build for a minute (test_site.py runs them); verify and measure need JAX
        # (test_jax_verify.py, test_chip_calibration.py)
        return
    monkeypatch.chdir(tmp_path)
    if path == ("calibrate",):  # real measurements under the names the examples give
        data = Path(__file__).resolve().parents[2] / "site" / "data"
        shutil.copy(data / "nccl-tests-allreduce-a100-2nodes-16gpus.txt", "all_reduce_perf.txt")
        shutil.copy(data / "chip-h200-torch-2026-11.csv", "chip-h200.csv")
    argv = shlex.split(line.split(" > ")[0])[1:]
    code = main(argv)
    out, err = capsys.readouterr()
    # 0, or 1 where the command answers "no" (problems check grading wrong answers)
    assert code in ((0, 1) if path == ("problems", "check") else (0,)), err
    assert out.strip()

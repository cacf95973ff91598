"""The command line, end to end and in-process: readable text, JSON keys, one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

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
    assert "T_hop" in gpu["time_s"]  # the book gives no GPU hop latency
    code, out, _ = run(
        capsys, "collective", "AllGather_X(A[I_X])", "--mesh", "X=8", "--shape", "I=4096", "--hw", "h100"
    )
    assert code == 0 and "--hw-set T_hop=SECONDS" in out
    timed = run_json(
        capsys, "collective", "AllGather_X(A[I_X])", "--mesh", "X=8", "--shape", "I=4096", "--hw", "h100",
        "--hw-set", "T_hop=1e-6",
    )  # fmt: skip
    assert timed["regime"] == "latency"


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


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (["shard", "A[I_X, J_X]"], "mesh axis X shards both I and J"),
        (["shard", "A[I_X, J]", "--mesh", "Y=2"], "mesh axis X in 'A[I_X, J]' is not in the mesh Y=2"),
        (["shard", "A[I_X, J]", "--mesh", "X=3", "--shape", "I=10"], "does not split evenly"),
        (["shard", "A[I_X", "--mesh", "X=3"], "unbalanced brackets"),
        (["shard", "A[I_X]", "--hw", "tpu-v9"], "unknown hardware 'tpu-v9'"),
        (["shard", "A[I_X]", "--dtype", "bf61"], "unknown dtype 'bf61'"),
        (["shard", "A[I_X]", "--shape", "K=4"], "has no such dim"),
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
    ],
)
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

    readme = (Path(__file__).parents[1] / "README.md").read_text()
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

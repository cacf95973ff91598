"""How long ``symshard compare`` takes against ``import sympy``, as whole processes (issue 33).

Each workload is a fresh ``python -m symshard compare ...`` process timed from start to exit, next to
``python -c "import sympy"`` timed in the same run (the two alternate, so that other load on the machine
affects both alike), and reported as the ratio of their medians, the figure the targets are set in:

* ``compare`` of a matmul on two mesh axes (the issue's ``A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]``, solved
  for ``I`` on a TPU v5e): within 4x;
* the same on three axes (``... B[J_Y, K_Z] -> C[I_X, K_Z]``): within 6x;
* the three-axis one with ``--pairs`` (every pair of neighbours' condition, every regime): within 10x.

``--baseline DIR`` also times the same commands with the symshard found in ``DIR`` (a checkout or an
unpacked ``git archive`` of an earlier commit, put first on ``PYTHONPATH``), alternating with the others,
so that today's figures and the code's before its change come from one run.

Usage::

    python bench/bench_compare.py [--repeats 5] [--timeout 120] [--only NAME] [--baseline DIR]

A run that exceeds ``--timeout`` is reported as longer than it. Exit status 0 when every workload's
ratio meets its target, 1 otherwise. Each command runs once before it is timed (bytecode written,
files cached).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

TWO_AXES = "A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]"
THREE_AXES = "A[I_X, J_Y] · B[J_Y, K_Z] -> C[I_X, K_Z]"

# (name, command-line arguments after `symshard`, target: at most this many times `import sympy`)
WORKLOADS: list[tuple[str, list[str], float]] = [
    ("compare, 2 axes", ["compare", TWO_AXES, "--solve-for", "I", "--hw", "tpu-v5e"], 4.0),
    ("compare, 3 axes", ["compare", THREE_AXES, "--solve-for", "I", "--hw", "tpu-v5e"], 6.0),
    ("compare --pairs, 3 axes", ["compare", THREE_AXES, "--solve-for", "I", "--hw", "tpu-v5e", "--pairs"], 10.0),
]

SYMPY = [sys.executable, "-c", "import sympy"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(argv: list[str], timeout: float, env: dict[str, str], cwd: str | None = None) -> tuple[float, float]:
    """Seconds one process takes from start to exit (``inf`` past ``timeout``), and the processor time it
    used (user and system: what other load on a shared machine changes least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout, check=False, env=env, cwd=cwd
        )
    except subprocess.TimeoutExpired:
        return float("inf"), float("inf")
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="processes timed per command (default 5)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds before a run is given up (default 120)")
    parser.add_argument("--only", action="append", help="run only the workloads whose name contains this")
    parser.add_argument("--baseline", metavar="DIR", help="also time the symshard in DIR (first on PYTHONPATH)")
    args = parser.parse_args(argv)
    baseline_env = None
    baseline = os.path.abspath(args.baseline) if args.baseline else None
    if baseline:  # run from there too: `python -m` puts the working directory first on the path
        baseline_env = {**ENV, "PYTHONPATH": baseline}
        print(f"baseline: the symshard in {args.baseline}")
    print(f"{sys.executable}; median of {args.repeats} runs, each ratio to `import sympy` timed alongside")
    ok = True
    for name, cli, target in WORKLOADS:
        if args.only and not any(o in name for o in args.only):
            continue
        commands = [("sympy", SYMPY, ENV, None), ("now", [sys.executable, "-m", "symshard", *cli], ENV, None)]
        if baseline_env is not None:
            commands.append(("before", [sys.executable, "-m", "symshard", *cli], baseline_env, baseline))
        for _, command, env, cwd in commands:
            wall(command, args.timeout, env, cwd)  # warm-up: bytecode written, files cached
        times: dict[str, list[float]] = {kind: [] for kind, *_ in commands}
        cpu: dict[str, list[float]] = {kind: [] for kind, *_ in commands}
        for i in range(args.repeats):
            for kind, command, env, cwd in commands if i % 2 == 0 else commands[::-1]:
                seconds, used = wall(command, args.timeout, env, cwd)
                times[kind].append(seconds)
                cpu[kind].append(used)
        base, cpu_base = statistics.median(times["sympy"]), statistics.median(cpu["sympy"])
        now = statistics.median(times["now"])
        ratio = now / base
        passed = ratio <= target
        ok = ok and passed
        line = (
            f"  {name:<24} {now:6.2f} s = {ratio:4.1f}x import sympy ({base:.2f} s); target {target:g}x: "
            f"{'PASS' if passed else 'FAIL'} (processor time {statistics.median(cpu['now']) / cpu_base:.1f}x)"
        )
        if baseline_env is not None:
            before = statistics.median(times["before"])
            line += (
                f"; before: {before:.2f} s = {before / base:.1f}x "
                f"(processor time {statistics.median(cpu['before']) / cpu_base:.1f}x)"
            )
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

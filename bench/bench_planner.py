"""How long the planner and the sharding search take on the chapter's 2-D matmul over a 4x4x4 mesh.

Three workloads, all ``A[I, J] · B[J, K] -> C[I, K]`` on the mesh ``X=4,Y=4,Z=4``:

* **symbolic plan**: ``plan(mm, Mesh("X=4,Y=4,Z=4"))`` with no sizes and no chip,
  then every strategy's total time read (a SymPy expression); every cost stays a
  formula. Target: under 50 ms.
* **numeric plan**: the same with ``I=J=K=8192`` on a TPU v5p
  (``Mesh("X=4,Y=4,Z=4", hardware="tpu-v5p")``, ``hardware="tpu-v5p"``), so every
  cost is an exact number and the strategies are ranked. Target: under 5 ms.
* **best_sharding**: ``best_sharding`` of the same matmul, sizes, mesh and chip
  with a 32 MB per-device memory limit (which binds: the fastest storage overall
  needs 42 MiB). Target: under 2 s.

Each target applies to the steady-state median: the matmul and mesh built once,
one warm-up call, then timed calls. The first call in a fresh interpreter (after
the imports, SymPy's caches cold) is timed separately in new processes, for
information: it is what one command-line call pays.

Usage::

    python bench/bench_planner.py [--repeats 20] [--fresh 5]

Exit status 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from symshard.algebra.units import format_bytes, format_seconds
from symshard.machines.mesh import Mesh
from symshard.memo import clear_caches
from symshard.notation.einsums import matmul
from symshard.planning.planner import plan
from symshard.planning.search import best_sharding

MATMUL = "A[I, J] · B[J, K] -> C[I, K]"
MESH = "X=4,Y=4,Z=4"
SHAPE = {"I": 8192, "J": 8192, "K": 8192}
CHIP = "tpu-v5p"
MEMORY_LIMIT = "32MB"

# the target of each workload's steady-state median, in seconds
TARGETS = {
    "symbolic plan": 0.050,
    "numeric plan": 0.005,
    "best_sharding": 2.0,
}


def workloads() -> dict[str, Callable[[], object]]:
    """The three timed calls, with the matmul and meshes built once."""
    mm = matmul(MATMUL)
    symbolic_mesh = Mesh(MESH)
    chip_mesh = Mesh(MESH, hardware=CHIP)

    def symbolic() -> object:
        clear_caches()  # time the planning itself, not symshard's memo of it
        p = plan(mm, symbolic_mesh)
        return [s.time for s in p.strategies]

    def numeric() -> object:
        clear_caches()
        p = plan(mm, chip_mesh, SHAPE, hardware=CHIP)
        return [s.time for s in p.strategies]

    def search() -> object:
        clear_caches()
        return best_sharding(mm, chip_mesh, SHAPE, hardware=CHIP, memory_limit=MEMORY_LIMIT).best

    return {"symbolic plan": symbolic, "numeric plan": numeric, "best_sharding": search}


def check_workload() -> None:
    """Print what each workload computes once, so that a broken workload shows before it is timed."""
    mm = matmul(MATMUL)
    symbolic = plan(mm, Mesh(MESH))
    print(f"workload: {MATMUL} on {MESH}")
    first = symbolic.strategies[0]
    print(f"  symbolic plan: {len(symbolic.strategies)} strategies; first listed {first.name}, time {first.time}")
    if symbolic.numeric:
        raise SystemExit("the symbolic plan came out numeric")
    chip_mesh = Mesh(MESH, hardware=CHIP)
    numeric = plan(mm, chip_mesh, SHAPE, hardware=CHIP)
    best = numeric.best
    if best is None or not best.time.is_number:
        raise SystemExit("the numeric plan did not rank its strategies")
    shape = ",".join(f"{d}={n}" for d, n in SHAPE.items())
    print(
        f"  numeric plan ({shape}, {CHIP}): {len(numeric.strategies)} strategies; "
        f"fastest {best.name} in {format_seconds(best.time)}"
    )
    result = best_sharding(mm, chip_mesh, SHAPE, hardware=CHIP, memory_limit=MEMORY_LIMIT)
    if result.best is None:
        raise SystemExit(f"best_sharding found nothing that fits in {MEMORY_LIMIT}")
    stored = ", ".join(str(a) for _, a in result.best.stored)
    print(
        f"  best_sharding (limit {MEMORY_LIMIT}): {result.fitting} of {result.considered} candidates fit; "
        f"store {stored} -> {result.best.output} in {format_seconds(result.best.time)}, "
        f"{format_bytes(result.best.memory_bytes_per_device)}"
    )


def steady(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median and minimum seconds of ``repeats`` calls after one warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def fresh(label: str, processes: int) -> tuple[float, float]:
    """Median and minimum seconds of the first call, each in a new interpreter running this
    script with ``--first-call`` (imports and set-up untimed)."""
    times = []
    for _ in range(processes):
        command = [sys.executable, __file__, "--first-call", label]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        times.append(float(out))
    return statistics.median(times), min(times)


def first_call(label: str) -> None:
    """Time one call of a workload in this (fresh) interpreter and print the seconds."""
    run = workloads()[label]
    start = time.perf_counter()
    run()
    print(repr(time.perf_counter() - start))


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=20,
        help="timed steady-state calls of each plan (default 20; a quarter of that, at least 3, for best_sharding)",
    )
    parser.add_argument("--fresh", type=int, default=5, help="fresh interpreters per first-call timing (default 5)")
    parser.add_argument("--first-call", choices=sorted(TARGETS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.first_call:
        first_call(args.first_call)
        return 0

    check_workload()
    runs = workloads()
    ok = True
    print(f"steady state (median and min of {args.repeats} calls; {max(3, args.repeats // 4)} for best_sharding):")
    for label, run in runs.items():
        repeats = args.repeats if label != "best_sharding" else max(3, args.repeats // 4)
        median, best = steady(run, repeats)
        target = TARGETS[label]
        passed = median < target
        ok = ok and passed
        verdict = f"target < {target * 1e3:g} ms: {'PASS' if passed else 'FAIL'} ({median / target:.2f} of it)"
        print(f"  {label:<14} median {ms(median)}  min {ms(best)}  {verdict}")
    print(f"first call in a fresh interpreter (median and min of {args.fresh} processes), for information:")
    for label in runs:
        median, best = fresh(label, args.fresh)
        print(f"  {label:<14} median {ms(median)}  min {ms(best)}  ({median / TARGETS[label]:.2f} of the target)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

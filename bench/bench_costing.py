"""How many numeric collective costings symshard does per second.

A costing is ``parse_collective(text).cost(mesh, shape, dtype="bf16",
hardware=chip, model=model)`` with every size and constant known, so the
result is a number of seconds. The workload is a fixed list of the chapter's
collectives (Pop Quiz 2, Question 2, the AllToAll and ReduceScatter examples)
on TPU and GPU meshes, each under the ``book`` and ``ring`` models. Four ways
to run it:

* **steady state**: expressions, meshes and shapes parsed once, only ``cost``
  in the loop (a planner ranking many candidates);
* **from strings**: the full path from the three texts and a chip name on every
  call (a CLI call or a notebook cell). ``parse_array`` is ``lru_cache``-d, but
  ``parse_collective``, the mesh text and the shape text are parsed each time;
* **from strings, parse cache cleared**: as above with ``parse_array``'s cache
  emptied before every round;
* **cold SymPy cache** (for information): SymPy's own cache emptied before
  every costing, the price of a costing nothing has warmed up.

Target: at least 2,000 costings per second, steady state and from strings.
One symbolic costing (no sizes, no chip) is timed for information.

Usage::

    python bench/bench_costing.py [--seconds 1.0] [--repeats 5]

Exit status 0 when the target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import sympy
from sympy.core.cache import clear_cache

from symshard import Hardware, Mesh, hardware
from symshard.costs.collectives import parse_collective
from symshard.costs.placement import resolve_shape
from symshard.memo import clear_caches
from symshard.notation.parser import _parse_array as cached_parse_array

TARGET = 2000.0
"""Costings per second that the steady-state and from-strings paths must reach."""

MODELS = ("book", "ring")

# The GPU presets carry NCCL's latencies: the time is a number, and the 16-GPU case spans two nodes.
H100 = "h100"

# (collective, mesh, shape, chip): the chapter's examples and a few neighbours.
CASES: list[tuple[str, str, str, str | Hardware]] = [
    ("AllGather_Y([E_Y, F])", "X=8,Y=4", "E=2048,F=8192", "tpu-v5e"),  # Pop Quiz 2 (a)
    ("AllGather_Y([E_Y, F])", "X=8,Y=4", "E=256,F=256", "tpu-v5e"),  # Pop Quiz 2 (b), latency-bound
    ("AllGather_X([B_X, D_Y])", "X=4,Y=4,Z=4", "B=1024,D=4096", "tpu-v4p"),  # Question 2
    ("AllGather_XY([B_X, D_Y])", "X=4,Y=4,Z=4", "B=1024,D=4096", "tpu-v4p"),  # Question 2
    ("AllReduce_Z([B_X, D_Y]{U_Z})", "X=4,Y=4,Z=4", "B=1024,D=4096", "tpu-v4p"),  # Question 2
    ("ReduceScatter_{X,K}(C[I, K]{U_X})", "X=8,Y=2", "I=1024,K=4096", "tpu-v5p"),
    ("AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]", "X=16", "I=1024,J=4096", "tpu-v5e"),
    ("AllToAll_{XY,J}(A[I_XY, J])", "X=4,Y=4,Z=4", "I=4096,J=4096", "tpu-v5p"),
    ("AllGather_X(A[I_XY, J])", "X=8,Y=2", "I=1024,J=4096", "tpu-v6e"),
    ("CollectivePermute_X(A[I_X, J])", "X=16", "I=1024,J=64", "tpu-v5e"),
    ("AllGather_X(A[I_X, J])", "X=8", "I=8192,J=8192", H100),  # one NVLink domain
    ("AllReduce_X(C[I, K]{U_X})", "X=16", "I=8192,K=8192", H100),  # spans two nodes: hierarchical
]

SYMBOLIC = "AllToAll_{X,J}(A[I_X, J])"


def steady_state() -> Callable[[], int]:
    """Costings of pre-parsed expressions on pre-built meshes and shapes."""
    work = []
    for text, mesh_text, shape_text, chip in CASES:
        expr = parse_collective(text)
        mesh = Mesh(mesh_text, hardware=chip)
        shape = resolve_shape(shape_text, expr.operand.dim_names, context=text)
        for model in MODELS:
            work.append((expr, mesh, shape, chip, model))

    def run() -> int:
        for expr, mesh, shape, chip, model in work:
            clear_caches()  # time the costing itself, not symshard's memo of it
            expr.cost(mesh, shape, dtype="bf16", hardware=chip, model=model)
        return len(work)

    return run


def from_strings(clear_parse_cache: bool = False, clear_sympy_cache: bool = False) -> Callable[[], int]:
    """Costings from the collective, mesh and shape texts on every call."""

    def run() -> int:
        if clear_parse_cache:
            cached_parse_array.cache_clear()
        for text, mesh_text, shape_text, chip in CASES:
            for model in MODELS:
                if clear_sympy_cache:
                    clear_cache()
                clear_caches()
                parse_collective(text).cost(mesh_text, shape_text, dtype="bf16", hardware=chip, model=model)
        return len(CASES) * len(MODELS)

    return run


def rate(run: Callable[[], int], seconds: float, repeats: int) -> tuple[float, float]:
    """Median and best costings per second over ``repeats`` runs of at least ``seconds`` each."""
    run()  # warm up
    rates = []
    for _ in range(repeats):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            done += run()
        rates.append(done / elapsed)
    return statistics.median(rates), max(rates)


def check_cases() -> None:
    """Print each case's numeric time once, so a wrong workload shows before it is timed."""
    print(f"workload: {len(CASES)} collectives x {len(MODELS)} models = {len(CASES) * len(MODELS)} costings per round")
    for text, mesh_text, shape_text, chip in CASES:
        times = []
        for model in MODELS:
            cost = parse_collective(text).cost(mesh_text, shape_text, dtype="bf16", hardware=chip, model=model)
            if not cost.time.is_number:
                raise SystemExit(f"not numeric: {text} on {mesh_text} ({model}): {cost.time}")
            times.append(f"{float(cost.time) * 1e6:9.2f}")
        name = chip if isinstance(chip, str) else f"{hardware(chip).name}*"
        print(f"  {text:<42} {mesh_text:<12} {shape_text:<14} {name:<9} book/ring µs: {' / '.join(times)}")


def time_symbolic() -> None:
    """One symbolic costing, cold and warm, for information."""
    clear_cache()
    cached_parse_array.cache_clear()
    start = time.perf_counter()
    cost = parse_collective(SYMBOLIC).cost()
    cold = time.perf_counter() - start
    start = time.perf_counter()
    parse_collective(SYMBOLIC).cost()
    warm = time.perf_counter() - start
    print(f"symbolic costing of {SYMBOLIC} (no sizes, no chip), for information:")
    print(f"  time = {sympy.sstr(cost.time)}")
    print(f"  {cold * 1e3:.1f} ms with SymPy's cache cold, {warm * 1e3:.2f} ms warm")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="minimum length of one timed run (default 1)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per mode (default 5)")
    args = parser.parse_args(argv)

    check_cases()
    print(f"numeric costings per second (median and best of {args.repeats} runs of >= {args.seconds:g} s):")
    modes = [
        ("steady state (pre-parsed)", steady_state(), True),
        ("from strings", from_strings(), True),
        ("from strings, parse cache cleared", from_strings(clear_parse_cache=True), True),
        ("cold SymPy cache (information)", from_strings(clear_parse_cache=True, clear_sympy_cache=True), False),
    ]
    ok = True
    for label, run, targeted in modes:
        median, best = rate(run, args.seconds, args.repeats)
        verdict = ""
        if targeted:
            passed = median >= TARGET
            ok = ok and passed
            verdict = f"  target >= {TARGET:,.0f}/s: {'PASS' if passed else 'FAIL'} ({median / TARGET:.1f}x)"
        print(f"  {label:<36} {median:9,.0f}/s  (best {best:,.0f}/s){verdict}")
    time_symbolic()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

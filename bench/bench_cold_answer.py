"""How long symshard takes, from cold caches, to answer "which collectives, how long" for one sharded matmul.

Issue 6: for one case of the 4×2 sweep (``A[I, J] · B[J, K] -> C[I, K]`` on ``X=4,Y=2``,
``I=J=K=64``, fp32 on a TPU v5e) symshard should answer at least 20 times faster than XLA
compiles the same sharded product. Timed, each call from cold caches (symshard's memo and the
resharding routes' caches cleared first, as ``scripts/jax_agreement.py`` does):

* **best**: :func:`symshard.planning.planner.best_strategy`, the answer itself;
* **plan**: :func:`symshard.plan`, which lists and costs every strategy;

for cases with collectives and a collective-free one (median and min of ``--repeats`` runs). With
JAX installed, XLA's compile time of the same case (``symshard.jax.xla_plans.xla_plan``, 8 simulated
CPU devices) is timed too and the ratio compared with the 20× target; without JAX the answer's
median is compared with a fixed budget (2.3 ms: 20× under the fastest XLA compile measured for
these cases on a 2-core machine, 47 ms). ``--sweep`` also times the answer for every one of the
1331 shardings of the sweep, once each, and prints the distribution.

Usage::

    python bench/bench_cold_answer.py [--repeats 21] [--xla-repeats 7] [--no-xla] [--sweep]

Exit status 0 when every case meets its target, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import symshard
from symshard.jax.sweeps import shardings  # the sweep's enumeration; loads no JAX
from symshard.memo import clear_caches
from symshard.planning.planner import best_strategy, reshard_routes, reshard_steps

MESH = "X=4,Y=2"
SHAPE = "I=64,J=64,K=64"
KWARGS = {"dtype": "fp32", "hardware": "tpu-v5e"}
SPEED_TARGET = 20  # the answer at least this many times faster than XLA's compile
BUDGET = 0.0023  # seconds: the target without JAX (20x under a 47 ms compile)

CASES = [
    ("with collectives", "A[I_X, J] · B[J, K_Y] -> C[I_Y, K_X]"),
    ("with collectives", "A[I, J_X] · B[J_X, K] -> C[I, K_X]"),
    ("with collectives", "A[I_XY, J] · B[J_X, K_Y] -> C[I, K_YX]"),
    ("collective-free", "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]"),
]


def cold() -> None:
    """Forget everything symshard has computed: its memo and the resharding routes' caches."""
    clear_caches()
    reshard_routes.cache_clear()
    reshard_steps.cache_clear()


def timed(run) -> float:
    cold()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:6.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="cold calls timed per case (default 21)")
    parser.add_argument("--xla-repeats", type=int, default=7, help="XLA compiles timed per case (default 7)")
    parser.add_argument("--no-xla", action="store_true", help="do not time XLA even if JAX is installed")
    parser.add_argument("--sweep", action="store_true", help="also time the answer for all 1331 shardings")
    args = parser.parse_args(argv)

    xla = not args.no_xla and importlib.util.find_spec("jax") is not None
    ok = True
    print(f"on {MESH}, {SHAPE}, {KWARGS['dtype']} on {KWARGS['hardware']}; each symshard call from cold caches")
    print(f"(median and min of {args.repeats} calls{'; XLA: median of ' + str(args.xla_repeats) if xla else ''}):")
    for label, case in CASES:
        best = [timed(lambda c=case: best_strategy(c, MESH, SHAPE, **KWARGS)) for _ in range(args.repeats)]
        full = [timed(lambda c=case: symshard.plan(c, MESH, SHAPE, **KWARGS)) for _ in range(args.repeats)]
        answer = statistics.median(best)
        line = (
            f"  {label:<16} {case}\n"
            f"    answer (best_strategy) median {ms(answer)} min {ms(min(best))}; "
            f"every strategy (plan) median {ms(statistics.median(full))} min {ms(min(full))}"
        )
        if xla:
            from symshard.jax.xla_plans import xla_plan

            p = symshard.plan(case, MESH, SHAPE, **KWARGS)
            compile_s = statistics.median(xla_plan(p).compile_seconds for _ in range(args.xla_repeats))
            ratio = compile_s / answer
            passed = ratio >= SPEED_TARGET
            line += f"\n    XLA compiles in {ms(compile_s)}: {ratio:.0f}x (target {SPEED_TARGET}x: "
            line += f"{'PASS' if passed else 'FAIL'})"
        else:
            passed = answer <= BUDGET
            line += f"\n    no JAX: budget {ms(BUDGET)}: {'PASS' if passed else 'FAIL'}"
        ok = ok and passed
        print(line, flush=True)
    if args.sweep:
        lhs = shardings("A", ("I", "J"), ("X", "Y"))
        rhs = shardings("B", ("J", "K"), ("X", "Y"))
        out = shardings("C", ("I", "K"), ("X", "Y"))
        times = []
        for a, b, c in itertools.product(lhs, rhs, out):
            case = f"{a} · {b} -> {c}"
            times.append(timed(lambda c=case: best_strategy(c, MESH, SHAPE, **KWARGS)))
        times.sort()
        print(
            f"  every sharding of the sweep ({len(times)} cases, one cold call each): median {ms(times[len(times) // 2])}, "
            f"90th percentile {ms(times[int(0.9 * len(times))])}, max {ms(times[-1])}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

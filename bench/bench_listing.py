"""How long a plan takes to list and rank every strategy, with the keys scaled to integers and joined pair
by pair of legs, against working out each strategy's key on its own in exact fractions (what it did before).

The workloads are what ``symshard verify`` lists on meshes of three and four axes (``routes="xla"``, every
strategy):

* ``A[I_Z, J_X] · B[J_Y, K] -> C[I_X, K_Z]`` on ``X=2,Y=2,Z=2`` (TPU v5p), ``I=96,J=96,K=40``: about 157,000
  strategies;
* ``A[I_XY, J_Z] · B[J_Z, K_W] -> C[I_XY, K_W]`` on ``X=2,Y=2,Z=2,W=2`` (TPU v5e), ``I=J=K=64``: about a
  million.

Both ways plan from cold caches and must list the same strategies in the same order; they alternate, so
that the machine's load falls on both alike. Target: the integer listing at least 8x as fast on each
workload (ratio of medians). One round takes about a minute.

Usage::

    python bench/bench_listing.py [--repeats 1]

Exit status 0 when the target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from symshard.memo import clear_caches
from symshard.planning.enumeration import Enumeration
from symshard.planning.planner import plan

WORKLOADS = [
    ("A[I_Z, J_X] · B[J_Y, K] -> C[I_X, K_Z]", "X=2,Y=2,Z=2", "I=96,J=96,K=40", "tpu-v5p"),
    ("A[I_XY, J_Z] · B[J_Z, K_W] -> C[I_XY, K_W]", "X=2,Y=2,Z=2,W=2", "I=64,J=64,K=64", "tpu-v5e"),
]
TARGET = 8.0
_RANKED = Enumeration._ranked


def _listed(case: tuple[str, str, str, str]) -> tuple[float, tuple]:
    mm, mesh, shape, chip = case
    clear_caches()
    start = time.perf_counter()
    p = plan.__wrapped__(mm, mesh, shape, dtype="fp32", hardware=chip, routes="xla")  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    return seconds, tuple(p.strategies._recipes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="timed listings each way (default 1)")
    args = parser.parse_args(argv)
    ok = True
    for case in WORKLOADS:
        fast, slow = [], []
        listed = exact = ()
        for _ in range(args.repeats):
            t, listed = _listed(case)
            fast.append(t)
            Enumeration._ranked = Enumeration._sorted_exactly  # type: ignore[method-assign]
            try:
                t, exact = _listed(case)
            finally:
                Enumeration._ranked = _RANKED  # type: ignore[method-assign]
            slow.append(t)
        print(f"{case[0]} on {case[1]}: {len(listed):,} strategies")
        if listed != exact:
            print("  FAIL: the two listings differ")
            ok = False
            continue
        ratio = statistics.median(slow) / statistics.median(fast)
        print(f"  integers, packed keys:             median {statistics.median(fast):.2f} s, best {min(fast):.2f} s")
        print(f"  each key on its own, in fractions:  median {statistics.median(slow):.2f} s, best {min(slow):.2f} s")
        passed = ratio >= TARGET
        print(f"  ratio {ratio:.2f}x (target >= {TARGET:g}x): {'PASS' if passed else 'FAIL'}")
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

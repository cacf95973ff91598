"""How long a search for XLA's plan through every route of symshard's collectives takes, with one search
shared by every array it starts from, against a new search from each array (what it did before).

The workload is the slowest case of the JAX sweep, one XLA plans by parts of an axis: attention scores
``Q[B_X, H_ZY, S, E] · R[B_Z, H, T_Y, E] -> C[B, H_X, S, T]`` on ``X=2,Y=2,Z=4`` with ``Z`` used as two
parts (``Z=2x2``), ``B=16,H=16,S=48,T=32,E=16``. Its plan has about 6.4 million strategies, too many to
list; :meth:`symshard.planning.strategies.Plan.matching` with ``any_route=True`` searches them step by step for XLA's
six collectives (recorded here from XLA's compiled module, so the benchmark needs no JAX) and finds the
strategies that have them (nine).

Both ways search from the same arrays with the same budget and must find the same strategies; the caches
are cleared before each timed call, and the two ways alternate. Target: the shared search at least 2x as
fast (ratio of medians). One round takes about 75 s.

Usage::

    python bench/bench_route_search.py [--repeats 1]

Exit status 0 when the target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter

import symshard.planning.enumeration as enumeration
from symshard.costs.collectives import CollectiveExpr, DynamicSlice
from symshard.jax.xla_plans import step_signature  # imports no JAX
from symshard.memo import clear_caches
from symshard.planning.planner import plan
from symshard.planning.route_search import RouteSearch

MATMUL = "Q[B_X, H_ZY, S, E] · R[B_Z, H, T_Y, E] -> C[B, H_X, S, T]"
MESH = "X=2,Y=2,Z=4"
SHAPE = "B=16,H=16,S=48,T=32,E=16"
SPLIT = {"Z": (2, 2)}
# XLA's collectives for this case (kind, axes, elements each device sends), read from its compiled module
XLA = (
    ("AllGather", ("X",), 12288),
    ("AllGather", ("Y",), 98304),
    ("AllGather", ("Z1", "Z2"), 16384),
    ("AllGather", ("Z1", "Z2"), 24576),
    ("AllToAll", ("Y", "Z2"), 24576),
    ("CollectivePermute", ("X", "Y", "Z1", "Z2"), 24576),
)
TARGET = 2.0


class _SearchPerArray:
    """The search as it was: a new :class:`RouteSearch` (nothing shared) from each array."""

    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs

    def routes(self, src):
        return RouteSearch(*self.args, **self.kwargs).routes(src)


def _search(p) -> list[str]:
    """The strategies of ``p`` whose collectives are :data:`XLA`'s, searched step by step (as verify does)."""
    sizes = {k: int(v) for k, v in p.sizes}
    axes = {a.name: int(a.size) for a in p.mesh.axes}

    def signature(steps: tuple[CollectiveExpr, ...]) -> tuple:
        return tuple(sorted(step_signature(e, sizes, axes) for e in steps if not isinstance(e.op, DynamicSlice)))

    kinds = Counter(k for k, _, _ in XLA)
    return [s.name for s in p.matching(signature, tuple(sorted(XLA)), any_route=True, kinds=kinds)]


def _timed(p, repeats: int) -> tuple[list[float], list[str]]:
    times, found = [], []
    for _ in range(repeats):
        clear_caches()
        start = time.perf_counter()
        found = _search(p)
        times.append(time.perf_counter() - start)
    return times, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="timed searches each way (default 1)")
    args = parser.parse_args(argv)
    p = plan(MATMUL, MESH, SHAPE, hardware="tpu-v5e", routes="xla", split=SPLIT, all=False)
    shared, found = [], []
    apart, found_apart = [], []
    for _ in range(args.repeats):  # the two ways alternate, so the machine's load falls on both alike
        t, found = _timed(p, 1)
        shared += t
        enumeration.RouteSearch = _SearchPerArray  # type: ignore[misc,assignment]
        try:
            t, found_apart = _timed(p, 1)
        finally:
            enumeration.RouteSearch = RouteSearch  # type: ignore[misc]
        apart += t
    if found != found_apart or not found:
        print(f"FAIL: the two searches found different strategies: {found} and {found_apart}")
        return 1
    ratio = statistics.median(apart) / statistics.median(shared)
    print(f"found {len(found)} strategies with XLA's collectives; the fastest: {found[0]}")
    print(f"one search shared by every array: median {statistics.median(shared):.3f} s, best {min(shared):.3f} s")
    print(f"a new search from each array:      median {statistics.median(apart):.3f} s, best {min(apart):.3f} s")
    ok = ratio >= TARGET
    print(f"ratio {ratio:.2f}x (target >= {TARGET:g}x): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

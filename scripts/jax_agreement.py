"""Regenerate the data behind the docs page "symshard against JAX and XLA".

Runs the sweep of every sharding of ``A[I, J] · B[J, K] -> C[I, K]`` on a 4×2 mesh
(JAX on 8 simulated CPU devices), writes ``site/data/jax-agreement.json`` (deterministic:
no timings, so an unchanged result is an unchanged file) and prints the sweep's wall
time, the agreement figures (on the mesh, and counting the cases that match only on the
refined mesh of XLA's sub-axes), and, for one collective-free case and one with collectives,
symshard's time to answer "which collectives, how long" (and to list every strategy) from
cold caches against XLA's compile time. Needs the jax extra: ``pip install -e '.[jax]'``.

    python scripts/jax_agreement.py [--limit N] [--out site/data/jax-agreement.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import symshard
from symshard.memo import clear_caches

ROOT = Path(__file__).resolve().parent.parent
SPEED_TARGET = 20  # symshard's answer at least this many times faster than XLA's compile


def _cold() -> None:
    """Forget everything symshard has computed before: its memo and the resharding routes' caches."""
    from symshard.planner import reshard_routes, reshard_steps

    clear_caches()
    reshard_routes.cache_clear()
    reshard_steps.cache_clear()


def timing(case: str, mesh: str, shape: str, repeats: int = 7) -> dict[str, float]:
    """Median seconds, each from cold caches, for symshard to answer "which collectives, how long"
    (:func:`symshard.planner.best_strategy`), to list and cost every strategy (``plan``), and for XLA
    to compile the same sharded product."""
    from symshard.jax.verify import xla_plan
    from symshard.planner import best_strategy

    kwargs = {"dtype": "fp32", "hardware": "tpu-v5e"}
    best, full = [], []
    for _ in range(repeats):
        _cold()
        start = time.perf_counter()
        best_strategy(case, mesh, shape, **kwargs)
        best.append(time.perf_counter() - start)
        _cold()
        start = time.perf_counter()
        p = symshard.plan(case, mesh, shape, **kwargs)
        full.append(time.perf_counter() - start)
    xla = [xla_plan(p).compile_seconds for _ in range(repeats)]
    return {"best": statistics.median(best), "plan": statistics.median(full), "xla": statistics.median(xla)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N cases (a quick look)")
    parser.add_argument("--out", default=str(ROOT / "site" / "data" / "jax-agreement.json"))
    args = parser.parse_args(argv)

    from symshard.jax.sweep import sweep

    def progress(done: int, total: int) -> None:
        if done % 50 == 0 or done == total:
            print(f"\r{done}/{total} cases", end="", file=sys.stderr, flush=True)

    result = sweep(limit=args.limit, progress=progress)
    print(file=sys.stderr)
    data = result.to_json()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    print(
        f"sweep: {data['cases']} cases, {data['strategies_run']} strategies run under shard_map "
        f"({data['strategies_ok']} matched the product) in {result.seconds:.0f} s"
    )
    print(
        f"agreement on the mesh: {data['matches']} of {data['cases']} ({100 * data['matches'] / data['cases']:.1f} %); "
        f"XLA's plan is symshard's best in {data['rank_1']}"
    )
    print(
        f"XLA shards by sub-axes in {data['refined_cases']} cases; on the refined mesh {data['matches_refined']} "
        f"of them match a strategy that runs correctly; agreement counting those: "
        f"{data['matches'] + data['matches_refined']} of {data['cases']} ({100 * (data['matches'] + data['matches_refined']) / data['cases']:.1f} %)"
    )
    for label, case in (
        ("collective-free", "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]"),
        ("with collectives", "A[I, J_X] · B[J_X, K] -> C[I, K_X]"),
    ):
        t = timing(case, "X=4,Y=2", "I=64,J=64,K=64")
        ratio = t["xla"] / t["best"]
        print(
            f"one case, {label} ({case}), cold caches: symshard answers in {t['best'] * 1e3:.2f} ms "
            f"(lists and costs all strategies in {t['plan'] * 1e3:.2f} ms), XLA compiles in {t['xla'] * 1e3:.1f} ms: "
            f"{ratio:.0f}x ({'meets' if ratio >= SPEED_TARGET else 'misses'} the {SPEED_TARGET}x target)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

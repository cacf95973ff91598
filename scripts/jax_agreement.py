"""Regenerate the data behind the docs page "symshard against JAX and XLA".

Runs the sweep of every sharding of ``A[I, J] · B[J, K] -> C[I, K]`` on a 4×2 mesh
(JAX on 8 simulated CPU devices), writes ``site/data/jax-agreement.json`` (deterministic:
no timings, so an unchanged result is an unchanged file) and prints the sweep's wall
time, the agreement figure, and symshard's planning time against XLA's compile time
for one case. Needs the jax extra: ``pip install -e '.[jax]'``.

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


def timing(case: str, mesh: str, shape: str, repeats: int = 5) -> tuple[float, float]:
    """Median seconds for symshard to plan ``case`` from cold caches, and for XLA to compile it."""
    from symshard.jax.verify import xla_plan

    ours = []
    for _ in range(repeats):
        clear_caches()
        start = time.perf_counter()
        p = symshard.plan(case, mesh, shape, dtype="fp32", hardware="tpu-v5e")
        ours.append(time.perf_counter() - start)
    xla = [xla_plan(p).compile_seconds for _ in range(repeats)]
    return statistics.median(ours), statistics.median(xla)


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
        f"agreement: {data['matches']} of {data['cases']} ({100 * data['agreement']:.1f} %); "
        f"XLA's plan is symshard's best in {data['rank_1']}"
    )
    for case in ("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "A[I, J_X] · B[J_X, K] -> C[I, K_X]"):
        ours, xla = timing(case, "X=4,Y=2", "I=64,J=64,K=64")
        print(
            f"one case ({case}): symshard plans in {ours * 1e3:.1f} ms, XLA compiles in {xla * 1e3:.1f} ms "
            f"({xla / ours:.0f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

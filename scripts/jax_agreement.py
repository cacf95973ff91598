"""Regenerate the data behind the docs page "symshard against JAX and XLA".

Runs the sweep :data:`symshard.jax.sweeps.SWEEP` (2-D matmuls with every sharding of operands and
result, or a seeded sample of them, batch dims and attention-shaped einsums, sizes that are not
powers of two, fp32 and bf16, on meshes of 8 and 16 devices: JAX simulates 16 CPU devices) and
writes two files:

- ``site/data/jax-agreement.json``: every case and what it adds up to, per batch, per mesh and in
  all; deterministic (no timings), so an unchanged result is an unchanged file;
- ``site/data/jax-agreement-times.json``: seconds per batch and per mesh, and per case, on the
  machine that ran it.

It prints agreement per mesh (on the mesh as written, and counting the refined-mesh matches of
XLA's sub-axes) with the time per case, then, for one collective-free case and one with
collectives, symshard's time to answer "which collectives, how long" (and to list every strategy)
from cold caches against XLA's compile time. Needs the jax extra: ``pip install -e '.[jax]'``.

    python scripts/jax_agreement.py [--jobs 2] [--limit N] [--only TEXT] [--sample N] [--seed S]

``--jobs N`` runs the batches in N processes (each its own JAX); ``--only`` keeps the batches
whose name holds TEXT (e.g. ``X=2,Y=2,Z=2``) and, like ``--limit``, is for a quick look: the
committed file is the whole sweep, which the tests check against the code.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=16")

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
    from symshard.jax.verification import xla_plan
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


def _run(index: int, seed: int, sample: int | None, limit: int | None, time_limit: float | None):
    """One batch of the sweep, in whichever process runs it."""
    from symshard.jax.sweeps import SWEEP, sweep

    batch = SWEEP[index]

    def progress(b, done: int, total: int) -> None:
        if done % 20 == 0 or done == total:
            print(f"  {b.key}: {done}/{total}", file=sys.stderr, flush=True)

    return sweep([batch], seed=seed, sample=sample, limit=limit, time_limit=time_limit, progress=progress)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes running batches side by side (default 1)")
    parser.add_argument("--limit", type=int, help="only the first N cases of each batch (a quick look)")
    parser.add_argument("--only", metavar="TEXT", help="only the batches whose name holds TEXT (a quick look)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled cases and strategies (default 0)")
    parser.add_argument("--sample", type=int, default=2, help="strategies run per case, the best and XLA's first")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per case (default 300)")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed comparison with XLA's compile")
    parser.add_argument("--out", default=str(ROOT / "site" / "data" / "jax-agreement.json"))
    parser.add_argument("--times", default=str(ROOT / "site" / "data" / "jax-agreement-times.json"))
    args = parser.parse_args(argv)

    from symshard.jax.sweeps import SWEEP, Sweep

    chosen = [i for i, b in enumerate(SWEEP) if args.only is None or args.only in b.key]
    start = time.perf_counter()
    runs = (args.seed, args.sample, args.limit, args.time_limit)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            # the longest batches first, so that the processes finish together
            order = sorted(chosen, key=lambda i: -(SWEEP[i].count or SWEEP[i].total()) * len(SWEEP[i].mesh))
            futures = {i: pool.submit(_run, i, *runs) for i in order}
            parts = [futures[i].result() for i in chosen]
    else:
        parts = [_run(i, *runs) for i in chosen]
    wall = time.perf_counter() - start
    result = Sweep(
        tuple(b for part in parts for b in part.batches), args.seed, args.sample, parts[0].hardware if parts else None
    )
    data = result.to_json()
    times = {"wall_seconds": round(wall, 1), "jobs": args.jobs, "cpus": os.cpu_count(), **result.timings()}
    for path, content in ((args.out, data), (args.times, times)):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(_dump(content), encoding="utf-8")
        print(f"wrote {path}")

    total = data["total"]
    print(
        f"sweep: {total['cases']:,} cases in {wall:.0f} s ({args.jobs} process(es)); {total['strategies_run']:,} "
        f"strategies run under shard_map, {total['strategies_ok']:,} gave the product"
    )
    seconds = {m["mesh"]: m for m in times["meshes"]}
    print(f"{'mesh':<12} {'cases':>6} {'on the mesh':>17} {'counting refined':>17} {'s/case':>7} {'median':>7}")
    for m in [*data["meshes"], {"mesh": "all", **total}]:
        t = seconds.get(m["mesh"], times["total"])
        refined = m["matches"] + m["matches_refined"]
        print(
            f"{m['mesh']:<12} {m['cases']:>6} {m['matches']:>6} ({100 * m['matches'] / m['cases']:5.1f} %) "
            f"{refined:>6} ({100 * refined / m['cases']:5.1f} %) {t['per_case_mean']:>7.2f} {t['per_case_median']:>7.2f}"
        )
    print(
        f"FLOPs: XLA's dots equal symshard's in {total['dot_flops_agree']:,} of {total['flops_compared']:,} cases "
        f"compared; its total (with the adds of reductions, converts, index arithmetic) in {total['total_flops_agree']:,}"
    )
    print(f"disagreements where XLA's plan is cheaper than symshard's best (planner work): {total['xla_cheaper']}")
    if not args.no_speed:
        for label, case in (
            ("collective-free", "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]"),
            ("with collectives", "A[I, J_X] · B[J_X, K] -> C[I, K_X]"),
        ):
            t = timing(case, "X=4,Y=2", "I=64,J=64,K=64")
            ratio = t["xla"] / t["best"]
            print(
                f"one case, {label} ({case}), cold caches: symshard answers in {t['best'] * 1e3:.2f} ms "
                f"(lists and costs all strategies in {t['plan'] * 1e3:.2f} ms), XLA compiles in "
                f"{t['xla'] * 1e3:.1f} ms: {ratio:.0f}x ({'meets' if ratio >= SPEED_TARGET else 'misses'} "
                f"the {SPEED_TARGET}x target)"
            )
    return 0


def _dump(content: dict) -> str:
    """JSON with one row per line: small diffs when a few cases change, and a file a person can read."""
    rows = content.get("rows")
    head = {k: v for k, v in content.items() if k != "rows"}
    text = json.dumps(head, indent=1, ensure_ascii=False)
    if rows is None:
        return text + "\n"
    lines = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in rows)
    return text[:-2] + ',\n "rows": [\n' + lines + "\n ]\n}\n"


if __name__ == "__main__":
    sys.exit(main())

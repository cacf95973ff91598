"""Regenerate the data behind the docs page "symshard against JAX and XLA".

Runs the sweep :data:`symshard.jax.sweeps.SWEEP` (2-D matmuls with every sharding of operands and
result, or a seeded sample of them, batch dims and attention-shaped einsums, sizes that are not
powers of two, fp32 and bf16, on meshes of 8 and 16 devices: JAX simulates 16 CPU devices) and
writes two files:

- ``site/data/jax-agreement.json``: every case and what it adds up to, per batch, per mesh and in
  all; deterministic (no timings), so an unchanged result is an unchanged file;
- ``site/data/jax-agreement-times.json``: seconds per batch and per mesh, and per case, on the
  machine that ran it.

It prints agreement per mesh (by whole mesh axes, and counting also the matches of XLA's sub-axes
with those axes in parts) with the time per case, then, for one collective-free case and one with
collectives, symshard's time to answer "which collectives, how long" (and to list every strategy)
from cold caches against XLA's compile time. Needs the jax extra: ``pip install -e '.[jax]'``.

    python scripts/jax_agreement.py [--jobs 2] [--limit N] [--only TEXT [--merge]] [--sample N] [--seed S]

``--jobs N`` runs the batches in N processes (each its own JAX); ``--only`` keeps the batches
whose name holds TEXT (e.g. ``X=2,Y=2,Z=2``) and, like ``--limit``, is for a quick look: the
committed file is the whole sweep, which the tests check against the code. ``--only TEXT --merge``
runs those batches again (whole meshes) and puts them into the committed files, after a change that
moves only their results.
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
    from symshard.planning.planner import reshard_routes, reshard_steps

    clear_caches()
    reshard_routes.cache_clear()
    reshard_steps.cache_clear()


def timing(case: str, mesh: str, shape: str, repeats: int = 7) -> dict[str, float]:
    """Median seconds, each from cold caches, for symshard to answer "which collectives, how long"
    (:func:`symshard.planning.planner.best_strategy`), to list and cost every strategy (``plan``), and for XLA
    to compile the same sharded product."""
    from symshard.jax.xla_plans import xla_plan
    from symshard.planning.planner import best_strategy

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
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --only: put the batches run into the files at --out and --times, keeping the others as they are "
        "(after a change that moves only those batches' results; the tests' live cases check the rest)",
    )
    args = parser.parse_args(argv)
    if args.merge and args.only is None:
        parser.error("--merge needs --only: which batches to run again")

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
    if args.merge:
        data, times = _merged(data, times, Path(args.out), Path(args.times))
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
    print(
        f"{'mesh':<12} {'cases':>6} {'whole axes':>17} {'axes in parts too':>17} {'routes found step by step':>26} "
        f"{'s/case':>7} {'median':>7}"
    )
    for m in [*data["meshes"], {"mesh": "all", **total}]:
        t = seconds.get(m["mesh"], times["total"])
        refined = m["matches"] + m["matches_refined"]
        routed = f"{m['matches_routed']} + {m['matches_refined_routed']} in parts"
        median = t["per_case_median"]
        print(
            f"{m['mesh']:<12} {m['cases']:>6} {m['matches']:>6} ({100 * m['matches'] / m['cases']:5.1f} %) "
            f"{refined:>6} ({100 * refined / m['cases']:5.1f} %) {routed:>26} {t['per_case_mean']:>7.2f} "
            f"{median if median is not None else float('nan'):>7.2f}"
        )
    print(
        f"FLOPs: XLA's dots equal symshard's in {total['dot_flops_agree']:,} of {total['flops_compared']:,} cases "
        f"compared; its total (with the adds of reductions, converts, index arithmetic) in {total['total_flops_agree']:,}"
    )
    limit = f"the {args.time_limit:g} s limit per case" if args.time_limit is not None else "no limit"
    print(f"searches for XLA's plan cut short by {limit} (undecided, counted as misses): {total['search_stopped']}")
    print(
        f"XLA's plan not one the planner offers and cheaper than symshard's best by whole axes: {total['xla_cheaper']}; "
        f"cheaper than its best with axes in parts too, and none of its strategies (planner work): "
        f"{total['planner_work']}"
    )
    print(
        f"XLA's plan cheaper than symshard's best in bytes received and FLOPs, a match or not: "
        f"{total['cheaper_than_best']:,} of {total['cases']:,} ({100 * total['cheaper_than_best'] / total['cases']:.1f} %), "
        f"{total['cheaper_latency_bound']:,} of them with symshard's best latency-bound; equal in cost but for a "
        f"permute's pairs (not matches): {total['equal_in_cost']}"
    )
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


def _merged(data: dict, times: dict, out: Path, times_path: Path) -> tuple[dict, dict]:
    """The sweep in the files ``out`` and ``times_path`` with the batches of ``data`` (and their rows and
    timings) put in place of theirs; the figures per mesh and in all added up again from the batches.
    Whole meshes must be run again: a mesh's median time per case is kept only from one run."""
    old = json.loads(out.read_text(encoding="utf-8"))
    old_times = json.loads(times_path.read_text(encoding="utf-8"))
    key = lambda b: (b["family"], b["mesh"], b["dtype"])  # noqa: E731
    new = {key(b): b for b in data["batches"]}
    meshes = {b["mesh"] for b in data["batches"]}
    partly = {b["mesh"] for b in old["batches"] if b["mesh"] in meshes and key(b) not in new}
    if partly:
        sys.exit(f"--merge: run every batch of {', '.join(sorted(partly))} again (their times per case are one run's)")
    batches = [new.get(key(b), b) for b in old["batches"]]
    batches += [b for k, b in new.items() if k not in {key(x) for x in old["batches"]}]
    rows = [r for r in old["rows"] if r["mesh"] not in meshes] + data["rows"]
    order = {key(b): i for i, b in enumerate(batches)}
    rows.sort(key=lambda r: order[key(r)])  # stable: each batch's rows keep their order

    def added(group: list[dict]) -> dict:
        counts = {k: sum(b[k] for b in group) for k in data["total"] if k not in _RATIOS}
        n = counts["cases"]
        counts["agreement"] = round(counts["matches"] / n, 4) if n else 0.0
        counts["agreement_combined"] = round((counts["matches"] + counts["matches_refined"]) / n, 4) if n else 0.0
        planned = counts["matches"] - counts["matches_routed"]
        counts["agreement_planned"] = round(planned / n, 4) if n else 0.0
        both = planned + counts["matches_refined"] - counts["matches_refined_routed"]
        counts["agreement_combined_planned"] = round(both / n, 4) if n else 0.0
        return {k: counts[k] for k in data["total"]}

    mesh_order = list(dict.fromkeys(b["mesh"] for b in batches))
    devices = {m["mesh"]: m["devices"] for m in [*old["meshes"], *data["meshes"]]}
    merged = {
        **old,
        "batches": batches,
        "meshes": [
            {"mesh": m, "devices": devices[m], **added([b for b in batches if b["mesh"] == m])} for m in mesh_order
        ],
        "total": added(batches),
        "rows": rows,
    }
    new_times = {b["batch"]: b for b in times["batches"]}
    timed = [new_times.pop(b["batch"], b) for b in old_times["batches"]] + list(new_times.values())
    mesh_times = {m["mesh"]: m for m in [*old_times["meshes"], *times["meshes"]]}
    cases = sum(m["cases"] for m in mesh_times.values())
    seconds = round(sum(m["seconds"] for m in mesh_times.values()), 1)
    total = {
        "cases": cases,
        "seconds": seconds,
        "per_case_mean": round(seconds / max(cases, 1), 3),
        # the median of all cases is not known from the meshes' medians (the page shows a dash)
        "per_case_median": None,
        "per_case_max": max(m["per_case_max"] for m in mesh_times.values()),
    }
    merged_times = {
        **old_times,
        "wall_seconds": round(old_times["wall_seconds"] + times["wall_seconds"], 1),
        "batches": timed,
        "meshes": [mesh_times[m] for m in mesh_order],
        "total": total,
    }
    return merged, merged_times


_RATIOS = ("agreement", "agreement_combined", "agreement_planned", "agreement_combined_planned")


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

"""Benchmark: problems per second for a 1,000-problem mixed set (target: at least 200/s).

The set is what an instructor asks for: ``generate(seed, count=1000)`` over every
family, round-robin, duplicates dropped. Each run happens in a fresh interpreter,
so Jinja's template compilation and symshard's memoized algebra start cold, as
they do for ``symshard problems generate``. The target applies to generation;
the time to render the exports (student Markdown, answer key, JSON, Moodle XML)
is printed for information. A per-family table shows where the time goes (ms
per variant, warm).

Run: ``python bench/bench_problems.py [--count 1000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

TARGET = 200.0  # problems per second

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from symshard.problems import generate
t1 = time.perf_counter()
problems = generate({seed}, count={count})
t2 = time.perf_counter()
from symshard.problems.writers import answer_key_markdown, to_json, to_markdown, to_moodle
t3 = time.perf_counter()
to_markdown(problems), answer_key_markdown(problems), json.dumps(to_json(problems)), to_moodle(problems)
t4 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "generate_s": t2 - t1, "write_s": t4 - t3, "count": len(problems),
                  "families": len({{p.family.name for p in problems}})}}))
"""


def fresh_run(seed: int, count: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(seed=seed, count=count)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def per_family(n: int = 40) -> list[tuple[str, float]]:
    from symshard.problems import families, variant

    rows = []
    for name, fam in families().items():
        variant(fam, 0)  # warm up
        t = time.perf_counter()
        for seed in range(1, n + 1):
            variant(fam, seed)
        rows.append((name, (time.perf_counter() - t) / n * 1e3))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000, help="problems per set (default 1000)")
    ap.add_argument("--runs", type=int, default=3, help="fresh interpreters, one set each (default 3)")
    args = ap.parse_args()
    rates = []
    for run in range(args.runs):
        r = fresh_run(2026 + run, args.count)
        rate = r["count"] / r["generate_s"]
        rates.append(rate)
        print(
            f"run {run + 1}: {r['count']} problems from {r['families']} families in {r['generate_s']:.2f} s "
            f"({rate:.0f}/s; importing the generator took {r['import_s'] * 1e3:.0f} ms; "
            f"rendering all four exports in memory {r['write_s'] * 1e3:.0f} ms)"
        )
    median = statistics.median(rates)
    verdict = "PASS" if median >= TARGET else "FAIL"
    print(f"problems per second, median of {args.runs} fresh runs: {median:.0f}/s; target >= {TARGET:.0f}/s: {verdict}")
    print("per family, warm (ms per variant):")
    for name, ms in sorted(per_family(), key=lambda r: -r[1]):
        print(f"  {name:<28} {ms:7.2f}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

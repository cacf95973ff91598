"""Run every benchmark in this folder, one after the other, and summarise.

Usage::

    python bench/run_all.py [--quick]

``--quick`` shortens each benchmark (fewer repetitions) for a smoke test; the
figures are then noisier. Exit status 0 when every benchmark meets its target.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (script, extra arguments for --quick)
BENCHMARKS = [
    ("bench_import.py", ["--repeats", "5"]),
    ("bench_costing.py", ["--seconds", "0.3", "--repeats", "3"]),
    ("bench_planner.py", ["--repeats", "5", "--fresh", "2"]),
    ("bench_cold_answer.py", ["--repeats", "9", "--xla-repeats", "3"]),
    ("bench_problems.py", ["--count", "300", "--runs", "1"]),
    ("bench_site.py", ["--runs", "1"]),
    ("bench_route_search.py", []),
    ("bench_listing.py", []),
    ("bench_compare.py", ["--repeats", "3"]),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, for a smoke test")
    args = parser.parse_args(argv)

    results = []
    for script, quick in BENCHMARKS:
        print(f"== {script} ==", flush=True)
        start = time.perf_counter()
        code = subprocess.run([sys.executable, str(HERE / script), *(quick if args.quick else [])]).returncode
        results.append((script, code, time.perf_counter() - start))
        print(flush=True)
    print("== summary ==")
    for script, code, seconds in results:
        print(f"  {script:<18} {'PASS' if code == 0 else 'FAIL'}  ({seconds:.1f} s)")
    return 0 if all(code == 0 for _, code, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())

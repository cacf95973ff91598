"""Benchmark: the full docs-site build, as `symshard site build` runs it (target: under 60 s).

Each run is a fresh `symshard site build` process into a new folder: rendering the
hand-written pages (every formula, output and figure computed), generating the problem
sets, and `mkdocs build --strict` (with mkdocstrings for the API page). Reports the wall
time of each run and the share spent before MkDocs starts (page rendering and problem
sets), then the median against the target.

Run: ``python bench/bench_site.py [--runs 2]`` (needs the docs extra).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 60.0  # seconds

_PREPARE = (
    "import sys; from symshard.cli import command_line; from symshard.site import prepare; "
    "prepare(sys.argv[1], cli=command_line())"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="builds to time (default 2)")
    args = parser.parse_args(argv)
    totals, prepares = [], []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", _PREPARE, str(Path(scratch) / "project")], check=True)
            prepares.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "symshard", "site", "build", "--out", str(Path(scratch) / "site")],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            totals.append(time.perf_counter() - start)
        print(f"run {run + 1}: full build {totals[-1]:.1f} s (pages and problem sets alone: {prepares[-1]:.1f} s)")
    median = statistics.median(totals)
    verdict = "PASS" if median < TARGET else "FAIL"
    print(f"site build: median {median:.1f} s over {len(totals)} runs; target < {TARGET:.0f} s: {verdict}")
    return 0 if median < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

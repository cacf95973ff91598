"""How much ``import symshard`` costs on top of ``import sympy``, and what it pulls in.

SymPy dominates symshard's import time, so the number that matters is the
overhead symshard adds to a bare ``import sympy``. Each measurement is a fresh
interpreter (``python -c "import symshard"``), timed from outside; the two
commands alternate so that drift in machine load hits both alike. The script
also lists the heavy optional packages that ``import symshard`` loads: it must
load none of them.

Target: symshard's median wall time at most 30% above sympy's.

Usage::

    python bench/bench_import.py [--repeats 15]

Exit status 0 when both checks pass, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

TARGET_OVERHEAD = 30.0
"""Largest acceptable overhead of ``import symshard`` over ``import sympy``, in percent."""

HEAVY = ("jinja2", "numpy", "jax", "mkdocs")
"""Top-level packages that ``import symshard`` must not load."""


def wall_time(code: str) -> float:
    """Seconds for a fresh interpreter to run ``code`` and exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def measure(repeats: int) -> dict[str, list[float]]:
    """Interleaved timings of a bare interpreter, ``import sympy`` and ``import symshard``."""
    codes = {"python": "pass", "sympy": "import sympy", "symshard": "import symshard"}
    for code in codes.values():  # warm the OS file cache and the bytecode caches
        wall_time(code)
    times: dict[str, list[float]] = {name: [] for name in codes}
    for i in range(repeats):
        # Alternate the order too, so neither command always runs right after the other.
        order = list(codes) if i % 2 == 0 else list(reversed(codes))
        for name in order:
            times[name].append(wall_time(codes[name]))
    return times


def heavy_modules() -> list[str]:
    """The modules from :data:`HEAVY` that a fresh ``import symshard`` has loaded."""
    code = (
        "import json, sys, symshard; "
        f"heavy = {HEAVY!r}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def slowest_symshard_modules(count: int = 5) -> list[tuple[int, str]]:
    """symshard's own modules by self import time (microseconds), from ``-X importtime``."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import symshard"], check=True, capture_output=True, text=True
    )
    rows = []
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
        if fields[0].isdigit() and fields[2].startswith("symshard"):
            rows.append((int(fields[0]), fields[2]))
    return sorted(rows, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timings per command (default 15)")
    args = parser.parse_args(argv)

    times = measure(args.repeats)
    print(f"import time, {args.repeats} fresh interpreters each ({sys.executable}, Python {sys.version.split()[0]})")
    print(f"  {'command':<28} {'median':>9} {'min':>9}")
    for name, code in (("python", "pass"), ("sympy", "import sympy"), ("symshard", "import symshard")):
        label = f'python -c "{code}"'
        print(f"  {label:<28} {statistics.median(times[name]) * 1e3:7.1f} ms {min(times[name]) * 1e3:7.1f} ms")

    sympy_med, symshard_med = statistics.median(times["sympy"]), statistics.median(times["symshard"])
    sympy_min, symshard_min = min(times["sympy"]), min(times["symshard"])
    overhead = (symshard_med / sympy_med - 1) * 100
    overhead_min = (symshard_min / sympy_min - 1) * 100
    base = statistics.median(times["python"])
    net = (symshard_med - base) / (sympy_med - base) * 100 - 100 if sympy_med > base else float("nan")
    ok_time = overhead < TARGET_OVERHEAD
    print(
        f"overhead of symshard over sympy: {overhead:+.1f}% (median), {overhead_min:+.1f}% (min); "
        f"target < {TARGET_OVERHEAD:.0f}%: {'PASS' if ok_time else 'FAIL'}"
    )
    print(f"  (net of interpreter start-up: {net:+.1f}%)")

    print("symshard's slowest own modules (self time):")
    for micros, module in slowest_symshard_modules():
        print(f"  {micros / 1e3:6.1f} ms  {module}")

    heavy = heavy_modules()
    ok_heavy = not heavy
    print(f"heavy modules loaded by 'import symshard' (of {', '.join(HEAVY)}): {heavy}")
    print(f"  must be none: {'PASS' if ok_heavy else 'FAIL'}")
    return 0 if ok_time and ok_heavy else 1


if __name__ == "__main__":
    sys.exit(main())

"""How long symshard's matmul engine takes at the scale of real meshes: whole command-line calls.

Issue 17's workloads, each a fresh ``python -m symshard ...`` process timed from start to exit,
next to ``python -c "import sympy"`` timed in the same run (the two alternate, so that other
load on the machine affects both alike) and reported as a ratio to it:

* ``compare`` of the README's matmul with every strategy (target 1 s);
* ``compare`` of a 2-axis matmul (target 2 s) and of a 3-axis matmul (target 4 s);
* ``matmul`` with symbolic sizes on ``X=4,Y=4,Z=4`` (target 0.75 s, and faster than XLA compiling
  the same sharded product). With ``--xla`` the two are put side by side twice: as whole processes
  (``symshard matmul`` against a Python process that imports JAX, makes the 64 simulated CPU devices,
  and lowers and compiles the product: what each costs the user at a prompt, the target), and
  in-process after the imports (symshard's plan from cold caches against XLA's trace, lowering and
  compile), which is reported with its ratio but is not the target;
* ``matmul`` with numbers on four axes (target 0.75 s);
* ``best-sharding`` of two chained matmuls on three axes and of eight on two axes (2 s each);
* ``matmul`` of an unsharded matmul on an eight-axis mesh, the best strategy (2 s).

Usage::

    python bench/bench_scale.py [--repeats 3] [--timeout 120] [--only NAME] [--xla]

A run that exceeds ``--timeout`` is reported as longer than it. Exit status 0 when every
workload's median meets its target, 1 otherwise. Child processes may write bytecode (an installed
package has its ``.pyc`` files; ``PYTHONDONTWRITEBYTECODE`` would recompile symshard in every run),
and each command runs once before it is timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CHAIN_8 = [
    "x[B, D] · W1[D, F] -> H1[B, F]",
    "H1[B, F] · W2[F, D] -> H2[B, D]",
    "H2[B, D] · W3[D, F] -> H3[B, F]",
    "H3[B, F] · W4[F, D] -> H4[B, D]",
    "H4[B, D] · W5[D, F] -> H5[B, F]",
    "H5[B, F] · W6[F, D] -> H6[B, D]",
    "H6[B, D] · W7[D, F] -> H7[B, F]",
    "H7[B, F] · W8[F, D] -> Out[B, D]",
]
THREE_AXES = "A[I_X, J_Y] · B[J_Y, K_Z] -> C[I_X, K_Z]"

# (name, command-line arguments, target seconds for the whole process)
WORKLOADS: list[tuple[str, list[str], float]] = [
    (
        "compare README, all strategies",
        ["compare", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--solve-for", "B", "--hw", "tpu-v5p", "--strategies", "all"],
        1.0,
    ),
    ("compare 2-axis", ["compare", "A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "--solve-for", "I", "--hw", "tpu-v5e"], 2.0),
    ("compare 3-axis", ["compare", THREE_AXES, "--solve-for", "I", "--hw", "tpu-v5e"], 4.0),
    ("symbolic plan X=4,Y=4,Z=4", ["matmul", THREE_AXES, "--mesh", "X=4,Y=4,Z=4"], 0.75),
    (
        "numeric plan, 4 axes",
        ["matmul", THREE_AXES, "--mesh", "W=2,X=4,Y=4,Z=2", "--shape", "I=8192,J=8192,K=8192", "--hw", "tpu-v5p"],
        0.75,
    ),
    (
        "best-sharding, 2 matmuls, 3 axes",
        [
            "best-sharding",
            "x[B, D] · W_in[D, F] -> Tmp[B, F]",
            "Tmp[B, F] · W_out[F, D] -> Out[B, D]",
            "--mesh",
            "X=2,Y=2,Z=2",
            "--shape",
            "B=128,D=8192,F=32768",
            "--hw",
            "v5e",
            "--memory",
            "300MB",
        ],
        2.0,
    ),
    (
        "best-sharding, 8 matmuls, 2 axes",
        [
            "best-sharding",
            *CHAIN_8,
            "--mesh",
            "X=2,Y=2",
            "--shape",
            "B=128,D=8192,F=32768",
            "--hw",
            "v5e",
            "--memory",
            "1GB",
        ],
        2.0,
    ),
    (
        "best strategy, 8 axes",
        [
            "matmul",
            "A[I, J] · B[J, K] -> C[I, K]",
            "--mesh",
            "P=2,Q=2,R=2,S=2,U=2,V=2,W=2,X=2",
            "--shape",
            "I=8192,J=8192,K=8192",
            "--hw",
            "tpu-v5p",
            "--top",
            "1",
        ],
        2.0,
    ),
]

SYMPY = [sys.executable, "-c", "import sympy"]

# symshard's symbolic plan of THREE_AXES in-process, caches cold, after the imports (printed in seconds)
PLAN_IN_PROCESS = """
import time
from symshard.planning.planner import plan
from symshard.machines.mesh import Mesh
m = Mesh("X=4,Y=4,Z=4")
start = time.perf_counter()
p = plan("A[I_X, J_Y] · B[J_Y, K_Z] -> C[I_X, K_Z]", m)
[s.time for s in p.strategies]
print(time.perf_counter() - start)
"""

# XLA compiling the same sharded product on 64 simulated devices: a whole process when run as it
# is, and (printed in seconds) the trace, lowering and compile after the imports and device set-up
XLA_COMPILE = """
import os, time
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=64"
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, AxisType
devices = np.array(jax.devices()[:64]).reshape(4, 4, 4)
mesh = Mesh(devices, ("X", "Y", "Z"), axis_types=(AxisType.Auto,) * 3)
f = jax.jit(lambda a, b: a @ b, in_shardings=(NamedSharding(mesh, P("X", "Y")), NamedSharding(mesh, P("Y", "Z"))),
            out_shardings=NamedSharding(mesh, P("X", "Z")))
a = jax.ShapeDtypeStruct((512, 512), jax.numpy.float32)
start = time.perf_counter()
f.lower(a, a).compile()
print(time.perf_counter() - start)
"""


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(argv: list[str], timeout: float) -> float:
    """Seconds one process takes from start to exit (``inf`` past ``timeout``)."""
    start = time.perf_counter()
    try:
        subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout, check=False, env=ENV
        )
    except subprocess.TimeoutExpired:
        return float("inf")
    return time.perf_counter() - start


def printed(code: str) -> float:
    """The number a Python snippet prints, run in a fresh process."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV)
    return float(out.stdout.strip().splitlines()[-1])


def shown(seconds: float, timeout: float) -> str:
    return f"> {timeout:.0f} s" if seconds == float("inf") else f"{seconds:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="processes timed per workload (default 3)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds before a run is given up (default 120)")
    parser.add_argument("--only", action="append", help="run only the workloads whose name contains this")
    parser.add_argument("--xla", action="store_true", help="time XLA compiling the 3-axis case too (JAX extra)")
    args = parser.parse_args(argv)
    env_note = os.environ.get("PYTHONPATH")
    print(f"{sys.executable}{' with PYTHONPATH=' + env_note if env_note else ''}; median of {args.repeats} runs")
    ok = True
    for name, cli, target in WORKLOADS:
        if args.only and not any(o in name for o in args.only):
            continue
        runs, bases = [], []
        wall([sys.executable, "-m", "symshard", *cli], args.timeout)  # warm-up: bytecode written, files cached
        for i in range(args.repeats):
            pair = [("base", SYMPY), ("run", [sys.executable, "-m", "symshard", *cli])]
            for kind, command in pair if i % 2 == 0 else pair[::-1]:
                (bases if kind == "base" else runs).append(wall(command, args.timeout))
            if runs[-1] == float("inf"):
                break  # one run past the timeout says enough
        median, base = statistics.median(runs), statistics.median(bases)
        passed = median <= target
        ok = ok and passed
        ratio = "" if median == float("inf") else f" = {median / base:.1f}x"
        print(
            f"  {name:<34} {shown(median, args.timeout):>9} (min {shown(min(runs), args.timeout)}); "
            f"import sympy {base:.2f} s{ratio}; target {target:g} s: {'PASS' if passed else 'FAIL'}",
            flush=True,
        )
    if args.xla and (not args.only or any("symbolic" in o for o in args.only)):
        symbolic = next(cli for name, cli, _ in WORKLOADS if name.startswith("symbolic"))
        commands = [
            ("ours", [sys.executable, "-m", "symshard", *symbolic]),
            ("xla", [sys.executable, "-c", XLA_COMPILE]),
        ]
        for _, command in commands:
            wall(command, args.timeout)  # warm-up
        whole: dict[str, list[float]] = {"ours": [], "xla": []}
        for i in range(max(args.repeats, 5)):
            for kind, command in commands if i % 2 == 0 else commands[::-1]:
                whole[kind].append(wall(command, args.timeout))
        ours, theirs = statistics.median(whole["ours"]), statistics.median(whole["xla"])
        faster = ours < theirs
        ok = ok and faster
        print(
            f"  whole processes: symshard's symbolic plan {ours:.2f} s against XLA compiling the same case "
            f"{theirs:.2f} s (import jax, 64 devices, trace, lower, compile): {theirs / ours:.2f}x "
            f"({'PASS' if faster else 'FAIL'})"
        )
        ours_in = statistics.median(printed(PLAN_IN_PROCESS) for _ in range(max(args.repeats, 5)))
        theirs_in = statistics.median(printed(XLA_COMPILE) for _ in range(max(args.repeats, 5)))
        print(
            f"  in-process, after the imports: symbolic plan {ours_in:.3f} s against XLA's trace, lowering "
            f"and compile {theirs_in:.3f} s: {theirs_in / ours_in:.2f}x (reported, not a target)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

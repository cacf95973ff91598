"""Check symshard's single-chip predictions against the chip they run on: measure, calibrate, predict.

Run on a machine with an accelerator (JAX's default backend), in one go:

1. ``symshard measure``'s sweep (``--dtypes``, bf16 by default), written as CSV;
2. ``symshard calibrate --chip`` on it, against the preset named by ``--hw``: a hardware file with the
   attained rates beside the data sheet's peaks;
3. kernels that are *not* in the sweep (other shapes, and the weight matmuls of a whole LLaMA-3 8B
   decode step at several batch sizes, 32 layers and the output head in one compiled program), timed the
   same way, each beside symshard's bound (data sheet) and its expected time (attained rates).

It prints one line per check and writes ``checks.csv``, the sweep and the hardware file into ``--out``.
The bound must never be above a measured time; the expected time should be close.

    python scripts/device_check.py --hw h200 --out results/      # on the GPU machine
    python scripts/device_check.py --hw h200 --out /tmp/x --quick  # a tiny run on a CPU, to try it
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

# the weight matmuls of one decode step of LLaMA-3 8B (MODELS.md: D=4096, F=14336, 32 heads of 128,
# 8 KV heads, vocabulary 128256), per layer: the fused QKV projection, the output projection, the
# fused gate and up projections, the down projection; then the output head once
LLAMA3_8B_LAYER = ((4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096))
LLAMA3_8B_HEAD = (4096, 128256)
LLAMA3_8B_LAYERS = 32

HELD_OUT = (  # (m, k, n): shapes the sweep does not have
    (1, 5120, 13824),
    (16, 4096, 6144),
    (64, 8192, 28672),
    (256, 5120, 13824),
    (1024, 6144, 6144),
    (2048, 5120, 13824),
    (4096, 12288, 12288),
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hw", default="h200", help="the preset to calibrate against")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--dtypes", default="bf16")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a CPU")
    parser.add_argument("--batches", default="1,8,64,512")
    parser.add_argument("--max-bytes", type=int, default=None, help="the most one swept kernel may move")
    args = parser.parse_args(argv)

    import jax
    import jax.numpy as jnp

    from symshard.costs import measure as measuring
    from symshard.costs.chipfit import chip_hardware_file, fit_chip, parse_chip_measurements
    from symshard.costs.kernels import kernel_time
    from symshard.machines.presets import hardware, load_hardware
    from symshard.report.chipfits import measure_method

    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    sweep = measuring.measure(quick=args.quick, dtypes=dtypes, max_bytes=args.max_bytes)
    text = measuring.measurements_csv(sweep.rows)
    (args.out / "sweep.csv").write_text(text)
    print(f"sweep: {len(sweep.rows)} kernels on {sweep.device} ({sweep.platform}, jax {sweep.jax_version}) "
          f"in {sweep.seconds:.0f} s", flush=True)  # fmt: skip

    base = hardware(args.hw)
    fit = fit_chip(parse_chip_measurements(text, "sweep.csv"), base, device=sweep.device,
                   date=time.strftime("%Y-%m-%d"), method=measure_method(sweep))  # fmt: skip
    toml = chip_hardware_file(fit)
    toml_path = args.out / f"{args.hw}-measured.toml"
    toml_path.write_text(toml)
    chip = load_hardware(toml_path)
    for rates in chip.attained.rates if chip.attained else ():
        print(f"fit {rates.dtype}: C' {float(rates.flops):.3e} FLOP/s, W' {float(rates.hbm_bandwidth):.3e} B/s, "
              f"t0 {float(rates.kernel_overhead) * 1e6:.1f} us, L {float(rates.floor) * 1e6:.1f} us, p {rates.overlap}",
              flush=True)  # fmt: skip

    rows = []

    def check(label: str, flops: int, nbytes: int, measured: float, best: float, dtype: str = "bf16") -> None:
        k = kernel_time(flops, nbytes, dtype, chip)
        bound = float(k.time)
        expected = float(k.expected) if k.expected is not None else float("nan")
        rows.append({"check": label, "flops": flops, "bytes": nbytes, "measured_s": measured, "best_s": best,
                     "bound_s": bound, "expected_s": expected, "bound_ok": bound <= best * 1.0001,
                     "expected_error": expected / measured - 1})  # fmt: skip
        print(f"{label:<42} measured {measured * 1e6:10.1f} us  bound {bound * 1e6:10.1f} us  "
              f"expected {expected * 1e6:10.1f} us ({(expected / measured - 1) * 100:+6.1f} %)"
              f"{'' if bound <= best * 1.0001 else '  BOUND ABOVE MEASURED'}", flush=True)  # fmt: skip

    shrink = 16 if args.quick else 1
    for m, k, n in HELD_OUT:
        m, k, n = max(1, m // shrink), max(16, k // shrink), max(16, n // shrink)
        row, _ = measuring._time_kernel(jax, jnp, "matmul", "bf16", m, k, n, 3 if args.quick else 7, args.quick)
        check(f"matmul bf16 [{m},{k}]x[{k},{n}]", row.flops, row.bytes, row.median_s, row.best_s)

    # a whole decode step's weight matmuls, one compiled program: 32 layers, each its own weights
    layers = LLAMA3_8B_LAYERS if not args.quick else 2
    shapes = [(k // shrink, n // shrink) for k, n in LLAMA3_8B_LAYER] * layers
    shapes.append((LLAMA3_8B_HEAD[0] // shrink, LLAMA3_8B_HEAD[1] // shrink))
    weights = [jnp.ones((k, n), dtype=jnp.bfloat16) * 0.01 for k, n in shapes]
    for batch in [int(b) for b in args.batches.split(",")]:
        xs = [jnp.ones((batch, k), dtype=jnp.bfloat16) for k, _ in shapes]

        @jax.jit
        def step(xs, ws):
            return [x @ w for x, w in zip(xs, ws, strict=True)]

        jax.block_until_ready(step(xs, weights))
        for _ in range(2):
            jax.block_until_ready(step(xs, weights))
        times = []
        for _ in range(5 if not args.quick else 2):
            t = time.perf_counter()
            jax.block_until_ready(step(xs, weights))
            times.append(time.perf_counter() - t)
        times.sort()
        flops = sum(2 * batch * k * n for k, n in shapes)
        nbytes = sum(2 * (batch * k + k * n + batch * n) for k, n in shapes)
        # the bound of the step: each kernel's bound, added up (they run one after another)
        bound = sum(float(kernel_time(2 * batch * k * n, 2 * (batch * k + k * n + batch * n), "bf16", chip).time)
                    for k, n in shapes)  # fmt: skip
        expected = sum(
            float(kernel_time(2 * batch * k * n, 2 * (batch * k + k * n + batch * n), "bf16", chip).expected or 0)
            for k, n in shapes
        )
        median = times[len(times) // 2]
        rows.append({"check": f"llama3-8b decode matmuls B={batch}", "flops": flops, "bytes": nbytes,
                     "measured_s": median, "best_s": times[0], "bound_s": bound, "expected_s": expected,
                     "bound_ok": bound <= times[0] * 1.0001, "expected_error": expected / median - 1})  # fmt: skip
        print(f"{'llama3-8b decode matmuls B=' + str(batch):<42} measured {median * 1e3:10.3f} ms  "
              f"bound {bound * 1e3:10.3f} ms  expected {expected * 1e3:10.3f} ms "
              f"({(expected / median - 1) * 100:+6.1f} %){'' if bound <= times[0] * 1.0001 else '  BOUND ABOVE'}",
              flush=True)  # fmt: skip

    with open(args.out / "checks.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    bad = [r["check"] for r in rows if not r["bound_ok"]]
    worst = max(abs(r["expected_error"]) for r in rows)
    print(f"checks: {len(rows)}; bound above measured: {len(bad)} {bad}; worst expected error {worst * 100:.1f} %; "
          f"{time.perf_counter() - t0:.0f} s in all", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

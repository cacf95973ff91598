"""Measuring the local accelerator: a short sweep of microbenchmarks, timed through JAX.

``symshard measure`` times what a chip's local work is made of, on JAX's default backend (a GPU or TPU
when there is one, else the CPU): matmuls ``[m, k] x [k, n]`` of many shapes (decode-like ``m`` from 1 to
128 against large weights, squares, the shapes of real layers) in bf16, fp16 and fp32 (int8 too where
the backend multiplies it), and copies and elementwise adds from 1 MiB up to a few GiB (capped by the
device's memory). Each kernel is compiled once, run a few times to warm up, then timed several times,
each time as a batch of back-to-back runs ended by ``block_until_ready`` (so that the host's dispatch
overlaps the device's work); the median and the best per kernel are kept. Each run is one compiled
program that runs the kernel 8 times, one after another in straight-line code, so that the host's
dispatch is paid once for all of them (JAX's dispatch of one small program takes tens of µs, more than a
small kernel) and no loop adds its own cost to each.

The rows are the columns of the chip measurement files (``site/data/chip-*.csv``), exactly:
``op,dtype,m,k,n,bytes,flops,median_s,best_s``, where ``bytes`` counts the operands read and the
result written once (a copy of ``n`` bytes moves ``2·n``, an add of ``n`` elements ``3·n·itemsize``)
and a matmul does ``2·m·k·n`` FLOPs (an add ``n``). ``symshard calibrate --chip`` fits them.

JAX is imported here only inside the functions that need it (the ``jax`` extra): ``import symshard``
stays light, and without JAX ``symshard measure`` says how to install it.

Examples:
    >>> rows = (Measurement("copy", "bf16", 0, 0, 1 << 20, 2 << 20, 0, 2.4e-05, 2.2e-05),)
    >>> print(measurements_csv(rows), end="")
    op,dtype,m,k,n,bytes,flops,median_s,best_s
    copy,bf16,0,0,1048576,2097152,0,2.4e-05,2.2e-05
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

from ..algebra.dtypes import canonical_dtype
from ..errors import UsageError
from ..messages import say

__all__ = ["COLUMNS", "Measurement", "Sweep", "measure", "measurements_csv", "plan_sweep"]

COLUMNS = ("op", "dtype", "m", "k", "n", "bytes", "flops", "median_s", "best_s")
"""The columns of a measurement file, in order."""

DTYPES = ("bf16", "fp16", "fp32", "int8")
"""What the sweep measures by default (int8 only where the backend multiplies it)."""

_ITEMSIZE = {"bf16": 2, "fp16": 2, "fp32": 4, "int8": 1}
_JAX_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "int8": "int8"}

_DECODE = (1, 8, 32, 128)
_WEIGHTS = ((4096, 14336), (8192, 8192))
_SQUARES = (1024, 4096, 8192)
_LAYERS = ((2048, 4096, 14336), (4096, 8192, 28672))
_STREAMS = tuple(1 << e for e in (20, 24, 26, 28, 30, 32))  # 1 MiB to 4 GiB

_QUICK_MATMULS = ((1, 256, 256), (64, 256, 256), (256, 256, 256))
_QUICK_STREAMS = (1 << 16, 1 << 19, 1 << 22)

CPU_MAX_BYTES = 256 << 20
"""The largest copy on a CPU, by default (its memory is the host's: the sweep stays small)."""


@dataclass(frozen=True, slots=True)
class Measurement:
    """One timed kernel, as a row of the measurement file (see the module)."""

    op: str
    dtype: str
    m: int
    k: int
    n: int
    bytes: int
    flops: int
    median_s: float
    best_s: float


@dataclass(frozen=True, slots=True)
class Sweep:
    """What ``measure`` timed: the rows, and the device, backend and JAX version it ran on."""

    rows: tuple[Measurement, ...]
    device: str
    platform: str
    jax_version: str
    seconds: float
    skipped: tuple[str, ...] = ()
    """Dtypes the backend could not run (int8 on some), by name."""
    compile_seconds: float = 0.0
    """Of ``seconds``, those spent compiling (and running once) each kernel's program."""
    samples: int = 0
    """Timed batches per kernel (each of :data:`REPEAT` runs), whose median and best are kept."""

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Sweep", self.device or self.platform, {"rows": len(self.rows), "seconds": round(self.seconds, 1),
                       "skipped": list(self.skipped) or None}, platform=self.platform, jax=self.jax_version)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def measurements_csv(rows: Sequence[Measurement]) -> str:
    """The measurement file's text: the header, then one row a line (times with Python's shortest repr)."""
    lines = [",".join(COLUMNS)]
    for r in rows:
        lines.append(f"{r.op},{r.dtype},{r.m},{r.k},{r.n},{r.bytes},{r.flops},{r.median_s!r},{r.best_s!r}")
    return "\n".join(lines) + "\n"


def _matmul_work(dtype: str, m: int, k: int, n: int) -> tuple[int, int]:
    """``(bytes, flops)`` of ``[m, k] x [k, n]``: operands read once, the result written once (int8's
    result is int32)."""
    size = _ITEMSIZE[dtype]
    out = 4 if dtype == "int8" else size
    return size * (m * k + k * n) + out * m * n, 2 * m * k * n


def plan_sweep(
    *, quick: bool = False, dtypes: Sequence[str] | None = None, max_bytes: int | None = None
) -> tuple[tuple[str, str, int, int, int], ...]:
    """The kernels a sweep times, in order: ``(op, dtype, m, k, n)`` (a copy's ``n`` in bytes, an add's in
    elements). ``max_bytes`` caps what one kernel moves.

    Raises:
        UsageError: an unknown dtype, or a cap below the smallest kernel.

    Examples:
        >>> len(plan_sweep()), plan_sweep(quick=True, dtypes=["fp32"])[0]
        (88, ('matmul', 'fp32', 1, 256, 256))
    """
    chosen = []
    for name in dtypes or DTYPES:
        key = canonical_dtype(name)
        if key not in _ITEMSIZE:
            raise UsageError(
                say("symshard measure cannot measure {dtype}", dtype=key),
                hint=say("measure {dtypes}", dtypes=", ".join(DTYPES)),
            )
        if key not in chosen:
            chosen.append(key)
    limit = max_bytes if max_bytes is not None else 1 << 62
    matmuls = _QUICK_MATMULS if quick else _matmul_shapes()
    streams = _QUICK_STREAMS if quick else _STREAMS
    plan: list[tuple[str, str, int, int, int]] = []
    for dtype in chosen:
        size = _ITEMSIZE[dtype]
        plan += [("matmul", dtype, m, k, n) for m, k, n in matmuls if _matmul_work(dtype, m, k, n)[0] <= limit]
        if dtype == "int8":
            continue  # the copies and adds of int8 move bytes as every dtype does
        for nbytes in streams:
            if 3 * nbytes <= limit:
                plan += [("copy", dtype, 0, 0, nbytes), ("add", dtype, 0, 0, nbytes // size)]
    if not plan:
        raise UsageError(
            say("--max-bytes {value} leaves nothing to measure", value=f"{limit:,}"),
            hint=say("allow at least a few MiB, e.g. --max-bytes 64MiB"),
        )
    return tuple(plan)


def _matmul_shapes() -> tuple[tuple[int, int, int], ...]:
    shapes = [(m, k, n) for k, n in _WEIGHTS for m in _DECODE]
    shapes += [(s, s, s) for s in _SQUARES]
    shapes += list(_LAYERS)
    return tuple(shapes)


def require_jax() -> ModuleType:
    """JAX, or a :class:`~symshard.errors.UsageError` saying how to install it."""
    try:
        import jax
    except ImportError:
        raise UsageError(
            say("symshard measure runs its kernels through JAX, which is not installed"),
            hint=say("pip install 'symshard[jax]' (and JAX's CUDA or TPU build to measure an accelerator)"),
        ) from None
    return jax


def measure(
    *,
    quick: bool = False,
    dtypes: Sequence[str] | None = None,
    max_bytes: int | None = None,
    runs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Sweep:
    """Time the sweep on JAX's default device.

    Args:
        quick: a tiny sweep (seconds on a CPU), for tests and a first look.
        dtypes: what to measure (default bf16, fp16, fp32 and int8 where it runs).
        max_bytes: the most one kernel may move (default: a third of the device's memory, or 256 MiB
            on a CPU).
        runs: timed samples per kernel (default 7; 3 with ``quick``).
        progress: called with ``(done, total)`` after each kernel.

    Raises:
        UsageError: JAX missing, an unknown dtype, a cap that leaves nothing to measure.
    """
    jax = require_jax()
    import jax.numpy as jnp

    started = time.perf_counter()
    device = jax.devices()[0]
    platform = device.platform
    if max_bytes is None:
        max_bytes = _device_cap(device)
    plan = plan_sweep(quick=quick, dtypes=dtypes, max_bytes=max_bytes)
    samples = runs or (3 if quick else 7)
    rows: list[Measurement] = []
    skipped: list[str] = []
    compiling = 0.0
    for done, (op, dtype, m, k, n) in enumerate(plan, start=1):
        if dtype in skipped:
            if progress is not None:
                progress(done, len(plan))
            continue
        try:
            row, compiled = _time_kernel(jax, jnp, op, dtype, m, k, n, samples, quick)
            rows.append(row)
            compiling += compiled
        except Exception as err:  # a backend that cannot run this dtype (int8 dots on some): skip it
            if dtype != "int8":
                raise UsageError(
                    say("JAX could not run {op} in {dtype} on {device}: {why}", op=op, dtype=dtype,
                        device=str(device.device_kind), why=f"{type(err).__name__}: {str(err)[:200]}"),
                    hint=say("leave the dtype out with --dtypes, or cap the sizes with --max-bytes"),
                ) from None  # fmt: skip
            skipped.append(dtype)
            rows = [r for r in rows if r.dtype != dtype]
        if progress is not None:
            progress(done, len(plan))
    return Sweep(
        tuple(rows),
        device=str(getattr(device, "device_kind", platform)),
        platform=platform,
        jax_version=str(jax.__version__),
        seconds=time.perf_counter() - started,
        skipped=tuple(skipped),
        compile_seconds=compiling,
        samples=samples,
    )


def _device_cap(device) -> int:
    """A third of the device's memory (a kernel holds up to three arrays), or the CPU's default."""
    try:
        stats = device.memory_stats() or {}
    except Exception:  # backends without memory statistics
        stats = {}
    limit = stats.get("bytes_limit")
    if device.platform == "cpu" or not limit:
        return CPU_MAX_BYTES
    return int(limit) // 3


REPEAT = 8
"""Kernels run back to back inside one compiled program, so that the host's dispatch of the program is
paid once for all of them: the time per kernel is the device's, launch included."""


def _program(jax, jnp, op, dtype, m, k, n):
    """The compiled program for one kernel, its arguments, and the kernel's ``(bytes, flops)``.

    The program is straight-line code, ``REPEAT`` kernels one after another, not a loop: a loop on a GPU
    checks its condition on the host after every iteration, which would add tens of microseconds to
    each kernel that a real program of back-to-back kernels does not pay. Each kernel must run: a matmul
    multiplies the next of ``REPEAT`` stacked activations (so no two products merge into one); a copy
    negates the array it carries (read ``n`` bytes, write ``n``); an add adds the other operand to it;
    an optimization barrier between steps keeps XLA from fusing the elementwise steps into one kernel.
    """
    lax = jax.lax
    jdtype = getattr(jnp, _JAX_DTYPE[dtype])
    if op == "matmul":
        xs = jnp.asarray(_values((REPEAT, m, k), dtype), dtype=jdtype)
        w = jnp.asarray(_values((REPEAT, k, n), dtype), dtype=jdtype)
        if dtype == "int8":

            def product(x, y):
                return jnp.matmul(x, y, preferred_element_type=jnp.int32)

        else:

            def product(x, y):  # fp32 in full precision (no TF32), as the shared measurements
                return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)

        def matmuls(stack, weights):
            return [lax.optimization_barrier(product(stack[i], weights[i])) for i in range(REPEAT)]

        return jax.jit(matmuls), (xs, w), _matmul_work(dtype, m, k, n)
    size = _ITEMSIZE[dtype]

    def chain(step):
        def run(y, *rest):
            for _ in range(REPEAT):
                y = lax.optimization_barrier(step(y, *rest))
            return y

        return jax.jit(run)

    if op == "copy":
        x = jnp.ones((n // size,), dtype=jdtype)
        return chain(lambda y: -y), (x,), (2 * n, 0)
    a = jnp.ones((n,), dtype=jdtype)
    b = jnp.ones((n,), dtype=jdtype)
    return chain(lambda y, v: y + v), (a, b), (3 * n * size, n)


def _values(shape: tuple[int, ...], dtype: str):
    """Pseudo-random operands made on the host (JAX's own generator compiles a program per shape, which
    would cost more than the measurement): a block of normal values, repeated to fill the shape; small
    integers for int8."""
    import numpy as np

    count = 1
    for size in shape:
        count *= size
    rng = np.random.default_rng(0)
    block = rng.integers(-8, 8, size=min(count, 1 << 20), dtype=np.int8) if dtype == "int8" else (
        rng.standard_normal(min(count, 1 << 20), dtype=np.float32))  # fmt: skip
    return np.resize(block, count).reshape(shape)


def _time_kernel(jax, jnp, op, dtype, m, k, n, samples, quick) -> tuple[Measurement, float]:
    """Compile one kernel's loop, warm it up, then time ``samples`` batches of runs; the median and best
    per kernel, and the seconds spent compiling."""
    fn, args, (nbytes, flops) = _program(jax, jnp, op, dtype, m, k, n)
    started = time.perf_counter()
    jax.block_until_ready(fn(*args))  # compile (and the first run)
    compiled = time.perf_counter() - started
    first = time.perf_counter()
    jax.block_until_ready(fn(*args))
    once = time.perf_counter() - first
    # each sample is a batch of runs lasting about a millisecond (at least one), so that the host's
    # dispatch of one run overlaps the device's work on the one before
    batch = max(1, min(20 if not quick else 5, int(1e-3 / max(once, 1e-7))))
    for _ in range(1 if quick else 2):
        jax.block_until_ready(fn(*args))
    per_kernel = []
    for _ in range(samples):
        t = time.perf_counter()
        out = None
        for _ in range(batch):
            out = fn(*args)
        jax.block_until_ready(out)
        per_kernel.append((time.perf_counter() - t) / (batch * REPEAT))
    per_kernel.sort()
    median = per_kernel[len(per_kernel) // 2]
    return Measurement(op, dtype, m, k, n, nbytes, flops, float(median), float(per_kernel[0])), compiled

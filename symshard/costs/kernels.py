"""One chip's local kernel, timed: the data sheet's bound and, on a calibrated chip, the expected time.

Every cost symshard prices has a local part: a device multiplies its blocks (``F`` FLOPs) and reads and
writes its operands and result in HBM (``B`` bytes, each array once, as the book's roofline chapter
counts). This module is the one place that part is timed, so that strategies, layers and model steps
all price it the same way.

Two figures, and they answer different questions:

- **the bound**, from the data sheet's peaks: ``max(F / C, B / W_hbm)``. No real kernel runs faster (a
  test checks it against every row of the measured H100 and H200 files), so a plan that looks fast here
  may still be slow, but one that looks slow here is.
- **the expected time**, from the rates the chip attained in measurements (``symshard measure``, then
  ``symshard calibrate --chip``; :class:`~symshard.machines.chips.AttainedRates`). A matmul::

      t = max(L, t0 + (Tc**p + Tm**p)**(1/p)),   Tc = F / C',  Tm = B / W'

  a fixed cost per kernel ``t0``, then compute and memory overlapping as far as ``p`` says (``p = 1``
  adds them, ``p = ∞`` takes the larger: the roofline's ``max``; ``None`` stands for ``∞``), and never
  under the floor ``L`` that the smallest kernel takes. A copy or an elementwise kernel (``stream=True``)
  has its own ``max(L_s, t0_s + B / W_s)``.

Why not simply ``t0 + max(F / C', B / W')``? Because the measured data asks for more. Near the ridge a
real kernel neither fully overlaps its loads with its math nor fully serialises them: on an H200 (the
198 rows of ``site/data/chip-h200-torch-2026-11.csv``, fitted by least squares on relative error) the
``max`` form is off by 14 % on its worst bf16 matmul over 100 µs, ``p = 2`` by 10 %. fp32 matmuls
(CUDA cores, TF32 off) fit best with ``p = 1``: at small batch cuBLAS's SIMT kernels load and compute in
turn. Small kernels do not pay a fixed cost on top of their work but take a floor: a 1 MiB copy takes
as long as a 16 MiB one (about 22 µs), and above that the time grows as ``11 µs + B / W_s``; so the
floor is a ``max``. And copies stream at a rate of their own (4.27 TB/s on that H200, where matmuls
read weights at up to 4.68 TB/s after a longer start): one ``t0 + B / W`` for both was 12–21 % off on
copies over 64 MiB, the two forms are within 3.5 %.

No model of ``F`` and ``B`` alone can do much better on matmuls: that file holds matmuls with the same
FLOPs and bytes (``[768, 4096] x [4096, 14336]`` and ``[768, 14336] x [14336, 4096]``) whose times differ
by 21 % in bf16 and, in fp32 at m = 24, by 80 %: the library picks different kernels for them. A model
that gives both one time is at least 9.6 % (bf16) or 29 % (fp32) from one of them;
:class:`~symshard.costs.chipfit.DtypeFit` finds such twins in any file and says so.

The critical intensity ``C / W_hbm`` (FLOPs per byte above which the data sheet says compute binds) is
:func:`critical_intensity`.

Examples:
    >>> from symshard.machines.presets import hardware
    >>> from symshard.algebra.units import format_seconds
    >>> decode = kernel_time(2 * 8192 * 8192, 2 * (8192 + 8192 * 8192 + 8192), "bf16", hardware("h200"))
    >>> decode.bound, format_seconds(decode.time)  # one token through an 8192 x 8192 bf16 weight
    ('memory', '28 µs')
    >>> decode.expected is None  # a preset has no measurements: only the bound
    True
    >>> kernel_time(2 * 8192**3, 6 * 8192**2, "bf16").time  # no chip: symbolic
    Max(1099511627776/C, 402653184/W_hbm)
    >>> critical_intensity(hardware("h200"))  # FLOPs per byte
    825/4
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..algebra.dtypes import canonical_dtype
from ..algebra.mathtext import as_expr
from ..algebra.symbols import C, W_hbm
from ..machines.chips import AttainedRates, Hardware, attained_rates

__all__ = ["KernelTime", "critical_intensity", "expected_time", "hbm_traffic", "kernel_time"]


@dataclass(frozen=True, slots=True)
class KernelTime:
    """One local kernel on one chip: its work, the data sheet's bound and the expected time.

    Attributes:
        flops: the kernel's FLOPs (``F``).
        hbm_bytes: the bytes it reads from and writes to HBM (``B``).
        dtype: the canonical dtype whose peaks (and attained rates) price it.
        compute_time: ``F / C`` with the data sheet's peak (``C`` while symbolic).
        memory_time: ``F / W_hbm`` with the data sheet's HBM bandwidth.
        time: the bound, ``max(compute_time, memory_time)``: no kernel runs faster.
        bound: ``'compute'`` or ``'memory'``, whichever term is larger (compute on a tie), None
            while symbols leave it open.
        expected: the expected time from the attained rates, None unless the chip was calibrated
            for this dtype.
        attained: the rates ``expected`` comes from (None without them).
    """

    flops: sympy.Expr
    hbm_bytes: sympy.Expr
    dtype: str
    compute_time: sympy.Expr
    memory_time: sympy.Expr
    time: sympy.Expr
    bound: str | None
    expected: sympy.Expr | None = None
    attained: AttainedRates | None = None


def hbm_traffic(*arrays: object) -> object:
    """The bytes a local kernel moves between HBM and the chip: each of its arrays (the operands it reads and
    the result it writes) once, as the book's roofline chapter counts them; caches and re-reads are the
    attained rates' business (:func:`expected_time`), not the count's.

    The values may be the planner's exact numbers or SymPy expressions; they are added as they are.

    Examples:
        >>> hbm_traffic(2 * 8192, 2 * 8192 * 8192, 2 * 8192)  # x · W -> y in bf16, one token
        134250496
    """
    total: object = 0
    for size in arrays:
        total = total + size  # type: ignore[operator]
    return total


def kernel_time(flops: object, hbm_bytes: object, dtype: str = "bf16", hardware: Hardware | None = None) -> KernelTime:
    """Time one chip's local kernel of ``flops`` FLOPs moving ``hbm_bytes`` bytes of HBM.

    Args:
        flops: FLOPs (a number or a SymPy expression).
        hbm_bytes: bytes read and written in HBM, each array once.
        dtype: prices it with that dtype's peak (8-bit dtypes use the 8-bit peak) and attained rates.
        hardware: the chip; None keeps ``C`` and ``W_hbm`` as symbols (so does a chip without them).

    Raises:
        UnknownDtypeError: an unknown dtype.

    Examples:
        >>> from symshard.machines.chips import Attained, AttainedRates
        >>> from symshard.machines.presets import hardware
        >>> measured = Attained((AttainedRates("bf16", "7.5e14", "4.5e12", "2e-5", 2),))
        >>> from dataclasses import replace
        >>> k = kernel_time(2 * 4096**3, 6 * 4096**2, "bf16", replace(hardware("h200"), attained=measured))
        >>> k.bound, round(float(k.time) * 1e6, 1), round(float(k.expected) * 1e6, 1)
        ('compute', 138.8, 204.6)
    """
    key = canonical_dtype(dtype)
    f, b = as_expr(flops), as_expr(hbm_bytes)
    peaks = hardware.constants(key) if hardware is not None else {}
    compute = f / peaks.get(C, C)
    memory = b / peaks.get(W_hbm, W_hbm)
    rates = attained_rates(hardware, key)
    return KernelTime(
        flops=f,
        hbm_bytes=b,
        dtype=key,
        compute_time=compute,
        memory_time=memory,
        time=_larger(compute, memory),
        bound=_binds(compute, memory),
        expected=expected_time(f, b, rates) if rates is not None else None,
        attained=rates,
    )


def expected_time(flops: object, hbm_bytes: object, rates: AttainedRates, *, stream: bool = False) -> sympy.Expr:
    """A matmul's ``max(L, t0 + (Tc**p + Tm**p)**(1/p))`` with ``Tc = F / C'`` and ``Tm = B / W'`` (the larger
    of the two for ``p`` None; no ``max`` when the floor ``L`` is 0); with ``stream``, a copy's or an
    elementwise kernel's ``max(L_s, t0_s + B / W_s)`` from the stream rates (the matmul form when the
    streams were not measured).

    Examples:
        >>> from symshard.machines.chips import AttainedRates
        >>> from symshard.algebra.symbols import dim
        >>> expected_time(2 * dim("B") * 4096, 2 * 4096, AttainedRates("bf16", 5e14, 4e12, "1e-5", 1))
        B/61035156250 + 78141/7812500000
        >>> r = AttainedRates("bf16", 5e14, 4e12, "1e-5", 1, "3e-5", "4e12", "1e-5", "2e-5")
        >>> expected_time(0, 2**20, r, stream=True), expected_time(0, 2**30, r, stream=True)  # floor, then rate
        (1/50000, 2175277/7812500000)
    """
    f, b = as_expr(flops), as_expr(hbm_bytes)
    if stream and rates.has_streams:
        assert rates.stream_bandwidth is not None and rates.stream_overhead is not None
        timed = rates.stream_overhead + b / rates.stream_bandwidth
        return _larger(as_expr(rates.stream_floor), timed)
    compute = f / rates.flops
    memory = b / rates.hbm_bandwidth
    p = rates.overlap
    if p is None:
        work = _larger(compute, memory)
    elif p == 1:
        work = compute + memory
    elif compute.is_zero or memory.is_zero:
        work = compute + memory
    else:
        work = (compute**p + memory**p) ** sympy.Rational(1, p)
    timed = rates.kernel_overhead + work
    return timed if rates.floor == 0 else _larger(as_expr(rates.floor), timed)


def critical_intensity(hardware: Hardware | None = None, dtype: str = "bf16", *, attained: bool = False) -> sympy.Expr:
    """FLOPs per byte of HBM above which compute binds: ``C / W_hbm`` from the data sheet (symbolic
    without a chip), or ``C' / W'`` from the attained rates with ``attained``.

    Raises:
        HardwareError: ``attained`` on a chip that has no measurements for ``dtype``.

    Examples:
        >>> from symshard.machines.presets import hardware
        >>> critical_intensity(), critical_intensity(hardware("h100"), "int8")
        (C/W_hbm, 40000/67)
    """
    key = canonical_dtype(dtype)
    if attained:
        rates = attained_rates(hardware, key)
        if rates is None:
            from ..errors import HardwareError
            from ..messages import say

            raise HardwareError(
                say("{chip} has no attained rates for {dtype}", chip=str(hardware or "a symbolic chip"), dtype=key),
                hint=say("calibrate it from measurements: symshard measure, then symshard calibrate --chip"),
            )
        return rates.flops / rates.hbm_bandwidth
    peaks = hardware.constants(key) if hardware is not None else {}
    return peaks.get(C, C) / peaks.get(W_hbm, W_hbm)


def _larger(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    if a.is_number and b.is_number:
        return a if a >= b else b
    return sympy.Max(a, b)


def _binds(compute: sympy.Expr, memory: sympy.Expr) -> str | None:
    difference = compute - memory
    if difference.is_nonnegative:
        return "compute"
    if difference.is_negative:
        return "memory"
    return None

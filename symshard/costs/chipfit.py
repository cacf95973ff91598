"""Calibrating one chip from measurements: read ``symshard measure``'s CSV, fit the attained rates.

A chip's data sheet gives peaks, which are a bound; what a kernel is expected to take comes from the
rates the chip attains, and those are measured. ``symshard measure`` (or any script that writes the same
columns, such as the PyTorch one behind ``site/data/chip-h200-torch-2026-11.csv``) times matmuls,
copies and elementwise adds; this module reads that file and fits, per dtype, the models of
:mod:`symshard.costs.kernels`::

    matmul:      t = max(L, t0 + (Tc**p + Tm**p)**(1/p)),   Tc = F / C',  Tm = B / W'
    copy, add:   t = max(L_s, t0_s + B / W_s)

The fit, in plain floating point (``+ - * /`` and square roots, which IEEE 754 rounds the same
everywhere, so the same file gives the same figures on any machine):

1. a first guess: the floor from the rows within 1.5× the fastest one, ``C'`` from the largest
   matmuls, ``W'`` from the smallest, ``W_s`` from the largest copies and adds;
2. refined by least squares on the relative error (Levenberg–Marquardt), every row counting as much as
   any other, then once more with Huber's weights (a row off by more than 25 % counts as if it were off
   by 25 %), so that one odd kernel does not pull the rest; no rate above the data sheet's peak;
3. for each ``p`` in 1, 2, 4 and ∞: the one with the least error on the matmuls is kept, and the report
   says how each did;
4. two checks the report prints: each weight shape ``(k, n)`` left out of the fit and predicted from the
   others (how the model does on shapes it has not seen), and the two matmuls of the same FLOPs and
   bytes whose times differ most (how close any model of FLOPs and bytes can come).

The file (one row a line, ``op,dtype,m,k,n,bytes,flops,median_s,best_s``; blank lines and ``#`` lines
skipped) is read with limits: a regular file, at most 16 MiB and 100,000 rows, UTF-8 text; every row
that does not read is refused with its line number. (:func:`read_chip_measurements` is one function on
purpose: a shared bounded reader can replace its first lines.)

Examples:
    >>> from symshard.machines.presets import hardware
    >>> text = "op,dtype,m,k,n,bytes,flops,median_s,best_s\\n"
    >>> for e in range(20, 31, 2):  # copies: a 15 µs floor, then 5 µs + B / 4 TB/s
    ...     t = max(1.5e-5, 5e-6 + 2**(e+1) / 4e12)
    ...     text += f"copy,bf16,0,0,{2**e},{2**(e+1)},0,{t!r},{t!r}\\n"
    >>> for k, n in ((8192, 8192), (4096, 16384)):  # matmuls: 10 µs + work at 500 TFLOP/s and 4 TB/s, p = 2
    ...     for m in (1, 16, 256, 4096):
    ...         F, B = 2 * m * k * n, 2 * (m * k + k * n + m * n)
    ...         t = 1e-5 + ((F / 5e14) ** 2 + (B / 4e12) ** 2) ** 0.5
    ...         text += f"matmul,bf16,{m},{k},{n},{B},{F},{t!r},{t!r}\\n"
    >>> fit = fit_chip(parse_chip_measurements(text, "made-up.csv"), hardware("h200"))
    >>> r = fit.fits[0].rates
    >>> r.dtype, float(r.flops), float(r.hbm_bandwidth), float(r.kernel_overhead), r.overlap, r.floor
    ('bf16', 500000000000000.0, 4000000000000.0, 1e-05, 2, 0)
    >>> float(r.stream_bandwidth), float(r.stream_overhead), float(r.stream_floor)
    (4000000000000.0, 5e-06, 1.5e-05)
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace
from pathlib import Path

from ..algebra.dtypes import canonical_dtype
from ..algebra.symbols import C, W_hbm
from ..errors import MeasurementError, SymshardError, UsageError
from ..inputs import read_text_file
from ..machines.chips import Attained, AttainedRates, Hardware
from ..machines.presets import HARDWARE, check_attained
from ..messages import Message, say
from .kernels import expected_time, kernel_time

__all__ = [
    "COLUMNS",
    "ChipFit",
    "ChipMeasurements",
    "ChipRow",
    "DtypeFit",
    "RowClass",
    "chip_hardware_file",
    "fit_chip",
    "parse_chip_measurements",
    "read_chip_measurements",
    "row_class",
]

COLUMNS = ("op", "dtype", "m", "k", "n", "bytes", "flops", "median_s", "best_s")
"""The measurement file's columns, in order (its first line)."""

OPS = ("matmul", "copy", "add")
"""The kernels a measurement file times: ``[m, k] x [k, n]`` matmuls, copies of ``n`` bytes, adds of ``n``
elements."""

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_ROWS = 100_000
MAX_LINE = 1_000
_MAX_INT = 10**18  # sizes, bytes and FLOPs: above this a number is not a measurement of one chip
_MAX_SECONDS = 1e5  # a kernel timed for over a day is not a kernel
_MIN_SECONDS = 1e-12

OVERLAPS: tuple[int | None, ...] = (1, 2, 4, None)
"""The exponents ``p`` the fit tries (None: the larger of compute and memory)."""

_HUBER = 0.25
"""Past this relative error a row's weight falls off (Huber): it counts as if it were off by this much."""

_SMALL = 1.5
"""Rows within this factor of the fastest one are small work: they fix the first guess of ``t0``."""


@dataclass(frozen=True, slots=True)
class ChipRow:
    """One measured kernel: what it did, how much work, and its median and best time (seconds).

    Attributes:
        line: its line in the file (1 is the header).
        op: ``matmul``, ``copy`` or ``add``; dtype: canonical dtype.
        m, k, n: a matmul's ``[m, k] x [k, n]``; a copy's ``n`` bytes; an add's ``n`` elements.
        bytes: HBM bytes read and written; flops: FLOPs.
        median_s, best_s: the median and the best of its timed runs.
    """

    line: int
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
class ChipMeasurements:
    """A measurement file, read: its rows, its name and its SHA-256."""

    rows: tuple[ChipRow, ...]
    file: str
    sha256: str

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The dtypes measured, sorted."""
        return tuple(sorted({r.dtype for r in self.rows}))


# -- reading ------------------------------------------------------------------------------------------


def read_chip_measurements(path: str | Path) -> ChipMeasurements:
    """Read a measurement file with limits: a regular file of at most 16 MiB, UTF-8 text.

    Raises:
        InputError: no such file, not a regular file, too large, or not UTF-8 text
            (:func:`symshard.inputs.read_text_file`, the one bounded reader of a user's file).
        MeasurementError: a row that does not read (with its line number).
    """
    file = Path(path)
    text = read_text_file(file, what=say("the measurement file"), max_bytes=MAX_FILE_BYTES)
    return parse_chip_measurements(text, file.name, hashlib.sha256(text.encode("utf-8")).hexdigest())


def parse_chip_measurements(text: str, file: str = "measurements.csv", sha256: str = "") -> ChipMeasurements:
    """The rows of a measurement file's text (``file`` names it in errors).

    Raises:
        MeasurementError: empty, wrong columns, a value that is not a number, a time that is not
            positive and finite, a number too large, a best time above the median, too many rows.

    Examples:
        >>> text = "op,dtype,m,k,n,bytes,flops,median_s,best_s\\ncopy,bf16,0,0,1048576,2097152,0,2e-05,1.9e-05\\n"
        >>> parse_chip_measurements(text).rows[0].bytes
        2097152
        >>> parse_chip_measurements(text.replace("2e-05", "-2e-05"))
        Traceback (most recent call last):
          ...
        symshard.errors.MeasurementError: measurements.csv, line 2: median_s = -2e-05 must be a positive number of seconds
        hint: a time is measured in seconds, above 0 and finite
    """
    if not sha256:
        sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    hint = say("give the CSV that symshard measure wrote (columns {columns})", columns=",".join(COLUMNS))
    lines = text.removeprefix("\ufeff").splitlines()
    rows: list[ChipRow] = []
    header_seen = False
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(line) > MAX_LINE:
            raise MeasurementError(
                say("{file}, line {line}: {length} {length:character|characters}, more than a row holds", file=file, line=number,
                    length=f"{len(line):,}"),
                hint=hint,
            )  # fmt: skip
        cells = [c.strip() for c in stripped.split(",")]
        if not header_seen:
            if tuple(c.lower() for c in cells) != COLUMNS:
                raise MeasurementError(
                    say("{file}, line {line}: the columns are '{got}', not '{want}'", file=file, line=number,
                        got=_clip(stripped), want=",".join(COLUMNS)),
                    hint=hint,
                )  # fmt: skip
            header_seen = True
            continue
        if len(rows) >= MAX_ROWS:
            raise MeasurementError(
                say("{file} has more than {limit} {limit:row|rows}", file=file, limit=f"{MAX_ROWS:,}"),
                hint=say("measure fewer kernels, or split the file by dtype"),
            )
        rows.append(_row(cells, number, file))
    if not header_seen:
        raise MeasurementError(say("{file} is empty", file=file), hint=hint)
    if not rows:
        raise MeasurementError(say("{file} has its header but no measured row", file=file), hint=hint)
    return ChipMeasurements(tuple(rows), file, sha256)


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _row(cells: list[str], number: int, file: str) -> ChipRow:
    where = {"file": file, "line": number}
    if len(cells) != len(COLUMNS):
        raise MeasurementError(
            say("{file}, line {line}: {count} {count:value|values}, the header has {columns}", count=len(cells),
                columns=len(COLUMNS), **where),
            hint=say("each row is {columns}", columns=",".join(COLUMNS)),
        )  # fmt: skip
    op = cells[0].lower()
    if op not in OPS:
        raise MeasurementError(
            say("{file}, line {line}: unknown op '{op}'", op=_clip(cells[0]), **where),
            hint=say("the ops are {ops}", ops=", ".join(OPS)),
        )
    try:
        dtype = canonical_dtype(cells[1])
    except SymshardError as err:
        raise MeasurementError(say("{file}, line {line}: {why}", why=err.message, **where), hint=err.hint) from None
    ints = [_integer(name, text, number, file) for name, text in zip(COLUMNS[2:7], cells[2:7], strict=True)]
    m, k, n, nbytes, flops = ints
    median, best = (_seconds(name, text, number, file) for name, text in zip(COLUMNS[7:], cells[7:], strict=True))
    if nbytes == 0:
        raise MeasurementError(
            say("{file}, line {line}: bytes = 0: every kernel reads and writes HBM", **where),
            hint=say("bytes counts the operands read and the result written"),
        )
    if best > median:
        raise MeasurementError(
            say("{file}, line {line}: best_s = {best} is above median_s = {median}", best=cells[8],
                median=cells[7], **where),
            hint=say("best_s is the fastest run, median_s the middle one"),
        )  # fmt: skip
    if op == "matmul" and flops != 2 * m * k * n:
        raise MeasurementError(
            say("{file}, line {line}: a matmul [{m}, {k}] x [{k}, {n}] does {want} FLOPs, the row says {got}",
                m=m, k=k, n=n, want=2 * m * k * n, got=flops, **where),
            hint=say("flops = 2·m·k·n"),
        )  # fmt: skip
    return ChipRow(number, op, dtype, m, k, n, nbytes, flops, median, best)


def _integer(name: str, text: str, number: int, file: str) -> int:
    if not text.isdigit() or not text.isascii():
        raise MeasurementError(
            say("{file}, line {line}: {name} = '{value}' is not a whole number", file=file, line=number, name=name,
                value=_clip(text)),
            hint=say("sizes, bytes and FLOPs are whole numbers of at least 0"),
        )  # fmt: skip
    value = int(text[:20]) if len(text) <= 19 else _MAX_INT + 1
    if value > _MAX_INT:
        raise MeasurementError(
            say("{file}, line {line}: {name} = {value} is too large for one chip's kernel", file=file, line=number,
                name=name, value=_clip(text)),
            hint=say("numbers up to {limit}", limit="1e18"),
        )  # fmt: skip
    return value


def _seconds(name: str, text: str, number: int, file: str) -> float:
    hint = say("a time is measured in seconds, above 0 and finite")
    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        raise MeasurementError(
            say("{file}, line {line}: {name} = '{value}' is not a number", file=file, line=number, name=name,
                value=_clip(text)),
            hint=hint,
        ) from None  # fmt: skip
    if not math.isfinite(value) or value <= 0:
        raise MeasurementError(
            say("{file}, line {line}: {name} = {value} must be a positive number of seconds", file=file, line=number,
                name=name, value=_clip(text)),
            hint=hint,
        )  # fmt: skip
    if not _MIN_SECONDS <= value <= _MAX_SECONDS:
        raise MeasurementError(
            say("{file}, line {line}: {name} = {value} s is out of range for one kernel", file=file, line=number,
                name=name, value=_clip(text)),
            hint=say("times lie between {low} and {high} {high:second|seconds}", low="1e-12", high="1e5"),
        )  # fmt: skip
    return value


# -- the fit --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RowClass:
    """How far the expected time is from one class of rows: its count, median and worst relative error
    (worst keeps its sign: + the model is slower than measured)."""

    op: str
    band: str
    rows: int
    median_error: float
    worst_error: float


@dataclass(frozen=True, slots=True)
class DtypeFit:
    """One dtype's fit: the rates, each row's expected time and relative error, the classes' errors,
    how each ``p`` tried did on the matmuls (their root-mean-square relative error), and two checks of
    the fit against the data.

    Attributes:
        held_out: each matmul's relative error when its weight shape (``k``, ``n``) was left out of the
            fit and predicted (in ``rows`` order, None for copies and adds, and when the file holds one
            weight shape only): how the model does on shapes it has not seen.
        twins: the two matmuls with the same FLOPs and bytes whose times differ most (None if no two
            share both): no model of FLOPs and bytes can be closer to both than :attr:`twin_limit`.
    """

    rates: AttainedRates
    rows: tuple[ChipRow, ...]
    expected: tuple[float, ...]
    errors: tuple[float, ...]
    classes: tuple[RowClass, ...]
    candidates: tuple[tuple[int | None, float], ...]
    held_out: tuple[float | None, ...] = ()
    twins: tuple[ChipRow, ChipRow] | None = None

    @property
    def rms_error(self) -> float:
        """The root-mean-square relative error over the rows."""
        return math.sqrt(sum(e * e for e in self.errors) / len(self.errors))

    @property
    def twin_limit(self) -> float:
        """The least worst error any model of FLOPs and bytes has on :attr:`twins`: with times ``a < b``,
        one value ``x`` is at best ``(b - a) / (b + a)`` from both (0 without twins)."""
        if self.twins is None:
            return 0.0
        a, b = sorted(r.median_s for r in self.twins)
        return (b - a) / (b + a)

    def held_out_errors(self, least_s: float = 0.0) -> tuple[float, ...]:
        """The held-out relative errors of the matmuls that took at least ``least_s`` seconds."""
        return tuple(
            e for e, r in zip(self.held_out, self.rows, strict=True) if e is not None and r.median_s >= least_s
        )


@dataclass(frozen=True, slots=True)
class ChipFit:
    """A chip calibrated from measurements: the fit per dtype and the hardware it gives.

    Attributes:
        measurements: the file read.
        base: the chip whose data sheet is kept (the bound).
        hardware: ``base`` with the attained rates (:attr:`~symshard.machines.chips.Hardware.attained`).
        fits: one :class:`DtypeFit` per dtype, sorted.
        above_bound: rows the data sheet's bound is above (faster than the peaks allow: the base is
            not the chip measured, or the row is wrong); empty when all is well.
        notes: what the fit could not settle.
    """

    measurements: ChipMeasurements
    base: Hardware
    hardware: Hardware
    fits: tuple[DtypeFit, ...]
    above_bound: tuple[ChipRow, ...]
    notes: tuple[Message, ...] = ()

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("ChipFit", self.base.name, {"dtypes": [r.dtype for f in self.fits for r in (f.rates,)],
                       "rows": len(self.measurements.rows), "above_bound": len(self.above_bound)},
                       file=self.measurements.file)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def row_class(row: ChipRow) -> tuple[str, str]:
    """The class a row's error is reported in: ``(op, band)``; matmuls by their measured time
    (under 100 µs, 100 µs to 1 ms, over 1 ms), copies and adds by the bytes they move (up to
    64 MiB, above)."""
    if row.op == "matmul":
        t = row.median_s
        return row.op, "<100us" if t < 1e-4 else "100us-1ms" if t < 1e-3 else ">=1ms"
    return row.op, "<=64MiB" if row.bytes <= 64 * 2**20 else ">64MiB"


_BANDS = ("<100us", "100us-1ms", ">=1ms", "<=64MiB", ">64MiB")


def fit_chip(
    measurements: ChipMeasurements,
    base: Hardware,
    *,
    device: str = "",
    date: str = "",
    method: str = "",
    dtypes: tuple[str, ...] | None = None,
) -> ChipFit:
    """Fit each dtype's attained rates to the measurements, keeping ``base``'s data sheet as the bound.

    Args:
        measurements: the rows (:func:`read_chip_measurements`).
        base: the chip measured, whose peaks stay the bound.
        device, date, method: the provenance recorded beside the rates (``method``: how the times were
            taken).
        dtypes: fit only these (default: every dtype in the file).

    Raises:
        MeasurementError: a dtype with too few rows to fit, or none of the dtypes asked for.
        HardwareError: a rate above ``base``'s data sheet peak (the base is not the chip measured).
    """
    wanted = tuple(sorted({canonical_dtype(d) for d in dtypes})) if dtypes else measurements.dtypes
    fits = []
    for dtype in wanted:
        rows = tuple(r for r in measurements.rows if r.dtype == dtype)
        if not rows:
            raise MeasurementError(
                say("{file} has no {dtype} rows", file=measurements.file, dtype=dtype),
                hint=say("it measured {dtypes}", dtypes=", ".join(measurements.dtypes)),
            )
        peaks = base.constants(dtype)
        limits = (1 / float(peaks[C]) if C in peaks else 0.0, 1 / float(peaks[W_hbm]) if W_hbm in peaks else 0.0)
        fits.append(_fit_dtype(dtype, rows, measurements.file, limits))
    used = sum(len(f.rows) for f in fits)
    attained = Attained(
        tuple(f.rates for f in fits), measurements.file, measurements.sha256, device, date, used, method
    )  # fmt: skip
    chip = replace(base, attained=attained)
    check_attained(chip)
    above = tuple(
        r for f in fits for r in f.rows if float(kernel_time(r.flops, r.bytes, r.dtype, base).time) > r.best_s
    )
    notes = []
    if above:
        notes.append(
            say("{count} measured {count:row|rows} ran faster than {chip}'s data sheet allows (first: line {line}): is {chip} "
                "the chip that was measured?", count=len(above), chip=base.label, line=above[0].line)
        )  # fmt: skip
    return ChipFit(measurements, base, chip, tuple(fits), above, tuple(notes))


def _fit_dtype(dtype: str, rows: tuple[ChipRow, ...], file: str, limits: tuple[float, float]) -> DtypeFit:
    """One dtype's fit; ``limits`` are the least ``1/C'`` and ``1/W'`` (the data sheet's peaks: no rate
    above them, which also keeps a rate the rows cannot see, such as the bandwidth of a dtype measured
    only in compute-bound matmuls, at the peak rather than at infinity)."""
    matmuls = tuple(r for r in rows if r.op == "matmul")
    streams = tuple(r for r in rows if r.op != "matmul")
    if len(rows) < 3 or len(matmuls) < 2:
        raise MeasurementError(
            say("{file}: {count} {dtype} {count:row|rows}, too few to fit (it needs matmuls and at least 3 rows)", file=file,
                count=len(rows), dtype=dtype),
            hint=say("measure matmuls and copies of several sizes (symshard measure)"),
        )  # fmt: skip
    p, params, candidates = _fit_matmuls(matmuls, limits)
    floor, t0, u, v = params
    stream: tuple[str, str, str] | tuple[None, None, None] = (None, None, None)
    if len(streams) >= 3:
        s_floor, s_t0, s_v = _fit_streams(streams, limits[1])
        stream = (_rounded(1 / s_v), _rounded(s_t0), _rounded(s_floor))
    rates = AttainedRates(
        dtype, _rounded(1 / u), _rounded(1 / v), _rounded(t0), p, _rounded(floor) if floor > 0 else 0, *stream
    )
    # errors from the figures as the file writes them, so that the file reproduces the report
    expected = tuple(float(expected_time(r.flops, r.bytes, rates, stream=r.op != "matmul")) for r in rows)
    errors = tuple((e - r.median_s) / r.median_s for e, r in zip(expected, rows, strict=True))
    classes = []
    for op in OPS:
        for band in _BANDS:
            signed = [e for e, r in zip(errors, rows, strict=True) if row_class(r) == (op, band)]
            if signed:
                classes.append(RowClass(op, band, len(signed), _median([abs(e) for e in signed]), max(signed, key=abs)))
    held = _held_out(matmuls, p, params, limits)
    held_out = tuple(held.get(r.line) if r.op == "matmul" else None for r in rows)
    return DtypeFit(rates, rows, expected, errors, tuple(classes), candidates, held_out, _twins(matmuls))


def _fit_matmuls(rows: tuple[ChipRow, ...], limits: tuple[float, float], overlaps: tuple[int | None, ...] = OVERLAPS):
    """``(p, (L, t0, 1/C', 1/W'), candidates)``: for each ``p``, least squares from the first guess and
    again with Huber's weights; the ``p`` with the least error is kept."""
    start = _first_guess(rows, limits)
    lowest = (0.0, 0.0, *limits)
    candidates = []
    for p in overlaps:

        def model(params, row, p=p):
            return _matmul_time(params, row, p)

        params = _least_squares(model, rows, start, lowest)
        params = _without_idle_floor(model, rows, _least_squares(model, rows, params, lowest, huber=True))
        candidates.append((p, params, _rms(model, rows, params)))
    p, params, _ = min(candidates, key=lambda c: c[2])
    return p, params, tuple((c[0], c[2]) for c in candidates)


def _fit_streams(rows: tuple[ChipRow, ...], limit: float) -> tuple[float, float, float]:
    """``(L_s, t0_s, 1/W_s)`` of ``max(L_s, t0_s + B / W_s)`` fitted to the copies and adds."""
    floor = _small_work_time(rows)
    top = sorted(rows, key=lambda r: r.bytes)[len(rows) * 2 // 3 :]
    v = max(1 / _median([r.bytes / r.median_s for r in top]), limit)
    start = (floor, 0.5 * floor, v)
    lowest = (0.0, 0.0, limit)
    params = _least_squares(_stream_time, rows, start, lowest)
    floor, t0, v = _without_idle_floor(
        _stream_time, rows, _least_squares(_stream_time, rows, params, lowest, huber=True)
    )
    return floor, t0, v


def _without_idle_floor(model, rows, params):
    """``params`` with the floor (the first) at 0 when the rows do not show one: no row is held up by
    it, so that its fitted value would only be where the search left it, not a measurement."""
    none = (0.0, *params[1:])
    return none if _rms(model, rows, none) <= _rms(model, rows, params) * (1 + 1e-6) else params


def _matmul_time(params, row: ChipRow, p: int | None):
    """``max(L, t0 + N(F·u, B·v))`` and its gradient in ``(L, t0, u, v)``."""
    floor, t0, u, v = params
    n, da, db = _work(row.flops * u, row.bytes * v, p)
    if floor > t0 + n:
        return floor, (1.0, 0.0, 0.0, 0.0)
    return t0 + n, (0.0, 1.0, row.flops * da, row.bytes * db)


def _stream_time(params, row: ChipRow):
    """``max(L_s, t0_s + B·v)`` and its gradient in ``(L_s, t0_s, v)``."""
    floor, t0, v = params
    timed = t0 + row.bytes * v
    if floor > timed:
        return floor, (1.0, 0.0, 0.0)
    return timed, (0.0, 1.0, float(row.bytes))


def _held_out(rows: tuple[ChipRow, ...], p: int | None, params, limits) -> dict[int, float]:
    """Each matmul's relative error (by line) when the rows of its weight shape ``(k, n)`` are left out of
    the fit (same ``p``) and predicted; empty when the file has one weight shape."""
    shapes = sorted({(r.k, r.n) for r in rows})
    if len(shapes) < 2:
        return {}
    out = {}
    for shape in shapes:
        kept = tuple(r for r in rows if (r.k, r.n) != shape)
        if len(kept) < 2:
            continue
        _, fitted, _ = _fit_matmuls(kept, limits, (p,))
        for r in rows:
            if (r.k, r.n) == shape:
                t, _ = _matmul_time(fitted, r, p)
                out[r.line] = (t - r.median_s) / r.median_s
    return out


def _twins(rows: tuple[ChipRow, ...]) -> tuple[ChipRow, ChipRow] | None:
    """The two matmuls with the same FLOPs and bytes whose times are furthest apart (by ratio)."""
    groups: dict[tuple[int, int], list[ChipRow]] = {}
    for r in rows:
        groups.setdefault((r.flops, r.bytes), []).append(r)
    best: tuple[float, ChipRow, ChipRow] | None = None
    for group in groups.values():
        if len(group) > 1:
            slow = max(group, key=lambda r: r.median_s)
            fast = min(group, key=lambda r: r.median_s)
            ratio = slow.median_s / fast.median_s
            if best is None or ratio > best[0]:
                best = (ratio, fast, slow)
    return None if best is None else (best[1], best[2])


def _first_guess(rows: tuple[ChipRow, ...], limits: tuple[float, float]) -> tuple[float, float, float, float]:
    """``(L, t0, 1/C', 1/W')`` from the small work (the floor and fixed cost) and the large work (rates)."""
    floor = _small_work_time(rows)
    by_flops = sorted(rows, key=lambda r: r.flops)
    top = by_flops[len(by_flops) * 2 // 3 :]
    flops = _median([r.flops / r.median_s for r in top if r.flops]) if any(r.flops for r in top) else 1.0
    bottom = by_flops[: max(1, len(by_flops) // 3)]
    bandwidth = _median([r.bytes / r.median_s for r in bottom])
    return floor, 0.5 * floor, max(1 / max(flops, 1.0), limits[0]), max(1 / max(bandwidth, 1.0), limits[1])


def _small_work_time(rows: tuple[ChipRow, ...]) -> float:
    """The median time of the rows within :data:`_SMALL` of the fastest one: the first guess of a floor."""
    fastest = min(r.median_s for r in rows)
    return _median([r.median_s for r in rows if r.median_s <= _SMALL * fastest])


def _work(a: float, b: float, p: int | None) -> tuple[float, float, float]:
    """``N = (a^p + b^p)^(1/p)`` and its derivatives in ``a`` and ``b`` (square roots only: exact rounding)."""
    if p is None:
        return (a, 1.0, 0.0) if a >= b else (b, 0.0, 1.0)
    if p == 1:
        return a + b, 1.0, 1.0
    if p == 2:
        n = math.sqrt(a * a + b * b)
        return (n, a / n, b / n) if n > 0 else (0.0, 0.0, 0.0)
    if p == 4:
        n = math.sqrt(math.sqrt(a * a * a * a + b * b * b * b))
        if n == 0:
            return 0.0, 0.0, 0.0
        ra, rb = a / n, b / n
        return n, ra * ra * ra, rb * rb * rb
    raise AssertionError(f"no exact root for p = {p}")  # pragma: no cover - OVERLAPS holds 1, 2, 4, None


def _residuals(model, rows, params):
    out = []
    for row in rows:
        t, grad = model(params, row)
        out.append(((t - row.median_s) / row.median_s, tuple(g / row.median_s for g in grad)))
    return out


def _rms(model, rows, params) -> float:
    res = _residuals(model, rows, params)
    return math.sqrt(sum(r * r for r, _ in res) / len(res))


def _least_squares(model, rows, start, lowest, *, huber: bool = False):
    """Levenberg–Marquardt on ``Σ w·((model - t) / t)²`` over the parameters, each scaled by its start and
    kept at or above ``lowest``; ``huber`` weighs each row by Huber's rule from the start's residuals.
    ``model(params, row)`` gives the time and its gradient."""
    size = len(start)
    scale = [max(abs(s), 1e-300) for s in start]
    floor = [lowest[i] / scale[i] for i in range(size)]
    x = [1.0] * size
    weights = [1.0] * len(rows)
    if huber:
        weights = [1.0 if abs(r) <= _HUBER else _HUBER / abs(r) for r, _ in _residuals(model, rows, start)]

    def params(y):
        return tuple(y[i] * scale[i] for i in range(size))

    def cost(y):
        return sum(w * r * r for w, (r, _) in zip(weights, _residuals(model, rows, params(y)), strict=True))

    current = cost(x)
    damping = 1e-3
    for _ in range(200):
        res = _residuals(model, rows, params(x))
        jtj = [[0.0] * size for _ in range(size)]
        jtr = [0.0] * size
        for w, (r, grad) in zip(weights, res, strict=True):
            g = [grad[i] * scale[i] for i in range(size)]
            for i in range(size):
                jtr[i] += w * g[i] * r
                for j in range(size):
                    jtj[i][j] += w * g[i] * g[j]
        improved = False
        while damping < 1e12:
            a = [
                [jtj[i][j] + (damping * max(jtj[i][i], 1e-12) if i == j else 0.0) for j in range(size)]
                for i in range(size)
            ]
            step = _solve(a, [-g for g in jtr])
            trial = [max(x[i] + step[i], floor[i]) for i in range(size)] if step is not None else None
            if trial is not None and all(trial[i] > 0 for i in range(2, size)):
                value = cost(trial)
                if value < current:
                    gain = current - value
                    x, current = trial, value
                    damping = max(damping / 3, 1e-12)
                    improved = gain > 1e-13 * max(current, 1e-300)
                    break
            damping *= 4
        if not improved:
            break
    return params(x)


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting on a small square system (None if singular)."""
    size = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(m[r][col]))
        if m[pivot][col] == 0:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, size):
            factor = m[r][col] / m[col][col]
            for c in range(col, size + 1):
                m[r][c] -= factor * m[col][c]
    out = [0.0] * size
    for r in reversed(range(size)):
        out[r] = (m[r][size] - sum(m[r][c] * out[c] for c in range(r + 1, size))) / m[r][r]
    return out


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _rounded(value: float) -> str:
    """A fitted figure as text with 4 significant digits (what the hardware file writes); 0 as ``0``."""
    if value <= 0:
        return "0"
    mantissa, exponent = f"{max(value, 1e-30):.3e}".split("e")
    return f"{mantissa}e{int(exponent)}"


# -- the hardware file ------------------------------------------------------------------------------------


def chip_hardware_file(fit: ChipFit, *, name: str | None = None) -> str:
    """The hardware file (TOML) of a chip fit: the base preset (its data sheet, the bound) and the
    ``[attained]`` rates beside it, with the measurement's provenance (see
    :func:`~symshard.machines.presets.load_hardware`).

    Raises:
        UsageError: the base is not a preset (a hardware file cannot be a base here yet).
    """
    base = fit.base
    if base.name not in HARDWARE or HARDWARE[base.name] != base:
        raise UsageError(
            say("--chip calibrates a preset's chip, and '{name}' is not one", name=base.name),
            hint=say("give the preset of the chip measured, e.g. --hw h200 (see symshard hardware)"),
        )
    attained = fit.hardware.attained
    assert attained is not None
    shown = name or f"{base.name}-measured"
    lines = [
        f"# {base.label} calibrated from measurements of one chip: {attained.file}, {attained.rows} rows",
        "# a matmul is expected to take max(floor, t0 + (Tc^p + Tm^p)^(1/p)), Tc = F/flops, Tm = B/hbm_bandwidth",
        "# (p = 'max': the larger); a copy or add max(stream_floor, stream_overhead + B/stream_bandwidth);",
        "# the bound stays the data sheet's max(F/C, B/W_hbm)",
        "[hardware]",
        f"name = {_toml(shown)}",
        f"label = {_toml(base.label + ', measured')}",
        f"base = {_toml(base.name)}",
        "",
        "[attained]",
        f"file = {_toml(attained.file)}",
        f"sha256 = {_toml(attained.sha256)}",
        f"device = {_toml(attained.device)}",
        f"date = {_toml(attained.date)}",
        f"method = {_toml(attained.method)}",
        f"rows = {attained.rows}",
    ]
    for f in fit.fits:
        r = f.rates
        lines += [
            "",
            f"[attained.{r.dtype}]",
            f"flops = {_toml(_rounded(float(r.flops)))}",
            f"hbm_bandwidth = {_toml(_rounded(float(r.hbm_bandwidth)))}",
            f"kernel_overhead = {_toml(_rounded(float(r.kernel_overhead)))}",
            f"overlap = {r.overlap if r.overlap is not None else _toml('max')}",
        ]
        if r.floor != 0:
            lines.append(f"floor = {_toml(_rounded(float(r.floor)))}")
        if r.has_streams:
            lines += [
                f"stream_bandwidth = {_toml(_rounded(float(r.stream_bandwidth)))}",  # type: ignore[arg-type]
                f"stream_overhead = {_toml(_rounded(float(r.stream_overhead)))}",  # type: ignore[arg-type]
                f"stream_floor = {_toml(_rounded(float(r.stream_floor)))}",  # type: ignore[arg-type]
            ]
    return "\n".join(lines) + "\n"


def _toml(text: str) -> str:
    """A TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'

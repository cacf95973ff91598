"""What ``symshard calibrate --chip`` and ``symshard measure`` print: a chip's attained rates and their errors.

For each dtype: the attained FLOP/s, HBM bandwidth and fixed cost per kernel, each beside the data
sheet's peak it falls short of, the overlap ``p`` chosen and how the others did; then each class of rows
(matmuls by time, copies and adds by size) with its median and worst relative error; then whether the
data sheet's bound held below every measured time.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from ..algebra.symbols import C, W_hbm
from ..algebra.units import format_bytes, format_seconds
from ..costs.kernels import kernel_time
from ..i18n import keyed, sentence
from . import text

if TYPE_CHECKING:
    from ..costs.chipfit import ChipFit
    from ..costs.measure import Sweep

ENGLISH: dict[str, str] = {
    "cli.chip.head": "{chip}, calibrated from {file}: {rows} {rows:row|rows}, {dtypes}",
    "cli.chip.model": "model",
    "cli.chip.model_value": "matmul max(L, t0 + (Tc^p + Tm^p)^(1/p)), Tc = F/C', Tm = B/W'; copy and add "
    "max(L_s, t0_s + B/W_s); bound max(F/C, B/W_hbm)",
    "cli.chip.rates": "C' = {flops} ({flops_share} of C), W' = {bandwidth} ({bandwidth_share} of W_hbm), "
    "t0 = {overhead}, L = {floor}, p = {overlap}",
    "cli.chip.streams": "  copies and adds: W_s = {bandwidth} ({bandwidth_share} of W_hbm), t0_s = {overhead}, L_s = {floor}",
    "cli.chip.tried": "  p tried on the matmuls (rms error): {tried}",
    "cli.chip.held_out": "  held out (each weight shape left out of the fit, then predicted): matmuls over 100 µs within "
    "{worst}, median {median}; every matmul within {every}",
    "cli.chip.twins": "  same FLOPs and bytes, different times: {fast} {fast_time}, {slow} {slow_time}: no model of FLOPs "
    "and bytes comes closer than {limit} to both",
    "cli.chip.provenance": "provenance",
    "cli.chip.provenance_value": "sha256 {sha256}, device {device}, date {date}, timing: {method}",
    "cli.chip.unknown": "not given",
    "cli.chip.bound": "bound",
    "cli.chip.bound_held": "the data sheet's bound is at or below every measured time ({rows} {rows:row|rows})",
    "cli.chip.bound_broken": "the data sheet's bound is above {count} measured {count:time|times}",
    "cli.chip.columns": "dtype  class                  rows   median error   worst error",
    "cli.chip.wrote": "wrote {path}: use it with --hw {path}",
    "cli.measure.head": "measured {kernels} {kernels:kernel|kernels} on {device} ({platform}, JAX {version}) in {seconds} s",
    "cli.measure.columns": "dtype  kernels   best matmul        best copy or add",
    "cli.measure.skipped": "not measured (the backend cannot run it): {dtypes}",
    "cli.measure.wrote": "wrote {path} ({columns})",
    "cli.measure.next": "next: symshard calibrate --chip {path} --hw CHIP --device-name {device} --method {method} "
    "--out chip.toml",
}
"""The English of this module's words by key; other languages are in the catalogue."""

_WORDS = {**text.ENGLISH, **ENGLISH}


def _say(key: str, language: str, **values: object) -> str:
    return keyed(_WORDS, key, language, **values)


def _percent(x: float, signed: bool = False) -> str:
    return f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"


def _share(value, peak) -> str:
    return f"{100 * float(value) / float(peak):.0f}%" if peak else "?"


def _rate(value: object, unit: str) -> str:
    """A rate with an SI prefix: ``759 TFLOP/s``, ``4.66 TB/s``."""
    x = float(value)  # type: ignore[arg-type]
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def _worst(errors: tuple[float, ...]) -> float:
    return max(abs(e) for e in errors)


def _median_abs(errors: tuple[float, ...]) -> float:
    ordered = sorted(abs(e) for e in errors)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _shape(row) -> str:
    return f"[{row.m}, {row.k}] x [{row.k}, {row.n}]"


def _overlap(p: int | None) -> str:
    return "max" if p is None else str(p)


def _band(op: str, band: str) -> str:
    shown = band.replace("us", " µs").replace("ms", " ms").replace("MiB", " MiB").replace("-", " to ")
    return f"{op} {shown}"


def chip_fit_report(fit: ChipFit, written: Path, shown_out: str, language: str = "en") -> tuple[str, dict]:
    """The text and the JSON-ready data of a chip fit; the hardware file it wrote is ``written``,
    shown as ``shown_out`` (as the user gave it)."""
    lang = language
    attained = fit.hardware.attained
    assert attained is not None
    head = _say("cli.chip.head", lang, chip=fit.base.label, file=attained.file, rows=attained.rows,
                dtypes=", ".join(attained.dtypes))  # fmt: skip
    rows = [(_say("cli.chip.model", lang), _say("cli.chip.model_value", lang))]
    dtypes = {}
    for f in fit.fits:
        r = f.rates
        peaks = fit.base.constants(r.dtype)
        rows.append(
            (r.dtype, _say("cli.chip.rates", lang, flops=_rate(r.flops, "FLOP/s"),
                           flops_share=_share(r.flops, peaks.get(C)), bandwidth=_rate(r.hbm_bandwidth, "B/s"),
                           bandwidth_share=_share(r.hbm_bandwidth, peaks.get(W_hbm)),
                           overhead=format_seconds(r.kernel_overhead), floor=format_seconds(r.floor) if r.floor else "—",
                           overlap=_overlap(r.overlap)))
        )  # fmt: skip
        if r.has_streams:
            rows.append(("", _say("cli.chip.streams", lang, bandwidth=_rate(r.stream_bandwidth, "B/s"),
                                  bandwidth_share=_share(r.stream_bandwidth, peaks.get(W_hbm)),
                                  overhead=format_seconds(r.stream_overhead), floor=format_seconds(r.stream_floor))))  # fmt: skip
        tried = ", ".join(f"{_overlap(p)}: {_percent(rms)}" for p, rms in f.candidates)
        rows.append(("", _say("cli.chip.tried", lang, tried=tried)))
        held, large = f.held_out_errors(), f.held_out_errors(1e-4)
        if held:
            rows.append(("", _say("cli.chip.held_out", lang, worst=_percent(_worst(large)) if large else "-",
                                  median=_percent(_median_abs(large)) if large else "-", every=_percent(_worst(held)))))  # fmt: skip
        if f.twins is not None and f.twin_limit > 0:
            fast, slow = f.twins
            rows.append(("", _say("cli.chip.twins", lang, fast=_shape(fast), fast_time=format_seconds(fast.median_s),
                                  slow=_shape(slow), slow_time=format_seconds(slow.median_s),
                                  limit=_percent(f.twin_limit))))  # fmt: skip
        dtypes[r.dtype] = {
            "flops": float(r.flops),
            "hbm_bandwidth": float(r.hbm_bandwidth),
            "kernel_overhead_s": float(r.kernel_overhead),
            "overlap": r.overlap if r.overlap is not None else "max",
            "floor_s": float(r.floor),
            "stream": {"bandwidth": float(r.stream_bandwidth), "overhead_s": float(r.stream_overhead),  # type: ignore[arg-type]
                       "floor_s": float(r.stream_floor)} if r.has_streams else None,  # type: ignore[arg-type]
            "held_out": {"worst_error_over_100us": _worst(large) if large else None,
                         "median_error_over_100us": _median_abs(large) if large else None,
                         "worst_error": _worst(held) if held else None},
            "twins": {"lines": [t.line for t in f.twins], "limit": f.twin_limit} if f.twins is not None else None,
            "flops_share_of_peak": float(r.flops / peaks[C]) if C in peaks else None,
            "bandwidth_share_of_peak": float(r.hbm_bandwidth / peaks[W_hbm]) if W_hbm in peaks else None,
            "rms_error": f.rms_error,
            "tried": [{"overlap": _overlap(p), "rms_error": rms} for p, rms in f.candidates],
            "classes": [
                {"op": c.op, "band": c.band, "rows": c.rows, "median_error": c.median_error,
                 "worst_error": c.worst_error}
                for c in f.classes
            ],
        }  # fmt: skip
    unknown = _say("cli.chip.unknown", lang)
    rows.append((_say("cli.chip.provenance", lang), _say("cli.chip.provenance_value", lang,
                 sha256=attained.sha256[:16] + "…", device=attained.device or unknown, date=attained.date or unknown,
                 method=attained.method or unknown)))  # fmt: skip
    if fit.above_bound:
        rows.append((_say("cli.chip.bound", lang), _say("cli.chip.bound_broken", lang, count=len(fit.above_bound))))
    else:
        rows.append((_say("cli.chip.bound", lang), _say("cli.chip.bound_held", lang, rows=attained.rows)))
    table = [_say("cli.chip.columns", lang)]
    for f in fit.fits:
        for c in f.classes:
            table.append(
                f"{f.rates.dtype:<6} {_band(c.op, c.band):<22} {c.rows:>4}   {_percent(c.median_error):>12}"
                f"   {_percent(c.worst_error, signed=True):>11}"
            )
    notes = [_say("cli.note", lang, note=sentence(n, lang)) for n in fit.notes]
    shown = "\n".join([head, text.table(rows), *notes, "", *table, "", _say("cli.chip.wrote", lang, path=shown_out)])
    per_row = []
    for f in fit.fits:
        for row, expected, error, held_error in zip(f.rows, f.expected, f.errors, f.held_out, strict=True):
            bound = kernel_time(row.flops, row.bytes, row.dtype, fit.base).time
            per_row.append({
                "line": row.line, "op": row.op, "dtype": row.dtype, "m": row.m, "k": row.k, "n": row.n,
                "bytes": row.bytes, "flops": row.flops, "measured_s": row.median_s, "best_s": row.best_s,
                "expected_s": expected, "bound_s": float(bound), "error": error, "held_out_error": held_error,
            })  # fmt: skip
    data = {
        "file": attained.file,
        "sha256": attained.sha256,
        "base": fit.base.name,
        "device": attained.device,
        "date": attained.date,
        "method": attained.method,
        "rows": attained.rows,
        "model": "matmul: max(L, t0 + (Tc^p + Tm^p)^(1/p)), Tc = F/C', Tm = B/W'; copy, add: max(L_s, t0_s + B/W_s)",
        "dtypes": dtypes,
        "bound_above_measured": [r.line for r in fit.above_bound],
        "notes": [sentence(n, lang) for n in fit.notes],
        "measurements": per_row,
        "hardware_file": str(written),
    }
    return shown, data


def measure_method(sweep: Sweep) -> str:
    """How ``symshard measure`` took its times, in the words ``calibrate --method`` records (English: a
    provenance, like the device's name, not a sentence of the report)."""
    from ..costs.measure import REPEAT

    return (f"symshard measure, JAX {sweep.jax_version} on {sweep.platform}: {REPEAT} runs back to back per timing, "
            f"median and best of {sweep.samples or '?'}")  # fmt: skip


def measure_report(sweep: Sweep, written: Path, shown_out: str, language: str = "en") -> tuple[str, dict]:
    """The text and the JSON-ready data of a measurement sweep, written to ``written``."""
    from ..costs.measure import COLUMNS

    lang = language
    method = measure_method(sweep)
    head = _say("cli.measure.head", lang, kernels=len(sweep.rows), device=sweep.device, platform=sweep.platform,
                version=sweep.jax_version, seconds=f"{sweep.seconds:.1f}")  # fmt: skip
    table = [_say("cli.measure.columns", lang)]
    summary = {}
    for dtype in dict.fromkeys(r.dtype for r in sweep.rows):
        mine = [r for r in sweep.rows if r.dtype == dtype]
        matmul = max((r.flops / r.median_s for r in mine if r.op == "matmul"), default=0.0)
        stream = max((r.bytes / r.median_s for r in mine if r.op != "matmul"), default=0.0)
        summary[dtype] = {"kernels": len(mine), "best_matmul_flops": matmul, "best_stream_bandwidth": stream}
        table.append(
            f"{dtype:<6} {len(mine):>7}   {_rate(matmul, 'FLOP/s'):<18} {_rate(stream, 'B/s') if stream else '-'}"
        )
    lines = [head, "", *table]
    if sweep.skipped:
        lines.append(_say("cli.measure.skipped", lang, dtypes=", ".join(sweep.skipped)))
    lines += ["", _say("cli.measure.wrote", lang, path=shown_out, columns=",".join(COLUMNS)),
              _say("cli.measure.next", lang, path=shlex.quote(shown_out), device=shlex.quote(sweep.device),
                   method=shlex.quote(method))]  # fmt: skip
    data = {
        "device": sweep.device,
        "platform": sweep.platform,
        "jax_version": sweep.jax_version,
        "method": method,
        "seconds": sweep.seconds,
        "compile_seconds": sweep.compile_seconds,
        "kernels": len(sweep.rows),
        "skipped": list(sweep.skipped),
        "dtypes": summary,
        "largest_bytes": max((r.bytes for r in sweep.rows), default=0),
        "largest_bytes_shown": format_bytes(max((r.bytes for r in sweep.rows), default=0)),
        "file": str(written),
    }
    return "\n".join(lines), data

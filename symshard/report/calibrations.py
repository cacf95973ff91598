"""What ``symshard calibrate`` prints: a cost model fitted to nccl-tests measurements.

The fit (alpha + beta*S by least squares on relative error), the bandwidth and latency it implies
with the formula that turns beta and alpha into them, the constants kept from the base chip, the
residuals, and every measured row beside its fitted time and bus bandwidth.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.symbols import latex
from ..algebra.units import format_number, format_seconds, json_value, pretty, sig
from ..i18n import keyed, sentence
from . import text

if TYPE_CHECKING:
    from ..costs.calibrate import Calibration, Run

ENGLISH: dict[str, str] = {
    "cli.calibrate.head": "{collective} over {ranks} {ranks:rank|ranks}, {per_node} per node ({nodes} {nodes:node|nodes}), {rows} {rows:row|rows} of {file}",
    "cli.calibrate.model": "model",
    "cli.calibrate.fit": "fit",
    "cli.calibrate.fit_value": "t(S) = alpha + beta*S, least squares on relative error: alpha = {alpha}, beta = {beta} s/B",
    "cli.calibrate.bandwidth": "bandwidth",
    "cli.calibrate.bandwidth_value": "{symbol} = {formula} = {value} B/s per GPU{node}",
    "cli.calibrate.per_node": " ({value} B/s per node)",
    "cli.calibrate.latency": "latency",
    "cli.calibrate.latency_value": "{symbol} = {formula} = {value}",
    "cli.calibrate.kept": "kept",
    "cli.calibrate.residuals": "residuals",
    "cli.calibrate.residuals_value": "rms {rms}, largest {largest} at {size}",
    "cli.calibrate.columns": "size (B)       measured     fitted   residual   busbw (GB/s) measured  fitted",
    "cli.calibrate.wrote": "wrote {path}: use it with --hw {path} (collectives are then priced with the {model} "
    "model, the one fitted)",
}
"""The English of this module's words by key; other languages are in the catalogue."""

_WORDS = {**text.ENGLISH, **ENGLISH}

_S = sympy.Symbol("S", positive=True)
"""The message size in the fitted formula t(S)."""


def _say(key: str, language: str, **values: object) -> str:
    return keyed(_WORDS, key, language, **values)


def _rational(x) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator)


def calibration_report(
    cal: Calibration, run: Run, file: Path, written: Path, shown_out: str, language: str = "en"
) -> tuple[str, dict]:
    """The text and the JSON-ready data of ``cal``, fitted to ``run`` (read from ``file``); the hardware
    file it wrote is ``written``, shown as ``shown_out`` (as the user gave it)."""
    lang = language
    chip = cal.hardware
    bw_symbol = cal.bandwidth_level.bandwidth
    lat_symbol = cal.latency_level.latency
    level_time = next(lv.bandwidth_time for lv in cal.levels if lv.fabric is cal.bandwidth_level)
    coefficient = as_expr(level_time / _S).xreplace({bw_symbol: 1})
    w = cal.fitted[bw_symbol]
    node = ""
    if cal.bandwidth_level.value == "dcn":
        node = _say("cli.calibrate.per_node", lang, value=format_number(w * cal.per_node))
    rows = [
        (_say("cli.calibrate.model", lang), "t(S) = " + pretty(cal.formula)),
        (_say("cli.calibrate.fit", lang), _say("cli.calibrate.fit_value", lang,
                                              alpha=format_seconds(_rational(cal.alpha)), beta=sig(_rational(cal.beta)))),
        (_say("cli.calibrate.bandwidth", lang), _say("cli.calibrate.bandwidth_value", lang, symbol=bw_symbol,
                                                    formula=f"({pretty(coefficient)})/beta", value=format_number(w),
                                                    node=node)),
    ]  # fmt: skip
    if lat_symbol in cal.fitted:
        lat = as_expr(cal.formula).as_independent(_S)[0]
        steps = lat.coeff(lat_symbol)
        rest = pretty(lat - steps * lat_symbol)
        formula = f"(alpha - ({rest}))/{steps}" if steps != 1 else f"alpha - ({rest})"
        rows.append((_say("cli.calibrate.latency", lang), _say("cli.calibrate.latency_value", lang, symbol=lat_symbol,
                     formula=formula, value=format_seconds(cal.fitted[lat_symbol]))))  # fmt: skip
    kept = ", ".join(
        f"{k} = {format_seconds(v) if str(k).startswith('T_') else format_number(v)}"
        for k, v in sorted(cal.kept.items(), key=lambda kv: str(kv[0]))
    )
    rows.append((_say("cli.calibrate.kept", lang), f"{kept} ({chip.label.removesuffix(', calibrated')})"))
    worst = max(range(len(cal.residuals)), key=lambda i: abs(cal.residuals[i]))
    rows.append((_say("cli.calibrate.residuals", lang), _say("cli.calibrate.residuals_value", lang,
                 rms=f"{cal.rms_residual:.1%}", largest=f"{float(cal.residuals[worst]):+.1%}",
                 size=format_number(cal.samples[worst].size))))  # fmt: skip
    nodes = cal.ranks // cal.per_node
    head = _say("cli.calibrate.head", lang, collective=cal.collective, ranks=cal.ranks, per_node=cal.per_node,
                nodes=nodes, rows=len(cal.samples), file=file.name)  # fmt: skip
    table = [_say("cli.calibrate.columns", lang)]
    for s_, f_, r_, b_ in zip(cal.samples, cal.fitted_times, cal.residuals, cal.busbw, strict=True):
        measured = f"{float(s_.busbw) / 1e9:.2f}" if s_.busbw is not None else "-"
        table.append(
            f"{s_.size:>12}  {format_seconds(_rational(s_.time)):>11}  {format_seconds(_rational(f_)):>9}  "
            f"{float(r_):>+8.1%}   {measured:>21}  {float(b_) / 1e9:>6.2f}"
        )
    notes = [_say("cli.note", lang, note=sentence(n, lang)) for n in cal.notes]
    shown = "\n".join(
        [
            head,
            text.table(rows),
            *notes,
            "",
            *table,
            "",
            _say("cli.calibrate.wrote", lang, path=shown_out, model=cal.model),
        ]
    )
    data = {
        "file": str(file),
        "format": run.format,
        "collective": cal.collective,
        "ranks": cal.ranks,
        "per_node": cal.per_node,
        "formula": pretty(cal.formula),
        "formula_latex": latex(cal.formula),
        "alpha_s": float(cal.alpha),
        "beta_s_per_byte": float(cal.beta),
        "bandwidth_level": cal.bandwidth_level.value,
        "latency_level": cal.latency_level.value,
        "fitted": {str(k): json_value(v) for k, v in cal.fitted.items()},
        "kept": {str(k): json_value(v) for k, v in cal.kept.items()},
        "rms_residual": cal.rms_residual,
        "rows": [
            {
                "bytes": s_.size,
                "time_s": float(s_.time),
                "fitted_s": float(f_),
                "residual": float(r_),
                "busbw_measured": float(s_.busbw) if s_.busbw is not None else None,
                "busbw_fitted": float(b_),
            }
            for s_, f_, r_, b_ in zip(cal.samples, cal.fitted_times, cal.residuals, cal.busbw, strict=True)
        ],
        "notes": list(cal.notes),
        "hardware_file": str(written),
        "collective_model": cal.model,
    }
    return shown, data

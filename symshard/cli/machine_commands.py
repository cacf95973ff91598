"""The commands about the machine: ``hardware`` (the chips), ``collective`` (one collective's cost),
``calibrate`` (a hardware file from nccl-tests output or a chip's measurements) and ``measure`` (those
measurements, on this machine's accelerator).

Examples:
    >>> from symshard.cli import main
    >>> main(["collective", "AllGather_X(A[I_X, J])", "--mesh", "X=8"])  # doctest: +ELLIPSIS
    AllGather_X(A[I_X, J]) -> A[I, J]
    model      book
    ...
    0
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..costs.collectives import parse_collective
from ..errors import UsageError
from ..machines.presets import hardware
from ..messages import say
from ..outputs.files import write_signed_file
from .options import chip_from, cost_model_from, mesh_from, set_aside_unused_sizes
from .progress import Progress

__all__ = ["run_calibrate", "run_collective", "run_hardware", "run_measure"]


# -- hardware --------------------------------------------------------------------------------------


def run_hardware(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.chips import chip_report, chips_report

    return chip_report(hardware(args.name), args.language) if args.name else chips_report(args.language)


# -- collective ------------------------------------------------------------------------------------


def run_collective(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.collectives import collective_report

    expr = parse_collective(args.collective)
    chip = chip_from(args)
    axes = [*expr.operand.axes, *sorted(expr.operand.unreduced), *expr.op.axes]
    mesh = mesh_from(args, list(dict.fromkeys(axes)), chip)
    set_aside_unused_sizes(args, expr.operand.dim_names, str(expr))
    model = cost_model_from(args, chip)
    cost = expr.cost(mesh, args.shape, dtype=args.dtype, hardware=chip, model=model)
    sym = expr.cost(mesh.symbolic(), None, dtype=args.dtype, model=model)
    return collective_report(expr, mesh, cost, sym, chip, args.language)


# -- calibrate -------------------------------------------------------------------------------------


def run_calibrate(args: argparse.Namespace) -> tuple[str, dict]:
    from ..costs.calibrate import MAX_BYTES, calibrate, hardware_file, read_nccl_tests
    from ..inputs import read_text_file
    from ..report.calibrations import calibration_report

    if args.chip:
        return _calibrate_chip(args)
    if not args.file:
        raise UsageError(
            say("calibrate needs nccl-tests output, or --chip and a measurement file"),
            hint=say("e.g. symshard calibrate allreduce.txt --collective allreduce --ranks 16, or symshard "
                     "calibrate --chip measured.csv --hw h100"),
        )  # fmt: skip
    args.hw = args.hw or "a100"
    path = Path(args.file)
    text = read_text_file(path, what=say("the nccl-tests output"), max_bytes=MAX_BYTES)
    run = read_nccl_tests(text, in_place=args.in_place)
    cal = calibrate(
        run, args.collective, ranks=args.ranks, per_node=args.per_node, base=args.hw, min_bytes=args.min_bytes,
        max_bytes=args.max_bytes, level=args.level,
    )  # fmt: skip
    out = write_signed_file(
        args.out, hardware_file(cal, name=args.name, source=path.name), "symshard calibrate", force=args.force
    )
    return calibration_report(cal, run, path, out, args.out, args.language)


def _calibrate_chip(args: argparse.Namespace) -> tuple[str, dict]:
    from ..costs.chipfit import chip_hardware_file, fit_chip, read_chip_measurements
    from ..report.chipfits import chip_fit_report

    if args.file:
        raise UsageError(
            say("--chip fits a measurement file; '{file}' would be nccl-tests output", file=args.file),
            hint=say("calibrate the network and the chip in two runs"),
        )
    if not args.hw:
        raise UsageError(
            say("--chip needs the chip that was measured: its data sheet stays the bound"),
            hint=say("give its preset, e.g. --hw h200 (see symshard hardware)"),
        )
    base = hardware(args.hw)
    measurements = read_chip_measurements(args.chip)
    fit = fit_chip(
        measurements, base, device=args.device_name or "", date=_measurement_date(args.date),
        method=_measurement_method(args.method),
    )  # fmt: skip
    text = chip_hardware_file(fit, name=args.name)
    out = write_signed_file(args.out, text, "symshard calibrate --chip", force=args.force)
    return chip_fit_report(fit, out, args.out, args.language)


METHOD_LIMIT = 200
"""The most characters ``--method`` records."""


def _measurement_method(given: str | None) -> str:
    """``--method`` as given, its ends trimmed: one line of printable text, at most :data:`METHOD_LIMIT`
    characters ('' when not given: not recorded)."""
    text = (given or "").strip()
    if len(text) > METHOD_LIMIT or any(not ch.isprintable() for ch in text):
        shown = text[:60] + ("…" if len(text) > 60 else "")  # (the error's one line shows a break as a space)
        raise UsageError(
            say("--method must be one line of at most {limit} printable {limit:character|characters}, got '{value}' "
                "({length} {length:character|characters})",
                limit=METHOD_LIMIT, value=shown, length=len(text)),
            hint=say("say in a few words how the times were taken, e.g. --method 'torch CUDA events, median of 30'"),
        )  # fmt: skip
    return text


def _measurement_date(given: str | None) -> str:
    """``--date`` as given (checked), else ``$SOURCE_DATE_EPOCH``'s day (UTC), else '' (not recorded):
    never today's date, so that the same file gives the same bytes on any day."""
    import datetime
    import os

    if given:
        try:
            return datetime.date.fromisoformat(given.strip()).isoformat()
        except ValueError:
            raise UsageError(
                say("--date {value} is not a date", value=given), hint=say("write it like 2026-11-20")
            ) from None
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date().isoformat()
        except (ValueError, OverflowError, OSError):
            raise UsageError(
                say("SOURCE_DATE_EPOCH={value} is not a number of seconds", value=epoch),
                hint=say("set it to seconds since 1970, e.g. 1764000000, or unset it"),
            ) from None
    return ""


# -- measure ---------------------------------------------------------------------------------------


def run_measure(args: argparse.Namespace) -> tuple[str, dict]:
    from ..algebra.units import parse_quantity
    from ..costs.measure import measure, measurements_csv
    from ..outputs.files import write_new_file
    from ..report.chipfits import measure_report

    out = Path(args.out)
    if out.exists() or out.is_symlink():  # refuse before the minute of work, not after
        write_new_file(out, "")
    max_bytes = None
    if args.max_bytes:
        try:
            value = parse_quantity(args.max_bytes, "B")
        except ValueError as err:
            raise UsageError(
                say("--max-bytes {value}: {why}", value=args.max_bytes, why=err.args[0] if err.args else str(err)),
                hint=say("write a size, e.g. --max-bytes 1GiB"),
            ) from None
        if value < 1:
            raise UsageError(
                say("--max-bytes {value} leaves nothing to measure", value=args.max_bytes),
                hint=say("allow at least a few MiB, e.g. --max-bytes 64MiB"),
            )
        max_bytes = int(value)
    dtypes = [d for d in (args.dtypes or "").split(",") if d.strip()] or None
    progress = Progress(args).counter("measure")
    sweep = measure(quick=args.quick, dtypes=dtypes, max_bytes=max_bytes, progress=progress)
    written = write_new_file(out, measurements_csv(sweep.rows))
    return measure_report(sweep, written, args.out, args.language)

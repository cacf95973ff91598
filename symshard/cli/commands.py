"""The ``symshard`` commands: each reads its options, calls the library and hands the result to
:mod:`symshard.report`, which words it.

Each function takes the parsed options and returns the text to print and the data ``--json`` prints;
:data:`COMMANDS` names them for the parser. Bad input raises a :class:`~symshard.errors.SymshardError`
that :func:`symshard.cli.main` prints as one line.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import sympy

from ..algebra.units import format_number
from ..costs.collectives import parse_collective
from ..costs.placement import place
from ..errors import HardwareError, TooLargeError, UsageError
from ..i18n import sentence
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware
from ..messages import Message, fill, say
from ..notation.parser import parse_array
from ..notation.sizes import parse_sizes
from ..outputs.files import write_signed_file
from ..outputs.folder import OutputFolder
from .parser import argument_parser
from .words import word as _say

if TYPE_CHECKING:  # the comparison is built lazily, in the command that needs it
    from ..planning.crossovers import Comparison


MAX_PRINTED = 10_000
"""The most strategies ``matmul`` prints with numbers (about 1.5 ms each in JSON)."""

MAX_PRINTED_SYMBOLIC = 1_000
"""The most strategies ``matmul`` prints with symbolic sizes: each one's formulas are worked out and written
(about 30 ms each in JSON, with their LaTeX)."""


def _budget(args: argparse.Namespace):
    from ..problems.budget import Budget

    return Budget.of(args.time_limit, args.memory_limit)


def _set_aside_unused_sizes(args: argparse.Namespace, dims: Sequence[str], context: str) -> None:
    """Drop ``--shape`` sizes of dims that ``context`` does not have (one shape serves several commands);
    :func:`main` prints a note naming them. With ``--strict`` they stay, and the library refuses them."""
    if not getattr(args, "shape", None) or getattr(args, "strict", False):
        return
    entries = parse_sizes(args.shape, what=say("shape"))
    unused = [name for name, _, _ in entries if name not in set(dims)]
    if unused:
        args.shape = ",".join(f"{name}={value}" for name, value, _ in entries if name not in unused) or None
        args.unused_sizes = (unused, context)


def _chip(args: argparse.Namespace) -> Hardware | None:
    chip = hardware(args.hw) if args.hw else None
    if args.hw_set:
        values = {}
        for name, value, span in parse_sizes(args.hw_set, what=say("hardware constants")):
            if value == "?":
                raise HardwareError(
                    say("hardware constant {name} has no value in '{text}'", name=name, text=args.hw_set),
                    text=args.hw_set,
                    span=span,
                    hint=say("write {name}=VALUE, e.g. W_hbm=3.4e12", name=name),
                )
            values[name] = value
        chip = (chip or Hardware("custom", "custom chip")).with_constants(values)
    return chip


def _cost_model(args: argparse.Namespace, chip: Hardware | None) -> str:
    """The collective cost model to price with: ``--model`` when given, else the one the hardware file was
    calibrated with (said in a note under the answer, and in the JSON), else the book's."""
    if args.model is not None:
        return args.model
    if chip is not None and chip.collective_model is not None:
        args.model_note = say(
            "collectives are priced with the {model} model, the one {hardware} was calibrated with "
            "(--model book for the chapter's formulas)",
            model=chip.collective_model,
            hardware=str(getattr(args, "hw", None) or chip.name),
        )
        args.model_from_hardware = chip.collective_model
        return chip.collective_model
    return "book"


def _mesh(args: argparse.Namespace, axes: Sequence[str], chip: Hardware | None) -> Mesh:
    topology = None
    if args.topology:
        topology = {name: value for name, value, _ in parse_sizes(args.topology, what=say("topology"))}
    if args.mesh:
        return Mesh(args.mesh, hardware=chip, topology=topology)
    return Mesh(dict.fromkeys(axes), hardware=chip, topology=topology)


# -- shard -----------------------------------------------------------------------------


def _shard(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.placements import placement_report

    array = parse_array(args.array)
    chip = _chip(args)
    mesh = _mesh(args, [*array.axes, *sorted(array.unreduced)], chip)
    _set_aside_unused_sizes(args, array.dim_names, str(array))
    p = place(array, mesh, args.shape, dtype=args.dtype)
    s = place(array, mesh.symbolic(), None, dtype=args.dtype)
    return placement_report(p, s, chip, args.language)


# -- collective -----------------------------------------------------------------------------


def _collective(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.collectives import collective_report

    expr = parse_collective(args.collective)
    chip = _chip(args)
    axes = [*expr.operand.axes, *sorted(expr.operand.unreduced), *expr.op.axes]
    mesh = _mesh(args, list(dict.fromkeys(axes)), chip)
    _set_aside_unused_sizes(args, expr.operand.dim_names, str(expr))
    model = _cost_model(args, chip)
    cost = expr.cost(mesh, args.shape, dtype=args.dtype, hardware=chip, model=model)
    sym = expr.cost(mesh.symbolic(), None, dtype=args.dtype, model=model)
    return collective_report(expr, mesh, cost, sym, chip, args.language)


# -- hardware --------------------------------------------------------------------------------


def _hardware(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.chips import chip_report, chips_report

    return chip_report(hardware(args.name), args.language) if args.name else chips_report(args.language)


# -- matmul, compare, best --------------------------------------------------------------------


def _matmul_mesh(args: argparse.Namespace, mm, chip: Hardware | None) -> Mesh:
    arrays = [mm.lhs, mm.rhs] + ([mm.out] if mm.out is not None else [])
    axes = [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))]
    return _mesh(args, list(dict.fromkeys(axes)), chip)


def _matmul(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul
    from ..planning.planner import plan
    from ..report.plans import plan_data, plan_text

    mm = matmul(args.matmul, outer=args.outer)
    chip = _chip(args)
    mesh = _matmul_mesh(args, mm, chip)
    _set_aside_unused_sizes(args, mm.dims, str(mm))
    how = args.comm_overlap
    every = bool(args.every)
    split = args.split
    model = _cost_model(args, chip)
    hbm = not args.no_hbm
    p = plan(mm, mesh, args.shape, dtype=args.dtype, hardware=chip, model=model, overlap=not args.serial,
             comm_overlap=how, all=every, split=split, hbm=hbm)  # fmt: skip
    if not p.numeric and chip is not None:
        # sizes are symbolic: keep C, W_ici, ... as symbols too, so the formulas stay readable (and compare,
        # which plans this way, numbers the strategies alike)
        p = plan(mm, mesh, args.shape, dtype=args.dtype, model=model, overlap=not args.serial, comm_overlap=how,
                 all=every, split=split, hbm=hbm)  # fmt: skip
    shown = len(p.strategies) if args.json or args.top == 0 else min(args.top, len(p.strategies))
    most = MAX_PRINTED if p.numeric else MAX_PRINTED_SYMBOLIC
    if shown > most:  # each strategy printed is its formulas worked out and written: refused before the work
        raise TooLargeError(
            say("printing {count} {count:strategy|strategies} of {matmul} is more than matmul prints ({limit})", count=f"{shown:,}",
                matmul=str(p.matmul), limit=f"{most:,}"),
            hint=say("print the first few as text with --top N (--json prints every one), or drop --all"),
        )  # fmt: skip
    if args.json:  # only what is printed is worked out: a long plan's formulas take a while to write
        return "", plan_data(p, args.language)
    text = plan_text(p, top=args.top, language=args.language, explain=args.explain)
    if chip is not None and not p.numeric:
        consts = ", ".join(f"{k} = {format_number(v)}" for k, v in chip.constants(p.dtype).items())
        text += f"\n{chip.label}{'：' if args.language == 'zh' else ': '}{consts}"
    return text, {}


def _verify(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul

    mm = matmul(args.matmul, outer=args.outer)
    if not args.mesh or not args.shape:
        raise UsageError(
            say("verify needs numbers: --mesh and --shape"), hint=say("e.g. --mesh X=4,Y=2 --shape I=64,J=64,K=64")
        )
    _set_aside_unused_sizes(args, mm.dims, str(mm))
    chip = hardware(args.hw) if args.hw else None
    mesh = Mesh(args.mesh, hardware=chip)  # the chip's wiring, as matmul --hw has it: one question, one ranking
    if not mesh.is_numeric:
        raise UsageError(
            say("verify needs every mesh size, not '{mesh}'", mesh=args.mesh), hint=say("e.g. --mesh X=4,Y=2")
        )
    from ..jax.runtime import configure_host_devices, require_jax

    configure_host_devices(max(8, int(mesh.devices)))  # only takes effect before JAX is imported
    require_jax()
    from ..jax.verification import verify
    from ..report.verifications import verification_text

    if args.sample is not None and args.execute not in ("all", "auto"):
        raise UsageError(
            say("--sample {count} draws from all strategies, but --run is {run}", count=args.sample, run=args.execute),
            hint=say("drop --run (or use --run all) with --sample"),
        )
    if args.sample is not None and args.sample < 1:
        raise UsageError(
            say("--sample {count} runs no strategy", count=args.sample), hint=say("sample at least 1, e.g. --sample 20")
        )
    progress = _verify_progress(args.language) if sys.stderr.isatty() and not args.json else None
    v = verify(
        mm,
        mesh,
        args.shape,
        dtype=args.dtype,
        hardware=chip,
        model=_cost_model(args, chip),
        run=args.execute,
        sample=args.sample,
        seed=args.seed,
        time_limit=args.time_limit,
        progress=progress,
    )
    if progress is not None:
        print(file=sys.stderr)
    data = v.to_json()
    if args.language != "en":
        data["language"] = args.language
        data[f"reason_{args.language}"] = sentence(v.reason, args.language)
        data[f"lowering_{args.language}"] = [sentence(n, args.language) for n in v.lowering]
    return verification_text(v, args.language), data


def _verify_progress(lang: str):
    """A progress line on stderr, rewritten in place: first what runs before any strategy (planning,
    XLA's compile, the search for its plan: seconds on a mesh of four axes), then the strategies run."""
    import time

    started = time.perf_counter()
    shown = [0.0]
    width = [0]

    def say(text: str) -> None:
        print("\r" + text.ljust(width[0]), end="", file=sys.stderr, flush=True)  # covers a longer line before
        width[0] = max(width[0], len(text))

    def show(done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - shown[0] < 0.2:  # at most five updates a second
            return
        shown[0] = now
        say(_say("cli.verify.progress", lang, done=f"{done:,}", total=f"{total:,}", seconds=f"{now - started:.0f}"))

    say(_say("cli.verify.planning", lang))
    return show


def _compare(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul
    from ..planning.crossovers import check_compared, compare
    from ..planning.planner import plan
    from ..report.plans import compare_data, compare_text, map_hint, pairs_hint

    mm = matmul(args.matmul, outer=args.outer)
    chip = _chip(args)
    mesh = _matmul_mesh(args, mm, chip)
    picked: list[int] | str | None = None
    if args.strategies and args.strategies.strip().lower() == "all":
        picked = "all"
    elif args.strategies:
        picked = []
        for part in args.strategies.split(","):
            if not part.strip().isdigit():
                raise UsageError(
                    say("--strategies takes strategy numbers, not '{value}'", value=part.strip()),
                    hint=say("e.g. --strategies 1,2 (numbers as listed by 'symshard matmul')"),
                )
            picked.append(int(part))
    _set_aside_unused_sizes(args, mm.dims, str(mm))
    # the plan matmul lists for the same options (symbolic, so the chip's constants stay symbols): the same
    # strategies, numbered alike in matmul, compare, --pairs, the map and the JSON
    options = dict(dtype=args.dtype, model=_cost_model(args, chip), overlap=not args.serial,
                   comm_overlap=args.comm_overlap, hbm=not args.no_hbm)  # fmt: skip
    if isinstance(picked, list):  # refused before any work: the plan, then every pair
        check_compared(str(mm), "explicit", len(picked))
    elif picked == "all":  # the listing is quick; the plan's winners are not
        check_compared(str(mm), "all", len(plan(mm, mesh, args.shape, all=True, **options).strategies))
    p = plan(mm, mesh, args.shape, **options)
    c = compare(p, args.solve_for, strategies=picked, hardware=chip, overlap=not args.serial)
    if args.json:  # only what is printed is worked out: writing every condition out takes a while
        text, data = "", compare_data(c, args.language)
    else:
        text, data = compare_text(c, language=args.language, pairs=args.pairs), {}
    if c.mode != "explicit" and not args.pairs:
        text += "\n" + pairs_hint(args.language)
    if args.map:
        text, data = _regime_map(args, c, text, data)
    elif len(c.best) >= 2:
        text += "\n" + map_hint(c, args.language)
    return text, data


def _regime_map(args: argparse.Namespace, c: Comparison, text: str, data: dict) -> tuple[str, dict]:
    from ..outputs.files import write_signed_file
    from ..render.regions import regime_map
    from ..report.plans import regime_map_line
    from .budget import hold

    names = [n.strip() for n in args.map.split(",")]
    if len(names) != 2 or not all(names):
        raise UsageError(
            say("--map takes two symbols, not '{value}'", value=args.map),
            hint=say("give two, the first across and the second up: --map B,D"),
        )
    fig = regime_map(c, names[0], names[1], language=args.language)
    with hold():  # the budget stops the work, never a write halfway
        path = write_signed_file(args.map_file, fig.svg, "symshard compare", force=args.force, xml=True)
    boundaries = fig.svg.count('class="boundary"')
    line = regime_map_line(path, names[0], names[1], boundaries, args.language)
    return f"{text}\n{line}", {
        **data,
        "map": {"file": str(path), "x": names[0], "y": names[1], "boundaries": boundaries},
    }


def _best(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul
    from ..planning.search import best_sharding
    from ..report.plans import search_data, search_text

    chain = [matmul(text, outer=args.outer) for text in args.matmul]
    chip = _chip(args)
    if chip is None:
        raise UsageError(
            say("best-sharding needs a chip to rank times"), hint=say("add --hw tpu-v5e (or another preset)")
        )
    first = chain[0]
    mesh = _matmul_mesh(args, first, chip)
    _set_aside_unused_sizes(args, sorted({d for mm in chain for d in mm.dims}), " ; ".join(map(str, chain)))
    fixed = {}
    for text in args.fixed or []:
        arr = parse_array(text)
        fixed[arr.name] = arr
    r = best_sharding(
        chain, mesh, args.shape, hardware=chip, memory_limit=args.memory, out=args.out, fixed=fixed,
        dtype=args.dtype, model=_cost_model(args, chip), overlap=not args.serial, comm_overlap=args.comm_overlap,
    )  # fmt: skip
    args.exit_code = 0 if r.best is not None else 1  # a shell script can tell "nothing fits" from an answer
    return search_text(r, language=args.language), search_data(r, args.language)


# -- layer ------------------------------------------------------------------------------------


def _int_sizes(text: str | None, what: Message) -> dict[str, int]:
    out: dict[str, int] = {}
    if not text:
        return out
    for name, value, _ in parse_sizes(text, what=what):
        if not value.isdigit() or int(value) < 1:
            raise UsageError(
                say("{what} {name} must be a positive whole number, not '{value}'", what=what, name=name, value=value),
                hint=say("write {name}=8 (leave {name} out to keep it symbolic)", name=name),
            )
        out[name] = int(value)
    return out


def _layer(args: argparse.Namespace) -> tuple[str, dict]:
    from ..models.schemes import layer
    from ..report.layers import layer_report

    chip = _chip(args)
    lay = layer(args.scheme, training=not args.serve, hardware=chip, comm_overlap=args.comm_overlap)
    mesh = _int_sizes(args.mesh, say("mesh axis"))
    shape = _int_sizes(args.shape, say("dim"))
    spread_values = _int_sizes(args.spread, say("spread of axis"))
    used = {a for s in lay.program.steps for a in s.axes} | {
        a for n in lay.program.held for arr in lay.program.versions(n) for a in arr.axes
    }
    for name in [*mesh, *spread_values]:
        if name not in used:
            axes = sorted(used)
            if not axes:
                raise UsageError(
                    say("the {scheme} scheme has no mesh axis {axis}", scheme=lay.scheme, axis=name),
                    hint=say("its axes: none"),
                )
            # a mesh written for another scheme, renamed onto this one's axes (all its devices on one axis
            # when this scheme has one), so that the hint is a command line to paste
            sizes = list(mesh.values())
            if len(sizes) != len(axes):
                sizes = [math.prod(sizes)] if len(axes) == 1 else [*sizes[: len(axes)], *[2] * (len(axes) - len(sizes))]
            suggest = ",".join(f"{a}={n}" for a, n in zip(axes, sizes, strict=False))
            raise UsageError(
                say("the {scheme} scheme has no mesh axis {axis}", scheme=lay.scheme, axis=name),
                hint=say("its axes are {axes}: --mesh {mesh}", axes=", ".join(axes), mesh=suggest)
                if len(axes) > 1
                else say("it shards over one axis, {axis}: --mesh {mesh}", axis=axes[0], mesh=suggest),
            )
    for name in shape:
        if name not in ("B", "D", "F"):
            raise UsageError(say("the MLP block has no dim {dim}", dim=name), hint=say("give B (tokens), D and F"))
    values = lay.values(mesh, shape, chip, {a: spread_values.get(a, 1) for a in used})
    if chip is None:
        values = {k: v for k, v in values.items() if k.name.startswith(("|", "M_")) or k.name in "BDF"}
    solve = args.solve_for or ("Y" if lay.scheme == "tp" else "B_chip")
    network = None
    if chip is not None and lay.fabric == "nvlink" and used <= set(mesh):
        # a GPU mesh with every size: each collective through the network's levels, as `collective` costs it
        network = lay.network(mesh, chip)
    return layer_report(lay, values, mesh=mesh, spreads=spread_values, used=used, chip=chip, solve=solve,
                        language=args.language, network=network)  # fmt: skip


# -- calibrate -----------------------------------------------------------------------------------


def _calibrate(args: argparse.Namespace) -> tuple[str, dict]:
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
    fit = fit_chip(measurements, base, device=args.device_name or "", date=_measurement_date(args.date))
    text = chip_hardware_file(fit, name=args.name)
    out = write_signed_file(args.out, text, "symshard calibrate --chip", force=args.force)
    return chip_fit_report(fit, out, args.out, args.language)


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


# -- measure -------------------------------------------------------------------------------------


def _measure(args: argparse.Namespace) -> tuple[str, dict]:
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
    progress = _Progress(args).counter("measure")
    sweep = measure(quick=args.quick, dtypes=dtypes, max_bytes=max_bytes, progress=progress)
    written = write_new_file(out, measurements_csv(sweep.rows))
    return measure_report(sweep, written, args.out, args.language)


def _rat(x) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator)


# -- model ------------------------------------------------------------------------------------------

_MODEL_SIZES = {"L": "layers", "D": "d_model", "F": "d_ff", "N": "heads", "K": "kv_heads", "H": "head_dim",
                "V": "vocab", "E": "experts", "k": "experts_per_token"}  # fmt: skip


def _model(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.models import model_report, presets_report

    if args.list or not args.name:
        if args.train or args.serve:
            raise UsageError(say("name a model to train or serve"), hint=say("e.g. symshard model llama3-70b --train"))
        return presets_report(args.language)
    if args.train and args.serve:
        raise UsageError(say("--train and --serve ask different questions"), hint=say("give one of them"))
    sizes = {}
    for name, value in _int_sizes(args.sizes, say("model size")).items():
        if name not in _MODEL_SIZES:
            raise UsageError(
                say("a model has no size '{name}'", name=name),
                hint=say("sizes: {names}", names=", ".join(_MODEL_SIZES)),
            )
        sizes[_MODEL_SIZES[name]] = value
    mode = "train" if args.train else "serve" if args.serve else "describe"
    return model_report(
        args.name, mode=mode, sizes=sizes, hardware=_chip(args), tokens=args.tokens, chips=args.chips, mfu=args.mfu,
        batch=args.batch, policy=args.policy, optimizer=args.optimizer, gradients=args.gradients,
        context=args.context, mesh=args.mesh, dtype=args.dtype, kv_dtype=args.kv_dtype, overlap=args.overlap,
        language=args.language, stages=args.stages, microbatches=args.microbatches, kv_shard=args.kv_shard,
        decode=args.decode,
    )  # fmt: skip


# -- transfer -------------------------------------------------------------------------------------


def _transfer_size(text: str) -> sympy.Rational:
    """``--bytes``: ``1GB``, ``64MiB``, ``16 GiB``, ``1e9`` (bytes)."""
    from ..algebra.units import parse_quantity

    try:
        value = parse_quantity(text, "B")
    except ValueError:
        raise UsageError(say("cannot read the size '{text}' given to --bytes", text=text),
                         hint=say("give a number of bytes, like 1GB, 64MiB, 16GiB or 1e9")) from None  # fmt: skip
    if value <= 0:
        raise UsageError(
            say("--bytes must be positive, got '{text}'", text=text), hint=say("give a size above 0, like 64MiB")
        )
    return _rat(value)


def _chip_count(text: str) -> int:
    from ..algebra.units import parse_quantity

    try:
        value = parse_quantity(text, "count")
    except ValueError:
        value = None
    if value is None or value.denominator != 1 or value < 1:
        raise UsageError(
            say("--chips must be a whole number of chips, got '{text}'", text=text), hint=say("give it like --chips 8")
        )
    return int(value)


def _transfer_question(args: argparse.Namespace) -> str:
    """Which of the four questions the options ask, refusing none, two, or a half-asked one."""
    asked = [name for name, on in (("--from/--to", args.source is not None or args.target is not None),
                                   ("--gather-to", args.gather_to is not None), ("--host", args.host),
                                   ("--totals", args.totals)) if on]  # fmt: skip
    if not asked:
        raise UsageError(say("say what to move: --from and --to, --gather-to, --host or --totals"),
                         hint=say("see 'symshard transfer --help' for an example of each"))  # fmt: skip
    if len(asked) > 1:
        raise UsageError(
            say("{first} and {second} ask different questions", first=asked[0], second=asked[1]),
            hint=say("give one of them"),
        )
    if args.source is not None and args.target is None:
        raise UsageError(say("--from needs --to: the chip the bytes go to"), hint=say("add --to, like --to 3,3"))
    if args.target is not None and args.source is None:
        raise UsageError(say("--to needs --from: the chip the bytes leave"), hint=say("add --from, like --from 0,0"))
    question = asked[0]
    if question in ("--from/--to", "--gather-to"):
        if args.slice is None:
            raise UsageError(
                say("{option} needs the slice's shape", option=question),
                hint=say("add --slice, like --slice 4x4 or --slice 4x4x4"),
            )
        if args.chips is not None:
            raise UsageError(say("--chips has no meaning with {option}: the slice's shape gives its chips",
                                 option=question), hint=say("drop --chips"))  # fmt: skip
    if question == "--totals":
        if args.bytes is not None:
            raise UsageError(
                say("--totals moves no bytes"), hint=say("drop --bytes, or ask --from/--to, --gather-to or --host")
            )
        if args.slice is None and args.chips is None:
            raise UsageError(say("--totals needs the slice's shape or its number of chips"),
                             hint=say("add --slice 16x20x28 or --chips 8960"))  # fmt: skip
    elif args.bytes is None:
        raise UsageError(
            say("{option} needs the bytes to move", option=question),
            hint=say("add --bytes, like --bytes 1GB or --bytes 64MiB"),
        )
    return question


def _transfer(args: argparse.Namespace) -> tuple[str, dict]:
    from ..models.transfers import Gather, Route, gather_to_one, point_to_point, slice_shape
    from ..report.transfers import host_report, ici_report, slice_totals_report

    question = _transfer_question(args)
    chip = _chip(args)
    dims = slice_shape(args.slice) if args.slice is not None else None
    if dims is not None and args.chips is not None and _chip_count(args.chips) != math.prod(dims):
        raise UsageError(say("--chips {chips} and --slice {shape} ({count} {count:chip|chips}) disagree", chips=args.chips,
                             shape=args.slice, count=math.prod(dims)), hint=say("give one of them"))  # fmt: skip
    if question == "--host":  # the only question a formula answers without a chip
        chips = _chip_count(args.chips) if args.chips is not None else math.prod(dims) if dims else 1
        return host_report(chip, _transfer_size(args.bytes), chips, args.language)
    if chip is None:
        raise UsageError(say("{option} needs a chip", option=question),
                         hint=say("name one with --hw, like --hw tpu-v5e (the list: symshard hardware)"))  # fmt: skip
    if question == "--totals":
        return slice_totals_report(chip, dims or (_chip_count(args.chips),), args.language)
    nbytes = _transfer_size(args.bytes)
    if question == "--gather-to":
        moved: Route | Gather = gather_to_one(args.gather_to, dims or (), hardware=chip, nbytes=nbytes)
    else:
        moved = point_to_point(args.source, args.target, dims or (), hardware=chip, nbytes=nbytes)
    return ici_report(moved, chip, dims or (), nbytes, args.language)


# -- problems ------------------------------------------------------------------------------------


def _problems_list(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import families
    from ..problems.texts import families_report

    return families_report(families(args.families or ()), args.language)


def _problems_show(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import family, variant
    from ..problems.texts import problem_text

    p = variant(family(args.family, args.families or ()), args.seed, args.lang, budget=_budget(args))
    return problem_text(p), p.to_dict()


def _problems_check(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import family, variant
    from ..problems.texts import check_report

    p = variant(family(args.family, args.families or ()), args.seed, args.lang, budget=_budget(args))
    graded = []
    for given in args.answers:
        name, sep, value = given.partition("=")
        if not sep:
            if len(p.answers) != 1:
                names = ", ".join(a.name for a in p.answers)
                raise UsageError(
                    say("'{given}' does not say which answer it is", given=given),
                    hint=say("write NAME=VALUE; {problem} has {names}", problem=p.id, names=names),
                )
            name, value = p.answers[0].name, given
        answer = p.answer(name.strip())
        graded.append((answer, value.strip(), answer.grade(value.strip())))
    text, data = check_report(p, graded)
    args.exit_code = 0 if data["right"] == data["total"] else 1
    return text, data


def _problems_generate(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import generate
    from ..problems.engine import variants_of
    from ..problems.texts import generated_report, problem_set_title
    from ..problems.writers import FORMATS, export, write_files
    from .budget import hold

    if args.count is None and args.per_family is None:
        raise UsageError(say("say how many problems: --count N or --per-family K"), hint=say("e.g. --count 20"))
    for flag, value in (("--count", args.count), ("--per-family", args.per_family), ("--variants", args.variants)):
        if value is not None and value < 1:
            raise UsageError(
                say("{option} must be at least 1, not {value}", option=flag, value=value),
                hint=say("e.g. {option} 10", option=flag),
            )
    formats = FORMATS if args.format == "all" else (args.format,)
    out = Path(args.out)
    OutputFolder.open(out, "symshard problems generate", force=args.force, create=False)  # refuse before the work
    progress = _Progress(args).counter("problems")
    problems = generate(
        args.seed, args.count, names=args.family, difficulty=args.difficulty, per_family=args.per_family,
        language=args.lang, extra=args.families or (), progress=progress, budget=_budget(args),
    )  # fmt: skip
    variants = None
    if args.variants > 1:
        variants = variants_of(problems, args.seed, args.variants, budget=_budget(args),
                               progress=_Progress(args).counter("variants"))  # fmt: skip
    language = problems[0].language if problems else "en"  # the set's own language (--lang or $SYMSHARD_LANG)
    title = args.title if args.title else problem_set_title(language)
    produced = export(problems, formats, seed=args.seed, title=title, solutions=args.solutions, variants=variants)
    with hold():  # the budget stops the work, never a write halfway
        written = write_files(out, produced, force=args.force)
    return generated_report(problems, written.written, out, args.seed, args.lang, kept=written.kept)


class _Progress:
    """Bars on stderr while a long command works: only on a terminal, never under ``--json``.

    Drawn by tqdm when it is installed; without it the command runs silently, as it would in a pipe.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.on = sys.stderr.isatty() and not getattr(args, "json", False)
        self.bars: dict[str, object] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.on or total <= 0:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self.on = False
            return
        bar = self.bars.get(stage)
        if bar is None:
            bar = self.bars[stage] = tqdm(total=total, desc=stage, unit="", leave=False, file=sys.stderr)
        bar.n = done  # type: ignore[attr-defined]
        bar.refresh()  # type: ignore[attr-defined]
        if done >= total:
            bar.close()  # type: ignore[attr-defined]

    def counter(self, stage: str):
        """The same, as the ``(done, total)`` callback the problem generator takes."""
        return lambda done, total: self(stage, done, total)


def _problems_schema(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems.writers import schema

    data = schema()
    return json.dumps(data, indent=2), data


# -- site -----------------------------------------------------------------------------------------


def _site_prepare(args: argparse.Namespace) -> tuple[str, dict]:
    from ..site import prepare

    config = prepare(Path(args.out), force=args.force, url=args.site_url, cli=args.command_line())
    return f"wrote the MkDocs project {config.parent} (build it with: mkdocs build -f {config})", {
        "project": str(config.parent),
        "config": str(config),
    }


def _site_build(args: argparse.Namespace) -> tuple[str, dict]:
    from ..site import build

    built = build(Path(args.out), src=Path(args.src) if args.src else None, force=args.force, url=args.site_url,
                  progress=_Progress(args), cli=args.command_line())  # fmt: skip
    text = fill(
        "built {pages} {pages:page|pages} into {out} in {seconds:.1f} s; view it with: symshard site serve",
        pages=built.pages,
        out=built.out,
        seconds=built.seconds,
    )
    return text, {"out": str(built.out), "pages": built.pages, "seconds": round(built.seconds, 2)}


def _site_serve(args: argparse.Namespace) -> tuple[str, dict]:
    from ..site import build, serve
    from .budget import relax

    out = Path(args.out)
    if not args.no_build:
        built = build(
            out,
            force=args.force,
            url=args.site_url or f"http://127.0.0.1:{args.port}/",
            progress=_Progress(args),
            cli=args.command_line(),
        )
        print(
            fill(
                "built {pages} {pages:page|pages} into {out} in {seconds:.1f} s",
                pages=built.pages,
                out=built.out,
                seconds=built.seconds,
            ),
            flush=True,
        )

    def ready(url: str) -> None:
        print(f"serving {out} at {url} (Ctrl-C stops)", flush=True)

    relax()  # the build had its time; serving lasts until Ctrl-C

    serve(out, args.port, ready=ready)
    return "stopped", {"stopped": True}


# -- completion ---------------------------------------------------------------------------------


def _completion(args: argparse.Namespace) -> tuple[str, dict]:
    try:
        import shtab
    except ImportError:
        raise UsageError(
            say("shell completion needs the shtab package"),
            hint=say("install it: python -m pip install 'shtab' (it has no dependencies)"),
        ) from None
    script = shtab.complete(argument_parser(), shell=args.shell)
    return script.rstrip("\n"), {"shell": args.shell, "script": script}


# -- book -----------------------------------------------------------------------------------------


def _book(args: argparse.Namespace) -> tuple[str, dict]:
    from ..models.worked import open_answers, worked_answers
    from ..report.book import book_report

    return book_report(worked_answers(), open_answers())


COMMANDS: dict[str, Callable[[argparse.Namespace], tuple[str, dict]]] = {
    "best": _best,
    "book": _book,
    "calibrate": _calibrate,
    "collective": _collective,
    "compare": _compare,
    "completion": _completion,
    "hardware": _hardware,
    "layer": _layer,
    "matmul": _matmul,
    "measure": _measure,
    "model": _model,
    "problems_check": _problems_check,
    "problems_generate": _problems_generate,
    "problems_list": _problems_list,
    "problems_schema": _problems_schema,
    "problems_show": _problems_show,
    "shard": _shard,
    "site_build": _site_build,
    "site_prepare": _site_prepare,
    "site_serve": _site_serve,
    "transfer": _transfer,
    "verify": _verify,
}
"""Each command's function by the name the parser gives it (its ``run`` default)."""

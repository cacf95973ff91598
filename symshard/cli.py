"""The ``symshard`` command: a thin layer that reads options, calls the library, prints.

Every command prints a readable answer (the formula, then the number with
units) by default and one JSON object with ``--json``. Bad input prints one
line on stderr and exits with status 2; nothing below this module prints.

``--lang zh`` (or ``SYMSHARD_LANG=zh`` in the environment) prints the words in
Simplified Chinese, error messages and hints included; numbers, units, notation,
formulas and collective names are the same in both languages, and ``--json``
keeps its keys (adding ``*_zh`` fields next to the sentences it carries).

Examples:
    >>> main(["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--shape", "I=1024,J=4096",
    ...       "--dtype", "fp32", "--json"])  # doctest: +ELLIPSIS
    {
      "array": "A[I_XY, J]",
    ...
    0
    >>> main(["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--lang", "zh"])
    A[I_XY, J]，网格 X=8,Y=2，bf16
    本地形状      [I/(|X|·|Y|), J] = [I/16, J]
    每设备字节数  2·I·J/(|X|·|Y|) = I·J/8
    总字节数      2·I·J，分布在 16 个设备上
    副本数        1
    HBM 读取时间  I·J/(8·W_hbm)（用 --hw 指定芯片即可得到秒数）
    0
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import sympy

from . import __version__
from .chips import Hardware, hardware
from .collectives import parse_collective
from .errors import HardwareError, SymshardError, UsageError
from .i18n import ENVIRONMENT, LANGUAGES, keyed, language_from, sentence
from .mesh import Mesh
from .messages import Message, PercentMessage, say
from .notation import parse_array, parse_sizes
from .outputs import OutputFolder, write_signed_file
from .placement import place
from .report.problems import shown_language
from .units import format_number

if TYPE_CHECKING:  # the comparison is built lazily, in the command that needs it
    from .crossovers import Comparison
    from .site.pages import CommandLine

__all__ = ["main"]


ENGLISH: dict[str, str] = {
    "error.prefix": "symshard: error: ",
    "cli.unused_sizes": "note: --shape's sizes for {dims} were set aside: '{text}' has no such dim (--strict refuses them)",
    "cli.verify.progress": "running strategies: {done} of {total} ({seconds} s)",
    "cli.check.right": "{name}: right ({value})",
    "cli.check.wrong": "{name}: not right ({value})",
    "cli.check.total": "{right} of {total} right",
    "cli.generated": "{count} problems from {families} families, seed {seed}:",
    "cli.figures": "{folder}/ ({count} figures)",
    "cli.problem_set_title": "Problem set",
    "cli.figure": "{folder}/ (1 figure)",
    "cli.questions": "{folder}/ ({count} PrairieLearn questions and an assessment)",
    "cli.families.head": "family",
    "cli.families.columns": "difficulty  title",
    "cli.families.count": "{count} families",
}
"""The English of the command line's own words by key; other languages are in the catalogue."""


def _say(key: str, language: str, **values: object) -> str:
    return keyed(ENGLISH, key, language, **values)


class _ArgparseMsgid(Message):
    """One of argparse's own gettext msgids, a message to say in any language (under the context
    ``argparse``); filled in with ``%``, it stays one."""

    def __new__(cls, msgid: str) -> _ArgparseMsgid:
        return super().__new__(cls, msgid, (), "argparse")  # type: ignore[return-value]

    @staticmethod
    def format_with(template: str, values: tuple[tuple[str, object], ...]) -> str:
        return template  # nothing to fill in until `%`

    def __reduce__(self) -> tuple:  # type: ignore[type-arg]
        return (_ArgparseMsgid, (self.template,))

    def __mod__(self, args: object) -> PercentMessage:  # type: ignore[override]
        return PercentMessage(self.template, (("args", args),), "argparse")


@contextmanager
def _argparse_words() -> Iterator[None]:
    """argparse's messages kept as messages while it parses: its words are gettext msgids (in
    ``%`` syntax), which the catalogues translate under the context ``argparse``."""
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    argparse._ = _ArgparseMsgid  # type: ignore[attr-defined]
    argparse.ngettext = lambda one, many, n: _ArgparseMsgid(one if n == 1 else many)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own words (third-party English) are kept as they come
        raise UsageError(message, hint=say("see '{command}'", command=f"{self.prog} --help"))


# -- shared options -----------------------------------------------------------------------


def _add_sizes(
    p: argparse.ArgumentParser,
    mesh_help: str = "mesh axes and sizes (default: symbolic, from the notation)",
    shape_example: str = "I=1024,J=4096",
) -> None:
    p.add_argument("--mesh", metavar="X=8,Y=2", help=mesh_help)
    p.add_argument(
        "--shape", metavar=shape_example,
        help="dim sizes (dims left out stay symbolic; sizes of dims the command does not use are set aside, with a note)",
    )  # fmt: skip
    p.add_argument("--strict", action="store_true", help="refuse a --shape that names a dim the command does not use")
    p.add_argument("--dtype", default="bf16", help="element type: bf16 (default), fp32, fp8, int8, int4, ...")
    p.add_argument(
        "--hw", metavar="CHIP", help="hardware preset, e.g. tpu-v5e, tpu-v5p, h100 (see 'symshard hardware')"
    )
    p.add_argument(
        "--hw-set",
        metavar="K=V,...",
        help="override or supply constants, e.g. W_hbm=3.4e12,T_hop=1e-6 (C, W_hbm, W_ici, W_nvlink, W_dcn, T_hop)",
    )
    p.add_argument(
        "--topology",
        metavar="Y=ring,...",
        help="rewire axes: ring, one-way-ring, line or switch (default: the chip's rules, else ring)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)


_SITE_URL_HELP = (
    "where the site will be published, for canonical links and the sitemap (default $SYMSHARD_SITE_URL,"
    " else http://127.0.0.1:8000/, where 'symshard site serve' serves it)"
)
_FORCE_HELP = (
    "write into a folder that holds files symshard did not write (they are never deleted or overwritten)"
    " and over symshard's own files edited since"
)
_LANG_HELP = f"language of the text: en (default) or zh; the environment variable {ENVIRONMENT} sets the default"
_PROBLEM_LANG_HELP = (
    f"language of the text (default en, or ${ENVIRONMENT}); 'symshard problems list --json' gives each family's"
    " languages"
)


def _add_lang(p: argparse.ArgumentParser, help: str = _LANG_HELP) -> None:
    p.add_argument("--lang", metavar="LANG", help=help)


def _add_budget(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--time-limit", metavar="SECONDS",
        help="stop a variant whose drawing and rendering take longer (default 4 s, or $SYMSHARD_TIME_LIMIT)",
    )  # fmt: skip
    p.add_argument(
        "--memory-limit", metavar="SIZE",
        help="stop a variant that needs more memory, e.g. 1GiB (default 512 MiB, or $SYMSHARD_MEMORY_LIMIT)",
    )  # fmt: skip


def _budget(args: argparse.Namespace):
    from .problems.budget import Budget

    return Budget.of(args.time_limit, args.memory_limit)


def _add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="book", help="collective cost model: book (default) or ring")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--overlap", action="store_true", help="time = max(T_math, T_comms) (default)")
    group.add_argument("--serial", action="store_true", help="time = T_math + T_comms")
    _add_comm_overlap(p)


def _add_comm_overlap(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--comm-overlap",
        default="axes",
        metavar="axes|none",
        help="how collectives add up into T_comms: axes (default, the book's: collectives on disjoint links run "
        "at the same time) or none (one after another)",
    )


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


def _mesh(args: argparse.Namespace, axes: Sequence[str], chip: Hardware | None) -> Mesh:
    topology = None
    if args.topology:
        topology = {name: value for name, value, _ in parse_sizes(args.topology, what=say("topology"))}
    if args.mesh:
        return Mesh(args.mesh, hardware=chip, topology=topology)
    return Mesh(dict.fromkeys(axes), hardware=chip, topology=topology)


# -- shard -----------------------------------------------------------------------------


def _shard(args: argparse.Namespace) -> tuple[str, dict]:
    from .report.placements import placement_report

    array = parse_array(args.array)
    chip = _chip(args)
    mesh = _mesh(args, [*array.axes, *sorted(array.unreduced)], chip)
    _set_aside_unused_sizes(args, array.dim_names, str(array))
    p = place(array, mesh, args.shape, dtype=args.dtype)
    s = place(array, mesh.symbolic(), None, dtype=args.dtype)
    return placement_report(p, s, chip, args.language)


# -- collective -----------------------------------------------------------------------------


def _collective(args: argparse.Namespace) -> tuple[str, dict]:
    from .report.collectives import collective_report

    expr = parse_collective(args.collective)
    chip = _chip(args)
    axes = [*expr.operand.axes, *sorted(expr.operand.unreduced), *expr.op.axes]
    mesh = _mesh(args, list(dict.fromkeys(axes)), chip)
    _set_aside_unused_sizes(args, expr.operand.dim_names, str(expr))
    cost = expr.cost(mesh, args.shape, dtype=args.dtype, hardware=chip, model=args.model)
    sym = expr.cost(mesh.symbolic(), None, dtype=args.dtype, model=args.model)
    return collective_report(expr, mesh, cost, sym, chip, args.language)


# -- hardware --------------------------------------------------------------------------------


def _hardware(args: argparse.Namespace) -> tuple[str, dict]:
    from .report.chips import chip_report, chips_report

    return chip_report(hardware(args.name), args.language) if args.name else chips_report(args.language)


# -- matmul, compare, best --------------------------------------------------------------------


def _matmul_mesh(args: argparse.Namespace, mm, chip: Hardware | None) -> Mesh:
    arrays = [mm.lhs, mm.rhs] + ([mm.out] if mm.out is not None else [])
    axes = [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))]
    return _mesh(args, list(dict.fromkeys(axes)), chip)


def _matmul(args: argparse.Namespace) -> tuple[str, dict]:
    from .einsums import matmul
    from .planner import plan
    from .report.plans import plan_data, plan_text

    mm = matmul(args.matmul)
    chip = _chip(args)
    mesh = _matmul_mesh(args, mm, chip)
    _set_aside_unused_sizes(args, mm.dims, str(mm))
    how = args.comm_overlap
    every = bool(args.every)
    p = plan(mm, mesh, args.shape, dtype=args.dtype, hardware=chip, model=args.model, overlap=not args.serial,
             comm_overlap=how, all=every)  # fmt: skip
    if not p.numeric and chip is not None:
        # sizes are symbolic: keep C, W_ici, ... as symbols too, so the formulas stay readable
        p = plan(mm, mesh, args.shape, dtype=args.dtype, model=args.model, overlap=not args.serial, comm_overlap=how,
                 all=every)  # fmt: skip
    if args.json:  # only what is printed is worked out: a long plan's formulas take a while to write
        return "", plan_data(p, args.language)
    text = plan_text(p, top=None if args.top == 0 else args.top, language=args.language, explain=args.explain)
    if chip is not None and not p.numeric:
        consts = ", ".join(f"{k} = {format_number(v)}" for k, v in chip.constants(p.dtype).items())
        text += f"\n{chip.label}{'：' if args.language == 'zh' else ': '}{consts}"
    return text, {}


def _verify(args: argparse.Namespace) -> tuple[str, dict]:
    from .einsums import matmul

    mm = matmul(args.matmul)
    if not args.mesh or not args.shape:
        raise UsageError(
            say("verify needs numbers: --mesh and --shape"), hint=say("e.g. --mesh X=4,Y=2 --shape I=64,J=64,K=64")
        )
    _set_aside_unused_sizes(args, mm.dims, str(mm))
    mesh = Mesh(args.mesh)
    if not mesh.is_numeric:
        raise UsageError(
            say("verify needs every mesh size, not '{mesh}'", mesh=args.mesh), hint=say("e.g. --mesh X=4,Y=2")
        )
    from .jax.runtime import configure_host_devices, require_jax

    configure_host_devices(max(8, int(mesh.devices)))  # only takes effect before JAX is imported
    require_jax()
    from .jax.verification import verify
    from .report.verifications import verification_text

    if args.sample is not None and args.execute != "all":
        raise UsageError(
            say("--sample {count} draws from all strategies, but --run is {run}", count=args.sample, run=args.execute),
            hint=say("drop --run (or use --run all) with --sample"),
        )
    if args.sample is not None and args.sample < 1:
        raise UsageError(
            say("--sample {count} runs no strategy", count=args.sample), hint=say("sample at least 1, e.g. --sample 20")
        )
    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError(
            say("--time-limit {seconds} leaves no time", seconds=f"{args.time_limit:g}"),
            hint=say("give seconds, e.g. --time-limit 600"),
        )
    progress = _verify_progress(args.language) if sys.stderr.isatty() and not args.json else None
    v = verify(
        mm,
        mesh,
        args.shape,
        dtype=args.dtype,
        hardware=args.hw,
        model=args.model,
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
    """A progress line on stderr, rewritten in place, for strategies run one after another."""
    import time

    started = time.perf_counter()
    shown = [0.0]

    def show(done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - shown[0] < 0.2:  # at most five updates a second
            return
        shown[0] = now
        said = _say("cli.verify.progress", lang, done=f"{done:,}", total=f"{total:,}", seconds=f"{now - started:.0f}")
        print("\r" + said, end="", file=sys.stderr, flush=True)

    return show


def _compare(args: argparse.Namespace) -> tuple[str, dict]:
    from .crossovers import compare
    from .einsums import matmul
    from .planner import plan
    from .report.plans import compare_data, compare_text, map_hint, pairs_hint

    mm = matmul(args.matmul)
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
    p = plan(mm, mesh, args.shape, dtype=args.dtype, model=args.model, comm_overlap=args.comm_overlap)
    c = compare(p, args.solve_for, strategies=picked, hardware=chip, overlap=not args.serial)
    text, data = compare_text(c, language=args.language, pairs=args.pairs), compare_data(c, args.language)
    if c.mode != "explicit" and not args.pairs:
        text += "\n" + pairs_hint(args.language)
    if args.map:
        text, data = _regime_map(args, c, text, data)
    elif len(c.best) >= 2:
        text += "\n" + map_hint(c, args.language)
    return text, data


def _regime_map(args: argparse.Namespace, c: Comparison, text: str, data: dict) -> tuple[str, dict]:
    from .outputs import write_signed_file
    from .render.regions import regime_map
    from .report.plans import regime_map_line

    names = [n.strip() for n in args.map.split(",")]
    if len(names) != 2 or not all(names):
        raise UsageError(
            say("--map takes two symbols, not '{value}'", value=args.map),
            hint=say("give two, the first across and the second up: --map B,D"),
        )
    fig = regime_map(c, names[0], names[1])
    path = write_signed_file(args.map_file, fig.svg, "symshard compare", force=args.force, xml=True)
    boundaries = fig.svg.count('class="boundary"')
    line = regime_map_line(path, names[0], names[1], boundaries, args.language)
    return f"{text}\n{line}", {
        **data,
        "map": {"file": str(path), "x": names[0], "y": names[1], "boundaries": boundaries},
    }


def _best(args: argparse.Namespace) -> tuple[str, dict]:
    from .einsums import matmul
    from .report.plans import search_data, search_text
    from .search import best_sharding

    chain = [matmul(text) for text in args.matmul]
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
        dtype=args.dtype, model=args.model, overlap=not args.serial, comm_overlap=args.comm_overlap,
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
    from .report.layers import layer_report
    from .schemes import layer

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
    return layer_report(lay, values, mesh=mesh, spreads=spread_values, used=used, chip=chip, solve=solve,
                        language=args.language)  # fmt: skip


# -- calibrate -----------------------------------------------------------------------------------


def _calibrate(args: argparse.Namespace) -> tuple[str, dict]:
    from .calibrate import calibrate, hardware_file, read_nccl_tests
    from .report.calibrations import calibration_report

    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(
            say("cannot read '{path}': {reason}", path=args.file, reason=str(err)),
            hint=say("give nccl-tests output saved to a file"),
        ) from None
    run = read_nccl_tests(text, in_place=args.in_place)
    cal = calibrate(
        run, args.collective, ranks=args.ranks, per_node=args.per_node, base=args.hw, min_bytes=args.min_bytes,
        max_bytes=args.max_bytes, level=args.level,
    )  # fmt: skip
    out = write_signed_file(
        args.out, hardware_file(cal, name=args.name, source=path.name), "symshard calibrate", force=args.force
    )
    return calibration_report(cal, run, path, out, args.out, args.language)


def _rat(x) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator)


# -- model ------------------------------------------------------------------------------------------

_MODEL_SIZES = {"L": "layers", "D": "d_model", "F": "d_ff", "N": "heads", "K": "kv_heads", "H": "head_dim",
                "V": "vocab", "E": "experts", "k": "experts_per_token"}  # fmt: skip


def _model(args: argparse.Namespace) -> tuple[str, dict]:
    from .report.models import model_report, presets_report

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
        language=args.language,
    )  # fmt: skip


# -- transfer -------------------------------------------------------------------------------------


def _transfer_size(text: str) -> sympy.Rational:
    """``--bytes``: ``1GB``, ``64MiB``, ``16 GiB``, ``1e9`` (bytes)."""
    from .units import parse_quantity

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
    from .units import parse_quantity

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
    from .report.transfers import host_report, ici_report, slice_totals_report
    from .transfers import Gather, Route, gather_to_one, point_to_point, slice_shape

    question = _transfer_question(args)
    chip = _chip(args)
    dims = slice_shape(args.slice) if args.slice is not None else None
    if dims is not None and args.chips is not None and _chip_count(args.chips) != math.prod(dims):
        raise UsageError(say("--chips {chips} and --slice {shape} ({count} chips) disagree", chips=args.chips,
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
    from .problems import families
    from .report.problems import families_report

    return families_report(families(args.families or ()), args.language)


def _problems_show(args: argparse.Namespace) -> tuple[str, dict]:
    from .problems import family, variant
    from .report.problems import problem_text

    p = variant(family(args.family, args.families or ()), args.seed, args.lang, budget=_budget(args))
    return problem_text(p), p.to_dict()


def _problems_check(args: argparse.Namespace) -> tuple[str, dict]:
    from .problems import family, variant
    from .report.problems import check_report

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
    from .problems import generate
    from .problems.writers import FORMATS, write_set
    from .report.problems import generated_report, problem_set_title

    if args.count is None and args.per_family is None:
        raise UsageError(say("say how many problems: --count N or --per-family K"), hint=say("e.g. --count 20"))
    for flag, value in (("--count", args.count), ("--per-family", args.per_family)):
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
    language = problems[0].language if problems else "en"  # the set's own language (--lang or $SYMSHARD_LANG)
    title = args.title if args.title else problem_set_title(language)
    written = write_set(problems, out, formats=formats, seed=args.seed, title=title,
                        solutions=args.solutions, force=args.force)  # fmt: skip
    return generated_report(problems, written, out, args.seed, args.lang)


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
    from .problems.writers import schema

    data = schema()
    return json.dumps(data, indent=2), data


# -- site -----------------------------------------------------------------------------------------


def _site_prepare(args: argparse.Namespace) -> tuple[str, dict]:
    from .site import prepare

    config = prepare(Path(args.out), force=args.force, url=args.site_url, cli=command_line())
    return f"wrote the MkDocs project {config.parent} (build it with: mkdocs build -f {config})", {
        "project": str(config.parent),
        "config": str(config),
    }


def _site_build(args: argparse.Namespace) -> tuple[str, dict]:
    from .site import build

    built = build(Path(args.out), src=Path(args.src) if args.src else None, force=args.force, url=args.site_url,
                  progress=_Progress(args), cli=command_line())  # fmt: skip
    text = f"built {built.pages} pages into {built.out} in {built.seconds:.1f} s; view it with: symshard site serve"
    return text, {"out": str(built.out), "pages": built.pages, "seconds": round(built.seconds, 2)}


def _site_serve(args: argparse.Namespace) -> tuple[str, dict]:
    from .site import build, serve

    out = Path(args.out)
    if not args.no_build:
        built = build(
            out,
            force=args.force,
            url=args.site_url or f"http://127.0.0.1:{args.port}/",
            progress=_Progress(args),
            cli=command_line(),
        )
        print(f"built {built.pages} pages into {built.out} in {built.seconds:.1f} s", flush=True)

    def ready(url: str) -> None:
        print(f"serving {out} at {url} (Ctrl-C stops)", flush=True)

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
    from .report.book import book_report
    from .worked import open_answers, worked_answers

    return book_report(worked_answers(), open_answers())


# -- the parser ---------------------------------------------------------------------------------


def command_line() -> CommandLine:
    """This command as the docs site runs and documents it: :func:`main` and :func:`argument_parser`."""
    from .site.pages import CommandLine

    return CommandLine(main, argument_parser)


def argument_parser() -> argparse.ArgumentParser:
    """The ``symshard`` command's argument parser, every subcommand with its help."""
    parser = _ArgumentParser(
        prog="symshard",
        description="Exact, symbolic costs of sharded arrays, collectives and matmuls.",
    )
    parser.add_argument("--version", action="version", version=f"symshard {__version__}")
    parser.add_argument(
        "--lang",
        dest="global_lang",
        metavar="LANG",
        help=f"language of answers and errors: en (default) or zh; also after the command, or set {ENVIRONMENT}",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)

    p = sub.add_parser("shard", help="what each device holds of a sharded array")
    p.add_argument("array", help="e.g. 'A[I_XY, J]'")
    _add_sizes(p)
    p.set_defaults(run=_shard)

    p = sub.add_parser("collective", help="what a collective produces and costs")
    p.add_argument("collective", help="e.g. 'AllGather_Y(A[E_Y, F])'")
    _add_sizes(p)
    p.add_argument("--model", default="book", help="collective cost model: book (default) or ring")
    p.set_defaults(run=_collective)

    p = sub.add_parser(
        "matmul",
        help="the case and the costed strategies of a sharded matmul that can win",
        description="List the strategies of a sharded matmul that can win somewhere (with numbers: the fastest, "
        "then the fastest under each smaller memory limit; with symbols: those no other is at least as good as "
        "everywhere) and the chapter's rule, each costed, with why it is listed. --all lists every valid strategy.",
    )
    p.add_argument("matmul", help="e.g. 'X[B, D] · Y[D_X, F] -> Z[B, F]'")
    _add_sizes(p)
    _add_plan_options(p)
    p.add_argument(
        "--all", dest="every", action="store_true", help="list every valid strategy, not only those that can win"
    )
    p.add_argument("--top", type=int, default=10, help="strategies to print (0: all); --json has them all")
    p.add_argument(
        "--explain",
        action="store_true",
        help="say under each step what moves over which axis, and why (--json always has it)",
    )
    p.set_defaults(run=_matmul)

    p = sub.add_parser("verify", help="run a matmul's strategies in JAX and compare with XLA's plan (jax extra)")
    p.add_argument("matmul", help="e.g. 'A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]'")
    p.add_argument("--mesh", metavar="X=4,Y=2", help="mesh axes and sizes (JAX needs that many devices)")
    p.add_argument("--shape", metavar="I=64,J=64,K=64", help="every dim's size")
    p.add_argument("--dtype", default="fp32", help="fp32 (default) or bf16 (on CPU XLA runs bf16 dots in f32)")
    p.add_argument("--hw", metavar="CHIP", default="tpu-v5e", help="chip whose constants rank the strategies")
    p.add_argument("--model", default="book", help="collective cost model: book (default) or ring")
    p.add_argument(
        "--run", dest="execute", default="all", choices=["all", "best", "none"], help="strategies to run in shard_map"
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run N of all strategies: the best, the one matching XLA's plan, the rest drawn with --seed",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of --sample's draw (default 0)")
    p.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="stop running strategies after this long, the whole check (default 600); the report says how many "
        "were left",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run=_verify)

    p = sub.add_parser("compare", help="when each strategy is communication-bound, and which wins when")
    p.add_argument("matmul", help="e.g. 'X[B, D] · Y[D_X, F] -> Z[B, F]'")
    p.add_argument("--solve-for", required=True, metavar="SYMBOL", help="a dim (B), an axis (X) or a constant")
    p.add_argument(
        "--strategies",
        metavar="1,2",
        help="strategy numbers to compare, or 'all' (default: the plan's, those that can win somewhere)",
    )
    p.add_argument(
        "--map",
        metavar="X,Y",
        help="also draw the regime map over two symbols left symbolic (e.g. B,D): an SVG, log axes, "
        "each point coloured by the fastest strategy, each boundary with its formula",
    )
    p.add_argument(
        "--map-file",
        metavar="FILE",
        default="regime-map.svg",
        help="where --map writes (default regime-map.svg; a file symshard did not write is never replaced)",
    )
    p.add_argument(
        "--pairs",
        action="store_true",
        help="also print when each strategy beats each of its neighbours, each strategy's regime and why the "
        "others never win (the short answer leaves out what does not fit a screen; --json has it all)",
    )
    p.add_argument("--force", action="store_true", help="replace a map symshard wrote that was edited since")
    _add_sizes(p)
    _add_plan_options(p)
    p.set_defaults(run=_compare)

    p = sub.add_parser(
        "best-sharding",
        help="how to shard operands and result to fit in memory and run fastest (exit 1 if nothing fits)",
        description="Search the shardings of a matmul or a chain of them for the fastest that fits in --memory. "
        "Exit 0 with the answer, 1 when nothing fits (the leanest candidate is shown), 2 on bad input.",
    )
    p.add_argument("matmul", nargs="+", help="one matmul, or a chain whose results feed the next")
    _add_sizes(p)
    _add_plan_options(p)
    p.add_argument("--memory", metavar="300MB", help="bytes available per device (e.g. 300MB, 16GiB, 3e8)")
    p.add_argument("--out", default="any", help="required sharding of the final result, or 'any' (default)")
    p.add_argument(
        "--fixed", action="append", metavar="ARRAY", help="an operand whose sharding is given, e.g. 'x[B_X, D]'"
    )
    p.set_defaults(run=_best)

    p = sub.add_parser(
        "layer",
        help="an MLP block under a parallelism scheme: costs, memory, compute-bound condition",
        description="The MLP block In[B, D] · W_in[D, F] -> Tmp[B, F], Tmp · W_out[F, D] -> Out[B, D] under a "
        "parallelism scheme: its collectives step by step, T_math and T_comms per phase, memory per device, and "
        "when it is compute-bound.",
        epilog="examples:\n  symshard layer --scheme fsdp --hw tpu-v5p\n"
        "  symshard layer --scheme fsdp+tp --mesh X=8,Y=4 --shape B=4096,D=8192,F=32768 --hw tpu-v5p\n"
        "  symshard layer --scheme tp --mesh Y=8 --hw h100 --solve-for F",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--scheme", required=True, metavar="SCHEME", help="dp, fsdp, tp or fsdp+tp")
    _add_sizes(
        p, mesh_help="sizes of the scheme's axes: X (data, FSDP) and Y (tensor) (default: symbolic)",
        shape_example="B=4096,D=8192,F=32768",
    )  # fmt: skip
    p.add_argument("--spread", metavar="X=2,Y=1", help="physical axes each logical axis spans (default 1; M_X)")
    p.add_argument("--solve-for", metavar="SYMBOL", help="B_chip (default; tp: Y), B, D, F, X, Y, M_X, ...")
    p.add_argument("--serve", action="store_true", help="the forward pass only (default: training)")
    _add_comm_overlap(p)
    p.set_defaults(run=_layer)

    p = sub.add_parser("calibrate", help="fit a GPU network's latency and bandwidth to nccl-tests output")
    p.add_argument("file", help="nccl-tests output: the text all_reduce_perf prints, or its JSON file")
    p.add_argument("--collective", help="allreduce, allgather or reducescatter (default: what the file says)")
    p.add_argument("--ranks", type=int, help="GPUs in the run (default: the file's '# Rank' lines)")
    p.add_argument("--per-node", type=int, help="GPUs per node (default: from the file's host names)")
    p.add_argument(
        "--hw", metavar="CHIP", default="a100", help="preset (or hardware file) whose other figures are kept"
    )
    p.add_argument("--level", metavar="LEVEL", help="the level the bandwidth is fitted to (default: the outermost)")
    p.add_argument("--min-bytes", type=int, metavar="B", help="fit only rows of at least this many bytes")
    p.add_argument("--max-bytes", type=int, metavar="B", help="fit only rows of at most this many bytes")
    p.add_argument("--in-place", action="store_true", help="fit the in-place times (default: out-of-place)")
    p.add_argument("--out", default="calibrated.toml", metavar="FILE", help="the hardware file to write")
    p.add_argument("--name", help="the calibrated hardware's name (default: the preset's, with -calibrated)")
    p.add_argument(
        "--force", action="store_true",
        help="replace --out even if it was edited since symshard wrote it (a file symshard did not write is never replaced)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run=_calibrate)

    p = sub.add_parser("model", help="a whole model: parameters, training time and memory, serving rooflines")
    p.add_argument("name", nargs="?", help="a preset (llama3-70b, gemma-7b, ...); none lists them")
    p.add_argument("--list", action="store_true", help="list the presets")
    p.add_argument("--sizes", metavar="L=48,F=...", help="override sizes: L, D, F, N, K, H, V, E, k")
    p.add_argument("--train", action="store_true", help="training: time at an MFU, memory, compute-bound schemes")
    p.add_argument("--serve", action="store_true", help="serving: KV cache, largest batch, decode roofline, TP limits")
    p.add_argument("--tokens", metavar="15e12", help="tokens of the training run")
    p.add_argument("--chips", metavar="N", help="chips (training; serving on one axis)")
    p.add_argument("--mfu", metavar="0.4", help="the fraction of peak FLOP/s training reaches")
    p.add_argument("--batch", metavar="B", help="tokens per training step, or sequences decoding together")
    p.add_argument("--context", metavar="T", help="tokens of context per sequence (serving)")
    p.add_argument("--mesh", metavar="X=4,Y=2", help="the slice serving the model (its axes all split the model)")
    p.add_argument("--policy", default="mlp", help="activation checkpoints: mlp (default), layer, none, or a count")
    p.add_argument("--optimizer", default="adam", help="adam (default, 8 B/param), adam-master, sgd-momentum, sgd")
    p.add_argument("--gradients", action="store_true", help="count the gradients as kept (the chapter does not)")
    p.add_argument("--comm-overlap", "--overlap", dest="overlap", default="axes", metavar="axes|none",
                   help="how collectives on different mesh axes add up: axes (overlap, default) or none (serial)")  # fmt: skip
    p.add_argument("--dtype", default="bf16", help="weights' dtype: bf16 (default), int8, fp8, ...")
    p.add_argument("--kv-dtype", help="the KV cache's dtype (default: the weights')")
    p.add_argument("--hw", metavar="CHIP", help="hardware preset, e.g. tpu-v5p, tpu-v5e, h100")
    p.add_argument("--hw-set", metavar="K=V,...", help="override or supply constants, e.g. W_hbm=3.4e12")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run=_model)

    p = sub.add_parser(
        "transfer",
        help="bytes moved without a collective: chip to chip, many to one, host to chip; a slice's totals",
        description="Point to point inside a slice (--from, --to), every chip to one (--gather-to), the hosts to "
        "the chips over PCIe (--host), or what a slice adds up to (--totals), as the book's TPU chapter prices them.",
    )
    p.add_argument("--hw", metavar="CHIP", help="hardware preset, e.g. tpu-v5e, tpu-v5p (see 'symshard hardware')")
    p.add_argument("--hw-set", metavar="K=V,...", help="override or supply constants, e.g. T_hop=2e-6,W_ici=9e10")
    p.add_argument("--slice", metavar="4x4", help="the slice's shape: 4x4, 4x4x4, 16x20x28")
    p.add_argument("--from", dest="source", metavar="0,0", help="the chip sending (one coordinate per axis)")
    p.add_argument("--to", dest="target", metavar="3,3", help="the chip receiving")
    p.add_argument("--gather-to", metavar="0,0,0", help="every other chip of the slice sends --bytes to this chip")
    p.add_argument("--host", action="store_true", help="the hosts send --bytes to the chips over PCIe, split evenly")
    p.add_argument("--totals", action="store_true", help="what the slice adds up to: FLOP/s, HBM, hosts, DCN")
    p.add_argument("--bytes", metavar="1GB", help="bytes to move: 1GB, 64MiB, 16GiB, 1e9 (from each sender)")
    p.add_argument(
        "--chips", metavar="N", help="chips (--host: how many share the bytes; --totals: instead of --slice)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run=_transfer)

    p = sub.add_parser("problems", help="worked problems: list, show, check, generate, schema")
    psub = p.add_subparsers(dest="problems_command", metavar="ACTION", parser_class=_ArgumentParser, required=True)
    q = psub.add_parser("list", help="the problem families")
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(q)
    q.set_defaults(run=_problems_list)
    q = psub.add_parser("show", help="one problem, with hints, solution and answers")
    q.add_argument("family", help="a family name (see 'symshard problems list')")
    q.add_argument("--seed", type=int, default=0, help="the variant (default 0)")
    _add_lang(q, help=_PROBLEM_LANG_HELP)
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--json", action="store_true", help="print the problem's JSON record")
    _add_budget(q)
    q.set_defaults(run=_problems_show)
    q = psub.add_parser(
        "check", help="grade answers to one problem (exit 1 if any is wrong)",
        description="Grade answers to one problem: right within its tolerance, a known mistake (with feedback), "
        "or neither. Exit 0 when every answer is right, 1 otherwise.",
    )  # fmt: skip
    q.add_argument("family", help="a family name (see 'symshard problems list')")
    q.add_argument("answers", nargs="+", metavar="NAME=VALUE", help="e.g. time='5.87 ms' (units optional)")
    q.add_argument("--seed", type=int, default=0, help="the variant (default 0)")
    _add_lang(q, help=_PROBLEM_LANG_HELP)
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_budget(q)
    q.set_defaults(run=_problems_check)
    q = psub.add_parser("generate", help="a reproducible problem set with its answer key and exports")
    q.add_argument("--seed", type=int, required=True, help="the set's seed: the same seed gives the same set")
    q.add_argument("--count", type=int, help="how many problems, taken round-robin over the families")
    q.add_argument("--per-family", type=int, help="how many problems of each family")
    q.add_argument("--family", action="append", help="only this family (repeat for several)")
    q.add_argument("--difficulty", action="append", choices=["easy", "medium", "hard"], help="only this difficulty")
    q.add_argument("--out", required=True, metavar="DIR", help="folder to write into")
    q.add_argument(
        "--format", default="all", choices=["md", "json", "moodle", "qti12", "qti21", "pdf", "prairielearn", "all"],
        help="what to write: Markdown, JSON, Moodle XML, QTI 1.2 (Canvas), QTI 2.1, PDF (sheet and key), "
        "PrairieLearn questions, or all of them (default)",
    )  # fmt: skip
    q.add_argument("--title", help="the set's title (default 'Problem set', in the set's language)")
    q.add_argument("--solutions", action="store_true", help="fold the solutions into problems.md too")
    _add_lang(q, help=_PROBLEM_LANG_HELP)
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_budget(q)
    q.set_defaults(run=_problems_generate)
    q = psub.add_parser("schema", help="the JSON Schema of problems.json")
    q.add_argument("--json", action="store_true", help="(the output is JSON anyway)")
    q.set_defaults(run=_problems_schema)

    p = sub.add_parser("site", help="the docs site with generated problem sets: build, serve, prepare")
    psub = p.add_subparsers(dest="site_command", metavar="ACTION", parser_class=_ArgumentParser, required=True)
    q = psub.add_parser("build", help="build the static site (needs the docs extra)")
    q.add_argument("--out", default="_site", metavar="DIR", help="where the site goes (default _site)")
    q.add_argument("--src", metavar="DIR", help="also keep the generated MkDocs project in DIR")
    q.add_argument("--site-url", metavar="URL", help=_SITE_URL_HELP)
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(run=_site_build)
    q = psub.add_parser("serve", help="build the site, then serve it on localhost")
    q.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    q.add_argument("--out", default="_site", metavar="DIR", help="where the site goes (default _site)")
    q.add_argument("--no-build", action="store_true", help="serve what is in --out without building")
    q.add_argument("--site-url", metavar="URL", help=_SITE_URL_HELP)
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.set_defaults(run=_site_serve)
    q = psub.add_parser("prepare", help="write the MkDocs project (pages, problem sets, mkdocs.yml) and stop")
    q.add_argument("--out", required=True, metavar="DIR", help="folder for the project")
    q.add_argument("--site-url", metavar="URL", help=_SITE_URL_HELP)
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(run=_site_prepare)

    p = sub.add_parser("book", help="the chapter's worked answers, recomputed")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_book)

    p = sub.add_parser("hardware", help="the hardware presets and their sources")
    p.add_argument("name", nargs="?", help="one preset to show in full")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run=_hardware)

    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or tcsh)",
        description="Print a script that completes symshard's commands and options in your shell.",
        epilog="install it:\n  bash: symshard completion bash > ~/.local/share/bash-completion/completions/symshard\n"
        "  zsh:  symshard completion zsh > ~/.zfunc/_symshard   (with fpath+=(~/.zfunc) before compinit)\n"
        "  tcsh: symshard completion tcsh >> ~/.tcshrc",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=["bash", "zsh", "tcsh"], help="the shell")
    p.set_defaults(run=_completion)
    _add_examples(sub, ())
    return parser


EXAMPLES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("shard",): ("symshard shard 'A[I_XY, J]' --mesh X=8,Y=2 --shape I=1024,J=4096 --dtype fp32",),
    ("collective",): (
        "symshard collective 'AllGather_X(A[I_X, J])' --mesh X=16 --shape I=4096,J=8192 --hw tpu-v5e",
        "symshard collective 'AllReduce_X(A[B, F]{U_X})' --mesh X=16 --shape B=1024,F=16384 --hw h100",
    ),
    ("matmul",): (
        "symshard matmul 'X[B, D] · Y[D_X, F] -> Z[B, F]' --mesh X=8 --shape B=1024,D=8192,F=16384 --hw tpu-v5e",
        "symshard matmul 'X[B, S, D_X] · W[D_Y, F_Z] -> Y[B, S, F]' --mesh X=2,Y=4,Z=2 --hw tpu-v5p",
    ),
    ("verify",): ("symshard verify 'A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]' --mesh X=4,Y=2 --shape I=64,J=64,K=64",),
    ("compare",): (
        "symshard compare 'X[B, D] · Y[D_X, F] -> Z[B, F]' --solve-for B --hw tpu-v5p",
        (
            "symshard compare 'X[B, D] · Y[D_X, F] -> Z[B, F]' --solve-for B --mesh X=8 --shape F=16384 --hw tpu-v5p "
            "--map B,D"
        ),
    ),
    ("best-sharding",): (
        (
            "symshard best-sharding 'x[B, D] · W[D, F] -> y[B, F]' --mesh X=2,Y=2 --shape B=128,D=8192,F=32768 "
            "--hw tpu-v5e --memory 300MB"
        ),
    ),
    ("layer",): (),  # written with its own parser above
    ("calibrate",): (
        (
            "symshard calibrate all_reduce_perf.txt --collective allreduce --ranks 16 --per-node 8 --hw a100 "
            "--out my-cluster.toml"
        ),
    ),
    ("model",): (
        "symshard model --list",
        "symshard model llama3-70b --train --chips 8960 --tokens 15e12 --mfu 0.4 --hw tpu-v5p",
        "symshard model llama3-70b --serve --batch 32 --context 8192 --mesh X=4,Y=2 --dtype int8 --hw tpu-v5e",
    ),
    ("transfer",): (
        "symshard transfer --hw tpu-v5e --slice 4x4 --from 0,0 --to 3,3 --bytes 1GB",
        "symshard transfer --hw tpu-v5p --slice 4x4x4 --gather-to 0,0,0 --bytes 64MiB",
        "symshard transfer --hw tpu-v5e --host --bytes 16GiB --chips 8",
        "symshard transfer --hw tpu-v5p --slice 16x20x28 --totals",
    ),
    ("problems", "list"): ("symshard problems list", "symshard problems list --json"),
    ("problems", "show"): (
        "symshard problems show allgather-time --seed 7",
        "symshard problems show allgather-time --seed 7 --lang zh",
    ),
    ("problems", "check"): ("symshard problems check total-memory --seed 3 'total=1 MiB' 'copies=4'",),
    ("problems", "generate"): (
        "symshard problems generate --seed 7 --count 10 --out week3",
        "symshard problems generate --seed 7 --per-family 2 --family allgather-time --lang zh --format moodle --out zh-set",
    ),
    ("problems", "schema"): ("symshard problems schema > problems.schema.json",),
    ("site", "build"): (
        "symshard site build",
        "symshard site build --out public --site-url https://example.org/symshard/",
    ),
    ("site", "serve"): ("symshard site serve", "symshard site serve --no-build --port 8001"),
    ("site", "prepare"): ("symshard site prepare --out site-project",),
    ("book",): ("symshard book",),
    ("hardware",): ("symshard hardware", "symshard hardware tpu-v5p"),
    ("completion",): (),  # its install lines are its examples
}
"""A few command lines for each command's --help (every one runs as written: tests/test_cli.py)."""


def _add_examples(sub: argparse._SubParsersAction, path: tuple[str, ...]) -> None:
    for name, parser in sub.choices.items():
        lines = EXAMPLES.get((*path, name), ())
        if lines and parser.epilog is None:
            parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in lines)
            parser.formatter_class = argparse.RawDescriptionHelpFormatter
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _add_examples(action, (*path, name))


def _language_in(argv: Sequence[str]) -> str:
    """The language to print an error in before (or without) a parsed command line."""
    value = None
    for i, token in enumerate(argv):
        if token == "--lang" and i + 1 < len(argv):
            value = argv[i + 1]
        elif token.startswith("--lang="):
            value = token.partition("=")[2]
    try:
        return language_from(value if value in LANGUAGES else None)
    except SymshardError:
        return "en"


def _language(args: argparse.Namespace) -> str:
    """``--lang`` (after or before the command), else ``$SYMSHARD_LANG``, else English.

    A problem command passes its language to the family, which says which languages it has.
    """
    explicit = getattr(args, "lang", None) or getattr(args, "global_lang", None)
    if args.command == "problems":
        chosen = explicit or language_from(None)
        args.lang = chosen
        return shown_language(chosen)
    return language_from(explicit)


def _error_line(err: SymshardError, language: str) -> str:
    if language == "en":
        return ENGLISH["error.prefix"] + err.one_line()
    from .i18n.explain import error_line

    return _say("error.prefix", language) + error_line(err, language)


def _error_json(err: SymshardError, language: str) -> dict:
    """``{"error": {"type", "message", "hint"}}``: the error as ``--json`` prints it."""
    from .i18n.explain import ENGLISH as WORDS

    message, hint = sentence(err.message, language), sentence(err.hint, language) if err.hint else ""
    if err.text is not None and err.span is not None:
        column = err.span[0] + 1
        if f"'{err.text}'" in err.message:
            message += keyed(WORDS, "error.column", language, column=column)
        else:
            message += keyed(WORDS, "error.column_of", language, column=column, text=err.text)
    return {"error": {"type": type(err).__name__, "message": message, "hint": hint}}


def _as_error(err: BaseException) -> SymshardError:
    """Any failure as a SymshardError with a one-line message and a hint (never a traceback)."""
    if isinstance(err, SymshardError):
        return err
    # the system's or Python's own words (an OSError's strerror, an exception's text) are quoted as they come
    if isinstance(err, OSError):
        why = str(err.strerror or err)
        hint = say("check the path, its permissions and the free disk space")
        if err.filename:
            return UsageError(say("{why}: '{path}'", why=why, path=err.filename), hint=hint)
        return UsageError(why, hint=hint)
    if isinstance(err, (OverflowError, ZeroDivisionError, ArithmeticError)):
        return UsageError(
            say("a number is out of range ({why})", why=str(err)), hint=say("use smaller or non-zero numbers")
        )
    if isinstance(err, RecursionError):
        return UsageError(say("the input nests too deeply to read"), hint=say("write it with less nesting"))
    if isinstance(err, MemoryError):
        return UsageError(say("ran out of memory"), hint=say("ask for something smaller (fewer axes, smaller sizes)"))
    if isinstance(err, UnicodeError):
        return UsageError(
            say("cannot read or write the text: {why}", why=str(err)), hint=say("use UTF-8 text and a UTF-8 terminal")
        )
    if isinstance(err, ValueError) and "null" in str(err):
        return UsageError(say("a path or text holds a NUL character ({why})", why=str(err)), hint=say("remove it"))
    return SymshardError(
        say("internal error: {why}", why=f"{type(err).__name__}: {err}"),
        hint=say(
            "this is a bug in symshard; please report it with the command line (SYMSHARD_DEBUG=1 shows the traceback)"
        ),
    )


def _report(err: BaseException, language: str, as_json: bool) -> int:
    error = _as_error(err)
    try:
        if as_json:
            print(json.dumps(_error_json(error, language), ensure_ascii=False))
            sys.stdout.flush()
        else:
            print(_error_line(error, language), file=sys.stderr)
    except BrokenPipeError:
        pass
    except UnicodeError:  # a terminal that cannot show the text: fall back to escapes
        line = json.dumps(_error_json(error, "en")) if as_json else ENGLISH["error.prefix"] + error.one_line()
        stream = sys.stdout if as_json else sys.stderr
        stream.write(line.encode("ascii", "backslashreplace").decode("ascii") + "\n")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input; 1 for ``problems check`` when an
    answer is wrong and for ``best-sharding`` when nothing fits).

    Every failure is one line on stderr (a JSON error object on stdout with ``--json``) and
    exit status 2; no traceback unless ``$SYMSHARD_DEBUG`` is set.
    """
    argv = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    language = _language_in(argv)
    as_json = "--json" in argv
    parser = argument_parser()
    try:
        with _argparse_words():
            args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        args.language = language = _language(args)
        as_json = bool(getattr(args, "json", False))
        text, data = args.run(args)
        if getattr(args, "unused_sizes", None):
            unused, context = args.unused_sizes
            text += "\n" + _say("cli.unused_sizes", language, dims=", ".join(unused), text=context)
            data["unused_sizes"] = unused
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except KeyboardInterrupt:
        _report(UsageError(say("interrupted"), hint=say("run the command again to finish it")), language, as_json)
        return 130
    except Exception as err:
        if os.environ.get("SYMSHARD_DEBUG") and not isinstance(err, SymshardError):
            raise
        return _report(err, language, as_json)
    try:
        if as_json:
            print(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `symshard ... | head`: the reader left; not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except UnicodeError:  # a terminal that cannot show the text
        shown = json.dumps(data, indent=2) if as_json else text
        sys.stdout.write(shown.encode("ascii", "backslashreplace").decode("ascii") + "\n")
    return int(getattr(args, "exit_code", 0))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

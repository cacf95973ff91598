"""The commands that shard arrays and plan products: ``shard``, ``matmul``, ``compare`` (with its regime
map) and ``best-sharding``.

Each reads its options (:mod:`.options`), asks :mod:`symshard.planning` and hands the result to
:mod:`symshard.report`, which words it; the planner is imported when a command runs.

Examples:
    >>> from symshard.cli import main
    >>> main(["shard", "A[I_X, J]", "--mesh", "X=4", "--shape", "I=64,J=8"])  # doctest: +ELLIPSIS
    A[I_X, J] on mesh X=4, bf16
    local shape       [I/|X|, J] = [16, 8]
    ...
    0
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..algebra.units import format_number
from ..costs.placement import place
from ..errors import TooLargeError, UsageError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..messages import say
from ..notation.parser import parse_array
from .options import chip_from, cost_model_from, mesh_from, set_aside_unused_sizes

if TYPE_CHECKING:  # the comparison is built lazily, in the command that needs it
    from ..planning.crossover_results import Comparison

__all__ = ["MAX_PRINTED", "MAX_PRINTED_SYMBOLIC", "run_best", "run_compare", "run_matmul", "run_shard"]


MAX_PRINTED = 10_000
"""The most strategies ``matmul`` prints with numbers (about 1.5 ms each in JSON)."""

MAX_PRINTED_SYMBOLIC = 1_000
"""The most strategies ``matmul`` prints with symbolic sizes: each one's formulas are worked out and written
(about 30 ms each in JSON, with their LaTeX)."""


# -- shard -----------------------------------------------------------------------------------------


def run_shard(args: argparse.Namespace) -> tuple[str, dict]:
    from ..report.placements import placement_report

    array = parse_array(args.array)
    chip = chip_from(args)
    mesh = mesh_from(args, [*array.axes, *sorted(array.unreduced)], chip)
    set_aside_unused_sizes(args, array.dim_names, str(array))
    p = place(array, mesh, args.shape, dtype=args.dtype)
    s = place(array, mesh.symbolic(), None, dtype=args.dtype)
    return placement_report(p, s, chip, args.language)


# -- matmul, compare, best -------------------------------------------------------------------------


def _matmul_mesh(args: argparse.Namespace, mm, chip: Hardware | None) -> Mesh:
    arrays = [mm.lhs, mm.rhs] + ([mm.out] if mm.out is not None else [])
    axes = [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))]
    return mesh_from(args, list(dict.fromkeys(axes)), chip)


def run_matmul(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul
    from ..planning.planner import plan
    from ..report.plans import plan_data, plan_text

    mm = matmul(args.matmul, outer=args.outer)
    chip = chip_from(args)
    mesh = _matmul_mesh(args, mm, chip)
    set_aside_unused_sizes(args, mm.dims, str(mm))
    how = args.comm_overlap
    every = bool(args.every)
    split = args.split
    model = cost_model_from(args, chip)
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


def run_compare(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul
    from ..planning.crossovers import check_compared, compare
    from ..planning.planner import plan
    from ..report.plans import compare_data, compare_text, map_hint, pairs_hint

    mm = matmul(args.matmul, outer=args.outer)
    chip = chip_from(args)
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
    set_aside_unused_sizes(args, mm.dims, str(mm))
    # the plan matmul lists for the same options (symbolic, so the chip's constants stay symbols): the same
    # strategies, numbered alike in matmul, compare, --pairs, the map and the JSON
    options = dict(dtype=args.dtype, model=cost_model_from(args, chip), overlap=not args.serial,
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


def run_best(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul
    from ..planning.search import best_sharding
    from ..report.plans import search_data, search_text

    chain = [matmul(text, outer=args.outer) for text in args.matmul]
    chip = chip_from(args)
    if chip is None:
        raise UsageError(
            say("best-sharding needs a chip to rank times"), hint=say("add --hw tpu-v5e (or another preset)")
        )
    first = chain[0]
    mesh = _matmul_mesh(args, first, chip)
    set_aside_unused_sizes(args, sorted({d for mm in chain for d in mm.dims}), " ; ".join(map(str, chain)))
    fixed = {}
    for text in args.fixed or []:
        arr = parse_array(text)
        fixed[arr.name] = arr
    r = best_sharding(
        chain, mesh, args.shape, hardware=chip, memory_limit=args.memory, out=args.out, fixed=fixed,
        dtype=args.dtype, model=cost_model_from(args, chip), overlap=not args.serial, comm_overlap=args.comm_overlap,
    )  # fmt: skip
    args.exit_code = 0 if r.best is not None else 1  # a shell script can tell "nothing fits" from an answer
    return search_text(r, language=args.language), search_data(r, args.language)

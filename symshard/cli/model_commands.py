"""The commands about layers and whole models: ``layer`` (the MLP block under a parallelism scheme),
``model`` (a real model described, trained or served), ``transfer`` (bytes moved across a slice or to
the host) and ``book`` (the book's worked answers, recomputed).

Examples:
    >>> from symshard.cli import main
    >>> main(["transfer", "--host", "--bytes", "1GB", "--hw", "tpu-v5e"])  # doctest: +ELLIPSIS
    1,000,000,000 B (954 MiB) from the host over PCIe to one chip
    ...
    0
"""

from __future__ import annotations

import argparse
import math

import sympy

from ..errors import UsageError
from ..messages import Message, say
from ..notation.sizes import parse_sizes
from .options import chip_from

__all__ = ["run_book", "run_layer", "run_model", "run_transfer"]


# -- layer -----------------------------------------------------------------------------------------


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


def run_layer(args: argparse.Namespace) -> tuple[str, dict]:
    from ..models.schemes import layer
    from ..report.layers import layer_report

    chip = chip_from(args)
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


# -- model -----------------------------------------------------------------------------------------


_MODEL_SIZES = {"L": "layers", "D": "d_model", "F": "d_ff", "N": "heads", "K": "kv_heads", "H": "head_dim",
                "V": "vocab", "E": "experts", "k": "experts_per_token"}  # fmt: skip


def run_model(args: argparse.Namespace) -> tuple[str, dict]:
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
        args.name, mode=mode, sizes=sizes, hardware=chip_from(args), tokens=args.tokens, chips=args.chips, mfu=args.mfu,
        batch=args.batch, policy=args.policy, optimizer=args.optimizer, gradients=args.gradients,
        context=args.context, mesh=args.mesh, dtype=args.dtype, kv_dtype=args.kv_dtype, overlap=args.overlap,
        language=args.language, stages=args.stages, microbatches=args.microbatches, kv_shard=args.kv_shard,
        decode=args.decode,
    )  # fmt: skip


# -- transfer --------------------------------------------------------------------------------------


def _rat(x) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator)


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


def run_transfer(args: argparse.Namespace) -> tuple[str, dict]:
    from ..models.transfers import Gather, Route, gather_to_one, point_to_point, slice_shape
    from ..report.transfers import host_report, ici_report, slice_totals_report

    question = _transfer_question(args)
    chip = chip_from(args)
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


# -- book ------------------------------------------------------------------------------------------


def run_book(args: argparse.Namespace) -> tuple[str, dict]:
    from ..models.worked import open_answers, worked_answers
    from ..report.book import book_report

    return book_report(worked_answers(), open_answers())

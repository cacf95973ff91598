"""What several commands read from their options the same way: the chip (``--hw``, ``--hw-set``), the mesh
(``--mesh``, ``--topology``), the collective cost model (``--model``, else the hardware file's), the
``--shape`` sizes a command has no use for, and a problem command's time and memory budget.

The command modules (:mod:`.plan_commands`, :mod:`.machine_commands`, :mod:`.model_commands`,
:mod:`.verify_command`, :mod:`.course_commands`) take these from here, so that every command reads an
option alike.

Examples:
    >>> from symshard.cli.parser import argument_parser
    >>> args = argument_parser().parse_args(["shard", "A[I_X, J]", "--hw", "tpu-v5e", "--hw-set", "W_hbm=1e12"])
    >>> chip_from(args).name, str(mesh_from(args, ["X"], None))
    ('tpu-v5e', 'X')
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..errors import HardwareError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware
from ..messages import say
from ..notation.sizes import parse_sizes

__all__ = ["chip_from", "cost_model_from", "mesh_from", "problem_budget", "set_aside_unused_sizes"]


def problem_budget(args: argparse.Namespace):
    from ..problems.budget import Budget

    return Budget.of(args.time_limit, args.memory_limit)


def set_aside_unused_sizes(args: argparse.Namespace, dims: Sequence[str], context: str) -> None:
    """Drop ``--shape`` sizes of dims that ``context`` does not have (one shape serves several commands);
    :func:`~symshard.cli.main` prints a note naming them. With ``--strict`` they stay, and the library refuses them."""
    if not getattr(args, "shape", None) or getattr(args, "strict", False):
        return
    entries = parse_sizes(args.shape, what=say("shape"))
    unused = [name for name, _, _ in entries if name not in set(dims)]
    if unused:
        args.shape = ",".join(f"{name}={value}" for name, value, _ in entries if name not in unused) or None
        args.unused_sizes = (unused, context)


def chip_from(args: argparse.Namespace) -> Hardware | None:
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


def cost_model_from(args: argparse.Namespace, chip: Hardware | None) -> str:
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


def mesh_from(args: argparse.Namespace, axes: Sequence[str], chip: Hardware | None) -> Mesh:
    topology = None
    if args.topology:
        topology = {name: value for name, value, _ in parse_sizes(args.topology, what=say("topology"))}
    if args.mesh:
        return Mesh(args.mesh, hardware=chip, topology=topology)
    return Mesh(dict.fromkeys(axes), hardware=chip, topology=topology)

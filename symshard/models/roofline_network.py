"""The rooflines' network-aware part: the slice a scheme's collectives run on, and what the bound says of it.

On a GPU, :func:`symshard.models.parallelism.roofline` costs a scheme's collectives through the
network's levels (:mod:`.networked`: NVLink inside a node, the leaf switches' scale-out network, the
spine) once it knows how far they reach. This module turns the chips or the mesh given into that
reach: the slice's size and axes (:func:`slice_of`), the mesh each scheme runs on
(:func:`scheme_mesh`: ``dp`` and ``fsdp`` all on X, ``tp`` on Y, the pipelined schemes' stages
across nodes), and the notes a roofline carries: which level binds (:func:`network_note`), or that
a bound without a chip count holds inside one NVLink domain only (:func:`one_domain_note`). It sits
in the models layer, on :mod:`.bounds` and :mod:`.networked`.

Examples:
    >>> scheme_mesh("pipeline+dp", sympy.Integer(64), None, sympy.Integer(8))
    {'S': 8, 'X': 8}
    >>> slice_of(None, None, "X=2,Y=8")
    (16, {'X': 2, 'Y': 8})
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

from ..algebra.units import format_number
from ..errors import PlanError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..messages import Message, say
from .bounds import PIPELINED
from .networked import Network
from .training import chip_count

__all__ = ["network_note", "one_domain_note", "scheme_mesh", "slice_of"]


def slice_of(
    hw: Hardware | None, chips: object, mesh: Mesh | Mapping[str, object] | str | None
) -> tuple[sympy.Expr | None, dict[str, sympy.Expr] | None]:
    """The chip count and the mesh's sizes (in order) from ``chips`` and ``mesh``.

    Raises:
        ModelError: a chip count that is not a positive whole number.
        PlanError: a mesh and a chip count that disagree, or a mesh whose sizes are not numbers.
    """
    n = None if chips is None else chip_count(chips)
    if mesh is None:
        return n, None
    m = mesh if isinstance(mesh, Mesh) else Mesh(mesh, hardware=hw)
    sizes = {a.name: a.size for a in m.axes}
    if not all(v.is_number for v in sizes.values()):
        raise PlanError(
            say("the mesh {mesh} needs a size for every axis", mesh=str(m)), hint=say("e.g. mesh='X=2,Y=8'")
        )
    total = sympy.prod(sizes.values())
    if n is not None and n != total:
        raise PlanError(
            say("{chips} {chips:chip|chips} and the mesh {mesh} ({count} {count:chip|chips}) disagree", chips=str(n), mesh=str(m),
                count=str(total)),
            hint=say("give one of them"),
        )  # fmt: skip
    return sympy.Integer(total), sizes


def scheme_mesh(key: str, n: sympy.Expr | None, sizes: dict | None, stages: sympy.Expr | None) -> dict | None:
    """The mesh a scheme's collectives run on (mesh order, the last axis fastest), from the chips or the
    mesh given; None when the network cannot be costed from them (FSDP × TP without its split, pipelining
    without its stages).

    Raises:
        PlanError: a mesh whose axes are not the scheme's.
    """
    axes = {"dp": ("X",), "fsdp": ("X",), "tp": ("Y",), "fsdp+tp": ("X", "Y"), "pipeline+dp": ("S", "X"),
            "pipeline+fsdp": ("S", "X")}[key]  # fmt: skip
    if sizes is not None:
        if set(sizes) != set(axes) and not (key in PIPELINED and set(sizes) == {"X"}):
            raise PlanError(
                say("the {scheme} scheme runs on mesh axes {axes}, not {given}", scheme=key, axes=", ".join(axes),
                    given=", ".join(sizes)),
                hint=say("e.g. mesh='{example}'", example=",".join(f"{a}={8 if a != 'S' else 4}" for a in axes)),
            )  # fmt: skip
        return sizes
    if n is None:
        return None
    if key in PIPELINED:
        if stages is None or not stages.is_number:
            return None
        if n % stages:
            raise PlanError(
                say(
                    "{stages} pipeline {stages:stage|stages} do not split {chips} {chips:chip|chips} evenly",
                    stages=str(stages),
                    chips=str(n),
                ),
                hint=say("give a stage count that divides the chips"),
            )
        return {"S": stages, "X": n / stages}  # the stages across nodes, each data-parallel group inside
    if key == "fsdp+tp":
        return None
    return {axes[0]: n}


def one_domain_note(hw: Hardware, key: str) -> Message:
    """Why a GPU bound without a mesh holds inside one NVLink domain only."""
    what = say("give the mesh (mesh='X=..,Y=..')") if key == "fsdp+tp" else (
        say("give the chips and the stages (chips=, stages=)") if key in PIPELINED else say("give the chips (chips=)"))  # fmt: skip
    return say(
        "this bound uses W_nvlink: it holds inside one NVLink domain of {node} {node:GPU|GPUs}; {what} to cost the "
        "collectives through the network's levels",
        node=str(hw.node_size) if hw.node_size is not None else "?",
        what=what,
    )


def network_note(hw: Hardware, net: Network) -> Message:
    """Which level binds the scheme's collectives, in words."""
    c = net.binding
    if c is None:
        return say("nothing moves: every axis has one chip")
    if c.inside_one_domain:
        return say(
            "the collectives stay inside one NVLink domain of {node} {node:GPU|GPUs}: W_collective = W_nvlink = {bandwidth} B/s",
            node=str(hw.node_size) if hw.node_size is not None else "?",
            bandwidth=_rate(c.bandwidth),
        )
    return say(
        "the collectives over {axes} cross {levels}; {level} binds: W_collective = {bandwidth} B/s",
        axes=", ".join(c.axes),
        levels=", ".join(f"{lv.fabric.value} ({lv.devices})" for lv in c.levels),
        level=c.binding.fabric.describe,
        bandwidth=_rate(c.bandwidth),
    )


def _rate(value: sympy.Expr) -> str:
    """A bandwidth as the reports print it (``4e11``, ``5.14e11``)."""
    return format_number(value)

"""A layer's collectives costed through a GPU network's levels, as ``symshard collective`` costs them.

The layer programs of :mod:`symshard.models.schemes` write each collective's time on one network:
``W_ici`` on a TPU, ``W_nvlink`` inside one GPU node. A GPU mesh axis that reaches beyond a node
crosses NVLink, the scale-out network of the leaf switches and the fat tree's spine, and NCCL runs
the collective level by level: the time is the slowest level's for its share of the bytes. This
module hands every collective step of a program to the one costing module
(:class:`~symshard.costs.costmodels.Costing`, over a :class:`~symshard.machines.mesh.Mesh` wired by
the chip's rules) and reads each level's time back in the book's terms: the bandwidth
``W_collective`` the level gives the collective (the step's own ``W`` scaled by how much longer the
level takes than the step's formula says), and the level that binds, the one with the least.

A step's time through the network is its formula with ``W_collective`` of the binding level in
place of ``W``, so every bound derived from a program keeps its form: data parallelism over 16
H100s, 8 per node, is compute-bound above ``C / W_collective`` tokens per GPU, with
``W_collective`` the node's scale-out egress (4e11 B/s, 8 NICs of 5e10), not NVLink's 4.5e11.
Collectives on different links (an axis inside the node and one across nodes) overlap as the
costing module's :func:`~symshard.costs.costmodels.combine` says.

Examples:
    >>> from symshard.models.schemes import layer
    >>> net = through_network(layer("dp", hardware="h100").program, "h100", {"X": 16})
    >>> [(lv.fabric.value, lv.devices, lv.bandwidth) for lv in net.crossings[0].levels]
    [('nvlink', 8, 450000000000), ('dcn', 2, 400000000000)]
    >>> net.crossings[0].binding.fabric.value, net.inside_one_domain
    ('dcn', False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from ..algebra.mathtext import as_expr
from ..costs.costmodels import Costing, check_model, combine
from ..errors import HardwareError, PlanError, UnknownModelError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware as lookup_hardware
from ..machines.topology import Fabric
from ..messages import say
from ..planning.program import Program, Step, spread

__all__ = ["Crossing", "LevelShare", "Network", "through_network"]


@dataclass(frozen=True, slots=True)
class LevelShare:
    """One network level's part of the collectives over a set of mesh axes.

    Attributes:
        fabric: the level's network.
        devices: the axes' devices it groups (GPUs in a node, nodes, scalable units).
        bandwidth: ``W_collective``: the bandwidth this level gives the collectives, in the units of
            their formulas (a hierarchical AllReduce across H100 nodes gets the node's 4e11 B/s).
    """

    fabric: Fabric
    devices: sympy.Expr
    bandwidth: sympy.Expr


@dataclass(frozen=True, slots=True)
class Crossing:
    """How the collectives over one set of mesh axes cross the network.

    Attributes:
        axes: the mesh axes.
        levels: each level's share, innermost first.
        reasons: why each axis is wired as it is (the mesh's words, a message each).
    """

    axes: tuple[str, ...]
    levels: tuple[LevelShare, ...]
    reasons: tuple[str, ...] = ()

    @property
    def binding(self) -> LevelShare:
        """The level that sets the pace: the least bandwidth (the outer one on a tie)."""
        return min(reversed(self.levels), key=lambda lv: lv.bandwidth)

    @property
    def bandwidth(self) -> sympy.Expr:
        """``W_collective`` of the binding level."""
        return self.binding.bandwidth

    @property
    def inside_one_domain(self) -> bool:
        """Whether every level is NVLink inside one domain (or ICI): nothing crosses a NIC."""
        return all(lv.fabric in (Fabric.NVLINK, Fabric.ICI) for lv in self.levels)


@dataclass(frozen=True)
class Network:
    """A program's collectives costed through a chip's network on a mesh.

    Attributes:
        hardware: the chip.
        mesh: the mesh, wired by the chip's rules (its axes in order, the last varying fastest).
        model: the collective cost model (``book`` or ``ring``).
        crossings: one per set of axes the program's collectives run over.
        bandwidth_symbol: the ``W`` the program's formulas are written in (``W_nvlink`` on a GPU).
    """

    hardware: Hardware
    mesh: Mesh
    model: str
    crossings: tuple[Crossing, ...]
    bandwidth_symbol: sympy.Symbol
    _steps: Mapping[int, tuple[sympy.Expr, frozenset[str]]] = field(default_factory=dict, repr=False)

    def crossing(self, axes: tuple[str, ...] | str) -> Crossing:
        """The crossing of one set of axes (``"X"`` or ``("X", "Y")``).

        Raises:
            PlanError: no collective of the program runs over those axes.
        """
        key = (axes,) if isinstance(axes, str) else tuple(axes)
        for c in self.crossings:
            if c.axes == key:
                return c
        raise PlanError(
            say("no collective runs over {axes}", axes=", ".join(key)),
            hint=say("the collectives run over {axes}", axes="; ".join(", ".join(c.axes) for c in self.crossings)),
        )

    @property
    def inside_one_domain(self) -> bool:
        """Whether every collective stays inside one NVLink domain."""
        return all(c.inside_one_domain for c in self.crossings)

    @property
    def binding(self) -> Crossing | None:
        """The crossing with the least bandwidth (the one that binds a scheme with one set of axes); None
        when nothing moves (every axis of size 1)."""
        return min(self.crossings, key=lambda c: c.bandwidth) if self.crossings else None

    def step_time(self, step: Step) -> sympy.Expr:
        """A collective step's bandwidth-only time through the network: its formula with
        ``W_collective`` of the binding level in place of ``W`` (0 for a step that moves nothing)."""
        if step.index not in self._steps:
            return sympy.Integer(0)
        return self._steps[step.index][0]

    def comm_time(self, program: Program, phase: str | None = None, overlap: str | None = None) -> sympy.Expr:
        """``T_comms`` of a pass (None: both) through the network: the chains of collectives (one resharding
        another's result) one after another, and chains on disjoint links at the same time with ``axes``
        (:func:`~symshard.costs.costmodels.combine`), as :meth:`Program.comm_time` adds them on one network."""
        how = overlap if overlap is not None else program.comm_overlap
        steps = program.collectives(phase)
        first: dict[int, int] = {}
        for s in steps:
            before = next((i for i in s.inputs if i in first), None)
            first[s.index] = first[before] if before is not None else s.index
        chains: dict[int, list[Step]] = {}
        for s in steps:
            chains.setdefault(first[s.index], []).append(s)
        items = []
        for members in chains.values():
            total = sympy.Add(*[self.step_time(s) for s in members])
            links = frozenset().union(*[self._steps.get(s.index, (0, frozenset()))[1] for s in members])
            items.append((total, links))
        return as_expr(combine(items, how))


def through_network(
    program: Program,
    hardware: Hardware | str,
    sizes: Mesh | Mapping[str, object],
    *,
    model: str = "book",
) -> Network:
    """Cost every collective of ``program`` through ``hardware``'s network on a mesh of ``sizes``
    (in mesh order, the last axis varying fastest; axes the program does not use, such as pipeline
    stages outside the data-parallel axis, only place the others).

    Raises:
        PlanError: an axis of the program missing from the mesh, a size that is not a number, or an
            unknown cost model.
        HardwareError: the chip has no figure for a level the collectives cross (an A100 preset's
            scale-out bandwidth, say).
    """
    hw = lookup_hardware(hardware)
    try:
        key = check_model(model)
    except UnknownModelError as err:
        raise PlanError(err.message, hint=err.hint) from None
    mesh = sizes if isinstance(sizes, Mesh) else Mesh(dict(sizes), hardware=hw)
    used = sorted({a for s in program.collectives() for a in s.axes})
    for a in used:
        if a not in mesh or not mesh.size(a).is_number:
            raise PlanError(
                say("the network costs the collectives over {axis} only with its size", axis=a),
                hint=say("give the mesh with every axis's size, e.g. {example}", example=f"{a}=16"),
            )
    values = dict(hw.constants(program.dtype))
    w = Fabric.parse(program.default_fabric).bandwidth
    needed = [w, *(f.bandwidth for a in used for f, _ in mesh.axis(a).levels)]
    for symbol in dict.fromkeys(needed):
        if symbol not in values:
            raise HardwareError(
                say("{chip} has no figure for {symbol}", chip=hw.label, symbol=str(symbol)),
                hint=say("set it with --hw-set {symbol}=VALUE", symbol=str(symbol)),
            )
    costing = Costing(mesh, values, key, hw)
    point: dict[sympy.Symbol, sympy.Expr] = {**values}
    for ax in mesh.axes:
        point[ax.symbol] = ax.size
        point[spread(ax.name)] = sympy.Integer(1)
    steps: dict[int, tuple[sympy.Expr, frozenset[str]]] = {}
    crossings: dict[tuple[str, ...], Crossing] = {}
    for st in program.collectives():
        timing = costing.timing(st.kind, st.axes, st.bytes)
        if not timing.levels:  # over axes of size 1 nothing moves
            steps[st.index] = (sympy.Integer(0), frozenset())
            continue
        formula = as_expr(st.time).xreplace(point)
        shares = []
        for lv in timing.levels:
            # both times are V over a bandwidth: their ratio is how much slower the level is than W
            ratio = sympy.cancel(as_expr(lv.bandwidth_time).xreplace(point) / formula)
            if not ratio.is_number:  # pragma: no cover - the level and the formula move the same V
                raise PlanError(say("cannot compare the level's time with the formula's"),
                                hint=say("this is a bug in symshard"))  # fmt: skip
            shares.append(LevelShare(lv.fabric, as_expr(lv.devices), values[w] / ratio))
        crossing = Crossing(tuple(st.axes), tuple(shares), tuple(mesh.axis(a).note for a in st.axes))
        crossings.setdefault(crossing.axes, crossing)
        steps[st.index] = (as_expr(st.time).xreplace({w: crossing.bandwidth}), timing.resources)
    return Network(hw, mesh, key, tuple(crossings.values()), w, steps)

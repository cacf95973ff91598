"""The device mesh: named axes, their sizes (numbers or symbols) and their wiring.

``Mesh({"X": 8, "Y": 2})`` is the book's ``Mesh({'X': 8, 'Y': 2})``. Each axis
also records its :class:`~symshard.machines.topology.Topology` and
:class:`~symshard.machines.topology.Fabric`; they default to a two-way wraparound ring of
ICI links, the book's default, and follow the chip's rules when a hardware
preset is named (a 4-wide TPU v5e axis has no wraparound, an 8-GPU axis is an
NVLink switch). A size left out (``Mesh("X, Y")``) is the symbol ``|X|``.

Examples:
    >>> m = Mesh({"X": 8, "Y": 4}, hardware="tpu-v5e")
    >>> m.size("Y"), m.axis("Y").topology.value, m.devices
    (4, 'line', 32)
    >>> str(Mesh("X, Y=2")), str(Mesh("X=8,Y=2").symbolic())
    ('X,Y=2', 'X,Y')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy

from ..algebra.symbols import axis as axis_symbol
from ..errors import MeshError, NotationError, TooLargeError, UnknownAxisError, did_you_mean
from ..messages import Message, say
from ..notation.arrays import check_axis_name
from ..notation.sizes import MAX_SIZE, parse_size_value, parse_sizes
from .topology import Fabric, Topology

if TYPE_CHECKING:
    from .chips import Hardware

__all__ = ["MAX_AXES", "Mesh", "MeshAxis", "resolve_mesh"]

MAX_AXES = 32
"""The most axes a mesh may have. Real meshes have up to five or six (a few more with axes in parts); the
planners' work grows exponentially with them, so more is refused when the mesh is built."""


@dataclass(frozen=True, slots=True)
class MeshAxis:
    """One named mesh axis: size, topology, fabric, the network levels it crosses and why.

    ``spans`` lists, innermost first, each network level the axis's devices cross and how many of them
    it groups there (their product is the size): ``((nvlink, 8), (dcn, 2))`` for 16 GPUs that are 8 per
    node over 2 nodes. Empty means one level, the axis's ``fabric``, for all its devices.

    ``part_of`` names the axis this one is a part of (see :mod:`symshard.machines.subaxes`), whose links it
    shares; ``stride`` is how many of that axis's devices apart its neighbours sit (1: next to each other).
    """

    name: str
    size: sympy.Expr
    topology: Topology = Topology.RING
    fabric: Fabric = Fabric.ICI
    note: str = field(default="", compare=False)
    spans: tuple[tuple[Fabric, sympy.Expr], ...] = ()
    part_of: str = ""
    stride: int = 1

    def __post_init__(self) -> None:
        try:
            check_axis_name(self.name)
        except NotationError as err:
            raise MeshError(err.message, hint=err.hint) from None
        object.__setattr__(self, "size", _size(self.size, self.name))
        object.__setattr__(self, "topology", Topology.parse(self.topology))
        object.__setattr__(self, "fabric", Fabric.parse(self.fabric))
        spans = tuple((Fabric.parse(f), sympy.Integer(n) if isinstance(n, int) else n) for f, n in self.spans)
        count = sympy.prod([n for _, n in spans]) if spans else self.size
        if spans and count.is_number and self.size.is_number and count != self.size:
            raise MeshError(
                say(
                    "mesh axis {axis} has {size} {size:device|devices}, but its network levels hold {count}",
                    axis=self.name,
                    size=str(self.size),
                    count=str(count),
                ),
                hint=say(
                    "the devices of each level multiply to the axis size, e.g. [('nvlink', 8), ('dcn', 2)] for 16"
                ),
            )
        if len(spans) == 1 and spans[0] == (self.fabric, self.size):
            spans = ()  # one level: the same axis, however it was written
        object.__setattr__(self, "spans", spans)

    @property
    def levels(self) -> tuple[tuple[Fabric, sympy.Expr], ...]:
        """Each network level the axis crosses with its devices there, innermost first."""
        return self.spans or ((self.fabric, self.size),)

    @property
    def symbol(self) -> sympy.Symbol:
        """The symbol ``|X|`` for this axis's size."""
        return axis_symbol(self.name)

    def __str__(self) -> str:
        return f"{self.name}={self.size}"

    @property
    def fabrics(self) -> str:
        """The networks the axis crosses, innermost first: ``'ici'``, ``'nvlink+dcn'``."""
        return "+".join(f.value for f, _ in self.levels)

    def describe(self) -> Message:
        """``'Y=4 (line without wraparound, ici: TPU v5e wraps only axes of 16)'``."""
        if self.note:
            return say(
                "{axis}={size} ({topology}, {fabric}: {note})",
                axis=self.name,
                size=str(self.size),
                topology=self.topology.describe,
                fabric=self.fabrics,
                note=self.note,
            )
        return say(
            "{axis}={size} ({topology}, {fabric})",
            axis=self.name,
            size=str(self.size),
            topology=self.topology.describe,
            fabric=self.fabrics,
        )


def _size(value: object, name: str) -> sympy.Expr:
    if value is None or (isinstance(value, str) and value.strip() in ("?", "", name)):
        return axis_symbol(name)
    if isinstance(value, sympy.Basic):
        expr = value
    elif isinstance(value, bool) or not isinstance(value, (int, str)):
        if isinstance(value, float) and value.is_integer():
            expr = sympy.Integer(int(value))
        else:
            raise MeshError(
                say("mesh axis {axis} has size {value}, which is not a positive integer", axis=name, value=repr(value)),
                hint=say("give whole numbers of devices, e.g. {example}", example=f"{name}=4"),
            )
    else:
        try:
            expr = sympy.Integer(int(str(value).strip()))
        except ValueError:
            raise MeshError(
                say("mesh axis {axis} has size {value}, which is not a positive integer", axis=name, value=repr(value)),
                hint=say("give whole numbers of devices, e.g. {name}=4 (or {name}=? for a symbol)", name=name),
            ) from None
    if expr.is_number and not (expr.is_integer and expr.is_positive):
        raise MeshError(
            say("mesh axis {axis} has size {value}, which is not a positive integer", axis=name, value=repr(value)),
            hint=say("give whole numbers of devices, e.g. {example}", example=f"{name}=4"),
        )
    if expr.is_number and expr > MAX_SIZE:
        raise MeshError(
            say(
                "mesh axis {axis} has {count} {count:device|devices}, more than {limit}",
                axis=name,
                count=f"{float(expr):.3e}",
                limit=f"{MAX_SIZE:.0e}",
            ),
            hint=say("check the size for a typo"),
        )
    if not expr.is_number and not (expr.is_positive and expr.is_integer):
        raise MeshError(
            say(
                "mesh axis {axis} has symbolic size {size}, which is not declared a positive integer",
                axis=name,
                size=str(expr),
            ),
            hint=say("use symshard.algebra.symbols.axis(name) for symbolic axis sizes"),
        )
    return expr


@dataclass(frozen=True, init=False, slots=True)
class Mesh:
    """A device mesh: an ordered tuple of :class:`MeshAxis`.

    Args:
        axes: ``{"X": 8, "Y": 2}``, the text ``"X=8,Y=2"`` (``"X,Y"`` for symbolic
            sizes), or :class:`MeshAxis` objects.
        topology: one topology for every axis, or a mapping axis name → topology;
            overrides what ``hardware`` implies.
        fabric: one fabric for every axis, or a mapping axis name → fabric.
        hardware: a :class:`~symshard.machines.chips.Hardware` or preset name whose
            wiring rules pick each axis's topology, fabric and network levels, and whose
            latency model (``nccl`` on GPUs) the mesh keeps.
        latency_model: ``book`` (``max(T_hop · hops, ...)``, the default) or ``nccl`` (NCCL's
            latency added to the bandwidth time); overrides the hardware's.
        spans: the network levels an axis crosses, ``{"X": [("nvlink", 8), ("dcn", 2)]}``; overrides
            what ``hardware`` places (see :mod:`symshard.machines.network`).

    Raises:
        MeshError: a repeated axis, a size that is not a positive integer, an
            unknown topology, or an override for an axis the mesh lacks.
    """

    axes: tuple[MeshAxis, ...]
    latency_model: str = "book"

    def __init__(
        self,
        axes: Mapping[str, object] | str | Iterable[MeshAxis] | Mesh,
        *,
        topology: Mapping[str, object] | str | Topology | None = None,
        fabric: Mapping[str, object] | str | Fabric | None = None,
        hardware: Hardware | str | None = None,
        latency_model: str | None = None,
        spans: Mapping[str, Iterable[tuple[object, object]]] | None = None,
    ) -> None:
        latency = "book"
        if isinstance(axes, Mesh):
            built = list(axes.axes)
            latency = axes.latency_model
        elif axes is None or isinstance(axes, (int, float, bytes)):
            raise MeshError(
                say("cannot read {value} as a mesh", value=repr(axes)),
                hint=say("pass a mapping like {{'X': 8, 'Y': 2}} or the text 'X=8,Y=2'"),
            )
        elif isinstance(axes, str):
            built = _parse_mesh_text(axes)
        elif isinstance(axes, Mapping):
            built = [MeshAxis(str(n), s) for n, s in axes.items()]
        else:
            built = []
            for a in axes:
                if not isinstance(a, MeshAxis):
                    raise MeshError(
                        say("cannot read {value} as a mesh axis", value=repr(a)),
                        hint=say("pass a mapping like {{'X': 8, 'Y': 2}} or the text 'X=8,Y=2'"),
                    )
                built.append(a)
        names = [a.name for a in built]
        if len(names) > MAX_AXES:
            raise TooLargeError(
                say("a mesh of {count} axes is more than symshard takes ({limit})", count=f"{len(names):,}",
                    limit=MAX_AXES),
                hint=say("give axes that always move together as one (X=2,Y=2 as X=4)"),
            )  # fmt: skip
        for i, n in enumerate(names):
            if n in names[:i]:
                twice = (
                    say("mesh axis {axis} is given twice in '{text}'", axis=n, text=axes)
                    if isinstance(axes, str)
                    else say("mesh axis {axis} is given twice", axis=n)
                )
                raise MeshError(twice, hint=say("name each mesh axis once"))
        if hardware is not None:
            from .presets import hardware as lookup

            hw = lookup(hardware)
            latency = hw.latency_model
            wiring = hw.wiring_for({a.name: a.size for a in built})
            built = [
                MeshAxis(a.name, a.size, w.topology, w.fabric, w.reason, w.spans)
                for a, w in ((a, wiring[a.name]) for a in built)
            ]
        built = _override(built, fabric, "fabric", topology)
        built = _override(built, topology, "topology")
        for name, levels in (spans or {}).items():
            if name not in [a.name for a in built]:
                raise UnknownAxisError(
                    say("{what} given for axis {axis}, which is not in the mesh", what=say("spans"), axis=name),
                    hint=say("the mesh has axes {axes}", axes=", ".join(a.name for a in built)),
                )
            built = [
                MeshAxis(a.name, a.size, a.topology, a.fabric, a.note, tuple(levels))  # type: ignore[arg-type]
                if a.name == name
                else a
                for a in built
            ]
        if latency_model is not None:
            latency = str(latency_model)
            if latency not in ("book", "nccl"):
                raise MeshError(
                    say("unknown latency model '{value}'", value=latency_model), hint=say("use book or nccl")
                )
        object.__setattr__(self, "axes", tuple(built))
        object.__setattr__(self, "latency_model", latency)

    # -- reading ---------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """Axis names in mesh order."""
        return tuple(a.name for a in self.axes)

    @property
    def sizes(self) -> dict[str, sympy.Expr]:
        """Axis name → size."""
        return {a.name: a.size for a in self.axes}

    @property
    def devices(self) -> sympy.Expr:
        """The number of devices: the product of the axis sizes."""
        return sympy.prod([a.size for a in self.axes])

    @property
    def is_numeric(self) -> bool:
        """Whether every axis size is a number."""
        return all(a.size.is_number for a in self.axes)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[MeshAxis]:
        return iter(self.axes)

    def __len__(self) -> int:
        return len(self.axes)

    def axis(self, name: str, *, context: str | None = None, span: tuple[int, int] | None = None) -> MeshAxis:
        """The axis called ``name``.

        Args:
            context: the text (an array, a collective) that named the axis, quoted in errors.
            span: where in ``context`` the axis name stands.

        Raises:
            UnknownAxisError: the mesh has no such axis.
        """
        for a in self.axes:
            if a.name == name:
                return a
        missing = (
            say("mesh axis {axis} in '{text}' is not in the mesh {mesh}", axis=name, text=context, mesh=str(self))
            if context
            else say("mesh axis {axis} is not in the mesh {mesh}", axis=name, mesh=str(self))
        )
        raise UnknownAxisError(
            missing,
            text=context,
            span=span,
            hint=say(
                "the mesh has axes {axes}; add {axis} to the mesh (e.g. --mesh {example}) or {suggestion}",
                axes=", ".join(self.names),
                axis=name,
                example=f"{self},{name}=2",
                suggestion=did_you_mean(name, list(self.names)),
            ),
        )

    def size(self, name: str) -> sympy.Expr:
        """The size of axis ``name`` (a number or the symbol ``|name|``)."""
        return self.axis(name).size

    def group_size(self, names: Iterable[str]) -> sympy.Expr:
        """The product of the sizes of ``names``: how many devices the axes span together."""
        return sympy.prod([self.size(n) for n in names])

    # -- variants ------------------------------------------------------------------------

    def symbolic(self) -> Mesh:
        """The same mesh and wiring with every size replaced by its symbol ``|X|`` (an axis across several
        network levels keeps its inner levels' counts; the outermost gets what is left of ``|X|``)."""
        axes = []
        for a in self.axes:
            spans: tuple[tuple[Fabric, sympy.Expr], ...] = ()
            if a.spans:
                inner = sympy.prod([n for _, n in a.spans[:-1]])
                spans = (*a.spans[:-1], (a.spans[-1][0], a.symbol / inner))
            axes.append(MeshAxis(a.name, a.symbol, a.topology, a.fabric, a.note, spans))
        return Mesh(axes, latency_model=self.latency_model)

    def with_topology(self, **topologies: object) -> Mesh:
        """A copy with some axes rewired, e.g. ``mesh.with_topology(Y="ring")``."""
        return Mesh(self, topology=topologies)

    # -- printing -----------------------------------------------------------------------

    def __str__(self) -> str:
        return ",".join(str(a) if a.size.is_number else a.name for a in self.axes)

    def __repr__(self) -> str:
        inner = ", ".join(f"{a.name!r}: {a.size}" if a.size.is_number else f"{a.name!r}: None" for a in self.axes)
        wiring = {a.name: a.topology.value for a in self.axes if a.topology is not Topology.RING}
        extra = f", topology={wiring!r}" if wiring else ""
        fabrics = {a.name: a.fabric.value for a in self.axes if a.fabric is not Fabric.ICI}
        extra += f", fabric={fabrics!r}" if fabrics else ""
        levels = {a.name: [(f.value, int(n)) for f, n in a.spans] for a in self.axes if a.spans and a.size.is_number}
        extra += f", spans={levels!r}" if levels else ""
        extra += f", latency_model={self.latency_model!r}" if self.latency_model != "book" else ""
        return f"Mesh({{{inner}}}{extra})"

    def describe(self) -> list[Message]:
        """One line per wiring, naming the axes wired that way and the reason for it.

        Examples:
            >>> [str(line) for line in Mesh("X=2,Y=4,Z=2", hardware="tpu-v5p").describe()]
            ['X=2, Y=4, Z=2 (line without wraparound, ici: TPU v5p wraps only slices of whole 4x4x4 cubes)']
        """
        groups: dict[tuple[Topology, str, str], list[MeshAxis]] = {}
        for a in self.axes:
            groups.setdefault((a.topology, a.fabrics, str(a.note)), []).append(a)
        described = []
        for (topology, fabrics, _), axes in groups.items():
            if len(axes) == 1:
                described.append(axes[0].describe())
                continue
            names, note = ", ".join(str(a) for a in axes), axes[0].note
            if note:
                said = say("{axes} ({topology}, {fabric}: {note})", axes=names, topology=topology.describe,
                           fabric=fabrics, note=note)  # fmt: skip
            else:
                said = say("{axes} ({topology}, {fabric})", axes=names, topology=topology.describe, fabric=fabrics)
            described.append(said)
        return described


def resolve_mesh(
    mesh: Mesh | Mapping[str, object] | str | None,
    axes: Iterable[str],
    hardware: Hardware | str | None = None,
) -> Mesh:
    """The mesh a computation runs on: ``mesh`` itself, or built from text or a mapping with
    the chip's wiring rules, or (when None) a symbolic mesh of the ``axes`` the notation names."""
    if isinstance(mesh, Mesh):
        return mesh
    if mesh is None:
        return Mesh(dict.fromkeys(axes), hardware=hardware)
    return Mesh(mesh, hardware=hardware)


def _override(built: list[MeshAxis], value: object, what: str, topology: object = None) -> list[MeshAxis]:
    """Apply the user's topology or fabric to the axes it names. A fabric set by the user covers the whole
    axis, wired as that network is (a ring on ICI, a switch otherwise) unless ``topology`` names the axis."""
    if value is None:
        return built
    names = [a.name for a in built]
    if isinstance(value, Mapping):
        for n in value:
            if n not in names:
                raise UnknownAxisError(
                    say(
                        "{what} given for axis {axis}, which is not in the mesh",
                        what=say("topology") if what == "topology" else say("fabric"),
                        axis=n,
                    ),
                    hint=say("the mesh has axes {axes}", axes=", ".join(names)),
                )
        per_axis = dict(value)
    else:
        per_axis = {n: value for n in names}
    out = []
    for a in built:
        if a.name not in per_axis:
            out.append(a)
            continue
        if what == "topology":
            out.append(
                MeshAxis(a.name, a.size, Topology.parse(per_axis[a.name]), a.fabric, say("set by the user"), a.spans)
            )
        else:
            fab = Fabric.parse(per_axis[a.name])
            wired = topology is not None and (not isinstance(topology, Mapping) or a.name in topology)
            out.append(MeshAxis(a.name, a.size, a.topology if wired else fab.topology, fab, say("set by the user")))
    return out


def _parse_mesh_text(text: str) -> list[MeshAxis]:
    axes = []
    try:
        entries = parse_sizes(text, what=say("mesh"))
    except NotationError as err:
        raise MeshError(err.message, text=err.text, span=err.span, hint=err.hint) from None
    for name, value, span in entries:
        try:
            check_axis_name(name, text=text, span=span)
            size = parse_size_value(value, name=name, text=text, span=span, what=say("mesh"))
        except NotationError as err:
            raise MeshError(err.message, text=err.text, span=err.span, hint=err.hint) from None
        axes.append(MeshAxis(name, axis_symbol(name) if size is None else size))
    return axes

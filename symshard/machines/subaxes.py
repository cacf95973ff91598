"""Parts of a mesh axis: an axis of 4 devices used as two axes of 2, as XLA's partitioner does.

XLA may shard by part of a mesh axis. On ``X=4`` it can gather over the major half alone, which
Shardy writes ``X:(1)2`` (the part that starts after 1 device's worth and has 2), while ``X:(2)2`` is
the minor half. :func:`split_mesh` names those parts so that the notation can use them: the split
``X=2x2`` turns ``X=4,Y=2`` into ``X1=2,X2=2,Y=2``, the same eight devices in the same order (device
``x`` of X is ``(x1, x2)`` with ``x = 2*x1 + x2``), and :func:`split_array` rewrites ``I_X`` as
``I_{X1,X2}``. A strategy on the split mesh is a strategy on the mesh as written that may move data
over a part of X only (``AllGather_{X1}``).

A split is read by a small grammar of its own: entries ``AXIS=N x N [x N ...]`` separated by commas,
the sizes major first, ``x``, ``*`` or ``·`` between them.

Examples:
    >>> from symshard.machines.mesh import Mesh
    >>> mesh, parts = split_mesh(Mesh("X=4,Y=2"), "X=2x2")
    >>> str(mesh), parts[0].label, parts[0].shardy("X1"), parts[0].shardy("X2")
    ('X1=2,X2=2,Y=2', 'X=X1·X2', 'X:(1)2', 'X:(2)2')
    >>> from symshard.notation.parser import parse_array
    >>> str(split_array(parse_array("A[I_X, J_Y]"), parts))
    'A[I_{X1,X2}, J_Y]'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import MeshError
from ..messages import say
from ..notation.arrays import Array, Dim
from .mesh import Mesh, MeshAxis
from .topology import Topology

__all__ = ["AxisSplit", "parse_split", "split_array", "split_mesh"]

SplitLike = str | Mapping[str, Sequence[int]]


@dataclass(frozen=True, slots=True)
class AxisSplit:
    """One mesh axis seen as consecutive parts, major first: ``X=4`` as ``(("X1", 2), ("X2", 2))``."""

    axis: str
    parts: tuple[tuple[str, int], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.parts)

    @property
    def label(self) -> str:
        """``'X=X1·X2'``."""
        return f"{self.axis}={'·'.join(self.names)}"

    @property
    def spec(self) -> str:
        """The split as :func:`parse_split` reads it: ``'X=2x2'``."""
        return f"{self.axis}={'x'.join(str(n) for _, n in self.parts)}"

    def shardy(self, name: str) -> str:
        """The part ``name`` as Shardy writes a sub-axis, ``X:(pre)size``: ``pre`` is the product of
        the sizes of the parts before it (more major), ``size`` its own."""
        pre = 1
        for n, size in self.parts:
            if n == name:
                return f"{self.axis}:({pre}){size}"
            pre *= size
        raise KeyError(name)


_ENTRY = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*=\s*([0-9]+(?:\s*[x*·×]\s*[0-9]+)+)\s*\Z")


def parse_split(text: str) -> dict[str, tuple[int, ...]]:
    """``'X=2x2, Y=2x4'`` → ``{'X': (2, 2), 'Y': (2, 4)}``; a grammar of its own, nothing evaluated.

    Raises:
        MeshError: text that is not a split, quoted, with an example.

    Examples:
        >>> parse_split("X=2x2, Y=2*4")
        {'X': (2, 2), 'Y': (2, 4)}
    """
    out: dict[str, tuple[int, ...]] = {}
    for entry in str(text).split(","):
        m = _ENTRY.match(entry)
        if m is None:
            raise MeshError(
                say("cannot read {entry} in the split {text}", entry=repr(entry.strip()), text=repr(text)),
                hint=say("write each axis and its parts' sizes, major first: {example}", example="X=2x2,Y=2x4"),
            )
        name = m.group(1)
        if name in out:
            raise MeshError(
                say("mesh axis {axis} is split twice in {text}", axis=name, text=repr(text)),
                hint=say("split each axis once, e.g. {example}", example=f"{name}=2x2"),
            )
        out[name] = tuple(int(n) for n in re.split(r"\s*[x*·×]\s*", m.group(2).strip()))
    return out


def split_mesh(mesh: Mesh, split: SplitLike, *, taken: Iterable[str] = ()) -> tuple[Mesh, tuple[AxisSplit, ...]]:
    """``mesh`` with each axis ``split`` names replaced by its parts ``X1, X2, ...`` (major first), and
    the splits. The names in ``taken`` (dims, array names) are not used for parts.

    Each part keeps its axis's fabric and shares its links (see :attr:`MeshAxis.part_of`). On a ring
    the major part still wraps around (its devices ``N/n`` apart close the ring) and the other parts
    are lines; on a line every part is a line; on a switch every part is a switch. A part's devices sit
    as many devices apart as the parts after it hold (:attr:`MeshAxis.stride`), so its steps are that
    many hops long and that many of its groups share each link.

    Raises:
        MeshError: an axis the mesh lacks, a symbolic size, parts that do not multiply to the size or
            have fewer than 2 devices, an axis over several network levels, or a part's name in use.

    Examples:
        >>> mesh, _ = split_mesh(Mesh("X=8"), "X=2x4")
        >>> [(a.name, a.topology.value, a.stride) for a in mesh.axes]
        [('X1', 'ring', 4), ('X2', 'line', 1)]
    """
    wanted = parse_split(split) if isinstance(split, str) else {str(k): tuple(v) for k, v in split.items()}
    text = split if isinstance(split, str) else ",".join(f"{k}={'x'.join(map(str, v))}" for k, v in wanted.items())
    names = [a.name for a in mesh.axes]
    used = set(names) | set(taken)
    splits: list[AxisSplit] = []
    for axis, sizes in wanted.items():
        if axis not in names:
            raise MeshError(
                say("the split {text} names axis {axis}, which is not in the mesh {mesh}", text=repr(text), axis=axis,
                    mesh=str(mesh)),
                hint=say("the mesh has axes {axes}", axes=", ".join(names)),
            )  # fmt: skip
        size = mesh.size(axis)
        if not size.is_number:
            raise MeshError(
                say("axis {axis} has no size, so it cannot be split as {text}", axis=axis, text=repr(text)),
                hint=say("give the mesh's sizes, e.g. {example}", example=f"{axis}=4"),
            )
        if len(sizes) < 2 or any(s < 2 for s in sizes) or math.prod(sizes) != int(size):
            raise MeshError(
                say("the parts {parts} of axis {axis} do not split its {size} {size:device|devices}", axis=axis, size=str(size),
                    parts="x".join(map(str, sizes))),
                hint=say("give two or more parts of at least 2 devices whose product is the size, e.g. {example}",
                         example=f"{axis}=2x{int(size) // 2}" if int(size) % 2 == 0 and int(size) > 2 else "X=2x2"),
            )  # fmt: skip
        if mesh.axis(axis).spans:
            raise MeshError(
                say("axis {axis} crosses {fabrics}; symshard splits only an axis on one network",
                    axis=axis, fabrics=mesh.axis(axis).fabrics),
                hint=say("split the mesh by network level instead, one axis per level"),
            )  # fmt: skip
        parts = tuple((f"{axis}{i + 1}", s) for i, s in enumerate(sizes))
        for n, _ in parts:
            if n in used:
                raise MeshError(
                    say("the part {name} of axis {axis} has the name of an axis or dim already in use",
                        name=n, axis=axis),
                    hint=say("rename that axis or dim; the parts of {axis} are named {axis}1, {axis}2, ...", axis=axis),
                )  # fmt: skip
            used.add(n)
        splits.append(AxisSplit(axis, parts))
    by_axis = {s.axis: s for s in splits}
    built: list[MeshAxis] = []
    for a in mesh.axes:
        if a.name not in by_axis:
            built.append(a)
            continue
        s = by_axis[a.name]
        for i, (n, size) in enumerate(s.parts):
            stride = math.prod(k for _, k in s.parts[i + 1 :])
            topology = a.topology if a.topology is Topology.SWITCH or (i == 0 and a.topology.wraps) else Topology.LINE
            note = (
                say("part {shardy} of {axis}, its devices {stride} apart", shardy=s.shardy(n), axis=str(a),
                    stride=stride)
                if stride > 1
                else say("part {shardy} of {axis}, its devices side by side", shardy=s.shardy(n), axis=str(a))
            )  # fmt: skip
            built.append(MeshAxis(n, size, topology, a.fabric, note, part_of=a.name, stride=stride))  # type: ignore[arg-type]
    return Mesh(built, latency_model=mesh.latency_model), tuple(splits)


def split_array(arr: Array, splits: Iterable[AxisSplit]) -> Array:
    """``arr`` with every split axis replaced by its parts, major first (``I_X`` → ``I_{X1,X2}``)."""
    by_axis = {s.axis: s.names for s in splits}

    def axes(names: Iterable[str]) -> tuple[str, ...]:
        return tuple(b for a in names for b in by_axis.get(a, (a,)))

    dims = tuple(Dim(d.name, axes(d.axes)) for d in arr.dims)
    return Array(arr.name, dims, frozenset(axes(sorted(arr.unreduced))))

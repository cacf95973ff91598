"""Which device holds which part of an array: the arithmetic behind the layout pictures.

A sharded array on a numeric mesh is cut into blocks: along each dim, as many as
the product of the sizes of the axes that shard it. The device at mesh
coordinates ``c`` holds, along a dim sharded by ``(X, Y)`` (X major), the block
``c[X] · |Y| + c[Y]``; axes that shard nothing give copies; unreduced axes give
partial sums, numbered the same way.

To draw two shardings of one array side by side (before and after a
collective), both are cut into *atoms*: along each dim, the least common
multiple of the two block counts. A block is then a run of atoms, and the same
atom gets the same colour in both pictures.

Examples:
    >>> from symshard.notation.arrays import Array
    >>> from symshard.machines.mesh import Mesh
    >>> a, m = Array.parse("A[I_XY, J]{U_Z}"), Mesh("X=2,Y=2,Z=2")
    >>> shards(a, m)
    (4, 1)
    >>> h = hold(a, m, shards(a, m))[5]  # the device at X=1, Y=0, Z=1
    >>> h.device, h.block, h.atoms, h.partial
    ((1, 0, 1), (2, 0), (range(2, 3), range(0, 1)), 1)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..machines.mesh import Mesh
from ..notation.arrays import Array

__all__ = ["Holding", "atoms_for", "devices", "hold", "shards"]


def _sizes(mesh: Mesh) -> dict[str, int]:
    return {a.name: int(a.size) for a in mesh.axes}


def shards(array: Array, mesh: Mesh) -> tuple[int, ...]:
    """How many blocks each dim of ``array`` is cut into on ``mesh``."""
    sizes = _sizes(mesh)
    return tuple(math.prod(sizes[a] for a in d.axes) for d in array.dims)


def atoms_for(arrays: Sequence[Array], mesh: Mesh) -> tuple[int, ...]:
    """The common grid of several shardings of one array: per dim, the lcm of their block counts."""
    counts = [shards(a, mesh) for a in arrays]
    return tuple(math.lcm(*col) for col in zip(*counts, strict=True))


def devices(mesh: Mesh) -> list[tuple[int, ...]]:
    """Every device's coordinates, in mesh order (the last axis varies fastest)."""
    return list(itertools.product(*(range(int(a.size)) for a in mesh.axes)))


@dataclass(frozen=True, slots=True)
class Holding:
    """What one device holds.

    Attributes:
        device: its coordinates, one per mesh axis in mesh order.
        block: the index of its block along each dim (0 for a dim that is not sharded).
        atoms: the atoms of the common grid it holds, one range per dim.
        partial: which partial sum it holds (numbered over the unreduced axes), None if reduced.
    """

    device: tuple[int, ...]
    block: tuple[int, ...]
    atoms: tuple[range, ...]
    partial: int | None


def hold(array: Array, mesh: Mesh, atoms: Sequence[int], *, shift: tuple[str, int] | None = None) -> list[Holding]:
    """What every device holds, in :func:`devices` order.

    Args:
        array: the sharding (every axis must be in ``mesh``, every size a number).
        mesh: a numeric mesh.
        atoms: atoms per dim of the common grid (a multiple of each dim's block count).
        shift: ``(axis, k)``: each device holds what the device ``k`` steps before it
            along ``axis`` holds without the shift (a collective permute).
    """
    sizes = [int(a.size) for a in mesh.axes]
    where = {a.name: i for i, a in enumerate(mesh.axes)}
    counts = shards(array, mesh)
    per_block = [n_atoms // n for n, n_atoms in zip(counts, atoms, strict=True)]
    dims = [[(where[a], sizes[where[a]]) for a in d.axes] for d in array.dims]
    unreduced = [(where[a], sizes[where[a]]) for a in sorted(array.unreduced)]
    moved = (where[shift[0]], shift[1]) if shift is not None else None
    ranges: dict[tuple[int, ...], tuple[range, ...]] = {}
    out = []
    for coords in devices(mesh):
        at = coords
        if moved is not None:
            i, k = moved
            at = (*coords[:i], (coords[i] - k) % sizes[i], *coords[i + 1 :])
        block = []
        for axes in dims:
            index = 0
            for i, n in axes:
                index = index * n + at[i]
            block.append(index)
        key = tuple(block)
        held = ranges.get(key)
        if held is None:
            held = ranges[key] = tuple(range(b * k, (b + 1) * k) for b, k in zip(key, per_block, strict=True))
        partial = None
        if unreduced:
            partial = 0
            for i, n in unreduced:
                partial = partial * n + at[i]
        out.append(Holding(coords, key, held, partial))
    return out

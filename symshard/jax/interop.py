"""symshard's notation and meshes as JAX's ``PartitionSpec``, ``NamedSharding`` and ``Mesh``, both ways.

``A[I_XY, J]{U_Z}`` is ``PartitionSpec(('X', 'Y'), None, unreduced={'Z'})``: a
dim's axes in order (major first) become one entry, an unsharded dim ``None``,
the unreduced axes JAX's ``unreduced`` set. What one side can say and the other
cannot (``PartitionSpec.UNCONSTRAINED``, JAX's ``reduced`` set, a symbolic mesh
size, an axis name symshard reads as several axes) is an error naming it.

JAX cannot hold an unreduced array in a plain jitted program, so to move
partial sums in and out of ``shard_map`` symshard *stacks* them: ``C[I, K]{U_X}``
travels as a global array of shape ``(|X|, I, K)`` with spec ``P('X', None,
None)``, whose sum over the first dim is the array's value (see
:func:`stacked_spec`).

Examples (they need JAX, so the doctests skip them; tests/jax/test_jax_interop.py runs them):
    >>> from symshard import Array
    >>> partition_spec(Array.parse("A[I_XY, J]{U_Z}"))  # doctest: +SKIP
    P(('X', 'Y'), None, unreduced={'Z'})
    >>> str(array_from_spec(partition_spec(Array.parse("A[I_XY, J]")), ("I", "J"), name="A"))  # doctest: +SKIP
    'A[I_XY, J]'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sympy

from ..errors import MeshError, NotationError, ShardingError
from ..machines.mesh import Mesh, MeshAxis
from ..messages import say
from ..notation.arrays import Array, Dim, check_axis_name
from .runtime import require_devices, require_jax

if TYPE_CHECKING:  # pragma: no cover
    import jax

__all__ = [
    "array_from_sharding",
    "array_from_spec",
    "jax_mesh",
    "local_shape",
    "mesh_from_jax",
    "named_sharding",
    "partition_spec",
    "stacked_shape",
    "stacked_spec",
]


def partition_spec(array: Array | str) -> jax.sharding.PartitionSpec:
    """The ``PartitionSpec`` of ``array``: one entry per dim, unreduced axes in ``unreduced``."""
    jax = require_jax()
    arr = Array.parse(array) if isinstance(array, str) else array
    entries = [_entry(d.axes) for d in arr.dims]
    P = jax.sharding.PartitionSpec
    if arr.unreduced:
        return P(*entries, unreduced=frozenset(arr.unreduced))
    return P(*entries)


def _entry(axes: tuple[str, ...]) -> str | tuple[str, ...] | None:
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else tuple(axes)


def array_from_spec(spec: Any, dims: Sequence[str], *, name: str = "A") -> Array:
    """The array ``name[dims...]`` sharded as ``spec`` says.

    Args:
        spec: a ``PartitionSpec`` (or a tuple of its entries).
        dims: the dim names, one per array dimension; a spec shorter than ``dims``
            leaves the last dims unsharded, as in JAX.
        name: the array's name.

    Raises:
        ShardingError: an entry symshard cannot express (``UNCONSTRAINED``, a ``reduced``
            set), more entries than dims, or an axis used twice.
        NotationError: an axis name that is not a valid symshard axis name.
    """
    jax = require_jax()
    P = jax.sharding.PartitionSpec
    if isinstance(spec, P):
        entries = tuple(spec.partitions) if hasattr(spec, "partitions") else tuple(spec)
        unreduced = frozenset(getattr(spec, "unreduced", frozenset()))
        reduced = frozenset(getattr(spec, "reduced", frozenset()))
    else:
        entries, unreduced, reduced = tuple(spec), frozenset(), frozenset()
    if reduced:
        raise ShardingError(
            say(
                "{spec} marks axes {axes} as 'reduced', which symshard's notation has no word for",
                spec=str(spec),
                axes=", ".join(sorted(reduced)),
            ),
            hint=say("drop reduced=...: a replicated dim is written without axes"),
        )
    if len(entries) > len(dims):
        raise ShardingError(
            say(
                "{spec} has {count} {count:entry|entries} but the array has {dims} {dims:dim|dims} ({names})",
                spec=str(spec),
                count=len(entries),
                dims=len(dims),
                names=", ".join(dims),
            ),
            hint=say("give one entry per dim (None for an unsharded dim)"),
        )
    out = []
    for d, entry in zip(dims, (*entries, *[None] * (len(dims) - len(entries))), strict=True):
        if entry is P.UNCONSTRAINED:
            raise ShardingError(
                say(
                    "{spec} leaves dim {dim} UNCONSTRAINED, a choice for XLA that symshard's notation cannot state",
                    spec=str(spec),
                    dim=d,
                ),
                hint=say("name the axes (or None for replicated)"),
            )
        axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        for a in axes:
            if not isinstance(a, str):
                raise ShardingError(
                    say("{spec} names the mesh axis {axis}, which is not a string", spec=str(spec), axis=repr(a)),
                    hint=say("name axes"),
                )
            check_axis_name(a)
        out.append(Dim(d, axes))
    return Array(name, tuple(out), unreduced)


def array_from_sharding(sharding: Any, dims: Sequence[str], *, name: str = "A") -> Array:
    """The array a ``NamedSharding`` describes (see :func:`array_from_spec`)."""
    return array_from_spec(sharding.spec, dims, name=name)


def mesh_from_jax(mesh: Any) -> Mesh:
    """The symshard :class:`~symshard.machines.mesh.Mesh` with the axes and sizes of a JAX mesh.

    Raises:
        MeshError: an axis name symshard cannot read as one axis (``'DP'`` reads as D and P).
    """
    axes = []
    for name, size in mesh.shape.items():
        try:
            axes.append(MeshAxis(str(name), int(size)))
        except NotationError as err:
            raise MeshError(err.message, hint=err.hint) from None
    return Mesh(axes)


def jax_mesh(mesh: Mesh | Mapping[str, object] | str, *, axis_types: str = "auto") -> jax.sharding.Mesh:
    """A JAX mesh with the axes and sizes of ``mesh``, on the first devices JAX has.

    Args:
        mesh: a symshard mesh (or its text or mapping); every size must be a number.
        axis_types: ``'auto'`` (XLA's partitioner chooses the collectives), ``'explicit'``
            or ``'manual'``, JAX's ``AxisType``.

    Raises:
        MeshError: a symbolic size, or fewer devices than the mesh needs (the hint
            says how to simulate more on a CPU).
    """
    jax = require_jax()
    m = mesh if isinstance(mesh, Mesh) else Mesh(mesh)
    if not m.is_numeric:
        raise MeshError(
            say("the mesh {mesh} has symbolic sizes; JAX needs numbers", mesh=str(m)),
            hint=say("give every axis a size, e.g. {example}", example="X=4,Y=2"),
        )
    kinds = {"auto": "Auto", "explicit": "Explicit", "manual": "Manual"}
    if axis_types not in kinds:
        raise MeshError(say("unknown axis type '{name}'", name=axis_types), hint=say("use auto, explicit or manual"))
    sizes = tuple(int(s) for s in m.sizes.values())
    devices = require_devices(int(m.devices))
    kind = getattr(jax.sharding.AxisType, kinds[axis_types])
    import numpy as np

    grid = np.array(devices, dtype=object).reshape(sizes)
    return jax.sharding.Mesh(grid, m.names, axis_types=(kind,) * len(sizes))


def named_sharding(array: Array | str, mesh: Any) -> jax.sharding.NamedSharding:
    """``NamedSharding(mesh, partition_spec(array))`` for a JAX mesh (or a symshard one, built with :func:`jax_mesh`)."""
    jax = require_jax()
    jm = jax_mesh(mesh) if isinstance(mesh, (Mesh, str, Mapping)) else mesh
    arr = Array.parse(array) if isinstance(array, str) else array
    try:
        return jax.sharding.NamedSharding(jm, partition_spec(arr))
    except (ValueError, TypeError) as err:
        raise ShardingError(
            say("JAX cannot place {array} on this mesh: {why}", array=str(arr), why=str(err)),
            hint=say("JAX accepts unreduced axes only on meshes whose axes are Explicit"),
        ) from None


def local_shape(array: Array, mesh: Mesh, sizes: Mapping[str, Any]) -> tuple[int, ...]:
    """The block one device holds of ``array`` (numbers only): each dim over its axes' sizes."""
    out = []
    for d in array.dims:
        n = sympy.Integer(sizes[d.name]) if not isinstance(sizes[d.name], sympy.Basic) else sizes[d.name]
        for a in d.axes:
            n = n / mesh.size(a)
        out.append(int(n))
    return tuple(out)


def stacked_shape(array: Array, mesh: Mesh, sizes: Mapping[str, Any]) -> tuple[int, ...]:
    """The global shape that carries ``array`` through JAX: one leading dim per unreduced axis
    (sorted), of that axis's size, then the dims."""
    lead = [int(mesh.size(a)) for a in sorted(array.unreduced)]
    return (*lead, *(int(sizes[d.name]) for d in array.dims))


def stacked_spec(array: Array) -> jax.sharding.PartitionSpec:
    """The spec of :func:`stacked_shape`'s array: the unreduced axes shard the leading dims."""
    jax = require_jax()
    return jax.sharding.PartitionSpec(*sorted(array.unreduced), *(_entry(d.axes) for d in array.dims))

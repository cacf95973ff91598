"""The numpy reference semantics of each collective agree with ``apply()``.

A collective's ``apply()`` only rewrites the notation: ``AllGather_X(A[I_X, J])``
says the result is ``A[I, J]``. This file checks that claim against the data. A
tiny simulator cuts a random global array into the per-device blocks its
sharding describes, runs the collective on those blocks the way the JAX
``shard_map`` tutorial defines it (``all_gather``, ``psum``, ``psum_scatter``,
``all_to_all`` with ``tiled=True``, and ``ppermute``), and compares every
device's result with the block that ``apply()``'s output sharding says the
device should hold.

Conventions of the simulator:

* a device is its tuple of mesh coordinates, one per mesh axis, in mesh order;
* a dim sharded by ``(a1, a2, ...)`` (``a1`` major) is cut into
  ``|a1|·|a2|·...`` equal blocks, and a device holds the block whose index is
  the mixed-radix number of its coordinates on ``a1, a2, ...``;
* an array unreduced over ``U`` holds random integer partial sums on the
  devices along ``U`` that add up to the true block; arrays are integers so
  that every sum is exact.

Gathering an axis that is not the minor-most axis of a dim's sharding (by an
AllGather, or out of the source dim of an AllToAll) leaves each device's rows
strided, and the library says so in ``CollectiveExpr.notes``. Those cases are
checked two ways: exactly, once the dim's global indices are relabelled in the
order the devices really hold them (:func:`gathered_order`, the same on every
device); and as the notes word it, "up to a local reordering", i.e. each
device's rows are the stated block's rows in some order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from helpers import ordered_subsets
from hypothesis import given, settings
from hypothesis import strategies as st

from symshard.costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    Collective,
    CollectiveExpr,
    CollectivePermute,
    ReduceScatter,
)
from symshard.costs.placement import place
from symshard.machines.mesh import Mesh
from symshard.notation.arrays import Array, Dim
from symshard.notation.parser import parse_array

Coords = tuple[int, ...]
Blocks = dict[Coords, np.ndarray]

# -- the simulator ---------------------------------------------------------------------


@dataclass(frozen=True)
class Devices:
    """A numeric mesh as the simulator sees it: axis names and sizes, in mesh order."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]

    @classmethod
    def of(cls, mesh: Mesh) -> Devices:
        return cls(mesh.names, tuple(int(a.size) for a in mesh.axes))

    def size(self, axis: str) -> int:
        return self.sizes[self.names.index(axis)]

    def group_size(self, axes: Sequence[str]) -> int:
        return math.prod(self.size(a) for a in axes)

    def all(self) -> list[Coords]:
        """Every device, in row-major order of the mesh coordinates."""
        return list(itertools.product(*(range(n) for n in self.sizes)))

    def index(self, device: Coords, axes: Sequence[str]) -> int:
        """The mixed-radix number of ``device``'s coordinates on ``axes`` (the first most significant)."""
        out = 0
        for a in axes:
            out = out * self.size(a) + device[self.names.index(a)]
        return out

    def group(self, device: Coords, axes: Sequence[str]) -> list[Coords]:
        """The devices that differ from ``device`` only on ``axes``, ordered by their :meth:`index`."""
        positions = [self.names.index(a) for a in axes]
        members = []
        for values in itertools.product(*(range(self.size(a)) for a in axes)):
            member = list(device)
            for p, v in zip(positions, values, strict=True):
                member[p] = v
            members.append(tuple(member))
        return members

    def step(self, device: Coords, axis: str, by: int) -> Coords:
        """The device ``by`` places further along ``axis``, wrapping around."""
        p = self.names.index(axis)
        moved = list(device)
        moved[p] = (moved[p] + by) % self.sizes[p]
        return tuple(moved)


def block_of(x: np.ndarray, array: Array, devs: Devices, device: Coords) -> np.ndarray:
    """The block of the global array ``x`` that ``device`` holds under ``array``'s sharding (partial sums ignored)."""
    index = []
    for d, n in zip(array.dims, x.shape, strict=True):
        count = devs.group_size(d.axes)
        assert n % count == 0, f"test setup: {d} of size {n} does not split over {count} devices"
        size = n // count
        start = devs.index(device, d.axes) * size
        index.append(slice(start, start + size))
    return x[tuple(index)]


def distribute(x: np.ndarray, array: Array, devs: Devices, rng: np.random.Generator) -> Blocks:
    """Each device's block of ``x`` under ``array``; unreduced axes get random partial sums of it."""
    unreduced = sorted(array.unreduced)
    parts = devs.group_size(unreduced)
    shares: dict[Coords, list[np.ndarray]] = {}
    blocks: Blocks = {}
    for device in devs.all():
        # devices that differ only on replicated axes must hold identical data
        key = tuple(device[devs.names.index(a)] for a in array.axes)
        if key not in shares:
            true = block_of(x, array, devs, device)
            pieces = [rng.integers(-20, 21, size=true.shape) for _ in range(parts - 1)]
            pieces.append(true - sum(pieces, np.zeros_like(true)))
            shares[key] = pieces
        blocks[device] = shares[key][devs.index(device, unreduced)].copy()
    return blocks


def sum_over(blocks: Blocks, devs: Devices, axes: Sequence[str]) -> Blocks:
    """``psum``: every device gets the sum of the blocks of its group along ``axes``."""
    return {c: sum(blocks[m] for m in devs.group(c, axes)) for c in blocks}


def gather(blocks: Blocks, devs: Devices, axes: Sequence[str], dim: int) -> Blocks:
    """``all_gather(tiled=True)`` over ``axes``: concatenate the group's blocks along ``dim`` in group order."""
    return {c: np.concatenate([blocks[m] for m in devs.group(c, axes)], axis=dim) for c in blocks}


def reduce_scatter(blocks: Blocks, devs: Devices, axes: Sequence[str], dim: int) -> Blocks:
    """``psum_scatter(tiled=True)``: sum over ``axes``, then group member ``i`` keeps the ``i``-th slice of ``dim``."""
    totals = sum_over(blocks, devs, axes)
    n = devs.group_size(axes)
    return {c: np.split(totals[c], n, axis=dim)[devs.index(c, axes)] for c in blocks}


def all_to_all(
    blocks: Blocks, devs: Devices, axes: Sequence[str], source_axes: Sequence[str], split: int, concat: int
) -> Blocks:
    """``all_to_all(tiled=True, split_axis=split, concat_axis=concat)`` over ``axes``.

    Each device cuts its ``split`` extent into one chunk per group member and
    sends chunk ``i`` to the member whose index over ``axes`` is ``i`` (so the
    axes land on the split dim in that order). A device stacks what it receives
    along ``concat`` in the order of the source sharding ``source_axes``.
    """
    n = devs.group_size(axes)
    out = {}
    for c in blocks:
        mine = devs.index(c, axes)
        received = [np.split(blocks[m], n, axis=split)[mine] for m in devs.group(c, source_axes)]
        out[c] = np.concatenate(received, axis=concat)
    return out


def permute(blocks: Blocks, devs: Devices, axis: str) -> Blocks:
    """``ppermute`` with ``i -> i + 1 (mod n)`` along ``axis``: each device receives from the one before it."""
    return {c: blocks[devs.step(c, axis, -1)] for c in blocks}


def removed_by_dim(array: Array, axes: Sequence[str]) -> list[tuple[int, tuple[str, ...]]]:
    """For each dim losing some of ``axes``: its position and the lost axes, in the dim's own order."""
    out = []
    for i, d in enumerate(array.dims):
        lost = tuple(a for a in d.axes if a in axes)
        if lost:
            out.append((i, lost))
    return out


def simulate(op: Collective, array: Array, blocks: Blocks, devs: Devices) -> Blocks:
    """Run ``op`` on the per-device ``blocks`` of ``array``; multi-axis gathers run all at once, per dim."""
    if isinstance(op, AllGather):
        for i, lost in removed_by_dim(array, op.axes):
            blocks = gather(blocks, devs, lost, i)
        return blocks
    if isinstance(op, ReduceScatter):
        target = array.dim_names.index(op.target(array))
        return reduce_scatter(blocks, devs, op.axes, target)
    if isinstance(op, AllReduce):
        return sum_over(blocks, devs, op.resolved(array).axes)
    if isinstance(op, AllToAll):
        sources = removed_by_dim(array, op.axes)
        assert len(sources) == 1, "test setup: the simulator moves axes out of a single dim"
        (source, lost) = sources[0]
        target = array.dim_names.index(op.target(array))
        return all_to_all(blocks, devs, op.axes, lost, split=target, concat=source)
    if isinstance(op, CollectivePermute):
        return permute(blocks, devs, op.axes[0])
    raise AssertionError(f"no simulator for {op}")


def gather_stepwise(array: Array, axes: Sequence[str], blocks: Blocks, devs: Devices) -> Blocks:
    """An AllGather over several axes as single-axis gathers, the minor-most axis of each dim first."""
    for i, lost in removed_by_dim(array, axes):
        for a in reversed(lost):
            blocks = gather(blocks, devs, (a,), i)
    return blocks


# -- comparing with apply() -----------------------------------------------------------


def strided_dims(op: Collective, array: Array) -> list[int]:
    """Dims whose removed axes are not a minor-most suffix of their sharding (so rows end up strided)."""
    if not isinstance(op, AllGather | AllToAll):
        return []
    return [i for i, lost in removed_by_dim(array, op.axes) if array.dims[i].axes[-len(lost) :] != lost]


def gathered_order(op: Collective, array: Array, devs: Devices, shape: dict[str, int]) -> list[list[int]]:
    """For each dim, the order of the global indices as the devices end up holding them.

    Gathering the axes ``R`` of a dim sharded by ``K ∪ R`` leaves the device with
    coordinates ``k`` on ``K`` holding the blocks ``(k, r)`` for every ``r``, in
    the order of ``r``. Reading those devices in the order of ``k`` lists the
    dim's indices in the order returned here: the identity when ``R`` is a
    minor-most suffix of the sharding, a transposition of the blocks otherwise.
    """
    orders = [list(range(shape[n])) for n in array.dim_names]
    if not isinstance(op, AllGather | AllToAll):
        return orders
    for i, lost in removed_by_dim(array, op.axes):
        axes = array.dims[i].axes
        kept = tuple(a for a in axes if a not in lost)
        size = shape[array.dims[i].name] // devs.group_size(axes)
        order = []
        for kv in itertools.product(*(range(devs.size(a)) for a in kept)):
            for rv in itertools.product(*(range(devs.size(a)) for a in lost)):
                coord = dict(zip(kept, kv, strict=True)) | dict(zip(lost, rv, strict=True))
                block = 0
                for a in axes:
                    block = block * devs.size(a) + coord[a]
                order.extend(range(block * size, (block + 1) * size))
        orders[i] = order
    return orders


def relabel(x: np.ndarray, orders: list[list[int]]) -> np.ndarray:
    """``x`` with the indices of every dim listed in the given orders."""
    for i, order in enumerate(orders):
        x = np.take(x, order, axis=i)
    return x


def rows_sorted(block: np.ndarray, dim: int) -> np.ndarray:
    """``block`` with its slices along ``dim`` put in a canonical (lexicographic) order."""
    rows = np.moveaxis(block, dim, 0).reshape(block.shape[dim], -1)
    if rows.shape[1] == 0:
        return rows
    return rows[np.lexsort(rows.T[::-1])]


def local_shape(array: Array, devs: Devices, shape: dict[str, int]) -> tuple[int, ...]:
    """The block shape :func:`symshard.costs.placement.place` gives ``array`` on this mesh."""
    mesh = Mesh(dict(zip(devs.names, devs.sizes, strict=True)))
    return tuple(int(n) for n in place(array, mesh, shape).local_shape)


def assert_matches(
    expr: CollectiveExpr, got: Blocks, x: np.ndarray, devs: Devices, shape: dict[str, int], *, shift: str | None = None
) -> None:
    """Every device's simulated block equals the block of ``x`` that ``expr.output`` assigns it.

    Partial sums are added up over the output's unreduced axes first. ``shift``
    names the axis of a permute: device ``c`` then holds what the device one
    step back along that axis held.
    """
    out = expr.output
    local = local_shape(out, devs, shape)
    totals = sum_over(got, devs, sorted(out.unreduced))
    for c in devs.all():
        assert got[c].shape == local, (str(expr), c)
        source = c if shift is None else devs.step(c, shift, -1)
        np.testing.assert_array_equal(totals[c], block_of(x, out, devs, source), err_msg=f"{expr} @ {c}")


def simulated(
    array: Array, mesh: Mesh, op: Collective, shape: dict[str, int], seed: int
) -> tuple[CollectiveExpr, np.ndarray, Devices, Blocks, Blocks | None]:
    """Random data sharded as ``array``, and ``op`` run on it all at once and (gathers only) axis by axis."""
    devs = Devices.of(mesh)
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 51, size=tuple(shape[n] for n in array.dim_names))
    blocks = distribute(x, array, devs, rng)
    stepwise = gather_stepwise(array, op.axes, blocks, devs) if isinstance(op, AllGather) else None
    return op(array), x, devs, simulate(op, array, blocks, devs), stepwise


def run_case(array: Array, mesh: Mesh, op: Collective, shape: dict[str, int], seed: int) -> None:
    """Simulate ``op`` on random data sharded as ``array`` and check it against ``op(array)``.

    Where the gathered axes are a minor-most suffix the blocks must match
    exactly; elsewhere they must match once the dim is relabelled in the order
    of :func:`gathered_order`, and the library must say so in ``notes``.
    """
    expr, x, devs, got, stepwise = simulated(array, mesh, op, shape, seed)
    strided = strided_dims(op, array)
    assert bool(expr.notes) == bool(strided), (str(expr), expr.notes)
    orders = gathered_order(op, array, devs, shape)
    if not strided:
        assert orders == [list(range(shape[n])) for n in array.dim_names]
    shift = op.axes[0] if isinstance(op, CollectivePermute) else None
    assert_matches(expr, got, relabel(x, orders), devs, shape, shift=shift)
    if stepwise is not None:
        assert_matches(expr, stepwise, relabel(x, orders), devs, shape)


def default_shape(array: Array, mesh: Mesh) -> dict[str, int]:
    """Distinct dim sizes that every sharding and every split on this mesh divides."""
    devices = int(mesh.devices)
    return {name: devices * (i + 1) for i, name in enumerate(array.dim_names)}


# -- table-driven cases -----------------------------------------------------------------

X2Y2 = "X=2,Y=2"
X4Y2 = "X=4,Y=2"
X2Y2Z2 = "X=2,Y=2,Z=2"

# (array, mesh, collective), a comment each
CASES = [
    # AllGather: remove an axis, concatenating along the dim it shards
    ("A[I_X, J]", X2Y2, AllGather("X")),  # the book's first example
    ("A[I, J_Y]", X4Y2, AllGather("Y")),  # gather along the second dim
    ("A[I_X, J_Y]", X4Y2, AllGather("X")),  # the other dim keeps its sharding
    ("A[I_XY, J]", X2Y2, AllGather("Y")),  # minor-most axis: exact
    ("A[I_XY, J]", X4Y2, AllGather("X")),  # major axis: rows strided, noted
    ("A[I_YX, J]", X4Y2, AllGather("X")),  # minor-most axis, other traversal order
    ("A[I_XY, J]", X2Y2, AllGather(("X", "Y"))),  # both axes: fully replicated
    ("A[I_X, J_Y]", X4Y2, AllGather(("X", "Y"))),  # two dims at once
    ("A[I_XYZ, J]", X2Y2Z2, AllGather(("Y", "Z"))),  # a minor-most suffix of two axes: exact
    ("A[I_XYZ, J]", X2Y2Z2, AllGather(("X", "Z"))),  # not a suffix: strided
    ("A[I_XYZ, J]", X2Y2Z2, AllGather("Y")),  # middle axis: strided
    ("A[I_X, J]{U_Y}", X2Y2, AllGather("X")),  # partial sums travel along
    ("x[B_X, S_Y, D]", X2Y2Z2, AllGather("Y")),  # 3-D
    ("x[B_X, S, D_ZY]", X2Y2Z2, AllGather("Z")),  # 3-D, major axis of D: strided
    ("x[B_XZ, S, D_Y]", X2Y2Z2, AllGather(("X", "Z", "Y"))),  # everything
    # ReduceScatter: sum the partial sums, each device keeps one slice
    ("C[I, K]{U_X}", X2Y2, ReduceScatter("X", "K")),  # the book's example
    ("C[I, K]{U_X}", X4Y2, ReduceScatter("X", "I")),  # onto the first dim
    ("C[I, K_Y]{U_X}", X4Y2, ReduceScatter("X", "K")),  # appended minor-most: K_YX
    ("C[I_Y, K]{U_XZ}", X2Y2Z2, ReduceScatter(("X", "Z"), "K")),  # two axes at once
    ("C[I_Y, K]{U_XZ}", X2Y2Z2, ReduceScatter("Z", "K")),  # leaves U_X
    ("C[K]{U_X}", X4Y2, ReduceScatter("X")),  # 1-D, dim left implicit
    ("x[B_X, S, D]{U_YZ}", X2Y2Z2, ReduceScatter("Y", "B")),  # 3-D: B_XY
    # AllReduce: sum the partial sums everywhere
    ("C[I, K]{U_X}", X2Y2, AllReduce("X")),
    ("C[I_Y, K]{U_X}", X4Y2, AllReduce("X")),
    ("C[I_Y, K]{U_XZ}", X2Y2Z2, AllReduce(("X", "Z"))),  # two axes
    ("C[I_Y, K]{U_XZ}", X2Y2Z2, AllReduce("Z")),  # leaves U_X
    ("x[B, S_X, D]{U_YZ}", X2Y2Z2, AllReduce(())),  # no axes named: every unreduced axis
    # AllToAll: move an axis from one dim to another
    ("A[I_X, J]", X2Y2, AllToAll("X", "J")),  # the book's example
    ("A[I_X, J]", X4Y2, AllToAll("X", "J")),
    ("A[I, J_Y]", X4Y2, AllToAll("Y", "I")),  # backwards
    ("A[I_X, J_Y]", X4Y2, AllToAll("X", "J")),  # appended minor-most: J_YX
    ("A[I_XY, J]", X4Y2, AllToAll("Y", "J")),  # minor-most source axis: exact
    ("A[I_XY, J]", X4Y2, AllToAll("X", "J")),  # major source axis: strided, noted
    ("A[I_XY, J]", X2Y2, AllToAll(("X", "Y"), "J")),  # both axes
    ("A[I_XY, J]{U_Z}", X2Y2Z2, AllToAll(("Y", "X"), "J")),  # both axes, the other target order
    ("x[B_X, S, D_Y]{U_Z}", X2Y2Z2, AllToAll("X", "S")),  # 3-D
    ("x[B, S_ZX, D_Y]", X2Y2Z2, AllToAll("X", "B")),  # 3-D, minor-most source
    # CollectivePermute: shift the blocks by one along an axis
    ("A[I_X, J]", X4Y2, CollectivePermute("X")),
    ("A[I_XY, J]", X4Y2, CollectivePermute("Y")),
    ("A[I_X, J]", X4Y2, CollectivePermute("Y")),  # a replicated axis: nothing changes
    ("C[I_X, J]{U_Y}", X4Y2, CollectivePermute("Y")),  # along the partial sums
    ("x[B_X, S_Y, D_Z]", X2Y2Z2, CollectivePermute("Z")),
]


def _case_id(case: tuple[str, str, Collective]) -> str:
    array, mesh, op = case
    return f"{op}-{array}-{mesh}"


# the cases in which a non-minor axis is removed from a dim
STRIDED = [c for c in CASES if strided_dims(c[2], parse_array(c[0]))]


@pytest.mark.parametrize(("array", "mesh", "op"), CASES, ids=[_case_id(c) for c in CASES])
def test_reference_semantics_table(array: str, mesh: str, op: Collective) -> None:
    a, m = parse_array(array), Mesh(mesh)
    run_case(a, m, op, default_shape(a, m), seed=len(array) * 1009 + len(str(op)))


@pytest.mark.parametrize(("array", "mesh", "op"), STRIDED, ids=[_case_id(c) for c in STRIDED])
def test_strided_cases_relabel_the_dim(array: str, mesh: str, op: Collective) -> None:
    # In every strided row of the table the relabelling is not the identity: the
    # devices really do not hold the contiguous blocks the output notation names.
    a, m = parse_array(array), Mesh(mesh)
    shape = default_shape(a, m)
    (dim,) = strided_dims(op, a)
    assert gathered_order(op, a, Devices.of(m), shape)[dim] != list(range(shape[a.dim_names[dim]]))


def test_strided_gather_holds_every_other_block() -> None:
    # AllGather_X(A[I_XY, J]) on X=2, Y=2 with 8 rows (blocks of 2 rows, block
    # index 2x + y): device (x, y) ends up with blocks y and 2 + y, while
    # A[I_Y, J] names blocks 2y and 2y + 1.
    a, m = parse_array("A[I_XY, J]"), Mesh(X2Y2)
    devs = Devices.of(m)
    x = np.arange(8 * 3).reshape(8, 3)
    got = simulate(AllGather("X"), a, distribute(x, a, devs, np.random.default_rng(0)), devs)
    out = AllGather("X").apply(a)
    assert str(out) == "A[I_Y, J]"
    for device, rows, named in [((0, 0), [0, 1, 4, 5], [0, 1, 2, 3]), ((1, 1), [2, 3, 6, 7], [4, 5, 6, 7])]:
        np.testing.assert_array_equal(got[device], x[rows])
        np.testing.assert_array_equal(block_of(x, out, devs, device), x[named])
    assert gathered_order(AllGather("X"), a, devs, {"I": 8, "J": 3})[0] == [0, 1, 4, 5, 2, 3, 6, 7]


def test_partial_sums_add_up_and_replicas_agree() -> None:
    # The simulator's own contract: partial sums over U add up to the true
    # block, and devices that differ only on a replicated axis hold the same data.
    a, m = parse_array("A[I_X, J]{U_Z}"), Mesh(X2Y2Z2)
    devs = Devices.of(m)
    x = np.random.default_rng(1).integers(-9, 10, size=(8, 4))
    blocks = distribute(x, a, devs, np.random.default_rng(2))
    for c in devs.all():
        np.testing.assert_array_equal(sum_over(blocks, devs, ["Z"])[c], block_of(x, a, devs, c))
        np.testing.assert_array_equal(blocks[c], blocks[devs.step(c, "Y", 1)])
    assert any(not np.array_equal(blocks[c], block_of(x, a, devs, c)) for c in devs.all())


# -- random shardings -------------------------------------------------------------------


@st.composite
def meshes(draw: st.DrawFn, *, min_axes: int = 1, sizes: Sequence[int] = (1, 2, 3)) -> Mesh:
    """A numeric mesh of ``min_axes`` to three axes named from X, Y, Z, with small sizes."""
    names = draw(st.permutations(["X", "Y", "Z"]))[: draw(st.integers(min_axes, 3))]
    return Mesh({n: draw(st.sampled_from(list(sizes))) for n in names})


@st.composite
def sharded_arrays(draw: st.DrawFn, mesh: Mesh, *, stacked: bool = False) -> Array:
    """A valid sharding of a 1-3 dim array on ``mesh``: each axis shards one dim, is unreduced, or neither.

    With ``stacked`` the first two axes drawn both shard the first dim.
    """
    names = ["I", "J", "K"][: draw(st.integers(1, 3))]
    owners: dict[str, list[str]] = {n: [] for n in names}
    unreduced = []
    for k, axis in enumerate(draw(st.permutations(list(mesh.names)))):
        role = "I" if stacked and k < 2 else draw(st.sampled_from([*names, "unreduced", "replicated"]))
        if role == "unreduced":
            unreduced.append(axis)
        elif role != "replicated":
            owners[role].append(axis)
    return Array("A", tuple(Dim(n, tuple(owners[n])) for n in names), frozenset(unreduced))


def applicable(array: Array, mesh: Mesh) -> list[Collective]:
    """Every collective the simulator can run on ``array``."""
    ops: list[Collective] = [AllGather(s) for s in ordered_subsets(array.axes)]
    for s in ordered_subsets(sorted(array.unreduced)):
        ops.append(AllReduce(s))
        ops.extend(ReduceScatter(s, d) for d in array.dim_names)
    for d in array.dims:
        for s in ordered_subsets(d.axes):
            ops.extend(AllToAll(s, t) for t in array.dim_names if t != d.name)
    ops.extend(CollectivePermute(a) for a in mesh.names)
    return ops


Scenario = tuple[Array, Mesh, Collective, dict[str, int], int]


@st.composite
def scenarios(draw: st.DrawFn, *, strided: bool = False) -> Scenario:
    """An array on a mesh, a collective that fits it, dim sizes that divide, and a data seed.

    With ``strided`` the collective removes a non-minor axis of some dim.
    """
    if strided:
        mesh = draw(meshes(min_axes=2, sizes=(2, 3)))
        array = draw(sharded_arrays(mesh, stacked=True))
        ops = [op for op in applicable(array, mesh) if strided_dims(op, array)]
    else:
        mesh = draw(meshes())
        array = draw(sharded_arrays(mesh))
        ops = applicable(array, mesh)
    op = draw(st.sampled_from(ops))
    devices = int(mesh.devices)
    shape = {n: devices * draw(st.integers(1, 2)) for n in array.dim_names}
    return array, mesh, op, shape, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_reference_semantics_random(scenario: Scenario) -> None:
    run_case(*scenario)


@settings(max_examples=60, deadline=None)
@given(scenarios(strided=True))
def test_strided_relabelling_random(scenario: Scenario) -> None:
    run_case(*scenario)

"""Properties of the notation and the collectives over random meshes and shardings.

The strategies draw a mesh (one to three axes named from X, Y, Z, sizes 1, 2, 4
or 8, sometimes with non-default topologies and fabrics), a valid sharding on
it (each mesh axis shards at most one dim, a random subset of the remaining
axes is unreduced) and dim sizes that every sharding on that mesh divides.

The properties: printing round-trips through the parser; an AllReduce is a
ReduceScatter followed by an AllGather, in sharding and in cost; the book's
bandwidth-bound AllGather time on a two-way ring does not depend on the axis
size; bytes are conserved by placement; a ReduceScatter undoes the AllGather of
a minor-most axis; an AllGather leaves none of its axes; costs are non-negative
and the time is the larger of the latency and bandwidth times.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
import sympy
from helpers import ordered_subsets
from hypothesis import given, settings
from hypothesis import strategies as st

from symshard.algebra.symbols import T_hop, W_dcn, W_ici, W_nvlink
from symshard.costs.collective_cost import CollectiveCost
from symshard.costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    Collective,
    CollectivePermute,
    ReduceScatter,
    parse_collective,
)
from symshard.costs.placement import place
from symshard.machines.mesh import Mesh
from symshard.notation.arrays import Array, Dim
from symshard.notation.parser import parse_array

MODELS = ("book", "ring")
TOPOLOGIES = ("ring", "one-way-ring", "line", "switch")
FABRICS = ("ici", "nvlink", "dcn")

# exact rational constants, so that numeric costs compare exactly
CONSTANTS = {
    W_ici: sympy.Integer(90_000_000_000),
    W_nvlink: sympy.Integer(450_000_000_000),
    W_dcn: sympy.Integer(25_000_000_000),
    T_hop: sympy.Rational(1, 1_000_000),
}

COST_FIELDS = ("bandwidth_time", "latency_time", "hops", "time")

# -- strategies -----------------------------------------------------------------------


@st.composite
def meshes(draw: st.DrawFn, *, wiring: bool = True) -> Mesh:
    """One to three axes named from X, Y, Z (in any order), of size 1, 2, 4 or 8.

    With ``wiring`` some axes get a non-default topology or fabric.
    """
    names = draw(st.permutations(["X", "Y", "Z"]))[: draw(st.integers(1, 3))]
    sizes = {n: draw(st.sampled_from([1, 2, 4, 8])) for n in names}
    topology: dict[str, str] = {}
    fabric: dict[str, str] = {}
    if wiring:
        for n in names:
            if draw(st.booleans()):
                topology[n] = draw(st.sampled_from(TOPOLOGIES))
            if draw(st.integers(0, 3)) == 0:
                fabric[n] = draw(st.sampled_from(FABRICS))
    return Mesh(sizes, topology=topology or None, fabric=fabric or None)


@st.composite
def arrays(draw: st.DrawFn, axes: Sequence[str]) -> Array:
    """A valid sharding over ``axes``: each shards at most one dim, and some of the rest are unreduced."""
    name = draw(st.sampled_from(["A", "B", "C", "W_in", "x", "dW'", ""]))
    dims = draw(st.lists(st.sampled_from(["I", "J", "K", "B", "D", "F2"]), min_size=1, max_size=3, unique=True))
    owners: dict[str, list[str]] = {d: [] for d in dims}
    unreduced = []
    for axis in draw(st.permutations(list(axes))):
        role = draw(st.sampled_from([*dims, "unreduced", "replicated"]))
        if role == "unreduced":
            unreduced.append(axis)
        elif role != "replicated":
            owners[role].append(axis)
    return Array(name, tuple(Dim(d, tuple(owners[d])) for d in dims), frozenset(unreduced))


def divisible_shape(array: Array, mesh: Mesh, factors: Sequence[int]) -> dict[str, int]:
    """Dim sizes that every sharding on ``mesh`` divides: the device count times a factor each."""
    devices = int(mesh.devices)
    return {d: devices * k for d, k in zip(array.dim_names, factors, strict=False)}


@st.composite
def placements(draw: st.DrawFn, *, wiring: bool = True) -> tuple[Array, Mesh, dict[str, int]]:
    """A mesh, a valid sharding on it, and numeric dim sizes that divide."""
    mesh = draw(meshes(wiring=wiring))
    array = draw(arrays(mesh.names))
    factors = draw(st.lists(st.integers(1, 3), min_size=3, max_size=3))
    return array, mesh, divisible_shape(array, mesh, factors)


@st.composite
def unreduced_placements(draw: st.DrawFn) -> tuple[Array, Mesh, dict[str, int], str]:
    """A placement that is unreduced over at least one axis, and that axis."""
    array, mesh, shape = draw(placements())
    if not array.unreduced:
        # make one axis unreduced: take it out of whatever dim it shards
        axis = draw(st.sampled_from(mesh.names))
        dims = [Dim(d.name, tuple(a for a in d.axes if a != axis)) for d in array.dims]
        array = Array(array.name, tuple(dims), frozenset({axis}))
    return array, mesh, shape, draw(st.sampled_from(sorted(array.unreduced)))


def applicable(array: Array, mesh: Mesh) -> list[Collective]:
    """Every collective (up to the order of its axes) that fits ``array`` on ``mesh``."""
    ops: list[Collective] = [AllGather(s) for s in ordered_subsets(array.axes)]
    for s in ordered_subsets(sorted(array.unreduced)):
        ops.append(AllReduce(s))
        ops.extend(ReduceScatter(s, d) for d in array.dim_names)
    if array.unreduced:
        ops.append(AllReduce(()))
    if len(array.dims) == 1:
        ops.extend(ReduceScatter(s) for s in ordered_subsets(sorted(array.unreduced)))
    for s in ordered_subsets(array.axes):
        sources = {array.sharded_dim(a) for a in s}
        ops.extend(AllToAll(s, t) for t in array.dim_names if t not in sources)
    ops.extend(CollectivePermute(a) for a in mesh.names)
    return ops


@st.composite
def applied(draw: st.DrawFn) -> tuple[Array, Mesh, dict[str, int], Collective]:
    """A placement and a collective that fits it."""
    array, mesh, shape = draw(placements())
    return array, mesh, shape, draw(st.sampled_from(applicable(array, mesh)))


# -- helpers ----------------------------------------------------------------------------


def same(x: sympy.Expr, y: sympy.Expr) -> bool:
    """Whether two cost expressions are equal.

    Numbers must be exactly equal; symbolic expressions must simplify to the
    same thing. SymPy cannot factor a constant out of a ``Max`` (it leaves
    ``Max(2a, 2b) - 2 Max(a, b)`` alone, slowly), so a difference with a ``Max``
    in it is instead evaluated exactly at random positive points (integers for sizes).
    """
    x, y = sympy.sympify(x), sympy.sympify(y)
    if x.is_number and y.is_number:
        return bool(x == y)
    if sympy.expand(x - y) == 0:
        return True
    if not (x.has(sympy.Max) or y.has(sympy.Max)):
        return sympy.simplify(x - y) == 0
    rng = random.Random(0)
    symbols = sorted((x - y).free_symbols, key=str)
    for _ in range(10):
        # xreplace swaps every symbol in one pass: subs would rebuild each Max once per symbol
        point = {
            s: sympy.Integer(rng.randint(1, 64))
            if s.is_integer
            else sympy.Rational(rng.randint(1, 64), rng.randint(1, 8))
            for s in symbols
        }
        if x.xreplace(point) != y.xreplace(point):
            return False
    return True


def numeric_cost(op: Collective, array: Array, mesh: Mesh, shape: dict[str, int], model: str) -> CollectiveCost:
    return op.cost(array, mesh, shape, dtype="fp32", constants=CONSTANTS, model=model)


def symbolic_cost(op: Collective, array: Array, mesh: Mesh, model: str) -> CollectiveCost:
    return op.cost(array, mesh.symbolic(), None, dtype="fp32", model=model)


# -- printing round-trips -------------------------------------------------------------

NOTATION_AXES = ["X", "Y", "Z", "x", "data", "model", "x1", "tp_2"]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_array_round_trip(data: st.DataObject) -> None:
    axes = data.draw(st.lists(st.sampled_from(NOTATION_AXES), max_size=4, unique=True))
    a = data.draw(arrays(axes))
    assert parse_array(str(a)) == a
    assert parse_array(a.latex()) == a
    assert str(parse_array(a.latex())) == str(a)
    assert eval(repr(a), {"Array": Array}) == a


@settings(max_examples=200, deadline=None)
@given(applied())
def test_collective_round_trip(case: tuple[Array, Mesh, dict[str, int], Collective]) -> None:
    array, _mesh, _shape, op = case
    e = op(array)
    assert parse_collective(str(e)) == e
    assert parse_collective(e.unicode()) == e
    assert parse_collective(e.latex()) == e


# -- AllReduce = ReduceScatter + AllGather --------------------------------------------


@settings(max_examples=100, deadline=None)
@given(unreduced_placements())
def test_all_reduce_is_reduce_scatter_then_all_gather(case: tuple[Array, Mesh, dict[str, int], str]) -> None:
    array, _mesh, _shape, x = case
    reduced = AllReduce(x).apply(array)
    assert x not in reduced.unreduced
    for d in array.dim_names:
        scattered = ReduceScatter(x, d).apply(array)
        assert scattered.sharded_dim(x) == d
        assert AllGather(x).apply(scattered) == reduced


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("symbolic", [False, True], ids=["numeric", "symbolic"])
@settings(max_examples=40, deadline=None)
@given(case=unreduced_placements(), pick=st.integers(0, 2))
def test_all_reduce_costs_reduce_scatter_plus_all_gather(
    case: tuple[Array, Mesh, dict[str, int], str], pick: int, model: str, symbolic: bool
) -> None:
    array, mesh, shape, x = case
    d = array.dim_names[pick % len(array.dims)]
    scattered = ReduceScatter(x, d).apply(array)
    if symbolic:
        whole = symbolic_cost(AllReduce(x), array, mesh, model)
        first = symbolic_cost(ReduceScatter(x, d), array, mesh, model)
        second = symbolic_cost(AllGather(x), scattered, mesh, model)
    else:
        whole = numeric_cost(AllReduce(x), array, mesh, shape, model)
        first = numeric_cost(ReduceScatter(x, d), array, mesh, shape, model)
        second = numeric_cost(AllGather(x), scattered, mesh, shape, model)
    for name in COST_FIELDS:
        total = getattr(first, name) + getattr(second, name)
        assert same(getattr(whole, name), total), (name, getattr(whole, name), total)


# -- the book's AllGather on a ring ---------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(placements(), st.sampled_from(["X", "Y", "Z"]), st.booleans())
def test_book_ring_gather_time_is_independent_of_axis_size(
    case: tuple[Array, Mesh, dict[str, int]], axis: str, symbolic_dims: bool
) -> None:
    array, mesh, _shape = case
    if axis not in mesh.names:
        axis = mesh.names[0]
    if array.sharded_dim(axis) is None:
        # shard the first dim along the axis (minor-most), freeing it from other roles
        dims = [Dim(d.name, tuple(a for a in d.axes if a != axis)) for d in array.dims]
        dims[0] = Dim(dims[0].name, (*dims[0].axes, axis))
        array = Array(array.name, tuple(dims), array.unreduced - {axis})
    others = int(sympy.prod([a.size for a in mesh.axes if a.name != axis]))
    # the same global sizes for every axis size: divisible by any sharding with |axis| <= 8
    shape = None if symbolic_dims else {d: 8 * others * (i + 1) for i, d in enumerate(array.dim_names)}
    volumes, book, ring = set(), set(), []
    for n in (2, 4, 8):
        sizes = {a.name: (n if a.name == axis else a.size) for a in mesh.axes}
        wiring = {a.name: a.topology for a in mesh.axes} | {axis: "ring"}
        m = Mesh(sizes, topology=wiring, fabric={a.name: a.fabric for a in mesh.axes})
        cost = AllGather(axis).cost(array, m, shape, dtype="bf16", model="book")
        volumes.add(cost.bytes)
        book.add(cost.bandwidth_time)
        ring.append(AllGather(axis).cost(array, m, shape, dtype="bf16", model="ring").bandwidth_time)
    assert len(volumes) == 1, volumes  # the same V throughout
    assert len(book) == 1, book
    # the exact count keeps the (N - 1)/N factor, so there the time does grow with N
    assert same(ring[0] * 2, book.pop())  # N = 2: (N - 1)/N = 1/2
    assert same(ring[2] * 4, ring[0] * 7)  # N = 8: 7/8 = (7/4)(1/2)


# -- placement conserves bytes ----------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(placements(), st.sampled_from(["bf16", "fp32", "int8"]), st.booleans())
def test_bytes_are_conserved(case: tuple[Array, Mesh, dict[str, int]], dtype: str, symbolic: bool) -> None:
    array, mesh, shape = case
    p = place(array, mesh.symbolic(), None, dtype=dtype) if symbolic else place(array, mesh, shape, dtype=dtype)
    assert same(p.bytes_per_device * p.mesh.devices, p.total_bytes)
    assert same(p.total_bytes, p.logical_bytes * p.copies * p.partial_sums)
    if not symbolic:
        assert p.total_bytes == p.logical_bytes * int(mesh.devices) // int(p.shards)
        assert all(n.is_Integer and n > 0 for n in p.local_shape)


# -- ReduceScatter undoes AllGather --------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(placements(wiring=False))
def test_reduce_scatter_undoes_gather_of_minor_axis(case: tuple[Array, Mesh, dict[str, int]]) -> None:
    array, _mesh, _shape = case
    for d in array.dims:
        if not d.axes:
            continue
        x = d.axes[-1]
        gathered = AllGather(x).apply(array)
        assert ReduceScatter(x, d.name).apply(gathered.with_unreduced(array.unreduced | {x})) == array


# -- AllGather leaves no gathered axis ----------------------------------------------


@settings(max_examples=200, deadline=None)
@given(placements(wiring=False), st.data())
def test_all_gather_leaves_no_gathered_axis(case: tuple[Array, Mesh, dict[str, int]], data: st.DataObject) -> None:
    array, _mesh, _shape = case
    subsets = ordered_subsets(array.axes)
    if not subsets:
        return
    axes = data.draw(st.sampled_from(subsets))
    out = AllGather(axes).apply(array)
    for a in axes:
        assert out.sharded_dim(a) is None
        assert a not in out.axes
    assert out.axes == tuple(a for a in array.axes if a not in axes)
    assert out.unreduced == array.unreduced
    assert out.dim_names == array.dim_names


# -- costs are non-negative and the time is the larger term ---------------------------


@settings(max_examples=150, deadline=None)
@given(applied(), st.sampled_from(MODELS))
def test_costs_are_non_negative(case: tuple[Array, Mesh, dict[str, int], Collective], model: str) -> None:
    array, mesh, shape, op = case
    c = numeric_cost(op, array, mesh, shape, model)
    for name in ("bytes", "bytes_in", "bytes_out", *COST_FIELDS):
        value = getattr(c, name)
        assert value.is_number, (name, value)
        assert value >= 0, (name, value)
    assert c.time >= c.bandwidth_time
    assert c.time >= c.latency_time
    assert c.time == max(c.bandwidth_time, c.latency_time)
    assert c.regime in ("bandwidth", "latency")

"""Collective costs: one row per collective, topology and model, checked against hand formulas.

``V`` is the bytes the formulas are written in, ``w`` a link's one-way bandwidth
(``W_ici / 2`` on ICI) and ``N`` the axis size; every row asserts
``simplify(got - expected) == 0``.
"""

from __future__ import annotations

import pytest
import sympy

from symshard.algebra.symbols import T_base, T_hop, T_net, T_nvlink, W_dcn, W_ici, W_nvlink, axis
from symshard.costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    CollectivePermute,
    ReduceScatter,
    parse_collective,
)
from symshard.errors import CollectiveError, DivisibilityError, UnknownAxisError, UnknownModelError
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware

N = axis("X")
w = W_ici / 2  # one ICI link, one direction
Vs = sympy.Symbol("V", positive=True)

# (collective, topology, model, expected bandwidth time in V, expected hops)
ROWS = [
    # two-way ring with wraparound: the chapter's formulas
    ("AllGather_X(A[I_X, J])", "ring", "book", Vs / W_ici, N / 2),
    ("ReduceScatter_{X,I}(A[I, J]{U_X})", "ring", "book", Vs / W_ici, N / 2),
    ("AllReduce_X(A[I, J]{U_X})", "ring", "book", 2 * Vs / W_ici, N),
    ("AllToAll_{X,J}(A[I_X, J])", "ring", "book", Vs / (4 * W_ici), N / 2),
    ("CollectivePermute_X(A[I_X, J])", "ring", "book", Vs / w, 1),
    # exact counting on the same ring
    ("AllGather_X(A[I_X, J])", "ring", "ring", (N - 1) * Vs / (N * W_ici), sympy.floor(N / 2)),
    ("AllReduce_X(A[I, J]{U_X})", "ring", "ring", 2 * (N - 1) * Vs / (N * W_ici), 2 * sympy.floor(N / 2)),
    ("AllToAll_{X,J}(A[I_X, J])", "ring", "ring", sympy.floor(N**2 / 4) * Vs / (N**2 * W_ici), sympy.floor(N / 2)),
    # one-way ring: half the bandwidth of a two-way ring
    ("AllGather_X(A[I_X, J])", "one-way-ring", "book", Vs / w, N - 1),
    ("AllGather_X(A[I_X, J])", "one-way-ring", "ring", (N - 1) * Vs / (N * w), N - 1),
    ("AllToAll_{X,J}(A[I_X, J])", "one-way-ring", "book", Vs / (2 * w), N - 1),
    ("AllToAll_{X,J}(A[I_X, J])", "one-way-ring", "ring", (N - 1) * Vs / (2 * N * w), N - 1),
    # no wraparound: N - 1 one-way hops in both models (Pop Quiz 2)
    ("AllGather_X(A[I_X, J])", "line", "book", (N - 1) * Vs / (N * w), N - 1),
    ("AllGather_X(A[I_X, J])", "line", "ring", (N - 1) * Vs / (N * w), N - 1),
    ("AllReduce_X(A[I, J]{U_X})", "line", "book", 2 * (N - 1) * Vs / (N * w), 2 * (N - 1)),
    ("AllToAll_{X,J}(A[I_X, J])", "line", "ring", sympy.floor(N**2 / 4) * Vs / (N**2 * w), N - 1),
    ("AllToAll_{X,J}(A[I_X, J])", "line", "book", Vs / (4 * w), N - 1),
    ("CollectivePermute_X(A[I_X, J])", "line", "book", Vs / w, N - 1),
]


@pytest.mark.parametrize(("text", "topology", "model", "expected", "hops"), ROWS)
def test_cost_table(text, topology, model, expected, hops):
    c = parse_collective(text).cost(Mesh("X", topology=topology), model=model)
    got = c.bandwidth_time.subs(c.bytes, Vs) if c.bytes.is_Symbol else c.bandwidth_time
    assert sympy.simplify(got - expected.subs(Vs, c.bytes)) == 0
    assert sympy.simplify(c.hops - hops) == 0
    assert sympy.simplify(c.latency_time - T_hop * hops) == 0
    assert c.time == sympy.Max(c.latency_time, c.bandwidth_time)
    assert c.model == model


def test_volume_conventions():
    mesh = Mesh("X=4,Y=2")
    shape = {"I": 64, "J": 32}
    # AllGather: V is its output per device
    ag = AllGather("X").cost("A[I_X, J_Y]", mesh, shape)
    assert (ag.bytes, ag.bytes_in, ag.bytes_out) == (64 * 16 * 2, 16 * 16 * 2, 64 * 16 * 2)
    # ReduceScatter and AllReduce: V is the unreduced input per device
    rs = ReduceScatter("X", "I").cost("C[I, J_Y]{U_X}", mesh, shape)
    assert (rs.bytes, rs.bytes_out) == (64 * 16 * 2, 16 * 16 * 2)
    assert AllReduce("X").cost("C[I, J_Y]{U_X}", mesh, shape).bytes == 64 * 16 * 2
    # AllToAll: V is the input per device times the size of its axes
    a2a = AllToAll("X", "J").cost("A[I_X, J]", mesh, shape)
    assert (a2a.bytes_in, a2a.bytes) == (16 * 32 * 2, 64 * 32 * 2)
    # permute: the local block
    assert CollectivePermute("X").cost("A[I_X, J]", mesh, shape).bytes == 16 * 32 * 2


def test_multi_axis_gather_multiplies_bandwidth():
    mesh = Mesh("X,Y")
    c = AllGather(("X", "Y")).cost("A[I_XY, J]", mesh)
    assert sympy.simplify(c.bandwidth_time - c.bytes / (2 * W_ici)) == 0
    assert sympy.simplify(c.hops - (axis("X") + axis("Y")) / 2) == 0
    exact = AllGather(("X", "Y")).cost("A[I_XY, J]", mesh, model="ring")
    devices = axis("X") * axis("Y")
    assert sympy.simplify(exact.bandwidth_time - (1 - 1 / devices) * c.bytes / (2 * W_ici)) == 0


def test_multi_axis_alltoall_book_formula():
    # V * max(|A|, |B|) / (4 * N * W_ici) on an A x B mesh with N = A * B devices
    mesh = Mesh("X=8,Y=2")
    c = AllToAll(("X", "Y"), "J").cost("A[I_XY, J]", mesh, "I=64,J=64")
    assert c.bandwidth_time == c.bytes * 8 / (4 * 16 * W_ici)


def test_axes_of_size_one_move_nothing():
    c = AllGather("X").cost("A[I_X]", Mesh("X=1"), "I=8")
    assert c.time == 0
    assert c.hops == 0
    assert c.crossover_bytes is None


def test_numeric_equals_symbolic_substituted():
    expr = parse_collective("ReduceScatter_{X,K}(C[I, K]{U_X})")
    v5p = hardware("v5p")
    mesh = Mesh("X=8", hardware=v5p)
    numeric = expr.cost(mesh, "I=512,K=1024", hardware=v5p, model="ring")
    symbolic = expr.cost(mesh.symbolic(), model="ring")
    values = {**v5p.constants(), axis("X"): 8, sympy.Symbol("I", positive=True, integer=True): 512,
              sympy.Symbol("K", positive=True, integer=True): 1024}  # fmt: skip
    assert symbolic.subs(values).time == numeric.time
    assert symbolic.subs(values).hops == numeric.hops


def test_regime_and_crossover():
    v5e = hardware("v5e")
    expr = parse_collective("AllGather_X(A[I_X])")
    mesh = Mesh("X=16", hardware=v5e)
    big = expr.cost(mesh, "I=1048576", hardware=v5e)
    small = expr.cost(mesh, "I=1024", hardware=v5e)
    assert (big.regime, small.regime) == ("bandwidth", "latency")
    # both agree on where the switch happens: T_hop * 8 hops = V / (16 * 4.5e10 B/s ... )
    assert big.crossover_bytes == small.crossover_bytes == 8 * sympy.Rational(1, 10**6) * 9 * 10**10
    assert expr.cost().regime is None  # symbolic: undecided


def test_gpu_wiring_and_nccl_latency():
    h100 = hardware("h100")
    mesh = Mesh("X=2,Y=8", hardware=h100)
    assert mesh.axis("Y").fabric.value == "nvlink"
    assert mesh.axis("X").fabric.value == "dcn"  # 16 GPUs: the outer axis leaves the node
    inside = AllGather("Y").cost("A[I_Y]", mesh, "I=1024", hardware=h100)
    # through a switch a GPU's egress is the limit: V / W_nvlink (book), (N-1)/N V / W_nvlink (ring)
    assert inside.bandwidth_time == inside.bytes / h100.nvlink_bandwidth
    exact = AllGather("Y").cost("A[I_Y]", mesh, "I=1024", hardware=h100, model="ring")
    assert exact.bandwidth_time == sympy.Rational(7, 8) * exact.bytes / h100.nvlink_bandwidth
    across = AllGather("X").cost("A[I_X]", mesh, "I=1024", hardware=h100)
    assert across.bandwidth_time == across.bytes / h100.dcn_bandwidth
    # NCCL's tuning model (2.7.5, ring, LL): 3.6 us base + 0.47 us per NVLink step, 2.7 us per network step,
    # added to the bandwidth term
    us = sympy.Rational(1, 10**6)
    assert inside.latency_time == sympy.Rational("3.6") * us + 7 * sympy.Rational("0.47") * us
    assert across.latency_time == sympy.Rational("3.6") * us + sympy.Rational("2.7") * us
    assert inside.time == inside.latency_time + inside.bandwidth_time
    assert inside.regime == "latency" and inside.latency_model == "nccl"
    assert not any("has no figure" in a for a in inside.assumptions)
    # symbolic GPU formulas use W_nvlink and W_dcn, T_base and the per-step latencies
    sym = AllGather(("X", "Y")).cost("A[I_XY]", mesh.symbolic())
    assert sym.bandwidth_time.free_symbols >= {W_nvlink, W_dcn}
    assert sym.latency_time.free_symbols >= {T_base, T_nvlink, T_net}


def test_mesh_errors_point_into_the_collective():
    with pytest.raises(UnknownAxisError, match=r"mesh axis Y .* is not in the mesh X=4"):
        parse_collective("AllGather_Y(A[I_XY])").cost("X=4")
    with pytest.raises(DivisibilityError, match=r"dim K of size 6 does not split evenly over the 4 devices of X"):
        parse_collective("ReduceScatter_{X,K}(C[I, K]{U_X})").cost("X=4", "I=8,K=6")
    with pytest.raises(UnknownModelError, match="unknown cost model 'exact'"):
        parse_collective("AllGather_X(A[I_X])").cost(model="exact")


def test_apply_errors_from_the_typed_api():
    with pytest.raises(CollectiveError, match="not sharded along X"):
        AllGather("X").apply(parse_collective("AllGather_Y(A[I_Y])").operand)
    assert str(AllGather("XY")) == "AllGather_XY"
    assert AllGather("data").axes == ("data",)
    assert str(ReduceScatter(("X", "Y"), "K")) == "ReduceScatter_{XY,K}"
    assert str(AllToAll("data", "J")) == "AllToAll_{data,J}"


def test_gathering_a_major_axis_is_noted():
    e = parse_collective("AllGather_X(A[I_XY, J])")
    assert str(e.output) == "A[I_Y, J]"
    assert e.notes and "global permutation" in e.notes[0]
    assert not parse_collective("AllGather_Y(A[I_XY, J])").notes


def test_cost_renders_in_notebooks():
    from symshard.notebook import show

    c = parse_collective("AllGather_X(A[I_X, J])").cost()
    assert (
        show("text/latex", c)
        == r"$T = \max\left(\frac{T_{\text{hop}} \lvert X \rvert}{2}, \frac{2 I J}{W_{\text{ici}}}\right)$"
    )

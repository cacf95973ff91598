"""The chapter's worked numbers, reproduced from the algebra under the ``book`` model.

Every expected value below is the book's printed answer (or the exact arithmetic
the book's own answer spells out), typed from the chapter, never computed by
symshard. Where the book rounds (1 MiB taken as 1e6 B, 33.5 MB as 34 MB) the
tolerance says so.
"""

from __future__ import annotations

import pytest
import sympy

from symshard.algebra.symbols import T_hop, W_ici
from symshard.costs.collectives import AllGather, AllToAll, parse_collective
from symshard.costs.placement import place
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware


def close(value, expected, rel):
    return float(value) == pytest.approx(expected, rel=rel)


# -- memory pop quizzes -------------------------------------------------------------------


def test_pop_quiz_2d_sharding_across_one_axis():
    # fp32[1024, 4096], A[I_XY, J], mesh {'X': 8, 'Y': 2}: local fp32[64, 4096], 1 MiB per device
    p = place("A[I_XY, J]", "X=8,Y=2", "I=1024,J=4096", dtype="fp32")
    assert p.local_shape == (64, 4096)
    assert p.bytes_per_device == 4 * 64 * 4096 == 2**20
    # "about 1e6 / 3.4e12 = 294ns" on H100 with the chapter's 3.4e12 B/s
    h100 = hardware("h100").with_constants(W_hbm=3.4e12)
    t = p.hbm_time(h100)
    assert t == sympy.Rational(2**20, 34 * 10**11)  # exact: 308 ns
    assert close(t, 294e-9, rel=0.05)  # the book rounds 1 MiB to 1e6 bytes


def test_pop_quiz_int8_memory_and_copies():
    # int8[128, 2048], A[I_XY, J], Mesh({'X': 2, 'Y': 8, 'Z': 2}): 16,384 B per device, 512 KiB in total
    p = place("A[I_XY, J]", "X=2,Y=8,Z=2", "I=128,J=2048", dtype="int8")
    assert p.local_shape == (8, 2048)
    assert p.bytes_per_device == 16_384
    assert p.copies == 2  # replicated over Z
    assert p.total_bytes == 512 * 1024
    assert p.total_bytes == 32 * 16_384


def test_question_1_replicated_sharding_ratio():
    # A[I_X, J, K] on Mesh({'X': 4, 'Y': 8, 'Z': 2}): total bytes / one copy = |Y|·|Z| = 16
    p = place("A[I_X, J, K]", "X=4,Y=8,Z=2", "I=64,J=8,K=8")
    assert p.total_bytes / p.logical_bytes == 16
    assert p.copies == 16
    # and symbolically
    s = place("A[I_X, J, K]", "X,Y,Z")
    assert sympy.simplify(s.total_bytes / s.logical_bytes - s.mesh.size("Y") * s.mesh.size("Z")) == 0


# -- AllGather pop quiz (TPU v5e, mesh {'X': 8, 'Y': 4}) ----------------------------------------


V5E = hardware("tpu-v5e")


def test_pop_quiz_allgather_full_ring():
    # "T_comms = 34e6 / 9e10 = 377us" (the array is 2048*8192*2 = 33.5e6 bytes; the book rounds to 34e6)
    mesh = Mesh("X=8,Y=4", hardware=V5E, topology={"Y": "ring"})
    c = parse_collective("AllGather_Y([E_Y, F])").cost(mesh, "E=2048,F=8192", hardware=V5E)
    assert c.bytes == 2048 * 8192 * 2
    assert c.bandwidth_time == sympy.Rational(2048 * 8192 * 2, 9 * 10**10)
    assert close(c.time, 377e-6, rel=0.015)


def test_pop_quiz_allgather_no_wraparound():
    # a 4-wide v5e axis has no wraparound: 3 hops of 8.4e6 B at 4.5e10 B/s = 560us
    mesh = Mesh("X=8,Y=4", hardware=V5E)
    assert mesh.axis("Y").topology.value == "line"
    c = parse_collective("AllGather_Y([E_Y, F])").cost(mesh, "E=2048,F=8192", hardware=V5E)
    assert c.bandwidth_time == sympy.Rational(3 * 512 * 8192 * 2, 45 * 10**9)
    assert close(c.time, 560e-6, rel=0.005)
    assert c.regime == "bandwidth"


def test_pop_quiz_allgather_small_is_latency_bound():
    # E = F = 256: 32 kB shards, 0.7us per hop of data, but 3 hops of 1us: about 3us, latency-bound
    mesh = Mesh("X=8,Y=4", hardware=V5E)
    c = parse_collective("AllGather_Y([E_Y, F])").cost(mesh, "E=256,F=256", hardware=V5E)
    assert c.hops == 3
    assert c.regime == "latency"
    assert c.time == sympy.Rational(3, 10**6)


def test_latency_bound_below_45kB_per_hop_on_v5e():
    # "sending any buffer under 4.5e10 * 1e-6 = 45kB will be latency bound": per-shard crossover on a ring
    mesh = Mesh("X=16", hardware=V5E)
    assert mesh.axis("X").topology.value == "ring"
    c = AllGather("X").cost("A[I_X]", mesh, "I=1048576", hardware=V5E)
    assert c.crossover_bytes / 16 == 45_000


# -- Questions 2 and 3 (TPU v4p 4x4x4, B=1024, D=4096, bf16) ---------------------------------------

V4P = hardware("tpu-v4p")
CUBE = Mesh("X=4,Y=4,Z=4", hardware=V4P)


@pytest.mark.parametrize(
    ("collective", "expected_s", "rel"),
    [
        # 2BD / (9e10 · Y) = 23us
        ("AllGather_X([B_X, D_Y])", 23e-6, 0.02),
        # 2BD / (2 · 9e10) = 46us
        ("AllGather_XY([B_X, D_Y])", 46e-6, 0.02),
        # 4BD / (X · Y · 9e10) = 11.6us
        ("AllReduce_Z([B_X, D_Y]{U_Z})", 11.6e-6, 0.01),
    ],
)
def test_question_2_allgather_latency(collective, expected_s, rel):
    c = parse_collective(collective).cost(CUBE, "B=1024,D=4096", hardware=V4P)
    assert c.regime == "bandwidth"
    assert close(c.time, expected_s, rel=rel)


def test_question_2_exact_values():
    exact = {
        "AllGather_X([B_X, D_Y])": sympy.Rational(2 * 1024 * 4096, 9 * 10**10 * 4),
        "AllGather_XY([B_X, D_Y])": sympy.Rational(2 * 1024 * 4096, 2 * 9 * 10**10),
        "AllReduce_Z([B_X, D_Y]{U_Z})": sympy.Rational(4 * 1024 * 4096, 16 * 9 * 10**10),
    }
    for text, value in exact.items():
        assert parse_collective(text).cost(CUBE, "B=1024,D=4096", hardware=V4P).time == value
    # "far from the latency bound of 4us (1us per hop)" for the XY gather
    assert parse_collective("AllGather_XY([B_X, D_Y])").cost(CUBE, "B=1024,D=4096", hardware=V4P).hops == 4


def test_question_3_latency_bound_allgather():
    # AllGather_X([B_X]) with B = 128 in bf16 on a v4p 4x4x4: 2 hops over the wraparound ring, about 2us
    c = parse_collective("AllGather_X([B_X])").cost(CUBE, "B=128", hardware=V4P)
    assert c.bytes == 256
    assert c.bytes_in == 64
    assert c.hops == 2
    assert c.regime == "latency"
    assert c.time == sympy.Rational(2, 10**6)


# -- Question 10: AllToAll against AllGather ----------------------------------------------------


@pytest.mark.parametrize(
    ("topology", "ratio"),
    [
        ("ring", sympy.Rational(1, 4)),  # bidirectional ring: an AllToAll costs a quarter of an AllGather
        ("one-way-ring", sympy.Rational(1, 2)),  # one-way links: half
    ],
)
@pytest.mark.parametrize("n", [4, 8, 16])
def test_question_10_alltoall_vs_allgather(topology, ratio, n):
    mesh = Mesh({"X": n}, topology=topology)
    a2a = AllToAll("X", "J").cost("A[I_X, J]", mesh, {"I": 64 * n, "J": 64 * n})
    ag = AllGather("X").cost("A[I_X, J]", mesh, {"I": 64 * n, "J": 64 * n})
    assert a2a.bytes == ag.bytes  # both in terms of the whole array's V bytes
    assert sympy.simplify(a2a.bandwidth_time / ag.bandwidth_time - ratio) == 0


def test_question_10_link_counts_one_way_ring():
    # one-way ring of D devices, N x N matrix: an AllGather moves N^2 (1 - 1/D) scalars over each link,
    # an AllToAll N^2/2 (1 - 1/D); with the exact ring model both factors appear
    n, d = 64, 8
    mesh = Mesh({"X": d}, topology="one-way-ring")
    w = sympy.Symbol("w", positive=True)
    ag = AllGather("X").cost("A[I_X, J]", mesh, {"I": n, "J": n}, dtype="int8", model="ring", constants={W_ici: 2 * w})
    a2a = AllToAll("X", "J").cost(
        "A[I_X, J]", mesh, {"I": n, "J": n}, dtype="int8", model="ring", constants={W_ici: 2 * w}
    )
    assert ag.bandwidth_time == sympy.Rational(n * n * (d - 1), d) / w
    assert a2a.bandwidth_time == sympy.Rational(n * n * (d - 1), 2 * d) / w


# -- the summary table, symbolically -------------------------------------------------------------------


def test_summary_table_formulas():
    ring = Mesh("X")
    # AllGather: bytes / W_ici; AllReduce: 2x; AllToAll: / 4 -- with V the bytes of the full array
    ag = parse_collective("AllGather_X(A[I_X, J])").cost(ring)
    rs = parse_collective("ReduceScatter_{X,J}(A[I, J]{U_X})").cost(ring)
    ar = parse_collective("AllReduce_X(A[I, J]{U_X})").cost(ring)
    a2a = parse_collective("AllToAll_{X,J}(A[I_X, J])").cost(ring)
    for c, factor in ((ag, 1), (rs, 1), (ar, 2), (a2a, sympy.Rational(1, 4))):
        assert sympy.simplify(c.bandwidth_time - factor * c.bytes / W_ici) == 0
    # latency-aware: max(T_min * X / 2, V / W_ici)
    x = ring.size("X")
    assert sympy.simplify(ag.latency_time - T_hop * x / 2) == 0

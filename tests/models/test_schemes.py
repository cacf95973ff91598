"""The MLP parallelism schemes, checked against costs counted here from first principles.

The expected collectives below are written from the shardings alone: for each one the
per-device bytes ``V`` (the array with the collective's axes gathered) and the chapter's
bandwidth-only time (``V / W`` for an AllGather or ReduceScatter, ``2V / W`` for an
AllReduce, ``W`` multiplied by the number of physical axes). Nothing here calls the
solver: thresholds come from setting the hand-counted times equal.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import symshard as ss
from symshard.algebra.symbols import axis, dim
from symshard.cli import main
from symshard.errors import PlanError
from symshard.models.schemes import B_CHIP, SCHEMES, N, fsdp_tp_split, largest_tp, layer, pods

FACTOR = {"AllGather": 1, "ReduceScatter": 1, "AllReduce": 2}


def expected(scheme, b, d, f, x, y):
    """(phase, kind, V bytes, axis) of every collective, counted from the shardings (bf16: 2 bytes)."""
    two = 2
    rows = {
        "dp": [("backward", "AllReduce", two * d * f, "X")] * 2,
        "fsdp": [("forward", "AllGather", two * d * f, "X")] * 2
        + [("backward", "AllGather", two * d * f, "X")] * 2
        + [("backward", "ReduceScatter", two * d * f, "X")] * 2,
        "tp": [("forward", "AllGather", two * b * d, "Y"), ("forward", "ReduceScatter", two * b * d, "Y"),
               ("backward", "AllGather", two * b * d, "Y"), ("backward", "ReduceScatter", two * b * d, "Y")],
        "fsdp+tp": [("forward", "AllGather", Fraction(two * b * d, x), "Y"),
                    ("forward", "ReduceScatter", Fraction(two * b * d, x), "Y")]
        + [("forward", "AllGather", Fraction(two * d * f, y), "X")] * 2
        + [("backward", "AllGather", Fraction(two * b * d, x), "Y"),
           ("backward", "ReduceScatter", Fraction(two * b * d, x), "Y")]
        + [("backward", "AllGather", Fraction(two * d * f, y), "X")] * 2
        + [("backward", "ReduceScatter", Fraction(two * d * f, y), "X")] * 2,
    }  # fmt: skip
    return rows[scheme]


def hand_times(scheme, b, d, f, x, y, c, w, mx=1, my=1, overlap=False):
    """{phase: (T_math, T_comms)} from first principles; with ``overlap`` the collectives on X and those
    on Y run at the same time (two ICI axes have their own links), so T_comms is the larger total."""
    chips = {"dp": x, "fsdp": x, "tp": y, "fsdp+tp": x * y}[scheme]
    out = {}
    for phase, passes in (("forward", 2), ("backward", 4)):
        math_t = Fraction(passes * 2 * b * d * f, chips) / c
        per_axis = {"X": Fraction(0), "Y": Fraction(0)}
        for ph, kind, v, ax in expected(scheme, b, d, f, x, y):
            if ph == phase:
                per_axis[ax] += FACTOR[kind] * Fraction(v) / (w * (mx if ax == "X" else my))
        out[phase] = (math_t, max(per_axis.values()) if overlap else sum(per_axis.values()))
    return out


CHIPS = {"tpu-v5p": "ici", "tpu-v5e": "ici", "h100": "nvlink"}
# inside one H100 node every axis shares the GPUs' NVLink ports: collectives on X and Y cannot overlap
OWN_LINKS = {"tpu-v5p": True, "tpu-v5e": True, "h100": False}


def bandwidth(chip):
    hw = ss.hardware(chip)
    return Fraction(2 * hw.ici_link_bandwidth) if hw.ici_link_bandwidth else Fraction(hw.nvlink_bandwidth)


SHAPES = [(4096, 8192, 28672), (1 << 20, 8192, 30720), (65536, 4096, 16384), (2048, 1024, 4096)]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("shape", SHAPES)
def test_collectives_match_the_shardings(scheme, shape):
    b, d, f = shape
    x, y = 8, 4
    lay = layer(scheme)
    values = lay.values({"X": x, "Y": y}, {"B": b, "D": d, "F": f})
    got = Counter((s.phase, s.kind, Fraction(str(s.bytes.xreplace(values))), s.axes[0]) for s in lay.collectives())
    assert got == Counter(expected(scheme, b, d, f, x, y))


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("chip", sorted(CHIPS))
@pytest.mark.parametrize("shape", SHAPES[:3])
@pytest.mark.parametrize("mesh", [(16, 4), (64, 8), (256, 2)])
@pytest.mark.parametrize("overlap", ["axes", "none"])
def test_times_and_bound_agree_with_first_principles(scheme, chip, shape, mesh, overlap):
    b, d, f = shape
    x, y = mesh
    lay = layer(scheme, hardware=chip, comm_overlap=overlap)
    assert lay.comm_overlap == overlap
    hw = ss.hardware(chip)
    c, w = Fraction(hw.flops_bf16), bandwidth(chip)
    values = lay.values({"X": x, "Y": y}, {"B": b, "D": d, "F": f}, chip)
    hand = hand_times(scheme, b, d, f, x, y, c, w, overlap=overlap == "axes" and OWN_LINKS[chip])
    for phase in ("forward", "backward"):
        assert Fraction(str(lay.math_time(phase).xreplace(values))) == hand[phase][0]
        assert Fraction(str(sympy.sympify(lay.comm_time(phase)).xreplace(values))) == hand[phase][1]
    compute_bound = all(comm <= m for m, comm in hand.values())
    cond = lay.condition("Y" if scheme == "tp" else "B")
    assert cond.holds(values) is compute_bound


@pytest.mark.parametrize("chip", sorted(CHIPS))
@pytest.mark.parametrize(("scheme", "mx"), [("dp", 1), ("fsdp", 1), ("dp", 2), ("fsdp", 3)])
def test_dp_and_fsdp_need_a_batch_per_chip_of_c_over_w(chip, scheme, mx):
    lay = layer(scheme, hardware=chip)
    hw = ss.hardware(chip)
    c, w = Fraction(hw.flops_bf16), bandwidth(chip)
    # the hand count: the backward pass moves 8DF bytes-worth per chip (DP: two AllReduces of 2DF;
    # FSDP: two gathers and two reduce-scatters), for 8BDF/|X| FLOPs; the forward (FSDP) is the same ratio
    b, d, f, x = 1, 8192, 28672, 16
    per_b = hand_times(scheme, b, d, f, x, 1, c, w, mx)["backward"]
    threshold = per_b[1] / per_b[0] * b / x  # tokens per chip where T_comms = T_math
    assert threshold == c / (w * mx)
    cond = lay.condition("B_chip").subs(lay.values({"X": x}, {}, chip, {"X": mx}), B_CHIP)
    (case,) = cond.cases
    (rel,) = case.relations
    assert Fraction(str(rel.rhs)) == threshold


def test_the_book_figure_on_tpu_v5p():
    cond = layer("fsdp").condition("B_chip").subs(layer("fsdp").values({"X": 1}, {}, "tpu-v5p"), B_CHIP)
    assert cond.text() == "B_chip ≥ 2550"


@pytest.mark.parametrize("chip", sorted(CHIPS))
@pytest.mark.parametrize("f", [28672, 30000, 16384])
@pytest.mark.parametrize("my", [1, 2])
def test_largest_tp_degree(chip, f, my):
    hw = ss.hardware(chip)
    c, w = Fraction(hw.flops_bf16), bandwidth(chip)
    # forward: 4BD/(W·M_Y) ≤ 4BDF/(|Y|·C)  <=>  |Y| ≤ F·W·M_Y/C; the backward pass is looser
    expected_largest = math.floor(Fraction(f) * w * my / c)
    lay = layer("tp", hardware=chip)
    assert largest_tp(f, lay.values({}, {}, chip, {"Y": my}), CHIPS[chip]) == expected_largest
    for yy in (expected_largest, expected_largest + 1):
        hand = hand_times("tp", 1024, 8192, f, 1, yy, c, w, my=my)
        assert all(comm <= m for m, comm in hand.values()) is (yy == expected_largest)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(SCHEMES),
    st.integers(1, 64).map(lambda k: 256 * k),
    st.integers(1, 16).map(lambda k: 512 * k),
    st.integers(1, 32).map(lambda k: 1024 * k),
)
def test_total_training_flops_are_six_bdf_per_matmul_with_no_duplicated_work(scheme, b, d, f):
    lay = layer(scheme)
    assert lay.total_flops() == 12 * dim("B") * dim("D") * dim("F")
    values = lay.values({"X": 4, "Y": 2}, {"B": b, "D": d, "F": f})
    assert lay.total_flops().xreplace(values) == 6 * b * d * f * 2
    assert layer(scheme, training=False).total_flops() == 4 * dim("B") * dim("D") * dim("F")


def test_fsdp_tp_split_minimises_the_hand_counted_communication():
    split = fsdp_tp_split()
    mx, my = sympy.Symbol("M_X", positive=True, integer=True), sympy.Symbol("M_Y", positive=True, integer=True)
    b, f, n = 1 << 22, 28672, 8192
    x_opt = float(split.x.xreplace({dim("B"): b, dim("F"): f, N: n, mx: 2, my: 1}))

    def comm(x):  # forward: weights gathered over X (2 of 2DF/|Y|), activations over Y (2 of 2BD/|X|)
        y = n / x
        return 2 * 2 * 8192 * f / (y * 2) + 2 * 2 * b * 8192 / (x * 1)

    grid = [x_opt * (1 + k / 1000) for k in range(-300, 301)]
    assert min(grid, key=comm) == pytest.approx(x_opt, rel=2e-3)
    assert x_opt == pytest.approx(math.sqrt(b * n * 2 / f), rel=1e-12)


@pytest.mark.parametrize("chip", sorted(CHIPS))
@pytest.mark.parametrize(("mx", "my"), [(1, 1), (2, 1), (2, 2)])
@pytest.mark.parametrize("overlap", ["axes", "none"])
def test_fsdp_tp_min_batch_per_chip(chip, mx, my, overlap):
    split = fsdp_tp_split(hardware=chip, comm_overlap=overlap)
    assert split.comm_overlap == overlap
    hw = ss.hardware(chip)
    c, w = hw.flops_bf16, bandwidth(chip)
    values = {**layer("fsdp+tp", hardware=chip).values({}, {"F": 28672}, chip, {"X": mx, "Y": my})}
    got = Fraction(str(split.min_batch_per_chip.xreplace(values)))
    # the forward pass moves a·|X| + b/|X| (weights over X, activations over Y). Added up (overlap "none",
    # or two axes sharing one GPU's NVLink ports) the best split gives T_comms = 2·sqrt(a·b), and
    # T_comms = T_math gives B/N = 4C²/(W²·M_X·M_Y·F); when the two axes' collectives overlap (two ICI
    # axes, the book's convention) T_comms = max(a·|X|, b/|X|) = sqrt(a·b) at the best split, and the
    # bound is the book's C²/(W²·M_X·M_Y·F), 4 times lower
    together = overlap == "axes" and OWN_LINKS[chip]
    factor = 1 if together else 4
    assert got == Fraction(factor) * Fraction(c) ** 2 / (Fraction(w) ** 2 * mx * my * 28672)
    # and the numeric check: at that batch per chip and the best split, comm equals math
    n, f, d = 4096, 28672, 8192
    b = float(got) * n
    x = math.sqrt(b * n * mx / (f * my))
    weights, acts = 4 * d * f / (w * mx * (n / x)), 4 * b * d / (w * my * x)
    comm = max(weights, acts) if together else weights + acts
    assert comm == pytest.approx(4 * b * d * f / (n * c), rel=1e-9)


@pytest.mark.parametrize("chip", ["tpu-v5p", "tpu-v5e", "tpu-v6e", "h100"])
def test_pods_need_c_over_w_dcn_per_pod(chip):
    p = pods()
    hw = ss.hardware(chip)
    # each chip all-reduces its 2DF/|X| shard of each gradient across pods: 2 · 2 · 2DF/|X| / W_dcn,
    # under 8BDF/(|P||X|C) of backward FLOPs: B/|P| ≥ C/W_dcn
    assert p.numeric_min_batch(chip) == hw.flops_bf16 / hw.dcn_bandwidth
    assert [s.kind for s in p.layer.program.collectives("backward", "dcn")] == ["AllReduce", "AllReduce"]


def test_pods_need_a_dcn_figure():
    with pytest.raises(PlanError, match="no DCN bandwidth"):
        pods().numeric_min_batch("tpu-v4p")


def test_memory():
    m = layer("fsdp").memory
    x = axis("X")
    assert m.weights == 4 * dim("D") * dim("F") / x
    assert m.optimizer == 24 * dim("D") * dim("F") / x  # 12 bytes per parameter
    assert sympy.expand(m.activations - 2 * dim("B") * (dim("D") + dim("F")) / x) == 0
    serve = layer("dp", training=False).memory
    assert serve.gradients == 0 and serve.optimizer == 0 and serve.activations == 0


def test_unknown_scheme_and_symbol():
    with pytest.raises(PlanError, match="unknown parallelism scheme"):
        layer("pipeline")
    with pytest.raises(PlanError, match="does not appear"):
        layer("dp").condition("Q")


def test_cli_layer(capsys):
    assert main(["layer", "--scheme", "fsdp", "--hw", "tpu-v5p", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["condition"]["numeric"] == "B_chip ≥ 2550"
    assert main(["layer", "--scheme", "tp", "--shape", "F=28672", "--hw", "h100"]) == 0
    assert "|Y| ≤ 3584/275" in capsys.readouterr().out
    args = ["layer", "--scheme", "fsdp+tp", "--mesh", "X=1024,Y=8", "--shape", "B=4194304,D=8192,F=28672"]
    assert main([*args, "--hw", "tpu-v5p"]) == 0
    assert "best divisor split |X| = 1024, |Y| = 8" in capsys.readouterr().out
    assert main(["layer", "--scheme", "dp", "--mesh", "Y=4"]) == 2
    assert "has no mesh axis Y" in capsys.readouterr().err
    assert main(["layer", "--scheme", "zz"]) == 2
    assert main(["layer", "--scheme", "dp", "--shape", "Q=3"]) == 2

"""Networks with levels, NCCL's latency, overlap across axes: values typed from the sources.

Figures come from ../shared/HARDWARE.md ("GPU networks", the book's GPU chapter) and NCCL 2.7.5's
src/graph/tuning.cc; every expected number below is typed from there or derived by hand in a
comment, never read back from symshard.
"""

from __future__ import annotations

import ast
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

import symshard as ss
from symshard.algebra.symbols import T_base, T_net, T_nvlink, W_dcn, W_ici, W_nvlink, W_spine, axis, dim
from symshard.cli import main
from symshard.costs.collectives import AllGather, AllReduce, parse_collective
from symshard.costs.costmodels import Costing, comm_time
from symshard.errors import HardwareError, MeshError, PlanError, UnknownAxisError
from symshard.machines.mesh import Mesh
from symshard.machines.network import Level, place
from symshard.machines.presets import hardware, load_hardware
from symshard.machines.topology import Fabric
from symshard.models.schemes import B_CHIP, fsdp_tp_split, layer
from symshard.planning.planner import best_strategy
from symshard.planning.program import Program

ROOT = Path(__file__).resolve().parents[2]
A100_RUN = Path("/work/shared/data/nccl-tests/allreduce-a100-2nodes-16gpus.txt")
R = sympy.Rational


# -- the presets: HARDWARE.md "GPU networks" ----------------------------------------------------------

# name: (GPUs per NVLink domain, W_dcn per GPU, node egress, nodes per scalable unit)
NETWORKS = {
    "h100": (8, "5e10", "4.0e11", 32),  # 8 x 400 Gbps NICs = 4.0e11 B/s per node, 5e10 per GPU; SU of 32 nodes
    "b200": (8, "5e10", "4.0e11", 32),
    "gb200-nvl72": (72, "5e10", "3.6e12", None),  # 3.6e12 B/s per 72-GPU domain
}


@pytest.mark.parametrize(("name", "figures"), NETWORKS.items())
def test_gpu_network_presets(name, figures):
    node, per_gpu, egress, su = figures
    chip = hardware(name)
    assert chip.node_size == node and chip.leaf_nodes == su
    assert chip.dcn_bandwidth == R(per_gpu) and chip.node_egress == R(egress)
    assert chip.latency_model == "nccl"
    for field in ("dcn_bandwidth", "node_size", "base_latency", "nvlink_latency", "net_latency"):
        assert chip.source(field), f"{name}.{field} has no source"
    assert "from NCCL's tuning model" in chip.source("base_latency") and "2.7.5" in chip.source("base_latency")
    if su:
        assert chip.spine_bandwidth == R("5e10")  # full bisection: 51.2 TB/s for 1024 GPUs
        assert [lv.domain for lv in chip.levels] == [node, node * su, None]


def test_nccl_latency_table_is_the_one_in_tuning_cc():
    # NCCL 2.7.5 ring: baseLat LL 3.6, LL128 10.0, Simple 8.4; hwLat NVLink .47/1.9/3.4, NET 2.7/4.0/9.6 (us)
    from symshard.machines import nccl

    us = R(1, 10**6)
    assert nccl.latencies("LL") == {"T_base": R("3.6") * us, "T_nvlink": R("0.47") * us, "T_pci": us,
                                    "T_net": R("2.7") * us}  # fmt: skip
    assert nccl.latencies("simple")["T_net"] == R("9.6") * us and nccl.latencies("LL128")["T_base"] == 10 * us
    h100 = hardware("h100").constants()
    assert (h100[T_base], h100[T_nvlink], h100[T_net]) == (R("3.6") * us, R("0.47") * us, R("2.7") * us)
    with pytest.raises(HardwareError, match="unknown NCCL protocol 'LL256'"):
        nccl.latencies("LL256")


# -- where a mesh axis falls ------------------------------------------------------------------------------

DGX = (Level(Fabric.NVLINK, 8), Level(Fabric.DCN, 256), Level(Fabric.SPINE, None))


@pytest.mark.parametrize(
    ("sizes", "axis_name", "spans", "even"),
    [
        ({"X": 8}, "X", [("nvlink", 8)], True),  # one node
        ({"X": 16}, "X", [("nvlink", 8), ("dcn", 2)], True),  # two nodes, 8 per node
        ({"X": 2, "Y": 8}, "X", [("dcn", 2)], True),  # one GPU per node: scale-out only
        ({"X": 4, "Y": 4}, "X", [("nvlink", 2), ("dcn", 2)], True),  # 2 per node over 2 nodes
        ({"X": 256}, "X", [("nvlink", 8), ("dcn", 32)], True),  # one scalable unit
        ({"X": 1024}, "X", [("nvlink", 8), ("dcn", 32), ("spine", 4)], True),  # 4 SUs over the spine
        ({"X": 4, "Y": 256}, "X", [("spine", 4)], True),  # one GPU per SU
        ({"X": 4, "Y": 3}, "X", [("dcn", 4)], False),  # stride 3 straddles nodes unevenly
        ({"X": 2, "Y": 1}, "Y", [("nvlink", 1)], True),
    ],
)
def test_placement(sizes, axis_name, spans, even):
    p = place(sizes, DGX)[axis_name]
    assert [(f.value, int(n)) for f, n in p.spans] == spans
    assert p.even is even


# -- per-level bandwidth: the book's figures -------------------------------------------------------------


def _seen(cost):
    """Bytes/s each level gives the collective's V: V over that level's time."""
    return [float(cost.bytes / lv.bandwidth_time) for lv in cost.levels]


def test_per_level_allgather_bandwidths_of_a_superpod():
    h100 = hardware("h100")
    # an AllGather over one scalable unit (256 GPUs): node 4.5e11*8/7 = 5.14e11, leaf 4.0e11*32/31 = 4.13e11
    su = AllGather("X").cost("A[I_X]", Mesh("X=256", hardware=h100), "I=1048576", hardware=h100, model="ring")
    node, leaf = _seen(su)
    assert node == pytest.approx(4.5e11 * 8 / 7, rel=1e-12) and round(node / 1e9) == 514
    assert leaf == pytest.approx(4.0e11 * 32 / 31, rel=1e-12) and round(leaf / 1e9) == 413
    # the effective figure for the whole SU is the smallest: the leaf's
    assert float(su.bytes / su.bandwidth_time) == pytest.approx(4.0e11 * 32 / 31, rel=1e-12)
    # four SUs: the spine joins them at 1.28e13 (32 nodes x 400 GB/s) per SU, 1.28e13*4/3 = 1.71e13
    pod = AllGather("X").cost("A[I_X]", Mesh("X=1024", hardware=h100), "I=1048576", hardware=h100, model="ring")
    assert _seen(pod)[2] == pytest.approx(1.28e13 * 4 / 3, rel=1e-12)


def test_nvl72_domain():
    gb = hardware("gb200-nvl72")
    inside = AllGather("X").cost("A[I_X]", Mesh("X=72", hardware=gb), "I=72", hardware=gb, model="ring")
    assert [lv.fabric for lv in inside.levels] == [Fabric.NVLINK]  # 72 GPUs, one NVLink domain
    across = AllGather("X").cost("A[I_X]", Mesh("X=144", hardware=gb), "I=144", hardware=gb, model="ring")
    # 2 domains: each domain's 3.6e12 of egress, seen from V: 3.6e12 * 2/1
    assert _seen(across)[1] == pytest.approx(3.6e12 * 2, rel=1e-12)


def test_hierarchical_allreduce_is_reduce_scatter_allreduce_allgather():
    # 16 H100s, 8 per node, V bytes: ReduceScatter in the node (7/8 V over NVLink), AllReduce across the 2
    # nodes on each GPU's V/8 (2 * 1/2 * V/8 over its NIC), AllGather in the node (7/8 V): the time is set
    # by the slowest level for its share
    h100 = hardware("h100")
    mesh = Mesh("X=16", hardware=h100)
    c = AllReduce("X").cost("G[I]{U_X}", mesh, "I=1048576", hardware=h100, model="ring")
    v = c.bytes
    nvlink = 2 * R(7, 8) * v / R("4.5e11")
    nic = 2 * R(1, 2) * (v / 8) / R("5e10")
    assert [lv.bandwidth_time for lv in c.levels] == [nvlink, nic]
    assert c.bandwidth_time == max(nvlink, nic)
    # NCCL's steps: 2(N-1) = 30, of which 2(nodes-1) = 2 cross the network
    assert c.hops == 30 and [lv.hops for lv in c.levels] == [28, 2]
    us = R(1, 10**6)
    assert c.latency_time == R("3.6") * us + 28 * R("0.47") * us + 2 * R("2.7") * us
    assert c.time == c.latency_time + c.bandwidth_time


@pytest.mark.parametrize(("mesh", "w_eff"), [("X=8", "4.5e11"), ("X=16", "4.0e11"), ("X=64", "4.0e11")])
def test_data_parallel_batch_per_gpu(mesh, w_eff):
    # DP inside an H100 node is compute-bound above C/W_nvlink = 990e12/450e9 = 2200 tokens per GPU; across
    # nodes W is the node's scale-out egress, 990e12/400e9 = 2475 (the book's rooflines). Each of DP's two
    # gradient AllReduces of V = 2DF bytes takes 2V/W (book model), under 8·B_gpu·D·F/C of backward FLOPs
    h100 = hardware("h100")
    c = AllReduce("X").cost("G[D, F]{U_X}", Mesh(mesh, hardware=h100), "D=8192,F=28672", hardware=h100)
    seen = 2 * c.bytes / c.bandwidth_time
    assert seen == R(w_eff)
    assert h100.flops_bf16 / seen == {"4.5e11": 2200, "4.0e11": 2475}[w_eff]
    lay = layer("dp", hardware="h100")
    if mesh == "X=8":
        assert lay.condition("B_chip").subs(lay.values({"X": 8}, {}, "h100"), B_CHIP).text() == "B_chip ≥ 2200"


# -- overlap across axes ---------------------------------------------------------------------------------


def test_fsdp_tp_condition_under_both_conventions():
    c, w, f = sympy.Symbol("C", positive=True), W_ici, dim("F")
    mx, my = sympy.Symbol("M_X", positive=True, integer=True), sympy.Symbol("M_Y", positive=True, integer=True)
    book = fsdp_tp_split()  # the book's convention: FSDP's and TP's collectives run on different axes at once
    old = fsdp_tp_split(comm_overlap="none")  # one after another
    assert (book.comm_overlap, old.comm_overlap) == ("axes", "none")
    assert sympy.simplify(book.min_batch_per_chip - c**2 / (mx * my * f * w**2)) == 0
    assert sympy.simplify(old.min_batch_per_chip - 4 * c**2 / (mx * my * f * w**2)) == 0
    # the TP degree bound itself: 4BD/(|X| M_Y W) <= 4BDF/(C |X| |Y|): |Y| <= F M_Y W / C, either way
    v5p = layer("fsdp+tp").values({"X": 16, "Y": 4}, {"B": 4194304, "D": 8192, "F": 28672}, "tpu-v5p")
    assert layer("fsdp+tp").condition("Y").holds(v5p) == layer("fsdp+tp", comm_overlap="none").condition("Y").holds(v5p)


def test_cli_layer_records_the_convention(capsys):
    for how, factor in (("axes", 1), ("none", 4)):
        assert main(["layer", "--scheme", "fsdp+tp", "--hw", "tpu-v5p", "--comm-overlap", how, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["comm_overlap"] == how
        assert data["split"]["min_batch_per_chip_formula"] == ("4·" if factor == 4 else "") + "C^2/(F·M_X·M_Y·W_ici^2)"
    assert main(["layer", "--scheme", "fsdp+tp", "--comm-overlap", "some"]) == 2
    assert "unknown communication overlap 'some'" in capsys.readouterr().err


def test_program_overlap_and_shared_links():
    def two_gathers(fabric, how):
        p = Program(default_fabric=fabric, comm_overlap=how)
        p.input("A[I_X, J]")
        p.input("B[K_Y, L]")
        p.reshard("A[I, J]")
        p.reshard("B[K, L]")
        return p.comm_time()

    a = 2 * dim("I") * dim("J") / sympy.Symbol("M_X", positive=True, integer=True)
    b = 2 * dim("K") * dim("L") / sympy.Symbol("M_Y", positive=True, integer=True)
    w_ici, w_nv = W_ici, W_nvlink
    assert two_gathers("ici", "axes") == sympy.Max(a / w_ici, b / w_ici)  # two ICI axes: their own links
    assert sympy.simplify(two_gathers("ici", "none") - (a + b) / w_ici) == 0
    # two axes inside one GPU node share its NVLink ports: one after another either way
    assert sympy.simplify(two_gathers("nvlink", "axes") - (a + b) / w_nv) == 0
    # one array resharded by two collectives in a row: the second waits for the first
    p = Program()
    p.input("A[I_X, J]{U_Y}")
    p.reshard("A[I, J]")
    assert [s.axes for s in p.collectives()] == [("Y",), ("X",)]
    assert p.comm_time() == sympy.Add(*[s.time for s in p.collectives()])
    with pytest.raises(PlanError, match="unknown communication overlap"):
        Program(comm_overlap="maybe")


def test_comm_time_loads():
    mesh = Mesh("X=4,Y=4")
    c = Costing(mesh, {}, "book")
    x, y = c.timing("AllGather", ("X",), 8), c.timing("AllGather", ("Y",), 8)
    xy = c.timing("AllGather", ("X", "Y"), 8)
    assert comm_time([x, y], "axes") == sympy.Max(x.time, y.time)
    assert comm_time([x, y, xy], "axes") == sympy.Max(x.time + xy.time, y.time + xy.time)
    assert comm_time([x, y], "none") == x.time + y.time


def test_planner_strategy_overlap():
    text = "A[I_X, J] · B[J, K_Y] -> C[I, K]"
    both = ss.plan(text, "X=4,Y=4", "I=4096,J=4096,K=4096", hardware="tpu-v5p")
    serial = ss.plan(text, "X=4,Y=4", "I=4096,J=4096,K=4096", hardware="tpu-v5p", comm_overlap="none")
    # the two operands gathered over two ICI axes (two sets of links): at the same time
    s_axes = both.strategy("AllGather_X(A) → AllGather_Y(B) → matmul")
    s_none = serial.strategy(s_axes.name)
    first, second = (st.cost.time for st in s_axes.collectives)
    assert s_axes.comm_time == max(first, second) and s_none.comm_time == first + second
    assert s_axes.comm_overlap == both.comm_overlap == "axes" and any("T_comms:" in a for a in both.assumptions)
    # the result reduced over X and then gathered over Y: the gather needs the reduction's result, so the
    # two run one after another even on disjoint links
    chained = next(s for s in both.all_strategies() if [st.role for st in s.collectives] == ["out", "out"])
    assert chained.comm_time == sum(st.cost.time for st in chained.collectives)
    for how in ("axes", "none"):
        best = best_strategy(text, "X=4,Y=4", "I=4096,J=4096,K=4096", hardware="tpu-v5p", comm_overlap=how)
        assert best is not None
        plan = both if how == "axes" else serial
        assert best.time == plan.best.time and best.name == plan.best.name


# -- GPU commands give numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize("chip", ["h100", "b200"])
def test_matmul_on_gpus_has_a_best_strategy(capsys, chip):
    argv = ["matmul", "X[B, D] · Y[D_X, F] -> Z[B, F]", "--mesh", "X=8", "--shape", "B=4096,D=8192,F=32768"]
    assert main([*argv, "--hw", chip, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["best"] is not None
    assert all(isinstance(s["time_s"], float) for s in data["strategies"])
    assert main([*argv, "--hw", chip]) == 0
    out = capsys.readouterr().out
    assert "undecided" not in out and "best: 1." in out


def test_collective_across_nodes_prints_each_level(capsys):
    argv = ["collective", "AllGather_X(A[I_X])", "--mesh", "X=16", "--shape", "I=1048576", "--hw", "h100"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "level nvlink" in out and "level dcn" in out and "NCCL's tuning model" in out
    assert main([*argv, "--hw-set", "T_net=1e-5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    us = 1e-6  # T_base + 14 NVLink steps + 1 network step, with T_net set by the user
    assert data["latency_time_s"] == pytest.approx(3.6 * us + 14 * 0.47 * us + 10 * us)
    assert [lv["fabric"] for lv in data["levels"]] == ["nvlink", "dcn"]


def test_fabric_names_are_one_table():
    p = Program(fabric={"P": "ib"})  # the synonym Fabric.parse reads
    assert p.fabric == {"P": "dcn"}
    assert Fabric.parse("InfiniBand") is Fabric.DCN and Fabric.parse("spine").bandwidth == W_spine
    assert Mesh("X=4", fabric={"X": "ib"}).axis("X").topology.value == "switch"  # a network is a switch


def test_symbolic_mesh_keeps_the_levels():
    h100 = hardware("h100")
    mesh = Mesh("X=16", hardware=h100)
    sym = AllGather("X").cost("A[I_X]", mesh.symbolic(), model="ring")
    num = AllGather("X").cost("A[I_X]", mesh, "I=1024", hardware=h100, model="ring")
    values = {**h100.constants(), axis("X"): 16, dim("I"): 1024}
    assert sym.time.xreplace(values) == num.time
    assert {W_nvlink, W_dcn, T_base, T_nvlink, T_net} <= sym.time.free_symbols


# -- calibration ---------------------------------------------------------------------------------------------

_HEADER = """#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""


def _format_time(us: float) -> str:
    """nccl-tests prints times 7 wide: two decimals while they fit, then fewer."""
    for decimals in (2, 1, 0):
        text = f"{us:.{decimals}f}"
        if len(text) <= 7:
            return text
    return f"{us:.1e}"


def synthetic(time_of, sizes, ranks, factor) -> str:
    """nccl-tests text for times given by ``time_of(bytes)`` in seconds (algbw, busbw derived as the tool does)."""
    lines = [_HEADER]
    for size in sizes:
        us = time_of(size) * 1e6
        algbw = size / us / 1e3
        row = f"{size:12d}  {size // 4:12d}     float     sum      -1  {_format_time(us):>7}  {algbw:6.2f}"
        row += f"  {algbw * factor:6.2f}       0  {_format_time(us):>7}  {algbw:6.2f}  {algbw * factor:6.2f}       0"
        lines.append(row)
    return "\n".join(lines) + "\n"


SIZES = [2**k for k in range(3, 34)]


@pytest.mark.parametrize(("alpha", "bandwidth"), [(30e-6, 20e9), (8e-6, 150e9), (60e-6, 5e9)])
def test_fit_recovers_alpha_and_beta(alpha, bandwidth):
    from symshard.costs.calibrate import calibrate, read_nccl_tests

    text = synthetic(lambda s: alpha + s / bandwidth, SIZES, 16, 30 / 16)
    fit = calibrate(read_nccl_tests(text), "allreduce", ranks=16, per_node=8, base="a100")
    assert float(fit.alpha) == pytest.approx(alpha, rel=0.02)
    assert float(1 / fit.beta) == pytest.approx(bandwidth, rel=0.02)
    # the slope is the NICs': an AllReduce over 2 nodes moves 2 * 1/2 * S/8 per GPU, W_dcn = (1/8) / beta
    assert float(fit.fitted[W_dcn]) == pytest.approx(bandwidth / 8, rel=0.02)
    assert fit.rms_residual < 0.02


def test_fit_recovers_the_network_constants_of_symshards_own_model():
    from symshard.costs.calibrate import calibrate, read_nccl_tests

    # times from a known network: W_dcn = 2.5e10 per GPU, T_net = 5 us, the rest A100 + NCCL 2.7.5
    truth = hardware("a100").with_constants(W_dcn="2.5e10", T_net="5e-6", node_size=8)
    mesh = Mesh("X=32", hardware=truth)  # 4 nodes of 8

    def time_of(size):
        return float(Costing(mesh, truth.constants(), "ring", truth).timing("AllReduce", ("X",), size).time)

    fit = calibrate(read_nccl_tests(synthetic(time_of, SIZES, 32, 62 / 32)), "allreduce", ranks=32, per_node=8)
    assert float(fit.fitted[W_dcn]) == pytest.approx(2.5e10, rel=0.02)
    assert float(fit.fitted[T_net]) == pytest.approx(5e-6, rel=0.02)
    assert (fit.bandwidth_level, fit.latency_level) == (Fabric.DCN, Fabric.DCN)


def test_nccl_tests_json_is_read():
    from symshard.costs.calibrate import calibrate, read_nccl_tests

    # the layout of nccl-tests' JSON file (version 2, src/util.cu): results with out_of_place/in_place
    rows = [{"size": s, "count": s // 4, "type": "float", "redop": "sum", "root": "-1",
             "out_of_place": {"time": 20 + s / 1e4, "alg_bw": 0, "bus_bw": 0, "nwrong": 0},
             "in_place": {"time": 21 + s / 1e4, "alg_bw": 0, "bus_bw": 0, "nwrong": 0}} for s in SIZES]  # fmt: skip
    devices = [{"rank": r, "hostname": f"node{r // 4}", "device": r % 4} for r in range(8)]
    doc = {"version": 2, "args": ["./build/all_reduce_perf", "-b", "8"], "config": {"devices": devices},
           "results": rows}  # fmt: skip
    run = read_nccl_tests(json.dumps(doc))
    assert (run.collective, run.ranks, run.per_node, run.format) == ("allreduce", 8, 4, "json")
    fit = calibrate(run)
    assert float(fit.alpha) == pytest.approx(20e-6, rel=0.02) and float(1 / fit.beta) == pytest.approx(1e10, rel=0.02)
    assert float(calibrate(read_nccl_tests(json.dumps(doc), in_place=True)).alpha) == pytest.approx(21e-6, rel=0.02)


@pytest.mark.skipif(not A100_RUN.exists(), reason="the measured A100 run is not here")
def test_calibrate_the_measured_a100_run(capsys, tmp_path):
    out = tmp_path / "a100.toml"
    argv = ["calibrate", str(A100_RUN), "--collective", "allreduce", "--ranks", "16", "--per-node", "8",
            "--out", str(out)]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["rows"]) == 31 and data["bandwidth_level"] == "dcn" and data["latency_level"] == "dcn"
    # the large messages reach about 188 GB/s of bus bandwidth: the fitted NICs are of the order of
    # 100 GB/s per 8-GPU node (HDR InfiniBand), and the latency of tens of microseconds
    w = float(Fraction(data["fitted"]["W_dcn"]))
    assert 5e9 < w < 2e10 and 0 < float(Fraction(data["fitted"]["T_net"])) < 5e-5
    assert data["rms_residual"] < 0.3
    chip = load_hardware(out)
    assert chip.dcn_bandwidth == pytest.approx(w, rel=1e-5)
    # the hardware file prices the measured collective: within a fifth at the largest size
    big = parse_collective("AllReduce_X(G[I]{U_X})").cost("X=16", "I=2147483648", dtype="fp32", hardware=chip,
                                                          model="ring")  # fmt: skip
    assert float(big.time) == pytest.approx(85820e-6, rel=0.2)
    assert main([*argv, "--json"]) == 0  # symshard's own, untouched file: rewritten
    capsys.readouterr()
    out.write_text(out.read_text(encoding="utf-8") + "# my note\n", encoding="utf-8")
    assert main(argv) == 2  # edited since: not replaced without --force
    assert "was changed since symshard wrote it" in capsys.readouterr().err
    mine = out.parent / "mine.toml"
    mine.write_text("[hardware]\n", encoding="utf-8")
    assert main([*argv[: argv.index("--out")], "--out", str(mine), "--force"]) == 2  # never someone else's file
    assert (
        "was not written by symshard" in capsys.readouterr().err and mine.read_text(encoding="utf-8") == "[hardware]\n"
    )
    assert main(["collective", "AllReduce_X(G[I]{U_X})", "--mesh", "X=16", "--shape", "I=1024", "--hw", str(out)]) == 0


@pytest.mark.parametrize(
    ("text", "match"),
    [("nothing here\n", "no nccl-tests result rows"), ("{}", "no 'results' list"), ("{", "cannot read the JSON")],
)
def test_calibrate_bad_input(text, match):
    from symshard.costs.calibrate import read_nccl_tests

    with pytest.raises(HardwareError, match=match):
        read_nccl_tests(text)


def test_calibrate_bad_options(capsys, tmp_path):
    data = tmp_path / "run.txt"
    data.write_text(synthetic(lambda s: 1e-5 + s / 1e10, SIZES, 16, 30 / 16))
    base = ["calibrate", str(data), "--out", str(tmp_path / "x.toml")]
    assert main([*base, "--ranks", "16", "--per-node", "8"]) == 2
    assert "do not say which collective" in capsys.readouterr().err
    base.append("--collective=allreduce")
    assert main([*base, "--ranks", "16", "--per-node", "5"]) == 2
    assert "do not split into nodes of 5" in capsys.readouterr().err
    assert main([*base[:-1], "--ranks", "16", "--per-node", "8", "--collective", "alltoall"]) == 2
    assert "cannot calibrate with the collective 'alltoall'" in capsys.readouterr().err
    assert main([*base, "--ranks", "16", "--per-node", "8", "--level", "spine"]) == 2
    assert "does not cross the level spine" in capsys.readouterr().err
    assert main(["calibrate", str(tmp_path / "missing.txt")]) == 2
    assert main(["matmul", "A[I_X] · B[I_X]", "--hw", str(tmp_path / "none.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_hardware_files(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('[hardware]\nname = "mine"\nbase = "h100"\n[constants]\nW_dcn = "2.5e10"\n[sources]\nW_dcn = "lab"\n')
    chip = hardware(str(f))
    assert chip.name == "mine" and chip.dcn_bandwidth == R("2.5e10") and chip.source("dcn_bandwidth") == "lab"
    f.write_text("[hardware\n")
    with pytest.raises(HardwareError, match="is not valid TOML"):
        load_hardware(f)
    f.write_text('[constants]\nW_foo = "1"\n')
    with pytest.raises(HardwareError, match="unknown hardware constant 'W_foo'"):
        load_hardware(f)


# -- one cost path ----------------------------------------------------------------------------------------


def test_no_module_computes_a_collective_time_but_costmodels():
    """Only symshard/costs/costmodels.py costs a collective: nothing else imports its private helpers, defines
    the per-collective cost methods the collectives used to carry, or builds a table of fabrics."""
    from symshard.costs import costmodels

    public = set(costmodels.__all__)
    offenders = []
    for path in sorted((ROOT / "symshard").rglob("*.py")):
        if path.name == "costmodels.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("costmodels"):
                offenders += [f"{path.name}: imports {a.name}" for a in node.names if a.name not in public]
            if isinstance(node, ast.FunctionDef) and node.name in ("bandwidth_time", "hops", "volume"):
                offenders.append(f"{path.name}: defines {node.name}()")
            if isinstance(node, ast.Name) and node.id in ("FABRICS", "gather_time", "all_to_all_time"):
                offenders.append(f"{path.name}: uses {node.id}")
    assert offenders == []
    assert all(not name.startswith("_") for name in public)


# -- placement against brute force, and the laws of hierarchical costs ------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def brute_force_spans(sizes: dict[str, int], levels) -> dict[str, list[tuple[str, int]] | None]:
    """Number the devices (last axis fastest), list every group of each axis, and count how many of a
    group's devices share each level's domain: the spans, or None when groups split unevenly."""
    names = list(sizes)
    total = 1
    for n in sizes.values():
        total *= n
    strides, s = {}, 1
    for name in reversed(names):
        strides[name] = s
        s *= sizes[name]
    out: dict[str, list[tuple[str, int]] | None] = {}
    for name in names:
        n, stride = sizes[name], strides[name]
        groups = {}
        for d in range(total):
            base = d - ((d // stride) % n) * stride
            groups.setdefault(base, []).append(d)
        spans, below, even = [], 1, True
        for level in levels:
            if level.domain is None:
                counts = {n}
            else:
                counts = set()
                for members in groups.values():
                    per: dict[int, int] = {}
                    for d in members:
                        per[d // level.domain] = per.get(d // level.domain, 0) + 1
                    counts |= set(per.values())
            if len(counts) != 1:
                even = False
                break
            (members_here,) = counts
            if members_here > below:
                spans.append((level.fabric.value, members_here // below))
                below = members_here
        out[name] = spans if even else None
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 16, 32]), min_size=1, max_size=3))
def test_placement_matches_brute_force(sizes_list):
    sizes = {name: n for name, n in zip("XYZ", sizes_list, strict=False)}
    levels = (Level(Fabric.NVLINK, 8), Level(Fabric.DCN, 64), Level(Fabric.SPINE, None))
    placed = place(sizes, levels)
    brute = brute_force_spans(sizes, levels)
    for name, n in sizes.items():
        if brute[name] is None:
            # uneven somewhere: the levels below it that the axis fills evenly are kept, the rest of the
            # axis goes to the outermost level it reaches
            spans = placed[name].spans
            assert placed[name].even is False
            assert math.prod(int(k) for _, k in spans) == n
            assert [f.tier for f, _ in spans] == sorted({f.tier for f, _ in spans})
        else:
            assert placed[name].even is True
            want = brute[name] or [("nvlink", 1)]
            assert [(f.value, int(k)) for f, k in placed[name].spans] == want


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["h100", "b200", "gb200-nvl72"]),
    st.sampled_from([(2, 8), (4, 4), (2, 64), (16, 16), (8, 2), (4, 256), (2, 2)]),
    st.sampled_from(["X", "Y"]),
    st.sampled_from(["book", "ring"]),
)
def test_hierarchical_costs_obey_their_laws(chip_name, mesh_sizes, name, model):
    chip = hardware(chip_name)
    mesh = Mesh({"X": mesh_sizes[0], "Y": mesh_sizes[1]}, hardware=chip)
    axis_ = mesh.axis(name)
    n = 1
    for _, k in axis_.levels:
        n *= int(k)
    assert n == axis_.size  # the levels' counts multiply to the axis size
    arr = f"A[I_{name}]"
    ag = AllGather(name).cost(arr, mesh, "I=1048576", hardware=chip, model=model)
    rs = parse_collective(f"ReduceScatter_{{{name},I}}(G[I]{{U_{name}}})").cost(
        mesh, "I=1048576", hardware=chip, model=model
    )
    ar = AllReduce(name).cost(f"G[I]{{U_{name}}}", mesh, "I=1048576", hardware=chip, model=model)
    # the slowest level sets the pace; an AllReduce is a ReduceScatter then an AllGather (NCCL's base
    # latency once, not twice)
    assert ag.bandwidth_time == max(lv.bandwidth_time for lv in ag.levels)
    assert ar.bandwidth_time == rs.bandwidth_time + ag.bandwidth_time and ar.hops == rs.hops + ag.hops
    assert ar.latency_time == rs.latency_time + ag.latency_time - chip.base_latency
    assert ag.hops == axis_.size - 1  # NCCL's ring: N - 1 steps whatever the levels
    # every level at NVLink speed could only be faster
    inside = Mesh({"X": mesh_sizes[0], "Y": mesh_sizes[1]}, hardware=chip, fabric={name: "nvlink"})
    assert AllGather(name).cost(arr, inside, "I=1048576", hardware=chip, model=model).bandwidth_time <= (
        ag.bandwidth_time
    )


def test_mesh_spans_round_trip_and_checks():
    m = Mesh("X=4,Y=4", hardware="h100")
    assert eval(repr(m), {"Mesh": Mesh}) == m  # spans and latency model included
    with pytest.raises(MeshError, match="mesh axis X has 16 devices, but its network levels hold 8"):
        Mesh("X=16", spans={"X": [("nvlink", 8)]})
    with pytest.raises(UnknownAxisError, match="spans given for axis Z"):
        Mesh("X=16", spans={"Z": [("nvlink", 16)]})


def test_calibration_output_is_the_same_under_any_hash_seed(tmp_path):
    """The kept constants come out in one order whatever Python's string hashing (a set of SymPy
    symbols once decided it): the JSON printed and the chip file written are the same bytes. Each run
    writes in its own folder, never in the repository."""
    import os
    import subprocess
    import sys

    data = next((Path(__file__).parents[2] / "site" / "data").glob("nccl-tests-allreduce-*.txt"))
    argv = [sys.executable, "-m", "symshard", "calibrate", str(data), "--collective", "allreduce"]
    argv += ["--ranks", "16", "--per-node", "8", "--hw", "a100", "--json"]
    outputs = set()
    for seed in ("1", "5", "6", "7"):
        here = tmp_path / seed
        here.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(Path(__file__).parents[2])}
        printed = subprocess.run(argv, capture_output=True, text=True, check=True, env=env, cwd=here).stdout
        written = sorted((p.name, p.read_bytes()) for p in here.iterdir())
        assert written, "calibrate wrote no chip file"
        outputs.add((printed, tuple(written)))
    assert len(outputs) == 1

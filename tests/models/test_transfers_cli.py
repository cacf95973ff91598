"""``symshard transfer`` end to end, and the transfers' notebook tables.

Expected values are typed from the sources: the TPU figures of /work/shared/HARDWARE.md (the book's
TPU chapter spec tables: v5e one ICI link 4.5e10 B/s each way, v5p 9e10; T_hop about 1 µs; PCIe
1.6e10 per chip, 3.2e10 on v6e; v5e wraps only axes of 16, v5p only whole 4x4x4 cubes), the
formulas of /work/shared/MODELS.md ("Moving data between chips and hosts"), the book's TPU
chapter questions (a bf16[8, 128, 8192] array sent from TPU{0,0} to TPU{3,3} of a v5e 4x4; the
totals of a full v5e and v5p pod) and the Cloud TPU documentation's chips per host (v5e 8, v5p 4).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import deque

import pytest
from helpers import english_left
from hypothesis import given, settings
from hypothesis import strategies as st

from symshard.cli import main
from symshard.models.transfers import gather_to_one, host_to_chip, point_to_point, slice_totals

# the sources' figures, typed once
V5E_LINK, V5P_LINK, V6E_LINK = 4.5e10, 9.0e10, 9.0e10  # one ICI link, one way, B/s
T_HOP = 1e-6  # s per hop
PCIE_V5E, PCIE_V6E = 1.6e10, 3.2e10  # B/s per chip
FLOPS_V5E, FLOPS_V5P, FLOPS_V6E = 1.97e14, 4.59e14, 9.2e14
HBM_V5E, HBM_V5P = 16e9, 96e9
HBM_BW_V5P, DCN_V5P = 2.8e12, 6.25e9


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["transfer", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, out + err
    assert err == ""
    return json.loads(out)


# -- point to point ---------------------------------------------------------------------------------------------

P2P = [
    # the book's question: bf16[8, 128, 8192] from TPU{0,0} to TPU{3,3} of a v5e 4x4 (no wraparound):
    # 3 hops along each axis, both axes' links used at once
    ("tpu-v5e", "4x4", "0,0", "3,3", str(2 * 8 * 128 * 8192), 6, 2, [[0, 0], [3, 0], [3, 3]],
     2 * 8 * 128 * 8192 / (2 * V5E_LINK), 6 * T_HOP, "192 µs"),
    ("tpu-v5e", "4x4", "0,0", "3,3", "1GB", 6, 2, [[0, 0], [3, 0], [3, 3]], 1e9 / (2 * V5E_LINK), 6 * T_HOP,
     "11.1 ms"),
    # an axis of 16 wraps on v5e: chip 15 is one hop from chip 0, the other way round
    ("tpu-v5e", "16x16", "0,0", "15,0", "1MB", 1, 1, [[0, 0], [15, 0]], 1e6 / V5E_LINK, T_HOP, "23.2 µs"),
    # a 4x4 does not: 15 hops would be 3 there, straight along one axis
    ("tpu-v5e", "4x4", "(3, 0)", "(0, 0)", "45kB", 3, 1, [[3, 0], [0, 0]], 45e3 / V5E_LINK, 3 * T_HOP, "4 µs"),
    # a whole v5p cube wraps every axis: 3 -> 0 is one hop on each
    ("tpu-v5p", "4x4x4", "0,0,0", "3,3,3", "64MiB", 3, 3, [[0, 0, 0], [3, 0, 0], [3, 3, 0], [3, 3, 3]],
     2**26 / (3 * V5P_LINK), 3 * T_HOP, "252 µs"),
    # a 2x2x4 v5p slice has no wraparound
    ("tpu-v5p", "2x2x4", "0,0,0", "1,1,3", "64MiB", 5, 3, [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 3]],
     2**26 / (3 * V5P_LINK), 5 * T_HOP, "254 µs"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("chip", "shape", "source", "target", "size", "hops", "ports", "route", "bandwidth", "latency", "shown"), P2P
)
def test_point_to_point(capsys, chip, shape, source, target, size, hops, ports, route, bandwidth, latency, shown):
    argv = ("--hw", chip, "--slice", shape, "--from", source, "--to", target, "--bytes", size)
    data = run_json(capsys, *argv)
    assert data["question"] == "point_to_point"
    assert (data["hops"], data["ports"], data["route"]) == (hops, ports, route)
    assert data["bandwidth_time_s"] == pytest.approx(bandwidth, rel=1e-12)
    assert data["latency_time_s"] == pytest.approx(latency, rel=1e-12)
    assert data["time_s"] == pytest.approx(bandwidth + latency, rel=1e-12)
    assert data["regime"] == ("latency" if latency > bandwidth else "bandwidth")
    # latency and bandwidth times meet where bytes = hops · T_hop · ports · w
    link = V5E_LINK if chip == "tpu-v5e" else V5P_LINK
    assert data["latency_bound_below_bytes"] == pytest.approx(hops * T_HOP * ports * link, abs=1)
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert f"time       bandwidth + latency = {shown}" in out
    assert f"hops       {hops}\n" in out
    assert " → ".join("(" + ", ".join(map(str, c)) + ")" for c in route) in out


def test_point_to_point_prints_every_term(capsys):
    code, out, _ = run(capsys, "--hw", "tpu-v5e", "--slice", "4x4", "--from", "0,0", "--to", "3,3", "--bytes", "1GB")
    assert code == 0
    assert out.splitlines()[0] == "1,000,000,000 B (954 MiB) from chip (0, 0) to chip (3, 3) of a TPU v5e 4x4 slice"
    assert "route      (0, 0) → (3, 0) → (3, 3): X +3, Y +3" in out
    assert "ports      2 used at once" in out
    assert "bandwidth  1,000,000,000 B (954 MiB) / (2 × 4.5e10 B/s) = 11.1 ms" in out
    assert "latency    6 × 1 µs = 6 µs" in out
    assert "line without wraparound" in out  # why the route goes the long way


def test_the_same_chip_moves_nothing(capsys):
    data = run_json(capsys, "--hw", "tpu-v5e", "--slice", "4x4", "--from", "2,2", "--to", "2,2", "--bytes", "1GB")
    assert (data["hops"], data["ports"], data["time_s"]) == (0, 0, 0)
    code, out, _ = run(capsys, "--hw", "tpu-v5e", "--slice", "4x4", "--from", "2,2", "--to", "2,2", "--bytes", "1GB")
    assert code == 0 and "the source is the target" in out


# -- gather to one ----------------------------------------------------------------------------------------------

GATHER = [
    # a whole v5p cube: two links into the target along each of 3 axes; the farthest chip 2 hops away on each
    ("tpu-v5p", "4x4x4", "0,0,0", "64MiB", 63, 6, 6, 63 * 2**26 / (6 * V5P_LINK), "7.84 ms"),
    # a v5e 4x4 corner: one neighbour along each axis; the far corner 3 + 3 hops away
    ("tpu-v5e", "4x4", "0,0", "1MB", 15, 2, 6, 15 * 1e6 / (2 * V5E_LINK), "173 µs"),
    # an inner chip of the 4x4 has four neighbours
    ("tpu-v5e", "4x4", "1,1", "1MB", 15, 4, 4, 15 * 1e6 / (4 * V5E_LINK), "87.3 µs"),
]


@pytest.mark.parametrize(
    ("chip", "shape", "target", "size", "senders", "ports", "farthest", "bandwidth", "shown"), GATHER
)
def test_gather_to_one(capsys, chip, shape, target, size, senders, ports, farthest, bandwidth, shown):
    argv = ("--hw", chip, "--slice", shape, "--gather-to", target, "--bytes", size)
    data = run_json(capsys, *argv)
    assert data["question"] == "gather"
    assert (data["senders"], data["ports"], data["farthest_hops"]) == (senders, ports, farthest)
    assert data["bandwidth_time_s"] == pytest.approx(bandwidth, rel=1e-12)
    assert data["time_s"] == pytest.approx(bandwidth + farthest * T_HOP, rel=1e-12)
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert f"= {shown}" in out.splitlines()[-1]
    assert f"links in   {ports} into the target" in out


# -- host to chip -----------------------------------------------------------------------------------------------

HOST = [
    # 16 GiB over 8 v5e chips' PCIe at 1.6e10 B/s each; the host-streamed matmul is compute-bound above C/W_pcie
    (("--hw", "tpu-v5e", "--bytes", "16GiB", "--chips", "8"), 8, 16 * 2**30 / (8 * PCIE_V5E), FLOPS_V5E / PCIE_V5E),
    (("--hw", "tpu-v5e", "--bytes", "16e9"), 1, 16e9 / PCIE_V5E, FLOPS_V5E / PCIE_V5E),  # 1 s
    (("--hw", "tpu-v6e", "--bytes", "16GB", "--slice", "2x2"), 4, 16e9 / (4 * PCIE_V6E), FLOPS_V6E / PCIE_V6E),
]


@pytest.mark.parametrize(("argv", "chips", "seconds", "batch"), HOST)
def test_host_to_chip(capsys, argv, chips, seconds, batch):
    data = run_json(capsys, "--host", *argv)
    assert data["question"] == "host" and data["chips"] == chips
    assert data["time_s"] == pytest.approx(seconds, rel=1e-12)
    assert data["compute_bound_batch"] == pytest.approx(batch, rel=1e-12)
    assert data["compute_bound_when"] == "B ≥ C/W_pcie"


def test_host_to_chip_text_and_symbols(capsys):
    code, out, _ = run(capsys, "--hw", "tpu-v5e", "--host", "--bytes", "16GiB", "--chips", "8")
    assert code == 0
    assert (
        out.splitlines()[0]
        == "17,179,869,184 B (16 GiB) from the hosts over PCIe to 8 chips, 2,147,483,648 B (2 GiB) each"
    )
    assert "W_pcie = 1.6e10 B/s per chip" in out
    assert "= 134 ms" in out  # 2 GiB / 1.6e10 B/s
    assert "compute-bound when B ≥ C/W_pcie" in out and "1.231e4" in out  # 1.97e14 / 1.6e10 = 12312.5
    data = run_json(capsys, "--host", "--bytes", "1GB")  # no chip: the formula
    assert data["time_s"] == "1000000000/W_pcie" and data["compute_bound_batch"] is None


# -- slice totals -----------------------------------------------------------------------------------------------


def test_v5p_pod_totals(capsys):
    data = run_json(capsys, "--hw", "tpu-v5p", "--slice", "16x20x28", "--totals")
    assert data["chips"] == 8960 and data["hosts"] == 8960 // 4 and data["chips_per_host"] == 4
    assert data["flops"] == pytest.approx(8960 * FLOPS_V5P, rel=1e-12)  # about 4.1e18
    assert data["hbm_bytes"] == pytest.approx(8960 * HBM_V5P, rel=1e-12)  # about 8.6e14
    assert data["hbm_bandwidth"] == pytest.approx(8960 * HBM_BW_V5P, rel=1e-12)
    assert data["dcn_bandwidth"] == pytest.approx(8960 * DCN_V5P, rel=1e-12)
    code, out, _ = run(capsys, "--hw", "tpu-v5p", "--slice", "16x20x28", "--totals")
    assert code == 0
    assert out.splitlines()[0] == "TPU v5p 16x20x28: 8,960 chips"
    assert "8,960 × 4.59e14 FLOP/s = 4.11e18 FLOP/s" in out
    assert "2,240 (4 chips per host" in out


def test_v5e_pod_totals_by_shape_or_count(capsys):
    by_shape = run_json(capsys, "--hw", "tpu-v5e", "--slice", "16x16", "--totals")
    by_count = run_json(capsys, "--hw", "tpu-v5e", "--chips", "256", "--totals")
    assert by_shape["chips"] == by_count["chips"] == 256
    assert by_shape["hosts"] == by_count["hosts"] == 256 // 8
    assert by_shape["flops"] == pytest.approx(256 * FLOPS_V5E, rel=1e-12)  # about 5e16
    assert by_shape["hbm_bytes"] == pytest.approx(256 * HBM_V5E, rel=1e-12)  # about 4.1e12


def test_totals_without_a_host_size(capsys):
    code, out, _ = run(capsys, "--hw", "tpu7x", "--chips", "64", "--totals")
    assert code == 0 and "unknown (no host size on record" in out


# -- bad input ----------------------------------------------------------------------------------------------------

BAD = [
    (("--hw", "tpu-v5e", "--slice", "4x4", "--from", "4,0", "--to", "3,3", "--bytes", "1GB"),
     "MeshError", "chip '4,0' is not in a 4x4 slice", "up to 3,3"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--gather-to", "0,0,0", "--bytes", "1GB"),
     "MeshError", "chip '0,0,0' has 3 coordinates, but a 4x4 slice has 2 axes", "like 0,0"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--from", "a,b", "--to", "3,3", "--bytes", "1GB"),
     "MeshError", "cannot read the chip 'a,b'", "like 0,0 or 3,1,2"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--from", "0,0", "--bytes", "1GB"),
     "UsageError", "--from needs --to", "--to 3,3"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--to", "0,0", "--bytes", "1GB"),
     "UsageError", "--to needs --from", "--from 0,0"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--from", "0,0", "--to", "1,1", "--bytes", "1 gigabyte"),
     "UsageError", "cannot read the size '1 gigabyte' given to --bytes", "1GB, 64MiB"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--from", "0,0", "--to", "1,1", "--bytes", "0"),
     "UsageError", "--bytes must be positive, got '0'", "above 0"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--from", "0,0", "--to", "1,1"),
     "UsageError", "--from/--to needs the bytes to move", "--bytes 1GB"),
    (("--hw", "tpu-v5e", "--from", "0,0", "--to", "1,1", "--bytes", "1GB"),
     "UsageError", "--from/--to needs the slice's shape", "--slice 4x4"),
    (("--slice", "4x4", "--gather-to", "0,0", "--bytes", "1GB"), "UsageError", "--gather-to needs a chip", "--hw tpu-v5e"),
    (("--hw", "tpu-v5e", "--bytes", "1GB"), "UsageError", "say what to move", "symshard transfer --help"),
    (("--hw", "tpu-v5e", "--host", "--totals", "--slice", "4x4"), "UsageError",
     "--host and --totals ask different questions", "one of them"),
    (("--hw", "tpu-v5e", "--totals"), "UsageError", "--totals needs the slice's shape or its number of chips", "--chips"),
    (("--hw", "tpu-v5e", "--totals", "--slice", "4x4", "--bytes", "1GB"), "UsageError", "--totals moves no bytes", "drop"),
    (("--hw", "tpu-v5e", "--totals", "--slice", "4x4", "--chips", "8"), "UsageError",
     "--chips 8 and --slice 4x4 (16 chips) disagree", "one of them"),
    (("--hw", "tpu-v5e", "--host", "--bytes", "1GB", "--chips", "2.5"), "UsageError",
     "--chips must be a whole number of chips, got '2.5'", "--chips 8"),
    (("--hw", "tpu-v5e", "--slice", "4x4", "--chips", "16", "--gather-to", "0,0", "--bytes", "1GB"), "UsageError",
     "--chips has no meaning with --gather-to", "drop --chips"),
    (("--hw", "tpu-v5e", "--slice", "4by4", "--totals"), "MeshError", "cannot read the slice shape '4by4'", "16x20x28"),
    (("--hw", "tpu-v5e", "--slice", "2x2x2x2x2", "--totals"), "MeshError", "at most 4 axes, not 5", "4x4"),
    (("--hw", "h100", "--slice", "2x4", "--from", "0,0", "--to", "1,3", "--bytes", "1GB"), "HardwareError",
     "NVIDIA H100 joins its chips through switches", "name a TPU"),
    (("--hw", "h100", "--host", "--bytes", "1GB"), "HardwareError", "no PCIe bandwidth figure", "TPUs"),
    (("--hw", "tpu-v9", "--totals", "--chips", "4"), "UnknownHardwareError", "tpu-v9", ""),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "kind", "message", "hint"), BAD, ids=[b[2][:40] for b in BAD])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, kind, message, hint):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message in err and hint in err
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 2
    error = json.loads(out)["error"]
    assert error["type"] == kind and message in error["message"] and hint in error["hint"]
    code, _, err = run(capsys, *argv, "--lang", "zh")
    assert code == 2 and "错误" in err
    assert english_left(re.sub(r"'[^']*'|--[\w/-]+", " ", err), keep=("NVIDIA H100",)) is None, err


# -- Chinese ------------------------------------------------------------------------------------------------------

ZH = [
    ("--hw", "tpu-v5e", "--slice", "4x4", "--from", "0,0", "--to", "3,3", "--bytes", "1GB"),
    ("--hw", "tpu-v5p", "--slice", "4x4x4", "--gather-to", "0,0,0", "--bytes", "64MiB"),
    ("--hw", "tpu-v5e", "--host", "--bytes", "16GiB", "--chips", "8"),
    ("--hw", "tpu-v5p", "--slice", "16x20x28", "--totals"),
]


@pytest.mark.parametrize("argv", ZH, ids=["p2p", "gather", "host", "totals"])
def test_chinese_keeps_the_numbers(capsys, argv):
    code, english, _ = run(capsys, *argv)
    code_zh, chinese, _ = run(capsys, *argv, "--lang", "zh")
    assert code == code_zh == 0
    numbers = [w for w in english.replace(",", " ").split() if any(c.isdigit() for c in w) and "(" not in w]
    for n in numbers:
        assert n.rstrip(":;)") in chinese, n
    assert english_left(chinese) is None, chinese  # the host size's source too
    assert run_json(capsys, *argv) == run_json(capsys, *argv, "--lang", "zh")  # JSON is the same in both


# -- the algebra under the command: brute force as the oracle ---------------------------------------------------


def _shortest(shape: tuple[int, ...], wraps: tuple[bool, ...], a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Hops from a to b by breadth-first search over the slice's links."""
    seen, queue = {a: 0}, deque([a])
    while queue:
        here = queue.popleft()
        if here == b:
            return seen[here]
        for axis, step in itertools.product(range(len(shape)), (-1, 1)):
            x = here[axis] + step
            if wraps[axis]:
                x %= shape[axis]
            elif not 0 <= x < shape[axis]:
                continue
            there = (*here[:axis], x, *here[axis + 1 :])
            if there not in seen:
                seen[there] = seen[here] + 1
                queue.append(there)
    raise AssertionError("unreachable")


SLICES = [("v5e", (4, 4), (False, False)), ("v5e", (16, 4), (True, False)), ("v5p", (4, 4, 4), (True, True, True)),
          ("v5p", (2, 2, 4), (False, False, False))]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SLICES), st.data())
def test_routes_are_shortest_and_end_at_the_target(case, data):
    chip, shape, wraps = case
    coords = st.tuples(*(st.integers(0, s - 1) for s in shape))
    a, b = data.draw(coords), data.draw(coords)
    r = point_to_point(a, b, shape, hardware=chip, nbytes=1)
    assert r.hops == _shortest(shape, wraps, a, b)
    assert r.waypoints[0] == a and r.waypoints[-1] == b
    assert r.ports == sum(1 for x, y in zip(a, b, strict=True) if x != y)
    assert point_to_point(b, a, shape, hardware=chip, nbytes=1).hops == r.hops
    g = gather_to_one(b, shape, hardware=chip, nbytes=1)
    farthest = max(_shortest(shape, wraps, c, b) for c in itertools.product(*(range(s) for s in shape)))
    assert g.farthest == farthest


# -- notebooks ---------------------------------------------------------------------------------------------------

HTML = [
    (lambda: point_to_point("0,0", "3,3", "4x4", hardware="v5e", nbytes=10**9),
     ["(0, 0) → (3, 0) → (3, 3)", "X +3, Y +3", "<th>hops</th><td>6</td>", "11.1 ms", "6 µs"]),
    (lambda: gather_to_one((0, 0, 0), "4x4x4", hardware="v5p", nbytes=2**26),
     ["<th>senders</th><td>63</td>", "<th>links into the target</th><td>6</td>", "67,108,864 B (64 MiB)", "7.84 ms"]),
    (lambda: host_to_chip(16 * 2**30, hardware="v5e", chips=8),
     ["2,147,483,648 B (2 GiB)", "1.6e10 B/s", "134 ms"]),
    (lambda: host_to_chip(10**9), [r"$W_{pcie}$", r"\frac{1000000000}{W_{pcie}}"]),
    (lambda: slice_totals("v5p", "16x20x28"),
     ["TPU v5p 16x20x28", "<th>chips</th><td>8,960</td>", "4.11e18 FLOP/s", "<th>hosts</th><td>2,240</td>"]),
]  # fmt: skip


@pytest.mark.parametrize(("make", "expected"), HTML, ids=["route", "gather", "host", "host-symbolic", "totals"])
def test_transfers_show_as_tables_in_a_notebook(make, expected):
    from symshard.notebook import show

    page = show("text/html", make())
    assert page.startswith('<div class="symshard symshard-') and page.endswith("</div>")
    for text in expected:
        assert text in page, text
    assert page == show("text/html", make())  # the same object, the same bytes

"""Every exported answer, re-derived from the exported parameters through the public API.

For each family a small function rebuilds the question from the JSON record's
``params`` with symshard's public API (``Mesh``, ``place``, ``parse``, ``plan``, ...)
and, where the formula is short, by hand; the results must match the exported
answers within their tolerance. The functions do not reuse the families'
``family.toml`` expressions, so a family that computes the wrong thing fails here.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import symshard as ss
from symshard.problems import families, generate
from symshard.problems.writers import to_json
from symshard.symbols import W_ici

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1, "fp8": 1}


def _mesh(p: dict, names: str) -> dict:
    return {n: p[n] for n in names}


def device_memory(p):
    arr = ss.parse(p["pattern"])
    names = "XYZ" if p["naxes"] == 3 else "XY"
    mesh = ss.Mesh(_mesh(p, names))
    shape = {d: p[d] for d in arr.dim_names}
    rows = Fraction(p["I"], mesh.group_size(arr.dims[0].axes))
    local = BYTES[p["dtype"]]
    for d in arr.dims:
        local *= Fraction(shape[d.name], mesh.group_size(d.axes))
    return {"rows": rows, "bytes": local}


def total_memory(p):
    arr = ss.parse(p["pattern"])
    names = "XYZ" if p["naxes"] == 3 else "XY"
    sizes = _mesh(p, names)
    one_copy = BYTES[p["dtype"]]
    for d in arr.dim_names:
        one_copy *= p[d]
    copies = 1
    for n, size in sizes.items():
        if n not in arr.axes:
            copies *= size
    return {"total": one_copy * copies, "copies": copies}


def hbm_load_time(p):
    arr = ss.parse(p["pattern"])
    names = "XYZ" if p["naxes"] == 3 else "XY"
    placed = ss.place(arr, _mesh(p, names), {d: p[d] for d in arr.dim_names}, dtype=p["dtype"])
    return {"bytes": placed.bytes_per_device, "time": placed.bytes_per_device / ss.hardware(p["chip"]).hbm_bandwidth}


def _one_way(chip):
    return ss.hardware(chip).ici_link_bandwidth


def allgather_time(p):
    n, v = p["Y"], BYTES[p["dtype"]] * p["E"] * p["F"]
    chip = ss.hardware(p["chip"])
    ring = (chip.wiring == "torus-16" and n == 16) or (
        chip.wiring == "cube" and n % 4 == 0 and p["X"] % 4 == 0 and (n * p["X"]) % 64 == 0
    )
    w = _one_way(p["chip"])
    bandwidth = Fraction(v, 2 * w) if ring else Fraction(v * (n - 1), n * w)
    hops = Fraction(n, 2) if ring else n - 1
    return {"time": max(bandwidth, hops * chip.hop_latency)}


def allgather_no_wraparound(p):
    ax, other = p["ax"], ("Y" if p["ax"] == "X" else "X")
    text = p["pattern"].replace("G", ax).replace("O", other)
    op = ss.parse(f"AllGather_{ax}({text})")
    sizes = {"X": p["N"], "Y": p["M"]} if ax == "X" else {"X": p["M"], "Y": p["N"]}
    v = ss.place(op.output, sizes, {"E": p["E"], "F": p["F"]}, dtype=p["dtype"]).bytes_per_device
    n, w = p["N"], _one_way(p["chip"])
    return {"line_time": v * Fraction(n - 1, n) / w, "ring_time": v / (2 * w)}


def allgather_latency(p):
    chip = ss.hardware(p["chip"])
    cube = chip.wiring == "cube"
    sizes = {"X": p["X"], "Y": p["Y"], "Z": p["Z"]} if cube else {"X": p["X"], "Y": p["Y"]}
    mesh = ss.Mesh(sizes, hardware=chip)
    hops = 0
    for a in p["gax"]:
        axis = mesh.axis(a)
        hops += Fraction(axis.size, 2) if axis.topology.value == "ring" else axis.size - 1
    return {"time": hops * chip.hop_latency, "hops": hops}


def allgather_multi_axis(p):
    a, b, c = p["roles"]
    w2 = ss.hardware(p["chip"]).constants()[W_ici]  # bidirectional: every axis of a whole cube is a ring
    full = BYTES[p["dtype"]] * p["B"] * p["D"]
    return {
        "t1": Fraction(full, p[b]) / w2,  # gathers over a, the other dim stays split over b
        "t2": Fraction(full, 2) / w2,  # both axes at once: twice the bandwidth
        "t3": 2 * Fraction(full, p[a] * p[b]) / w2,  # AllReduce: twice a gather of the local block
    }


def _gather_bandwidth(axis, w):
    """Bytes/s into one device along one axis in the book model."""
    n = axis.size
    return 2 * w if axis.topology.value == "ring" else Fraction(w * n, n - 1)


def _book_hops(axis):
    return Fraction(axis.size, 2) if axis.topology.value == "ring" else axis.size - 1


def allreduce_reducescatter(p):
    chip = ss.hardware(p["chip"])
    x = ss.Mesh({"X": p["X"], "Y": p["Y"]}, hardware=chip).axis("X")
    local = BYTES[p["dtype"]] * Fraction(p["I"] * p["K"], p["Y"] if p["by_y"] else 1)
    bw = local / _gather_bandwidth(x, chip.ici_link_bandwidth)
    lat = _book_hops(x) * chip.hop_latency
    return {"rs_time": max(bw, lat), "ar_time": 2 * max(bw, lat)}


def alltoall_vs_allgather(p):
    n, w = p["N"], _one_way(p["chip"])
    v = BYTES[p["dtype"]] * (n * p["rows"]) * (n * p["cols"])
    book, two_way = p["model"] == "book", p["topo"] == "ring"
    if two_way:
        ag = Fraction(v, 2 * w) if book else Fraction(v * (n - 1), 2 * n * w)
        aa = Fraction(v, 8 * w) if book else Fraction((n * n // 4) * v, 2 * n * n * w)
        hops = Fraction(n, 2) if book else n // 2
    else:
        ag = Fraction(v, w) if book else Fraction(v * (n - 1), n * w)
        aa = Fraction(v, 2 * w) if book else Fraction(v * (n - 1), 2 * n * w)
        hops = n - 1
    lat = hops * ss.hardware(p["chip"]).hop_latency
    ag_time, aa_time = max(ag, lat), max(aa, lat)
    return {"ag_time": ag_time, "aa_time": aa_time, "ratio": aa_time / ag_time}


def backward_duality(p):
    chip = ss.hardware(p["chip"])
    sizes = {"X": p["X"]} if p["pattern"] == "fsdp" else {"X": p["X"], "Y": p["Y"]}
    mesh = ss.Mesh(sizes, hardware=chip)
    axes = ["X", "Y"] if p["pattern"] == "xy" else ["X"]
    local = BYTES[p["g_dtype"]] * Fraction(p["D"] * p["F"], p["Y"] if p["pattern"] == "tp" else 1)
    bandwidth = sum(_gather_bandwidth(mesh.axis(a), chip.ici_link_bandwidth) for a in axes)
    lat = sum(_book_hops(mesh.axis(a)) for a in axes) * chip.hop_latency
    rs = max(local / bandwidth, lat)
    return {"collective": "ReduceScatter_{" + "".join(axes) + ",D}", "rs_time": rs, "ratio": 2}


def gpu_nvlink_node(p):
    gpu = ss.hardware(p["chip"])
    hop = Fraction(p["hop_us"], 10**6)
    v = BYTES[p["dtype"]] * p["I"] * p["J"]
    factor = 2 if p["kind"] == "AllReduce" else 1
    out = {}
    for name, n, inside in (("t_inner", p["Y"], True), ("t_outer", p["X"], p["X"] * p["Y"] <= gpu.node_size)):
        w = gpu.nvlink_bandwidth if inside else gpu.dcn_bandwidth
        out[name] = factor * max(Fraction(v * (n - 1), n * w), (n - 1) * hop)
    out["slowdown"] = out["t_outer"] / out["t_inner"]
    return out


DERIVE = {
    "device-memory": device_memory,
    "total-memory": total_memory,
    "hbm-load-time": hbm_load_time,
    "allgather-time": allgather_time,
    "allgather-no-wraparound": allgather_no_wraparound,
    "allgather-latency": allgather_latency,
    "allgather-multi-axis": allgather_multi_axis,
    "allreduce-reducescatter": allreduce_reducescatter,
    "alltoall-vs-allgather": alltoall_vs_allgather,
    "backward-duality": backward_duality,
    "gpu-nvlink-node": gpu_nvlink_node,
}


def test_every_family_is_re_derived():
    missing = sorted(set(families()) - set(DERIVE))
    assert not missing, f"no independent re-derivation for {missing}"


@pytest.mark.parametrize("name", sorted(DERIVE))
def test_exported_answers_agree_with_the_public_api(name):
    records = to_json(generate(3, per_family=40, names=[name]))["problems"]
    for record in records:
        expected = DERIVE[name](record["params"])
        got = {a["name"]: a for a in record["answers"]}
        for answer_name, value in expected.items():
            exported = got[answer_name]
            if isinstance(value, str):
                assert value == exported["value"], (record["id"], answer_name)
                continue
            assert float(value) == pytest.approx(exported["value"], rel=max(exported["rel_tol"], 1e-9)), (
                record["id"], answer_name, float(value), exported["value"],
            )  # fmt: skip

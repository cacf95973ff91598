"""Every exported answer, re-derived from the exported parameters through the public API.

For each family a small function rebuilds the question from the JSON record's
``params`` with symshard's public API (``Mesh``, ``place``, ``parse``, ``plan``, ...)
and, where the formula is short, by hand; the results must match the exported
answers within their tolerance. The functions do not reuse the families'
``family.toml`` expressions, so a family that computes the wrong thing fails here.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

import symshard as ss
from symshard.algebra.symbols import W_ici
from symshard.problems import families, generate
from symshard.problems.writers import to_json

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


def matmul_measured_time(p):
    # by hand from the calibrated chip file in the family's folder: the bound max(F/C, B/W_hbm), and
    # max(L, t0 + (Tc^p + Tm^p)^(1/p)) at the attained rates
    from symshard.machines.presets import load_hardware

    chip = load_hardware(Path(families()["matmul-measured-time"].path) / p["chip"])
    rates = chip.attained.of(p["dtype"])
    t, d, f = p["T"], p["D"], p["F"]
    work, hbm = 2 * t * d * f, BYTES[p["dtype"]] * (t * d + d * f + t * f)
    peak = chip.flops_bf16 if p["dtype"] in ("bf16", "fp16") else None
    compute, memory = Fraction(work) / Fraction(peak), Fraction(hbm) / Fraction(chip.hbm_bandwidth)
    tc, tm, q = work / float(rates.flops), hbm / float(rates.hbm_bandwidth), rates.overlap
    combined = max(tc, tm) if q is None else (tc**q + tm**q) ** (1 / q)
    expected = max(float(rates.floor), float(rates.kernel_overhead) + combined)
    return {"bound": max(compute, memory), "regime": "compute" if compute >= memory else "memory", "expected": expected}


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
    a, b, _ = p["roles"]
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
    """NCCL's model from first principles: a ring over the GPUs of an axis, run level by level when the
    axis spans several NVLink domains (each GPU sends its 1/per-node share across), the slower level
    setting the pace, plus NCCL 2.7.5's latency (3.6 us, 0.47 us per NVLink step, 2.7 us per network step)."""
    gpu = ss.hardware(p["chip"])
    us = Fraction(1, 10**6)
    base, step_nvlink, step_net = Fraction(36, 10) * us, Fraction(47, 100) * us, Fraction(27, 10) * us
    v = BYTES[p["dtype"]] * p["I"] * p["J"]
    factor = 2 if p["kind"] == "AllReduce" else 1
    node = gpu.node_size
    out = {}
    for name, n, stride in (("t_inner", p["Y"], 1), ("t_outer", p["X"], p["Y"])):
        per_node = n if n * stride <= node else max(1, node // stride)  # GPUs of the axis in one domain
        nodes = n // per_node
        parts = []
        if per_node > 1:
            parts.append(Fraction(v * (per_node - 1), per_node * gpu.nvlink_bandwidth))
        if nodes > 1:
            parts.append(Fraction(v, per_node) * Fraction(nodes - 1, nodes) / gpu.dcn_bandwidth)
        latency = base + factor * ((per_node - 1) * nodes * step_nvlink + (nodes - 1) * step_net)
        out[name] = latency + factor * max(parts)
    out["slowdown"] = out["t_outer"] / out["t_inner"]
    return out


def _axis_gather(mesh, name, chip):
    """(bandwidth into a device, hops) along one axis, book model."""
    axis = mesh.axis(name)
    return _gather_bandwidth(axis, chip.ici_link_bandwidth), _book_hops(axis)


def _gather(mesh, names, chip, volume):
    """Book-model time of an AllGather (or ReduceScatter) of ``volume`` bytes over ``names``."""
    parts = [_axis_gather(mesh, n, chip) for n in names]
    bandwidth = volume / sum(b for b, _ in parts)
    return max(bandwidth, sum(h for _, h in parts) * chip.hop_latency)


def _case(mm) -> int:
    """The chapter's case, from the rules as the chapter states them."""
    kept = set(mm.out_dims)
    contracting = [d for d in mm.lhs.dim_names if d in mm.rhs.dim_names and d not in kept]
    for d in mm.lhs.dims:
        for a in d.axes:
            other = mm.rhs.sharded_dim(a)
            if d.name in kept and other is not None and other in kept and other != d.name:
                return 4
    left = {d: mm.lhs.dim(d).axes for d in contracting}
    right = {d: mm.rhs.dim(d).axes for d in contracting}
    if not any(left[d] or right[d] for d in contracting):
        return 1
    if all(left[d] == right[d] for d in contracting):
        return 3
    return 2


def matmul_case(p, record):
    display = record["statement"].split("$$")[1]
    return {"case": _case(ss.matmul(display))}


def _slice_mesh(text, chip):
    dims = [int(x) for x in text.split("x")]
    return ss.Mesh(dict(zip("XYZ", dims, strict=False)), hardware=chip)


def matmul_collective(p, record):
    chip = ss.hardware(p["chip"])
    a, b = p["first"], ("Y" if p["first"] == "X" else "X")
    text = p["setup"].split("|")[0].replace("@", a).replace("#", b)
    shape = p["shape_torus"] if p["chip"] in ("tpu-v5e", "tpu-v6e") else p["shape_cube"]
    natural = ss.plan(text, _slice_mesh(shape, chip), {"I": p["I"], "J": p["J"], "K": p["K"]}, hardware=chip).natural
    steps = natural.collectives
    return {"collective": steps[0].label() if steps else "none", "time": natural.comm_time}


def strategy_crossover(p, record):
    chip = ss.hardware(p["chip"])
    c, w = chip.flops_bf16, 2 * chip.ici_link_bandwidth
    nx = 16 if p["chip"] in ("tpu-v5e", "tpu-v6e") else 64  # the axis the chip wraps
    b, d, f = p["B"], p["D"], p["F"]
    hop = chip.hop_latency
    t1 = max(Fraction(2 * b * d * f) / c, max(Fraction(nx, 2) * hop, Fraction(2 * d * f) / w))
    t2 = max(Fraction(2 * b * d * f) / (nx * c), max(nx * hop, Fraction(4 * b * f) / w))
    return {"threshold": round(c / w), "winner": 2 if t2 < t1 else 1, "time1": t1, "time2": t2}


def min_latency_sharding(p, record):
    chip_name, dims = p["slice"].split(":")
    chip = ss.hardware(chip_name)
    mesh = _slice_mesh(dims, chip)
    names = mesh.names
    i, j, k = p["I"], p["J"], p["K"]
    devices = int(mesh.devices)
    math = Fraction(2 * i * j * k, devices) / chip.flops_bf16
    gather = _gather(mesh, names, chip, 2 * i * k)
    reduce = 2 * _gather(mesh, names, chip, 2 * i * k)
    replicated = Fraction(2 * i * j * k) / chip.flops_bf16
    best = min(max(math, gather), max(math, reduce), replicated)
    return {"flops": Fraction(2 * i * j * k, devices), "gather_time": gather, "ratio": 2, "best": best}


def training_inference(p, record):
    chip_name, dims = p["slice"].split(":")
    chip = ss.hardware(chip_name)
    text = [
        "A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]",
        "A[I_X, J] · B[J_X, K_Y] -> C[I_X, K_Y]",
        "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]",
    ][p["setting"] - 1]
    # the families reason as the chapter does, compute against communication: HBM left out (hbm=False)
    shape = {"I": p["I"], "J": p["J"], "K": p["K"]}
    natural = ss.plan(text, _slice_mesh(dims, chip), shape, hardware=chip, hbm=False).natural
    return {"comm": natural.comm_time, "compute": natural.compute_time, "bound": natural.bound}


def memory_limit_sharding(p, record):
    chip = ss.hardware(p["chip"])
    d, b, n = p["D"], p["B"], p["n"]
    f = d * p["ratio"]
    mesh = ss.Mesh({"X": n}, hardware=chip)
    chain = ["x[B, D] · W_in[D, F] -> Tmp[B, F]", "Tmp[B, F] · W_out[F, D] -> Out[B, D]"]
    shape = {"B": b, "D": d, "F": f}
    limit = int(record["statement"].split("**")[1].split(" B")[0].replace(",", ""))  # the limit the student is given
    r = ss.best_sharding(
        chain, mesh, shape, hardware=chip, memory_limit=limit, fixed={"x": "x[B_X, D]"}, out="Out[B_X, D]", hbm=False
    )
    best = r.best
    assert best.memory_bytes_per_device <= limit
    ways = {name: mesh.group_size(best.sharding(name).axes) for name in ("W_in", "W_out")}
    return {
        "time": best.time,
        "memory": best.memory_bytes_per_device,
        "ways_in": ways["W_in"],
        "ways_out": ways["W_out"],
    }


def reduce_scatter_vs_gather(p, record):
    chip_name, nx = p["slice"].split(":")
    chip = ss.hardware(chip_name)
    mesh = ss.Mesh({"X": int(nx)}, hardware=chip)
    i, j, k = p["I"], p["J"], p["K"]
    math = Fraction(2 * i * j * k, int(nx)) / chip.flops_bf16
    # Gathering A onto K lets each chip multiply against its own columns of B; onto I it computes all of C
    # and keeps its rows, so it does |X| times the FLOPs.
    gather_math = math if p["onto"] == "K" else math * int(nx)
    gather = max(gather_math, _gather(mesh, "X", chip, 2 * i * j))
    scatter = max(math, _gather(mesh, "X", chip, 2 * i * k))  # reduce-scatter the partial C (I x K)
    return {"ratio": Fraction(j, k), "time": min(gather, scatter)}


def unreduced_chain(p, record):
    chip_name, dims = p["slice"].split(":")
    chip = ss.hardware(chip_name)
    mesh = _slice_mesh(dims, chip)
    x = mesh.size("X")
    at_end = 2 * _gather(mesh, "Y", chip, Fraction(2 * p["B"] * p["E"], x))  # AllReduce of y[B_X, E]
    between = 2 * _gather(mesh, "Y", chip, Fraction(2 * p["B"] * p["F"], x))  # AllReduce of h[B_X, F]
    return {
        "unreduced": "y[B_X, E]{U_Y}",
        "end_time": at_end,
        "better": "end" if at_end < between else "between",
        "saved": abs(at_end - between),
    }


def _axis_bandwidth(chip):
    """The bandwidth a collective gets along one axis: W_ici (both ways) on a TPU, the NVLink egress on a GPU."""
    hw = ss.hardware(chip)
    return Fraction(2 * hw.ici_link_bandwidth) if hw.ici_link_bandwidth else Fraction(hw.nvlink_bandwidth)


def mlp_tp_degree(p):
    # forward: AllGather of In and ReduceScatter of Out, 2BD bytes each over M_Y·W, against 4BDF/|Y| FLOPs
    c, w = Fraction(ss.hardware(p["chip"]).flops_bf16), _axis_bandwidth(p["chip"]) * p["my"]
    largest = int(Fraction(p["F"]) * w / c)
    while p["D"] % largest or p["F"] % largest:  # Y splits D of In and F of the weights: it must divide both
        largest -= 1
    return {"largest": largest, "comm": Fraction(4 * p["B"] * p["D"]) / w}


def fsdp_min_batch(p):
    c, w = Fraction(ss.hardware(p["chip"]).flops_bf16), _axis_bandwidth(p["chip"]) * p["mx"]
    d = p["D"]
    f = d * p["ratio"] // 2 if p["ratio"] == 7 else d * p["ratio"]
    # backward: two weight-sized collectives of 2DF bytes each, AllReduce (2x) for DP, gather + scatter for FSDP
    comm = Fraction(2 * 2 * 2 * d * f) / w
    math_time = Fraction(8 * p["per_chip"] * d * f) / c
    return {"threshold": round(c / w), "regime": "compute" if comm <= math_time else "communication", "comm": comm}


# -- whole models: sizes from the preset, everything else by hand ----------------------------------------


def _sizes(name: str) -> dict:
    m = ss.model(name)
    return {"L": int(m.layers), "D": int(m.d_model), "F": int(m.d_ff), "N": int(m.heads), "K": int(m.kv_heads),
            "H": int(m.head_dim), "P": int(m.params.total), "P_active": int(m.params.active)}  # fmt: skip


def _tpu(chip: str) -> tuple[Fraction, Fraction, Fraction]:
    """C, W_ici (both ways, one axis) and W_hbm of a TPU preset."""
    hw = ss.hardware(chip)
    return Fraction(hw.flops_bf16), 2 * Fraction(hw.ici_link_bandwidth), Fraction(hw.hbm_bandwidth)


def training_memory(p):
    s = _sizes(p["name"])
    per_param = {"adam": 2 + 8, "adam-master": 2 + 12}[p["opt"]]
    per_layer = {"mlp": s["D"] + 2 * s["F"], "layer": s["D"]}.get(p["policy"]) or int(p["policy"]) * s["D"]
    batch = 2 ** p["logb"]
    total = per_param * s["P"] + 2 * s["L"] * batch * per_layer
    hbm = int(ss.hardware(p["chip"]).hbm_bytes)
    chips = -(-total // hbm)
    slice_ = 2 ** math.ceil(math.log2(chips)) * p["mult"]
    return {"total": total, "chips": chips, "share": Fraction(total, slice_)}


def training_time(p):
    s = _sizes(p["name"])
    chips = 2 ** p["logn"]
    rate = chips * Fraction(ss.hardware(p["chip"]).flops_bf16) * Fraction(p["mfu_pct"], 100)
    flops = 6 * s["P_active"] * p["trillions"] * 10**12
    return {"flops": flops, "days": flops / rate / 86400, "step": 6 * s["P_active"] * p["per_chip"] * chips / rate}


def fsdp_tp_split(p):
    s = _sizes(p["name"])
    c, w, _ = _tpu(p["chip"])
    n, per_chip = 2 ** p["logn"], 2 ** p["logb"]
    b, d, f = per_chip * n, s["D"], s["F"]
    threshold = (c / w) ** 2 / f
    best = None
    for x in (2**k for k in range(p["logn"] + 1)):
        y = n // x
        if b % x or d % x or d % y or f % y:
            continue
        # the gathers over X and over Y overlap: the larger counts
        comm = max(Fraction(4 * d * f * x, n) / w, Fraction(4 * b * d, x) / w)
        if best is None or comm < best[0]:
            best = (comm, x)
    return {"x": math.sqrt(b * n / f), "best_x": best[1], "threshold": threshold,
            "regime": "compute" if per_chip >= threshold else "communication"}  # fmt: skip


def kv_cache_batch(p):
    s = _sizes(p["name"])
    n, t, nbytes = 2 ** (p["logn"] - 1), 2 ** p["logt"], BYTES[p["dtype"]]
    per_token = 2 * s["L"] * s["K"] * s["H"] * nbytes
    room = n * int(ss.hardware(p["chip"]).hbm_bytes) - s["P"] * nbytes
    return {"kv_token": per_token, "largest": room // (per_token * t)}


def decode_tp_limit(p):
    s = _sizes(p["name"])
    c, w, hbm = _tpu(p["chip"])
    b, y = 2 ** (p["logb"] - 1), 2 ** p["logy"]
    load, move = Fraction(2 * 2 * s["D"] * s["F"], y) / hbm, Fraction(4 * b * s["D"]) / w
    return {"limit": s["F"] * w / (b * hbm), "prefill": s["F"] * w / c, "regime": "hbm" if load >= move else "ici"}


def weight_stationary_2d(p):
    s = _sizes(p["name"])
    _, w, _ = _tpu(p["chip"])
    n, b, d, f = 2 ** p["logn"], 2 ** p["logb"], s["D"], s["F"]
    one_d = Fraction(4 * b * d, 3) / w
    two_d = 4 * math.sqrt(2) * b * math.sqrt(d * f / n) / float(w)
    return {"x": math.sqrt(n * d / (2 * f)), "crossover": Fraction(18 * f, d), "one_d": one_d, "two_d": two_d,
            "winner": "2-D" if two_d < one_d else "1-D"}  # fmt: skip


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
    "matmul-case": matmul_case,
    "matmul-collective": matmul_collective,
    "strategy-crossover": strategy_crossover,
    "min-latency-sharding": min_latency_sharding,
    "training-inference": training_inference,
    "memory-limit-sharding": memory_limit_sharding,
    "reduce-scatter-vs-gather": reduce_scatter_vs_gather,
    "unreduced-chain": unreduced_chain,
    "mlp-tp-degree": mlp_tp_degree,
    "fsdp-min-batch": fsdp_min_batch,
    "training-memory": training_memory,
    "training-time": training_time,
    "fsdp-tp-split": fsdp_tp_split,
    "kv-cache-batch": kv_cache_batch,
    "decode-tp-limit": decode_tp_limit,
    "weight-stationary-2d": weight_stationary_2d,
    "matmul-measured-time": matmul_measured_time,
}

NEEDS_RECORD = {
    "matmul-case", "matmul-collective", "strategy-crossover", "min-latency-sharding", "training-inference",
    "memory-limit-sharding", "reduce-scatter-vs-gather", "unreduced-chain",
}  # fmt: skip


def test_every_family_is_re_derived():
    missing = sorted(set(families()) - set(DERIVE))
    assert not missing, f"no independent re-derivation for {missing}"


@pytest.mark.parametrize("name", sorted(DERIVE))
def test_exported_answers_agree_with_the_public_api(name):
    records = to_json(generate(3, per_family=40, names=[name]))["problems"]
    for record in records:
        derive = DERIVE[name]
        expected = derive(record["params"], record) if name in NEEDS_RECORD else derive(record["params"])
        got = {a["name"]: a for a in record["answers"]}
        for answer_name, value in expected.items():
            exported = got[answer_name]
            if isinstance(value, str):
                assert value == exported["value"], (record["id"], answer_name)
                continue
            assert float(value) == pytest.approx(exported["value"], rel=max(exported["rel_tol"], 1e-9)), (
                record["id"], answer_name, float(value), exported["value"],
            )  # fmt: skip

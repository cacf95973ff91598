"""What ``symshard transfer`` prints: bytes moved between chips, from hosts, and a slice's totals.

Three questions, one function each: over the chips' links (point to point, or every chip gathering to
one), from the hosts over PCIe, and what a whole slice adds up to. Each row is a formula or a number
with its unit; the JSON carries the numbers.

Examples:
    >>> from symshard.machines.presets import hardware
    >>> from symshard.models.transfers import point_to_point
    >>> chip = hardware("tpu-v5e")
    >>> route = point_to_point((0, 0), (2, 1), (4, 4), hardware=chip, nbytes=2**30)
    >>> text, data = ici_report(route, chip, (4, 4), 2**30)
    >>> print(text.splitlines()[0])
    1,073,741,824 B (1 GiB) from chip (0, 0) to chip (2, 1) of a TPU v5e 4x4 slice
    >>> data["hops"]
    3
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.units import format_bytes, format_number, format_seconds, json_value
from ..i18n import keyed, sentence
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..messages import Clauses, say
from . import text

if TYPE_CHECKING:
    from ..models.transfers import Gather, Route

ENGLISH: dict[str, str] = {
    "cli.transfer.p2p_head": "{bytes} from chip {source} to chip {target} of a {chip} {shape} slice",
    "cli.transfer.gather_head": "{bytes} from each of the {senders} other {senders:chip|chips} to chip {target} of a {chip} {shape} slice",
    "cli.transfer.host_head": "{bytes} from the hosts over PCIe to {chips} {chips:chip|chips}, {share} each",
    "cli.transfer.host_head_one": "{bytes} from the host over PCIe to one chip",
    "cli.transfer.totals_head": "{chip} {shape}: {chips} {chips:chip|chips}",
    "cli.transfer.slice": "slice",
    "cli.transfer.route": "route",
    "cli.transfer.route_value": "{waypoints}: {moves}",
    "cli.transfer.route_none": "{source}: the source is the target, nothing moves",
    "cli.transfer.ports": "ports",
    "cli.transfer.ports_value": "{ports} used at once (one link per axis the route moves along)",
    "cli.transfer.links_in": "links in",
    "cli.transfer.links_in_value": "{ports} into the target: they, not the senders, set the pace",
    "cli.transfer.farthest": "farthest",
    "cli.transfer.farthest_value": "{hops} {hops:hop|hops} to the farthest sender",
    "cli.transfer.p2p_bandwidth": "{bytes} / ({ports} × {link} B/s) = {time}",
    "cli.transfer.gather_bandwidth": "{senders} × {bytes} / ({ports} × {link} B/s) = {time}",
    "cli.transfer.latency_value": "{hops} × {hop} = {time}",
    "cli.transfer.total": "bandwidth + latency = {time}",
    "cli.transfer.pcie": "PCIe",
    "cli.transfer.pcie_value": "W_pcie = {bandwidth} per chip",
    "cli.transfer.pcie_symbolic": "W_pcie per chip (name a chip with --hw for seconds)",
    "cli.transfer.host_time": "V/(chips·W_pcie) = {time}",
    "cli.transfer.matmul": "matmul",
    "cli.transfer.matmul_value": "In[B, D] · W[D, F] with W streamed from the host is compute-bound when {condition}",
    "cli.transfer.matmul_numeric": "  with these numbers: {condition}",
    "cli.transfer.flops": "FLOP/s",
    "cli.transfer.hbm": "HBM",
    "cli.transfer.hbm_bandwidth": "HBM bandwidth",
    "cli.transfer.hosts": "hosts",
    "cli.transfer.hosts_value": "{hosts} ({per_host} {per_host:chip|chips} per host: {source})",
    "cli.transfer.hosts_unknown": "unknown (no host size on record for {chip})",
    "cli.transfer.dcn": "DCN egress",
    "cli.transfer.times": "{chips} × {each} = {total}",
    "cli.transfer.nvlink": "NVLink egress",
    "cli.transfer.bisection": "node bisection",
    "cli.transfer.bisection_value": "{half} {half:GPU|GPUs} × {each} B/s = {total} B/s each way, one NVLink domain of {node} {node:GPU|GPUs} cut in half",
    "cli.transfer.no_figure": "no figure for {chip}",
}
"""The English of this module's words by key; other languages are in the catalogue."""

_WORDS = {**text.ENGLISH, **ENGLISH}


def _say(key: str, language: str, **values: object) -> str:
    return keyed(_WORDS, key, language, **values)


def coords_text(coords: Sequence[int]) -> str:
    """A chip's coordinates, ``(0, 3)``."""
    return "(" + ", ".join(map(str, coords)) + ")"


def _wiring(chip: Hardware, dims: tuple[int, ...], lang: str) -> tuple[str, list[dict]]:
    # the slice's axes in words, and as data
    mesh = Mesh({"XYZW"[i]: s for i, s in enumerate(dims)}, hardware=chip)
    described = sentence(say("{clauses}", clauses=Clauses(mesh.describe())), lang)
    data = [{"axis": a.name, "size": json_value(a.size), "topology": a.topology.value} for a in mesh.axes]
    return described, data


def ici_report(
    moved: Route | Gather, chip: Hardware, dims: tuple[int, ...], nbytes: sympy.Expr | int, language: str = "en"
) -> tuple[str, dict]:
    """``nbytes`` over the chips' links of a ``dims`` slice, from one chip to another (a
    :class:`~symshard.models.transfers.Route`) or from every chip to one (a :class:`~symshard.models.transfers.Gather`):
    the rows that differ, then bandwidth, latency and their sum, as text and data."""
    from ..algebra.symbols import T_hop
    from ..models.transfers import Gather

    lang = language
    shape = "x".join(map(str, dims))
    link = chip.ici_link_bandwidth or chip.nvlink_bandwidth
    hop = chip.hop_latency if chip.hop_latency is not None else T_hop
    described, wiring = _wiring(chip, dims, lang)
    size = format_bytes(nbytes)
    data: dict = {"hardware": chip.name, "slice": list(dims), "wiring": wiring, "bytes": json_value(nbytes)}
    rows = [(_say("cli.transfer.slice", lang), described)]
    if isinstance(moved, Gather):
        g = moved
        hops, bw, lat, time = g.farthest, g.bandwidth_time, g.latency_time, g.time
        head = _say("cli.transfer.gather_head", lang, bytes=size, senders=format_number(g.senders),
                    target=coords_text(g.target), chip=chip.label, shape=shape)  # fmt: skip
        rows += [
            (_say("cli.transfer.links_in", lang), _say("cli.transfer.links_in_value", lang, ports=g.ports)),
            (_say("cli.transfer.farthest", lang), _say("cli.transfer.farthest_value", lang, hops=g.farthest)),
            (_say("cli.bandwidth", lang), _say("cli.transfer.gather_bandwidth", lang, senders=g.senders, bytes=size,
             ports=g.ports, link=format_number(link), time=text.shown(bw, format_seconds))),
        ]  # fmt: skip
        data.update({"question": "gather", "target": list(g.target), "senders": g.senders, "ports": g.ports,
                     "farthest_hops": g.farthest})  # fmt: skip
    else:
        r = moved
        hops, bw, lat, time = r.hops, r.bandwidth_time, r.latency_time, r.time
        head = _say("cli.transfer.p2p_head", lang, bytes=size, source=coords_text(r.source),
                    target=coords_text(r.target), chip=chip.label, shape=shape)  # fmt: skip
        moves = ", ".join(f"{'XYZW'[i]} {'+' if m > 0 else '−'}{abs(m)}" for i, m in enumerate(r.moves) if m)
        route = (_say("cli.transfer.route_value", lang, waypoints=" → ".join(map(coords_text, r.waypoints)),
                      moves=moves) if r.hops else
                 _say("cli.transfer.route_none", lang, source=coords_text(r.source)))  # fmt: skip
        rows += [
            (_say("cli.transfer.route", lang), route),
            (_say("cli.hops", lang), str(r.hops)),
            (_say("cli.transfer.ports", lang), _say("cli.transfer.ports_value", lang, ports=r.ports)),
            (_say("cli.bandwidth", lang), _say("cli.transfer.p2p_bandwidth", lang, bytes=size, ports=r.ports,
             link=format_number(link), time=text.shown(bw, format_seconds))),
        ]  # fmt: skip
        data.update({"question": "point_to_point", "source": list(r.source), "target": list(r.target),
                     "route": [list(c) for c in r.waypoints], "moves": list(r.moves), "hops": r.hops,
                     "ports": r.ports})  # fmt: skip
    summed = (format_seconds(time) if as_expr(time).is_number else
              f"{text.shown(bw, format_seconds)} + {text.shown(lat, format_seconds)}")  # fmt: skip
    total = _say("cli.transfer.total", lang, time=summed)
    regime, crossover = None, None
    if as_expr(bw).is_number and as_expr(lat).is_number and bw > 0:
        regime = "latency" if lat > bw else "bandwidth"
        crossover = sympy.ceiling(nbytes * lat / bw)  # both times scale apart: bandwidth with V, latency not
        total += _say("cli.regime", lang, regime=text.bound(regime, lang))
        if crossover > 0:
            total += _say("cli.latency_below", lang, regime=text.bound("latency", lang), bytes=format_bytes(crossover))
    latency = _say("cli.transfer.latency_value", lang, hops=hops, hop=text.shown(hop, format_seconds),
                   time=text.shown(lat, format_seconds))  # fmt: skip
    rows += [(_say("cli.latency", lang), latency), (_say("cli.time", lang), total)]
    data.update({"link_bandwidth": json_value(link), "hop_latency_s": json_value(hop),
                 "bandwidth_time_s": json_value(bw), "latency_time_s": json_value(lat), "time_s": json_value(time),
                 "regime": regime, "latency_bound_below_bytes": None if crossover is None else json_value(crossover)})  # fmt: skip
    return head + "\n" + text.table(rows), data


def host_report(chip: Hardware | None, nbytes: sympy.Expr | int, chips: int, language: str = "en") -> tuple[str, dict]:
    """``nbytes`` from the hosts over PCIe to ``chips`` chips, and when a matmul streaming its weights
    from the host is compute-bound, as text and data."""
    from ..models.transfers import host_matmul_condition, host_to_chip

    lang = language
    t = host_to_chip(nbytes, hardware=chip, chips=chips)
    exact = host_matmul_condition()
    numeric = host_matmul_condition(hardware=chip) if chip is not None else None
    head = (_say("cli.transfer.host_head", lang, bytes=format_bytes(nbytes), chips=format_number(chips),
                 share=format_bytes(nbytes / chips)) if chips > 1 else
            _say("cli.transfer.host_head_one", lang, bytes=format_bytes(nbytes)))  # fmt: skip
    pcie = (_say("cli.transfer.pcie_value", lang, bandwidth=f"{format_number(t.bandwidth)} B/s")
            if as_expr(t.bandwidth).is_number else _say("cli.transfer.pcie_symbolic", lang))  # fmt: skip
    rows = [(_say("cli.hardware", lang), chip.label)] if chip is not None else []
    rows += [
        (_say("cli.transfer.pcie", lang), pcie),
        (_say("cli.time", lang), _say("cli.transfer.host_time", lang, time=text.shown(t.time, format_seconds))),
        (_say("cli.transfer.matmul", lang), _say("cli.transfer.matmul_value", lang,
         condition=text.condition(exact.text(), lang))),
    ]  # fmt: skip
    if numeric is not None:
        rows.append(
            ("", _say("cli.transfer.matmul_numeric", lang, condition=text.condition(numeric.text(), lang)).strip())
        )
    data = {"question": "host", "hardware": chip.name if chip is not None else None, "bytes": json_value(nbytes),
            "chips": chips, "bytes_per_chip": json_value(nbytes / chips), "pcie_bandwidth": json_value(t.bandwidth),
            "time_s": json_value(t.time), "compute_bound_when": exact.text(),
            "compute_bound_when_numeric": numeric.text() if numeric is not None else None,
            "compute_bound_batch": json_value(numeric.cases[0].relations[0].rhs) if numeric is not None else None}  # fmt: skip
    return head + "\n" + text.table(rows), data


def slice_totals_report(chip: Hardware, dims: tuple[int, ...], language: str = "en") -> tuple[str, dict]:
    """A slice's totals (FLOP/s, HBM, hosts, DCN egress; on GPUs the NVLink egress and a node's bisection) as
    the per-chip figure times the chips."""
    from ..models.transfers import CHIPS_PER_HOST, slice_totals

    lang = language
    t = slice_totals(chip, "x".join(map(str, dims)))
    none = _say("cli.transfer.no_figure", lang, chip=chip.label)

    def times(each: object, total: object, unit: str, fmt=None) -> str:
        if each is None or total is None:
            return none
        return _say("cli.transfer.times", lang, chips=format_number(t.chips), each=f"{format_number(each)} {unit}",
                    total=(fmt or (lambda v: f"{format_number(v)} {unit}"))(as_expr(total)))  # fmt: skip

    per_host, source = CHIPS_PER_HOST.get(chip.name, (None, ""))
    hosts = (_say("cli.transfer.hosts_value", lang, hosts=format_number(t.hosts), per_host=per_host,
                  source=sentence(source, lang))
             if t.hosts is not None else _say("cli.transfer.hosts_unknown", lang, chip=chip.label))  # fmt: skip
    rows = [
        (_say("cli.transfer.flops", lang), times(chip.flops_bf16, t.flops, "FLOP/s")),
        (_say("cli.transfer.hbm", lang), times(chip.hbm_bytes, t.hbm_bytes, "B", format_bytes)),
        (_say("cli.transfer.hbm_bandwidth", lang), times(chip.hbm_bandwidth, t.hbm_bandwidth, "B/s")),
        (_say("cli.transfer.hosts", lang), hosts),
        (_say("cli.transfer.dcn", lang), times(chip.dcn_bandwidth, t.dcn_bandwidth, "B/s")),
    ]
    if t.nvlink_bandwidth is not None:
        rows.append((_say("cli.transfer.nvlink", lang), times(chip.nvlink_bandwidth, t.nvlink_bandwidth, "B/s")))
    if t.node_bisection is not None and chip.node_size is not None:
        rows.append((_say("cli.transfer.bisection", lang), _say("cli.transfer.bisection_value", lang,
                     half=chip.node_size // 2, node=chip.node_size, each=format_number(chip.nvlink_bandwidth),
                     total=format_number(t.node_bisection))))  # fmt: skip
    head = _say("cli.transfer.totals_head", lang, chip=chip.label, shape="x".join(map(str, t.shape)),
                chips=format_number(t.chips))  # fmt: skip
    data = {"question": "totals", "hardware": chip.name, "slice": list(t.shape), "chips": t.chips,
            "flops": json_value(t.flops), "hbm_bytes": json_value(t.hbm_bytes),
            "hbm_bandwidth": json_value(t.hbm_bandwidth), "hosts": t.hosts, "chips_per_host": per_host,
            "dcn_bandwidth": json_value(t.dcn_bandwidth), "nvlink_bandwidth": json_value(t.nvlink_bandwidth),
            "node_bisection": json_value(t.node_bisection)}  # fmt: skip
    return head + "\n" + text.table(rows), data

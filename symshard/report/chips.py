"""What ``symshard hardware`` prints: the chip presets as a table, or one chip with its sources.

Examples:
    >>> text, data = chips_report()
    >>> text.splitlines()[0].split()[:3]
    ['name', 'bf16', 'FLOP/s']
    >>> from symshard.machines.presets import hardware
    >>> text, data = chip_report(hardware("tpu-v5e"))
    >>> text.splitlines()[0], data["name"]
    ('TPU v5e (tpu-v5e)', 'tpu-v5e')
"""

from __future__ import annotations

from ..algebra.symbols import W_ici
from ..algebra.units import format_number, format_seconds, json_value
from ..i18n import keyed
from ..machines.chips import Hardware
from ..machines.presets import HARDWARE
from . import text

ENGLISH: dict[str, str] = {
    "cli.hardware.head": "name",
    "cli.hardware.columns": "bf16 FLOP/s   HBM B/s    W_ici B/s  W_nvlink   T_hop   wiring",
    "cli.hardware.substitutes": "  substitutes: {constants}",
    "cli.hardware.network": "  network: {levels}",
    "cli.hardware.level": "{fabric} ({devices} {devices:device|devices} per domain)",
    "cli.hardware.node_egress": "  node egress: {bandwidth} B/s ({node} {node:GPU|GPUs} x W_dcn)",
    "cli.hardware.attained": "  attained, measured in {file} ({rows} {rows:row|rows}; device {device}, date {date}, timing: "
    "{method}); the figures above stay the bound:",
    "cli.hardware.attained_rates": "    {dtype} matmuls: C' = {flops} FLOP/s, W' = {bandwidth} B/s, t0 = {overhead}, L = {floor}, "
    "p = {overlap}",
    "cli.hardware.attained_streams": "    {dtype} copies and adds: W_s = {bandwidth} B/s, t0_s = {overhead}, L_s = {floor}",
    "cli.hardware.unknown": "not given",
}
"""The English of this module's words by key; other languages are in the catalogue."""


def _say(key: str, language: str, **values: object) -> str:
    return keyed(ENGLISH, key, language, **values)


def chip_report(chip: Hardware, language: str = "en") -> tuple[str, dict]:
    """One chip: each figure with its source, the constants it substitutes, its network levels."""
    one: dict = {**{k: json_value(v) for k, v in chip.table_row().items()}, "sources": dict(chip.sources)}
    lines = [f"{chip.label} ({chip.name})"]
    for key, value in chip.table_row().items():
        if key in ("name", "label"):
            continue
        source = chip.source(key)
        shown = "—" if value is None else format_number(value) if not isinstance(value, str) else value
        lines.append(f"  {key.ljust(19)} {shown}" + (f"   [{source}]" if source else ""))
    consts = ", ".join(f"{k} = {format_number(v)}" for k, v in chip.constants().items())
    lines.append(_say("cli.hardware.substitutes", language, constants=consts))
    levels = [
        _say("cli.hardware.level", language, fabric=lv.fabric.value, devices=lv.domain)
        if lv.domain is not None
        else lv.fabric.value
        for lv in chip.levels
    ]
    lines.append(_say("cli.hardware.network", language, levels=", ".join(levels)))
    if chip.node_egress is not None:
        lines.append(_say("cli.hardware.node_egress", language, bandwidth=format_number(chip.node_egress),
                          node=chip.node_size))  # fmt: skip
    one["levels"] = [{"fabric": lv.fabric.value, "domain": lv.domain} for lv in chip.levels]
    one["latency_model"] = chip.latency_model
    lines += _attained_lines(chip, language)
    one["attained"] = _attained_data(chip)
    return "\n".join(lines), one


def _attained_lines(chip: Hardware, language: str) -> list[str]:
    """The rates a calibrated chip attained, per dtype, under its data sheet (none for a preset)."""
    attained = chip.attained
    if attained is None:
        return []
    unknown = _say("cli.hardware.unknown", language)
    lines = [_say("cli.hardware.attained", language, file=attained.file or unknown, rows=attained.rows,
                  device=attained.device or unknown, date=attained.date or unknown,
                  method=attained.method or unknown)]  # fmt: skip
    for r in attained.rates:
        lines.append(_say("cli.hardware.attained_rates", language, dtype=r.dtype, flops=format_number(r.flops),
                          bandwidth=format_number(r.hbm_bandwidth), overhead=format_seconds(r.kernel_overhead),
                          floor=format_seconds(r.floor) if r.floor else "—", overlap="max" if r.overlap is None else r.overlap))  # fmt: skip
        if r.has_streams:
            lines.append(_say("cli.hardware.attained_streams", language, dtype=r.dtype,
                              bandwidth=format_number(r.stream_bandwidth), overhead=format_seconds(r.stream_overhead),
                              floor=format_seconds(r.stream_floor)))  # fmt: skip
    return lines


def _attained_data(chip: Hardware) -> dict | None:
    """The JSON of a calibrated chip's attained rates (None for a preset)."""
    attained = chip.attained
    if attained is None:
        return None
    dtypes = {}
    for r in attained.rates:
        dtypes[r.dtype] = {
            "flops": json_value(r.flops),
            "hbm_bandwidth": json_value(r.hbm_bandwidth),
            "kernel_overhead_s": json_value(r.kernel_overhead),
            "floor_s": json_value(r.floor),
            "overlap": "max" if r.overlap is None else r.overlap,
            "stream": {"bandwidth": json_value(r.stream_bandwidth), "overhead_s": json_value(r.stream_overhead),
                       "floor_s": json_value(r.stream_floor)} if r.has_streams else None,
        }  # fmt: skip
    return {"file": attained.file, "sha256": attained.sha256, "device": attained.device, "date": attained.date,
            "method": attained.method, "rows": attained.rows, "dtypes": dtypes}  # fmt: skip


def chips_report(language: str = "en") -> tuple[str, dict]:
    """Every preset in one table: FLOP/s, bandwidths, hop latency and wiring."""
    rows = [(_say("cli.hardware.head", language), _say("cli.hardware.columns", language))]
    presets: list[dict] = []
    for chip in HARDWARE.values():
        c = chip.constants()
        cells = [
            format_number(chip.flops_bf16).ljust(13),
            format_number(chip.hbm_bandwidth).ljust(10),
            (format_number(c[W_ici]) if W_ici in c else "—").ljust(10),
            (format_number(chip.nvlink_bandwidth) if chip.nvlink_bandwidth else "—").ljust(10),
            (format_seconds(chip.hop_latency) if chip.hop_latency else "NCCL" if chip.base_latency else "—").ljust(7),
            chip.wiring
            + (f" {chip.node_size}" if chip.node_size else "")
            + (f"x{chip.leaf_nodes}+spine" if chip.leaf_nodes else ""),
        ]
        rows.append((chip.name, " ".join(cells)))
        presets.append({k: json_value(v) for k, v in chip.table_row().items()})
    return text.table(rows), {"hardware": presets}

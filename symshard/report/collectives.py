"""What ``symshard collective`` prints: one collective's cost, row by row, formula then number.

The rows are the cost model's terms (bytes, hops, the bandwidth and latency times, and each network
level's share when the collective crosses levels), then the time and its regime, then the notes the
cost model made that the rows do not already say.

Examples:
    >>> from symshard.costs.collectives import parse_collective
    >>> from symshard.machines.mesh import Mesh
    >>> expr, mesh = parse_collective("AllGather_X(A[I_X, J])"), Mesh("X=4")
    >>> text, data = collective_report(expr, mesh, expr.cost(mesh, "I=1024,J=1024"), expr.cost(mesh.symbolic()), None)
    >>> print(text.splitlines()[0])
    AllGather_X(A[I_X, J]) -> A[I, J]
    >>> data["hops"]
    2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy

from ..algebra.symbols import C, W_pcie, latex
from ..algebra.units import format_bytes, format_number, format_seconds, json_value, pretty
from ..i18n import keyed, sentence
from ..messages import Clauses, say
from . import text

if TYPE_CHECKING:
    from ..costs.collective_cost import CollectiveCost
    from ..costs.collectives import CollectiveExpr
    from ..machines.chips import Hardware
    from ..machines.mesh import Mesh

ENGLISH: dict[str, str] = {
    "cli.model": "model",
    "cli.mesh": "mesh",
    "cli.latency_nccl": "{model}; latency from NCCL's tuning model, added to the bandwidth term",
    "cli.level": "level {fabric}",
    "cli.level_value": "{devices} {devices:device|devices}, V = {bytes}: {time}, {steps} {steps:step|steps}",
}
"""The English of this module's words by key; other languages are in the catalogue."""

_WORDS = {**text.ENGLISH, **ENGLISH}


def _say(key: str, language: str, **values: object) -> str:
    return keyed(_WORDS, key, language, **values)


def chip_summary(chip: Hardware | None) -> str | None:
    """A chip's name and the constants it substitutes (seconds for latencies), None without a chip.

    Examples:
        >>> from symshard.machines.presets import hardware
        >>> chip_summary(hardware("tpu-v5e"))  # doctest: +ELLIPSIS
        'TPU v5e (W_hbm = ..., W_ici = ..., T_hop = 1 µs)'
    """
    if chip is None:
        return None
    constants = [
        f"{k} = {format_seconds(v) if str(k).startswith('T_') else format_number(v)}"
        for k, v in chip.constants().items()
        if k not in (C, W_pcie)  # the host's PCIe never enters a collective
    ]
    return f"{chip.label} ({', '.join(constants)})"


def collective_text(
    expr: CollectiveExpr,
    mesh: Mesh,
    cost: CollectiveCost,
    sym: CollectiveCost,
    chip: str | None,
    language: str = "en",
) -> str:
    """The table of ``cost`` (on ``mesh``) beside ``sym``, the same collective's cost on the symbolic
    mesh; ``chip`` is the line naming the hardware (:func:`chip_summary`)."""
    lang = language
    described = sentence(say("{clauses}", clauses=Clauses(mesh.describe())), lang)
    model = cost.model if cost.latency_model == "book" else _say("cli.latency_nccl", lang, model=cost.model)
    rows = [
        (_say("cli.model", lang), model),
        (_say("cli.mesh", lang), described or _say("cli.one_device", lang)),
        *([(_say("cli.hardware", lang), chip)] if chip else []),
        ("V", text.equation(sym.bytes, cost.bytes, format_bytes)),
        (_say("cli.hops", lang), text.equation(sym.hops, cost.hops, format_number)),
        (_say("cli.bandwidth", lang), text.equation(sym.bandwidth_time, cost.bandwidth_time, format_seconds)),
        (_say("cli.latency", lang), text.equation(sym.latency_time, cost.latency_time, format_seconds)),
    ]
    if len(cost.levels) > 1:  # a collective across network levels: each level's share
        shapes = sym.levels if len(sym.levels) == len(cost.levels) else cost.levels
        for lv, sv in zip(cost.levels, shapes, strict=True):
            value = _say(
                "cli.level_value",
                lang,
                devices=text.equation(sv.devices, lv.devices, format_number),
                bytes=text.equation(sv.bytes, lv.bytes, format_bytes),
                time=text.equation(sv.bandwidth_time, lv.bandwidth_time, format_seconds),
                steps=text.equation(sv.hops, lv.hops, format_number),
            )
            rows.append((_say("cli.level", lang, fabric=lv.fabric.value), value))
    verdict = text.equation(sym.time, cost.time, format_seconds)
    if cost.regime is not None:
        verdict += _say("cli.regime", lang, regime=text.bound(cost.regime, lang))
        if cost.crossover_bytes is not None and cost.crossover_bytes.is_number:
            verdict += _say(
                "cli.latency_below",
                lang,
                regime=text.bound("latency", lang),
                bytes=format_bytes(sympy.ceiling(cost.crossover_bytes)),
            )
    rows.append((_say("cli.time", lang), verdict))
    notes = [a for a in cost.assumptions if not a.startswith(("model ", "axis ", "hardware ", "latency "))]
    out = f"{expr}\n" + text.table(rows)
    if notes:
        out += "\n" + "\n".join(_say("cli.note", lang, note=sentence(n, lang)) for n in notes)
    return out


def collective_report(
    expr: CollectiveExpr,
    mesh: Mesh,
    cost: CollectiveCost,
    sym: CollectiveCost,
    chip: Hardware | None,
    language: str = "en",
) -> tuple[str, dict]:
    """The text and the JSON-ready data of ``cost``, the cost of ``expr`` on ``mesh`` (``sym``: on the
    symbolic mesh, for the formulas)."""
    data = {
        "collective": cost.collective,
        "input": str(expr.operand),
        "output": str(expr.output),
        "model": cost.model,
        "mesh": [
            {
                "axis": a.name,
                "size": json_value(a.size),
                "topology": a.topology.value,
                "fabric": a.fabric.value,
                "levels": [{"fabric": f.value, "devices": json_value(n)} for f, n in a.levels],
            }
            for a in mesh.axes
        ],
        "bytes": json_value(cost.bytes),
        "bytes_in": json_value(cost.bytes_in),
        "bytes_out": json_value(cost.bytes_out),
        "hops": json_value(cost.hops),
        "time_s": json_value(cost.time),
        "bandwidth_time_s": json_value(cost.bandwidth_time),
        "latency_time_s": json_value(cost.latency_time),
        "regime": cost.regime,
        "crossover_bytes": json_value(cost.crossover_bytes),
        "latency_model": cost.latency_model,
        "levels": [
            {
                "fabric": lv.fabric.value,
                "devices": json_value(lv.devices),
                "bytes": json_value(lv.bytes),
                "bandwidth_time_s": json_value(lv.bandwidth_time),
                "hops": json_value(lv.hops),
            }
            for lv in cost.levels
        ],
        "formula": latex(sym.time),
        "formula_text": pretty(sym.time),
        "hardware": chip.name if chip else None,
        "assumptions": list(cost.assumptions),
    }
    if language != "en":
        data["language"] = language
        data[f"assumptions_{language}"] = [sentence(a, language) for a in cost.assumptions]
    return collective_text(expr, mesh, cost, sym, chip_summary(chip), language), data

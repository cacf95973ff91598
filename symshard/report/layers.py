"""What ``symshard layer`` prints: an MLP block under a sharding scheme, step by step and phase by phase.

Each step shows its FLOPs, or its collective's bytes and time and the matmuls it overlaps; each phase
its math and communication times and which one bounds it; then memory per device, the condition for
being compute-bound (symbolic, and with the given numbers), and for FSDP+TP the best split of the mesh.

Examples:
    >>> from symshard.models.schemes import layer
    >>> lay = layer("tp")
    >>> text, data = layer_report(lay, {}, mesh={}, spreads={}, used={"Y"}, chip=None, solve="Y")
    >>> print(text.splitlines()[1])
    forward:
    >>> data["solve_for"]
    '|Y|'
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import TYPE_CHECKING

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.units import format_bytes, format_number, format_seconds, json_value, pretty
from ..costs.costmodels import COMM_OVERLAPS
from ..i18n import keyed, sentence
from . import text

if TYPE_CHECKING:
    from ..machines.chips import Hardware
    from ..models.networked import Network
    from ..models.schemes import Layer

ENGLISH: dict[str, str] = {
    "cli.layer_head": "{scheme} MLP block, {mode}, {dtype}; bandwidth-only collectives over {fabric} ({bandwidth})",
    "cli.training": "training",
    "cli.serving": "serving",
    "cli.phase.forward": "forward",
    "cli.phase.backward": "backward",
    "cli.phase.step": "step",
    "cli.phase": "{phase}:",
    "cli.overlaps": ", overlaps steps {steps}",
    "cli.spread_legend": "{symbols}: how many physical mesh axes each logical axis spans (--spread); here {values}",
    "cli.overlaps_none": ", overlaps no matmul",
    "cli.bound_arrow": "  -> {bound}",
    "cli.memory_head": "memory per device ({bytes} B per parameter: weights {weights} + gradients {weights} + Adam "
    "{adam}, an fp32 master copy and m and v, as a mixed-precision trainer keeps them; symshard model counts {model} B, "
    "the training chapter's: weights {weights} + m and v {moments}, no master copy, gradients used as they are made):",
    "cli.memory_head_serving": "memory per device (serving: the weights alone, {bytes} B per parameter):",
    "cli.memory.weights": "weights",
    "cli.memory.gradients": "gradients",
    "cli.memory.optimizer": "optimizer",
    "cli.memory.activations": "activations",
    "cli.memory.transient": "transient",
    "cli.memory.peak": "peak",
    "cli.compute_bound_when": "compute-bound when: {condition}",
    "cli.with_numbers": "  with these numbers: {condition}",
    "cli.best_split": "best split (forward T_comms): |X| = {x}, |Y| = N/|X|",
    "cli.communication_bound_below": "communication-bound below B/N = {value}",
    "cli.best_divisor_split": "  for N = {n}: best divisor split |X| = {x}, |Y| = {y}",
    "cli.comm_overlap": "T_comms: {how}",
    "cli.layer_network": "through {chip}'s network on {mesh} (the collectives costed level by level, as 'symshard collective' costs them):",
    "cli.layer_crossing": "  over {axes}: {levels}; {level} binds, W_collective = {bandwidth} B/s",
    "cli.layer_level": "{fabric} {devices} at {bandwidth} B/s",
    "cli.layer_expected": "expected on this chip (measured rates): the matmuls {math}, the pass {time} (the larger of them and T_comms)",
    "cli.layer_one_domain": "{chip}: W = W_nvlink, inside one {node}-GPU NVLink domain; give --mesh with every axis's size to cost the collectives through the network's levels",
}
"""The English of this module's words by key; other languages are in the catalogue."""


def _say(key: str, language: str, **values: object) -> str:
    return keyed(ENGLISH, key, language, **values)


def _memory_head(lay, language: str) -> str:
    """The memory table's head: the bytes per parameter this layer counts, and beside them the count of
    ``symshard model`` (the training chapter's), each with where it comes from."""
    from ..algebra.dtypes import dtype_bytes
    from ..models.schemes import ADAM_BYTES_PER_PARAM, bytes_per_param
    from ..models.training import OPTIMIZERS

    weights = dtype_bytes(lay.program.dtype)
    if not lay.training:
        return _say("cli.memory_head_serving", language, bytes=format_number(weights))
    moments = OPTIMIZERS["adam"][0]
    return _say("cli.memory_head", language, bytes=format_number(bytes_per_param(lay.program.dtype)),
                weights=format_number(weights), adam=ADAM_BYTES_PER_PARAM, model=format_number(weights + moments),
                moments=moments)  # fmt: skip


def layer_report(
    lay: Layer,
    values: Mapping[sympy.Symbol, object],
    *,
    mesh: Mapping[str, int],
    spreads: Mapping[str, int],
    used: Set[str],
    chip: Hardware | None,
    solve: str,
    language: str = "en",
    network: Network | None = None,
) -> tuple[str, dict]:
    """The text and the JSON-ready data of ``lay`` with ``values`` substituted (the mesh's axes, the
    sizes, the chip's constants, the spreads of the ``used`` axes); ``solve`` names the symbol the
    compute-bound condition is solved for. With ``network`` (a GPU mesh), each collective's time, each
    pass's ``T_comms`` and the numeric condition come through the network's levels, and the level that
    binds each set of axes is named."""
    from ..algebra.dtypes import dtype_bytes
    from ..algebra.symbols import axis as axis_symbol
    from ..algebra.symbols import dim as dim_symbol
    from ..models.schemes import ADAM_BYTES_PER_PARAM, SCHEMES, bytes_per_param, fsdp_tp_split

    spread_values = spreads
    x, _ = lay._symbol(solve)
    phases = {}
    lang = language
    mode = _say("cli.training" if lay.training else "cli.serving", lang)
    lines = [
        _say(
            "cli.layer_head",
            lang,
            scheme=lay.scheme,
            mode=mode,
            dtype=lay.program.dtype,
            fabric=lay.fabric,
            bandwidth=pretty(lay.W),
        )
    ]

    def num(expr, fmt):
        return text.equation(expr, as_expr(expr).xreplace(values), fmt)

    network_data: dict | None = None
    if network is not None:
        lines.append(_say("cli.layer_network", lang, chip=network.hardware.label, mesh=str(network.mesh)))
        network_data = {"hardware": network.hardware.name, "mesh": str(network.mesh), "model": network.model,
                        "inside_one_domain": network.inside_one_domain, "crossings": []}  # fmt: skip
        for c in network.crossings:
            levels = (", " if lang == "en" else "、").join(_say("cli.layer_level", lang, fabric=lv.fabric.value, devices=lv.devices,
                                    bandwidth=format_number(lv.bandwidth)) for lv in c.levels)  # fmt: skip
            lines.append(_say("cli.layer_crossing", lang, axes=", ".join(c.axes), levels=levels,
                              level=sentence(c.binding.fabric.describe, lang), bandwidth=format_number(c.bandwidth)))  # fmt: skip
            network_data["crossings"].append({
                "axes": list(c.axes), "binding": c.binding.fabric.value, "bandwidth": json_value(c.bandwidth),
                "levels": [{"fabric": lv.fabric.value, "devices": json_value(lv.devices),
                            "bandwidth": json_value(lv.bandwidth)} for lv in c.levels]})  # fmt: skip
    elif chip is not None and lay.fabric == "nvlink" and chip.node_size is not None:
        lines.append(_say("cli.layer_one_domain", lang, chip=chip.label, node=chip.node_size))

    def step_time(st):
        return st.time if network is None else network.step_time(st)

    def comm_time(ph):
        return lay.comm_time(ph) if network is None else network.comm_time(lay.program, ph)

    for ph in lay.phases:
        colls = []
        lines.append(_say("cli.phase", lang, phase=_say(f"cli.phase.{ph}", lang)))
        for st in lay.program.select(ph):
            number = f"{st.index + 1:>2}."  # steps are numbered from 1 across both phases; "overlaps" uses them
            if st.is_matmul:
                lines.append(f"  {number} {st.op}   FLOPs {num(st.flops, format_number)}")
                continue
            if not st.is_collective:
                continue
            over = [m.index + 1 for m in lay.program.overlaps(st)]
            steps = (", " if lang == "en" else "、").join(map(str, over))
            t = step_time(st)
            lines.append(
                f"  {number} {st.op}   V {num(st.bytes, format_bytes)}, T {num(t, format_seconds)}"
                + (_say("cli.overlaps", lang, steps=steps) if over else _say("cli.overlaps_none", lang))
            )
            colls.append({"step": st.index + 1, "collective": str(st.op), "bytes": json_value(st.bytes.xreplace(values)),
                          "bytes_formula": pretty(st.bytes), "time_s": json_value(as_expr(t).xreplace(values)),
                          "time_formula": pretty(t), "overlaps": over})  # fmt: skip
        m, c = lay.math_time(ph), comm_time(ph)
        mv, cv = as_expr(m).xreplace(values), as_expr(c).xreplace(values)
        bound = None
        if mv.is_number and cv.is_number:
            bound = "compute" if cv <= mv else "communication"
        lines.append(f"      T_math   {num(m, format_seconds)}")
        arrow = _say("cli.bound_arrow", lang, bound=text.bound(bound, lang)) if bound else ""
        lines.append(f"      T_comms  {num(c, format_seconds)}" + arrow)
        expected_math = lay.expected_math_time(ph, chip, values)
        expected = lay.expected_time(ph, chip, values, comm=c)
        if expected_math is not None and expected is not None:  # a calibrated chip: beside the bound, what it attains
            lines.append("      " + _say("cli.layer_expected", lang, math=format_seconds(expected_math),
                                         time=format_seconds(expected)))  # fmt: skip
        phases[ph] = {
            "flops_per_device": json_value(lay.flops(ph).xreplace(values)),
            "flops_formula": pretty(lay.flops(ph)),
            "math_time_s": json_value(mv),
            "comm_time_s": json_value(cv),
            "comm_bytes": json_value(lay.comm_bytes(ph).xreplace(values)),
            "math_formula": pretty(m),
            "comm_formula": pretty(c),
            "bound": bound,
            "collectives": colls,
        }
        if expected_math is not None and expected is not None:  # the bound's keys stay; these stand beside them
            phases[ph]["expected_math_time_s"] = json_value(expected_math)
            phases[ph]["expected_time_s"] = json_value(expected)
    mem = lay.memory
    kinds = ("weights", "gradients", "optimizer", "activations", "transient", "peak")
    lines.append(_memory_head(lay, lang))
    for k in kinds:
        lines.append(f"  {text.ljust(_say(f'cli.memory.{k}', lang), 11)} {num(getattr(mem, k), format_bytes)}")
    cond = lay.condition(solve)
    hidden = {x, dim_symbol("B")} if x.name in ("B_chip", "B_pod") else {x}
    through = cond if network is None else lay.condition(solve, network=network)
    numeric = through.subs({k: v for k, v in values.items() if k not in hidden}, x) if values else None
    lines.append(_say("cli.compute_bound_when", lang, condition=text.condition(cond.text(), lang)))
    if numeric is not None and numeric.text() != cond.text():
        lines.append(_say("cli.with_numbers", lang, condition=text.condition(numeric.text(), lang)))
    data: dict = {
        "scheme": lay.scheme,
        "training": lay.training,
        "fabric": lay.fabric,
        "phases": phases,
        "memory_bytes": {k: json_value(as_expr(getattr(mem, k)).xreplace(values)) for k in kinds},
        "memory_formulas": {k: pretty(getattr(mem, k)) for k in kinds},
        "optimizer_bytes_per_param": ADAM_BYTES_PER_PARAM if lay.training else 0,
        "bytes_per_param": json_value(bytes_per_param(lay.program.dtype))
        if lay.training
        else json_value(dtype_bytes(lay.program.dtype)),
        "total_flops": pretty(lay.total_flops()),
        "solve_for": str(x),
        "condition": {"text": cond.text(), "latex": cond.latex(), "numeric": numeric.text() if numeric else None},
        "schemes": list(SCHEMES),
        "network": network_data,
    }
    lines.append(_say("cli.comm_overlap", lang, how=sentence(COMM_OVERLAPS[lay.comm_overlap], lang)))
    data["comm_overlap"] = lay.comm_overlap
    spread_symbols = sorted(f"M_{a}" for a in used)
    shown = ", ".join(f"{m} = {spread_values.get(m[2:], 1)}" for m in spread_symbols)
    lines.append(_say("cli.spread_legend", lang, symbols=", ".join(spread_symbols), values=shown))
    if lay.scheme == "fsdp+tp":
        split = fsdp_tp_split(hardware=chip, comm_overlap=lay.comm_overlap)
        best = split.x.xreplace({k: v for k, v in values.items() if k not in (axis_symbol("X"), axis_symbol("Y"))})
        lines.append(_say("cli.best_split", lang, x=pretty(split.x)))
        lines.append(_say("cli.communication_bound_below", lang, value=pretty(split.min_batch_per_chip)))
        data["split"] = {"x_formula": pretty(split.x), "min_batch_per_chip_formula": pretty(split.min_batch_per_chip),
                         "x": json_value(best) if best.free_symbols - {sympy.Symbol("N", positive=True, integer=True)}
                         == set() and "X" in mesh and "Y" in mesh else None}  # fmt: skip
        if "X" in mesh and "Y" in mesh and chip is not None:
            n = mesh["X"] * mesh["Y"]
            pick = split.best_integer(n, {**values, sympy.Symbol("N", positive=True, integer=True): n})
            if pick is not None:
                lines.append(_say("cli.best_divisor_split", lang, n=n, x=pick[0], y=pick[1]))
                data["split"]["best_integer"] = {"X": pick[0], "Y": pick[1], "comm_time_s": json_value(pick[2])}
    return "\n".join(lines), data

"""What ``symshard shard`` prints: where an array's pieces sit, as a table of formulas and numbers.

Each row shows the symbolic formula (from the placement on a symbolic mesh) and, when sizes are
given, its number with units; the JSON carries the numbers and the formulas as LaTeX.

Examples:
    >>> from symshard.machines.mesh import Mesh
    >>> from symshard.notation.parser import parse_array
    >>> from symshard.costs.placement import place
    >>> a, mesh = parse_array("A[I_X, J]"), Mesh("X=4")
    >>> text, data = placement_report(place(a, mesh, "I=64,J=8"), place(a, mesh.symbolic(), None), None)
    >>> print(text.splitlines()[1])
    local shape       [I/|X|, J] = [16, 8]
    >>> data["bytes_per_device"]
    256
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..algebra.symbols import latex
from ..algebra.units import format_bytes, format_number, format_seconds, json_value, pretty
from ..i18n import keyed
from . import text

if TYPE_CHECKING:
    from ..costs.placement import Placement
    from ..machines.chips import Hardware

ENGLISH: dict[str, str] = {
    "cli.shard_head": "{array} on mesh {mesh}, {dtype}",
    "cli.local_shape": "local shape",
    "cli.bytes_per_device": "bytes per device",
    "cli.total_bytes": "total bytes",
    "cli.over_devices": " over {devices} {devices:device|devices}",
    "cli.copies": "copies",
    "cli.partial_sums": "partial sums",
    "cli.hbm_time": "HBM read time",
    "cli.hbm_on": " on {chip} (W_hbm = {bandwidth} B/s)",
    "cli.hbm_no_chip": "  (name a chip with --hw for seconds)",
}
"""The English of this module's words by key; other languages are in the catalogue."""

_WORDS = {**text.ENGLISH, **ENGLISH}


def _say(key: str, language: str, **values: object) -> str:
    return keyed(_WORDS, key, language, **values)


def placement_report(p: Placement, s: Placement, chip: Hardware | None, language: str = "en") -> tuple[str, dict]:
    """The text and the JSON-ready data of placement ``p``, beside ``s``, the same array placed on the
    symbolic mesh (its formulas); with ``chip``, the time to read it from HBM."""
    mesh = p.mesh
    hbm = p.hbm_time(chip) if chip is not None and chip.hbm_bandwidth is not None else None
    data = {
        "array": str(p.array),
        "mesh": str(mesh),
        "dtype": p.dtype,
        "global_shape": [json_value(x) for x in p.global_shape],
        "local_shape": [json_value(x) for x in p.local_shape],
        "bytes_per_device": json_value(p.bytes_per_device),
        "total_bytes": json_value(p.total_bytes),
        "copies": json_value(p.copies),
        "partial_sums": json_value(p.partial_sums),
        "devices": json_value(mesh.devices),
        "hbm_time_s": json_value(hbm) if hbm is not None else None,
        "hardware": chip.name if chip else None,
        "formulas": {
            "local_shape": [latex(x) for x in s.local_shape],
            "bytes_per_device": latex(s.bytes_per_device),
            "total_bytes": latex(s.total_bytes),
            "copies": latex(s.copies),
            "hbm_time": latex(s.hbm_time()),
        },
    }
    lang = language
    shape_sym = "[" + ", ".join(pretty(x) for x in s.local_shape) + "]"
    shape_num = "[" + ", ".join(pretty(x) for x in p.local_shape) + "]"
    rows = [
        (_say("cli.local_shape", lang), shape_sym if shape_sym == shape_num else f"{shape_sym} = {shape_num}"),
        (_say("cli.bytes_per_device", lang), text.equation(s.bytes_per_device, p.bytes_per_device, format_bytes)),
        (
            _say("cli.total_bytes", lang),
            text.equation(s.total_bytes, p.total_bytes, format_bytes)
            + _say("cli.over_devices", lang, devices=pretty(mesh.devices)),
        ),
        (_say("cli.copies", lang), text.equation(s.copies, p.copies, format_number)),
    ]
    if p.array.unreduced:
        rows.append((_say("cli.partial_sums", lang), text.equation(s.partial_sums, p.partial_sums, format_number)))
    if chip is not None and hbm is not None:
        rows.append(
            (
                _say("cli.hbm_time", lang),
                text.equation(s.hbm_time(), hbm, format_seconds)
                + _say("cli.hbm_on", lang, chip=chip.label, bandwidth=format_number(chip.hbm_bandwidth)),
            )
        )
    else:
        rows.append((_say("cli.hbm_time", lang), pretty(p.hbm_time()) + _say("cli.hbm_no_chip", lang)))
    head = _say("cli.shard_head", lang, array=p.array, mesh=mesh or _say("cli.one_device", lang), dtype=p.dtype)
    return head + "\n" + text.table(rows), data

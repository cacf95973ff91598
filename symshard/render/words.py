"""The words the figures draw, by key, so that a figure is drawn in the language it is asked for.

A figure's numbers, formulas, notation, strategy names and chip labels are the same in every
language; its titles, axis labels, legends, notes and the description for screen readers are
words, chosen here by language when the figure is drawn (the English below; other languages in
the catalogue, ``symshard/i18n/<language>/words.po``, under the same keys).

Examples:
    >>> words("figure.log_scale", "en", symbol="B")
    'B (log scale)'
    >>> words("figure.log_scale", "zh", symbol="B")
    'B（对数坐标）'
    >>> clauses(["a", "b"], "en"), clauses(["a", "b"], "zh")
    ('a; b', 'a；b')
    >>> commas(["a", "b"], "en"), commas(["a", "b"], "zh")
    ('a, b', 'a，b')
"""

from __future__ import annotations

from collections.abc import Sequence

from ..i18n import keyed
from ..messages import Clauses

__all__ = ["ENGLISH", "clauses", "commas", "words"]

ENGLISH: dict[str, str] = {
    # shared by the regime map and the regime plot
    "figure.comma": ", ",
    "figure.given_constants": "the given constants",
    "figure.log_scale": "{symbol} (log scale)",
    "figure.time_max": "time = max(T_math, T_comms)",
    "figure.time_sum": "time = T_math + T_comms",
    "figure.regime.compute": "compute",
    "figure.regime.communication": "communication",
    # the regime map (render/regions.py)
    "figure.map.title": "Fastest strategy by {x} and {y}: {matmul}",
    "figure.map.subtitle": "{hw}, mesh {mesh}, {dtype}; {rule}, collectives bandwidth-bound",
    "figure.map.subtitle_sizes": "{hw}, mesh {mesh}, {sizes}, {dtype}; {rule}, collectives bandwidth-bound",
    "figure.map.share": "fastest on {share:.0%} of the map",
    "figure.map.nowhere": "fastest nowhere in this range",
    "figure.map.on_chip": "; on {hw}: {numeric}",
    "figure.map.boundaries": "each boundary is where the two strategies' times are equal, solved as compare solves it;",
    "figure.map.ties": "where strategies take exactly the same time, the map shows the lower number",
    "figure.map.meet": "strategies {a} and {b} meet where {where}",
    "figure.map.alt_share": "strategy {index} ({name}) is fastest on {share:.0%} of it",
    "figure.map.alt": (
        "Map of the fastest of {count} {count:strategy|strategies} for {matmul} over {x} from {x_lo} to {x_hi} and {y} from {y_lo} "
        "to {y_hi} on {hw}, log axes; {facts}."
    ),
    # the regime plot (render/plot.py)
    "figure.plot.title": "Time against {dim}: {matmul}",
    "figure.plot.subtitle": "{hw}, mesh {mesh}, {sizes}, {dtype}; {rule}, {model} collective model",
    "figure.plot.waits": "fastest waits on communication",
    "figure.plot.time_axis": "time (log scale)",
    "figure.plot.bound_throughout": "{regime}-bound throughout",
    "figure.plot.bound_below": "{regime}-bound below {at}",
    "figure.plot.bound_from": "{regime}-bound from {value}",
    "figure.plot.bound_from_about": "{regime}-bound from ≈ {value}",
    "figure.plot.dashed": "dashed: each strategy's compute time T_math alone; where a solid line runs above its dashed one,",
    "figure.plot.circles": "the strategy waits on communication; circles mark where a strategy changes regime",
    "figure.plot.left_out": "{count} slower {count:strategy|strategies} not drawn",
    "figure.plot.changes": "{at}: the fastest strategy changes from {before} to {after} ({regime}-bound there)",
    "figure.plot.turns": "{at}: the fastest strategy ({after}) turns {regime}-bound",
    "figure.plot.everywhere": "everywhere in the range",
    "figure.plot.below": "below {at}",
    "figure.plot.above": "above {at}",
    "figure.plot.between": "from {start} to {end}",
    "figure.plot.between_about": "from {start} to ≈ {end}",
    "figure.plot.strategy": "strategy {index}",
    "figure.plot.fastest": "{head} ({name}) is fastest {where}",
    "figure.plot.alt_turns": "the fastest turns {regime}-bound at {at}",
    "figure.plot.alt": (
        "Log-log plot of the time of {count} {count:strategy|strategies} for {matmul} against {dim} from {lo} to {hi} on {hw}; {facts}."
    ),
    # layouts (render/layouts.py)
    "figure.and": "{rest} and {last}",
    "figure.made_up": "no mesh was given: each mesh axis is drawn with {size} {size:device|devices}",
    "figure.layout.title": "{array} on mesh {mesh}",
    "figure.layout.array_heading": "the array {array}",
    "figure.layout.mesh_heading": "the mesh {mesh}: what each device holds",
    "figure.layout.alt": "{array} on {mesh}: {holding}.",
    "figure.layout.partial": "partial",
    "figure.layout.all": "all",
    "figure.layout.mesh_line": "a mesh of {devices} {devices:device|devices} ({mesh})",
    "figure.layout.mesh_a": "a {shape} mesh ({mesh})",
    "figure.layout.mesh_an": "an {shape} mesh ({mesh})",
    "figure.layout.whole": "the array, of shape {shape}, is not cut",
    "figure.layout.whole_held": "the array, of shape {shape}, is not cut: every device holds all of it",
    "figure.layout.cut": "the array is cut into {count} {count:block|blocks} of shape {shape}, {along}",
    "figure.layout.along": "{count} along {dim} (over {axes})",
    "figure.layout.copies": "each block is held by {copies} {copies:device|devices} (copies along {axes})",
    "figure.layout.different": "every device holds a different block",
    "figure.layout.partial_sums": "every device holds only a partial sum, and the {count} {count:partial|partials} along {axes} add up to the values",
    "figure.layout.partial_sums_block": (
        "every device holds only a partial sum of its block, and the {count} {count:partial|partials} along {axes} add up to the values"
    ),
    "figure.layout.global": "global shape {whole}; each device holds a block of shape {local}",
    "figure.layout.stored": "the same colour on several devices: each block is stored {copies} {copies:time|times}",
    "figure.layout.hatched": "hatched: a partial sum; adding the {count} {count:partial|partials} along {axes} gives the block",
    "figure.layout.unlabelled": "more than {limit} {limit:device|devices}: each device shows its block's colour, without the label",
    # collectives (render/collectives.py)
    "figure.collective.all_gather": "every device along {axes} receives the blocks the others hold; {dims} is whole again",
    "figure.collective.reduce_scatter": "the partial sums along {axes} are added, and each device keeps one {target} slice",
    "figure.collective.all_reduce": "the partial sums along {axes} are added, and every device keeps the whole sum",
    "figure.collective.all_to_all": (
        "the split over {axes} moves from {source} to {target}: each device sends one piece to every other"
    ),
    "figure.collective.all_to_all_fused": "the splits move at once ({moves}): each device sends one piece to every "
    "other along {axes}",
    "figure.collective.permute": "each device passes its block to the next device along {axes} (the last to the first)",
    "figure.collective.dynamic_slice": "each device keeps one slice of what it holds, along {axes}: no data moves",
    "figure.collective.other": "{op} runs along {axes}",
    "figure.collective.before": "before: {array}",
    "figure.collective.mesh_before": "mesh {mesh}: what each device holds before",
    "figure.collective.after": "after: {array}",
    "figure.collective.mesh_after": "what each device holds after",
    "figure.collective.colours": (
        "the same colour is the same piece of the array, before and after; "
        "a device holding several pieces shows each in its place"
    ),
    "figure.collective.per_device": "per device: {before} → {after}",
    "figure.collective.hatched": "hatched: a partial sum, which must be added to the partials along its unreduced axes",
    "figure.collective.unlabelled": (
        "more than {limit} {limit:device|devices}: each device shows the colours of what it holds, without labels"
    ),
    "figure.collective.alt": "{op} on {mesh}: {what}. Before, {operand}: {before}. After, {output}: {after}.",
}
"""The English of every word a figure draws, by key (the key is the catalogue's ``msgctxt``)."""


def words(key: str, language: str, **values: object) -> str:
    """The figure's words of ``key`` in ``language``, filled with ``values`` (numbers and notation)."""
    return keyed(ENGLISH, key, language, **values)


def clauses(items: Sequence[str], language: str) -> str:
    """Facts already in ``language``, joined as that language joins clauses (``; `` in English)."""
    if language == "en":
        return "; ".join(items)
    from ..i18n.catalog import render

    return render(Clauses(items), language)


def commas(items: Sequence[str], language: str) -> str:
    """Phrases already in ``language``, joined by that language's comma between phrases (``, `` in
    English; Chinese joins phrases with ``，``, not the ``、`` of a list of names)."""
    return words("figure.comma", language).join(items)

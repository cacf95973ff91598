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
        "Map of the fastest of {count} strategies for {matmul} over {x} from {x_lo} to {x_hi} and {y} from {y_lo} "
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
    "figure.plot.left_out_one": "{count} slower strategy not drawn",
    "figure.plot.left_out": "{count} slower strategies not drawn",
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
        "Log-log plot of the time of {count} strategies for {matmul} against {dim} from {lo} to {hi} on {hw}; {facts}."
    ),
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

"""The presentation layer: symshard's results as text, JSON-ready data and notebook HTML.

The algebra returns SymPy values and keyed messages; the words, numbers with units and markup around
them are chosen here, once, for every place that shows a result: the command line prints the text,
``--json`` and the docs site use the data, and notebooks show the HTML (registered by
:mod:`symshard.notebook`). One module per kind of result:

- :mod:`~symshard.report.plans`: plans, comparisons and sharding searches (text and data);
- :mod:`~symshard.report.models`: whole models, training runs and serving (text, data and HTML);
- :mod:`~symshard.report.html`: plans, strategies, comparisons, placements, transfers and problems as
  notebook HTML, and the LaTeX of costs and conditions;
- :mod:`~symshard.report.placements`, :mod:`~symshard.report.collectives`, :mod:`~symshard.report.chips`,
  :mod:`~symshard.report.transfers`, :mod:`~symshard.report.layers`, :mod:`~symshard.report.calibrations`,
  :mod:`~symshard.report.verifications`, :mod:`~symshard.report.book`:
  what the commands of the same names print (text and data);
- :mod:`~symshard.report.text`: the tables, formula-and-number pairs and shared words they are made of.

Each name below loads its module on first use, so that showing a collective's cost in a notebook does
not import the planner.

Examples:
    >>> from symshard.report import plan_text
    >>> from symshard.planning.planner import plan
    >>> print(plan_text(plan("A[I, J_X] · B[J_X, K] -> C[I, K]"), top=1).splitlines()[0])
    A[I, J_X] · B[J_X, K] -> C[I, K]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .book import book_report
    from .calibrations import calibration_report
    from .chips import chip_report, chips_report
    from .collectives import chip_summary, collective_report, collective_text
    from .html import (
        comparison_html,
        condition_latex,
        cost_latex,
        expr_latex,
        gather_html,
        host_transfer_html,
        placement_html,
        plan_html,
        problem_html,
        route_html,
        slice_totals_html,
        strategy_html,
    )
    from .layers import layer_report
    from .model_views import memory_html, model_html, serving_html, serving_text, training_html, training_text
    from .models import model_data, model_report, model_text, presets_report, serving_report, training_report
    from .placements import placement_report
    from .plans import (
        compare_data,
        compare_text,
        map_hint,
        pairs_hint,
        plan_data,
        plan_text,
        regime_map_line,
        search_data,
        search_text,
        strategy_data,
    )
    from .transfers import host_report, ici_report, slice_totals_report
    from .verifications import verification_text

# Each public name (the names in __all__) and the module that defines it.
_MODULES: dict[str, str] = {
    **dict.fromkeys(("book_report",), ".book"),
    **dict.fromkeys(("verification_text",), ".verifications"),
    **dict.fromkeys(("calibration_report",), ".calibrations"),
    **dict.fromkeys(("chip_report", "chips_report"), ".chips"),
    **dict.fromkeys(("chip_summary", "collective_report", "collective_text"), ".collectives"),
    **dict.fromkeys(("layer_report",), ".layers"),
    **dict.fromkeys(("placement_report",), ".placements"),
    **dict.fromkeys(("host_report", "ici_report", "slice_totals_report"), ".transfers"),
    **dict.fromkeys(
        (
            "comparison_html",
            "condition_latex",
            "cost_latex",
            "expr_latex",
            "gather_html",
            "host_transfer_html",
            "placement_html",
            "plan_html",
            "problem_html",
            "route_html",
            "slice_totals_html",
            "strategy_html",
        ),
        ".html",
    ),
    **dict.fromkeys(
        ("model_data", "model_report", "model_text", "presets_report", "serving_report", "training_report"), ".models"
    ),
    **dict.fromkeys(
        ("memory_html", "model_html", "serving_html", "serving_text", "training_html", "training_text"), ".model_views"
    ),
    **dict.fromkeys(
        (
            "compare_data",
            "compare_text",
            "map_hint",
            "pairs_hint",
            "plan_data",
            "plan_text",
            "regime_map_line",
            "search_data",
            "search_text",
            "strategy_data",
        ),
        ".plans",
    ),
}

__all__ = [
    "book_report",
    "calibration_report",
    "chip_report",
    "chip_summary",
    "chips_report",
    "collective_report",
    "collective_text",
    "compare_data",
    "compare_text",
    "comparison_html",
    "condition_latex",
    "cost_latex",
    "expr_latex",
    "gather_html",
    "host_report",
    "host_transfer_html",
    "ici_report",
    "layer_report",
    "map_hint",
    "memory_html",
    "model_data",
    "model_html",
    "model_report",
    "model_text",
    "pairs_hint",
    "placement_html",
    "placement_report",
    "plan_data",
    "plan_html",
    "plan_text",
    "presets_report",
    "problem_html",
    "regime_map_line",
    "route_html",
    "search_data",
    "search_text",
    "serving_html",
    "serving_report",
    "serving_text",
    "slice_totals_html",
    "slice_totals_report",
    "strategy_data",
    "strategy_html",
    "training_html",
    "training_report",
    "training_text",
    "verification_text",
]


def __getattr__(name: str) -> object:
    if name in _MODULES:
        value = getattr(importlib.import_module(_MODULES[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symshard.report' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

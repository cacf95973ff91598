"""symshard: the algebra of sharded matrix multiplication, exact and symbolic.

Parse the book's notation, ask what each device holds, and cost collectives
symbolically or on a named chip::

    >>> import symshard as ss
    >>> a = ss.parse("A[I_XY, J]")
    >>> ss.place(a, "X=8,Y=2", "I=1024,J=4096", dtype="fp32").bytes_per_device
    1048576
    >>> ss.parse("AllGather_X(A[I_X, J])").cost().time
    Max(T_hop*|X|/2, 2*I*J/W_ici)

The names below are the public surface, with ``symshard.symbols`` (every symbol, made once). The
layers beneath, from the bottom, hold the rest: ``algebra``, ``notation``, ``machines``, ``costs``,
``planning``, ``models``, then the presentation (``i18n``, ``report``, ``render``), ``problems``,
``site`` and ``cli``; ``jax`` is the optional bridge to JAX and XLA.
"""

import importlib

from .algebra import symbols as symbols  # ss.symbols.W_ici, ss.symbols.dim("B"): every symbol, made once
from .costs.collective_cost import CollectiveCost
from .costs.collectives import AllGather, AllReduce, AllToAll, CollectivePermute, ReduceScatter
from .costs.placement import Placement, place
from .errors import SymshardError
from .machines.chips import Hardware
from .machines.mesh import Mesh
from .machines.presets import hardware
from .notation.arrays import Array, Dim
from .notation.einsums import Matmul, matmul
from .read import parse

# The planner, its searches, the whole-model modules and the explainer (with its Chinese
# catalogue) load on first use, so that `import symshard` stays close to the cost of `import sympy` (see
# bench/bench_import.py and tests/presentation/test_i18n_explain.py).
_LAZY = {
    "Comparison": ".planning.crossover_results",
    "Model": ".models.transformer",
    "Plan": ".planning.strategies",
    "Program": ".planning.program",
    "Strategy": ".planning.strategies",
    "best_sharding": ".planning.search",
    "compare": ".planning.crossovers",
    "explain": ".i18n.explain",
    "layer": ".models.schemes",
    "model": ".models.transformer",
    "plan": ".planning.planner",
    "regime_map": ".render.regions",
    "roofline": ".models.parallelism",
    "serve": ".models.inference",
    "train": ".models.training",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symshard' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0"


def _register_notebook_display() -> None:
    # In IPython or Jupyter, results show as tables and formulas (symshard.notebook registers the
    # formatters by type name, so nothing of the presentation loads until something is shown).
    import sys

    if "IPython" in sys.modules:
        from .notebook import register

        register()


_register_notebook_display()


_TEXT_REPORTS = (
    # print() of these shows the report the command line prints: (the class's module, its name, the report)
    ("symshard.planning.strategies", "Plan", "plan_text"),
    ("symshard.planning.crossover_results", "Comparison", "compare_text"),
    ("symshard.planning.search_results", "SearchResult", "search_text"),
    ("symshard.models.training", "Training", "training_text"),
    ("symshard.models.inference", "Serving", "serving_text"),
    ("symshard.jax.results", "Verification", "verification_text"),
)


def _register_text_reports() -> None:
    # symshard.shown holds them by type name, so no result imports its presentation; the presentation
    # loads on the first print(), as a notebook's formatters load on the first display
    from .shown import register_report

    def report(function: str):
        def text(obj: object) -> str:
            from .notebook import text

            return text(function, obj)

        return text

    def problem(obj: object) -> str:
        from .problems.texts import problem_text

        return problem_text(obj)  # type: ignore[arg-type]  # a problem keeps the language it was written in

    for module, name, function in _TEXT_REPORTS:
        register_report(module, name, report(function))
    register_report("symshard.problems.problem", "Problem", problem)


_register_text_reports()

__all__ = [
    "AllGather",
    "AllReduce",
    "AllToAll",
    "Array",
    "CollectiveCost",
    "CollectivePermute",
    "Comparison",
    "Dim",
    "Hardware",
    "Matmul",
    "Mesh",
    "Model",
    "Placement",
    "Plan",
    "Program",
    "ReduceScatter",
    "Strategy",
    "SymshardError",
    "best_sharding",
    "compare",
    "explain",
    "hardware",
    "layer",
    "matmul",
    "model",
    "parse",
    "place",
    "plan",
    "regime_map",
    "roofline",
    "serve",
    "train",
]

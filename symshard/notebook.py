"""Notebook display: symshard's results as tables and formulas in Jupyter and IPython.

IPython chooses how to show an object through formatters, one per MIME type, which can be
registered for a class by its module and name without importing the class. This module registers
symshard's (the HTML of results and the LaTeX of costs and conditions from :mod:`symshard.report`,
the regime map of a comparison, and bare SymPy expressions with symshard's symbols written as
symshard writes them, ``T_{\\text{hop}}`` and ``\\lvert X \\rvert`` rather than ``T_{hop}`` and ``|X|``) that way, so the algebra defines no display
methods and never imports its presentation. ``import symshard`` registers them when IPython is
already running; otherwise ``%load_ext symshard.notebook`` does. Each formatter is a trampoline
that imports its presentation module on the first call, so registering them costs nothing.

The tables speak the language chosen when they are shown, not when symshard was imported:
``symshard.notebook.use_language("zh")`` for this session, else ``$SYMSHARD_LANG`` as it is at that
moment (``%env SYMSHARD_LANG=zh`` works too), else English. Numbers, units, formulas and notation are
the same in every language. A problem keeps the language it was written in (``Problem.language``).

Examples:
    >>> from symshard.notebook import FORMATTERS, show
    >>> sorted({mime for mime, *_ in FORMATTERS})
    ['image/svg+xml', 'text/html', 'text/latex']
    >>> import symshard as ss
    >>> print(show("text/latex", ss.parse("AllGather_X(A[I_X, J])").cost()))
    $T = \\max\\left(\\frac{T_{\\text{hop}} \\lvert X \\rvert}{2}, \\frac{2 I J}{W_{\\text{ici}}}\\right)$
    >>> use_language("zh")
    >>> "每设备字节数" in show("text/html", ss.place(ss.parse("A[I_X, J]"), "X=4", "I=64,J=8"))
    True
    >>> use_language(None)  # back to $SYMSHARD_LANG, else English
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FORMATTERS", "language", "load_ipython_extension", "register", "show", "text", "use_language"]

FORMATTERS: tuple[tuple[str, str, str, str], ...] = (
    # (MIME type, the class's module, the class's name, the function that shows it)
    ("text/html", "symshard.planning.strategies", "Plan", "plan_html"),
    ("text/html", "symshard.planning.strategies", "Strategy", "strategy_html"),
    ("text/html", "symshard.planning.crossover_results", "Comparison", "comparison_html"),
    ("image/svg+xml", "symshard.planning.crossover_results", "Comparison", "comparison_svg"),
    ("text/html", "symshard.costs.placement", "Placement", "placement_html"),
    ("text/html", "symshard.problems.problem", "Problem", "problem_html"),
    ("text/html", "symshard.models.transfers", "Route", "route_html"),
    ("text/html", "symshard.models.transfers", "Gather", "gather_html"),
    ("text/html", "symshard.models.transfers", "HostTransfer", "host_transfer_html"),
    ("text/html", "symshard.models.transfers", "SliceTotals", "slice_totals_html"),
    ("text/html", "symshard.models.transformer", "Model", "model_html"),
    ("text/html", "symshard.models.training", "TrainingMemory", "memory_html"),
    ("text/html", "symshard.models.training", "Training", "training_html"),
    ("text/html", "symshard.models.inference", "Serving", "serving_html"),
    ("text/latex", "symshard.costs.collective_cost", "CollectiveCost", "cost_latex"),
    ("text/latex", "symshard.algebra.conditions", "Condition", "condition_latex"),
    ("text/latex", "symshard.algebra.conditions", "Clauses", "condition_latex"),
    # a bare SymPy expression of a cost (cost.time, strategy.time) in the same style: only symshard's
    # constants and axes print differently from SymPy's own display
    ("text/latex", "sympy.core.basic", "Basic", "expr_latex"),
)
"""Every formatter :func:`register` installs."""


# Functions whose object says which language it is in (a problem is written in one): they are not given
# the session's.
_OWN_LANGUAGE = frozenset({"problem_html"})

_chosen: str | None = None  # use_language's choice; None: $SYMSHARD_LANG at the moment a table is shown


def use_language(language: str | None) -> None:
    """Show symshard's tables in ``language`` (``'en'``, ``'zh'``) from now on in this session; None
    follows ``$SYMSHARD_LANG`` again.

    Raises:
        UsageError: a language symshard does not speak.
    """
    global _chosen
    if language is not None:
        from .i18n.languages import check_language

        check_language(language)
    _chosen = language


def language() -> str:
    """The language the tables are shown in now: :func:`use_language`'s, else ``$SYMSHARD_LANG``, else English.

    Raises:
        UsageError: ``$SYMSHARD_LANG`` names a language symshard does not speak.
    """
    if _chosen is not None:
        return _chosen
    from .i18n import language_from

    return language_from(None)


def _function(name: str) -> Callable[..., str | None]:
    """The presentation function ``name``, imported when it is first needed."""
    if name == "comparison_svg":
        return _comparison_svg
    from . import report  # each name loads only its own module of the package

    return getattr(report, name)


def _comparison_svg(comparison: Any) -> str | None:
    # the regime map under a comparison, in the session's language; one that cannot be drawn (one
    # strategy, one symbol) shows as text
    from .render.regions import regime_map

    words = language()
    try:
        return regime_map(comparison, language=words).svg
    except Exception:
        return None


def show(mime: str, obj: object) -> str | None:
    """What the notebook shows for ``obj`` as ``mime`` (None when symshard has no such view of it); a
    table's words in the language :func:`language` gives now.

    Raises:
        KeyError: a MIME type symshard registers nothing for.
    """
    known = {m for m, *_ in FORMATTERS}
    if mime not in known:
        raise KeyError(mime)
    classes = {(c.__module__, c.__name__) for c in type(obj).__mro__}
    for m, module, cls, function in FORMATTERS:
        if m == mime and (module, cls) in classes:
            return _shown(m, function, obj)
    return None


def _shown(mime: str, function: str, obj: Any) -> str | None:
    """``obj`` shown by ``function``; a table in the language chosen now (LaTeX has no words; the regime
    map under a comparison asks for the language itself)."""
    if mime == "text/html" and function not in _OWN_LANGUAGE:
        return _function(function)(obj, language=language())
    return _function(function)(obj)


def _trampoline(mime: str, function: str) -> Callable[[Any], str | None]:
    def shown(obj: Any) -> str | None:
        return _shown(mime, function, obj)

    shown.__name__ = function
    return shown


def register(shell: Any | None = None) -> bool:
    """Install symshard's formatters in ``shell`` (the running IPython when None).

    Returns:
        True if a shell took them, False when no IPython shell is running.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
        if shell is None:
            return False
    formatters = shell.display_formatter.formatters
    for mime, module, cls, function in FORMATTERS:
        formatters[mime].for_type_by_name(module, cls, _trampoline(mime, function))
    return True


def text(function: str, obj: Any) -> str:
    """``obj``'s text report by the report function ``function`` (``plan_text``), in the language
    :func:`language` gives now: what ``print()`` shows (the package's face registers it by type name)."""
    return str(_function(function)(obj, language=language()))


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext symshard.notebook``: register the formatters in a shell started after ``import symshard``."""
    register(shell)

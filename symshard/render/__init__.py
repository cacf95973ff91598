"""Figures as SVG: layouts, collectives and regime plots, drawn from the algebra.

Five functions and one value. :func:`layout` draws which device holds which
block of an array; :func:`collective` draws a collective as before and after;
:func:`regimes` plots a matmul's strategies against one dim with the
crossovers the algebra derives; :func:`regime_map` colours two symbols' plane by
the fastest strategy of a comparison, each boundary with its formula; :func:`svg`
picks one of them from what it is given. Each returns (or, for :func:`svg`, gives the text of) a :class:`Figure`.

The SVG is deterministic (the same call gives the same bytes on any machine),
self-contained (no fonts, links or scripts, so pages work offline) and
accessible (``role="img"``, an ``aria-label`` and a ``<title>``; colours from a
colour-blind-friendly palette, always with a second cue). It is written by hand
from the standard library; nothing here needs matplotlib or numpy. This package
is not imported by ``import symshard``.

The modules: :mod:`~symshard.render.figure` (the value), :mod:`~symshard.render.canvas`
(the SVG writer), :mod:`~symshard.render.style` (colours, type, hatch),
:mod:`~symshard.render.holdings` (which device holds what), :mod:`~symshard.render.layouts`
and :mod:`~symshard.render.collectives` (the grids), :mod:`~symshard.render.piecewise` and
:mod:`~symshard.render.sweep` (exact times along one dim), :mod:`~symshard.render.plot`
(the regime plot), :mod:`~symshard.render.regions` (the regime map) and :mod:`~symshard.render.dispatch` (:func:`svg`).

Examples:
    >>> from symshard.render import layout
    >>> fig = layout("A[I_XY, J]{U_Z}", "X=2,Y=2,Z=2", "I=1024,J=4096")
    >>> fig.title, fig.svg.count('class="device partial"')
    ('A[I_XY, J]{U_Z} on mesh X=2,Y=2,Z=2', 8)
"""

from .collectives import collective
from .dispatch import svg
from .figure import Figure
from .layouts import layout
from .plot import regimes
from .regions import regime_map

__all__ = ["Figure", "collective", "layout", "regime_map", "regimes", "svg"]

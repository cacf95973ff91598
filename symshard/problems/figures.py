"""Figures in problems: the ``figure(...)`` that templates call, and how each export shows them.

A template writes ``{{ figure('layout', arr, m, shape) }}`` (or ``'collective'``,
``'regimes'``, with the arguments of :mod:`symshard.render`'s functions). The figure is drawn
in the problem's language (its words and its own description; ``language='en'`` in the call
keeps it English), and ``alt='...'`` replaces its description with the template's own. The
call draws the figure, files it with the problem being rendered under the name
``<problem id>-<n>.svg`` (numbered in the order the template draws them, the
same figure drawn twice filed once: the engine names every file, a template
only draws), and returns the Markdown image
``![alt](figures/<name>)``. Figures never change a problem's answers or its
identity. The exports show them the way each medium can: Markdown keeps the
relative link (the files go to ``figures/``), JSON carries each figure's SVG
text, Moodle XML embeds each file in the question, the QTI packages carry the
files beside the questions, the PDF and PrairieLearn embed the SVG.

Examples:
    >>> book = FigureBook("device-memory-7")
    >>> print(book("layout", "A[I_X, J]", "X=2").split(":")[0])
    ![A\\[I\\_X, J\\] on a mesh of 2 devices (X=2)
    >>> book("layout", "A[I_X, J]", "X=2").endswith("](figures/device-memory-7-1.svg)")  # the same figure, filed once
    True
    >>> [name for name, _ in book.items]
    ['device-memory-7-1.svg']
    >>> print(FigureBook("device-memory-7", "zh")("layout", "A[I_X, J]", "X=2").split("：")[0])
    ![2 个设备的网格（X=2）上的 A\\[I\\_X, J\\]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import TemplateError, UsageError, did_you_mean
from ..messages import say

if TYPE_CHECKING:
    from ..render import Figure

__all__ = ["FOLDER", "KINDS", "Drawer", "FigureBook"]

FOLDER = "figures"
"""Where the Markdown export puts the SVG files, relative to the Markdown pages."""

KINDS = ("collective", "layout", "regimes")
"""What ``figure(kind, ...)`` can draw: the functions of :mod:`symshard.render` of those names."""

_REF = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(" + FOLDER + r"/([A-Za-z0-9_.-]+\.svg)\)")
_MARKDOWN_SPECIAL = re.compile(r"([\\\[\]_*`<>])")


def _alt_markdown(alt: str) -> str:
    """``alt`` safe inside ``![...]``: one line, Markdown's special characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(alt.split()))


_FILE_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_-]*-[0-9]+\Z")
"""A problem's id (a family's name and a seed): what the engine names figure files after."""


class FigureBook:
    """The figures of one problem as its template draws them; called as ``figure(kind, ...)``.

    The engine names every file, ``<prefix>-<n>.svg``, and keeps the list: what a template
    gets is :meth:`drawer`, which draws and nothing else (no list to append to, no names to choose).

    Args:
        prefix: the problem's id; figure files are named ``<prefix>-<n>.svg``.
        language: the problem's language, which the figures are drawn in unless a call says otherwise.

    Raises:
        TemplateError: a prefix that is not a problem's id.
    """

    __slots__ = ("_items", "language", "prefix")

    def __init__(self, prefix: str, language: str = "en") -> None:
        if not _FILE_PREFIX.match(prefix):
            raise TemplateError(
                say("'{prefix}' is not a problem's id, so figures cannot be named after it", prefix=prefix),
                hint=say("a problem's id is its family's name, a dash and the seed"),
            )
        self.prefix = prefix
        self.language = language
        self._items: list[tuple[str, Figure]] = []

    @property
    def items(self) -> tuple[tuple[str, Figure], ...]:
        """``(file name, figure)`` for each figure drawn so far, in order (a copy: the book keeps its own)."""
        return tuple(self._items)

    def __call__(self, kind: str, *args: object, alt: str | None = None, **kwargs: object) -> str:
        import dataclasses

        from .. import render

        if kind not in KINDS:
            raise UsageError(
                say("figure('{kind}', ...) is not a kind of figure", kind=kind), hint=did_you_mean(str(kind), KINDS)
            )
        draw: Callable[..., Figure] = getattr(render, kind)
        if self.language != "en":  # English is every drawing's default: its calls stay as the template wrote them
            kwargs.setdefault("language", self.language)
        fig = draw(*args, **kwargs)
        if alt is not None:
            fig = dataclasses.replace(fig, alt=" ".join(str(alt).split()))
        for name, known in self._items:
            if known.svg == fig.svg:
                return f"![{_alt_markdown(fig.alt)}]({FOLDER}/{name})"
        name = f"{self.prefix}-{len(self._items) + 1}.svg"
        self._items.append((name, fig))
        return f"![{_alt_markdown(fig.alt)}]({FOLDER}/{name})"

    def drawer(self) -> Drawer:
        """What a template calls as ``figure(kind, ...)``: this book's drawing, and nothing else of it."""
        return Drawer(self)

    def clear(self) -> None:
        """Forget every figure (a template's first, discarded pass draws them too)."""
        self._items.clear()


class Drawer:
    """``figure(kind, ...)`` as templates see it: a call that draws into one problem's book.

    Nothing else is reachable through it (the book is private, and templates may not read
    names starting with ``_``), and it prints the same in every run.

    Examples:
        >>> book = FigureBook("device-memory-7")
        >>> draw = book.drawer()
        >>> draw("layout", "A[I_X, J]", "X=2").endswith("(figures/device-memory-7-1.svg)"), draw
        (True, figure)
    """

    __slots__ = ("_book",)

    def __init__(self, book: FigureBook) -> None:
        self._book = book

    def __call__(self, kind: str, *args: object, alt: str | None = None, **kwargs: object) -> str:
        return self._book(kind, *args, alt=alt, **kwargs)

    def __repr__(self) -> str:
        return "figure"

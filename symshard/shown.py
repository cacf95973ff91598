"""How a result shows itself in a plain Python session: a short ``repr``, and ``print()``'s full text.

A plan, a comparison or a training run printed whole is a wall of text in a REPL, so every result's
``repr`` is a few lines a person can read, in the style of SymPy's and pandas': the type and what it
is about (notation, names) on the first line, then its headline numbers as ``name=value`` pairs. A
``repr`` cannot take a language, so it holds only the type, notation, names and numbers, never a
sentence; each value is cut to :data:`WIDTH` characters, so a repr stays under :data:`LIMIT`.

``print()`` (``str``) gives the full text: the report the command line prints, in the session's
language (``$SYMSHARD_LANG``, or :func:`symshard.notebook.use_language`), where the presentation has
one for the type, else every field as a dataclass shows them. The reports are registered by type name
(:func:`register_report`, done by the package's face), so no result imports its presentation.

This module is a leaf of the foundation: it imports nothing from symshard.

Examples:
    >>> print(summary("Plan", "A[I, J] · B[J, K] -> C[I, K]", {"case": 1, "best": "matmul"}, mesh="X=4"))
    Plan('A[I, J] · B[J, K] -> C[I, K]', mesh='X=4', case=1, best='matmul')
    >>> print(summary("Model", "llama3-70b", {"L": 80, "D": 8192}, {"params": 70553706496}))
    Model('llama3-70b')
      L=80, D=8192
      params=70553706496
    >>> len(summary("Model", "x" * 1000)) <= LIMIT
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["LIMIT", "WIDTH", "fields_text", "register_report", "report", "summary"]

WIDTH = 64
"""The most characters one value shows in a repr (longer values end in ``…``)."""

LIMIT = 400
"""The most characters a result's repr has."""

_LINES = 3  # lines of numbers under the first

_REPORTS: dict[tuple[str, str], Callable[[Any], str]] = {}


def _value(value: object) -> str:
    text = repr(value) if isinstance(value, str) else " ".join(str(value).split())
    if len(text) <= WIDTH:
        return text
    return text[: WIDTH - 2] + "…'" if isinstance(value, str) else text[: WIDTH - 1] + "…"


def _pairs(values: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={_value(v)}" for k, v in values.items() if v is not None)


def summary(kind: str, about: object = None, /, *lines: Mapping[str, object], **named: object) -> str:
    """A repr: ``kind(about, name=value, ...)``, then one indented line of ``name=value`` pairs per mapping
    of ``lines`` (None values left out, at most three lines, each value cut to :data:`WIDTH`).

    Examples:
        >>> summary("Route", "(0, 0) -> (3, 3)", {"hops": 6, "time": "11.1 ms"})
        "Route('(0, 0) -> (3, 3)', hops=6, time='11.1 ms')"
    """
    head = [] if about is None else [_value(about)]
    if named:
        head.append(_pairs(named))
    rows = [_pairs(line) for line in lines if any(v is not None for v in line.values())][:_LINES]
    first = f"{kind}({', '.join(h for h in head if h)})"
    if len(rows) == 1 and len(first) + len(rows[0]) < 100:  # short enough for one line
        return f"{first[:-1]}{', ' if head else ''}{rows[0]})"
    return "\n".join([first, *("  " + row for row in rows)])[:LIMIT]


def fields_text(obj: object) -> str:
    """Every field of a dataclass, as the dataclass's own repr shows them (what ``print`` showed before a
    result had a short repr).

    Examples:
        >>> from symshard.layers import Layer
        >>> fields_text(Layer("foundation", ("errors",)))
        "Layer(name='foundation', members=('errors',))"
    """
    if not dataclasses.is_dataclass(obj):
        return repr(obj)
    shown = ", ".join(f"{f.name}={getattr(obj, f.name)!r}" for f in dataclasses.fields(obj) if f.repr)
    return f"{type(obj).__qualname__}({shown})"


def register_report(module: str, name: str, text: Callable[[Any], str]) -> None:
    """Have ``print()`` of the class ``module.name`` show ``text(obj)``: its full report."""
    _REPORTS[(module, name)] = text


def report(obj: object) -> str:
    """``print()``'s text of a result: its registered report, else :func:`fields_text`.

    A report that cannot be made (an unknown ``$SYMSHARD_LANG``, a presentation not installed) falls back
    to the fields, so ``print`` never raises.
    """
    cls = type(obj)
    text = _REPORTS.get((cls.__module__, cls.__qualname__))
    if text is not None:
        try:
            return text(obj)
        except Exception:  # print() of a result must print something: its fields
            pass
    return fields_text(obj)

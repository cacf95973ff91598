"""Numbers for the symbols of a result, given as text or by name, checked against what the result holds.

``cost.time.subs({"E": 2048})`` on a bare SymPy expression silently does nothing: SymPy reads
the text ``'E'`` as Euler's number, which the cost does not contain. symshard's results
(:class:`~symshard.costs.collective_cost.CollectiveCost`, :class:`~symshard.algebra.conditions.Condition`,
:class:`~symshard.algebra.conditions.Clauses`) therefore read what to substitute here: ``"E=2048, F=8192"``,
``{"E": 2048}`` or ``{E: 2048}``, each name resolved to a symbol the result actually contains (a dim
by its name, a mesh axis as ``|X|`` or ``X``, a hardware constant as ``W_ici``), and a name it does
not contain is an error that lists the names it does. Values are read by symshard's grammar
(:mod:`symshard.algebra.mathtext`), never by ``eval``.

Examples:
    >>> from symshard.algebra.symbols import W_ici, axis, dim
    >>> present = {dim("E"), axis("Y"), W_ici}
    >>> substitution("E=2048, Y=4", present, what="the cost")
    {E: 2048, |Y|: 4}
    >>> substitution({"W_ici": "9e10", "|Y|": 4}, present, what="the cost")
    {W_ici: 90000000000, |Y|: 4}
    >>> substitution({"e": 1}, present, what="the cost")
    Traceback (most recent call last):
    ...
    symshard.errors.UnknownSymbolError: the cost has no symbol called 'e'
    hint: did you mean 'E'? The names here are E, W_ici, Y (|Y|)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import sympy

from ..errors import NotationError, UnknownSymbolError, did_you_mean
from ..messages import say
from .mathtext import as_expr, parse_number
from .symbols import is_axis_symbol

__all__ = ["names_of", "substitution"]

SubstitutionLike = Mapping[object, object] | str
"""What a result's ``subs`` accepts: ``"E=2048, F=8192"`` or a mapping of names or symbols to values."""


def names_of(present: Iterable[sympy.Basic]) -> dict[str, sympy.Symbol]:
    """Each name a user may write for the symbols ``present``: a dim or a constant by its name, an axis
    as ``|X|`` and, when no dim is called the same, as ``X``.

    Examples:
        >>> from symshard.algebra.symbols import axis, dim
        >>> sorted(names_of({dim("X"), axis("X"), axis("Y")}))
        ['X', 'Y', '|X|', '|Y|']
        >>> names_of({dim("X"), axis("X")})["X"]
        X
    """
    symbols = sorted((s for s in present if isinstance(s, sympy.Symbol)), key=lambda s: s.name)
    out = {s.name: s for s in symbols}
    for s in symbols:
        if is_axis_symbol(s):
            out.setdefault(s.name[1:-1], s)  # a dim with the axis's letter keeps the bare name
    return out


def _shown(names: Mapping[str, sympy.Symbol]) -> str:
    listed = []
    for name, s in sorted(names.items(), key=lambda kv: kv[0].strip("|")):
        if is_axis_symbol(s) and name.startswith("|"):
            continue
        listed.append(f"{name} ({s.name})" if is_axis_symbol(s) and name != s.name else name)
    return ", ".join(listed) or say("none (it holds no symbols)")


def _pairs(text: str) -> list[tuple[str, str]]:
    """``"E=2048, F=4*E"`` as ``[("E", "2048"), ("F", "4*E")]`` (commas inside parentheses kept)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch in ",;" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    out = []
    for part in parts:
        if not part.strip():
            continue
        name, eq, value = part.partition("=")
        if not eq or not name.strip() or not value.strip() or value.startswith("=") or name[-1:] in "<>!":
            raise NotationError(
                say("cannot read '{part}' as name=value in '{text}'", part=part.strip(), text=text),
                hint=say("give the numbers as 'E=2048, F=8192': a name, '=', then a number or formula"),
            )
        out.append((name.strip(), value.strip()))
    return out


def substitution(
    values: SubstitutionLike, present: Iterable[sympy.Basic], *, what: str
) -> dict[sympy.Basic, sympy.Basic]:
    """``values`` as SymPy symbols to SymPy values, each name resolved among the symbols ``present``.

    Args:
        values: ``"E=2048, F=8192"``, or a mapping whose keys are names (``'E'``, ``'X'`` or ``'|X|'``
            for an axis, ``'W_ici'``) or SymPy symbols (taken as they are, present or not).
        present: the symbols of the result being substituted into.
        what: the result, for messages (``"the cost"``).

    Raises:
        UnknownSymbolError: a name the result does not contain (the hint lists those it does).
        NotationError: text that is not ``name=value`` pairs, or a value that is not a formula.
        TypeError: a value that is neither a number, a formula nor text.
    """
    names = names_of(present)
    items: Iterable[tuple[object, object]]
    if isinstance(values, str):
        items = _pairs(values)
    elif isinstance(values, Mapping):
        items = values.items()
    else:
        raise TypeError(f"{type(values).__name__} is not a mapping or 'name=value' text")
    out: dict[sympy.Basic, sympy.Basic] = {}
    for key, value in items:
        if isinstance(key, str):
            name = key.strip()
            if name not in names:
                close = did_you_mean(name, list(names))
                shown = _shown(names)
                hint = (
                    say(
                        "did you mean {options}? The names here are {names}",
                        options=dict(close.values)["options"],
                        names=shown,
                    )
                    if close.startswith("did you")
                    else say("the names here are {names}", names=shown)
                )
                raise UnknownSymbolError(say("{what} has no symbol called '{name}'", what=what, name=name), hint=hint)
            symbol: sympy.Basic = names[name]
        else:
            symbol = as_expr(key)
        out[symbol] = _value(value, names)
    return out


def _value(value: object, names: Mapping[str, sympy.Symbol]) -> sympy.Basic:
    """A value as SymPy: text by the grammar, a Python float as the decimal it prints as (``4.59e14`` is
    the integer 459000000000000, so exact conditions can take it), anything else as :func:`as_expr` does."""
    if isinstance(value, str):
        return as_expr(value, names)
    if isinstance(value, float) and math.isfinite(value):
        return parse_number(repr(value))
    return as_expr(value)

"""Reading size lists: ``'X=8, Y:2'`` for a mesh, ``'B=1024, D=2^13'`` for a shape.

The notation's one reader that needs no tokens: a size list (the ``sizes`` rule of the grammar in
:mod:`symshard.notation.parser`) is ``NAME=VALUE`` pairs separated by commas, each value a positive
whole number (``1024``, ``1_024``, ``2^10``, ``2**10``, ``8e3``) or ``?`` to keep it symbolic. Meshes
(:mod:`symshard.machines.mesh`) and shapes (:mod:`symshard.costs.placement`) read their text here, and
each bad entry is a :class:`~symshard.errors.NotationError` that points at it. It sits beside the
parser in :mod:`symshard.notation`, importing only the foundation.

Examples:
    >>> parse_sizes("X=8, Y:2", what="mesh")
    (('X', '8', (0, 3)), ('Y', '2', (5, 8)))
    >>> parse_size_value("2^10", name="D", text="D=2^10", span=(0, 6), what="shape")
    1024
"""

from __future__ import annotations

import re

from ..errors import NotationError
from ..messages import say

__all__ = ["parse_size_value", "parse_sizes"]


_INT = re.compile(r"[0-9][0-9_]*\Z")


def parse_sizes(text: str, *, what: str) -> tuple[tuple[str, str, tuple[int, int]], ...]:
    """Parse ``'X=8, Y:2'`` into ``(name, value text, span)`` triples.

    A name without ``=value`` (``'X,Y'``) gets the value ``'?'``, meaning symbolic.
    Surrounding braces and quotes (``{'X': 8}``) are tolerated.

    Raises:
        NotationError: the text is not a comma-separated list of assignments.
    """
    if not isinstance(text, str):
        raise NotationError(say("expected {what} text like X=8,Y=2, got {value}", what=what, value=repr(text)))
    out: list[tuple[str, str, tuple[int, int]]] = []
    pos = 0
    stripped = text
    for ch in "{}'\"":
        stripped = stripped.replace(ch, " ")
    for part in stripped.split(","):
        start = pos
        pos += len(part) + 1
        if not part.strip():
            if stripped.strip():
                raise NotationError(
                    say("an empty entry in the {what} '{text}'", what=what, text=text),
                    text=text,
                    span=(start, start + max(1, len(part))),
                    hint=say("write the {what} as NAME=SIZE pairs separated by commas, e.g. X=8,Y=2", what=what),
                )
            continue
        lead = len(part) - len(part.lstrip())
        body = part.strip()
        m = re.match(r"([A-Za-z][A-Za-z0-9_']*)[ \t]*(?:[=:][ \t]*(.+))?\Z", body)
        if m is None:
            raise NotationError(
                say("cannot read '{entry}' in the {what} '{text}'", entry=_short(body), what=what, text=_short(text)),
                text=text,
                span=(start + lead, start + lead + len(body)),
                hint=say("write the {what} as NAME=SIZE pairs separated by commas, e.g. X=8,Y=2", what=what),
            )
        value = m.group(2) if m.group(2) is not None else "?"
        out.append((m.group(1), value, (start + lead, start + lead + len(body))))
    if not out:
        raise NotationError(
            say("the {what} '{text}' is empty", what=what, text=text),
            text=text,
            span=(0, max(1, len(text))),
            hint=say("write the {what} as NAME=SIZE pairs separated by commas, e.g. X=8,Y=2", what=what),
        )
    return tuple(out)


MAX_SIZE = 10**18
"""The largest dim or axis size symshard accepts (far beyond any real array)."""


def parse_size_value(value: str, *, name: str, text: str, span: tuple[int, int], what: str) -> int | None:
    """The integer in a size entry (``1024``, ``1_024``, ``2^10``, ``2**10``, ``8e3``), or None for ``?``.

    Raises:
        NotationError: the value is not a positive integer, or is larger than ``MAX_SIZE``.
    """
    v = value.strip()
    if v in ("?", name):
        return None
    n: int | None = None
    try:
        if _INT.match(v):
            n = int(v.replace("_", "")) if len(v) <= 40 else MAX_SIZE + 1
        elif re.fullmatch(r"[0-9]+\s*(\^|\*\*)\s*[0-9]+", v):
            base, exp = re.split(r"\^|\*\*", v)
            if int(exp) <= 64:
                n = int(base) ** int(exp)
        elif re.fullmatch(r"[0-9]+(\.[0-9]+)?[eE][0-9]+", v):
            mant, exp = v.lower().split("e")
            if int(exp) <= 30:
                from fractions import Fraction

                f = Fraction(mant) * 10 ** int(exp)
                n = int(f) if f.denominator == 1 else None
    except ValueError:  # pragma: no cover - the regexes admit only digits
        n = None
    if n is None or n <= 0:
        raise NotationError(
            say(
                "{what} entry {entry} is not a positive integer in '{text}'",
                what=what,
                entry=f"{name}={value}",
                text=text,
            ),
            text=text,
            span=span,
            hint=say("sizes are whole numbers such as {name}=1024 (or {name}=? to keep it symbolic)", name=name),
        )
    if n > MAX_SIZE:
        raise NotationError(
            say(
                "{what} entry {entry} is larger than {limit} in '{text}'",
                what=what,
                entry=f"{name}={_short(value)}",
                limit=f"{MAX_SIZE:.0e}",
                text=_short(text),
            ),
            text=text if len(text) <= 200 else None,
            span=span,
            hint=say("sizes beyond 1e18 are not meaningful here; check for a typo"),
        )
    return n


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""Where a family went wrong, said as a message: the expression's line in ``family.toml``, the template's
line, and what an exception says.

Part of :mod:`symshard.problems`, below :mod:`~symshard.problems.problem` (an answer that cannot read
what a student gave) and :mod:`~symshard.problems.drawing` (an expression or a template the algebra
or the sandbox refuses): every error about a family's text names the family, the file and the place,
and keeps the algebra's words as a message, so that they can be said in any language.

Examples:
    >>> from symshard.errors import PlanError
    >>> str(one_line(PlanError("no strategy", hint="give a mesh")))
    'no strategy; hint: give a mesh'
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..errors import SymshardError, TemplateError
from ..messages import Message, say
from .family import Family, key_positions, read_spec

__all__ = ["at_line", "in_spec", "one_line", "reason", "spec_place"]


def reason(err: BaseException) -> str:
    """What an exception says, kept as a message when it is one (``str(err)`` would be English text)."""
    said = getattr(err, "message", err.args[0] if len(err.args) == 1 else None)
    return said if isinstance(said, Message) and said == str(err) else str(err)


def one_line(err: SymshardError) -> str:
    """:meth:`SymshardError.one_line` as a message, to say in any language."""
    what, hint = err.message, err.hint
    if err.text is not None and err.span is not None:
        column = err.span[0] + 1
        if f"'{err.text}'" in what:
            if hint:
                return say("{what} (at column {column}); hint: {hint}", what=what, column=column, hint=hint)
            return say("{what} (at column {column})", what=what, column=column)
        if hint:
            return say("{what} (at column {column} of '{text}'); hint: {hint}",
                       what=what, column=column, text=err.text, hint=hint)  # fmt: skip
        return say("{what} (at column {column} of '{text}')", what=what, column=column, text=err.text)
    if hint:
        return say("{what}; hint: {hint}", what=what, hint=hint)
    return what


@lru_cache(maxsize=256)
def _positions(folder: Path, stamp: int) -> dict[tuple[object, ...], tuple[int, int]]:
    try:
        return key_positions(read_spec(folder))
    except TemplateError:
        return {}


def in_spec(fam: Family, where: str, why: str) -> Message:
    """An error of the expression at ``where`` in ``family.toml``: ``why`` is a message or a library's own words."""
    return say("family '{family}', family.toml {where}: {why}", family=fam.name, where=spec_place(fam, where), why=why)


def at_line(fam: Family, file: str, line: object, why: str) -> Message:
    """An error at ``line`` of the family's template ``file``."""
    return say("family '{family}', {file} line {line}: {why}", family=fam.name, file=file, line=line, why=why)


def spec_place(fam: Family, where: str) -> str:
    """``line 12 (let.cost)``: where in ``family.toml`` an expression is written (its name alone if not found)."""
    parts: list[object] = []
    for piece in where.split("."):
        name, _, index = piece.partition("[")
        parts.append(name)
        if index:
            parts.append(int(index.rstrip("]")))
    if parts[:1] == ["answers"] and len(parts) > 1:  # answers are named in messages, indexed in the file
        names = [a.name for a in fam.answers]
        parts[1:2] = ["answers", names.index(parts[1])] if parts[1] in names else []
        parts = parts[1:]
    if len(parts) >= 3 and parts[0] == "answers" and parts[2] == "mistakes" and len(parts) >= 4:
        parts = [*parts[:4], "value"]
    elif parts[:1] == ["answers"] and len(parts) == 2:
        parts.append("value")
    try:
        stamp = os.lstat(fam.path / "family.toml").st_mtime_ns
    except OSError:
        stamp = 0
    line = _positions(fam.path, stamp).get(tuple(parts))
    return say("line {line} ({where})", line=line[0], where=where) if line else where

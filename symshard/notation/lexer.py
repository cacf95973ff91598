r"""The notation's lexer: text, in ASCII or the book's LaTeX, split into tokens that know where they sit.

The first half of reading the notation (:mod:`symshard.notation.parser`, with the grammar, is the
second). LaTeX wrappers (``\mathbf{..}``, ``\text{..}``), spacing and ``$`` are dropped, ``\{ \}``
become braces and ``\cdot``, ``\rightarrow`` the product and the arrow, so the parser sees one stream
of tokens however the text was typeset. Every token keeps its span, so that the parser's errors point
at the spot; a character the notation never uses, or a bracket left open, is already a
:class:`~symshard.errors.NotationError` here. It sits at the bottom of :mod:`symshard.notation`,
importing only the foundation.

Examples:
    >>> [t.kind for t in lex(r"\mathbf{A}[I_{XY}] \{U_Z\}")]
    ['IDENT', '[', 'IDENT', '_', '{', 'IDENT', '}', ']', '{', 'IDENT', '_', 'IDENT', '}', 'END']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import NotationError
from ..messages import Message, say

__all__ = ["Token", "check_balance", "lex"]


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, its text as written, and where it sits in the text (``start`` to ``end``)."""

    kind: str  # IDENT, NUMBER, "_", "[", "]", "{", "}", "(", ")", ",", "=", ARROW, OP, END
    text: str
    start: int
    end: int


_WRAPPERS = {
    "mathbf", "textbf", "text", "mathrm", "operatorname", "boldsymbol", "mathit", "textrm",
    "mathsf", "textsf", "bm", "mathbb",
}  # fmt: skip
_SPACES = {",", ";", ":", "!", " ", "quad", "qquad", "left", "right", "big", "Big", "bigl", "bigr"}
_LATEX_TOKENS = {
    "{": "{",
    "}": "}",
    "lbrace": "{",
    "rbrace": "}",
    "_": "_",
    "rightarrow": "ARROW",
    "to": "ARROW",
    "longrightarrow": "ARROW",
    "cdot": "OP",
    "times": "OP",
}
_PUNCT = {"_": "_", "[": "[", "]": "]", "{": "{", "}": "}", "(": "(", ")": ")", ",": ",", "=": "="}
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9']*")
_NUMBER = re.compile(r"[0-9][0-9_.eE+*^]*")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


def lex(text: str) -> list[Token]:
    """Split ``text`` into tokens, dropping LaTeX wrappers, spacing and ``$``."""
    toks: list[Token] = []
    braces: list[tuple[str, int]] = []  # ("wrap" | "brace", start) for each open brace
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch in "$~":
            i += 1
            continue
        if ch == "\\":
            m = _COMMAND.match(text, i)
            if m is None:  # a lone trailing backslash
                raise NotationError(
                    say("a lone '\\' at the end of '{text}'", text=text),
                    text=text,
                    span=(i, i + 1),
                    hint=say("remove it, or finish the LaTeX command"),
                )
            name = m.group(1)
            if name in _WRAPPERS:
                j = m.end()
                while j < n and text[j].isspace():
                    j += 1
                if j >= n or text[j] != "{":
                    raise NotationError(
                        say("\\{name} must be followed by {{...}} in '{text}'", name=name, text=text),
                        text=text,
                        span=(i, m.end()),
                        hint=say("write {example}", example=f"\\{name}{{A}}"),
                    )
                braces.append(("wrap", i))
                i = j + 1
                continue
            if name in _SPACES:
                i = m.end()
                continue
            if name in _LATEX_TOKENS:
                kind = _LATEX_TOKENS[name]
                if kind == "{":
                    braces.append(("brace", i))
                elif kind == "}":
                    if not braces or braces.pop()[0] != "brace":
                        raise _unbalanced(text, i, m.end(), say("'{bracket}' closes nothing", bracket="\\}"))
                toks.append(Token(kind, m.group(0), i, m.end()))
                i = m.end()
                continue
            raise NotationError(
                say("unknown LaTeX command '{command}' in '{text}'", command=m.group(0), text=text),
                text=text,
                span=(i, m.end()),
                hint=say("the notation understands \\mathbf{{..}}, \\text{{..}}, \\{{ \\}}, \\cdot and \\rightarrow"),
            )
        if ch == "{":
            braces.append(("brace", i))
            toks.append(Token("{", ch, i, i + 1))
            i += 1
            continue
        if ch == "}":
            if not braces:
                raise _unbalanced(text, i, i + 1, say("'{bracket}' closes nothing", bracket="}"))
            kind, _ = braces.pop()
            if kind == "brace":
                toks.append(Token("}", ch, i, i + 1))
            i += 1
            continue
        if ch in _PUNCT:
            toks.append(Token(_PUNCT[ch], ch, i, i + 1))
            i += 1
            continue
        if text.startswith("->", i):
            toks.append(Token("ARROW", "->", i, i + 2))
            i += 2
            continue
        if ch in "→⟶":
            toks.append(Token("ARROW", ch, i, i + 1))
            i += 1
            continue
        if ch in "·⋅*@•×":
            toks.append(Token("OP", ch, i, i + 1))
            i += 1
            continue
        if ch == ":":
            toks.append(Token("=", ch, i, i + 1))
            i += 1
            continue
        m = _IDENT.match(text, i)
        if m:
            toks.append(Token("IDENT", m.group(0), i, m.end()))
            i = m.end()
            continue
        m = _NUMBER.match(text, i)
        if m:
            toks.append(Token("NUMBER", m.group(0), i, m.end()))
            i = m.end()
            continue
        raise NotationError(
            say("unexpected character {char} in '{text}'", char=repr(ch), text=text),
            text=text,
            span=(i, i + 1),
            hint=say("arrays look like A[I_X, J]{{U_Y}}; collectives like AllGather_X(A[I_X, J])"),
        )
    if braces:
        kind, start = braces[-1]
        raise _unbalanced(text, start, start + 1, say("'{bracket}' is never closed", bracket="{"))
    toks.append(Token("END", "", n, n))
    return toks


def _unbalanced(text: str, start: int, end: int, what: Message) -> NotationError:
    return NotationError(
        say("unbalanced brackets in '{text}': {what}", text=text, what=what),
        text=text,
        span=(start, end),
        hint=say("every [ ( {{ needs its matching ] ) }}"),
    )


def check_balance(text: str, toks: list[Token]) -> None:
    """Raise a :class:`~symshard.errors.NotationError` at the first bracket of ``toks`` that closes the wrong
    kind, closes nothing or is never closed."""
    pairs = {"]": "[", ")": "(", "}": "{"}
    stack: list[Token] = []
    for t in toks:
        if t.kind in "[({":
            stack.append(t)
        elif t.kind in pairs:
            if not stack:
                raise _unbalanced(text, t.start, t.end, say("'{bracket}' closes nothing", bracket=t.text))
            opener = stack.pop()
            if opener.kind != pairs[t.kind]:
                raise _unbalanced(
                    text,
                    t.start,
                    t.end,
                    say(
                        "'{bracket}' closes '{opener}' opened at column {column}",
                        bracket=t.text,
                        opener=opener.text,
                        column=opener.start + 1,
                    ),
                )
    if stack:
        t = stack[-1]
        raise _unbalanced(
            text,
            t.start,
            t.end,
            say("'{bracket}' at column {column} is never closed", bracket=t.text, column=t.start + 1),
        )

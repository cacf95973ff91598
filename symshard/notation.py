r"""Reading the book's sharding notation: arrays, collectives and size lists.

One hand-written pass: a lexer that also understands the LaTeX the book is
typeset in, and a recursive-descent parser whose every branch raises a
:class:`~symshard.errors.NotationError` that points at the offending spot.

Grammar (EBNF; whitespace is free between tokens)::

    array      = [ NAME ] "[" dim { "," dim } "]" [ unreduced ] ;
    NAME       = IDENT { "_" IDENT } ;                 (* A, W_in, dW_out, A' *)
    dim        = IDENT [ "_" axes ] ;                  (* I, I_X, I_XY, I_{data,model} *)
    axes       = LETTERS                               (* one axis per letter: XY *)
               | "{" item { "," item } "}" ;
    item       = CAPITALS                              (* one axis per letter, as in I_{XY} *)
               | AXIS_NAME ;                           (* data, model, x1, tp_inner *)
    unreduced  = "{" "U" "_" axes "}" ;                (* {U_Z}, {U_XY}, {U_{data}} *)
    collective = KIND [ "_" subscript ] ( "(" array ")" | array ) [ ARROW array ] ;
    matmul     = array OP [ "_" ( IDENT | "{" IDENT { "," IDENT } "}" | "LOCAL" ) ] array [ ARROW array ] ;
    subscript  = axes                                  (* AllGather_XY, AllReduce_Z *)
               | "{" item { "," item } "," IDENT "}" ; (* ReduceScatter_{X,K}: last item is a dim *)
    KIND       = "AllGather" | "ReduceScatter" | "AllReduce" | "AllToAll"
               | "CollectivePermute" | "DynamicSlice" | JAX's names (all_gather, psum, ...) ;
    ARROW      = "->" | "→" | "\rightarrow" | "\to" ;
    OP         = "·" | "*" | "@" | "\cdot" | "\times" ;    (* ·_J names the contracted dim; ·_LOCAL the book's local product *)
    sizes      = IDENT ( "=" | ":" ) VALUE { "," IDENT ( "=" | ":" ) VALUE } ;

LaTeX input is accepted: ``\mathbf{A}``, ``\textbf{AllGather}``, ``\text{..}`` and
``\mathrm{..}`` wrappers are transparent, ``\{ \}`` are braces, ``\,`` and ``$`` are
ignored. So ``A[I_{XY}, J] \{U_Z\}`` and ``A[I_XY, J]{U_Z}`` are the same array.

Examples:
    >>> str(parse_array(r"\mathbf{A}[ I_{XY},J ] \{ U_Z \}"))
    'A[I_XY, J]{U_Z}'
    >>> parse_dim("B_{data,model}").axes
    ('data', 'model')
    >>> parse_sizes("X=8, Y:2", what="mesh")
    (('X', '8', (0, 3)), ('Y', '2', (5, 8)))
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .arrays import Array, Dim, check_array_rules, check_axis_name
from .errors import NotationError, ShardingError

__all__ = [
    "COLLECTIVE_KINDS",
    "CollectiveSyntax",
    "MatmulSyntax",
    "classify",
    "parse_array",
    "parse_collective_syntax",
    "parse_dim",
    "parse_matmul_syntax",
    "parse_size_value",
    "parse_sizes",
]

COLLECTIVE_KINDS: dict[str, str] = {
    "allgather": "AllGather",
    "all_gather": "AllGather",
    "reducescatter": "ReduceScatter",
    "reduce_scatter": "ReduceScatter",
    "psum_scatter": "ReduceScatter",
    "allreduce": "AllReduce",
    "all_reduce": "AllReduce",
    "psum": "AllReduce",
    "alltoall": "AllToAll",
    "all_to_all": "AllToAll",
    "collectivepermute": "CollectivePermute",
    "collective_permute": "CollectivePermute",
    "ppermute": "CollectivePermute",
    "permute": "CollectivePermute",
    "dynamicslice": "DynamicSlice",
    "dynamic_slice": "DynamicSlice",
}
"""Names a collective may be written with (lower case) and the canonical kind."""

# -- the lexer -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tok:
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


def _lex(text: str) -> list[_Tok]:
    """Split ``text`` into tokens, dropping LaTeX wrappers, spacing and ``$``."""
    toks: list[_Tok] = []
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
                    f"a lone '\\' at the end of '{text}'",
                    text=text,
                    span=(i, i + 1),
                    hint="remove it, or finish the LaTeX command",
                )
            name = m.group(1)
            if name in _WRAPPERS:
                j = m.end()
                while j < n and text[j].isspace():
                    j += 1
                if j >= n or text[j] != "{":
                    raise NotationError(
                        f"\\{name} must be followed by {{...}} in '{text}'",
                        text=text,
                        span=(i, m.end()),
                        hint=f"write \\{name}{{A}}",
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
                        raise _unbalanced(text, i, m.end(), "'\\}' closes nothing")
                toks.append(_Tok(kind, m.group(0), i, m.end()))
                i = m.end()
                continue
            raise NotationError(
                f"unknown LaTeX command '{m.group(0)}' in '{text}'",
                text=text,
                span=(i, m.end()),
                hint="the notation understands \\mathbf{..}, \\text{..}, \\{ \\}, \\cdot and \\rightarrow",
            )
        if ch == "{":
            braces.append(("brace", i))
            toks.append(_Tok("{", ch, i, i + 1))
            i += 1
            continue
        if ch == "}":
            if not braces:
                raise _unbalanced(text, i, i + 1, "'}' closes nothing")
            kind, _ = braces.pop()
            if kind == "brace":
                toks.append(_Tok("}", ch, i, i + 1))
            i += 1
            continue
        if ch in _PUNCT:
            toks.append(_Tok(_PUNCT[ch], ch, i, i + 1))
            i += 1
            continue
        if text.startswith("->", i):
            toks.append(_Tok("ARROW", "->", i, i + 2))
            i += 2
            continue
        if ch in "→⟶":
            toks.append(_Tok("ARROW", ch, i, i + 1))
            i += 1
            continue
        if ch in "·⋅*@•×":
            toks.append(_Tok("OP", ch, i, i + 1))
            i += 1
            continue
        if ch == ":":
            toks.append(_Tok("=", ch, i, i + 1))
            i += 1
            continue
        m = _IDENT.match(text, i)
        if m:
            toks.append(_Tok("IDENT", m.group(0), i, m.end()))
            i = m.end()
            continue
        m = _NUMBER.match(text, i)
        if m:
            toks.append(_Tok("NUMBER", m.group(0), i, m.end()))
            i = m.end()
            continue
        raise NotationError(
            f"unexpected character {ch!r} in '{text}'",
            text=text,
            span=(i, i + 1),
            hint="arrays look like A[I_X, J]{U_Y}; collectives like AllGather_X(A[I_X, J])",
        )
    if braces:
        kind, start = braces[-1]
        raise _unbalanced(text, start, start + 1, "'{' is never closed")
    toks.append(_Tok("END", "", n, n))
    return toks


def _unbalanced(text: str, start: int, end: int, what: str) -> NotationError:
    return NotationError(
        f"unbalanced brackets in '{text}': {what}",
        text=text,
        span=(start, end),
        hint="every [ ( { needs its matching ] ) }",
    )


def _check_balance(text: str, toks: list[_Tok]) -> None:
    pairs = {"]": "[", ")": "(", "}": "{"}
    stack: list[_Tok] = []
    for t in toks:
        if t.kind in "[({":
            stack.append(t)
        elif t.kind in pairs:
            if not stack:
                raise _unbalanced(text, t.start, t.end, f"'{t.text}' closes nothing")
            opener = stack.pop()
            if opener.kind != pairs[t.kind]:
                raise _unbalanced(
                    text,
                    t.start,
                    t.end,
                    f"'{t.text}' closes '{opener.text}' opened at column {opener.start + 1}",
                )
    if stack:
        t = stack[-1]
        raise _unbalanced(text, t.start, t.end, f"'{t.text}' at column {t.start + 1} is never closed")


# -- the parser ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CollectiveSyntax:
    """A parsed collective before it is checked against its operand.

    ``dim`` is the dim named in ``ReduceScatter_{X,K}`` or ``AllToAll_{X,J}``;
    ``axes`` is None when the text gave no subscript (``AllReduce(C[I]{U_X})``).
    """

    kind: str
    axes: tuple[str, ...] | None
    dim: str | None
    operand: Array
    stated_output: Array | None
    text: str
    kind_span: tuple[int, int]
    subscript_span: tuple[int, int]
    output_span: tuple[int, int] | None


class _Parser:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise NotationError(
                f"expected notation text, got {type(text).__name__} {text!r}",
                hint="pass a string such as 'A[I_X, J]'",
            )
        self.text = text
        self.toks = _lex(text)
        _check_balance(text, self.toks)
        self.i = 0

    # token helpers
    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        if tok.kind != "END":
            self.i += 1
        return tok

    def fail(self, message: str, tok: _Tok | tuple[int, int], hint: str, cls=NotationError):
        span = (tok.start, max(tok.end, tok.start + 1)) if isinstance(tok, _Tok) else tok
        return cls(f"{message} in '{self.text}'", text=self.text, span=span, hint=hint)

    def expect(self, kind: str, what: str, hint: str) -> _Tok:
        tok = self.peek()
        if tok.kind != kind:
            found = "the end" if tok.kind == "END" else f"'{tok.text}'"
            raise self.fail(f"expected {what} but found {found}", tok, hint)
        return self.take()

    def at_end(self, what: str, hint: str) -> None:
        tok = self.peek()
        if tok.kind != "END":
            raise self.fail(f"unexpected '{tok.text}' after {what}", tok, hint)

    # pieces
    def name(self) -> tuple[str, tuple[int, int]]:
        """NAME = IDENT { "_" IDENT }, stopping before "[" ."""
        first = self.expect("IDENT", "a name", "names start with a letter")
        name, start, end = first.text, first.start, first.end
        while self.peek().kind == "_" and self.peek(1).kind in ("IDENT", "NUMBER"):
            self.take()
            part = self.take()
            name += "_" + part.text
            end = part.end
        return name, (start, end)

    def items(self, what: str) -> list[tuple[str, tuple[int, int]]]:
        """``{ a, b_c, XY }`` → raw items with spans (the "{" is already consumed)."""
        out: list[tuple[str, tuple[int, int]]] = []
        while True:
            tok = self.peek()
            if tok.kind == "}":
                raise self.fail(
                    f"empty {what}" if not out else f"a trailing ',' in the {what}",
                    tok,
                    "name at least one mesh axis, e.g. I_{X} or I_{data,model}",
                )
            if tok.kind not in ("IDENT", "NUMBER"):
                found = "the end" if tok.kind == "END" else f"'{tok.text}'"
                raise self.fail(
                    f"expected an axis name in the {what} but found {found}",
                    tok,
                    "write the axes as I_XY or I_{data,model}",
                )
            item, span = self.name()
            out.append((item, span))
            nxt = self.take()
            if nxt.kind == "}":
                return out
            if nxt.kind != ",":
                found = "the end" if nxt.kind == "END" else f"'{nxt.text}'"
                raise self.fail(
                    f"expected ',' or '}}' in the {what} but found {found}",
                    nxt,
                    "separate axis names with commas: I_{data,model}",
                )

    def split_item(self, item: str, span: tuple[int, int]) -> list[tuple[str, tuple[int, int]]]:
        """A braced item: a run of capitals is one axis per letter, anything else one name."""
        if len(item) > 1 and item.isalpha() and item.isupper():
            return [(ch, (span[0] + k, span[0] + k + 1)) for k, ch in enumerate(item)]
        check_axis_name(item, text=self.text, span=span)
        return [(item, span)]

    def axes(self, what: str) -> tuple[list[tuple[str, tuple[int, int]]], tuple[int, int]]:
        """axes after "_": letters (one axis each) or a braced list."""
        tok = self.peek()
        if tok.kind == "{":
            self.take()
            raw = self.items(what)
            closing = self.toks[self.i - 1]
            axes = [a for item, span in raw for a in self.split_item(item, span)]
            return axes, (tok.start, closing.end)
        if tok.kind == "IDENT":
            self.take()
            if not tok.text.isalpha():
                bad = next(k for k, ch in enumerate(tok.text) if not ch.isalpha())
                raise self.fail(
                    f"'{tok.text}' is not a run of one-letter axis names",
                    (tok.start + bad, tok.start + bad + 1),
                    f"unbraced axes are single letters (I_XY); write I_{{{tok.text}}} for a longer name",
                )
            axes = [(ch, (tok.start + k, tok.start + k + 1)) for k, ch in enumerate(tok.text)]
            return axes, (tok.start, tok.end)
        found = "the end" if tok.kind == "END" else f"'{tok.text}'"
        raise self.fail(
            f"expected mesh axes after '_' in the {what} but found {found}",
            tok,
            "write I_X, I_XY or I_{data,model}, or drop the '_' for an unsharded dim",
        )

    def array(self) -> tuple[Array, dict]:
        start_tok = self.peek()
        if start_tok.kind == "[":
            name, name_span = "", (start_tok.start, start_tok.start)
        elif start_tok.kind == "IDENT":
            name, name_span = self.name()
        else:
            found = "the end" if start_tok.kind == "END" else f"'{start_tok.text}'"
            raise self.fail(
                f"expected an array but found {found}",
                start_tok,
                "an array looks like A[I_X, J]",
            )
        self.expect("[", "'[' after the array name", "an array looks like A[I_X, J]")
        spans: dict[tuple, tuple[int, int]] = {}
        dims: list[Dim] = []
        if self.peek().kind == "]":
            tok = self.peek()
            raise self.fail(
                "array has no dims",
                (start_tok.start, tok.end),
                "list its dims inside the brackets, e.g. A[I, J]",
            )
        while True:
            tok = self.peek()
            if tok.kind != "IDENT":
                found = "the end" if tok.kind == "END" else f"'{tok.text}'"
                what = "an empty dim" if tok.kind in (",", "]") else f"{found} where a dim name belongs"
                raise self.fail(
                    f"found {what}",
                    tok,
                    "dims are names like I or I_X, separated by commas",
                )
            self.take()
            if not tok.text.isalnum():
                raise self.fail(
                    f"'{tok.text}' is not a valid dim name",
                    tok,
                    "dim names contain letters and digits only",
                )
            i = len(dims)
            spans[("dim", i)] = (tok.start, tok.end)
            axes: list[str] = []
            if self.peek().kind == "_":
                self.take()
                found_axes, _ = self.axes(f"sharding of {tok.text}")
                for j, (a, span) in enumerate(found_axes):
                    spans[("axis", i, j)] = span
                    axes.append(a)
            dims.append(Dim(tok.text, tuple(axes)))
            sep = self.take()
            if sep.kind == "]":
                break
            if sep.kind != ",":
                found = "the end" if sep.kind == "END" else f"'{sep.text}'"
                raise self.fail(
                    f"expected ',' or ']' after dim {tok.text} but found {found}",
                    sep,
                    "separate dims with commas, e.g. A[I_X, J]",
                )
        unreduced: list[str] = []
        if self.peek().kind == "{":
            brace = self.take()
            u = self.peek()
            if not (u.kind == "IDENT" and u.text == "U" and self.peek(1).kind == "_"):
                raise self.fail(
                    "expected U_ after '{' (an unreduced marker)",
                    u if u.kind != "END" else brace,
                    "mark unreduced axes as {U_X} or {U_XY}",
                )
            self.take()
            self.take()
            found_axes, _ = self.axes("unreduced marker")
            for a, span in found_axes:
                if a in unreduced:
                    raise self.fail(
                        f"mesh axis {a} is listed twice as unreduced",
                        span,
                        f"list each axis once, e.g. {{U_{a}}}",
                        ShardingError,
                    )
                unreduced.append(a)
                spans[("unreduced", a)] = span
            self.expect("}", "'}' closing the unreduced marker", "write {U_X}")
        dims_t = tuple(dims)
        check_array_rules(name, dims_t, frozenset(unreduced), self.text, spans)
        if name:
            spans[("name",)] = name_span
        return Array(name, dims_t, frozenset(unreduced)), spans


# -- public entry points ---------------------------------------------------------------


def parse_array(text: str) -> Array:
    """Parse one array such as ``'A[I_XY, J]{U_Z}'`` (ASCII or LaTeX).

    Raises:
        NotationError: the text does not parse.
        ShardingError: it parses but breaks a sharding rule (``A[I_X, J_X]``).
    """
    if not isinstance(text, str):
        raise NotationError(f"expected an array as text, got {type(text).__name__}", hint="pass e.g. 'A[I_X, J]'")
    return _parse_array(text)


@lru_cache(maxsize=4096)
def _parse_array(text: str) -> Array:
    p = _Parser(text)
    array, _ = p.array()
    p.at_end("the array", "one array per string; collectives look like AllGather_X(A[I_X])")
    return array


def parse_dim(text: str) -> Dim:
    """Parse one dim such as ``'I_XY'`` or ``'B_{data}'``."""
    if not isinstance(text, str):
        raise NotationError(f"expected a dim as text, got {type(text).__name__}", hint="pass e.g. 'I_X'")
    return _parse_dim(text)


@lru_cache(maxsize=1024)
def _parse_dim(text: str) -> Dim:
    p = _Parser(text)
    tok = p.expect("IDENT", "a dim name", "a dim looks like I or I_X")
    axes: tuple[str, ...] = ()
    if p.peek().kind == "_":
        p.take()
        found, _ = p.axes(f"sharding of {tok.text}")
        axes = tuple(a for a, _ in found)
    p.at_end("the dim", "a dim looks like I or I_X")
    dims = (Dim(tok.text, axes),)
    spans = {("axis", 0, j): (0, len(text)) for j in range(len(axes))}
    check_array_rules("", dims, frozenset(), text, spans)
    return dims[0]


def _match_kind(p: _Parser) -> tuple[str, tuple[int, int]] | None:
    """If the text starts with a collective's name, consume it and return the kind."""
    parts: list[_Tok] = []
    j = p.i
    while p.toks[j].kind == "IDENT":
        parts.append(p.toks[j])
        if p.toks[j + 1].kind == "_" and p.toks[j + 2].kind == "IDENT":
            j += 2
        else:
            break
    for k in range(len(parts), 0, -1):
        key = "_".join(t.text for t in parts[:k]).lower()
        if key in COLLECTIVE_KINDS:
            p.i += 2 * k - 1
            return COLLECTIVE_KINDS[key], (parts[0].start, parts[k - 1].end)
    return None


def parse_collective_syntax(text: str) -> CollectiveSyntax:
    """Parse ``'AllGather_X(A[I_X, J]) -> A[I, J]'`` into its parts, unchecked.

    Raises:
        NotationError: the text is not a collective expression.
    """
    p = _Parser(text)
    found = _match_kind(p)
    if found is None:
        tok = p.peek()
        raise p.fail(
            "expected a collective (AllGather, ReduceScatter, AllReduce, AllToAll, CollectivePermute)",
            tok,
            "write e.g. AllGather_X(A[I_X, J]) or ReduceScatter_{X,K}(C[I, K]{U_X})",
        )
    kind, kind_span = found
    axes: tuple[str, ...] | None = None
    dim: str | None = None
    sub_span = (kind_span[1], kind_span[1])
    if p.peek().kind == "_":
        p.take()
        tok = p.peek()
        if tok.kind == "{":
            p.take()
            raw = p.items(f"subscript of {kind}")
            sub_span = (tok.start, p.toks[p.i - 1].end)
            if kind in ("ReduceScatter", "AllToAll", "DynamicSlice") and len(raw) >= 2:
                dim_text, dim_span = raw[-1]
                if not dim_text.isalnum():
                    raise p.fail(
                        f"'{dim_text}' is not a dim name",
                        dim_span,
                        f"the last item of {kind}_{{X,K}} names the dim to shard",
                    )
                dim = dim_text
                raw = raw[:-1]
            axes = tuple(a for item, span in raw for a, _ in p.split_item(item, span))
        else:
            found_axes, sub_span = p.axes(f"subscript of {kind}")
            axes = tuple(a for a, _ in found_axes)
    if p.peek().kind == "(":
        p.take()
        operand, _ = p.array()
        p.expect(")", f"')' closing the operand of {kind}", f"write {kind}_X(A[I_X, J])")
    else:
        operand, _ = p.array()
    stated = None
    out_span = None
    if p.peek().kind == "ARROW":
        p.take()
        start = p.peek().start
        stated, _ = p.array()
        out_span = (start, p.toks[p.i - 1].end)
    p.at_end(
        "the collective",
        "a collective is KIND_axes(array), optionally followed by -> array",
    )
    return CollectiveSyntax(kind, axes, dim, operand, stated, text, kind_span, sub_span, out_span)


_INT = re.compile(r"[0-9][0-9_]*\Z")


def parse_sizes(text: str, *, what: str) -> tuple[tuple[str, str, tuple[int, int]], ...]:
    """Parse ``'X=8, Y:2'`` into ``(name, value text, span)`` triples.

    A name without ``=value`` (``'X,Y'``) gets the value ``'?'``, meaning symbolic.
    Surrounding braces and quotes (``{'X': 8}``) are tolerated.

    Raises:
        NotationError: the text is not a comma-separated list of assignments.
    """
    if not isinstance(text, str):
        raise NotationError(f"expected {what} text like X=8,Y=2, got {text!r}")
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
                    f"an empty entry in the {what} '{text}'",
                    text=text,
                    span=(start, start + max(1, len(part))),
                    hint=f"write the {what} as NAME=SIZE pairs separated by commas, e.g. X=8,Y=2",
                )
            continue
        lead = len(part) - len(part.lstrip())
        body = part.strip()
        m = re.match(r"([A-Za-z][A-Za-z0-9_']*)[ \t]*(?:[=:][ \t]*(.+))?\Z", body)
        if m is None:
            raise NotationError(
                f"cannot read '{_short(body)}' in the {what} '{_short(text)}'",
                text=text,
                span=(start + lead, start + lead + len(body)),
                hint=f"write the {what} as NAME=SIZE pairs separated by commas, e.g. X=8,Y=2",
            )
        value = m.group(2) if m.group(2) is not None else "?"
        out.append((m.group(1), value, (start + lead, start + lead + len(body))))
    if not out:
        raise NotationError(
            f"the {what} '{text}' is empty",
            text=text,
            span=(0, max(1, len(text))),
            hint=f"write the {what} as NAME=SIZE pairs separated by commas, e.g. X=8,Y=2",
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
            f"{what} entry {name}={value} is not a positive integer in '{text}'",
            text=text,
            span=span,
            hint=f"sizes are whole numbers such as {name}=1024 (or {name}=? to keep it symbolic)",
        )
    if n > MAX_SIZE:
        raise NotationError(
            f"{what} entry {name}={_short(value)} is larger than {MAX_SIZE:.0e} in '{_short(text)}'",
            text=text if len(text) <= 200 else None,
            span=span,
            hint="sizes beyond 1e18 are not meaningful here; check for a typo",
        )
    return n


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class MatmulSyntax:
    """A parsed matmul ``lhs · rhs -> out`` before its dims are checked.

    ``contracting`` holds the dims named under the operator (``X[B, D] ·_D Y[D, F]``),
    ``local`` is true for the book's ``·_LOCAL`` (multiply the local blocks, leave the
    result unreduced).
    """

    lhs: Array
    rhs: Array
    out: Array | None
    contracting: tuple[str, ...] | None
    local: bool
    text: str
    op_span: tuple[int, int]
    out_span: tuple[int, int] | None


def parse_matmul_syntax(text: str) -> MatmulSyntax:
    """Parse ``'A[I, J_X] · B[J_X, K] -> C[I, K]{U_X}'`` into its parts, unchecked.

    Raises:
        NotationError: the text is not ``array OP array [-> array]``.
    """
    p = _Parser(text)
    lhs, _ = p.array()
    op = p.peek()
    if op.kind != "OP":
        found = "the end" if op.kind == "END" else f"'{op.text}'"
        raise p.fail(
            f"expected a product sign (·, *, @ or \\cdot) after the first array but found {found}",
            op,
            "a matmul looks like A[I, J_X] · B[J_X, K] -> C[I, K]",
        )
    p.take()
    contracting: tuple[str, ...] | None = None
    local = False
    op_end = op.end
    if p.peek().kind == "_":
        p.take()
        tok = p.peek()
        if tok.kind == "{":
            p.take()
            raw = p.items("subscript of the product")
            names = tuple(name for name, _ in raw)
            op_end = p.toks[p.i - 1].end
        elif tok.kind == "IDENT":
            p.take()
            names = (tok.text,)
            op_end = tok.end
        else:
            raise p.fail(
                "expected the contracted dim or LOCAL after '·_'",
                tok,
                "write X[B, D] ·_D Y[D, F], or ·_LOCAL for the local product",
            )
        if names == ("LOCAL",):
            local = True
        else:
            contracting = names
    rhs, _ = p.array()
    out = None
    out_span = None
    if p.peek().kind == "ARROW":
        p.take()
        start = p.peek().start
        out, _ = p.array()
        out_span = (start, p.toks[p.i - 1].end)
    p.at_end("the matmul", "a matmul is array · array, optionally followed by -> array")
    return MatmulSyntax(lhs, rhs, out, contracting, local, text, (op.start, op_end), out_span)


def classify(text: str) -> str:
    """What kind of notation ``text`` is: ``'collective'``, ``'matmul'`` or ``'array'``.

    Raises:
        NotationError: the text cannot even be split into tokens.

    Examples:
        >>> classify("AllGather_X(A[I_X])"), classify("A[I_X]"), classify("psum[I]")
        ('collective', 'array', 'array')
        >>> classify("A[I, J_X] · B[J_X, K]")
        'matmul'
    """
    p = _Parser(text)
    if _match_kind(p) is not None and p.peek().kind in ("_", "("):
        return "collective"
    if any(t.kind == "OP" for t in p.toks):
        return "matmul"
    return "array"

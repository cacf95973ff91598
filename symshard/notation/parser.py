r"""Reading the book's sharding notation: the grammar of arrays, matmuls and collectives.

One hand-written pass: a lexer that also understands the LaTeX the book is
typeset in (:mod:`.lexer`), and here a recursive-descent parser whose every branch
raises a :class:`~symshard.errors.NotationError` that points at the offending spot.
The grammar below is the whole notation; size lists (``sizes``) need no tokens and
are read by :mod:`.sizes`.

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
               | "{" item { "," item } "," IDENT "}"   (* ReduceScatter_{X,K}: last item is a dim *)
               | "{" move { "," move } "}" ;           (* AllToAll_{X→H,Y→B}: moves in one exchange *)
    move       = item ARROW IDENT ;                    (* a run of axes, then the dim it goes to *)
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
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..errors import NotationError, ShardingError
from ..messages import Choices, Message, say
from .arrays import Array, Dim, check_array_rules, check_axis_name, register_readers
from .lexer import Token, check_balance, lex

__all__ = [
    "COLLECTIVE_KINDS",
    "CollectiveSyntax",
    "MatmulSyntax",
    "classify",
    "parse_array",
    "parse_collective_syntax",
    "parse_dim",
    "parse_matmul_syntax",
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


# -- the parser ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CollectiveSyntax:
    """A parsed collective before it is checked against its operand.

    ``dim`` is the dim named in ``ReduceScatter_{X,K}`` or ``AllToAll_{X,J}``;
    ``axes`` is None when the text gave no subscript (``AllReduce(C[I]{U_X})``);
    ``moves`` are an all-to-all's moves, each axes and the dim they go to, when it names them
    (``AllToAll_{X→H,Y→B}``: ``(("X",), "H"), (("Y",), "B")``; ``axes`` is then all of theirs).
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
    moves: tuple[tuple[tuple[str, ...], str], ...] = ()


def _found(tok: Token) -> Message | str:
    """What the parser found where it expected something else: the end, or the quoted token."""
    return say("the end") if tok.kind == "END" else f"'{tok.text}'"


class _Parser:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise NotationError(
                say("expected notation text, got {type} {value}", type=type(text).__name__, value=repr(text)),
                hint=say("pass a string such as {example}", example="'A[I_X, J]'"),
            )
        self.text = text
        self.toks = lex(text)
        check_balance(text, self.toks)
        self.i = 0

    # token helpers
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "END":
            self.i += 1
        return tok

    def fail(self, message: Message, tok: Token | tuple[int, int], hint: Message, cls=NotationError):
        span = (tok.start, max(tok.end, tok.start + 1)) if isinstance(tok, Token) else tok
        # an empty input is said apart: "in ''" reads as a slip in most languages
        where = (
            say("{what} in '{text}'", what=message, text=self.text) if self.text else say("{what} in ''", what=message)
        )
        return cls(where, text=self.text, span=span, hint=hint)

    def expect(self, kind: str, what: Message, hint: Message) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            raise self.fail(say("expected {what} but found {found}", what=what, found=_found(tok)), tok, hint)
        return self.take()

    def at_end(self, what: Message, hint: Message) -> None:
        tok = self.peek()
        if tok.kind != "END":
            raise self.fail(say("unexpected '{token}' after {what}", token=tok.text, what=what), tok, hint)

    # pieces
    def name(self) -> tuple[str, tuple[int, int]]:
        """NAME = IDENT { "_" IDENT }, stopping before "[" ."""
        first = self.expect("IDENT", say("a name"), say("names start with a letter"))
        name, start, end = first.text, first.start, first.end
        while self.peek().kind == "_" and self.peek(1).kind in ("IDENT", "NUMBER"):
            self.take()
            part = self.take()
            name += "_" + part.text
            end = part.end
        return name, (start, end)

    def items(self, what: Message) -> list[tuple[str, tuple[int, int]]]:
        """``{ a, b_c, XY }`` → raw items with spans (the "{" is already consumed)."""
        out: list[tuple[str, tuple[int, int]]] = []
        while True:
            tok = self.peek()
            if tok.kind == "}":
                raise self.fail(
                    say("empty {what}", what=what) if not out else say("a trailing ',' in the {what}", what=what),
                    tok,
                    say("name at least one mesh axis, e.g. I_{{X}} or I_{{data,model}}"),
                )
            if tok.kind not in ("IDENT", "NUMBER"):
                raise self.fail(
                    say("expected an axis name in the {what} but found {found}", what=what, found=_found(tok)),
                    tok,
                    say("write the axes as I_XY or I_{{data,model}}"),
                )
            item, span = self.name()
            out.append((item, span))
            if self.closed(what, say("separate axis names with commas: I_{{data,model}}")):
                return out

    def moves(self, what: Message) -> list[tuple[tuple[str, ...], str]]:
        """``{ X→H, YZ→B }`` → each move's axes and dim (the "{" is already consumed)."""
        out: list[tuple[tuple[str, ...], str]] = []
        while True:
            tok = self.peek()
            if tok.kind not in ("IDENT", "NUMBER"):
                raise self.fail(
                    say("expected an axis name in the {what} but found {found}", what=what, found=_found(tok)),
                    tok,
                    say("write each move as its axes, an arrow and a dim: AllToAll_{{X→H,Y→B}}"),
                )
            item, span = self.name()
            axes = tuple(a for a, _ in self.split_item(item, span))
            self.expect(
                "ARROW",
                say("'→' after the axes of a move in the {what}", what=what),
                say("write each move as its axes, an arrow and a dim: AllToAll_{{X→H,Y→B}}"),
            )
            dim = self.peek()
            if dim.kind != "IDENT" or not dim.text.isalnum():
                raise self.fail(
                    say("'{token}' is not a dim name", token=dim.text)
                    if dim.kind != "END"
                    else say("no dim after '→'"),
                    dim,
                    say("each move ends with the dim its axes go to: AllToAll_{{X→H,Y→B}}"),
                )
            self.take()
            out.append((axes, dim.text))
            if self.closed(what, say("separate the moves with commas: AllToAll_{{X→H,Y→B}}")):
                return out

    def closed(self, what: Message, hint: Message) -> bool:
        """Past the "," after an item of a braced list (False) or its closing "}" (True)."""
        nxt = self.take()
        if nxt.kind == "}":
            return True
        if nxt.kind != ",":
            raise self.fail(
                say("expected ',' or '}}' in the {what} but found {found}", what=what, found=_found(nxt)), nxt, hint
            )
        return False

    def split_item(self, item: str, span: tuple[int, int]) -> list[tuple[str, tuple[int, int]]]:
        """A braced item: a run of capitals is one axis per letter, anything else one name."""
        if len(item) > 1 and item.isalpha() and item.isupper():
            return [(ch, (span[0] + k, span[0] + k + 1)) for k, ch in enumerate(item)]
        check_axis_name(item, text=self.text, span=span)
        return [(item, span)]

    def axes(self, what: Message) -> tuple[list[tuple[str, tuple[int, int]]], tuple[int, int]]:
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
                    say("'{token}' is not a run of one-letter axis names", token=tok.text),
                    (tok.start + bad, tok.start + bad + 1),
                    say(
                        "unbraced axes are single letters (I_XY); write I_{{{token}}} for a longer name", token=tok.text
                    ),
                )
            axes = [(ch, (tok.start + k, tok.start + k + 1)) for k, ch in enumerate(tok.text)]
            return axes, (tok.start, tok.end)
        raise self.fail(
            say("expected mesh axes after '_' in the {what} but found {found}", what=what, found=_found(tok)),
            tok,
            say("write I_X, I_XY or I_{{data,model}}, or drop the '_' for an unsharded dim"),
        )

    def array(self) -> tuple[Array, dict]:
        start_tok = self.peek()
        if start_tok.kind == "[":
            name, name_span = "", (start_tok.start, start_tok.start)
        elif start_tok.kind == "IDENT":
            name, name_span = self.name()
        else:
            raise self.fail(
                say("expected {what} but found {found}", what=say("an array"), found=_found(start_tok)),
                start_tok,
                say("an array looks like A[I_X, J]"),
            )
        self.expect("[", say("'[' after the array name"), say("an array looks like A[I_X, J]"))
        spans: dict[tuple, tuple[int, int]] = {}
        dims: list[Dim] = []
        if self.peek().kind == "]":
            tok = self.peek()
            raise self.fail(
                say("array has no dims"),
                (start_tok.start, tok.end),
                say("list its dims inside the brackets, e.g. A[I, J]"),
            )
        while True:
            tok = self.peek()
            if tok.kind != "IDENT":
                raise self.fail(
                    say("found an empty dim")
                    if tok.kind in (",", "]")
                    else say("found {found} where a dim name belongs", found=_found(tok)),
                    tok,
                    say("dims are names like I or I_X, separated by commas"),
                )
            self.take()
            if not tok.text.isalnum():
                raise self.fail(
                    say("'{name}' is not a valid dim name", name=tok.text),
                    tok,
                    say("dim names contain letters and digits only"),
                )
            i = len(dims)
            spans[("dim", i)] = (tok.start, tok.end)
            axes: list[str] = []
            if self.peek().kind == "_":
                self.take()
                found_axes, _ = self.axes(say("sharding of {dim}", dim=tok.text))
                for j, (a, span) in enumerate(found_axes):
                    spans[("axis", i, j)] = span
                    axes.append(a)
            dims.append(Dim(tok.text, tuple(axes)))
            sep = self.take()
            if sep.kind == "]":
                break
            if sep.kind != ",":
                raise self.fail(
                    say("expected ',' or ']' after dim {dim} but found {found}", dim=tok.text, found=_found(sep)),
                    sep,
                    say("separate dims with commas, e.g. A[I_X, J]"),
                )
        unreduced: list[str] = []
        if self.peek().kind == "{":
            brace = self.take()
            u = self.peek()
            if not (u.kind == "IDENT" and u.text == "U" and self.peek(1).kind == "_"):
                raise self.fail(
                    say("expected U_ after '{{' (an unreduced marker)"),
                    u if u.kind != "END" else brace,
                    say("mark unreduced axes as {{U_X}} or {{U_XY}}"),
                )
            self.take()
            self.take()
            found_axes, _ = self.axes(say("unreduced marker"))
            for a, span in found_axes:
                if a in unreduced:
                    raise self.fail(
                        say("mesh axis {axis} is listed twice as unreduced", axis=a),
                        span,
                        say("list each axis once, e.g. {example}", example=f"{{U_{a}}}"),
                        ShardingError,
                    )
                unreduced.append(a)
                spans[("unreduced", a)] = span
            self.expect("}", say("'}}' closing the unreduced marker"), say("write {example}", example="{U_X}"))
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
        raise NotationError(
            say("expected an array as text, got {type}", type=type(text).__name__),
            hint=say("pass e.g. {example}", example="'A[I_X, J]'"),
        )
    return _parse_array(text)


@lru_cache(maxsize=4096)
def _parse_array(text: str) -> Array:
    p = _Parser(text)
    array, _ = p.array()
    p.at_end(say("the array"), say("one array per string; collectives look like AllGather_X(A[I_X])"))
    return array


def parse_dim(text: str) -> Dim:
    """Parse one dim such as ``'I_XY'`` or ``'B_{data}'``."""
    if not isinstance(text, str):
        raise NotationError(
            say("expected a dim as text, got {type}", type=type(text).__name__),
            hint=say("pass e.g. {example}", example="'I_X'"),
        )
    return _parse_dim(text)


@lru_cache(maxsize=1024)
def _parse_dim(text: str) -> Dim:
    p = _Parser(text)
    tok = p.expect("IDENT", say("a dim name"), say("a dim looks like I or I_X"))
    axes: tuple[str, ...] = ()
    if p.peek().kind == "_":
        p.take()
        found, _ = p.axes(say("sharding of {dim}", dim=tok.text))
        axes = tuple(a for a, _ in found)
    p.at_end(say("the dim"), say("a dim looks like I or I_X"))
    dims = (Dim(tok.text, axes),)
    spans = {("axis", 0, j): (0, len(text)) for j in range(len(axes))}
    check_array_rules("", dims, frozenset(), text, spans)
    return dims[0]


def _match_kind(p: _Parser) -> tuple[str, tuple[int, int]] | None:
    """If the text starts with a collective's name, consume it and return the kind."""
    parts: list[Token] = []
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
            say("expected a collective (AllGather, ReduceScatter, AllReduce, AllToAll, CollectivePermute)"),
            tok,
            say(
                "write e.g. {example}",
                example=Choices(["AllGather_X(A[I_X, J])", "ReduceScatter_{X,K}(C[I, K]{U_X})"]),
            ),
        )
    kind, kind_span = found
    axes: tuple[str, ...] | None = None
    dim: str | None = None
    moves: tuple[tuple[tuple[str, ...], str], ...] = ()
    sub_span = (kind_span[1], kind_span[1])
    if p.peek().kind == "_":
        p.take()
        tok = p.peek()
        if tok.kind == "{":
            p.take()
            what = say("subscript of {kind}", kind=kind)
            if kind == "AllToAll" and _arrow_before_brace(p):  # moves: AllToAll_{X→H,Y→B}
                moves = tuple(p.moves(what))
                axes = tuple(a for run, _ in moves for a in run)
                sub_span = (tok.start, p.toks[p.i - 1].end)
            else:
                raw = p.items(what)
                sub_span = (tok.start, p.toks[p.i - 1].end)
                if kind in ("ReduceScatter", "AllToAll", "DynamicSlice") and len(raw) >= 2:
                    dim_text, dim_span = raw[-1]
                    if not dim_text.isalnum():
                        raise p.fail(
                            say("'{token}' is not a dim name", token=dim_text),
                            dim_span,
                            say("the last item of {kind}_{{X,K}} names the dim to shard", kind=kind),
                        )
                    dim = dim_text
                    raw = raw[:-1]
                axes = tuple(a for item, span in raw for a, _ in p.split_item(item, span))
        else:
            found_axes, sub_span = p.axes(say("subscript of {kind}", kind=kind))
            axes = tuple(a for a, _ in found_axes)
    if p.peek().kind == "(":
        p.take()
        operand, _ = p.array()
        p.expect(
            ")",
            say("')' closing the operand of {kind}", kind=kind),
            say("write {example}", example=f"{kind}_X(A[I_X, J])"),
        )
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
        say("the collective"),
        say("a collective is KIND_axes(array), optionally followed by -> array"),
    )
    return CollectiveSyntax(kind, axes, dim, operand, stated, text, kind_span, sub_span, out_span, moves)


def _arrow_before_brace(p: _Parser) -> bool:
    """Whether an arrow comes before the "}" that closes the subscript: moves, not axes and a dim."""
    k = 0
    while p.peek(k).kind not in ("}", "END"):
        if p.peek(k).kind == "ARROW":
            return True
        k += 1
    return False


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
        raise p.fail(
            say(
                "expected a product sign (·, *, @ or \\cdot) after the first array but found {found}", found=_found(op)
            ),
            op,
            say("a matmul looks like A[I, J_X] · B[J_X, K] -> C[I, K]"),
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
            raw = p.items(say("subscript of the product"))
            names = tuple(name for name, _ in raw)
            op_end = p.toks[p.i - 1].end
        elif tok.kind == "IDENT":
            p.take()
            names = (tok.text,)
            op_end = tok.end
        else:
            raise p.fail(
                say("expected the contracted dim or LOCAL after '·_'"),
                tok,
                say("write X[B, D] ·_D Y[D, F], or ·_LOCAL for the local product"),
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
    p.at_end(say("the matmul"), say("a matmul is array · array, optionally followed by -> array"))
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


register_readers(array=parse_array, dim=parse_dim)

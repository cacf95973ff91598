"""Formulas written as text, read by symshard's own grammar and never by ``eval``.

Text that a person types (``--hw-set T_hop=1e-6``, a size to substitute, a formula in
a problem family) must never reach Python's ``eval`` or SymPy's ``sympify``, which
calls ``eval`` on strings. This module reads such text with a small hand-written
grammar and builds SymPy objects directly; :func:`as_expr` is the one door through
which any value, text or not, becomes a SymPy expression inside symshard.

The grammar (EBNF)::

    relation := sum [("<" | "<=" | ">" | ">=" | "==" | "!=") sum]
    sum      := product (("+" | "-") product)*
    product  := unary (("*" | "·" | "×" | "/") unary)*
    unary    := ("+" | "-") unary | power
    power    := atom [("**" | "^") unary]          right-associative: 2**3**2 = 2**9
    atom     := NUMBER | NAME | "|" NAME "|" | NAME "(" relation ("," relation)* ")" | "(" relation ")"
    NUMBER   := DIGITS ["." DIGITS] [("e" | "E") ["+" | "-"] DIGITS]    read exactly: 1e-6 = 1/1000000
    NAME     := a letter or "_", then letters, digits and "_"

Names resolve through a mapping the caller gives (a problem family's values), or by
default to symshard's symbols: a hardware constant by its name (``C``, ``W_ici``,
``T_hop``, ...), ``|X|`` to the size of mesh axis X and any other name to the size of
that array dim. Functions: ``max``, ``min``, ``abs``, ``sqrt``, ``log``, ``log2``,
``log10``, ``floor`` and ``ceil`` (also as SymPy prints them: ``Max``, ``ceiling``, ...).
Work is bounded: the text's length, its nesting and the size of numbers it can make.

Examples:
    >>> parse_math("4·E·F·(|Y| - 1)/(W_ici·|Y|)")
    4*E*F*(|Y| - 1)/(W_ici*|Y|)
    >>> parse_math("B < C/W_ici")
    B < C/W_ici
    >>> parse_math("1e-6"), parse_math("2^10")
    (1/1000000, 1024)
    >>> parse_math("__import__('os')")
    Traceback (most recent call last):
    ...
    symshard.errors.NotationError: unknown function '__import__' in '__import__('os')'
      __import__('os')
      ^^^^^^^^^^
    hint: the functions are abs, ceil, floor, log, log10, log2, max, min, sqrt
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import sympy

from ..errors import NotationError, did_you_mean
from ..messages import Message, say
from .symbols import HARDWARE_SYMBOLS, axis, dim

__all__ = ["MAX_DIGITS", "MAX_LENGTH", "as_expr", "as_substitution", "parse_math", "parse_number"]

MAX_LENGTH = 2000
"""The longest formula text read, in characters."""

MAX_DEPTH = 60
"""The deepest nesting of parentheses, calls and unary signs."""

MAX_DIGITS = 10_000
"""The most decimal digits a number built from the text may have (``10**10001`` is refused)."""

_MAX_EXPONENT = 400
"""The largest power of ten a written number may carry (``1e400``)."""

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op>\*\*|<=|>=|==|!=|[-+*/^<>()|,·×])
    )""",
    re.VERBOSE,
)

_FUNCTIONS: dict[str, Callable[..., sympy.Basic]] = {
    "max": sympy.Max,
    "min": sympy.Min,
    "abs": sympy.Abs,
    "sqrt": sympy.sqrt,
    "log": sympy.log,
    "log2": lambda x: sympy.log(x, 2),
    "log10": lambda x: sympy.log(x, 10),
    "floor": sympy.floor,
    "ceil": sympy.ceiling,
}
_ALIASES = {"Max": "max", "Min": "min", "Abs": "abs", "ceiling": "ceil"}
_ARITY = {"max": (1, 64), "min": (1, 64), "log": (1, 2)}

_RELATIONS = {"<": sympy.StrictLessThan, "<=": sympy.LessThan, ">": sympy.StrictGreaterThan,
              ">=": sympy.GreaterThan, "==": sympy.Eq, "!=": sympy.Ne}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # number, name, op, end
    text: str
    start: int
    end: int


def _error(message: Message, text: str, start: int, end: int, hint: str) -> NotationError:
    return NotationError(message, text=text, span=(start, max(end, start + 1)), hint=hint)


def _in_formula(message: Message, text: str) -> Message:
    """``message`` said of the formula ``text`` (the reader's errors all end this way)."""
    return say("{what} in formula '{text}'", what=message, text=text)


def _tokens(text: str) -> Iterator[_Token]:
    """The tokens of ``text``, read one at a time (so an error is reported where reading stopped)."""
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            yield _Token("end", "", at, at)
            return
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            raise _error(
                _in_formula(say("cannot read {char}", char=repr(text[at])), text),
                text,
                at,
                at + 1,
                say("a formula has numbers, names, + - * / ** ^, parentheses, comparisons and functions"),
            )
        kind = m.lastgroup or "op"
        yield _Token(kind, m.group(kind), m.start(kind), m.end())
        at = m.end()


def parse_number(text: str) -> sympy.Rational:
    """A decimal number read exactly: ``'1e-6'`` is 1/1000000, ``'3.4e12'`` an integer.

    Raises:
        NotationError: not a number, or one with more than 400 as its power of ten.

    Examples:
        >>> parse_number("3.4e12"), parse_number("0.25"), parse_number("1_000")
        (3400000000000, 1/4, 1000)
    """
    cleaned = text.strip().replace("_", "")
    m = re.fullmatch(r"([-+]?)([0-9]*\.?[0-9]*)(?:[eE]([-+]?[0-9]+))?", cleaned)
    if m is None or not any(ch.isdigit() for ch in m.group(2)):
        raise NotationError(
            say("'{text}' is not a number", text=text), hint=say("write digits, e.g. 4096, 0.5 or 3.4e12")
        )
    exponent = int(m.group(3) or 0)
    if abs(exponent) > _MAX_EXPONENT or len(m.group(2)) > MAX_DIGITS:
        raise NotationError(
            say("the number '{text}' is out of range", text=text),
            hint=say(
                "symshard reads numbers up to {high} and down to {low}",
                high=f"1e{_MAX_EXPONENT}",
                low=f"1e-{_MAX_EXPONENT}",
            ),
        )
    value = Fraction(m.group(2)) * Fraction(10) ** exponent
    if m.group(1) == "-":
        value = -value
    return sympy.Rational(value.numerator, value.denominator)


def _default_name(name: str) -> sympy.Basic:
    if name in HARDWARE_SYMBOLS:
        return HARDWARE_SYMBOLS[name]
    return dim(name)


class _Reader:
    """A recursive-descent reader over the tokens of one formula."""

    def __init__(self, text: str, resolve: Callable[[str, int, int], sympy.Basic]) -> None:
        self.text = text
        self.stream = _tokens(text)
        self.tokens: list[_Token] = []
        self.at = 0
        self.depth = 0
        self.resolve = resolve

    # -- helpers --

    @property
    def token(self) -> _Token:
        while len(self.tokens) <= self.at:
            self.tokens.append(next(self.stream))
        return self.tokens[self.at]

    def take(self) -> _Token:
        tok = self.token
        self.at += 1
        return tok

    def accept(self, *ops: str) -> _Token | None:
        tok = self.token
        if tok.kind == "op" and tok.text in ops:
            self.at += 1
            return tok
        return None

    def expect(self, op: str, what: Message | str) -> _Token:
        tok = self.token
        if tok.kind == "op" and tok.text == op:
            self.at += 1
            return tok
        shown = say("the end") if tok.kind == "end" else repr(tok.text)
        raise self.fail(say("expected {what} but found {found}", what=what, found=shown), tok,
                        say("close it with '{op}'", op=op))  # fmt: skip

    def fail(self, message: Message, tok: _Token, hint: str) -> NotationError:
        return _error(_in_formula(message, self.text), self.text, tok.start, tok.end, hint)

    def deeper(self, tok: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(say("nesting deeper than {depth}", depth=MAX_DEPTH), tok, say("write a flatter formula"))

    # -- grammar --

    def formula(self) -> sympy.Basic:
        value = self.relation()
        if self.token.kind != "end":
            raise self.fail(say("unexpected {token}", token=repr(self.token.text)), self.token,
                            say("an operator (+ - * / ** <) or the end of the formula belongs here"))  # fmt: skip
        return value

    def relation(self) -> sympy.Basic:
        left = self.sum()
        tok = self.accept(*_RELATIONS)
        if tok is None:
            return left
        right = self.sum()
        if self.token.kind == "op" and self.token.text in _RELATIONS:
            raise self.fail(
                say("a chain of comparisons"),
                self.token,
                say("write one comparison, e.g. {example}", example="B < C/W_ici"),
            )
        try:
            return _RELATIONS[tok.text](left, right)
        except TypeError as err:
            raise self.fail(
                say("cannot compare these ({why})", why=str(err)), tok, say("compare numbers or formulas")
            ) from None

    def sum(self) -> sympy.Basic:
        value = self.product()
        while (tok := self.accept("+", "-")) is not None:
            right = self.product()
            value = _checked(value + right if tok.text == "+" else value - right, self, tok)
        return value

    def product(self) -> sympy.Basic:
        value = self.unary()
        while (tok := self.accept("*", "·", "×", "/")) is not None:
            right = self.unary()
            if tok.text == "/":
                if right == 0:
                    raise self.fail(say("division by zero"), tok, say("divide by something other than 0"))
                value = value / right
            else:
                value = value * right
            value = _checked(value, self, tok)
        return value

    def unary(self) -> sympy.Basic:
        tok = self.accept("+", "-")
        if tok is None:
            return self.power()
        self.deeper(tok)
        value = self.unary()
        self.depth -= 1
        return -value if tok.text == "-" else value

    def power(self) -> sympy.Basic:
        base = self.atom()
        tok = self.accept("**", "^")
        if tok is None:
            return base
        self.deeper(tok)
        exponent = self.unary()
        self.depth -= 1
        _check_power(base, exponent, self, tok)
        if base == 0 and exponent.is_number and exponent.is_negative:
            raise self.fail(say("0 to a negative power"), tok, say("divide by something other than 0"))
        return _checked(base**exponent, self, tok)

    def atom(self) -> sympy.Basic:
        tok = self.take()
        if tok.kind == "number":
            try:
                return parse_number(tok.text)
            except NotationError as err:
                raise self.fail(cast(Message, err.message), tok, err.hint or "") from None
        if tok.kind == "name":
            if self.token.kind == "op" and self.token.text == "(":
                return self.call(tok)
            return self.resolve(tok.text, tok.start, tok.end)
        if tok.kind == "op" and tok.text == "|":
            name = self.take()
            if name.kind != "name":
                raise self.fail(say("'|' must enclose a mesh axis name"), name, say("write |X| for the size of axis X"))
            self.expect("|", say("'|' after the axis name"))
            return self.resolve(f"|{name.text}|", tok.start, name.end + 1)
        if tok.kind == "op" and tok.text == "(":
            self.deeper(tok)
            value = self.relation()
            self.expect(")", "')'")
            self.depth -= 1
            return value
        shown = say("the end of the formula") if tok.kind == "end" else repr(tok.text)
        raise self.fail(say("expected {what} but found {found}", what=say("a number, a name or '('"), found=shown), tok,
                        say("e.g. 2*B*D/C or max(T_hop, V/W_ici)"))  # fmt: skip

    def call(self, name: _Token) -> sympy.Basic:
        key = _ALIASES.get(name.text, name.text)
        if key not in _FUNCTIONS:
            raise _error(say("{what} in '{text}'", what=say("unknown function '{name}'", name=name.text), text=self.text),
                         self.text, name.start, name.end,
                         say("the functions are {names}", names=", ".join(sorted(_FUNCTIONS))))  # fmt: skip
        open_ = self.expect("(", "'('")
        self.deeper(open_)
        args = [self.relation()]
        while self.accept(","):
            args.append(self.relation())
        self.expect(")", "')'")
        self.depth -= 1
        low, high = _ARITY.get(key, (1, 1))
        if not low <= len(args) <= high:
            if low != high:
                said = say("{name}() takes {low} to {high} {high:argument|arguments}, not {count}",
                           name=name.text, low=low, high=high, count=len(args))  # fmt: skip
            else:
                said = say("{name}() takes {want} {want:argument|arguments}, not {count}", name=name.text, want=low,
                           count=len(args))  # fmt: skip
            raise self.fail(said, name, say("e.g. {example}", example=f"{key}(x)" if high == 1 else f"{key}(a, b)"))
        try:
            return _FUNCTIONS[key](*args)
        except (TypeError, ValueError) as err:
            raise self.fail(
                say("{name}() cannot take these arguments ({why})", name=name.text, why=str(err)),
                name,
                say("pass numbers or formulas"),
            ) from None


def _digits(value: sympy.Basic) -> float:
    """About how many decimal digits the numerator and denominator of a rational take."""
    if not isinstance(value, sympy.Rational):
        return 0.0
    p, q = abs(int(value.p)), int(value.q)
    return max(p.bit_length(), q.bit_length()) * math.log10(2)


def _check_power(base: sympy.Basic, exponent: sympy.Basic, reader: _Reader, tok: _Token) -> None:
    """Refuse a power whose exact value would be a huge number (``7**1000000``)."""
    if not exponent.is_Rational:
        return  # a symbolic exponent stays an unevaluated power
    size = abs(float(exponent))
    if base.is_Rational:
        digits = max(_digits(base), 1.0) * size
        if base not in (0, 1, -1) and digits > MAX_DIGITS:
            raise reader.fail(say("the power makes a number of about {digits} {digits:digit|digits}", digits=f"{digits:.3g}"), tok,
                              say("symshard computes exact numbers up to {digits} {digits:digit|digits}", digits=f"{MAX_DIGITS:,}"))  # fmt: skip
    elif size > MAX_DIGITS:
        raise reader.fail(
            say("the exponent {exponent} is too large", exponent=str(exponent)),
            tok,
            say("use exponents up to {limit}", limit=f"{MAX_DIGITS:,}"),
        )


def _checked(value: sympy.Basic, reader: _Reader, tok: _Token) -> sympy.Basic:
    if _digits(value) > MAX_DIGITS:
        raise reader.fail(
            say("the result has more than {digits} {digits:digit|digits}", digits=f"{MAX_DIGITS:,}"),
            tok,
            say("use smaller numbers"),
        )
    return value


def parse_math(
    text: str,
    names: Mapping[str, object] | Callable[[str], object] | None = None,
) -> sympy.Basic:
    """Read ``text`` as a formula and return its SymPy value.

    Args:
        text: the formula, e.g. ``"2*B*D/C"``, ``"B < C/W_ici"`` or ``"1e-6"``.
        names: what names mean: a mapping from name to value (only those names are
            known), a function from name to value (raising ``KeyError`` for unknown
            names), or None for symshard's symbols (hardware constants by name,
            ``|X|`` an axis size, any other name a dim size).

    Raises:
        NotationError: the text breaks the grammar, names something unknown, or
            would build a number too large to compute; the message points at the spot.

    Examples:
        >>> parse_math("2*B*D/C", {"B": 16, "D": 1024, "C": 10})
        16384/5
        >>> parse_math("x + 1", {"y": 2})
        Traceback (most recent call last):
        ...
        symshard.errors.NotationError: unknown name 'x' in formula 'x + 1'
          x + 1
          ^
        hint: the names here are y
    """
    if not isinstance(text, str):
        raise NotationError(
            say("a formula must be text, not {type}", type=type(text).__name__), hint=say("pass a string")
        )
    if len(text) > MAX_LENGTH:
        raise NotationError(
            say(
                "a formula of {count} {count:character|characters} is too long (at most {limit})",
                count=f"{len(text):,}",
                limit=f"{MAX_LENGTH:,}",
            ),
            hint=say("write a shorter formula, or build it from values"),
        )
    known: list[str] = sorted(names) if isinstance(names, Mapping) else []

    def resolve(name: str, start: int, end: int) -> sympy.Basic:
        if names is None:
            if name.startswith("|"):
                return axis(name[1:-1])
            return _default_name(name)
        try:
            value = names[name] if isinstance(names, Mapping) else names(name)
        except KeyError:
            hint = did_you_mean(name, known) if known else say("use a value that is defined")
            if known and not hint.startswith("did you mean"):
                hint = say(
                    "the names here are {names}", names=", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
                )
            raise _error(_in_formula(say("unknown name '{name}'", name=name), text), text, start, end, hint) from None
        try:
            return as_expr(value)
        except (TypeError, NotationError):
            raise _error(say("{what} in '{text}'", what=say("'{name}' is not a number or formula", name=name), text=text),
                         text, start, end, say("use names whose values are numbers or formulas")) from None  # fmt: skip

    return _Reader(text, resolve).formula()


def as_expr(value: object, names: Mapping[str, object] | Callable[[str], object] | None = None) -> sympy.Basic:
    """Any value as a SymPy object, text read by :func:`parse_math` (never by ``eval``).

    SymPy objects pass through; Python numbers, fractions and booleans convert exactly
    as SymPy converts them; text is read with the grammar above.

    Raises:
        NotationError: text that is not a formula.
        TypeError: a value that is neither a number, a formula nor text.

    Examples:
        >>> as_expr(3), as_expr(0.5), as_expr("E*F/2")
        (3, 0.500000000000000, E*F/2)
    """
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str):
        return parse_math(value, names)
    try:
        return sympy.sympify(value, strict=True)  # strict: numbers and SymPy-like objects, never text
    except sympy.SympifyError:
        raise TypeError(f"{type(value).__name__} {value!r:.60} is not a number or a formula") from None


def as_substitution(values: Mapping[object, object]) -> dict[sympy.Basic, sympy.Basic]:
    """A mapping of names or symbols to values, as SymPy objects on both sides.

    Keys may be symbols or text (``'E'``, ``'|X|'``, ``'W_ici'``, read by :func:`parse_math`
    with symshard's symbols), so ``expr.subs(as_substitution({'E': 2048}))`` substitutes
    the dim E and never hands text to SymPy (whose ``subs`` would ``eval`` it).

    Raises:
        NotationError: a key or value that is not a formula.
        TypeError: a value that is neither a number, a formula nor text.

    Examples:
        >>> from symshard.algebra.symbols import W_ici
        >>> as_substitution({"E": 2048, "|X|": 4, W_ici: "9e10"})
        {E: 2048, |X|: 4, W_ici: 90000000000}
    """
    return {as_expr(k): as_expr(v) for k, v in values.items()}

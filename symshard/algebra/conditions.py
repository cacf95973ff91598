"""Conditions: unions of cases of relations, printable as text and LaTeX, checked at a point, and
evaluated on a chip; and SymPy's solving of general inequalities for them.

A :class:`Condition` is what :func:`~symshard.planning.crossovers.compare` and the layer schemes
(:mod:`symshard.models.schemes`) answer with: a union of labelled :class:`Case` objects, each a
conjunction of SymPy relations (``B < C/W_ici``). Conditions that
:func:`~symshard.planning.crossovers.compare` derives also keep the exact inequalities their relations
stand for (:mod:`symshard.algebra.inequalities`), so that substituting numbers, or checking a point,
works on sums of monomials; others (the schemes') go through SymPy's solving here
(:func:`solve_less`).

Examples:
    >>> B, C, W = sympy.symbols("B C W", positive=True)
    >>> Condition((Case("small batch", (sympy.Lt(B, C / W),)),)).text()
    'B < C/W'
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy

from ..errors import NotationError
from ..messages import AllOf, AnyOf, Message, say
from .domains import Domain
from .inequalities import Relation, minimal, solve
from .mathtext import as_expr, as_substitution
from .substitution import SubstitutionLike, names_of, substitution
from .symbols import is_axis_symbol, latex
from .units import pretty, sig

__all__ = ["Case", "Clauses", "Condition", "drop_subsumed", "merge_bounds", "merge_labels", "solve_less"]

_TRUE, _FALSE = sympy.true, sympy.false


# -- conditions -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """A conjunction of relations, with a label saying which regimes it covers.

    ``exact`` holds, when the case comes from :func:`~symshard.planning.crossovers.compare`, the
    :class:`~symshard.algebra.inequalities.Relation` each of ``relations`` prints, with the inequality it
    stands for.
    """

    label: str
    relations: tuple[sympy.Basic, ...]
    exact: tuple[Relation, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def of(cls, label: str, relations: Sequence[Relation]) -> Case:
        """A case from exact relations."""
        return cls(label, tuple(r.relational() for r in relations), tuple(relations))

    def text(self) -> str:
        """The relations joined by "and" (a message: the words are said in any language)."""
        if not self.relations:
            return say("always")
        return say("{relations}", relations=AllOf(_rel_text(r) for r in self.relations))

    def latex(self) -> str:
        if not self.relations:
            return r"\text{always}"
        return r" \land ".join(_rel_latex(r) for r in self.relations)


@dataclass(frozen=True, slots=True)
class Condition:
    """A union of cases; empty means never, a case with no relations means always."""

    cases: tuple[Case, ...]
    domain: Domain | None = field(default=None, compare=False, repr=False)
    split: bool = field(default=True, compare=False, repr=False)

    @classmethod
    def of(cls, cases: Sequence[tuple[str, Sequence[Relation]]], domain: Domain, split: bool = True) -> Condition:
        """A condition from exact labelled cases (already simplified); ``split`` says how its relations
        are solved again when numbers are put in (see :func:`~symshard.algebra.inequalities.solve`)."""
        return cls(tuple(Case.of(label, rels) for label, rels in cases), domain, split)

    def key(self) -> tuple:
        """What identifies the condition: its cases' relations (two conditions with one key say the same)."""
        return tuple(sorted(tuple(sorted(map(str, c.relations))) for c in self.cases))

    @property
    def exact(self) -> bool:
        """Whether every case keeps its exact inequalities (see :class:`Case`)."""
        return self.domain is not None and all(c.exact or not c.relations for c in self.cases)

    @property
    def never(self) -> bool:
        return not self.cases

    @property
    def always(self) -> bool:
        return any(not c.relations for c in self.cases)

    def text(self) -> str:
        """``B < C/W_ici``, or several cases joined by ``or``."""
        if self.never:
            return say("never")
        if self.always:
            return say("always")
        if len(self.cases) == 1:
            return self.cases[0].text()
        return say("{cases}", cases=AnyOf(say("({case})", case=c.text()) for c in self.cases))

    def latex(self) -> str:
        if self.never:
            return r"\text{never}"
        if self.always:
            return r"\text{always}"
        if len(self.cases) == 1:
            return self.cases[0].latex()
        return r" \lor ".join(f"\\left({c.latex()}\\right)" for c in self.cases)

    @property
    def symbols(self) -> frozenset[sympy.Symbol]:
        """The symbols the condition's relations hold."""
        return frozenset(s for c in self.cases for r in c.relations for s in as_expr(r).free_symbols)  # type: ignore[misc]

    def subs(self, values: SubstitutionLike, symbol: sympy.Symbol | str | None = None) -> Condition:
        """The condition with numbers substituted, re-simplified (cases that become false vanish), each
        relation solved for ``symbol`` where it appears.

        ``values`` is ``{W_ici: 9e10}``, ``{"W_ici": 9e10}`` or ``"C=4.59e14, W_ici=9e10"``; names (and
        ``symbol`` given as a name) resolve to the symbols the condition holds.

        Raises:
            UnknownSymbolError: a name the condition does not contain.

        Examples:
            >>> B, C, W = sympy.symbols("B C W", positive=True)
            >>> Condition((Case("", (sympy.Lt(B, C / W),)),)).subs("C=6, W=2").text()
            'B < 3'
        """
        point = substitution(values, self.symbols, what=say("the condition"))
        symbol = _symbol_named(symbol, self.symbols)
        if self.exact and self.domain is not None:
            return self._subs_exact(point, symbol, self.domain)
        cases = []
        for c in self.cases:
            rels = [_simplify_rel(as_expr(r).subs(point), symbol) for r in c.relations]
            merged = merge_bounds(rels, symbol)
            if merged is None:
                continue
            cases.append(Case(c.label, merged))
        return Condition(drop_subsumed(cases))

    def _subs_exact(self, values: Mapping, symbol: sympy.Symbol | None, domain: Domain) -> Condition:
        numbers = {k: _fraction(v) for k, v in as_substitution(values).items()}
        left = Domain.of(
            domain.axes - set(numbers),
            {d: gs for d, gs in domain.groups.items() if d not in numbers},
            {d: f for d, f in domain.floors.items() if d not in numbers},
        )
        labelled: list[tuple[str, list[Relation]]] = []
        for c in self.cases:
            parts = [solve(r.source.substitute(numbers), symbol, left, self.split) for r in c.exact]
            for combo in itertools.product(*parts):
                labelled.append((c.label, [rel for part in combo for rel in part]))
        return Condition.of(minimal(labelled, left, merge_labels), left, self.split)

    def holds(self, values: Mapping) -> bool | None:
        """Whether the condition holds at a point (None if it cannot be decided)."""
        if self.exact:
            try:
                numbers = {as_expr(k): _fraction(v) for k, v in values.items()}
                return any(all(r.holds(numbers) for r in c.exact) for c in self.cases)
            except (KeyError, TypeError, ValueError):
                pass  # a symbol without a value: SymPy decides what it can
        point = {as_expr(k): as_expr(v) for k, v in values.items()}
        result = False
        for c in self.cases:
            truth = True
            for r in c.relations:
                v = as_expr(r).xreplace(point)
                if v in (_TRUE, True):
                    continue
                if v in (_FALSE, False):
                    truth = False
                    break
                return None
            result = result or truth
        return result


def _symbol_named(symbol: sympy.Symbol | str | None, present: frozenset[sympy.Symbol]) -> sympy.Symbol | None:
    """``symbol`` as one of the symbols ``present`` when given by name (the name need not be present)."""
    if not isinstance(symbol, str):
        return symbol
    names = names_of(present)
    if symbol.strip() in names:
        return names[symbol.strip()]
    found = as_expr(symbol)
    if not isinstance(found, sympy.Symbol):
        raise NotationError(
            say("'{symbol}' is not a symbol to solve for", symbol=symbol), hint=say("name one symbol, like 'B'")
        )
    return found


def _fraction(value: object) -> Fraction:
    """An exact number as a Fraction (a SymPy rational, an int, a Fraction)."""
    v = as_expr(value)
    if not v.is_Rational:
        raise ValueError(f"not an exact number: {value!r}")
    return Fraction(int(v.p), int(v.q))


def _rel_text(r: sympy.Basic) -> str:
    if isinstance(r, sympy.Eq):
        text = f"{pretty(r.lhs)} = {pretty(r.rhs)}"
    else:
        text = pretty(r).replace("<=", "≤").replace(">=", "≥")
    if isinstance(r, sympy.core.relational.Relational):
        side = r.rhs if isinstance(r.lhs, sympy.Symbol) else r.lhs
        if side.is_number and not side.is_Integer:
            text += f" (≈ {sig(float(side), 4)})"
    return text


def _rel_latex(r: sympy.Basic) -> str:
    return latex(r)


# -- solving ---------------------------------------------------------------------------------


def _preferred_symbol(expr: sympy.Basic) -> sympy.Symbol | None:
    """The symbol to isolate in a condition free of the chosen one: a dim, else an axis, else any."""
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    dims = [s for s in syms if s.is_integer and not is_axis_symbol(s)]
    axes = [s for s in syms if is_axis_symbol(s)]
    for group in (dims, axes, syms):
        if group:
            return group[0]
    return None


def _simplify_rel(rel: sympy.Basic, symbol: sympy.Symbol | None) -> sympy.Basic:
    """Tidy one relation: decide it if possible, else solve it for the symbol it is best read in."""
    out = _solve_rel(rel, symbol)
    if isinstance(out, sympy.core.relational.Relational):
        if isinstance(out.lhs, sympy.Symbol) and out.lhs not in out.rhs.free_symbols:
            return out.func(out.lhs, _tidy_expr(out.rhs))
        if isinstance(out.rhs, sympy.Symbol) and out.rhs not in out.lhs.free_symbols:
            return out.reversed.func(out.rhs, _tidy_expr(out.lhs))
    return out


def _solve_rel(rel: sympy.Basic, symbol: sympy.Symbol | None) -> sympy.Basic:
    rel = as_expr(rel)
    if rel in (_TRUE, _FALSE) or not isinstance(rel, sympy.core.relational.Relational):
        return rel
    target = symbol if symbol is not None and symbol in rel.free_symbols else _preferred_symbol(rel)
    if target is None:
        return as_expr(bool(rel)) if rel.is_number else rel
    lhs, rhs = rel.lhs, rel.rhs
    if isinstance(rel, sympy.Eq):
        zero = _zero_cases(lhs - rhs)
        if not zero:
            return _FALSE
        if any(not c for c in zero):
            return _TRUE
        return zero[0][0] if len(zero) == 1 and len(zero[0]) == 1 else rel
    if isinstance(rel, sympy.Ne):
        return rel
    strict = isinstance(rel, (sympy.StrictLessThan, sympy.StrictGreaterThan))
    if isinstance(rel, (sympy.GreaterThan, sympy.StrictGreaterThan)):
        lhs, rhs = rhs, lhs
    cases = solve_less(lhs, rhs, target, strict=strict)
    if len(cases) == 1 and len(cases[0]) == 1:
        return cases[0][0]
    if not cases:
        return _FALSE
    if any(not c for c in cases):
        return _TRUE
    return rel


def solve_less(lhs: sympy.Expr, rhs: sympy.Expr, x: sympy.Symbol, *, strict: bool = True) -> list[list[sympy.Basic]]:
    """Solve ``lhs < rhs`` (or ``<=``) for the positive symbol ``x``.

    Returns a union of cases, each a list of relations (in ``x`` when it matters);
    ``[]`` means never and ``[[]]`` always. When a coefficient's sign is unknown the
    answer splits on it.

    Examples:
        >>> B, C, W = sympy.symbols("B C W", positive=True)
        >>> solve_less(2 * B / C, 2 / W, B)
        [[B < C/W]]
    """
    h = sympy.together(as_expr(lhs) - as_expr(rhs))
    num, den = sympy.fraction(h)
    if den.is_negative:
        num, den = -num, -den
    if not den.is_positive:
        den_e = sympy.factor(den)
        if not den_e.is_positive:
            rel = sympy.Lt(lhs, rhs) if strict else sympy.Le(lhs, rhs)
            return [[rel]]
    num = sympy.expand(num)
    if x not in num.free_symbols:
        return _sign_cases(num, strict)
    try:
        poly = sympy.Poly(num, x)
    except sympy.PolynomialError:
        rel = sympy.Lt(lhs, rhs) if strict else sympy.Le(lhs, rhs)
        return [[rel]]
    if poly.degree() == 1:
        a, b = poly.all_coeffs()
        bound = _tidy_expr(-b / a)
        below = sympy.Lt(x, bound) if strict else sympy.Le(x, bound)
        above = sympy.Gt(x, bound) if strict else sympy.Ge(x, bound)
        sign = sympy.factor(_at_least_two(a))
        if sign.is_positive:
            return [c for c in [_tidy([below], x)] if c is not None]
        if sign.is_negative:
            return [c for c in [_tidy([above], x)] if c is not None]
        out = []
        for sign_case in _sign_cases(-a, True):  # a > 0
            out.append(_tidy([*sign_case, below], x))
        for sign_case in _sign_cases(a, True):  # a < 0
            out.append(_tidy([*sign_case, above], x))
        # a = 0: the condition no longer depends on x
        for zero_case in _zero_cases(a):
            for rest in _sign_cases(b, strict):
                out.append(_tidy([*zero_case, *rest], x))
        return [c for c in out if c is not None]
    try:
        solved = sympy.solve_univariate_inequality(
            (num < 0) if strict else (num <= 0), x, relational=True, domain=sympy.Interval.open(0, sympy.oo)
        )
    except (NotImplementedError, TypeError, ValueError):
        rel = sympy.Lt(lhs, rhs) if strict else sympy.Le(lhs, rhs)
        return [[rel]]
    if solved == _TRUE:
        return [[]]
    if solved == _FALSE:
        return []
    return [[solved]]


def _at_least_two(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every mesh-axis size ``|X|`` written ``2 + k`` (``k ≥ 0``): symbolic costs
    assume an axis of at least two devices, and this lets SymPy's sign reasoning use that."""
    subs = {
        s: sympy.Dummy(f"k_{s.name}", integer=True, nonnegative=True) + 2
        for s in as_expr(expr).free_symbols
        if is_axis_symbol(s)
    }
    return as_expr(expr).xreplace(subs) if subs else as_expr(expr)


def _zero_cases(expr: sympy.Expr) -> list[list[sympy.Basic]]:
    """Cases for ``expr = 0``: never if its sign is known, else the equation solved for a preferred symbol."""
    probe = sympy.factor(_at_least_two(expr))
    if probe.is_positive or probe.is_negative:
        return []
    if probe.is_zero:
        return [[]]
    # a positive factor (F, 4, ...) does not change where the expression is zero: drop it
    factors = sympy.Mul.make_args(sympy.factor(expr))
    kept = [f for f in factors if not sympy.factor(_at_least_two(f)).is_positive]
    if kept and len(kept) < len(factors):
        expr = sympy.Mul(*kept)
    target = _preferred_symbol(expr)
    if target is not None:
        try:
            roots = sympy.solve(sympy.Eq(expr, 0), target)
        except (NotImplementedError, TypeError, ValueError):
            roots = []
        if len(roots) == 1:
            root = _tidy_expr(roots[0])
            if root.is_number and root <= 0 and target.is_positive:
                return []
            return [[sympy.Eq(target, root)]]
    return [[sympy.Eq(expr, 0)]]


def _tidy_expr(expr: sympy.Expr) -> sympy.Expr:
    """A readable form: factored, with a denominator that does not start with a minus sign."""
    expr = sympy.factor(sympy.cancel(expr))
    num, den = sympy.fraction(expr)
    if den.could_extract_minus_sign():
        num, den = -num, -den
    if num.could_extract_minus_sign() and den.is_Add:
        num, den = -num, sympy.expand(-den)
    return num / den


def _sign_cases(expr: sympy.Expr, strict: bool) -> list[list[sympy.Basic]]:
    """Cases for ``expr < 0`` (``<= 0``) when ``expr`` is free of the solved symbol."""
    expr = sympy.expand(expr)
    factored = sympy.factor(_at_least_two(expr))
    if factored.is_negative or (not strict and factored.is_nonpositive):
        return [[]]
    if factored.is_nonnegative and (strict or factored.is_positive):
        return []
    rel = sympy.Lt(expr, 0) if strict else sympy.Le(expr, 0)
    tidy = _simplify_rel(rel, None) if _preferred_symbol(expr) is not None else rel
    if tidy == _TRUE:
        return [[]]
    if tidy == _FALSE:
        return []
    return [[tidy]]


def _tidy(relations: list[sympy.Basic], x: sympy.Symbol) -> list[sympy.Basic] | None:
    out = []
    for r in relations:
        r = as_expr(r)
        if r == _TRUE:
            continue
        if r == _FALSE:
            return None
        # x is positive: "x > (something not positive)" says nothing
        if isinstance(r, (sympy.StrictGreaterThan, sympy.GreaterThan)) and r.lhs == x and r.rhs.is_nonpositive:
            continue
        if isinstance(r, (sympy.StrictLessThan, sympy.LessThan)) and r.lhs == x and r.rhs.is_nonpositive:
            return None
        out.append(r)
    return out


_LOWER = (sympy.StrictGreaterThan, sympy.GreaterThan)
_UPPER = (sympy.StrictLessThan, sympy.LessThan)


def _bound_of(r: sympy.Basic) -> tuple[sympy.Symbol, str, sympy.Expr, bool] | None:
    """``(symbol, 'low'|'high', bound, strict)`` for a relation ``symbol OP bound``."""
    if isinstance(r, sympy.core.relational.Relational) and isinstance(r.lhs, sympy.Symbol):
        if isinstance(r, _LOWER):
            return r.lhs, "low", r.rhs, isinstance(r, sympy.StrictGreaterThan)
        if isinstance(r, _UPPER):
            return r.lhs, "high", r.rhs, isinstance(r, sympy.StrictLessThan)
    return None


def _compare_bounds(b1: sympy.Expr, b2: sympy.Expr) -> str | None:
    """How ``b1`` compares with ``b2`` when SymPy can prove it: 'lt', 'le', 'eq', 'ge', 'gt', else None.

    Besides plain numbers this uses the symbols' assumptions through the ratio of
    two positive bounds (``C·|X|/W`` is at least ``C/W`` because ``|X| ≥ 1``).
    """
    if b1 == b2:
        return "eq"
    flip = {"lt": "gt", "le": "ge", "eq": "eq", "ge": "le", "gt": "lt"}
    one_way = _compare_one_way(b1, b2)
    if one_way is not None:
        return one_way
    other = _compare_one_way(b2, b1)
    return flip[other] if other is not None else None


def _compare_one_way(b1: sympy.Expr, b2: sympy.Expr) -> str | None:
    ratio = (sympy.cancel(b1 / b2) - 1) if b2.is_positive else None
    for probe in (sympy.factor(_at_least_two(b1 - b2)), None if ratio is None else sympy.factor(_at_least_two(ratio))):
        if probe is None:
            continue
        if probe.is_zero:
            return "eq"
        if probe.is_positive:
            return "gt"
        if probe.is_negative:
            return "lt"
        if probe.is_nonnegative:
            return "ge"
        if probe.is_nonpositive:
            return "le"
    return None


def merge_bounds(relations: Sequence[sympy.Basic], x: sympy.Symbol | None) -> tuple[sympy.Basic, ...] | None:
    """Keep the tightest of comparable bounds on each symbol; None if two of them contradict.

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> B = dim("B")
        >>> merge_bounds([B > 8, B > 16, B < 64], B)
        (B > 16, B < 64)
        >>> merge_bounds([B > 64, B < 8], B) is None
        True
    """
    relations = list(dict.fromkeys(as_expr(r) for r in relations))
    for r in relations:
        if r == _FALSE:
            return None
    checked = _apply_equalities([r for r in relations if r != _TRUE])
    if checked is None:
        return None
    relations = checked
    bounds = {i: _bound_of(r) for i, r in enumerate(relations)}
    drop: set[int] = set()
    for i, j in itertools.combinations(range(len(relations)), 2):
        bi, bj = bounds[i], bounds[j]
        if bi is None or bj is None or bi[0] != bj[0] or i in drop or j in drop:
            continue
        order = _compare_bounds(bi[2], bj[2])
        if order is None:
            continue
        if bi[1] == bj[1]:
            # two lower (upper) bounds: keep the larger (smaller), the stricter on a tie
            if order == "eq":
                drop.add(j if bi[3] or not bj[3] else i)
            elif (order in ("gt", "ge")) == (bi[1] == "low"):
                drop.add(j)
            else:
                drop.add(i)
        else:
            flip = {"lt": "gt", "le": "ge", "eq": "eq", "ge": "le", "gt": "lt"}
            gap = order if bi[1] == "low" else flip[order]  # how the lower bound compares with the upper
            strict = bi[3] or bj[3]
            if gap == "gt" or (gap in ("ge", "eq") and strict):
                return None
    kept = tuple(r for k, r in enumerate(relations) if k not in drop)
    equal = {r.lhs: r.rhs for r in kept if isinstance(r, sympy.Eq) and isinstance(r.lhs, sympy.Symbol)}
    if equal:
        # the bounds on other symbols must also agree once the pinned value is put in (B > 3·D/4 with
        # D = C·|X|/W and B < C/W cannot all hold when |X| ≥ 2); the case is still shown as written
        rest = [r.subs(equal) for r in kept if not (isinstance(r, sympy.Eq) and r.lhs in equal)]
        if merge_bounds(rest, x) is None:
            return None
    return kept


def _apply_equalities(relations: list[sympy.Basic]) -> list[sympy.Basic] | None:
    """Check each bound on a symbol against an equality on it (``D = C·|X|/W``): None when they
    contradict (``D = a`` with ``D ≥ 2·a``), and bounds the equality implies are dropped."""
    equal = [r for r in relations if isinstance(r, sympy.Eq) and isinstance(r.lhs, sympy.Symbol)]
    if not equal:
        return relations
    kept: list[sympy.Basic] = []
    for r in relations:
        bound = _bound_of(r)
        implied = False
        for eq in equal:
            if eq is r or eq.lhs != (bound[0] if bound else r.lhs if isinstance(r, sympy.Eq) else None):
                continue
            if isinstance(r, sympy.Eq):  # two equalities on one symbol
                order = _compare_bounds(eq.rhs, r.rhs)
                if order in ("lt", "gt"):
                    return None
                continue
            assert bound is not None
            order = _compare_bounds(eq.rhs, bound[2])
            if order is None:
                continue
            low, strict = bound[1] == "low", bound[3]
            if (low and (order == "lt" or (order in ("le", "eq") and strict))) or (
                not low and (order == "gt" or (order in ("ge", "eq") and strict))
            ):
                return None
            implied = order in (("gt", "ge", "eq") if low else ("lt", "le", "eq")) and not (order == "eq" and strict)
        if not implied:
            kept.append(r)
    return kept


def drop_subsumed(cases: Sequence[Case]) -> tuple[Case, ...]:
    """Simplify a union: ``(A and r) or (A and not r)`` becomes ``A``, and a case whose
    relations include all of another case's is dropped (it adds nothing).

    Examples:
        >>> from symshard.algebra.symbols import dim
        >>> B, D = dim("B"), dim("D")
        >>> drop_subsumed([Case("1", (B > D, B > 8)), Case("2", (B <= D, B > 8)), Case("3", (B > 8, D > 4))])
        (Case(label='combined', relations=(B > 8,)),)
    """
    cases = list(cases)
    merged = True
    while merged:
        merged = False
        for i, j in itertools.combinations(range(len(cases)), 2):
            a, b = set(cases[i].relations), set(cases[j].relations)
            only_a, only_b = a - b, b - a
            if len(only_a) == 1 and len(only_b) == 1:
                (ra,), (rb,) = only_a, only_b
                joined = _join_relations(ra, rb)
                if joined is not None:
                    keep = tuple(joined if r == ra else r for r in cases[i].relations if joined != _TRUE or r != ra)
                    label = merge_labels(cases[i].label, cases[j].label)
                    cases[i] = Case(label, keep)
                    del cases[j]
                    merged = True
                    break
    cases = _union_intervals(cases)
    out = []
    for i, c in enumerate(cases):
        mine = set(c.relations)
        if any(
            j != i and set(o.relations) <= mine and (set(o.relations) != mine or j < i) for j, o in enumerate(cases)
        ):
            continue
        out.append(c)
    return tuple(out)


def _join_relations(ra: sympy.Basic, rb: sympy.Basic) -> sympy.Basic | None:
    """``r or not r`` is always true; ``x > e or x = e`` is ``x ≥ e``; else None."""
    rel = sympy.core.relational.Relational
    if not (isinstance(ra, rel) and isinstance(rb, rel)):
        return None
    if ra.negated == rb:
        return _TRUE
    for strict_, eq in ((ra, rb), (rb, ra)):
        if isinstance(eq, sympy.Eq) and {strict_.lhs, strict_.rhs} == {eq.lhs, eq.rhs}:
            if isinstance(strict_, sympy.StrictGreaterThan):
                return sympy.Ge(strict_.lhs, strict_.rhs)
            if isinstance(strict_, sympy.StrictLessThan):
                return sympy.Le(strict_.lhs, strict_.rhs)
    return None


_REGIMES = {
    "compute-bound": say("compute-bound"),
    "communication-bound": say("communication-bound"),
    "either": say("either"),
}


def regime_label(first: tuple[int, str], second: tuple[int, str]) -> Message:
    """The label of a case that holds while strategy ``first[0]`` is in regime ``first[1]`` and strategy
    ``second[0]`` in ``second[1]`` (``"compute-bound"``, ``"communication-bound"`` or ``"either"``): a
    message that keeps the numbers and regimes as values, so that each language says it its own way.

    Examples:
        >>> regime_label((1, "compute-bound"), (2, "either"))
        '1 compute-bound, 2 either'
    """
    parts = [say("{index} {regime}", index=index, regime=_REGIMES[regime]) for index, regime in (first, second)]
    return say("{first}, {second}", first=parts[0], second=parts[1])


def _regime_parts(label: str) -> list[tuple[int, str]] | None:
    """``[(1, "compute-bound"), (2, "either")]`` from a :func:`regime_label`, None from any other label."""
    if not isinstance(label, Message) or label.template != "{first}, {second}":
        return None
    values = dict(label.values)
    out = []
    for part in (values["first"], values["second"]):
        assert isinstance(part, Message)
        given = dict(part.values)
        out.append((int(str(given["index"])), str(given["regime"])))
    return out


def merge_labels(a: str, b: str) -> str:
    """``'1 compute-bound, 2 communication-bound'`` + ``'1 compute-bound, 2 compute-bound'``
    -> ``'1 compute-bound, 2 either'``; labels that are not regimes of the same strategies merge into
    ``'combined'``.

    Examples:
        >>> merge_labels(regime_label((1, "compute-bound"), (2, "communication-bound")),
        ...              regime_label((1, "compute-bound"), (2, "compute-bound")))
        '1 compute-bound, 2 either'
    """
    if a == b:
        return a
    pa, pb = _regime_parts(a), _regime_parts(b)
    if pa is None or pb is None or [i for i, _ in pa] != [i for i, _ in pb]:
        return say("combined")
    first, second = ((i, x if x == y else "either") for (i, x), (_, y) in zip(pa, pb, strict=True))
    return regime_label(first, second)


def _union_intervals(cases: list[Case]) -> list[Case]:
    """When every case only bounds one symbol by numbers, replace the union by its merged intervals."""
    if len(cases) < 2:
        return cases
    x = None
    sets = []
    for c in cases:
        interval = sympy.Interval(-sympy.oo, sympy.oo)
        for r in c.relations:
            b = _bound_of(r)
            if b is None or not b[2].is_number or (x is not None and b[0] != x):
                return cases
            x = b[0]
            if b[1] == "low":
                interval = interval & sympy.Interval(b[2], sympy.oo, left_open=b[3])
            else:
                interval = interval & sympy.Interval(-sympy.oo, b[2], right_open=b[3])
        sets.append(interval)
    if x is None:
        return cases
    union = sympy.Union(*sets)
    pieces = union.args if isinstance(union, sympy.Union) else (union,)
    out = []
    for piece in pieces:
        if not isinstance(piece, sympy.Interval):
            return cases
        rels = []
        if piece.start != -sympy.oo and not (piece.start <= 0 and x.is_positive):
            rels.append(sympy.Gt(x, piece.start) if piece.left_open else sympy.Ge(x, piece.start))
        if piece.end != sympy.oo:
            rels.append(sympy.Lt(x, piece.end) if piece.right_open else sympy.Le(x, piece.end))
        out.append(Case(say("combined"), tuple(rels)))
    return out


def _conjoin(label: str, parts: Sequence[list[list[sympy.Basic]]], x: sympy.Symbol) -> list[Case]:
    """Distribute a conjunction of unions into a union of cases."""
    out = []
    for combo in itertools.product(*parts):
        rels: list[sympy.Basic] = []
        for c in combo:
            rels.extend(c)
        merged = merge_bounds(_dedupe(rels), x)
        if merged is None:
            continue
        out.append(Case(label, merged))
    return out


def _dedupe(rels: list[sympy.Basic]) -> list[sympy.Basic]:
    return list(dict.fromkeys(as_expr(r) for r in rels))


@dataclass(frozen=True, slots=True)
class Clauses:
    """A conjunction of conditions, each a union of cases: ``(D > 2·C/W_ici or B < D/2) and B > D/4``.

    :func:`~symshard.planning.crossovers.compare` describes where a strategy is the fastest this way (each
    clause: one of its cost terms below one of a neighbour's), which is far shorter than the union of
    cases it multiplies out to (:attr:`cases`).

    Examples:
        >>> B, D = sympy.symbols("B D", positive=True)
        >>> Clauses((Condition((Case("", (sympy.Lt(B, D),)),)),)).text()
        'B < D'
    """

    parts: tuple[Condition, ...]
    domain: Domain | None = field(default=None, compare=False, repr=False)

    @property
    def never(self) -> bool:
        return any(p.never for p in self.parts)

    @property
    def always(self) -> bool:
        return all(p.always for p in self.parts)

    def text(self) -> str:
        if self.never:
            return say("never")
        parts = [p for p in self.parts if not p.always]
        if not parts:
            return say("always")
        shown = (p.text() if len(p.cases) == 1 else say("({case})", case=p.text()) for p in parts)
        return say("{relations}", relations=AllOf(shown))

    def latex(self) -> str:
        if self.never:
            return r"\text{never}"
        parts = [p for p in self.parts if not p.always]
        if not parts:
            return r"\text{always}"
        return r" \land ".join(p.latex() if len(p.cases) == 1 else f"\\left({p.latex()}\\right)" for p in parts)

    def holds(self, values: Mapping) -> bool | None:
        out = True
        for p in self.parts:
            h = p.holds(values)
            if h is None:
                return None
            out = out and h
        return out

    @property
    def symbols(self) -> frozenset[sympy.Symbol]:
        """The symbols the clauses hold."""
        return frozenset().union(*(p.symbols for p in self.parts))

    def subs(self, values: SubstitutionLike, symbol: sympy.Symbol | str | None = None) -> Clauses:
        """The clauses with numbers substituted (as :meth:`Condition.subs` reads them), clauses that
        become always true dropped.

        Raises:
            UnknownSymbolError: a name none of the clauses contains.
        """
        point = substitution(values, self.symbols, what=say("the condition"))
        symbol = _symbol_named(symbol, self.symbols)
        parts = tuple(p.subs(point, symbol) for p in self.parts)
        domain = parts[0].domain if parts else self.domain
        return Clauses(tuple(p for p in parts if not p.always), domain)

    @property
    def cases(self) -> tuple[Case, ...]:
        """The same condition as a union of cases (multiplied out and simplified)."""
        if self.never:
            return ()
        parts = [p for p in self.parts if not p.always]
        if not parts:
            return (Case("", ()),)
        if self.domain is None or not all(p.exact for p in parts):
            labelled = [
                ("", [r for c in combo for r in c.relations]) for combo in itertools.product(*(p.cases for p in parts))
            ]
            return tuple(Case(label, tuple(rels)) for label, rels in labelled)
        combos = [("", [r for c in combo for r in c.exact]) for combo in itertools.product(*(p.cases for p in parts))]
        return Condition.of(minimal(combos, self.domain), self.domain).cases

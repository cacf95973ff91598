"""Relations between costs solved and tidied by SymPy: the general case that conditions fall back on.

Conditions that :func:`~symshard.planning.crossovers.compare` derives are solved exactly on sums of
monomials (:mod:`.inequalities`); the others (the layer schemes', :mod:`symshard.models.schemes`)
go through SymPy here. :func:`solve_less` solves ``lhs < rhs`` for a positive symbol, splitting on
a coefficient whose sign is unknown; :func:`simplify_rel` decides one relation or solves it for the
symbol it is best read in; :func:`merge_bounds` keeps the tightest of comparable bounds on each
symbol, or says that two contradict. Every sign SymPy is asked for counts a mesh axis as at least
two devices, and only SymPy values built by the algebra reach ``factor`` and ``solve``, never text.

It sits in :mod:`symshard.algebra` below :mod:`.conditions`, whose cases hold these relations.

Examples:
    >>> B, C, W = sympy.symbols("B C W", positive=True)
    >>> simplify_rel(sympy.Lt(2 * B, C / W), B)
    B < C/(2*W)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import sympy

from .mathtext import as_expr
from .symbols import is_axis_symbol

__all__ = ["bound_of", "merge_bounds", "simplify_rel", "solve_less"]

_TRUE, _FALSE = sympy.true, sympy.false


def _preferred_symbol(expr: sympy.Basic) -> sympy.Symbol | None:
    """The symbol to isolate in a condition free of the chosen one: a dim, else an axis, else any."""
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    dims = [s for s in syms if s.is_integer and not is_axis_symbol(s)]
    axes = [s for s in syms if is_axis_symbol(s)]
    for group in (dims, axes, syms):
        if group:
            return group[0]
    return None


def simplify_rel(rel: sympy.Basic, symbol: sympy.Symbol | None) -> sympy.Basic:
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
    tidy = simplify_rel(rel, None) if _preferred_symbol(expr) is not None else rel
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


def bound_of(r: sympy.Basic) -> tuple[sympy.Symbol, str, sympy.Expr, bool] | None:
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
    bounds = {i: bound_of(r) for i, r in enumerate(relations)}
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
        bound = bound_of(r)
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

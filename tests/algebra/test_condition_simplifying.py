"""Simplified conditions say what the unsimplified ones say (issue 33), checked at many random points.

``compare`` writes its conditions in the simplest form: inequalities solved for the symbol asked (with a
case for each sign of its coefficient only when that sign is one relation), no relation implied by the
others, bounds merged, a case implied by another dropped, ``(A and r) or (A and S and not r)`` read as
``(A and r) or (A and S)``, clauses said once. Each of those steps must keep the meaning: here random
inequalities between sums of cost-like monomials are solved and combined, and the simplified forms are
evaluated exactly against the unsimplified ones (the inequalities themselves) at random points and at
the whole numbers on either side of every bound. Boundaries, where two sides of an inequality are equal,
do not count (the module's contract: a point there belongs to either side).
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from symshard.algebra.conditions import Clauses, Condition
from symshard.algebra.domains import Domain
from symshard.algebra.inequalities import Inequality, Relation, conjunction, implies, minimal, solve
from symshard.algebra.signomials import Signomial
from symshard.algebra.symbols import C, W_hbm, W_ici, axis, dim

B, D, F, X = dim("B"), dim("D"), dim("F"), axis("X")
ATOMS = (B, D, F, X, C, W_ici, W_hbm)
DOMAIN = Domain.of([X], {D: [frozenset({X})]}, {D: 2})  # D sharded over X: a multiple of |X|, at least 2

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def monomials(draw: st.DrawFn) -> Signomial:
    """A cost-like term: a positive number times a few symbols, each to the power -1, 1 or 2."""
    chosen = draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=3, unique=True))
    term = Signomial.constant(draw(st.sampled_from([1, 2, 3, 4, 16, Fraction(1, 2), Fraction(1, 4)])))
    for a in chosen:
        term = term * Signomial.atom(a, draw(st.sampled_from([-1, 1, 1, 2])))
    return term


@st.composite
def costs(draw: st.DrawFn) -> Signomial:
    """A sum of one to three such terms (every cost has that shape)."""
    total = Signomial.constant(0)
    for term in draw(st.lists(monomials(), min_size=1, max_size=3)):
        total = total + term
    return total


@st.composite
def crossovers(draw: st.DrawFn) -> Inequality:
    """``a·x·P < b·x·Q + R``: the shape of "T_math below T_comms" solved for ``x``, whose coefficient
    ``b·Q - a·P`` has a sign that depends on the other symbols (a case for each)."""
    x = draw(st.sampled_from([B, D, F]))
    rest = [a for a in ATOMS if a != x]

    def term(most: int) -> Signomial:
        out = Signomial.constant(draw(st.sampled_from([1, 2, 4, Fraction(1, 2)])))
        for a in draw(st.lists(st.sampled_from(rest), min_size=1, max_size=most, unique=True)):
            out = out * Signomial.atom(a, draw(st.sampled_from([-1, 1])))
        return out

    left = term(2) * Signomial.atom(x)
    right = term(2) * Signomial.atom(x) + term(3)
    if draw(st.booleans()):
        right = right + term(1)  # a coefficient of three terms: its sign is a comparison of sums
    return Inequality.less(left, right, draw(st.booleans()))


@st.composite
def inequalities(draw: st.DrawFn) -> Inequality:
    if draw(st.booleans()):
        return draw(crossovers())
    left, right = draw(costs()), draw(costs())
    return Inequality.less(left, right, draw(st.booleans()))


def _points(draw: st.DrawFn, relations: list[Relation], n: int = 6) -> list[dict]:
    """Random exact points of the domain, and points with a solved relation's symbol set to each whole number
    on either side of its bound (the others as drawn)."""
    out = []
    for _ in range(n):
        x = draw(st.integers(2, 64))
        point = {
            X: x,
            B: draw(st.integers(1, 2**16)),
            D: x * draw(st.integers(1, 2**12)),
            F: draw(st.integers(1, 2**16)),
            C: Fraction(draw(st.integers(1, 10**6))) * 10**8,
            W_ici: Fraction(draw(st.integers(1, 10**4))) * 10**7,
            W_hbm: Fraction(draw(st.integers(1, 10**4))) * 10**8,
        }
        out.append(point)
        for r in relations:
            if r.target is None or r.target == X:
                continue
            den = r.den.exact(point)
            if den <= 0:
                continue
            bound = Fraction(r.num.exact(point)) / den
            if bound <= 0:
                continue
            root = bound ** Fraction(1, r.power) if r.power != 1 else bound
            whole = math.floor(float(root)) if r.power != 1 else math.floor(root)
            for value in (whole - 1, whole, whole + 1, whole + 2):
                if value >= 1 and (r.target != D or value % point[X] == 0):
                    out.append({**point, r.target: value})
    return out


def _on_boundary(relations: list[Relation], point: dict) -> bool:
    return any(r.source.expr.exact(point) == 0 for r in relations)


def _union(cases: list[list[Relation]], point: dict) -> bool:
    return any(all(r.holds(point) for r in case) for case in cases)


@SETTINGS
@given(inequalities(), st.sampled_from([True, False, "once"]), st.sampled_from([B, D, F, X, C]), st.data())
def test_an_inequality_solved_says_what_it_says(ineq, split, x, data):
    cases = solve(ineq, x, DOMAIN, split)
    relations = [r for case in cases for r in case]
    event(f"{len(cases)} cases" if cases else "never")
    for point in _points(data.draw, relations):
        if ineq.expr.exact(point) == 0 or _on_boundary(relations, point):
            continue
        assert _union(cases, point) is ineq.holds(point), (ineq.expr.expr(), [[r.text() for r in c] for c in cases])


@st.composite
def unions(draw: st.DrawFn, most: int = 4) -> list[list[Relation]]:
    """A union of at most ``most`` cases, each a conjunction of a few solved inequalities (as compare builds
    them)."""
    x = draw(st.sampled_from([B, D, F]))
    out = []
    for _ in range(draw(st.integers(1, most))):
        case: list[Relation] = []
        for ineq in draw(st.lists(inequalities(), min_size=1, max_size=3)):
            solved = solve(ineq, x, DOMAIN, "once")
            if not solved:
                break  # never: the case is empty
            case += draw(st.sampled_from(solved))
        else:
            out.append(case)
    return out


@SETTINGS
@given(unions(), st.data())
def test_a_union_in_minimal_form_says_what_it_said(cases, data):
    simple = minimal([("", c) for c in cases], DOMAIN)
    relations = [r for case in cases for r in case]
    event(f"{sum(map(len, cases))} relations -> {sum(len(c) for _, c in simple)}")
    for point in _points(data.draw, relations):
        if _on_boundary(relations, point):
            continue
        assert _union([c for _, c in simple], point) is _union(cases, point)


@SETTINGS
@given(st.lists(unions(2), min_size=1, max_size=3), st.data())
def test_clauses_simplified_say_what_they_said(parts, data):
    clauses = Clauses(tuple(Condition.of([("", c) for c in cases], DOMAIN) for cases in parts), DOMAIN)
    simple = clauses.simplified()
    relations = [r for cases in parts for case in cases for r in case]
    event(f"{len(clauses.parts)} clauses -> {len(simple.parts)}")
    for point in _points(data.draw, relations):
        if _on_boundary(relations, point):
            continue
        assert simple.holds(point) is all(_union(cases, point) for cases in parts)


@SETTINGS
@given(unions(), unions(), st.data())
def test_a_case_implies_another_only_where_it_does(first, second, data):
    if not first or not second:
        return  # a union that is never: no case to imply or be implied
    case, other = first[0], second[0]
    if not implies(case, other, DOMAIN):
        event("not implied")
        return
    event("implied")
    for point in _points(data.draw, [*case, *other]):
        if _on_boundary([*case, *other], point):
            continue
        if all(r.holds(point) for r in case):
            assert all(r.holds(point) for r in other)
    together = conjunction(case, DOMAIN)
    for point in _points(data.draw, case):
        if not _on_boundary(case, point):
            assert (together is not None and all(r.holds(point) for r in together)) is all(r.holds(point) for r in case)


@SETTINGS
@given(st.lists(unions(2), min_size=1, max_size=2), st.data())
def test_clauses_on_a_chip_say_what_they_say_with_its_numbers(parts, data):
    clauses = Clauses(tuple(Condition.of([("", c) for c in cases], DOMAIN, "once") for cases in parts), DOMAIN)
    chip = {C: Fraction(459, 1) * 10**12, W_ici: Fraction(18, 1) * 10**10, W_hbm: Fraction(276, 1) * 10**10}
    numeric = clauses.subs(chip, B)
    relations = [r for cases in parts for case in cases for r in case]
    for point in _points(data.draw, relations):
        point = {**point, **chip}
        if _on_boundary(relations, point):
            continue
        rest = {k: v for k, v in point.items() if k not in chip}
        assert numeric.holds(rest) is clauses.holds(point)

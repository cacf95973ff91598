"""The conditions :func:`~symshard.planning.crossovers.compare` derives, solved for one symbol: where each
term of a strategy's time is the largest (its regime), and when one strategy is faster than another, as the
book's case analysis (:func:`wins_by_regime`) or in the fewest relations (:func:`beats`).

Every relation is solved exactly on sums of monomials (:func:`~symshard.algebra.inequalities.solve`) and
kept in minimal form (:func:`~symshard.algebra.inequalities.minimal`): no part implied by another, bounds
merged; each pair of terms is solved once (the strategies of a plan share their terms, and neighbours
share strategies). Part of :mod:`symshard.planning`, below :mod:`~symshard.planning.crossovers`, above
:mod:`~symshard.planning.crossover_costs` (the times it compares).

Examples:
    >>> from symshard.algebra.domains import Domain
    >>> from symshard.planning.crossover_costs import compared_costs, joint_domain
    >>> from symshard.planning.planner import plan
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", hbm=False)
    >>> s1, s2 = p.strategy(1), p.strategy(2)
    >>> a, b = (compared_costs(s, Domain.around(s.compute_time.free_symbols | s.bandwidth_comm_time.free_symbols),
    ...                        p) for s in (s1, s2))
    >>> B = next(x for x in s1.compute_time.free_symbols if x.name == "B")
    >>> beats(a, b, B, False, joint_domain(a.domain, b.domain)).text()
    '(D > 2·C/W_ici) or (B < D/2)'
"""

from __future__ import annotations

from collections.abc import Sequence

from ..algebra.conditions import Clauses, Condition, merge_labels, regime_label
from ..algebra.domains import Domain
from ..algebra.inequalities import Inequality, Relation, minimal, solve
from ..algebra.signomials import Signomial
from ..messages import say
from .crossover_costs import ComparedCosts

__all__ = ["SPLIT", "beats", "labelled_condition", "less_cases", "regime_cases", "wins_by_regime"]

_Cases = list[list[Relation]]


_SOLVED: dict[tuple, list[list[Relation]]] = {}


def _solved(p: Signomial, q: Signomial, x, domain: Domain, split: bool | str) -> list[list[Relation]]:
    """``p < q`` solved for ``x`` on ``domain`` (see :func:`~symshard.algebra.inequalities.solve`), each
    pair of terms once: the strategies of a plan share their terms, and neighbours share strategies."""
    key = (p, q, x, domain, split)
    found = _SOLVED.get(key)
    if found is None:
        if len(_SOLVED) > 65536:
            _SOLVED.clear()
        mirror = _SOLVED.get((q, p, x, domain, split)) if p != q else None
        found = _SOLVED[key] = _reversed(mirror) if mirror is not None else None  # type: ignore[assignment]
        if found is None:
            found = _SOLVED[key] = solve(Inequality.less(p, q, True), x, domain, split)
    return found


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _reversed(cases: list[list[Relation]]) -> list[list[Relation]] | None:
    """``q < p`` from ``p < q`` solved (two different sides): never where it always held and the other way
    round, and one bound turned round (both strict: they differ only where the sides are equal); None when
    the answer is anything else (solved afresh)."""
    if not cases:
        return [[]]
    if cases == [[]]:
        return []
    if len(cases) != 1 or len(cases[0]) != 1:
        return None
    (r,) = cases[0]
    src = r.source
    if r.target is None or not src.strict:
        return None
    turned = Inequality(-src.expr, True, src.right, src.left)
    return [[Relation(r.target, _FLIP[r.op], r.num, r.den, r.power, turned)]]


def _product(parts: Sequence[_Cases], domain: Domain) -> _Cases:
    """The conjunction of unions of cases, distributed, each case simplified (contradictions dropped)."""
    out: _Cases = [[]]
    for part in parts:
        grown: _Cases = []
        for a in out:
            for b in part:
                labelled = minimal([("", [*a, *b])], domain)
                grown.extend(rels for _, rels in labelled)
        out = grown
        if not out:
            break
    return out


SPLIT = "once"
"""How conditions are solved (:func:`~symshard.algebra.inequalities.solve`): with a case for each sign of
the solved symbol's coefficient only when that sign is one relation, else as one comparison of sums."""


def less_cases(p: Signomial | Sequence[Signomial], q: Signomial | Sequence[Signomial], x, domain, strict) -> _Cases:
    """``max(p) < max(q)``: every part of ``p`` below some part of ``q``."""
    ps = [p] if isinstance(p, Signomial) else list(p)
    qs = [q] if isinstance(q, Signomial) else list(q)
    unions = []
    for a in ps:
        union: _Cases = []
        for b in qs:
            union.extend(solve(Inequality.less(a, b, strict), x, domain, SPLIT))
        unions.append(union)
    return _product(unions, domain)


_Regimes = dict[str, _Cases]


def regime_cases(c: ComparedCosts, x, domain: Domain) -> _Regimes:
    """Where each term is the largest, as cases (a partition but for the boundaries): ``communication-bound``
    (``T_comms`` above both others), ``compute-bound`` (``T_math`` at least both, ties included) and
    ``memory-bound`` (``T_hbm`` above ``T_math`` and at least ``T_comms``), as
    :attr:`~symshard.planning.strategies.Strategy.bound` breaks ties."""
    out: _Regimes = {}
    if c.comms:
        out["communication-bound"] = less_cases(c.local, c.comms, x, domain, True)
    below: list[Sequence[Signomial]] = [c.comms] if c.comms else []
    if c.hbm is not None:
        below.append([c.hbm])
    out["compute-bound"] = _product([less_cases(b, c.math, x, domain, False) for b in below], domain)
    if c.hbm is not None:
        parts = [less_cases(c.math, c.hbm, x, domain, True)]
        if c.comms:
            parts.append(less_cases(c.comms, c.hbm, x, domain, False))
        out["memory-bound"] = _product(parts, domain)
    return out


def _active(c: ComparedCosts, regime: str) -> list[Signomial]:
    """The terms a strategy's time is in ``regime``."""
    if regime == "communication-bound":
        return list(c.comms)
    if regime == "memory-bound":
        return [c.hbm] if c.hbm is not None else []
    return [c.math]


def labelled_condition(label: str, cases: _Cases, domain: Domain) -> Condition:
    """A union of cases under one label, in minimal form."""
    return Condition.of(minimal([(label, cs) for cs in cases], domain), domain, SPLIT)


def wins_by_regime(
    a: ComparedCosts, b: ComparedCosts, ia: int, ib: int, x, serial: bool, domain: Domain, ra: _Regimes, rb: _Regimes
) -> Condition:
    """When strategy ``a`` is faster than ``b``: the book's case analysis, one case per combination of the
    two strategies' regimes, the terms that are the time in each compared."""
    if serial:
        cases = less_cases(a.terms(True), b.terms(True), x, domain, True)
        return Condition.of(
            minimal([(say("no overlap: T_math + T_comms"), c) for c in cases], domain, merge_labels), domain, SPLIT
        )
    labelled: list[tuple[str, list[Relation]]] = []
    for a_regime, a_cases in ra.items():
        for b_regime, b_cases in rb.items():
            a_active, b_active = _active(a, a_regime), _active(b, b_regime)
            if not a_cases or not b_cases or not a_active or not b_active:
                continue
            better = less_cases(a_active, b_active, x, domain, True)
            for case in _product([a_cases, b_cases, better], domain):
                labelled.append((regime_label((ia, a_regime), (ib, b_regime)), case))
    return Condition.of(minimal(labelled, domain, merge_labels), domain, SPLIT)


def beats(a: ComparedCosts, b: ComparedCosts, x, serial: bool, domain: Domain) -> Clauses:
    """When ``a`` is faster than ``b``, with the fewest relations: ``max(a's terms) < max(b's terms)``
    holds iff every term of ``a`` is below some term of ``b``: one clause per term of ``a`` (a union over
    ``b``'s terms), the clauses that always hold left out (``T_math`` of a strategy that splits the
    work over more devices is below the other's)."""
    ta, tb = a.terms(serial), b.terms(serial)
    clauses: list[Condition] = []
    for p in ta:
        union: list[tuple[str, list[Relation]]] = []
        for q in tb:
            union.extend(("", case) for case in _solved(p, q, x, domain, False))
        if any(not case for _, case in union):
            continue  # this term is always below one of b's
        clause = Condition.of(minimal(union, domain), domain, split=False)
        if clause.key() not in {c.key() for c in clauses}:
            clauses.append(clause)
    return Clauses(tuple(clauses), domain).simplified()

"""Inequalities between costs, solved and simplified the way the book writes them, on sums of monomials.

:func:`~symshard.planning.crossovers.compare` asks questions such as "is ``2·B·D·F/(C·|X|) < 4·B·F/W_ici``?"
for one symbol it solves for. Every such question is an :class:`Inequality` ``S > 0`` on a
:class:`~symshard.algebra.signomials.Signomial` ``S`` (the difference of the two sides). :func:`solve` turns
it into cases of :class:`Relation` objects, each a symbol against a bound: ``D < 2·C·|X|/W_ici``,
``B < D/2``. Two monomials that differ give one relation in the book's form; a sum of more terms,
linear in the symbol solved for, gives ``B < (...)/(...)`` on the side of the symbols where its
coefficient is positive, and the other side where it is negative (a split on the sign, itself a
relation between two monomials: ``D < C·|X|/W_ici``). Nothing here calls SymPy's solvers,
``factor`` or its assumptions: signs are proved on the monomials (:func:`~symshard.algebra.domains.nonnegative`).

:func:`minimal` brings a union of cases to a minimal form under the stated assumptions (every
symbol positive, each mesh axis at least 2, a dim at least the devices that shard it): relations
the domain implies are dropped, a bound implied by a tighter one is dropped, a case whose relations
contradict is dropped, two cases that differ by a relation and its negation merge, and a case that
contains another is dropped. Whether a set of relations between monomials can hold at once, and
whether one of them follows from the others, is a question about linear inequalities in the
logarithms of the symbols, decided by Fourier–Motzkin elimination. Boundaries (where two costs are
equal) are not cases of their own: a point on one belongs to either side.

Examples:
    >>> from symshard.algebra.domains import Domain
    >>> from symshard.algebra.monomials import from_expr
    >>> from symshard.algebra.symbols import C, W_ici, axis, dim
    >>> B, D, F, X = dim("B"), dim("D"), dim("F"), axis("X")
    >>> gather, local = from_expr(2 * D * F / W_ici).parts[0], from_expr(4 * B * F / W_ici).parts[0]
    >>> [[r.text() for r in case] for case in solve(Inequality(gather - local), B, Domain.of([X]))]
    [['B < D/2']]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy

from .domains import Domain, nonnegative
from .signomials import Monomial, Signomial
from .symbols import is_axis_symbol
from .units import pretty, sig

__all__ = ["Inequality", "Relation", "conjunction", "implies", "minimal", "solve"]

Number = int | Fraction


@dataclass(frozen=True, slots=True)
class Inequality:
    """``expr > 0`` (``expr ≥ 0`` unless ``strict``), ``expr`` a signomial; ``left``/``right`` are the two
    sides it came from (``right - left``), kept to write it unsolved."""

    expr: Signomial
    strict: bool = True
    left: Signomial | None = None
    right: Signomial | None = None

    @classmethod
    def less(cls, left: Signomial, right: Signomial, strict: bool = True) -> Inequality:
        """``left < right`` (``≤`` unless ``strict``)."""
        return cls(right - left, strict, left, right)

    def holds(self, point: Mapping[sympy.Expr, Number]) -> bool:
        value = self.expr.exact(point)
        return value > 0 if self.strict else value >= 0

    def substitute(self, values: Mapping[sympy.Expr, Number]) -> Inequality:
        """The inequality with numbers put in for some symbols."""

        def put(s: Signomial | None) -> Signomial | None:
            return None if s is None else _put(s, values)

        return Inequality(_put(self.expr, values), self.strict, put(self.left), put(self.right))


def _put(s: Signomial, values: Mapping[sympy.Expr, Number]) -> Signomial:
    out: dict[Monomial, Number] = {}
    for m, c in s.terms.items():
        coef = Fraction(c)
        rest = []
        for a, e in m:
            if a in values:
                coef *= Fraction(values[a]) ** e
            else:
                rest.append((a, e))
        key = tuple(rest)
        total = out.get(key, 0) + coef
        out[key] = total.numerator if isinstance(total, Fraction) and total.denominator == 1 else total
    return Signomial(out)


@dataclass(frozen=True, slots=True)
class Relation:
    """``target**power op num/den``, ``den`` positive wherever the relation is used; or, unsolved
    (``target`` None), the :class:`Inequality` ``source`` itself.

    ``op`` is one of ``<``, ``<=``, ``>``, ``>=``. ``source`` is always the inequality the relation is
    equivalent to (on the positive values of ``target``).
    """

    target: sympy.Expr | None
    op: str
    num: Signomial
    den: Signomial
    power: int
    source: Inequality
    memo: dict = field(default_factory=dict, compare=False, repr=False, hash=False)  # key, relational: worked out once

    # -- reading
    @property
    def upper(self) -> bool:
        return self.op in ("<", "<=")

    def bound_expr(self) -> sympy.Expr:
        num, den = _tidy(self.num, self.den)
        bound = (
            num.expr() / den.expr()
            if den.monomial is not None
            else sympy.Mul(num.expr(), sympy.Pow(den.expr(), -1, evaluate=False), evaluate=False)
        )
        return bound if self.power == 1 else sympy.Pow(bound, sympy.Rational(1, self.power))

    def relational(self) -> sympy.Basic:
        """The relation as a SymPy relational (unevaluated), the form conditions keep and print."""
        found = self.memo.get("relational")
        if found is None:
            found = self.memo["relational"] = self._relational()
        return found

    def _relational(self) -> sympy.Basic:
        if self.target is None:
            src = self.source
            left = src.left.expr() if src.left is not None else sympy.Integer(0)
            right = src.right.expr() if src.right is not None else src.expr.expr()
            return (sympy.StrictLessThan if src.strict else sympy.LessThan)(left, right, evaluate=False)
        rel = {"<": sympy.StrictLessThan, "<=": sympy.LessThan, ">": sympy.StrictGreaterThan, ">=": sympy.GreaterThan}
        return rel[self.op](self.target, self.bound_expr(), evaluate=False)

    def text(self) -> str:
        r = self.relational()
        text = pretty(r).replace("<=", "≤").replace(">=", "≥")
        side = r.rhs if self.target is not None else None
        if side is not None and side.is_number and not side.is_Integer:
            text += f" (≈ {sig(float(side), 4)})"
        return text

    def holds(self, point: Mapping[sympy.Expr, Number]) -> bool:
        return self.source.holds(point)

    def negated(self) -> Relation:
        flip = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
        src = self.source
        inverse = Inequality(-src.expr, not src.strict, src.right, src.left)
        return Relation(self.target, flip[self.op], self.num, self.den, self.power, inverse)

    @property
    def key(self) -> tuple:
        """What identifies the relation (two relations with one key say the same)."""
        found = self.memo.get("key")
        if found is None:
            found = self.memo["key"] = (
                self.target,
                self.op,
                self.power,
                _ratio_key(self.num, self.den),
                self.source.expr if self.target is None else None,
            )
        return found


def _ratio_key(num: Signomial, den: Signomial) -> tuple:
    n, d = _tidy(num, den)
    return (n, d)


def _tidy(num: Signomial, den: Signomial) -> tuple[Signomial, Signomial]:
    """``num/den`` with the monomial factor and the number common to every term of both divided out
    (``2·D·F/W ÷ 2·D·F/C`` is ``C/W``; a single-term ``den`` goes into ``num``)."""
    one = den.monomial
    if one is not None:
        return num / den, Signomial.constant(1)
    terms = [*num.terms.items(), *den.terms.items()]
    exps: dict[sympy.Expr, int] = dict(terms[0][0])
    for m, _ in terms[1:]:
        here = dict(m)
        exps = {a: min(e, here.get(a, 0)) for a, e in exps.items()} | {
            a: min(e, 0) for a, e in here.items() if a not in exps
        }
    common = tuple((a, e) for a, e in exps.items() if e)
    numerators = [Fraction(c).numerator for _, c in terms]
    denominators = [Fraction(c).denominator for _, c in terms]
    scale = Fraction(math.gcd(*numerators), math.lcm(*denominators))
    factor = Signomial({common: scale.numerator if scale.denominator == 1 else scale})
    return num / factor, den / factor


# -- solving ---------------------------------------------------------------------------------------


TRUE: list[list[Relation]] = [[]]
FALSE: list[list[Relation]] = []


def preferred(atoms: set[sympy.Expr]) -> sympy.Expr | None:
    """The symbol a relation free of the solved one is written for: a dim, else a mesh axis, else any
    (each group by name)."""
    syms = sorted((a for a in atoms if a.is_Symbol), key=lambda s: s.name)
    dims = [s for s in syms if s.is_integer and not is_axis_symbol(s)]
    axes = [s for s in syms if is_axis_symbol(s)]
    for group in (dims, axes, syms):
        if group:
            return group[0]
    return None


def sign(s: Signomial, domain: Domain) -> int | None:
    """+1 if ``s ≥ 0`` everywhere (and not zero), -1 if ``s ≤ 0`` everywhere, 0 if zero, None if unknown."""
    if s.is_zero:
        return 0
    key = ("sign", s)
    if key in domain.memo:
        return domain.memo[key]
    found = 1 if nonnegative(s, domain) else -1 if nonnegative(-s, domain) else None
    domain.memo[key] = found
    return found


def solve(ineq: Inequality, x: sympy.Expr | None, domain: Domain, split: bool | str = True) -> list[list[Relation]]:
    """``ineq`` as a union of cases (lists of relations, all to hold): ``[]`` never, ``[[]]`` always.

    Solved for ``x`` when it appears, else for :func:`preferred` of its symbols. Without ``split``, an
    inequality of more than two terms stays as it is (its terms moved to the side where they are
    positive), rather than solved with a case for each sign of its coefficient. With ``split="once"``,
    it is solved with a case for each sign of its coefficient only when that sign is itself one
    relation (``K < C/W_ici``); a coefficient whose sign needs cases of its own leaves the inequality
    as it is: one comparison of two sums reads more plainly than nested cases.

    Examples:
        >>> from symshard.algebra.monomials import from_expr
        >>> from symshard.algebra.symbols import C, W_ici, dim
        >>> I, K = dim("I"), dim("K")
        >>> (math_,), (comms,) = from_expr(2 * I * K / C).parts, from_expr(2 * I / W_ici + 2 * K / W_ici).parts
        >>> [[r.text() for r in case] for case in solve(Inequality.less(math_, comms), I, Domain(), "once")]
        [['K < C/W_ici'], ['K > C/W_ici', 'I < (C·K)/(-C + K·W_ici)']]
    """
    s = _content_free(ineq.expr)  # a positive factor every term shares changes no sign (B in 2·B·D < 4·B·F)
    if s is not ineq.expr:
        ineq = Inequality(s, ineq.strict, ineq.left, ineq.right)
    known = sign(s, domain)
    # a sign that holds everywhere may still be zero where every size is at its least (|X| = 2 in
    # 2·|X| - 4 > 0): there a strict inequality fails and a non-strict one holds, so solve it instead
    if known is not None and not (known != 0 and ineq.strict == (known > 0) and _zero_at_least(s, domain)):
        if known > 0 or (known == 0 and not ineq.strict):
            return TRUE
        return FALSE
    atoms = s.atoms
    target = x if x is not None and x in atoms else preferred(atoms)
    if target is None or (not split and len(s.terms) > 2):
        return [[_unsolved(ineq)]]
    powers = s.power_of(target)
    if len(powers) != 2:
        return [[_unsolved(ineq)]]
    (lo_e, lo), (hi_e, hi) = sorted(powers.items())
    e = hi_e - lo_e
    # hi·t^e + lo > 0 (dividing by t^lo_e > 0): t^e > -lo/hi where hi > 0, t^e < lo/(-hi) where hi < 0
    s_hi, s_lo = sign(hi, domain), sign(lo, domain)
    cases: list[list[Relation]] = []
    if s_hi is None:  # split on the coefficient's sign (where it is zero, a boundary: either side)
        inner: bool | str = False if split == "once" else split
        for direction, coefficient in ((+1, hi), (-1, -hi)):
            parts = solve(Inequality(coefficient), None, domain, inner)
            if split == "once" and any(r.target is None for part in parts for r in part):
                return [[_unsolved(ineq)]]  # the sign itself is a comparison of sums: no cases on it
            for part in parts:
                for side in _side(ineq, target, e, hi, lo, direction, s_lo):
                    cases.append([*part, *side])
        return cases
    return _side(ineq, target, e, hi, lo, s_hi, s_lo)


def _content_free(s: Signomial) -> Signomial:
    """``s`` divided by the monomial all its terms share (the lowest power of each symbol in it)."""
    terms = list(s.terms)
    if len(terms) < 2:
        return s
    exps = dict(terms[0])
    for m in terms[1:]:
        here = dict(m)
        exps = {a: min(e, here.get(a, 0)) for a, e in exps.items()} | {
            a: min(e, 0) for a, e in here.items() if a not in exps
        }
    common = tuple((a, e) for a, e in exps.items() if e)
    return s.over(common) if common else s


def _side(
    ineq: Inequality, t: sympy.Expr, e: int, hi: Signomial, lo: Signomial, s_hi: int, s_lo: int | None
) -> list[list[Relation]]:
    """The relation on ``t`` where the coefficient ``hi`` has sign ``s_hi``."""
    if s_hi > 0:
        if s_lo is not None and s_lo >= 0:
            return TRUE
        op = ">" if ineq.strict else ">="
        return [[Relation(t, op, -lo, hi, e, ineq)]]
    if s_lo is not None and s_lo <= 0:
        return FALSE
    op = "<" if ineq.strict else "<="
    return [[Relation(t, op, lo, -hi, e, ineq)]]


def _unsolved(ineq: Inequality) -> Relation:
    """``ineq`` kept as a comparison of two sums: its negative terms against its positive ones, the
    numbers all of its coefficients share divided out."""
    s = ineq.expr
    coefs = [Fraction(c) for c in s.terms.values()]
    scale = Fraction(math.gcd(*(c.numerator for c in coefs)), math.lcm(*(c.denominator for c in coefs)))
    if scale != 1:
        s = s / scale
    left = Signomial({m: -c for m, c in s.terms.items() if c < 0})
    right = Signomial({m: c for m, c in s.terms.items() if c > 0})
    written = Inequality(s, ineq.strict, left, right)
    return Relation(None, "<" if ineq.strict else "<=", s, Signomial.constant(1), 1, written)


# -- simplifying -------------------------------------------------------------------------------------


def _compare(a: Relation, b: Relation, domain: Domain) -> int | None:
    """How ``a``'s bound compares with ``b``'s (same target and power): -1, 0, 1, or None if unknown."""
    diff = b.num * a.den - a.num * b.den  # b - a, over positive denominators
    s = sign(diff, domain)
    if s is None:
        return None
    return -s


def _zero_at_least(s: Signomial, domain: Domain) -> bool:
    """Whether ``s`` is zero where each of its symbols takes its least value, when every such value is
    one the symbol takes (an axis's 2, an integer dim's floor; a positive constant has no least value)."""
    point: dict[sympy.Expr, Number] = {}
    for a in s.atoms:
        if a not in domain.axes and not (a.is_Symbol and a.is_integer):
            return False
        point[a] = Fraction(_floor(a, domain))
    return s.exact(point) == 0


def _bound_at_least(r: Relation, domain: Domain) -> bool:
    """Whether ``r`` bounds its target at exactly the least value the target takes (an axis's 2, an
    integer dim's floor)."""
    t = r.target
    if t is None or not (t in domain.axes or (t.is_Symbol and t.is_integer)):
        return False
    low = Fraction(_floor(t, domain)) ** r.power
    return sign(r.num - r.den * low, domain) == 0


def _floor(t: sympy.Expr, domain: Domain) -> Number:
    """The least value ``t`` takes on the domain (0 when only positive)."""
    if t in domain.axes:
        return 2
    return domain.floors.get(t, 1 if (t.is_Symbol and t.is_integer) else 0)


def _trivial(r: Relation, domain: Domain) -> bool | None:
    """True if the domain implies ``r``, False if it rules ``r`` out, else None.

    The domain's least value is one the target takes (an axis of 2 devices, a dim of its smallest size), so
    a strict bound at exactly that value is neither implied nor ruled out by it: ``|X| > 2`` does not hold
    at ``|X| = 2``, and ``|X| ≤ 2`` does.
    """
    if r.target is None:
        return None
    low = Fraction(_floor(r.target, domain)) ** r.power
    # bound vs the least value: num - low·den
    s = sign(r.num - r.den * low, domain)
    if s is None:
        return None
    strict = r.op in ("<", ">")
    if r.upper:  # target < bound (or ≤): impossible when the bound is below the least value
        return False if s < 0 or (s == 0 and strict) else None
    return True if s < 0 or (s == 0 and not strict) else None


Labelled = tuple[str, list[Relation]]


def minimal(
    cases: Sequence[tuple[str, Sequence[Relation]]], domain: Domain, join: Callable[[str, str], str] = lambda a, b: a
) -> list[Labelled]:
    """A union of labelled cases in minimal form (see the module docstring); ``join`` names a case two
    merged cases make."""
    out: list[Labelled] = []
    for label, case in cases:
        tidy = _simplify_case(case, domain)
        if tidy is not None:
            out.append((label, tidy))
    return _merge(out, domain, join)


def conjunction(case: Sequence[Relation], domain: Domain) -> list[Relation] | None:
    """The relations of ``case``, all to hold, in minimal form (see the module docstring); None when they
    contradict.

    Examples:
        >>> from symshard.algebra.monomials import from_expr
        >>> from symshard.algebra.symbols import dim
        >>> (J,), (five,), (four,) = (from_expr(e).parts for e in (dim("J"), 5100, 4096))
        >>> below = [solve(Inequality.less(J, b), J, Domain())[0][0] for b in (five, four, four)]
        >>> [r.text() for r in conjunction(below, Domain())]
        ['J < 4096']
    """
    return _simplify_case(case, domain)


def _simplify_case(case: Sequence[Relation], domain: Domain) -> list[Relation] | None:
    kept: list[Relation] = []
    seen: set[tuple] = set()
    for r in case:
        if r.key in seen:
            continue
        seen.add(r.key)
        t = _trivial(r, domain)
        if t is True:
            continue
        if t is False:
            return None
        kept.append(r)
    # pairwise: a tighter bound on one side makes the other redundant; bounds on both sides must leave room
    drop: set[int] = set()
    for i, j in itertools.combinations(range(len(kept)), 2):
        a, b = kept[i], kept[j]
        if i in drop or j in drop or a.target is None or a.target != b.target or a.power != b.power:
            continue
        order = _compare(a, b, domain)
        if order is None:
            continue
        if a.upper == b.upper:
            if order == 0:
                drop.add(j if (a.op in ("<", ">")) or b.op in ("<=", ">=") else i)
            elif (order < 0) == a.upper:
                drop.add(j)
            else:
                drop.add(i)
        else:
            low, high = (a, b) if not a.upper else (b, a)
            gap = _compare(low, high, domain)
            if gap is not None and gap >= 0:
                return None
    kept = [r for k, r in enumerate(kept) if k not in drop]
    logs = [_loglinear(r) for r in kept]
    if _infeasible([x for x in logs if x is not None], domain, kept):
        return None
    # a relation between monomials that the others imply (in log space) goes
    k = 0
    while k < len(kept):
        # (not one whose bound is the least value its target takes: the elimination below counts no
        # boundary, and there the boundary is a point of the domain, |X| > 2 against |X| = 2)
        if logs[k] is not None and not _bound_at_least(kept[k], domain):
            others = [x for n, x in enumerate(logs) if n != k and x is not None]
            if _infeasible([*others, _negate(logs[k])], domain, kept):  # type: ignore[arg-type]
                del kept[k]
                del logs[k]
                continue
        k += 1
    return kept


def _merge(cases: list[Labelled], domain: Domain, join: Callable[[str, str], str]) -> list[Labelled]:
    """``(A and r) or (A and not r)`` is ``A``; a case holding another case's relations and more goes.

    Between cases with one label (the label stays true of the larger case): ``(A and r) or (A and S and
    not r)`` is ``(A and r) or (A and S)``, and a case that implies another goes (``J > 5100`` beside
    ``J > 4096``)."""
    cases = [(label, list(c)) for label, c in cases]
    merged = True
    while merged:
        merged = False
        for i, j in itertools.permutations(range(len(cases)), 2):
            a = {r.key: r for r in cases[i][1]}
            b = {r.key: r for r in cases[j][1]}
            only_a = [r for k, r in a.items() if k not in b]
            only_b = [r for k, r in b.items() if k not in a]
            if i < j and len(only_a) == 1 and len(only_b) == 1 and _opposite(only_a[0], only_b[0]):
                kept = [r for r in cases[i][1] if r.key != only_a[0].key]
                cases[i] = (join(cases[i][0], cases[j][0]), _simplify_case(kept, domain) or kept)
                del cases[j]
                merged = True
                break
            if i < j and (not only_a or not only_b):  # one case's relations include all of the other's
                drop = i if only_a else j
                del cases[drop]
                merged = True
                break
            if cases[i][0] != cases[j][0]:
                continue
            if len(only_a) == 1 and only_b:  # (A and r) or (A and S and not r): not r goes from the second
                (r,) = only_a
                loose = [x for x in only_b if _opposite(r, x)]
                if loose:
                    kept = [x for x in cases[j][1] if x.key != loose[0].key]
                    cases[j] = (cases[j][0], _simplify_case(kept, domain) or kept)
                    merged = True
                    break
            if len(cases[i][1]) + len(cases[j][1]) <= 12 and implies(cases[i][1], cases[j][1], domain):
                del cases[i]  # the other case holds wherever this one does
                merged = True
                break
    return cases


def _loose_key(r: Relation) -> tuple:
    """A relation's key up to strictness: ``x < e`` and ``x ≤ e`` (they differ only on a boundary)."""
    if r.target is None:
        return (None, r.source.expr)
    return (r.target, r.upper, r.power, r.key[3])


def _opposite(a: Relation, b: Relation) -> bool:
    """Whether ``b`` is ``not a`` up to the boundary where the two sides are equal."""
    return _loose_key(a.negated()) == _loose_key(b)


def implies(case: Sequence[Relation], other: Sequence[Relation], domain: Domain) -> bool:
    """Whether the relations of ``case`` imply every relation of ``other`` on ``domain`` (proved: False
    means "not proved"); boundaries do not count (``x < 5`` implies ``x ≤ 5`` and ``x < 5`` alike).

    Examples:
        >>> from symshard.algebra.monomials import from_expr
        >>> from symshard.algebra.symbols import dim
        >>> (J,), (five,), (four,) = (from_expr(e).parts for e in (dim("J"), 5100, 4096))
        >>> more = [solve(Inequality.less(five, J), J, Domain())[0], solve(Inequality.less(four, J), J, Domain())[0]]
        >>> implies(more[0], more[1], Domain()), implies(more[1], more[0], Domain())
        (True, False)
    """
    keys = {_loose_key(r) for r in case}
    left = [r for r in other if _loose_key(r) not in keys]
    for r in left:  # what the proof below can see: bounds on one symbol, relations between two monomials
        if r.target is None:
            return False
        if _loglinear(r) is None and not any(
            c.target == r.target and c.power == r.power and c.upper == r.upper for c in case
        ):
            return False
    return all(_simplify_case([*case, r.negated()], domain) is None for r in left)


# -- relations between monomials as linear inequalities in the logarithms -----------------------------

_Linear = tuple[dict[sympy.Expr, float], float, bool]  # Σ c_a·log(a) > k (≥ unless strict)


def _loglinear(r: Relation) -> _Linear | None:
    """``r`` as ``Σ c·log(symbol) > k`` when it is a relation between two monomials."""
    ineq = r.source
    terms = list(ineq.expr.terms.items())
    if len(terms) != 2:
        return None
    (m1, c1), (m2, c2) = terms
    if (c1 > 0) == (c2 > 0):
        return None
    if c1 < 0:
        (m1, c1), (m2, c2) = (m2, c2), (m1, c1)
    # c1·m1 - |c2|·m2 > 0  <=>  log(m1/m2) > log(|c2|/c1)
    coef: dict[sympy.Expr, float] = {}
    for a, e in m1:
        coef[a] = coef.get(a, 0.0) + e
    for a, e in m2:
        coef[a] = coef.get(a, 0.0) - e
    coef = {a: c for a, c in coef.items() if c}
    return coef, math.log(float(Fraction(-c2) / Fraction(c1))), ineq.strict


def _negate(x: _Linear) -> _Linear:
    coef, k, strict = x
    return {a: -c for a, c in coef.items()}, -k, not strict


def _infeasible(system: list[_Linear], domain: Domain, relations: Sequence[Relation]) -> bool:
    """Whether the linear inequalities (with the domain's: each axis at least 2, each dim at least its
    floor) have no solution, by Fourier–Motzkin elimination; boundaries do not count (a system that
    only holds where two sides are equal is empty). Gives up (False) when the elimination grows."""
    if not system:
        return False
    atoms = sorted({a for coef, _, _ in system for a in coef}, key=str)
    rows: list[tuple[dict[sympy.Expr, float], float]] = [(dict(c), k) for c, k, _ in system]
    for a in atoms:
        low = _floor(a, domain)
        if low and low > 0:
            rows.append(({a: 1.0}, math.log(float(low)) - 1e-12))
    eps = 1e-9
    for a in atoms:
        pos = [r for r in rows if r[0].get(a, 0) > 0]
        neg = [r for r in rows if r[0].get(a, 0) < 0]
        rest = [r for r in rows if not r[0].get(a, 0)]
        if len(pos) * len(neg) + len(rest) > 400:
            return False
        for (cp, kp), (cn, kn) in itertools.product(pos, neg):
            fp, fn = cp[a], -cn[a]
            coef: dict[sympy.Expr, float] = {}
            for b, v in cp.items():
                coef[b] = coef.get(b, 0.0) + v / fp
            for b, v in cn.items():
                coef[b] = coef.get(b, 0.0) + v / fn
            coef = {b: v for b, v in coef.items() if b != a and abs(v) > 1e-12}
            rest.append((coef, kp / fp + kn / fn))
        rows = rest
    # only constants left: 0 > k must hold for every row (with a margin for boundaries)
    return any(not coef and k >= -eps for coef, k in rows)

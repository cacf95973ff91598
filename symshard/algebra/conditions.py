"""Conditions: unions of cases of relations, printable as text and LaTeX, checked at a point, and
evaluated on a chip.

A :class:`Condition` is what :func:`~symshard.planning.crossovers.compare` and the layer schemes
(:mod:`symshard.models.schemes`) answer with: a union of labelled :class:`Case` objects, each a
conjunction of SymPy relations (``B < C/W_ici``). Conditions that
:func:`~symshard.planning.crossovers.compare` derives also keep the exact inequalities their relations
stand for (:mod:`symshard.algebra.inequalities`), so that substituting numbers, or checking a point,
works on sums of monomials; others (the schemes') go through SymPy's solving
(:mod:`symshard.algebra.solving`, below this module).

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
from .inequalities import Relation, conjunction, implies, minimal, solve
from .mathtext import as_expr, as_substitution
from .solving import bound_of, merge_bounds, simplify_rel
from .substitution import SubstitutionLike, names_of, substitution
from .symbols import latex
from .units import pretty, sig

__all__ = ["Case", "Clauses", "Condition", "drop_subsumed", "merge_labels"]

_TRUE, _FALSE = sympy.true, sympy.false


# -- conditions -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class Case:
    """A conjunction of relations, with a label saying which regimes it covers.

    ``exact`` holds, when the case comes from :func:`~symshard.planning.crossovers.compare`, the
    :class:`~symshard.algebra.inequalities.Relation` each of ``relations`` prints, with the inequality it
    stands for; ``relations`` are then written from them when first read (a comparison makes many cases
    and prints few). Equal and hashed by its label and relations.
    """

    label: str
    exact: tuple[Relation, ...]
    _relations: tuple[sympy.Basic, ...] | None

    def __init__(self, label: str, relations: Sequence[sympy.Basic] = (), exact: Sequence[Relation] = ()) -> None:
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "exact", tuple(exact))
        object.__setattr__(self, "_relations", tuple(relations) if relations or not exact else None)

    @classmethod
    def of(cls, label: str, relations: Sequence[Relation]) -> Case:
        """A case from exact relations."""
        return cls(label, (), relations)

    @property
    def relations(self) -> tuple[sympy.Basic, ...]:
        """The relations, as SymPy relationals."""
        if self._relations is None:  # written once, when first read (the same relations either way)
            object.__setattr__(self, "_relations", tuple(r.relational() for r in self.exact))
        assert self._relations is not None
        return self._relations

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Case) and (self.label, self.relations) == (other.label, other.relations)

    def __hash__(self) -> int:
        return hash((self.label, self.relations))

    def __repr__(self) -> str:
        return f"Case(label={self.label!r}, relations={self.relations!r})"

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
    split: bool | str = field(default=True, compare=False, repr=False)
    memo: dict = field(default_factory=dict, compare=False, repr=False, hash=False)  # numbers put in, by point

    @classmethod
    def of(cls, cases: Sequence[tuple[str, Sequence[Relation]]], domain: Domain, split: bool | str = True) -> Condition:
        """A condition from exact labelled cases (already simplified); ``split`` says how its relations
        are solved again when numbers are put in (see :func:`~symshard.algebra.inequalities.solve`)."""
        return cls(tuple(Case.of(label, rels) for label, rels in cases), domain, split)

    def key(self) -> tuple | frozenset:
        """What identifies the condition: its cases' relations (two conditions with one key say the same)."""
        if self.exact:
            return frozenset(frozenset(r.key for r in c.exact) for c in self.cases)
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
        return any(not c.exact and not c.relations for c in self.cases)

    def text(self) -> str:
        """``B < C/W_ici``, or several cases joined by ``or``."""
        if self.never:
            return say("never")
        if self.always:
            return say("always")
        if len(self.cases) == 1:
            return self.cases[0].text()
        return say("{cases}", cases=AnyOf(say("({case})", case=c.text()) for c in self.cases))

    def longer_than(self, limit: int) -> bool:
        """Whether :meth:`text` is surely longer than ``limit`` characters, found from its relations' own
        lengths without writing the rest (a long condition is costly to write, and a screen has no room)."""
        return _longer_than((r for c in self.cases for r in c.relations), limit)

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
        if self.exact:  # read from the exact inequalities, without writing the relations out
            atoms = {a for c in self.cases for r in c.exact for a in r.source.expr.atoms}
            return frozenset(s for a in atoms for s in a.free_symbols)  # type: ignore[misc]
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
            key = (frozenset(point.items()), symbol)
            found = self.memo.get(key)
            if found is None:
                found = self.memo[key] = self._subs_exact(point, symbol, self.domain)
            return found
        cases = []
        for c in self.cases:
            rels = [simplify_rel(as_expr(r).subs(point), symbol) for r in c.relations]
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
        given = frozenset(numbers.items())
        for c in self.cases:
            parts = [_solved(r, numbers, given, symbol, left, domain, self.split) for r in c.exact]
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

    def formula(self) -> str:
        """The condition with no words, for a repr: relations joined by ``∧``, cases by ``∨``; ``True``, ``False``.

        Examples:
            >>> B, D = sympy.symbols("B D", positive=True)
            >>> Condition((Case("", (sympy.Lt(B, D), sympy.Gt(D, 2))), Case("", (sympy.Gt(B, 3),)))).formula()
            '(B < D ∧ D > 2) ∨ (B > 3)'
        """
        if self.never or self.always:
            return str(self.always)
        shown = [" ∧ ".join(_rel_text(r) for r in c.relations) for c in self.cases]
        return shown[0] if len(shown) == 1 else " ∨ ".join(f"({s})" for s in shown)


def _solved(
    r: Relation, numbers: Mapping, given: frozenset, symbol: sympy.Symbol | None, left: Domain, domain: Domain, split
) -> list[list[Relation]]:
    """``r`` with ``numbers`` put in, solved again (each relation once per point: a comparison's regions
    share the relations of its pairs)."""
    key = ("subs", given, symbol, domain, split)
    found = r.memo.get(key)
    if found is None:
        found = r.memo[key] = solve(r.source.substitute(numbers), symbol, left, split)
    return found


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


def _longer_than(relations, limit: int) -> bool:
    total = 0
    for r in relations:
        total += len(_rel_text(r))
        if total > limit:
            return True
    return False


_TEXTS: dict[sympy.Basic, str] = {}
_LATEX: dict[sympy.Basic, str] = {}


def _rel_text(r: sympy.Basic) -> str:
    """A relation as text, each relation written once (a comparison prints the same relations often)."""
    found = _TEXTS.get(r)
    if found is None:
        if len(_TEXTS) > 65536:
            _TEXTS.clear()
        found = _TEXTS[r] = _rel_text_of(r)
    return found


def _rel_text_of(r: sympy.Basic) -> str:
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
    found = _LATEX.get(r)
    if found is None:
        if len(_LATEX) > 65536:
            _LATEX.clear()
        found = _LATEX[r] = latex(r)
    return found


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
    "memory-bound": say("memory-bound"),
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
            b = bound_of(r)
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
        if len(parts) == 1:
            return parts[0].text()
        shown = (p.text() if len(p.cases) == 1 else say("({case})", case=p.text()) for p in parts)
        return say("{relations}", relations=AllOf(shown))

    def longer_than(self, limit: int) -> bool:
        """Whether :meth:`text` is surely longer than ``limit`` characters (see :meth:`Condition.longer_than`)."""
        return _longer_than((r for p in self.parts for c in p.cases for r in c.relations), limit)

    def latex(self) -> str:
        if self.never:
            return r"\text{never}"
        parts = [p for p in self.parts if not p.always]
        if not parts:
            return r"\text{always}"
        if len(parts) == 1:
            return parts[0].latex()
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
        return Clauses(tuple(p for p in parts if not p.always), domain).simplified()

    def simplified(self) -> Clauses:
        """The same conjunction with nothing said twice: the relations of one-case clauses together in
        minimal form (``J < 4096 and J < 4096`` is ``J < 4096``; a bound a tighter one implies goes), the
        cases of the other clauses that contradict them dropped, and a clause they imply dropped.

        Examples:
            >>> B, D = sympy.symbols("B D", positive=True)
            >>> once = Condition((Case("", (sympy.Lt(B, D),)),))
            >>> Clauses((once, once)).simplified().text()
            'B < D'
        """
        parts = [p for p in self.parts if not p.always]
        if any(p.never for p in parts):
            return Clauses((Condition((), self.domain),), self.domain)
        unique = list({p.key(): p for p in parts}.values())
        domain = self.domain
        if domain is None or not all(p.exact for p in unique):
            return Clauses(tuple(unique), domain)
        while True:
            core = conjunction([r for p in unique if len(p.cases) == 1 for r in p.cases[0].exact], domain)
            if core is None:
                return Clauses((Condition((), domain),), domain)
            changed = False
            out: list[Condition] = []
            for p in unique:
                if len(p.cases) == 1:
                    out.append(p)
                    continue
                cases = [c for c in p.cases if conjunction([*core, *c.exact], domain) is not None]
                if not cases:
                    return Clauses((Condition((), domain),), domain)
                if any(implies(core, c.exact, domain) for c in cases):
                    changed = True  # the others make this clause hold
                    continue
                if len(cases) < len(p.cases):
                    changed = True
                    p = Condition(tuple(cases), domain, p.split)
                out.append(p)
            unique = list({p.key(): p for p in out}.values())
            if not changed:
                break
        kept = {r.key for r in core}
        final: list[Condition] = []
        for p in unique:
            if len(p.cases) == 1:
                (case,) = p.cases
                rels = [r for r in case.exact if r.key in kept]
                kept -= {r.key for r in rels}  # each relation said once, where it first appears
                if rels:
                    final.append(Condition.of([(case.label, rels)], domain, p.split))
            else:
                final.append(p)
        return Clauses(tuple(final), domain)

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

    def formula(self) -> str:
        """The clauses with no words, for a repr (see :meth:`Condition.formula`)."""
        if self.never or self.always:
            return str(self.always)
        parts = [p for p in self.parts if not p.always]
        return " ∧ ".join(p.formula() if len(p.cases) == 1 else f"({p.formula()})" for p in parts)

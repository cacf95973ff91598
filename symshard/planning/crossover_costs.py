"""A strategy's time as :func:`~symshard.planning.crossovers.compare` weighs it: ``T_math``, ``T_hbm`` and
the parts of ``T_comms`` (bandwidth-bound), each a sum of monomials, on the domain where the strategy is
valid.

Part of :mod:`symshard.planning`, below the modules that solve these times
(:mod:`~symshard.planning.crossover_conditions`), sample them
(:mod:`~symshard.planning.crossover_sampling`) and hold what is found
(:mod:`~symshard.planning.crossover_results`). The strategies of a plan share a few domains: each is kept
as one object, so what is proved or solved on it is worked out once.

Examples:
    >>> from symshard.algebra.domains import Domain
    >>> from symshard.planning.planner import plan
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", hbm=False)
    >>> s = p.strategy(1)
    >>> c = compared_costs(s, Domain.around(s.compute_time.free_symbols | s.bandwidth_comm_time.free_symbols), p)
    >>> c.math, c.comms, c.hbm
    (Signomial(2*B*D*F/(C*|X|)), (Signomial(4*B*F/W_ici),), None)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import sympy

from ..algebra.domains import Domain
from ..algebra.mathtext import as_expr
from ..algebra.monomials import Maximum, from_expr
from ..algebra.signomials import Signomial
from .strategies import Plan, Strategy

__all__ = ["ComparedCosts", "compared_costs", "joint_domain"]


@dataclass(frozen=True, slots=True)
class ComparedCosts:
    """A strategy's ``T_math``, ``T_hbm`` (None when left out) and the parts of ``T_comms`` (the busiest
    link's total is the largest part)."""

    math: Signomial
    comms: tuple[Signomial, ...]
    domain: Domain
    hbm: Signomial | None = None

    @property
    def local(self) -> list[Signomial]:
        """The local product's terms: ``T_math`` and ``T_hbm``."""
        return [self.math] if self.hbm is None else [self.math, self.hbm]

    def terms(self, serial: bool) -> list[Signomial]:
        """The terms whose largest is the time: each local term plus each part of ``T_comms`` when they add
        up (``serial``), else every term on its own."""
        if serial:
            return [m + c for m in self.local for c in self.comms] or self.local
        return [*self.local, *self.comms]

    def time(self, serial: bool) -> Maximum:
        return Maximum.of(self.terms(serial))


def compared_costs(
    s: Strategy, base: Domain, p: Plan, formulas: tuple[sympy.Expr, ...] | None = None, hbm: bool = True
) -> ComparedCosts:
    """``s``'s terms as compared, from its formulas (``(T_math, T_comms, T_hbm)``, read from ``s`` if not
    given)."""
    if formulas is None:
        formulas = (s.compute_time, s.bandwidth_comm_time, *((s.hbm_time,) if p.hbm and hbm else ()))
    math_ = from_expr(formulas[0]).parts
    comm = from_expr(formulas[1]).reduced(base)
    domain = _domain(s, p, base)
    comms = tuple(c for c in comm.parts if not c.is_zero)
    local = from_expr(formulas[2]).parts if len(formulas) > 2 else ()
    return ComparedCosts(math_[0], comms, domain, local[0] if len(local) == 1 and not local[0].is_zero else None)


def _domain(s: Strategy, p: Plan, base: Domain) -> Domain:
    """Where ``s`` is valid: each dim at least the devices that shard it (a multiple of them)."""
    sizes = dict(p.sizes)
    groups: dict[sympy.Expr, list[frozenset[sympy.Expr]]] = {d: list(g) for d, g in base.groups.items()}
    floors: dict[sympy.Expr, Fraction] = {d: Fraction(f) for d, f in base.floors.items()}
    for d, axes in s.divisibility:
        size = as_expr(sizes[d])
        if size.is_number:
            continue
        counts = [as_expr(p.mesh.size(a)) for a in axes]
        symbolic = frozenset(n for n in counts if not n.is_number)
        known = math.prod(int(n) for n in counts if n.is_number)
        if symbolic and symbolic not in groups.get(size, []):
            groups.setdefault(size, []).append(symbolic)
        floors[size] = max(floors.get(size, Fraction(1)), Fraction(known * 2 ** len(symbolic)))
    return _canonical(Domain.of(base.axes, groups, floors))


def joint_domain(a: Domain, b: Domain) -> Domain:
    """Where both ``a`` and ``b`` hold: every group of each, the larger floor of each dim."""
    groups = {d: list(g) for d, g in a.groups.items()}
    for d, gs in b.groups.items():
        for g in gs:
            if g not in groups.setdefault(d, []):
                groups[d].append(g)
    floors = dict(a.floors)
    for d, f in b.floors.items():
        floors[d] = max(floors.get(d, 0), f)
    return _canonical(Domain.of(a.axes | b.axes, groups, floors))


_DOMAINS: dict[tuple, Domain] = {}


def _canonical(d: Domain) -> Domain:
    """One object for each domain (the strategies of a plan share a few): what is proved or solved on
    it (kept in its memo, and by :mod:`~symshard.planning.crossover_conditions`) is worked out once."""
    key = (
        d.axes,
        frozenset((k, frozenset(gs)) for k, gs in d.groups.items()),
        frozenset((k, Fraction(f)) for k, f in d.floors.items()),
    )
    found = _DOMAINS.get(key)
    if found is None:
        if len(_DOMAINS) > 4096:
            _DOMAINS.clear()
        found = _DOMAINS[key] = d
    return found

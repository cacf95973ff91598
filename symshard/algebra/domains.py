"""Where costs are compared, and the proof that a sum of monomials is nonnegative there.

A :class:`Domain` says where: every symbol positive, mesh-axis sizes at least 2, a dim at least the
devices that shard it. :func:`nonnegative` proves that a
:class:`~symshard.algebra.signomials.Signomial` is at least 0 everywhere on it, which is how every
comparison of costs is decided (``p ≤ q`` is ``q - p ≥ 0``).

**How it is proved**, never guessed: each negative term ``-a·μ`` of the signomial must be paid for by
positive terms ``b·ν`` whose ratio ``ν/μ`` has a positive lower bound ``L`` on the domain (``|X|`` is
at least 2, ``D/|X|`` at least 1 when X shards D), with ``Σ b·L ≥ a`` over the positive terms it
uses, each positive term spent once. A monomial ratio has a positive lower bound only when every
symbol it leaves unbounded below (a constant such as ``W_ici``, a dim or axis in the denominator with
nothing to cancel it) is absent, so the test is sound: it never claims ``p ≤ q`` where it fails. It
can miss a true inequality whose proof needs more than this term matching; then a caller keeps a
strategy it could have dropped, which costs time, never correctness.

It sits in :mod:`symshard.algebra` above :mod:`.signomials`, and below :mod:`.monomials` (a maximum
drops the parts it proves smaller) and :mod:`.comparisons`.

Examples:
    >>> from symshard.algebra.monomials import from_expr
    >>> from symshard.algebra.symbols import axis, dim
    >>> X, D = axis("X"), dim("D")
    >>> (s,) = from_expr(D - D / X).parts
    >>> nonnegative(s, Domain.of([X])), nonnegative(-s, Domain.of([X]))
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import sympy

from .signomials import Monomial, Number, Signomial, as_number, mono_inv, mono_mul
from .symbols import is_axis_symbol

__all__ = ["Domain", "nonnegative"]


@dataclass(frozen=True, eq=False)
class Domain:
    """Where costs are compared: every symbol positive, each mesh-axis size at least 2, and each
    dim at least the product of the axes that shard it (``groups``: dim symbol to sets of axis
    symbols whose product it is a multiple of). A numeric axis size is a number, not a symbol.

    Examples:
        >>> from symshard.algebra.symbols import axis, dim
        >>> d = Domain.of([axis("X")], {dim("D"): [frozenset({axis("X")})]}, {dim("D"): 4})
        >>> d.floor(((dim("D"), 1), (axis("X"), -1)))
        1
    """

    axes: frozenset[sympy.Expr] = frozenset()
    groups: Mapping[sympy.Expr, tuple[frozenset[sympy.Expr], ...]] = field(default_factory=dict)
    floors: Mapping[sympy.Expr, Number] = field(default_factory=dict)
    memo: dict = field(default_factory=dict, compare=False, repr=False)  # comparisons already decided here
    ratios: dict = field(default_factory=dict, compare=False, repr=False)  # (ν, μ) -> floor(ν/μ), found once

    @classmethod
    def of(
        cls,
        axes: Iterable[sympy.Expr] = (),
        groups: Mapping[sympy.Expr, Iterable[frozenset[sympy.Expr]]] | None = None,
        floors: Mapping[sympy.Expr, Number] | None = None,
    ) -> Domain:
        return cls(
            frozenset(axes),
            {d: tuple(gs) for d, gs in (groups or {}).items()},
            dict(floors or {}),
        )

    @classmethod
    def around(cls, atoms: Iterable[sympy.Expr]) -> Domain:
        """The plain domain of ``atoms``: mesh axes at least 2, everything else positive."""
        return cls(frozenset(a for a in atoms if is_axis_symbol(a)))

    def floor(self, m: Monomial) -> Number:
        """A lower bound of the monomial ``m`` over the domain (0 when it is unbounded below)."""
        exps = dict(m)
        # dims with a positive power cancel negative powers of the axes that shard them (D ≥ |X|·|Y|)
        for d, e in list(exps.items()):
            if e <= 0 or d not in self.groups:
                continue
            for group in self.groups[d]:
                need = max((-exps.get(a, 0) for a in group), default=0)
                t = min(exps[d], need)
                if t <= 0:
                    continue
                exps[d] -= t
                for a in group:
                    exps[a] = exps.get(a, 0) + t
                if not exps[d]:
                    break
        bound: Number = 1
        for a, e in exps.items():
            if e == 0:
                continue
            if a in self.axes:
                if e < 0:
                    return 0
                bound *= 2**e
            elif a in self.floors or (a.is_Symbol and a.is_integer):
                if e < 0:
                    return 0
                bound *= as_number(Fraction(self.floors.get(a, 1)) ** e)
            else:
                return 0
        return bound


def nonnegative(s: Signomial, domain: Domain) -> bool:
    """Whether ``s ≥ 0`` at every point of ``domain``, proved by paying each negative term with positive
    terms (see the module docstring). False means "not proved"."""
    negatives = [(m, -c) for m, c in s.terms.items() if c < 0]
    if not negatives:
        return True
    budget = {m: Fraction(c) for m, c in s.terms.items() if c > 0}
    if not budget:
        return False
    ratios = domain.ratios  # the same pairs of terms come up in comparison after comparison
    for mu, need in negatives:
        need = Fraction(need)
        inverse = None
        offers = []
        for nu, left in budget.items():
            if left <= 0:
                continue
            ratio = ratios.get((nu, mu))
            if ratio is None:
                if inverse is None:
                    inverse = mono_inv(mu)
                ratio = ratios[(nu, mu)] = domain.floor(mono_mul(nu, inverse))
            if ratio > 0:
                offers.append((ratio, nu))
        offers.sort(key=lambda o: -o[0])
        for ratio, nu in offers:
            left = budget[nu]
            pay = left * ratio
            if pay >= need:
                budget[nu] = left - need / ratio
                need = Fraction(0)
                break
            budget[nu] = Fraction(0)
            need -= pay
        if need > 0:
            return False
    return True

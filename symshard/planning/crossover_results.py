"""What :func:`~symshard.planning.crossovers.compare` answers: each strategy's :class:`Regime`, a
:class:`PairComparison` for each pair compared, each winner's :class:`Region`, and the :class:`Comparison`
that holds them.

Part of :mod:`symshard.planning`, below :mod:`~symshard.planning.crossovers` (which makes them, and
re-exports them): values only, each condition symbolic and, on a chip, worked out with the chip's
constants when first read (:class:`OnChip`).

Examples:
    >>> from symshard.planning.crossovers import compare
    >>> c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies=[2, 1])
    >>> [r.index for r in c.regimes], (c.pairs[0].a, c.pairs[0].b), c.region(1)
    ([1, 2], (2, 1), None)
    >>> c.strategy(2).name, c.regimes[1].communication_bound.text()
    ('AllGather_X(Y) → matmul', 'B < C/W_ici')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from ..algebra.conditions import Clauses, Condition
from ..algebra.domains import Domain
from ..algebra.monomials import Maximum
from ..errors import PlanError
from ..machines.chips import Hardware
from ..messages import say
from .crossover_costs import compared_costs
from .strategies import Plan, Strategy

__all__ = ["Comparison", "OnChip", "PairComparison", "Regime", "Region"]


@dataclass(frozen=True, slots=True)
class Regime:
    """When one strategy is communication-bound, when memory-bound, and otherwise compute-bound.

    ``communication_bound`` compares ``T_comms`` with ``T_math``, as the chapter does (``B < C/W_ici``);
    ``memory_bound`` says where ``T_hbm`` is the largest of the three (None when the comparison leaves HBM
    out), and wins over the other where both hold: the strategy waits on memory there, whichever of
    ``T_comms`` and ``T_math`` is the larger. ``numeric`` and ``numeric_memory`` are the same on the
    chip compared on.
    """

    index: int
    strategy: Strategy
    communication_bound: Condition
    numeric: Condition | None
    memory_bound: Clauses | None = None
    numeric_memory: Clauses | None = None

    def bound(self, values: Mapping) -> str | None:
        """``'memory'``, ``'communication'`` or ``'compute'`` at a point, as the conditions say (None if
        one cannot be decided there); a tie goes to compute, then memory, as
        :attr:`~symshard.planning.strategies.Strategy.bound` has it."""
        if self.memory_bound is not None:
            memory = self.memory_bound.holds(values)
            if memory is None:
                return None
            if memory:
                return "memory"
        comms = self.communication_bound.holds(values)
        if comms is None:
            return None
        return "communication" if comms else "compute"

    def __repr__(self) -> str:
        from ..shown import summary

        numeric = None if self.numeric is None else self.numeric.formula()
        memory = None if self.numeric_memory is None else self.numeric_memory.formula()
        return summary("Regime", self.strategy.name, {"index": self.index,
                       "communication_bound": self.communication_bound.formula()},
                       {"numeric": numeric, "memory_bound": memory})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class OnChip:
    """A chip's numbers to put into conditions, and the symbol to solve for again: the conditions on the
    chip are worked out when first read (a short answer reads few of them)."""

    values: Mapping[sympy.Expr, object]
    symbol: sympy.Symbol

    def of(self, condition: Condition | Clauses) -> Condition | Clauses:
        return condition.subs(self.values, self.symbol)


@dataclass(frozen=True, slots=True)
class PairComparison:
    """When strategy ``a`` is faster than strategy ``b``; ``numeric_a_wins`` and ``numeric_b_wins``: the
    same on the chip compared on (None without one)."""

    a: int
    b: int
    a_wins: Condition | Clauses
    b_wins: Condition | Clauses
    chip: OnChip | None = field(default=None, repr=False, compare=False)

    @property
    def numeric_a_wins(self) -> Condition | Clauses | None:
        return self.chip.of(self.a_wins) if self.chip is not None else None

    @property
    def numeric_b_wins(self) -> Condition | Clauses | None:
        return self.chip.of(self.b_wins) if self.chip is not None else None

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("PairComparison", None, {"a": self.a, "b": self.b}, {"a_wins": self.a_wins.formula()},
                       {"b_wins": self.b_wins.formula()})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class Region:
    """Where one strategy is the fastest: where it beats each of its neighbours (the strategies whose
    regions touch its own), as one conjunction of the pairs' clauses; ``numeric``: the same on the chip
    compared on (None without one)."""

    index: int
    strategy: Strategy
    neighbours: tuple[int, ...]
    condition: Clauses
    chip: OnChip | None = field(default=None, repr=False, compare=False)

    @property
    def numeric(self) -> Clauses | None:
        if self.chip is None:
            return None
        found = self.chip.of(self.condition)
        assert isinstance(found, Clauses)
        return found

    def holds(self, values: Mapping) -> bool | None:
        """Whether the point lies in the region (None if a clause cannot be decided there)."""
        return self.condition.holds(values)

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Region", self.strategy.name, {"index": self.index, "neighbours": list(self.neighbours)},
                       {"condition": self.condition.formula()})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Regime boundaries and crossovers for a plan's strategies, solved for one symbol.

    ``strategies`` are the strategies compared, numbered as ``regimes`` and ``pairs`` number them (the
    plan's numbers, or with ``strategies="all"`` their numbers in ``plan.all_strategies()``).
    ``best`` is each strategy that can be the fastest with its :class:`Region` (empty when the
    strategies were listed explicitly), ``dominated`` the others with the strategy at least as fast
    everywhere (0 when none is proved, only never faster at the sample points).
    """

    plan: Plan
    symbol: sympy.Symbol
    regimes: tuple[Regime, ...]
    pairs: tuple[PairComparison, ...]
    hardware: Hardware | None
    assumptions: tuple[str, ...]
    strategies: tuple[tuple[int, Strategy], ...] = ()
    best: tuple[Region, ...] = ()
    dominated: tuple[tuple[int, int], ...] = ()
    domain: Domain | None = field(default=None, repr=False, compare=False)
    mode: str = "explicit"
    serial: bool = False
    hbm: bool = False

    def time(self, index: int) -> Maximum:
        """Strategy ``index``'s time as the comparison weighs it: ``T_math`` and the bandwidth-bound
        ``T_comms`` (the busiest link's total), overlapped or added as compared, on sums of monomials."""
        s = self.strategy(index)
        domain = self.domain or Domain.around(s.compute_time.free_symbols)
        return compared_costs(s, domain, self.plan, hbm=self.hbm).time(self.serial)

    def strategy(self, index: int) -> Strategy:
        """A compared strategy by its number."""
        for i, s in self.strategies:
            if i == index:
                return s
        raise PlanError(
            say("strategy {index} is not in this comparison", index=index),
            hint=say("pick a number the comparison lists"),
        )

    def region(self, index: int) -> Region | None:
        """Where strategy ``index`` is the fastest (None if it never is)."""
        return next((r for r in self.best if r.index == index), None)

    def fastest(self, values: Mapping) -> int | None:
        """The number of the region that holds the point (None if none does or it cannot be decided)."""
        for r in self.best:
            if r.holds(values):
                return r.index
        return None

    def __repr__(self) -> str:
        from ..shown import summary

        return summary(
            "Comparison", str(self.plan.matmul), {"strategies": [i for i, _ in self.strategies],
            "fastest": [r.index for r in self.best] or None, "mode": self.mode},
            solve_for=str(self.symbol), hardware=self.hardware and self.hardware.name,
        )  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)

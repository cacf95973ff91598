"""The packed listing: every valid strategy of a plan in order, millions of them, built only when read.

``plan(..., all=True)`` lists every valid strategy: a quarter of a million on a mesh of three axes with
XLA's orders, millions with batch dims. :class:`Listed` keeps them, sorted, as their numbers in the
enumeration (8 bytes each), and :class:`StrategyList` builds each
:class:`~symshard.planning.strategies.Strategy` only when it is read, a few hundred kept at a time; a
search through every strategy's collectives reads their legs without building any.

In :mod:`symshard.planning` it sits below :mod:`.enumeration`, which sorts the listing and hands it
these; they read strategies back through it as a :class:`RecipeSource`, and above :mod:`.shardings`.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from .rawcosts import Value
from .shardings import Product, Route
from .strategies import Leg, Strategy

__all__ = ["Listed", "RecipeSource", "StrategyList"]


class RecipeSource(Protocol):
    """Where a :class:`StrategyList` builds its strategies: an
    :class:`~symshard.planning.enumeration.Enumeration` (named so, this module need not import it)."""

    def build(self, p: Product, picks: tuple[int, int, int]) -> Strategy:
        """The strategy of compute sharding ``p`` with the routes numbered ``picks``."""
        ...

    def legs_of(self, p: Product, picks: tuple[int, int, int]) -> tuple[Leg, Leg, Leg]:
        """The legs of the strategy :meth:`build` builds."""
        ...

    def flops_of(self, p: Product) -> Value:
        """The FLOPs per device of compute sharding ``p``'s local product."""
        ...


class Listed(Sequence):
    """Strategies as (compute sharding, picks) in a plan's order, kept as their numbers in the enumeration
    (8 bytes each): a number is a compute sharding's first number plus its routes' positions, the left
    operand's, then the right's, then the result's, in mixed radix."""

    def __init__(
        self,
        products: list[tuple[Product, tuple[Route, ...], tuple[Route, ...], tuple[Route, ...]]],
        starts: list[int],
        numbers: array,
    ) -> None:
        self._products = products
        self._starts = starts
        self._numbers = numbers

    def __len__(self) -> int:
        return len(self._numbers)

    def routes(self, i: int) -> tuple[Product, Route, Route, Route]:
        """Strategy ``i``'s compute sharding and the route of each of its legs."""
        n = self._numbers[i]
        k = bisect.bisect_right(self._starts, n) - 1
        p, ls, rs, os_ = self._products[k]
        a, rest = divmod(n - self._starts[k], len(rs) * len(os_))
        b, c = divmod(rest, len(os_))
        return p, ls[a], rs[b], os_[c]

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        p, a, b, c = self.routes(i)
        return p, (a.index, b.index, c.index)

    def combined(self, of: Callable[[Leg], tuple]) -> list[tuple]:
        """:meth:`StrategyList.combined`, in the enumeration's order first (each pair of operand legs joined
        once), then put in the plan's; equal results are one object."""
        by_number: list[tuple] = []
        seen: dict[tuple, tuple] = {}
        for _, ls, rs, os_ in self._products:
            outs = [of(r.leg) for r in os_]
            right = [of(r.leg) for r in rs]
            for ra in ls:
                left = of(ra.leg)
                for rb in right:
                    both = left + rb
                    for rc in outs:
                        items = tuple(sorted(both + rc))
                        by_number.append(seen.setdefault(items, items))
        return [by_number[n] for n in self._numbers]


class StrategyList(Sequence):
    """Strategies listed by a plan with ``all=True``: recipes in order, each :class:`Strategy` built when
    read (a few hundred kept at a time), so that a hundred thousand never sit in memory at once."""

    def __init__(self, source: RecipeSource, recipes: Sequence[tuple[Product, tuple[int, int, int]]]) -> None:
        self._source = source
        self._recipes = recipes
        self._built: dict[int, Strategy] = {}

    def __len__(self) -> int:
        return len(self._recipes)

    def legs(self, i: int) -> tuple[Leg, Leg, Leg]:
        """Strategy ``i``'s resharding legs (left operand's, right operand's, result's), read without
        building the strategy: what a search through every strategy's collectives needs."""
        recipes = self._recipes
        if isinstance(recipes, Listed):  # its routes at hand: the same legs, without looking them up
            _, a, b, c = recipes.routes(i)
            return a.leg, b.leg, c.leg
        p, picks = recipes[i]
        return self._source.legs_of(p, picks)

    def combined(self, of: Callable[[Leg], tuple]) -> list[tuple]:
        """For every strategy, in order, the sorted items that ``of`` reads from its three legs together
        (e.g. the signatures of their collectives): what a search through every strategy's collectives
        needs, without building one."""
        recipes = self._recipes
        if isinstance(recipes, Listed):
            return recipes.combined(of)
        return [tuple(sorted(item for leg in self.legs(i) for item in of(leg))) for i in range(len(self))]

    def flops(self, i: int) -> Value:
        """Strategy ``i``'s local product's FLOPs per device (its ``raw_product_flops``), without building it."""
        return self._source.flops_of(self._recipes[i][0])

    def index_of(self, strategy: Strategy) -> int:
        """The position of ``strategy`` (one read from this list), found without building the others."""
        for i, s in self._built.items():
            if s is strategy:
                return i
        return self.index(strategy)

    def _at(self, i: int) -> Strategy:
        found = self._built.get(i)
        if found is None:
            if len(self._built) >= 512:
                self._built.clear()
            p, picks = self._recipes[i]
            found = self._built[i] = self._source.build(p, picks)
        return found

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._at(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self._at(i % n)

    def __iter__(self) -> Iterator[Strategy]:
        for i in range(len(self)):
            yield self._at(i)

    def __repr__(self) -> str:
        return f"<{len(self)} strategies>"

"""The packed listing: every valid strategy of a plan in order, millions of them, built only when read.

``plan(..., all=True)`` lists every valid strategy: a quarter of a million on a mesh of three axes with
XLA's orders, millions with batch dims. :class:`Listed` keeps them, sorted, as their numbers in the
enumeration (8 bytes each), and :class:`StrategyList` builds each
:class:`~symshard.planning.strategies.Strategy` only when it is read, a few hundred kept at a time; a
search through every strategy's collectives reads their legs without building any. With numbers,
:func:`packed_order` puts them in the plan's order, each strategy's key packed into one integer.

In :mod:`symshard.planning` it sits below :mod:`.enumeration`, which sorts the listing and hands it
these; they read strategies back through it as a :class:`RecipeSource`, and above :mod:`.shardings`
and :mod:`.costenv`.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Protocol

from ..notation.einsums import Matmul
from .costenv import CostEnv
from .rawcosts import Value
from .shardings import Product, Route
from .strategies import Leg, Strategy

__all__ = ["Listed", "RecipeSource", "StrategyList", "packed_order"]


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


def packed_order(
    products: list[tuple[Product, tuple[tuple[Route, ...], tuple[Route, ...], tuple[Route, ...]]]],
    env: CostEnv,
    mm: Matmul,
    overlap: bool,
    resident: Value,
) -> Listed | None:
    """With numbers: every valid strategy in the plan's order (time, T_comms, memory, steps, the
    sharding's order, then the enumeration's), with the keys :meth:`~symshard.planning.costenv.CostEnv.join`
    and :func:`~symshard.planning.builder.peak_memory` give, worked out once per pair of operand legs and
    then per result leg; None when a time or a size is not an exact number (the enumeration then sorts
    them one key at a time). ``products`` are the compute shardings, each with the routes of its three
    legs, and ``resident`` the bytes the operands' local sums keep
    (:attr:`~symshard.planning.builder.Builder.prelude`).

    Times and bytes are exact fractions; each is scaled by the common denominator of its kind to an
    integer (the same order, the same ties), and a strategy's whole key is packed into one integer, the
    fields side by side in widths their bounds fix, its number in the enumeration last: a million
    strategies sort as a million integers, and only their numbers are kept (:class:`Listed`)."""
    serial = env.comm_overlap == "none"
    routes = {id(route): route for _, legs in products for leg in legs for route in leg}
    times = [p.local_time for p, _ in products]
    sizes = [env.bytes(mm.lhs), env.bytes(mm.rhs), resident]
    sizes += [env.bytes(p.local_out) for p, _ in products]
    for route in routes.values():
        times += [route.leg.comm, *(v for _, v in route.leg.loads)]
        sizes += [route.leg.peak, route.leg.final]
    if not all(isinstance(v, int | Fraction) for v in (*times, *sizes)):
        return None
    per_time = math.lcm(*(Fraction(v).denominator for v in times))
    per_byte = math.lcm(*(Fraction(v).denominator for v in sizes))

    def in_time(v: Value) -> int:
        return int(v * per_time)

    def in_bytes(v: Value) -> int:
        return int(v * per_byte)

    scaled = {
        key: (
            in_time(r.leg.comm),
            tuple((link, in_time(v)) for link, v in r.leg.loads),
            in_bytes(r.leg.peak),
            in_bytes(r.leg.final),
            len(r.leg.steps),
        )
        for key, r in routes.items()
    }
    operands = in_bytes(env.bytes(mm.lhs)) + in_bytes(env.bytes(mm.rhs)) + in_bytes(resident)
    # each field's width: T_comms is at most the legs' own times added up (a link is busy for at most
    # every leg's whole time), the peak at most every leg's peak and result on top of each other
    orders = {o: i for i, o in enumerate(sorted({p.order for p, _ in products}))}
    count = most_time = most_bytes = most_steps = 0
    for p, legs in products:
        count += math.prod(len(leg) for leg in legs)
        fields = [[scaled[id(r)] for r in leg] for leg in legs]
        comm = sum(max((f[0] for f in leg), default=0) for leg in fields)
        most_time = max(most_time, in_time(p.local_time) + comm)
        held = sum(max((f[2] + f[3] for f in leg), default=0) for leg in fields)
        most_bytes = max(most_bytes, operands + in_bytes(env.bytes(p.local_out)) + held)
        most_steps = max(most_steps, 1 + sum(max((f[4] for f in leg), default=0) for leg in fields))
    w_time, w_bytes, w_steps = most_time.bit_length(), most_bytes.bit_length(), most_steps.bit_length()
    w_order, w_n = max(len(orders) - 1, 0).bit_length(), max(count - 1, 0).bit_length()
    keys: list[int] = []
    starts: list[int] = []
    for p, (ls, rs, os_) in products:
        starts.append(len(keys))
        out_bytes = in_bytes(env.bytes(p.local_out))
        compute = in_time(p.local_time)
        order = orders[p.order]
        outs = [scaled[id(c)] for c in os_]
        for ra in ls:
            a_comm, a_loads, a_peak, a_final, a_steps = scaled[id(ra)]
            for rb in rs:
                b_comm, b_loads, b_peak, b_final, b_steps = scaled[id(rb)]
                loads: dict[str, int] = {}  # each link's total over the operands' legs
                for link, v in (*a_loads, *b_loads):
                    loads[link] = loads.get(link, 0) + v
                busiest = max(loads.values(), default=0)
                both = a_comm + b_comm
                peak = max(a_peak, a_final + b_peak, a_final + b_final + out_bytes)
                steps = a_steps + b_steps + 1
                for c_comm, c_loads, c_peak, _, c_steps in outs:
                    if serial:
                        comm = both + c_comm
                    else:
                        comm = busiest
                        for link, v in c_loads:
                            total = loads.get(link, 0) + v
                            if total > comm:
                                comm = total
                    time = (comm if comm > compute else compute) if overlap else compute + comm
                    memory = operands + (peak if peak >= c_peak else c_peak)
                    key = (time << w_time | comm) << w_bytes | memory
                    key = ((key << w_steps | steps + c_steps) << w_order | order) << w_n | len(keys)
                    keys.append(key)
    keys.sort()
    mask = (1 << w_n) - 1
    numbers = array("q", (key & mask for key in keys))
    del keys
    return Listed([(p, *legs) for p, legs in products], starts, numbers)


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

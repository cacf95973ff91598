"""The enumeration of compute shardings: every valid strategy of one plan, and the searches among them.

:class:`Enumeration` walks every compute sharding (:mod:`.shardings`) and every route of each leg
(:mod:`.builder`), keeping the strategies whose every array divides evenly. Its searches keep only
those that can win (with numbers a branch and bound on lower bounds, with symbols the Pareto front of
:mod:`.pruning`), find the chapter's natural strategy, match a known set of collectives (XLA's), and
sort every strategy into a packed listing (:mod:`.listing`). Strategies are built, with SymPy
formulas, only when a plan lists them or a caller reads them.

In :mod:`symshard.planning` it sits above every other planner module but :mod:`.planner`, whose
entry points drive it.

Examples:
    >>> from symshard.planning.planner import plan
    >>> source = plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4", "I=64,J=64,K=64", hardware="tpu-v5e").source
    >>> source.count(), source.natural().name
    (6, 'matmul → AllReduce_X(C)')
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence

from ..costs.collectives import CollectiveExpr, DynamicSlice
from ..errors import TooLargeError
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import LocalMatmul, Matmul, local_sums
from .builder import Builder, costed_leg
from .costenv import CostEnv, Probe
from .listing import StrategyList, packed_order
from .pruning import Domains, SymbolicCandidate, pareto, probe_cost, prune_numeric, prune_symbolic, witnesses
from .rawcosts import Value
from .route_search import RouteSearch, check_deadline
from .routes import reshard_routes
from .shardings import (
    KEEP,
    Product,
    Route,
    axis_choices,
    axis_order,
    combo_position,
    compute_array,
    interchangeable_axes,
    sharding_combos,
)
from .strategies import Leg, PlanStep, Reason, Strategy, order_of, sort_key

__all__ = ["MAX_LISTED", "MAX_SHARDINGS", "MAX_SYMBOLIC_SHARDINGS", "Enumeration"]

MAX_SHARDINGS = 16_384
"""The most compute shardings a plan tries with every size a number (a 2-D matmul on seven mesh axes of
different sizes, about ten seconds); one choice per mesh axis, so they grow exponentially with the axes.
Axes of one size that no array names are interchangeable and count once per set of choices."""

MAX_SYMBOLIC_SHARDINGS = 2_048
"""The most compute shardings a plan tries with symbolic sizes, whose costs are compared as formulas (a
2-D matmul on five symbolic axes, seconds; on six, most of a minute)."""

MAX_LISTED = 25_000_000
"""The most strategies ``all=True`` lists (the largest that :func:`symshard.jax.verification.verify` checks
lists twelve million, in about a gigabyte)."""


class Enumeration:
    """Every valid strategy of one plan, enumerated on demand, and the searches that keep only those
    that can win.

    A strategy is a compute sharding (:class:`Product`) and a route for each leg; its costs are
    worked out in ``costs`` (the plan's own numbers, or for symbolic plans the sums of monomials of a
    :class:`Probe`), and :class:`Strategy` objects are built, with SymPy formulas, only for the
    strategies a plan lists or a caller reads.
    """

    def __init__(
        self, mm: Matmul, env: CostEnv, targets: Sequence[Array], overlap: bool, xla: bool, wide: bool = False
    ) -> None:
        # dims only one operand has and the product drops are summed locally first (every strategy's first
        # steps, the builders' prelude); the compute shardings and legs are the product's that is left
        self.given = mm
        self.sums = local_sums(mm)
        self.mm = mm.product
        self.env = env
        self.targets = tuple(targets)
        self.overlap = overlap
        self.xla = xla
        self.wide = wide and xla  # XLA's further orders on a mesh of three axes (see reshard_routes)
        self.costs: CostEnv = env if env.numeric else Probe(env)
        self.pruning = Builder(self.costs, overlap, xla, self.wide, self.sums)
        self.building = self.pruning if env.numeric else Builder(env, overlap, xla, self.wide, self.sums)
        self.choices = axis_choices(self.mm, env)
        self.names = [a for a, _ in self.choices]
        self._products: dict[bool, list[Product]] = {}
        self._routes: dict[tuple[Array, Array, str], tuple[Route, ...]] = {}
        self._needs: dict[Array, frozenset[tuple[str, tuple[str, ...]]]] = {}
        self._plain: dict[tuple[Array, Array, str], tuple[tuple[int, tuple[CollectiveExpr, ...]], ...]] = {}

    def widened(self) -> Enumeration:
        """This enumeration with XLA's further orders on a mesh of three axes (see
        :func:`~symshard.planning.routes.reshard_routes`): what :meth:`~symshard.planning.strategies.Plan.matching` searches with ``further``."""
        return Enumeration(self.given, self.env, self.targets, self.overlap, True, wide=True)

    # -- compute shardings
    def shardings(self, symmetric: bool = False) -> int:
        """How many compute shardings :meth:`products` walks (before the equal ones are dropped), counted
        without walking them: one choice per mesh axis, each set of interchangeable axes counted once per
        multiset of choices (``symmetric``), for each output and each order of axes."""
        options = [opts for _, opts in self.choices]
        classes = interchangeable_axes(self.mm, self.env, self.targets) if symmetric else []
        grouped = {i for members in classes for i in members}
        count = math.prod(len(opts) for i, opts in enumerate(options) if i not in grouped)
        for members in classes:
            count *= math.comb(len(options[members[0]]) + len(members) - 1, len(members))
        return count * len(self.targets) * (3 if self.wide else 1)

    def check_size(self, every: bool) -> None:
        """Refuse, before any work, a plan with more compute shardings to try than :data:`MAX_SHARDINGS`
        (:data:`MAX_SYMBOLIC_SHARDINGS` with symbolic sizes) or, listing ``every`` strategy, more
        strategies than :data:`MAX_LISTED`.

        Raises:
            TooLargeError: the plan is too large, with the number and how to make it smaller.
        """
        numeric = self.env.numeric
        limit = MAX_SHARDINGS if numeric or every else MAX_SYMBOLIC_SHARDINGS
        count = self.shardings(symmetric=not every)
        if count > limit:
            axes = sum(1 for _, opts in self.choices if len(opts) > 1)
            if every and self.shardings(symmetric=True) <= (MAX_SHARDINGS if numeric else MAX_SYMBOLIC_SHARDINGS):
                hint = say(
                    "list only the strategies that can win (without --all, or all=False), or use fewer mesh axes"
                )
            elif not numeric and count <= MAX_SHARDINGS:
                hint = say(
                    "give every size as a number (--shape and --hw), with which the planner tries up to {limit}, "
                    "or use fewer mesh axes",
                    limit=f"{MAX_SHARDINGS:,}",
                )
            else:
                hint = say(
                    "use fewer mesh axes (one of size 1 costs nothing), or give axes that always move together "
                    "as one (X=2,Y=2 as X=4)"
                )
            raise TooLargeError(
                say(
                    "planning {matmul} on {axes} mesh axes means trying {count} compute shardings, more than the "
                    "planner takes ({limit})",
                    matmul=str(self.mm),
                    axes=axes,
                    count=f"{count:,}",
                    limit=f"{limit:,}",
                ),
                hint=hint,
            )
        if every:
            listed = self.count()
            if listed > MAX_LISTED:
                raise TooLargeError(
                    say(
                        "{matmul} has {count} valid strategies, more than a listing takes ({limit})",
                        matmul=str(self.mm),
                        count=f"{listed:,}",
                        limit=f"{MAX_LISTED:,}",
                    ),
                    hint=say(
                        "list only the strategies that can win (without --all, or all=False), or use fewer mesh axes"
                    ),
                )

    def products(self, symmetric: bool = False) -> list[Product]:
        """The valid compute shardings, in the enumeration's order; with ``symmetric``, one of each set
        that only swaps interchangeable idle axes (same size and links, named by no array), the one the
        ranking puts first: their strategies cost exactly the same."""
        found = self._products.get(symmetric)
        if found is not None:
            return found
        mm, env = self.mm, self.env
        names = self.names
        options = [opts for _, opts in self.choices]
        classes = interchangeable_axes(mm, env, self.targets) if symmetric else []
        mine_l = frozenset(mm.lhs.dim_names) | {KEEP}
        mine_r = frozenset(mm.rhs.dim_names) | {KEEP}
        out: list[Product] = []
        seen: set[tuple[Array, Array, Array]] = set()
        radix = math.prod(len(o) for o in options)
        # a dim split by several axes takes them in the order the arrays write them, the output's first;
        # XLA's partitioner may follow either operand's order instead, so with XLA's orders on a mesh of
        # three axes those come too
        orders = [(0, 1, 2), (1, 2, 0), (2, 1, 0)] if self.wide else [(0, 1, 2)]
        jobs = [(o, number, target) for o in range(len(orders)) for number, target in enumerate(self.targets)]
        for o, number, target in jobs:
            arrays = (target, mm.lhs, mm.rhs)
            rank = axis_order(mm.dims, [arrays[k] for k in orders[o]], names)
            compute: dict[tuple, Array] = {}
            for combo in sharding_combos(options, classes):
                index = (o * len(self.targets) + number) * radix + combo_position(options, combo)
                key_l = (0, *(c if c in mine_l else None for c in combo))
                key_r = (1, *(c if c in mine_r else None for c in combo))
                lhs_c = compute.get(key_l)
                if lhs_c is None:
                    sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
                    lhs_c = compute[key_l] = compute_array(mm.lhs, sigma, rank)
                rhs_c = compute.get(key_r)
                if rhs_c is None:
                    sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
                    rhs_c = compute[key_r] = compute_array(mm.rhs, sigma, rank)
                key = (lhs_c, rhs_c, target)
                if key in seen:
                    continue
                seen.add(key)
                prep = self.pruning.prepare(mm.lhs, mm.rhs, lhs_c, rhs_c, target)
                if prep is None:
                    continue
                local_out, flops, compute_time, hbm_time = prep
                if not (env.fits(lhs_c) and env.fits(rhs_c) and env.fits(local_out)):
                    continue
                sharding = tuple(zip(names, combo, strict=True))
                out.append(Product(index, sharding, lhs_c, rhs_c, target, local_out, flops, compute_time, hbm_time))
        self._products[symmetric] = out
        return out

    # -- legs
    def needs(self, array: Array) -> frozenset[tuple[str, tuple[str, ...]]]:
        found = self._needs.get(array)
        if found is None:
            found = self._needs[array] = frozenset((d.name, tuple(sorted(d.axes))) for d in array.dims if d.axes)
        return found

    def routes(self, src: Array, dst: Array, role: str) -> tuple[Route, ...]:
        """The routes of one leg whose every array divides evenly, costed for pruning."""
        key = (src, dst, role)
        found = self._routes.get(key)
        if found is None:
            env = self.env
            out = []
            for i, leg in enumerate(self.pruning.routes(src, dst, role)):
                arrays = [st.op.output for st in leg.steps]
                if all(env.fits(a) for a in arrays):
                    needs = frozenset().union(*(self.needs(a) for a in arrays)) if arrays else frozenset()
                    out.append(Route(i, leg, needs))
            found = self._routes[key] = tuple(out)
        return found

    def legs(self, p: Product) -> tuple[tuple[Route, ...], tuple[Route, ...], tuple[Route, ...]]:
        mm = self.mm
        return (
            self.routes(mm.lhs, p.lhs_c, "lhs"),
            self.routes(mm.rhs, p.rhs_c, "rhs"),
            self.routes(p.local_out, p.target, "out"),
        )

    # -- strategies
    def legs_of(self, p: Product, picks: tuple[int, int, int]) -> tuple[Leg, Leg, Leg]:
        """The legs (left operand's, right operand's, result's) of the strategy :meth:`build` builds."""
        mm, b = self.mm, self.building
        return (
            b.routes(mm.lhs, p.lhs_c, "lhs")[picks[0]],
            b.routes(mm.rhs, p.rhs_c, "rhs")[picks[1]],
            b.routes(p.local_out, p.target, "out")[picks[2]],
        )

    def flops_of(self, p: Product) -> Value:
        """The FLOPs per device of compute sharding ``p``'s local product (its strategies' ``raw_product_flops``)."""
        return p.flops if self.building is self.pruning else self.building.env.flops(p.lhs_c, p.rhs_c)

    def build(self, p: Product, picks: tuple[int, int, int]) -> Strategy:
        """The strategy of compute sharding ``p`` with the routes numbered ``picks`` (SymPy formulas when
        the plan is symbolic)."""
        return self._assemble(p, self.legs_of(p, picks))

    def _assemble(self, p: Product, legs: tuple[Leg, Leg, Leg]) -> Strategy:
        """The strategy of compute sharding ``p`` with these legs (left operand's, right operand's, result's)."""
        mm, b = self.mm, self.building
        if b is self.pruning:
            flops, compute_time, hbm_time = p.flops, p.compute_time, p.hbm_time
        else:
            flops, compute_time, hbm_time = b.local_costs(p.lhs_c, p.rhs_c, p.local_out)
        product = PlanStep("matmul", LocalMatmul(p.lhs_c, p.rhs_c, p.local_out), None, flops)
        return b.build(
            mm.lhs, mm.rhs, p.target, p.sharding, product, compute_time, p.local_out, *legs, hbm_time=hbm_time
        )

    def recipes(self) -> Iterator[tuple[Product, tuple[int, int, int]]]:
        """Every valid strategy as (compute sharding, routes), in the enumeration's order."""
        for p in self.products():
            ls, rs, os_ = self.legs(p)
            for a in ls:
                for b in rs:
                    for c in os_:
                        yield p, (a.index, b.index, c.index)

    def matching(
        self, signature: Callable[[tuple[CollectiveExpr, ...]], tuple], target: tuple, deadline: float | None = None
    ) -> Iterator[tuple[Product, tuple[int, int, int]]]:
        """The valid strategies whose legs' steps, read by ``signature`` (a sorted tuple of hashable
        items per route), add up to ``target`` (a sorted tuple), in the enumeration's order, found
        without listing the rest: each leg keeps only the routes whose items are among the target's,
        and the result's route is looked up by what the operands' legs leave over. A search for one known
        set of collectives (XLA's plan) through more strategies than a listing can sort. Past ``deadline``
        it raises :class:`~symshard.errors.TimeLimitError` (:func:`~symshard.planning.route_search.check_deadline`)."""
        want = Counter(target)
        cache: dict[tuple[CollectiveExpr, ...], Counter | None] = {}

        def items(steps: tuple[CollectiveExpr, ...]) -> Counter | None:
            found = cache.get(steps, False)
            if found is False:
                c = Counter(signature(steps))
                found = cache[steps] = c if not c - want else None
            return found  # type: ignore[return-value]

        mm = self.mm
        for p in self.products():
            check_deadline(deadline)
            legs: list[list[tuple[int, Counter]]] = []
            for src, dst in ((mm.lhs, p.lhs_c), (mm.rhs, p.rhs_c), (p.local_out, p.target)):
                legs.append([(i, c) for i, r in self.plain(src, dst) if (c := items(r)) is not None])
            if not all(legs):
                continue
            outs: dict[tuple, list[int]] = {}
            for k, ck in legs[2]:
                outs.setdefault(tuple(sorted(ck.elements())), []).append(k)
            for a, ca in legs[0]:
                for b, cb in legs[1]:
                    rest = want - ca - cb
                    if ca + cb + rest != want:
                        continue  # the operands' legs already hold more than the target
                    for k in outs.get(tuple(sorted(rest.elements())), ()):
                        yield p, (a, b, k)

    def composed(
        self,
        item: Callable[[CollectiveExpr], Hashable | None],
        target: tuple,
        kinds: Mapping[str, int] | None = None,
        deadline: float | None = None,
    ) -> Iterator[tuple[Product, tuple[tuple[CollectiveExpr, ...], ...]]]:
        """The strategies over the enumeration's compute shardings whose legs are any routes of exact
        steps (:func:`~symshard.planning.route_search.every_route`, not only the planner's) with items, read by ``item`` (None for a free
        step), adding up to ``target`` (a sorted tuple), and (with ``kinds``) at most so many steps of each
        kind: each as (compute sharding, its three routes). Numbers only (a route search needs the axis
        sizes); every array on the way divides evenly. Past ``deadline`` it raises
        :class:`~symshard.errors.TimeLimitError`."""
        sizes = self.building.sizes
        if sizes is None:
            return
        budget = Counter(target)
        search = RouteSearch(sizes, item, budget, kinds, deadline=deadline)  # one search, from every array
        reached: dict[Array, dict[Array, list[tuple[tuple[CollectiveExpr, ...], Counter]]]] = {}

        def routes(src: Array, dst: Array) -> list[tuple[tuple[CollectiveExpr, ...], Counter]]:
            ends = reached.get(src)
            if ends is None:
                ends = reached[src] = {}
                for steps, used in search.routes(src):
                    if all(self.env.fits(e.output) for e in steps):
                        end = steps[-1].output if steps else src
                        ends.setdefault(end, []).append((steps, Counter(used)))
            return ends.get(dst, [])

        mm = self.mm
        for p in self.products():
            check_deadline(deadline)
            lhs_routes = routes(mm.lhs, p.lhs_c)
            rhs_routes = routes(mm.rhs, p.rhs_c) if lhs_routes else []
            out_routes = routes(p.local_out, p.target) if rhs_routes else []
            if not out_routes:
                continue
            outs: dict[tuple, list[tuple[CollectiveExpr, ...]]] = {}
            for steps, used in out_routes:
                outs.setdefault(tuple(sorted(used.elements())), []).append(steps)
            for ra, ca in lhs_routes:
                for rb, cb in rhs_routes:
                    rest = budget - ca - cb
                    if ca + cb + rest != budget:
                        continue
                    for rc in outs.get(tuple(sorted(rest.elements())), ()):
                        yield p, (ra, rb, rc)

    def build_routed(self, p: Product, routes: tuple[tuple[CollectiveExpr, ...], ...]) -> Strategy:
        """The strategy of compute sharding ``p`` whose legs take these routes (from :meth:`composed`)."""
        mm, env = self.mm, self.building.env
        ends = ((mm.lhs, p.lhs_c, "lhs"), (mm.rhs, p.rhs_c, "rhs"), (p.local_out, p.target, "out"))
        pre_l, pre_r, post = (
            costed_leg(env, src, dst, role, role != "out", steps)
            for (src, dst, role), steps in zip(ends, routes, strict=True)
        )
        return self._assemble(p, (pre_l, pre_r, post))

    def rebuild(self, strategy: Strategy) -> Strategy | None:
        """``strategy`` (of this product, on this mesh, perhaps costed with other sizes) with its steps costed
        here: the same collectives and product, at this enumeration's sizes. None when one of its arrays
        does not divide evenly at these sizes.

        Examples:
            >>> from symshard.planning.planner import plan
            >>> small = plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4", "I=64,J=64,K=64", hardware="tpu-v5e")
            >>> big = plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4", "I=4096,J=4096,K=4096", hardware="tpu-v5e")
            >>> again = big.source.rebuild(small.strategies[0])
            >>> again.name == small.strategies[0].name, again.raw_flops == 2 * 4096**3 // 4
            (True, True)
        """
        env, b, mm = self.env, self.building, self.mm
        local = strategy.local  # every array it holds must divide here
        arrays = [local.lhs, local.rhs, local.output, *(st.op.output for st in strategy.steps)]
        if not all(env.fits(a) for a in arrays):
            return None
        prep = b.prepare(mm.lhs, mm.rhs, local.lhs, local.rhs, strategy.output)
        if prep is None:
            return None
        local_out, flops, compute_time, hbm_time = prep
        ends = {"lhs": (mm.lhs, local.lhs), "rhs": (mm.rhs, local.rhs), "out": (local_out, strategy.output)}
        legs = []
        for role, (src, dst) in ends.items():
            exprs = tuple(st.op for st in strategy.steps if st.role == role and isinstance(st.op, CollectiveExpr))
            legs.append(costed_leg(b.env, src, dst, role, role != "out", exprs))
        product = PlanStep("matmul", LocalMatmul(local.lhs, local.rhs, local_out), None, flops)
        pre_l, pre_r, post = legs
        return b.build(
            mm.lhs, mm.rhs, strategy.output, strategy.sharding, product, compute_time, local_out, pre_l, pre_r, post,
            hbm_time=hbm_time,
        )  # fmt: skip

    def count(self) -> int:
        """How many valid strategies there are (what :meth:`listing` would list), counted without listing them."""
        mm = self.mm
        total = 0
        for p in self.products():
            legs = (self.plain(mm.lhs, p.lhs_c), self.plain(mm.rhs, p.rhs_c), self.plain(p.local_out, p.target))
            total += len(legs[0]) * len(legs[1]) * len(legs[2])
        return total

    def every(self) -> Iterator[Strategy]:
        for p, picks in self.recipes():
            yield self.build(p, picks)

    def plain(self, src: Array, dst: Array) -> tuple[tuple[int, tuple[CollectiveExpr, ...]], ...]:
        """The routes of one leg whose every array divides evenly, uncosted: ``(index, steps)``."""
        key = (src, dst, "")
        found = self._plain.get(key)
        if found is None:
            sizes = self.building.sizes
            routes = reshard_routes(src, dst, sizes, self.xla, self.wide)
            found = self._plain[key] = tuple(
                (i, r) for i, r in enumerate(routes) if all(self.env.fits(s.output) for s in r)
            )
        return found

    def find(self, name: str) -> Strategy | None:
        """The valid strategy called ``name`` the plan would list first, or None."""
        mm = self.mm
        sums = [[st.label() for st in steps] for steps in (self.pruning.prelude.lhs, self.pruning.prelude.rhs)]
        matches = []
        for p in self.products():
            legs = (self.plain(mm.lhs, p.lhs_c), self.plain(mm.rhs, p.rhs_c), self.plain(p.local_out, p.target))
            for a, ra in legs[0]:
                for b, rb in legs[1]:
                    for c, rc in legs[2]:
                        labels = [*sums[0], *(_label(s, "lhs") for s in ra), *sums[1]]
                        labels += [*(_label(s, "rhs") for s in rb), "matmul"]
                        labels += [_label(s, "out") for s in rc]
                        if " → ".join(labels) == name:
                            matches.append(self.build(p, (a, b, c)))
        return min(matches, key=lambda s: sort_key(s, self.env.numeric)) if matches else None

    def listing(self) -> StrategyList:
        """Every valid strategy, sorted as a plan lists them, built when read."""
        return StrategyList(self, self._ranked() if self.env.numeric else self._sorted_exactly())

    def _sorted_exactly(self) -> Sequence[tuple[Product, tuple[int, int, int]]]:
        """Every valid strategy in the plan's order, each key worked out on its own (symbolic costs, or
        numbers :meth:`_ranked` cannot scale to integers)."""
        numeric = self.env.numeric
        keyed = []
        for n, (p, picks) in enumerate(self.recipes()):
            ls, rs, os_ = (dict((r.index, r) for r in leg) for leg in self.legs(p))
            a, b, c = ls[picks[0]], rs[picks[1]], os_[picks[2]]
            steps = len(a.leg.steps) + len(b.leg.steps) + 1 + len(c.leg.steps)
            if numeric:
                comm = self.costs.join((a.leg, b.leg, c.leg))
                memory = self.pruning.memory(self.mm.lhs, self.mm.rhs, a.leg, b.leg, c.leg, p.local_out)
                key: tuple = (_combine(p.local_time, comm, self.overlap), comm, memory, steps, p.order, n)
            else:
                collectives = a.collectives + b.collectives + c.collectives
                shards = sum(1 for _, x in p.sharding if x is not None)
                key = (collectives, -shards, steps, p.order, n)
            keyed.append((key, p, picks))
        keyed.sort(key=lambda k: k[0])
        return tuple((p, picks) for _, p, picks in keyed)

    def _ranked(self) -> Sequence[tuple[Product, tuple[int, int, int]]]:
        """With numbers: every valid strategy in the plan's order (time, T_comms, memory, steps, the
        sharding's order, then the enumeration's), packed by :func:`~symshard.planning.listing.packed_order`;
        sorted by :meth:`_sorted_exactly` when a time or a size is not an exact number."""
        products = [(p, self.legs(p)) for p in self.products()]
        packed = packed_order(products, self.env, self.mm, self.overlap, self.pruning.prelude.resident)
        return self._sorted_exactly() if packed is None else packed

    # -- the chapter's rule
    def natural(self) -> Strategy | None:
        """:attr:`~symshard.planning.strategies.Plan.natural`: the operands used as they are (fewest slices of an input), then the
        fewest steps and collectives; ties go to the strategy the plan would list first."""
        mm = self.mm

        def counts(steps: tuple[CollectiveExpr, ...]) -> tuple[int, int, int]:
            sliced = sum(1 for s in steps if isinstance(s.op, DynamicSlice))
            return sliced, len(steps), len(steps) - sliced

        best_key: tuple | None = None
        tied: list[tuple[Product, tuple[int, int, int]]] = []
        for p in self.products(symmetric=True):
            legs = (self.plain(mm.lhs, p.lhs_c), self.plain(mm.rhs, p.rhs_c), self.plain(p.local_out, p.target))
            if not all(legs):
                continue
            a = min(legs[0], key=lambda r: (*counts(r[1]), r[0]))
            b = min(legs[1], key=lambda r: (*counts(r[1]), r[0]))
            ca, cb = counts(a[1]), counts(b[1])
            for c, rc in legs[2]:
                cc = counts(rc)
                key = (ca[0] + cb[0], ca[1] + cb[1] + 1 + cc[1], ca[2] + cb[2] + cc[2])
                if best_key is None or key < best_key:
                    best_key, tied = key, []
                if key == best_key:
                    tied.append((p, (a[0], b[0], c)))
        if not tied:
            return None
        if not self.env.numeric:
            # the tied share their counts of collectives and steps, so the ranking (fewest collectives,
            # most work split, fewest steps, the sharding's order) needs no formulas: build the one
            p, picks = min(
                tied, key=lambda t: (-sum(1 for _, x in t[0].sharding if x is not None), order_of(t[0].sharding))
            )
            return self.build(p, picks)
        built = [self.build(p, picks) for p, picks in tied]
        return min(built, key=lambda s: sort_key(s, self.env.numeric))

    # -- the strategies that can win
    def winners(self) -> tuple[list[Strategy], list[Reason], list[tuple[str, int]]]:
        """The strategies that can win somewhere, with the reason for each, and what was counted."""
        if self.env.numeric:
            front = self._front()
            out = [self.build(p, picks) for _, _, p, picks in front]
            reasons = [Reason("fastest")]
            reasons += [Reason("fastest_within", (("memory", memory),)) for _, memory, _, _ in front[1:]]
            return out, reasons, []
        return self._undominated()

    def fastest(self) -> Strategy | None:
        """The fastest strategy (ties as :func:`~symshard.planning.strategies.sort_strategies` breaks them), by branch and bound."""
        front = self._front(only_best=True)
        if not front:
            return None
        _, _, p, picks = front[0]
        return self.build(p, picks)

    def _front(self, only_best: bool = False) -> list[tuple[tuple, Value, Product, tuple[int, int, int]]]:
        """With numbers: the strategies no other beats in the ranking without needing more memory (the
        fastest under some memory limit), fastest first; a branch and bound over the compute shardings
        on lower bounds of their ranking key and memory (FLOPs time, each leg's latency floor, then its
        fastest route), so that most are never costed."""
        mm, env = self.mm, self.env
        overlap = self.overlap
        cheap, lower = env.hop_floor, env.bound
        front: list[tuple[tuple, Value, Product, tuple[int, int, int]]] = []
        fastest_leg: dict[tuple[Array, Array, str], Value] = {}

        def quickest(src: Array, dst: Array, role: str) -> Value | None:
            key = (src, dst, role)
            if key not in fastest_leg:
                legs = self.routes(src, dst, role)
                fastest_leg[key] = min((r.leg.comm for r in legs), default=None)
            return fastest_leg[key]

        # with collectives on different links overlapping, T_comms is the busiest link's total (join_loads):
        # on each link, every leg adds at least the least any of its routes keeps that link busy (0 for a
        # route that does not use it); the busiest such sum bounds T_comms where the legs' largest floor is weak
        per_link = env.comm_overlap != "none"
        least_loads: dict[tuple[Array, Array, str], dict[str, Value]] = {}

        def least_on_links(src: Array, dst: Array, role: str) -> dict[str, Value]:
            key = (src, dst, role)
            found = least_loads.get(key)
            if found is None:
                routes = self.routes(src, dst, role)
                links = {r for route in routes for r, _ in route.leg.loads}
                found = {}
                for link in links:
                    found[link] = min(dict(route.leg.loads).get(link, 0) for route in routes)
                least_loads[key] = found
            return found

        def busiest(legs: Sequence[tuple[Array, Array, str]], floored: Sequence[tuple[Array, Array]] = ()) -> Value:
            # legs routed (the least each route keeps a link busy), and legs not yet routed (floor_loads)
            totals: dict[str, Value] = {}
            loads = [least_on_links(src, dst, role) for src, dst, role in legs]
            loads += [env.floor_loads(src, dst) for src, dst in floored]
            for found in loads:
                for link, v in found.items():
                    totals[link] = totals.get(link, 0) + v
            return max(totals.values(), default=0)

        def beaten(key: tuple, memory: Value) -> bool:
            if only_best:
                return bool(front) and front[0][0] < key
            return any(f_memory <= memory and f_key < key for f_key, f_memory, _, _ in front)

        def offer(key: tuple, memory: Value, p: Product, picks: tuple[int, int, int]) -> None:
            if beaten(key, memory):
                return
            if only_best:
                front[:] = [(key, memory, p, picks)]
                return
            front[:] = [f for f in front if not (memory <= f[1] and key < f[0])]
            front.append((key, memory, p, picks))
            front.sort(key=lambda f: f[0])

        heap: list[tuple] = []
        for p in self.products(symmetric=True):
            heap.append(((p.local_time, 0, 0, 0, p.order, p.index), 0, p))
        heapq.heapify(heap)
        while heap:
            bound, stage, p = heapq.heappop(heap)
            if beaten(bound, bound[2]):
                continue
            if stage == 0:
                low = lower([cheap(mm.lhs, p.lhs_c), cheap(mm.rhs, p.rhs_c), cheap(p.local_out, p.target)])
                if per_link:
                    low = max(low, busiest((), [(mm.lhs, p.lhs_c), (mm.rhs, p.rhs_c), (p.local_out, p.target)]))
                moved = [dst for src, dst in ((mm.lhs, p.lhs_c), (mm.rhs, p.rhs_c)) if src != dst]
                memory: Value = env.bytes(mm.lhs) + env.bytes(mm.rhs) + self.pruning.prelude.resident
                extra: Value = 0
                for dst in moved:
                    extra = extra + env.bytes(dst)
                memory = memory + (extra + env.bytes(p.local_out))
                steps = 1 + len(moved) + (p.local_out != p.target)
            elif stage in (1, 2):
                parts = [quickest(mm.lhs, p.lhs_c, "lhs"), quickest(mm.rhs, p.rhs_c, "rhs")]
                parts.append(quickest(p.local_out, p.target, "out") if stage == 2 else cheap(p.local_out, p.target))
                if any(x is None for x in parts):
                    continue  # a leg with no route that divides evenly
                low = lower(parts)
                if per_link:
                    legs = [(mm.lhs, p.lhs_c, "lhs"), (mm.rhs, p.rhs_c, "rhs")]
                    if stage == 2:
                        legs.append((p.local_out, p.target, "out"))
                    low = max(low, busiest(legs, [] if stage == 2 else [(p.local_out, p.target)]))
                memory, steps = bound[2], bound[3]
            else:
                self._cost_product(p, offer)
                continue
            refined = (_combine(p.local_time, low, overlap), low, memory, steps, bound[4], bound[5])
            heapq.heappush(heap, (refined, stage + 1, p))
        return front

    def _cost_product(self, p: Product, offer) -> None:
        """Offer every strategy of ``p`` to ``offer`` (ranking key, memory), routes that another route of
        the same leg beats in every way left out."""
        mm, builder = self.mm, self.pruning
        legs = [prune_numeric(r, self.env.comm_overlap) for r in self.legs(p)]
        for a in legs[0]:
            for b in legs[1]:
                for c in legs[2]:
                    comm = self.costs.join((a.leg, b.leg, c.leg))
                    memory = builder.memory(mm.lhs, mm.rhs, a.leg, b.leg, c.leg, p.local_out)
                    steps = len(a.leg.steps) + len(b.leg.steps) + 1 + len(c.leg.steps)
                    picks = (a.index, b.index, c.index)
                    key = (_combine(p.local_time, comm, self.overlap), comm, memory, steps, p.order, p.index, picks)
                    offer(key, memory, p, picks)

    def _undominated(self) -> tuple[list[Strategy], list[Reason], list[tuple[str, int]]]:
        """With symbols: the strategies no other valid strategy dominates (FLOPs, communication time and
        memory each at least its, everywhere both are valid), each with a sample point where it is the
        fastest when one is found."""
        mm, costs, builder = self.mm, self.costs, self.pruning
        base = self.needs(mm.lhs) | self.needs(mm.rhs) | frozenset().union(*(self.needs(t) for t in self.targets))
        domains = Domains(self.env, base)
        valid = 0
        candidates: list[SymbolicCandidate] = []
        for p in self.products(symmetric=self.env.mesh.is_numeric):
            raw = self.legs(p)
            valid += len(raw[0]) * len(raw[1]) * len(raw[2])
            legs = [prune_symbolic(r, self.env.comm_overlap, domains) for r in raw]
            shards = sum(1 for _, x in p.sharding if x is not None)
            product_needs = self.needs(p.lhs_c) | self.needs(p.rhs_c) | self.needs(p.local_out)
            for a in legs[0]:
                for b in legs[1]:
                    for c in legs[2]:
                        comm = costs.join((a.leg, b.leg, c.leg))
                        memory = builder.memory(mm.lhs, mm.rhs, a.leg, b.leg, c.leg, p.local_out)
                        steps = len(a.leg.steps) + len(b.leg.steps) + 1 + len(c.leg.steps)
                        order = (a.collectives + b.collectives + c.collectives, -shards, steps, p.order, p.index)
                        needs = product_needs | a.needs | b.needs | c.needs
                        metrics = (
                            probe_cost(p.compute_time),
                            probe_cost(comm),
                            probe_cost(memory),
                            probe_cost(p.hbm_time),
                        )
                        candidates.append(SymbolicCandidate(p, (a.index, b.index, c.index), metrics, needs, order))
        kept = pareto(candidates, domains)
        strategies = [self.build(c.product, c.picks) for c in kept]
        reasons = witnesses(kept, domains, self.overlap)
        counted = [("valid", valid), ("dominated", valid - len(kept))]
        return strategies, reasons, counted


def _combine(compute_time: Value, comm: Value, overlap: bool) -> Value:
    """A strategy's time from its parts, numbers only (``_max`` without its checks)."""
    if overlap:
        return comm if comm > compute_time else compute_time
    return compute_time + comm


def _label(step: CollectiveExpr, role: str) -> str:
    """A step's short name, as :meth:`PlanStep.label` gives it."""
    return f"{step.op}({step.operand.name or role})"

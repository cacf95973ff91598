"""Every route of the algebra, searched for a known set of collectives: :func:`every_route` and
:class:`RouteSearch`, with the deadline that stops them (:func:`check_deadline`).

The planner's routes (:mod:`.routes`) are a chosen few; this is the whole algebra: any route of exact
steps (:func:`~symshard.planning.route_steps.one_step`) whose collectives are drawn from a budget, such
as the collectives of XLA's plan. It answers whether a plan made elsewhere is one of symshard's algebra
at all, which the planner's listing cannot: :meth:`symshard.planning.planner.Plan.matching` searches with
it. In :mod:`symshard.planning` it sits on :mod:`.route_steps`, beside :mod:`.routes`.

Examples:
    >>> routes = every_route(Array.parse("A[I_X, J]"), (("X", 2),), lambda e: e.op.kind, {"AllToAll": 1})
    >>> [[str(e.op) for e in steps] for steps, _ in routes]
    [[], ['AllToAll_{X,J}']]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping

from ..costs.collectives import CollectiveExpr, DynamicSlice
from ..errors import TimeLimitError
from ..messages import say
from ..notation.arrays import Array
from .route_steps import STEP_KINDS, steps_of_kind

__all__ = ["RouteSearch", "check_deadline", "every_route"]


def check_deadline(deadline: float | None) -> None:
    """Raise :class:`~symshard.errors.TimeLimitError` once ``time.perf_counter()`` has passed ``deadline``
    (None: no deadline). The searches below call it as they go.

    Examples:
        >>> check_deadline(None)
        >>> check_deadline(time.perf_counter() - 1)
        Traceback (most recent call last):
        ...
        symshard.errors.TimeLimitError: the search ran past its time limit
        hint: allow it more time
    """
    if deadline is not None and time.perf_counter() > deadline:
        raise TimeLimitError(say("the search ran past its time limit"), hint=say("allow it more time"))


def every_route(
    src: Array,
    sizes: tuple[tuple[str, int], ...],
    item: Callable[[CollectiveExpr], Hashable | None],
    budget: Mapping[Hashable, int],
    kinds: Mapping[str, int] | None = None,
    keep: int = 4,
    deadline: float | None = None,
) -> list[tuple[tuple[CollectiveExpr, ...], tuple[Hashable, ...]]]:
    """Routes from ``src`` made of exact steps (:func:`~symshard.planning.route_steps.one_step`) whose items,
    read by ``item`` (None for a step that is free, such as a slice), are drawn from ``budget`` (item to
    how many times it may occur), and (with ``kinds``) with at most so many steps of each kind besides
    free ones: each route with its items. For each array reached with each multiset of items, the first
    ``keep`` routes found (routes alike in both are alike to a search for those items). A route may come
    back to an array (XLA gathers an axis and slices it again); free slices in a row go onto dims in their
    order, so the budget bounds every route.

    This is the whole algebra, not the planner's routes: a search for one known set of collectives
    (XLA's plan) through routes no planner would list, such as a reduce-scatter undone by a gather.
    With many axes and a long budget it can take minutes: past ``deadline`` (a ``time.perf_counter()``
    instant) it raises :class:`~symshard.errors.TimeLimitError` (:func:`check_deadline`). To search from
    several arrays with one budget, :class:`RouteSearch` shares the work between them.

    Examples:
        >>> routes = every_route(Array.parse("A[I_X, J]"), (("X", 2),), lambda e: e.op.kind, {"AllToAll": 1})
        >>> [[str(e.op) for e in steps] for steps, _ in routes]
        [[], ['AllToAll_{X,J}']]
    """
    return RouteSearch(sizes, item, budget, kinds, keep, deadline).routes(src)


class RouteSearch:
    """:func:`every_route` from any number of arrays with one budget: what the search learns from one array
    (the routes onward from each array it reaches, with what is left of the budget) serves the others.

    Examples:
        >>> search = RouteSearch((("X", 2),), lambda e: e.op.kind, {"AllToAll": 1, "AllGather": 1})
        >>> sorted(len(steps) for steps, _ in search.routes(Array.parse("A[I_X, J]")))
        [0, 1, 1, 2]
        >>> [[str(e.op) for e in steps] for steps, _ in search.routes(Array.parse("A[I, J_X]")) if len(steps) == 2]
        [['AllToAll_{X,I}', 'AllGather_X']]
    """

    def __init__(
        self,
        sizes: tuple[tuple[str, int], ...],
        item: Callable[[CollectiveExpr], Hashable | None],
        budget: Mapping[Hashable, int],
        kinds: Mapping[str, int] | None = None,
        keep: int = 4,
        deadline: float | None = None,
    ) -> None:
        self.sizes = sizes
        self.keep = keep
        self.deadline = deadline
        self._item = item
        self._names = [k for k, n in budget.items() if n > 0]  # the items, each counted at its place
        self._place = {k: i for i, k in enumerate(self._names)}
        self._left = [budget[k] for k in self._names]
        everything = sum(self._left)
        self._kinds = [everything if kinds is None else kinds.get(k, 0) for k in STEP_KINDS]
        self._none = (0,) * len(self._names)
        self._read: dict[CollectiveExpr, int] = {}  # a step's place among the items; -1 free; -2 none of them
        # (array, items left, kinds left, the dim the step before sliced) -> (end array, items used) -> routes
        self._memo: dict[tuple, dict[tuple[Array, tuple[int, ...]], list[tuple[CollectiveExpr, ...]]]] = {}

    def routes(self, src: Array) -> list[tuple[tuple[CollectiveExpr, ...], tuple[Hashable, ...]]]:
        """Every route from ``src`` (see :func:`every_route`), each with its items."""
        reached = self._onward(src, -1)
        return [
            (steps, tuple(n for n, k in zip(self._names, used, strict=True) for _ in range(k)))
            for (_, used), routes in reached.items()
            for steps in routes
        ]

    def _read_step(self, expr: CollectiveExpr) -> int:
        found = self._read.get(expr)
        if found is None:
            it = self._item(expr)
            found = self._read[expr] = -1 if it is None else self._place.get(it, -2)
        return found

    def _onward(self, cur: Array, sliced: int) -> dict[tuple[Array, tuple[int, ...]], list[tuple[CollectiveExpr, ...]]]:
        """Every (array, items used) reached from ``cur`` with what is left, with up to ``keep`` routes;
        ``sliced``: the dim the step before sliced (-1: it was no slice)."""
        left, kinds = self._left, self._kinds
        state = (cur, tuple(left), tuple(kinds), sliced)
        done = self._memo.get(state)
        if done is not None:
            return done
        check_deadline(self.deadline)
        keep = self.keep
        out: dict[tuple[Array, tuple[int, ...]], list[tuple[CollectiveExpr, ...]]] = {(cur, self._none): [()]}
        for k, kind in enumerate(STEP_KINDS):
            free = kind == "DynamicSlice"
            if not free and kinds[k] <= 0:
                continue
            for expr in steps_of_kind(cur, self.sizes, kind):
                at = -1
                if isinstance(expr.op, DynamicSlice):
                    at = cur.dim_names.index(expr.op.dim or "")
                    if at <= sliced:
                        continue
                i = self._read_step(expr)
                if i == -2 or (i >= 0 and left[i] <= 0):
                    continue
                if i >= 0:
                    left[i] -= 1
                    kinds[k] -= 1
                    after = self._onward(expr.output, at)
                    left[i] += 1
                    kinds[k] += 1
                else:
                    after = self._onward(expr.output, at)
                for (end, used), tails in after.items():
                    if i >= 0:
                        used = (*used[:i], used[i] + 1, *used[i + 1 :])
                    routes = out.setdefault((end, used), [])
                    for tail in tails:
                        if len(routes) >= keep:
                            break
                        routes.append((expr, *tail))
        self._memo[state] = out
        return out

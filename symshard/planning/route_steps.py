"""One step of a route: a collective (or a free slice) that reshards an array, one step at a time.

The bottom of :mod:`symshard.planning`'s routes: each distinct step built once (:func:`apply_step`),
the collective-permute that reshards (:class:`Repermute`, :func:`single_permute`), what an all-to-all
step moves (:func:`one_source`, :func:`moved_to`), and every exact step the algebra takes from one
array (:func:`one_step`). :mod:`.routes` strings such steps into the routes the planner costs,
:mod:`.route_search` into every route of the algebra; :mod:`.planner` costs them. Nothing here
costs anything.

Examples:
    >>> for e in one_step(Array.parse("A[I_X, J]"), (("X", 2),), ("AllGather", "AllToAll")):
    ...     print(e)
    AllGather_X(A[I_X, J]) -> A[I, J]
    AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    Collective,
    CollectiveExpr,
    CollectivePermute,
    DynamicSlice,
    FusedAllToAll,
    ReduceScatter,
)
from ..memo import on_clear
from ..messages import say
from ..notation.arrays import Array, Dim, format_axes, unchecked_array, unchecked_dim

__all__ = [
    "STEP_KINDS",
    "Repermute",
    "Value",
    "apply_step",
    "moved_to",
    "one_source",
    "one_step",
    "single_permute",
    "steps_of_kind",
]

Value = Any
"""An axis size: an ``int`` when numbers are known, a SymPy expression otherwise."""

_EXPRS: dict[tuple[Collective, Array], CollectiveExpr] = {}
on_clear(_EXPRS.clear)


def apply_step(op: Collective, array: Array) -> CollectiveExpr:
    """``op(array)``, each distinct one built once: the routes of many legs pass through the same steps."""
    key = (op, array)
    expr = _EXPRS.get(key)
    if expr is None:
        if len(_EXPRS) >= 65536:  # bounded like the routes' caches: start afresh
            _EXPRS.clear()
        expr = _EXPRS[key] = CollectiveExpr(op, array)
    return expr


# -- collective-permutes that reshard -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Repermute(CollectivePermute):
    """``CollectivePermute_XY(B[J, K_Y]) -> B[J, K_X]``: a reshard done by moving blocks, not gathering.

    Valid when every device's new block lies inside one block some device holds now
    (for each dim the new shard count is a multiple of the old one) and the partial
    sums are unchanged. Each device cuts from its block the piece one other device
    needs and sends it there (XLA's ``collective-permute``): every device sends and
    receives one block of the *result*, once. ``axes`` are the mesh axes whose
    shardings change, the axes its pairs of devices cross: an axis that shards a dim
    before and after, behind as many shards (``K_PQ`` to ``K_YQ`` with ``|P| = |Y|``),
    keeps every block's coordinate along it and is left out. The time is that of a
    permute over the slowest of their links, the hops the sum of theirs. ``sliced`` names the dims
    that an idle axis also splits on the way (a free slice folded in): the name says them too, so that
    two permutes that differ only there are told apart (``{XZ,B_Y,D_X}`` and ``{XZ,S_Y,D_X}``).

    Examples:
        >>> str(Repermute(("X", "Y"), (Dim("J"), Dim("K", ("X",)))).apply(Array.parse("B[J, K_Y]")))
        'B[J, K_X]'
        >>> Repermute(("X", "Z"), (Dim("B", ("Y",)), Dim("D", ("X",))), ("B",)).subscript
        '{XZ,B_Y,D_X}'
    """

    dims: tuple[Dim, ...] = ()
    sliced: tuple[str, ...] = ()

    def _named(self) -> tuple[Dim, ...]:
        """The dims the name says: those the permute moves, and those a folded slice splits."""
        return tuple(d for d in self.dims if set(d.axes) & set(self.axes) or d.name in self.sliced)

    @property
    def subscript(self) -> str:
        """The axes, then where the moved dims go: ``{XY,K_X}``."""
        moved = ",".join(str(d) for d in self._named())
        return "{" + format_axes(self.axes).strip("{}") + "," + moved + "}"

    def latex(self) -> str:
        moved = ",".join(d.latex() for d in self._named())
        return rf"\text{{{self.kind}}}_{{{format_axes(self.axes).strip('{}')},{moved}}}"

    def apply(self, array: Array) -> Array:
        if tuple(d.name for d in self.dims) != array.dim_names:
            raise self._fail(array, say("the new sharding names other dims"), say("permute keeps the dims"))
        out = Array(array.name, tuple(self.dims), array.unreduced)
        if out == array:
            raise self._fail(array, say("the sharding does not change"), say("a permute here would move nothing"))
        return out


def _divides(small: tuple[str, ...], big: tuple[str, ...], sizes: Mapping[str, Value] | None) -> bool:
    """Whether the shard count over ``small`` divides that over ``big``: known when ``small``'s axes are
    among ``big``'s or the sizes are numbers, assumed when they are symbols (the plan says so)."""
    if set(small) <= set(big):
        return True
    if not big:  # one block cannot come from a part of one
        return False
    if sizes is None:  # symbolic sizes: assumed to divide (as dims are), unless big's axes are fewer of small's
        return not set(big) < set(small)
    n_small = n_big = 1
    for a in small:
        n_small *= sizes[a]
    for a in big:
        n_big *= sizes[a]
    return n_big % n_small == 0


def _kept_in_place(
    axis: str, before: tuple[str, ...], after: tuple[str, ...], sizes: Mapping[str, Value] | None
) -> bool:
    """Whether a dim sharded over ``before``, then over ``after``, keeps its devices' coordinates along
    ``axis``: ``axis`` shards it in both, with as many shards of the dim major to it (``K_PQ`` to
    ``K_YQ`` with ``|P| = |Y|``: each block's Q coordinate is that of the block it comes from, so
    no permute pair crosses Q)."""
    if axis not in before or axis not in after:
        return False
    major_before, major_after = before[: before.index(axis)], after[: after.index(axis)]
    if sizes is None:
        return sorted(major_before) == sorted(major_after)
    return math.prod(sizes[a] for a in major_before) == math.prod(sizes[a] for a in major_after)


def single_permute(src: Array, dst: Array, sizes: Mapping[str, Value] | None) -> CollectiveExpr | None:
    """One collective-permute from ``src`` to ``dst``, when one can do it (see :class:`Repermute`).

    Examples:
        >>> from symshard.notation.arrays import Array
        >>> print(single_permute(Array.parse("A[I_X, J]"), Array.parse("A[I_Y, J]"), {"X": 2, "Y": 2}))
        CollectivePermute_{XY,I_Y}(A[I_X, J]) -> A[I_Y, J]
        >>> single_permute(Array.parse("A[I_X, J]"), Array.parse("A[I, J_X]"), {"X": 2}) is None
        True
    """
    if src == dst or src.unreduced != dst.unreduced or src.dim_names != dst.dim_names:
        return None
    changed: set[str] = set()
    for s, t in zip(src.dims, dst.dims, strict=True):
        if s.axes == t.axes:
            continue
        if not _divides(s.axes, t.axes, sizes):
            return None
        if t.axes[: len(s.axes)] == s.axes:  # only new minor axes: a free slice, not a permute
            extra = [a for a in t.axes[len(s.axes) :] if a in src.axes]
            if not extra:
                continue
        changed.update(a for a in (*s.axes, *t.axes) if not _kept_in_place(a, s.axes, t.axes, sizes))
    if not changed:
        return None
    # dims an idle axis splits on the way (no axis of the permute's): a free slice folded in, named too
    sliced = tuple(
        t.name
        for s, t in zip(src.dims, dst.dims, strict=True)
        if s.axes != t.axes and not set(s.axes + t.axes) & changed
    )
    return Repermute(tuple(sorted(changed)), dst.dims, sliced)(src)


def moved_to(e: CollectiveExpr) -> str | None:
    """The dim an AllToAll step moves its axes onto."""
    return e.op.dim if isinstance(e.op, AllToAll) else None


def one_source(e: CollectiveExpr) -> bool:
    """``e`` is a plain AllToAll whose axes all leave one dim."""
    op = e.op
    if type(op) is not AllToAll or op.dim is None:
        return False
    return len({e.operand.sharded_dim(a) for a in op.axes}) == 1


# -- every exact step from one array ----------------------------------------------------------------


STEP_KINDS = ("DynamicSlice", "AllGather", "AllToAll", "AllReduce", "ReduceScatter", "CollectivePermute")
"""The kinds of step :func:`one_step` takes, in its order."""


def one_step(
    array: Array, sizes: tuple[tuple[str, int], ...], kinds: Sequence[str] = STEP_KINDS
) -> tuple[CollectiveExpr, ...]:
    """Every exact step of ``kinds`` the algebra takes from ``array`` on a mesh of these (numeric) axis
    sizes: a free slice over idle axes at the minor end of a dim; an all-gather of a run at the minor
    end of one dim or more; an all-to-all of such runs onto the minor end of another dim; an all-reduce
    of some of its partial sums, or a reduce-scatter of them onto a dim; and a collective-permute to any
    sharding whose blocks lie inside the present ones (:func:`single_permute`).

    Examples:
        >>> for e in one_step(Array.parse("A[I_X, J]"), (("X", 2), ("Y", 2))):
        ...     print(e)
        DynamicSlice_{Y,I}(A[I_X, J]) -> A[I_XY, J]
        DynamicSlice_{Y,J}(A[I_X, J]) -> A[I_X, J_Y]
        AllGather_X(A[I_X, J]) -> A[I, J]
        AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]
        CollectivePermute_{XY,I_Y}(A[I_X, J]) -> A[I_Y, J]
        CollectivePermute_{XY,I_Y,J_X}(A[I_X, J]) -> A[I_Y, J_X]
        CollectivePermute_{XY,I_YX}(A[I_X, J]) -> A[I_YX, J]
    """
    return tuple(e for kind in kinds for e in steps_of_kind(array, sizes, kind))


@lru_cache(maxsize=16384)
def steps_of_kind(array: Array, sizes: tuple[tuple[str, int], ...], kind: str) -> tuple[CollectiveExpr, ...]:
    """:func:`one_step`'s steps of one kind."""
    out: list[CollectiveExpr] = []
    tails = [[d.axes[k:] for k in range(len(d.axes), -1, -1)] for d in array.dims]  # the empty run first
    pending = sorted(array.unreduced)
    if kind == "DynamicSlice":
        idle = [a for a, _ in sizes if array.sharded_dim(a) is None and a not in array.unreduced]
        for d in array.dims:
            for n in range(1, len(idle) + 1):
                for run in itertools.permutations(idle, n):
                    out.append(apply_step(DynamicSlice(run, d.name), array))
    elif kind == "AllGather":
        for combo in itertools.product(*tails):
            gone = tuple(a for run in combo for a in run)
            if gone:
                out.append(apply_step(AllGather(gone), array))
    elif kind == "AllToAll":
        for t, target in enumerate(array.dims):
            runs = [[run for run in tails[i] if run] if i != t else [] for i in range(len(array.dims))]
            for combo in itertools.product(*[[(), *r] for r in runs]):
                moved = [run for run in combo if run]
                for order in itertools.permutations(moved) if moved else ():
                    out.append(apply_step(AllToAll(tuple(a for run in order for a in run), target.name), array))
        # several of those at once, each from its own dim onto its own dim, which none takes from
        singles = [e for e in out if one_source(e)]
        for n in range(2, len(array.dims) // 2 + 1):
            for moves in itertools.combinations(singles, n):
                sources = {e.operand.sharded_dim(e.op.axes[0]) for e in moves}
                targets = {moved_to(e) for e in moves}
                if len(sources) < n or len(targets) < n or sources & targets:
                    continue
                out.append(apply_step(FusedAllToAll.of([e.op for e in moves]), array))  # type: ignore[misc]
    elif kind in ("AllReduce", "ReduceScatter"):
        for n in range(1, len(pending) + 1):
            for some in itertools.combinations(pending, n):
                if kind == "AllReduce":
                    out.append(apply_step(AllReduce(some), array))
                    continue
                for d in array.dims:
                    for scattered in itertools.permutations(some):
                        out.append(apply_step(ReduceScatter(scattered, d.name), array))
    elif kind == "CollectivePermute":
        out.extend(_permutes(array, sizes))
    return tuple(out)


def _permutes(array: Array, sizes: tuple[tuple[str, int], ...]) -> list[CollectiveExpr]:
    """Every collective-permute from ``array`` (:func:`single_permute`): each dim's new axes chosen
    among those whose blocks lie inside its present ones, no axis on two dims."""
    mapping = dict(sizes)
    shardable = [a for a, _ in sizes if a not in array.unreduced]
    every = [c for n in range(len(shardable) + 1) for c in itertools.permutations(shardable, n)]
    options = [[t for t in every if t == d.axes or _divides(d.axes, t, mapping)] for d in array.dims]
    out: list[CollectiveExpr] = []
    chosen: list[tuple[str, ...]] = []

    def place(i: int, taken: frozenset[str]) -> None:
        if i == len(options):
            dims = tuple(unchecked_dim(d.name, c) for d, c in zip(array.dims, chosen, strict=True))
            permute = single_permute(array, unchecked_array(array.name, dims, array.unreduced), mapping)
            if permute is not None:
                out.append(permute)
            return
        for t in options[i]:
            if taken.isdisjoint(t):
                chosen.append(t)
                place(i + 1, taken.union(t))
                chosen.pop()

    place(0, frozenset())
    return out


on_clear(steps_of_kind.cache_clear)

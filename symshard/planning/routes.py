"""Resharding one array: the collectives (and free slices) that take it from one sharding to another.

The planner reshards each operand to the sharding the local product needs, and the product to
the requested output. :func:`reshard_steps` gives the plain route (slices first, then partial
sums reduced, axes moved by AllToAll, what must go gathered); :func:`reshard_routes` adds the
other routes the planner costs: gather-then-slice, a run of axes moved by one AllToAll, several
moves in one AllToAll (:class:`FusedAllToAll`), routes through one collective-permute
(:class:`Repermute`) and, on request, the orders XLA's SPMD partitioner takes. :func:`every_route` is the whole algebra instead: any route of exact steps
(:func:`one_step`), searched for one known set of collectives. Nothing here costs anything:
:mod:`symshard.planning.planner` does.

Examples:
    >>> [str(s.op) for s in reshard_steps(Array.parse("A[I_X, J]"), Array.parse("A[I, J_X]"))]
    ['AllToAll_{X,J}']
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
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
from ..errors import PlanError, TimeLimitError
from ..memo import on_clear
from ..messages import say
from ..notation.arrays import Array, Dim, format_axes, unchecked_array, unchecked_dim

__all__ = [
    "Repermute",
    "RouteSearch",
    "check_deadline",
    "every_route",
    "one_step",
    "reshard_routes",
    "reshard_steps",
    "single_permute",
]

Value = Any
"""An axis size: an ``int`` when numbers are known, a SymPy expression otherwise."""

_EXPRS: dict[tuple[Collective, Array], CollectiveExpr] = {}
on_clear(_EXPRS.clear)


def _apply(op: Collective, array: Array) -> CollectiveExpr:
    """``op(array)``, each distinct one built once: the routes of many legs pass through the same steps."""
    key = (op, array)
    expr = _EXPRS.get(key)
    if expr is None:
        if len(_EXPRS) >= 65536:  # bounded like the routes' caches: start afresh
            _EXPRS.clear()
        expr = _EXPRS[key] = CollectiveExpr(op, array)
    return expr


# -- resharding one array ---------------------------------------------------------------------


def _lcp(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


@lru_cache(maxsize=65536)
def reshard_steps(src: Array, dst: Array) -> tuple[CollectiveExpr, ...]:
    """The collectives (and free slices) that turn ``src`` into ``dst``, cheapest order first.

    Slices come first (they are free and shrink what later steps move), then
    ReduceScatter and AllReduce of partial sums (cheapest while the array is
    still split), AllToAll to move an axis between dims, and AllGather of what
    must go; axes are only ever removed from, and added at, the minor end of a
    dim, so every step is exact.

    Raises:
        PlanError: ``dst`` has partial sums that ``src`` lacks, or different dims.

    Examples:
        >>> [str(s.op) for s in reshard_steps(Array.parse("A[I_X, J]"), Array.parse("A[I, J_X]"))]
        ['AllToAll_{X,J}']
        >>> [str(s.op) for s in reshard_steps(Array.parse("C[I, K]{U_X}"), Array.parse("C[I_Y, K_X]"))]
        ['DynamicSlice_{Y,I}', 'ReduceScatter_{X,K}']
    """
    if src.dim_names != dst.dim_names:
        raise PlanError(
            say("cannot reshard {source} into {target}: the dims differ", source=str(src), target=str(dst)),
            hint=say("reshard keeps the dims"),
        )
    if not dst.unreduced <= src.unreduced:
        extra = format_axes(sorted(dst.unreduced - src.unreduced))
        raise PlanError(
            say(
                "cannot reshard {source} into {target}: no collective creates partial sums over {axes}",
                source=str(src),
                target=str(dst),
                axes=extra,
            ),
            hint=say("an array becomes unreduced only through a local product over a sharded contracted dim"),
        )
    steps: list[CollectiveExpr] = []
    cur = src
    target = {d.name: d.axes for d in dst.dims}
    names = src.dim_names  # every step keeps the dims, in order
    for _ in range(4 * (len(src.axes) + len(dst.axes) + len(src.unreduced)) + 4):
        if cur == dst:
            return tuple(steps)
        axes_now = {d.name: d.axes for d in cur.dims}
        keep = {d: _lcp(axes_now[d], target[d]) for d in axes_now}
        leaving = {d: axes_now[d][keep[d] :] for d in axes_now}
        arriving = {d: target[d][keep[d] :] for d in axes_now}
        used = set(cur.axes) | cur.unreduced
        # 1. free slices onto dims with nothing to remove first
        pending = cur.unreduced - dst.unreduced
        step = None
        for d in names:
            if not leaving[d] and arriving[d] and arriving[d][0] not in used:
                run = []
                for a in arriving[d]:
                    if a in used:
                        break
                    run.append(a)
                step = _apply(DynamicSlice(tuple(run), d), cur)
                break
        # 2. reduce-scatter partial sums onto dims that receive them next
        if step is None:
            for d in names:
                if not leaving[d] and arriving[d] and arriving[d][0] in pending:
                    run = []
                    for a in arriving[d]:
                        if a not in cur.unreduced or a in dst.unreduced:
                            break
                        run.append(a)
                    step = _apply(ReduceScatter(tuple(run), d), cur)
                    break
        # 3. all-reduce partial sums no dim receives
        if step is None:
            arriving_anywhere = {a for d in arriving for a in arriving[d]}
            done = sorted(a for a in pending if a not in arriving_anywhere)
            if done:
                step = _apply(AllReduce(tuple(done)), cur)
        # 4. move an axis from the minor end of one dim to the dim that receives it next
        if step is None:
            for d in names:
                if not leaving[d] and arriving[d]:
                    a = arriving[d][0]
                    source = cur.sharded_dim(a)
                    if source is not None and source != d and axes_now[source] and axes_now[source][-1] == a:
                        if a in leaving[source]:
                            step = _apply(AllToAll((a,), d), cur)
                            break
        # 5. gather everything that has to leave its dim
        if step is None:
            gone = tuple(a for d in names for a in leaving[d])
            if gone:
                step = _apply(AllGather(gone), cur)
        # 6. what is left: partial sums that wait behind other arrivals
        if step is None:
            for d in names:
                if arriving[d] and arriving[d][0] in cur.unreduced:
                    step = _apply(ReduceScatter((arriving[d][0],), d), cur)
                    break
        if step is None:  # pragma: no cover - every state above makes progress
            break
        steps.append(step)
        cur = step.output
    raise PlanError(
        say("cannot reshard {source} into {target}", source=str(src), target=str(dst)),
        hint=say("this is a bug in symshard; please report it"),
    )


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
    permute over the slowest of their links, the hops the sum of theirs.

    Examples:
        >>> str(Repermute(("X", "Y"), (Dim("J"), Dim("K", ("X",)))).apply(Array.parse("B[J, K_Y]")))
        'B[J, K_X]'
    """

    dims: tuple[Dim, ...] = ()

    @property
    def subscript(self) -> str:
        """The axes, then where the moved dims go: ``{XY,K_X}``."""
        moved = ",".join(str(d) for d in self.dims if set(d.axes) & set(self.axes))
        return "{" + format_axes(self.axes).strip("{}") + "," + moved + "}"

    def latex(self) -> str:
        moved = ",".join(d.latex() for d in self.dims if set(d.axes) & set(self.axes))
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
    return Repermute(tuple(sorted(changed)), dst.dims)(src)


def _only_gathers(steps: Sequence[CollectiveExpr]) -> bool:
    return all(isinstance(s.op, (AllGather, DynamicSlice)) for s in steps)


def _plain_routes(cur: Array, dst: Array, xla: bool = False, wide: bool = False) -> list[tuple[CollectiveExpr, ...]]:
    """The permute-free routes from ``cur`` to ``dst`` (partial sums already as ``dst`` keeps them):
    :func:`reshard_steps`, gather-then-slice, a run of several axes moved by one AllToAll, and (with
    ``xla``) a gather of the axes ``dst`` does not use before an AllToAll."""
    out = [reshard_steps(cur, dst)]
    # gather everything that leaves first, then slice (XLA's order; moves more, same product)
    common = unchecked_array(  # each dim's axes cut to what it shares with dst: still valid
        cur.name,
        tuple(unchecked_dim(s.name, s.axes[: _lcp(s.axes, t.axes)]) for s, t in zip(cur.dims, dst.dims, strict=True)),
        cur.unreduced,
    )
    # with ``wide`` (XLA's orders on three axes), also everything gathered first (XLA gathers even a major
    # axis it then slices again)
    bare = unchecked_array(cur.name, tuple(unchecked_dim(d.name, ()) for d in cur.dims), cur.unreduced)
    for whole in [common, bare] if wide and bare != common else [common]:
        if whole != cur and whole != dst:
            gather = reshard_steps(cur, whole)
            slices = reshard_steps(whole, dst)
            if _only_gathers(gather) and all(isinstance(s.op, DynamicSlice) for s in slices):
                out.append((*gather, *slices))
    # gather first the axes dst does not use at all, then move the rest (XLA clears the way for an AllToAll)
    unused = set(cur.axes) - set(dst.axes) if xla else set()
    kept = [next((i for i, a in enumerate(d.axes) if a in unused), len(d.axes)) for d in cur.dims]
    cleared = unchecked_array(  # prefixes of valid dims: valid
        cur.name, tuple(unchecked_dim(d.name, d.axes[:k]) for d, k in zip(cur.dims, kept, strict=True)), cur.unreduced
    )
    if xla and cleared != cur and cleared != dst:
        gather = reshard_steps(cur, cleared)
        if _only_gathers(gather):
            for after in _plain_routes(cleared, dst):  # the rest one axis at a time, or a run in one AllToAll
                if any(isinstance(s.op, AllToAll) for s in after):
                    out.append((*gather, *after))
    # move a run of several axes to another dim in one AllToAll over all of them; with ``wide``, also
    # after the free slices that come first (XLA slices an axis the array is replicated over, so that
    # the AllToAll moves smaller blocks)
    out.extend(_run_moves(cur, dst))
    if wide:
        plain = out[0]
        n = 0
        while n < len(plain) and isinstance(plain[n].op, DynamicSlice):
            n += 1
        if 0 < n < len(plain):
            out.extend((*plain[:n], *r) for r in _run_moves(plain[n - 1].output, dst))
    return list(dict.fromkeys(out))


def _run_moves(cur: Array, dst: Array) -> list[tuple[CollectiveExpr, ...]]:
    """Routes from ``cur`` to ``dst`` that start by moving a run of several axes from the minor end of one
    dim to the dim that receives them next, in one AllToAll over all of them."""
    out = []
    for s_dim, t_dim in itertools.permutations(zip(cur.dims, dst.dims, strict=True), 2):
        go = s_dim[0].axes[_lcp(s_dim[0].axes, s_dim[1].axes) :]
        come = t_dim[1].axes[_lcp(t_dim[0].axes, t_dim[1].axes) :]
        if len(go) > 1 and come[: len(go)] == go and t_dim[0].axes == t_dim[1].axes[: len(t_dim[0].axes)]:
            move = _apply(AllToAll(go, t_dim[0].name), cur)
            after = reshard_steps(move.output, dst)
            if not any(isinstance(x.op, (ReduceScatter, AllReduce)) for x in after):
                out.append((move, *after))
    return out


@lru_cache(maxsize=65536)
def reshard_routes(
    src: Array, dst: Array, sizes: tuple[tuple[str, Value], ...] | None = None, xla: bool = False, wide: bool = False
) -> tuple[tuple[CollectiveExpr, ...], ...]:
    """Every route from ``src`` to ``dst`` the planner costs: :func:`reshard_steps` first, then (once
    the partial sums are what ``dst`` keeps) gather-then-slice, a run of axes moved by one AllToAll,
    and the routes through one collective-permute: straight to ``dst``, or to ``dst`` with the axes
    that must go moved to the minor end, then one gather; and each with its multi-dim gathers done
    one dim at a time, and with its all-to-alls in a row that can go at once made one
    (:class:`FusedAllToAll`: ``AllToAll_{X→H,Y→B}``, XLA's way to move two dims at once).

    With ``xla``, also the orders XLA's SPMD partitioner takes that the routes above leave out:
    partial sums reduced on the whole array before anything else (:func:`_reduce_first`), a dim's
    axes in another order, or one of ``dst``'s axes held by another of ``src``'s (or, on meshes of
    two axes, two of them exchanged), fixed by a final permute, a gather of the axes ``dst`` does
    not use before an AllToAll (then one axis at a time, or a run in one AllToAll), shards permuted
    onto an axis ``dst`` uses, or onto an idle one only to be gathered over it (or, on meshes of two
    axes, two axes exchanged), before the rest of the reshard,
    and a permute to ``dst`` with only some of the departing axes kept, on any dim, then gathered
    (:func:`_departing_kept`). With ``wide`` (XLA's orders on a mesh of three axes), also: those departing
    axes in any order, and idle
    axes among them; free slices before a multi-axis AllToAll; everything gathered before slicing; and a
    route to any array of ``dst``'s block shape made of the axes either uses, then one permute
    (:func:`_same_blocks`). Most
    are slower than a route above; a few are faster in particular cases (slicing an idle axis before
    an AllToAll moves less, even with the permute after it). They multiply the routes of arrays
    sharded over three axes, so they come on request.

    ``sizes`` (axis name to size, when numbers) lets a permute change an axis for another of a
    size it divides (``K_Y`` to ``K_X`` on a mesh with ``|Y|`` dividing ``|X|``).

    Examples:
        >>> routes = reshard_routes(Array.parse("C[I, K_XY]"), Array.parse("C[I, K_Y]"))
        >>> [[str(s.op) for s in r] for r in routes]
        [['AllGather_XY', 'DynamicSlice_{Y,K}'], ['CollectivePermute_{XY,K_YX}', 'AllGather_X']]
    """
    base = reshard_steps(src, dst)
    routes = [base]
    if not base or all(isinstance(s.op, DynamicSlice) for s in base):
        return tuple(routes)
    axis_sizes = dict(sizes) if sizes is not None else None
    for r in _reduce_first(src, dst, base, sizes, wide) if xla else ():
        if r not in routes:
            routes.append(r)
    # the permute comes once the partial sums are what dst keeps
    k = 0
    cur = src
    while cur.unreduced != dst.unreduced and k < len(base):
        cur = base[k].output
        k += 1
    if cur.unreduced != dst.unreduced:
        return tuple(routes)
    head = base[:k]
    rest = base[k:]
    if (
        not rest
        or all(isinstance(s.op, DynamicSlice) for s in rest)
        or any(isinstance(s.op, (ReduceScatter, AllReduce)) for s in rest)
    ):
        return tuple(routes)
    wide = wide and xla and axis_sizes is not None
    candidates: list[tuple[CollectiveExpr, ...]] = [(*head, *r) for r in _plain_routes(cur, dst, xla, wide)[1:]]
    direct = single_permute(cur, dst, axis_sizes)
    if direct is not None:
        candidates.append((*head, direct))
    # reshard to dst with a dim's axes in another order, or with one of its axes swapped for one cur
    # uses and dst does not (an AllToAll leaves A[I_X, J] where A[I_Y, J] is wanted), or two of its
    # axes exchanged, then one permute puts dst's axes in place. Exchanges only on meshes of two axes:
    # on three they take some plans past a million strategies
    exchange = xla and axis_sizes is not None and len(axis_sizes) <= 2
    alts = [*_reorders(dst), *_swaps(dst, cur), *(_exchanges(dst) if exchange else ())] if xla else []
    if wide and axis_sizes is not None:
        # on three axes XLA also reaches an array of dst's block shape over other axes (an AllToAll leaves
        # A[I_ZX, J] where A[I_XY, J] is wanted), then permutes: any such array made of the axes either uses
        alts += _same_blocks(dst, cur, axis_sizes)
    for alt in dict.fromkeys(alts):
        last = single_permute(alt, dst, axis_sizes)
        if last is None:
            continue
        if alt == cur:
            candidates.append((*head, last))
            continue
        for there in _plain_routes(cur, alt, xla, wide):
            if not any(isinstance(x.op, (ReduceScatter, AllReduce)) for x in there):
                candidates.append((*head, *there, last))
    # permute to dst with the departing axes kept at the minor end of their dim, then gather them
    target_axes = set(dst.axes)
    dims = []
    for s, t in zip(cur.dims, dst.dims, strict=True):
        going = tuple(a for a in s.axes if a not in target_axes)
        dims.append(unchecked_dim(s.name, t.axes + going))
    # dst's axes, then cur's that dst does not use: each axis once, none unreduced (cur and dst agree there)
    mid = unchecked_array(cur.name, tuple(dims), cur.unreduced)
    # on three axes, also mesh axes neither array uses, onto which XLA may permute shards only to gather them
    spare = tuple(a for a in axis_sizes or () if a not in dst.axes and a not in cur.axes and a not in cur.unreduced)
    narrow = [mid, *(_departing_kept(cur, dst) if xla else ())]
    mids = list(dict.fromkeys([*narrow, *(_departing_kept(cur, dst, spare, True) if wide else ())]))
    for mid in mids:
        if mid == dst or mid == cur:
            continue
        first = single_permute(cur, mid, axis_sizes)
        if first is not None and wide and mid not in narrow and _slices_unnamed(cur, first):
            continue  # a further order whose permute also cuts a dim it does not cross: its name would hide the cut
        if first is not None:
            after = reshard_steps(mid, dst)
            if _only_gathers(after):
                candidates.append((*head, first, *after))
    # permute one axis's shards onto an axis the array does not use (K_Y to K_X), then reshard from there;
    # also onto a mesh axis dst does not use either, a roundabout XLA takes (I_Y to I_X, then gather X)
    idle = tuple(a for a in axis_sizes or () if a not in dst.axes)
    for swapped in [*_swaps(cur, dst, idle), *(_exchanges(cur) if exchange else ())] if xla else ():
        first = single_permute(cur, swapped, axis_sizes)
        if first is not None and swapped != dst:
            after = reshard_steps(swapped, dst)
            if after and not any(isinstance(x.op, (ReduceScatter, AllReduce)) for x in after):
                candidates.append((*head, first, *after))
    for c in [base, *candidates]:
        for split in _split_gathers(c):
            if split not in candidates:
                candidates.append(split)
    for c in [base, *candidates]:  # all-to-alls in a row that can go at once, as one (XLA's too)
        for fused in _fuse_moves(c):
            if fused not in candidates:
                candidates.append(fused)
    for c in candidates:
        if c not in routes:
            routes.append(c)
    return tuple(routes)


def _reduce_first(
    src: Array,
    dst: Array,
    base: tuple[CollectiveExpr, ...],
    sizes: tuple[tuple[str, Value], ...] | None,
    wide: bool = False,
) -> list[tuple[CollectiveExpr, ...]]:
    """XLA's order for partial sums: reduce them on the whole array before anything else. All-reduce
    every axis ``dst`` does not keep, then take any route to ``dst``; or, over several axes, all-reduce
    all but one and reduce-scatter that one onto the dim it arrives on. Only where :func:`reshard_steps`
    does something else first, or reduces over several axes (otherwise its own route is this one)."""
    gone = tuple(a for a in sorted(src.unreduced) if a not in dst.unreduced)
    if not gone:
        return []
    whole = AllReduce(gone)(src)
    reductions = [i for i, s in enumerate(base) if isinstance(s.op, (ReduceScatter, AllReduce))]
    slices_first = any(isinstance(s.op, DynamicSlice) for s in base[: reductions[-1]]) if reductions else False
    out: list[tuple[CollectiveExpr, ...]] = []
    if len(gone) > 1 or slices_first:
        out.append((whole, *reshard_steps(whole.output, dst)))
    # or reduce, then move the reduced blocks with one permute, or take another route from there
    moved = single_permute(whole.output, dst, dict(sizes) if sizes is not None else None)
    if moved is not None:
        out.append((whole, moved))
    for r in reshard_routes(whole.output, dst, sizes, True, wide)[1:]:
        if (whole, *r) not in out:
            out.append((whole, *r))
    if len(gone) > 1:
        for a in gone:
            d = dst.sharded_dim(a)
            if d is None:
                continue
            first = AllReduce(tuple(x for x in gone if x != a))(src)
            have, want = first.output.dim(d).axes, dst.dim(d).axes
            if want[: len(have)] != have or len(want) == len(have) or want[len(have)] != a:
                continue
            scatter = ReduceScatter((a,), d)(first.output)
            out.append((first, scatter, *reshard_steps(scatter.output, dst)))
    return out


def _departing_kept(cur: Array, dst: Array, idle: tuple[str, ...] = (), orders: bool = False) -> list[Array]:
    """``dst`` with some of the axes ``cur`` uses and ``dst`` does not added at the minor end of a dim,
    each to any dim (``B[J, K_YP]`` between ``B[J, K_PQ]`` and ``B[J, K_Y]``; ``B[J_P, K_YQ]``
    between ``B[J_Y, K_PQ]`` and ``B[J, K_Y]``): XLA permutes to such an array (where each new block
    lies inside one of ``cur``'s, :func:`single_permute` checks), then gathers the axes it added, where
    keeping every departing axis in its own dim cuts the blocks finer or moves more. Departing axes
    keep ``cur``'s order within a dim or, with ``orders``, come in every order: they are gathered next,
    so any order gives the same array, and XLA's choice decides which devices the permute pairs. Axes of
    ``idle`` (mesh axes neither array uses) may join too: XLA's roundabout, shards permuted onto an idle
    axis only to be gathered over it."""
    target_axes = set(dst.axes)
    going = [a for d in cur.dims for a in d.axes if a not in target_axes] + [a for a in idle if a not in target_axes]
    out = []
    for places in itertools.product(range(len(cur.dims) + 1), repeat=len(going)):  # the last: dropped
        added = [tuple(a for a, at in zip(going, places, strict=True) if at == i) for i in range(len(dst.dims))]
        options = [list(itertools.permutations(axes)) if orders else [axes] for axes in added]
        for combo in itertools.product(*options):
            dims = tuple(unchecked_dim(t.name, t.axes + extra) for t, extra in zip(dst.dims, combo, strict=True))
            out.append(unchecked_array(cur.name, dims, cur.unreduced))
    return out


def _slices_unnamed(cur: Array, permute: CollectiveExpr) -> bool:
    """Whether ``permute`` also cuts a dim of ``cur`` by axes it does not cross (a free slice), a dim its
    name, which shows only the dims its axes shard, leaves out."""
    crossed = set(permute.op.axes)
    return any(
        d.axes != e.axes and not set(e.axes) & crossed for d, e in zip(cur.dims, permute.output.dims, strict=True)
    )


def _swaps(array: Array, dst: Array, idle: tuple[str, ...] = ()) -> list[Array]:
    """``array`` with one of its sharding axes replaced, in place, by an axis it does not use and ``dst``
    does (or one of ``idle``)."""
    free = [a for a in (*dst.axes, *idle) if a not in array.axes and a not in array.unreduced]
    out = []
    for i, d in enumerate(array.dims):
        for j in range(len(d.axes)):
            for b in free:
                axes = (*d.axes[:j], b, *d.axes[j + 1 :])
                out.append(array.with_dims((*array.dims[:i], Dim(d.name, axes), *array.dims[i + 1 :])))
    return out


def _exchanges(array: Array) -> list[Array]:
    """``array`` with two of the axes it is sharded by exchanged (``A[I_Y, J_X]`` for ``A[I_X, J_Y]``):
    a permute between them, where the axes have sizes that allow one, is XLA's way to an array an
    AllToAll or a gather then finishes."""
    axes = array.axes
    out = []
    for i, a in enumerate(axes):
        for b in axes[i + 1 :]:
            other = {a: b, b: a}
            dims = tuple(Dim(d.name, tuple(other.get(x, x) for x in d.axes)) for d in array.dims)
            out.append(array.with_dims(dims))
    return out


def _same_blocks(array: Array, src: Array, sizes: Mapping[str, Value]) -> list[Array]:
    """``array`` with each dim that ``src`` splits otherwise split by other axes of the two into as many
    shards (each axis once), so that every device holds a block of the same shape."""
    pool = list(dict.fromkeys(a for a in (*src.axes, *array.axes) if a not in array.unreduced))
    per_dim: list[list[tuple[str, ...]]] = []
    for d, s in zip(array.dims, src.dims, strict=True):
        if d.axes == s.axes:
            per_dim.append([d.axes])
            continue
        want = math.prod(sizes[a] for a in d.axes)
        options = [
            axes
            for n in range(len(pool) + 1)
            for axes in itertools.permutations(pool, n)
            if math.prod(sizes[a] for a in axes) == want
        ]
        per_dim.append(options)
    return _variants(array, per_dim)


def _reorders(array: Array) -> list[Array]:
    """``array`` with the axes of its multi-axis dims in every other order (``K_YX`` for ``K_XY``)."""
    return _variants(array, [list(itertools.permutations(d.axes)) for d in array.dims])


def _variants(array: Array, per_dim: Sequence[Sequence[tuple[str, ...]]]) -> list[Array]:
    """``array`` with each dim split by one of its options in ``per_dim`` instead (each axis on one dim at
    most), ``array`` itself left out."""
    out = []
    for combo in itertools.product(*per_dim):
        flat = [a for axes in combo for a in axes]
        if len(flat) != len(set(flat)):
            continue
        dims = tuple(unchecked_dim(d.name, axes) for d, axes in zip(array.dims, combo, strict=True))
        alt = unchecked_array(array.name, dims, array.unreduced)  # axes once each, none unreduced: valid
        if alt != array:
            out.append(alt)
    return out


def _fuse_moves(route: tuple[CollectiveExpr, ...]) -> list[tuple[CollectiveExpr, ...]]:
    """``route`` with each run of AllToAlls in a row that can go at once (:class:`FusedAllToAll`: each
    from one dim, onto a dim none of them takes from) made one all-to-all over all their axes."""
    out: list[CollectiveExpr] = []
    fused = False
    i = 0
    while i < len(route):
        group = [route[i]]
        while i + len(group) < len(route):
            moves = [*group, route[i + len(group)]]
            if not all(_one_source(e) for e in moves):
                break
            sources = {e.operand.sharded_dim(e.op.axes[0]) for e in moves}
            targets = [_moved_to(e) for e in moves]
            if len(sources) < len(moves) or len(set(targets)) < len(targets) or sources & set(targets):
                break
            group = moves
        if len(group) > 1:
            fused = True
            out.append(_apply(FusedAllToAll.of([e.op for e in group]), group[0].operand))  # type: ignore[misc]
        else:
            out.append(group[0])
        i += len(group)
    return [tuple(out)] if fused else []


def _moved_to(e: CollectiveExpr) -> str | None:
    """The dim an AllToAll step moves its axes onto."""
    return e.op.dim if isinstance(e.op, AllToAll) else None


def _one_source(e: CollectiveExpr) -> bool:
    """``e`` is a plain AllToAll whose axes all leave one dim."""
    op = e.op
    if type(op) is not AllToAll or op.dim is None:
        return False
    return len({e.operand.sharded_dim(a) for a in op.axes}) == 1


def _split_gathers(route: tuple[CollectiveExpr, ...]) -> list[tuple[CollectiveExpr, ...]]:
    """``route`` with each AllGather that spans several dims done one dim at a time, the last dim
    first (an XLA all-gather runs along one dim: this is the order its partitioner uses)."""
    out: list[CollectiveExpr] = []
    split = False
    for step in route:
        arr = step.operand
        dims = [d for d in arr.dims if any(a in step.op.axes for a in d.axes)]
        if not isinstance(step.op, AllGather) or len(dims) < 2:
            out.append(step)
            continue
        split = True
        for d in reversed(dims):
            expr = AllGather(tuple(a for a in d.axes if a in step.op.axes))(arr)
            out.append(expr)
            arr = expr.output
    return [tuple(out)] if split else []


# -- every route of the algebra, searched for a known set of steps --------------------------------


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
    return tuple(e for kind in kinds for e in _steps(array, sizes, kind))


@lru_cache(maxsize=16384)
def _steps(array: Array, sizes: tuple[tuple[str, int], ...], kind: str) -> tuple[CollectiveExpr, ...]:
    """:func:`one_step`'s steps of one kind."""
    out: list[CollectiveExpr] = []
    tails = [[d.axes[k:] for k in range(len(d.axes), -1, -1)] for d in array.dims]  # the empty run first
    pending = sorted(array.unreduced)
    if kind == "DynamicSlice":
        idle = [a for a, _ in sizes if array.sharded_dim(a) is None and a not in array.unreduced]
        for d in array.dims:
            for n in range(1, len(idle) + 1):
                for run in itertools.permutations(idle, n):
                    out.append(_apply(DynamicSlice(run, d.name), array))
    elif kind == "AllGather":
        for combo in itertools.product(*tails):
            gone = tuple(a for run in combo for a in run)
            if gone:
                out.append(_apply(AllGather(gone), array))
    elif kind == "AllToAll":
        for t, target in enumerate(array.dims):
            runs = [[run for run in tails[i] if run] if i != t else [] for i in range(len(array.dims))]
            for combo in itertools.product(*[[(), *r] for r in runs]):
                moved = [run for run in combo if run]
                for order in itertools.permutations(moved) if moved else ():
                    out.append(_apply(AllToAll(tuple(a for run in order for a in run), target.name), array))
        # several of those at once, each from its own dim onto its own dim, which none takes from
        singles = [e for e in out if _one_source(e)]
        for n in range(2, len(array.dims) // 2 + 1):
            for moves in itertools.combinations(singles, n):
                sources = {e.operand.sharded_dim(e.op.axes[0]) for e in moves}
                targets = {_moved_to(e) for e in moves}
                if len(sources) < n or len(targets) < n or sources & targets:
                    continue
                out.append(_apply(FusedAllToAll.of([e.op for e in moves]), array))  # type: ignore[misc]
    elif kind in ("AllReduce", "ReduceScatter"):
        for n in range(1, len(pending) + 1):
            for some in itertools.combinations(pending, n):
                if kind == "AllReduce":
                    out.append(_apply(AllReduce(some), array))
                    continue
                for d in array.dims:
                    for scattered in itertools.permutations(some):
                        out.append(_apply(ReduceScatter(scattered, d.name), array))
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
    """Routes from ``src`` made of exact steps (:func:`one_step`) whose items, read by ``item`` (None for
    a step that is free, such as a slice), are drawn from ``budget`` (item to how many times it may
    occur), and (with ``kinds``) with at most so many steps of each kind besides free ones: each route
    with its items. For each array reached with each multiset of items, the first ``keep`` routes found
    (routes alike in both are alike to a search for those items). A route may come back to an array (XLA
    gathers an axis and slices it again); free slices in a row go onto dims in their order, so the budget
    bounds every route.

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
            for expr in _steps(cur, self.sizes, kind):
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


on_clear(reshard_steps.cache_clear)
on_clear(reshard_routes.cache_clear)
on_clear(_steps.cache_clear)

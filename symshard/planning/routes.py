"""Resharding one array: the routes of collectives (and free slices) that take it from one sharding to another.

The planner reshards each operand to the sharding the local product needs, and the product to
the requested output. :func:`reshard_steps` gives the plain route (slices first, then partial
sums reduced, axes moved by AllToAll, what must go gathered); :func:`reshard_routes` adds the
other routes the planner costs: gather-then-slice, a run of axes moved by one AllToAll, several
moves in one AllToAll (:class:`FusedAllToAll`), routes through one collective-permute
(:class:`~symshard.planning.route_steps.Repermute`) and, on request, the orders XLA's SPMD partitioner takes.

In :mod:`symshard.planning`, this module strings together the steps of :mod:`.route_steps` (each
built once); beside it, :mod:`.route_search` is the whole algebra instead: any route of exact steps,
searched for one known set of collectives. Nothing here costs anything: :mod:`symshard.planning.planner` does.

Examples:
    >>> [str(s.op) for s in reshard_steps(Array.parse("A[I_X, J]"), Array.parse("A[I, J_X]"))]
    ['AllToAll_{X,J}']
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

from ..costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    CollectiveExpr,
    DynamicSlice,
    FusedAllToAll,
    ReduceScatter,
)
from ..errors import PlanError
from ..memo import on_clear
from ..messages import say
from ..notation.arrays import Array, Dim, format_axes, unchecked_array, unchecked_dim
from .route_steps import Value, apply_step, moved_to, one_source, single_permute

__all__ = ["reshard_routes", "reshard_steps"]


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
                step = apply_step(DynamicSlice(tuple(run), d), cur)
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
                    step = apply_step(ReduceScatter(tuple(run), d), cur)
                    break
        # 3. all-reduce partial sums no dim receives
        if step is None:
            arriving_anywhere = {a for d in arriving for a in arriving[d]}
            done = sorted(a for a in pending if a not in arriving_anywhere)
            if done:
                step = apply_step(AllReduce(tuple(done)), cur)
        # 4. move an axis from the minor end of one dim to the dim that receives it next
        if step is None:
            for d in names:
                if not leaving[d] and arriving[d]:
                    a = arriving[d][0]
                    source = cur.sharded_dim(a)
                    if source is not None and source != d and axes_now[source] and axes_now[source][-1] == a:
                        if a in leaving[source]:
                            step = apply_step(AllToAll((a,), d), cur)
                            break
        # 5. gather everything that has to leave its dim
        if step is None:
            gone = tuple(a for d in names for a in leaving[d])
            if gone:
                step = apply_step(AllGather(gone), cur)
        # 6. what is left: partial sums that wait behind other arrivals
        if step is None:
            for d in names:
                if arriving[d] and arriving[d][0] in cur.unreduced:
                    step = apply_step(ReduceScatter((arriving[d][0],), d), cur)
                    break
        if step is None:  # pragma: no cover - every state above makes progress
            break
        steps.append(step)
        cur = step.output
    raise PlanError(
        say("cannot reshard {source} into {target}", source=str(src), target=str(dst)),
        hint=say("this is a bug in symshard; please report it"),
    )


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
            move = apply_step(AllToAll(go, t_dim[0].name), cur)
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
            if not all(one_source(e) for e in moves):
                break
            sources = {e.operand.sharded_dim(e.op.axes[0]) for e in moves}
            targets = [moved_to(e) for e in moves]
            if len(sources) < len(moves) or len(set(targets)) < len(targets) or sources & set(targets):
                break
            group = moves
        if len(group) > 1:
            fused = True
            out.append(apply_step(FusedAllToAll.of([e.op for e in group]), group[0].operand))  # type: ignore[misc]
        else:
            out.append(group[0])
        i += len(group)
    return [tuple(out)] if fused else []


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


on_clear(reshard_steps.cache_clear)
on_clear(reshard_routes.cache_clear)

"""Every way to compute a sharded matmul, each one costed: the planner.

A strategy is decided by its *compute sharding*: for every mesh axis, which dim
of the product it splits while the devices multiply (or none). From that choice
the rest follows:

1. each operand is resharded to its compute sharding: free slices along axes it
   is replicated over (``DynamicSlice``), ReduceScatter or AllReduce of partial
   sums, AllToAll to move an axis between dims, AllGather of what must go;
2. every device multiplies its blocks (:class:`~symshard.matmul.LocalMatmul`),
   leaving partial sums over the axes that split a contracted dim;
3. the result is resharded to the requested output the same way.

Walking over every compute sharding lists every plan the chapter discusses (and
the ones it only hints at): gather either operand, reduce after a local product
(AllReduce, or ReduceScatter onto any dim), gather or AllToAll the result, use
an idle axis to split the work. Each :class:`Strategy` carries its steps in the
notation, per-device FLOPs, compute and communication time, total time with
overlap (``max``, the chapter's default) and without (sum), the bound, and the
peak bytes per device.

Costs are exact: SymPy expressions when something is symbolic, and Python
fractions on the fast path when every size and constant is a number.

Examples:
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]")
    >>> [s.name for s in p.strategies][:2]
    ['DynamicSlice_{X,D}(X) → matmul → AllReduce_X(Z)', 'AllGather_X(Y) → matmul']
    >>> p.strategies[1].comm_time
    Max(T_hop*|X|/2, 2*D*F/W_ici)
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy

from .arrays import Array, Dim, format_axes
from .collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    Collective,
    CollectiveExpr,
    CollectivePermute,
    DynamicSlice,
    ReduceScatter,
    _array,
    _dim,
)
from .costmodels import (
    COMM_OVERLAPS,
    LATENCY_MODELS,
    MODELS,
    Costing,
    Timing,
    chain,
    check_comm_overlap,
    check_model,
    combine,
    join_loads,
    tally,
    volume,
)
from .dtypes import canonical_dtype, dtype_bytes
from .errors import PlanError
from .hardware import Hardware, exact_number
from .hardware import hardware as lookup_hardware
from .mathtext import as_expr
from .matmul import Classification, LocalMatmul, Matmul, local_product, matmul
from .memo import memoized, on_clear
from .mesh import Mesh, resolve_mesh
from .placement import ShapeLike, check_on_mesh, resolve_shape
from .symbols import C

__all__ = [
    "Builder",
    "CostEnv",
    "Plan",
    "PlanStep",
    "Repermute",
    "Strategy",
    "axis_order",
    "best_strategy",
    "compute_array",
    "natural_outputs",
    "plan",
    "reshard_routes",
    "reshard_steps",
    "sort_strategies",
]

Value = Any
"""A raw cost: an ``int`` or ``Fraction`` on the fast numeric path, a SymPy expression otherwise."""

KEEP = "unreduced"
"""A compute-sharding choice: keep an operand's partial sums over this axis through the product."""


def _exact(value: sympy.Expr) -> int | Fraction:
    """A SymPy rational as a Python int (when whole) or Fraction: the fast, exact numbers."""
    p, q = int(value.p), int(value.q)
    return p if q == 1 else Fraction(p, q)


def sym(value: Value) -> sympy.Expr:
    """A raw planner value (Fraction, int or SymPy) as a SymPy expression."""
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return as_expr(value)


def _fast(value: Value) -> bool:
    return isinstance(value, (int, Fraction))


def _ratio(num, den):
    """``num / den`` exactly: an int when it divides, a Fraction for ints, SymPy otherwise."""
    if isinstance(num, int) and isinstance(den, int):
        return num // den if num % den == 0 else Fraction(num, den)
    return num / den


def _is_num(value: Value) -> bool:
    return isinstance(value, (int, Fraction)) or (isinstance(value, sympy.Basic) and value.is_number)


def _max(values: Sequence):
    """The largest value: exact for numbers; for expressions an unevaluated ``Max`` (SymPy's
    own simplification of ``Max`` costs milliseconds per call and rarely decides anything here)."""
    if all(isinstance(v, (int, Fraction)) for v in values):
        return max(values)
    args = [sym(v) for v in values if not (isinstance(v, (int, Fraction)) and v == 0) and v != 0]
    args = list(dict.fromkeys(args))
    if not args:
        return values[0] * 0
    if len(args) == 1:
        return args[0]
    if all(a.is_number for a in args):
        return max(args)
    return sympy.Max(*args, evaluate=False)


def _peak(values: Sequence):
    """The largest of several byte counts; symbolic sums of positive terms are pruned by
    dominance first (a sum whose every term another sum also has, no smaller, is dropped),
    which keeps SymPy's pairwise comparisons out of the planner's hot path."""
    if all(isinstance(v, (int, Fraction)) for v in values):
        return max(values)
    terms = []
    for v in dict.fromkeys(sym(v) for v in values):
        terms.append((v, sympy.expand(v).as_coefficients_dict()))
    kept = []
    for i, (v, t) in enumerate(terms):
        dominated = any(
            j != i and all(u.get(k, 0) >= c for k, c in t.items()) and (u != t or j < i)
            for j, (_, u) in enumerate(terms)
        )
        if not dominated:
            kept.append(v)
    return kept[0] if len(kept) == 1 else sympy.Max(*kept, evaluate=False)


# -- costs --------------------------------------------------------------------------------


class CostEnv:
    """Sizes, wiring and constants, ready to cost many plans quickly.

    When every dim and axis size and every constant the plans need is a number,
    values are Python ``Fraction`` objects (exact and fast); otherwise SymPy.
    """

    def __init__(
        self,
        mesh: Mesh,
        sizes: Mapping[str, sympy.Expr],
        dtype: str,
        hardware: Hardware | None,
        constants: Mapping[sympy.Symbol, object] | None,
        model: str,
        comm_overlap: str = "axes",
    ) -> None:
        self.mesh = mesh
        self.model = check_model(model)
        self.comm_overlap = check_comm_overlap(comm_overlap)
        self.dtype = canonical_dtype(dtype)
        self.hardware = hardware
        values: dict[sympy.Symbol, object] = dict(hardware.constants(self.dtype)) if hardware else {}
        values.update({k: exact_number(v, str(k)) for k, v in (constants or {}).items()})
        self.values = values
        numbers = all(as_expr(v).is_number for v in sizes.values()) and mesh.is_numeric
        costing = Costing(mesh, {}, model, hardware)  # which constants the links need
        self.numeric = numbers and all(s in values for s in {C} | costing.constants)
        conv = (lambda v: _exact(as_expr(v))) if self.numeric else as_expr
        self.dim = {d: conv(v) for d, v in sizes.items()}
        self.axis = {a.name: conv(a.size) for a in mesh.axes}
        self.elem = conv(dtype_bytes(self.dtype))
        self.flops_rate = conv(values.get(C, C))
        self.costing = Costing(mesh, values, model, hardware, conv)
        self._cache: dict[tuple, Timing] = {}
        # per axis, the least latency a collective over it pays (a lower bound for the search)
        self._fewest: dict[str, Value] = {
            a.name: self.costing.latency_floor(a.name) if self.numeric else 0 for a in mesh.axes
        }
        self._bytes: dict[Array, Value] = {}
        self._groups: dict[tuple[str, ...], Value] = {}
        self._by_volume: dict[tuple, Timing] = {}

    def hop_floor(self, src: Array, dst: Array) -> Value:
        """A lower bound on the time of any route from ``src`` to ``dst``: each mesh axis whose partial
        sums must be reduced, or that must leave the dim it shards, takes part in some collective
        (slices only add axes), and a collective's latency adds up over its axes' steps, each at least
        the least a gather, an AllToAll or a permute over that axis alone pays
        (:meth:`~symshard.costmodels.Costing.latency_floor`); when collectives on different axes may
        overlap, only the largest of those floors is sure. Zero when the costs are symbolic."""
        floors: list[Value] = []
        fewest = self._fewest
        for a in src.unreduced:
            if a not in dst.unreduced:
                floors.append(fewest[a])
        for d in src.dims:
            for a in d.axes:
                if dst.sharded_dim(a) != d.name:
                    floors.append(fewest[a])
        return self.bound(floors)

    def bound(self, parts: Sequence[Value]) -> Value:
        """A lower bound on ``T_comms`` from lower bounds on its parts (legs, or collectives over
        different axes): their sum when collectives run one after another, else the largest."""
        if not parts:
            return 0
        if self.comm_overlap == "none":
            total: Value = 0
            for p in parts:
                total = total + p
            return total
        return max(parts)

    def join(self, legs: Sequence[_Leg]) -> Value:
        """``T_comms`` of a strategy made of these legs (:func:`~symshard.costmodels.combine` of their
        collectives, from each leg's per-link totals)."""
        if self.comm_overlap == "none":
            total: Value = 0
            for leg in legs:
                total = total + leg.comm
            return total
        loaded = [leg for leg in legs if leg.loads]
        if len(loaded) < 2:
            return loaded[0].comm if loaded else 0
        return join_loads(leg.loads for leg in loaded)

    def group(self, axes: Iterable[str]) -> Value:
        """The number of devices in a group over ``axes`` (their sizes multiplied)."""
        key = axes if isinstance(axes, tuple) else tuple(axes)
        out = self._groups.get(key)
        if out is None:
            out = 1
            for a in key:
                out = out * self.axis[a]
            self._groups[key] = out
        return out

    def bytes(self, array: Array):
        """Bytes per device of ``array``."""
        cached = self._bytes.get(array)
        if cached is None:
            num: Value = self.elem
            den: Value = 1
            for d in array.dims:
                num = num * self.dim[d.name]
                den = den * self.group(d.axes)
            cached = _ratio(num, den)
            self._bytes[array] = cached
        return cached

    def flops(self, lhs: Array, rhs: Array):
        """FLOPs per device of the local product: 2 × the product of every dim's local size."""
        seen: set[str] = set()
        num: Value = 2
        den: Value = 1
        for d in itertools.chain(lhs.dims, rhs.dims):
            if d.name not in seen:
                seen.add(d.name)
                num = num * self.dim[d.name]
                den = den * self.group(d.axes)
        return _ratio(num, den)

    def timing(self, expr: CollectiveExpr) -> Timing:
        """What one collective step costs under this environment's model."""
        key = (expr.op, expr.operand)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        op = expr.op
        v = volume(op.kind, self.bytes(expr.operand), self.bytes(expr.output), self.group(op.axes))
        # the time depends on the collective and the volume only: many operands share both
        same = self._by_volume.get((op, v))
        if same is not None:
            self._cache[key] = same
            return same
        out = self.costing.timing(op.kind, op.axes, v)
        self._cache[key] = out
        self._by_volume[(op, v)] = out
        return out


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
        raise PlanError(f"cannot reshard {src} into {dst}: the dims differ", hint="reshard keeps the dims")
    if not dst.unreduced <= src.unreduced:
        extra = format_axes(sorted(dst.unreduced - src.unreduced))
        raise PlanError(
            f"cannot reshard {src} into {dst}: no collective creates partial sums over {extra}",
            hint="an array becomes unreduced only through a local product over a sharded contracted dim",
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
    raise PlanError(f"cannot reshard {src} into {dst}", hint="this is a bug in symshard; please report it")


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
            raise self._fail(array, "the new sharding names other dims", "permute keeps the dims")
        out = Array(array.name, tuple(self.dims), array.unreduced)
        if out == array:
            raise self._fail(array, "the sharding does not change", "a permute here would move nothing")
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


def _permute(src: Array, dst: Array, sizes: Mapping[str, Value] | None) -> CollectiveExpr | None:
    """One collective-permute from ``src`` to ``dst``, when one can do it (see :class:`Repermute`)."""
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


def _plain_routes(cur: Array, dst: Array, xla: bool = False) -> list[tuple[CollectiveExpr, ...]]:
    """The permute-free routes from ``cur`` to ``dst`` (partial sums already as ``dst`` keeps them):
    :func:`reshard_steps`, gather-then-slice, a run of several axes moved by one AllToAll, and (with
    ``xla``) a gather of the axes ``dst`` does not use before an AllToAll."""
    out = [reshard_steps(cur, dst)]
    # gather everything that leaves first, then slice (XLA's order; moves more, same product)
    common = _array(  # each dim's axes cut to what it shares with dst: still valid
        cur.name,
        tuple(_dim(s.name, s.axes[: _lcp(s.axes, t.axes)]) for s, t in zip(cur.dims, dst.dims, strict=True)),
        cur.unreduced,
    )
    if common != cur and common != dst:
        gather = reshard_steps(cur, common)
        slices = reshard_steps(common, dst)
        if _only_gathers(gather) and all(isinstance(s.op, DynamicSlice) for s in slices):
            out.append((*gather, *slices))
    # gather first the axes dst does not use at all, then move the rest (XLA clears the way for an AllToAll)
    unused = set(cur.axes) - set(dst.axes) if xla else set()
    kept = [next((i for i, a in enumerate(d.axes) if a in unused), len(d.axes)) for d in cur.dims]
    cleared = _array(  # prefixes of valid dims: valid
        cur.name, tuple(_dim(d.name, d.axes[:k]) for d, k in zip(cur.dims, kept, strict=True)), cur.unreduced
    )
    if xla and cleared != cur and cleared != dst:
        gather = reshard_steps(cur, cleared)
        if _only_gathers(gather):
            for after in _plain_routes(cleared, dst):  # the rest one axis at a time, or a run in one AllToAll
                if any(isinstance(s.op, AllToAll) for s in after):
                    out.append((*gather, *after))
    # move a run of several axes to another dim in one AllToAll over all of them
    for s_dim, t_dim in itertools.permutations(zip(cur.dims, dst.dims, strict=True), 2):
        go = s_dim[0].axes[_lcp(s_dim[0].axes, s_dim[1].axes) :]
        come = t_dim[1].axes[_lcp(t_dim[0].axes, t_dim[1].axes) :]
        if len(go) > 1 and come[: len(go)] == go and t_dim[0].axes == t_dim[1].axes[: len(t_dim[0].axes)]:
            move = _apply(AllToAll(go, t_dim[0].name), cur)
            after = reshard_steps(move.output, dst)
            if not any(isinstance(x.op, (ReduceScatter, AllReduce)) for x in after):
                out.append((move, *after))
    return list(dict.fromkeys(out))


@lru_cache(maxsize=65536)
def reshard_routes(
    src: Array, dst: Array, sizes: tuple[tuple[str, Value], ...] | None = None, xla: bool = False
) -> tuple[tuple[CollectiveExpr, ...], ...]:
    """Every route from ``src`` to ``dst`` the planner costs: :func:`reshard_steps` first, then (once
    the partial sums are what ``dst`` keeps) gather-then-slice, a run of axes moved by one AllToAll,
    and the routes through one collective-permute: straight to ``dst``, or to ``dst`` with the axes
    that must go moved to the minor end, then one gather; and each with its multi-dim gathers done
    one dim at a time.

    With ``xla``, also the orders XLA's SPMD partitioner takes that the routes above leave out:
    partial sums reduced on the whole array before anything else (:func:`_reduce_first`), a dim's
    axes in another order, or one of ``dst``'s axes held by another of ``src``'s (or, on meshes of
    two axes, two of them exchanged), fixed by a final permute, a gather of the axes ``dst`` does
    not use before an AllToAll (then one axis at a time, or a run in one AllToAll), shards permuted
    onto an axis ``dst`` uses, or onto an idle one only to be gathered over it (or, on meshes of two
    axes, two axes exchanged), before the rest of the reshard,
    and a permute to ``dst`` with only some of the departing axes kept, on any dim, then gathered
    (:func:`_departing_kept`). Most
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
    for r in _reduce_first(src, dst, base, sizes) if xla else ():
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
    candidates: list[tuple[CollectiveExpr, ...]] = [(*head, *r) for r in _plain_routes(cur, dst, xla)[1:]]
    direct = _permute(cur, dst, axis_sizes)
    if direct is not None:
        candidates.append((*head, direct))
    # reshard to dst with a dim's axes in another order, or with one of its axes swapped for one cur
    # uses and dst does not (an AllToAll leaves A[I_X, J] where A[I_Y, J] is wanted), or two of its
    # axes exchanged, then one permute puts dst's axes in place. Exchanges only on meshes of two axes:
    # on three they take some plans past a million strategies
    exchange = xla and axis_sizes is not None and len(axis_sizes) <= 2
    for alt in [*_reorders(dst), *_swaps(dst, cur), *(_exchanges(dst) if exchange else ())] if xla else ():
        last = _permute(alt, dst, axis_sizes)
        if last is None:
            continue
        if alt == cur:
            candidates.append((*head, last))
            continue
        for there in _plain_routes(cur, alt, xla):
            if not any(isinstance(x.op, (ReduceScatter, AllReduce)) for x in there):
                candidates.append((*head, *there, last))
    # permute to dst with the departing axes kept at the minor end of their dim, then gather them
    target_axes = set(dst.axes)
    dims = []
    for s, t in zip(cur.dims, dst.dims, strict=True):
        going = tuple(a for a in s.axes if a not in target_axes)
        dims.append(_dim(s.name, t.axes + going))
    # dst's axes, then cur's that dst does not use: each axis once, none unreduced (cur and dst agree there)
    mid = _array(cur.name, tuple(dims), cur.unreduced)
    mids = list(dict.fromkeys([mid, *(_departing_kept(cur, dst) if xla else ())]))
    for mid in mids:
        if mid == dst or mid == cur:
            continue
        first = _permute(cur, mid, axis_sizes)
        if first is not None:
            after = reshard_steps(mid, dst)
            if _only_gathers(after):
                candidates.append((*head, first, *after))
    # permute one axis's shards onto an axis the array does not use (K_Y to K_X), then reshard from there;
    # also onto a mesh axis dst does not use either, a roundabout XLA takes (I_Y to I_X, then gather X)
    idle = tuple(a for a in axis_sizes or () if a not in dst.axes)
    for swapped in [*_swaps(cur, dst, idle), *(_exchanges(cur) if exchange else ())] if xla else ():
        first = _permute(cur, swapped, axis_sizes)
        if first is not None and swapped != dst:
            after = reshard_steps(swapped, dst)
            if after and not any(isinstance(x.op, (ReduceScatter, AllReduce)) for x in after):
                candidates.append((*head, first, *after))
    for c in [base, *candidates]:
        for split in _split_gathers(c):
            if split not in candidates:
                candidates.append(split)
    for c in candidates:
        if c not in routes:
            routes.append(c)
    return tuple(routes)


def _reduce_first(
    src: Array, dst: Array, base: tuple[CollectiveExpr, ...], sizes: tuple[tuple[str, Value], ...] | None
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
    moved = _permute(whole.output, dst, dict(sizes) if sizes is not None else None)
    if moved is not None:
        out.append((whole, moved))
    for r in reshard_routes(whole.output, dst, sizes, True)[1:]:
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


def _departing_kept(cur: Array, dst: Array) -> list[Array]:
    """``dst`` with some of the axes ``cur`` uses and ``dst`` does not added at the minor end of a dim,
    each to any dim (``B[J, K_YP]`` between ``B[J, K_PQ]`` and ``B[J, K_Y]``; ``B[J_P, K_YQ]``
    between ``B[J_Y, K_PQ]`` and ``B[J, K_Y]``): XLA permutes to such an array (where each new block
    lies inside one of ``cur``'s, :func:`_permute` checks), then gathers the axes it added, where
    keeping every departing axis in its own dim cuts the blocks finer or moves more. Departing axes
    keep ``cur``'s order within a dim."""
    target_axes = set(dst.axes)
    going = [a for d in cur.dims for a in d.axes if a not in target_axes]
    out = []
    for places in itertools.product(range(len(cur.dims) + 1), repeat=len(going)):  # the last: dropped
        dims = tuple(
            _dim(t.name, t.axes + tuple(a for a, at in zip(going, places, strict=True) if at == i))
            for i, t in enumerate(dst.dims)
        )
        out.append(_array(cur.name, dims, cur.unreduced))
    return out


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


def _reorders(array: Array) -> list[Array]:
    """``array`` with the axes of its multi-axis dims in every other order (``K_YX`` for ``K_XY``)."""
    options = [list(itertools.permutations(d.axes)) if len(d.axes) > 1 else [d.axes] for d in array.dims]
    out = []
    for combo in itertools.product(*options):
        alt = Array(
            array.name,
            tuple(Dim(d.name, axes) for d, axes in zip(array.dims, combo, strict=True)),
            array.unreduced,
        )
        if alt != array:
            out.append(alt)
    return out


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


# -- strategies ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of a strategy: a collective (or free slice) on an operand or the result, or the local product."""

    role: str  # "lhs", "rhs", "matmul" or "out"
    op: CollectiveExpr | LocalMatmul
    timing: Timing | None = None
    flops: Value = None

    @property
    def output(self) -> Array:
        """The array this step produces."""
        return self.op.output

    @property
    def cost(self) -> Timing:
        """The timing of a collective step.

        Raises:
            PlanError: for the local product, which has FLOPs instead.
        """
        if self.timing is None:
            raise PlanError(f"the step {self} moves no data", hint="use .flops for the local product")
        return self.timing

    @property
    def is_communication(self) -> bool:
        """Whether the step moves data between devices."""
        return isinstance(self.op, CollectiveExpr) and not isinstance(self.op.op, DynamicSlice)

    def label(self) -> str:
        """A short name: ``AllGather_X(A)``, ``matmul``."""
        if isinstance(self.op, LocalMatmul):
            return "matmul"
        return f"{self.op.op}({self.op.operand.name or self.role})"

    def __str__(self) -> str:
        return str(self.op)


@dataclass(frozen=True, slots=True)
class Strategy:
    """One complete way to compute a matmul, with its costs.

    Raw cost values (``_flops``, ...) are Fractions on the numeric fast path and
    SymPy otherwise; the public properties always return SymPy expressions.
    """

    steps: tuple[PlanStep, ...]
    sharding: tuple[tuple[str, str | None], ...]
    output: Array
    model: str
    overlap: bool
    raw_flops: Value = field(repr=False)
    raw_compute_time: Value = field(repr=False)
    raw_comm_time: Value = field(repr=False)
    raw_memory: Value = field(repr=False)
    comm_overlap: str = "axes"

    @property
    def name(self) -> str:
        """The steps' short names: ``AllGather_X(Y) → matmul``."""
        return " → ".join(s.label() for s in self.steps)

    # figures
    @property
    def flops_per_device(self) -> sympy.Expr:
        """FLOPs each device performs."""
        return sym(self.raw_flops)

    @property
    def compute_time(self) -> sympy.Expr:
        """``T_math = FLOPs per device / C``."""
        return sym(self.raw_compute_time)

    @property
    def comm_time(self) -> sympy.Expr:
        """``T_comms``: the collectives' latency-aware times, added up as :attr:`comm_overlap` says (``axes``:
        collectives on disjoint links at the same time, the busiest link's total; ``none``: their sum)."""
        return sym(self.raw_comm_time)

    @property
    def bandwidth_comm_time(self) -> sympy.Expr:
        """``T_comms`` from the collectives' bandwidth terms only (the chapter's regime reasoning), added up
        the same way: each operand's and the result's reshards in turn, the three at once on disjoint links."""
        legs = []
        for role in ("lhs", "rhs", "out"):
            timings = [s.cost for s in self.collectives if s.role == role]
            if timings:
                legs.append(chain(timings, "bandwidth_time"))
        return sym(combine(legs, self.comm_overlap))

    @property
    def overlap_time(self) -> sympy.Expr:
        """``max(T_math, T_comms)``: communication hidden behind compute (the chapter's default)."""
        return sym(self._overlap_raw)

    @property
    def serial_time(self) -> sympy.Expr:
        """``T_math + T_comms``: no overlap."""
        return sym(self.raw_compute_time) + sym(self.raw_comm_time)

    @property
    def _overlap_raw(self):
        return _max([self.raw_compute_time, self.raw_comm_time])

    @property
    def raw_time(self):
        """The total time under the plan's overlap setting, raw."""
        return self._overlap_raw if self.overlap else self.raw_compute_time + self.raw_comm_time

    @property
    def time(self) -> sympy.Expr:
        """Total time under the plan's overlap setting."""
        return self.overlap_time if self.overlap else self.serial_time

    @property
    def memory_bytes_per_device(self) -> sympy.Expr:
        """Peak bytes per device: operands, temporaries and result alive at the busiest step."""
        return sym(self.raw_memory)

    @property
    def bound(self) -> str | None:
        """``'compute'`` if T_math ≥ T_comms, ``'communication'`` if less, None when symbolic."""
        m, c = self.raw_compute_time, self.raw_comm_time
        if not (_is_num(m) and _is_num(c)):
            diff = sympy.simplify(sym(m) - sym(c))
            if diff.is_nonnegative:
                return "compute"
            if diff.is_negative:
                return "communication"
            return None
        return "compute" if m >= c else "communication"

    @property
    def collectives(self) -> tuple[PlanStep, ...]:
        """The steps that move data."""
        return tuple(s for s in self.steps if s.is_communication)

    @property
    def local(self) -> LocalMatmul:
        """The local product step."""
        return next(s.op for s in self.steps if isinstance(s.op, LocalMatmul))

    def describe(self) -> list[str]:
        """The steps, one per line, in the notation."""
        return [str(s) for s in self.steps]


@dataclass(frozen=True, slots=True)
class Plan:
    """Every strategy for one matmul on one mesh, sorted fastest first when the numbers allow."""

    matmul: Matmul
    classification: Classification
    mesh: Mesh
    sizes: tuple[tuple[str, sympy.Expr], ...]
    dtype: str
    model: str
    overlap: bool
    hardware: Hardware | None
    targets: tuple[Array, ...]
    strategies: tuple[Strategy, ...]
    numeric: bool
    assumptions: tuple[str, ...] = ()
    comm_overlap: str = "axes"

    @property
    def best(self) -> Strategy | None:
        """The fastest strategy, or None when the costs are symbolic and cannot be ranked."""
        return self.strategies[0] if self.numeric and self.strategies else None

    @property
    def natural(self) -> Strategy:
        """The strategy the chapter's rules give: the operands used as they are (no slicing of
        idle axes), with as few steps as that allows: gather a sharded contracting operand
        (Case 2), reduce the partial sums (Case 3), gather one side (Case 4), nothing (Case 1).

        Examples:
            >>> plan("A[I, J_X] · B[J_X, K] -> C[I, K]").natural.name
            'matmul → AllReduce_X(C)'
        """

        def sliced_inputs(s: Strategy) -> int:
            return sum(
                1
                for st in s.steps
                if st.role in ("lhs", "rhs")
                and isinstance(st.op, CollectiveExpr)
                and isinstance(st.op.op, DynamicSlice)
            )

        return min(self.strategies, key=lambda s: (sliced_inputs(s), len(s.steps), len(s.collectives)))

    def strategy(self, key: int | str) -> Strategy:
        """A strategy by 1-based position or by name.

        Raises:
            PlanError: no such strategy.
        """
        if isinstance(key, int) or (isinstance(key, str) and key.strip().isdigit()):
            i = int(key)
            if 1 <= i <= len(self.strategies):
                return self.strategies[i - 1]
            raise PlanError(
                f"there is no strategy {i}: the plan has {len(self.strategies)}",
                hint=f"number them 1 to {len(self.strategies)}",
            )
        for s in self.strategies:
            if s.name == key:
                return s
        raise PlanError(f"no strategy is called '{key}'", hint="use its number or exact name")


def natural_outputs(mm: Matmul) -> tuple[Array, ...]:
    """The result shardings a matmul gives without being asked: each output dim keeps the
    axes its operand shards it with; an axis that would appear twice (Case 4) goes to
    one dim or the other, giving one candidate each; partial sums are reduced.

    Examples:
        >>> [str(a) for a in natural_outputs(matmul("A[I_X, J] · B[J, K_X]"))]
        ['Out[I_X, K]', 'Out[I, K_X]']
    """
    out_dims = mm.out_dims
    base: dict[str, tuple[str, ...]] = {}
    for d in out_dims:
        lhs_axes = mm.lhs.dim(d).axes if d in mm.lhs.dim_names else ()
        rhs_axes = mm.rhs.dim(d).axes if d in mm.rhs.dim_names else ()
        base[d] = lhs_axes if lhs_axes == rhs_axes or not rhs_axes else rhs_axes if not lhs_axes else lhs_axes
    owners: dict[str, list[str]] = {}
    for d in out_dims:
        for a in base[d]:
            owners.setdefault(a, []).append(d)
    clashes = {a: ds for a, ds in owners.items() if len(ds) > 1}
    results = []
    for choice in itertools.product(*[ds for ds in clashes.values()]):
        pick = dict(zip(clashes, choice, strict=True))
        dims = tuple(Dim(d, tuple(a for a in base[d] if a not in pick or pick[a] == d)) for d in out_dims)
        results.append(Array(mm.out_name, dims))
    return tuple(dict.fromkeys(results))


def compute_array(arr: Array, sigma: Mapping[str, str | None], rank: Mapping[str, list[str]]) -> Array:
    """``arr`` as the product sees it: each dim split by the axes ``sigma`` assigns to it (in
    ``rank`` order), partial sums kept over the axes ``sigma`` marks ``KEEP``."""
    dims = []
    for d in arr.dims:
        axes = [a for a, c in sigma.items() if c == d.name]
        axes.sort(key=rank[d.name].index)
        dims.append(Dim(d.name, tuple(axes)))
    unreduced = frozenset(u for u in arr.unreduced if sigma.get(u) == KEEP)
    # arr's dims, each axis (checked by Dim) on one dim at most, unreduced only where sigma keeps it
    # (so on no dim): valid without Array's checks
    return _array(arr.name, tuple(dims), unreduced)


@dataclass(frozen=True, slots=True)
class _Leg:
    """A resharding sequence with its totals: communication time and memory."""

    steps: tuple[PlanStep, ...]
    comm: Value  # the leg's own T_comms
    peak: Value  # most bytes alive at once during the leg, besides the resident operands
    final: Value  # bytes of the leg's result if it is a new array, else 0
    loads: tuple[tuple[str, Value], ...] = ()  # each link's total busy time (see costmodels.combine)


def _leg(env: CostEnv, src: Array, dst: Array, role: str, resident: bool, exprs=None) -> _Leg:
    if exprs is None:
        exprs = reshard_steps(src, dst)
    if not exprs:
        return _Leg((), 0, 0, 0)
    steps = []
    timings = []
    peaks: list[Value] = []
    for expr in exprs:
        timing = env.timing(expr)
        steps.append(PlanStep(role, expr, timing))
        if not isinstance(expr.op, DynamicSlice):
            timings.append(timing)
        before = 0 if (resident and (expr.operand is src or expr.operand == src)) else env.bytes(expr.operand)
        peaks.append(before + env.bytes(expr.output))
    comm, per_link = tally(timings, env.comm_overlap)
    return _Leg(tuple(steps), comm, _max(peaks), env.bytes(dst), per_link)


@memoized
def plan(
    mm: Matmul | str,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    *,
    dtype: str = "bf16",
    hardware: Hardware | str | None = None,
    constants: Mapping[sympy.Symbol, object] | None = None,
    model: str = "book",
    overlap: bool = True,
    routes: str = "standard",
    comm_overlap: str = "axes",
) -> Plan:
    """List and cost every strategy for ``mm``.

    Args:
        mm: a :class:`~symshard.matmul.Matmul` or its notation.
        mesh: the mesh (text, mapping or :class:`~symshard.mesh.Mesh`); None makes
            a symbolic mesh from the axes the arrays name. With ``hardware`` and a
            mesh given as text or mapping, the chip's wiring rules apply.
        shape: dim sizes; dims left out stay symbolic.
        dtype: element type of all three arrays.
        hardware: chip whose constants replace ``C``, ``W_ici``, ``T_hop``, ...
        constants: extra ``{symbol: value}`` substitutions.
        model: collective cost model, ``'book'`` or ``'ring'``.
        overlap: total time as ``max(T_math, T_comms)`` (True) or the sum (False).
        comm_overlap: how a strategy's collectives add up into ``T_comms``: ``axes`` (the book's
            convention: collectives on disjoint links run at the same time, ``T_comms`` is the busiest
            link's total) or ``none`` (their sum).
        routes: ``'standard'``: each array resharded by :func:`reshard_routes`'s routes; ``'xla'``:
            also by the other orders XLA's SPMD partitioner takes (reduce before slicing, reorder then
            permute, ...), to compare plans with XLA's (:mod:`symshard.jax.verify` does); on meshes of
            three axes, many times more strategies (20849 instead of 660 for
            ``A[I_X, J_Y] · B[J_Y, K_Z] -> C[I_X, K_Z]`` on ``X=4,Y=4,Z=4``).

    Raises:
        PlanError: a requested output no strategy can produce (with the reason).
        UnknownAxisError: an operand names an axis the mesh lacks.
        DivisibilityError: a dim size its shards do not divide.
        ShapeError: sizes that are not positive integers, or for dims no operand has.
        UnknownHardwareError: a chip name not in the catalogue.
    """
    m_ = matmul(mm) if isinstance(mm, str) else mm
    hw = lookup_hardware(hardware) if hardware is not None else None
    arrays = [m_.lhs, m_.rhs] + ([m_.out] if m_.out is not None else [])
    mesh_ = resolve_mesh(mesh, [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))], hw)
    context = str(m_)
    sizes = resolve_shape(shape, m_.dims, context=context)
    for arr in arrays:
        check_on_mesh(arr, mesh_, sizes)
    env = CostEnv(mesh_, sizes, dtype, hw, constants, model, comm_overlap)
    targets = (m_.out,) if m_.out is not None else natural_outputs(m_)
    if routes not in ("standard", "xla"):
        raise PlanError(f"routes must be 'standard' or 'xla', not {routes!r}", hint="use routes='standard'")
    strategies = _enumerate(m_, env, targets, overlap, routes == "xla")
    if not strategies:
        raise PlanError(
            f"no strategy computes {context}",
            hint="the requested output may need partial sums the product cannot produce",
        )
    assumptions = [f"model {env.model}: {MODELS[env.model]}"]
    assumptions += ["axis " + a.describe() for a in mesh_.axes]
    latency = env.costing.latency_model
    assumptions.append(f"latency {latency}: {LATENCY_MODELS[latency]}")
    if hw is not None:
        assumptions.append(f"hardware {hw.label}")
        for symbol in sorted(env.costing.constants - set(env.values), key=str):
            assumptions.append(f"{hw.label} has no figure for {symbol}: the formulas keep it")
    assumptions.append(
        "time = max(T_math, T_comms) (communication overlapped with compute)"
        if overlap
        else "time = T_math + T_comms (no overlap)"
    )
    assumptions.append(f"T_comms: {COMM_OVERLAPS[env.comm_overlap]}")
    assumptions.append("peak memory: the operands stay resident; each step needs its input and output at once")
    if not mesh_.is_numeric:
        assumptions.append(
            "symbolic formulas assume every axis a collective runs over has at least 2 devices "
            "(over an axis of size 1 nothing moves)"
        )
        assumptions.append(
            "a collective-permute that moves a dim's sharding onto other axes assumes their shard count is a "
            "multiple of the old one's"
        )
    return Plan(
        matmul=m_,
        classification=m_.classify(),
        mesh=mesh_,
        sizes=tuple(sizes.items()),
        dtype=env.dtype,
        model=env.model,
        overlap=overlap,
        hardware=hw,
        targets=tuple(targets),
        strategies=tuple(strategies),
        numeric=env.numeric,
        assumptions=tuple(assumptions),
        comm_overlap=env.comm_overlap,
    )


def best_strategy(
    mm: Matmul | str,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    *,
    dtype: str = "bf16",
    hardware: Hardware | str | None = None,
    constants: Mapping[sympy.Symbol, object] | None = None,
    model: str = "book",
    overlap: bool = True,
    routes: str = "standard",
    comm_overlap: str = "axes",
) -> Strategy | None:
    """The fastest strategy for ``mm``, the answer to "which collectives, and how long": the same
    strategy as ``plan(...).best`` (None when the costs are symbolic), found without listing every
    other strategy when that is provably unnecessary.

    When the operands, as they are, multiply straight into the requested output and their blocks
    split the product's FLOPs over every device, that product needs no collective, and no strategy
    can be faster: none moves less (nothing), none gives a device less than its share of the FLOPs,
    and none has fewer steps. Otherwise (with numbers) the compute shardings are costed in order of
    their FLOPs time until that alone exceeds the best total found; symbolic costs fall back to
    ``plan(...).best``.

    Examples:
        >>> best_strategy("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", hardware="tpu-v5e").name
        'matmul'
    """
    m_ = matmul(mm) if isinstance(mm, str) else mm
    if m_.out is not None:
        hw = lookup_hardware(hardware) if hardware is not None else None
        arrays = [m_.lhs, m_.rhs, m_.out]
        mesh_ = resolve_mesh(mesh, [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))], hw)
        sizes = resolve_shape(shape, m_.dims, context=str(m_))
        for arr in arrays:
            check_on_mesh(arr, mesh_, sizes)
        env = CostEnv(mesh_, sizes, dtype, hw, constants, model, comm_overlap)
        if env.numeric:
            xla = routes == "xla"
            found = _straight(m_, env, overlap) or _fastest(m_, env, overlap, xla)
            if found is not None:
                return found
    p = plan(
        m_,
        mesh,
        shape,
        dtype=dtype,
        hardware=hardware,
        constants=constants,
        model=model,
        overlap=overlap,
        routes=routes,
        comm_overlap=comm_overlap,
    )
    return p.best


def _fastest(mm: Matmul, env: CostEnv, overlap: bool, xla: bool = False) -> Strategy | None:
    """``plan``'s best strategy, by branch and bound over the compute shardings.

    A strategy takes at least its FLOPs time, and its legs at least their fastest routes, or before
    those are worked out :meth:`CostEnv.hop_floor`: with overlap the larger of the two, without it
    their sum. The compute shardings are refined and costed in the order of these lower bounds until
    the next bound exceeds the best total found. Within a compute sharding only the routes' totals
    are compared (a :class:`Strategy` is built for the winner only). Ties
    keep ``plan``'s order: the smallest :func:`_rank_key`, then the first in ``plan``'s enumeration."""
    assert mm.out is not None
    target = mm.out
    choices = _choices(mm, env)
    names = [a for a, _ in choices]
    rank = axis_order(mm.dims, [mm.out, mm.lhs, mm.rhs], names)
    candidates = []
    # an operand's compute sharding depends only on the choices that name its own dims (or KEEP)
    mine_l = frozenset(mm.lhs.dim_names) | {KEEP}
    mine_r = frozenset(mm.rhs.dim_names) | {KEEP}
    compute: dict[tuple, Array] = {}
    for i, combo in enumerate(itertools.product(*[opts for _, opts in choices])):
        key_l = (0, *(c if c in mine_l else None for c in combo))
        key_r = (1, *(c if c in mine_r else None for c in combo))
        lhs_c, rhs_c = compute.get(key_l), compute.get(key_r)
        if lhs_c is None or rhs_c is None:
            sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
            if lhs_c is None:
                lhs_c = compute[key_l] = compute_array(mm.lhs, sigma, rank)
            if rhs_c is None:
                rhs_c = compute[key_r] = compute_array(mm.rhs, sigma, rank)
        candidates.append((_ratio(env.flops(lhs_c, rhs_c), env.flops_rate), i, lhs_c, rhs_c, combo))
    builder = Builder(env, overlap, xla)
    best: list = [None, None, None]  # best total time, its full ranking key, what builds it
    fastest: dict[tuple[Array, Array, str], Value] = {}

    def quickest(src: Array, dst: Array, role: str) -> tuple[tuple[_Leg, ...], Value]:
        legs = builder.routes(src, dst, role)
        key = (src, dst, role)
        low = fastest.get(key)
        if low is None:
            low = fastest[key] = min(leg.comm for leg in legs)
        return legs, low

    def combine(compute_time: Value, comm: Value) -> Value:  # numbers: _max's value, without its checks
        if overlap:
            return comm if comm > compute_time else compute_time
        return compute_time + comm

    def cost(i: int, lhs_c: Array, rhs_c: Array, combo: tuple, prep: tuple) -> None:
        local_out, flops, compute_time = prep
        legs_l, _ = quickest(mm.lhs, lhs_c, "lhs")
        legs_r, _ = quickest(mm.rhs, rhs_c, "rhs")
        legs_o = builder.routes(local_out, target, "out")
        sharding = tuple(zip(names, combo, strict=True))
        order = _order_of(sharding)
        j = 0
        for pre_l in legs_l:
            for pre_r in legs_r:
                for post in legs_o:
                    comm = join((pre_l, pre_r, post))
                    total = combine(compute_time, comm)
                    if best[0] is None or total < best[0] or (total == best[0] and comm <= best[1][1]):
                        memory = builder.memory(mm.lhs, mm.rhs, pre_l, pre_r, post, local_out)
                        steps = len(pre_l.steps) + len(pre_r.steps) + 1 + len(post.steps)
                        key = (total, comm, memory, steps, order, i, j)
                        if best[1] is None or key < best[1]:
                            best[0], best[1] = total, key
                            best[2] = (lhs_c, rhs_c, local_out, flops, compute_time, sharding, pre_l, pre_r, post)
                    j += 1

    cheap, lower, join = env.hop_floor, env.bound, env.join
    # a heap of lower bounds on the ranking key (total, comm, memory, steps, order, i, j) of every
    # strategy of a compute sharding: each pop refines the smallest bound one stage (FLOPs time; +
    # each leg's CostEnv.hop_floor, the memory and steps every route needs; + the operands' fastest
    # routes; + the result's), costs the compute sharding once its time bound is exact, and stops
    # when the smallest bound exceeds the best key found (a bound no smaller in every part is no
    # smaller as a whole)
    heap: list[tuple] = []
    seen: set[tuple[Array, Array]] = set()
    for math_time, i, lhs_c, rhs_c, combo in candidates:
        if (lhs_c, rhs_c) not in seen:  # plan keeps the first compute sharding with these operands
            seen.add((lhs_c, rhs_c))
            order = _order_of(tuple(zip(names, combo, strict=True)))
            heap.append(((math_time, 0, 0, 0, order, i), 0, lhs_c, rhs_c, combo, None))
    heapq.heapify(heap)
    while heap:
        bound, stage, lhs_c, rhs_c, combo, prep = heapq.heappop(heap)
        if best[1] is not None and bound > best[1]:
            break
        i = bound[5]
        if stage == 0:
            prep = builder.prepare(mm.lhs, mm.rhs, lhs_c, rhs_c, mm.out)
            if prep is None:
                continue
            low = lower([cheap(mm.lhs, lhs_c), cheap(mm.rhs, rhs_c), cheap(prep[0], mm.out)])
        elif stage == 1:
            low = lower([quickest(mm.lhs, lhs_c, "lhs")[1], quickest(mm.rhs, rhs_c, "rhs")[1], cheap(prep[0], mm.out)])
        elif stage == 2:
            low = lower(
                [
                    quickest(mm.lhs, lhs_c, "lhs")[1],
                    quickest(mm.rhs, rhs_c, "rhs")[1],
                    quickest(prep[0], mm.out, "out")[1],
                ]
            )
        else:
            cost(i, lhs_c, rhs_c, combo, prep)
            continue
        if stage == 0:
            # a leg moves nothing only when its ends agree; otherwise its last array stays alive with
            # the local product's result (see Builder.memory), and it takes a step at least
            moved = [(src, dst) for src, dst in ((mm.lhs, lhs_c), (mm.rhs, rhs_c)) if src != dst]
            memory: Value = env.bytes(mm.lhs) + env.bytes(mm.rhs)
            extra: Value = 0
            for _, dst in moved:
                extra = extra + env.bytes(dst)
            memory = memory + (extra + env.bytes(prep[0]))
            steps = 1 + len(moved) + (prep[0] != mm.out)
        else:
            memory, steps = bound[2], bound[3]
        refined = (combine(prep[2], low), low, memory, steps, bound[4], i)
        heapq.heappush(heap, (refined, stage + 1, lhs_c, rhs_c, combo, prep))
    if best[2] is None:
        return None
    lhs_c, rhs_c, local_out, flops, compute_time, sharding, pre_l, pre_r, post = best[2]
    product = PlanStep("matmul", LocalMatmul(lhs_c, rhs_c, local_out), None, flops)
    return builder.build(mm.lhs, mm.rhs, mm.out, sharding, product, compute_time, local_out, pre_l, pre_r, post)


def _straight(mm: Matmul, env: CostEnv, overlap: bool) -> Strategy | None:
    """The strategy that multiplies the operands as they are into ``mm.out``, if that needs no
    collective and splits the FLOPs over every device; else None."""
    assert mm.out is not None
    try:
        local = local_product(mm.lhs, mm.rhs, mm.out.dim_names, mm.out.name)
    except PlanError:
        return None
    if local != mm.out or mm.lhs.unreduced or mm.rhs.unreduced:
        return None
    total: Value = 2
    for d in mm.dims:
        total = total * env.dim[d]
    if env.flops(mm.lhs, mm.rhs) * env.group(env.mesh.names) != total:
        return None
    sharding = []
    for a in env.mesh.names:
        dim_ = mm.lhs.sharded_dim(a) or mm.rhs.sharded_dim(a)
        sharding.append((a, dim_ if env.axis[a] != 1 else None))
    return Builder(env, overlap).strategy(mm.lhs, mm.rhs, mm.lhs, mm.rhs, mm.out, tuple(sharding))


def _choices(mm: Matmul, env: CostEnv) -> list[tuple[str, list[str | None]]]:
    out: list[tuple[str, list[str | None]]] = []
    for a in env.mesh.names:
        if env.axis[a] == 1:
            out.append((a, [None]))
            continue
        opts: list[str | None] = [None, *mm.dims]
        in_l, in_r = a in mm.lhs.unreduced, a in mm.rhs.unreduced
        if in_l != in_r:
            other = mm.rhs if in_l else mm.lhs
            if other.sharded_dim(a) is None:
                opts.append(KEEP)
        out.append((a, opts))
    return out


class Builder:
    """Builds costed strategies from compute shardings, sharing resharding legs between them."""

    def __init__(self, env: CostEnv, overlap: bool, xla: bool = False) -> None:
        self.env = env
        self.overlap = overlap
        self.xla = xla
        self.legs: dict[tuple[Array, Array, str], _Leg] = {}
        self.route_legs: dict[tuple[Array, Array, str], tuple[_Leg, ...]] = {}
        sizes = env.axis
        numeric = all(_is_num(v) for v in sizes.values())
        self.sizes = tuple(sorted((a, int(v)) for a, v in sizes.items())) if numeric else None

    def leg(self, src: Array, dst: Array, role: str) -> _Leg:
        key = (src, dst, role)
        if key not in self.legs:
            self.legs[key] = _leg(self.env, src, dst, role, resident=role != "out")
        return self.legs[key]

    def routes(self, src: Array, dst: Array, role: str) -> tuple[_Leg, ...]:
        """Every costed route from ``src`` to ``dst`` (:func:`reshard_routes`), the plain one first."""
        key = (src, dst, role)
        found = self.route_legs.get(key)
        if found is None:
            alts = reshard_routes(src, dst, self.sizes, self.xla)
            found = (self.leg(src, dst, role), *(_leg(self.env, src, dst, role, role != "out", r) for r in alts[1:]))
            self.route_legs[key] = found
        return found

    def strategy(
        self,
        lhs: Array,
        rhs: Array,
        lhs_c: Array,
        rhs_c: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
    ) -> Strategy | None:
        """The strategy that reshards ``lhs``/``rhs`` to ``lhs_c``/``rhs_c``, multiplies, and
        reshards the product to ``target``; None if the blocks cannot give ``target``."""
        found = self.strategies(lhs, rhs, lhs_c, rhs_c, target, sharding, routes=False)
        return found[0] if found else None

    def strategies(
        self,
        lhs: Array,
        rhs: Array,
        lhs_c: Array,
        rhs_c: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
        routes: bool = True,
    ) -> list[Strategy]:
        """The strategies with these compute shardings: the plain resharding first, then (with
        ``routes``) every combination of the routes through a collective-permute."""
        prep = self.prepare(lhs, rhs, lhs_c, rhs_c, target)
        if prep is None:
            return []
        local_out, flops, compute_time = prep
        legs_l: tuple[_Leg, ...]
        legs_r: tuple[_Leg, ...]
        legs_o: tuple[_Leg, ...]
        if not routes:
            legs_l = (self.leg(lhs, lhs_c, "lhs"),)
            legs_r = (self.leg(rhs, rhs_c, "rhs"),)
            legs_o = (self.leg(local_out, target, "out"),)
        else:
            legs_l = self.routes(lhs, lhs_c, "lhs")
            legs_r = self.routes(rhs, rhs_c, "rhs")
            legs_o = self.routes(local_out, target, "out")
        product = PlanStep("matmul", LocalMatmul(lhs_c, rhs_c, local_out), None, flops)
        build = self.build
        return [
            build(lhs, rhs, target, sharding, product, compute_time, local_out, pre_l, pre_r, post)
            for pre_l in legs_l
            for pre_r in legs_r
            for post in legs_o
        ]

    def prepare(
        self, lhs: Array, rhs: Array, lhs_c: Array, rhs_c: Array, target: Array
    ) -> tuple[Array, Value, Value] | None:
        """The local product's result, FLOPs and compute time for these compute shardings, or None
        when the blocks cannot give ``target``."""
        try:
            local_out = local_product(lhs_c, rhs_c, target.dim_names, target.name)
        except PlanError:
            return None
        if not target.unreduced <= local_out.unreduced:
            return None
        if not lhs_c.unreduced <= lhs.unreduced or not rhs_c.unreduced <= rhs.unreduced:
            return None
        flops = self.env.flops(lhs_c, rhs_c)
        return local_out, flops, _ratio(flops, self.env.flops_rate)

    def memory(self, lhs: Array, rhs: Array, pre_l: _Leg, pre_r: _Leg, post: _Leg, local_out: Array) -> Value:
        """Peak bytes per device of the strategy made of these legs."""
        env = self.env
        peak = _max([pre_l.peak, pre_l.final + pre_r.peak, pre_l.final + pre_r.final + env.bytes(local_out), post.peak])
        return env.bytes(lhs) + env.bytes(rhs) + peak

    def build(
        self,
        lhs: Array,
        rhs: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
        product: PlanStep,
        compute_time: Value,
        local_out: Array,
        pre_l: _Leg,
        pre_r: _Leg,
        post: _Leg,
    ) -> Strategy:
        """One costed strategy: these legs around the local product."""
        return Strategy(
            steps=(*pre_l.steps, *pre_r.steps, product, *post.steps),
            sharding=sharding,
            output=target,
            model=self.env.model,
            overlap=self.overlap,
            raw_flops=product.flops,
            raw_compute_time=compute_time,
            raw_comm_time=self.env.join((pre_l, pre_r, post)),
            raw_memory=self.memory(lhs, rhs, pre_l, pre_r, post, local_out),
            comm_overlap=self.env.comm_overlap,
        )


def axis_order(dims: Iterable[str], arrays: Sequence[Array], mesh_names: Sequence[str]) -> dict[str, list[str]]:
    """For each dim, the order in which axes assigned to it are written: as in the given arrays
    (the requested output first), then mesh order."""
    rank: dict[str, list[str]] = {}
    for d in dims:
        order: list[str] = []
        for arr in arrays:
            if d in arr.dim_names:
                order += arr.dim(d).axes
        order += list(mesh_names)
        rank[d] = list(dict.fromkeys(order))
    return rank


def _enumerate(mm: Matmul, env: CostEnv, targets: Sequence[Array], overlap: bool, xla: bool = False) -> list[Strategy]:
    choices = _choices(mm, env)
    names = [a for a, _ in choices]
    found: dict[tuple, Strategy] = {}
    builder = Builder(env, overlap, xla)
    # an operand's compute sharding depends only on the choices that name its own dims (or KEEP)
    mine_l = frozenset(mm.lhs.dim_names) | {KEEP}
    mine_r = frozenset(mm.rhs.dim_names) | {KEEP}
    for target in targets:
        rank = axis_order(mm.dims, [target, mm.lhs, mm.rhs], names)
        compute: dict[tuple, Array] = {}
        for combo in itertools.product(*[opts for _, opts in choices]):
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
            if key in found:
                continue
            built = builder.strategies(mm.lhs, mm.rhs, lhs_c, rhs_c, target, tuple(zip(names, combo, strict=True)))
            if built:
                found[key] = built[0]
                for i, s in enumerate(built[1:]):
                    found[(*key, i)] = s
    strategies = list(found.values())
    sort_strategies(strategies, env.numeric)
    return strategies


def _rank_key(s: Strategy) -> tuple:
    return (s.raw_time, s.raw_comm_time, s.raw_memory, len(s.steps), _order(s))


def sort_strategies(strategies: list[Strategy], numeric: bool) -> None:
    """Fastest first when the costs are numbers; else fewest collectives, most work split."""
    if numeric:
        strategies.sort(key=_rank_key)
    else:
        strategies.sort(key=lambda s: (len(s.collectives), -_shards_used(s), len(s.steps), _order(s)))


def _order(s: Strategy) -> tuple:
    return _order_of(s.sharding)


def _order_of(sharding: tuple[tuple[str, str | None], ...]) -> tuple:
    return tuple((a, c or "") for a, c in sharding)


def _shards_used(s: Strategy) -> int:
    return sum(1 for _, c in s.sharding if c is not None)


on_clear(reshard_steps.cache_clear)
on_clear(reshard_routes.cache_clear)

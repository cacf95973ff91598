"""Every way to compute a sharded matmul, each one costed: the planner.

A strategy is decided by its *compute sharding*: for every mesh axis, which dim
of the product it splits while the devices multiply (or none). From that choice
the rest follows:

1. each operand is resharded to its compute sharding: free slices along axes it
   is replicated over (``DynamicSlice``), ReduceScatter or AllReduce of partial
   sums, AllToAll to move an axis between dims, AllGather of what must go;
2. every device multiplies its blocks (:class:`~symshard.einsums.LocalMatmul`),
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

import bisect
import heapq
import itertools
import math
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy

from .arrays import Array, Dim, unchecked_array
from .chips import Hardware, constant_ranges, exact_number
from .chips import hardware as lookup_hardware
from .collectives import CollectiveExpr, DynamicSlice, FusedAllToAll
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
from .costmodels import (
    largest as largest_cost,
)
from .dtypes import canonical_dtype, dtype_bytes
from .einsums import Classification, LocalMatmul, Matmul, local_product, matmul
from .errors import DivisibilityError, PlanError, TooLargeError
from .mathtext import as_expr
from .memo import memoized
from .mesh import Mesh, resolve_mesh
from .messages import say
from .monomials import Domain, Lazy, Maximum, Samples, from_expr, less_equal, log_uniform, values_at
from .placement import ShapeLike, check_on_mesh, resolve_shape
from .routes import Repermute, RouteSearch, check_deadline, reshard_routes, reshard_steps
from .subaxes import AxisSplit, split_array, split_mesh
from .symbols import C

__all__ = [
    "KEEP",
    "MAX_LISTED",
    "MAX_SHARDINGS",
    "MAX_SYMBOLIC_SHARDINGS",
    "Builder",
    "CostEnv",
    "FusedAllToAll",
    "Leg",
    "Plan",
    "PlanStep",
    "Repermute",
    "Strategy",
    "Value",
    "axis_order",
    "best_strategy",
    "compute_array",
    "exact_ratio",
    "natural_outputs",
    "plan",
    "reshard_routes",
    "reshard_steps",
    "sort_strategies",
    "sym",
]

Value = Any
"""A raw cost: an ``int`` or ``Fraction`` on the fast numeric path, a SymPy expression otherwise."""

KEEP = "unreduced"
"""A compute-sharding choice: keep an operand's partial sums over this axis through the product."""

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


def exact_ratio(num, den):
    """``num / den`` exactly: an int when it divides, a Fraction for ints, SymPy otherwise.

    Examples:
        >>> exact_ratio(12, 4), exact_ratio(3, 4)
        (3, Fraction(3, 4))
        >>> from symshard.symbols import C
        >>> exact_ratio(2, C)
        2/C
    """
    if isinstance(num, int) and isinstance(den, int):
        return num // den if num % den == 0 else Fraction(num, den)
    return num / den


def _is_num(value: Value) -> bool:
    return isinstance(value, (int, Fraction)) or (isinstance(value, sympy.Basic) and value.is_number)


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
        self._floors: dict[tuple[Array, Array], Value] = {}
        self._floor_loads: dict[tuple[Array, Array], dict[str, Value]] = {}
        self.sizes = dict(sizes)
        self._fits: dict[Array, bool] = {}

    def fits(self, array: Array) -> bool:
        """Whether ``array`` can be split as it says: with numbers, every dim a multiple of the devices
        that shard it (placement's own check); a dim given as a number and sharded over symbolic axes must
        leave room for at least two devices on each."""
        found = self._fits.get(array)
        if found is None and self.numeric and self._on_mesh(array):
            # every size a number: placement's rule in integers (the planner checks every array it reaches)
            found = True
            for d in array.dims:
                if d.axes:
                    devices: Value = 1
                    for a in d.axes:
                        devices = devices * self.axis[a]
                    if self.dim[d.name] % devices:
                        found = False
                        break
            self._fits[array] = found
        if found is None:
            try:
                check_on_mesh(array, self.mesh, self.sizes)
                found = True
            except DivisibilityError:
                found = False
            if found:
                for d in array.dims:
                    size = as_expr(self.sizes[d.name])
                    if not d.axes or not size.is_number:
                        continue
                    known = 1
                    unknown = 0
                    for a in d.axes:
                        n = as_expr(self.mesh.size(a))
                        if n.is_number:
                            known *= int(n)
                        else:
                            unknown += 1
                    if unknown and (int(size) % known or int(size) // known < 2**unknown):
                        found = False
            self._fits[array] = found
        return found

    def _on_mesh(self, array: Array) -> bool:
        """Whether every axis ``array`` names is the mesh's and every dim has a size."""
        axis, dim = self.axis, self.dim
        return all(d.name in dim and all(a in axis for a in d.axes) for d in array.dims) and all(
            a in axis for a in array.unreduced
        )

    def hop_floor(self, src: Array, dst: Array) -> Value:
        """A lower bound on the time of any route from ``src`` to ``dst``: each mesh axis whose partial
        sums must be reduced, or that must leave the dim it shards, takes part in some collective
        (slices only add axes), each at least the least a gather, an AllToAll or a permute over that
        axis alone pays (:meth:`~symshard.costmodels.Costing.latency_floor`), and those floors add up
        along one route: its collectives run one after another, and one collective over several axes
        pays each axis's steps. Zero when the costs are symbolic."""
        key = (src, dst)
        found = self._floors.get(key)
        if found is None:
            found = 0
            for a in self.leaving(src, dst):
                found = found + self._fewest[a]
            self._floors[key] = found
        return found

    def leaving(self, src: Array, dst: Array) -> tuple[str, ...]:
        """The mesh axes every route from ``src`` to ``dst`` runs a collective over: those whose partial
        sums must be reduced and those that must leave the dim they shard."""
        axes = [a for a in src.unreduced if a not in dst.unreduced]
        for d in src.dims:
            axes += [a for a in d.axes if dst.sharded_dim(a) != d.name]
        return tuple(axes)

    def floor_loads(self, src: Array, dst: Array) -> dict[str, Value]:
        """A lower bound on how long any route from ``src`` to ``dst`` keeps each link busy: a route keeps
        every link it uses busy for its whole time (:func:`~symshard.costmodels.tally`), at least
        :meth:`hop_floor`, and it uses every link of each axis it must run a collective over (the parts
        of a split axis, whose floor is zero, left out)."""
        key = (src, dst)
        found = self._floor_loads.get(key)
        if found is None:
            floor = self.hop_floor(src, dst)
            found = self._floor_loads[key] = {}
            if floor:
                for a in self.leaving(src, dst):
                    if self._fewest[a]:
                        for link in self.costing.links(a):
                            if link.size != 1:
                                found[link.resource] = floor
        return found

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

    def join(self, legs: Sequence[Leg]) -> Value:
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
        return join_loads((leg.loads for leg in loaded), self.largest_of)

    largest_of: Callable[[list[Value]], Value] | None = None
    """How :func:`~symshard.costmodels.join_loads` takes the largest link total (None: its own way)."""

    def largest(self, values: Sequence[Value]) -> Value:
        """The largest of several costs (an unevaluated ``Max`` while they are symbolic)."""
        return largest_cost(values)

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
            cached = exact_ratio(num, den)
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
        return exact_ratio(num, den)

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


_VOLUME = sympy.Dummy("V", positive=True)


class Probe(CostEnv):
    """A :class:`CostEnv`'s costs kept as sums of monomials (:mod:`symshard.monomials`): what the planner
    compares to drop strategies that can never win, hundreds of times faster than SymPy.

    Each collective is costed once per kind and axes by :mod:`~symshard.costmodels`, with its volume a
    placeholder symbol that each actual volume then replaces (substitution commutes with the formulas, so
    the costs are exactly the plan's, in another form). FLOPs, bytes and how the legs add up are worked
    out on the monomials directly.
    """

    def __init__(self, env: CostEnv) -> None:
        self.base = env
        self.mesh = env.mesh
        self.model = env.model
        self.comm_overlap = env.comm_overlap
        self.dtype = env.dtype
        self.hardware = env.hardware
        self.values = env.values
        self.numeric = False
        self.costing = env.costing
        self.dim = {d: from_expr(v) for d, v in env.dim.items()}
        self.axis = {a: from_expr(v) for a, v in env.axis.items()}
        self.elem = from_expr(env.elem)
        self.flops_rate = from_expr(env.flops_rate)
        self._cache = {}
        self._fewest = {a: 0 for a in env.axis}
        self._bytes = {}
        self._groups = {}
        self._by_volume = {}
        self._floors = {}
        self._floor_loads = {}
        self._units: dict[tuple[str, tuple[str, ...]], tuple[Maximum, frozenset[str]]] = {}  # per kind and axes

    largest_of = staticmethod(Maximum.largest)

    def largest(self, values: Sequence[Value]) -> Value:
        return Maximum.largest(values)

    def timing(self, expr: CollectiveExpr) -> Timing:
        key = (expr.op, expr.operand)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        op = expr.op
        v = volume(op.kind, self.bytes(expr.operand), self.bytes(expr.output), self.group(op.axes))
        unit = self._units.get((op.kind, op.axes))
        if unit is None:
            t = self.costing.timing(op.kind, op.axes, _VOLUME)
            unit = self._units[(op.kind, op.axes)] = (from_expr(t.time), t.resources)
        time = (
            unit[0].substitute(_VOLUME, v)
            if len(v.parts) == 1 and v.parts[0].monomial
            else from_expr(self.costing.timing(op.kind, op.axes, v.expr()).time)
        )
        out = Timing(v, 0, time, 0, time, self.costing.latency_model, (), unit[1])
        self._cache[key] = out
        return out


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
            raise PlanError(
                say("the step {step} moves no data", step=str(self)), hint=say("use .flops for the local product")
            )
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
        return largest_cost([self.raw_compute_time, self.raw_comm_time])

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
        """``'compute'`` if T_math ≥ T_comms, ``'communication'`` if less; with symbols, the answer
        when it holds everywhere (every axis at least 2 devices), else None."""
        m, c = self.raw_compute_time, self.raw_comm_time
        if not (_is_num(m) and _is_num(c)):
            math_, comm = from_expr(sym(m)), from_expr(sym(c))
            domain = Domain.around(math_.atoms | comm.atoms)
            if less_equal(comm, math_, domain):
                return "compute"
            if comm.is_zero:
                return "compute"
            return None
        return "compute" if m >= c else "communication"

    @property
    def divisibility(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """What the strategy needs to divide evenly: ``(dim, axes)`` for every dim some array of it
        shards, the dim a multiple of the product of those axes' sizes (only the largest group of each
        dim is kept: ``H`` over ``X·Y`` implies ``H`` over ``X``).

        Examples:
            >>> s = plan("X[B, D] · Y[D_X, F] -> Z[B, F]").strategy("DynamicSlice_{X,D}(X) → matmul → AllReduce_X(Z)")
            >>> s.divisibility
            (('D', ('X',)),)
        """
        arrays: list[Array] = []
        for st in self.steps:
            arrays += (
                [st.op.lhs, st.op.rhs, st.op.output]
                if isinstance(st.op, LocalMatmul)
                else [st.op.operand, st.op.output]
            )
        return _largest_groups(arrays)

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
class Reason:
    """Why a plan lists a strategy, as a key and values (the words are :mod:`symshard.report.plans`'s).

    Keys: ``fastest`` (numbers: the fastest of all), ``fastest_within`` (numbers: the fastest of the
    strategies that need at most ``memory`` bytes per device, so the one to use under that limit),
    ``fastest_at`` (symbols: the fastest at the sample ``point``), ``undominated`` (symbols: no other
    strategy has at most its FLOPs, communication time and memory everywhere), ``natural`` (the
    chapter's rule, listed whether or not it can win) and ``listed`` (every valid strategy, ``all=True``).
    """

    key: str
    values: tuple[tuple[str, object], ...] = ()

    def value(self, name: str) -> object:
        """One of the values, by name (None when absent)."""
        return dict(self.values).get(name)


@dataclass(frozen=True, slots=True)
class Plan:
    """The strategies for one matmul on one mesh: those that can win somewhere, or (``all=True``) every
    valid one; sorted fastest first when the numbers allow, else fewest collectives first.

    ``reasons[i]`` says why ``strategies[i]`` is listed; ``counted`` holds what the planner counted on
    its way (``valid``: strategies whose every array divides evenly, when known; ``dominated``: those
    dropped as never winning; ``indivisible``: those dropped because an array does not divide).
    """

    matmul: Matmul
    classification: Classification
    mesh: Mesh
    sizes: tuple[tuple[str, sympy.Expr], ...]
    dtype: str
    model: str
    overlap: bool
    hardware: Hardware | None
    targets: tuple[Array, ...]
    strategies: Sequence[Strategy]
    numeric: bool
    assumptions: tuple[str, ...] = ()
    comm_overlap: str = "axes"
    reasons: tuple[Reason, ...] = ()
    counted: tuple[tuple[str, int], ...] = ()
    complete: bool = False
    split: tuple[AxisSplit, ...] = ()  # mesh axes used in parts: the plan's mesh has the parts instead
    source: Any = field(default=None, repr=False, compare=False, hash=False)
    natural_strategy: Strategy | None = field(default=None, repr=False, compare=False, hash=False)

    @property
    def best(self) -> Strategy | None:
        """The fastest strategy, or None when the costs are symbolic and cannot be ranked."""
        return self.strategies[0] if self.numeric and len(self.strategies) else None

    @property
    def natural(self) -> Strategy:
        """The strategy the chapter's rules give: the operands used as they are (no slicing of
        idle axes), with as few steps as that allows: gather a sharded contracting operand
        (Case 2), reduce the partial sums (Case 3), gather one side (Case 4), nothing (Case 1).
        Always listed, whether or not it can win.

        Examples:
            >>> plan("A[I, J_X] · B[J_X, K] -> C[I, K]").natural.name
            'matmul → AllReduce_X(C)'
        """
        if self.natural_strategy is not None:
            return self.natural_strategy

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
        """A strategy by 1-based position among those listed, or by name among every valid one (a
        strategy the plan does not list, because it can never win, is still found by its name).

        Raises:
            PlanError: no such strategy.
        """
        if isinstance(key, int) or (isinstance(key, str) and key.strip().isdigit()):
            i = int(key)
            if 1 <= i <= len(self.strategies):
                return self.strategies[i - 1]
            raise PlanError(
                say("there is no strategy {number}: the plan has {count}", number=i, count=len(self.strategies)),
                hint=say("number them 1 to {count}", count=len(self.strategies)),
            )
        for s in self.strategies:
            if s.name == key:
                return s
        found = self.source.find(key) if self.source is not None and not self.complete else None
        if found is not None:
            return found
        raise PlanError(say("no strategy is called '{name}'", name=key), hint=say("use its number or exact name"))

    def all_strategies(self) -> Sequence[Strategy]:
        """Every valid strategy, in the order ``plan(..., all=True)`` lists them, each built when read (a
        plan over many axes has a hundred thousand)."""
        if self.complete or self.source is None:
            return self.strategies
        return self.source.listing()

    def matching(
        self,
        signature: Callable[[tuple[CollectiveExpr, ...]], tuple],
        target: tuple,
        *,
        further: bool = False,
        any_route: bool = False,
        kinds: Mapping[str, int] | None = None,
        deadline: float | None = None,
    ) -> list[Strategy]:
        """Every valid strategy whose steps, read by ``signature`` (a sorted tuple per route, as
        :meth:`Enumeration.matching` takes it), add up to ``target``, fastest first, found without
        listing the others. With ``further`` (and ``routes='xla'``) the search also takes XLA's further
        orders (see :func:`reshard_routes`), which the plan lists only for a 2-D matmul on three axes:
        with batch or head dims there are too many to list, but a search for one set of collectives is quick.

        With ``any_route`` (numbers only) the legs are instead any routes of the algebra's exact steps
        (:func:`symshard.routes.every_route`), which the planner does not list: permutes one after
        another, a reduce-scatter undone by a gather, a slice before a permute. Such a strategy is one
        symshard can write, cost and run, though no plan would offer it. ``kinds`` bounds how many steps
        of each collective kind a strategy takes (a search for a known plan names its own: much quicker).

        Past ``deadline`` (a ``time.perf_counter()`` instant) the search stops with
        :class:`~symshard.errors.TimeLimitError`: on four axes a search step by step can take minutes.
        """
        src = self.source
        if src is None:  # a plan made by hand, not by plan(): nothing to search
            return []
        if (further or any_route) and src.xla and not src.wide:
            src = Enumeration(src.mm, src.env, src.targets, src.overlap, True, wide=True)
        if any_route:

            def item(expr: CollectiveExpr) -> Hashable | None:
                read = signature((expr,))
                return read[0] if read else None

            found = [src.build_routed(p, routes) for p, routes in src.composed(item, target, kinds, deadline)]
        else:
            found = [src.build(p, picks) for p, picks in src.matching(signature, target, deadline)]
        return sorted(found, key=lambda s: _sort_key(s, self.numeric))

    def place(self, strategy: Strategy) -> int:
        """The 1-based place ``strategy`` takes in the plan's order (fastest first) among the strategies
        listed: one more than the number ranked before it. It need not be listed itself (one found by
        :meth:`matching` with ``further``); the listed ones it is compared with are built as a binary search
        reads them. With symbolic costs, which do not rank, its place is one past the last."""
        listed = self.strategies
        if not self.numeric:
            return len(listed) + 1
        key = _rank_key(strategy)[:4]
        lo, hi = 0, len(listed)
        while lo < hi:
            mid = (lo + hi) // 2
            if _rank_key(listed[mid])[:4] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo + 1

    def why(self, index: int) -> Reason:
        """Why the strategy numbered ``index`` (1-based) is listed."""
        if self.reasons:
            return self.reasons[index - 1]
        return Reason("listed")


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
    return unchecked_array(arr.name, tuple(dims), unreduced)


@dataclass(frozen=True, slots=True)
class Leg:
    """A resharding sequence with its totals: communication time and memory.

    The planner costs each operand's and the result's leg once and joins them into strategies;
    :func:`symshard.search.best_sharding` does the same with their costs scaled to ints.

    Examples:
        >>> Leg((), 0, 0, 0)  # no resharding: nothing sent, nothing held
        Leg(steps=(), comm=0, peak=0, final=0, loads=())
    """

    steps: tuple[PlanStep, ...]
    comm: Value  # the leg's own T_comms
    peak: Value  # most bytes alive at once during the leg, besides the resident operands
    final: Value  # bytes of the leg's result if it is a new array, else 0
    loads: tuple[tuple[str, Value], ...] = ()  # each link's total busy time (see costmodels.combine)


def _leg(env: CostEnv, src: Array, dst: Array, role: str, resident: bool, exprs=None) -> Leg:
    if exprs is None:
        exprs = reshard_steps(src, dst)
    if not exprs:
        return Leg((), 0, 0, 0)
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
    return Leg(tuple(steps), comm, env.largest(peaks), env.bytes(dst), per_link)


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
    all: bool | None = None,
    partitioned_axes: int | None = None,
    split: str | Mapping[str, Sequence[int]] | None = None,
) -> Plan:
    """The strategies for ``mm`` that can win somewhere, each costed, with the reason it is listed.

    Every strategy the planner lists divides evenly: with numbers, every array of every step splits
    over its shards (a strategy that would need ``H = 4`` split 8 ways is never listed); with
    symbols, :attr:`Strategy.divisibility` says what it needs, and a strategy that no size could
    satisfy (``H = 4`` over three symbolic axes, each at least 2) is dropped.

    Strategies that can never win are dropped before their costs are built: with numbers, those
    no faster than one that needs no more memory (a branch and bound on cheap lower bounds finds the
    rest without costing them); with symbols, those whose FLOPs, communication time and memory are
    each at least another valid strategy's at every point where they are valid (decided exactly on
    the sums of monomials the costs are, :mod:`symshard.monomials`). The strategy the chapter's
    rules give (:attr:`Plan.natural`) is always listed. ``all=True`` lists every valid strategy
    instead, built one at a time as they are read.

    Args:
        mm: a :class:`~symshard.einsums.Matmul` or its notation.
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
            permute, ...), to compare plans with XLA's (:mod:`symshard.jax.verification` does); on meshes of
            three axes, many times more strategies (258816 instead of 660 for
            ``A[I_X, J_Y] · B[J_Y, K_Z] -> C[I_X, K_Z]`` on ``X=4,Y=4,Z=4``).
        all: list every valid strategy, not only those that can win; default: only with
            ``routes='xla'`` (where XLA's plan is looked for among them).
        partitioned_axes: with ``routes='xla'``, the number of axes of the mesh XLA partitioned for,
            where ``mesh`` splits some of them into parts (verify's check of a plan by sub-axes);
            default: ``mesh``'s own. XLA's further orders on a mesh of three axes (see
            :func:`reshard_routes`) come only for a 2-D matmul on a mesh of three axes as written.
        split: mesh axes to use in parts too, ``'X=2x2'`` (see :mod:`symshard.subaxes`): the plan is
            made on the mesh with X replaced by ``X1=2, X2=2`` (the same devices in the same order),
            the arrays' ``X`` read as ``X1, X2``, so that a strategy may move data over part of X,
            as XLA's partitioner can; with ``routes='xla'``, XLA's orders are those of ``mesh``.

    Raises:
        PlanError: a requested output no strategy can produce (with the reason).
        UnknownAxisError: an operand names an axis the mesh lacks.
        DivisibilityError: a dim size its shards do not divide.
        ShapeError: sizes that are not positive integers, or for dims no operand has.
        UnknownHardwareError: a chip name not in the catalogue.
    """
    every = (routes == "xla") if all is None else bool(all)
    m_ = matmul(mm) if isinstance(mm, str) else mm
    hw = lookup_hardware(hardware) if hardware is not None else None
    arrays = [m_.lhs, m_.rhs] + ([m_.out] if m_.out is not None else [])
    mesh_ = resolve_mesh(mesh, [a for arr in arrays for a in (*arr.axes, *sorted(arr.unreduced))], hw)
    parts: tuple[AxisSplit, ...] = ()
    if split is not None:
        if partitioned_axes is None:
            partitioned_axes = len(mesh_.axes)
        taken = [*m_.dims, *(arr.name for arr in arrays if arr.name)]
        mesh_, parts = split_mesh(mesh_, split, taken=taken)
        m_ = Matmul(*(split_array(arr, parts) for arr in arrays))  # type: ignore[arg-type]
        arrays = [m_.lhs, m_.rhs] + ([m_.out] if m_.out is not None else [])
    context = str(m_)
    sizes = resolve_shape(shape, m_.dims, context=context)
    for arr in arrays:
        check_on_mesh(arr, mesh_, sizes)
    env = CostEnv(mesh_, sizes, dtype, hw, constants, model, comm_overlap)
    targets = (m_.out,) if m_.out is not None else natural_outputs(m_)
    if routes not in ("standard", "xla"):
        raise PlanError(
            say("routes must be 'standard' or 'xla', not {value}", value=repr(routes)),
            hint=say("use routes={value}", value="'standard'"),
        )
    written = partitioned_axes if partitioned_axes is not None else len(mesh_.axes)
    # a refined mesh (more axes than XLA partitioned for) keeps the orders of neither: see _wide
    wide = _wide(routes, written, m_) and len(mesh_.axes) == written
    source = Enumeration(m_, env, targets, overlap, routes == "xla", wide=wide)
    source.check_size(every)
    natural = source.natural()
    if natural is None:
        raise PlanError(
            say("no strategy computes {target}", target=context),
            hint=say("the requested output may need partial sums the product cannot produce"),
        )
    counted: list[tuple[str, int]] = []
    if every:
        listed: Sequence[Strategy] = source.listing()
        reasons: tuple[Reason, ...] = ()
        counted.append(("valid", len(listed)))
    else:
        kept, reasons_list, counted = source.winners()
        if not any(s == natural for s in kept):
            kept.append(natural)
            reasons_list.append(Reason("natural"))
        order = sorted(range(len(kept)), key=lambda i: _sort_key(kept[i], env.numeric))
        listed = tuple(kept[i] for i in order)
        reasons = tuple(reasons_list[i] for i in order)
    assumptions = [say("model {model}: {description}", model=env.model, description=MODELS[env.model])]
    assumptions += [say("axis {description}", description=a.describe()) for a in mesh_.axes]
    assumptions += [
        say("mesh axis {axis} used in parts {parts}, major first, the same devices in the same order",
            axis=s.axis, parts=", ".join(s.names))
        for s in parts
    ]  # fmt: skip
    latency = env.costing.latency_model
    assumptions.append(say("latency {model}: {description}", model=latency, description=LATENCY_MODELS[latency]))
    if hw is not None:
        assumptions.append(say("hardware {label}", label=hw.label))
        for symbol in sorted(env.costing.constants - set(env.values), key=str):
            assumptions.append(
                say("{chip} has no figure for {symbol}: the formulas keep it", chip=hw.label, symbol=str(symbol))
            )
    assumptions.append(
        say("time = max(T_math, T_comms) (communication overlapped with compute)")
        if overlap
        else say("time = T_math + T_comms (no overlap)")
    )
    assumptions.append(say("T_comms: {description}", description=COMM_OVERLAPS[env.comm_overlap]))
    assumptions.append(say("peak memory: the operands stay resident; each step needs its input and output at once"))
    if not mesh_.is_numeric:
        assumptions.append(
            say(
                "symbolic formulas assume every axis a collective runs over has at least 2 devices "
                "(over an axis of size 1 nothing moves)"
            )
        )
        assumptions.append(
            say(
                "a collective-permute that moves a dim's sharding onto other axes assumes their shard count is a "
                "multiple of the old one's"
            )
        )
    if not every:
        assumptions.append(
            say(
                "listed: the strategies that can win somewhere (and the chapter's rule); all=True lists every valid one"
            )
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
        strategies=listed,
        numeric=env.numeric,
        assumptions=tuple(assumptions),
        comm_overlap=env.comm_overlap,
        reasons=reasons,
        counted=tuple(counted),
        complete=every,
        split=parts,
        source=source,
        natural_strategy=natural,
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
    a lower bound on their time until that bound exceeds the best total found; symbolic costs fall
    back to ``plan(...).best``.

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
            found = _straight(m_, env, overlap)
            if found is not None:
                return found
            wide = _wide(routes, len(mesh_.axes), m_)
            source = Enumeration(m_, env, (m_.out,), overlap, routes == "xla", wide)
            source.check_size(False)
            fastest = source.fastest()
            if fastest is not None:
                return fastest
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


# -- enumerating, pruning ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Product:
    """One compute sharding, with the local product it leads to (a strategy is one of these and a
    route for each of its three legs)."""

    index: int  # the position of its first compute sharding in the enumeration
    sharding: tuple[tuple[str, str | None], ...]
    lhs_c: Array
    rhs_c: Array
    target: Array
    local_out: Array
    flops: Value
    compute_time: Value

    @property
    def order(self) -> tuple:
        return _order_of(self.sharding)


@dataclass(frozen=True, slots=True)
class _Route:
    """A costed route of one leg: its position among :func:`reshard_routes`' routes and its costs."""

    index: int
    leg: Leg
    needs: frozenset[tuple[str, tuple[str, ...]]]

    @property
    def links(self) -> frozenset[str]:
        return frozenset(r for r, _ in self.leg.loads)

    @property
    def collectives(self) -> int:
        return sum(1 for s in self.leg.steps if s.is_communication)

    @property
    def sliced(self) -> int:
        return sum(1 for s in self.leg.steps if not s.is_communication)


class Enumeration:
    """Every valid strategy of one plan, enumerated on demand, and the searches that keep only those
    that can win.

    A strategy is a compute sharding (:class:`_Product`) and a route for each leg; its costs are
    worked out in ``costs`` (the plan's own numbers, or for symbolic plans the sums of monomials of a
    :class:`Probe`), and :class:`Strategy` objects are built, with SymPy formulas, only for the
    strategies a plan lists or a caller reads.
    """

    def __init__(
        self, mm: Matmul, env: CostEnv, targets: Sequence[Array], overlap: bool, xla: bool, wide: bool = False
    ) -> None:
        self.mm = mm
        self.env = env
        self.targets = tuple(targets)
        self.overlap = overlap
        self.xla = xla
        self.wide = wide and xla  # XLA's further orders on a mesh of three axes (see reshard_routes)
        self.costs: CostEnv = env if env.numeric else Probe(env)
        self.pruning = Builder(self.costs, overlap, xla, self.wide)
        self.building = self.pruning if env.numeric else Builder(env, overlap, xla, self.wide)
        self.choices = _choices(mm, env)
        self.names = [a for a, _ in self.choices]
        self._products: dict[bool, list[_Product]] = {}
        self._routes: dict[tuple[Array, Array, str], tuple[_Route, ...]] = {}
        self._needs: dict[Array, frozenset[tuple[str, tuple[str, ...]]]] = {}
        self._plain: dict[tuple[Array, Array, str], tuple[tuple[int, tuple[CollectiveExpr, ...]], ...]] = {}

    # -- compute shardings
    def shardings(self, symmetric: bool = False) -> int:
        """How many compute shardings :meth:`products` walks (before the equal ones are dropped), counted
        without walking them: one choice per mesh axis, each set of interchangeable axes counted once per
        multiset of choices (``symmetric``), for each output and each order of axes."""
        options = [opts for _, opts in self.choices]
        classes = _interchangeable(self.mm, self.env, self.targets) if symmetric else []
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

    def products(self, symmetric: bool = False) -> list[_Product]:
        """The valid compute shardings, in the enumeration's order; with ``symmetric``, one of each set
        that only swaps interchangeable idle axes (same size and links, named by no array), the one the
        ranking puts first: their strategies cost exactly the same."""
        found = self._products.get(symmetric)
        if found is not None:
            return found
        mm, env = self.mm, self.env
        names = self.names
        options = [opts for _, opts in self.choices]
        classes = _interchangeable(mm, env, self.targets) if symmetric else []
        mine_l = frozenset(mm.lhs.dim_names) | {KEEP}
        mine_r = frozenset(mm.rhs.dim_names) | {KEEP}
        out: list[_Product] = []
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
            for combo in _combos(options, classes):
                index = (o * len(self.targets) + number) * radix + _position(options, combo)
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
                local_out, flops, compute_time = prep
                if not (env.fits(lhs_c) and env.fits(rhs_c) and env.fits(local_out)):
                    continue
                sharding = tuple(zip(names, combo, strict=True))
                out.append(_Product(index, sharding, lhs_c, rhs_c, target, local_out, flops, compute_time))
        self._products[symmetric] = out
        return out

    # -- legs
    def needs(self, array: Array) -> frozenset[tuple[str, tuple[str, ...]]]:
        found = self._needs.get(array)
        if found is None:
            found = self._needs[array] = frozenset((d.name, tuple(sorted(d.axes))) for d in array.dims if d.axes)
        return found

    def routes(self, src: Array, dst: Array, role: str) -> tuple[_Route, ...]:
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
                    out.append(_Route(i, leg, needs))
            found = self._routes[key] = tuple(out)
        return found

    def legs(self, p: _Product) -> tuple[tuple[_Route, ...], tuple[_Route, ...], tuple[_Route, ...]]:
        mm = self.mm
        return (
            self.routes(mm.lhs, p.lhs_c, "lhs"),
            self.routes(mm.rhs, p.rhs_c, "rhs"),
            self.routes(p.local_out, p.target, "out"),
        )

    # -- strategies
    def legs_of(self, p: _Product, picks: tuple[int, int, int]) -> tuple[Leg, Leg, Leg]:
        """The legs (left operand's, right operand's, result's) of the strategy :meth:`build` builds."""
        mm, b = self.mm, self.building
        return (
            b.routes(mm.lhs, p.lhs_c, "lhs")[picks[0]],
            b.routes(mm.rhs, p.rhs_c, "rhs")[picks[1]],
            b.routes(p.local_out, p.target, "out")[picks[2]],
        )

    def flops_of(self, p: _Product) -> Value:
        """The FLOPs per device of compute sharding ``p`` (its strategies' ``raw_flops``)."""
        return p.flops if self.building is self.pruning else self.building.env.flops(p.lhs_c, p.rhs_c)

    def build(self, p: _Product, picks: tuple[int, int, int]) -> Strategy:
        """The strategy of compute sharding ``p`` with the routes numbered ``picks`` (SymPy formulas when
        the plan is symbolic)."""
        return self._assemble(p, self.legs_of(p, picks))

    def _assemble(self, p: _Product, legs: tuple[Leg, Leg, Leg]) -> Strategy:
        """The strategy of compute sharding ``p`` with these legs (left operand's, right operand's, result's)."""
        mm, b = self.mm, self.building
        if b is self.pruning:
            flops, compute_time = p.flops, p.compute_time
        else:
            flops = b.env.flops(p.lhs_c, p.rhs_c)
            compute_time = exact_ratio(flops, b.env.flops_rate)
        product = PlanStep("matmul", LocalMatmul(p.lhs_c, p.rhs_c, p.local_out), None, flops)
        return b.build(mm.lhs, mm.rhs, p.target, p.sharding, product, compute_time, p.local_out, *legs)

    def recipes(self) -> Iterator[tuple[_Product, tuple[int, int, int]]]:
        """Every valid strategy as (compute sharding, routes), in the enumeration's order."""
        for p in self.products():
            ls, rs, os_ = self.legs(p)
            for a in ls:
                for b in rs:
                    for c in os_:
                        yield p, (a.index, b.index, c.index)

    def matching(
        self, signature: Callable[[tuple[CollectiveExpr, ...]], tuple], target: tuple, deadline: float | None = None
    ) -> Iterator[tuple[_Product, tuple[int, int, int]]]:
        """The valid strategies whose legs' steps, read by ``signature`` (a sorted tuple of hashable
        items per route), add up to ``target`` (a sorted tuple), in the enumeration's order, found
        without listing the rest: each leg keeps only the routes whose items are among the target's,
        and the result's route is looked up by what the operands' legs leave over. A search for one known
        set of collectives (XLA's plan) through more strategies than a listing can sort. Past ``deadline``
        it raises :class:`~symshard.errors.TimeLimitError` (:func:`~symshard.routes.check_deadline`)."""
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
    ) -> Iterator[tuple[_Product, tuple[tuple[CollectiveExpr, ...], ...]]]:
        """The strategies over the enumeration's compute shardings whose legs are any routes of exact
        steps (:func:`~symshard.routes.every_route`, not only the planner's) with items, read by ``item`` (None for a free
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

    def build_routed(self, p: _Product, routes: tuple[tuple[CollectiveExpr, ...], ...]) -> Strategy:
        """The strategy of compute sharding ``p`` whose legs take these routes (from :meth:`composed`)."""
        mm, env = self.mm, self.building.env
        ends = ((mm.lhs, p.lhs_c, "lhs"), (mm.rhs, p.rhs_c, "rhs"), (p.local_out, p.target, "out"))
        pre_l, pre_r, post = (
            _leg(env, src, dst, role, role != "out", steps)
            for (src, dst, role), steps in zip(ends, routes, strict=True)
        )
        return self._assemble(p, (pre_l, pre_r, post))

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
        matches = []
        for p in self.products():
            legs = (self.plain(mm.lhs, p.lhs_c), self.plain(mm.rhs, p.rhs_c), self.plain(p.local_out, p.target))
            for a, ra in legs[0]:
                for b, rb in legs[1]:
                    for c, rc in legs[2]:
                        labels = [_label(s, "lhs") for s in ra] + [_label(s, "rhs") for s in rb] + ["matmul"]
                        labels += [_label(s, "out") for s in rc]
                        if " → ".join(labels) == name:
                            matches.append(self.build(p, (a, b, c)))
        return min(matches, key=lambda s: _sort_key(s, self.env.numeric)) if matches else None

    def listing(self) -> StrategyList:
        """Every valid strategy, sorted as a plan lists them, built when read."""
        return StrategyList(self, self._ranked() if self.env.numeric else self._sorted_exactly())

    def _sorted_exactly(self) -> Sequence[tuple[_Product, tuple[int, int, int]]]:
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
                key: tuple = (_combine(p.compute_time, comm, self.overlap), comm, memory, steps, p.order, n)
            else:
                collectives = a.collectives + b.collectives + c.collectives
                shards = sum(1 for _, x in p.sharding if x is not None)
                key = (collectives, -shards, steps, p.order, n)
            keyed.append((key, p, picks))
        keyed.sort(key=lambda k: k[0])
        return tuple((p, picks) for _, p, picks in keyed)

    def _ranked(self) -> Sequence[tuple[_Product, tuple[int, int, int]]]:
        """With numbers: every valid strategy in the plan's order (time, T_comms, memory, steps, the
        sharding's order, then the enumeration's), with the keys :meth:`CostEnv.join` and :func:`peak_memory`
        give, worked out once per pair of operand legs and then per result leg.

        Times and bytes are exact fractions; each is scaled by the common denominator of its kind to an
        integer (the same order, the same ties), and a strategy's whole key is packed into one integer, the
        fields side by side in widths their bounds fix, its number in the enumeration last: a million
        strategies sort as a million integers, and only their numbers are kept (:class:`_Listed`)."""
        env, mm, overlap = self.env, self.mm, self.overlap
        serial = env.comm_overlap == "none"
        products = [(p, self.legs(p)) for p in self.products()]
        routes = {id(route): route for _, legs in products for leg in legs for route in leg}
        times = [p.compute_time for p, _ in products]
        sizes = [env.bytes(mm.lhs), env.bytes(mm.rhs)] + [env.bytes(p.local_out) for p, _ in products]
        for route in routes.values():
            times += [route.leg.comm, *(v for _, v in route.leg.loads)]
            sizes += [route.leg.peak, route.leg.final]
        if not all(isinstance(v, int | Fraction) for v in (*times, *sizes)):
            return self._sorted_exactly()
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
        operands = in_bytes(env.bytes(mm.lhs)) + in_bytes(env.bytes(mm.rhs))
        # each field's width: T_comms is at most the legs' own times added up (a link is busy for at most
        # every leg's whole time), the peak at most every leg's peak and result on top of each other
        orders = {o: i for i, o in enumerate(sorted({p.order for p, _ in products}))}
        count = most_time = most_bytes = most_steps = 0
        for p, legs in products:
            count += math.prod(len(leg) for leg in legs)
            fields = [[scaled[id(r)] for r in leg] for leg in legs]
            comm = sum(max((f[0] for f in leg), default=0) for leg in fields)
            most_time = max(most_time, in_time(p.compute_time) + comm)
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
            compute = in_time(p.compute_time)
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
        return _Listed([(p, *legs) for p, legs in products], starts, numbers)

    # -- the chapter's rule
    def natural(self) -> Strategy | None:
        """:attr:`Plan.natural`: the operands used as they are (fewest slices of an input), then the
        fewest steps and collectives; ties go to the strategy the plan would list first."""
        mm = self.mm

        def counts(steps: tuple[CollectiveExpr, ...]) -> tuple[int, int, int]:
            sliced = sum(1 for s in steps if isinstance(s.op, DynamicSlice))
            return sliced, len(steps), len(steps) - sliced

        best_key: tuple | None = None
        tied: list[tuple[_Product, tuple[int, int, int]]] = []
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
                tied, key=lambda t: (-sum(1 for _, x in t[0].sharding if x is not None), _order_of(t[0].sharding))
            )
            return self.build(p, picks)
        built = [self.build(p, picks) for p, picks in tied]
        return min(built, key=lambda s: _sort_key(s, self.env.numeric))

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
        """The fastest strategy (ties as :func:`sort_strategies` breaks them), by branch and bound."""
        front = self._front(only_best=True)
        if not front:
            return None
        _, _, p, picks = front[0]
        return self.build(p, picks)

    def _front(self, only_best: bool = False) -> list[tuple[tuple, Value, _Product, tuple[int, int, int]]]:
        """With numbers: the strategies no other beats in the ranking without needing more memory (the
        fastest under some memory limit), fastest first; a branch and bound over the compute shardings
        on lower bounds of their ranking key and memory (FLOPs time, each leg's latency floor, then its
        fastest route), so that most are never costed."""
        mm, env = self.mm, self.env
        overlap = self.overlap
        cheap, lower = env.hop_floor, env.bound
        front: list[tuple[tuple, Value, _Product, tuple[int, int, int]]] = []
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

        def offer(key: tuple, memory: Value, p: _Product, picks: tuple[int, int, int]) -> None:
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
            heap.append(((p.compute_time, 0, 0, 0, p.order, p.index), 0, p))
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
                memory: Value = env.bytes(mm.lhs) + env.bytes(mm.rhs)
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
            refined = (_combine(p.compute_time, low, overlap), low, memory, steps, bound[4], bound[5])
            heapq.heappush(heap, (refined, stage + 1, p))
        return front

    def _cost_product(self, p: _Product, offer) -> None:
        """Offer every strategy of ``p`` to ``offer`` (ranking key, memory), routes that another route of
        the same leg beats in every way left out."""
        mm, builder = self.mm, self.pruning
        legs = [_prune_numeric(r, self.env.comm_overlap) for r in self.legs(p)]
        for a in legs[0]:
            for b in legs[1]:
                for c in legs[2]:
                    comm = self.costs.join((a.leg, b.leg, c.leg))
                    memory = builder.memory(mm.lhs, mm.rhs, a.leg, b.leg, c.leg, p.local_out)
                    steps = len(a.leg.steps) + len(b.leg.steps) + 1 + len(c.leg.steps)
                    picks = (a.index, b.index, c.index)
                    key = (_combine(p.compute_time, comm, self.overlap), comm, memory, steps, p.order, p.index, picks)
                    offer(key, memory, p, picks)

    def _undominated(self) -> tuple[list[Strategy], list[Reason], list[tuple[str, int]]]:
        """With symbols: the strategies no other valid strategy dominates (FLOPs, communication time and
        memory each at least its, everywhere both are valid), each with a sample point where it is the
        fastest when one is found."""
        mm, costs, builder = self.mm, self.costs, self.pruning
        base = self.needs(mm.lhs) | self.needs(mm.rhs) | frozenset().union(*(self.needs(t) for t in self.targets))
        domains = _Domains(self.env, base)
        valid = 0
        candidates: list[_Candidate] = []
        for p in self.products(symmetric=self.env.mesh.is_numeric):
            raw = self.legs(p)
            valid += len(raw[0]) * len(raw[1]) * len(raw[2])
            legs = [_prune_symbolic(r, self.env.comm_overlap, domains) for r in raw]
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
                        metrics = (_cost(p.compute_time), _cost(comm), _cost(memory))
                        candidates.append(_Candidate(p, (a.index, b.index, c.index), metrics, needs, order))
        kept = _pareto(candidates, domains)
        strategies = [self.build(c.product, c.picks) for c in kept]
        reasons = _witnesses(kept, domains, self.overlap)
        counted = [("valid", valid), ("dominated", valid - len(kept))]
        return strategies, reasons, counted


class _Listed(Sequence):
    """Strategies as (compute sharding, picks) in a plan's order, kept as their numbers in the enumeration
    (8 bytes each): a number is a compute sharding's first number plus its routes' positions, the left
    operand's, then the right's, then the result's, in mixed radix."""

    def __init__(
        self,
        products: list[tuple[_Product, tuple[_Route, ...], tuple[_Route, ...], tuple[_Route, ...]]],
        starts: list[int],
        numbers: array,
    ) -> None:
        self._products = products
        self._starts = starts
        self._numbers = numbers

    def __len__(self) -> int:
        return len(self._numbers)

    def routes(self, i: int) -> tuple[_Product, _Route, _Route, _Route]:
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

    def __init__(self, source: Enumeration, recipes: Sequence[tuple[_Product, tuple[int, int, int]]]) -> None:
        self._source = source
        self._recipes = recipes
        self._built: dict[int, Strategy] = {}

    def __len__(self) -> int:
        return len(self._recipes)

    def legs(self, i: int) -> tuple[Leg, Leg, Leg]:
        """Strategy ``i``'s resharding legs (left operand's, right operand's, result's), read without
        building the strategy: what a search through every strategy's collectives needs."""
        recipes = self._recipes
        if isinstance(recipes, _Listed):  # its routes at hand: the same legs, without looking them up
            _, a, b, c = recipes.routes(i)
            return a.leg, b.leg, c.leg
        p, picks = recipes[i]
        return self._source.legs_of(p, picks)

    def combined(self, of: Callable[[Leg], tuple]) -> list[tuple]:
        """For every strategy, in order, the sorted items that ``of`` reads from its three legs together
        (e.g. the signatures of their collectives): what a search through every strategy's collectives
        needs, without building one."""
        recipes = self._recipes
        if isinstance(recipes, _Listed):
            return recipes.combined(of)
        return [tuple(sorted(item for leg in self.legs(i) for item in of(leg))) for i in range(len(self))]

    def flops(self, i: int) -> Value:
        """Strategy ``i``'s FLOPs per device (its ``raw_flops``), without building it."""
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


def _cost(value: Value) -> Maximum | Lazy:
    """A probe cost as compared: sums of monomials, kept lazy when they are (see :class:`Lazy`)."""
    return value if isinstance(value, (Maximum, Lazy)) else from_expr(value)


def _combine(compute_time: Value, comm: Value, overlap: bool) -> Value:
    """A strategy's time from its parts, numbers only (``_max`` without its checks)."""
    if overlap:
        return comm if comm > compute_time else compute_time
    return compute_time + comm


def _sort_key(s: Strategy, numeric: bool) -> tuple:
    if numeric:
        return _rank_key(s)
    return (len(s.collectives), -_shards_used(s), len(s.steps), _order(s))


def _combos(options: list[list[str | None]], classes: list[list[int]]) -> list[tuple]:
    """Every compute sharding (one choice per axis, in ``itertools.product`` order); with ``classes`` of
    interchangeable axes (positions), only those whose choices along each class never decrease in the
    ranking's order (of each set of equivalent shardings, the one the plan would list first)."""
    if not classes:
        return list(itertools.product(*options))
    n = len(options)
    in_class = {i for members in classes for i in members}
    free = [i for i in range(n) if i not in in_class]
    per_class = [
        [
            (members, cs)
            for cs in itertools.combinations_with_replacement(
                sorted(options[members[0]], key=lambda c: c or ""), len(members)
            )
        ]
        for members in classes
    ]
    out = []
    for free_choice in itertools.product(*[options[i] for i in free]):
        for picked in itertools.product(*per_class):
            combo: list[str | None] = [None] * n
            for i, c in zip(free, free_choice, strict=True):
                combo[i] = c
            for members, cs in picked:
                for i, c in zip(members, cs, strict=True):
                    combo[i] = c
            out.append(tuple(combo))
    position = [{c: k for k, c in enumerate(opts)} for opts in options]
    out.sort(key=lambda combo: [position[i][c] for i, c in enumerate(combo)])
    return out


def _position(options: list[list[str | None]], combo: tuple) -> int:
    """Where ``combo`` comes in ``itertools.product(*options)``."""
    index = 0
    for opts, c in zip(options, combo, strict=True):
        index = index * len(opts) + opts.index(c)
    return index


def _interchangeable(mm: Matmul, env: CostEnv, targets: Sequence[Array]) -> list[list[int]]:
    """Positions of mesh axes that can be swapped without changing any cost: numeric axes of one size
    whose links are the same up to their names (their own ICI links, or the same shared level), named
    by no operand or output."""
    named: set[str] = set()
    for arr in (mm.lhs, mm.rhs, *targets):
        named |= set(arr.axes) | set(arr.unreduced)
    if not env.mesh.is_numeric:
        return []
    groups: dict[tuple, list[int]] = {}
    for i, a in enumerate(env.mesh.names):
        if a in named or env.axis[a] == 1:
            continue
        links = env.costing.links(a)
        signature = tuple(
            (lk.size, lk.topology, lk.w, lk.fabric, lk.latency, "own" if lk.resource == f"ici:{a}" else lk.resource)
            for lk in links
        )
        groups.setdefault(signature, []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _prune_numeric(routes: tuple[_Route, ...], comm_overlap: str) -> list[_Route]:
    """The routes of one leg that no other route beats in every way: communication, the links it keeps
    busy, peak bytes and steps (and, all equal, its place in the order)."""

    def beats(r: _Route, s: _Route) -> bool:
        a = (r.leg.comm, r.leg.peak, len(r.leg.steps))
        b = (s.leg.comm, s.leg.peak, len(s.leg.steps))
        if not all(x <= y for x, y in zip(a, b, strict=True)):
            return False
        if comm_overlap != "none" and not r.links <= s.links:
            return False
        return a != b or r.links != s.links or r.index < s.index

    return [s for s in routes if not any(r is not s and beats(r, s) for r in routes)]


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A symbolic strategy before it is built: its costs as sums of monomials and what it needs to divide."""

    product: _Product
    picks: tuple[int, int, int]
    metrics: tuple[Maximum | Lazy, Maximum | Lazy, Maximum | Lazy]  # compute time, communication time, memory
    needs: frozenset[tuple[str, tuple[str, ...]]]
    order: tuple


class _Domains:
    """The domains symbolic costs are compared on: where a strategy is valid (every axis at least 2
    devices; each dim a multiple of, so at least, the devices that shard it), and the sample points
    that rule most comparisons out before they are proved."""

    def __init__(self, env: CostEnv, base: frozenset[tuple[str, tuple[str, ...]]]) -> None:
        self.env = env
        self.base = base
        self._cache: dict[frozenset, Domain] = {}
        self._by_content: dict[tuple[frozenset, frozenset], Domain] = {}
        self.axes = frozenset(as_expr(v) for v in env.axis.values() if not as_expr(v).is_number)
        self.points: list[dict[sympy.Expr, float]] = []
        self._normals: dict[tuple[str, tuple[str, ...]], tuple[str, int, frozenset[str]]] = {}

    def of(self, needs: frozenset[tuple[str, tuple[str, ...]]]) -> Domain:
        needs = needs | self.base
        found = self._cache.get(needs)
        if found is None:
            groups: dict[sympy.Expr, list[frozenset[sympy.Expr]]] = {}
            floors: dict[sympy.Expr, Fraction] = {}
            env = self.env
            for d, axes in needs:
                size = as_expr(env.sizes[d])
                if size.is_number:
                    continue
                symbolic = frozenset(as_expr(env.mesh.size(a)) for a in axes if not as_expr(env.mesh.size(a)).is_number)
                numeric = math.prod(int(as_expr(env.mesh.size(a))) for a in axes if as_expr(env.mesh.size(a)).is_number)
                if symbolic:
                    groups.setdefault(size, []).append(symbolic)
                floor = Fraction(numeric * 2 ** len(symbolic))
                floors[size] = max(floors.get(size, Fraction(1)), floor)
            # many sets of needs bound the same dims alike: they share one domain, and with it the
            # comparisons already proved there
            content = (frozenset((d, frozenset(gs)) for d, gs in groups.items()), frozenset(floors.items()))
            found = self._by_content.get(content)
            if found is None:
                found = self._by_content[content] = Domain.of(self.axes, groups, floors)
            self._cache[needs] = found
        return found

    def _normal(self, need: tuple[str, tuple[str, ...]]) -> tuple[str, int, frozenset[str]]:
        """A need as (dim, product of its numeric axes' sizes, its symbolic axes)."""
        found = self._normals.get(need)
        if found is None:
            d, axes = need
            mesh = self.env.mesh
            sizes = [as_expr(mesh.size(a)) for a in axes]
            known = math.prod(int(n) for n in sizes if n.is_number)
            found = self._normals[need] = (
                d,
                known,
                frozenset(a for a, n in zip(axes, sizes, strict=True) if not n.is_number),
            )
        return found

    def implied(self, small: frozenset, big: frozenset) -> bool:
        """Whether every divisibility in ``small`` follows from those in ``big`` (and the given arrays'):
        ``H`` a multiple of the devices of some axes follows from ``H`` a multiple of those of more axes,
        or of as many devices (numeric axes)."""
        if small <= big or small <= self.base:
            return True
        big_normal = [self._normal(x) for x in big | self.base]
        for need in small:
            d, known, symbolic = self._normal(need)
            if not any(e == d and more % known == 0 and symbolic <= other for e, more, other in big_normal):
                return False
        return True

    def sample(self, atoms: set[sympy.Expr], n: int) -> list[dict[sympy.Expr, float]]:
        """``n`` sample points (deterministic) over ``atoms``: dims and axes of realistic sizes, constants
        over the range of the hardware catalogue."""
        import random

        rng = random.Random(17)
        ranges = constant_ranges()
        atoms_sorted = sorted(atoms, key=str)
        out = []
        for _ in range(n):
            point: dict[sympy.Expr, float] = {}
            for a in atoms_sorted:
                if a in self.axes:
                    point[a] = float(2 ** rng.randint(1, 6))
                elif a.is_Symbol and a.is_integer:
                    point[a] = float(2 ** rng.randint(7, 17))
                elif a in ranges:
                    lo, hi = ranges[a]
                    point[a] = log_uniform(rng, lo, hi)
                else:
                    point[a] = log_uniform(rng, 1e-3, 1e3)
            out.append(point)
        return out


def _prune_symbolic(routes: tuple[_Route, ...], comm_overlap: str, domains: _Domains) -> list[_Route]:
    """The routes of one leg that no other route is at least as good as everywhere (communication, links,
    peak bytes, and valid wherever it is); of equal ones, the one with fewest collectives and steps."""
    costs = [(_cost(r.leg.comm), _cost(r.leg.peak)) for r in routes]
    kept: list[_Route] = []
    for i, s in enumerate(routes):
        dom = domains.of(s.needs)
        dropped = False
        for j, r in enumerate(routes):
            if i == j or not domains.implied(r.needs, s.needs):
                continue
            if comm_overlap != "none" and not r.links <= s.links:
                continue
            if less_equal(costs[j][0], costs[i][0], dom) and less_equal(costs[j][1], costs[i][1], dom):
                tie = (
                    less_equal(costs[i][0], costs[j][0], dom)
                    and less_equal(costs[i][1], costs[j][1], dom)
                    and r.links == s.links
                    and domains.implied(s.needs, r.needs)
                )
                if not tie or (r.collectives, len(r.leg.steps), r.index) < (s.collectives, len(s.leg.steps), s.index):
                    dropped = True
                    break
        if not dropped:
            kept.append(s)
    return kept


def _pareto(candidates: list[_Candidate], domains: _Domains) -> list[_Candidate]:
    """The candidates no other candidate dominates (see :meth:`Enumeration._undominated`): candidates are
    taken in order of their costs at sample points (a dominating one is never later), each compared, at
    the sample points first and then exactly, with those kept so far."""
    atoms: set[sympy.Expr] = set()
    for c in candidates:
        for m in c.metrics:
            atoms |= m.atoms
    points = Samples(domains.sample(atoms, 6))
    at = values_at([m for c in candidates for m in c.metrics], points)  # legs shared by many, valued once
    values = [tuple(at[3 * i + k][p] for p in range(len(points)) for k in range(3)) for i in range(len(candidates))]
    scale = [max(v[k] for v in values) or 1.0 for k in range(len(values[0]))] if values else []
    order = sorted(
        range(len(candidates)),
        key=lambda i: (sum(v / s for v, s in zip(values[i], scale, strict=True)), candidates[i].order),
    )
    kept: list[int] = []

    def below(i: int, j: int) -> bool:  # candidate i at least as good as j everywhere j is valid
        vi, vj = values[i], values[j]
        if any(a > b * (1 + 1e-9) + 1e-300 for a, b in zip(vi, vj, strict=True)):
            return False
        ci, cj = candidates[i], candidates[j]
        if not domains.implied(ci.needs, cj.needs):
            return False
        dom = domains.of(cj.needs)
        # the single-sum metrics (FLOPs time, memory) first: their proofs are cheap and fail fast
        return all(less_equal(ci.metrics[k], cj.metrics[k], dom, points) for k in (0, 2, 1))

    for j in order:
        if any(below(i, j) for i in kept):
            continue
        kept = [i for i in kept if not (below(j, i) and not below(i, j))]
        kept.append(j)
    return [candidates[i] for i in sorted(kept, key=lambda i: candidates[i].order)]


def _witnesses(kept: list[_Candidate], domains: _Domains, overlap: bool) -> list[Reason]:
    """For each kept candidate, a sample point where it is the fastest (``fastest_at``), else
    ``undominated``."""
    atoms: set[sympy.Expr] = set()
    for c in kept:
        for m in c.metrics[:2]:
            atoms |= m.atoms
    points = domains.sample(atoms, 48)
    found: dict[int, dict[sympy.Expr, float]] = {}
    for pt in points:
        times = []
        for c in kept:
            math_, comm = c.metrics[0].value(pt), c.metrics[1].value(pt)
            times.append(max(math_, comm) if overlap else math_ + comm)
        best = min(times)
        winners = [i for i, t in enumerate(times) if t <= best * (1 + 1e-9)]
        if len(winners) == 1 and winners[0] not in found:
            found[winners[0]] = pt
    out = []
    for i in range(len(kept)):
        witness = found.get(i)
        if witness is None:
            out.append(Reason("undominated"))
        else:
            items = sorted(witness.items(), key=lambda kv: str(kv[0]))
            shown = tuple((str(a), _round(v)) for a, v in items if a.is_Symbol)
            out.append(Reason("fastest_at", (("point", shown),)))
    return out


def _round(v: float) -> object:
    """A sample value as it is shown: a whole number when it is one, else three significant digits."""
    if v == int(v) and abs(v) < 2**53:
        return int(v)
    return float(f"{v:.3g}")


def _largest_groups(arrays: Iterable[Array]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(dim, axes)`` for every dim some array shards, keeping only each dim's largest groups of axes."""
    groups: dict[str, list[tuple[str, ...]]] = {}
    for arr in arrays:
        for d in arr.dims:
            if d.axes and not any(set(d.axes) == set(g) for g in groups.get(d.name, [])):
                groups.setdefault(d.name, []).append(d.axes)
    return tuple(
        (name, axes)
        for name in sorted(groups)
        for axes in groups[name]
        if not any(set(axes) < set(other) for other in groups[name])
    )


def _label(step: CollectiveExpr, role: str) -> str:
    """A step's short name, as :meth:`PlanStep.label` gives it."""
    return f"{step.op}({step.operand.name or role})"


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

    def __init__(self, env: CostEnv, overlap: bool, xla: bool = False, wide: bool = False) -> None:
        self.env = env
        self.overlap = overlap
        self.xla = xla
        self.wide = wide
        self.legs: dict[tuple[Array, Array, str], Leg] = {}
        self.route_legs: dict[tuple[Array, Array, str], tuple[Leg, ...]] = {}
        self.kept: dict[tuple[Array, Array, str], tuple[_Route, ...]] = {}
        mesh = env.mesh
        numeric = all(as_expr(a.size).is_number for a in mesh.axes)
        self.sizes = tuple(sorted((a.name, int(a.size)) for a in mesh.axes)) if numeric else None

    def leg(self, src: Array, dst: Array, role: str) -> Leg:
        key = (src, dst, role)
        if key not in self.legs:
            self.legs[key] = _leg(self.env, src, dst, role, resident=role != "out")
        return self.legs[key]

    def routes(self, src: Array, dst: Array, role: str) -> tuple[Leg, ...]:
        """Every costed route from ``src`` to ``dst`` (:func:`reshard_routes`), the plain one first."""
        key = (src, dst, role)
        found = self.route_legs.get(key)
        if found is None:
            alts = reshard_routes(src, dst, self.sizes, self.xla, self.wide)
            found = (self.leg(src, dst, role), *(_leg(self.env, src, dst, role, role != "out", r) for r in alts[1:]))
            self.route_legs[key] = found
        return found

    def kept_routes(self, src: Array, dst: Array, role: str) -> tuple[_Route, ...]:
        """The routes of one leg whose every array divides evenly, without those another route of the leg
        beats in every way (numbers only: communication, links, peak bytes, steps)."""
        key = (src, dst, role)
        found = self.kept.get(key)
        if found is None:
            env = self.env
            valid = tuple(
                _Route(i, leg, frozenset())
                for i, leg in enumerate(self.routes(src, dst, role))
                if all(env.fits(st.op.output) for st in leg.steps)
            )
            found = self.kept[key] = tuple(_prune_numeric(valid, env.comm_overlap))
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
        legs_l: tuple[Leg, ...]
        legs_r: tuple[Leg, ...]
        legs_o: tuple[Leg, ...]
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
        return local_out, flops, exact_ratio(flops, self.env.flops_rate)

    def memory(self, lhs: Array, rhs: Array, pre_l: Leg, pre_r: Leg, post: Leg, local_out: Array) -> Value:
        """Peak bytes per device of the strategy made of these legs."""
        env = self.env
        return peak_memory(env.bytes(lhs), env.bytes(rhs), env.bytes(local_out), pre_l, pre_r, post, env.largest)

    def build(
        self,
        lhs: Array,
        rhs: Array,
        target: Array,
        sharding: tuple[tuple[str, str | None], ...],
        product: PlanStep,
        compute_time: Value,
        local_out: Array,
        pre_l: Leg,
        pre_r: Leg,
        post: Leg,
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


def peak_memory(lhs: Value, rhs: Value, local_out: Value, pre_l: Leg, pre_r: Leg, post: Leg, largest) -> Value:
    """Peak bytes per device of a strategy from the bytes of its operands and local product and its legs:
    the operands stay resident; the lhs's leg, then the rhs's (the lhs's result alive), then the product
    (both results alive), then the result's leg. ``largest`` takes the largest of several values."""
    peak = largest([pre_l.peak, pre_l.final + pre_r.peak, pre_l.final + pre_r.final + local_out, post.peak])
    return lhs + rhs + peak


def _wide(routes: str, axes: int, mm: Matmul) -> bool:
    """Whether a plan lists XLA's further orders on a mesh of three axes (see :func:`reshard_routes`):
    for a 2-D matmul on such a mesh. With batch or head dims they multiply into millions of strategies
    (an attention einsum on ``X=2,Y=2,Z=2`` took 15 GB to list), so those keep XLA's other orders; so
    does a refined mesh that splits an axis of three into four (millions of strategies too)."""
    arrays = [mm.lhs, mm.rhs] + ([mm.out] if mm.out is not None else [])
    return routes == "xla" and axes == 3 and all(len(a.dims) <= 2 for a in arrays)


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

"""The costing environment: a mesh's sizes, wiring and constants, ready to cost many strategies fast.

The planner costs the same collectives, bytes and FLOPs over and over, for every compute sharding and
every route of every leg. :class:`CostEnv` holds what those costs depend on (dim and axis sizes, the
dtype, the chip's constants, the links of each axis) as the planner's raw numbers (:mod:`.rawcosts`),
caches each result, checks that an array divides evenly (:meth:`CostEnv.fits`), bounds a route's time
from below (:meth:`CostEnv.hop_floor`) and adds up a strategy's legs (:meth:`CostEnv.join`).
:class:`Probe` keeps the same costs as sums of monomials, which the planner compares to prune symbolic
strategies.

In :mod:`symshard.planning` it sits above :mod:`.rawcosts` and :mod:`.strategies` (a leg is a value),
below every module that enumerates or builds strategies.

Examples:
    >>> from symshard.machines.mesh import resolve_mesh
    >>> from symshard.notation.parser import parse_array
    >>> env = CostEnv(resolve_mesh("X=4", ["X"]), {"I": 64, "J": 8}, "bf16", None, None, "book")
    >>> env.bytes(parse_array("A[I_X, J]")), env.numeric
    (256, False)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence

import sympy

from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr
from ..algebra.monomials import Maximum, from_expr
from ..algebra.symbols import C, W_hbm
from ..costs.collectives import CollectiveExpr
from ..costs.costmodels import Costing, Timing, check_comm_overlap, check_model, join_loads, volume
from ..costs.costmodels import largest as largest_cost
from ..costs.kernels import hbm_traffic
from ..costs.placement import check_on_mesh
from ..errors import DivisibilityError
from ..machines.chips import Hardware, exact_number
from ..machines.mesh import Mesh
from ..notation.arrays import Array
from .rawcosts import Value, as_exact, exact_ratio
from .strategies import Leg

__all__ = ["CostEnv", "Probe"]


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
        hbm: bool = True,
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
        conv = (lambda v: as_exact(as_expr(v))) if self.numeric else as_expr
        self.dim = {d: conv(v) for d, v in sizes.items()}
        self.axis = {a.name: conv(a.size) for a in mesh.axes}
        self.elem = conv(dtype_bytes(self.dtype))
        self.flops_rate = conv(values.get(C, C))
        # the HBM term: kept when asked for and the chip gives W_hbm, or when the costs stay symbolic (a
        # chip or constants without W_hbm leave it out, and the plan says so)
        self.hbm = hbm and (W_hbm in values or not self.numeric)
        self.hbm_rate = conv(values.get(W_hbm, W_hbm)) if self.hbm else None
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
        axis alone pays (:meth:`~symshard.costs.costmodels.Costing.latency_floor`), and those floors add up
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
        every link it uses busy for its whole time (:func:`~symshard.costs.costmodels.tally`), at least
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
        """``T_comms`` of a strategy made of these legs (:func:`~symshard.costs.costmodels.combine` of their
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
    """How :func:`~symshard.costs.costmodels.join_loads` takes the largest link total (None: its own way)."""

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

    def elements(self, array: Array):
        """Elements per device of ``array``."""
        num: Value = 1
        den: Value = 1
        for d in array.dims:
            num = num * self.dim[d.name]
            den = den * self.group(d.axes)
        return exact_ratio(num, den)

    def sum_flops(self, src: Array, dst: Array):
        """The adds of a local sum from ``src``'s block down to ``dst``'s (see
        :class:`~symshard.notation.einsums.LocalSum`): one per element of ``src``'s block, less one per sum,
        as XLA's ``cost_analysis`` counts a ``reduce``."""
        return self.elements(src) - self.elements(dst)

    def hbm_time(self, lhs: Array, rhs: Array, out: Array):
        """``T_hbm`` of the local product ``lhs · rhs -> out``: its arrays' bytes per device, each read or written
        once in HBM (:func:`~symshard.costs.kernels.hbm_traffic`), over ``W_hbm``; 0 when the term is left out."""
        if self.hbm_rate is None:
            return 0
        return exact_ratio(hbm_traffic(self.bytes(lhs), self.bytes(rhs), self.bytes(out)), self.hbm_rate)

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
    """A :class:`CostEnv`'s costs kept as sums of monomials (:mod:`symshard.algebra.monomials`): what the planner
    compares to drop strategies that can never win, hundreds of times faster than SymPy.

    Each collective is costed once per kind and axes by :mod:`~symshard.costs.costmodels`, with its volume a
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
        self.hbm = env.hbm
        self.hbm_rate = from_expr(env.hbm_rate) if env.hbm_rate is not None else None
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

    def sum_flops(self, src: Array, dst: Array):
        # a difference of monomials: worked out as SymPy on the plan's own environment, then made monomials
        flops = self.base.sum_flops(src, dst)
        return from_expr(flops if isinstance(flops, sympy.Basic) else sympy.Integer(flops))

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

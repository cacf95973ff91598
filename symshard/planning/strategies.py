"""What a plan is made of: steps, legs and strategies with their costs, why each is listed, the plan.

These are the values the planner hands out: :func:`~symshard.planning.planner.plan` returns a
:class:`Plan` of :class:`Strategy` objects, each a sequence of :class:`PlanStep` (collectives, free
slices and the local product) with its costs kept raw (:mod:`.rawcosts`) and shown as SymPy. A
:class:`Leg` is one resharding sequence with its totals, the unit strategies are assembled from. The
order a plan lists strategies in (:func:`sort_strategies`, :func:`sort_key`) lives here too, since a
plan ranks the strategies it is asked about.

In :mod:`symshard.planning` it sits just above :mod:`.rawcosts`; every other planner module builds
these values, and the presentation (reports, HTML, the JAX bridge) reads them.

Examples:
    >>> from symshard.planning.planner import plan
    >>> s = plan("A[I, J_X] · B[J_X, K] -> C[I, K]").natural
    >>> [step.label() for step in s.steps], s.sharding
    (['matmul', 'AllReduce_X(C)'], (('X', 'J'),))
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy

from ..algebra.comparisons import less_equal
from ..algebra.domains import Domain
from ..algebra.monomials import from_expr
from ..costs.collectives import CollectiveExpr, DynamicSlice
from ..costs.costmodels import Timing, chain, combine
from ..costs.costmodels import largest as largest_cost
from ..errors import PlanError
from ..machines.chips import AttainedRates, Hardware, attained_rates
from ..machines.mesh import Mesh
from ..machines.subaxes import AxisSplit
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import Classification, LocalMatmul, LocalSum, Matmul
from .rawcosts import Value, is_number, sym

__all__ = ["Leg", "Plan", "PlanStep", "Reason", "Strategy", "order_of", "sort_key", "sort_strategies"]


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of a strategy: a collective (or free slice) on an operand or the result, or the local product."""

    role: str  # "lhs", "rhs", "matmul" or "out"
    op: CollectiveExpr | LocalMatmul | LocalSum
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
        """A short name: ``AllGather_X(A)``, ``Sum_L(A)``, ``matmul``."""
        if isinstance(self.op, LocalMatmul):
            return "matmul"
        if isinstance(self.op, LocalSum):
            return f"{self.op.label}({self.op.operand.name or self.role})"
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
    raw_hbm_time: Value = field(default=0, repr=False)
    raw_hbm_bytes: Value = field(default=0, repr=False)

    @property
    def name(self) -> str:
        """The steps' short names: ``AllGather_X(Y) → matmul``."""
        return " → ".join(s.label() for s in self.steps)

    # figures
    @property
    def flops_per_device(self) -> sympy.Expr:
        """FLOPs each device performs: the local product's and, where an operand sums dims of its own
        first, those adds."""
        return sym(self.raw_flops)

    @property
    def raw_product_flops(self) -> Value:
        """The local product's FLOPs per device, raw: :attr:`flops_per_device` less the adds of the operands'
        local sums (:class:`~symshard.notation.einsums.LocalSum`), what XLA's dots do."""
        return next(s.flops for s in self.steps if isinstance(s.op, LocalMatmul))

    @property
    def compute_time(self) -> sympy.Expr:
        """``T_math = FLOPs per device / C``."""
        return sym(self.raw_compute_time)

    @property
    def hbm_bytes_per_device(self) -> sympy.Expr:
        """Bytes each device reads from and writes to HBM for its local product: its two blocks and its
        result, each once (:func:`~symshard.costs.kernels.hbm_traffic`); 0 when the plan leaves HBM out."""
        return sym(self.raw_hbm_bytes)

    @property
    def hbm_time(self) -> sympy.Expr:
        """``T_hbm = HBM bytes per device / W_hbm``: how long the local product waits on memory at best."""
        return sym(self.raw_hbm_time)

    @property
    def local_time(self) -> sympy.Expr:
        """The local product's time: ``max(T_math, T_hbm)``, the roofline of one kernel."""
        return sym(self._local_raw)

    @property
    def _local_raw(self):
        if is_number(self.raw_hbm_time) and self.raw_hbm_time == 0:
            return self.raw_compute_time
        return largest_cost([self.raw_compute_time, self.raw_hbm_time])

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
        """``max(T_math, T_hbm, T_comms)``: communication hidden behind the local product (the chapter's
        default), which itself takes the larger of its compute and memory times."""
        return sym(self._overlap_raw)

    @property
    def serial_time(self) -> sympy.Expr:
        """``max(T_math, T_hbm) + T_comms``: the collectives not overlapped with the local product."""
        return sym(self._local_raw) + sym(self.raw_comm_time)

    @property
    def _overlap_raw(self):
        if is_number(self.raw_hbm_time) and self.raw_hbm_time == 0:
            return largest_cost([self.raw_compute_time, self.raw_comm_time])
        return largest_cost([self.raw_compute_time, self.raw_hbm_time, self.raw_comm_time])

    @property
    def raw_time(self):
        """The total time under the plan's overlap setting, raw."""
        return self._overlap_raw if self.overlap else self._local_raw + self.raw_comm_time

    @property
    def time(self) -> sympy.Expr:
        """Total time under the plan's overlap setting."""
        return self.overlap_time if self.overlap else self.serial_time

    def expected_time(self, rates: AttainedRates) -> sympy.Expr:
        """The time this strategy is expected to take on a chip that attained ``rates`` in measurements: the
        local work's expected time (:func:`~symshard.costs.kernels.expected_time`, from its FLOPs and HBM
        bytes) with ``T_comms``, overlapped or one after the other as :attr:`time` combines them. The data
        sheet's bound stays :attr:`time`.

        Examples:
            >>> from symshard.machines.chips import AttainedRates
            >>> from symshard.planning.planner import plan
            >>> s = plan("X[B, D] · W[D, F] -> Y[B, F]", "X=1", "B=1,D=8192,F=8192", hardware="h200").best
            >>> s.expected_time(AttainedRates("bf16", 5e14, 4e12, "2e-5", 2)) > s.time
            True
        """
        from ..costs.kernels import expected_time

        local = expected_time(self.flops_per_device, self.hbm_bytes_per_device, rates)
        comm = self.comm_time
        return sympy.Max(local, comm) if self.overlap else local + comm

    @property
    def memory_bytes_per_device(self) -> sympy.Expr:
        """Peak bytes per device: operands, temporaries and result alive at the busiest step."""
        return sym(self.raw_memory)

    @property
    def bound(self) -> str | None:
        """What the strategy waits on: ``'compute'`` (``T_math`` the largest), ``'memory'`` (``T_hbm``, the
        local product reading and writing HBM) or ``'communication'`` (``T_comms``); a tie goes to compute,
        then memory. With symbols, the answer when it holds everywhere (every axis at least 2 devices),
        else None."""
        m, h, c = self.raw_compute_time, self.raw_hbm_time, self.raw_comm_time
        if not (is_number(m) and is_number(h) and is_number(c)):
            math_, hbm, comm = from_expr(sym(m)), from_expr(sym(h)), from_expr(sym(c))
            domain = Domain.around(math_.atoms | hbm.atoms | comm.atoms)
            if (comm.is_zero or less_equal(comm, math_, domain)) and (hbm.is_zero or less_equal(hbm, math_, domain)):
                return "compute"
            if (comm.is_zero or less_equal(comm, hbm, domain)) and less_equal(math_, hbm, domain):
                return "memory"
            return None
        if m >= h and m >= c:
            return "compute"
        return "memory" if h >= c else "communication"

    @property
    def divisibility(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """What the strategy needs to divide evenly: ``(dim, axes)`` for every dim some array of it
        shards, the dim a multiple of the product of those axes' sizes (only the largest group of each
        dim is kept: ``H`` over ``X·Y`` implies ``H`` over ``X``).

        Examples:
            >>> from symshard.planning.planner import plan
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

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        bound = self.bound
        return summary("Strategy", self.name, {"time": format_seconds_expr(self.time), "bound": bound,
                       "T_math": format_seconds_expr(self.compute_time), "T_comms": format_seconds_expr(self.comm_time)})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


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
    hbm: bool = False  # whether the strategies' times count the local product's HBM traffic (T_hbm)

    def expected_time(self, s: Strategy) -> sympy.Expr | None:
        """The time ``s`` is expected to take on the plan's chip, from the rates it attained in measurements
        (``symshard calibrate --chip``): the local product's expected time
        (:func:`~symshard.costs.kernels.expected_time`) combined with ``T_comms`` as :attr:`time` combines
        them. None unless the chip was calibrated for the plan's dtype and the costs are numbers; the
        data sheet's bound stays :attr:`Strategy.time`.

        Examples:
            >>> from symshard.planning.planner import plan
            >>> p = plan("X[B, D] · W[D, F] -> Y[B, F]", "X=1", "B=1,D=8192,F=8192", hardware="h200")
            >>> p.expected_time(p.best) is None  # a preset: the data sheet only
            True
        """
        rates = attained_rates(self.hardware, self.dtype)
        if rates is None or not self.numeric:
            return None
        return s.expected_time(rates)

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
            >>> from symshard.planning.planner import plan
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
        :meth:`~symshard.planning.enumeration.Enumeration.matching` takes it), add up to ``target``, fastest first, found without
        listing the others. With ``further`` (and ``routes='xla'``) the search also takes XLA's further
        orders (see :func:`~symshard.planning.routes.reshard_routes`), which the plan lists only for a 2-D matmul on three axes:
        with batch or head dims there are too many to list, but a search for one set of collectives is quick.

        With ``any_route`` (numbers only) the legs are instead any routes of the algebra's exact steps
        (:func:`symshard.planning.route_search.every_route`), which the planner does not list: permutes one after
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
            src = src.widened()
        if any_route:

            def item(expr: CollectiveExpr) -> Hashable | None:
                read = signature((expr,))
                return read[0] if read else None

            found = [src.build_routed(p, routes) for p, routes in src.composed(item, target, kinds, deadline)]
        else:
            found = [src.build(p, picks) for p, picks in src.matching(signature, target, deadline)]
        return sorted(found, key=lambda s: sort_key(s, self.numeric))

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

    def position(self, strategy: Strategy) -> tuple[int, bool]:
        """The 1-based number ``strategy`` has among the strategies listed, fastest first, and True, when the
        plan lists it (one of the same name and costs); else the place it would take there and False: one more
        than the number ranked before it, ties by the sharding's order (:meth:`place` with every key). A few
        strategies are built, as a binary search reads them. Numbers only: with symbolic costs, which do not
        rank, one past the last.

        Examples:
            >>> from symshard.planning.planner import plan
            >>> p = plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4", "I=64,J=64,K=64", hardware="tpu-v5e", all=True)
            >>> p.position(p.strategies[2])
            (3, True)
        """
        listed = self.strategies
        if not self.numeric:
            return len(listed) + 1, False
        key = _rank_key(strategy)
        lo, hi = 0, len(listed)
        while lo < hi:
            mid = (lo + hi) // 2
            if _rank_key(listed[mid]) < key:
                lo = mid + 1
            else:
                hi = mid
        i = lo
        while i < len(listed) and _rank_key(listed[i]) == key:
            if listed[i].name == strategy.name:
                return i + 1, True
            i += 1
        return lo + 1, False

    def why(self, index: int) -> Reason:
        """Why the strategy numbered ``index`` (1-based) is listed."""
        if self.reasons:
            return self.reasons[index - 1]
        return Reason("listed")

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        best = self.best
        return summary(
            "Plan", str(self.matmul), {"case": self.classification.case, "strategies": len(self.strategies),
            "best": None if best is None else best.name, "time": None if best is None else format_seconds_expr(
                best.time)}, mesh=str(self.mesh), dtype=self.dtype, hardware=self.hardware and self.hardware.name,
        )  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


@dataclass(frozen=True, slots=True)
class Leg:
    """A resharding sequence with its totals: communication time and memory.

    The planner costs each operand's and the result's leg once and joins them into strategies;
    :func:`symshard.planning.search.best_sharding` does the same with their costs scaled to ints.

    Examples:
        >>> Leg((), 0, 0, 0)  # no resharding: nothing sent, nothing held
        Leg(steps=(), comm=0, peak=0, final=0, loads=())
    """

    steps: tuple[PlanStep, ...]
    comm: Value  # the leg's own T_comms
    peak: Value  # most bytes alive at once during the leg, besides the resident operands
    final: Value  # bytes of the leg's result if it is a new array, else 0
    loads: tuple[tuple[str, Value], ...] = ()  # each link's total busy time (see costmodels.combine)


def sort_strategies(strategies: list[Strategy], numeric: bool) -> None:
    """Fastest first when the costs are numbers; else fewest collectives, most work split."""
    if numeric:
        strategies.sort(key=_rank_key)
    else:
        strategies.sort(key=lambda s: (len(s.collectives), -_shards_used(s), len(s.steps), _order(s)))


def sort_key(s: Strategy, numeric: bool) -> tuple:
    """The key a plan sorts ``s`` by (see :func:`sort_strategies`): its time first when the costs are numbers,
    else its number of collectives first."""
    if numeric:
        return _rank_key(s)
    return (len(s.collectives), -_shards_used(s), len(s.steps), _order(s))


def _rank_key(s: Strategy) -> tuple:
    return (s.raw_time, s.raw_comm_time, s.raw_memory, len(s.steps), _order(s))


def _order(s: Strategy) -> tuple:
    return order_of(s.sharding)


def order_of(sharding: tuple[tuple[str, str | None], ...]) -> tuple:
    """A compute sharding as it is ranked when all else ties: per mesh axis, the dim it splits ('' for none)."""
    return tuple((a, c or "") for a, c in sharding)


def _shards_used(s: Strategy) -> int:
    return sum(1 for _, c in s.sharding if c is not None)


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

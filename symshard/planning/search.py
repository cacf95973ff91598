"""The best way to store and multiply: search input shardings under a memory limit.

:func:`best_sharding` answers the chapter's design questions (Q5, Q7): given
global shapes, a mesh, a chip and a per-device memory budget, how should the
operands be sharded, and the result, so that everything fits and the matmul is
fastest?

The search is exhaustive over everything that is not dominated. A strategy is
fixed by its compute sharding (see :mod:`symshard.planning.planner`); an operand can be
*stored* exactly that way, or split further along axes the product does not use
(gathered back just before the product, FSDP-style), which trades communication
for memory. Any other storage needs more communication for the same memory, so
it is never better and is not enumerated. Outputs are searched too when the
caller accepts "any" sharding: each axis of partial sums is either all-reduced
or reduce-scattered onto some dim.

A chain of matmuls (``Tmp = x · W_in``, then ``Out = Tmp · W_out``) is searched
stage by stage: the sharding a stage leaves its result in is what the next
stage starts from (partial sums may even flow into it), weights are resident
throughout, and candidates are pruned to the Pareto front of (time, resident
bytes, transient bytes) at every stage.

Examples:
    >>> r = best_sharding("A[I, J] · B[J, K] -> C[I, K]", "X=4", "I=4096,J=4096,K=4096",
    ...                   hardware="v5e", out="C[I, K]")
    >>> [str(a) for _, a in r.best.stored]
    ['A[I_X, J]', 'B[J, K]']
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from ..algebra.symbols import C
from ..algebra.units import format_bytes, format_seconds
from ..costs.placement import ShapeLike, check_on_mesh, resolve_shape
from ..errors import PlanError, TooLargeError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh, resolve_mesh
from ..machines.presets import hardware as lookup_hardware
from ..memo import memoized
from ..messages import say
from ..notation.arrays import Array, Dim
from ..notation.einsums import LocalMatmul, Matmul, local_product, matmul
from ..notation.parser import parse_array
from .builder import Builder
from .costenv import CostEnv
from .rawcosts import Value, exact_ratio, sym
from .shardings import KEEP, axis_order, compute_array
from .strategies import PlanStep, Strategy

__all__ = ["MAX_SEARCH", "Candidate", "SearchResult", "best_sharding"]

MAX_SEARCH = 30_000
"""The most work :func:`best_sharding` takes on, counted before it starts: each matmul's compute shardings
(one choice per mesh axis) times those of the matmul before it (each may leave the result the next one
starts from), the first matmul's eight times (its operands' storages). A 2-D matmul on five mesh axes
(8,192) takes seconds, on six (32,768) most of a minute, and so do two chained on four axes (67,584)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One complete choice: how each stored array is sharded and the strategy of each matmul."""

    stored: tuple[tuple[str, Array], ...]
    stages: tuple[Strategy, ...]
    raw_time: Value
    raw_compute_time: Value
    raw_comm_time: Value
    raw_memory: Value

    @property
    def time(self) -> sympy.Expr:
        """Total time: the stages one after another."""
        return sym(self.raw_time)

    @property
    def compute_time(self) -> sympy.Expr:
        return sym(self.raw_compute_time)

    @property
    def comm_time(self) -> sympy.Expr:
        return sym(self.raw_comm_time)

    @property
    def hbm_time(self) -> sympy.Expr:
        """``T_hbm`` of the stages' local products, added up (0 when the search leaves HBM out)."""
        return sympy.Add(*[s.hbm_time for s in self.stages])

    @property
    def memory_bytes_per_device(self) -> sympy.Expr:
        """Peak bytes per device: every stored array plus the busiest stage's temporaries."""
        return sym(self.raw_memory)

    @property
    def output(self) -> Array:
        """The final result's sharding."""
        return self.stages[-1].output

    def sharding(self, name: str) -> Array:
        """How the stored array ``name`` is sharded."""
        return dict(self.stored)[name]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of :func:`best_sharding`: the winner, the runners-up and why."""

    matmuls: tuple[Matmul, ...]
    mesh: Mesh
    hardware: Hardware
    memory_limit: sympy.Expr | None
    best: Candidate | None
    ranked: tuple[Candidate, ...]
    fastest: Candidate | None
    considered: int
    fitting: int
    """``considered``: complete candidates evaluated in the last stage (after pruning earlier
    stages to their Pareto fronts); ``fitting``: how many of them fit in memory."""

    def explain(self) -> list[str]:
        """A few sentences on the winner: what is stored how, what moves, what it costs, what lost."""
        lines: list[str] = []
        if self.best is None:
            need = self.fastest.memory_bytes_per_device if self.fastest else None
            limit = format_bytes(self.memory_limit)
            lines.append(
                say("nothing fits in {limit} per device", limit=limit)
                if need is None
                else say(
                    "nothing fits in {limit} per device; the leanest candidate needs {need}",
                    limit=limit,
                    need=format_bytes(need),
                )
            )
            lines.append(
                say("to fit: allow more memory per device (--memory), spread over more devices, or use a smaller dtype")
            )
            return lines
        b = self.best
        stored = ", ".join(str(a) for _, a in b.stored)
        lines.append(say("store {stored}; the result ends as {output}", stored=stored, output=str(b.output)))
        for mm, st in zip(self.matmuls, b.stages, strict=True):
            lines.append(f"{mm.lhs.name} · {mm.rhs.name}: " + " ; ".join(st.describe()))
        times = {
            "time": format_seconds(b.time),
            "compute": format_seconds(b.compute_time),
            "comms": format_seconds(b.comm_time),
            "peak": format_bytes(b.memory_bytes_per_device),
        }
        if b.hbm_time != 0:
            lines.append(
                say(
                    "time {time} (compute {compute}, HBM {hbm}, communication {comms}), peak memory {peak} of {limit}",
                    **times,
                    hbm=format_seconds(b.hbm_time),
                    limit=format_bytes(self.memory_limit),
                )
                if self.memory_limit is not None
                else say(
                    "time {time} (compute {compute}, HBM {hbm}, communication {comms}), peak memory {peak}",
                    **times,
                    hbm=format_seconds(b.hbm_time),
                )
            )
        else:
            lines.append(
                say(
                    "time {time} (compute {compute}, communication {comms}), peak memory {peak} of {limit}",
                    **times,
                    limit=format_bytes(self.memory_limit),
                )
                if self.memory_limit is not None
                else say("time {time} (compute {compute}, communication {comms}), peak memory {peak}", **times)
            )
        if self.memory_limit is not None:
            lines.append(
                say(
                    "{fitting} of {considered} {considered:candidate|candidates} fit in memory",
                    fitting=self.fitting,
                    considered=self.considered,
                )
            )
        else:
            lines.append(
                say(
                    "{considered} {considered:candidate|candidates} considered (no memory limit)",
                    considered=self.considered,
                )
            )
        if self.fastest is not None and self.fastest is not b and self.fastest.raw_time < b.raw_time:
            lines.append(
                say(
                    "the fastest candidate overall ({time}) needs {bytes} and does not fit",
                    time=format_seconds(self.fastest.time),
                    bytes=format_bytes(self.fastest.memory_bytes_per_device),
                )
            )
        if len(self.ranked) > 1:
            r = self.ranked[1]
            lines.append(
                say(
                    "runner-up: {stored} -> {output} in {time}, {bytes}",
                    stored=", ".join(str(a) for _, a in r.stored),
                    output=str(r.output),
                    time=format_seconds(r.time),
                    bytes=format_bytes(r.memory_bytes_per_device),
                )
            )
        return lines

    def __repr__(self) -> str:
        from ..shown import summary

        best = self.best
        stored = None if best is None else " ".join(str(a) for a in best.stored)
        return summary(
            "SearchResult", " ; ".join(str(m) for m in self.matmuls),
            {"considered": self.considered, "fitting": self.fitting, "memory_limit": None if self.memory_limit is None
             else format_bytes(self.memory_limit)},
            {"best": stored, "time": None if best is None else format_seconds(best.time)},
            mesh=str(self.mesh), hardware=self.hardware.name,
        )  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


# -- the search --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Option:
    """One way to run one matmul of the chain: what it stores, which sharding it starts from and leaves its
    result in, its costs as ints of its stage's scales (:func:`_fronts`), and what its exact costs and its
    :class:`~symshard.planning.strategies.Strategy` are worked out from if it is picked (:func:`_candidate`)."""

    carried_in: Array | None
    carried_out: Array
    stored: tuple[tuple[str, Array], ...]
    lhs: Array  # the operands as they start: stored, or carried
    rhs: Array
    stage: _Stage
    stored_bytes: int
    time: int
    comm: int
    transient: int  # bytes the stage needs besides what is stored (its temporaries, the carried array)
    routes: tuple  # the route of each leg: lhs, rhs, result


@dataclass(frozen=True, slots=True)
class _Partial:
    """A chain prefix (the state: the sharding it leaves its last result in) and its accumulated costs, as
    ints of the scales of the stages so far (see :func:`best_sharding`)."""

    carried: Array | None
    time: int
    comm: int
    resident: int
    transient: int  # the largest temporary footprint of any stage so far
    last: _Option | None
    before: _Partial | None

    def options(self) -> list[_Option]:
        """The options picked, first stage first."""
        out: list[_Option] = []
        p: _Partial | None = self
        while p is not None and p.last is not None:
            out.append(p.last)
            p = p.before
        return out[::-1]


def _extensions(arr: Array, used: set[str], free_axes: Sequence[str]) -> list[Array]:
    """``arr`` split further along axes it does not use (each on one of its dims, or not at all)."""
    spare = [a for a in free_axes if a not in used]
    out = []
    for combo in itertools.product(*[[None, *arr.dim_names] for _ in spare]):
        extra: dict[str, list[str]] = {}
        for a, d in zip(spare, combo, strict=True):
            if d is not None:
                extra.setdefault(d, []).append(a)
        out.append(
            Array(arr.name, tuple(Dim(d.name, d.axes + tuple(extra.get(d.name, ()))) for d in arr.dims), arr.unreduced)
        )
    return out


def _resolutions(local: Array, final: bool) -> list[Array]:
    """Shardings a product can be left in: each partial-sum axis all-reduced, reduce-scattered
    onto a dim, or (between stages) kept unreduced."""
    axes = sorted(local.unreduced)
    options_per_axis = [[None, *local.dim_names] + ([KEEP] if not final else []) for _ in axes]
    out = []
    for combo in itertools.product(*options_per_axis):
        extra: dict[str, list[str]] = {}
        keep = set()
        for a, c in zip(axes, combo, strict=True):
            if c == KEEP:
                keep.add(a)
            elif c is not None:
                extra.setdefault(c, []).append(a)
        try:
            out.append(
                Array(
                    local.name,
                    tuple(Dim(d.name, d.axes + tuple(extra.get(d.name, ()))) for d in local.dims),
                    frozenset(keep),
                )
            )
        except Exception:  # pragma: no cover - axes are distinct by construction
            continue
    return out


def _max(a, b):
    return a if a >= b else b


@memoized(maxsize=2048)
def best_sharding(
    matmuls: Matmul | str | Sequence[Matmul | str],
    mesh: Mesh | Mapping[str, object] | str,
    shape: ShapeLike,
    *,
    hardware: Hardware | str,
    memory_limit: Value = None,
    out: Array | str | None = "any",
    fixed: Mapping[str, Array | str] | None = None,
    dtype: str = "bf16",
    model: str = "book",
    overlap: bool = True,
    keep: int = 10,
    comm_overlap: str = "axes",
    hbm: bool = True,
) -> SearchResult:
    """Find how to shard the operands (and the result) so that the matmul(s) fit and run fastest.

    A dynamic program over the chain: the state is the sharding the last result is left in (what
    the next matmul starts from). For each matmul, every way to run it from each state is costed
    (without building its strategy: legs are shared and routes another route beats are left out),
    and of the ways from the same state to the same result only those no other is at least as fast
    with no more bytes stored and no larger temporaries are kept; then each state keeps only the
    partial chains no other beats on time, resident and transient bytes at once. Costs are compared
    exactly, as integers (each stage's rational times and bytes scaled by a common denominator);
    strategies and their exact costs are built for the ranked candidates only.

    Args:
        matmuls: one matmul, or a chain in which each matmul uses the previous result
            (by name) as an operand. The operands' written shardings are ignored
            unless listed in ``fixed``.
        mesh: the mesh; the chip's wiring rules apply when given as text or mapping.
        shape: every dim's size (numbers: the search ranks times).
        hardware: the chip.
        memory_limit: bytes per device available (a number such as ``300e6`` or
            ``'300MB'``), or None for no limit.
        out: the required sharding of the final result, or ``'any'``.
        fixed: arrays whose stored sharding is given (e.g. activations), by name.
        keep: how many ranked candidates to keep.
        comm_overlap: how each matmul's collectives add up (``axes``: on disjoint links at once; ``none``).
        hbm: count each local product's HBM traffic (``T_hbm``, as :func:`~symshard.planning.planner.plan`
            does); False leaves it out, as the chapter's answers do.

    Raises:
        PlanError: a chain whose matmuls do not connect, or sizes left symbolic.
    """
    mms = [matmuls] if isinstance(matmuls, (Matmul, str)) else list(matmuls)
    chain = [matmul(m) if isinstance(m, str) else m for m in mms]
    if not chain:
        raise PlanError(
            say("best_sharding needs at least one matmul"),
            hint=say("pass {example}", example="'A[I, J] · B[J, K] -> C[I, K]'"),
        )
    hw = lookup_hardware(hardware)
    mesh_ = resolve_mesh(mesh, [], hw)
    dims = list(dict.fromkeys(d for mm in chain for d in mm.dims))
    sizes = resolve_shape(shape, tuple(dims), context=" ; ".join(str(m) for m in chain))
    symbolic = [d for d, v in sizes.items() if not v.is_number]
    if symbolic:
        raise PlanError(
            say("best_sharding needs every dim's size; {dims} have none", dims=", ".join(symbolic)),
            hint=say("give them with shape, e.g. {example}", example=",".join(f"{d}=4096" for d in symbolic)),
        )
    env = CostEnv(mesh_, sizes, dtype, hw, None, model, comm_overlap, hbm)
    if not env.numeric:
        missing = sorted(map(str, ({C} | env.costing.constants) - set(env.values)))
        raise PlanError(
            say("{chip} lacks {names}, which the search needs", chip=hw.label, names=", ".join(missing)),
            hint=say(
                "supply it: --hw-set {name}=VALUE on the command line, hardware.with_constants({name2}=...) in Python",
                name=missing[0],
                name2=missing[0],
            ),
        )
    limit = _parse_bytes(memory_limit)
    fixed_arrays = {k: (parse_array(v) if isinstance(v, str) else v) for k, v in (fixed or {}).items()}
    for arr in fixed_arrays.values():
        check_on_mesh(arr, mesh_, sizes)
    final_target = None
    if out is not None and not (isinstance(out, str) and out.strip().lower() == "any"):
        final_target = parse_array(out) if isinstance(out, str) else out
        check_on_mesh(final_target, mesh_, sizes)
    names = list(mesh_.names)
    _check_size(chain, names, env)
    builder = Builder(env, overlap)

    # the costs are compared as ints: each stage's times and bytes multiplied by a common multiple of their
    # denominators (_fronts), the partial chains' by one of every stage's so far; exact values (Fractions)
    # are worked out only for the candidates ranked
    states: dict[Array | None, list[_Partial]] = {None: [_Partial(None, 0, 0, 0, 0, None, None)]}
    scale_t = scale_b = 1
    limit_i = None
    fitting_count = total_count = 0
    for k, mm in enumerate(chain):
        last = k == len(chain) - 1
        carried_name = chain[k - 1].out_name if k else None
        if k and carried_name not in (mm.lhs.name, mm.rhs.name):
            raise PlanError(
                say(
                    "matmul {k} ({matmul}) does not use {name}, the result of matmul {previous}",
                    k=k + 1,
                    matmul=str(mm),
                    name=carried_name,
                    previous=k,
                ),
                hint=say("a chain feeds each result into the next matmul, by name"),
            )
        rank = axis_order(mm.dims, [a for a in (final_target, mm.lhs, mm.rhs) if a is not None], names)
        nexts: dict[Array | None, list[_Partial]] = {}
        by_state, (stage_t, stage_b) = _stage_options(mm, list(states), carried_name, fixed_arrays, env, builder,
                                                      rank, names, final_target if last else None, last, overlap)  # fmt: skip
        new_t, new_b = math.lcm(scale_t, stage_t), math.lcm(scale_b, stage_b)
        up_t, up_b, opt_t, opt_b = new_t // scale_t, new_b // scale_b, new_t // stage_t, new_b // stage_b
        scale_t, scale_b = new_t, new_b
        limit_i = None if limit is None else math.floor(limit * scale_b)  # the costs compared with it are ints
        for carried, group in states.items():
            options = [
                (o, o.time * opt_t, o.comm * opt_t, o.stored_bytes * opt_b, o.transient * opt_b)
                for o in by_state.get(carried, ())
            ]
            for p in group:
                p_time, p_comm, p_resident, p_transient = (
                    p.time * up_t,
                    p.comm * up_t,
                    p.resident * up_b,
                    p.transient * up_b,
                )
                for o, time, comm, stored, transient in options:
                    resident = p_resident + stored
                    if p_transient >= transient:
                        transient = p_transient
                    n = _Partial(o.carried_out, p_time + time, p_comm + comm, resident, transient, o, p)
                    if last:
                        total_count += 1
                        if limit_i is None or resident + transient <= limit_i:
                            fitting_count += 1
                    _offer(nexts.setdefault(o.carried_out, []), n, limit_i)
        states = nexts
    partials = [p for group in states.values() for p in group]
    partials.sort(key=lambda p: (p.time, p.resident + p.transient, p.comm))
    fitting = [p for p in partials if limit_i is None or p.resident + p.transient <= limit_i]
    leanest = min(partials, key=lambda p: (p.resident + p.transient, p.time)) if partials else None
    ranked = [_candidate(p, chain, env, builder, overlap) for p in fitting[: max(keep, 1) * 4]]
    ranked.sort(key=lambda c: (c.raw_time, c.raw_memory, c.raw_comm_time, str(c.stored)))
    fastest = (
        ranked[0] if ranked else (_candidate(leanest, chain, env, builder, overlap) if leanest is not None else None)
    )
    return SearchResult(
        matmuls=tuple(chain),
        mesh=mesh_,
        hardware=hw,
        memory_limit=sympy.Integer(limit) if isinstance(limit, int) else (sym(limit) if limit is not None else None),
        best=ranked[0] if ranked else None,
        ranked=tuple(ranked[:keep]),
        fastest=fastest,
        considered=total_count,
        fitting=fitting_count,
    )


def _check_size(chain: Sequence[Matmul], names: Sequence[str], env: CostEnv) -> None:
    """Refuse, before any work, a search larger than :data:`MAX_SEARCH`."""
    work, before = 0, 8
    for mm in chain:
        shardings = math.prod(1 if env.axis[a] == 1 else len(mm.dims) + 1 for a in names)
        work += shardings * before
        before = shardings
    if work > MAX_SEARCH:
        axes = sum(1 for a in names if env.axis[a] != 1)
        raise TooLargeError(
            say(
                "searching {count} {count:matmul|matmuls} on {axes} mesh {axes:axis|axes} is about {work} "
                "{work:step|steps} of work, more than the search takes ({limit})",
                count=len(chain),
                axes=axes,
                work=f"{work:,}",
                limit=f"{MAX_SEARCH:,}",
            ),
            hint=say(
                "use fewer mesh axes, or search a shorter chain (each matmul's shardings multiply the next one's)"
            ),
        )


def _offer(front: list[_Partial], p: _Partial, limit: int | None) -> None:
    """Add ``p`` to a state's partial chains unless one is at least as good in time, resident and transient
    bytes; drop those ``p`` is at least as good as. Chains that no longer fit the limit are kept only as
    the leanest (to say how much memory the search needed)."""
    memory = p.resident + p.transient
    if limit is not None and memory > limit:
        if any(q.resident + q.transient <= memory for q in front):
            return
        front[:] = [q for q in front if q.resident + q.transient <= limit] + [p]
        return
    for q in front:
        if q.time <= p.time and q.resident <= p.resident and q.transient <= p.transient:
            return
    front[:] = [q for q in front if not (p.time <= q.time and p.resident <= q.resident and p.transient <= q.transient)]
    front.append(p)


def _candidate(p: _Partial, chain: Sequence[Matmul], env: CostEnv, builder: Builder, overlap: bool) -> Candidate:
    """The complete candidate a partial chain stands for, its strategies built and its costs worked out
    exactly (as the planner works them out), stage after stage."""
    stored: list[tuple[str, Array]] = []
    stages: list[Strategy] = []
    time: Value = 0
    compute: Value = 0
    comm: Value = 0
    resident: Value = 0
    transient: Value = 0
    for o in p.options():
        st = o.stage
        stored_bytes = sum((env.bytes(arr) for _, arr in o.stored), 0)
        pre_l, pre_r, post = (r.leg for r in o.routes)
        product = PlanStep("matmul", LocalMatmul(st.lhs, st.rhs, st.local), None, st.flops)
        s = builder.build(
            o.lhs, o.rhs, o.carried_out, st.sharding, product, st.compute_time, st.local, pre_l, pre_r, post,
            hbm_time=st.hbm_time,
        )  # fmt: skip
        stages.append(s)
        stored.extend(o.stored)
        ct = st.local_time
        time = time + ((s.raw_comm_time if s.raw_comm_time > ct else ct) if overlap else ct + s.raw_comm_time)
        compute = compute + st.compute_time
        comm = comm + s.raw_comm_time
        resident = resident + stored_bytes
        transient = _max(transient, s.raw_memory - stored_bytes)
    return Candidate(tuple(stored), tuple(stages), time, compute, comm, resident + transient)


def _stage_options(
    mm, carried_states, carried_name, fixed, env, builder, rank, names, target, last, overlap
) -> tuple[dict[Array | None, list[_Option]], tuple[int, int]]:
    """Every way to run one matmul from each carried sharding, costed; of those that start from the same
    sharding and leave the same result, only those no other is at least as fast with no more bytes stored
    and no larger temporaries. What does not depend on the carried sharding is worked out once.

    The ways are listed first (:class:`_Ways`), then compared (:func:`_fronts`). No way is met twice: the
    blocks a compute sharding multiplies name every axis it uses (each dim of a matmul is an operand's), so
    two compute shardings never share their blocks, and within one the carried states, storages and
    results are distinct."""
    # partial sums a carried array may keep through the product make no compute sharding of their own here
    # (the written operand has none), so the compute shardings are the same for every carried state
    per_axis = [[None] if env.axis[a] == 1 else [None, *mm.dims] for a in names]
    operands = [mm.lhs, mm.rhs]
    roles = ("lhs", "rhs")
    target_dims, out_name = mm.out_dims, mm.out_name
    groups: list[_Ways] = []
    results: dict[Array, Array] = {}
    # bytes per device of each array met, by identity: every array here lives as long as this call, and the
    # ways run to tens of thousands, where hashing arrays would be most of what they cost
    sizes: dict[int, Value] = {}

    def size(arr: Array) -> Value:
        found = sizes.get(id(arr))
        if found is None:
            found = sizes[id(arr)] = env.bytes(arr)
        return found

    # each operand's sources (the carried array, or its storages) for one block, those that hold no partial
    # sums the product does not keep: (array, what is stored or None for the carried array, its bytes, its
    # routes to the block); by identity of the carried array and the block, one object per block
    blocks: dict[Array, Array] = {}
    known: dict[tuple[int, int, int], list[tuple]] = {}
    carries = [op.name == carried_name for op in operands]

    def sources(k: int, carried: Array | None, block: Array) -> list[tuple]:
        key = (k, id(carried), id(block))
        found = known.get(key)
        if found is None:
            op, role = operands[k], roles[k]
            if carried is not None:
                arrays: tuple[Array, ...] = (carried,)
            elif op.name in fixed:
                arrays = (fixed[op.name],)
            else:
                arrays = _storages(block, names, env, builder, role)
            found = known[key] = [
                (arr, None if carried is not None else (op.name, arr), size(arr), builder.kept_routes(arr, block, role))
                for arr in arrays
                if block.unreduced <= arr.unreduced
            ]
        return found

    for combo in itertools.product(*per_axis):
        sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
        computes = [compute_array(op, sigma, rank) for op in operands]
        try:
            local = local_product(computes[0], computes[1], target_dims, out_name)
        except PlanError:
            continue
        if not (env.fits(computes[0]) and env.fits(computes[1]) and env.fits(local)):
            continue
        lhs_c, rhs_c = (blocks.setdefault(c, c) for c in computes)
        if target is not None and target.name != local.name:  # the product takes the required result's name
            local = Array(target.name, local.dims, local.unreduced)
        targets = [target] if target is not None else [x for x in _resolutions(local, last) if env.fits(x)]
        # one object for each result, whichever compute sharding leaves it: the fronts and the next stage's
        # states are keyed by it, and equal arrays that are not the same object compare field by field
        targets = [results.setdefault(t, t) for t in targets if t.unreduced <= local.unreduced]
        flops = env.flops(lhs_c, rhs_c)
        sharding = tuple((a, sigma.get(a)) for a in names)
        stage = _Stage(
            lhs_c, rhs_c, sharding, local, size(local), flops, exact_ratio(flops, env.flops_rate),
            env.hbm_time(lhs_c, rhs_c, local),
        )  # fmt: skip
        ways_out = [builder.kept_routes(local, t, "out") for t in targets]
        for carried in carried_states:
            lhs = sources(0, carried if carries[0] else None, lhs_c)
            rhs = sources(1, carried if carries[1] else None, rhs_c)
            if lhs and rhs:
                for tgt, legs_o in zip(targets, ways_out, strict=True):
                    groups.append(_Ways(carried, tgt, stage, legs_o, lhs, rhs))
    return _fronts(groups, env, overlap)


@dataclass(frozen=True, slots=True)
class _Stage:
    """What one compute sharding of a matmul gives: the blocks multiplied, its product, FLOPs, compute time
    and HBM time."""

    lhs: Array
    rhs: Array
    sharding: tuple[tuple[str, str | None], ...]
    local: Array
    local_bytes: Value
    flops: Value
    compute_time: Value
    hbm_time: Value = 0

    @property
    def local_time(self) -> Value:
        """The local product's time: the larger of its compute and HBM times."""
        return self.hbm_time if self.hbm_time > self.compute_time else self.compute_time


@dataclass(frozen=True, slots=True)
class _Ways:
    """The ways to run one matmul from one carried sharding to one result around the product of ``stage``:
    every source of each operand (``lhs``, ``rhs``: the array, what is stored or None for the carried array,
    its bytes, its routes to the block), every route of each leg, the result's among ``legs_o``."""

    carried: Array | None
    target: Array
    stage: _Stage
    legs_o: tuple
    lhs: list[tuple]
    rhs: list[tuple]


class _Scale:
    """Exact rational values as ints: each multiplied by the least common multiple of their denominators
    (ints compare and add without the gcd every ``Fraction`` operation takes).

    Examples:
        >>> per = _Scale([Fraction(1, 6), Fraction(3, 4), 2])
        >>> per.factor, per(Fraction(1, 6)), per(Fraction(3, 4)), per(2)
        (12, 2, 9, 24)
    """

    def __init__(self, values) -> None:
        factor = 1
        for v in values:
            if v.denominator != 1:
                factor = math.lcm(factor, v.denominator)
        self.factor = factor

    def __call__(self, value: Value) -> int:
        if isinstance(value, int):
            return value * self.factor
        return value.numerator * (self.factor // value.denominator)


def _fronts(
    groups: Sequence[_Ways], env: CostEnv, overlap: bool
) -> tuple[dict[Array | None, list[_Option]], tuple[int, int]]:
    """Of each carried sharding's ways to the same result, those no other is at least as fast with no more
    stored and no more temporary bytes (the first of equals), in the order they were found.

    The ways are compared exactly, but on integers: every time and byte count here is a rational number,
    so each is scaled by the least common multiple of their denominators (:class:`_Scale`) and compared
    as an int, which orders them as the exact values do, ties included. ``Fraction`` arithmetic (a gcd
    per operation) is left for the candidates ranked in the end (:func:`_candidate`). Returns the ways kept
    for each carried sharding and the two scales (of times, of bytes)."""
    sides = {id(s): s for g in groups for s in (g.lhs, g.rhs)}.values()
    routes = {id(r): r for legs in itertools.chain((g.legs_o for g in groups), (x[3] for s in sides for x in s))
              for r in legs}.values()  # fmt: skip
    times = _Scale(
        itertools.chain(
            (g.stage.local_time for g in groups),
            (v for r in routes for v in (r.leg.comm, *(t for _, t in r.leg.loads)))
        )
    )  # fmt: skip
    space = _Scale(
        itertools.chain(
            (g.stage.local_bytes for g in groups),
            (x[2] for s in sides for x in s),
            (v for r in routes for v in (r.leg.peak, r.leg.final)),
        )
    )
    serial = env.comm_overlap == "none"
    # per route: its communication time, its links' busy times (None if it uses none), peak and final bytes
    scaled = {
        id(r): (
            times(r.leg.comm),
            {link: times(t) for link, t in r.leg.loads} if r.leg.loads else None,
            space(r.leg.peak),
            space(r.leg.final),
            r,
        )
        for r in routes
    }
    # per source of an operand: the bytes it adds to what is stored and to what is not (the carried array),
    # its routes scaled, and the source
    sourced = {
        id(s): [
            (0, space(x[2]), [scaled[id(r)] for r in x[3]], x)
            if x[1] is None
            else (space(x[2]), 0, [scaled[id(r)] for r in x[3]], x)
            for x in s
        ]
        for s in sides
    }
    fronts: dict[tuple, list[tuple]] = {}
    for g in groups:
        st = g.stage
        compute = times(st.local_time)
        local = space(st.local_bytes)
        front = fronts.setdefault((g.carried, g.target), [])
        legs_o = [scaled[id(c)] for c in g.legs_o]
        rhs_side = sourced[id(g.rhs)]
        for stored_l, carried_l, routes_l, src_l in sourced[id(g.lhs)]:
            for stored_r, carried_r, routes_r, src_r in rhs_side:
                # Builder.memory less what is stored: the carried operand and the busiest moment's temporaries
                stored, base = stored_l + stored_r, carried_l + carried_r
                for comm_a, loads_a, peak_a, final_a, a in routes_l:
                    for comm_b, loads_b, peak_b, final_b, b in routes_r:
                        # CostEnv.join of the two legs so far: the one leg with links, or each link's total
                        if loads_a is None:
                            single, merged = (comm_b, loads_b) if loads_b is not None else (0, None)
                        elif loads_b is None:
                            single, merged = comm_a, loads_a
                        else:
                            single, merged = None, dict(loads_a)
                            for link, t in loads_b.items():
                                merged[link] = merged[link] + t if link in merged else t
                        peak_ab = max(peak_a, final_a + peak_b, final_a + final_b + local)
                        for comm_c, loads_c, peak_c, _, c in legs_o:
                            if serial:
                                comm = comm_a + comm_b + comm_c
                            elif loads_c is None:
                                comm = single if single is not None else max(merged.values())  # type: ignore[union-attr]
                            elif merged is None:
                                comm = comm_c
                            else:
                                busy = dict(merged)
                                for link, t in loads_c.items():
                                    busy[link] = busy[link] + t if link in busy else t
                                comm = max(busy.values())
                            time = (comm if comm > compute else compute) if overlap else compute + comm
                            transient = base + (peak_ab if peak_ab >= peak_c else peak_c)
                            for o in front:
                                if o[0] <= time and o[1] <= stored and o[2] <= transient:
                                    break
                            else:
                                front[:] = [
                                    o for o in front if not (time <= o[0] and stored <= o[1] and transient <= o[2])
                                ]
                                front.append((time, stored, transient, comm, g, src_l, src_r, (a, b, c)))
    out: dict[Array | None, list[_Option]] = {}
    for (carried, _), front in fronts.items():
        kept = out.setdefault(carried, [])
        for time, stored, transient, comm, g, src_l, src_r, routes in front:
            what = tuple(x[1] for x in (src_l, src_r) if x[1] is not None)
            kept.append(
                _Option(carried, g.target, what, src_l[0], src_r[0], g.stage, stored, time, comm, transient, routes)
            )
    return out, (times.factor, space.factor)


def _storages(comp: Array, names: Sequence[str], env: CostEnv, builder: Builder, role: str) -> tuple[Array, ...]:
    """How an operand can be stored to reach its compute sharding ``comp``: ``comp`` split further along
    axes it does not use, without those another storage beats in every way (no more bytes, and for each
    of its routes to ``comp`` one at least as good: communication, links, peak bytes)."""
    key = (comp, tuple(names), role, id(builder))
    found = _STORAGES.get(key)
    if found is not None:
        return found
    used = set(comp.axes) | set(comp.unreduced)
    options = [x for x in _extensions(comp, used, names) if env.fits(x)]
    costs = []
    for x in options:
        routes = builder.kept_routes(x, comp, role)
        costs.append((env.bytes(x), [(r.leg.comm, r.links, r.leg.peak) for r in routes]))

    def beats(i: int, j: int) -> bool:
        (bi, ri), (bj, rj) = costs[i], costs[j]
        if bi > bj or not ri:
            return False
        if not all(any(c1 <= c2 and l1 <= l2 and p1 <= p2 for c1, l1, p1 in ri) for c2, l2, p2 in rj):
            return False
        tie = bi == bj and all(any(c2 <= c1 and l2 <= l1 and p2 <= p1 for c2, l2, p2 in rj) for c1, l1, p1 in ri)
        return not tie or i < j

    kept = tuple(
        x for j, x in enumerate(options) if costs[j][1] and not any(i != j and beats(i, j) for i in range(len(options)))
    )
    if len(_STORAGES) > 4096:
        _STORAGES.clear()
    _STORAGES[key] = kept
    return kept


_STORAGES: dict[tuple, tuple[Array, ...]] = {}


def _parse_bytes(value: Value) -> int | Fraction | None:
    """Bytes from ``300e6``, ``'300MB'``, ``'16 GiB'`` or None."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = Fraction(value) if isinstance(value, int) else Fraction(repr(value))
    else:
        text = str(value).strip().replace(" ", "").replace("_", "")
        units = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
                 "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip
        i = len(text)
        while i > 0 and text[i - 1].isalpha():
            i -= 1
        num, unit = text[:i], text[i:].upper()
        if unit not in units:
            raise PlanError(
                say("cannot read the memory limit '{value}'", value=value),
                hint=say("write it like 300MB, 16GiB or 3e8"),
            )
        try:
            number = Fraction(num) * units[unit]
        except (ValueError, ZeroDivisionError):
            raise PlanError(
                say("cannot read the memory limit '{value}'", value=value),
                hint=say("write it like 300MB, 16GiB or 3e8"),
            ) from None
    if number <= 0:
        raise PlanError(
            say("the memory limit must be positive, got '{value}'", value=value),
            hint=say("e.g. {example}", example="300MB"),
        )
    return int(number) if number.denominator == 1 else number

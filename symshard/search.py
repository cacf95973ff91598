"""The best way to store and multiply: search input shardings under a memory limit.

:func:`best_sharding` answers the chapter's design questions (Q5, Q7): given
global shapes, a mesh, a chip and a per-device memory budget, how should the
operands be sharded, and the result, so that everything fits and the matmul is
fastest?

The search is exhaustive over everything that is not dominated. A strategy is
fixed by its compute sharding (see :mod:`symshard.planner`); an operand can be
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from .arrays import Array, Dim
from .errors import PlanError
from .hardware import Hardware
from .hardware import hardware as lookup_hardware
from .matmul import Matmul, local_product, matmul
from .memo import memoized
from .mesh import Mesh, resolve_mesh
from .notation import parse_array
from .placement import ShapeLike, check_on_mesh, resolve_shape
from .planner import KEEP, Builder, CostEnv, Strategy, Value, axis_order, compute_array, sym
from .symbols import C
from .units import format_bytes, format_seconds

__all__ = ["Candidate", "SearchResult", "best_sharding"]


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
        lines = []
        if self.best is None:
            need = self.fastest.memory_bytes_per_device if self.fastest else None
            lines.append(
                f"nothing fits in {format_bytes(self.memory_limit)} per device"
                + (f"; the leanest candidate needs {format_bytes(need)}" if need is not None else "")
            )
            return lines
        b = self.best
        stored = ", ".join(str(a) for _, a in b.stored)
        lines.append(f"store {stored}; the result ends as {b.output}")
        for mm, st in zip(self.matmuls, b.stages, strict=True):
            lines.append(f"{mm.lhs.name} · {mm.rhs.name}: " + " ; ".join(st.describe()))
        lines.append(
            f"time {format_seconds(b.time)} (compute {format_seconds(b.compute_time)}, "
            f"communication {format_seconds(b.comm_time)}), peak memory {format_bytes(b.memory_bytes_per_device)}"
            + (f" of {format_bytes(self.memory_limit)}" if self.memory_limit is not None else "")
        )
        if self.memory_limit is not None:
            lines.append(f"{self.fitting} of {self.considered} candidates fit in memory")
        else:
            lines.append(f"{self.considered} candidates considered (no memory limit)")
        if self.fastest is not None and self.fastest is not b and self.fastest.raw_time < b.raw_time:
            lines.append(
                f"the fastest candidate overall ({format_seconds(self.fastest.time)}) needs "
                f"{format_bytes(self.fastest.memory_bytes_per_device)} and does not fit"
            )
        if len(self.ranked) > 1:
            r = self.ranked[1]
            lines.append(
                f"runner-up: {', '.join(str(a) for _, a in r.stored)} -> {r.output} in {format_seconds(r.time)}, "
                f"{format_bytes(r.memory_bytes_per_device)}"
            )
        return lines


# -- the search --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Partial:
    """A chain prefix: the carried array's sharding and the accumulated costs."""

    carried: Array | None
    stored: tuple[tuple[str, Array], ...]
    stages: tuple[Strategy, ...]
    time: Value
    compute: Value
    comm: Value
    resident: Value
    transient: Value  # the largest temporary footprint of any stage so far


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
) -> SearchResult:
    """Find how to shard the operands (and the result) so that the matmul(s) fit and run fastest.

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

    Raises:
        PlanError: a chain whose matmuls do not connect, or sizes left symbolic.
    """
    mms = [matmuls] if isinstance(matmuls, (Matmul, str)) else list(matmuls)
    chain = [matmul(m) if isinstance(m, str) else m for m in mms]
    if not chain:
        raise PlanError("best_sharding needs at least one matmul", hint="pass 'A[I, J] · B[J, K] -> C[I, K]'")
    hw = lookup_hardware(hardware)
    mesh_ = resolve_mesh(mesh, [], hw)
    dims = list(dict.fromkeys(d for mm in chain for d in mm.dims))
    sizes = resolve_shape(shape, tuple(dims), context=" ; ".join(str(m) for m in chain))
    symbolic = [d for d, v in sizes.items() if not v.is_number]
    if symbolic:
        raise PlanError(
            f"best_sharding needs every dim's size; {', '.join(symbolic)} have none",
            hint="give them with shape, e.g. " + ",".join(f"{d}=4096" for d in symbolic),
        )
    env = CostEnv(mesh_, sizes, dtype, hw, None, model, comm_overlap)
    if not env.numeric:
        missing = sorted(map(str, ({C} | env.costing.constants) - set(env.values)))
        raise PlanError(
            f"{hw.label} lacks {', '.join(missing)}, which the search needs",
            hint=f"supply it: --hw-set {missing[0]}=VALUE on the command line, "
            f"hardware.with_constants({missing[0]}=...) in Python",
        )
    limit = _parse_bytes(memory_limit)
    fixed_arrays = {k: (parse_array(v) if isinstance(v, str) else v) for k, v in (fixed or {}).items()}
    for arr in fixed_arrays.values():
        check_on_mesh(arr, mesh_, sizes)
    final_target = None
    if out is not None and not (isinstance(out, str) and out.strip().lower() == "any"):
        final_target = parse_array(out) if isinstance(out, str) else out
        check_on_mesh(final_target, mesh_, sizes)
    builder = Builder(env, overlap)
    names = list(mesh_.names)

    partials = [_Partial(None, (), (), 0, 0, 0, 0, 0)]
    fitting_count = total_count = 0
    for k, mm in enumerate(chain):
        last = k == len(chain) - 1
        carried_name = chain[k - 1].out_name if k else None
        if k and carried_name not in (mm.lhs.name, mm.rhs.name):
            raise PlanError(
                f"matmul {k + 1} ({mm}) does not use {carried_name}, the result of matmul {k}",
                hint="a chain feeds each result into the next matmul, by name",
            )
        target_dims = mm.out_dims
        out_name = mm.out_name
        rank = axis_order(mm.dims, [a for a in (final_target, mm.lhs, mm.rhs) if a is not None], names)
        grouped: dict[Array | None, list[_Partial]] = {}
        for p in partials:
            grouped.setdefault(p.carried, []).append(p)
        next_partials: list[_Partial] = []
        for carried, group in grouped.items():
            stage_options = _stage_options(mm, carried, carried_name, fixed_arrays, env, builder, rank, names,
                                           final_target if last else None, last, out_name, target_dims)  # fmt: skip
            for p in group:
                for stored_here, strat, transient in stage_options:
                    resident = p.resident
                    for _, arr in stored_here:
                        resident = resident + env.bytes(arr)
                    next_partials.append(
                        _Partial(
                            strat.output,
                            p.stored + stored_here,
                            (*p.stages, strat),
                            p.time + strat.raw_time,
                            p.compute + strat.raw_compute_time,
                            p.comm + strat.raw_comm_time,
                            resident,
                            _max(p.transient, transient),
                        )
                    )
        if last:
            fitting_count = sum(1 for p in next_partials if limit is None or p.resident + p.transient <= limit)
            total_count = len(next_partials)
        partials = _pareto(next_partials, limit)
    candidates = [Candidate(p.stored, p.stages, p.time, p.compute, p.comm, p.resident + p.transient) for p in partials]
    candidates.sort(key=lambda c: (c.raw_time, c.raw_memory, c.raw_comm_time, str(c.stored)))
    fitting = [c for c in candidates if limit is None or c.raw_memory <= limit]
    fastest = candidates[0] if candidates else None
    leanest = min(candidates, key=lambda c: c.raw_memory) if candidates else None
    return SearchResult(
        matmuls=tuple(chain),
        mesh=mesh_,
        hardware=hw,
        memory_limit=sympy.Integer(limit) if isinstance(limit, int) else (sym(limit) if limit is not None else None),
        best=fitting[0] if fitting else None,
        ranked=tuple(fitting[:keep]),
        fastest=fastest if fitting else leanest,
        considered=total_count,
        fitting=fitting_count,
    )


def _stage_options(mm, carried, carried_name, fixed, env, builder, rank, names, target, last, out_name, target_dims):
    """Every (stored arrays, strategy, transient bytes) for one matmul given the carried operand."""
    options = []
    seen = set()
    per_axis = []
    for a in names:
        opts: list[str | None] = [None] if env.axis[a] == 1 else [None, *mm.dims]
        if carried is not None and a in carried.unreduced:
            opts.append(KEEP)
        per_axis.append(opts)
    operands = [mm.lhs, mm.rhs]
    for combo in itertools.product(*per_axis):
        sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
        computes = [compute_array(op, sigma, rank) for op in operands]
        sources: list[list[Array]] = []
        for op, comp in zip(operands, computes, strict=True):
            if carried is not None and op.name == carried_name:
                sources.append([carried])
            elif op.name in fixed:
                sources.append([fixed[op.name]])
            else:
                used = set(comp.axes) | set(comp.unreduced)
                sources.append(_extensions(comp, used, names))
        try:
            local = local_product(computes[0], computes[1], target_dims, out_name)
        except PlanError:
            continue
        targets = [target] if target is not None else _resolutions(local, last)
        for lhs_in, rhs_in in itertools.product(*sources):
            for tgt in targets:
                key = (lhs_in, rhs_in, computes[0], computes[1], tgt)
                if key in seen:
                    continue
                seen.add(key)
                stored_here = tuple(
                    (op.name, arr)
                    for op, arr in ((mm.lhs, lhs_in), (mm.rhs, rhs_in))
                    if not (carried is not None and op.name == carried_name)
                )
                stored_bytes = sum((env.bytes(arr) for _, arr in stored_here), 0)
                # every route of each leg, the collective-permutes' too, as the planner's
                for strat in builder.strategies(lhs_in, rhs_in, computes[0], computes[1], tgt,
                                                tuple((a, sigma.get(a)) for a in names)):  # fmt: skip
                    options.append((stored_here, strat, strat.raw_memory - stored_bytes))
    return options


def _pareto(partials: list[_Partial], limit) -> list[_Partial]:
    """Keep, for each carried sharding, the candidates no other beats on time, resident and transient bytes."""
    out: list[_Partial] = []
    by_carried: dict[Array | None, list[_Partial]] = {}
    for p in partials:
        if limit is not None and p.resident + p.transient > limit:
            # still useful to report the leanest option when nothing fits: keep a few
            pass
        by_carried.setdefault(p.carried, []).append(p)
    for group in by_carried.values():
        group.sort(key=lambda p: (p.time, p.resident, p.transient))
        front: list[_Partial] = []
        for p in group:
            if any(q.time <= p.time and q.resident <= p.resident and q.transient <= p.transient for q in front):
                continue
            front.append(p)
        out.extend(front)
    return out


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
            raise PlanError(f"cannot read the memory limit '{value}'", hint="write it like 300MB, 16GiB or 3e8")
        try:
            number = Fraction(num) * units[unit]
        except (ValueError, ZeroDivisionError):
            raise PlanError(
                f"cannot read the memory limit '{value}'", hint="write it like 300MB, 16GiB or 3e8"
            ) from None
    if number <= 0:
        raise PlanError(f"the memory limit must be positive, got '{value}'", hint="e.g. 300MB")
    return int(number) if number.denominator == 1 else number

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

This module holds the dynamic program over the chain; :mod:`~symshard.planning.search_stages` lists
and prunes the ways to run one stage, and :mod:`~symshard.planning.search_results` holds what the
search answers (:class:`~symshard.planning.search_results.Candidate`,
:class:`~symshard.planning.search_results.SearchResult`).

Examples:
    >>> r = best_sharding("A[I, J] · B[J, K] -> C[I, K]", "X=4", "I=4096,J=4096,K=4096",
    ...                   hardware="v5e", out="C[I, K]")
    >>> [str(a) for _, a in r.best.stored]
    ['A[I_X, J]', 'B[J, K]']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from ..algebra.symbols import C
from ..costs.placement import ShapeLike, check_on_mesh, resolve_shape
from ..errors import PlanError, TooLargeError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh, resolve_mesh
from ..machines.presets import hardware as lookup_hardware
from ..memo import memoized
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import LocalMatmul, Matmul, matmul
from ..notation.parser import parse_array
from .builder import Builder
from .costenv import CostEnv
from .rawcosts import Value, sym
from .search_results import Candidate, SearchResult
from .search_stages import StageOption, stage_options
from .shardings import axis_order
from .strategies import PlanStep, Strategy

__all__ = ["MAX_SEARCH", "best_sharding"]


MAX_SEARCH = 30_000
"""The most work :func:`best_sharding` takes on, counted before it starts: each matmul's compute shardings
(one choice per mesh axis) times those of the matmul before it (each may leave the result the next one
starts from), the first matmul's eight times (its operands' storages). A 2-D matmul on five mesh axes
(8,192) takes seconds, on six (32,768) most of a minute, and so do two chained on four axes (67,584)."""


@dataclass(frozen=True, slots=True)
class _Partial:
    """A chain prefix (the state: the sharding it leaves its last result in) and its accumulated costs, as
    ints of the scales of the stages so far (see :func:`best_sharding`)."""

    carried: Array | None
    time: int
    comm: int
    resident: int
    transient: int  # the largest temporary footprint of any stage so far
    last: StageOption | None
    before: _Partial | None

    def options(self) -> list[StageOption]:
        """The options picked, first stage first."""
        out: list[StageOption] = []
        p: _Partial | None = self
        while p is not None and p.last is not None:
            out.append(p.last)
            p = p.before
        return out[::-1]


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
        by_state, (stage_t, stage_b) = stage_options(mm, list(states), carried_name, fixed_arrays, env, builder,
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
        dtype=env.dtype,
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

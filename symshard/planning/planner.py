"""Every way to compute a sharded matmul, each one costed: the planner.

A strategy is decided by its *compute sharding*: for every mesh axis, which dim
of the product it splits while the devices multiply (or none). From that choice
the rest follows:

1. each operand is resharded to its compute sharding: free slices along axes it
   is replicated over (``DynamicSlice``), ReduceScatter or AllReduce of partial
   sums, AllToAll to move an axis between dims, AllGather of what must go;
2. every device multiplies its blocks (:class:`~symshard.notation.einsums.LocalMatmul`),
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

The planner in parts, each module one idea, from the bottom of :mod:`symshard.planning`:
:mod:`.rawcosts` (exact numbers on the fast path, SymPy otherwise), :mod:`.strategies` (the values:
steps, legs, strategies, reasons, plans), :mod:`.costenv` (the costing environment), :mod:`.shardings`
(compute shardings and the routes to them), :mod:`.pruning` (dominance), :mod:`.builder` (costed legs
and strategies), :mod:`.listing` (the packed listing of every strategy) and :mod:`.enumeration` (every
valid strategy and the searches among them). This module holds the entry points, :func:`plan` and
:func:`best_strategy`, and re-exports the names other code imports from ``symshard.planning.planner``.

Examples:
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]")
    >>> [s.name for s in p.strategies][:2]
    ['DynamicSlice_{X,D}(X) → matmul → AllReduce_X(Z)', 'AllGather_X(Y) → matmul']
    >>> p.strategies[1].comm_time
    Max(T_hop*|X|/2, 2*D*F/W_ici)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy

from ..costs.collectives import FusedAllToAll
from ..costs.costmodels import COMM_OVERLAPS, LATENCY_MODELS, MODELS
from ..costs.placement import ShapeLike, check_on_mesh, resolve_shape
from ..errors import PlanError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh, resolve_mesh
from ..machines.presets import hardware as lookup_hardware
from ..machines.subaxes import AxisSplit, split_array, split_mesh
from ..memo import memoized
from ..messages import say
from ..notation.einsums import Matmul, local_product, matmul
from .builder import Builder
from .costenv import CostEnv
from .enumeration import MAX_LISTED, MAX_SHARDINGS, MAX_SYMBOLIC_SHARDINGS, Enumeration
from .rawcosts import Value, exact_ratio, sym
from .route_steps import Repermute
from .routes import reshard_routes, reshard_steps
from .shardings import KEEP, axis_order, compute_array, natural_outputs
from .strategies import Leg, Plan, PlanStep, Reason, Strategy, sort_key, sort_strategies

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
    hbm: bool = True,
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
    the sums of monomials the costs are, :mod:`symshard.algebra.monomials`). The strategy the chapter's
    rules give (:attr:`Plan.natural`) is always listed. ``all=True`` lists every valid strategy
    instead, built one at a time as they are read.

    Args:
        mm: a :class:`~symshard.notation.einsums.Matmul` or its notation.
        mesh: the mesh (text, mapping or :class:`~symshard.machines.mesh.Mesh`); None makes
            a symbolic mesh from the axes the arrays name. With ``hardware`` and a
            mesh given as text or mapping, the chip's wiring rules apply.
        shape: dim sizes; dims left out stay symbolic.
        dtype: element type of all three arrays.
        hardware: chip whose constants replace ``C``, ``W_ici``, ``T_hop``, ...
        constants: extra ``{symbol: value}`` substitutions.
        model: collective cost model, ``'book'`` or ``'ring'``.
        overlap: total time as ``max(T_math, T_hbm, T_comms)`` (True) or ``max(T_math, T_hbm) + T_comms``
            (False: the collectives not hidden behind the local product).
        hbm: count the local product's HBM traffic, ``T_hbm`` (its blocks read and its result written once,
            over ``W_hbm``); False leaves it out, as the chapter's formulas do. A chip or constants without
            ``W_hbm`` leave it out too, and the plan says so.
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
        split: mesh axes to use in parts too, ``'X=2x2'`` (see :mod:`symshard.machines.subaxes`): the plan is
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
    env = CostEnv(mesh_, sizes, dtype, hw, constants, model, comm_overlap, hbm)
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
        order = sorted(range(len(kept)), key=lambda i: sort_key(kept[i], env.numeric))
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
    if env.hbm:
        assumptions.append(
            say("time = max(T_math, T_hbm, T_comms) (communication overlapped with the local product)")
            if overlap
            else say("time = max(T_math, T_hbm) + T_comms (communication not overlapped)")
        )
        assumptions.append(
            say("T_hbm: the local product reads its two blocks and writes its result once in HBM, over W_hbm")
        )
    else:
        assumptions.append(
            say("time = max(T_math, T_comms) (communication overlapped with compute)")
            if overlap
            else say("time = T_math + T_comms (no overlap)")
        )
        assumptions.append(
            say("HBM traffic left out (hbm=False)") if not hbm else say("HBM traffic left out: no figure for W_hbm")
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
        hbm=env.hbm,
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
    hbm: bool = True,
) -> Strategy | None:
    """The fastest strategy for ``mm``, the answer to "which collectives, and how long": the same
    strategy as ``plan(...).best`` (None when the costs are symbolic), found without listing every
    other strategy when that is provably unnecessary.

    When the operands, as they are, multiply straight into the requested output, their blocks
    split the product's FLOPs over every device and the product is not memory-bound, it needs no
    collective, and no strategy can be faster: none moves less (nothing), none gives a device less
    than its share of the FLOPs, and none has fewer steps. (A memory-bound product could be beaten by
    one whose blocks read less HBM.) Otherwise (with numbers) the compute shardings are costed in order of
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
        env = CostEnv(mesh_, sizes, dtype, hw, constants, model, comm_overlap, hbm)
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
        hbm=hbm,
    )
    return p.best


def _straight(mm: Matmul, env: CostEnv, overlap: bool) -> Strategy | None:
    """The strategy that multiplies the operands as they are into ``mm.out``, if that needs no
    collective and splits the FLOPs over every device; else None."""
    assert mm.out is not None
    if mm.summed:  # an operand sums dims of its own first: the enumeration's prelude (builder.Prelude)
        return None
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
    if env.hbm_time(mm.lhs, mm.rhs, local) > env.flops(mm.lhs, mm.rhs) / env.flops_rate:
        return None  # memory-bound: blocks of another shape might read less
    sharding = []
    for a in env.mesh.names:
        dim_ = mm.lhs.sharded_dim(a) or mm.rhs.sharded_dim(a)
        sharding.append((a, dim_ if env.axis[a] != 1 else None))
    return Builder(env, overlap).strategy(mm.lhs, mm.rhs, mm.lhs, mm.rhs, mm.out, tuple(sharding))


def _wide(routes: str, axes: int, mm: Matmul) -> bool:
    """Whether a plan lists XLA's further orders on a mesh of three axes (see :func:`reshard_routes`):
    for a 2-D matmul on such a mesh. With batch or head dims they multiply into millions of strategies
    (an attention einsum on ``X=2,Y=2,Z=2`` took 15 GB to list), so those keep XLA's other orders; so
    does a refined mesh that splits an axis of three into four (millions of strategies too)."""
    arrays = [mm.lhs, mm.rhs] + ([mm.out] if mm.out is not None else [])
    return routes == "xla" and axes == 3 and all(len(a.dims) <= 2 for a in arrays)

"""Properties of the planner, the crossover solver and the sharding search over random matmuls.

The strategies draw a mesh (one to three axes named from X, Y, Z, of size 1, 2
or 4, sometimes rewired as a ring, a line or a one-way ring), one of three
matmuls with einsum semantics (``A[I, J] · B[J, K] -> C[I, K]``, the batched
``x[B, S, D] · W[D, F] -> y[B, S, F]`` and ``P[B, I, J] · Q[B, J, K] -> R[B, I, K]``),
valid shardings of both operands (now and then with partial sums) and sometimes
of the requested output, dim sizes that every sharding divides (or none, for
symbolic sizes), a chip or none, a cost model and the overlap setting.

The properties:

* every step of every strategy type-checks when its operation is applied again,
  independently, and the steps form three connected chains: lhs and rhs from
  the operands as given to the local product, and the product to the requested
  output (or one of the natural outputs);
* per-device FLOPs times the device count is ``2 ∏ dims`` times the sizes of the
  axes that split no dim of the local product, so it is never below ``2 ∏ dims``
  and equals it exactly when no axis of size > 1 repeats work;
* no array anywhere in a strategy uses a mesh axis twice or an axis the mesh lacks;
* numeric plans are sorted by time, so the first strategy is never slower than another;
* a symbolic plan with the numbers substituted gives exactly the numeric plan's
  FLOPs, compute time, communication time and memory, strategy by strategy;
* :func:`~symshard.planning.crossovers.compare`'s "A is faster" condition holds at a point
  exactly when A's bandwidth-only time there is smaller than B's;
* :func:`~symshard.planning.search.best_sharding` is never slower than any plan that starts
  from given stored shardings and fits the same memory, and what it picks fits.

A requested output that no strategy can produce raises ``PlanError``; such draws
are discarded with ``assume`` (only when an output was requested: with none,
some natural output is always reachable). Any other exception fails the test.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from symshard.algebra.symbols import axis, dim
from symshard.costs.collectives import CollectiveExpr
from symshard.errors import PlanError
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware
from symshard.notation.arrays import Array, Dim
from symshard.notation.einsums import LocalMatmul, Matmul, local_product, matmul
from symshard.planning.crossovers import compare
from symshard.planning.planner import Repermute, plan
from symshard.planning.route_steps import single_permute
from symshard.planning.search import best_sharding
from symshard.planning.shardings import natural_outputs
from symshard.planning.strategies import Plan, Strategy

SIZES = (1, 2, 4)
TOPOLOGIES = ("ring", "line", "one-way-ring")
CHIPS = ("tpu-v5e", "tpu-v5p")
MODELS = ("book", "ring")

# (operand, operand, result): names and dims of the three matmul shapes
SHAPES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "2-D": (("A", ("I", "J")), ("B", ("J", "K")), ("C", ("I", "K"))),
    "batch": (("x", ("B", "S", "D")), ("W", ("D", "F")), ("y", ("B", "S", "F"))),
    "batched 2-D": (("P", ("B", "I", "J")), ("Q", ("B", "J", "K")), ("R", ("B", "I", "K"))),
}

# every property in this file: a modest number of examples and no deadline, so the file
# runs in well under a minute on two cores (symbolic plans and SymPy solving are slow-ish)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW_PROPERTY = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- strategies ---------------------------------------------------------------------------


@st.composite
def meshes(draw: st.DrawFn, *, sizes: Sequence[int] = SIZES, max_axes: int = 3, rewire: bool = True) -> Mesh:
    """One to ``max_axes`` axes named from X, Y, Z (any order), each of a size in ``sizes``;
    with ``rewire`` some get a line or one-way-ring topology instead of the default ring."""
    names = draw(st.permutations(["X", "Y", "Z"]))[: draw(st.integers(1, max_axes))]
    shape = {n: draw(st.sampled_from(sizes)) for n in names}
    topology: dict[str, str] = {}
    if rewire:
        for n in names:
            if draw(st.integers(0, 2)) == 0:
                topology[n] = draw(st.sampled_from(TOPOLOGIES))
    return Mesh(shape, topology=topology or None)


@st.composite
def shardings(
    draw: st.DrawFn, name: str, dims: Sequence[str], mesh_axes: Sequence[str], *, unreduced: bool = True
) -> Array:
    """A valid sharding of ``name[dims]``: each mesh axis shards at most one dim (in a drawn
    order, so ``I_XY`` and ``I_YX`` both occur) or, now and then, holds partial sums."""
    partial_sums = unreduced and draw(st.integers(0, 3)) == 0
    roles: list[str | None] = [None, *dims] + (["unreduced"] if partial_sums else [])
    owners: dict[str, list[str]] = {d: [] for d in dims}
    partial: set[str] = set()
    for a in draw(st.permutations(list(mesh_axes))):
        role = draw(st.sampled_from(roles))
        if role == "unreduced":
            partial.add(a)
        elif role is not None:
            owners[role].append(a)
    return Array(name, tuple(Dim(d, tuple(owners[d])) for d in dims), frozenset(partial))


@st.composite
def matmuls(
    draw: st.DrawFn,
    mesh: Mesh,
    *,
    kinds: Sequence[str] = tuple(SHAPES),
    unreduced: bool = True,
    request: bool | None = None,
) -> Matmul:
    """One of the three shapes with drawn shardings; the output is requested sometimes
    (always or never with ``request``). Built from arrays or, half the time, from its text."""
    (lname, ldims), (rname, rdims), (oname, odims) = SHAPES[draw(st.sampled_from(list(kinds)))]
    lhs = draw(shardings(lname, ldims, mesh.names, unreduced=unreduced))
    rhs = draw(shardings(rname, rdims, mesh.names, unreduced=unreduced))
    wanted = draw(st.booleans()) if request is None else request
    out = draw(shardings(oname, odims, mesh.names, unreduced=unreduced)) if wanted else None
    mm = Matmul(lhs, rhs, out)
    if draw(st.booleans()):
        text = f"{lhs} · {rhs}" + (f" -> {out}" if out is not None else "")
        parsed = matmul(text)
        assert parsed == mm, (text, parsed, mm)
        mm = parsed
    return mm


def divisible_shape(mm: Matmul, mesh: Mesh, factors: Sequence[int]) -> dict[str, int]:
    """Dim sizes that every sharding on ``mesh`` divides: the device count times a small factor."""
    devices = int(mesh.devices)
    return {d: devices * k for d, k in zip(mm.dims, factors, strict=False)}


@dataclass(frozen=True)
class Case:
    """One planner call: the matmul, where and how to cost it."""

    mm: Matmul
    mesh: Mesh
    shape: dict[str, int] | None
    chip: str | None
    model: str
    overlap: bool

    def plan(self) -> Plan:
        return plan(self.mm, self.mesh, self.shape, hardware=self.chip, model=self.model, overlap=self.overlap)


@st.composite
def cases(draw: st.DrawFn, *, numeric: bool | None = None) -> Case:
    """A mesh, a matmul on it, sizes or none, a chip or none, a model and the overlap setting.

    ``numeric=True`` always gives sizes and a chip (every cost a number); with a chip the
    mesh follows the chip's wiring rules half the time.
    """
    mesh = draw(meshes())
    mm = draw(matmuls(mesh))
    factors = draw(st.lists(st.integers(1, 3), min_size=4, max_size=4))
    sized = True if numeric else draw(st.booleans())
    chip = draw(st.sampled_from(CHIPS)) if numeric or draw(st.booleans()) else None
    if chip is not None and draw(st.booleans()):
        mesh = Mesh({a.name: a.size for a in mesh.axes}, hardware=chip)
    shape = divisible_shape(mm, mesh, factors) if sized else None
    return Case(mm, mesh, shape, chip, draw(st.sampled_from(MODELS)), draw(st.booleans()))


def planned(case: Case) -> Plan:
    """The case's plan; a requested output no strategy reaches is discarded, nothing else is."""
    note(
        f"matmul {case.mm} on {case.mesh!r}, shape {case.shape}, chip {case.chip}, {case.model}, overlap {case.overlap}"
    )
    event(f"{len(case.mesh)} mesh axes")
    event("output requested" if case.mm.out is not None else "natural outputs")
    event("numeric" if case.shape is not None and case.chip is not None else "symbolic")
    try:
        return case.plan()
    except PlanError:
        assert case.mm.out is not None, "with no requested output some natural output must be reachable"
        assume(False)
        raise  # unreachable: assume(False) stops the example


# -- helpers ----------------------------------------------------------------------------------


def arrays_of(s: Strategy) -> list[Array]:
    """Every array a strategy touches: each step's input(s) and output."""
    out: list[Array] = []
    for step in s.steps:
        if isinstance(step.op, LocalMatmul):
            out += [step.op.lhs, step.op.rhs, step.op.output]
        else:
            out += [step.op.operand, step.op.output]
    return out


def check_chains(s: Strategy, lhs: Array, rhs: Array, targets: Sequence[Array]) -> None:
    """Every step re-checks on its own, and the steps connect ``lhs`` and ``rhs`` through the local
    product to an output in ``targets``."""
    roles = [step.role for step in s.steps]
    assert roles.count("matmul") == 1, s.name
    order = {"lhs": 0, "rhs": 1, "matmul": 2, "out": 3}
    assert [order[r] for r in roles] == sorted(order[r] for r in roles), f"steps out of order: {roles}"
    local = s.local
    (product,) = [step for step in s.steps if step.role == "matmul"]
    assert isinstance(product.op, LocalMatmul) and product.op is local
    assert product.output == local.output
    recomputed = local_product(local.lhs, local.rhs, local.output.dim_names, local.output.name)
    assert recomputed == local.output, f"{local}: the local product is {recomputed}"
    for role, start, end in (("lhs", lhs, local.lhs), ("rhs", rhs, local.rhs), ("out", local.output, s.output)):
        current = start
        for step in s.steps:
            if step.role != role:
                continue
            assert isinstance(step.op, CollectiveExpr), step
            assert step.op.operand == current, f"{role} chain broken: {step.op.operand} follows {current}"
            again = step.op.op.apply(step.op.operand)
            assert again == step.op.output, f"{step.op}: applying it again gives {again}"
            assert step.output == step.op.output
            assert step.timing is not None, step
            current = step.op.output
        assert current == end, f"{role} chain ends at {current}, not {end}"
    assert s.output in targets, f"{s.output} is not among {[str(t) for t in targets]}"


def split_axes(s: Strategy) -> set[str]:
    """The mesh axes that split some dim of the local product."""
    return set(s.local.lhs.axes) | set(s.local.rhs.axes)


def exact(value: sympy.Basic) -> sympy.Basic:
    """A substituted cost as a plain number where possible: unevaluated nodes evaluated."""
    value = sympy.sympify(value)
    return value if value.is_Number else value.doit()


def substituted(expr: sympy.Basic, values: Mapping[sympy.Symbol, sympy.Basic]) -> sympy.Basic:
    # xreplace swaps every symbol in one pass and rebuilds each Max once, evaluated
    return exact(sympy.sympify(expr).xreplace(values))


# -- the planner -------------------------------------------------------------------------------


@PROPERTY
@given(cases())
def test_steps_type_check_and_connect(case: Case) -> None:
    p = planned(case)
    mm = p.matmul
    assert p.strategies
    if mm.out is not None:
        assert p.targets == (mm.out,)
    else:
        assert p.targets == natural_outputs(mm)
    for s in p.strategies:
        check_chains(s, mm.lhs, mm.rhs, p.targets)
        assert s.local.output.dim_names == mm.out_dims
        if mm.out is not None:
            assert s.output == mm.out


@PROPERTY
@given(cases())
def test_flops_never_below_the_minimum(case: Case) -> None:
    p = planned(case)
    sizes = dict(p.sizes)
    mesh_sizes = p.mesh.sizes
    minimum = 2 * sympy.prod([sizes[d] for d in p.matmul.dims])
    devices = p.mesh.devices
    for s in p.strategies:
        (product,) = [step for step in s.steps if step.role == "matmul"]
        assert product.flops == s.raw_flops
        split = split_axes(s)
        # partial sums of the product come from contracted dims split along an axis, or are
        # an operand's own partial sums kept through it (those repeat no split, they add work)
        assert s.local.output.unreduced <= split | s.local.lhs.unreduced | s.local.rhs.unreduced
        idle = [a for a in p.mesh.names if a not in split]
        total = s.flops_per_device * devices
        expected = minimum * sympy.prod([mesh_sizes[a] for a in idle])
        assert sympy.cancel(total / expected) == 1, f"{s.name}: {total} != {expected}"
        if total.is_number:
            assert total >= minimum
            repeats = any(mesh_sizes[a] > 1 for a in idle)
            assert (total == minimum) == (not repeats), f"{s.name}: idle axes {idle}"


@PROPERTY
@given(cases())
def test_no_array_uses_an_axis_twice(case: Case) -> None:
    p = planned(case)
    names = set(p.mesh.names)
    for s in p.strategies:
        for arr in arrays_of(s):
            axes = arr.axes
            assert len(set(axes)) == len(axes), f"{arr} in {s.name}"
            assert set(axes).isdisjoint(arr.unreduced), f"{arr} in {s.name}"
            assert set(axes) | arr.unreduced <= names, f"{arr} in {s.name} uses an axis the mesh lacks"


@PROPERTY
@given(cases(numeric=True))
def test_the_first_strategy_is_the_fastest(case: Case) -> None:
    p = planned(case)
    assert p.numeric
    best = p.best
    assert best is p.strategies[0]
    times = [s.raw_time for s in p.strategies]
    assert times == sorted(times)
    for s in p.strategies:
        assert best.time <= s.time, f"{best.name} ({best.time}) is slower than {s.name} ({s.time})"
        local = max(s.compute_time, s.hbm_time)  # the local product: its FLOPs or its HBM traffic
        total = max(local, s.comm_time) if p.overlap else local + s.comm_time
        assert s.time == total


@st.composite
def twin_cases(draw: st.DrawFn, sizes: Sequence[int] = SIZES) -> Case:
    """A numeric case on a mesh of rings (its symbolic twin has the same wiring), with a chip."""
    mesh = draw(meshes(sizes=sizes, rewire=False))
    mm = draw(matmuls(mesh))
    factors = draw(st.lists(st.integers(1, 3), min_size=4, max_size=4))
    ring = Mesh({a.name: a.size for a in mesh.axes}, topology="ring")
    shape = divisible_shape(mm, ring, factors)
    return Case(mm, ring, shape, draw(st.sampled_from(CHIPS)), draw(st.sampled_from(MODELS)), draw(st.booleans()))


def check_twins(case: Case) -> None:
    """Plan ``case`` with numbers and again symbolically; substitute and compare, strategy by strategy."""
    assert case.chip is not None and case.shape is not None
    numeric = planned(case)
    assert numeric.numeric
    symbolic = plan(case.mm, case.mesh.symbolic(), model=case.model, overlap=case.overlap, all=True)
    assert not symbolic.numeric
    values: dict[sympy.Symbol, sympy.Basic] = dict(hardware(case.chip).constants())
    values.update({dim(d): sympy.Integer(n) for d, n in case.shape.items()})
    values.update({axis(a.name): a.size for a in case.mesh.axes})
    by_name: dict[tuple[str, Array], Strategy] = {}
    for s in symbolic.strategies:
        key = (s.name, s.output)
        assert key not in by_name, f"two symbolic strategies are both {key}"
        by_name[key] = s
    for s in numeric.strategies:
        name, in_place = generic_name(s)
        twin = by_name.get((name, s.output))
        assert twin is not None, f"the symbolic plan has no {name} -> {s.output}"
        for field in ("flops_per_device", "compute_time", "comm_time", "memory_bytes_per_device"):
            want = getattr(s, field)
            got = substituted(getattr(twin, field), values)
            if in_place and field == "comm_time":
                # equal sizes keep an axis in place: the permute crosses fewer axes than in general
                assert want <= got, f"{s.name}: comm_time {want} exceeds the general {twin.name}'s {got}"
                continue
            assert got == want, f"{s.name}: {field} is {getattr(twin, field)} = {got} at the point, numerically {want}"


def generic_name(s: Strategy) -> tuple[str, bool]:
    """``s``'s name as a symbolic plan writes it, and whether it differs: with numbers, a permute
    from ``K_PQ`` to ``K_YQ`` keeps Q in place when ``|P| = |Y|`` (no pair of devices crosses Q);
    with symbolic sizes only when the axes major to Q are the same."""
    labels, differs = [], False
    for step in s.steps:
        op = step.op
        if isinstance(op, CollectiveExpr) and isinstance(op.op, Repermute):
            general = single_permute(op.operand, op.output, None)
            assert general is not None, step
            if general.op.axes != op.op.axes:
                differs = True
                labels.append(f"{general.op}({op.operand.name or step.role})")
                continue
        labels.append(step.label())
    return " → ".join(labels), differs


@settings(PROPERTY, max_examples=20)
@given(twin_cases(sizes=(2, 4)))
def test_symbolic_costs_agree_with_numeric_plans(case: Case) -> None:
    check_twins(case)


@pytest.mark.slow(reason="200 examples, each planned with numbers and with symbols: about 45 s (20 by default)")
@settings(PROPERTY, max_examples=200)
@given(twin_cases(sizes=(2, 4)))
def test_symbolic_costs_agree_with_numeric_plans_in_200_cases(case: Case) -> None:
    check_twins(case)


@settings(SLOW_PROPERTY, max_examples=5)
@given(twin_cases(sizes=(1, 2)))
def test_axes_of_one_move_nothing(case: Case) -> None:
    check_axes_of_one(case)


@pytest.mark.slow(reason="60 examples, each planned with numbers and with symbols: about 70 s (5 by default)")
@settings(SLOW_PROPERTY, max_examples=60)
@given(twin_cases(sizes=(1, 2)))
def test_axes_of_one_move_nothing_in_60_cases(case: Case) -> None:
    check_axes_of_one(case)


def check_axes_of_one(case: Case) -> None:
    # Symbolic formulas are written for axes of at least two devices (the book's formulas
    # are; at |X| = 1 a collective does nothing, which no smooth formula in |X| says), and
    # the plans record that assumption. Numerically, a step over axes of size one is free.
    numeric = planned(case)
    symbolic = plan(case.mm, case.mesh.symbolic(), model=case.model, overlap=case.overlap)
    assert any("at least 2 devices" in a for a in symbolic.assumptions)
    ones = {a.name for a in case.mesh.axes if a.size == 1}
    for s in numeric.strategies:
        for step in s.collectives:
            if set(step.op.op.axes) <= ones:
                assert step.timing is not None and step.timing.time == 0, step


# -- compare ---------------------------------------------------------------------------------------


def link_loads(s: Strategy) -> list[sympy.Expr]:
    """Each link's total of bandwidth-bound collective times: each operand's (and the result's) reshards
    run in turn and keep every link they use busy for their total; one total when everything is added."""
    legs: dict[str, tuple[sympy.Expr, set[str]]] = {}
    for step in s.collectives:
        assert step.timing is not None, step
        total, links = legs.get(step.role, (sympy.Integer(0), set()))
        legs[step.role] = (total + sympy.sympify(step.timing.bandwidth_time), links | set(step.timing.resources))
    loads: dict[str, sympy.Expr] = {}
    for total, links in legs.values():
        for r in (links or {""}) if s.comm_overlap == "axes" else {"all"}:
            loads[r] = loads.get(r, sympy.Integer(0)) + total
    return list(loads.values()) or [sympy.Integer(0)]


def bandwidth_terms(s: Strategy) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """``(T_math, T_comms of the bandwidth-bound collective times, T_hbm)``: the terms compare ranks by; with
    collectives on disjoint links overlapping, T_comms is the busiest link's total (T_hbm is 0 where the
    plan leaves it out)."""
    loads = link_loads(s)
    return s.compute_time, loads[0] if len(loads) == 1 else sympy.Max(*loads), s.hbm_time


def crossings(terms: Sequence[sympy.Expr], x: sympy.Symbol, values: Mapping[sympy.Symbol, sympy.Basic]) -> list[int]:
    """Whole numbers on both sides of every positive ``x`` at which two of ``terms`` are equal,
    the other symbols set to ``values``: where a condition in ``x`` changes its answer."""
    # a plain positive stand-in for x: solving for an integer symbol would drop fractional roots
    t = sympy.Dummy("t", positive=True)
    at = [sympy.sympify(e).xreplace(values).xreplace({x: t}) for e in terms]
    out: set[int] = set()
    for e1, e2 in itertools.combinations(at, 2):
        difference = e1 - e2
        if difference.free_symbols != {t}:
            continue
        try:
            roots = sympy.solve(difference, t)
        except (NotImplementedError, ValueError, TypeError):  # Max terms: no closed form, skip
            continue
        for r in roots:
            if r.is_positive:
                f = int(sympy.floor(r))
                out.update(v for v in (f - 1, f, f + 1, f + 2) if v >= 1)
    return sorted(out)


def points_to_try(data: st.DataObject, candidates: list[int], label: str) -> list[int]:
    """A few whole numbers next to the crossings, and one anywhere."""
    near = data.draw(st.lists(st.sampled_from(candidates), max_size=4, unique=True), label=label) if candidates else []
    return [*near, data.draw(st.integers(1, 2**24), label=label)]


@st.composite
def comparisons(draw: st.DrawFn) -> tuple[Matmul, Mesh, str, dict[str, int], str, str, list[int] | None]:
    """A small 2-D matmul on one or two axes, the dim to solve for, sizes of (some of) the
    other dims, a chip, a model and which strategies to compare (None: compare's default)."""
    mesh = draw(meshes(max_axes=2, rewire=False))
    mm = draw(matmuls(mesh, kinds=("2-D",), unreduced=False, request=draw(st.booleans())))
    symbol = draw(st.sampled_from(["I", "J", "K"]))
    devices = int(mesh.devices)
    shape = {d: devices * draw(st.integers(1, 64)) for d in mm.dims if d != symbol and draw(st.integers(0, 3))}
    chip = draw(st.sampled_from(CHIPS))
    picked = None
    if draw(st.booleans()):
        picked = draw(st.lists(st.integers(1, 8), min_size=2, max_size=3, unique=True))
    return mm, mesh, symbol, shape, chip, draw(st.sampled_from(MODELS)), picked


@SLOW_PROPERTY
@given(comparisons(), st.data())
def test_compare_agrees_with_direct_timing(drawn, data: st.DataObject) -> None:
    mm, mesh, symbol, shape, chip, model, picked = drawn
    note(f"compare({mm}, {symbol}) on {mesh!r}, shape {shape}, {chip}, {model}, strategies {picked}")
    sizes = {a.name: a.size for a in mesh.axes}
    try:
        if picked is None:
            # compare builds the plan itself and compares the first four strategies
            result = compare(mm, symbol, mesh=sizes, shape=shape or None, hardware=chip, model=model)
        else:
            p = plan(mm, Mesh(sizes, hardware=chip), shape or None, model=model)
            picked = [i for i in picked if i <= len(p.strategies)] or [1]
            result = compare(p, symbol, strategies=picked, hardware=chip)
    except PlanError:
        assume(mm.out is not None)
        raise AssertionError("unreachable") from None
    constants = hardware(chip).constants()
    x = result.symbol
    assert x == dim(symbol)
    terms = {i: bandwidth_terms(result.plan.strategy(i)) for i in picked or range(1, len(result.plan.strategies) + 1)}
    free = {f for pair in terms.values() for e in pair for f in e.free_symbols}
    # where compare's conditions hold: every dim at least the devices that shard it in any strategy compared
    least: dict[sympy.Basic, int] = {}
    for i in terms:
        for name, axes in result.plan.strategy(i).divisibility:
            devices = math.prod(int(mesh.size(a)) for a in axes)
            least[dim(name)] = max(least.get(dim(name), 1), devices)
    base: dict[sympy.Symbol, sympy.Basic] = dict(constants)
    for f in sorted(free - {x} - set(constants), key=str):
        base[f] = sympy.Integer(data.draw(st.integers(least.get(f, 1), 2**16), label=str(f)))

    for regime in result.regimes:
        math_, comm, hbm = terms[regime.index]
        loads = link_loads(result.plan.strategy(regime.index))
        edges = [math_, *loads, *([hbm] if result.plan.hbm else [])]
        for value in points_to_try(data, crossings(edges, x, base), f"{x} for regime {regime.index}"):
            if value < least.get(x, 1):
                continue  # outside what compare assumes
            point = {**base, x: sympy.Integer(value)}
            m, c, h = substituted(math_, point), substituted(comm, point), substituted(hbm, point)
            if m != c:
                bound = regime.communication_bound.holds(point)
                event("regime: communication-bound" if m < c else "regime: compute-bound")
                assert bound is bool(m < c), f"strategy {regime.index} at {point}: T_math {m}, T_comms {c}, {bound}"
            if regime.memory_bound is not None and h not in (m, c):  # T_hbm the largest (ties: boundaries)
                memory = regime.memory_bound.holds(point)
                event("regime: memory-bound" if h > max(m, c) else "regime: not memory-bound")
                assert memory is bool(h > max(m, c)), f"strategy {regime.index} at {point}: {m}, {h}, {c}: {memory}"
                if m != c:  # the strategy's own bound, as the conditions read together
                    said = regime.bound(point)
                    assert said == ("memory" if h > max(m, c) else "communication" if c > m else "compute"), said

    for pair in result.pairs:
        ta, tb = terms[pair.a], terms[pair.b]
        edges = [ta[0], tb[0], *link_loads(result.plan.strategy(pair.a)), *link_loads(result.plan.strategy(pair.b))]
        if result.plan.hbm:
            edges += [ta[2], tb[2]]
        for value in points_to_try(data, crossings(edges, x, base), f"{x} for {pair.a} vs {pair.b}"):
            if value < least.get(x, 1):
                continue  # outside what compare assumes
            point = {**base, x: sympy.Integer(value)}
            a = max(substituted(e, point) for e in ta)
            b = max(substituted(e, point) for e in tb)
            if a == b:
                event("pair: tie, skipped")
                continue
            faster = bool(a < b)
            event(f"pair: {'a' if faster else 'b'} wins")
            where = f"{pair.a} vs {pair.b} at {point}: times {a} and {b}"
            a_wins = pair.a_wins.holds(point)
            b_wins = pair.b_wins.holds(point)
            assert a_wins is faster, f"{where}: a_wins ({pair.a_wins.text()}) says {a_wins}"
            assert b_wins is (not faster), f"{where}: b_wins ({pair.b_wins.text()}) says {b_wins}"
            if pair.numeric_a_wins is not None:
                rest = {k: v for k, v in point.items() if k not in constants}
                said = pair.numeric_a_wins.holds(rest)
                assert said is faster, f"{where}: numerically a_wins is {pair.numeric_a_wins.text()}, {said}"


# -- best_sharding -----------------------------------------------------------------------------------


def replicated(arr: Array) -> Array:
    return Array(arr.name, tuple(Dim(d) for d in arr.dim_names))


@st.composite
def searches(draw: st.DrawFn) -> tuple[Matmul, Mesh, dict[str, int], str, Fraction | None, Array | None, bool]:
    """A 2-D matmul with drawn stored shardings on a small mesh wired by a chip, sizes, a memory
    limit (a fraction of the unsharded footprint) or none, and a required output or ``'any'``."""
    chip = draw(st.sampled_from(CHIPS))
    drawn = draw(meshes(max_axes=2, rewire=False))
    mesh = Mesh({a.name: a.size for a in drawn.axes}, hardware=chip)
    mm = draw(matmuls(mesh, kinds=("2-D",), unreduced=False, request=False))
    devices = int(mesh.devices)
    shape = {d: devices * 128 * draw(st.integers(1, 4)) for d in mm.dims}
    limit = None
    if draw(st.booleans()):
        whole = 2 * (shape["I"] * shape["J"] + shape["J"] * shape["K"] + shape["I"] * shape["K"])  # bf16
        limit = Fraction(whole, draw(st.sampled_from([1, 2, 4, 8, 16, 64])))
    out = None
    if draw(st.booleans()):
        out = draw(shardings("C", ("I", "K"), mesh.names, unreduced=draw(st.booleans())))
    return mm, mesh, shape, chip, limit, out, draw(st.booleans())


@PROPERTY
@given(searches(), st.data())
def test_best_sharding_beats_every_fixed_storage(drawn, data: st.DataObject) -> None:
    mm, mesh, shape, chip, limit, out, overlap = drawn
    note(f"best_sharding({mm}) on {mesh!r}, shape {shape}, {chip}, limit {limit}, out {out}, overlap {overlap}")
    result = best_sharding(
        mm, mesh, shape, hardware=chip, memory_limit=limit, out="any" if out is None else out, overlap=overlap
    )
    event("no memory limit" if limit is None else "nothing fits" if result.best is None else "fits in the limit")
    fits = [c for c in result.ranked if limit is None or c.raw_memory <= limit]
    assert len(fits) == len(result.ranked), "a ranked candidate does not fit in memory"
    if result.best is not None:
        best = result.best
        assert best is result.ranked[0]
        assert limit is None or best.raw_memory <= limit
        (stage,) = best.stages
        wanted = [out] if out is not None else [stage.output]
        check_chains(stage, best.sharding(mm.lhs.name), best.sharding(mm.rhs.name), wanted)
        assert stage.output.unreduced <= (out.unreduced if out is not None else frozenset())
    if out is not None:
        # with both operands' storage fixed the search is the planner: the same fastest fitting time
        pinned = best_sharding(
            mm,
            mesh,
            shape,
            hardware=chip,
            memory_limit=limit,
            out=out,
            fixed={mm.lhs.name: mm.lhs, mm.rhs.name: mm.rhs},
            overlap=overlap,
        )
        try:
            own = plan(mm.with_out(out), mesh, shape, hardware=chip, overlap=overlap).strategies
        except PlanError:
            own = ()
        fitting = [s.raw_time for s in own if limit is None or s.raw_memory <= limit]
        if fitting:
            assert pinned.best is not None and pinned.best.raw_time == min(fitting), (pinned.best, min(fitting))
            assert [str(a) for _, a in pinned.best.stored] == [str(mm.lhs), str(mm.rhs)]
        else:
            assert pinned.best is None
    # rivals: the drawn storage and the replicated one, to the required output (or to their
    # natural outputs and a drawn reduced output when any will do)
    rivals = [(mm.lhs, mm.rhs), (replicated(mm.lhs), replicated(mm.rhs))]
    if out is not None:
        outputs: list[Array | None] = [out]
    else:
        outputs = [None, data.draw(shardings("C", ("I", "K"), mesh.names, unreduced=False), label="output")]
    for lhs, rhs in rivals:
        for target in outputs:
            try:
                p = plan(Matmul(lhs, rhs, target), mesh, shape, hardware=chip, overlap=overlap)
            except PlanError:
                assert target is not None and target.unreduced, f"nothing computes {lhs} · {rhs} -> {target}"
                continue
            for s in p.strategies:
                if limit is not None and s.raw_memory > limit:
                    continue
                event("a rival fits")
                assert result.best is not None, f"{s.name} from {lhs}, {rhs} fits ({s.raw_memory} <= {limit})"
                assert result.best.raw_time <= s.raw_time, (
                    f"best_sharding picks {[str(a) for _, a in result.best.stored]} in {result.best.time}, "
                    f"but {lhs} · {rhs} -> {s.output} by {s.name} takes {s.time} "
                    f"({s.memory_bytes_per_device} bytes of {limit})"
                )

"""The engine at the scale of real meshes, checked against brute force (issue 17).

* Valid strategies only: every array of every strategy a numeric plan lists (and of every strategy
  ``all=True`` lists) is placed evenly by :func:`symshard.place`, the library's own placement.
* Dominance never drops a winner: on small meshes with random sizes, chips, models and overlap, the
  pruned plan's best is the brute-force best of every valid strategy, and every strategy on its
  memory front is the fastest among those that need no more memory; a symbolic plan keeps, at
  random points, a strategy as fast as the fastest of all.
* Sums of monomials compare soundly: what :func:`~symshard.algebra.comparisons.less_equal` proves holds at
  random points of the domain.
* Crossovers: at random numeric points the fastest strategy satisfies the condition ``compare``
  gives for its region, and no other strategy's region contains the point.
* best_sharding's dynamic program equals a brute force over every storage of a two-matmul chain.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

import symshard as ss
from symshard.algebra.comparisons import less_equal
from symshard.algebra.domains import Domain
from symshard.algebra.monomials import Lazy, from_expr
from symshard.algebra.symbols import axis, dim
from symshard.errors import PlanError
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware
from symshard.notation.arrays import Array, Dim
from symshard.notation.einsums import LocalMatmul, Matmul
from symshard.planning.crossovers import compare
from symshard.planning.planner import plan
from symshard.planning.search import best_sharding
from symshard.planning.strategies import Strategy

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHIPS = ("tpu-v5e", "tpu-v5p", "h100")


@st.composite
def arrays(draw: st.DrawFn, name: str, dims: tuple[str, ...], axes: list[str]) -> Array:
    owners: dict[str, list[str]] = {d: [] for d in dims}
    for a in draw(st.permutations(axes)):
        role = draw(st.sampled_from([None, *dims]))
        if role is not None:
            owners[role].append(a)
    return Array(name, tuple(Dim(d, tuple(owners[d])) for d in dims))


@st.composite
def numeric_cases(draw: st.DrawFn, max_axes: int = 3):
    """A 2-D matmul on one to three axes with drawn shardings, random sizes (sometimes ones that do not
    split over every axis: the planner must then leave out the strategies that need them to), a chip."""
    names = ["X", "Y", "Z"][: draw(st.integers(1, max_axes))]
    sizes = {n: draw(st.sampled_from([2, 4])) for n in names}
    chip = draw(st.sampled_from(CHIPS))
    mesh = Mesh(sizes, hardware=chip)  # wired as the chip wires it (an H100's NVLink, a v5e's lines)
    lhs = draw(arrays("A", ("I", "J"), names))
    rhs = draw(arrays("B", ("J", "K"), names))
    out = draw(arrays("C", ("I", "K"), names)) if draw(st.booleans()) else None
    mm = Matmul(lhs, rhs, out)
    shape = {}
    for d in ("I", "J", "K"):
        need = 1
        for arr in (lhs, rhs, out):
            if arr is not None and d in arr.dim_names:
                for a in arr.dim(d).axes:
                    need *= sizes[a]
        shape[d] = need * draw(st.sampled_from([1, 2, 3, 5, 64]))
    return mm, mesh, shape, chip, draw(st.sampled_from(["book", "ring"])), draw(st.booleans())


def intermediates(s: Strategy) -> list[Array]:
    out: list[Array] = []
    for st_ in s.steps:
        if isinstance(st_.op, LocalMatmul):
            out += [st_.op.lhs, st_.op.rhs, st_.op.output]
        else:
            out += [st_.op.operand, st_.op.output]
    return out


def _plan(mm, mesh, shape, chip, model, overlap, **kw):
    try:
        return plan(mm, mesh, shape, hardware=chip, model=model, overlap=overlap, **kw)
    except PlanError:
        assume(False)
        raise


@PROPERTY
@given(numeric_cases())
def test_numeric_plans_list_only_strategies_that_place_evenly(case):
    mm, mesh, shape, chip = case[:4]
    note(f"{mm} on {mesh!r}, {shape}, {chip}")
    for p in (_plan(*case), _plan(*case, all=True)):
        for s in p.strategies:
            for arr in intermediates(s):
                # raises DivisibilityError if the array does not split evenly
                ss.place(arr, mesh, {d: shape[d] for d in arr.dim_names})


@PROPERTY
@given(numeric_cases())
def test_the_pruned_plan_keeps_the_brute_force_best_and_memory_front(case):
    pruned = _plan(*case)
    every = list(_plan(*case, all=True).strategies)
    assert every, "a plan without a valid strategy raised nothing"
    key = lambda s: (s.raw_time, s.raw_comm_time, s.raw_memory, len(s.steps))  # noqa: E731
    best = min(every, key=key)
    assert key(pruned.best) == key(best), (pruned.best.name, best.name)
    event(f"{len(every)} valid, {len(pruned.strategies)} listed")
    for s, why in zip(pruned.strategies, pruned.reasons, strict=True):
        if why.key == "natural":
            continue
        # the fastest among the strategies that fit in its memory
        fitting = [t for t in every if t.raw_memory <= s.raw_memory]
        assert s.raw_time == min(t.raw_time for t in fitting), s.name
    # every memory limit's fastest strategy is listed (none of them was pruned)
    for limit in {s.raw_memory for s in every}:
        fastest = min(t.raw_time for t in every if t.raw_memory <= limit)
        listed = [s for s in pruned.strategies if s.raw_memory <= limit]
        assert listed and min(s.raw_time for s in listed) == fastest


@st.composite
def symbolic_cases(draw: st.DrawFn):
    names = ["X", "Y"][: draw(st.integers(1, 2))]
    lhs = draw(arrays("A", ("I", "J"), names))
    rhs = draw(arrays("B", ("J", "K"), names))
    out = draw(arrays("C", ("I", "K"), names)) if draw(st.booleans()) else None
    return Matmul(lhs, rhs, out), draw(st.sampled_from(["book", "ring"])), draw(st.booleans())


def _values(rng: random.Random, symbols, floors=None) -> dict:
    """Exact values for the symbols: axes 2..16, dims 2^4..2^16 (multiples of what shards them), constants
    from a chip."""
    chip = hardware(rng.choice(["tpu-v5e", "tpu-v5p"]))
    out: dict = {}
    constants = chip.constants()
    for s in sorted(symbols, key=str):
        if s in constants:
            out[s] = constants[s]
        elif s.name.startswith("|"):
            out[s] = sympy.Integer(rng.choice([2, 4, 8, 16]))
    for s in sorted(symbols, key=str):
        if s not in out:
            out[s] = sympy.Integer(2 ** rng.randint(4, 16) * rng.choice([1, 3]))
    return out


@FEW
@given(symbolic_cases(), st.integers(0, 2**20))
def test_symbolic_dominance_never_drops_the_fastest(case, seed):
    mm, model, overlap = case
    try:
        pruned = plan(mm, model=model, overlap=overlap)
    except PlanError:
        assume(False)
        raise
    every = list(plan(mm, model=model, overlap=overlap, all=True).strategies)
    rng = random.Random(seed)
    symbols = set()
    for s in every:
        symbols |= s.time.free_symbols | s.memory_bytes_per_device.free_symbols
    for _ in range(6):
        point = _values(rng, symbols)
        valid = [s for s in every if all(point[dim(d)] % _group(point, axes) == 0 for d, axes in s.divisibility)]
        if not valid:
            continue
        times = {s.name: s.time.xreplace(point) for s in valid}
        fastest = min(times.values())
        kept = [times[s.name] for s in pruned.strategies if s.name in times]
        # a kept strategy is as fast, unless the fastest needs a division the kept ones are valid without
        assert kept and min(kept) == fastest, (mm, point)


def _group(point, axes) -> int:
    n = 1
    for a in axes:
        n *= int(point[axis(a)])
    return n


@st.composite
def monomial_pairs(draw: st.DrawFn):
    B, D, F, X = dim("B"), dim("D"), dim("F"), axis("X")
    atoms = [B, D, F, X, ss.symbols.W_ici, ss.symbols.T_hop]

    def term():
        coef = sympy.Rational(draw(st.integers(1, 8)), draw(st.sampled_from([1, 2, 4])))
        return coef * sympy.Mul(*[a ** draw(st.integers(-1, 1)) for a in atoms])

    def cost():
        parts = [sympy.Add(*[term() for _ in range(draw(st.integers(1, 3)))]) for _ in range(draw(st.integers(1, 2)))]
        return parts[0] if len(parts) == 1 else sympy.Max(*parts, evaluate=False)

    return cost(), cost()


@PROPERTY
@given(monomial_pairs(), st.integers(0, 2**20))
def test_what_sums_of_monomials_prove_holds_at_random_points(pair, seed):
    p, q = pair
    domain = Domain.around(p.free_symbols | q.free_symbols)
    proved = less_equal(from_expr(p), from_expr(q), domain)
    event(f"proved {proved}")
    if not proved:
        return
    rng = random.Random(seed)
    for _ in range(20):
        point = {
            s: sympy.Integer(rng.choice([2, 3, 8, 64]))
            if s.name.startswith("|")
            else sympy.Rational(rng.randint(1, 10**6), rng.randint(1, 1000))
            for s in p.free_symbols | q.free_symbols
        }
        assert p.xreplace(point) <= q.xreplace(point), (p, q, point)


@st.composite
def sums_of_maxima(draw: st.DrawFn):
    """A cost ``q``, a sum of maxima kept lazy, and a maximum ``p`` of sums of one part of each of them,
    sometimes scaled down or with a term added (so that ``p ≤ q`` may or may not hold)."""
    B, D, X = dim("B"), dim("D"), axis("X")
    atoms = [B, D, X, ss.symbols.W_ici]

    def term():
        coef = sympy.Rational(draw(st.integers(1, 8)), draw(st.sampled_from([1, 2, 4])))
        return coef * sympy.Mul(*[a ** draw(st.integers(-1, 1)) for a in atoms])

    terms = [[term() for _ in range(draw(st.integers(1, 3)))] for _ in range(draw(st.integers(2, 3)))]
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        chosen = sympy.Add(*[draw(st.sampled_from(options)) for options in terms])
        chosen = chosen * draw(st.sampled_from([1, sympy.Rational(1, 2), 2]))
        if draw(st.booleans()):
            chosen = chosen + term()
        parts.append(chosen)
    p = parts[0] if len(parts) == 1 else sympy.Max(*parts, evaluate=False)
    return p, [sympy.Max(*options, evaluate=False) if len(options) > 1 else options[0] for options in terms]


@PROPERTY
@given(sums_of_maxima(), st.integers(0, 2**20))
def test_proofs_against_the_parts_active_at_sample_points_hold_everywhere(case, seed):
    # brute force as the oracle: what less_equal proves with sample points (without expanding q) holds
    # at random exact points of the domain
    p, terms = case
    q = Lazy("sum", tuple(from_expr(t) for t in terms))
    symbols = p.free_symbols.union(*(t.free_symbols for t in terms))
    rng = random.Random(seed)
    samples = [
        {s: float(rng.choice([2, 4, 16])) if s.name.startswith("|") else 10 ** rng.uniform(-3, 6) for s in symbols}
        for _ in range(6)
    ]
    proved = less_equal(from_expr(p), q, Domain.around(symbols), samples)
    event(f"proved {proved}")
    if not proved:
        return
    for _ in range(20):
        point = {
            s: sympy.Integer(rng.choice([2, 3, 8, 64]))
            if s.name.startswith("|")
            else sympy.Rational(rng.randint(1, 10**6), rng.randint(1, 1000))
            for s in symbols
        }
        assert p.xreplace(point) <= sum(t.xreplace(point) for t in terms), (p, terms, point)


COMPARISONS = [
    ("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", "tpu-v5p"),
    ("X[B, D] · Y[D_X, F] -> Z[B, F]", "D", None),
    ("A[I, J_X] · B[J_X, K] -> C[I, K]", "K", "tpu-v5e"),
    ("A[I_X, J] · B[J, K_X] -> C[I_X, K]", "I", "tpu-v5e"),
    ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "I", "tpu-v5e"),
]


@pytest.mark.parametrize(("text", "symbol", "chip"), COMPARISONS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**30))
def test_the_fastest_strategy_lies_in_its_region_and_no_other(text, symbol, chip, seed):
    c = compare(text, symbol, hardware=chip)
    assert c.best, text
    rng = random.Random(seed)
    symbols = {
        sym
        for _, s in c.strategies
        for sym in (s.compute_time.free_symbols | s.hbm_time.free_symbols | s.bandwidth_comm_time.free_symbols)
    }
    point = _values(rng, symbols)
    if chip is not None:
        point.update(hardware(chip).constants())
    times = {}
    for i, s in c.strategies:  # T_hbm counts, as in the plan compare makes
        math_, hbm, comm = (e.xreplace(point) for e in (s.compute_time, s.hbm_time, s.bandwidth_comm_time))
        times[i] = max(math_, hbm, comm) if c.plan.overlap else max(math_, hbm) + comm
    fastest = min(times.values())
    winners = [i for i, t in times.items() if t == fastest]
    if len(winners) > 1 or any(
        t != fastest and abs(t - fastest) < fastest * Fraction(1, 10**9) for t in times.values()
    ):
        event("tie: skipped")
        return
    (winner,) = winners
    regions = {r.index: r.holds(point) for r in c.best}
    event(f"fastest: {winner}")
    assert regions.get(winner) is True, (winner, regions, {i: float(t) for i, t in times.items()})
    assert [i for i, inside in regions.items() if inside] == [winner], (winner, regions)


def test_compare_accepts_numbers_as_text_and_names():
    """``strategies="1,2"`` in Python is the command line's --strategies 1,2 (it used to raise ValueError)."""
    text = "X[B, D] · Y[D_X, F] -> Z[B, F]"
    by_text = compare(text, "B", strategies="1,2", hardware="tpu-v5p")
    by_list = compare(text, "B", strategies=[1, 2], hardware="tpu-v5p")
    assert [pr.a_wins.text() for pr in by_text.pairs] == [pr.a_wins.text() for pr in by_list.pairs]
    named = compare(text, "B", strategies=["AllGather_X(Y) → matmul", 1], hardware="tpu-v5p")
    assert [r.strategy.name for r in named.regimes][1] == "AllGather_X(Y) → matmul"
    with pytest.raises(PlanError, match="strategies takes strategy numbers"):
        compare(text, "B", strategies="one,two")


# -- best_sharding against brute force ---------------------------------------------------------------


def _exhaustive(chain, mesh, shape, chip, limit, overlap=True, comm_overlap="axes"):
    """The sharding search's space, walked in full: every compute sharding of each matmul, every storage
    of its operands that splits the compute sharding further (or the carried result), every resolution of
    its partial sums, every route of every leg; every combination of the stages, none pruned. Returns the
    fastest (time, memory) that fits."""
    from symshard.notation.einsums import local_product, matmul
    from symshard.planning.builder import Builder
    from symshard.planning.costenv import CostEnv
    from symshard.planning.search_stages import _extensions, _resolutions
    from symshard.planning.shardings import KEEP, axis_order, compute_array

    mms = [matmul(m) for m in chain]
    sizes = {d: sympy.Integer(v) for d, v in shape.items()}
    env = CostEnv(mesh, sizes, "bf16", hardware(chip), None, "book", comm_overlap)
    builder = Builder(env, overlap)
    names = list(mesh.names)
    partials = [(None, 0, 0, 0)]  # carried, time, resident, transient
    for k, mm in enumerate(mms):
        last = k == len(mms) - 1
        carried_name = mms[k - 1].out_name if k else None
        rank = axis_order(mm.dims, [mm.lhs, mm.rhs], names)
        grown = []
        for carried, time0, resident0, transient0 in partials:
            per_axis = [
                [None, *mm.dims] + ([KEEP] if carried is not None and a in carried.unreduced else []) for a in names
            ]
            for combo in itertools.product(*per_axis):
                sigma = {a: c for a, c in zip(names, combo, strict=True) if c is not None}
                computes = [compute_array(op, sigma, rank) for op in (mm.lhs, mm.rhs)]
                try:
                    local = local_product(computes[0], computes[1], mm.out_dims, mm.out_name)
                except PlanError:
                    continue
                sources = []
                for op, comp in zip((mm.lhs, mm.rhs), computes, strict=True):
                    if op.name == carried_name:
                        sources.append([carried])
                    else:
                        sources.append(_extensions(comp, set(comp.axes), names))
                for lhs_in, rhs_in in itertools.product(*sources):
                    for tgt in _resolutions(local, last):
                        arrays = [lhs_in, rhs_in, computes[0], computes[1], tgt]
                        if not all(env.fits(a) for a in arrays):
                            continue
                        stored = sum(env.bytes(a) for a in (lhs_in, rhs_in) if a is not carried)
                        sharding = tuple((a, sigma.get(a)) for a in names)
                        for s in builder.strategies(lhs_in, rhs_in, computes[0], computes[1], tgt, sharding):
                            if not all(env.fits(a) for a in intermediates(s)):
                                continue
                            grown.append((s.output, time0 + s.raw_time, resident0 + stored,
                                          max(transient0, s.raw_memory - stored)))  # fmt: skip
        partials = grown
    fits = [(t, r + m) for _, t, r, m in partials if limit is None or r + m <= limit]
    return min(fits) if fits else None


_TIGHTER = "a tighter memory limit on the same space, walked exhaustively again: about 4 to 6 s"


@pytest.mark.parametrize(
    ("limit", "overlap", "comm_overlap"),
    [(None, True, "axes"), pytest.param(3_000_000, True, "axes", marks=pytest.mark.slow(reason=_TIGHTER)),
     pytest.param(1_500_000, True, "axes", marks=pytest.mark.slow(reason=_TIGHTER)), (100_000, True, "axes"),
     (3_000_000, False, "none")],
)  # fmt: skip
def test_best_sharding_equals_an_exhaustive_walk_of_its_space(limit, overlap, comm_overlap):
    """Two chained matmuls on a 2x2 mesh: the dynamic program's best time is that of every combination of
    every way to run each matmul (none pruned), and nothing fits exactly when nothing does; also with
    the times added up (no overlap of compute and communication, collectives one after another)."""
    mesh = Mesh("X=2,Y=2", hardware="v5e")
    shape = {"B": 64, "D": 256, "F": 512}
    chain = ["x[B, D] · W_in[D, F] -> Tmp[B, F]", "Tmp[B, F] · W_out[F, D] -> Out[B, D]"]
    got = best_sharding(
        chain, mesh, shape, hardware="v5e", memory_limit=limit, overlap=overlap, comm_overlap=comm_overlap
    )
    want = _exhaustive(chain, mesh, shape, "v5e", limit, overlap, comm_overlap)
    if want is None:
        assert got.best is None
        return
    assert got.best is not None
    assert (got.best.raw_time, got.best.raw_memory) == want


@pytest.mark.parametrize(
    ("chip", "mesh", "overlap", "comm_overlap"),
    [("v5e", "X=2,Y=2", True, "axes"), ("v5e", "X=2,Y=2", False, "none"), ("h100", "X=4,Y=2", True, "axes"),
     ("v5p", "X=2,Y=2,Z=2", False, "axes")],
)  # fmt: skip
def test_best_sharding_compares_the_exact_costs_scaled(chip, mesh, overlap, comm_overlap):
    """The search compares each way to run a matmul on ints: the costs the planner works out exactly
    (``CostEnv.join``, ``Builder.memory``, Fractions), each multiplied by its stage's common denominator.
    For every way kept at both stages of a chain (the second from each sharding the first leaves), the ints
    are those exact costs scaled, ways whose legs both communicate among them."""
    from symshard.notation.einsums import matmul
    from symshard.planning.builder import Builder
    from symshard.planning.costenv import CostEnv
    from symshard.planning.search_stages import stage_options
    from symshard.planning.shardings import axis_order

    m = Mesh(mesh, hardware=chip)
    chain = [matmul("x[B, D] · W_in[D, F] -> Tmp[B, F]"), matmul("Tmp[B, F] · W_out[F, D] -> Out[B, D]")]
    sizes = {"B": sympy.Integer(256), "D": sympy.Integer(1024), "F": sympy.Integer(3072)}
    env = CostEnv(m, sizes, "bf16", hardware(chip), None, "book", comm_overlap)
    builder = Builder(env, overlap)
    names = list(m.names)
    carried: list[Array | None] = [None]
    several = 0  # ways whose collectives add up (or share links)
    for k, mm in enumerate(chain):
        rank = axis_order(mm.dims, [mm.lhs, mm.rhs], names)
        carried_name = chain[k - 1].out_name if k else None
        by_state, (per_second, per_byte) = stage_options(
            mm, carried, carried_name, {}, env, builder, rank, names, None, k == len(chain) - 1, overlap
        )
        assert per_second > 1  # times are fractions of a second: the ints are not the values themselves
        options = [o for group in by_state.values() for o in group]
        assert options
        for o in options:
            legs = tuple(r.leg for r in o.routes)
            comm = env.join(legs)
            compute = o.stage.local_time  # the local product: the larger of its compute and HBM times
            time = (comm if comm > compute else compute) if overlap else compute + comm
            stored = sum((env.bytes(a) for _, a in o.stored), 0)
            transient = builder.memory(o.lhs, o.rhs, *legs, o.stage.local) - stored
            assert (o.time, o.comm, o.stored_bytes, o.transient) == (
                time * per_second,
                comm * per_second,
                stored * per_byte,
                transient * per_byte,
            ), o
            several += sum(1 for leg in legs if leg.comm) >= 2
        carried = list({o.carried_out: None for o in options})
    assert several

"""The matmul planner against the chapter: the four cases, Questions 4, 5, 6, 7 and 9.

Expected formulas are written out from the chapter's own reasoning (bf16, the
``book`` model, ``W_ici`` bidirectional); none is computed by the code under test.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter
from typing import Any

import pytest
import sympy

from symshard.algebra.symbols import C, W_ici, axis, dim
from symshard.costs.collectives import FusedAllToAll, parse_collective
from symshard.errors import PlanError, ShardingError, TimeLimitError
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware
from symshard.notation.arrays import Array
from symshard.notation.einsums import local_product, matmul
from symshard.planning.crossovers import compare
from symshard.planning.planner import plan, reshard_routes, reshard_steps
from symshard.planning.route_search import every_route
from symshard.planning.route_steps import one_step
from symshard.planning.search import best_sharding
from symshard.planning.shardings import natural_outputs

B, D, F, I, J, K = (dim(n) for n in "BDFIJK")  # noqa: E741 - the chapter's dim names
X = axis("X")


def bandwidth_comm(strategy) -> sympy.Expr:
    return sympy.Add(*[sympy.sympify(st.timing.bandwidth_time) for st in strategy.collectives])


def by_name(p, name: str):
    """A strategy by name, whether the plan lists it (it can win somewhere) or not."""
    return p.strategy(name)


# -- the four cases ---------------------------------------------------------------------------

CASES = [
    ("A[I, J] · B[J, K] -> C[I, K]", 1, "no contracting dim (J) is sharded"),
    ("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", 1, "no communication"),
    ("A[I, J_X] · B[J, K] -> C[I, K]", 2, "A shards the contracting dim J along X but B does not"),
    ("A[I, J] · B[J_X, K] -> C[I, K]", 2, "B shards the contracting dim J along X but A does not"),
    ("A[I, J_X] · B[J_Y, K] -> C[I, K]", 2, "is sharded along X in A but along Y in B"),
    ("A[I, J_X] · B[J_X, K] -> C[I, K]", 3, "both operands shard the contracting dim J along X"),
    ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", 3, "partial sums"),
    ("A[I_X, J] · B[J, K_X] -> C[I_X, K]", 4, "mesh axis X shards I of A and K of B"),
    ("x[B_X, S, D_Y] · W[D_Y, F] -> y[B_X, S, F]", 3, "contracting dim D along Y"),  # N-D
    ("x[B, S, D] · W[D, F_Y] -> y[B, S, F_Y]", 1, "no contracting dim (D)"),
]


@pytest.mark.parametrize(("text", "case", "reason"), CASES)
def test_classification(text, case, reason):
    got = matmul(text).classify()
    assert got.case == case
    assert reason in got.reason
    assert got.reason.endswith(".")


def test_einsum_roles():
    mm = matmul("P[B, I, J] · Q[B, J, K] -> R[B, I, K]")
    assert mm.contracting == ("J",) and mm.batch == ("B",)
    mm = matmul("x[B, S, D] · W[D, F] -> y[B, S, F]")
    assert mm.contracting == ("D",) and mm.batch == () and mm.dims == ("B", "S", "D", "F")
    mm = matmul("A[I, J] · B[J, K]")  # no output given: shared dims are contracted
    assert mm.out_dims == ("I", "K") and mm.out_name == "Out"  # never C, the FLOP/s symbol
    assert matmul("A[I, J, L] · B[J, K] -> C[I, K]").summed == ("L",)


def test_local_products():
    assert str(local_product(Array.parse("A[I, J_X]"), Array.parse("B[J_X, K]"), ("I", "K"))) == "Out[I, K]{U_X}"
    assert str(local_product(Array.parse("A[I_X, J]"), Array.parse("B[J, K_Y]"), ("I", "K"))) == "Out[I_X, K_Y]"
    with pytest.raises(PlanError, match="do not line up: J is split along X in A but along nothing in B"):
        local_product(Array.parse("A[I, J_X]"), Array.parse("B[J, K]"), ("I", "K"))
    with pytest.raises(PlanError, match="Case 4: mesh axis X shards both I and K"):
        local_product(Array.parse("A[I_X, J]"), Array.parse("B[J, K_X]"), ("I", "K"))
    # partial sums carry through a product when the other operand does not use the axis
    assert str(local_product(Array.parse("T[B, F]{U_Y}"), Array.parse("W[F, D]"), ("B", "D"), "O")) == "O[B, D]{U_Y}"


def test_natural_outputs():
    assert [str(a) for a in natural_outputs(matmul("A[I_X, J] · B[J, K_Y]"))] == ["Out[I_X, K_Y]"]
    assert [str(a) for a in natural_outputs(matmul("A[I, J_X] · B[J_X, K]"))] == ["Out[I, K]"]
    assert [str(a) for a in natural_outputs(matmul("A[I_X, J] · B[J, K_X]"))] == ["Out[I_X, K]", "Out[I, K_X]"]


# -- resharding one array ------------------------------------------------------------------------

RESHARD = [
    ("A[I_X, J]", "A[I, J]", ["AllGather_X"]),
    ("A[I_XY, J]", "A[I_X, J]", ["AllGather_Y"]),  # the minor axis goes first: exact blocks
    ("A[I_X, J]", "A[I, J_X]", ["AllToAll_{X,J}"]),
    ("A[I, J]", "A[I_X, J_Y]", ["DynamicSlice_{X,I}", "DynamicSlice_{Y,J}"]),
    ("C[I, K]{U_X}", "C[I, K]", ["AllReduce_X"]),
    ("C[I, K]{U_X}", "C[I, K_X]", ["ReduceScatter_{X,K}"]),
    ("C[I, K]{U_XY}", "C[I_Y, K]", ["ReduceScatter_{Y,I}", "AllReduce_X"]),
    ("C[I_Y, K]{U_X}", "C[I, K]", ["AllReduce_X", "AllGather_Y"]),  # reduce while still split
    ("A[I_XY, J]", "A[I_YX, J]", ["AllGather_XY", "DynamicSlice_{YX,I}"]),
]


@pytest.mark.parametrize(("src", "dst", "ops"), RESHARD)
def test_reshard_steps(src, dst, ops):
    steps = reshard_steps(Array.parse(src), Array.parse(dst))
    assert [str(s.op) for s in steps] == ops
    assert steps[-1].output == Array.parse(dst)


# routes XLA takes besides the plain one (each with the routes it is read from in the 4x2 sweep)
ROUTES = [
    # slice the idle axis first, move Y over in one all-to-all, then one permute puts K_XY in K_YX order
    ("B[J_Y, K]", "B[J, K_YX]", ["DynamicSlice_{X,K}", "AllToAll_{Y,K}", "CollectivePermute_{XY,K_YX}"]),
    # gather the axis the destination does not use, then move X to K with one all-to-all
    ("B[J_X, K_Y]", "B[J, K_X]", ["AllGather_Y", "AllToAll_{X,K}"]),
    # reduce the whole array first, then slice (XLA's all-reduce + dynamic-slice when Y is not the major axis)
    ("C[I, K]{U_Y}", "C[I_XY, K]", ["AllReduce_Y", "DynamicSlice_{XY,I}"]),
    # all-reduce one axis, reduce-scatter the other onto the dim it arrives on, then slice
    ("C[I, K]{U_XY}", "C[I_X, K_Y]", ["AllReduce_Y", "ReduceScatter_{X,I}", "DynamicSlice_{Y,K}"]),
    # reduce, then move the reduced blocks from Y onto X with one permute
    ("C[I, K_Y]{U_X}", "C[I, K_X]", ["AllReduce_X", "CollectivePermute_{XY,K_X}"]),
    # move J's Y shards onto X with a permute, then X to K with an all-to-all
    ("B[J_Y, K]", "B[J, K_X]", ["CollectivePermute_{XY,J_X}", "AllToAll_{X,K}"]),
    # a roundabout: Y's shards permuted onto X, which the destination does not use, then gathered over X
    ("A[I_Y, J]", "A[I, J]", ["CollectivePermute_{XY,I_X}", "AllGather_X"]),
]


@pytest.mark.parametrize(("src", "dst", "ops"), ROUTES)
def test_reshard_routes_xla_takes(src, dst, ops):
    routes = reshard_routes(Array.parse(src), Array.parse(dst), (("X", 4), ("Y", 2)), xla=True)
    assert routes[0] == reshard_steps(Array.parse(src), Array.parse(dst))  # the plain route first
    found = [[str(s.op) for s in r] for r in routes]
    assert ops in found
    assert all(r[-1].output == Array.parse(dst) for r in routes if r)


# on the refined mesh P=2,Q=2,Y=2 (X=4 split in halves): XLA permutes to the target with some of the
# departing axes kept, then gathers them (the sweep's sub-axis cases), also after reducing first
REFINED_ROUTES = [
    ("B[J, K_PQ]", "B[J, K_Y]", ["CollectivePermute_{PQY,K_YP}", "AllGather_P"]),
    ("B[J_Y, K_PQ]", "B[J, K_Y]", ["CollectivePermute_{PY,J_P,K_YQ}", "AllGather_Q", "AllGather_P"]),
    ("C[I, K_PQ]{U_Y}", "C[I, K_Y]", ["AllReduce_Y", "CollectivePermute_{PQY,K_YP}", "AllGather_P"]),
    # gather the axis the destination does not use, then move both halves of X in one all-to-all
    ("B[J_PQ, K_Y]", "B[J, K_PQ]", ["AllGather_Y", "AllToAll_{PQ,K}"]),
]


@pytest.mark.parametrize(("src", "dst", "ops"), REFINED_ROUTES)
def test_reshard_routes_xla_keeps_some_departing_axes(src, dst, ops):
    sizes = (("P", 2), ("Q", 2), ("Y", 2))
    xla = [[str(s.op) for s in r] for r in reshard_routes(Array.parse(src), Array.parse(dst), sizes, xla=True)]
    plain = [[str(s.op) for s in r] for r in reshard_routes(Array.parse(src), Array.parse(dst), sizes)]
    assert ops in xla and ops not in plain  # an XLA order: opt-in


# on a mesh of three axes XLA takes further orders (``wide``): the sweep's cases on X=2,Y=2,Z=2
THREE_AXIS_ROUTES = [
    # the departing axes in XLA's order (I_XZ, not A's Z then X), then gathered
    ("A[I_ZY, J_X]", "A[I, J_Y]", ["CollectivePermute_{XYZ,I_XZ,J_Y}", "AllGather_XZ"]),
    # slice the idle axis first, so that one AllToAll over two axes moves half the block, then permute
    ("B[J_YX, K]", "B[J, K_XZY]", ["DynamicSlice_{Z,K}", "AllToAll_{YX,K}", "CollectivePermute_{XYZ,K_XZY}"]),
    # everything gathered, even the axis the destination keeps major, then sliced
    ("A[I_Z, J_X]", "A[I_ZXY, J]", ["AllGather_X", "AllGather_Z", "DynamicSlice_{ZXY,I}"]),
    # an AllToAll to an array of the destination's block shape over other axes, then one permute
    ("A[I_Z, J_X]", "A[I_XY, J]", ["AllToAll_{X,I}", "CollectivePermute_{XYZ,I_XY}"]),
    # shards permuted onto the idle axis X only to be gathered over it
    ("B[J, K_YZ]", "B[J, K_Z]", ["CollectivePermute_{XYZ,K_ZX}", "AllGather_X"]),
]


@pytest.mark.parametrize(("src", "dst", "ops"), THREE_AXIS_ROUTES)
def test_reshard_routes_xla_on_three_axes(src, dst, ops):
    sizes = (("X", 2), ("Y", 2), ("Z", 2))
    a, b = Array.parse(src), Array.parse(dst)
    wide = reshard_routes(a, b, sizes, xla=True, wide=True)
    assert ops in [[str(s.op) for s in r] for r in wide]
    assert ops not in [[str(s.op) for s in r] for r in reshard_routes(a, b, sizes, xla=True)]  # three axes only
    for route in wide:  # each step takes the array the last one left, and the last leaves dst
        assert all(s.operand == prev.output for prev, s in itertools.pairwise(route))
        assert route[0].operand == a and route[-1].output == b
        for s in route:  # a permute names every dim it changes (no free cut hidden behind its name)
            if s.op.kind == "CollectivePermute":
                changed = [e for d, e in zip(s.operand.dims, s.output.dims, strict=True) if d.axes != e.axes]
                assert all(set(e.axes) & set(s.op.axes) for e in changed), str(s)


def test_xla_orders_of_three_axes_follow_the_mesh_xla_partitioned_for():
    mm, shape = "A[I_Z, J_X] · B[J_YX, K] -> C[I_XY, K_Z]", "I=96,J=48,K=80"
    three = plan(mm, "X=2,Y=2,Z=2", shape, routes="xla")
    refined = plan(mm, "X=2,Y=2,Z=2", shape, routes="xla", partitioned_axes=2)  # as if X·Y were one axis
    assert len(three.strategies) > len(refined.strategies)

    def steps(p) -> set[tuple[str, ...]]:  # every strategy's collectives, read from its legs (none built)
        return {
            tuple(str(s.op.op) for leg in p.strategies.legs(i) for s in leg.steps) for i in range(len(p.strategies))
        }

    mine, theirs = steps(refined), steps(three)
    assert mine <= theirs
    # XLA's plan for this case: an AllToAll, then a permute to the block shape wanted, on three axes only
    wanted = ("AllToAll_{X,I}", "CollectivePermute_{XYZ,I_XY}", "AllGather_YX", "DynamicSlice_{Z,K}")
    assert wanted in theirs and wanted not in mine


@pytest.mark.parametrize(
    ("src", "dst", "sizes", "axes"),
    [
        # Q shards K behind as many shards before (P) as after (Y): every block keeps its Q coordinate
        ("B[J_Y, K_PQ]", "B[J_P, K_YQ]", {"P": 2, "Q": 2, "Y": 2}, ("P", "Y")),
        ("B[J, K_PQ]", "B[J, K_YQ]", {"P": 2, "Q": 2, "Y": 2}, ("P", "Y")),
        # more blocks before than after: no permute; behind 2 shards before and 4 after: Q's coordinate changes
        ("B[J, K_PQ]", "B[J, K_YQ]", {"P": 4, "Q": 2, "Y": 2}, None),
        ("B[J, K_YQ]", "B[J, K_PQ]", {"P": 4, "Q": 2, "Y": 2}, ("P", "Q", "Y")),
        # symbolic sizes: kept only behind the same axes
        ("B[J, K_PQ]", "B[J, K_YQ]", None, ("P", "Q", "Y")),
        ("B[J, K_PQ]", "B[J_Y, K_PQ]", None, None),  # a free slice, not a permute
        ("A[I_X, J_Q]", "A[I_Y, J_Q]", None, ("X", "Y")),
    ],
)
def test_permute_names_the_axes_its_pairs_cross(src, dst, sizes, axes):
    from symshard.planning.route_steps import single_permute

    moved = single_permute(Array.parse(src), Array.parse(dst), sizes)
    assert (moved.op.axes if moved is not None else None) == axes


def test_reshard_cannot_create_partial_sums():
    with pytest.raises(PlanError, match="no collective creates partial sums over X"):
        reshard_steps(Array.parse("C[I, K]"), Array.parse("C[I, K]{U_X}"))


# -- Question 4: AllGather the weight, or multiply locally and AllReduce -------------------------------

Q4 = "X[B, D] · Y[D_X, F] -> Z[B, F]"


def test_question_4_strategy_costs():
    p = plan(Q4)
    s1 = by_name(p, "AllGather_X(Y) → matmul")  # the chapter's Strategy 1
    s2 = by_name(p, "DynamicSlice_{X,D}(X) → matmul → AllReduce_X(Z)")  # its Strategy 2
    # Strategy 1: max(2BDF/C, 2DF/W_ici)
    assert sympy.simplify(s1.compute_time - 2 * B * D * F / C) == 0
    assert sympy.simplify(bandwidth_comm(s1) - 2 * D * F / W_ici) == 0
    # Strategy 2: max(2BDF/(X C), 4BF/W_ici)
    assert sympy.simplify(s2.compute_time - 2 * B * D * F / (X * C)) == 0
    assert sympy.simplify(bandwidth_comm(s2) - 4 * B * F / W_ici) == 0
    assert s2.flops_per_device == 2 * B * D * F / X
    assert [str(step) for step in s2.steps] == [
        "DynamicSlice_{X,D}(X[B, D]) -> X[B, D_X]",
        "X[B, D_X] · Y[D_X, F] -> Z[B, F]{U_X}",
        "AllReduce_X(Z[B, F]{U_X}) -> Z[B, F]",
    ]


def test_question_4_crossovers():
    # the chapter's two strategies, compared as the chapter does: T_math against T_comms, HBM left out
    c = compare(Q4, "B", hardware="tpu-v5p", strategies=[1, 2], hbm=False)
    names = [r.strategy.name for r in c.regimes]
    s1 = names.index("AllGather_X(Y) → matmul")
    s2 = names.index("DynamicSlice_{X,D}(X) → matmul → AllReduce_X(Z)")
    # Strategy 1 is communication-bound iff B < C / W_ici, about 2550 on a v5p
    r1 = c.regimes[s1]
    (case,) = r1.communication_bound.cases
    assert case.relations == (sympy.Lt(B, C / W_ici),)
    assert r1.numeric.cases[0].relations == (sympy.Lt(B, 2550),)
    # Strategy 2 is compute-bound only when D / (2|X|) > C / W_ici: independent of B
    (case,) = c.regimes[s2].communication_bound.cases
    assert case.relations == (sympy.Lt(D, 2 * C * X / W_ici),)
    # when both are communication-bound, Strategy 2 wins iff D > 2B
    pair = next(pr for pr in c.pairs if {pr.a, pr.b} == {s1 + 1, s2 + 1})
    two_wins = pair.a_wins if pair.a == s2 + 1 else pair.b_wins
    both = [cs for cs in two_wins.cases if cs.label.count("communication-bound") == 2]
    assert len(both) == 1
    assert sympy.Lt(B, D / 2) in both[0].relations
    # and when Strategy 1 is compute-bound (B > 2550) Strategy 2 wins iff D > 2 C / W_ici (5100 on v5p)
    mixed = [cs for cs in two_wins.cases if f"{s1 + 1} compute-bound" in cs.label]
    assert any(
        sympy.Lt(D, 2 * C / W_ici).reversed in cs.relations or sympy.Gt(D, 2 * C / W_ici) in cs.relations
        for cs in mixed
    )
    # numerically on a v5p: B = 1000, D = 8192 -> both communication-bound and 8192 > 2000: Strategy 2
    assert two_wins.holds({B: 1000, D: 8192, X: 4, **hardware("v5p").constants()}) is True
    assert two_wins.holds({B: 5000, D: 4096, X: 4, **hardware("v5p").constants()}) is False


def test_question_4_regions_in_the_fewest_relations():
    """By default compare keeps the strategies that can be the fastest: the chapter's two and the AllToAll
    (strategy 3); the local strategy and the gather never touch (the AllToAll lies between), and where
    the local strategy is the fastest reads in the book's terms (HBM left out, as the chapter reasons)."""
    c = compare(Q4, "B", hardware="tpu-v5p", hbm=False)
    assert [r.index for r in c.best] == [1, 2, 3] and c.mode == "best"
    assert {(pr.a, pr.b) for pr in c.pairs} == {(1, 3), (2, 3)}
    one = c.region(1)
    assert one is not None and one.neighbours == (3,)
    assert one.numeric.text() == "2·B·D < 5100·B·|X| + 1275·D·|X| and ((D > 5100·|X|) or (B < D/4))"


def test_question_4_with_hbm_keeps_the_chapter_s_answers_and_adds_memory():
    """T_hbm counted (the plan matmul lists): each strategy's communication-bound condition is still the
    chapter's (it compares T_comms with T_math), the memory-bound one is where T_hbm is the largest, and
    the chapter's two strategies compare in three relations: its "D > 2B", its "D > 5100", and HBM's."""
    c = compare(Q4, "B", hardware="tpu-v5p", strategies=[1, 2])
    assert c.plan.hbm and [s.name for _, s in c.strategies] == [s.name for s in plan(Q4).strategies[:2]]
    local, gather = c.regimes
    assert gather.communication_bound.cases[0].relations == (sympy.Lt(B, C / W_ici),)
    assert gather.numeric.cases[0].relations == (sympy.Lt(B, 2550),)
    assert local.communication_bound.cases[0].relations == (sympy.Lt(D, 2 * C * X / W_ici),)
    v5p = hardware("v5p").constants()
    for regime in (local, gather):
        s = regime.strategy
        for b, d, f in [(16, 8192, 8192), (128, 64, 64), (4096, 8192, 32768), (64, 16, 65536)]:
            point = {B: b, D: d, F: f, X: 4}
            m, h, t = (sympy.sympify(e).xreplace({**point, **v5p}) for e in (s.compute_time, s.hbm_time,
                                                                             s.bandwidth_comm_time))  # fmt: skip
            assert regime.memory_bound.holds({**point, **v5p}) is bool(h > max(m, t))
            assert regime.numeric_memory.holds(point) is bool(h > max(m, t))
    (pair,) = c.pairs
    texts = [case.text() for part in pair.numeric_a_wins.parts for case in part.cases]
    assert "D > 5100" in texts and "B < D/2" in texts and len(texts) == 3


@pytest.mark.parametrize(
    ("mm", "symbol", "options"),
    [
        (Q4, "D", dict(shape="F=4096,B=2048", mesh="X=8", hardware="tpu-v5p", hbm=False)),
        (Q4, "D", dict(shape="F=4096,B=2048", mesh="X=8", hardware="tpu-v5p")),
        (Q4, "B", dict(hardware="tpu-v5p")),
        ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "J", dict(shape="K=4096,I=8192", hardware="tpu-v5p")),
        ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "I", dict(hardware="tpu-v5e")),
    ],
)
def test_conditions_say_nothing_twice(mm, symbol, options):
    """The issue's "(J > 5100) or (J > 4096)" and "J < 4096 and J < 4096": in every condition compare writes,
    symbolic or on the chip, no case holds two bounds on one side of a symbol, no case of a union implies
    another, and no relation is said twice in a conjunction of clauses."""
    from symshard.algebra.conditions import Clauses
    from symshard.algebra.inequalities import implies

    c = compare(mm, symbol, **options)
    found = [r.communication_bound for r in c.regimes] + [r.numeric for r in c.regimes]
    found += [r.memory_bound for r in c.regimes] + [r.numeric_memory for r in c.regimes]
    found += [w for pr in c.pairs for w in (pr.a_wins, pr.b_wins, pr.numeric_a_wins, pr.numeric_b_wins)]
    found += [r.condition for r in c.best] + [r.numeric for r in c.best]
    checked = 0
    for cond in (x for x in found if x is not None):
        parts = cond.parts if isinstance(cond, Clauses) else (cond,)
        said = [r.key for p in parts if len(p.cases) == 1 for r in p.cases[0].exact]
        assert len(said) == len(set(said)), cond.text()
        for p in parts:
            for case in p.cases:
                sides = [(r.target, r.upper, r.power) for r in case.exact if r.target is not None]
                assert len(sides) == len(set(sides)), case.text()
            for a, b in itertools.permutations(p.cases, 2):
                assert not (a.label == b.label and implies(a.exact, b.exact, p.domain)), p.text()
            checked += 1
    assert checked > 5


# -- Question 5: the fastest way to a replicated result on a v5p 4x4x4 ------------------------------------


def test_question_5_candidates():
    p = plan("A[I, J] · B[J, K] -> C[I, K]", Mesh("X=4,Y=4,Z=4", topology="ring"))
    one = by_name(p, "DynamicSlice_{XYZ,I}(A) → matmul → AllGather_XYZ(C)")  # A[I_XYZ, J] · B + AG
    two = by_name(p, "DynamicSlice_{XYZ,K}(B) → matmul → AllGather_XYZ(C)")  # A · B[J, K_XYZ] + AG
    three = by_name(p, "DynamicSlice_{XYZ,J}(A) → DynamicSlice_{XYZ,J}(B) → matmul → AllReduce_XYZ(C)")
    four = by_name(p, "matmul")  # fully replicated
    for s in (one, two, three):
        assert s.flops_per_device == 2 * I * J * K / 64
    assert four.flops_per_device == 2 * I * J * K
    # (1) and (2) gather C (2IK bytes) over three axes: 2IK / (3 W_ici); (3) all-reduces it: twice that
    assert sympy.simplify(bandwidth_comm(one) - 2 * I * K / (3 * W_ici)) == 0
    assert bandwidth_comm(one) == bandwidth_comm(two)
    assert sympy.simplify(bandwidth_comm(three) - 2 * bandwidth_comm(one)) == 0
    assert bandwidth_comm(four) == 0


def test_question_5_numbers_on_v5p():
    v5p = hardware("v5p")
    mesh = Mesh("X=4,Y=4,Z=4", hardware=v5p)
    p = plan("A[I, J] · B[J, K] -> C[I, K]", mesh, "I=8192,J=8192,K=8192", hardware=v5p)
    one = by_name(p, "DynamicSlice_{XYZ,I}(A) → matmul → AllGather_XYZ(C)")
    two = by_name(p, "DynamicSlice_{XYZ,K}(B) → matmul → AllGather_XYZ(C)")
    three = by_name(p, "DynamicSlice_{XYZ,J}(A) → DynamicSlice_{XYZ,J}(B) → matmul → AllReduce_XYZ(C)")
    assert one.time == two.time < three.time
    assert p.best.time == one.time  # nothing beats the tie between (1) and (2)
    # best_sharding reaches the same time when it may store the inputs any way it likes
    r = best_sharding("A[I, J] · B[J, K] -> C[I, K]", mesh, "I=8192,J=8192,K=8192", hardware=v5p, out="C[I, K]")
    assert r.best.time == one.time


# -- Question 6: three settings on a TPU v5e 4x4 (no wraparound) ----------------------------------------

V5E = hardware("v5e")
V5E_MESH = Mesh("X=4,Y=4", hardware=V5E)


def test_question_6_tensor_and_data_parallel_with_reduction():
    # A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]: multiply locally, then AllReduce_Y the partial sums
    p = plan("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", V5E_MESH)
    s = by_name(p, "matmul → AllReduce_Y(C)")
    assert sympy.simplify(s.compute_time - 2 * I * J * K / (16 * C)) == 0
    # C[I_X, K] is I K / 4 elements of bf16; a 4-wide v5e axis has no wraparound:
    # AllReduce = 2 x 3/4 x V over one-way links of W_ici / 2
    assert sympy.simplify(bandwidth_comm(s) - 3 * I * K / (2 * W_ici)) == 0
    numeric = plan("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", V5E_MESH, "I=8192,J=8192,K=8192", hardware=V5E)
    assert numeric.best.name == "matmul → AllReduce_Y(C)"
    assert numeric.best.bound == "communication"


def test_question_6_training_setting():
    # A[I_X, J] · B[J_X, K_Y] -> C[I_X, K_Y]: B's contracting dim is sharded along X, which also
    # shards A's batch dim, so B must be gathered over X (FSDP)
    p = plan("A[I_X, J] · B[J_X, K_Y] -> C[I_X, K_Y]", V5E_MESH)
    s = by_name(p, "AllGather_X(B) → matmul")
    assert sympy.simplify(s.compute_time - I * J * K / (8 * C)) == 0
    assert sympy.simplify(bandwidth_comm(s) - 3 * J * K / (4 * W_ici)) == 0  # B[J, K_Y] is JK/4 elements
    numeric = plan("A[I_X, J] · B[J_X, K_Y] -> C[I_X, K_Y]", V5E_MESH, "I=65536,J=8192,K=32768", hardware=V5E)
    assert numeric.best.name == "AllGather_X(B) → matmul"
    assert numeric.best.bound == "compute"


def test_question_6_inference_setting():
    # A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]: Case 1, no communication at all
    p = plan("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", V5E_MESH, "I=1024,J=8192,K=32768", hardware=V5E)
    assert p.classification.case == 1
    assert p.best.name == "matmul" and p.best.comm_time == 0
    assert p.best.time == sympy.Rational(2 * 1024 * 8192 * 32768, 16) / V5E.flops_bf16


# -- Question 7: a Transformer block on a v5e 2x2 with 300 MB free per chip ------------------------------


def test_question_7_block_under_memory_limit():
    chain = ["x[B, D] · W_in[D, F] -> Tmp[B, F]", "Tmp[B, F] · W_out[F, D] -> Out[B, D]"]
    r = best_sharding(chain, "X=2,Y=2", "B=128,D=8192,F=32768", hardware="v5e", memory_limit="300MB")
    best = r.best
    # each weight is 512 MiB in bf16: only a four-way split fits next to the other one
    for name in ("W_in", "W_out"):
        assert sorted(best.sharding(name).axes) == ["X", "Y"]
    assert best.memory_bytes_per_device <= 300 * 10**6
    # the four chips split all the work, and the communication hides behind it
    total_flops = 2 * 2 * 128 * 8192 * 32768
    assert best.compute_time == sympy.Rational(total_flops, 4) / V5E.flops_bf16
    assert best.comm_time < best.compute_time
    # but at 128 tokens each chip reads its quarter of both weights (2 x 128 MiB) from HBM for longer than it
    # multiplies: the book's answer leaves HBM out (hbm=False), where compute binds
    stage_hbm = [s.hbm_time for s in best.stages]
    assert best.time == sum(max(s.compute_time, s.hbm_time, s.comm_time) for s in best.stages)
    assert all(h > s.compute_time for h, s in zip(stage_hbm, best.stages, strict=True))
    weights = 2 * (8192 * 32768 * 2 // 4)  # the two weights' quarters, read once each
    assert sum(s.hbm_bytes_per_device for s in best.stages) >= weights
    book = best_sharding(chain, "X=2,Y=2", "B=128,D=8192,F=32768", hardware="v5e", memory_limit="300MB", hbm=False)
    assert book.best.time == book.best.compute_time == best.compute_time
    # storing a weight split only two ways would not fit
    too_big = best_sharding(
        chain, "X=2,Y=2", "B=128,D=8192,F=32768", hardware="v5e", memory_limit="300MB",
        fixed={"W_in": "W_in[D, F_X]"},
    )  # fmt: skip
    assert too_big.best is None
    assert "nothing fits" in too_big.explain()[0]


# -- Question 9: reduce-scatter after the product, or gather first ---------------------------------------


def test_question_9_communication_ratio():
    # A[I, J_X] *_J B[J, K] -> C[I, K_X]: gather A (I J elements) or reduce-scatter C (I K): ratio J / K
    p = plan("A[I, J_X] · B[J, K] -> C[I, K_X]")
    gather = by_name(p, "AllGather_X(A) → matmul → DynamicSlice_{X,K}(C)")
    scatter = by_name(p, "DynamicSlice_{X,J}(B) → matmul → ReduceScatter_{X,K}(C)")
    assert sympy.simplify(bandwidth_comm(gather) / bandwidth_comm(scatter) - J / K) == 0
    # the algorithm of part 1: local outer products, then AllReduce, for a replicated result
    full = plan("A[I, J_X] · B[J, K] -> C[I, K]")
    assert any(s.name == "DynamicSlice_{X,J}(B) → matmul → AllReduce_X(C)" for s in full.strategies)
    # part 2: reduce-scatter onto either dim instead
    rows = plan("A[I, J_X] · B[J, K] -> C[I_X, K]")
    assert any(s.name == "DynamicSlice_{X,J}(B) → matmul → ReduceScatter_{X,I}(C)" for s in rows.strategies)


# -- requests that cannot be met ---------------------------------------------------------------------


def test_impossible_requests_are_explained():
    with pytest.raises(ShardingError, match="mesh axis X shards both I and K"):
        matmul("A[I_X, J] · B[J, K] -> C[I_X, K_X]")
    with pytest.raises(PlanError, match=r"output dim L of C\[I, L\] appears in neither"):
        matmul("A[I, J] · B[J, K] -> C[I, L]")
    with pytest.raises(PlanError, match="names K under the product sign, but the contracted dims are J"):
        matmul("A[I, J] ·_K B[J, K]")
    with pytest.raises(PlanError, match=r"the local product in .* is C\[I, K\]\{U_X\}, not C\[I, K\]"):
        matmul("A[I, J_X] ·_LOCAL B[J_X, K] -> C[I, K]")
    with pytest.raises(PlanError, match="'Q' does not appear in the strategies' costs"):
        compare(Q4, "Q")


def test_batch_matmul_plans():
    p = plan("x[B_X, S, D] · W[D, F_Y] -> y[B_X, S, F_Y]", "X=2,Y=2", "B=8,S=16,D=32,F=64", hardware="v5e")
    assert p.best.name == "matmul"
    assert p.best.flops_per_device == 2 * 8 * 16 * 32 * 64 // 4


def test_serial_time_is_the_sum():
    p = plan(Q4, "X=4", "B=512,D=8192,F=8192", hardware="v5p", overlap=False)
    for s in p.strategies:
        assert s.time == s.compute_time + s.comm_time
        assert s.overlap_time == max(s.compute_time, s.comm_time)


@pytest.mark.parametrize(
    ("text", "natural"),
    [
        ("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "matmul"),  # Case 1
        ("A[I, J_X] · B[J, K] -> C[I, K]", "AllGather_X(A) → matmul"),  # Case 2
        ("A[I, J_X] · B[J_X, K] -> C[I, K]", "matmul → AllReduce_X(C)"),  # Case 3
        ("A[I, J_X] · B[J_X, K] -> C[I, K_X]", "matmul → ReduceScatter_{X,K}(C)"),
        ("X[B, D] · Y[D_X, F] -> Z[B, F]", "AllGather_X(Y) → matmul"),  # Question 4's Strategy 1
    ],
)
def test_natural_strategy_follows_the_chapters_rules(text, natural):
    assert plan(text).natural.name == natural


def test_float_constants_are_made_exact():
    """A constant given as a float (1e-6 s) is read as the exact decimal, as hardware presets are."""
    from symshard.algebra.symbols import T_hop, W_ici

    p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", mesh="X=4", shape="B=1024,D=8192,F=8192", hardware="tpu-v5p",
             constants={T_hop: 1e-6})  # fmt: skip
    q = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", mesh="X=4", shape="B=1024,D=8192,F=8192", hardware="tpu-v5p",
             constants={T_hop: sympy.Rational(1, 10**6)})  # fmt: skip
    assert [s.time for s in p.strategies] == [s.time for s in q.strategies]
    gather = parse_collective("AllGather_X([E_X, F])")
    given = gather.cost("X=4", "E=1024,F=1024", hardware="tpu-v5p", constants={W_ici: 1e11})
    exact = gather.cost("X=4", "E=1024,F=1024", hardware="tpu-v5p", constants={W_ici: sympy.Integer(10**11)})
    assert given.time == exact.time and given.time.is_Rational


def test_compare_drops_cases_that_contradict_themselves():
    """Every case of every pair can happen: a case that pins a dim (``D = C·|X|/W``) keeps no bound that
    excludes that value, and a sampled point satisfies each case with an equality."""
    import random

    c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies="all")
    rng = random.Random(4)
    for pair in c.pairs:
        for case in (*pair.a_wins.cases, *pair.b_wins.cases):
            equalities = [r for r in case.relations if isinstance(r, sympy.Eq)]
            if not equalities:
                continue
            found = False
            for _ in range(400):
                symbols = {sym for r in case.relations for sym in r.free_symbols}
                values = {sym: sympy.Integer(rng.choice([2, 3, 4, 8, 16, 100, 2550, 10**4, 10**6])) for sym in symbols}
                for eq in equalities:
                    values[eq.lhs] = eq.rhs.subs(values)
                if all(bool(r.subs(values)) for r in case.relations):
                    found = True
                    break
            assert found, f"{pair.a} vs {pair.b}: {case.text()} never holds"


# -- the quick answer: best_strategy ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]",  # needs no collective and splits the work: the fast path
        "A[I, J_X] · B[J_X, K] -> C[I, K_X]",
        "A[I, J] · B[J, K] -> C[I, K]",  # no collective needed, but Y and X idle: slicing can be faster
        "A[I_XY, J] · B[J, K_X] -> C[I_Y, K_X]",
        "A[I_X, J] · B[J, K] -> C[I_X, K]",  # no collective, Y idle
    ],
)
@pytest.mark.parametrize("shape", ["I=64,J=64,K=64", "I=8192,J=8192,K=8192"])
def test_best_strategy_is_plans_best(text, shape):
    from symshard.planning.planner import best_strategy

    for routes in ("standard", "xla"):
        want = plan(text, "X=4,Y=2", shape, dtype="fp32", hardware="tpu-v5e", routes=routes).best
        assert best_strategy(text, "X=4,Y=2", shape, dtype="fp32", hardware="tpu-v5e", routes=routes) == want


@pytest.mark.parametrize(("mesh", "chip"), [("X=4,Y=2", "tpu-v5e"), ("X=2,Y=2,Z=2", "tpu-v5p"), ("X=8,Y=2", "h100")])
def test_best_strategy_is_plans_best_on_drawn_cases(mesh, chip):
    # brute force as the oracle for the branch and bound: on 2-D matmuls drawn with a seed, on TPU tori and on
    # a GPU cluster (links of two levels), at a latency-bound size and a bandwidth-bound one, the quick answer
    # is the full plan's best (its bounds on T_comms, per link where collectives overlap, never cut the winner)
    from symshard.jax.sweeps import shardings
    from symshard.planning.planner import best_strategy

    axes = [part.split("=")[0] for part in mesh.split(",")]
    lhs, rhs, out = (shardings(n, d, axes) for n, d in (("A", "IJ"), ("B", "JK"), ("C", "IK")))
    rng = random.Random(f"best of {mesh}")
    for _ in range(20):
        text = f"{rng.choice(lhs)} · {rng.choice(rhs)} -> {rng.choice(out)}"
        for shape in ("I=64,J=64,K=64", "I=8192,J=8192,K=8192"):
            want = plan(text, mesh, shape, dtype="fp32", hardware=chip).best
            got = best_strategy(text, mesh, shape, dtype="fp32", hardware=chip)
            assert got is not None and (got.name, got.time) == (want.name, want.time), text


@pytest.mark.parametrize(("mesh", "chip"), [("X=4,Y=2", "tpu-v5e"), ("X=2,Y=2,Z=2", "tpu-v5p"), ("X=8,Y=2", "h100")])
def test_listing_in_integers_is_the_exact_sort(mesh, chip, monkeypatch):
    # the listing scales times and bytes to integers and joins legs pair by pair; the oracle works out each
    # strategy's key on its own in exact fractions and sorts them: the same strategies in the same order, on
    # drawn matmuls, bytes in halves (int4) and whole, collectives overlapping across axes or not
    from symshard.jax.sweeps import shardings
    from symshard.planning.enumeration import Enumeration

    axes = [part.split("=")[0] for part in mesh.split(",")]
    lhs, rhs, out = (shardings(n, d, axes) for n, d in (("A", "IJ"), ("B", "JK"), ("C", "IK")))
    rng = random.Random(f"listing on {mesh}")
    for _ in range(6):
        text = f"{rng.choice(lhs)} · {rng.choice(rhs)} -> {rng.choice(out)}"
        for dtype, overlap in (("fp32", "axes"), ("int4", "none")):
            kwargs: dict[str, Any] = {"dtype": dtype, "hardware": chip, "comm_overlap": overlap, "all": True}
            kwargs["routes"] = "standard" if len(axes) > 2 else "xla"  # XLA's orders on three axes: 10⁵ strategies
            fast = plan.__wrapped__(text, mesh, "I=96,J=64,K=80", **kwargs).strategies
            with monkeypatch.context() as m:
                m.setattr(Enumeration, "_ranked", Enumeration._sorted_exactly)
                slow = plan.__wrapped__(text, mesh, "I=96,J=64,K=80", **kwargs).strategies
            assert len(fast) == len(slow) > 0
            assert list(fast._recipes) == list(slow._recipes), (text, dtype, overlap)
            for i in range(0, len(fast), max(1, len(fast) // 25)):  # the legs read straight from the routes
                assert fast.legs(i) == slow.legs(i) and fast.flops(i) == slow.flops(i), (text, i)


@pytest.mark.parametrize(
    ("case", "mesh"),
    [
        ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K_Y]", "X=4,Y=2"),
        ("A[I_ZY, J] · B[J_XYZ, K] -> C[I_XZY, K]", "X=2,Y=2,Z=2"),
        ("Q[B_X, H, S, E] · R[B, H_X, T, E] -> C[B_X, H, S, T]", "X=4,Y=2"),
    ],
)
def test_collectives_read_from_the_legs_are_each_strategys(case, mesh):
    # what verify compares with XLA's plan for every listed strategy, read from the legs pair by pair without
    # building a strategy, against each strategy built and read
    from symshard.jax.xla_plans import signature, signatures  # imports no JAX

    shape = "B=8,H=4,S=16,T=16,E=32" if case.startswith("Q") else "I=96,J=64,K=80"
    p = plan.__wrapped__(case, mesh, shape, dtype="fp32", hardware="tpu-v5e", routes="xla")
    sigs = signatures(p)
    assert len(sigs) == len(p.strategies) > 50
    for i in sorted({*range(0, len(sigs), max(1, len(sigs) // 400)), len(sigs) - 1}):
        assert sigs[i] == signature(p.strategies[i], p), i


def test_best_strategy_symbolic_is_none():
    from symshard.planning.planner import best_strategy

    assert best_strategy("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]") is None


# -- the cold path: branch and bound, caches --------------------------------------------------------


def _sweep_sample(step: int) -> list[str]:
    import itertools

    from symshard.notation.arrays import Dim

    def shardings(name, dims):
        out = []
        for assign in itertools.product([None, *dims], repeat=2):
            per = {d: [a for a, t in zip(("X", "Y"), assign, strict=True) if t == d] for d in dims}
            for combo in itertools.product(*[list(itertools.permutations(per[d])) for d in dims]):
                out.append(Array(name, tuple(Dim(d, tuple(c)) for d, c in zip(dims, combo, strict=True))))
        return out

    cases = [
        f"{a} · {b} -> {c}"
        for a, b, c in itertools.product(shardings("A", "IJ"), shardings("B", "JK"), shardings("C", "IK"))
    ]
    return cases[::step]


@pytest.mark.parametrize("case", _sweep_sample(97))
@pytest.mark.parametrize(
    "options",
    [
        {"shape": "I=64,J=64,K=64"},
        {"shape": "I=4096,J=1024,K=8192"},
        {"shape": "I=64,J=64,K=64", "overlap": False, "model": "ring"},
        {"shape": "I=64,J=128,K=256", "dtype": "bf16", "routes": "xla"},
    ],
)
def test_best_strategy_bounds_keep_plans_best(case, options):
    """The lower bounds that let best_strategy skip compute shardings never skip plan's best (ties included)."""
    from symshard.planning.planner import best_strategy

    kwargs = {"dtype": "fp32", "hardware": "tpu-v5e", **options}
    shape = kwargs.pop("shape")
    want = plan(case, "X=4,Y=2", shape, **kwargs).best
    got = best_strategy(case, "X=4,Y=2", shape, **kwargs)
    assert got == want
    assert got.raw_memory == want.raw_memory and got.steps == want.steps


@pytest.mark.parametrize(
    "src, dst",
    [
        ("A[I_X, J]", "A[I, J_X]"),
        ("A[I_XY, J]", "A[I, J_YX]"),
        ("C[I, K]{U_XY}", "C[I_Y, K_X]"),
        ("C[I_X, K]{U_Y}", "C[I, K]"),
        ("B[J, K_Y]", "B[J, K_X]"),
        ("B[J_YX, K]", "B[J_X, K_Y]"),
    ],
)
@pytest.mark.parametrize("model", ["book", "ring"])
@pytest.mark.parametrize(("mesh", "chip"), [("X=4,Y=2", "tpu-v5e"), ("X=8,Y=2", "h100")])
def test_hop_floor_is_below_every_route(src, dst, model, mesh, chip):
    """The search's floors hold for every route: its time, and how long it keeps each link busy."""
    from symshard.planning.builder import Builder
    from symshard.planning.costenv import CostEnv

    a, b = Array.parse(src), Array.parse(dst)
    env = CostEnv(
        Mesh(mesh, hardware=chip), {d: sympy.Integer(64) for d in a.dim_names}, "fp32", hardware(chip), None, model
    )
    floor = env.hop_floor(a, b)
    assert floor > 0
    loads = env.floor_loads(a, b)
    assert loads and set(loads.values()) == {floor}
    legs = Builder(env, True, xla=True).routes(a, b, "out")
    assert min(leg.comm for leg in legs) >= floor
    for leg in legs:
        busy = dict(leg.loads)
        assert all(busy.get(link, 0) >= least for link, least in loads.items()), (leg, loads)


@pytest.mark.parametrize(("mesh", "shape"), [("X=4,Y=2", {"I": 96, "J": 6}), ("X=2,Y=2,Z=3", {"I": 12, "J": 18})])
def test_fits_in_integers_is_placements_rule(mesh, shape):
    # with every size a number the planner checks divisibility in integers; placement's own check is the oracle
    from symshard.costs.placement import check_on_mesh
    from symshard.errors import DivisibilityError
    from symshard.jax.sweeps import shardings
    from symshard.planning.costenv import CostEnv

    m = Mesh(mesh)
    sizes = {d: sympy.Integer(n) for d, n in shape.items()}
    env = CostEnv(m, sizes, "fp32", hardware("tpu-v5e"), None, "book")
    assert env.numeric
    verdicts = set()
    for array in shardings("A", "IJ", list(m.names)):
        text = str(array)
        try:
            check_on_mesh(array, m, sizes)
            divides = True
        except DivisibilityError:
            divides = False
        assert env.fits(array) == divides, text
        verdicts.add(divides)
    assert verdicts == {True, False}


def test_clear_caches_forgets_the_routes():
    from symshard.memo import clear_caches

    reshard_routes(Array.parse("A[I_X, J]"), Array.parse("A[I, J_X]"))
    assert reshard_routes.cache_info().currsize > 0
    clear_caches()
    assert reshard_routes.cache_info().currsize == 0
    assert reshard_steps.cache_info().currsize == 0


# -- a search for one set of collectives, against the listing ------------------------------------------


def _steps_signature(steps) -> tuple:
    return tuple(sorted((e.op.kind, tuple(e.op.axes), str(e.output)) for e in steps if e.op.kind != "DynamicSlice"))


@pytest.mark.parametrize(
    ("mm", "mesh", "shape"),
    [
        ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K_Y]", "X=4,Y=2", "I=64,J=64,K=64"),
        ("A[I, J_X] · B[J_X, K] -> C[I, K_X]", "X=2,Y=4", "I=64,J=64,K=64"),
        ("A[G, I_Y, J] · B[G_X, J, K] -> C[G_Y, I, K_X]", "X=2,Y=2", "G=16,I=48,J=32,K=80"),
    ],
)
def test_a_search_for_collectives_finds_exactly_the_listed_strategies_that_have_them(mm, mesh, shape):
    # brute force as the oracle: every listed strategy's collectives, grouped; the search for each group
    # (and for one no strategy has) returns exactly its members, without listing
    p = plan(mm, mesh, shape, hardware="tpu-v5e", routes="xla", all=True)
    assert p.source.count() == len(p.strategies)
    groups: dict[tuple, set[str]] = {}
    for s in p.strategies:
        groups.setdefault(_steps_signature(tuple(st.op for st in s.collectives)), set()).add(s.name)
    rng = random.Random(7)
    for target in rng.sample(sorted(groups), min(12, len(groups))):
        found = p.matching(_steps_signature, target)
        assert {s.name for s in found} == groups[target]
        assert [s.time for s in found] == sorted(s.time for s in found)  # fastest first
    assert p.matching(_steps_signature, (("AllGather", ("X",), "nothing"),)) == []


def test_an_unlisted_strategy_is_placed_among_the_listed():
    p = plan("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", hardware="tpu-v5e", routes="xla",
             all=True)  # fmt: skip
    for i in (0, 5, len(p.strategies) - 1):
        s = p.strategies[i]
        place = p.place(s)
        before = [t for t in p.strategies if (t.time, t.comm_time, t.memory_bytes_per_device, len(t.steps))
                  < (s.time, s.comm_time, s.memory_bytes_per_device, len(s.steps))]  # fmt: skip
        assert place == len(before) + 1 and place <= i + 1


# -- every route of the algebra, searched step by step -------------------------------------------------

_TWO = (("X", 4), ("Y", 2))
_THREE = (("X", 2), ("Y", 2), ("Z", 2))


def _item(e) -> tuple | None:
    """A step as a search reads it: kind, axes and the array it leaves (free slices: None)."""
    return None if e.op.kind == "DynamicSlice" else (e.op.kind, tuple(e.op.axes), str(e.output))


def _budget(steps) -> tuple[Counter, Counter]:
    items = Counter(i for e in steps if (i := _item(e)) is not None)
    kinds = Counter(e.op.kind for e in steps if e.op.kind != "DynamicSlice")
    return items, kinds


@pytest.mark.parametrize(
    ("src", "dst", "sizes"),
    [
        ("A[I_X, J]", "A[I, J_X]", _TWO),
        ("C[I, K]{U_X}", "C[I_Y, K_X]", _TWO),
        ("C[I, K_XY]", "C[I, K_Y]", _TWO),
        ("B[J_Y, K_X]", "B[J_X, K]", _TWO),
        ("A[I, J]", "A[I_X, J_Y]", _TWO),
        ("A[I_ZY, J_X]", "A[I_XZ, J]", _THREE),
        ("B[J_XZ, K_Y]", "B[J, K_ZY]", _THREE),
        ("C[G_X, I, K]{U_YZ}", "C[G_Y, I_X, K_Z]", _THREE),
        ("A[G_Y, I_X, J_Z]", "A[G_ZY, I, J]", _THREE),
        ("P[B, H, S_Y, T_X]", "P[B_Y, H_X, S, T]", _TWO),  # two dims moved at once: a fused all-to-all
        ("P[B, H, S_XZ, T_Y]", "P[B_Y, H_XZ, S, T]", _THREE),
    ],
)
def test_every_route_finds_each_of_the_planners_routes(src, dst, sizes):
    # the planner's routes, XLA's orders and further orders among them, are routes of the algebra: a search
    # given one's own steps finds it, and every route it finds is valid step by step and draws on that budget
    a, b = Array.parse(src), Array.parse(dst)
    routes = reshard_routes(a, b, sizes, xla=True, wide=len(sizes) == 3)
    assert routes
    for route in routes:
        items, kinds = _budget(route)
        found = every_route(a, sizes, _item, items, kinds, keep=10**6)  # every route, none left out
        assert route in [steps for steps, _ in found], [str(e.op) for e in route]
        # with the default, a few routes for each array and items: one of them ends where the route ends
        few = every_route(a, sizes, _item, items, kinds)
        assert (b, items) in [(steps[-1].output if steps else a, Counter(used)) for steps, used in few]
        for steps, used in found:
            cur = a
            for e in steps:
                assert e.operand == cur and e.op.apply(cur) == e.output
                cur = e.output
            assert not Counter(used) - items and Counter(used) == Counter(i for e in steps if (i := _item(e)))


def test_every_route_takes_only_exact_steps():
    # each step of one_step moves axes at the minor end of dims: gathers, all-to-alls and slices warn of nothing
    sizes = (("X", 2), ("Y", 2), ("Z", 2))
    kinds = set()
    for text in ("A[I_XY, J_Z]", "C[I_X, K]{U_YZ}", "Q[B_Z, H, S_Y, E]", "Q[B, H, S_YX, E]"):
        steps = one_step(Array.parse(text), sizes)
        kinds |= {e.op.kind for e in steps}
        for e in steps:
            assert not e.op.notes(e.operand), str(e)
            assert e.op.apply(e.operand) == e.output
    assert kinds == {"DynamicSlice", "AllGather", "AllToAll", "AllReduce", "ReduceScatter", "CollectivePermute"}


def test_a_search_through_every_route_holds_the_listed_strategies_with_those_collectives():
    # brute force as the oracle: wherever the listing has a strategy with one set of collectives, the search
    # through every route finds one with the same compute sharding (it may find more: routes the planner does
    # not list; and of routes alike in their arrays and collectives it keeps a few)
    p = plan("A[G, I_Y, J] · B[G_X, J, K] -> C[G_Y, I, K_X]", "X=2,Y=2", "G=16,I=48,J=32,K=80", hardware="tpu-v5e",
             routes="xla", all=True)  # fmt: skip
    groups: dict[tuple, dict[str, Any]] = {}
    for s in p.strategies:
        groups.setdefault(_steps_signature(tuple(st.op for st in s.collectives)), {})[s.name] = s
    rng = random.Random(11)
    for target in rng.sample(sorted(groups), 6):
        kinds = Counter(k for k, _, _ in target)
        found = p.matching(_steps_signature, target, any_route=True, kinds=kinds)
        assert {s.sharding for s in groups[target].values()} <= {s.sharding for s in found}
        assert all(_steps_signature(tuple(st.op for st in s.collectives)) == target for s in found)


def _three_permutes() -> tuple[Any, tuple]:
    """A plan whose XLA plan no listing holds (three permutes around a gather), and XLA's collectives."""
    p = plan("A[I, J_XY] · B[J_Y, K_X] -> C[I, K_Y]", "X=4,Y=4", "I=96,J=48,K=80", hardware="tpu-v5e", routes="xla")
    target = tuple(sorted([
        ("CollectivePermute", ("X", "Y"), "A[I, J_YX]"), ("AllGather", ("X",), "A[I, J_Y]"),
        ("CollectivePermute", ("X", "Y"), "A[I, J_X]"), ("CollectivePermute", ("X", "Y"), "B[J_X, K_Y]"),
        ("AllReduce", ("X",), "C[I, K_Y]"),
    ]))  # fmt: skip
    return p, target


def test_a_strategy_found_step_by_step_can_be_one_no_plan_lists():
    # XLA's plan for this matmul permutes A twice around a gather, then permutes B: three permutes, a route no
    # plan lists (nor XLA's further orders); the search through every route finds it, and places it
    p, target = _three_permutes()
    assert p.matching(_steps_signature, target) == [] and p.matching(_steps_signature, target, further=True) == []
    found = p.matching(_steps_signature, target, any_route=True, kinds=Counter(k for k, _, _ in target))
    a = "CollectivePermute_{XY,J_YX}(A) → AllGather_X(A) → CollectivePermute_{XY,J_X}(A)"
    assert [s.name for s in found] == [a + " → CollectivePermute_{XY,J_X,K_Y}(B) → matmul → AllReduce_X(C)"]
    assert p.place(found[0]) == 400  # of the 1,040 listed


def test_every_search_for_a_known_plan_stops_at_its_deadline():
    # a deadline already past stops each search before it finds anything; without one the same search finds
    # XLA's plan (the test above), so the error is the deadline's, not the search's
    p, target = _three_permutes()
    kinds = Counter(k for k, _, _ in target)
    past = time.perf_counter() - 1
    for how in ({}, {"further": True}, {"any_route": True, "kinds": kinds}):
        with pytest.raises(TimeLimitError, match="the search ran past its time limit"):
            p.matching(_steps_signature, target, deadline=past, **how)
    assert len(p.matching(_steps_signature, target, any_route=True, kinds=kinds, deadline=past + 3600)) == 1
    items, kinds = _budget(reshard_routes(Array.parse("B[J_XZ, K_Y]"), Array.parse("B[J, K_ZY]"), _THREE)[0])
    with pytest.raises(TimeLimitError):
        every_route(Array.parse("B[J_XZ, K_Y]"), _THREE, _item, items, kinds, deadline=past)


# -- several all-to-alls at once -------------------------------------------------------------------


def test_a_fused_all_to_all_is_its_moves_in_one_exchange():
    # brute force as the oracle: every fused all-to-all one_step offers, on arrays of three and four dims over
    # two and three axes, leaves the array its moves leave one after another, and is costed as one all-to-all
    # over all its axes: no more than the moves one by one (each device sends its block's (n-1)/n once)
    m = Mesh("X=2,Y=2,Z=2", hardware="tpu-v5e")
    seen = 0
    for text, sizes in (
        ("P[B, H, S_Y, T_X]", _TWO), ("Q[B_X, H, S_Y, E]", _TWO), ("P[B, H_Z, S_XY, T]", _THREE),
        ("A[G_X, I_Y, J_Z]", _THREE), ("Q[B, H_YZ, S, E_X]", _THREE),
    ):  # fmt: skip
        a = Array.parse(text)
        for e in one_step(a, sizes, ("AllToAll",)):
            if not isinstance(e.op, FusedAllToAll):
                continue
            seen += 1
            cur = a
            for move in e.op.moves:
                cur = move.apply(cur)
            assert (
                e.output == cur
                and e.op.kind == "AllToAll"
                and e.op.axes == tuple(x for mv in e.op.moves for x in mv.axes)
            )
            assert sorted(e.op.axes) == sorted(x for mv in e.op.moves for x in mv.axes) and not e.notes
            if len(sizes) == 3:
                shape = {d: 64 for d in a.dim_names}
                at_once = e.op.cost(a, m, shape, hardware="tpu-v5e").time
                one_by_one, cur = 0, a
                for move in e.op.moves:
                    one_by_one += move.cost(cur, m, shape, hardware="tpu-v5e").time
                    cur = move.apply(cur)
                assert at_once < one_by_one
    assert seen >= 8


@pytest.mark.parametrize(
    ("src", "moves", "message"),
    [
        ("P[B, H, S_Y, T_X]", [("Y", "B"), ("X", "B")], "its moves share a dim"),
        ("A[I_X, J_Y]", [("X", "J"), ("Y", "I")], "its moves share a dim"),  # a swap: each piece is no block
        ("P[B, H, S_Y, T_X]", [("Y", "B")], "it fuses fewer than two moves"),
        ("P[B, H, S_Y, T]", [("Y", "B"), ("X", "H")], "it is not sharded along X"),
    ],
)
def test_a_fused_all_to_all_refuses_moves_that_are_not_one_exchange(src, moves, message):
    from symshard.costs.collectives import AllToAll
    from symshard.errors import CollectiveError

    fused = FusedAllToAll.of([AllToAll((axis,), dim) for axis, dim in moves])
    with pytest.raises(CollectiveError, match=message):
        fused.apply(Array.parse(src))


def test_the_planner_moves_two_dims_at_once_as_xla_does():
    # XLA reshards P[B, H, S_Y, T_X] to P[B_Y, H_X, S, T] with one all-to-all over X and Y; the planner lists
    # that route (standard and XLA's), and its strategy moves less than the two all-to-alls one after another
    src, dst = Array.parse("P[B, H, S_Y, T_X]"), Array.parse("P[B_Y, H_X, S, T]")
    for xla in (False, True):
        names = [[str(e.op) for e in r] for r in reshard_routes(src, dst, _TWO, xla=xla)]
        assert ["AllToAll_{X→H,Y→B}"] in names and ["AllToAll_{Y,B}", "AllToAll_{X,H}"] in names
    p = plan("P[B, H, S_Y, T_X] · V[B, H, T, E] -> O[B_Y, H_X, S, E]", "X=4,Y=2", "B=16,H=16,S=48,T=32,E=16",
             hardware="tpu-v5e", routes="xla")  # fmt: skip
    at_once = p.strategy("AllToAll_{X→H,Y→B}(P) → DynamicSlice_{Y,B}(V) → DynamicSlice_{X,H}(V) → matmul")
    one_by_one = p.strategy(
        "AllToAll_{Y,B}(P) → AllToAll_{X,H}(P) → DynamicSlice_{Y,B}(V) → DynamicSlice_{X,H}(V) → matmul"
    )
    assert at_once.comm_time < one_by_one.comm_time and p.place(at_once) < p.place(one_by_one)
    # its step, as the plan prints it, reads back as the same collective
    step = at_once.steps[0].op
    assert str(step) == "AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X]) -> P[B_Y, H_X, S, T]"
    assert parse_collective(str(step)) == step

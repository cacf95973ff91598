"""The sweep against XLA: its committed data checked, and a seeded sample of its cases run again live.

``scripts/jax_agreement.py`` runs the whole sweep (:data:`symshard.jax.sweeps.SWEEP`: 2-D matmuls,
batch dims and attention-shaped einsums on meshes of 8 and 16 devices, fp32 and bf16) and writes
``site/data/jax-agreement.json``, which the docs page reads. These tests read that file: it must be
the sweep the code defines, its figures must add up, every strategy it ran must have given the
product, every disagreement must be named with both plans' costs, and agreement must hold per mesh.
Then a few of its cases, drawn with a fixed seed from every mesh, are verified again here, in JAX on
16 simulated devices, and must come out exactly as the file says. Marked ``jax``.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path

import pytest

from symshard.jax.sweeps import FAMILIES, MESHES_8, MESHES_16, NEW_MESHES, REAL_EINSUMS, SWEEP, Batch, _row, cases

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "site" / "data" / "jax-agreement.json").read_text(encoding="utf-8"))
ROWS = DATA["rows"]

pytestmark = pytest.mark.jax

AGREEMENT_TARGET = 0.95


def _summary(rows: list[dict]) -> dict:
    """The figures the sweep writes for a set of rows, worked out again from the rows."""
    matches = sum(r["match"] for r in rows)
    refined = sum(bool(r.get("refined") and r["refined"]["match"]) and not r["match"] for r in rows)
    routed = sum(r["match"] and r["routed"] for r in rows)
    refined_routed = sum(bool(r.get("refined") and r["refined"]["match"] and r["refined"]["routed"]) for r in rows)
    return {
        "cases": len(rows),
        "matches": matches,
        "refined_cases": sum("refined" in r for r in rows),
        "matches_refined": refined,
        "agreement": round(matches / len(rows), 4),
        "agreement_combined": round((matches + refined) / len(rows), 4),
        "matches_routed": routed,
        "matches_refined_routed": refined_routed,
        "agreement_planned": round((matches - routed) / len(rows), 4),
        "agreement_combined_planned": round((matches - routed + refined - refined_routed) / len(rows), 4),
        "rank_1": sum(r["rank"] == 1 for r in rows),
        "equal_in_cost": sum(r["equal_in_cost"] for r in rows),
        "cheaper_than_best": sum(r["xla_cheaper"] for r in rows),
        "cheaper_latency_bound": sum(r["xla_cheaper"] and r["best_regime"] == "latency" for r in rows),
        "xla_cheaper": sum(r["xla_cheaper"] and not (r["match"] and not r["routed"]) for r in rows),
        "planner_work": sum(r["planner_work"] for r in rows),
        "dot_flops_agree": sum(r["flops_agree"] is True for r in rows),
        "total_flops_agree": sum(r["total_flops_agree"] is True for r in rows),
        "strategies_run": sum(r["ran"] for r in rows),
        "strategies_ok": sum(r["ran_ok"] for r in rows),
        "search_stopped": sum("search_stopped" in r for r in rows),
    }


# -- the data is the sweep the code defines ----------------------------------------------------------


def test_the_data_is_the_sweep_of_the_code():
    # batch by batch, the rows are exactly the cases the sweep's seed draws (no JAX needed to draw them)
    assert [(b["family"], b["mesh"], b["dtype"]) for b in DATA["batches"]] == [
        (b.family.name, b.mesh, b.dtype) for b in SWEEP
    ]
    by_batch = defaultdict(list)
    for r in ROWS:
        by_batch[(r["family"], r["mesh"], r["dtype"])].append(r["matmul"])
    for b in SWEEP:
        assert by_batch[(b.family.name, b.mesh, b.dtype)] == [str(m) for m in cases(b, DATA["seed"])], b.key


def test_every_mesh_shape_family_and_dtype_is_swept():
    meshes = {r["mesh"] for r in ROWS}
    assert meshes == set(MESHES_8) | set(MESHES_16)
    assert {"X=8", "X=4,Y=2", "X=2,Y=4", "X=2,Y=2,Z=2", "X=4,Y=4", "X=2,Y=2,Z=4"} <= meshes  # the six
    for mesh in meshes:
        families = {r["family"] for r in ROWS if r["mesh"] == mesh}
        assert {"batched", "attention-scores", "attention-values"} <= families, mesh
        assert families & {"matmul", "matmul-odd"}, mesh
    assert {r["dtype"] for r in ROWS} == {"fp32", "bf16"}
    assert {r["mesh"] for r in ROWS if r["dtype"] == "bf16"} >= {"X=8", "X=4,Y=4", "X=2,Y=2,Z=2"}
    # every sharding of the 2-D matmul where there are 1,331 or fewer cases on a mesh of two axes or one
    full = [b for b in DATA["batches"] if b["family"] == "matmul" and not b["drawn"] and b["dtype"] == "fp32"]
    assert {b["mesh"] for b in full} >= {"X=8", "X=4,Y=2"} and all(b["cases"] == b["of"] for b in full)


def test_the_einsum_kinds_real_models_use_are_swept_on_the_new_meshes():
    # issue 36: two contracting dims, a dim summed inside one operand, outer products, matrix-vector products,
    # rank-4 results, sizes that are not powers of two, bf16 contracting 1,024 and more; on 16, 8x2, 2x8, 4x2x2
    assert set(NEW_MESHES) == {"X=16", "X=8,Y=2", "X=2,Y=8", "X=4,Y=2,Z=2"} <= {r["mesh"] for r in ROWS}
    for mesh in NEW_MESHES:
        families = {r["family"] for r in ROWS if r["mesh"] == mesh}
        assert set(REAL_EINSUMS) | {"matmul-odd"} <= families, mesh
        deep = [r for r in ROWS if r["mesh"] == mesh and r["dtype"] == "bf16"]
        assert deep and all(_contracted(r) >= 1024 for r in deep), mesh
    for family in REAL_EINSUMS:  # on the first sweep's meshes too
        assert {r["mesh"] for r in ROWS if r["family"] == family} >= set(MESHES_8), family
    shapes = {f: dict(kv.split("=") for kv in FAMILIES[f].shape.split(",")) for f in FAMILIES}
    odd = [f for f in FAMILIES if any(int(v) & (int(v) - 1) for v in shapes[f].values())]
    assert set(REAL_EINSUMS) <= set(odd)  # sizes of 48, 80, 96: not powers of two


def _contracted(row: dict) -> int:
    """The elements each result element sums, from the row's family."""
    f = FAMILIES[row["family"]]
    sizes = {k: int(v) for k, v in (kv.split("=") for kv in f.shape.split(","))}
    mm = f.matmul
    total = 1
    for d in mm.contracting:
        total *= sizes[d]
    return total


def test_agreement_on_each_einsum_kind():
    # 95 % or more of each einsum kind's cases agree on the mesh as written (by whole axes or axes in parts)
    for family in FAMILIES:
        rows = [r for r in ROWS if r["family"] == family]
        agree = sum(bool(r["matched_on"]) for r in rows)
        assert rows and agree >= AGREEMENT_TARGET * len(rows), (family, agree, len(rows))


def test_the_figures_add_up():
    for b in DATA["batches"]:
        rows = [r for r in ROWS if (r["family"], r["mesh"], r["dtype"]) == (b["family"], b["mesh"], b["dtype"])]
        assert {k: b[k] for k in _summary(rows)} == _summary(rows), b
    for m in DATA["meshes"]:
        rows = [r for r in ROWS if r["mesh"] == m["mesh"]]
        assert {k: m[k] for k in _summary(rows)} == _summary(rows), m["mesh"]
    assert {k: DATA["total"][k] for k in _summary(ROWS)} == _summary(ROWS)


# -- what every case must show -----------------------------------------------------------------------


def test_every_strategy_run_gave_the_product():
    assert all(r["ran"] >= 1 for r in ROWS)  # at least symshard's best ran in every case
    assert [r["matmul"] for r in ROWS if r["ran_ok"] != r["ran"]] == []
    assert DATA["total"]["strategies_ok"] == DATA["total"]["strategies_run"] > len(ROWS)


def test_a_match_is_a_strategy_with_xlas_dot_flops():
    assert [r["matmul"] for r in ROWS if r["match"] and r["flops_agree"] is not True] == []
    # where XLA repeats no work, some strategy does as many FLOPs as its dots
    assert [r["matmul"] for r in ROWS if not r["xla_repeats_work"] and r["flops_agree"] is False] == []


def test_total_flops_are_the_dots_plus_the_adds_of_reductions_and_the_rest():
    # fp32: the rest is a few index computations; bf16 adds the converts to f32 and back
    for r in ROWS:
        rest = r["xla_flops"] - r["xla_dot_flops"] - r["xla_reduction_flops"]
        if r["family"] == "outer":  # XLA's multiply does one FLOP per element where a dot of one element does two
            rest += r["xla_dot_flops"] // 2
        assert rest >= 0, r["matmul"]
        if r["family"] == "summed":  # the rest holds the local sum's adds too (a reduce; symshard counts them as well,
            continue  # checked case by case in tests/jax/test_jax_real_einsums.py)
        if r["dtype"] == "fp32":
            assert rest <= 16, (r["matmul"], rest)
        if r["match"]:  # the total equals symshard's count exactly when XLA adds nothing to the dots
            assert r["total_flops_agree"] == (r["xla_flops"] == r["xla_dot_flops"]), r["matmul"]
    # the two comparisons differ, which is why the page reports both
    assert DATA["total"]["dot_flops_agree"] > DATA["total"]["total_flops_agree"]


def test_every_disagreement_is_named_with_both_plans_costs():
    for r in ROWS:
        cheaper = r["xla_bytes"] <= r["best_bytes"] and r["xla_dot_flops"] <= r["best_flops"]
        cheaper = cheaper and (r["xla_bytes"], r["xla_dot_flops"]) != (r["best_bytes"], r["best_flops"])
        assert r["xla_cheaper"] == cheaper, r["matmul"]
        if r["match"]:
            assert r["reason"] == ""
            continue
        assert "closest symshard strategy" in r["reason"] or "searched by its collectives" in r["reason"], r
        assert r["xla_bytes"] >= 0 and r["best_bytes"] >= 0 and r["xla_dot_flops"] > 0 and r["best_flops"] > 0


def _cheaper(xla: tuple[int, int], best: tuple[int, int]) -> bool:
    return xla[0] <= best[0] and xla[1] <= best[1] and xla != best


def test_planner_work_is_what_no_best_of_symshards_is_as_cheap_as():
    # XLA's plan is none the planner offers (by whole axes or with axes in parts; a route found only step by
    # step is none), nor equal in cost to one, and costs less, both in bytes received and FLOPs, than
    # symshard's best by whole axes and than its best with the axes XLA splits in parts
    for r in ROWS:
        xla = (r["xla_bytes"], r["xla_dot_flops"])
        parts = r.get("refined")
        expected = (
            not (r["match"] and not r["routed"])
            and not r["equal_in_cost"]
            and not (parts and parts["match"] and not parts["routed"])
            and _cheaper(xla, (r["best_bytes"], r["best_flops"]))
            and (parts is None or _cheaper(xla, (parts["best_bytes"], parts["best_flops"])))
        )
        assert r["planner_work"] == expected, r["matmul"]
    # most of XLA's cheaper plans by whole axes are plans with axes in parts that symshard lists with --split
    assert DATA["total"]["planner_work"] < DATA["total"]["xla_cheaper"] / 2


def test_routes_found_step_by_step_ran_correctly_and_are_counted_apart():
    # a match through routes no plan lists counts only if it ran correctly, and is placed among the listed
    for r in ROWS:
        if r["routed"]:
            assert r["match"] and not r["further"] and r["ran_ok"] == r["ran"] >= 1 and r["rank"] >= 1, r["matmul"]
        parts = r.get("refined")
        if parts and parts["routed"]:
            assert parts["match"] and parts["searched"] and parts["executed_ok"] is True, r["matmul"]
    for m in DATA["meshes"]:
        planned = m["matches"] - m["matches_routed"]
        assert m["agreement_planned"] == round(planned / m["cases"], 4)


def test_matches_with_axes_in_parts_ran_correctly_and_are_kept_apart():
    for r in ROWS:
        refined = r.get("refined")
        if refined is None:
            assert r["matched_on"] == ("mesh" if r["match"] else None)
            continue
        assert not r["match"] and ":" in " ".join(r["xla"]) + r["reason"]  # XLA shards by part of an axis
        assert all(":" not in c for c in refined["xla"])  # with the axes in parts every group is whole parts
        assert re.search(
            r"\b(?P<axis>[A-Z])1=\d+,(?P=axis)2=", refined["devices"]
        )  # a split axis's parts are named X1, X2, ...
        if refined["match"]:
            assert refined["executed_ok"] is True and r["matched_on"] == f"mesh in parts {refined['mesh']}"
        else:
            assert r["matched_on"] is None


MESHES = [m["mesh"] for m in DATA["meshes"]]
# agreement on the mesh as written: XLA's plan is one of symshard's strategies on the same mesh and
# devices, over whole mesh axes or, where XLA itself shards by part of a mesh axis (Shardy's X:(1)2), over
# those parts (symshard's plan with the axis in parts, `--split`: the same devices in the same order).
# The meshes below the target, and why; strict: a mesh that reaches it fails here until it leaves the list
BELOW_TARGET = {
    "X=2,Y=2,Z=2,W=2": "beyond the issue's six meshes, four axes of two (54 sampled cases): XLA takes two roundabout "
    "routes through a permute and gathers, and two all-to-alls over three axes with permutes, that no strategy has",
}


@pytest.mark.parametrize(
    "mesh",
    [
        pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=BELOW_TARGET[m])) if m in BELOW_TARGET else m
        for m in MESHES
    ],
)
def test_agreement_on_each_mesh_as_written(mesh):
    m = next(x for x in DATA["meshes"] if x["mesh"] == mesh)
    assert (m["matches"] + m["matches_refined"]) / m["cases"] >= AGREEMENT_TARGET


# counting only plans over whole mesh axes, the meshes below the target: there XLA shards by part of an axis
# in more than one case in twenty, and no strategy over whole axes can be such a plan (its device groups are
# no whole axes), so the target is out of reach by whole axes alone (checked below from the data)
BELOW_TARGET_BY_WHOLE_AXES = {
    "X=4,Y=2": "XLA shards by half of X (X:(1)2, X:(2)2) in 6.0% of the cases; nearly all match with X in parts",
    "X=2,Y=4": "XLA shards by half of Y in 5.5% of the cases; every one matches with Y in parts",
    "X=2,Y=2,Z=4": "XLA shards by half of Z in 18.5% of the cases; nearly all match with Z in parts",
    "X=2,Y=8": "XLA shards by part of an axis in 8.1% of the cases; every one matches with that axis in parts",
    "X=4,Y=2,Z=2": "XLA shards by part of an axis in 10.6% of the cases; 12 of those 17 match with it in parts",
}


@pytest.mark.parametrize(
    "mesh",
    [
        pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=BELOW_TARGET_BY_WHOLE_AXES[m]))
        if m in BELOW_TARGET_BY_WHOLE_AXES
        else pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=BELOW_TARGET[m]))
        if m in BELOW_TARGET
        else m
        for m in MESHES
    ],
)
def test_agreement_by_whole_axes_alone(mesh):
    m = next(x for x in DATA["meshes"] if x["mesh"] == mesh)
    assert m["matches"] / m["cases"] >= AGREEMENT_TARGET


@pytest.mark.parametrize("mesh", sorted(BELOW_TARGET_BY_WHOLE_AXES))
def test_by_whole_axes_the_target_is_out_of_reach_where_xla_shards_by_parts_of_axes(mesh):
    # every case XLA plans by part of an axis is a miss by whole axes: even with every other case a match, the
    # agreement by whole axes stays below the target on these meshes; and every other case is a match there
    m = next(x for x in DATA["meshes"] if x["mesh"] == mesh)
    rows = [r for r in ROWS if r["mesh"] == mesh]
    by_parts = [r for r in rows if "refined" in r]
    assert not any(r["match"] for r in by_parts)
    assert (m["cases"] - len(by_parts)) / m["cases"] < AGREEMENT_TARGET
    assert [r["matmul"] for r in rows if "refined" not in r and not r["match"]] == []


# cases that agree per mesh in the committed data, by whole axes and with axes in parts too: a change to
# the planner or to verify that lowers them fails here (raise them when agreement rises)
FLOORS = {
    "X=8": (420, 420),  # of 420
    "X=4,Y=2": (1435, 1521),  # of 1,526
    "X=2,Y=4": (345, 365),  # of 365
    "X=4,Y=4": (405, 405),  # of 405
    "X=2,Y=2,Z=2": (170, 170),  # of 176
    "X=2,Y=2,Z=4": (106, 129),  # of 130
    "X=2,Y=2,Z=2,W=2": (50, 50),  # of 54
    "X=16": (144, 144),  # of 144
    "X=8,Y=2": (152, 160),  # of 160
    "X=2,Y=8": (147, 160),  # of 160
    "X=4,Y=2,Z=2": (143, 155),  # of 160
}
# the same, counting only the strategies the planner offers (listed, or among XLA's further orders), not the
# routes found step by step: a change to the planner's routes that loses one of XLA's fails here
FLOORS_PLANNED = {
    "X=8": (420, 420),
    "X=4,Y=2": (1435, 1519),
    "X=2,Y=4": (342, 361),
    "X=4,Y=4": (399, 399),
    "X=2,Y=2,Z=2": (148, 148),
    "X=2,Y=2,Z=4": (97, 112),
    "X=2,Y=2,Z=2,W=2": (44, 44),
    "X=16": (144, 144),
    "X=8,Y=2": (150, 156),
    "X=2,Y=8": (146, 156),
    "X=4,Y=2,Z=2": (127, 137),
}


@pytest.mark.parametrize("mesh", MESHES)
def test_agreement_does_not_fall(mesh):
    m = next(x for x in DATA["meshes"] if x["mesh"] == mesh)
    on_mesh, with_refined = FLOORS[mesh]
    assert m["matches"] >= on_mesh and m["matches"] + m["matches_refined"] >= with_refined
    on_mesh, with_refined = FLOORS_PLANNED[mesh]
    planned = m["matches"] - m["matches_routed"]
    assert planned >= on_mesh and planned + m["matches_refined"] - m["matches_refined_routed"] >= with_refined


# -- the figures: cheaper plans at these sizes and at a layer's, misses equal in cost -------------


def test_cheaper_than_symshards_best_is_counted_on_every_row_and_costed_again_at_scale():
    # the docs' figure: XLA's plan (a match or not) no more bytes received and no more FLOPs than symshard's best,
    # one strictly fewer; most such cases are latency-bound at the sweep's sizes
    cheap = [r for r in ROWS if r["xla_cheaper"]]
    assert DATA["total"]["cheaper_than_best"] == len(cheap) and DATA["bytes"] == "received per device"
    latency = [r for r in cheap if r["best_regime"] == "latency"]
    assert DATA["total"]["cheaper_latency_bound"] == len(latency) > len(cheap) / 2
    assert {r["best_regime"] for r in ROWS} <= {"latency", "bandwidth", "compute", "memory"}
    # costed again with every dim `scale` times larger wherever XLA's plan is one of symshard's strategies
    scale = DATA["scale"]
    for r in ROWS:
        assert ("at_scale" in r) == (r["xla_cheaper"] and r["match"]), r["matmul"]
        if "at_scale" in r:
            a = r["at_scale"]
            assert a["factor"] == scale and a["xla_time_s"] > 0 and a["best_time_s"] > 0
            assert a["xla_bytes"] >= r["xla_bytes"] and a["best_bytes"] >= 0


def test_misses_equal_in_cost_are_misses_with_a_strategy_of_the_same_cost():
    equal = [r for r in ROWS if r["equal_in_cost"]]
    assert DATA["total"]["equal_in_cost"] == len(equal)
    for r in equal:
        parts = r.get("refined")
        assert not r["match"] and not (parts and parts["match"]) and not r["planner_work"]
        assert r["equivalent"] or (parts and parts["equivalent"]), r["matmul"]
        reason = r["reason"] if r["equivalent"] else parts["reason"]
        assert "but for the collective-permute's axes" in reason
    assert not any(r["equivalent"] for r in ROWS if r["match"])


def test_the_page_reports_the_figures(tmp_path):
    pytest.importorskip("jinja2", reason="the site's pages need the docs extra")
    from symshard.cli import command_line
    from symshard.site.pages import Page, sources

    rel = "explanation/jax-agreement.md"
    page = Page(rel, tmp_path / "figures", cli=command_line())
    text = page.render((sources() / "docs" / rel).read_text(encoding="utf-8"))
    total = DATA["total"]
    share = f"{100 * total['cheaper_than_best'] / total['cases']:.1f} %"
    assert f"In {total['cheaper_than_best']:,} of the {total['cases']:,} cases ({share})," in text
    assert f"latency-bound in {total['cheaper_latency_bound']:,} of them" in text
    assert "## Equal in cost, other pairs" in text and "By einsum kind" in text
    for family in REAL_EINSUMS:
        assert f"`{FAMILIES[family].einsum}`" in text


# -- a seeded sample of the cases, run again -----------------------------------------------------------

LIVE_PER_MESH = 2


def _live_rows() -> list[dict]:
    rng = random.Random(2026)
    picked = []
    for mesh in MESHES:
        rows = [r for r in ROWS if r["mesh"] == mesh]
        if mesh.count("=") >= 3:
            # the live sample takes 2-D matmuls on three or four axes: they alone list XLA's further orders on
            # three axes, and verify faster than an attention case (millions of strategies on four axes); and
            # not those XLA plans by sub-axes, whose plan with axes in parts has four axes, searched for a
            # minute or so (tests/jax/test_jax_verify.py checks such a case)
            rows = [r for r in rows if r["family"].startswith("matmul") and "refined" not in r]
        missed = [r for r in rows if not r["match"]]
        chosen = rng.sample(rows, LIVE_PER_MESH)
        if missed and not any(not r["match"] for r in chosen):  # and a disagreement, where there is one
            chosen[-1] = rng.choice(missed)
        picked += chosen
    return picked


def _live_param(row: dict):
    """A sampled row as a test case; those on four axes are slow (each verify plans millions of orders)."""
    if row["mesh"].count("=") < 4:
        return row
    return pytest.param(row, marks=pytest.mark.slow(reason="a case on four axes: 3 to 13 s each to verify again"))


@pytest.mark.parametrize(
    "row", [_live_param(r) for r in _live_rows()], ids=lambda r: f"{r['mesh']} {r['dtype']} {r['matmul']}"
)
def test_a_sampled_case_comes_out_as_the_data_says(row):
    from symshard.jax.verification import verify

    v = verify(
        row["matmul"],
        row["mesh"],
        FAMILIES[row["family"]].shape,
        dtype=row["dtype"],
        hardware=DATA["hardware"],
        run="all",
        sample=DATA["sample"],
        seed=DATA["seed"],
        scale=DATA["scale"],
        outer=True,  # the sweep's einsums are meant, outer products included
    )
    again = _row(Batch(FAMILIES[row["family"]], row["mesh"], row["dtype"]), v)
    assert again == row

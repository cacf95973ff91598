"""Mesh axes in parts (symshard.machines.subaxes): the split's grammar, the split mesh's wiring, its costs, the
planner's plans with parts (a superset of the plan by whole axes, at the same costs) and the CLI's --split."""

from __future__ import annotations

import json
import math

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symshard.cli import main
from symshard.costs.costmodels import Costing
from symshard.errors import MeshError, SymshardError
from symshard.machines.mesh import Mesh, MeshAxis
from symshard.machines.subaxes import AxisSplit, parse_split, split_array, split_mesh
from symshard.machines.topology import Topology
from symshard.notation.parser import parse_array
from symshard.planning.planner import plan

V = sympy.Symbol("V", positive=True)
KINDS = ("AllGather", "ReduceScatter", "AllReduce", "AllToAll")

# -- the grammar ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X=2x2", {"X": (2, 2)}),
        ("X=2*4", {"X": (2, 4)}),
        ("X = 2 · 2 · 2", {"X": (2, 2, 2)}),
        ("X=2x2, Y=4x2", {"X": (2, 2), "Y": (4, 2)}),
        ("data=2X4", None),  # only x, *, · or × between sizes
        ("model=4×2", {"model": (4, 2)}),
    ],
)
def test_a_split_reads_axis_and_parts_major_first(text, expected):
    if expected is None:
        with pytest.raises(MeshError, match="cannot read"):
            parse_split(text)
    else:
        assert parse_split(text) == expected


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("X=4", "cannot read 'X=4' in the split 'X=4'", "X=2x2,Y=2x4"),
        ("X=2+2", "cannot read 'X=2+2'", "major first"),
        ("X=2x2,", "cannot read ''", "major first"),
        ("__import__('os')=2x2", "cannot read", "major first"),
        ("X=2x2,X=2x2", "mesh axis X is split twice in 'X=2x2,X=2x2'", "X=2x2"),
    ],
)
def test_a_bad_split_is_quoted_with_a_fix(text, message, hint):
    with pytest.raises(MeshError) as err:
        parse_split(text)
    assert message in err.value.message and hint in str(err.value.hint)


@pytest.mark.parametrize(
    ("mesh", "split", "message"),
    [
        ("X=4,Y=2", "Z=2x2", "the split 'Z=2x2' names axis Z, which is not in the mesh X=4,Y=2"),
        ("X=4,Y=2", "X=2x4", "the parts 2x4 of axis X do not split its 4 devices"),
        ("X=4,Y=2", "Y=1x2", "the parts 1x2 of axis Y do not split its 2 devices"),
        ("X,Y=2", "X=2x2", "axis X has no size, so it cannot be split as 'X=2x2'"),
        ("X=4,X1=2", "X=2x2", "the part X1 of axis X has the name of an axis or dim already in use"),
    ],
)
def test_a_split_that_does_not_fit_the_mesh_says_why(mesh, split, message):
    with pytest.raises(MeshError) as err:
        split_mesh(Mesh(mesh), split)
    assert message in err.value.message


def test_an_axis_over_two_networks_is_not_split():
    mesh = Mesh("X=16", hardware="h100")  # 8 GPUs per node: NVLink, then the NICs
    with pytest.raises(MeshError, match="crosses nvlink"):
        split_mesh(mesh, "X=2x8")


# -- the split mesh ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topology", "sizes", "expected"),
    [
        # (name, topology, stride): on a ring the major part still wraps, the others are lines
        ("ring", (2, 2), [("X1", "ring", 2), ("X2", "line", 1)]),
        ("ring", (2, 4), [("X1", "ring", 4), ("X2", "line", 1)]),
        ("ring", (2, 2, 2), [("X1", "ring", 4), ("X2", "line", 2), ("X3", "line", 1)]),
        ("line", (2, 2), [("X1", "line", 2), ("X2", "line", 1)]),
        ("switch", (4, 2), [("X1", "switch", 2), ("X2", "switch", 1)]),
    ],
)
def test_parts_keep_the_axis_wiring(topology, sizes, expected):
    mesh = Mesh({"X": math.prod(sizes), "Y": 2}, topology={"X": topology})
    split, parts = split_mesh(mesh, {"X": sizes})
    got = [(a.name, a.topology.value, a.stride) for a in split.axes if a.part_of == "X"]
    assert got == expected
    assert [a.name for a in split.axes][-1] == "Y" and split.axis("Y") == mesh.axis("Y")
    assert parts == (AxisSplit("X", tuple((f"X{i + 1}", s) for i, s in enumerate(sizes))),)
    assert split.devices == mesh.devices
    assert {a.fabric for a in split.axes if a.part_of} == {mesh.axis("X").fabric}


def test_shardy_names_and_labels():
    s = AxisSplit("X", (("X1", 2), ("X2", 2), ("X3", 2)))
    assert [s.shardy(n) for n in s.names] == ["X:(1)2", "X:(2)2", "X:(4)2"]
    assert s.label == "X=X1·X2·X3"
    split, _ = split_mesh(Mesh("X=4,Y=2"), "X=2x2")
    described = [str(d) for d in split.describe()]
    assert described[0].endswith("part X:(1)2 of X=4, its devices 2 apart)")
    assert described[1].endswith("part X:(2)2 of X=4, its devices side by side)")


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        ("A[I_X, J_Y]", "A[I_{X1,X2}, J_Y]"),
        ("A[I_YX, J]", "A[I_{Y,X1,X2}, J]"),
        ("A[I, J]", "A[I, J]"),
        ("A[I, J]{U_X}", "A[I, J]{U_{X1,X2}}"),
    ],
)
def test_arrays_name_the_parts_major_first(array, expected):
    _, parts = split_mesh(Mesh("X=4,Y=2"), "X=2x2")
    assert str(split_array(parse_array(array), parts)) == expected


# -- costs ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.sampled_from([(2, 2), (2, 4), (4, 2), (2, 2, 2), (2, 8), (4, 4)]),
    topology=st.sampled_from(["ring", "line", "switch", "one-way-ring"]),
    model=st.sampled_from(["book", "ring"]),
    kind=st.sampled_from(KINDS),
    reverse=st.booleans(),
    with_y=st.booleans(),
)
def test_a_collective_over_every_part_costs_the_whole_axis(sizes, topology, model, kind, reverse, with_y):
    mesh = Mesh({"X": math.prod(sizes), "Y": 2}, topology={"X": topology})
    split, parts = split_mesh(mesh, {"X": sizes})
    names = list(parts[0].names)[:: -1 if reverse else 1]
    whole = Costing(mesh, {}, model).timing(kind, ["X", "Y"] if with_y else ["X"], V)
    part = Costing(split, {}, model).timing(kind, [*names, "Y"] if with_y else names, V)
    assert sympy.simplify(part.time - whole.time) == 0
    assert sympy.simplify(part.bandwidth_time - whole.bandwidth_time) == 0
    assert part.resources == whole.resources


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("topology", ["ring", "line"])
def test_a_part_whose_devices_sit_apart_pays_for_the_distance(kind, topology):
    # the major part of X=4 (2 devices, 2 apart) against an axis of 2 devices side by side: each step
    # crosses 2 links and 2 of its groups share each link, so both terms double; it shares X's links
    split, _ = split_mesh(Mesh("X=4", topology={"X": topology}), "X=2x2")
    alone = Costing(Mesh("Z=2", topology={"Z": split.axis("X1").topology}), {}, "book").timing(kind, ["Z"], V)
    major = Costing(split, {}, "book").timing(kind, ["X1"], V)
    minor = Costing(split, {}, "book").timing(kind, ["X2"], V)
    assert sympy.simplify(major.bandwidth_time - 2 * alone.bandwidth_time) == 0
    assert sympy.simplify(major.latency_time - 2 * alone.latency_time) == 0
    assert major.resources == minor.resources == frozenset({"ici:X"})


def test_a_part_on_a_switch_has_no_distance():
    split, _ = split_mesh(Mesh("X=8", topology={"X": "switch"}, fabric={"X": "nvlink"}), "X=2x4")
    alone = Costing(Mesh("Z=2", topology={"Z": "switch"}, fabric={"Z": "nvlink"}), {}, "book")
    assert Costing(split, {}, "book").timing("AllGather", ["X1"], V).time == alone.timing("AllGather", ["Z"], V).time


# -- the planner ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mm", "mesh", "split", "hw"),
    [
        ("A[I, J] · B[J, K_X] -> C[I, K_Y]", "X=4,Y=2", "X=2x2", "tpu-v5e"),
        ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "X=4,Y=2", "X=2x2", "tpu-v5p"),
        ("A[I_Y, J] · B[J, K_X] -> C[I_X, K]", "X=2,Y=4", "Y=2x2", "tpu-v5e"),
        ("A[I_X, J] · B[J, K] -> C[I, K_X]", "X=8", "X=2x4", "tpu-v5e"),
    ],
)
def test_a_plan_with_parts_keeps_every_plan_by_whole_axes_at_its_cost(mm, mesh, split, hw):
    # brute force as the oracle: every strategy by whole axes, costed, against every one with parts
    shape = "I=4096,J=4096,K=4096"
    whole = plan(mm, mesh, shape, hardware=hw, all=True)
    parts = plan(mm, mesh, shape, hardware=hw, all=True, split=split)
    assert len(parts.strategies) > len(whole.strategies)
    costs = {(s.time, s.flops_per_device, s.memory_bytes_per_device) for s in parts.strategies}
    missing = [s.name for s in whole.strategies if (s.time, s.flops_per_device, s.memory_bytes_per_device) not in costs]
    assert missing == []
    assert parts.best.time <= whole.best.time
    # the plan that can win, too: never slower than by whole axes
    assert plan(mm, mesh, shape, hardware=hw, split=split).best.time <= plan(mm, mesh, shape, hardware=hw).best.time


def test_a_plan_with_parts_says_so():
    p = plan("A[I, J] · B[J, K_X] -> C[I, K_Y]", "X=4,Y=2", "I=64,J=64,K=64", hardware="tpu-v5e", split="X=2x2")
    assert str(p.mesh) == "X1=2,X2=2,Y=2" and str(p.matmul) == "A[I, J] · B[J, K_{X1,X2}] -> C[I, K_Y]"
    assert p.split == (AxisSplit("X", (("X1", 2), ("X2", 2))),)
    assert any("mesh axis X used in parts X1, X2" in str(a) for a in p.assumptions)
    assert any(str(a).startswith("axis X1=2 (") and "part X:(1)2 of X=4" in str(a) for a in p.assumptions)


@pytest.mark.parametrize(
    ("mm", "mesh", "split", "error", "message"),
    [
        ("A[I, J] · B[J, K_X] -> C[I, K]", None, "X=2x2", MeshError, "axis X has no size"),
        ("A[X1, J] · B[J, K_X] -> C[X1, K]", "X=4", "X=2x2", MeshError, "the part X1 of axis X has the name"),
        ("A[I, J] · B[J, K_X] -> C[I, K]", "X=4", "X=2x3", MeshError, "the parts 2x3 of axis X"),
    ],
)
def test_a_plan_with_a_bad_split_raises_a_symshard_error(mm, mesh, split, error, message):
    with pytest.raises(error) as err:
        plan(mm, mesh, "I=64,J=64,K=64", split=split)
    assert isinstance(err.value, SymshardError) and message in err.value.message


# -- the command line ----------------------------------------------------------------------------------


def test_the_cli_plans_with_parts(capsys):
    argv = ["matmul", "A[I, J] · B[J, K_X] -> C[I, K_Y]", "--mesh", "X=4,Y=2", "--shape", "I=4096,J=4096,K=4096",
            "--hw", "tpu-v5p", "--split", "X=2x2"]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" and "A[I, J] · B[J, K_{X1,X2}] -> C[I, K_Y]" in out and "part X:(1)2 of X=4" in out
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    assert "X1" in json.dumps(data["strategies"][0]) or "X2" in json.dumps(data["strategies"][0])
    assert data["split"] == {"X": [{"axis": "X1", "size": 2, "shardy": "X:(1)2"},
                                   {"axis": "X2", "size": 2, "shardy": "X:(2)2"}]}  # fmt: skip
    assert data["mesh"][0] == {
        "axis": "X1",
        "size": 2,
        "topology": "line",
        "fabric": "ici",
        "part_of": "X",
        "stride": 2,
    }


@pytest.mark.parametrize("json_flag", [False, True])
def test_the_cli_refuses_a_bad_split_in_one_line(capsys, json_flag):
    argv = ["matmul", "A[I, J] · B[J, K_X] -> C[I, K_Y]", "--mesh", "X=4,Y=2", "--split", "X=2x3"]
    assert main([*argv, "--json"] if json_flag else argv) == 2
    out, err = capsys.readouterr()
    if json_flag:
        assert json.loads(out)["error"]["message"] == "the parts 2x3 of axis X do not split its 4 devices"
    else:
        assert err.count("\n") == 1 and "the parts 2x3 of axis X" in err and "Traceback" not in err


def test_mesh_axes_are_unchanged_without_parts():
    assert MeshAxis("X", 4).stride == 1 and MeshAxis("X", 4).part_of == ""
    assert Mesh("X=4").axis("X").topology is Topology.RING

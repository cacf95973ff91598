"""symshard ↔ JAX: PartitionSpec, NamedSharding and meshes both ways; strategies under shard_map; HLO parsing.

Needs the jax extra; marked ``jax`` (``pytest -m 'not jax'`` skips them). XLA reads the device
count once, when JAX starts: conftest asks for 16 simulated devices before anything imports JAX.
"""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

import symshard as ss  # noqa: E402
import symshard.jax as sj  # noqa: E402
from symshard.errors import MeshError, ShardingError  # noqa: E402
from symshard.jax import hlo  # noqa: E402

pytestmark = pytest.mark.jax
P = jax.sharding.PartitionSpec


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("A[I, J]", P(None, None)),  # replicated
        ("A[I_X, J]", P("X", None)),  # one axis
        ("A[I_XY, J]", P(("X", "Y"), None)),  # two axes on one dim, major first
        ("A[I_YX, J_Z]", P(("Y", "X"), "Z")),  # the order is kept
        ("A[I, J_{data,model}]", P(None, ("data", "model"))),  # long axis names
        ("C[I, K]{U_X}", P(None, None, unreduced={"X"})),  # partial sums: JAX's unreduced set
    ],
)
def test_partition_spec_round_trip(text, spec):
    a = ss.parse(text)
    assert sj.partition_spec(a) == spec
    assert sj.array_from_spec(spec, a.dim_names, name=a.name) == a


def test_short_spec_leaves_the_last_dims_unsharded():
    assert str(sj.array_from_spec(P("X"), ("I", "J"))) == "A[I_X, J]"


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (P(P.UNCONSTRAINED, None), "UNCONSTRAINED"),
        (P("X", None, None), "has 3 entries but the array has 2 dims"),
        (P("X", "X"), "mesh axis X shards both I and J"),
        (P(None, None, reduced={"X"}), "reduced"),
    ],
)
def test_what_the_notation_cannot_say(spec, match):
    with pytest.raises(ShardingError, match=match):
        sj.array_from_spec(spec, ("I", "J"))


def test_mesh_both_ways():
    jm = sj.jax_mesh("X=4,Y=2")
    assert dict(jm.shape) == {"X": 4, "Y": 2}
    assert all(t == jax.sharding.AxisType.Auto for t in jm.axis_types)
    assert sj.mesh_from_jax(jm) == ss.Mesh("X=4,Y=2")


def test_mesh_errors():
    with pytest.raises(MeshError, match="symbolic sizes"):
        sj.jax_mesh("X,Y=2")
    with pytest.raises(MeshError, match="xla_force_host_platform_device_count"):
        sj.jax_mesh("X=16,Y=2")
    import numpy as np

    jm = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("DP",))
    with pytest.raises(MeshError, match="would read as the axes D, P"):
        sj.mesh_from_jax(jm)


def test_named_sharding_places_blocks_as_symshard_says():
    sharding = sj.named_sharding("A[I_XY, J]", "X=4,Y=2")
    x = jax.device_put(jax.numpy.zeros((64, 32)), sharding)
    place = ss.place("A[I_XY, J]", "X=4,Y=2", "I=64,J=32")
    assert {tuple(s.data.shape) for s in x.addressable_shards} == {tuple(int(n) for n in place.local_shape)}
    assert sj.array_from_sharding(sharding, ("I", "J")) == ss.parse("A[I_XY, J]")


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize(
    "text",
    [
        "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]",  # Case 1
        "A[I, J_X] · B[J, K] -> C[I, K]",  # Case 2
        "A[I, J_XY] · B[J_XY, K] -> C[I_X, K_Y]",  # Case 3, two reduce-scatters
        "A[I_X, J] · B[J, K_X] -> C[I_X, K]",  # Case 4
        "A[I, J]{U_Y} · B[J, K_X] -> C[I, K_X]",  # an unreduced operand
        "A[I, J_X] · B[J_X, K] -> C[I, K]{U_X}",  # an unreduced result
    ],
)
def test_every_strategy_runs_fused(text, dtype):
    p = ss.plan(text, "X=4,Y=2", "I=64,J=64,K=64", dtype=dtype, hardware="tpu-v5e")
    for s in p.strategies[:6]:
        e = sj.execute(p, s)
        assert e.correct and e.exact and e.shapes_ok, (s.name, e)


def test_execute_with_given_operands():
    import numpy as np

    p = ss.plan("A[I, J_X] · B[J_X, K] -> C[I, K_X]", "X=4", "I=8,J=16,K=8", dtype="fp32", hardware="tpu-v5e")
    rng = np.random.default_rng(1)
    e = sj.execute(p, 1, (rng.normal(size=(8, 16)), rng.normal(size=(16, 8))))
    assert e.correct and not e.exact and e.max_error < 1e-4


def test_unknown_dtype_is_refused():
    p = ss.plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4", "I=8,J=16,K=8", dtype="int8", hardware="tpu-v5e")
    with pytest.raises(ShardingError, match="cannot run int8"):
        sj.execute(p)


# -- HLO text ----------------------------------------------------------------------------------

HLO = """
HloModule m

%fused_computation.1 (param_0.1: f32[64,64], param_1.2: s32[8], param_2.3: u32[]) -> f32[64,16] {
  %param_0.1 = f32[64,64]{1,0} parameter(0)
  %constant.5 = s32[] constant(0)
  %param_1.2 = s32[8]{0} parameter(1)
  %param_2.3 = u32[] parameter(2)
  %dynamic-slice.4 = s32[1]{0} dynamic-slice(%param_1.2, %param_2.3), dynamic_slice_sizes={1}
  %bitcast.1 = s32[] bitcast(%dynamic-slice.4)
  ROOT %dynamic-slice.3 = f32[64,16]{1,0} dynamic-slice(%param_0.1, %constant.5, %bitcast.1), dynamic_slice_sizes={64,16}
}

ENTRY %main (param: f32[64,16], param.1: f32[16,64]) -> f32[64,16] {
  %partition-id.1 = u32[] partition-id()
  %param = f32[64,16]{1,0} parameter(0)
  %param.1 = f32[16,64]{1,0} parameter(1)
  %constant.4 = s32[8]{0} constant({0, 0, 16, 16, 32, 32, 48, 48})
  %dot.1 = f32[64,64]{1,0} dot(%param, %param.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %all-reduce = f32[64,64]{1,0} all-reduce(%dot.1), channel_id=1, replica_groups=mesh['axis_0'=1,'axis_1'=4,'axis_2'=2] {'axis_1'}, use_global_device_ids=true, to_apply=%add
  %all-gather = f32[64,64]{1,0} all-gather(%param), channel_id=2, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={1}, use_global_device_ids=true
  %all-to-all.1 = (f32[16,1,16]{2,1,0}, f32[16,1,16]{2,1,0}, /*index=2*/f32[16,1,16]{2,1,0}, f32[16,1,16]{2,1,0}) all-to-all(%a, %b, %c, %d), channel_id=3, replica_groups={{0,2,4,6},{1,3,5,7}}
  ROOT %fusion = f32[64,16]{1,0} fusion(%all-reduce, %constant.4, %partition-id.1), kind=kLoop, calls=%fused_computation.1
}
"""


def _with_offsets(offsets: str, size: int = 16) -> str:
    """The module above with another offset table (and slice size) for the slice after the all-reduce."""
    text = HLO.replace("{0, 0, 16, 16, 32, 32, 48, 48}", offsets)
    return text.replace("f32[64,16]{1,0} dynamic-slice", f"f32[64,{size}]{{1,0}} dynamic-slice").replace(
        "dynamic_slice_sizes={64,16}", f"dynamic_slice_sizes={{64,{size}}}"
    )


def test_hlo_collectives():
    found = hlo.collectives(HLO, 8)
    mesh = [("X", 4), ("Y", 2)]
    rs, ag, a2a = found
    # the all-reduce + partition-indexed dynamic-slice (device d = 2x + y keeps K block x), read back as a
    # reduce-scatter onto dim 1
    assert (rs.kind, rs.dim, rs.operand_shape, rs.shape) == ("ReduceScatter", 1, (64, 64), (64, 16))
    assert rs.lowered == hlo.READ_BACK
    assert hlo.group_axes(rs.groups, mesh) == ("X",)
    assert (ag.kind, ag.operand_shape, hlo.group_axes(ag.groups, mesh)) == ("AllGather", (64, 16), ("X",))
    assert (a2a.kind, a2a.operand_elements, hlo.group_axes(a2a.groups, mesh)) == ("AllToAll", 1024, ("X",))
    assert hlo.dot_flops(HLO) == 2 * 64 * 64 * 16


@pytest.mark.parametrize(
    ("offsets", "size", "kind", "lowered"),
    [
        # each X group's members keep different K blocks, by their X position: a reduce-scatter
        ("{0, 0, 16, 16, 32, 32, 48, 48}", 16, "ReduceScatter", hlo.READ_BACK),
        # K_XY: the X position picks a quarter (major), Y an eighth inside it: reduce-scatter, then a free slice
        ("{0, 8, 16, 24, 32, 40, 48, 56}", 8, "ReduceScatter", hlo.READ_BACK_FURTHER),
        # K_YX: the X position is the minor digit, so no reduce-scatter of the whole array: an all-reduce
        ("{0, 32, 8, 40, 16, 48, 24, 56}", 8, "AllReduce", ""),
        # every device the same block: not a reduce-scatter
        ("{0, 0, 0, 0, 0, 0, 0, 0}", 16, "AllReduce", ""),
        # the X positions in another order: a permuted scatter, not XLA's reduce-scatter
        ("{16, 16, 0, 0, 32, 32, 48, 48}", 16, "AllReduce", ""),
    ],
)
def test_reduce_scatter_read_back_is_proved_from_the_offsets(offsets, size, kind, lowered):
    rs = hlo.collectives(_with_offsets(offsets, size), 8)[0]
    assert (rs.kind, rs.lowered) == (kind, lowered)
    assert rs.operand_elements == 64 * 64


def test_sub_axes_of_groups_and_slices():
    mesh = [("X", 4), ("Y", 2)]
    # pairs of neighbouring X devices: the minor half of X; pairs two apart: the major half
    assert hlo.group_sub_axes(((0, 2), (4, 6), (1, 3), (5, 7)), mesh) == ("X:(2)2",)
    assert hlo.group_sub_axes(((0, 4), (2, 6), (1, 5), (3, 7)), mesh) == ("X:(1)2",)
    assert hlo.group_sub_axes(((0, 2, 4, 6), (1, 3, 5, 7)), mesh) == ("X",)
    assert hlo.group_sub_axes(((0, 3), (1, 2), (4, 7), (5, 6)), mesh) is None
    assert hlo.slice_axes({d: (d // 2) * 2 + d % 2 for d in range(8)}, mesh) == ("X", "Y")
    assert hlo.slice_axes({d: d // 4 for d in range(8)}, mesh) == ("X:(1)2",)
    # the slice before the all-reduce above is by whole X: no sub-axis
    assert hlo.sub_axis_slices(HLO, mesh) == ()
    assert hlo.sub_axis_slices(_with_offsets("{0, 0, 0, 0, 32, 32, 32, 32}", 32), mesh) == ("X:(1)2",)


@pytest.mark.parametrize(
    ("spec", "groups"),
    [
        ("{{0,1},{2,3}}", ((0, 1), (2, 3))),
        ("[4,2]<=[8]", ((0, 1), (2, 3), (4, 5), (6, 7))),
        ("[1,8]<=[4,2]T(1,0)", ((0, 2, 4, 6, 1, 3, 5, 7),)),
        ("mesh['axis_0'=8,'axis_1'=1], device_ids=([4,2]T(1,0)) {'axis_0'}", ((0, 2, 4, 6, 1, 3, 5, 7),)),
        ("{}", ((0, 1, 2, 3, 4, 5, 6, 7),)),
    ],
)
def test_replica_group_spellings(spec, groups):
    assert hlo.expand_groups(spec, 8) == groups


def test_group_axes_order_and_refusal():
    mesh = [("X", 4), ("Y", 2)]
    assert hlo.group_axes(((0, 2, 4, 6, 1, 3, 5, 7),), mesh) == ("Y", "X")
    assert hlo.group_axes(((0, 1), (2, 3), (4, 5), (6, 7)), mesh) == ("Y",)
    assert hlo.group_axes(((0, 3), (1, 2), (4, 7), (5, 6)), mesh) is None


# -- one verification, and the CLI ----------------------------------------------------------------


def test_verify_report():
    v = sj.verify("A[I, J_X] · B[J_X, K] -> C[I, K_X]", "X=4,Y=2", "I=64,J=64,K=64", run="best")
    assert v.match and v.rank == 1 and v.matched == "matmul → ReduceScatter_{X,K}(C)"
    assert v.flops_agree is True and v.executed_ok
    assert any("all-reduce followed by a dynamic-slice" in n for n in v.lowering)
    assert "read back from all-reduce + dynamic-slice" in v.xla[0]
    assert v.to_json()["match"] is True and "agreement  yes" in v.text()


def test_verify_bf16_notes_the_f32_lowering():
    v = sj.verify("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4,Y=2", "I=64,J=64,K=64", dtype="bf16", run="best")
    assert v.match and v.executed_ok
    assert any("bf16 on CPU" in n for n in v.lowering)


def test_cli_verify(capsys):
    import json

    from symshard.cli import main

    code = main(["verify", "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "--mesh", "X=4,Y=2",
                 "--shape", "I=64,J=64,K=64", "--run", "best", "--json"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["match"] and data["rank"] == 1 and data["xla_collectives"] == []
    assert main(["verify", "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "--mesh", "X=4,Y=2"]) == 2
    assert "verify needs numbers" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("mm", "mesh"),
    [
        ("A[I, J_Y] · B[J_Y, K_PQ] -> C[I, K_Y]", "P=2,Q=2,Y=2"),
        ("A[I_PQ, J] · B[J_PQ, K_Y] -> C[I_Y, K_PQ]", "P=2,Q=2,Y=2"),
        ("A[I_X, J] · B[J_Y, K] -> C[I_Y, K_X]", "X=4,Y=2"),
    ],
)
def test_permute_pairs_cross_only_the_axes_it_names(mm, mesh):
    # the executor's senders for every permute of every strategy (XLA's routes too) differ from
    # their receivers only along the permute's axes: the name verify compares with XLA's pairs
    from symshard.jax.execution import permute_plan
    from symshard.planning.planner import Repermute

    p = ss.plan(mm, mesh, "I=16,J=16,K=16", dtype="fp32", hardware="tpu-v5e", routes="xla")
    names = [a.name for a in p.mesh.axes]
    sizes = {a.name: int(a.size) for a in p.mesh.axes}
    permutes = {s.op for st in p.strategies for s in st.steps if isinstance(getattr(s.op, "op", None), Repermute)}
    assert permutes
    for expr in permutes:
        sender, _ = permute_plan(expr.operand, expr.output, sizes, {"I": 16, "J": 16, "K": 16}, expr.op.axes)
        crossed = {names[i] for dev, src in sender.items() for i in range(len(names)) if dev[i] != src[i]}
        assert crossed <= set(expr.op.axes), (str(expr), crossed)

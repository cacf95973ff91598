"""Rooflines through a GPU network's levels, serving choices, and the book mismatches of issue 32.

Every expected figure is typed from the book's GPU chapter ("Rooflines for LLM Scaling on GPUs" and its
Quiz 5) or derived by hand in a comment, never read back from symshard: data parallelism on H100s needs
2200 tokens per GPU inside a node and 2475 across nodes; 16,000 GPUs a global batch of 3.96e7; an MoE
with E/k = 32 79,200; a B200 5625; tensor parallelism beyond a node |Y| ≤ F/2475; 8-way pipelining
brings LLaMA-3 70B's data parallelism down to 309 tokens per GPU.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import sympy

import symshard as ss
from symshard.algebra.symbols import W_pcie, dim
from symshard.cli import main
from symshard.costs.collectives import parse_collective
from symshard.errors import HardwareError, ModelError, PlanError
from symshard.machines.mesh import Mesh
from symshard.machines.network import Level, place
from symshard.machines.presets import hardware
from symshard.machines.topology import Fabric
from symshard.models.inference import serve
from symshard.models.networked import through_network
from symshard.models.parallelism import N_MB, N_STAGES, roofline, rooflines
from symshard.models.schemes import B_CHIP, layer
from symshard.models.transfers import host_to_chip, slice_totals
from symshard.models.transformer import model
from symshard.models.verdicts import verdict
from symshard.planning.crossovers import compare


def lower_bound(cond):
    """The number a ``B_chip ≥ n`` condition gives (one case, one relation)."""
    (case,) = cond.cases
    (rel,) = [r for r in case.relations if r.lhs == B_CHIP]
    return rel.rhs


# -- the book's GPU figures, one call each ---------------------------------------------------------------------

# (what the book says, the call, the bound on B_chip): the GPU chapter's data-parallelism rooflines
BOOK_DP = [
    ("inside a node: 990e12 / 450e9 = 2200", lambda: roofline("dp", hardware="h100", chips=8), 2200),
    ("across nodes: 990e12 / 400e9 = 2475", lambda: roofline("dp", hardware="h100", chips=16), 2475),
    ("FSDP costs the same as DP", lambda: roofline("fsdp", hardware="h100", chips=64), 2475),
    ("a full scalable unit and beyond: still the node's 400e9", lambda: roofline("dp", hardware="h100", chips=1024), 2475),
    ("B200 across nodes: 2250e12 / 400e9 = 5625", lambda: roofline("dp", hardware="b200", chips=16), 5625),
    ("B200 inside a node: 2250e12 / 900e9 = 2500", lambda: roofline("dp", hardware="b200", chips=8), 2500),
    # gpt-oss: E = 128, k = 4, "32 * 2475 = 79,200 across nodes"
    ("an MoE with E/k = 32 across nodes: 79,200",
     lambda: roofline("dp", hardware="h100", chips=16, model=model("mixtral-8x7b").with_sizes(experts=128,
                                                                                               experts_per_token=4)),
     79200),
]  # fmt: skip


@pytest.mark.parametrize(("what", "call", "bound"), BOOK_DP, ids=[row[0] for row in BOOK_DP])
def test_the_gpu_chapters_data_parallel_rooflines(what, call, bound):
    assert lower_bound(call().numeric) == bound


def test_sixteen_thousand_gpus_need_a_global_batch_of_3_96e7_tokens():
    # "LLaMA-3, which trained on 16000 H100s": 16,000 × 2475 = 39,600,000 tokens per step
    r = roofline("dp", hardware="h100", chips=16000)
    assert r.global_batch == 39_600_000
    # 2,000 whole nodes fill 62.5 scalable units: NVLink, then the spine (each GPU's share of it is its NIC's)
    assert [(lv.fabric.value, int(lv.devices)) for lv in r.network.crossings[0].levels] == [("nvlink", 8),
                                                                                           ("spine", 2000)]  # fmt: skip


def test_tensor_parallelism_beyond_a_node_is_bounded_by_f_over_2475():
    beyond = roofline("tp", hardware="h100", chips=16)
    assert beyond.numeric.text() == "|Y| ≤ F/2475"
    inside = roofline("tp", hardware="h100", chips=8)
    assert inside.numeric.text() == "|Y| ≤ F/2200"
    # LLaMA-3 70B's F = 28672 across nodes: 28672 / 2475 ≈ 11.6-way
    assert roofline("tp", hardware="h100", chips=16, model="llama3-70b").holds({ss.symbols.axis("Y"): 11}) is True
    assert roofline("tp", hardware="h100", chips=16, model="llama3-70b").holds({ss.symbols.axis("Y"): 12}) is False


def test_pipelining_multiplies_the_bandwidth_by_the_stages():
    # Quiz 5, LLaMA-3 70B on 4096 H100s with 8-way pipelining: "990e12 / 3200e9 = 309"
    r = roofline("pipeline+dp", hardware="h100", chips=4096, stages=8)
    assert lower_bound(r.numeric) == Fraction(990 * 10**12, 8 * 400 * 10**9)
    assert round(float(lower_bound(r.numeric))) == 309
    # the symbolic form: the stages multiply W; under FSDP every microbatch gathers the weights again
    assert roofline("pipeline+dp").condition.text() == "B_chip ≥ C/(M_X·N_stages·W_ici)"
    assert roofline("pipeline+fsdp").condition.text() == "B_chip ≥ C·N_MB/(M_X·N_stages·W_ici)"
    fsdp = roofline("pipeline+fsdp", hardware="h100", chips=4096, stages=8, microbatches=16)
    assert lower_bound(fsdp.numeric) == 16 * Fraction(990 * 10**12, 8 * 400 * 10**9)
    # without the stages the numbers keep N_stages
    assert roofline("pipeline+dp", hardware="v5p").numeric.text() == "B_chip ≥ 2550/N_stages"
    assert {r.scheme for r in rooflines(hardware="h100", stages=8)} >= {"pipeline+dp", "pipeline+fsdp"}
    assert not {r.scheme for r in rooflines(hardware="h100")} & {"pipeline+dp", "pipeline+fsdp"}
    assert N_STAGES in roofline("pipeline+dp").condition.cases[0].relations[0].free_symbols
    assert N_MB not in roofline("pipeline+dp").condition.cases[0].relations[0].free_symbols


def test_the_symbolic_forms_and_the_tpu_answers_stay_as_they_were():
    assert roofline("dp").condition.text() == "B_chip ≥ C/(M_X·W_ici)"
    assert roofline("dp", hardware="h100", chips=16).condition.text() == "B_chip ≥ C/(M_X·W_nvlink)"
    v5p = roofline("dp", hardware="v5p", chips=8960)
    assert v5p.numeric.text() == "B_chip ≥ 2550" and v5p.network is None and v5p.inside_one_domain is None
    assert v5p.global_batch == 2550 * 8960
    assert roofline("tp", hardware="v5p", chips=64).numeric.text() == "|Y| ≤ F/2550"


def test_a_bound_that_holds_inside_one_nvlink_domain_says_so():
    alone = roofline("dp", hardware="h100")
    assert alone.inside_one_domain is True and alone.global_batch is None
    assert "inside one NVLink domain of 8 GPUs" in alone.notes[0] and "chips=" in alone.notes[0]
    node = roofline("dp", hardware="h100", chips=8)
    assert node.inside_one_domain is True and node.binding.fabric is Fabric.NVLINK
    assert "stay inside one NVLink domain" in node.notes[0]
    across = roofline("dp", hardware="h100", chips=16)
    assert across.inside_one_domain is False and across.binding.fabric is Fabric.DCN
    assert "the scale-out network binds" in across.notes[0]
    assert "mesh=" in roofline("fsdp+tp", hardware="h100").notes[0]


def test_a_chip_without_a_levels_figure_keeps_the_one_domain_bound_and_says_why(capsys):
    # the A100 preset has no scale-out figure (the book gives none): 16 GPUs cannot be costed across nodes
    r = roofline("dp", hardware="a100", chips=16)
    assert r.network is None and r.inside_one_domain is True and r.global_batch is None
    assert "no figure for W_dcn" in r.notes[0] and "--hw-set W_dcn=" in r.notes[0]
    given = roofline("dp", hardware=hardware("a100").with_constants(W_dcn="2.5e10"), chips=16)
    assert lower_bound(given.numeric) == Fraction(310 * 10**12, 8 * 25 * 10**9)  # C over a node's 8 × 2.5e10
    assert main(["model", "llama3-70b", "--serve", "--batch", "8", "--context", "1024", "--chips", "16", "--hw",
                 "a100"]) == 0  # fmt: skip
    assert main(["model", "llama3-70b", "--train", "--chips", "16", "--batch", "65536", "--hw", "a100"]) == 0
    capsys.readouterr()


def test_each_collective_costs_what_symshard_collective_says():
    # compute it two ways: a layer step through the network against the collective's own cost on the mesh
    h100 = hardware("h100")
    for scheme, sizes, shape in (("dp", {"X": 16}, {"D": 8192, "F": 28672}),
                                 ("fsdp", {"X": 1024}, {"D": 8192, "F": 28672}),
                                 ("tp", {"Y": 16}, {"B": 4096, "D": 8192}),
                                 ("fsdp+tp", {"X": 4, "Y": 8}, {"B": 65536, "D": 8192, "F": 28672})):  # fmt: skip
        lay = layer(scheme, hardware=h100)
        net = through_network(lay.program, h100, sizes)
        mesh = Mesh(sizes, hardware=h100)
        point = {**{dim(k): v for k, v in shape.items()}, **{ss.symbols.axis(a): n for a, n in sizes.items()}}
        point |= {sympy.Symbol(f"M_{a}", positive=True, integer=True): 1 for a in sizes}
        for st in lay.program.collectives():
            op = parse_collective(str(st.op))
            cost = op.cost(mesh, {k: v for k, v in shape.items() if k in op.operand.dim_names}, hardware=h100)
            assert sympy.simplify(net.step_time(st).xreplace(point) - cost.bandwidth_time) == 0, (scheme, str(st.op))


def test_the_split_decides_which_collectives_leave_the_node():
    # FSDP over 4 nodes (one GPU of each), TP inside the node: the two run on different links
    r = roofline("fsdp+tp", hardware="h100", mesh="X=4,Y=8", model="llama3-70b")
    x, y = r.network.crossing("X"), r.network.crossing("Y")
    assert (x.binding.fabric, x.bandwidth) == (Fabric.DCN, 5 * 10**10)  # each GPU's own NIC
    assert (y.binding.fabric, y.bandwidth) == (Fabric.NVLINK, 45 * 10**10)
    # 4·D·F/(|Y|·W_dcn) ≤ 4·B_chip·D·F/C: B_chip ≥ C/(8 × 5e10) = 2475 (Quiz 5: ZeRO-3 with 8-way TP)
    assert lower_bound(r.numeric) == 2475
    v = verdict("fsdp+tp", batch=4 * 2**20, chips=4096, model="llama3-70b", hardware="h100")
    assert v.detail == {"X": 512, "Y": 8} and v.bound == "communication"  # "976 tokens ... So no."


# -- precision cancels -----------------------------------------------------------------------------------------


def test_int8_moves_half_the_bytes_at_twice_the_flops():
    # the book: "precision cancels"; the roofline and compare agree on 2550 (v5p, W_ici = 1.8e11)
    assert roofline("tp", hardware="v5p", dtype="int8").numeric.text() == "|Y| ≤ F/2550"
    assert roofline("tp", hardware="v5p", dtype="int8").numeric == roofline("tp", hardware="v5p").numeric
    dp8 = roofline("dp", hardware="v5p", dtype="int8")
    c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies=[2, 1], hardware="v5p", dtype="int8")
    (case,) = c.regimes[1].numeric.cases
    assert lower_bound(dp8.numeric) == case.relations[0].rhs == 2550
    # symbolically the bytes show: an int8 element is half a bf16 one
    assert roofline("tp", dtype="int8").condition.text() == "|Y| ≤ 2·F·M_Y·W_ici/C"
    # fp8 on H100s across nodes: half the bytes (W_collective = 4e11 for half as many) at the 8-bit peak 2.0e15
    # (a little over twice 9.9e14): 2.0e15 / (2 × 4e11) = 2500
    assert lower_bound(roofline("dp", hardware="h100", chips=16, dtype="fp8").numeric) == 2500


# -- serving ---------------------------------------------------------------------------------------------------

KV_TOKEN = 2 * 32 * 8 * 128 * 2  # LLaMA-3 8B in bf16: 2·L·K·H elements of 2 bytes


@pytest.mark.parametrize(
    ("shard", "per_chip", "largest"),
    [
        # 3 sequences of 4096 tokens on 2 H100s: over the heads each chip holds half of every sequence's cache
        ("heads", Fraction(3 * 4096 * KV_TOKEN, 2), lambda room: room // Fraction(4096 * KV_TOKEN, 2)),
        # over the batch the fuller chip holds 2 whole sequences; each chip fits room // one sequence
        ("batch", 2 * 4096 * KV_TOKEN, lambda room: 2 * (room // (4096 * KV_TOKEN))),
        # over the sequence each chip holds 2048 tokens of each of the 3
        ("sequence", 3 * 2048 * KV_TOKEN, lambda room: room // (2048 * KV_TOKEN)),
    ],
)
def test_the_kv_cache_is_split_as_the_user_says(shard, per_chip, largest):
    s = serve("llama3-8b", batch=3, context=4096, chips=2, hardware="h100", kv_shard=shard)
    weights = 2 * model("llama3-8b").params.total
    assert s.kv_shard == shard and s.kv_bytes_per_chip == per_chip
    assert s.memory_per_chip == Fraction(weights, 2) + per_chip
    room = 80 * 10**9 - Fraction(weights, 2)
    assert s.max_batch == largest(room)
    assert s.kv_time == Fraction(per_chip) / Fraction(335, 100) / 10**12


def test_the_decode_step_combines_as_recorded():
    over = serve("llama3-8b", batch=8, context=4096, hardware="h100")
    book = serve("llama3-8b", batch=8, context=4096, hardware="h100", decode="book")
    assert (over.decode, book.decode) == ("overlap", "book")
    assert over.chips == 1 and over.comm_time == 0  # one chip by default
    # max(T_hbm, T_math) against the book's T_kv + max(T_weights, T_math)
    assert over.step_time == max(over.memory_time, over.math_time)
    assert book.step_time == book.kv_time + max(book.memory_time - book.kv_time, book.math_time)
    assert book.step_time >= over.step_time
    # the book's crossover compares the matmuls with the weights' read only: B = T_weights / (T_math per sequence)
    per_seq = book.math_time / 8
    assert book.compute_bound_batch == (book.memory_time - book.kv_time) / per_seq


def test_the_largest_batch_whenever_the_chips_are_known():
    assert serve("llama3-8b", context=4096, hardware="h100").max_batch == 119  # (80e9 − 16.06e9) / 2^29
    symbolic = serve("llama3-8b", context=4096, chips=4)
    assert symbolic.max_batch is not None and ss.models.training.M_HBM in symbolic.max_batch.free_symbols


def test_serving_on_gpus_costs_the_collectives_through_the_network():
    s = serve("llama3-70b", batch=32, context=8192, mesh="X=2,Y=8", hardware="h100")
    assert s.network.binding.binding.fabric is Fabric.DCN and s.comm_time.is_number
    assert {c.latency_model for c in s.decode_collectives()} == {"nccl"}


# -- the hardware constants and a slice's totals ---------------------------------------------------------------


def test_w_pcie_is_a_constant_like_the_others(capsys):
    h100 = hardware("h100").with_constants(W_pcie="6.4e10")
    assert h100.constants()[W_pcie] == 64 * 10**9 and h100.source("pcie_bandwidth") == "set by the user"
    assert host_to_chip(64 * 10**9, hardware=h100).time == 1
    with pytest.raises(HardwareError, match="no PCIe bandwidth figure") as err:
        host_to_chip(1, hardware="h100")
    assert "--hw-set W_pcie=" in str(err.value.hint)
    assert main(["transfer", "--hw", "h100", "--hw-set", "W_pcie=6.4e10", "--host", "--bytes", "64e9", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["time_s"] == 1


def test_a_gpu_slices_totals_have_its_nvlink_and_a_nodes_bisection(capsys):
    t = slice_totals("h100", 16)
    assert t.nvlink_bandwidth == 16 * 450 * 10**9  # 16 GPUs × 4.5e11 each way
    assert t.node_bisection == 4 * 450 * 10**9  # an 8-GPU node cut in half: 4 GPUs × 4.5e11 each way
    assert slice_totals("gb200-nvl72", 72).node_bisection == 36 * 900 * 10**9
    assert slice_totals("v5p", "4x4x4").nvlink_bandwidth is None
    assert main(["transfer", "--hw", "h100", "--chips", "16", "--totals", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["nvlink_bandwidth"], data["node_bisection"]) == (7.2e12, 1.8e12)
    assert main(["transfer", "--hw", "h100", "--chips", "16", "--totals"]) == 0
    assert "4 GPUs × 4.5e11 B/s = 1.8e12 B/s each way" in capsys.readouterr().out


def test_b200s_peak_is_the_data_sheets():
    b200 = hardware("b200")
    assert b200.flops_bf16 == 2250 * 10**12 and "2.25e15 dense" in b200.source("flops_bf16")


def test_an_uneven_level_keeps_the_levels_below_it():
    dgx = (Level(Fabric.NVLINK, 8), Level(Fabric.DCN, 256), Level(Fabric.SPINE, None))
    p = place({"X": 16000}, dgx)["X"]
    assert [(f.value, int(n)) for f, n in p.spans] == [("nvlink", 8), ("spine", 2000)] and p.even is False
    assert "2000 domains fall unevenly" in str(Mesh("X=16000", hardware="h100").axis("X").note)


# -- the command line ------------------------------------------------------------------------------------------


def test_cli_layer_on_a_gpu_mesh_names_the_level_that_binds(capsys):
    assert main(["layer", "--scheme", "dp", "--mesh", "X=16", "--hw", "h100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["condition"]["numeric"] == "B_chip ≥ 2475"
    assert data["network"]["crossings"][0]["binding"] == "dcn" and data["network"]["inside_one_domain"] is False
    assert main(["layer", "--scheme", "tp", "--mesh", "Y=16", "--hw", "h100", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "起限制作用的是横向扩展" in out and "|Y| ≤ F/2475" in out
    assert main(["layer", "--scheme", "dp", "--hw", "h100"]) == 0
    assert "inside one 8-GPU NVLink domain" in capsys.readouterr().out


def test_cli_model_train_and_serve_take_the_chips(capsys):
    argv = ["model", "llama3-70b", "--train", "--tokens", "15e12", "--chips", "16000", "--hw", "h100", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    dp = next(s for s in data["schemes"] if s["scheme"] == "dp")
    assert dp["numeric"] == "B_chip ≥ 2475" and dp["global_batch"] == 39_600_000
    assert dp["network"]["binding"]["fabric"] == "spine" and dp["inside_one_domain"] is False
    assert main([*argv[:-1], "--stages", "16"]) == 0
    assert "pipeline+dp" in capsys.readouterr().out
    serve_argv = ["model", "llama3-8b", "--serve", "--context", "4096", "--hw", "h100", "--kv-shard", "sequence",
                  "--decode", "book"]  # fmt: skip
    assert main([*serve_argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["serving"]
    assert (data["kv_shard"], data["decode"], data["chips"], data["max_batch"]) == ("sequence", "book", 1, 119)
    assert main(serve_argv) == 0
    out = capsys.readouterr().out
    assert "largest batch  119 sequences fit beside the weights" in out and "over the sequence" in out
    assert main([*serve_argv, "--lang", "zh"]) == 0
    assert "按序列切分" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["model", "llama3-8b", "--serve", "--kv-shard", "pages"], "unknown KV cache sharding 'pages'"),
        (["model", "llama3-8b", "--serve", "--decode", "sum"], "unknown decode step 'sum'"),
        (["model", "llama3-8b", "--train", "--chips", "12", "--stages", "5", "--hw", "h100"],
         "5 pipeline stages do not split 12 chips evenly"),
    ],
)  # fmt: skip
def test_cli_refuses_bad_choices_in_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


ERRORS = [
    (lambda: roofline("dp", hardware="h100", mesh="X=4,Y=4"), PlanError, "runs on mesh axes X, not X, Y", "mesh='X=8'"),
    (lambda: roofline("dp", hardware="h100", chips=8, mesh="X=16"), PlanError, "8 chips and the mesh X=16", "one of"),
    (lambda: roofline("dp", hardware="h100", chips=0), ModelError, "chips must be positive", "above 0"),
    (lambda: roofline("dp", hardware="h100", chips=16, cost_model="exact"), PlanError, "unknown cost model", "book"),
    (lambda: serve("llama3-8b", kv_shard="pages"), ModelError, "unknown KV cache sharding", "heads, batch, sequence"),
]


@pytest.mark.parametrize(("call", "error", "message", "hint"), ERRORS)
def test_bad_input_is_refused_with_a_hint(call, error, message, hint):
    with pytest.raises(error, match=message) as err:
        call()
    assert hint in str(err.value.hint)


# -- the docs page ---------------------------------------------------------------------------------------------


def test_the_book_differences_page_renders_through_the_site(tmp_path):
    pytest.importorskip("jinja2", reason="the site's pages need the docs extra")
    from symshard.cli import command_line
    from symshard.site.pages import Page, sources

    rel = "explanation/book-differences.md"
    page = Page(rel, tmp_path / "figures", cli=command_line())
    text = page.render((sources() / "docs" / rel).read_text(encoding="utf-8"))
    # the book's figures quoted, symshard's computed beside them
    for shown in ("5,625", "5,750", "3.96e7", "4.06e7", "B_chip ≥ 2475/8 (≈ 309.4)", "B_chip ≥ 79200",
                  "B_chip ≥ 1925", r"\|Y\| ≤ 3584/275 (≈ 13.03)", "'|Y| ≤ F/2550', '|Y| ≤ F/2550'"):  # fmt: skip
        assert shown in text, shown
    for nav in (sources() / "mkdocs.yml", sources() / "zh" / "mkdocs.yml"):
        assert rel in nav.read_text(encoding="utf-8")

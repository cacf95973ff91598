"""Whole models: presets against their cards, memory and time by hand, rooflines against MODELS.md,
serving, transfers, the CLI, and the laws the algebra must keep (Hypothesis)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symshard as ss
from symshard.algebra.symbols import C, W_dcn, W_hbm, W_ici, axis, dim
from symshard.cli import main
from symshard.errors import HardwareError, MeshError, ModelError, PlanError, UnknownPresetError
from symshard.models.inference import (
    decode_tp_limit,
    kv_cache_bytes,
    latency_threshold,
    prefill_tp_limit,
    serve,
    weight_stationary,
)
from symshard.models.parallelism import N_MB, N_STAGES, bubble, roofline, rooflines
from symshard.models.schemes import B_CHIP, B_POD, N
from symshard.models.training import M_HBM, batch_per_chip, train, training_memory
from symshard.models.transfers import gather_to_one, host_matmul_condition, host_to_chip, point_to_point, slice_totals
from symshard.models.transformer import MODELS, Model, model
from symshard.models.verdicts import best_split, verdict

# -- presets against the sizes their cards and papers publish ------------------------------------------

PUBLISHED = [
    # (preset, total parameters as published, source)
    ("llama2-13b", 13e9, "Llama 2 paper, Table 1: 13B"),
    ("llama3-8b", 8.03e9, "Meta-Llama-3-8B model card: 8.03B"),
    ("llama3-70b", 70.6e9, "Meta-Llama-3-70B model card: 70.6B"),
    ("llama3-405b", 405e9, "Llama 3 paper: 405B"),
    ("gemma-7b", 786_432_000 + 7_751_248_896, "Gemma paper, Table 2: embedding + non-embedding"),
    ("mixtral-8x7b", 46.7e9, "Mistral AI: 46.7B total"),
]


@pytest.mark.parametrize(("name", "published", "source"), PUBLISHED)
def test_each_preset_is_within_one_percent_of_its_published_size(name, published, source):
    total = model(name).params.total
    assert abs(float(total) / published - 1) < 0.01, (name, int(total), source)


def test_presets_have_sources_and_the_catalogue_is_covered():
    assert {n for n, *_ in PUBLISHED} == set(MODELS)
    for m in MODELS.values():
        assert m.source("sizes") and "How to Scale Your Model" in m.source("sizes")
        assert m.source("published_params")


def test_the_models_md_table():
    # L, D, F, N, K, H, V from MODELS.md, typed again
    table = {
        "llama2-13b": (40, 5120, 13824, 40, 40, 128, 32000),
        "llama3-8b": (32, 4096, 14336, 32, 8, 128, 128256),
        "llama3-70b": (80, 8192, 28672, 64, 8, 128, 128256),
        "llama3-405b": (126, 16384, 53248, 128, 8, 128, 128256),
        "gemma-7b": (28, 3072, 24576, 16, 16, 256, 256000),
    }
    for name, sizes in table.items():
        m = model(name)
        assert (m.layers, m.d_model, m.d_ff, m.heads, m.kv_heads, m.head_dim, m.vocab) == sizes


def test_exact_counts_match_the_checkpoints():
    # the safetensors totals of the released checkpoints (norms included)
    assert model("llama3-8b").params.total == 8_030_261_248
    assert model("llama3-70b").params.total == 70_553_706_496
    assert model("gemma-7b").params.total == 8_537_680_896  # tied embeddings
    mixtral = model("mixtral-8x7b").params
    assert abs(float(mixtral.active) / 12.9e9 - 1) < 0.01  # "12.9B used per token"


def test_the_chapters_formula_is_the_total_without_norms():
    L, D, F, H, K, V, Nq = (dim(n) for n in ("L", "D", "F", "H", "K", "V", "N_q"))
    p = Model.symbolic().params
    chapter = L * (3 * D * F + 2 * D * Nq * H + 2 * D * K * H) + 2 * V * D
    assert sympy.expand(p.total - p.norms - chapter) == 0
    assert p.norms == (2 * L + 1) * D and p.router == 0
    moe = Model.symbolic(moe=True).params
    E, k = dim("E"), dim("k")
    assert sympy.expand(moe.mlp - 3 * L * E * D * F) == 0
    assert sympy.expand(moe.total - moe.active - 3 * L * (E - k) * D * F) == 0


def test_flops_per_token():
    m = model("llama3-70b")
    p = m.params.active
    assert m.flops_per_token() == 6 * p and m.flops_per_token(training=False) == 2 * p
    # attention adds 4·L·N·H·T forward (times 3 for training)
    assert m.flops_per_token(context=8192) - 6 * p == 3 * 4 * 80 * 64 * 128 * 8192


# -- memory and time by hand ---------------------------------------------------------------------------------


def test_llama3_70b_memory_by_hand():
    params = 70_553_706_496
    mem = training_memory("llama3-70b", 4_194_304)
    assert mem.weights == 2 * params and mem.optimizer_state == 8 * params and mem.gradients == 0
    assert mem.bytes_per_param == 10  # bf16 weights + Adam's two fp32 moments
    # the MLP's input and two hidden activations per layer, bf16: 2·L·B·(D + 2F)
    acts = 2 * 80 * 4_194_304 * (8192 + 2 * 28672)
    assert mem.activations == acts == 43_980_465_111_040
    assert mem.total == 10 * params + acts
    assert mem.chips_to_fit("v5p") == math.ceil((10 * params + acts) / 96e9) == 466
    assert mem.per_chip(8960) == sympy.Rational(10 * params + acts, 8960)
    assert training_memory("llama3-70b").chips_to_fit("v5p") == 8  # weights and Adam alone
    assert training_memory("llama3-70b", 1, policy=4).activations == 2 * 4 * 8192 * 80
    assert training_memory("llama3-70b", 1, policy="layer").activations == 2 * 8192 * 80
    assert training_memory("llama3-70b", optimizer="adam-master", gradients=True).bytes_per_param == 16
    # pure data parallelism: the largest model a v5p holds whole is 96e9 / 10 parameters
    assert mem.largest_data_parallel_model("v5p") == sympy.Rational(96 * 10**9, 10)


def test_llama3_70b_training_time_by_hand():
    run = train("llama3-70b", tokens=15e12, chips=8960, hardware="v5p", mfu=0.4)
    flops = Fraction(6 * 70_553_706_496) * 15 * 10**12
    seconds = flops / (8960 * Fraction(459, 1) * 10**12 * Fraction(2, 5))
    assert run.flops == flops and run.seconds == seconds
    assert round(float(run.days), 1) == 44.7  # the book: about 44 days
    assert str(run.formula) == "6*P*tokens/(C*MFU*N)"


def test_training_is_symbolic_until_given_numbers():
    run = train(Model.symbolic())
    assert run.seconds.free_symbols >= {C, sympy.Symbol("MFU", positive=True), N}
    assert training_memory(Model.symbolic()).chips_to_fit() == sympy.ceiling(10 * Model.symbolic().params.total / M_HBM)


def test_an_uneven_batch_per_chip_is_a_real_number_with_a_note():
    b = batch_per_chip(4_194_304, 8960)
    assert b.per_chip == sympy.Rational(4_194_304, 8960) and b.padded == 469 and b.padding == 8960 * 469 - 4_194_304
    assert b.even is False and "XLA pads it to 4,202,240" in b.note
    assert batch_per_chip(4096, 8).even and batch_per_chip(4096, 8).note is None
    run = train("llama3-8b", tokens=1e12, chips=3, batch=1000, hardware="v5e", mfu=0.5)
    assert run.per_chip.per_chip == sympy.Rational(1000, 3)


# -- rooflines against MODELS.md -----------------------------------------------------------------------------


def test_scheme_conditions_match_models_md():
    v5p = ss.hardware("v5p")
    alpha = v5p.constants()[C] / v5p.constants()[W_ici]
    assert alpha == 2550
    F = 28672
    assert roofline("dp", hardware="v5p").numeric.text() == f"B_chip ≥ {alpha}"
    assert roofline("fsdp").condition.text() == "B_chip ≥ C/(M_X·W_ici)"
    tp = roofline("tp", hardware="v5p", model="llama3-70b").numeric
    assert tp.cases[0].relations[0].rhs == sympy.Rational(F, alpha)
    mixed = roofline("fsdp+tp", hardware="v5p", model="llama3-70b")
    assert mixed.numeric.cases[0].relations[0].rhs == sympy.Rational(alpha**2, F)  # α²/(M_X·M_Y·F)
    serial = roofline("fsdp+tp", hardware="v5p", model="llama3-70b", overlap="serial")
    assert serial.numeric.cases[0].relations[0].rhs == 4 * sympy.Rational(alpha**2, F)
    assert "overlap" in mixed.convention and "adds up" in serial.convention
    pods = roofline("pods", hardware="v5p")
    assert pods.symbol == B_POD and pods.numeric.cases[0].relations[0].rhs == sympy.Rational(459 * 10**12, 625 * 10**7)
    # an MoE layer's data-parallel threshold grows by E/k
    moe = roofline("dp", hardware="v5p", model="mixtral-8x7b")
    assert moe.numeric.cases[0].relations[0].rhs == alpha * 8 / 2
    # on a GPU the network is NVLink: C/W = 990e12/450e9 = 2200
    assert roofline("dp", hardware="h100").numeric.text() == "B_chip ≥ 2200"


def test_pipeline_and_expert_rooflines():
    pipe = roofline("pipeline", hardware="h100")
    B, D = dim("B"), dim("D")
    w = sympy.Symbol("W_nvlink", positive=True)
    # the GPU chapter: 2BD/(W·N_MB)·(N_MB + N_stages − 2)
    assert sympy.simplify(pipe.comm_time - 2 * B * D / (w * N_MB) * (N_MB + N_STAGES - 2)) == 0
    assert bubble(4, 4) == sympy.Rational(3, 7) and pipe.symbol == N_STAGES
    ep = roofline("expert", hardware="h100")
    z = axis("Z")
    values = {**ep.values, B: 1, D: 1, z: 64, dim("k"): 2, dim("F"): 4096}
    # 64 GPUs ≥ 8·2: T_comms = 4BD(Z − 8)/(8·W_dcn·Z)·(16/Z)
    comm = as_number(ep.comm_time, values)
    assert comm == Fraction(4 * 56, 8 * 5 * 10**10 * 64) * Fraction(16, 64)
    assert ep.holds({dim("F"): 10**6, z: 64, dim("k"): 2}) is True
    assert ep.holds({dim("F"): 100, z: 64, dim("k"): 2}) is False
    assert {r.scheme for r in rooflines(hardware="v5p")} == {"dp", "fsdp", "tp", "fsdp+tp", "pods", "pipeline"}


def as_number(expr, values):
    return Fraction(str(sympy.nsimplify(sympy.sympify(expr).xreplace(values))))


def test_verdicts_and_the_best_split_for_llama3_70b():
    kw = {"batch": 4_194_304, "chips": 8960, "model": "llama3-70b", "hardware": "v5p"}
    assert verdict("fsdp", **kw).bound == "communication"  # 468 tokens per chip < 2550
    mixed = verdict("fsdp+tp", **kw)
    assert mixed.bound == "compute" and mixed.detail == {"X": 1120, "Y": 8}
    choice = best_split(4_194_304, 8960, model="llama3-70b", hardware="v5p")
    assert not choice.even and "XLA pads" in choice.note
    # brute force: the chosen split is the cheapest divisor pair
    assert choice.comm_time == min(t for _, _, t, _ in choice.by_divisor)
    with pytest.raises(PlanError, match="pods do not split"):
        verdict("pods", pods=3, **kw)


# -- serving ---------------------------------------------------------------------------------------------------


def test_serving_llama3_70b_int8_on_a_v5e_4x2_by_hand():
    s = serve("llama3-70b", batch=32, context=8192, mesh="X=4,Y=2", hardware="v5e", dtype="int8")
    kv_token = 2 * 80 * 8 * 128  # int8: one byte per element
    assert s.kv_bytes_per_token == kv_token and s.kv_bytes_per_sequence == kv_token * 8192
    weights = 70_553_706_496
    per_chip = Fraction(weights, 8) + Fraction(32 * kv_token * 8192, 8)
    assert s.memory_per_chip == per_chip and s.fits is True  # 14.2 GB of 16 GB
    assert s.max_batch == (16 * 10**9 - Fraction(weights, 8)) * 8 // (kv_token * 8192) == 42
    assert s.memory_time == per_chip / Fraction(82, 100) / 10**12
    assert s.regime == "memory" and s.compute_bound_batch is None  # long context: never compute-bound
    assert s.throughput == 32 / s.step_time
    regimes = {c.regime for c in s.decode_collectives()}
    assert regimes == {"latency"}  # 64 KiB per shard on a 4-wide line without wraparound
    assert kv_cache_bytes("llama3-70b", 1) == 2 * kv_token  # bf16


def test_kv_heads_repeat_beyond_k_chips():
    s = serve("llama3-70b", batch=1, context=1024, chips=16, hardware="v5e", dtype="int8")
    assert s.kv_split == 8 and "each KV head's cache is kept on 2 chips" in s.notes[0]


def test_tp_limits_match_the_chapter():
    assert prefill_tp_limit().bound == dim("F") * sympy.Symbol("M_Y", positive=True, integer=True) * W_ici / C
    decode = decode_tp_limit()
    beta = W_hbm / W_ici
    assert sympy.simplify(decode.bound.subs(sympy.Symbol("M_Y", positive=True, integer=True), 1)
                          - dim("F") / (dim("B") * beta)) == 0  # fmt: skip
    v5e = ss.hardware("v5e").constants()
    assert round(float(v5e[W_hbm] / v5e[W_ici]), 1) == 9.1  # "≈ 9 for v5e and v6e"


def test_weight_stationary_matches_the_chapter():
    ws = weight_stationary()
    B, D, F = dim("B"), dim("D"), dim("F")
    assert sympy.simplify(ws.one_d_time - 4 * B * D / (3 * W_ici)) == 0
    X, Y, Z = axis("X"), axis("Y"), axis("Z")
    assert sympy.simplify(ws.two_d_time - (2 * B * D / (X * W_ici) + 4 * B * F / (Y * Z * W_ici))) == 0
    assert sympy.simplify(ws.best_x - sympy.sqrt(N * D / (2 * F))) == 0
    assert sympy.simplify(ws.crossover_chips - 32 * (F / D) * sympy.Rational(3, 4) ** 2) == 0


def test_latency_threshold_is_45_kb_on_v5e():
    assert latency_threshold("v5e") == 45_000


# -- transfers -------------------------------------------------------------------------------------------------


def test_point_to_point_and_gather():
    r = point_to_point((0, 0), (3, 3), "4x4", hardware="v5e", nbytes=10**9)
    assert (r.hops, r.ports) == (6, 2)  # no wraparound on a 4x4 v5e: straight along both axes
    assert r.time == Fraction(10**9, 2 * 45 * 10**9) + 6 * Fraction(1, 10**6)
    wrapped = point_to_point((0, 0), (15, 0), "16x16", hardware="v5e", nbytes=10**6)
    assert wrapped.hops == 1 and wrapped.moves == (-1, 0)  # the wraparound link is one hop away
    g = gather_to_one((1, 1), "4x4", hardware="v5e", nbytes=10**6)
    assert g.ports == 4 and g.senders == 15 and g.bandwidth_time == Fraction(15 * 10**6, 4 * 45 * 10**9)
    assert gather_to_one((0, 0), "4x4", hardware="v5e", nbytes=1).ports == 2
    with pytest.raises(MeshError, match=r"chip \(4, 0\) is not in a 4x4 slice"):
        point_to_point((4, 0), (0, 0), "4x4", hardware="v5e", nbytes=1)


def test_host_transfers_and_slice_totals():
    assert host_to_chip(16 * 10**9, hardware="v6e", chips=4).time == Fraction(16, 4 * 32)
    assert host_matmul_condition(hardware="v5e").cases[0].relations[0].rhs == Fraction(197 * 10**12, 16 * 10**9)
    totals = slice_totals("v5p", "16x20x28")
    assert totals.chips == 8960 and totals.hosts == 8960 // 4
    assert totals.flops == 8960 * 459 * 10**12 and totals.hbm_bytes == 8960 * 96 * 10**9
    assert slice_totals("tpu7x", 64).hosts is None  # no host size on record
    with pytest.raises(HardwareError, match="no PCIe bandwidth"):
        host_to_chip(1, hardware="h100")


# -- errors ----------------------------------------------------------------------------------------------------

ERRORS = [
    (lambda: model("llama3-71b"), UnknownPresetError, r"unknown model 'llama3-71b'", "did you mean"),
    (
        lambda: model("llama3-8b").with_sizes(kv_heads=5),
        ModelError,
        r"8b \(modified\) has 5 KV heads for 32",
        "K must divide N",
    ),
    (lambda: model("llama3-8b").with_sizes(layers=2.5), ModelError, "layers must be a whole number", "round"),
    (lambda: model("llama3-8b").with_sizes(widht=3), ModelError, "no size 'widht'", "choose one of"),
    (lambda: model("mixtral").with_sizes(experts_per_token=9), ModelError, "to 9 of 8 experts", "at most"),
    (lambda: train("llama3-8b", mfu=1.5), ModelError, "MFU must be at most 1", "fraction of peak"),
    (lambda: train("llama3-8b", chips=0), ModelError, "chips must be positive", "above 0"),
    (lambda: training_memory("llama3-8b", policy="most"), ModelError, "unknown checkpointing policy", "size D"),
    (lambda: roofline("zero"), PlanError, "unknown parallelism scheme 'zero'", "dp, fsdp"),
    (lambda: roofline("dp", overlap="maybe"), PlanError, "unknown overlap convention", "axes or none (serial)"),
    (lambda: serve("llama3-8b", mesh="X=2", chips=2), ModelError, "not both", "drop"),
]


@pytest.mark.parametrize(("call", "error", "message", "hint"), ERRORS)
def test_bad_input_raises_a_specific_error_with_a_hint(call, error, message, hint):
    with pytest.raises(error, match=message) as info:
        call()
    assert hint in (info.value.hint or "")


# -- the command line ------------------------------------------------------------------------------------------


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


TRAIN = ("model", "llama3-70b", "--train", "--tokens", "15e12", "--chips", "8960", "--hw", "v5p", "--mfu", "0.4")
SERVE = ("model", "llama3-70b", "--serve", "--batch", "32", "--context", "8192", "--mesh", "X=4,Y=2", "--hw", "v5e",
         "--dtype", "int8")  # fmt: skip


def test_cli_train(capsys):
    code, out, _ = run(capsys, *TRAIN)
    assert code == 0
    assert "= 3.86e6 s = 44.7 days" in out and "at least 8 chips of 89.4 GiB" in out
    assert "fsdp+tp   B_chip ≥ C^2/(F·M_X·M_Y·W_ici^2)" in out
    code, out, _ = run(capsys, *TRAIN, "--batch", "4194304", "--json")
    data = json.loads(out)
    assert data["training"]["days"] == pytest.approx(44.7, abs=0.05)
    assert data["training"]["batch_per_chip"]["padded"] == 469 and data["training"]["batch_per_chip"]["notes"]
    assert data["split"]["X"] == 1120 and data["split"]["Y"] == 8
    assert {v["scheme"]: v["bound"] for v in data["verdicts"]} == {
        "dp": "communication", "fsdp": "communication", "fsdp+tp": "compute"}  # fmt: skip
    assert data["params"]["total"] == 70_553_706_496


def test_cli_serve(capsys):
    code, out, _ = run(capsys, *SERVE)
    assert code == 0 and "fits; largest batch 42" in out and "memory-bound" in out and "latency-bound" in out
    data = json.loads(run(capsys, *SERVE, "--json")[1])
    assert data["serving"]["max_batch"] == 42 and data["serving"]["regime"] == "memory"
    assert data["weight_stationary"]["crossover"] == "N > 18·F/D"
    assert data["tp_limits"]["decode"]["condition"] == "|Y| ≤ F·M_Y·W_ici/(B·W_hbm)"


def test_cli_describe_list_and_chinese(capsys):
    code, out, _ = run(capsys, "model")
    assert code == 0 and all(name in out for name in MODELS)
    code, out, _ = run(capsys, "model", "mixtral-8x7b")
    assert "E=8, k=2" in out and "active" in out
    code, out, _ = run(capsys, *SERVE, "--lang", "zh")
    assert code == 0 and "内存受限" in out and "延迟受限" in out and "最大批大小 42" in out
    code, out, _ = run(capsys, "model", "llama3-8b", "--sizes", "L=16")
    assert "L=16" in out


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (("model", "llama3-71b"), "unknown model 'llama3-71b'"),
        (("model", "llama3-8b", "--train", "--serve"), "--train and --serve ask different questions"),
        (("model", "--train"), "name a model to train or serve"),
        (("model", "llama3-8b", "--train", "--mfu", "2"), "MFU must be at most 1"),
        (("model", "llama3-8b", "--sizes", "Q=3"), "a model has no size 'Q'"),
        (("model", "llama3-8b", "--train", "--sizes", "L=x"), "model size L must be a positive whole number, not 'x'"),
        (("model", "llama3-8b", "--serve", "--mesh", "X=2", "--chips", "2"), "not both"),
    ],
)
def test_cli_errors_are_one_line(capsys, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and pattern in err
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 2 and pattern in json.loads(out)["error"]["message"]


def test_notebook_display():
    from symshard.notebook import show

    m = model("llama3-70b")
    assert "<table>" in show("text/html", m) and m._repr_latex_().startswith("$P_")
    assert "<table>" in show("text/html", training_memory(m, 1024))
    assert "<table>" in show("text/html", train(m, tokens=1e12, chips=64, hardware="v5p", mfu=0.5))
    s = serve(m, batch=8, context=1024, chips=8, hardware="v5p")
    assert "<table>" in show("text/html", s)
    assert roofline("dp")._repr_latex_().startswith("$")
    assert weight_stationary()._repr_latex_() == "$N > \\frac{18 F}{D}$"


# -- laws (Hypothesis) -----------------------------------------------------------------------------------------

sizes = st.fixed_dictionaries(
    {
        "layers": st.integers(1, 200),
        "d_model": st.integers(1, 64).map(lambda x: 128 * x),
        "d_ff": st.integers(1, 512).map(lambda x: 128 * x),
        "kv_heads": st.integers(1, 16),
        "group": st.integers(1, 8),
        "head_dim": st.sampled_from([64, 128, 256]),
        "vocab": st.integers(1000, 300_000),
        "experts": st.integers(1, 64),
        "top": st.integers(1, 8),
        "tied": st.booleans(),
    }
)


def _model(d) -> Model:
    e = d["experts"]
    return Model("random", "random", d["layers"], d["d_model"], d["d_ff"], d["kv_heads"] * d["group"], d["kv_heads"],
                 d["head_dim"], d["vocab"], experts=e, experts_per_token=min(d["top"], e),
                 tied_embeddings=d["tied"])  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes, st.integers(1, 2**22), st.integers(1, 4096))
def test_the_symbolic_result_equals_the_numeric_one(d, batch, context):
    m = _model(d)
    sym = Model.symbolic(moe=m.is_moe, tied_embeddings=m.tied_embeddings)
    values = m.values()
    for part, value in vars_of(m.params).items():
        assert sympy.sympify(getattr(sym.params, part)).xreplace(values) == value, part
    assert sym.flops_per_token(context=context).xreplace(values) == m.flops_per_token(context=context)
    numeric = training_memory(m, batch)
    symbolic = training_memory(sym, batch)
    assert symbolic.total.xreplace(values) == numeric.total
    assert kv_cache_bytes(sym, context).xreplace(values) == kv_cache_bytes(m, context)


def vars_of(p) -> dict:
    return {**p.parts(), "total": p.total, "active": p.active}


@settings(max_examples=40, deadline=None)
@given(
    st.integers(10, 22).map(lambda e: 2**e),
    st.integers(1, 64).map(lambda x: 1024 * x),
    st.integers(1, 8).map(lambda x: 1024 * x),
    st.integers(3, 13).map(lambda e: 2**e),
    st.sampled_from(["axes", "serial"]),
    st.floats(0.2, 5.0),
)
def test_the_fsdp_tp_optimum_minimises_the_communication(b, f, d, n, overlap, factor):
    roof = roofline("fsdp+tp", hardware="v5p", overlap=overlap)
    from symshard.models.parallelism import forward_groups

    values = {**roof.values, dim("B"): b, dim("F"): f, dim("D"): d}
    groups = [sympy.sympify(g).xreplace(values) for g in forward_groups("ici")]

    def comm(x: float) -> float:
        point = {axis("X"): x, axis("Y"): n / x}
        times = [float(g.xreplace(point)) for g in groups]
        return max(times) if overlap == "axes" else sum(times)

    from symshard.models.parallelism import split_optimum

    x_best = float(sympy.sympify(split_optimum("ici", overlap).x).xreplace({**values, N: n}))
    assert comm(x_best) <= comm(x_best * factor) * (1 + 1e-9)
    assert comm(x_best) == pytest.approx(float(sympy.sympify(roof.comm_time).xreplace({**values, N: n})), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 512), st.integers(1, 64).map(lambda x: 1024 * x), st.integers(1, 16).map(lambda x: 512 * x),
       st.sampled_from(["tpu-v5e", "tpu-v5p", "tpu-v6e"]))  # fmt: skip
def test_the_decode_tp_limit_is_where_the_two_times_meet(b, f, d, chip):
    limit = decode_tp_limit()
    c = ss.hardware(chip).constants()
    values = {**c, dim("B"): b, dim("F"): f, dim("D"): d, sympy.Symbol("M_Y", positive=True, integer=True): 1}
    y = limit.at(values)
    at = {**values, axis("Y"): y}
    assert sympy.simplify(sympy.sympify(limit.first).xreplace(at) - sympy.sympify(limit.second).xreplace(at)) == 0
    below = {**values, axis("Y"): y / 2}
    assert sympy.sympify(limit.first).xreplace(below) > sympy.sympify(limit.second).xreplace(below)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 64).map(lambda x: 256 * x), st.integers(1, 64).map(lambda x: 256 * x), st.integers(2, 4096))
def test_two_d_weight_stationary_wins_exactly_past_the_crossover(d, f, n):
    ws = weight_stationary()
    values = {dim("B"): 1, dim("D"): d, dim("F"): f, W_ici: 1, N: n}
    best = float(sympy.sympify(ws.best_time).xreplace(values))
    one = float(sympy.sympify(ws.one_d_time).xreplace(values))
    crossover = float(sympy.sympify(ws.crossover_chips).xreplace(values))
    if abs(n - crossover) > 1e-6 * crossover:
        assert (best < one) == (n > crossover)


def test_w_dcn_is_the_pods_bandwidth():
    assert roofline("pods").condition.cases[0].relations[0].rhs == C / W_dcn
    assert roofline("dp").symbol == B_CHIP

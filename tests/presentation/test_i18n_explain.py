"""Explanations in English and Chinese: case reasons, strategy steps, error messages, the catalogue.

English is the library's own text and stays byte for byte what it was; Chinese comes from the
gettext catalogues ``symshard/i18n/zh/*.po``, read only when asked for. Every English key has a
Chinese template with the same fields, and no wording the glossary avoids appears; that every
message the library can say has a translation is tests/presentation/test_catalogue.py's.
"""

from __future__ import annotations

import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import english_left

import symshard as ss
from symshard.algebra.dtypes import dtype_bytes
from symshard.errors import SymshardError, UsageError
from symshard.i18n import glossary, language_from, term
from symshard.i18n.catalog import catalogue, condition
from symshard.i18n.explain import error_line, explain, step_sentence, strategy_sentences
from symshard.messages import keyed
from symshard.notation.einsums import ENGLISH as MATMUL
from symshard.notation.einsums import matmul

ROOT = Path(__file__).parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")


def english_in(text: str) -> str | None:
    """English left in Chinese output, ignoring quoted input and command-line options."""
    return english_left(re.sub(r"'[^']*'|--[\w-]+", " ", text))


# -- import cost ------------------------------------------------------------------------------------


def test_import_symshard_loads_no_catalogue():
    code = (
        "import sys, symshard; print(sorted(m for m in sys.modules if 'i18n' in m or 'tomllib' in m or 'jinja2' in m))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_english_reads_no_catalogue():
    code = (
        "import symshard as ss; "
        "c = ss.matmul('A[I, J_X] · B[J_X, K]').classify(); s = str(c); e = ss.explain(c, 'en'); "
        "from symshard.cli import main; main(['matmul', 'A[I, J_X] · B[J_X, K]', '--json', '--explain']); "
        "main(['shard', 'A[I_X, J_X]']); "
        "from symshard.i18n.catalog import catalogue; print(catalogue.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0"


# -- case reasons -------------------------------------------------------------------------------------

CASES = [
    (
        "A[I, J] · B[J, K]",
        (
            "Case 1: no contracting dim (J) is sharded, so each device multiplies its own blocks and the result "
            "keeps the operands' shardings with no communication."
        ),
        "情况 1：没有收缩维度（J）被分片，所以每个设备直接把自己持有的块相乘，结果沿用操作数的分片，不需要任何通信。",
    ),
    (
        "X[B, D] · Y[D_X, F] -> Z[B, F]",
        (
            "Case 2: Y shards the contracting dim D along X but X does not, so the blocks do not line up: "
            "AllGather Y over X first (or slice X to match, multiply locally and AllReduce)."
        ),
        (
            "情况 2：Y 沿 X 对收缩维度 D 分片，X 却没有，所以两边的块对不上：先沿 X 对 Y 做 AllGather"
            "（也可以把 X 按相同方式切分，在本地相乘后再做 AllReduce）。"
        ),
    ),
    (
        "A[I, J_X] · B[J, K_X]",
        (
            "Case 2: A shards the contracting dim J along X but B does not, so the blocks do not line up: "
            "AllGather A over X first (B cannot be sliced to match: X already shards K)."
        ),
        (
            "情况 2：A 沿 X 对收缩维度 J 分片，B 却没有，所以两边的块对不上：先沿 X 对 A 做 AllGather"
            "（B 无法按相同方式切分来配合：X 已经用来切分 K）。"
        ),
    ),
    (
        "A[I, J_X] · B[J_Y, K]",
        (
            "Case 2: the contracting dim J is sharded along X in A but along Y in B, so the blocks do not line up: "
            "gather (or reshard) one operand so that both split J the same way."
        ),
        (
            "情况 2：收缩维度 J 在两个操作数中的分片方式不同（A：X；B：Y），所以两边的块对不上：先对其中一个操作数做 "
            "AllGather（或重新分片），让两者以相同方式切分 J。"
        ),
    ),
    (
        "[I, J_X] · [J, K]",
        (
            "Case 2: the left operand shards the contracting dim J along X but the right operand does not, so the "
            "blocks do not line up: AllGather the left operand over X first (or slice the right operand to match, "
            "multiply locally and AllReduce)."
        ),
        (
            "情况 2：左操作数 沿 X 对收缩维度 J 分片，右操作数 却没有，所以两边的块对不上：先沿 X 对 左操作数 做 AllGather"
            "（也可以把 右操作数 按相同方式切分，在本地相乘后再做 AllReduce）。"
        ),
    ),
    (
        "A[I, J_X, L_Y] · B[J_X, L_Y, K] -> C[I, K]",
        (
            "Case 3: both operands shard the contracting dim J and L along XY, so the local products are partial "
            "sums: multiply locally to C[I, K]{U_XY}, then AllReduce (or ReduceScatter) over XY."
        ),
        (
            "情况 3：两个操作数都沿 XY 对收缩维度 J 和 L 分片，所以各设备的本地乘积只是部分和：先在本地相乘得到 "
            "C[I, K]{U_XY}，再沿 XY 做 AllReduce（或 ReduceScatter）。"
        ),
    ),
    (
        "A[I_X, J] · B[J, K_X]",
        (
            "Case 4: mesh axis X shards I of A and K of B, both kept in the output, so a device would hold only a "
            "diagonal block of Out; AllGather one operand over X first."
        ),
        (
            "情况 4：网格轴 X 既切分了 A 的 I，又切分了 B 的 K，而这两个维度都保留在输出中，所以一个设备只能持有 Out 的"
            "一个对角块；先沿 X 对其中一个操作数做 AllGather。"
        ),
    ),
]


@pytest.mark.parametrize(("text", "english", "chinese"), CASES)
def test_case_reasons_in_both_languages(text, english, chinese):
    c = matmul(text).classify()
    assert str(c) == english  # byte for byte what it was: doctests, docs and tests quote it
    assert explain(c) == explain(c, "en") == english
    assert ss.explain(c, lang="zh") == chinese
    assert c.message is not None and str(c.message) == c.reason


def test_notes_in_both_languages():
    c = matmul("A[I_X, J, L_Y] · B[J, K_X] -> C[I_X, K]").classify()
    assert c.notes == ("L is summed inside A alone; its sharding along Y leaves partial sums",)
    assert [ss.explain(m, lang="zh") for m in c.note_messages] == ["L 只在 A 内部求和；它沿 Y 的分片会留下部分和"]
    c = matmul("A[I_X, J_Y] · B[J_Y, K_X]").classify()
    assert c.case == 4 and c.notes == ("its contracting dims are sharded too: J",)
    assert ss.explain(c.note_messages[0], lang="zh") == "它的收缩维度也被分片了：J"


def test_classification_equality_ignores_the_message():
    c = matmul("A[I, J_X] · B[J_X, K]").classify()
    assert c == type(c)(c.case, c.reason, c.notes)


# -- strategy explanations ------------------------------------------------------------------------------


def test_the_chapter_example_reads_as_one_sentence_per_step():
    p = ss.plan("A[I_X, J] · B[J, K] -> C[I, K]", "X=4")
    s = p.strategy("AllGather_X(A) → matmul")
    assert strategy_sentences(s, mesh=p.mesh) == [
        "AllGather A over X: each device receives the other 3 shards, so every device holds A[I, J] whole.",
        "Each device multiplies its own blocks, A[I, J] · B[J, K] -> C[I, K], with no communication.",
    ]
    assert strategy_sentences(s, "zh", mesh=p.mesh) == [
        "沿 X 对 A 做 AllGather：每个设备收到其余 3 个分片，于是每个设备都持有完整的 A[I, J]。",
        "每个设备把自己持有的块相乘，A[I, J] · B[J, K] -> C[I, K]，不需要通信。",
    ]
    # without a mesh the counts stay symbolic
    assert "the other |X| - 1 shards" in strategy_sentences(s)[0]


def test_each_collective_has_its_sentence():
    p = ss.plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=2")
    said = {x for s in p.strategies for x in strategy_sentences(s, mesh=p.mesh)}
    text = "\n".join(sorted(said))
    assert "AllReduce C over X: the partial sums of the 2 devices are added up and every device receives" in text
    scatter = ss.parse("ReduceScatter_{X,K}(C[I, K]{U_X})")
    assert step_sentence(scatter) == (
        "ReduceScatter C over X: the partial sums of the |X| devices are added up and each device keeps 1/|X| "
        "of the total along K, C[I, K_X]."
    )
    assert step_sentence(scatter, "zh", mesh=ss.Mesh("X=8")) == (
        "沿 X 对 C 做 ReduceScatter：把 8 个设备上的部分和相加，每个设备只保留总和沿 K 的 1/8，得到 C[I, K_X]。"
    )
    assert "the contracting dim J is no longer split" in text  # the gather's reason (Case 2 by hand)
    assert "J is split along X, so each result is a partial sum, to be added up over X" in text
    assert "the other shard" in text  # one other device: singular
    e = ss.parse("AllToAll_{X,J}(A[I_X, J])")
    assert step_sentence(e) == (
        "AllToAll A over X: each device keeps 1/|X| of its block and sends the rest to the other |X| - 1 "
        "devices, so X shards J instead of I: A[I, J_X]."
    )
    assert step_sentence(e, "zh") == (
        "沿 X 对 A 做 AllToAll：每个设备留下自己块的 1/|X|，其余发给另外 |X| - 1 个设备，于是 X 改为切分 J，"
        "不再切分 I：A[I, J_X]。"
    )
    assert "DynamicSlice" not in step_sentence(ss.parse("DynamicSlice_{Y,I}(A[I_X, J])"))
    assert "无需" not in step_sentence(ss.parse("CollectivePermute_X(A[I_X, J])"), "zh")


@pytest.mark.parametrize(
    "text",
    [
        "A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]",
        "X[B, D] · Y[D_X, F] -> Z[B, F]",
        "A[I_X, J] · B[J, K_X]",
        "A[I, J_X] · B[J_Y, K] -> C[I_X, K_Y]",
        "A[I_XY, J] · B[J, K] -> C[I_YX, K]",
        "x[B_X, S, D_Y] · W[D_Y, F] -> y[B_X, S, F_Y]",
        "A[I, J_X]{U_Y} · B[J_X, K] -> C[I, K]",
    ],
)
def test_every_strategy_is_explained_in_both_languages(text):
    for mesh in (None, "X=4,Y=2"):
        p = ss.plan(text, mesh)
        for s in p.strategies:
            en = strategy_sentences(s, mesh=p.mesh)
            zh = strategy_sentences(s, "zh", mesh=p.mesh)
            assert len(en) == len(zh) == len(s.steps)
            for step, e, z in zip(s.steps, en, zh, strict=True):
                assert str(step.output) in e and str(step.output) in z  # what each device ends with
                assert e.endswith(".") and z.endswith("。")
                assert CJK.search(z) and english_in(z) is None, (s.name, z)


def test_plan_explained():
    p = ss.plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4", {"I": 4096, "J": 4096, "K": 4096}, hardware="tpu-v5e")
    en, zh = explain(p), explain(p, "zh")
    assert en.splitlines()[0] == str(p.classification)
    assert en.splitlines()[1].startswith("Fastest: 1. ")
    assert zh.splitlines()[1].startswith("最快的策略：1. ")
    assert len(zh.splitlines()) == 2 + len(p.best.steps)
    symbolic = explain(ss.plan("A[I, J_X] · B[J_X, K] -> C[I, K]"), "zh")
    assert symbolic.splitlines()[1] == "本章的做法：matmul → AllReduce_X(C)"


def test_explain_api():
    assert "explain" in ss.__all__
    assert ss.explain(keyed(MATMUL, "word.nothing"), lang="zh") == "未分片"
    with pytest.raises(SymshardError) as dtype:
        dtype_bytes("bf61")
    assert ss.explain(dtype.value, lang="zh").startswith("未知的数据类型 'bf61'")
    # text that is not a message is quoted as it is: no English sentence is read back
    assert ss.explain("unknown dtype 'bf61'", lang="zh") == "unknown dtype 'bf61'"
    with pytest.raises(SymshardError) as info:
        ss.parse("A[I_X, J_X]")
    assert ss.explain(info.value) == info.value.one_line()
    assert ss.explain(info.value, lang="zh").startswith(
        "在 'A[I_X, J_X]' 中，网格轴 X 同时切分了 I 和 J（第 10 列）；提示："
    )
    with pytest.raises(UsageError, match="unknown language 'fr'"):
        ss.explain(info.value, lang="fr")
    with pytest.raises(UsageError, match="symshard cannot explain int"):
        ss.explain(3)


def test_language_from_the_environment():
    assert language_from(None, {}) == "en"
    assert language_from(None, {"SYMSHARD_LANG": "zh"}) == "zh"
    assert language_from("en", {"SYMSHARD_LANG": "zh"}) == "en"
    with pytest.raises(UsageError, match=r"unknown language 'fr' in \$SYMSHARD_LANG"):
        language_from(None, {"SYMSHARD_LANG": "fr"})


def test_conditions_keep_their_relations():
    import sympy

    from symshard.algebra.conditions import Case, Condition
    from symshard.algebra.symbols import C, W_ici

    B, D = sympy.symbols("B D", positive=True)
    both = Condition((Case("", (sympy.Lt(B, C / W_ici), sympy.Gt(D, 2 * B))),))
    assert condition(both.text(), "zh") == "B < C/W_ici 且 D > 2·B"
    assert condition(both.text(), "en") == both.text() == "B < C/W_ici and D > 2·B"
    either = Condition((Case("", (sympy.Lt(B, 1),)), Case("", (sympy.Gt(B, 2),))))
    assert condition(either.text(), "zh") == "(B < 1) 或 (B > 2)"
    assert condition(Condition(()).text(), "zh") == "永不"


# -- the catalogue as data -------------------------------------------------------------------------------


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _english_texts() -> dict[str, str]:
    from symshard.i18n.extract import said_in_code

    out: dict[str, str] = {}
    for context, english in said_in_code():
        if context and not context.startswith("join."):
            assert context not in out, f"the key {context!r} has two English texts"
            out[context] = english
    return out


def test_every_english_text_has_a_chinese_template_with_the_same_fields():
    english = _english_texts()
    chinese = catalogue("zh").texts
    assert sorted(set(english) - set(chinese)) == []
    assert sorted(k for k in set(chinese) - set(english) if k != "argparse" and not k.startswith("join.")) == []
    for key, template in english.items():
        assert _fields(template) == _fields(chinese[key]), key


def test_the_catalogue_speaks_with_the_glossary():
    body = "\n".join(catalogue("zh").entries.values())
    for key, entry in glossary().items():
        for word in entry.get("avoid", []):  # type: ignore[union-attr]
            assert word not in body, f"'{word}' (glossary {key}: use {term(key, 'zh')})"
    for key in ("shard", "contracting_dimension", "unreduced", "partial_sum", "mesh_axis", "communication_bound",
                "operand", "local_product", "local_shape", "scale_out", "reshard", "wraparound", "peak_memory",
                "switch", "forward_pass", "backward_pass"):  # fmt: skip
        assert term(key, "zh") in body, key  # the bounds in verdicts come from term() itself


# every message a raise site in the library writes, sampled from the source -------------------------------

# every message the library can raise has its translation: tests/presentation/test_catalogue.py


def test_error_lines_keep_the_input_and_the_column():
    for text in ["A[I_X, J_X]", "A[I_X", "AllGather_X(A[I_Y])", "A[I, J] B[J, K]", "A[I_{x y}]"]:
        with pytest.raises(SymshardError) as info:
            ss.parse(text)
        err = info.value
        line = error_line(err, "zh")
        assert f"'{text}'" in line and f"第 {err.span[0] + 1} 列" in line
        assert "；提示：" in line and english_in(line) is None, line
        assert error_line(err) == err.one_line()


def test_regime_labels_are_data_that_each_language_says():
    # the book's case analysis labels each case with both strategies' regimes: a message holding the
    # numbers and regimes, merged as data and said in Chinese from the catalogue, not a coded string
    from symshard.algebra.conditions import merge_labels, regime_label
    from symshard.i18n.catalog import render
    from symshard.messages import Message

    # (the chapter's case analysis, which leaves HBM out)
    c = ss.compare(ss.plan("X[B, D] · Y[D_X, F] -> Z[B, F]"), "B", strategies="1,2", hbm=False)
    labels = [case.label for pr in c.pairs for w in (pr.a_wins, pr.b_wins) for case in w.cases]
    merged = next(label for label in labels if label == "1 compute-bound, 2 either")
    assert isinstance(merged, Message) and merged.template == "{first}, {second}"
    assert render(merged, "zh") == "1 计算受限，2 两者皆可"
    assert {render(label, "zh") for label in labels} >= {"1 通信受限，2 通信受限", "1 通信受限，2 计算受限"}
    comm, math_ = "communication-bound", "compute-bound"
    assert (
        merge_labels(regime_label((1, comm), (2, math_)), regime_label((1, comm), (2, comm))) == f"1 {comm}, 2 either"
    )
    assert (
        merge_labels(regime_label((1, comm), (2, math_)), regime_label((1, math_), (2, comm))) == "1 either, 2 either"
    )
    assert merge_labels(regime_label((1, comm), (2, comm)), regime_label((2, comm), (1, comm))) == "combined"
    assert merge_labels("no overlap: T_math + T_comms", "other") == "combined"

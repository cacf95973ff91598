"""'symshard verify --lang zh': every reason and lowering note verify writes reads in Chinese.

The reasons are those of the sweep (``site/data/jax-agreement.json``) and, for the clauses the
sweep happens not to produce, reasons built by verify's own functions from hand-made XLA plans;
the lowering notes are built as :func:`symshard.jax.verification.verify` builds them. No JAX: the
functions used here read a plan and a description of XLA's collectives, nothing compiled.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import english_left

from symshard.algebra.dtypes import dtype_bytes
from symshard.i18n.catalog import translate
from symshard.jax.matching import _sub_axis_reason, compare
from symshard.jax.results import Refinement
from symshard.jax.verification import _refined_reason
from symshard.jax.xla_plans import XlaCollective, XlaPlan, signature
from symshard.messages import say
from symshard.planning.planner import plan

ROOT = Path(__file__).parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")
# notation the Chinese must quote unchanged: arrays and collectives with their brackets
# (A[I_PQ, J], AllGather_X:(1)2[1024]), and every number
ARRAY = re.compile(r"[A-Za-z][\w:(),{}]*\[[^\[\]]*\]")
NUMBER = re.compile(r"\d[\d,]*\d|\d")
# collective names and commands stay in English; these are three words to english_left
KEEP = ("all-to-all", "symshard matmul --split")


def _check(english: str) -> None:
    chinese = translate(english, "zh")
    assert chinese != english, english
    assert CJK.search(chinese), chinese
    left = english_left(chinese, keep=KEEP)
    assert left is None, f"English left: {left!r} in {chinese!r}"
    for array in ARRAY.findall(english):
        assert array in chinese, (array, chinese)
    missing = Counter(NUMBER.findall(english)) - Counter(NUMBER.findall(chinese))
    assert not missing, (sorted(missing), chinese)


# -- the clauses the sweep does not produce, written by verify's own functions ----------------------


def _c(kind: str, axes: tuple[str, ...] | None, elements: int, lowered: str = "") -> XlaCollective:
    return XlaCollective(kind, axes, elements, "f32", 4 * elements, None, lowered)


def _x(collectives: list[XlaCollective], dot_flops: int, sliced: tuple[str, ...] = ()) -> XlaPlan:
    return XlaPlan(tuple(collectives), dot_flops + 4096, dot_flops, 0.0, "", sliced)


@pytest.fixture(scope="module")
def p():
    return plan.__wrapped__(
        "A[I_Y, J] · B[J, K_Y] -> C[I_Y, K]", "X=4,Y=2", "I=64,J=64,K=64", dtype="fp32", routes="xla"
    )


def _as_xla(sig) -> list[XlaCollective]:
    return [_c(kind, axes, n) for kind, axes, n in sig]


def _built_reasons(p) -> list[str]:
    reasons = []
    s = p.strategies[0]
    sig = signature(s, p)
    flops = int(s.raw_flops)
    for dots in (2 * flops, flops // 2):  # the collectives of a strategy, with bigger or smaller dots
        reasons.append(compare(p, _x(_as_xla(sig), dots))[2])
    # a permute over other axes than the strategy's (the near miss)
    permuting = next(t for t in p.strategies if any(k == "CollectivePermute" for k, _, _ in signature(t, p)))
    other = [_c(k, ("X",) if k == "CollectivePermute" else a, n) for k, a, n in signature(permuting, p)]
    reasons.append(compare(p, _x(other, int(permuting.raw_flops)))[2])
    # a gather over more axes than any strategy moves; device groups of no axes
    reasons.append(compare(p, _x([_c("AllGather", ("X", "Y"), 77)], flops))[2])
    reasons.append(compare(p, _x([_c("AllReduce", None, 77)], flops))[2])
    # a permute no strategy runs, and one that strategies run with other collectives
    reasons.append(compare(p, _x([_c("CollectivePermute", ("Y",), 77)], flops))[2])
    step = next(t for t in signature(permuting, p) if t[0] == "CollectivePermute")
    reasons.append(compare(p, _x([*_as_xla([step]), _c("AllReduce", ("X",), 77)], flops))[2])
    # XLA runs nothing; a permute then a gather over one of its axes (on the mesh, with axes in parts)
    reasons.append(compare(p, _x([], 3 * flops))[2])
    for permute_axes in (("X", "Y"), ("Y",)):
        roundabout = _x([_c("CollectivePermute", permute_axes, 64), _c("AllGather", ("Y",), 64)], flops)
        reasons.append(compare(p, roundabout)[2])
        reasons.append(compare(p, roundabout, refined=True)[2])
    # sub-axes: one axis split in two, with slices; two axes split (on a mesh X=4,Y=4)
    sub = _x([_c("AllGather", ("X:(1)2", "X:(2)2"), 64), _c("AllToAll", ("X:(2)2",), 64)], flops, ("X:(2)2",))
    reasons.append(compare(p, sub)[2])
    reasons.append(_sub_axis_reason(p, _x([], flops, ("X:(1)2",)), ("X:(1)2",)))
    wide = plan.__wrapped__("A[I_Y, J] · B[J, K_X] -> C[I_Y, K]", "X=4,Y=4", "I=64,J=64,K=64", routes="xla")
    subs = ("X:(1)2", "X:(2)2", "Y:(2)2")
    reasons.append(_sub_axis_reason(wide, _x([_c("AllGather", subs, 64)], flops), subs))
    # what the axes in parts showed: a match, a strategy that did not run correctly, none; one or two axes split
    for label, mesh, split in (("X=X1·X2", "X1=2,X2=2,Y=2", "X=2x2"),
                               ("X=X1·X2; Y=Y1·Y2", "X1=2,X2=2,Y1=2,Y2=2", "X=2x2,Y=2x2")):  # fmt: skip
        for matched, rank, reason in (("AllGather_{X1}(B) → matmul", 46, ""), ("AllGather_{X1}(B) → matmul", 3, ""),
                                      (None, None, reasons[0])):  # fmt: skip
            r = Refinement(label, mesh, "A[I_{X1,X2}, J] · B[J, K_Y] -> C[I_{X1,X2}, K]", 715, (), matched, rank,
                           reason, (), split=split)  # fmt: skip
            if rank == 46:
                object.__setattr__(r, "executions", (type("Ran", (), {"correct": True, "shapes_ok": True})(),))
            reasons.append(_refined_reason(reasons[1], r))
    return reasons


def test_every_clause_verify_writes_reads_in_chinese(p):
    reasons = _built_reasons(p)
    starts = {
        "but each device's dots do",
        "XLA multiplies bigger blocks",
        "XLA multiplies smaller blocks",
        "but for the collective-permute's axes",
        "which no symshard strategy does: it first slices",
        "XLA's device groups are neither",
        "which no symshard strategy runs",
        "the symshard strategies with that permute",
        "XLA runs nothing",
        "XLA first moves shards from X onto Y",
        "XLA first moves shards from one axis",
        "XLA first moves blocks with a collective-permute",
        "and slices blocks by",
        "(the minor factor); Y (4 devices)",
        "a match by parts of axes",
        "which did NOT run correctly",
        "still no strategy",
        "with axes in parts X=X1·X2; Y=Y1·Y2 (",
        "the closest symshard strategy",
    }
    text = "\n".join(reasons)
    assert [s for s in sorted(starts) if s not in text] == []  # each clause is written at least once
    for english in reasons:
        _check(english)


# -- the notes on lowering, as verify() writes them ----------------------------------------------


def _lowering_notes() -> list[str]:
    """The notes of verify(), read from the ``lowering.append(...)`` calls of its ``_lowering_notes``
    and built the same way."""
    tree = ast.parse((ROOT / "symshard/jax/verification.py").read_text(encoding="utf-8"))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_lowering_notes")
    # sample figures for the notes that quote XLA's module (a product written as a multiply, local sums)
    values = {"dtype_bytes": dtype_bytes, "say": say, "x": SimpleNamespace(multiply_flops=8192, sum_flops=15360)}
    notes = []
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "lowering.append":
            code = compile(ast.Expression(node.args[0]), "verify.py", "eval")
            notes.append(eval(code, {}, values))  # verify's own f-string, with sample values
    return notes


def test_verify_writes_six_lowering_notes():
    notes = _lowering_notes()
    assert len(notes) == 6
    assert f"moves {dtype_bytes('bf16')};" in notes[2] and "constant({...})" in notes[5]
    assert "(8,192 FLOPs per device" in notes[3] and "15,360 adds per device" in notes[4]


@pytest.mark.parametrize(
    "note", _lowering_notes(), ids=["reduce-scatter", "further", "bf16", "multiply", "local sums", "elided"]
)
def test_every_lowering_note_reads_in_chinese(note):
    _check(note)


# -- reasons and the report are messages: Chinese from the catalogue, kinds from the messages themselves -----


def _assert_said_in_chinese(message) -> None:
    """Every message inside ``message`` has a catalogue entry (no pattern reads English back), and the
    Chinese keeps the notation and numbers."""
    from symshard.i18n.catalog import catalogue
    from symshard.messages import Message

    entries = catalogue("zh").entries

    def walk(value) -> None:
        if isinstance(value, Message):
            assert (value.context, value.template) in entries, value.template
            for _, v in value.values:
                walk(v)
        elif isinstance(value, tuple):
            for v in value:
                walk(v)

    assert isinstance(message, Message), message
    walk(message)
    _check(message)


def test_every_built_reason_is_a_message_with_catalogue_entries(p):
    for reason in _built_reasons(p):
        _assert_said_in_chinese(reason)


@pytest.mark.parametrize(
    ("collectives", "dots", "kind"),
    [
        ("strategy", 2, "the collectives of a symshard strategy, but other FLOPs per device"),
        ("permute", 1, "a collective-permute that no symshard strategy runs with XLA's other collectives"),
        ("roundabout", 1, "a collective-permute, then an all-gather over one of its axes: a sequence no symshard"),
        ("wider", 1, "XLA runs AllGather over X,Y on 77 elements per device, which no symshard strategy does"),
    ],
)
def test_the_kind_of_a_disagreement_is_the_message_of_the_clause_that_knows_it(p, collectives, dots, kind):
    from symshard.jax.matching import compare_with_kind

    s = p.strategies[0]
    flops = int(s.raw_flops)
    made = {
        "strategy": _as_xla(signature(s, p)),
        "permute": [_c("CollectivePermute", ("Y",), 77)],
        "roundabout": [_c("CollectivePermute", ("Y",), 64), _c("AllGather", ("Y",), 64)],
        "wider": [_c("AllGather", ("X", "Y"), 77)],
    }[collectives]
    compared = compare_with_kind(p, _x(made, dots * flops), refined=True)
    strategy, rank, reason, found = compared.strategy, compared.rank, compared.reason, compared.kind
    assert strategy is None and rank is None and compared.equivalent is None
    assert str(found).startswith(kind)
    _assert_said_in_chinese(found)
    # the kind is the first clause's own message, or a message of its own: never read back from the English
    assert str(reason).startswith(str(found)) or found.template != reason.template


def test_the_report_rows_say_the_same_messages_in_both_languages(p):
    """Verification.text() and the report's Chinese (what the command line prints) come from the same rows of messages."""
    from symshard.jax.results import Verification
    from symshard.report import verification_text

    reason = _built_reasons(p)[1]
    r = Refinement("X=X1·X2", "X1=2,X2=2,Y=2", "A[I_{X1,X2}, J] · B[J, K_Y] -> C[I_{X1,X2}, K]", 715, (), None, None,
                   reason, (), split="X=2x2")  # fmt: skip
    v = Verification(
        matmul="A[I_Y, J] · B[J, K_Y] -> C[I_Y, K]", mesh="X=4,Y=2", shape="I=64,J=64,K=64", dtype="bf16",
        hardware="tpu-v5e", strategies=282, best="matmul", xla=(_c("AllGather", ("X:(1)2",), 64, "").describe(),),
        xla_flops=9000, xla_dot_flops=8192, xla_repeats_work=True, match=False, matched=None, rank=None,
        flops_agree=False, reason=reason, lowering=(), executions=(), symshard_seconds=0.01,
        xla_compile_seconds=0.2, refined=r, xla_reduction_flops=64, total_flops_agree=False, xla_bytes=512,
        best_bytes=1024, best_flops=8192, chosen=3, sample=None, unrunnable=(("matmul", "A[I, J_X] splits"),),
        not_run=2, time_limit=1.0,
    )  # fmt: skip
    rows = v.rows()
    english, chinese = v.text().splitlines(), verification_text(v, "zh").splitlines()
    assert len(english) == len(chinese) == len(rows) + 1
    for (_, value), line in zip(rows, english[1:], strict=True):
        assert line.endswith("  " + "".join(value)), (line, value)
    assert "per device, XLA's plan receives 512 B in its collectives and its dots do 8,192 FLOPs" in v.text()
    for line in chinese[1:]:
        assert CJK.search(line), line


def test_a_miss_equal_in_cost_reads_in_chinese(p):
    """The agreement row of a miss equal in cost to a strategy that pairs other devices (issue 36, point 7)."""
    from dataclasses import replace

    from symshard.jax.results import Verification
    from symshard.report import verification_text

    name = "DynamicSlice_{Y,I}(A) → matmul → CollectivePermute_{XY,I_Y}(C)"
    v = Verification(
        matmul="A[I_Y, J] · B[J, K_Y] -> C[I_Y, K]", mesh="X=4,Y=2", shape="I=64,J=64,K=64", dtype="fp32",
        hardware="tpu-v5e", strategies=282, best="matmul", xla=(), xla_flops=8192, xla_dot_flops=8192,
        xla_repeats_work=False, match=False, matched=None, rank=None, flops_agree=None, reason=_built_reasons(p)[2],
        lowering=(), executions=(), symshard_seconds=0.01, xla_compile_seconds=0.2, equivalent=(7, name), ranked=73,
    )  # fmt: skip
    english = v.text()
    assert v.equal_in_cost and not v.planner_work
    assert (
        f"no, but equal in cost: XLA's plan has the collectives, the bytes and the FLOPs of symshard's strategy 7, {name}"
        in english
    )
    chinese = verification_text(v, "zh")
    row = next(line for line in chinese.splitlines() if name in line)
    assert "开销相同" in row and "第 7 种策略" in row
    assert not replace(v, equivalent=None).equal_in_cost

"""A newcomer's second hour (issue 34): what a fresh user still tripped over, each pinned.

An outer product typed by mistake, placeholders in a training report, a scheme called compute-bound on
chips it does not fit, reprs that fill a screen, bad options that exit 0, a misspelt table reported at
line 1, a completion line that fails on a fresh machine, and plurals and colons said wrong.
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshard as ss
from symshard.cli import main
from symshard.errors import PlanError
from symshard.notation.einsums import intended, matmul

ROOT = Path(__file__).parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- 2. operands that share no dim: a typo, unless the outer product is meant --------------------------------

OUTER_PRODUCTS = [
    # (the product typed, the operand the hint guesses; None: no guess, only how to say it is meant)
    ("A[I, J] · B[K, L] -> C[I, L]", "B[J, L]"),  # the typo for B[J, L]
    ("A[I, J] · B[K, L]", "B[J, L]"),  # no output: the right operand's first dim is the left one's last
    ("A[I, J_X] · B[K, L] -> C[I, L]", "B[J, L]"),  # the guess keeps each dim's sharding
    ("A[I, J] · B[K_X, L] -> C[I, L]", "B[J_X, L]"),
    ("A[G, I, J] · B[H, K, L] -> C[G, I, L]", None),  # one dim dropped on the left, two on the right: no guess
    ("A[I] · B[K] -> C[I, K]", None),  # vectors: nothing to guess
]


@pytest.mark.parametrize(("text", "guess"), OUTER_PRODUCTS)
def test_an_outer_product_is_refused_with_a_guess(text, guess):
    with pytest.raises(PlanError, match=r"share no dim") as err:
        matmul(text)
    hint = str(err.value.hint)
    if guess is None:
        assert "did you mean" not in hint
    else:
        assert f"did you mean {guess}?" in hint
    assert "outer=True" in hint and "--outer" in hint
    meant = matmul(text, outer=True)  # said to be meant: accepted, and it says so
    assert meant.outer and meant.shares_no_dim and repr(meant).endswith("outer=True)")
    with pytest.raises(PlanError):
        ss.plan(text)  # the planner reads its text through the same check
    assert ss.plan(meant).strategies


@pytest.mark.parametrize(
    "text",
    [
        "A[I, J] · B[J, L] -> C[I, L]",  # the near-miss that is right
        "A[G, I] · B[G, J] -> C[G, I, J]",  # a batched outer product shares G: meant, never refused
        "A[I, J] · B[J, L] -> C[I, J, L]",  # nothing contracted, but the operands share J
    ],
)
def test_operands_that_share_a_dim_are_never_refused(text):
    assert not matmul(text).shares_no_dim


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from("ABCDEFGHI"), min_size=1, max_size=3, unique=True),
    st.lists(st.sampled_from("JKLMNOPQR"), min_size=1, max_size=3, unique=True),
    st.data(),
)
def test_a_guess_contracts_a_dim_and_keeps_the_output(left, right, data):
    kept = [d for d in left if data.draw(st.booleans())] + [d for d in right if data.draw(st.booleans())]
    out = f" -> C[{', '.join(kept)}]" if kept else ""
    mm = matmul(f"X[{', '.join(left)}] · Y[{', '.join(right)}]{out}", outer=True)
    guess = intended(mm)
    if guess is not None:
        assert guess.contracting and not guess.shares_no_dim
        if mm.out is not None:  # the output asked for stays as it was
            assert guess.out == mm.out


def test_the_command_line_refuses_an_outer_product_unless_told(capsys):
    typo = "A[I, J] · B[K, L] -> C[I, L]"
    code, out, err = run(capsys, "matmul", typo, "--mesh", "X=4")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "share no dim" in err and "did you mean B[J, L]?" in err
    code, out, _ = run(capsys, "matmul", typo, "--mesh", "X=4", "--outer")
    assert code == 0 and "the product has no contracting dim" in out and "(dim)" not in out
    code, _, err = run(capsys, "--lang", "zh", "matmul", typo)
    assert code == 2 and "是不是想写 B[J, L]" in err
    for command in (["compare", typo, "--solve-for", "I"], ["best-sharding", typo, "--hw", "v5e"]):
        code, _, err = run(capsys, *command)
        assert code == 2 and "share no dim" in err


# -- 3 and 4. model --train: no placeholders; a scheme that does not fit says so first -----------------------

_GIVEN = {"tokens": ("--tokens", "15e12"), "mfu": ("--mfu", "0.4"), "chips": ("--chips", "8960")}


@pytest.mark.parametrize("given", [(), ("tokens",), ("mfu",), ("chips",), ("tokens", "mfu"), ("mfu", "chips")])
def test_training_prints_no_placeholder(capsys, given):
    argv = ["model", "llama3-70b", "--train", "--hw", "v5p", "--batch", "4e6"]
    for name in given:
        argv += _GIVEN[name]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("training"))
    assert "tokens tokens" not in head and "MFU MFU" not in head and " N " not in head
    rows = {line.split("  ")[0]: line for line in lines if line.startswith(("whole run", "time ", "step "))}
    for name, line in rows.items():
        value = line[len(name) :].strip()
        numeric = re.search(r"\d[\d.,e]* (days|FLOP|s per step)", value)
        assert numeric or value.startswith("needs --"), line  # a number, or which options give it
        assert not re.search(r"\d·tokens|/\(.*MFU.*\) days", value), line  # never a formula in the placeholders
    missing = [option for name, (option, _) in _GIVEN.items() if name not in given]
    for option in missing:
        assert option in out  # each missing option is named where its figure would be


def test_a_scheme_that_does_not_fit_says_so_before_its_bound(capsys):
    from symshard.algebra.units import json_value
    from symshard.models.training import training_memory

    code, out, _ = run(capsys, "model", "llama3-70b", "--train", "--hw", "v5p")
    assert code == 0
    lines = out.splitlines()
    dp = next(i for i, line in enumerate(lines) if line.strip().startswith("dp "))
    assert "does not fit" in lines[dp] and "B_chip ≥" in lines[dp + 1]  # first that, then the bound
    fsdp = next(line for line in lines if line.strip().startswith("fsdp "))
    assert "does not fit" not in fsdp  # FSDP shards the state over the chips
    code, out, _ = run(capsys, "model", "llama3-70b", "--train", "--hw", "v5p", "--chips", "8960", "--batch", "4e6")
    verdict = next(line for line in out.splitlines() if line.strip().startswith("dp ") and "T_math" in line)
    assert verdict.index("does not fit") < verdict.index("T_math")
    data = __import__("json").loads(_json(capsys, "model", "llama3-70b", "--train", "--hw", "v5p"))
    assert data["does_not_fit"] == {"dp": json_value(training_memory("llama3-70b").parameter_state)}


def _json(capsys, *argv):
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    return out


def test_both_counts_of_bytes_per_parameter_stand_side_by_side(capsys):
    from symshard.models.schemes import bytes_per_param
    from symshard.models.training import training_memory

    layer_count, model_count = bytes_per_param(), training_memory("llama3-70b").bytes_per_param
    assert layer_count != model_count  # two counts, each with where it comes from
    _, out, _ = run(capsys, "layer", "--scheme", "fsdp")
    head = next(line for line in out.splitlines() if line.startswith("memory per device"))
    assert f"{layer_count} B per parameter" in head and f"symshard model counts {model_count} B" in head
    _, out, _ = run(capsys, "model", "llama3-70b", "--train")
    row = next(line for line in out.splitlines() if line.startswith("per parameter"))
    assert f"{model_count} B" in row and f"symshard layer counts {layer_count} B" in row
    for page in ("site/docs/tutorial/training.md", "site/docs/explanation/mlp-parallelism.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert "bytes_per_param" in text and "bytes_per_param()" in text, page  # both counts, from the code


# -- 5. a repr a person can read; print() the full report -----------------------------------------------------


@functools.cache
def _results() -> dict[str, object]:
    """One of every public result, by its type's name."""
    from symshard.costs.calibrate import calibrate, read_nccl_tests
    from symshard.costs.chipfit import fit_chip, read_chip_measurements
    from symshard.models import inference, schemes, transfers, verdicts
    from symshard.problems import family, variant

    p = ss.plan("X[B, D] · Y[D_X, F] -> Z[B, F]", "X=4", "B=1024,D=8192,F=32768", hardware="tpu-v5p")
    c = ss.compare(ss.plan("X[B, D] · Y[D_X, F] -> Z[B, F]"), "B", hardware="tpu-v5p")
    m = ss.model("llama3-70b")
    run_ = ss.train(m, tokens="15e12", chips=8960, hardware="v5p", mfu=0.4, batch=4000000)
    problem = variant(family("allgather-time"), 7)
    nccl = (ROOT / "site/data/nccl-tests-allreduce-a100-2nodes-16gpus.txt").read_text(encoding="utf-8")
    chip = read_chip_measurements(ROOT / "site/data/chip-h100-torch-2026-11.csv")
    found = {
        "Plan": p,
        "Strategy": p.strategies[0],
        "Comparison": c,
        "Regime": c.regimes[0],
        "PairComparison": c.pairs[0],
        "Region": c.best[0],
        "Placement": ss.place(ss.parse("A[I_XY, J]"), "X=8,Y=2", "I=1024,J=4096"),
        "CollectiveCost": ss.parse("AllGather_Y([E_Y, F])").cost("X=8,Y=4", "E=2048,F=8192", hardware="tpu-v5e"),
        "Layer": ss.layer("fsdp"),
        "Program": ss.layer("fsdp").program,
        "Pods": schemes.pods(),
        "Roofline": ss.roofline("fsdp+tp", hardware="v5p", model=m),
        "SplitChoice": verdicts.best_split(4000000, 8960, model=m, hardware="v5p"),
        "Verdict": verdicts.verdict("dp", batch=4000000, chips=8960, model=m, hardware="v5p"),
        "Model": m,
        "Training": run_,
        "TrainingMemory": run_.memory,
        "Serving": ss.serve(m, batch=32, context=8192, mesh="X=4,Y=2", hardware="v5e", dtype="int8"),
        "WeightStationary": inference.weight_stationary(),
        "SearchResult": ss.best_sharding(
            ["x[B, D] · W_in[D, F] -> Tmp[B, F]"],
            "X=2,Y=2",
            "B=128,D=8192,F=32768",
            hardware="v5e",
            memory_limit="300MB",
        ),
        "Route": transfers.point_to_point("0,0", "3,3", (4, 4), hardware="v5e", nbytes=10**9),
        "Gather": transfers.gather_to_one("0,0,0", (4, 4, 4), hardware="v5p", nbytes=2**26),
        "HostTransfer": transfers.host_to_chip(16 * 2**30, hardware="v5e", chips=8),
        "SliceTotals": transfers.slice_totals("v5p", 8960),
        "Problem": problem,
        "Answer": problem.answer("time"),
        "Family": family("allgather-time"),
        "Calibration": calibrate(read_nccl_tests(nccl), "allreduce", ranks=16, per_node=8),
        "ChipFit": fit_chip(chip, ss.hardware("h100")),
        "Hardware": ss.hardware("v5p"),
    }
    return found


RESULT_TYPES = ("Answer", "Calibration", "ChipFit", "CollectiveCost", "Comparison", "Family", "Gather", "Hardware",
                "HostTransfer", "Layer", "Model", "PairComparison", "Placement", "Plan", "Pods", "Problem", "Program",
                "Region", "Regime", "Roofline", "Route", "SearchResult", "Serving", "SliceTotals", "SplitChoice",
                "Strategy", "Training", "TrainingMemory", "Verdict", "WeightStationary")  # fmt: skip


def test_every_result_type_is_shown():
    assert sorted(_results()) == sorted(RESULT_TYPES)


@pytest.mark.parametrize("name", RESULT_TYPES)
def test_every_result_has_a_short_repr_that_names_it(name):
    from symshard.shown import LIMIT

    obj = _results()[name]
    shown = repr(obj)
    assert type(obj).__name__ == name and shown.startswith(f"{name}(")
    assert len(shown) <= LIMIT and shown.count("\n") <= 3, shown
    assert not re.search(r"\b(?:strategies that|does not|is the)\b", shown)  # no sentences: repr has no language


def test_print_gives_the_full_report():
    from symshard.report import compare_text, plan_text, training_text

    results = _results()
    plan, comparison, run_ = results["Plan"], results["Comparison"], results["Training"]
    assert str(plan) == plan_text(plan) and len(str(plan)) > len(repr(plan))
    assert str(comparison) == compare_text(comparison)
    assert str(run_) == training_text(run_)
    assert str(results["Strategy"]).startswith("Strategy(steps=")  # no report of its own: every field
    from symshard.problems.texts import problem_text

    assert str(results["Problem"]) == problem_text(results["Problem"])


@pytest.mark.jax
def test_the_jax_results_have_short_reprs_too():
    from symshard.jax.verification import verify
    from symshard.shown import LIMIT

    v = verify("A[I_X, J] · B[J, K] -> C[I_X, K]", "X=2", "I=8,J=8,K=8", run="none")
    assert repr(v).startswith("Verification(") and len(repr(v)) <= LIMIT


# -- 7. bad options exit 2 with one line ------------------------------------------------------------------------

_NCCL = str(ROOT / "site/data/nccl-tests-allreduce-a100-2nodes-16gpus.txt")
_MM = "X[B, D] · Y[D_X, F] -> Z[B, F]"

BAD_OPTIONS = [
    (["matmul", _MM, "--top", "-1"], "--top -1 prints no strategy"),
    (["matmul", _MM, "--top", "0"], "--top 0 prints no strategy"),
    (["matmul", _MM, "--shape", "I1024"], "did you mean I=1024?"),
    (["shard", "A[I_X]", "--mesh", "X8"], "did you mean X=8?"),
    (["layer", "--scheme", "dp", "--spread", "X2"], "did you mean X=2?"),
    (["model", "llama3-70b", "--sizes", "L48"], "did you mean L=48?"),
    (["collective", "AllGather_X(A[I_X])", "--topology", "X"], "write X=VALUE"),
    (["problems", "show", "allgather-time", "--seed", "-1"], "--seed -1 is negative"),
    (["problems", "check", "allgather-time", "--seed", "-1", "time=1ms"], "--seed -1 is negative"),
    (["problems", "generate", "--seed", "-1", "--count", "1", "--out", "never-written"], "--seed -1 is negative"),
    (["verify", _MM, "--mesh", "X=4", "--shape", "B=8,D=8,F=8", "--seed", "-3"], "--seed -3 is negative"),
    (["verify", _MM, "--mesh", "X=4", "--shape", "B=8,D=8,F=8", "--time-limit", "nan"], "leaves no time"),
    (["calibrate", _NCCL, "--collective", "allreduce", "--ranks", "1"], "--ranks must be at least 2"),
    (["calibrate", _NCCL, "--collective", "allreduce", "--ranks", "16", "--per-node", "0"], "--per-node must be"),
    (["calibrate", _NCCL, "--collective", "allreduce", "--ranks", "16", "--min-bytes", "-5"], "--min-bytes must be"),
    (["calibrate", _NCCL, "--ranks", "16", "--min-bytes", "100", "--max-bytes", "10"], "is above --max-bytes 10"),
    (["site", "serve", "--no-build", "--port", "70000"], "is not a port"),
    (["site", "serve", "--no-build", "--port", "-1"], "--port must be at least 1"),
    (["problems", "generate", "--seed", "1", "--per-family", "0", "--out", "never-written"], "--per-family must be"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_OPTIONS)
def test_bad_options_are_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)  # nothing may be written, and --out names a folder here
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("symshard: error: ")
    assert message in err
    assert not (tmp_path / "never-written").exists()
    code, _, err = run(capsys, "--lang", "zh", *argv)
    assert code == 2 and err.startswith("symshard: 错误：")


@pytest.mark.parametrize(
    "argv",
    [
        ["matmul", _MM, "--top", "1"],  # the near-misses that are right
        ["matmul", _MM, "--shape", "B"],  # a dim named alone stays a symbol
        ["shard", "A[I_X]", "--mesh", "X"],
        ["problems", "show", "allgather-time", "--seed", "0"],
    ],
)
def test_their_near_misses_run(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 0, err


# -- 8. a misspelt table is reported at its own line --------------------------------------------------------------


def test_a_misspelt_table_is_reported_at_its_line(capsys, tmp_path):
    source = ROOT / "problems" / "allgather-time"
    folder = tmp_path / "families" / "typo-family"
    shutil.copytree(source, folder)
    spec = folder / "family.toml"
    text = spec.read_text(encoding="utf-8").replace("[params.", "[param.", 1)
    spec.write_text(text, encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith("[param."))
    code, _, err = run(capsys, "problems", "show", "typo-family", "--families", str(tmp_path / "families"))
    assert code == 2 and f"family.toml line {line}, column 1: has an unknown table [param]" in err
    assert line > 1


# -- 9. the README's completion line works on a fresh machine ----------------------------------------------------


def _completion_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        row.removeprefix("$ ").split("   #")[0] for row in readme.splitlines() if "symshard completion bash" in row
    ]
    from symshard.cli.parser import argument_parser

    sub = next(a for a in argument_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helped = sub.choices["completion"].epilog
    lines += [row.split(":", 1)[1].split("   (")[0].strip() for row in helped.splitlines() if row.strip()[:5] in
              ("bash:", "zsh: ")]  # fmt: skip
    return lines


@pytest.mark.parametrize("line", _completion_lines())
def test_the_completion_lines_work_in_a_fresh_home(tmp_path, line):
    pytest.importorskip("shtab")
    bash = shutil.which("bash")
    symshard = Path(sys.executable).with_name("symshard")
    if bash is None or not symshard.exists():
        pytest.skip("needs bash and the symshard script beside this Python")
    env = {"HOME": str(tmp_path), "PATH": f"{symshard.parent}:/usr/bin:/bin"}
    done = subprocess.run([bash, "-c", line], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    target = Path(line.split(">")[-1].strip().replace("~", str(tmp_path)))
    assert target.is_file() and target.stat().st_size > 1000


# -- 10. plurals from one helper; Chinese punctuation --------------------------------------------------------------

_NOUNS = ("strategies", "chips", "families", "devices", "problems", "figures", "files", "rows", "tokens", "days",
          "hosts", "ranks", "steps", "kernels", "candidates", "draws", "entries", "columns", "digits", "characters",
          "items", "bytes", "elements", "choices", "coordinates", "GPUs", "nodes", "units", "sequences", "boundaries",
          "hops", "blocks", "partials", "times", "arguments", "questions", "pods", "stages", "seconds", "experts",
          "heads", "pages")  # fmt: skip
# fields that hold a name, not a count ({chip} chips is "TPU v5p chips")
_NAMES = set(
    "chip dtype axes axis op owner path result scatter spec text where xla xla_flops best_flops throughput sizes "
    "label kind name fabric model scheme".split()
)
_ADJECTIVE = r"(?:(?:more|slower|listed|chosen|measured|other|stale|scalable|result|pipeline|KV|PrairieLearn) )?"
_FIXED = re.compile(r"\{(\w+)(?::[^}|]*)?\} " + _ADJECTIVE + r"(?:\{\w+\} )?(" + "|".join(_NOUNS) + r")\b(?!/s)")


def _english_templates() -> dict[str, str]:
    from symshard.i18n import _UI
    from symshard.i18n.extract import said_in_code
    from symshard.problems import answering, pdf
    from symshard.site import problemsets

    found = {english: places[0] for (_, english), places in said_in_code().items()}
    for module, table in ((answering, "_WORDS"), (pdf, "_PAGE_WORDS"), (problemsets, "_WORDS")):
        found.update({v: f"{module.__name__}.{table}[{k}]" for k, v in getattr(module, table)["en"].items()})
    found.update({v["en"]: f"symshard.i18n._UI[{k}]" for k, v in _UI.items()})
    return found


def test_no_count_is_said_with_a_fixed_plural():
    fixed = []
    for english, where in sorted(_english_templates().items(), key=lambda kv: kv[1]):
        if "--sample {count} " in english:  # "runs" and "draws" are verbs there
            continue
        for m in _FIXED.finditer(english):
            if m.group(1) not in _NAMES:
                fixed.append(f"{where}: {m.group(0)!r} in {english!r}")
    assert fixed == [], "say the noun with {count:one|many} (symshard.messages.fill):\n" + "\n".join(fixed)


@pytest.mark.parametrize(
    ("template", "values", "said"),
    [
        ("{n} {n:chip|chips}", {"n": 1}, "1 chip"),
        ("{n} {n:chip|chips}", {"n": 2}, "2 chips"),
        ("{n} {n:chip|chips}", {"n": "8,960"}, "8,960 chips"),  # a count already shown as text
        ("{n} {n:chip|chips}", {"n": "N"}, "N chips"),  # a symbol: the plural
        ("{n:,} {n:family|families}", {"n": 1}, "1 family"),
        ("{ok} of {total} {total:strategy|strategies} ran", {"ok": 1, "total": 1}, "1 of 1 strategy ran"),
    ],
)
def test_the_plural_helper(template, values, said):
    from symshard.messages import fill, say

    assert fill(template, **values) == said == str(say(template, **values))


def test_reports_say_one_in_the_singular(capsys):
    code, out, _ = run(capsys, "model", "llama3-8b", "--train", "--hw", "v5p", "--chips", "1", "--tokens", "1e9",
                       "--mfu", "0.4")  # fmt: skip
    assert code == 0 and "at least 1 chip of" in out and "1 TPU v5p chip at" in out and "1 chips" not in out
    code, out, _ = run(capsys, "matmul", "A[I_X, J] · B[J, K] -> C[I_X, K]", "--mesh", "X=4", "--shape",
                       "I=64,J=64,K=64", "--hw", "v5e")  # fmt: skip
    counted = re.search(r"^(\d+) (strateg\w+)", out, flags=re.M)
    assert counted is not None and (counted.group(2) == "strategy") == (counted.group(1) == "1")


def test_chinese_takes_full_width_colons(tmp_path, capsys):
    code, _, err = run(capsys, "problems", "generate", "--seed", "3", "--count", "1", "--lang", "zh", "--format",
                       "md", "--out", str(tmp_path / "set"))  # fmt: skip
    assert code == 0, err
    key = (tmp_path / "set" / "answer-key.md").read_text(encoding="utf-8")
    assert "：答案" in key.splitlines()[0] and ": 答案" not in key
    import polib

    chinese = r"[\u3400-\u9fff]"
    for po in sorted((ROOT / "symshard/i18n/zh").glob("*.po")):
        for entry in polib.pofile(str(po)):
            assert not re.search(chinese + r" ?[:;?!]", entry.msgstr), (po.name, entry.msgstr)

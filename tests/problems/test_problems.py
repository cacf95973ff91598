"""The problem generator: families, variants, sets, the sandbox, the writers and the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from helpers import family_variants

from symshard.cli import main
from symshard.errors import AnswerError, SymshardError, TemplateError
from symshard.outputs.bookkeeping import STAMPS
from symshard.problems import families, family, generate, variant
from symshard.problems.family import load_family
from symshard.problems.writers import answer_key_markdown, schema, to_json, to_markdown, to_moodle, write_set

FAMILIES = sorted(families())
LEVELS = ("easy", "medium", "hard")
BY_DIFFICULTY = sorted(FAMILIES, key=lambda name: (LEVELS.index(family(name).difficulty), name))
ROOT = Path(__file__).parents[2]


# -- the built-in families -----------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_renders_200_distinct_seeds(name):
    problems = family_variants(name)  # shared with test_feasibility
    assert len(problems) == 200
    assert len({p.key() for p in problems}) == 200
    for p in problems:
        assert p.statement.strip() and p.solution.strip()
        assert all(a.show for a in p.answers)
        assert "{{" not in p.statement + p.solution and "{%" not in p.solution  # nothing left unrendered


@pytest.mark.parametrize("name", FAMILIES)
def test_family_metadata(name):
    f = family(name)
    assert f.title and f.objective.endswith(".")
    assert f.difficulty in ("easy", "medium", "hard")
    assert f.tags


_EXPRESSION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)


@pytest.mark.parametrize("name", FAMILIES)
def test_no_answer_values_typed_into_templates(name):
    # every number of two or more digits, and every decimal, must come from an expression
    for path in sorted(family(name).path.glob("*.j2")):
        text = _EXPRESSION.sub(" ", path.read_text(encoding="utf-8"))
        typed = re.findall(r"(?<![A-Za-z_\\])\d+\.\d+|(?<![A-Za-z_\\^{])\d{2,}", text)
        assert not typed, f"{path.name} types {typed}: compute them in family.toml instead"


def test_there_are_enough_families():
    assert len(FAMILIES) >= 16, FAMILIES


# -- variants and sets ---------------------------------------------------------------------------------


def test_a_variant_is_a_pure_function_of_family_and_seed():
    f = family("allgather-time")
    assert variant(f, 11) == variant(f, 11)
    assert variant(f, 11).to_dict() == variant(f, 11).to_dict()
    assert variant(f, 11).key() != variant(f, 12).key()


def test_one_stream_per_parameter(tmp_path):
    # changing the choices of one parameter leaves every other parameter's draws alone
    base = family("allgather-time").path
    spec = (base / "family.toml").read_text()
    other = tmp_path / "fam" / "allgather-time"
    other.mkdir(parents=True)
    (other / "problem.md.j2").write_text((base / "problem.md.j2").read_text())
    (other / "family.toml").write_text(spec.replace('choices = ["bf16", "fp32"]', 'choices = ["bf16", "fp32", "int8"]'))
    edited = load_family(other)
    original = family("allgather-time")
    for seed in range(20):
        a = dict(variant(original, seed).params)
        b = dict(variant(edited, seed).params)
        if variant(original, seed).attempt == variant(edited, seed).attempt == 0:
            assert {k: v for k, v in a.items() if k != "dtype"} == {k: v for k, v in b.items() if k != "dtype"}


def test_sets_are_reproducible_and_distinct():
    one = generate(2026, count=30)
    two = generate(2026, count=30)
    assert [p.to_dict() for p in one] == [p.to_dict() for p in two]
    assert len({p.key() for p in one}) == 30
    assert [p.to_dict() for p in generate(2027, count=30)] != [p.to_dict() for p in one]
    # one round covers every family, and the set reads from easy to hard
    assert {p.family.name for p in generate(2026, count=len(FAMILIES))} == set(FAMILIES)
    ranks = [LEVELS.index(p.family.difficulty) for p in one]
    assert ranks == sorted(ranks)


def test_short_sets_mix_levels_and_leave_out_different_families():
    # a set one family short of a round: which family is left out depends on the seed
    left_out = set()
    for seed in range(12):
        picked = {p.family.name for p in generate(seed, count=len(FAMILIES) - 1)}
        assert len(picked) == len(FAMILIES) - 1
        left_out |= set(FAMILIES) - picked
    assert len(left_out) > 3
    # a set of three takes one family of each level
    assert sorted(p.family.difficulty for p in generate(5, count=3)) == ["easy", "hard", "medium"]


def test_selection():
    easy = generate(1, count=6, difficulty=["easy"])
    assert {p.family.difficulty for p in easy} == {"easy"}
    picked = generate(1, per_family=3, names=["allgather-time"])
    assert [p.family.name for p in picked] == ["allgather-time"] * 3
    with pytest.raises(TemplateError, match="unknown problem family 'allgather-tim'") as info:
        generate(1, count=1, names=["allgather-tim"])
    assert "allgather-time" in info.value.hint


def test_byte_identical_across_processes_and_hash_seeds(tmp_path):
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"run{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run(
            [sys.executable, "-m", "symshard", "problems", "generate", "--seed", "99", "--count", "25", "--out", str(out)],
            check=True, env=env, capture_output=True,
        )  # fmt: skip
        # the stamps are this machine's proof of what symshard wrote (inodes, times): different on every run
        outputs.append({str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                        if p.is_file() and p.name != STAMPS})  # fmt: skip
        assert (out / STAMPS).is_file()
    assert outputs[0] == outputs[1]
    assert len([name for name in outputs[0] if "/" not in name]) == 10  # md, json, moodle, qti12, qti21, pdf, manifest
    assert ".symshard-manifest.json" in outputs[0]
    assert any(name.startswith("figures/") and name.endswith(".svg") for name in outputs[0])  # figures too


# -- the sandbox and errors that name the place -------------------------------------------------------------

GOOD_SPEC = """
[family]
title = "T"
difficulty = "easy"
tags = ["t"]
objective = "O."

[params.n]
range = [1, 100]

[let]
twice = "2 * n"

[[answers]]
name = "x"
label = "x"
value = "twice"
unit = "count"
rel_tol = 0
"""


def make_family(tmp_path: Path, template: str, spec: str = GOOD_SPEC, name: str = "probe") -> Path:
    folder = tmp_path / "fams" / name
    folder.mkdir(parents=True)
    (folder / "family.toml").write_text(spec)
    (folder / "problem.md.j2").write_text(template)
    return folder


@pytest.mark.parametrize(
    "attack",
    [
        "{{ n.__class__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ parse.__globals__ }}",
        "{{ mesh.__init__.__globals__['os'] }}",
        "{% import 'os' as os %}{{ os }}",
        "{% include '/etc/passwd' %}",
        "{% include '../../../../etc/passwd' %}",
        "{{ open('/etc/passwd').read() }}",
        "{{ __import__('os') }}",
        "{{ hardware('v5e').__class__.__init__ }}",
    ],
)
def test_the_sandbox_holds(tmp_path, attack):
    folder = make_family(
        tmp_path, "{% block statement %}" + attack + "{% endblock %}{% block solution %}s{% endblock %}"
    )
    with pytest.raises(SymshardError) as info:
        variant(load_family(folder), 1)
    assert isinstance(info.value, TemplateError)
    assert "family 'probe'" in info.value.message


def test_template_errors_name_family_file_and_line(tmp_path):
    template = "{% block statement %}\nline two\n{{ missing_name }}\n{% endblock %}{% block solution %}s{% endblock %}"
    folder = make_family(tmp_path, template)
    with pytest.raises(TemplateError, match=r"family 'probe', problem.md.j2 line 3: .*'missing_name' is undefined"):
        variant(load_family(folder), 1)
    bad_syntax = make_family(tmp_path, "{% block statement %}{% if %}{% endblock %}", name="syntax")
    with pytest.raises(TemplateError, match=r"family 'syntax', problem.md.j2 line 1"):
        variant(load_family(bad_syntax), 1)


def test_spec_errors_name_the_key(tmp_path):
    spec = GOOD_SPEC.replace('twice = "2 * n"', 'twice = "2 * nn"')
    folder = make_family(tmp_path, "{% block statement %}s{% endblock %}{% block solution %}s{% endblock %}", spec)
    with pytest.raises(TemplateError, match=r"family 'probe', family.toml line \d+ \(let.twice\): .*'nn' is undefined"):
        variant(load_family(folder), 1)
    with pytest.raises(TemplateError, match="difficulty 'tough' is not one of easy, medium, hard"):
        load_family(make_family(tmp_path, "x", GOOD_SPEC.replace('"easy"', '"tough"'), name="tough"))
    with pytest.raises(TemplateError, match="unit 'parsecs' is not one of"):
        load_family(make_family(tmp_path, "x", GOOD_SPEC.replace('"count"', '"parsecs"'), name="units"))


def test_macros_outside_blocks_are_visible_inside(tmp_path):
    template = (
        "{% macro twice(x) %}{{ 2 * x }}{% endmacro %}{% set label = 'n' %}"
        "{% block statement %}{{ label }} = {{ n }}, twice {{ twice(n) }}{% endblock %}"
        "{% block solution %}{{ answers.x }}{% endblock %}"
    )
    p = variant(load_family(make_family(tmp_path, template)), 3)
    n = dict(p.params)["n"]
    assert p.statement.strip() == f"n = {n}, twice {2 * n}"


def test_mistakes_within_tolerance_are_dropped(tmp_path):
    spec = GOOD_SPEC.replace("rel_tol = 0", "rel_tol = 0.02") + (
        '[[answers.mistakes]]\nvalue = "twice * 1.001"\nfeedback = "too close to tell"\n'
        '[[answers.mistakes]]\nvalue = "twice * 3"\nfeedback = "three times"\n'
    )
    folder = make_family(tmp_path, "{% block statement %}s{% endblock %}{% block solution %}s{% endblock %}", spec)
    (answer,) = variant(load_family(folder), 2).answers
    assert [m.feedback for m in answer.mistakes] == ["three times"]


def test_impossible_checks_are_reported(tmp_path):
    spec = GOOD_SPEC + '\n[checks]\nnever = "n > 1000"\n'
    folder = make_family(tmp_path, "{% block statement %}s{% endblock %}{% block solution %}s{% endblock %}", spec)
    with pytest.raises(
        TemplateError, match=r"found no valid variant for seed 1 in 200 draws: check never failed \(200×\)"
    ):
        variant(load_family(folder), 1)


def test_extra_family_folders(tmp_path, monkeypatch):
    folder = make_family(
        tmp_path, "{% block statement %}n is {{ n }}{% endblock %}{% block solution %}{{ answers.x }}{% endblock %}"
    )
    monkeypatch.setenv("SYMSHARD_FAMILIES", str(folder.parent))
    assert "probe" in families()
    p = variant(family("probe"), 5)
    assert p.solution.strip() == str(2 * dict(p.params)["n"])


# -- writers ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_set():
    return generate(7, count=2 * len(FAMILIES))


def test_json_validates_against_the_shipped_schema(mixed_set):
    data = to_json(mixed_set, seed=7)
    jsonschema.validate(data, schema())
    assert data["count"] == len(mixed_set)
    record = data["problems"][0]
    assert {"id", "family", "seed", "statement", "solution", "answers"} <= set(record)
    assert {"name", "value", "unit", "rel_tol"} <= set(record["answers"][0])


def test_moodle_xml(mixed_set):
    root = ET.fromstring(to_moodle(mixed_set))
    questions = [q for q in root.findall("question") if q.get("type") != "category"]
    assert len(questions) == len(mixed_set)
    for q, p in zip(questions, mixed_set, strict=True):
        assert p.id in q.findtext("name/text") and q.findtext("idnumber") == p.id
        kind = q.get("type")
        if kind == "numerical":
            answers = q.findall("answer")
            assert answers[0].get("fraction") == "100"
            assert answers[0].find("tolerance") is not None
            value = float(answers[0].findtext("text"))
            assert value > 0
            if p.answers[0].rel_tol:
                assert float(answers[0].findtext("tolerance")) == pytest.approx(value * p.answers[0].rel_tol, rel=1e-3)
            assert len(answers) == 2 + len(p.answers[0].mistakes)  # the right one, the mistakes, and '*'
            assert answers[-1].findtext("text") == "*"
        elif kind == "cloze":
            text = q.findtext("questiontext/text")
            assert text.count("{1:") == len(p.answers)
            for a in p.answers:
                if a.unit != "text":
                    assert ":NUMERICAL:=" in text or ":NUMERICAL:%100%" in text
        else:
            assert kind == "shortanswer"
        assert "$" not in q.findtext("questiontext/text").replace("$course$", "")  # math in Moodle's delimiters


def test_markdown_set_and_key(mixed_set):
    student = to_markdown(mixed_set)
    key = answer_key_markdown(mixed_set)
    for p in mixed_set:
        assert f"{{#{p.id}}}" in student and f"{{#{p.id}-key}}" in key
    assert '??? success "Solution"' not in student
    assert student.count('??? tip "Hint') == sum(len(p.hints) for p in mixed_set)
    study = to_markdown(mixed_set, solutions=True)
    assert study.count('??? success "Solution"') == len(mixed_set)
    assert key.count('??? note "Worked solution"') == len(mixed_set)


def test_write_set_never_touches_files_it_did_not_write(tmp_path, mixed_set):
    formats = ("md", "json", "moodle")
    written = write_set(mixed_set[:3], tmp_path / "out", seed=7, formats=formats)
    assert sorted(p.name for p in written if p.parent.name != "figures") == [
        "answer-key.md", "problems.json", "problems.md", "problems.moodle.xml", "problems.schema.json",
    ]  # fmt: skip
    assert (tmp_path / "out" / ".symshard-manifest.json").is_file()
    write_set(mixed_set[:3], tmp_path / "out", seed=7, formats=("md",))  # symshard's own folder: rewritten freely
    assert not (tmp_path / "out" / "problems.json").exists()  # the files of the set it replaced are gone
    (tmp_path / "out" / "notes.md").write_text("mine", encoding="utf-8")
    with pytest.raises(SymshardError, match=re.escape("holds files symshard did not write, e.g. 'notes.md'")):
        write_set(mixed_set[:3], tmp_path / "out", seed=7, formats=formats)
    write_set(mixed_set[:3], tmp_path / "out", seed=7, force=True, formats=formats)  # writes beside it ...
    assert (tmp_path / "out" / "notes.md").read_text(encoding="utf-8") == "mine"  # ... and leaves it alone
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "problems.md").write_text("mine", encoding="utf-8")
    with pytest.raises(SymshardError, match="exists and was not written by symshard"):
        write_set(mixed_set[:3], tmp_path / "other", seed=7, force=True, formats=formats)  # never overwritten
    assert (tmp_path / "other" / "problems.md").read_text(encoding="utf-8") == "mine"


# -- the command line ------------------------------------------------------------------------------------------


def test_cli_list_show_generate(tmp_path, capsys):
    assert main(["problems", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in listed["families"]] == BY_DIFFICULTY  # easy first, as the README says
    assert main(["problems", "show", "allgather-time", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Solution:" in out and "Answers:" in out
    assert main(["problems", "generate", "--seed", "2026", "--count", "20", "--out", str(tmp_path / "w3")]) == 0
    assert "20 problems" in capsys.readouterr().out
    (tmp_path / "w3" / "syllabus.md").write_text("mine", encoding="utf-8")
    assert main(["problems", "generate", "--seed", "2026", "--count", "20", "--out", str(tmp_path / "w3")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symshard: error: ") and "did not write" in err and "--force" in err
    assert main(["problems", "generate", "--seed", "2026", "--count", "20", "--out", str(tmp_path / "w3"),
                 "--force", "--format", "json"]) == 0  # fmt: skip
    capsys.readouterr()
    data = json.loads((tmp_path / "w3" / "problems.json").read_text())
    jsonschema.validate(data, json.loads((tmp_path / "w3" / "problems.schema.json").read_text()))
    assert main(["problems", "schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "symshard problem set"


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (["problems", "show", "nope"], "unknown problem family 'nope'"),
        (["problems", "generate", "--seed", "1", "--out", "/tmp/x"], "say how many problems"),
        (["problems", "generate", "--seed", "1", "--count", "0", "--out", "/tmp/x"], "--count must be at least 1"),
        (
            ["problems", "generate", "--seed", "1", "--count", "2", "--family", "nope", "--out", "/tmp/x"],
            "unknown problem family",
        ),
        (["problems"], "the following arguments are required"),
        (["problems", "check", "allgather-time", "time=5 MiB"], "has the unit 'MiB', which does not measure s"),
        (["problems", "check", "allgather-time", "tme=5 ms"], "has no answer 'tme'; hint: did you mean 'time'?"),
        (["problems", "check", "unreduced-chain", "12"], "'12' does not say which answer it is"),
        (["problems", "show", "allgather-time", "--lang", "fr"], "has no text in language 'fr'"),
        (["problems", "generate", "--seed", "1", "--count", "2", "--lang", "../x", "--out", "/tmp/x"], "no text in"),
    ],
)
def test_cli_problem_errors(capsys, tmp_path, argv, pattern):
    argv = [str(tmp_path / "out") if a == "/tmp/x" else a for a in argv]  # a folder no one else writes
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and pattern in err


# -- grading -------------------------------------------------------------------------------------------------


def test_grading_a_known_problem():
    answer = variant(family("allgather-time"), 7).answer("time")
    assert answer.show == "5.87 ms"
    for given in ("5.87 ms", "5870 us", "5870 µs", 0.00587, "5.9ms"):
        assert answer.grade(given).correct, given
    half = answer.grade("2.94 ms")  # one byte per bf16 element
    assert not half.correct and "2 bytes" in half.feedback
    assert not answer.grade("1 s").correct and "Not within 2%" in answer.grade("1 s").feedback


def test_every_answer_accepts_its_own_display_and_rejects_its_mistakes(mixed_set):
    checked = 0
    for p in mixed_set:
        for a in p.answers:
            if a.unit == "text" or a.rel_tol >= 0.005:  # three significant figures are within 0.5%
                assert a.grade(a.show).correct, (p.id, a.name, a.show)
            if a.unit != "text":
                assert a.grade(a.number).correct, (p.id, a.name)
            for m in a.mistakes:
                grade = a.grade(m.value if a.unit == "text" else m.number)
                assert not grade.correct and grade.feedback, (p.id, a.name, m.value)
                checked += 1
    assert checked > len(mixed_set)


def test_grading_errors_teach():
    p = variant(family("allgather-time"), 7)
    with pytest.raises(AnswerError, match=r"(?s)cannot read 'soon'.*like '5.87 ms'"):
        p.answer("time").grade("soon")
    with pytest.raises(AnswerError, match="has no answer 'tme'"):
        p.answer("tme")


def test_cli_check(capsys):
    assert main(["problems", "check", "allgather-time", "--seed", "7", "time=5.87 ms"]) == 0
    assert capsys.readouterr().out.splitlines() == ["time: right (5.87 ms)", "1 of 1 right"]
    assert main(["problems", "check", "allgather-time", "--seed", "7", "2.94 ms", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["right"] == 0 and "2 bytes" in data["results"][0]["feedback"]

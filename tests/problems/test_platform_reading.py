"""Every course export read as its platform reads it, for a 20-problem set in English and Chinese, with variants.

Issue 35's defects, each checked the platform's way (see ``tests/lms.py`` for the readers): Moodle's
Cloze decoding, PrairieLearn's element rules and its ``server.py`` run as PrairieLearn runs it with
nothing installed, QTI 2.1's tolerance band, the PDF's lists and table widths as laid out on the page,
the Markdown tables' columns, text answers in every form, notation as math; and every file validated
against the platforms' schemas (``tests/data/lms-schemas/``), with and without ``--variants``.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import re
import xml.etree.ElementTree as ET
import zipfile
from collections import defaultdict
from html import unescape

import lms
import pytest
from helpers import has_cjk_font

from symshard.cli import main
from symshard.errors import UsageError
from symshard.problems import generate
from symshard.problems.answering import accepted, choices, entry, is_choice, mistake_entry
from symshard.problems.engine import variants_of
from symshard.problems.textforms import normal
from symshard.problems.writers import FORMATS, export
from symshard.report.markdown import to_html, to_text

SEED = 2026
COUNT = 20
VARIANTS = 2
TITLES = {"en": "Week 3", "zh": "第三周"}
Q21 = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"
Q12 = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
MATHML = "{http://www.w3.org/1998/Math/MathML}"

pytest.importorskip("lxml", reason="lxml (dev extra) reads the schemas")


@pytest.fixture(scope="module", params=["en", "zh"])
def exported(request):
    """(problems, groups, plain files, files with variants) for the set in one language."""
    lang = request.param
    problems = generate(SEED, count=COUNT, language=lang)
    groups = variants_of(problems, SEED, VARIANTS)
    formats = [f for f in FORMATS if f != "pdf" or lang == "en" or has_cjk_font()]
    plain = export(problems, formats, seed=SEED, title=TITLES[lang])
    varied = export(problems, formats, seed=SEED, title=TITLES[lang], variants=groups)
    return problems, groups, plain, varied


def _zip(data: bytes) -> dict[str, bytes]:
    package = zipfile.ZipFile(io.BytesIO(data))
    return {name: package.read(name) for name in package.namelist()}


def _inline(markdown: str) -> str:
    return to_html(markdown, inline=True)[0]


# -- the schemas ---------------------------------------------------------------------------------------------------


def test_every_export_passes_the_platforms_schemas(exported):
    problems, _groups, plain, varied = exported
    for files in (plain, varied):
        errors: dict[str, list[str]] = {}
        for name, data in _zip(files["problems.qti21.zip"]).items():
            if name.endswith(".xml"):
                schema = lms.content_package_schema() if name == "imsmanifest.xml" else lms.qti21_schema()
                errors[f"qti21/{name}"] = lms.schema_errors(schema, data)
        for name, data in _zip(files["problems.qti12.zip"]).items():
            if name == "imsmanifest.xml":
                errors[f"qti12/{name}"] = lms.schema_errors(lms.content_package_schema(), data)
            elif name.endswith(".xml") and not name.endswith("assessment_meta.xml"):
                errors[f"qti12/{name}"] = lms.schema_errors(lms.qti12_dtd(), data, strip_namespaces=True)
        pl = {k.removeprefix("prairielearn/"): v for k, v in files.items() if k.startswith("prairielearn/")}
        for name, text in pl.items():
            if name.endswith("info.json"):
                errors[name] = lms.json_errors(lms.prairielearn_schema("infoQuestion.json"), json.loads(text))
        errors["infoAssessment.json"] = lms.json_errors(
            lms.prairielearn_schema("infoAssessment.json"), json.loads(pl["infoAssessment.json"])
        )
        assert not {k: v for k, v in errors.items() if v}
        assert len(errors) >= 2 * len(problems)  # every item and question was read
        ET.fromstring(files["problems.moodle.xml"])  # Moodle XML has no schema: it must at least parse


# -- Moodle ---------------------------------------------------------------------------------------------------------


def _moodle_questions(files):
    quiz = ET.fromstring(files["problems.moodle.xml"])
    return [q for q in quiz.findall("question") if q.get("type") != "category"]


def test_moodle_reads_cloze_blanks_back_as_written(exported):
    problems, _, plain, _ = exported
    questions = _moodle_questions(plain)
    clozes = 0
    for q, p in zip(questions, problems, strict=True):
        if q.get("type") != "cloze":
            continue
        clozes += 1
        blanks = lms.cloze_blanks(q.findtext("questiontext/text"))
        assert len(blanks) == len(p.answers), p.id
        for blank, a in zip(blanks, p.answers, strict=True):
            feedback = [f for _, _, f in blank["alternatives"]]
            assert not any("\\/" in f or '\\"' in f for f in feedback), (p.id, feedback)  # the "1\/4"
            if is_choice(a):
                assert blank["type"] == "MULTICHOICE_VS"
                expected = {(100.0 if c.correct else 0.0, _inline(c.markdown), _inline(c.feedback)) for c in
                            choices(a, p.language)}  # fmt: skip
                assert set(blank["alternatives"]) == expected
            elif a.unit == "text":
                assert blank["type"] == "SHORTANSWER"
                assert [ans for _, ans, _ in blank["alternatives"]] == list(accepted(a, p.language))
                assert {fraction for fraction, _, _ in blank["alternatives"]} == {100.0}
            else:
                assert blank["type"] == "NUMERICAL"
                right, *wrong = blank["alternatives"]
                value, _tol = right[1].split(":")
                assert right[0] == 100 and abs(float(value) - entry(a).value) <= 1e-5 * abs(entry(a).value)
                assert [f for _, _, f in wrong] == [_inline(m.feedback) for m in a.mistakes]
                for (_, ans, _), m in zip(wrong, a.mistakes, strict=True):
                    target = mistake_entry(a, m).value
                    assert abs(float(ans.split(":")[0]) - target) <= 1e-5 * abs(target)
    assert clozes >= 3


def test_moodle_cloze_escaping_survives_every_separator():
    from symshard.problems.moodle import cloze_text

    nasty = ["a}b", "a#b", "a~b", "a\\}b", "a\\#b", "1/4 &lt; 2", 'say "hi"', "ends with \\", "ends with &", "&#126;"]
    for text in nasty:
        blank = (
            "{1:MULTICHOICE_VS:=" + cloze_text(text) + "#" + cloze_text(text) + "~%0%other#" + cloze_text(text) + "}"
        )
        (read,) = lms.cloze_blanks(f"<p>before {blank} after</p>")
        assert read["alternatives"] == [(100.0, text, text), (0.0, "other", text)], text


def test_moodle_text_answers_and_choices(exported):
    problems, _, plain, _ = exported
    for q, p in zip(_moodle_questions(plain), problems, strict=True):
        if q.get("type") == "shortanswer":
            (a,) = p.answers
            assert [n.findtext("text") for n in q.findall("answer")] == list(accepted(a, p.language))
            assert {n.get("fraction") for n in q.findall("answer")} == {"100"}
        if q.get("type") == "multichoice":
            (a,) = p.answers
            shown = {n.findtext("text") for n in q.findall("answer")}
            assert shown == {_inline(c.markdown) for c in choices(a, p.language)}
    for q in _moodle_questions(plain):
        for node in q.iter("text"):
            # no notation left raw where math belongs (the dW[D_XY, F])
            assert not re.search(r"(?<![\\(\w])dW\[D", node.text or ""), node.text


def test_moodle_variants_are_a_category_per_problem(exported):
    _problems, groups, _, varied = exported
    quiz = ET.fromstring(varied["problems.moodle.xml"])
    categories: dict[str, list[str]] = defaultdict(list)
    current = None
    for q in quiz.findall("question"):
        if q.get("type") == "category":
            current = q.findtext("category/text")
        else:
            categories[current].append(q.findtext("idnumber"))
    per_problem = [ids for ids in categories.values() if ids]
    assert [ids for ids in per_problem] == [[p.id for p in g] for g in groups]
    assert all(len(set(ids)) == VARIANTS for ids in per_problem)


# -- QTI ------------------------------------------------------------------------------------------------------------


def test_qti21_tolerance_is_built_around_the_right_value(exported):
    problems, _, plain, _ = exported
    package = _zip(plain["problems.qti21.zip"])
    checked = 0
    for p in problems:
        item = ET.fromstring(package[f"items/{p.id}.xml"])
        conditions = list(item.iter(f"{Q21}responseCondition"))
        for i, a in enumerate(p.answers, 1):
            if a.unit == "text":
                continue
            equal = conditions[i - 1].find(f"{Q21}responseIf/{Q21}equal")
            first, second = list(equal)
            assert first.tag == f"{Q21}correct" and second.tag == f"{Q21}variable"
            mode, tolerance = equal.get("toleranceMode"), equal.get("tolerance")
            right = entry(a).value
            if not a.rel_tol:
                assert mode == "exact"
                continue
            for factor, ok in ((1 - 0.999 * a.rel_tol, True), (1 + 0.999 * a.rel_tol, True),
                               (1 - 1.001 * a.rel_tol, False), (1 + 1.001 * a.rel_tol, False)):  # fmt: skip
                assert lms.qti_equal(right, right * factor, mode, tolerance) is ok, (p.id, factor)
            for branch, m in zip(conditions[i - 1].findall(f"{Q21}responseElseIf"), a.mistakes, strict=True):
                first, _ = list(branch.find(f"{Q21}equal"))
                assert first.tag == f"{Q21}baseValue"
                assert abs(float(first.text) - mistake_entry(a, m).value) <= 1e-5 * abs(mistake_entry(a, m).value)
            checked += 1
    assert checked >= 10


def test_qti21_math_is_mathml_and_text_answers_map_every_form(exported):
    problems, _, plain, _ = exported
    package = _zip(plain["problems.qti21.zip"])
    for p in problems:
        raw = package[f"items/{p.id}.xml"].decode("utf-8")
        assert "\\(" not in raw and "\\[" not in raw, p.id
        item = ET.fromstring(raw)
        if "$" in p.statement:
            assert item.find(f"{Q21}itemBody").iter(f"{MATHML}math") is not None
            assert any(True for _ in item.find(f"{Q21}itemBody").iter(f"{MATHML}math")), p.id
        for i, a in enumerate(p.answers, 1):
            if a.unit == "text" and not is_choice(a):
                decl = item.find(f"{Q21}responseDeclaration[@identifier='RESPONSE_{i}']")
                keys = [e.get("mapKey") for e in decl.iter(f"{Q21}mapEntry")]
                assert keys == list(accepted(a, p.language))
                assert {e.get("caseSensitive") for e in decl.iter(f"{Q21}mapEntry")} == {"false"}


def test_canvas_short_answers_list_every_form(exported):
    problems, _, plain, _ = exported
    package = _zip(plain["problems.qti12.zip"])
    (quiz,) = [v for k, v in package.items() if k.endswith(".xml") and "/" in k and "assessment_meta" not in k]
    items = ET.fromstring(quiz).iter(f"{Q12}item")
    answers = [a for p in problems for a in p.answers]
    short = [a for a in answers if a.unit == "text" and not is_choice(a)]
    found = []
    for item in items:
        fields = {
            f.findtext(f"{Q12}fieldlabel"): f.findtext(f"{Q12}fieldentry") for f in item.iter(f"{Q12}qtimetadatafield")
        }
        if fields.get("question_type") == "short_answer_question":
            found.append([v.text for v in item.iter(f"{Q12}varequal")])
    assert found == [list(accepted(a, problems[0].language)) for a in short]


def test_qti_variants_are_groups_and_sections(exported):
    problems, groups, _, varied = exported
    package = _zip(varied["problems.qti21.zip"])
    test = ET.fromstring(package["test.xml"])
    sections = test.findall(f"{Q21}testPart/{Q21}assessmentSection/{Q21}assessmentSection")
    assert len(sections) == len(problems)
    for section, group in zip(sections, groups, strict=True):
        assert section.find(f"{Q21}selection").get("select") == "1"
        assert [r.get("href") for r in section.findall(f"{Q21}assessmentItemRef")] == [
            f"items/{p.id}.xml" for p in group
        ]
    package12 = _zip(varied["problems.qti12.zip"])
    (quiz,) = [v for k, v in package12.items() if k.endswith(".xml") and "/" in k and "assessment_meta" not in k]
    root_section = ET.fromstring(quiz).find(f"{Q12}assessment/{Q12}section")
    canvas_groups = root_section.findall(f"{Q12}section")
    assert len(canvas_groups) == sum(len(g[0].answers) for g in groups)  # a group per part
    for node in canvas_groups:
        assert node.findtext(f"{Q12}selection_ordering/{Q12}selection/{Q12}selection_number") == "1"
        assert len(node.findall(f"{Q12}item")) == VARIANTS


# -- PrairieLearn ----------------------------------------------------------------------------------------------------


def _load_server(path):
    spec = importlib.util.spec_from_file_location(f"pl_server_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prairielearn_questions_as_prairielearn_runs_them(exported, tmp_path):
    problems, groups, _, varied = exported
    pl = {k.removeprefix("prairielearn/"): v for k, v in varied.items() if k.startswith("prairielearn/")}
    lang = problems[0].language
    for group in groups:
        p = group[0]
        folder = f"questions/symshard/{lang}/{p.id}"
        server_source = pl[f"{folder}/server.py"]
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(ast.parse(server_source))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
        }
        assert imported <= {"json", "pathlib"}, imported  # PrairieLearn's image has nothing of symshard's
        here = tmp_path / lang / p.id
        here.mkdir(parents=True)
        for name in ("server.py", "variants.json"):
            (here / name).write_text(pl[f"{folder}/{name}"], encoding="utf-8")
        server = _load_server(here / "server.py")
        assert server.normal(" Compute–Bound ") == normal(" Compute–Bound ")
        records = json.loads(pl[f"{folder}/variants.json"])
        assert len(records) == VARIANTS
        for seed, v in enumerate(group):
            data = {"variant_seed": seed + VARIANTS * 7, "params": {}, "correct_answers": {}}
            server.generate(data)
            assert data["params"] == records[seed]["params"] and data["params"]["symshard"]["id"] == v.id
            assert lms.element_problems(pl[f"{folder}/question.html"], data) == [], v.id
            for a in v.answers:
                if is_choice(a):
                    assert a.name not in data["correct_answers"]
                    continue
                submitted = {}
                if a.unit == "text":
                    forms = accepted(a, lang)
                    for form in forms:
                        graded = dict(data, submitted_answers={a.name: form},
                                      partial_scores={a.name: {"score": float(form == str(a.value))}}, feedback={})  # fmt: skip
                        server.grade(graded)
                        assert graded["partial_scores"][a.name]["score"] == 1 and graded["score"] == 1, form
                    continue
                for m in a.mistakes:
                    submitted = {a.name: mistake_entry(a, m).value}
                    graded = dict(data, submitted_answers=submitted, partial_scores={a.name: {"score": 0}}, feedback={})
                    server.grade(graded)
                    shown = graded["partial_scores"][a.name]["feedback"]
                    assert shown == to_text(m.feedback)
                    assert not re.search(r"</?(p|em|strong|code)>", shown), shown  # text: pl-number-input escapes it
                    break
    assert not any("{{feedback." in text for name, text in pl.items() if name.endswith("question.html"))


def test_english_and_chinese_prairielearn_folders_can_share_a_course():
    en = export(generate(3, count=2), "prairielearn")
    zh = export(generate(3, count=2, language="zh"), "prairielearn")
    questions = lambda files: {k for k in files if k.startswith("prairielearn/questions/")}  # noqa: E731
    assert questions(en) and questions(zh) and not questions(en) & questions(zh)
    uuids = lambda files: {json.loads(v)["uuid"] for k, v in files.items() if k.endswith("info.json")}  # noqa: E731
    assert not uuids(en) & uuids(zh)


# -- text answers, notation -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "label", "typed", "right"),
    [
        ("compute", "compute or communication", "compute-bound", True),  # the example
        ("compute", "compute or communication", "Compute Bound", True),
        ("2-D", "1-D or 2-D", "2D", True),  # the other example
        ("2-D", "1-D or 2-D", "2 d", True),
        ("between", "'end' or 'between'", "'between'", True),
        ("y[B_X, E]{U_Y}", "the sharding", "y[B_X,E]{U_Y}", True),
        ("compute", "compute or communication", "communication", False),  # a near miss stays wrong
        ("2-D", "1-D or 2-D", "1D", False),
        ("hbm", "hbm or ici", "ici-bound", False),
    ],
)
def test_symshard_grades_every_form_of_a_text_answer(value, label, typed, right):
    from symshard.problems import Answer

    assert Answer("x", label, value, "text", 0).grade(typed).correct is right


def test_choices_and_feedback_show_notation_as_math():
    from symshard.problems import family, variant
    from symshard.problems.answering import text_markdown

    p = variant(family("backward-duality"), 1553371608)
    (a, *_) = p.answers
    assert all(text_markdown(c.text).startswith("$") for c in choices(a, "en"))
    for m in a.mistakes:
        assert not re.search(r"(?<!\$)\bd?W\[", re.sub(r"\$[^$]*\$", "", m.feedback)), m.feedback
    zh = variant(family("device-memory"), 3, "zh")
    assert "bytes per device" not in zh.solution and "每个设备的字节数" in zh.solution


# -- Markdown tables ------------------------------------------------------------------------------------------------


def _table_rows_markdown_it(markdown: str) -> list[list[str]]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    rows, row, inside = [], [], False
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type in ("td_open", "th_open"):
            inside = True
        elif t.type == "inline" and inside:
            row.append(t.content)
            inside = False
        elif t.type == "tr_close":
            rows.append(row)
    return rows


def test_markdown_answer_keys_keep_their_columns(exported):
    problems, _, plain, _ = exported
    rows = _table_rows_markdown_it(plain["answer-key.md"])
    answers = [a for p in problems for a in p.answers]
    body = [r for r in rows if r[0] not in ("answer", "答案")]
    assert len(body) == len(answers) and all(len(r) == 3 for r in rows)
    piped = [a for a in answers if "|" in a.label]
    assert piped  # the set has labels with |X| in them
    for r, a in zip(body, answers, strict=True):
        assert r[0] == a.label


def test_site_problem_pages_and_answer_key_keep_their_columns():
    import markdown as python_markdown

    from symshard.problems import family, variant
    from symshard.problems.writers import answer_key_markdown
    from symshard.site.mathml import convert_markdown
    from symshard.site.problemsets import ProblemSet, problem_page

    for lang in ("en", "zh"):
        p = variant(family("decode-tp-limit"), 151253712, lang)
        assert any("|" in a.label for a in p.answers)
        s = ProblemSet("models", "Whole models", "summary", ("decode-tp-limit",), 1, 1, lang)
        for page in (problem_page(p, 1, s), convert_markdown(answer_key_markdown([p]))):
            html = python_markdown.markdown(
                page,
                extensions=[
                    "admonition",
                    "attr_list",
                    "md_in_html",
                    "tables",
                    "pymdownx.details",
                    "pymdownx.superfences",
                ],
            )
            rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
            assert rows and all(len(re.findall(r"<t[dh]", r)) == 3 for r in rows), lang
            cells = [
                unescape(re.sub(r"<[^>]+>", "", c)) for r in rows[1:] for c in re.findall(r"<td>(.*?)</td>", r, re.S)
            ]
            assert [c for c in cells[0::3]] == [a.label for a in p.answers]


# -- PDF --------------------------------------------------------------------------------------------------------------


def _text_runs(page):
    """The page's text runs as laid out: start x, baseline y, end x (from the font's widths), text."""
    from pypdf._text_extraction import _layout_mode
    from pypdf.generic import ContentStream

    fonts = page._layout_mode_fonts()
    ops = iter(ContentStream(page.get_contents(), page.pdf, "bytes").operations)
    return _layout_mode.text_show_operations(ops, fonts)


def test_pdf_answer_key_tables_keep_each_value_in_its_cell(exported):
    pypdf = pytest.importorskip("pypdf")
    from symshard.i18n import ui

    problems, _, plain, _ = exported
    if "answer-key.pdf" not in plain:
        pytest.skip("no CJK font for the Chinese PDF")
    lang = problems[0].language
    rows = 0
    for page in pypdf.PdfReader(io.BytesIO(plain["answer-key.pdf"])).pages:
        runs = _text_runs(page)
        heads = [r for r in runs if r["text"].strip() == ui("tolerance", lang)]
        for head in heads:
            header = sorted((r for r in runs if abs(r["ty"] - head["ty"]) < 0.5), key=lambda r: r["tx"])
            starts = [r["tx"] for r in header]
            assert len(starts) == 4
            lines = defaultdict(list)
            for r in runs:
                if head["ty"] - 150 < r["ty"] < head["ty"] - 1:
                    lines[round(r["ty"])].append(r)
            for line in lines.values():
                line.sort(key=lambda r: r["tx"])
                at = [i for i, r in enumerate(line) if any(abs(r["tx"] - x) < 0.5 for x in starts[1:])]
                if len(at) < 2:
                    continue
                rows += 1
                for i in at:  # the run before a cell's first run ends in its own cell (the cells' inset is 5 pt)
                    if i:
                        assert line[i - 1]["displaced_tx"] <= line[i]["tx"] - 4.5, (
                            line[i - 1]["text"],
                            line[i]["text"],
                        )
    assert rows >= len(problems)


def test_pdf_list_items_that_wrap_in_the_source_stay_one_item():
    pypdf = pytest.importorskip("pypdf")
    from symshard.problems.pdf import _compile, _preamble
    from symshard.problems.typesetting import markdown_to_typst

    source = (
        "Steps:\n\n- gather the weight\n  over every axis\n- then multiply\n  - nested item\n    wraps too\n\nDone."
    )
    pdf = _compile(_preamble("t", "en") + markdown_to_typst(source), "test")
    runs = _text_runs(pypdf.PdfReader(io.BytesIO(pdf)).pages[0])
    bullets = [r for r in runs if r["text"].strip() in ("•", "‣", "–")]
    assert len(bullets) == 3
    margin = min(r["tx"] for r in runs if r["text"].strip())
    for words in ("over every axis", "wraps too"):
        run = next(r for r in runs if words in r["text"])
        assert run["tx"] > margin + 1, words  # indented with its item, not a paragraph at the margin


def test_pdf_versions_each_have_their_own_key(exported):
    pypdf = pytest.importorskip("pypdf")
    _problems, groups, _, varied = exported
    if "answer-key-1.pdf" not in varied:
        pytest.skip("no CJK font for the Chinese PDF")
    assert "problems.pdf" not in varied
    for k in range(VARIANTS):
        key = "".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(varied[f"answer-key-{k + 1}.pdf"])).pages)
        sheet = "".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(varied[f"problems-{k + 1}.pdf"])).pages)
        for g in groups:
            assert g[k].id in key.replace("\n", "") and g[k].id in sheet.replace("\n", "")


# -- the command line and determinism -------------------------------------------------------------------------------


def test_variants_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "week"
    argv = ["problems", "generate", "--seed", "5", "--count", "3", "--variants", "2", "--out", str(out)]
    assert main([*argv, "--format", "moodle"]) == 0
    quiz = ET.fromstring((out / "problems.moodle.xml").read_text(encoding="utf-8"))
    assert len([q for q in quiz.findall("question") if q.get("type") != "category"]) == 6
    first = (out / "problems.moodle.xml").read_bytes()
    assert main([*argv, "--format", "moodle"]) == 0 and (out / "problems.moodle.xml").read_bytes() == first
    capsys.readouterr()
    assert main([*argv[:-2], "--variants", "0", "--out", str(tmp_path / "no")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--variants must be at least 1, not 0" in err


def test_exports_with_variants_are_deterministic():
    problems = generate(11, count=3)
    groups = variants_of(problems, 11, 2)
    again = variants_of(generate(11, count=3), 11, 2)
    assert [[p.id for p in g] for g in groups] == [[p.id for p in g] for g in again]
    formats = ["moodle", "qti12", "qti21", "prairielearn"]
    assert export(problems, formats, variants=groups) == export(problems, formats, variants=again)
    with pytest.raises(UsageError, match="the variants given are not the set's"):
        export(problems, "moodle", variants=groups[1:])

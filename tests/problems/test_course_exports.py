"""A 40-problem set, English and Chinese, exported for every course platform and read back.

Each format is read the way its platform reads it (Moodle by the element paths of
``question/format/xml/format.php``, Canvas by the QTI 1.2 layout it imports, QTI 2.1 by
the spec's response processing, the PDF by its text, PrairieLearn by running
``server.py`` with the ``data`` PrairieLearn passes), and every question, every answer
with its tolerance and unit, and every mistake's feedback must be found.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction
from html import unescape

import lms
import pytest
from helpers import has_cjk_font

from symshard.algebra.units import parse_quantity
from symshard.cli import main
from symshard.errors import UsageError
from symshard.problems import generate
from symshard.problems.answering import entry, is_choice, mistake_entry, text_markdown, unit_multipliers
from symshard.problems.writers import FORMATS, export
from symshard.report.markdown import to_html, to_text

SEED = 2026
TITLES = {"en": "Week 3", "zh": "第三周"}
Q21 = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"
CP = "{http://www.imsglobal.org/xsd/imscp_v1p1}"
Q12 = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@pytest.fixture(scope="module", params=["en", "zh"])
def exported(request):
    """(problems, files) for the 40-problem set in one language, in every format."""
    lang = request.param
    problems = generate(SEED, count=40, language=lang)
    formats = [f for f in FORMATS if f != "pdf" or lang == "en" or has_cjk_font()]
    return problems, export(problems, formats, seed=SEED, title=TITLES[lang])


def _close(a: float, b: float, rel: float = 1e-5) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def _plain(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


# -- Moodle ------------------------------------------------------------------------------------------------------


def test_moodle_reads_every_question_answer_unit_and_feedback(exported):
    problems, files = exported
    quiz = ET.fromstring(files["problems.moodle.xml"])
    questions = [q for q in quiz.findall("question") if q.get("type") != "category"]
    assert quiz.find("question[@type='category']/category/text").text.startswith("$course$/symshard/")
    assert len(questions) == len(problems) == 40
    mistakes_found = 0
    for q, p in zip(questions, problems, strict=True):
        assert q.findtext("idnumber") == p.id and p.title in q.findtext("name/text")
        for path in ("questiontext", "generalfeedback"):
            node = q.find(path)
            assert node.get("format") == "html"
            html = node.findtext("text")
            # math for MathJax, no Markdown left for Moodle to misread
            assert "$" not in html.replace("$course$", "") and "**" not in html and "\\(" in html + "\\("
            for name in re.findall(r"@@PLUGINFILE@@/([^\"']+)", html):
                assert node.find(f"file[@name='{name}']") is not None, (p.id, name)
        assert len(q.findall("hint")) == len(p.hints)
        assert all(h.get("format") == "html" for h in q.findall("hint"))
        text = q.findtext("questiontext/text")
        if q.get("type") == "numerical":
            (a,) = p.answers
            e = entry(a)
            answers = q.findall("answer")
            right = answers[0]
            assert right.get("fraction") == "100"
            assert _close(float(right.findtext("text")), e.value)
            assert _close(float(right.findtext("tolerance")) + 1e-300, e.tolerance + 1e-300, 1e-4)
            assert answers[-1].findtext("text") == "*"
            wrong = answers[1:-1]
            assert len(wrong) == len(a.mistakes)
            for node, m in zip(wrong, a.mistakes, strict=True):
                assert node.get("fraction") == "0"
                assert _close(float(node.findtext("text")), mistake_entry(a, m).value)
                assert node.findtext("feedback/text") == to_html(m.feedback)[0]  # feedback/text: where Moodle reads it
                mistakes_found += 1
            units = [(u.findtext("unit_name"), float(u.findtext("multiplier"))) for u in q.findall("units/unit")]
            if e.unit:
                assert units[0] == (e.unit, 1.0) and q.findtext("unitgradingtype") == "0"
                assert q.findtext("showunits") == "0"
                # Moodle divides a response by its unit's multiplier: every unit grades the right value
                for name, multiplier in units:
                    typed = e.value * multiplier
                    si = float(parse_quantity(f"{typed!r} {name}", a.unit))
                    assert _close(si, a.number, 1e-9), (p.id, name)
                    assert _close(typed / multiplier, e.value)
            else:
                assert not units and q.findtext("showunits") == "3"
        elif q.get("type") == "multichoice":
            (a,) = p.answers
            answers = q.findall("answer")
            assert len(answers) == 1 + len(a.mistakes)
            by_text = {n.findtext("text"): n for n in answers}
            shown = lambda value: to_html(text_markdown(str(value)), inline=True)[0]  # noqa: E731
            assert by_text[shown(a.value)].get("fraction") == "100"
            for m in a.mistakes:
                assert by_text[shown(m.value)].findtext("feedback/text") == to_html(m.feedback)[0]
                mistakes_found += 1
        elif q.get("type") == "cloze":
            blanks = lms.cloze_blanks(text)  # as Moodle's Cloze parser reads the question text
            assert len(blanks) == len(p.answers)
            for blank, a in zip(blanks, p.answers, strict=True):
                feedback = [f for _, _, f in blank["alternatives"]]
                for m in a.mistakes:
                    assert to_html(m.feedback, inline=True)[0] in feedback, (p.id, m.feedback)
                    mistakes_found += 1
                if blank["type"] == "NUMERICAL":
                    value, tol = blank["alternatives"][0][1].split(":")
                    assert _close(float(value), entry(a).value) and _close(
                        float(tol) + 1e-300, entry(a).tolerance + 1e-300, 1e-4
                    )
                    assert entry(a).unit in text or not entry(a).unit  # Cloze has no units: the prompt names it
                elif blank["type"] == "MULTICHOICE_VS":
                    right = [ans for fraction, ans, _ in blank["alternatives"] if fraction == 100]
                    assert right == [to_html(text_markdown(str(a.value)), inline=True)[0]]
        else:
            assert q.get("type") == "shortanswer"
    assert mistakes_found == sum(len(a.mistakes) for p in problems for a in p.answers)


# -- QTI 1.2 (Canvas) ------------------------------------------------------------------------------------------------


def test_canvas_qti12_package(exported):
    problems, files = exported
    package = zipfile.ZipFile(io.BytesIO(files["problems.qti12.zip"]))
    names = set(package.namelist())
    manifest = ET.fromstring(package.read("imsmanifest.xml"))
    resources = manifest.findall(f"{CP}resources/{CP}resource")
    quiz = next(r for r in resources if r.get("type") == "imsqti_xmlv1p2")
    quiz_file = quiz.find(f"{CP}file").get("href")
    assert quiz_file in names and quiz_file.replace(quiz_file.rsplit("/", 1)[1], "assessment_meta.xml") in names
    for r in resources:
        for f in r.findall(f"{CP}file"):
            assert f.get("href") in names
    root = ET.fromstring(package.read(quiz_file))
    items = root.findall(f"{Q12}assessment/{Q12}section/{Q12}item")
    # one item per single-answer problem; a text-only item and one per answer otherwise
    assert len(items) == sum(1 if len(p.answers) == 1 else 1 + len(p.answers) for p in problems)
    queue = list(items)
    for p in problems:
        if len(p.answers) > 1:
            intro = queue.pop(0)
            assert _kind12(intro) == "text_only_question"
        for a in p.answers:
            item = queue.pop(0)
            kind = _kind12(item)
            feedback = {fb.get("ident"): fb.find(f".//{Q12}mattext").text for fb in item.findall(f"{Q12}itemfeedback")}
            html = "".join(m.text or "" for m in item.iter(f"{Q12}mattext"))
            for src in re.findall(r'src="\$IMS-CC-FILEBASE\$/([^"]+)"', html):
                assert src in names
            if is_choice(a):
                assert kind == "multiple_choice_question"
                labels = item.findall(f".//{Q12}response_label")
                assert len(labels) == 1 + len(a.mistakes)
                for m in a.mistakes:
                    assert to_html(m.feedback)[0] in feedback.values()
            elif a.unit == "text":
                assert kind == "short_answer_question"
            else:
                assert kind == "numerical_question"
                e = entry(a)
                cond = item.find(f".//{Q12}respcondition[@continue='No']")
                assert _close(float(cond.find(f".//{Q12}varequal").text), e.value)
                low, high = float(cond.find(f".//{Q12}vargte").text), float(cond.find(f".//{Q12}varlte").text)
                assert _close(high - low + 1e-300, 2 * e.tolerance + 1e-300, 1e-3)
                # Canvas reads every range as a right answer: mistakes are feedback only
                assert len(item.findall(f".//{Q12}vargte")) == 1
                wrong = feedback.get("general_incorrect_fb", "")
                for m in a.mistakes:
                    assert to_html(m.feedback, inline=True)[0] in wrong
                if e.unit:
                    assert e.unit in html
        if len(p.answers) >= 1:
            assert "general_fb" in {fb.get("ident") for fb in item.findall(f"{Q12}itemfeedback")}
    assert not queue


def _kind12(item: ET.Element) -> str:
    for field in item.iter(f"{Q12}qtimetadatafield"):
        if field.findtext(f"{Q12}fieldlabel") == "question_type":
            return field.findtext(f"{Q12}fieldentry")
    return ""


# -- QTI 2.1 ------------------------------------------------------------------------------------------------------


def test_qti21_package(exported):
    problems, files = exported
    package = zipfile.ZipFile(io.BytesIO(files["problems.qti21.zip"]))
    names = set(package.namelist())
    manifest = ET.fromstring(package.read("imsmanifest.xml"))
    kinds = [r.get("type") for r in manifest.iter(f"{CP}resource")]
    assert kinds.count("imsqti_test_xmlv2p1") == 1 and kinds.count("imsqti_item_xmlv2p1") == len(problems)
    test = ET.fromstring(package.read("test.xml"))
    refs = [r.get("href") for r in test.iter(f"{Q21}assessmentItemRef")]
    assert refs == [f"items/{p.id}.xml" for p in problems]
    for href, p in zip(refs, problems, strict=True):
        item = ET.fromstring(package.read(href))
        assert item.get("identifier") == p.id and item.get("title") == p.title
        feedback = {f.get("identifier"): ET.tostring(f, encoding="unicode") for f in item.iter(f"{Q21}modalFeedback")}
        assert "SOLUTION" in feedback
        for img in item.iter(f"{Q21}img"):
            assert img.get("alt") and img.get("src").replace("../", "") in names
        for i, a in enumerate(p.answers, 1):
            rid = f"RESPONSE_{i}"
            decl = item.find(f"{Q21}responseDeclaration[@identifier='{rid}']")
            condition = list(item.iter(f"{Q21}responseCondition"))[i - 1]
            if is_choice(a):
                choices = item.findall(f".//{Q21}choiceInteraction[@responseIdentifier='{rid}']/{Q21}simpleChoice")
                assert len(choices) == 1 + len(a.mistakes)
                right = decl.findtext(f"{Q21}correctResponse/{Q21}value")
                assert sum(c.get("identifier") == right for c in choices) == 1
                for m in a.mistakes:
                    shown = _plain(to_html(m.feedback, math="mathml")[0])
                    assert any(shown in _plain(f) for f in feedback.values()), m.feedback
                continue
            if a.unit == "text":
                assert decl.get("baseType") == "string"
                continue
            e = entry(a)
            assert decl.get("baseType") == "float"
            assert _close(float(decl.findtext(f"{Q21}correctResponse/{Q21}value")), e.value)
            equal = condition.find(f"{Q21}responseIf/{Q21}equal")
            if a.rel_tol:
                assert equal.get("toleranceMode") == "relative"
                assert _close(float(equal.get("tolerance").split()[0]), a.rel_tol * 100)
            else:
                assert equal.get("toleranceMode") == "exact"
            branches = condition.findall(f"{Q21}responseElseIf")
            assert len(branches) == len(a.mistakes)
            for k, (branch, m) in enumerate(zip(branches, a.mistakes, strict=True), 1):
                assert _close(float(branch.findtext(f"{Q21}equal/{Q21}baseValue")), mistake_entry(a, m).value)
                assert _plain(to_html(m.feedback, math="mathml")[0]) == _plain(feedback[f"{rid}_M{k}"])
            if e.unit:
                assert e.unit in ET.tostring(item.find(f"{Q21}itemBody"), encoding="unicode")


# -- PDF ----------------------------------------------------------------------------------------------------------


def _squash(text: str) -> str:
    """Text as compared with a PDF's: no whitespace, plain quotes and dots."""
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"').replace("…", "...")
    return re.sub(r"\s+", "", text)


def test_pdf_sheet_and_key(exported):
    pypdf = pytest.importorskip("pypdf")
    problems, files = exported
    if "answer-key.pdf" not in files:
        if os.environ.get("SYMSHARD_REQUIRE_CJK"):
            pytest.fail("no CJK font for the Chinese PDF")
        pytest.skip("no CJK font installed for the Chinese PDF (Debian: fonts-noto-cjk)")
    sheet = _squash("".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(files["problems.pdf"])).pages))
    key = _squash("".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(files["answer-key.pdf"])).pages))
    for n, p in enumerate(problems, 1):
        assert _squash(f"{n}. {p.title}") in sheet and _squash(f"{n}. {p.title}") in key
        for a in p.answers:
            assert _squash(a.label) in sheet and _squash(a.label) in key
            assert _squash(a.show) in key
            tolerance = "±" + format(a.rel_tol * 100, "g") + "%" if a.rel_tol else None
            if tolerance:
                assert _squash(tolerance) in key
            if a.unit != "text" and entry(a).unit:
                assert _squash(entry(a).unit) in sheet
            for m in a.mistakes:
                if "$" not in m.feedback and "`" not in m.feedback:
                    assert _squash(m.feedback.replace("**", "")) in key, (p.id, m.feedback)


def test_pdfs_are_deterministic_and_need_a_named_cjk_font(monkeypatch, tmp_path, capsys):
    from symshard.problems import pdf

    problems = generate(3, count=3)
    assert pdf.student_pdf(problems, seed=3) == pdf.student_pdf(problems, seed=3)
    monkeypatch.setattr(pdf, "CJK_FONTS", ("No Such Font SC",))
    zh = generate(3, count=1, language="zh")
    with pytest.raises(UsageError, match="needs a CJK font and none is installed: symshard looks for No Such Font SC"):
        pdf.student_pdf(zh)
    out = tmp_path / "zh"
    assert main(["problems", "generate", "--seed", "3", "--count", "1", "--lang", "zh", "--format", "pdf",
                 "--out", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No Such Font SC" in err and "fonts-noto-cjk" in err
    assert not out.exists() or not any(out.iterdir())  # nothing written


def test_importing_the_problems_loads_no_typesetting():
    import subprocess
    import sys

    code = (
        "import sys, symshard.problems, symshard.problems.writers; "
        "print(','.join(m for m in ('typst', 'markdown_it', 'pypdf') if m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == ""


# -- PrairieLearn -------------------------------------------------------------------------------------------------


def _server(path):
    spec = importlib.util.spec_from_file_location("pl_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prairielearn_questions(exported, tmp_path):
    problems, files = exported
    pl = {k[len("prairielearn/") :]: v for k, v in files.items() if k.startswith("prairielearn/")}
    assessment = json.loads(pl["infoAssessment.json"])
    ids = [q["id"] for q in assessment["zones"][0]["questions"]]
    assert ids == [f"symshard/{p.language}/{p.id}" for p in problems]
    uuids = set()
    for p in problems:
        folder = f"questions/symshard/{p.language}/{p.id}"
        info = json.loads(pl[f"{folder}/info.json"])
        assert info["type"] == "v3" and p.title in info["title"]
        uuids.add(info["uuid"])
        html = pl[f"{folder}/question.html"]
        (record,) = json.loads(pl[f"{folder}/variants.json"])
        params = record["params"]["symshard"]
        for a in p.answers:
            assert f'answers-name="{a.name}"' in html
            if a.unit != "text" and (a.rel_tol or entry(a).unit):
                e = entry(a)
                assert re.search(rf'answers-name="{a.name}"[^>]*rtol="{re.escape(format(a.rel_tol, "g"))}"', html)
                assert _close(record["correct_answers"][a.name], e.value)
                assert params[f"unit_{a.name}"] == e.unit
                mistakes = params["mistakes"][a.name]
                assert [m["feedback"] for m in mistakes] == [to_text(m.feedback) for m in a.mistakes]
        for name in re.findall(r"params\.symshard\.(\w+)", html):
            assert name in params, (p.id, name)
    assert len(uuids) == len(problems)
    # server.py, as PrairieLearn runs it: plain Python, the exported variant and its mistakes' feedback
    p = next(p for p in problems if any(a.mistakes and a.unit not in ("text",) for a in p.answers))
    folder = tmp_path / p.id
    folder.mkdir()
    for name in ("server.py", "variants.json"):
        (folder / name).write_text(pl[f"questions/symshard/{p.language}/{p.id}/{name}"], encoding="utf-8")
    server = _server(folder / "server.py")
    data = {"variant_seed": 12345, "params": {}, "correct_answers": {}}
    server.generate(data)
    assert data == {"variant_seed": 12345, **json.loads((folder / "variants.json").read_text())[0]}
    a = next(a for a in p.answers if a.mistakes and a.unit != "text")
    m = a.mistakes[0]
    data.update(
        submitted_answers={a.name: mistake_entry(a, m).value}, partial_scores={a.name: {"score": 0}}, feedback={}
    )
    server.grade(data)
    assert data["partial_scores"][a.name]["feedback"] == to_text(m.feedback)


# -- the command line and the units a platform converts --------------------------------------------------------------


def test_format_all_writes_every_format(tmp_path, capsys):
    out = tmp_path / "week"
    assert main(["problems", "generate", "--seed", "4", "--count", "4", "--format", "all", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name in ("problems.md", "answer-key.md", "problems.json", "problems.moodle.xml", "problems.qti12.zip",
                 "problems.qti21.zip", "problems.pdf", "answer-key.pdf"):  # fmt: skip
        assert (out / name).is_file() and name in printed
    assert len(list((out / "prairielearn" / "questions" / "symshard" / "en").iterdir())) == 4
    assert "4 PrairieLearn questions" in printed
    capsys.readouterr()
    assert main(["problems", "generate", "--seed", "4", "--count", "4", "--format", "qti12", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".symshard-manifest.json", ".symshard-stamps.jsonl",
                                                     "problems.qti12.zip"]  # replaced  # fmt: skip
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["problems", "generate", "--seed", "4", "--count", "4", "--format", "qti12", "--out", str(out)]) == 2
    assert "did not write, e.g. 'notes.txt'" in capsys.readouterr().err


def test_two_units_one_answer():
    # the example: 2.94 ms and 2940 µs both grade, in Moodle as in symshard's own grader
    from symshard.problems import family, variant

    a = variant(family("allgather-time"), 7).answer("time")
    e = entry(a)
    units = dict(unit_multipliers(a))
    assert e.unit == "ms" and units["ms"] == 1 and units["µs"] == Fraction(1000) and units["s"] == Fraction(1, 1000)
    for typed, unit in ((e.value, "ms"), (e.value * 1000, "µs"), (e.value / 1000, "s")):
        assert _close(typed / float(units[unit]), e.value)
        assert a.grade(f"{typed!r} {unit}").correct

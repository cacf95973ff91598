"""QTI packages: QTI 1.2 as Canvas imports it, and QTI 2.1 for Blackboard, D2L, ILIAS, TAO and others.

Both are zip files (IMS content packages) built in memory, with ``imsmanifest.xml``
at the root and the figures as ``webcontent`` resources beside the questions.

**QTI 1.2 for Canvas** (Quizzes → Import → "QTI .zip file") follows the layout
Canvas itself exports and text2qti writes: ``<quiz id>/<quiz id>.xml`` holds a
``questestinterop`` with one ``assessment`` and one ``section``, and
``<quiz id>/assessment_meta.xml`` the Canvas quiz settings. Each item names its
Canvas type in ``itemmetadata`` (``question_type``):

* a numeric answer is a ``numerical_question``: the right value in the entry unit,
  and its tolerance as the ``vargte``/``varlte`` bounds around a ``varequal`` (Canvas
  reads that as an exact answer with a margin);
* a text answer with known mistakes is a ``multiple_choice_question`` whose choices
  carry their own feedback (notation as ``\\(...\\)`` math); without mistakes, a
  ``short_answer_question`` with one ``varequal`` per way of writing the answer
  (:func:`~symshard.problems.answering.accepted`), as Canvas exports its own;
* a problem with several answers becomes a ``text_only_question`` with the statement
  followed by one item per answer, titled ``3(a)``, ``3(b)``...

Canvas treats every range in a numerical question as a right answer, so the common
mistakes cannot be ranges there: their feedback goes in the item's
``general_incorrect_fb`` ("If you got 2.94 ms: ..."), which Canvas shows to a wrong
answer. The worked solution is the ``general_fb`` of the problem's last item. Figures
are linked as ``$IMS-CC-FILEBASE$/figures/<name>``. With variants, each problem is a
question group (a ``section`` whose ``selection_number`` is 1) holding its variants;
Canvas draws one per student. A group draws each question on its own, so a problem with
several answers has a group per part, each part a question of its own with the statement
of its variant.

**QTI 2.1** has one ``assessmentItem`` per problem (``items/<problem id>.xml``),
every answer an interaction in the same item body: ``textEntryInteraction`` (float)
for numbers, graded with ``equal`` and a relative tolerance in percent around the
right value (QTI builds the band around the first operand, so the right value comes
first), a ``textEntryInteraction`` (string) whose ``mapping`` lists every way to write a
text answer, ``choiceInteraction`` for choices. Each common mistake is its own
``responseElseIf`` that shows a ``modalFeedback``; the worked solution is a
``modalFeedback`` shown after every attempt. ``test.xml`` is an ``assessmentTest`` that
lists the items in order; with variants, each problem is an ``assessmentSection`` that
selects one of its variants (``<selection select="1"/>``). The math of QTI 2.1 items is
MathML, which browsers render without help; QTI 1.2 keeps ``\\(...\\)`` for Canvas's MathJax.

Examples:
    >>> import io, zipfile
    >>> from symshard.problems import family, variant
    >>> problems = [variant(family("allgather-time"), 7)]
    >>> sorted(zipfile.ZipFile(io.BytesIO(to_qti12(problems))).namelist())[-1]
    'imsmanifest.xml'
    >>> sorted(zipfile.ZipFile(io.BytesIO(to_qti21(problems))).namelist())
    ['figures/allgather-time-7-1.svg', 'imsmanifest.xml', 'items/allgather-time-7.xml', 'test.xml']
"""

from __future__ import annotations

import hashlib
import io
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Sequence
from html import escape as _escape

from ..algebra.units import sig
from ..errors import OutputError
from ..messages import say
from ..report.markdown import to_html
from .answering import (
    accepted,
    choices,
    entry,
    is_choice,
    mistake_entry,
    number,
    prompt,
    shown,
    value_markdown,
    word,
)
from .moodle import answers_html
from .problem import Answer, Problem

__all__ = ["CP_NS", "MATHML_NS", "QTI12_NS", "QTI21_NS", "check_entry", "to_qti12", "to_qti21", "zip_files"]

CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
"""The IMS content packaging namespace of ``imsmanifest.xml``."""
QTI12_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
QTI21_NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
MATHML_NS = "http://www.w3.org/1998/Math/MathML"
"""MathML's namespace: QTI 2.1 items write their math in it (prefix ``m``)."""
_CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_FIXED_TIME = (2026, 1, 1, 0, 0, 0)  # zip entries carry a date: a fixed one keeps packages byte-identical


def escape(text: str) -> str:
    return _escape(text, quote=False)


def _ident(*parts: object) -> str:
    """A stable identifier (an XML name): ``g`` and 24 hex digits of a hash of ``parts``."""
    return "g" + hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:24]


def _xml(root: ET.Element) -> bytes:
    ET.indent(root, space="  ")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode").encode("utf-8") + b"\n"


_ENTRY_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
"""One part of a zip entry's path: a name no unzipping tool reads as a way out of the package."""


def check_entry(name: str) -> str:
    """``name`` if it is a path inside the package (relative, ``/``-separated parts of letters, digits,
    ``_``, ``.`` and ``-``, none starting with a dot); every entry symshard zips is checked.

    Raises:
        OutputError: an absolute path, a ``..``, a backslash, a drive, an empty part or another character.

    Examples:
        >>> check_entry("figures/allgather-time-7-1.svg")
        'figures/allgather-time-7-1.svg'
        >>> check_entry("figures/../../.bashrc")
        Traceback (most recent call last):
        ...
        symshard.errors.OutputError: the zip entry 'figures/../../.bashrc' would not stay inside its package
        hint: this is a bug in symshard; please report it
    """
    if not (isinstance(name, str) and name and all(_ENTRY_PART.match(part) for part in name.split("/"))):
        raise OutputError(
            say("the zip entry {name} would not stay inside its package", name=repr(name)),
            hint=say("this is a bug in symshard; please report it"),
        )
    return name


def zip_files(files: dict[str, bytes]) -> bytes:
    """``files`` as a zip: sorted, deflated, each entry with a fixed date (the same files, the same bytes).

    Raises:
        OutputError: a name that is not a path inside the package (see :func:`check_entry`).
    """
    for name in files:
        check_entry(name)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buffer.getvalue()


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, tag, attrs)
    if text is not None:
        node.text = text
    return node


def _figure_files(problems: Sequence[Problem]) -> dict[str, bytes]:
    return {f"figures/{name}": fig.svg.encode("utf-8") for p in problems for name, fig in p.figures}


def _mistakes_html(a: Answer, language: str) -> str:
    """Every mistake's feedback in one list (Canvas's feedback for a wrong answer)."""
    items = "".join(
        "<li>"
        + to_html(word(language, "if_you_got", value=shown(a, m.value), feedback=m.feedback), inline=True)[0]
        + "</li>"
        for m in a.mistakes
    )
    return f"<ul>{items}</ul>" if items else ""


# -- QTI 1.2 (Canvas) -----------------------------------------------------------------------------------------


def _meta(item: ET.Element, kind: str, points: int) -> None:
    fields = _sub(_sub(item, "itemmetadata"), "qtimetadata")
    for label, entry_ in (("question_type", kind), ("points_possible", str(points))):
        field = _sub(fields, "qtimetadatafield")
        _sub(field, "fieldlabel", label)
        _sub(field, "fieldentry", entry_)


def _material(parent: ET.Element, html: str) -> None:
    _sub(_sub(parent, "material"), "mattext", html, texttype="text/html")


def _feedback12(item: ET.Element, ident: str, html: str) -> None:
    node = _sub(item, "itemfeedback", ident=ident)
    _material(_sub(node, "flow_mat"), html)


def _show(parent: ET.Element, linkref: str) -> None:
    _sub(parent, "displayfeedback", feedbacktype="Response", linkrefid=linkref)


def _inline(markdown: str, math: str = "tex") -> str:
    return to_html(markdown, inline=True, math=math)[0]


def _right_html(a: Answer, lang: str, math: str = "tex") -> str:
    return _inline(word(lang, "right", value=value_markdown(a)), math)


def _item12(section: ET.Element, ident: str, title: str, text: str, a: Answer, solution: str | None, lang: str) -> None:
    kind = (
        "multiple_choice_question"
        if is_choice(a)
        else "short_answer_question"
        if a.unit == "text"
        else "numerical_question"
    )
    item = _sub(section, "item", ident=ident, title=title)
    _meta(item, kind, 1)
    presentation = _sub(item, "presentation")
    _material(presentation, text)
    processing = _sub(item, "resprocessing")
    _sub(_sub(processing, "outcomes"), "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
    if solution is not None:
        always = _sub(processing, "respcondition", **{"continue": "Yes"})
        _sub(_sub(always, "conditionvar"), "other")
        _show(always, "general_fb")
    wrong_html = ""
    if kind == "multiple_choice_question":
        response = _sub(presentation, "response_lid", ident="response1", rcardinality="Single")
        render = _sub(response, "render_choice")
        options = choices(a, lang)
        for k, c in enumerate(options, 1):
            label = _sub(render, "response_label", ident=f"{ident}_c{k}")
            _material(label, _inline(c.markdown))
        for k, c in enumerate(options, 1):
            cond = _sub(processing, "respcondition", **{"continue": "Yes" if not c.correct else "No"})
            _sub(_sub(cond, "conditionvar"), "varequal", f"{ident}_c{k}", respident="response1")
            if c.correct:
                _sub(cond, "setvar", "100", action="Set", varname="SCORE")
            _show(cond, f"{ident}_c{k}_fb")
        for k, c in enumerate(options, 1):
            _feedback12(item, f"{ident}_c{k}_fb", to_html(c.feedback)[0])
    elif kind == "short_answer_question":
        response = _sub(presentation, "response_str", ident="response1", rcardinality="Single")
        _sub(_sub(response, "render_fib"), "response_label", ident="answer1", rshuffle="No")
        cond = _sub(processing, "respcondition", **{"continue": "No"})
        test = _sub(cond, "conditionvar")
        for form in accepted(a, lang):  # Canvas's own export: one varequal per right answer
            _sub(test, "varequal", form, respident="response1")
        _sub(cond, "setvar", "100", action="Set", varname="SCORE")
        _show(cond, "correct_fb")
        _feedback12(item, "correct_fb", _right_html(a, lang))
    else:
        response = _sub(presentation, "response_str", ident="response1", rcardinality="Single")
        _sub(_sub(response, "render_fib", fibtype="Decimal"), "response_label", ident="answer1")
        e = entry(a)
        cond = _sub(processing, "respcondition", **{"continue": "No"})
        either = _sub(_sub(cond, "conditionvar"), "or")
        _sub(either, "varequal", number(e.value), respident="response1")
        both = _sub(either, "and")
        _sub(both, "vargte", number(e.value - e.tolerance), respident="response1")
        _sub(both, "varlte", number(e.value + e.tolerance), respident="response1")
        _sub(cond, "setvar", "100", action="Set", varname="SCORE")
        _show(cond, "correct_fb")
        _feedback12(item, "correct_fb", _right_html(a, lang))
        wrong_html = _mistakes_html(a, lang)
    if wrong_html:
        other = _sub(processing, "respcondition", **{"continue": "Yes"})
        _sub(_sub(other, "conditionvar"), "other")
        _show(other, "general_incorrect_fb")
        _feedback12(item, "general_incorrect_fb", wrong_html)
    if solution is not None:
        _feedback12(item, "general_fb", solution)


def _canvas_src(name: str) -> str:
    return "$IMS-CC-FILEBASE$/figures/" + name


def _ask(a: Answer, lang: str) -> str:
    return word(lang, "choose" if is_choice(a) else "give", what=prompt(a, lang))


def _part_text(a: Answer, label: str, lang: str) -> str:
    return f"<p><strong>{escape(label)}</strong> {escape(_ask(a, lang))}</p>"


def _problem12(section: ET.Element, quiz_id: str, p: Problem, n: int, lang: str) -> None:
    """One problem as Canvas items: one question, or a text block and a question per answer."""
    statement = to_html(p.statement, _canvas_src)[0]
    solution = to_html(p.solution, _canvas_src)[0] + "\n" + answers_html(p)
    if len(p.answers) == 1:
        a = p.answers[0]
        text = statement + f"\n<p>{escape(_ask(a, lang))}</p>"
        _item12(section, _ident(quiz_id, p.id), f"{n}. {p.title}", text, a, solution, lang)
        return
    intro = _sub(section, "item", ident=_ident(quiz_id, p.id, "text"), title=f"{n}. {p.title}")
    _meta(intro, "text_only_question", 0)
    _material(_sub(intro, "presentation"), statement)
    for i, a in enumerate(p.answers):
        label = word(lang, "part", n=n, letter="abcdefghij"[i])
        last = i == len(p.answers) - 1
        _item12(section, _ident(quiz_id, p.id, a.name), label, _part_text(a, label, lang), a,
                solution if last else None, lang)  # fmt: skip


def _groups12(section: ET.Element, quiz_id: str, group: Sequence[Problem], n: int, lang: str) -> None:
    """One problem's variants as Canvas question groups, each drawing one question per student: one group
    for a problem with one answer, a group per part otherwise (each part with its variant's statement)."""
    first = group[0]
    for i, a0 in enumerate(first.answers):
        label = word(lang, "part", n=n, letter="abcdefghij"[i]) if len(first.answers) > 1 else f"{n}. {first.title}"
        node = _sub(section, "section", ident=_ident(quiz_id, "group", first.id, a0.name), title=label)
        _sub(_sub(_sub(node, "selection_ordering"), "selection"), "selection_number", "1")
        for p in group:
            a = p.answers[i]
            statement = to_html(p.statement, _canvas_src)[0]
            solution = to_html(p.solution, _canvas_src)[0] + "\n" + answers_html(p)
            ask = _part_text(a, label, lang) if len(p.answers) > 1 else f"<p>{escape(_ask(a, lang))}</p>"
            _item12(node, _ident(quiz_id, p.id, a.name), label, statement + "\n" + ask, a, solution, lang)


def to_qti12(
    problems: Sequence[Problem], *, title: str = "Problem set", variants: Sequence[Sequence[Problem]] | None = None
) -> bytes:
    """The set as a QTI 1.2 package (zip bytes) that Canvas imports as a quiz; with ``variants`` (one
    sequence per problem, the problem itself first), each problem as question groups of its variants."""
    groups = [tuple(g) for g in variants] if variants is not None else [(p,) for p in problems]
    several = any(len(g) > 1 for g in groups)
    lang = groups[0][0].language if groups else "en"
    quiz_id = _ident("qti12", title, lang, *(p.id for g in groups for p in g))
    root = ET.Element("questestinterop", {"xmlns": QTI12_NS})
    assessment = _sub(root, "assessment", ident=quiz_id, title=title)
    section = _sub(assessment, "section", ident="root_section")
    points = 0
    for n, group in enumerate(groups, 1):
        if several:
            _groups12(section, quiz_id, group, n, lang)
        else:
            _problem12(section, quiz_id, group[0], n, lang)
        points += len(group[0].answers)
    meta = ET.Element("quiz", {"identifier": quiz_id, "xmlns": _CANVAS_NS})
    for tag, value in (
        ("title", title),
        ("description", ""),
        ("shuffle_answers", "true"),
        ("scoring_policy", "keep_highest"),
        ("quiz_type", "assignment"),
        ("points_possible", f"{points}.0"),
        ("show_correct_answers", "true"),
        ("allowed_attempts", "1"),
        ("one_question_at_a_time", "false"),
        ("cant_go_back", "false"),
        ("available", "false"),
    ):
        _sub(meta, tag, value)
    figures = _figure_files([p for g in groups for p in g])
    manifest = _manifest(quiz_id, title, lang)
    resources = manifest.find("resources")
    assert resources is not None  # _manifest made it
    quiz = _sub(resources, "resource", identifier=quiz_id, type="imsqti_xmlv1p2")
    _sub(quiz, "file", href=f"{quiz_id}/{quiz_id}.xml")
    _sub(quiz, "dependency", identifierref=quiz_id + "_meta")
    dep = _sub(
        resources,
        "resource",
        identifier=quiz_id + "_meta",
        type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
        href=f"{quiz_id}/assessment_meta.xml",
    )
    _sub(dep, "file", href=f"{quiz_id}/assessment_meta.xml")
    _webcontent(resources, figures)
    files = {
        "imsmanifest.xml": _xml(manifest),
        f"{quiz_id}/{quiz_id}.xml": _xml(root),
        f"{quiz_id}/assessment_meta.xml": _xml(meta),
        **figures,
    }
    return zip_files(files)


def _manifest(ident: str, title: str, language: str) -> ET.Element:
    manifest = ET.Element("manifest", {"identifier": ident + "_manifest", "xmlns": CP_NS})
    metadata = _sub(manifest, "metadata")
    _sub(metadata, "schema", "IMS Content")
    _sub(metadata, "schemaversion", "1.1.3")
    _sub(manifest, "organizations")
    _sub(manifest, "resources")
    del title, language  # the quiz carries its own title; the package needs none
    return manifest


def _webcontent(resources: ET.Element, figures: dict[str, bytes]) -> None:
    for path in figures:
        res = _sub(resources, "resource", identifier=_ident("figure", path), type="webcontent", href=path)
        _sub(res, "file", href=path)


# -- QTI 2.1 -------------------------------------------------------------------------------------------------------

_VOID = re.compile(r"<(img|br|hr)\b([^>]*?)\s*/?>")
ET.register_namespace("m", MATHML_NS)  # items write their math as m:math


def _fragment(html: str) -> ET.Element:
    """An HTML fragment (the exports' HTML, math as MathML) as the children of a ``div``."""
    return ET.fromstring("<div>" + _VOID.sub(r"<\1\2 />", html) + "</div>")


def _xhtml(parent: ET.Element, html: str) -> None:
    """Append the blocks of an HTML fragment to ``parent`` (QTI 2.1's item body is XHTML)."""
    fragment = _fragment(html)
    if fragment.text and fragment.text.strip():
        _sub(parent, "p", fragment.text.strip())
    for child in fragment:
        parent.append(child)


def _inline_xhtml(parent: ET.Element, html: str) -> None:
    """Put an inline HTML fragment (text, ``<strong>``, math) into ``parent``, after what it holds."""
    fragment = _fragment(html)
    if fragment.text:
        last = parent[-1] if len(parent) else None
        if last is None:
            parent.text = (parent.text or "") + fragment.text
        else:
            last.tail = (last.tail or "") + fragment.text
    for child in fragment:
        parent.append(child)


def _tolerance_mode(a: Answer) -> dict[str, str]:
    if not a.rel_tol:
        return {"toleranceMode": "exact"}
    percent = sig(a.rel_tol * 100, 6)
    return {"toleranceMode": "relative", "tolerance": f"{percent} {percent}"}


def _add_feedback(parent: ET.Element, ident: str) -> None:
    set_ = _sub(parent, "setOutcomeValue", identifier="FEEDBACK")
    both = _sub(set_, "multiple")
    _sub(both, "variable", identifier="FEEDBACK")
    _sub(both, "baseValue", ident, baseType="identifier")


def _add_score(parent: ET.Element) -> None:
    set_ = _sub(parent, "setOutcomeValue", identifier="SCORE")
    total = _sub(set_, "sum")
    _sub(total, "variable", identifier="SCORE")
    _sub(total, "baseValue", "1", baseType="float")


def _figure21(name: str) -> str:
    return "../figures/" + name


def _item21(p: Problem) -> ET.Element:
    lang = p.language
    item = ET.Element(
        "assessmentItem",
        {
            "xmlns": QTI21_NS,
            "identifier": p.id,
            "title": p.title,
            "adaptive": "false",
            "timeDependent": "false",
            "{http://www.w3.org/XML/1998/namespace}lang": lang,
        },
    )
    feedbacks: list[tuple[str, str]] = []
    for i, a in enumerate(p.answers, 1):
        rid = f"RESPONSE_{i}"
        if is_choice(a):
            decl = _sub(item, "responseDeclaration", identifier=rid, cardinality="single", baseType="identifier")
            right = next(k for k, c in enumerate(choices(a, lang), 1) if c.correct)
            _sub(_sub(decl, "correctResponse"), "value", f"{rid}_C{right}")
        elif a.unit == "text":
            decl = _sub(item, "responseDeclaration", identifier=rid, cardinality="single", baseType="string")
            _sub(_sub(decl, "correctResponse"), "value", str(a.value))
            mapping = _sub(decl, "mapping", defaultValue="0")
            for form in accepted(a, lang):  # every way to write the answer maps to the full score
                _sub(mapping, "mapEntry", mapKey=form, mappedValue="1", caseSensitive="false")
        else:
            decl = _sub(item, "responseDeclaration", identifier=rid, cardinality="single", baseType="float")
            _sub(_sub(decl, "correctResponse"), "value", number(entry(a).value))
    for ident, base, card in (
        ("SCORE", "float", "single"),
        ("MAXSCORE", "float", "single"),
        ("FEEDBACK", "identifier", "multiple"),
    ):
        decl = _sub(item, "outcomeDeclaration", identifier=ident, cardinality=card, baseType=base)
        if ident == "MAXSCORE":
            _sub(_sub(decl, "defaultValue"), "value", str(len(p.answers)))
        elif ident == "SCORE":
            _sub(_sub(decl, "defaultValue"), "value", "0")
    body = _sub(item, "itemBody")
    _xhtml(body, to_html(p.statement, _figure21, math="mathml")[0])
    processing = _sub(item, "responseProcessing")
    for i, a in enumerate(p.answers, 1):
        rid = f"RESPONSE_{i}"
        letter = f"({'abcdefghij'[i - 1]}) " if len(p.answers) > 1 else ""
        condition = _sub(processing, "responseCondition")
        if is_choice(a):
            interaction = _sub(body, "choiceInteraction", responseIdentifier=rid, shuffle="true", maxChoices="1")
            _sub(interaction, "prompt", letter + _ask(a, lang))
            branch = "responseIf"
            for k, c in enumerate(choices(a, lang), 1):
                _inline_xhtml(
                    _sub(interaction, "simpleChoice", identifier=f"{rid}_C{k}"), _inline(c.markdown, "mathml")
                )
                test = _sub(condition, branch)
                match = _sub(test, "match")
                _sub(match, "variable", identifier=rid)
                _sub(match, "baseValue", f"{rid}_C{k}", baseType="identifier")
                if c.correct:
                    _add_score(test)
                _add_feedback(test, f"{rid}_C{k}_FB")
                feedbacks.append((f"{rid}_C{k}_FB", to_html(c.feedback, math="mathml")[0]))
                branch = "responseElseIf"
            continue
        line = _sub(body, "p", letter + _ask(a, lang) + " ")
        if a.unit == "text":
            _sub(line, "textEntryInteraction", responseIdentifier=rid, expectedLength="24")
            test = _sub(condition, "responseIf")
            above = _sub(test, "gt")
            _sub(above, "mapResponse", identifier=rid)
            _sub(above, "baseValue", "0", baseType="float")
            _add_score(test)
            _add_feedback(test, f"{rid}_RIGHT")
            feedbacks.append((f"{rid}_RIGHT", f"<p>{_right_html(a, lang, 'mathml')}</p>"))
            continue
        e = entry(a)
        _sub(line, "textEntryInteraction", responseIdentifier=rid, expectedLength="12").tail = (
            " " + e.unit if e.unit else None
        )
        test = _sub(condition, "responseIf")
        equal = _sub(test, "equal", **_tolerance_mode(a))
        _sub(equal, "correct", identifier=rid)  # QTI builds the tolerance band around the first value
        _sub(equal, "variable", identifier=rid)
        _add_score(test)
        _add_feedback(test, f"{rid}_RIGHT")
        feedbacks.append((f"{rid}_RIGHT", f"<p>{_right_html(a, lang, 'mathml')}</p>"))
        for k, m in enumerate(a.mistakes, 1):
            test = _sub(condition, "responseElseIf")
            equal = _sub(test, "equal", **_tolerance_mode(a))
            _sub(equal, "baseValue", number(mistake_entry(a, m).value), baseType="float")
            _sub(equal, "variable", identifier=rid)
            _add_feedback(test, f"{rid}_M{k}")
            feedbacks.append((f"{rid}_M{k}", to_html(m.feedback, math="mathml")[0]))
    _add_feedback(processing, "SOLUTION")  # the worked solution, after every attempt
    html = to_html(p.solution, _figure21, math="mathml")[0] + "\n" + answers_html(p, math="mathml")
    feedbacks.append(("SOLUTION", html))
    for ident, content in feedbacks:
        node = _sub(item, "modalFeedback", outcomeIdentifier="FEEDBACK", identifier=ident, showHide="show")
        _xhtml(node, content)
    return item


def to_qti21(
    problems: Sequence[Problem], *, title: str = "Problem set", variants: Sequence[Sequence[Problem]] | None = None
) -> bytes:
    """The set as a QTI 2.1 package (zip bytes): one item per problem and a test that lists them; with
    ``variants`` (one sequence per problem, the problem itself first), a section per problem that selects
    one of its variants."""
    groups = [tuple(g) for g in variants] if variants is not None else [(p,) for p in problems]
    several = any(len(g) > 1 for g in groups)
    lang = groups[0][0].language if groups else "en"
    test_id = _ident("qti21", title, lang, *(p.id for g in groups for p in g))
    test = ET.Element("assessmentTest", {"xmlns": QTI21_NS, "identifier": test_id, "title": title})
    part = _sub(test, "testPart", identifier="part1", navigationMode="nonlinear", submissionMode="individual")
    section = _sub(part, "assessmentSection", identifier="section1", title=title, visible="true")
    manifest = _manifest(test_id, title, lang)
    resources = manifest.find("resources")
    assert resources is not None  # _manifest made it
    test_res = _sub(resources, "resource", identifier=test_id, type="imsqti_test_xmlv2p1", href="test.xml")
    _sub(test_res, "file", href="test.xml")
    files: dict[str, bytes] = {}
    for n, group in enumerate(groups, 1):
        holder = section
        if several:
            holder = _sub(section, "assessmentSection", identifier=f"problem{n}", title=f"{n}. {group[0].title}",
                          visible="false")  # fmt: skip
            _sub(holder, "selection", select="1")
        for p in group:
            href = f"items/{p.id}.xml"
            _sub(holder, "assessmentItemRef", identifier=p.id, href=href)
            files[href] = _xml(_item21(p))
            _sub(test_res, "dependency", identifierref=p.id)
            res = _sub(resources, "resource", identifier=p.id, type="imsqti_item_xmlv2p1", href=href)
            _sub(res, "file", href=href)
            for name, _fig in p.figures:
                _sub(res, "dependency", identifierref=_ident("figure", f"figures/{name}"))
    figures = _figure_files([p for g in groups for p in g])
    _webcontent(resources, figures)
    files.update({"imsmanifest.xml": _xml(manifest), "test.xml": _xml(test), **figures})
    return zip_files(files)

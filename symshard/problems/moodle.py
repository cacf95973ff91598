"""Moodle XML, written the way Moodle's importer (``question/format/xml/format.php``) reads it.

One question per problem, in a category named after the set:

* one numeric answer: a ``numerical`` question. The right value and every common
  mistake are ``<answer>`` elements (fraction 100 and 0) with an absolute
  ``<tolerance>``; each answer's feedback sits in ``<feedback><text>``, where the
  importer looks (``import_answer`` reads ``feedback/text``); a last ``*`` answer
  catches everything else. ``<units>`` lists the entry unit first (multiplier 1)
  and every other unit symshard reads with its multiplier, and units are optional
  (``unitgradingtype`` 0, ``showunits`` 0): ``2.94`` and ``2.94 ms`` and ``2940 µs``
  all grade against 2.94 ms.
* one text answer with known mistakes: a ``multichoice`` question (the mistakes are
  the distractors, each with its feedback); without mistakes, a ``shortanswer``.
* several answers: a ``cloze`` question, one ``NUMERICAL`` or ``MULTICHOICE_S``
  blank per answer, each with its tolerance and mistake feedback (Cloze has no units,
  so the prompt names the unit).

Every text (question, general feedback with the worked solution and the answers,
hints, answer feedback) is ``format="html"``: symshard renders the Markdown itself
(:mod:`~symshard.report.markdown`) and leaves the math as ``\\(...\\)`` and ``\\[...\\]``
for Moodle's MathJax filter. Figures travel inside the XML as ``<file>`` elements
next to the text that shows them, linked as ``@@PLUGINFILE@@/<name>``.

Examples:
    >>> from symshard.problems import family, variant
    >>> import xml.etree.ElementTree as ET
    >>> quiz = ET.fromstring(to_moodle([variant(family("allgather-time"), 7)]))
    >>> q = quiz.findall("question")[1]
    >>> q.get("type"), q.find("questiontext").get("format"), q.findtext("units/unit/unit_name")
    ('numerical', 'html', 'ms')
    >>> q.findall("answer")[1].findtext("feedback/text")[:45]
    '<p>This counts one byte per element, but each'
"""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from html import escape as _escape
from typing import TYPE_CHECKING

from ..algebra.units import sig
from ..i18n import ui
from ..report.markdown import to_html
from .answering import choices, entry, is_choice, mistake_entry, number, prompt, unit_multipliers, word
from .engine import Answer, Problem

if TYPE_CHECKING:
    from ..render import Figure

__all__ = ["answers_html", "to_moodle"]


def escape(text: str) -> str:
    """Text as HTML text (quotes stay quotes: they are not inside an attribute)."""
    return _escape(text, quote=False)


def _pluginfile(name: str) -> str:
    return "@@PLUGINFILE@@/" + name


def _text(
    parent: ET.Element, tag: str, html: str, names: Sequence[str] = (), figures: Mapping[str, Figure] | None = None
) -> None:
    """``<tag format="html"><text>html</text><file .../>...</tag>``, the figures it shows embedded (a link the
    family wrote itself, to no figure of the problem, embeds nothing)."""
    node = ET.SubElement(parent, tag, format="html")
    ET.SubElement(node, "text").text = html
    for name in names:
        if figures is None or name not in figures:
            continue
        data = base64.b64encode(figures[name].svg.encode("utf-8")).decode("ascii")
        ET.SubElement(node, "file", name=name, path="/", encoding="base64").text = data


def _plain(parent: ET.Element, tag: str, value: str) -> ET.Element:
    node = ET.SubElement(parent, tag)
    node.text = value
    return node


def _tolerance_words(a: Answer, language: str) -> str:
    return word(language, "exact") if not a.rel_tol else f"±{sig(a.rel_tol * 100, 3)}%"


def answers_html(p: Problem) -> str:
    """The answers as an HTML table (for the general feedback, after the worked solution)."""
    from ..i18n import ui

    lang = p.language
    head = "".join(f"<th>{escape(ui(k, lang))}</th>" for k in ("answer", "value", "tolerance"))
    rows = "".join(
        f"<tr><td>{escape(a.label)}</td><td>{escape(a.show)}</td><td>{escape(_tolerance_words(a, lang))}</td></tr>"
        for a in p.answers
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _cloze_escape(text: str) -> str:
    """Text inside a Cloze blank: ``} # ~ / " \\`` are Cloze's syntax and need a backslash."""
    return "".join("\\" + c if c in '}#~/"\\' else c for c in text)


def _feedback_html(text: str) -> str:
    return to_html(text, inline=True)[0]


def _cloze(a: Answer, language: str) -> str:
    if is_choice(a):
        options = [
            ("=" if c.correct else "") + _cloze_escape(escape(c.text)) + "#" + _cloze_escape(_feedback_html(c.feedback))
            for c in choices(a, language)
        ]
        return "{1:MULTICHOICE_S:" + "~".join(options) + "}"
    if a.unit == "text":
        return (
            "{1:SHORTANSWER:="
            + _cloze_escape(str(a.value))
            + "#"
            + _cloze_escape(word(language, "right", value=a.show))
            + "}"
        )
    e = entry(a)
    options = [f"={number(e.value)}:{number(e.tolerance)}#{_cloze_escape(word(language, 'right', value=a.show))}"]
    for m in a.mistakes:
        w = mistake_entry(a, m)
        options.append(f"%0%{number(w.value)}:{number(w.tolerance)}#{_cloze_escape(_feedback_html(m.feedback))}")
    return "{1:NUMERICAL:" + "~".join(options) + "}"


def _numerical(q: ET.Element, a: Answer, language: str) -> None:
    e = entry(a)
    right = ET.SubElement(q, "answer", fraction="100", format="moodle_auto_format")
    _plain(right, "text", number(e.value))
    _text(right, "feedback", escape(word(language, "right", value=a.show)))
    _plain(right, "tolerance", number(e.tolerance))
    for m in a.mistakes:
        w = mistake_entry(a, m)
        wrong = ET.SubElement(q, "answer", fraction="0", format="moodle_auto_format")
        _plain(wrong, "text", number(w.value))
        _text(wrong, "feedback", to_html(m.feedback)[0])
        _plain(wrong, "tolerance", number(w.tolerance))
    rest = ET.SubElement(q, "answer", fraction="0", format="moodle_auto_format")
    _plain(rest, "text", "*")
    miss = word(language, "not_within", tol=_tolerance_words(a, language)) if a.rel_tol else word(language, "not_value")
    _text(rest, "feedback", escape(miss))
    _plain(rest, "tolerance", "0")
    units = unit_multipliers(a)
    if units:
        node = ET.SubElement(q, "units")
        ordered = sorted(units, key=lambda u: u[1] != 1)  # Moodle's first unit is the one answers are in
        for name, multiplier in ordered:
            unit = ET.SubElement(node, "unit")
            _plain(unit, "multiplier", number(multiplier))
            _plain(unit, "unit_name", name)
    _plain(q, "unitgradingtype", "0")  # units optional: a bare number is in the first unit
    _plain(q, "unitpenalty", "0.1")
    _plain(q, "showunits", "0" if units else "3")  # a text box for the unit, or no unit at all
    _plain(q, "unitsleft", "0")


def _multichoice(q: ET.Element, a: Answer, language: str) -> None:
    _plain(q, "single", "true")
    _plain(q, "shuffleanswers", "true")
    _plain(q, "answernumbering", "abc")
    for c in choices(a, language):
        node = ET.SubElement(q, "answer", fraction="100" if c.correct else "0", format="html")
        _plain(node, "text", escape(c.text))
        _text(node, "feedback", to_html(c.feedback)[0])


def _shortanswer(q: ET.Element, a: Answer, language: str) -> None:
    _plain(q, "usecase", "0")
    node = ET.SubElement(q, "answer", fraction="100", format="moodle_auto_format")
    _plain(node, "text", str(a.value))
    _text(node, "feedback", escape(word(language, "right", value=a.show)))


def _question(quiz: ET.Element, p: Problem, number_in_set: int) -> None:
    lang = p.language
    figures = dict(p.figures)
    statement, in_statement = to_html(p.statement, _pluginfile)
    solution, in_solution = to_html(p.solution, _pluginfile)
    general = solution + "\n" + answers_html(p)
    if len(p.answers) == 1:
        a = p.answers[0]
        kind = "multichoice" if is_choice(a) else "shortanswer" if a.unit == "text" else "numerical"
        ask = word(lang, "choose" if kind == "multichoice" else "give", what=prompt(a, lang))
        if kind == "numerical" and unit_multipliers(a):
            others = [n for n, _ in unit_multipliers(a) if n != entry(a).unit][:2]
            ask += " " + word(lang, "other_units", units=", ".join(others))
        text = statement + "\n" + f"<p>{escape(ask)}</p>"
    else:
        kind = "cloze"
        parts = [
            f"<p><strong>({'abcdefghij'[i]})</strong> {ui('labelled', lang, label=escape(prompt(a, lang)), value=_cloze(a, lang))}</p>"
            for i, a in enumerate(p.answers)
        ]
        text = statement + "\n" + "\n".join(parts)
    q = ET.SubElement(quiz, "question", type=kind)
    _plain(ET.SubElement(q, "name"), "text", f"{number_in_set:02d} {p.id}: {p.title}")
    _text(q, "questiontext", text, in_statement, figures)
    _text(q, "generalfeedback", general, in_solution, figures)
    _plain(q, "defaultgrade", str(len(p.answers)))
    _plain(q, "penalty", "0.3333333")
    _plain(q, "hidden", "0")
    _plain(q, "idnumber", p.id)
    if kind == "numerical":
        _numerical(q, p.answers[0], lang)
    elif kind == "multichoice":
        _multichoice(q, p.answers[0], lang)
    elif kind == "shortanswer":
        _shortanswer(q, p.answers[0], lang)
    for hint in p.hints:
        html, names = to_html(hint, _pluginfile)
        _text(q, "hint", html, names, figures)
    tags = ET.SubElement(q, "tags")
    for tag in (p.family.name, p.family.difficulty, f"lang:{lang}", *p.family.tags):
        _plain(ET.SubElement(tags, "tag"), "text", tag)


def to_moodle(problems: Sequence[Problem], *, category: str = "symshard") -> str:
    """The set as Moodle XML, one question per problem, ready for Moodle's import (Question bank → Import)."""
    quiz = ET.Element("quiz")
    head = ET.SubElement(quiz, "question", type="category")
    _plain(ET.SubElement(head, "category"), "text", f"$course$/{category}")
    for i, p in enumerate(problems, 1):
        _question(quiz, p, i)
    ET.indent(quiz, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode") + "\n"

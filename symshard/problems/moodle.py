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
  the distractors, each with its feedback, notation shown as math); without mistakes, a
  ``shortanswer`` whose every form (:func:`~symshard.problems.answering.accepted`: ``2D``
  for ``2-D``, ``compute-bound`` for ``compute``) is a right answer.
* several answers: a ``cloze`` question, one ``NUMERICAL``, ``MULTICHOICE_VS`` (options as
  HTML, so that their math is typeset) or ``SHORTANSWER`` blank per answer, each with its
  tolerance, its right forms and its mistakes' feedback (Cloze has no units, so the prompt
  names the unit). Each blank is written the way Moodle's Cloze parser
  (``qtype_multianswer_extract_question`` in ``question/type/multianswer/questiontype.php``)
  reads it back, see :func:`cloze_text`.

With variants (``--variants N``), each problem's variants go in a category of their own
(``<set>/01 <title>``), from which a quiz's random question draws one per student.

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
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from html import escape as _escape
from typing import TYPE_CHECKING

from ..algebra.units import sig
from ..i18n import ui
from ..report.markdown import to_html
from .answering import (
    accepted,
    choices,
    entry,
    is_choice,
    mistake_entry,
    number,
    prompt,
    unit_multipliers,
    value_markdown,
    word,
)
from .problem import Answer, Problem

if TYPE_CHECKING:
    from ..render import Figure

__all__ = ["answers_html", "cloze_text", "to_moodle"]


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


def answers_html(p: Problem, math: str = "tex") -> str:
    """The answers as an HTML table (for the general feedback, after the worked solution); text values
    in the notation as math (MathML with ``math="mathml"``)."""
    from ..i18n import ui

    lang = p.language
    head = "".join(f"<th>{escape(ui(k, lang))}</th>" for k in ("answer", "value", "tolerance"))
    rows = "".join(
        f"<tr><td>{escape(a.label)}</td><td>{_inline(value_markdown(a), math)}</td>"
        f"<td>{escape(_tolerance_words(a, lang))}</td></tr>"
        for a in p.answers
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _inline(markdown: str, math: str = "tex") -> str:
    return to_html(markdown, inline=True, math=math)[0]


_TRAILING = re.compile(r"([\\&])\Z")
_BLANK_START = re.compile(r"\{(?=[0-9]*:)")


def cloze_text(text: str) -> str:
    """One answer or feedback of a Cloze blank, written so that Moodle reads ``text`` back exactly.

    Moodle's parser ends an answer at the first ``~``, ``#`` or ``}`` not preceded by ``\\`` or
    ``&``, and a feedback at the first ``~`` or ``}`` not preceded by ``\\``; it then decodes HTML
    entities and turns ``\\}`` into ``}`` and ``\\#`` into ``#``, and nothing else. So ``}`` and ``#``
    take a backslash (a backslash before them in ``text`` is kept by the one Moodle removes), ``&``
    becomes ``&#38;`` (decoding gives every entity of ``text`` back) and ``~`` becomes ``&#126;``;
    a backslash or ``&`` at the very end, which would hide the separator after it, becomes its entity.

    Examples:
        >>> print(cloze_text("1/4 of {X} #2 ~ a &lt; b"))
        1/4 of {X\\} \\#2 &#126; a &#38;lt; b
    """
    out = text.replace("&", "&#38;").replace("~", "&#126;")
    out = out.replace("}", "\\}").replace("#", "\\#").replace("&\\#", "&#")
    return _TRAILING.sub(lambda m: "&#92;" if m.group(1) == "\\" else "&#38;", out)


def _blank_safe(html: str) -> str:
    """Text of a Cloze question outside its blanks: a ``{`` that would start a blank (``{1:...``) as its entity."""
    return _BLANK_START.sub("&#123;", html)


def _short_text(text: str) -> str:
    """A short answer as Moodle compares it: ``*`` is its wildcard, so a literal one takes a backslash."""
    return text.replace("*", "\\*")


def _cloze(a: Answer, language: str) -> str:
    if is_choice(a):
        options = [
            ("=" if c.correct else "%0%") + cloze_text(_inline(c.markdown)) + "#" + cloze_text(_inline(c.feedback))
            for c in choices(a, language)
        ]
        return "{1:MULTICHOICE_VS:" + "~".join(options) + "}"
    right = cloze_text(_inline(word(language, "right", value=value_markdown(a))))
    if a.unit == "text":
        forms = [f"={cloze_text(_short_text(form))}#{right}" for form in accepted(a, language)]
        return "{1:SHORTANSWER:" + "~".join(forms) + "}"
    e = entry(a)
    options = [f"={number(e.value)}:{number(e.tolerance)}#{right}"]
    for m in a.mistakes:
        w = mistake_entry(a, m)
        options.append(f"%0%{number(w.value)}:{number(w.tolerance)}#{cloze_text(_inline(m.feedback))}")
    return "{1:NUMERICAL:" + "~".join(options) + "}"


def _numerical(q: ET.Element, a: Answer, language: str) -> None:
    e = entry(a)
    right = ET.SubElement(q, "answer", fraction="100", format="moodle_auto_format")
    _plain(right, "text", number(e.value))
    _text(right, "feedback", _inline(word(language, "right", value=value_markdown(a))))
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
        _plain(node, "text", _inline(c.markdown))  # the importer reads the option as HTML (import_answer)
        _text(node, "feedback", to_html(c.feedback)[0])


def _shortanswer(q: ET.Element, a: Answer, language: str) -> None:
    _plain(q, "usecase", "0")
    right = _inline(word(language, "right", value=value_markdown(a)))
    for form in accepted(a, language):  # every way to write the answer is a right answer
        node = ET.SubElement(q, "answer", fraction="100", format="moodle_auto_format")
        _plain(node, "text", _short_text(form))
        _text(node, "feedback", right)


def _question(quiz: ET.Element, p: Problem, name: str) -> None:
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
        text = _blank_safe(statement) + "\n" + "\n".join(parts)
    q = ET.SubElement(quiz, "question", type=kind)
    _plain(ET.SubElement(q, "name"), "text", f"{name} {p.id}: {p.title}")
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


def _category(quiz: ET.Element, path: str) -> None:
    head = ET.SubElement(quiz, "question", type="category")
    _plain(ET.SubElement(head, "category"), "text", f"$course$/{path}")


def to_moodle(
    problems: Sequence[Problem], *, category: str = "symshard", variants: Sequence[Sequence[Problem]] | None = None
) -> str:
    """The set as Moodle XML, ready for Moodle's import (Question bank → Import).

    Without ``variants``, one question per problem in the category ``category``. With them (one
    sequence of variants per problem, the problem itself first), each problem's variants in a
    category of their own under ``category``, named after its number and title, for a quiz's random
    question to draw from.
    """
    quiz = ET.Element("quiz")
    _category(quiz, category)
    groups = [tuple(g) for g in variants] if variants is not None else [(p,) for p in problems]
    several = any(len(g) > 1 for g in groups)
    for i, group in enumerate(groups, 1):
        if several:
            _category(quiz, f"{category}/{i:02d} {group[0].title}")
        for k, p in enumerate(group, 1):
            _question(quiz, p, f"{i:02d}" + (f".{k}" if several else ""))
    ET.indent(quiz, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode") + "\n"

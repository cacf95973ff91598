"""The course platforms' own reading rules, written out for the tests: how each platform reads an export.

* Moodle's Cloze parser, from ``qtype_multianswer_extract_question`` in Moodle's
  ``question/type/multianswer/questiontype.php``: its regular expressions (PHP's lookbehind
  ``(?<!\\\\|&|&amp;)`` is three lookbehinds here, which Python's ``re`` needs) and its decoding of
  an answer or feedback (``html_entity_decode``, then ``\\}`` to ``}`` and ``\\#`` to ``#``, nothing else).
* QTI 2.1's ``equal`` with a tolerance (the spec's response processing): the band is built around
  the *first* operand.
* The schemas in ``tests/data/lms-schemas/`` (see its README): the QTI 1.2 DTD, the QTI 2.1 and IMS
  content-packaging XSDs and PrairieLearn's JSON Schemas, read with lxml and jsonschema.
* PrairieLearn's element rules (from its ``elements/*/*.py``), checked on ``question.html`` once
  Mustache has filled it with a variant's ``params``: no ``answers-name`` that is a key of ``params``,
  no ``correct_answers`` entry for a ``pl-multiple-choice``, only ``pl-answer`` inside one, no two
  options alike, one right option, and each element's attributes as its schema allows.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

SCHEMAS = Path(__file__).parent / "data" / "lms-schemas"

# -- Moodle's Cloze --------------------------------------------------------------------------------------------

_FRACTION = r"=|%(-?[0-9]+(?:[.,][0-9]*)?)%"
_ANSWER = r".+?(?<!\\)(?<!&)(?<!&amp;)(?=[~#}]|$)"
_FEEDBACK = r".*?(?<!\\)(?=[~}]|$)"
_ALTERNATIVE = rf"({_FRACTION})?({_ANSWER})(#({_FEEDBACK}))?"
_TYPES = (
    r"(NUMERICAL|NM)|(MULTICHOICE|MC)|(MULTICHOICE_V|MCV)|(MULTICHOICE_H|MCH)|"
    r"(SHORTANSWER|SA|MW)|(SHORTANSWER_C|SAC|MWC)|"
    r"(MULTICHOICE_S|MCS)|(MULTICHOICE_VS|MCVS)|(MULTICHOICE_HS|MCHS)|"
    r"(MULTIRESPONSE|MR)|(MULTIRESPONSE_H|MRH)|(MULTIRESPONSE_S|MRS)|(MULTIRESPONSE_HS|MRHS)"
)
_BLANK = re.compile(rf"\{{([0-9]*):({_TYPES}):({_ALTERNATIVE}(~{_ALTERNATIVE})*)\}}", re.S)
_ONE = re.compile(rf"~?{_ALTERNATIVE}", re.S)
_TYPE_NAMES = {3: "NUMERICAL", 4: "MULTICHOICE", 5: "MULTICHOICE_V", 6: "MULTICHOICE_H", 7: "SHORTANSWER",
               8: "SHORTANSWER_C", 9: "MULTICHOICE_S", 10: "MULTICHOICE_VS", 11: "MULTICHOICE_HS"}  # fmt: skip


def _moodle_decode(text: str) -> str:
    return html.unescape(text).replace("\\}", "}").replace("\\#", "#")


def cloze_blanks(questiontext: str) -> list[dict]:
    """The blanks of a Cloze question text as Moodle reads them: for each, its type and its alternatives
    ``(fraction, answer, feedback)`` decoded as Moodle stores them, in order."""
    text = questiontext
    blanks = []
    while (m := _BLANK.search(text)) is not None:
        kind = next(_TYPE_NAMES.get(i, "OTHER") for i in range(3, 3 + 13) if m.group(i))
        remaining = m.group(16)
        alternatives = []
        while (alt := _ONE.match(remaining)) is not None and alt.group(0):
            fraction = "100" if alt.group(1) == "=" else (alt.group(2) or "0")
            feedback = _moodle_decode(alt.group(5)) if alt.group(4) is not None else ""
            answer = alt.group(3)
            if kind != "NUMERICAL" or not re.fullmatch(r"-?[0-9.eE+-]+(:[0-9.eE+-]+)?", answer):
                answer = _moodle_decode(answer)
            alternatives.append((float(fraction), answer, feedback))
            remaining = remaining[len(alt.group(0)) :]
        blanks.append({"type": kind, "alternatives": alternatives})
        text = text[: m.start()] + f"{{#{len(blanks)}}}" + text[m.end() :]
    return blanks


# -- QTI 2.1 -------------------------------------------------------------------------------------------------


def qti_equal(first: float, second: float, mode: str, tolerance: str | None) -> bool:
    """QTI 2.1's ``<equal>``: in relative mode, ``second`` must lie within ``t0``% below and ``t1``% above
    ``first``, the band built around the first operand."""
    if mode == "exact":
        return first == second
    t0, t1 = (float(t) for t in (tolerance or "0").split())
    if mode == "relative":
        return first * (1 - t0 / 100) <= second <= first * (1 + t1 / 100)
    return first - t0 <= second <= first + t1


# -- schemas ---------------------------------------------------------------------------------------------------


@cache
def qti21_schema():
    from lxml import etree

    return etree.XMLSchema(file=str(SCHEMAS / "ims-qti21" / "qtiv2p1" / "imsqti_v2p1.xsd"))


@cache
def content_package_schema():
    from lxml import etree

    return etree.XMLSchema(file=str(SCHEMAS / "ims-qti21" / "imscp_v1p1.xsd"))


@cache
def qti12_dtd():
    from lxml import etree

    return etree.DTD(str(SCHEMAS / "ims-qti12" / "ims_qtiasiv1p2p1.dtd"))


def schema_errors(schema, data: bytes, *, strip_namespaces: bool = False) -> list[str]:
    """What ``schema`` (an lxml XMLSchema or DTD) finds wrong with the XML ``data``; the QTI 1.2 DTD knows
    no namespaces, so its documents are read without them."""
    from lxml import etree

    root = etree.fromstring(data)
    if strip_namespaces:
        for node in root.iter():
            if isinstance(node.tag, str):
                node.tag = etree.QName(node).localname
        etree.cleanup_namespaces(root)
    if schema.validate(root):
        return []
    return [f"line {e.line}: {e.message}" for e in schema.error_log.filter_from_errors()]


@cache
def prairielearn_schema(name: str) -> dict:
    return json.loads((SCHEMAS / "prairielearn" / name).read_text(encoding="utf-8"))


def json_errors(schema: dict, instance: object) -> list[str]:
    import jsonschema

    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    return [error.message for error in validator.iter_errors(instance)]


# -- PrairieLearn ------------------------------------------------------------------------------------------------


def mustache(template: str, context: dict) -> str:
    """The Mustache PrairieLearn fills ``question.html`` with, for the tags the exports use: ``{{x.y}}``
    (HTML-escaped), ``{{{x.y}}}`` (as it is), and sections ``{{#x}}...{{/x}}`` over a list, a true value
    or nothing."""

    def lookup(name: str, stack: list) -> object:
        for scope in reversed(stack):
            value = scope
            for part in name.split("."):
                if isinstance(value, dict) and part in value:
                    value = value[part]
                else:
                    value = None
                    break
            if value is not None:
                return value
        return None

    def render(text: str, stack: list) -> str:
        out = []
        pos = 0
        pattern = re.compile(r"\{\{\{\s*([\w.]+)\s*\}\}\}|\{\{([#^/]?)\s*([\w.]+)\s*\}\}")
        while (m := pattern.search(text, pos)) is not None:
            out.append(text[pos : m.start()])
            if m.group(1):
                value = lookup(m.group(1), stack)
                out.append("" if value is None else str(value))
                pos = m.end()
                continue
            sigil, name = m.group(2), m.group(3)
            if sigil in ("#", "^"):
                end = text.index("{{/" + name + "}}", m.end())
                inner = text[m.end() : end]
                value = lookup(name, stack)
                if sigil == "^":
                    out.append(render(inner, stack) if not value else "")
                elif isinstance(value, list):
                    out.extend(render(inner, [*stack, item]) for item in value)
                elif value:
                    out.append(render(inner, stack))
                pos = end + len("{{/" + name + "}}")
                continue
            value = lookup(name, stack)
            out.append("" if value is None else html.escape(str(value)))
            pos = m.end()
        out.append(text[pos:])
        return "".join(out)

    return render(template, [context])


_ELEMENTS = ("pl-number-input", "pl-integer-input", "pl-string-input", "pl-multiple-choice")


def element_problems(question_html: str, data: dict) -> list[str]:
    """What PrairieLearn's elements would refuse in ``question.html`` filled with ``data`` (``params`` and
    ``correct_answers`` after ``generate``)."""
    import lxml.html

    filled = mustache(question_html, {"params": data["params"]})
    found = []
    root = lxml.html.fragment_fromstring(filled, create_parent="div")
    for element in root.iter(*_ELEMENTS):
        name = element.get("answers-name")
        attributes = dict(element.attrib)
        errors = json_errors(prairielearn_schema(f"elements/{element.tag}.json"), attributes)
        found += [f"{element.tag} {name}: {e}" for e in errors]
        if name in data["params"]:
            found.append(f"{element.tag} {name}: Duplicate params variable name")
        if element.tag == "pl-multiple-choice":
            if name in data["correct_answers"]:
                found.append(f"pl-multiple-choice {name}: Duplicate correct_answers variable name")
            if "fixed-order" in attributes and "order" in attributes:
                found.append(f"pl-multiple-choice {name}: both fixed-order and order")
            options = list(element)
            if any(child.tag != "pl-answer" for child in options):
                found.append(f"pl-multiple-choice {name}: a child that is not pl-answer")
            texts = [lxml.html.tostring(child, encoding="unicode", method="html") for child in options]
            inner = [re.sub(r"^<pl-answer[^>]*>|</pl-answer>$", "", t).strip() for t in texts]
            if len(set(inner)) != len(inner):
                found.append(f"pl-multiple-choice {name}: duplicate choices")
            if sum(child.get("correct") == "true" for child in options) != 1:
                found.append(f"pl-multiple-choice {name}: not exactly one right option")
            for child in options:
                found += [f"pl-answer: {e}" for e in json_errors(prairielearn_schema(
                    "elements/pl-multiple-choice.pl-answer.json"), dict(child.attrib))]  # fmt: skip
        elif name not in data["correct_answers"]:
            found.append(f"{element.tag} {name}: no correct answer")
    return found

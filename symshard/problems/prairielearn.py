"""PrairieLearn question folders: one per problem, each student drawing one of its exported variants.

PrairieLearn (v3 questions) takes a folder per question under the course's
``questions/``. For each problem this writes ``questions/symshard/<language>/<problem id>/``
(so an English and a Chinese export live side by side in one course):

* ``info.json``: a stable UUID (from the problem id and language), the title, the
  topic ``symshard`` and tags (family, difficulty, language, the family's tags);
* ``question.html``: the statement and hints (``<details>``) from ``params.symshard``, one
  input element per answer, ``pl-number-input`` with the answer's relative tolerance
  (``rtol``) and its unit as ``suffix``, ``pl-integer-input`` for exact counts,
  ``pl-multiple-choice`` for a text answer with known mistakes (each option with its
  feedback, notation as math), ``pl-string-input`` otherwise; the worked solution in the
  answer panel;
* ``variants.json``: the problem's exported variants (one, or N with ``--variants N``), each
  everything ``generate`` needs: ``params`` and ``correct_answers``;
* ``server.py``: plain Python that runs on PrairieLearn's standard image with nothing
  installed (no symshard, no markdown-it-py, no polib): ``generate`` picks the variant
  ``variant_seed`` points at, so each student draws one of the exported variants;
  ``grade`` accepts every way to write a text answer
  (:mod:`~symshard.problems.textforms`) and shows, as text, the feedback of the common
  mistake a wrong number matches.

PrairieLearn's elements have rules of their own, which the folders keep: an element's
``answers-name`` is no key of ``params`` (everything symshard puts there is under
``params.symshard``), a ``pl-multiple-choice`` has no ``correct_answers`` entry (it grades
its own options), and the text inputs show a feedback as escaped text, so mistakes'
feedback is text (math stays ``\\(...\\)`` for PrairieLearn's MathJax).

Beside the questions, ``infoAssessment.json`` is a homework assessment listing them in
order, to copy into ``courseInstances/<instance>/assessments/<name>/``. Figures are
embedded in the HTML as SVG data URIs.

Examples:
    >>> from symshard.problems import family, variant
    >>> files = to_prairielearn([variant(family("allgather-time"), 7)])
    >>> sorted(files)[:3]
    ['infoAssessment.json', 'questions/symshard/en/allgather-time-7/info.json', 'questions/symshard/en/allgather-time-7/question.html']
    >>> variant_record(variant(family("allgather-time"), 7))["correct_answers"]
    {'time': 5.87203}
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Sequence
from html import escape as _escape

from .. import __version__
from ..i18n import ui
from ..report.markdown import to_html, to_text
from .answering import accepted, choices, entry, is_choice, mistake_entry, number, prompt
from .moodle import answers_html
from .problem import Answer, Problem
from .textforms import DASHES, QUOTES, normal

__all__ = ["question_folder", "question_html", "server_py", "to_prairielearn", "variant_record"]

_NAMESPACE = uuid.UUID("7c1e6f0a-5b8e-4a51-9d2c-3f6a1e0b9c42")  # symshard's: UUIDs are uuid5 of the problem id


def escape(text: str) -> str:
    return _escape(text, quote=False)


def _kind(a: Answer) -> str:
    if is_choice(a):
        return "choice"
    if a.unit == "text":
        return "string"
    if not a.rel_tol and float(a.number or 0).is_integer() and not entry(a).unit:
        return "integer"
    return "number"


def question_folder(p: Problem) -> str:
    """The question's folder under the course's ``questions/`` (also its id there): one per language.

    Examples:
        >>> from symshard.problems import family, variant
        >>> question_folder(variant(family("allgather-time"), 7, "zh"))
        'symshard/zh/allgather-time-7'
    """
    return f"symshard/{p.language}/{p.id}"


def variant_record(p: Problem) -> dict:
    """One variant as ``generate`` puts it in ``data``: ``params`` (everything under ``params.symshard``:
    HTML, labels, units, options, the text forms and the mistakes) and ``correct_answers`` (in each
    answer's entry unit; none for a multiple choice, which grades its own options)."""
    lang = p.language
    figures = dict(p.figures)

    def src(name: str) -> str:
        if name not in figures:  # a link the family wrote itself, to no figure of this problem: left as written
            return "figures/" + name
        return "data:image/svg+xml;base64," + base64.b64encode(figures[name].svg.encode("utf-8")).decode("ascii")

    params: dict[str, object] = {
        "statement_html": to_html(p.statement, src)[0],
        "solution_html": to_html(p.solution, src)[0] + "\n" + answers_html(p),
        "hints": [{"title": ui("hint", lang, k=k), "html": to_html(h, src)[0]} for k, h in enumerate(p.hints, 1)],
        "id": p.id,
        "seed": p.seed,
        "accept": {},
        "mistakes": {},
        "rtol": {},
    }
    correct: dict[str, object] = {}
    for a in p.answers:
        params[f"label_{a.name}"] = escape(prompt(a, lang))
        kind = _kind(a)
        params[f"as_{kind}_{a.name}"] = True
        if kind == "choice":
            params[f"choices_{a.name}"] = [
                {
                    "html": to_html(c.markdown, inline=True)[0],
                    "correct": "true" if c.correct else "false",
                    "feedback": to_html(c.feedback, inline=True)[0],
                }
                for c in choices(a, lang)
            ]
        elif kind == "string":
            correct[a.name] = str(a.value)
            params["accept"][a.name] = sorted({normal(form) for form in accepted(a, lang)})  # type: ignore[index]
        else:
            e = entry(a)
            params[f"unit_{a.name}"] = e.unit
            params["rtol"][a.name] = a.rel_tol  # type: ignore[index]
            correct[a.name] = int(e.value) if kind == "integer" else float(number(e.value))
            params["mistakes"][a.name] = [  # type: ignore[index]
                {"value": float(number(mistake_entry(a, m).value)), "feedback": to_text(m.feedback)} for m in a.mistakes
            ]
    return {"params": {"symshard": params}, "correct_answers": correct}


def _element(a: Answer, kind: str) -> list[str]:
    """The input element of one answer, asked as ``kind``."""
    if kind == "choice":
        return [
            f'<pl-multiple-choice answers-name="{a.name}" order="fixed">',
            f"{{{{#params.symshard.choices_{a.name}}}}}",
            '<pl-answer correct="{{correct}}" feedback="{{feedback}}">{{{html}}}</pl-answer>',
            f"{{{{/params.symshard.choices_{a.name}}}}}",
            "</pl-multiple-choice>",
        ]
    if kind == "string":
        return [f'<pl-string-input answers-name="{a.name}" remove-spaces="true" ignore-case="true"></pl-string-input>']
    if kind == "integer":
        return [f'<pl-integer-input answers-name="{a.name}"></pl-integer-input>']
    rtol = number(a.rel_tol) if a.rel_tol else "1e-9"
    element = (
        f'<pl-number-input answers-name="{a.name}" comparison="relabs" rtol="{rtol}" atol="0" '
        f'suffix="{{{{params.symshard.unit_{a.name}}}}}"></pl-number-input>'
    )
    return [element]


def question_html(p: Problem | Sequence[Problem]) -> str:
    """``question.html`` for a problem or its variants: the statement, hints, one input element per answer
    (in a Mustache section per kind when the variants ask an answer in different ways, a text answer with
    mistakes in one and without in another, say), and the worked solution."""
    group = (p,) if isinstance(p, Problem) else tuple(p)
    first = group[0]
    lines = ["<pl-question-panel>", "{{{params.symshard.statement_html}}}", "{{#params.symshard.hints}}",
             "<details><summary>{{title}}</summary>{{{html}}}</details>", "{{/params.symshard.hints}}",
             "</pl-question-panel>", ""]  # fmt: skip
    for i, a in enumerate(first.answers):
        letter = f"<strong>({'abcdefghij'[i]})</strong> " if len(first.answers) > 1 else ""
        lines.append(f"<p>{letter}{{{{{{params.symshard.label_{a.name}}}}}}}</p>")
        kinds = list(dict.fromkeys(_kind(v.answers[i]) for v in group))
        for kind in kinds:
            if len(kinds) == 1:
                lines += _element(a, kind)
            else:
                lines += [f"{{{{#params.symshard.as_{kind}_{a.name}}}}}", *_element(a, kind),
                          f"{{{{/params.symshard.as_{kind}_{a.name}}}}}"]  # fmt: skip
        lines.append("")
    lines += [
        "<pl-answer-panel>",
        f"<p><strong>{escape(ui('worked_solution', first.language))}</strong></p>",
        "{{{params.symshard.solution_html}}}",
        "</pl-answer-panel>",
    ]
    return "\n".join(lines) + "\n"


_SERVER = '''"""{id}: {family} ({language}), generated by symshard {version}.

Plain Python for PrairieLearn's standard image: it needs nothing installed.
generate() gives each student one of the variants in variants.json, the one
PrairieLearn's variant_seed points at; grade() accepts every way to write a
text answer and shows, as text, the feedback of the common mistake that a
wrong number matches.
"""

import json
import pathlib

_DASHES = str.maketrans(dict.fromkeys("{dashes}", "-"))
_QUOTES = {quotes}


def _variants():
    return json.loads((pathlib.Path(__file__).parent / "variants.json").read_text(encoding="utf-8"))


def normal(text):
    """How a typed text answer is compared: no spaces, one kind of dash, no quotes around it, any case."""
    return "".join(str(text).translate(_DASHES).split()).strip(_QUOTES).casefold()


def generate(data):
    records = _variants()
    record = records[int(data["variant_seed"]) % len(records)]
    data["params"].update(record["params"])
    data["correct_answers"].update(record["correct_answers"])


def grade(data):
    info = data["params"]["symshard"]
    scores = data["partial_scores"]
    for name, forms in info.get("accept", {{}}).items():
        given = data["submitted_answers"].get(name)
        if name in scores and scores[name].get("score", 0) < 1 and isinstance(given, str):
            if normal(given) in forms:
                scores[name]["score"] = 1
    for name, mistakes in info.get("mistakes", {{}}).items():
        given = data["submitted_answers"].get(name)
        if name not in scores or scores[name].get("score", 0) >= 1 or not isinstance(given, (int, float)):
            continue
        rtol = info.get("rtol", {{}}).get(name) or 1e-9
        for mistake in mistakes:
            if abs(given - mistake["value"]) <= rtol * abs(mistake["value"]):
                scores[name]["feedback"] = mistake["feedback"]
                break
    weights = [part.get("weight", 1) for part in scores.values()]
    if weights and sum(weights):
        data["score"] = sum(part.get("score", 0) * part.get("weight", 1) for part in scores.values()) / sum(weights)
'''


def server_py(p: Problem) -> str:
    """``server.py``: plain Python, the exported variants and their grading, nothing to install."""
    return _SERVER.format(
        id=p.id,
        family=p.family.name,
        language=p.language,
        version=__version__,
        dashes=DASHES.encode("unicode_escape").decode("ascii"),
        quotes=json.dumps(QUOTES),
    )


def _info(p: Problem, number_in_set: int) -> str:
    tags = ["symshard", p.family.name, p.family.difficulty, f"lang-{p.language}", *p.family.tags]
    info = {
        "uuid": str(uuid.uuid5(_NAMESPACE, f"{p.id}/{p.language}")),
        "title": f"{number_in_set}. {p.title}",
        "topic": "symshard",
        "tags": list(dict.fromkeys(tags)),
        "type": "v3",
    }
    return json.dumps(info, indent=2, ensure_ascii=False) + "\n"


def to_prairielearn(
    problems: Sequence[Problem], *, title: str = "Problem set", variants: Sequence[Sequence[Problem]] | None = None
) -> dict[str, str]:
    """The question folders and an assessment, as ``{path: text}`` relative to the export's folder; with
    ``variants`` (one sequence per problem, the problem itself first) each folder holds them all."""
    groups = [tuple(g) for g in variants] if variants is not None else [(p,) for p in problems]
    out: dict[str, str] = {}
    ids = []
    for n, group in enumerate(groups, 1):
        p = group[0]
        qid = question_folder(p)
        folder = f"questions/{qid}"
        out[f"{folder}/info.json"] = _info(p, n)
        out[f"{folder}/question.html"] = question_html(group)
        out[f"{folder}/server.py"] = server_py(p)
        records = [variant_record(v) for v in group]
        out[f"{folder}/variants.json"] = json.dumps(records, indent=2, ensure_ascii=False) + "\n"
        ids.append(qid)
    lang = groups[0][0].language if groups else "en"
    assessment = {
        "uuid": str(uuid.uuid5(_NAMESPACE, "assessment/" + "/".join(ids) + "/" + lang)),
        "type": "Homework",
        "title": title,
        "set": "Homework",
        "number": "1",
        "zones": [
            {"questions": [{"id": qid, "points": len(g[0].answers)} for qid, g in zip(ids, groups, strict=True)]}
        ],
    }
    out["infoAssessment.json"] = json.dumps(assessment, indent=2, ensure_ascii=False) + "\n"
    return out

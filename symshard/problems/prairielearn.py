"""PrairieLearn question folders: one per problem, drawing a new variant per student when it can.

PrairieLearn (v3 questions) takes a folder per question under the course's
``questions/``. For each problem this writes ``questions/symshard/<problem id>/``:

* ``info.json``: a stable UUID (from the problem id and language), the title, the
  topic ``symshard`` and tags (family, difficulty, language, the family's tags);
* ``question.html``: the statement and hints (``<details>``) from ``params``, one input
  element per answer, ``pl-number-input`` with the answer's relative tolerance
  (``rtol``) and its unit as ``suffix``, ``pl-integer-input`` for exact counts,
  ``pl-multiple-choice`` for a text answer with known mistakes (each choice with its
  feedback), ``pl-string-input`` otherwise; the worked solution in the answer panel and
  the mistake feedback in the submission panel;
* ``server.py``: ``generate`` draws the variant from PrairieLearn's ``variant_seed``
  with symshard (:func:`variant_data`), so each student gets their own numbers, or
  uses the exported variant in ``variant.json`` when symshard is not installed on the
  server (or ``DRAW_NEW_VARIANTS`` is set to False); ``grade`` compares a wrong
  number with each common mistake, within the answer's tolerance, and shows that
  mistake's feedback;
* ``variant.json``: the exported variant, everything ``generate`` needs.

Beside the questions, ``infoAssessment.json`` is a homework assessment listing them in
order, to copy into ``courseInstances/<instance>/assessments/<name>/``. Figures are
embedded in the HTML as SVG data URIs. Math stays ``\\(...\\)`` for PrairieLearn's MathJax.

Examples:
    >>> from symshard.problems import family, variant
    >>> files = to_prairielearn([variant(family("allgather-time"), 7)])
    >>> sorted(files)[:3]
    ['infoAssessment.json', 'questions/symshard/allgather-time-7/info.json', 'questions/symshard/allgather-time-7/question.html']
    >>> variant_data("allgather-time", 7)["correct_answers"]
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
from ..report.markdown import to_html
from .answering import choices, entry, is_choice, mistake_entry, number, prompt
from .engine import Answer, Problem, family, variant
from .moodle import answers_html

__all__ = ["question_html", "server_py", "to_prairielearn", "variant_data", "variant_record"]

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


def variant_record(p: Problem) -> dict:
    """What ``server.py`` puts in ``data``: ``params`` (HTML, labels, units, choices, mistakes) and
    ``correct_answers`` (in each answer's entry unit)."""
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
        "mistakes": {},
    }
    correct: dict[str, object] = {}
    for a in p.answers:
        params[f"label_{a.name}"] = escape(prompt(a, lang))
        kind = _kind(a)
        if kind == "choice":
            params[f"choices_{a.name}"] = [
                {
                    "text": c.text,
                    "correct": "true" if c.correct else "false",
                    "feedback": to_html(c.feedback, inline=True)[0],
                }
                for c in choices(a, lang)
            ]
            correct[a.name] = str(a.value)
        elif kind == "string":
            correct[a.name] = str(a.value)
        else:
            e = entry(a)
            params[f"unit_{a.name}"] = e.unit
            correct[a.name] = int(e.value) if kind == "integer" else float(number(e.value))
            params["mistakes"][a.name] = [  # type: ignore[index]
                {"value": float(number(mistake_entry(a, m).value)), "feedback": to_html(m.feedback)[0]}
                for m in a.mistakes
            ]
    return {"params": params, "correct_answers": correct}


def variant_data(name: str, seed: int, language: str = "en") -> dict:
    """The record of the variant ``seed`` of family ``name`` (what ``server.py`` asks symshard for).

    Raises:
        TemplateError: no such family, or no text in ``language``.
    """
    return variant_record(variant(family(name), seed, language))


def question_html(p: Problem) -> str:
    """``question.html``: the statement, hints, one input element per answer, solution and feedback panels."""
    lang = p.language
    lines = ["<pl-question-panel>", "{{{params.statement_html}}}", "{{#params.hints}}",
             "<details><summary>{{title}}</summary>{{{html}}}</details>", "{{/params.hints}}",
             "</pl-question-panel>", ""]  # fmt: skip
    for i, a in enumerate(p.answers):
        letter = f"<strong>({'abcdefghij'[i]})</strong> " if len(p.answers) > 1 else ""
        label = f"{letter}{{{{{{params.label_{a.name}}}}}}}"
        kind = _kind(a)
        lines.append(f"<p>{label}</p>")
        if kind == "choice":
            lines += [
                f'<pl-multiple-choice answers-name="{a.name}" fixed-order="true">',
                f"{{{{#params.choices_{a.name}}}}}",
                '<pl-answer correct="{{correct}}" feedback="{{feedback}}">{{text}}</pl-answer>',
                f"{{{{/params.choices_{a.name}}}}}",
                "</pl-multiple-choice>",
            ]
        elif kind == "string":
            lines.append(
                f'<pl-string-input answers-name="{a.name}" remove-spaces="true" ignore-case="true"></pl-string-input>'
            )
        elif kind == "integer":
            lines.append(f'<pl-integer-input answers-name="{a.name}"></pl-integer-input>')
        else:
            rtol = number(a.rel_tol) if a.rel_tol else "1e-9"
            lines.append(
                f'<pl-number-input answers-name="{a.name}" comparison="relabs" rtol="{rtol}" atol="0" '
                f'suffix="{{{{params.unit_{a.name}}}}}"></pl-number-input>'
            )
        lines.append("")
    lines += [
        "<pl-submission-panel>",
        *(
            f"{{{{#feedback.{a.name}}}}}<p>{{{{{{feedback.{a.name}}}}}}}</p>{{{{/feedback.{a.name}}}}}"
            for a in p.answers
        ),
        "</pl-submission-panel>",
        "",
        "<pl-answer-panel>",
        f"<p><strong>{escape(ui('worked_solution', lang))}</strong></p>",
        "{{{params.solution_html}}}",
        "</pl-answer-panel>",
    ]
    return "\n".join(lines) + "\n"


def server_py(p: Problem) -> str:
    """``server.py``: draw the variant with symshard when the server has it, else the exported one."""
    return f'''"""{p.id}: {p.family.name} ({p.language}), generated by symshard {__version__}.

generate() draws a variant from PrairieLearn's variant_seed with symshard when the
server has it (pip install symshard), so every student gets their own numbers; else,
or with DRAW_NEW_VARIANTS = False, every student gets the exported variant in
variant.json. grade() shows the feedback of a common mistake a wrong number matches.
"""

import json
import pathlib

FAMILY = {json.dumps(p.family.name)}
LANGUAGE = {json.dumps(p.language)}
DRAW_NEW_VARIANTS = True


def _record(seed):
    if DRAW_NEW_VARIANTS:
        try:
            from symshard.errors import SymshardError
            from symshard.problems.prairielearn import variant_data
        except ImportError:
            pass
        else:
            try:
                return variant_data(FAMILY, seed % 2**32, LANGUAGE)
            except SymshardError:  # a family this server's symshard does not have
                pass
    return json.loads((pathlib.Path(__file__).parent / "variant.json").read_text(encoding="utf-8"))


def generate(data):
    record = _record(int(data["variant_seed"]))
    data["params"].update(record["params"])
    data["correct_answers"].update(record["correct_answers"])


def grade(data):
    for name, mistakes in data["params"].get("mistakes", {{}}).items():
        score = data["partial_scores"].get(name, {{}}).get("score", 0)
        given = data["submitted_answers"].get(name)
        if score >= 1 or not isinstance(given, (int, float)):
            continue
        rtol = {json.dumps({a.name: a.rel_tol for a in p.answers})}.get(name, 0.01) or 1e-9
        for m in mistakes:
            if abs(given - m["value"]) <= rtol * abs(m["value"]):
                data["feedback"][name] = m["feedback"]
                data["partial_scores"][name]["feedback"] = m["feedback"]
                break
'''


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


def to_prairielearn(problems: Sequence[Problem], *, title: str = "Problem set") -> dict[str, str]:
    """The question folders and an assessment, as ``{path: text}`` relative to the export's folder."""
    out: dict[str, str] = {}
    ids = []
    for n, p in enumerate(problems, 1):
        folder = f"questions/symshard/{p.id}"
        out[f"{folder}/info.json"] = _info(p, n)
        out[f"{folder}/question.html"] = question_html(p)
        out[f"{folder}/server.py"] = server_py(p)
        out[f"{folder}/variant.json"] = json.dumps(variant_record(p), indent=2, ensure_ascii=False) + "\n"
        ids.append(f"symshard/{p.id}")
    lang = problems[0].language if problems else "en"
    assessment = {
        "uuid": str(uuid.uuid5(_NAMESPACE, "assessment/" + "/".join(ids) + "/" + lang)),
        "type": "Homework",
        "title": title,
        "set": "Homework",
        "number": "1",
        "zones": [{"questions": [{"id": qid, "points": len(p.answers)} for qid, p in zip(ids, problems, strict=True)]}],
    }
    out["infoAssessment.json"] = json.dumps(assessment, indent=2, ensure_ascii=False) + "\n"
    return out

"""Problem sets on disk: Markdown for MkDocs, an answer key, JSON (with a schema) and Moodle XML.

All writers take the same list of :class:`~symshard.problems.engine.Problem`, so a
student set, its answer key and the LMS export always hold the same variants.

* Markdown: a student set (statement, collapsible hints; with ``solutions=True``
  also a collapsible worked solution, for self-study pages) and an instructor
  answer key (every answer with its tolerance, the common mistakes and the
  worked solution). Collapsible blocks use the ``??? type "title"`` syntax of
  ``pymdownx.details``, which MkDocs' successors read too.
* JSON: one object with the set's seed and one record per problem (DESIGN's
  keys); :func:`schema` returns the JSON Schema shipped with the package.
* Moodle XML: one question per problem: ``numerical`` for a single numeric
  answer, ``shortanswer`` for a single text answer, ``cloze`` for several; each
  numeric answer carries its tolerance, and each common mistake is a 0% answer
  with its feedback.

Figures (see :mod:`~symshard.problems.figures`) stay Markdown image links to
``figures/<name>.svg`` in the Markdown exports, and :func:`write_set` writes the
files there; the JSON carries each figure's SVG text; the Moodle XML embeds each
file in its question (Moodle's ``<file>`` elements, linked as ``@@PLUGINFILE@@``).

Examples:
    >>> from symshard.problems import family, variant
    >>> xml = to_moodle([variant(family("allgather-time"), 1)])
    >>> xml.count("<question type=")
    2
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from xml.sax.saxutils import escape

from .. import __version__
from ..errors import UsageError
from ..i18n import ui
from ..mathtext import as_expr
from ..outputs import OutputFolder
from ..units import sig
from .engine import Answer, Problem, show_value
from .figures import FOLDER, moodle_files, to_html_images

__all__ = [
    "answer_key_markdown",
    "answer_table",
    "entry_unit",
    "figure_files",
    "schema",
    "to_json",
    "to_markdown",
    "to_moodle",
    "write_set",
]

FORMATS = ("md", "json", "moodle")


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.strip("\n").splitlines())


def _meta(p: Problem) -> str:
    tags = ", ".join(f"`{tag}`" for tag in p.family.tags)
    return f"*{ui(p.family.difficulty, p.language)}* · {tags} · `{p.id}`"


def to_markdown(problems: Sequence[Problem], *, title: str = "Problem set", solutions: bool = False) -> str:
    """The student set: each problem's statement, its hints folded; with ``solutions`` also
    the worked solution and answers, folded."""
    out = [f"# {title}", ""]
    for i, p in enumerate(problems, 1):
        out += [f"## {i}. {p.title} {{#{p.id}}}", "", _meta(p), "", p.statement.strip(), ""]
        for k, hint in enumerate(p.hints, 1):
            out += [f'??? tip "{ui("hint", p.language, k=k)}"', "", _indent(hint), ""]
        if solutions:
            out += [f'??? success "{ui("solution", p.language)}"', "", _indent(p.solution), ""]
            out += [_indent(answer_table(p)), ""]
    return "\n".join(out).rstrip() + "\n"


def answer_table(p: Problem) -> str:
    """The answers as a table, headed in the problem's language."""
    lang = p.language
    lines = [f"| {ui('answer', lang)} | {ui('value', lang)} | {ui('tolerance', lang)} |", "| --- | --- | --- |"]
    for a in p.answers:
        tol = ui("exact", lang) if a.rel_tol == 0 else f"±{sig(a.rel_tol * 100, 3)}%"
        lines.append(f"| {a.label} | {a.show} | {tol} |")
    return "\n".join(lines)


def answer_key_markdown(problems: Sequence[Problem], *, title: str = "Answer key") -> str:
    """The instructor's key: for each problem its answers, tolerances, the common mistakes
    with their feedback, and the worked solution."""
    out = [f"# {title}", ""]
    for i, p in enumerate(problems, 1):
        out += [f"## {i}. {p.title} {{#{p.id}-key}}", "", _meta(p), "", answer_table(p), ""]
        for a in p.answers:
            for m in a.mistakes:
                colon = "：" if p.language == "zh" else ": "  # a full-width colon carries its own space
                out.append(f"- {a.label} = {show_value(m.value, a.unit)}{colon}{m.feedback}")
        if any(a.mistakes for a in p.answers):
            out.append("")
        out += [f'??? note "{ui("worked_solution", p.language)}"', "", _indent(p.solution), ""]
    return "\n".join(out).rstrip() + "\n"


def to_json(problems: Sequence[Problem], *, seed: int | None = None) -> dict:
    """The set as one JSON-ready object (validated by :func:`schema`)."""
    languages = sorted({p.language for p in problems}) or ["en"]
    return {
        "generator": f"symshard {__version__}",
        "seed": seed,
        "language": languages[0] if len(languages) == 1 else "mixed",
        "count": len(problems),
        "problems": [p.to_dict() for p in problems],
    }


def schema() -> dict:
    """The JSON Schema of :func:`to_json`'s output, shipped with the package."""
    return json.loads(files("symshard.problems").joinpath("schema.json").read_text(encoding="utf-8"))


# -- Moodle -------------------------------------------------------------------------------------------

_ENTRY_UNITS = {
    "s": (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)),
    "B": (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)),
    "FLOP": (("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6), ("FLOP", 1)),
}


def entry_unit(a: Answer) -> tuple[str, float]:
    """The unit a student types the answer in, and its size in SI units (``('µs', 1e-6)``)."""
    x = abs(a.number or 0.0)
    for unit, scale in _ENTRY_UNITS.get(a.unit, ()):
        if x >= scale:
            return unit, scale
    table = _ENTRY_UNITS.get(a.unit)
    if table:
        return table[-1]
    return "", 1.0


def _moodle_math(text: str) -> str:
    """Markdown math to the delimiters Moodle's MathJax filter reads: ``\\(..\\)`` and ``\\[..\\]``."""
    text = re.sub(r"\$\$(.+?)\$\$", lambda m: r"\[" + m.group(1) + r"\]", text, flags=re.S)
    return re.sub(r"(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$", lambda m: r"\(" + m.group(1) + r"\)", text, flags=re.S)


def _cdata(text: str) -> str:
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _num(x: float) -> str:
    return format(float(f"{x:.6g}"), ".6g")


def _tolerance(a: Answer, value: float) -> str:
    return _num(abs(value) * a.rel_tol) if a.rel_tol else "0"


def _cloze_escape(text: str) -> str:
    return re.sub(r"([#~/\"}{\\])", r"\\\1", text)


def _prompt(a: Answer, language: str = "en") -> str:
    unit, _ = entry_unit(a)
    if language == "zh":
        return f"{a.label}" + (f"（单位：{unit}）" if unit else "")
    return f"{a.label}" + (f" (in {unit})" if unit else "")


def _give(what: str, language: str) -> str:
    return f"请给出{what}。" if language == "zh" else f"Give {what}."


def _tags(p: Problem) -> str:
    """Moodle tags: the family, its difficulty and the language of the text."""
    tags = [p.family.name, p.family.difficulty, f"lang:{p.language}"]
    return "    <tags>" + "".join(f"<tag><text>{escape(t)}</text></tag>" for t in tags) + "</tags>"


def _pluginfile(name: str) -> str:
    return "@@PLUGINFILE@@/" + name


def to_moodle(problems: Sequence[Problem], *, category: str = "symshard") -> str:
    """The set as Moodle XML, one question per problem, ready for Moodle's import."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<quiz>"]
    out.append(f'  <question type="category"><category><text>$course$/{escape(category)}</text></category></question>')
    for p in problems:
        figures = dict(p.figures)
        statement, in_statement = to_html_images(_moodle_math(p.statement.strip()), figures, _pluginfile)
        general, in_general = to_html_images(_moodle_math(p.solution.strip()), figures, _pluginfile)
        files = moodle_files(in_statement, figures)
        general_files = moodle_files(in_general, figures)
        name = escape(f"{p.id}: {p.title}")
        numeric = [a for a in p.answers if a.unit != "text"]
        if len(p.answers) == 1 and numeric:
            a = p.answers[0]
            _unit, scale = entry_unit(a)
            value = (a.number or 0.0) / scale
            text = statement + "\n\n" + _give(_prompt(a, p.language), p.language)
            out += [
                '  <question type="numerical">',
                f"    <name><text>{name}</text></name>",
                f'    <questiontext format="markdown"><text>{_cdata(text)}</text>{files}</questiontext>',
                f'    <generalfeedback format="markdown"><text>{_cdata(general)}</text>{general_files}</generalfeedback>',
                "    <defaultgrade>1</defaultgrade>",
                (
                    f'    <answer fraction="100"><text>{_num(value)}</text><tolerance>{_tolerance(a, value)}</tolerance>'
                    f"<feedback><text>{ui('right', p.language)}: {escape(a.show)}.</text></feedback></answer>"
                ),
            ]
            for m in a.mistakes:
                wrong = float(as_expr(m.value)) / scale
                out.append(
                    f'    <answer fraction="0"><text>{_num(wrong)}</text><tolerance>{_tolerance(a, wrong)}</tolerance>'
                    f"<feedback>{_cdata(_moodle_math(m.feedback))}</feedback></answer>"
                )
            out += [
                "    <unitgradingtype>0</unitgradingtype>",
                "    <showunits>3</showunits>",
                _tags(p),
                "  </question>",
            ]
        elif len(p.answers) == 1:
            a = p.answers[0]
            text = statement + "\n\n" + _give(a.label, p.language)
            out += [
                '  <question type="shortanswer">',
                f"    <name><text>{name}</text></name>",
                f'    <questiontext format="markdown"><text>{_cdata(text)}</text>{files}</questiontext>',
                f'    <generalfeedback format="markdown"><text>{_cdata(general)}</text>{general_files}</generalfeedback>',
                "    <defaultgrade>1</defaultgrade>",
                "    <usecase>1</usecase>",
                f'    <answer fraction="100"><text>{escape(str(a.value))}</text><feedback><text>{ui("right", p.language)}.</text></feedback></answer>',
            ]
            for m in a.mistakes:
                out.append(
                    f'    <answer fraction="0"><text>{escape(str(m.value))}</text>'
                    f"<feedback>{_cdata(_moodle_math(m.feedback))}</feedback></answer>"
                )
            out += [_tags(p), "  </question>"]
        else:
            parts = [statement, ""]
            for a in p.answers:
                parts.append(f"{_prompt(a, p.language)}: {_cloze(a, p.language)}")
                parts.append("")
            out += [
                '  <question type="cloze">',
                f"    <name><text>{name}</text></name>",
                f'    <questiontext format="markdown"><text>{_cdata(chr(10).join(parts))}</text>{files}</questiontext>',
                f'    <generalfeedback format="markdown"><text>{_cdata(general)}</text>{general_files}</generalfeedback>',
                _tags(p),
                "  </question>",
            ]
    out.append("</quiz>")
    return "\n".join(out) + "\n"


def _cloze(a: Answer, language: str = "en") -> str:
    if a.unit == "text":
        options = [f"%100%{_cloze_escape(str(a.value))}#{ui('right', language)}"]
        options += [f"%0%{_cloze_escape(str(m.value))}#{_cloze_escape(m.feedback)}" for m in a.mistakes]
        return "{1:SHORTANSWER:" + "~".join(options) + "}"
    _, scale = entry_unit(a)
    value = (a.number or 0.0) / scale
    options = [f"%100%{_num(value)}:{_tolerance(a, value)}#{ui('right', language)}"]
    for m in a.mistakes:
        wrong = float(as_expr(m.value)) / scale
        options.append(f"%0%{_num(wrong)}:{_tolerance(a, wrong)}#{_cloze_escape(m.feedback)}")
    return "{1:NUMERICAL:" + "~".join(options) + "}"


# -- writing a set ------------------------------------------------------------------------------------------


def figure_files(problems: Sequence[Problem]) -> dict[str, str]:
    """Every figure of the set as ``{file name: SVG text}``, in problem order: what goes in ``figures/``
    next to the Markdown pages (whose image links point there)."""
    return {name: fig.svg for p in problems for name, fig in p.figures}


def set_files(
    problems: Sequence[Problem],
    *,
    formats: Sequence[str] = FORMATS,
    seed: int | None = None,
    title: str = "Problem set",
    solutions: bool = False,
) -> dict[str, str]:
    """The files of a set in each format, as ``{relative path: text}`` (nothing is written).

    Raises:
        UsageError: an unknown format.
    """
    contents: dict[str, str] = {}
    for fmt in formats:
        if fmt == "md":
            contents["problems.md"] = to_markdown(problems, title=title, solutions=solutions)
            contents["answer-key.md"] = answer_key_markdown(problems, title=f"{title}: answer key")
            for name, svg in figure_files(problems).items():
                contents[f"{FOLDER}/{name}"] = svg
        elif fmt == "json":
            contents["problems.json"] = json.dumps(to_json(problems, seed=seed), indent=2, ensure_ascii=False) + "\n"
            contents["problems.schema.json"] = json.dumps(schema(), indent=2) + "\n"
        elif fmt == "moodle":
            contents["problems.moodle.xml"] = to_moodle(problems, category=f"symshard/{title}")
        else:
            raise UsageError(f"unknown format '{fmt}'", hint="use md, json or moodle (or all)")
    return contents


def write_set(
    problems: Sequence[Problem],
    out: Path | str,
    *,
    formats: Sequence[str] = FORMATS,
    seed: int | None = None,
    title: str = "Problem set",
    solutions: bool = False,
    force: bool = False,
) -> list[Path]:
    """Write the set in each format under ``out`` and return the files written.

    Files: ``problems.md`` and ``answer-key.md`` with the figures they show in
    ``figures/`` (md), ``problems.json`` and ``problems.schema.json`` (json),
    ``problems.moodle.xml`` (moodle). JSON and Moodle XML carry their figures inside.
    The folder is written as :class:`~symshard.outputs.OutputFolder` writes: a folder
    holding files symshard did not write is refused unless ``force``, such files are
    never overwritten or deleted, and the files of the set this one replaces (its
    figures, say) are removed.

    Raises:
        UsageError: an unknown format.
        OutputError: ``out`` holds files symshard did not write (without ``force``), or
            cannot be written.
    """
    contents = set_files(problems, formats=formats, seed=seed, title=title, solutions=solutions)
    folder = OutputFolder.open(out, "symshard problems generate", force=force)
    folder.write_all(dict(contents))
    return list(folder.finish().written)

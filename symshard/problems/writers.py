"""Problem sets as files: Markdown, JSON, Moodle XML, QTI for Canvas and others, PDF and PrairieLearn.

All writers take the same list of :class:`~symshard.problems.problem.Problem`, so a
student set, its answer key and every platform's export hold the same variants.
Each format *produces* its files as a mapping ``{relative path: text or bytes}``
(:func:`export`; zip packages and PDFs are built in memory), and one small function,
:func:`write_files`, puts a mapping on disk; :func:`write_set` does both.

* Markdown: a student set (statement, collapsible hints; with ``solutions=True``
  also a collapsible worked solution, for self-study pages) and an instructor
  answer key (every answer with its tolerance, the common mistakes and the
  worked solution). Collapsible blocks use the ``??? type "title"`` syntax of
  ``pymdownx.details``, which MkDocs' successors read too.
* JSON: one object with the set's seed and one record per problem (DESIGN's
  keys); :func:`schema` returns the JSON Schema shipped with the package.
* Moodle XML (:mod:`~symshard.problems.moodle`), QTI 1.2 for Canvas and QTI 2.1
  (:mod:`~symshard.problems.qti`), a PDF student sheet and answer key typeset with
  Typst (:mod:`~symshard.problems.pdf`) and PrairieLearn question folders
  (:mod:`~symshard.problems.prairielearn`).

Figures (see :mod:`~symshard.problems.figures`) stay Markdown image links to
``figures/<name>.svg`` in the Markdown exports, and the ``md`` format writes the
files there; the JSON carries each figure's SVG text; the other formats embed them.

Examples:
    >>> from symshard.problems import family, variant
    >>> files = export([variant(family("allgather-time"), 1)], "md")
    >>> sorted(files)
    ['answer-key.md', 'figures/allgather-time-1-1.svg', 'problems.md']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path

from .. import __version__
from ..algebra.units import sig
from ..errors import UsageError
from ..i18n import ui
from ..messages import say
from ..outputs.folder import OutputFolder, Written
from ..report.markdown import check_markdown
from .answering import entry_unit, value_markdown
from .figures import FOLDER
from .moodle import to_moodle
from .problem import Problem

__all__ = [
    "FORMATS",
    "answer_key_markdown",
    "answer_table",
    "check_texts",
    "entry_unit",
    "export",
    "figure_files",
    "pdf_names",
    "planned",
    "schema",
    "table_cell",
    "to_json",
    "to_markdown",
    "to_moodle",
    "write_files",
    "write_set",
    "zip_files",
]

FORMATS = ("md", "json", "moodle", "qti12", "qti21", "pdf", "prairielearn")
"""Every format, in the order ``--format all`` writes them."""


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


def table_cell(text: str) -> str:
    """Text as one cell of a Markdown table: a ``|`` (as in ``|X|``, a mesh axis's size) would end the cell,
    so it is escaped, ``\\|``, which every table reader (GFM, Python-Markdown, markdown-it) reads as ``|``.

    Examples:
        >>> table_cell("the largest TP degree |Y|")
        'the largest TP degree \\\\|Y\\\\|'
    """
    return " ".join(text.replace("|", "\\|").split())


def answer_table(p: Problem) -> str:
    """The answers as a table, headed in the problem's language."""
    lang = p.language
    lines = [f"| {ui('answer', lang)} | {ui('value', lang)} | {ui('tolerance', lang)} |", "| --- | --- | --- |"]
    for a in p.answers:
        tol = ui("exact", lang) if a.rel_tol == 0 else f"±{sig(a.rel_tol * 100, 3)}%"
        lines.append(f"| {table_cell(a.label)} | {table_cell(value_markdown(a))} | {tol} |")
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
                out.append(f"- {a.label} = {value_markdown(a, m.value)}{colon}{m.feedback}")
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


# -- writing a set ------------------------------------------------------------------------------------------


def figure_files(problems: Sequence[Problem]) -> dict[str, str]:
    """Every figure of the set as ``{file name: SVG text}``, in problem order: what goes in ``figures/``
    next to the Markdown pages (whose image links point there)."""
    return {name: fig.svg for p in problems for name, fig in p.figures}


Files = dict[str, str | bytes]
"""What a format produces: ``{path relative to the output folder: text or bytes}``."""


Groups = Sequence[Sequence[Problem]]
"""A set's variants: for each problem, its variants, the problem itself first (see
:func:`~symshard.problems.engine.variants_of`)."""


def _md(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    out: Files = {
        "problems.md": to_markdown(problems, title=title, solutions=solutions),
        "answer-key.md": answer_key_markdown(problems, title=ui("answer_key_title", _language(problems), title=title)),
    }
    out.update({f"{FOLDER}/{name}": svg for name, svg in figure_files(problems).items()})
    return out


def _json(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    return {
        "problems.json": json.dumps(to_json(problems, seed=seed), indent=2, ensure_ascii=False) + "\n",
        "problems.schema.json": json.dumps(schema(), indent=2) + "\n",
    }


def _moodle(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    return {"problems.moodle.xml": to_moodle(problems, category=f"symshard/{title}", variants=groups)}


def _qti12(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    from .qti import to_qti12

    return {"problems.qti12.zip": to_qti12(problems, title=title, variants=groups)}


def _qti21(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    from .qti import to_qti21

    return {"problems.qti21.zip": to_qti21(problems, title=title, variants=groups)}


def pdf_names(versions: int) -> list[tuple[str, str]]:
    """The PDFs of each version of the sheet: ``(sheet, key)``; one version is ``problems.pdf`` and
    ``answer-key.pdf``, N versions ``problems-1.pdf`` and ``answer-key-1.pdf`` to ``problems-N.pdf``.

    Examples:
        >>> pdf_names(1), pdf_names(2)[1]
        ([('problems.pdf', 'answer-key.pdf')], ('problems-2.pdf', 'answer-key-2.pdf'))
    """
    if versions <= 1:
        return [("problems.pdf", "answer-key.pdf")]
    return [(f"problems-{k}.pdf", f"answer-key-{k}.pdf") for k in range(1, versions + 1)]


def _pdf(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    from .pdf import answer_key_pdf, student_pdf

    key_title = ui("answer_key_title", _language(problems), title=title)
    versions = min((len(g) for g in groups), default=1)
    out: Files = {}
    for k, (sheet, key) in enumerate(pdf_names(versions)):
        chosen = [g[k] for g in groups]
        version = (k + 1, versions) if versions > 1 else None
        out[sheet] = student_pdf(chosen, title=title, seed=seed, version=version)
        out[key] = answer_key_pdf(chosen, title=key_title, seed=seed, version=version)
    return out


def _prairielearn(problems: Sequence[Problem], seed: int | None, title: str, solutions: bool, groups: Groups) -> Files:
    from .prairielearn import to_prairielearn

    exported = to_prairielearn(problems, title=title, variants=groups)
    return {f"prairielearn/{path}": data for path, data in exported.items()}


_PRODUCERS: Mapping[str, Callable[[Sequence[Problem], int | None, str, bool, Groups], Files]] = {
    "md": _md,
    "json": _json,
    "moodle": _moodle,
    "qti12": _qti12,
    "qti21": _qti21,
    "pdf": _pdf,
    "prairielearn": _prairielearn,
}

_PLANNED = {
    "md": ("problems.md", "answer-key.md"),
    "json": ("problems.json", "problems.schema.json"),
    "moodle": ("problems.moodle.xml",),
    "qti12": ("problems.qti12.zip",),
    "qti21": ("problems.qti21.zip",),
    "pdf": ("problems.pdf", "answer-key.pdf"),
    "prairielearn": ("prairielearn",),
}


def zip_files(produced: Mapping[str, str | bytes]) -> bytes:
    """A mapping of files as one zip (sorted, with a fixed date, so the same files give the same bytes)."""
    from .qti import zip_files as _zip

    return _zip({k: v.encode("utf-8") if isinstance(v, str) else v for k, v in produced.items()})


def _language(problems: Sequence[Problem]) -> str:
    return problems[0].language if problems else "en"


def _check_formats(formats: Sequence[str]) -> None:
    for fmt in formats:
        if fmt not in _PRODUCERS:
            raise UsageError(
                say("unknown format '{name}'", name=fmt), hint=say("use {formats} (or all)", formats=", ".join(FORMATS))
            )


def planned(formats: Sequence[str], variants: int = 1) -> list[str]:
    """The files and folders the formats write at the top of the output folder, known before the
    set is made (``prairielearn`` is a folder; the figures go in ``figures/``; with ``variants``
    above 1, the PDFs are one sheet and one key per version, see :func:`pdf_names`).

    Raises:
        UsageError: an unknown format.
    """
    _check_formats(formats)
    out = []
    for fmt in formats:
        if fmt == "pdf":
            out += [name for pair in pdf_names(variants) for name in pair]
        else:
            out += _PLANNED[fmt]
    return out


def check_texts(problems: Sequence[Problem]) -> None:
    """Refuse, before any export starts, a problem whose Markdown the exports do not take (too long, or
    nested too deep: :func:`~symshard.report.markdown.check_markdown`), naming the problem and the text.

    Raises:
        TooLargeError: a text too long or too deep.
    """
    for p in problems:
        check_markdown(p.statement, say("the statement of problem {problem}", problem=p.id))
        check_markdown(p.solution, say("the solution of problem {problem}", problem=p.id))
        for k, hint in enumerate(p.hints, 1):
            check_markdown(hint, say("hint {k} of problem {problem}", k=k, problem=p.id))
        for a in p.answers:
            for m in a.mistakes:
                check_markdown(m.feedback, say("the feedback on {answer} of problem {problem}", answer=a.name,
                                               problem=p.id))  # fmt: skip


def export(
    problems: Sequence[Problem],
    formats: str | Sequence[str] = FORMATS,
    *,
    seed: int | None = None,
    title: str = "Problem set",
    solutions: bool = False,
    variants: Groups | None = None,
) -> Files:
    """The set's files in each of ``formats``, as ``{relative path: text or bytes}``, nothing written.

    With ``variants`` (for each problem its variants, the problem itself first, as
    :func:`~symshard.problems.engine.variants_of` draws them), the platforms draw one variant of each
    problem per student (a Moodle category and a random question, a Canvas question group, a QTI 2.1
    section selecting one, the variants of a PrairieLearn question) and the PDF is one sheet and key per
    version; the Markdown and JSON hold the set itself.

    Raises:
        UsageError: an unknown format, a missing extra (markdown-it-py, latex2mathml, typst) or CJK font, or
            variants that are not the set's.
        TooLargeError: a problem's text too long or nested too deep for the exports (:func:`check_texts`).
    """
    chosen = [formats] if isinstance(formats, str) else list(formats)
    _check_formats(chosen)
    groups = _groups(problems, variants)
    check_texts([p for group in groups for p in group])
    out: Files = {}
    for fmt in chosen:
        out.update(_PRODUCERS[fmt](problems, seed, title, solutions, groups))
    return out


def _groups(problems: Sequence[Problem], variants: Groups | None) -> list[tuple[Problem, ...]]:
    if variants is None:
        return [(p,) for p in problems]
    groups = [tuple(g) for g in variants]
    if [g[0] if g else None for g in groups] != list(problems) or len({len(g) for g in groups}) > 1:
        raise UsageError(
            say("the variants given are not the set's: each problem needs the same number of variants, itself first"),
            hint=say("draw them with symshard.problems.engine.variants_of(problems, seed, n)"),
        )
    return groups


def write_files(out: Path | str, produced: Mapping[str, str | bytes], *, force: bool = False) -> Written:
    """Write ``produced`` under the folder ``out`` as :class:`~symshard.outputs.folder.OutputFolder` writes, and
    say what was written, removed and kept (iterating over the answer gives the files written).

    A folder holding files symshard did not write is refused unless ``force``; such files are
    never overwritten or deleted; the files of the set this one replaces are removed when symshard
    proves it wrote them there, and kept (and listed) otherwise.

    Raises:
        OutputError: ``out`` holds files symshard did not write (without ``force``), a path
            would leave ``out``, or a file cannot be written.
    """
    folder = OutputFolder.open(out, "symshard problems generate", force=force)
    folder.write_all(dict(produced))
    return folder.finish()


def write_set(
    problems: Sequence[Problem],
    out: Path | str,
    *,
    formats: Sequence[str] = FORMATS,
    seed: int | None = None,
    title: str = "Problem set",
    solutions: bool = False,
    force: bool = False,
    variants: Groups | None = None,
) -> Written:
    """Write the set in each format under ``out`` (see :func:`write_files`); iterating over the answer gives
    the files written.

    Files: ``problems.md`` and ``answer-key.md`` with their figures in ``figures/`` (md),
    ``problems.json`` and ``problems.schema.json`` (json), ``problems.moodle.xml``
    (moodle), ``problems.qti12.zip`` (qti12, for Canvas), ``problems.qti21.zip`` (qti21),
    ``problems.pdf`` and ``answer-key.pdf`` (pdf; one pair per version with ``variants``) and one
    question folder per problem under ``prairielearn/`` (prairielearn). ``variants``: see :func:`export`.

    Raises:
        UsageError: an unknown format or a missing extra.
        OutputError: ``out`` holds files symshard did not write (without ``force``), or cannot be written.
    """
    _check_formats(formats)
    OutputFolder.open(out, "symshard problems generate", force=force, create=False)  # refuse before the exports
    produced = export(problems, formats, seed=seed, title=title, solutions=solutions, variants=variants)
    return write_files(out, produced, force=force)

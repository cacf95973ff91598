"""What ``symshard problems`` prints: the families, one problem, a check of answers, a generated set.

A problem's own text (title, statement, hints, solution, feedback) is already in its language; the
words around it here are the command's, said in that language when symshard speaks it and in English
otherwise (a family may be written in a language symshard's catalogue does not have).

Examples:
    >>> from symshard.problems import families
    >>> text, data = families_report(families())
    >>> text.splitlines()[0].split()
    ['family', 'difficulty', 'title']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..algebra.units import sig
from ..i18n import LANGUAGES, keyed, sentence
from ..report.text import table

if TYPE_CHECKING:
    from .family import Family
    from .problem import Answer, Grade, Problem

ENGLISH: dict[str, str] = {
    "cli.check.right": "{name}: right ({value})",
    "cli.check.wrong": "{name}: not right ({value})",
    "cli.check.total": "{right} of {total} right",
    "cli.generated": "{count} {count:problem|problems} from {families} {families:family|families}, seed {seed}:",
    "cli.figures": "{folder}/ ({count} {count:figure|figures})",
    "cli.figure": "{folder}/ (1 figure)",
    "cli.kept": "kept {count} stale {count:file|files} of an earlier set, edited since or not provably symshard's (delete them "
    "yourself if they are not yours):",
    "cli.questions": "{folder}/ ({count} PrairieLearn {count:question|questions} and an assessment)",
    "cli.problem_set_title": "Problem set",
    "cli.families.head": "family",
    "cli.families.columns": "difficulty  title",
    "cli.families.count": "{count} {count:family|families}",
}
"""The English of this module's words by key; other languages are in the catalogue."""


def _say(key: str, language: str, **values: object) -> str:
    return keyed(ENGLISH, key, language, **values)


def shown_language(language: str) -> str:
    """The language of the command's own words: a problem's language if symshard speaks it.

    Examples:
        >>> shown_language("zh"), shown_language("fr")
        ('zh', 'en')
    """
    return language if language in LANGUAGES else "en"


def families_report(known: Mapping[str, Family], language: str = "en") -> tuple[str, dict]:
    """The families by difficulty, then name: difficulty and title (in ``language`` when the family is
    written in it), as text and data."""
    from .family import DIFFICULTIES

    rows = [(_say("cli.families.head", language), _say("cli.families.columns", language))]
    data = []
    by_difficulty = sorted(known.items(), key=lambda item: (DIFFICULTIES.index(item[1].difficulty), item[0]))
    for name, fam in by_difficulty:
        title = fam.title if language == "en" or language not in fam.languages else fam.title_in(language)
        rows.append((name, f"{fam.difficulty:<10}  {title}"))
        data.append({"name": name, "title": fam.title, "difficulty": fam.difficulty, "tags": list(fam.tags),
                     "objective": fam.objective, "answers": [a.name for a in fam.answers]})  # fmt: skip
        if language != "en":
            data[-1][f"title_{language}"] = title
    return table(rows) + "\n" + _say("cli.families.count", language, count=len(known)), {"families": data}


def problem_text(p: Problem) -> str:
    """One problem to read in a terminal: statement, hints, solution, answers and the mistakes each
    answer recognises, with the feedback it gives."""
    from ..i18n import ui
    from .problem import show_value

    lang = p.language
    colon = "：" if lang == "zh" else ": "  # a full-width colon carries its own space
    lines = [f"# {p.title}  ({p.id}, {p.family.difficulty})", "", p.statement.strip(), ""]
    for i, h in enumerate(p.hints, 1):
        lines += [f"{ui('hint', lang, k=i)}{colon}{h.strip()}", ""]
    lines += [
        f"{ui('solution', lang)}{colon.strip()}",
        "",
        p.solution.strip(),
        "",
        f"{ui('answers', lang)}{colon.strip()}",
    ]
    for a in p.answers:
        lines.append(f"  {a.label}{colon}{a.show}" + (f"  (±{sig(a.rel_tol * 100, 3)}%)" if a.rel_tol else ""))
        for m in a.mistakes:
            lines.append(f"    {ui('mistake', lang)} {show_value(m.value, a.unit)}{colon}{m.feedback}")
    return "\n".join(lines)


def check_report(p: Problem, graded: Sequence[tuple[Answer, str, Grade]]) -> tuple[str, dict]:
    """Each given answer of ``p`` (the answer, the value given, its grade) right or not, with the
    feedback of a wrong one, then the count, as text and data."""
    lang = shown_language(p.language)
    lines, results = [], []
    for answer, value, grade in graded:
        verdict = "cli.check.right" if grade.correct else "cli.check.wrong"
        lines.append(_say(verdict, lang, name=answer.name, value=value))
        if not grade.correct:
            lines.append(f"  {sentence(grade.feedback, lang)}")
        results.append({"name": answer.name, "given": value, "correct": grade.correct, "feedback": grade.feedback})
    right = sum(grade.correct for _, _, grade in graded)
    lines.append(_say("cli.check.total", lang, right=right, total=len(results)))
    return "\n".join(lines), {"id": p.id, "results": results, "right": right, "total": len(results)}


def problem_set_title(language: str) -> str:
    """The title of a generated set when none is given.

    Examples:
        >>> problem_set_title("en")
        'Problem set'
    """
    return _say("cli.problem_set_title", shown_language(language))


def generated_report(
    problems: Sequence[Problem],
    written: Sequence[Path],
    out: Path,
    seed: int,
    language: str = "en",
    kept: Sequence[Path] = (),
) -> tuple[str, dict]:
    """The files a generated set wrote into ``out`` (figures and PrairieLearn questions counted, not
    listed), and the stale files of an earlier set left in place (``kept``), as text and data."""
    lang = shown_language(language)
    families_used = sorted({p.family.name for p in problems})
    figures = [path for path in written if path.parent == out / "figures"]
    questions = [path for path in written if path.is_relative_to(out / "prairielearn")]
    shown = [f"  {path}" for path in written if path not in figures and path not in questions]
    if figures:
        key = "cli.figure" if len(figures) == 1 else "cli.figures"
        shown.append("  " + _say(key, lang, folder=figures[0].parent, count=len(figures)))
    if questions:
        shown.append("  " + _say("cli.questions", lang, folder=out / "prairielearn", count=len(problems)))
    if kept:
        shown.append(_say("cli.kept", lang, count=len(kept)))
        shown += [f"  {path}" for path in kept]
    head = _say("cli.generated", lang, count=len(problems), families=len(families_used), seed=seed)
    data = {"count": len(problems), "seed": seed, "families": families_used, "files": [str(p) for p in written],
            "ids": [p.id for p in problems]}  # fmt: skip
    if kept:
        data["kept"] = [str(p) for p in kept]
    return head + "\n" + "\n".join(shown), data

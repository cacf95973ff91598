"""Words in more than one language: the project's glossary and the few interface words around problems.

The glossary (``glossary.toml`` beside this file) lists every term symshard uses with its
Simplified Chinese form, following the chapter's Chinese edition (分片, 收缩维度, 情况 1–4, ...),
and the wordings to avoid so a problem set reads with one voice. The interface words
(``Hint``, ``Solution``, the answer table's headings) are what writers and the CLI put around a
problem's own text. Nothing here is imported by ``import symshard``.

Examples:
    >>> term("contracting_dimension", "zh")
    '收缩维度'
    >>> ui("hint", "zh", k=2)
    '提示 2'
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib.resources import files

from ..errors import UsageError, did_you_mean

__all__ = ["LANGUAGES", "glossary", "term", "ui"]

LANGUAGES = ("en", "zh")
"""The languages symshard writes problems and explanations in."""

_UI = {
    "hint": {"en": "Hint {k}", "zh": "提示 {k}"},
    "solution": {"en": "Solution", "zh": "解答"},
    "worked_solution": {"en": "Worked solution", "zh": "详细解答"},
    "answers": {"en": "Answers", "zh": "答案"},
    "answer": {"en": "answer", "zh": "答案"},
    "value": {"en": "value", "zh": "数值"},
    "tolerance": {"en": "tolerance", "zh": "容差"},
    "exact": {"en": "exact", "zh": "精确"},
    "objective": {"en": "Objective", "zh": "学习目标"},
    "mistake": {"en": "mistake", "zh": "常见错误"},
    "answer_key": {"en": "answer key", "zh": "答案"},
    "right": {"en": "Right", "zh": "正确"},
    "easy": {"en": "easy", "zh": "简单"},
    "medium": {"en": "medium", "zh": "中等"},
    "hard": {"en": "hard", "zh": "困难"},
}


@lru_cache(maxsize=1)
def glossary() -> dict[str, dict[str, object]]:
    """Every glossary entry by key: ``{'en': ..., 'zh': ..., 'avoid': [...]}``."""
    text = files("symshard.i18n").joinpath("glossary.toml").read_text(encoding="utf-8")
    return dict(tomllib.loads(text)["terms"])


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise UsageError(f"unknown language '{language}'", hint=did_you_mean(language, list(LANGUAGES)))


def term(key: str, language: str) -> str:
    """A glossary term in ``language``.

    Raises:
        UsageError: an unknown term or language.
    """
    _check_language(language)
    entries = glossary()
    if key not in entries:
        raise UsageError(f"no glossary term '{key}'", hint=did_you_mean(key, sorted(entries)))
    return str(entries[key][language])


def ui(key: str, language: str, **values: object) -> str:
    """An interface word or phrase in ``language`` (English when the language has none)."""
    words = _UI[key]
    return words.get(language, words["en"]).format(**values)

"""Words in more than one language: the glossary, interface words, and explanations.

The glossary (``glossary.toml`` beside this file) lists every term symshard uses with its
Simplified Chinese form, following the chapter's Chinese edition (分片, 收缩维度, 情况 1–4, ...),
and the wordings to avoid so a problem set reads with one voice. The interface words
(``Hint``, ``Solution``, the answer table's headings) are what writers and the CLI put around a
problem's own text. :func:`symshard.explain` (in :mod:`symshard.i18n.explain`) says what a
case, a strategy or an error means in either language, from the catalogue in
:mod:`symshard.i18n.catalog`.

Nothing here is imported by ``import symshard``, and nothing here reads a data file before
it is needed: English needs no catalogue at all.

Examples:
    >>> term("contracting_dimension", "zh")
    '收缩维度'
    >>> ui("hint", "zh", k=2)
    '提示 2'
    >>> language_from(None, {"SYMSHARD_LANG": "zh"})
    'zh'
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from ..errors import UsageError, did_you_mean
from ..messages import fill, say
from .languages import LANGUAGES, check_language

__all__ = [
    "ENVIRONMENT",
    "LANGUAGES",
    "glossary",
    "keyed",
    "language_from",
    "render",
    "sentence",
    "term",
    "translate",
    "ui",
]

ENVIRONMENT = "SYMSHARD_LANG"
"""The environment variable that sets the language when ``--lang`` (or ``lang=``) does not."""

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
    "answer_key_title": {"en": "{title}: answer key", "zh": "{title}：答案"},  # Chinese takes a full-width colon
    "labelled": {"en": "{label}: {value}", "zh": "{label}：{value}"},
    "right": {"en": "Right", "zh": "正确"},
    "easy": {"en": "easy", "zh": "简单"},
    "medium": {"en": "medium", "zh": "中等"},
    "hard": {"en": "hard", "zh": "困难"},
}


@lru_cache(maxsize=1)
def glossary() -> dict[str, dict[str, object]]:
    """Every glossary entry by key: ``{'en': ..., 'zh': ..., 'avoid': [...]}``."""
    import tomllib
    from importlib.resources import files

    text = files("symshard.i18n").joinpath("glossary.toml").read_text(encoding="utf-8")
    return dict(tomllib.loads(text)["terms"])


def term(key: str, language: str) -> str:
    """A glossary term in ``language``.

    Raises:
        UsageError: an unknown term or language.
    """
    check_language(language)
    entries = glossary()
    if key not in entries:
        raise UsageError(say("no glossary term '{name}'", name=key), hint=did_you_mean(key, sorted(entries)))
    return str(entries[key][language])


def ui(key: str, language: str, **values: object) -> str:
    """An interface word or phrase in ``language`` (English when the language has none)."""
    words = _UI[key]
    return fill(words.get(language, words["en"]), **values)


def keyed(english: Mapping[str, str], key: str, language: str, **values: object) -> str:
    """``english[key]`` with ``values`` filled in; in another language, the catalogue's text of ``key``.

    Each module keeps the English of its own words (a dict by key); the catalogue is read only
    for another language.
    """
    if language == "en":
        return fill(english[key], **values)
    from .catalog import text

    return text(key, language, **values)


def sentence(english: str, language: str) -> str:
    """A sentence the library wrote (a :class:`~symshard.messages.Message`), in ``language``; the
    catalogue is read only for a language other than English."""
    if language == "en":
        return str(english)
    from .catalog import render

    return render(english, language)


def language_from(value: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The language to use: ``value`` if given, else ``$SYMSHARD_LANG``, else English.

    Raises:
        UsageError: a language symshard does not speak (naming where it came from).
    """
    if value is None:
        import os

        chosen = (os.environ if environ is None else environ).get(ENVIRONMENT, "").strip()
        if not chosen:
            return "en"
        if chosen not in LANGUAGES:
            raise UsageError(
                say("unknown language '{name}' in ${variable}", name=chosen, variable=ENVIRONMENT),
                hint=say(
                    "{suggestion}, or unset {variable}",
                    suggestion=did_you_mean(chosen, list(LANGUAGES)),
                    variable=ENVIRONMENT,
                ),
            )
        return chosen
    check_language(value)
    return value


def __getattr__(name: str) -> object:
    # the catalogue loads on first use (symshard.explain is the explainer)
    if name in ("render", "translate"):
        from . import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module 'symshard.i18n' has no attribute {name!r}")

"""How a model, a training run and a serving step show themselves: ``print()`` and notebook tables.

The rows are :mod:`symshard.report.models`' own lines (what ``symshard model`` prints), cut into a
table for a notebook, in the same language; ``print()`` of a training run or a serving step gives the
command's text.

Examples:
    >>> from symshard.models.transformer import model
    >>> model_html(model("llama3-8b")).startswith("<table><caption>LLaMA-3 8B")
    True
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from ..algebra.mathtext import as_expr
from ..algebra.units import format_bytes, pretty
from ..i18n import keyed
from .models import ENGLISH, model_text, say_model, serving_report, training_report

__all__ = ["memory_html", "model_html", "serving_html", "serving_text", "training_html", "training_text"]


def _html_table(title: str, rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                   f"{html.escape(v)}</td></tr>" for k, v in rows)  # fmt: skip
    return f"<table><caption>{html.escape(title)}</caption>{body}</table>"


def _rows(text: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.splitlines()[1:]:
        key, _, value = line.partition("  ")
        rows.append((key.strip(), value.strip()))
    return rows


def model_html(m, *, language: str = "en") -> str:
    """A notebook's table of the model, its words in ``language``."""
    text = model_text(m, language)
    return _html_table(text.splitlines()[0], _rows(text))


def _kind(kind: str, language: str) -> str:
    """A kind of training memory (``weights``, ..., ``total``) in ``language``: the words of ``symshard layer``'s
    memory table."""
    from .layers import ENGLISH as LAYER_WORDS

    key = "model.row.total" if kind == "total" else f"cli.memory.{kind}"
    return keyed({**LAYER_WORDS, **ENGLISH}, key, language)


def memory_html(mem, *, language: str = "en") -> str:
    """A notebook's table of training memory by kind."""
    rows = [
        (_kind(k, language), format_bytes(v) if as_expr(v).is_number else pretty(v)) for k, v in mem.kinds().items()
    ]
    title = say_model("model.memory_head", language, model=mem.model.label, optimizer=mem.optimizer, policy=mem.policy)
    return _html_table(title, rows)


def training_text(run, *, language: str = "en") -> str:
    """A training run as text (what ``print(run)`` shows): the model, the run, its memory."""
    return training_report(run, (), (), None, None, language)[0]


def serving_text(s, *, language: str = "en") -> str:
    """Serving a model as text (what ``print(serving)`` shows)."""
    return serving_report(s, None, None, language)[0]


def training_html(run, *, language: str = "en") -> str:
    """A notebook's table of a training run."""
    text, _ = training_report(run, (), (), None, None, language)
    lines = "\n".join(text.splitlines()[len(model_text(run.model, language).splitlines()) :])
    return _html_table(lines.splitlines()[0], _rows(lines))


def serving_html(s, *, language: str = "en") -> str:
    """A notebook's table of serving a model."""
    text, _ = serving_report(s, None, None, language)
    lines = "\n".join(text.splitlines()[len(model_text(s.model, language).splitlines()) :])
    return _html_table(lines.splitlines()[0], _rows(lines))

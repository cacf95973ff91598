"""Problem text as HTML for course platforms, with the math left as TeX for MathJax.

Moodle, Canvas, QTI players and PrairieLearn show HTML and typeset ``\\(...\\)`` and
``\\[...\\]`` with MathJax; none of them can be trusted with Markdown (Moodle's own
Markdown filter turns ``_{Y}`` into emphasis). So symshard renders the templates'
Markdown itself, with markdown-it-py (CommonMark plus tables), after taking the math
out: each ``$...$`` and ``$$...$$`` is replaced by a placeholder the Markdown parser
leaves alone, and put back afterwards as ``\\(...\\)`` or ``\\[...\\]`` with only
``&``, ``<`` and ``>`` escaped, as HTML needs. Figure links ``![alt](figures/name.svg)``
become ``<img>`` elements whose address each platform decides (``@@PLUGINFILE@@/`` in
Moodle, ``$IMS-CC-FILEBASE$/`` in Canvas, a data URI in PrairieLearn).

markdown-it-py comes with the ``docs`` extra; it is imported only when HTML is made.

Examples:
    >>> html, used = to_html("Each chip holds $\\\\frac{I}{|X|}$ rows:\\n\\n- one\\n- two")
    >>> print(html)
    <p>Each chip holds \\(\\frac{I}{|X|}\\) rows:</p>
    <ul>
    <li>one</li>
    <li>two</li>
    </ul>
    >>> to_html("$a < b$ and **bold**", inline=True)[0]
    '\\\\(a &lt; b\\\\) and <strong>bold</strong>'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from html import escape
from typing import Any

from ..errors import UsageError
from ..messages import say

__all__ = ["MATH", "markdown_parser", "split_math", "to_html"]

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$", re.S)
"""A math span of the templates' Markdown: ``$$display$$`` (group 1) or ``$inline$`` (group 2)."""

_FIGURE = re.compile(r"figures/([A-Za-z0-9_.-]+\.svg)\Z")
_SLOT = "\ue000{}\ue001"  # private-use characters: Markdown leaves them alone, no text contains them
_SLOT_BACK = re.compile("\ue000(\\d+)\ue001")


def split_math(markdown: str) -> tuple[str, list[tuple[str, bool]]]:
    """``markdown`` with every math span replaced by a numbered placeholder; and the spans,
    each as ``(tex, display)``.

    Examples:
        >>> text, spans = split_math("a $x_1$ and $$y$$")
        >>> spans
        [('x_1', False), ('y', True)]
    """
    spans: list[tuple[str, bool]] = []

    def keep(m: re.Match) -> str:
        display = m.group(1) is not None
        spans.append(((m.group(1) if display else m.group(2)).strip(), display))
        return _SLOT.format(len(spans) - 1)

    return MATH.sub(keep, markdown), spans


@lru_cache(maxsize=1)
def markdown_parser() -> Any:
    """The Markdown parser every export shares: CommonMark plus tables, raw HTML off.

    Raises:
        UsageError: markdown-it-py is not installed.
    """
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        raise UsageError(
            say("the HTML exports (Moodle, QTI, PrairieLearn) need markdown-it-py, which is not installed"),
            hint=say("install symshard with the docs extra: python -m pip install 'symshard[docs]'"),
        ) from None
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def to_html(
    markdown: str,
    src: Callable[[str], str] | None = None,
    *,
    inline: bool = False,
) -> tuple[str, list[str]]:
    """The HTML of ``markdown``, math as ``\\(...\\)``/``\\[...\\]``; and the figure files it shows.

    Args:
        markdown: the templates' Markdown (statement, hint, solution or feedback).
        src: the image address for a figure's file name (default: ``figures/<name>``).
        inline: render one paragraph's content, without the ``<p>`` (for feedback in a line).

    Raises:
        UsageError: markdown-it-py is not installed.
    """
    text, spans = split_math(markdown)
    md = markdown_parser()
    used: list[str] = []
    env: dict[str, Any] = {}
    tokens = md.parseInline(text, env) if inline else md.parse(text, env)
    for token in tokens:
        for child in [token, *(token.children or [])]:
            if child.type != "image":
                continue
            address = str(child.attrGet("src") or "")
            m = _FIGURE.match(address)
            if m:
                if m.group(1) not in used:
                    used.append(m.group(1))
                child.attrSet("src", src(m.group(1)) if src else address)
    html = md.renderer.render(tokens, md.options, env).strip()

    def put_back(m: re.Match) -> str:
        tex, display = spans[int(m.group(1))]
        body = escape(tex, quote=False)
        return f"\\[{body}\\]" if display else f"\\({body}\\)"

    return _SLOT_BACK.sub(put_back, html), used

"""Problem text as HTML for course platforms, the math as TeX for MathJax or as MathML.

Moodle, Canvas and PrairieLearn show HTML and typeset ``\\(...\\)`` and
``\\[...\\]`` with MathJax; most QTI 2.1 players typeset nothing, but QTI 2.1 items may hold
MathML, which browsers render themselves (``to_html(..., math="mathml")``, :func:`mathml`).
None of them can be trusted with Markdown (Moodle's own
Markdown filter turns ``_{Y}`` into emphasis). So symshard renders the templates'
Markdown itself, with markdown-it-py (CommonMark plus tables), after taking the math
out: each ``$...$`` and ``$$...$$`` is replaced by a placeholder the Markdown parser
leaves alone, and put back afterwards as ``\\(...\\)`` or ``\\[...\\]`` with only
``&``, ``<`` and ``>`` escaped, as HTML needs (or as a MathML ``<math>`` element). :func:`to_text`
gives the same text without markup, for a platform that shows feedback as plain text. The placeholders are private-use characters
around a number; the text's own private-use characters of that kind are taken out the same
way and put back as they were, so nothing a family writes can pass for a placeholder. Figure links ``![alt](figures/name.svg)``
become ``<img>`` elements whose address each platform decides (``@@PLUGINFILE@@/`` in
Moodle, ``$IMS-CC-FILEBASE$/`` in Canvas, a data URI in PrairieLearn).

A family writes the Markdown, so what the exports take is bounded (:func:`check_markdown`): at most
:data:`MAX_MARKDOWN` characters a text, lists and quotes no deeper than the parser follows (it drops
what nests deeper, silently), refused with one line before the exports start.

markdown-it-py and latex2mathml come with the ``docs`` extra; they are imported only when HTML or
MathML is made.

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

from ..errors import TemplateError, TooLargeError, UsageError
from ..messages import Message, say

__all__ = [
    "MATH",
    "MAX_MARKDOWN",
    "Span",
    "check_markdown",
    "markdown_parser",
    "markdown_tokens",
    "mathml",
    "put_back",
    "split_math",
    "to_html",
    "to_text",
]

MAX_MARKDOWN = 100_000
"""The most characters one text of a problem (a statement, hint, solution or feedback) may have in the
exports: a few pages of Markdown. Each export reads it again (a set of 3,000 nested list items, 9 MB,
kept ``problems generate --format all`` busy for ten seconds)."""

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$", re.S)
"""A math span of the templates' Markdown: ``$$display$$`` (group 1) or ``$inline$`` (group 2)."""

_FIGURE = re.compile(r"figures/([A-Za-z0-9_.-]+\.svg)\Z")
_SLOT = "\ue000{}\ue001"  # private-use characters: Markdown leaves them alone
_SLOT_BACK = re.compile("\ue000(\\d+)\ue001")
_PIECE = re.compile(MATH.pattern + "|([\ue000\ue001])", re.S)  # math, or a character placeholders are made of

Span = tuple[str, bool | None]
"""A piece taken out of the text: ``(tex, True)`` display math, ``(tex, False)`` inline math, or
``(character, None)``, one of the text's own placeholder characters, to put back as it is."""


def split_math(markdown: str) -> tuple[str, list[Span]]:
    """``markdown`` with every math span, and every character a placeholder is made of, replaced
    by a numbered placeholder; and what each one stands for (see :data:`Span`).

    Examples:
        >>> text, spans = split_math("a $x_1$ and $$y$$")
        >>> spans
        [('x_1', False), ('y', True)]
        >>> own = chr(0xE000) + "0" + chr(0xE001)  # the text's own placeholder characters stand for themselves
        >>> split_math(own + " $x$")[1] == [(chr(0xE000), None), (chr(0xE001), None), ("x", False)]
        True
    """
    spans: list[Span] = []

    def keep(m: re.Match) -> str:
        if m.group(3) is not None:
            spans.append((m.group(3), None))
        else:
            display = m.group(1) is not None
            spans.append(((m.group(1) if display else m.group(2)).strip(), display))
        return _SLOT.format(len(spans) - 1)

    return _PIECE.sub(keep, markdown), spans


def put_back(text: str, spans: list[Span], math: Callable[[str, bool], str], own: Callable[[str], str]) -> str:
    """``text`` with each placeholder of :func:`split_math` replaced: math by ``math(tex, display)``,
    the text's own characters by ``own(character)``.

    Examples:
        >>> text, spans = split_math(chr(0xE000) + "1" + chr(0xE001) + " $x$")
        >>> put_back(text, spans, lambda tex, display: f"[{tex}]", lambda char: "<own>")
        '<own>1<own> [x]'
    """

    def back(m: re.Match) -> str:
        index = int(m.group(1))
        if index >= len(spans):  # Markdown cannot make one, but an export must never fail on it
            return m.group(0)
        tex, display = spans[index]
        return own(tex) if display is None else math(tex, display)

    return _SLOT_BACK.sub(back, text)


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


def check_markdown(markdown: str, what: str | Message) -> None:
    """Refuse Markdown the exports do not take: more than :data:`MAX_MARKDOWN` characters, or lists and
    quotes nested as deep as the parser follows (its ``maxNesting`` levels of blocks; it drops the rest).
    Without markdown-it-py (the Markdown and JSON exports need none) only the length is checked.

    Raises:
        TooLargeError: the text is too long or too deep (``what`` names it).

    Examples:
        >>> check_markdown("- one\\n  - two", "a hint")
        >>> check_markdown("> " * 40 + "deep", "a hint")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        symshard.errors.TooLargeError: a hint nests lists or quotes 20 levels deep or more, past what the exports...
    """
    try:
        markdown_parser()
    except UsageError:
        _check_length(markdown, what)
        return
    markdown_tokens(markdown, what)


def _check_length(markdown: str, what: str | Message) -> None:
    if len(markdown) > MAX_MARKDOWN:
        raise TooLargeError(
            say(
                "{what} is {count} {count:character|characters} of Markdown, more than the exports take ({limit})",
                what=what,
                count=f"{len(markdown):,}",
                limit=f"{MAX_MARKDOWN:,}",
            ),
            hint=say("shorten the family's text"),
        )


def markdown_tokens(
    markdown: str, what: str | Message, *, inline: bool = False, env: dict[str, Any] | None = None
) -> list[Any]:
    """markdown-it's tokens for ``markdown`` (the shared parser's), refused as :func:`check_markdown` says:
    first if it is too long, after parsing if it is too deep.

    Raises:
        TooLargeError: the text is too long or too deep (``what`` names it).
        UsageError: markdown-it-py is not installed.
    """
    _check_length(markdown, what)
    md = markdown_parser()
    tokens = md.parseInline(markdown, env if env is not None else {}) if inline else md.parse(markdown, env)
    deepest = int(md.options.get("maxNesting") or 20)
    if any(t.level >= deepest - 1 for t in tokens):
        raise TooLargeError(
            say(
                "{what} nests lists or quotes {limit} levels deep or more, past what the exports follow",
                what=what,
                limit=deepest,
            ),
            hint=say("flatten the family's lists and quotes"),
        )
    return tokens


_BAR = re.compile(r'<mo(?: stretchy="false")?>&#x0007C;</mo>')


@lru_cache(maxsize=4096)
def mathml(tex: str, display: bool = False) -> str:
    """One LaTeX formula as a MathML ``<math>`` element on one line (``|X|``, a mesh axis's size, as fences).

    Raises:
        TemplateError: LaTeX that the converter cannot read (the message quotes it).
        UsageError: latex2mathml is not installed.

    Examples:
        >>> mathml("x_{1}")
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow><msub><mi>x</mi><mrow><mn>1</mn></mrow></msub></mrow></math>'
    """
    try:
        from latex2mathml.converter import convert
    except ImportError:
        raise UsageError(
            say("MathML needs latex2mathml, which is not installed"),
            hint=say("install symshard with the docs extra: python -m pip install 'symshard[docs]'"),
        ) from None
    try:
        markup = convert(tex.strip(), display="block" if display else "inline")
    except Exception as err:  # the converter raises its own zoo of exception types
        raise TemplateError(
            say("cannot turn the LaTeX '{latex}' into MathML: {why}", latex=tex, why=str(err)),
            hint=say("use the LaTeX that sympy.latex produces, or plain commands like \\frac, \\times, \\text"),
        ) from None
    markup = markup.replace("\n", "")
    # |X| is a pair of fences, not two infix operators with space around them
    return _BAR.sub('<mo fence="true" lspace="0em" rspace="0em">&#x0007C;</mo>', markup)


def to_html(
    markdown: str,
    src: Callable[[str], str] | None = None,
    *,
    inline: bool = False,
    math: str = "tex",
) -> tuple[str, list[str]]:
    """The HTML of ``markdown``, math as ``\\(...\\)``/``\\[...\\]`` (or MathML); and the figure files it shows.

    Args:
        markdown: the templates' Markdown (statement, hint, solution or feedback).
        src: the image address for a figure's file name (default: ``figures/<name>``).
        inline: render one paragraph's content, without the ``<p>`` (for feedback in a line).
        math: ``"tex"`` for MathJax, or ``"mathml"`` for ``<math>`` elements (see :func:`mathml`).

    Raises:
        TooLargeError: Markdown too long or too deep (see :func:`check_markdown`).
        UsageError: markdown-it-py (or, for MathML, latex2mathml) is not installed.
        TemplateError: math that MathML cannot be made of.
    """
    text, spans = split_math(markdown)
    md = markdown_parser()
    used: list[str] = []
    env: dict[str, Any] = {}
    tokens = markdown_tokens(text, say("a text"), inline=inline, env=env)
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

    def as_tex(tex: str, display: bool) -> str:
        body = escape(tex, quote=False)
        return f"\\[{body}\\]" if display else f"\\({body}\\)"

    return put_back(html, spans, mathml if math == "mathml" else as_tex, lambda char: char), used


_BLOCK_TAG = re.compile(r"</?(?:p|li|ul|ol|br|hr|div|h[1-6]|tr|td|th|table|thead|tbody|pre|blockquote)\b[^>]*>")
_TAG = re.compile(r"<[^>]+>")


def to_text(markdown: str) -> str:
    """``markdown`` as plain text on one line: the words, the math as ``\\(...\\)`` for MathJax, no markup
    (for a platform that shows feedback as text, escaped).

    Raises:
        UsageError: markdown-it-py is not installed.

    Examples:
        >>> print(to_text("Divide by **$|X| < 4$**, not by *two*."))
        Divide by \\(|X| < 4\\), not by two.
    """
    from html import unescape

    html = _TAG.sub("", _BLOCK_TAG.sub(" ", to_html(markdown)[0]))
    return " ".join(unescape(html).split())

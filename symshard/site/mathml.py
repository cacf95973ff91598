"""Math for the docs site as MathML, produced when the pages are written, so it renders offline.

Browsers render MathML Core natively, so the site needs no math script and no
CDN. LaTeX (from ``sympy.latex`` or from a problem template's ``$...$``) is
converted with `latex2mathml`, then every character Markdown could read as
syntax (``*``, ``_``, brackets, backslashes, ...) is written as a character
reference, so the MathML passes through Python-Markdown, and the Markdown
readers of MkDocs' successors, untouched.

Examples:
    >>> print(to_mathml("x_{1}^{2}"))  # doctest: +ELLIPSIS
    <span class="ss-math"><math data-latex="x&#x005F;..." ...><mrow><msubsup><mi>x</mi>...</math></span>
    >>> convert_markdown("Time $T = 2$ s.").count("<math")
    1
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..report.markdown import mathml

__all__ = ["convert_markdown", "to_mathml"]

# Characters that Markdown (or its extensions: attr_list, tables, smart symbols) may treat as syntax.
_MARKDOWN_SPECIAL = {c: f"&#x{ord(c):04X};" for c in "*_`[]\\{}~^|#!$:"}
_TEXT = re.compile(r">([^<]+)<")


_ENTITY = re.compile(r"(&#?\w+;)")


def _protect(text: str) -> str:
    """Markdown's special characters as character references; existing references kept."""
    parts = _ENTITY.split(text)
    return "".join(p if i % 2 else "".join(_MARKDOWN_SPECIAL.get(c, c) for c in p) for i, p in enumerate(parts))


@lru_cache(maxsize=4096)
def to_mathml(latex: str, display: bool = False) -> str:
    """One LaTeX formula as a single-line ``<math>`` element, safe to embed in Markdown.

    Raises:
        TemplateError: LaTeX that the converter cannot read (the message quotes it).
    """
    markup = mathml(latex, display)  # the one conversion, shared with the course exports
    markup = _TEXT.sub(lambda m: ">" + _protect(m.group(1)) + "<", markup)
    markup = markup.replace("<math ", f'<math data-latex="{_attribute(latex)}" ', 1)
    # Python-Markdown reads a line that starts with <math> as a raw HTML block (math is a block-level
    # tag to it), which would cut a paragraph in two; a <span> keeps inline math inline.
    return markup if display else f'<span class="ss-math">{markup}</span>'


def _attribute(latex: str) -> str:
    """The LaTeX source kept as an attribute (copy-paste and search); escaped for HTML and Markdown."""
    escaped = latex.strip().replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    return _protect(escaped)


# $$...$$ (display) or $...$ (inline, not starting or ending with a space, as in Pandoc); \$ is a dollar.
_MATH = re.compile(r"(?<![\\$])\$\$(.+?)\$\$|(?<![\\$])\$(?![\s$])((?:\\.|[^$\\\n])+?)(?<!\s)\$", re.DOTALL)
_CODE = re.compile(r"(^|\n)( *)(```|~~~).*?\n\2\3[^\n]*|`[^`\n]+`", re.DOTALL)


def convert_markdown(text: str) -> str:
    """Every ``$...$`` and ``$$...$$`` in Markdown replaced by MathML; code spans and fences left alone.

    Raises:
        TemplateError: a formula the converter cannot read.
    """
    out: list[str] = []
    last = 0
    for code in _CODE.finditer(text):
        out.append(_convert_prose(text[last : code.start()]))
        out.append(code.group(0))
        last = code.end()
    out.append(_convert_prose(text[last:]))
    return "".join(out)


def _convert_prose(text: str) -> str:
    def replace(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return to_mathml(m.group(1), display=True)
        return to_mathml(m.group(2))

    return _MATH.sub(replace, text).replace("\\$", "$")

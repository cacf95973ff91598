"""Problem text as Typst markup: Markdown blocks, LaTeX math translated to Typst math, figures inline.

The PDF sheets are typeset by Typst, which reads neither Markdown nor LaTeX. This
module translates what the families write: Markdown (paragraphs, lists, tables,
bold, italics, code, images; parsed with markdown-it-py, the same parser as the
HTML exports) and the LaTeX that ``sympy.latex`` and the templates put in math
(``\\frac``, ``\\text``, ``\\mathbf``, ``\\lvert``, ``\\left(``, ``\\rightarrow``,
``\\times``, subscripts and superscripts, ``1{,}024``...). Math is translated by a
small recursive-descent reader over LaTeX tokens: every command it knows maps to
Typst (``\\frac{a}{b}`` to ``frac(a, b)``, ``\\text{ici}`` to ``"ici"``, a run of
letters ``BD`` to ``B D``, ``/`` to ``slash`` so it stays a slash); one it does not
know is a :class:`~symshard.errors.TemplateError` naming it, never silently dropped
text. Figures become Typst images of the SVG text itself, so a document needs no
files beside it.

Examples:
    >>> tex_to_typst(r"T = \\frac{4 E F}{W_{\\text{ici}} \\lvert Y \\rvert} = 1{,}024")
    'T = frac(4 E F, W_("ici") |Y|) = "1,024"'
    >>> tex_to_typst(r"\\mathbf{A}[I_{XY}, J]\\{U_{Z}\\}")
    'bold(upright("A")) [ I_(X Y) , J ] \\\\{ U_(Z) \\\\}'
    >>> markdown_to_typst("Each device holds **two** blocks:\\n\\n- $|X|/2$ rows\\n- the rest")
    'Each device holds *two* blocks:\\n\\n- $|X| slash 2$ rows\\n- the rest\\n'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import TemplateError
from ..messages import say
from ..report.markdown import Span, markdown_tokens, put_back, split_math

if TYPE_CHECKING:
    from ..render import Figure

__all__ = ["markdown_to_typst", "string", "tex_to_typst", "text"]

_SYMBOLS = {
    "rightarrow": "->",
    "to": "->",
    "leftarrow": "<-",
    "Rightarrow": "=>",
    "cdot": "dot.op",
    "times": "times",
    "mu": "mu",
    "max": "max",
    "min": "min",
    "land": "and",
    "lor": "or",
    "geq": ">=",
    "ge": ">=",
    "leq": "<=",
    "le": "<=",
    "neq": "!=",
    "ne": "!=",
    "approx": "approx",
    "sum": "sum",
    "prod": "product",
    "dots": "dots",
    "ldots": "dots",
    "cdots": "dots.c",
    "lfloor": "floor.l",
    "rfloor": "floor.r",
    "lceil": "ceil.l",
    "rceil": "ceil.r",
    "lvert": "|",
    "rvert": "|",
    "quad": "quad",
    "qquad": "wide",
    "infty": "infinity",
    "log": "log",
    "in": "in",
    "pm": "plus.minus",
    "alpha": "alpha",
    "beta": "beta",
    "gamma": "gamma",
    "delta": "delta",
    "Delta": "Delta",
    "sigma": "sigma",
    "lambda": "lambda",
    "pi": "pi",
}
_SPACES = {",": "thin", ";": "med", ":": "med", " ": "med", "!": ""}
_ESCAPED = {"{": "\\{", "}": "\\}", "_": "\\_", "%": "%", "$": "\\$", "#": "\\#", "&": "\\&", "|": "||"}
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+(?:\{,\}\d+)+|\d+(?:\.\d+)?|[A-Za-z]|\s+|.", re.S)


def string(value: str) -> str:
    """A Typst string literal: ``"..."`` with ``\\`` and ``"`` escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _quoted(token: str) -> str:
    """A token of the formula, quoted: notation, the same in every language."""
    return f"'{token}'"


class _Reader:
    """One pass over the tokens of a LaTeX formula, producing Typst math."""

    def __init__(self, tex: str) -> None:
        self.tex = tex
        self.tokens = [t for t in _TOKEN.findall(tex)]
        self.i = 0

    def fail(self, what: str) -> TemplateError:
        return TemplateError(say("cannot typeset {what} in the formula '{formula}' for the PDF", what=what, formula=self.tex),
                             hint=say("use the LaTeX the families use, or extend symshard.problems.typesetting"))  # fmt: skip

    def peek(self) -> str | None:
        while self.i < len(self.tokens) and self.tokens[self.i].isspace():
            self.i += 1
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise self.fail(say("a formula that ends too early"))
        self.i += 1
        return tok

    def group_raw(self) -> str:
        """The raw text of a ``{...}`` argument (for ``\\text``)."""
        if self.take() != "{":
            raise self.fail(say("a command without its {{argument}}"))
        depth, out = 1, list[str]()
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            self.i += 1
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    return "".join(out)
            out.append(tok)
        raise self.fail(say("an unclosed {{"))

    def argument(self, in_args: bool = True) -> str:
        """One argument: a ``{group}`` or a single atom."""
        if self.peek() == "{":
            self.take()
            return " ".join(self.sequence("}", in_args))
        return self.atom(in_args)

    def sequence(self, until: str | None, in_args: bool) -> list[str]:
        atoms: list[str] = []
        while True:
            tok = self.peek()
            if tok is None:
                if until is not None:
                    raise self.fail(say("a missing '{token}'", token=until))
                return atoms
            if tok == until:
                self.take()
                return atoms
            if tok in ("_", "^"):
                self.take()
                script = self.argument()
                if not atoms:
                    atoms.append('""')
                atoms[-1] += f"{tok}({script})"
                continue
            atoms.append(self.atom(in_args))

    def atom(self, in_args: bool) -> str:
        tok = self.take()
        if tok == "{":
            return " ".join(self.sequence("}", in_args))
        if tok.startswith("\\") and len(tok) == 2 and not tok[1].isalpha():
            char = tok[1]
            if char in _SPACES:
                return _SPACES[char]
            if char in _ESCAPED:
                return _ESCAPED[char]
            raise self.fail(_quoted(tok))
        if tok.startswith("\\"):
            return self.command(tok[1:], in_args)
        if "{,}" in tok:
            return string(tok.replace("{,}", ","))
        if tok == "/":
            return "slash"
        if tok == ",":
            return "\\," if in_args else ","
        if tok in ("}", "&"):
            raise self.fail(_quoted(tok))
        if tok in ('"', "#", "$", "@", "\\", "`"):
            return "\\" + tok
        return tok

    def command(self, name: str, in_args: bool) -> str:
        if name == "frac":
            top = self.argument()
            return f"frac({top}, {self.argument()})"
        if name in ("text", "mathrm", "operatorname"):
            return string(self.group_raw().replace("\\_", "_").replace("\\,", " ").replace("\\ ", " "))
        if name in ("mathbf", "boldsymbol"):
            raw = self.group_raw() if self.peek() == "{" else self.take()
            if re.fullmatch(r"(?:[A-Za-z0-9]|\\_)+", raw):
                return f"bold(upright({string(raw.replace(chr(92) + '_', '_'))}))"
            return f"bold({_Reader(raw).convert()})"
        if name == "sqrt":
            return f"sqrt({self.argument()})"
        if name in ("left", "right"):
            delim = self.take()
            if delim == ".":
                return ""
            return {"\\{": "\\{", "\\}": "\\}", "\\lvert": "|", "\\rvert": "|", "|": "|"}.get(delim, delim)
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        raise self.fail(say("the command \\{name}", name=name))

    def convert(self) -> str:
        return " ".join(a for a in self.sequence(None, False) if a)


def tex_to_typst(tex: str) -> str:
    """Typst math for a LaTeX formula as the families write it (without the ``$`` delimiters).

    Raises:
        TemplateError: a command or construct the translation does not know.
    """
    tex = re.sub(r"\\mu\s*\\text\{(\w+)\}", r"\\text{µ\1}", tex)  # 559\,\mu\text{s}: one unit, "µs"
    out = _Reader(tex).convert()
    return re.sub(r"\| (\S+) \|", r"|\1|", out)


# -- Markdown --------------------------------------------------------------------------------------------------

_MARKUP = re.compile(r"([\\*_`#$@<>\[\]~=\-+/])")


def text(value: str) -> str:
    """Plain text as Typst markup: every character with a meaning in markup escaped, and ``'`` as the
    apostrophe it is (Typst would guess a prime after a digit and an opening quote after a bracket)."""
    return _MARKUP.sub(r"\\\1", value).replace("'", "\u2019")


def _math(tex: str, display: bool) -> str:
    body = tex_to_typst(tex)
    return f"$ {body} $" if display else f"${body}$"


def _restore(markup: str, spans: list[Span]) -> str:
    return put_back(markup, spans, _math, text)


def _image(src: str, alt: str, figures: Mapping[str, Figure]) -> str:
    name = src.rsplit("/", 1)[-1]
    fig = figures.get(name)
    if fig is None:
        return text(alt)
    return f'\n#align(center, image(bytes({string(fig.svg)}), format: "svg", width: 75%, alt: {string(alt)}))\n'


def _inline(tokens: list[Any], figures: Mapping[str, Figure], indent: str = "") -> str:
    """Typst markup of a paragraph's tokens; a line break inside a list item keeps the item's indent
    (``indent``), or Typst would end the item there."""
    out: list[str] = []
    for t in tokens:
        kind = t.type
        if kind == "text":
            out.append(text(t.content))
        elif kind == "code_inline":
            out.append(f"#raw({string(t.content)})")
        elif kind in ("strong_open", "strong_close"):
            out.append("*")
        elif kind in ("em_open", "em_close"):
            out.append("_")
        elif kind == "softbreak":
            out.append("\n" + indent)
        elif kind == "hardbreak":
            out.append(" \\\n" + indent)
        elif kind == "image":
            alt = "".join(c.content for c in (t.children or []))
            out.append(_image(str(t.attrGet("src") or ""), alt, figures))
        elif kind in ("link_open", "link_close", "html_inline"):
            continue
        else:
            out.append(text(t.content))
    return "".join(out)


def markdown_to_typst(markdown: str, figures: Mapping[str, Figure] | None = None) -> str:
    """Typst markup for the templates' Markdown: blocks, inline styles, math and figures.

    Raises:
        TemplateError: math the translation does not know.
        TooLargeError: Markdown too long or too deep (see :func:`~symshard.report.markdown.check_markdown`).
        UsageError: markdown-it-py is not installed.
    """
    figs = figures or {}
    source, spans = split_math(markdown)
    tokens = markdown_tokens(source, say("a text"))
    out: list[str] = []
    lists: list[str] = []  # the kind of each open list, innermost last
    item_start = False
    table: list[list[str]] | None = None
    row: list[str] = []
    for t in tokens:
        kind = t.type
        if kind == "inline":
            content = _inline(t.children or [], figs, "  " * len(lists))
            if table is not None:
                row.append(content)
            elif item_start:
                out.append(content)
                item_start = False
            else:
                out.append(("  " * len(lists)) + content if lists else content)
        elif kind == "paragraph_close" and table is None:
            out.append("\n" if lists and t.hidden else "\n\n")
        elif kind == "heading_open":
            out.append("=" * (int(t.tag[1]) + 1) + " ")
        elif kind == "heading_close":
            out.append("\n\n")
        elif kind in ("bullet_list_open", "ordered_list_open"):
            if lists and out and not out[-1].endswith("\n"):
                out.append("\n")
            lists.append("-" if kind == "bullet_list_open" else "+")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
            if not lists:
                out.append("\n")
        elif kind == "list_item_open":
            out.append("  " * (len(lists) - 1) + lists[-1] + " ")
            item_start = True
        elif kind == "table_open":
            table = []
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and table is not None:
            table.append(row)
        elif kind == "table_close" and table is not None:
            out.append(_table(table) + "\n\n")
            table = None
        elif kind in ("fence", "code_block"):
            out.append(f"#raw(block: true, {string(t.content.rstrip())})\n\n")
        elif kind == "hr":
            out.append("#line(length: 100%)\n\n")
    markup = re.sub(r"\n{3,}", "\n\n", "".join(out)).strip() + "\n"
    return _restore(markup, spans)


def _table(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    cells = [f"[*{c}*]" for c in rows[0]] + [f"[{c}]" for r in rows[1:] for c in r]
    return f"#table(columns: {width}, align: left, inset: 5pt, {', '.join(cells)})"

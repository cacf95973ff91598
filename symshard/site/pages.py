"""The hand-written pages are Jinja templates; this module is what they can call.

A page never types a formula or an output: it asks symshard. ``{{ x | math }}``
prints ``sympy.latex`` of a real expression (or an array's, a collective's) as
MathML; ``eq("T", expr)`` prints an equation; ``pycon(...)`` runs Python and
shows what it printed, ``console(...)`` runs the ``symshard`` command the same
way; ``figure(...)`` saves an SVG from :mod:`symshard.render` next to the page;
the reference tables (hardware, errors, CLI, grammar, families) are generated
from the code they document. A page that calls something wrongly fails the
build with a :class:`~symshard.errors.TemplateError` naming the page and line.

Examples:
    >>> page = Page("tour.md", None)
    >>> "<math" in page.render("{{ ss.parse('AllGather_X(A[I_X, J])').cost().time | math }}")
    True
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.resources
import io
import os
import re
import shlex
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import jinja2
import sympy

import symshard

from .. import errors
from ..algebra.mathtext import as_expr
from ..algebra.symbols import W_dcn, W_ici
from ..algebra.symbols import latex as symbol_latex
from ..algebra.units import format_bytes, format_number, format_seconds
from ..errors import SymshardError, TemplateError
from ..machines.presets import HARDWARE
from ..messages import say
from .mathml import to_mathml

__all__ = ["CommandLine", "Page", "cli_reference", "error_tree", "grammar", "hardware_table", "latex_of", "sources"]


def latex_of(value: object) -> str:
    """LaTeX for a SymPy expression, or anything with a ``latex()`` method (arrays, collectives, matmuls).

    A string is read as notation first (``'A[I_X, J]'``, ``'AllGather_X(A[I_X])'``).
    """
    if isinstance(value, str):
        value = symshard.parse(value)
    method = getattr(value, "latex", None)
    if callable(method):
        return str(method())
    return symbol_latex(as_expr(value))


def _name_latex(name: str) -> str:
    """A symbol name as LaTeX with an upright multi-letter subscript: ``T_comms`` → ``T_{\\text{comms}}``.

    A name already written in LaTeX (``T_{\\text{AG}, XY}``: a brace or a backslash) is kept as it is.
    """
    if "\\" in name or "{" in name:
        return name
    base, _, sub = name.partition("_")
    if not sub:
        return base
    return f"{base}_{{{sub}}}" if len(sub) == 1 else f"{base}_{{\\text{{{sub}}}}}"


def sources() -> Path:
    """The folder holding ``mkdocs.yml``, ``problem-sets.toml`` and ``docs/``."""
    try:
        return Path(str(importlib.resources.files("symshard.sitefiles")))
    except ModuleNotFoundError:  # a source tree that was never installed: the site's sources sit beside the package
        return Path(__file__).resolve().parents[2] / "site"


@dataclass(frozen=True)
class CommandLine:
    """The ``symshard`` command as the site shows it: how to run it in this process, and its parser.

    The site sits below the CLI and never imports it; whoever builds the site hands the command in
    (``symshard site build`` passes :func:`symshard.cli.command_line`).
    """

    run: Callable[[list[str]], int]
    parser: Callable[[], argparse.ArgumentParser]


@dataclass
class Page:
    """One page being written: its path under ``docs/`` and where its figures go.

    ``figures_dir`` is ``docs/figures`` of the prepared project, or None (no figures).
    """

    path: str
    figures_dir: Path | None
    namespace: dict = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)
    """Figure names already taken, by any page of the site (shared between pages): name → page."""
    language: str = "en"
    """The page's language: a figure's caption is its alt text outside English (the drawing is shared)."""
    cli: CommandLine | None = None
    """The command that ``console()`` runs and ``cli_reference()`` documents (None: a page may not use them)."""

    @property
    def root(self) -> str:
        """The relative path from this page to the top of ``docs/`` (``''``, ``'../'``, ...)."""
        depth = len(PurePosixPath(self.path).parent.parts)
        return "../" * depth

    # -- math --------------------------------------------------------------------------------

    def math(self, value: object) -> str:
        return to_mathml(latex_of(value))

    def display(self, value: object) -> str:
        return "\n\n" + to_mathml(latex_of(value), display=True) + "\n\n"

    def eq(self, lhs: object, rhs: object, *more: object, display: bool = True) -> str:
        """``lhs = rhs (= more...)``; a string ``lhs`` is a symbol name like ``'T_comms'``."""
        parts = [_name_latex(lhs) if isinstance(lhs, str) else latex_of(lhs)]
        parts += [latex_of(x) for x in (rhs, *more)]
        markup = to_mathml(" = ".join(parts), display=display)
        return "\n\n" + markup + "\n\n" if display else markup

    # -- running code ------------------------------------------------------------------------

    def pycon(self, source: str) -> str:
        """Run Python statements like a REPL session and show them with their results."""
        source = textwrap.dedent(source).strip("\n")
        tree = ast.parse(source)
        lines = source.splitlines()
        shown: list[str] = []
        for stmt in tree.body:
            code_lines = lines[stmt.lineno - 1 : stmt.end_lineno]
            shown += [(">>> " if i == 0 else "... ") + line for i, line in enumerate(code_lines)]
            if isinstance(stmt, ast.FunctionDef | ast.ClassDef | ast.For | ast.While | ast.If | ast.With):
                shown.append("...")
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    if isinstance(stmt, ast.Expr):
                        value = eval(compile(ast.Expression(stmt.value), self.path, "eval"), self.namespace)
                    else:
                        exec(compile(ast.Module([stmt], []), self.path, "exec"), self.namespace)
                        value = None
                shown += printed.getvalue().splitlines()
                if value is not None:
                    shown += repr(value).splitlines()
            except SymshardError as err:
                shown += printed.getvalue().splitlines()
                shown += ["Traceback (most recent call last):", "  ..."]
                shown += f"{type(err).__name__}: {err}".splitlines()
        return "```pycon\n" + "\n".join(shown) + "\n```"

    def console(self, command: str, status: int = 0, env: dict[str, str] | None = None) -> str:
        """Run ``symshard ...`` in this process and show the command with its output.

        ``env`` sets environment variables for this one command (e.g. ``SYMSHARD_FAMILIES``).
        """
        argv = shlex.split(command)
        if argv[:1] != ["symshard"]:
            raise TemplateError(
                say("console() runs symshard commands, not '{command}'", command=command),
                hint=say("start it with 'symshard '"),
            )
        out, err = io.StringIO(), io.StringIO()
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _environ({"COLUMNS": "100", **(env or {})}),
        ):
            got = self.command_line().run(argv[1:])
        if got != status:
            raise TemplateError(
                say(
                    "'{command}' exited with {got}, the page expects {status}: {why}",
                    command=command,
                    got=got,
                    status=status,
                    why=err.getvalue().strip(),
                ),
                hint=say("fix the command on the page, or pass status=N for an error on purpose"),
            )
        text = (out.getvalue() + err.getvalue()).rstrip("\n")
        return f"```console\n$ {command}\n{text}\n```"

    def command_line(self) -> CommandLine:
        """The command this page may run and document.

        Raises:
            TemplateError: the site is being written without one.
        """
        if self.cli is None:
            raise TemplateError(
                say(
                    "page {path} runs or documents the symshard command, but the site was prepared without it",
                    path=self.path,
                ),
                hint=say("build the site with 'symshard site build', or pass cli=symshard.cli.command_line()"),
            )
        return self.cli

    # -- figures -----------------------------------------------------------------------------

    def figure(self, name: str, fig: object, caption: str | None = None, alt: str | None = None) -> str:
        """Save ``fig`` (a :class:`symshard.render.Figure`) as ``figures/NAME.svg``; return the image.

        The image's alt text is ``alt``; else, on an English page, the figure's own description,
        and on a page in another language its caption (written in the page's language, whereas a
        figure describes itself in the language it was drawn in, English unless told).
        """
        if self.figures_dir is None:
            raise TemplateError(
                say("page {path} has no figures folder", path=str(self.path)), hint=say("build the page with prepare()")
            )
        if not name.replace("-", "").isalnum():
            raise TemplateError(
                say("figure name '{name}' must be letters, digits and '-'", name=name),
                hint=say("e.g. {example}", example="'layout-ixj'"),
            )
        if name in self.figures:
            raise TemplateError(
                say("page {path} uses the figure name '{name}', which page {other} uses already",
                    path=str(self.path), name=name, other=str(self.figures[name])),
                hint=say("give each figure of the site its own name"),
            )  # fmt: skip
        self.figures[name] = self.path
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        (self.figures_dir / f"{name}.svg").write_text(str(getattr(fig, "svg", fig)), encoding="utf-8")
        if alt is None:
            alt = caption if self.language != "en" and caption else str(getattr(fig, "alt", name))
        alt = alt.replace("[", "(").replace("]", ")")
        image = f"![{alt}]({self.root}figures/{name}.svg)"
        return f"<figure markdown>\n{image}\n<figcaption>{caption}</figcaption>\n</figure>" if caption else image

    def download(self, name: str) -> str:
        """Publish ``name``, a file of the page's working folder (one :func:`data_file` put there, or a
        command of the page wrote), as ``files/NAME`` of the site; return its address from this page,
        so that a reader can fetch the very file the page's commands read.
        """
        source = Path(name)
        if "/" in name or name.startswith(".") or not source.is_file():
            raise TemplateError(
                say("download() names a file in the page's folder, not '{name}'", name=name),
                hint=say("call data_file() first, e.g. {example}", example="data_file('data/run.txt', 'run.txt')"),
            )
        if self.figures_dir is None:
            raise TemplateError(
                say("page {path} has no figures folder", path=str(self.path)), hint=say("build the page with prepare()")
            )
        files = self.figures_dir.parent / "files"
        files.mkdir(parents=True, exist_ok=True)
        (files / name).write_bytes(source.read_bytes())
        return f"{self.root}files/{name}"

    # -- rendering ---------------------------------------------------------------------------

    def context(self) -> dict[str, object]:
        import symshard.render as render

        return {
            "ss": symshard,
            "render": render,
            "sympy": sympy,
            "eq": self.eq,
            "display": self.display,
            "pycon": self.pycon,
            "console": self.console,
            "figure": self.figure,
            "root": self.root,
            "lang": self.language,
            "hardware_table": hardware_table,
            "error_tree": error_tree,
            "cli_reference": lambda: cli_reference(self.command_line().parser()),
            "grammar": grammar,
            "families_table": families_table,
            "layer_map": layer_map,
            "seconds": format_seconds,
            "bytes": format_bytes,
            "num": format_number,
            "load_json": load_json,
            "data_file": data_file,
            "download": self.download,
        }

    def render(self, text: str) -> str:
        env = _environment()
        env.filters["math"] = self.math
        env.filters["display"] = self.display
        env.filters["pycon"] = self.pycon
        context = self.context()
        # a page's examples run in a fresh, empty working folder, deleted afterwards, so files they
        # write (a problem family, a generated set) have the short relative names the text uses
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="symshard-page-") as scratch:
            os.chdir(scratch)
            try:
                return self._render(env, text, context)
            finally:
                os.chdir(here)

    def _render(self, env: jinja2.Environment, text: str, context: dict[str, object]) -> str:
        try:
            return env.from_string(text).render(context)
        except TemplateError:
            raise
        except jinja2.TemplateSyntaxError as err:
            raise TemplateError(
                say(
                    "page {path}, line {line}: {why}", path=str(self.path), line=err.lineno, why=err.message or str(err)
                ),
                hint=say("check the {{{{ }}}}"),
            ) from None
        except Exception as err:
            line = _template_line(err)
            why = f"{type(err).__name__}: {err}"  # Python's or the call's own words
            if line:
                message = say("page {path}, line {line}: {why}", path=str(self.path), line=line, why=why)
            else:
                message = say("page {path}: {why}", path=str(self.path), why=why)
            raise TemplateError(message, hint=say("fix the call on that page")) from None


def load_json(rel_path: str) -> object:
    """A JSON data file of the site's sources (e.g. ``data/jax-agreement.json``, written by a script
    that needs extras the site build does not), read at build time."""
    import json

    path = sources() / rel_path
    if not path.is_file():
        raise TemplateError(
            say("the site has no data file {path}", path=rel_path), hint=say("look under {path}", path=str(sources()))
        )
    return json.loads(path.read_text(encoding="utf-8"))


def data_file(rel_path: str, name: str) -> str:
    """Copy a data file of the site's sources (e.g. measured nccl-tests output) into the page's
    working folder as ``name``, so that the page's commands read it by that short name; returns ''."""
    path = sources() / rel_path
    if not path.is_file():
        raise TemplateError(
            say("the site has no data file {path}", path=rel_path), hint=say("look under {path}", path=str(sources()))
        )
    if "/" in name or name.startswith("."):
        raise TemplateError(
            say("data_file() names a file in the page's folder, not '{name}'", name=name),
            hint=say("e.g. {example}", example="'run.txt'"),
        )
    Path(name).write_bytes(path.read_bytes())
    return ""


def _template_line(err: BaseException) -> int | None:
    """The page line Jinja was rendering when ``err`` was raised (Jinja rewrites its frames)."""
    import traceback

    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == "<template>"]
    return lines[-1] if lines else None


def _environment() -> jinja2.Environment:
    # Jinja's default comment marker {# collides with Markdown's {#anchor}; pages use {## ... ##}.
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        comment_start_string="{##",
        comment_end_string="##}",
        keep_trailing_newline=True,
        autoescape=False,
    )


@contextlib.contextmanager
def _environ(values: dict[str, str]):
    """Environment variables set for the duration of a block, then restored."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _columns(width: int):
    return _environ({"COLUMNS": str(width)})


# -- generated reference content ----------------------------------------------------------------


def _cell(value: object, fmt: Callable[[object], str] = format_number) -> str:
    return "—" if value is None else fmt(value)


def hardware_table() -> str:
    """The preset catalogue as two Markdown tables narrow enough for the text column (compute and
    memory; networks), then each chip's sources, grouped by source."""
    wiring = {
        "torus-16": "axes of 16",
        "cube": "whole 4×4×4 cubes",
        "nvlink": "NVLink switch",
        "ring": "every axis",
    }
    compute = ["| preset | chip | bf16 FLOP/s (C) | HBM | W_hbm (B/s) |", "| --- | --- | --- | --- | --- |"]
    network = [
        "| preset | W_ici, one axis, both ways (B/s) | NVLink (B/s) | W_dcn (B/s) | latency | wraparound / network |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for chip in HARDWARE.values():
        c = chip.constants()
        hbm = _cell(chip.hbm_bytes, lambda b: format_bytes(b).split("(")[-1].rstrip(")"))
        compute.append(
            f"| `{chip.name}` | {chip.label} | {_cell(chip.flops_bf16)} | {hbm} | {_cell(chip.hbm_bandwidth)} |"
        )
        network.append(
            f"| `{chip.name}` | {_cell(c.get(W_ici))} | {_cell(chip.nvlink_bandwidth)} | {_cell(c.get(W_dcn))} "
            f"| {_latency(chip)} | {wiring.get(chip.wiring, chip.wiring) + _network(chip)} |"
        )
    out = ["**Compute and memory**", "", "\n".join(compute), "", "**Networks**", "", "\n".join(network), ""]
    out += ["**Sources**", ""]
    for chip in HARDWARE.values():
        out.append(f"- **{chip.label}** (`{chip.name}`): {_citations(chip.sources)}.")
    return "\n".join(out)


_SOURCE_FIELDS = {
    "flops_bf16": "C", "flops_8bit": "8-bit C", "hbm_bytes": "HBM", "hbm_bandwidth": "W_hbm",
    "ici_link_bandwidth": "ICI link", "dcn_bandwidth": "W_dcn", "pcie_bandwidth": "PCIe", "hop_latency": "T_hop",
    "nvlink_bandwidth": "NVLink", "node_size": "NVLink domain", "leaf_nodes": "scalable unit",
    "spine_bandwidth": "W_spine", "base_latency": "T_base", "nvlink_latency": "T_nvlink", "net_latency": "T_net",
}  # fmt: skip


def _citations(sources: Sequence[tuple[str, str]]) -> str:
    """Each source once, with the figures it gives: ``Book, Part 2, 'TPU specs' tables: C, HBM, W_dcn (DCN per chip)``.

    A source text that is another of the chip's source texts plus a detail (in closing parentheses,
    or after ``; ``) is that source, and the detail goes with its figure.
    """
    texts = {text for _, text in sources}
    grouped: dict[str, dict[str, str]] = {}
    for name, text in sources:
        base, detail = text, ""
        if "; " in text and text.split("; ", 1)[0] in texts:
            base, detail = text.split("; ", 1)
        elif text.endswith(")"):
            depth, at = 0, len(text) - 1
            for at in range(len(text) - 1, -1, -1):
                depth += {")": 1, "(": -1}.get(text[at], 0)
                if depth == 0:
                    break
            if text[:at].rstrip() in texts:
                base, detail = text[:at].rstrip(), text[at + 1 : -1]
        label = _SOURCE_FIELDS.get(name, name)
        if detail.lower() == label.lower():
            detail = ""
        figures = grouped.setdefault(base, {})
        figures[label] = detail or figures.get(label, "")
    return "; ".join(
        f"{base}: " + ", ".join(f"{label} ({detail})" if detail else label for label, detail in figures.items())
        for base, figures in grouped.items()
    )


def _latency(chip) -> str:
    """T_hop on a TPU; NCCL's base and per-step latencies on a GPU."""
    if chip.hop_latency is not None:
        return "T_hop " + format_seconds(chip.hop_latency)
    if chip.base_latency is None:
        return "—"
    parts = [f"T_base {format_seconds(chip.base_latency)}", f"T_nvlink {format_seconds(chip.nvlink_latency)}"]
    parts.append(f"T_net {format_seconds(chip.net_latency)}")
    return ", ".join(parts)


def _network(chip) -> str:
    """A GPU preset's levels: the NVLink domain, the scalable unit under the leaf switches, the spine."""
    if chip.wiring != "nvlink" or not chip.node_size:
        return ""
    text = f" ({chip.node_size} GPUs"
    if chip.leaf_nodes:
        text += f"; {chip.leaf_nodes} nodes per scalable unit; spine above"
    elif chip.dcn_bandwidth is not None:
        text += "; scale-out network above"
    return text + ")"


def error_tree() -> str:
    """The exception tree, from the classes themselves: name, built-in bases, what it means."""
    lines: list[str] = []

    def walk(cls: type, depth: int) -> None:
        builtins = [b.__name__ for b in cls.__bases__ if b.__module__ == "builtins" and b is not Exception]
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        also = f" (also a {', '.join(builtins)})" if builtins else ""
        lines.append(f"{'    ' * depth}- `{cls.__name__}`{also}: {doc}")
        subclasses: list[type] = sorted(cls.__subclasses__(), key=lambda c: c.__name__)
        for sub in subclasses:
            if sub.__module__ == errors.__name__:
                walk(sub, depth + 1)

    walk(SymshardError, 0)
    return "\n".join(lines)


def cli_reference(parser: argparse.ArgumentParser) -> str:
    """Every command's ``--help`` under ``parser`` (``symshard``'s own), as the CLI prints it."""
    out: list[str] = []

    def visit(parser: argparse.ArgumentParser, words: list[str], level: int) -> None:
        with _columns(100):
            help_text = parser.format_help().rstrip()
        heading = "#" * level + " `" + " ".join(words) + "`"
        out.extend([heading, "", "```text", help_text, "```", ""])
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    visit(sub, [*words, name], min(level + 1, 4))

    visit(parser, [parser.prog], 2)
    return "\n".join(out)


def grammar() -> str:
    """The notation's EBNF, taken from the parser's own docstring."""
    from ..notation import parser as notation_parser

    doc = notation_parser.__doc__ or ""
    start = doc.index("::", doc.index("Grammar")) + 2
    body = textwrap.dedent(doc[start:].split("\n\n", 2)[1])
    return "```ebnf\n" + body.rstrip() + "\n```"


def module_summaries() -> dict[str, tuple[str, int]]:
    """Every module of the package (``symshard.costs.placement``): its docstring's first paragraph and its
    number of lines, read from the source without importing it (the JAX bridge would load JAX)."""

    root = Path(str(symshard.__file__)).parent
    out: dict[str, tuple[str, int]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text)) or ""
        first = " ".join(doc.strip().split("\n\n", 1)[0].split())
        first = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", first).replace("``", "`")  # reST roles as Markdown code
        out[name] = (first.replace("|", "\\|"), len(text.splitlines()))
    return out


def layer_map(heads: Sequence[str] = ("layer", "module", "lines", "what it is"), summaries: bool = True) -> str:
    """The package's layers from the bottom (:data:`symshard.layers.LAYERS`), each with its modules and
    their size; with ``summaries``, each module's summary too (its docstring's first paragraph, English).
    ``heads`` are the columns' headings, in the page's language."""
    from ..layers import LAYERS, layer_of

    modules = module_summaries()
    head = "| " + " | ".join(heads[:3]) + " |" + (f" {heads[3]} |" if summaries else "")
    rows = [head, "| --- | --- | ---: |" + (" --- |" if summaries else "")]
    for number, layer in enumerate(LAYERS, 1):
        members = [m for m in modules if layer_of(m) is layer]
        for i, m in enumerate(members):
            line, count = modules[m]
            first = f"{number}. **{layer.name}**" if i == 0 else ""
            rows.append(f"| {first} | `{m}` | {count:,} |" + (f" {line} |" if summaries else ""))
    return "\n".join(rows)


def families_table() -> str:
    """The problem families: name, title, difficulty, tags, objective."""
    from ..problems import families

    rows = ["| family | title | difficulty | tags |", "| --- | --- | --- | --- |"]
    for name, fam in sorted(families().items()):
        rows.append(f"| `{name}` | {fam.title} | {fam.difficulty} | {', '.join(fam.tags)} |")
    return "\n".join(rows)

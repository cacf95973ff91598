"""The gettext catalogues: every message the code can say has its translation, with the same fields.

The code's English is the source (``say("...")`` templates, and the keyed tables of words named
``ENGLISH``); ``symshard/i18n/zh/*.po`` holds the Chinese. This walks the source for every template
and looks each up, so a new or reworded sentence without a translation fails here, naming its place.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import polib
import pytest

from symshard.i18n.catalog import catalogue
from symshard.messages import ENGLISH_JOINS, fields

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "symshard"


def _said_in_code() -> dict[tuple[str, str], str]:
    """Every ``(context, template)`` the code can say, with where it is said."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "say":
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    found.setdefault(("", node.args[0].value), f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(getattr(t, "id", "") == "ENGLISH" for t in targets) and module != "symshard.messages":
                    table = importlib.import_module(module.removesuffix(".__init__")).ENGLISH
                    for key, english in table.items():
                        found.setdefault((key, english), f"{path.relative_to(ROOT)}: ENGLISH[{key!r}]")
    for key, english in ENGLISH_JOINS.items():
        found[(key, english)] = f"symshard/messages.py: ENGLISH_JOINS[{key!r}]"
    return found


SAID = _said_in_code()


def test_the_walk_finds_the_code_s_messages():
    contexts = {context for context, _ in SAID}
    assert {"case.3", "step.allgather", "report.best", "join.and"} <= contexts
    assert len(SAID) > 250


def test_every_message_has_a_chinese_translation_with_the_same_fields():
    entries = catalogue("zh").entries
    missing, mismatched = [], []
    for (context, english), where in sorted(SAID.items(), key=lambda kv: kv[1]):
        chinese = entries.get((context, english))
        if chinese is None:
            missing.append(f"{where}: {english!r}" + (f" (msgctxt {context!r})" if context else ""))
        elif fields(english) != fields(chinese):
            mismatched.append(f"{where}: {english!r} -> {chinese!r}")
    assert missing == [], "add these to symshard/i18n/zh/*.po:\n" + "\n".join(missing)
    assert mismatched == [], "these translations drop or invent a field:\n" + "\n".join(mismatched)


@pytest.mark.parametrize("path", sorted((PACKAGE / "i18n" / "zh").glob("*.po")), ids=lambda p: p.name)
def test_each_catalogue_file_is_well_formed(path):
    po = polib.pofile(str(path))
    assert po.metadata["Content-Type"] == "text/plain; charset=UTF-8"
    keys = [(e.msgctxt or "", e.msgid) for e in po]
    assert len(keys) == len(set(keys)), "an entry is repeated"
    assert all(e.msgstr for e in po), [e.msgid for e in po if not e.msgstr]


# -- the raise sites build messages, not English text ---------------------------------------------------------

_ERRORS = {name for name in dir(__import__("symshard.errors", fromlist=["x"])) if name.endswith("Error")}
# helpers that take a message (and a hint) and raise or return an error: (argument positions of words)
_TAKES_WORDS = {"fail": (0, 2), "_fail": (1, 2), "_unbalanced": (3,)}


def _is_words(node: ast.AST) -> bool:
    """Text written as English in place: an f-string, a literal with letters, or a sum with either."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return any(ch.isalpha() for ch in node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_words(node.left) or _is_words(node.right)
    return False


def _english_at_raise_sites(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in _ERRORS:
            args = node.args[:1] + [k.value for k in node.keywords if k.arg in ("message", "hint")]
        elif name in _TAKES_WORDS:
            args = [node.args[i] for i in _TAKES_WORDS[name] if i < len(node.args)]
            args += [k.value for k in node.keywords if k.arg in ("message", "hint", "why", "what")]
        else:
            continue
        found += [f"{path.relative_to(ROOT)}:{a.lineno}: {ast.unparse(a)[:80]}" for a in args if _is_words(a)]
    return found


# Modules whose raise sites still write English in place (translated by zh.toml's patterns until they build
# messages with `say`); a module leaves this set when its last raise site is converted.
PENDING = {
    "symshard/arrays.py",
    "symshard/calibrate.py",
    "symshard/cli.py",
    "symshard/collectives.py",
    "symshard/conditions.py",
    "symshard/costmodels.py",
    "symshard/crossovers.py",
    "symshard/dtypes.py",
    "symshard/chips.py",
    "symshard/i18n/__init__.py",
    "symshard/i18n/catalog.py",
    "symshard/i18n/explain.py",
    "symshard/i18n/languages.py",
    "symshard/inference.py",
    "symshard/jax/runtime.py",
    "symshard/jax/execution.py",
    "symshard/jax/interop.py",
    "symshard/jax/verification.py",
    "symshard/mathtext.py",
    "symshard/einsums.py",
    "symshard/mesh.py",
    "symshard/nccl.py",
    "symshard/notation.py",
    "symshard/outputs.py",
    "symshard/parallelism.py",
    "symshard/placement.py",
    "symshard/planner.py",
    "symshard/problems/budget.py",
    "symshard/problems/engine.py",
    "symshard/problems/family.py",
    "symshard/problems/figures.py",
    "symshard/problems/html.py",
    "symshard/problems/pdf.py",
    "symshard/problems/typesetting.py",
    "symshard/problems/writers.py",
    "symshard/program.py",
    "symshard/render/collectives.py",
    "symshard/render/dispatch.py",
    "symshard/render/layouts.py",
    "symshard/render/plot.py",
    "symshard/render/regions.py",
    "symshard/render/sweep.py",
    "symshard/routes.py",
    "symshard/schemes.py",
    "symshard/search.py",
    "symshard/site/build.py",
    "symshard/site/mathml.py",
    "symshard/site/pages.py",
    "symshard/site/problemsets.py",
    "symshard/substitution.py",
    "symshard/topology.py",
    "symshard/training.py",
    "symshard/transfers.py",
    "symshard/transformer.py",
}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_raise_sites_build_messages(path):
    where = str(path.relative_to(ROOT))
    found = _english_at_raise_sites(path)
    if where in PENDING:
        assert found, f"{where} builds all its messages now: take it out of PENDING"
        pytest.xfail(f"{len(found)} raise sites still write English in place")
    assert found == [], "build these with symshard.messages.say:\n" + "\n".join(found)

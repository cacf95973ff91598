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

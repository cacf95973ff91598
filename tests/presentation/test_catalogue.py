"""The gettext catalogues: every message the code can say has its translation, with the same fields.

The code's English is the source (``say("...")`` templates, and the keyed tables of words named
``ENGLISH``); ``symshard/i18n/zh/*.po`` holds the Chinese. This walks the source for every template
and looks each up, so a new or reworded sentence without a translation fails here, naming its place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import polib
import pytest

from symshard.i18n import LANGUAGES
from symshard.i18n.catalog import catalogue
from symshard.i18n.extract import said_in_code
from symshard.messages import fields

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "symshard"


SAID = {key: places[0] for key, places in said_in_code().items()}


def test_the_walk_finds_the_code_s_messages():
    contexts = {context for context, _ in SAID}
    assert {"case.3", "step.allgather", "report.best", "join.and"} <= contexts
    assert len(SAID) > 250


@pytest.mark.parametrize("language", [x for x in LANGUAGES if x != "en"])
def test_every_message_has_a_translation_with_the_same_fields(language):
    entries = catalogue(language).entries
    missing, mismatched = [], []
    for (context, english), where in sorted(SAID.items(), key=lambda kv: kv[1]):
        chinese = entries.get((context, english))
        if chinese is None:
            missing.append(f"{where}: {english!r}" + (f" (msgctxt {context!r})" if context else ""))
        elif fields(english) != fields(chinese):
            mismatched.append(f"{where}: {english!r} -> {chinese!r}")
    assert missing == [], f"add these to symshard/i18n/{language}/*.po:\n" + "\n".join(missing)
    assert mismatched == [], "these translations drop or invent a field:\n" + "\n".join(mismatched)


@pytest.mark.parametrize("path", sorted((PACKAGE / "i18n").glob("*/*.po")), ids=lambda p: str(p.relative_to(PACKAGE)))
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


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_raise_sites_build_messages(path):
    found = _english_at_raise_sites(path)
    assert found == [], "build these with symshard.messages.say:\n" + "\n".join(found)


@pytest.mark.parametrize("language", [x for x in LANGUAGES if x != "en"])
def test_every_catalogue_entry_is_said_by_the_code(language):
    # argparse's own msgids are said by the standard library (symshard.cli keeps them as messages)
    unused = [k for k in catalogue(language).entries if k not in SAID and k[0] != "argparse"]
    assert unused == [], "no code says these any more; remove them from the catalogue:\n" + "\n".join(map(str, unused))


def test_argparse_errors_are_said_in_chinese(capsys):
    from symshard.cli import main

    assert main(["--lang", "zh", "matmul", "A[I, J] · B[J, K]", "--mesh"]) == 2
    assert capsys.readouterr().err == "symshard: 错误：参数 --mesh：需要一个值；提示：请查看 'symshard matmul --help'\n"
    assert main(["--lang", "zh", "problems"]) == 2
    assert "缺少必需的参数：ACTION" in capsys.readouterr().err
    assert main(["problems"]) == 2  # English is argparse's own, byte for byte
    assert capsys.readouterr().err.startswith("symshard: error: the following arguments are required: ACTION;")


def test_no_regular_expression_reads_english_back():
    import symshard.i18n.catalog as catalog_module

    source = Path(catalog_module.__file__).read_text(encoding="utf-8")
    assert "import re" not in source and not (PACKAGE / "i18n" / "zh.toml").exists()

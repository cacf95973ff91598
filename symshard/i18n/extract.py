"""Every message symshard's code can say, found in its source: the gettext template for translators.

The English is the source: each ``say("...")`` template (its first argument must be a literal
string, so that it can be found here) and each entry of a module's keyed table of words named
``ENGLISH`` (the key is the ``msgctxt``), and the list joins of :mod:`symshard.messages`. Running
this module writes ``symshard/i18n/symshard.pot``, the template that translators' tools (gettext's
``msgmerge``, Weblate, Crowdin, Poedit) update a language's ``.po`` files from; the tests check
that every entry has a translation in every language with the same fields.

Examples:
    >>> found = said_in_code()
    >>> found[("", "did you mean {options}?")]  # doctest: +ELLIPSIS
    ['symshard/errors.py:...']
    >>> sorted(english for context, english in found if context == "join.and")
    [' and ']
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from ..messages import ENGLISH_JOINS

__all__ = ["PACKAGE", "said_in_code", "template"]

PACKAGE = Path(__file__).parents[1]
"""The folder of the symshard package whose source is read."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def said_in_code(package: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """Every ``(context, English template)`` the code can say, with the places that say it.

    The context is ``""`` for a sentence built with ``say`` and the key for a keyed word.
    """
    found: dict[tuple[str, str], list[str]] = {}

    def add(context: str, english: str, where: str) -> None:
        found.setdefault((context, english), []).append(where)

    for path in sorted(package.rglob("*.py")):
        shown = str(path.relative_to(package.parent))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "say":
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    add("", first.value, f"{shown}:{node.lineno}")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(getattr(t, "id", "") == "ENGLISH" for t in targets):
                    table = importlib.import_module(_module_name(path)).ENGLISH
                    for key, english in table.items():
                        add(key, english, f"{shown}:{node.lineno}")
    for key, english in ENGLISH_JOINS.items():
        add(key, english, "symshard/messages.py")
    return found


def template(package: Path = PACKAGE):  # -> polib.POFile (polib is imported only here)
    """The gettext template (``.pot``) of every message, with where each is said."""
    import polib

    pot = polib.POFile(wrapwidth=0)
    pot.header = "The messages symshard says, from its source (python -m symshard.i18n.extract)."
    pot.metadata = {
        "Project-Id-Version": "symshard",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    for (context, english), places in sorted(said_in_code(package).items(), key=lambda kv: (kv[0][0], kv[0][1])):
        pot.append(
            polib.POEntry(
                msgctxt=context or None,
                msgid=english,
                msgstr="",
                # files without line numbers, so that the template changes only when a message does
                occurrences=[(f, "") for f in sorted({p.split(":")[0] for p in places})],
                flags=["python-brace-format"] if "{" in english else [],
            )
        )
    return pot


if __name__ == "__main__":
    out = PACKAGE / "i18n" / "symshard.pot"
    template().save(str(out))
    print(f"wrote {out}")

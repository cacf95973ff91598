"""Writing TOML: every key, string and comment escaped, so text from a user cannot add keys or tables.

symshard writes TOML (the hardware files ``calibrate`` makes) that holds text it does not choose:
a name given on the command line, the label of a base hardware file, a file name. Written between
quotes as it comes, a ``"`` ends the string early and a newline starts a new line of the file, so
``--name 'x"\\nW_dcn = "1"'`` would add a key. :func:`toml_document` is the one way symshard writes
a TOML file: keys are bare only when TOML allows it and quoted otherwise, strings are TOML basic
strings with every control character escaped, and comments have their control characters escaped
too, so each comment stays one line. :func:`tomllib.loads` reads back exactly the values written.

Examples:
    >>> import tomllib
    >>> text = toml_document([("hardware", {"name": 'x"\\nW_dcn = "1', "nodes": 2})], comments=["a\\nb"])
    >>> print(text, end="")
    # a\\u000ab
    [hardware]
    name = "x\\"\\nW_dcn = \\"1"
    nodes = 2
    >>> tomllib.loads(text)
    {'hardware': {'name': 'x"\\nW_dcn = "1', 'nodes': 2}}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

from .errors import OutputError
from .messages import say

__all__ = ["TomlValue", "toml_comment", "toml_document", "toml_key", "toml_string"]

TomlValue: TypeAlias = "str | int | bool"
"""What :func:`toml_document` writes as a value: text, a whole number or a truth value."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _check_text(text: str) -> None:
    """Refuse text that no UTF-8 file can hold (a lone surrogate, from bytes that were not UTF-8)."""
    for ch in text:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise OutputError(
                say("{text} cannot be written in a TOML file: it is not Unicode text", text=ascii(text)),
                hint=say("use UTF-8 text"),
            )


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped.

    Raises:
        OutputError: ``text`` holds a lone surrogate (it cannot be written as UTF-8).

    Examples:
        >>> print(toml_string('say "hi"\\tthere\\x7f'))
        "say \\"hi\\"\\tthere\\u007f"
    """
    _check_text(text)
    out = []
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    """A key as TOML writes it: bare when it is letters, digits, ``_`` and ``-`` only, else quoted.

    Examples:
        >>> toml_key("W_dcn"), toml_key("a.b"), toml_key("")
        ('W_dcn', '"a.b"', '""')
    """
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_comment(text: str) -> str:
    """``text`` as one comment line (``# ...``): control characters (line breaks included) escaped.

    Examples:
        >>> toml_comment("from run.txt\\n[hardware]")
        '# from run.txt\\\\u000a[hardware]'
    """
    shown = "".join(
        f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text
    )
    return f"# {shown}".rstrip()


def _value(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return toml_string(value)


def toml_document(
    tables: Iterable[tuple[str | Sequence[str], Mapping[str, TomlValue]]], *, comments: Iterable[str] = ()
) -> str:
    """A TOML file: comment lines, then each table (a name, or the keys of a nested table) with its values.

    Raises:
        OutputError: a key or a value holds a lone surrogate.

    Examples:
        >>> print(toml_document([("a", {"x": 1}), (("attained", "bf16"), {"t0": "4e-6"})]), end="")
        [a]
        x = 1
        <BLANKLINE>
        [attained.bf16]
        t0 = "4e-6"
    """
    lines = [toml_comment(c) for c in comments]
    for n, (name, values) in enumerate(tables):
        path = (name,) if isinstance(name, str) else tuple(name)
        if n:
            lines.append("")
        lines.append("[" + ".".join(toml_key(part) for part in path) + "]")
        lines += [f"{toml_key(key)} = {_value(value)}" for key, value in values.items()]
    return "".join(line + "\n" for line in lines)

"""The command line's checks of its options before a command runs: counts, seeds, ports and size lists.

argparse reads ``--top -1`` as an integer and ``--shape I1024`` as a size list; the commands would
then ignore the one and set the other aside with a note that misleads. Every such value is refused
here, once for every command that has the option, each with a :class:`~symshard.errors.UsageError`
that quotes it and says what to write instead (the command line prints it as one line and exits 2).

Examples:
    >>> import argparse
    >>> check_options(argparse.Namespace(top=0))
    Traceback (most recent call last):
      ...
    symshard.errors.UsageError: --top 0 prints no strategy...
    >>> print(size_entry_hint("I1024"))
    did you mean I=1024?
"""

from __future__ import annotations

import argparse
import math
import re

from ..errors import UsageError
from ..messages import Message, say
from ..notation.sizes import parse_sizes

__all__ = ["check_options", "check_size_list", "size_entry_hint"]

# options whose value counts something: (attribute, option, least value, a value to suggest)
_COUNTS = (
    ("top", "--top", 1, 10),
    ("sample", "--sample", 1, 20),
    ("seed", "--seed", 0, 7),
    ("count", "--count", 1, 10),
    ("per_family", "--per-family", 1, 2),
    ("ranks", "--ranks", 2, 16),
    ("per_node", "--per-node", 1, 8),
    ("min_bytes", "--min-bytes", 0, 1024),
    ("max_bytes", "--max-bytes", 1, 2**30),
    ("port", "--port", 1, 8000),
)

# size lists NAME=VALUE that a command reads, by attribute: (option, what the entries are)
_SIZE_LISTS = (
    ("shape", "--shape"),
    ("mesh", "--mesh"),
    ("topology", "--topology"),
    ("spread", "--spread"),
    ("sizes", "--sizes"),
)

_GLUED = re.compile(r"([A-Za-z][A-Za-z_']*?)_?([0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][0-9]+)?)\Z")


def size_entry_hint(name: str) -> Message:
    """What to write for a size list's entry that has no ``=``: ``I1024`` reads as ``I=1024``."""
    glued = _GLUED.match(name)
    if glued:
        return say("did you mean {entry}?", entry=f"{glued.group(1)}={glued.group(2)}")
    return say("write {name}=VALUE", name=name)


def check_size_list(text: str, option: str, *, symbolic: bool) -> None:
    """Refuse an entry of a size list without ``=`` where it cannot mean "keep it symbolic" (``symbolic`` is
    False), or where its name ends in digits and so reads as a size glued to a name (``I1024``, ``X8``).

    Raises:
        UsageError: the entry, with what it most likely meant.
    """
    for name, value, span in parse_sizes(text, what=say("{option} list", option=option)):
        written = text[span[0] : span[1]]
        if value != "?" or "=" in written or ":" in written:
            continue
        if not symbolic or _GLUED.match(name):
            raise UsageError(
                say(
                    "{option} {text}: the entry '{entry}' has no '=' and no value", option=option, text=text, entry=name
                ),
                hint=size_entry_hint(name),
            )


def check_options(args: argparse.Namespace) -> None:
    """Refuse the option values no command can use: a count below its least (``--top 0``, ``--seed -1``,
    ``--ranks 1``), a time limit that is not a positive number, a port out of range, ``--min-bytes`` above
    ``--max-bytes``, and size lists with an entry that lacks its ``=`` (``--shape I1024``).

    Raises:
        UsageError: the first bad value, quoted, with what to write instead.
    """
    for attribute, option, least, example in _COUNTS:
        value = getattr(args, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and value < least:
            raise UsageError(_too_small(option, value, least), hint=_least_hint(option, example))
    port = getattr(args, "port", None)
    if isinstance(port, int) and port > 65535:
        raise UsageError(say("--port {value} is not a port (1 to 65535)", value=port), hint=_least_hint("--port", 8000))
    low, high = getattr(args, "min_bytes", None), getattr(args, "max_bytes", None)
    if isinstance(low, int) and isinstance(high, int) and low > high:
        raise UsageError(
            say("--min-bytes {low} is above --max-bytes {high}: no row can be in between", low=low, high=high),
            hint=say("give --min-bytes at most --max-bytes"),
        )
    limit = getattr(args, "time_limit", None)
    if isinstance(limit, float) and not (math.isfinite(limit) and limit > 0):
        raise UsageError(
            say("--time-limit {seconds} leaves no time", seconds=f"{limit:g}"),
            hint=say("give seconds, e.g. --time-limit 600"),
        )
    for attribute, option in _SIZE_LISTS:
        text = getattr(args, attribute, None)
        if isinstance(text, str) and text.strip():
            # a mesh or a shape may name an axis or a dim alone (it stays a symbol); the others need values
            check_size_list(text, option, symbolic=attribute in ("mesh", "shape"))


def _too_small(option: str, value: int, least: int) -> Message:
    if option == "--top":
        return say("--top {value} prints no strategy", value=value)
    if option == "--seed":
        return say("--seed {value} is negative: seeds are whole numbers from 0", value=value)
    if option == "--sample":
        return say("--sample {count} runs no strategy", count=value)
    return say("{option} must be at least {least}, not {value}", option=option, least=least, value=value)


def _least_hint(option: str, example: int) -> Message:
    if option == "--top":
        return say("give how many strategies to print, at least 1 (--json has them all)")
    if option == "--sample":
        return say("sample at least 1, e.g. --sample 20")
    return say("e.g. {option} {value}", option=option, value=example)

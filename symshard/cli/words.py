"""The command line's own words: the error prefix and the notes it adds around a command's report.

Everything a command reports is worded by :mod:`symshard.report`; what is left here belongs to the
command line itself. The Chinese is in ``symshard/i18n/zh/*.po``, by key.
"""

from __future__ import annotations

from ..i18n import keyed

ENGLISH: dict[str, str] = {
    "error.prefix": "symshard: error: ",
    "cli.model_note": "note: {note}",
    "cli.unused_sizes": "note: --shape's sizes for {dims} were set aside: '{text}' has no such dim (--strict refuses them)",
    "cli.verify.planning": "listing symshard's strategies, compiling XLA's plan and looking for it among them…",
    "cli.verify.progress": "running strategies: {done} of {total} ({seconds} s)",
}
"""The English of the command line's own words by key; other languages are in the catalogue."""


def word(key: str, language: str, **values: object) -> str:
    """``ENGLISH[key]`` with ``values`` filled in, said in ``language``."""
    return keyed(ENGLISH, key, language, **values)

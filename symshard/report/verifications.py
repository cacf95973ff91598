"""What ``symshard verify`` prints: symshard's plan against XLA's, in the reader's language.

A :class:`~symshard.jax.results.Verification` says its report as rows of messages; in English
its own ``text()`` prints them, and in another language each message is said here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..i18n import sentence
from .text import table

if TYPE_CHECKING:
    from ..jax.results import Verification


def verification_text(v: Verification, language: str = "en") -> str:
    """The report of ``v``: the matmul, then its rows (mesh, symshard's best, XLA's collectives, whether
    they agree, ...) in ``language``."""
    if language == "en":
        return v.text()
    rows = [
        ("".join(sentence(x, language) for x in key), "".join(sentence(x, language) for x in value))
        for key, value in v.rows()
    ]
    return v.matmul + "\n" + table(rows)

"""The languages symshard speaks, and the check that a language asked for is one of them.

A leaf of the i18n package: the catalogue, the explainer and the package itself all check
languages, and none of them needs the others to do it.

Examples:
    >>> LANGUAGES
    ('en', 'zh')
    >>> check_language("zh")
    >>> check_language("fr")
    Traceback (most recent call last):
      ...
    symshard.errors.UsageError: unknown language 'fr'...
"""

from __future__ import annotations

from ..errors import UsageError, did_you_mean
from ..messages import say

__all__ = ["LANGUAGES", "check_language"]

LANGUAGES = ("en", "zh")
"""The languages symshard writes problems and explanations in."""


def check_language(language: str) -> None:
    """Raise unless symshard speaks ``language`` (a code of :data:`LANGUAGES`).

    Raises:
        UsageError: an unknown language, with the nearest known one as the hint.
    """
    if language not in LANGUAGES:
        raise UsageError(say("unknown language '{name}'", name=language), hint=did_you_mean(language, list(LANGUAGES)))

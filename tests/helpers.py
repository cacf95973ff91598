"""Small helpers shared by several test modules (imported as ``from helpers import ...``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence


def ordered_subsets(axes: Sequence[str]) -> list[tuple[str, ...]]:
    """Every non-empty ordered selection of ``axes``: the axis tuples a collective can name."""
    return [p for r in range(1, len(axes) + 1) for p in itertools.permutations(axes, r)]

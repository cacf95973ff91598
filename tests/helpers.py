"""Small helpers shared by several test modules (imported as ``from helpers import ...``)."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence


def ordered_subsets(axes: Sequence[str]) -> list[tuple[str, ...]]:
    """Every non-empty ordered selection of ``axes``: the axis tuples a collective can name."""
    return [p for r in range(1, len(axes) + 1) for p in itertools.permutations(axes, r)]


# What may stay in Latin letters inside Chinese text: math, code, link and image targets (an
# image's alt text is prose and must be Chinese), and names, units and abbreviations. An English "sentence" is then a run of three or more Latin words.
CHINESE_TEXT_KEEPS = re.compile(
    r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\]\([^)]*\)|https?://\S+|"
    r"\b(?:TPU|GPU|ICI|HBM|DCN|NVLink|NVL\d+|FSDP|TP|DP|ZeRO|Adam|fp32|bf16|fp16|fp8|int8|int4|"
    r"AllGather|ReduceScatter|AllReduce|AllToAll|CollectivePermute|DynamicSlice|"
    r"v\d+[a-z]?|H100|H200|A100|B200|GB200|FLOPs?|MiB|GiB|KiB|TiB|ms|µs|ns|s|B|x)\b",
    re.DOTALL,
)
_ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,'-]+[A-Za-z]{2,}){2,}\b")
# a lone English connective between formulas ("$B = 16$ and $D = 128$") is English left too
_ENGLISH_WORD = re.compile(r"\b(?:and|or|the|of|with|is|are|to|for|from|then|but|if|per|where|each|so)\b")


def english_left(text: str, *, keep: Sequence[str] = ()) -> str | None:
    """The first run of English words left in Chinese ``text`` (None if there is none).

    ``keep``: further phrases allowed to stay in English (a book's title, say).
    """
    stripped = CHINESE_TEXT_KEEPS.sub(" ", text)
    for phrase in keep:
        stripped = stripped.replace(phrase, " ")
    found = _ENGLISH_RUN.search(stripped) or _ENGLISH_WORD.search(stripped)
    return found.group(0) if found else None


@functools.lru_cache(maxsize=64)
def family_variants(name: str, count: int = 200, seed: int = 1) -> tuple:
    """``count`` distinct variants of one family (the set ``generate(seed, per_family=count)`` draws),
    made once per test session and shared by the tests that read them."""
    from symshard.problems import generate

    return tuple(generate(seed, per_family=count, names=[name]))


def probe_family_toml(let: str = "", objective: str = "Probe the sandbox.") -> str:
    """A ``family.toml`` of one parameter and one answer, for the tests that probe the sandbox, the budgets and
    the exports with a family of their own; ``let`` adds lines to its ``[let]`` table."""
    return f"""[family]
title = "Probe"
difficulty = "easy"
tags = ["probe"]
objective = "{objective}"

[params.n]
choices = [1, 2, 3]

[let]
twice = "2 * n"
{let}
[[answers]]
name = "x"
label = "x"
value = "twice"
unit = "count"
rel_tol = 0
"""


def has_cjk_font() -> bool:
    """Whether a CJK font for the Chinese PDF is installed (the first one symshard's Typst writer looks for)."""
    from symshard.errors import UsageError
    from symshard.problems.pdf import cjk_font

    try:
        cjk_font()
    except UsageError:
        return False
    return True

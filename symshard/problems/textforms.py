"""The forms a typed text answer may take: "compute-bound" is "compute", "2D" is "2-D".

A text answer has one value in its family (``compute``, ``2-D``, ``between``,
``y[B_X, E]{U_Y}``), but students type what they mean in several ways: with a
``-bound`` after a regime, without the hyphen of ``2-D``, without the space after a
comma, in quotes when the question quoted the word, or (in a Chinese set) the Chinese
word for a regime. :func:`forms` lists those ways, the value first, for the platforms
that take a list of right answers (Moodle's short answers, Canvas, QTI 2.1's mapping);
:func:`normal` is the comparison every grader that can run code uses (symshard's own
``grade``, PrairieLearn's ``server.py``): case, spaces, dashes and surrounding quotes do
not count. Two typed answers are the same answer when their :func:`normal` forms are equal.

Examples:
    >>> forms("compute")[:4]
    ('compute', 'compute-bound', 'compute bound', 'computebound')
    >>> forms("2-D")
    ('2-D', '2D', '2 D')
    >>> normal(" Compute–Bound ") in {normal(f) for f in forms("compute")}
    True
"""

from __future__ import annotations

import re

__all__ = ["DASHES", "QUOTES", "REGIME_WORDS", "forms", "normal"]

DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
"""The dashes :func:`normal` reads as ``-`` (hyphens, en and em dashes, the minus sign, full-width ones)."""
QUOTES = "'\"`\u2018\u2019\u201c\u201d\u300c\u300d"
"""The quotes :func:`normal` takes off around an answer."""
_DASH_TABLE = str.maketrans(dict.fromkeys(DASHES, "-"))

REGIME_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "compute": {"en": (), "zh": ("计算", "计算受限")},
    "communication": {"en": ("comms", "comms-bound"), "zh": ("通信", "通信受限")},
    "memory": {"en": (), "zh": ("内存", "内存受限")},
    "hbm": {"en": ("hbm-bound",), "zh": ()},
    "ici": {"en": ("ici-bound",), "zh": ()},
    "bandwidth": {"en": (), "zh": ("带宽", "带宽受限")},
    "latency": {"en": (), "zh": ("延迟", "延迟受限")},
}
"""What bounds a step, as the families ask it, with the other words for it in each language (the
``-bound`` forms of every regime are added by :func:`forms`)."""


def normal(text: str) -> str:
    """``text`` as graders compare it: no whitespace, one kind of dash, no surrounding quotes, case folded.

    Examples:
        >>> normal(" 'y[B_X,  E]{U_Y}' ")
        'y[b_x,e]{u_y}'
    """
    squeezed = "".join(str(text).translate(_DASH_TABLE).split())
    return squeezed.strip(QUOTES).casefold()


def _spellings(text: str) -> list[str]:
    """``text`` with each hyphen between two letters or digits kept, dropped or made a space; and, for a
    list with commas, with and without a space after each comma."""
    out = [text]
    for m in reversed(list(re.finditer(r"(?<=[0-9A-Za-z])-(?=[0-9A-Za-z])", text))):
        out += [s[: m.start()] + joint + s[m.end() :] for s in out for joint in ("", " ")]
    if "," in text:
        out += [re.sub(r",\s*", ",", s) for s in out] + [re.sub(r",\s*", ", ", s) for s in out]
    return out


def forms(value: object, label: str = "", language: str | None = None) -> tuple[str, ...]:
    """The ways to type the text answer ``value`` that mean it: the value first, then its other spellings.

    ``label`` is the question's label: a value the label quotes (``'end'``) may be typed with its
    quotes. ``language`` picks the other words for a regime (all languages when None, for grading).

    Examples:
        >>> forms("between", "where to reduce: 'end' or 'between'")
        ('between', "'between'")
        >>> forms("communication", language="zh")[-2:]
        ('通信', '通信受限')
    """
    text = str(value).strip()
    found: list[str] = _spellings(text)
    words = REGIME_WORDS.get(text.casefold())
    if words is not None:
        for suffix in ("-bound", " bound", "bound"):
            found.append(text + suffix)
        for lang, others in words.items():
            if language is None or lang == language or lang == "en":
                for other in others:
                    found += _spellings(other)
    for quote in ("'", '"'):
        if f"{quote}{text}{quote}" in label:
            found.append(f"{quote}{text}{quote}")
    return tuple(dict.fromkeys(found))

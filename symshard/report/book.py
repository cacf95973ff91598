"""What ``symshard book`` prints: the chapter's worked answers recomputed, beside the book's own.

Each answer shows symshard's value, the book's, and whether they agree within the book's rounding; then
the questions the chapter leaves open, with symshard's answers. (English only: it quotes the book.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..algebra.units import json_value

if TYPE_CHECKING:
    from ..models.worked import OpenAnswer, WorkedAnswer


def book_report(answers: Sequence[WorkedAnswer], extra: Sequence[OpenAnswer]) -> tuple[str, dict]:
    """The worked ``answers`` by section, the count that agree, then the ``extra`` open questions, as
    text and data."""
    data = {
        "answers": [
            {
                "key": a.key,
                "source": a.source,
                "question": a.question,
                "value": json_value(a.value),
                "unit": a.unit,
                "shown": a.shown,
                "book": a.book,
                "agrees": a.agrees,
                "note": a.note,
            }
            for a in answers
        ],
        "agree": sum(a.agrees for a in answers),
        "total": len(answers),
        "open": [{"key": o.key, "source": o.source, "question": o.question, "answer": list(o.lines)} for o in extra],
    }
    lines = ["The chapter's worked answers, recomputed by symshard (book model)", ""]
    source = None
    for a in answers:
        if a.source != source:
            source = a.source
            lines.append(source)
        mark = "ok" if a.agrees else "DIFFERS"
        lines.append(f"  {a.question}")
        lines.append(f"      symshard {a.shown:<24} book {a.book:<14} {mark}")
        if a.note:
            lines.append(f"      ({a.note})")
    lines.append("")
    lines.append(f"{data['agree']} of {data['total']} agree with the book within its rounding.")
    lines += ["", "Questions the chapter leaves open, answered by symshard"]
    for o in extra:
        lines += ["", o.source, f"  {o.question}", *[f"      {x}" for x in o.lines]]
    return "\n".join(lines), data

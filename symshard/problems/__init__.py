"""The problem generator: families of worked problems whose every number the algebra computes.

A family (see :mod:`symshard.problems.family`) is data: parameters to draw, values
to compute, checks, answers and a Jinja template. :mod:`~symshard.problems.engine`
turns a (family, seed) into a :class:`~symshard.problems.problem.Problem` (drawn by
:mod:`~symshard.problems.drawing` from a family :mod:`~symshard.problems.library` finds,
its errors worded by :mod:`~symshard.problems.faults`) and builds
reproducible problem sets; :mod:`~symshard.problems.writers` exports them as
Markdown (student set and answer key), JSON (with a shipped JSON Schema) and
Moodle XML. The names below load the engine, and so Jinja2 (which ``import symshard``
never does), when first used: every command of the command line reads its time and memory
budget from :mod:`symshard.problems.budget`, and only the problem commands need the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names as their modules define them (loaded below on first use)
    from .engine import generate, variant
    from .family import Family
    from .library import families, family
    from .problem import Answer, Grade, Mistake, Problem

# the family files' reader is light: loaded now, and its module's name taken back from the package, so that
# ``family`` is the library's function (loaded on first use), as it was when the package loaded the engine
importlib.import_module(".family", __name__)
globals().pop("family", None)

__all__ = ["Answer", "Family", "Grade", "Mistake", "Problem", "families", "family", "generate", "variant"]

_LAZY = {
    "Answer": ".problem",
    "Grade": ".problem",
    "Mistake": ".problem",
    "Problem": ".problem",
    "families": ".library",
    "family": ".library",
    "generate": ".engine",
    "variant": ".engine",
    "Family": ".family",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symshard.problems' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

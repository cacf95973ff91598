"""The problem generator: families of worked problems whose every number the algebra computes.

A family (see :mod:`symshard.problems.family`) is data: parameters to draw, values
to compute, checks, answers and a Jinja template. :mod:`~symshard.problems.engine`
turns a (family, seed) into a :class:`~symshard.problems.problem.Problem` (drawn by
:mod:`~symshard.problems.drawing` from a family :mod:`~symshard.problems.library` finds,
its errors worded by :mod:`~symshard.problems.faults`) and builds
reproducible problem sets; :mod:`~symshard.problems.writers` exports them as
Markdown (student set and answer key), JSON (with a shipped JSON Schema) and
Moodle XML. Loading this package imports Jinja2, which ``import symshard`` never does.
"""

from .engine import generate, variant
from .family import Family
from .library import families, family
from .problem import Answer, Grade, Mistake, Problem

__all__ = ["Answer", "Family", "Grade", "Mistake", "Problem", "families", "family", "generate", "variant"]

"""Test-suite settings: Hypothesis runs reproducibly unless asked to explore.

The default profile derandomizes Hypothesis, so a clean clone and a developer's
machine draw the same examples and CI cannot turn red on a lucky seed. Run
``pytest --hypothesis-profile=explore`` to search with fresh random examples
(and more of them) when hunting for bugs.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=300, print_blob=True)
settings.load_profile("repeatable")

"""Test-suite settings: Hypothesis runs reproducibly unless asked to explore; JAX sees 16 devices.

The tests follow the package's layout: the tests of ``symshard/planning/`` are in ``tests/planning/``, and so on;
those of the package as a whole (its architecture, safety, fuzzing) are here at the top.

The default profile derandomizes Hypothesis, so a clean clone and a developer's
machine draw the same examples and CI cannot turn red on a lucky seed. Run
``pytest --hypothesis-profile=explore`` to search with fresh random examples
(and more of them) when hunting for bugs.

XLA reads ``XLA_FLAGS`` once, when JAX starts, so the number of simulated CPU devices is
set here, before any test imports JAX: 16, for the JAX tests' meshes of 8 and 16 devices.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import settings

# the tests live in folders named after the layers they test (tests/planning/, tests/costs/, ...);
# the helpers they share (helpers.py, lms.py) live here, beside this file
sys.path.insert(0, str(Path(__file__).parent))

from symshard.jax import configure_host_devices

settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=300, print_blob=True)
settings.load_profile("repeatable")

configure_host_devices(16)  # only raises the count in XLA_FLAGS; JAX itself is not imported here


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, request):
    """The docs site, built once per test session: ``(site_dir, project_dir)``.

    The project is the prepared MkDocs project (rendered pages, generated problem sets,
    mkdocs.yml); the site is the output of ``mkdocs build --strict`` on it. The build takes
    half a minute or more, so the terminal says so before and after.
    """
    pytest.importorskip("mkdocs", reason="the site tests need the docs extra")
    import time

    from symshard.site import build

    say = _say(request)
    say("building the docs site once for the site tests (both languages, about half a minute)...")
    start = time.perf_counter()
    root = tmp_path_factory.mktemp("site")
    from symshard.cli import command_line

    built = build(root / "site", src=root / "project", cli=command_line())
    (root / "build.log").write_text(built.log, encoding="utf-8")  # MkDocs' own output, for the log test
    say(f"docs site built in {time.perf_counter() - start:.0f} s")
    return built.out, root / "project"


def _say(request):
    """A line on pytest's terminal, past the output capture of a fixture's setup (nothing under ``-q -q``)."""
    import contextlib

    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def say(line: str) -> None:
        if reporter is None or request.config.get_verbosity() < -1:
            return
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            reporter.ensure_newline()
            reporter.write_line(f"[{line}]")

    return say


@pytest.hookimpl(tryfirst=True)  # before ``-m "not slow"`` deselects them: a slow test without its reason is an error
def pytest_collection_modifyitems(config, items):
    """Every ``slow`` mark says why the test is slow: ``@pytest.mark.slow(reason="...")``.

    The README's test command leaves slow tests out (``-m "not slow"`` in pyproject's ``addopts``) so that
    it stays under ten minutes on a 2-core machine; ``python -m pytest -m slow`` runs them, and CI runs both.
    """
    unsaid = [item.nodeid for item in items if _slow_without_reason(item)]
    if unsaid:
        raise pytest.UsageError(
            "a slow test must say why it is slow, @pytest.mark.slow(reason='...'): " + ", ".join(unsaid[:5])
        )


def _slow_without_reason(item) -> bool:
    return any(not str(mark.kwargs.get("reason", "")).strip() for mark in item.iter_markers("slow"))

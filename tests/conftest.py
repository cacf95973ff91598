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


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The docs site, built once per test session: ``(site_dir, project_dir)``.

    The project is the prepared MkDocs project (rendered pages, generated problem sets,
    mkdocs.yml); the site is the output of ``mkdocs build --strict`` on it.
    """
    pytest.importorskip("mkdocs", reason="the site tests need the docs extra")
    from symshard.site import build

    root = tmp_path_factory.mktemp("site")
    built = build(root / "site", src=root / "project")
    (root / "build.log").write_text(built.log, encoding="utf-8")  # MkDocs' own output, for the log test
    return built.out, root / "project"

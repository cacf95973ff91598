"""The docs site: pages rendered by symshard, problem sets from the engine, MathML math, MkDocs build.

Needs the ``docs`` extra (MkDocs, mkdocs-material, mkdocstrings, latex2mathml).
``prepare(dir)`` writes a complete MkDocs project, ``build(out)`` builds the
static site with ``mkdocs build --strict``, ``serve(out, port)`` serves it.
Not imported by ``import symshard``.
"""

from .build import Built, build, prepare, serve, server, sources

__all__ = ["Built", "build", "prepare", "serve", "server", "sources"]

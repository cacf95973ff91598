"""The docs site's sources, installed as the package data ``symshard.sitefiles``.

``mkdocs.yml`` (theme, extensions, nav), ``problem-sets.toml`` (the problem sets
the site shows) and ``docs/`` (hand-written pages: Markdown that calls symshard
through Jinja for every formula, output, table and figure). ``symshard site
build`` renders them into a plain MkDocs project and builds it; this file only
makes the folder installable.
"""

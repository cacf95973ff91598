"""symshard's problem families, installed as the package ``symshard.families``.

Each sub-folder is one family: ``family.toml`` (metadata, parameters, the values
the algebra computes, the checks a variant must pass, the answers) and
``problem.md.j2`` (statement, hints and worked solution, in Markdown with LaTeX).
This file only makes the folder an importable package; families are data.
"""

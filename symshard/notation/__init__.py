"""The book's notation: sharded arrays, their parser, and einsums between them.

It owns what can be said before any mesh or chip is named: an array and its dims with the mesh
axes that shard them (:mod:`.arrays`), the lexer that splits ASCII or LaTeX text into tokens with
their spans (:mod:`.lexer`), the one-pass parser of arrays, matmuls and collectives with its grammar
in its docstring (:mod:`.parser`), size lists such as ``X=8, Y=2`` (:mod:`.sizes`), and einsums, the
classification of a product into the chapter's cases and the local product each device computes
(:mod:`.einsums`).

It may import the foundation and :mod:`symshard.algebra`.
"""

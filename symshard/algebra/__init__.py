"""The algebra every cost is written in: symbols, dtypes, units, exact sums of monomials and conditions.

The bottom layer above the foundation (:mod:`symshard.errors`, :mod:`symshard.messages`,
:mod:`symshard.memo`). It owns the SymPy symbols with their assumptions (:mod:`.symbols`), element
sizes (:mod:`.dtypes`), units and how numbers read and print (:mod:`.units`), formulas written as
text and read by symshard's own grammar (:mod:`.mathtext`), substituting numbers into formulas
(:mod:`.substitution`), sums of monomials and their dominance (:mod:`.monomials`), one-variable
inequalities (:mod:`.inequalities`) and conditions built from them (:mod:`.conditions`).

It may import only the foundation and SymPy: nothing here knows arrays, meshes or chips.
"""

"""The algebra every cost is written in: symbols, dtypes, units, exact sums of monomials and conditions.

The bottom layer above the foundation (:mod:`symshard.errors`, :mod:`symshard.messages`,
:mod:`symshard.memo`). It owns the SymPy symbols with their assumptions (:mod:`.symbols`), element
sizes (:mod:`.dtypes`), units and how numbers read and print (:mod:`.units`), formulas written as
text and read by symshard's own grammar (:mod:`.mathtext`), substituting numbers into formulas
(:mod:`.substitution`), exact sums of monomials (:mod:`.signomials`), the domain costs are compared
on and the proof that a sum is nonnegative there (:mod:`.domains`), costs as the largest of such sums
(:mod:`.monomials`) and whether one is at most another everywhere (:mod:`.comparisons`), one-variable
inequalities (:mod:`.inequalities`), relations solved by SymPy (:mod:`.solving`), and conditions built
from them (:mod:`.conditions`).

It may import only the foundation and SymPy: nothing here knows arrays, meshes or chips.
"""

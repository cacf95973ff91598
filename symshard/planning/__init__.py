"""Planning a sharded product: strategies, routes between shardings, searches and crossovers.

:mod:`.planner` lists and costs every way to compute a matmul (its strategies), :mod:`.routes` the
ways to move an array from one sharding to another (made of the steps of :mod:`.route_steps`;
:mod:`.route_search` searches every route of the algebra for a known set of collectives),
:mod:`.search` the best sharding of a chain of products under a memory limit, :mod:`.program` a
sequence of steps costed as one, and :mod:`.crossovers` the symbolic conditions under which one strategy beats another.

It may import every layer below: the foundation, :mod:`symshard.algebra`, :mod:`symshard.notation`,
:mod:`symshard.machines` and :mod:`symshard.costs`.
"""

"""Planning a sharded product: strategies, routes between shardings, searches and crossovers.

:mod:`.planner` lists and costs every way to compute a matmul (its strategies), :mod:`.routes` the
ways to move an array from one sharding to another (made of the steps of :mod:`.route_steps`;
:mod:`.route_search` searches every route of the algebra for a known set of collectives),
:mod:`.search` the best sharding of a chain of products under a memory limit (one stage's options in
:mod:`.search_stages`, its answers in :mod:`.search_results`), :mod:`.program` a
sequence of steps costed as one, and :mod:`.crossovers` the symbolic conditions under which one strategy beats another
(the times it compares in :mod:`.crossover_costs`, who can win and the neighbours in :mod:`.crossover_sampling`,
the conditions solved in :mod:`.crossover_conditions`, its answers in :mod:`.crossover_results`).

The planner is in parts, from the bottom: :mod:`.rawcosts` (exact numbers on the fast path, SymPy
otherwise), :mod:`.strategies` (the values a plan is made of), :mod:`.costenv` (the costing
environment), :mod:`.shardings` (compute shardings and the routes to them), :mod:`.pruning`
(dominance), :mod:`.builder` (costed legs and strategies), :mod:`.listing` (the packed listing of
every strategy), :mod:`.enumeration` (every valid strategy and the searches among them), and
:mod:`.planner` on top with the entry points, ``plan`` and ``best_strategy``.

It may import every layer below: the foundation, :mod:`symshard.algebra`, :mod:`symshard.notation`,
:mod:`symshard.machines` and :mod:`symshard.costs`.
"""

"""Compute shardings: which dim each mesh axis splits while the devices multiply, the planner's unit.

A strategy is decided by its compute sharding (see :mod:`.planner`): for every mesh axis, a dim of the
product, none, or :data:`KEEP` (partial sums kept through the product). This module lists the choices
(:func:`axis_choices`, :func:`sharding_combos`, each set of interchangeable idle axes taken once),
turns a choice into the arrays the local product sees (:func:`compute_array`, :func:`axis_order`), and
holds the two pieces a strategy is enumerated as before it is built: a compute sharding with its local
product (:class:`Product`) and a costed route for each leg (:class:`Route`). It also names the results
a matmul gives without being asked (:func:`natural_outputs`).

In :mod:`symshard.planning` it sits above :mod:`.costenv`; :mod:`.pruning`, :mod:`.builder`,
:mod:`.listing` and :mod:`.enumeration` use it.

Examples:
    >>> from symshard.notation.parser import parse_array
    >>> a = parse_array("A[I, J]")
    >>> str(compute_array(a, {"X": "I", "Y": "I"}, axis_order(["I", "J"], [a], ["Y", "X"])))
    'A[I_YX, J]'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..notation.arrays import Array, Dim, unchecked_array
from ..notation.einsums import Matmul
from .costenv import CostEnv
from .rawcosts import Value
from .strategies import Leg, order_of

__all__ = [
    "KEEP",
    "Product",
    "Route",
    "axis_choices",
    "axis_order",
    "combo_position",
    "compute_array",
    "interchangeable_axes",
    "natural_outputs",
    "sharding_combos",
]


KEEP = "unreduced"
"""A compute-sharding choice: keep an operand's partial sums over this axis through the product."""


def natural_outputs(mm: Matmul) -> tuple[Array, ...]:
    """The result shardings a matmul gives without being asked: each output dim keeps the
    axes its operand shards it with; an axis that would appear twice (Case 4) goes to
    one dim or the other, giving one candidate each; partial sums are reduced.

    Examples:
        >>> from symshard.notation.einsums import matmul
        >>> [str(a) for a in natural_outputs(matmul("A[I_X, J] · B[J, K_X]"))]
        ['Out[I_X, K]', 'Out[I, K_X]']
    """
    out_dims = mm.out_dims
    base: dict[str, tuple[str, ...]] = {}
    for d in out_dims:
        lhs_axes = mm.lhs.dim(d).axes if d in mm.lhs.dim_names else ()
        rhs_axes = mm.rhs.dim(d).axes if d in mm.rhs.dim_names else ()
        base[d] = lhs_axes if lhs_axes == rhs_axes or not rhs_axes else rhs_axes if not lhs_axes else lhs_axes
    owners: dict[str, list[str]] = {}
    for d in out_dims:
        for a in base[d]:
            owners.setdefault(a, []).append(d)
    clashes = {a: ds for a, ds in owners.items() if len(ds) > 1}
    results = []
    for choice in itertools.product(*[ds for ds in clashes.values()]):
        pick = dict(zip(clashes, choice, strict=True))
        dims = tuple(Dim(d, tuple(a for a in base[d] if a not in pick or pick[a] == d)) for d in out_dims)
        results.append(Array(mm.out_name, dims))
    return tuple(dict.fromkeys(results))


def compute_array(arr: Array, sigma: Mapping[str, str | None], rank: Mapping[str, list[str]]) -> Array:
    """``arr`` as the product sees it: each dim split by the axes ``sigma`` assigns to it (in
    ``rank`` order), partial sums kept over the axes ``sigma`` marks ``KEEP``."""
    dims = []
    for d in arr.dims:
        axes = [a for a, c in sigma.items() if c == d.name]
        axes.sort(key=rank[d.name].index)
        dims.append(Dim(d.name, tuple(axes)))
    unreduced = frozenset(u for u in arr.unreduced if sigma.get(u) == KEEP)
    # arr's dims, each axis (checked by Dim) on one dim at most, unreduced only where sigma keeps it
    # (so on no dim): valid without Array's checks
    return unchecked_array(arr.name, tuple(dims), unreduced)


def axis_order(dims: Iterable[str], arrays: Sequence[Array], mesh_names: Sequence[str]) -> dict[str, list[str]]:
    """For each dim, the order in which axes assigned to it are written: as in the given arrays
    (the requested output first), then mesh order."""
    rank: dict[str, list[str]] = {}
    for d in dims:
        order: list[str] = []
        for arr in arrays:
            if d in arr.dim_names:
                order += arr.dim(d).axes
        order += list(mesh_names)
        rank[d] = list(dict.fromkeys(order))
    return rank


@dataclass(frozen=True, slots=True)
class Product:
    """One compute sharding, with the local product it leads to (a strategy is one of these and a
    route for each of its three legs)."""

    index: int  # the position of its first compute sharding in the enumeration
    sharding: tuple[tuple[str, str | None], ...]
    lhs_c: Array
    rhs_c: Array
    target: Array
    local_out: Array
    flops: Value
    compute_time: Value
    hbm_time: Value = 0  # its operands read and its result written once in HBM, over W_hbm (0: left out)

    @property
    def local_time(self) -> Value:
        """The local product's time, numbers only: the larger of ``T_math`` and ``T_hbm`` (the roofline)."""
        return self.hbm_time if self.hbm_time > self.compute_time else self.compute_time

    @property
    def order(self) -> tuple:
        """Its rank when all else ties (:func:`~symshard.planning.strategies.order_of`)."""
        return order_of(self.sharding)


@dataclass(frozen=True, slots=True)
class Route:
    """A costed route of one leg: its position among :func:`~symshard.planning.routes.reshard_routes`' routes and its costs."""

    index: int
    leg: Leg
    needs: frozenset[tuple[str, tuple[str, ...]]]

    @property
    def links(self) -> frozenset[str]:
        """The links the route keeps busy."""
        return frozenset(r for r, _ in self.leg.loads)

    @property
    def collectives(self) -> int:
        """How many of its steps move data."""
        return sum(1 for s in self.leg.steps if s.is_communication)

    @property
    def sliced(self) -> int:
        """How many of its steps are free slices."""
        return sum(1 for s in self.leg.steps if not s.is_communication)


def axis_choices(mm: Matmul, env: CostEnv) -> list[tuple[str, list[str | None]]]:
    """For each mesh axis, what it may do in a compute sharding: nothing (None, all an axis of size 1 may do),
    split one of ``mm``'s dims, or keep partial sums (:data:`KEEP`) when one operand has them over the axis
    and the other neither has them nor shards a dim over it."""
    out: list[tuple[str, list[str | None]]] = []
    for a in env.mesh.names:
        if env.axis[a] == 1:
            out.append((a, [None]))
            continue
        opts: list[str | None] = [None, *mm.dims]
        in_l, in_r = a in mm.lhs.unreduced, a in mm.rhs.unreduced
        if in_l != in_r:
            other = mm.rhs if in_l else mm.lhs
            if other.sharded_dim(a) is None:
                opts.append(KEEP)
        out.append((a, opts))
    return out


def sharding_combos(options: list[list[str | None]], classes: list[list[int]]) -> list[tuple]:
    """Every compute sharding (one choice per axis, in ``itertools.product`` order); with ``classes`` of
    interchangeable axes (positions), only those whose choices along each class never decrease in the
    ranking's order (of each set of equivalent shardings, the one the plan would list first)."""
    if not classes:
        return list(itertools.product(*options))
    n = len(options)
    in_class = {i for members in classes for i in members}
    free = [i for i in range(n) if i not in in_class]
    per_class = [
        [
            (members, cs)
            for cs in itertools.combinations_with_replacement(
                sorted(options[members[0]], key=lambda c: c or ""), len(members)
            )
        ]
        for members in classes
    ]
    out = []
    for free_choice in itertools.product(*[options[i] for i in free]):
        for picked in itertools.product(*per_class):
            combo: list[str | None] = [None] * n
            for i, c in zip(free, free_choice, strict=True):
                combo[i] = c
            for members, cs in picked:
                for i, c in zip(members, cs, strict=True):
                    combo[i] = c
            out.append(tuple(combo))
    position = [{c: k for k, c in enumerate(opts)} for opts in options]
    out.sort(key=lambda combo: [position[i][c] for i, c in enumerate(combo)])
    return out


def combo_position(options: list[list[str | None]], combo: tuple) -> int:
    """Where ``combo`` comes in ``itertools.product(*options)``."""
    index = 0
    for opts, c in zip(options, combo, strict=True):
        index = index * len(opts) + opts.index(c)
    return index


def interchangeable_axes(mm: Matmul, env: CostEnv, targets: Sequence[Array]) -> list[list[int]]:
    """Positions of mesh axes that can be swapped without changing any cost: numeric axes of one size
    whose links are the same up to their names (their own ICI links, or the same shared level), named
    by no operand or output."""
    named: set[str] = set()
    for arr in (mm.lhs, mm.rhs, *targets):
        named |= set(arr.axes) | set(arr.unreduced)
    if not env.mesh.is_numeric:
        return []
    groups: dict[tuple, list[int]] = {}
    for i, a in enumerate(env.mesh.names):
        if a in named or env.axis[a] == 1:
            continue
        links = env.costing.links(a)
        signature = tuple(
            (lk.size, lk.topology, lk.w, lk.fabric, lk.latency, "own" if lk.resource == f"ici:{a}" else lk.resource)
            for lk in links
        )
        groups.setdefault(signature, []).append(i)
    return [g for g in groups.values() if len(g) > 1]

"""Networks as they are built: levels of switches, and where each mesh axis falls in them.

A GPU cluster is a hierarchy. Inside a node (or an NVL72 rack) every GPU reaches
every other through NVSwitches; between nodes each GPU has its own NIC into the
scale-out network, whose leaf switches join a *scalable unit* (32 nodes in a DGX
SuperPod) and whose spine switches join the units. A TPU slice is an ICI torus,
and slices talk over the data-centre network. Each tier is a :class:`Level`: a
fabric (:class:`~symshard.machines.topology.Fabric`, which fixes the bandwidth and latency
constants) and how many devices one of its domains holds, counted from the
device up (8 for a node, 256 for an SU of 32 nodes, none for the top).

Devices are numbered with the last mesh axis varying fastest, as JAX and NCCL lay
ranks out, so the last axes stay inside a node. :func:`place` says, for each mesh
axis, how many of its devices share each level's domain: an axis of 16 H100s
whose neighbours are consecutive GPUs runs 8 per node over NVLink and 2 nodes
over the scale-out network. Those *spans* are what
:mod:`symshard.costs.costmodels` prices, one level at a time (the hierarchical
collectives NCCL runs). An axis whose devices fall unevenly into some level's
domains (a stride smaller than a domain that does not divide it, or groups that do
not tile the domains) keeps the levels below it that it fills evenly, is priced at
the outermost level it reaches for the rest, and says so: 16,000 H100s fill 2,000
whole nodes, which do not fill whole scalable units of 32, so they are priced over
NVLink and then over the spine.

Examples:
    >>> dgx = (Level(Fabric.NVLINK, 8), Level(Fabric.DCN, 256), Level(Fabric.SPINE, None))
    >>> spans = place({"X": 4, "Y": 4}, dgx)
    >>> [(f.value, n) for f, n in spans["Y"].spans], [(f.value, n) for f, n in spans["X"].spans]
    ([('nvlink', 4)], [('nvlink', 2), ('dcn', 2)])
    >>> [(f.value, n) for f, n in place({"X": 64, "Y": 8}, dgx)["X"].spans]
    [('dcn', 32), ('spine', 2)]
    >>> p = place({"X": 16000}, dgx)["X"]
    >>> [(f.value, n) for f, n in p.spans], p.even
    ([('nvlink', 8), ('spine', 2000)], False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy

from ..algebra.mathtext import as_expr
from .topology import Fabric

__all__ = ["Level", "Placement", "place"]


@dataclass(frozen=True, slots=True)
class Level:
    """One tier of a network: its fabric and the devices one of its domains holds (None: unbounded).

    Domains nest: a level's domain is a whole number of the previous level's.
    """

    fabric: Fabric
    domain: int | None


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one mesh axis falls in a network.

    Attributes:
        spans: ``(fabric, devices)`` per level the axis's group reaches, innermost first; the devices
            multiply to the axis size (a symbolic axis of unknown size is ``((fabric, |X|),)``).
        even: False when the axis's devices fall unevenly into some level's domains (then
            ``spans`` keeps the levels below that one and puts the rest of the axis at the outermost
            level it reaches).
    """

    spans: tuple[tuple[Fabric, sympy.Expr], ...]
    even: bool = True

    @property
    def fabric(self) -> Fabric:
        """The outermost fabric the axis crosses (the one that bounds it)."""
        return self.spans[-1][0]


def _members(size: int, stride: int, domain: int | None, total: int | None) -> int | None:
    """How many devices of an axis (``size`` of them, ``stride`` apart) share one domain of ``domain``
    devices; None when they fall unevenly (some domains hold more of them than others)."""
    if domain is None or (total is not None and total <= domain):  # the whole mesh fits in one domain
        return size
    if stride >= domain:  # neighbours a domain or more apart never share one
        return 1
    if domain % stride:
        return None
    per = domain // stride
    if size % per == 0 or per % size == 0:
        return min(size, per)
    return None


def place(sizes: Mapping[str, object], levels: Sequence[Level]) -> dict[str, Placement]:
    """The placement of each mesh axis (in mesh order, the last varying fastest) in a network of ``levels``.

    An axis whose size, or whose faster axes' sizes, are symbols is placed at the innermost level
    (the size unknown, it is assumed to fit).
    """
    names = list(sizes)
    out: dict[str, Placement] = {}
    numbers = [as_expr(sizes[n]) for n in names]
    total = int(sympy.prod(numbers)) if all(v.is_number for v in numbers) else None
    stride: int | None = 1
    for name in reversed(names):
        size = as_expr(sizes[name])
        if stride is None or not size.is_number:
            out[name] = Placement(((levels[0].fabric, size),))
            stride = None
            continue
        n = int(size)
        if n == 1:
            out[name] = Placement(((levels[0].fabric, sympy.Integer(1)),))
            continue
        spans: list[tuple[Fabric, sympy.Expr]] = []
        below = 1  # devices of the axis inside one domain of the level below
        even = True
        for level in levels:
            members = _members(n, stride, level.domain, total)
            if members is None:
                even = False
                break
            if members > below:
                spans.append((level.fabric, sympy.Integer(members // below)))
                below = members
            if below == n:
                break
        if not even:
            # the levels below the first uneven one are filled evenly: the collective still runs there
            # (a node's GPUs reduce-scatter over NVLink first); the rest of the axis is priced at the
            # outermost level its groups reach
            rest = n // below
            spans = [*spans, (_outermost(levels, stride * n, total), sympy.Integer(rest))]
        out[name] = Placement(tuple(spans), even)
        stride = stride * n
    return {n: out[n] for n in names}


def _outermost(levels: Sequence[Level], period: int, total: int | None) -> Fabric:
    """The outermost level some group of an unevenly placed axis crosses: the first whose domains hold
    whole groups (a multiple of the axis's ``period``, stride times size) or the whole mesh."""
    for level in levels:
        if level.domain is None or level.domain % period == 0 or (total is not None and level.domain >= total):
            return level.fabric
    return levels[-1].fabric

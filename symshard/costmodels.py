r"""The time formulas of the collectives, per axis topology, under two named models.

Everything here is a function of ``V`` (the bytes of the collective, see below),
the axes it runs over (size, topology, one-way link bandwidth ``w``) and the
model; it returns SymPy expressions, exact when the inputs are numbers.

``V`` follows the book: the per-device bytes of the array *with the collective's
axes gathered*, i.e. an AllGather's output, a ReduceScatter's or AllReduce's
unreduced input, an AllToAll's input times the size of its axes; a permute moves
the local block itself.

**book** reproduces the chapter's answers. On a two-way ring with wraparound an
AllGather or ReduceScatter takes ``V / W_ici`` with ``W_ici = 2w`` (the
``(N-1)/N`` factor dropped, as the chapter does), over ``n`` axes at once
``V / (n W_ici)``, an AllReduce twice that, an AllToAll ``V / (4 W_ici)`` (over
several axes ``V max(|A|, ...) / (4 N W_ici)``); latency-aware time is
``max(T_hop · hops, ...)`` with ``Σ |X_i| / 2`` hops. On an axis without
wraparound the data from one end crosses ``N - 1`` one-way hops:
``(N-1) V / (N w)`` (Pop Quiz 2's 560 µs).

**ring** counts exactly: a device must receive ``(1 - 1/N) V`` through its
links (two per ring axis, one per line axis or switch port), ``⌊N/2⌋`` hops on
a two-way ring, and an AllToAll's traffic is summed link by link
(``⌊N²/4⌋ V / (2 N² w)`` on a two-way ring).

Examples:
    >>> from symshard.topology import Topology
    >>> V, w = sympy.symbols("V w", positive=True)
    >>> ring = Link(sympy.Integer(8), Topology.RING, w)
    >>> gather_time([ring], V, "book"), gather_time([ring], V, "ring")
    (V/(2*w), 7*V/(16*w))
    >>> all_to_all_time([ring], V, "book")
    V/(8*w)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from .errors import UnknownModelError, did_you_mean
from .topology import Topology

__all__ = [
    "MODELS",
    "Link",
    "all_to_all_hops",
    "all_to_all_time",
    "check_model",
    "gather_hops",
    "gather_time",
    "permute_hops",
    "permute_time",
]

MODELS = {
    "book": "the chapter's formulas: V/W_ici per AllGather on a wraparound ring, (N-1)/N dropped; "
    "N-1 one-way hops on an axis without wraparound",
    "ring": "exact counting: (N-1)/N factors, floor(N/2) hops on two-way rings, link-by-link AllToAll traffic",
}
"""The collective cost models and what each assumes."""


def check_model(model: str) -> str:
    """Return ``model`` if it names a cost model, else raise.

    Raises:
        UnknownModelError: for anything but ``book`` or ``ring``.
    """
    key = str(model).strip().lower()
    if key not in MODELS:
        raise UnknownModelError(f"unknown cost model '{model}'", hint=did_you_mean(key, sorted(MODELS)))
    return key


@dataclass(frozen=True, slots=True)
class Link:
    """What the formulas need of one mesh axis: its size, wiring and one-way bandwidth ``w``."""

    size: sympy.Expr
    topology: Topology
    w: sympy.Expr


# The formulas run on SymPy expressions (symbolic costs) and on Python Fractions
# (the planner's fast numeric path), so they use only operators and these helpers.


def _exact(x: object) -> bool:
    return isinstance(x, (int, Fraction))


def _sum(xs: Iterable):
    total = 0
    for x in xs:
        total = total + x
    return total


def _prod(xs: Iterable):
    total = 1
    for x in xs:
        total = total * x
    return total


def _div(a, b):
    """``a / b``, exact: a Fraction for two ints (never a float), SymPy for expressions."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b if a % b == 0 else Fraction(a, b)
    return a / b


def _floor(x):
    return math.floor(x) if _exact(x) else sympy.floor(x)


def _max(xs: Sequence):
    return max(xs) if all(_exact(x) for x in xs) else sympy.Max(*xs)


def _moving(links: Sequence[Link]) -> list[Link]:
    """Axes of size one move nothing; leave them out."""
    return [lk for lk in links if lk.size != 1]


def _gather_bandwidth(lk: Link, model: str) -> sympy.Expr:
    """Bytes/s into one device along one axis during an AllGather."""
    n, w = lk.size, lk.w
    if lk.topology is Topology.RING:
        return 2 * w
    if lk.topology is Topology.LINE and model == "book":
        return _div(w * n, n - 1)
    return w


def gather_time(links: Sequence[Link], volume: sympy.Expr, model: str) -> sympy.Expr:
    """Bandwidth-bound time of an AllGather (or ReduceScatter) of ``volume`` bytes over ``links``."""
    moving = _moving(links)
    if not moving:
        return volume * 0
    bandwidth = _sum(_gather_bandwidth(lk, model) for lk in moving)
    if model == "book":
        return _div(volume, bandwidth)
    devices = _prod(lk.size for lk in moving)
    return _div(volume * (devices - 1), devices * bandwidth)


def _ring_hops(lk: Link, model: str) -> sympy.Expr:
    if lk.topology is Topology.RING:
        if model == "book":
            return _div(lk.size, 2)
        return lk.size // 2 if _exact(lk.size) else sympy.floor(lk.size / 2)
    return lk.size - 1


def gather_hops(links: Sequence[Link], model: str) -> sympy.Expr:
    """Hops on the longest path of an AllGather: ``Σ |X_i| / 2`` on rings, ``N - 1`` otherwise."""
    return _sum(_ring_hops(lk, model) for lk in _moving(links))


def _all_to_all_axis_time(lk: Link, devices: sympy.Expr, volume: sympy.Expr, model: str) -> sympy.Expr:
    """Time the busiest link of one axis needs during an AllToAll over ``devices`` in all."""
    a, w = lk.size, lk.w
    book = model == "book"
    quarter = _div(a * a, 4) if book else _floor(_div(a * a, 4))
    if lk.topology is Topology.RING:
        return _div(quarter * volume, 2 * a * devices * w)
    if lk.topology is Topology.ONE_WAY_RING:
        return _div((a if book else a - 1) * volume, 2 * devices * w)
    if lk.topology is Topology.LINE:
        return _div(quarter * volume, a * devices * w)
    return _div(volume if book else (a - 1) * volume, (1 if book else a) * devices * w)


def all_to_all_time(links: Sequence[Link], volume: sympy.Expr, model: str) -> sympy.Expr:
    """Bandwidth-bound time of an AllToAll of a ``volume``-byte array over ``links`` (axes run concurrently)."""
    moving = _moving(links)
    if not moving:
        return volume * 0
    devices = _prod(lk.size for lk in moving)
    return _max([_all_to_all_axis_time(lk, devices, volume, model) for lk in moving])


def all_to_all_hops(links: Sequence[Link], model: str) -> sympy.Expr:
    """Hops to the farthest destination of an AllToAll (one through a switch)."""
    return _sum(1 if lk.topology is Topology.SWITCH else _ring_hops(lk, model) for lk in _moving(links))


def permute_time(link: Link, volume: sympy.Expr, model: str) -> sympy.Expr:
    """A cyclic shift by one along ``link``: every device sends its ``volume``-byte block one way."""
    if link.size == 1:
        return volume * 0
    return _div(volume, link.w)


def permute_hops(link: Link, model: str) -> sympy.Expr:
    """One hop, except the wrap from the last device to the first on a line (``N - 1``)."""
    if link.size == 1:
        return 0
    return link.size - 1 if link.topology is Topology.LINE else 1

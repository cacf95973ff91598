r"""The one place a collective is costed: bytes, hops, bandwidth and latency terms, time and regime.

Every figure symshard gives for a collective comes from :func:`timing` (and
:func:`volume`): :meth:`~symshard.collectives.CollectiveExpr.cost`, the
planner's :class:`~symshard.planner.CostEnv`, a
:class:`~symshard.program.Program` and, through them, the layer schemes, the
problem families and the docs site. A collective is described by its kind, the
links of the mesh axes it runs over (size, wiring, one-way bandwidth ``w``;
:func:`link_for` reads them off a mesh axis and the hardware constants) and
``V``; the answer is a :class:`Timing` of SymPy expressions, exact when the
inputs are numbers, or of Python Fractions on the planner's fast path.

``V`` follows the book: the per-device bytes of the array *with the collective's
axes gathered*, i.e. an AllGather's output, a ReduceScatter's or AllReduce's
unreduced input, an AllToAll's input times the size of its axes; a permute moves
the block each device ends with.

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
    >>> V, w = sympy.symbols("V w", positive=True)
    >>> ring = Link(sympy.Integer(8), Topology.RING, w)
    >>> timing("AllGather", [ring], V, "book", 0).bandwidth_time, timing("AllGather", [ring], V, "ring", 0).time
    (V/(2*w), 7*V/(16*w))
    >>> t = timing("AllToAll", [ring], V, "book", sympy.Symbol("T"))
    >>> t.bandwidth_time, t.hops, t.time
    (V/(8*w), 4, Max(4*T, V/(8*w)))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import sympy

from .errors import UnknownModelError, did_you_mean
from .topology import Topology

if TYPE_CHECKING:
    from .mesh import MeshAxis

__all__ = [
    "KINDS",
    "MODELS",
    "Link",
    "Timing",
    "check_model",
    "hop_floor",
    "link_for",
    "timing",
    "volume",
]

MODELS = {
    "book": "the chapter's formulas: V/W_ici per AllGather on a wraparound ring, (N-1)/N dropped; "
    "N-1 one-way hops on an axis without wraparound",
    "ring": "exact counting: (N-1)/N factors, floor(N/2) hops on two-way rings, link-by-link AllToAll traffic",
}
"""The collective cost models and what each assumes."""

KINDS = ("AllGather", "ReduceScatter", "AllReduce", "AllToAll", "CollectivePermute", "DynamicSlice")
"""The collectives :func:`timing` knows, by the name the notation gives them."""

Value = Any
"""A cost: a SymPy expression, or an ``int`` or ``Fraction`` on the planner's fast numeric path."""


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

    size: Value
    topology: Topology
    w: Value


@dataclass(frozen=True, slots=True)
class Timing:
    """What one collective costs: every figure exact (SymPy, or int/Fraction on the fast path).

    Attributes:
        bytes: ``V``, the bytes the formulas are written in.
        hops: hops on the longest path.
        bandwidth_time: seconds if bandwidth-bound.
        latency_time: ``T_hop · hops``.
        time: ``max(latency_time, bandwidth_time)``.
    """

    bytes: Value
    hops: Value
    bandwidth_time: Value
    latency_time: Value
    time: Value

    @property
    def regime(self) -> str | None:
        """``'bandwidth'`` or ``'latency'`` when the numbers decide it, else None."""
        lat, bw = self.latency_time, self.bandwidth_time
        if _is_number(lat) and _is_number(bw):
            return "latency" if lat > bw else "bandwidth"
        return None

    @property
    def crossover_bytes(self) -> Value | None:
        """The ``V`` below which the collective is latency-bound (None when nothing moves)."""
        bw = self.bandwidth_time
        if bw == 0:
            return None
        return _div(self.latency_time * self.bytes, bw)


# -- exact arithmetic on SymPy expressions and Python fractions alike ----------------------------


def _exact(x: object) -> bool:
    return isinstance(x, (int, Fraction))


def _is_number(x: object) -> bool:
    return _exact(x) or (isinstance(x, sympy.Basic) and bool(x.is_number))


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


def _as_sympy(x: Value) -> sympy.Expr:
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    if isinstance(x, int):
        return sympy.Integer(x)
    return x


def _max(xs: Sequence):
    """The largest value: exact for numbers, SymPy's ``Max`` otherwise (which drops terms it can order)."""
    return max(xs) if all(_exact(x) for x in xs) else sympy.Max(*xs)


def _lazy_max(xs: Sequence):
    """The largest value: exact for numbers; for expressions an unevaluated ``Max`` of the distinct
    non-zero terms (SymPy's own simplification of ``Max`` costs milliseconds and rarely decides
    anything here)."""
    if all(_exact(x) for x in xs):
        return max(xs)
    args = list(dict.fromkeys(_as_sympy(x) for x in xs if not (_exact(x) and x == 0) and x != 0))
    if not args:
        return xs[0] * 0
    if len(args) == 1:
        return args[0]
    if all(a.is_number for a in args):
        return max(args)
    return sympy.Max(*args, evaluate=False)


# -- the formulas, per axis topology -----------------------------------------------------------


def _moving(links: Sequence[Link]) -> list[Link]:
    """Axes of size one move nothing; leave them out."""
    return [lk for lk in links if lk.size != 1]


def _gather_bandwidth(lk: Link, model: str) -> Value:
    """Bytes/s into one device along one axis during an AllGather."""
    n, w = lk.size, lk.w
    if lk.topology is Topology.RING:
        return 2 * w
    if lk.topology is Topology.LINE and model == "book":
        return _div(w * n, n - 1)
    return w


def _gather_time(links: Sequence[Link], volume: Value, model: str) -> Value:
    """Bandwidth-bound time of an AllGather (or ReduceScatter) of ``volume`` bytes over ``links``."""
    moving = _moving(links)
    if not moving:
        return volume * 0
    bandwidth = _sum(_gather_bandwidth(lk, model) for lk in moving)
    if model == "book":
        return _div(volume, bandwidth)
    devices = _prod(lk.size for lk in moving)
    return _div(volume * (devices - 1), devices * bandwidth)


def _ring_hops(lk: Link, model: str) -> Value:
    if lk.topology is Topology.RING:
        if model == "book":
            return _div(lk.size, 2)
        return lk.size // 2 if _exact(lk.size) else sympy.floor(lk.size / 2)
    return lk.size - 1


def _gather_hops(links: Sequence[Link], model: str) -> Value:
    """Hops on the longest path of an AllGather: ``Σ |X_i| / 2`` on rings, ``N - 1`` otherwise."""
    return _sum(_ring_hops(lk, model) for lk in _moving(links))


def _all_to_all_axis_time(lk: Link, devices: Value, volume: Value, model: str) -> Value:
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


def _all_to_all_time(links: Sequence[Link], volume: Value, model: str) -> Value:
    """Bandwidth-bound time of an AllToAll of a ``volume``-byte array over ``links`` (axes run concurrently)."""
    moving = _moving(links)
    if not moving:
        return volume * 0
    devices = _prod(lk.size for lk in moving)
    return _max([_all_to_all_axis_time(lk, devices, volume, model) for lk in moving])


def _all_to_all_hops(links: Sequence[Link], model: str) -> Value:
    """Hops to the farthest destination of an AllToAll (one through a switch)."""
    return _sum(1 if lk.topology is Topology.SWITCH else _ring_hops(lk, model) for lk in _moving(links))


def _permute_time(links: Sequence[Link], volume: Value) -> Value:
    """A shift along ``links``: every device sends its ``volume``-byte block once, over the slowest link
    (a permute across several axes pairs devices that differ along all of them)."""
    times = [_div(volume, lk.w) for lk in links if lk.size != 1]
    if not times:
        return volume * 0
    return times[0] if len(times) == 1 else _lazy_max(times)


def _permute_hops(links: Sequence[Link]) -> Value:
    """One hop per axis, except the wrap from the last device to the first on a line (``N - 1``)."""
    return _sum((lk.size - 1 if lk.topology is Topology.LINE else 1) for lk in links if lk.size != 1)


# -- the public costing ------------------------------------------------------------------------------


def volume(kind: str, bytes_in: Value, bytes_out: Value, group: Value) -> Value:
    """``V``, the bytes a collective's formulas are written in, from the bytes per device before and
    after it and the number of devices its axes span.

    Examples:
        >>> volume("AllGather", 8, 32, 4), volume("AllReduce", 32, 32, 4), volume("AllToAll", 8, 8, 4)
        (32, 32, 32)
    """
    if kind in ("AllGather", "CollectivePermute"):
        return bytes_out
    if kind in ("ReduceScatter", "AllReduce"):
        return bytes_in
    if kind == "AllToAll":
        return bytes_in * group
    if kind == "DynamicSlice":
        return bytes_in * 0
    raise ValueError(f"unknown collective kind {kind!r}")  # pragma: no cover - KINDS is closed


def timing(kind: str, links: Sequence[Link], volume: Value, model: str, t_hop: Value) -> Timing:
    """What a collective of ``kind`` moving ``volume`` bytes over ``links`` costs under ``model``.

    ``t_hop`` is the latency of one hop (0 for a bandwidth-only figure). The time is
    ``max(T_hop · hops, bandwidth time)``.
    """
    if kind == "DynamicSlice":  # a free slice: nothing moves, no hop, no time
        zero = volume * 0
        return Timing(zero, 0, zero, zero, zero)
    if kind in ("AllGather", "ReduceScatter"):
        bw, hops = _gather_time(links, volume, model), _gather_hops(links, model)
    elif kind == "AllReduce":
        bw, hops = 2 * _gather_time(links, volume, model), 2 * _gather_hops(links, model)
    elif kind == "AllToAll":
        bw, hops = _all_to_all_time(links, volume, model), _all_to_all_hops(links, model)
    elif kind == "CollectivePermute":
        bw, hops = _permute_time(links, volume), _permute_hops(links)
    else:  # pragma: no cover - KINDS is closed
        raise ValueError(f"unknown collective kind {kind!r}")
    lat = t_hop * hops
    if _exact(lat) and _exact(bw):
        time = lat if lat > bw else bw
    elif _is_number(lat) and _is_number(bw):
        lat, bw = _as_sympy(lat), _as_sympy(bw)
        time = lat if lat > bw else bw
    else:
        time = _lazy_max([lat, bw]) if not (bw == 0 and lat == 0) else bw
    return Timing(volume, hops, bw, lat, time)


def link_for(
    axis: MeshAxis, values: Mapping[sympy.Symbol, object], convert: Callable[[object], Value], scale: Value = 1
) -> Link:
    """The link of a mesh axis: its size, wiring and one-way bandwidth, with the constants in ``values``
    substituted (``convert`` turns each into the number type in use) and the bandwidth multiplied by
    ``scale`` (a logical axis spread over that many physical axes).

    Examples:
        >>> from symshard.mesh import MeshAxis
        >>> from symshard.mathtext import as_expr
        >>> link_for(MeshAxis("X", 8), {}, as_expr)
        Link(size=8, topology=<Topology.RING: 'ring'>, w=W_ici/2)
    """
    fabric = axis.fabric
    w = convert(values.get(fabric.bandwidth, fabric.bandwidth))
    return Link(convert(axis.size), axis.topology, _div(scale * w, fabric.directions))


def hop_floor(link: Link, model: str) -> Value:
    """The fewest hops any collective over this one axis takes (a gather, an AllToAll or a permute)."""
    return min(_gather_hops([link], model), _all_to_all_hops([link], model), _permute_hops([link]))

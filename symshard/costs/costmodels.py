r"""The one place a collective is costed: bytes, hops, bandwidth and latency terms, time and regime.

Every figure symshard gives for a collective comes from here:
:meth:`~symshard.costs.collectives.CollectiveExpr.cost`, the planner's
:class:`~symshard.planning.costenv.CostEnv`, a :class:`~symshard.planning.program.Program` and,
through them, the layer schemes, the problem families and the docs site. A
collective is described by its kind, ``V`` and the :class:`Link` of each network
level each of its mesh axes crosses (:class:`Costing` reads them off a mesh, its
wiring and the hardware constants); the answer is a :class:`Timing`, exact:
SymPy expressions, or Python ints and Fractions on the planner's fast path.
:func:`comm_time` adds collectives up into a ``T_comms``.

``V`` follows the book: the per-device bytes of the array *with the collective's
axes gathered*, i.e. an AllGather's output, a ReduceScatter's or AllReduce's
unreduced input, an AllToAll's input times the size of its axes; a permute moves
the block each device ends with.

**Bandwidth, one level.** **book** reproduces the chapter's answers. On a two-way
ring with wraparound an AllGather or ReduceScatter takes ``V / W_ici`` with
``W_ici = 2w`` (the ``(N-1)/N`` factor dropped, as the chapter does), over ``n``
axes at once ``V / (n W_ici)``, an AllReduce twice that, an AllToAll
``V / (4 W_ici)`` (over several axes ``V max(|A|, ...) / (4 N W_ici)``). On an axis
without wraparound the data from one end crosses ``N - 1`` one-way hops:
``(N-1) V / (N w)`` (Pop Quiz 2's 560 µs). Through a switch a device's one-way
egress ``w`` is the limit: ``V / w``. **ring** counts exactly: a device must
receive ``(1 - 1/N) V`` through its links (two per ring axis, one per line axis or
switch port), and an AllToAll's traffic is summed link by link
(``⌊N²/4⌋ V / (2 N² w)`` on a two-way ring).

**Levels.** A collective whose group crosses several network levels (NVLink inside
a node, the scale-out network between nodes, a fat tree's spine; a TPU slice's ICI
and the DCN) runs as NCCL and the book run it, hierarchically: the outer level
moves each device's share ``V / (devices below)``, and the time is set by the
slowest level for its share. A hierarchical AllReduce (ReduceScatter inside the
node, AllReduce across nodes on the 1/N share, AllGather inside the node) is twice
the hierarchical AllGather. Axes through switches at one level form one group (a
GPU's ports are shared by every axis inside its node).

**Latency.** ``book``: ``time = max(T_hop · hops, bandwidth time)`` with
``Σ |X_i| / 2`` hops on rings (``⌊N/2⌋`` under ``ring``), ``N - 1`` on a line or
through a switch. ``nccl`` (GPUs): NCCL's tuning model, ``time = T_base + Σ steps ·
T_step + bandwidth time``, where a ring collective over N devices takes ``N - 1``
steps (an AllReduce ``2 (N - 1)``), the steps that cross a level paying that
level's latency (``T_nvlink``, ``T_net``; see :mod:`symshard.machines.nccl`).

Examples:
    >>> V, w = sympy.symbols("V w", positive=True)
    >>> ring = Link(sympy.Integer(8), Topology.RING, w)
    >>> timing("AllGather", [ring], V, "book").bandwidth_time, timing("AllGather", [ring], V, "ring").time
    (V/(2*w), 7*V/(16*w))
    >>> T = sympy.Symbol("T", positive=True)
    >>> t = timing("AllToAll", [Link(8, Topology.RING, w, latency=T)], V, "book")
    >>> t.bandwidth_time, t.hops, t.time
    (V/(8*w), 4, Max(4*T, V/(8*w)))
    >>> node = Link(8, Topology.SWITCH, 450 * 10**9, Fabric.NVLINK, 0, "nvlink")  # an H100 node
    >>> nic = Link(32, Topology.SWITCH, 50 * 10**9, Fabric.DCN, 0, "dcn")  # 32 of them under a leaf
    >>> t = timing("AllGather", [node, nic], 2**30, "ring", "nccl")
    >>> [round(2**30 / lv.bandwidth_time / 10**9) for lv in t.levels]  # GB/s each level gives V
    [514, 413]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.symbols import T_base, T_hop
from ..errors import UnknownModelError, did_you_mean
from ..machines.topology import Fabric, Topology
from ..messages import say

if TYPE_CHECKING:
    from ..machines.chips import Hardware
    from ..machines.mesh import Mesh, MeshAxis

__all__ = [
    "COMM_OVERLAPS",
    "KINDS",
    "LATENCY_MODELS",
    "MODELS",
    "Costing",
    "LevelCost",
    "Link",
    "Timing",
    "chain",
    "check_comm_overlap",
    "check_model",
    "combine",
    "comm_time",
    "join_loads",
    "largest",
    "latency_model",
    "links_for",
    "loads",
    "regime",
    "tally",
    "timing",
    "volume",
]

MODELS = {
    "book": say(
        "the chapter's formulas: V/W_ici per AllGather on a wraparound ring, (N-1)/N dropped; "
        "N-1 one-way hops on an axis without wraparound"
    ),
    "ring": say("exact counting: (N-1)/N factors, floor(N/2) hops on two-way rings, link-by-link AllToAll traffic"),
}
"""The collective cost models and what each assumes."""

LATENCY_MODELS = {
    "book": say("time = max(T_hop * hops, bandwidth time), the book's latency-aware collective"),
    "nccl": say("time = T_base + steps * per-step latency + bandwidth time, NCCL's tuning model"),
}
"""How a collective's latency enters its time: the book's ``max`` (TPUs), NCCL's sum (GPUs)."""

COMM_OVERLAPS = {
    "axes": say(
        "collectives over disjoint links run at the same time, those sharing links or needing another's "
        "result one after another (T_comms = the busiest link's total)"
    ),
    "none": say("collectives run one after another (T_comms = their sum)"),
}
"""How the collectives of one computation add up into ``T_comms``."""

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
        raise UnknownModelError(say("unknown cost model '{name}'", name=model), hint=did_you_mean(key, sorted(MODELS)))
    return key


def check_comm_overlap(value: str) -> str:
    """Return ``value`` if it names a way to add collectives up (``axes`` or ``none``), else raise.

    Raises:
        UnknownModelError: for anything else.
    """
    key = str(value).strip().lower()
    if key not in COMM_OVERLAPS:
        raise UnknownModelError(
            say("unknown communication overlap '{value}'", value=value), hint=did_you_mean(key, sorted(COMM_OVERLAPS))
        )
    return key


@dataclass(frozen=True, slots=True)
class Link:
    """What the formulas need of one mesh axis at one network level.

    Attributes:
        size: the axis's devices at this level (all of them on a one-level axis).
        topology: the wiring at this level.
        w: one-way bandwidth per device (per link on ICI), bytes/s.
        fabric: the level's network.
        latency: the latency of one hop or ring step over it, seconds.
        resource: what the collective occupies (an ICI axis has its own links; a GPU's NVLink
            ports, its NIC or its spine share are shared by every axis through them).
        axis: the mesh axis.
    """

    size: Value
    topology: Topology
    w: Value
    fabric: Fabric = Fabric.ICI
    latency: Value = 0
    resource: str = ""
    axis: str = ""


@dataclass(frozen=True, slots=True)
class LevelCost:
    """One network level's part of a collective: its devices, the bytes it moves, its time and steps."""

    fabric: Fabric
    devices: Value
    bytes: Value
    bandwidth_time: Value
    hops: Value


@dataclass(frozen=True, slots=True)
class Timing:
    """What one collective costs: every figure exact (SymPy, or int/Fraction on the fast path).

    Attributes:
        bytes: ``V``, the bytes the formulas are written in.
        hops: hops (or ring steps) on the longest path.
        bandwidth_time: seconds if bandwidth-bound (the slowest level's).
        latency_time: the latency term (``T_hop · hops``, or NCCL's base and step latencies).
        time: ``max`` of the two (book) or their sum (nccl).
        latency_model: ``book`` or ``nccl``.
        levels: each network level's part, innermost first (one entry for a one-level collective).
        resources: the links the collective occupies (see :attr:`Link.resource`).
    """

    bytes: Value
    hops: Value
    bandwidth_time: Value
    latency_time: Value
    time: Value
    latency_model: str = "book"
    levels: tuple[LevelCost, ...] = field(default=(), compare=False)
    resources: frozenset[str] = frozenset()

    @property
    def regime(self) -> str | None:
        """``'bandwidth'`` or ``'latency'`` when the numbers decide it, else None."""
        return regime(self.latency_time, self.bandwidth_time)

    @property
    def crossover_bytes(self) -> Value | None:
        """The ``V`` below which the latency term is the larger (None when nothing moves)."""
        bw = self.bandwidth_time
        if bw == 0:
            return None
        return _div(self.latency_time * self.bytes, bw)


def regime(latency_time: Value, bandwidth_time: Value) -> str | None:
    """``'latency'`` when the latency term is the larger, ``'bandwidth'`` otherwise; None while symbolic."""
    if _is_number(latency_time) and _is_number(bandwidth_time):
        return "latency" if latency_time > bandwidth_time else "bandwidth"
    return None


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


def largest(xs: Sequence):
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
    return times[0] if len(times) == 1 else largest(times)


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


def _levels(moving: Sequence[Link]) -> list[list[Link]]:
    """The links grouped by network level, innermost first; at each level, the axes through a switch
    form one group (one device's ports serve them all), each ICI axis keeps its own links."""
    tiers: dict[int, list[Link]] = {}
    for lk in moving:
        tiers.setdefault(lk.fabric.tier, []).append(lk)
    out = []
    for tier in sorted(tiers):
        links = tiers[tier]
        switched = [lk for lk in links if lk.topology is Topology.SWITCH]
        if len(switched) > 1:
            first = switched[0]
            w = first.w
            for lk in switched[1:]:
                w = lk.w if _is_number(lk.w) and _is_number(w) and lk.w < w else w
            axes = "+".join(lk.axis for lk in switched)
            size = _prod(lk.size for lk in switched)
            group = Link(size, Topology.SWITCH, w, first.fabric, first.latency, first.resource, axes)
            links = [lk for lk in links if lk.topology is not Topology.SWITCH] + [group]
        out.append(links)
    return out


def _level_steps(links: Sequence[Link], outer: Value, model: str, latency: str) -> Value:
    """Ring steps (hops) a gather charges to one level: its own ring hops for a torus level; for a switch
    level, each of its ``n - 1`` steps once for every group of the levels above (NCCL's count)."""
    if latency == "nccl" or any(lk.topology is Topology.SWITCH for lk in links):
        n = _prod(lk.size for lk in links)
        return (n - 1) * outer
    return _gather_hops(links, model)


def timing(
    kind: str,
    links: Sequence[Link],
    volume: Value,
    model: str,
    latency_model: str = "book",
    base: Value = 0,
) -> Timing:
    """What a collective of ``kind`` moving ``volume`` bytes over ``links`` costs under ``model``.

    ``links`` holds one :class:`Link` per mesh axis and network level the collective crosses. With
    ``latency_model="book"`` the time is ``max(latency, bandwidth)`` with ``Σ hops · T_hop``; with
    ``"nccl"`` it is ``base + Σ steps · T_step + bandwidth``.
    """
    if kind == "DynamicSlice":  # a free slice: nothing moves, no hop, no time
        zero = volume * 0
        return Timing(zero, 0, zero, zero, zero, latency_model)
    moving = [lk for lk in links if lk.size != 1]
    resources = frozenset(lk.resource for lk in moving)
    if kind == "CollectivePermute":
        bw = _permute_time(moving, volume)
        by_axis: dict[str, list[Link]] = {}
        for lk in moving:
            by_axis.setdefault(lk.axis, []).append(lk)
        hops: Value = 0
        lat: Value = 0
        for group in by_axis.values():  # one step per axis, over the outermost level it crosses
            h = _permute_hops(group) if len(group) == 1 else 1
            hops = hops + h
            lat = lat + h * max(group, key=lambda lk: lk.fabric.tier).latency
        levels: tuple[LevelCost, ...] = ()
    else:
        grouped = _levels(moving)
        devices = _prod(lk.size for lk in moving)
        sizes = [_prod(lk.size for lk in group) for group in grouped]
        parts = []
        inner: Value = 1
        hops = 0
        lat = 0
        for i, group in enumerate(grouped):
            n = sizes[i]
            outer = _prod(sizes[i + 1 :])
            share = _div(volume, inner)
            if kind == "AllToAll":
                if all(lk.topology is not Topology.SWITCH for lk in group):
                    share = volume if len(grouped) == 1 else _div(volume * n * n, devices * devices)
                    t = _all_to_all_time(group, share, model)
                else:
                    w = group[-1].w
                    crossing = (n - 1) if i == 0 else devices - inner
                    share = _div(volume, devices) if model == "book" else _div(volume * crossing, devices * devices)
                    t = _div(share, w)
                h = _all_to_all_hops(group, model)
            else:
                t = _gather_time(group, share, model)
                h = _level_steps(group, outer, model, latency_model)
                if kind == "AllReduce":
                    t, h = 2 * t, 2 * h
            parts.append(LevelCost(group[0].fabric, n, share, t, h))
            hops = hops + h
            lat = lat + h * group[0].latency
            inner = inner * n
        levels = tuple(parts)
        if not parts:
            bw = volume * 0
        elif len(parts) == 1:
            bw = parts[0].bandwidth_time
        else:
            bw = largest([p.bandwidth_time for p in parts])
    if latency_model == "nccl":
        if moving:
            lat = lat + base
        time = lat + bw
    elif _exact(lat) and _exact(bw):
        time = lat if lat > bw else bw
    elif _is_number(lat) and _is_number(bw):
        lat, bw = _as_sympy(lat), _as_sympy(bw)
        time = lat if lat > bw else bw
    else:
        time = largest([lat, bw]) if not (bw == 0 and lat == 0) else bw
    return Timing(volume, hops, bw, lat, time, latency_model, levels, resources)


def comm_time(timings: Iterable[Timing], overlap: str = "axes", attribute: str = "time") -> Value:
    """``T_comms`` of independent collectives (none needs another's result; for a chain that does, see
    :func:`chain`): ``overlap="none"`` adds them up; ``"axes"`` lets collectives on disjoint links run at
    the same time, so ``T_comms`` is the busiest link's total (each collective adds its time to every link
    it occupies). ``attribute`` picks the figure added (``bandwidth_time`` for the chapter's
    bandwidth-only reasoning).

    Examples:
        >>> a = Timing(1, 1, 3, 0, 3, resources=frozenset({"ici:X"}))
        >>> b = Timing(1, 1, 5, 0, 5, resources=frozenset({"ici:Y"}))
        >>> comm_time([a, b], "axes"), comm_time([a, b], "none"), comm_time([a, a, b], "axes")
        (5, 8, 6)
    """
    items = [(getattr(t, attribute), t.resources) for t in timings]
    return combine(items, overlap)


def combine(items: Iterable[tuple[Value, frozenset[str]]], overlap: str = "axes") -> Value:
    """``T_comms`` of collectives given as ``(time, links occupied)`` pairs (see :func:`comm_time`)."""
    items = list(items)
    if overlap == "none" or len(items) < 2:
        total: Value = 0
        for value, _ in items:
            total = total + value
        return total
    per: dict[str, Value] = {}
    for value, resources in items:
        for r in resources or ("",):
            per[r] = per[r] + value if r in per else value
    return _busiest(list(per.values()))


def loads(timings: Iterable[Timing], attribute: str = "time") -> dict[str, Value]:
    """Each link's total busy time over several collectives (what :func:`comm_time` takes the largest of)."""
    out: dict[str, Value] = {}
    for t in timings:
        value = getattr(t, attribute)
        for r in t.resources or ("",):
            out[r] = out[r] + value if r in out else value
    return out


def chain(timings: Iterable[Any], attribute: str = "time") -> tuple[Value, frozenset[str]]:
    """A chain of collectives, each needing the previous one's result (the reshards of one array): they run
    one after another, so the chain takes their total and keeps every link any of them uses busy that long.

    Examples:
        >>> a = Timing(1, 1, 3, 0, 3, resources=frozenset({"ici:X"}))
        >>> b = Timing(1, 1, 5, 0, 5, resources=frozenset({"ici:Y"}))
        >>> total, links = chain([a, b])
        >>> total, sorted(links)
        (8, ['ici:X', 'ici:Y'])
    """
    total: Value = 0
    links: set[str] = set()
    for t in timings:
        total = total + getattr(t, attribute)
        links |= t.resources
    return total, frozenset(links)


def tally(timings: Sequence[Timing], overlap: str = "axes") -> tuple[Value, tuple[tuple[str, Value], ...]]:
    """``T_comms`` of a chain of collectives (:func:`chain`) and, when chains may overlap, the time each of its
    links is busy, in one pass (the planner keeps them to join its legs: :func:`join_loads`)."""
    total, links = chain(timings)
    if overlap == "none":
        return total, ()
    return total, tuple((r, total) for r in sorted(links or {""}))


def join_loads(
    groups: Iterable[tuple[tuple[str, Value], ...]], largest: Callable[[list[Value]], Value] | None = None
) -> Value:
    """``T_comms`` of collectives given as per-link totals (from :func:`tally`): the busiest link's total.

    ``largest`` takes the largest of the links' totals when they are neither numbers nor SymPy (the
    planner prunes strategies with costs kept as sums of monomials, :mod:`symshard.algebra.monomials`)."""
    per: dict[str, Value] = {}
    for group in groups:
        for r, v in group:
            per[r] = per[r] + v if r in per else v
    values = list(per.values())
    if largest is not None and len(values) > 1:
        return largest(values)
    return _busiest(values)


def _busiest(values: list[Value]) -> Value:
    if not values:
        return 0
    if len(values) == 1:
        return values[0]
    return max(values) if all(_exact(v) for v in values) else largest(values)


def links_for(
    axis: MeshAxis,
    values: Mapping[sympy.Symbol, object],
    convert: Callable[[object], Value],
    latency_of: Callable[[Fabric], sympy.Symbol] | None = None,
    scale: Value = 1,
) -> tuple[Link, ...]:
    """The links of a mesh axis, one per network level it crosses, with the constants in ``values``
    substituted (``convert`` turns each into the number type in use), each level's per-step latency
    symbol from ``latency_of`` (default: ``T_hop`` everywhere, the book's) and the bandwidth multiplied
    by ``scale`` (a logical axis spread over that many physical axes).

    Examples:
        >>> from symshard.machines.mesh import MeshAxis
        >>> links_for(MeshAxis("X", 8), {}, as_expr)[0].w
        W_ici/2
    """
    out = []
    spans = axis.levels
    for fabric, size in spans:
        topology = axis.topology if len(spans) == 1 or fabric is Fabric.ICI else Topology.SWITCH
        w = convert(values.get(fabric.bandwidth, fabric.bandwidth))
        symbol = latency_of(fabric) if latency_of is not None else T_hop
        resource = f"ici:{axis.part_of or axis.name}" if fabric is Fabric.ICI else fabric.value
        latency = convert(values.get(symbol, symbol))
        # a part of an axis whose neighbours sit `stride` devices apart: each of its steps crosses that
        # many links, and that many of its groups interleave on every link (a switch has no distance)
        stride = axis.stride if topology is not Topology.SWITCH else 1
        if stride != 1:
            latency = latency * stride
        out.append(
            Link(
                convert(size),
                topology,
                _div(scale * w, fabric.directions * stride),
                fabric,
                latency,
                resource,
                axis.name,
            )
        )
    return tuple(out)


def latency_model(mesh: Mesh, hardware: Hardware | None) -> str:
    """How latency enters a collective's time on ``mesh``: the hardware's model when one is named
    (``nccl`` on GPUs, ``book`` on TPUs), else the mesh's (the model of the chip it was built for)."""
    if hardware is not None:
        return hardware.latency_model
    return mesh.latency_model


class Costing:
    """A mesh's links with the hardware constants substituted, ready to cost collectives over its axes.

    ``convert`` turns every constant and size into the number type in use (SymPy by default; the
    planner's fast path passes a converter to Python Fractions).

    Examples:
        >>> from symshard.machines.mesh import Mesh
        >>> c = Costing(Mesh("X=4"), {}, "book")
        >>> c.timing("AllGather", ("X",), sympy.Symbol("V")).time
        Max(2*T_hop, V/W_ici)
    """

    def __init__(
        self,
        mesh: Mesh,
        values: Mapping[sympy.Symbol, object],
        model: str,
        hardware: Hardware | None = None,
        convert: Callable[[object], Value] = as_expr,
    ) -> None:
        self.model = check_model(model)
        self.latency_model = latency_model(mesh, hardware)
        self._mesh = mesh
        self._values = values
        self._convert = convert
        self._hardware = hardware
        self._links: dict[str, tuple[Link, ...]] = {}
        self._parts: dict[str, list[str]] = {}  # each split axis's parts, major first
        for a in mesh.axes:
            if a.part_of:
                self._parts.setdefault(a.part_of, []).append(a.name)
        self._constants: frozenset[sympy.Symbol] | None = None
        self.base: Value = convert(values.get(T_base, T_base)) if self.latency_model == "nccl" else 0

    def _latency_of(self, fabric: Fabric) -> sympy.Symbol:
        if self._hardware is not None:
            return self._hardware.latency_of(fabric)
        return fabric.latency if self.latency_model == "nccl" else T_hop

    def links(self, axis: str) -> tuple[Link, ...]:
        """The links of one mesh axis, one per network level it crosses (built on first use)."""
        found = self._links.get(axis)
        if found is None:
            found = self._links[axis] = links_for(self._mesh.axis(axis), self._values, self._convert, self._latency_of)
        return found

    @property
    def constants(self) -> frozenset[sympy.Symbol]:
        """The constants the mesh's links need for every cost to be a number."""
        if self._constants is None:
            symbols = {T_base} if self.latency_model == "nccl" else set()
            for a in self._mesh.axes:
                for fabric, _ in a.levels:
                    symbols |= {fabric.bandwidth, self._latency_of(fabric)}
            self._constants = frozenset(symbols)
        return self._constants

    def timing(self, kind: str, axes: Sequence[str], volume: Value) -> Timing:
        """What a collective of ``kind`` over ``axes`` moving ``volume`` bytes costs. Over every part of a
        split axis (:mod:`symshard.machines.subaxes`), in any order, it runs over the whole axis and costs that."""
        links = [lk for a in self._whole(axes) for lk in self.links(a)]
        return timing(kind, links, volume, self.model, self.latency_model, self.base)

    def _whole(self, axes: Sequence[str]) -> Sequence[str]:
        """``axes`` with all the parts of one axis replaced by that axis (its links built from its major part)."""
        if not self._parts:
            return axes
        out = list(axes)
        for whole, names in self._parts.items():
            if all(n in out for n in names):
                at = min(out.index(n) for n in names)
                out = [a for a in out if a not in names]
                out.insert(at, whole)
                if whole not in self._links:
                    major = self._mesh.axis(names[0])
                    size = sympy.prod([self._mesh.size(n) for n in names])
                    from ..machines.mesh import MeshAxis  # the mesh module imports this one

                    axis = MeshAxis(whole, size, major.topology, major.fabric)
                    self._links[whole] = links_for(axis, self._values, self._convert, self._latency_of)
        return out

    def latency_floor(self, axis: str) -> Value:
        """The least latency any collective over this one axis pays (a gather, an AllToAll or a permute;
        NCCL's base latency left out, since one collective over several axes pays it once). Zero for a
        part of an axis: over all the parts together a collective pays the whole axis's latency, which
        may be less than the parts' floors added up."""
        if self._mesh.axis(axis).part_of:
            return 0
        links = list(self.links(axis))
        kinds = ("AllGather", "AllToAll", "CollectivePermute")
        floors = [timing(kind, links, 0, self.model, self.latency_model).latency_time for kind in kinds]
        return min(floors) if all(_is_number(f) for f in floors) else 0

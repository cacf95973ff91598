"""Moving bytes that are not a collective: one chip to another, many to one, host to chip; and what
a whole slice adds up to.

The TPU chapter prices three transfers the sharding chapter leaves out:

* **Point to point** inside a slice: the route crosses ``h`` hops (the shorter way round an axis
  with a wraparound link, straight along one without), the bytes are split over the ports the
  route can use at once (one per axis it moves along), and each hop adds the hop latency:
  ``T = bytes / (ports · w) + h · T_hop`` with ``w`` one link's one-way bandwidth.
* **Gathering to one chip** is limited by the links into that chip (its neighbours on the
  torus), not by the senders: ``(n − 1) · bytes / (ports · w)``, plus the latency of the
  farthest sender.
* **Host to chip** over PCIe at ``W_pcie`` per chip; a matmul whose weights stream from the host
  is compute-bound only when ``B > C/W_pcie`` (derived from the placed weight's bytes).

:func:`slice_totals` adds up a slice or pod: FLOP/s, HBM, HBM bandwidth, hosts, DCN egress; on GPUs the
NVLink egress and the bisection bandwidth of one NVLink domain.

These formulas are written here, not in the cost engine: a point-to-point route and the links
into one chip are not collectives. They belong next to the collectives' costs once the engine
models network levels.

Examples:
    >>> r = point_to_point((0, 0), (3, 3), "4x4", hardware="v5e", nbytes=1e9)
    >>> r.hops, r.ports, round(float(r.time) * 1e3, 2)
    (6, 2, 11.12)
    >>> slice_totals("v5p", "16x20x28").hosts
    2240
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.symbols import C, T_hop, W_pcie
from ..costs.placement import place
from ..errors import HardwareError, MeshError
from ..machines.chips import Hardware
from ..machines.presets import hardware as lookup_hardware
from ..machines.topology import Topology
from ..messages import Message, say
from .transformer import positive_number

__all__ = [
    "CHIPS_PER_HOST",
    "W_PCIE",
    "Gather",
    "HostTransfer",
    "Route",
    "SliceTotals",
    "chip_coordinates",
    "gather_to_one",
    "host_matmul_condition",
    "host_to_chip",
    "point_to_point",
    "slice_shape",
    "slice_totals",
]

W_PCIE = W_pcie
"""One chip's PCIe bandwidth to its host, bytes/s: the hardware constant ``W_pcie`` (the preset's
``pcie_bandwidth``; ``with_constants(W_pcie=...)`` or ``--hw-set W_pcie=...`` replaces or supplies it)."""

CHIPS_PER_HOST: dict[str, tuple[int, Message]] = {
    "tpu-v4p": (4, say("Cloud TPU v4 documentation: a 2x2x1 slice is 4 chips on one host")),
    "tpu-v5p": (4, say("Cloud TPU v5p documentation, topology table: 2x2x1 is 4 chips on 1 host")),
    "tpu-v5e": (8, say("Cloud TPU v5e documentation, specifications: 8 chips per host")),
    "tpu-v6e": (8, say("Cloud TPU v6e documentation, specifications: 8 chips per host")),
    "a100": (8, say("DGX {gpu}: 8 GPUs per node", gpu="A100")),
    "h100": (8, say("DGX {gpu}: 8 GPUs per node", gpu="H100")),
    "h200": (8, say("DGX {gpu}: 8 GPUs per node", gpu="H200")),
    "b200": (8, say("DGX {gpu}: 8 GPUs per node", gpu="B200")),
}
"""Chips attached to one host, by preset, with the source (to move into the hardware presets)."""


def slice_shape(shape: str | Sequence[int]) -> tuple[int, ...]:
    """A slice's shape from ``'4x4'``, ``'16x20x28'`` or a sequence of positive integers.

    Raises:
        MeshError: anything else.
    """
    if isinstance(shape, str):
        parts = [p.strip() for p in shape.lower().replace("×", "x").split("x")]
        if not all(p.isdigit() and int(p) >= 1 for p in parts):
            raise MeshError(
                say("cannot read the slice shape '{shape}'", shape=shape), hint=say("write it like 4x4 or 16x20x28")
            )
        out = tuple(int(p) for p in parts)
    else:
        out = tuple(int(s) for s in shape)
        if not out or any(s < 1 for s in out):
            raise MeshError(
                say("cannot read the slice shape {shape}", shape=str(tuple(shape))),
                hint=say("give positive sizes, e.g. (4, 4)"),
            )
    if len(out) > len(_AXES):  # TPU slices are 2-D or 3-D tori; the axes are named X, Y, Z, W
        raise MeshError(
            say(
                "a slice has at most {count} {count:axis|axes}, not {given} as in '{shape}'",
                count=len(_AXES),
                given=len(out),
                shape=_shown_shape(shape),
            ),
            hint=say("write it like 4x4 or 16x20x28"),
        )
    return out


_AXES = "XYZW"


def _shown_shape(shape: str | Sequence[int]) -> str:
    return shape if isinstance(shape, str) else "x".join(str(s) for s in shape)


def _wiring(hw: Hardware, dims: tuple[int, ...]) -> list[Topology]:
    names = _AXES[: len(dims)]
    wired = hw.wiring_for({n: sympy.Integer(s) for n, s in zip(names, dims, strict=True)})
    topologies = [wired[n][0] for n in names]
    if any(t is Topology.SWITCH for t in topologies):  # every GPU of an NVLink domain is one switch away
        raise HardwareError(
            say("{chip} joins its chips through switches, not a torus: a route has no hops to count", chip=hw.label),
            hint=say("routes and gathers are priced on TPU slices: name a TPU, like tpu-v5e or tpu-v5p"),
        )
    return topologies


def _link(hw: Hardware) -> sympy.Expr:
    w = hw.ici_link_bandwidth or hw.nvlink_bandwidth
    if w is None:
        raise HardwareError(
            say("{chip} has no link bandwidth figure", chip=hw.label),
            hint=say("set one with {option}", option="--hw-set W_ici=..."),
        )
    return w


@dataclass(frozen=True, slots=True)
class Route:
    """One chip sending ``bytes`` to another across the slice.

    Attributes:
        source, target: chip coordinates.
        moves: hops along each axis (signed: the direction taken).
        hops: hops in all.
        ports: links used at once (one per axis the route moves along).
        bandwidth_time: ``bytes / (ports · w)``.
        latency_time: ``hops · T_hop``.
    """

    source: tuple[int, ...]
    target: tuple[int, ...]
    moves: tuple[int, ...]
    hops: int
    ports: int
    nbytes: sympy.Expr
    bandwidth_time: sympy.Expr
    latency_time: sympy.Expr

    @property
    def time(self) -> sympy.Expr:
        """The transfer: bandwidth time plus the latency of every hop."""
        return self.bandwidth_time + self.latency_time

    @property
    def waypoints(self) -> tuple[tuple[int, ...], ...]:
        """The chips where the route turns, source first and target last: it moves along one axis at a
        time, in axis order (dimension-order routing); a move the short way round wraps.

        Examples:
            >>> point_to_point((0, 0), (3, 3), "4x4", hardware="v5e", nbytes=1).waypoints
            ((0, 0), (3, 0), (3, 3))
        """
        out, here = [self.source], list(self.source)
        for i, m in enumerate(self.moves):
            if m:
                here[i] = self.target[i]
                out.append(tuple(here))
        return tuple(out)

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        return summary("Route", f"{self.source} -> {self.target}", {"hops": self.hops, "ports": self.ports,
                       "bytes": self.nbytes, "time": format_seconds_expr(self.time)})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def chip_coordinates(value: str | Sequence[int], shape: str | Sequence[int]) -> tuple[int, ...]:
    """A chip of a slice of ``shape`` from ``'3,3'`` (``'(3, 3)'``, ``'3x3'``) or a sequence of integers.

    Raises:
        MeshError: text that is not integers, a count that is not the slice's number of axes, or a
            coordinate outside the slice.

    Examples:
        >>> chip_coordinates("3,3", "4x4"), chip_coordinates((0, 1, 2), "4x4x4")
        ((3, 3), (0, 1, 2))
    """
    dims = slice_shape(shape)
    size = "x".join(map(str, dims))
    if isinstance(value, str):
        shown = f"'{value}'"
        parts = [p.strip() for p in value.strip().strip("()[]").replace("x", ",").split(",")]
        if not all(p.isdigit() for p in parts):
            raise MeshError(
                say("cannot read the chip {chip}", chip=shown),
                hint=say("write a chip as its coordinates, one per axis, like 0,0 or 3,1,2"),
            )
        out = tuple(int(p) for p in parts)
    else:
        shown = str(tuple(value))
        try:
            out = tuple(operator.index(v) for v in value)
        except TypeError:
            raise MeshError(
                say("cannot read the chip {chip}", chip=shown),
                hint=say("write a chip as its coordinates, one per axis, like 0,0 or 3,1,2"),
            ) from None
    if len(out) != len(dims):
        raise MeshError(
            say(
                "chip {chip} has {count} {count:coordinate|coordinates}, but a {shape} slice has {axes} axes",
                chip=shown,
                count=len(out),
                shape=size,
                axes=len(dims),
            ),
            hint=say("give one coordinate per axis, like {example}", example=",".join("0" * len(dims))),
        )
    if any(not 0 <= v < s for v, s in zip(out, dims, strict=True)):
        top = ",".join(str(s - 1) for s in dims)
        raise MeshError(
            say("chip {coords} is not in a {shape} slice", coords=shown, shape=size),
            hint=say("each coordinate runs from 0 to its axis size - 1, here up to {top}", top=top),
        )
    return out


def point_to_point(
    source: str | Sequence[int],
    target: str | Sequence[int],
    shape: str | Sequence[int],
    *,
    hardware: Hardware | str,
    nbytes: object,
) -> Route:
    """``nbytes`` from chip ``source`` to chip ``target`` of a slice of ``shape`` on ``hardware``.

    Raises:
        MeshError: a bad shape or coordinates outside it.
        HardwareError: a chip without a link bandwidth figure.
    """
    hw = lookup_hardware(hardware)
    dims = slice_shape(shape)
    a, b = chip_coordinates(source, dims), chip_coordinates(target, dims)
    moves = []
    for x, y, size, topo in zip(a, b, dims, _wiring(hw, dims), strict=True):
        step = y - x
        if topo.wraps and abs(step) > size - abs(step):  # the other way round is shorter
            step = step - size if step > 0 else step + size
        moves.append(step)
    hops = sum(abs(m) for m in moves)
    ports = sum(1 for m in moves if m)
    v = positive_number(nbytes, "bytes", error=HardwareError)
    w = _link(hw)
    bw = v / (ports * w) if ports else sympy.Integer(0)
    lat = hops * (hw.hop_latency if hw.hop_latency is not None else T_hop)
    return Route(a, b, tuple(moves), hops, ports, v, bw, lat)


@dataclass(frozen=True, slots=True)
class Gather:
    """Every other chip of the slice sending ``nbytes`` to one chip.

    Attributes:
        target: the receiving chip.
        senders: chips sending.
        ports: links into the target.
        farthest: hops from the farthest sender.
        bandwidth_time: ``senders · nbytes / (ports · w)``.
        latency_time: ``farthest · T_hop``.
    """

    target: tuple[int, ...]
    senders: int
    ports: int
    farthest: int
    nbytes: sympy.Expr
    bandwidth_time: sympy.Expr
    latency_time: sympy.Expr

    @property
    def time(self) -> sympy.Expr:
        """The gather: the bytes through the target's links, plus the farthest sender's latency."""
        return self.bandwidth_time + self.latency_time

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        return summary("Gather", str(self.target), {"senders": self.senders, "ports": self.ports, "bytes": self.nbytes,
                       "time": format_seconds_expr(self.time)})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def gather_to_one(
    target: str | Sequence[int], shape: str | Sequence[int], *, hardware: Hardware | str, nbytes: object
) -> Gather:
    """All other chips send ``nbytes`` each to chip ``target``: limited by the links into it.

    A chip has a link to each neighbour along each axis: two along an axis with wraparound (one
    if the axis has two chips), one or two along an axis without (one at either end).

    Examples:
        >>> g = gather_to_one((0, 0), "4x4", hardware="v5e", nbytes=1e6)
        >>> g.ports, g.farthest
        (2, 6)
    """
    hw = lookup_hardware(hardware)
    dims = slice_shape(shape)
    c = chip_coordinates(target, dims)
    ports = 0
    farthest = 0
    for x, size, topo in zip(c, dims, _wiring(hw, dims), strict=True):
        if size == 1:
            continue
        if topo.wraps:
            ports += 1 if size == 2 else 2
            farthest += size // 2
        else:
            ports += (1 if x > 0 else 0) + (1 if x < size - 1 else 0)
            farthest += max(x, size - 1 - x)
    senders = math.prod(dims) - 1
    v = positive_number(nbytes, "bytes", error=HardwareError)
    w = _link(hw)
    bw = senders * v / (ports * w) if ports else sympy.Integer(0)
    lat = farthest * (hw.hop_latency if hw.hop_latency is not None else T_hop)
    return Gather(c, senders, ports, farthest, v, bw, lat)


@dataclass(frozen=True, slots=True)
class HostTransfer:
    """Bytes from the hosts to ``chips`` chips over PCIe, each chip its own share at ``W_pcie``."""

    nbytes: sympy.Expr
    chips: sympy.Expr
    bandwidth: sympy.Expr
    time: sympy.Expr

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        return summary("HostTransfer", None, {"bytes": self.nbytes, "chips": self.chips, "bandwidth": self.bandwidth,
                       "time": format_seconds_expr(self.time)})  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _pcie(hw: Hardware | None) -> sympy.Expr:
    if hw is None:
        return W_PCIE
    if hw.pcie_bandwidth is None:
        raise HardwareError(
            say("{chip} has no PCIe bandwidth figure", chip=hw.label),
            hint=say("the book gives PCIe figures for TPUs; set one with {option}", option="--hw-set W_pcie=..."),
        )
    return hw.pcie_bandwidth


def host_to_chip(nbytes: object, *, hardware: Hardware | str | None = None, chips: object = 1) -> HostTransfer:
    """Load ``nbytes`` from the hosts onto ``chips`` chips (split evenly): ``bytes / (chips · W_pcie)``.

    Examples:
        >>> host_to_chip(16e9, hardware="v5e").time
        1
    """
    hw = None if hardware is None else lookup_hardware(hardware)
    v = positive_number(nbytes, "bytes", error=HardwareError)
    n = positive_number(chips, "chips", integer=True, error=HardwareError)
    w = _pcie(hw)
    return HostTransfer(v, n, w, v / (n * w))


def host_matmul_condition(*, hardware: Hardware | str | None = None):
    """When ``In[B, D] · W[D, F]`` with ``W`` streamed from the host is compute-bound: the placed
    weight's bytes over ``W_pcie`` against ``2·B·D·F/C``, solved for ``B`` (``B ≥ C/W_pcie``).

    Examples:
        >>> host_matmul_condition().text(), host_matmul_condition(hardware="v5e").text()
        ('B ≥ C/W_pcie', 'B ≥ 24625/2 (≈ 1.231e4)')
    """
    from ..algebra.symbols import dim
    from .bounds import all_at_most

    hw = None if hardware is None else lookup_hardware(hardware)
    load = place("W[D, F]").bytes_per_device / W_PCIE
    math_time = 2 * dim("B") * dim("D") * dim("F") / C
    cond = all_at_most([(load, math_time)], dim("B"))
    if hw is None:
        return cond
    values = {**hw.constants(), W_PCIE: _pcie(hw)}
    return cond.subs(values, dim("B"))


@dataclass(frozen=True, slots=True)
class SliceTotals:
    """What a slice or pod of one chip adds up to.

    Attributes:
        hardware: the chip.
        shape: the slice's shape.
        chips: chips in it.
        flops: peak FLOP/s (bf16).
        hbm_bytes: HBM capacity.
        hbm_bandwidth: HBM bandwidth.
        hosts: hosts it spans (None when the preset's host size is not known).
        dcn_bandwidth: the chips' DCN egress together (None without a figure).
        nvlink_bandwidth: on GPUs, the chips' NVLink egress together, one way (None otherwise).
        node_bisection: on GPUs, the bisection bandwidth of one NVLink domain, one way: half its GPUs
            sending to the other half at their full NVLink egress through the non-blocking switches
            (``node_size/2 · W_nvlink``; None otherwise).
    """

    hardware: Hardware
    shape: tuple[int, ...]
    chips: int
    flops: sympy.Expr
    hbm_bytes: sympy.Expr | None
    hbm_bandwidth: sympy.Expr | None
    hosts: int | None
    dcn_bandwidth: sympy.Expr | None
    nvlink_bandwidth: sympy.Expr | None = None
    node_bisection: sympy.Expr | None = None

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("SliceTotals", self.hardware.name, {"chips": self.chips, "flops": self.flops,
                       "hbm_bytes": self.hbm_bytes, "hosts": self.hosts}, shape=self.shape)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def slice_totals(hardware: Hardware | str, shape: str | Sequence[int] | int) -> SliceTotals:
    """Add up a slice of ``shape`` (``'16x16'``, or a chip count) of ``hardware``.

    Raises:
        MeshError: a bad shape.

    Examples:
        >>> t = slice_totals("h100", 16)
        >>> t.nvlink_bandwidth, t.node_bisection  # 16 × 4.5e11; 4 GPUs × 4.5e11 across the cut of a node
        (7200000000000, 1800000000000)
    """
    hw = lookup_hardware(hardware)
    dims = (int(shape),) if isinstance(shape, int) else slice_shape(shape)
    n = math.prod(dims)
    per_host = CHIPS_PER_HOST.get(hw.name, (None, ""))[0]

    def times(x: sympy.Expr | None) -> sympy.Expr | None:
        return None if x is None else as_expr(x) * n

    bisection = None
    if hw.nvlink_bandwidth is not None and hw.node_size is not None:
        bisection = sympy.Rational(hw.node_size, 2) * hw.nvlink_bandwidth
    return SliceTotals(hw, dims, n, times(hw.flops_bf16) or C * n, times(hw.hbm_bytes), times(hw.hbm_bandwidth),
                       None if per_host is None else -(-n // per_host), times(hw.dcn_bandwidth),
                       times(hw.nvlink_bandwidth), bisection)  # fmt: skip

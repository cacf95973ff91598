"""How the chips along one mesh axis are wired: the topology and the fabric.

A collective's cost depends on the shape of the network along each axis it runs
over, not only on the bandwidth of one link:

* ``ring``: a two-way ring with a wraparound link (a TPU torus axis). Data can
  flow both ways, so a gather gets twice a link's one-way bandwidth.
* ``one-way-ring``: a ring whose links carry data in one direction only (the
  book's Question 10 contrasts it with the two-way ring).
* ``line``: the same links without the wraparound (a TPU v5e axis shorter than
  16). Data from one end must cross ``N - 1`` hops to reach the other.
* ``switch``: every chip reaches every other through a switch (an NVLink node,
  or the data-centre network); a chip's egress is the bottleneck.

The fabric is the one table of networks: which bandwidth constant applies (``ici``:
``W_ici``; ``nvlink``: ``W_nvlink``; ``dcn``, the data-centre or scale-out network a
chip's NIC reaches, InfiniBand on GPUs: ``W_dcn``; ``spine``, the upper tier of a fat
tree: ``W_spine``), which latency constant a step over it pays, how an axis over it is
wired by default, and how far from the chip it sits (its tier).

Examples:
    >>> Topology("line").wraps, Topology.RING.wraps
    (False, True)
    >>> Fabric.parse("NVLink")
    <Fabric.NVLINK: 'nvlink'>
"""

from __future__ import annotations

from enum import StrEnum

import sympy

from ..algebra.symbols import T_hop, T_net, T_nvlink, W_dcn, W_ici, W_nvlink, W_spine
from ..errors import MeshError, did_you_mean
from ..messages import Message, say

__all__ = ["Fabric", "Topology"]


class Topology(StrEnum):
    """The wiring of one mesh axis."""

    RING = "ring"
    ONE_WAY_RING = "one-way-ring"
    LINE = "line"
    SWITCH = "switch"

    @property
    def wraps(self) -> bool:
        """Whether the axis has a wraparound link (rings do, a line does not)."""
        return self in (Topology.RING, Topology.ONE_WAY_RING)

    @property
    def describe(self) -> Message:
        """A few words for reports: 'two-way ring with wraparound', ..."""
        return {
            Topology.RING: say("two-way ring with wraparound"),
            Topology.ONE_WAY_RING: say("one-way ring"),
            Topology.LINE: say("line without wraparound"),
            Topology.SWITCH: say("fully connected switch"),
        }[self]

    @classmethod
    def parse(cls, value: str | Topology) -> Topology:
        """Read a topology name, forgiving case, ``_`` and common synonyms.

        Raises:
            MeshError: for an unknown name.
        """
        if isinstance(value, Topology):
            return value
        key = str(value).strip().lower().replace("_", "-").replace(" ", "-")
        key = {
            "torus": "ring",
            "two-way-ring": "ring",
            "bidirectional-ring": "ring",
            "wraparound": "ring",
            "unidirectional-ring": "one-way-ring",
            "one-way": "one-way-ring",
            "oneway-ring": "one-way-ring",
            "no-wraparound": "line",
            "chain": "line",
            "mesh": "line",
            "nvswitch": "switch",
            "fully-connected": "switch",
            "all-to-all": "switch",
        }.get(key, key)
        try:
            return cls(key)
        except ValueError:
            raise MeshError(
                say("unknown topology '{value}'", value=value),
                hint=did_you_mean(key, [t.value for t in cls]),
            ) from None


class Fabric(StrEnum):
    """The network a mesh axis (or one level of it) runs over: the one table of fabrics."""

    ICI = "ici"
    NVLINK = "nvlink"
    DCN = "dcn"
    SPINE = "spine"

    @property
    def bandwidth(self) -> sympy.Symbol:
        """The constant for this fabric: ``W_ici``, ``W_nvlink``, ``W_dcn`` or ``W_spine``."""
        return {Fabric.ICI: W_ici, Fabric.NVLINK: W_nvlink, Fabric.DCN: W_dcn, Fabric.SPINE: W_spine}[self]

    @property
    def latency(self) -> sympy.Symbol:
        """The latency of one step over this fabric in NCCL's model (``T_nvlink``, ``T_net``); ``T_hop``
        on ICI (a TPU preset prices every step, DCN included, at the book's ``T_hop``)."""
        return {Fabric.ICI: T_hop, Fabric.NVLINK: T_nvlink, Fabric.DCN: T_net, Fabric.SPINE: T_net}[self]

    @property
    def tier(self) -> int:
        """How far from the chip: 0 for the chip's own links (ICI, NVLink), 1 for its NIC's network,
        2 for a fat tree's spine. A collective crossing several tiers is costed tier by tier."""
        return {Fabric.ICI: 0, Fabric.NVLINK: 0, Fabric.DCN: 1, Fabric.SPINE: 2}[self]

    @property
    def topology(self) -> Topology:
        """How a mesh axis over this network is wired unless told otherwise: ICI axes are rings, the
        others switches (a chip's egress is the limit)."""
        return Topology.RING if self is Fabric.ICI else Topology.SWITCH

    @property
    def directions(self) -> int:
        """How many link directions the constant counts: ``W_ici`` is the book's two-way
        figure (so one link carries ``W_ici / 2`` each way); the others are one-way."""
        return 2 if self is Fabric.ICI else 1

    @property
    def describe(self) -> Message:
        """A few words for reports."""
        return {
            Fabric.ICI: say("ICI links"),
            Fabric.NVLINK: say("NVLink through NVSwitches"),
            Fabric.DCN: say("the scale-out network"),
            Fabric.SPINE: say("the fat tree's spine"),
        }[self]

    @classmethod
    def parse(cls, value: str | Fabric) -> Fabric:
        """Read a fabric name (``ici``, ``nvlink``, ``dcn``, ``spine``; ``ib``, ``infiniband``, ``ethernet``,
        ``scale-out`` and ``leaf`` mean ``dcn``).

        Raises:
            MeshError: for an unknown name.
        """
        if isinstance(value, Fabric):
            return value
        key = str(value).strip().lower().replace("_", "-")
        key = {
            "infiniband": "dcn",
            "ib": "dcn",
            "ethernet": "dcn",
            "roce": "dcn",
            "scale-out": "dcn",
            "scaleout": "dcn",
            "leaf": "dcn",
            "nic": "dcn",
            "nvl": "nvlink",
            "nvswitch": "nvlink",
            "core": "spine",
        }.get(key, key)
        try:
            return cls(key)
        except ValueError:
            raise MeshError(
                say("unknown fabric '{value}'", value=value),
                hint=did_you_mean(key, [f.value for f in cls]),
            ) from None

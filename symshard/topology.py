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

The fabric says which bandwidth constant applies: ``ici`` (``W_ici``),
``nvlink`` (``W_nvlink``) or ``dcn`` (``W_dcn``).

Examples:
    >>> Topology("line").wraps, Topology.RING.wraps
    (False, True)
    >>> Fabric.parse("NVLink")
    <Fabric.NVLINK: 'nvlink'>
"""

from __future__ import annotations

from enum import StrEnum

import sympy

from .errors import MeshError, did_you_mean
from .symbols import W_dcn, W_ici, W_nvlink

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
    def describe(self) -> str:
        """A few words for reports: 'two-way ring with wraparound', ..."""
        return {
            Topology.RING: "two-way ring with wraparound",
            Topology.ONE_WAY_RING: "one-way ring",
            Topology.LINE: "line without wraparound",
            Topology.SWITCH: "fully connected switch",
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
                f"unknown topology '{value}'",
                hint=did_you_mean(key, [t.value for t in cls]),
            ) from None


class Fabric(StrEnum):
    """The network a mesh axis runs over, which fixes its bandwidth constant."""

    ICI = "ici"
    NVLINK = "nvlink"
    DCN = "dcn"

    @property
    def bandwidth(self) -> sympy.Symbol:
        """The constant for this fabric: ``W_ici``, ``W_nvlink`` or ``W_dcn``."""
        return {Fabric.ICI: W_ici, Fabric.NVLINK: W_nvlink, Fabric.DCN: W_dcn}[self]

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

    @classmethod
    def parse(cls, value: str | Fabric) -> Fabric:
        """Read a fabric name (``ici``, ``nvlink``, ``dcn``; ``ib`` means ``dcn``).

        Raises:
            MeshError: for an unknown name.
        """
        if isinstance(value, Fabric):
            return value
        key = str(value).strip().lower()
        key = {"infiniband": "dcn", "ib": "dcn", "ethernet": "dcn", "nvl": "nvlink"}.get(key, key)
        try:
            return cls(key)
        except ValueError:
            raise MeshError(
                f"unknown fabric '{value}'",
                hint=did_you_mean(key, [f.value for f in cls]),
            ) from None

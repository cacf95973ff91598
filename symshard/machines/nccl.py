"""NCCL's own figures: the latency table of its tuning model and nccl-tests' bus bandwidth.

NCCL predicts the time of a collective as ``latency + bytes / bandwidth``. In its
tuning model (``src/graph/tuning.cc``) the latency of a ring collective is a base
latency per algorithm and protocol plus, for each of the ring's steps, the latency
of the link the step crosses::

    latency = baseLat[ring][protocol]
              + (steps - inter_steps) * hwLat[NVLink][ring][protocol]
              + inter_steps * hwLat[network][ring][protocol]

with ``2 (N - 1)`` steps for an AllReduce over N ranks (``2 (nodes - 1)`` of them
between nodes) and ``N - 1`` for an AllGather or ReduceScatter (``nodes - 1``).
symshard prices GPU collectives the same way: ``T_base`` is the base latency,
``T_nvlink`` and ``T_net`` the per-step latencies, and the GPU presets take their
values from :data:`RING_LATENCY_US`, the one table of them, for the protocol
:data:`DEFAULT_PROTOCOL`. The table is that of one NCCL release (:data:`SOURCE`);
later releases changed some figures, and a user can replace any of them
(``--hw-set T_net=...``) or fit them to measurements (``symshard calibrate``).

What the model leaves out: NCCL multiplies LL's NVLink step latency by 1.8 on
multi-node rings and picks, per message size, the algorithm (ring, tree, ...) and
protocol with the lowest predicted time; symshard uses one protocol's ring figures.

nccl-tests reports ``algbw = bytes / time`` and a *bus bandwidth* that corrects for
the algorithm's traffic, so that it can be compared with a link's speed:
``busbw = algbw · bus_factor`` (:func:`bus_factor`).

Examples:
    >>> latencies("LL")["T_base"], latencies("Simple")["T_net"]
    (9/2500000, 3/312500)
    >>> bus_factor("allreduce", 16), bus_factor("allgather", 8)
    (15/8, 7/8)
"""

from __future__ import annotations

import sympy

from ..errors import HardwareError, did_you_mean
from ..messages import say

__all__ = ["DEFAULT_PROTOCOL", "PROTOCOLS", "RING_LATENCY_US", "SOURCE", "VERSION", "bus_factor", "latencies"]

VERSION = "2.7.5"
"""The NCCL release the latency table is read from."""

SOURCE = (
    "NCCL 2.7.5, src/graph/tuning.cc (github.com/NVIDIA/nccl, commit 01afd20a77b5804e0ecf1042509dd9d20ebf9e93): "
    "baseLat and hwLat of the ring algorithm"
)
"""Where :data:`RING_LATENCY_US` comes from."""

PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocols: LL (low latency, a quarter of the bandwidth), LL128, Simple (full bandwidth)."""

DEFAULT_PROTOCOL = "LL"
"""The protocol whose latencies the GPU presets use: NCCL picks LL for the small messages whose time
latency dominates (a large message's time barely depends on latency)."""

RING_LATENCY_US: dict[str, dict[str, str]] = {
    # protocol: base latency, then one ring step over each kind of link, in microseconds
    "LL": {"T_base": "3.6", "T_nvlink": "0.47", "T_pci": "1.0", "T_net": "2.7"},
    "LL128": {"T_base": "10.0", "T_nvlink": "1.9", "T_pci": "2.5", "T_net": "4.0"},
    "Simple": {"T_base": "8.4", "T_nvlink": "3.4", "T_pci": "5.7", "T_net": "9.6"},
}
"""NCCL's ring latencies in microseconds, as printed in :data:`SOURCE` (the one table of them)."""

_BUS = {"allreduce": 2, "allgather": 1, "reducescatter": 1}


def latencies(protocol: str = DEFAULT_PROTOCOL) -> dict[str, sympy.Rational]:
    """The ring latencies of ``protocol`` in seconds, exact: ``T_base``, ``T_nvlink``, ``T_pci``, ``T_net``.

    Raises:
        HardwareError: an unknown protocol.
    """
    key = {p.lower(): p for p in PROTOCOLS}.get(str(protocol).strip().lower())
    if key is None:
        raise HardwareError(
            say("unknown NCCL protocol '{value}'", value=protocol), hint=did_you_mean(str(protocol), PROTOCOLS)
        )
    return {name: sympy.Rational(value) / 10**6 for name, value in RING_LATENCY_US[key].items()}


def bus_factor(collective: str, ranks: int) -> sympy.Rational:
    """nccl-tests' ``busbw / algbw`` for a collective over ``ranks``: ``2 (n - 1) / n`` for an AllReduce,
    ``(n - 1) / n`` for an AllGather or ReduceScatter.

    Raises:
        HardwareError: a collective nccl-tests does not correct this way.
    """
    key = str(collective).strip().lower().replace("_", "").replace("-", "")
    if key not in _BUS:
        raise HardwareError(
            say("unknown collective '{value}' for bus bandwidth", value=collective),
            hint=did_you_mean(key, sorted(_BUS)),
        )
    return sympy.Rational(_BUS[key] * (ranks - 1), ranks)

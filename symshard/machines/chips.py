"""Chip constants and the preset catalogue, every figure with its source.

A :class:`Hardware` is a frozen record of what one chip, and the network it sits
in, can do: peak FLOP/s, HBM capacity and bandwidth, the one-way bandwidth of one
ICI link (TPUs) or of a GPU's NVLink egress, its egress into the data-centre or
scale-out network, its share of a fat tree's spine, and latencies. Its
:meth:`~Hardware.constants` map the symbols of :mod:`symshard.algebra.symbols` to exact
numbers, which is how a symbolic cost becomes seconds.

Conventions (see ``docs``): ``W_ici`` is the book's *bidirectional* bandwidth of
one axis, so a preset that stores a one-way link bandwidth ``w`` substitutes
``W_ici = 2 w``. TPU latency is the book's ``T_hop`` per hop; GPU latencies are
NCCL's (``T_base``, ``T_nvlink``, ``T_net``, from its tuning model, see
:mod:`symshard.machines.nccl`). Values no source gives (v4p DCN, A100 scale-out) are left
out rather than invented; pass them with :meth:`Hardware.with_constants`, or fit
them to measurements (``symshard calibrate``).

The presets also know their wiring: which mesh axes get a wraparound link (TPU
v5e and v6e only along axes of 16; v4p, v5p and TPU7x only on whole 4×4×4 cubes)
and, on GPUs, the network's levels (:attr:`Hardware.levels`): NVLink domains of
8 GPUs (72 on NVL72), scalable units of 32 nodes under the leaf switches of a DGX
SuperPod, the spine above.

Examples:
    >>> v5e = hardware("v5e")
    >>> v5e.label, v5e.constants()[W_ici]
    ('TPU v5e', 90000000000)
    >>> hardware("h100").with_constants(W_hbm=3.4e12).hbm_bandwidth
    3400000000000
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path, PurePosixPath
from typing import NamedTuple, TypeAlias

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.symbols import (
    HARDWARE_SYMBOLS,
    C,
    T_base,
    T_hop,
    T_net,
    T_nvlink,
    W_dcn,
    W_hbm,
    W_ici,
    W_nvlink,
    W_pcie,
    W_spine,
)
from ..errors import HardwareError, UnknownHardwareError, did_you_mean
from ..messages import Message, say
from . import nccl
from .network import Level, Placement, place
from .topology import Fabric, Topology

__all__ = [
    "COST_MODELS",
    "HARDWARE",
    "Attained",
    "AttainedRates",
    "Hardware",
    "Wiring",
    "check_attained",
    "constant_ranges",
    "exact_number",
    "hardware",
    "hardware_files",
    "load_hardware",
]

Number: TypeAlias = sympy.Rational


def exact_number(value: object, what: str) -> sympy.Expr:
    """A constant as an exact SymPy value: numbers (``1e-6``, ``'4.5e10'``) become rationals, so costs stay
    exact; a symbolic expression is kept as it is.

    Raises:
        HardwareError: a number out of range, or text that is not a number.
    """
    if isinstance(value, sympy.Basic) and not value.is_number:
        return value
    return _num(value, what)


def _num(value: object, what: str) -> sympy.Rational:
    """An exact positive SymPy number from an int, float or string like '4.5e10', within 1e-30..1e30."""
    if isinstance(value, sympy.Rational):
        number = value
    else:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        text = repr(value) if isinstance(value, float) else str(value).strip()
        try:
            approx = float(text)
        except (TypeError, ValueError, OverflowError):
            raise HardwareError(
                say("{name} must be a number, got {value}", name=what, value=shown),
                hint=say("write it like {example}", example=f"{what}=4.5e10"),
            ) from None
        if approx != approx or not 1e-30 <= abs(approx) <= 1e30:
            raise HardwareError(
                say("{name} = {value} is out of range", name=what, value=shown),
                hint=say("hardware constants lie between 1e-30 and 1e30 (e.g. 4.5e10 B/s, 1e-6 s)"),
            )
        try:
            number = sympy.Rational(text)
        except (TypeError, ValueError, SyntaxError):
            raise HardwareError(
                say("{name} must be a number, got {value}", name=what, value=shown),
                hint=say("write it like {example}", example=f"{what}=4.5e10"),
            ) from None
    if not number.is_positive:
        raise HardwareError(
            say("{name} must be positive, got {value}", name=what, value=str(value)),
            hint=say("bandwidths, FLOP/s and latencies are > 0"),
        )
    return number


_BOOK_TPU = "How to Scale Your Model, Part 2 (TPUs), 'TPU specs' tables"
_BOOK_GPU = "How to Scale Your Model, Part 12 (GPUs), 'Summary of GPU specs'"
_BOOK_LAT = "How to Scale Your Model, Part 3 (sharding): 'each hop ... around 1us'"
_BOOK_NET = "How to Scale Your Model, Part 12 (GPUs), networking: DGX SuperPod"
_NCCL_LAT = f"from NCCL's tuning model ({nccl.SOURCE}), protocol {nccl.DEFAULT_PROTOCOL}"

# The wiring rules the presets use (see Hardware.wiring).
_TORUS16 = "torus-16"  # a TPU v5e/v6e axis wraps only when it has 16 chips
_CUBE = "cube"  # v4p/v5p/TPU7x wrap only on whole 4x4x4 cubes
_NVLINK = "nvlink"  # GPUs: switch domains of node_size GPUs, scale-out beyond
_RING = "ring"  # a custom chip: every axis a wraparound ring


@dataclass(frozen=True, slots=True)
class AttainedRates:
    """What one dtype's kernels attain on the chip, fitted to measurements (an expectation, not a bound).

    A kernel of ``F`` FLOPs that reads and writes ``B`` bytes of HBM is expected to take
    ``t0 + (Tc**p + Tm**p)**(1/p)`` with ``Tc = F / flops`` and ``Tm = B / hbm_bandwidth``: a fixed cost,
    then compute and memory overlapping as far as ``overlap`` (``p``) says: ``1`` adds them (no
    overlap), ``None`` takes the larger (perfect overlap, the roofline's ``max``), ``2`` lies between.
    See :mod:`symshard.costs.kernels`.

    Attributes:
        dtype: the canonical dtype (``'bf16'``).
        flops: attained FLOP/s (``C'``).
        hbm_bandwidth: attained HBM bandwidth, bytes/s (``W'``), bytes read and written counted.
        kernel_overhead: the fixed cost of one kernel, seconds (``t0``).
        overlap: the exponent ``p`` (a positive integer), or None for the larger of the two.

    Examples:
        >>> AttainedRates("bf16", "7.5e14", "4.6e12", "2e-5", 2).flops
        750000000000000
    """

    dtype: str
    flops: Number
    hbm_bandwidth: Number
    kernel_overhead: Number
    overlap: int | None = None

    def __post_init__(self) -> None:
        from ..algebra.dtypes import canonical_dtype

        object.__setattr__(self, "dtype", canonical_dtype(self.dtype))
        for name in ("flops", "hbm_bandwidth", "kernel_overhead"):
            object.__setattr__(self, name, _num(getattr(self, name), f"attained.{self.dtype}.{name}"))
        if self.overlap is not None and (
            isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 1 <= self.overlap <= 64
        ):
            raise HardwareError(
                say("attained.{dtype}.overlap must be a whole number from 1 to 64 or 'max', got {value}",
                    dtype=self.dtype, value=repr(self.overlap)),
                hint=say("1 adds compute and memory time, 'max' takes the larger, 2 lies between"),
            )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Attained:
    """The rates a chip attained in measurements, per dtype, and where they come from.

    Kept beside the data sheet's peaks (:meth:`Hardware.constants`, which stay the bound): a calibrated
    chip reports both the bound and the expected time (:func:`symshard.costs.kernels.kernel_time`).

    Attributes:
        rates: one :class:`AttainedRates` per dtype, sorted by dtype.
        file: the measurement file's name; sha256: its digest.
        device: the device measured, as the user or JAX named it ('' if not known).
        date: the measurement's date, ``YYYY-MM-DD`` ('' if not known).
        rows: how many measured rows the fit used.
    """

    rates: tuple[AttainedRates, ...]
    file: str = ""
    sha256: str = ""
    device: str = ""
    date: str = ""
    rows: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rates", tuple(sorted(self.rates, key=lambda r: r.dtype)))

    def of(self, dtype: str) -> AttainedRates | None:
        """The rates for ``dtype`` (fp16 and bf16 are separate), or None if it was not measured."""
        from ..algebra.dtypes import canonical_dtype

        key = canonical_dtype(dtype)
        return next((r for r in self.rates if r.dtype == key), None)

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The dtypes measured."""
        return tuple(r.dtype for r in self.rates)


class Wiring(NamedTuple):
    """How one mesh axis is wired on a chip: topology, outermost fabric, why, and the levels it crosses."""

    topology: Topology
    fabric: Fabric
    reason: Message
    spans: tuple[tuple[Fabric, sympy.Expr], ...] = ()


@dataclass(frozen=True, slots=True)
class Hardware:
    """What one chip (and its network) can do; ``None`` where the source gives no figure.

    Attributes:
        name: catalogue key, e.g. ``'tpu-v5e'``.
        label: display name, e.g. ``'TPU v5e'``.
        flops_bf16: peak bf16 matmul FLOP/s (``C``).
        flops_8bit: peak int8 / fp8 FLOP/s (``C`` for 8-bit dtypes).
        hbm_bytes: HBM capacity in bytes.
        hbm_bandwidth: HBM bandwidth in bytes/s (``W_hbm``).
        ici_link_bandwidth: one ICI link, one direction, bytes/s (``W_ici / 2``).
        nvlink_bandwidth: a GPU's NVLink egress in one direction, bytes/s (``W_nvlink``).
        dcn_bandwidth: a chip's egress into the data-centre or scale-out network, bytes/s (``W_dcn``;
            on a GPU its NIC, a node's egress divided by its GPUs).
        pcie_bandwidth: host PCIe bandwidth, bytes/s (``W_pcie``).
        hop_latency: latency of one collective hop on ICI, seconds (``T_hop``).
        base_latency: NCCL's base latency of a collective, seconds (``T_base``).
        nvlink_latency: NCCL's latency of one ring step over NVLink, seconds (``T_nvlink``).
        net_latency: NCCL's latency of one ring step over the network, seconds (``T_net``).
        spine_bandwidth: a GPU's share of the fat tree's spine bandwidth, bytes/s (``W_spine``).
        wiring: which axes get wraparound links (``torus-16``, ``cube``, ``nvlink``, ``ring``).
        node_size: GPUs per NVLink domain.
        leaf_nodes: nodes per scalable unit under one set of leaf switches (a spine joins the units);
            None for one flat scale-out network.
        collective_model: the collective cost model (``book`` or ``ring``) the network figures were
            fitted with (``symshard calibrate`` records it in the hardware file); commands given this
            chip price collectives with it unless told otherwise. None for the presets.
        sources: ``(field, citation)`` pairs.
        attained: the rates measured on the chip (``symshard calibrate --chip``), None for the presets.
    """

    name: str
    label: str
    flops_bf16: Number | None = None
    flops_8bit: Number | None = None
    hbm_bytes: Number | None = None
    hbm_bandwidth: Number | None = None
    ici_link_bandwidth: Number | None = None
    nvlink_bandwidth: Number | None = None
    dcn_bandwidth: Number | None = None
    pcie_bandwidth: Number | None = None
    hop_latency: Number | None = None
    base_latency: Number | None = None
    nvlink_latency: Number | None = None
    net_latency: Number | None = None
    spine_bandwidth: Number | None = None
    wiring: str = _RING
    node_size: int | None = None
    leaf_nodes: int | None = None
    collective_model: str | None = None
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    attained: Attained | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _NUMERIC_FIELDS and value is not None:
                object.__setattr__(self, f.name, _num(value, f.name))

    # -- constants -------------------------------------------------------------------

    def constants(self, dtype: str = "bf16") -> dict[sympy.Symbol, sympy.Rational]:
        """The symbols this chip gives numbers for, as exact SymPy numbers.

        ``C`` is the 8-bit peak for int8 / fp8 / int4 dtypes, the bf16 peak otherwise.
        """
        from ..algebra.dtypes import canonical_dtype

        eight_bit = canonical_dtype(dtype) in ("int8", "fp8", "int4")
        values = {
            C: self.flops_8bit if eight_bit and self.flops_8bit else self.flops_bf16,
            W_hbm: self.hbm_bandwidth,
            W_ici: 2 * self.ici_link_bandwidth if self.ici_link_bandwidth else None,
            W_nvlink: self.nvlink_bandwidth,
            W_dcn: self.dcn_bandwidth,
            W_spine: self.spine_bandwidth,
            W_pcie: self.pcie_bandwidth,
            T_hop: self.hop_latency,
            T_base: self.base_latency,
            T_nvlink: self.nvlink_latency,
            T_net: self.net_latency,
        }
        return {s: v for s, v in values.items() if v is not None}

    def with_constants(self, values: Mapping[str, object] | None = None, **kw: object) -> Hardware:
        """A copy with some constants replaced, by symbol name (``W_hbm=3.4e12``).

        ``W_ici`` sets the one-way link bandwidth to half the value given; ``node_size`` (GPUs per NVLink
        domain) and ``leaf_nodes`` (nodes per scalable unit) reshape a GPU network.

        Raises:
            HardwareError: for an unknown name or a value that is not a positive number.
        """
        given = dict(values or {}, **kw)
        changes: dict[str, object] = {}
        notes = list(self.sources)
        for key, value in given.items():
            if key in _SHAPE_FIELDS:
                number = _num(value, key)
                if not number.is_integer:
                    raise HardwareError(
                        say("{name} must be a whole number, got {value}", name=key, value=str(value)),
                        hint=say("write it like {example}", example=f"{key}=8"),
                    )
                changes[key] = int(number)
                notes = [s for s in notes if s[0] != key] + [(key, say("set by the user"))]
                continue
            if key not in _SYMBOL_FIELDS:
                raise HardwareError(
                    say("unknown hardware constant '{name}'", name=key),
                    hint=did_you_mean(key, sorted(_SYMBOL_FIELDS) + sorted(_SHAPE_FIELDS)),
                )
            number = _num(value, key)
            target = _SYMBOL_FIELDS[key]
            if key == "W_ici":
                number = number / 2
            changes[target] = number
            notes = [s for s in notes if s[0] != target] + [(target, say("set by the user"))]
        return replace(self, **changes, sources=tuple(notes))  # type: ignore[arg-type]

    def source(self, field_name: str) -> str | None:
        """Where the figure in ``field_name`` comes from."""
        return dict(self.sources).get(field_name)

    # -- wiring --------------------------------------------------------------------------

    @property
    def latency_model(self) -> str:
        """How latency enters a collective's time: ``nccl`` on GPUs (NCCL's tuning model, added to the
        bandwidth time), ``book`` otherwise (``max(T_hop · hops, ...)``)."""
        return "nccl" if self.wiring == _NVLINK else "book"

    def latency_of(self, fabric: Fabric) -> sympy.Symbol:
        """The latency one hop or ring step over ``fabric`` costs on this chip: ``T_nvlink`` or ``T_net``
        on a GPU (NCCL's), ``T_hop`` on a TPU (the book's, DCN included, which the book gives no
        figure of)."""
        return fabric.latency if self.latency_model == "nccl" else T_hop

    @property
    def levels(self) -> tuple[Level, ...]:
        """The network's levels from the chip up: a GPU's NVLink domain, then the scale-out network (its
        leaf switches' scalable unit and the spine above, when the preset has them); a TPU's ICI.

        Examples:
            >>> [(lv.fabric.value, lv.domain) for lv in hardware("h100").levels]
            [('nvlink', 8), ('dcn', 256), ('spine', None)]
        """
        if self.wiring != _NVLINK:
            return (Level(Fabric.ICI, None),)
        if self.node_size is None:
            return (Level(Fabric.NVLINK, None),)
        if self.leaf_nodes is None:
            return (Level(Fabric.NVLINK, self.node_size), Level(Fabric.DCN, None))
        return (
            Level(Fabric.NVLINK, self.node_size),
            Level(Fabric.DCN, self.node_size * self.leaf_nodes),
            Level(Fabric.SPINE, None),
        )

    @property
    def node_egress(self) -> sympy.Rational | None:
        """A GPU node's (or NVLink domain's) scale-out egress: its GPUs times each one's ``W_dcn``."""
        if self.wiring != _NVLINK or self.node_size is None or self.dcn_bandwidth is None:
            return None
        return self.node_size * self.dcn_bandwidth

    def wiring_for(self, sizes: Mapping[str, sympy.Expr]) -> dict[str, Wiring]:
        """Topology, fabric, a reason and the network levels crossed, for each mesh axis of the given
        sizes (in mesh order, the last varying fastest).

        Examples:
            >>> w = hardware("v5e").wiring_for({"X": 8, "Y": 16})
            >>> w["X"].topology.value, w["Y"].topology.value
            ('line', 'ring')
            >>> str(hardware("h100").wiring_for({"X": 4, "Y": 4})["X"].reason)
            '2 GPUs per 8-GPU NVLink domain, 2 domains over the scale-out network (hierarchical)'
        """
        names = list(sizes)
        out: dict[str, Wiring] = {}
        numeric = all(as_expr(s).is_number for s in sizes.values())
        if self.wiring == _TORUS16:
            for n in names:
                s = as_expr(sizes[n])
                if not s.is_number:
                    why = say("{chip}: size unknown, wraparound assumed", chip=self.label)
                    out[n] = Wiring(Topology.RING, Fabric.ICI, why)
                elif s == 16:
                    out[n] = Wiring(
                        Topology.RING, Fabric.ICI, say("{chip} axes of 16 have wraparound", chip=self.label)
                    )
                else:
                    out[n] = Wiring(Topology.LINE, Fabric.ICI, say("{chip} wraps only axes of 16", chip=self.label))
        elif self.wiring == _CUBE:
            if not numeric:
                for n in names:
                    why = say("{chip}: sizes unknown, wraparound assumed", chip=self.label)
                    out[n] = Wiring(Topology.RING, Fabric.ICI, why)
            else:
                total = sympy.prod([as_expr(sizes[n]) for n in names])
                cube = total % 64 == 0 and all(as_expr(sizes[n]) % 4 == 0 for n in names)
                for n in names:
                    if cube:
                        why = say("{chip} slices of whole 4x4x4 cubes wrap", chip=self.label)
                        out[n] = Wiring(Topology.RING, Fabric.ICI, why)
                    else:
                        why = say("{chip} wraps only slices of whole 4x4x4 cubes", chip=self.label)
                        out[n] = Wiring(Topology.LINE, Fabric.ICI, why)
        elif self.wiring == _NVLINK:
            placed = place(sizes, self.levels)
            for n in names:
                p = placed[n]
                spans = p.spans if len(p.spans) > 1 else ()
                out[n] = Wiring(Topology.SWITCH, p.fabric, self._reason(as_expr(sizes[n]), p), spans)
        else:
            for n in names:
                out[n] = Wiring(Topology.RING, Fabric.ICI, say("{chip}: every axis a wraparound ring", chip=self.label))
        return out

    def _reason(self, size: sympy.Expr, p: Placement) -> Message:
        """Why a GPU mesh axis is wired as placed, as a message."""
        node = self.node_size
        if not size.is_number:
            return say("{chip}: size unknown, one NVLink domain assumed", chip=self.label)
        if node is None:
            return say("{chip}: one NVLink domain", chip=self.label)
        if not p.even and len(p.spans) > 1:
            return say(
                "{inside} {inside:GPU|GPUs} per {node}-GPU NVLink domain; the {count} domains fall unevenly into the "
                "levels above, priced over {fabric} (hierarchical)",
                inside=int(p.spans[0][1]),
                node=node,
                count=int(sympy.prod([c for _, c in p.spans[1:]])),
                fabric=p.fabric.describe,
            )
        if not p.even:
            return say(
                "falls unevenly into NVLink domains of {node} {node:GPU|GPUs}: every step priced over {fabric}",
                node=node,
                fabric=p.fabric.describe,
            )
        counts = {f: int(c) for f, c in p.spans}
        inside = counts.get(Fabric.NVLINK)
        nodes = counts.get(Fabric.DCN)
        units = counts.get(Fabric.SPINE)
        if nodes is None and units is None:
            return say("inside one {count}-GPU NVLink domain", count=node)
        if inside is None and units is None:
            return say("spans NVLink domains of {count} {count:GPU|GPUs}: runs at scale-out bandwidth", count=node)
        if units is None:
            return say(
                "{inside} {inside:GPU|GPUs} per {node}-GPU NVLink domain, {nodes} domains over the scale-out network (hierarchical)",
                inside=inside,
                node=node,
                nodes=nodes,
            )
        su = self.leaf_nodes
        if inside and nodes:
            return say(
                "{inside} {inside:GPU|GPUs} per {node}-GPU NVLink domain, {nodes} {nodes:node|nodes} per scalable unit, "
                "{units} scalable {units:unit|units} of {su} {su:node|nodes} over the spine (hierarchical)",
                inside=inside, node=node, nodes=nodes, units=units, su=su,
            )  # fmt: skip
        if inside:
            return say(
                "{inside} {inside:GPU|GPUs} per {node}-GPU NVLink domain, one node per scalable unit, "
                "{units} scalable {units:unit|units} of {su} {su:node|nodes} over the spine (hierarchical)",
                inside=inside, node=node, units=units, su=su,
            )  # fmt: skip
        if nodes:
            return say(
                "one GPU per {node}-GPU NVLink domain, {nodes} {nodes:node|nodes} per scalable unit, "
                "{units} scalable {units:unit|units} of {su} {su:node|nodes} over the spine (hierarchical)",
                node=node, nodes=nodes, units=units, su=su,
            )  # fmt: skip
        return say(
            "one GPU per {node}-GPU NVLink domain, one node per scalable unit, "
            "{units} scalable {units:unit|units} of {su} {su:node|nodes} over the spine (hierarchical)",
            node=node, units=units, su=su,
        )  # fmt: skip

    # -- display -------------------------------------------------------------------

    def __str__(self) -> str:
        return self.label

    def table_row(self) -> dict[str, object]:
        """The figures as a flat mapping (for tables and JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("sources", "attained")}

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Hardware", self.name, {"C": self.flops_bf16, "W_hbm": self.hbm_bandwidth, "M_hbm": self.hbm_bytes,
                       "W_ici": self.ici_link_bandwidth, "W_nvlink": self.nvlink_bandwidth, "W_dcn": self.dcn_bandwidth})  # fmt: skip


_NUMERIC_FIELDS = {
    "flops_bf16",
    "flops_8bit",
    "hbm_bytes",
    "hbm_bandwidth",
    "ici_link_bandwidth",
    "nvlink_bandwidth",
    "dcn_bandwidth",
    "pcie_bandwidth",
    "hop_latency",
    "base_latency",
    "nvlink_latency",
    "net_latency",
    "spine_bandwidth",
}

_SHAPE_FIELDS = {"node_size", "leaf_nodes"}

COST_MODELS = ("book", "ring")
"""The collective cost models a hardware file may name (:data:`symshard.costs.costmodels.MODELS` says what each is)."""

_SYMBOL_FIELDS = {
    "C": "flops_bf16",
    "C_8bit": "flops_8bit",
    "W_hbm": "hbm_bandwidth",
    "W_ici": "ici_link_bandwidth",
    "W_link": "ici_link_bandwidth",
    "W_nvlink": "nvlink_bandwidth",
    "W_dcn": "dcn_bandwidth",
    "W_spine": "spine_bandwidth",
    "W_pcie": "pcie_bandwidth",
    "T_hop": "hop_latency",
    "T_base": "base_latency",
    "T_nvlink": "nvlink_latency",
    "T_net": "net_latency",
    "M_hbm": "hbm_bytes",
}
if not set(HARDWARE_SYMBOLS) <= set(_SYMBOL_FIELDS):  # pragma: no cover - a symbol without a field is a bug
    raise RuntimeError("every hardware symbol needs a field")


def _tpu(name, label, bf16, int8, hbm, hbm_bw, link, dcn, pcie, wiring, notes=()) -> Hardware:
    src = [(f, _BOOK_TPU) for f in ("flops_bf16", "flops_8bit", "hbm_bytes", "hbm_bandwidth", "ici_link_bandwidth")]
    if dcn is not None:
        src.append(("dcn_bandwidth", _BOOK_TPU + " (DCN per chip)"))
    if pcie is not None:
        src.append(("pcie_bandwidth", _BOOK_TPU + " (PCIe)"))
    src.append(("hop_latency", _BOOK_LAT))
    src.extend(notes)
    return Hardware(
        name=name,
        label=label,
        flops_bf16=bf16,
        flops_8bit=int8,
        hbm_bytes=hbm,
        hbm_bandwidth=hbm_bw,
        ici_link_bandwidth=link,
        dcn_bandwidth=dcn,
        pcie_bandwidth=pcie,
        hop_latency="1e-6",
        wiring=wiring,
        sources=tuple(src),
    )


def _gpu(name, label, bf16, fp8, hbm, hbm_bw, nvlink, node, scale_out, notes=(), leaf=None, spine=None) -> Hardware:
    src = [(f, _BOOK_GPU) for f in ("flops_bf16", "flops_8bit", "hbm_bytes", "hbm_bandwidth", "nvlink_bandwidth")]
    if scale_out is not None:
        src.append(("dcn_bandwidth", _BOOK_GPU + " (InfiniBand per GPU: 4.0e11 B/s per 8-GPU node)"))
    if leaf is not None:
        src.append(("leaf_nodes", _BOOK_NET + ": a scalable unit of 32 nodes under 8 leaf switches"))
        src.append(("spine_bandwidth", _BOOK_NET + ": full bisection, 400 GB/s per node at the spine (51.2 TB/s "
                    "for 1024 GPUs, corrected July 2026), 5e10 per GPU"))  # fmt: skip
    src.append(("node_size", _BOOK_GPU + f" ({node} GPUs per NVLink domain)"))
    lat = nccl.latencies(nccl.DEFAULT_PROTOCOL)
    src.extend((f, _NCCL_LAT) for f in ("base_latency", "nvlink_latency", "net_latency"))
    src.extend(notes)
    return Hardware(
        name=name,
        label=label,
        flops_bf16=bf16,
        flops_8bit=fp8,
        hbm_bytes=hbm,
        hbm_bandwidth=hbm_bw,
        nvlink_bandwidth=nvlink,
        dcn_bandwidth=scale_out,
        base_latency=lat["T_base"],
        nvlink_latency=lat["T_nvlink"],
        net_latency=lat["T_net"],
        spine_bandwidth=spine,
        wiring=_NVLINK,
        node_size=node,
        leaf_nodes=leaf,
        sources=tuple(src),
    )


_SAME_POD = [
    (
        "leaf_nodes",
        _BOOK_NET + ": the book describes the DGX H100 SuperPod; its 32-node scalable unit and "
        "full-bisection spine are taken to hold for the B200's",
    ),
    ("spine_bandwidth", _BOOK_NET + ": full bisection as in the DGX H100 SuperPod, 5e10 per GPU"),
]


_B200_FLOPS = (
    "NVIDIA HGX B200 data sheet (1,000 W): 4.5e15 bf16 FLOP/s with 2:4 sparsity, 2.25e15 dense; the book's "
    "GPU chapter uses 2.25e15 in its answers (B200 rooflines: 2250e12 / 400e9 = 5625), its spec table rounds "
    "it to 2.3e15"
)

HARDWARE: dict[str, Hardware] = {
    h.name: h
    for h in (
        _tpu("tpu-v4p", "TPU v4p", "2.75e14", "2.75e14", "32e9", "1.2e12", "4.5e10", None, "1.6e10", _CUBE),
        _tpu("tpu-v5e", "TPU v5e", "1.97e14", "3.94e14", "16e9", "8.2e11", "4.5e10", "3.125e9", "1.6e10", _TORUS16,
             [("hbm_bandwidth", _BOOK_TPU + "; older text of the book used 8.1e11, the current value is 8.2e11")]),
        _tpu("tpu-v5p", "TPU v5p", "4.59e14", "9.18e14", "96e9", "2.8e12", "9.0e10", "6.25e9", "1.6e10", _CUBE),
        _tpu("tpu-v6e", "TPU v6e (Trillium)", "9.2e14", "1.84e15", "32e9", "1.6e12", "9.0e10", "1.25e10", "3.2e10",
             _TORUS16),
        _tpu("tpu7x", "TPU7x (Ironwood)", "2.3e15", "4.61e15", "192e9", "7.4e12", "9.0e10", "1.25e10", "1.6e10", _CUBE,
             [("flops_8bit", _BOOK_TPU + " (fp8; TPU7x has no int8 figure)")]),
        _gpu("a100", "NVIDIA A100", "3.1e14", "6.2e14", "80e9", "2.0e12", "3.0e11", 8, None),
        _gpu("h100", "NVIDIA H100", "9.9e14", "2.0e15", "80e9", "3.35e12", "4.5e11", 8, "5e10",
             [("hbm_bandwidth", _BOOK_GPU + "; the sharding chapter's pop quiz uses 3.4e12")], 32, "5e10"),
        _gpu("h200", "NVIDIA H200", "9.9e14", "2.0e15", "141e9", "4.8e12", "4.5e11", 8, None),
        _gpu("b200", "NVIDIA B200", "2.25e15", "4.5e15", "192e9", "8.0e12", "9.0e11", 8, "5e10",
             [*_SAME_POD, ("flops_bf16", _B200_FLOPS)], 32, "5e10"),
        _gpu("gb200-nvl72", "NVIDIA GB200 NVL72", "2.3e15", "4.5e15", "192e9", "8.0e12", "9.0e11", 72, "5e10",
             [("dcn_bandwidth", _BOOK_GPU + " (3.6e12 per 72-GPU domain, i.e. 5e10 per GPU)")]),
    )
}  # fmt: skip
"""The preset catalogue, keyed by canonical name."""

_ALIASES = {
    "v4": "tpu-v4p",
    "v4p": "tpu-v4p",
    "v5e": "tpu-v5e",
    "v5litepod": "tpu-v5e",
    "v5p": "tpu-v5p",
    "v6e": "tpu-v6e",
    "trillium": "tpu-v6e",
    "v7": "tpu7x",
    "7x": "tpu7x",
    "v7x": "tpu7x",
    "ironwood": "tpu7x",
    "nvl72": "gb200-nvl72",
    "gb200": "gb200-nvl72",
    "dgx-h100": "h100",
    "dgx-h100-superpod": "h100",
    "h100-superpod": "h100",
    "dgx-b200": "b200",
    "dgx-b200-superpod": "b200",
    "b200-superpod": "b200",
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_LOOKUP = {_key(k): k for k in HARDWARE} | {_key(a): k for a, k in _ALIASES.items()}
_LOOKUP |= {_key(k.removeprefix("tpu-")): k for k in HARDWARE if k.startswith("tpu-")}


_FILE_READER: ContextVar[Callable[[str], str] | None] = ContextVar("symshard_hardware_file_reader", default=None)


@contextmanager
def hardware_files(reader: Callable[[str], str]) -> Iterator[None]:
    """Within the block, a hardware file named as text (``hardware("my.toml")``, ``hardware="my.toml"``
    anywhere in the algebra) is read by ``reader``, which returns the file's text or raises a
    :class:`~symshard.errors.HardwareError`: the problem engine keeps each family to the files of its
    own folder this way, whatever function the family hands the name to.

    Examples:
        >>> with hardware_files(lambda name: '[hardware]\\nlabel = "from the reader"\\nbase = "tpu-v5e"\\n'):
        ...     hardware("my.toml").name, hardware("my.toml").label
        ('my', 'from the reader')
    """
    token = _FILE_READER.set(reader)
    try:
        yield
    finally:
        _FILE_READER.reset(token)


def hardware(name: str | Hardware) -> Hardware:
    """The preset called ``name`` (forgiving case, spaces, dashes and a ``tpu`` prefix).

    Raises:
        UnknownHardwareError: the name matches no preset.

    Examples:
        >>> hardware("TPU v5p").name, hardware("trillium").name
        ('tpu-v5p', 'tpu-v6e')
    """
    if isinstance(name, Hardware):
        return name
    key = _key(str(name))
    if key in _LOOKUP:
        return HARDWARE[_LOOKUP[key]]
    if str(name).strip().lower().endswith(".toml"):
        return load_hardware(str(name).strip())
    raise UnknownHardwareError(
        say("unknown hardware '{name}'", name=str(name)),
        hint=say(
            "{suggestion} (or a hardware file such as my-cluster.toml, or define one with Hardware(...))",
            suggestion=did_you_mean(str(name).lower(), sorted(HARDWARE)),
        ),
    )


def load_hardware(path: str | Path) -> Hardware:
    """A hardware file: a preset it names (``base``) with some constants replaced, each with its source.

    The format, as ``symshard calibrate`` writes it::

        [hardware]
        name = "my-cluster"
        label = "A100 cluster, calibrated"
        base = "a100"
        collective_model = "ring"   # optional: the cost model the figures were fitted with

        [constants]          # symbol names, as --hw-set takes them; numbers as text stay exact
        W_dcn = "1.25e10"
        T_net = "8.1e-6"

        [sources]            # optional: where each figure comes from
        W_dcn = "fitted to allreduce.txt by symshard calibrate"

    A chip calibrated from measurements (``symshard calibrate --chip``) also has the rates it attained,
    kept beside the data sheet's peaks (which stay the bound), with the measurement's provenance::

        [attained]           # optional: measured on the chip, fitted by symshard calibrate --chip
        file = "h200.csv"    # the measurements, their SHA-256, the device, the date, the rows fitted
        sha256 = "9f2c..."
        device = "NVIDIA H200"
        date = "2026-11-20"
        rows = 198

        [attained.bf16]      # one table per dtype measured
        flops = "7.58e14"            # attained FLOP/s (C')
        hbm_bandwidth = "4.66e12"    # attained HBM bandwidth, B/s, bytes read and written (W')
        kernel_overhead = "1.98e-5"  # fixed cost per kernel, s (t0)
        overlap = 2                  # p in t0 + (Tc^p + Tm^p)^(1/p); "max" takes the larger
    Inside :func:`hardware_files` the file is read by the reader given there instead (the problem
    engine keeps each family to the files of its own folder that way).

    Raises:
        UnknownHardwareError: the file does not exist.
        HardwareError: it is not valid TOML, or names an unknown preset or constant.
    """
    import tomllib  # read only when a hardware file is named: import symshard stays light

    reader = _FILE_READER.get()
    if reader is not None:
        text = reader(str(path))
        stem = PurePosixPath(str(path).replace("\\", "/")).stem
    else:
        file = Path(path)
        if not file.is_file():
            raise UnknownHardwareError(
                say("hardware file '{path}' does not exist", path=str(path)),
                hint=say("write one with symshard calibrate, or check the path"),
            )
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise HardwareError(
                say("hardware file '{path}' is not valid TOML: {why}", path=str(path), why=str(err)),
                hint=say("see symshard calibrate"),
            ) from None
        stem = file.stem
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise HardwareError(
            say("hardware file '{path}' is not valid TOML: {why}", path=str(path), why=str(err)),
            hint=say("see symshard calibrate"),
        ) from None
    head = data.get("hardware", {})
    consts = data.get("constants", {})
    notes = data.get("sources", {})
    if not isinstance(head, dict) or not isinstance(consts, dict) or not isinstance(notes, dict):
        raise HardwareError(
            say("hardware file '{path}' needs [hardware], [constants] and [sources] tables", path=str(path)),
            hint=say("see symshard calibrate"),
        )
    base = head.get("base")
    chip = hardware(str(base)) if base else Hardware("custom", "custom chip")
    chip = chip.with_constants({str(k): v for k, v in consts.items()})
    model = head.get("collective_model", chip.collective_model)
    if model is not None and model not in COST_MODELS:
        raise HardwareError(
            say("hardware file '{path}' names the unknown cost model '{name}'", path=str(path), name=str(model)),
            hint=say("collective_model is one of {models}", models=", ".join(COST_MODELS)),
        )
    sources = dict(chip.sources)
    known = {*_SYMBOL_FIELDS, *_SHAPE_FIELDS, "collective_model"}
    sources.update({str(k): str(v) for k, v in notes.items() if str(k) in known})
    named = {_SYMBOL_FIELDS.get(k, k): v for k, v in sources.items()}
    chip = replace(
        chip,
        name=str(head.get("name", stem)),
        label=str(head.get("label", stem)),
        collective_model=model,
        sources=tuple(named.items()),
    )
    if "attained" in data:
        chip = replace(chip, attained=_attained(data["attained"], str(path)))
        check_attained(chip)
    return chip


_ATTAINED_KEYS = ("flops", "hbm_bandwidth", "kernel_overhead", "overlap")
_PROVENANCE_KEYS = ("file", "sha256", "device", "date", "rows")


def _attained(table: object, path: str) -> Attained:
    """The ``[attained]`` section of a hardware file (see :func:`load_hardware`)."""
    from ..algebra.dtypes import canonical_dtype

    hint = say("see the [attained] section in 'symshard calibrate --chip' (docs: Calibrate a chip)")
    if not isinstance(table, dict):
        raise HardwareError(say("hardware file '{path}': [attained] must be a table", path=path), hint=hint)
    rates = []
    for key, value in sorted(table.items()):
        if key in _PROVENANCE_KEYS:
            continue
        if not isinstance(value, dict):
            raise HardwareError(
                say("hardware file '{path}': unknown key '{key}' in [attained]", path=path, key=str(key)),
                hint=say("[attained] takes {keys} and one table per dtype", keys=", ".join(_PROVENANCE_KEYS)),
            )
        dtype = canonical_dtype(str(key))
        missing = [k for k in _ATTAINED_KEYS[:3] if k not in value]
        unknown = sorted(str(k) for k in value if k not in _ATTAINED_KEYS)
        if missing or unknown:
            raise HardwareError(
                say("hardware file '{path}': [attained.{dtype}] needs {needed}, got {got}", path=path, dtype=dtype,
                    needed=", ".join(_ATTAINED_KEYS[:3]), got=", ".join(sorted(map(str, value))) or "nothing"),
                hint=hint,
            )  # fmt: skip
        overlap = value.get("overlap", "max")
        if overlap == "max":
            overlap = None
        rates.append(AttainedRates(dtype, value["flops"], value["hbm_bandwidth"], value["kernel_overhead"], overlap))
    if not rates:
        raise HardwareError(say("hardware file '{path}': [attained] has no dtype table", path=path), hint=hint)
    rows = table.get("rows", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise HardwareError(
            say("hardware file '{path}': attained rows must be a whole number, got {value}", path=path,
                value=repr(rows)),
            hint=hint,
        )  # fmt: skip
    text = {k: str(table.get(k, "")) for k in ("file", "sha256", "device", "date")}
    return Attained(tuple(rates), rows=rows, **text)


def check_attained(chip: Hardware) -> None:
    """Refuse attained rates above the data sheet's peaks: the peaks are a bound, and a chip cannot beat it.

    Raises:
        HardwareError: an attained FLOP/s or HBM bandwidth above the chip's peak for that dtype (the base
            chip is not the one measured, or the measurements are wrong).
    """
    if chip.attained is None:
        return
    for rates in chip.attained.rates:
        peaks = chip.constants(rates.dtype)
        for symbol, value, what in ((C, rates.flops, "FLOP/s"), (W_hbm, rates.hbm_bandwidth, "B/s")):
            peak = peaks.get(symbol)
            if peak is not None and value > peak:
                raise HardwareError(
                    say("the attained {dtype} {what} {value} is above {chip}'s data sheet peak {symbol} = {peak}",
                        dtype=rates.dtype, what=what, value=f"{float(value):.4g}", chip=chip.label,
                        symbol=str(symbol), peak=f"{float(peak):.4g}"),
                    hint=say("measure and calibrate against the chip that was measured (--hw), or correct its peak"),
                )  # fmt: skip


@cache
def constant_ranges() -> dict[sympy.Expr, tuple[float, float]]:
    """Each hardware constant's range over the preset catalogue, widened four times each way: where
    sample points for a symbolic comparison put the constants a chip could have.

    Examples:
        >>> from symshard.algebra.symbols import T_hop
        >>> constant_ranges()[T_hop]  # the catalogue's 1 µs ICI hop, a quarter to four times it
        (2.5e-07, 4e-06)
    """
    found: dict[sympy.Expr, list[float]] = {}
    for hw in HARDWARE.values():
        for k, v in hw.constants().items():
            found.setdefault(k, []).append(float(v))
    return {k: (min(v) / 4, max(v) * 4) for k, v in found.items() if min(v) > 0}

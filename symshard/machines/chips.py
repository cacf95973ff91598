"""What one chip can do: the :class:`Hardware` record, the rates it attains and how it wires a mesh.

This module is the model, and only the model: the chips made from it (the preset catalogue, its
lookup by name, the hardware files ``symshard calibrate`` writes) live in
:mod:`symshard.machines.presets`, which imports this module and never the reverse, as a units system
keeps its tables of units apart from what a quantity is. Both sit in the machines layer, on
:mod:`.topology` and :mod:`.network`, which say how a chip wires a mesh's axes.

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

A chip also knows its wiring (:attr:`Hardware.wiring`, one of the ``WIRING_*`` rules): which mesh
axes get a wraparound link (TPU v5e and v6e only along axes of 16; v4p, v5p and TPU7x only on
whole 4×4×4 cubes) and, on GPUs, the network's levels (:attr:`Hardware.levels`): NVLink domains of
8 GPUs (72 on NVL72), scalable units of 32 nodes under the leaf switches of a DGX SuperPod, the
spine above.

Examples:
    >>> from symshard.machines.presets import hardware
    >>> v5e = hardware("v5e")
    >>> v5e.label, v5e.constants()[W_ici]
    ('TPU v5e', 90000000000)
    >>> hardware("h100").with_constants(W_hbm=3.4e12).hbm_bandwidth
    3400000000000
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
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
from ..errors import HardwareError, did_you_mean
from ..messages import Message, say
from .network import Level, Placement, place
from .topology import Fabric, Topology

__all__ = [
    "COST_MODELS",
    "SHAPE_FIELDS",
    "SYMBOL_FIELDS",
    "WIRING_CUBE",
    "WIRING_NVLINK",
    "WIRING_RING",
    "WIRING_TORUS16",
    "Attained",
    "AttainedRates",
    "Hardware",
    "Wiring",
    "attained_rates",
    "exact_number",
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


def _duration(value: object, what: str) -> sympy.Rational:
    """A fixed cost or a floor, seconds: 0 (none; ``0``, ``'0'``, ``'0.0'``, ``'0e0'``) or as :func:`_num` reads a
    positive number."""
    if isinstance(value, (int, float, sympy.Rational)) and not isinstance(value, bool) and value == 0:
        return sympy.S.Zero
    if isinstance(value, str):
        try:
            if float(value.strip()) == 0:
                return sympy.S.Zero
        except ValueError:
            pass  # not a number: _num says so
    return _num(value, what)


# The wiring rules a chip may have (see Hardware.wiring).
WIRING_TORUS16 = "torus-16"
"""A TPU v5e/v6e axis wraps only when it has 16 chips."""

WIRING_CUBE = "cube"
"""v4p/v5p/TPU7x wrap only on whole 4x4x4 cubes."""

WIRING_NVLINK = "nvlink"
"""GPUs: switch domains of ``node_size`` GPUs, scale-out beyond."""

WIRING_RING = "ring"
"""A custom chip: every axis a wraparound ring."""


@dataclass(frozen=True, slots=True)
class AttainedRates:
    """What one dtype's kernels attain on the chip, fitted to measurements (an expectation, not a bound).

    A matmul of ``F`` FLOPs that reads and writes ``B`` bytes of HBM is expected to take
    ``max(L, t0 + (Tc**p + Tm**p)**(1/p))`` with ``Tc = F / flops`` and ``Tm = B / hbm_bandwidth``: a fixed
    cost, then compute and memory overlapping as far as ``overlap`` (``p``) says (``1`` adds them, ``None``
    takes the larger, the roofline's ``max``; ``2`` lies between), and never less than the floor ``L``
    that even the smallest kernel takes. A stream (a copy, an elementwise add: bytes, no real math) is
    expected to take ``max(L_s, t0_s + B / stream_bandwidth)`` when the streams were measured. See
    :mod:`symshard.costs.kernels`.

    Attributes:
        dtype: the canonical dtype (``'bf16'``).
        flops: attained FLOP/s of matmuls (``C'``).
        hbm_bandwidth: the HBM bandwidth matmuls attain, bytes/s (``W'``), bytes read and written counted.
        kernel_overhead: a matmul's fixed cost, seconds (``t0``).
        overlap: the exponent ``p`` (a positive integer), or None for the larger of the two.
        floor: the least time a matmul takes, seconds (``L``; 0: no floor).
        stream_bandwidth, stream_overhead, stream_floor: a stream's ``W_s``, ``t0_s`` and ``L_s``; None
            when no copies or adds were measured (streams are then priced as matmuls without FLOPs).

    Examples:
        >>> AttainedRates("bf16", "7.5e14", "4.6e12", "2e-5", 2).flops
        750000000000000
        >>> AttainedRates("bf16", "7.5e14", "4.6e12", "2e-5", 2, "3e-5", "4.2e12", "1e-5", "2e-5").stream_floor
        1/50000
    """

    dtype: str
    flops: Number
    hbm_bandwidth: Number
    kernel_overhead: Number
    overlap: int | None = None
    floor: Number = 0
    stream_bandwidth: Number | None = None
    stream_overhead: Number | None = None
    stream_floor: Number | None = None

    def __post_init__(self) -> None:
        from ..algebra.dtypes import canonical_dtype

        object.__setattr__(self, "dtype", canonical_dtype(self.dtype))
        for name in ("flops", "hbm_bandwidth"):
            object.__setattr__(self, name, _num(getattr(self, name), f"attained.{self.dtype}.{name}"))
        for name in ("kernel_overhead", "floor"):
            object.__setattr__(self, name, _duration(getattr(self, name), f"attained.{self.dtype}.{name}"))
        stream = ("stream_bandwidth", "stream_overhead", "stream_floor")
        given = [getattr(self, name) is not None for name in stream]
        if any(given) and not all(given):
            raise HardwareError(
                say("attained.{dtype} gives {given} but not {missing}: a stream needs all three", dtype=self.dtype,
                    given=", ".join(n for n, g in zip(stream, given, strict=True) if g),
                    missing=", ".join(n for n, g in zip(stream, given, strict=True) if not g)),
                hint=say("give stream_bandwidth, stream_overhead and stream_floor together, or none of them"),
            )  # fmt: skip
        if all(given):
            object.__setattr__(
                self, "stream_bandwidth", _num(self.stream_bandwidth, f"attained.{self.dtype}.stream_bandwidth")
            )
            for name in ("stream_overhead", "stream_floor"):
                object.__setattr__(self, name, _duration(getattr(self, name), f"attained.{self.dtype}.{name}"))
        if self.overlap is not None and (
            isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 1 <= self.overlap <= 64
        ):
            raise HardwareError(
                say("attained.{dtype}.overlap must be a whole number from 1 to 64 or 'max', got {value}",
                    dtype=self.dtype, value=repr(self.overlap)),
                hint=say("1 adds compute and memory time, 'max' takes the larger, 2 lies between"),
            )  # fmt: skip

    @property
    def has_streams(self) -> bool:
        """Whether copies or adds were measured (the stream rates are known)."""
        return self.stream_bandwidth is not None


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
        method: how the times were taken, in the measurer's words ('' if not known): a kernel timed alone
            with CUDA events and one of several run back to back give different fixed costs.
    """

    rates: tuple[AttainedRates, ...]
    file: str = ""
    sha256: str = ""
    device: str = ""
    date: str = ""
    rows: int = 0
    method: str = ""

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


def attained_rates(hardware: Hardware | None, dtype: str) -> AttainedRates | None:
    """The rates ``hardware`` attained for ``dtype`` in measurements: None for a preset (or no chip), or a
    dtype that was not measured.

    Examples:
        >>> from symshard.machines.presets import hardware
        >>> attained_rates(hardware("h200"), "bf16") is None  # a data sheet, not a measurement
        True
    """
    if hardware is None or hardware.attained is None:
        return None
    return hardware.attained.of(dtype)


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
    wiring: str = WIRING_RING
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
            if key in SHAPE_FIELDS:
                number = _num(value, key)
                if not number.is_integer:
                    raise HardwareError(
                        say("{name} must be a whole number, got {value}", name=key, value=str(value)),
                        hint=say("write it like {example}", example=f"{key}=8"),
                    )
                changes[key] = int(number)
                notes = [s for s in notes if s[0] != key] + [(key, say("set by the user"))]
                continue
            if key not in SYMBOL_FIELDS:
                raise HardwareError(
                    say("unknown hardware constant '{name}'", name=key),
                    hint=did_you_mean(key, sorted(SYMBOL_FIELDS) + sorted(SHAPE_FIELDS)),
                )
            number = _num(value, key)
            target = SYMBOL_FIELDS[key]
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
        return "nccl" if self.wiring == WIRING_NVLINK else "book"

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
            >>> from symshard.machines.presets import hardware
            >>> [(lv.fabric.value, lv.domain) for lv in hardware("h100").levels]
            [('nvlink', 8), ('dcn', 256), ('spine', None)]
        """
        if self.wiring != WIRING_NVLINK:
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
        if self.wiring != WIRING_NVLINK or self.node_size is None or self.dcn_bandwidth is None:
            return None
        return self.node_size * self.dcn_bandwidth

    def wiring_for(self, sizes: Mapping[str, sympy.Expr]) -> dict[str, Wiring]:
        """Topology, fabric, a reason and the network levels crossed, for each mesh axis of the given
        sizes (in mesh order, the last varying fastest).

        Examples:
            >>> from symshard.machines.presets import hardware
            >>> w = hardware("v5e").wiring_for({"X": 8, "Y": 16})
            >>> w["X"].topology.value, w["Y"].topology.value
            ('line', 'ring')
            >>> str(hardware("h100").wiring_for({"X": 4, "Y": 4})["X"].reason)
            '2 GPUs per 8-GPU NVLink domain, 2 domains over the scale-out network (hierarchical)'
        """
        names = list(sizes)
        out: dict[str, Wiring] = {}
        numeric = all(as_expr(s).is_number for s in sizes.values())
        if self.wiring == WIRING_TORUS16:
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
        elif self.wiring == WIRING_CUBE:
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
        elif self.wiring == WIRING_NVLINK:
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

SHAPE_FIELDS = {"node_size", "leaf_nodes"}
"""The fields that shape a GPU network, settable by name (``node_size=8``): GPUs per NVLink domain, nodes per
scalable unit."""

COST_MODELS = ("book", "ring")
"""The collective cost models a hardware file may name (:data:`symshard.costs.costmodels.MODELS` says what each is)."""

SYMBOL_FIELDS = {
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
"""Each constant's name, as ``--hw-set`` and hardware files take it, with the field it sets."""
if not set(HARDWARE_SYMBOLS) <= set(SYMBOL_FIELDS):  # pragma: no cover - a symbol without a field is a bug
    raise RuntimeError("every hardware symbol needs a field")

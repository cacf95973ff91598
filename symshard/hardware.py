"""Chip constants and the preset catalogue, every figure with its source.

A :class:`Hardware` is a frozen record of what one chip can do: peak FLOP/s,
HBM capacity and bandwidth, the one-way bandwidth of one ICI link (TPUs) or of a
GPU's NVLink egress, data-centre network egress, and hop latency. Its
:meth:`~Hardware.constants` map the symbols of :mod:`symshard.symbols` to exact
numbers, which is how a symbolic cost becomes seconds.

Conventions (see ``docs``): ``W_ici`` is the book's *bidirectional* bandwidth of
one axis, so a preset that stores a one-way link bandwidth ``w`` substitutes
``W_ici = 2 w``. Values the book does not give (GPU hop latency, v4p DCN) are
left out rather than invented; pass them with :meth:`Hardware.with_constants`.

The presets also know their wiring: which mesh axes get a wraparound link (TPU
v5e and v6e only along axes of 16; v4p, v5p and TPU7x only on whole 4×4×4 cubes)
and how big an NVLink domain is (GPUs).

Examples:
    >>> v5e = hardware("v5e")
    >>> v5e.label, v5e.constants()[W_ici]
    ('TPU v5e', 90000000000)
    >>> hardware("h100").with_constants(W_hbm=3.4e12).hbm_bandwidth
    3400000000000
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TypeAlias

import sympy

from .errors import HardwareError, UnknownHardwareError, did_you_mean
from .mathtext import as_expr
from .symbols import HARDWARE_SYMBOLS, C, T_hop, W_dcn, W_hbm, W_ici, W_nvlink
from .topology import Fabric, Topology

__all__ = ["HARDWARE", "Hardware", "exact_number", "hardware"]

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
            raise HardwareError(f"{what} must be a number, got {shown}", hint=f"write it like {what}=4.5e10") from None
        if approx != approx or not 1e-30 <= abs(approx) <= 1e30:
            raise HardwareError(
                f"{what} = {shown} is out of range",
                hint="hardware constants lie between 1e-30 and 1e30 (e.g. 4.5e10 B/s, 1e-6 s)",
            )
        try:
            number = sympy.Rational(text)
        except (TypeError, ValueError, SyntaxError):
            raise HardwareError(f"{what} must be a number, got {shown}", hint=f"write it like {what}=4.5e10") from None
    if not number.is_positive:
        raise HardwareError(f"{what} must be positive, got {value}", hint="bandwidths, FLOP/s and latencies are > 0")
    return number


_BOOK_TPU = "How to Scale Your Model, Part 2 (TPUs), 'TPU specs' tables"
_BOOK_GPU = "How to Scale Your Model, Part 12 (GPUs), 'Summary of GPU specs'"
_BOOK_LAT = "How to Scale Your Model, Part 3 (sharding): 'each hop ... around 1us'"

# The wiring rules the presets use (see Hardware.wiring).
_TORUS16 = "torus-16"  # a TPU v5e/v6e axis wraps only when it has 16 chips
_CUBE = "cube"  # v4p/v5p/TPU7x wrap only on whole 4x4x4 cubes
_NVLINK = "nvlink"  # GPUs: switch domains of node_size GPUs, scale-out beyond
_RING = "ring"  # a custom chip: every axis a wraparound ring


@dataclass(frozen=True, slots=True)
class Hardware:
    """What one chip can do; ``None`` where the source gives no figure.

    Attributes:
        name: catalogue key, e.g. ``'tpu-v5e'``.
        label: display name, e.g. ``'TPU v5e'``.
        flops_bf16: peak bf16 matmul FLOP/s (``C``).
        flops_8bit: peak int8 / fp8 FLOP/s (``C`` for 8-bit dtypes).
        hbm_bytes: HBM capacity in bytes.
        hbm_bandwidth: HBM bandwidth in bytes/s (``W_hbm``).
        ici_link_bandwidth: one ICI link, one direction, bytes/s (``W_ici / 2``).
        nvlink_bandwidth: a GPU's NVLink egress in one direction, bytes/s (``W_nvlink``).
        dcn_bandwidth: a chip's data-centre network egress, bytes/s (``W_dcn``).
        pcie_bandwidth: host PCIe bandwidth, bytes/s.
        hop_latency: latency of one collective hop, seconds (``T_hop``).
        wiring: which axes get wraparound links (``torus-16``, ``cube``, ``nvlink``, ``ring``).
        node_size: GPUs per NVLink domain.
        sources: ``(field, citation)`` pairs.
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
    wiring: str = _RING
    node_size: int | None = None
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False)

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
        from .dtypes import canonical_dtype

        eight_bit = canonical_dtype(dtype) in ("int8", "fp8", "int4")
        values = {
            C: self.flops_8bit if eight_bit and self.flops_8bit else self.flops_bf16,
            W_hbm: self.hbm_bandwidth,
            W_ici: 2 * self.ici_link_bandwidth if self.ici_link_bandwidth else None,
            W_nvlink: self.nvlink_bandwidth,
            W_dcn: self.dcn_bandwidth,
            T_hop: self.hop_latency,
        }
        return {s: v for s, v in values.items() if v is not None}

    def with_constants(self, values: Mapping[str, object] | None = None, **kw: object) -> Hardware:
        """A copy with some constants replaced, by symbol name (``W_hbm=3.4e12``).

        ``W_ici`` sets the one-way link bandwidth to half the value given.

        Raises:
            HardwareError: for an unknown name or a value that is not a positive number.
        """
        given = dict(values or {}, **kw)
        changes: dict[str, object] = {}
        notes = list(self.sources)
        for key, value in given.items():
            if key not in _SYMBOL_FIELDS:
                raise HardwareError(
                    f"unknown hardware constant '{key}'",
                    hint=did_you_mean(key, sorted(_SYMBOL_FIELDS)),
                )
            number = _num(value, key)
            target = _SYMBOL_FIELDS[key]
            if key == "W_ici":
                number = number / 2
            changes[target] = number
            notes = [s for s in notes if s[0] != target] + [(target, "set by the user")]
        return replace(self, **changes, sources=tuple(notes))  # type: ignore[arg-type]

    def source(self, field_name: str) -> str | None:
        """Where the figure in ``field_name`` comes from."""
        return dict(self.sources).get(field_name)

    # -- wiring --------------------------------------------------------------------------

    def wiring_for(self, sizes: Mapping[str, sympy.Expr]) -> dict[str, tuple[Topology, Fabric, str]]:
        """Topology, fabric and a reason for each mesh axis of the given sizes (in mesh order).

        Examples:
            >>> w = hardware("v5e").wiring_for({"X": 8, "Y": 16})
            >>> w["X"][0].value, w["Y"][0].value
            ('line', 'ring')
        """
        names = list(sizes)
        out: dict[str, tuple[Topology, Fabric, str]] = {}
        numeric = all(as_expr(s).is_number for s in sizes.values())
        if self.wiring == _TORUS16:
            for n in names:
                s = as_expr(sizes[n])
                if not s.is_number:
                    out[n] = (Topology.RING, Fabric.ICI, f"{self.label}: size unknown, wraparound assumed")
                elif s == 16:
                    out[n] = (Topology.RING, Fabric.ICI, f"{self.label} axes of 16 have wraparound")
                else:
                    out[n] = (Topology.LINE, Fabric.ICI, f"{self.label} wraps only axes of 16")
        elif self.wiring == _CUBE:
            if not numeric:
                for n in names:
                    out[n] = (Topology.RING, Fabric.ICI, f"{self.label}: sizes unknown, wraparound assumed")
            else:
                total = sympy.prod([as_expr(sizes[n]) for n in names])
                cube = total % 64 == 0 and all(as_expr(sizes[n]) % 4 == 0 for n in names)
                for n in names:
                    if cube:
                        out[n] = (Topology.RING, Fabric.ICI, f"{self.label} slices of whole 4x4x4 cubes wrap")
                    else:
                        out[n] = (
                            Topology.LINE,
                            Fabric.ICI,
                            f"{self.label} wraps only slices of whole 4x4x4 cubes",
                        )
        elif self.wiring == _NVLINK:
            inner = sympy.Integer(1)
            for n in reversed(names):  # the last mesh axis varies fastest: it stays inside a node
                s = as_expr(sizes[n])
                if not s.is_number:
                    out[n] = (Topology.SWITCH, Fabric.NVLINK, f"{self.label}: size unknown, one NVLink domain assumed")
                    continue
                inner = inner * s
                if self.node_size is None or inner <= self.node_size:
                    out[n] = (Topology.SWITCH, Fabric.NVLINK, f"inside one {self.node_size}-GPU NVLink domain")
                else:
                    out[n] = (
                        Topology.SWITCH,
                        Fabric.DCN,
                        f"spans NVLink domains of {self.node_size} GPUs: runs at scale-out bandwidth",
                    )
            out = {n: out[n] for n in names}
        else:
            for n in names:
                out[n] = (Topology.RING, Fabric.ICI, f"{self.label}: every axis a wraparound ring")
        return out

    # -- display -------------------------------------------------------------------

    def __str__(self) -> str:
        return self.label

    def table_row(self) -> dict[str, object]:
        """The figures as a flat mapping (for tables and JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "sources"}


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
}

_SYMBOL_FIELDS = {
    "C": "flops_bf16",
    "C_8bit": "flops_8bit",
    "W_hbm": "hbm_bandwidth",
    "W_ici": "ici_link_bandwidth",
    "W_link": "ici_link_bandwidth",
    "W_nvlink": "nvlink_bandwidth",
    "W_dcn": "dcn_bandwidth",
    "T_hop": "hop_latency",
    "M_hbm": "hbm_bytes",
}
assert set(HARDWARE_SYMBOLS) <= set(_SYMBOL_FIELDS)


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


def _gpu(name, label, bf16, fp8, hbm, hbm_bw, nvlink, node, scale_out, notes=()) -> Hardware:
    src = [(f, _BOOK_GPU) for f in ("flops_bf16", "flops_8bit", "hbm_bytes", "hbm_bandwidth", "nvlink_bandwidth")]
    if scale_out is not None:
        src.append(("dcn_bandwidth", _BOOK_GPU + " (InfiniBand per GPU)"))
    src.append(("hop_latency", "not given by the book: pass T_hop explicitly"))
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
        wiring=_NVLINK,
        node_size=node,
        sources=tuple(src),
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
             [("hbm_bandwidth", _BOOK_GPU + "; the sharding chapter's pop quiz uses 3.4e12")]),
        _gpu("h200", "NVIDIA H200", "9.9e14", "2.0e15", "141e9", "4.8e12", "4.5e11", 8, None),
        _gpu("b200", "NVIDIA B200", "2.3e15", "4.5e15", "192e9", "8.0e12", "9.0e11", 8, "5e10"),
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
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_LOOKUP = {_key(k): k for k in HARDWARE} | {_key(a): k for a, k in _ALIASES.items()}
_LOOKUP |= {_key(k.removeprefix("tpu-")): k for k in HARDWARE if k.startswith("tpu-")}


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
    raise UnknownHardwareError(
        f"unknown hardware '{name}'",
        hint=did_you_mean(str(name).lower(), sorted(HARDWARE)) + " (or define one with Hardware(...))",
    )

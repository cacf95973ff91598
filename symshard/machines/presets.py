"""The preset catalogue and hardware files: every chip symshard knows by name, each figure with its source.

:class:`~symshard.machines.chips.Hardware` is the model; this module holds its instances, kept apart
from it as a units system keeps its tables apart from its quantities: the book's TPUs and GPUs
(:data:`HARDWARE`), their lookup by a forgiving name (:func:`hardware`), the hardware files that
``symshard calibrate`` writes (:func:`load_hardware`, with the rates a chip attained, checked
against its peaks by :func:`check_attained`), and each constant's range over the catalogue
(:func:`constant_ranges`), where a symbolic comparison samples. It sits in the machines layer, above
:mod:`.chips`: a file names its base preset, and a name ending in ``.toml`` is a file, so the
lookup and the reader are one module.

Sources: the TPU figures are the book's spec tables, the GPU figures its GPU chapter, the TPU hop
latency the book's 1 µs, the GPU latencies NCCL's (:mod:`symshard.machines.nccl`). Values no source
gives (v4p DCN, A100 scale-out) are left out rather than invented.

The presets also know their wiring: which mesh axes get a wraparound link (TPU v5e and v6e only
along axes of 16; v4p, v5p and TPU7x only on whole 4×4×4 cubes) and, on GPUs, the network's levels:
NVLink domains of 8 GPUs (72 on NVL72), scalable units of 32 nodes under the leaf switches of a DGX
SuperPod, the spine above.

Examples:
    >>> from symshard.algebra.symbols import W_ici
    >>> v5e = hardware("v5e")
    >>> v5e.label, v5e.constants()[W_ici]
    ('TPU v5e', 90000000000)
    >>> hardware("h100").with_constants(W_hbm=3.4e12).hbm_bandwidth
    3400000000000
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from functools import cache
from pathlib import Path, PurePosixPath

import sympy

from ..algebra.symbols import C, W_hbm
from ..errors import HardwareError, UnknownHardwareError, did_you_mean
from ..messages import say
from . import nccl
from .chips import (
    COST_MODELS,
    SHAPE_FIELDS,
    SYMBOL_FIELDS,
    WIRING_CUBE,
    WIRING_NVLINK,
    WIRING_TORUS16,
    Attained,
    AttainedRates,
    Hardware,
)

__all__ = [
    "HARDWARE",
    "check_attained",
    "constant_ranges",
    "hardware",
    "hardware_files",
    "load_hardware",
]

_BOOK_TPU = "How to Scale Your Model, Part 2 (TPUs), 'TPU specs' tables"
_BOOK_GPU = "How to Scale Your Model, Part 12 (GPUs), 'Summary of GPU specs'"
_BOOK_LAT = "How to Scale Your Model, Part 3 (sharding): 'each hop ... around 1us'"
_BOOK_NET = "How to Scale Your Model, Part 12 (GPUs), networking: DGX SuperPod"
_NCCL_LAT = f"from NCCL's tuning model ({nccl.SOURCE}), protocol {nccl.DEFAULT_PROTOCOL}"


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
        wiring=WIRING_NVLINK,
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
        _tpu("tpu-v4p", "TPU v4p", "2.75e14", "2.75e14", "32e9", "1.2e12", "4.5e10", None, "1.6e10", WIRING_CUBE),
        _tpu("tpu-v5e", "TPU v5e", "1.97e14", "3.94e14", "16e9", "8.2e11", "4.5e10", "3.125e9", "1.6e10", WIRING_TORUS16,
             [("hbm_bandwidth", _BOOK_TPU + "; older text of the book used 8.1e11, the current value is 8.2e11")]),
        _tpu("tpu-v5p", "TPU v5p", "4.59e14", "9.18e14", "96e9", "2.8e12", "9.0e10", "6.25e9", "1.6e10", WIRING_CUBE),
        _tpu("tpu-v6e", "TPU v6e (Trillium)", "9.2e14", "1.84e15", "32e9", "1.6e12", "9.0e10", "1.25e10", "3.2e10",
             WIRING_TORUS16),
        _tpu("tpu7x", "TPU7x (Ironwood)", "2.3e15", "4.61e15", "192e9", "7.4e12", "9.0e10", "1.25e10", "1.6e10", WIRING_CUBE,
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
        file = "h200.csv"    # the measurements, their SHA-256, the device, the date, how they were
        sha256 = "9f2c..."   # timed, the rows fitted
        device = "NVIDIA H200"
        date = "2026-11-20"
        method = "torch CUDA events, each kernel alone, median of 30 after 10 warm-ups"
        rows = 198

        [attained.bf16]      # one table per dtype measured
        flops = "7.58e14"            # attained FLOP/s (C')
        hbm_bandwidth = "4.66e12"    # attained HBM bandwidth, B/s, bytes read and written (W')
        kernel_overhead = "1.96e-5"  # a matmul's fixed cost, s (t0)
        overlap = 2                  # p in max(L, t0 + (Tc^p + Tm^p)^(1/p)); "max" takes the larger
        floor = "3.1e-5"             # optional: the least time a matmul takes, s (L; default 0)
        stream_bandwidth = "4.27e12" # optional, all three or none: copies and adds, max(L_s, t0_s + B/W_s)
        stream_overhead = "1.1e-5"
        stream_floor = "2.25e-5"
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
    known = {*SYMBOL_FIELDS, *SHAPE_FIELDS, "collective_model"}
    sources.update({str(k): str(v) for k, v in notes.items() if str(k) in known})
    named = {SYMBOL_FIELDS.get(k, k): v for k, v in sources.items()}
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


_ATTAINED_KEYS = (
    "flops", "hbm_bandwidth", "kernel_overhead", "overlap", "floor", "stream_bandwidth", "stream_overhead", "stream_floor"
)  # fmt: skip
_PROVENANCE_KEYS = ("file", "sha256", "device", "date", "method", "rows")


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
        rates.append(
            AttainedRates(
                dtype, value["flops"], value["hbm_bandwidth"], value["kernel_overhead"], overlap, value.get("floor", 0),
                *(value.get(k) for k in ("stream_bandwidth", "stream_overhead", "stream_floor")),
            )
        )  # fmt: skip
    if not rates:
        raise HardwareError(say("hardware file '{path}': [attained] has no dtype table", path=path), hint=hint)
    rows = table.get("rows", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise HardwareError(
            say("hardware file '{path}': attained rows must be a whole number, got {value}", path=path,
                value=repr(rows)),
            hint=hint,
        )  # fmt: skip
    text = {k: str(table.get(k, "")) for k in ("file", "sha256", "device", "date", "method")}
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

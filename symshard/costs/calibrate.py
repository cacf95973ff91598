"""Calibration: fit the network constants of a hardware preset to measured collective times.

nccl-tests (``all_reduce_perf``, ``all_gather_perf``, ``reduce_scatter_perf``) times one collective
over a range of message sizes. symshard prices the same collective (:mod:`symshard.costs.costmodels`,
hierarchically over the levels the ranks span) as

    t(S) = T_base + Σ steps_l · T_l  +  max_l c_l · S / W_l

for ``S`` bytes: NCCL's latency (a base latency and a per-step latency for each level crossed) plus
the time of the slowest level for its share of the bytes. Over a run that latency is one constant
``α`` and the slowest level one slope ``β``, so a least-squares fit of ``t = α + β S`` on the
measured times (each time weighted by its inverse, so that a 40 µs row counts as much as a 40 ms
one) gives both. ``β`` fixes the bandwidth of the level that binds (``W_l = c_l / β``); ``α``, less
the latencies kept from the base preset, fixes the per-step latency of the outermost level the run
crossed (``T_net`` across nodes, ``T_nvlink`` inside one). One run measures one level's bandwidth
and one latency: calibrate a run inside a node first, then pass the file it writes as the base of
a run across nodes (``--hw``), to fit both levels.

Read formats: nccl-tests' text table (``#  size count type redop root time algbw busbw #wrong ...``,
out-of-place and in-place columns) and the JSON file newer nccl-tests write (``version`` 2: a
``results`` list of ``{"size", "out_of_place": {"time", "alg_bw", "bus_bw"}, ...}`` and the ranks
under ``config.devices``; see nccl-tests' ``src/util.cu``). Times are read as exact decimals.

Reading is bounded: the command reads the file with :func:`~symshard.inputs.read_text_file` (a
regular file of at most :data:`MAX_BYTES`), at most :data:`MAX_ROWS` rows are read, every number
is read by a pattern of bounded length (no 5,000-digit integer, no ``1e999999``), and a row that
does not read is an error naming its line, never skipped in silence.

Examples:
    >>> text = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\\n"
    >>> text += "".join(f"{s} {s // 4} float sum -1 {10 + s / 1e4:.2f} 0 0 0 0 0 0 0\\n" for s in (2**k for k in range(10, 28)))
    >>> run = read_nccl_tests(text)
    >>> fit = calibrate(run, "allreduce", ranks=8, per_node=8, base="h100")
    >>> round(float(fit.alpha) * 1e6, 2), round(float(1 / fit.beta) / 1e9, 2)
    (10.0, 10.0)
"""

from __future__ import annotations

import decimal
import json
import math
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.symbols import T_base, T_net, T_nvlink, W_dcn, W_nvlink, W_spine
from ..errors import HardwareError, MeshError, UsageError
from ..machines import nccl
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware
from ..machines.topology import Fabric
from ..messages import Message, say
from ..tomltext import toml_document
from .costmodels import Costing, LevelCost

__all__ = [
    "COLLECTIVES",
    "FITTED_MODEL",
    "MAX_BYTES",
    "MAX_RANKS",
    "MAX_ROWS",
    "Calibration",
    "Run",
    "Sample",
    "calibrate",
    "hardware_file",
    "read_nccl_tests",
]

COLLECTIVES = {
    "allreduce": "AllReduce",
    "allgather": "AllGather",
    "reducescatter": "ReduceScatter",
}
"""The collectives calibration reads, by nccl-tests' name (``all_reduce_perf`` is ``allreduce``)."""

_PROGRAMS = {"all_reduce_perf": "allreduce", "all_gather_perf": "allgather", "reduce_scatter_perf": "reducescatter"}

_SOURCE_JSON = say(
    "nccl-tests src/util.cu {rest}",
    rest="(github.com/NVIDIA/nccl-tests, commit 0fdb00a3f4339efc1176771a9c97db5438bd3f7f)",
)


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured row: ``size`` bytes in ``time`` seconds, and the bus bandwidth nccl-tests reported."""

    size: int
    time: Fraction
    busbw: Fraction | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """A measured nccl-tests run: its samples, and what the file says of the collective and the ranks."""

    samples: tuple[Sample, ...]
    collective: str | None = None
    ranks: int | None = None
    per_node: int | None = None
    format: str = "text"


def _collective_key(name: str) -> str:
    key = str(name).strip().lower().replace("_", "").replace("-", "").removesuffix("perf")
    if key not in COLLECTIVES:
        raise UsageError(
            say("cannot calibrate with the collective '{value}'", value=name),
            hint=say("use allreduce, allgather or reducescatter (the runs of all_reduce_perf, ...)"),
        )
    return key


MAX_BYTES = 4 * 2**20
"""The largest measurement file read (an nccl-tests run of 40 sizes is about 5 KB)."""

MAX_ROWS = 1000
"""The most result rows read from one file: a run has one row per size, a few dozen; a file of more
is not one run."""

MAX_RANKS = 2**20
"""The most ranks a calibration is costed over."""

_NOT_MEASURED = ("N/A", "-")
"""What nccl-tests prints in place of a time it did not measure: such a row is skipped."""

_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"(?:[0-9]{1,18}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})(?:[eE][-+]?[0-9]{1,2})?")
"""A number as nccl-tests prints one: at most 18 digits each side of the point and a two-digit exponent."""


def _quoted(text: str) -> str:
    """The input as a message quotes it: a very long word cut short."""
    return text if len(text) <= 24 else text[:24] + "…"


def _decimal(text: str, what: Message, line: int, *, zero: bool = False) -> Fraction:
    """A positive number (or zero, with ``zero``) in nccl-tests' notation, read exactly.

    Raises:
        HardwareError: anything else (a sign, letters, NaN, too many digits), naming the line.
    """
    value = Fraction(text) if _DECIMAL.fullmatch(text) else None
    if value is None or value < 0 or (value == 0 and not zero):
        raise HardwareError(
            say("line {line}: cannot read {what} '{value}' as a positive number", line=line, what=what,
                value=_quoted(text)),
            hint=say("is this nccl-tests output?"),
        )  # fmt: skip
    return value


def _size(text: str, line: int) -> int:
    if len(text) > 20 or int(text) > 2**64:
        raise HardwareError(
            say("line {line}: the size '{value}' is too large for a message", line=line, value=_quoted(text)),
            hint=say("is this nccl-tests output?"),
        )
    return int(text)


def _too_many_rows(where: Message) -> HardwareError:
    return HardwareError(
        say("{where}: more than {count} result {count:row|rows}", where=where, count=MAX_ROWS),
        hint=say("calibrate one run at a time: keep one table per file"),
    )


_RANK = re.compile(r"^#\s*Rank\s+\d+\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device")
_PROGRAM = re.compile(r"Collective test starting:\s*(\S+)")


def read_nccl_tests(text: str, *, in_place: bool = False) -> Run:
    """The samples of an nccl-tests run, from its text output or its JSON file.

    ``in_place`` reads the in-place columns instead of the out-of-place ones. A row whose time is
    ``N/A`` is skipped; any other row of the table (a line after the header that starts with a size)
    must read, or the error names its line. Lines that are not rows (NCCL's log, blank lines) are
    passed over. At most :data:`MAX_ROWS` rows are read.

    Raises:
        HardwareError: no result rows, a row that does not read (with its line), or too many rows.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _read_json(stripped, in_place)
    header: list[str] | None = None
    times: list[int] = []
    busbws: list[int] = []
    samples: list[Sample] = []
    hosts: list[str] = []
    collective = None
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("#"):
            rank = _RANK.match(line)
            if rank:
                hosts.append(rank.group(1))
            program = _PROGRAM.search(line)
            if program and program.group(1) in _PROGRAMS:
                collective = _PROGRAMS[program.group(1)]
            words = line.lstrip("#").split()
            if "size" in words and "time" in words and header is None:
                header = words
                times = [i for i, w in enumerate(header) if w in ("time", "cputime")]
                busbws = [i for i, w in enumerate(header) if w == "busbw"]
            continue
        words = line.split()
        if header is None or not words or not _DIGITS.fullmatch(words[0]):
            continue  # not a row of the table
        if len(samples) == MAX_ROWS:
            raise _too_many_rows(say("line {line}", line=number))
        pick = 1 if in_place and len(times) > 1 else 0
        t_col = times[pick]
        if t_col >= len(words):
            raise HardwareError(
                say("line {line} has {count} {count:column|columns}, but the header puts the time in column {column}",
                    line=number, count=len(words), column=t_col + 1),
                hint=say("is this nccl-tests output? a line may be cut short"),
            )  # fmt: skip
        size = _size(words[0], number)
        if words[t_col] in _NOT_MEASURED:
            continue
        t = _decimal(words[t_col], say("the time"), number)
        b_col = busbws[pick] if pick < len(busbws) else None
        busbw = None
        if b_col is not None and b_col < len(words) and words[b_col] not in _NOT_MEASURED:
            busbw = _decimal(words[b_col], say("the bus bandwidth"), number, zero=True) * 10**9
        samples.append(Sample(size, t / 10**6, busbw))
    if not samples:
        raise HardwareError(
            say("no nccl-tests result rows found"),
            hint=say("give the output of e.g. all_reduce_perf (the table after '#  size count type ...')"),
        )
    ranks = len(hosts) or None
    per_node = ranks // len(set(hosts)) if hosts and ranks % len(set(hosts)) == 0 else None  # type: ignore[operator]
    return Run(tuple(samples), collective, ranks, per_node, "text")


def _json_int(text: str) -> int:
    """An integer of the JSON, refused when it has more digits than any size or count has."""
    if len(text.lstrip("-")) > 20:
        raise HardwareError(
            say("the JSON holds a number of {count} {count:digit|digits}: '{value}'", count=len(text.lstrip("-")),
                value=_quoted(text)),
            hint=_SOURCE_JSON,
        )  # fmt: skip
    return int(text)


def _json_number(row: dict, key: str) -> float | None:
    """A finite number of a row, or None when it is missing or not measured."""
    value = row.get(key)
    if value is None or value in _NOT_MEASURED:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise HardwareError(
            say("the JSON's {key} '{value}' is not a number", key=key, value=_quoted(str(value))), hint=_SOURCE_JSON
        )
    return float(value)


def _read_json(text: str, in_place: bool) -> Run:
    try:
        data = json.loads(text, parse_int=_json_int)
    except HardwareError:
        raise
    except json.JSONDecodeError as err:
        raise HardwareError(
            say("cannot read the JSON: {reason} (line {line})", reason=err.msg, line=err.lineno), hint=_SOURCE_JSON
        ) from None
    except RecursionError:
        raise HardwareError(say("the JSON nests too deeply to read"), hint=_SOURCE_JSON) from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise HardwareError(
            say("the JSON has no 'results' list"),
            hint=say("give the file nccl-tests writes, {source}", source=_SOURCE_JSON),
        )
    samples: list[Sample] = []
    for index, row in enumerate(data["results"], 1):
        part = row.get("in_place" if in_place else "out_of_place") if isinstance(row, dict) else None
        if not isinstance(part, dict):
            continue
        if len(samples) == MAX_ROWS:
            raise _too_many_rows(say("result {index} of the JSON", index=index))
        size = row.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= 2**64:
            raise HardwareError(
                say("result {index} of the JSON: the size '{value}' is not a number of bytes", index=index,
                    value=_quoted(str(size))),
                hint=_SOURCE_JSON,
            )  # fmt: skip
        t = _json_number(part, "time")
        if t is None:
            t = _json_number(part, "cpu_time")
        if t is None:
            continue
        busbw = _json_number(part, "bus_bw")
        if t <= 0:
            raise HardwareError(
                say("result {index} of the JSON: the time {time} us is not positive", index=index, time=repr(t)),
                hint=_SOURCE_JSON,
            )
        if busbw is not None and busbw < 0:
            raise HardwareError(
                say("result {index} of the JSON: the bus bandwidth {value} GB/s is negative", index=index,
                    value=repr(busbw)),
                hint=_SOURCE_JSON,
            )  # fmt: skip
        samples.append(
            Sample(size, Fraction(repr(t)) / 10**6, Fraction(repr(busbw)) * 10**9 if busbw is not None else None)
        )
    if not samples:
        raise HardwareError(say("the JSON has no result rows with a time"), hint=_SOURCE_JSON)
    config = data.get("config")
    devices = config.get("devices") if isinstance(config, dict) else None
    hosts = [d.get("hostname") for d in devices or () if isinstance(d, dict) and isinstance(d.get("hostname"), str)]
    ranks = len(hosts) or None
    per_node = ranks // len(set(hosts)) if hosts and ranks % len(set(hosts)) == 0 else None  # type: ignore[operator]
    args = data.get("args")
    program = Path(str(args[0])).name if isinstance(args, list) and args else ""
    return Run(tuple(samples), _PROGRAMS.get(program), ranks, per_node, "json")


@dataclass(frozen=True)
class Calibration:
    """A fit of measured times to symshard's model of the collective, and the hardware it gives.

    Attributes:
        collective: ``allreduce``, ``allgather`` or ``reducescatter``.
        ranks, per_node: the run's ranks and ranks per node.
        formula: symshard's time of the collective in ``S`` (bytes) and the constants.
        alpha, beta: the fitted ``t = α + β S`` (seconds, seconds per byte).
        bandwidth_level: the level whose bandwidth ``β`` fixes; latency_level: whose per-step latency.
        fitted: the constants fitted, by symbol.
        kept: the constants taken from the base preset.
        samples: the rows used, and ``fitted_times``, ``residuals`` (relative) and ``busbw`` implied.
        hardware: the base preset with the fitted constants.
        notes: what the fit could not settle.
        levels: each level's part of the formula (devices, bandwidth term, steps).
        model: the collective cost model the formula is (:data:`FITTED_MODEL`), which the hardware
            file records so that commands given it price collectives the same way.
    """

    collective: str
    ranks: int
    per_node: int
    formula: sympy.Expr
    alpha: Fraction
    beta: Fraction
    bandwidth_level: Fabric
    latency_level: Fabric
    fitted: dict[sympy.Symbol, sympy.Rational]
    kept: dict[sympy.Symbol, sympy.Rational]
    samples: tuple[Sample, ...]
    fitted_times: tuple[Fraction, ...]
    residuals: tuple[Fraction, ...]
    busbw: tuple[Fraction, ...]
    hardware: Hardware
    notes: tuple[Message, ...] = field(default=())
    levels: tuple[LevelCost, ...] = field(default=(), compare=False)
    model: str = "ring"

    @property
    def rms_residual(self) -> float:
        """The root-mean-square relative residual of the fit."""
        return float(sum(r * r for r in self.residuals) / len(self.residuals)) ** 0.5

    def __repr__(self) -> str:
        from ..shown import summary

        fitted = {str(k): float(v) for k, v in self.fitted.items()}
        return summary("Calibration", self.collective, {"ranks": self.ranks, "per_node": self.per_node,
                       "alpha": float(self.alpha), "beta": float(self.beta)}, {"fitted": fitted},
                       hardware=self.hardware.name)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


S = sympy.Symbol("S", positive=True)
"""The message size in bytes, as nccl-tests' ``size`` column gives it."""

FITTED_MODEL = "ring"
"""The collective cost model a calibration fits: the exact count of a ring's steps and bytes, as NCCL
runs them (the book's model drops the ``(N-1)/N`` factors and would fit other constants)."""


def calibrate(
    run: Run,
    collective: str | None = None,
    *,
    ranks: int | None = None,
    per_node: int | None = None,
    base: Hardware | str = "a100",
    min_bytes: int | None = None,
    max_bytes: int | None = None,
    level: str | None = None,
) -> Calibration:
    """Fit ``run`` to symshard's model of ``collective`` over ``ranks`` GPUs, ``per_node`` to a node.

    ``ranks`` and ``per_node`` default to what the file says (its ``# Rank ...`` lines); ``base`` is the
    preset whose other constants are kept (A100 for the data the project ships). The slope is taken
    as the bandwidth of ``level`` (``nvlink``, ``dcn``, ``spine``; default the outermost level the
    run crossed, the scale-out network for a run across nodes, which is nearly always the slowest).

    Raises:
        UsageError: an unknown collective, ranks missing or not a multiple of ``per_node``.
        HardwareError: fewer than two rows in the size range, or a fit that is not positive.
    """
    if not (collective or run.collective):
        raise UsageError(
            say("the measurements do not say which collective they time"),
            hint=say("give --collective allreduce (or allgather, reducescatter)"),
        )
    key = _collective_key(collective or run.collective or "")
    ranks = ranks or run.ranks
    per_node = per_node or run.per_node or ranks
    if not ranks or ranks < 2:
        raise UsageError(say("calibration needs the number of ranks (at least 2)"), hint=say("give --ranks 16"))
    if ranks > MAX_RANKS:
        raise UsageError(
            say(
                "calibration takes at most {limit} {limit:rank|ranks}, not {ranks}",
                limit=f"{MAX_RANKS:,}",
                ranks=f"{ranks:,}",
            ),
            hint=say("give the number of GPUs the run used, e.g. --ranks 16"),
        )
    if not per_node or per_node < 1 or ranks % per_node:
        raise UsageError(
            say("{ranks} {ranks:rank|ranks} do not split into nodes of {size}", ranks=ranks, size=per_node),
            hint=say("--per-node must divide --ranks, e.g. 8"),
        )
    rows = [
        s
        for s in run.samples
        if (min_bytes is None or s.size >= min_bytes) and (max_bytes is None or s.size <= max_bytes)
    ]
    if len(rows) < 2:
        raise HardwareError(
            say("only {count} measured {count:row|rows} in the size range: a line needs two", count=len(rows)),
            hint=say("widen --min-bytes/--max-bytes"),
        )
    chip = hardware(base).with_constants(node_size=per_node)
    # symshard's own cost of the collective over one mesh axis of the run's ranks, laid out as NCCL
    # numbers them (consecutive ranks share a node)
    mesh = Mesh({"R": ranks}, hardware=chip)
    cost = Costing(mesh, {}, FITTED_MODEL, chip).timing(COLLECTIVES[key], ("R",), S)
    formula = as_expr(cost.time)

    if len({s.size for s in rows}) < 2:
        raise HardwareError(say("the measured sizes are all the same: no line fits"), hint=say("measure several sizes"))
    alpha, beta = _least_squares(rows)
    if beta <= 0 or alpha < 0:
        raise HardwareError(
            say(
                "the fit t = {alpha} s + {beta} s/B is not physical",
                alpha=f"{float(alpha):.3g}",
                beta=f"{float(beta):.3g}",
            ),
            hint=say("keep the bandwidth-bound sizes in range (--min-bytes) or check the file"),
        )

    values = chip.constants()
    levels = cost.levels
    outer = levels[-1].fabric
    # the bandwidth the slope measures: the level named, else the outermost the run crossed
    binding = _binding(levels, level)
    per_byte = as_expr(binding.bandwidth_time / S).xreplace({binding.fabric.bandwidth: 1})
    notes = []
    fitted: dict[sympy.Symbol, sympy.Rational] = {}
    w_fit = sympy.Rational(per_byte) / _rational(beta)
    fitted[binding.fabric.bandwidth] = w_fit
    # the latency: α less what the kept constants account for, over the outermost level's steps
    lat = as_expr(cost.latency_time)
    latency_symbol = outer.latency
    kept_latency = {s: values[s] for s in sorted(lat.free_symbols, key=str) if s != latency_symbol and s in values}
    missing = [s for s in lat.free_symbols if s != latency_symbol and s not in values]
    if missing:
        raise HardwareError(
            say("{chip} has no figure for {symbols}", chip=chip.label, symbols=", ".join(sorted(map(str, missing)))),
            hint=say("calibrate with a base preset that has NCCL's latencies (--hw h100, a100, ...)"),
        )
    steps = lat.coeff(latency_symbol)
    rest = lat.xreplace({**kept_latency, latency_symbol: 0})
    t_step = (_rational(alpha) - rest) / steps
    if t_step <= 0:
        notes.append(
            say(
                "the fitted latency {value} us is below what {kept} already account for: {symbol} kept at {old} us",
                value=f"{float(alpha) * 1e6:.3g}",
                kept=", ".join(map(str, kept_latency)),
                symbol=str(latency_symbol),
                old=f"{float(values.get(latency_symbol, 0)) * 1e6:.3g}",
            )
        )
    else:
        fitted[latency_symbol] = t_step
    kept = {s: values[s] for s in kept_latency}
    for lv in levels:
        sym = lv.fabric.bandwidth
        if sym not in fitted and sym in values:
            kept[sym] = values[sym]
    names = {str(s): v for s, v in fitted.items()}
    source = "fitted by symshard calibrate"
    calibrated = chip.with_constants(names)
    calibrated = replace(
        calibrated,
        name=f"{chip.name}-calibrated",
        label=f"{chip.label}, calibrated",
        collective_model=FITTED_MODEL,
        sources=(
            *((k, source if k in {_FIELD[s] for s in fitted} else v) for k, v in calibrated.sources
              if k != "collective_model"),
            ("collective_model", source),
        ),
    )  # fmt: skip
    fitted_times = tuple(alpha + beta * s.size for s in rows)
    residuals = tuple((f - s.time) / s.time for f, s in zip(fitted_times, rows, strict=True))
    factor = Fraction(str(nccl.bus_factor(key, ranks)))
    busbw = tuple(Fraction(s.size) / f * factor for f, s in zip(fitted_times, rows, strict=True))
    return Calibration(
        key, ranks, per_node, formula, alpha, beta, binding.fabric, outer, fitted, kept, tuple(rows), fitted_times,
        residuals, busbw, calibrated, tuple(notes), levels, FITTED_MODEL,
    )  # fmt: skip


FIT_DIGITS = 60
"""The decimal digits the fit's sums keep. Exact fractions would do too, but their denominators grow
with every distinct time (a thousand 17-digit times took 15 s); 60 digits are far beyond what a
measurement holds, and decimal arithmetic gives the same digits on every machine."""


def _least_squares(rows: list[Sample]) -> tuple[Fraction, Fraction]:
    """The ``(α, β)`` of ``t = α + β S`` that minimise ``Σ ((α + β S_i - t_i) / t_i)²`` over ``rows``."""
    with decimal.localcontext() as ctx:
        ctx.prec = FIT_DIGITS
        times = [Decimal(s.time.numerator) / Decimal(s.time.denominator) for s in rows]
        sizes = [Decimal(s.size) for s in rows]
        weights = [1 / (t * t) for t in times]
        a11 = sum(weights, Decimal(0))
        a12 = sum((w * x for w, x in zip(weights, sizes, strict=True)), Decimal(0))
        a22 = sum((w * x * x for w, x in zip(weights, sizes, strict=True)), Decimal(0))
        b1 = sum((w * t for w, t in zip(weights, times, strict=True)), Decimal(0))
        b2 = sum((w * x * t for w, x, t in zip(weights, sizes, times, strict=True)), Decimal(0))
        det = a11 * a22 - a12 * a12
        if det == 0:
            raise HardwareError(
                say("the measured sizes are all the same: no line fits"), hint=say("measure several sizes")
            )
        return Fraction((b1 * a22 - a12 * b2) / det), Fraction((a11 * b2 - a12 * b1) / det)


_FIELD = {W_nvlink: "nvlink_bandwidth", W_dcn: "dcn_bandwidth", W_spine: "spine_bandwidth",
          T_base: "base_latency", T_nvlink: "nvlink_latency", T_net: "net_latency"}  # fmt: skip


def _rational(x: Fraction) -> sympy.Rational:
    return sympy.Rational(x.numerator, x.denominator)


def _binding(levels, level: str | None):
    """The level whose bandwidth the fit's slope measures: the one named, else the outermost crossed."""
    if level is None:
        return levels[-1]
    try:
        fabric = Fabric.parse(level)
    except MeshError as err:
        raise UsageError(err.message, hint=err.hint) from None
    for lv in levels:
        if lv.fabric is fabric:
            return lv
    crossed = ", ".join(lv.fabric.value for lv in levels)
    raise UsageError(
        say("the run does not cross the level {level}", level=fabric.value),
        hint=say("it crosses {levels}", levels=crossed),
    )


def hardware_file(cal: Calibration, *, name: str | None = None, source: str = "") -> str:
    """The hardware file (TOML) for a calibration, which ``--hw FILE`` and :func:`~symshard.machines.presets.load_hardware`
    read: the base preset, the fitted constants, the cost model they were fitted with (``collective_model``,
    which commands given the file use) and where each comes from. Every value is escaped
    (:func:`~symshard.tomltext.toml_document`): a name or a file name cannot add keys.

    Raises:
        OutputError: ``name`` or ``source`` is not Unicode text.
    """
    base = cal.hardware.name.removesuffix("-calibrated")
    why = f"fitted by symshard calibrate to {source or 'nccl-tests output'} ({cal.collective}, {cal.ranks} ranks)"
    comments = [
        f"calibrated to {cal.collective} over {cal.ranks} ranks, {cal.per_node} per node"
        + (f", from {source}" if source else ""),
        (
            f"fit t = alpha + beta*S: alpha = {float(cal.alpha):.6g} s, beta = {float(cal.beta):.6g} s/B, "
            f"rms residual {cal.rms_residual:.2%}"
        ),
    ]
    head = {"name": name or cal.hardware.name, "label": cal.hardware.label, "base": base, "collective_model": cal.model}
    constants = {"node_size": str(cal.per_node), **{str(s): _decimal_text(v) for s, v in cal.fitted.items()}}
    sources = {
        **dict.fromkeys(map(str, cal.fitted), why),
        "node_size": f"the calibrated run: {cal.per_node} ranks per node",
        "collective_model": why,
    }
    return toml_document([("hardware", head), ("constants", constants), ("sources", sources)], comments=comments)


def _decimal_text(value: sympy.Rational) -> str:
    """A value as a decimal with 6 significant figures (exact enough for a fit, readable in the file)."""
    return f"{float(value):.6g}"

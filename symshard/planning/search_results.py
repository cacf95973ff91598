"""What the best-sharding search answers: :class:`Candidate`, one complete choice, and :class:`SearchResult`,
the winner, the runners-up and why.

Part of :mod:`symshard.planning`, below :mod:`~symshard.planning.search` (which makes them): a candidate
holds how each stored array is sharded and the :class:`~symshard.planning.strategies.Strategy` of each
matmul, with its exact costs; a result explains itself in sentences (:meth:`SearchResult.explain`).

Examples:
    >>> from symshard.planning.search import best_sharding
    >>> r = best_sharding("A[I, J] · B[J, K] -> C[I, K]", "X=4", "I=4096,J=4096,K=4096",
    ...                   hardware="v5e", out="C[I, K]")
    >>> str(r.best.sharding("A")), r.best is r.ranked[0]
    ('A[I_X, J]', True)
    >>> r.explain()[0]
    'store A[I_X, J], B[J, K]; the result ends as C[I, K]'
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..algebra.units import format_bytes, format_seconds
from ..machines.chips import Hardware, attained_rates
from ..machines.mesh import Mesh
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import Matmul
from .rawcosts import Value, sym
from .strategies import Strategy

__all__ = ["Candidate", "SearchResult"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One complete choice: how each stored array is sharded and the strategy of each matmul."""

    stored: tuple[tuple[str, Array], ...]
    stages: tuple[Strategy, ...]
    raw_time: Value
    raw_compute_time: Value
    raw_comm_time: Value
    raw_memory: Value

    @property
    def time(self) -> sympy.Expr:
        """Total time: the stages one after another."""
        return sym(self.raw_time)

    @property
    def compute_time(self) -> sympy.Expr:
        return sym(self.raw_compute_time)

    @property
    def comm_time(self) -> sympy.Expr:
        return sym(self.raw_comm_time)

    @property
    def hbm_time(self) -> sympy.Expr:
        """``T_hbm`` of the stages' local products, added up (0 when the search leaves HBM out)."""
        return sympy.Add(*[s.hbm_time for s in self.stages])

    @property
    def memory_bytes_per_device(self) -> sympy.Expr:
        """Peak bytes per device: every stored array plus the busiest stage's temporaries."""
        return sym(self.raw_memory)

    @property
    def output(self) -> Array:
        """The final result's sharding."""
        return self.stages[-1].output

    def sharding(self, name: str) -> Array:
        """How the stored array ``name`` is sharded."""
        return dict(self.stored)[name]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of :func:`best_sharding`: the winner, the runners-up and why."""

    matmuls: tuple[Matmul, ...]
    mesh: Mesh
    hardware: Hardware
    memory_limit: sympy.Expr | None
    best: Candidate | None
    ranked: tuple[Candidate, ...]
    fastest: Candidate | None
    considered: int
    fitting: int
    """``considered``: complete candidates evaluated in the last stage (after pruning earlier
    stages to their Pareto fronts); ``fitting``: how many of them fit in memory."""
    dtype: str = "bf16"

    def expected_time(self, c: Candidate) -> sympy.Expr | None:
        """The time ``c`` is expected to take on the search's chip, from the rates the chip attained in
        measurements (``symshard calibrate --chip``): its stages' expected times
        (:meth:`~symshard.planning.strategies.Strategy.expected_time`) one after another, as :attr:`Candidate.time`
        adds their bounds. None unless the chip was calibrated for the search's dtype; the ranking stays the
        data sheet's bound.

        Examples:
            >>> from symshard.planning.search import best_sharding
            >>> r = best_sharding("A[I, J] · B[J, K] -> C[I, K]", "X=4", "I=4096,J=4096,K=4096", hardware="h200")
            >>> r.expected_time(r.best) is None  # a preset: the data sheet only
            True
        """
        rates = attained_rates(self.hardware, self.dtype)
        if rates is None:
            return None
        return sympy.Add(*[s.expected_time(rates) for s in c.stages])

    def explain(self) -> list[str]:
        """A few sentences on the winner: what is stored how, what moves, what it costs, what lost."""
        lines: list[str] = []
        if self.best is None:
            need = self.fastest.memory_bytes_per_device if self.fastest else None
            limit = format_bytes(self.memory_limit)
            lines.append(
                say("nothing fits in {limit} per device", limit=limit)
                if need is None
                else say(
                    "nothing fits in {limit} per device; the leanest candidate needs {need}",
                    limit=limit,
                    need=format_bytes(need),
                )
            )
            lines.append(
                say("to fit: allow more memory per device (--memory), spread over more devices, or use a smaller dtype")
            )
            return lines
        b = self.best
        stored = ", ".join(str(a) for _, a in b.stored)
        lines.append(say("store {stored}; the result ends as {output}", stored=stored, output=str(b.output)))
        for mm, st in zip(self.matmuls, b.stages, strict=True):
            lines.append(f"{mm.lhs.name} · {mm.rhs.name}: " + " ; ".join(st.describe()))
        times = {
            "time": format_seconds(b.time),
            "compute": format_seconds(b.compute_time),
            "comms": format_seconds(b.comm_time),
            "peak": format_bytes(b.memory_bytes_per_device),
        }
        if b.hbm_time != 0:
            lines.append(
                say(
                    "time {time} (compute {compute}, HBM {hbm}, communication {comms}), peak memory {peak} of {limit}",
                    **times,
                    hbm=format_seconds(b.hbm_time),
                    limit=format_bytes(self.memory_limit),
                )
                if self.memory_limit is not None
                else say(
                    "time {time} (compute {compute}, HBM {hbm}, communication {comms}), peak memory {peak}",
                    **times,
                    hbm=format_seconds(b.hbm_time),
                )
            )
        else:
            lines.append(
                say(
                    "time {time} (compute {compute}, communication {comms}), peak memory {peak} of {limit}",
                    **times,
                    limit=format_bytes(self.memory_limit),
                )
                if self.memory_limit is not None
                else say("time {time} (compute {compute}, communication {comms}), peak memory {peak}", **times)
            )
        expected = self.expected_time(b)
        if expected is not None:
            lines.append(say("expected on this chip (measured rates): {time}", time=format_seconds(expected)))
        if self.memory_limit is not None:
            lines.append(
                say(
                    "{fitting} of {considered} {considered:candidate|candidates} fit in memory",
                    fitting=self.fitting,
                    considered=self.considered,
                )
            )
        else:
            lines.append(
                say(
                    "{considered} {considered:candidate|candidates} considered (no memory limit)",
                    considered=self.considered,
                )
            )
        if self.fastest is not None and self.fastest is not b and self.fastest.raw_time < b.raw_time:
            lines.append(
                say(
                    "the fastest candidate overall ({time}) needs {bytes} and does not fit",
                    time=format_seconds(self.fastest.time),
                    bytes=format_bytes(self.fastest.memory_bytes_per_device),
                )
            )
        if len(self.ranked) > 1:
            r = self.ranked[1]
            lines.append(
                say(
                    "runner-up: {stored} -> {output} in {time}, {bytes}",
                    stored=", ".join(str(a) for _, a in r.stored),
                    output=str(r.output),
                    time=format_seconds(r.time),
                    bytes=format_bytes(r.memory_bytes_per_device),
                )
            )
        return lines

    def __repr__(self) -> str:
        from ..shown import summary

        best = self.best
        stored = None if best is None else " ".join(str(a) for a in best.stored)
        return summary(
            "SearchResult", " ; ".join(str(m) for m in self.matmuls),
            {"considered": self.considered, "fitting": self.fitting, "memory_limit": None if self.memory_limit is None
             else format_bytes(self.memory_limit)},
            {"best": stored, "time": None if best is None else format_seconds(best.time)},
            mesh=str(self.mesh), hardware=self.hardware.name,
        )  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)

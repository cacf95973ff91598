"""Every sharding of one matmul, verified: the agreement table of the docs.

:func:`shardings` lists every way to shard an array on a mesh with each mesh axis on
at most one dim (an axis may also be unused; two axes on one dim come in both
orders); :func:`sweep` runs :func:`~symshard.jax.verify.verify` on every combination
of operand and output shardings, sharing compiled programs and operand legs between
the cases, and :class:`Sweep` sums it up: agreement on the mesh, and agreement counting the
cases XLA plans with sub-axes that match a strategy on the refined mesh (kept apart, see
:class:`~symshard.jax.verify.Refinement`).

Examples:
    >>> [str(a) for a in shardings("A", ("I", "J"), ("X", "Y"))][:4]
    ['A[I, J]', 'A[I_Y, J]', 'A[I, J_Y]', 'A[I_X, J]']
    >>> len(shardings("A", ("I", "J"), ("X", "Y")))
    11
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..arrays import Array, Dim
from ..matmul import matmul
from .verify import Verification, reason_kind, verify

__all__ = ["Sweep", "shardings", "sweep"]


def shardings(name: str, dims: Sequence[str], axes: Sequence[str]) -> list[Array]:
    """Every sharding of ``name[dims]`` over ``axes``, each axis on at most one dim."""
    out = []
    for assign in itertools.product([None, *dims], repeat=len(axes)):
        per = {d: [a for a, t in zip(axes, assign, strict=True) if t == d] for d in dims}
        for combo in itertools.product(*[list(itertools.permutations(per[d])) for d in dims]):
            out.append(Array(name, tuple(Dim(d, tuple(c)) for d, c in zip(dims, combo, strict=True))))
    return out


@dataclass(frozen=True, slots=True)
class Sweep:
    """The verifications of every case, and what they add up to."""

    mesh: str
    shape: str
    dtype: str
    hardware: str | None
    cases: tuple[Verification, ...]
    seconds: float

    @property
    def agreement(self) -> float:
        """The share of cases in which XLA's collectives are one of symshard's strategies on the mesh."""
        return sum(v.match for v in self.cases) / len(self.cases)

    @property
    def matches_refined(self) -> int:
        """Cases matched only on a refined mesh (XLA shards by sub-axes; see
        :class:`~symshard.jax.verify.Refinement`), the matched strategy run correctly under ``shard_map``."""
        return sum(v.refined_match for v in self.cases)

    @property
    def agreement_combined(self) -> float:
        """The share of cases matched on the mesh or, where XLA shards by sub-axes, on the refined mesh."""
        return (sum(v.match for v in self.cases) + self.matches_refined) / len(self.cases)

    @property
    def disagreements(self) -> tuple[Verification, ...]:
        return tuple(v for v in self.cases if not v.match)

    @property
    def strategies_run(self) -> int:
        return sum(len(v.executions) for v in self.cases)

    def to_json(self) -> dict:
        """Deterministic content (no timings) for the docs page's data file."""
        ranks = [v.rank for v in self.cases if v.rank is not None]
        return {
            "matmul": "A[I, J] · B[J, K] -> C[I, K]",
            "mesh": self.mesh,
            "shape": self.shape,
            "dtype": self.dtype,
            "hardware": self.hardware,
            "cases": len(self.cases),
            "matches": sum(v.match for v in self.cases),
            "agreement": round(self.agreement, 4),
            "refined_cases": sum(v.refined is not None for v in self.cases),
            "matches_refined": self.matches_refined,
            "agreement_combined": round(self.agreement_combined, 4),
            "rank_1": sum(1 for r in ranks if r == 1),
            "strategies_run": self.strategies_run,
            "strategies_ok": sum(e.correct and e.shapes_ok for v in self.cases for e in v.executions),
            "rows": [
                {
                    "matmul": v.matmul,
                    "best": v.best,
                    "xla": list(v.xla),
                    "match": v.match,
                    "matched": v.matched,
                    "rank": v.rank,
                    "matched_on": v.matched_on,
                    "flops_agree": v.flops_agree,
                    "xla_repeats_work": v.xla_repeats_work,
                    "reason": v.reason,
                    **({"refined": _refined_row(v)} if v.refined is not None else {}),
                }
                for v in self.cases
            ],
        }


def _refined_row(v: Verification) -> dict:
    r = v.refined
    assert r is not None
    return {
        "mesh": r.label,
        "devices": r.mesh,
        "matmul": r.matmul,
        "strategies": r.strategies,
        "xla": list(r.xla),
        "match": r.match,
        "matched": r.matched,
        "rank": r.rank,
        "reason": r.reason,
        "reason_kind": None if r.match else reason_kind(r.reason),
        "executed_ok": all(e.correct and e.shapes_ok for e in r.executions) if r.executions else None,
    }


def sweep(
    mesh: str = "X=4,Y=2",
    shape: str = "I=64,J=64,K=64",
    *,
    dtype: str = "fp32",
    hardware: str | None = "tpu-v5e",
    run: str = "all",
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Sweep:
    """Verify every sharding of ``A[I, J] · B[J, K] -> C[I, K]`` on ``mesh`` (``limit``: the first N only)."""
    from ..mesh import Mesh

    axes = Mesh(mesh).names
    cases = [
        matmul(a, b, c)
        for a in shardings("A", ("I", "J"), axes)
        for b in shardings("B", ("J", "K"), axes)
        for c in shardings("C", ("I", "K"), axes)
    ]
    if limit is not None:
        cases = cases[:limit]
    memo: dict = {}
    start = time.perf_counter()
    done = []
    for i, mm in enumerate(cases):
        done.append(verify(mm, mesh, shape, dtype=dtype, hardware=hardware, run=run, fused=False, memo=memo))
        if progress is not None:
            progress(i + 1, len(cases))
    return Sweep(mesh, shape, dtype, hardware, tuple(done), time.perf_counter() - start)

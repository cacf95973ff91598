"""Many shardings of many einsums on many meshes, verified: the agreement data of the docs.

:func:`shardings` lists every way to shard an array on a mesh with each mesh axis on at most
one dim (an axis may also be unused; two axes on one dim come in every order). A
:class:`Batch` is one einsum (a :class:`Family`, e.g. a 2-D matmul or attention's scores) on
one mesh in one dtype; its cases are every combination of operand and output shardings or, where
there are too many, a sample of them drawn with a seed (:func:`cases`). :func:`sweep` runs
:func:`~symshard.jax.verification.verify` on each case, sharing compiled programs and operand legs
between the cases of a batch, and :class:`Sweep` sums it up per mesh: agreement by whole mesh axes,
and agreement counting also the cases XLA plans with sub-axes that match a strategy with those axes in
parts (kept apart, see :class:`~symshard.jax.results.Refinement`), the misses equal in cost, and the
cases in which XLA's plan is cheaper than symshard's best (costed again with every dim :data:`SCALE` times
larger). :data:`SWEEP` is the sweep behind the docs page: 2-D matmuls, batch dims, attention, and the
einsum kinds real models use (:data:`REAL_EINSUMS`), on meshes of 8 and 16 devices.

Examples:
    >>> [str(a) for a in shardings("A", ("I", "J"), ("X", "Y"))][:4]
    ['A[I, J]', 'A[I_Y, J]', 'A[I, J_Y]', 'A[I_X, J]']
    >>> len(shardings("A", ("I", "J"), ("X", "Y"))), len(shardings("A", ("I", "J"), ("X", "Y", "Z")))
    (11, 49)
    >>> b = Batch(FAMILIES["matmul"], "X=4,Y=2", count=3)
    >>> [str(m) for m in cases(b, seed=0)] == [str(m) for m in cases(b, seed=0)]  # a seed draws the same cases
    True
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..machines.mesh import Mesh
from ..notation.arrays import Array, Dim
from ..notation.einsums import Matmul, matmul
from .execution import forget_programs
from .results import Verification
from .verification import verify

__all__ = [
    "FAMILIES",
    "NEW_MESHES",
    "REAL_EINSUMS",
    "SCALE",
    "SWEEP",
    "Batch",
    "Family",
    "Sweep",
    "cases",
    "shardings",
    "sweep",
]


def shardings(name: str, dims: Sequence[str], axes: Sequence[str]) -> list[Array]:
    """Every sharding of ``name[dims]`` over ``axes``, each axis on at most one dim."""
    out = []
    for assign in itertools.product([None, *dims], repeat=len(axes)):
        per = {d: [a for a, t in zip(axes, assign, strict=True) if t == d] for d in dims}
        for combo in itertools.product(*[list(itertools.permutations(per[d])) for d in dims]):
            out.append(Array(name, tuple(Dim(d, tuple(c)) for d, c in zip(dims, combo, strict=True))))
    return out


@dataclass(frozen=True, slots=True)
class Family:
    """An einsum without its shardings, and the sizes it runs at."""

    name: str
    einsum: str  # "A[I, J] · B[J, K] -> C[I, K]"
    shape: str  # "I=96,J=48,K=80"
    about: str  # what it stands for, in a few words

    @property
    def matmul(self) -> Matmul:
        return matmul(self.einsum, outer=True)  # the sweep's einsums are meant, outer products included


FAMILIES = {
    f.name: f
    for f in (
        Family("matmul", "A[I, J] · B[J, K] -> C[I, K]", "I=64,J=64,K=64", "2-D matmul, sizes 64"),
        Family("matmul-odd", "A[I, J] · B[J, K] -> C[I, K]", "I=96,J=48,K=80", "2-D matmul, sizes not powers of two"),
        Family("batched", "A[G, I, J] · B[G, J, K] -> C[G, I, K]", "G=16,I=48,J=32,K=80", "matmul with a batch dim"),
        Family(
            "attention-scores",
            "Q[B, H, S, E] · R[B, H, T, E] -> C[B, H, S, T]",
            "B=16,H=16,S=48,T=32,E=16",
            "attention's scores: batch B, heads H, contracting E",
        ),
        Family(
            "attention-values",
            "P[B, H, S, T] · V[B, H, T, E] -> O[B, H, S, E]",
            "B=16,H=16,S=48,T=32,E=16",
            "attention's output: batch B, heads H, contracting T",
        ),
        # the einsums real models use besides those (issue 36)
        Family(
            "two-contracting",
            "A[I, J, L] · B[J, L, K] -> C[I, K]",
            "I=48,J=32,L=16,K=80",
            "two contracting dims (a projection from heads back to the model: J heads, L per head)",
        ),
        Family(
            "summed",
            "A[I, J, L] · B[J, K] -> C[I, K]",
            "I=48,J=32,L=16,K=80",
            "L summed inside A alone (A's own dim, dropped from the result)",
        ),
        Family("outer", "A[I] · B[K] -> C[I, K]", "I=96,K=80", "an outer product: no dim contracted"),
        Family("matvec", "A[I, J] · B[J] -> C[I]", "I=96,J=80", "a matrix-vector product (decode: one token)"),
        Family(
            "rank-4",
            "A[B, S, D] · W[D, N, H] -> Q[B, S, N, H]",
            "B=16,S=48,D=32,N=16,H=16",
            "a rank-4 result: activations projected onto N heads of H",
        ),
        Family(
            "matmul-deep",
            "A[I, J] · B[J, K] -> C[I, K]",
            "I=48,J=1024,K=80",
            "2-D matmul contracting 1,024 elements",
        ),
        Family(
            "two-contracting-deep",
            "A[I, J, L] · B[J, L, K] -> C[I, K]",
            "I=48,J=64,L=32,K=80",
            "two contracting dims, 2,048 elements contracted",
        ),
    )
}
"""The einsums of the sweep, by name. Every size divides by 16, so every sharding of the
operands and the result is valid on every mesh of 8 or 16 devices; the sizes not powers of two
(48, 80, 96) are split unevenly by no sharding."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One block of a sweep: a family's cases on one mesh in one dtype, every one (``count=None``)
    or ``count`` of them drawn with the sweep's seed."""

    family: Family
    mesh: str
    dtype: str = "fp32"
    count: int | None = None

    @property
    def key(self) -> str:
        """A name for the batch: family, mesh, dtype; it also seeds the batch's draw."""
        return f"{self.family.name} on {self.mesh}, {self.dtype}"

    def arrays(self) -> tuple[list[Array], list[Array], list[Array]]:
        """Every sharding of the operands and of the result on the batch's mesh."""
        mm = self.family.matmul
        axes = Mesh(self.mesh).names
        out = mm.out if mm.out is not None else mm.lhs
        return tuple(shardings(a.name, a.dim_names, axes) for a in (mm.lhs, mm.rhs, out))  # type: ignore[return-value]

    def total(self) -> int:
        """How many cases the batch has when none is left out."""
        return math.prod(len(x) for x in self.arrays())


def cases(batch: Batch, seed: int = 0) -> list[Matmul]:
    """The batch's cases, in a fixed order: every combination of shardings, or ``batch.count`` of them
    drawn with ``random.Random`` seeded by ``seed`` and the batch's key (the same on any machine)."""
    lhs, rhs, out = batch.arrays()
    total = len(lhs) * len(rhs) * len(out)
    if batch.count is None or batch.count >= total:
        picked: Iterable[int] = range(total)
    else:
        picked = sorted(random.Random(f"{seed}: {batch.key}").sample(range(total), batch.count))
    found = []
    for index in picked:
        rest, k = divmod(index, len(out))
        i, j = divmod(rest, len(rhs))
        found.append(matmul(lhs[i], rhs[j], out[k], outer=True))
    return found


# the meshes of 8 and 16 devices the sweep covers
MESHES_8 = ("X=8", "X=4,Y=2", "X=2,Y=4", "X=2,Y=2,Z=2")
MESHES_16 = ("X=4,Y=4", "X=2,Y=2,Z=4", "X=2,Y=2,Z=2,W=2", "X=16", "X=8,Y=2", "X=2,Y=8", "X=4,Y=2,Z=2")

_EINSUMS = ("batched", "attention-scores", "attention-values")

REAL_EINSUMS = ("two-contracting", "summed", "outer", "matvec", "rank-4")
"""The einsum kinds real models use that the first sweep lacked (issue 36); with them, in bf16, contractions
of 1,024 elements and more (``matmul-deep``, ``two-contracting-deep``)."""

NEW_MESHES = ("X=16", "X=8,Y=2", "X=2,Y=8", "X=4,Y=2,Z=2")
"""The meshes of 16 devices the second sweep adds: one axis of 16, 8×2, 2×8 and 4×2×2."""

SWEEP: tuple[Batch, ...] = (
    # the 2-D matmul: every case on X=8 (27) and on X=4,Y=2 (1,331), a sample on the other meshes
    Batch(FAMILIES["matmul"], "X=8"),
    Batch(FAMILIES["matmul"], "X=4,Y=2"),
    Batch(FAMILIES["matmul-odd"], "X=8"),
    Batch(FAMILIES["matmul-odd"], "X=2,Y=4", count=250),
    Batch(FAMILIES["matmul-odd"], "X=4,Y=4", count=250),
    Batch(FAMILIES["matmul-odd"], "X=2,Y=2,Z=2", count=80),
    Batch(FAMILIES["matmul-odd"], "X=2,Y=2,Z=4", count=60),
    # bf16: the same products in another dtype (on CPU XLA runs them in f32; compared on elements)
    Batch(FAMILIES["matmul"], "X=8", "bf16"),
    Batch(FAMILIES["matmul"], "X=4,Y=2", "bf16", count=80),
    Batch(FAMILIES["matmul-odd"], "X=4,Y=4", "bf16", count=30),
    Batch(FAMILIES["matmul-odd"], "X=2,Y=2,Z=2", "bf16", count=20),
    # batch dims and attention: every case on X=8 (64 or 125), a sample elsewhere
    *(Batch(FAMILIES[f], "X=8") for f in _EINSUMS),
    *(Batch(FAMILIES[f], m, count=30) for m in ("X=4,Y=2", "X=2,Y=4", "X=4,Y=4") for f in _EINSUMS),
    *(Batch(FAMILIES[f], "X=2,Y=2,Z=2", count=15) for f in _EINSUMS),
    *(Batch(FAMILIES[f], "X=2,Y=2,Z=4", count=15) for f in _EINSUMS),
    # four axes of two (data, FSDP, tensor, expert): a sample; their plans list 10⁵ to 10⁷ strategies
    Batch(FAMILIES["matmul-odd"], "X=2,Y=2,Z=2,W=2", count=40),
    Batch(FAMILIES["batched"], "X=2,Y=2,Z=2,W=2", count=6),
    *(Batch(FAMILIES[f], "X=2,Y=2,Z=2,W=2", count=4) for f in _EINSUMS[1:]),
    # the einsum kinds real models use (issue 36): on the meshes above, a sample of each
    *(Batch(FAMILIES[f], m, count=5) for m in (*MESHES_8, *MESHES_16[:2]) for f in REAL_EINSUMS),
    # and the meshes 16, 8×2, 2×8 and 4×2×2, with every einsum kind
    *(Batch(FAMILIES[f], m, count=20) for m in NEW_MESHES for f in (*REAL_EINSUMS, "matmul-odd")),
    *(Batch(FAMILIES[f], m, count=8) for m in NEW_MESHES for f in _EINSUMS),
    # bf16 at real sizes: contractions of 1,024 and 2,048 elements
    *(Batch(FAMILIES["matmul-deep"], m, "bf16", count=10) for m in ("X=4,Y=4", *NEW_MESHES)),
    *(Batch(FAMILIES["two-contracting-deep"], m, "bf16", count=6) for m in ("X=2,Y=2,Z=2", *NEW_MESHES)),
)
"""The sweep of the docs page (see ``scripts/jax_agreement.py``)."""


SCALE = 64
"""How many times larger every dim is where the sweep costs XLA's cheaper plans again (``at_scale``): its
sizes of 16 to 96 become 1,024 to 6,144, a layer's, where collectives are bandwidth-bound."""


@dataclass(frozen=True, slots=True)
class Sweep:
    """The verifications of every case, batch by batch, and what they add up to."""

    batches: tuple[tuple[Batch, tuple[Verification, ...], float], ...]  # (batch, its cases, seconds)
    seed: int
    sample: int | None  # strategies run per case (None: every one)
    hardware: str | None
    scale: int | None = SCALE  # how many times larger the dims where cheaper plans are costed again

    @property
    def cases(self) -> tuple[Verification, ...]:
        return tuple(v for _, vs, _ in self.batches for v in vs)

    @property
    def seconds(self) -> float:
        return sum(s for _, _, s in self.batches)

    def meshes(self) -> list[str]:
        """The meshes swept, in the order they first appear."""
        return list(dict.fromkeys(b.mesh for b, _, _ in self.batches))

    def on(self, mesh: str | None = None) -> tuple[Verification, ...]:
        """The cases on ``mesh`` (all of them when None)."""
        return tuple(v for b, vs, _ in self.batches if mesh is None or b.mesh == mesh for v in vs)

    @property
    def agreement(self) -> float:
        """The share of cases in which XLA's collectives are one of symshard's strategies over whole mesh axes."""
        return _summary(self.cases)["agreement"]

    @property
    def agreement_combined(self) -> float:
        """The share of cases matched by whole axes or, where XLA shards by sub-axes, with those axes in parts."""
        return _summary(self.cases)["agreement_combined"]

    @property
    def matches_refined(self) -> int:
        return sum(v.refined_match for v in self.cases)

    @property
    def disagreements(self) -> tuple[Verification, ...]:
        return tuple(v for v in self.cases if not v.match)

    @property
    def strategies_run(self) -> int:
        return sum(len(v.executions) for v in self.cases)

    def to_json(self) -> dict:
        """Deterministic content (no timings) for the docs page's data file."""
        return {
            "seed": self.seed,
            "sample": self.sample,
            "scale": self.scale,
            "bytes": "received per device",
            "hardware": self.hardware,
            "families": [
                {"name": f.name, "einsum": f.einsum, "shape": f.shape, "about": f.about}
                for f in dict.fromkeys(b.family for b, _, _ in self.batches)
            ],
            "batches": [
                {
                    "family": b.family.name,
                    "mesh": b.mesh,
                    "dtype": b.dtype,
                    "of": b.total(),
                    "drawn": b.count is not None and b.count < b.total(),
                    **_summary(vs),
                }
                for b, vs, _ in self.batches
            ],
            "meshes": [{"mesh": m, "devices": int(Mesh(m).devices), **_summary(self.on(m))} for m in self.meshes()],
            "total": _summary(self.cases),
            "rows": [_row(b, v) for b, vs, _ in self.batches for v in vs],
        }

    def timings(self) -> dict:
        """Seconds, per batch and per mesh: what the machine took (kept out of :meth:`to_json`)."""

        def figures(vs: Sequence[Verification], seconds: float) -> dict:
            each = [v.seconds for v in vs]
            return {
                "cases": len(vs),
                "seconds": round(seconds, 1),
                "per_case_mean": round(seconds / max(len(vs), 1), 3),
                "per_case_median": round(statistics.median(each), 3) if each else None,
                "per_case_max": round(max(each), 3) if each else None,
            }

        by_mesh: dict[str, list] = {}
        for b, vs, s in self.batches:
            by_mesh.setdefault(b.mesh, [[], 0.0])
            by_mesh[b.mesh][0].extend(vs)
            by_mesh[b.mesh][1] += s
        return {
            "batches": [{"batch": b.key, **figures(vs, s)} for b, vs, s in self.batches],
            "meshes": [{"mesh": m, **figures(vs, s)} for m, (vs, s) in by_mesh.items()],
            "total": figures(self.cases, self.seconds),
        }

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Sweep", None, {"cases": len(self.cases), "agreement": round(self.agreement, 4),
                       "agreement_combined": round(self.agreement_combined, 4)}, seed=self.seed, sample=self.sample)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _summary(vs: Sequence[Verification]) -> dict:
    n = len(vs)
    matches = sum(v.match for v in vs)
    refined = sum(v.refined_match for v in vs)
    routed = sum(v.match and v.routed for v in vs)
    refined_routed = sum(v.refined_match and v.refined is not None and v.refined.routed for v in vs)
    return {
        "cases": n,
        "matches": matches,
        "agreement": round(matches / n, 4) if n else 0.0,
        "refined_cases": sum(v.refined is not None for v in vs),
        "matches_refined": refined,
        "agreement_combined": round((matches + refined) / n, 4) if n else 0.0,
        # the matches found only step by step, through routes no plan lists (see Verification.routed)
        "matches_routed": routed,
        "matches_refined_routed": refined_routed,
        "agreement_planned": round((matches - routed) / n, 4) if n else 0.0,
        "agreement_combined_planned": round((matches - routed + refined - refined_routed) / n, 4) if n else 0.0,
        "rank_1": sum(v.rank == 1 for v in vs),
        # no match, but a strategy with XLA's collectives, bytes and FLOPs whose permute pairs other devices
        "equal_in_cost": sum(v.equal_in_cost for v in vs),
        # XLA's plan cheaper than symshard's best in bytes received and FLOPs, a match or not (the docs' figure),
        # and of those, the cases whose best is latency-bound (tiny sizes: the ranking follows hops)
        "cheaper_than_best": sum(v.xla_cheaper for v in vs),
        "cheaper_latency_bound": sum(v.xla_cheaper and v.best_regime == "latency" for v in vs),
        "xla_cheaper": sum(v.xla_cheaper and not v.planned for v in vs),
        "planner_work": sum(v.planner_work for v in vs),
        "dot_flops_agree": sum(v.flops_agree is True for v in vs),
        "total_flops_agree": sum(v.total_flops_agree is True for v in vs),
        "flops_compared": sum(v.flops_agree is not None for v in vs),
        "strategies": sum(v.strategies for v in vs),
        "strategies_run": sum(len(v.executions) for v in vs),
        "strategies_ok": sum(e.correct and e.shapes_ok for v in vs for e in v.executions),
        "unrunnable": sum(len(v.unrunnable) for v in vs),
        # cases whose search for XLA's plan the time limit per case cut short: undecided, counted as misses
        "search_stopped": sum(bool(v.search_stopped) for v in vs),
    }


def _row(b: Batch, v: Verification) -> dict:
    row = {
        "family": b.family.name,
        "mesh": b.mesh,
        "dtype": b.dtype,
        "matmul": v.matmul,
        "strategies": v.strategies,
        "best": v.best,
        "xla": list(v.xla),
        "match": v.match,
        "matched": v.matched,
        "rank": v.rank,
        "ranked": v.ranked,
        "among_ranked": v.among_ranked,
        "equal_in_cost": v.equal_in_cost,
        "equivalent": v.equivalent[1] if v.equivalent is not None else None,
        "further": v.further,
        "routed": v.routed,
        "matched_on": v.matched_on,
        "flops_agree": v.flops_agree,
        "total_flops_agree": v.total_flops_agree,
        "xla_flops": v.xla_flops,
        "xla_dot_flops": v.xla_dot_flops,
        "xla_reduction_flops": v.xla_reduction_flops,
        "xla_bytes": v.xla_bytes,
        "best_bytes": v.best_bytes,
        "best_flops": v.best_flops,
        "xla_cheaper": v.xla_cheaper,
        "best_regime": v.best_regime,
        "planner_work": v.planner_work,
        "xla_repeats_work": v.xla_repeats_work,
        "ran": len(v.executions),
        "ran_ok": sum(e.correct and e.shapes_ok for e in v.executions),
        "unrunnable": len(v.unrunnable),
        "not_run": v.not_run,
        "reason": v.reason,
    }
    if v.search_stopped:  # only with a time limit per case: a search for XLA's plan cut short
        row["search_stopped"] = v.search_stopped
    if v.at_scale is not None:
        row["at_scale"] = v.at_scale.to_json()
    if v.refined is not None:
        row["refined"] = _refined_row(v)
    return row


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
        "reason_kind": None if r.match else r.kind or "",
        "best": r.best,
        "best_bytes": r.best_bytes,
        "best_flops": r.best_flops,
        "equivalent": r.equivalent[1] if r.equivalent is not None else None,
        "split": r.split,
        "searched": r.searched,
        "routed": r.routed,
        "executed_ok": all(e.correct and e.shapes_ok for e in r.executions) if r.executions else None,
    }


def sweep(
    batches: Sequence[Batch] = SWEEP,
    *,
    seed: int = 0,
    sample: int | None = 2,
    hardware: str | None = "tpu-v5e",
    time_limit: float | None = None,
    limit: int | None = None,
    progress: Callable[[Batch, int, int], None] | None = None,
    scale: int | None = SCALE,
) -> Sweep:
    """Verify the cases of every batch.

    Args:
        batches: what to sweep (default: :data:`SWEEP`).
        seed: draws the cases of sampled batches and the strategies run per case.
        sample: strategies run under ``shard_map`` per case: the best, the one matching XLA's plan,
            and up to this many in all (see :func:`~symshard.jax.running.choose`); None runs every one.
        hardware: the chip whose constants rank symshard's strategies.
        time_limit: seconds per case (see :func:`~symshard.jax.verification.verify`).
        limit: only the first N cases of each batch (a quick look).
        progress: called with (batch, cases done, cases in the batch) after each case.
        scale: where XLA's plan is a strategy cheaper than symshard's best, cost both with every dim this many
            times larger too (:attr:`~symshard.jax.results.Verification.at_scale`).
    """
    done = []
    for b in batches:
        chosen = cases(b, seed)[:limit]
        memo: dict = {}
        start = time.perf_counter()
        out = []
        for i, mm in enumerate(chosen):
            out.append(
                verify(
                    mm,
                    b.mesh,
                    b.family.shape,
                    dtype=b.dtype,
                    hardware=hardware,
                    run="all",
                    sample=sample,
                    seed=seed,
                    time_limit=time_limit,
                    fused=False,
                    memo=memo,
                    scale=scale,
                )
            )
            if progress is not None:
                progress(b, i + 1, len(chosen))
        done.append((b, tuple(out), time.perf_counter() - start))
        forget_programs()  # the next batch's mesh, sizes or dtype differ: its programs are others
    return Sweep(tuple(done), seed, sample, hardware, scale)

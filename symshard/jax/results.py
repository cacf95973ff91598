"""The results of checking one matmul against JAX and XLA: :class:`Verification` and :class:`Refinement`,
with the report's words.

A :class:`Verification` holds what :func:`symshard.jax.verification.verify` found (symshard's plan, XLA's
collectives and FLOPs, the match or the reason there is none, the strategies run under ``shard_map``) and
says it as rows of keyed messages (:meth:`Verification.rows`: the English of the keys in :data:`ENGLISH`,
other languages in the catalogue, :func:`symshard.report.verification_text`); a :class:`Refinement` is the
same check with the mesh axes XLA splits in parts (:func:`symshard.jax.searches.refine`).

In :mod:`symshard.jax` these are the values: the modules that compute them (:mod:`.matching`,
:mod:`.searches`, :mod:`.verification`) import them; they import only :mod:`.execution`'s
:class:`~symshard.jax.execution.Execution` and :mod:`.running`'s :data:`~symshard.jax.running.AUTO_RUN`.
No JAX.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Clauses, Message, keyed, say
from .execution import Execution
from .running import AUTO_RUN

__all__ = ["ENGLISH", "AtScale", "Refinement", "Row", "Verification", "cheaper", "clauses", "search_words"]

ENGLISH: dict[str, str] = {
    "cli.verify.mesh": "mesh",
    "cli.verify.mesh_value": "{mesh}; shape {shape}; {dtype}",
    "cli.verify.symshard_value": "{ranked} {ranked:strategy|strategies} as matmul --all ranks them ({count} with the "
    "orders XLA's partitioner takes, among which XLA's plan is looked for); best: {best}",
    "cli.verify.no_collectives": "no collectives",
    "cli.verify.agreement": "agreement",
    "cli.verify.yes": "yes: XLA's plan is symshard's strategy {rank}, {name}",
    "cli.verify.yes_xla_order": "yes: XLA's plan is {name}, one of the orders XLA's partitioner takes, which "
    "symshard lists when it looks for XLA's plan (routes='xla'), not in matmul's ranking; it would rank {rank} there",
    "cli.verify.yes_further": "yes: XLA's plan is {name}, one of XLA's further orders, which symshard does not "
    "list for this matmul but finds by its collectives; it would rank {rank} among the listed",
    "cli.verify.yes_routed": "yes: XLA's plan is {name}, a route of symshard's collectives that its planner "
    "does not list, found step by step from XLA's collectives and run correctly; it would rank {rank} among the listed",
    "cli.verify.no": "no: {reason}",
    "cli.verify.equivalent": "no, but equal in cost: XLA's plan has the collectives, the bytes and the FLOPs of "
    "symshard's strategy {rank}, {name}, but its collective-permute pairs other devices: {reason}",
    "cli.verify.refined_equivalent": "no, but equal in cost: XLA's plan has the collectives, the bytes and the "
    "FLOPs of symshard's strategy {rank} there, {name}, but its collective-permute pairs other devices: {reason}",
    "cli.verify.no_in_time": "not found before the time limit: {reason}",
    "cli.verify.no_on_mesh": "not by whole axes, yes by parts of axes (below): {reason}",
    "cli.verify.refined": "axes in parts",
    "cli.verify.refined_value": "{label} ({mesh}): {matmul}; {count} {count:strategy|strategies}",
    "cli.verify.refined_yes": "yes: symshard's strategy {rank} there, {name}, ran correctly",
    "cli.verify.refined_yes_searched": "yes: {name}, found by a search for XLA's collectives, ran correctly",
    "cli.verify.refined_yes_routed": "yes: {name}, a route of symshard's collectives that its planner does not "
    "list, found step by step from XLA's collectives, ran correctly",
    "cli.verify.refined_broken": "collectives of {name}, but it did NOT run correctly",
    "cli.verify.cost": "cost",
    "cli.verify.cost_value": "per device, XLA's plan receives {xla_bytes} B in its collectives and its dots do "
    "{xla_flops} FLOPs, symshard's best receives {best_bytes} B and its product does {best_flops} FLOPs",
    "cli.verify.cheaper": "; XLA's plan is cheaper: planner work",
    "cli.verify.parts_cost": "; with axes in parts, symshard's best receives {best_bytes} B and does {best_flops} "
    "FLOPs",
    "cli.verify.flops": "XLA {total} per device in all, {dots} in dots",
    "cli.verify.flops_extra": " ({adds} adds of reductions, {other} converts and index arithmetic)",
    "cli.verify.flops_extra_sums": " ({adds} adds of reductions, {sums} adds of local sums, {other} converts and "
    "index arithmetic)",
    "cli.verify.flops_both": "; symshard's count equals the dots and the total",
    "cli.verify.flops_dots": "; symshard's count equals the dots, not the total",
    "cli.verify.flops_total": "; symshard's count equals the total, not the dots",
    "cli.verify.flops_neither": "; symshard's count DIFFERS from the dots and the total",
    "cli.verify.repeats": "; XLA repeats work across devices",
    "cli.verify.ran": "{ok} of {total} {total:strategy|strategies} ran and matched the product",
    "cli.verify.ran_none": "none of the {chosen} {chosen:strategy|strategies} chosen ran",
    "cli.verify.sampled": " (a sample: {chosen} of {count}, seed {seed})",
    "cli.verify.sampled_auto": " (a sample: {chosen} of {count}, seed {seed}, since there are more than {limit}; "
    "--run all runs every one)",
    "cli.verify.unrunnable": "not runnable",
    "cli.verify.unrunnable_value": "{count} listed {count:strategy|strategies} hold a block that does not divide, which JAX "
    "cannot hold (first: {name}: {why}); not run",
    "cli.verify.time_limit": "time limit",
    "cli.verify.time_limit_value": "{limit} s reached: {left} of the {chosen} chosen {chosen:strategy|strategies} did not run; "
    "run a seeded sample with --sample N, or allow more with --time-limit",
    "cli.verify.search_stopped_value": "{limit} s reached: the search for XLA's plan through {search} stopped, "
    "and the plan may yet be there; allow more with --time-limit",
    "cli.verify.search_search": "symshard's strategies by XLA's collectives",
    "cli.verify.search_further": "XLA's further orders",
    "cli.verify.search_routes": "every route of symshard's collectives taken step by step",
    "cli.verify.search_parts": "{search} with axes in parts",
    "cli.verify.failed": "  failed",
    "cli.verify.time": "time",
    "cli.verify.time_value": "symshard {symshard} ms; XLA compile {xla} ms",
    "cli.verify.lowering": "lowering",
}
"""The English of the report's words by key (the keys are the command line's, whose report this is);
other languages are in the catalogue."""


def _word(key: str, **values: object) -> Message:
    return keyed(ENGLISH, key, **values)


def clauses(items: Sequence[str]) -> Message:
    """Sentences said one after another, joined by a semicolon in each language's way."""
    return say("{clauses}", clauses=Clauses(items))


def search_words(stopped: str) -> Message:
    """The search :attr:`Verification.search_stopped` names, in words: ``"search"`` (XLA's collectives among
    a plan too long to list), ``"further"`` (XLA's further orders) or ``"routes"`` (every route step by
    step), in the order :func:`~symshard.jax.verification.verify` runs them; with axes in parts
    (:func:`~symshard.jax.searches.refine`), prefixed ``parts_``."""
    if stopped.startswith("parts_"):
        return _word("cli.verify.search_parts", search=search_words(stopped[len("parts_") :]))
    return _word("cli.verify.search_" + stopped)


@dataclass(frozen=True, slots=True)
class AtScale:
    """XLA's plan (a symshard strategy) and symshard's best for the same question with every dim ``factor``
    times larger, costed by symshard's model: whether a plan that receives fewer bytes at the sweep's tiny,
    latency-bound sizes is also the faster one where collectives are bandwidth-bound and the product is
    large. Times in seconds on the plan's chip; bytes each device receives in collectives."""

    factor: int
    xla_time: float
    best_time: float
    xla_bytes: int
    best_bytes: int
    xla_bound: str | None
    best_bound: str | None
    best: str  # symshard's best at that scale

    def to_json(self) -> dict[str, Any]:
        return {
            "factor": self.factor,
            "xla_time_s": self.xla_time,
            "best_time_s": self.best_time,
            "xla_bytes": self.xla_bytes,
            "best_bytes": self.best_bytes,
            "xla_bound": self.xla_bound,
            "best_bound": self.best_bound,
            "best": self.best,
        }


Row = tuple[tuple[str, ...], tuple[str, ...]]
"""A row of the report: the pieces of its label and of its value, each said in turn and put one after
the other (a :class:`~symshard.messages.Message`, or text that is the same in every language)."""


@dataclass(frozen=True, slots=True)
class Verification:
    """symshard's plan for one matmul next to JAX's execution and XLA's own plan.

    FLOPs are compared twice, separately: XLA's dots against the FLOPs of symshard's local product
    (``flops_agree``), and the module's total as ``cost_analysis`` counts it (``xla_flops``: the dots, the
    adds of its reductions, ``xla_reduction_flops``, the adds of its local sums, ``xla_sum_flops``, and
    converts and index arithmetic) against symshard's whole count (``total_flops_agree``): symshard counts a
    matmul's FLOPs, 2 × the product of its dims over the devices that split it, as the book does, plus the
    adds of an operand's local sum (:class:`~symshard.notation.einsums.LocalSum`), and no adds of reductions.

    Bytes (``xla_bytes``, ``best_bytes``) are what each device receives in the collectives
    (:func:`~symshard.jax.xla_plans.received_elements`): an all-gather's ``n - 1`` other blocks, not its
    input once; XLA's plan and symshard's best are compared by them.
    """

    matmul: str
    mesh: str
    shape: str
    dtype: str
    hardware: str | None
    strategies: int
    best: str
    xla: tuple[str, ...]
    xla_flops: int
    xla_dot_flops: int
    xla_repeats_work: bool
    match: bool
    matched: str | None
    rank: int | None
    flops_agree: bool | None
    reason: str
    lowering: tuple[str, ...]
    executions: tuple[Execution, ...]
    symshard_seconds: float
    xla_compile_seconds: float
    refined: Refinement | None = None  # where XLA shards by sub-axes: the check with those axes in parts
    further: bool = False  # the match is one of XLA's further orders the plan does not list, found by search
    routed: bool = False  # the match's legs are routes no plan lists, found step by step (ran correctly)
    xla_reduction_flops: int = 0
    total_flops_agree: bool | None = None
    xla_bytes: int = 0  # bytes each device receives in XLA's collectives, in the plan's dtype (see received_elements)
    best_bytes: int = 0  # the same for symshard's best strategy
    best_flops: int = 0  # FLOPs per device of symshard's best strategy's local product (what XLA's dots do)
    chosen: int = 0  # strategies chosen to run under shard_map (all, the best, or a sample)
    sample: int | None = None  # how many of the strategies were run (--sample N, or run='auto' on a large plan)
    sampled_by_default: bool = False  # run='auto' drew the sample, the plan having more than AUTO_RUN
    seed: int = 0
    unrunnable: tuple[tuple[str, str], ...] = ()  # (strategy, why): blocks that do not divide
    not_run: int = 0  # chosen strategies left when the time limit was reached
    time_limit: float | None = None
    stopped: str = ""  # the search for XLA's plan the time limit cut short: "further" or "routes" (see search_words)
    seconds: float = 0.0  # the whole check: planning, XLA's compile, every run
    equivalent: tuple[int, str] | None = None  # no match, but (rank, name) of a strategy equal in cost (Comparison)
    xla_sum_flops: int = 0  # the adds of XLA's local sums (a dim only one operand has, summed before the dot)
    xla_multiply_flops: int = 0  # the share of xla_dot_flops XLA wrote as a multiply (2 per element; the total has 1)
    flops: int = 0  # symshard's count for the matched strategy (else the best): its product's FLOPs and its sums'
    ranked: int = 0  # the strategies `matmul --hw --all` ranks (the planner's routes), among which rank is said
    among_ranked: bool = False  # the match is one of those, not only one of the orders XLA's partitioner takes
    best_regime: str | None = None  # what bounds symshard's best: "latency", "bandwidth", "compute" or "memory"
    at_scale: AtScale | None = None  # with verify(scale=...): the two plans with every dim that much larger

    @property
    def refined_match(self) -> bool:
        """No strategy over whole axes is XLA's plan, but one with axes in parts is, and ran correctly."""
        return not self.match and self.refined is not None and self.refined.match

    @property
    def planned(self) -> bool:
        """XLA's plan is one the planner offers: listed, or among XLA's further orders (not a route found
        only step by step, :attr:`routed`)."""
        return self.match and not self.routed

    @property
    def matched_on(self) -> str | None:
        """``"mesh"`` (by whole axes), ``"mesh in parts X=X1·X2"`` (see :class:`Refinement`), or None."""
        if self.match:
            return "mesh"
        if self.refined_match and self.refined is not None:
            return f"mesh in parts {self.refined.label}"
        return None

    @property
    def equal_in_cost(self) -> bool:
        """No match, by whole axes or with axes in parts, but a strategy with XLA's collectives, bytes and FLOPs
        whose collective-permute pairs other devices: reported apart from the misses (:class:`Comparison`)."""
        if self.match or self.refined_match:
            return False
        r = self.refined
        return self.equivalent is not None or (r is not None and r.equivalent is not None)

    @property
    def executed_ok(self) -> bool:
        """Every strategy that ran gave the unsharded product with symshard's block shapes."""
        return all(e.correct and e.shapes_ok for e in self.executions)

    @property
    def search_stopped(self) -> str:
        """The search for XLA's plan the time limit cut short (by whole axes, else with axes in parts), as
        :func:`search_words` names it; empty when none was."""
        if self.stopped:
            return self.stopped
        r = self.refined
        return "parts_" + r.stopped if r is not None and r.stopped else ""

    @property
    def time_limit_reached(self) -> bool:
        """The time limit came first: a search for XLA's plan was cut short, or chosen strategies did not run."""
        return self.not_run > 0 or bool(self.search_stopped)

    @property
    def xla_cheaper(self) -> bool:
        """XLA's plan costs less than symshard's best on both counts that need no cost model: its
        collectives take no more bytes from each device and its dots do no more FLOPs, one of them
        strictly fewer."""
        return cheaper((self.xla_bytes, self.xla_dot_flops), (self.best_bytes, self.best_flops))

    @property
    def planner_work(self) -> bool:
        """XLA's plan is none of the strategies symshard's planner offers (listed, or among XLA's further
        orders), by whole axes or with axes in parts, nor equal in cost to one (:attr:`equal_in_cost`), and costs
        less than symshard's best both ways (see :attr:`xla_cheaper`), also than its best with the axes XLA
        splits in parts where those were planned: a route symshard's planner lacks, even where a search step by
        step finds it (:attr:`routed`)."""
        r = self.refined
        if self.planned or (self.refined_match and r is not None and not r.routed) or not self.xla_cheaper:
            return False
        if self.equal_in_cost:  # the planner has a strategy as cheap, which pairs devices otherwise
            return False
        r = self.refined
        return r is None or cheaper((self.xla_bytes, self.xla_dot_flops), (r.best_bytes, r.best_flops))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "matmul": self.matmul,
            "mesh": self.mesh,
            "shape": self.shape,
            "dtype": self.dtype,
            "hardware": self.hardware,
            "strategies": self.strategies,
            "ranked": self.ranked,
            "best": self.best,
            "best_bytes_per_device": self.best_bytes,
            "best_flops_per_device": self.best_flops,
            "xla_collectives": list(self.xla),
            "xla_bytes_per_device": self.xla_bytes,
            "xla_flops_per_device": self.xla_flops,
            "xla_dot_flops_per_device": self.xla_dot_flops,
            "xla_reduction_flops_per_device": self.xla_reduction_flops,
            "xla_sum_flops_per_device": self.xla_sum_flops,
            "bytes_per_device": "received",
            "xla_repeats_work": self.xla_repeats_work,
            "xla_cheaper": self.xla_cheaper,
            "best_regime": self.best_regime,
            "at_scale": self.at_scale.to_json() if self.at_scale is not None else None,
            "match": self.match,
            "matched_strategy": self.matched,
            "rank": self.rank,
            "among_ranked": self.among_ranked,
            "further": self.further,
            "routed": self.routed,
            "matched_on": self.matched_on,
            "equal_in_cost": self.equal_in_cost,
            "equivalent": _equivalent_json(self.equivalent),
            "flops_agree": self.flops_agree,
            "total_flops_agree": self.total_flops_agree,
            "reason": self.reason,
            "refined": self.refined.to_json() if self.refined is not None else None,
            "lowering": list(self.lowering),
            "chosen": self.chosen,
            "sample": self.sample,
            "sampled_by_default": self.sampled_by_default,
            "seed": self.seed,
            "executed": [
                {
                    "strategy": e.strategy,
                    "correct": e.correct,
                    "exact": e.exact,
                    "max_error": e.max_error,
                    "shapes_ok": e.shapes_ok,
                    "shape_problems": list(e.shape_problems),
                }
                for e in self.executions
            ],
            "executed_ok": self.executed_ok,
            "unrunnable": [{"strategy": name, "why": why} for name, why in self.unrunnable],
            "not_run": self.not_run,
            "time_limit_s": self.time_limit,
            "time_limit_reached": self.time_limit_reached,
            "search_stopped": self.search_stopped or None,
            "symshard_seconds": round(self.symshard_seconds, 6),
            "xla_compile_seconds": round(self.xla_compile_seconds, 6),
            "seconds": round(self.seconds, 6),
        }

    def json(self) -> str:
        """:meth:`to_json` as text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)

    @property
    def flops_verdict(self) -> str:
        """The key of what symshard's FLOPs equal: XLA's dots, its total, both or neither."""
        both = {(True, True): "both", (True, False): "dots", (False, True): "total", (False, False): "neither"}
        return "cli.verify.flops_" + both[bool(self.flops_agree), bool(self.total_flops_agree)]

    def flops_row(self) -> Row:
        """The FLOPs row: XLA's total and its dots, each compared with symshard's count on its own."""
        parts = [_word("cli.verify.flops", total=f"{self.xla_flops:,}", dots=f"{self.xla_dot_flops:,}")]
        extra = self.xla_flops - self.xla_dot_flops + self.xla_multiply_flops // 2  # the total counts a multiply once
        if extra:
            adds = f"{self.xla_reduction_flops:,}"
            other = f"{extra - self.xla_reduction_flops - self.xla_sum_flops:,}"
            if self.xla_sum_flops:
                sums = f"{self.xla_sum_flops:,}"
                parts.append(_word("cli.verify.flops_extra_sums", adds=adds, sums=sums, other=other))
            else:
                parts.append(_word("cli.verify.flops_extra", adds=adds, other=other))
        if self.flops_agree is not None:
            parts.append(_word(self.flops_verdict))
        if self.xla_repeats_work:
            parts.append(_word("cli.verify.repeats"))
        return (("FLOPs",), tuple(parts))

    def flops_text(self) -> str:
        """:meth:`flops_row`'s value, in English."""
        return "".join(self.flops_row()[1])

    def run_rows(self) -> list[Row]:
        """The rows about running strategies under ``shard_map``: what ran, what could not, what was left."""
        rows: list[Row] = []
        if self.executions or (self.chosen and self.sample):
            ok = sum(e.correct and e.shapes_ok for e in self.executions)
            ran: list[str] = [
                _word("cli.verify.ran", ok=ok, total=len(self.executions))
                if self.executions
                else _word("cli.verify.ran_none", chosen=f"{self.chosen:,}")
            ]
            if self.sample:
                chosen, count = f"{self.chosen:,}", f"{self.strategies:,}"
                if self.sampled_by_default:
                    said = _word("cli.verify.sampled_auto", chosen=chosen, count=count, seed=self.seed, limit=AUTO_RUN)
                else:
                    said = _word("cli.verify.sampled", chosen=chosen, count=count, seed=self.seed)
                ran.append(said)
            rows.append((("shard_map",), tuple(ran)))
            for e in self.executions:
                if not (e.correct and e.shapes_ok):
                    why = clauses(e.shape_problems) if e.shape_problems else str(e.max_error)
                    rows.append(((_word("cli.verify.failed"),), (e.strategy, ": ", why)))
        if self.unrunnable:
            name, why = self.unrunnable[0]
            said = _word("cli.verify.unrunnable_value", count=len(self.unrunnable), name=name, why=why)
            rows.append(((_word("cli.verify.unrunnable"),), (said,)))
        limit = f"{self.time_limit:g}" if self.time_limit is not None else ""
        if self.search_stopped:
            said = _word("cli.verify.search_stopped_value", limit=limit, search=search_words(self.search_stopped))
            rows.append(((_word("cli.verify.time_limit"),), (said,)))
        if self.not_run:
            left, chosen = f"{self.not_run:,}", f"{self.chosen:,}"
            said = _word("cli.verify.time_limit_value", limit=limit, left=left, chosen=chosen)
            rows.append(((_word("cli.verify.time_limit"),), (said,)))
        return rows

    def rows(self) -> list[Row]:
        """The report as rows of messages, to say in any language (:meth:`text` says them in English)."""
        mesh = _word("cli.verify.mesh_value", mesh=self.mesh, shape=self.shape, dtype=self.dtype)
        rows: list[Row] = [
            ((_word("cli.verify.mesh"),), (clauses([mesh, self.hardware]) if self.hardware else mesh,)),
            (
                ("symshard",),
                (
                    _word(
                        "cli.verify.symshard_value",
                        ranked=f"{self.ranked:,}",
                        count=f"{self.strategies:,}",
                        best=self.best,
                    ),
                ),
            ),
            (("XLA",), (clauses(self.xla) if self.xla else _word("cli.verify.no_collectives"),)),
        ]
        agreement = _word("cli.verify.agreement")
        if not self.match and not self.refined_match and self.equivalent is not None:
            rank, name = self.equivalent
            rows.append(((agreement,), (_word("cli.verify.equivalent", rank=rank, name=name, reason=self.reason),)))
        elif self.match:
            said = (
                "cli.verify.yes_routed"
                if self.routed
                else "cli.verify.yes_further"
                if self.further
                else "cli.verify.yes"
                if self.among_ranked
                else "cli.verify.yes_xla_order"
            )
            rows.append(((agreement,), (_word(said, rank=self.rank, name=self.matched),)))
        elif self.refined is not None and self.refined.match:
            rows.append(((agreement,), (_word("cli.verify.no_on_mesh", reason=self.reason),)))
        elif self.stopped:
            rows.append(((agreement,), (_word("cli.verify.no_in_time", reason=self.reason),)))
        else:
            rows.append(((agreement,), (_word("cli.verify.no", reason=self.reason),)))
        r = self.refined
        if r is not None:
            value = _word(
                "cli.verify.refined_value", label=r.label, mesh=r.mesh, matmul=r.matmul, count=f"{r.strategies:,}"
            )
            rows.append(((_word("cli.verify.refined"),), (value,)))
            rows.append((("  XLA",), (clauses(r.xla) if r.xla else _word("cli.verify.no_collectives"),)))
            if r.match and r.routed:
                said = _word("cli.verify.refined_yes_routed", name=r.matched)
            elif r.match and r.rank is None:
                said = _word("cli.verify.refined_yes_searched", name=r.matched)
            elif r.match:
                said = _word("cli.verify.refined_yes", rank=r.rank, name=r.matched)
            elif r.matched is not None:
                said = _word("cli.verify.refined_broken", name=r.matched)
            elif r.equivalent is not None:
                said = _word("cli.verify.refined_equivalent", rank=r.equivalent[0], name=r.equivalent[1],
                             reason=r.reason)  # fmt: skip
            elif r.stopped:
                said = _word("cli.verify.no_in_time", reason=r.reason)
            else:
                said = _word("cli.verify.no", reason=r.reason)
            rows.append((("  ", agreement), (said,)))
        if not self.planned:  # XLA's plan next to symshard's best, where the planner does not offer it
            rows.append(((_word("cli.verify.cost"),), self.cost_parts()))
        rows.append(self.flops_row())
        rows += self.run_rows()
        times = _word(
            "cli.verify.time_value",
            symshard=f"{self.symshard_seconds * 1e3:.1f}",
            xla=f"{self.xla_compile_seconds * 1e3:.1f}",
        )
        rows.append(((_word("cli.verify.time"),), (times,)))
        rows += [((_word("cli.verify.lowering"),), (note,)) for note in self.lowering]
        return rows

    def text(self) -> str:
        """The report, for people."""
        rows = [("".join(k), "".join(v)) for k, v in self.rows()]
        width = max(len(k) for k, _ in rows)
        return self.matmul + "\n" + "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)

    def cost_parts(self) -> tuple[str, ...]:
        """XLA's plan and symshard's best side by side, per device: the bytes each device receives in their
        collectives and the FLOPs of their products."""
        said = _word(
            "cli.verify.cost_value",
            xla_bytes=f"{self.xla_bytes:,}",
            xla_flops=f"{self.xla_dot_flops:,}",
            best_bytes=f"{self.best_bytes:,}",
            best_flops=f"{self.best_flops:,}",
        )
        out = [said]
        r = self.refined
        if r is not None and r.best:
            out.append(_word("cli.verify.parts_cost", best_bytes=f"{r.best_bytes:,}", best_flops=f"{r.best_flops:,}"))
        if self.planner_work:
            out.append(_word("cli.verify.cheaper"))
        return tuple(out)

    def cost_text(self) -> str:
        """:meth:`cost_parts`, in English."""
        return "".join(self.cost_parts())

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Verification", self.matmul, {"match": self.match, "matched": self.matched, "rank": self.rank,
                       "strategies": self.strategies, "flops_agree": self.flops_agree}, mesh=self.mesh,
                       dtype=self.dtype)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _equivalent_json(found: tuple[int, str] | None) -> dict | None:
    return None if found is None else {"rank": found[0], "strategy": found[1]}


def cheaper(xla: tuple[int, int], best: tuple[int, int]) -> bool:
    """``(bytes, FLOPs)`` of XLA's plan no more than ``best``'s both ways, and not the same.

    Examples:
        >>> cheaper((14336, 65536), (14336, 65536)), cheaper((1024, 65536), (14336, 65536))
        (False, True)
    """
    return xla[0] <= best[0] and xla[1] <= best[1] and xla != best


@dataclass(frozen=True, slots=True)
class Refinement:
    """One matmul whose XLA plan shards by sub-axes, checked again with those mesh axes in parts: the
    same devices, in the same order, each split axis used as one axis per part (:mod:`symshard.machines.subaxes`).

    On mesh ``X=4,Y=2`` XLA may treat X as two halves, ``X:(1)2`` (major) and ``X:(2)2``
    (minor); split as ``X=2x2`` the mesh is ``X1=2,X2=2,Y=2``, the same eight devices (device
    ``(x1*2 + x2)*2 + y`` is device ``x*2 + y`` of the mesh as written, with ``x = 2*x1 + x2``), on
    which ``I_X`` is ``I_{X1,X2}`` and the halves are the parts X1 and X2. The matmul is planned again
    so (``plan(..., split=..., routes="xla")``), XLA's compiled module (the same one) is read with the
    parts as axes, and its collectives are looked for among that plan's strategies; a strategy that
    has them is run under ``shard_map`` and counts as a match only if it gives the product (:attr:`match`).
    """

    label: str  # "X=X1·X2": which axis became which parts
    mesh: str  # the mesh with the parts, "X1=2,X2=2,Y=2"
    matmul: str  # the matmul with every split axis replaced by its parts, major first
    strategies: int
    xla: tuple[str, ...]  # XLA's collectives over the parts
    matched: str | None
    rank: int | None
    reason: str
    executions: tuple[Execution, ...]  # the matched strategy under shard_map
    kind: Message | None = None  # the kind of the disagreement, for grouping (see compare); None: no reason
    split: str = ""  # the split as the CLI takes it, "X=2x2"
    searched: bool = False  # found (or not) by a search for XLA's collectives, not in a listing: no rank
    routed: bool = False  # found only step by step, through routes no plan lists (see Verification.routed)
    best: str = ""  # symshard's fastest strategy with the axes in parts
    best_bytes: int = 0  # bytes each device receives in its collectives, in the plan's dtype
    best_flops: int = 0  # its product's FLOPs per device
    stopped: str = ""  # the search the time limit cut short: "search", "further" or "routes" (see search_words)
    equivalent: tuple[int, str] | None = None  # no match, but a strategy equal in cost there (see Comparison)
    ranked: int = 0  # the strategies `matmul --split ... --all` ranks, among which rank is said

    @property
    def match(self) -> bool:
        """XLA's collectives are exactly a strategy of the plan with axes in parts, and that strategy, run under
        ``shard_map``, gave the product with symshard's block shapes."""
        return (
            self.matched is not None
            and bool(self.executions)
            and all(e.correct and e.shapes_ok for e in self.executions)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "refined_mesh": self.label,
            "split": self.split,
            "mesh": self.mesh,
            "matmul": self.matmul,
            "strategies": self.strategies,
            "xla_collectives": list(self.xla),
            "match": self.match,
            "matched_strategy": self.matched,
            "rank": self.rank,
            "reason": self.reason,
            "reason_kind": None if self.match else self.kind or "",
            "searched": self.searched,
            "routed": self.routed,
            "stopped": self.stopped or None,
            "best": self.best,
            "best_bytes": self.best_bytes,
            "best_flops": self.best_flops,
            "equivalent": _equivalent_json(self.equivalent),
            "executed": [
                {"strategy": e.strategy, "correct": e.correct, "exact": e.exact, "shapes_ok": e.shapes_ok}
                for e in self.executions
            ],
        }

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Refinement", self.matmul, {"match": self.match, "matched": self.matched, "rank": self.rank,
                       "strategies": self.strategies}, mesh=self.mesh, label=self.label)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)

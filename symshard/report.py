"""Readable text and JSON-ready dicts for plans, comparisons and sharding searches.

The command line prints these; the docs site and the problem generator reuse
them. Numbers are formatted here, at the edge; formulas come from the algebra
(``pretty`` for text, ``latex`` for JSON).

Examples:
    >>> from symshard.planner import plan
    >>> print(plan_text(plan("A[I, J_X] · B[J_X, K] -> C[I, K]"), top=1))  # doctest: +ELLIPSIS
    A[I, J_X] · B[J_X, K] -> C[I, K]
    Case 3: both operands shard the contracting dim J along X, ...
"""

from __future__ import annotations

import sympy

from .crossovers import Comparison, Condition
from .planner import Plan, Strategy
from .search import Candidate, SearchResult
from .symbols import latex
from .units import format_bytes, format_flops, format_seconds, format_seconds_expr, json_value, pretty

__all__ = [
    "compare_data",
    "compare_text",
    "plan_data",
    "plan_text",
    "search_data",
    "search_text",
    "strategy_data",
]


def _num(value: sympy.Expr) -> bool:
    return bool(sympy.sympify(value).is_number)


def _seconds(value: sympy.Expr) -> str:
    return format_seconds(value) if _num(value) else format_seconds_expr(value) if _hw_only(value) else pretty(value)


def _hw_only(value: sympy.Expr) -> bool:
    return {s.name for s in sympy.sympify(value).free_symbols} <= {"T_hop"}


def _bytes(value: sympy.Expr) -> str:
    return format_bytes(value) if _num(value) else pretty(value)


def strategy_data(index: int, s: Strategy) -> dict:
    """One strategy as a JSON-ready dict (DESIGN's keys, plus formulas)."""
    return {
        "index": index,
        "name": s.name,
        "steps": s.describe(),
        "output": str(s.output),
        "flops_per_device": json_value(s.flops_per_device),
        "compute_time_s": json_value(s.compute_time),
        "comm_time_s": json_value(s.comm_time),
        "time_s": json_value(s.time),
        "overlap_time_s": json_value(s.overlap_time),
        "serial_time_s": json_value(s.serial_time),
        "bound": s.bound,
        "memory_bytes_per_device": json_value(s.memory_bytes_per_device),
        "collectives": [
            {
                "step": str(st.op),
                "bytes": json_value(sympy.sympify(st.cost.bytes)),
                "hops": json_value(sympy.sympify(st.cost.hops)),
                "time_s": json_value(sympy.sympify(st.cost.time)),
            }
            for st in s.collectives
        ],
        "formulas": {
            "compute_time": latex(s.compute_time),
            "comm_time": latex(s.comm_time),
            "time": latex(s.time),
        },
    }


def plan_data(p: Plan) -> dict:
    """A plan as one JSON-ready dict: ``case``, ``strategies``, ``best`` and context."""
    best = p.best
    return {
        "matmul": str(p.matmul),
        "case": p.classification.case,
        "reason": p.classification.reason,
        "notes": list(p.classification.notes),
        "mesh": [
            {"axis": a.name, "size": json_value(a.size), "topology": a.topology.value, "fabric": a.fabric.value}
            for a in p.mesh.axes
        ],
        "shape": {d: json_value(v) for d, v in p.sizes},
        "dtype": p.dtype,
        "model": p.model,
        "overlap": p.overlap,
        "hardware": p.hardware.name if p.hardware else None,
        "outputs": [str(t) for t in p.targets],
        "strategies": [strategy_data(i, s) for i, s in enumerate(p.strategies, 1)],
        "best": {"index": p.strategies.index(best) + 1, "name": best.name} if best else None,
        "assumptions": list(p.assumptions),
    }


def plan_text(p: Plan, top: int | None = 10) -> str:
    """The plan for a terminal: the case, then each strategy with its steps and costs."""
    lines = [str(p.matmul), str(p.classification)]
    lines += [f"  note: {n}" for n in p.classification.notes]
    lines.append("mesh: " + ("; ".join(p.mesh.describe()) or "one device"))
    if p.hardware is not None:
        lines.append(f"hardware: {p.hardware.label}")
    mode = "max(T_math, T_comms)" if p.overlap else "T_math + T_comms"
    shown = p.strategies if top is None else p.strategies[:top]
    order = "fastest first" if p.numeric else "fewest collectives first (sizes are symbolic)"
    lines.append(f"{len(p.strategies)} strategies, {order}; time = {mode}, model {p.model}:")
    for i, s in enumerate(shown, 1):
        lines.append(f"{i:>3}. {s.name}")
        for step in s.describe():
            lines.append(f"       {step}")
        if p.numeric:
            lines.append(
                f"       {format_flops(s.flops_per_device)}/device; compute {format_seconds(s.compute_time)}, "
                f"comms {format_seconds(s.comm_time)}, time {format_seconds(s.time)} ({s.bound}-bound); "
                f"peak {format_bytes(s.memory_bytes_per_device)}"
            )
        else:
            lines.append(f"       T_math  = {_seconds(s.compute_time)}")
            lines.append(f"       T_comms = {_seconds(s.comm_time)}")
            lines.append(f"       memory  = {_bytes(s.memory_bytes_per_device)}")
    if top is not None and len(p.strategies) > top:
        lines.append(f"  ... {len(p.strategies) - top} more (--top N or --json shows them all)")
    best = p.best
    if best is not None:
        lines.append(f"best: {p.strategies.index(best) + 1}. {best.name} in {format_seconds(best.time)}")
    else:
        lines.append("best: undecided while sizes or constants are symbolic (give --shape and --hw)")
    return "\n".join(lines)


# -- comparisons -------------------------------------------------------------------------------


def _condition_data(c: Condition) -> dict:
    return {
        "text": c.text(),
        "latex": c.latex(),
        "cases": [{"regimes": case.label, "text": case.text(), "latex": case.latex()} for case in c.cases],
    }


def compare_data(c: Comparison) -> dict:
    """A comparison as one JSON-ready dict with a ``conditions`` key (DESIGN)."""
    regimes = []
    for r in c.regimes:
        regimes.append(
            {
                "strategy": r.index,
                "name": r.strategy.name,
                "compute_time": latex(r.strategy.compute_time),
                "communication_bound_if": _condition_data(r.communication_bound),
                "numeric": _condition_data(r.numeric) if r.numeric is not None else None,
            }
        )
    pairs = []
    for pr in c.pairs:
        pairs.append(
            {
                "a": pr.a,
                "b": pr.b,
                "a_wins_if": _condition_data(pr.a_wins),
                "b_wins_if": _condition_data(pr.b_wins),
                "numeric_a_wins_if": _condition_data(pr.numeric_a_wins) if pr.numeric_a_wins is not None else None,
                "numeric_b_wins_if": _condition_data(pr.numeric_b_wins) if pr.numeric_b_wins is not None else None,
            }
        )
    return {
        "matmul": str(c.plan.matmul),
        "symbol": str(c.symbol),
        "hardware": c.hardware.name if c.hardware else None,
        "strategies": [strategy_data(i, s) for i, s in enumerate(c.plan.strategies, 1)],
        "conditions": {"regimes": regimes, "pairs": pairs},
        "assumptions": list(c.assumptions),
    }


def compare_text(c: Comparison) -> str:
    """A comparison for a terminal: each strategy's regime, then who wins when."""
    hw = f" [{c.hardware.label}: " if c.hardware else None
    lines = [str(c.plan.matmul), f"solving for {c.symbol}; collective times bandwidth-bound; {c.assumptions[1]}"]
    for r in c.regimes:
        s = r.strategy
        lines.append(f"{r.index}. {s.name}")
        lines.append(f"     T_math = {pretty(s.compute_time)}")
        comm = sympy.Integer(0)
        for st in s.collectives:
            comm += sympy.sympify(st.cost.bandwidth_time)
        lines.append(f"     T_comms = {pretty(comm)}")
        line = f"     communication-bound iff {r.communication_bound.text()}"
        if hw and r.numeric is not None:
            line += hw + r.numeric.text() + "]"
        lines.append(line)
    for pr in c.pairs:
        lines.append(f"{pr.a} beats {pr.b} iff:")
        if not pr.a_wins.cases:
            lines.append("     never")
        for case in pr.a_wins.cases:
            lines.append(f"     {case.text()}   ({case.label})")
        if hw and pr.numeric_a_wins is not None:
            lines.append(f"    {hw}{pr.numeric_a_wins.text()}]")
    return "\n".join(lines)


# -- searches -------------------------------------------------------------------------------------


def _candidate_data(c: Candidate) -> dict:
    return {
        "stored": {name: str(arr) for name, arr in c.stored},
        "output": str(c.output),
        "time_s": json_value(c.time),
        "compute_time_s": json_value(c.compute_time),
        "comm_time_s": json_value(c.comm_time),
        "memory_bytes_per_device": json_value(c.memory_bytes_per_device),
        "stages": [strategy_data(i, s) for i, s in enumerate(c.stages, 1)],
    }


def search_data(r: SearchResult) -> dict:
    """A sharding search as one JSON-ready dict."""
    return {
        "matmuls": [str(m) for m in r.matmuls],
        "hardware": r.hardware.name,
        "memory_limit_bytes": json_value(r.memory_limit) if r.memory_limit is not None else None,
        "best": _candidate_data(r.best) if r.best else None,
        "ranked": [_candidate_data(c) for c in r.ranked],
        "considered": r.considered,
        "fitting": r.fitting,
        "explanation": r.explain(),
    }


def search_text(r: SearchResult, top: int = 5) -> str:
    """A sharding search for a terminal: the winner explained, then the next best."""
    lines = [" ; ".join(str(m) for m in r.matmuls), f"on {r.mesh} ({r.hardware.label})"]
    lines += ["best: " + r.explain()[0], *["  " + x for x in r.explain()[1:]]]
    if len(r.ranked) > 1:
        lines.append("ranked:")
        for i, c in enumerate(r.ranked[:top], 1):
            stored = ", ".join(str(a) for _, a in c.stored)
            lines.append(
                f"{i:>3}. {stored} -> {c.output}: {format_seconds(c.time)}, {format_bytes(c.memory_bytes_per_device)}"
            )
    return "\n".join(lines)

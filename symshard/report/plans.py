"""Readable text and JSON-ready dicts for plans, comparisons and sharding searches.

The command line prints these; the docs site and the problem generator reuse
them. Numbers are formatted here, at the edge; formulas come from the algebra
(``pretty`` for text, ``latex`` for JSON).

Text comes in English (the default, and a stable contract: tests, the README and the docs
compare it byte for byte) or in Simplified Chinese (``language="zh"``): the words change,
the numbers, units, notation and formulas do not. The JSON keeps its English keys and
sentences and adds ``*_zh`` fields next to the sentences it carries.

Examples:
    >>> from symshard.planning.planner import plan
    >>> print(plan_text(plan("A[I, J_X] · B[J_X, K] -> C[I, K]"), top=1))  # doctest: +ELLIPSIS
    A[I, J_X] · B[J_X, K] -> C[I, K]
    Case 3: both operands shard the contracting dim J along X, ...
    >>> p = plan("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=4")
    >>> print(plan_text(p, top=1, language="zh", explain=True))  # doctest: +ELLIPSIS
    A[I, J_X] · B[J_X, K] -> C[I, K]
    情况 3：两个操作数都沿 X 对收缩维度 J 分片，...
    网格：X=4（带环绕链路的双向环，ici）
    列出 ... 种可能胜出的策略（共 6 种有效策略；--all 列出全部）；按集合通信次数从少到多排列（尺寸是符号）；time = max(T_math, T_hbm, T_comms)，模型 book：
      1. matmul → AllReduce_X(C)
           (在 ... 处最快)
           A[I, J_X] · B[J_X, K] -> C[I, K]{U_X}
             每个设备把自己持有的块相乘，A[I, J_X] · B[J_X, K] -> C[I, K]{U_X}：J 沿 X 被切分，...
           AllReduce_X(C[I, K]{U_X}) -> C[I, K]
             沿 X 对 C 做 AllReduce：把 4 个设备上的部分和相加，每个设备都得到完整的总和，即 C[I, K]。
           T_math  = I·J·K/(2·C)
    ...
    最优：尺寸或常数仍是符号，无法判定（请给出 --shape 和 --hw）
"""

from __future__ import annotations

import sympy

from ..algebra.conditions import Clauses, Condition
from ..algebra.mathtext import as_expr
from ..algebra.symbols import latex
from ..algebra.units import (
    format_bytes,
    format_flops,
    format_number,
    format_seconds,
    format_seconds_expr,
    json_value,
    pretty,
)
from ..i18n import keyed, sentence
from ..machines.mesh import Mesh
from ..messages import Clauses as Sentences
from ..messages import say
from ..planning.crossover_results import Comparison, Regime
from ..planning.search_results import Candidate, SearchResult
from ..planning.strategies import Plan, Reason, Strategy

__all__ = [
    "ENGLISH",
    "compare_data",
    "compare_text",
    "never_fastest",
    "plan_data",
    "plan_text",
    "regime_lines",
    "search_data",
    "search_text",
    "strategy_data",
]


ENGLISH: dict[str, str] = {
    "report.note": "  note: {note}",
    "report.mesh": "mesh: {mesh}",
    "report.one_device": "one device",
    "report.hardware": "hardware: {label}",
    "report.fastest_first": "fastest first",
    "report.fewest_first": "fewest collectives first (sizes are symbolic)",
    "report.strategies": "{count} {count:strategy|strategies}, {order}; time = {mode}, model {model}:",
    "report.numbers": "{flops}/device; compute {compute}, comms {comms}, time {time} ({bound}); peak {peak}",
    "report.numbers_hbm": (
        "{flops}/device; compute {compute}, HBM {hbm}, comms {comms}, time {time} ({bound}); peak {peak}"
    ),
    "report.expected": "expected on this chip (measured rates): {time}",
    "report.memory": "memory  = {memory}",
    "report.more": "  ... {count} more (--top N or --json shows them all)",
    "report.best": "best: {index}. {name} in {time}",
    "report.best_unknown": "best: undecided while sizes or constants are symbolic (give --shape and --hw)",
    "report.solving": "solving for {symbol}; collective times bandwidth-bound; {overlap}",
    "report.communication_bound_iff": "     {bound} iff {condition}",
    "report.beats": "{a} beats {b} iff:",
    "report.never": "     never",
    "report.on": "on {mesh} ({hardware})",
    "report.best_search": "best: {line}",
    "report.ranked": "ranked:",
    "report.ranked_expected": "{time} (expected {expected})",
    "report.listed": "{count} {count:strategy|strategies} that can win (of {valid} valid; --all lists them all), {order}; "
    "time = {mode}, model {model}:",
    "report.listed_unknown": "{count} {count:strategy|strategies} that can win (--all lists every valid one), {order}; "
    "time = {mode}, model {model}:",
    "report.why.fastest": "the fastest",
    "report.why.fastest_within": "the fastest within {memory} per device",
    "report.why.fastest_at": "the fastest at {point}",
    "report.why.undominated": "no other strategy has at most its FLOPs, communication and memory everywhere",
    "report.why.natural": "the chapter's rule",
    "report.why.listed": "a valid strategy",
    "report.can_win": "can be the fastest: {winners} (of {count} compared)",
    "report.never_fastest": "never the fastest: {never}",
    "report.at_least_as_fast": "{j} ({i} is at least as fast everywhere)",
    "report.never_sampled": "{j} (wins nowhere in the sampled region)",
    "report.neighbours": "each is the fastest where it beats all of its neighbours:",
    "report.beats_one_line": "{a} beats {b} iff {condition}",
    "report.can_win_count": "{winners} of {count} can be the fastest",
    "report.can_win_never": "{winners} of {count} can be the fastest; never the fastest: {why}",
    "report.strategy_count": "{count:,} {count:strategy|strategies}",
    "report.more_count": "{count:,}",
    "report.dominated_one": "{count} (dominated everywhere)",
    "report.dominated_many": "{count} (each dominated everywhere)",
    "report.unsampled_one": "{count} (wins nowhere in the sampled region)",
    "report.unsampled_many": "{count} (each wins nowhere in the sampled region)",
    "report.times": "     T_math = {math}; T_comms = {comms}",
    "report.times_hbm": "     T_math = {math}; T_hbm = {hbm}; T_comms = {comms}",
    "report.memory_bound_iff": "     {bound} (T_hbm the largest) iff {condition}",
    "report.bound_on_chip_iff": "     {bound} on {chip} iff {condition}",
    "report.memory_bound_on_chip_iff": "     {bound} (T_hbm the largest) on {chip} iff {condition}",
    "report.always_bound": "     always {bound} ({why})",
    "report.never_communication_bound": "     never {bound} ({why})",
    "report.why.no_collectives": "no collectives",
    "report.why.comms_above": "T_comms above T_math everywhere",
    "report.why.comms_below": "T_comms at most T_math everywhere",
    "report.why.hbm_largest": "T_hbm the largest term everywhere",
    "report.fastest_iff": "     fastest iff {condition}",
    "report.neighbour_pairs": "neighbours: {pairs}",
    "report.divides": "divides: {needs}",
    "cli.pairs_hint": "each is the fastest where it beats its neighbours; --pairs: when it does, each regime, the others",
    "cli.map_hint": "who wins where, as a picture: add --map {x},{y}",
    "cli.map_hint_needs": "who wins where, as a picture: add --map {x},{y} with numbers for the other symbols, e.g. {needs}",
    "cli.map_hint_one": "who wins where, as a picture: leave one more dim out of --shape and add --map {x},<that dim>",
    "cli.regime_map": "regime map: {file} (the fastest strategy by {x} and {y}; {boundaries} {boundaries:boundary|boundaries}, each with its formula)",
}
"""The English of this module's words by key; other languages are in the catalogue."""


def _say(key: str, language: str, **values: object) -> str:
    return keyed(ENGLISH, key, language, **values)


def _bound(bound: str | None, language: str) -> str:
    """``compute-bound`` / ``计算受限``."""
    if language == "en" or bound is None:
        return f"{bound}-bound"
    from ..i18n import term

    return term(f"{bound}_bound", language)


def _regimes(label: str, language: str) -> str:
    """A case label such as ``1 compute-bound, 2 either`` in ``language`` (a message that keeps each
    strategy's number and regime, or ``combined``)."""
    return sentence(label, language) if label else label


def _condition(text: str, language: str) -> str:
    """A condition's text: the relations as they are, the words between them in ``language``."""
    if language == "en":
        return text
    from ..i18n.catalog import condition

    return condition(text, language)


def _explanation(s: Strategy, mesh: Mesh | None, language: str) -> list[str]:
    from ..i18n.explain import strategy_sentences

    return strategy_sentences(s, language, mesh=mesh)


def _num(value: sympy.Expr) -> bool:
    return bool(as_expr(value).is_number)


def _seconds(value: sympy.Expr) -> str:
    return format_seconds(value) if _num(value) else format_seconds_expr(value) if _hw_only(value) else pretty(value)


def _hw_only(value: sympy.Expr) -> bool:
    return {s.name for s in as_expr(value).free_symbols} <= {"T_hop"}


def _bytes(value: sympy.Expr) -> str:
    return format_bytes(value) if _num(value) else pretty(value)


def why(reason: Reason, language: str = "en") -> str:
    """Why a plan lists a strategy, in words."""
    values = dict(reason.values)
    shown: dict[str, object] = {}
    if "memory" in values:
        shown["memory"] = format_bytes(as_expr(values["memory"]))
    if "point" in values:
        shown["point"] = ", ".join(f"{k}={format_number(v)}" for k, v in values["point"])  # type: ignore[attr-defined]
    return _say(f"report.why.{reason.key}", language, **shown)


def _needs(s: Strategy, p: Plan) -> str:
    """What a symbolic strategy needs to divide evenly: ``|X| | D`` for each dim and its shards."""
    sizes = dict(p.sizes)
    out: list[str] = []
    for d, axes in s.divisibility:
        counts = [as_expr(p.mesh.size(a)) for a in axes]
        if as_expr(sizes[d]).is_number and all(n.is_number for n in counts):
            continue
        group = pretty(sympy.Mul(*counts))
        shown = f"{d}/({group})" if " " in group or "·" in group else f"{d}/{group}"
        if shown not in out:
            out.append(shown)
    return ", ".join(out)


def _mode(p: Plan) -> str:
    """How a strategy's time is put together, as a formula."""
    if p.hbm:
        return "max(T_math, T_hbm, T_comms)" if p.overlap else "max(T_math, T_hbm) + T_comms"
    return "max(T_math, T_comms)" if p.overlap else "T_math + T_comms"


def strategy_data(index: int, s: Strategy, mesh: Mesh | None = None, language: str = "en") -> dict:
    """One strategy as a JSON-ready dict (DESIGN's keys, plus formulas and a sentence per step).

    ``explanation`` is English; with another ``language`` an ``explanation_<language>`` follows it.
    """
    data = {
        "index": index,
        "name": s.name,
        "steps": s.describe(),
        "output": str(s.output),
        "flops_per_device": json_value(s.flops_per_device),
        "compute_time_s": json_value(s.compute_time),
        "hbm_bytes_per_device": json_value(s.hbm_bytes_per_device),
        "hbm_time_s": json_value(s.hbm_time),
        "comm_time_s": json_value(s.comm_time),
        "time_s": json_value(s.time),
        "overlap_time_s": json_value(s.overlap_time),
        "serial_time_s": json_value(s.serial_time),
        "bound": s.bound,
        "memory_bytes_per_device": json_value(s.memory_bytes_per_device),
        "collectives": [
            {
                "step": str(st.op),
                "bytes": json_value(as_expr(st.cost.bytes)),
                "hops": json_value(as_expr(st.cost.hops)),
                "time_s": json_value(as_expr(st.cost.time)),
            }
            for st in s.collectives
        ],
        "formulas": {
            "compute_time": latex(s.compute_time),
            "hbm_time": latex(s.hbm_time),
            "comm_time": latex(s.comm_time),
            "time": latex(s.time),
        },
        "explanation": _explanation(s, mesh, "en"),
        "divisibility": [{"dim": d, "axes": list(axes)} for d, axes in s.divisibility],
    }
    if language != "en":
        data[f"explanation_{language}"] = _explanation(s, mesh, language)
    return data


def plan_data(p: Plan, language: str = "en") -> dict:
    """A plan as one JSON-ready dict: ``case``, ``strategies``, ``best`` and context.

    With another ``language``, ``reason``, ``notes`` and ``assumptions`` are followed by
    ``reason_<language>``, ``notes_<language>`` and ``assumptions_<language>``.
    """
    best = p.best
    data = {
        "matmul": str(p.matmul),
        "case": p.classification.case,
        "reason": p.classification.reason,
        "notes": list(p.classification.notes),
        "mesh": [
            {"axis": a.name, "size": json_value(a.size), "topology": a.topology.value, "fabric": a.fabric.value}
            | ({"part_of": a.part_of, "stride": a.stride} if a.part_of else {})
            for a in p.mesh.axes
        ],
        "split": {s.axis: [{"axis": n, "size": k, "shardy": s.shardy(n)} for n, k in s.parts] for s in p.split},
        "shape": {d: json_value(v) for d, v in p.sizes},
        "dtype": p.dtype,
        "model": p.model,
        "overlap": p.overlap,
        "hbm": p.hbm,
        "time": _mode(p),
        "hardware": p.hardware.name if p.hardware else None,
        "outputs": [str(t) for t in p.targets],
        "strategies": [strategy_data(i, s, p.mesh, language) for i, s in enumerate(p.strategies, 1)],
        "best": {"index": 1, "name": best.name} if best else None,
        "complete": p.complete,
        "counted": dict(p.counted),
        "assumptions": list(p.assumptions),
    }
    entries: list[dict] = data["strategies"]  # type: ignore[assignment]
    for s, entry in zip(p.strategies, entries, strict=True):
        expected = p.expected_time(s)
        if expected is not None:  # time_s stays the data sheet's bound; beside it, what the chip attains
            entry["expected_time_s"] = json_value(expected)
    if not p.complete:
        for i, entry in enumerate(entries, 1):
            reason = p.why(i)
            entry["why"] = {"key": reason.key, "text": why(reason), "values": _reason_values(reason)}
            if language != "en":
                entry[f"why_{language}"] = why(reason, language)
    if language != "en":
        data["language"] = language
        data[f"reason_{language}"] = _reason(p, language)
        data[f"notes_{language}"] = _notes(p, language)
        data[f"assumptions_{language}"] = [sentence(a, language) for a in p.assumptions]
    return _ordered(data, language)


def _reason_values(reason: Reason) -> dict:
    out: dict[str, object] = {}
    for k, v in reason.values:
        if k == "point":
            out[k] = {name: value for name, value in v}  # type: ignore[attr-defined]
        else:
            out[k] = json_value(as_expr(v))
    return out


def _ordered(data: dict, language: str) -> dict:
    """``data`` with each ``<key>_<language>`` right after its ``<key>``."""
    if language == "en":
        return data
    out: dict = {}
    suffix = f"_{language}"
    for key, value in data.items():
        if key.endswith(suffix) and key.removesuffix(suffix) in data:
            continue
        out[key] = value
        if key + suffix in data:
            out[key + suffix] = data[key + suffix]
    return out


def _reason(p: Plan, language: str) -> str:
    """The case's reason in ``language`` (without ``Case N:``)."""
    c = p.classification
    if language == "en" or c.message is None:
        return c.reason
    return sentence(c.message, language)


def _notes(p: Plan, language: str) -> list[str]:
    c = p.classification
    if language == "en" or len(c.note_messages) != len(c.notes):
        return list(c.notes)
    return [sentence(m, language) for m in c.note_messages]


def _case_line(p: Plan, language: str) -> str:
    from ..i18n.explain import explain

    return str(p.classification) if language == "en" else explain(p.classification, language)


def _mesh_line(mesh: Mesh, language: str) -> str:
    joined = sentence(say("{clauses}", clauses=Sentences(mesh.describe())), language)
    return _say("report.mesh", language, mesh=joined or _say("report.one_device", language))


def plan_text(p: Plan, top: int | None = 10, *, language: str = "en", explain: bool = False) -> str:
    """The plan for a terminal: the case, then each strategy with its steps and costs.

    Args:
        top: how many strategies to show (None: all).
        language: ``'en'`` or ``'zh'``.
        explain: add one sentence under each step saying what moves and why.
    """
    lines = [str(p.matmul), _case_line(p, language)]
    lines += [_say("report.note", language, note=n) for n in _notes(p, language)]
    lines.append(_mesh_line(p.mesh, language))
    if p.hardware is not None:
        lines.append(_say("report.hardware", language, label=p.hardware.label))
    mode = _mode(p)
    shown = p.strategies if top is None else p.strategies[:top]
    order = _say("report.fastest_first" if p.numeric else "report.fewest_first", language)
    valid = dict(p.counted).get("valid")
    if p.complete:
        lines.append(
            _say("report.strategies", language, count=len(p.strategies), order=order, mode=mode, model=p.model)
        )
    elif valid is not None:
        lines.append(
            _say("report.listed", language, count=len(p.strategies), valid=valid, order=order, mode=mode, model=p.model)
        )
    else:
        lines.append(
            _say("report.listed_unknown", language, count=len(p.strategies), order=order, mode=mode, model=p.model)
        )
    for i, s in enumerate(shown, 1):
        lines.append(f"{i:>3}. {s.name}")
        if not p.complete:
            lines.append(f"       ({why(p.why(i), language)})")
        sentences = _explanation(s, p.mesh, language) if explain else [None] * len(s.steps)
        for step, said in zip(s.describe(), sentences, strict=True):
            lines.append(f"       {step}")
            if said is not None:
                lines.append(f"         {said}")
        if p.numeric:
            numbers = _say(
                "report.numbers_hbm" if p.hbm else "report.numbers",
                language,
                flops=format_flops(s.flops_per_device),
                compute=format_seconds(s.compute_time),
                hbm=format_seconds(s.hbm_time),
                comms=format_seconds(s.comm_time),
                time=format_seconds(s.time),
                bound=_bound(s.bound, language),
                peak=format_bytes(s.memory_bytes_per_device),
            )
            lines.append(f"       {numbers}")
            expected = p.expected_time(s)
            if expected is not None:
                lines.append("       " + _say("report.expected", language, time=format_seconds(expected)))
        else:
            lines.append(f"       T_math  = {_seconds(s.compute_time)}")
            if p.hbm:
                lines.append(f"       T_hbm   = {_seconds(s.hbm_time)}")
            lines.append(f"       T_comms = {_seconds(s.comm_time)}")
            lines.append("       " + _say("report.memory", language, memory=_bytes(s.memory_bytes_per_device)))
            needs = _needs(s, p)
            if needs:
                lines.append("       " + _say("report.divides", language, needs=needs))
    if top is not None and len(p.strategies) > top:
        lines.append(_say("report.more", language, count=len(p.strategies) - top))
    best = p.best
    if best is not None:
        lines.append(_say("report.best", language, index=1, name=best.name, time=format_seconds(best.time)))
    else:
        lines.append(_say("report.best_unknown", language))
    return "\n".join(lines)


# -- comparisons -------------------------------------------------------------------------------


def _condition_data(c: Condition | Clauses) -> dict:
    if isinstance(c, Clauses):
        return {"text": c.text(), "latex": c.latex(), "clauses": [_condition_data(p) for p in c.parts]}
    return {
        "text": c.text(),
        "latex": c.latex(),
        "cases": [{"regimes": case.label, "text": case.text(), "latex": case.latex()} for case in c.cases],
    }


def compare_data(c: Comparison, language: str = "en") -> dict:
    """A comparison as one JSON-ready dict with a ``conditions`` key (DESIGN), and with ``fastest``:
    each strategy that can be the fastest with its region and neighbours, and ``never_fastest``."""
    regimes = []
    for r in c.regimes:
        regime = {
            "strategy": r.index,
            "name": r.strategy.name,
            "compute_time": latex(r.strategy.compute_time),
            "communication_bound_if": _condition_data(r.communication_bound),
            "numeric": _condition_data(r.numeric) if r.numeric is not None else None,
        }
        if r.memory_bound is not None:  # T_hbm counts: where it is the largest term, memory-bound
            regime["hbm_time"] = latex(r.strategy.hbm_time)
            regime["memory_bound_if"] = _condition_data(r.memory_bound)
            regime["numeric_memory"] = _condition_data(r.numeric_memory) if r.numeric_memory is not None else None
        regimes.append(regime)
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
    data = {
        "matmul": str(c.plan.matmul),
        "symbol": str(c.symbol),
        "hardware": c.hardware.name if c.hardware else None,
        "mode": c.mode,
        "hbm": c.hbm,
        "strategies": [strategy_data(i, s, c.plan.mesh, language) for i, s in c.strategies],
        "conditions": {"regimes": regimes, "pairs": pairs},
        "fastest": [
            {
                "strategy": r.index,
                "name": r.strategy.name,
                "neighbours": list(r.neighbours),
                "where": _condition_data(r.condition),
                "numeric": _condition_data(r.numeric) if r.numeric is not None else None,
            }
            for r in c.best
        ],
        "never_fastest": [{"strategy": j, "as_fast": i or None} for j, i in c.dominated],
        "assumptions": list(c.assumptions),
    }
    if language != "en":
        data["language"] = language
        data[f"assumptions_{language}"] = [sentence(a, language) for a in c.assumptions]
    return data


SCREEN = 100
"""Columns of the terminal the short answer of :func:`compare_text` is laid out for."""


def compare_text(c: Comparison, *, language: str = "en", pairs: bool = False) -> str:
    """A comparison for a terminal.

    Strategies listed explicitly, or with ``pairs``: which strategies can be the fastest, each
    strategy's regime, then who wins when (every pair of strategies listed explicitly; otherwise each
    pair of neighbours, in the fewest relations). Otherwise the short answer, one screen
    (:func:`_compare_short`); :func:`compare_data` has everything either way.
    """
    if c.mode != "explicit" and not pairs:
        return _compare_short(c, language)
    label = c.hardware.label if c.hardware else None
    hw = f" [{label}: " if label else None
    overlap = sentence(c.assumptions[1], language)
    lines = [str(c.plan.matmul), _say("report.solving", language, symbol=c.symbol, overlap=overlap)]
    if c.mode != "explicit":
        winners = ", ".join(str(r.index) for r in c.best)
        lines.append(_say("report.can_win", language, winners=winners, count=len(c.strategies)))
        never = [
            _say("report.at_least_as_fast", language, j=j, i=i) if i else _say("report.never_sampled", language, j=j)
            for j, i in c.dominated
        ]
        if never:
            lines.append(_say("report.never_fastest", language, never=", ".join(never)))
    for r in c.regimes:
        s = r.strategy
        lines.append(f"{r.index}. {s.name}")
        lines.append(f"     T_math = {pretty(s.compute_time)}")
        if r.memory_bound is not None:
            lines.append(f"     T_hbm = {pretty(s.hbm_time)}")
        lines.append(f"     T_comms = {pretty(s.bandwidth_comm_time)}")
        lines.extend(regime_lines(r, label, language))
    if c.mode != "explicit" and c.pairs:
        lines.append(_say("report.neighbours", language))
    for pr in c.pairs:
        if isinstance(pr.a_wins, Clauses):
            condition = _condition(pr.a_wins.text(), language)
            lines.append(_say("report.beats_one_line", language, a=pr.a, b=pr.b, condition=condition))
            if hw and pr.numeric_a_wins is not None:
                lines.append(f"    {hw}{_condition(pr.numeric_a_wins.text(), language)}]")
            continue
        lines.append(_say("report.beats", language, a=pr.a, b=pr.b))
        if not pr.a_wins.cases:
            lines.append(_say("report.never", language))
        for case in pr.a_wins.cases:
            tag = f"   ({_regimes(case.label, language)})" if case.label else ""
            lines.append(f"     {_condition(case.text(), language)}{tag}")
        if hw and pr.numeric_a_wins is not None:
            lines.append(f"    {hw}{_condition(pr.numeric_a_wins.text(), language)}]")
    return "\n".join(lines)


def regime_lines(r: Regime, chip: str | None = None, language: str = "en", *, short: bool = False) -> list[str]:
    """A strategy's regime, each line with its value on ``chip`` (the chip's label) where there is one: when
    it is communication-bound (``T_comms`` above ``T_math``, the chapter's question: ``B < C/W_ici``) and
    when memory-bound (``T_hbm`` the largest term, which wins over the other), or why there is no
    condition (no collectives; always one way). Memory says nothing where ``T_hbm`` is never the largest.
    ``short``: a line whose formula and value on the chip do not fit one line of the screen gives the value
    on the chip alone (the same choice in every language, made on the English).

    Examples:
        >>> from symshard.planning.crossovers import compare
        >>> c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies=[2], hardware="tpu-v5p")
        >>> regime_lines(c.regimes[0], "TPU v5p")[0]
        '     communication-bound iff B < C/W_ici [TPU v5p: B < 2550]'
    """
    lines = []
    comm = _bound("communication", language)
    cond = r.communication_bound
    if r.strategy.bandwidth_comm_time == 0:
        lines.append(_say("report.never_communication_bound", language, bound=comm,
                          why=_say("report.why.no_collectives", language)))  # fmt: skip
    elif cond.always:
        lines.append(_say("report.always_bound", language, bound=comm, why=_say("report.why.comms_above", language)))
    elif cond.never:
        lines.append(_say("report.never_communication_bound", language, bound=comm,
                          why=_say("report.why.comms_below", language)))  # fmt: skip
    else:
        lines.append(_bound_line("report.communication_bound_iff", "report.bound_on_chip_iff", comm, cond, r.numeric,
                                 chip, language, short))  # fmt: skip
    memory, numeric = r.memory_bound, r.numeric_memory
    if memory is None or memory.never or (chip and numeric is not None and numeric.never):
        return lines  # T_hbm is never the largest term: nothing more to say
    bound = _bound("memory", language)
    if memory.always or (chip and numeric is not None and numeric.always):
        lines.append(_say("report.always_bound", language, bound=bound, why=_say("report.why.hbm_largest", language)))
        return lines
    lines.append(_bound_line("report.memory_bound_iff", "report.memory_bound_on_chip_iff", bound, memory, numeric,
                             chip, language, short))  # fmt: skip
    return lines


def _bound_line(key: str, on_chip: str, bound: str, cond, numeric, chip: str | None, language: str, short: bool) -> str:
    """``communication-bound iff B < C/W_ici [TPU v5p: B < 2550]``, or with ``short`` and too long a line for
    the screen, ``communication-bound on TPU v5p iff B < 2550``."""
    if chip and numeric is not None:
        english = _say(key, "en", bound="communication-bound", condition=cond.text()) + f" [{chip}: {numeric.text()}]"
        if short and not _fits(english, 1):
            return _say(on_chip, language, bound=bound, chip=chip, condition=_condition(numeric.text(), language))
        line = _say(key, language, bound=bound, condition=_condition(cond.text(), language))
        return line + f" [{chip}: {_condition(numeric.text(), language)}]"
    return _say(key, language, bound=bound, condition=_condition(cond.text(), language))


def never_fastest(dominated: int, unsampled: int, language: str = "en") -> str:
    """How many strategies never win, and why, said as counts (the first with its noun, each read right
    for one): ``4 strategies (each dominated everywhere), 1 (wins nowhere in the sampled region)``.

    Examples:
        >>> never_fastest(4, 1)
        '4 strategies (each dominated everywhere), 1 (wins nowhere in the sampled region)'
        >>> never_fastest(1, 0), never_fastest(0, 2)
        ('1 strategy (dominated everywhere)', '2 strategies (each wins nowhere in the sampled region)')
    """
    parts: list[str] = []
    for count, why in ((dominated, "report.dominated"), (unsampled, "report.unsampled")):
        if not count:
            continue
        one = "_one" if count == 1 else "_many"
        noun = "report.strategy_count" if not parts else "report.more_count"
        parts.append(_say(why + one, language, count=_say(noun, language, count=count)))
    return ("，" if language == "zh" else ", ").join(parts)


def _fits(text: str, lines: int) -> bool:
    """Whether ``text`` takes at most ``lines`` lines of the screen."""
    return len(text) <= lines * SCREEN


def _compare_short(c: Comparison, language: str) -> str:
    """Which strategies can be the fastest, each once with its times and its regime, and, where it is
    short enough to read (two lines), the region where it is the fastest; the others as counts; the
    pairs of neighbours whose conditions make up the regions. What is left out for length (long regions,
    each pair's condition, why each other strategy never wins) is what ``pairs=True`` and
    :func:`compare_data` give."""
    label = c.hardware.label if c.hardware else None
    overlap = sentence(c.assumptions[1], language)
    lines = [str(c.plan.matmul), _say("report.solving", language, symbol=c.symbol, overlap=overlap)]
    slower = sum(1 for _, i in c.dominated if i)
    why = never_fastest(slower, len(c.dominated) - slower, language)
    key = "report.can_win_never" if why else "report.can_win_count"
    lines.append(_say(key, language, winners=len(c.best), count=len(c.strategies), why=why))
    regimes = {r.index: r for r in c.regimes}
    for region in c.best:
        s = region.strategy
        regime = regimes.get(region.index)
        math_, comms = pretty(s.compute_time), pretty(s.bandwidth_comm_time)
        if regime is not None and regime.memory_bound is not None:
            lines.append(_say("report.times_hbm", language, math=math_, hbm=pretty(s.hbm_time), comms=comms))
        else:
            lines.append(_say("report.times", language, math=math_, comms=comms))
        lines.insert(len(lines) - 1, f"{region.index}. {s.name}")
        if regime is not None:
            lines.extend(regime_lines(regime, label, language, short=True))
        if region.condition.longer_than(2 * SCREEN):
            continue  # (its relations alone take more than two lines: not written out to be measured)
        where = region.condition.text()
        if not _fits(f"     fastest iff {where}", 2):
            continue
        on_chip = region.numeric if label else None
        numeric = on_chip.text() if on_chip is not None and not on_chip.longer_than(2 * SCREEN) else None
        if on_chip is not None and (numeric is None or not _fits(f"       [{label}: {numeric}]", 2)):
            continue
        lines.append(_say("report.fastest_iff", language, condition=_condition(where, language)))
        if numeric is not None:
            lines.append(f"       [{label}: {_condition(numeric, language)}]")
    if c.pairs:
        grouped: dict[int, list[int]] = {}
        for pr in c.pairs:
            grouped.setdefault(min(pr.a, pr.b), []).append(max(pr.a, pr.b))
        touching = "; ".join(f"{a}: {','.join(str(b) for b in sorted(bs))}" for a, bs in sorted(grouped.items()))
        lines.append(_say("report.neighbour_pairs", language, pairs=touching))
    return "\n".join(lines)


# -- searches -------------------------------------------------------------------------------------


def _candidate_data(c: Candidate, mesh: Mesh | None = None, language: str = "en", expected=None) -> dict:
    data = {
        "stored": {name: str(arr) for name, arr in c.stored},
        "output": str(c.output),
        "time_s": json_value(c.time),
        "compute_time_s": json_value(c.compute_time),
        "comm_time_s": json_value(c.comm_time),
        "memory_bytes_per_device": json_value(c.memory_bytes_per_device),
        "stages": [strategy_data(i, s, mesh, language) for i, s in enumerate(c.stages, 1)],
    }
    if expected is not None:  # time_s stays the data sheet's bound; beside it, what the chip attains
        data["expected_time_s"] = json_value(expected)
    return data


def search_data(r: SearchResult, language: str = "en") -> dict:
    """A sharding search as one JSON-ready dict."""
    data = {
        "matmuls": [str(m) for m in r.matmuls],
        "hardware": r.hardware.name,
        "memory_limit_bytes": json_value(r.memory_limit) if r.memory_limit is not None else None,
        "best": _candidate_data(r.best, r.mesh, language, r.expected_time(r.best)) if r.best else None,
        "ranked": [_candidate_data(c, r.mesh, language, r.expected_time(c)) for c in r.ranked],
        "considered": r.considered,
        "fitting": r.fitting,
        "explanation": r.explain(),
    }
    if language != "en":
        data["language"] = language
        data[f"explanation_{language}"] = [sentence(x, language) for x in r.explain()]
    return data


def search_text(r: SearchResult, top: int = 5, *, language: str = "en") -> str:
    """A sharding search for a terminal: the winner explained, then the next best."""
    explained = [sentence(x, language) for x in r.explain()]
    lines = [" ; ".join(str(m) for m in r.matmuls), _say("report.on", language, mesh=r.mesh, hardware=r.hardware.label)]
    lines += [_say("report.best_search", language, line=explained[0]), *["  " + x for x in explained[1:]]]
    if len(r.ranked) > 1:
        lines.append(_say("report.ranked", language))
        for i, c in enumerate(r.ranked[:top], 1):
            stored = ", ".join(str(a) for _, a in c.stored)
            expected = r.expected_time(c)
            time = format_seconds(c.time)
            if expected is not None:
                time = _say("report.ranked_expected", language, time=time, expected=format_seconds(expected))
            lines.append(f"{i:>3}. {stored} -> {c.output}: {time}, {format_bytes(c.memory_bytes_per_device)}")
    return "\n".join(lines)


# -- what to ask next ---------------------------------------------------------------------------------


def pairs_hint(language: str = "en") -> str:
    """Under a comparison's short form: what ``--pairs`` adds.

    Examples:
        >>> pairs_hint().split(";")[0]
        'each is the fastest where it beats its neighbours'
    """
    return _say("cli.pairs_hint", language)


def map_hint(c: Comparison, language: str) -> str:
    """Where several strategies can win: the --map that draws who wins where, and what it needs."""
    from ..algebra.symbols import is_axis_symbol

    constants = set(dict(c.hardware.constants(c.plan.dtype))) if c.hardware is not None else set()
    free: set = set()
    for r in c.best:
        free |= {a for a in c.time(r.index).atoms if a.is_Symbol and a not in constants and a != c.symbol}
    ordered = sorted(free, key=lambda a: (is_axis_symbol(a), str(a)))
    if not ordered:
        return _say("cli.map_hint_one", language, x=c.symbol)
    y, rest = ordered[0], ordered[1:]
    dims = [str(a) for a in rest if not is_axis_symbol(a)]
    axes = [str(a).strip("|") for a in rest if is_axis_symbol(a)]
    needs = " ".join([*([f"--shape {','.join(f'{d}=4096' for d in dims)}"] if dims else []),
                      *([f"--mesh {','.join(f'{a}=4' for a in axes)}"] if axes else [])])  # fmt: skip
    key = "cli.map_hint_needs" if needs else "cli.map_hint"
    return _say(key, language, x=c.symbol, y=str(y).strip("|") if is_axis_symbol(y) else y, needs=needs)


def regime_map_line(file: object, x: str, y: str, boundaries: int, language: str = "en") -> str:
    """The line naming a drawn regime map: its file, its axes and how many boundaries it draws.

    Examples:
        >>> regime_map_line("map.svg", "B", "D", 2)
        'regime map: map.svg (the fastest strategy by B and D; 2 boundaries, each with its formula)'
    """
    return _say("cli.regime_map", language, file=file, x=x, y=y, boundaries=boundaries)

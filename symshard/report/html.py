"""Results as notebook HTML: plans, strategies, comparisons, placements, transfers and problems as tables.

Jupyter shows an object through its ``_repr_html_``; the algebra's result types define that method
as one line that imports this module when it is called, so the algebra never depends on its
presentation and ``import symshard`` stays as light as it was. Formulas are LaTeX from
:func:`symshard.algebra.symbols.latex` (``T_{\\text{hop}}``, ``\\lvert X \\rvert``: one style everywhere),
inside ``$...$`` for the notebook's MathJax; numbers carry their units as the CLI prints them
(``559 µs``, ``1,048,576 B (1 MiB)``); every piece of text is escaped; the same object gives the
same bytes every time (nothing here reads a clock, an address or a set's order).

Every word is chosen here, by language (``language="zh"``: the keys in :data:`ENGLISH`, and the words
the CLI's reports already say, with their Chinese in ``symshard/i18n/zh/*.po``); numbers, units,
formulas, notation and collective names are the same in every language. A problem is written in one
language, so its page uses the problem's own.

Examples:
    >>> from symshard.planning.planner import plan
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", "X=8", "B=1024,D=8192,F=16384", hardware="tpu-v5e")
    >>> page = plan_html(p)
    >>> "★" in page and "1.3 ms" in page
    True
    >>> "最优" in plan_html(p, language="zh")
    True
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING, Any, Protocol

from ..algebra.mathtext import as_expr
from ..algebra.symbols import latex
from ..algebra.units import format_bytes, format_flops, format_number, format_seconds
from ..i18n import keyed, ui
from . import collectives, placements, text, transfers

if TYPE_CHECKING:
    import sympy

    from ..algebra.conditions import Clauses, Condition
    from ..costs.collective_cost import CollectiveCost
    from ..costs.placement import Placement
    from ..models.transfers import Gather, HostTransfer, Route, SliceTotals
    from ..planning.crossover_results import Comparison
    from ..planning.strategies import Plan, PlanStep, Strategy


class ShownProblem(Protocol):
    """What a problem's page needs of it (a :class:`symshard.problems.problem.Problem` has it all)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def statement(self) -> str: ...
    @property
    def solution(self) -> str: ...
    @property
    def hints(self) -> Sequence[str]: ...
    @property
    def figures(self) -> Sequence[tuple[str, Any]]: ...
    @property
    def answers(self) -> Sequence[Any]: ...
    @property
    def family(self) -> Any: ...


__all__ = [
    "ENGLISH",
    "TOP",
    "comparison_html",
    "condition_latex",
    "cost_latex",
    "expr_latex",
    "gather_html",
    "host_transfer_html",
    "math",
    "placement_html",
    "plan_html",
    "problem_html",
    "route_html",
    "slice_totals_html",
    "strategy_html",
]

TOP = 10
"""How many strategies a plan's table shows before it says how many more there are."""

ENGLISH: dict[str, str] = {
    "html.strategy": "strategy",
    "html.bound": "bound",
    "html.expected": "expected (measured rates)",
    "html.memory": "memory / device",
    "html.flops": "FLOPs / device",
    "html.role": "role",
    "html.step": "step",
    "html.bytes_moved": "bytes moved",
    "html.role.lhs": "lhs",
    "html.role.rhs": "rhs",
    "html.role.matmul": "matmul",
    "html.role.out": "out",
    "html.mesh": "mesh {mesh}",
    "html.time_model": "time = {combine}, model {model}",
    "html.more": "… and {count:,} more {count:strategy|strategies} ({total:,} listed; {code} has them all)",
    "html.best": "★ best: {name}, {time}",
    "html.unranked": "sizes or constants are symbols: the strategies cannot be ranked",
    "html.none_fits": "no strategy fits",
    "html.on_chip": "on the chip: {condition}",
    "html.never_by": "never (strategy {by} is at least as fast)",
    "html.never_sampled": "never at the points sampled",
    "html.communication_bound_iff": "communication-bound iff {condition}",
    "html.memory_bound_iff": "memory-bound (T_hbm the largest) iff {condition}",
    "html.fastest_where": "fastest where {where}",
    "html.solving": "solving for {symbol}",
    "html.time_bandwidth": "time = {combine}, collectives bandwidth-bound",
    "html.highlighted": "highlighted: the strategies that are the fastest somewhere",
    "html.dtype": "dtype",
    "html.element_bytes": "{dtype} ({bytes} B per element)",
    "html.sizes": "sizes",
    "html.global_shape": "global shape",
    "html.local_shape": "local shape (per device)",
    "html.blocks": "blocks",
    "html.copies": "copies of each block",
    "html.partial_sums": "partial sums per element",
    "html.total_bytes": "bytes over all devices",
    "html.route_head": "chip {source} → chip {target}",
    "html.hops_by_axis": "hops by axis",
    "html.ports": "ports used at once",
    "html.bytes": "bytes",
    "html.bandwidth_time": "bandwidth time",
    "html.latency_added": "latency added",
    "html.gather_head": "gather to chip {target}",
    "html.senders": "senders",
    "html.bytes_each": "bytes from each",
    "html.links_in": "links into the target",
    "html.farthest": "farthest sender",
    "html.hops": "{hops} {hops:hop|hops}",
    "html.host_head": "host → chips over PCIe",
    "html.chips": "chips",
    "html.bytes_per_chip": "bytes per chip",
    "html.pcie": "PCIe bandwidth per chip",
    "html.flops_bf16": "FLOP/s (bf16)",
    "html.difficulty": "difficulty {level}",
}
"""The English of the notebook's own words by key; the words it shares with the CLI's reports are
theirs (``cli.time``, ``cli.mesh``, ...), and other languages are in the catalogue."""

_WORDS = {**text.ENGLISH, **collectives.ENGLISH, **placements.ENGLISH, **transfers.ENGLISH, **ENGLISH}


def _say(key: str, language: str, **values: object) -> str:
    """The words of ``key`` in ``language``, filled with ``values`` that are already HTML (the templates,
    English and translated, hold no markup and no character HTML would read: a test checks them)."""
    return keyed(_WORDS, key, language, **values)


_STYLE = (
    "<style>"
    ".symshard table{border-collapse:collapse;margin:0.4em 0}"
    ".symshard th,.symshard td{text-align:left;padding:0.2em 0.7em;vertical-align:top}"
    ".symshard thead th{border-bottom:1px solid #999}"
    ".symshard tr.best td{font-weight:bold;background:rgba(60,160,60,0.12)}"
    ".symshard .note{color:#666;font-size:0.9em}"
    ".symshard figure{margin:0.5em 0}"
    ".symshard .num{white-space:nowrap}"
    ".symshard tr.when td{padding-top:0;padding-bottom:0.6em}"
    "</style>"
)


# -- pieces ------------------------------------------------------------------------------------------


def math(tex: str) -> str:
    """LaTeX as an inline formula for the notebook's MathJax, escaped for HTML.

    Examples:
        >>> math(r"B < \\frac{C}{W}")
        '$B &lt; \\\\frac{C}{W}$'
    """
    return "$" + escape(tex, quote=False) + "$"


def _formula(expr: object) -> str:
    return math(latex(as_expr(expr)))


def _seconds(expr: object) -> str:
    """A time: a number in s/ms/µs/ns, or its formula."""
    value = as_expr(expr)
    return _num(format_seconds(value)) if value.is_number else _formula(value)


def _num(text: str) -> str:
    """A number with its unit, kept on one line."""
    return f'<span class="num">{escape(text)}</span>'


def _bytes(expr: object) -> str:
    value = as_expr(expr)
    return _num(format_bytes(value)) if value.is_number else _formula(value)


def _count(expr: object) -> str:
    value = as_expr(expr)
    return escape(format_number(value)) if value.is_number else _formula(value)


def _flops(expr: object) -> str:
    value = as_expr(expr)
    return _num(format_flops(value)) if value.is_number else _formula(value)


def _bound(word: str | None, language: str) -> str:
    """``compute-bound`` / ``计算受限`` (the glossary's terms), ``—`` when nothing is known."""
    return "—" if word is None else text.bound(word, language)


def _table(head: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]], caption: str = "") -> str:
    """A table from cells that are already HTML (a cell that is a whole ``<td ...>`` is kept as it is); each
    row is ``(class, cells)``."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{caption}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>")
    for css, cells in rows:
        attr = f' class="{css}"' if css else ""
        out.append(f"<tr{attr}>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _pairs(rows: Iterable[tuple[str, str]]) -> str:
    """A two-column table: a plain-text name, then a cell that is already HTML."""
    body = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table><tbody>{body}</tbody></table>"


def _page(kind: str, *parts: str) -> str:
    return f'<div class="symshard symshard-{kind}">{_STYLE}' + "".join(parts) + "</div>"


def _step_tex(step: PlanStep) -> str:
    """One step's short name in LaTeX: ``\\text{AllGather}_{X}(Y)``, ``\\text{matmul}``."""
    from ..notation.einsums import LocalMatmul, LocalSum

    if isinstance(step.op, LocalMatmul):
        return r"\text{matmul}"
    if isinstance(step.op, LocalSum):
        dims = ",".join(step.op.dims)
        return r"\text{Sum}_{" + dims + r"}(\mathbf{" + (step.op.operand.name or step.role).replace("_", r"\_") + "})"
    name = step.op.operand.name or step.role
    return step.op.op.latex() + r"(\mathbf{" + name.replace("_", r"\_") + "})"


def strategy_name(s: Strategy) -> str:
    """A strategy's name as one formula: its steps joined by arrows."""
    return math(r" \rightarrow ".join(_step_tex(st) for st in s.steps))


def _sizes(sizes: Sequence[tuple[str, object]]) -> str:
    """The sizes given (a dim still its own symbol is left out)."""
    return ", ".join(math(f"{name} = {latex(as_expr(v))}") for name, v in sizes if str(as_expr(v)) != name)


# -- plans and strategies ----------------------------------------------------------------------------


def _case(p: Plan, language: str) -> str:
    """The plan's case and why (``Case 2: ...``) in ``language``."""
    if language == "en":
        return str(p.classification)
    from ..i18n.explain import explain

    return explain(p.classification, language)


def plan_html(p: Plan, top: int = TOP, *, language: str = "en") -> str:
    """A plan as a table of its strategies, fastest first when the numbers allow, the best marked ★.

    Only the first ``top`` strategies are drawn (a plan over many axes lists thousands); a line
    says how many more there are. ``language``: ``'en'`` or ``'zh'`` (the words; the rest is the same).
    """
    best = p.best
    lang = language
    shown = p.strategies[:top] if top >= 0 else p.strategies
    expected = [p.expected_time(s) for s in shown]
    calibrated = any(e is not None for e in expected)
    head = ["", "#", _say("html.strategy", lang), "T<sub>math</sub>"]
    head += ["T<sub>hbm</sub>"] if p.hbm else []
    head += ["T<sub>comms</sub>", _say("cli.time", lang)]
    head += [_say("html.expected", lang)] if calibrated else []
    head += [_say("html.bound", lang), _say("html.memory", lang)]
    rows = []
    for i, (s, e) in enumerate(zip(shown, expected, strict=True), 1):
        mark = "★" if best is not None and i == 1 else ""
        cells = [mark, str(i), strategy_name(s), _seconds(s.compute_time)]
        cells += [_seconds(s.hbm_time)] if p.hbm else []
        cells += [_seconds(s.comm_time), _seconds(s.time)]
        cells += [_seconds(e) if e is not None else "—"] if calibrated else []
        cells += [escape(_bound(s.bound, lang)), _bytes(s.memory_bytes_per_device)]
        rows.append(("best" if mark else "", cells))
    total = len(p.strategies)
    context = [_say("html.mesh", lang, mesh=escape(str(p.mesh))), escape(p.dtype)]
    if p.hardware is not None:
        context.insert(1, escape(p.hardware.label))
    if _sizes(p.sizes):
        context.append(_sizes(p.sizes))
    if p.hbm:
        combine = (
            "max(T<sub>math</sub>, T<sub>hbm</sub>, T<sub>comms</sub>)"
            if p.overlap
            else "max(T<sub>math</sub>, T<sub>hbm</sub>) + T<sub>comms</sub>"
        )
    else:
        combine = "max(T<sub>math</sub>, T<sub>comms</sub>)" if p.overlap else "T<sub>math</sub> + T<sub>comms</sub>"
    context.append(_say("html.time_model", lang, combine=combine, model=escape(p.model)))
    parts = [
        f"<p><strong>{math(p.matmul.latex())}</strong></p>",
        f"<p>{escape(_case(p, lang))}</p>",
        f'<p class="note">{" · ".join(context)}</p>',
        _table(head, rows),
    ]
    if total > len(shown):
        more = total - len(shown)
        said = _say("html.more", lang, count=more, total=total,
                    code="<code>plan.strategies</code>")  # fmt: skip
        parts.append(f'<p class="note">{said}</p>')
    if best is not None:
        said = _say("html.best", lang, name=strategy_name(best), time=escape(format_seconds(best.time)))
        parts.append(f'<p class="note">{said}</p>')
    else:
        parts.append(f'<p class="note">{_say("html.unranked" if total else "html.none_fits", lang)}</p>')
    return _page("plan", *parts)


def _role(role: str, language: str) -> str:
    """A step's role (``lhs``, ``rhs``, ``matmul``, ``out``) in ``language``; another is shown as it is."""
    key = f"html.role.{role}"
    return _say(key, language) if key in ENGLISH else role


def strategy_html(s: Strategy, *, language: str = "en") -> str:
    """A strategy as a table of its steps (what each moves and how long it takes), then its totals."""
    lang = language
    rows = []
    for st in s.steps:
        role = escape(_role(st.role, lang))
        if st.timing is None:
            rows.append(("", [role, math(st.op.latex()), "—", _flops(st.flops), "—"]))
        else:
            rows.append(("", [role, math(st.op.latex()), _bytes(st.timing.bytes), "—", _seconds(st.timing.time)]))
    head = [_say(k, lang) for k in ("html.role", "html.step", "html.bytes_moved", "html.flops", "cli.time")]
    steps = _table(head, rows)
    totals = _pairs(
        [
            (_say("html.flops", lang), _flops(s.flops_per_device)),
            ("T_math", _seconds(s.compute_time)),
            ("T_hbm", _seconds(s.hbm_time)),
            ("T_comms", _seconds(s.comm_time)),
            (_say("cli.time", lang), _seconds(s.time)),
            (_say("html.bound", lang), escape(_bound(s.bound, lang))),
            (_say("html.memory", lang), _bytes(s.memory_bytes_per_device)),
        ]
    )
    return _page("strategy", f"<p><strong>{strategy_name(s)}</strong></p>", steps, totals)


# -- comparisons -------------------------------------------------------------------------------------


def cost_latex(c: CollectiveCost) -> str:
    """A collective's time as a notebook formula: ``$T = 559\\ \\mu\\text{s}$`` once it is a number,
    else its formula in symshard's LaTeX."""
    value = as_expr(c.time)
    if not value.is_number:
        return "$" + c.latex() + "$"
    number, unit = format_seconds(value).split(" ")
    return "$T = " + number + r"\ " + _TEX_UNITS[unit] + "$"


def expr_latex(e: sympy.Basic) -> str:
    """A bare SymPy expression (``cost.time``, ``plan.best.time``) as a notebook formula in symshard's style,
    as SymPy itself shows it (``$\\displaystyle ...$``) but with ``T_{\\text{hop}}`` and ``\\lvert X \\rvert``
    for symshard's constants and axes; an expression without them looks exactly as SymPy shows it.

    Examples:
        >>> from symshard.algebra.symbols import T_hop, axis
        >>> expr_latex(T_hop * axis("X"))
        '$\\\\displaystyle T_{\\\\text{hop}} \\\\lvert X \\\\rvert$'
    """
    return "$\\displaystyle " + latex(e) + "$"


_TEX_UNITS = {"s": r"\text{s}", "ms": r"\text{ms}", "µs": r"\mu\text{s}", "ns": r"\text{ns}"}


def condition_latex(c: Condition | Clauses) -> str:
    """A condition as a notebook formula: ``$B < \\frac{C}{W_{\\text{ici}}}$``."""
    return "$" + c.latex() + "$"


def _condition_cell(exact: Condition | Clauses | None, numeric: Condition | Clauses | None, language: str) -> str:
    if exact is None:
        return "—"
    cell = math(exact.latex())
    if numeric is not None and numeric.latex() != exact.latex():
        cell += f'<br><span class="note">{_say("html.on_chip", language, condition=math(numeric.latex()))}</span>'
    return cell


def comparison_html(c: Comparison, *, language: str = "en") -> str:
    """A comparison as a table (each strategy's costs, when it is communication-bound, where it is the
    fastest) with the regime map under it when one can be drawn, its words in the same language."""
    lang = language
    regimes = {r.index: r for r in c.regimes}
    dominated = dict(c.dominated)
    rows = []
    for index, s in c.strategies:
        region = c.region(index)
        regime = regimes.get(index)
        if region is not None:
            where = _condition_cell(region.condition, region.numeric, lang)
        elif index in dominated:
            by = dominated[index]
            where = _say("html.never_by", lang, by=by) if by else _say("html.never_sampled", lang)
        else:
            where = "—"
        css = "best" if region is not None else ""
        hbm = [_seconds(s.hbm_time)] if c.hbm else []
        rows.append((css, [str(index), strategy_name(s), _seconds(s.compute_time), *hbm,
                           _seconds(s.bandwidth_comm_time)]))  # fmt: skip
        bound = _condition_cell(regime.communication_bound, regime.numeric, lang) if regime else "—"
        # the conditions are long: they get a line of their own under the strategy's costs
        said = [_say("html.communication_bound_iff", lang, condition=bound)]
        memory = regime.memory_bound if regime is not None else None
        if memory is not None and regime is not None and not memory.never:
            cell = _condition_cell(memory, regime.numeric_memory, lang)
            said.append(_say("html.memory_bound_iff", lang, condition=cell))
        said.append(_say("html.fastest_where", lang, where=where))
        when = f'<td colspan="{3 + len(hbm)}">{"<br>".join(said)}</td>'
        rows.append((f"{css} when".strip(), ["", when]))
    head = ["#", _say("html.strategy", lang), "T<sub>math</sub>", *(["T<sub>hbm</sub>"] if c.hbm else []),
            "T<sub>comms</sub>"]  # fmt: skip
    context = [_say("html.solving", lang, symbol=math(latex(c.symbol))),
               _say("html.mesh", lang, mesh=escape(str(c.plan.mesh)))]  # fmt: skip
    if c.hardware is not None:
        context.append(escape(c.hardware.label))
    if c.hbm:
        combine = (
            "max(T<sub>math</sub>, T<sub>hbm</sub>) + T<sub>comms</sub>"
            if c.serial
            else "max(T<sub>math</sub>, T<sub>hbm</sub>, T<sub>comms</sub>)"
        )
    else:
        combine = "T<sub>math</sub> + T<sub>comms</sub>" if c.serial else "max(T<sub>math</sub>, T<sub>comms</sub>)"
    context.append(_say("html.time_bandwidth", lang, combine=combine))
    parts = [
        f"<p><strong>{math(c.plan.matmul.latex())}</strong></p>",
        f'<p class="note">{" · ".join(context)}</p>',
        _table(head, rows),
    ]
    if c.best:
        parts.append(f'<p class="note">{_say("html.highlighted", lang)}</p>')
    svg = _regime_map(c, lang)
    if svg is not None:
        parts.append(f"<figure>{svg}</figure>")
    return _page("comparison", *parts)


def _regime_map(c: Comparison, language: str) -> str | None:
    from ..errors import SymshardError
    from ..render.regions import regime_map

    try:
        return regime_map(c, language=language).svg
    except SymshardError:  # one strategy, or a second symbol the map cannot choose: the table says it all
        return None


# -- placements ------------------------------------------------------------------------------------


def placement_html(pl: Placement, *, language: str = "en") -> str:
    """A placement as a table: shapes, how the array is cut and copied, and its bytes."""
    lang = language

    def shape(values: Sequence[object]) -> str:
        return math("(" + ", ".join(latex(as_expr(v)) for v in values) + ")")

    element = _say("html.element_bytes", lang, dtype=escape(pl.dtype), bytes=escape(format_number(pl.element_bytes)))
    rows = [
        (_say("cli.mesh", lang), escape(str(pl.mesh))),
        (_say("html.dtype", lang), element),
        (_say("html.sizes", lang), _sizes(pl.sizes) or "—"),
        (_say("html.global_shape", lang), shape(pl.global_shape)),
        (_say("html.local_shape", lang), shape(pl.local_shape)),
        (_say("html.blocks", lang), _count(pl.shards)),
        (_say("html.copies", lang), _count(pl.copies)),
        (_say("html.partial_sums", lang), _count(pl.partial_sums)),
        (_say("cli.bytes_per_device", lang), _bytes(pl.bytes_per_device)),
        (_say("html.total_bytes", lang), _bytes(pl.total_bytes)),
    ]
    return _page("placement", f"<p><strong>{math(pl.array.latex())}</strong></p>", _pairs(rows))


# -- transfers -------------------------------------------------------------------------------------


def _chip(coords: Sequence[int]) -> str:
    return escape("(" + ", ".join(str(c) for c in coords) + ")")


def _signed(moves: Sequence[int]) -> str:
    """``X +3, Y −1``: hops along each axis the route moves along, the sign its direction."""
    return ", ".join(f"{'XYZW'[i]} {'+' if m > 0 else '−'}{abs(m)}" for i, m in enumerate(moves) if m) or "—"


def _sum(bandwidth: object, latency: object, total: object) -> str:
    """``bandwidth + latency = total``, each a time."""
    return f"{_seconds(bandwidth)} + {_seconds(latency)} = <strong>{_seconds(total)}</strong>"


def route_html(r: Route, *, language: str = "en") -> str:
    """A point-to-point transfer: its route, hops and ports, and its time as bandwidth plus latency."""
    lang = language
    rows = [
        (_say("cli.transfer.route", lang), " → ".join(_chip(c) for c in r.waypoints)),
        (_say("html.hops_by_axis", lang), escape(_signed(r.moves))),
        (_say("cli.hops", lang), _count(r.hops)),
        (_say("html.ports", lang), _count(r.ports)),
        (_say("html.bytes", lang), _bytes(r.nbytes)),
        (_say("html.bandwidth_time", lang), _seconds(r.bandwidth_time)),
        (_say("html.latency_added", lang), _seconds(r.latency_time)),
        (_say("cli.time", lang), _sum(r.bandwidth_time, r.latency_time, r.time)),
    ]
    head = f"<p><strong>{_say('html.route_head', lang, source=_chip(r.source), target=_chip(r.target))}</strong></p>"
    return _page("route", head, _pairs(rows))


def gather_html(g: Gather, *, language: str = "en") -> str:
    """Every other chip sending to one: the links into it, the farthest sender, and the time."""
    lang = language
    rows = [
        (_say("html.senders", lang), _count(g.senders)),
        (_say("html.bytes_each", lang), _bytes(g.nbytes)),
        (_say("html.links_in", lang), _count(g.ports)),
        (_say("html.farthest", lang), _say("html.hops", lang, hops=_count(g.farthest))),
        (_say("html.bandwidth_time", lang), _seconds(g.bandwidth_time)),
        (_say("html.latency_added", lang), _seconds(g.latency_time)),
        (_say("cli.time", lang), _sum(g.bandwidth_time, g.latency_time, g.time)),
    ]
    head = f"<p><strong>{_say('html.gather_head', lang, target=_chip(g.target))}</strong></p>"
    return _page("gather", head, _pairs(rows))


def host_transfer_html(t: HostTransfer, *, language: str = "en") -> str:
    """Bytes from the hosts over PCIe: each chip's share, the bandwidth and the time."""
    lang = language
    rows = [
        (_say("html.bytes", lang), _bytes(t.nbytes)),
        (_say("html.chips", lang), _count(t.chips)),
        (_say("html.bytes_per_chip", lang), _bytes(t.nbytes / t.chips)),
        (_say("html.pcie", lang), _rate(t.bandwidth)),
        (_say("cli.time", lang), f"<strong>{_seconds(t.time)}</strong>"),
    ]
    return _page("host-transfer", f"<p><strong>{_say('html.host_head', lang)}</strong></p>", _pairs(rows))


def _rate(expr: object, unit: str = "B/s") -> str:
    """A rate as the CLI prints it (``1.6e10 B/s``, ``4.11e18 FLOP/s``), or its formula."""
    value = as_expr(expr)
    return _num(f"{format_number(value)} {unit}") if value.is_number else _formula(value)


def slice_totals_html(t: SliceTotals, *, language: str = "en") -> str:
    """What a slice adds up to: chips, FLOP/s, HBM and its bandwidth, hosts, DCN egress."""
    lang = language

    def maybe(x: object, show) -> str:
        return "—" if x is None else show(x)

    rows = [
        (_say("html.chips", lang), _count(t.chips)),
        (_say("html.flops_bf16", lang), _rate(t.flops, "FLOP/s")),
        (_say("cli.transfer.hbm", lang), maybe(t.hbm_bytes, _bytes)),
        (_say("cli.transfer.hbm_bandwidth", lang), maybe(t.hbm_bandwidth, _rate)),
        (_say("cli.transfer.hosts", lang), maybe(t.hosts, _count)),
        (_say("cli.transfer.dcn", lang), maybe(t.dcn_bandwidth, _rate)),
    ]
    shape = "x".join(str(s) for s in t.shape)
    return _page("slice", f"<p><strong>{escape(t.hardware.label)} {escape(shape)}</strong></p>", _pairs(rows))


# -- problems ----------------------------------------------------------------------------------------


def _markdown(text: str, figures: dict[str, str]) -> str:
    """A template's Markdown as HTML, its figures inline as data URIs (plain text if Markdown is missing)."""
    from ..errors import UsageError

    try:
        from .markdown import to_html

        body, _ = to_html(text, lambda name: figures.get(name, "figures/" + name))
        return body
    except UsageError:  # markdown-it-py comes with the docs extra
        return f'<pre style="white-space:pre-wrap">{escape(text)}</pre>'


def problem_html(pr: ShownProblem, *, language: str | None = None) -> str:
    """A problem: its statement (figures inline), then hints, answers and the worked solution, each
    folded away behind a ``<details>`` so the answers are not read by accident.

    The words around the problem's own text are in ``language``, by default the problem's
    (``Problem.language``), so that a Chinese problem reads in Chinese throughout.
    """
    lang = pr.language if language is None else language
    figures = {
        name: "data:image/svg+xml;base64," + base64.b64encode(fig.svg.encode()).decode("ascii")
        for name, fig in pr.figures
    }
    parts = [
        (
            f"<p><strong>{escape(pr.title)}</strong> "
            f'<span class="note">{escape(pr.id)} · {_say("html.difficulty", lang, level=escape(_level(pr, lang)))}'
            "</span></p>"
        ),
        _markdown(pr.statement, figures),
    ]
    for i, hint in enumerate(pr.hints, 1):
        parts.append(f"<details><summary>{escape(ui('hint', lang, k=i))}</summary>{_markdown(hint, figures)}</details>")
    head = [escape(ui("answer", lang)), escape(ui("value", lang))]
    answers = _table(head, [("", [escape(a.label or a.name), escape(a.show)]) for a in pr.answers])
    parts.append(f"<details><summary>{escape(ui('answers', lang))}</summary>{answers}</details>")
    solution = _markdown(pr.solution, figures)
    parts.append(f"<details><summary>{escape(ui('worked_solution', lang))}</summary>{solution}</details>")
    return _page("problem", *parts)


def _level(pr: ShownProblem, language: str) -> str:
    """The family's difficulty (``easy``, ``medium``, ``hard``) in ``language``."""
    return ui(pr.family.difficulty, language)

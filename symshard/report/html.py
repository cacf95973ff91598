"""Results as notebook HTML: plans, strategies, comparisons, placements, transfers and problems as tables.

Jupyter shows an object through its ``_repr_html_``; the algebra's result types define that method
as one line that imports this module when it is called, so the algebra never depends on its
presentation and ``import symshard`` stays as light as it was. Formulas are LaTeX from
:func:`symshard.symbols.latex` (``T_{\\text{hop}}``, ``\\lvert X \\rvert``: one style everywhere),
inside ``$...$`` for the notebook's MathJax; numbers carry their units as the CLI prints them
(``559 µs``, ``1,048,576 B (1 MiB)``); every piece of text is escaped; the same object gives the
same bytes every time (nothing here reads a clock, an address or a set's order).

Examples:
    >>> from symshard.planner import plan
    >>> p = plan("X[B, D] · Y[D_X, F] -> Z[B, F]", "X=8", "B=1024,D=8192,F=16384", hardware="tpu-v5e")
    >>> page = plan_html(p)
    >>> "★" in page and "1.3 ms" in page
    True
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING

from ..mathtext import as_expr
from ..symbols import latex
from ..units import format_bytes, format_flops, format_number, format_seconds

if TYPE_CHECKING:
    import sympy

    from ..collectives import CollectiveCost
    from ..conditions import Clauses, Condition
    from ..crossovers import Comparison
    from ..placement import Placement
    from ..planner import Plan, PlanStep, Strategy
    from ..problems.engine import Problem
    from ..transfers import Gather, HostTransfer, Route, SliceTotals

__all__ = [
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


def _bound(bound: str | None) -> str:
    return "—" if bound is None else f"{bound}-bound"


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
    from ..einsums import LocalMatmul

    if isinstance(step.op, LocalMatmul):
        return r"\text{matmul}"
    name = step.op.operand.name or step.role
    return step.op.op.latex() + r"(\mathbf{" + name.replace("_", r"\_") + "})"


def strategy_name(s: Strategy) -> str:
    """A strategy's name as one formula: its steps joined by arrows."""
    return math(r" \rightarrow ".join(_step_tex(st) for st in s.steps))


def _sizes(sizes: Sequence[tuple[str, object]]) -> str:
    """The sizes given (a dim still its own symbol is left out)."""
    return ", ".join(math(f"{name} = {latex(as_expr(v))}") for name, v in sizes if str(as_expr(v)) != name)


# -- plans and strategies ----------------------------------------------------------------------------


def plan_html(p: Plan, top: int = TOP) -> str:
    """A plan as a table of its strategies, fastest first when the numbers allow, the best marked ★.

    Only the first ``top`` strategies are drawn (a plan over many axes lists thousands); a line
    says how many more there are.
    """
    best = p.best
    head = ["", "#", "strategy", "T<sub>math</sub>", "T<sub>comms</sub>", "time", "bound", "memory / device"]
    rows = []
    shown = p.strategies[:top] if top >= 0 else p.strategies
    for i, s in enumerate(shown, 1):
        mark = "★" if best is not None and i == 1 else ""
        rows.append(
            (
                "best" if mark else "",
                [
                    mark,
                    str(i),
                    strategy_name(s),
                    _seconds(s.compute_time),
                    _seconds(s.comm_time),
                    _seconds(s.time),
                    escape(_bound(s.bound)),
                    _bytes(s.memory_bytes_per_device),
                ],
            )
        )
    total = len(p.strategies)
    context = [f"mesh {escape(str(p.mesh))}", escape(p.dtype)]
    if p.hardware is not None:
        context.insert(1, escape(p.hardware.label))
    if _sizes(p.sizes):
        context.append(_sizes(p.sizes))
    combine = "max(T<sub>math</sub>, T<sub>comms</sub>)" if p.overlap else "T<sub>math</sub> + T<sub>comms</sub>"
    context.append(f"time = {combine}, model {escape(p.model)}")
    parts = [
        f"<p><strong>{math(p.matmul.latex())}</strong></p>",
        f"<p>{escape(str(p.classification))}</p>",
        f'<p class="note">{" · ".join(context)}</p>',
        _table(head, rows),
    ]
    if total > len(shown):
        more = total - len(shown)
        parts.append(
            f'<p class="note">… and {more:,} more {"strategy" if more == 1 else "strategies"} '
            f"({total:,} listed; <code>plan.strategies</code> has them all)</p>"
        )
    if best is not None:
        parts.append(f'<p class="note">★ best: {strategy_name(best)}, {escape(format_seconds(best.time))}</p>')
    elif total:
        parts.append('<p class="note">sizes or constants are symbols: the strategies cannot be ranked</p>')
    else:
        parts.append('<p class="note">no strategy fits</p>')
    return _page("plan", *parts)


def strategy_html(s: Strategy) -> str:
    """A strategy as a table of its steps (what each moves and how long it takes), then its totals."""
    rows = []
    for st in s.steps:
        if st.timing is None:
            rows.append(("", [escape(st.role), math(st.op.latex()), "—", _flops(st.flops), "—"]))
        else:
            rows.append(("", [escape(st.role), math(st.op.latex()), _bytes(st.timing.bytes), "—",
                              _seconds(st.timing.time)]))  # fmt: skip
    steps = _table(["role", "step", "bytes moved", "FLOPs / device", "time"], rows)
    totals = _pairs(
        [
            ("FLOPs / device", _flops(s.flops_per_device)),
            ("T_math", _seconds(s.compute_time)),
            ("T_comms", _seconds(s.comm_time)),
            ("time", _seconds(s.time)),
            ("bound", escape(_bound(s.bound))),
            ("memory / device", _bytes(s.memory_bytes_per_device)),
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
        >>> from symshard.symbols import T_hop, axis
        >>> expr_latex(T_hop * axis("X"))
        '$\\\\displaystyle T_{\\\\text{hop}} \\\\lvert X \\\\rvert$'
    """
    return "$\\displaystyle " + latex(e) + "$"


_TEX_UNITS = {"s": r"\text{s}", "ms": r"\text{ms}", "µs": r"\mu\text{s}", "ns": r"\text{ns}"}


def condition_latex(c: Condition | Clauses) -> str:
    """A condition as a notebook formula: ``$B < \\frac{C}{W_{\\text{ici}}}$``."""
    return "$" + c.latex() + "$"


def _condition_cell(exact: Condition | Clauses | None, numeric: Condition | Clauses | None) -> str:
    if exact is None:
        return "—"
    cell = math(exact.latex())
    if numeric is not None and numeric.latex() != exact.latex():
        cell += f'<br><span class="note">on the chip: {math(numeric.latex())}</span>'
    return cell


def comparison_html(c: Comparison) -> str:
    """A comparison as a table (each strategy's costs, when it is communication-bound, where it is the
    fastest) with the regime map under it when one can be drawn."""
    regimes = {r.index: r for r in c.regimes}
    dominated = dict(c.dominated)
    rows = []
    for index, s in c.strategies:
        region = c.region(index)
        regime = regimes.get(index)
        if region is not None:
            where = _condition_cell(region.condition, region.numeric)
        elif index in dominated:
            by = dominated[index]
            where = f"never (strategy {by} is at least as fast)" if by else "never at the points sampled"
        else:
            where = "—"
        css = "best" if region is not None else ""
        rows.append((css, [str(index), strategy_name(s), _seconds(s.compute_time), _seconds(s.bandwidth_comm_time)]))
        bound = _condition_cell(regime.communication_bound, regime.numeric) if regime else "—"
        # the conditions are long: they get a line of their own under the strategy's costs
        when = f'<td colspan="3">communication-bound iff {bound}<br>fastest where {where}</td>'
        rows.append((f"{css} when".strip(), ["", when]))
    head = ["#", "strategy", "T<sub>math</sub>", "T<sub>comms</sub>"]
    context = [f"solving for {math(latex(c.symbol))}", f"mesh {escape(str(c.plan.mesh))}"]
    if c.hardware is not None:
        context.append(escape(c.hardware.label))
    combine = "T<sub>math</sub> + T<sub>comms</sub>" if c.serial else "max(T<sub>math</sub>, T<sub>comms</sub>)"
    context.append(f"time = {combine}, collectives bandwidth-bound")
    parts = [
        f"<p><strong>{math(c.plan.matmul.latex())}</strong></p>",
        f'<p class="note">{" · ".join(context)}</p>',
        _table(head, rows),
    ]
    if c.best:
        parts.append('<p class="note">highlighted: the strategies that are the fastest somewhere</p>')
    svg = _regime_map(c)
    if svg is not None:
        parts.append(f"<figure>{svg}</figure>")
    return _page("comparison", *parts)


def _regime_map(c: Comparison) -> str | None:
    from ..errors import SymshardError
    from ..render.regions import regime_map

    try:
        return regime_map(c).svg
    except SymshardError:  # one strategy, or a second symbol the map cannot choose: the table says it all
        return None


# -- placements ------------------------------------------------------------------------------------


def placement_html(pl: Placement) -> str:
    """A placement as a table: shapes, how the array is cut and copied, and its bytes."""

    def shape(values: Sequence[object]) -> str:
        return math("(" + ", ".join(latex(as_expr(v)) for v in values) + ")")

    rows = [
        ("mesh", escape(str(pl.mesh))),
        ("dtype", f"{escape(pl.dtype)} ({escape(format_number(pl.element_bytes))} B per element)"),
        ("sizes", _sizes(pl.sizes) or "—"),
        ("global shape", shape(pl.global_shape)),
        ("local shape (per device)", shape(pl.local_shape)),
        ("blocks", _count(pl.shards)),
        ("copies of each block", _count(pl.copies)),
        ("partial sums per element", _count(pl.partial_sums)),
        ("bytes per device", _bytes(pl.bytes_per_device)),
        ("bytes over all devices", _bytes(pl.total_bytes)),
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


def route_html(r: Route) -> str:
    """A point-to-point transfer: its route, hops and ports, and its time as bandwidth plus latency."""
    rows = [
        ("route", " → ".join(_chip(c) for c in r.waypoints)),
        ("hops by axis", escape(_signed(r.moves))),
        ("hops", _count(r.hops)),
        ("ports used at once", _count(r.ports)),
        ("bytes", _bytes(r.nbytes)),
        ("bandwidth time", _seconds(r.bandwidth_time)),
        ("latency added", _seconds(r.latency_time)),
        ("time", _sum(r.bandwidth_time, r.latency_time, r.time)),
    ]
    head = f"<p><strong>chip {_chip(r.source)} → chip {_chip(r.target)}</strong></p>"
    return _page("route", head, _pairs(rows))


def gather_html(g: Gather) -> str:
    """Every other chip sending to one: the links into it, the farthest sender, and the time."""
    rows = [
        ("senders", _count(g.senders)),
        ("bytes from each", _bytes(g.nbytes)),
        ("links into the target", _count(g.ports)),
        ("farthest sender", f"{_count(g.farthest)} hops"),
        ("bandwidth time", _seconds(g.bandwidth_time)),
        ("latency added", _seconds(g.latency_time)),
        ("time", _sum(g.bandwidth_time, g.latency_time, g.time)),
    ]
    head = f"<p><strong>gather to chip {_chip(g.target)}</strong></p>"
    return _page("gather", head, _pairs(rows))


def host_transfer_html(t: HostTransfer) -> str:
    """Bytes from the hosts over PCIe: each chip's share, the bandwidth and the time."""
    rows = [
        ("bytes", _bytes(t.nbytes)),
        ("chips", _count(t.chips)),
        ("bytes per chip", _bytes(t.nbytes / t.chips)),
        ("PCIe bandwidth per chip", _rate(t.bandwidth)),
        ("time", f"<strong>{_seconds(t.time)}</strong>"),
    ]
    return _page("host-transfer", "<p><strong>host → chips over PCIe</strong></p>", _pairs(rows))


def _rate(expr: object, unit: str = "B/s") -> str:
    """A rate as the CLI prints it (``1.6e10 B/s``, ``4.11e18 FLOP/s``), or its formula."""
    value = as_expr(expr)
    return _num(f"{format_number(value)} {unit}") if value.is_number else _formula(value)


def slice_totals_html(t: SliceTotals) -> str:
    """What a slice adds up to: chips, FLOP/s, HBM and its bandwidth, hosts, DCN egress."""

    def maybe(x: object, show) -> str:
        return "—" if x is None else show(x)

    rows = [
        ("chips", _count(t.chips)),
        ("FLOP/s (bf16)", _rate(t.flops, "FLOP/s")),
        ("HBM", maybe(t.hbm_bytes, _bytes)),
        ("HBM bandwidth", maybe(t.hbm_bandwidth, _rate)),
        ("hosts", maybe(t.hosts, _count)),
        ("DCN egress", maybe(t.dcn_bandwidth, _rate)),
    ]
    shape = "x".join(str(s) for s in t.shape)
    return _page("slice", f"<p><strong>{escape(t.hardware.label)} {escape(shape)}</strong></p>", _pairs(rows))


# -- problems ----------------------------------------------------------------------------------------


def _markdown(text: str, figures: dict[str, str]) -> str:
    """A template's Markdown as HTML, its figures inline as data URIs (plain text if Markdown is missing)."""
    from ..errors import UsageError

    try:
        from ..problems.html import to_html

        body, _ = to_html(text, lambda name: figures.get(name, "figures/" + name))
        return body
    except UsageError:  # markdown-it-py comes with the docs extra
        return f'<pre style="white-space:pre-wrap">{escape(text)}</pre>'


def problem_html(pr: Problem) -> str:
    """A problem: its statement (figures inline), then hints, answers and the worked solution, each
    folded away behind a ``<details>`` so the answers are not read by accident."""
    figures = {
        name: "data:image/svg+xml;base64," + base64.b64encode(fig.svg.encode()).decode("ascii")
        for name, fig in pr.figures
    }
    parts = [
        (
            f"<p><strong>{escape(pr.title)}</strong> "
            f'<span class="note">{escape(pr.id)} · difficulty {escape(str(pr.family.difficulty))}</span></p>'
        ),
        _markdown(pr.statement, figures),
    ]
    for i, hint in enumerate(pr.hints, 1):
        parts.append(f"<details><summary>Hint {i}</summary>{_markdown(hint, figures)}</details>")
    answers = _table(["answer", "value"], [("", [escape(a.label or a.name), escape(a.show)]) for a in pr.answers])
    parts.append(f"<details><summary>Answers</summary>{answers}</details>")
    parts.append(f"<details><summary>Worked solution</summary>{_markdown(pr.solution, figures)}</details>")
    return _page("problem", *parts)

"""Regime plots: each strategy's time against one dim, log-log, with the crossovers marked.

One polyline per strategy (the few that matter: those that are fastest
somewhere in the range, then the closest runners-up, at most six), each with
its own colour and marker shape, and its compute time ``T_math`` dashed in the
same colour (where the solid line leaves the dashed one, the strategy waits on
communication). A shaded band shows where the fastest strategy is
communication-bound. Vertical lines mark the crossovers, computed exactly by
:mod:`symshard.render.sweep`: where the fastest strategy changes, and where the
fastest one turns from communication- to compute-bound; each is labelled with
the dim's value.

Examples:
    >>> fig = regimes("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", mesh="X=64", shape="D=1024,F=4096",
    ...               hardware="tpu-v5p")
    >>> 'data-x="2550"' in fig.svg
    True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from ..algebra.units import format_seconds, sig
from ..costs.placement import ShapeLike, resolve_shape
from ..errors import PlanError, ShapeError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..messages import say
from ..notation.einsums import Matmul, matmul
from ..planning.planner import plan as make_plan
from ..planning.strategies import Plan
from .canvas import ID, Canvas
from .figure import Figure
from .piecewise import Piecewise
from .style import GRID, INK, LINE_COLOURS, MUTED, SIZE, SMALL, TITLE, text_width
from .sweep import Curve, Sweep, sweep
from .words import clauses, commas, words

__all__ = ["MAX_LINES", "regimes"]

MAX_LINES = 6
"""At most this many strategies get a line (the legend says how many were left out)."""

_W, _LEFT, _RIGHT, _PLOT_H = 760.0, 84.0, 28.0, 330.0
_LABEL_ROWS = 3  # rows of crossover labels above the plot
_MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross")


# -- numbers for people ---------------------------------------------------------------------------


def value_text(x: Fraction) -> str:
    """An exact crossover for a label: ``2,550``, ``2,189`` (rounded), ``12.5``."""
    if x.denominator == 1:
        return f"{x.numerator:,}"
    v = float(x)
    return f"{round(v):,}" if v >= 1000 else sig(v, 4)


def at_text(dim: str, x: Fraction) -> str:
    """``B = 2,550`` for an exact value, ``B ≈ 2,189`` for a rounded one."""
    return f"{dim} {'=' if x.denominator == 1 else '≈'} {value_text(x)}"


def size_tick(v: float) -> str:
    """A power of two as a dim size: ``256``, ``1K``, ``16K``, ``1M``, ``4G``."""
    n = round(v)
    for power, unit in ((30, "G"), (20, "M"), (10, "K")):
        if n >= 2**power and n % 2**power == 0:
            return f"{n // 2**power}{unit}"
    return f"{n:,}" if n >= 1 else sig(v, 3)


# -- inputs -----------------------------------------------------------------------------------------


def _resolve(
    target: Plan | Matmul | str,
    dim: str,
    mesh: Mesh | Mapping[str, object] | str | None,
    shape: ShapeLike,
    hardware: Hardware | str | None,
    options: dict,
) -> tuple[Plan, bool]:
    """The numeric plan to sweep, and whether the dim's own size was given (it centres the range)."""
    if isinstance(target, Plan) and mesh is None and shape is None and hardware is None and not options:
        return target, True
    if isinstance(target, Plan):
        mm = target.matmul
        mesh = target.mesh if mesh is None else mesh
        hardware = target.hardware if hardware is None else hardware
        if shape is None:
            shape = {d: s for d, s in target.sizes if s.is_number}
    elif isinstance(target, Matmul):
        mm = target
    elif isinstance(target, str):
        mm = matmul(target)
    else:
        raise PlanError(
            say("regimes() plots a planned matmul, not {what}", what=f"{type(target).__name__} {target!r}"),
            hint=say("pass symshard.plan(...) or the matmul's notation, e.g. 'X[B, D] · Y[D_X, F] -> Z[B, F]'"),
        )
    if dim not in mm.dims:
        raise PlanError(
            say("'{dim}' is not a dim of {matmul}", dim=dim, matmul=str(mm)),
            hint=say("plot against one of its dims: {dims}", dims=", ".join(mm.dims)),
        )
    if mesh is None:
        raise PlanError(
            say("a regime plot of {matmul} needs the mesh's sizes", matmul=str(mm)),
            hint=say("pass mesh='X=16' (the axes the arrays name, each with a number of devices)"),
        )
    if hardware is None:
        raise PlanError(
            say("a regime plot of {matmul} needs a chip to turn costs into seconds", matmul=str(mm)),
            hint=say("pass hardware='tpu-v5p' (or another preset)"),
        )
    sizes = resolve_shape(shape, mm.dims, context=str(mm))
    missing = [d for d in mm.dims if d != dim and not sizes[d].is_number]
    if missing:
        if len(missing) == 1:
            message = say(
                "a regime plot against {dim} needs the size of every other dim of {matmul}, but {missing} has none",
                dim=dim,
                matmul=str(mm),
                missing=missing[0],
            )
        else:
            message = say(
                "a regime plot against {dim} needs the size of every other dim of {matmul}, but {missing} have none",
                dim=dim,
                matmul=str(mm),
                missing=", ".join(missing),
            )
        raise ShapeError(message, hint=say("pass shape='{example}'", example=",".join(f"{d}=4096" for d in missing)))  # fmt: skip
    given = sizes[dim].is_number
    m = mesh if isinstance(mesh, Mesh) else Mesh(mesh, hardware=hardware)
    if not m.is_numeric:
        raise PlanError(say("a regime plot needs a number of devices on every mesh axis, not the mesh '{mesh}'",
                            mesh=str(m)),
                        hint=say("give each axis a size, e.g. {example}", example="X=16"))  # fmt: skip
    full = {d: s for d, s in sizes.items()}
    if not given:
        full[dim] = m.devices  # any size that splits evenly: the sweep does not depend on it
    return make_plan(mm, m, full, hardware=hardware, **options), given


def _range(s: Sweep, given: bool, lo: float | None, hi: float | None) -> tuple[float, float]:
    if lo is not None and hi is not None:
        low, high = float(lo), float(hi)
    else:
        anchors = [float(e.x) for e in s.events] + ([float(s.x0)] if given else [])
        if not anchors:
            anchors = [1024.0]
        a, b = min(anchors), max(anchors)
        low = float(lo) if lo is not None else max(1.0, 2.0 ** (math.floor(math.log2(a)) - 4))
        high = float(hi) if hi is not None else 2.0 ** (math.ceil(math.log2(b)) + 4)
        if high <= low:
            high = low * 2**8
    if not (low > 0 and high > low) or not (math.isfinite(low) and math.isfinite(high)):
        raise ShapeError(
            say("the range of {dim} to plot, from {lo} to {hi}, is empty", dim=s.dim, lo=str(lo), hi=str(hi)),
            hint=say("give 0 < lo < hi, e.g. lo=256, hi=65536 (or leave them out to centre on the crossovers)"),
        )
    return low, high


def _choose(s: Sweep, xs: Sequence[float]) -> tuple[list[Curve], int]:
    """The curves to draw: fastest somewhere in range first, then the closest others; and how many were left."""
    lo, hi = xs[0], xs[-1]
    chosen: list[Curve] = []
    for n, (start, i) in enumerate(s.fastest):
        end = s.fastest[n + 1][0] if n + 1 < len(s.fastest) else None
        if float(start) <= hi and (end is None or float(end) >= lo) and s.curves[i] not in chosen:
            chosen.append(s.curves[i])
    probes = xs[:: max(1, len(xs) // 24)]
    table = {c.index: _values(c.time, probes) for c in s.curves}
    best = [min(col) for col in zip(*table.values(), strict=True)]

    def closeness(c: Curve) -> tuple[float, int]:
        return (min(v / b for v, b in zip(table[c.index], best, strict=True)), c.index)

    seen = {c.time for c in chosen}
    rest = sorted((c for c in s.curves if c not in chosen), key=closeness)
    for c in rest:
        if len(chosen) >= MAX_LINES:
            break
        if c.time in seen:  # the same time as a line already drawn: it would hide under it
            continue
        seen.add(c.time)
        chosen.append(c)
    return chosen, len(s.curves) - len(chosen)


def _value(c: Curve, x: float, which: str = "time") -> float:
    return _values(getattr(c, which), [x])[0]


def _values(f: Piecewise, xs: Sequence[float]) -> list[float]:
    """``f`` at increasing ``xs``, in floats (one walk along the pieces)."""
    starts, lines = f.floats()
    out, i = [], 0
    for x in xs:
        while i + 1 < len(starts) and starts[i + 1] <= x:
            i += 1
        k, b = lines[i]
        out.append(k * x + b)
    return out


# -- drawing ---------------------------------------------------------------------------------------------


def _samples(f: Piecewise, grid: Sequence[float]) -> list[tuple[float, float]]:
    """Points to draw ``f`` on log-log axes over the span of ``grid``: every kink exactly, the
    grid's points only on pieces that curve (a constant or a line through 0 is straight)."""
    lo, hi = grid[0], grid[-1]
    starts, lines = f.floats()
    cuts = [lo, *[x for x in starts[1:] if lo < x < hi], hi]
    out: list[tuple[float, float]] = []
    i = 0
    for a, b in itertools.pairwise(cuts):
        while i + 1 < len(starts) and starts[i + 1] <= a:
            i += 1
        k, c = lines[i]
        inner = [x for x in grid if a < x < b] if (k and c) else []
        for x in (a, *inner) if not out else inner:
            out.append((x, k * x + c))
        out.append((b, k * b + c))
    return out


def _visible(points: list[tuple[float, float]], top: float) -> list[tuple[float, float]]:
    """Drop the stretch of a line far below the plot (the clip hides it anyway), keeping one point beyond."""
    floor = top + _PLOT_H + 40
    keep = [i for i, (_, y) in enumerate(points) if y <= floor]
    if not keep:
        return points[-2:]
    return points[max(keep[0] - 1, 0) :]


def _marker(c: Canvas, kind: str, x: float, y: float, colour: str) -> None:
    r = 4.2
    if kind == "circle":
        c.circle(x, y, r, fill=colour, stroke="#ffffff", stroke_width=1)
    elif kind == "square":
        c.rect(x - r, y - r, 2 * r, 2 * r, fill=colour, stroke="#ffffff", stroke_width=1)
    elif kind == "triangle":
        c.path(f"M{x:.2f} {y - r - 1:.2f} L{x + r + 0.5:.2f} {y + r:.2f} L{x - r - 0.5:.2f} {y + r:.2f} Z",
               fill=colour, stroke="#ffffff", stroke_width=1)  # fmt: skip
    elif kind == "down":
        c.path(f"M{x:.2f} {y + r + 1:.2f} L{x + r + 0.5:.2f} {y - r:.2f} L{x - r - 0.5:.2f} {y - r:.2f} Z",
               fill=colour, stroke="#ffffff", stroke_width=1)  # fmt: skip
    elif kind == "diamond":
        c.path(f"M{x:.2f} {y - r - 1:.2f} L{x + r + 1:.2f} {y:.2f} L{x:.2f} {y + r + 1:.2f} L{x - r - 1:.2f} {y:.2f} Z",
               fill=colour, stroke="#ffffff", stroke_width=1)  # fmt: skip
    else:
        c.path(f"M{x - r:.2f} {y - r:.2f} L{x + r:.2f} {y + r:.2f} M{x - r:.2f} {y + r:.2f} L{x + r:.2f} {y - r:.2f}",
               stroke=colour, stroke_width=2.4)  # fmt: skip


def _regime(regime: str, language: str) -> str:
    """``'compute'`` or ``'communication'`` in ``language``."""
    return words(f"figure.regime.{regime}", language)


def _regime_words(c: Curve, dim: str, language: str) -> str:
    knees = c.knees()
    first = _regime(c.regime(Fraction(0)), language)
    if not knees:
        return words("figure.plot.bound_throughout", language, regime=first)
    parts = [words("figure.plot.bound_below", language, regime=first, at=at_text(dim, knees[0]))]
    for k in knees:
        key = "figure.plot.bound_from" if k.denominator == 1 else "figure.plot.bound_from_about"
        parts.append(words(key, language, regime=_regime(c.regime(k), language), value=value_text(k)))
    return commas(parts, language)


def regimes(
    plan: Plan | Matmul | str,
    dim: str,
    *,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    hardware: Hardware | str | None = None,
    lo: float | None = None,
    hi: float | None = None,
    points: int = 64,
    title: str | None = None,
    labels: Mapping[str | int, str] | None = None,
    language: str = "en",
    **options: object,
) -> Figure:
    """Plot each strategy's time against ``dim`` (log-log) and mark the crossovers.

    Args:
        plan: a numeric :class:`~symshard.planning.strategies.Plan` (from ``symshard.plan`` with sizes,
            mesh and chip) or the matmul's notation.
        dim: the dim to sweep, e.g. ``"B"``.
        mesh: the mesh (default: the plan's); numeric sizes.
        shape: the other dims' sizes (default: the plan's); the swept dim's own size,
            if given, only centres the default range.
        hardware: the chip (default: the plan's).
        lo: the smallest value of ``dim`` to plot; default: well below the first crossover.
        hi: the largest; default: well above the last crossover.
        points: samples per line (the exact kinks are always added).
        title: the heading; default ``"Time against <dim>: <matmul>"``.
        labels: names for some strategies, keyed by their name or 1-based number in the
            plan (``{"AllGather_X(Y) → matmul": "Strategy 1"}``); the others keep their number.
        language: the language of the plot's words and its description (``'en'``, ``'zh'``); numbers,
            formulas, notation, strategy names and the chip's label are the same in every language.
        **options: ``dtype``, ``model``, ``overlap`` and ``constants``, passed to the planner.

    Returns:
        A :class:`~symshard.render.Figure`; each crossover line carries its exact value
        in a ``data-x`` attribute.

    Raises:
        PlanError: not a matmul or plan, a dim it lacks, no mesh or chip.
        ShapeError: another dim without a size, or an empty range.

    Examples:
        >>> import symshard as ss
        >>> p = ss.plan("X[B, D] · Y[D_X, F] -> Z[B, F]", "X=16", "B=4096,D=1024,F=4096", hardware="tpu-v5e")
        >>> regimes(p, "B").alt.split(";")[0]
        'Log-log plot of the time of 4 strategies for X[B, D] · Y[D_X, F] -> Z[B, F] against B from 16 to 64K on TPU v5e'
    """
    unknown = sorted(set(options) - {"dtype", "model", "overlap", "constants"})
    if unknown:
        raise PlanError(
            say("regimes() has no option {name}", name=repr(unknown[0])),
            hint=say(
                "its options are mesh, shape, hardware, lo, hi, points, title, labels, language, dtype, model, overlap and constants"
            ),
        )
    if not isinstance(points, int) or isinstance(points, bool) or not 2 <= points <= 5000:
        raise ShapeError(
            say("points={points} cannot draw a line", points=repr(points)),
            hint=say("use between 2 and 5000 samples, e.g. points=64"),
        )
    p, given = _resolve(plan, dim, mesh, shape, hardware, dict(options))
    s = sweep(p, dim)
    numbers = {c.strategy.name: c.index for c in s.curves}
    named = {numbers[p.strategy(k).name]: str(v) for k, v in (labels or {}).items()}
    # with some strategies named, the others are "#3" so that "Strategy 1" and "1" cannot be confused
    tags = {c.index: named.get(c.index, f"#{c.index}" if named else str(c.index)) for c in s.curves}
    low, high = _range(s, given, lo, hi)
    l0, l1 = math.log(low), math.log(high)
    xs = [math.exp(l0 + (l1 - l0) * k / (points - 1)) for k in range(points)]
    xs[0], xs[-1] = low, high
    chosen, left_out = _choose(s, xs)
    lines = {c.index: _samples(c.time, xs) for c in chosen}
    dashes = {c.index: _samples(c.math, xs) for c in chosen}

    # -- scales
    values = [v for pts in lines.values() for _, v in pts]
    y_lo = 10.0 ** math.floor(math.log10(min(values)))
    y_hi = 10.0 ** math.ceil(math.log10(max(values)))
    if y_hi / y_lo < 100:
        y_lo, y_hi = y_lo / 10, y_hi * 10
    top = 16 + TITLE + 12 + SMALL + 14 + _LABEL_ROWS * (SIZE + 6)
    pw = _W - _LEFT - _RIGHT
    ly0, ly1 = math.log(y_lo), math.log(y_hi)

    def px(x: float) -> float:
        return _LEFT + (math.log(x) - l0) / (l1 - l0) * pw

    def py(y: float) -> float:
        return top + (ly1 - math.log(max(y, 1e-300))) / (ly1 - ly0) * _PLOT_H

    c = Canvas(_W, 0)
    heading = title if title is not None else words("figure.plot.title", language, dim=dim, matmul=p.matmul)
    hw = p.hardware.label if p.hardware is not None else words("figure.given_constants", language)
    others = ", ".join(f"{d}={v}" for d, v in p.sizes if d != dim)
    time_rule = words("figure.time_max" if p.overlap else "figure.time_sum", language)
    sub = words("figure.plot.subtitle", language, hw=hw, mesh=p.mesh, sizes=others, dtype=p.dtype, rule=time_rule,
                model=p.model)  # fmt: skip
    c.text(16, 16 + TITLE, heading, size=TITLE, font_weight="bold", fill=INK)
    c.text(16, 16 + TITLE + 12 + SMALL, sub, size=SMALL, fill=MUTED)

    # bands where the fastest strategy waits on communication
    for n, (start, i) in enumerate(s.fastest):
        end = s.fastest[n + 1][0] if n + 1 < len(s.fastest) else None
        cuts = [start, *[k for k in s.curves[i].knees() if k > start and (end is None or k < end)]]
        for m_, a in enumerate(cuts):
            b = cuts[m_ + 1] if m_ + 1 < len(cuts) else end
            if s.curves[i].regime(a) != "communication":
                continue
            xa, xb = max(float(a), low), high if b is None else min(float(b), high)
            if xa < xb:
                c.rect(px(xa), top, px(xb) - px(xa), _PLOT_H, fill="#eef3f9", cls="band")
                waits = words("figure.plot.waits", language)
                if px(xb) - px(xa) > text_width(waits, SMALL) + 12:
                    c.text(px(xa) + 6, top + SMALL + 6, waits, size=SMALL, fill=MUTED)

    # grid and ticks
    e_lo, e_hi = math.ceil(math.log2(low) - 1e-9), math.floor(math.log2(high) + 1e-9)
    step = 1
    while (e_hi - e_lo) // step > 9:
        step += 1
    for power in range(e_lo - (e_lo % step), e_hi + 1, step):
        if power < e_lo:
            continue
        x = px(2.0**power)
        c.line(x, top, x, top + _PLOT_H, stroke=GRID, stroke_width=1)
        c.text(x, top + _PLOT_H + 16, size_tick(2.0**power), size=SIZE, anchor="middle", fill=INK)
    d_lo, d_hi = round(math.log10(y_lo)), round(math.log10(y_hi))
    ystep = 1 if d_hi - d_lo <= 8 else 2 if d_hi - d_lo <= 16 else 3
    for d in range(d_lo, d_hi + 1):
        y = py(10.0**d)
        c.line(_LEFT, y, _LEFT + pw, y, stroke=GRID, stroke_width=1)
        if (d - d_lo) % ystep == 0:
            c.text(_LEFT - 8, y + 4, format_seconds(10.0**d), size=SIZE, anchor="end", fill=INK)
    c.rect(_LEFT, top, pw, _PLOT_H, fill="none", stroke=INK, stroke_width=1.2)
    c.text(
        _LEFT + pw / 2,
        top + _PLOT_H + 38,
        words("figure.log_scale", language, symbol=dim),
        size=SIZE,
        anchor="middle",
        fill=INK,
    )
    mid = top + _PLOT_H / 2
    c.text(
        20,
        mid,
        words("figure.plot.time_axis", language),
        size=SIZE,
        anchor="middle",
        fill=INK,
        transform=f"rotate(-90 20 {mid:.2f})",
    )

    # the lines
    c.raw(f'<clipPath id="{ID}-plot"><rect x="{_LEFT}" y="{top}" width="{pw}" height="{_PLOT_H}"/></clipPath>')
    c.open("g", clip_path=f"url(#{ID}-plot)", cls="lines")
    for n, cv in enumerate(chosen):
        colour = LINE_COLOURS[n % len(LINE_COLOURS)]
        c.polyline(_visible([(px(x), py(v)) for x, v in dashes[cv.index]], top), stroke=colour,
                   stroke_width=1.3, stroke_dasharray="6 4", stroke_opacity=0.85, cls="math")  # fmt: skip
        c.polyline([(px(x), py(v)) for x, v in lines[cv.index]], stroke=colour,
                   stroke_width=2.4, stroke_linejoin="round", cls="strategy", data_strategy=cv.index)  # fmt: skip
        for f in (0.12, 0.37, 0.62, 0.87):
            x = math.exp(l0 + (l1 - l0) * (f + 0.035 * n))
            if x < high:
                _marker(c, _MARKERS[n % len(_MARKERS)], px(x), py(_value(cv, x)), colour)
        for k in cv.knees():
            if low < float(k) < high:
                c.circle(px(float(k)), py(float(cv.time(k))), 5, fill="#ffffff", stroke=colour, stroke_width=2,
                         cls="knee", data_x=str(k))  # fmt: skip
    c.close("g")

    # the crossovers
    shown = [e for e in s.events if low < float(e.x) < high]
    ends = [-1e9] * _LABEL_ROWS  # where the last label of each row above the plot ends
    for e in shown:
        x = px(float(e.x))
        label = at_text(dim, e.x)
        width = text_width(label, SIZE, bold=True)
        row = next((r for r, end in enumerate(ends) if end < x - width / 2 - 6), None)
        reach = top if row is None else top - 4 - row * (SIZE + 6)
        c.line(x, reach, x, top + _PLOT_H, stroke=INK, stroke_width=1.4, stroke_dasharray="3 3",
               cls="crossover", data_x=str(e.x), data_kind=e.kind)  # fmt: skip
        if row is not None:  # no room above the plot: the note under the legend still gives the value
            ends[row] = x + width / 2
            c.text(x, top - 8 - row * (SIZE + 6), label, size=SIZE, anchor="middle", font_weight="bold", fill=INK)

    # the legend and the notes
    y = top + _PLOT_H + 64
    width = _W
    for n, cv in enumerate(chosen):
        colour = LINE_COLOURS[n % len(LINE_COLOURS)]
        c.line(16, y - 4, 52, y - 4, stroke=colour, stroke_width=2.4)
        _marker(c, _MARKERS[n % len(_MARKERS)], 34, y - 4, colour)
        text = f"{tags[cv.index]}: {cv.strategy.name}" if named else f"{cv.index}. {cv.strategy.name}"
        c.text(60, y, text, size=SIZE, fill=INK)
        y += SMALL + 5
        c.text(60, y, _regime_words(cv, dim, language), size=SMALL, fill=MUTED)
        width = max(width, 76 + text_width(text, SIZE))
        y += SIZE + 9
    notes = [words("figure.plot.dashed", language), words("figure.plot.circles", language)]
    if left_out:
        notes.append(words("figure.plot.left_out", language,
                           count=left_out))  # fmt: skip
    for e in shown:
        regime = _regime(e.regime, language)
        if e.kind == "fastest":
            notes.append(words("figure.plot.changes", language, at=at_text(dim, e.x), before=tags[e.before],
                               after=tags[e.after], regime=regime))  # fmt: skip
        else:
            notes.append(words("figure.plot.turns", language, at=at_text(dim, e.x), after=tags[e.after], regime=regime))
    for note in notes:
        c.text(16, y, note, size=SMALL, fill=MUTED)
        width = max(width, 32 + text_width(note, SMALL))
        y += SMALL + 6
    c.grow(width, y + 10)

    # words for screen readers
    segments = []
    for n, (start, i) in enumerate(s.fastest):
        end = s.fastest[n + 1][0] if n + 1 < len(s.fastest) else None
        if (end is not None and float(end) <= low) or float(start) >= high:
            continue
        if float(start) <= low and (end is None or float(end) >= high):
            where = words("figure.plot.everywhere", language)
        elif float(start) <= low and end is not None:
            where = words("figure.plot.below", language, at=at_text(dim, end))
        elif end is None or float(end) >= high:
            where = words("figure.plot.above", language, at=at_text(dim, start))
        else:
            key = "figure.plot.between" if end.denominator == 1 else "figure.plot.between_about"
            where = words(key, language, start=at_text(dim, start), end=value_text(end))
        who = s.curves[i].index
        # with caller's labels, the others are named as the legend names them (#3), never "strategy 3",
        # which would clash with a label such as "Strategy 1" meaning another strategy
        head = tags[who] if named else words("figure.plot.strategy", language, index=who)
        segments.append(words("figure.plot.fastest", language, head=head, name=s.curves[i].strategy.name, where=where))
    regime_words = [
        words("figure.plot.alt_turns", language, regime=_regime(e.regime, language), at=at_text(dim, e.x))
        for e in shown
        if e.kind == "regime"
    ]
    alt = words("figure.plot.alt", language, count=len(chosen), matmul=p.matmul, dim=dim, lo=size_tick(low),
                hi=size_tick(high), hw=hw, facts=clauses(segments + regime_words, language))  # fmt: skip
    return Figure(c.document(title=heading, alt=alt), heading, alt)

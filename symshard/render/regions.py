"""Regime maps: which strategy is fastest over two symbols, each boundary named by its formula.

The picture the chapter draws by hand for its Question 4: two quantities on log axes (a batch and
a model dim, or a dim and a mesh axis), each point coloured by the strategy a
:class:`~symshard.planning.crossover_results.Comparison` finds fastest there, with the times weighed exactly as
``compare`` weighs them (bandwidth-bound collectives; ``max(T_math, T_comms)`` or their sum).
Every other symbol takes a number: the chip's constants, the plan's sizes and ``at``.

Where two regions meet, the map finds the boundary exactly (bisection on the difference of the
two times between grid points), draws it, and numbers it; the notes give its formula, solved
the way ``compare`` solves (:func:`symshard.algebra.inequalities.solve` on the two times' active terms),
and its value on the chip.

Examples:
    >>> import symshard as ss
    >>> c = ss.compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    >>> fig = regime_map(c, "B", "D")
    >>> fig.title
    'Fastest strategy by B and D: X[B, D] · Y[D_X, F] -> Z[B, F]'
    >>> 'data-boundary="2|3"' in fig.svg, "2 | 3: B = 5·D/7" in fig.svg
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy

from ..algebra.inequalities import Inequality, solve
from ..algebra.monomials import Maximum
from ..algebra.symbols import is_axis_symbol
from ..algebra.units import pretty, sig
from ..errors import PlanError, ShapeError
from ..messages import say
from .canvas import Canvas
from .figure import Figure
from .style import GRID, INK, LINE_COLOURS, MUTED, SIZE, SMALL, TITLE, text_width
from .words import clauses, words

__all__ = ["regime_map"]

_LEFT, _TOP_PAD, _PLOT_W, _PLOT_H = 84.0, 12.0, 600.0, 380.0
_NX, _NY = 120, 76  # cells of the fine grid
_COARSE = 40  # cells per side of the first look that centres the ranges
_SEARCH = (1.0, 2.0**34)  # where the first look searches a dim or an axis
_COLOURS = (*LINE_COLOURS, "#F0E442", "#882255", "#44AA99", "#999933", "#888888")
"""Region colours: the line colours, then more of the colour-blind-safe hues (regions also carry numbers)."""
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"

Terms = list[tuple[float, int, int]]  # (coefficient, power of x, power of y)


# -- the times as functions of the two symbols ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Time:
    """One strategy's time with every symbol but ``x`` and ``y`` replaced by its number."""

    index: int
    full: Maximum
    parts: tuple[Terms, ...]

    def at(self, xv: float, yv: float) -> float:
        return max(sum(k * xv**ex * yv**ey for k, ex, ey in part) for part in self.parts)

    def active(self, xv: float, yv: float) -> int:
        """Which part of the maximum is the largest at the point."""
        values = [sum(k * xv**ex * yv**ey for k, ex, ey in part) for part in self.parts]
        return values.index(max(values))


def _piece(times: Mapping[int, _Time], a: int, b: int, at: tuple[float, float]) -> tuple[int, int, int, int]:
    """The boundary piece a crossing lies on: the two strategies, in order, and the parts of their
    times that meet there. At a crossing both times are equal to some value ``T``; every part of
    either that reaches ``T`` there is a candidate (a maximum at its kink has two), and a pair of
    different parts is preferred to one part shared by both strategies (a tie, not a boundary)."""
    lo, hi = min(a, b), max(a, b)
    ta, tb = times[lo], times[hi]
    va = [sum(k * at[0] ** ex * at[1] ** ey for k, ex, ey in part) for part in ta.parts]
    vb = [sum(k * at[0] ** ex * at[1] ** ey for k, ex, ey in part) for part in tb.parts]
    top = max(max(va), max(vb))

    def near(v: float) -> bool:
        return abs(v - top) <= 1e-6 * top

    options = [(ia, ib) for ia in range(len(va)) for ib in range(len(vb)) if near(va[ia]) and near(vb[ib])]
    if not options:
        return (lo, hi, va.index(max(va)), vb.index(max(vb)))
    ia, ib = min(options, key=lambda o: (ta.full.parts[o[0]] == tb.full.parts[o[1]], o))
    return (lo, hi, ia, ib)


def _tint(colour: str, t: float) -> str:
    """``colour`` mixed with white, ``t`` of the colour kept (an opaque fill: no seams between rows)."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(255 - (255 - v) * t):02x}" for v in (r, g, b))


def _compile(index: int, time: Maximum, x: sympy.Expr, y: sympy.Expr, fixed: Mapping, missing: set) -> _Time:
    parts = []
    for part in time.parts:
        terms: Terms = []
        for mono, c in part.terms.items():
            k, ex, ey = float(c), 0, 0
            for a, e in mono:
                if a == x:
                    ex += e
                elif a == y:
                    ey += e
                elif a in fixed:
                    k *= fixed[a] ** e
                elif a.is_Symbol:
                    missing.add(a)
                elif a.free_symbols & {x, y}:
                    raise PlanError(
                        say("the time of strategy {index} holds {atom}, which a map over {x} and {y} cannot draw",
                            index=index, atom=pretty(a), x=str(x), y=str(y)),
                        hint=say("map over two other symbols"),
                    )  # fmt: skip
                else:
                    value = a.subs(fixed)
                    if not value.is_number:
                        missing.update(s for s in value.free_symbols if s not in fixed)
                        continue
                    k *= float(value) ** e
            terms.append((k, ex, ey))
        parts.append(terms)
    return _Time(index, time, tuple(parts))


def _symbol(name: str | sympy.Expr, pool: set[sympy.Expr], what: str) -> sympy.Expr:
    if isinstance(name, sympy.Expr):
        if name in pool:
            return name
        name = str(name)
    key = str(name).strip()
    by_name = {str(a): a for a in pool if a.is_Symbol}
    for cand in (key, f"|{key}|", key.strip("|")):
        if cand in by_name:
            return by_name[cand]
    raise PlanError(
        say("'{name}' does not appear in the compared strategies' times", name=name),
        hint=say("map over two of {names}", names=", ".join(sorted(by_name))),
    )


# -- ranges -----------------------------------------------------------------------------------------


def _is_size(s: sympy.Expr) -> bool:
    """A dim or a mesh axis (ticks at powers of two), not a hardware constant."""
    return bool(s.is_Symbol and (is_axis_symbol(s) or (s.name[:1].isupper() and "_" not in s.name and s.name != "C")))


def _fastest(times: Sequence[_Time], xv: float, yv: float) -> int:
    best, who = math.inf, times[0].index
    for t in times:
        v = t.at(xv, yv)
        if v < best * (1 - 1e-12):
            best, who = v, t.index
    return who


def _span(lo: float, hi: float, n: int) -> list[float]:
    """``n`` cell centres, evenly spaced in log between ``lo`` and ``hi``."""
    a, b = math.log(lo), math.log(hi)
    return [math.exp(a + (b - a) * (i + 0.5) / n) for i in range(n)]


def _ranges(times, x, y, floors, around, x_range, y_range) -> tuple[tuple[float, float], tuple[float, float]]:
    """The ranges to draw: given, or centred on the boundaries a first coarse look finds (a chip's
    constant is searched within a factor of 1000 of the chip's own value, ``around``)."""
    search = []
    for s, given in ((x, x_range), (y, y_range)):
        if given is not None:
            search.append(_checked_range(s, given))
        elif _is_size(s):
            search.append((max(_SEARCH[0], floors.get(s, 1.0)), _SEARCH[1]))
        elif s in around:
            search.append((around[s] / 1000, around[s] * 1000))
        else:
            raise ShapeError(
                say("a map over {symbol} needs its range", symbol=str(s)),
                hint=say("pass {name}=(low, high), e.g. (1e10, 1e12)", name="x_range" if s == x else "y_range"),
            )
    xs, ys = _span(*search[0], _COARSE), _span(*search[1], _COARSE)
    grid = [[_fastest(times, xv, yv) for xv in xs] for yv in ys]
    # where three regions meet (corners of the picture), else where any two do
    corners, edges = [], []
    for j in range(_COARSE - 1):
        for i in range(_COARSE - 1):
            block = {grid[j][i], grid[j][i + 1], grid[j + 1][i], grid[j + 1][i + 1]}
            if len(block) >= 3:
                corners.append((xs[i], ys[j]))
            elif len(block) == 2:
                edges.append((xs[i], ys[j]))
    anchors = corners or edges
    out = []
    for k, given in enumerate((x_range, y_range)):
        if given is not None:
            out.append(search[k])
            continue
        found = sorted(a[k] for a in anchors)
        if corners:
            lo, hi = found[0] / 2**6, found[-1] * 2**6
        elif found:  # one boundary: centred on its middle, which is where it lies in the other symbol's range
            middle = found[len(found) // 2]
            lo, hi = middle / 2**7, middle * 2**7
        elif (x, y)[k] in around:
            lo, hi = search[k]
        else:
            lo, hi = 2.0**4, 2.0**20
        base = 2.0 if _is_size((x, y)[k]) else 10.0  # sizes end on powers of two, constants on powers of ten
        lo = base ** math.floor(math.log(max(lo, search[k][0]), base))
        hi = base ** math.ceil(math.log(min(hi, search[k][1]), base))
        if hi < lo * 16:
            hi = lo * 2**8
        out.append((lo, hi))
    return out[0], out[1]


def _checked_range(s: sympy.Expr, given: object) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in given)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ShapeError(
            say("the range of {symbol}, {given}, is not two numbers", symbol=str(s), given=repr(given)),
            hint=say("give (low, high), e.g. (256, 65536)"),
        ) from None
    if not (0 < lo < hi) or not math.isfinite(hi):
        raise ShapeError(
            say("the range of {symbol}, from {lo} to {hi}, is empty", symbol=str(s), lo=f"{lo:g}", hi=f"{hi:g}"),
            hint=say("give 0 < low < high, e.g. (256, 65536)"),
        )
    return lo, hi


# -- words for the boundaries -----------------------------------------------------------------------


def _number_text(v: float) -> str:
    if v == round(v) and abs(v) < 1e15:
        return f"{round(v):,}"
    return f"{round(v):,}" if abs(v) >= 1000 else sig(v, 4)


def _rounded(expr: sympy.Expr) -> str:
    """A bound with its numbers as people write them: ``20,400``, ``3·J``, ``9,382·J/(J - 2,346)``
    (a ratio scaled so that its denominator's leading coefficient is 1, coefficients to 4 figures)."""
    expr = sympy.nsimplify(expr, rational=True)
    if expr.is_number:
        return _number_text(float(expr))
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    if den.free_symbols:
        lead = sympy.Poly(den, *sorted(den.free_symbols, key=str)).LC()
        num, den = sympy.expand(num / lead), sympy.expand(den / lead)
        if all(
            t.as_coeff_Mul()[0] < 0 for t in sympy.Add.make_args(num)
        ):  # -4,096·J/(J - 8,192) reads as 4,096·J/(8,192 - J)
            num, den = -num, -den

    def term(t: sympy.Expr) -> tuple[bool, str]:
        coeff, rest = t.as_coeff_Mul()
        v = float(coeff)
        size = _number_text(abs(v)) if abs(v) >= 1 else sig(abs(v), 4)
        if rest == 1:
            return v < 0, size
        return v < 0, pretty(rest) if size == "1" else f"{size}·{pretty(rest)}"

    def words(e: sympy.Expr) -> str:
        # symbols first, the constant last, each term's sign written between them: "J - 2,346"
        terms = sorted(sympy.Add.make_args(sympy.expand(e)),
                       key=lambda t: (float(t.as_coeff_Mul()[0]) < 0, bool(t.is_number), str(t.as_coeff_Mul()[1])))  # fmt: skip
        out = ""
        for n, t in enumerate(terms):
            negative, text = term(t)
            out += ("-" if negative else "") + text if n == 0 else (" - " if negative else " + ") + text
        return out

    top = words(num)
    if den == 1:
        return top
    top = f"({top})" if len(sympy.Add.make_args(num)) > 1 else top
    return f"{top}/({words(den)})"


def _formula(
    a: _Time, b: _Time, parts: tuple[int, int], x, y, domain, fixed_exprs, numbers: Mapping[sympy.Expr, float]
) -> tuple[str, str | None]:
    """Where ``a`` and ``b`` take the same time, with these parts of each the largest: symbolic, and
    with the numbers put in. Solved for ``x`` and for ``y`` (in the case that holds at ``numbers``, a
    point of the boundary); the shorter answer is kept, ``x``'s on a tie."""
    pa, pb = a.full.parts[parts[0]], b.full.parts[parts[1]]
    atoms = (pb - pa).atoms
    point = {k: Fraction(v) for k, v in numbers.items()}
    found: list[tuple[int, int, sympy.Expr, sympy.Expr]] = []
    for target in (x, y):
        if target not in atoms:
            continue
        cases = solve(Inequality.less(pa, pb, True), target, domain)

        def holds(case: Sequence, target: sympy.Expr = target) -> bool:
            try:
                return all(r.holds(point) for r in case if r.target != target)
            except (KeyError, TypeError, ZeroDivisionError):
                return True

        ordered = [case for case in cases if holds(case)] + [case for case in cases if not holds(case)]
        rel = next((r for case in ordered for r in case if r.target == target), None)
        if rel is not None:
            bound = rel.bound_expr()
            found.append(
                (
                    len(sympy.Add.make_args(sympy.numer(bound))) + len(sympy.Add.make_args(sympy.denom(bound))),
                    len(found),
                    rel.target,
                    bound,
                )
            )
    if not found:
        return pretty(pa.expr()) + " = " + pretty(pb.expr()), None
    _, _, target, bound = min(found, key=lambda f: f[:2])
    symbolic = f"{pretty(target)} = {pretty(bound)}"
    numeric_bound = bound.subs(fixed_exprs) if fixed_exprs else bound
    if numeric_bound == bound:
        return symbolic, None
    return symbolic, f"{pretty(target)} = {_rounded(numeric_bound)}"


# -- the map ----------------------------------------------------------------------------------------


def regime_map(
    comparison: object,
    x: str | sympy.Expr | None = None,
    y: str | sympy.Expr | None = None,
    *,
    at: Mapping[str, float] | None = None,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    title: str | None = None,
    language: str = "en",
) -> Figure:
    """A 2-D map, log axes, of which compared strategy is fastest at each point of ``x`` and ``y``.

    Args:
        comparison: a :class:`~symshard.planning.crossover_results.Comparison` (``symshard.compare(...)``).
        x: the horizontal symbol; default the one the comparison solves for.
        y: the vertical symbol; default the only other symbol left once the chip's constants,
            the plan's sizes and ``at`` have numbers.
        at: numbers for the other symbols still free, by name (``{"F": 16384, "X": 8}``).
        x_range: ``(low, high)`` of ``x``; default: centred on the boundaries.
        y_range: the same for ``y``.
        title: the heading; default ``"Fastest strategy by <x> and <y>: <matmul>"``.
        language: the language of the map's words and its description (``'en'``, ``'zh'``); numbers,
            formulas, notation, strategy names and the chip's label are the same in every language.

    Returns:
        A :class:`~symshard.render.Figure`: regions carry ``data-strategy``, boundaries
        ``data-boundary="a|b"`` and, in the notes, their formula and value on the chip; the plot's
        frame (``class="frame"``) carries the ranges drawn, ``data-x="low high"`` and ``data-y``.

    Raises:
        PlanError: not a comparison, a symbol not in the times, the same symbol twice, or a
            comparison of a single strategy.
        ShapeError: a symbol left without a number, or an empty range.
    """
    from ..planning.crossover_results import (
        Comparison,  # the map draws a comparison; the algebra never imports the drawing
    )

    if not isinstance(comparison, Comparison):
        raise PlanError(
            say("regime_map() draws a comparison, not {kind}", kind=type(comparison).__name__),
            hint=say("pass {example}", example="symshard.compare(matmul, 'B', hardware='tpu-v5p')"),
        )
    c = comparison
    indexes = [r.index for r in c.best] or [i for i, _ in c.strategies]
    if len(indexes) < 2:
        raise PlanError(
            say(
                "a regime map needs at least two strategies that can be the fastest; this comparison has {count}",
                count=len(indexes),
            ),
            hint=say("compare more strategies (strategies='all') or a matmul with more than one way to run"),
        )
    full = {i: c.time(i) for i in indexes}
    pool: set[sympy.Expr] = set().union(*(t.atoms for t in full.values()))
    fixed: dict[sympy.Expr, float] = {}
    fixed_exprs: dict[sympy.Expr, sympy.Expr] = {}
    if c.hardware is not None:
        for k, v in dict(c.hardware.constants(c.plan.dtype)).items():
            fixed[k], fixed_exprs[k] = float(v), sympy.nsimplify(v)
    for name, value in (at or {}).items():
        s = _symbol(name, pool, "fixed value")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ShapeError(
                say("{name}={value} in at is not a number", name=name, value=repr(value)),
                hint=say("give {name} a number, e.g. 4096", name=name),
            ) from None
        if not (v > 0 and math.isfinite(v)):
            raise ShapeError(
                say("{name}={value} in at is not a positive size", name=name, value=repr(value)),
                hint=say("give {name} a positive number", name=name),
            )
        fixed[s], fixed_exprs[s] = v, sympy.nsimplify(value)
    xs_ = _symbol(x if x is not None else c.symbol, pool, "x")
    free = sorted((a for a in pool if a.is_Symbol and a not in fixed and a != xs_), key=str)
    if y is None:
        if len(free) != 1:
            if free:
                raise PlanError(
                    say("a map over {symbol} needs a second symbol: choose one of {names}",
                        symbol=str(xs_), names=", ".join(map(str, free))),
                    hint=say("regime_map('{x}', '{y}', at={{...}}) with numbers for the rest",
                             x=str(xs_), y=str(free[0])),
                )  # fmt: skip
            raise PlanError(
                say("a map over {symbol} needs a second symbol: none is left", symbol=str(xs_)),
                hint=say("leave a dim out of the shape so it stays symbolic"),
            )
        ys_ = free[0]
    else:
        ys_ = _symbol(y, pool, "y")
    if ys_ == xs_:
        raise PlanError(
            say("a map needs two different symbols, not {symbol} twice", symbol=str(xs_)),
            hint=say("give x and y different symbols"),
        )
    around = {s: fixed[s] for s in (xs_, ys_) if s in fixed}  # a chip's constant on an axis: its value centres it
    for s in (xs_, ys_):
        fixed.pop(s, None)
        fixed_exprs.pop(s, None)
    missing: set[sympy.Expr] = set()
    times = [_compile(i, full[i], xs_, ys_, fixed, missing) for i in indexes]
    if missing:
        names = sorted(map(str, missing))
        dims = [n for n in names if not n.startswith("|")]
        axes = [n.strip("|") for n in names if n.startswith("|")]
        where = [f"--shape {','.join(f'{n}=4096' for n in dims)}"] if dims else []
        where += [f"--mesh {','.join(f'{n}=8' for n in axes)}"] if axes else []
        example = ", ".join([*(f"{n}=4096" for n in dims), *(f"{n}=8" for n in axes)])
        raise ShapeError(
            say("a map over {x} and {y} needs a number for {names}", x=str(xs_), y=str(ys_), names=", ".join(names)),
            hint=say("give each a size: at=dict({example}) in Python, {where} on the command line",
                     example=example, where=" ".join(where)),
        )  # fmt: skip
    domain = c.domain
    floors = {k: float(v) for k, v in (domain.floors.items() if domain is not None else ())}
    for s in (xs_, ys_):
        if is_axis_symbol(s):
            floors[s] = max(floors.get(s, 2.0), 2.0)
    (x_lo, x_hi), (y_lo, y_hi) = _ranges(times, xs_, ys_, floors, around, x_range, y_range)
    by_index = {t.index: t for t in times}

    # -- the fine grid, and the exact boundaries between its cells
    lx0, lx1, ly0, ly1 = math.log(x_lo), math.log(x_hi), math.log(y_lo), math.log(y_hi)
    xs, ys = _span(x_lo, x_hi, _NX), _span(y_lo, y_hi, _NY)
    grid = [[_fastest(times, xv, yv) for xv in xs] for yv in ys]

    def crossing(a: int, b: int, fixed_other: float, lo: float, hi: float, along_x: bool) -> float:
        ta, tb = by_index[a], by_index[b]

        def diff(v: float) -> float:
            return (
                ta.at(v, fixed_other) - tb.at(v, fixed_other)
                if along_x
                else ta.at(fixed_other, v) - tb.at(fixed_other, v)
            )

        low, high = math.log(lo), math.log(hi)
        d_low = diff(lo)
        for _ in range(40):
            m = (low + high) / 2
            dm = diff(math.exp(m))
            if (dm < 0) == (d_low < 0):
                low, d_low = m, dm
            else:
                high = m
        return math.exp((low + high) / 2)

    top = 16 + TITLE + 12 + SMALL + _TOP_PAD

    def px(v: float) -> float:
        return _LEFT + (math.log(v) - lx0) / (lx1 - lx0) * _PLOT_W

    def py(v: float) -> float:
        return top + (ly1 - math.log(v)) / (ly1 - ly0) * _PLOT_H

    row_h = _PLOT_H / _NY
    runs: list[tuple[float, float, float, int]] = []  # (x0, x1, row top, strategy) in pixels
    # boundary pieces: (a, b, the part of a's time and of b's that are largest there) -> crossings
    points: dict[tuple[int, int, int, int], list[tuple[str, int, float, float]]] = {}
    for j, yv in enumerate(ys):
        row = grid[j]
        start = _LEFT
        for i in range(_NX):
            if i + 1 < _NX and row[i] != row[i + 1]:
                xb = crossing(row[i], row[i + 1], yv, xs[i], xs[i + 1], True)
                runs.append((start, px(xb), top + (_NY - 1 - j) * row_h, row[i]))
                start = px(xb)
                piece = _piece(by_index, row[i], row[i + 1], (xb, yv))
                points.setdefault(piece, []).append(("row", j, px(xb), py(yv)))
        runs.append((start, _LEFT + _PLOT_W, top + (_NY - 1 - j) * row_h, row[-1]))
    for i, xv in enumerate(xs):
        for j in range(_NY - 1):
            a, b = grid[j][i], grid[j + 1][i]
            if a != b:
                yb = crossing(a, b, xv, ys[j], ys[j + 1], False)
                piece = _piece(by_index, a, b, (xv, yb))
                points.setdefault(piece, []).append(("col", i, px(xv), py(yb)))
    counts = {i: sum(r.count(i) for r in grid) for i in indexes}
    on_map = [i for i in indexes if counts[i]] + [i for i in indexes if not counts[i]]
    colour = {i: _COLOURS[n % len(_COLOURS)] for n, i in enumerate(on_map)}
    tint = {i: _tint(colour[i], 0.3) for i in indexes}

    # -- drawing
    c_ = Canvas(0, 0)
    hw = c.hardware.label if c.hardware is not None else words("figure.given_constants", language)
    heading = title if title is not None else words("figure.map.title", language, x=xs_, y=ys_, matmul=c.plan.matmul)
    others = [f"{d}={v}" for d, v in c.plan.sizes if v.is_number]
    others += [f"{s}={_number_text(v)}" for s, v in sorted(fixed.items(), key=lambda kv: str(kv[0]))
               if not (c.hardware is not None and s in dict(c.hardware.constants(c.plan.dtype)))]  # fmt: skip
    rule = words("figure.time_sum" if c.serial else "figure.time_max", language)
    sub = words(
        "figure.map.subtitle_sizes" if others else "figure.map.subtitle",
        language,
        hw=hw,
        mesh=c.plan.mesh,
        sizes=", ".join(others),
        dtype=c.plan.dtype,
        rule=rule,
    )
    c_.text(16, 16 + TITLE, heading, size=TITLE, font_weight="bold", fill=INK)
    c_.text(16, 16 + TITLE + 12 + SMALL, sub, size=SMALL, fill=MUTED)
    width = max(_LEFT + _PLOT_W + 28, 32 + text_width(heading, TITLE, bold=True), 32 + text_width(sub, SMALL))

    c_.open("g", cls="regions")
    for x0, x1, yt, who in runs:
        if x1 > x0:
            c_.rect(x0, yt, x1 - x0, row_h + 0.3, fill=tint[who], data_strategy=who)
    c_.close("g")

    # ticks: powers of two for sizes, of ten for constants
    for s, lo, hi, horizontal in ((xs_, x_lo, x_hi, True), (ys_, y_lo, y_hi, False)):
        base = 2.0 if _is_size(s) else 10.0
        e0, e1 = math.ceil(math.log(lo, base) - 1e-9), math.floor(math.log(hi, base) + 1e-9)
        step = max(1, math.ceil((e1 - e0 + 1) / (10 if horizontal else 8)))
        for e in range(e0, e1 + 1, step):
            v = base**e
            label = _size_tick(v) if base == 2.0 else f"1e{e}"
            if horizontal:
                c_.line(px(v), top, px(v), top + _PLOT_H, stroke=GRID, stroke_width=0.8, stroke_opacity=0.8)
                c_.text(px(v), top + _PLOT_H + 16, label, size=SIZE, anchor="middle", fill=INK)
            else:
                c_.line(_LEFT, py(v), _LEFT + _PLOT_W, py(v), stroke=GRID, stroke_width=0.8, stroke_opacity=0.8)
                c_.text(_LEFT - 8, py(v) + 4, label, size=SIZE, anchor="end", fill=INK)
    c_.rect(_LEFT, top, _PLOT_W, _PLOT_H, fill="none", stroke=INK, stroke_width=1.2, cls="frame",
            data_x=f"{x_lo!r} {x_hi!r}", data_y=f"{y_lo!r} {y_hi!r}")  # fmt: skip
    c_.text(
        _LEFT + _PLOT_W / 2,
        top + _PLOT_H + 38,
        words("figure.log_scale", language, symbol=xs_),
        size=SIZE,
        anchor="middle",
        fill=INK,
    )
    mid = top + _PLOT_H / 2
    c_.text(22, mid, words("figure.log_scale", language, symbol=ys_), size=SIZE, anchor="middle", fill=INK,
            transform=f"rotate(-90 22 {mid:.2f})")  # fmt: skip

    # boundaries: neighbouring crossings joined, row to row and column to column
    cell_w = _PLOT_W / _NX
    order = sorted(points, key=lambda k: (k[:2], min(p[2] for p in points[k])))
    badges = []
    for n, piece in enumerate(order):
        pts, pair = points[piece], piece[:2]
        d = []
        for kind, limit in (("row", 4 * cell_w), ("col", 4 * row_h)):
            lanes: dict[int, list[tuple[float, float]]] = {}
            for k, lane, qx, qy in pts:
                if k == kind:
                    lanes.setdefault(lane, []).append((qx, qy))
            for lane, here in sorted(lanes.items()):
                for qx, qy in here:
                    d.append(f"M{qx:.2f} {qy:.2f}")
                    nxt = lanes.get(lane + 1, [])
                    near = min(nxt, key=lambda p: abs(p[0] - qx) + abs(p[1] - qy), default=None)
                    if near is not None and abs(near[0] - qx) + abs(near[1] - qy) <= limit:
                        d.append(f"L{near[0]:.2f} {near[1]:.2f}")
                    else:
                        d.append(f"L{qx + 0.01:.2f} {qy:.2f}")
        c_.path(" ".join(d), fill="none", stroke=INK, stroke_width=1.6, stroke_linecap="round",
                cls="boundary", data_boundary=f"{pair[0]}|{pair[1]}")  # fmt: skip
        # the badge sits at the crossing nearest the middle of the boundary's points
        cx_ = sum(p[2] for p in pts) / len(pts)
        cy_ = sum(p[3] for p in pts) / len(pts)
        kind, lane, bx, by = min(pts, key=lambda p: (p[2] - cx_) ** 2 + (p[3] - cy_) ** 2)
        badges.append((n, piece, bx, by))
    for n, _, bx, by in badges:
        c_.circle(bx, by, 9, fill="#ffffff", stroke=INK, stroke_width=1.2, cls="badge")
        c_.text(bx, by + 4, str(n + 1), size=SMALL, anchor="middle", font_weight="bold", fill=INK)

    # the number of each strategy in the middle of its largest stretch of cells
    for i in indexes:
        if counts[i] < 0.01 * _NX * _NY:
            continue
        cells = [(xs[a], ys[b]) for b in range(_NY) for a in range(_NX) if grid[b][a] == i]
        gx = math.exp(sum(math.log(p[0]) for p in cells) / len(cells))
        gy = math.exp(sum(math.log(p[1]) for p in cells) / len(cells))
        if grid[min(range(_NY), key=lambda b: abs(ys[b] - gy))][min(range(_NX), key=lambda a: abs(xs[a] - gx))] != i:
            gx, gy = cells[len(cells) // 2]
        c_.text(px(gx), py(gy) + 8, str(i), size=24, anchor="middle", font_weight="bold", fill=colour[i],
                stroke="#ffffff", stroke_width=3, paint_order="stroke", cls="region-label")  # fmt: skip

    # legend and notes
    y_ = top + _PLOT_H + 64
    total = _NX * _NY
    for i in indexes:
        name = dict(c.strategies)[i].name
        share = counts[i] / total
        c_.rect(16, y_ - 11, 22, 14, fill=tint[i] if counts[i] else "#ffffff", stroke=colour[i] if counts[i] else MUTED,
                stroke_width=1.2)  # fmt: skip
        text = f"{i}. {name}"
        c_.text(46, y_, text, size=SIZE, fill=INK)
        share_text = (
            words("figure.map.share", language, share=share) if counts[i] else words("figure.map.nowhere", language)
        )
        c_.text(46, y_ + SMALL + 5, share_text, size=SMALL, fill=MUTED)
        width = max(width, 62 + text_width(text, SIZE))
        y_ += SIZE + SMALL + 14
    fixed_exprs_all = dict(fixed_exprs)
    notes = []
    meetings = []
    for n, piece, bx, by in badges:
        pair = piece[:2]
        on_boundary = {**fixed, xs_: math.exp(lx0 + (bx - _LEFT) / _PLOT_W * (lx1 - lx0)),
                ys_: math.exp(ly1 - (by - top) / _PLOT_H * (ly1 - ly0))}  # fmt: skip
        symbolic, numeric = _formula(by_index[pair[0]], by_index[pair[1]], piece[2:], xs_, ys_, domain,
                                     fixed_exprs_all, on_boundary)  # fmt: skip
        line = f"{_CIRCLED[n] if n < len(_CIRCLED) else n + 1} {pair[0]} | {pair[1]}: {symbolic}"
        if numeric is not None:
            line += words("figure.map.on_chip", language, hw=hw, numeric=numeric)
        notes.append(line)
        meetings.append(words("figure.map.meet", language, a=pair[0], b=pair[1], where=numeric or symbolic))
    notes.append(words("figure.map.boundaries", language))
    notes.append(words("figure.map.ties", language))
    for note in notes:
        c_.text(16, y_, note, size=SMALL, fill=INK if note[:1] in _CIRCLED else MUTED, cls="note")
        width = max(width, 32 + text_width(note, SMALL))
        y_ += SMALL + 7
    c_.grow(width, y_ + 8)

    shares = [words("figure.map.alt_share", language, index=i, name=dict(c.strategies)[i].name, share=counts[i] / total)
              for i in indexes if counts[i]]  # fmt: skip
    alt = words(
        "figure.map.alt",
        language,
        count=len(indexes),
        matmul=c.plan.matmul,
        x=xs_,
        x_lo=_value_tick(xs_, x_lo),
        x_hi=_value_tick(xs_, x_hi),
        y=ys_,
        y_lo=_value_tick(ys_, y_lo),
        y_hi=_value_tick(ys_, y_hi),
        hw=hw,
        facts=clauses(shares + meetings, language),
    )
    return Figure(c_.document(title=heading, alt=alt), heading, alt)


def _value_tick(s: sympy.Expr, v: float) -> str:
    """A range's end in words: ``16K`` for a dim or an axis, ``1e+10`` for a chip's constant."""
    return _size_tick(v) if _is_size(s) else f"{v:.3g}"


def _size_tick(v: float) -> str:
    """``256``, ``16K``, ``1M`` for powers of two; a number otherwise."""
    n = round(v)
    if abs(v - n) < 1e-9 * max(1.0, v):
        for power, unit in ((30, "G"), (20, "M"), (10, "K")):
            if n >= 2**power and n % 2**power == 0:
                return f"{n // 2**power}{unit}"
        return f"{n:,}"
    return sig(v, 3)

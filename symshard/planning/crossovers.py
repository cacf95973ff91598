"""Crossover conditions between strategies: when is a plan communication- or memory-bound, which
strategies can be the fastest at all, and where each one is.

The strategies are the plan's, numbered as ``symshard matmul`` numbers them for the same options. Each
one's time is ``max(T_math, T_hbm, T_comms)`` (bandwidth-bound collective times, as the chapter reasons;
``T_hbm`` the local product's HBM traffic, left out when the plan leaves it out, as the chapter does). For
a chosen symbol ``x`` (a dim such as B, an axis size, a hardware constant) :func:`compare`

1. keeps the strategies that can be the fastest anywhere: those no other strategy is at least as fast
   as everywhere it is valid (decided exactly on the sums of monomials the times are,
   :mod:`symshard.algebra.monomials`), then those a sweep over sample points finds fastest somewhere;
2. finds their *neighbours*, the pairs whose regions touch, from the same sweep (lines along every
   symbol through many points; a strategy whose conditions hold at a sample point where another is
   faster gets that one as a neighbour too, until the regions agree with every sample);
3. derives each strategy's regime: communication-bound iff ``T_comms > T_math``, the chapter's question
   (``B < C/W_ici``), and memory-bound where ``T_hbm`` is the largest term; and, for each pair of
   neighbours, when each is faster, in the fewest relations (each term of one below some term of the
   other), every relation solved for ``x`` and simplified in the book's form
   (:mod:`symshard.algebra.inequalities`): no part implied by another, bounds merged;
4. describes each strategy's region: where it beats each of its neighbours.

With ``strategies`` listed explicitly, every pair of them is compared; with HBM left out, as the chapter's
case analysis: one case per combination of regimes, the active terms compared. A condition is a
:class:`~symshard.algebra.conditions.Condition` (a union of labelled cases) or
:class:`~symshard.algebra.conditions.Clauses` (a conjunction of them), printable as text and LaTeX,
evaluable at a point and on a named chip (``C/W_ici`` becomes 2550 on a TPU v5p).

This module holds :func:`compare` and its limits; the parts it drives sit beside it:
:mod:`~symshard.planning.crossover_costs` (the times as compared, on sums of monomials),
:mod:`~symshard.planning.crossover_sampling` (steps 1 and 2: who can be the fastest, and the
neighbours), :mod:`~symshard.planning.crossover_conditions` (step 3: the conditions, solved) and
:mod:`~symshard.planning.crossover_results` (the values it answers with, re-exported here:
:class:`~symshard.planning.crossover_results.Comparison`, :class:`~symshard.planning.crossover_results.Regime`,
:class:`~symshard.planning.crossover_results.PairComparison`, :class:`~symshard.planning.crossover_results.Region`).

Examples:
    >>> c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies=[2, 1])
    >>> c.regimes[1].communication_bound.text()
    'B < C/W_ici'
    >>> compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies="1,2", hardware="v5p").pairs[0].numeric_a_wins.text()
    '(D > 5100) or (271·B·F < 9·B·D + 9·D·F) or (B < D/2)'
    >>> compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", strategies="1,2", hbm=False).pairs[0].a_wins.cases[0].text()
    'D < 2·C·|X|/W_ici and B < C/W_ici and B < D/2'
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import sympy

from ..algebra.conditions import Case, Clauses, Condition
from ..algebra.domains import Domain
from ..algebra.solving import solve_less
from ..costs.placement import ShapeLike
from ..errors import PlanError, TooLargeError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..machines.presets import hardware as lookup_hardware
from ..memo import memoized
from ..messages import say
from ..notation.einsums import Matmul, matmul
from .crossover_conditions import beats, labelled_condition, less_cases, regime_cases, wins_by_regime
from .crossover_costs import compared_costs, joint_domain
from .crossover_results import Comparison, OnChip, PairComparison, Regime, Region
from .crossover_sampling import consistent_pairs, dominated_strategies, sweep
from .planner import plan
from .strategies import Plan, Strategy

__all__ = [
    "MAX_COMPARED",
    "MAX_PAIRED",
    "Case",
    "Comparison",
    "Condition",
    "PairComparison",
    "Regime",
    "Region",
    "check_compared",
    "compare",
    "solve_less",
]

MAX_COMPARED = 500
"""The most strategies :func:`compare` looks for winners among (``strategies='all'`` or the plan's): the
four-axis plan of the README's matmul has 441, compared in about twenty seconds; the work grows faster
than their number (every strategy is checked against every other)."""

MAX_PAIRED = 16
"""The most strategies :func:`compare` takes by number, every pair of them compared case by case (120
pairs, about ten seconds on a plan of three axes)."""


def _resolve_symbol(name: str | sympy.Symbol, candidates: Sequence[tuple[sympy.Expr, ...]]) -> sympy.Symbol:
    """The symbol ``name`` stands for among the symbols of the strategies' cost formulas."""
    if isinstance(name, sympy.Symbol):
        return name
    pool: dict[str, sympy.Symbol] = {}
    for formulas in candidates:
        for e in formulas:
            for f in e.free_symbols:
                pool.setdefault(f.name, f)
    key = name.strip()
    for cand in (key, f"|{key}|", key.strip("|")):
        if cand in pool:
            return pool[cand]
    raise PlanError(
        say("'{name}' does not appear in the strategies' costs", name=name),
        hint=say(
            "solve for one of {names} (leave it out of --shape so it stays symbolic)", names=", ".join(sorted(pool))
        ),
    )


def _parts(strategies: Sequence[int | str] | str | None) -> list[int | str] | None:
    """The strategies asked for by number or name, read without the plan; None for ``'all'`` or the plan's."""
    if strategies is None or (isinstance(strategies, str) and strategies.strip().lower() in ("", "all")):
        return None
    parts: list[int | str] = []
    items = strategies.split(",") if isinstance(strategies, str) else list(strategies)
    for item in items:
        if isinstance(item, str):
            text = item.strip()
            if not text:
                continue
            if text.isdigit():
                parts.append(int(text))
                continue
            if isinstance(strategies, str) and not any(ch in text for ch in "→(_"):
                raise PlanError(
                    say("strategies takes strategy numbers (or names), not '{text}'", text=text),
                    hint=say("give the numbers the plan lists: strategies=[1, 2], '1,2' or 'all'"),
                )
            parts.append(text)
        elif isinstance(item, int) and not isinstance(item, bool):
            parts.append(item)
        else:
            raise PlanError(
                say("strategies takes strategy numbers (or names), not {item}", item=repr(item)),
                hint=say("give the numbers the plan lists: strategies=[1, 2], '1,2' or 'all'"),
            )
    return parts


def _picked(
    strategies: Sequence[int | str] | str | None, parts: list[int | str] | None, p: Plan
) -> tuple[str, list[tuple[int, Strategy]]]:
    """How to compare (``explicit``, ``all`` or ``best``) and the numbered candidates."""
    if parts is None and isinstance(strategies, str) and strategies.strip().lower() == "all":
        every = p.all_strategies()
        check_compared(str(p.matmul), "all", len(every))  # before each strategy is built
        return "all", list(enumerate(every, 1))
    if parts is None:
        return "best", list(enumerate(p.strategies, 1))
    out: list[tuple[int, Strategy]] = []
    for key in parts:
        s = p.strategy(key)  # range check; a name may be a strategy the plan does not list
        if isinstance(key, int):
            number = key
        else:
            listed = [i for i, t in enumerate(p.strategies, 1) if t == s]
            number = listed[0] if listed else len(p.strategies) + 1 + len(out)
        out.append((number, s))
    return "explicit", out


@memoized(maxsize=1024)
def compare(
    mm: Matmul | Plan | str,
    symbol: str | sympy.Symbol,
    *,
    strategies: Sequence[int | str] | str | None = None,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    dtype: str = "bf16",
    hardware: Hardware | str | None = None,
    model: str = "book",
    overlap: bool | None = None,
    hbm: bool = True,
) -> Comparison:
    """Derive when each strategy is communication-bound, which strategies can be the fastest, and where.

    The formulas stay symbolic in the hardware constants; with ``hardware`` the chip's wiring applies
    to the mesh and each condition is also given with its constants substituted (``B < 2550`` on a
    TPU v5p).

    Args:
        mm: the matmul (or an already symbolic :class:`~symshard.planning.strategies.Plan`).
        symbol: what to solve for: a dim (``"B"``), an axis (``"X"`` for ``|X|``), a constant.
        strategies: which strategies to compare. Default: the plan's (those that can win somewhere):
            those that can be the fastest are kept, and each is compared with its neighbours. ``'all'``:
            the same over every valid strategy. Numbers or names (a list, or text such as ``'1,2'``):
            those strategies, every pair compared.
        overlap: time as ``max(T_math, T_hbm, T_comms)`` (True, the chapter's default) or
            ``max(T_math, T_hbm) + T_comms`` (False); None takes the plan's setting.
        hbm: whether ``T_hbm`` (the local product reading and writing HBM) counts, as ``plan`` and
            ``symshard matmul`` count it by default: the plan compare makes is theirs, the same
            strategies numbered alike. False compares ``T_math`` with ``T_comms`` alone, as the chapter
            reasons (the plan made then leaves HBM out too; a plan given keeps its strategies and
            their numbers either way, and one that leaves HBM out is compared without it).

    Raises:
        PlanError: the symbol does not appear in the costs, or a strategy number is out of range.
    """
    hw = lookup_hardware(hardware) if hardware is not None else None
    parts = _parts(strategies)
    if parts is not None:
        check_compared("", "explicit", len(parts))  # before the plan is made
    if isinstance(mm, Plan):
        p = mm
    else:
        mesh_ = mesh
        if mesh is not None and not isinstance(mesh, Mesh) and hw is not None:
            mesh_ = Mesh(mesh, hardware=hw)
        elif mesh is None and hw is not None:
            m0 = plan(mm, None, shape, dtype=dtype, model=model, hbm=hbm).mesh
            mesh_ = Mesh({a.name: a.size for a in m0.axes}, hardware=hw)
        if parts is None and isinstance(strategies, str) and strategies.strip().lower() == "all":
            every = plan(mm, mesh_, shape, dtype=dtype, model=model, all=True, hbm=hbm).strategies  # a listing is quick
            check_compared(str(matmul(mm) if isinstance(mm, str) else mm), "all", len(every))
        # the plan symshard matmul lists for the same options: the same strategies, numbered alike
        p = plan(mm, mesh_, shape, dtype=dtype, model=model, hbm=hbm)
    mode, numbered = _picked(strategies, parts, p)
    if mode == "best":
        check_compared(str(p.matmul), mode, len(numbered))
    if not numbered:
        raise PlanError(
            say("there is nothing to compare: no strategy was picked"),
            hint=say("e.g. {example}", example="strategies=[1, 2]"),
        )
    # each strategy's formulas, written once: T_math, T_comms bandwidth-bound, T_hbm (where it counts)
    counted = p.hbm and hbm  # T_hbm where the plan counts it and it is not left out here
    formulas = {i: (s.compute_time, s.bandwidth_comm_time, *((s.hbm_time,) if counted else ())) for i, s in numbered}
    x = _resolve_symbol(symbol, list(formulas.values()))
    serial = not (p.overlap if overlap is None else overlap)
    values = {k: v for k, v in (dict(hw.constants(p.dtype)) if hw is not None else {}).items() if k != x}

    atoms: set[sympy.Expr] = {x}
    for exprs in formulas.values():
        for e in exprs:
            atoms |= e.free_symbols
    base = Domain.around(atoms)
    costs = {i: compared_costs(s, base, p, formulas[i]) for i, s in numbered}
    by_index = dict(numbered)

    dominated: dict[int, int] = {}
    neighbours: set[tuple[int, int]]
    if mode == "explicit":
        shown = sorted({i for i, _ in numbered})
        neighbours = {(min(a, b), max(a, b)) for a, b in itertools.combinations(shown, 2)}
        winners: list[int] = []
    else:
        needs = {i: frozenset(s.divisibility) for i, s in numbered}
        dominated = dominated_strategies(costs, needs, serial, {k: float(v) for k, v in values.items()})
        alive = {i: costs[i].time(serial) for i in costs if i not in dominated}
        fixed = {k: float(v) for k, v in values.items()}
        ordered_atoms = sorted(atoms, key=str)
        found, pairs, seen, order = sweep(alive, ordered_atoms, fixed, [c.domain for c in costs.values()])
        if not found:  # every sample a tie: the first strategy stands for them all
            found = {min(alive)}
        pairs = consistent_pairs(order, found, {pr for pr in pairs if pr[0] in found and pr[1] in found}, seen)
        for i in alive:
            if i not in found:
                dominated[i] = 0  # never the fastest at a sample point (nothing proved at least as fast)
        winners = sorted(found)
        shown = winners if mode == "best" else [i for i, _ in numbered]
        neighbours = pairs

    chip = OnChip(values, x) if values else None
    cases_by_index = {}
    regimes = []
    for i in shown:
        c = costs[i]
        if mode == "explicit" and not counted:
            cases_by_index[i] = regime_cases(c, x, c.domain)
        # the chapter's question: is T_comms above T_math (B < C/W_ici)
        comm_cases = less_cases(c.math, c.comms, x, c.domain, True) if c.comms else []
        cond = labelled_condition(say("communication-bound"), comm_cases, c.domain)
        memory = None
        if c.hbm is not None:  # T_hbm the largest of the three: memory-bound whatever the other two say
            above = [less_cases(c.math, c.hbm, x, c.domain, True)]
            above += [less_cases(part, c.hbm, x, c.domain, False) for part in c.comms]
            memory = Clauses(tuple(labelled_condition(say("memory-bound"), cs, c.domain) for cs in above), c.domain)
            memory = memory.simplified()
        regimes.append(
            Regime(
                i,
                by_index[i],
                cond,
                cond.subs(values, x) if values else None,
                memory,
                memory.subs(values, x) if values and memory is not None else None,
            )
        )

    pairs_out = []
    for a, b in sorted(neighbours):
        dom = joint_domain(costs[a].domain, costs[b].domain)
        a_wins: Condition | Clauses
        b_wins: Condition | Clauses
        if mode == "explicit" and not counted:  # the book's case analysis: a case per combination of regimes
            ra, rb = cases_by_index[a], cases_by_index[b]
            a_wins = wins_by_regime(costs[a], costs[b], a, b, x, serial, dom, ra, rb)
            b_wins = wins_by_regime(costs[b], costs[a], b, a, x, serial, dom, rb, ra)
        else:  # neighbours, or any pair once T_hbm counts (nine regime combinations): the fewest relations
            a_wins = beats(costs[a], costs[b], x, serial, dom)
            b_wins = beats(costs[b], costs[a], x, serial, dom)
        pairs_out.append(PairComparison(a, b, a_wins, b_wins, chip))
    if mode == "explicit":
        pairs_out = _in_given_order(pairs_out, [i for i, _ in numbered])

    regions = []
    for i in winners:
        mine: list[Condition] = []
        nbrs = []
        for pr in pairs_out:
            if i in (pr.a, pr.b):
                nbrs.append(pr.b if pr.a == i else pr.a)
                won = pr.a_wins if pr.a == i else pr.b_wins
                mine.extend(won.parts if isinstance(won, Clauses) else (won,))
        unique = list({c.key(): c for c in mine}.values())
        condition = Clauses(tuple(unique), costs[i].domain).simplified()
        regions.append(Region(i, by_index[i], tuple(nbrs), condition, chip))
    assumptions = (
        say("collective times are bandwidth-bound (hop latency left out), as the chapter reasons"),
        _time_said(serial, counted),
        say("every mesh axis has at least 2 devices (signs of |X| - 1 and the like are decided with that)"),
        say("solved for {symbol} > 0; other symbols are positive", symbol=str(x)),
        say("every dim is at least the number of devices that shard it (it is a multiple of it)"),
        *p.assumptions,
    )
    return Comparison(
        p,
        x,
        tuple(regimes),
        tuple(pairs_out),
        hw,
        assumptions,
        tuple(numbered),
        tuple(regions),
        tuple(sorted(dominated.items())),
        base,
        mode,
        serial,
        counted,
    )


def _time_said(serial: bool, hbm: bool) -> str:
    """How a strategy's time is weighed, in the words of the comparison's header."""
    if hbm:
        return (
            say("time = max(T_math, T_hbm) + T_comms (no overlap)")
            if serial
            else say("time = max(T_math, T_hbm, T_comms)")
        )
    return say("time = T_math + T_comms (no overlap)") if serial else say("time = max(T_math, T_comms)")


def check_compared(product: str, mode: str, count: int) -> None:
    """Refuse, before any work, more strategies than :data:`MAX_COMPARED` to find winners among (``mode``
    ``'all'`` or ``'best'``, of the matmul ``product``), or more than :data:`MAX_PAIRED` to compare pair by
    pair (``'explicit'``).

    Raises:
        TooLargeError: too many, with the number and how to pick fewer.

    Examples:
        >>> check_compared("X[B, D] · Y[D_X, F] -> Z[B, F]", "explicit", 3)
    """
    if mode == "explicit" and count > MAX_PAIRED:
        raise TooLargeError(
            say(
                "comparing {count} {count:strategy|strategies} pair by pair is {pairs} comparisons, more than "
                "compare takes ({limit} {limit:strategy|strategies})",
                count=count,
                pairs=f"{count * (count - 1) // 2:,}",
                limit=MAX_PAIRED,
            ),
            hint=say("pick fewer strategies (--strategies 1,2), or leave them out to compare those that can win"),
        )
    if mode != "explicit" and count > MAX_COMPARED:
        raise TooLargeError(
            say(
                "{matmul} has {count} {count:strategy|strategies} to compare, more than compare takes ({limit})",
                matmul=product,
                count=f"{count:,}",
                limit=f"{MAX_COMPARED:,}",
            ),
            hint=say("compare only those that can win (without --strategies all), pick some (--strategies 1,2), "
                     "or use fewer mesh axes")
            if mode == "all"
            else say("pick some of them (--strategies 1,2), or use fewer mesh axes"),
        )  # fmt: skip


def _in_given_order(pairs: list[PairComparison], order: list[int]) -> list[PairComparison]:
    """Pairs of explicitly listed strategies in the order of the list (``[2, 1]``: the pair (2, 1))."""
    out = []
    for a, b in itertools.combinations(order, 2):
        pr = next(p for p in pairs if {p.a, p.b} == {a, b})
        if pr.a != a:
            pr = PairComparison(a, b, pr.b_wins, pr.a_wins, pr.chip)
        out.append(pr)
    return out

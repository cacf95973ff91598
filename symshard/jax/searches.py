"""The searches for XLA's plan where no listed strategy has it: by its collectives, among XLA's further
orders, step by step through every route of the algebra, and with the mesh axes XLA splits in parts.

:func:`matching_strategy` asks a plan for its fastest strategy with exactly XLA's collectives and dot
FLOPs (:meth:`~symshard.planning.planner.Plan.matching`) before a deadline; :func:`in_time` turns a
search that runs past it into the name of that search, :func:`stopped_clause` into a reason's clause.
:func:`refine` plans the matmul again with the axes XLA splits in parts
(:mod:`symshard.machines.subaxes`), reads XLA's module on that mesh, looks for its collectives there
(listed, searched, step by step) and runs the strategy found (:class:`~symshard.jax.results.Refinement`).

In :mod:`symshard.jax` it sits on :mod:`.matching` and :mod:`.running`, below :mod:`.verification`.
No JAX at import time.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable

from ..costs.collectives import CollectiveExpr, DynamicSlice
from ..errors import TimeLimitError
from ..messages import Message, say
from ..notation.einsums import Matmul
from ..planning.planner import Plan, Strategy, plan
from .execution import Execution
from .matching import compare_with_kind
from .results import Refinement, clauses, search_words
from .running import attempt
from .xla_plans import Signature, XlaPlan, reread, signature, signature_received, sizes_of, step_signature

__all__ = ["REFINED_AXES", "in_time", "matching_strategy", "refine", "stopped_clause"]


def stopped_clause(stopped: str) -> Message:
    """The clause a reason gets when the time limit cut the search ``stopped`` short."""
    return say("the search through {search} stopped at the time limit", search=search_words(stopped))


def in_time(search: Callable[[], Strategy | None], name: str) -> tuple[Strategy | None, str]:
    """``search()``'s strategy and ``""``, or None and ``name`` when the search ran past its deadline."""
    try:
        return search(), ""
    except TimeLimitError:
        return None, name


def matching_strategy(
    p: Plan, x: XlaPlan, *, further: bool = False, any_route: bool = False, deadline: float | None = None
) -> Strategy | None:
    """The fastest of ``p``'s strategies (with ``further``, also of XLA's further orders; with ``any_route``,
    of the strategies whose legs are any routes of symshard's collectives) with exactly XLA's collectives
    and dot FLOPs, found by a search for those collectives rather than a listing.

    Raises:
        TimeLimitError: the search was still going at ``deadline`` (a ``time.perf_counter()`` instant).
    """
    if any(c.axes is None for c in x.collectives):
        return None
    sizes = {k: int(v) for k, v in p.sizes}
    axes = {a.name: int(a.size) for a in p.mesh.axes}

    def steps_signature(steps: tuple[CollectiveExpr, ...]) -> Signature:
        return tuple(sorted(step_signature(e, sizes, axes) for e in steps if not isinstance(e.op, DynamicSlice)))

    kinds = Counter(c.kind for c in x.collectives)
    found = p.matching(
        steps_signature, x.signature, further=further, any_route=any_route, kinds=kinds, deadline=deadline
    )
    return next((s for s in found if int(s.raw_product_flops) == x.dot_flops), None)


def _split_axes(p: Plan, x: XlaPlan) -> dict[str, tuple[int, ...]]:
    """Each mesh axis XLA's plan splits, with the sizes of its parts, major first: the cuts of every
    sub-axis ``X:(pre)sub`` it uses (after the ``pre`` major devices' worth, and after ``pre*sub``)
    cut the axis into consecutive parts (named ``X1, X2, ...`` by :func:`symshard.machines.subaxes.split_mesh`)."""
    sizes = {a.name: int(a.size) for a in p.mesh.axes}
    out: dict[str, tuple[int, ...]] = {}
    for parent in sorted({s.split(":")[0] for s in x.sub_axes}):
        n = sizes[parent]
        cuts = {1, n}
        for s in x.sub_axes:
            head, _, rest = s.partition(":(")
            if head != parent:
                continue
            pre, _, sub = rest.partition(")")
            cuts |= {int(pre), int(pre) * int(sub)}
        ordered = sorted(cuts)
        if any(b % a for a, b in itertools.pairwise(ordered)):
            return {}
        out[parent] = tuple(b // a for a, b in itertools.pairwise(ordered))
    return out


REFINED_AXES = 4
"""The most axes a mesh with axes in parts may have for :func:`~symshard.jax.verification.verify` to list
and rank its plan: 2-D arrays on four axes list in seconds (a few hundred thousand strategies), 3-D ones on
four axes millions, so beyond three axes only a 2-D product's plan is listed; the others are searched for
XLA's collectives."""


def _listable(p: Plan, x: XlaPlan) -> bool:
    """Whether the plan with the axes ``x`` splits in parts is small enough to list and rank: below
    :data:`REFINED_AXES` mesh axes, or that many with 2-D arrays; beyond, it is searched instead."""
    split = _split_axes(p, x)
    count = sum(len(split.get(a.name, (0,))) for a in p.mesh.axes)
    dims = max(len(a.dims) for a in (p.matmul.lhs, p.matmul.rhs))
    return count < REFINED_AXES or (count == REFINED_AXES and dims <= 2)


def refine(
    p: Plan,
    x: XlaPlan,
    *,
    model: str = "book",
    fused: bool = True,
    memo: dict | None = None,
    deadline: float | None = None,
) -> Refinement | None:
    """``p``'s matmul checked with the mesh axes XLA's plan ``x`` splits in parts (see :class:`Refinement`);
    None when ``x`` uses no sub-axes or they do not cut their axes into parts. A plan too long to list
    (:func:`_listable`) is searched for XLA's collectives instead, and its match is not ranked. A search
    still going at ``deadline`` (a ``time.perf_counter()`` instant) stops there, and the refinement says
    which (:attr:`Refinement.stopped`)."""
    split = _split_axes(p, x)
    if not split:
        return None
    listed = _listable(p, x)
    mm = p.matmul
    out = mm.out if mm.out is not None else p.strategies[0].output
    sizes = ",".join(f"{k}={v}" for k, v in p.sizes)
    # the plan on the mesh as written, with the split axes usable in parts; XLA's orders are the mesh's
    rp = plan.__wrapped__(  # type: ignore[attr-defined]
        Matmul(mm.lhs, mm.rhs, out), p.mesh, sizes, dtype=p.dtype, hardware=p.hardware, model=model, routes="xla",
        split=split, all=listed,
    )  # fmt: skip
    # the ranking `matmul --split ... --all` gives: the best and the match's rank are said in it
    ranking = plan.__wrapped__(  # type: ignore[attr-defined]
        Matmul(mm.lhs, mm.rhs, out), p.mesh, sizes, dtype=p.dtype, hardware=p.hardware, model=model, split=split,
        all=listed,
    )  # fmt: skip
    shape = [(a.name, int(a.size)) for a in rp.mesh.axes]
    mesh_text = ",".join(f"{n}={s}" for n, s in shape)
    rx = reread(x, shape, p.dtype)
    kind: Message | None
    stopped = ""
    equivalent: Strategy | None = None
    if listed:
        found = compare_with_kind(rp, rx, refined=True, number=lambda _, s: ranking.position(s)[0])
        strategy, reason, kind, equivalent = found.strategy, found.reason, found.kind, found.equivalent
        count = len(rp.strategies)
        rank = ranking.position(strategy)[0] if strategy is not None else None
    else:
        rank, count, reason, kind = None, rp.source.count(), "", None
        strategy, stopped = in_time(lambda: matching_strategy(rp, rx, deadline=deadline), "search")
    searched = not listed
    routed = False
    if strategy is None and not stopped:
        # XLA's further orders, which a plan with axes in parts does not list (see planner._wide)
        strategy, stopped = in_time(lambda: matching_strategy(rp, rx, further=True, deadline=deadline), "further")
        searched = searched or strategy is not None
        if strategy is None and not stopped:
            # any route of symshard's collectives, found step by step from XLA's
            strategy, stopped = in_time(lambda: matching_strategy(rp, rx, any_route=True, deadline=deadline), "routes")
            routed = strategy is not None
            searched = searched or routed
        if strategy is not None:
            rank, reason, kind, equivalent = None, "", None, None
        elif not listed and not stopped:
            kind = say("no strategy with exactly XLA's collectives and FLOPs, searched by its collectives")
            reason = kind
    if stopped:
        kind = say("the search stopped at the time limit")
        reason = clauses([c for c in (reason, stopped_clause(stopped)) if c])
    executions: tuple[Execution, ...] = ()
    if strategy is not None:
        key = ("refined mesh", mesh_text)
        own = None if memo is None else memo.setdefault(key, {})
        done = attempt(rp, strategy, fused=fused, memo=own)
        executions = (done,) if isinstance(done, Execution) else ()
    return Refinement(
        label="; ".join(s.label for s in rp.split),
        mesh=mesh_text,
        matmul=str(rp.matmul),
        strategies=count,
        xla=tuple(c.describe() for c in rx.collectives),
        matched=strategy.name if strategy is not None else None,
        rank=rank,
        reason=reason,
        executions=executions,
        kind=kind,
        split=",".join(s.spec for s in rp.split),
        searched=searched,
        routed=routed,
        stopped=stopped,
        best=ranking.strategies[0].name,
        best_bytes=signature_received(signature(ranking.strategies[0], ranking), sizes_of(ranking), p.dtype),
        best_flops=int(ranking.strategies[0].raw_product_flops),
        equivalent=None if equivalent is None else (ranking.position(equivalent)[0], equivalent.name),
        ranked=len(ranking.strategies) if listed else ranking.source.count(),
    )

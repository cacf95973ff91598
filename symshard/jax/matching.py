"""Is XLA's plan one of symshard's listed strategies? The match, or the reason there is none.

:func:`compare` finds the best-ranked strategy whose collectives are exactly XLA's (by
:data:`~symshard.jax.xla_plans.Signature`) and whose devices do as many FLOPs as XLA's dots; where
there is none it says why, clause by clause (a sharding by part of a mesh axis, a permute over other
axes, a gather over more axes at once, a roundabout route, the closest strategy), and
:func:`compare_with_kind` also gives the kind of the disagreement, for grouping a sweep's cases.

In :mod:`symshard.jax` it reads the plans of :mod:`.xla_plans`; :mod:`.searches` looks further where
the listing has no match, and :mod:`.verification` puts the check together. No JAX.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..messages import Clauses, Message, Names, say
from ..planning.planner import Plan, Strategy
from .results import clauses
from .xla_plans import Signature, XlaPlan, signatures, strategy_flops

__all__ = ["Comparison", "compare", "compare_with_kind"]


def _describe(sig: Signature) -> str:
    return " + ".join(f"{k}_{''.join(a) if all(len(x) == 1 for x in a) else ','.join(a)}[{n}]" for k, a, n in sig)


def _sub_axis_reason(p: Plan, x: XlaPlan, subs: tuple[str, ...]) -> Message:
    """Why a plan that shards by part of a mesh axis is no symshard strategy, naming the parts."""
    sizes = {a.name: int(a.size) for a in p.mesh.axes}
    parents = sorted({s.split(":")[0] for s in subs})
    parts = []
    for a in parents:
        mine = [s for s in subs if s.split(":")[0] == a]
        factors = sorted({int(s.rsplit(")", 1)[1]) for s in mine})
        named: Message | None = None
        for s in reversed(mine):  # "X:(1)2 (the major factor) and X:(2)2 (the minor factor)"
            if s.split(":(")[1].startswith("1)"):
                named = (
                    say("{sub} (the major factor)", sub=s)
                    if named is None
                    else (say("{sub} (the major factor) and {rest}", sub=s, rest=named))
                )
            else:
                named = (
                    say("{sub} (the minor factor)", sub=s)
                    if named is None
                    else (say("{sub} (the minor factor) and {rest}", sub=s, rest=named))
                )
        parts.append(
            say(
                "{axis} ({n} {n:device|devices}) into sub-axes of {sizes} devices: {named}",
                axis=a,
                n=sizes[a],
                sizes="/".join(map(str, factors)),
                named=named,
            )
        )  # fmt: skip
    groups = sorted({a for c in x.collectives if c.axes for a in c.axes if ":" in a})
    kinds = Names(sorted({c.kind for c in x.collectives if c.axes and any(":" in a for a in c.axes)}))
    sliced = ", ".join(x.sliced_sub_axes)
    if groups and sliced:
        uses = say("runs {kinds} over {groups} and slices blocks by {subs}", kinds=kinds, groups=", ".join(groups),
                   subs=sliced)  # fmt: skip
    elif groups:
        uses = say("runs {kinds} over {groups}", kinds=kinds, groups=", ".join(groups))
    else:
        uses = say("slices blocks by {subs}", subs=sliced)
    return say(
        "XLA splits mesh axis {parts}, as Shardy writes them, and {uses}: a sharding by part of a mesh axis, "
        "so no strategy over whole mesh axes can be this plan",
        parts=Clauses(parts),
        uses=uses,
    )


def _roundabout(x: XlaPlan, *, refined: bool = False) -> Message | None:
    """A permute followed by a gather over one of its axes on as many elements: the reason, if so.

    On the mesh, the permute moves shards from axes the array is already sharded by, so gathering
    over those alone gives the same array; with axes in parts that is not claimed."""
    order = list(x.collectives)
    for i, c in enumerate(order):
        if c.kind != "CollectivePermute" or not c.axes:
            continue
        for g in order[i + 1 :]:
            if (
                g.kind == "AllGather"
                and g.axes
                and len(g.axes) == 1
                and g.axes[0] in c.axes
                and g.elements == c.elements
            ):
                other = [a for a in c.axes if a != g.axes[0]]
                if refined:
                    return clauses(
                        [
                            say(
                                "XLA first moves blocks with a collective-permute over {axes} ({elements} {elements:element|elements} "
                                "per device), then runs an all-gather over {axis} on as many elements per device",
                                axes=",".join(c.axes),
                                elements=c.elements,
                                axis=g.axes[0],
                            ),
                            say(
                                "symshard's routes through a permute (straight to the destination's sharding, to it "
                                "in another axis order, to it with some or all of the departing axes kept at the "
                                "minor end of a dim, or swapping one axis for an unused one) give no strategy with "
                                "this sequence and the rest of XLA's plan"
                            ),
                        ]
                    )
                if other:
                    return say(
                        "XLA first moves shards from {other} onto {axis} with a collective-permute ({elements} "
                        "{elements:element|elements} per device), then gathers them over {axis}, where gathering over {other} alone "
                        "gives the same array without the permute: a roundabout route, which symshard lists among "
                        "XLA's orders but in no strategy with the rest of XLA's plan",
                        other="/".join(other),
                        axis=g.axes[0],
                        elements=c.elements,
                    )
                return say(
                    "XLA first moves shards from one axis onto {axis} with a collective-permute ({elements} {elements:element|elements} "
                    "per device), then gathers them over {axis}, where gathering over the first axis alone gives the "
                    "same array without the permute: a roundabout route, which symshard lists among XLA's orders but "
                    "in no strategy with the rest of XLA's plan",
                    axis=g.axes[0],
                    elements=c.elements,
                )
    return None


def _loose(sig: Signature) -> Signature:
    """A signature with the collective-permutes' axes left out."""
    return tuple(sorted((k, () if k == "CollectivePermute" else a, n) for k, a, n in sig))


def compare(p: Plan, x: XlaPlan, *, refined: bool = False) -> tuple[Strategy | None, int | None, str]:
    """The best-ranked strategy whose communication is exactly XLA's and whose devices do as many FLOPs
    as XLA's dots, its rank, and the reason when there is none (``refined``: ``p`` has axes in parts)."""
    found = compare_with_kind(p, x, refined=refined)
    return found.strategy, found.rank, found.reason


@dataclass(frozen=True, slots=True)
class Comparison:
    """XLA's plan among a plan's listed strategies (:func:`compare_with_kind`).

    ``strategy`` and ``rank``: the best-ranked strategy with exactly XLA's collectives and dot FLOPs, if
    any; else ``reason`` says why none, and ``kind`` is the kind of the disagreement, for grouping.
    ``equivalent``: with no match, the best-ranked strategy with XLA's collectives, bytes and FLOPs but a
    collective-permute that pairs other devices (over other axes): not XLA's plan, whose devices pair
    otherwise, but one equal to it in cost.
    """

    strategy: Strategy | None
    rank: int | None
    reason: str
    kind: Message | None
    equivalent: Strategy | None = None


def compare_with_kind(
    p: Plan, x: XlaPlan, *, refined: bool, number: Callable[[int, Strategy], int] | None = None
) -> Comparison:
    """:func:`compare`, with the kind of the disagreement (for grouping) when there is one (a few words
    for the disagreements a sweep meets often, else the reason's first clause) and the strategy equal to
    XLA's plan in cost, if one is (see :class:`Comparison`).

    ``number(i, strategy)`` numbers the strategies the reason names (``strategy i`` of ``p``, counted from
    0): by default their place in ``p``; :func:`~symshard.jax.verification.verify` numbers them as
    ``matmul --all`` ranks them, the numbers a user sees there."""
    if number is None:
        number = _listed_number
    target = x.signature
    sigs = signatures(p)
    hits = [(i, p.strategies[i]) for i, sig in enumerate(sigs) if sig == target]
    same_flops = [(i, s) for i, s in hits if int(s.raw_product_flops) == x.dot_flops]
    if same_flops:
        i, s = same_flops[0]
        return Comparison(s, i + 1, "", None)
    reasons: list[Message] = []
    kind: Message | None = None  # set with the first clause, when that clause is of a known kind
    equivalent: Strategy | None = None
    if hits:
        i, s = hits[0]
        mine = int(s.raw_product_flops)
        values = {"index": number(i, s), "name": s.name, "xla": f"{x.dot_flops:,}", "mine": f"{mine:,}"}
        if x.dot_flops > mine:
            reasons.append(
                say(
                    "XLA runs the collectives of strategy {index} ({name}), but each device's dots do {xla} FLOPs "
                    "where that strategy does {mine}: XLA multiplies bigger blocks, gathering before the dot (or "
                    "slicing after it) what the strategy handles on the other side, and no symshard strategy does "
                    "that with these collectives",
                    **values,
                )
            )
        else:
            reasons.append(
                say(
                    "XLA runs the collectives of strategy {index} ({name}), but each device's dots do {xla} FLOPs "
                    "where that strategy does {mine}: XLA multiplies smaller blocks, gathering after the dot (or "
                    "slicing before it) what the strategy handles on the other side, and no symshard strategy does "
                    "that with these collectives",
                    **values,
                )
            )
        kind = say("the collectives of a symshard strategy, but other FLOPs per device")
    wanted = _loose(target)
    loose = [
        (i, p.strategies[i])
        for i, sig in enumerate(sigs)
        if _loose(sig) == wanted and strategy_flops(p, i) == x.dot_flops
    ]
    if loose and not hits:
        i, s = loose[0]
        theirs = sorted({",".join(a) for k, a, _ in sigs[i] if k == "CollectivePermute"})
        ours = sorted({",".join(c.axes or ("?",)) for c in x.collectives if c.kind == "CollectivePermute"})
        reasons.append(
            say(
                "XLA's collectives and FLOPs are those of strategy {index} ({name}) but for the collective-permute's "
                "axes: XLA's source-target pairs cross {ours}, that strategy's permute {theirs}: the devices holding "
                "the block a device needs differ along more axes than those, and symshard pairs each device with one "
                "that differs only along its permute's axes where XLA picks another, so it is not counted as a match",
                index=number(i, s),
                name=s.name,
                ours=Names(ours),
                theirs=Names(theirs),
            )
        )
        kind = say("a symshard strategy's collectives and FLOPs, but for the collective-permute's axes")
        equivalent = s
    subs = x.sub_axes
    if subs:
        reasons.append(_sub_axis_reason(p, x, subs))
    steps = {t for sig in sigs for t in sig}
    wider = [
        c
        for c in x.collectives
        if c.kind in ("AllGather", "AllToAll")
        and c.axes is not None
        and len(c.axes) > 1
        and (c.kind, tuple(sorted(c.axes)), c.elements) not in steps
    ]
    if wider and not subs:
        c = wider[0]
        reasons.append(
            clauses(
                [
                    say(
                        "XLA runs {kind} over {axes} on {elements} {elements:element|elements} per device, which no symshard strategy "
                        "does: it first slices along an axis the array is replicated over, then moves the data over "
                        "more axes at once",
                        kind=c.kind,
                        axes=",".join(c.axes or ()),
                        elements=c.elements,
                    ),
                    say(
                        "symshard gathers, or moves to another dim in one all-to-all, only the axes that shard the "
                        "array"
                    ),
                ]
            )
        )
    if any(c.axes is None for c in x.collectives if c.kind != "CollectivePermute"):
        reasons.append(say("XLA's device groups are neither whole mesh axes nor sub-axes of them"))
    roundabout = _roundabout(x, refined=refined) if not subs else None
    if roundabout:
        if refined and not reasons:
            kind = say(
                "a collective-permute, then an all-gather over one of its axes: a sequence no symshard strategy has"
            )
        reasons.append(roundabout)
    if not reasons:
        for c in x.collectives:
            if c.kind != "CollectivePermute":
                continue
            where = ",".join(c.axes or ("?",))
            if (c.kind, tuple(sorted(c.axes or ("?",))), c.elements) not in steps:
                reasons.append(
                    say(
                        "XLA runs a collective-permute over {axes} on {elements} {elements:element|elements} per device, which no "
                        "symshard strategy runs: none of symshard's routes moves those blocks across those axes",
                        axes=where,
                        elements=c.elements,
                    )
                )
            else:
                reasons.append(
                    clauses(
                        [
                            say(
                                "XLA runs a collective-permute over {axes} on {elements} {elements:element|elements} per device",
                                axes=where,
                                elements=c.elements,
                            ),
                            say("the symshard strategies with that permute run other collectives with it than XLA's"),
                        ]
                    )
                )
            kind = say("a collective-permute that no symshard strategy runs with XLA's other collectives")
            break
    xla_counts = Counter(target)

    def distance(sig: Signature) -> int:
        mine = Counter(sig)
        return sum(((mine - xla_counts) + (xla_counts - mine)).values())

    first: dict[Signature, int] = {}  # each distinct signature at its best rank
    for i, sig in enumerate(sigs):
        first.setdefault(sig, i)
    closest_i = min(first.values(), key=lambda i: (distance(sigs[i]), i))
    closest = p.strategies[closest_i]
    reasons.append(say("XLA runs {a}", a=_describe(target)) if target else say("XLA runs nothing"))
    said = {"index": number(closest_i, closest), "name": closest.name}
    if sigs[closest_i]:
        reasons.append(
            say("the closest symshard strategy ({index}, {name}) runs {mine}", mine=_describe(sigs[closest_i]), **said)
        )
    else:
        reasons.append(say("the closest symshard strategy ({index}, {name}) runs nothing", **said))
    return Comparison(None, None, clauses(reasons), kind or _first_clause(reasons[0]), equivalent)


def _listed_number(i: int, strategy: Strategy) -> int:
    """Strategy ``i`` of a plan, as the plan numbers it."""
    return i + 1


def _first_clause(reason: Message) -> Message:
    """The first sentence of a reason (a reason of several clauses starts with the first of them)."""
    values = dict(reason.values)
    if reason.template == "{clauses}" and values["clauses"]:
        return _first_clause(values["clauses"][0])  # type: ignore[index]
    return reason

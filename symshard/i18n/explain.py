"""Explanations in words, in English or Chinese: a case, a strategy step by step, an error.

The library's objects carry structure (a :class:`~symshard.notation.einsums.Classification` keeps its
reason as a message key and values; a :class:`~symshard.planning.strategies.Strategy` keeps its steps as
collectives and a local product). This module turns that structure into sentences, one per
step, saying what moves over which mesh axis and what each device holds afterwards, in the
glossary's terms. Nothing is parsed back out of printed text.

Examples:
    >>> import symshard as ss
    >>> p = ss.plan("A[I_X, J] · B[J, K] -> C[I, K]", "X=4")
    >>> s = p.strategy("AllGather_X(A) → matmul")
    >>> print(explain(s, mesh=p.mesh))
    AllGather A over X: each device receives the other 3 shards, so every device holds A[I, J] whole.
    Each device multiplies its own blocks, A[I, J] · B[J, K] -> C[I, K], with no communication.
    >>> print(explain(s, "zh", mesh=p.mesh))
    沿 X 对 A 做 AllGather：每个设备收到其余 3 个分片，于是每个设备都持有完整的 A[I, J]。
    每个设备把自己持有的块相乘，A[I, J] · B[J, K] -> C[I, K]，不需要通信。
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

from ..algebra.symbols import axis as axis_symbol
from ..algebra.units import pretty
from ..costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    CollectiveExpr,
    CollectivePermute,
    DynamicSlice,
    FusedAllToAll,
    ReduceScatter,
)
from ..errors import SymshardError, UsageError
from ..machines.mesh import Mesh
from ..messages import Message, Names, keyed, say
from ..notation.arrays import Array, format_axes
from ..notation.einsums import ENGLISH as MATMUL
from ..notation.einsums import Classification, LocalMatmul, LocalSum
from .catalog import render, text, translate
from .languages import check_language

__all__ = ["ENGLISH", "error_line", "explain", "step_sentence", "strategy_sentences"]

ENGLISH: dict[str, str] = {
    "step.allgather": "AllGather {name} over {axes}: each device receives {others}, so every device holds {out}.",
    "step.allgather.whole": "AllGather {name} over {axes}: each device receives {others}, "
    "so every device holds {out} whole.",
    "step.allgather.contracting": "AllGather {name} over {axes}: each device receives {others}, "
    "so every device holds {out} and the contracting dim {dims} is no longer split.",
    "step.reducescatter": "ReduceScatter {name} over {axes}: the partial sums of the {count} {count:device|devices} are added up "
    "and each device keeps {fraction} of the total along {dim}, {out}.",
    "step.allreduce": "AllReduce {name} over {axes}: the partial sums of the {count} {count:device|devices} are added up "
    "and every device receives the total, {out}.",
    "step.alltoall": "AllToAll {name} over {axes}: each device keeps {fraction} of its block and sends the rest "
    "to {others}, so {axes} shards {dst} instead of {src}: {out}.",
    "step.alltoall.fused": "AllToAll {name} over {axes}, several moves at once ({moves}): each device keeps "
    "{fraction} of its block and sends the rest to {others}, in one exchange: {out}.",
    "step.permute": "CollectivePermute {name} along {axes}: each device passes its block to the next device "
    "along {axes}, {out}.",
    "step.repermute": "CollectivePermute {name} over {axes}: each device sends one block to another device and "
    "receives one, resharding {src} to {out} without a gather.",
    "step.slice": "Slice {name} along {axes} on {dim}: no data moves; each device keeps the {fraction} of {dim} "
    "that its position along {axes} selects, {out}.",
    "step.other": "{kind} {name} over {axes}, {out}.",
    "step.sum": "Each device sums its block of {name} over {dims}, which only {name} has and the product drops, "
    "before the product, with no communication: {out}.",
    "step.sum.partial": "Each device sums its block of {name} over {dims}, which only {name} has and the product "
    "drops, before the product: {dims} is split along {axes}, so each device holds a partial sum, {out}, to be "
    "added up over {axes}.",
    "step.matmul": "Each device multiplies its own blocks, {lhs} · {rhs} -> {out}, with no communication.",
    "step.matmul.partial": "Each device multiplies its own blocks, {lhs} · {rhs} -> {out}: {dims} is split along "
    "{axes}, so each result is a partial sum, to be added up over {axes}.",
    "plan.best": "Fastest: {index}. {name}",
    "plan.natural": "The chapter's strategy: {name}",
    "plan.note": "  note: {note}",
    "word.result": "the result",
    "word.array": "the array",
    "word.other_shard": "the other shard",
    "word.other_shards": "the other {count} {count:shard|shards}",
    "word.other_device": "the other device",
    "word.other_devices": "the other {count} {count:device|devices}",
    "word.or": " or ",
    "word.semicolon": "; ",
    "word.and_formula": " and ",
    "word.or_formula": " or ",
    "case.line": "Case {case}: {reason}",
    "error.column": " (at column {column})",
    "error.column_of": " (at column {column} of '{text}')",
    "error.hint": "; hint: {hint}",
}
"""The English of this module's sentences by key; other languages are in the catalogue."""

_ROLE_WORDS = {"lhs": "word.left_operand", "rhs": "word.right_operand", "out": "word.result"}


def _word(key: str, **values: object) -> Message:
    """A keyed phrase of this module (or of matmul's), kept as a message to say in any language."""
    table = ENGLISH if key in ENGLISH else MATMUL
    return keyed(table, key, **{k: Names(v) if isinstance(v, tuple) else v for k, v in values.items()})


def _say(key: str, language: str, **values: object) -> str:
    return render(_word(key, **values), language)


def _group(axes: tuple[str, ...], mesh: Mesh | None) -> sympy.Expr:
    sizes: Mapping[str, sympy.Expr] = mesh.sizes if mesh is not None else {}
    return sympy.prod([sizes.get(a, axis_symbol(a)) for a in axes])


def _others(count: sympy.Expr, what: str) -> Message:
    """``the other 3 shards``, ``the other shard``, ``the other |X| - 1 devices``."""
    others = count - 1
    if others == 1:
        return _word(f"word.other_{what}")
    return _word(f"word.other_{what}s", count=pretty(others))


def _name(array: Array, role: str | None) -> str | Message:
    if array.name:
        return array.name
    return _word(_ROLE_WORDS.get(role or "", "word.array"))


def step_sentence(
    step: object,
    language: str = "en",
    *,
    mesh: Mesh | None = None,
    role: str | None = None,
    contracting: tuple[str, ...] = (),
) -> str:
    """One sentence for one step: a collective (or free slice) or the local product.

    Args:
        step: a :class:`~symshard.planning.strategies.PlanStep`, a
            :class:`~symshard.costs.collectives.CollectiveExpr`, a
            :class:`~symshard.notation.einsums.LocalMatmul` or a :class:`~symshard.notation.einsums.LocalSum`.
        mesh: the mesh, for the number of devices along an axis (``|X|`` without it).
        role: ``'lhs'``, ``'rhs'`` or ``'out'`` (taken from a PlanStep), naming an unnamed array.
        contracting: the product's contracting dims, to say when a gather makes one whole.

    Examples:
        >>> from symshard.costs.collectives import parse_collective
        >>> step_sentence(parse_collective("ReduceScatter_{X,K}(C[I, K]{U_X})"))
        'ReduceScatter C over X: the partial sums of the |X| devices are added up and each device keeps 1/|X| of the total along K, C[I, K_X].'
    """
    role = getattr(step, "role", role)
    op = getattr(step, "op", step) if not isinstance(step, (CollectiveExpr, LocalMatmul, LocalSum)) else step
    if isinstance(op, LocalMatmul):
        return _local(op, language)
    if isinstance(op, LocalSum):
        return _sum(op, role, language)
    if not isinstance(op, CollectiveExpr):
        raise UsageError(
            say("cannot explain {what} as a step", what=type(step).__name__),
            hint=say("pass a PlanStep, a collective such as parse_collective('AllGather_X(A[I_X])') or a LocalMatmul"),
        )
    c, arr, out = op.op, op.operand, op.output
    axes = format_axes(c.axes)
    count = _group(c.axes, mesh)
    values: dict[str, object] = {"name": _name(arr, role), "axes": axes, "out": str(out)}
    if isinstance(c, AllGather):
        values["others"] = _others(count, "shard")
        gathered = tuple(d.name for d, o in zip(arr.dims, out.dims, strict=True) if d.axes != o.axes)
        whole = set(gathered) & set(contracting)
        if role in ("lhs", "rhs") and whole and not any(out.dim(d).axes for d in whole):
            return _say("step.allgather.contracting", language, dims=tuple(sorted(whole)), **values)
        if not out.axes and not out.unreduced:
            return _say("step.allgather.whole", language, **values)
        return _say("step.allgather", language, **values)
    if isinstance(c, ReduceScatter):
        dim = c.target(arr)
        return _say("step.reducescatter", language, count=pretty(count), fraction=pretty(1 / count), dim=dim, **values)
    if isinstance(c, AllReduce):
        return _say("step.allreduce", language, count=pretty(count), **values)
    if isinstance(c, FusedAllToAll):
        fraction, others = pretty(1 / count), _others(count, "device")
        return _say("step.alltoall.fused", language, fraction=fraction, others=others, moves=c.shifts(arr), **values)
    if isinstance(c, AllToAll):
        src = arr.sharded_dim(c.axes[0]) or "?"
        dst = out.sharded_dim(c.axes[0]) or "?"
        return _say(
            "step.alltoall",
            language,
            fraction=pretty(1 / count),
            others=_others(count, "device"),
            src=src,
            dst=dst,
            **values,
        )
    if isinstance(c, DynamicSlice):
        dim = next((o.name for d, o in zip(arr.dims, out.dims, strict=True) if d.axes != o.axes), "?")
        return _say("step.slice", language, fraction=pretty(1 / count), dim=dim, **values)
    if isinstance(c, CollectivePermute):
        if out == arr:
            return _say("step.permute", language, **values)
        return _say("step.repermute", language, src=str(arr), **values)
    return _say("step.other", language, kind=c.kind, **values)  # a step kind this module does not know yet


def _sum(op: LocalSum, role: str | None, language: str) -> str:
    split = [a for d in op.operand.dims if d.name in op.dims for a in d.axes]
    values = {"name": _name(op.operand, role), "dims": tuple(op.dims), "out": str(op.output)}
    if not split:
        return _say("step.sum", language, **values)
    return _say("step.sum.partial", language, axes=format_axes(split), **values)


def _local(op: LocalMatmul, language: str) -> str:
    values = {"lhs": str(op.lhs), "rhs": str(op.rhs), "out": str(op.output)}
    new = sorted(set(op.output.unreduced) - set(op.lhs.unreduced) - set(op.rhs.unreduced))
    if not new:
        return _say("step.matmul", language, **values)
    kept = set(op.output.dim_names)
    split = [d.name for d in op.lhs.dims if d.name not in kept and set(d.axes) & set(new)]
    split += [d.name for d in op.rhs.dims if d.name not in kept and set(d.axes) & set(new) and d.name not in split]
    return _say("step.matmul.partial", language, dims=tuple(split), axes=format_axes(new), **values)


def strategy_sentences(strategy: object, language: str = "en", *, mesh: Mesh | None = None) -> list[str]:
    """One sentence per step of a :class:`~symshard.planning.strategies.Strategy`, in order."""
    steps = strategy.steps  # type: ignore[attr-defined]
    local = next((s.op for s in steps if isinstance(s.op, LocalMatmul)), None)
    contracting: tuple[str, ...] = ()
    if local is not None:
        kept = set(local.output.dim_names)
        contracting = tuple(d for d in local.lhs.dim_names if d in local.rhs.dim_names and d not in kept)
    return [step_sentence(s, language, mesh=mesh, contracting=contracting) for s in steps]


def error_line(err: SymshardError, language: str = "en") -> str:
    """The error on one line, as the command line prints it after ``symshard: error:``.

    Examples:
        >>> from symshard.errors import ShardingError
        >>> try:
        ...     import symshard as ss; ss.parse("A[I_X, J_X]")
        ... except ShardingError as err:
        ...     print(error_line(err, "zh"))
        在 'A[I_X, J_X]' 中，网格轴 X 同时切分了 I 和 J（第 10 列）；提示：一个网格轴最多只能切分一个维度；先用 AllGather_X 收集其中一个
    """
    if language == "en":
        return err.one_line()
    line = translate(err.message, language)
    if err.text is not None and err.span is not None:
        column = err.span[0] + 1
        if f"'{err.text}'" in err.message:
            line += text("error.column", language, column=column)
        else:
            line += text("error.column_of", language, column=column, text=err.text)
    if err.hint:
        line += text("error.hint", language, hint=translate(err.hint, language))
    return "".join(ch if ch.isprintable() else " " for ch in line)


def explain(obj: object, lang: str = "en", *, mesh: Mesh | None = None) -> str:
    """What ``obj`` means, in words, in English (``'en'``) or Simplified Chinese (``'zh'``).

    Args:
        obj: a classification (``Case N: why``), a strategy (one sentence per step), a plan
            (its case, notes and the fastest or the chapter's strategy), a step or
            collective, a :class:`~symshard.messages.Message`, an error (its one-line form),
            or an English sentence symshard wrote (translated).
        lang: ``'en'`` or ``'zh'``.
        mesh: the mesh, to count the devices along an axis; a plan brings its own.

    Raises:
        UsageError: an unknown language, or nothing to explain.

    Examples:
        >>> import symshard as ss
        >>> print(ss.explain(ss.matmul("A[I, J_X] · B[J_X, K]").classify(), lang="zh"))  # doctest: +ELLIPSIS
        情况 3：两个操作数都沿 X 对收缩维度 J 分片，...
        >>> print(ss.explain(ss.plan("A[I_X, J] · B[J, K] -> C[I, K]", "X=2"), lang="zh"))  # doctest: +ELLIPSIS
        情况 1：没有收缩维度（J）被分片，...
        本章的做法：matmul → AllGather_X(C)
        每个设备把自己持有的块相乘，A[I_X, J] · B[J, K] -> C[I_X, K]，不需要通信。
        沿 X 对 C 做 AllGather：每个设备收到另一个分片，于是每个设备都持有完整的 C[I, K]。
    """
    check_language(lang)
    from ..planning.strategies import Plan, PlanStep, Strategy

    if isinstance(obj, Classification):
        if lang == "en" or obj.message is None:
            return str(obj)
        return _say("case.line", lang, case=obj.case, reason=obj.message)
    if isinstance(obj, Message):
        return render(obj, lang)
    if isinstance(obj, Strategy):
        return "\n".join(strategy_sentences(obj, lang, mesh=mesh))
    if isinstance(obj, Plan):
        notes = obj.classification.note_messages or ()
        lines = [explain(obj.classification, lang)]
        lines += [_say("plan.note", lang, note=n) for n in notes]
        if not obj.strategies:
            return "\n".join(lines)
        if obj.best is not None:
            lines.append(_say("plan.best", lang, index=1, name=obj.best.name))
            chosen = obj.best
        else:
            chosen = obj.natural
            lines.append(_say("plan.natural", lang, name=chosen.name))
        lines += strategy_sentences(chosen, lang, mesh=mesh or obj.mesh)
        return "\n".join(lines)
    if isinstance(obj, (PlanStep, CollectiveExpr, LocalMatmul, LocalSum)):
        return step_sentence(obj, lang, mesh=mesh)
    if isinstance(obj, SymshardError):
        return error_line(obj, lang)
    if isinstance(obj, str):
        return translate(obj, lang)
    raise UsageError(
        say("symshard cannot explain {what}", what=type(obj).__name__),
        hint=say("pass a classification, a plan, a strategy, a step or collective, an error or a sentence"),
    )

"""Before/after pictures of a collective: the operand's layout, an arrow, the result's layout.

Both layouts are drawn by :func:`symshard.render.layouts.panel` on one common grid
of atoms (see :mod:`symshard.render.holdings`), so the same piece of the array
has the same colour before and after: an AllGather turns a device's single
colour into all of them, a ReduceScatter turns hatched partial sums into one
clean slice each, an AllToAll turns rows into columns.

Examples:
    >>> fig = collective("AllGather_X(A[I_X, J])", "X=2")
    >>> fig.title
    'AllGather_X: A[I_X, J] → A[I, J]'
    >>> fig.svg.count('class="device"')
    4
"""

from __future__ import annotations

from collections.abc import Mapping

from ..costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    Collective,
    CollectiveExpr,
    CollectivePermute,
    DynamicSlice,
    FusedAllToAll,
    ReduceScatter,
)
from ..costs.placement import ShapeLike, place
from ..errors import CollectiveError, NotationError
from ..machines.mesh import Mesh
from ..memo import memoized
from ..messages import say
from ..notation.arrays import format_axes
from ..read import parse
from .canvas import Canvas
from .figure import Figure
from .holdings import atoms_for
from .layouts import (
    DEFAULT_AXIS_SIZE,
    LABELLED,
    frame,
    holding_words,
    local_text,
    mesh_words,
    panel,
    resolve_mesh,
    scene,
)
from .style import INK, MUTED, SIZE, TITLE, hatch_defs, text_width
from .words import commas, words

__all__ = ["collective", "describe", "resolve_collective"]


def resolve_collective(op: object) -> CollectiveExpr:
    """A collective applied to its operand, from itself or its notation.

    Raises:
        NotationError: text that is not a collective, or an object of another kind.
        CollectiveError: a collective with no operand, or one that does not fit it.
    """
    if isinstance(op, CollectiveExpr):
        return op
    if isinstance(op, Collective):
        raise CollectiveError(
            say("{op} has no operand to draw", op=str(op)),
            hint=say("apply it to an array first, e.g. {example}, or pass the text '{text}'",
                     example=f"{type(op).__name__}({op.axes!r})('A[I_X, J]')", text=f"{op}(A[I_X, J])"),
        )  # fmt: skip
    if isinstance(op, str):
        value = parse(op)
        if isinstance(value, CollectiveExpr):
            return value
        array = hasattr(value, "dims")
        kind = say("an array") if array else say("a matmul")
        draw = "layout()" if array else "regimes()"
        raise NotationError(say("'{op}' is {kind}, not a collective", op=op, kind=kind),
                            hint=say("draw it with {function}, or write e.g. 'AllGather_X(A[I_X, J])'",
                                     function=draw))  # fmt: skip
    raise NotationError(
        say("collective() draws a collective, not {what}", what=f"{type(op).__name__} {op!r}"),
        hint=say("pass a collective or its notation, e.g. 'AllGather_X(A[I_X, J])'"),
    )


def describe(expr: CollectiveExpr, language: str = "en") -> str:
    """What the collective does, in one clause (in ``language``).

    Examples:
        >>> describe(parse("AllToAll_{X,J}(A[I_X, J])"), "zh")
        '跨 X 的切分从 I 移到 J：每个设备向其他每个设备各发送一块'
    """
    op, axes = expr.op, format_axes(expr.op.axes)
    moved = commas([d.name for d in expr.operand.dims if set(d.axes) & set(op.axes)], language)
    if isinstance(op, AllGather):
        return words("figure.collective.all_gather", language, axes=axes, dims=moved)
    if isinstance(op, ReduceScatter):
        return words("figure.collective.reduce_scatter", language, axes=axes, target=op.target(expr.operand))
    if isinstance(op, AllReduce):
        return words("figure.collective.all_reduce", language, axes=axes)
    if isinstance(op, FusedAllToAll):
        return words("figure.collective.all_to_all_fused", language, axes=axes, moves=op.shifts(expr.operand))
    if isinstance(op, AllToAll):
        return words("figure.collective.all_to_all", language, axes=axes, source=moved, target=op.target(expr.operand))
    if isinstance(op, CollectivePermute):
        return words("figure.collective.permute", language, axes=axes)
    if isinstance(op, DynamicSlice):
        return words("figure.collective.dynamic_slice", language, axes=axes)
    return words("figure.collective.other", language, op=op, axes=axes)  # pragma: no cover - every kind is listed above


def _arrow(label: str, words: str, width: float) -> Canvas:
    c = Canvas()
    x, h = 40.0, 54.0
    c.path(f"M{x - 5} 4 H{x + 5} V{h - 18} H{x + 13} L{x} {h - 2} L{x - 13} {h - 18} H{x - 5} Z", fill=INK)
    c.text(x + 28, 24, label, size=TITLE - 1, font_weight="bold", fill=INK)
    c.text(x + 28, 44, words, size=SIZE, fill=MUTED)
    c.grow(max(width, x + 28 + text_width(words, SIZE)), h)
    return c


@memoized(maxsize=1024)
def collective(
    op: CollectiveExpr | str,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    *,
    title: str | None = None,
    language: str = "en",
) -> Figure:
    """Draw a collective as before and after: the operand's layout, an arrow, the result's layout.

    Args:
        op: a collective applied to its operand (``parse("AllGather_X(A[I_X, J])")``) or its
            notation; AllGather, ReduceScatter, AllReduce, AllToAll, CollectivePermute
            and DynamicSlice all draw.
        mesh: a numeric mesh; None draws each axis involved with 2 devices (and says so).
        shape: dim sizes, for index ranges and the per-device shapes in the caption.
        title: the heading; default ``"<collective>: <operand> → <result>"``.
        language: the language of the figure's words and its alt text (``"en"``, ``"zh"``); the
            notation, sizes and block labels are the same in every language.

    Returns:
        A :class:`~symshard.render.Figure`.

    Raises:
        NotationError: text that is not a collective.
        CollectiveError: a collective with no operand, or one that does not fit it.
        MeshError: a symbolic mesh, or one of more than 256 devices.
        UnknownAxisError: the collective or its operand names an axis the mesh lacks.
        DivisibilityError: a dim size that the operand's or the result's shards do not divide.
        ShapeError: sizes that are not positive integers, or for dims the operand lacks.

    Examples:
        >>> fig = collective("ReduceScatter_{X,K}(C[I, K]{U_X})", "X=2", "I=64,K=128")
        >>> fig.svg.count('class="device partial"'), fig.svg.count('class="device"')
        (2, 2)
    """
    expr = resolve_collective(op)
    text = f"{expr.op}({expr.operand})"
    m, made_up = resolve_mesh(mesh, [*expr.operand.axes, *sorted(expr.operand.unreduced), *expr.op.axes])
    for a in expr.op.axes:
        m.axis(a, context=text)
    before = place(expr.operand, m, shape)
    after = place(expr.output, m, shape)
    atoms = atoms_for([expr.operand, expr.output], m)
    shift = (expr.op.axes[0], 1) if isinstance(expr.op, CollectivePermute) else None
    top = panel(scene(before, atoms), array_heading=words("figure.collective.before", language, array=expr.operand),
                mesh_heading=words("figure.collective.mesh_before", language, mesh=m), tag="b",
                language=language)  # fmt: skip
    bottom = panel(scene(after, atoms, shift=shift),
                   array_heading=words("figure.collective.after", language, array=expr.output),
                   mesh_heading=words("figure.collective.mesh_after", language), tag="a",
                   language=language)  # fmt: skip
    what = describe(expr, language)
    arrow = _arrow(str(expr.op), what, 0)
    body = Canvas()
    body.place(top, 0, 0)
    body.place(arrow, 0, top.height + 14)
    body.place(bottom, 0, top.height + 14 + arrow.height + 14)
    heading = title if title is not None else f"{expr.op}: {expr.operand} → {expr.output}"  # notation only
    caption = [
        words("figure.collective.colours", language),
        words("figure.collective.per_device", language, before=local_text(before), after=local_text(after)),
    ]
    if expr.operand.unreduced or expr.output.unreduced:
        caption.append(words("figure.collective.hatched", language))
    if int(m.devices) > LABELLED:
        caption.append(words("figure.collective.unlabelled", language, limit=LABELLED))
    if made_up:
        caption.append(words("figure.made_up", language, size=DEFAULT_AXIS_SIZE))
    alt = words(
        "figure.collective.alt",
        language,
        op=expr.op,
        mesh=mesh_words(m, language),
        what=what,
        operand=expr.operand,
        before=holding_words(before, language),
        output=expr.output,
        after=holding_words(after, language),
    )
    defs = hatch_defs() if expr.operand.unreduced or expr.output.unreduced else ""
    return frame(body, title=heading, caption=caption, alt=alt, defs=defs)

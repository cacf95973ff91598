"""One call for any drawable value: :func:`svg` picks the picture from what it is given.

An array (or its notation) gets a layout, a collective a before/after picture,
a plan or matmul a regime plot. Keyword arguments go to the chosen function; a
keyword it does not take is refused with the list of those it does, instead of
being silently dropped.

Examples:
    >>> svg("A[I_X, J]", mesh="X=2").startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    True
    >>> svg("A[I_X, J]", hardware="tpu-v5e")
    Traceback (most recent call last):
    ...
    symshard.errors.UsageError: a layout of A[I_X, J] takes no hardware= argument
    hint: a layout takes mesh, shape, title and language; hardware belongs to a regime plot of a matmul
"""

from __future__ import annotations

from ..costs.collectives import Collective, CollectiveExpr
from ..errors import NotationError, PlanError, UsageError
from ..messages import Names, say
from ..notation.arrays import Array
from ..notation.einsums import Matmul
from ..planning.strategies import Plan
from ..read import parse
from .collectives import collective, resolve_collective
from .figure import Figure
from .layouts import layout
from .plot import regimes

__all__ = ["svg"]

_TAKES = {
    "layout": ("mesh", "shape", "title", "language"),
    "collective": ("mesh", "shape", "title", "language"),
    "regime plot": ("dim", "mesh", "shape", "hardware", "lo", "hi", "points", "title", "labels", "dtype", "model",
                    "overlap", "constants", "language"),
}  # fmt: skip


def svg(obj: object, **kwargs: object) -> str:
    """SVG text for ``obj``: a layout, a collective's before/after picture or a regime plot.

    Args:
        obj: an :class:`~symshard.notation.arrays.Array`, a collective applied to an array, a
            :class:`~symshard.planning.strategies.Plan` or :class:`~symshard.notation.einsums.Matmul`, the
            notation of any of them, or a :class:`~symshard.render.Figure`.
        **kwargs: passed on: ``mesh``, ``shape``, ``title``, ``language`` for arrays and collectives;
            ``dim`` (required), ``mesh``, ``shape``, ``hardware``, ``lo``, ``hi``, ..., ``language`` for
            plans (``language="zh"`` draws the figure's words and alt text in Chinese).

    Returns:
        The SVG text.

    Raises:
        UsageError: a keyword the chosen picture does not take.
        NotationError: text that does not parse, or a value that is not drawable.
        SymshardError: whatever the chosen function raises (see :func:`~symshard.render.layout`,
            :func:`~symshard.render.collective` and :func:`~symshard.render.regimes`).

    Examples:
        >>> text = svg("AllToAll_{X,J}(A[I_X, J])", mesh="X=4")
        >>> text.count('class="device"')
        8
        >>> "之前每个设备持有的内容" in svg("AllToAll_{X,J}(A[I_X, J])", mesh="X=4", language="zh")
        True
    """
    if isinstance(obj, Figure):
        if kwargs:
            raise UsageError(
                say("a finished Figure takes no arguments"), hint=say("use its .svg, or draw it again with them")
            )
        return obj.svg
    value = parse(obj) if isinstance(obj, str) else obj
    if isinstance(value, Collective):
        resolve_collective(value)  # explains that it needs an operand
    if isinstance(value, Array):
        kind, name = "layout", say("a layout of {array}", array=str(value))
    elif isinstance(value, CollectiveExpr):
        kind, name = "collective", say("a picture of {collective}", collective=f"{value.op}({value.operand})")
    elif isinstance(value, (Plan, Matmul)):
        mm = value.matmul if isinstance(value, Plan) else value
        kind, name = "regime plot", say("a regime plot of {matmul}", matmul=str(mm))
    else:
        raise NotationError(
            say("svg() cannot draw {what}", what=f"{type(obj).__name__} {obj!r}"),
            hint=say("pass an array, a collective, a plan or their notation, e.g. 'A[I_X, J]'"),
        )
    for key in sorted(kwargs):
        if key not in _TAKES[kind]:
            owner = next((k for k, v in _TAKES.items() if key in v and k != kind), None)
            takes = say("a {kind} takes {options}", kind=kind, options=Names(_TAKES[kind]))
            if owner == "regime plot":
                takes = say("{takes}; {key} belongs to a {owner} of a matmul", takes=takes, key=key, owner=owner)
            elif owner:
                takes = say("{takes}; {key} belongs to a {owner} of a array", takes=takes, key=key, owner=owner)
            raise UsageError(say("{name} takes no {key}= argument", name=name, key=key), hint=takes)
    if kind == "layout":
        return layout(value, **kwargs).svg  # type: ignore[arg-type]
    if kind == "collective":
        return collective(value, **kwargs).svg  # type: ignore[arg-type]
    options = dict(kwargs)
    dim = options.pop("dim", None)
    if not isinstance(dim, str):
        dims = mm.dims
        raise PlanError(
            say("{name} needs the dim to sweep", name=name),
            hint=say("pass dim='{dim}' (one of {dims})", dim=dims[0], dims=", ".join(dims)),
        )
    return regimes(value, dim, **options).svg  # type: ignore[arg-type]

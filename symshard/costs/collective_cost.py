"""What one collective costs: the record of its figures, and the glue that fills it in.

:class:`CollectiveCost` holds a collective's bytes, hops and times as SymPy expressions, with the
wiring and conventions that produced them; :func:`collective_cost` fills one in for a collective
applied to an array. The formulas are not here: :mod:`symshard.costs.costmodels` is the one place a
collective is costed. This glue resolves the mesh (with the chip's wiring), the dims' sizes and the
dtype, checks the operand and the result on the mesh, measures the bytes each device holds before and
after (:mod:`symshard.costs.placement`), asks the costing module for the time, and writes down the
assumptions. It sits in :mod:`symshard.costs` above those two modules and below
:mod:`symshard.costs.collectives`, whose :meth:`~symshard.costs.collectives.CollectiveExpr.cost` calls
it; it knows a collective only by what :class:`AppliedCollective` names.

Examples:
    >>> from symshard.costs.collectives import parse_collective
    >>> c = collective_cost(parse_collective("AllReduce_X(C[I, K]{U_X})"), "X=4", "I=1024, K=1024")
    >>> c.bytes_in, c.bytes_out
    (2097152, 2097152)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.substitution import SubstitutionLike, substitution
from ..algebra.symbols import latex
from ..machines.chips import Hardware, exact_number
from ..machines.mesh import Mesh, resolve_mesh
from ..machines.presets import hardware as lookup_hardware
from ..messages import say
from ..notation.arrays import Array
from .costmodels import LATENCY_MODELS, MODELS, Costing, LevelCost, check_model, regime, volume
from .placement import Placement, ShapeLike, check_on_mesh, resolve_shape

__all__ = ["AppliedCollective", "CollectiveCost", "CollectiveOp", "collective_cost"]


class CollectiveOp(Protocol):
    """What the costing reads of a collective (:class:`~symshard.costs.collectives.Collective` is one):
    its kind, the mesh axes it runs over and its subscript as written."""

    @property
    def kind(self) -> str: ...

    @property
    def axes(self) -> tuple[str, ...]: ...

    @property
    def subscript(self) -> str: ...


class AppliedCollective(Protocol):
    """What the costing reads of a collective applied to an array
    (:class:`~symshard.costs.collectives.CollectiveExpr` is one): the collective, the operand, the
    result, the caveats, and the notation it prints as."""

    @property
    def op(self) -> CollectiveOp: ...

    @property
    def operand(self) -> Array: ...

    @property
    def output(self) -> Array: ...

    @property
    def notes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class CollectiveCost:
    """The cost of one collective, every figure a SymPy expression.

    Attributes:
        collective: the collective in the notation, with its result.
        model: ``'book'`` or ``'ring'``.
        bytes: ``V``, the bytes the formulas are written in (see :mod:`symshard.costs.costmodels`).
        bytes_in: bytes per device before the collective.
        bytes_out: bytes per device after it.
        hops: hops on the longest path.
        bandwidth_time: seconds if bandwidth-bound.
        latency_time: ``T_hop · hops``.
        time: ``max(latency_time, bandwidth_time)``.
        crossover_bytes: the ``V`` below which the collective is latency-bound.
        assumptions: the wiring and conventions that produced the numbers.
        latency_model: ``book`` (``time = max(latency, bandwidth)``) or ``nccl`` (their sum).
        levels: each network level's part (devices, bytes, bandwidth time, steps), innermost first.
    """

    collective: str
    model: str
    bytes: sympy.Expr
    bytes_in: sympy.Expr
    bytes_out: sympy.Expr
    hops: sympy.Expr
    bandwidth_time: sympy.Expr
    latency_time: sympy.Expr
    time: sympy.Expr
    crossover_bytes: sympy.Expr | None
    assumptions: tuple[str, ...] = field(default=())
    latency_model: str = "book"
    levels: tuple[LevelCost, ...] = field(default=(), compare=False)

    @property
    def regime(self) -> str | None:
        """``'bandwidth'`` or ``'latency'`` when the numbers decide it, else None."""
        return regime(self.latency_time, self.bandwidth_time)

    @property
    def is_numeric(self) -> bool:
        """Whether the time is a plain number (every size and constant known)."""
        return bool(self.time.is_number)

    @property
    def symbols(self) -> frozenset[sympy.Symbol]:
        """The symbols still in the cost's figures."""
        exprs = [self.bytes, self.bytes_in, self.bytes_out, self.hops, self.bandwidth_time, self.latency_time,
                 self.time, self.crossover_bytes, *(e for lv in self.levels for e in (lv.devices, lv.bytes, lv.bandwidth_time, lv.hops))]  # fmt: skip
        return frozenset(s for e in exprs if e is not None for s in as_expr(e).free_symbols)  # type: ignore[misc]

    def latex(self) -> str:
        """The time as LaTeX: ``T = \\max\\left(...\\right)``."""
        return "T = " + latex(self.time)

    def subs(self, values: SubstitutionLike) -> CollectiveCost:
        """The same cost with symbols replaced: ``{W_ici: 9e10}``, ``{"E": 2048}`` or ``"E=2048, Y=4"``.

        Names resolve to the symbols the cost holds (``X`` or ``|X|`` for an axis).

        Raises:
            UnknownSymbolError: a name the cost does not contain.

        Examples:
            >>> from symshard.costs.collectives import parse_collective
            >>> c = parse_collective("AllGather_Y([E_Y, F])").cost()
            >>> c.subs("E=2048, F=8192, Y=4").bandwidth_time
            33554432/W_ici
        """
        point = substitution(values, self.symbols, what=say("the cost"))

        def s(e: sympy.Expr | None) -> sympy.Expr | None:
            return None if e is None else as_expr(e).subs(point)

        return CollectiveCost(
            self.collective,
            self.model,
            s(self.bytes),
            s(self.bytes_in),
            s(self.bytes_out),
            s(self.hops),
            s(self.bandwidth_time),
            s(self.latency_time),
            s(self.time),
            s(self.crossover_bytes),
            self.assumptions,
            self.latency_model,
            tuple(
                LevelCost(lv.fabric, s(lv.devices), s(lv.bytes), s(lv.bandwidth_time), s(lv.hops))  # type: ignore[arg-type]
                for lv in self.levels
            ),
        )

    def __repr__(self) -> str:
        from ..algebra.units import format_seconds_expr
        from ..shown import summary

        return summary("CollectiveCost", self.collective, {"time": format_seconds_expr(self.time), "regime": self.regime,
                       "bytes": str(self.bytes), "hops": str(self.hops)}, model=self.model)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def collective_cost(
    expr: AppliedCollective,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    *,
    dtype: str = "bf16",
    hardware: Hardware | str | None = None,
    constants: Mapping[sympy.Symbol, object] | None = None,
    model: str = "book",
) -> CollectiveCost:
    """What the collective applied in ``expr`` costs; the arguments are those of
    :meth:`~symshard.costs.collectives.Collective.cost`, which says what each one means and what it raises.
    """
    model = check_model(model)
    hw = lookup_hardware(hardware) if hardware is not None else None
    text = str(expr)
    m = resolve_mesh(mesh, [*expr.operand.axes, *sorted(expr.operand.unreduced), *expr.op.axes], hw)
    sub_start = len(expr.op.kind) + 1
    sub_span = (sub_start, sub_start + len(expr.op.subscript))
    for a in expr.op.axes:
        m.axis(a, context=text, span=sub_span)
    dims = expr.operand.dim_names
    sizes = resolve_shape(shape, dims, context=str(expr.operand))
    check_on_mesh(expr.operand, m, sizes)
    out = expr.output
    check_on_mesh(out, m, sizes)
    before = Placement(expr.operand, m, tuple(sizes.items()), _dtype(dtype))
    after = Placement(out, m, tuple(sizes.items()), before.dtype)

    values: dict[sympy.Symbol, object] = dict(hw.constants(before.dtype)) if hw else {}
    values.update({k: exact_number(v, str(k)) for k, v in (constants or {}).items()})
    costing = Costing(m, values, model, hw)
    v = volume(expr.op.kind, before.bytes_per_device, after.bytes_per_device, m.group_size(expr.op.axes))
    t = costing.timing(expr.op.kind, expr.op.axes, as_expr(v))
    crossover = t.crossover_bytes

    assumptions: list[str] = [say("model {model}: {description}", model=model, description=MODELS[model])]
    if any(not m.axis(a).size.is_number for a in expr.op.axes):
        assumptions.append(
            say(
                "the formula assumes each axis of the collective has at least 2 devices "
                "(over an axis of size 1 nothing moves)"
            )
        )
    for a in expr.op.axes:
        assumptions.append(say("axis {description}", description=m.axis(a).describe()))
    assumptions.append(
        say(
            "latency {model}: {description}",
            model=t.latency_model,
            description=LATENCY_MODELS[t.latency_model],
        )
    )
    if hw is not None:
        assumptions.append(say("hardware {label}", label=hw.label))
        for symbol in sorted(costing.constants - set(values), key=str):
            assumptions.append(
                say(
                    "{chip} has no figure for {symbol}: the formula keeps it; set it with --hw-set {symbol}=VALUE",
                    chip=hw.label,
                    symbol=str(symbol),
                )
            )
    assumptions.extend(expr.notes)
    return CollectiveCost(
        collective=text,
        model=model,
        bytes=as_expr(t.bytes),
        bytes_in=before.bytes_per_device,
        bytes_out=after.bytes_per_device,
        hops=as_expr(t.hops),
        bandwidth_time=as_expr(t.bandwidth_time),
        latency_time=as_expr(t.latency_time),
        time=as_expr(t.time),
        crossover_bytes=None if crossover is None else as_expr(crossover),
        assumptions=tuple(assumptions),
        latency_model=t.latency_model,
        levels=t.levels,
    )


def _dtype(name: str) -> str:
    from ..algebra.dtypes import canonical_dtype

    return canonical_dtype(name)

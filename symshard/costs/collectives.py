"""The collectives as typed transforms on sharded arrays, each with its cost.

``AllGather("X")`` applied to ``A[I_X, J]`` gives ``A[I, J]``; applying it to an
array that is not sharded along X is a :class:`~symshard.errors.CollectiveError`
that says why. The five collectives and what they do to the notation:

=====================  =================================  =====================
collective             example                            effect
=====================  =================================  =====================
``AllGather_X``        ``A[I_X, J] -> A[I, J]``           removes X from a dim
``ReduceScatter_{X,K}`` ``C[I, K]{U_X} -> C[I, K_X]``     sums over X, shards K
``AllReduce_X``        ``C[I, K]{U_X} -> C[I, K]``        sums over X
``AllToAll_{X,J}``     ``A[I_X, J] -> A[I, J_X]``         moves X to another dim
``CollectivePermute_X`` ``A[I_X, J] -> A[I_X, J]``        shifts blocks along X
=====================  =================================  =====================

Axes are added at the minor (last) end of a dim's sharding and should be removed
from there: gathering the major axis X of ``I_XY`` leaves each device holding
every ``|Y|``-th block of I rather than the contiguous block ``I_Y`` names (the
book's ``A[I_XY, J] -> A[I_Y, J]`` holds only up to a global permutation of I),
which the result records as a note.

:meth:`Collective.cost` prices a collective on a mesh with sizes, a dtype and
optionally a chip, under the ``book`` or ``ring`` model of
:mod:`symshard.costs.costmodels`, returning a
:class:`~symshard.costs.collective_cost.CollectiveCost` whose fields stay SymPy
expressions until numbers are substituted; :mod:`symshard.costs.collective_cost`,
below this module, fills it in.

Examples:
    >>> e = parse_collective("AllGather_Y([E_Y, F])")
    >>> str(e.output)
    '[E, F]'
    >>> c = e.cost("X=8,Y=4", {"E": 2048, "F": 8192}, hardware="tpu-v5e")
    >>> c.regime, round(float(c.time) * 1e6)
    ('bandwidth', 559)
    >>> e.cost().time
    Max(T_hop*|Y|/2, 2*E*F/W_ici)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

import sympy

from ..errors import CollectiveError, NotationError, SymshardError
from ..machines.chips import Hardware
from ..machines.mesh import Mesh
from ..memo import memoized
from ..messages import Choices, Message, say
from ..notation.arrays import Array, Dim, format_axes, latex_axes, unchecked_array, unchecked_dim
from ..notation.parser import CollectiveSyntax, parse_array, parse_collective_syntax
from .collective_cost import CollectiveCost, collective_cost
from .placement import ShapeLike

__all__ = [
    "AllGather",
    "AllReduce",
    "AllToAll",
    "Collective",
    "CollectiveExpr",
    "CollectivePermute",
    "DynamicSlice",
    "FusedAllToAll",
    "ReduceScatter",
    "parse_collective",
]


def _axes(value: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """Axes from ``"X"``, ``"XY"`` (capitals: one axis per letter), ``"data"`` or a tuple."""
    if value is None:
        return ()
    if isinstance(value, str):
        if value.isalpha() and value.isupper():
            return tuple(value)
        return (value,)
    return tuple(value)


# -- the collectives ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Collective:
    """Base of the five collectives: the mesh axes they run over.

    Subclasses implement :meth:`apply` (the effect on the notation); what one costs
    comes from :mod:`symshard.costs.costmodels`, by its ``kind``.
    """

    axes: tuple[str, ...]
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        axes = _axes(self.axes)
        object.__setattr__(self, "axes", axes)
        for i, a in enumerate(axes):
            if a in axes[:i]:
                raise CollectiveError(
                    say(
                        "mesh axis {axis} is listed twice in {collective}",
                        axis=a,
                        collective=f"{self.kind}_{format_axes(axes)}",
                    ),
                    hint=say(
                        "list each axis once, e.g. {example}", example=f"{self.kind}_{format_axes(dict.fromkeys(axes))}"
                    ),
                )

    # notation
    @property
    def subscript(self) -> str:
        """What follows the ``_``: ``X``, ``XY`` or ``{X,K}``."""
        return format_axes(self.axes)

    def __str__(self) -> str:
        return f"{self.kind}_{self.subscript}"

    def latex(self) -> str:
        """``\\text{AllGather}_{XY}``."""
        return rf"\text{{{self.kind}}}_{{{latex_axes(self.axes)}}}"

    def __call__(self, array: Array | str) -> CollectiveExpr:
        """Apply to ``array``, keeping both: ``AllGather("X")(a).output``."""
        arr = parse_array(array) if isinstance(array, str) else array
        return CollectiveExpr(self, arr)

    # semantics
    def apply(self, array: Array) -> Array:
        """The array after the collective.

        Raises:
            CollectiveError: the collective does not fit ``array``.
        """
        raise NotImplementedError

    def notes(self, array: Array) -> tuple[str, ...]:
        """Caveats about applying this collective to ``array`` (e.g. strided rows)."""
        return ()

    def _fail(self, array: Array, why: Message, hint: Message) -> CollectiveError:
        return CollectiveError(
            say("{expression} is not possible: {why}", expression=f"{self}({array})", why=why), hint=hint
        )

    def _require_unreduced(self, array: Array) -> None:
        for a in self.axes:
            if a not in array.unreduced:
                shards = array.sharded_dim(a)
                if shards:
                    hint = say(
                        "{axis} shards {dim}, so {array} holds complete values; {gather} removes that sharding",
                        axis=a,
                        dim=shards,
                        array=str(array),
                        gather=f"AllGather_{format_axes((a,))}",
                    )
                else:
                    hint = say(
                        "only an unreduced array (marked {marker}, e.g. the result of a local matmul over a "
                        "contracting dim sharded along {axis}) has partial sums to add",
                        marker=f"{{U_{format_axes((a,))}}}",
                        axis=a,
                    )
                raise self._fail(array, say("it is not unreduced over {axis}", axis=a), hint)

    # costs
    def cost(
        self,
        array: Array | str,
        mesh: Mesh | Mapping[str, object] | str | None = None,
        shape: ShapeLike = None,
        *,
        dtype: str = "bf16",
        hardware: Hardware | str | None = None,
        constants: Mapping[sympy.Symbol, object] | None = None,
        model: str = "book",
    ) -> CollectiveCost:
        """What this collective costs on ``array``.

        Args:
            array: the operand (notation or :class:`Array`).
            mesh: the mesh; None makes a symbolic one from the axes involved.
                Given as text or a mapping together with ``hardware``, the chip's
                wiring rules (wraparound, NVLink domains) apply.
            shape: dim sizes; dims left out stay symbolic.
            dtype: element type.
            hardware: a chip whose constants replace ``W_ici``, ``T_hop``, ...
            constants: extra ``{symbol: value}`` substitutions (applied after ``hardware``).
            model: ``'book'`` or ``'ring'``.

        Raises:
            CollectiveError, UnknownAxisError, DivisibilityError, ShapeError,
            UnknownHardwareError, UnknownModelError.
        """
        return CollectiveExpr(self, parse_array(array) if isinstance(array, str) else array).cost(
            mesh, shape, dtype=dtype, hardware=hardware, constants=constants, model=model
        )


@dataclass(frozen=True, slots=True)
class AllGather(Collective):
    """``AllGather_X(A[I_X, J]) -> A[I, J]``: every device along X receives every block.

    Examples:
        >>> str(AllGather("X").apply(Array.parse("A[I_XY, J]")))
        'A[I_Y, J]'
    """

    kind: ClassVar[str] = "AllGather"

    def apply(self, array: Array) -> Array:
        if not self.axes:
            raise self._fail(array, say("no mesh axis is named"), say("write AllGather_X(...) with the axes to gather"))
        for a in self.axes:
            if array.sharded_dim(a) is None:
                if a in array.unreduced:
                    hint = say(
                        "{axis} is unreduced, not a sharding: {reduce} sums it (or {scatter})",
                        axis=a,
                        reduce=f"AllReduce_{format_axes((a,))}",
                        scatter=f"ReduceScatter_{{{a},<dim>}}",
                    )
                elif array.axes:
                    hint = say(
                        "'{array}' is sharded along {axes}; there is nothing to gather over {axis}",
                        array=str(array),
                        axes=", ".join(array.axes),
                        axis=a,
                    )
                else:
                    hint = say(
                        "'{array}' is sharded along no axis; there is nothing to gather over {axis}",
                        array=str(array),
                        axis=a,
                    )
                raise self._fail(array, say("it is not sharded along {axis}", axis=a), hint)
        gone = set(self.axes)
        dims = tuple(
            unchecked_dim(d.name, tuple(x for x in d.axes if x not in gone)) if gone.intersection(d.axes) else d
            for d in array.dims
        )
        return unchecked_array(array.name, dims, array.unreduced)

    def notes(self, array: Array) -> tuple[str, ...]:
        out = []
        for d in array.dims:
            kept = [x for x in d.axes if x not in self.axes]
            removed = [x for x in d.axes if x in self.axes]
            if removed and kept and d.axes[: len(kept)] != tuple(kept):
                rest = format_axes(kept)
                out.append(
                    say(
                        "{removed} is not the minor-most axis of {dim}: after this collective each device holds "
                        "every {count}-th block of {name}, not the contiguous block {result} names; the result is "
                        "{result} only after a global permutation of {name} (the same on every device). Move the "
                        "minor-most axis first, or write {instead}, for contiguous blocks",
                        removed=",".join(removed),
                        dim=str(d),
                        count="·".join(f"|{k}|" for k in kept),
                        name=d.name,
                        result=f"{d.name}_{rest}",
                        instead=f"{d.name}_{format_axes((*kept, *removed))}",
                    )
                )
        return tuple(out)


@dataclass(frozen=True, slots=True)
class ReduceScatter(Collective):
    """``ReduceScatter_{X,K}(C[I, K]{U_X}) -> C[I, K_X]``: sum partial sums, keep one slice each.

    ``dim`` may be None when the array has a single dim.

    Examples:
        >>> str(ReduceScatter("X", "K").apply(Array.parse("C[I, K]{U_X}")))
        'C[I, K_X]'
    """

    dim: str | None = None
    kind: ClassVar[str] = "ReduceScatter"

    @property
    def subscript(self) -> str:
        if self.dim is None:
            return format_axes(self.axes)
        return "{" + format_axes(self.axes).strip("{}") + "," + self.dim + "}"

    def latex(self) -> str:
        sub = latex_axes(self.axes) + ("," + self.dim if self.dim else "")
        return rf"\text{{{self.kind}}}_{{{sub}}}"

    def target(self, array: Array) -> str:
        """The dim the result is sharded on (the named one, or the only dim)."""
        if self.dim is not None:
            if self.dim not in array.dim_names:
                raise self._fail(
                    array,
                    say("it has no dim {dim}", dim=self.dim),
                    say("scatter onto one of its dims: {dims}", dims=", ".join(array.dim_names)),
                )
            return self.dim
        if len(array.dims) == 1:
            return array.dims[0].name
        sub = format_axes(self.axes).strip("{}")
        raise self._fail(
            array,
            say("it does not say which dim to shard"),
            say(
                "name the dim after the axes: {options}",
                options=Choices(f"{self.kind}_{{{sub},{d}}}" for d in array.dim_names),
            ),
        )

    def apply(self, array: Array) -> Array:
        if not self.axes:
            raise self._fail(
                array, say("no mesh axis is named"), say("write {example}", example="ReduceScatter_{X,K}(...)")
            )
        self._require_unreduced(array)
        target = self.target(array)
        # each axis was unreduced (so not sharding any dim) and is listed once: the result is valid
        dims = tuple(unchecked_dim(d.name, d.axes + self.axes) if d.name == target else d for d in array.dims)
        return unchecked_array(array.name, dims, array.unreduced - set(self.axes))


@dataclass(frozen=True, slots=True)
class AllReduce(Collective):
    """``AllReduce_X(C[I, K]{U_X}) -> C[I, K]``: a ReduceScatter then an AllGather, twice the cost.

    With no axes it sums over every unreduced axis.

    Examples:
        >>> str(AllReduce("Y").apply(Array.parse("A[I_X, J]{U_Y}")))
        'A[I_X, J]'
    """

    kind: ClassVar[str] = "AllReduce"

    def resolved(self, array: Array) -> AllReduce:
        """This AllReduce with its axes filled in from ``array`` when none were named."""
        if self.axes:
            return self
        if not array.unreduced:
            raise self._fail(
                array, say("it has no unreduced axis"), say("an AllReduce sums partial sums: mark them {{U_X}}")
            )
        return AllReduce(tuple(sorted(array.unreduced)))

    def apply(self, array: Array) -> Array:
        op = self.resolved(array)
        op._require_unreduced(array)
        return unchecked_array(array.name, array.dims, array.unreduced - set(op.axes))


@dataclass(frozen=True, slots=True)
class AllToAll(Collective):
    """``AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]``: move a sharding from one dim to another.

    ``dim`` may be None when only one dim can receive the axes.

    Examples:
        >>> str(AllToAll("X", "J").apply(Array.parse("A[I_X, J_Y]")))
        'A[I, J_YX]'
    """

    dim: str | None = None
    kind: ClassVar[str] = "AllToAll"

    subscript = ReduceScatter.subscript
    latex = ReduceScatter.latex

    def target(self, array: Array) -> str:
        sources = {array.sharded_dim(a) for a in self.axes}
        if self.dim is not None:
            if self.dim not in array.dim_names:
                raise self._fail(
                    array,
                    say("it has no dim {dim}", dim=self.dim),
                    say("move the axes onto one of its dims: {dims}", dims=", ".join(array.dim_names)),
                )
            return self.dim
        candidates = [d for d in array.dim_names if d not in sources]
        if len(candidates) == 1:
            return candidates[0]
        sub = format_axes(self.axes).strip("{}")
        raise self._fail(
            array,
            say("it does not say which dim receives the axes"),
            say(
                "name it after the axes: {options}",
                options=Choices(f"AllToAll_{{{sub},{d}}}" for d in candidates or ["J"]),
            ),
        )

    def apply(self, array: Array) -> Array:
        if not self.axes:
            raise self._fail(array, say("no mesh axis is named"), say("write {example}", example="AllToAll_{X,J}(...)"))
        for a in self.axes:
            if a in array.unreduced:
                raise self._fail(
                    array,
                    say("it is unreduced over {axis}", axis=a),
                    say(
                        "sum the partial sums first ({scatter} shards the result directly)",
                        scatter=f"ReduceScatter_{{{a},<dim>}}",
                    ),
                )
            if array.sharded_dim(a) is None:
                raise self._fail(
                    array,
                    say("it is not sharded along {axis}", axis=a),
                    say(
                        "an AllToAll moves an existing sharding; a replicated axis can shard a dim "
                        "by slicing, with no communication"
                    ),
                )
        target = self.target(array)
        for a in self.axes:
            if array.sharded_dim(a) == target:
                raise self._fail(
                    array,
                    say("{axis} already shards {dim}", axis=a, dim=target),
                    say("move the axis to a different dim"),
                )
        gone = set(self.axes)
        dims = []
        for d in array.dims:
            kept = tuple(x for x in d.axes if x not in gone)
            axes = kept + self.axes if d.name == target else kept
            dims.append(d if axes == d.axes else unchecked_dim(d.name, axes))
        # each axis sharded some other dim and is listed once: the result is valid
        return unchecked_array(array.name, tuple(dims), array.unreduced)

    notes = AllGather.notes


@dataclass(frozen=True, slots=True)
class FusedAllToAll(AllToAll):
    """``AllToAll_{X→H,Y→B}(P[B, H, S_Y, T_X]) -> P[B_Y, H_X, S, T]``: several all-to-alls at once, one
    collective over all their axes, each moving its run of axes onto its own dim.

    What the moves do one after another, in one exchange: each device splits its block into one piece for
    every device of the group (the product of the moves' axes) and sends each its piece, as one all-to-all
    over all the axes does (XLA's partitioner emits it for a reshard that moves two dims at once). It sends
    ``(n - 1)/n`` of its block once, where the moves one by one send a share per move; so it is costed as
    one AllToAll over all the axes. The moves' axes are distinct, and no move's target dim is a dim any move
    takes axes from (each piece is then a block of the result cut from a block of the operand).

    Examples:
        >>> fused = FusedAllToAll.of([AllToAll(("Y",), "B"), AllToAll(("X",), "H")])
        >>> str(fused), str(fused.apply(Array.parse("P[B, H, S_Y, T_X]")))
        ('AllToAll_{X→H,Y→B}', 'P[B_Y, H_X, S, T]')
    """

    moves: tuple[AllToAll, ...] = ()

    @classmethod
    def of(cls, moves: Sequence[AllToAll]) -> FusedAllToAll:
        """The all-to-all that makes ``moves`` at once, in one order whatever theirs (by their axes)."""
        ordered = tuple(sorted(moves, key=lambda m: m.axes))
        return cls(tuple(a for m in ordered for a in m.axes), moves=ordered)

    @property
    def subscript(self) -> str:
        """Each move's axes, an arrow and its dim: ``{X→H,Y→B}``."""
        return "{" + ",".join(f"{format_axes(m.axes).strip('{}')}→{m.dim}" for m in self.moves) + "}"

    def latex(self) -> str:
        moves = ",".join(rf"{format_axes(m.axes).strip('{}')}\to {m.dim}" for m in self.moves)
        return rf"\text{{{self.kind}}}_{{{moves}}}"

    def target(self, array: Array) -> str:
        raise self._fail(array, say("it moves axes onto several dims"), say("read each move's own target"))

    def shifts(self, array: Array) -> str:
        """Each move as notation, from ``array``: ``X: T → H, Y: S → B`` (the same in every language).

        Examples:
            >>> fused = FusedAllToAll.of([AllToAll(("Y",), "B"), AllToAll(("X",), "H")])
            >>> fused.shifts(Array.parse("P[B, H, S_Y, T_X]"))
            'X: T → H, Y: S → B'
        """
        return ", ".join(f"{format_axes(m.axes)}: {array.sharded_dim(m.axes[0])} → {m.dim}" for m in self.moves)

    def apply(self, array: Array) -> Array:
        if len(self.moves) < 2 or self.axes != tuple(a for m in self.moves for a in m.axes):
            raise self._fail(array, say("it fuses fewer than two moves"), say("write each move as an AllToAll"))
        sources = {array.sharded_dim(a) for a in self.axes}
        targets = [m.dim for m in self.moves]
        if len(set(targets)) < len(targets) or sources & set(targets):
            raise self._fail(
                array,
                say("its moves share a dim"),
                say("each move needs its own target dim, which no move takes axes from"),
            )
        out = array
        for m in self.moves:
            out = m.apply(out)
        return out

    def notes(self, array: Array) -> tuple[str, ...]:
        out: list[str] = []
        for m in self.moves:
            step = m(array)
            out.extend(step.notes)
            array = step.output
        return tuple(out)


@dataclass(frozen=True, slots=True)
class CollectivePermute(Collective):
    """``CollectivePermute_X``: every device sends its block to the next one along X (JAX's ``ppermute``).

    The sharding is unchanged; which block sits where shifts by one.
    """

    kind: ClassVar[str] = "CollectivePermute"

    def apply(self, array: Array) -> Array:
        if len(self.axes) != 1:
            raise self._fail(
                array,
                say("a permute runs along exactly one axis, not {count}", count=len(self.axes)),
                say("write {example}", example="CollectivePermute_X(...)"),
            )
        return array


@dataclass(frozen=True, slots=True)
class DynamicSlice(Collective):
    """``DynamicSlice_{Y,I}(A[I, J]) -> A[I_Y, J]``: keep one slice along an axis the array is replicated over.

    Not a collective: no data moves, each device just keeps part of what it holds,
    so it costs nothing. It lets a plan shard a dim along an idle mesh axis (to
    split the work, or to shrink what a later collective moves).

    Examples:
        >>> str(DynamicSlice("Y", "I").apply(Array.parse("A[I_X, J]")))
        'A[I_XY, J]'
    """

    dim: str | None = None
    kind: ClassVar[str] = "DynamicSlice"

    subscript = ReduceScatter.subscript
    latex = ReduceScatter.latex

    def apply(self, array: Array) -> Array:
        if not self.axes:
            raise self._fail(
                array, say("no mesh axis is named"), say("write {example}", example="DynamicSlice_{Y,I}(...)")
            )
        for a in self.axes:
            if array.sharded_dim(a) is not None:
                raise self._fail(
                    array,
                    say("{axis} already shards {dim}", axis=a, dim=array.sharded_dim(a)),
                    say(
                        "a slice can only split along an axis the array is replicated over; "
                        "{alltoall} moves an existing sharding",
                        alltoall=f"AllToAll_{{{a},<dim>}}",
                    ),
                )
            if a in array.unreduced:
                raise self._fail(
                    array,
                    say("it is unreduced over {axis}", axis=a),
                    say("{scatter} sums the partial sums and shards at once", scatter=f"ReduceScatter_{{{a},<dim>}}"),
                )
        if self.dim is None:
            if len(array.dims) != 1:
                sub = format_axes(self.axes).strip("{}")
                raise self._fail(
                    array,
                    say("it does not say which dim to slice"),
                    say("name the dim: {example}", example=f"DynamicSlice_{{{sub},{array.dim_names[0]}}}"),
                )
            target = array.dims[0].name
        else:
            target = ReduceScatter(self.axes, self.dim).target(array)
        # the new axes (checked as names by Dim) neither shard nor are unreduced: the result is valid
        dims = tuple(Dim(d.name, d.axes + self.axes) if d.name == target else d for d in array.dims)
        return unchecked_array(array.name, dims, array.unreduced)


_KINDS: dict[str, type[Collective]] = {
    c.kind: c for c in (AllGather, ReduceScatter, AllReduce, AllToAll, CollectivePermute, DynamicSlice)
}

# -- applied collectives -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CollectiveExpr:
    """A collective applied to an array: ``AllGather_X(A[I_X, J]) -> A[I, J]``.

    Building one checks that the collective fits (``CollectiveError`` otherwise).
    """

    op: Collective
    operand: Array
    output: Array = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.op, AllReduce):
            object.__setattr__(self, "op", self.op.resolved(self.operand))
        object.__setattr__(self, "output", self.op.apply(self.operand))

    @property
    def notes(self) -> tuple[str, ...]:
        """Caveats, e.g. a gather of a non-minor axis leaving rows strided."""
        return self.op.notes(self.operand)

    def __str__(self) -> str:
        return f"{self.op}({self.operand}) -> {self.output}"

    def __repr__(self) -> str:
        return f"parse_collective({str(self)!r})"

    def unicode(self) -> str:
        """``AllGather_X(A[I_X, J]) → A[I, J]``."""
        return f"{self.op}({self.operand}) → {self.output}"

    def latex(self) -> str:
        """``\\text{AllGather}_{X}(\\mathbf{A}[I_{X}, J]) \\rightarrow \\mathbf{A}[I, J]``."""
        return rf"{self.op.latex()}({self.operand.latex()}) \rightarrow {self.output.latex()}"

    def _repr_latex_(self) -> str:
        return "$" + self.latex() + "$"

    @memoized
    def cost(
        self,
        mesh: Mesh | Mapping[str, object] | str | None = None,
        shape: ShapeLike = None,
        *,
        dtype: str = "bf16",
        hardware: Hardware | str | None = None,
        constants: Mapping[sympy.Symbol, object] | None = None,
        model: str = "book",
    ) -> CollectiveCost:
        """What it costs; see :meth:`Collective.cost`."""
        return collective_cost(self, mesh, shape, dtype=dtype, hardware=hardware, constants=constants, model=model)


def parse_collective(text: str) -> CollectiveExpr:
    """Parse and check a collective such as ``'ReduceScatter_{X,K}(C[I, K]{U_X})'``.

    A stated result (``... -> C[I, K_X]``) must match what the collective produces.

    Raises:
        NotationError: the text does not parse.
        CollectiveError: the collective does not fit its operand, or the stated
            result is not what it produces.
    """
    if not isinstance(text, str):
        raise NotationError(
            say("expected a collective as text, got {type}", type=type(text).__name__),
            hint=say("pass e.g. {example}", example="'AllGather_X(A[I_X])'"),
        )
    return _parse_collective(text)


@lru_cache(maxsize=4096)
def _parse_collective(text: str) -> CollectiveExpr:
    syntax = parse_collective_syntax(text)
    return _from_syntax(syntax)


def _from_syntax(syntax: CollectiveSyntax) -> CollectiveExpr:
    cls = _KINDS[syntax.kind]
    axes = syntax.axes or ()
    op: Collective
    try:
        if syntax.moves:  # AllToAll_{X→H,Y→B}: the moves in one exchange (one move is a plain AllToAll)
            moves = [AllToAll(run, dim) for run, dim in syntax.moves]
            op = moves[0] if len(moves) == 1 else FusedAllToAll.of(moves)
        elif cls in (ReduceScatter, AllToAll, DynamicSlice):
            op = cls(axes, syntax.dim)
        else:
            op = cls(axes)
        expr = CollectiveExpr(op, syntax.operand)
    except SymshardError as err:
        raise type(err)(
            say("{what} in '{text}'", what=err.message, text=syntax.text)
            if f"'{syntax.text}'" not in err.message
            else err.message,
            text=syntax.text,
            span=syntax.subscript_span if syntax.subscript_span[1] > syntax.subscript_span[0] else syntax.kind_span,
            hint=err.hint,
        ) from None
    if syntax.stated_output is not None and syntax.stated_output != expr.output:
        stated = syntax.stated_output
        if stated.renamed(expr.output.name) == expr.output:
            return expr  # the result may carry another name
        raise CollectiveError(
            say(
                "{expression} gives {output}, not {stated}, in '{text}'",
                expression=f"{op}({syntax.operand})",
                output=str(expr.output),
                stated=str(stated),
                text=syntax.text,
            ),
            text=syntax.text,
            span=syntax.output_span,
            hint=say(
                "write -> {output}, or pick the collective that produces {stated}",
                output=str(expr.output),
                stated=str(stated),
            ),
        )
    return expr

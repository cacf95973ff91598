"""An array placed on a mesh: what each device holds and what it all costs in memory.

:func:`place` joins the three things a sharding question needs: the notation
(``A[I_XY, J]``), a mesh (``X=8, Y=2``) and sizes (``I=1024, J=4096`` in fp32).
The result answers the book's first questions exactly: the local (per-device)
shape, bytes per device, total bytes over all devices, how many copies exist,
and how long one device takes to read its shard from HBM. Numbers in, exact
integers out; symbols in, SymPy expressions out.

This is also where the rules that need a mesh are checked: every axis must be
in the mesh, and a numeric dim must split evenly over its shards.

Examples:
    >>> p = place("A[I_XY, J]", "X=8,Y=2", {"I": 1024, "J": 4096}, dtype="fp32")
    >>> p.local_shape, p.bytes_per_device, p.copies
    ((64, 4096), 1048576, 1)
    >>> place("A[I_XY, J]").local_shape
    (I/(|X|*|Y|), J)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy

from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.symbols import W_hbm
from ..errors import DivisibilityError, HardwareError, NotationError, ShapeError
from ..machines.mesh import Mesh
from ..messages import say
from ..notation.arrays import Array
from ..notation.parser import parse_array
from ..notation.sizes import MAX_SIZE, parse_size_value, parse_sizes

if TYPE_CHECKING:
    from ..machines.chips import Hardware
from ..algebra.symbols import dim as dim_symbol

__all__ = ["Placement", "place", "resolve_shape"]

ShapeLike = Mapping[str, object] | str | None


def resolve_shape(shape: ShapeLike, dims: tuple[str, ...], *, context: str) -> dict[str, sympy.Expr]:
    """Sizes for ``dims``: the given numbers, and the dim's symbol where none is given.

    Args:
        shape: ``{"I": 1024}``, the text ``"I=1024,J=4096"`` or None.
        dims: the dim names that need sizes.
        context: the notation the sizes are for, quoted in errors.

    Raises:
        ShapeError: a size that is not a positive integer, or a size for a dim
            that ``context`` does not have.
    """
    given: dict[str, sympy.Expr] = {}
    if shape is None:
        pass
    elif isinstance(shape, str):
        try:
            for name, text, span in parse_sizes(shape, what=say("shape")):
                n = parse_size_value(text, name=name, text=shape, span=span, what=say("shape"))
                if name in given:
                    raise ShapeError(
                        say("dim {dim} is given twice in the shape '{text}'", dim=name, text=shape),
                        text=shape,
                        span=span,
                        hint=say("give each dim one size"),
                    )
                given[name] = dim_symbol(name) if n is None else sympy.Integer(n)
        except NotationError as err:
            raise ShapeError(err.message, text=err.text, span=err.span, hint=err.hint) from None
    elif isinstance(shape, Mapping):
        for key, value in shape.items():
            given[str(key)] = _size(value, str(key))
    else:
        raise ShapeError(
            say("cannot read the shape {value}", value=repr(shape)),
            hint=say("pass a mapping like {{'I': 1024}} or the text 'I=1024,J=4096'"),
        )
    unknown = sorted(set(given) - set(dims))
    if unknown:
        raise ShapeError(
            say(
                "the shape gives a size for {dims}, but '{text}' has no such dim", dims=", ".join(unknown), text=context
            ),
            hint=say("its dims are {dims}; check the spelling", dims=", ".join(dims)),
        )
    return {d: given.get(d, dim_symbol(d)) for d in dims}


def _size(value: object, name: str) -> sympy.Expr:
    if value is None:
        return dim_symbol(name)
    if isinstance(value, sympy.Basic):
        expr = value
    elif isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _not_positive(name, value)
    else:
        try:
            expr = sympy.Integer(str(value).strip()) if not isinstance(value, float) else sympy.Rational(repr(value))
        except (TypeError, ValueError):
            raise _not_positive(name, value) from None
    if expr.is_number and not (expr.is_integer and expr.is_positive):
        raise _not_positive(name, value)
    if expr.is_number and expr > MAX_SIZE:
        raise ShapeError(
            say(
                "dim {dim} has size {value}, more than {limit}",
                dim=name,
                value=f"{float(expr):.3e}",
                limit=f"{MAX_SIZE:.0e}",
            ),
            hint=say("check the size for a typo"),
        )
    if not expr.is_number and not expr.is_positive:
        raise ShapeError(
            say("dim {dim} has symbolic size {size}, which is not declared positive", dim=name, size=str(expr)),
            hint=say("use symshard.algebra.symbols.dim(name) for symbolic sizes"),
        )
    return expr


def _not_positive(name: str, value: object) -> ShapeError:
    return ShapeError(
        say("dim {dim} has size {value}, which is not a positive integer", dim=name, value=repr(value)),
        hint=say("e.g. {example}", example=f"{name}=1024"),
    )


def check_on_mesh(array: Array, mesh: Mesh, sizes: Mapping[str, sympy.Expr]) -> None:
    """Check the mesh-dependent rules: known axes, and dims that split evenly.

    Raises:
        UnknownAxisError: the array names an axis the mesh lacks.
        DivisibilityError: a numeric dim size is not a multiple of its shard count.
    """
    names = mesh.names
    if any(a not in names for d in array.dims for a in d.axes) or not array.unreduced <= set(names):
        text, spans = array.text_and_spans()  # only to quote the array in the error
        for i, d in enumerate(array.dims):
            for j, a in enumerate(d.axes):
                mesh.axis(a, context=text, span=spans[("axis", i, j)])
        for a in sorted(array.unreduced):
            mesh.axis(a, context=text, span=spans[("unreduced", a)])
    for i, d in enumerate(array.dims):
        if not d.axes:
            continue
        count = mesh.group_size(d.axes)
        size = sizes[d.name]
        if size.is_number and count.is_number and size % count != 0:
            text, spans = array.text_and_spans()
            over = "·".join(d.axes)
            raise DivisibilityError(
                say(
                    "dim {dim} of size {size} does not split evenly over the {count} {count:device|devices} of {over} in '{text}'",
                    dim=d.name,
                    size=str(size),
                    count=str(count),
                    over=over,
                    text=text,
                ),
                text=text,
                span=spans[("dim", i)],
                hint=say(
                    "make {dim} a multiple of {count}, or shard it over fewer mesh axes", dim=d.name, count=str(count)
                ),
            )


@dataclass(frozen=True, slots=True)
class Placement:
    """An array on a mesh with sizes and a dtype; every figure an exact SymPy value.

    Build one with :func:`place`.
    """

    array: Array
    mesh: Mesh
    sizes: tuple[tuple[str, sympy.Expr], ...]
    dtype: str

    @property
    def global_shape(self) -> tuple[sympy.Expr, ...]:
        """The logical (unsharded) shape."""
        return tuple(s for _, s in self.sizes)

    @property
    def local_shape(self) -> tuple[sympy.Expr, ...]:
        """The shape of the block each device holds."""
        return tuple(s / self.mesh.group_size(d.axes) for d, (_, s) in zip(self.array.dims, self.sizes, strict=True))

    @property
    def shards(self) -> sympy.Expr:
        """How many distinct blocks the array is cut into (product of sharding axes)."""
        return self.mesh.group_size(self.array.axes)

    @property
    def partial_sums(self) -> sympy.Expr:
        """How many partial sums make up each element (product of unreduced axes)."""
        return self.mesh.group_size(sorted(self.array.unreduced))

    @property
    def copies(self) -> sympy.Expr:
        """How many devices hold the same block: the product of the axes that neither shard nor are unreduced."""
        used = set(self.array.axes) | set(self.array.unreduced)
        return sympy.prod([a.size for a in self.mesh.axes if a.name not in used])

    @property
    def element_bytes(self) -> sympy.Rational:
        """Bytes per element of the dtype."""
        return dtype_bytes(self.dtype)

    @property
    def logical_bytes(self) -> sympy.Expr:
        """Bytes of one full copy of the array."""
        return self.element_bytes * sympy.prod(self.global_shape)

    @property
    def bytes_per_device(self) -> sympy.Expr:
        """Bytes of the block each device holds."""
        return self.element_bytes * sympy.prod(self.local_shape)

    @property
    def total_bytes(self) -> sympy.Expr:
        """Bytes over all devices: bytes per device times the number of devices."""
        return self.bytes_per_device * self.mesh.devices

    def hbm_time(self, hardware: Hardware | str | None = None) -> sympy.Expr:
        """Seconds for one device to read its block from HBM: ``bytes_per_device / W_hbm``.

        Args:
            hardware: a :class:`~symshard.machines.chips.Hardware` or preset name; None
                keeps the symbol ``W_hbm``.

        Raises:
            HardwareError: the chip has no HBM bandwidth figure.
        """
        if hardware is None:
            return self.bytes_per_device / W_hbm
        from ..machines.presets import hardware as lookup

        hw = lookup(hardware)
        if hw.hbm_bandwidth is None:
            raise HardwareError(
                say("{chip} has no HBM bandwidth figure", chip=hw.label),
                hint=say("set one with hardware.with_constants(W_hbm=...) or --hw-set W_hbm=..."),
            )
        return self.bytes_per_device / hw.hbm_bandwidth

    def __str__(self) -> str:
        shape = ", ".join(f"{n}={s}" for n, s in self.sizes)
        return f"{self.array} on mesh {self.mesh} with {shape} ({self.dtype})"


def place(
    array: Array | str,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    *,
    dtype: str = "bf16",
) -> Placement:
    """Place ``array`` on ``mesh`` with the given sizes and dtype.

    Args:
        array: an :class:`~symshard.notation.arrays.Array` or its notation.
        mesh: a :class:`~symshard.machines.mesh.Mesh`, a mapping or text (``"X=8,Y=2"``);
            None makes a symbolic mesh from the axes the array names.
        shape: sizes of some or all dims; the others stay symbolic.
        dtype: element type (``bf16``, ``fp32``, ``int8``, ...).

    Raises:
        UnknownAxisError: the array names an axis the mesh lacks.
        DivisibilityError: a dim size its shards do not divide.
        ShapeError: sizes that are not positive integers, or for dims the array lacks.
        UnknownDtypeError: a dtype symshard does not know.
    """
    arr = parse_array(array) if isinstance(array, str) else array
    if mesh is None:
        names = list(dict.fromkeys([*arr.axes, *sorted(arr.unreduced)]))
        m = Mesh({n: None for n in names})
    else:
        m = mesh if isinstance(mesh, Mesh) else Mesh(mesh)
    sizes = resolve_shape(shape, arr.dim_names, context=str(arr))
    check_on_mesh(arr, m, sizes)
    return Placement(arr, m, tuple(sizes.items()), canonical_dtype(dtype))

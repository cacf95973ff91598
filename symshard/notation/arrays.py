"""Sharded arrays as values: ``A[I_XY, J]{U_Z}`` without sizes or a mesh.

An :class:`Array` is a name, a tuple of :class:`Dim` (a dim name plus the ordered
mesh axes that shard it) and the frozenset of mesh axes over which the array is
*unreduced* (each device holds a partial sum). It is pure notation: sizes come
from a shape mapping and axis sizes from a :class:`~symshard.machines.mesh.Mesh` later.

The rules that need no mesh are checked when an array is built: no dim twice,
no mesh axis twice, no axis both sharding and unreduced. Printing is canonical
and round-trips through :func:`symshard.notation.parser.parse_array`.

Examples:
    >>> a = Array("A", (Dim("I", ("X", "Y")), Dim("J")), frozenset({"Z"}))
    >>> str(a)
    'A[I_XY, J]{U_Z}'
    >>> a.latex()
    '\\\\mathbf{A}[I_{XY}, J]\\\\{U_{Z}\\\\}'
    >>> a.axes, a.sharded_dim("Y")
    (('X', 'Y'), 'I')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import NotationError, ShardingError, TooLargeError
from ..messages import say

__all__ = [
    "MAX_DIMS",
    "Array",
    "Dim",
    "check_axis_name",
    "format_axes",
    "latex_axes",
    "register_readers",
    "unchecked_array",
    "unchecked_dim",
]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9']*(?:_[A-Za-z0-9']+)*\Z")
_DIM = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")
_AXIS = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")

Spans = Mapping[tuple, tuple[int, int]]

MAX_DIMS = 32
"""The most dims an array may have. Every einsum of a model has a handful; the work on one grows faster
than its dims (an array of 2,000 dims kept a plan busy for minutes), so more is refused when it is built."""


def check_axis_name(name: str, *, text: str | None = None, span: tuple[int, int] | None = None) -> str:
    """Return ``name`` if it can be a mesh axis name, else raise :class:`NotationError`.

    Axis names are identifiers. A name of two or more capital letters (``DP``) is
    refused because ``I_{DP}`` reads as the two axes D and P, as in the book's
    ``I_{XY}``; write it in lower case (``dp``) instead.
    """
    if not isinstance(name, str) or not _AXIS.match(name):
        raise NotationError(
            say("'{name}' is not a valid mesh axis name", name=name),
            text=text,
            span=span,
            hint=say("axis names start with a letter and contain only letters, digits and _"),
        )
    if len(name) > 1 and name.isalpha() and name.isupper():
        raise NotationError(
            say("mesh axis name '{name}' would read as the axes {axes}", name=name, axes=", ".join(name)),
            text=text,
            span=span,
            hint=say(
                "capital runs like I_{{{name}}} mean one axis per letter; name the axis '{lower}' instead",
                name=name,
                lower=name.lower(),
            ),
        )
    return name


def format_axes(axes: Iterable[str]) -> str:
    """Axes as written after ``_``: ``XY`` for one-letter names, ``{data,model}`` otherwise."""
    axes = tuple(axes)
    if all(len(a) == 1 for a in axes):
        return "".join(axes)
    return "{" + ",".join(axes) + "}"


def latex_axes(axes: Iterable[str]) -> str:
    """Axes as a LaTeX subscript body: ``XY`` or ``\\mathrm{data},\\mathrm{model}``."""
    axes = tuple(axes)
    if all(len(a) == 1 and a.isupper() for a in axes):
        return "".join(axes)
    if all(len(a) == 1 for a in axes):
        return ",".join(axes)  # I_{x,y}: a lower-case run in braces would read as one name
    return ",".join(r"\mathrm{" + a.replace("_", r"\_") + "}" for a in axes)


@dataclass(frozen=True, slots=True)
class Dim:
    """One dimension of an array: its name and the mesh axes that shard it, major first.

    Examples:
        >>> str(Dim("I", ("X", "Y"))), str(Dim("J")), str(Dim("B", ("data",)))
        ('I_XY', 'J', 'B_{data}')
    """

    name: str
    axes: tuple[str, ...] = ()
    _hash: int = field(init=False, repr=False, compare=False)

    def __hash__(self) -> int:  # cached: planners use dims as dict keys by the thousand
        return self._hash

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _DIM.match(self.name):
            raise NotationError(
                say("'{name}' is not a valid dim name", name=self.name),
                hint=say("dim names start with a letter and contain letters and digits only, e.g. B or D2"),
            )
        axes = (self.axes,) if isinstance(self.axes, str) else tuple(self.axes)
        object.__setattr__(self, "axes", axes)
        for a in axes:
            check_axis_name(a)
        object.__setattr__(self, "_hash", hash((self.name, axes)))

    @property
    def sharded(self) -> bool:
        """Whether any mesh axis shards this dim."""
        return bool(self.axes)

    def __str__(self) -> str:
        return self.name + ("_" + format_axes(self.axes) if self.axes else "")

    def latex(self) -> str:
        """The dim in LaTeX: ``I_{XY}``."""
        return self.name + ("_{" + latex_axes(self.axes) + "}" if self.axes else "")


@dataclass(frozen=True, slots=True)
class Array:
    """A sharded array in the book's notation: ``A[I_XY, J]{U_Z}``.

    Args:
        name: the array's name (may be empty for an anonymous ``[E_Y, F]``).
        dims: its dimensions, in order; ``Dim`` objects or strings like ``"I_X"``.
        unreduced: mesh axes over which each device holds only a partial sum.

    Raises:
        NotationError: a bad name, no dims, or a dim named twice.
        ShardingError: a mesh axis used twice, or both sharding and unreduced.
    """

    name: str
    dims: tuple[Dim, ...]
    unreduced: frozenset[str] = field(default_factory=frozenset)
    _hash: int = field(init=False, repr=False, compare=False)

    def __hash__(self) -> int:  # cached: planners use arrays as dict keys by the thousand
        return self._hash

    def __post_init__(self) -> None:
        given = tuple(self.dims)
        if len(given) > MAX_DIMS:
            raise TooLargeError(
                say(
                    "array {name} has {count} dims, more than symshard takes ({limit})",
                    name=self.name or "[...]",
                    count=f"{len(given):,}",
                    limit=MAX_DIMS,
                ),
                hint=say("merge dims that are sharded together into one, or split the einsum into smaller ones"),
            )
        dims = tuple(_as_dim(d) for d in given)
        object.__setattr__(self, "dims", dims)
        unreduced = (self.unreduced,) if isinstance(self.unreduced, str) else self.unreduced
        object.__setattr__(self, "unreduced", frozenset(unreduced))
        for a in self.unreduced:
            check_axis_name(a)
        axes = [a for d in dims for a in d.axes]
        fine = (
            dims
            and (not self.name or _NAME.match(self.name))
            and len({d.name for d in dims}) == len(dims)
            and len(set(axes)) == len(axes)
            and self.unreduced.isdisjoint(axes)
        )
        if not fine:  # build the text only to explain what is wrong
            text, spans = self.text_and_spans()
            check_array_rules(self.name, self.dims, self.unreduced, text, spans)
        object.__setattr__(self, "_hash", hash((self.name, dims, self.unreduced)))

    # -- reading -------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Array:
        """Parse ``text`` such as ``'A[I_X, J]{U_Y}'`` (see :mod:`symshard.notation.parser`)."""
        return _READERS["array"](text)

    @property
    def dim_names(self) -> tuple[str, ...]:
        """The names of the dims, in order."""
        return tuple(d.name for d in self.dims)

    @property
    def axes(self) -> tuple[str, ...]:
        """Every mesh axis that shards some dim, in dim order."""
        return tuple(a for d in self.dims for a in d.axes)

    def dim(self, name: str) -> Dim:
        """The dim called ``name``.

        Raises:
            ShardingError: if the array has no such dim.
        """
        for d in self.dims:
            if d.name == name:
                return d
        raise ShardingError(
            say("'{array}' has no dim {dim}", array=str(self), dim=name),
            hint=say("its dims are {dims}", dims=", ".join(self.dim_names)),
        )

    def sharded_dim(self, axis: str) -> str | None:
        """The name of the dim that mesh axis ``axis`` shards, or None."""
        for d in self.dims:
            if axis in d.axes:
                return d.name
        return None

    # -- building variants -----------------------------------------------------

    def with_dims(self, dims: Iterable[Dim | str]) -> Array:
        """A copy with other dims (validated)."""
        return replace(self, dims=tuple(_as_dim(d) for d in dims))

    def with_axes(self, dim: str, axes: Iterable[str]) -> Array:
        """A copy in which ``dim`` is sharded by ``axes`` (in that order)."""
        self.dim(dim)
        return self.with_dims(Dim(d.name, tuple(axes)) if d.name == dim else d for d in self.dims)

    def with_unreduced(self, axes: Iterable[str]) -> Array:
        """A copy with another set of unreduced axes (validated)."""
        return replace(self, unreduced=frozenset(axes))

    def renamed(self, name: str) -> Array:
        """A copy with another array name."""
        return replace(self, name=name)

    # -- printing ------------------------------------------------------------

    def text_and_spans(self) -> tuple[str, dict[tuple, tuple[int, int]]]:
        """The canonical text and where each part of it stands.

        Keys: ``("dim", i)`` for the name of dim ``i``, ``("axis", i, j)`` for its
        ``j``-th axis, ``("unreduced", axis)`` for an axis in the unreduced marker.
        """
        spans: dict[tuple, tuple[int, int]] = {}
        out = self.name + "["
        for i, d in enumerate(self.dims):
            if i:
                out += ", "
            spans[("dim", i)] = (len(out), len(out) + len(d.name))
            out += d.name
            if d.axes:
                out += "_"
                braced = not all(len(a) == 1 for a in d.axes)
                out += "{" if braced else ""
                for j, a in enumerate(d.axes):
                    if braced and j:
                        out += ","
                    spans[("axis", i, j)] = (len(out), len(out) + len(a))
                    out += a
                out += "}" if braced else ""
        out += "]"
        if self.unreduced:
            axes = sorted(self.unreduced)
            out += "{U_"
            braced = not all(len(a) == 1 for a in axes)
            out += "{" if braced else ""
            for j, a in enumerate(axes):
                if braced and j:
                    out += ","
                spans[("unreduced", a)] = (len(out), len(out) + len(a))
                out += a
            out += "}" if braced else ""
            out += "}"
        return out, spans

    def __str__(self) -> str:
        return self.text_and_spans()[0]

    def __repr__(self) -> str:
        return f"Array.parse({str(self)!r})"

    def unicode(self) -> str:
        """The Unicode form; for an array it is the canonical form.

        Plain text has no subscript capitals, so arrays print as ``A[I_XY, J]``;
        expressions built from them use ``·`` and ``→`` in their Unicode forms.
        """
        return str(self)

    def latex(self) -> str:
        """The array in LaTeX: ``\\mathbf{A}[I_{XY}, J]\\{U_{Z}\\}``."""
        name = r"\mathbf{" + self.name.replace("_", r"\_") + "}" if self.name else ""
        body = name + "[" + ", ".join(d.latex() for d in self.dims) + "]"
        if self.unreduced:
            body += r"\{U_{" + latex_axes(sorted(self.unreduced)) + r"}\}"
        return body

    def _repr_latex_(self) -> str:
        return "$" + self.latex() + "$"


# The readers of the notation, which build arrays and so sit above this module: symshard.notation.parser
# registers them when it is imported (as `import symshard` does), so that an array can be read from
# text here without this module importing the parser.
_READERS: dict[str, Callable[[str], Any]] = {}


def register_readers(*, array: Callable[[str], Array], dim: Callable[[str], Dim]) -> None:
    """Let :meth:`Array.parse` and text dims (``Array("A", ["I_X"])``) use the notation's parser.

    :mod:`symshard.notation.parser` calls this when it is imported; nothing else needs to.
    """
    _READERS.update(array=array, dim=dim)


def _as_dim(d: Dim | str | tuple) -> Dim:
    if isinstance(d, Dim):
        return d
    if isinstance(d, str):
        return _READERS["dim"](d)
    if isinstance(d, tuple) and len(d) == 2:
        return Dim(d[0], d[1])
    raise NotationError(say("cannot read {dim} as a dim", dim=repr(d)), hint=say("pass Dim('I', ('X',)) or 'I_X'"))


def check_array_rules(
    name: str,
    dims: tuple[Dim, ...],
    unreduced: frozenset[str],
    text: str,
    spans: Spans,
) -> None:
    """Raise the first broken mesh-free rule of an array, pointing into ``text``.

    ``spans`` maps ``("dim", i)``, ``("axis", i, j)`` and ``("unreduced", axis)``
    to offsets in ``text``; the parser passes the user's text and its offsets,
    :class:`Array` its own canonical text.
    """
    if name and not _NAME.match(name):
        raise NotationError(
            say("'{name}' is not a valid array name in '{text}'", name=name, text=text),
            text=text,
            span=(0, len(name)),
            hint=say("array names start with a letter, e.g. A, W_in or dW"),
        )
    if not dims:
        raise NotationError(
            say("array '{text}' has no dims", text=text),
            text=text,
            span=(len(name), len(text)),
            hint=say("list its dims inside the brackets, e.g. A[I, J]"),
        )
    seen_dims: dict[str, int] = {}
    for i, d in enumerate(dims):
        if d.name in seen_dims:
            raise NotationError(
                say("dim {dim} appears twice in '{text}'", dim=d.name, text=text),
                text=text,
                span=spans.get(("dim", i)),
                hint=say("give each dimension its own name (e.g. {dim} and {dim}2)", dim=d.name),
            )
        seen_dims[d.name] = i
    owner: dict[str, tuple[int, int]] = {}
    for i, d in enumerate(dims):
        for j, a in enumerate(d.axes):
            if a in owner:
                first = dims[owner[a][0]].name
                if first == d.name:
                    raise ShardingError(
                        say(
                            "mesh axis {axis} appears twice in the sharding of {dim} in '{text}'",
                            axis=a,
                            dim=d.name,
                            text=text,
                        ),
                        text=text,
                        span=spans.get(("axis", i, j)),
                        hint=say("list each mesh axis once, e.g. {example}", example=f"{d.name}_{a}"),
                    )
                raise ShardingError(
                    say(
                        "mesh axis {axis} shards both {first} and {second} in '{text}'",
                        axis=a,
                        first=first,
                        second=d.name,
                        text=text,
                    ),
                    text=text,
                    span=spans.get(("axis", i, j)),
                    hint=say(
                        "a mesh axis can shard at most one dimension; {gather} one of them first",
                        gather=f"AllGather_{format_axes((a,))}",
                    ),
                )
            owner[a] = (i, j)
    for a in sorted(unreduced):
        if a in owner:
            i, j = owner[a]
            dname = dims[i].name
            raise ShardingError(
                say("mesh axis {axis} both shards {dim} and marks '{text}' unreduced", axis=a, dim=dname, text=text),
                text=text,
                span=spans.get(("unreduced", a), spans.get(("axis", i, j))),
                hint=say(
                    "an unreduced axis holds partial sums of the whole array: "
                    "{scatter} turns {marker} into a sharding, {reduce} removes it",
                    scatter=f"ReduceScatter_{{{a},{dname}}}",
                    marker=f"{{U_{format_axes((a,))}}}",
                    reduce=f"AllReduce_{format_axes((a,))}",
                ),
            )


# -- built without the checks, for the planner's hot paths ------------------------------------

_new = object.__new__
_set = object.__setattr__


def unchecked_dim(name: str, axes: tuple[str, ...]) -> Dim:
    """``Dim(name, axes)`` without the checks, for a name and axes taken from valid dims (the planner
    builds thousands; each check would only confirm what the input's own checks did).

    Examples:
        >>> unchecked_dim("I", ("X",)) == Dim("I", ("X",))
        True
    """
    d = _new(Dim)
    _set(d, "name", name)
    _set(d, "axes", axes)
    _set(d, "_hash", hash((name, axes)))
    return d


def unchecked_array(name: str, dims: tuple[Dim, ...], unreduced: frozenset[str]) -> Array:
    """``Array(name, dims, unreduced)`` without the checks: only for a result a collective's own
    checks have shown valid (each axis once, none both sharding and unreduced, the dims unchanged).

    Examples:
        >>> unchecked_array("A", (Dim("I", ("X",)), Dim("J")), frozenset()) == Array.parse("A[I_X, J]")
        True
    """
    a = _new(Array)
    _set(a, "name", name)
    _set(a, "dims", dims)
    _set(a, "unreduced", unreduced)
    _set(a, "_hash", hash((name, dims, unreduced)))
    # one object per array: the planners key their caches by arrays, and a key that is the same object
    # is found without comparing dims
    if len(_INTERNED) > 1 << 17:
        _INTERNED.clear()
    return _INTERNED.setdefault(a, a)


_INTERNED: dict[Array, Array] = {}

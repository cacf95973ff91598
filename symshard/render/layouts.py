"""Layout pictures: which device holds which block of an array, as coloured grids.

The picture has two halves, as in the chapter's figures. On the left, the global
array cut into blocks along each sharded dim (rows: the first dim; columns: the
others, flattened in order, with one header row per dim); each block has its own
colour and label. On the right, the mesh as a grid of devices (rows: the first
mesh axis; columns: the others), each device filled with the colour of what it
holds and labelled with its block: a replicated block shows up on several
devices, and a partial sum (an unreduced axis, ``{U_Z}``) is hatched and marked
"partial".

:func:`layout` is the public entry point; :func:`scene` and :func:`panel` are
the pieces :mod:`symshard.render.collectives` reuses to draw a before/after pair.

Examples:
    >>> fig = layout("A[I_X, J_Y]", "X=2,Y=2", "I=1024,J=4096")
    >>> fig.title
    'A[I_X, J_Y] on mesh X=2,Y=2'
    >>> fig.alt
    'A[I_X, J_Y] on a 2×2 mesh (X=2,Y=2): the array is cut into 4 blocks of shape (512, 2048), 2 along I (over X) and 2 along J (over Y); every device holds a different block.'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import sympy

from ..costs.placement import Placement, ShapeLike, place
from ..errors import MeshError, NotationError
from ..machines.mesh import Mesh
from ..memo import memoized
from ..messages import say
from ..notation.arrays import Array, format_axes
from ..notation.parser import parse_array
from .canvas import ID, Canvas, num
from .figure import Figure
from .holdings import Holding, atoms_for, hold, shards
from .style import (
    FRAME,
    HATCH,
    INK,
    MUTED,
    SIZE,
    SMALL,
    TITLE,
    block_colour,
    hatch_defs,
    subscript,
    text_colour,
    text_width,
)
from .words import clauses, commas, words

__all__ = [
    "DEFAULT_AXIS_SIZE",
    "LABELLED",
    "MAX_DEVICES",
    "Scene",
    "block_label",
    "caption_lines",
    "frame",
    "holding_words",
    "layout",
    "local_text",
    "mesh_words",
    "panel",
    "range_text",
    "resolve_array",
    "resolve_mesh",
    "scene",
]

MAX_DEVICES = 256
"""The largest mesh a figure draws: beyond it the picture is too dense to read (and slow to draw)."""

DEFAULT_AXIS_SIZE = 2
"""The size each axis gets when no mesh is given: the smallest that shows the sharding."""

_HEADER = 18  # height of a header row
_GAP = 36  # between the array and the mesh
_FEW = 8  # up to this many columns (rows), headers may widen (heighten) the cells to fit
_MANY = 24  # more rows or columns of blocks than this are drawn as thin unlabelled stripes
LABELLED = 64
"""Up to this many blocks (devices) each block (device) gets its label; beyond, the colours and headers tell."""
_SPREAD = 640.0  # the width that many columns of stripes share
_WRAP = 16  # a single mesh axis longer than this is drawn in rows of this many devices
_DEVICES_WIDE = 960.0  # the pieces inside device cells do not widen the mesh beyond this


def _every(step: float, need: float) -> int:
    """Label every k-th of evenly spaced items ``step`` apart so that labels ``need`` wide do not collide
    (k a power of two)."""
    k = 1
    while k * step < need:
        k *= 2
    return k


# -- inputs -----------------------------------------------------------------------------------


def resolve_array(array: object, *, what: str = "layout") -> Array:
    """An :class:`Array` from itself or its notation.

    Raises:
        NotationError: text that is not an array, or an object of another kind.
    """
    if isinstance(array, Array):
        return array
    if isinstance(array, str):
        return parse_array(array)
    raise NotationError(
        say("{function}() draws an array, not {what}", function=what, what=f"{type(array).__name__} {array!r}"),
        hint=say("pass an Array or its notation, e.g. 'A[I_X, J]'"),
    )


def resolve_mesh(mesh: Mesh | Mapping[str, object] | str | None, axes: Sequence[str]) -> tuple[Mesh, bool]:
    """The numeric mesh to draw on, and whether it was made up (no mesh given).

    Raises:
        MeshError: a symbolic axis size, or more than :data:`MAX_DEVICES` devices.
    """
    if mesh is None:
        m = Mesh({a: DEFAULT_AXIS_SIZE for a in dict.fromkeys(axes)})
        made_up = True
    else:
        m = mesh if isinstance(mesh, Mesh) else Mesh(mesh)
        made_up = False
    text = str(m) if not isinstance(mesh, str) else mesh
    for a in m.axes:
        if not a.size.is_number:
            raise MeshError(
                say("a figure needs a number of devices for every mesh axis, but the mesh '{text}' leaves {axis} "
                    "symbolic", text=text, axis=a.name),
                hint=say("give each axis a size, e.g. {axis}=4 (or leave the mesh out to draw 2 per axis)",
                         axis=a.name),
            )  # fmt: skip
    if int(m.devices) > MAX_DEVICES:
        raise MeshError(
            say("the mesh '{text}' has {count} {count:device|devices}, more than a figure can show ({limit})",
                text=text, count=f"{int(m.devices):,}", limit=MAX_DEVICES),
            hint=say("draw a smaller mesh with the same axes (e.g. {example}): the pattern is the same",
                     example=",".join(f"{a.name}={min(int(a.size), 4)}" for a in m.axes)),
        )  # fmt: skip
    return m, made_up


# -- the scene ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scene:
    """One sharding on one numeric mesh, cut into the atoms of a common grid.

    Attributes:
        placement: the array on the mesh, with its sizes.
        atoms: pieces per dim of the grid the colours follow (a multiple of each dim's block count).
        shift: ``(axis, k)`` for a collective permute: each device holds what the one ``k``
            steps before it along ``axis`` held.
    """

    placement: Placement
    atoms: tuple[int, ...]
    shift: tuple[str, int] | None = None

    @property
    def array(self) -> Array:
        return self.placement.array

    @property
    def mesh(self) -> Mesh:
        return self.placement.mesh

    @property
    def sizes(self) -> dict[str, sympy.Expr]:
        return dict(self.placement.sizes)

    def holdings(self) -> list[Holding]:
        """What each device holds, in mesh order."""
        return hold(self.array, self.mesh, self.atoms, shift=self.shift)


def scene(placement: Placement, atoms: Sequence[int] | None = None, *, shift: tuple[str, int] | None = None) -> Scene:
    """``placement`` on the grid ``atoms`` (default: its own blocks)."""
    grid = tuple(atoms) if atoms is not None else atoms_for([placement.array], placement.mesh)
    return Scene(placement, grid, shift)


def block_label(array: Array, block: Sequence[int], language: str = "en") -> str:
    """``I₀ J₁``: the block's index along each sharded dim (``all`` when nothing is sharded)."""
    parts = [f"{d.name}{subscript(b)}" for d, b in zip(array.dims, block, strict=True) if d.axes]
    return " ".join(parts) if parts else words("figure.layout.all", language)


def _fraction(dim: str, k: int, n: int) -> str:
    g = math.gcd(k, n)
    p, q = k // g, n // g
    if p == 0:
        return "0"
    head = dim if p == 1 else f"{p}{dim}"
    return head if q == 1 else f"{head}/{q}"


def range_text(dim: str, size: sympy.Expr, k: int, n: int) -> str:
    """Piece ``k`` of ``n`` along ``dim``: ``I 0:256`` with a size, ``I/4:I/2`` without."""
    if size.is_number:
        whole = int(size)
        return f"{dim} {whole * k // n}:{whole * (k + 1) // n}"
    return f"{_fraction(dim, k, n)}:{_fraction(dim, k + 1, n)}"


def _levels(radices: Sequence[int], label: Callable[[int, int], str]) -> list[list[tuple[int, int, str]]]:
    """Headers for columns flattened from ``radices`` (first major): per level, ``(first column, span, text)``."""
    total = math.prod(radices)
    out = []
    for level, r in enumerate(radices):
        span = math.prod(radices[level + 1 :])
        out.append([(start, span, label(level, (start // span) % r)) for start in range(0, total, span)])
    return out


@lru_cache(maxsize=8192)
def _label(x: float, y: float, w: float, h: float, lines: tuple[str, ...], fill: str | None) -> str:
    """Lines of text centred in a box: straight on a plain ``fill``, on a white plate otherwise."""
    c = Canvas()
    height = len(lines) * (SIZE + 2)
    top = y + (h - height) / 2
    if fill is None:
        width = max(text_width(t, SIZE) for t in lines) + 8
        c.rect(x + (w - width) / 2, top - 1, width, height + 2, rx=3, fill="#ffffff", fill_opacity=0.88)
        ink = INK
    else:
        ink = text_colour(fill)
    for i, t in enumerate(lines):
        c.text(x + w / 2, top + (i + 1) * (SIZE + 2) - 3.5, t, size=SIZE, anchor="middle", fill=ink)
    return c.body()


@dataclass(frozen=True, slots=True)
class _Grid:
    """How an array's atoms map onto the rows and columns of its picture."""

    rank: int
    atoms: tuple[int, ...]
    counts: tuple[int, ...]  # blocks per dim of the drawn sharding

    @property
    def col_radices(self) -> tuple[int, ...]:
        return self.atoms[1:] if self.rank >= 2 else self.atoms

    @property
    def n_rows(self) -> int:
        return self.atoms[0] if self.rank >= 2 else 1

    @property
    def n_cols(self) -> int:
        return math.prod(self.col_radices)

    def atom_of(self, row: int, col: int) -> tuple[int, ...]:
        rest = []
        for r in reversed(self.col_radices):
            rest.append(col % r)
            col //= r
        rest.reverse()
        return (row, *rest) if self.rank >= 2 else tuple(rest)

    def column(self, rest: Sequence[int]) -> int:
        col = 0
        for a, r in zip(rest, self.col_radices, strict=True):
            col = col * r + a
        return col

    def block_of(self, atom: Sequence[int]) -> tuple[int, ...]:
        return tuple(a * n // k for a, n, k in zip(atom, self.counts, self.atoms, strict=True))

    def colour(self, atom: Sequence[int]) -> str:
        index = 0
        for a, n in zip(atom, self.atoms, strict=True):
            index = index * n + a
        return block_colour(index)

    def cells(self) -> list[list[tuple[tuple[int, ...], tuple[int, ...], str]]]:
        """``(atom, block, colour)`` of every cell, by row and column (worked out once per grid)."""
        return _cells_of(self)

    def held(self, ranges: Sequence[range]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The rows and columns of the atoms a device holds."""
        rows = tuple(ranges[0]) if self.rank >= 2 else (0,)
        rest: list[tuple[int, ...]] = [()]
        for r in ranges[1:] if self.rank >= 2 else ranges:
            rest = [(*t, a) for t in rest for a in r]
        return rows, tuple(sorted({self.column(t) for t in rest}))


@lru_cache(maxsize=2048)
def _cells_of(grid: _Grid) -> list[list[tuple[tuple[int, ...], tuple[int, ...], str]]]:
    out = []
    for r in range(grid.n_rows):
        row = []
        for k in range(grid.n_cols):
            atom = grid.atom_of(r, k)
            row.append((atom, grid.block_of(atom), grid.colour(atom)))
        out.append(row)
    return out


# -- the panel -------------------------------------------------------------------------------------


def panel(
    sc: Scene,
    *,
    array_heading: str | None = None,
    mesh_heading: str | None = None,
    tag: str = "p",
    language: str = "en",
) -> Canvas:
    """The array's blocks (left) and what each device holds (right), as one canvas, its words in ``language``.

    ``tag`` keeps the ids of this panel's shared drawings apart from another panel's in one figure.
    """
    arr, mesh = sc.array, sc.mesh
    heading_a = (
        array_heading if array_heading is not None else words("figure.layout.array_heading", language, array=arr)
    )
    heading_m = mesh_heading if mesh_heading is not None else words("figure.layout.mesh_heading", language, mesh=mesh)
    sizes = tuple((a.name, int(a.size)) for a in mesh.axes)
    left = _array_part(sc, heading_a, language)
    body, w, h = _device_part(arr, sizes, sc.atoms, sc.shift, tag, heading_m, language)
    c = Canvas()
    c.place(left, 0, 0)
    right = Canvas(w, h)
    right.raw(body)
    c.place(right, left.width + _GAP, 0)
    return c


def _array_part(sc: Scene, heading: str, language: str) -> Canvas:
    arr, atoms, sizes = sc.array, sc.atoms, sc.sizes
    grid = _Grid(len(arr.dims), atoms, shards(arr, sc.mesh))
    row_dim = arr.dims[0].name if grid.rank >= 2 else None
    col_dims = [d.name for d in arr.dims[1:]] if grid.rank >= 2 else [arr.dims[0].name]
    radices = grid.col_radices
    n_rows, n_cols = grid.n_rows, grid.n_cols
    levels = _levels(radices, lambda lv, k: range_text(col_dims[lv], sizes[col_dims[lv]], k, radices[lv]))
    row_texts = [range_text(row_dim, sizes[row_dim], k, n_rows) for k in range(n_rows)] if row_dim else []
    labels = _block_labels(arr, grid, language)
    if n_cols > _MANY:  # too many to label: thin stripes, and headers where they fit
        cw = _SPREAD / n_cols
    else:
        cw = max(48.0 if n_cols <= _FEW else 28.0, _label_room(arr, grid, language) if len(labels) <= LABELLED else 0.0)
        for level in levels:
            for _, span, text in level:
                if span > 1 or n_cols <= _FEW:  # with many columns, the headers skip instead
                    cw = max(cw, (text_width(text, SIZE) + 10) / span)
        cw = math.ceil(cw / 4) * 4  # a few widths only, so that the cells' drawing is shared
    ch = 32.0 if n_rows <= _FEW else 24.0 if n_rows <= _MANY else _SPREAD / 1.6 / n_rows
    rw = max([0.0] + [text_width(t, SIZE) + 10 for t in row_texts])
    top = _HEADER + 6
    grid_top = top + _HEADER * len(levels)

    c = Canvas()
    c.text(0, 13, heading, size=SIZE, font_weight="bold", fill=INK)
    for lv, level in enumerate(levels):
        widest = max(text_width(t, SIZE) for _, _, t in level) + 8
        every = _every(level[0][1] * cw, widest)
        for i, (start, span, text) in enumerate(level):
            if i % every == 0:
                c.text(rw + (start + span / 2) * cw, top + lv * _HEADER + 13, text, size=SIZE, anchor="middle",
                       fill=MUTED)  # fmt: skip
    row_every = _every(ch, SIZE + 3)
    for row, text in enumerate(row_texts):
        if row % row_every == 0:
            c.text(rw - 6, grid_top + row * ch + ch / 2 + 4, text, size=SIZE, anchor="end", fill=MUTED)
    cells = Canvas(n_cols * cw, n_rows * ch)
    cells.raw(_cells(arr, grid, cw, ch, language))
    c.place(cells, rw, grid_top)
    c.grow(max(rw + n_cols * cw, text_width(heading, SIZE, bold=True)), grid_top + n_rows * ch)
    return c


@lru_cache(maxsize=2048)
def _block_labels(arr: Array, grid: _Grid, language: str) -> dict[tuple[int, ...], str]:
    blocks = {block for row in grid.cells() for _, block, _ in row}
    return {b: block_label(arr, b, language) for b in sorted(blocks)}


@lru_cache(maxsize=2048)
def _label_room(arr: Array, grid: _Grid, language: str) -> float:
    """The narrowest cell width at which every block's label fits in the columns its block spans."""
    spans: dict[tuple[int, ...], set[int]] = {}
    for row in grid.cells():
        for k, (_, block, _) in enumerate(row):
            spans.setdefault(block, set()).add(k)
    labels = _block_labels(arr, grid, language)
    return max((text_width(labels[b], SIZE) + 14) / len(cols) for b, cols in spans.items())


@lru_cache(maxsize=2048)
def _cells(arr: Array, grid: _Grid, cw: float, ch: float, language: str) -> str:
    """The array's cells at the origin: colours, block borders and one label per block."""
    n_rows, n_cols = grid.n_rows, grid.n_cols
    labels = _block_labels(arr, grid, language)
    thick = min(cw, ch) >= 8  # cell borders and block lines only where cells are not stripes
    roomy = ch >= 20 and cw >= min(text_width(t, SIZE) for t in labels.values()) + 6 and len(labels) <= LABELLED
    w, h = num(cw), num(ch)
    parts = ['<g class="array" stroke="#ffffff" stroke-width="1">' if thick else '<g class="array">']
    cells: dict[tuple[int, int], tuple[int, ...]] = {}
    regions: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    table = grid.cells()
    for row in range(n_rows):
        for col in range(n_cols):
            _, block, colour = table[row][col]
            cells[(row, col)] = block
            regions.setdefault(block, []).append((row, col))
            parts.append(
                f'<rect x="{num(col * cw)}" y="{num(row * ch)}" width="{w}" height="{h}" fill="{colour}" '
                f'class="block" data-block="{",".join(map(str, block))}"/>'
            )
    parts.append("</g>")
    if thick:  # thick lines where one block ends and the next begins
        path = []
        for (row, col), block in cells.items():
            x, y = col * cw, row * ch
            if col + 1 < n_cols and cells[(row, col + 1)] != block:
                path.append(f"M{num(x + cw)} {num(y)}v{h}")
            if row + 1 < n_rows and cells[(row + 1, col)] != block:
                path.append(f"M{num(x)} {num(y + ch)}h{w}")
        if path:
            parts.append(f'<path d="{"".join(path)}" stroke="{INK}" stroke-width="2" fill="none"/>')
    parts.append(f'<rect x="0" y="0" width="{num(n_cols * cw)}" height="{num(n_rows * ch)}" fill="none" '
                 f'stroke="{INK}" stroke-width="2"/>')  # fmt: skip
    for block, where in regions.items() if roomy else ():
        rows = sorted({r for r, _ in where})
        cols = sorted({k for _, k in where})
        colours = {table[r][k][2] for r, k in where}
        plain = next(iter(colours)) if len(colours) == 1 else None
        boxy = len(where) == len(rows) * len(cols) and rows == list(range(rows[0], rows[-1] + 1))
        boxy = boxy and cols == list(range(cols[0], cols[-1] + 1))
        spots = [(rows[0], cols[0], len(rows), len(cols))] if boxy else [(r, k, 1, 1) for r, k in where]
        for r, k, nr, nk in spots:
            parts.append(_label(k * cw, r * ch, nk * cw, nr * ch, (labels[block],), plain))
    return "\n".join(parts)


@lru_cache(maxsize=2048)
def _device_part(
    arr: Array,
    sizes: tuple[tuple[str, int], ...],
    atoms: tuple[int, ...],
    shift: tuple[str, int] | None,
    tag: str,
    heading: str,
    language: str,
) -> tuple[str, float, float]:
    """The mesh as a grid of devices, each filled with what it holds: ``(markup, width, height)``.

    It does not depend on the dims' sizes, so many problems of one kind share it.
    """
    mesh = Mesh(dict(sizes))
    grid = _Grid(len(arr.dims), atoms, shards(arr, mesh))
    holdings = hold(arr, mesh, atoms, shift=shift)
    names = [n for n, _ in sizes]
    if len(sizes) >= 2:
        rows, radices = sizes[0][1], [k for _, k in sizes[1:]]
        row_names = [f"{names[0]}={r}" for r in range(rows)]
        levels = _levels(radices, lambda lv, k: f"{names[lv + 1]}={k}")
    elif sizes[0][1] > _WRAP:  # one long axis: rows of _WRAP devices
        rows, radices = sizes[0][1] // _WRAP + bool(sizes[0][1] % _WRAP), [_WRAP]
        row_names = [f"{names[0]}={r * _WRAP}+" for r in range(rows)]
        levels = [[(k, 1, f"+{k}") for k in range(_WRAP)]]
    else:
        rows, radices, row_names = 1, [sizes[0][1]], []
        levels = _levels(radices, lambda lv, k: f"{names[0]}={k}")
    cols = math.prod(radices)
    partial = any(h.partial is not None for h in holdings)
    labelled = len(holdings) <= LABELLED
    names_of: dict[tuple[int, ...], str] = {}
    held_of: dict[tuple[range, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for h in holdings:
        if h.block not in names_of:
            names_of[h.block] = block_label(arr, h.block, language) if labelled else ""
        if h.atoms not in held_of:
            held_of[h.atoms] = grid.held(h.atoms)
    labels = [names_of[h.block] for h in holdings]
    held = [held_of[h.atoms] for h in holdings]
    partial_word = words("figure.layout.partial", language)
    if labelled:
        dw = max([58.0] + [text_width(t, SIZE) + 22 for t in set(labels)])
        if partial:
            dw = max(dw, text_width(partial_word, SIZE) + 22)
        dh = 46.0 if partial else 38.0
    else:
        dw, dh = 34.0, 26.0
    for level in levels:
        for _, span, text in level:
            dw = max(dw, (text_width(text, SIZE) + 8) / span)
    most_rows = max(len(r) for r, _ in held)
    most_cols = max(len(k) for _, k in held)
    if 1 < most_cols <= _MANY:  # room to see each piece a device holds, within a sensible width
        dw = max(dw, min(8.0 * most_cols + 16, 120.0, _DEVICES_WIDE / cols))
    if 1 < most_rows <= _MANY:
        dh = max(dh, min(6.0 * most_rows + 14, 80.0))
    rw = max([0.0] + [text_width(t, SIZE) + 10 for t in row_names])
    top = _HEADER + 6
    grid_top = top + _HEADER * len(levels)

    c = Canvas()
    c.text(0, 13, heading, size=SIZE, font_weight="bold", fill=INK)
    for lv, level in enumerate(levels):
        for start, span, text in level:
            c.text(rw + (start + span / 2) * dw, top + lv * _HEADER + 13, text, size=SIZE, anchor="middle", fill=MUTED)
    for row, text in enumerate(row_names):
        c.text(rw - 6, grid_top + row * dh + dh / 2 + 4, text, size=SIZE, anchor="end", fill=MUTED)
    # every device is one <use> of a stamp (its pieces, frame and label), drawn once per kind
    stamps: dict[tuple, str] = {}
    defs: list[str] = []
    w, hh = dw - 4, dh - 4
    c.open("g", cls="devices")
    colours_of: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[str, ...], ...]] = {}
    for i, h in enumerate(holdings):
        row, col = divmod(i, cols)
        rows_held, cols_held = held[i]
        if held[i] not in colours_of:
            table = grid.cells()
            colours_of[held[i]] = tuple(tuple(table[r][k][2] for k in cols_held) for r in rows_held)
        key = (colours_of[held[i]], labels[i], h.partial is not None)
        if key not in stamps:
            stamps[key] = f"{ID}-{tag}{len(stamps)}"
            defs.append(f'<g id="{stamps[key]}">{_stamp(w, hh, *key, partial_word)}</g>')
        data = f' data-device="{",".join(map(str, h.device))}" data-block="{",".join(map(str, h.block))}"'
        c.use(stamps[key], rw + col * dw + 2, grid_top + row * dh + 2,
              "device partial" if h.partial is not None else "device", data)  # fmt: skip
    c.close("g")
    c.raw("<defs>" + "".join(defs) + "</defs>")
    width = max(rw + cols * dw, text_width(heading, SIZE, bold=True))
    return c.body(), width, grid_top + rows * dh


@lru_cache(maxsize=8192)
def _stamp(
    w: float, h: float, colours: tuple[tuple[str, ...], ...], label: str, partial: bool, partial_word: str
) -> str:
    """One device cell at the origin: the pieces it holds in their places (``colours``, by row and
    column of the array's picture), the hatch if it holds a partial sum (marked ``partial_word``), a
    frame, and its label."""
    n_rows, n_cols = len(colours), len(colours[0])
    sw, sh = num(w / n_cols), num(h / n_rows)
    parts = [
        f'<rect x="{num(b * w / n_cols)}" y="{num(a * h / n_rows)}" width="{sw}" height="{sh}" fill="{colour}"/>'
        for a, row_colours in enumerate(colours)
        for b, colour in enumerate(row_colours)
    ]
    if partial:
        parts.append(f'<rect width="{num(w)}" height="{num(h)}" fill="{HATCH}"/>')
    parts.append(f'<rect width="{num(w)}" height="{num(h)}" rx="3" fill="none" stroke="{FRAME}" stroke-width="1.2"/>')
    if label:
        plain = colours[0][0] if n_rows == n_cols == 1 and not partial else None
        parts.append(_label(0, 0, w, h, (label, partial_word) if partial else (label,), plain))
    return "".join(parts)


# -- words -------------------------------------------------------------------------------------------


def _join(parts: Sequence[str], language: str) -> str:
    """``a, b and c`` (in ``language``)."""
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    return words("figure.and", language, rest=commas(parts[:-1], language), last=parts[-1])


def _shape_text(shape: Sequence[sympy.Expr]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


@lru_cache(maxsize=4096)
def local_text(p: Placement) -> str:
    """The shape of one device's block: ``(512, 2048)``, ``(I/2, J)``."""
    return _shape_text(p.local_shape)


def mesh_words(mesh: Mesh, language: str = "en") -> str:
    """``a 2×2 mesh (X=2,Y=2)``, ``a mesh of 4 devices (X=4)`` (in ``language``).

    Examples:
        >>> mesh_words(Mesh("X=8,Y=2")), mesh_words(Mesh("X=8,Y=2"), "zh")
        ('an 8×2 mesh (X=8,Y=2)', '8×2 网格（X=8,Y=2）')
    """
    if len(mesh.axes) == 1:
        return words("figure.layout.mesh_line", language, devices=mesh.devices, mesh=mesh)
    shape = "×".join(str(a.size) for a in mesh.axes)
    an = shape.startswith("8") or shape.split("×")[0] in ("11", "18")  # English's article: "an 8×2", "an 11×2"
    return words("figure.layout.mesh_an" if an else "figure.layout.mesh_a", language, shape=shape, mesh=mesh)


def holding_words(p: Placement, language: str = "en") -> str:
    """What the devices hold, in words (in ``language``): the blocks, copies and partial sums."""
    arr, mesh = p.array, p.mesh
    counts = shards(arr, mesh)
    n = math.prod(counts)
    shape = local_text(p)
    said: list[str] = []
    if n == 1:
        said.append(
            words("figure.layout.whole" if arr.unreduced else "figure.layout.whole_held", language, shape=shape)
        )
    else:
        along = [
            words("figure.layout.along", language, count=k, dim=d.name, axes=format_axes(d.axes))
            for d, k in zip(arr.dims, counts, strict=True)
            if k > 1
        ]
        said.append(words("figure.layout.cut", language, count=n, shape=shape, along=_join(along, language)))
        copies = int(p.copies)
        idle = [a.name for a in mesh.axes if a.name not in arr.axes and a.name not in arr.unreduced]
        if copies > 1:
            said.append(words("figure.layout.copies", language, copies=copies, axes=format_axes(idle)))
        elif not arr.unreduced:
            said.append(words("figure.layout.different", language))
    if arr.unreduced:
        key = "figure.layout.partial_sums_block" if n > 1 else "figure.layout.partial_sums"
        said.append(words(key, language, count=int(p.partial_sums), axes=format_axes(sorted(arr.unreduced))))
    return clauses(said, language)


def caption_lines(p: Placement, made_up: bool, language: str = "en") -> list[str]:
    """The lines under a layout (in ``language``): sizes, per-device shape, copies, partial sums, assumptions."""
    names = "(" + ", ".join(d for d, _ in p.sizes) + ")"
    shape = _shape_text(p.global_shape)
    whole = names if shape == names else f"{names} = {shape}"
    lines = [words("figure.layout.global", language, whole=whole, local=local_text(p))]
    copies = int(p.copies)
    if copies > 1:
        lines.append(words("figure.layout.stored", language, copies=copies))
    if p.array.unreduced:
        axes = format_axes(sorted(p.array.unreduced))
        lines.append(words("figure.layout.hatched", language, count=int(p.partial_sums), axes=axes))
    if int(p.mesh.devices) > LABELLED:
        lines.append(words("figure.layout.unlabelled", language, limit=LABELLED))
    if made_up:
        lines.append(words("figure.made_up", language, size=DEFAULT_AXIS_SIZE))
    return lines


def frame(body: Canvas, *, title: str, caption: Sequence[str], alt: str, defs: str = "") -> Figure:
    """A finished figure: the title above ``body``, the caption lines below, a margin around."""
    margin = 16
    c = Canvas()
    c.text(margin, margin + TITLE, title, size=TITLE, font_weight="bold", fill=INK)
    top = margin + TITLE + 14
    c.place(body, margin, top)
    y = top + body.height + 10
    width = body.width
    for line in caption:
        y += SMALL + 6
        c.text(margin, y, line, size=SMALL, fill=MUTED)
        width = max(width, text_width(line, SMALL))
    width = max(width, text_width(title, TITLE, bold=True))
    c.grow(width + 2 * margin, y + margin)
    return Figure(c.document(title=title, alt=alt, defs=defs), title, alt)


# -- the public function -------------------------------------------------------------------------------


@memoized(maxsize=1024)
def layout(
    array: Array | str,
    mesh: Mesh | Mapping[str, object] | str | None = None,
    shape: ShapeLike = None,
    *,
    title: str | None = None,
    language: str = "en",
) -> Figure:
    """Draw which device holds which block of ``array`` on ``mesh``, its words in ``language``.

    Args:
        array: an :class:`~symshard.notation.arrays.Array` or its notation, e.g. ``"A[I_XY, J]{U_Z}"``.
        mesh: a numeric mesh (``"X=4,Y=2"``, a mapping or a :class:`~symshard.machines.mesh.Mesh`);
            None draws each axis the array uses with 2 devices (and says so).
        shape: dim sizes (``"I=1024,J=4096"`` or a mapping); with them the blocks
            are labelled with index ranges (``I 0:256``), without them with fractions.
        title: the heading; default ``"<array> on mesh <mesh>"``.
        language: the language of the figure's words and its alt text (``"en"``, ``"zh"``); the
            notation, sizes and block labels are the same in every language.

    Returns:
        A :class:`~symshard.render.Figure`.

    Raises:
        NotationError: text that is not an array.
        MeshError: a symbolic mesh, or one of more than 256 devices.
        UnknownAxisError: the array names an axis the mesh lacks.
        DivisibilityError: a dim size its shards do not divide.
        ShapeError: sizes that are not positive integers, or for dims the array lacks.

    Examples:
        >>> fig = layout("A[I_X, J]{U_Z}", "X=2,Z=2")
        >>> fig.svg.count('class="device partial"')
        4
    """
    arr = resolve_array(array)
    m, made_up = resolve_mesh(mesh, [*arr.axes, *sorted(arr.unreduced)])
    p = place(arr, m, shape)
    sc = scene(p)
    heading = title if title is not None else words("figure.layout.title", language, array=arr, mesh=m)
    alt = words(
        "figure.layout.alt", language, array=arr, mesh=mesh_words(m, language), holding=holding_words(p, language)
    )
    defs = hatch_defs() if arr.unreduced else ""
    body = panel(sc, language=language)
    return frame(body, title=heading, caption=caption_lines(p, made_up, language), alt=alt, defs=defs)

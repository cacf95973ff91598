"""Reading XLA's compiled HLO text: which collectives it runs, over which devices, on how much data.

:func:`module_text` prints a compiled module with every constant written out: by default XLA
elides a constant of more than ten elements as ``constant({...})``, and the partition-offset
tables a reduce-scatter's read-back evaluates reach that size on 16 devices.
:func:`collectives` finds every ``all-gather``, ``all-reduce``, ``reduce-scatter``,
``all-to-all`` and ``collective-permute`` (async ``-start`` forms included) with
its element type, result shape and replica groups, in any of XLA's three spellings
(``{{0,1},{2,3}}``, the iota form ``[2,4]<=[4,2]T(1,0)`` and the mesh form
``mesh['axis_0'=4,'axis_1'=2] {'axis_1'}``), expanded to explicit device ids.
:func:`group_axes` names the mesh axes a set of groups spans, :func:`group_sub_axes`
also the sub-axes (part of a mesh axis, ``X:(2)2`` in Shardy's notation) XLA may split an
axis into, and :func:`sub_axis_slices` the sub-axes by which the module's slices pick each
device's block; :func:`dot_flops` counts the FLOPs of the ``dot`` instructions (and of the products XLA writes as a
``multiply``, :func:`multiply_flops`), :func:`sum_flops` the adds of its local sums.

One lowering is undone explicitly, and recorded: XLA's SPMD partitioner writes a
reduce-scatter as an all-reduce followed by a ``dynamic-slice`` whose offsets it computes
from ``partition-id``, a pair the GPU backend fuses and the CPU backend runs as it is.
:func:`collectives` evaluates those offsets for every device (constant tables and the
integer arithmetic on them) and reports the pair as a reduce-scatter, with ``lowered``
saying so, only when they prove it one: each member of the all-reduce's group keeps a
different share of one dim, chosen by its position in the group (the slice may cut the
share further, the same way on every member: a free slice after the reduce-scatter).

Examples:
    >>> expand_groups("[2,4]<=[4,2]T(1,0)")
    ((0, 2, 4, 6), (1, 3, 5, 7))
    >>> expand_groups("mesh['axis_0'=4,'axis_1'=2] {'axis_0'}")
    ((0, 2, 4, 6), (1, 3, 5, 7))
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..messages import say

__all__ = [
    "ELIDED",
    "READ_BACK",
    "READ_BACK_FURTHER",
    "HloCollective",
    "collectives",
    "dot_flops",
    "expand_groups",
    "group_axes",
    "group_sub_axes",
    "module_text",
    "multiply_flops",
    "reduction_flops",
    "slice_axes",
    "sub_axis_name",
    "sub_axis_slices",
    "sum_flops",
]

KINDS = {
    "all-gather": "AllGather",
    "all-reduce": "AllReduce",
    "reduce-scatter": "ReduceScatter",
    "all-to-all": "AllToAll",
    "collective-permute": "CollectivePermute",
}

READ_BACK = say("read back from all-reduce + dynamic-slice")
"""``lowered`` of a reduce-scatter XLA wrote as an all-reduce and a partition-indexed slice."""

READ_BACK_FURTHER = say("read back from all-reduce + dynamic-slice that also slices further")
"""``lowered`` of the same pair when the slice also cuts each device's part further (a free slice after it)."""

ELIDED = "constant({...})"
"""How the HLO printer writes a constant it leaves out (more than ten elements, by default)."""

_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "s32": 4, "u32": 4, "s8": 1, "u8": 1, "pred": 1, "f8e4m3fn": 1}

_INSTR = re.compile(
    r"^\s*(?:ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*(?P<type>\([^=]*?\)|[\w]+\[[\d,]*\](?:\{[^}]*\})?)\s+"
    r"(?P<op>[\w\-]+)\((?P<args>[^)]*)\)(?P<attrs>.*)$"
)
_ARRAY = re.compile(r"(\w+)\[([\d,]*)\]")
_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%(?P<name>[\w.\-]+)\s.*\{\s*$")


@dataclass(frozen=True, slots=True)
class HloCollective:
    """One collective of a compiled module.

    ``shape`` is the result's per-device shape and ``operand_shape`` the input's;
    ``groups`` the device ids that run it together (for a permute, the pairs);
    ``dim`` the gathered, scattered or split dimension, when there is one.
    """

    name: str
    kind: str
    dtype: str
    shape: tuple[int, ...]
    operand_shape: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    dim: int | None = None
    lowered: str = ""
    chunks: int = 1  # an all-to-all in tuple form: one array per destination

    @property
    def operand_elements(self) -> int:
        """Elements each device contributes."""
        return math.prod(self.operand_shape) * self.chunks

    @property
    def operand_bytes(self) -> int:
        """Bytes each device contributes, in the element type the HLO runs it in."""
        return self.operand_elements * _BYTES.get(self.dtype, 4)


@dataclass
class _Instr:
    name: str
    type: str
    op: str
    args: list[str]
    attrs: str
    computation: str
    operands: str = ""


def module_text(compiled: Any) -> str:
    """The text of a ``jax.stages.Compiled``'s HLO module, large constants included.

    ``compiled.as_text()`` prints constants of more than ten elements as ``constant({...})``;
    the module is printed again here with XLA's ``print_large_constants`` option, through
    ``runtime_executable().hlo_modules()``. Where this jaxlib offers no such printer, the
    ``as_text()`` text is returned, and :func:`collectives` reads nothing from an elided table
    (a reduce-scatter written with one stays the all-reduce it is written as).
    """
    try:
        from jax._src.lib import hlo as _hlo  # jaxlib's HLO bindings (jax >= 0.6)

        options = _hlo.HloPrintOptions()
        options.print_large_constants = True
        modules = compiled.runtime_executable().hlo_modules()
    except (ImportError, AttributeError):  # pragma: no cover - depends on the jaxlib
        return str(compiled.as_text())
    return "\n\n".join(m.to_string(options) for m in modules)


def _shape(type_: str) -> tuple[str, tuple[int, ...]]:
    m = _ARRAY.search(type_)
    if m is None:
        return "", ()
    dims = tuple(int(x) for x in m.group(2).split(",") if x)
    return m.group(1), dims


def _parse(text: str) -> tuple[dict[str, _Instr], dict[str, list[_Instr]], dict[str, str]]:
    """The instructions by name, each computation's instructions, and each computation's root."""
    instrs: dict[str, _Instr] = {}
    bodies: dict[str, list[_Instr]] = {}
    roots: dict[str, str] = {}
    current = ""
    for line in text.splitlines():
        m = _INSTR.match(re.sub(r"/\*.*?\*/", "", line))
        if m is None:
            c = _COMPUTATION.match(line)
            if c is not None:
                current = c.group("name")
                bodies.setdefault(current, [])
            continue
        args = [a.strip().lstrip("%") for a in m.group("args").split(",") if a.strip().startswith("%")]
        ins = _Instr(m.group("name"), m.group("type"), m.group("op"), args, m.group("attrs"), current, m.group("args"))
        instrs[ins.name] = ins
        bodies.setdefault(current, []).append(ins)
        if line.lstrip().startswith("ROOT"):
            roots[current] = ins.name
    return instrs, bodies, roots


def _iota(spec: str) -> list[int]:
    """Device ids of ``[8]`` or ``[4,2]T(1,0)``: an iota reshaped and transposed, flattened."""
    m = re.fullmatch(r"\[([\d,]+)\](?:T\(([\d,]+)\))?", spec.strip())
    if m is None:
        raise ValueError(f"cannot read the device list {spec!r}")
    dims = [int(x) for x in m.group(1).split(",")]
    perm = [int(x) for x in m.group(2).split(",")] if m.group(2) else list(range(len(dims)))
    ids = list(range(math.prod(dims)))
    strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]
    shape_t = [dims[p] for p in perm]
    out = []
    for flat in range(len(ids)):
        idx_t = _unravel(flat, shape_t)
        out.append(sum(idx_t[k] * strides[perm[k]] for k in range(len(perm))))
    return out


def _unravel(flat: int, sizes: Sequence[int]) -> list[int]:
    """Row-major coordinates of index ``flat`` in an array of ``sizes`` (numpy's ``unravel_index``)."""
    coords = []
    for size in reversed(sizes):
        coords.append(flat % size)
        flat //= size
    return coords[::-1]


def expand_groups(spec: str, devices: int | None = None) -> tuple[tuple[int, ...], ...]:
    """Replica groups as explicit tuples of device ids, from any of XLA's spellings.

    ``{}`` (every device in one group) needs ``devices``.
    """
    spec = spec.strip()
    if spec.startswith("mesh["):
        m = re.fullmatch(r"mesh\[([^\]]*)\](?:,\s*device_ids=\((.*)\))?\s*\{([^}]*)\}", spec)
        if m is None:
            raise ValueError(f"cannot read the replica groups {spec!r}")
        axes = re.findall(r"'([^']+)'=(\d+)", m.group(1))
        names = [a for a, _ in axes]
        sizes = [int(s) for _, s in axes]
        order = _iota(m.group(2)) if m.group(2) else list(range(math.prod(sizes)))
        chosen = [names.index(a) for a in re.findall(r"'([^']+)'", m.group(3))]
        others = [i for i in range(len(names)) if i not in chosen]
        groups: dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]] = {}
        for flat, dev in enumerate(order):
            coords = _unravel(flat, sizes)
            key = tuple(coords[i] for i in others)
            pos = tuple(coords[i] for i in chosen)
            groups.setdefault(key, []).append((pos, dev))
        return tuple(tuple(d for _, d in sorted(g)) for _, g in sorted(groups.items()))
    if "<=" in spec:
        shape, _, source = spec.partition("<=")
        dims = [int(x) for x in shape.strip()[1:-1].split(",")]
        ids = _iota(source)
        width = dims[-1]
        return tuple(tuple(ids[i : i + width]) for i in range(0, len(ids), width))
    inner = re.findall(r"\{([\d,\s]*)\}", spec[1:-1] if spec.startswith("{") else spec)
    groups_ = tuple(tuple(int(x) for x in g.split(",") if x.strip()) for g in inner)
    groups_ = tuple(g for g in groups_ if g)
    if not groups_:
        if devices is None:
            raise ValueError("replica_groups={} means every device; say how many there are")
        return (tuple(range(devices)),)
    return groups_


def _groups_attr(attrs: str) -> str | None:
    m = re.search(
        r"replica_groups=(mesh\[[^\]]*\](?:,\s*device_ids=\(\[[\d,]*\](?:T\([\d,]*\))?\))?\s*\{[^}]*\}|\[[^\]]*\]<=\[[^\]]*\](?:T\([^)]*\))?|\{(?:\{[\d,]*\},?)*\}|\{\})",
        attrs,
    )
    return m.group(1) if m else None


def _dim_attr(attrs: str) -> int | None:
    m = re.search(r"dimensions=\{(\d+)\}", attrs)
    return int(m.group(1)) if m else None


def group_axes(groups: Sequence[Sequence[int]], mesh_shape: Sequence[tuple[str, int]]) -> tuple[str, ...] | None:
    """The mesh axes that ``groups`` span, major first, or None if they are not a set of whole axes.

    Device ``i`` sits at the row-major coordinates of ``i`` in the mesh (JAX's order).

    Examples:
        >>> group_axes(((0, 2, 4, 6), (1, 3, 5, 7)), [("X", 4), ("Y", 2)])
        ('X',)
        >>> group_axes(((0, 1, 2, 3, 4, 5, 6, 7),), [("X", 4), ("Y", 2)])
        ('X', 'Y')
    """
    names = [n for n, _ in mesh_shape]
    sizes = [s for _, s in mesh_shape]

    def coords(dev: int) -> tuple[int, ...]:
        out = []
        for size in reversed(sizes):
            out.append(dev % size)
            dev //= size
        return tuple(reversed(out))

    if not groups or not groups[0]:
        return None
    first = [coords(d) for d in groups[0]]
    varying = [i for i in range(len(names)) if len({c[i] for c in first}) > 1]
    if not varying:
        return ()
    if len(groups[0]) != math.prod(sizes[i] for i in varying):
        return None
    covered: set[int] = set()
    for g in groups:
        cs = [coords(d) for d in g]
        fixed = {tuple(c[i] for i in range(len(names)) if i not in varying) for c in cs}
        if len(fixed) != 1 or len(g) != len(groups[0]):
            return None
        covered.update(g)
    if len(covered) != math.prod(sizes):
        return None

    # major first: the axis that changes least often along the group's order
    def changes(i: int) -> int:
        return sum(1 for a, b in itertools.pairwise(first) if a[i] != b[i])

    return tuple(names[i] for i in sorted(varying, key=changes))


def _coords(dev: int, sizes: Sequence[int]) -> tuple[int, ...]:
    return tuple(_unravel(dev, sizes))


def _digit(size: int, pre: int, sub: int) -> tuple[int, int]:
    """The divisor and modulus that read sub-axis ``(pre)sub`` from a coordinate on an axis of ``size``."""
    return size // (pre * sub), sub


def _sub_axis_options(size: int) -> list[tuple[int, int]]:
    """The ``(pre, sub)`` pairs of the sub-axes of an axis of ``size`` devices (Shardy's ``X:(pre)sub``),
    the whole axis ``(1, size)`` first."""
    out = [(1, size)]
    for pre in range(1, size + 1):
        for sub in range(2, size // pre + 1):
            if size % (pre * sub) == 0 and (pre, sub) != (1, size):
                out.append((pre, sub))
    return out


def sub_axis_name(axis: str, size: int, pre: int, sub: int) -> str:
    """``X`` for a whole axis, else Shardy's name of a sub-axis: ``X:(2)2``, the minor half of a 4-device X."""
    return axis if (pre, sub) == (1, size) else f"{axis}:({pre}){sub}"


def group_sub_axes(groups: Sequence[Sequence[int]], mesh_shape: Sequence[tuple[str, int]]) -> tuple[str, ...] | None:
    """Like :func:`group_axes`, but the groups may also span *sub-axes*: part of a mesh axis, as when
    XLA treats a 4-device axis X as two 2-device axes, ``X:(1)2`` (its major half: devices 0-1 vs
    2-3) and ``X:(2)2`` (its minor half: even vs odd), Shardy's notation. None if they are neither.

    Examples:
        >>> group_sub_axes(((0, 2), (4, 6), (1, 3), (5, 7)), [("X", 4), ("Y", 2)])
        ('X:(2)2',)
        >>> group_sub_axes(((0, 4), (2, 6), (1, 5), (3, 7)), [("X", 4), ("Y", 2)])
        ('X:(1)2',)
    """
    whole = group_axes(groups, mesh_shape)
    if whole is not None or not groups or not groups[0]:
        return whole
    sizes = [s for _, s in mesh_shape]
    first = [_coords(d, sizes) for d in groups[0]]
    chosen: list[tuple[int, int, int]] = []  # (axis index, pre, sub)
    for i, size in enumerate(sizes):
        values = {c[i] for c in first}
        if len(values) == 1:
            continue
        for pre, sub in _sub_axis_options(size):
            below, k = _digit(size, pre, sub)
            if {(v // below) % k for v in values} == set(range(k)) and len(
                {(v // (below * k), v % below) for v in values}
            ) == 1:
                chosen.append((i, pre, sub))
                break
        else:
            return None
    if len(groups[0]) != math.prod(sub for _, _, sub in chosen):
        return None

    def key(dev: int) -> tuple:
        c = _coords(dev, sizes)
        out: list[object] = []
        for i, size in enumerate(sizes):
            picked = [(p, s) for j, p, s in chosen if j == i]
            if not picked:
                out.append(c[i])
                continue
            below, k = _digit(size, *picked[0])
            out.append((c[i] // (below * k), c[i] % below))
        return tuple(out)

    covered: set[int] = set()
    for g in groups:
        if len(g) != len(groups[0]) or len({key(d) for d in g}) != 1:
            return None
        covered.update(g)
    if len(covered) != math.prod(sizes):
        return None

    def changes(t: tuple[int, int, int]) -> int:
        below, k = _digit(sizes[t[0]], t[1], t[2])
        digits = [(c[t[0]] // below) % k for c in first]
        return sum(1 for a, b in itertools.pairwise(digits) if a != b)

    return tuple(sub_axis_name(mesh_shape[i][0], sizes[i], p, s) for i, p, s in sorted(chosen, key=changes))


def slice_axes(chunks: Mapping[int, int], mesh_shape: Sequence[tuple[str, int]]) -> tuple[str, ...] | None:
    """The axes or sub-axes, major first, by which devices pick the chunks ``chunks`` (device to chunk
    index along one dim) of a dynamic-slice, or None if the choice follows no such axes.

    Examples:
        >>> slice_axes({d: d // 2 for d in range(8)}, [("X", 4), ("Y", 2)])
        ('X',)
        >>> slice_axes({d: d // 4 for d in range(8)}, [("X", 4), ("Y", 2)])
        ('X:(1)2',)
    """
    sizes = [s for _, s in mesh_shape]
    options = [
        (i, pre, sub) for i, size in enumerate(sizes) for pre, sub in _sub_axis_options(size)
    ]  # fmt: skip
    chunk_set = sorted(set(chunks.values()))
    if chunk_set == [0] or len(chunk_set) < 2:
        return ()
    for count in range(1, len(sizes) + 1):
        for picked in itertools.permutations(options, count):
            if len({i for i, _, _ in picked}) != count:
                continue
            ok = True
            for dev, chunk in chunks.items():
                c = _coords(dev, sizes)
                index = 0
                for i, pre, sub in picked:
                    below, k = _digit(sizes[i], pre, sub)
                    index = index * k + (c[i] // below) % k
                if index != chunk:
                    ok = False
                    break
            if ok:
                return tuple(sub_axis_name(mesh_shape[i][0], sizes[i], p, s) for i, p, s in picked)
    return None


def sub_axis_slices(text: str, mesh_shape: Sequence[tuple[str, int]]) -> tuple[str, ...]:
    """The sub-axes (never whole axes) by which the module's dynamic-slices of arrays pick each
    device's part: the slices of a plan that shards by part of a mesh axis. Sorted."""
    module = _Module(text)
    devices = math.prod(s for _, s in mesh_shape)
    found: set[str] = set()
    for ins in module.instrs.values():
        if ins.op != "dynamic-slice" or not ins.type.startswith(("f", "bf")) or not ins.args:
            continue
        _, full = _shape(module.instrs[ins.args[0]].type) if ins.args[0] in module.instrs else ("", ())
        _, size = _shape(ins.type)
        starts = {d: module.starts(ins, d) for d in range(devices)}
        if not full or any(s is None for s in starts.values()):
            continue
        if module.feeds_permute(ins):
            continue  # a sender cutting the piece one receiver needs: part of a reshard by permute
        for dim, (n, z) in enumerate(zip(full, size, strict=False)):
            if z == n or z == 0:
                continue
            axes = slice_axes({d: s[dim] // z for d, s in starts.items() if s is not None}, mesh_shape)
            found.update(a for a in axes or () if ":" in a)
    return tuple(sorted(found))


def _quotient(a: int, b: int) -> int:
    """HLO's integer division: rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class _Module:
    """A parsed module that can follow a value to the instructions using it and evaluate, for each
    device, the integer arithmetic XLA builds from ``partition-id`` (the offsets of a dynamic-slice)."""

    _PASS: ClassVar[frozenset[str]] = frozenset({"bitcast", "reshape", "convert", "copy"})
    _ARITH: ClassVar[dict[str, Callable[[int, int], int]]] = {
        "add": lambda a, b: a + b,
        "subtract": lambda a, b: a - b,
        "multiply": lambda a, b: a * b,
        "divide": lambda a, b: _quotient(a, b),
        "remainder": lambda a, b: a - b * _quotient(a, b),
        "maximum": max,
        "minimum": min,
    }

    def __init__(self, text: str) -> None:
        self.instrs, self.bodies, self.roots = _parse(text)
        self.users: dict[str, list[_Instr]] = {}
        self.callers: dict[str, _Instr] = {}
        for ins in self.instrs.values():
            for a in dict.fromkeys(ins.args):
                self.users.setdefault(a, []).append(ins)
            called = re.search(r"calls=%([\w.\-]+)", ins.attrs)
            if called is not None:
                self.callers[called.group(1)] = ins
        self._values: dict[tuple[str, int], tuple[int, ...] | None] = {}

    def value(self, name: str, device: int) -> tuple[int, ...] | None:
        """The integer value (flattened) of ``name`` on ``device``, or None if it is not computed
        from constants and ``partition-id`` by the few operations index arithmetic uses."""
        key = (name, device)
        if key not in self._values:
            self._values[key] = None  # a cycle or an unknown op reads as "not known"
            self._values[key] = self._evaluate(self.instrs[name], device) if name in self.instrs else None
        return self._values[key]

    def _evaluate(self, ins: _Instr, device: int) -> tuple[int, ...] | None:
        op = ins.op
        if op == "partition-id":
            return (device,)
        if op == "replica-id":
            return (0,)
        if op == "constant":
            if not re.match(r"[su]\d+\[", ins.type) or "..." in ins.operands:
                return None  # not integers, or a table the printer left out
            return tuple(int(x) for x in re.findall(r"-?\d+", ins.operands))
        if op == "parameter":
            caller = self.callers.get(ins.computation)
            index = int(ins.operands.strip() or -1)
            if caller is None or not 0 <= index < len(caller.args):
                return None
            return self.value(caller.args[index], device)
        args = [self.value(a, device) for a in ins.args]
        if any(a is None for a in args) or not args:
            return None
        vals: list[tuple[int, ...]] = [a for a in args if a is not None]
        if op in self._PASS:
            return vals[0]
        if op in self._ARITH or op == "clamp":
            width = max(len(v) for v in vals)
            if any(len(v) not in (1, width) for v in vals):
                return None
            cols = [[v[i] if len(v) > 1 else v[0] for v in vals] for i in range(width)]
            if op == "clamp":
                return tuple(min(max(x, lo), hi) for lo, x, hi in cols)
            fn = self._ARITH[op]
            return tuple(fn(a, b) for a, b in cols)
        if op == "dynamic-slice" and len(vals) == 2:  # a lookup in a 1-D table
            table, (index,) = vals[0], vals[1][:1]
            size = int(re.search(r"dynamic_slice_sizes=\{(\d+)\}", ins.attrs).group(1))  # type: ignore[union-attr]
            start = min(max(index, 0), len(table) - size)
            return table[start : start + size]
        return None

    def starts(self, ds: _Instr, device: int) -> tuple[int, ...] | None:
        """The start of the block the ``dynamic-slice`` ``ds`` cuts on ``device`` (clamped, as XLA does)."""
        _, full = _shape(self.instrs[ds.args[0]].type)
        _, size = _shape(ds.type)
        out = []
        for d, a in enumerate(ds.args[1:]):
            v = self.value(a, device)
            if v is None or len(v) != 1 or d >= len(full):
                return None
            out.append(min(max(v[0], 0), full[d] - size[d]))
        return tuple(out) if len(out) == len(full) else None

    def feeds_permute(self, ins: _Instr) -> bool:
        """Whether ``ins``'s result only reaches a ``collective-permute`` (through data movement: copies,
        bitcasts, reshapes, transposes, static slices, out of the fusion it sits in)."""
        current = ins
        for _ in range(8):
            if current.name == self.roots.get(current.computation) and current.computation in self.callers:
                current = self.callers[current.computation]
                continue
            users = self.users.get(current.name, [])
            if len(users) != 1:
                return False
            (u,) = users
            if u.op in ("collective-permute", "collective-permute-start"):
                return True
            if u.op not in self._PASS | {"transpose", "slice"}:
                return False
            current = u
        return False

    def slice_of(self, name: str, shape: tuple[int, ...]) -> _Instr | None:
        """The ``dynamic-slice`` that is the only use of ``name`` (through converts, copies and
        same-shape bitcasts, into a fusion's body and out of it: bf16 goes f32 to bf16 in one fusion
        and back to f32 in the slice's), cutting an array of ``shape``; or None."""
        current = self.instrs[name]
        for _ in range(12):
            if current.name == self.roots.get(current.computation) and current.computation in self.callers:
                current = self.callers[current.computation]  # out of the fusion, to what uses its result
                continue
            users = self.users.get(current.name, [])
            if len(users) != 1:
                return None
            (u,) = users
            if u.op == "dynamic-slice":
                if u.args[0] != current.name or _shape(self.instrs[current.name].type)[1] != shape:
                    return None
                return u
            if u.op == "fusion":
                called = re.search(r"calls=%([\w.\-]+)", u.attrs)
                positions = [i for i, a in enumerate(u.args) if a == current.name]
                if called is None or len(positions) != 1:
                    return None
                params = [
                    b for b in self.bodies.get(called.group(1), [])
                    if b.op == "parameter" and b.operands.strip() == str(positions[0])
                ]  # fmt: skip
                if len(params) != 1:
                    return None
                current = params[0]
                continue
            if u.op in self._PASS and _shape(u.type)[1] == shape:
                current = u
                continue
            return None
        return None


def _read_reduce_scatter(
    module: _Module, ins: _Instr, shape: tuple[int, ...], groups: tuple[tuple[int, ...], ...]
) -> tuple[int, bool] | None:
    """Whether the all-reduce ``ins`` is a reduce-scatter written as XLA's SPMD partitioner writes
    one: its result is only cut by a ``dynamic-slice`` whose offsets, evaluated for every device
    from ``partition-id``, give each member of a group a different 1/n of one dim, its position in
    the group choosing the part (major); the slice may cut the part further, by the same amount on
    every member of a group. Returns (the scattered dim, whether the slice cuts further)."""
    ds = module.slice_of(ins.name, shape)
    if ds is None:
        return None
    _, size = _shape(ds.type)
    n = len(groups[0])
    chunks: dict[int, tuple[int, ...]] = {}
    for g in groups:
        for dev in g:
            start = module.starts(ds, dev)
            if start is None or any(s % z for s, z in zip(start, size, strict=True)):
                return None
            chunks[dev] = tuple(s // z for s, z in zip(start, size, strict=True))
    sliced = [d for d in range(len(shape)) if size[d] != shape[d]]
    for d in sliced:
        parts = shape[d] // size[d]
        if shape[d] % size[d] or parts % n:
            continue
        per = parts // n
        ok = True
        for g in groups:
            rest = {(chunks[dev][d] % per, *(chunks[dev][e] for e in sliced if e != d)) for dev in g}
            if len(rest) != 1 or [chunks[dev][d] // per for dev in g] != list(range(n)):
                ok = False
                break
        if ok:
            return d, len(sliced) > 1 or per > 1
    return None


def collectives(text: str, devices: int | None = None) -> tuple[HloCollective, ...]:
    """Every collective in the compiled module ``text``, in program order.

    An all-reduce whose result is only cut by a ``partition-id``-indexed slice that gives
    each member of its group a different share of one dim, by position (see
    :func:`_read_reduce_scatter`), is XLA's form of a reduce-scatter; it is returned as
    that reduce-scatter, its ``shape`` the reduce-scatter's result, with ``lowered`` set to
    :data:`READ_BACK` (or :data:`READ_BACK_FURTHER` when the slice also cuts further).
    """
    module = _Module(text)
    out = []
    for ins in module.instrs.values():
        op = ins.op[:-6] if ins.op.endswith("-start") else ins.op
        if op not in KINDS:
            continue
        dtype, shape = _shape(ins.type)
        if op == "collective-permute":
            pairs = re.search(r"source_target_pairs=\{(.*?)\}\}", ins.attrs)
            groups = tuple(
                tuple(int(x) for x in p.split(","))
                for p in re.findall(r"\{(\d+,\d+)\}", pairs.group(0) if pairs else "")
            )
            out.append(HloCollective(ins.name, KINDS[op], dtype, shape, shape, groups))
            continue
        spec = _groups_attr(ins.attrs)
        groups = expand_groups(spec, devices) if spec is not None else (tuple(range(devices or 1)),)
        n = len(groups[0])
        dim = _dim_attr(ins.attrs)
        operand = shape
        if op == "all-gather" and dim is not None:
            operand = tuple(s // n if i == dim else s for i, s in enumerate(shape))
        elif op == "reduce-scatter" and dim is not None:
            operand = tuple(s * n if i == dim else s for i, s in enumerate(shape))
        kind = KINDS[op]
        lowered = ""
        chunks = 1
        if ins.type.startswith("("):
            chunks = len(_ARRAY.findall(ins.type))
        if op == "all-reduce" and n > 1:
            scattered = _read_reduce_scatter(module, ins, shape, groups)
            if scattered is not None:
                dim, further = scattered
                kind = "ReduceScatter"
                lowered = READ_BACK_FURTHER if further else READ_BACK
                shape = tuple(s // n if i == dim else s for i, s in enumerate(shape))
        out.append(HloCollective(ins.name, kind, dtype, shape, operand, groups, dim, lowered, chunks))
    return tuple(out)


_FLOAT = re.compile(r"(f\d+|bf16)\[")


def multiply_flops(text: str) -> int:
    """FLOPs of the products XLA writes as an elementwise ``multiply``: a ``dot_general`` that contracts
    nothing (an outer product, a product over batch dims alone), which XLA's simplifier turns into a
    multiply of broadcasts, keeping the dot's name in its metadata. Counted as a dot contracting one
    element, 2 × result elements, as symshard counts a product (the multiply does one FLOP per element)."""
    instrs, _, _ = _parse(text)
    total = 0
    for ins in instrs.values():
        if ins.op == "multiply" and _FLOAT.match(ins.type) and "dot_general" in ins.attrs:
            total += 2 * math.prod(_shape(ins.type)[1])
    return total


def sum_flops(text: str) -> int:
    """The adds of the module's local sums, as ``cost_analysis`` counts a ``reduce``: its operand's elements
    less its result's (``jnp.einsum`` sums a dim only one operand has before the dot)."""
    instrs, _, _ = _parse(text)
    total = 0
    for ins in instrs.values():
        if ins.op != "reduce" or not _FLOAT.match(ins.type) or not ins.args or ins.args[0] not in instrs:
            continue
        total += math.prod(_shape(instrs[ins.args[0]].type)[1]) - math.prod(_shape(ins.type)[1])
    return total


def dot_flops(text: str) -> int:
    """FLOPs of every ``dot`` in the module: 2 × result elements × contracted size; and of every product XLA
    wrote as a multiply (:func:`multiply_flops`)."""
    instrs, _, _ = _parse(text)
    total = multiply_flops(text)
    for ins in instrs.values():
        if ins.op != "dot":
            continue
        _, out_shape = _shape(ins.type)
        lhs = instrs.get(ins.args[0]) if ins.args else None
        m = re.search(r"lhs_contracting_dims=\{([\d,]*)\}", ins.attrs)
        contracted = 1
        if lhs is not None and m is not None:
            _, lhs_shape = _shape(lhs.type)
            for i in (int(x) for x in m.group(1).split(",") if x):
                contracted *= lhs_shape[i]
        total += 2 * math.prod(out_shape) * contracted
    return total


def reduction_flops(text: str) -> int:
    """The adds of the module's reductions as ``cost_analysis`` counts them: one per element of
    each ``all-reduce`` (and ``reduce-scatter``) result, whatever the group's size."""
    instrs, _, _ = _parse(text)
    total = 0
    for ins in instrs.values():
        op = ins.op[:-6] if ins.op.endswith("-start") else ins.op
        if op in ("all-reduce", "reduce-scatter"):
            total += sum(math.prod(int(x) for x in dims.split(",") if x) for _, dims in _ARRAY.findall(ins.type))
    return total

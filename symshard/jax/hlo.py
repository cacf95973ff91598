"""Reading XLA's compiled HLO text: which collectives it runs, over which devices, on how much data.

:func:`collectives` finds every ``all-gather``, ``all-reduce``, ``reduce-scatter``,
``all-to-all`` and ``collective-permute`` (async ``-start`` forms included) with
its element type, result shape and replica groups, in any of XLA's three spellings
(``{{0,1},{2,3}}``, the iota form ``[2,4]<=[4,2]T(1,0)`` and the mesh form
``mesh['axis_0'=4,'axis_1'=2] {'axis_1'}``), expanded to explicit device ids.
:func:`group_axes` names the mesh axes a set of groups spans; :func:`dot_flops`
counts the FLOPs of the ``dot`` instructions.

One backend lowering is undone explicitly, and recorded: XLA's CPU backend
rewrites a reduce-scatter as an all-reduce followed by a ``dynamic-slice`` indexed
by ``partition-id``; :func:`collectives` reports that pair as the reduce-scatter it
was, with ``lowered`` saying so.

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
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["HloCollective", "collectives", "dot_flops", "expand_groups", "group_axes"]

KINDS = {
    "all-gather": "AllGather",
    "all-reduce": "AllReduce",
    "reduce-scatter": "ReduceScatter",
    "all-to-all": "AllToAll",
    "collective-permute": "CollectivePermute",
}

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


def _shape(type_: str) -> tuple[str, tuple[int, ...]]:
    m = _ARRAY.search(type_)
    if m is None:
        return "", ()
    dims = tuple(int(x) for x in m.group(2).split(",") if x)
    return m.group(1), dims


def _parse(text: str) -> tuple[dict[str, _Instr], dict[str, list[_Instr]]]:
    instrs: dict[str, _Instr] = {}
    bodies: dict[str, list[_Instr]] = {}
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
        ins = _Instr(m.group("name"), m.group("type"), m.group("op"), args, m.group("attrs"), current)
        instrs[ins.name] = ins
        bodies.setdefault(current, []).append(ins)
    return instrs, bodies


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


def _slice_after(instrs: dict[str, _Instr], bodies: dict[str, list[_Instr]], name: str) -> _Instr | None:
    """The partition-id-indexed ``dynamic-slice`` that takes ``name``'s result (through converts), if any."""
    current = name
    for _ in range(4):
        users = [u for u in instrs.values() if current in u.args]
        if len(users) != 1:
            return None
        u = users[0]
        called = re.search(r"calls=%([\w.\-]+)", u.attrs)
        body = bodies.get(called.group(1), []) if called else []
        ops = {u.op} | {b.op for b in body}
        if "dynamic-slice" in ops and any(
            a.startswith("partition-id") or (a in instrs and instrs[a].op == "partition-id") for a in u.args
        ):
            return u
        if ops <= {"convert", "copy", "bitcast", "fusion", "parameter"}:
            current = u.name
            continue
        return None
    return None


def collectives(text: str, devices: int | None = None) -> tuple[HloCollective, ...]:
    """Every collective in the compiled module ``text``, in program order.

    An all-reduce whose result is only sliced by ``partition-id`` (after any converts)
    along one dim, by as many as the group has devices, is the CPU backend's lowering
    of a reduce-scatter; it is returned as that reduce-scatter with ``lowered`` set.
    """
    instrs, bodies = _parse(text)
    out = []
    for ins in instrs.values():
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
        if op == "all-reduce":
            sliced = _slice_after(instrs, bodies, ins.name)
            if sliced is not None:
                _, small = _shape(sliced.type)
                shrunk = [i for i, (a, b) in enumerate(zip(shape, small, strict=False)) if a != b]
                if len(small) == len(shape) and len(shrunk) == 1 and shape[shrunk[0]] == small[shrunk[0]] * n:
                    kind, dim, lowered = "ReduceScatter", shrunk[0], "all-reduce + dynamic-slice (CPU)"
                    shape = small
        out.append(HloCollective(ins.name, kind, dtype, shape, operand, groups, dim, lowered, chunks))
    return tuple(out)


def dot_flops(text: str) -> int:
    """FLOPs of every ``dot`` in the module: 2 × result elements × contracted size."""
    instrs, _ = _parse(text)
    total = 0
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

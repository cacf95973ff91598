"""Chains of sharded einsums with named arrays: programs, and what they cost.

A single matmul is costed by :mod:`symshard.planning.planner`. A layer is several of them,
where the result of one is the operand of the next and where the same weight is
used again in the backward pass. A :class:`Program` records such a chain. Each
array has a name and, at any moment, the shardings it is *held* in (the first
one is how it is stored; others are copies a step chose to keep, such as a
gathered activation saved for the backward pass). A matmul step states the
sharding each operand must have while the devices multiply; the program finds
the collectives that get each operand there from a sharding it holds
(:func:`~symshard.planning.planner.reshard_steps`), multiplies locally
(:func:`~symshard.notation.einsums.local_product`, which marks partial sums), and
reshards the product to the sharding the step asks for (AllReduce or
ReduceScatter of the partial sums, and so on).

Every cost is a SymPy expression in the dims (``B``, ``D``, ``F``), the axis
sizes (``|X|``, ``|Y|``), how many physical axes each logical axis spans
(``M_X``, ``M_Y``) and the hardware constants; :meth:`Program.subs` turns them
into numbers. The collective times are bandwidth-only, as the chapter reasons
about regimes: over an ICI axis ``V / (M · W_ici)`` for an AllGather or
ReduceScatter and twice that for an AllReduce (the ``book`` model on a
wraparound ring), over an NVLink or DCN axis ``V / (M · W)`` with ``W`` the
one-way egress of one chip.

Steps belong to a *phase* (``forward``, ``backward``). A collective can overlap
with a matmul of the same phase when neither needs the other's result
(:meth:`Program.overlaps`).

Examples:
    >>> p = Program("fsdp forward")
    >>> p.input("In[B_X, D]")
    >>> p.input("W_in[D_X, F]", role="weight")
    >>> step = p.matmul("In[B_X, D] · W_in[D, F] -> Tmp[B_X, F]")
    >>> [str(s.op) for s in p.steps]
    ['AllGather_X(W_in[D_X, F]) -> W_in[D, F]', 'In[B_X, D] · W_in[D, F] -> Tmp[B_X, F]']
    >>> p.comm_time()
    2*D*F/(M_X*W_ici)
    >>> p.flops()
    2*B*D*F/|X|
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

import sympy

from ..algebra.dtypes import canonical_dtype, dtype_bytes
from ..algebra.mathtext import as_expr, as_substitution
from ..algebra.symbols import C, W_hbm, axis, dim
from ..costs.collectives import CollectiveExpr, DynamicSlice
from ..costs.costmodels import Link, chain, check_comm_overlap, combine, links_for, timing, volume
from ..costs.kernels import hbm_traffic
from ..errors import MeshError, PlanError, UnknownModelError
from ..machines.mesh import MeshAxis
from ..machines.topology import Fabric
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import LocalMatmul, local_product, matmul
from ..notation.parser import parse_array

__all__ = ["PHASES", "Program", "Step", "spread"]

PHASES = ("forward", "backward")
"""The phases a step can belong to, in order."""


@cache
def spread(name: str) -> sympy.Symbol:
    """``M_X``: how many physical mesh axes the logical axis ``name`` spans (a positive integer).

    A collective over a logical axis spread over ``M`` physical axes runs over all
    of them at once, so its bandwidth is ``M`` times one axis's (the chapter's
    multi-axis AllGather).
    """
    return sympy.Symbol(f"M_{name}", positive=True, integer=True)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a program: a collective (or free slice) on a named array, or a local matmul.

    Attributes:
        index: position in the program, from 0.
        phase: ``forward`` or ``backward``.
        op: the collective applied to its operand, or the local product.
        array: the name of the array the step produces.
        purpose: why the step is there, in words.
        flops: FLOPs per device (0 for a collective).
        bytes: ``V``, the bytes the collective's formula is written in (0 for a matmul).
        time: ``T_math`` of a matmul, the bandwidth-only time of a collective.
        fabric: the network a collective runs over (``ici``, ``nvlink``, ``dcn``), else ''.
        inputs: indices of the steps whose results this step reads.
        hbm_bytes: for a matmul, the bytes each device reads and writes in HBM (its two blocks and its
            result, each once: :func:`~symshard.costs.kernels.hbm_traffic`); 0 for a collective.
        resources: the links a collective occupies (an ICI axis's own, or a shared NVLink, NIC or spine
            port); collectives on disjoint links can run at the same time.
    """

    index: int
    phase: str
    op: CollectiveExpr | LocalMatmul
    array: str
    purpose: str
    flops: sympy.Expr
    bytes: sympy.Expr
    time: sympy.Expr
    fabric: str = ""
    inputs: tuple[int, ...] = ()
    resources: frozenset[str] = frozenset()
    hbm_bytes: sympy.Expr = sympy.S.Zero

    @property
    def hbm_time(self) -> sympy.Expr:
        """``T_hbm`` of a matmul, its HBM bytes over ``W_hbm`` (0 for a collective)."""
        return self.hbm_bytes / W_hbm

    @property
    def is_matmul(self) -> bool:
        return isinstance(self.op, LocalMatmul)

    @property
    def is_collective(self) -> bool:
        """Whether data moves (a slice is a step but moves nothing)."""
        return isinstance(self.op, CollectiveExpr) and not isinstance(self.op.op, DynamicSlice)

    @property
    def kind(self) -> str:
        """``matmul``, ``AllGather``, ``ReduceScatter``, ``AllReduce``, ``AllToAll`` or ``DynamicSlice``."""
        return "matmul" if isinstance(self.op, LocalMatmul) else self.op.op.kind

    @property
    def axes(self) -> tuple[str, ...]:
        """The mesh axes a collective runs over (empty for a matmul)."""
        return () if isinstance(self.op, LocalMatmul) else self.op.op.axes

    @property
    def output(self) -> Array:
        return self.op.output

    def __str__(self) -> str:
        return str(self.op)


@dataclass
class Program:
    """A chain of sharded einsums over named arrays, with the collectives between them.

    Args:
        name: a label.
        fabric: the network of each logical axis (``{"P": "dcn"}``, any name :class:`~symshard.machines.topology.Fabric`
            reads, such as ``ib``); axes left out are ``default_fabric``.
        spread: physical axes per logical axis (``{"X": 2}``); axes left out get the symbol ``M_X``.
        dtype: element type of every array.
        default_fabric: ``ici`` (TPU), ``nvlink`` (GPU) or ``dcn``.
        comm_overlap: how the collectives of a pass add up into ``T_comms``: ``axes`` (the default, the
            book's convention: collectives on disjoint links, such as two ICI axes, run at the same time;
            those sharing links, such as two axes inside one GPU's NVLink node, one after another) or
            ``none`` (all one after another).
    """

    name: str = ""
    fabric: Mapping[str, str] = field(default_factory=dict)
    spread: Mapping[str, object] = field(default_factory=dict)
    dtype: str = "bf16"
    default_fabric: str = "ici"
    comm_overlap: str = "axes"
    steps: list[Step] = field(default_factory=list)
    held: dict[str, list[Array]] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    _source: dict[tuple[str, Array], int] = field(default_factory=dict, repr=False)
    _used_in: dict[tuple[str, Array], set[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.dtype = canonical_dtype(self.dtype)
        # one table of networks (topology.Fabric): the names it reads, synonyms included, stored canonical
        self.fabric = {a: _fabric(f, a).value for a, f in self.fabric.items()}
        self.default_fabric = _fabric(self.default_fabric, "").value
        try:
            self.comm_overlap = check_comm_overlap(self.comm_overlap)
        except UnknownModelError as err:
            raise PlanError(err.message, hint=err.hint) from None

    # -- building ----------------------------------------------------------------------------

    def input(self, array: Array | str, role: str = "activation") -> None:
        """Declare an array the program starts from, as it is stored (``role``: activation, weight, ...).

        Raises:
            PlanError: the name is taken.
        """
        arr = parse_array(array) if isinstance(array, str) else array
        if arr.name in self.held:
            raise PlanError(
                say("the program already has an array called {name}", name=arr.name),
                hint=say("give each array its own name"),
            )
        self.held[arr.name] = [arr]
        self.roles[arr.name] = role

    def array(self, name: str) -> Array:
        """How ``name`` is stored (its first sharding).

        Raises:
            PlanError: no such array.
        """
        return self._versions(name)[0]

    def versions(self, name: str) -> tuple[Array, ...]:
        """Every sharding the program holds ``name`` in, stored first."""
        return tuple(self._versions(name))

    def _versions(self, name: str) -> list[Array]:
        if name not in self.held:
            known = ", ".join(sorted(self.held)) or say("none yet")
            raise PlanError(
                say("the program has no array called {name}", name=name),
                hint=say("declare it with input(); known: {names}", names=known),
            )
        return self.held[name]

    def reshard(self, target: Array | str, *, phase: str = "forward", keep: bool = True, purpose: str = "") -> Array:
        """Bring the named array to ``target``'s sharding with collectives (no-op if held so).

        With ``keep`` the new sharding is held afterwards (besides the stored one).
        """
        dst = parse_array(target) if isinstance(target, str) else target
        self._check_phase(phase)
        self._reshard(dst, phase, keep, purpose or f"reshard {dst.name}")
        return dst

    def matmul(
        self,
        text: str,
        *,
        phase: str = "forward",
        keep: Iterable[str] = (),
        role: str = "activation",
        purpose: str = "",
    ) -> Step:
        """Add ``lhs · rhs -> out``: operands as they must be sharded while multiplying, ``out`` as wanted after.

        Operands are resharded from a sharding the program holds (gathered copies are
        transient unless their name is in ``keep``); the local product's partial sums
        are reduced (or reduce-scattered) into ``out``, which becomes a new array with
        the given ``role`` (``activation``, ``gradient``, ...).

        Returns:
            the local matmul step.

        Raises:
            PlanError: an unknown operand, blocks that do not line up, an output that exists, or
                an output sharding the product cannot reach.
        """
        self._check_phase(phase)
        mm = matmul(text)
        if mm.out is None:
            raise PlanError(
                say("'{text}' names no result", text=text),
                hint=say("write '... -> Name[dims]' with the sharding wanted"),
            )
        if mm.out.name in self.held:
            raise PlanError(
                say("{name} exists already in the program", name=mm.out.name), hint=say("name each result once")
            )
        keep = set(keep)
        deps = []
        for operand in (mm.lhs, mm.rhs):
            deps.append(
                self._reshard(operand, phase, operand.name in keep, f"prepare {operand.name} for {mm.out.name}")
            )
        local_out = local_product(mm.lhs, mm.rhs, mm.out_dims, mm.out.name)
        # 2 x the local size of every distinct dim (the blocks line up, so either operand's split will do)
        flops = sympy.Integer(2)
        for d in {d.name: d for d in (*mm.lhs.dims, *mm.rhs.dims)}.values():
            flops = flops * dim(d.name) / self._group(d.axes)
        step = self._add(
            Step(
                len(self.steps),
                phase,
                LocalMatmul(mm.lhs, mm.rhs, local_out),
                mm.out.name,
                purpose or f"{mm.lhs.name} · {mm.rhs.name} -> {mm.out.name}",
                flops,
                sympy.Integer(0),
                flops / C,
                "",
                tuple(d for d in deps if d is not None),
                hbm_bytes=hbm_traffic(self.bytes(mm.lhs), self.bytes(mm.rhs), self.bytes(local_out)),
            )
        )
        self.held[mm.out.name] = [local_out]
        self.roles[mm.out.name] = role
        self._source[(mm.out.name, local_out)] = step.index
        if mm.out != local_out:
            self._reshard(mm.out, phase, True, f"reduce {mm.out.name}", replace=True)
        return step

    # -- internals -------------------------------------------------------------------------------

    def _check_phase(self, phase: str) -> None:
        if phase not in PHASES:
            raise PlanError(
                say("unknown phase '{name}'", name=phase), hint=say("use {a} or {b}", a=PHASES[0], b=PHASES[1])
            )

    def _add(self, step: Step) -> Step:
        self.steps.append(step)
        return step

    def _reshard(self, dst: Array, phase: str, keep: bool, purpose: str, replace: bool = False) -> int | None:
        """Reshard ``dst.name`` from its cheapest held sharding; return the step that produced ``dst``."""
        versions = self._versions(dst.name)
        if dst in versions:
            self._used_in.setdefault((dst.name, dst), set()).add(phase)
            return self._source.get((dst.name, dst))
        best: tuple[int, Array, tuple[CollectiveExpr, ...]] | None = None
        errors = []
        for src in versions:
            try:
                chain = _reshard_steps(src, dst)
            except PlanError as err:
                errors.append(err)
                continue
            moving = sum(1 for c in chain if not isinstance(c.op, DynamicSlice))
            if best is None or moving < best[0]:
                best = (moving, src, chain)
        if best is None:
            raise errors[0]
        _, src, chain = best
        self._used_in.setdefault((dst.name, src), set()).add(phase)
        last = self._source.get((dst.name, src))
        for expr in chain:
            last = self._add(self._collective_step(expr, phase, purpose, last)).index
        if replace:
            self.held[dst.name] = [dst]
        elif keep:
            versions.append(dst)
        self._source[(dst.name, dst)] = last  # type: ignore[assignment]
        self._used_in.setdefault((dst.name, dst), set()).add(phase)
        return last

    def _collective_step(self, expr: CollectiveExpr, phase: str, purpose: str, after: int | None) -> Step:
        op = expr.op
        links: list[Link] = []
        fabrics = set()
        for a in op.axes:
            fabric = Fabric.parse(self.fabric.get(a, self.default_fabric))
            fabrics.add(fabric.value)
            # a logical axis over M physical axes: one link M times as fast (the chapter's multi-axis rule)
            m = as_expr(self.spread.get(a, spread(a)))
            links.extend(links_for(MeshAxis(a, axis(a), fabric.topology, fabric), {}, as_expr, scale=m))
        v = volume(op.kind, self.bytes(expr.operand), self.bytes(expr.output), self._group(op.axes))
        cost = timing(op.kind, links, as_expr(v), "book")  # its bandwidth term: the chapter's regime reasoning
        return Step(
            len(self.steps),
            phase,
            expr,
            expr.output.name,
            purpose,
            sympy.Integer(0),
            as_expr(cost.bytes),
            as_expr(cost.bandwidth_time),
            "+".join(sorted(fabrics)),
            () if after is None else (after,),
            cost.resources,
        )

    def _group(self, axes: Iterable[str]) -> sympy.Expr:
        out = sympy.Integer(1)
        for a in axes:
            out = out * axis(a)
        return out

    def _elements(self, array: Array) -> sympy.Expr:
        out = sympy.Integer(1)
        for d in array.dims:
            out = out * dim(d.name) / self._group(d.axes)
        return out

    # -- costs -------------------------------------------------------------------------------------

    def bytes(self, array: Array | str) -> sympy.Expr:
        """Bytes per device of ``array`` (notation, or a name: its stored sharding)."""
        if isinstance(array, str):
            array = self.array(array) if "[" not in array else parse_array(array)
        return dtype_bytes(self.dtype) * self._elements(array)

    def select(self, phase: str | None = None) -> list[Step]:
        """The steps of one phase (all of them with None)."""
        return [s for s in self.steps if phase is None or s.phase == phase]

    def collectives(self, phase: str | None = None, fabric: str | None = None) -> list[Step]:
        """The steps that move data, optionally of one phase and one fabric."""
        return [s for s in self.select(phase) if s.is_collective and (fabric is None or s.fabric == fabric)]

    def matmuls(self, phase: str | None = None) -> list[Step]:
        """The local matmul steps."""
        return [s for s in self.select(phase) if s.is_matmul]

    def flops(self, phase: str | None = None) -> sympy.Expr:
        """FLOPs per device."""
        return sympy.Add(*[s.flops for s in self.matmuls(phase)])

    def math_time(self, phase: str | None = None) -> sympy.Expr:
        """``T_math``: FLOPs per device over ``C``."""
        return sympy.Add(*[s.time for s in self.matmuls(phase)])

    def hbm_bytes(self, phase: str | None = None) -> sympy.Expr:
        """The bytes each device's matmuls read and write in HBM (each its blocks and result once)."""
        return sympy.Add(*[s.hbm_bytes for s in self.matmuls(phase)])

    def hbm_time(self, phase: str | None = None) -> sympy.Expr:
        """``T_hbm``: the matmuls' HBM bytes over ``W_hbm``.

        Examples:
            >>> p = Program("decode")
            >>> p.input("x[B, D]")
            >>> p.input("W[D, F_X]", role="weight")
            >>> _ = p.matmul("x[B, D] · W[D, F_X] -> y[B, F_X]")
            >>> p.hbm_time()
            (2*B*D + 2*B*F/|X| + 2*D*F/|X|)/W_hbm
        """
        return sympy.Add(*[s.hbm_time for s in self.matmuls(phase)])

    def local_time(self, phase: str | None = None) -> sympy.Expr:
        """The matmuls' own time, each the larger of its FLOPs and its HBM traffic: ``Σ max(T_math, T_hbm)``."""
        return sympy.Add(*[sympy.Max(s.time, s.hbm_time) for s in self.matmuls(phase)])

    def comm_bytes(self, phase: str | None = None, fabric: str | None = None) -> sympy.Expr:
        """The sum of the collectives' ``V``."""
        return sympy.Add(*[s.bytes for s in self.collectives(phase, fabric)])

    def comm_time(self, phase: str | None = None, fabric: str | None = None, overlap: str | None = None) -> sympy.Expr:
        """``T_comms``: the collectives' bandwidth-only times, added up as ``overlap`` says (default: the
        program's ``comm_overlap``): with ``axes`` the busiest link's total (a collective that reshards
        another's result runs after it), with ``none`` their sum."""
        how = check_comm_overlap(overlap) if overlap is not None else self.comm_overlap
        steps = self.collectives(phase, fabric)
        # a collective that reshards another's result waits for it: such chains run one after another
        first: dict[int, int] = {}
        for s in steps:
            before = next((i for i in s.inputs if i in first), None)
            first[s.index] = first[before] if before is not None else s.index
        chains: dict[int, list[Step]] = {}
        for s in steps:
            chains.setdefault(first[s.index], []).append(s)
        return as_expr(combine((chain(c) for c in chains.values()), how))

    def depends(self, later: Step, earlier: Step) -> bool:
        """Whether ``later`` needs the result of ``earlier`` (directly or through other steps)."""
        todo, seen = list(later.inputs), set()
        while todo:
            i = todo.pop()
            if i == earlier.index:
                return True
            if i not in seen:
                seen.add(i)
                todo.extend(self.steps[i].inputs)
        return False

    def overlaps(self, step: Step) -> tuple[Step, ...]:
        """The matmuls of the same phase a collective can run under: neither needs the other."""
        return tuple(m for m in self.matmuls(step.phase) if not self.depends(m, step) and not self.depends(step, m))

    def kept(self, phase: str = "forward", used: str = "backward") -> list[tuple[str, Array]]:
        """The array shardings made (or declared) by ``phase`` or before that ``used`` steps read."""
        order = PHASES.index(phase)
        out = []
        for (name, arr), phases in self._used_in.items():
            src = self._source.get((name, arr))
            made = "forward" if src is None else self.steps[src].phase
            if used in phases and PHASES.index(made) <= order and arr in self.held.get(name, []):
                out.append((name, arr))
        return out

    def subs(self, expr: sympy.Expr, values: Mapping) -> sympy.Expr:
        """``expr`` with values substituted (a convenience for ``sympify(expr).subs``)."""
        return as_expr(expr).subs(as_substitution(values))

    def describe(self) -> list[str]:
        """The steps, one per line: phase, the step, and for a collective its bytes and time."""
        lines = []
        for s in self.steps:
            if s.is_matmul:
                lines.append(f"{s.phase:8}  {s.op}   [{s.flops} FLOPs]")
            else:
                lines.append(f"{s.phase:8}  {s.op}   [V = {s.bytes}, T = {s.time}]")
        return lines

    def __repr__(self) -> str:
        from ..shown import summary

        return summary("Program", self.name, {"steps": len(self.steps), "arrays": list(self.held)[:8]},
                       dtype=self.dtype, comm_overlap=self.comm_overlap)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def _fabric(value: object, axis_name: str) -> Fabric:
    try:
        return Fabric.parse(value)  # type: ignore[arg-type]
    except MeshError as err:
        message = say("{what} for axis {axis}", what=err.message, axis=axis_name) if axis_name else err.message
        raise PlanError(message, hint=err.hint) from None


def _reshard_steps(src: Array, dst: Array) -> tuple[CollectiveExpr, ...]:
    from .planner import reshard_steps

    return reshard_steps(src, dst)

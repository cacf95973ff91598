"""Run a planner strategy for real: its steps as ``shard_map`` collectives on JAX devices.

Each step of a :class:`~symshard.planning.strategies.Strategy` becomes the JAX collective
that does exactly that, inside the body of ``jax.shard_map``:

===========================  ===========================================================
step                         inside the body
===========================  ===========================================================
``AllGather_X``              ``all_gather(x, 'X', axis=dim, tiled=True)`` (one per dim)
``ReduceScatter_{X,K}``      ``psum_scatter(x, 'X', scatter_dimension=K, tiled=True)``
``AllReduce_X``              ``psum(x, 'X')``
``AllToAll_{X,K}``           ``all_to_all(x, 'X', split_axis=K, concat_axis=src, tiled=True)``
                             (a run of one dim's axes: one ``all_to_all`` over them all)
``AllToAll_{X→H,Y→B}``       each move's ``all_to_all`` in turn (the blocks end where one exchange
                             over Y and X puts them)
``CollectivePermute_X``      ``ppermute(x, 'X', [(i, i + 1 mod |X|)])``
a reshard by permute         each device slices the block one receiver needs, then one ``ppermute``
                             over every mesh axis (a one-to-one matching of senders and receivers)
``DynamicSlice_{X,K}``       ``dynamic_slice_in_dim(x, axis_index('X') · n, n, K)``
``Sum_L`` (a local sum)      ``sum(x, axis=L)``: partial sums where L was split
local product                ``einsum`` of the two blocks
===========================  ===========================================================

While tracing, every step's local shape is checked against what symshard says
the device holds; after the run, every device's shard of every array that
crosses a program boundary (``addressable_shards``) is checked too, and the
result is compared with the unsharded product.

Partial sums cross program boundaries *stacked* (see
:func:`symshard.jax.interop.stacked_spec`), so an operand may be unreduced.

Two ways to run: ``fused=True`` builds one program for the whole strategy;
``fused=False`` builds one per operand leg and one for the product and the
result's leg, and caches them, which lets a sweep over many strategies share
compiled programs.
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..algebra.dtypes import canonical_dtype
from ..costs.collectives import (
    AllGather,
    AllReduce,
    AllToAll,
    CollectiveExpr,
    CollectivePermute,
    DynamicSlice,
    FusedAllToAll,
    ReduceScatter,
)
from ..errors import ShardingError
from ..machines.mesh import Mesh
from ..messages import say
from ..notation.arrays import Array
from ..notation.einsums import LocalMatmul, LocalSum
from ..planning.route_steps import Repermute
from ..planning.strategies import Plan, PlanStep, Strategy
from .interop import jax_mesh, local_shape, stacked_shape, stacked_spec
from .runtime import require_jax

__all__ = ["Execution", "execute", "forget_programs", "jax_dtype", "sample_operands", "undivided"]

_JAX_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "fp64": "float64"}

# exact integer range of each float type: integer inputs whose sums stay below it multiply exactly
_EXACT = {"fp32": 2**24, "bf16": 2**8, "fp16": 2**11, "fp64": 2**53}


def jax_dtype(dtype: str) -> Any:
    """The ``jax.numpy`` dtype for a symshard dtype name (``fp32``, ``bf16``, ...).

    Raises:
        ShardingError: a dtype JAX's CPU backend cannot multiply (fp8, int4, ...).
    """
    jnp = require_jax().numpy
    name = _JAX_DTYPES.get(canonical_dtype(dtype))
    if name is None:
        raise ShardingError(
            say("symshard cannot run {dtype} matmuls in JAX", dtype=dtype),
            hint=say("use fp32 or bf16 (the byte counts of other dtypes follow from these)"),
        )
    return getattr(jnp, name)


@dataclass(frozen=True, slots=True)
class Execution:
    """What running one strategy gave.

    ``correct`` is exact equality with the unsharded product when ``exact`` (the
    inputs are small integers whose sums the dtype holds exactly), else closeness
    within ``tolerance``; ``shapes_ok`` says every device's blocks had symshard's
    local shapes.
    """

    strategy: str
    correct: bool
    exact: bool
    max_error: float
    tolerance: float
    shapes_ok: bool
    shape_problems: tuple[str, ...]
    programs: int


def sample_operands(plan: Plan, seed: int = 0) -> tuple[Any, Any, bool]:
    """Two numpy operands of the plan's shapes: small integers, so that the product is exact
    when the dtype can hold every partial sum (the third value says whether it can)."""
    import numpy as np

    sizes = {k: int(v) for k, v in plan.sizes}
    mm = plan.matmul
    reduced = 1
    for d in mm.reduced:
        reduced *= sizes[d]
    limit = _EXACT.get(plan.dtype, 2**8)
    bound = 1
    while (bound + 1) ** 2 * reduced <= limit and bound < 8:
        bound += 1
    exact = bound**2 * reduced <= limit
    rng = np.random.default_rng(seed)
    a = rng.integers(-bound, bound + 1, size=[sizes[d] for d in mm.lhs.dim_names]).astype(np.float64)
    b = rng.integers(-bound, bound + 1, size=[sizes[d] for d in mm.rhs.dim_names]).astype(np.float64)
    return a, b, exact


def undivided(plan: Plan, strategy: Strategy) -> str | None:
    """Why ``strategy`` cannot run with ``plan``'s sizes, or None: the first array it holds (an
    operand, a step's input or output, a local product's block) with a dim its mesh axes do not
    split evenly. Such a block has no integer shape, so JAX cannot hold it. The planner lists no
    such strategy once sizes are numbers; one taken from the symbolic plan may be one.

    Examples:
        >>> from symshard.planning.planner import plan
        >>> p = plan("A[I_X, J] · B[J, K] -> C[I_X, K]", "X=4", "I=8,J=2,K=4")
        >>> undivided(p, p.strategies[0]) is None
        True
        >>> symbolic = plan("A[I_X, J] · B[J, K] -> C[I_X, K]", "X=4", all=True)
        >>> s = next(s for s in symbolic.strategies if "J_X" in " ".join(map(str, s.steps)))
        >>> print(undivided(p, s))
        A[I, J_X] splits J = 2 over X, 4 devices
    """
    sizes = {k: int(v) for k, v in plan.sizes}
    mm = plan.matmul
    arrays: list[Array] = [mm.lhs, mm.rhs]
    for st in strategy.steps:
        op = st.op
        arrays += [op.lhs, op.rhs, op.output] if isinstance(op, LocalMatmul) else [op.operand, op.output]
    for arr in arrays:
        for d in arr.dims:
            count = math.prod(int(plan.mesh.size(a)) for a in d.axes)
            if sizes[d.name] % count:
                over = "·".join(d.axes)
                return say(
                    "{array} splits {dim} = {size} over {axes}, {count} {count:device|devices}",
                    array=str(arr),
                    dim=d.name,
                    size=f"{sizes[d.name]:,}",
                    axes=over,
                    count=f"{count:,}",
                )
    return None


def _letters(names: Sequence[str], table: dict[str, str]) -> str:
    for n in names:
        table.setdefault(n, string.ascii_letters[len(table)])
    return "".join(table[n] for n in names)


def _reference(plan: Plan, a: Any, b: Any) -> Any:
    import numpy as np

    mm = plan.matmul
    table: dict[str, str] = {}
    spec = f"{_letters(mm.lhs.dim_names, table)},{_letters(mm.rhs.dim_names, table)}->{_letters(mm.out_dims, table)}"
    return np.einsum(spec, a, b)


def permute_plan(
    src: Array,
    dst: Array,
    mesh: Mapping[str, int],
    dims: Mapping[str, int],
    axes: Sequence[str] | None = None,
) -> tuple[dict[tuple[int, ...], tuple[int, ...]], dict[tuple[int, ...], tuple[int, ...]]]:
    """Who sends to whom when a collective-permute reshards ``src`` into ``dst``, and where in the
    sender's block the receiver's piece starts: ``(sender, offsets)``, both keyed by the receiving
    device's coordinates on ``mesh`` (axis name to size, major first). The holders of a block serve
    its receivers one to one (a perfect matching), each pair of devices differing only along
    ``axes`` (the permute's, when given) if that can be done; the receiver itself first, else the
    holder fewest axes away.

    Examples:
        >>> src, dst = Array.parse("B[J, K_PQ]"), Array.parse("B[J, K_YQ]")
        >>> sender, _ = permute_plan(src, dst, {"P": 2, "Q": 2, "Y": 2}, {"J": 8, "K": 8}, ("P", "Y"))
        >>> sender[(1, 0, 1)]  # wants K block 2 of K_YQ, its own block of K_PQ: it keeps it
        (1, 0, 1)
        >>> sender[(0, 0, 1)]  # wants K block 2 too: the other holder sends it
        (1, 0, 0)
        >>> all(s[1] == r[1] for r, s in sender.items())  # no pair crosses Q
        True
    """
    names = list(mesh)
    sizes = [mesh[a] for a in names]
    devices = list(itertools.product(*[range(n) for n in sizes]))

    def blocks(arr: Array, coords: tuple[int, ...]) -> tuple[int, ...]:
        at = dict(zip(names, coords, strict=True))
        out = []
        for d in arr.dims:
            b = 0
            for a in d.axes:  # major first
                b = b * mesh[a] + at[a]
            out.append(b)
        return tuple(out)

    def count(axes: Sequence[str]) -> int:
        return math.prod(mesh[a] for a in axes)

    need: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for dev in devices:  # what each receiver needs: the source block, the offsets inside it
        want = blocks(dst, dev)
        src_b, offs = [], []
        for d_s, d_t, b in zip(src.dims, dst.dims, want, strict=True):
            ratio = count(d_t.axes) // count(d_s.axes)
            src_b.append(b // ratio)
            offs.append((b % ratio) * (dims[d_t.name] // count(d_t.axes)))
        need[dev] = (tuple(src_b), tuple(offs))
    holders: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for dev in devices:
        holders.setdefault(blocks(src, dev), []).append(dev)
    moving = set(axes) if axes is not None else set(names)
    fixed = [i for i, a in enumerate(names) if a not in moving]

    def candidates(dev: tuple[int, ...], strict: bool) -> list[tuple[int, ...]]:
        pool = holders[need[dev][0]]
        if strict:  # only holders that agree with dev on every axis the permute does not cross
            pool = [h for h in pool if all(h[i] == dev[i] for i in fixed)]
        return sorted(pool, key=lambda h: (h != dev, sum(a != b for a, b in zip(h, dev, strict=True)), h))

    for strict in (True, False):
        sender = _matching(devices, lambda dev, strict=strict: candidates(dev, strict))
        if sender is not None:
            break
    else:  # pragma: no cover - every block has as many holders as receivers
        raise ShardingError(
            say("no collective-permute reshards {src} into {dst}", src=str(src), dst=str(dst)),
            hint=say("this is a bug in symshard; please report it"),
        )
    return sender, {dev: offs for dev, (_, offs) in need.items()}


def _matching(receivers, options) -> dict | None:
    """A perfect matching of receivers to senders, each receiver's ``options`` tried in order
    (Kuhn's augmenting paths); None when there is none."""
    owner: dict = {}  # sender -> receiver

    def place(dev, seen: set) -> bool:
        for h in options(dev):
            if h in seen:
                continue
            seen.add(h)
            if h not in owner or place(owner[h], seen):
                owner[h] = dev
                return True
        return False

    for dev in receivers:
        if not place(dev, set()):
            return None
    by_receiver = {dev: h for h, dev in owner.items()}
    return {dev: by_receiver[dev] for dev in receivers}


class _Runner:
    """Builds and caches the ``shard_map`` programs of strategies on one mesh."""

    def __init__(self, mesh: Mesh, sizes: Mapping[str, int], dtype: str) -> None:
        self.mesh = mesh
        self.sizes = dict(sizes)
        self.dtype = canonical_dtype(dtype)
        self.jmesh = jax_mesh(mesh, axis_types="auto")
        self.programs: dict[tuple, Any] = {}
        self.compiled = 0

    # -- one step on one device's block ---------------------------------------------------------

    def local(self, array: Array) -> tuple[int, ...]:
        return local_shape(array, self.mesh, self.sizes)

    def step(self, x: Any, st: PlanStep, y: Any = None) -> Any:
        jax = require_jax()
        op = st.op
        if isinstance(op, LocalMatmul):
            table: dict[str, str] = {}
            spec = (
                f"{_letters(op.lhs.dim_names, table)},{_letters(op.rhs.dim_names, table)}"
                f"->{_letters(op.output.dim_names, table)}"
            )
            out = jax.numpy.einsum(spec, x, y)
        elif isinstance(op, LocalSum):
            names = op.operand.dim_names
            out = jax.numpy.sum(x, axis=tuple(names.index(d) for d in op.dims))
        else:
            out = self.collective(x, op)
        want = self.local(st.output)
        if tuple(out.shape) != want:
            raise ShardingError(
                say(
                    "after {step}, JAX's block has shape {shape} but symshard says {want}",
                    step=str(st),
                    shape=str(tuple(out.shape)),
                    want=str(want),
                ),
                hint=say("this is a bug in symshard or in its JAX translation; please report it"),
            )
        return out

    def collective(self, x: Any, expr: CollectiveExpr) -> Any:
        lax = require_jax().lax
        op, src = expr.op, expr.operand
        names = src.dim_names

        def group(axes: Sequence[str]) -> str | tuple[str, ...]:
            return axes[0] if len(axes) == 1 else tuple(axes)

        if isinstance(op, AllGather):
            for i, d in enumerate(src.dims):
                gone = [a for a in d.axes if a in op.axes]
                if gone:
                    x = lax.all_gather(x, group(gone), axis=i, tiled=True)
            return x
        if isinstance(op, ReduceScatter):
            target = names.index(op.target(src))
            return lax.psum_scatter(x, group(op.axes), scatter_dimension=target, tiled=True)
        if isinstance(op, AllReduce):
            return lax.psum(x, group(op.axes))
        if isinstance(op, FusedAllToAll):  # its moves one after another leave every block where one exchange does
            for move in op.moves:
                step = move(src)
                x = self.collective(x, step)
                src = step.output
            return x
        if isinstance(op, AllToAll):
            target = names.index(op.target(src))
            sources = {src.sharded_dim(a) for a in op.axes}
            if len(op.axes) > 1 and len(sources) == 1:  # a run of one dim's axes, moved at once
                source = names.index(sources.pop() or "")
                return lax.all_to_all(x, tuple(op.axes), split_axis=target, concat_axis=source, tiled=True)
            for a in op.axes:
                source = names.index(src.sharded_dim(a) or "")
                x = lax.all_to_all(x, a, split_axis=target, concat_axis=source, tiled=True)
            return x
        if isinstance(op, Repermute):
            return self._repermute(x, expr)
        if isinstance(op, CollectivePermute):
            n = int(self.mesh.size(op.axes[0]))
            return lax.ppermute(x, op.axes[0], [(i, (i + 1) % n) for i in range(n)])
        if isinstance(op, DynamicSlice):
            target = next(i for i, (d, e) in enumerate(zip(src.dims, expr.output.dims, strict=True)) if d != e)
            index: Any = 0
            count = 1
            for a in op.axes:  # major first
                n = int(self.mesh.size(a))
                index = index * n + lax.axis_index(a)
                count *= n
            size = x.shape[target] // count
            return lax.dynamic_slice_in_dim(x, index * size, size, axis=target)
        raise ShardingError(
            say("symshard cannot run {what} in JAX", what=str(expr)),
            hint=say("use the planner's collectives"),
        )

    def _repermute(self, x: Any, expr: CollectiveExpr) -> Any:
        """A reshard by collective-permute: each device cuts the block one other device needs from
        its own and sends it there (a perfect matching of senders to receivers, :func:`permute_plan`)."""
        jax = require_jax()
        lax, jnp = jax.lax, jax.numpy
        names = [a.name for a in self.mesh.axes]
        sizes = [int(a.size) for a in self.mesh.axes]
        mesh = dict(zip(names, sizes, strict=True))
        sender, need = permute_plan(expr.operand, expr.output, mesh, self.sizes, expr.op.axes)
        devices = list(itertools.product(*[range(n) for n in sizes]))  # row-major: the flat device index
        flat = {dev: i for i, dev in enumerate(devices)}
        offsets = [[0] * len(expr.operand.dims) for _ in devices]
        for dev, s in sender.items():
            offsets[flat[s]] = list(need[dev])
        table = jnp.asarray(offsets, dtype=jnp.int32)
        index: Any = 0
        for a, n in zip(names, sizes, strict=True):
            index = index * n + lax.axis_index(a)
        local = self.local(expr.output)
        piece = lax.dynamic_slice(x, tuple(table[index, i] for i in range(len(expr.operand.dims))), local)
        pairs = [(flat[s], flat[dev]) for dev, s in sender.items()]
        return lax.ppermute(piece, tuple(names), pairs)

    # -- programs ---------------------------------------------------------------------------------

    def _unstack(self, x: Any, array: Array) -> Any:
        return x.reshape(x.shape[len(array.unreduced) :])

    def _stack(self, x: Any, array: Array) -> Any:
        return x.reshape((1,) * len(array.unreduced) + tuple(x.shape))

    def program(self, key: tuple, inputs: tuple[Array, ...], output: Array, steps: tuple[PlanStep, ...]) -> Any:
        """A jitted ``shard_map`` from ``inputs`` (stacked) to ``output`` (stacked) doing ``steps``."""
        cached = self.programs.get(key)
        if cached is not None:
            return cached
        jax = require_jax()

        def body(*blocks: Any) -> Any:
            xs = [self._unstack(b, arr) for b, arr in zip(blocks, inputs, strict=True)]
            x = xs[0]
            for st in steps:
                if isinstance(st.op, LocalMatmul):
                    x = self.step(xs[0], st, xs[1])
                else:
                    x = self.step(x, st)
            return self._stack(x, output)

        fn = jax.jit(
            jax.shard_map(
                body,
                mesh=self.jmesh,
                in_specs=tuple(stacked_spec(a) for a in inputs),
                out_specs=stacked_spec(output),
                check_vma=False,
            )
        )
        self.programs[key] = fn
        self.compiled += 1
        return fn

    def put(self, value: Any, array: Array) -> Any:
        """A numpy value of ``array`` as a global JAX array, stacked if unreduced (the whole value
        on the first device of each unreduced group, zeros elsewhere: exact partial sums)."""
        import numpy as np

        jax = require_jax()
        shape = stacked_shape(array, self.mesh, self.sizes)
        stacked = np.zeros(shape, dtype=np.float64)
        stacked[(0,) * len(array.unreduced)] = value
        sharding = jax.sharding.NamedSharding(self.jmesh, stacked_spec(array))
        return jax.device_put(stacked.astype(np.dtype(jax_dtype(self.dtype))), sharding)

    def check_shards(self, value: Any, array: Array, problems: list[str]) -> None:
        want = (1,) * len(array.unreduced) + self.local(array)
        for shard in value.addressable_shards:
            if tuple(shard.data.shape) != want:
                problems.append(
                    say(
                        "{array} on device {device}: {shape}, symshard says {want}",
                        array=str(array),
                        device=shard.device.id,
                        shape=str(tuple(shard.data.shape)),
                        want=str(want),
                    )
                )
                return

    def run(
        self, plan: Plan, strategy: Strategy, a: Any, b: Any, *, fused: bool, memo: dict | None = None
    ) -> tuple[Any, list[str]]:
        mm = plan.matmul
        local = strategy.local
        problems: list[str] = []
        memo = {} if memo is None else memo
        for value, arr in ((a, mm.lhs), (b, mm.rhs)):
            if ("put", arr) not in memo:
                memo[("put", arr)] = self.put(value, arr)
        xa, xb = memo[("put", mm.lhs)], memo[("put", mm.rhs)]
        self.check_shards(xa, mm.lhs, problems)
        self.check_shards(xb, mm.rhs, problems)
        if fused:
            key = ("fused", mm.lhs, mm.rhs, strategy.steps)
            lhs_steps = tuple(s for s in strategy.steps if s.role == "lhs")
            rhs_steps = tuple(s for s in strategy.steps if s.role == "rhs")
            rest = tuple(s for s in strategy.steps if s.role in ("matmul", "out"))
            fn = self._fused(key, mm.lhs, mm.rhs, lhs_steps, rhs_steps, rest, strategy.output)
            out = fn(xa, xb)
        else:
            for role, src, dst in (("lhs", mm.lhs, local.lhs), ("rhs", mm.rhs, local.rhs)):
                steps = tuple(s for s in strategy.steps if s.role == role)
                if steps:
                    key = ("leg", src, dst, steps)
                    if key not in memo:
                        memo[key] = self.program(key, (src,), dst, steps)(xa if role == "lhs" else xb)
                    if role == "lhs":
                        xa = memo[key]
                    else:
                        xb = memo[key]
            self.check_shards(xa, local.lhs, problems)
            self.check_shards(xb, local.rhs, problems)
            rest = tuple(s for s in strategy.steps if s.role in ("matmul", "out"))
            fn = self.program(("product", local.lhs, local.rhs, rest), (local.lhs, local.rhs), strategy.output, rest)
            out = fn(xa, xb)
        self.check_shards(out, strategy.output, problems)
        return out, problems

    def _fused(self, key, lhs, rhs, lhs_steps, rhs_steps, rest, output) -> Any:
        cached = self.programs.get(key)
        if cached is not None:
            return cached
        jax = require_jax()

        def body(xa: Any, xb: Any) -> Any:
            xa, xb = self._unstack(xa, lhs), self._unstack(xb, rhs)
            for st in lhs_steps:
                xa = self.step(xa, st)
            for st in rhs_steps:
                xb = self.step(xb, st)
            x = None
            for st in rest:
                x = self.step(xa, st, xb) if isinstance(st.op, LocalMatmul) else self.step(x, st)
            return self._stack(x, output)

        fn = jax.jit(
            jax.shard_map(
                body,
                mesh=self.jmesh,
                in_specs=(stacked_spec(lhs), stacked_spec(rhs)),
                out_specs=stacked_spec(output),
                check_vma=False,
            )
        )
        self.programs[key] = fn
        self.compiled += 1
        return fn


_RUNNERS: dict[tuple, _Runner] = {}


def _runner(plan: Plan) -> _Runner:
    sizes = {k: int(v) for k, v in plan.sizes}
    key = (tuple((a.name, int(a.size)) for a in plan.mesh.axes), tuple(sorted(sizes.items())), plan.dtype)
    if key not in _RUNNERS:
        _RUNNERS[key] = _Runner(Mesh({a.name: a.size for a in plan.mesh.axes}), sizes, plan.dtype)
    return _RUNNERS[key]


def forget_programs() -> None:
    """Drop every compiled ``shard_map`` program kept for later runs (a sweep, between meshes)."""
    _RUNNERS.clear()


def execute(
    plan: Plan,
    strategy: Strategy | int | str | None = None,
    operands: tuple[Any, Any] | None = None,
    *,
    fused: bool = True,
    seed: int = 0,
    memo: dict | None = None,
) -> Execution:
    """Run ``strategy`` of ``plan`` on JAX devices and compare with the unsharded product.

    Args:
        plan: a numeric plan (:func:`symshard.plan` with a mesh and every size).
        strategy: a strategy of the plan, its 1-based number or its name (default: the best).
        operands: the two global operands as numpy arrays (default: small random integers).
        fused: one ``shard_map`` program for the whole strategy (True), or cached programs
            per leg (False), which a sweep over many strategies compiles far fewer of.
        seed: the seed of the default operands.
        memo: a dict to keep the placed operands and the results of operand legs in, for
            runs of many strategies on the same operands (a sweep); only with default operands.

    Raises:
        ShardingError: symbolic sizes, a dtype JAX cannot run, or a step whose block shape
            in JAX differs from symshard's.
        MeshError: fewer JAX devices than the mesh needs (the hint says how to get more).
    """
    import numpy as np

    if not plan.mesh.is_numeric or not all(getattr(v, "is_number", True) for _, v in plan.sizes):
        raise ShardingError(
            say("cannot run {matmul} with symbolic sizes", matmul=str(plan.matmul)),
            hint=say("pass a mesh and every dim's size to plan()"),
        )
    chosen = plan.strategies[0] if strategy is None else strategy
    s = chosen if isinstance(chosen, Strategy) else plan.strategy(chosen)
    if operands is None:
        a, b, exact = sample_operands(plan, seed)
    else:
        a, b = (np.asarray(x, dtype=np.float64) for x in operands)
        exact = False
    runner = _runner(plan)
    before = runner.compiled
    jax = require_jax()
    dtype = np.dtype(jax_dtype(plan.dtype))
    a, b = a.astype(dtype).astype(np.float64), b.astype(dtype).astype(np.float64)  # what the devices hold
    out, problems = runner.run(plan, s, a, b, fused=fused, memo=memo if operands is None else None)
    got = np.asarray(jax.device_get(out)).astype(np.float64)
    got = got.sum(axis=tuple(range(len(s.output.unreduced)))) if s.output.unreduced else got
    want = _reference(plan, a, b)
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    tolerance = (
        0.0
        if exact
        else float(jax.numpy.finfo(dtype).eps)  # numpy's finfo knows no bfloat16
        * float(np.max(np.abs(a)) * np.max(np.abs(b)))
        * (1 + int(np.prod([dict(plan.sizes)[d] for d in plan.matmul.reduced] or [1])))
    )
    return Execution(
        strategy=s.name,
        correct=err <= tolerance,
        exact=exact,
        max_error=err,
        tolerance=tolerance,
        shapes_ok=not problems,
        shape_problems=tuple(problems),
        programs=runner.compiled - before,
    )

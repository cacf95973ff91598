"""Sharded matmuls as values: einsum roles of the dims, the chapter's four cases, local products.

A :class:`Matmul` is two sharded operands and, optionally, the sharding wanted
for the result: ``A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]``. Its dims play einsum
roles: a dim in both operands and not in the output is *contracting*; in both
and in the output it is a *batch* dim; in one operand and the output it is
*free*; in one operand only it is *summed* inside that operand.

:meth:`Matmul.classify` names the chapter's case with a one-sentence reason.
:func:`local_product` is what one device computes from its own blocks (the
book's ``·_LOCAL``): it refuses blocks that do not line up, and marks the result
unreduced over the axes that split a contracted dim.

Examples:
    >>> mm = matmul("A[I, J_X] · B[J_X, K] -> C[I, K]")
    >>> mm.contracting, mm.classify().case
    (('J',), 3)
    >>> str(local_product(mm.lhs, mm.rhs, ("I", "K")))
    'Out[I, K]{U_X}'
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import PlanError, SymshardError
from ..memo import memoized
from ..messages import Message, Names, keyed, say
from .arrays import Array, Dim, format_axes
from .parser import parse_array, parse_matmul_syntax

__all__ = [
    "ENGLISH",
    "Classification",
    "LocalMatmul",
    "LocalSum",
    "Matmul",
    "intended",
    "local_product",
    "local_sums",
    "matmul",
]


# The English sentences of classify(), by key. Other languages live in symshard/i18n (loaded on
# first use, never by `import symshard`); a value is text, a tuple of names ("J and K") or a
# nested message (a fallback word such as "the left operand", an optional clause).
ENGLISH: dict[str, str] = {
    "case.1": "no contracting dim ({names}) is sharded, so each device multiplies its own blocks and the "
    "result keeps the operands' shardings with no communication.",
    "case.1.none": "the product has no contracting dim, so each device multiplies its own blocks and the "
    "result keeps the operands' shardings with no communication.",
    "case.2.one_sided": "{owner} shards the contracting dim {dims} along {axes} but {other} does not, so the "
    "blocks do not line up: AllGather {owner} over {axes} first{alternative}.",
    "case.2.busy": " ({other} cannot be sliced to match: {axis} already shards {dim})",
    "case.2.slice": " (or slice {other} to match, multiply locally and AllReduce)",
    "case.2.mismatch": "the contracting dim {dim} is sharded along {lhs_axes} in {lhs} but along {rhs_axes} in "
    "{rhs}, so the blocks do not line up: gather (or reshard) one operand so that both split {dim} the same way.",
    "case.3": "both operands shard the contracting dim {dims} along {axes}, so the local products are partial "
    "sums: multiply locally to {out}[{out_dims}]{{U_{axes}}}, then AllReduce (or ReduceScatter) over {axes}.",
    "case.4": "mesh axis {axis} shards {first} of {lhs} and {second} of {rhs}, both kept in the output, so a "
    "device would hold only a diagonal block of {out}; AllGather one operand over {axis} first.",
    "note.summed": "{dim} is summed inside {holder} alone; its sharding along {axes} leaves partial sums",
    "note.contracting_sharded": "its contracting dims are sharded too: {dims}",
    "word.left_operand": "the left operand",
    "word.right_operand": "the right operand",
    "word.one_operand": "one operand",
    "word.nothing": "nothing",
    "word.it": "it",
}


def _message(key: str, **values: object) -> Message:
    return keyed(ENGLISH, key, **{k: Names(v) if isinstance(v, tuple) else v for k, v in values.items()})


def _label(array: Array, fallback: Message) -> str:
    return array.name or fallback


@dataclass(frozen=True, slots=True)
class Classification:
    """Which of the chapter's four cases a matmul is in, and why.

    ``reason`` and ``notes`` are English; ``message`` and ``note_messages`` hold the same
    sentences as keys and values, so :func:`symshard.explain` can say them in another language.

    Examples:
        >>> import symshard as ss
        >>> c = matmul("A[I, J_X] · B[J_X, K] -> C[I, K]").classify()
        >>> print(ss.explain(c, "zh"))  # doctest: +NORMALIZE_WHITESPACE
        情况 3：两个操作数都沿 X 对收缩维度 J 分片，所以各设备的本地乘积只是部分和：先在本地相乘得到
        C[I, K]{U_X}，再沿 X 做 AllReduce（或 ReduceScatter）。
    """

    case: int
    reason: str
    notes: tuple[str, ...] = ()
    message: Message | None = field(default=None, compare=False)
    note_messages: tuple[Message, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"Case {self.case}: {self.reason}"

    @classmethod
    def of(cls, case: int, message: Message, notes: Sequence[Message] = ()) -> Classification:
        """A classification whose English texts are rendered from ``message`` and ``notes``."""
        return cls(case, str(message), tuple(str(n) for n in notes), message, tuple(notes))


@dataclass(frozen=True, slots=True)
class Matmul:
    """``lhs · rhs -> out`` with einsum semantics; ``out`` None means "the natural sharding".

    Raises:
        PlanError: an output dim that neither operand has.
    """

    lhs: Array
    rhs: Array
    out: Array | None = None
    text: str = field(default="", compare=False)
    outer: bool = field(default=False, compare=False)  # the user said an outer product is meant

    def __post_init__(self) -> None:
        if self.out is not None:
            known = set(self.lhs.dim_names) | set(self.rhs.dim_names)
            for d in self.out.dim_names:
                if d not in known:
                    raise PlanError(
                        say(
                            "output dim {dim} of {output} appears in neither {lhs} nor {rhs}",
                            dim=d,
                            output=str(self.out),
                            lhs=str(self.lhs),
                            rhs=str(self.rhs),
                        ),
                        hint=say("every output dim must come from an operand (einsum semantics)"),
                    )

    # -- einsum roles ------------------------------------------------------------------

    @property
    def dims(self) -> tuple[str, ...]:
        """Every distinct dim, lhs first."""
        return tuple(dict.fromkeys([*self.lhs.dim_names, *self.rhs.dim_names]))

    @property
    def out_dims(self) -> tuple[str, ...]:
        """The output's dims: as requested, else lhs's kept dims then rhs's."""
        if self.out is not None:
            return self.out.dim_names
        # with no output given, a shared dim is contracted (einsum's implicit mode)
        shared = set(self.lhs.dim_names) & set(self.rhs.dim_names)
        keep = [d for d in self.lhs.dim_names if d not in shared]
        keep += [d for d in self.rhs.dim_names if d not in shared]
        return tuple(keep)

    @property
    def contracting(self) -> tuple[str, ...]:
        """Dims in both operands and not in the output: summed over."""
        out = set(self.out_dims)
        rhs = set(self.rhs.dim_names)
        return tuple(d for d in self.lhs.dim_names if d in rhs and d not in out)

    @property
    def batch(self) -> tuple[str, ...]:
        """Dims in both operands and in the output."""
        out = set(self.out_dims)
        rhs = set(self.rhs.dim_names)
        return tuple(d for d in self.lhs.dim_names if d in rhs and d in out)

    @property
    def summed(self) -> tuple[str, ...]:
        """Dims in one operand only and not in the output (reduced inside that operand)."""
        out = set(self.out_dims)
        lhs, rhs = set(self.lhs.dim_names), set(self.rhs.dim_names)
        return tuple(d for d in self.dims if d not in out and (d in lhs) != (d in rhs))

    @property
    def shares_no_dim(self) -> bool:
        """Whether the operands have no dim in common: an outer product, which contracts nothing between them.

        Examples:
            >>> Matmul(Array.parse("A[I, J]"), Array.parse("B[K, L]")).shares_no_dim
            True
        """
        return not set(self.lhs.dim_names) & set(self.rhs.dim_names)

    @property
    def reduced(self) -> tuple[str, ...]:
        """Every dim the product sums over: contracting and summed dims."""
        return tuple(d for d in self.dims if d not in set(self.out_dims))

    @property
    def out_name(self) -> str:
        """The result's name: as requested, else ``Out`` (never ``C``, which is the chip's FLOP/s in every
        formula beside it), or ``Res`` if an operand is called ``Out``."""
        if self.out is not None:
            return self.out.name
        return "Res" if "Out" in (self.lhs.name, self.rhs.name) else "Out"

    @property
    def product(self) -> Matmul:
        """The product that is left once every operand has summed its own summed dims (see :func:`local_sums`):
        ``self`` when there are none.

        Examples:
            >>> str(matmul("A[I, J_X, L_Y] · B[J_X, K] -> C[I, K]").product)
            'A[I, J_X]{U_Y} · B[J_X, K] -> C[I, K]'
        """
        if not self.summed:
            return self
        left, right = local_sums(self)
        lhs = left.output if left is not None else self.lhs
        rhs = right.output if right is not None else self.rhs
        return Matmul(lhs, rhs, self.out)

    def with_out(self, out: Array | None) -> Matmul:
        """The same product with another requested output."""
        return Matmul(self.lhs, self.rhs, out, outer=self.outer)

    # -- the chapter's cases ---------------------------------------------------------------

    def classify(self) -> Classification:
        """Case 1-4 of the chapter, with a one-sentence reason in its terms.

        Examples:
            >>> print(matmul("A[I_X, J] · B[J, K_X]").classify())  # doctest: +NORMALIZE_WHITESPACE
            Case 4: mesh axis X shards I of A and K of B, both kept in the output, so a device
            would hold only a diagonal block of Out; AllGather one operand over X first.
        """
        lname = self.lhs.name or _message("word.left_operand")
        rname = self.rhs.name or _message("word.right_operand")
        out = self.out_name
        notes: list[Message] = []
        conflicts: list[tuple[str, str, str]] = []
        for ldim in self.lhs.dims:
            if ldim.name in self.reduced:
                continue
            for a in ldim.axes:
                rname_dim = self.rhs.sharded_dim(a)
                if rname_dim is not None and rname_dim != ldim.name and rname_dim not in self.reduced:
                    conflicts.append((a, ldim.name, rname_dim))
        contracting = self.contracting
        lsh = {d: self.lhs.dim(d).axes for d in contracting}
        rsh = {d: self.rhs.dim(d).axes for d in contracting}
        sharded = [d for d in contracting if lsh[d] or rsh[d]]
        for name in self.summed:
            holder = self.lhs if name in self.lhs.dim_names else self.rhs
            if holder.dim(name).axes:
                notes.append(
                    _message(
                        "note.summed",
                        dim=name,
                        holder=holder.name or _message("word.one_operand"),
                        axes=format_axes(holder.dim(name).axes),
                    )
                )
        if conflicts:
            a, first, second = conflicts[0]
            if sharded:
                notes.append(_message("note.contracting_sharded", dims=", ".join(sharded)))
            reason = _message("case.4", axis=a, first=first, lhs=lname, second=second, rhs=rname, out=out)
            return Classification.of(4, reason, notes)
        if not sharded:
            if not contracting:
                return Classification.of(1, _message("case.1.none"), notes)
            return Classification.of(1, _message("case.1", names=tuple(contracting)), notes)
        if all(lsh[d] == rsh[d] for d in contracting):
            axes = format_axes([a for d in sharded for a in lsh[d]])
            reason = _message("case.3", dims=tuple(sharded), axes=axes, out=out, out_dims=", ".join(self.out_dims))
            return Classification.of(3, reason, notes)
        one_sided = [d for d in sharded if not lsh[d] or not rsh[d]]
        if len(one_sided) == len(sharded) and (all(not rsh[d] for d in sharded) or all(not lsh[d] for d in sharded)):
            lhs_owns = all(not rsh[d] for d in sharded)
            owner, other = (lname, rname) if lhs_owns else (rname, lname)
            owner_arr, other_arr = (self.lhs, self.rhs) if lhs_owns else (self.rhs, self.lhs)
            axis_list = [a for d in sharded for a in owner_arr.dim(d).axes]
            axes = format_axes(axis_list)
            busy = [a for a in axis_list if other_arr.sharded_dim(a) or a in other_arr.unreduced]
            if busy:
                alternative = _message(
                    "case.2.busy",
                    other=other,
                    axis=busy[0],
                    dim=other_arr.sharded_dim(busy[0]) or _message("word.it"),
                )
            else:
                alternative = _message("case.2.slice", other=other)
            reason = _message(
                "case.2.one_sided", owner=owner, dims=tuple(sharded), axes=axes, other=other, alternative=alternative
            )
            return Classification.of(2, reason, notes)
        mismatch = [d for d in sharded if lsh[d] != rsh[d]]
        d = mismatch[0]
        nothing = _message("word.nothing")
        reason = _message(
            "case.2.mismatch",
            dim=d,
            lhs_axes=format_axes(lsh[d]) or nothing,
            lhs=lname,
            rhs_axes=format_axes(rsh[d]) or nothing,
            rhs=rname,
        )
        return Classification.of(2, reason, notes)

    # -- printing ------------------------------------------------------------------------

    def __str__(self) -> str:
        tail = f" -> {self.out}" if self.out is not None else ""
        return f"{self.lhs} · {self.rhs}{tail}"

    def __repr__(self) -> str:
        return f"matmul({str(self)!r}, outer=True)" if self.outer else f"matmul({str(self)!r})"

    def unicode(self) -> str:
        """``A[I, J_X] · B[J_X, K] → C[I, K]``."""
        return str(self).replace(" -> ", " → ")

    def latex(self) -> str:
        """``\\mathbf{A}[...] \\cdot \\mathbf{B}[...] \\rightarrow \\mathbf{C}[...]``."""
        tail = rf" \rightarrow {self.out.latex()}" if self.out is not None else ""
        return rf"{self.lhs.latex()} \cdot {self.rhs.latex()}{tail}"

    def _repr_latex_(self) -> str:
        return "$" + self.latex() + "$"


def local_product(lhs: Array, rhs: Array, out_dims: Sequence[str], name: str = "Out") -> Array:
    """What each device computes from its own blocks: the book's ``lhs ·_LOCAL rhs``.

    A dim in both operands must be split the same way in both; the axes that split
    a summed-over dim make the result unreduced; an operand's own unreduced axes
    carry through (a product is linear in each operand) provided the other operand
    does not use them.

    Raises:
        PlanError: the blocks do not line up, or an axis would be used twice.
    """
    rhs_axes = {d.name: d.axes for d in rhs.dims}
    for d in lhs.dims:
        if d.name in rhs_axes and rhs_axes[d.name] != d.axes:
            raise PlanError(
                say(
                    "the local blocks of {product} do not line up: {dim} is split along {lhs_axes} in {lhs} "
                    "but along {rhs_axes} in {rhs}",
                    product=f"{lhs} · {rhs}",
                    dim=d.name,
                    lhs_axes=format_axes(d.axes) or say("nothing"),
                    lhs=_label(lhs, say("the left operand")),
                    rhs_axes=format_axes(rhs_axes[d.name]) or say("nothing"),
                    rhs=_label(rhs, say("the right operand")),
                ),
                hint=say("gather or slice one operand so both split the dim the same way"),
            )
    if lhs.unreduced or rhs.unreduced:
        _check_partial_sums(lhs, rhs)
    by_name: dict[str, Dim] = {}
    for dim_ in itertools.chain(lhs.dims, rhs.dims):
        by_name.setdefault(dim_.name, dim_)
    for n in out_dims:
        if n not in by_name:
            raise PlanError(
                say("output dim {dim} appears in neither {lhs} nor {rhs}", dim=n, lhs=str(lhs), rhs=str(rhs)),
                hint=say("check the output's dims"),
            )
    unreduced = set(lhs.unreduced) | set(rhs.unreduced)
    for n, dim_ in by_name.items():
        if n not in out_dims:
            unreduced.update(dim_.axes)
    try:
        return Array(name, tuple(by_name[n] for n in out_dims), frozenset(unreduced))
    except SymshardError:
        where = f"{lhs} · {rhs}"
        used: dict[str, str] = {}
        for n in out_dims:
            for a in by_name[n].axes:
                if a in used:
                    raise PlanError(
                        say(
                            "{product} is Case 4: mesh axis {axis} shards both {first} and {second} of the result",
                            product=where,
                            axis=a,
                            first=used[a],
                            second=n,
                        ),
                        hint=say("AllGather one operand over {axis} first", axis=a),
                    ) from None
                used[a] = n
        raise


def _check_partial_sums(lhs: Array, rhs: Array) -> None:
    for u in lhs.unreduced:
        if u in rhs.unreduced or rhs.sharded_dim(u):
            raise _unreduced_clash(lhs, rhs, u, left_holds=True)
    for u in rhs.unreduced:
        if lhs.sharded_dim(u):
            raise _unreduced_clash(lhs, rhs, u, left_holds=False)


def _unreduced_clash(lhs: Array, rhs: Array, axis: str, *, left_holds: bool) -> PlanError:
    """One operand is unreduced over ``axis``, which the other also uses."""
    left, right = _label(lhs, say("the left operand")), _label(rhs, say("the right operand"))
    return PlanError(
        say(
            "{product}: {operand} is unreduced over {axis}, which {other} also uses",
            product=f"{lhs} · {rhs}",
            operand=left if left_holds else right,
            axis=axis,
            other=right if left_holds else left,
        ),
        hint=say("AllReduce_{axis} (or ReduceScatter) one operand first", axis=axis),
    )


@dataclass(frozen=True, slots=True)
class LocalMatmul:
    """One step of a plan: every device multiplies its blocks, ``A[I, J_X] · B[J_X, K] -> C[I, K]{U_X}``."""

    lhs: Array
    rhs: Array
    output: Array

    kind = "matmul"

    def __str__(self) -> str:
        return f"{self.lhs} · {self.rhs} -> {self.output}"

    def unicode(self) -> str:
        return f"{self.lhs} · {self.rhs} → {self.output}"

    def latex(self) -> str:
        return rf"{self.lhs.latex()} \cdot_{{\text{{LOCAL}}}} {self.rhs.latex()} \rightarrow {self.output.latex()}"


def _renamed(array: Array, names: dict[str, str]) -> Array:
    """``array`` with some dims renamed (each keeps its sharding)."""
    return Array(array.name, tuple(Dim(names.get(d.name, d.name), d.axes) for d in array.dims), array.unreduced)


def intended(mm: Matmul) -> Matmul | None:
    """The product an outer product was most likely meant to be, or None when no guess fits.

    Operands that share no dim are almost always a typo for a dim they should share: with an output
    given, the dims each operand drops (``J`` of ``A[I, J]``, ``K`` of ``B[K, L]`` in ``-> C[I, L]``)
    are the same dims under two names, so the right operand takes the left one's names (``B[J, L]``),
    else the left the right one's; with no output, the right operand's first dim is the left one's
    last, as in every 2-D matmul. A guess is kept only if it is a valid product that contracts a dim.

    Examples:
        >>> str(intended(matmul("A[I, J] · B[K, L] -> C[I, L]", outer=True)))
        'A[I, J] · B[J, L] -> C[I, L]'
        >>> str(intended(matmul("A[I, J_X] · B[K_X, L]", outer=True)))
        'A[I, J_X] · B[J_X, L]'
    """
    kept = set(mm.out_dims)
    lhs_dropped = [d for d in mm.lhs.dim_names if d not in kept]
    rhs_dropped = [d for d in mm.rhs.dim_names if d not in kept]
    guesses: list[tuple[Array, Array]] = []
    if lhs_dropped and len(lhs_dropped) == len(rhs_dropped):
        guesses.append((mm.lhs, _renamed(mm.rhs, dict(zip(rhs_dropped, lhs_dropped, strict=True)))))
        guesses.append((_renamed(mm.lhs, dict(zip(lhs_dropped, rhs_dropped, strict=True))), mm.rhs))
    if mm.out is None and len(mm.lhs.dims) > 1 and len(mm.rhs.dims) > 1:
        guesses.append((mm.lhs, _renamed(mm.rhs, {mm.rhs.dim_names[0]: mm.lhs.dim_names[-1]})))
    for lhs, rhs in guesses:
        try:
            guess = Matmul(lhs, rhs, mm.out)
        except SymshardError:
            continue
        if guess.contracting:
            return guess
    return None


def _refuse_outer(mm: Matmul, text: str | None) -> None:
    """Refuse a product whose operands share no dim, unless ``outer=True`` said it is meant."""
    if mm.outer or not mm.shares_no_dim:
        return
    guess = intended(mm)
    if guess is None:
        hint = say("if the outer product is meant, say so: outer=True (--outer on the command line)")
    else:
        changed = guess.rhs if guess.rhs != mm.rhs else guess.lhs
        hint = say(
            "did you mean {guess}? (if the outer product is meant, say so: outer=True, or --outer on the command line)",
            guess=str(changed),
        )
    raise PlanError(
        say(
            "the operands of '{text}' share no dim, so nothing is contracted between them: an outer product",
            text=text or str(mm),
        ),
        hint=hint,
    )


@dataclass(frozen=True, slots=True)
class LocalSum:
    """One step of a plan: every device sums its block of one operand over the dims only that operand has
    and the product drops, before the product, as XLA does (``jnp.einsum`` sums them out first):
    ``Sum_L(A[I, J_X, L_Y]) -> A[I, J_X]{U_Y}``. The axes that split a summed dim leave partial sums.

    Examples:
        >>> s = LocalSum(Array.parse("A[I, J_X, L_Y]"), ("L",))
        >>> str(s), s.label
        ('Sum_L(A[I, J_X, L_Y]) -> A[I, J_X]{U_Y}', 'Sum_L')
    """

    operand: Array
    dims: tuple[str, ...]
    output: Array = field(init=False, compare=False, repr=False)

    kind = "sum"

    def __post_init__(self) -> None:
        gone = set(self.dims)
        unreduced = set(self.operand.unreduced)
        for d in self.operand.dims:
            if d.name in gone:
                unreduced.update(d.axes)
        kept = tuple(d for d in self.operand.dims if d.name not in gone)
        object.__setattr__(self, "output", Array(self.operand.name, kept, frozenset(unreduced)))

    @property
    def label(self) -> str:
        """``Sum_L``, ``Sum_{L,M}``: the step's name in a strategy's."""
        return "Sum_" + (self.dims[0] if len(self.dims) == 1 else "{" + ",".join(self.dims) + "}")

    def __str__(self) -> str:
        return f"{self.label}({self.operand}) -> {self.output}"

    def unicode(self) -> str:
        return f"{self.label}({self.operand}) → {self.output}"

    def latex(self) -> str:
        return rf"\text{{Sum}}_{{{','.join(self.dims)}}}({self.operand.latex()}) \rightarrow {self.output.latex()}"


def local_sums(mm: Matmul) -> tuple[LocalSum | None, LocalSum | None]:
    """For each operand of ``mm``, the :class:`LocalSum` of its summed dims (None where it has none).

    Examples:
        >>> [str(s) for s in local_sums(matmul("A[I, J, L_X] · B[J, K] -> C[I, K]"))]
        ['Sum_L(A[I, J, L_X]) -> A[I, J]{U_X}', 'None']
    """
    summed = set(mm.summed)
    out: list[LocalSum | None] = []
    for arr in (mm.lhs, mm.rhs):
        dims = tuple(d for d in arr.dim_names if d in summed)
        out.append(LocalSum(arr, dims) if dims else None)
    return out[0], out[1]


@memoized(maxsize=4096)
def matmul(
    lhs: Array | str, rhs: Array | str | None = None, out: Array | str | None = None, *, outer: bool = False
) -> Matmul:
    """Build a :class:`Matmul` from arrays or notation, or from one string ``'A · B -> C'``.

    Operands that share no dim (``A[I, J] · B[K, L]``) make an outer product, which is almost always a
    typo for a dim they should share: it is refused, with a guess at what was meant, unless ``outer``
    says it is meant.

    Raises:
        NotationError: text that does not parse.
        PlanError: dims that do not fit together (an output dim from nowhere, a
            contracted dim named under the product sign that is not contracted, a
            ``·_LOCAL`` result that is not the local product), or operands that share no
            dim without ``outer=True``.

    Examples:
        >>> matmul("A[I, J] · B[K, L] -> C[I, L]")
        Traceback (most recent call last):
          ...
        symshard.errors.PlanError: the operands of 'A[I, J] · B[K, L] -> C[I, L]' share no dim, ...
        >>> matmul("A[I] · B[K] -> C[I, K]", outer=True)
        matmul('A[I] · B[K] -> C[I, K]', outer=True)
    """
    mm = _build(lhs, rhs, out)
    if outer:
        mm = Matmul(mm.lhs, mm.rhs, mm.out, text=mm.text, outer=True)
    _refuse_outer(mm, mm.text or None)
    return mm


def _build(lhs: Array | str, rhs: Array | str | None, out: Array | str | None) -> Matmul:
    if rhs is None:
        if not isinstance(lhs, str):
            raise PlanError(say("matmul() needs two operands, or one string 'A[...] · B[...] -> C[...]'"))
        syntax = parse_matmul_syntax(lhs)
        mm = Matmul(syntax.lhs, syntax.rhs, syntax.out, text=lhs)
        if syntax.contracting is not None and set(syntax.contracting) != set(mm.contracting):
            raise PlanError(
                say(
                    "'{text}' names {named} under the product sign, but the contracted dims are {contracted}",
                    text=lhs,
                    named=Names(syntax.contracting),
                    contracted=Names(mm.contracting) if mm.contracting else say("none"),
                ),
                text=lhs,
                span=syntax.op_span,
                hint=say("a dim is contracted when both operands have it and the output does not"),
            )
        if syntax.local:
            local = local_product(mm.lhs, mm.rhs, mm.out_dims, mm.out_name)
            if syntax.out is not None and syntax.out != local:
                raise PlanError(
                    say(
                        "the local product in '{text}' is {local}, not {stated}",
                        text=lhs,
                        local=str(local),
                        stated=str(syntax.out),
                    ),
                    text=lhs,
                    span=syntax.out_span,
                    hint=say("write {example}", example=f"-> {local}"),
                )
            mm = Matmul(mm.lhs, mm.rhs, local, text=lhs)
        return mm
    lhs_a = parse_array(lhs) if isinstance(lhs, str) else lhs
    rhs_a = parse_array(rhs) if isinstance(rhs, str) else rhs
    out_a = parse_array(out) if isinstance(out, str) else out
    return Matmul(lhs_a, rhs_a, out_a)

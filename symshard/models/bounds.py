"""The roofline's value and its algebra: what a compute-bound condition is, and ``T_comms ≤ T_math`` solved.

:mod:`symshard.models.parallelism` derives each scheme's condition from its layer program; this
module holds what the derivations share and what they return: the schemes' names (:data:`SCHEMES`,
with those costed through a GPU network and the pipelined ones), how the collectives of a pass
combine (:data:`OVERLAPS`), the :class:`Roofline` value, and the closed-form solving of
``comm ≤ math`` for one size (:func:`solve_at_most`, :func:`all_at_most`, :func:`balance`), which
the serving (:mod:`.inference`) and transfer (:mod:`.transfers`) bounds use too. It solves without
``sympy.solve``, whose root simplification imports a SymPy module that parses text, which a problem
family's worker refuses. It sits in the models layer on :mod:`.schemes` and :mod:`.networked`;
every module that derives or judges a roofline imports it.

Examples:
    >>> B, C, W = sympy.symbols("B C W", positive=True)
    >>> all_at_most([(2 / W, 2 * B / C)], B).text()
    'B ≥ C/W'
    >>> scheme_key("zero3"), overlap_key("serial")
    ('fsdp', 'none')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from ..algebra.conditions import Case, Condition
from ..algebra.mathtext import as_expr
from ..algebra.solving import solve_less
from ..errors import PlanError
from ..machines.chips import Hardware
from ..messages import say
from .networked import LevelShare, Network
from .schemes import B_CHIP

__all__ = [
    "NETWORKED",
    "OVERLAPS",
    "PIPELINED",
    "SCHEMES",
    "Roofline",
    "all_at_most",
    "balance",
    "fabric_of",
    "overlap_key",
    "scheme_key",
    "solve_at_most",
    "tidy_bound",
]

SCHEMES = ("dp", "fsdp", "tp", "fsdp+tp", "pods", "pipeline", "pipeline+dp", "pipeline+fsdp", "expert")
"""The schemes :func:`~symshard.models.parallelism.roofline` knows."""

NETWORKED = ("dp", "fsdp", "tp", "fsdp+tp", "pipeline+dp", "pipeline+fsdp")
"""The schemes whose collectives a GPU's roofline costs through the network's levels."""

PIPELINED = ("pipeline+dp", "pipeline+fsdp")
"""The schemes that combine pipeline stages with data parallelism or FSDP
(:func:`~symshard.models.parallelism.rooflines` gives them when the stages are known)."""

OVERLAPS: dict[str, str] = {
    "axes": say("collectives over different mesh axes overlap (the larger counts); on one axis they add up"),
    "none": say("every collective of a pass adds up, one after another"),
}
"""How the collectives of one pass combine, by name."""

_ALIASES = {"data": "dp", "zero3": "fsdp", "zero-3": "fsdp", "tensor": "tp", "mixed": "fsdp+tp", "fsdpxtp": "fsdp+tp",
            "fsdp×tp": "fsdp+tp", "dcn": "pods", "pod": "pods", "pp": "pipeline", "ep": "expert", "moe": "expert",
            "pp+dp": "pipeline+dp", "dp+pp": "pipeline+dp", "dp+pipeline": "pipeline+dp", "pipeline+data": "pipeline+dp",
            "pp+fsdp": "pipeline+fsdp", "fsdp+pp": "pipeline+fsdp", "fsdp+pipeline": "pipeline+fsdp",
            "pipeline+zero3": "pipeline+fsdp"}  # fmt: skip


def scheme_key(name: str) -> str:
    """The key of :data:`SCHEMES` that ``name`` means (``zero3`` is ``fsdp``, ``pp+dp`` is ``pipeline+dp``).

    Raises:
        PlanError: a name that is no scheme.
    """
    key = str(name).strip().lower().replace(" ", "").replace("_", "+")
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        raise PlanError(
            say("unknown parallelism scheme '{name}'", name=name),
            hint=say("use one of {options}", options=", ".join(SCHEMES)),
        )
    return key


def overlap_key(name: str) -> str:
    """The key of :data:`OVERLAPS` that ``name`` means (``serial`` is ``none``).

    Raises:
        PlanError: an unknown overlap convention.
    """
    key = {"serial": "none"}.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in OVERLAPS:
        raise PlanError(say("unknown overlap convention '{name}'", name=name), hint=say("use axes or none (serial)"))
    return key


def fabric_of(hw: Hardware | None) -> str:
    """The fabric a scheme's collectives use on ``hw``: ``ici`` on a TPU (or with no chip), ``nvlink`` on a GPU."""
    if hw is None or hw.ici_link_bandwidth is not None:
        return "ici"
    return "nvlink"


@dataclass(frozen=True)
class Roofline:
    """When one scheme is compute-bound, for a whole model: per layer, as the chapter reasons.

    Attributes:
        scheme: a key of :data:`SCHEMES`.
        symbol: what the condition is solved for (``B_chip``, ``|Y|``, ``B_pod``, ``N_stages``, ``F``).
        math_time: ``T_math`` of the binding pass of one layer.
        comm_time: ``T_comms`` of that pass (at the best split for FSDP × TP; through the network's
            levels when :attr:`network` is set).
        condition: compute-bound iff this holds (the symbolic form, on one network).
        convention: how the collectives combine (:data:`OVERLAPS`) or the formula's assumption.
        source: what it is derived from.
        hardware: the chip for :attr:`numeric` (None: symbolic only).
        values: the numbers substituted on that chip (constants, spreads, the model's sizes).
        notes: caveats.
        optimum: FSDP × TP's best ``|X|`` (``|Y| = N/|X|``); None for the other schemes.
        chips: the chips of the slice, when given.
        network: the scheme's collectives costed through the chip's network levels (GPUs, with ``chips``
            or ``mesh``); None when the formula's one network is used.
        network_condition: :attr:`condition` with each collective's ``W_collective`` in place of ``W``.
        dtype: the arrays' dtype.
    """

    scheme: str
    symbol: sympy.Symbol
    math_time: sympy.Expr
    comm_time: sympy.Expr
    condition: Condition
    convention: str
    source: str
    hardware: Hardware | None = None
    values: Mapping[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    optimum: sympy.Expr | None = None
    chips: sympy.Expr | None = None
    network: Network | None = None
    network_condition: Condition | None = None
    dtype: str = "bf16"

    @property
    def numeric(self) -> Condition | None:
        """The condition with the chip's constants (and the model's sizes) substituted; through the
        network's levels when they were costed."""
        if self.hardware is None and not self.values:
            return None
        cond = self.network_condition if self.network_condition is not None else self.condition
        return cond.subs(dict(self.values), self.symbol)

    @property
    def binding(self) -> LevelShare | None:
        """The network level that binds (None when the network was not costed)."""
        crossing = None if self.network is None else self.network.binding
        return None if crossing is None else crossing.binding

    @property
    def inside_one_domain(self) -> bool | None:
        """On a GPU: whether the bound holds only inside one NVLink domain (True without a chip count,
        the formula's ``W_nvlink``), or the collectives were costed across the network (False when they
        leave a domain). None off a GPU."""
        if self.hardware is None or fabric_of(self.hardware) != "nvlink" or self.scheme not in NETWORKED:
            return None
        if self.network is None:
            return True
        return self.network.inside_one_domain

    @property
    def global_batch(self) -> sympy.Expr | None:
        """For a bound on ``B_chip`` with the chips known: the least tokens per step, the bound times
        the chips (None otherwise)."""
        numeric = self.numeric
        if self.symbol != B_CHIP or numeric is None or self.chips is None or not as_expr(self.chips).is_number:
            return None
        if self.inside_one_domain and self.network is None:  # a GPU bound that holds inside one node only
            return None
        for case in numeric.cases:
            for r in case.relations:
                if isinstance(r, (sympy.GreaterThan, sympy.StrictGreaterThan)) and r.lhs == B_CHIP:
                    bound = as_expr(r.rhs)
                    return bound * self.chips if bound.is_number else None
        return None

    def holds(self, values: Mapping[sympy.Symbol, object]) -> bool | None:
        """Whether the scheme is compute-bound at a point (None if undecided)."""
        cond = self.network_condition if self.network_condition is not None else self.condition
        return cond.holds({**self.values, **values})

    def text(self) -> str:
        return self.condition.text()

    def latex(self) -> str:
        return self.condition.latex()

    def _repr_latex_(self) -> str:
        return "$" + self.latex() + "$"

    def __repr__(self) -> str:
        from ..shown import summary

        numeric = self.numeric
        return summary("Roofline", self.scheme, {"condition": self.condition.formula()},
                       {"numeric": None if numeric is None else numeric.formula()},
                       hardware=self.hardware and self.hardware.name, chips=self.chips)  # fmt: skip

    def __str__(self) -> str:
        from ..shown import report

        return report(self)


def solve_at_most(lhs: sympy.Expr, rhs: sympy.Expr, x: sympy.Symbol) -> list[list[sympy.Basic]]:
    """``lhs ≤ rhs`` for positive sides, solved for ``x`` (square roots squared away first): a union of
    cases, each a list of relations with ``x`` on the left (see :func:`symshard.algebra.solving.solve_less`).

    Examples:
        >>> B, C, W = sympy.symbols("B C W", positive=True)
        >>> solve_at_most(2 / W, 2 * B / C, B)
        [[B >= C/W]]
    """
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    (a, p), (b, q) = (sympy.expand(e).as_coeff_exponent(x) for e in (lhs, rhs))
    if x not in a.free_symbols | b.free_symbols and p != q and a.is_positive and b.is_positive:
        # two powers of x (the usual case): they cross once, where balance() puts it
        point = tidy_bound(balance(lhs, rhs, x))
        return [[sympy.Ge(x, point) if q > p else sympy.Le(x, point)]]
    out = []
    for case in solve_less(lhs, rhs, x, strict=False):
        oriented = []
        for r in case:
            if isinstance(r, sympy.core.relational.Relational) and r.rhs == x and x not in r.lhs.free_symbols:
                r = r.reversed
            oriented.append(r)
        out.append(oriented)
    return out


def tidy_bound(expr: sympy.Expr) -> sympy.Expr:
    """A bound as the chapter prints it: ``C**2/(F*M_X*M_Y*W_ici**2)``, not a square root of a square."""
    return sympy.factor_terms(sympy.powsimp(sympy.expand_power_base(expr, force=True), force=True))


def all_at_most(parts: list[tuple[sympy.Expr, sympy.Expr]], x: sympy.Symbol, extra: tuple = ()) -> Condition:
    """The condition that every ``comm ≤ math`` of ``parts`` holds at once, solved for ``x``; a part
    whose ``comm`` is 0 always holds. ``extra`` relations join every case."""
    import itertools

    solved = [solve_at_most(c, m, x) for c, m in parts if as_expr(c) != 0]
    cases = []
    for combo in itertools.product(*solved):
        rels = tuple(dict.fromkeys([*extra, *[r for case in combo for r in case]]))
        cases.append(Case("compute-bound", rels))
    return Condition(tuple(cases))


def balance(first: sympy.Expr, second: sympy.Expr, t: sympy.Symbol) -> sympy.Expr:
    """Where two monomials in ``t``, ``a·t^p`` and ``b·t^q`` (``p ≠ q``), are equal: ``(b/a)^(1/(p − q))``.

    For ``a·t + b/t`` this is also the minimum of the sum, and for ``max(a·t, b/t)`` the minimum of
    the larger. Solved in closed form rather than with ``sympy.solve``, which simplifies its roots
    with machinery that parses text (refused while a problem family runs).

    Raises:
        PlanError: either side is not a monomial in ``t``, or both have the same power.

    Examples:
        >>> a, b, t = sympy.symbols("a b t", positive=True)
        >>> balance(a * t, b / t, t)
        sqrt(b)/sqrt(a)
    """
    (a, p), (b, q) = (sympy.expand(e).as_coeff_exponent(t) for e in (first, second))
    if t in a.free_symbols or t in b.free_symbols or p == q:
        raise PlanError(
            say("cannot balance two terms that are not powers of one size"), hint=say("this is a bug in symshard")
        )
    return sympy.powsimp((b / a) ** (1 / (p - q)), force=True)

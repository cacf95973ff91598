"""The sandbox families run in: a Jinja ``SandboxedEnvironment`` whose globals are the algebra.

Problem families are written by strangers and rendered on students' machines, so
nothing a family writes may reach Python. Templates and ``family.toml``
expressions see the public algebra (``parse``, ``mesh``, ``hardware``, ``place``,
``matmul``, ``plan``, ``compare``, ``best_sharding``, ``kernel_time``, the collectives
and the symbols) and formatting filters (``seconds``, ``bytes``, ``flops``, ``num``,
``tex``, ``text``), and nothing else. The rules, each enforced here:

* **No evaluation of text.** Text that stands for a number or a formula (in
  ``margin``, ``simplify``, ``factor``, ``Rational``, ``math`` and the ``tex``
  and ``text`` filters) is read by :mod:`symshard.algebra.mathtext`'s grammar. A SymPy
  function or method handed text is refused, since SymPy would ``eval`` it.
* **Only symshard's values are open.** Attributes may be read on symshard's and
  SymPy's objects, numbers, text, containers and Jinja's loop helpers; never on
  anything else (a path, a module, a function), and never a name starting with
  ``_``. Methods that write files are closed.
* **Nothing a template reaches can change.** A template reads values; it calls a method
  only when the method cannot change its value (any method of a number, text, tuple, SymPy
  expression or frozen symshard value; the reading methods of lists, dicts, sets and of the
  few symshard objects that are built step by step). The algebra caches its results and
  every later problem, of every family, shares them: a template that could ``.append`` to a
  cached list or add a step to a cached program would change other families' answers.
  Imported template modules are made afresh for each render for the same reason.
* **Files stay in the family's folder.** Templates load only regular files of the
  family's own folder: no absolute paths, no ``..``, no symbolic links. Hardware files
  named in a family (``hardware("my-chip.toml")``) follow the same rules (the engine
  reads them through :func:`family_file`).
* **Bounded work.** Ranges, string and list repetition, integer powers, string
  formatting and the filters that pad text are checked before they run; ``lipsum``
  and the ``random`` filter (not reproducible) are gone. Everything else is bounded
  by the time and memory budget a variant runs under (:mod:`symshard.problems.budget`).

``StrictUndefined`` turns every misspelt name into an error instead of an empty
string; a refusal is a :class:`~symshard.errors.TemplateError` naming the family and
line. Templates (not ``family.toml``) also see ``figure(kind, ...)``, which the engine
adds for the problem being rendered (see :mod:`symshard.problems.figures`).

Examples:
    >>> env = environment(None)
    >>> env.from_string("{{ parse('AllGather_X(A[I_X])').output }}").render()
    'A[I]'
    >>> env.from_string("{{ margin('2*E', 'E') }}").render()  # text is a formula, read by the grammar
    Traceback (most recent call last):
    ...
    jinja2.exceptions.SecurityError: margin() needs numbers, but 2*E has free symbols
"""

from __future__ import annotations

import collections
import enum
import inspect
import operator
import os
import re
import stat
import types
from collections import abc
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.filters
import jinja2.runtime
import jinja2.sandbox
import sympy
from jinja2.exceptions import SecurityError

from ..algebra import symbols
from ..algebra.dtypes import dtype_bytes
from ..algebra.mathtext import MAX_DIGITS, as_expr, parse_math
from ..algebra.units import format_bytes, format_flops, format_number, format_seconds, pretty, sig
from ..costs.collectives import AllGather, AllReduce, AllToAll, CollectivePermute, DynamicSlice, ReduceScatter
from ..costs.kernels import critical_intensity, kernel_time
from ..costs.placement import place
from ..errors import SymshardError
from ..machines.mesh import Mesh
from ..machines.presets import hardware
from ..messages import say
from ..models import inference, parallelism, training, transformer, verdicts
from ..models.schemes import fsdp_tp_split, largest_tp
from ..models.schemes import layer as mlp_layer
from ..notation.arrays import Array
from ..notation.einsums import local_product, matmul
from ..notation.parser import parse_array
from ..planning.crossovers import compare
from ..planning.listing import StrategyList
from ..planning.planner import plan
from ..planning.program import Program
from ..planning.search import best_sharding
from ..read import parse

__all__ = [
    "MAX_TEMPLATE_BYTES",
    "MAX_TEXT",
    "FamilyLoader",
    "FamilySandbox",
    "environment",
    "family_file",
    "margin",
    "safe_path",
]


MAX_TEXT = 1_000_000
"""The longest string or list a template may build by repetition, padding or formatting."""

MAX_TEMPLATE_BYTES = 1_000_000
"""The largest template file a family may have."""

_MAX_WIDTH = 10_000
"""The widest field a format or a padding filter may ask for."""


def _number(value: object, who: str) -> sympy.Basic:
    """``value`` as a SymPy number, text read by the grammar; refused if it keeps symbols."""
    try:
        v = as_expr(value)
    except (TypeError, ValueError) as err:
        raise SecurityError(
            say("{who}() cannot read {value}: {why}", who=who, value=f"{value!r:.80}", why=_reason(err))
        ) from None
    if not v.is_number:
        raise SecurityError(say("{who}() needs numbers, but {value} has free symbols", who=who, value=str(v)))
    return v


def margin(a: object, b: object) -> float:
    """How far apart two positive quantities are, relative to the larger: 0 for a tie, near 1 for far apart."""
    x, y = abs(float(_number(a, "margin"))), abs(float(_number(b, "margin")))
    top = max(x, y)
    return 0.0 if top == 0 else abs(x - y) / top


def _simplify(value: object) -> sympy.Basic:
    """``sympy.simplify`` of a value or of a formula written as text (read by the grammar)."""
    return sympy.simplify(_formula(value, "simplify"))


def _factor(value: object) -> sympy.Basic:
    """``sympy.factor`` of a value or of a formula written as text (read by the grammar)."""
    return sympy.factor(_formula(value, "factor"))


def _formula(value: object, who: str) -> sympy.Basic:
    try:
        return as_expr(value)
    except (TypeError, ValueError) as err:
        raise SecurityError(
            say("{who}() cannot read {value}: {why}", who=who, value=f"{value!r:.80}", why=_reason(err))
        ) from None


def _reason(err: Exception) -> str:
    return err.message if isinstance(err, SymshardError) else str(err)


def _rational(p: object, q: object = 1) -> sympy.Basic:
    """An exact fraction ``p/q``; text is read by the grammar, never by SymPy's parser."""
    num, den = _formula(p, "Rational"), _formula(q, "Rational")
    if den == 0:
        raise SecurityError(say("Rational() with a zero denominator"))
    return num / den


def _math(text: str) -> sympy.Basic:
    """A formula written as text, with symshard's symbols: ``math('2*B*D/C')``."""
    if not isinstance(text, str):
        raise SecurityError(say("math() reads text, not {type}", type=type(text).__name__))
    return parse_math(text)


def _short_bytes(n: object) -> str:
    """``32 MiB`` rather than ``33,554,432 B (32 MiB)``."""
    full = format_bytes(n)
    return full[full.index("(") + 1 : -1] if "(" in full else full


def _texnum(value: object, digits: int = 3) -> str:
    """A number for LaTeX: ``4.5 \\times 10^{10}``, ``1{,}048{,}576``, ``0.25``."""
    v = as_expr(value)
    if v.is_Integer and abs(v) < 10**7:
        return f"{int(v):,}".replace(",", "{,}")
    text = sig(float(v), digits)
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def _tex_unit(text: str) -> str:
    """``559 µs`` -> ``559\\,\\mu\\text{s}`` (a quantity inside LaTeX math)."""
    number, _, unit = text.partition(" ")
    unit = unit.replace("µ", "\\mu\\text{") + "}" if "µ" in unit else "\\text{" + unit + "}"
    return f"{number}\\,{unit}" if unit else number


def _axes_text(mesh: Mesh) -> str:
    """A mesh for a sentence: ``$X$ (8 chips), $Y$ (4 chips) and $Z$ (2 chips)``."""
    parts = [f"${a.name}$ ({a.size} chip{'s' if a.size != 1 else ''})" for a in mesh.axes]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _book_mesh(mesh: Mesh) -> str:
    """A mesh as the chapter writes it: ``Mesh({'X': 8, 'Y': 2})``."""
    return "Mesh({" + ", ".join(f"'{a.name}': {a.size}" for a in mesh.axes) + "})"


@lru_cache(maxsize=8192)
def _tex_expr(expr: sympy.Basic) -> str:
    return symbols.latex(expr)


def _tex(value: object) -> str:
    if isinstance(value, Mesh):
        return ", ".join(f"|{a.name}| = {a.size}" for a in value.axes)
    if isinstance(value, Array):
        return value.latex()
    latex_method = getattr(value, "latex", None)
    if callable(latex_method) and not isinstance(value, sympy.Basic):
        return str(latex_method())
    return _tex_expr(as_expr(value))


_GLOBALS = {
    # the algebra
    "parse": parse,
    "array": parse_array,
    "mesh": Mesh,
    "hardware": hardware,
    "place": place,
    "matmul": matmul,
    "local_product": local_product,
    "plan": plan,
    "compare": compare,
    "best_sharding": best_sharding,
    "kernel_time": kernel_time,
    "critical_intensity": critical_intensity,
    "mlp_layer": mlp_layer,
    "fsdp_tp_split": fsdp_tp_split,
    "largest_tp": largest_tp,
    "Model": transformer.Model,
    "model": transformer.model,
    "train": training.train,
    "training_memory": training.training_memory,
    "batch_per_chip": training.batch_per_chip,
    "roofline": parallelism.roofline,
    "best_split": verdicts.best_split,
    "serve": inference.serve,
    "kv_cache_bytes": inference.kv_cache_bytes,
    "decode_tp_limit": inference.decode_tp_limit,
    "prefill_tp_limit": inference.prefill_tp_limit,
    "weight_stationary": inference.weight_stationary,
    "AllGather": AllGather,
    "ReduceScatter": ReduceScatter,
    "AllReduce": AllReduce,
    "AllToAll": AllToAll,
    "CollectivePermute": CollectivePermute,
    "DynamicSlice": DynamicSlice,
    "dtype_bytes": dtype_bytes,
    "dim": symbols.dim,
    "axis": symbols.axis,
    "C": symbols.C,
    "W_ici": symbols.W_ici,
    "W_hbm": symbols.W_hbm,
    "W_nvlink": symbols.W_nvlink,
    "W_dcn": symbols.W_dcn,
    "T_hop": symbols.T_hop,
    "simplify": _simplify,
    "factor": _factor,
    "Rational": _rational,
    "math": _math,
    # small pure helpers
    "margin": margin,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    "len": len,
    "sum": sum,
    "sorted": sorted,
    "enumerate": enumerate,
    "zip": zip,
}

_FILTERS = {
    "seconds": format_seconds,
    "bytes": format_bytes,
    "size": _short_bytes,
    "flops": format_flops,
    "num": format_number,
    "sig": sig,
    "tex": _tex,
    "texnum": _texnum,
    "tex_seconds": lambda v: _tex_unit(format_seconds(v)),
    "tex_size": lambda v: _tex_unit(_short_bytes(v)),
    "tex_flops": lambda v: _tex_unit(format_flops(v)),
    "text": pretty,
    "axes": _axes_text,
    "book_mesh": _book_mesh,
}


# -- what templates may touch -------------------------------------------------------------------

_OPEN_TYPES = (str, int, float, bool, complex, list, tuple, dict, set, frozenset, range, type(None), Fraction, Decimal)
_OPEN_MODULES = ("symshard.", "jinja2.")


def _open_to_templates(obj: object) -> bool:
    """Whether templates may read attributes of ``obj``: symshard's and SymPy's values, plain data."""
    if isinstance(obj, (sympy.Basic, *_OPEN_TYPES)):
        return True
    if isinstance(obj, type):
        module = obj.__module__ or ""
        return module.startswith(_OPEN_MODULES) or (module.startswith("sympy.") and issubclass(obj, sympy.Basic))
    if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return False
    return (type(obj).__module__ or "").startswith(_OPEN_MODULES)


def _is_sympy(fn: object) -> bool:
    """Whether ``fn`` is SymPy's: a SymPy function or class, or a method of a SymPy object."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, sympy.Basic) or (isinstance(owner, type) and issubclass(owner, sympy.Basic)):
        return True
    return (getattr(fn, "__module__", None) or "").startswith("sympy")


def _texts(values: Iterable[object], depth: int = 0) -> Iterable[str]:
    """The strings in ``values``, looking inside containers (not too deep)."""
    for v in values:
        if isinstance(v, str):
            yield v
        elif depth < 4 and isinstance(v, (list, tuple, set, frozenset)):
            yield from _texts(v, depth + 1)
        elif depth < 4 and isinstance(v, dict):
            yield from _texts(v.keys(), depth + 1)
            yield from _texts(v.values(), depth + 1)


_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), tuple, frozenset, range, Fraction, Decimal, enum.Enum,
              sympy.Basic)  # fmt: skip
"""Values no method can change."""

_CONTAINER_READS: tuple[tuple[type, frozenset[str]], ...] = (
    (abc.MutableSequence, frozenset({"copy", "count", "index"})),
    (abc.MutableMapping, frozenset({"copy", "get", "items", "keys", "values"})),
    (abc.MutableSet, frozenset({"copy", "difference", "intersection", "isdisjoint", "issubset", "issuperset",
                                "symmetric_difference", "union"})),
    (collections.deque, frozenset({"copy", "count", "index"})),
    (bytearray, frozenset()),
)  # fmt: skip
"""The methods of mutable containers that only read them (a whitelist: a new method is refused)."""

_READ_ONLY_METHODS: dict[type, frozenset[str]] = {
    Program: frozenset({"array", "versions", "bytes", "select", "collectives", "matmuls", "flops", "math_time",
                        "comm_bytes", "comm_time", "depends", "overlaps", "kept", "subs", "describe"}),
    StrategyList: frozenset({"legs", "flops", "index_of", "index", "count"}),
}  # fmt: skip
"""The methods that only read, of symshard's objects that can change (a layer's program is built step by step)."""


def _reads_only(fn: object) -> bool:
    """Whether calling ``fn`` can change nothing a template can reach: a function or a class, or a method
    of a value that cannot change, or a method known to only read a value that can (a cached result is
    shared by every later problem, of every family, that asks the algebra the same question)."""
    owner = getattr(fn, "__self__", None)
    if owner is None or isinstance(owner, (type, types.ModuleType)):
        return True
    if isinstance(owner, _IMMUTABLE):
        return True
    method = getattr(fn, "__name__", "")
    for kind, reads in _CONTAINER_READS:
        if isinstance(owner, kind):
            return method in reads
    params = getattr(type(owner), "__dataclass_params__", None)
    if params is not None and params.frozen:
        return True
    if (type(owner).__module__ or "").startswith("jinja2."):
        return True  # the render's own helpers (loop, cycler, namespace), made afresh for each render
    return method in _READ_ONLY_METHODS.get(type(owner), frozenset())


def _callables(values: Iterable[object], depth: int = 0) -> Iterable[object]:
    """The methods bound to a value among ``values``, looking inside containers (not too deep): what a
    function handed them (``sorted(xs, key=...)``) would call outside the sandbox's view."""
    for v in values:
        if getattr(v, "__self__", None) is not None and callable(v):
            yield v
        elif depth < 4 and isinstance(v, (list, tuple, set, frozenset)):
            yield from _callables(v, depth + 1)
        elif depth < 4 and isinstance(v, dict):
            yield from _callables(v.values(), depth + 1)


def _name_of(fn: object) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


def _size(value: object) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple)) else None


def _integer_digits(value: object) -> float:
    if isinstance(value, bool):
        return 1.0
    if isinstance(value, int):
        return abs(value).bit_length() * 0.30103
    if isinstance(value, sympy.Rational):
        return max(abs(int(value.p)).bit_length(), int(value.q).bit_length()) * 0.30103
    if isinstance(value, float):
        return 1.0
    return 0.0


def _check_power(base: object, exponent: object) -> None:
    if isinstance(exponent, (int, sympy.Integer, sympy.Rational)) and not isinstance(exponent, bool):
        size = abs(float(exponent))
        digits = max(_integer_digits(base), 1.0) * size
        if isinstance(base, (int, sympy.Rational)) and base not in (0, 1, -1) and digits > MAX_DIGITS:
            raise SecurityError(
                say("{base} ** {exponent} would be a number of about {digits} {digits:digit|digits} (the limit is {limit})",
                    base=f"{base!r:.40}", exponent=f"{exponent!r:.40}", digits=f"{digits:.3g}",
                    limit=f"{MAX_DIGITS:,}")
            )  # fmt: skip
        if isinstance(base, sympy.Basic) and not base.is_number and size > MAX_DIGITS:
            raise SecurityError(
                say("the exponent {exponent} is too large (the limit is {limit})",
                    exponent=f"{exponent!r:.40}", limit=f"{MAX_DIGITS:,}")
            )  # fmt: skip


def _check_repeat(left: object, right: object) -> None:
    for seq, times in ((left, right), (right, left)):
        n = _size(seq)
        if n is not None and isinstance(times, int) and not isinstance(times, bool) and n * times > MAX_TEXT:
            size, many, limit = f"{n:,}", f"{times:,}", f"{MAX_TEXT:,}"
            if isinstance(seq, str) and n == 1:
                why = say("repeating text of 1 character {times} {times:time|times} is too much (the limit is {limit})",
                          times=many, limit=limit)  # fmt: skip
            elif isinstance(seq, str):
                why = say("repeating text of {size} {size:character|characters} {times} {times:time|times} is too much (the limit is {limit})",
                          size=size, times=many, limit=limit)  # fmt: skip
            elif n == 1:
                why = say("repeating a list of 1 item {times} {times:time|times} is too much (the limit is {limit})",
                          times=many, limit=limit)  # fmt: skip
            else:
                why = say("repeating a list of {size} {size:item|items} {times} {times:time|times} is too much (the limit is {limit})",
                          size=size, times=many, limit=limit)  # fmt: skip
            raise SecurityError(why)


_FIELD_WIDTH = re.compile(r"\d{6,}|\*")


def _check_format(fmt: str, who: str) -> None:
    """Refuse formats whose fields could be made huge: wide widths, ``*`` or nested fields."""
    if _FIELD_WIDTH.search(fmt) or re.search(r"\{[^{}]*:[^{}]*\{", fmt):
        shown = f"{fmt!r:.60}"
        if who == "str.format":
            why = say("str.format: the format {format} asks for a field too wide or set by an argument", format=shown)
        elif who == "the format filter":
            why = say("the format filter: the format {format} asks for a field too wide or set by an argument",
                      format=shown)  # fmt: skip
        else:
            why = say("'%' formatting: the format {format} asks for a field too wide or set by an argument",
                      format=shown)  # fmt: skip
        raise SecurityError(why)


class _FreshModules(jinja2.Template):
    """Templates whose imported modules (``{% import %}``, ``{% from ... import %}``) are made afresh for
    each render: Jinja keeps one per template and hands it to every render, which would let one problem
    leave a value (a namespace, a cycler) for the next."""

    def _get_default_module(self, ctx: jinja2.runtime.Context | None = None) -> Any:
        if ctx is not None:  # as Jinja does, without keeping the module
            keys = ctx.globals_keys - self.globals.keys()
            if keys:
                return self.make_module({k: ctx.parent[k] for k in keys})
        return self.make_module()


class FamilySandbox(jinja2.sandbox.SandboxedEnvironment):
    """Jinja's sandbox with symshard's rules on top (the module docstring lists them)."""

    intercepted_binops = frozenset({"*", "**", "%", "//"})

    template_class = _FreshModules

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value) or isinstance(value, types.ModuleType):
            return False
        if isinstance(obj, type) and inspect.isfunction(value):
            # a method read from its class could be called on any value: only static methods are open
            return isinstance(inspect.getattr_static(obj, attr, None), staticmethod) and _open_to_templates(obj)
        return _open_to_templates(obj)

    def is_safe_callable(self, obj: Any) -> bool:
        return super().is_safe_callable(obj) and not getattr(obj, "writes_files", False)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        kind = type(obj).__name__
        if kind[:1].lower() in "aeiou":
            raise SecurityError(
                say("templates may not read '{attribute}' of an {type}", attribute=attribute, type=kind)
            )
        raise SecurityError(say("templates may not read '{attribute}' of a {type}", attribute=attribute, type=kind))

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not __self.is_safe_callable(__obj):
            raise SecurityError(say("templates may not call {name}", name=_name_of(__obj)))
        for fn in (__obj, *_callables((*args, *kwargs.values()))):  # a key= or callback is called too
            if not _reads_only(fn):
                raise SecurityError(
                    say("templates may not call {name}: a template reads values and never changes one (other "
                        "problems share them)", name=f"{type(fn.__self__).__name__}.{getattr(fn, '__name__', '?')}")
                )  # fmt: skip
        if _is_sympy(__obj):
            for text in _texts((*args, *kwargs.values())):
                raise SecurityError(
                    say("SymPy's {name}() was given the text {text}; SymPy would run it as Python",
                        name=_name_of(__obj), text=f"{text!r:.60}")
                )  # fmt: skip
        return __context.call(__obj, *args, **kwargs)

    def call_binop(self, context: jinja2.runtime.Context, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "*":
            _check_repeat(left, right)
        elif operator_ == "**":
            _check_power(left, right)
        elif operator_ == "%" and isinstance(left, str):
            _check_format(left, "'%' formatting")
        return _BINOPS[operator_](left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text = value.__self__

        def checked(*args: Any, **kwargs: Any) -> str:
            _check_format(text, "str.format")
            out = wrapped(*args, **kwargs)
            if len(out) > MAX_TEXT:
                raise SecurityError(
                    say("str.format made {count} {count:character|characters} (the limit is {limit})",
                        count=f"{len(out):,}", limit=f"{MAX_TEXT:,}")
                )  # fmt: skip
            return out

        return checked


_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "*": operator.mul,
    "**": operator.pow,
    "%": operator.mod,
    "//": operator.floordiv,
}


def _bounded(filter_: Callable[..., Any], name: str, *widths: str) -> Callable[..., Any]:
    """A Jinja filter whose width-like arguments (by name or position after the value) are checked."""
    passes = getattr(filter_, "jinja_pass_arg", None)  # a context Jinja passes first, if the filter asks for one

    def run(*given: Any, **kwargs: Any) -> Any:
        value, *args = given[1:] if passes is not None else given
        for w in [*args, *(kwargs[w] for w in widths if w in kwargs)]:
            if isinstance(w, int) and not isinstance(w, bool) and abs(w) > _MAX_WIDTH:
                raise SecurityError(
                    say("the {name} filter was given {value} (the limit is {limit})",
                        name=name, value=f"{w:,}", limit=f"{_MAX_WIDTH:,}")
                )  # fmt: skip
            if isinstance(w, str) and len(w) > _MAX_WIDTH:
                raise SecurityError(
                    say(
                        "the {name} filter was given text of {count} {count:character|characters}",
                        name=name,
                        count=f"{len(w):,}",
                    )
                )
        if name == "format" and isinstance(value, str):
            _check_format(value, "the format filter")
        out = filter_(*given, **kwargs)
        if isinstance(out, str) and len(out) > MAX_TEXT:
            raise SecurityError(
                say("the {name} filter made {count} {count:character|characters} (the limit is {limit})",
                    name=name, count=f"{len(out):,}", limit=f"{MAX_TEXT:,}")
            )  # fmt: skip
        return out

    if passes is not None:
        run.jinja_pass_arg = passes  # type: ignore[attr-defined]
    return run


def _sandbox_filters() -> dict[str, Callable[..., Any]]:
    f = jinja2.filters.FILTERS
    return {
        "center": _bounded(f["center"], "center", "width"),
        "indent": _bounded(f["indent"], "indent", "width"),
        "wordwrap": _bounded(f["wordwrap"], "wordwrap", "width"),
        "truncate": _bounded(f["truncate"], "truncate", "length"),
        "format": _bounded(f["format"], "format"),
        "batch": _bounded(f["batch"], "batch", "linecount"),
        "slice": _bounded(f["slice"], "slice", "slices"),
        "replace": _bounded(f["replace"], "replace", "count"),
        "join": _bounded(f["join"], "join"),
    }


class FamilyLoader(jinja2.BaseLoader):
    """Loads templates from one family folder, and only regular files inside it.

    A name with ``..``, an absolute path, a symbolic link anywhere on the way, a
    device or a file over :data:`MAX_TEMPLATE_BYTES` is refused.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        path = safe_path(self.folder, template)
        before = os.stat(path, follow_symlinks=False)
        data = _read_at_most(path, template, MAX_TEMPLATE_BYTES)
        try:
            source = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise SecurityError(
                say("template '{name}' is not UTF-8 text ({why} at byte {offset})",
                    name=template, why=err.reason, offset=err.start)
            ) from None  # fmt: skip

        def uptodate() -> bool:
            try:
                now = os.stat(path, follow_symlinks=False)
            except OSError:
                return False
            return (now.st_mtime_ns, now.st_size, now.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)

        return source, str(path), uptodate


def family_file(folder: Path, name: str, limit: int = MAX_TEMPLATE_BYTES) -> bytes:
    """The bytes of the regular file ``name`` of the family folder ``folder``, under the loader's rules
    (see :func:`safe_path`) and at most ``limit`` bytes: how a family reads any file of its own.

    Raises:
        jinja2.TemplateNotFound: no such file.
        SecurityError: a name that leaves the folder, a link, not a regular file, or a file over ``limit``.
    """
    return _read_at_most(safe_path(folder, name), name, limit, template=False)


def _read_at_most(path: Path, name: str, limit: int, *, template: bool = True) -> bytes:
    """At most ``limit`` bytes of the regular file ``path`` (opened without following a link, checked again
    once open, so that nothing swapped in after :func:`safe_path` looked is read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SecurityError(say("'{name}' is not a regular file", name=name))
        data = f.read(limit + 1)
    if len(data) > limit:
        size = f"{limit:,}"
        if template:
            raise SecurityError(say("template '{name}' is larger than {size} {size:byte|bytes}", name=name, size=size))
        raise SecurityError(say("'{name}' is larger than {size} {size:byte|bytes}", name=name, size=size))
    return data


def safe_path(folder: Path, name: str) -> Path:
    """The regular file ``name`` inside ``folder``, refusing anything that leaves it.

    Raises:
        jinja2.TemplateNotFound: no such file.
        SecurityError: an absolute path, ``..``, a symbolic link on the way, or not a regular file.
    """
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or any(p in ("..", "") for p in parts):
        raise SecurityError(say("'{name}' is not a file of the family's own folder", name=name))
    path = folder
    for part in parts:
        path = path / part
        try:
            info = os.lstat(path)
        except OSError:
            raise jinja2.TemplateNotFound(name) from None
        if stat.S_ISLNK(info.st_mode):
            raise SecurityError(
                say("'{name}' goes through a symbolic link; families may only read their own files", name=name)
            )
    if not stat.S_ISREG(info.st_mode):
        raise SecurityError(say("'{name}' is not a regular file", name=name))
    return path


@lru_cache(maxsize=256)
def environment(folder: Path | None) -> FamilySandbox:
    """The sandboxed environment for templates in ``folder`` (None: strings only)."""
    env = FamilySandbox(
        loader=FamilyLoader(folder) if folder is not None else None,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.pop("lipsum", None)  # unbounded text, and nothing a problem needs
    env.filters.pop("random", None)  # not reproducible from the seed
    env.filters.update(_sandbox_filters())
    env.globals.update(_GLOBALS)
    env.filters.update(_FILTERS)
    return env

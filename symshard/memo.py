"""Memoization for the algebra's pure, expensive entry points.

Costing a collective, planning a matmul or deriving a crossover builds SymPy
expressions; the same question comes back often (a problem set asks for the
same symbolic formula in many variants, a notebook re-runs a cell). Every result
is an immutable value, so answers can be shared. Arguments are normalised first
(mappings and lists become sorted tuples); a call whose arguments cannot be
hashed simply runs uncached.

Examples:
    >>> calls = []
    >>> @memoized
    ... def double(x, scale={"k": 2}):
    ...     calls.append(x)
    ...     return x * scale["k"]
    >>> double(3, scale={"k": 2}), double(3, scale={"k": 2}), len(calls)
    (6, 6, 1)
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

__all__ = ["clear_caches", "memoized", "on_clear"]

F = TypeVar("F", bound=Callable[..., Any])
_CACHES: list[OrderedDict] = []
_CLEARERS: list[Callable[[], None]] = []


def _freeze(value: object) -> object:
    if isinstance(value, Mapping):
        return ("__map__", tuple(sorted(((str(k), _freeze(v)) for k, v in value.items()), key=lambda kv: kv[0])))
    if isinstance(value, (list, tuple)):
        return ("__seq__", tuple(_freeze(v) for v in value))
    return value


@overload
def memoized(fn: F) -> F: ...


@overload
def memoized(*, maxsize: int = 2048) -> Callable[[F], F]: ...


def memoized(fn: F | None = None, *, maxsize: int = 2048) -> F | Callable[[F], F]:
    """Cache ``fn``'s results by (normalised) arguments, least recently used out first."""

    def wrap(f: F) -> F:
        cache: OrderedDict = OrderedDict()
        _CACHES.append(cache)

        @functools.wraps(f)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                key = (_freeze(args), _freeze(kwargs))
                hash(key)
            except TypeError:
                return f(*args, **kwargs)
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
            result = f(*args, **kwargs)
            cache[key] = result
            if len(cache) > maxsize:
                cache.popitem(last=False)
            return result

        inner.__wrapped__ = f  # type: ignore[attr-defined]
        return inner  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap


def on_clear(clear: Callable[[], None]) -> None:
    """Have :func:`clear_caches` call ``clear`` too (a module's own cache, an ``lru_cache``'s ``cache_clear``)."""
    _CLEARERS.append(clear)


def clear_caches() -> None:
    """Forget every memoized result and every cache registered with :func:`on_clear` (for
    benchmarks that time cold calls)."""
    for cache in _CACHES:
        cache.clear()
    for clear in _CLEARERS:
        clear()

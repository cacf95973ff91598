"""Which of a plan's strategies run under ``shard_map``, and running one without raising.

:func:`choose` picks them (every one, the best, none, or a seeded sample that always keeps the best and
XLA's match; past :data:`AUTO_RUN` strategies ``run='auto'`` draws a sample), :func:`check_run` checks
that choice before any work, and :func:`attempt` runs one strategy
(:func:`symshard.jax.execution.execute`) or says why it cannot.

In :mod:`symshard.jax` it sits on :mod:`.execution`, below the results, the searches and the check that
use it. No JAX at import time.
"""

from __future__ import annotations

import math
import random

from ..errors import ShardingError, UsageError
from ..messages import say
from ..planning.listing import StrategyList
from ..planning.strategies import Plan, Strategy
from .execution import Execution, execute, undivided

__all__ = ["AUTO_RUN", "attempt", "check_run", "choose"]


def attempt(p: Plan, s: Strategy, *, fused: bool, memo: dict | None) -> Execution | str:
    """``s`` run under ``shard_map``, or why it cannot run (a block that does not divide). A
    :class:`~symshard.errors.ShardingError` while running (a block shape JAX and symshard disagree
    on) is kept as a failed :class:`Execution` carrying its message, never raised."""
    why = undivided(p, s)
    if why is not None:
        return why
    try:
        return execute(p, s, fused=fused, memo=memo)
    except ShardingError as err:
        return Execution(s.name, False, False, math.inf, 0.0, False, (err.message,), 0)


AUTO_RUN = 100
"""With ``run='auto'`` (verify's default), every strategy runs when a plan has at most this many; a larger
plan (a mesh of three or four axes lists thousands to millions) runs a seeded sample of this many."""


def check_run(run: str, sample: int | None) -> None:
    """Check a choice of strategies to run (see :func:`choose`) before any work is done.

    Raises:
        UsageError: an unknown ``run``, or a ``sample`` below 1 or with a ``run`` other than ``'all'`` or
            ``'auto'``.

    Examples:
        >>> check_run("auto", 10)
        >>> check_run("some", None)
        Traceback (most recent call last):
        ...
        symshard.errors.UsageError: run must be auto, all, best or none, not 'some'
        hint: e.g. run='best'
    """
    if run not in ("auto", "all", "best", "none"):
        raise UsageError(
            say("run must be auto, all, best or none, not {value}", value=repr(run)), hint=say("e.g. run='best'")
        )
    if sample is not None and (sample < 1 or run not in ("all", "auto")):
        raise UsageError(
            say(
                "a sample of {count} {count:strategy|strategies} with run={run} cannot be drawn",
                count=sample,
                run=repr(run),
            ),
            hint=say("sample at least 1 strategy, with run='auto' or 'all' (the sample is drawn from all strategies)"),
        )


def choose(
    p: Plan, run: str, *, sample: int | None = None, seed: int = 0, keep: Strategy | None = None
) -> list[Strategy]:
    """The strategies of ``p`` to run under ``shard_map``, in the plan's order.

    ``run`` is ``'all'``, ``'best'`` or ``'none'``; with ``'all'``, ``sample`` runs at most that
    many: the best and ``keep`` (the strategy matching XLA's plan) always, the rest drawn with
    ``random.Random(seed)``, so the same seed picks the same strategies.

    Raises:
        UsageError: an unknown ``run``, or a ``sample`` below 1 or with a ``run`` other than ``'all'``.
    """
    check_run(run, sample)
    if run == "none":
        return []
    if run == "best":
        return list(p.strategies[:1])
    if sample is None or sample >= len(p.strategies):
        return list(p.strategies)
    listed = p.strategies
    where = listed.index_of if isinstance(listed, StrategyList) else listed.index
    always = {0} | ({where(keep)} if keep is not None else set())
    others = [i for i in range(len(p.strategies)) if i not in always]
    drawn = random.Random(seed).sample(others, max(0, min(sample - len(always), len(others))))
    return [p.strategies[i] for i in sorted(always | set(drawn))]

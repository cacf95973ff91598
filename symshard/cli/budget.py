"""Every command on a time and memory budget, and one line when it runs out.

The algebra refuses what it can tell is too large before it starts (:class:`~symshard.errors.TooLargeError`:
too many dims, mesh axes, compute shardings or strategies); what only running can tell is stopped here.
A command runs in :func:`running`, which

* sets a timer (``SIGALRM``) whose handler raises at the next Python step, never inside a file write
  the command holds (:func:`hold`); a raise swallowed on the way (in a ``__del__``) is tried again a
  moment later;
* caps the memory the command may add: as address space (``RLIMIT_AS``, so that an allocation past it
  fails at once with a ``MemoryError``), or for ``verify``, whose JAX and XLA reserve address space up
  front, as resident memory watched from a thread;
* turns either into a :class:`~symshard.errors.BudgetError` naming the limit and how to raise it.

The limits are ``--time-limit`` and ``--memory-limit``, else ``$SYMSHARD_TIME_LIMIT`` and
``$SYMSHARD_MEMORY_LIMIT``, else the command's default (:func:`limits_for`). For the problem commands
they are each variant's (run in the family worker, :mod:`symshard.problems.budget`), and the command
itself gets a minute more than its variants together. Only the main thread keeps a budget, and a
command run inside another (the docs site runs its examples) runs on the outer one's.

Examples:
    >>> with running(Limits(5.0, 2**30), "example"):
    ...     sum(range(10))
    45
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import BudgetError, UsageError
from ..messages import Message, say

__all__ = ["COMMAND", "Limits", "Running", "hold", "limits_for", "relax", "running"]

_GiB = 2**30

COMMAND_SECONDS = 60.0
"""A command's default time: the planners' largest legitimate questions take seconds (a plan on seven axes
with numbers, ten; a compare of 441 strategies, twenty), so a minute is ample and ends what is stuck."""

COMMAND_MEMORY = 2 * _GiB
"""A command's default memory, on top of what it holds when it starts (a million listed strategies take
140 MB, a set of 200 problems in every format 500 MB)."""

SITE_SECONDS = 600.0
"""The default time of ``site build`` and ``site serve``'s build (about a minute), with room for a slow machine."""

SITE_MEMORY = 4 * _GiB
"""The default memory of the site commands (MkDocs holds every page)."""

VERIFY_SECONDS = 600.0
"""``verify``'s default time (it stops its searches and runs when it is up, and says so)."""

VERIFY_GRACE = 60.0
"""Seconds past ``verify``'s time limit before it is stopped outright: XLA's compiles cannot stop midway."""

VERIFY_MEMORY = 16 * _GiB
"""``verify``'s default memory, counted as resident memory (JAX and XLA reserve address space up front)."""

PROBLEM_EXTRA = 60.0
"""Seconds a problem command gets on top of its variants' time limits together (loading, exports, writes)."""

PROBLEM_MEMORY = 4 * 2**20
"""Bytes a problem command may add for each problem it draws, on top of the larger of a command's default and
four times a variant's (the exports hold every problem: a set of 200 takes about 330 MB more)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one command may take: wall-clock seconds and bytes of memory (None: that one is not limited).

    ``memory`` counts what the command adds to its address space, or with ``resident`` its resident memory.
    """

    seconds: float | None
    memory: int | None
    resident: bool = False


COMMAND = Limits(COMMAND_SECONDS, COMMAND_MEMORY)
"""The default budget of a command."""


def limits_for(args: Any) -> Limits:
    """The budget of the command ``args`` asks for: its options, else the environment, else its default.

    Raises:
        TemplateError: a limit that cannot be read, or out of range (as :class:`~symshard.problems.budget.Budget`
            says).
        UsageError: ``verify``'s time limit leaves no time.
    """
    from ..problems.budget import Budget

    run = getattr(args, "run", "")
    time_limit, memory_limit = getattr(args, "time_limit", None), getattr(args, "memory_limit", None)
    if run == "verify":  # its own time limit is the check's (args.time_limit, read here); the hard stop comes later
        checked = Budget.of(_positive(time_limit), memory_limit, default=Budget(VERIFY_SECONDS, VERIFY_MEMORY))
        args.time_limit = checked.seconds
        return Limits(checked.seconds + VERIFY_GRACE, checked.memory, resident=True)
    if run.startswith("problems_") and run not in ("problems_list", "problems_schema"):
        variant = Budget.of(time_limit, memory_limit)  # each variant's, in the worker
        count = _variants(args)
        memory = max(COMMAND_MEMORY, 4 * variant.memory) + count * PROBLEM_MEMORY
        return Limits(PROBLEM_EXTRA + count * variant.seconds, memory)
    default = Budget(SITE_SECONDS, SITE_MEMORY) if run.startswith("site_") else Budget(COMMAND_SECONDS, COMMAND_MEMORY)
    chosen = Budget.of(time_limit, memory_limit, default=default)
    return Limits(chosen.seconds, chosen.memory)


def _positive(value: object) -> object:
    """``value``, refused if it is a number of seconds that leaves no time."""
    try:
        number = float(str(value)) if value is not None else None
    except ValueError:
        return value  # text such as '600 s', read as a time limit
    if number is not None and not number > 0:
        raise UsageError(
            say("--time-limit {seconds} leaves no time", seconds=f"{number:g}"),
            hint=say("give seconds, e.g. --time-limit 600"),
        )
    return value


def _variants(args: Any) -> int:
    """How many variants a problem command draws at most (for its time: each has its own limit); more than a
    set may have is refused by the command itself."""
    if args.run != "problems_generate":
        return 1
    from ..problems.engine import MAX_PROBLEMS

    if args.count is not None:
        asked = args.count
    elif args.per_family is None:
        asked = 1
    elif args.family:
        asked = args.per_family * len(args.family)
    else:
        from ..problems import families

        asked = args.per_family * len(families(args.families or ()))
    return min(max(1, asked), MAX_PROBLEMS)


# -- the running budget ---------------------------------------------------------------------------


class _OutOfTime(BaseException):
    """Raised by the timer: a BaseException, so that no ``except Exception`` on the way swallows it."""


class _OutOfMemory(BaseException):
    """Raised when the resident memory watched passes the limit."""


@dataclass
class _Run:
    limits: Limits
    held: int = 0
    late: type[BaseException] | None = None
    over_memory: bool = False


_ACTIVE: _Run | None = None

_RETRY = 0.25
"""Seconds between the timer's tries once it has fired (a raise can be swallowed by a ``__del__``)."""

_WATCH = 0.05
"""Seconds between two looks at the resident memory."""


def _alarm(signum: int, frame: object) -> None:
    run = _ACTIVE
    if run is None:
        return
    error = _OutOfMemory if run.over_memory else _OutOfTime
    if run.held:
        run.late = error
        return
    raise error


def _unraisable(hook: Any) -> Any:
    """``sys.unraisablehook`` that drops the budget's own raises (the timer tries again) and passes on the rest."""

    def drop(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, (_OutOfTime, _OutOfMemory)):
            hook(unraisable)

    return drop


@contextmanager
def hold() -> Iterator[None]:
    """Keep the timer from raising inside this block (a file being written); it raises when the block ends.

    Examples:
        >>> with hold():
        ...     pass
    """
    run = _ACTIVE
    if run is None:
        yield
        return
    run.held += 1
    try:
        yield
    finally:
        run.held -= 1
    if not run.held and run.late is not None:
        late, run.late = run.late, None
        raise late


def relax() -> None:
    """Stop the running command's timer (``site serve`` serves until Ctrl-C once its build is done)."""
    if _ACTIVE is not None and hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)


def _resident() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _watch(run: _Run, limit: int, stop: threading.Event) -> None:
    """Look at the resident memory until ``stop``; past ``limit``, interrupt the main thread."""
    start = _resident()
    if start is None:
        return
    main = threading.main_thread().ident
    while not stop.wait(_WATCH):
        now = _resident()
        if now is not None and now - start > limit:
            run.over_memory = True
            if main is not None:
                signal.pthread_kill(main, signal.SIGALRM)
            return


_RESERVE = 8 * 2**20
"""Bytes set aside when a command starts and given back the moment its memory runs out, so that what
follows (restoring the limits, wording the error) has room."""


def running(limits: Limits, command: str) -> Running:
    """Run the block on ``limits``; past either, a :class:`~symshard.errors.BudgetError` naming ``command``
    (``'matmul'``, ``'problems generate'``). A block inside another's budget, or outside the main thread,
    runs on nothing of its own.

    Raises:
        BudgetError: the block ran past its time limit or needed more than its memory limit.

    Examples:
        >>> with running(Limits(0.2, None), "example"):  # doctest: +ELLIPSIS
        ...     while True:
        ...         pass
        Traceback (most recent call last):
        ...
        symshard.errors.BudgetError: the command 'symshard example' ran longer than its time limit of 0.2 s and was...
        hint: give it more time with --time-limit SECONDS (or $SYMSHARD_TIME_LIMIT), or ask a smaller question...
    """
    return Running(limits, command)


class Running:
    """The budget of one command while it runs (see :func:`running`): the timer, the memory cap, and what
    they become when the command runs out."""

    def __init__(self, limits: Limits, command: str) -> None:
        self.limits = limits
        self.command = command
        self.run: _Run | None = None
        self.reserve: bytearray | None = None
        self.old_limit: Any = None
        self.previous: Any = None
        self.hook: Any = None
        self.stop = threading.Event()
        self.watcher: threading.Thread | None = None
        self.timer = False

    def __enter__(self) -> Running:
        global _ACTIVE
        if _ACTIVE is not None or threading.current_thread() is not threading.main_thread():
            return self
        limits = self.limits
        self.run = _ACTIVE = _Run(limits, held=1)  # held while it starts: the timer's next try raises
        self.timer = limits.seconds is not None and hasattr(signal, "setitimer")
        if limits.memory is not None and not limits.resident:
            self._cap_address_space(limits.memory)
        if self.timer or (limits.memory is not None and limits.resident):
            self.previous = signal.signal(signal.SIGALRM, _alarm)
            self.hook = sys.unraisablehook
            sys.unraisablehook = _unraisable(self.hook)
        if self.timer:
            signal.setitimer(signal.ITIMER_REAL, max(limits.seconds or 0.0, 1e-6), _RETRY)
        if limits.memory is not None and limits.resident:
            self.watcher = threading.Thread(target=_watch, args=(self.run, limits.memory, self.stop), daemon=True)
            self.watcher.start()
        self.run.held = 0
        return self

    def _cap_address_space(self, memory: int) -> None:
        try:
            import resource

            from ..problems.budget import address_space

            now = address_space()
            if now is None:
                return
            old = resource.getrlimit(resource.RLIMIT_AS)
            soft = now + memory + _RESERVE
            if old[1] != resource.RLIM_INFINITY:
                soft = min(soft, old[1])
            if old[0] != resource.RLIM_INFINITY and old[0] <= soft:
                return  # a tighter limit is already set: keep it
            resource.setrlimit(resource.RLIMIT_AS, (soft, old[1]))
            self.old_limit = old
            self.reserve = bytearray(_RESERVE)
        except (ImportError, ValueError, OSError):
            self.old_limit = None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> Literal[False]:
        global _ACTIVE
        if self.run is None:
            return False
        _ACTIVE = None  # first: the timer's handler raises no more
        self.reserve = None  # and room for what follows
        if self.old_limit is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self.old_limit)
        if self.timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.stop.set()
        if self.watcher is not None:
            self.watcher.join(1.0)  # before the handler goes: its signal would end the process
        if self.previous is not None:
            signal.signal(signal.SIGALRM, self.previous)
            sys.unraisablehook = self.hook
        failure = ""
        if kind is not None and issubclass(kind, _OutOfTime):
            failure = "time"
        elif kind is not None and issubclass(kind, (MemoryError, _OutOfMemory)):
            failure = "memory"
        if not failure:
            return False
        named = say("the command '{command}'", command=f"symshard {self.command}")
        if failure == "time":
            raise BudgetError(
                say("{what} ran longer than its time limit of {limit} and was stopped", what=named,
                    limit=_seconds(self.limits.seconds or 0.0)),
                hint=_hint(self.command, "time"),
            ) from None  # fmt: skip
        raise BudgetError(
            say("{what} needed more than its memory limit of {limit} and was stopped", what=named,
                limit=_bytes(self.limits.memory or 0)),
            hint=_hint(self.command, "memory"),
        ) from None  # fmt: skip


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _bytes(value: int) -> str:
    return f"{value / _GiB:g} GiB" if value >= _GiB and value % (_GiB // 4) == 0 else f"{value / 2**20:,.0f} MiB"


def _smaller(command: str) -> Message:
    """How to ask ``command`` a smaller question."""
    name = command.split(" ")[0]
    if name == "matmul":
        return say("use fewer mesh axes, give every size as a number (--shape and --hw), or drop --all")
    if name == "compare":
        return say("compare fewer strategies (--strategies 1,2), or use fewer mesh axes")
    if name == "best-sharding":
        return say("use fewer mesh axes, or a shorter chain")
    if name == "verify":
        return say("run fewer strategies (--sample N, --run best), or use fewer mesh axes")
    if name == "problems":
        return say("ask for fewer problems (--count, --per-family)")
    if name == "site":
        return say("build the site from fewer problem sets")
    return say("ask a smaller question (fewer mesh axes, fewer dims)")


def _hint(command: str, kind: str) -> Message:
    smaller = _smaller(command)
    if kind == "time":
        return say(
            "give it more time with --time-limit SECONDS (or $SYMSHARD_TIME_LIMIT), or {smaller}", smaller=smaller
        )
    return say("allow more with --memory-limit SIZE (or $SYMSHARD_MEMORY_LIMIT), or {smaller}", smaller=smaller)

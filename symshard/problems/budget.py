"""A time and memory budget for the work a problem family asks for, enforced by a worker process.

Families are written by strangers and rendered on students' machines. The sandbox
(:mod:`symshard.problems.sandbox`) keeps templates away from Python and from files and
refuses the obvious bombs, but a template can still ask for a lot of work: nested
loops, a power of a power, deep recursion, a plan on a mesh of eight axes. A limit
checked between Python steps cannot stop work that runs inside one C call, so every
variant is drawn and rendered in a worker process:

* past the **time limit** the worker is stopped (a fresh one serves the next variant);
* past the **memory limit** its allocations fail (``RLIMIT_AS`` where the system has it);
* it cannot grow files (``RLIMIT_FSIZE`` 0) and SymPy's text parser is switched off in it.

Either way the caller gets a :class:`~symshard.errors.TemplateError` naming the family,
the seed and the limit. The worker is forked from the caller when the caller runs one
thread on Linux (so it starts warm, in milliseconds), and is a fresh interpreter otherwise
(which never re-runs the caller's script, as multiprocessing's spawn would); it keeps its
caches from one variant to the next.

Examples:
    >>> Budget()
    Budget(seconds=4.0, memory=536870912)
    >>> run(pow, (2, 10), Budget(seconds=5), what="a small power")
    1024
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import BudgetError, SymshardError, TemplateError
from ..messages import Message, say

__all__ = ["Budget", "address_space", "run", "stop_worker"]

_GRACE = 1.0
"""Seconds the caller waits past the time limit for the worker's own clean stop before killing it."""

_STARTUP = 120.0
"""Seconds a new worker may take to start (a fresh interpreter imports symshard first); not part of any budget."""


@dataclass(frozen=True, slots=True)
class Budget:
    """The most one variant of a family may take: wall-clock seconds and bytes of memory.

    Defaults: 4 s and 512 MiB, or ``$SYMSHARD_TIME_LIMIT`` and ``$SYMSHARD_MEMORY_LIMIT``
    (``'20'``, ``'2 s'``; ``'1 GiB'``, ``'800 MB'``) through :meth:`from_environment`.

    Raises:
        TemplateError: a limit that is not a positive, finite number (or absurdly large).
    """

    seconds: float = 4.0
    memory: int = 512 * 2**20

    def __post_init__(self) -> None:
        if not (isinstance(self.seconds, (int, float)) and math.isfinite(self.seconds) and 0 < self.seconds <= 86400):
            raise TemplateError(
                say(
                    "the time limit {value} is not a number of seconds between 0 and 86400", value=_shown(self.seconds)
                ),
                hint=say("e.g. {example}", example="--time-limit 10"),
            )
        if not (isinstance(self.memory, int) and 64 * 2**20 <= self.memory <= 2**44):
            raise TemplateError(
                say(
                    "the memory limit {value} {value:byte|bytes} is not between 64 MiB and 16 TiB",
                    value=_shown(self.memory),
                ),
                hint=say("e.g. {example}", example="--memory-limit 1GiB"),
            )

    @classmethod
    def of(cls, seconds: object = None, memory: object = None, *, default: Budget | None = None) -> Budget:
        """A budget from text or numbers (``'10 s'``, ``'1 GiB'``); None keeps the environment's or ``default``
        (a variant's: 4 s and 512 MiB).

        Raises:
            TemplateError: a limit that cannot be read.

        Examples:
            >>> Budget.of("2.5", "1 GiB")
            Budget(seconds=2.5, memory=1073741824)
            >>> Budget.of("90", default=Budget(60, 2**31))
            Budget(seconds=90.0, memory=2147483648)
        """
        base = cls.from_environment(default)
        return cls(
            _read(seconds, "s", "time limit") if seconds is not None else base.seconds,
            int(_read(memory, "B", "memory limit")) if memory is not None else base.memory,
        )

    @classmethod
    def from_environment(cls, default: Budget | None = None) -> Budget:
        """``default`` (a variant's: 4 s and 512 MiB), or the limits ``$SYMSHARD_TIME_LIMIT`` and
        ``$SYMSHARD_MEMORY_LIMIT`` set; every command reads the same two variables."""
        base = default if default is not None else cls()
        seconds = os.environ.get("SYMSHARD_TIME_LIMIT")
        memory = os.environ.get("SYMSHARD_MEMORY_LIMIT")
        return cls(
            _read(seconds, "s", "SYMSHARD_TIME_LIMIT") if seconds else base.seconds,
            int(_read(memory, "B", "SYMSHARD_MEMORY_LIMIT")) if memory else base.memory,
        )


def _shown(value: object) -> str:
    """A limit for a message: ``2.5``, ``0``, ``1e+30``, not ``2.5000`` or a 31-digit integer."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.6g}"
    return repr(value)


def _read(value: object, unit: str, what: str) -> float:
    from ..algebra.units import parse_quantity

    try:
        number = parse_quantity(value, unit)  # type: ignore[arg-type]
    except (ValueError, SymshardError) as err:
        example = "10 s" if unit == "s" else "1 GiB"
        said = getattr(err, "message", None)
        why = said if isinstance(said, Message) and said == str(err) else str(err)
        if what == "time limit":
            message = say("cannot read the time limit {value}: {why}", value=repr(value), why=why)
        elif what == "memory limit":
            message = say("cannot read the memory limit {value}: {why}", value=repr(value), why=why)
        else:
            message = say("cannot read the {variable} {value}: {why}", variable=what, value=repr(value), why=why)
        raise TemplateError(message, hint=say("e.g. {example}", example=example)) from None
    return float(number) if unit == "s" else int(number)


# -- the worker's side ---------------------------------------------------------------------------


class _OutOfTime(BaseException):
    """Raised in the worker by its own alarm; a BaseException, so that ``except Exception`` cannot swallow it."""


_IN_WORKER = False


_PARSE_EXPR: Any = None


def _refuse_text(*args: object, **kwargs: object) -> object:
    """SymPy's parser, for SymPy's own modules while they are imported (``sympy.physics.units`` parses its
    prefixes' names then); refused for anything else a family's work reaches."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and str(frame.f_globals.get("__name__", "")).startswith("sympy."):
            return _PARSE_EXPR(*args, **kwargs)
        frame = frame.f_back  # type: ignore[assignment]
    raise TemplateError(
        say("SymPy's text parser is switched off while a family runs"), hint=say("pass values, not text")
    )


def _harden() -> None:
    """What the worker gives up for good: growing files, SymPy's text parser, Ctrl-C (the caller handles it)."""
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import sympy.parsing.sympy_parser as parser

        global _PARSE_EXPR
        _PARSE_EXPR = parser.parse_expr
        parser.parse_expr = _refuse_text  # type: ignore[assignment]  # sympify(text) imports it from here
    except ImportError:  # pragma: no cover - sympy always has it
        pass
    try:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        # a cap on the address space inherited from the command that started the worker would outlive that
        # command; each task sets its own (_limits)
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    except (ImportError, ValueError, OSError, AttributeError):  # pragma: no cover - not on every system
        pass


def address_space() -> int | None:
    """This process's virtual memory in bytes (from ``/proc/self/statm``), or None where it cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


@contextmanager
def _limits(seconds: float, memory: int) -> Iterator[None]:
    resource: Any = None
    old = None
    try:
        import resource

        now = address_space()
        if now is not None:
            old = resource.getrlimit(resource.RLIMIT_AS)
            hard = old[1]
            soft = now + memory if hard == resource.RLIM_INFINITY else min(now + memory, hard)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    except (ImportError, ValueError, OSError):
        old = None

    def alarm(signum: int, frame: object) -> None:
        raise _OutOfTime

    has_alarm = hasattr(signal, "setitimer")
    if has_alarm:
        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if has_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if old is not None and resource is not None:
            resource.setrlimit(resource.RLIMIT_AS, old)


def _serve(conn: Any) -> None:
    """The worker's loop: run each task under its limits and send back what happened."""
    _harden()
    conn.send(("ready", None))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        task, args, seconds, memory, cwd = message
        try:
            os.chdir(cwd)  # relative paths mean what they mean to the caller, now
            with _limits(seconds, memory):
                reply: tuple[str, object] = ("ok", task(*args))
        except _OutOfTime:
            reply = ("time", None)
        except MemoryError:
            reply = ("memory", None)
        except RecursionError:
            reply = ("recursion", None)
        except Exception as err:  # an error to hand back, not to die of
            reply = ("error", err)
        try:
            conn.send(reply)
        except Exception as err:  # the result or the error would not pickle
            why = f"{type(err).__name__}: {err}"  # Python's own words
            conn.send(("error", TemplateError(say("the worker could not return its result: {why}", why=why))))
        if reply[0] == "memory":
            return  # a fresh worker is cheaper than trusting a heap that ran dry


# -- the caller's side ---------------------------------------------------------------------------


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _can_fork() -> bool:
    """Whether forking is safe here: Linux, and one thread (a thread holding a lock would leave it held)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods() and _threads() == 1


def _serve_fd(fd: int) -> None:
    """The entry point of a worker started as a fresh interpreter: serve on the socket ``fd``."""
    from multiprocessing.connection import Connection

    _serve(Connection(fd))


class _Worker:
    """The worker process and the connection to it.

    Forked from the caller where that is safe (it starts warm, in milliseconds); otherwise a
    fresh interpreter (``python -c``) that imports symshard and never re-runs the caller's
    ``__main__``, as multiprocessing's spawn and forkserver would.
    """

    def __init__(self) -> None:
        self.process: Any = None
        self.popen: subprocess.Popen | None = None
        if _can_fork():
            ctx = multiprocessing.get_context("fork")
            self.conn, child = ctx.Pipe()
            self.process = ctx.Process(target=_serve, args=(child,), name="symshard-family-worker", daemon=True)
            self.process.start()
            child.close()
        else:
            from multiprocessing.connection import Connection

            ours, theirs = socket.socketpair()
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if isinstance(p, str) and p)}
            command = "import sys; from symshard.problems.budget import _serve_fd; _serve_fd(int(sys.argv[1]))"
            self.popen = subprocess.Popen(
                [sys.executable, "-c", command, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=env,
            )
            theirs.close()
            self.conn = Connection(ours.detach())
        try:
            ready = self.conn.poll(_STARTUP) and self.conn.recv()[0] == "ready"
        except (EOFError, OSError):
            ready = False
        except BaseException:  # Ctrl-C, or the command's budget, while it starts: no worker is left behind
            self.stop()
            raise
        if not ready:
            self.stop()
            raise BudgetError(
                say("the worker process that runs problem families did not start"),
                hint=say("check that Python can start a subprocess here"),
            )

    def alive(self) -> bool:
        if self.popen is not None:
            return self.popen.poll() is None
        return bool(self.process.is_alive())

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll() if self.popen is not None else self.process.exitcode

    def stop(self) -> None:
        try:
            self.conn.close()
        finally:
            if self.popen is not None:
                if self.popen.poll() is None:
                    self.popen.kill()
                self.popen.wait(5)
            else:
                if self.process.is_alive():
                    self.process.kill()
                self.process.join(5)


_WORKER: _Worker | None = None
_LOCK = threading.Lock()


def stop_worker() -> None:
    """Stop the worker process, if one runs (a new one starts on the next :func:`run`)."""
    global _WORKER
    with _LOCK:
        if _WORKER is not None:
            _WORKER.stop()
            _WORKER = None


def run(task: Callable[..., Any], args: tuple, budget: Budget, *, what: str) -> Any:
    """``task(*args)`` in the worker, within ``budget``; its result, or its exception raised here.

    ``task`` must be a module-level function (the worker finds it by name).

    Raises:
        BudgetError: the work ran past the time or memory limit (``what`` names it).
        Exception: whatever ``task`` raised, unchanged.
    """
    global _WORKER
    if _IN_WORKER:  # already inside the budget of the variant that asked
        return task(*args)
    with _LOCK:
        if _WORKER is None or not _WORKER.alive():
            _WORKER = _Worker()
        worker = _WORKER
        try:
            worker.conn.send((task, args, budget.seconds, budget.memory, os.getcwd()))
            if not worker.conn.poll(budget.seconds + _GRACE):
                kind, payload = "time", None
                worker.stop()
                _WORKER = None
            else:
                kind, payload = worker.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            kind, payload = "died", worker.exitcode
            worker.stop()
            _WORKER = None
        except BaseException:  # Ctrl-C, or the command's own budget: the worker's answer would come to the next task
            worker.stop()
            _WORKER = None
            raise
        if kind == "memory":
            worker.stop()
            _WORKER = None
    if kind == "ok":
        return payload
    if kind == "error":
        raise payload  # type: ignore[misc]
    limit = f"{budget.seconds:g} s" if kind == "time" else f"{budget.memory / 2**20:,.0f} MiB"
    if kind == "time":
        raise BudgetError(
            say("{what} ran longer than its time limit of {limit} and was stopped", what=what, limit=limit),
            hint=say(
                "look for a long loop or a huge number in the family; a trusted, slow family can get more time "
                "with --time-limit (or $SYMSHARD_TIME_LIMIT)"
            ),
        )
    if kind == "memory":
        raise BudgetError(
            say("{what} needed more than its memory limit of {limit} and was stopped", what=what, limit=limit),
            hint=say(
                "look for a huge string, list or number in the family; a trusted family can get more "
                "with --memory-limit (or $SYMSHARD_MEMORY_LIMIT)"
            ),
        )
    if kind == "recursion":
        raise BudgetError(
            say("{what} recursed too deeply and was stopped", what=what),
            hint=say("a macro or expression calls itself without end; give the recursion a base case"),
        )
    raise BudgetError(
        say("{what} stopped the worker process (exit status {status}) and was abandoned", what=what, status=payload),
        hint=say("the family asked for more than the budget allows, or crashed the interpreter; simplify it"),
    )

"""The exceptions symshard raises, all rooted at :class:`SymshardError`.

Every error a user can provoke with bad input is a subclass of one root, so a
caller can catch everything symshard rejects with one ``except`` clause, and each
subclass also inherits the built-in exception it refines (``ValueError`` or
``LookupError``), so generic code keeps working.

A message states the rule that was broken, quotes the offending text, points at
the spot and offers a fix::

    mesh axis X shards both I and J in 'A[I_X, J_X]'
      A[I_X, J_X]
              ^
    hint: a mesh axis can shard at most one dimension; AllGather one of them first

The tree::

    SymshardError
    ├── NotationError (ValueError)       text that does not parse
    │   └── UnknownSymbolError (LookupError)  a name a result does not contain (``subs``)
    ├── ShardingError (ValueError)       a sharding that breaks a rule
    │   └── DivisibilityError            a dim size its shards do not divide
    ├── MeshError (ValueError)           a malformed mesh
    │   └── UnknownAxisError (LookupError)  an axis the mesh lacks
    ├── ShapeError (ValueError)          bad dim sizes
    ├── CollectiveError (ValueError)     a collective that does not fit its input
    ├── HardwareError (ValueError)       bad hardware constants
    │   ├── UnknownHardwareError (LookupError)
    │   └── MeasurementError             a chip's measurement file that cannot be read or fitted
    ├── UnknownDtypeError (LookupError)
    ├── UnknownModelError (LookupError)  a cost model other than book / ring
    ├── PlanError (ValueError)           a matmul request that cannot be met
    ├── ModelError (ValueError)          a Transformer configuration that is not valid
    │   └── UnknownPresetError (LookupError)  a model name not in the catalogue
    ├── TemplateError (ValueError)       a problem family that cannot be rendered
    │   └── BudgetError                  work past its time or memory limit (a family's, or a command's)
    ├── AnswerError (ValueError)         a problem answer that does not exist or cannot be read
    ├── UsageError (ValueError)          a command line the CLI cannot read
    ├── InputError (ValueError)          a file symshard will not read (not a regular file, too large, not text)
    ├── OutputError (ValueError)         a folder or file symshard will not or cannot write
    ├── SiteError (RuntimeError)         a docs site that cannot be prepared, built or served
    ├── TooLargeError (ValueError)       a question too large to answer, refused before any work
    └── TimeLimitError (TimeoutError)    a search that ran past the time it was given
"""

from __future__ import annotations

from .messages import Choices, Message, say

__all__ = [
    "AnswerError",
    "BudgetError",
    "CollectiveError",
    "DivisibilityError",
    "HardwareError",
    "InputError",
    "MeasurementError",
    "MeshError",
    "ModelError",
    "NotationError",
    "OutputError",
    "PlanError",
    "ShapeError",
    "ShardingError",
    "SiteError",
    "SymshardError",
    "TemplateError",
    "TimeLimitError",
    "TooLargeError",
    "UnknownAxisError",
    "UnknownDtypeError",
    "UnknownHardwareError",
    "UnknownModelError",
    "UnknownPresetError",
    "UnknownSymbolError",
    "UsageError",
    "did_you_mean",
]


class SymshardError(Exception):
    """Root of every error symshard raises on bad input.

    Args:
        message: the rule that was broken, quoting the offending text.
        text: the input the message is about, shown under the message.
        span: ``(start, end)`` offsets into ``text`` to underline.
        hint: how to fix it.

    Examples:
        >>> err = SymshardError("bad dim", text="A[I_, J]", span=(2, 4), hint="name an axis")
        >>> print(err)
        bad dim
          A[I_, J]
            ^^
        hint: name an axis
        >>> err.one_line()
        "bad dim (at column 3 of 'A[I_, J]'); hint: name an axis"
    """

    def __init__(
        self,
        message: str,
        *,
        text: str | None = None,
        span: tuple[int, int] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.span = span
        self.hint = hint

    def __str__(self) -> str:
        lines = [_printable(self.message)]
        if self.text is not None and self.span is not None:
            shown = _printable(self.text)
            start, end = self.span
            start = max(0, min(start, len(shown)))
            width = max(1, end - start)
            lines.append("  " + shown)
            lines.append("  " + " " * start + "^" * width)
        if self.hint:
            lines.append("hint: " + _printable(self.hint))
        return "\n".join(lines)

    def one_line(self) -> str:
        """The message, position and hint on a single line (what the CLI prints)."""
        line = self.message
        if self.text is not None and self.span is not None:
            if f"'{self.text}'" in line:
                line += f" (at column {self.span[0] + 1})"
            else:
                line += f" (at column {self.span[0] + 1} of '{self.text}')"
        if self.hint:
            line += "; hint: " + self.hint
        return _printable(line)


def _printable(text: str) -> str:
    """``text`` with line breaks and other control characters shown as spaces (one char each)."""
    return "".join(ch if ch.isprintable() else " " for ch in text)


class NotationError(SymshardError, ValueError):
    """Text that does not parse as an array, collective, mesh or shape."""


class UnknownSymbolError(NotationError, LookupError):
    """A name to substitute that the result does not contain (``cost.subs({"e": 1})``)."""


class ShardingError(SymshardError, ValueError):
    """A well-formed sharding that breaks a rule, e.g. ``A[I_X, J_X]``."""


class DivisibilityError(ShardingError):
    """A dim whose size is not a multiple of the number of shards it is split into."""


class MeshError(SymshardError, ValueError):
    """A malformed mesh: a repeated axis, a size that is not a positive integer, ..."""


class UnknownAxisError(MeshError, LookupError):
    """An array or collective names a mesh axis that the mesh does not have."""


class ShapeError(SymshardError, ValueError):
    """Bad dim sizes: not positive integers, or sizes for dims the array lacks."""


class CollectiveError(SymshardError, ValueError):
    """A collective applied to an array it does not fit, e.g. AllGather_X of ``A[I_Y]``."""


class HardwareError(SymshardError, ValueError):
    """Bad hardware constants (a negative bandwidth, an unknown constant name, ...)."""


class UnknownHardwareError(HardwareError, LookupError):
    """A chip name that is not in the preset catalogue."""


class MeasurementError(HardwareError):
    """A chip's measurement file (``symshard measure``'s CSV) that cannot be read or fitted: empty, wrong
    columns, a time that is not a positive finite number, binary data, too large, too few rows."""


class UnknownDtypeError(SymshardError, LookupError):
    """A dtype name symshard does not know the size of."""


class UnknownModelError(SymshardError, LookupError):
    """A collective cost model other than ``book`` and ``ring``."""


class PlanError(SymshardError, ValueError):
    """A matmul or resharding request that no strategy can satisfy."""


class ModelError(SymshardError, ValueError):
    """A Transformer configuration that is not valid: a size that is not a positive integer, more
    KV heads than query heads, more experts per token than experts, an MFU above 1, ..."""


class UnknownPresetError(ModelError, LookupError):
    """A model name that is not in the preset catalogue (``symshard model --list``)."""


class TemplateError(SymshardError, ValueError):
    """A problem family whose spec or template is broken, or that tries to leave the sandbox."""


class BudgetError(TemplateError):
    """Work past its time or memory limit: what a problem family asked for, or a command (``--time-limit``,
    ``--memory-limit``)."""


class AnswerError(SymshardError, ValueError):
    """An answer to a generated problem that does not exist or cannot be read as its unit."""


class UsageError(SymshardError, ValueError):
    """A command line the ``symshard`` CLI cannot read (unknown option, missing argument)."""


class InputError(SymshardError, ValueError):
    """A file given to read that symshard will not read (not a regular file, too large, not UTF-8 text)
    or cannot read."""


class OutputError(SymshardError, ValueError):
    """A folder or file symshard will not write (it holds a user's files) or cannot write."""


class SiteError(SymshardError, RuntimeError):
    """A docs site that cannot be prepared, built or served (MkDocs missing, a warning, a taken port)."""


class TooLargeError(SymshardError, ValueError):
    """A question too large to answer in any sensible time or memory (too many dims, mesh axes, compute
    shardings or strategies), refused before any work starts, with the number and how to shrink it."""


class TimeLimitError(SymshardError, TimeoutError):
    """A search that ran past the time it was given (a ``deadline``); what it found so far is dropped."""


def did_you_mean(word: str, options: list[str] | tuple[str, ...]) -> Message:
    """A hint fragment naming the closest options to ``word`` (or all of them).

    Examples:
        >>> print(did_you_mean("tpu-v5", ["tpu-v5e", "tpu-v5p", "h100"]))
        did you mean 'tpu-v5e' or 'tpu-v5p'?
        >>> did_you_mean("tpu-v5", ["tpu-v5e", "tpu-v5p"]).values
        (('options', Choices(["'tpu-v5e'", "'tpu-v5p'"])),)
    """
    import difflib

    close = difflib.get_close_matches(word, list(options), n=3, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(word.lower(), [o.lower() for o in options], n=3)
        close = [o for o in options if o.lower() in close]
    if close:
        return say("did you mean {options}?", options=Choices(f"'{c}'" for c in sorted(close)))
    return say("choose one of {options}", options=", ".join(f"'{o}'" for o in sorted(options)))

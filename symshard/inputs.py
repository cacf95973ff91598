"""Reading a text file that a user names, within limits: a regular file, of bounded size, in UTF-8.

A command that reads a measurement file (``calibrate``'s nccl-tests output, a chip's measurements)
must not read whatever the path leads to: ``/dev/zero`` never ends, a named pipe blocks until
someone writes to it, a 300 MB file takes minutes to parse, and a binary file is not text.
:func:`read_text_file` is the one way such a file is read:

* only a regular file (a link to one is followed: reading is harmless); a folder, a named pipe,
  a device or a socket is refused before a byte is read (the path is looked at, then opened
  without blocking, and the opened file checked again, so a swap in between is caught);
* at most ``max_bytes`` bytes: a larger file is refused, whatever its size claims to be;
* UTF-8 text without NUL bytes: anything else is refused, naming the line it starts on.

Each refusal is an :class:`~symshard.errors.InputError` that quotes the path and says what to do.

Examples:
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d) / "run.txt"
    ...     _ = path.write_text("# size time\\n8 37.76\\n", encoding="utf-8")
    ...     read_text_file(path, what="the run", max_bytes=1024).splitlines()[1]
    '8 37.76'
    >>> try:
    ...     read_text_file("/dev/zero", what="the run", max_bytes=1024)
    ... except InputError as err:
    ...     print(err.message)
    the run '/dev/zero' is a device, not a regular file
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import InputError
from .messages import Message, say

__all__ = ["read_text_file", "shown_size"]


def shown_size(count: int) -> str:
    """A byte count as people read it, in binary units (the same in every language).

    Examples:
        >>> shown_size(4 * 2**20), shown_size(1536), shown_size(12)
        ('4 MiB', '1.5 KiB', '12 B')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.4g} {unit}"
    return f"{count} B"


def _kind(mode: int, what: Message | str, path: str) -> Message:
    """Why a file of this mode is not read."""
    if stat.S_ISDIR(mode):
        return say("{what} '{path}' is a folder, not a regular file", what=what, path=path)
    if stat.S_ISFIFO(mode):
        return say("{what} '{path}' is a named pipe, not a regular file", what=what, path=path)
    if stat.S_ISSOCK(mode):
        return say("{what} '{path}' is a socket, not a regular file", what=what, path=path)
    return say("{what} '{path}' is a device, not a regular file", what=what, path=path)


def _cannot(err: OSError, what: Message | str, path: str) -> InputError:
    if isinstance(err, FileNotFoundError):
        return InputError(
            say("{what} '{path}' does not exist", what=what, path=path), hint=say("check the path and the file name")
        )
    why = err.strerror or str(err)
    return InputError(
        say("cannot read {what} '{path}': {why}", what=what, path=path, why=why),
        hint=say("check the path and its permissions"),
    )


def read_text_file(path: Path | str, *, what: Message | str, max_bytes: int) -> str:
    """The text of the regular file at ``path``, if it is UTF-8 of at most ``max_bytes`` bytes.

    Args:
        path: the file (a link to a regular file is followed).
        what: what the file is, for the messages (``say("the nccl-tests output")``).
        max_bytes: the largest file read; a larger one is refused.

    Raises:
        InputError: the path does not exist or cannot be read, is not a regular file, holds more
            than ``max_bytes`` bytes, or is not UTF-8 text (a NUL byte or an invalid sequence,
            with its line).
    """
    shown = str(path)
    if "\x00" in shown:
        raise InputError(
            say("{what} {path} is not a valid path", what=what, path=repr(shown)),
            hint=say("give a path without NUL characters"),
        )
    limit = say(
        "give a file of at most {limit} (one run, or one measurement sweep, per file)", limit=shown_size(max_bytes)
    )
    try:
        before = os.stat(shown)  # looked at before opening: opening a device can have effects of its own
    except OSError as err:
        raise _cannot(err, what, shown) from None
    if not stat.S_ISREG(before.st_mode):
        raise InputError(_kind(before.st_mode, what, shown), hint=say("give the path of a regular file"))
    if before.st_size > max_bytes:
        raise InputError(
            say("{what} '{path}' is larger than {limit}", what=what, path=shown, limit=shown_size(max_bytes)),
            hint=limit,
        )
    try:
        fd = os.open(shown, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as err:
        raise _cannot(err, what, shown) from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise InputError(_kind(opened.st_mode, what, shown), hint=say("give the path of a regular file"))
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:  # what the file claims is not trusted: /proc files say 0, a file can grow
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as err:
        raise _cannot(err, what, shown) from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise InputError(
            say("{what} '{path}' is larger than {limit}", what=what, path=shown, limit=shown_size(max_bytes)),
            hint=limit,
        )
    data = b"".join(chunks)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(
            say("{what} '{path}' holds binary data (a NUL byte on line {line})", what=what, path=shown,
                line=data.count(b"\n", 0, nul) + 1),
            hint=say("give a text file"),
        )  # fmt: skip
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            say("{what} '{path}' is not UTF-8 text (line {line})", what=what, path=shown,
                line=data.count(b"\n", 0, err.start) + 1),
            hint=say("save it as UTF-8 text"),
        ) from None  # fmt: skip

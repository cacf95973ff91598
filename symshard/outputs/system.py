"""How an output meets the file system: flags that never follow a link, and what the system refused, in words.

Part of :mod:`symshard.outputs`: :mod:`~symshard.outputs.folder` opens every file and folder with
these flags, and both it and :mod:`~symshard.outputs.files` turn an ``OSError`` into one
:class:`~symshard.errors.OutputError` here, quoting the system's own words and the path.
"""

from __future__ import annotations

import os

from ..errors import OutputError
from ..messages import say

__all__ = ["APPEND_FLAGS", "DIR_FLAGS", "NEW_FLAGS", "READ_FLAGS", "os_error"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # refuse a link where a file or a folder is opened
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a named pipe put in the way must not block the open

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
"""Open a folder to look into, refusing a link."""

READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
"""Open a file to read, refusing a link and never blocking on a named pipe."""

NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
"""Make a new file to write, refusing one that exists and a link."""

APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC
"""Append to the stamps file (made when missing), refusing a link and never blocking on a named pipe."""


def os_error(err: OSError, doing: str, path: str | None = None) -> OutputError:
    """What the system refused (its words, ``strerror``, quoted as they are) while doing ``doing`` to ``path``
    (else the path the error names)."""
    why = err.strerror or str(err)
    shown = path if path is not None else str(err.filename) if err.filename else None
    if shown is not None:
        said = {
            "look at the folder": say("cannot look at the folder '{path}': {why}", path=shown, why=why),
            "create the folder": say("cannot create the folder '{path}': {why}", path=shown, why=why),
            "write the manifest in": say("cannot write the manifest in '{path}': {why}", path=shown, why=why),
            "look at": say("cannot look at '{path}': {why}", path=shown, why=why),
            "write": say("cannot write '{path}': {why}", path=shown, why=why),
        }
    else:
        said = {
            "look at the folder": say("cannot look at the folder: {why}", why=why),
            "create the folder": say("cannot create the folder: {why}", why=why),
            "write the manifest in": say("cannot write the manifest in: {why}", why=why),
            "look at": say("cannot look at: {why}", why=why),
            "write": say("cannot write: {why}", why=why),
        }
    return OutputError(said[doing], hint=say("check the path, its permissions and the free disk space"))

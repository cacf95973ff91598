"""The books of a folder symshard writes: their names, the names a file in it may take, and the stamps.

Part of :mod:`symshard.outputs`, below :mod:`~symshard.outputs.folder`, which keeps these books: the
manifest's and the stamps file's names, the temporaries' names, the check that a name stays inside
the folder and is no bookkeeping name, and :class:`Stamp`, a file as symshard left it, with the
reading of one from a journal line (a claim the file on disk must bear out).

Examples:
    >>> relative_name("notes/a.txt")
    'notes/a.txt'
    >>> relative_name("../a.txt")
    Traceback (most recent call last):
      ...
    symshard.errors.OutputError: '../a.txt' is not a file name inside the output folder
    hint: this is a bug; report it
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..errors import OutputError
from ..messages import say

__all__ = [
    "BOOKKEEPING",
    "MANIFEST",
    "MAX_BOOKKEEPING_BYTES",
    "STAMPS",
    "TEMP_NAME",
    "TEMP_PREFIX",
    "Stamp",
    "relative_name",
    "stamp_of",
]

MANIFEST = ".symshard-manifest.json"
"""The manifest's file name, at the top of every folder symshard writes."""

STAMPS = ".symshard-stamps.jsonl"
"""The stamps file's name (this machine's proof of what symshard wrote, and a run's journal), beside the manifest."""

BOOKKEEPING = (MANIFEST, STAMPS)
"""The bookkeeping files' names, which no output may take."""

TEMP_PREFIX = ".symshard-tmp-"
"""How a temporary file's name starts (16 hex digits follow)."""

TEMP_NAME = re.compile(r"\.symshard-tmp-[0-9a-f]{16}")
"""The names of symshard's temporary files (a name no output may take)."""

MAX_BOOKKEEPING_BYTES = 64 * 2**20
"""The most of the manifest or the stamps file read (tens of thousands of files take a few MiB)."""


def relative_name(name: str) -> str:
    """A file name inside the folder, in POSIX form; anything that could leave it, or take a bookkeeping
    name, is refused."""
    rel = PurePosixPath(name.replace("\\", "/"))
    if (
        rel.is_absolute()
        or not rel.parts
        or any(p in ("..", "") or TEMP_NAME.fullmatch(p) for p in rel.parts)
        or ":" in rel.parts[0]
        or "\x00" in name
        or rel.as_posix() in BOOKKEEPING
    ):
        raise OutputError(
            say("'{name}' is not a file name inside the output folder", name=name), hint=say("this is a bug; report it")
        )
    return rel.as_posix()


@dataclass(frozen=True, slots=True)
class Stamp:
    """A file as symshard left it: its digest, and the inode, modification time and size it had."""

    sha256: str
    ino: int
    mtime_ns: int
    size: int

    def matches(self, info: os.stat_result) -> bool:
        """Whether ``info`` (an ``lstat``) is of this very file, unchanged."""
        return (
            stat.S_ISREG(info.st_mode)
            and (info.st_ino, info.st_mtime_ns, info.st_size) == (self.ino, self.mtime_ns, self.size)
        )  # fmt: skip

    def line(self, name: str) -> dict[str, object]:
        """The journal's record of this stamp for the file ``name``."""
        return {"name": name, "sha256": self.sha256, "ino": self.ino, "mtime_ns": self.mtime_ns, "size": self.size}


_SHA256 = re.compile(r"[0-9a-f]{64}")


def stamp_of(record: dict) -> Stamp | None:
    """The stamp a journal line records, if it is well formed (a line anyone could have written: it is only
    a claim, which the file on disk must bear out)."""
    values = [record.get(k) for k in ("ino", "mtime_ns", "size")]
    digest = record.get("sha256")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64 for v in values):
        return None
    return Stamp(digest, *values)  # type: ignore[arg-type]

"""Writing a folder of outputs without ever deleting or changing a file symshard did not write there.

Every command that writes a folder (``site build``, ``site prepare``, ``problems generate``) writes
through an :class:`OutputFolder`. Two files at the top of the folder keep its books:

* ``.symshard-manifest.json`` lists the files symshard wrote there, each with its SHA-256. It holds
  no date and nothing of the machine, so the same outputs give the same bytes on any day and
  anywhere: it is what a person or a tool reads to know what the folder holds.
* ``.symshard-stamps.jsonl`` is this machine's record of each file as symshard left it: its SHA-256
  and the inode, modification time (in nanoseconds) and size the file system gave it. It differs
  from run to run, and is also the journal of a run in progress (below).

**What the manifest proves: nothing about who wrote a file.** Anyone can write a manifest, and a
digest in it proves only that a file's bytes are the ones listed, which anyone who has seen the
file can compute. A manifest that came with a folder someone sent, one crafted to list a user's own
notes with their digest, or one naming ``link/notes.txt`` where ``link`` leads outside, must not
make symshard delete or overwrite anything. So symshard takes a file as its own only when the
stamps prove it: the file at that name is the very inode symshard renamed into place, with the
modification time and size it had then, and its bytes still have the digest recorded. Copying,
extracting, checking out or editing a file gives it another inode or time, and nobody can give a
file of the user's the stamp of one symshard wrote, so a stamps file from elsewhere proves nothing
either. When in doubt symshard keeps the file and reports it: a stale file left behind is better
than a user's file deleted.

The rules:

* A folder holding any file symshard cannot prove it wrote there (a user's file, a link, a file of
  symshard's edited since, a file of a copied folder) is refused, unless forced.
* Forced, symshard writes beside such files and never overwrites or deletes one.
* Files symshard proves it wrote and does not write again are deleted; stale files it cannot prove
  are kept and reported (:attr:`Written.kept`).
* Nothing outside the folder is written or removed, and no link is followed, in writing or in
  removing: every folder on the way to a file is opened relative to the one above it, refusing a
  link (``O_NOFOLLOW``), so neither a link in the folder nor one swapped in while symshard works
  leads it outside. A name that climbs out of the folder, or is a bookkeeping name, is refused; a
  path that is a file, a device or a link is not a folder.

**Interrupted runs.** Each file is written to a temporary file beside it (``.symshard-tmp-`` and 16
hex digits), then renamed into place. The stamps file is appended to as a journal, one line at a
time: the temporary's name before it is made, the file's stamp before the rename. The manifest and
a compact stamps file are written last. A run killed at any point thus leaves every file it renamed
proven by its stamp and every temporary named in the journal: the next run, without ``--force``,
takes the files as its own, removes the temporaries, and leaves a consistent folder.

A command that writes one file (``calibrate``) signs it instead: :func:`write_signed_file`; one whose
format has no room for a signature (``measure``'s CSV, read by other tools) writes only a new file:
:func:`write_new_file`.

This package sits in the foundation layer (every layer may write through it). Its modules, from the
bottom: :mod:`~symshard.outputs.bookkeeping` (the books' names, the names a file may take, the
stamps), :mod:`~symshard.outputs.system` (opening without following a link, and the system's
refusals in words), :mod:`~symshard.outputs.folder` (:class:`OutputFolder`, :class:`Written`) and
:mod:`~symshard.outputs.files` (one file, signed or new).

Examples:
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = OutputFolder.open(pathlib.Path(d) / "set", "example")
    ...     _ = out.write("notes/a.txt", "hello")
    ...     sorted(p.name for p in out.finish().written)
    ['a.txt']
"""

from __future__ import annotations

from .bookkeeping import MANIFEST, STAMPS
from .files import write_new_file, write_signed_file
from .folder import OutputFolder, Written

__all__ = ["MANIFEST", "STAMPS", "OutputFolder", "Written", "write_new_file", "write_signed_file"]

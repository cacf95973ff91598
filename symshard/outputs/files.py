"""Writing one file: signed where its format has room for a comment, else only where none exists yet.

Part of :mod:`symshard.outputs`, beside :mod:`~symshard.outputs.folder` (a folder of outputs kept
with a manifest): a command that writes one file (``calibrate``) signs it, so that a later run tells
its own untouched file from an edited one or someone else's; one whose format has no room for a
signature (``measure``'s CSV, read by other tools) writes only a new file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path

from ..errors import OutputError
from ..messages import say
from .system import os_error

__all__ = ["write_new_file", "write_signed_file"]

_SIGNATURE = re.compile(r"(?:# |<!-- )written by (symshard[^;\n]*); sha256 ([0-9a-f]{64})(?: -->)?\n")


def write_signed_file(path: Path | str, text: str, tool: str, *, force: bool = False, xml: bool = False) -> Path:
    """Write one text file (with ``#`` comments: TOML, YAML; or, with ``xml``, an SVG or XML document
    without a declaration, signed in an ``<!-- -->`` comment) whose first line signs it as symshard's.

    The first line, ``# written by <tool>; sha256 <digest of the rest>``, lets a later run tell
    its own untouched file (overwritten freely) from a file someone edited (overwritten only with
    ``force``) and from a file symshard did not write (never overwritten).

    Raises:
        OutputError: the path holds a file symshard did not write, an edited one (without
            ``force``), something other than a file, or cannot be written.

    Examples:
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = write_signed_file(pathlib.Path(d) / "my.toml", "x = 1\\n", "symshard calibrate")
        ...     p.read_text().splitlines()[0].startswith("# written by symshard calibrate; sha256 ")
        True
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except (OSError, ValueError) as err:
        raise OutputError(
            say("cannot look at '{path}': {why}", path=str(path), why=str(err)),
            hint=say("give a file path you can write"),
        ) from None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise OutputError(
                say("'{path}' is not a regular file", path=str(path)), hint=say("give the path of a new file")
            )
        try:
            old = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            old = ""
        signed = _SIGNATURE.match(old)
        if signed is None:
            raise OutputError(
                say("'{path}' exists and was not written by symshard", path=str(path)),
                hint=say("move it away, or give another file name"),
            )
        body = old[signed.end() :]
        if hashlib.sha256(body.encode("utf-8")).hexdigest() != signed.group(2) and not force:
            raise OutputError(
                say("'{path}' was changed since symshard wrote it", path=str(path)),
                hint=say("pass --force to replace it, or give another name"),
            )
    signature = f"written by {tool}; sha256 {hashlib.sha256(text.encode('utf-8')).hexdigest()}"
    content = f"<!-- {signature} -->\n{text}" if xml else f"# {signature}\n{text}"
    _atomic_write(path, content.encode("utf-8"))
    return path


def write_new_file(path: Path | str, text: str) -> Path:
    """Write a text file that must not exist yet (for formats that cannot carry a signature, such as
    ``symshard measure``'s CSV: symshard cannot tell its own file there from anyone else's, so it never
    replaces one). Atomic: written beside, then linked into place only if the name is still free.

    Raises:
        OutputError: the path exists (whoever wrote it), or cannot be written.

    Examples:
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = write_new_file(pathlib.Path(d) / "m.csv", "op\\n")
        ...     write_new_file(p, "op\\n")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
          ...
        symshard.errors.OutputError: '...m.csv' exists: symshard writes measurements only to a new file
        hint: give another name, or move the old file away
    """
    path = Path(path)
    exists = OutputError(
        say("'{path}' exists: symshard writes measurements only to a new file", path=str(path)),
        hint=say("give another name, or move the old file away"),
    )
    try:
        taken = os.path.lexists(path)
    except ValueError:  # a NUL character
        raise OutputError(
            say("{path} is not a valid path", path=repr(str(path))), hint=say("give a file path")
        ) from None
    if taken:
        raise exists
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".symshard-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(text.encode("utf-8"))
            os.chmod(tmp, 0o644)
            try:
                os.link(tmp, path)  # fails if the name was taken meanwhile: never replaces a file
            except FileExistsError:
                raise exists from None
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as err:
        raise os_error(err, "write") from None
    return path


def _atomic_write(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` through a temporary file renamed into place (readable by all), so a
    reader never sees half a file and a failure leaves no temporary behind.

    Raises:
        OutputError: the folder or the file cannot be written.
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".symshard-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(content)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as err:
        raise os_error(err, "write") from None

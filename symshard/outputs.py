"""Writing a folder of outputs without ever deleting or changing a file symshard did not write.

Every command that writes files (``site build``, ``site prepare``, ``problems
generate``) writes through an :class:`OutputFolder`. The folder keeps a manifest,
``.symshard-manifest.json``, naming each file symshard wrote there and its SHA-256.
The rules:

* A folder holding anything symshard did not write (or a file of symshard's that
  someone edited since) is refused, unless forced.
* Forced, symshard writes beside such files and overwrites its own (edited or not),
  but never overwrites a file it did not write: that is still an error.
* Files symshard wrote last time and does not write again are deleted, unless
  someone edited them since (those are left, and reported).
* A path that is a file, a device or a link is not a folder; a name that climbs out
  of the folder is refused.

A command that writes one file (``calibrate``) signs it instead: :func:`write_signed_file`; one whose
format has no room for a signature (``measure``'s CSV, read by other tools) writes only a new file:
:func:`write_new_file`.

Writes are atomic (a temporary file renamed into place), and the manifest holds no
date, so the same outputs give the same bytes on any day.

Examples:
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = OutputFolder.open(pathlib.Path(d) / "set", "example")
    ...     _ = out.write("notes/a.txt", "hello")
    ...     sorted(p.name for p in out.finish().written)
    ['a.txt']
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .errors import OutputError
from .messages import Message, say

__all__ = ["MANIFEST", "OutputFolder", "Written", "write_new_file", "write_signed_file"]

MANIFEST = ".symshard-manifest.json"
"""The manifest's file name, at the top of every folder symshard writes."""

_LEGACY_MARKERS = (".symshard-site",)
"""Markers older versions left instead of a manifest: such a folder was symshard's, its files unlisted."""


def _digest(path: Path) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def _relative(name: str) -> str:
    """A file name inside the folder, in POSIX form; anything that could leave it is refused."""
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.is_absolute() or not rel.parts or any(p in ("..", "") for p in rel.parts) or ":" in rel.parts[0]:
        raise OutputError(
            say("'{name}' is not a file name inside the output folder", name=name), hint=say("this is a bug; report it")
        )
    return rel.as_posix()


def _os_error(err: OSError, doing: str) -> OutputError:
    """What the system refused (its words, ``strerror``, quoted as they are) while doing ``doing`` to a path."""
    why = err.strerror or str(err)
    if err.filename:
        path = str(err.filename)
        said = {
            "look at the folder": say("cannot look at the folder '{path}': {why}", path=path, why=why),
            "create the folder": say("cannot create the folder '{path}': {why}", path=path, why=why),
            "write the manifest in": say("cannot write the manifest in '{path}': {why}", path=path, why=why),
            "look at": say("cannot look at '{path}': {why}", path=path, why=why),
            "write": say("cannot write '{path}': {why}", path=path, why=why),
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


@dataclass(frozen=True, slots=True)
class Written:
    """What :meth:`OutputFolder.finish` did: the files written, the stale ones removed and those kept."""

    root: Path
    written: tuple[Path, ...]
    removed: tuple[Path, ...]
    kept: tuple[Path, ...]
    """Files symshard wrote before and does not write now, left because someone edited them."""


@dataclass(slots=True)
class OutputFolder:
    """A folder symshard writes into, keeping the manifest of what it wrote (see the module)."""

    root: Path
    tool: str
    force: bool
    previous: dict[str, str]
    legacy: bool = False
    written: dict[str, str] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path | str, tool: str, *, force: bool = False, create: bool = True) -> OutputFolder:
        """Check ``root`` and make it if needed; nothing is written yet.

        Args:
            root: the folder.
            tool: the command writing it (recorded in the manifest).
            force: write beside files symshard did not write, and over its own files edited since.
            create: make the folder if it does not exist (False: only check, before slow work).

        Raises:
            OutputError: ``root`` is not a folder, cannot be made, or holds files symshard did not
                write (or edited ones) and ``force`` is false.
        """
        root = Path(root)
        try:
            info = os.lstat(root)
        except FileNotFoundError:
            info = None
        except OSError as err:
            raise _os_error(err, "look at the folder") from None
        except ValueError:  # a NUL character
            raise OutputError(
                say("{path} is not a valid path", path=repr(str(root))),
                hint=say("give a folder path without NUL characters"),
            ) from None
        if info is not None and not stat.S_ISDIR(info.st_mode):
            if stat.S_ISLNK(info.st_mode):
                message = say("'{path}' is a link, not a folder", path=str(root))
            elif stat.S_ISREG(info.st_mode):
                message = say("'{path}' is a file, not a folder", path=str(root))
            else:
                message = say("'{path}' is a device, not a folder", path=str(root))
            raise OutputError(message, hint=say("give a folder to write into (new or empty)"))
        if info is None:
            if not create:
                cls._probe(root)
                return cls(root, tool, force, {})
            try:
                root.mkdir(parents=True)
            except OSError as err:
                raise _os_error(err, "create the folder") from None
            return cls(root, tool, force, {})
        previous, legacy = cls._read_manifest(root)
        if not force:
            cls._refuse_foreign(root, previous, legacy)
        return cls(root, tool, force, previous, legacy)

    @staticmethod
    def _probe(root: Path) -> None:
        """Check that ``root`` can be made, by making it and its missing parents and removing them again."""
        missing = [root, *(p for p in root.parents if not p.exists())]
        try:
            root.mkdir(parents=True)
        except OSError as err:
            raise _os_error(err, "create the folder") from None
        for folder in missing:
            try:
                folder.rmdir()
            except OSError:
                break

    @classmethod
    def _refuse_foreign(cls, root: Path, previous: dict[str, str], legacy: bool) -> None:
        """Raise at the first file symshard did not write, or edited since (sorted walk: the same one each time)."""
        for path in cls._files(root):
            rel = path.relative_to(root).as_posix()
            if rel == MANIFEST or rel in _LEGACY_MARKERS:
                continue
            if legacy:
                message = say(
                    "'{path}' was written by an older symshard, which kept no list of its files", path=str(root)
                )
            elif rel not in previous:
                message = say("'{path}' holds files symshard did not write, e.g. '{file}'", path=str(root), file=rel)
            elif _digest(path) != previous[rel]:
                message = say("'{path}' was changed since symshard wrote it", path=f"{root}/{rel}")
            else:
                continue
            raise OutputError(
                message,
                hint=say(
                    "pick a new or empty folder, or pass --force to write anyway (symshard never deletes or "
                    "overwrites a file it did not write)"
                ),
            )

    @staticmethod
    def _read_manifest(root: Path) -> tuple[dict[str, str], bool]:
        path = root / MANIFEST
        if not path.exists():
            return {}, any((root / m).exists() for m in _LEGACY_MARKERS)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            files = data["files"]
            if not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in files.items()
            ):
                raise ValueError(say("files is not a mapping of names to digests"))
            return {_relative(k): v for k, v in files.items()}, False
        except (OSError, ValueError, KeyError, TypeError, OutputError) as err:
            said = err.args[0] if len(err.args) == 1 and isinstance(err.args[0], Message) else None
            why = err.message if isinstance(err, OutputError) else said if said is not None else str(err)
            raise OutputError(
                say("the manifest '{path}' cannot be read ({why})", path=str(path), why=why),
                hint=say("pick another folder, or delete the manifest to treat every file there as not symshard's"),
            ) from None

    @staticmethod
    def _files(root: Path) -> Iterable[Path]:
        """Every file and link under ``root``, walked in sorted order (links to folders are not entered)."""
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            base = Path(dirpath)
            yield from (base / f for f in sorted(filenames))
            yield from (base / d for d in dirnames if (base / d).is_symlink())

    def check(self, name: str) -> Path:
        """The path ``name`` will be written to, refusing what must not be overwritten (nothing is written).

        Raises:
            OutputError: the path holds a file symshard did not write, a folder or a link.
        """
        rel = _relative(name)
        path = self.root / rel
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        except OSError as err:
            raise _os_error(err, "look at") from None
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                raise OutputError(
                    say("'{path}' exists and is not a regular file", path=str(path)),
                    hint=say("move it away, then write again"),
                )
            if rel not in self.previous and not self.legacy and rel not in self.written:
                raise OutputError(
                    say("'{path}' exists and was not written by symshard", path=str(path)),
                    hint=say("move it away, or pick another folder"),
                )
        for parent in reversed(PurePosixPath(rel).parents[:-1]):
            folder = self.root / parent
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                raise OutputError(
                    say("'{folder}' is in the way of '{path}'", folder=str(folder), path=str(path)),
                    hint=say("move it away, then write again"),
                )
        return path

    def write(self, name: str, data: str | bytes) -> Path:
        """Write one file (text as UTF-8) and record it.

        Raises:
            OutputError: the path holds a file symshard did not write, or cannot be written.
        """
        path = self.check(name)
        content = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise _os_error(err, "write") from None
        _atomic_write(path, content)
        self.written[_relative(name)] = hashlib.sha256(content).hexdigest()
        return path

    def write_all(self, files: dict[str, str | bytes]) -> None:
        """Write several files, checking every one before writing any (so a refusal leaves no half-written set).

        Raises:
            OutputError: one of the paths must not be written, or a write fails.
        """
        for name in files:
            self.check(name)
        for name, data in files.items():
            self.write(name, data)

    def write_tree(self, source: Path, prefix: str = "") -> None:
        """Copy every regular file under ``source`` into the folder (under ``prefix``), all checked first."""
        found: list[tuple[str, Path]] = []
        for dirpath, dirnames, filenames in os.walk(source):
            dirnames.sort()
            for f in sorted(filenames):
                path = Path(dirpath) / f
                if path.is_file() and not path.is_symlink():
                    found.append((f"{prefix}{path.relative_to(source).as_posix()}", path))
        for name, _ in found:
            self.check(name)
        for name, path in found:
            self.write(name, path.read_bytes())

    def finish(self) -> Written:
        """Remove the stale files of the last run (unless edited), write the manifest, and report.

        Raises:
            OutputError: the manifest cannot be written.
        """
        removed, kept = [], []
        for rel, digest in sorted(self.previous.items()):
            if rel in self.written:
                continue
            path = self.root / rel
            if not path.is_file() or path.is_symlink():
                continue
            if _digest(path) == digest:
                try:
                    path.unlink()
                    removed.append(path)
                    self._prune(path.parent)
                except OSError:
                    kept.append(path)
            else:
                kept.append(path)
        for marker in _LEGACY_MARKERS:
            (self.root / marker).unlink(missing_ok=True)
        manifest = {"written_by": self.tool, "files": dict(sorted(self.written.items()))}
        text = json.dumps(manifest, indent=1, sort_keys=False) + "\n"
        rel_manifest = MANIFEST
        self.written.pop(rel_manifest, None)
        try:
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".symshard-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.root / rel_manifest)
        except OSError as err:
            raise _os_error(err, "write the manifest in") from None
        return Written(self.root, tuple(self.root / rel for rel in sorted(self.written)), tuple(removed), tuple(kept))

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty by removing stale files, up to the output folder itself."""
        while folder != self.root and self.root in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent


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
        raise _os_error(err, "write") from None
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
        raise _os_error(err, "write") from None

"""A folder of outputs: :class:`OutputFolder` writes into it and keeps its books, never touching a file
symshard cannot prove it wrote there.

Part of :mod:`symshard.outputs` (whose docstring states the rules this class keeps), above
:mod:`~symshard.outputs.bookkeeping` (the books' names and the stamps) and
:mod:`~symshard.outputs.system` (opening without following a link). :meth:`OutputFolder.finish`
reports what it did as :class:`Written`.

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
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OutputError
from ..messages import say
from .bookkeeping import (
    BOOKKEEPING,
    MANIFEST,
    MAX_BOOKKEEPING_BYTES,
    STAMPS,
    TEMP_NAME,
    TEMP_PREFIX,
    Stamp,
    relative_name,
    stamp_of,
)
from .system import APPEND_FLAGS, DIR_FLAGS, NEW_FLAGS, READ_FLAGS, os_error

__all__ = ["MAX_DEPTH", "OutputFolder", "Written"]

MAX_DEPTH = 48
"""Folders nested deeper inside an output folder are not looked into (nothing symshard writes is)."""


def _in_the_way(folder: str, path: str) -> OutputError:
    return OutputError(
        say("'{folder}' is in the way of '{path}'", folder=folder, path=path),
        hint=say("move it away, then write again"),
    )


@dataclass(frozen=True, slots=True)
class Written:
    """What :meth:`OutputFolder.finish` did: the files written, the stale ones removed and those kept.

    Iterating over it gives the files written.
    """

    root: Path
    written: tuple[Path, ...]
    removed: tuple[Path, ...]
    kept: tuple[Path, ...]
    """Stale files (of an earlier run, not written now) left in place: edited since, or not provably
    symshard's (a copied folder, a crafted manifest). Reported, never deleted."""

    def __iter__(self) -> Iterator[Path]:
        return iter(self.written)

    def __len__(self) -> int:
        return len(self.written)


@dataclass(slots=True)
class OutputFolder:
    """A folder symshard writes into, keeping the manifest and the stamps of what it wrote (see the module).

    Attributes:
        root: the folder.
        tool: the command writing it (recorded in the manifest).
        force: write beside files symshard did not write.
        previous: the files symshard proves it wrote there before, by name, with their stamps.
        listed: what the manifest found there lists (names and digests): a claim, never a proof.
        temps: the temporary files of an interrupted run (named in its journal), removed at the end.
        written: the files written by this run, by name, with their stamps.
    """

    root: Path
    tool: str
    force: bool
    previous: dict[str, Stamp] = field(default_factory=dict)
    listed: dict[str, str] = field(default_factory=dict)
    temps: tuple[str, ...] = ()
    written: dict[str, Stamp] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path | str, tool: str, *, force: bool = False, create: bool = True) -> OutputFolder:
        """Check ``root`` and make it if needed; nothing is written yet.

        Args:
            root: the folder.
            tool: the command writing it (recorded in the manifest).
            force: write beside files symshard did not write (it still never overwrites or deletes one).
            create: make the folder if it does not exist (False: only check, before slow work).

        Raises:
            OutputError: ``root`` is not a folder, cannot be made, or holds files symshard cannot prove it
                wrote there and ``force`` is false.
        """
        root = Path(root)
        try:
            info = os.lstat(root)
        except FileNotFoundError:
            info = None
        except OSError as err:
            raise os_error(err, "look at the folder") from None
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
                return cls(root, tool, force)
            try:
                root.mkdir(parents=True)
            except OSError as err:
                raise os_error(err, "create the folder") from None
            return cls(root, tool, force)
        folder = cls(root, tool, force)
        folder._survey()
        return folder

    @staticmethod
    def _probe(root: Path) -> None:
        """Check that ``root`` can be made, by making it and its missing parents and removing them again."""
        missing = [root, *(p for p in root.parents if not p.exists())]
        try:
            root.mkdir(parents=True)
        except OSError as err:
            raise os_error(err, "create the folder") from None
        for folder in missing:
            try:
                folder.rmdir()
            except OSError:
                break

    # -- looking, without following a link --------------------------------------------------------------

    def _open_root(self) -> int:
        try:
            return os.open(self.root, DIR_FLAGS)
        except OSError as err:
            raise os_error(err, "look at the folder", str(self.root)) from None

    def _open_parent(self, rel: str, *, create: bool) -> int | None:
        """A descriptor of the folder that holds ``rel``, each folder on the way opened inside the one above
        without following a link (made when missing, with ``create``; else None when one is missing).

        Raises:
            OutputError: a link, a file or something else is where a folder should be.
        """
        fd = self._open_root()
        try:
            done = ""
            for part in rel.split("/")[:-1]:
                done += part
                try:
                    sub = os.open(part, DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        os.close(fd)
                        return None
                    try:
                        os.mkdir(part, 0o777, dir_fd=fd)
                        sub = os.open(part, DIR_FLAGS, dir_fd=fd)
                    except OSError as err:
                        raise os_error(err, "write", str(self.root / done)) from None
                except OSError:  # a link (ELOOP), a file (ENOTDIR) or something unreadable
                    raise _in_the_way(str(self.root / done), str(self.root / rel)) from None
                os.close(fd)
                fd = sub
                done += "/"
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _lstat(self, rel: str) -> os.stat_result | None:
        """What is at ``rel`` (a link itself, not what it leads to); None when nothing is, or a folder on the
        way is missing."""
        fd = self._open_parent(rel, create=False)
        if fd is None:
            return None
        try:
            return os.stat(rel.rsplit("/", 1)[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise os_error(err, "look at", str(self.root / rel)) from None
        finally:
            os.close(fd)

    def _digest(self, rel: str, stamp: Stamp | None = None) -> str | None:
        """The SHA-256 of the regular file at ``rel`` (None if it is not one, or cannot be read); with
        ``stamp``, None unless the file opened is that very file."""
        try:
            fd = self._open_parent(rel, create=False)
        except OutputError:
            return None
        if fd is None:
            return None
        try:
            file = os.open(rel.rsplit("/", 1)[-1], READ_FLAGS, dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            info = os.fstat(file)
            if not stat.S_ISREG(info.st_mode) or (stamp is not None and not stamp.matches(info)):
                return None
            h = hashlib.sha256()
            while chunk := os.read(file, 1 << 20):
                h.update(chunk)
            return h.hexdigest()
        except OSError:
            return None
        finally:
            os.close(file)

    def _tree(self) -> list[tuple[str, os.stat_result | None]]:
        """Every entry under the folder that is not a folder (files, links, devices), with its ``lstat``,
        sorted by name; links to folders are not entered, and a folder that cannot be entered (too deep,
        unreadable) is listed with None."""

        def scan(fd: int, prefix: str) -> list[str]:
            with os.scandir(fd) as entries:
                found = sorted(entries, key=lambda e: e.name)
            folders = []
            for entry in found:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    try:
                        items.append((prefix + entry.name, entry.stat(follow_symlinks=False)))
                    except OSError:
                        items.append((prefix + entry.name, None))
            return folders

        items: list[tuple[str, os.stat_result | None]] = []
        root = self._open_root()
        stack: list[tuple[int, str, Iterator[str]]] = []
        try:
            stack.append((root, "", iter(scan(root, ""))))
            while stack:
                fd, prefix, pending = stack[-1]
                name = next(pending, None)
                if name is None:
                    stack.pop()
                    os.close(fd)
                    continue
                if len(stack) > MAX_DEPTH:
                    items.append((prefix + name, None))
                    continue
                try:
                    sub = os.open(name, DIR_FLAGS, dir_fd=fd)
                except OSError:
                    items.append((prefix + name, None))
                    continue
                stack.append((sub, f"{prefix}{name}/", iter(())))  # on the stack first: closed if the scan fails
                stack[-1] = (sub, f"{prefix}{name}/", iter(scan(sub, f"{prefix}{name}/")))
        except OSError as err:
            raise os_error(err, "look at the folder", str(self.root)) from None
        finally:
            for fd, _, _ in stack:
                os.close(fd)
        return sorted(items, key=lambda item: item[0])

    # -- what the folder holds --------------------------------------------------------------------------

    def _read_bookkeeping(self, name: str) -> str:
        """The text of a bookkeeping file ("" when it is missing, not a regular file, too large or not text:
        it proves nothing, so a broken one is only ignored)."""
        fd = self._open_root()
        try:
            file = os.open(name, READ_FLAGS, dir_fd=fd)
        except OSError:
            return ""
        finally:
            os.close(fd)
        try:
            if not stat.S_ISREG(os.fstat(file).st_mode):
                return ""
            data = b""
            while len(data) <= MAX_BOOKKEEPING_BYTES and (chunk := os.read(file, 1 << 20)):
                data += chunk
            return "" if len(data) > MAX_BOOKKEEPING_BYTES else data.decode("utf-8", errors="replace")
        except OSError:
            return ""
        finally:
            os.close(file)

    def _survey(self) -> None:
        """Read the manifest and the stamps, find what symshard proves it wrote, and refuse (unless forced)
        a folder holding anything else."""
        try:
            files = json.loads(self._read_bookkeeping(MANIFEST) or "{}").get("files", {})
        except (ValueError, AttributeError, RecursionError):
            files = {}
        if isinstance(files, dict):
            self.listed = {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}
        claims: dict[str, list[Stamp]] = {}
        journaled: set[str] = set()
        for line in self._read_bookkeeping(STAMPS).split("\n"):
            try:
                record = json.loads(line) if line.strip() else None
            except (ValueError, RecursionError):
                continue  # a line cut short by a kill, or not ours
            if not isinstance(record, dict):
                continue
            if isinstance(record.get("temp"), str):
                journaled.add(record["temp"])
            elif isinstance(record.get("name"), str) and (stamp := stamp_of(record)) is not None:
                claims.setdefault(record["name"], []).append(stamp)
        for name in BOOKKEEPING:  # symshard's to replace, when it is a regular file
            info = self._lstat(name)
            if info is not None and not stat.S_ISREG(info.st_mode):
                raise OutputError(
                    say("'{path}' exists and is not a regular file", path=str(self.root / name)),
                    hint=say("move it away, then write again"),
                )
        temps = []
        foreign: list[str] = []
        for rel, info in self._tree():
            if rel in BOOKKEEPING:
                continue
            proven = None
            if info is not None:
                for stamp in claims.get(rel, ()):
                    if stamp.matches(info) and self._digest(rel, stamp) == stamp.sha256:
                        proven = stamp
                        break
            if proven is not None:
                self.previous[rel] = proven
            elif (
                info is not None and stat.S_ISREG(info.st_mode) and rel in journaled
                and TEMP_NAME.fullmatch(rel.rsplit("/", 1)[-1])
            ):  # fmt: skip
                temps.append(rel)
            else:
                foreign.append(rel)
        self.temps = tuple(temps)
        if foreign and not self.force:
            raise self._foreign(foreign[0])

    def _foreign(self, rel: str) -> OutputError:
        """The refusal of a folder holding ``rel``, a file symshard cannot prove it wrote there."""
        if rel not in self.listed:
            message = say("'{path}' holds files symshard did not write, e.g. '{file}'", path=str(self.root), file=rel)
        elif self._digest(rel) != self.listed[rel]:
            message = say("'{path}' was changed since symshard wrote it", path=str(self.root / rel))
        else:
            message = say(
                "'{path}' is in the manifest, but symshard cannot tell that it wrote it here (a copied or restored "
                "folder, or a manifest from elsewhere)",
                path=str(self.root / rel),
            )
        if self.force:  # forced, it is in the way of a file to write
            return OutputError(message, hint=say("move it away, or pick another folder"))
        return OutputError(
            message,
            hint=say(
                "pick a new or empty folder, or pass --force to write anyway (symshard never deletes or "
                "overwrites a file it did not write)"
            ),
        )

    def _ours(self, rel: str, info: os.stat_result) -> bool:
        """Whether ``info`` is of the file symshard wrote at ``rel`` (in this run, or proven from an earlier one)."""
        stamp = self.written.get(rel) or self.previous.get(rel)
        return stamp is not None and stamp.matches(info)

    # -- writing ---------------------------------------------------------------------------------------

    def check(self, name: str) -> Path:
        """The path ``name`` will be written to, refusing what must not be overwritten (nothing is written).

        Raises:
            OutputError: the path holds a file symshard cannot prove it wrote there, a folder or a link, or a
                link or a file is where a folder on the way should be.
        """
        rel = relative_name(name)
        path = self.root / rel
        info = self._lstat(rel)
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                raise OutputError(
                    say("'{path}' exists and is not a regular file", path=str(path)),
                    hint=say("move it away, then write again"),
                )
            if not self._ours(rel, info):
                if rel in self.listed:
                    raise self._foreign(rel)
                raise OutputError(
                    say("'{path}' exists and was not written by symshard", path=str(path)),
                    hint=say("move it away, or pick another folder"),
                )
        return path

    def _journal(self, record: dict[str, object]) -> None:
        """Add one line to the stamps file, the journal of this run (a line on its own, whatever a kill
        left unfinished before it)."""
        line = ("\n" + json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
        fd = self._open_root()
        try:
            file = os.open(STAMPS, APPEND_FLAGS, 0o644, dir_fd=fd)
        except OSError as err:
            raise os_error(err, "write the manifest in", str(self.root)) from None
        finally:
            os.close(fd)
        try:
            if not stat.S_ISREG(os.fstat(file).st_mode):
                raise OutputError(
                    say("'{path}' exists and is not a regular file", path=str(self.root / STAMPS)),
                    hint=say("move it away, then write again"),
                )
            os.write(file, line)
        except OSError as err:
            raise os_error(err, "write the manifest in", str(self.root)) from None
        finally:
            os.close(file)

    def _put(self, rel: str, content: bytes, *, record: bool) -> Stamp:
        """Write ``content`` at ``rel`` through a temporary file renamed into place; with ``record``, the
        file's stamp goes into the journal before the rename."""
        fd = self._open_parent(rel, create=True)
        assert fd is not None  # made when missing
        folder, _, base = rel.rpartition("/")
        prefix = f"{folder}/" if folder else ""
        temp = ""
        try:
            file = None
            while file is None:  # 16 random hex digits: a name taken already is all but impossible
                temp = TEMP_PREFIX + secrets.token_hex(8)
                self._journal({"temp": prefix + temp})
                try:
                    file = os.open(temp, NEW_FLAGS, 0o644, dir_fd=fd)
                except FileExistsError:
                    temp = ""
            try:
                view = memoryview(content)
                while view:
                    view = view[os.write(file, view) :]
                os.fchmod(file, 0o644)
                info = os.fstat(file)
            finally:
                os.close(file)
            stamp = Stamp(hashlib.sha256(content).hexdigest(), info.st_ino, info.st_mtime_ns, info.st_size)
            if record:
                self._journal(stamp.line(rel))
                try:  # looked at again just before the rename: what is there now must still be symshard's
                    there = os.stat(base, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    there = None
                if there is not None and not self._ours(rel, there):
                    raise OutputError(
                        say("'{path}' exists and was not written by symshard", path=str(self.root / rel)),
                        hint=say("move it away, or pick another folder"),
                    )
            os.replace(temp, base, src_dir_fd=fd, dst_dir_fd=fd)
            temp = ""
            return stamp
        except OSError as err:
            raise os_error(err, "write", str(self.root / rel)) from None
        finally:
            if temp:  # not renamed into place: removed (the journal names it, should this fail too)
                try:
                    os.unlink(temp, dir_fd=fd)
                except OSError:
                    pass
            os.close(fd)

    def write(self, name: str, data: str | bytes) -> Path:
        """Write one file (text as UTF-8) and record it.

        Raises:
            OutputError: the path holds a file symshard cannot prove it wrote there, or cannot be written.
        """
        path = self.check(name)
        rel = relative_name(name)
        content = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self.written[rel] = self._put(rel, content, record=True)
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
        """Copy every regular file under ``source`` into the folder (under ``prefix``), all checked first.

        Another folder's bookkeeping (a manifest or stamps left by an output folder nested in ``source``)
        is not an output: it is left out, so the copy does not depend on the machine or the run.
        """
        found: list[tuple[str, Path]] = []
        for dirpath, dirnames, filenames in os.walk(source):
            dirnames.sort()
            for f in sorted(filenames):
                if f in BOOKKEEPING:
                    continue
                path = Path(dirpath) / f
                if path.is_file() and not path.is_symlink():
                    found.append((f"{prefix}{path.relative_to(source).as_posix()}", path))
        for name, _ in found:
            self.check(name)
        for name, path in found:
            self.write(name, path.read_bytes())

    # -- finishing -------------------------------------------------------------------------------------

    def _remove(self, rel: str, stamp: Stamp | None) -> bool:
        """Remove the file at ``rel`` if it is still the one ``stamp`` proves symshard's (without a stamp: if
        it is a regular file, for a temporary named in the journal); then the folders it leaves empty."""
        fd = self._open_parent(rel, create=False)
        if fd is None:
            return False
        base = rel.rsplit("/", 1)[-1]
        try:
            info = os.stat(base, dir_fd=fd, follow_symlinks=False)
            ours = (
                stamp.matches(info) and self._digest(rel, stamp) == stamp.sha256
                if stamp
                else stat.S_ISREG(info.st_mode)
            )
            if not ours:
                return False
            os.unlink(base, dir_fd=fd)
        except OSError:
            return False
        finally:
            os.close(fd)
        parts = rel.split("/")[:-1]
        while parts:  # the folders left empty, up to the output folder (rmdir removes no link, no full folder)
            holder = self._open_parent("/".join(parts), create=False)
            if holder is None:
                break
            try:
                os.rmdir(parts[-1], dir_fd=holder)
            except OSError:
                break
            finally:
                os.close(holder)
            parts.pop()
        return True

    def _replace_bookkeeping(self, name: str, text: str) -> None:
        try:
            self._put(name, text.encode("utf-8"), record=False)
        except OutputError:
            raise
        except OSError as err:  # pragma: no cover - _put words its own
            raise os_error(err, "write the manifest in", str(self.root)) from None

    def finish(self) -> Written:
        """Remove the stale files symshard proves it wrote and the temporaries of an interrupted run, write the
        manifest and the stamps, and report (stale files it cannot prove are kept, and listed).

        Raises:
            OutputError: the manifest or the stamps cannot be written.
        """
        removed: list[Path] = []
        kept: list[Path] = []
        for rel in sorted(self.previous):
            if rel in self.written:
                continue
            (removed if self._remove(rel, self.previous[rel]) else kept).append(self.root / rel)
        for rel in sorted(set(self.listed) - set(self.previous) - set(self.written)):
            try:
                info = self._lstat(rel) if _relative_or_none(rel) else None
            except OutputError:
                info = None
            if info is not None and stat.S_ISREG(info.st_mode):
                kept.append(self.root / rel)
        left = [rel for rel in self.temps if not self._remove(rel, None) and self._lstat(rel) is not None]
        manifest = {"written_by": self.tool, "files": {rel: s.sha256 for rel, s in sorted(self.written.items())}}
        self._replace_bookkeeping(MANIFEST, json.dumps(manifest, indent=1) + "\n")
        lines = [json.dumps(s.line(rel), sort_keys=True) for rel, s in sorted(self.written.items())]
        lines += [json.dumps({"temp": rel}) for rel in left]
        self._replace_bookkeeping(STAMPS, "".join(line + "\n" for line in lines))
        return Written(
            self.root, tuple(self.root / rel for rel in sorted(self.written)), tuple(removed), tuple(sorted(kept))
        )


def _relative_or_none(name: str) -> str | None:
    """``name`` as a file name inside a folder, or None where it could not be one (a manifest's claim)."""
    try:
        return relative_name(name)
    except OutputError:
        return None

"""Files symshard writes and reads, attacked: no crafted manifest deletes or overwrites a user's file, no link
leads a write or a removal outside, and a run killed at any point leaves a folder the next run completes.

Each section is one class of attack from issue 38 (points 4 and 5), several attacks each.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symshard.cli import main
from symshard.errors import OutputError
from symshard.outputs import MANIFEST, STAMPS, OutputFolder


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write(root: Path, files: dict[str, str], *, force: bool = False):
    out = OutputFolder.open(root, "test", force=force)
    out.write_all(files)
    return out.finish()


def _files(root: Path) -> dict[str, str]:
    """Every regular file under ``root`` (links not followed), with its text, bookkeeping left out."""
    found = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink() and name not in (MANIFEST, STAMPS):
                found[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return found


def _consistent(root: Path, expected: dict[str, str], users: dict[str, str] | None = None) -> None:
    """The folder holds exactly the set written last (and the user's files), the manifest lists it, and no
    temporary file is left."""
    users = users or {}
    assert _files(root) == {**expected, **users}
    listed = json.loads((root / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert listed == {name: _sha(text) for name, text in sorted(expected.items())}
    assert not [p for p in root.rglob(".symshard-tmp-*")]


# -- point 4: a crafted manifest deletes nothing, and no link is followed ---------------------------------------


@pytest.fixture
def outside(tmp_path):
    """A folder of the user's outside the output folder, with a file whose bytes anyone may know."""
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "notes.txt").write_text("precious", encoding="utf-8")
    return folder


def _craft(root: Path, files: dict[str, str], stamps: list[dict] | None = None) -> None:
    """A manifest (and stamps) that someone wrote by hand, claiming ``files`` (name -> text) as symshard's."""
    root.mkdir(exist_ok=True)
    (root / MANIFEST).write_text(json.dumps({"files": {k: _sha(v) for k, v in files.items()}}), encoding="utf-8")
    if stamps is not None:
        (root / STAMPS).write_text("".join(json.dumps(s) + "\n" for s in stamps), encoding="utf-8")


def _stamp_of(path: Path, name: str, text: str) -> dict:
    info = os.lstat(path)
    return {"name": name, "sha256": _sha(text), "ino": info.st_ino, "mtime_ns": info.st_mtime_ns, "size": info.st_size}


@pytest.mark.parametrize("force", [False, True])
def test_a_manifest_naming_a_path_through_a_link_deletes_nothing_outside(tmp_path, outside, force):
    root = tmp_path / "set"
    root.mkdir()
    (root / "link").symlink_to(outside)
    claimed = {"link/notes.txt": "precious", "../home/notes.txt": "precious", str(outside / "notes.txt"): "precious"}
    # even stamps that describe the outside file exactly (as someone on this machine could write them)
    _craft(root, claimed, [_stamp_of(outside / "notes.txt", name, "precious") for name in claimed])
    if not force:
        with pytest.raises(OutputError, match=re.escape("holds files symshard did not write, e.g. 'link'")):
            _write(root, {"a.txt": "new"})
    else:
        done = _write(root, {"a.txt": "new"}, force=True)
        assert done.removed == ()
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "precious"
    assert (root / "link").is_symlink()


def test_a_manifest_listing_a_users_file_with_its_digest_deletes_nothing(tmp_path):
    root = tmp_path / "set"
    _craft(root, {"syllabus.md": "mine", "figures/old.svg": "<svg/>"})
    (root / "syllabus.md").write_text("mine", encoding="utf-8")
    (root / "figures").mkdir()
    (root / "figures" / "old.svg").write_text("<svg/>", encoding="utf-8")
    with pytest.raises(OutputError, match="is in the manifest, but symshard cannot tell that it wrote it here"):
        _write(root, {"problems.md": "set"})  # a plain run: refused, nothing deleted
    done = _write(root, {"problems.md": "set"}, force=True)  # forced: written beside, the stale ones reported
    assert done.removed == () and done.kept == (root / "figures" / "old.svg", root / "syllabus.md")
    assert _files(root) == {"syllabus.md": "mine", "figures/old.svg": "<svg/>", "problems.md": "set"}


def test_a_manifest_listing_a_users_file_at_a_name_symshard_writes_never_overwrites_it(tmp_path):
    root = tmp_path / "set"
    _craft(root, {"problems.md": "my own problems"})
    (root / "problems.md").write_text("my own problems", encoding="utf-8")
    with pytest.raises(OutputError, match="cannot tell that it wrote it here"):
        _write(root, {"problems.md": "generated"}, force=True)
    assert (root / "problems.md").read_text(encoding="utf-8") == "my own problems"


def test_a_file_of_symshards_edited_since_is_never_overwritten_even_forced(tmp_path):
    root = tmp_path / "set"
    _write(root, {"problems.md": "generated", "b.txt": "b"})
    (root / "problems.md").write_text("generated, with my corrections", encoding="utf-8")
    with pytest.raises(OutputError, match=re.escape("problems.md' was changed since symshard wrote it; hint: move")):
        try:
            _write(root, {"problems.md": "regenerated"}, force=True)
        except OutputError as err:
            raise OutputError(err.one_line()) from None
    assert (root / "problems.md").read_text(encoding="utf-8") == "generated, with my corrections"
    done = _write(root, {"a.txt": "a"}, force=True)  # stale and edited: kept, and said
    assert done.kept == (root / "problems.md",) and done.removed == (root / "b.txt",)


def test_forged_stamps_prove_nothing(tmp_path):
    root = tmp_path / "set"
    root.mkdir()
    (root / "notes.md").write_text("mine", encoding="utf-8")
    real = _stamp_of(root / "notes.md", "notes.md", "mine")
    guesses = [{**real, "ino": real["ino"] + d} for d in range(-50, 51) if d] + [{**real, "mtime_ns": 0}]
    guesses += [{**real, "ino": True}, {**real, "sha256": "x"}, {"temp": "notes.md"}, {"name": "notes.md"}, [1], "{"]
    _craft(root, {"notes.md": "mine"}, guesses)
    done = _write(root, {"a.txt": "new"}, force=True)
    assert done.removed == () and (root / "notes.md").read_text(encoding="utf-8") == "mine"


def test_a_copied_set_is_not_symshards_until_proven(tmp_path):
    first = tmp_path / "first"
    _write(first, {"problems.md": "one", "figures/a.svg": "<svg/>"})
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)  # new inodes: the stamps no longer prove anything
    with pytest.raises(OutputError, match="cannot tell that it wrote it here"):
        _write(copy, {"problems.md": "two"})
    done = _write(copy, {"answer-key.md": "two"}, force=True)
    assert done.removed == () and set(done.kept) == {copy / "problems.md", copy / "figures" / "a.svg"}
    _write(first, {"problems.md": "two"})  # the original, on this machine, is symshard's
    assert _files(first) == {"problems.md": "two"}


def test_a_temporary_name_in_a_forged_journal_is_removed_only_when_it_is_symshards_name(tmp_path):
    root = tmp_path / "set"
    _write(root, {"a.txt": "one"})
    (root / "notes.md").write_text("mine", encoding="utf-8")
    (root / ".symshard-tmp-0123456789abcdef").write_text("left by a crash", encoding="utf-8")
    with (root / STAMPS).open("a", encoding="utf-8") as f:
        for name in ("notes.md", ".symshard-tmp-0123456789abcdef", "../home/x", ".symshard-tmp-short"):
            f.write(json.dumps({"temp": name}) + "\n")
    _write(root, {"a.txt": "two"}, force=True)
    assert _files(root) == {"a.txt": "two", "notes.md": "mine"}


def test_a_link_swapped_in_for_a_folder_is_never_written_through(tmp_path, outside):
    root = tmp_path / "set"
    _write(root, {"figures/a.svg": "<svg/>", "problems.md": "one"})
    shutil.rmtree(root / "figures")
    (root / "figures").symlink_to(outside)
    with pytest.raises(OutputError, match="is in the way of"):
        _write(root, {"figures/notes.txt": "overwritten?", "problems.md": "two"}, force=True)
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "precious"


def test_a_stale_file_replaced_by_a_link_is_not_followed_when_removing(tmp_path, outside):
    root = tmp_path / "set"
    _write(root, {"old/notes.txt": "precious", "keep.txt": "k"})
    shutil.rmtree(root / "old")
    (root / "old").symlink_to(outside)  # same name, same bytes: the stamp's inode is not the outside file's
    done = _write(root, {"keep.txt": "k"}, force=True)
    assert done.removed == () and (outside / "notes.txt").read_text(encoding="utf-8") == "precious"


@pytest.mark.parametrize("name", ["../x", "/etc/x", "a/../../x", MANIFEST, STAMPS, "f/.symshard-tmp-0123456789abcdef",
                                  "a\x00b", ""])  # fmt: skip
def test_names_outside_the_folder_or_taken_by_its_books_are_refused(tmp_path, name):
    out = OutputFolder.open(tmp_path / "set", "test")
    with pytest.raises(OutputError, match="is not a file name inside the output folder"):
        out.write(name, "x")
    assert not (tmp_path / "x").exists() and sorted(p.name for p in (tmp_path / "set").iterdir()) == []


@pytest.mark.parametrize("book", [MANIFEST, STAMPS])
def test_bookkeeping_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path, outside, book):
    for kind in ("link", "fifo", "folder"):
        root = tmp_path / f"{kind}-{book}"
        root.mkdir()
        if kind == "link":
            (root / book).symlink_to(outside / "notes.txt")
        elif kind == "fifo":
            os.mkfifo(root / book)
        else:
            (root / book).mkdir()
        started = time.monotonic()
        with pytest.raises(OutputError, match="exists and is not a regular file"):
            _write(root, {"a.txt": "x"}, force=True)
        assert time.monotonic() - started < 2
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "precious"


def test_a_broken_manifest_or_stamps_file_only_proves_nothing(tmp_path):
    root = tmp_path / "set"
    _write(root, {"a.txt": "one"})
    (root / MANIFEST).write_bytes(b"\xff\x00{" * 1000)
    (root / STAMPS).write_text("[" * 100000, encoding="utf-8")  # nesting that would overflow a recursive reader
    with pytest.raises(OutputError, match=re.escape("holds files symshard did not write, e.g. 'a.txt'")):
        _write(root, {"a.txt": "two"})
    with pytest.raises(OutputError, match="exists and was not written by symshard"):
        _write(root, {"a.txt": "two"}, force=True)
    assert (root / "a.txt").read_text(encoding="utf-8") == "one"


def test_problems_generate_with_a_crafted_manifest_deletes_nothing(tmp_path, outside, capsys):
    out = tmp_path / "week"
    out.mkdir()
    (out / "link").symlink_to(outside)
    (out / "syllabus.md").write_text("mine", encoding="utf-8")
    _craft(out, {"link/notes.txt": "precious", "syllabus.md": "mine"})
    args = ["problems", "generate", "--count", "2", "--seed", "3", "--format", "md", "--out", str(out)]
    assert main(args) == 2
    assert "holds files symshard did not write, e.g. 'link'" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0
    printed = capsys.readouterr().out
    assert "kept 1 stale files of an earlier set" in printed and f"  {out / 'syllabus.md'}" in printed
    assert (out / "syllabus.md").read_text(encoding="utf-8") == "mine"
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "precious"


# -- point 5: a run killed at any point leaves a folder the next run completes ----------------------------------

_MUTATING = ("open", "write", "replace", "unlink", "mkdir", "rmdir", "fchmod")


def _killed_at(step: int, partial: bool, run) -> bool:
    """Run ``run()`` in a child process killed (SIGKILL) just before its ``step``-th call that changes the
    file system (with ``partial``, halfway through it when it is a write); whether the child was killed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            count = [0]
            real = {name: getattr(os, name) for name in _MUTATING}

            def wrap(name):
                def call(*args, **kwargs):
                    if name == "open" and not (args[1] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)):
                        return real[name](*args, **kwargs)
                    count[0] += 1
                    if count[0] == step:
                        if partial and name == "write" and len(args[1]) > 1:
                            real["write"](args[0], bytes(args[1])[: len(args[1]) // 2])
                        os.kill(os.getpid(), signal.SIGKILL)
                    return real[name](*args, **kwargs)

                return call

            for name in _MUTATING:
                setattr(os, name, wrap(name))
            run()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


SET_A = {"problems.md": "set A", "figures/a1.svg": "<svg>a1</svg>", "figures/shared.svg": "<svg>a</svg>",
         "old/only-in-a.txt": "a"}  # fmt: skip
SET_B = {"problems.md": "set B, longer " * 50, "figures/b1.svg": "<svg>b1</svg>", "figures/shared.svg": "<svg>b</svg>",
         "new/deep/b.txt": "b"}  # fmt: skip
SET_C = {"problems.md": "set C", "figures/c1.svg": "<svg>c1</svg>", "answer-key.md": "key C"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("partial", [False, True], ids=["between-steps", "halfway-through-a-write"])
@pytest.mark.parametrize("force", [False, True], ids=["plain", "forced-beside-a-users-file"])
def test_a_run_killed_at_any_step_leaves_a_folder_the_next_run_completes(tmp_path, force, partial):
    """Set B is written over set A, killed before each of its steps in turn (every open for writing, write,
    chmod, rename, removal): the next run completes without --force (with it where a user's file is there
    anyway), leaves exactly its own set beside the user's file, and the run after that is not wedged."""
    users = {"mine.txt": "the user's"} if force else {}
    kills = 0
    step = 0
    while True:
        step += 1
        root = tmp_path / str(step)
        _write(root, SET_A)
        for name, text in users.items():
            (root / name).write_text(text, encoding="utf-8")
        if not _killed_at(step, partial, lambda r=root: _write(r, SET_B, force=force)):
            break  # the run finished before this step: every step has been tried
        kills += 1
        _write(root, SET_C, force=force)
        _consistent(root, SET_C, users)
        _write(root, SET_A, force=force)
        _consistent(root, SET_A, users)
    assert kills > 8 * len(SET_B)  # each file takes eight steps, the end of the run more


def test_problems_generate_killed_while_writing_over_a_set_recovers(tmp_path, capsys):
    """The issue's case, for real: `generate --force` over an existing set, killed (kill -9) by a subprocess
    at several points of its write phase; the next `--force` run completes and leaves a consistent folder."""
    out = tmp_path / "week"
    args = ["problems", "generate", "--count", "3", "--format", "md", "--out", str(out)]
    assert main([*args, "--seed", "5"]) == 0
    (out / "syllabus.md").write_text("mine", encoding="utf-8")
    child = (  # killed at its at-th rename into the output folder (renames elsewhere are not counted)
        "import os, signal, sys\n"
        "from symshard.cli import main\n"
        "real, count, at = os.replace, [0], int(sys.argv[1])\n"
        "def replace(*a, **k):\n"
        "    count[0] += 'dst_dir_fd' in k\n"
        "    if count[0] == at: os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(*a, **k)\n"
        "os.replace = replace\n"
        "sys.exit(main(sys.argv[2:]))\n"
    )
    for at in (1, 3):
        process = subprocess.Popen([sys.executable, "-c", child, str(at), *args, "--seed", str(10 + at), "--force"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
                                   start_new_session=True)  # fmt: skip
        try:
            assert process.wait(timeout=60) == -signal.SIGKILL
        finally:  # its family worker, orphaned by the kill, goes with its process group
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert main([*args, "--seed", "6", "--force"]) == 0
        capsys.readouterr()
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
        on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        assert on_disk == {*listed, MANIFEST, STAMPS, "syllabus.md"}
        assert (out / "syllabus.md").read_text(encoding="utf-8") == "mine"

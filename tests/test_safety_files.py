"""Files symshard writes and reads, attacked: no crafted manifest deletes or overwrites a user's file, no link
leads a write or a removal outside, a run killed at any point leaves a folder the next run completes, and a
file given to read is read within limits (``calibrate``), its values written back escaped.

Each section is one class of attack from issue 38 (points 4, 5 and 6), several attacks each; the last
section is issue 32's "a network calibration records its model".
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
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symshard.cli import main
from symshard.costs.calibrate import MAX_ROWS, calibrate, hardware_file, read_nccl_tests
from symshard.errors import HardwareError, InputError, OutputError
from symshard.inputs import read_text_file
from symshard.machines.presets import load_hardware
from symshard.outputs.bookkeeping import MANIFEST, STAMPS
from symshard.outputs.folder import OutputFolder
from symshard.tomltext import toml_comment, toml_document, toml_key, toml_string

ROOT = Path(__file__).parents[1]
A100_RUN = ROOT / "site" / "data" / "nccl-tests-allreduce-a100-2nodes-16gpus.txt"


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
    assert "kept 1 stale file of an earlier set" in printed and f"  {out / 'syllabus.md'}" in printed
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


# -- point 6: a file given to read is read within limits ----------------------------------------------------------

_ROW = (
    "{size:>12}  {count:>12}     float     sum      -1  {time:>7}  0.00  0.00       0  {time:>7}  0.00  0.00       0\n"
)
_HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw"
    " #wrong\n"
)


def _run(rows: int = 4, *, row: str = "", at: int = 0) -> str:
    """nccl-tests text of ``rows`` good rows, with ``row`` put in place of row ``at`` (its line is ``at + 2``)."""
    lines = [_HEADER] + [
        _ROW.format(size=8 * (i + 1), count=2 * (i + 1), time=f"{10 + i / 7:.2f}") for i in range(rows)
    ]
    if row:
        lines[at + 1] = row
    return "".join(lines)


def _quick(argv: list[str], capsys) -> tuple[int, str, float]:
    started = time.monotonic()
    code = main(argv)
    return code, capsys.readouterr().err, time.monotonic() - started


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: "/dev/zero", "'/dev/zero' is a device, not a regular file"),
        (lambda d: "/dev/stdin" if not os.isatty(0) else "/dev/null", "not a regular file"),
        (lambda d: os.mkfifo(d / "pipe") or d / "pipe", "is a named pipe, not a regular file"),
        (lambda d: d, "is a folder, not a regular file"),
        (lambda d: (d / "zero").symlink_to("/dev/zero") or d / "zero", "is a device, not a regular file"),
        (lambda d: d / "missing.txt", "does not exist"),
    ],
    ids=["dev-zero", "stdin", "fifo", "folder", "link-to-dev-zero", "missing"],
)
def test_calibrate_reads_regular_files_only_and_never_blocks(tmp_path, capsys, make, message):
    path = make(tmp_path)
    code, err, seconds = _quick(["calibrate", str(path), "--out", str(tmp_path / "x.toml")], capsys)
    assert code == 2 and message in err and err.count("\n") == 1 and seconds < 2
    assert not (tmp_path / "x.toml").exists()


def test_calibrate_refuses_a_huge_file_before_reading_it(tmp_path, capsys):
    big = tmp_path / "huge.txt"
    with big.open("wb") as f:  # 300 MB that take no disk (a sparse file): refused by its size
        f.truncate(300 * 2**20)
    argv = ["calibrate", str(big), "--collective", "allreduce", "--ranks", "16", "--out", str(tmp_path / "x.toml")]
    code, err, seconds = _quick(argv, capsys)
    assert code == 2 and "is larger than 4 MiB" in err and seconds < 1


def test_a_growing_file_is_read_no_further_than_the_limit(tmp_path):
    with pytest.raises(InputError, match="is larger than 1 KiB"):
        read_text_file(
            "/proc/self/maps" if Path("/proc/self/maps").exists() else "/dev/null", what="maps", max_bytes=1024
        )  # fmt: skip  (it says its size is 0)
    (tmp_path / "binary.bin").write_bytes(b"# size time\n8 1.0\n\x00\x01")
    with pytest.raises(InputError, match=r"holds binary data \(a NUL byte on line 3\)"):
        read_text_file(tmp_path / "binary.bin", what="the run", max_bytes=1024)
    (tmp_path / "latin1.txt").write_bytes(b"# size time\n\n# caf\xe9\n")
    with pytest.raises(InputError, match=r"is not UTF-8 text \(line 3\)"):
        read_text_file(tmp_path / "latin1.txt", what="the run", max_bytes=1024)


def test_too_many_valid_rows_are_refused_quickly(tmp_path, capsys):
    rows = tmp_path / "rows.txt"
    rows.write_text(_run(MAX_ROWS + 500), encoding="utf-8")  # 4 MiB of rows would be 35,000 of them
    argv = ["calibrate", str(rows), "--collective", "allreduce", "--ranks", "16", "--out", str(tmp_path / "x.toml")]
    code, err, seconds = _quick(argv, capsys)
    assert code == 2 and f"line {MAX_ROWS + 2}: more than {MAX_ROWS} result rows" in err and seconds < 2
    # the most rows read, each time with all the digits a float has, fit in well under a second
    rows = [{"size": 8 * (i + 1), "out_of_place": {"time": (30 + i / 3) * (1 + (i % 7) / 97)}} for i in range(MAX_ROWS)]
    started = time.monotonic()
    fit = calibrate(read_nccl_tests(json.dumps({"results": rows})), "allreduce", ranks=16, per_node=8)
    assert len(fit.samples) == MAX_ROWS and time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            _ROW.format(size="9" * 5000, count=1, time="1.00"),
            "line 3: the size '999999999999999999999999…' is too large",
        ),
        (_ROW.format(size=8, count=1, time="1e999999"), "line 3: cannot read the time '1e999999' as a positive number"),
        (_ROW.format(size=8, count=1, time="-5.0"), "line 3: cannot read the time '-5.0' as a positive number"),
        (_ROW.format(size=8, count=1, time="0.00"), "line 3: cannot read the time '0.00' as a positive number"),
        (_ROW.format(size=8, count=1, time="nan"), "line 3: cannot read the time 'nan' as a positive number"),
        (_ROW.format(size=8, count=1, time="1" * 40), "line 3: cannot read the time '111111111111111111111111…'"),
        ("       8       2     float     sum\n", "line 3 has 4 columns, but the header puts the time in column 6"),
        (_ROW.format(size=8, count=1, time="١٢"), "line 3: cannot read the time '١٢' as a positive number"),
    ],
    ids=["5000-digit-size", "huge-exponent", "negative", "zero", "nan", "40-digits", "cut-short", "arabic-digits"],
)
def test_every_bad_row_is_one_line_naming_its_line(tmp_path, capsys, row, message):
    data = tmp_path / "run.txt"
    data.write_text(_run(row=row, at=1), encoding="utf-8")
    argv = ["calibrate", str(data), "--collective", "allreduce", "--ranks", "16", "--out", str(tmp_path / "x.toml")]
    code, err, seconds = _quick(argv, capsys)
    assert code == 2 and message in err and err.count("\n") == 1 and "internal error" not in err and seconds < 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"results": [{"size": ' + "9" * 5000 + "}]}", "the JSON holds a number of 5000 digits"),
        ('{"results": ' + "[" * 100000 + "]" * 100000 + "}", "the JSON nests too deeply to read"),
        ('{"results": [{"size": "8", "out_of_place": {"time": 1}}]}', "result 1 of the JSON: the size '8' is not"),
        ('{"results": [{"size": 8, "out_of_place": {"time": NaN}}]}', "the JSON's time 'nan' is not a number"),
        ('{"results": [{"size": 8, "out_of_place": {"time": -1}}]}', "result 1 of the JSON: the time -1.0 us is not"),
        ('{"results": [{"size": 8, "out_of_place": {"time": 1e999}}]}', "the JSON's time 'inf' is not a number"),
        ('{"results": [{"size": 8, "out_of_place": {"time": 1}}], "config": [1], "args": {}}', "do not say which"),
    ],
    ids=["huge-int", "deep", "size-as-text", "nan", "negative", "infinite", "odd-config"],
)
def test_bad_json_is_one_line_too(tmp_path, capsys, text, message):
    data = tmp_path / "run.json"
    data.write_text(text, encoding="utf-8")
    code, err, seconds = _quick(["calibrate", str(data), "--out", str(tmp_path / "x.toml")], capsys)
    assert code == 2 and message in err and err.count("\n") == 1 and "internal error" not in err and seconds < 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--ranks", "1" + "0" * 12], "calibration takes at most 1,048,576 ranks"),
        (["--ranks", "9" * 5000], "invalid int value"),
        (["--ranks", "16", "--per-node", "-8"], "--per-node must be at least 1, not -8"),
        (["--ranks", "16", "--per-node", "32"], "do not split into nodes of 32"),
    ],
)
def test_calibrate_options_out_of_range(tmp_path, capsys, options, message):
    data = tmp_path / "run.txt"
    data.write_text(_run(8), encoding="utf-8")
    code, err, _ = _quick(
        ["calibrate", str(data), "--collective", "allreduce", "--out", str(tmp_path / "x.toml"), *options], capsys
    )
    assert code == 2 and message in err and "internal error" not in err


# -- every value written to TOML is escaped ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ['x"\nW_dcn = "1', 'a\\"b', 'x"""', "line\r\nbreak", "tab\there", "\x00\x1f\x7f", "[constants]", "é中文", "'"],
)
def test_a_calibrated_name_cannot_add_keys(tmp_path, capsys, name):
    out = tmp_path / "cluster.toml"
    argv = ["calibrate", str(A100_RUN), "--collective", "allreduce", "--ranks", "16", "--per-node", "8",
            "--out", str(out), "--name", name]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    body = out.read_text(encoding="utf-8").split("\n", 1)[1]  # after the signature line
    data = tomllib.loads(body)
    assert data["hardware"]["name"] == name and set(data) == {"hardware", "constants", "sources"}
    assert set(data["constants"]) == {"node_size", "W_dcn", "T_net"}
    assert load_hardware(out).name == name


def test_a_run_file_name_cannot_add_keys_or_lines(tmp_path, capsys):
    odd = tmp_path / 'run"\n[constants]\nW_dcn = "1".txt'
    shutil.copy(A100_RUN, odd)
    out = tmp_path / "cluster.toml"
    argv = ["calibrate", str(odd), "--collective", "allreduce", "--ranks", "16", "--per-node", "8", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    data = tomllib.loads(out.read_text(encoding="utf-8"))
    assert float(data["constants"]["W_dcn"]) > 1e9 and odd.name in data["sources"]["W_dcn"]


def test_a_name_that_is_not_unicode_is_refused(tmp_path, capsys):
    argv = ["calibrate", str(A100_RUN), "--collective", "allreduce", "--ranks", "16", "--per-node", "8",
            "--out", str(tmp_path / "x.toml"), "--name", "bad\udcff"]  # fmt: skip
    assert main(argv) == 2
    assert "cannot be written in a TOML file" in capsys.readouterr().err and not (tmp_path / "x.toml").exists()


_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)


@given(tables=st.lists(st.tuples(st.lists(_TEXT, min_size=1, max_size=3), st.dictionaries(
    _TEXT, st.one_of(_TEXT, st.integers(-(2**63), 2**63 - 1), st.booleans()), max_size=4)), max_size=3,
    unique_by=lambda t: t[0][0]),  # no table's name the start of another's: their values cannot collide
    comments=st.lists(_TEXT, max_size=3))  # fmt: skip
@settings(max_examples=300, deadline=None)
def test_any_text_reads_back_as_written(tables, comments):
    text = toml_document([(tuple(path), values) for path, values in tables], comments=comments)
    data = tomllib.loads(text)
    for path, values in tables:
        node = data
        for part in path:
            node = node[part]
        assert node == values
    assert text.count("\n") == len(comments) + sum(1 + len(v) for _, v in tables) + max(0, len(tables) - 1)


@given(text=_TEXT)
@settings(max_examples=300, deadline=None)
def test_one_string_one_key_one_comment(text):
    assert tomllib.loads(f"{toml_key(text)} = {toml_string(text)}\n") == {text: text}
    assert tomllib.loads(toml_comment(text) + "\n") == {} and "\n" not in toml_comment(text)


# -- issue 32: a network calibration records its model, and commands given the file use it ----------------------


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    out = tmp_path_factory.mktemp("cal") / "a100-cluster.toml"
    argv = ["calibrate", str(A100_RUN), "--collective", "allreduce", "--ranks", "16", "--per-node", "8",
            "--hw", "a100", "--out", str(out), "--json"]  # fmt: skip
    assert main(argv) == 0
    return out


def _measured(size: int) -> float:
    run = read_nccl_tests(A100_RUN.read_text(encoding="utf-8"))
    return float(next(s.time for s in run.samples if s.size == size))


@pytest.mark.parametrize("size", [2**26, 2**30, 2**33])
def test_the_calibrated_file_prices_its_own_rows_near_the_measured_times(calibrated, capsys, size):
    data = tomllib.loads(calibrated.read_text(encoding="utf-8"))
    assert data["hardware"]["collective_model"] == "ring" and load_hardware(calibrated).collective_model == "ring"
    argv = ["collective", "AllReduce_X(G[I]{U_X})", "--mesh", "X=16", "--shape", f"I={size // 4}", "--dtype", "fp32",
            "--hw", str(calibrated), "--json"]  # fmt: skip
    assert main(argv) == 0
    priced = json.loads(capsys.readouterr().out)
    assert priced["model"] == "ring" and priced["cost_model"] == {"name": "ring", "from": "hardware file"}
    # the file prices the row as the fit does (up to its 6 significant figures), and so near the measurement
    fit = calibrate(read_nccl_tests(A100_RUN.read_text(encoding="utf-8")), "allreduce", ranks=16, per_node=8)
    row = next(i for i, s in enumerate(fit.samples) if s.size == size)
    assert priced["time_s"] == pytest.approx(float(fit.fitted_times[row]), rel=1e-4)
    assert priced["time_s"] == pytest.approx(_measured(size), rel=abs(float(fit.residuals[row])) + 1e-3)
    assert abs(priced["time_s"] / _measured(size) - 1) < 0.2
    # the book's model, asked for, prices it further from the measurement (the 25.3 ms of the issue at 1 GiB)
    assert main([*argv[:-1], "--model", "book", "--json"]) == 0
    book = json.loads(capsys.readouterr().out)
    assert book["model"] == "book" and "cost_model" not in book
    assert abs(book["time_s"] / _measured(size) - 1) > abs(priced["time_s"] / _measured(size) - 1)


def test_the_answer_says_which_model_and_why(calibrated, capsys):
    argv = ["collective", "AllReduce_X(G[I]{U_X})", "--mesh", "X=16", "--shape", "I=268435456", "--hw", str(calibrated)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[1].startswith("model         ring")
    assert text.splitlines()[-1] == (f"note: collectives are priced with the ring model, the one {calibrated} was "
                                     "calibrated with (--model book for the chapter's formulas)")  # fmt: skip
    assert main([*argv, "--lang", "zh"]) == 0
    assert "ring" in capsys.readouterr().out.splitlines()[-1]
    for command in (["matmul", "A[I_X, J] · B[J, K] -> C[I_X, K]", "--mesh", "X=16", "--shape", "I=4096,J=4096,K=4096"],
                    ["compare", "A[I_X, J] · B[J, K] -> C[I_X, K]", "--mesh", "X=16", "--solve-for", "I"]):  # fmt: skip
        assert main([*command, "--hw", str(calibrated)]) == 0
        assert "the ring model, the one" in capsys.readouterr().out
        assert main([*command, "--hw", str(calibrated), "--model", "book"]) == 0
        assert "the ring model" not in capsys.readouterr().out
    assert main(["collective", "AllReduce_X(G[I]{U_X})", "--mesh", "X=16", "--hw", "a100"]) == 0
    assert "model         book" in capsys.readouterr().out  # a preset: the book's, as before


def test_the_calibration_report_and_files_name_the_model(calibrated, tmp_path, capsys):
    argv = ["calibrate", str(A100_RUN), "--collective", "allreduce", "--ranks", "16", "--per-node", "8",
            "--out", str(tmp_path / "c.toml")]  # fmt: skip
    assert main(argv) == 0
    assert (
        capsys.readouterr().out.rstrip().endswith("(collectives are then priced with the ring model, the one fitted)")
    )
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["collective_model"] == "ring"
    bad = tmp_path / "bad.toml"
    bad.write_text('[hardware]\nbase = "a100"\ncollective_model = "magic"\n', encoding="utf-8")
    with pytest.raises(HardwareError, match="names the unknown cost model 'magic'"):
        load_hardware(bad)
    plain = tmp_path / "plain.toml"
    plain.write_text('[hardware]\nbase = "a100"\n[constants]\nW_dcn = "1e10"\n', encoding="utf-8")
    assert load_hardware(plain).collective_model is None  # files written before keep the book's model
    fit = calibrate(read_nccl_tests(A100_RUN.read_text(encoding="utf-8")), "allreduce", ranks=16, per_node=8)
    assert tomllib.loads(hardware_file(fit))["hardware"]["collective_model"] == fit.model == "ring"

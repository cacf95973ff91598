"""Safe by construction, second round: templates name no files and share no state.

Each section is one class of attack, tried the way someone sending an instructor a family would:

* **Templates name no files.** The engine names every figure; what a template sees is read-only;
  the site's problem sets are written through the output folder's checks; every zip entry stays
  inside its package; text a family chooses never starts a line of an SVG.
* **Templates share no state.** Nothing a template reaches can be changed (lists, dicts, programs,
  imported modules), so a set drawn after a hostile family is byte for byte the set drawn without it.
* **Families read only their own files.** ``hardware("x.toml")`` reads a file of the family's own
  folder, whatever function the name is handed to; no machine path reaches a problem.
* **No internal error.** The exports' placeholders cannot collide with a family's text; a problem's
  figures are checked; characters no export can carry are refused with the family's name.
* **No family replaces another.** A family called like a built-in one (or like another) is refused.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from helpers import probe_family_toml
from hypothesis import given, settings
from hypothesis import strategies as st

from symshard.cli import main
from symshard.errors import OutputError, SymshardError, TemplateError
from symshard.problems import library
from symshard.problems.budget import stop_worker
from symshard.problems.engine import generate, variant
from symshard.problems.family import load_family
from symshard.problems.library import family
from symshard.problems.problem import Problem
from symshard.problems.qti import check_entry, zip_files
from symshard.problems.typesetting import markdown_to_typst
from symshard.problems.writers import FORMATS, export, write_set
from symshard.render import layout, regimes
from symshard.report.markdown import put_back, split_math, to_html
from symshard.site.problemsets import ProblemSet, load_sets, write_sets

SPEC = probe_family_toml(let="{let}")  # "{let}" is replaced by each test

SECRET = "s3cr3t-label-from-outside"
"""The label of a hardware file outside every family folder: it must never reach a problem."""


def _family(root: Path, name: str, statement: str = "s", let: str = "", solution: str = "s") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "family.toml").write_text(SPEC.replace("{let}", let), encoding="utf-8")
    (folder / "problem.md.j2").write_text(
        "{% block statement %}" + statement + "{% endblock %}{% block solution %}" + solution + "{% endblock %}",
        encoding="utf-8",
    )
    return folder


def _files(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def _refused(capsys, argv: list[str], *fragments: str) -> str:
    """Run a command that must fail in one line, quickly, naming what it refused."""
    started = time.perf_counter()
    code = main(argv)
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    assert code == 2, out
    assert out == "" and err.startswith("symshard: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert elapsed < 5, f"{argv} took {elapsed:.1f} s"
    return err


@pytest.fixture
def arena(tmp_path, monkeypatch):
    """A folder of families, an empty working folder, and a hardware file with a secret outside both."""
    families = tmp_path / "families"
    families.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.toml"
    outside.write_text(f'[hardware]\nlabel = "{SECRET}"\nbase = "tpu-v5e"\n', encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.delenv("SYMSHARD_FAMILIES", raising=False)
    return families, work, outside


# -- 1. templates name no files ------------------------------------------------------------------------------

# (name, template body): each tries to name a file, reach the figure list or write through a figure
NAMING = [
    ("append-figure", "{{ figure('layout', 'A[I_X, J]', 'X=2') }}{{ figure.items.append(('../../x.pth', 1)) }}"),
    ("append-private", "{{ figure('layout', 'A[I_X, J]', 'X=2') }}{{ figure._book._items.append(('../x.svg', 1)) }}"),
    ("append-attr-filter", "{{ (figure | attr('items')).append(('../x.svg', 1)) }}"),
    ("clear-figures", "{{ figure('layout', 'A[I_X, J]', 'X=2') }}{{ figure.clear() }}"),
    ("rename-prefix", "{{ figure.prefix }}"),
    ("save-drawn", "{{ figure('layout', 'A[I_X, J]', 'X=2').save('owned.svg') }}"),
]


@pytest.mark.parametrize(("name", "body"), NAMING, ids=[n for n, _ in NAMING])
def test_a_template_cannot_name_or_reach_a_figure_file(arena, capsys, name, body):
    families, work, _ = arena
    _family(families, name, body)
    before = _files(families)
    _refused(capsys, ["problems", "generate", "--seed", "1", "--family", name, "--families", str(families), "--count", "1",
                      "--out", str(work / "set"), "--format", "all"], f"family '{name}'")  # fmt: skip
    assert _files(families) == before
    assert not list(work.iterdir()), "the refused set wrote something"


def test_the_figure_a_template_gets_only_draws_and_prints_the_same_every_run(arena):
    families, _, _ = arena
    folder = _family(families, "shown", "{{ figure }} {{ figure('layout', 'A[I_X, J]', 'X=2') }}")
    p = variant(load_family(folder), 1)
    assert p.statement.startswith("figure ![")  # no object address, nothing that differs between runs
    assert [name for name, _ in p.figures] == ["shown-1-1.svg"]


BAD_FIGURES = [
    # (figures given to a Problem, why it is refused)
    ((("../../x.pth", "layout"),), "a name the engine did not give"),
    ((("probe-1-1.svg", "not a figure"),), "not a figure"),
    ((("probe-1-2.svg", "layout"),), "numbered out of order"),
    ((("probe-1-1.svg", "layout"), ("probe-1-1.svg", "layout")), "the same name twice"),
    ((("figures/probe-1-1.svg", "layout"),), "a path, not a file name"),
    (("probe-1-1.svg",), "not a pair"),
]


@pytest.mark.parametrize(("figures", "why"), BAD_FIGURES, ids=[w for _, w in BAD_FIGURES])
def test_a_problem_holds_only_figures_the_engine_named(tmp_path, figures, why):
    fam = load_family(_family(tmp_path, "probe"))
    drawn = layout("A[I_X, J]", "X=2")
    given_ = tuple((item[0], drawn if item[1] == "layout" else item[1]) if isinstance(item, tuple) else item
                   for item in figures)  # fmt: skip
    with pytest.raises(TemplateError, match=r"problem probe-1: figure \d is not a figure filed as probe-1-\d\.svg"):
        Problem(fam, 1, (), "s", (), "s", (), figures=given_)
    good = Problem(fam, 1, (), "s", (), "s", (), figures=(("probe-1-1.svg", drawn),))
    assert good.figures[0][0] == "probe-1-1.svg"


ENTRIES = [
    ("../x", False),
    ("figures/../../.bashrc", False),
    ("/etc/passwd", False),
    ("a\\b", False),
    ("C:x.svg", False),
    ("a//b", False),
    ("a/./b", False),
    (".hidden", False),
    ("", False),
    ("a\nb.svg", False),
    ("questions/symshard/x y/info.json", False),
    ("figures/allgather-time-7-1.svg", True),
    ("questions/symshard/allgather-time-7/server.py", True),
    ("g0123abcd/g0123abcd.xml", True),
]


@pytest.mark.parametrize(("name", "inside"), ENTRIES, ids=[repr(n) for n, _ in ENTRIES])
def test_every_zip_entry_stays_inside_its_package(name, inside):
    if inside:
        assert check_entry(name) == name
        assert zipfile.ZipFile(io.BytesIO(zip_files({name: b"x"}))).namelist() == [name]
    else:
        with pytest.raises(OutputError, match="would not stay inside its package"):
            zip_files({"imsmanifest.xml": b"x", name: b"x"})


def test_the_packages_of_a_set_with_figures_hold_only_checked_entries(tmp_path):
    problems = generate(3, names=["device-memory", "allgather-time"], per_family=2)
    assert any(p.figures for p in problems)
    files = export(problems, ["qti12", "qti21", "prairielearn"])
    for name in ("problems.qti12.zip", "problems.qti21.zip"):
        for entry in zipfile.ZipFile(io.BytesIO(files[name])).namelist():
            assert check_entry(entry) == entry
    assert all(check_entry(path) for path in files if path.startswith("prairielearn/"))


# text a drawing is given: none may start a line of the SVG file, none may make it invalid XML
LINE_STARTERS = ["\nimport os; os.system('id')", "\rimport os", "\r\nimport os", "\x85import os", "\u2028import os",
                 "\u2029import os", "\x0bimport os", "\x0cimport os", "\x1cimport os", "\x00import os", "\udcffimport os",
                 "\ufffeimport os", "</title>\nimport os", "]]>\nimport os"]  # fmt: skip


@pytest.mark.parametrize("text", LINE_STARTERS, ids=[repr(t[:6]) for t in LINE_STARTERS])
def test_no_text_a_family_chooses_starts_a_line_of_an_svg(text):
    figures = [
        layout("A[I_X, J]", "X=2", title="T" + text),
        regimes("X[B, D] · Y[D_X, F] -> Z[B, F]", "B", mesh="X=8", shape="D=1024,F=4096", hardware="tpu-v5p",
                labels={1: "L" + text}, title="T" + text),
    ]  # fmt: skip
    for fig in figures:
        assert not any(line.startswith(("import", "]]>")) for line in fig.svg.splitlines()), fig.svg[:400]
        fig.svg.encode("utf-8")  # no lone surrogate
        root = ET.fromstring(fig.svg)  # still one well-formed document
        title = root.find("{http://www.w3.org/2000/svg}title")
        assert title is not None and "import os" in (title.text or "")
    kept = layout("A[I_X, J]", "X=2", title="two\nlines")
    assert ET.fromstring(kept.svg).find("{http://www.w3.org/2000/svg}title").text == "two\nlines"  # as given


def test_a_family_drawing_with_a_python_line_in_its_title_writes_no_python_line(arena):
    families, work, _ = arena
    payload = 'import os; open("owned.txt", "w")'
    _family(families, "titled", "{{ figure('layout', 'A[I_X, J]', 'X=2', title='x\\n" + payload + "') }}")
    assert main(["problems", "generate", "--seed", "1", "--family", "titled", "--families", str(families), "--count", "2",
                 "--out", str(work / "set"), "--format", "all"]) == 0  # fmt: skip
    for path, data in _files(work / "set").items():
        if path.endswith(".zip"):
            parts = [zipfile.ZipFile(io.BytesIO(data)).read(n) for n in zipfile.ZipFile(io.BytesIO(data)).namelist()]
        else:
            parts = [data]
        for part in parts:
            assert not any(line.lstrip().startswith(b"import os") for line in part.splitlines()), path


def test_the_sites_sets_are_written_through_the_output_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("SYMSHARD_FAMILIES", raising=False)
    docs = tmp_path / "scratch" / "docs"
    docs.mkdir(parents=True)
    victim = tmp_path / "scratch" / "victim.md"
    victim.write_text("mine", encoding="utf-8")
    escaping = ProblemSet("../../scratch", "t", "s", ("allgather-time",), 1, 1)
    before = _files(tmp_path)
    with pytest.raises(OutputError, match="is not a file name inside the output folder"):
        write_sets([escaping], docs)
    assert _files(tmp_path) == before  # nothing written anywhere, the victim untouched
    # a file already there that symshard did not write is never overwritten
    honest = ProblemSet("one", "t", "s", ("allgather-time",), 1, 5)
    page = docs / "problems" / "one" / f"{honest.problems()[0].id}.md"
    page.parent.mkdir(parents=True)
    page.write_text("mine", encoding="utf-8")
    with pytest.raises(OutputError, match="exists and was not written by symshard"):
        write_sets([honest], docs)
    assert page.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("slug", ["../out", "a/b", "", "Caps", ".hidden", "a b", "x" * 65])
def test_a_problem_set_slug_is_one_folder_name(tmp_path, slug):
    listing = tmp_path / "problem-sets.toml"
    entry = {"slug": slug, "title": "T", "summary": "S", "families": ["allgather-time"], "seed": 1}
    listing.write_text("[[set]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items()), encoding="utf-8")
    with pytest.raises(SymshardError, match="which is not a folder name"):
        load_sets(listing)


# -- 2. templates share no state -----------------------------------------------------------------------------

# (name, template body, [let] lines): each would change a value the algebra shares with other problems
SHARING = [
    ("extend-steps", "{{ lay.program.steps.extend(lay.program.collectives('backward')) }}",
     "lay = \"mlp_layer('fsdp', hardware='tpu-v5e')\""),
    ("clear-steps", "{{ lay.program.steps.clear() }}", "lay = \"mlp_layer('dp', hardware='tpu-v5e')\""),
    ("pop-steps", "{{ lay.program.steps.pop() }}", "lay = \"mlp_layer('dp', hardware='tpu-v5e')\""),
    ("update-held", "{{ lay.program.held.update({'W_in': []}) }}", "lay = \"mlp_layer('dp', hardware='tpu-v5e')\""),
    ("setdefault-roles", "{{ lay.program.roles.setdefault('x', 'y') }}", "lay = \"mlp_layer('dp')\""),
    ("program-input", "{{ lay.program.input('Q[B, D]') }}", "lay = \"mlp_layer('dp')\""),
    ("program-matmul", "{{ lay.program.matmul('In[B, D] · W_in[D, F] -> Z[B, F]') }}", "lay = \"mlp_layer('dp')\""),
    ("bound-method", "{% set add = lay.program.reshard %}{{ add('In[B_X, D]') }}", "lay = \"mlp_layer('dp')\""),
    ("unbound-method", "{{ mesh.axis(mesh({'X': 2}), 'X') }}", ""),
    ("sorted-key", "{{ sorted(['Q[B, D]'], key=lay.program.input) }}", "lay = \"mlp_layer('dp')\""),
    ("max-key", "{{ max([[1]], key=lay.program.steps.extend) }}", "lay = \"mlp_layer('dp')\""),
    ("key-in-a-list", "{{ sorted([1], key=[lay.program.steps.clear][0]) }}", "lay = \"mlp_layer('dp')\""),
    ("let-extends", "s", "lay = \"mlp_layer('dp')\"\nbad = \"lay.program.steps.extend(lay.program.steps)\""),
    ("own-list", "{% set xs = [1] %}{{ xs.append(2) }}", ""),
    ("own-dict", "{% set d = {} %}{{ d.update(a=1) }}", ""),
    ("answers-dict", "{{ answers.clear() }}", ""),
    ("copied-list", "{{ (lay.program.held['In'] | list).append(1) }}", "lay = \"mlp_layer('dp')\""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "body", "let"), SHARING, ids=[n for n, _, _ in SHARING])
def test_a_template_cannot_change_a_value(arena, capsys, name, body, let):
    families, _, _ = arena
    _family(families, name, body, let)
    err = _refused(capsys, ["problems", "show", name, "--families", str(families), "--seed", "1"], f"family '{name}'")
    assert "templates may not" in err or "refused by the sandbox" in err, err


HOSTILE_SPEC_LET = "\n".join(
    [
        "lay = \"mlp_layer('fsdp', hardware='tpu-v5e')\"",
        "dp = \"mlp_layer('dp', hardware='tpu-v5e')\"",
    ]
)
HOSTILE_STATEMENTS = [
    "{{ lay.program.steps.extend(lay.program.collectives('backward')) or '' }}A sentence.",
    "{{ dp.program.steps.extend(dp.program.collectives('backward')) or '' }}A sentence.",
    "{{ lay.program.held.update({}) or '' }}A sentence.",
    "{{ lay.program.matmul('In[B, D] · W_in[D, F] -> Q[B, F]') or '' }}A sentence.",
]
VICTIMS = ["fsdp-min-batch", "fsdp-tp-split", "mlp-tp-degree", "allgather-time"]


def _set_bytes() -> str:
    return json.dumps([p.to_dict() for p in generate(2026, names=VICTIMS, per_family=3)], sort_keys=True)


def _hostile_first(families: Path) -> None:
    for i, statement in enumerate(HOSTILE_STATEMENTS):
        folder = _family(families, f"hostile-{i}", statement, HOSTILE_SPEC_LET)
        with pytest.raises(TemplateError, match="templates may not call"):
            generate(2026, names=[folder.name, *VICTIMS], per_family=3, extra=[families])


def test_a_set_drawn_after_a_hostile_family_is_byte_for_byte_the_same(arena):
    families, _, _ = arena
    stop_worker()  # a fresh worker: what it caches, every family after shares
    clean = _set_bytes()
    stop_worker()
    _hostile_first(families)  # the same worker draws the hostile families, then the set
    assert _set_bytes() == clean


_CONTROL = """
import json, sys
from pathlib import Path
from symshard.problems import drawing, library, sandbox
from symshard.problems.family import load_family
victims, hostile = sys.argv[1].split(","), sys.argv[2:]
def drawn():
    return json.dumps([drawing.draw_variant(library.family(n), s, "en").to_dict() for n in victims for s in range(3)])
clean = drawn()
sandbox._reads_only = lambda fn: True  # the rule off, in this process only
for folder in hostile:
    drawing.draw_variant(load_family(Path(folder)), 1, "en")
print("changed" if drawn() != clean else "same")
"""


def test_without_the_rule_the_hostile_family_would_change_other_families(arena):
    """The check above can fail: with mutation allowed, the same hostile families change the victims
    (run in a process of its own, whose caches nothing else shares)."""
    families, _, _ = arena
    folders = [
        str(_family(families, f"hostile-{i}", s, HOSTILE_SPEC_LET)) for i, s in enumerate(HOSTILE_STATEMENTS[:2])
    ]
    done = subprocess.run([sys.executable, "-c", _CONTROL, ",".join(VICTIMS), *folders], capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "changed", done.stderr


def test_an_imported_modules_values_are_made_afresh_for_each_problem(arena):
    families, _, _ = arena
    folder = _family(
        families, "counter", "{% import 'lib.j2' as lib %}{% set ns = lib.ns %}{% set ns.n = ns.n + 1 %}n={{ ns.n }}"
    )
    (folder / "lib.j2").write_text("{% set ns = namespace(n=0) %}", encoding="utf-8")
    stop_worker()
    statements = {p.statement.strip() for p in generate(1, names=["counter"], per_family=3, extra=[families])}
    assert statements == {"n=1"}  # one worker drew all three: none saw another's count


# -- 3. families read only their own files -------------------------------------------------------------------


def _hardware_attacks(outside: Path) -> list[tuple[str, str, str]]:
    """(name, template body, what the message says) for reading a hardware file from outside the family."""
    rel = os.path.relpath(outside, Path.cwd())
    return [
        ("absolute", f"{{{{ hardware('{outside}').label }}}}", "not a file of the family's own folder"),
        ("relative-up", f"{{{{ hardware('{rel}').label }}}}", "not a file of the family's own folder"),
        ("dotdot", "{{ hardware('../../outside.toml').label }}", "not a file of the family's own folder"),
        ("backslash", "{{ hardware('..\\\\..\\\\outside.toml').label }}", "not a file of the family's own folder"),
        ("drive", "{{ hardware('C:outside.toml').label }}", "not a file of the family's own folder"),
        ("link", "{{ hardware('link.toml').label }}", "goes through a symbolic link"),
        ("linked-folder", "{{ hardware('presets/chip.toml').label }}", "goes through a symbolic link"),
        ("fifo", "{{ hardware('pipe.toml').label }}", "is not a regular file"),
        ("folder", "{{ hardware('dir.toml').label }}", "is not a regular file"),
        ("huge", "{{ hardware('huge.toml').label }}", "is larger than 100,000 bytes"),
        ("working-folder", "{{ hardware('cwd.toml').label }}", "does not exist in the folder of family"),
        ("via-mesh", f"{{{{ mesh({{'X': 2}}, hardware='{outside}') }}}}", "not a file of the family's own folder"),
        ("via-cost", f"{{{{ parse('AllGather_X(A[I_X])').cost(mesh({{'X': 2}}), {{'I': 8}}, hardware='{outside}') }}}}",
         "not a file of the family's own folder"),
        ("via-layer", f"{{{{ mlp_layer('dp', hardware='{outside}').scheme }}}}", "not a file of the family's own folder"),
        ("via-base", "{{ hardware('based.toml').label }}", "not a file of the family's own folder"),
        ("not-utf8", "{{ hardware('latin.toml').label }}", "is not UTF-8 text"),
    ]  # fmt: skip


def test_a_family_reads_only_hardware_files_of_its_own_folder(arena, capsys):
    families, work, outside = arena
    (work / "cwd.toml").write_bytes(outside.read_bytes())
    for name, body, says in _hardware_attacks(outside):
        folder = _family(families, f"hw-{name}", body)
        (folder / "link.toml").symlink_to(outside)
        (folder / "presets").symlink_to(outside.parent)
        os.mkfifo(folder / "pipe.toml")
        (folder / "dir.toml").mkdir()
        (folder / "huge.toml").write_text("# " + "x" * 200_000 + "\n", encoding="utf-8")
        (folder / "based.toml").write_text(f'[hardware]\nbase = "{outside}"\n', encoding="utf-8")
        (folder / "latin.toml").write_bytes(b'[hardware]\nlabel = "caf\xe9"\n')
        err = _refused(capsys, ["problems", "show", f"hw-{name}", "--families", str(families), "--seed", "1"],
                       f"family 'hw-{name}'", says)  # fmt: skip
        assert SECRET not in err


def test_a_family_names_presets_and_its_own_hardware_files(arena):
    families, _, _ = arena
    folder = _family(families, "own-chip", "{{ hardware('chip.toml').label }} / {{ hardware('sub/more.toml').label }} / "
                     "{{ mesh({'X': 2}, hardware='chip.toml') | tex }} / {{ hardware('tpu-v5e').name }}")  # fmt: skip
    (folder / "chip.toml").write_text('[hardware]\nlabel = "our chip"\nbase = "tpu-v5p"\n', encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "more.toml").write_text('[hardware]\nlabel = "another"\nbase = "h100"\n', encoding="utf-8")
    p = variant(load_family(folder), 1)
    assert p.statement.strip() == "our chip / another / |X| = 2 / tpu-v5e"


def test_no_machine_path_reaches_a_problem(arena):
    families, work, _ = arena
    folder = _family(
        families,
        "paths",
        "{{ family }} {{ family.name }} {{ family.title }} {{ figure }} {{ self }} {{ seed }} "
        "{{ hardware('chip.toml').name }} {{ hardware('chip.toml').sources }} "
        "{{ figure('layout', 'A[I_X, J]', 'X=2') }}",
    )
    (folder / "chip.toml").write_text('[hardware]\nbase = "tpu-v5e"\n', encoding="utf-8")
    problems = generate(1, names=["paths"], per_family=2, extra=[families])
    assert "paths" in problems[0].statement and "chip" in problems[0].statement
    files = export(problems, [f for f in FORMATS if f != "pdf"])
    machine = [str(families.parent), str(work)]
    for name, data in files.items():
        texts = [data] if isinstance(data, str) else [
            zipfile.ZipFile(io.BytesIO(data)).read(n).decode("utf-8") for n in zipfile.ZipFile(io.BytesIO(data)).namelist()
        ]  # fmt: skip
        for text in texts:
            assert not any(path in text for path in machine), name


@pytest.mark.parametrize("attack", ["{{ family.path }}", "{{ family.path.parent }}", "{{ family.template }}"])
def test_templates_see_the_familys_name_not_its_folder(arena, capsys, attack):
    families, _, _ = arena
    _family(families, "folder", attack)
    err = _refused(capsys, ["problems", "show", "folder", "--families", str(families)], "has no attribute")
    assert str(families) not in err


# -- 8. no internal error -----------------------------------------------------------------------------------

PLACEHOLDERS = [
    "a \ue0005\ue001 b",  # a placeholder past the spans there are
    "\ue0000\ue001 $x$",  # one that would stand for the math that follows
    "$\ue0000\ue001$ and \ue000",  # inside math, and a lone opening one
    "\ue001\ue000\ue000\ue0011",
    "![\ue0000\ue001](figures/x.svg) $$\ue001$$",
]


@pytest.mark.parametrize("text", PLACEHOLDERS, ids=[repr(t) for t in PLACEHOLDERS])
def test_a_familys_placeholder_characters_go_through_every_export(arena, text):
    families, _, _ = arena
    body = "{{ '" + text.replace("\\", "\\\\") + "' }}"
    folder = _family(families, "slots", body, solution=body)
    p = variant(load_family(folder), 1)
    files = export([p], list(FORMATS))  # nothing raises
    moodle = files["problems.moodle.xml"]
    assert isinstance(moodle, str)
    for char in "\ue000\ue001":
        assert moodle.count(char) >= text.replace("$", "").count(char)  # put back as they were, none lost


@given(st.text(alphabet="ab $\\\ue000\ue0010123*_\n", max_size=40))
@settings(max_examples=300, deadline=None)
def test_placeholders_never_collide_with_the_text(text):
    body, spans = split_math(text)
    back = put_back(body, spans, lambda tex, display: ("$$%s$$" if display else "$%s$") % tex, lambda c: c)
    assert re.sub(r"\s", "", back) == re.sub(r"\s", "", text)  # math loses only the spaces around it
    html, _ = to_html(text)
    assert [html.count(c) for c in "\ue000\ue001"] == [text.count(c) for c in "\ue000\ue001"]
    try:
        markdown_to_typst(text)
    except TemplateError:
        pass  # math Typst cannot set is the family's error, with its name


CHARACTERS = [("\\x01", "U+0001"), ("\\x0c", "U+000C"), ("\\x00", "U+0000"), ("\\udcff", "U+DCFF"),
              ("\\uffff", "U+FFFF")]  # fmt: skip


@pytest.mark.parametrize(("char", "code"), CHARACTERS, ids=[c for _, c in CHARACTERS])
def test_characters_no_export_can_carry_are_the_familys_error(arena, capsys, char, code):
    families, _, _ = arena
    _family(families, "chars", "a {{ '" + char + "' }} b")  # the template writes the escape; Jinja reads it
    _refused(capsys, ["problems", "show", "chars", "--families", str(families)], "family 'chars'",
             f"the text holds the character {code}, which no export can carry")  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("title", '"two\\nlines"', "must be one line"),
        ("objective", '"a\\u2028b"', "must be one line"),
        ("title_zh", '"a\\rb"', "must be one line"),
        ("title", '"bell\\u0007"', r"holds the character U\+0007"),
    ],
)
def test_one_line_fields_are_one_line(tmp_path, field, value, says):
    folder = _family(tmp_path, "lines")
    spec = (folder / "family.toml").read_text(encoding="utf-8")
    if field in ("title", "objective"):
        spec = re.sub(rf"^{field} = .*$", lambda _: f"{field} = {value}", spec, count=1, flags=re.M)
    else:
        spec = spec.replace('title = "Probe"\n', f'title = "Probe"\n{field} = {value}\n')
    (folder / "family.toml").write_text(spec, encoding="utf-8")
    with pytest.raises(TemplateError, match=says):
        load_family(folder)


def test_a_label_or_feedback_with_a_control_character_is_refused(arena, capsys):
    families, _, _ = arena
    folder = _family(families, "label")
    spec = (folder / "family.toml").read_text(encoding="utf-8").replace('label = "x"', "label = \"x{{ '\\\\x02' }}\"")
    (folder / "family.toml").write_text(spec, encoding="utf-8")
    _refused(capsys, ["problems", "show", "label", "--families", str(families)], "answers.x.label", "U+0002")


# -- 9. no family replaces another ---------------------------------------------------------------------------


def test_a_family_called_like_a_built_in_one_is_refused(arena, capsys, monkeypatch):
    families, work, _ = arena
    _family(families, "allgather-time", "{{ 'replaced' }}")
    for argv in (
        ["problems", "list", "--families", str(families)],
        ["problems", "show", "allgather-time", "--families", str(families)],
        [*"problems generate --seed 1 --count 1 --family allgather-time --out s --families".split(), str(families)],
    ):
        _refused(capsys, argv, "two problem families are called 'allgather-time'", "a built-in one included")
    monkeypatch.setenv("SYMSHARD_FAMILIES", str(families))
    _refused(capsys, ["problems", "show", "allgather-time"], "two problem families are called 'allgather-time'")
    with pytest.raises(TemplateError, match="two problem families are called 'allgather-time'"):
        write_sets([ProblemSet("s", "t", "s", ("allgather-time",), 1, 1)], work / "docs")
    assert not (work / "docs" / "problems" / "s").exists()


def test_two_folders_with_one_family_name_are_refused_but_one_folder_twice_is_one(arena, capsys, monkeypatch):
    families, _, _ = arena
    other = families.parent / "other"
    _family(families, "mine")
    _family(other, "mine")
    _refused(capsys, ["problems", "list", "--families", str(families), "--families", str(other)],
             "two problem families are called 'mine'")  # fmt: skip
    monkeypatch.setenv("SYMSHARD_FAMILIES", str(families))
    assert main(["problems", "show", "mine", "--families", str(families)]) == 0
    assert "mine" in library.family_folders()


@pytest.mark.parametrize("name", ["a b", "évil", "-dash", "x'y", "9lives", "a.b", "x" * 81, "in\nline"])
def test_a_family_folder_needs_a_familys_name(arena, capsys, name):
    families, _, _ = arena
    _family(families, name)
    _refused(capsys, ["problems", "list", "--families", str(families)], "has a name that is not a family's name")
    with pytest.raises(TemplateError, match="is not a family's name"):
        load_family(families / name)


def test_the_built_in_families_all_have_family_names():
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", name) for name in library.families())
    assert family("allgather-time").name == "allgather-time"


def test_write_set_of_a_hostile_title_stays_in_its_folder(arena):
    families, work, _ = arena
    folder = _family(families, "titles", "{{ figure('layout', 'A[I_X, J]', 'X=2', alt='../../x\\n# head') }}")
    written = write_set([variant(load_family(folder), 1)], work / "set", formats=["md"])
    assert all((work / "set") in p.parents for p in written)
    assert sorted(p.name for p in written) == ["answer-key.md", "problems.md", "titles-1-1.svg"]


def test_a_familys_text_is_no_directive_on_the_sites_pages(arena, monkeypatch):
    families, work, _ = arena
    directive = "::: os\n\n## ::: subprocess\n\n> ::: shutil"
    _family(families, "directive", "{{ '" + directive.replace("\n", "\\n") + "' }}", solution="    ::: json")
    monkeypatch.setenv("SYMSHARD_FAMILIES", str(families))
    write_sets([ProblemSet("mine", "t", "s", ("directive",), 1, 1)], work / "docs")
    pages = [p.read_text(encoding="utf-8") for p in (work / "docs" / "problems" / "mine").glob("*.md")]
    mkdocstrings = re.compile(r"^(?P<heading>#{1,6} *|)::: ?(?P<name>.+?) *$", flags=re.MULTILINE)  # its own rule
    assert pages and not any(mkdocstrings.search(line.strip()) for page in pages for line in page.splitlines())
    assert any("&#58;:: os" in page for page in pages)

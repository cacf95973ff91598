"""Safe by construction: families written by strangers, and every command, cannot hurt the user.

What is checked here, each as an attacker would try it:

* **No evaluation of text.** Code passed as text to every callable and filter a family can
  reach is refused (never run); the package's source calls no ``eval``, ``exec``,
  ``sympify`` or ``parse_expr`` except where listed below with its reason.
* **Only symshard's values are open.** Dunder chains, paths, modules and file-writing
  methods are refused.
* **Files stay where they belong.** Includes of absolute paths, ``..``, symbolic links,
  FIFOs and devices are refused; ``site build`` and ``problems generate`` never delete or
  change a file they did not write.
* **Bounded work.** Loops, string and integer bombs, recursion and ``lipsum`` stop within
  the budget, none past 5 s, none allocating past the memory limit, none writing a file.
* **No traceback.** Every failure of every command is one line (or one JSON object).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import probe_family_toml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symshard.algebra.mathtext import MAX_DIGITS, as_expr, as_substitution, parse_math, parse_number
from symshard.algebra.symbols import C, T_hop, W_ici, axis, dim
from symshard.cli import main
from symshard.errors import BudgetError, NotationError, OutputError, SymshardError, TemplateError
from symshard.outputs.bookkeeping import MANIFEST
from symshard.outputs.folder import OutputFolder
from symshard.problems.budget import Budget, run, stop_worker
from symshard.problems.family import key_positions, load_family

ROOT = Path(__file__).parents[1]

SPEC = probe_family_toml(let="{let}")  # "{let}" is replaced by each test

CODE = "__import__('os').system('touch owned.txt')"
"""A shell command as text: if anything evaluates it, owned.txt appears in the working folder."""


def _family(root: Path, name: str, template: str = "", let: str = "", spec: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "family.toml").write_text(spec if spec is not None else SPEC.replace("{let}", let), encoding="utf-8")
    body = template or "s"
    (folder / "problem.md.j2").write_text(
        "{% block statement %}" + body + "{% endblock %}{% block solution %}s{% endblock %}", encoding="utf-8"
    )
    return folder


def _snapshot(*folders: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for folder in folders:
        for p in folder.rglob("*"):
            if p.is_file() and not p.is_symlink():
                st_ = p.stat()
                out[str(p)] = (st_.st_size, st_.st_mtime_ns)
    return out


# -- the attacks -----------------------------------------------------------------------------------
# (name, template body, [let] lines): each must be refused with one line, quickly, writing nothing.

ATTACKS: list[tuple[str, str, str]] = [
    # code as text, handed to every callable and filter that reads numbers or formulas
    ("margin-text", f'{{{{ margin("{CODE}", 1) }}}}', ""),
    ("simplify-text", f'{{{{ simplify("{CODE}") }}}}', ""),
    ("factor-text", f'{{{{ factor("{CODE}") }}}}', ""),
    ("rational-text", f'{{{{ Rational("{CODE}") }}}}', ""),
    ("math-text", f'{{{{ math("{CODE}") }}}}', ""),
    ("tex-filter", f'{{{{ "{CODE}" | tex }}}}', ""),
    ("text-filter", f'{{{{ "{CODE}" | text }}}}', ""),
    ("texnum-filter", f'{{{{ "{CODE}" | texnum }}}}', ""),
    ("num-filter", f'{{{{ "{CODE}" | num }}}}', ""),
    ("seconds-filter", f'{{{{ "{CODE}" | seconds }}}}', ""),
    ("bytes-filter", f'{{{{ "{CODE}" | bytes }}}}', ""),
    ("mesh-size-text", f"{{{{ mesh({{'X': \"{CODE}\"}}) }}}}", ""),
    ("place-shape-text", f"{{{{ place('A[I_X]', 'X=2', {{'I': \"{CODE}\"}}) }}}}", ""),
    ("sympy-subs-text", f'{{{{ C.subs("{CODE}", 1) }}}}', ""),
    ("sympy-subs-dict-text", f'{{{{ C.subs({{"{CODE}": 1}}) }}}}', ""),
    ("sympy-equals-text", f'{{{{ W_ici.equals("{CODE}") }}}}', ""),
    ("sympy-diff-text", f'{{{{ (C * 2).diff("{CODE}") }}}}', ""),
    ("cost-subs-text", f"{{{{ parse('AllGather_Y([E_Y, F])').cost().subs({{\"{CODE}\": 1}}) }}}}", ""),
    ("let-margin-text", "s", f'bad = "margin(\\"{CODE}\\", 1)"'),
    ("let-subs-text", "s", f'bad = "T_hop.subs(\\"{CODE}\\", 1)"'),
    # dunder chains and objects that lead out of the algebra
    ("dunder-class", "{{ n.__class__ }}", ""),
    ("dunder-mro", "{{ ''.__class__.__mro__[1].__subclasses__() }}", ""),
    ("dunder-globals", "{{ parse.__globals__ }}", ""),
    ("dunder-init-globals", "{{ mesh.__init__.__globals__['os'] }}", ""),
    ("sympy-func-module", "{{ C.func.__module__ }}", ""),
    ("cycler-globals", "{{ cycler.__init__.__globals__ }}", ""),
    ("attr-filter-dunder", "{{ n | attr('__class__') }}", ""),
    ("getitem-dunder", "{{ n['__class__'] }}", ""),
    ("path-read", "{{ family.path.joinpath('/etc/passwd').read_text() }}", ""),
    ("path-write", "{{ family.path.joinpath('owned.txt').write_text('x') }}", ""),
    ("figure-save", "{{ figure('layout', 'A[I_X, J]', 'X=2') }}{{ figure.items[0][1].save('owned.svg') }}", ""),
    ("open-builtin", "{{ open('/etc/passwd').read() }}", ""),
    ("import-builtin", "{{ __import__('os') }}", ""),
    # format strings
    ("format-attribute", "{{ '{0.__class__}'.format(n) }}", ""),
    ("format-width", "{{ '{:>999999999}'.format(1) }}", ""),
    ("format-nested-width", "{{ '{:{w}}'.format(1, w=10**9) }}", ""),
    ("percent-width", "{{ '%0999999999d' % 1 }}", ""),
    ("percent-star", "{{ '%*d' % (999999999, 1) }}", ""),
    ("format-filter", "{{ '%0999999999d' | format(1) }}", ""),
    # includes that leave the family's folder
    ("include-absolute", "{% include '/etc/passwd' %}", ""),
    ("include-dotdot", "{% include '../../../../etc/passwd' %}", ""),
    ("include-link", "{% include 'leak.txt' %}", ""),
    ("import-link", "{% import 'leak.txt' as leak %}{{ leak }}", ""),
    ("include-fifo", "{% include 'pipe' %}", ""),
    ("import-os", "{% import 'os' as os %}{{ os }}", ""),
    # unbounded work: loops, text, numbers, recursion
    ("nested-loops", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", ""),
    ("huge-range", "{% for i in range(10**12) %}{% endfor %}", ""),
    ("lipsum", "{{ lipsum(n=20000, min=1000, max=1001) }}", ""),
    ("random-filter", "{{ [1, 2, 3] | random }}", ""),
    ("string-bomb", "{{ 'A' * 10**10 }}", ""),
    ("list-bomb", "{{ ['A'] * 10**9 }}", ""),
    ("center-bomb", "{{ 'a' | center(10**9) }}", ""),
    ("indent-bomb", "{{ 'a\nb' | indent(width=10**9) }}", ""),
    (
        "doubling-bomb",
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "",
    ),
    ("power-bomb", "{{ (7**1000000)**1000 }}", ""),
    ("power-tower", "{{ 10 ** (10 ** 10) }}", ""),
    ("symbolic-power-bomb", "{{ (dim('x')**100000).subs(dim('x'), 7) }}", ""),
    ("grammar-power-bomb", "{{ math('9**9**9') }}", ""),
    ("grammar-number-bomb", "{{ math('1e999999999') }}", ""),
    ("grammar-nesting", "{{ math('(' * 5000 + '1' + ')' * 5000) }}", ""),
    ("c-level-power", "{{ (dim('x')**9999).subs(dim('x'), 7**9999) }}", ""),
    ("recursion", "{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}", ""),
    (
        "let-plan-bomb",
        "s",
        # every one of the 118,206 valid strategies of an 8-axis mesh (those that can win come in well under a second)
        "slow = \"plan('A[I, J] · B[J, K] -> C[I, K]', mesh({'P': 2, 'Q': 2, 'R': 2, 'S': 2, 'T': 2, 'U': 2, 'V': 2, 'W': 2}), all=true)\"",
    ),
    ("let-power", "s", 'big = "(7 ** 1000000) ** 1000"'),
]


@pytest.fixture
def arena(tmp_path, monkeypatch):
    """A folder of families (with a link to /etc/passwd and a FIFO beside them) and a clean working folder."""
    families = tmp_path / "families"
    families.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return families, work


def test_there_are_at_least_forty_attacks():
    assert len(ATTACKS) >= 40
    assert len({name for name, _, _ in ATTACKS}) == len(ATTACKS)


@pytest.mark.parametrize(("name", "body", "let"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_every_attack_is_refused_quickly_in_one_line_and_writes_nothing(arena, capsys, name, body, let):
    families, work = arena
    folder = _family(families, name, body, let)
    (folder / "leak.txt").symlink_to("/etc/passwd")
    os.mkfifo(folder / "pipe")
    before = _snapshot(families, work)
    started = time.perf_counter()
    code = main(["problems", "show", name, "--families", str(families), "--seed", "1", "--time-limit", "2",
                 "--memory-limit", "256MiB"])  # fmt: skip
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    assert code == 2, out
    assert out == "" and err.startswith("symshard: error: ") and err.count("\n") == 1, err
    assert f"family '{name}'" in err
    assert elapsed < 5, f"{name} took {elapsed:.1f} s"
    assert _snapshot(families, work) == before, "the attack wrote or changed a file"
    assert not list(work.iterdir()) and not (folder / "owned.txt").exists()


def test_the_messages_say_what_was_refused(arena, capsys):
    families, _ = arena
    expected = {
        "margin-text": "refused by the sandbox: margin() cannot read",
        "sympy-subs-text": "SymPy's Basic.subs() was given the text",
        "path-read": "'symshard.problems.drawing.FamilyInfo object' has no attribute 'path'",  # no path to read
        "figure-save": "'symshard.problems.figures.Drawer object' has no attribute 'items'",  # no figure to reach
        "string-bomb": "repeating text of 1 character",
        "power-bomb": "would be a number of about 1e+06 digits",
        "include-link": "goes through a symbolic link",
        "include-fifo": "is not a regular file",
        "nested-loops": "ran longer than its time limit of 2 s",
        "doubling-bomb": "needed more than its memory limit of 256 MiB",
        "recursion": "recursed too deeply",
        "lipsum": "'lipsum' is undefined",
        "let-margin-text": "family.toml line 12 (let.bad): refused by the sandbox",
    }
    by_name = {name: (body, let) for name, body, let in ATTACKS}
    for name, fragment in expected.items():
        folder = _family(families, name, *by_name[name])
        if name == "include-link":
            (folder / "leak.txt").symlink_to("/etc/passwd")
        if name == "include-fifo":
            os.mkfifo(folder / "pipe")
        assert main(["problems", "show", name, "--families", str(families), "--time-limit", "2",
                     "--memory-limit", "256MiB"]) == 2  # fmt: skip
        err = capsys.readouterr().err
        assert fragment in err, (name, err)


def test_linked_family_files_and_folders_are_not_followed(tmp_path, capsys):
    families = tmp_path / "families"
    real = _family(tmp_path / "elsewhere", "real")
    families.mkdir()
    (families / "linked").symlink_to(real)  # a family folder that is a link: not a family here
    spec_link = _family(families, "spec-link")
    (spec_link / "family.toml").unlink()
    (spec_link / "family.toml").symlink_to(real / "family.toml")
    template_link = _family(families, "template-link")
    (template_link / "problem.md.j2").unlink()
    (template_link / "problem.md.j2").symlink_to(real / "problem.md.j2")
    assert main(["problems", "show", "linked", "--families", str(families)]) == 2
    assert "unknown problem family 'linked'" in capsys.readouterr().err
    for name, file in (("spec-link", "family.toml"), ("template-link", "problem.md.j2")):
        assert main(["problems", "show", name, "--families", str(families)]) == 2
        assert f"{file}: is a link or not a regular file" in capsys.readouterr().err


def test_a_family_from_any_folder_runs_on_the_same_budget(tmp_path):
    slow = _family(
        tmp_path / "f", "slow", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    )
    from symshard.problems import variant

    started = time.perf_counter()
    with pytest.raises(BudgetError, match=r"family 'slow' \(seed 3\) ran longer than its time limit of 1 s"):
        variant(load_family(slow), 3, budget=Budget(seconds=1))
    assert time.perf_counter() - started < 3


def test_the_environment_sets_the_default_budget(monkeypatch):
    monkeypatch.setenv("SYMSHARD_TIME_LIMIT", "2.5 s")
    monkeypatch.setenv("SYMSHARD_MEMORY_LIMIT", "1 GiB")
    assert Budget.from_environment() == Budget(2.5, 2**30)
    assert Budget.of(memory="300 MB") == Budget(2.5, 300 * 10**6)
    for bad in ("0", "-1", "1e999", "soon"):
        with pytest.raises(TemplateError):
            Budget.of(seconds=bad)
    with pytest.raises(TemplateError, match="between 64 MiB and 16 TiB"):
        Budget.of(memory="1 KiB")


def _grab(step: int) -> int:
    """Allocate ``step`` bytes at a time until memory runs out; how much was held at most."""
    held = []
    try:
        while True:
            held.append(bytearray(step))
    except MemoryError:
        total = len(held) * step
        held.clear()
        return total


def test_the_memory_limit_holds():
    limit = 256 * 2**20
    got = run(_grab, (16 * 2**20,), Budget(seconds=20, memory=limit), what="a greedy task")
    assert 0 < got <= limit


def _spin(seconds: float) -> int:
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def test_the_time_limit_holds_and_the_next_task_runs():
    started = time.perf_counter()
    with pytest.raises(BudgetError, match="ran longer than its time limit of 1 s"):
        run(_spin, (30.0,), Budget(seconds=1), what="a spinning task")
    assert time.perf_counter() - started < 2.5
    assert run(_spin, (0.01,), Budget(seconds=5), what="a short task") > 0


def test_a_caller_with_threads_gets_a_fresh_interpreter(tmp_path):
    """Forking a process with threads is unsafe: such a caller's worker is a new interpreter, and a
    script without a ``__main__`` guard is not run again by it (multiprocessing's spawn would)."""
    script = tmp_path / "threaded.py"
    script.write_text(
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "from symshard.errors import BudgetError\n"
        "from symshard.problems import budget, family, variant\n"
        "print(variant(family('allgather-time'), 7).answer('time').show)\n"
        "print(budget._WORKER.popen is not None)\n"
        "try:\n"
        "    budget.run(time.sleep, (60,), budget.Budget(seconds=1), what='a nap')\n"
        "except BudgetError as err:\n"
        "    print(err.message)\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "5.87 ms",
        "True",
        "a nap ran longer than its time limit of 1 s and was stopped",
    ]


def test_sympy_parses_only_its_own_modules_in_the_worker():
    """In the worker SymPy's parser is off for text a family hands it, but not for SymPy's own modules,
    which parse names while they are imported (sympy.physics.units, reached by sympy.solve)."""
    import sympy

    from symshard.models.schemes import fsdp_tp_split

    stop_worker()
    assert str(run(fsdp_tp_split, (), Budget(), what="the split").min_batch_per_chip) == "C**2/(F*M_X*M_Y*W_ici**2)"
    with pytest.raises(TemplateError, match="text parser is switched off"):
        run(sympy.sympify, ("1 + 1",), Budget(), what="a text")


def test_the_worker_cannot_grow_files(tmp_path):
    with pytest.raises(OSError):
        run(Path.write_text, (tmp_path / "x.txt", "hello"), Budget(), what="a write")
    stop_worker()  # a fresh worker is started on demand
    assert run(pow, (3, 3), Budget(), what="a power") == 27


# -- family.toml is checked like code ------------------------------------------------------------

SPEC_ERRORS = [
    # (what to change, the message, line and column)
    (
        ("[params.n]\nchoices = [1, 2, 3]", '[params.n]\nrange = "abc"'),
        r"\[params.n\] range 'abc' is not \[lo, hi\]",
        (8, 1),
    ),
    (('tags = ["probe"]', 'tags = "bad"'), "tags must be a non-empty list of words, not text", (4, 1)),
    (('tags = ["probe"]', "tags = []"), "tags must be a non-empty list of words", (4, 1)),
    (("rel_tol = 0", "rel_tool = 0"), "answers\\[0\\] has no key 'rel_tool'; hint: did you mean 'rel_tol'", (18, 1)),
    (('title = "Probe"', "title = 3"), r"\[family\].title must be text, not a whole number", (2, 1)),
    (('twice = "2 * n"', "twice = 2"), "let.twice must be an expression in a string", (11, 1)),
    (('unit = "count"', 'unit = "parsec"'), "answers\\[0\\] unit 'parsec' is not one of", (17, 1)),
    (
        ("[params.n]\nchoices = [1, 2, 3]", "[params.n]\nrange = [1, 5]\nstep = 0"),
        "step 0 is not a whole number",
        (9, 1),
    ),
    (("[params.n]\nchoices = [1, 2, 3]", "[params.n]\nchoices = [1]\nstep = 2"), "step goes with range", (9, 1)),
    (
        ("[params.n]\nchoices = [1, 2, 3]", "[params.n]\nrange = [1, 5]\npowers_of_two = 1"),
        "powers_of_two must be true or false",
        (9, 1),
    ),
    (
        ("[params.n]\nchoices = [1, 2, 3]", "[params.n]\nchocies = [1, 2]"),
        "has no key 'chocies'; hint: did you mean 'choices'",
        (8, 1),
    ),
    (('title = "Probe"', 'title = "Probe"\ntitle_zh = 5'), r"\[family\].title_zh must be text", (3, 1)),
    (("[family]", "[familly]"), r"unknown table \[familly\]; hint: did you mean 'family'", (1, 1)),
    (('difficulty = "easy"', 'difficulty = "tough"'), "difficulty 'tough' is not one of easy, medium, hard", (3, 1)),
    (("rel_tol = 0", "rel_tol = 2"), "rel_tol 2 is not a fraction", (18, 1)),
    (("rel_tol = 0", 'rel_tol = "low"'), "rel_tol 'low' is not a fraction", (18, 1)),
]


@pytest.mark.parametrize(("change", "message", "where"), SPEC_ERRORS, ids=[m[:30] for _, m, _ in SPEC_ERRORS])
def test_spec_errors_give_the_line_and_column(tmp_path, change, message, where):
    spec = SPEC.replace("{let}", "").replace(*change)
    folder = _family(tmp_path, "probe", spec=spec)
    with pytest.raises(TemplateError) as info:
        load_family(folder)
    line = info.value.one_line()
    assert line.startswith(f"family 'probe', family.toml line {where[0]}, column {where[1]}: "), line
    assert re.search(message, line), line


def test_unknown_tables_and_mistake_keys(tmp_path):
    spec = SPEC.replace("{let}", "") + '\n[[answers.mistakes]]\nvalue = "3 * n"\nfeedbak = "x"\n\n[bogus]\nx = 1\n'
    with pytest.raises(TemplateError, match=r"line 24, column 1: has an unknown table \[bogus\]"):
        load_family(_family(tmp_path, "a", spec=spec))
    spec = SPEC.replace("{let}", "") + '\n[[answers.mistakes]]\nvalue = "3 * n"\nfeedbak = "x"\n'
    with pytest.raises(TemplateError, match=r"line 22, column 1: answers\[0\].mistakes\[0\] has no key 'feedbak'"):
        load_family(_family(tmp_path, "b", spec=spec))


def test_huge_or_binary_specs_are_refused(tmp_path):
    big = _family(tmp_path, "big", spec=SPEC.replace("{let}", "") + "# " + "x" * 1_000_001 + "\n")
    with pytest.raises(TemplateError, match="is at most 1,000,000 bytes"):
        load_family(big)
    binary = _family(tmp_path, "binary")
    (binary / "family.toml").write_bytes(b"\xff\xfe[family]\n")
    with pytest.raises(TemplateError, match="is not UTF-8 text"):
        load_family(binary)


def test_key_positions_follow_multi_line_values():
    text = 'a = """\n[not.a.table]\nb = 1\n"""\nc = [\n  1,\n  2,\n]\n[t]\nd = 1\n[[arr]]\ne = 1\n[[arr]]\ne = 2\n'
    found = key_positions(text)
    assert found[("a",)] == (1, 1) and found[("c",)] == (5, 1)
    assert ("not", "a", "table") not in found and ("b",) not in found
    assert found[("t", "d")] == (10, 1)
    assert found[("arr", 0, "e")] == (12, 1) and found[("arr", 1, "e")] == (14, 1)


def test_an_answer_the_algebra_refuses_is_the_familys_error(tmp_path):
    spec = SPEC.replace("{let}", "").replace(
        'value = "twice"', "value = \"place('A[I_X]', 'X=4', {'I': 3}).bytes_per_device\""
    )
    from symshard.problems import variant

    with pytest.raises(
        TemplateError, match=re.escape("family.toml line 16 (answers.x): the algebra refuses it")
    ) as info:
        variant(load_family(_family(tmp_path, "p", spec=spec)), 1)
    assert "widen its parameters" not in str(info.value)


def test_a_let_the_algebra_always_refuses_says_which(tmp_path):
    spec = SPEC.replace("{let}", "bad = \"place('A[I_X]', 'X=4', {'I': 3})\"")
    from symshard.problems import variant

    with pytest.raises(TemplateError, match=re.escape("the algebra refused let.bad in 200 of 200 draws")):
        variant(load_family(_family(tmp_path, "p", spec=spec)), 1)


# -- the grammar: text is read, never evaluated ---------------------------------------------------

GRAMMAR = [
    # (text, value)
    ("2*B*D/C", 2 * dim("B") * dim("D") / C),
    ("4·E·F·(|Y| - 1)/(W_ici·|Y|)", 4 * dim("E") * dim("F") * (axis("Y") - 1) / (W_ici * axis("Y"))),
    ("max(T_hop, 1e-6)", as_expr(max))
    if False
    else ("max(T_hop, 1e-6)", __import__("sympy").Max(T_hop, parse_number("1e-6"))),
    ("2**3**2", 512),
    ("-2**2", -4),
    ("2^10", 1024),
    ("3.4e12", 3_400_000_000_000),
    ("1_000", 1000),
    (".5", __import__("sympy").Rational(1, 2)),
    ("B < C/W_ici", dim("B") < C / W_ici),
    ("ceil(7/2) + floor(7/2)", 7),
    ("log2(1024)", 10),
]


@pytest.mark.parametrize(("text", "value"), GRAMMAR, ids=[t for t, _ in GRAMMAR])
def test_the_grammar_reads_formulas(text, value):
    assert parse_math(text) == value


GRAMMAR_ERRORS = [
    (CODE, "unknown function '__import__'"),
    ("__import__(os)", "unknown function '__import__'"),
    ("open(f).read()", "unknown function 'open'"),
    ("x.y", "cannot read '.'"),
    ("lambda: 1", "cannot read ':'"),
    ("1 if 2 else 3", "unexpected 'if'"),
    ("[1, 2]", "cannot read '\\['"),
    ("9**9**9", "the power makes a number of about"),
    ("1e999", "the number '1e999' is out of range"),
    ("(" * 100 + "1" + ")" * 100, "nesting deeper than"),
    ("1/0", "division by zero"),
    ("1 < 2 < 3", "a chain of comparisons"),
    ("max()", "expected a number"),
    ("sqrt(1, 2)", "sqrt\\(\\) takes 1 argument, not 2"),
    ("x" * 3000, "too long"),
]


@pytest.mark.parametrize(("text", "message"), GRAMMAR_ERRORS, ids=[m for _, m in GRAMMAR_ERRORS])
def test_the_grammar_refuses_what_it_does_not_know(text, message):
    with pytest.raises(NotationError, match=message):
        parse_math(text)


def test_names_resolve_only_through_the_scope():
    assert parse_math("2*n + 1", {"n": 5}) == 11
    with pytest.raises(NotationError, match=r"unknown name 'm' in formula 'm'"):
        parse_math("m", {"n": 1})
    assert as_substitution({"E": 2048, "|X|": "4", W_ici: "9e10"}) == {dim("E"): 2048, axis("X"): 4, W_ici: 9 * 10**10}


_NUMBER = st.integers(-(10**12), 10**12)


@given(a=_NUMBER, b=_NUMBER.filter(bool), c=st.integers(0, 20))
@settings(max_examples=200, deadline=None)
def test_the_grammar_agrees_with_exact_arithmetic(a, b, c):
    import sympy

    assert parse_math(f"({a}) + ({b}) * 3") == a + 3 * b
    assert parse_math(f"({a}) / ({b})") == sympy.Rational(a, b)
    assert parse_math(f"2 ** {c} - ({a})") == 2**c - a
    assert parse_math(f"max({a}, {b}) >= min({a}, {b})") == sympy.true


@given(text=st.text(max_size=60))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_grammar_never_raises_anything_else(text):
    try:
        value = parse_math(text)
    except NotationError:
        return
    assert value is not None
    assert MAX_DIGITS >= 0


_EVALUATORS = {"eval", "exec", "compile", "sympify", "parse_expr", "__import__", "S", "simplify", "factor"}
"""Calls that can run text as Python: Python's own, SymPy's parsers (``sympy.S`` is ``sympify``), and SymPy
functions that sympify a text argument (``simplify``, ``factor``), which must only ever see SymPy values."""

_ALLOWED = {
    # the one door: strict sympify, which refuses text, of values that are not text
    ("symshard/algebra/mathtext.py", "sympify"),
    ("symshard/algebra/symbols.py", "sympify"),
    # the site's own page code blocks (trusted sources shipped with the package), run to show their output
    ("symshard/site/pages.py", "eval"),
    ("symshard/site/pages.py", "exec"),
    ("symshard/site/pages.py", "compile"),
    # simplify and factor of SymPy values the algebra built (never text)
    ("symshard/algebra/solving.py", "factor"),
    ("symshard/models/schemes.py", "simplify"),
    ("symshard/planning/planner.py", "simplify"),
    ("symshard/models/worked.py", "simplify"),
    ("symshard/problems/sandbox.py", "simplify"),
    ("symshard/problems/sandbox.py", "factor"),
}


_BUILTINS = {"eval", "exec", "compile", "__import__"}


def _called_name(node: ast.Call) -> str | None:
    """The evaluator a call reaches: a builtin by its bare name, SymPy's by name or attribute (``sympy.S``)."""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute) and node.func.attr not in _BUILTINS:
        return node.func.attr
    return None


def test_the_package_evaluates_no_text():
    offenders = []
    for path in sorted((ROOT / "symshard").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        sympy_s = any(
            isinstance(n, ast.ImportFrom)
            and (n.module or "").startswith("sympy")
            and any(a.name == "S" for a in n.names)
            for n in ast.walk(tree)
        )
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _called_name(node)
                if name == "S" and isinstance(node.func, ast.Name) and not sympy_s:
                    continue  # a local S (jax.sharding.NamedSharding in the JAX bridge), not SymPy's
                if name in _EVALUATORS and (rel, name) not in _ALLOWED:
                    offenders.append(f"{rel}:{node.lineno}: {name}(...)")
    assert offenders == []
    strict = [
        line
        for line in (ROOT / "symshard/algebra/mathtext.py").read_text(encoding="utf-8").splitlines()
        if "sympify(" in line
    ]
    assert strict and all("strict=True" in line for line in strict)


# -- files: what symshard writes, and what it leaves alone -----------------------------------------


def test_the_output_folder_never_deletes_or_changes_what_it_did_not_write(tmp_path):
    root = tmp_path / "out"
    first = OutputFolder.open(root, "test")
    first.write("a.txt", "one")
    first.write("figures/old.svg", "<svg/>")
    first.finish()
    (root / "mine.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputError, match=re.escape("holds files symshard did not write, e.g. 'mine.txt'")):
        OutputFolder.open(root, "test")
    second = OutputFolder.open(root, "test", force=True)
    second.write("a.txt", "two")
    with pytest.raises(OutputError, match="exists and was not written by symshard"):
        second.write("mine.txt", "clobber")
    done = second.finish()
    assert (root / "mine.txt").read_text(encoding="utf-8") == "mine"
    assert (root / "a.txt").read_text(encoding="utf-8") == "two"
    assert not (root / "figures").exists() and done.removed == (root / "figures" / "old.svg",)
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    assert set(manifest["files"]) == {"a.txt"}


def test_edited_files_are_refused_then_kept(tmp_path):
    root = tmp_path / "out"
    out = OutputFolder.open(root, "test")
    out.write("a.txt", "one")
    out.write("b.txt", "one")
    out.finish()
    (root / "b.txt").write_text("edited", encoding="utf-8")
    with pytest.raises(OutputError, match=re.escape("b.txt' was changed since symshard wrote it")):
        OutputFolder.open(root, "test")
    again = OutputFolder.open(root, "test", force=True)
    again.write("a.txt", "one")
    done = again.finish()  # b.txt is stale but edited: kept
    assert done.kept == (root / "b.txt",) and (root / "b.txt").read_text(encoding="utf-8") == "edited"


@pytest.mark.parametrize("target", ["/dev/null", "file.txt", "link"])
def test_what_is_not_a_folder_is_refused(tmp_path, target):
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path)
    path = Path(target) if target.startswith("/") else tmp_path / target
    with pytest.raises(OutputError, match="not a folder"):
        OutputFolder.open(path, "test")


def test_problems_generate_replaces_its_own_set_and_its_stale_figures(tmp_path, capsys):
    out = tmp_path / "week"
    args = ["problems", "generate", "--count", "12", "--out", str(out), "--format", "md"]
    assert main([*args, "--seed", "5"]) == 0
    first = {p.name for p in (out / "figures").iterdir()}
    (out / "syllabus.md").write_text("mine", encoding="utf-8")
    assert main([*args, "--seed", "6"]) == 2
    assert "did not write, e.g. 'syllabus.md'" in capsys.readouterr().err
    assert main([*args, "--seed", "6", "--force"]) == 0
    second = {p.name for p in (out / "figures").iterdir()}
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert first - second, "the two sets should draw different figures"
    assert second == {k.removeprefix("figures/") for k in listed if k.startswith("figures/")}  # no stale figure left
    assert (out / "syllabus.md").read_text(encoding="utf-8") == "mine" and "syllabus.md" not in listed


def test_site_prepare_never_deletes_a_users_file(tmp_path, capsys):
    pytest.importorskip("yaml")
    out = tmp_path / "project"
    out.mkdir()
    (out / "notes.md").write_text("mine", encoding="utf-8")
    assert main(["site", "prepare", "--out", str(out)]) == 2
    assert "notes.md" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.md"]


# -- every command: one line, or one JSON object, and exit 2 -------------------------------------

_BAD_NUMBERS = ["1e999", "-1", "0", "nan", "inf", "1e-999", "9" * 5000, "0x10", "1/0", "½", "١٢", "1e400", "2**64", ""]
_BAD_PATHS = ["/dev/null", "/proc/nope", "/proc/self/fd/0", "/etc/passwd", "/", "\x00", "a\nb", "/root/../dev/zero",
              "/nonexistent/deep/path", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢/dir", "con:", "-", "~nobody/x"]  # fmt: skip
_FAILING_PATHS = ["/dev/null", "/proc/nope", "/etc/passwd", "/proc/self/fd/0", "\x00", "/proc/nope/deeper/x", "/etc"]
"""Output folders every command refuses at once (a full site build must never start in the fuzz test)."""
_BAD_TEXT = ["\udcff", "é", "\x1b[31m", "A[I_X" + "," * 500, "{{7*7}}", "$(id)", "`id`", "'; rm -rf ~; '", "\u202e"]


def _command_lines() -> st.SearchStrategy[list[str]]:
    number = st.sampled_from(_BAD_NUMBERS)
    path = st.sampled_from(_BAD_PATHS)
    text = st.one_of(st.sampled_from(_BAD_TEXT), st.text(max_size=12))
    family = st.sampled_from(["allgather-time", "nope", "../etc", "/etc/passwd", ""])
    return st.one_of(
        st.builds(
            lambda f, n, t: ["problems", "check", f, "--seed", n, f"time={t}"], family, number, st.one_of(number, text)
        ),
        st.builds(lambda n, p: ["problems", "generate", "--seed", "1", "--count", n, "--out", p], number, path),
        st.builds(lambda p: ["problems", "generate", "--seed", "1", "--count", "1", "--out", p], path),
        st.builds(lambda f, n: ["problems", "show", f, "--seed", n], family, number),
        st.builds(lambda p: ["problems", "list", "--families", p], path),
        st.builds(
            lambda f, t: ["problems", "show", "allgather-time", "--time-limit", t, "--memory-limit", f],
            st.one_of(number, text),
            st.one_of(number, text),
        ),
        st.builds(lambda p: ["site", "build", "--out", p], st.sampled_from(_FAILING_PATHS)),
        st.builds(lambda p: ["site", "prepare", "--out", p], st.sampled_from(_FAILING_PATHS)),
        st.builds(lambda p: ["site", "serve", "--no-build", "--out", p], st.sampled_from(_FAILING_PATHS)),
        st.builds(
            lambda n, t: ["collective", "AllGather_Y([E_Y, F])", "--mesh", f"Y={n}", "--shape", f"E={t},F=8"],
            number,
            st.one_of(number, text),
        ),
        st.builds(lambda n: ["matmul", "A[I_X, J] · B[J, K]", "--mesh", f"X={n}", "--hw-set", f"T_hop={n}"], number),
        st.builds(lambda t: ["shard", t, "--dtype", t], text),
        st.builds(lambda t: ["hardware", t], text),
        st.builds(lambda p, n: ["calibrate", p, "--collective", "allreduce", "--ranks", n], path, number),
    )


@pytest.fixture(scope="module")
def fuzz_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


_FUZZED = dict(derandomize=True, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip


@settings(max_examples=250, **_FUZZED)
@given(argv=_command_lines(), as_json=st.booleans())
def test_no_command_prints_a_traceback(argv, as_json, capsys, fuzz_folder):
    check_one_line_or_json(argv, as_json, capsys, fuzz_folder)


@pytest.mark.slow(reason="2,000 fuzzed command lines, each run in-process: about 30 s (250 in the default run)")
@settings(max_examples=2000, **_FUZZED)
@given(argv=_command_lines(), as_json=st.booleans())
def test_no_command_prints_a_traceback_in_2000_command_lines(argv, as_json, capsys, fuzz_folder):
    check_one_line_or_json(argv, as_json, capsys, fuzz_folder)


def check_one_line_or_json(argv, as_json, capsys, fuzz_folder):
    """One fuzzed command line: an exit code of 0, 1 or 2, never a traceback; an error is one line (a JSON
    object with ``--json``)."""
    argv = [*argv, "--json"] if as_json else argv
    capsys.readouterr()
    here = os.getcwd()
    os.chdir(fuzz_folder)  # relative --out paths land in a scratch folder
    try:
        code = main(argv)
    finally:
        os.chdir(here)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code)
    assert "Traceback" not in out + err
    if code == 2 and as_json:
        assert err == "", (argv, err)
        error = json.loads(out)["error"]
        assert set(error) == {"type", "message", "hint"} and error["message"]
    elif code == 2:
        assert out == "" and err.startswith("symshard: error: ") and err.count("\n") == 1, (argv, err)


def test_the_named_failures_are_one_line(tmp_path, capsys):
    cases = [
        (["problems", "check", "allgather-time", "--seed", "7", "time=1e999 s"], "is out of range"),
        (
            ["problems", "generate", "--seed", "1", "--count", "2", "--out", "/proc/nope"],
            "cannot create the folder '/proc/nope'",
        ),
        (
            ["problems", "generate", "--seed", "1", "--count", "2", "--out", "/dev/null"],
            "'/dev/null' is a device, not a folder",
        ),
        (["problems", "show", "allgather-time", "--time-limit", "soon"], "cannot read the time limit 'soon'"),
    ]
    for argv, fragment in cases:
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and fragment in err, err
        assert main([*argv, "--json"]) == 2
        out, err = capsys.readouterr()
        assert err == "" and fragment in json.loads(out)["error"]["message"]


def test_internal_errors_are_one_line_too(monkeypatch, capsys):
    from symshard.cli.commands import COMMANDS

    def broken(args):
        raise KeyError("surprise")

    monkeypatch.setitem(COMMANDS, "hardware", broken)
    assert main(["hardware"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symshard: error: internal error: KeyError") and "please report it" in err
    monkeypatch.setenv("SYMSHARD_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["hardware"])


def test_errors_survive_pickling():
    import pickle

    err = pickle.loads(pickle.dumps(TemplateError("m", text="t", span=(0, 1), hint="h")))
    assert (err.message, err.text, err.span, err.hint) == ("m", "t", (0, 1), "h")
    assert isinstance(pickle.loads(pickle.dumps(BudgetError("b"))), SymshardError)


def test_an_error_message_crosses_the_worker_with_its_template_and_values(tmp_path):
    import pickle

    from symshard.i18n.catalog import render
    from symshard.messages import Clauses, Message
    from symshard.problems import variant
    from symshard.problems.family import read_spec

    said = TemplateError(Message("family '{family}', {file}: {why}", (("family", "f"), ("file", "x"),
                                                                       ("why", Message("is missing")))))  # fmt: skip
    back = pickle.loads(pickle.dumps(said))
    assert back.message.template == said.message.template and back.message.values == said.message.values
    # the worker pickles the error it raises: the caller gets the message, not its English alone
    with pytest.raises(TemplateError) as info:
        run(read_spec, (tmp_path / "absent-family",), Budget(seconds=30), what="a probe")
    message, hint = info.value.message, info.value.hint
    assert isinstance(message, Message) and message.template == "family '{family}', {file}: {why}"
    assert dict(message.values)["why"].template == "is missing" and isinstance(hint, Message)
    assert (render(message, "zh"), render(hint, "zh")) == ("题族 'absent-family' 的 family.toml：缺失",
                                                           "题族文件夹需要 family.toml 和 problem.md.j2")  # fmt: skip
    # a draw that always fails: its reasons are clauses of messages, said in Chinese after the trip
    spec = SPEC.replace("{let}", "bad = \"place('A[I_X]', 'X=4', {'I': 3})\"")
    with pytest.raises(TemplateError) as info:
        variant(load_family(_family(tmp_path, "p", spec=spec)), 1)
    message = info.value.message
    assert isinstance(dict(message.values)["reasons"], Clauses)
    chinese = render(message, "zh")
    assert chinese.startswith("题族 'p' 在种子 1 下抽取了 200 次") and "let.bad" in chinese, chinese
    assert "let.bad" in render(info.value.hint, "zh") and "draws" not in render(info.value.hint, "zh")

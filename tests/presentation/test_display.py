"""Notebook display: each result's HTML (content, units, escaping, truncation, determinism), its words
in Chinese when the session asks for them, the LaTeX of conditions in symshard's one style, and ``subs``
reading names and text (symshard/report/html.py, symshard/notebook.py, symshard/algebra/substitution.py)."""

from __future__ import annotations

import dataclasses
import html as markup
import re
import subprocess
import sys
from functools import cache
from types import SimpleNamespace

import pytest
import sympy
from helpers import CHINESE_TEXT_KEEPS, english_left

import symshard as ss
from symshard import notebook
from symshard.algebra.symbols import C, T_hop, W_ici, axis, dim, latex
from symshard.algebra.units import format_bytes, format_seconds
from symshard.errors import NotationError, UnknownSymbolError, UsageError
from symshard.i18n.catalog import catalogue, translate
from symshard.notebook import show
from symshard.report.html import ENGLISH, TOP, comparison_html, math, plan_html, problem_html, strategy_name
from symshard.report.plans import plan_text

MATMUL = "X[B, D] · Y[D_X, F] -> Z[B, F]"


@cache
def numeric_plan():
    return ss.plan(MATMUL, "X=8", "B=1024,D=8192,F=16384", hardware="tpu-v5e")


@cache
def symbolic_plan():
    return ss.plan(MATMUL)


@cache
def big_plan():
    return ss.plan("A[I_X, J_Y] · B[J_Y, K_Z] -> C[I, K]", "X=2,Y=2,Z=2", "I=1024,J=1024,K=1024",
                   hardware="tpu-v5e", all=True)  # fmt: skip


@cache
def comparison():
    # the chapter's Question 4 on 8 devices, F fixed: B and D are left, so the map can be drawn
    return ss.compare(ss.plan(MATMUL, "X=8", "F=16384"), "B", hardware="tpu-v5p")


@cache
def problem():
    from symshard.problems import family, variant

    return variant(family("allgather-time"), 7)


def _rows(page: str) -> list[str]:
    return re.findall(r"<tr[^>]*>.*?</tr>", page)


@pytest.fixture(autouse=True)
def _english_session(monkeypatch):
    # every test starts in English whatever the shell running the suite says, and leaves no choice behind
    monkeypatch.delenv("SYMSHARD_LANG", raising=False)
    yield
    notebook.use_language(None)


# -- what each table shows --------------------------------------------------------------------------


def test_plan_marks_the_best_with_its_time_as_the_cli_prints_it():
    p = numeric_plan()
    page = show("text/html", p)
    best_rows = [r for r in _rows(page) if 'class="best"' in r]
    assert len(best_rows) == 1
    assert "★" in best_rows[0]
    shown = format_seconds(p.best.time)
    assert shown in best_rows[0] and shown in plan_text(p)  # the CLI's figure, with its unit
    assert re.search(r"\d (µs|ms|ns|s)<", page)
    assert format_bytes(p.best.memory_bytes_per_device) in best_rows[0]
    assert sum("<td>" in r for r in _rows(page)) == len(p.strategies)


def test_symbolic_plan_has_formulas_in_symshard_latex_and_no_best():
    page = show("text/html", symbolic_plan())
    assert "★" not in page and 'class="best"' not in page
    assert r"W_{\text{ici}}" in page and r"\lvert X \rvert" in page
    assert "W_{ici}" not in page and "|X|" not in page  # SymPy's own style never leaks in
    assert "cannot be ranked" in page


def test_long_plans_are_cut_with_a_count():
    p = big_plan()
    assert len(p.strategies) > TOP
    page = plan_html(p)
    body = [r for r in _rows(page) if "<td>" in r]
    assert len(body) == TOP
    assert f"and {len(p.strategies) - TOP:,} more strategies" in page
    assert len(_rows(plan_html(p, top=3))) - 1 == 3


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: numeric_plan(), ["Case 2", "TPU v5e", "max(T<sub>math</sub>, T<sub>hbm</sub>, T<sub>comms</sub>)"]),
        (lambda: numeric_plan().best, ["role", "bytes moved", "33,554,432 B (32 MiB)", r"\cdot_{\text{LOCAL}}"]),
        (lambda: comparison(), ["solving for $B$", "communication-bound iff", "on the chip", "<svg", "data-strategy"]),
        (lambda: ss.place(ss.parse("A[I_XY, J]"), "X=8,Y=2", "I=1024,J=4096", dtype="fp32"),
         ["$(64, 4096)$", "1,048,576 B (1 MiB)", "16,777,216 B (16 MiB)", "fp32 (4 B per element)"]),
        (lambda: ss.place(ss.parse("A[I_XY, J]")),
         [r"$(\frac{I}{\lvert X \rvert \lvert Y \rvert}, J)$", r"\lvert X \rvert \lvert Y \rvert"]),
        (lambda: problem(), ["How long does an AllGather take?", "<details><summary>Answers</summary>",
                             "<details><summary>Hint 1</summary>", "data:image/svg+xml;base64,"]),
    ],
    ids=["plan", "strategy", "comparison", "placement", "placement-symbolic", "problem"],
)  # fmt: skip
def test_each_result_shows_its_table(make, expected):
    obj = make()
    page = show("text/html", obj)
    assert page.startswith('<div class="symshard symshard-') and page.endswith("</div>")
    for text in expected:
        assert text in page, text
    assert page == show("text/html", make())  # deterministic: the same object, the same bytes
    assert " at 0x" not in page  # no object addresses


def test_comparison_marks_the_strategies_that_win_somewhere():
    c = comparison()
    page = comparison_html(c)
    best = [r for r in _rows(page) if 'class="best"' in r]
    assert len(best) == len(c.best)
    for region in c.best:
        assert math(region.condition.latex()) in page


def test_problem_answers_are_folded_away():
    pr = problem()
    page = show("text/html", pr)
    answers = page.index("<details><summary>Answers</summary>")
    shown = pr.answer("time").show
    assert shown in page[answers:]
    assert shown not in page[:answers]


@pytest.mark.parametrize(
    "hostile",
    ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a & b \" ' <b>"],
)
def test_text_is_escaped(hostile):
    pr = dataclasses.replace(problem(), statement=hostile, hints=(hostile,), solution=hostile)
    page = show("text/html", pr)
    assert "<script" not in page and "<img src=x" not in page and "<b>" not in page
    assert "&lt;" in page


def test_math_escapes_relations():
    assert math(r"B < \frac{C}{W}") == r"$B &lt; \frac{C}{W}$"


def test_condition_latex_uses_symshard_style():
    c = comparison()
    cond = c.regimes[0].communication_bound
    assert show("text/latex", cond) == "$" + cond.latex() + "$"
    assert r"W_{\text{ici}}" in show("text/latex", cond)
    clauses = c.best[0].condition
    assert show("text/latex", clauses) == "$" + clauses.latex() + "$"
    assert r"\land" in show("text/latex", clauses)


@pytest.mark.parametrize(
    ("mesh", "shape", "hardware"),
    [
        ("X=8,Y=4", "E=2048,F=8192", "tpu-v5e"),
        ("X=8,Y=4", "E=64,F=64", "tpu-v5p"),
        ("X=2,Y=16", "E=2^20,F=8192", "h100"),
    ],
)
def test_a_numeric_cost_shows_its_time_with_a_unit(mesh, shape, hardware):
    cost = ss.parse(GATHER).cost(mesh, shape, hardware=hardware)
    number, unit = format_seconds(cost.time).split(" ")
    tex_unit = {"µs": r"\mu\text{s}", "ms": r"\text{ms}", "ns": r"\text{ns}", "s": r"\text{s}"}[unit]
    assert show("text/latex", cost) == f"$T = {number}\\ {tex_unit}$"
    assert show("text/latex", ss.parse(GATHER).cost()) == "$" + ss.parse(GATHER).cost().latex() + "$"


def test_a_bare_sympy_cost_shows_in_symshard_style():
    # the raw SymPy expression of a cost, shown in a notebook (a cell ending in cost.time), reads as
    # symshard's own tables do: T_{\text{hop}} and \lvert Y \rvert, not SymPy's T_{hop} and |Y|
    time = ss.parse(GATHER).cost().time
    assert {T_hop, W_ici, axis("Y")} <= time.free_symbols
    shown = show("text/latex", time)
    assert r"T_{\text{hop}}" in shown and r"W_{\text{ici}}" in shown and r"\lvert Y \rvert" in shown
    assert "T_{hop}" not in shown and "|Y|" not in shown
    assert shown == "$\\displaystyle " + latex(time) + "$"
    # a plain symbol typed in the notebook with the same name is the same symbol, shown the same way
    typed = 2 * sympy.Symbol("W_ici", positive=True) * sympy.Symbol("|data|", positive=True, integer=True)
    assert show("text/latex", typed) == r"$\displaystyle 2 W_{\text{ici}} \lvert \mathrm{data} \rvert$"
    # an expression without symshard's symbols looks exactly as SymPy shows it
    x, y = sympy.symbols("x y_1")
    for expr in (x**2 / y, sympy.Eq(x, y), sympy.Integer(3)):
        assert show("text/latex", expr) == expr._repr_latex_()


def test_display_is_not_imported_by_symshard():
    code = "import sys, symshard; print('symshard.report' in sys.modules, 'symshard.notebook' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_ipython_shows_results_through_formatters_registered_by_type_name():
    # `import symshard` inside IPython registers the formatters and loads no presentation until one is used
    pytest.importorskip("IPython", reason="IPython (dev extra, with ipykernel) is not installed")
    code = (
        "import sys; from IPython.core.interactiveshell import InteractiveShell; ip = InteractiveShell.instance(); "
        "import symshard as ss; early = sorted(m for m in ('symshard.report', 'symshard.planning.planner') if m in sys.modules); "
        f"p = ss.plan({MATMUL!r}, 'X=8', 'B=1024,D=8192,F=16384', hardware='tpu-v5e'); "
        "data, _ = ip.display_formatter.format(p); from symshard.report.html import plan_html; "
        "cost = ss.parse('AllGather_X(A[I_X, J])').cost(); latex, _ = ip.display_formatter.format(cost); "
        "bare, _ = ip.display_formatter.format(cost.time); from symshard.algebra import symbols; "
        "print(early, data['text/html'] == plan_html(p), latex['text/latex'] == '$' + cost.latex() + '$', "
        "bare['text/latex'] == '$\\\\displaystyle ' + symbols.latex(cost.time) + '$' and 'T_{hop}' not in bare['text/latex'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[] True True True"


# -- the words in Chinese ---------------------------------------------------------------------------


@cache
def _chinese_problem():
    from symshard.problems import family, variant

    return variant(family("allgather-time"), 7, "zh")


def _kinds():
    """One result of each kind the notebook shows as a table, with the third party's words it may quote."""
    from symshard.models.inference import serve
    from symshard.models.training import train, training_memory
    from symshard.models.transfers import gather_to_one, host_to_chip, point_to_point, slice_totals
    from symshard.models.transformer import model

    m = model("mixtral-8x7b")
    sources = (m.label, m.source("sizes"), m.source("published_params"))
    return [
        ("plan", numeric_plan, ()),
        ("plan-symbolic", symbolic_plan, ()),
        ("plan-cut", big_plan, ()),
        ("strategy", lambda: numeric_plan().best, ()),
        ("comparison", comparison, ()),
        # strategies that are never the fastest say why
        (
            "comparison-all",
            lambda: ss.compare(ss.plan("A[I_X, J] · B[J, K_Y] -> C[I, K]", "X=4,Y=2"), "I", strategies="all"),
            (),
        ),
        ("placement", lambda: ss.place(ss.parse("A[I_XY, J]{U_Z}"), "X=8,Y=2,Z=2", "I=1024,J=4096"), ()),
        ("route", lambda: point_to_point((0, 0), (2, 1), (4, 4), hardware="tpu-v5e", nbytes=2**30), ()),
        ("gather", lambda: gather_to_one((0, 0), (4, 4), hardware="tpu-v5e", nbytes=2**20), ()),
        ("host", lambda: host_to_chip(2**30, hardware="tpu-v5e", chips=8), ()),
        ("slice", lambda: slice_totals("h100", 16), ("NVIDIA H100",)),
        ("problem", _chinese_problem, ("allgather-time",)),
        ("model", lambda: m, sources),
        ("memory", lambda: training_memory("llama3-8b", 2**20), ("LLaMA-3 8B", "adam", "mlp")),
        (
            "training",
            lambda: train("llama3-8b", tokens=15e12, chips=8192, hardware="tpu-v5p", mfu=0.4, batch=2**22),
            ("LLaMA-3 8B", "adam", "symshard layer", "--gradients"),  # a command and an option, said as typed
        ),
        ("serving", lambda: serve("llama3-70b", batch=32, context=8192, mesh="Y=8", hardware="tpu-v5e"), ()),
    ]


# Latin words a Chinese table keeps, as the CLI's Chinese reports do: the time rule and the cost model
# (time = max(T_math, T_comms), model book), "token" (the glossary keeps it), units, abbreviations and
# symshard's own name; in the regime map under a comparison, a strategy's matmul step and the compare
# command its notes name.
_KEPT = frozenset("time max book PCIe MFU KV MLP token tokens GFLOP MFLOP TFLOP symshard matmul compare".split())
_NOTATION = re.compile(
    r"\w+\[[^\]]*\](\{[^}]*\})?"  # arrays: In[B, D_Y], C[I, K]{U_Y}
    r"|\w+_(\{[^}]*\}|\w+)"  # subscripted names: T_math, AllGather_Y, ReduceScatter_{Y,D}
)


def _words_left(page: str, keep: tuple[str, ...] = ()) -> list[str]:
    """The English words left in a Chinese page, outside markup, math, code and notation (the regime
    map under a comparison, a ``<figure>``, included)."""
    text = re.sub(r"<style>.*?</style>|<code>.*?</code>", " ", page, flags=re.S)
    text = markup.unescape(re.sub(r"<[^>]+>", " ", text.replace("<sub>", "_")))
    text = re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]", " ", text, flags=re.S)  # a problem's math: \( ... \)
    for phrase in keep:  # before english_left, which strips units and abbreviations out of them
        text = text.replace(phrase, " ")
    run = english_left(text)
    text = _NOTATION.sub(" ", CHINESE_TEXT_KEEPS.sub(" ", text))
    words = sorted({w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in _KEPT})
    return ([run] if run else []) + words


@pytest.mark.parametrize(("kind", "make", "keep"), _kinds(), ids=[k for k, *_ in _kinds()])
def test_chinese_tables_leave_no_english_words(kind, make, keep):
    obj = make()
    notebook.use_language("zh")
    chinese = show("text/html", obj)
    assert _words_left(chinese, keep) == [], kind
    assert re.search(r"[\u4e00-\u9fff]", chinese)
    notebook.use_language("en")
    english = show("text/html", obj)
    if kind != "problem":  # a problem keeps its own language
        assert english != chinese and not re.search(r"[\u4e00-\u9fff]", english)
    # the numbers are the same in both languages
    numbers = re.compile(r"\d[\d,.]* (?:[KMGT]i)?B\b|\d[\d.]* (?:µs|ms|ns|s)\b")
    assert sorted(numbers.findall(chinese)) == sorted(numbers.findall(english))


def test_english_tables_keep_their_english_words():
    # the words the English tables had before they were keyed, byte for byte
    p = numeric_plan()
    page = plan_html(p)
    assert (
        "<th>strategy</th><th>T<sub>math</sub></th><th>T<sub>hbm</sub></th><th>T<sub>comms</sub></th><th>time</th><th>bound</th>"
        in page
    )
    assert "<p>" + str(p.classification) + "</p>" in page
    assert f"<td>{p.best.bound}-bound</td>" in page
    assert f'<p class="note">★ best: {strategy_name(p.best)}, {format_seconds(p.best.time)}</p>' in page
    more = len(big_plan().strategies) - TOP
    assert (f'<p class="note">… and {more:,} more strategies ({len(big_plan().strategies):,} listed; '
            "<code>plan.strategies</code> has them all)</p>") in plan_html(big_plan())  # fmt: skip
    assert '<p class="note">sizes or constants are symbols: the strategies cannot be ranked</p>' in plan_html(
        symbolic_plan()
    )
    strategy = show("text/html", p.best)
    assert "<th>role</th><th>step</th><th>bytes moved</th><th>FLOPs / device</th><th>time</th>" in strategy
    assert "<tr><td>lhs</td>" in strategy or "<tr><td>rhs</td>" in strategy
    assert "<details><summary>Worked solution</summary>" in show("text/html", problem())


def test_chinese_problem_shows_chinese_words_in_any_session(monkeypatch):
    chinese, english = _chinese_problem(), problem()
    page = show("text/html", chinese)  # an English session
    for word in ("<summary>提示 1</summary>", "<summary>答案</summary>", "<summary>详细解答</summary>", "难度"):
        assert word in page
    monkeypatch.setenv("SYMSHARD_LANG", "zh")
    assert show("text/html", english) == problem_html(english)  # English stays English
    assert "<summary>Answers</summary>" in show("text/html", english)


def test_show_reads_symshard_lang_when_it_shows(monkeypatch):
    p = numeric_plan()
    english = show("text/html", p)
    monkeypatch.setenv("SYMSHARD_LANG", "zh")
    chinese = show("text/html", p)
    assert chinese == plan_html(p, language="zh") != english
    assert "最优" in chinese and "受限区间" in chinese
    monkeypatch.setenv("SYMSHARD_LANG", "en")
    assert show("text/html", p) == english
    monkeypatch.setenv("SYMSHARD_LANG", "fr")
    with pytest.raises(UsageError, match=r"unknown language 'fr' in \$SYMSHARD_LANG"):
        show("text/html", p)
    cost = ss.parse("AllGather_X(A[I_X, J])").cost()
    assert show("text/latex", cost) == "$" + cost.latex() + "$"  # LaTeX has no words: no language is read


def test_use_language_overrides_the_environment(monkeypatch):
    place = ss.place(ss.parse("A[I_X, J]"), "X=4", "I=64,J=8")
    monkeypatch.setenv("SYMSHARD_LANG", "zh")
    notebook.use_language("en")
    assert notebook.language() == "en" and "bytes per device" in show("text/html", place)
    notebook.use_language(None)
    assert notebook.language() == "zh" and "每设备字节数" in show("text/html", place)
    with pytest.raises(UsageError, match="unknown language 'fr'"):
        notebook.use_language("fr")
    assert notebook.language() == "zh"  # a refused choice changes nothing


def test_registered_formatters_choose_the_language_when_called(monkeypatch):
    # IPython keeps the function register() gave it; the language is read each time it is called
    class Formatter:
        def __init__(self):
            self.by_name = {}

        def for_type_by_name(self, module, name, function):
            self.by_name[(module, name)] = function

    formatters = {m: Formatter() for m in ("text/html", "text/latex", "image/svg+xml")}
    assert notebook.register(SimpleNamespace(display_formatter=SimpleNamespace(formatters=formatters)))
    p = numeric_plan()
    shown = formatters["text/html"].by_name[(type(p).__module__, type(p).__name__)]  # registered where Plan lives
    assert shown(p) == plan_html(p)
    monkeypatch.setenv("SYMSHARD_LANG", "zh")
    assert shown(p) == plan_html(p, language="zh")


def test_word_templates_hold_no_markup():
    # the HTML puts its words around values that are already HTML, so the words themselves must not be read
    # as markup in any language
    from symshard.report import html

    texts = catalogue("zh").texts
    for key in html._WORDS:
        for template in (html._WORDS[key], texts[key]):
            assert not set("<>&") & set(template), (key, template)
    assert all(key.startswith("html.") for key in ENGLISH)


# -- subs reads names and text ----------------------------------------------------------------------

GATHER = "AllGather_Y([E_Y, F])"
E, F, Y = dim("E"), dim("F"), axis("Y")
SHAPE = {E: 2048, F: 8192, Y: 4, W_ici: sympy.Integer(90_000_000_000), T_hop: sympy.Rational(1, 10**6)}


@pytest.mark.parametrize(
    "values",
    [
        "E=2048, F=8192, Y=4, W_ici=9e10, T_hop=1e-6",
        "E=2048; F=8192; |Y|=4; W_ici=9e10; T_hop=1e-6",
        {"E": 2048, "F": 8192, "Y": 4, "W_ici": 9e10, "T_hop": 1e-6},
        {"E": "2048", "F": "2^13", "|Y|": 4, "W_ici": "9e10", "T_hop": "1e-6"},
        {E: 2048, F: 8192, Y: 4, W_ici: 90_000_000_000, "T_hop": "1/1000000"},
    ],
    ids=["text", "text-semicolons-bars", "names", "names-formulas", "symbols-and-names"],
)
def test_cost_subs_reads_names_and_text(values):
    cost = ss.parse(GATHER).cost()
    expected = cost.subs(SHAPE)  # symbols as keys: SymPy's own substitution
    got = cost.subs(values)
    assert got.time == expected.time and got.time.is_number
    assert got.bytes == expected.bytes and got.hops == expected.hops
    assert got.time == expected.time.xreplace(SHAPE)


def test_text_e_is_the_dim_not_eulers_number():
    time = ss.parse(GATHER).cost().subs({"E": 2048}).time
    assert E not in time.free_symbols and sympy.E not in time.atoms()


@pytest.mark.parametrize(
    ("values", "error", "pattern"),
    [
        ({"e": 1}, UnknownSymbolError, r"the cost has no symbol called 'e'"),
        ({"X": 8}, UnknownSymbolError, r"no symbol called 'X'"),
        ("E=2048, B=4", UnknownSymbolError, r"no symbol called 'B'"),
        ({"2*E": 1}, UnknownSymbolError, r"no symbol called '2\*E'"),
        ("E:2048", NotationError, r"cannot read 'E:2048' as name=value"),
        ("E<=2048", NotationError, r"as name=value"),
        ("E==2048", NotationError, r"as name=value"),
        ({"E": "__import__('os')"}, NotationError, r"unknown function '__import__'"),
    ],
)
def test_cost_subs_rejects_unknown_names(values, error, pattern):
    with pytest.raises(error, match=pattern) as info:
        ss.parse(GATHER).cost().subs(values)
    assert info.value.hint
    assert translate(info.value.message, "zh") != info.value.message  # a message, said in Chinese too


def test_unknown_name_hint_lists_the_names_present():
    with pytest.raises(UnknownSymbolError) as info:
        ss.parse(GATHER).cost().subs({"e": 1})
    assert info.value.hint == "did you mean 'E'? The names here are E, F, T_hop, W_ici, Y (|Y|)"
    assert isinstance(info.value, LookupError)


@pytest.mark.parametrize(
    ("values", "symbol"),
    [
        ({C: 459_000_000_000_000, W_ici: 180_000_000_000}, dim("B")),
        ("C=4.59e14, W_ici=1.8e11", "B"),
        ({"C": 4.59e14, "W_ici": 1.8e11}, "B"),
    ],
    ids=["symbols", "text", "names-floats"],
)
def test_condition_subs_reads_names(values, symbol):
    cond = ss.compare(ss.plan(MATMUL), "B").regimes[1].communication_bound  # B < C/W_ici
    expected = cond.subs({C: 459_000_000_000_000, W_ici: 180_000_000_000}, dim("B"))
    assert cond.subs(values, symbol).text() == expected.text() == "B < 2550"  # C/W_ici on a TPU v5p


def test_clauses_subs_resolves_axes_by_letter():
    region = ss.compare(ss.plan(MATMUL), "B").best[0].condition
    by_symbol = region.subs({axis("X"): 8, C: 459_000_000_000_000, W_ici: 180_000_000_000}, dim("B"))
    assert region.subs("X=8, C=4.59e14, W_ici=1.8e11", "B").text() == by_symbol.text()
    assert region.subs("|X|=8, C=4.59e14, W_ici=1.8e11", "B").text() == by_symbol.text()
    with pytest.raises(UnknownSymbolError, match="the condition has no symbol called 'Q'"):
        region.subs({"Q": 1})

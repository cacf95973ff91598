"""SVG figures: layouts, collectives, regime plots, the dispatcher, and figures in problem sets."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest

import symshard as ss
from symshard.errors import (
    CollectiveError,
    DivisibilityError,
    MeshError,
    NotationError,
    PlanError,
    ShapeError,
    TemplateError,
    UnknownAxisError,
    UsageError,
)
from symshard.memo import clear_caches
from symshard.outputs.bookkeeping import STAMPS
from symshard.problems import family, generate, variant
from symshard.problems.writers import schema, to_json, to_markdown, to_moodle, write_set
from symshard.render import Figure, collective, layout, regimes, svg
from symshard.render.sweep import sweep

NS = "{http://www.w3.org/2000/svg}"
Q4 = "X[B, D] · Y[D_X, F] -> Z[B, F]"


# -- reading the SVG back ---------------------------------------------------------------------------


def parsed(fig: Figure | str) -> ET.Element:
    """The SVG root, after the checks every figure must pass."""
    text = fig.svg if isinstance(fig, Figure) else fig
    root = ET.fromstring(text)
    assert root.tag == NS + "svg"
    x0, y0, w, h = (float(v) for v in root.get("viewBox").split())
    assert (x0, y0) == (0, 0) and w > 0 and h > 0
    assert float(root.get("width")) == w and float(root.get("height")) == h
    assert root.get("role") == "img" and root.get("aria-label")
    assert root.get("font-family") == "sans-serif"
    assert root.find(NS + "title").text and root.find(NS + "desc").text == root.get("aria-label")
    sizes = [float(e.get("font-size")) for e in root.iter() if e.get("font-size")]
    assert sizes and min(sizes) >= 10  # readable text
    # self-contained: no links out, no scripts, no images, no fonts
    assert all(e.get("href", "#").startswith("#") for e in root.iter())
    assert not [e for e in root.iter() if e.tag in (NS + "script", NS + "image", NS + "style", NS + "a")]
    assert "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    return root


def devices(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(NS + "use") if "device" in e.get("class", "").split()]


def stamp_colours(root: ET.Element, use: ET.Element) -> list[str]:
    """The block colours drawn in a device cell (in order)."""
    ref = use.get("href")[1:]
    group = next(e for e in root.iter(NS + "g") if e.get("id") == ref)
    return [r.get("fill") for r in group.iter(NS + "rect") if r.get("fill", "").startswith("#") and not r.get("rx")]


def block_cells(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(NS + "rect") if e.get("class") == "block"]


def texts(root: ET.Element) -> str:
    return " ".join("".join(e.itertext()) for e in root.iter(NS + "text"))


# -- layouts ------------------------------------------------------------------------------------------

LAYOUTS = [
    # (array, mesh, blocks, devices, devices per block, partial devices)
    ("A[I_X, J_Y]", "X=2,Y=2", 4, 4, 1, 0),  # every device its own block
    ("A[I_X, J]", "X=2,Y=2", 2, 4, 2, 0),  # replicated over Y: each block on 2 devices
    ("A[I_X, J]{U_Y}", "X=2,Y=2", 2, 4, 2, 4),  # partial sums over Y, hatched
    ("v[I_X]", "X=4", 4, 4, 1, 0),  # rank 1: one row of blocks
    ("A[I_X, J, K_Y]", "X=2,Y=4", 8, 8, 1, 0),  # rank 3: J and K flattened into columns
    ("A[I_XY, J]", "X=2,Y=2", 4, 4, 1, 0),  # two axes on one dim
    ("A[I, J]", "X=2", 1, 2, 2, 0),  # nothing sharded
    ("A[I_XY, J]{U_Z}", "X=2,Y=2,Z=2", 4, 8, 2, 8),  # three axes, partial
]


@pytest.mark.parametrize(("array", "mesh", "blocks", "n_devices", "per_block", "partial"), LAYOUTS)
def test_layout_tables(array, mesh, blocks, n_devices, per_block, partial):
    fig = layout(array, mesh)
    root = parsed(fig)
    cells = block_cells(root)
    assert len({c.get("data-block") for c in cells}) == blocks
    assert len({c.get("fill") for c in cells}) == blocks  # each distinct block its own colour
    devs = devices(root)
    assert len(devs) == n_devices
    held: dict[str, int] = {}
    for d in devs:
        held[d.get("data-block")] = held.get(d.get("data-block"), 0) + 1
    assert set(held.values()) == {per_block}
    assert sum("partial" in d.get("class") for d in devs) == partial
    if partial:
        assert "hatch" in fig.svg and "partial" in texts(root)
    colour_of = {c.get("data-block"): c.get("fill") for c in cells}
    for d in devs:  # a device is filled with the colour of the block it holds
        assert stamp_colours(root, d) == [colour_of[d.get("data-block")]]


def test_rank_one_is_one_row_and_multi_axis_order():
    root = parsed(layout("v[I_X]", "X=4"))
    assert len({c.get("y") for c in block_cells(root)}) == 1
    root = parsed(layout("A[I_XY, J]", "X=2,Y=2"))
    assert {d.get("data-device"): d.get("data-block") for d in devices(root)} == {
        "0,0": "0,0", "0,1": "1,0", "1,0": "2,0", "1,1": "3,0",  # X major: block x·|Y| + y
    }  # fmt: skip


def test_labels_with_and_without_sizes():
    sized = texts(parsed(layout("A[I_X, J_Y]", "X=4,Y=2", "I=1024,J=4096")))
    assert "I 0:256" in sized and "I 768:1024" in sized and "J 2048:4096" in sized
    symbolic = texts(parsed(layout("A[I_X, J_Y]", "X=4,Y=2")))
    assert "0:I/4" in symbolic and "3I/4:I" in symbolic and "J/2:J" in symbolic
    assert "I0 J1" in symbolic  # block labels (subscripts drawn as lowered digits)
    rank3 = texts(parsed(layout("A[I_X, J, K_Y]", "X=2,Y=2", "I=64,J=32,K=128")))
    assert "J 0:32" in rank3 and "K 64:128" in rank3


def test_layout_words_and_default_mesh():
    fig = layout("A[I_X, J]{U_Z}")
    assert fig.title == "A[I_X, J]{U_Z} on mesh X=2,Z=2"
    assert "no mesh was given" in texts(parsed(fig))
    assert "partial sum" in fig.alt and "A[I_X, J]{U_Z}" in fig.alt
    assert layout("A[I_X, J]", "X=2", title="Mine").title == "Mine"
    fig = layout("A[I_X, J_Y]", "X=2,Y=2", "I=8,J=8")
    assert str(fig) == fig.svg == fig._repr_svg_()
    assert "characters of SVG" in repr(fig)


def test_big_meshes_stay_drawable():
    fig = layout("A[I_XY, J]", "X=16,Y=16", "I=4096,J=512")
    root = parsed(fig)
    assert len(devices(root)) == 256
    assert "more than 64 devices" in texts(root)


# -- determinism --------------------------------------------------------------------------------------

_SCRIPT = """
import hashlib, symshard as ss
from symshard.render import layout, collective, regimes
figs = [
    layout("A[I_XY, J]{U_Z}", "X=2,Y=2,Z=2", "I=64,J=8"),
    collective("AllToAll_{X,J}(A[I_X, J])", "X=4", "I=64,J=64"),
    regimes(ss.plan("__Q4__", "X=16", "B=4096,D=1024,F=4096", hardware="tpu-v5e"), "B"),
]
print(hashlib.sha256("".join(f.svg for f in figs).encode()).hexdigest())
""".replace("__Q4__", Q4)


def test_same_call_same_bytes():
    first = [layout("A[I_X, J_Y]", "X=2,Y=4"), collective("ReduceScatter_{X,K}(C[I, K]{U_X})", "X=2")]
    clear_caches()
    from symshard.render import layouts

    layouts._device_part.cache_clear()
    again = [layout("A[I_X, J_Y]", "X=2,Y=4"), collective("ReduceScatter_{X,K}(C[I, K]{U_X})", "X=2")]
    assert [f.svg for f in first] == [f.svg for f in again]
    assert len({f.svg for f in first}) == 2


def test_byte_identical_across_processes_and_hash_seeds():
    digests = set()
    for seed in ("0", "123"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_ids_differ_between_figures():
    a = layout("A[I_X, J]{U_Y}", "X=2,Y=2")
    b = layout("A[I_Y, J]{U_X}", "X=2,Y=2")
    ids = [set(re.findall(r'id="([^"]+)"', f.svg)) for f in (a, b)]
    assert ids[0] and not ids[0] & ids[1]  # two figures on one page do not share pattern ids


# -- collectives --------------------------------------------------------------------------------------


def _halves(root: ET.Element) -> tuple[list[ET.Element], list[ET.Element]]:
    devs = devices(root)
    return devs[: len(devs) // 2], devs[len(devs) // 2 :]


def test_allgather_gives_every_device_everything():
    root = parsed(collective("AllGather_X(A[I_X, J])", "X=2"))
    before, after = _halves(root)
    assert [len(stamp_colours(root, d)) for d in before] == [1, 1]
    colours = {c for d in before for c in stamp_colours(root, d)}
    assert all(set(stamp_colours(root, d)) == colours for d in after)


def test_reduce_scatter_and_all_reduce_sum_the_partials():
    root = parsed(collective("ReduceScatter_{X,K}(C[I, K]{U_X})", "X=2"))
    before, after = _halves(root)
    assert all("partial" in d.get("class") for d in before)
    assert not any("partial" in d.get("class") for d in after)
    assert [d.get("data-block") for d in after] == ["0,0", "0,1"]
    root = parsed(collective("AllReduce_X(C[I_Y, K]{U_X})", "X=2,Y=2"))
    before, after = _halves(root)
    assert all("partial" in d.get("class") for d in before) and not any("partial" in d.get("class") for d in after)
    assert [d.get("data-block") for d in before] == [d.get("data-block") for d in after]


def test_all_to_all_turns_rows_into_columns():
    fig = collective("AllToAll_{X,J}(A[I_X, J])", "X=2", "I=8,J=8")
    root = parsed(fig)
    before, after = _halves(root)
    rows = [stamp_colours(root, d) for d in before]  # device x holds row x: atoms (x, 0), (x, 1)
    cols = [stamp_colours(root, d) for d in after]  # device x holds column x: atoms (0, x), (1, x)
    assert cols == [[rows[0][0], rows[1][0]], [rows[0][1], rows[1][1]]]
    assert "AllToAll_{X,J}" in texts(root) and "per device: (4, 8) → (8, 4)" in texts(root)


def test_permute_and_slice():
    root = parsed(collective("CollectivePermute_X(A[I_X, J])", "X=4"))
    before, after = _halves(root)
    assert [d.get("data-block") for d in after] == [before[i - 1].get("data-block") for i in range(4)]
    root = parsed(collective("DynamicSlice_{Y,I}(A[I_X, J])", "X=2,Y=2"))
    assert "no data moves" in texts(root)


@pytest.mark.parametrize(
    "op",
    [
        "AllGather_Y([E_Y, F])",
        "ReduceScatter_{X,K}(C[I, K]{U_X})",
        "AllReduce_X(C[I, K]{U_X})",
        "AllToAll_{X,J}(A[I_X, J])",
        "AllGather_XY(A[I_XY, J])",
        "AllToAll_{X,K}(A[I_X, J, K])",
    ],
)
def test_every_collective_draws_both_halves(op):
    expr = ss.parse(op)
    fig = collective(expr)
    root = parsed(fig)
    before, after = _halves(root)
    assert len(before) == len(after) > 0
    assert fig.title.startswith(str(expr.op)) and str(expr.output) in fig.title
    assert "Before" in fig.alt and "After" in fig.alt


# -- regime plots ----------------------------------------------------------------------------------------


def test_regime_crossover_is_the_chapters_question_4():
    # the book's Question 4: gathering the weight is communication-bound iff B < C/W_ici, 2550 on a TPU v5p
    symbolic = ss.plan(Q4)
    i = [s.name for s in symbolic.strategies].index("AllGather_X(Y) → matmul") + 1
    gather = ss.compare(symbolic, "B", strategies=[i], hardware="tpu-v5p").regimes[0]
    assert gather.communication_bound.text() == "B < C/W_ici"
    derived = gather.numeric.cases[0].relations[0].rhs
    assert derived == 2550
    fig = regimes(Q4, "B", mesh="X=64", shape="D=1024,F=4096", hardware="tpu-v5p")
    root = parsed(fig)
    marks = {(e.get("data-kind"), e.get("data-x")) for e in root.iter(NS + "line") if e.get("class") == "crossover"}
    assert ("regime", str(derived)) in marks
    assert "B = 2,550" in texts(root) and "compute-bound at B = 2,550" in fig.alt
    assert "AllGather_X(Y) → matmul" in texts(root)


def test_regime_ticks_and_legend():
    p = ss.plan(Q4, "X=16", "B=4096,D=1024,F=4096", hardware="tpu-v5e")
    root = parsed(regimes(p, "B"))
    words = texts(root)
    assert {"1K", "16K", "64K"} <= set(words.split())
    assert re.search(r"\b(1|10|100) (µs|ms)\b", words)
    lines = [e for e in root.iter(NS + "polyline") if e.get("class") == "strategy"]
    assert 1 <= len(lines) <= 6
    assert len([e for e in root.iter(NS + "polyline") if e.get("class") == "math"]) == len(lines)


def test_fastest_crossovers_are_exact():
    p = ss.plan(Q4, "X=16", "B=4096,D=1024,F=4096", hardware="tpu-v5e")
    s = sweep(p, "B")
    changes = [e for e in s.events if e.kind == "fastest"]
    assert changes
    for e in changes:  # just below and above, the planner itself ranks a different strategy first
        assert e.x.denominator == 1
        lo, hi = (
            ss.plan(Q4, "X=16", {"B": int(b), "D": 1024, "F": 4096}, hardware="tpu-v5e") for b in (e.x - 1, e.x + 1)
        )
        assert lo.best.name != hi.best.name
        assert lo.best.name == s.curves[[c.index for c in s.curves].index(e.before)].strategy.name
    for b in (7, 100, 1000, 3000, 10**6):  # the swept functions are the planner's own numbers
        q = ss.plan(Q4, "X=16", {"B": b, "D": 1024, "F": 4096}, hardware="tpu-v5e")
        times = {st.name: st.raw_time for st in q.all_strategies()}  # those whose arrays divide at this B
        assert times and all(
            c.time(Fraction(b)) == times[c.strategy.name] for c in s.curves if c.strategy.name in times
        )
    fig = regimes(p, "B")
    assert all(f'data-x="{e.x}"' in fig.svg for e in changes)


@pytest.mark.parametrize(
    ("mm", "mesh", "dim"),
    [
        ("A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]", "X=4,Y=4", "J"),  # case 1 on two axes
        ("A[I, J_X] · B[J_X, K] -> C[I, K]", "X=8", "K"),  # case 3: reduce, or gather first
        ("A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]", "X=4,Y=2", "I"),
    ],
)
def test_the_sweep_picks_the_planners_fastest(mm, mesh, dim):
    shape = {"I": 2048, "J": 8192, "K": 4096}
    s = sweep(ss.plan(mm, mesh, shape, hardware="tpu-v5e"), dim)
    for x in (64, 640, 4096, 12800, 65536, 262144):
        q = ss.plan(mm, mesh, {**shape, dim: x}, hardware="tpu-v5e")
        times = {st.name: st.raw_time for st in q.all_strategies()}
        assert times[s.curves[s.best_at(Fraction(x))].strategy.name] == min(times.values())


def test_regime_range_and_labels():
    p = ss.plan(Q4, "X=16", "B=4096,D=1024,F=4096", hardware="tpu-v5e")
    fig = regimes(p, "B", lo=1024, hi=65536)
    assert "from 1K to 64K" in fig.alt
    text = texts(parsed(regimes(p, "B", labels={"AllGather_X(Y) → matmul": "Strategy 1"})))
    assert "Strategy 1: AllGather_X(Y) → matmul" in text


# -- the dispatcher ---------------------------------------------------------------------------------------


def test_svg_dispatches_on_what_it_is_given():
    assert svg("A[I_X, J]", mesh="X=2") == layout("A[I_X, J]", "X=2").svg
    assert svg(ss.parse("AllGather_X(A[I_X, J])")) == collective("AllGather_X(A[I_X, J])").svg
    p = ss.plan(Q4, "X=16", "B=4096,D=1024,F=4096", hardware="tpu-v5e")
    assert svg(p, dim="B") == regimes(p, "B").svg
    fig = layout("A[I_X, J]", "X=2")
    assert svg(fig) == fig.svg


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda: svg("A[I_X, J]", hardware="tpu-v5e"), UsageError, r"a layout of A\[I_X, J\] takes no hardware="),
        (lambda: svg("AllGather_X(A[I_X, J])", dim="I"), UsageError, r"takes no dim="),
        (lambda: svg(ss.plan(Q4, "X=16", "B=64,D=64,F=64", hardware="v5e")), PlanError, r"needs the dim to sweep"),
        (lambda: svg(42), NotationError, r"svg\(\) cannot draw int 42"),
        (lambda: svg(ss.AllGather("X")), CollectiveError, r"AllGather_X has no operand to draw"),
        (lambda: layout("A[I_X, J"), NotationError, r"A\[I_X, J"),
        (lambda: layout("A[I_X, J]", "X=?"), MeshError, r"the mesh 'X=\?' leaves X symbolic"),
        (lambda: layout("A[I_X, J]", "X=512"), MeshError, r"the mesh 'X=512' has 512 devices, more than"),
        (lambda: layout("A[I_Z, J]", "X=2"), UnknownAxisError, r"mesh axis Z in 'A\[I_Z, J\]'"),
        (lambda: layout("A[I_X, J]", "X=2", "I=3"), DivisibilityError, r"dim I of size 3 does not split evenly"),
        (lambda: layout(3.5), NotationError, r"layout\(\) draws an array, not float 3.5"),
        (lambda: collective("A[I_X, J]"), NotationError, r"'A\[I_X, J\]' is an array, not a collective"),
        (lambda: collective("AllGather_Y(A[I_X, J])"), CollectiveError, r"not sharded along Y"),
        (lambda: regimes(Q4, "Q", mesh="X=4", shape="D=8", hardware="v5e"), PlanError, r"'Q' is not a dim of"),
        (lambda: regimes(Q4, "B", mesh="X=4", shape="D=8", hardware="v5e"), ShapeError, r"but F has none"),
        (lambda: regimes(Q4, "B", shape="D=8,F=8", hardware="v5e"), PlanError, r"needs the mesh's sizes"),
        (lambda: regimes(Q4, "B", mesh="X=4", shape="D=8,F=8"), PlanError, r"needs a chip"),
        (lambda: regimes(Q4, "B", mesh="X=4", shape="D=8,F=8", hardware="v5e", lo=10, hi=5), ShapeError, r"empty"),
        (lambda: regimes(Q4, "B", mesh="X=4", shape="D=8,F=8", hardware="v5e", colour=1), PlanError, r"no option 'colour'"),
        (lambda: regimes(Q4, "B", mesh="X=4", shape="D=8,F=8", hardware="v5e", points=1), ShapeError, r"points=1"),
        (lambda: regimes(Q4, "B", mesh="X=4", shape="D=8,F=8", hardware="v5e", labels={"nope": "x"}), PlanError,
         r"no strategy is called 'nope'"),
    ],
)  # fmt: skip
def test_errors_teach(call, error, pattern):
    with pytest.raises(error, match=pattern) as info:
        call()
    assert str(info.value)  # a message, and usually a hint
    if error in (MeshError, UsageError, PlanError, ShapeError):
        assert info.value.hint


def test_render_is_not_imported_by_symshard():
    code = "import sys, symshard; print(any(m.startswith('symshard.render') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- figures in problems -------------------------------------------------------------------------------------

FIGURE_FAMILIES = ["allgather-time", "allreduce-reducescatter", "alltoall-vs-allgather", "device-memory",
                   "strategy-crossover"]  # fmt: skip


@pytest.mark.parametrize("name", FIGURE_FAMILIES)
def test_families_draw_figures(name):
    drawn = [p for p in (variant(family(name), seed) for seed in range(1, 7)) if p.figures]
    assert drawn
    for p in drawn:
        for i, (file, fig) in enumerate(p.figures, 1):
            assert file == f"{p.id}-{i}.svg"
            assert f"](figures/{file})" in p.statement + p.solution
            parsed(fig)
        assert p == replace(p, figures=())  # figures are not part of a problem's identity
        assert p.key() == replace(p, figures=()).key()


def _family(tmp_path: Path, template: str) -> Path:
    folder = tmp_path / "fams" / "probe"
    folder.mkdir(parents=True)
    (folder / "family.toml").write_text(
        '[family]\ntitle = "T"\ndifficulty = "easy"\ntags = ["t"]\nobjective = "O."\n'
        "[params.n]\nchoices = [2, 4]\n[let]\narr = \"array('A[I_X, J]')\"\n"
        '[[answers]]\nname = "x"\nlabel = "x"\nvalue = "n"\nunit = "count"\nrel_tol = 0\n'
    )
    (folder / "problem.md.j2").write_text(template)
    return folder


def test_figure_numbering_dedup_and_first_pass(tmp_path):
    template = (
        "{% macro m() %}x{% endmacro %}"  # code outside the blocks: the engine renders the template twice
        "{% block statement %}{{ figure('layout', arr, mesh({'X': n})) }}{% endblock %}"
        "{% block solution %}{{ figure('layout', arr, mesh({'X': n})) }} "
        "{{ figure('collective', parse('AllGather_X(A[I_X, J])'), mesh({'X': n})) }}{% endblock %}"
    )
    fam = family("probe", extra=[_family(tmp_path, template).parent])
    p = variant(fam, 3)
    assert [name for name, _ in p.figures] == ["probe-3-1.svg", "probe-3-2.svg"]
    assert "(figures/probe-3-1.svg)" in p.statement and "(figures/probe-3-1.svg)" in p.solution
    assert variant(fam, 3) == p and [f.svg for _, f in variant(fam, 3).figures] == [f.svg for _, f in p.figures]


def test_unknown_figure_kind(tmp_path):
    template = "{% block statement %}{{ figure('layuot', arr) }}{% endblock %}{% block solution %}s{% endblock %}"
    fam = family("probe", extra=[_family(tmp_path, template).parent])
    with pytest.raises(
        TemplateError, match=r"probe.*line 1: figure\(.layuot., \.\.\.\) is not a kind of figure.*.layout."
    ):
        variant(fam, 1)


@pytest.fixture(scope="module")
def figure_set():
    return generate(11, per_family=2, names=["allgather-time", "alltoall-vs-allgather", "strategy-crossover"])


def test_write_set_writes_the_figures(tmp_path, figure_set):
    written = write_set(figure_set, tmp_path / "out", seed=11)
    files = sorted(p.relative_to(tmp_path / "out").as_posix() for p in written if p.parent.name == "figures")
    assert files == sorted(f"figures/{name}" for p in figure_set for name, _ in p.figures)
    md = (tmp_path / "out" / "problems.md").read_text(encoding="utf-8")
    for p in figure_set:
        for name, fig in p.figures:
            assert (tmp_path / "out" / "figures" / name).read_text(encoding="utf-8") == fig.svg
    key = (tmp_path / "out" / "answer-key.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((figures/[^)]+\.svg)\)", md + key))
    assert linked == set(files)  # every link resolves, every file is linked
    assert to_markdown(figure_set, solutions=True).count("](figures/") >= len(files)


def test_json_carries_the_figures(figure_set):
    data = to_json(figure_set, seed=11)
    jsonschema.validate(data, schema())
    record = next(r for r in data["problems"] if r["figures"])
    fig = record["figures"][0]
    assert set(fig) == {"name", "title", "alt", "svg"} and fig["svg"].startswith("<svg xmlns=")
    assert f"figures/{fig['name']}" in record["solution"]


def test_moodle_embeds_the_figures(figure_set):
    xml = to_moodle(figure_set)
    root = ET.fromstring(xml)
    assert "](figures/" not in xml  # no Markdown image is left for Moodle to miss
    for q, p in zip((q for q in root.findall("question") if q.get("type") != "category"), figure_set, strict=True):
        files = {f.get("name"): f for f in q.iter("file")}
        assert set(files) == {name for name, _ in p.figures}
        for name, fig in p.figures:
            f = files[name]
            assert f.get("encoding") == "base64" and f.get("path") == "/"
            assert base64.b64decode(f.text).decode("utf-8") == fig.svg
            assert f'src="@@PLUGINFILE@@/{name}"' in ET.tostring(q, encoding="unicode").replace("&quot;", '"') or (
                f"@@PLUGINFILE@@/{name}" in (q.findtext("generalfeedback/text") + q.findtext("questiontext/text"))
            )


def test_same_seed_same_bytes_with_figures(tmp_path):
    outs = []
    for run in range(2):
        clear_caches()
        problems = generate(5, per_family=1, names=FIGURE_FAMILIES)
        out = tmp_path / f"run{run}"
        write_set(problems, out, seed=5)
        # the stamps are this machine's proof of what symshard wrote (inodes, times): different on every run
        files = [p for p in sorted(out.rglob("*")) if p.is_file() and p.name != STAMPS]
        outs.append({p.relative_to(out).as_posix(): p.read_bytes() for p in files})
    assert outs[0] == outs[1]
    assert any(k.startswith("figures/") for k in outs[0])
    digest = hashlib.sha256(json.dumps(sorted(outs[0])).encode()).hexdigest()
    assert digest  # the file list itself is stable (checked by equality above)

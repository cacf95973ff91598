"""The regime map: the fastest strategy over two symbols, checked against numeric plans at many points."""

from __future__ import annotations

import json
import math
import random
import re

import pytest

import symshard as ss
from symshard.cli import main
from symshard.errors import PlanError, ShapeError
from symshard.render import regime_map

Q4 = "X[B, D] · Y[D_X, F] -> Z[B, F]"
TWO_AXES = "A[I_X, J_Y] · B[J_Y, K] -> C[I_X, K]"


def _frame(svg: str) -> tuple[float, float, float, float, tuple[float, float], tuple[float, float]]:
    m = re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"[^>]*class="frame" '
                  r'data-x="([^"]+)" data-y="([^"]+)"', svg)  # fmt: skip
    assert m, "the frame carries the ranges drawn"
    x, y, w, h = (float(m.group(i)) for i in range(1, 5))
    xr = tuple(float(v) for v in m.group(5).split())
    yr = tuple(float(v) for v in m.group(6).split())
    return x, y, w, h, xr, yr  # type: ignore[return-value]


def _regions(svg: str) -> list[tuple[float, float, float, float, int]]:
    out = []
    for m in re.finditer(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="#[0-9a-f]+" '
                         r'data-strategy="(\d+)"/>', svg):  # fmt: skip
        out.append((*(float(m.group(i)) for i in range(1, 5)), int(m.group(5))))
    return out


def _colour_at(svg: str, xv: float, yv: float) -> int | None:
    fx, fy, fw, fh, (x0, x1), (y0, y1) = _frame(svg)
    px = fx + (math.log(xv) - math.log(x0)) / (math.log(x1) - math.log(x0)) * fw
    py = fy + (math.log(y1) - math.log(yv)) / (math.log(y1) - math.log(y0)) * fh
    for x, y, w, h, who in _regions(svg):
        if x <= px <= x + w and y <= py <= y + h:
            return who
    return None


def _numeric_fastest(mm, mesh, shape, hw, names, dtype="bf16") -> tuple[list[str], float]:
    """The compared strategies fastest at a numeric point (ties kept), from a plan of numbers, and the margin."""
    p = ss.plan(mm, mesh, shape, hardware=hw, dtype=dtype, all=True)
    times = {}
    for s in p.strategies:  # as compare weighs them: the bandwidth-bound T_comms, T_math and T_hbm
        if s.name in names:
            times[s.name] = max(float(s.compute_time), float(s.hbm_time), float(s.bandwidth_comm_time))
    best = min(times.values())
    tied = sorted(n for n, t in times.items() if t <= best * (1 + 1e-9))
    others = sorted(t for t in times.values() if t > best * (1 + 1e-9))
    margin = (others[0] / best - 1) if others else math.inf
    return tied, margin


@pytest.mark.parametrize(
    ("mm", "solve_for", "x", "y", "mesh", "shape", "hw", "fixed"),
    [
        (Q4, "B", "B", "D", "X=8", "F=16384", "tpu-v5p", {}),
        (Q4, "B", "B", "D", "X=16", "F=4096", "tpu-v5e", {}),
        (TWO_AXES, "I", "I", "J", "X=4,Y=4", "K=8192", "tpu-v5e", {}),
    ],
)
def test_the_colour_at_a_point_is_the_fastest_strategy_of_the_numeric_plan_there(
    mm, solve_for, x, y, mesh, shape, hw, fixed
):
    c = ss.compare(mm, solve_for, mesh=mesh, shape=shape, hardware=hw)
    svg = regime_map(c, x, y).svg
    *_, (x0, x1), (y0, y1) = _frame(svg)
    names = {i: s.name for i, s in c.strategies}
    index = {n: i for i, n in names.items()}
    devices = math.prod(int(v.split("=")[1]) for v in mesh.split(","))
    rng = random.Random(17)
    checked = 0
    while checked < 40:
        xv = devices * max(1, round(math.exp(rng.uniform(math.log(x0), math.log(x1))) / devices))
        yv = devices * max(1, round(math.exp(rng.uniform(math.log(y0), math.log(y1))) / devices))
        if not (x0 < xv < x1 and y0 < yv < y1):
            continue
        tied, margin = _numeric_fastest(mm, mesh, f"{shape},{x}={xv},{y}={yv}", hw, set(names.values()))
        if margin < 0.03:  # too near a boundary for a cell to say
            continue
        assert _colour_at(svg, xv, yv) == min(index[n] for n in tied), (xv, yv, tied)
        checked += 1


def test_each_boundary_lies_where_the_two_times_are_equal():
    c = ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    svg = regime_map(c, "B", "D").svg
    fx, fy, fw, fh, (x0, x1), (y0, y1) = _frame(svg)
    B, D = ss.symbols.dim("B"), ss.symbols.dim("D")
    constants = {k: float(v) for k, v in dict(ss.hardware("tpu-v5p").constants("bf16")).items()}
    boundaries = re.findall(r'<path d="([^"]+)"[^>]*data-boundary="(\d+)\|(\d+)"', svg)
    assert len(boundaries) >= 3
    for d, a, b in boundaries:
        starts = re.findall(r"M([\d.]+) ([\d.]+)", d)
        for px, py in starts[:: max(1, len(starts) // 10)]:
            xv = math.exp(math.log(x0) + (float(px) - fx) / fw * (math.log(x1) - math.log(x0)))
            yv = math.exp(math.log(y1) - (float(py) - fy) / fh * (math.log(y1) - math.log(y0)))
            point = {**constants, B: xv, D: yv}
            ta, tb = c.time(int(a)).value(point), c.time(int(b)).value(point)
            assert abs(ta - tb) <= 0.02 * max(ta, tb), (a, b, xv, yv)  # equal up to the drawing's 2-decimal pixels


def test_the_notes_give_each_boundary_its_formula_and_its_value_on_the_chip():
    c = ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    fig = regime_map(c, "B", "D")
    notes = re.findall(r'class="note">([^<]*)<', fig.svg)
    numbered = [n for n in notes if n[:1] in "①②③④⑤⑥⑦⑧⑨"]
    assert len(numbered) == fig.svg.count('class="boundary"') == fig.svg.count('class="badge"')
    assert all(re.search(r"\d+ \| \d+: [BD] = ", n) for n in numbered)
    # a boundary whose formula holds the chip's constants also gives its value on the chip
    with_constants = [n for n in numbered if "W_ici" in n]
    assert with_constants and all("; on TPU v5p: " in n for n in with_constants)
    assert "is fastest on" in fig.alt and "meet where" in fig.alt


def test_the_same_comparison_draws_the_same_bytes():
    a = ss.regime_map(ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p"), "B", "D").svg
    b = regime_map(ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p"), "B", "D").svg
    assert a == b


def test_a_comparison_shows_as_its_map_in_a_notebook_when_it_can_be_drawn():
    from symshard.notebook import show

    drawable = ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    svg = show("image/svg+xml", drawable)
    assert svg is not None and svg.startswith("<svg")
    assert "<figure>" + svg + "</figure>" in show("text/html", drawable)  # the map under the table
    too_many = ss.compare(TWO_AXES, "I", hardware="tpu-v5e")  # J, K, |X| and |Y| all free: no second symbol
    assert show("image/svg+xml", too_many) is None
    page = show("text/html", too_many)
    assert page is not None and "<svg" not in page and "communication-bound iff" in page


def _free():
    return ss.compare(Q4, "B", hardware="tpu-v5p")  # F and |X| left free


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda c: regime_map("not a comparison", "B", "D"), PlanError, "draws a comparison, not str"),
        (lambda c: regime_map(c, "B", "B"), PlanError, "two different symbols"),
        (lambda c: regime_map(c, "B", "Q"), PlanError, "'Q' does not appear"),
        (lambda c: regime_map(c, "B", "D", x_range=(100, 10)), ShapeError, "is empty"),
        (lambda c: regime_map(c, "B", "D", x_range="wide"), ShapeError, "is not two numbers"),
        (lambda c: regime_map(_free(), "B", "D", at={"F": "lots", "X": 8}), ShapeError, "is not a number"),
        (lambda c: regime_map(_free(), "B", "D", at={"F": -3, "X": 8}), ShapeError, "not a positive size"),
        (lambda c: regime_map(c, "B", "D", at={"F": 4096}), PlanError, "'F' does not appear"),
    ],
)
def test_bad_requests_get_errors_that_say_what_to_do(call, error, words):
    c = ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    with pytest.raises(error, match=re.escape(words)) as info:
        call(c)
    assert info.value.hint


def test_symbols_left_without_numbers_are_named_with_where_to_give_them():
    c = ss.compare(Q4, "B", hardware="tpu-v5p")
    with pytest.raises(ShapeError, match=r"needs a number for F, \|X\|") as info:
        regime_map(c, "B", "D")
    assert "--shape F=4096 --mesh X=8 on the command line" in info.value.hint
    assert "at=dict(F=4096, X=8)" in info.value.hint
    fig = regime_map(c, "B", "D", at={"F": 16384, "X": 8})  # the numbers given in Python instead
    assert "F=16,384" in fig.svg and "|X|=8" in fig.svg and fig.svg.count('class="boundary"') >= 2


# -- the command line ---------------------------------------------------------------------------------

ARGV = ["compare", Q4, "--solve-for", "B", "--mesh", "X=8", "--shape", "F=16384", "--hw", "tpu-v5p", "--map", "B,D"]


def test_compare_map_writes_a_signed_svg_and_says_where(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(ARGV) == 0
    out = capsys.readouterr().out
    assert "regime map: regime-map.svg (the fastest strategy by B and D; 4 boundaries" in out
    text = (tmp_path / "regime-map.svg").read_text(encoding="utf-8")
    assert text.startswith("<!-- written by symshard compare; sha256 ") and "\n<svg xmlns=" in text
    assert main(ARGV) == 0  # its own file, untouched: written again
    capsys.readouterr()
    assert main([*ARGV, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["map"] == {"file": "regime-map.svg", "x": "B", "y": "D", "boundaries": 4}
    assert main([*ARGV, "--lang", "zh"]) == 0
    assert "区域图：regime-map.svg" in capsys.readouterr().out


def test_compare_map_never_replaces_a_file_it_did_not_write(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.svg").write_text("my drawing", encoding="utf-8")
    assert main([*ARGV, "--map-file", "mine.svg"]) == 2
    assert "was not written by symshard" in capsys.readouterr().err
    assert (tmp_path / "mine.svg").read_text(encoding="utf-8") == "my drawing"
    assert main(ARGV) == 0
    edited = tmp_path / "regime-map.svg"
    edited.write_text(edited.read_text(encoding="utf-8") + "<!-- my note -->\n", encoding="utf-8")
    assert main(ARGV) == 2 and "changed since symshard wrote it" in capsys.readouterr().err
    assert main([*ARGV, "--force"]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--map", "B"], "--map takes two symbols, not 'B'"),
        (["--map", "B,Q"], "'Q' does not appear"),
    ],
)
def test_compare_map_errors_are_one_line(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    assert main([*ARGV[:-2], *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "regime-map.svg").exists()


def test_compare_points_to_the_map_with_what_it_needs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # symbols left free: the hint names the map and numbers for the rest, and that command line works
    assert main(["compare", Q4, "--solve-for", "B", "--hw", "tpu-v5p"]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    assert (
        hint
        == "who wins where, as a picture: add --map B,D with numbers for the other symbols, e.g. --shape F=4096 --mesh X=4"
    )
    assert (
        main(
            ["compare", Q4, "--solve-for", "B", "--hw", "tpu-v5p", "--map", "B,D", "--shape", "F=4096", "--mesh", "X=4"]
        )
        == 0
    )
    assert "regime map: regime-map.svg" in capsys.readouterr().out
    # everything else given: the hint is the flag alone
    assert main(ARGV[:-2]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "who wins where, as a picture: add --map B,D"


def test_a_chips_constant_can_be_an_axis_of_the_map():
    # W_ici across: searched around the chip's own value, ticks and words in powers of ten
    c = ss.compare(Q4, "B", mesh="X=8", shape="F=16384,D=8192", hardware="tpu-v5p")
    fig = regime_map(c, "B", "W_ici")
    assert "W_ici from 1e+" in fig.alt and ">1e12<" in fig.svg
    *_, (y0, y1) = _frame(fig.svg)
    w = float(dict(ss.hardware("tpu-v5p").constants("bf16"))[ss.symbols.W_ici])
    assert y0 < w < y1


def test_a_condition_keeps_its_strictness_at_integer_boundaries():
    # |X| > D/5100 at D = 10200 is |X| > 2, not "always": at |X| = 2 the two sides tie, and a tie is not
    # communication-bound; every (D, |X|) on and around the boundaries agrees with the exact inequality
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from symshard.algebra.symbols import axis
    from symshard.planning.crossovers import compare

    c = compare("X[B, D] · Y[D_X, F] -> Z[B, F]", "X", hardware="tpu-v5p")
    numeric = c.regimes[0].numeric
    assert numeric.text() == "|X| > D/5100"
    assert numeric.subs({"D": 10200}).text() == "|X| > 2"

    @settings(max_examples=60, deadline=None)
    @given(k=st.integers(1, 16), shift=st.sampled_from([-1, 0, 1]), x=st.integers(2, 20))
    def agree(k: int, shift: int, x: int) -> None:
        d = 5100 * k + shift  # on a boundary (shift 0) and just beside it
        held = numeric.subs({"D": d}).holds({axis("X"): x})
        assert held == (x * 5100 > d), (d, x)

    agree()

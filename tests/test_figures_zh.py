"""The figures in Chinese: every word drawn and the description for screen readers, with the
numbers, formulas, notation, strategy names and the chip's label as they are; English unchanged.

The English digests were taken from main before the figures learned a second language (the site's
own figures and the modules' doctest figures), so a change to an English figure fails here.
"""

from __future__ import annotations

import hashlib
import html
import re

import pytest
from helpers import english_left

import symshard as ss
from symshard.cli import main
from symshard.render.style import text_width

Q4 = "X[B, D] · Y[D_X, F] -> Z[B, F]"


def _site_map(language: str = "en") -> ss.render.Figure:
    ring8 = ss.Mesh("X=8", topology="ring")
    c = ss.compare(Q4, "B", mesh=ring8, shape="F=16384", hardware="tpu-v5p")
    return ss.regime_map(c, "B", "D", language=language)


def _doc_map(language: str = "en") -> ss.render.Figure:
    c = ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    return ss.regime_map(c, "B", "D", language=language)


def _site_plot(language: str = "en") -> ss.render.Figure:
    ring8 = ss.Mesh("X=8", topology="ring")
    q4 = ss.plan(Q4)
    return ss.render.regimes(q4, "B", mesh=ring8, shape="D=4096,F=16384", hardware="tpu-v5p", lo=256, hi=16384,
                             language=language)  # fmt: skip


def _doc_plot(language: str = "en") -> ss.render.Figure:
    return ss.render.regimes(Q4, "B", mesh="X=64", shape="D=1024,F=4096", hardware="tpu-v5p", language=language)


def _labelled_plot(language: str = "en") -> ss.render.Figure:
    # caller's labels, a crossover between two rounded values, more strategies than lines
    return ss.render.regimes(Q4, "B", mesh="X=16", shape="D=1024,F=4096", hardware="tpu-v5e", language=language,
                             labels={1: "策略甲"})  # fmt: skip


ENGLISH_BEFORE = {  # sha256 of (svg, alt) as main drew them
    "map-site": (_site_map, "92ad913e1b3c38d3a4eefc85b40beeed5934c90ac47363525f28798de3092c86",
                 "e4ae2d4a2a8024c31c0f4e735ebd1745479d33ca39d7c56780336b96bdb9e2b1"),
    "map-doc": (_doc_map, "87e1c8482c36664a0118bd419475363baec12d0d1aeb8879e6bbd4e0eeba6546",
                "1667fcddcf660f08b5931734b3209b1f8f504e7c1f4094d498e72ac656823eea"),
    "plot-site": (_site_plot, "f21306e71bdaf9cbc88db2d8ae8b66aac04ad7de18a126dc5c620e7c3098d3c5",
                  "c2a2d3e6ebc063d73dddcc022306f3a025b3614b774831767e227909c34f74c3"),
    "plot-doc": (_doc_plot, "1ce6b8414b305a12c195642104c9836b0392c66bfe781e90a6fc5b91ece97bd3",
                 "5f5da0f7113f06922f006ac90d1f46f5bb0a68e9c022a74a8e44c8c9a7650691"),
}  # fmt: skip

_NOTATION = re.compile(
    r"\w+\[[^\]]*\](\{[^}]*\})?"  # arrays: X[B, D], C[I, K]{U_Y}
    r"|\w+_(\{[^}]*\}|\w+)(\([^)]*\))?"  # subscripted names and collectives: T_math, AllGather_X(Y)
    r"|\bmatmul\b|\bmax\b|\bcompare\b"  # a strategy's step, the time's formula, the command the notes name
)


_NAMES = {"TPU", "book", "ms", "ns"}


def _drawn(svg: str) -> list[str]:
    """The words a figure shows: its texts, its title and its description (and the aria-label)."""
    texts = re.findall(r"<(?:text|title|desc)[^>]*>([^<]*)</", svg) + re.findall(r'aria-label="([^"]*)"', svg)
    return [html.unescape(t) for t in texts]


def _english_words(svg: str) -> list[str]:
    left = []
    for text in _drawn(svg):
        run = english_left(text)
        rest = _NOTATION.sub(" ", text)
        # whole Latin words only: bf16, v5p and 512K are a dtype, a chip and a number; the chip's name,
        # the collective model's name and the time axis's units are names too
        left += ([run] if run else []) + [w for w in re.findall(r"\b[A-Za-z]{2,}\b", rest) if w not in _NAMES]
    return sorted(set(left))


@pytest.mark.parametrize("name", sorted(ENGLISH_BEFORE))
def test_english_figures_are_byte_for_byte_as_before(name):
    make, svg_digest, alt_digest = ENGLISH_BEFORE[name]
    fig = make()
    assert hashlib.sha256(fig.svg.encode()).hexdigest() == svg_digest
    assert hashlib.sha256(fig.alt.encode()).hexdigest() == alt_digest
    assert make("en").svg == fig.svg


@pytest.mark.parametrize("make", [_site_map, _doc_map], ids=["site", "doc"])
def test_the_chinese_regime_map_leaves_no_english_words(make):
    english, chinese = make(), make("zh")
    assert _english_words(chinese.svg) == []
    assert _english_words(english.svg) != []  # the check can see English
    assert chinese.title.startswith("按 B 与 D 划分的最快策略：X[B, D]")
    assert chinese.alt.startswith("3 个策略中最快者的区域图") and chinese.alt.endswith("。")
    # the picture itself is the same: regions, boundaries and their formulas
    shapes = re.compile(r"<(?:rect|path|circle)[^>]*>")
    assert (
        shapes.findall(chinese.svg)[1:] == shapes.findall(english.svg)[1:]
    )  # [0]: the background, as wide as the words
    formulas = re.findall(r"[①-⑳] \d \| \d: ([^<；;]*)", chinese.svg)
    assert formulas == re.findall(r"[①-⑳] \d \| \d: ([^<；;]*)", english.svg) and formulas


@pytest.mark.parametrize("make", [_site_plot, _doc_plot, _labelled_plot], ids=["site", "doc", "labelled"])
def test_the_chinese_regime_plot_leaves_no_english_words(make):
    english, chinese = make(), make("zh")
    assert _english_words(chinese.svg) == []
    assert _english_words(english.svg) != []
    assert chinese.title.startswith("耗时随 B 的变化：X[B, D]") and chinese.alt.endswith("。")
    crossings = re.compile(r'<line[^>]*class="crossover"[^>]*>')
    assert crossings.findall(chinese.svg) == crossings.findall(english.svg)


def test_chinese_words_fit_the_canvas():
    for fig in (_site_map("zh"), _site_map("en"), _site_plot("zh"), _labelled_plot("zh")):
        width = float(re.search(r'width="([\d.]+)"', fig.svg).group(1))
        for x, size, text in re.findall(
            r'<text x="([\d.]+)" y="[\d.]+" font-size="(\d+)"(?![^>]*text-anchor)[^>]*>([^<]*)<', fig.svg
        ):
            assert float(x) + text_width(html.unescape(text), float(size)) <= width, text


def test_a_chinese_character_is_measured_a_whole_em():
    assert text_width("区域", 10) == 20.0
    assert text_width("区域图", 10) > text_width("map", 10)
    assert text_width("①·→", 10) == pytest.approx(3 * 6.2)  # ambiguous widths stay narrow, as English drew them


def test_compare_map_in_chinese_writes_a_chinese_map(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["compare", Q4, "--solve-for", "B", "--mesh", "X=8", "--shape", "F=16384", "--hw", "tpu-v5p", "--map", "B,D"]
    assert main(["--lang", "zh", *argv]) == 0
    assert "区域图：regime-map.svg" in capsys.readouterr().out
    svg = (tmp_path / "regime-map.svg").read_text(encoding="utf-8")
    assert "按 B 与 D 划分的最快策略" in svg and _english_words(svg) == []
    assert main([*argv, "--force"]) == 0  # English again, over the Chinese
    assert _english_words((tmp_path / "regime-map.svg").read_text(encoding="utf-8")) != []


def test_the_notebook_and_the_report_draw_the_map_in_their_language():
    from symshard import notebook
    from symshard.report.html import comparison_html

    c = ss.compare(Q4, "B", mesh="X=8", shape="F=16384", hardware="tpu-v5p")
    notebook.use_language("zh")
    try:
        svg = notebook.show("image/svg+xml", c)
    finally:
        notebook.use_language(None)
    assert svg is not None and "按 B 与 D 划分的最快策略" in svg
    assert "按 B 与 D 划分的最快策略" in comparison_html(c, language="zh")
    assert "Fastest strategy by B and D" in comparison_html(c)

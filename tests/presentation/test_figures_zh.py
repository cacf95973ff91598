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


ENGLISH_BEFORE = {  # sha256 of (svg, alt) as main drew them (the plots since their curves count T_hbm)
    "map-site": (_site_map, "92ad913e1b3c38d3a4eefc85b40beeed5934c90ac47363525f28798de3092c86",
                 "e4ae2d4a2a8024c31c0f4e735ebd1745479d33ca39d7c56780336b96bdb9e2b1"),
    "map-doc": (_doc_map, "87e1c8482c36664a0118bd419475363baec12d0d1aeb8879e6bbd4e0eeba6546",
                "1667fcddcf660f08b5931734b3209b1f8f504e7c1f4094d498e72ac656823eea"),
    "plot-site": (_site_plot, "e149510f34e0d5c6c997bcefd4b54eeef3b5457d063f89968617b49f8b301c42",
                  "c2a2d3e6ebc063d73dddcc022306f3a025b3614b774831767e227909c34f74c3"),
    "plot-doc": (_doc_plot, "0191f36a821e00be5a01c19067edb5435df6ba6d955d8ec2ffd98a8dc2d728bb",
                 "5f5da0f7113f06922f006ac90d1f46f5bb0a68e9c022a74a8e44c8c9a7650691"),
}  # fmt: skip


# layouts and collectives: a sharded, a copied, an unreduced, a made-up and a large mesh; every collective
DEVICE_FIGURES = {  # name: (kind, args, sha256 of the English svg, of its alt) as main drew them
    "layout-2d": ("layout", ("A[I_X, J_Y]", "X=2,Y=2", "I=4,J=128",), "268f7d9feec24cbd112a881bb439dbb3cfb96224d1784942fe4e3830284214d7",
        "19766e8ace5d0632b6a6e4a870c52169b421391fc60e075edb9cdf66a93967a0"),
    "layout-copies": ("layout", ("A[I_XY, J]", "X=2,Y=2,Z=2",), "d0e68a3c441e958accbde3e4b3b2061876b37b35335ed815598271e7f8ccd97b",
        "9d0f18db0575453a4dafecc7918068758d969b3ae5bd4906043eaa99ffb2ab79"),
    "layout-unreduced": ("layout", ("C[I_X, K]{U_Z}", "X=2,Z=2",), "9f828224d910aca690f002ef05129140ff2f46d1879acd534c85b6df0aa0c946",
        "e2e4bee69482fad0c4b65ece0479c75ad7359227e3287f158b5bec6407c45e4a"),
    "layout-made-up-many": ("layout", ("A[I_X, J]{U_Y}",), "444d206e67a7f2a4bdd419916f8bc3e068534f742b08196bbf47111625d8e656",
        "6f46cd493efd208b316829b3fe7f982bb6408b7fba7809e9535050b59ebed48f"),
    "layout-big": ("layout", ("A[I_X, J_Y]", "X=8,Y=16",), "d327edbebe68ee4093a0fc3ad7327be1aded96b5c6573c11cb08e215ed6ee0a3",
        "1dbb0cfa9d986fd6347e46fbbf27701b59f04b66ecb5c3c4fd07089defb712d0"),
    "allgather": ("collective", ("AllGather_X(A[I_X, J])", "X=4",), "408ec74c2099722f62a1832c203af9f01f6f1dbe50f38c08e8a1b098df6688f3",
        "f95241f88d0b67d73b6e409326b90480a40c5745cac4b5a37fcc27017794de81"),
    "reducescatter": ("collective", ("ReduceScatter_{X,K}(C[I, K]{U_X})", "X=4", "I=64,K=128",), "99388641ad62dd04c12894067b821f418e6efac7f85b63464f2e4c49eac0a494",
        "072b8a537b8b36ad1a414f7225754729cc766a1146574b79556750ddc38eaa85"),
    "allreduce": ("collective", ("AllReduce_X(A[I, J]{U_X})",), "d60acc561a3d9858b2df7a7fe4cc8e741173f55b07f0ed917a0dacd92687cced",
        "01f8392c578a928f902a7e08290120f731702aeb2dabc50634ba6c4f8d960ae4"),
    "alltoall": ("collective", ("AllToAll_{X,J}(A[I_X, J])", "X=4",), "a27f5cdc0dc1847b369f3bd52a569808f56f630e8c58a16e63d689e5b3e38d93",
        "2830c07decea11a12c707c6bc0b85fc680c9eaba9eff9e951fa130b4eeb7f1bd"),
    "permute": ("collective", ("CollectivePermute_X(A[I_X, J])", "X=4",), "77d6240f31d38ef92bcb38fbec87cc17236a9ee550675aa0048639649017e0f8",
        "40eda8cdbb346dfe04e75070d1d295586ee56cba60dc0c42a1889f57b8a925ad"),
    "dynslice": ("collective", ("DynamicSlice_{X,J}(A[I, J])", "X=2",), "962dcc47fa69bdf156f686ca99fd81713d2e95a0860a276212f6ac1343cc0419",
        "00d30d9af307936044a0aed36d7d6b53ce3f1cdefd77bc3e8284b965afdd93c5"),
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


def _english_words(svg: str, axes: frozenset[str] = frozenset()) -> list[str]:
    """English left in a figure; ``axes``: mesh axes written together (``XY``), which are notation."""
    left = []
    for text in _drawn(svg):
        run = english_left(text)
        rest = _NOTATION.sub(" ", text)
        # whole Latin words only: bf16, v5p and 512K are a dtype, a chip and a number; the chip's name,
        # the collective model's name and the time axis's units are names too
        left += ([run] if run else []) + [w for w in re.findall(r"\b[A-Za-z]{2,}\b", rest) if w not in _NAMES | axes]
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
    device_figures = [_device_figure(name, "zh") for name in sorted(DEVICE_FIGURES)]
    for fig in (_site_map("zh"), _site_map("en"), _site_plot("zh"), _labelled_plot("zh"), *device_figures):
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


def _device_figure(name: str, language: str = "en") -> ss.render.Figure:
    kind, args, _, _ = DEVICE_FIGURES[name]
    draw = ss.render.layout if kind == "layout" else ss.render.collective
    return draw(*args, language=language)


@pytest.mark.parametrize("name", sorted(DEVICE_FIGURES))
def test_english_layouts_and_collectives_are_byte_for_byte_as_before(name):
    _, _, svg_digest, alt_digest = DEVICE_FIGURES[name]
    fig = _device_figure(name)
    assert hashlib.sha256(fig.svg.encode()).hexdigest() == svg_digest
    assert hashlib.sha256(fig.alt.encode()).hexdigest() == alt_digest
    assert _device_figure(name, "en").svg == fig.svg


def _what_is_drawn(svg: str) -> list[str]:
    """The picture without its words: which device holds which block, the blocks' colours, the hatching."""
    held = re.findall(r'class="(device[^"]*)" data-device="([^"]*)" data-block="([^"]*)"', svg)
    blocks = re.findall(r'fill="(#[0-9a-f]{6})" class="block" data-block="([^"]*)"', svg)
    return [*map(str, held), *map(str, blocks), str(svg.count("url(#"))]


@pytest.mark.parametrize("name", sorted(DEVICE_FIGURES))
def test_the_chinese_layouts_and_collectives_leave_no_english_words(name):
    english, chinese = _device_figure(name), _device_figure(name, "zh")
    assert _english_words(chinese.svg, frozenset({"XY"})) == []
    assert _english_words(english.svg) != []  # the check can see English
    assert chinese.alt.endswith("。") and english_left(chinese.alt) is None
    assert _what_is_drawn(chinese.svg) == _what_is_drawn(english.svg)
    assert len(_what_is_drawn(chinese.svg)) > 4
    # the notation is kept: the array (or the collective and its arrays) is named in the title and the alt
    notation = DEVICE_FIGURES[name][1][0].split("(")[0]
    assert notation.split("[")[0] in chinese.title and notation.split("[")[0] in chinese.alt


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("AllGather_X(A[I_X, J])", "沿 X 的每个设备都收到其他设备持有的块；I 重新完整"),
        ("ReduceScatter_{X,K}(C[I, K]{U_X})", "沿 X 的部分和相加，每个设备保留 K 的一个切片"),
        ("AllReduce_X(A[I, J]{U_X})", "沿 X 的部分和相加，每个设备都保留完整的总和"),
        ("AllToAll_{X,J}(A[I_X, J])", "跨 X 的切分从 I 移到 J：每个设备向其他每个设备各发送一块"),
        ("CollectivePermute_X(A[I_X, J])", "每个设备把自己的块传给沿 X 的下一个设备（最后一个传给第一个）"),
        ("DynamicSlice_{X,J}(A[I, J])", "每个设备沿 X 只保留所持内容的一个切片：没有数据移动"),
    ],
)
def test_each_collective_is_described_in_chinese_on_its_arrow_and_in_its_alt(text, said):
    from symshard.render.collectives import describe

    fig = ss.render.collective(text, "X=2", language="zh")
    assert describe(ss.parse(text), "zh") == said
    assert f">{said}<" in fig.svg and f"：{said}。" in fig.alt


def test_the_mesh_in_words_has_an_article_in_english_only():
    from symshard.render.layouts import mesh_words

    meshes = [ss.Mesh("X=8,Y=2"), ss.Mesh("X=2,Y=2"), ss.Mesh("X=11,Y=2"), ss.Mesh("X=4")]
    assert [mesh_words(m) for m in meshes] == [
        "an 8×2 mesh (X=8,Y=2)", "a 2×2 mesh (X=2,Y=2)", "an 11×2 mesh (X=11,Y=2)", "a mesh of 4 devices (X=4)"
    ]  # fmt: skip
    assert [mesh_words(m, "zh") for m in meshes] == [
        "8×2 网格（X=8,Y=2）", "2×2 网格（X=2,Y=2）", "11×2 网格（X=11,Y=2）", "4 个设备的网格（X=4）"
    ]  # fmt: skip


def test_svg_passes_the_language_to_every_kind_of_figure():
    layout = ss.render.svg("A[I_X, J]", mesh="X=2", language="zh")
    assert "网格 X=2：每个设备持有的内容" in layout and _english_words(layout) == []
    moved = ss.render.svg("AllToAll_{X,J}(A[I_X, J])", mesh="X=4", language="zh")
    assert moved == ss.render.collective("AllToAll_{X,J}(A[I_X, J])", "X=4", language="zh").svg
    plot = ss.render.svg(Q4, dim="B", mesh="X=64", shape="D=1024,F=4096", hardware="tpu-v5p", language="zh")
    assert plot == _doc_plot("zh").svg


def test_a_problem_draws_its_figures_in_its_language():
    from symshard.problems.figures import FigureBook

    english, chinese, kept = FigureBook("p-1"), FigureBook("p-1", "zh"), FigureBook("p-1", "zh")
    english("collective", "AllGather_X(A[I_X, J])", "X=2")
    chinese("collective", "AllGather_X(A[I_X, J])", "X=2")
    kept("collective", "AllGather_X(A[I_X, J])", "X=2", language="en")  # a template may keep it English
    assert english.items[0][1] == kept.items[0][1] == ss.render.collective("AllGather_X(A[I_X, J])", "X=2")
    assert chinese.items[0][1] == ss.render.collective("AllGather_X(A[I_X, J])", "X=2", language="zh")

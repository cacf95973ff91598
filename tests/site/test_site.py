"""The docs site: built once with ``mkdocs build --strict``, then checked page by page.

Every nav page exists in both languages, no internal link or anchor is broken, nothing is loaded from
another host, math is MathML with no ``$...$`` left, each problem page has its
folded solution, every figure is a valid SVG, the downloads parse, and the
hand-written sources type no formula of their own. The Chinese site (``zh/``) has every
page of the English one, at the same path, linked both ways by the language switch; its
translated pages and its problem sets read as Chinese, with the glossary's terms and the
English problems' answers.
"""

from __future__ import annotations

import filecmp
import itertools
import json
import re
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("mkdocs", reason="the site tests need the docs extra")
yaml = pytest.importorskip("yaml")

from helpers import english_left  # noqa: E402

from symshard.cli import argument_parser, command_line, main  # noqa: E402
from symshard.errors import SymshardError  # noqa: E402
from symshard.i18n import glossary, term  # noqa: E402
from symshard.outputs.bookkeeping import STAMPS  # noqa: E402
from symshard.site import prepare, sources  # noqa: E402
from symshard.site.mathml import convert_markdown, to_mathml  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}svg"


class _Page(HTMLParser):
    """Ids, links and the text outside code of one built page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self.text: list[str] = []
        self.math = 0
        self.details: list[tuple[str, bool]] = []  # (class, open)
        self.summaries: list[str] = []
        self.lang = ""
        self.article: list[str] = []  # the text of the page's content, outside code and math
        self.switch: dict[str, str] = {}  # the language switch: language → link
        self.canonical = ""  # <link rel="canonical">
        self._skip = 0  # depth inside <pre>, <code>, <script>, <style>, <math>
        self._summary = False
        self._article = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.lang = str(a.get("lang", ""))
        if tag == "article":
            self._article += 1
        if tag == "a" and a.get("data-symshard-language"):
            self.switch[str(a["data-symshard-language"])] = str(a.get("href", ""))
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("name"):
            self.ids.add(str(a["name"]))
        if tag == "link" and a.get("rel") == "canonical":  # names the page's address; loads nothing
            self.canonical = str(a.get("href", ""))
            return
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "img", "link", "script", "source", "iframe"):
                self.links.append((tag, str(a[key])))
        if tag in ("pre", "code", "script", "style", "math"):
            self._skip += 1
        if tag == "math":
            self.math += 1
        if tag == "details":
            self.details.append((str(a.get("class", "")), "open" in a))
        if tag == "summary":
            self._summary = True
            self.summaries.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._article -= 1
        if tag in ("pre", "code", "script", "style", "math"):
            self._skip = max(0, self._skip - 1)
        if tag == "summary":
            self._summary = False

    def handle_data(self, data: str) -> None:
        if self._summary:
            self.summaries[-1] += data
        if not self._skip:
            self.text.append(data)
            if self._article:
                self.article.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(built_site):
    out, project = built_site
    pages = {p: _parse(p) for p in sorted(out.rglob("*.html"))}
    return out, project, pages


def _nav_files(nav: list) -> list[str]:
    found: list[str] = []
    for item in nav:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                found += _nav_files(value) if isinstance(value, list) else [value]
    return found


def _html_for(out: Path, md: str) -> Path:
    stem = md[: -len(".md")]
    if stem == "index" or stem.endswith("/index"):
        return out / (stem[: -len("index")] + "index.html")
    return out / stem / "index.html"


LANGUAGES = {"en": "", "zh": "zh/"}


def test_every_page_names_its_canonical_address(site):
    from symshard.site.build import DEFAULT_SITE_URL

    out, _, pages = site
    for path, page in pages.items():
        if path.name != "index.html":
            continue
        rel = path.parent.relative_to(out).as_posix()
        expected = DEFAULT_SITE_URL + ("" if rel == "." else rel + "/")
        assert page.canonical == expected, (path, page.canonical)
    sitemap = (out / "sitemap.xml").read_text(encoding="utf-8")
    assert f"<loc>{DEFAULT_SITE_URL}tutorial/notation/</loc>" in sitemap


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_nav_page_is_built(site, language):
    out, project, _ = site
    out, project = out / LANGUAGES[language], project / LANGUAGES[language]
    config = yaml.safe_load((project / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["language"] == language
    files = _nav_files(config["nav"])
    assert len(files) >= 40  # hand-written pages plus the problem sets
    missing = [f for f in files if not _html_for(out, f).is_file()]
    assert missing == []
    titles = [t for t in ("tutorial/notation.md", "reference/api.md", "problems/index.md") if t in files]
    assert len(titles) == 3


def test_no_broken_links_or_anchors_and_nothing_from_other_hosts(site):
    out, _, pages = site
    broken: list[str] = []
    for path, page in pages.items():
        for tag, url in page.links:
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") or url.startswith("//"):
                if tag != "a":
                    broken.append(f"{path.relative_to(out)}: loads {url} from another host")
                continue
            if parts.scheme in ("mailto", "data", "javascript"):
                continue
            if not parts.path:
                target = path
            elif parts.path.startswith("/"):  # 404.html links from the site's root
                target = (out / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(out)}: {url} does not exist")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(out)}: no anchor #{parts.fragment} in {url}")
    assert broken == []


def test_math_is_mathml_and_no_dollars_are_left(site):
    out, _, pages = site
    leftovers = {}
    for path, page in pages.items():
        text = "".join(page.text)
        if re.search(r"\$[^$\s][^$]*\$", text):
            leftovers[str(path.relative_to(out))] = re.search(r"\$[^$\s][^$]*\$", text).group(0)[:80]
    assert leftovers == {}
    for rel in ("tutorial/notation/index.html", "tutorial/collectives/index.html", "reference/notation/index.html"):
        assert pages[out / rel].math > 0, rel


def test_no_raw_tex_is_left_in_any_formula(site):
    # a TeX command that the converter did not understand shows as text inside the MathML
    # ("T \\text{comms"): read every <math> element's text, its data-latex attribute left aside
    import html as html_module

    out, _, pages = site
    found = {}
    for path in pages:
        for element in re.findall(r"<math\b.*?</math>", path.read_text(encoding="utf-8"), re.S):
            shown = html_module.unescape(re.sub(r"<[^>]+>", "", element))
            raw = re.search(r"\\[A-Za-z]+|\\[{}]", shown)
            if raw:
                found.setdefault(str(path.relative_to(out)), shown[max(0, raw.start() - 20) : raw.end() + 20])
    assert found == {}, f"{len(found)} pages show raw TeX: {found}"


@pytest.mark.parametrize(
    ("language", "hint_word", "solution_word"), [("en", "Hint", "Solution"), ("zh", "提示", "解答")]
)
def test_each_problem_page_has_its_folded_solution(site, language, hint_word, solution_word):
    out, project, pages = site
    out, project = out / LANGUAGES[language], project / LANGUAGES[language]
    problem_pages = [
        p for p in (project / "docs" / "problems").rglob("*.md") if p.name not in ("index.md", "answer-key.md")
    ]
    assert len(problem_pages) >= 20
    for md in problem_pages:
        html = _html_for(out, md.relative_to(project / "docs").as_posix())
        page = pages[html]
        assert page.math > 0, html
        solution = [cls for cls, is_open in page.details if "success" in cls and not is_open]
        assert len(solution) == 1, html
        assert solution_word in [s.strip() for s in page.summaries], html
        assert any(s.strip().startswith(hint_word) for s in page.summaries), html


def test_every_figure_is_a_valid_svg(site):
    out, _, _ = site
    figures = sorted(out.rglob("*.svg"))
    for svg in figures:
        root = ET.parse(svg).getroot()
        assert root.tag == SVG, svg
        assert root.get("viewBox"), svg


def test_downloads_parse_and_match_their_pages(site):
    out, _, _ = site
    from jsonschema import validate

    from symshard.problems.writers import schema

    sets = sorted(p.parent for p in out.glob("problems/*/problems.json"))
    assert len(sets) >= 4
    for folder in sets:
        data = json.loads((folder / "problems.json").read_text(encoding="utf-8"))
        validate(data, schema())
        questions = ET.parse(folder / "problems.moodle.xml").getroot().findall("question")
        assert len([q for q in questions if q.get("type") != "category"]) == data["count"]
        for record in data["problems"]:
            assert (folder / record["id"] / "index.html").is_file()
        # every course platform's download, offered on the set's page
        overview = (folder / "index.html").read_text(encoding="utf-8")
        for name in ("problems.qti12.zip", "problems.qti21.zip", "prairielearn.zip", "problems.pdf", "answer-key.pdf"):
            assert (folder / name).is_file() and f'href="{name}"' in overview, (folder.name, name)
        with zipfile.ZipFile(folder / "prairielearn.zip") as pl:
            assert sum(n.endswith("/info.json") for n in pl.namelist()) == data["count"]
        assert (folder / "problems.pdf").read_bytes().startswith(b"%PDF-")


def test_the_build_log_has_no_warning(built_site):
    """MkDocs' own log of the session's build, read line by line, holds no warning or error."""
    from symshard.site.build import log_problems

    out, _ = built_site
    log = (out.parent / "build.log").read_text(encoding="utf-8")
    assert "[en]" in log and "[zh]" in log and "Documentation built in" in log  # the real log of both builds
    assert log_problems(log) == []
    planted = log + "\nWARNING -  Doc file 'tour.md' contains a link 'nowhere.md', but the target is not found.\n"
    assert log_problems(planted) == [
        "WARNING -  Doc file 'tour.md' contains a link 'nowhere.md', but the target is not found."
    ]


def _prose(markdown: str) -> str:
    """The page source without code fences, inline code and pycon/console calls."""
    markdown = re.sub(r"\{% filter pycon %\}.*?\{% endfilter %\}", "", markdown, flags=re.DOTALL)
    markdown = re.sub(r"(?ms)^( *)(```|~~~).*?^\1\2", "", markdown)
    markdown = re.sub(r"\{\{.*?\}\}", "", markdown, flags=re.DOTALL)
    return re.sub(r"`[^`\n]+`", "", markdown)


def test_hand_written_pages_type_no_formula():
    pages = sorted((sources() / "docs").rglob("*.md")) + sorted((sources() / "zh" / "docs").rglob("*.md"))
    assert len(pages) >= 25
    typed = {str(p.relative_to(sources())): _prose(p.read_text(encoding="utf-8")) for p in pages}
    assert {k: v for k, v in typed.items() if "$" in v or "\\frac" in v or "\\(" in v} == {}


@pytest.mark.slow(reason="a second whole site build, forced over a folder with a user's files: about 35 s")
def test_a_forced_build_keeps_every_file_it_did_not_write(tmp_path, built_site):
    """Into a folder with a user's files, a forced build writes the site beside them, changing none."""
    from symshard.site import build

    site, _ = built_site
    out = tmp_path / "site"
    (out / "userdir").mkdir(parents=True)
    (out / "userdir" / "keep.txt").write_text("keep", encoding="utf-8")
    (out / "mynotes.txt").write_text("mine", encoding="utf-8")
    (out / "index.html").write_text("<p>my own page</p>", encoding="utf-8")  # where the site's page would go
    with pytest.raises(SymshardError, match="exists and was not written by symshard"):
        build(out, force=True, cli=command_line())
    (out / "index.html").unlink()
    build(out, force=True, cli=command_line())
    assert (out / "userdir" / "keep.txt").read_text(encoding="utf-8") == "keep"
    assert (out / "mynotes.txt").read_text(encoding="utf-8") == "mine"
    assert (out / "index.html").read_bytes() == (site / "index.html").read_bytes()
    listed = json.loads((out / ".symshard-manifest.json").read_text(encoding="utf-8"))["files"]
    assert "mynotes.txt" not in listed and "userdir/keep.txt" not in listed and "index.html" in listed


def test_chinese_pages_name_chinese_system_fonts(built_site):
    """No web fonts: the Chinese pages must name fonts that common systems have, and say what to install."""
    site, _ = built_site
    css = (site / "assets" / "symshard.css").read_text(encoding="utf-8")
    rule = css[css.index('html[lang^="zh"]') :]
    for font in ("PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei"):
        assert f'"{font}"' in rule
    home = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh"' in home and "assets/symshard.css" in home and "fonts-noto-cjk" in home


@pytest.mark.slow(reason="a second whole site build, by Zensical from the prepared project: about 10 s")
def test_zensical_builds_the_prepared_site_too(tmp_path, built_site):
    """The prepared projects use nothing only MkDocs has, so MkDocs' successor Zensical builds them (strict)."""
    import shutil
    import subprocess
    import sys

    zensical = shutil.which("zensical") or str(Path(sys.executable).parent / "zensical")
    if not Path(zensical).is_file():
        pytest.skip("Zensical is not installed (it is in the dev extra: pip install -e '.[dev]')")
    _, project = built_site
    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    for folder in (copy, copy / "zh"):
        done = subprocess.run([zensical, "build", "-s", "-f", "mkdocs.yml"], cwd=folder, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0 and "No issues found" in done.stdout + done.stderr, done.stdout + done.stderr
    for page in ("index.html", "tutorial/notation/index.html", "reference/hardware/index.html"):
        assert (copy / "site" / page).is_file() and (copy / "zh" / "site" / page).is_file()
    switch = (copy / "site" / "tutorial" / "notation" / "index.html").read_text(encoding="utf-8")
    assert 'data-symshard-language="zh"' in switch  # the language switch renders under Zensical's templates too


def test_the_build_does_not_depend_on_the_day(built_site):
    """Dates in the site come from SOURCE_DATE_EPOCH or a fixed epoch, never from the clock."""
    import datetime
    import os
    import struct

    from symshard.site.build import BUILD_EPOCH

    site, _ = built_site
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or BUILD_EPOCH)
    gz = (site / "sitemap.xml.gz").read_bytes()
    assert struct.unpack("<I", gz[4:8])[0] == epoch  # the gzip header's mtime
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    if today != datetime.datetime.fromtimestamp(epoch, datetime.UTC).date().isoformat():
        dated = [p for p in site.rglob("*") if p.is_file() and today.encode() in p.read_bytes()]
        assert dated == []


@pytest.mark.slow(reason="prepares the whole site twice more to compare them byte for byte: about 12 s")
def test_prepare_is_deterministic(tmp_path, built_site):
    _, project = built_site
    again = tmp_path / "again"
    prepare(again, cli=command_line())
    # the stamps are each machine's proof of the files symshard wrote (inodes, times), not part of the site
    compared = filecmp.dircmp(project, again, ignore=[*filecmp.DEFAULT_IGNORES, STAMPS])

    def differences(c: filecmp.dircmp) -> list[str]:
        out = [*c.left_only, *c.right_only, *c.diff_files, *c.funny_files]
        for sub in c.subdirs.values():
            out += differences(sub)
        return out

    assert differences(compared) == []


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("a $x$ b", 1),
        ("$$x^2$$", 1),
        ("costs \\$5 and $y$", 1),
        ("`$x$` in code", 0),
        ("```\n$x$\n```", 0),
        ("$ not math $", 0),  # Pandoc's rule: no space inside the dollars
        ("| $|Y|$ | b |", 1),
    ],
)
def test_markdown_math_becomes_mathml(markdown, expected):
    converted = convert_markdown(markdown)
    assert converted.count("<math") == expected
    maths = re.findall(r"<math.*?</math>", converted)
    for m in maths:
        assert not set(re.sub(r"<[^>]+>", "", m)) & set("$|*_[]\\")  # nothing Markdown could read
    if expected:
        assert "$" not in re.sub(r"<math.*?</math>", "", converted).replace("$5", "")


def test_mathml_hides_markdown_syntax():
    markup = to_mathml(r"|Y| \cdot I_{X} * [J]")
    inside = re.sub(r"<[^>]+>", "", markup)
    assert not set(inside) & set("|*_[]\\{}$")
    assert to_mathml("x", display=True).count('display="block"') == 1


def test_bad_latex_is_a_template_error():
    from symshard.errors import TemplateError

    with pytest.raises(TemplateError, match="cannot turn the LaTeX"):
        to_mathml(r"\frac{1}{")


def test_cli_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["site", "build", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "symshard did not write, e.g. 'notes.txt'" in err
    assert main(["site", "serve", "--no-build", "--out", str(tmp_path / "nothing")]) == 2
    assert "holds no built site" in capsys.readouterr().err


def test_no_list_is_glued_to_a_paragraph(built_site):
    """A Markdown list needs a blank line before it, or it renders as one run-on paragraph."""
    _, project = built_site
    glued = []
    for md in sorted((project / "docs").rglob("*.md")) + sorted((project / "zh" / "docs").rglob("*.md")):
        lines = re.sub(r"(?ms)^( *)(```|~~~).*?^\1\2", "", md.read_text(encoding="utf-8")).splitlines()
        for before, line in itertools.pairwise(lines):
            item, prev = line.lstrip(), before.strip()
            if not re.match(r"(- |\d+\. )", item) or not prev or prev.startswith("|"):
                continue
            if not re.match(r"(- |\d+\. |\?\?\?|!!!|<)", prev) and not before.startswith(" "):
                glued.append(f"{md.relative_to(project)}: {prev[:60]!r} then {item[:40]!r}")
    assert glued == []


# -- the Chinese site ---------------------------------------------------------------------------------------------

BOOK = "How to Scale Your Model"


def test_the_chinese_site_has_every_page_at_the_same_path(site):
    out, _, pages = site
    english = [p.relative_to(out) for p in pages if not p.relative_to(out).parts[0] == "zh"]
    missing = [str(rel) for rel in english if not (out / "zh" / rel).is_file()]
    assert missing == ["404.html"]  # a host serves the top one for every missing path
    for path, page in pages.items():
        expected = "zh" if path.relative_to(out).parts[0] == "zh" else "en"
        assert page.lang == expected, path


def test_the_language_switch_links_each_page_to_itself_in_the_other_language(site):
    out, _, pages = site
    checked = 0
    for path, page in pages.items():
        rel = path.relative_to(out)
        if rel.name == "404.html":  # served at any depth, so it links to each language's home
            continue
        english = rel.relative_to("zh") if rel.parts[0] == "zh" else rel
        assert set(page.switch) == {"en", "zh"}, rel
        for language, href in page.switch.items():
            target = (path.parent / unquote(href)).resolve()
            target = target / "index.html" if target.is_dir() else target
            assert target == (out / LANGUAGES[language] / english).resolve(), (rel, language, href)
        checked += 1
    assert checked >= 100


def test_translated_pages_read_as_chinese_with_the_glossary_terms(site):
    out, _, pages = site
    translated = sorted((sources() / "zh" / "docs").rglob("*.md"))
    assert {"index.md", "tour.md", "tutorial/notation.md", "tutorial/matmuls.md", "tutorial/crossovers.md"} <= {
        p.relative_to(sources() / "zh" / "docs").as_posix() for p in translated
    }
    avoid = [(k, w) for k, e in glossary().items() for w in e.get("avoid", [])]  # type: ignore[union-attr]
    chinese = [_html_for(out / "zh", p.relative_to(sources() / "zh" / "docs").as_posix()) for p in translated]
    chinese += sorted((out / "zh" / "problems").rglob("index.html"))
    for html in chinese:
        text = " ".join("".join(pages[html].article).split())
        assert re.search(r"[\u4e00-\u9fff]", text), html
        left = english_left(text, keep=(BOOK,))
        assert left is None, f"{html.relative_to(out)}: English left: {left!r}"
        for key, word in avoid:
            assert word not in text, f"{html.relative_to(out)}: '{word}' (glossary {key}: use {term(key, 'zh')})"


def test_untranslated_pages_say_so_in_chinese(site):
    out, _, pages = site
    translated = {
        p.relative_to(sources() / "zh" / "docs").as_posix() for p in (sources() / "zh" / "docs").rglob("*.md")
    }
    for md in sorted((sources() / "docs").rglob("*.md")):
        rel = md.relative_to(sources() / "docs").as_posix()
        text = "".join(pages[_html_for(out / "zh", rel)].article)
        assert ("本页暂无中文版" in text) == (rel not in translated), rel


def test_chinese_problem_sets_are_the_english_variants(site):
    out, _, _ = site
    sets = sorted(p.parent.name for p in out.glob("problems/*/problems.json"))
    assert sets == sorted(p.parent.name for p in out.glob("zh/problems/*/problems.json"))
    for name in sets:
        en = json.loads((out / "problems" / name / "problems.json").read_text(encoding="utf-8"))
        zh = json.loads((out / "zh" / "problems" / name / "problems.json").read_text(encoding="utf-8"))
        assert (en["language"], zh["language"]) == ("en", "zh")
        assert [p["id"] for p in en["problems"]] == [p["id"] for p in zh["problems"]]
        assert [_answers(p) for p in en["problems"]] == [_answers(p) for p in zh["problems"]]


def _answers(problem: dict) -> list[tuple]:
    """A problem's answer records without their wording: name, value, unit, tolerance, the mistakes' values."""
    return [
        (a["name"], a["value"], a["unit"], a["rel_tol"], a["display"], [m["value"] for m in a["mistakes"]])
        for a in problem["answers"]
    ]


def test_pages_run_the_command_they_are_handed_and_the_site_never_imports_the_cli():
    from symshard.errors import TemplateError
    from symshard.site.pages import CommandLine, Page

    with pytest.raises(TemplateError, match="prepared without it"):
        Page("how-to/x.md", None).console("symshard hardware")
    ran: list[list[str]] = []
    page = Page("how-to/x.md", None, cli=CommandLine(lambda argv: ran.append(argv) or 0, argument_parser))
    assert page.console("symshard shard 'A[I_X, J]'").startswith("```console\n$ symshard shard 'A[I_X, J]'\n")
    assert ran == [["shard", "A[I_X, J]"]]
    reference = page.context()["cli_reference"]()
    assert reference.startswith("## `symshard`") and "### `symshard site`" in reference


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_architecture_page_maps_every_module_to_its_layer(site, language):
    from symshard.layers import LAYERS, layer_of
    from symshard.site.pages import module_summaries

    out, _, pages = site
    root = out if language == "en" else out / "zh"
    page = _html_for(root, "explanation/architecture.md")
    html = page.read_text(encoding="utf-8")
    text = " ".join("".join(pages[page].article).split())
    modules = module_summaries()
    assert len(modules) > 50
    # every module of the package has a layer, or is a face, and the map names each one
    assert [m for m in modules if layer_of(m) is None] == ["symshard", "symshard.__main__", "symshard.jax"]
    for module in modules:
        if layer_of(module) is not None:
            assert f"<code>{module}</code>" in html, module
    for number, layer in enumerate(LAYERS, 1):
        assert f"{number}. {layer.name}" in text, layer.name  # bold in the table, not raw Markdown

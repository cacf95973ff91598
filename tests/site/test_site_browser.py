"""The built docs site in a real browser: headless Chromium driven by Playwright, fully offline.

Serves the site built by the ``built_site`` fixture on 127.0.0.1 and loads the home page, a
tutorial page and a problem page in English and in Chinese. On each: the title and main heading,
no console errors, no failed requests and no request leaving 127.0.0.1, math laid out natively as
MathML (no raw ``$...$`` left in the text), SVG figures loaded. On the problem pages the Solution
starts closed and opens on a click. The header's language switch leads from an English tutorial
page to the same page in Chinese and back, and the Chinese site's search finds a Chinese term.
Full-page screenshots go to ``$SYMSHARD_SCREENSHOTS`` (default: a pytest temporary folder; the
path is printed).

Needs Debian's chromium (``apt-get install chromium``) and the ``playwright`` package (dev
extra); ``playwright install`` is never needed: the test launches ``/usr/bin/chromium``. Without
them the test is skipped, unless ``SYMSHARD_REQUIRE_BROWSER=1`` (as in CI), when it fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.browser

REQUIRE = os.environ.get("SYMSHARD_REQUIRE_BROWSER", "") == "1"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # without these chromium keeps calling home, which a closed network turns into noise and delays
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MATHML_DISPLAYS = {"math", "inline math", "block math"}
SITE = "symshard"
TIMEOUT_MS = 10_000

# raw TeX that a page would show if its math had not been converted to MathML
RAW_TEX = re.compile(r"\$\$|\$[^\s$][^$\n]*\$|\\\(|\\\[|\\(?:frac|mathbf|mathrm|text|times|left|right|sum|cdot)\b")


def _chromium() -> str | None:
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


@pytest.fixture(scope="session", autouse=True)
def browser_tools() -> str:
    """Chromium's path; checked before the (slower) site build. Skips, or fails if they are required."""
    missing = []
    chromium = _chromium()
    if chromium is None:
        missing.append("Debian's chromium (apt-get install chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing.append("the playwright package (pip install -e '.[dev]')")
    if REQUIRE and importlib.util.find_spec("mkdocs") is None:
        missing.append("MkDocs (pip install -e '.[docs]')")
    if missing:
        reason = "the browser test needs " + " and ".join(missing)
        if REQUIRE:
            pytest.fail(reason + " (SYMSHARD_REQUIRE_BROWSER=1)", pytrace=False)
        pytest.skip(reason)
    assert chromium is not None
    return chromium


@pytest.fixture(scope="module")
def site(built_site) -> Iterator[tuple[str, Path]]:
    """``(base URL, project dir)``: the built site served on 127.0.0.1 on a free port,
    by the server behind ``symshard site serve``."""
    from symshard.site import server as site_server

    site_dir, project_dir = built_site
    server = site_server(site_dir, 0)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", Path(project_dir)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser(browser_tools):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=browser_tools, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory, pytestconfig) -> Path:
    """The folder for the screenshots: ``$SYMSHARD_SCREENSHOTS`` or a temporary one (printed)."""
    folder = Path(os.environ.get("SYMSHARD_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")  # what capsys.disabled() uses
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\nbrowser test screenshots: {folder}")
    return folder


@dataclass
class Visit:
    """What went wrong while a page loaded: console errors, failed requests, requests that left 127.0.0.1."""

    console: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def check(self) -> None:
        assert not self.outside, f"requests left 127.0.0.1 (the site must work offline): {self.outside}"
        assert not self.failed, f"failed requests: {self.failed}"
        assert not self.console, f"console errors: {self.console}"


def _local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob", "about") or parts.hostname == "127.0.0.1"


@pytest.fixture
def visit() -> Visit:
    return Visit()


@pytest.fixture
def page(browser, visit):
    """A fresh page in a context of its own; what goes wrong while it loads is recorded in ``visit``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)

    def route(r) -> None:  # nothing may leave the machine; abort at once rather than wait on a closed network
        if _local(r.request.url):
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    p = context.new_page()
    p.on("console", lambda m: m.type == "error" and visit.console.append(f"{m.text} ({m.location.get('url')})"))
    p.on("pageerror", lambda e: visit.console.append(f"uncaught: {e}"))
    p.on("request", lambda r: None if _local(r.url) else visit.outside.append(r.url))
    p.on("requestfailed", lambda r: visit.failed.append(f"{r.url}: {r.failure}"))
    p.on("response", lambda r: r.status >= 400 and visit.failed.append(f"{r.url}: HTTP {r.status}"))
    try:
        yield p
    finally:
        context.close()


def _load(page, url: str) -> None:
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    page.wait_for_load_state("networkidle")


def _heading(page) -> str:
    """The text of the page's one ``h1`` in the content (without the permalink sign)."""
    headings = page.locator(".md-content h1")
    assert headings.count() == 1, f"expected one h1 in the content, found {headings.count()}"
    text = headings.first.evaluate(
        "h => { const c = h.cloneNode(true); c.querySelectorAll('.headerlink').forEach(a => a.remove());"
        " return c.textContent.trim(); }"
    )
    assert text and not re.search(r"\b(TODO|stub|placeholder)\b", text, re.I), f"unfinished page: h1 {text!r}"
    return text


# every <math> in the content that is not inside a closed <details>: its computed display and box
_MATHS = """root => [...root.querySelectorAll('math')]
  .filter(m => !m.parentElement.closest('details:not([open])'))
  .map(m => { const r = m.getBoundingClientRect();
              return {latex: m.getAttribute('data-latex') || m.textContent.slice(0, 60),
                      display: getComputedStyle(m).display, width: r.width, height: r.height}; })"""

# the content's text outside code, with math removed: where raw TeX would show
_PROSE = """root => { const c = root.cloneNode(true);
  c.querySelectorAll('pre, code, kbd, script, style, math, .headerlink').forEach(e => e.remove());
  return c.textContent; }"""


def _check_math(page) -> int:
    content = page.locator(".md-content").first
    maths = content.evaluate(_MATHS)
    assert maths, "no <math> element in the page"
    wrong = [m for m in maths if m["display"] not in MATHML_DISPLAYS]
    assert not wrong, f"math not displayed as MathML (no native MathML layout?): {wrong[:3]}"
    empty = [m for m in maths if not (m["width"] > 0 and m["height"] > 0)]
    assert not empty, f"math laid out with an empty box: {empty[:3]}"
    raw = RAW_TEX.findall(content.evaluate(_PROSE))
    assert not raw, f"raw TeX in the page's text: {raw[:5]}"
    return len(maths)


def _check_svgs(page) -> None:
    images = page.locator(".md-content img[src$='.svg' i], .md-content img[src*='.svg?' i]")
    for i in range(images.count()):
        image = images.nth(i)
        image.scroll_into_view_if_needed()
        loaded = image.evaluate(
            "img => img.complete ? img.naturalWidth : new Promise(ok =>"
            " { img.onload = () => ok(img.naturalWidth); img.onerror = () => ok(0); })"
        )
        assert loaded > 0, f"SVG figure did not load: {image.get_attribute('src')}"


def _check_page(page, visit: Visit, url: str, title: str, heading: str) -> None:
    """Load the page and check what all three pages share: title, heading, math, figures, requests."""
    _load(page, url)
    h1 = _heading(page)
    assert heading.lower() in h1.lower(), f"{url}: h1 {h1!r} should name {heading!r}"
    assert page.title() == title
    visit.check()
    _check_math(page)
    _check_svgs(page)
    visit.check()


def _screenshot(page, folder: Path, name: str) -> None:
    target = folder / f"{name}.png"
    page.evaluate("window.scrollTo(0, 0)")  # else the sticky header is drawn where the page was scrolled to
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 0


def test_home_page(site, page, visit, shots):
    base, _ = site
    _check_page(page, visit, f"{base}/", SITE, SITE)
    _screenshot(page, shots, "home")


def test_tutorial_page(site, page, visit, shots):
    base, project = site
    assert (project / "docs/tutorial/notation.md").is_file(), "the tutorial page tutorial/notation.md is missing"
    _check_page(page, visit, f"{base}/tutorial/notation/", f"The notation - {SITE}", "notation")
    _screenshot(page, shots, "tutorial-notation")


def _first_problem(project: Path) -> tuple[str, str]:
    """The first problem page of the set 'collectives' in this project: (its stem, its heading)."""
    pages = sorted(
        p for p in (project / "docs/problems/collectives").glob("*.md") if p.name not in ("index.md", "answer-key.md")
    )
    assert pages, "the problem set 'collectives' has no problem pages"
    first = pages[0]
    heading = next(line[2:].strip() for line in first.read_text("utf-8").splitlines() if line.startswith("# "))
    return first.stem, heading


@pytest.mark.parametrize(("folder", "solution_word"), [("", "Solution"), ("zh/", "解答")], ids=["en", "zh"])
def test_problem_page_and_solution(site, page, visit, shots, folder, solution_word):
    base, project = site
    stem, heading = _first_problem(project / folder)
    url = f"{base}/{folder}problems/collectives/{stem}/"
    _check_page(page, visit, url, f"{heading} - {SITE}", heading)
    assert _heading(page) == heading
    assert page.locator("html").get_attribute("lang") == ("zh" if folder else "en")
    name = "problem" + ("-" + folder.strip("/") if folder else "")
    _screenshot(page, shots, name)

    solution = page.locator("details.success", has=page.locator("summary", has_text=solution_word))
    assert solution.count() == 1, f"expected one {solution_word} block (details.success)"
    solution = solution.first
    inside = solution.locator("math, table").first
    assert inside.count() == 1, "the Solution holds neither math nor a table"
    assert solution.get_attribute("open") is None, "the Solution should start closed"
    assert not inside.is_visible(), "the Solution's contents show while it is closed"

    solution.locator("summary").first.click()
    page.wait_for_function("d => d.open", arg=solution.element_handle())
    assert solution.get_attribute("open") is not None
    inside.wait_for(state="visible")
    box = inside.bounding_box()
    assert box and box["width"] > 0 and box["height"] > 0, f"the opened Solution's contents have no box: {box}"
    shown = solution.evaluate(_MATHS)
    assert shown, "no math in the opened Solution"
    assert all(m["display"] in MATHML_DISPLAYS and m["width"] > 0 and m["height"] > 0 for m in shown), shown[:3]
    assert not RAW_TEX.findall(solution.evaluate(_PROSE)), "raw TeX in the Solution"
    visit.check()
    _screenshot(page, shots, name + "-solution")


def _switch_language(page, name: str) -> None:
    """Open the header's language menu and pick ``name``; wait for the new page."""
    page.locator(".md-header .md-select").first.hover()
    link = page.locator(".md-header .md-select__link", has_text=name)
    link.wait_for(state="visible")
    with page.expect_navigation():
        link.click()
    page.wait_for_load_state("load")


def test_the_language_switch_keeps_the_page(site, page, visit, shots):
    base, _ = site
    _check_page(page, visit, f"{base}/tutorial/matmuls/", f"Sharded matmuls - {SITE}", "matmul")
    _switch_language(page, "简体中文")
    assert page.url == f"{base}/zh/tutorial/matmuls/"
    assert page.locator("html").get_attribute("lang") == "zh"
    assert re.search(r"[\u4e00-\u9fff]", _heading(page)), "the Chinese page's heading is not Chinese"
    _check_math(page)
    _check_svgs(page)
    visit.check()
    _screenshot(page, shots, "tutorial-matmuls-zh")
    _switch_language(page, "English")
    assert page.url == f"{base}/tutorial/matmuls/"
    assert page.locator("html").get_attribute("lang") == "en"
    visit.check()


def test_chinese_search_finds_chinese_words(site, page, visit, shots):
    base, _ = site
    _load(page, f"{base}/zh/")
    box = page.locator(".md-search__input").first
    box.click()
    results = page.locator(".md-search-result__item")
    # Material reads the query on keyup; a Chinese word is entered whole, as an input method
    # would, then keyup is sent. The search worker builds its index after the page loads, so
    # a query sent before that is lost: send it again until results show.
    for _ in range(3 * TIMEOUT_MS // 1000):
        box.fill("收缩维度")
        box.dispatch_event("keyup")
        try:
            results.first.wait_for(state="visible", timeout=1000)
            break
        except Exception:  # playwright's TimeoutError: the index was not ready yet
            continue
    assert results.count() >= 1, "no search result for 收缩维度 (contracting dimension) on the Chinese site"
    assert "收缩" in (results.first.text_content() or "")
    links = [results.nth(i).locator("a").first.get_attribute("href") or "" for i in range(results.count())]
    assert any("/zh/" in href or not href.startswith(("http", "/")) for href in links), links
    visit.check()
    _screenshot(page, shots, "search-zh")


def test_the_dark_theme_is_one_click_away(site, page, visit, shots):
    base, _ = site
    page.emulate_media(color_scheme="light")
    _load(page, f"{base}/tutorial/notation/")
    assert page.locator("body").get_attribute("data-md-color-scheme") == "default"
    features = page.evaluate("JSON.parse(document.getElementById('__config').textContent).features")
    assert {"navigation.instant", "search.suggest"} <= set(features), features
    page.locator('form[data-md-component="palette"] label:visible').first.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'", timeout=TIMEOUT_MS)
    _check_math(page)
    _check_svgs(page)
    visit.check()
    _screenshot(page, shots, "tutorial-notation-dark")


def test_the_hardware_tables_fit_the_text_column(site, page, visit, shots):
    """Every column of the preset tables is visible without scrolling sideways, at a laptop's width."""
    base, _ = site
    page.set_viewport_size({"width": 1280, "height": 900})
    _load(page, f"{base}/reference/hardware/")
    widths = page.evaluate(
        "[...document.querySelectorAll('.md-typeset__scrollwrap')].map(w => [w.scrollWidth, w.clientWidth])"
    )
    assert len(widths) >= 2, "the hardware reference has its preset tables"
    wide = [(scroll, client) for scroll, client in widths if scroll > client + 1]
    assert wide == [], f"tables wider than the text column (scrollWidth, clientWidth): {wide}"
    visit.check()
    _screenshot(page, shots, "reference-hardware")

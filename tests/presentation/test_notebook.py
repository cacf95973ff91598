"""The docs' notebook runs top to bottom in a real kernel and shows what symshard's display promises:
the best strategy marked, times with units, formulas in symshard's LaTeX, the regime map, folded answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "site" / "docs" / "notebooks" / "first-look.ipynb"


def _run() -> list[dict]:
    nbformat = pytest.importorskip("nbformat", reason="nbformat (dev extra) is not installed")
    nbclient = pytest.importorskip("nbclient", reason="nbclient (dev extra) is not installed")
    pytest.importorskip("ipykernel", reason="ipykernel (dev extra) is not installed")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    kernel = client.setup_kernel()  # the kernel runs this interpreter: jupyter_client swaps "python" for it
    try:
        kernel.__enter__()
    except (RuntimeError, TimeoutError, OSError) as err:  # no sockets, no subprocesses, ...
        pytest.skip(f"a Jupyter kernel cannot start in this environment: {type(err).__name__}: {err}")
    try:
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    finally:
        kernel.__exit__(None, None, None)
    return nb.cells


def _outputs(cell: dict, mime: str) -> str:
    found = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            raise AssertionError(f"cell failed: {out.get('ename')}: {out.get('evalue')}")
        if mime == "text/plain" and out.get("output_type") == "stream":
            found.append(out["text"])
        found.append(out.get("data", {}).get(mime, ""))
    return "".join(found)


def test_the_notebook_runs_and_shows_the_tables():
    cells = [c for c in _run() if c.cell_type == "code"]
    html = [_outputs(c, "text/html") for c in cells]
    by_kind = {kind: next((h for h in html if f'class="symshard symshard-{kind}"' in h), "") for kind in
               ("plan", "strategy", "comparison", "placement", "problem")}  # fmt: skip
    for kind, page in by_kind.items():
        assert page, f"no {kind} table in the notebook's outputs"
    plan = by_kind["plan"]
    best = re.findall(r'<tr class="best">.*?</tr>', plan)
    assert len(best) == 1 and "★" in best[0]
    assert re.search(r"<td><span class=\"num\">\d[\d.]* (µs|ms)</span></td>", best[0])  # times with their units
    assert any("more strategies" in h for h in html)  # the plan of hundreds is cut
    assert "<svg" in by_kind["comparison"] and r"W_{\text{ici}}" in by_kind["comparison"]
    assert "1,048,576 B (1 MiB)" in by_kind["placement"]
    assert "<details><summary>Answers</summary>" in by_kind["problem"]
    latex = [_outputs(c, "text/latex") for c in cells]
    # the cost with numbers put in: seconds in a unit, as the CLI prints them
    assert any(re.fullmatch(r"\$T = [\d.]+\\ (\\mu\\text\{s\}|\\text\{ms\})\$", t) for t in latex), latex
    assert "$B < 2550$" in latex
    # the bare SymPy formula of a cost in the tables' style, not SymPy's T_{hop} and |Y|
    bare = [t for t in latex if t.startswith("$\\displaystyle") and r"T_{\text{hop}}" in t]
    assert bare and r"\lvert Y \rvert" in bare[0] and "|Y|" not in bare[0], latex
    printed = "".join(_outputs(c, "text/plain") for c in cells)
    assert "the cost has no symbol called 'e'" in printed

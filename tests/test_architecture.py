"""The architecture as a test: symshard's modules form layers with no circles, and no module takes
another's private names.

grimp builds the import graph, counting imports inside functions and under ``TYPE_CHECKING`` (a
lazy import is still a dependency, only a later one). The layers (stated in ``symshard/layers.py``), from the bottom:

1. ``foundation``: errors, messages, the memo and the output folder everything may use;
2. ``algebra``: symbols, dtypes, units, formulas as text, exact sums, inequalities and conditions;
3. ``notation``: arrays, the parser and einsums;
4. ``machines``: chips, meshes, axes in parts, wiring and the networks' levels;
5. ``costs``: the one costing module, collectives, placements and calibration;
6. ``reading``: ``symshard.read``, the reader of any notation string (collectives included);
7. ``planning``: the planner, routes, searches, programs and crossovers;
8. ``models``: layer schemes, rooflines, transformers, training, serving, transfers, the book's answers;
9. ``bridge``: ``symshard.jax``, the optional bridge to JAX and XLA;
10. ``presentation``: words (i18n), reports, notebook display and figures;
11. ``problems``: the problem families' engine and its exports;
12. ``site``: the docs site;
13. ``cli``: the ``symshard`` command.

A module imports only from its own layer or those below, and the graph has no strongly connected
component, so every module can be read knowing only what it imports. The package faces
(``symshard`` and ``symshard.jax``) re-export names and sit outside the layers, but not outside the
circle check. No module is longer than 800 lines: a longer one is split into modules of one idea
each. ``python scripts/modules.py`` prints the module list with these facts.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from symshard.layers import FACES
from symshard.layers import LAYERS as _LAYERS
from symshard.layers import layer_of as _layer_of

grimp = pytest.importorskip("grimp", reason="grimp (dev extra) is not installed")

PACKAGE = Path(__file__).resolve().parents[1] / "symshard"

# Each layer by the modules it holds (symshard/layers.py states them; the docs page draws its map from there).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple((layer.name, frozenset(layer.members)) for layer in _LAYERS)


def layer_of(module: str) -> int | None:
    """The number of ``module``'s layer (0 at the bottom), None for a face."""
    if module in FACES:
        return None
    found = _layer_of(module)
    if found is None:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS in symshard/layers.py")
    return _LAYERS.index(found)


@cache
def graph():
    return grimp.build_graph("symshard", exclude_type_checking_imports=False)


def modules() -> list[str]:
    return sorted(graph().modules)


def source(module: str) -> Path:
    parts = module.split(".")[1:]
    folder = PACKAGE.joinpath(*parts)
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


def module_lines() -> dict[str, int]:
    """Every module with its number of lines."""
    return {m: len(source(m).read_text(encoding="utf-8").splitlines()) for m in modules()}


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    g = graph()
    edges = {m: sorted(g.find_modules_directly_imported_by(m)) for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules():
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _where(importer: str, imported: str) -> str:
    details = graph().get_import_details(importer=importer, imported=imported)
    return ", ".join(f"line {d['line_number']}: {d['line_contents']}" for d in details[:2])


def layer_violations() -> list[str]:
    """Every import from a lower layer into a higher one."""
    g = graph()
    found = []
    for importer in modules():
        low = layer_of(importer)
        if low is None:
            continue
        for imported in sorted(g.find_modules_directly_imported_by(importer)):
            high = layer_of(imported)
            if high is not None and high > low:
                found.append(
                    f"{importer} ({LAYERS[low][0]}) imports {imported} ({LAYERS[high][0]}): {_where(importer, imported)}"
                )
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(module: str, level: int, name: str | None) -> str:
    """The absolute name of a relative import ``from {'.' * level}{name} import ...`` in ``module``."""
    if level == 0:
        return name or ""
    package = module if source(module).name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{name}" if name else package


def _package(module: str) -> str:
    return module if source(module).name == "__init__.py" else module.rpartition(".")[0]


def _crossing(importer: str, target: str) -> bool:
    """Whether reaching ``target`` from ``importer`` leaves ``importer``'s package for a private module.

    A private module (``symshard.jax._runtime``) serves its own package only.
    """
    parts = target.split(".")
    for depth, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:depth])
            return not (importer == owner or importer.startswith(owner + "."))
    return False


def private_imports() -> list[str]:
    """Every private name one symshard module takes from another: ``from .x import _name``,
    ``x._name`` on an imported module, or a private module imported from outside its package."""
    known = frozenset(modules())
    found = []
    for module in modules():
        found += private_imports_in(module, source(module).read_text(encoding="utf-8"), known)
    return found


def private_imports_in(module: str, text: str, known: frozenset[str]) -> list[str]:
    """The private names the source ``text`` of ``module`` takes from the other ``known`` modules."""
    tree = ast.parse(text)
    bound: dict[str, str] = {}  # local name -> the symshard module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(module, node.level, node.module)
            if not base.startswith("symshard"):
                continue
            if _crossing(module, base):
                found.append(f"{module}:{node.lineno} imports the private module {base}")
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    bound[alias.asname or alias.name] = full
                    if _crossing(module, full):
                        found.append(f"{module}:{node.lineno} imports the private module {full}")
                elif _private(alias.name) and base != module:
                    found.append(f"{module}:{node.lineno} takes {base}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("symshard"):
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    if _crossing(module, alias.name):
                        found.append(f"{module}:{node.lineno} imports the private module {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _dotted(node.value)
            target = bound.get(owner) if owner else None
            if owner and target is None and owner in known:
                target = owner
            if target is not None and target != module and f"{target}.{node.attr}" not in known:
                found.append(f"{module}:{node.lineno} uses {target}.{node.attr}")
    return found


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def module_list() -> str:
    """The module list: lines, layer and name, one module a line, with the total."""
    lines = module_lines()
    rows = []
    for m, n in lines.items():
        layer = layer_of(m) if m not in FACES else None
        rows.append(f"{n:6d}  {'face' if layer is None else LAYERS[layer][0]:<12}  {m}")
    rows.append(f"{sum(lines.values()):6d}  {'':<12}  {len(lines)} modules")
    return "\n".join(rows)


# -- the contract -------------------------------------------------------------------------------------


def test_every_module_has_a_layer():
    for m in modules():
        layer_of(m)


# Circles still to break, each with why it is left (strict: the test fails once one is gone, so it leaves
# this list). None is left: arrays reads text through the readers symshard.notation.parser registers with it.
PENDING_CIRCLES: frozenset[frozenset[str]] = frozenset()


def test_no_circles():
    found = {frozenset(c) for c in cycles()}
    new = found - PENDING_CIRCLES
    assert not new, "import circles (strongly connected components):\n" + "\n".join(map(str, map(sorted, new)))
    gone = PENDING_CIRCLES - found
    assert not gone, f"these circles are broken now: remove them from PENDING_CIRCLES: {[sorted(c) for c in gone]}"


def test_imports_flow_down_the_layers():
    found = layer_violations()
    assert not found, "imports against the layers:\n" + "\n".join(found) + "\n\nmodules:\n" + module_list()


def test_no_private_names_cross_modules():
    found = private_imports()
    assert not found, "private names taken across modules:\n" + "\n".join(found)


def test_the_checks_see_what_they_claim():
    # each kind of violation, planted in a made-up module, is found (so an empty answer means a clean tree)
    known = frozenset({"symshard.planner", "symshard.collectives", "symshard.jax", "symshard.jax._runtime"})
    planted = (
        "from .collectives import _array, array\n"  # 1: a private name
        "from . import collectives as c\n"
        "c._dim(1)\n"  # 3: a private attribute of an imported module
        "import symshard.jax._runtime\n"  # 4: a private module from outside its package
        "from .jax import _runtime\n"  # 5: the same, the other way
        "from .. import __version__\n"  # 6: a dunder is public
    )
    found = private_imports_in("symshard.planner", planted, known)
    assert [f.split(" ", 1)[0] for f in found] == [f"symshard.planner:{n}" for n in (1, 4, 5, 3)], found
    assert private_imports_in("symshard.jax.verification", "from ._runtime import require_jax", known) == []
    assert _resolve("symshard.i18n.explain", 2, "einsums") == "symshard.einsums"
    assert _resolve("symshard.i18n", 1, "catalog") == "symshard.i18n.catalog"
    assert layer_of("symshard.errors") == 0 and layer_of("symshard.cli") == len(LAYERS) - 1
    assert layer_of("symshard.render.regions") == layer_of("symshard.report.html")


MAX_MODULE_LINES = 800
"""The most lines a module may have (issue 37): past it, split the module into modules of one idea each,
re-exporting the public names from the old one where other code imports them."""


def too_long(lines: dict[str, int], limit: int = MAX_MODULE_LINES) -> list[str]:
    """The modules of ``lines`` (module -> its number of lines) longer than ``limit``, longest first."""
    return [f"{m}: {n:,} lines" for m, n in sorted(lines.items(), key=lambda kv: (-kv[1], kv[0])) if n > limit]


def test_no_module_is_over_800_lines():
    found = too_long(module_lines())
    assert not found, f"modules over {MAX_MODULE_LINES} lines (split them):\n" + "\n".join(found)


def test_the_length_check_names_the_long_modules():
    # the check finds what it claims: the longest first, with sizes, the limit itself allowed
    lines = {"symshard.a": 801, "symshard.b": 800, "symshard.c": 1_200, "symshard.d": 12}
    assert too_long(lines) == ["symshard.c: 1,200 lines", "symshard.a: 801 lines"]
    assert too_long(lines, limit=2_000) == []
    real = module_lines()  # and it reads the real tree: every module, the longest named first
    assert set(real) == set(modules())
    assert too_long(real, limit=100)[0] == f"{max(real, key=real.__getitem__)}: {max(real.values()):,} lines"


# -- no function shadows a module ---------------------------------------------------------------------


def _submodules(package: str) -> Iterator[str]:
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        yield info.name


@pytest.mark.parametrize("package", ["symshard", "symshard.jax"])
def test_no_public_name_shadows_a_submodule(package):
    pkg = importlib.import_module(package)
    clash = sorted(set(pkg.__all__) & set(_submodules(package)))
    assert not clash, f"{package}.__all__ names that are also submodules of {package}: {clash}"


def test_every_package_ships():
    """A non-editable install (the README's main job) gets every package of the source tree: setuptools
    is given the list, so a new package must join it."""
    import tomllib

    root = Path(__file__).parents[1]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(root).parts) for p in (root / "symshard").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"

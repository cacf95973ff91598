"""The architecture as a test: symshard's modules form layers with no circles, and no module takes
another's private names.

grimp builds the import graph, counting imports inside functions and under ``TYPE_CHECKING`` (a
lazy import is still a dependency, only a later one). The layers, from the bottom:

1. ``foundation``: errors, messages, symbols and the few helpers everything may use;
2. ``notation``: arrays and the notation, meshes, placements, hardware, dtypes, units, formulas as text;
3. ``costs``: the collectives and the one costing module;
4. ``algebra``: matmuls, the planner and its routes, crossovers and conditions, schemes, searches;
5. ``models``: whole models (training, serving, parallelism, transfers) and the JAX bridge;
6. ``presentation``: words (i18n), reports, notebook display, figures, problems, the docs site;
7. ``cli``: the ``symshard`` command.

A module imports only from its own layer or those below, and the graph has no strongly connected
component, so every module can be read knowing only what it imports. The package faces
(``symshard`` and ``symshard.jax``) re-export names and sit outside the layers, but not outside the
circle check. ``python scripts/modules.py`` prints the module list with these facts.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp", reason="grimp (dev extra) is not installed")

PACKAGE = Path(__file__).resolve().parents[1] / "symshard"

# The package faces: re-exports for users, outside the layers.
FACES = frozenset({"symshard", "symshard.jax", "symshard.__main__"})

# Each layer by the modules it holds; a name ending in ".*" holds a package and all its modules.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (name, frozenset(members.split()))
    for name, members in (
        ("foundation", "errors messages symbols memo outputs inputs tomltext"),
        (
            "notation",
            "arrays notation mesh placement chips dtypes units mathtext network topology nccl substitution subaxes",
        ),
        ("costs", "collectives costmodels calibrate"),
        (
            "algebra",
            "einsums planner routes crossovers conditions inequalities monomials schemes search program read worked",
        ),
        ("models", "transformer training inference parallelism transfers jax.*"),
        ("presentation", "i18n.* report.* notebook render.* problems.* site.*"),
        ("cli", "cli.*"),
    )
)


def layer_of(module: str) -> int | None:
    """The number of ``module``'s layer (0 at the bottom), None for a face."""
    if module in FACES:
        return None
    short = module.removeprefix("symshard.")
    for number, (_, members) in enumerate(LAYERS):
        for member in members:
            if short == member or (member.endswith(".*") and (short + ".").startswith(member[:-1])):
                return number
    raise AssertionError(f"module {module} is in no layer: add it to LAYERS in tests/test_architecture.py")


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
# this list). None is left: arrays reads text through the readers symshard.notation registers with it.
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

"""The public surface: ``__all__`` lists exactly the public names, and the import stays light."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import symshard


def test_all_matches_public_names():
    for name in symshard.__all__:
        assert getattr(symshard, name) is not None  # lazy names load on first use
    public = {
        name
        for name, value in vars(symshard).items()
        if not name.startswith("_") and not isinstance(value, type(sys))  # submodules are not API names
    }
    assert public == set(symshard.__all__)
    assert symshard.__all__ == sorted(symshard.__all__)
    assert set(dir(symshard)) >= set(symshard.__all__)


def test_version_matches_pyproject():
    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert symshard.__version__ == meta["project"]["version"]


def test_import_is_light():
    code = (
        "import sys, symshard; "
        "heavy = [m for m in ('jinja2', 'numpy', 'jax', 'mkdocs', 'click', 'symshard.planner') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""

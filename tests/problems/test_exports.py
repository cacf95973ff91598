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
    meta = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert symshard.__version__ == meta["project"]["version"]


def test_import_is_light():
    code = (
        "import sys, symshard; "
        "heavy = [m for m in ('jinja2', 'numpy', 'jax', 'mkdocs', 'click', 'symshard.planning.planner') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_what_the_public_functions_return_is_public_too():
    # a user can name, check and annotate every result without reaching into submodules
    import symshard as ss

    p = ss.plan("X[B, D] · Y[D_X, F] -> Z[B, F]", "X=8", "B=1024,D=8192,F=16384", hardware="tpu-v5e")
    assert isinstance(p, ss.Plan) and isinstance(p.strategies[0], ss.Strategy)
    assert isinstance(ss.compare(p.matmul, "B", hardware="tpu-v5p"), ss.Comparison)
    assert isinstance(ss.matmul("A[I, J] · B[J, K] -> C[I, K]"), ss.Matmul)
    assert isinstance(ss.place("A[I_X, J]", "X=4", "I=8,J=8"), ss.Placement)
    assert isinstance(ss.parse("AllGather_X(A[I_X, J])").cost(), ss.CollectiveCost)

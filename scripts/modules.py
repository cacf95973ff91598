"""Print symshard's module list (lines, layer) and what the architecture test checks.

The contract itself (the layers, the circle and private-name checks) lives in
tests/test_architecture.py; this script reads it from there, so the two cannot disagree.

    python scripts/modules.py            # modules with line counts and layers
    python scripts/modules.py --check    # also the circles, layer violations and private imports
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TEST = Path(__file__).resolve().parents[1] / "tests" / "test_architecture.py"


def contract():
    spec = importlib.util.spec_from_file_location("test_architecture", TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    arch = contract()
    print(arch.module_list())
    if "--check" not in argv:
        return 0
    failed = 0
    for title, found in (
        ("circles (strongly connected components)", [" ".join(c) for c in arch.cycles()]),
        ("imports against the layers", arch.layer_violations()),
        ("private names taken across modules", arch.private_imports()),
    ):
        print(f"\n{title}: {len(found)}")
        for line in found:
            print("  " + line)
        failed += len(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The ``symshard`` commands: :data:`COMMANDS`, each command's function by the name the parser gives it,
and ``completion``, the shell script that completes them.

Each function reads its options, calls the library and hands the result to :mod:`symshard.report`,
which words it; it takes the parsed options and returns the text to print and the data ``--json``
prints. Bad input raises a :class:`~symshard.errors.SymshardError` that :func:`symshard.cli.main`
prints as one line. The functions live by what they are about:

- :mod:`.plan_commands`: ``shard``, ``matmul``, ``compare``, ``best-sharding``;
- :mod:`.machine_commands`: ``hardware``, ``collective``, ``calibrate``, ``measure``;
- :mod:`.model_commands`: ``layer``, ``model``, ``transfer``, ``book``;
- :mod:`.verify_command`: ``verify``;
- :mod:`.course_commands`: ``problems ...`` and ``site ...``;

with what they share in :mod:`.options` (the chip, the mesh, the cost model, the sizes) and
:mod:`.progress` (the bars on stderr). Each imports what is heavy (the planner, JAX, Jinja, MkDocs)
only when it runs.

Examples:
    >>> sorted(COMMANDS)[:4]
    ['best', 'book', 'calibrate', 'collective']
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..errors import UsageError
from ..messages import say
from .course_commands import (
    run_problems_check,
    run_problems_generate,
    run_problems_list,
    run_problems_schema,
    run_problems_show,
    run_site_build,
    run_site_prepare,
    run_site_serve,
)
from .machine_commands import run_calibrate, run_collective, run_hardware, run_measure
from .model_commands import run_book, run_layer, run_model, run_transfer
from .parser import argument_parser
from .plan_commands import run_best, run_compare, run_matmul, run_shard
from .verify_command import run_verify

__all__ = ["COMMANDS"]


# -- completion ------------------------------------------------------------------------------------


def run_completion(args: argparse.Namespace) -> tuple[str, dict]:
    try:
        import shtab
    except ImportError:
        raise UsageError(
            say("shell completion needs the shtab package"),
            hint=say("install it: python -m pip install 'shtab' (it has no dependencies)"),
        ) from None
    script = shtab.complete(argument_parser(), shell=args.shell)
    return script.rstrip("\n"), {"shell": args.shell, "script": script}


COMMANDS: dict[str, Callable[[argparse.Namespace], tuple[str, dict]]] = {
    "best": run_best,
    "book": run_book,
    "calibrate": run_calibrate,
    "collective": run_collective,
    "compare": run_compare,
    "completion": run_completion,
    "hardware": run_hardware,
    "layer": run_layer,
    "matmul": run_matmul,
    "measure": run_measure,
    "model": run_model,
    "problems_check": run_problems_check,
    "problems_generate": run_problems_generate,
    "problems_list": run_problems_list,
    "problems_schema": run_problems_schema,
    "problems_show": run_problems_show,
    "shard": run_shard,
    "site_build": run_site_build,
    "site_prepare": run_site_prepare,
    "site_serve": run_site_serve,
    "transfer": run_transfer,
    "verify": run_verify,
}
"""Each command's function by the name the parser gives it (its ``run`` default)."""

"""The ``verify`` command: run a matmul's strategies under JAX and check the costs against what they do
(:mod:`symshard.jax.verification`), with a progress line on a terminal.

JAX is imported only when the command runs, after the number of host devices is set.

Examples:
    >>> from symshard.cli import main
    >>> main(["verify", "X[B, D] · W[D, F] -> Y[B, F]"])  # no mesh: one line on stderr, status 2
    2
"""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..i18n import sentence
from ..machines.mesh import Mesh
from ..machines.presets import hardware
from ..messages import say
from .options import cost_model_from, set_aside_unused_sizes
from .words import word as _say

__all__ = ["run_verify"]


def run_verify(args: argparse.Namespace) -> tuple[str, dict]:
    from ..notation.einsums import matmul

    mm = matmul(args.matmul, outer=args.outer)
    if not args.mesh or not args.shape:
        raise UsageError(
            say("verify needs numbers: --mesh and --shape"), hint=say("e.g. --mesh X=4,Y=2 --shape I=64,J=64,K=64")
        )
    set_aside_unused_sizes(args, mm.dims, str(mm))
    chip = hardware(args.hw) if args.hw else None
    mesh = Mesh(args.mesh, hardware=chip)  # the chip's wiring, as matmul --hw has it: one question, one ranking
    if not mesh.is_numeric:
        raise UsageError(
            say("verify needs every mesh size, not '{mesh}'", mesh=args.mesh), hint=say("e.g. --mesh X=4,Y=2")
        )
    from ..jax.runtime import configure_host_devices, require_jax

    configure_host_devices(max(8, int(mesh.devices)))  # only takes effect before JAX is imported
    require_jax()
    from ..jax.verification import verify
    from ..report.verifications import verification_text

    if args.sample is not None and args.execute not in ("all", "auto"):
        raise UsageError(
            say("--sample {count} draws from all strategies, but --run is {run}", count=args.sample, run=args.execute),
            hint=say("drop --run (or use --run all) with --sample"),
        )
    if args.sample is not None and args.sample < 1:
        raise UsageError(
            say("--sample {count} runs no strategy", count=args.sample), hint=say("sample at least 1, e.g. --sample 20")
        )
    progress = _verify_progress(args.language) if sys.stderr.isatty() and not args.json else None
    v = verify(
        mm,
        mesh,
        args.shape,
        dtype=args.dtype,
        hardware=chip,
        model=cost_model_from(args, chip),
        run=args.execute,
        sample=args.sample,
        seed=args.seed,
        time_limit=args.time_limit,
        progress=progress,
    )
    if progress is not None:
        print(file=sys.stderr)
    data = v.to_json()
    if args.language != "en":
        data["language"] = args.language
        data[f"reason_{args.language}"] = sentence(v.reason, args.language)
        data[f"lowering_{args.language}"] = [sentence(n, args.language) for n in v.lowering]
    return verification_text(v, args.language), data


def _verify_progress(lang: str):
    """A progress line on stderr, rewritten in place: first what runs before any strategy (planning,
    XLA's compile, the search for its plan: seconds on a mesh of four axes), then the strategies run."""
    import time

    started = time.perf_counter()
    shown = [0.0]
    width = [0]

    def say(text: str) -> None:
        print("\r" + text.ljust(width[0]), end="", file=sys.stderr, flush=True)  # covers a longer line before
        width[0] = max(width[0], len(text))

    def show(done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - shown[0] < 0.2:  # at most five updates a second
            return
        shown[0] = now
        say(_say("cli.verify.progress", lang, done=f"{done:,}", total=f"{total:,}", seconds=f"{now - started:.0f}"))

    say(_say("cli.verify.planning", lang))
    return show

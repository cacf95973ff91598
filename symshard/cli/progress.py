"""The bars a long command draws on stderr while it works (problem sets, the docs site, a chip's
measurement): only on a terminal, never under ``--json``.

Examples:
    >>> import argparse
    >>> Progress(argparse.Namespace(json=True)).on
    False
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["Progress"]


class Progress:
    """Bars on stderr while a long command works: only on a terminal, never under ``--json``.

    Drawn by tqdm when it is installed; without it the command runs silently, as it would in a pipe.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.on = sys.stderr.isatty() and not getattr(args, "json", False)
        self.bars: dict[str, object] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.on or total <= 0:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self.on = False
            return
        bar = self.bars.get(stage)
        if bar is None:
            bar = self.bars[stage] = tqdm(total=total, desc=stage, unit="", leave=False, file=sys.stderr)
        bar.n = done  # type: ignore[attr-defined]
        bar.refresh()  # type: ignore[attr-defined]
        if done >= total:
            bar.close()  # type: ignore[attr-defined]

    def counter(self, stage: str):
        """The same, as the ``(done, total)`` callback the problem generator takes."""
        return lambda done, total: self(stage, done, total)

"""Exact piecewise-linear functions of one positive variable, for crossovers without sampling.

Along one dim, every cost the planner produces is built from straight lines:
compute time is proportional to the dim, each collective's time is the larger
of a latency and a bandwidth term that is proportional to the dim or constant,
and a strategy's time is the larger (or the sum) of compute and communication.
Max and sum of straight lines are continuous piecewise-linear functions, so a
crossover (where two strategies tie, or where compute catches up with
communication) is the root of a linear equation on one piece: exact, with
Python fractions, and never read off a plot.

Examples:
    >>> from fractions import Fraction as F
    >>> t = Piecewise.line(F(1, 2)).maximum(Piecewise.line(0, 3))  # max(x/2, 3)
    >>> t.pieces
    ((Fraction(0, 1), Fraction(0, 1), Fraction(3, 1)), (Fraction(6, 1), Fraction(1, 2), Fraction(0, 1)))
    >>> t(F(10)), t.roots_of_difference(Piecewise.line(F(1, 4), 2))
    (Fraction(5, 1), [Fraction(4, 1), Fraction(8, 1)])
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["Piecewise"]

Number = Fraction | int


def _merge(a: Piecewise, b: Piecewise) -> list[Fraction]:
    return sorted(set(a._starts) | set(b._starts))


@dataclass(frozen=True, slots=True)
class Piecewise:
    """A continuous piecewise-linear function on ``x ≥ 0``.

    ``pieces`` are ``(start, slope, intercept)`` with increasing starts, the first at 0;
    each piece holds from its start to the next one's (the last one forever).
    """

    pieces: tuple[tuple[Fraction, Fraction, Fraction], ...]
    _starts: tuple[Fraction, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_starts", tuple(p[0] for p in self.pieces))

    @staticmethod
    def line(slope: Number, intercept: Number = 0) -> Piecewise:
        """``slope · x + intercept``."""
        return Piecewise(((Fraction(0), Fraction(slope), Fraction(intercept)),))

    def _piece(self, x: Number) -> tuple[Fraction, Fraction, Fraction]:
        i = bisect.bisect_right(self._starts, x) - 1
        return self.pieces[max(i, 0)]

    def __call__(self, x: Number) -> Fraction:
        _, k, c = self._piece(x)
        return k * x + c

    def at(self, x: Number) -> tuple[Fraction, Fraction]:
        """The value at ``x`` and the slope just right of it (to break ties exactly)."""
        _, k, c = self._piece(x)
        return k * x + c, k

    def floats(self) -> tuple[list[float], list[tuple[float, float]]]:
        """Starts and ``(slope, intercept)`` as floats, for fast plotting."""
        return [float(p[0]) for p in self.pieces], [(float(p[1]), float(p[2])) for p in self.pieces]

    @property
    def breakpoints(self) -> list[Fraction]:
        """Where the slope changes."""
        return [p[0] for p in self.pieces[1:]]

    def _tidy(self, pieces: list[tuple[Fraction, Fraction, Fraction]]) -> Piecewise:
        out: list[tuple[Fraction, Fraction, Fraction]] = []
        for p in pieces:
            if out and out[-1][1:] == p[1:]:
                continue
            out.append(p)
        return Piecewise(tuple(out))

    def __add__(self, other: Piecewise) -> Piecewise:
        out = []
        for s in _merge(self, other):
            _, k1, c1 = self._piece(s)
            _, k2, c2 = other._piece(s)
            out.append((s, k1 + k2, c1 + c2))
        return self._tidy(out)

    def __neg__(self) -> Piecewise:
        return Piecewise(tuple((s, -k, -c) for s, k, c in self.pieces))

    def __sub__(self, other: Piecewise) -> Piecewise:
        return self + (-other)

    def maximum(self, other: Piecewise) -> Piecewise:
        """The pointwise larger of the two."""
        starts = _merge(self, other)
        out = []
        for i, s in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else None
            _, k1, c1 = self._piece(s)
            _, k2, c2 = other._piece(s)
            first = (k1, c1) if (k1 * s + c1, k1) >= (k2 * s + c2, k2) else (k2, c2)
            second = (k2, c2) if first == (k1, c1) else (k1, c1)
            out.append((s, *first))
            if k1 != k2:
                cross = (c2 - c1) / (k1 - k2)
                if cross > s and (end is None or cross < end):
                    out.append((cross, *second))
        return self._tidy(out)

    def roots_of_difference(self, other: Piecewise) -> list[Fraction]:
        """Where ``self - other`` changes sign, in increasing order (``x > 0``)."""
        d = self - other
        starts = [p[0] for p in d.pieces]
        candidates = set()
        for i, (s, k, c) in enumerate(d.pieces):
            end = starts[i + 1] if i + 1 < len(starts) else None
            if k != 0:
                r = -c / k
                if r > 0 and r >= s and (end is None or r <= end):
                    candidates.add(r)
        out = []
        for r in sorted(candidates):
            right = d.pieces[bisect.bisect_right(starts, r) - 1][1]
            left = d.pieces[max(bisect.bisect_left(starts, r) - 1, 0)][1]
            if (left > 0 and right > 0) or (left < 0 and right < 0):  # value 0 at r: the sign flips
                out.append(r)
        return out

"""Making problems: a seeded variant of a family, drawn in the sandboxed worker, and problem sets.

The entry points of :mod:`symshard.problems`. :func:`variant` runs one draw
(:mod:`~symshard.problems.drawing`) in a worker within a budget. A problem set
(:func:`generate`) takes variants round-robin over the chosen families and drops
duplicates: two variants are the same when their answers and reasoning path are.
:func:`variants_of` draws the other variants of each problem of a set, for the
course platforms. The families are found by :mod:`~symshard.problems.library`,
and a problem is a value of :mod:`~symshard.problems.problem`.

Examples:
    >>> from symshard.problems import family
    >>> p = variant(family("allgather-time"), 7)
    >>> p.id, [a.name for a in p.answers]
    ('allgather-time-7', ['time'])
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import TemplateError, TooLargeError, did_you_mean
from ..messages import say
from .budget import Budget, run
from .drawing import draw_variant
from .family import DIFFICULTIES, Family
from .library import family_folders, load_cached
from .problem import Problem

__all__ = ["MAX_PROBLEMS", "generate", "select", "variant", "variants_of"]


MAX_PROBLEMS = 1_000
"""The most problems one set may have: each takes its own draw, and every export holds them all (a set of
200 in every format takes a quarter of a minute and 500 MB)."""


def variant(fam: Family, seed: int, language: str = "en", *, budget: Budget | None = None) -> Problem:
    """The problem of family ``fam`` for ``seed`` (the first draw that passes every check).

    The drawing and rendering run in a worker process within ``budget`` (default:
    :meth:`Budget.from_environment <symshard.problems.budget.Budget.from_environment>`),
    whatever the family's templates and expressions ask for.

    Raises:
        TemplateError: a broken family, no text in ``language``, no valid draw in
            ``MAX_ATTEMPTS`` tries, or work past the budget
            (:class:`~symshard.problems.budget.BudgetExceeded`).
    """
    fam.template_for(language)  # an unknown language fails before any drawing
    chosen = budget if budget is not None else Budget.from_environment()
    return run(draw_variant, (fam, seed, language), chosen, what=say("family '{family}' (seed {seed})", family=fam.name,
                                                                  seed=seed))  # fmt: skip


def _variant_seed(set_seed: int, name: str, index: int, retry: int) -> int:
    digest = hashlib.sha256(f"{set_seed}\0{name}\0{index}\0{retry}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def select(
    folders: Mapping[str, Path],
    names: Sequence[str] | None = None,
    difficulty: Sequence[str] | None = None,
) -> list[Family]:
    """The families to draw from, by name and difficulty.

    Raises:
        TemplateError: an unknown family name, or nothing selected.
    """
    if names:
        for n in names:
            if n not in folders:
                raise TemplateError(say("unknown problem family '{name}'", name=n), hint=did_you_mean(n, list(folders)))
        chosen = [load_cached(folders[n]) for n in names]
    else:
        chosen = [load_cached(path) for path in folders.values()]
    if difficulty:
        chosen = [f for f in chosen if f.difficulty in difficulty]
    if not chosen:
        raise TemplateError(
            say("no family matches the selection"), hint=say("see '{command}'", command="symshard problems list")
        )
    return sorted(chosen, key=lambda f: DIFFICULTIES.index(f.difficulty))  # stable: names keep their order


def generate(
    seed: int,
    count: int | None = None,
    *,
    names: Sequence[str] | None = None,
    difficulty: Sequence[str] | None = None,
    per_family: int | None = None,
    language: str = "en",
    extra: Iterable[Path | str] = (),
    progress: Callable[[int, int], None] | None = None,
    budget: Budget | None = None,
) -> list[Problem]:
    """A problem set: ``per_family`` variants of each chosen family, or ``count`` problems
    taken round-robin over them (alternating difficulties); reproducible from ``seed``, without
    duplicates, and ordered from easy to hard.

    Raises:
        TemplateError: a broken family, or one that cannot produce enough distinct variants.
        TooLargeError: more than :data:`MAX_PROBLEMS` problems.
    """
    chosen = select(family_folders(extra), names, difficulty)
    asked = per_family * len(chosen) if per_family is not None else count if count is not None else len(chosen)
    if asked > MAX_PROBLEMS:
        raise TooLargeError(
            say("a set of {count} {count:problem|problems} is more than generate takes ({limit})", count=f"{asked:,}",
                limit=f"{MAX_PROBLEMS:,}"),
            hint=say("ask for fewer, or make several sets with different seeds"),
        )  # fmt: skip
    if per_family is not None:
        plan_ = [(f, k) for f in chosen for k in range(per_family)]
    else:
        total = count if count is not None else len(chosen)
        # one round alternates easy, medium and hard, each level started at a seed-chosen family: a set
        # shorter than a round mixes levels and leaves out different families for different seeds
        queues = []
        for level in DIFFICULTIES:
            fams = [f for f in chosen if f.difficulty == level]
            if fams:
                start = _variant_seed(seed, level, 0, 0) % len(fams)
                queues.append(fams[start:] + fams[:start])
        order = [q[i] for i in range(max(map(len, queues))) for q in queues if i < len(q)]
        taken = [(order[i % len(order)], i // len(order)) for i in range(total)]
        plan_ = sorted(taken, key=lambda fk: (DIFFICULTIES.index(fk[0].difficulty), fk[1], fk[0].name))
    seen: set[tuple] = set()
    out: list[Problem] = []
    for n, (fam, index) in enumerate(plan_):
        for retry in range(50):
            problem = variant(fam, _variant_seed(seed, fam.name, index, retry), language, budget=budget)
            key = problem.key()
            if key not in seen:
                seen.add(key)
                out.append(problem)
                break
        else:
            raise TemplateError(
                say("family '{family}' keeps repeating itself: no new variant in 50 draws", family=fam.name),
                hint=say("widen its parameters, or ask for fewer problems of it"),
            )
        if progress is not None:
            progress(n + 1, len(plan_))
    return out


def variants_of(
    problems: Sequence[Problem],
    seed: int,
    count: int,
    *,
    budget: Budget | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[Problem, ...]]:
    """For each problem of a set, ``count`` variants of its family, the problem itself first: what a course
    platform draws from so that each student gets their own numbers. The other variants' seeds are drawn from
    the set's ``seed`` (and the problem's place in the set), so the same set and count give the same variants;
    no two variants in the whole answer are the same (see :meth:`Problem.key`).

    Raises:
        TemplateError: a family that cannot produce that many distinct variants.

    Examples:
        >>> week = generate(2026, 2, difficulty=["easy"])
        >>> groups = variants_of(week, 2026, 3)
        >>> [len(g) for g in groups], groups[0][0] is week[0], len({p.id for g in groups for p in g})
        ([3, 3], True, 6)
    """
    seen = {p.key() for p in problems}
    out: list[tuple[Problem, ...]] = []
    total = len(problems) * max(count - 1, 0)
    done = 0
    for index, first in enumerate(problems):
        group = [first]
        for k in range(1, count):
            for retry in range(50):
                drawn = _variant_seed(seed, f"{first.family.name}\0variant\0{k}", index, retry)
                problem = variant(first.family, drawn, first.language, budget=budget)
                if problem.key() not in seen:
                    seen.add(problem.key())
                    group.append(problem)
                    break
            else:
                raise TemplateError(
                    say(
                        "family '{family}' keeps repeating itself: no new variant in 50 draws", family=first.family.name
                    ),
                    hint=say("ask for fewer variants (--variants), or widen the family's parameters"),
                )
            done += 1
            if progress is not None:
                progress(done, total)
        out.append(tuple(group))
    return out

"""Every answer is a configuration a machine can hold, and every set reads well.

Each built-in family records the configurations its problem asks about or answers
with as ``config_*`` entries of ``[identity]``: ``array @ mesh @ sizes @ dtype @ chip``.
Over 100 variants of every family (2,100 in all, the same seeds as the 200-seed
rendering test, drawn once), each configuration must place with symshard's own
``place`` (every sharded dim divisible, every axis a whole number of devices) and,
on a named chip, fit in its HBM; the answers that *are* configurations (a TP degree,
the ways a weight is split) must be the ones recorded.
"""

from __future__ import annotations

import itertools
import re

import pytest
from helpers import family_variants

from symshard import hardware, parse, place
from symshard.notation.arrays import Array
from symshard.notation.parser import parse_array
from symshard.problems import families

FAMILIES = sorted(families())
PER_FAMILY = 100


def _sizes(text: str) -> dict[str, int]:
    return {} if text.strip() == "-" else {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def _configs(p) -> list[tuple[Array, dict[str, int], dict[str, int], str, str]]:
    """The configurations a variant records: (array, mesh, sizes, dtype, chip or '-')."""
    out = []
    for key, value in p.path:
        if key.startswith("config"):
            array, mesh, sizes, dtype, chip = (part.strip() for part in value.split(" @ "))
            out.append((parse_array(array), _sizes(mesh), _sizes(sizes), dtype, chip))
    if p.family.name == "gpu-nvlink-node":  # its arrays follow from its parameters (the kind of collective)
        q = dict(p.params)
        pattern = {"AllGather": "AllGather_{a}(A[I_{a}, J])", "ReduceScatter": "ReduceScatter_{{{a},I}}(G[I, J]{{U_{a}}})",
                   "AllReduce": "AllReduce_{a}(G[I, J]{{U_{a}}})"}[q["kind"]]  # fmt: skip
        for ax in ("X", "Y"):
            op = parse(pattern.format(a=ax))
            for arr in (op.operand, op.output):
                out.append((arr, {"X": q["X"], "Y": q["Y"]}, {"I": q["I"], "J": q["J"]}, q["dtype"], q["chip"]))
    return out


_SLOW_FAMILIES = {"fsdp-tp-split": "its variants search layouts of three axes: about 9 to 14 s"}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow(reason=_SLOW_FAMILIES[n])) if n in _SLOW_FAMILIES else n for n in FAMILIES],
)
def test_every_answer_is_a_feasible_configuration(name):
    problems = family_variants(name)[:PER_FAMILY]
    assert len(problems) == PER_FAMILY
    for p in problems:
        configs = _configs(p)
        assert configs, f"{p.id} records no configuration"
        for arr, mesh, sizes, dtype, chip in configs:
            assert all(isinstance(n, int) and n >= 1 for n in mesh.values()), (p.id, mesh)  # whole devices
            placed = place(arr, mesh, {d: sizes[d] for d in arr.dim_names if d in sizes} or None, dtype=dtype)
            if chip != "-":
                hbm = hardware(chip).hbm_bytes
                assert int(placed.bytes_per_device) <= hbm, f"{p.id}: {arr} takes {placed.bytes_per_device} B of {hbm}"
        answers = {a.name: a for a in p.answers}
        if name == "mlp-tp-degree":  # the degree answered is the degree placed
            assert {m["Y"] for _, m, _, _, _ in configs} == {int(answers["largest"].value)}
        if name == "memory-limit-sharding":  # the ways answered are the shardings placed
            ways = {str(a.name): a for a, *_ in configs}
            for weight, answer in (("W_in", "ways_in"), ("W_out", "ways_out")):
                arr = next(a for a in ways.values() if a.name == weight)
                mesh = next(m for a, m, *_ in configs if a.name == weight)
                split = 1
                for axis in arr.axes:
                    split *= mesh[axis]
                assert split == int(answers[answer].value), p.id


def test_the_tp_degree_divides_the_issue_example():
    # the issue's case: F = 20,480 and D = 16,384 used to get |Y| = 3, which divides neither
    from symshard.errors import DivisibilityError
    from symshard.models.schemes import largest_tp, layer

    sizes = {"B": 4096, "D": 16384, "F": 20480}
    arrays = [parse_array(a) for a in ("In[B, D_Y]", "W_in[D, F_Y]", "W_out[F_Y, D]")]

    def placed(d: int) -> bool:
        try:
            for arr in arrays:
                place(arr, {"Y": d}, {k: sizes[k] for k in arr.dim_names})
        except DivisibilityError:
            return False
        return True

    for chip in ("tpu-v5e", "tpu-v5p", "h100", "b200"):
        lay = layer("tp", hardware=chip)
        values = lay.values({}, {}, chip, {"Y": 1})
        bound = largest_tp(20480, values, lay.fabric)
        degree = largest_tp(20480, values, lay.fabric, shape=sizes)
        assert 1 <= degree <= bound and placed(degree), chip
        assert not any(placed(d) for d in range(degree + 1, bound + 1)), chip


# -- sets that read well ----------------------------------------------------------------------------------------

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\S")


@pytest.mark.parametrize("name", FAMILIES)
def test_lists_start_after_a_blank_line_and_meshes_print_one_way(name):
    # Python-Markdown (the site) and Moodle need a blank line before a list, or it prints as "* ..."
    for p in family_variants(name)[:40]:
        texts = {"statement": p.statement, "solution": p.solution, **{f"hint {i}": h for i, h in enumerate(p.hints, 1)}}
        for where, text in texts.items():
            lines = text.splitlines()
            for before, line in itertools.pairwise(lines):
                if _LIST_ITEM.match(line):
                    ok = not before.strip() or _LIST_ITEM.match(before) or before.startswith("  ")
                    assert ok, f"{p.id} {where}: a list right after {before!r}"
            # a mesh is written as the chapter writes it, Mesh({'X': 8, 'Y': 2}), never as a bare dict
            assert not re.search(r"(?<!Mesh\()\{'[A-Z]': \d", text), f"{p.id} {where} prints a mesh as a dict"


@pytest.mark.parametrize("name", ["fsdp-min-batch", "mlp-tp-degree"])
def test_every_symbol_of_a_solution_is_defined_in_it(name):
    # M_X, M_Y (the physical axes a mesh axis spans) appear in these solutions' formulas
    for p in family_variants(name)[:20]:
        for axis in "XY":
            if f"M_{{{axis}}}" in p.solution or f"M_{axis}" in p.solution:
                assert f"$M_{axis}$ is the number of physical mesh axes" in p.solution, p.id


def test_a_figure_alt_text_names_each_strategy_once():
    # the plot numbers the planner's strategies; the problem calls the gather "Strategy 1": never both
    for p in family_variants("strategy-crossover")[:20]:
        for _, fig in p.figures:
            assert "strategy 1" not in fig.alt and "strategy 2" not in fig.alt, fig.alt

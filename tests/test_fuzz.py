"""Fuzz the notation parsers and the CLI with random and malformed text.

The contract under test: whatever a user types, the parsers either return a value
or raise a :class:`~symshard.errors.SymshardError` subclass, and ``symshard``
(``symshard.cli.main``) returns 0 or 2 without raising; on 2 it prints exactly
one line, starting ``symshard: error:``, on stderr and nothing on stdout. Any
other exception is a bug in the library, never something to filter out here.

Three sources of input:

* random text over an alphabet rich in the notation's characters, LaTeX
  fragments and arbitrary Unicode;
* mutations (insert, delete, duplicate, swap, replace; by character and by token)
  of valid arrays, collectives, meshes and shapes, which keeps many inputs close
  to the grammar and so reaches the deeper branches;
* random command lines: a valid scenario (notation, mesh, shape) whose parts are
  kept, mutated or replaced by garbage, plus random options and values.

Hypothesis runs derandomized, so a run is reproducible; the deterministic tables
at the end pin specific malformed inputs to the exception class they must raise
and check that the message quotes the input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, currently_in_test_context, given, note, settings
from hypothesis import strategies as st

from symshard.cli import main
from symshard.costs.collectives import CollectiveExpr, parse_collective
from symshard.costs.placement import place, resolve_shape
from symshard.errors import (
    CollectiveError,
    DivisibilityError,
    MeshError,
    NotationError,
    ShapeError,
    ShardingError,
    SymshardError,
    UnknownAxisError,
    UnknownDtypeError,
    UnknownHardwareError,
    UnknownModelError,
)
from symshard.machines.mesh import Mesh
from symshard.machines.presets import hardware
from symshard.notation.arrays import Array
from symshard.notation.parser import parse_array
from symshard.read import parse

T = TypeVar("T")

# -- the raw material -------------------------------------------------------------------

VALID_ARRAYS = [
    "A[I_XY, J]{U_Z}",
    "A[I_X, J]",
    "[E_Y, F]",
    r"\mathbf{A}[I_{XY}, J] \{U_Z\}",
    "B[I_{data}, J_{model}]",
    "W_in[D_X, F_Y]",
    "A'[I_X]",
    "C[I, K]{U_X}",
    "$A[I_X, J_Y]$",
]
VALID_COLLECTIVES = [
    "AllGather_X(A[I_X, J])",
    "AllGather_Y([E_Y, F])",
    "AllGather_XY(A[I_XY, J]) -> A[I, J]",
    "ReduceScatter_{X,K}(C[I, K]{U_X})",
    "AllReduce_Z([B_X, D_Y]{U_Z})",
    "AllReduce(C[I, K]{U_XY})",
    "AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]",
    "all_to_all_{XY,J}(A[I_XY, J])",
    "psum_scatter_{X,K}(C[I, K]{U_X})",
    "CollectivePermute_X(A[I_X, J])",
    "ppermute_X(A[I_X])",
    "AllGather_{data}(B[I_{data}, J])",
    r"\textbf{AllGather}_X(\mathbf{A}[I_X, J]) \rightarrow \mathbf{A}[I, J]",
    "AllToAll_{X,J}(A[I_X, J]) → A[I, J_X]",
]
VALID_MESHES = ["X=8,Y=2", "X=8,Y=4", "X=4,Y=4,Z=4", "X=8,Y=2,Z=2", "X, Y=2", "data=4,model=2", "{'X': 8, 'Y': 2}"]
VALID_SHAPES = ["I=1024,J=4096", "E=2048,F=8192", "B=1024,D=8192", "I=1024,K=4096", "I=2^10, J:4096", "I=?,J=1_024"]
VALID = VALID_ARRAYS + VALID_COLLECTIVES + VALID_MESHES + VALID_SHAPES

# Characters of the notation, with a few look-alikes and troublemakers.
NOTATION_CHARS = "ABCDEFIJKUWXYZabdefijkmotx0123456789_[]{}(),·*@->→\\$:=^' ⋅•×⟶~;!?.\"\t\n\r\x00\u2028𝐀"
FRAGMENTS = [
    r"\mathbf{",
    r"\textbf{",
    r"\text{",
    r"\mathrm{",
    r"\{",
    r"\}",
    r"\cdot",
    r"\rightarrow",
    r"\to",
    r"\,",
    r"\lbrace",
    r"\foo",
    "\\",
    "U_",
    "{U_",
    "_{",
    "_X",
    "_XY",
    "_{X,K}",
    "A[",
    "I_X",
    ", ",
    "]",
    "->",
    "AllGather",
    "ReduceScatter",
    "AllReduce",
    "AllToAll",
    "CollectivePermute",
    "psum",
    "all_gather",
    "data",
    "=8",
    "=?",
    "2^10",
    "1e3",
    "=0",
    "=-1",
]

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[A-Za-z][A-Za-z0-9']*|[0-9]+|->|\s+|.", re.DOTALL)

any_char = st.characters(codec="utf-8")  # arbitrary Unicode, surrogates excluded
notation_char = st.sampled_from(NOTATION_CHARS)
piece = st.one_of(notation_char, notation_char, st.sampled_from(FRAGMENTS), any_char)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str]) -> str:
    """A valid example with a few characters or tokens inserted, deleted, duplicated, swapped or replaced."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        units = list(text) if draw(st.booleans()) else _TOKEN.findall(text)
        op = draw(st.sampled_from(["insert", "delete", "duplicate", "swap", "replace"]))
        if op == "insert" or not units:
            at = draw(st.integers(0, len(units)))
            new = draw(st.one_of(piece, st.sampled_from(units or ["A"])))
            units.insert(at, new)
        else:
            i = draw(st.integers(0, len(units) - 1))
            if op == "delete":
                del units[i]
            elif op == "duplicate":
                units.insert(i, units[i])
            elif op == "swap":
                j = draw(st.integers(0, len(units) - 1))
                units[i], units[j] = units[j], units[i]
            else:
                units[i] = draw(piece)
        text = "".join(units)
    return text


random_text = st.one_of(
    st.text(alphabet=st.one_of(notation_char, any_char), max_size=40),
    st.lists(piece, max_size=25).map("".join),
)

# -- the parser contract ----------------------------------------------------------------


def _note(text: str) -> None:
    """Record what was being called, for Hypothesis' report of a failing example."""
    if currently_in_test_context():
        note(text)


def _attempt(what: str, call: Callable[[], T], text: str) -> T | None:
    """Run one parser entry point: a value, or None after a SymshardError that prints."""
    _note(f"{what}({text!r})")
    try:
        return call()
    except SymshardError as err:
        # Rendering the error (what a traceback and the CLI show) must not fail either.
        assert err.message
        assert str(err)
        assert err.one_line()
        return None


def _deeper(value: Array | CollectiveExpr) -> None:
    """A value that parsed must print, round-trip and cost without a non-symshard error."""
    assert parse(str(value)) == value
    assert parse(value.latex()) == value
    if isinstance(value, Array):
        axes = list(dict.fromkeys([*value.axes, *sorted(value.unreduced)]))
        p = _attempt("place", lambda: place(value, {a: 2 for a in axes}, {d: 64 for d in value.dim_names}), str(value))
        if p is not None:
            _attempt("Placement figures", lambda: (p.local_shape, p.bytes_per_device, p.copies), str(value))
        return
    op_axes = [*value.operand.axes, *sorted(value.operand.unreduced), *value.op.axes]
    mesh = dict.fromkeys(op_axes, 2)
    shape = {d: 64 for d in value.operand.dim_names}
    for model in ("book", "ring"):
        cost = _attempt("cost", partial(value.cost, mesh, shape, hardware="tpu-v5e", model=model), str(value))
        if cost is not None:
            float(cost.time)


def check_parsers(text: str) -> None:
    """Send ``text`` through every parser entry point; only SymshardError may escape."""
    value = _attempt("parse", lambda: parse(text), text)
    _attempt("parse_array", lambda: parse_array(text), text)
    _attempt("parse_collective", lambda: parse_collective(text), text)
    _attempt("Mesh", lambda: Mesh(text), text)
    _attempt("resolve_shape", lambda: resolve_shape(text, ("I", "J", "K"), context="A[I, J, K]"), text)
    _attempt("place(shape=...)", lambda: place("A[I_X, J]", "X=2", text), text)
    _attempt("place(mesh=...)", lambda: place("A[I_X, J]", text, "I=64,J=64"), text)
    _attempt("place(array=...)", lambda: place(text, "X=8,Y=2,Z=2", "I=1024,J=4096"), text)
    if value is not None:
        _deeper(value)


PARSER_SETTINGS = settings(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@settings(PARSER_SETTINGS, max_examples=1500)
@given(random_text)
def test_parsers_on_random_text(text: str) -> None:
    check_parsers(text)


@settings(PARSER_SETTINGS, max_examples=2500)
@given(mutated(VALID))
def test_parsers_on_mutated_examples(text: str) -> None:
    check_parsers(text)


@pytest.mark.parametrize("text", VALID)
def test_valid_examples_parse(text: str) -> None:
    """The seeds the mutations start from are themselves accepted by their parser."""
    if text in VALID_MESHES:
        Mesh(text)
    elif text in VALID_SHAPES:
        resolve_shape(text, ("B", "D", "E", "F", "I", "J", "K"), context="seed")
    else:
        check_parsers(text)
        parse(text)


# -- the CLI contract ---------------------------------------------------------------------


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main(argv)`` in-process: it must not raise, and it must keep its output contract."""
    capsys.readouterr()  # drop anything an earlier example left behind
    _note(f"main({argv!r})")
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), f"exit status {code}"  # 1: best-sharding found nothing that fits
    if code == 2 and "--json" in argv:  # the error as one JSON object on stdout, nothing on stderr
        assert err == "", f"stderr is not empty on a --json error: {err!r}"
        error = json.loads(out)["error"]
        assert set(error) == {"type", "message", "hint"} and error["message"], out
    elif code == 2:
        assert out == "", f"stdout is not empty on error: {out!r}"
        assert err.startswith("symshard: error:"), err
        assert err.endswith("\n") and len(err.splitlines()) == 1, f"stderr is not one line: {err!r}"
    elif "--json" in argv and not out.startswith(("usage:", "symshard ")):
        json.loads(out)
    return code, out, err


SCENARIOS = [
    ("collective", "AllGather_Y([E_Y, F])", "X=8,Y=4", "E=2048,F=8192"),
    ("collective", "AllReduce_Z([B_X, D_Y]{U_Z})", "X=4,Y=4,Z=4", "B=1024,D=8192"),
    ("collective", "ReduceScatter_{X,K}(C[I, K]{U_X})", "X=8,Y=2", "I=1024,K=4096"),
    ("collective", "AllToAll_{X,J}(A[I_X, J]) -> A[I, J_X]", "X=8", "I=1024,J=4096"),
    ("collective", "CollectivePermute_X(A[I_X, J])", "X=16", "I=1024,J=64"),
    ("collective", "AllGather_X(A[I_XY, J])", "X=8,Y=2", "I=1024,J=4096"),
    ("collective", "AllReduce(C[I, K]{U_XY})", "X=2,Y=2", "I=8,K=8"),
    ("collective", "all_to_all_{XY,J}(A[I_XY, J])", "X=2,Y=4", "I=64,J=64"),
    ("shard", "A[I_XY, J]{U_Z}", "X=8,Y=2,Z=2", "I=1024,J=4096"),
    ("shard", r"\mathbf{A}[I_{XY}, J] \{U_Z\}", "X=8,Y=2,Z=4", "I=1024,J=4096"),
    ("shard", "[E_Y, F]", "X=8,Y=4", "E=2048"),
    ("shard", "B[I_{data}, J_{model}]", "data=4,model=2", "I=16,J=16"),
]
COMMANDS = ["shard", "collective", "hardware"]
GARBAGE_COMMANDS = ["", "bogus", "Shard", "-", "--json", "--version", "-h", "collectives", "shard=1"]
HW_NAMES = ["tpu-v5e", "tpu-v4p", "v5p", "TPU v5e", "trillium", "tpu7x", "h100", "a100", "h200", "b200", "gb200"]
GARBAGE_HW = ["", "tpu-v9", "nope", "-", "v", "tpu", "h1000", "ＴＰＵ"]
DTYPES = ["bf16", "fp32", "fp8", "int8", "int4", "bfloat16", "FLOAT32", " fp16 "]
GARBAGE_DTYPES = ["", "fp12", "bf17", "int3", "float", "u4", "-", "bf16,fp32"]
HW_SETS = ["W_hbm=3.4e12", "T_hop=1e-6", "W_ici=9e10,T_hop=1e-6", "C=1e15", "W_nvlink=1e11", "W_dcn=1e9", "M_hbm=1"]
GARBAGE_HW_SETS = ["", "W_ici=0", "W_ici=-1", "W_ici=abc", "foo=1", "T_hop", "W_ici=inf", "W_ici=nan", "W_ici=1/2"]
TOPOLOGIES = ["Y=ring", "X=line", "X=switch", "X=one-way-ring", "X=torus", "X=RING", "data=line"]
GARBAGE_TOPOLOGIES = ["", "Q=ring", "X", "X=ring,X=line", "Y=?", "X=hypercube", "X=1"]
MODELS = ["book", "ring", "RING", " book "]
GARBAGE_MODELS = ["", "tree", "x", "-", "book,ring"]
MESH_EXTRAS = ["X=0", "X=3", "X=1", "Z=1", "Y=16", "X=2**3", "X=8e0", "X=?", "X=64,Y=64", "W=2"]
SHAPE_EXTRAS = ["I=?", "I=3", "I=1", "J=2^64", "K=1e20", "F=3", "Q=1", "I=0", "I=-8"]

# Numbers at the edges: long digit strings and large exponents (bounded so a run stays fast).
huge_digits = st.one_of(st.integers(1, 40), st.integers(2000, 5000)).map(lambda n: "9" * n)
exponent = st.one_of(st.integers(-40, 40), st.integers(4000, 6000), st.integers(-6000, -4000)).map(lambda e: f"1e{e}")
number = st.one_of(st.integers(-(2**70), 2**70).map(str), huge_digits, exponent, st.sampled_from(["?", "", "0"]))


def option_value(valid: list[str], garbage: list[str], keys: list[str]) -> st.SearchStrategy[str]:
    """A value for one option: valid, mutated, garbage, key=number, or random text."""
    assignment = st.tuples(st.sampled_from(keys), number).map(lambda kv: f"{kv[0]}={kv[1]}")
    return st.one_of(
        st.sampled_from(valid),
        mutated(valid),
        st.sampled_from(garbage),
        assignment,
        random_text,
    )


HW_KEYS = ["W_hbm", "W_ici", "W_link", "W_nvlink", "W_dcn", "T_hop", "C", "C_8bit", "M_hbm", "W_foo"]
OPTIONS = {
    "--dtype": (DTYPES, GARBAGE_DTYPES, ["bf16"]),
    "--hw": (HW_NAMES, GARBAGE_HW, ["tpu"]),
    "--hw-set": (HW_SETS, GARBAGE_HW_SETS, HW_KEYS),
    "--topology": (TOPOLOGIES, GARBAGE_TOPOLOGIES, ["X", "Y", "Z"]),
    "--model": (MODELS, GARBAGE_MODELS, ["book"]),
}


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """A command line: a valid scenario plus options, clean or with its parts mutated or garbled.

    About half the command lines are clean (every part from the valid pools), so
    the commands run to the end often; the rest garble each part independently.
    """
    if draw(st.integers(0, 19)) == 0:  # now and then, an argv of pure noise
        return draw(st.lists(st.one_of(random_text, st.sampled_from(GARBAGE_COMMANDS + list(OPTIONS))), max_size=6))
    clean = draw(st.booleans())

    def value(valid: list[str], garbage: list[str], keys: list[str]) -> str:
        if clean or draw(st.booleans()):
            return draw(st.sampled_from(valid))
        return draw(option_value(valid, garbage, keys))

    kind, text, mesh, shape = draw(st.sampled_from(SCENARIOS))
    argv = [value([kind], COMMANDS + GARBAGE_COMMANDS, ["shard"])]
    if argv[0] == "hardware":
        if draw(st.booleans()):
            argv.append(value(HW_NAMES, GARBAGE_HW, ["tpu"]))
    elif clean or draw(st.integers(0, 9)):
        argv.append(value([text], [*VALID_ARRAYS, *VALID_COLLECTIVES, ""], ["A"]))

    options: list[list[str]] = []
    if draw(st.integers(0, 4)):
        extra = "" if clean else draw(st.one_of(st.just(""), st.sampled_from(MESH_EXTRAS)))
        options.append(["--mesh", value([",".join(x for x in (mesh, extra) if x)], [""], ["X", "Y", "Z"])])
    if draw(st.integers(0, 4)):
        extra = "" if clean else draw(st.one_of(st.just(""), st.sampled_from(SHAPE_EXTRAS)))
        keys = ["I", "J", "K", "E", "F", "B", "D"]
        options.append(["--shape", value([",".join(x for x in (shape, extra) if x)], [""], keys)])
    for name in draw(st.lists(st.sampled_from(sorted(OPTIONS)), unique=True, max_size=3)):
        options.append([name, value(*OPTIONS[name])])
    if draw(st.integers(0, 2)) == 0:
        options.append(["--json"])
    if not clean and options and draw(st.integers(0, 9)) == 0:  # an option with its value missing
        options[-1] = options[-1][:1]
    for opt in draw(st.permutations(options)):
        argv.extend(opt)
    return argv


_CLI_FUZZ = dict(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


@settings(max_examples=200, **_CLI_FUZZ)
@given(argv=command_lines())
def test_cli_never_raises(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(argv, capsys)


@pytest.mark.slow(reason="1,000 generated command lines: about 20 s (200 in the default run)")
@settings(max_examples=1000, **_CLI_FUZZ)
@given(argv=command_lines())
def test_cli_never_raises_in_1000_command_lines(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(argv, capsys)


# -- regressions: specific malformed input -----------------------------------------------

# (id, call, exception class, text the message must quote)
MALFORMED = [
    # brackets that do not balance
    ("unclosed-bracket", lambda: parse("A[I_X, J"), NotationError, "'A[I_X, J'"),
    ("stray-closer", lambda: parse("A[I_X, J]]"), NotationError, "'A[I_X, J]]'"),
    ("mismatched-closer", lambda: parse("A[I_X, J)"), NotationError, "'A[I_X, J)'"),
    ("unclosed-axes-brace", lambda: parse("A[I_{X, J]"), NotationError, "'A[I_{X, J]'"),
    ("unclosed-latex-wrapper", lambda: parse(r"\mathbf{A[I_X, J]"), NotationError, r"'\mathbf{A[I_X, J]'"),
    ("unclosed-operand", lambda: parse("AllGather_X(A[I_X, J]"), NotationError, "'AllGather_X(A[I_X, J]'"),
    ("lone-backslash", lambda: parse("A[I_X, J]\\"), NotationError, "'A[I_X, J]\\'"),
    # empty dims and empty axis lists
    ("no-dims", lambda: parse("A[]"), NotationError, "'A[]'"),
    ("empty-dim-between", lambda: parse("A[I,,J]"), NotationError, "'A[I,,J]'"),
    ("empty-dim-last", lambda: parse("A[I, ]"), NotationError, "'A[I, ]'"),
    ("empty-dim-first", lambda: parse_array("A[, J]"), NotationError, "'A[, J]'"),
    ("no-axes-after-underscore", lambda: parse("A[I_, J]"), NotationError, "'A[I_, J]'"),
    ("empty-braced-axes", lambda: parse("A[I_{}, J]"), NotationError, "'A[I_{}, J]'"),
    ("empty-unreduced", lambda: parse("A[I, J]{U_}"), NotationError, "'A[I, J]{U_}'"),
    # sharding rules that need no mesh
    ("axis-shards-two-dims", lambda: parse("A[I_X, J_X]"), ShardingError, "'A[I_X, J_X]'"),
    ("axis-shards-two-dims-latex", lambda: parse(r"\mathbf{A}[I_{X}, J_{X}]"), ShardingError, "J_{X}"),
    ("axis-twice-in-one-dim", lambda: parse("A[I_XX]"), ShardingError, "'A[I_XX]'"),
    ("sharded-and-unreduced", lambda: parse("A[I_X]{U_X}"), ShardingError, "'A[I_X]{U_X}'"),
    ("dim-twice", lambda: parse("A[I, I]"), NotationError, "'A[I, I]'"),
    ("gather-an-unsharded-axis", lambda: parse("AllGather_Y(A[I_X, J])"), CollectiveError, "'AllGather_Y(A[I_X, J])'"),
    ("wrong-stated-result", lambda: parse("AllGather_X(A[I_X, J]) -> A[I_X, J]"), CollectiveError, "-> A[I_X, J]'"),
    ("collective-as-array", lambda: parse_array("AllGather_X(A[I_X, J])"), NotationError, "'AllGather_X(A[I_X, J])'"),
    ("array-as-collective", lambda: parse_collective("A[I_X, J]"), NotationError, "'A[I_X, J]'"),
    # an axis the mesh lacks
    ("unknown-axis-place", lambda: place("A[I_W, J]", "X=8,Y=2"), UnknownAxisError, "'A[I_W, J]'"),
    (
        "unknown-axis-cost",
        lambda: parse_collective("AllGather_X(A[I_X, J])").cost("Y=8"),
        UnknownAxisError,
        "'AllGather_X(A[I_X, J]) -> A[I, J]'",
    ),
    # sizes that do not divide
    ("non-dividing-place", lambda: place("A[I_XY, J]", "X=8,Y=2", "I=24"), DivisibilityError, "'A[I_XY, J]'"),
    (
        "non-dividing-cost",
        lambda: parse_collective("AllGather_X(A[I_X, J])").cost("X=8", "I=12"),
        DivisibilityError,
        "'A[I_X, J]'",
    ),
    # malformed meshes and shapes
    ("mesh-zero", lambda: Mesh("X=0"), MeshError, "'X=0'"),
    ("mesh-not-a-number", lambda: Mesh("X=8,Y=two"), MeshError, "'X=8,Y=two'"),
    ("mesh-backwards", lambda: Mesh("8=X"), MeshError, "'8=X'"),
    ("mesh-empty-entry", lambda: Mesh("X=8,,Y=2"), MeshError, "'X=8,,Y=2'"),
    ("mesh-capital-run", lambda: Mesh("DP=8"), MeshError, "'DP'"),
    ("shape-zero", lambda: resolve_shape("I=0", ("I",), context="A[I]"), ShapeError, "'I=0'"),
    ("shape-fraction", lambda: place("A[I_X, J]", "X=2", "I=1.5"), ShapeError, "'I=1.5'"),
    ("shape-twice", lambda: place("A[I_X, J]", "X=2", "I=2,I=4"), ShapeError, "'I=2,I=4'"),
    ("shape-unknown-dim", lambda: place("A[I_X, J]", "X=2", "K=8"), ShapeError, "'A[I_X, J]'"),
    # unknown names
    ("unknown-dtype", lambda: place("A[I_X, J]", "X=8", dtype="fp12"), UnknownDtypeError, "'fp12'"),
    (
        "unknown-dtype-cost",
        lambda: parse_collective("AllGather_X(A[I_X, J])").cost(dtype="bf17"),
        UnknownDtypeError,
        "'bf17'",
    ),
    ("unknown-hardware", lambda: hardware("tpu-v9"), UnknownHardwareError, "'tpu-v9'"),
    (
        "unknown-hardware-cost",
        lambda: parse_collective("AllGather_X(A[I_X, J])").cost(hardware="tpu-v9"),
        UnknownHardwareError,
        "'tpu-v9'",
    ),
    (
        "unknown-model",
        lambda: parse_collective("AllGather_X(A[I_X, J])").cost(model="tree"),
        UnknownModelError,
        "'tree'",
    ),
]


@pytest.mark.parametrize(("call", "cls", "quoted"), [row[1:] for row in MALFORMED], ids=[row[0] for row in MALFORMED])
def test_malformed_input_raises_its_error(call, cls: type[SymshardError], quoted: str) -> None:
    with pytest.raises(SymshardError) as info:
        call()
    assert info.type is cls, f"expected {cls.__name__}, got {info.type.__name__}: {info.value}"
    assert quoted in str(info.value)
    assert quoted in info.value.one_line()


def test_lookup_errors_are_also_lookup_errors() -> None:
    """Unknown names refine LookupError, so generic ``except LookupError`` code keeps working."""
    for call in (lambda: hardware("tpu-v9"), lambda: place("A[I_W, J]", "X=8")):
        with pytest.raises(LookupError):
            call()


# (id, argv, text stderr must quote); each must exit 2 with one line on stderr.
BAD_COMMAND_LINES = [
    ("axis-shards-two-dims", ["shard", "A[I_X, J_X]"], "'A[I_X, J_X]'"),
    ("unbalanced", ["collective", "AllGather_X(A[I_X, J]"], "'AllGather_X(A[I_X, J]'"),
    ("unknown-axis", ["shard", "A[I_W, J]", "--mesh", "X=8"], "'A[I_W, J]'"),
    (
        "non-dividing",
        ["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--shape", "I=24"],
        "does not split evenly",
    ),
    ("unknown-dtype", ["collective", "AllGather_X(A[I_X, J])", "--dtype", "fp12"], "'fp12'"),
    ("unknown-hardware", ["collective", "AllGather_X(A[I_X, J])", "--hw", "tpu-v9"], "'tpu-v9'"),
    ("unknown-hardware-command", ["hardware", "tpu-v9"], "'tpu-v9'"),
    ("unknown-model", ["collective", "AllGather_X(A[I_X, J])", "--model", "tree"], "'tree'"),
    ("unknown-constant", ["shard", "A[I_X]", "--hw-set", "W_foo=1"], "'W_foo'"),
    ("constant-not-positive", ["shard", "A[I_X]", "--hw-set", "W_hbm=0"], "W_hbm"),
    ("unknown-topology", ["collective", "AllGather_X(A[I_X])", "--topology", "X=hypercube"], "'hypercube'"),
    ("unknown-command", ["bogus"], "bogus"),
    ("missing-option-value", ["shard", "A[I_X]", "--mesh"], "--mesh"),
    ("multi-line-input", ["shard", "A[I_X,\nJ_X]"], "mesh axis X shards both"),
]


@pytest.mark.parametrize(
    ("argv", "quoted"), [row[1:] for row in BAD_COMMAND_LINES], ids=[row[0] for row in BAD_COMMAND_LINES]
)
def test_cli_bad_input_exits_2(argv: list[str], quoted: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert quoted in err


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["--version"],
        ["hardware"],
        ["hardware", "--json"],
        ["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--shape", "I=1024,J=4096", "--json"],
        ["collective", "AllGather_Y([E_Y, F])", "--mesh", "X=8,Y=4", "--shape", "E=2048,F=8192", "--hw", "v5e"],
    ],
)
def test_cli_good_input_exits_0(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(argv, capsys)
    assert code == 0
    assert out


# -- regressions: inputs that once escaped as non-symshard errors ------------------------
# Inputs that once crashed the library; each must keep raising its own error class.


def test_huge_hardware_constant_is_a_symshard_error_or_accepted() -> None:
    """``with_constants`` turns a huge value into a Rational whose repr exceeds Python's int-print limit."""
    try:
        chip = hardware("tpu-v5e").with_constants(W_hbm="1e5000")
    except SymshardError:
        return
    assert chip.hbm_bandwidth is not None and chip.hbm_bandwidth > 0


@pytest.mark.parametrize("value", ["W_hbm=1e5000", "W_ici=1e5000", "T_hop=1e-5000"])
def test_cli_huge_hardware_constant(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(["collective", "AllGather_X(A[I_X, J])", "--mesh", "X=2", "--shape", "I=2,J=2", "--hw-set", value], capsys)


def test_cli_huge_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    """Each size is below Python's 4300-digit print limit; their product is not."""
    big = "9" * 3000
    run_cli(["shard", "A[I, J]", "--shape", f"I={big},J={big}"], capsys)


@pytest.mark.parametrize("separator", ["\r", "\r\n", "\v", "\u2028"])
def test_cli_error_stays_on_one_line(separator: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Input echoed in the message must not break the one-line error (only '\\n' is flattened today)."""
    run_cli(["shard", f"A[I_X,{separator}J_X]"], capsys)

"""The ``symshard`` command's argument parser: every command, its options, its help and its examples.

The parser names each command's function by a key of :data:`symshard.cli.commands.COMMANDS` (its
``run`` default), so that the parser imports no command and the commands (``completion`` and ``site``
need the parser) can import it. argparse's own words stay messages while it parses
(:func:`argparse_words`), so its errors are said in the reader's language.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from .. import __version__
from ..errors import UsageError
from ..i18n import ENVIRONMENT
from ..messages import Message, PercentMessage, say


class _ArgparseMsgid(Message):
    """One of argparse's own gettext msgids, a message to say in any language (under the context
    ``argparse``); filled in with ``%``, it stays one."""

    def __new__(cls, msgid: str) -> _ArgparseMsgid:
        return super().__new__(cls, msgid, (), "argparse")  # type: ignore[return-value]

    @staticmethod
    def format_with(template: str, values: tuple[tuple[str, object], ...]) -> str:
        return template  # nothing to fill in until `%`

    def __reduce__(self) -> tuple:  # type: ignore[type-arg]
        return (_ArgparseMsgid, (self.template,))

    def __mod__(self, args: object) -> PercentMessage:  # type: ignore[override]
        return PercentMessage(self.template, (("args", args),), "argparse")


@contextmanager
def argparse_words() -> Iterator[None]:
    """argparse's messages kept as messages while it parses: its words are gettext msgids (in
    ``%`` syntax), which the catalogues translate under the context ``argparse``."""
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    argparse._ = _ArgparseMsgid  # type: ignore[attr-defined]
    argparse.ngettext = lambda one, many, n: _ArgparseMsgid(one if n == 1 else many)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own words (third-party English) are kept as they come
        raise UsageError(message, hint=say("see '{command}'", command=f"{self.prog} --help"))


# -- shared options -----------------------------------------------------------------------


def _add_sizes(
    p: argparse.ArgumentParser,
    mesh_help: str = "mesh axes and sizes (default: symbolic, from the notation)",
    shape_example: str = "I=1024,J=4096",
) -> None:
    p.add_argument("--mesh", metavar="X=8,Y=2", help=mesh_help)
    p.add_argument(
        "--shape", metavar=shape_example,
        help="dim sizes (dims left out stay symbolic; sizes of dims the command does not use are set aside, with a note)",
    )  # fmt: skip
    p.add_argument("--strict", action="store_true", help="refuse a --shape that names a dim the command does not use")
    p.add_argument("--dtype", default="bf16", help="element type: bf16 (default), fp32, fp8, int8, int4, ...")
    p.add_argument(
        "--hw", metavar="CHIP", help="hardware preset, e.g. tpu-v5e, tpu-v5p, h100 (see 'symshard hardware')"
    )
    p.add_argument(
        "--hw-set",
        metavar="K=V,...",
        help="override or supply constants, e.g. W_hbm=3.4e12,T_hop=1e-6 (C, W_hbm, W_ici, W_nvlink, W_dcn, T_hop)",
    )
    p.add_argument(
        "--topology",
        metavar="Y=ring,...",
        help="rewire axes: ring, one-way-ring, line or switch (default: the chip's rules, else ring)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    _add_limits(p)


_SITE_URL_HELP = (
    "where the site will be published, for canonical links and the sitemap (default $SYMSHARD_SITE_URL,"
    " else http://127.0.0.1:8000/, where 'symshard site serve' serves it)"
)
_FORCE_HELP = (
    "write into a folder that holds files symshard did not write (they are never deleted or overwritten)"
    " and over symshard's own files edited since"
)
_LANG_HELP = f"language of the text: en (default) or zh; the environment variable {ENVIRONMENT} sets the default"
_PROBLEM_LANG_HELP = (
    f"language of the text (default en, or ${ENVIRONMENT}); 'symshard problems list --json' gives each family's"
    " languages"
)


def _add_lang(p: argparse.ArgumentParser, help: str = _LANG_HELP) -> None:
    p.add_argument("--lang", metavar="LANG", help=help)


def _add_budget(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--time-limit", metavar="SECONDS",
        help="stop a variant whose drawing and rendering take longer (default 4 s, or $SYMSHARD_TIME_LIMIT); the "
        "command itself gets a minute more than its variants together",
    )  # fmt: skip
    p.add_argument(
        "--memory-limit", metavar="SIZE",
        help="stop a variant that needs more memory, e.g. 1GiB (default 512 MiB, or $SYMSHARD_MEMORY_LIMIT); the "
        "command itself may take four times as much, and at least 2 GiB",
    )  # fmt: skip


def _add_limits(p: argparse.ArgumentParser, seconds: str = "60 s", memory: str = "2 GiB") -> None:
    """Every command's budget (:mod:`symshard.cli.budget`); the problem commands' is :func:`_add_budget`."""
    p.add_argument(
        "--time-limit", metavar="SECONDS",
        help=f"stop the command when it runs longer, e.g. 300 or '300 s' (default {seconds}, or $SYMSHARD_TIME_LIMIT)",
    )  # fmt: skip
    p.add_argument(
        "--memory-limit", metavar="SIZE",
        help=f"stop the command when it needs more memory than this on top of what it starts with, e.g. 4GiB "
        f"(default {memory}, or $SYMSHARD_MEMORY_LIMIT)",
    )  # fmt: skip


_MODEL_HELP = (
    "collective cost model: book or ring (default: the one a calibrated hardware file was fitted with, else book)"
)


def _add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help=_MODEL_HELP)
    _add_outer(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--overlap", action="store_true", help="time = max(T_math, T_comms) (default)")
    group.add_argument("--serial", action="store_true", help="time = T_math + T_comms")
    _add_comm_overlap(p)


def _add_outer(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--outer",
        action="store_true",
        help="accept operands that share no dim (an outer product); without it such a product is refused as a typo",
    )


def _add_no_hbm(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-hbm",
        action="store_true",
        help="leave T_hbm (the local product reading and writing HBM) out of each strategy's time, as the "
        "chapter reasons; matmul and compare number the strategies alike for the same options",
    )


def _add_comm_overlap(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--comm-overlap",
        default="axes",
        metavar="axes|none",
        help="how collectives add up into T_comms: axes (default, the book's: collectives on disjoint links run "
        "at the same time) or none (one after another)",
    )


# -- the parser ---------------------------------------------------------------------------------


def argument_parser() -> argparse.ArgumentParser:
    """The ``symshard`` command's argument parser, every subcommand with its help."""
    parser = ArgumentParser(
        prog="symshard",
        description="Exact, symbolic costs of sharded arrays, collectives and matmuls.",
    )
    parser.add_argument("--version", action="version", version=f"symshard {__version__}")
    parser.add_argument(
        "--lang",
        dest="global_lang",
        metavar="LANG",
        help=f"language of answers and errors: en (default) or zh; also after the command, or set {ENVIRONMENT}",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)

    p = sub.add_parser("shard", help="what each device holds of a sharded array")
    p.add_argument("array", help="e.g. 'A[I_XY, J]'")
    _add_sizes(p)
    p.set_defaults(run="shard")

    p = sub.add_parser("collective", help="what a collective produces and costs")
    p.add_argument("collective", help="e.g. 'AllGather_Y(A[E_Y, F])'")
    _add_sizes(p)
    p.add_argument("--model", help=_MODEL_HELP)
    p.set_defaults(run="collective")

    p = sub.add_parser(
        "matmul",
        help="the case and the costed strategies of a sharded matmul that can win",
        description="List the strategies of a sharded matmul that can win somewhere (with numbers: the fastest, "
        "then the fastest under each smaller memory limit; with symbols: those no other is at least as good as "
        "everywhere) and the chapter's rule, each costed, with why it is listed. --all lists every valid strategy.",
    )
    p.add_argument("matmul", help="e.g. 'X[B, D] · Y[D_X, F] -> Z[B, F]'")
    _add_sizes(p)
    _add_plan_options(p)
    _add_no_hbm(p)
    p.add_argument(
        "--all", dest="every", action="store_true", help="list every valid strategy, not only those that can win"
    )
    p.add_argument("--top", type=int, default=10, help="strategies to print (default 10); --json has them all")
    p.add_argument(
        "--split",
        metavar="X=2x2",
        help="also move data over parts of a mesh axis, as XLA can: X=2x2 plans with X as X1=2 (major) and "
        "X2=2 (minor), the same devices",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="say under each step what moves over which axis, and why (--json always has it)",
    )
    p.set_defaults(run="matmul")

    p = sub.add_parser("verify", help="run a matmul's strategies in JAX and compare with XLA's plan (jax extra)")
    p.add_argument("matmul", help="e.g. 'A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]'")
    p.add_argument("--mesh", metavar="X=4,Y=2", help="mesh axes and sizes (JAX needs that many devices)")
    p.add_argument("--shape", metavar="I=64,J=64,K=64", help="every dim's size")
    p.add_argument("--dtype", default="fp32", help="fp32 (default) or bf16 (on CPU XLA runs bf16 dots in f32)")
    p.add_argument("--hw", metavar="CHIP", default="tpu-v5e", help="chip whose constants rank the strategies")
    p.add_argument("--model", help=_MODEL_HELP)
    _add_outer(p)
    p.add_argument(
        "--run",
        dest="execute",
        default="auto",
        choices=["auto", "all", "best", "none"],
        help="strategies to run in shard_map: auto (the default: every one when there are at most 100, else a "
        "seeded sample of 100), all, best or none",
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run N of all strategies: the best, the one matching XLA's plan, the rest drawn with --seed "
        "(with --run auto or all)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of --sample's draw (default 0)")
    p.add_argument(
        "--time-limit",
        metavar="SECONDS",
        help="the whole check's time (default 600 s, or $SYMSHARD_TIME_LIMIT): searches for XLA's plan and runs of "
        "strategies stop when it is up, and the report says which search stopped and how many runs were left; what "
        "cannot stop midway (an XLA compile) is stopped a minute later",
    )
    p.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="stop the check when its resident memory grows past this, e.g. 32GiB (default 16 GiB, or "
        "$SYMSHARD_MEMORY_LIMIT; resident memory, as JAX reserves address space up front)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run="verify")

    p = sub.add_parser("compare", help="when each strategy is communication- or memory-bound, and which wins when")
    p.add_argument("matmul", help="e.g. 'X[B, D] · Y[D_X, F] -> Z[B, F]'")
    p.add_argument("--solve-for", required=True, metavar="SYMBOL", help="a dim (B), an axis (X) or a constant")
    p.add_argument(
        "--strategies",
        metavar="1,2",
        help="strategy numbers to compare, or 'all' (default: the plan's, those that can win somewhere)",
    )
    p.add_argument(
        "--map",
        metavar="X,Y",
        help="also draw the regime map over two symbols left symbolic (e.g. B,D): an SVG, log axes, "
        "each point coloured by the fastest strategy, each boundary with its formula",
    )
    p.add_argument(
        "--map-file",
        metavar="FILE",
        default="regime-map.svg",
        help="where --map writes (default regime-map.svg; a file symshard did not write is never replaced)",
    )
    p.add_argument(
        "--pairs",
        action="store_true",
        help="also print when each strategy beats each of its neighbours, each strategy's regime and why the "
        "others never win (the short answer leaves out what does not fit a screen; --json has it all)",
    )
    p.add_argument("--force", action="store_true", help="replace a map symshard wrote that was edited since")
    _add_sizes(p)
    _add_plan_options(p)
    _add_no_hbm(p)
    p.set_defaults(run="compare")

    p = sub.add_parser(
        "best-sharding",
        help="how to shard operands and result to fit in memory and run fastest (exit 1 if nothing fits)",
        description="Search the shardings of a matmul or a chain of them for the fastest that fits in --memory. "
        "Exit 0 with the answer, 1 when nothing fits (the leanest candidate is shown), 2 on bad input.",
    )
    p.add_argument("matmul", nargs="+", help="one matmul, or a chain whose results feed the next")
    _add_sizes(p)
    _add_plan_options(p)
    p.add_argument("--memory", metavar="300MB", help="bytes available per device (e.g. 300MB, 16GiB, 3e8)")
    p.add_argument("--out", default="any", help="required sharding of the final result, or 'any' (default)")
    p.add_argument(
        "--fixed", action="append", metavar="ARRAY", help="an operand whose sharding is given, e.g. 'x[B_X, D]'"
    )
    p.set_defaults(run="best")

    p = sub.add_parser(
        "layer",
        help="an MLP block under a parallelism scheme: costs, memory, compute-bound condition",
        description="The MLP block In[B, D] · W_in[D, F] -> Tmp[B, F], Tmp · W_out[F, D] -> Out[B, D] under a "
        "parallelism scheme: its collectives step by step, T_math and T_comms per phase, memory per device, and "
        "when it is compute-bound.",
        epilog="examples:\n  symshard layer --scheme fsdp --hw tpu-v5p\n"
        "  symshard layer --scheme fsdp+tp --mesh X=8,Y=4 --shape B=4096,D=8192,F=32768 --hw tpu-v5p\n"
        "  symshard layer --scheme tp --mesh Y=8 --hw h100 --solve-for F",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--scheme", required=True, metavar="SCHEME", help="dp, fsdp, tp or fsdp+tp")
    _add_sizes(
        p, mesh_help="sizes of the scheme's axes: X (data, FSDP) and Y (tensor) (default: symbolic)",
        shape_example="B=4096,D=8192,F=32768",
    )  # fmt: skip
    p.add_argument("--spread", metavar="X=2,Y=1", help="physical axes each logical axis spans (default 1; M_X)")
    p.add_argument("--solve-for", metavar="SYMBOL", help="B_chip (default; tp: Y), B, D, F, X, Y, M_X, ...")
    p.add_argument("--serve", action="store_true", help="the forward pass only (default: training)")
    _add_comm_overlap(p)
    p.set_defaults(run="layer")

    p = sub.add_parser(
        "calibrate",
        help="fit a GPU network's latency and bandwidth to nccl-tests output, or a chip's rates to measurements (--chip)",
    )
    p.add_argument("file", nargs="?", help="nccl-tests output: the text all_reduce_perf prints, or its JSON file")
    p.add_argument(
        "--chip", metavar="FILE.csv",
        help="instead: fit one chip's attained FLOP/s, HBM bandwidth and fixed cost per kernel to the CSV that "
        "'symshard measure' writes (--hw names the chip measured)",
    )  # fmt: skip
    p.add_argument("--device-name", metavar="NAME", help="--chip: the device measured, recorded in the file")
    p.add_argument(
        "--method", metavar="TEXT",
        help="--chip: how the times were taken, recorded in the file (e.g. 'torch CUDA events, median of 30'); "
        "'symshard measure' prints its own",
    )  # fmt: skip
    p.add_argument(
        "--date", metavar="YYYY-MM-DD", help="--chip: the measurement's date (default: $SOURCE_DATE_EPOCH's)"
    )
    p.add_argument("--collective", help="allreduce, allgather or reducescatter (default: what the file says)")
    p.add_argument("--ranks", type=int, help="GPUs in the run (default: the file's '# Rank' lines)")
    p.add_argument("--per-node", type=int, help="GPUs per node (default: from the file's host names)")
    p.add_argument(
        "--hw", metavar="CHIP",
        help="preset (or hardware file) whose other figures are kept (default a100; with --chip, the chip measured)",
    )  # fmt: skip
    p.add_argument("--level", metavar="LEVEL", help="the level the bandwidth is fitted to (default: the outermost)")
    p.add_argument("--min-bytes", type=int, metavar="B", help="fit only rows of at least this many bytes")
    p.add_argument("--max-bytes", type=int, metavar="B", help="fit only rows of at most this many bytes")
    p.add_argument("--in-place", action="store_true", help="fit the in-place times (default: out-of-place)")
    p.add_argument("--out", default="calibrated.toml", metavar="FILE", help="the hardware file to write")
    p.add_argument("--name", help="the calibrated hardware's name (default: the preset's, with -calibrated)")
    p.add_argument(
        "--force", action="store_true",
        help="replace --out even if it was edited since symshard wrote it (a file symshard did not write is never replaced)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    _add_limits(p)
    p.set_defaults(run="calibrate")

    p = sub.add_parser(
        "measure",
        help="time matmuls, copies and adds on the local accelerator through JAX (jax extra), for calibrate --chip",
        description="Time a short sweep of microbenchmarks on JAX's default device (a GPU or TPU, else the CPU): "
        "matmuls of many shapes in bf16, fp16, fp32 (and int8 where it runs), copies and elementwise adds of "
        "1 MiB to a few GiB; write one row per kernel: op,dtype,m,k,n,bytes,flops,median_s,best_s.",
    )
    p.add_argument("--out", required=True, metavar="FILE.csv", help="the CSV to write (a new file)")
    p.add_argument("--quick", action="store_true", help="a tiny sweep (seconds, on a CPU too)")
    p.add_argument("--dtypes", metavar="bf16,fp32", help="what to measure (default bf16,fp16,fp32,int8)")
    p.add_argument("--max-bytes", metavar="BYTES", help="the most one kernel may move, e.g. 1GiB (default: a third "
                   "of the device's memory; 256 MiB on a CPU)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    p.set_defaults(run="measure")

    p = sub.add_parser("model", help="a whole model: parameters, training time and memory, serving rooflines")
    p.add_argument("name", nargs="?", help="a preset (llama3-70b, gemma-7b, ...); none lists them")
    p.add_argument("--list", action="store_true", help="list the presets")
    p.add_argument("--sizes", metavar="L=48,F=...", help="override sizes: L, D, F, N, K, H, V, E, k")
    p.add_argument("--train", action="store_true", help="training: time at an MFU, memory, compute-bound schemes")
    p.add_argument("--serve", action="store_true", help="serving: KV cache, largest batch, decode roofline, TP limits")
    p.add_argument("--tokens", metavar="15e12", help="tokens of the training run")
    p.add_argument("--chips", metavar="N", help="chips (training: on a GPU the rooflines cross the network's levels "
                   "for that many; serving: on one axis, default one chip)")  # fmt: skip
    p.add_argument("--mfu", metavar="0.4", help="the fraction of peak FLOP/s training reaches")
    p.add_argument("--batch", metavar="B", help="tokens per training step, or sequences decoding together")
    p.add_argument("--context", metavar="T", help="tokens of context per sequence (serving)")
    p.add_argument("--mesh", metavar="X=4,Y=2", help="the slice serving the model (its axes all split the model)")
    p.add_argument("--policy", default="mlp", help="activation checkpoints: mlp (default), layer, none, or a count")
    p.add_argument("--optimizer", default="adam", help="adam (default, 8 B/param), adam-master, sgd-momentum, sgd")
    p.add_argument("--gradients", action="store_true", help="count the gradients as kept (the chapter does not)")
    p.add_argument("--comm-overlap", "--overlap", dest="overlap", default="axes", metavar="axes|none",
                   help="how collectives on different mesh axes add up: axes (overlap, default) or none (serial)")  # fmt: skip
    p.add_argument("--dtype", default="bf16", help="weights' dtype: bf16 (default), int8, fp8, ...")
    p.add_argument("--kv-dtype", help="the KV cache's dtype (default: the weights')")
    p.add_argument("--kv-shard", default="heads", metavar="heads|batch|sequence",
                   help="serving: how the KV cache is split over the chips (default heads)")  # fmt: skip
    p.add_argument("--decode", default="overlap", metavar="overlap|book",
                   help="serving: a decode step is max(T_hbm, T_math, T_comms) (overlap, default) or the book's "
                   "T_kv + max(T_weights, T_math, T_comms)")  # fmt: skip
    p.add_argument("--stages", metavar="S", help="training: pipeline stages (adds pipeline+dp and pipeline+fsdp)")
    p.add_argument("--microbatches", metavar="M", help="training: microbatches per step (pipeline+fsdp)")
    p.add_argument("--hw", metavar="CHIP", help="hardware preset, e.g. tpu-v5p, tpu-v5e, h100")
    p.add_argument("--hw-set", metavar="K=V,...", help="override or supply constants, e.g. W_hbm=3.4e12")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    _add_limits(p)
    p.set_defaults(run="model")

    p = sub.add_parser(
        "transfer",
        help="bytes moved without a collective: chip to chip, many to one, host to chip; a slice's totals",
        description="Point to point inside a slice (--from, --to), every chip to one (--gather-to), the hosts to "
        "the chips over PCIe (--host), or what a slice adds up to (--totals), as the book's TPU chapter prices them.",
    )
    p.add_argument("--hw", metavar="CHIP", help="hardware preset, e.g. tpu-v5e, tpu-v5p (see 'symshard hardware')")
    p.add_argument("--hw-set", metavar="K=V,...", help="override or supply constants, e.g. T_hop=2e-6,W_ici=9e10")
    p.add_argument("--slice", metavar="4x4", help="the slice's shape: 4x4, 4x4x4, 16x20x28")
    p.add_argument("--from", dest="source", metavar="0,0", help="the chip sending (one coordinate per axis)")
    p.add_argument("--to", dest="target", metavar="3,3", help="the chip receiving")
    p.add_argument("--gather-to", metavar="0,0,0", help="every other chip of the slice sends --bytes to this chip")
    p.add_argument("--host", action="store_true", help="the hosts send --bytes to the chips over PCIe, split evenly")
    p.add_argument("--totals", action="store_true", help="what the slice adds up to: FLOP/s, HBM, hosts, DCN")
    p.add_argument("--bytes", metavar="1GB", help="bytes to move: 1GB, 64MiB, 16GiB, 1e9 (from each sender)")
    p.add_argument(
        "--chips", metavar="N", help="chips (--host: how many share the bytes; --totals: instead of --slice)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    _add_limits(p)
    p.set_defaults(run="transfer")

    p = sub.add_parser("problems", help="worked problems: list, show, check, generate, schema")
    psub = p.add_subparsers(dest="problems_command", metavar="ACTION", parser_class=ArgumentParser, required=True)
    q = psub.add_parser("list", help="the problem families")
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(q)
    _add_limits(q)
    q.set_defaults(run="problems_list")
    q = psub.add_parser("show", help="one problem, with hints, solution and answers")
    q.add_argument("family", help="a family name (see 'symshard problems list')")
    q.add_argument("--seed", type=int, default=0, help="the variant (default 0)")
    _add_lang(q, help=_PROBLEM_LANG_HELP)
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--json", action="store_true", help="print the problem's JSON record")
    _add_budget(q)
    q.set_defaults(run="problems_show")
    q = psub.add_parser(
        "check", help="grade answers to one problem (exit 1 if any is wrong)",
        description="Grade answers to one problem: right within its tolerance, a known mistake (with feedback), "
        "or neither. Exit 0 when every answer is right, 1 otherwise.",
    )  # fmt: skip
    q.add_argument("family", help="a family name (see 'symshard problems list')")
    q.add_argument("answers", nargs="+", metavar="NAME=VALUE", help="e.g. time='5.87 ms' (units optional)")
    q.add_argument("--seed", type=int, default=0, help="the variant (default 0)")
    _add_lang(q, help=_PROBLEM_LANG_HELP)
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_budget(q)
    q.set_defaults(run="problems_check")
    q = psub.add_parser("generate", help="a reproducible problem set with its answer key and exports")
    q.add_argument("--seed", type=int, required=True, help="the set's seed: the same seed gives the same set")
    q.add_argument("--count", type=int, help="how many problems, taken round-robin over the families")
    q.add_argument("--per-family", type=int, help="how many problems of each family")
    q.add_argument("--family", action="append", help="only this family (repeat for several)")
    q.add_argument("--difficulty", action="append", choices=["easy", "medium", "hard"], help="only this difficulty")
    q.add_argument("--out", required=True, metavar="DIR", help="folder to write into")
    q.add_argument(
        "--format", default="all", choices=["md", "json", "moodle", "qti12", "qti21", "pdf", "prairielearn", "all"],
        help="what to write: Markdown, JSON, Moodle XML, QTI 1.2 (Canvas), QTI 2.1, PDF (sheet and key), "
        "PrairieLearn questions, or all of them (default)",
    )  # fmt: skip
    q.add_argument("--title", help="the set's title (default 'Problem set', in the set's language)")
    q.add_argument("--solutions", action="store_true", help="fold the solutions into problems.md too")
    q.add_argument(
        "--variants", type=int, default=1, metavar="N",
        help="export each problem as N variants drawn from the seed, for the platform to give each student one "
        "(a Moodle category, a Canvas question group, a QTI 2.1 section, a PrairieLearn question's variants; "
        "N versions of the PDF sheet and key); default 1",
    )  # fmt: skip
    _add_lang(q, help=_PROBLEM_LANG_HELP)
    q.add_argument("--families", action="append", metavar="DIR", help="also load the families in DIR")
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_budget(q)
    q.set_defaults(run="problems_generate")
    q = psub.add_parser("schema", help="the JSON Schema of problems.json")
    q.add_argument("--json", action="store_true", help="(the output is JSON anyway)")
    _add_limits(q)
    q.set_defaults(run="problems_schema")

    p = sub.add_parser("site", help="the docs site with generated problem sets: build, serve, prepare")
    psub = p.add_subparsers(dest="site_command", metavar="ACTION", parser_class=ArgumentParser, required=True)
    q = psub.add_parser("build", help="build the static site (needs the docs extra)")
    q.add_argument("--out", default="_site", metavar="DIR", help="where the site goes (default _site)")
    q.add_argument("--src", metavar="DIR", help="also keep the generated MkDocs project in DIR")
    q.add_argument("--site-url", metavar="URL", help=_SITE_URL_HELP)
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_limits(q, "600 s", "4 GiB")
    q.set_defaults(run="site_build")
    q = psub.add_parser("serve", help="build the site, then serve it on localhost")
    q.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    q.add_argument("--out", default="_site", metavar="DIR", help="where the site goes (default _site)")
    q.add_argument("--no-build", action="store_true", help="serve what is in --out without building")
    q.add_argument("--site-url", metavar="URL", help=_SITE_URL_HELP)
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    _add_limits(q, "600 s (for the build; serving has no limit)", "4 GiB")
    q.set_defaults(run="site_serve")
    q = psub.add_parser("prepare", help="write the MkDocs project (pages, problem sets, mkdocs.yml) and stop")
    q.add_argument("--out", required=True, metavar="DIR", help="folder for the project")
    q.add_argument("--site-url", metavar="URL", help=_SITE_URL_HELP)
    q.add_argument("--force", action="store_true", help=_FORCE_HELP)
    q.add_argument("--json", action="store_true", help="print one JSON object")
    _add_limits(q, "600 s", "4 GiB")
    q.set_defaults(run="site_prepare")

    p = sub.add_parser("book", help="the chapter's worked answers, recomputed")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_limits(p)
    p.set_defaults(run="book")

    p = sub.add_parser("hardware", help="the hardware presets and their sources")
    p.add_argument("name", nargs="?", help="one preset to show in full")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_lang(p)
    _add_limits(p)
    p.set_defaults(run="hardware")

    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or tcsh)",
        description="Print a script that completes symshard's commands and options in your shell.",
        epilog="install it (each line makes its folder first, so it works on a fresh machine):\n"
        "  bash: mkdir -p ~/.local/share/bash-completion/completions && "
        "symshard completion bash > ~/.local/share/bash-completion/completions/symshard\n"
        "  zsh:  mkdir -p ~/.zfunc && symshard completion zsh > ~/.zfunc/_symshard   "
        "(with fpath+=(~/.zfunc) before compinit)\n"
        "  tcsh: symshard completion tcsh >> ~/.tcshrc",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=["bash", "zsh", "tcsh"], help="the shell")
    _add_limits(p)
    p.set_defaults(run="completion")
    _add_examples(sub, ())
    return parser


EXAMPLES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("shard",): ("symshard shard 'A[I_XY, J]' --mesh X=8,Y=2 --shape I=1024,J=4096 --dtype fp32",),
    ("collective",): (
        "symshard collective 'AllGather_X(A[I_X, J])' --mesh X=16 --shape I=4096,J=8192 --hw tpu-v5e",
        "symshard collective 'AllReduce_X(A[B, F]{U_X})' --mesh X=16 --shape B=1024,F=16384 --hw h100",
    ),
    ("matmul",): (
        "symshard matmul 'X[B, D] · Y[D_X, F] -> Z[B, F]' --mesh X=8 --shape B=1024,D=8192,F=16384 --hw tpu-v5e",
        "symshard matmul 'X[B, S, D_X] · W[D_Y, F_Z] -> Y[B, S, F]' --mesh X=2,Y=4,Z=2 --hw tpu-v5p",
    ),
    ("verify",): ("symshard verify 'A[I_X, J] · B[J, K_Y] -> C[I_X, K_Y]' --mesh X=4,Y=2 --shape I=64,J=64,K=64",),
    ("compare",): (
        "symshard compare 'X[B, D] · Y[D_X, F] -> Z[B, F]' --solve-for B --hw tpu-v5p",
        (
            "symshard compare 'X[B, D] · Y[D_X, F] -> Z[B, F]' --solve-for B --mesh X=8 --shape F=16384 --hw tpu-v5p "
            "--map B,D"
        ),
    ),
    ("best-sharding",): (
        (
            "symshard best-sharding 'x[B, D] · W[D, F] -> y[B, F]' --mesh X=2,Y=2 --shape B=128,D=8192,F=32768 "
            "--hw tpu-v5e --memory 300MB"
        ),
    ),
    ("layer",): (),  # written with its own parser above
    ("calibrate",): (
        (
            "symshard calibrate all_reduce_perf.txt --collective allreduce --ranks 16 --per-node 8 --hw a100 "
            "--out my-cluster.toml"
        ),
        "symshard calibrate --chip chip-h200.csv --hw h200 --device-name 'NVIDIA H200' --out h200-measured.toml",
    ),
    ("measure",): ("symshard measure --quick --out measured.csv",),
    ("model",): (
        "symshard model --list",
        "symshard model llama3-70b --train --chips 8960 --tokens 15e12 --mfu 0.4 --hw tpu-v5p",
        "symshard model llama3-70b --serve --batch 32 --context 8192 --mesh X=4,Y=2 --dtype int8 --hw tpu-v5e",
    ),
    ("transfer",): (
        "symshard transfer --hw tpu-v5e --slice 4x4 --from 0,0 --to 3,3 --bytes 1GB",
        "symshard transfer --hw tpu-v5p --slice 4x4x4 --gather-to 0,0,0 --bytes 64MiB",
        "symshard transfer --hw tpu-v5e --host --bytes 16GiB --chips 8",
        "symshard transfer --hw tpu-v5p --slice 16x20x28 --totals",
    ),
    ("problems", "list"): ("symshard problems list", "symshard problems list --json"),
    ("problems", "show"): (
        "symshard problems show allgather-time --seed 7",
        "symshard problems show allgather-time --seed 7 --lang zh",
    ),
    ("problems", "check"): ("symshard problems check total-memory --seed 3 'total=1 MiB' 'copies=4'",),
    ("problems", "generate"): (
        "symshard problems generate --seed 7 --count 10 --out week3",
        "symshard problems generate --seed 7 --per-family 2 --family allgather-time --lang zh --format moodle --out zh-set",
        "symshard problems generate --seed 7 --count 10 --variants 5 --format moodle --out week3-moodle",
    ),
    ("problems", "schema"): ("symshard problems schema > problems.schema.json",),
    ("site", "build"): (
        "symshard site build",
        "symshard site build --out public --site-url https://example.org/symshard/",
    ),
    ("site", "serve"): ("symshard site serve", "symshard site serve --no-build --port 8001"),
    ("site", "prepare"): ("symshard site prepare --out site-project",),
    ("book",): ("symshard book",),
    ("hardware",): ("symshard hardware", "symshard hardware tpu-v5p"),
    ("completion",): (),  # its install lines are its examples
}
"""A few command lines for each command's --help (every one runs as written: tests/cli/test_cli.py)."""


def _add_examples(sub: argparse._SubParsersAction, path: tuple[str, ...]) -> None:
    for name, parser in sub.choices.items():
        lines = EXAMPLES.get((*path, name), ())
        if lines and parser.epilog is None:
            parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in lines)
            parser.formatter_class = argparse.RawDescriptionHelpFormatter
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _add_examples(action, (*path, name))

"""The ``symshard`` command: a thin layer that reads options, calls the library, prints.

Every command prints a readable answer (the formula, then the number with
units) by default and one JSON object with ``--json``. Bad input prints one
line on stderr and exits with status 2; nothing below the command line prints
its answer.

- this module: :func:`main`, which parses, runs the command and prints its text, its JSON or its error;
- :mod:`~symshard.cli.parser`: the argument parser, every command's options, help and examples;
- :mod:`~symshard.cli.commands`: the table of each command's function (options in, library called, report
  out), which live in :mod:`~symshard.cli.plan_commands`, :mod:`~symshard.cli.machine_commands`,
  :mod:`~symshard.cli.model_commands`, :mod:`~symshard.cli.verify_command` and
  :mod:`~symshard.cli.course_commands`, with what they share in :mod:`~symshard.cli.options` and
  :mod:`~symshard.cli.progress`;
- :mod:`~symshard.cli.budget`: the time and memory every command runs on;
- :mod:`~symshard.cli.words`: the few words the command line says itself.

The words of every report are :mod:`symshard.report`'s.

``--lang zh`` (or ``SYMSHARD_LANG=zh`` in the environment) prints the words in
Simplified Chinese, error messages and hints included; numbers, units, notation,
formulas and collective names are the same in both languages, and ``--json``
keeps its keys (adding ``*_zh`` fields next to the sentences it carries).

Examples:
    >>> main(["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--shape", "I=1024,J=4096",
    ...       "--dtype", "fp32", "--json"])  # doctest: +ELLIPSIS
    {
      "array": "A[I_XY, J]",
    ...
    0
    >>> main(["shard", "A[I_XY, J]", "--mesh", "X=8,Y=2", "--lang", "zh"])
    A[I_XY, J]，网格 X=8,Y=2，bf16
    本地形状      [I/(|X|·|Y|), J] = [I/16, J]
    每设备字节数  2·I·J/(|X|·|Y|) = I·J/8
    总字节数      2·I·J，分布在 16 个设备上
    副本数        1
    HBM 读取时间  I·J/(8·W_hbm)（用 --hw 指定芯片即可得到秒数）
    0
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import SymshardError, UsageError
from ..i18n import LANGUAGES, keyed, language_from, sentence
from ..messages import say
from .budget import limits_for, running
from .checks import check_options
from .commands import COMMANDS
from .parser import EXAMPLES, argparse_words, argument_parser
from .words import ENGLISH
from .words import word as _say

if TYPE_CHECKING:
    from ..site.pages import CommandLine

__all__ = ["ENGLISH", "EXAMPLES", "argument_parser", "command_line", "main"]


def _language_in(argv: Sequence[str]) -> str:
    """The language to print an error in before (or without) a parsed command line."""
    value = None
    for i, token in enumerate(argv):
        if token == "--lang" and i + 1 < len(argv):
            value = argv[i + 1]
        elif token.startswith("--lang="):
            value = token.partition("=")[2]
    try:
        return language_from(value if value in LANGUAGES else None)
    except SymshardError:
        return "en"


def _language(args: argparse.Namespace) -> str:
    """``--lang`` (after or before the command), else ``$SYMSHARD_LANG``, else English.

    A problem command passes its language to the family, which says which languages it has.
    """
    explicit = getattr(args, "lang", None) or getattr(args, "global_lang", None)
    if args.command == "problems":
        from ..problems.texts import shown_language  # the problems' engine (Jinja) only for their commands

        chosen = explicit or language_from(None)
        args.lang = chosen
        return shown_language(chosen)
    return language_from(explicit)


def _command_name(args: argparse.Namespace) -> str:
    """The command as typed: ``matmul``, ``problems generate``."""
    words = [args.command, getattr(args, "problems_command", None), getattr(args, "site_command", None)]
    return " ".join(w for w in words if w)


def _error_line(err: SymshardError, language: str) -> str:
    if language == "en":
        return ENGLISH["error.prefix"] + err.one_line()
    from ..i18n.explain import error_line

    return _say("error.prefix", language) + error_line(err, language)


def _error_json(err: SymshardError, language: str) -> dict:
    """``{"error": {"type", "message", "hint"}}``: the error as ``--json`` prints it."""
    from ..i18n.explain import ENGLISH as WORDS

    message, hint = sentence(err.message, language), sentence(err.hint, language) if err.hint else ""
    if err.text is not None and err.span is not None:
        column = err.span[0] + 1
        if f"'{err.text}'" in err.message:
            message += keyed(WORDS, "error.column", language, column=column)
        else:
            message += keyed(WORDS, "error.column_of", language, column=column, text=err.text)
    return {"error": {"type": type(err).__name__, "message": message, "hint": hint}}


def _as_error(err: BaseException) -> SymshardError:
    """Any failure as a SymshardError with a one-line message and a hint (never a traceback)."""
    if isinstance(err, SymshardError):
        return err
    # the system's or Python's own words (an OSError's strerror, an exception's text) are quoted as they come
    if isinstance(err, OSError):
        why = str(err.strerror or err)
        hint = say("check the path, its permissions and the free disk space")
        if err.filename:
            return UsageError(say("{why}: '{path}'", why=why, path=err.filename), hint=hint)
        return UsageError(why, hint=hint)
    if isinstance(err, (OverflowError, ZeroDivisionError, ArithmeticError)):
        return UsageError(
            say("a number is out of range ({why})", why=str(err)), hint=say("use smaller or non-zero numbers")
        )
    if isinstance(err, RecursionError):
        return UsageError(say("the input nests too deeply to read"), hint=say("write it with less nesting"))
    if isinstance(err, MemoryError):
        return UsageError(say("ran out of memory"), hint=say("ask for something smaller (fewer axes, smaller sizes)"))
    if isinstance(err, UnicodeError):
        return UsageError(
            say("cannot read or write the text: {why}", why=str(err)), hint=say("use UTF-8 text and a UTF-8 terminal")
        )
    if isinstance(err, ValueError) and "null" in str(err):
        return UsageError(say("a path or text holds a NUL character ({why})", why=str(err)), hint=say("remove it"))
    return SymshardError(
        say("internal error: {why}", why=f"{type(err).__name__}: {err}"),
        hint=say(
            "this is a bug in symshard; please report it with the command line (SYMSHARD_DEBUG=1 shows the traceback)"
        ),
    )


def _report(err: BaseException, language: str, as_json: bool) -> int:
    error = _as_error(err)
    try:
        if as_json:
            print(json.dumps(_error_json(error, language), ensure_ascii=False))
            sys.stdout.flush()
        else:
            print(_error_line(error, language), file=sys.stderr)
    except BrokenPipeError:
        pass
    except UnicodeError:  # a terminal that cannot show the text: fall back to escapes
        line = json.dumps(_error_json(error, "en")) if as_json else ENGLISH["error.prefix"] + error.one_line()
        stream = sys.stdout if as_json else sys.stderr
        stream.write(line.encode("ascii", "backslashreplace").decode("ascii") + "\n")
    return 2


def command_line() -> CommandLine:
    """This command as the docs site runs and documents it: :func:`main` and :func:`argument_parser`."""
    from ..site.pages import CommandLine

    return CommandLine(main, argument_parser)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input; 1 for ``problems check`` when an
    answer is wrong and for ``best-sharding`` when nothing fits).

    Every failure is one line on stderr (a JSON error object on stdout with ``--json``) and
    exit status 2; no traceback unless ``$SYMSHARD_DEBUG`` is set. Every command runs on a time and
    memory budget (:mod:`symshard.cli.budget`): past it, one line says which limit it hit.
    """
    if argv is None:
        # a process that runs one command: what the imports built lives to its end, so the cyclic garbage
        # collector need not walk it again and again while the engine allocates (a fifth of a best-sharding run)
        gc.freeze()
    argv = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    language = _language_in(argv)
    as_json = "--json" in argv
    parser = argument_parser()
    try:
        with argparse_words():
            args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        args.language = language = _language(args)
        check_options(args)  # counts, seeds, ports and size lists no command can use
        as_json = bool(getattr(args, "json", False))
        args.command_line = command_line  # the site commands document this command (they cannot import main)
        with running(limits_for(args), _command_name(args)):
            text, data = COMMANDS[args.run](args)
        if getattr(args, "unused_sizes", None):
            unused, context = args.unused_sizes
            text += "\n" + _say("cli.unused_sizes", language, dims=", ".join(unused), text=context)
            data["unused_sizes"] = unused
        if getattr(args, "model_note", None) is not None:  # the cost model came from the hardware file
            text += "\n" + _say("cli.model_note", language, note=sentence(args.model_note, language))
            data["cost_model"] = {"name": args.model_from_hardware, "from": "hardware file"}
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except KeyboardInterrupt:
        _report(UsageError(say("interrupted"), hint=say("run the command again to finish it")), language, as_json)
        return 130
    except Exception as err:
        if os.environ.get("SYMSHARD_DEBUG") and not isinstance(err, SymshardError):
            raise
        return _report(err, language, as_json)
    try:
        if as_json:
            print(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `symshard ... | head`: the reader left; not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except UnicodeError:  # a terminal that cannot show the text
        shown = json.dumps(data, indent=2) if as_json else text
        sys.stdout.write(shown.encode("ascii", "backslashreplace").decode("ascii") + "\n")
    return int(getattr(args, "exit_code", 0))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

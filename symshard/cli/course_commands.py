"""The commands that make course material: ``problems`` (list, show, check, generate, schema: problem
sets from the families) and ``site`` (prepare, build, serve: the docs site).

The problems' engine (Jinja) and MkDocs are imported only when one of these commands runs.

Examples:
    >>> from symshard.cli import main
    >>> main(["problems", "list"])  # doctest: +ELLIPSIS
    family                    difficulty  title
    ...
    0
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import UsageError
from ..messages import fill, say
from ..outputs.folder import OutputFolder
from .options import problem_budget
from .progress import Progress

__all__ = [
    "run_problems_check",
    "run_problems_generate",
    "run_problems_list",
    "run_problems_schema",
    "run_problems_show",
    "run_site_build",
    "run_site_prepare",
    "run_site_serve",
]


# -- problems --------------------------------------------------------------------------------------


def run_problems_list(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import families
    from ..problems.texts import families_report

    return families_report(families(args.families or ()), args.language)


def run_problems_show(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import family, variant
    from ..problems.texts import problem_text

    p = variant(family(args.family, args.families or ()), args.seed, args.lang, budget=problem_budget(args))
    return problem_text(p), p.to_dict()


def run_problems_check(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import family, variant
    from ..problems.texts import check_report

    p = variant(family(args.family, args.families or ()), args.seed, args.lang, budget=problem_budget(args))
    graded = []
    for given in args.answers:
        name, sep, value = given.partition("=")
        if not sep:
            if len(p.answers) != 1:
                names = ", ".join(a.name for a in p.answers)
                raise UsageError(
                    say("'{given}' does not say which answer it is", given=given),
                    hint=say("write NAME=VALUE; {problem} has {names}", problem=p.id, names=names),
                )
            name, value = p.answers[0].name, given
        answer = p.answer(name.strip())
        graded.append((answer, value.strip(), answer.grade(value.strip())))
    text, data = check_report(p, graded)
    args.exit_code = 0 if data["right"] == data["total"] else 1
    return text, data


def run_problems_generate(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems import generate
    from ..problems.engine import variants_of
    from ..problems.texts import generated_report, problem_set_title
    from ..problems.writers import FORMATS, export, write_files
    from .budget import hold

    if args.count is None and args.per_family is None:
        raise UsageError(say("say how many problems: --count N or --per-family K"), hint=say("e.g. --count 20"))
    for flag, value in (("--count", args.count), ("--per-family", args.per_family), ("--variants", args.variants)):
        if value is not None and value < 1:
            raise UsageError(
                say("{option} must be at least 1, not {value}", option=flag, value=value),
                hint=say("e.g. {option} 10", option=flag),
            )
    formats = FORMATS if args.format == "all" else (args.format,)
    out = Path(args.out)
    OutputFolder.open(out, "symshard problems generate", force=args.force, create=False)  # refuse before the work
    progress = Progress(args).counter("problems")
    problems = generate(
        args.seed, args.count, names=args.family, difficulty=args.difficulty, per_family=args.per_family,
        language=args.lang, extra=args.families or (), progress=progress, budget=problem_budget(args),
    )  # fmt: skip
    variants = None
    if args.variants > 1:
        variants = variants_of(problems, args.seed, args.variants, budget=problem_budget(args),
                               progress=Progress(args).counter("variants"))  # fmt: skip
    language = problems[0].language if problems else "en"  # the set's own language (--lang or $SYMSHARD_LANG)
    title = args.title if args.title else problem_set_title(language)
    produced = export(problems, formats, seed=args.seed, title=title, solutions=args.solutions, variants=variants)
    with hold():  # the budget stops the work, never a write halfway
        written = write_files(out, produced, force=args.force)
    return generated_report(problems, written.written, out, args.seed, args.lang, kept=written.kept)


def run_problems_schema(args: argparse.Namespace) -> tuple[str, dict]:
    from ..problems.writers import schema

    data = schema()
    return json.dumps(data, indent=2), data


# -- site ------------------------------------------------------------------------------------------


def run_site_prepare(args: argparse.Namespace) -> tuple[str, dict]:
    from ..site import prepare

    config = prepare(Path(args.out), force=args.force, url=args.site_url, cli=args.command_line())
    return f"wrote the MkDocs project {config.parent} (build it with: mkdocs build -f {config})", {
        "project": str(config.parent),
        "config": str(config),
    }


def run_site_build(args: argparse.Namespace) -> tuple[str, dict]:
    from ..site import build

    built = build(Path(args.out), src=Path(args.src) if args.src else None, force=args.force, url=args.site_url,
                  progress=Progress(args), cli=args.command_line())  # fmt: skip
    text = fill(
        "built {pages} {pages:page|pages} into {out} in {seconds:.1f} s; view it with: symshard site serve",
        pages=built.pages,
        out=built.out,
        seconds=built.seconds,
    )
    return text, {"out": str(built.out), "pages": built.pages, "seconds": round(built.seconds, 2)}


def run_site_serve(args: argparse.Namespace) -> tuple[str, dict]:
    from ..site import build, serve
    from .budget import relax

    out = Path(args.out)
    if not args.no_build:
        built = build(
            out,
            force=args.force,
            url=args.site_url or f"http://127.0.0.1:{args.port}/",
            progress=Progress(args),
            cli=args.command_line(),
        )
        print(
            fill(
                "built {pages} {pages:page|pages} into {out} in {seconds:.1f} s",
                pages=built.pages,
                out=built.out,
                seconds=built.seconds,
            ),
            flush=True,
        )

    def ready(url: str) -> None:
        print(f"serving {out} at {url} (Ctrl-C stops)", flush=True)

    relax()  # the build had its time; serving lasts until Ctrl-C

    serve(out, args.port, ready=ready)
    return "stopped", {"stopped": True}

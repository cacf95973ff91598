"""Drawing one variant of a family: its parameters drawn, its values computed, its checks passed and its
template rendered, all in the sandbox.

A variant is a pure function of (family, seed). Each parameter draws from its
own random stream, seeded by a hash of (family, seed, parameter, attempt), so
editing one parameter's choices does not reshuffle the others. The family's
``let`` values are computed by the algebra, its ``checks`` reject degenerate
variants (the next attempt draws again), its answers are evaluated, and the
statement, hints and solution are rendered from the template.

Part of :mod:`symshard.problems`: :func:`draw_variant` is the work
:func:`~symshard.problems.engine.variant` runs in the budgeted worker; it makes the values of
:mod:`~symshard.problems.problem` and words its errors with :mod:`~symshard.problems.faults`.

Examples:
    >>> from symshard.problems import family
    >>> p = draw_variant(family("allgather-time"), 7, "en")
    >>> p.id, [a.name for a in p.answers]
    ('allgather-time-7', ['time'])
"""

from __future__ import annotations

import hashlib
import random
import re
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2
import jinja2.meta
import jinja2.sandbox

from ..errors import HardwareError, SymshardError, TemplateError, UnknownHardwareError
from ..machines.presets import hardware_files
from ..messages import Clauses, say
from .family import AnswerSpec, Family
from .faults import at_line, in_spec, one_line, reason, spec_place
from .figures import FigureBook
from .problem import Answer, Mistake, Problem, as_float, value_key
from .sandbox import environment, family_file

__all__ = ["MAX_ATTEMPTS", "MAX_HARDWARE_FILE_BYTES", "FamilyInfo", "draw_variant"]


MAX_ATTEMPTS = 200
"""Draws tried for one variant before the family is declared unable to produce it."""


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    """What templates see as ``family``: its name, title, difficulty, tags and objective, never its folder
    (no machine path can reach a problem). It prints as the family's name.

    Examples:
        >>> from symshard.problems import family
        >>> info = FamilyInfo.of(family("allgather-time"))
        >>> str(info), info.difficulty
        ('allgather-time', 'medium')
    """

    name: str
    title: str
    difficulty: str
    tags: tuple[str, ...]
    objective: str

    @classmethod
    def of(cls, fam: Family) -> FamilyInfo:
        return cls(fam.name, fam.title, fam.difficulty, fam.tags, fam.objective)

    def __str__(self) -> str:
        return self.name


class _DrawRejectedError(Exception):
    """A drawn variant failed a check (or the algebra refused it): draw again.

    Its arguments: the check's name and None, or the expression's place and what the algebra said.
    """


def _stream(*parts: object) -> random.Random:
    digest = hashlib.sha256("\0".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@lru_cache(maxsize=4096)
def _compiled(folder: Path, source: str) -> Callable[[dict], object]:
    """A compiled expression that runs in a given scope (globals plus values) without copying it.

    Jinja's own ``compile_expression`` builds a fresh context, globals copied, on every
    call; a variant evaluates dozens of expressions, so it shares one scope instead.
    """
    env = environment(folder)
    tmpl = env.compile_expression(source, undefined_to_none=False)._template  # the expression's template

    def run(scope: dict) -> object:
        context = jinja2.runtime.Context(env, scope, tmpl.name, tmpl.blocks)
        for _ in tmpl.root_render_func(context):
            pass
        return context.vars["result"]

    return run


@lru_cache(maxsize=4096)
def _compiled_template(folder: Path, source: str) -> jinja2.Template:
    return environment(folder).from_string(source)


def _evaluate(fam: Family, where: str, source: str, scope: dict, *, rejects: bool = True) -> object:
    """Evaluate one expression of ``family.toml`` in ``scope`` (the sandbox's globals and the values).

    With ``rejects`` (lets and checks), a value the algebra refuses rejects the draw; otherwise
    (answers, mistakes, identity) it is the family's error, reported as such.
    """
    try:
        value = _compiled(fam.path, source)(scope)
    except SymshardError as err:
        if isinstance(err, TemplateError):
            raise
        if rejects:
            raise _DrawRejectedError(where, one_line(err)) from None
        raise TemplateError(
            in_spec(fam, where, say("the algebra refuses it: {why}", why=one_line(err))),
            text=source,
            hint=say(
                "an answer must be computable in every draw that passes the checks: fix the expression, "
                "or add a check that rejects such draws"
            ),
        ) from None
    except jinja2.exceptions.SecurityError as err:
        raise TemplateError(
            in_spec(fam, where, say("refused by the sandbox: {why}", why=reason(err))),
            text=source,
            hint=say("family expressions may use their values and the algebra, never Python, files or unbounded work"),
        ) from None
    except jinja2.TemplateSyntaxError as err:
        raise TemplateError(
            in_spec(fam, where, err.message or str(err)),
            text=source,
            hint=say("the value must be one Jinja expression"),
        ) from None
    except jinja2.UndefinedError as err:
        raise TemplateError(in_spec(fam, where, reason(err)), text=source,
                            hint=say("only parameters, earlier lets and the algebra are in scope")) from None  # fmt: skip
    except (MemoryError, RecursionError):
        raise  # the budget reports these (symshard.problems.budget)
    except Exception as err:
        raise TemplateError(
            in_spec(fam, where, f"{type(err).__name__}: {err}"),  # Python's own words
            text=source,
            hint=say("check the expression"),
        ) from None
    if isinstance(value, jinja2.Undefined):
        try:
            str(value)
        except (jinja2.UndefinedError, jinja2.exceptions.SecurityError) as err:
            raise TemplateError(in_spec(fam, where, reason(err)), text=source,
                                hint=say("only parameters, earlier lets and the algebra are in scope")) from None  # fmt: skip
    return value


@lru_cache(maxsize=4096)
def _names(folder: Path, source: str) -> frozenset[str]:
    env = environment(folder)
    try:
        return frozenset(jinja2.meta.find_undeclared_variables(env.parse("{{ " + source + " }}")))
    except jinja2.TemplateSyntaxError:
        return frozenset()  # reported with its position when the expression is evaluated


def _attempt(fam: Family, seed: int, attempt: int, language: str) -> Problem:
    ctx: dict[str, object] = {p.name: p.draw(_stream(fam.name, seed, p.name, attempt)) for p in fam.params}
    params = tuple((p.name, ctx[p.name]) for p in fam.params)
    globals_ = environment(fam.path).globals
    scope: dict[str, object] = {**globals_, **ctx}
    pending = list(fam.checks)

    def run_checks() -> None:
        for name, source in list(pending):
            if _names(fam.path, source) <= scope.keys():
                pending.remove((name, source))
                if not _evaluate(fam, f"checks.{name}", source, scope):
                    raise _DrawRejectedError(name, None)

    run_checks()
    for name, source in fam.lets:
        ctx[name] = scope[name] = _evaluate(fam, f"let.{name}", source, scope)
        run_checks()
    run_checks()
    answers = tuple(_answer(fam, spec, ctx, scope, language) for spec in fam.answers)
    path = tuple((k, str(_evaluate(fam, f"identity.{k}", s, scope, rejects=False))) for k, s in fam.identity)
    ctx["answers"] = {a.name: a for a in answers}
    ctx["family"] = FamilyInfo.of(fam)
    ctx["seed"] = seed
    book = FigureBook(f"{fam.name}-{seed}", language)
    statement, hints, solution = _render(fam, ctx, language, book)
    return Problem(fam, seed, params, statement, hints, solution, answers, path, language, attempt, book.items)


def _answer(fam: Family, spec: AnswerSpec, ctx: Mapping[str, object], scope: dict, language: str = "en") -> Answer:
    where = f"answers.{spec.name}"
    value = _evaluate(fam, where, spec.value, scope, rejects=False)
    if spec.unit != "text" and as_float(value) is None:
        raise TemplateError(
            say("family '{family}', family.toml {where}: the value {value} is not a number",
                family=fam.name, where=spec_place(fam, where), value=str(value)),
            hint=say("numeric answers need every size and constant known (give the chip and the shapes)"),
        )  # fmt: skip
    mistakes: dict[object, Mistake] = {}
    right = value_key(value)
    for i, m in enumerate(spec.mistakes):
        wrong = _evaluate(fam, f"{where}.mistakes[{i}]", m.value, scope, rejects=False)
        k = value_key(wrong)
        if k == right or _within(wrong, value, spec.rel_tol):
            continue  # here the mistake lands within the answer's tolerance: a grader could not tell
        source = fam.feedback_in(spec, i, language)
        feedback = _render_string(fam, f"{where}.mistakes[{i}].feedback", source, {**ctx, "wrong": wrong})
        if k in mistakes:  # two mistakes, one wrong value: say both
            feedback = mistakes[k].feedback + (" 或者：" if language == "zh" else " Or: ") + feedback
        mistakes[k] = Mistake(mistakes[k].value if k in mistakes else wrong, feedback.strip())
    label = fam.label_in(spec, language)
    label = _render_string(fam, f"{where}.label", label, ctx) if "{" in label else label
    _check_text(fam, f"family.toml {where}.label", label)
    for known in mistakes.values():
        _check_text(fam, f"family.toml {where}.mistakes", known.feedback)
    if spec.unit == "text":
        _check_text(fam, f"family.toml {where}.value", str(value))
    return Answer(spec.name, label, value, spec.unit, spec.rel_tol, tuple(mistakes.values()))


def _within(wrong: object, right: object, rel_tol: float) -> bool:
    a, b = as_float(wrong), as_float(right)
    if a is None or b is None:
        return False
    return abs(a - b) <= rel_tol * abs(b)


def _template_line(err: BaseException, filename: str, tmpl: jinja2.Template | None = None) -> int | None:
    """The template line an error comes from (Jinja compiles templates to Python; map back)."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if frame.filename and frame.filename.endswith(filename) and frame.lineno is not None:
            return tmpl.get_corresponding_lineno(frame.lineno) if tmpl is not None else frame.lineno
    return getattr(err, "lineno", None)


def _render(
    fam: Family, ctx: Mapping[str, object], language: str, book: FigureBook
) -> tuple[str, tuple[str, ...], str]:
    env = environment(fam.path)
    name = fam.template_for(language)
    tmpl = None
    ctx = {"figure": book.drawer(), **ctx}  # a parameter or let called figure wins, as a name in a template does
    try:
        tmpl = env.get_template(name)
        context = tmpl.new_context(dict(ctx))
        if _has_top_level_code(tmpl):
            # run the body once so that macros and sets written outside the blocks exist inside them
            for _ in tmpl.root_render_func(context):
                pass
            book.clear()  # that pass drew the blocks' figures too; the real pass below draws them again
            context = tmpl.new_context({**ctx, **context.vars})
        blocks = {}
        for block in ("statement", "hint1", "hint2", "hint3", "solution"):
            if block in tmpl.blocks:
                blocks[block] = "".join(tmpl.blocks[block](context)).strip() + "\n"
    except SymshardError as err:
        if isinstance(err, TemplateError):
            raise
        line = _template_line(err, name, tmpl)
        raise TemplateError(at_line(fam, name, line, one_line(err)),
                            hint=say("the template called the algebra with values it refuses")) from None  # fmt: skip
    except jinja2.TemplateSyntaxError as err:
        raise TemplateError(at_line(fam, name, err.lineno, err.message or str(err)),
                            hint=say("check the Jinja syntax")) from None  # fmt: skip
    except jinja2.TemplateNotFound as err:
        raise TemplateError(say("family '{family}', {file}: template '{name}' not found",
                                family=fam.name, file=name, name=err.name),
                            hint=say("templates may only include files of their own family folder")) from None  # fmt: skip
    except jinja2.exceptions.SecurityError as err:
        line = _template_line(err, name, tmpl)
        raise TemplateError(at_line(fam, name, line, say("refused by the sandbox: {why}", why=reason(err))),
                            hint=say("templates may use their values and the algebra, never Python, files outside "
                                     "their folder or unbounded work")) from None  # fmt: skip
    except (MemoryError, RecursionError):
        raise  # the budget reports these (symshard.problems.budget)
    except Exception as err:
        line = _template_line(err, name, tmpl)
        raise TemplateError(at_line(fam, name, line, f"{type(err).__name__}: {err}"),  # Python's own words
                            hint=say("only parameters, lets, answers and the algebra are in scope")) from None  # fmt: skip
    for block in ("statement", "solution"):
        if block not in blocks or not blocks[block].strip():
            raise TemplateError(say("family '{family}', {file}: the {block} block is missing or empty",
                                    family=fam.name, file=name, block=block),
                                hint=say("write {{% block {block} %}}...{{% endblock %}}", block=block))  # fmt: skip
    for block, text in blocks.items():
        _check_text(fam, f"{name}, the {block} block", text)
    hints = tuple(blocks[h] for h in ("hint1", "hint2", "hint3") if h in blocks and blocks[h].strip())
    return blocks["statement"], hints, blocks["solution"]


_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters no export can carry: control characters (but tab and line ends), lone surrogates, U+FFFE, U+FFFF."""


def _check_text(fam: Family, where: str, text: str) -> None:
    """Refuse text that holds a character no export can carry (XML, UTF-8 and Typst all refuse some).

    Raises:
        TemplateError: names the family, the place and the character.
    """
    bad = _NOT_TEXT.search(text)
    if bad is not None:
        raise TemplateError(
            say("family '{family}', {where}: the text holds the character {char}, which no export can carry",
                family=fam.name, where=where, char=f"U+{ord(bad.group(0)):04X}"),
            hint=say("remove it from the template, or from the value that prints it"),
        )  # fmt: skip


@lru_cache(maxsize=1024)
def _top_level(folder: Path, name: str, source: str) -> bool:
    outside = re.sub(r"\{%-?\s*block\b.*?\{%-?\s*endblock\b[^%]*%\}", "", source, flags=re.S)
    return bool(re.search(r"\{%-?\s*(macro|set|import|from)\b", outside))


def _has_top_level_code(tmpl: jinja2.Template) -> bool:
    """Whether the template defines macros or variables outside its blocks."""
    env = tmpl.environment
    if env.loader is None or tmpl.name is None:
        return False
    source = env.loader.get_source(env, tmpl.name)[0]
    return _top_level(Path(tmpl.filename or ""), tmpl.name, source)


def _render_string(fam: Family, where: str, source: str, ctx: Mapping[str, object]) -> str:
    try:
        return _compiled_template(fam.path, source).render(**ctx)
    except (MemoryError, RecursionError):
        raise  # the budget reports these (symshard.problems.budget)
    except Exception as err:
        detail = say("refused by the sandbox: {why}", why=reason(err)) if isinstance(
            err, jinja2.exceptions.SecurityError) else f"{type(err).__name__}: {err}"  # fmt: skip
        raise TemplateError(in_spec(fam, where, detail),
                            hint=say("feedback is a Jinja template over the same values")) from None  # fmt: skip


MAX_HARDWARE_FILE_BYTES = 100_000
"""The largest hardware file a family may name (``hardware("my-chip.toml")``)."""


def _hardware_reader(fam: Family) -> Callable[[str], str]:
    """How a family's hardware files are read: files of its own folder only, under the template loader's
    rules (no absolute path, no ``..``, no link, a regular file of at most :data:`MAX_HARDWARE_FILE_BYTES`)."""

    def read(name: str) -> str:
        try:
            data = family_file(fam.path, name, MAX_HARDWARE_FILE_BYTES)
        except jinja2.TemplateNotFound:
            raise UnknownHardwareError(
                say("hardware file '{path}' does not exist in the folder of family '{family}'",
                    path=name, family=fam.name),
                hint=say("a family names a preset (tpu-v5e, h100, ...) or a hardware file of its own folder"),
            ) from None  # fmt: skip
        except (jinja2.exceptions.SecurityError, OSError) as err:
            why = reason(err) if isinstance(err, jinja2.exceptions.SecurityError) else (err.strerror or str(err))
            raise HardwareError(
                say("family '{family}' may not read the hardware file '{path}': {why}",
                    family=fam.name, path=name, why=why),
                hint=say("a family names a preset, or a hardware file of its own folder (no absolute path, "
                         "no '..', no link)"),
            ) from None  # fmt: skip
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise HardwareError(
                say("hardware file '{path}' is not UTF-8 text ({why} at byte {offset})",
                    path=name, why=err.reason, offset=err.start),
                hint=say("save it as UTF-8"),
            ) from None  # fmt: skip

    return read


def draw_variant(fam: Family, seed: int, language: str) -> Problem:
    """:func:`~symshard.problems.engine.variant`'s work, in the worker."""
    with hardware_files(_hardware_reader(fam)):
        return _draw(fam, seed, language)


def _draw(fam: Family, seed: int, language: str) -> Problem:
    reasons: Counter[tuple[str, str | None]] = Counter()
    for attempt in range(MAX_ATTEMPTS):
        try:
            return _attempt(fam, seed, attempt, language)
        except _DrawRejectedError as why:
            reasons[why.args] += 1
    ((where, top), count), *others = reasons.most_common()
    if top is None:
        hint = say("check {name} failed in {times} of {count} {count:draw|draws}: widen its parameters or loosen that check",
                   name=where, times=count, count=MAX_ATTEMPTS)  # fmt: skip
    else:
        hint = say("the algebra refused {where} in {times} of {count} {count:draw|draws}: fix that expression, "
                   "or add a check on the parameters that rejects such draws first",
                   where=where, times=count, count=MAX_ATTEMPTS)  # fmt: skip
    shown = Clauses(
        say("check {name} failed ({times}×)", name=name, times=n)
        if why is None
        else say("{where}: {why} ({times}×)", where=name, why=why, times=n)
        for (name, why), n in [((where, top), count), *others[:2]]
    )
    raise TemplateError(
        say("family '{family}' found no valid variant for seed {seed} in {count} {count:draw|draws}: {reasons}",
            family=fam.name, seed=seed, count=MAX_ATTEMPTS, reasons=shown),
        hint=hint,
    )  # fmt: skip

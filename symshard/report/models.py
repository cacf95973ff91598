"""What ``symshard model`` prints: whole models, training runs and serving, as text, JSON and HTML.

The algebra (:mod:`symshard.models.transformer`, :mod:`symshard.models.training`, :mod:`symshard.models.parallelism`,
:mod:`symshard.models.inference`, :mod:`symshard.models.transfers`) returns SymPy values and English notes;
the words around them are chosen here, in English or Simplified Chinese (keys in
:data:`ENGLISH`, their Chinese in ``symshard/i18n/zh/*.po``). Every line prints the formula and
then the number. JSON keeps English keys, numbers as numbers, formulas as text, and a ``*_zh``
field beside each note. Notebooks get an HTML table of the same rows, in the same language.

Examples:
    >>> from symshard.models.transformer import model
    >>> print(model_text(model("llama3-8b")).splitlines()[0])
    LLaMA-3 8B: L=32, D=4096, F=14336, N=32, K=8, H=128, V=128256
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy

from ..algebra.mathtext import as_expr
from ..algebra.units import format_bytes, format_flops, format_number, format_seconds, json_value, pretty, sig
from ..errors import SymshardError
from ..i18n import keyed, sentence
from .text import bound, condition, shown, table

__all__ = [
    "ENGLISH",
    "model_report",
    "model_text",
    "presets_report",
    "say_model",
]

ENGLISH: dict[str, str] = {
    "model.moe": ", E={E}, k={k}",
    "model.row.parameters": "parameters",
    "model.row.active": "active",
    "model.row.flops": "FLOPs/token",
    "model.row.kv": "KV cache",
    "model.row.source": "source",
    "model.row.published": "published",
    "model.parts": "mlp {mlp} · attention {attention} · embeddings {embeddings} · norms {norms}{router}",
    "model.router": " · router {router}",
    "model.total": "total {total}",
    "model.flops": "training {training}; inference {inference}",
    "model.kv": "{formula} = {bytes} per token ({dtype})",
    "model.published": "{count} ({source}); symshard counts {ratio} of it",
    "model.training_head": "training on {tokens} {tokens:token|tokens}, {chips} {chip} {chips:chip|chips} at MFU {mfu}",
    "model.head.tokens": "{tokens} {tokens:token|tokens}",
    "model.head.chips": "{chips} {chip} {chips:chip|chips}",
    "model.head.chip": "{chip} chips",
    "model.training_on": "training on {what}",
    "model.training_mfu": "training on {what} at MFU {mfu}",
    "model.training_at": "training at MFU {mfu}",
    "model.training": "training",
    "model.needs": "needs {options}",
    "model.row.run": "whole run",
    "model.row.time": "time",
    "model.row.memory": "memory",
    "model.row.fit": "fewest chips",
    "model.row.per_param": "per parameter",
    "model.per_param": "{bytes} B: weights {weights} + optimizer {optimizer} ({name}) + gradients {gradients}, the "
    "training chapter's count (gradients are used as they are made; --gradients keeps them); symshard layer counts "
    "{layer} B: the gradients kept and an fp32 master copy beside Adam's m and v ({adam} B)",
    "model.row.share": "per chip",
    "model.row.batch": "batch/chip",
    "model.row.step": "step",
    "model.row.slice": "slice",
    "model.run": "{flops} ({per_token} per token)",
    "model.days": "{formula} = {seconds} = {days} {days:day|days}",
    "model.memory": "weights {weights} · optimizer {optimizer} ({name}, {per_param} B per parameter) · gradients {gradients} · activations {activations}",
    "model.memory_per_token": "activations {formula} per token of batch (give --batch for the total)",
    "model.fit": "{bytes}: at least {chips} {chips:chip|chips} of {hbm}",
    "model.share": "{bytes} on each of {chips} {chips:chip|chips}: {verdict}",
    "model.fits": "fits",
    "model.too_big": "does not fit in {hbm}",
    "model.batch": "{batch}/{chips} = {per_chip} {per_chip:token|tokens}",
    "model.step": "{seconds} per step of {batch} {batch:token|tokens}; {steps} {steps:step|steps}",
    "model.step_alone": "{seconds} per step of {batch} {batch:token|tokens}",
    "model.slice": "{chips} {chips:chip|chips}: {flops} FLOP/s, {hbm} of HBM, {hosts}",
    "model.hosts": "{hosts} {hosts:host|hosts}",
    "model.hosts_unknown": "hosts unknown",
    "model.schemes_head": "compute-bound when (per layer, the chapter's MLP block; {convention}):",
    "model.scheme_line": "  {scheme}{condition}   [{numeric}]",
    "model.verdict_head": "at {batch} {batch:token|tokens} on {chips} {chips:chip|chips}:",
    "model.misfit": "does not fit ({bytes} per chip, more than its {hbm}); ",
    "model.scheme_misfit": "does not fit: each chip would hold {bytes}, more than its {hbm}; if it did:",
    "model.verdict_line": "  {scheme}{detail}T_math {math}, T_comms {comm} -> {bound}",
    "model.split": "|X| = {x}, |Y| = {y}: ",
    "model.optimum": "  best FSDP × TP split: |X| = {formula} = {value} continuous; best divisor split |X| = {x}, |Y| = {y}",
    "model.serving_head": "serving: batch {batch}, context {context}, {dtype} weights, {kv_dtype} KV cache, mesh {mesh} ({chips} {chip} {chips:chip|chips})",
    "model.row.per_chip": "per chip",
    "model.row.decode": "decode step",
    "model.row.crossover": "compute-bound",
    "model.row.prefill": "prefill",
    "model.row.tp": "TP limits",
    "model.row.ws": "2-D vs 1-D",
    "model.row.collectives": "collectives",
    "model.kv_batch": "{per_sequence} per sequence; {total} for the batch",
    "model.per_chip": "weights {weights} + KV cache {kv} = {total} of {hbm}: {verdict}; largest batch {largest}",
    "model.per_chip_symbolic": "weights {weights} + KV cache {kv} = {total}",
    "model.decode": "T_hbm {hbm}, T_math {math}, T_comms {comm} -> {bound}: {step}, {throughput} tokens/s ({per_chip} per chip)",
    "model.crossover": "from a batch of {batch}",
    "model.crossover_never": "never at this context: each sequence's cache costs more HBM time than its FLOPs",
    "model.prefill": "{seconds} for the batch's context (compute-bound)",
    "model.tp": "prefill |Y| ≤ {prefill} = {prefill_value}; decode |Y| ≤ {decode} = {decode_value} at B = {batch}",
    "model.ws": "1-D {one_d}; 2-D at |X| = {best_x}: {best}; 2-D moves less when {crossover} = {value} {value:chip|chips}",
    "model.collective": "{collective}: {bytes} per shard, {time}, {bound}",
    "model.row.kv_shard": "KV sharded",
    "model.row.largest": "largest batch",
    "model.largest": "{largest} {largest:sequence|sequences} fit beside the weights",
    "model.decode_book": "T_kv {kv} + max(T_weights {weights}, T_math {math}, T_comms {comm}) -> {bound}: {step}, {throughput} tokens/s ({per_chip} per chip)",
    "model.row.network": "network",
    "model.network": "{mesh} crosses {levels}; {level} binds: W_collective = {bandwidth} B/s (the TP limits use it)",
    "model.note": "note: {note}",
    "model.binds": "{level} binds: W_collective = {bandwidth} B/s",
    "model.one_domain": "holds inside one {node}-GPU NVLink domain only (W_nvlink)",
    "model.global_batch": "at least {tokens} {tokens:token|tokens} per step on {chips} {chips:chip|chips}",
    "model.presets_head": "model",
    "model.presets_columns": "L      D       F       N    K    H    V        parameters",
    "model.memory_head": "{model}: training memory ({optimizer}, {policy})",
    "model.row.total": "total",
    "model.expected_decode": "expected on this chip (measured rates): {time}, {throughput} tokens/s ({kernels} {kernels:kernel|kernels} one after another)",
    "model.expected_prefill": "expected on this chip (measured rates): {time}",
    "model.expected_step": "expected on this chip (measured rates): {time} per step: its kernels on {tokens} {tokens:token|tokens} per chip, no communication",
}
"""The English of the words ``symshard model`` prints, by key; Chinese is in the catalogue."""


def say_model(key: str, language: str, **values: object) -> str:
    return keyed(ENGLISH, key, language, **values)


def _count(x: object) -> str:
    v = as_expr(x)
    return f"{int(v):,}" if v.is_Integer else format_number(v)


def _eq(formula: object, value: object, fmt) -> str:
    """``formula = value`` (just the value when they print the same)."""
    number = fmt(value) if as_expr(value).is_number else pretty(value)
    text = pretty(formula)
    return number if text in (number, str(value)) else f"{text} = {number}"


def _symbolic(m):
    from ..models.transformer import Model

    return Model.symbolic(moe=m.is_moe, gated=m.gated, tied_embeddings=m.tied_embeddings)


# -- the model itself --------------------------------------------------------------------------------------


def model_text(m, language: str = "en") -> str:
    """The model's sizes, parameters by part, FLOPs per token and KV cache per token."""
    from ..models.inference import kv_cache_bytes

    p = m.params
    head = (
        f"{m.label}: L={m.layers}, D={m.d_model}, F={m.d_ff}, N={m.heads}, K={m.kv_heads}, H={m.head_dim}, V={m.vocab}"
    )
    if m.is_moe:
        head += say_model("model.moe", language, E=m.experts, k=m.experts_per_token)
    router = say_model("model.router", language, router=_count(p.router)) if m.is_moe else ""
    sym = _symbolic(m)
    rows = [
        (say_model("model.row.parameters", language), say_model("model.parts", language, mlp=_count(p.mlp),
         attention=_count(p.attention), embeddings=_count(p.embeddings), norms=_count(p.norms), router=router)),
        ("", say_model("model.total", language, total=_eq(sym.params.total, p.total, _count))),
    ]  # fmt: skip
    if m.is_moe:
        rows.append((say_model("model.row.active", language), _eq(sym.params.active, p.active, _count)))
    rows.append((say_model("model.row.flops", language), say_model("model.flops", language,
                 training=format_flops(m.flops_per_token()), inference=format_flops(m.flops_per_token(training=False)))))  # fmt: skip
    rows.append((say_model("model.row.kv", language), say_model("model.kv", language, formula="2·L·K·H",
                 bytes=format_bytes(kv_cache_bytes(m, 1)), dtype="bf16")))  # fmt: skip
    if m.published_params is not None:
        ratio = f"{float(p.total / m.published_params):.4f}"
        rows.append((say_model("model.row.published", language), say_model("model.published", language,
                     count=_count(m.published_params), source=m.source("published_params"), ratio=ratio)))  # fmt: skip
    if m.source("sizes"):
        rows.append((say_model("model.row.source", language), str(m.source("sizes"))))
    return head + "\n" + table(rows)


def model_data(m) -> dict:
    """The model as a JSON-ready dict."""
    from ..models.inference import kv_cache_bytes

    p = m.params
    sym = _symbolic(m)
    return {
        "model": m.name,
        "label": m.label,
        "sizes": {k: json_value(v) for k, v in m.sizes().items()},
        "gated": m.gated,
        "tied_embeddings": m.tied_embeddings,
        "params": {k: json_value(v) for k, v in {**p.parts(), "total": p.total, "active": p.active}.items()},
        "params_formula": {"total": pretty(sym.params.total), "active": pretty(sym.params.active)},
        "flops_per_token": {
            "training": json_value(m.flops_per_token()),
            "inference": json_value(m.flops_per_token(training=False)),
        },
        "kv_cache_bytes_per_token_bf16": json_value(kv_cache_bytes(m, 1)),
        "published_params": m.published_params,
        "sources": dict(m.sources),
    }


def presets_report(language: str = "en") -> tuple[str, dict]:
    """Every preset, one line each."""
    from ..models.transformer import MODELS

    rows = [(say_model("model.presets_head", language), say_model("model.presets_columns", language))]
    for m in MODELS.values():
        cells = [str(m.layers).ljust(6), str(m.d_model).ljust(7), str(m.d_ff).ljust(7), str(m.heads).ljust(4),
                 str(m.kv_heads).ljust(4), str(m.head_dim).ljust(4), str(m.vocab).ljust(8), _count(m.params.total)]  # fmt: skip
        rows.append((m.name, " ".join(cells)))
    return table(rows), {"models": [model_data(m) for m in MODELS.values()]}


# -- training --------------------------------------------------------------------------------------------


def _note_lines(notes: Sequence[str], language: str) -> list[str]:
    return [say_model("model.note", language, note=sentence(n, language)) for n in notes]


def _notes_json(notes: Sequence[str]) -> list[dict]:
    return [{"note": n, "note_zh": sentence(n, "zh")} for n in notes]


def training_report(run, roofs, verdicts, split, totals, language: str = "en") -> tuple[str, dict]:
    """The text and JSON of a training run with its rooflines (see :func:`model_report`)."""
    from ..models.training import OPTIMIZERS

    m, lang = run.model, language
    lines = [model_text(m, lang), _training_head(run, lang)]
    mem = run.memory
    # a figure still holding a symbol the user did not give is left out; its row says which options give it
    rows = [
        (say_model("model.row.run", lang), say_model("model.run", lang, flops=_flop(run.flops),
         per_token=_flop(run.flops_per_token)) if as_expr(run.flops).is_number else _needs(run, ("tokens",), lang)),
        (say_model("model.row.time", lang), say_model("model.days", lang, formula=pretty(run.formula),
         seconds=shown(run.seconds, format_seconds), days=shown(run.days, lambda d: sig(d, 3)))
         if as_expr(run.seconds).is_number else _needs(run, ("tokens", "mfu", "chips", "hw"), lang)),
    ]  # fmt: skip
    per_param = OPTIMIZERS[mem.optimizer][0]
    if mem.batch.is_number:
        rows.append((say_model("model.row.memory", lang), say_model("model.memory", lang, weights=_size(mem.weights),
                     optimizer=_size(mem.optimizer_state), name=mem.optimizer, per_param=per_param,
                     gradients=_size(mem.gradients), activations=_size(mem.activations))))  # fmt: skip
    else:
        rows.append((say_model("model.row.memory", lang), say_model("model.memory", lang, weights=_size(mem.weights),
                     optimizer=_size(mem.optimizer_state), name=mem.optimizer, per_param=per_param,
                     gradients=_size(mem.gradients), activations="—")))  # fmt: skip
        per_token = as_expr(mem.activations / mem.batch)
        rows.append(("", say_model("model.memory_per_token", lang, formula=_eq(
            as_expr(_symbolic(m).layers * 2 * (_symbolic(m).d_model + 2 * _symbolic(m).d_ff))
            if mem.policy == "mlp" else per_token, per_token, _size))))  # fmt: skip
    rows.append((say_model("model.row.per_param", lang), _per_param(mem, run.dtype, lang)))
    need = mem.total if mem.batch.is_number else mem.parameter_state
    if run.hardware is not None and run.hardware.hbm_bytes is not None:
        rows.append((say_model("model.row.fit", lang), say_model("model.fit", lang, bytes=_size(need),
                     chips=_count(mem.chips_to_fit(run.hardware)), hbm=_size(run.hardware.hbm_bytes))))  # fmt: skip
        if run.chips.is_number:
            share = need / run.chips
            ok = share <= run.hardware.hbm_bytes
            verdict = (
                say_model("model.fits", lang)
                if ok
                else say_model("model.too_big", lang, hbm=_size(run.hardware.hbm_bytes))
            )
            rows.append((say_model("model.row.share", lang), say_model("model.share", lang, bytes=_size(share),
                         chips=_count(run.chips), verdict=verdict)))  # fmt: skip
    if run.per_chip is not None:
        rows.append((say_model("model.row.batch", lang), say_model("model.batch", lang, batch=_count(run.batch),
                     chips=_count(run.chips), per_chip=format_number(run.per_chip.per_chip))))  # fmt: skip
    if run.step_seconds is not None:
        if not as_expr(run.step_seconds).is_number:
            step = _needs(run, ("mfu", "chips", "hw"), lang)
        elif as_expr(run.steps).is_number:
            step = say_model("model.step", lang, seconds=format_seconds(run.step_seconds), batch=_count(run.batch),
                        steps=format_number(run.steps))  # fmt: skip
        else:
            step = say_model(
                "model.step_alone", lang, seconds=format_seconds(run.step_seconds), batch=_count(run.batch)
            )
        rows.append((say_model("model.row.step", lang), step))
        if run.expected_step_seconds is not None:  # a calibrated chip: what its kernels attain, beside the MFU's
            rows.append(("", say_model("model.expected_step", lang, time=format_seconds(run.expected_step_seconds),
                         tokens=format_number(run.batch / run.chips))))  # fmt: skip
    if totals is not None:
        rows.append((say_model("model.row.slice", lang), _slice_text(totals, lang)))
    lines.append(table(rows))
    if run.per_chip is not None and run.per_chip.note:
        lines += _note_lines([run.per_chip.note], lang)
    lines += _schemes_text(roofs, lang, run)
    if verdicts:
        lines.append(say_model("model.verdict_head", lang, batch=_count(run.batch), chips=_count(run.chips)))
        width = max(len(v.scheme) for v in verdicts) + 2
        for v in verdicts:
            detail = say_model("model.split", lang, x=v.detail["X"], y=v.detail["Y"]) if "X" in v.detail else ""
            misfit = _misfit(run, v.scheme)
            if misfit is not None:  # a scheme that does not fit says so before how it would run
                detail = (
                    say_model("model.misfit", lang, bytes=_size(misfit), hbm=_size(run.hardware.hbm_bytes)) + detail
                )
            lines.append(say_model("model.verdict_line", lang, scheme=v.scheme.ljust(width), detail=detail,
                              math=format_seconds(v.math_time), comm=format_seconds(v.comm_time),
                              bound=bound(v.bound, lang)))  # fmt: skip
    if split is not None:
        lines.append(say_model("model.optimum", lang, formula=pretty(split.optimum_formula),
                          value=format_number(split.optimum), x=split.x, y=split.y))  # fmt: skip
        if split.note:
            lines += _note_lines([split.note], lang)
    data = {
        **model_data(m),
        "training": {
            "tokens": json_value(run.tokens),
            "chips": json_value(run.chips),
            "mfu": json_value(run.mfu),
            "hardware": None if run.hardware is None else run.hardware.name,
            "flops_per_token": json_value(run.flops_per_token),
            "flops": json_value(run.flops),
            "seconds": json_value(run.seconds),
            "days": json_value(run.days),
            "time_formula": pretty(run.formula),
            "batch": json_value(run.batch),
            "step_seconds": json_value(run.step_seconds),
            **({} if run.expected_step_seconds is None else {"expected_step_seconds": json_value(
                run.expected_step_seconds)}),
            "steps": json_value(run.steps),
            "batch_per_chip": None if run.per_chip is None else {
                "exact": json_value(run.per_chip.per_chip), "padded": json_value(run.per_chip.padded),
                "padding": json_value(run.per_chip.padding), "even": run.per_chip.even,
                "notes": _notes_json([run.per_chip.note] if run.per_chip.note else [])},
            "memory": {"policy": mem.policy, "optimizer": mem.optimizer, "bytes_per_param": json_value(
                mem.bytes_per_param), "layer_bytes_per_param": json_value(_layer_count(run.dtype)), **{k: json_value(v) for k, v in mem.kinds().items()},
                "formulas": {"activations": pretty(_symbolic_memory(mem).activations)}},
            "chips_to_fit": None if run.hardware is None or run.hardware.hbm_bytes is None
            else json_value(mem.chips_to_fit(run.hardware)),
        },
        "schemes": [_roof_data(r) for r in roofs],
        "does_not_fit": {r.scheme: json_value(_misfit(run, r.scheme)) for r in roofs if _misfit(run, r.scheme)},
        "verdicts": [{"scheme": v.scheme, "math_time_s": json_value(v.math_time), "comm_time_s": json_value(
            v.comm_time), "bound": v.bound, **{k: json_value(x) for k, x in v.detail.items()}} for v in verdicts],
        "split": None if split is None else {"optimum_formula": pretty(split.optimum_formula), "optimum": json_value(
            split.optimum), "X": split.x, "Y": split.y, "comm_time_s": json_value(split.comm_time),
            "math_time_s": json_value(split.math_time), "convention": split.convention, "even": split.even,
            "notes": _notes_json([split.note] if split.note else [])},
        "slice": None if totals is None else _slice_data(totals),
    }  # fmt: skip
    return "\n".join(lines), data


def _flop(x: object) -> str:
    v = as_expr(x)
    if not v.is_number:
        return pretty(v)
    return format_flops(v) if v < 10**18 else f"{format_number(v)} FLOP"


def _symbolic_memory(mem):
    from ..models.training import training_memory

    return training_memory(_symbolic(mem.model), policy=mem.policy, optimizer=mem.optimizer,
                           gradients=bool(mem.gradients != 0))  # fmt: skip


def _size(x: object) -> str:
    """Bytes, short: ``70.6 GB`` style is not the project's; binary units as format_bytes prints them."""
    v = as_expr(x)
    if not v.is_number:
        return pretty(v)
    full = format_bytes(v)
    return full[full.index("(") + 1 : -1] if "(" in full else full


def _layer_count(dtype: str) -> sympy.Expr:
    from ..models.schemes import bytes_per_param

    return bytes_per_param(dtype)


def _per_param(mem, dtype: str, language: str) -> str:
    """The bytes per parameter this count keeps, part by part, and beside them ``symshard layer``'s count."""
    from ..algebra.dtypes import dtype_bytes
    from ..models.schemes import ADAM_BYTES_PER_PARAM, bytes_per_param
    from ..models.training import OPTIMIZERS

    weights = dtype_bytes(dtype)
    params = mem.model.params.total
    return say_model("model.per_param", language, bytes=format_number(mem.bytes_per_param), weights=format_number(weights),
                optimizer=OPTIMIZERS[mem.optimizer][0], name=mem.optimizer,
                gradients=format_number(as_expr(mem.gradients / params)), layer=format_number(bytes_per_param(dtype)),
                adam=ADAM_BYTES_PER_PARAM)  # fmt: skip


_OPTIONS = {"tokens": "--tokens", "mfu": "--mfu", "chips": "--chips", "hw": "--hw"}


def _needs(run, wanted: Sequence[str], language: str) -> str:
    """What a row would need to be a number: the options among ``wanted`` the run was not given."""
    from ..i18n.catalog import join

    given = {"tokens": as_expr(run.tokens).is_number, "mfu": as_expr(run.mfu).is_number,
             "chips": as_expr(run.chips).is_number, "hw": run.hardware is not None}  # fmt: skip
    missing = [_OPTIONS[w] for w in wanted if not given[w]]
    return say_model("model.needs", language, options=join(missing, language) if language != "en" else _and(missing))


def _and(items: Sequence[str]) -> str:
    from ..messages import ENGLISH_JOINS, Names, join

    return join(items, Names, ENGLISH_JOINS)


def _training_head(run, language: str) -> str:
    """What the run is: tokens, chips and MFU, each only when it was given (never a symbol's name)."""
    from ..i18n.catalog import join

    chip = run.hardware.label if run.hardware is not None else ""
    tokens, chips, mfu = (as_expr(x).is_number for x in (run.tokens, run.chips, run.mfu))
    if tokens and chips and mfu:
        head = say_model("model.training_head", language, tokens=format_number(run.tokens), chips=_count(run.chips),
                    chip=chip, mfu=format_number(run.mfu))  # fmt: skip
        return " ".join(head.split())
    parts = []
    if tokens:
        parts.append(say_model("model.head.tokens", language, tokens=format_number(run.tokens)))
    if chips:
        parts.append(" ".join(say_model("model.head.chips", language, chips=_count(run.chips), chip=chip).split()))
    elif chip:
        parts.append(say_model("model.head.chip", language, chip=chip))
    what = join(parts, language) if language != "en" else _and(parts)
    if mfu:
        if not parts:
            return say_model("model.training_at", language, mfu=format_number(run.mfu))
        return say_model("model.training_mfu", language, what=what, mfu=format_number(run.mfu))
    return say_model("model.training_on", language, what=what) if parts else say_model("model.training", language)


def _misfit(run, scheme: str) -> sympy.Expr | None:
    """The bytes each chip would hold under ``scheme`` when they are more than its HBM (the least any batch
    needs while the batch is a symbol); None when they fit or cannot be told."""
    hw = run.hardware
    if hw is None or hw.hbm_bytes is None:
        return None
    chips = run.chips if as_expr(run.chips).is_number else None
    share = run.memory.scheme_per_chip(scheme, chips, least=True)
    if share is None or not as_expr(share).is_number:
        return None
    return share if share > hw.hbm_bytes else None


def _schemes_text(roofs, language: str, run=None) -> list[str]:
    if not roofs:
        return []
    from ..models.bounds import OVERLAPS

    lines = [say_model("model.schemes_head", language, convention=sentence(OVERLAPS["axes"], language)
                  if roofs[0].convention == OVERLAPS["axes"] else sentence(roofs[0].convention, language))]  # fmt: skip
    width = max(len(r.scheme) for r in roofs) + 2
    cond_width = max(len(r.condition.text()) for r in roofs) + 2
    for r in roofs:
        numeric = r.numeric.text() if r.numeric is not None else "—"
        misfit = None if run is None else _misfit(run, r.scheme)
        if misfit is not None:  # first that it does not fit, then when it would be compute-bound if it did
            lines.append("  " + r.scheme.ljust(width) + say_model("model.scheme_misfit", language, bytes=_size(misfit),
                         hbm=_size(run.hardware.hbm_bytes)))  # fmt: skip
        lines.append(say_model("model.scheme_line", language, scheme=(" " if misfit is not None else r.scheme).ljust(width),
                          condition=condition(r.condition.text(), language).ljust(cond_width),
                          numeric=condition(numeric, language)))  # fmt: skip
        where = _where(r, language)
        if where:
            lines.append(" " * (width + 2) + where)
    return lines


def _where(r, language: str) -> str:
    """Under a scheme's line on a GPU: the network level that binds (or that the bound holds inside one
    NVLink domain only), and the least global batch when the chips are known (in the JSON everywhere)."""
    parts = []
    if r.inside_one_domain is None:
        return ""
    level = r.binding
    if level is not None:
        parts.append(say_model("model.binds", language, level=sentence(level.fabric.describe, language),
                          bandwidth=format_number(level.bandwidth)))  # fmt: skip
    elif r.inside_one_domain and r.hardware is not None and r.hardware.node_size is not None:
        parts.append(say_model("model.one_domain", language, node=r.hardware.node_size))
    if r.global_batch is not None:
        parts.append(say_model("model.global_batch", language, tokens=_count(r.global_batch), chips=_count(r.chips)))
    return "; ".join(parts) if language == "en" else "；".join(parts)


def _roof_data(r) -> dict:
    return {
        "scheme": r.scheme,
        "solve_for": str(r.symbol),
        "condition": r.condition.text(),
        "condition_latex": r.condition.latex(),
        "numeric": None if r.numeric is None else r.numeric.text(),
        "math_time": pretty(r.math_time),
        "comm_time": pretty(r.comm_time),
        "convention": r.convention,
        "source": r.source,
        "notes": _notes_json(r.notes),
        "dtype": r.dtype,
        "chips": json_value(r.chips) if r.chips is not None else None,
        "global_batch": json_value(r.global_batch) if r.global_batch is not None else None,
        "inside_one_domain": r.inside_one_domain,
        "network": None if r.network is None else {
            "mesh": str(r.network.mesh), "model": r.network.model,
            "binding": None if r.binding is None else {"fabric": r.binding.fabric.value,
                                                       "bandwidth": json_value(r.binding.bandwidth)},
            "crossings": [{"axes": list(c.axes), "binding": c.binding.fabric.value, "bandwidth": json_value(
                c.bandwidth), "levels": [{"fabric": lv.fabric.value, "devices": json_value(lv.devices),
                                          "bandwidth": json_value(lv.bandwidth)} for lv in c.levels]}
                          for c in r.network.crossings]},
    }  # fmt: skip


def _slice_text(totals, language: str) -> str:
    hosts = (say_model("model.hosts", language, hosts=_count(totals.hosts)) if totals.hosts is not None
             else say_model("model.hosts_unknown", language))  # fmt: skip
    return say_model("model.slice", language, chips=_count(totals.chips), flops=format_number(totals.flops),
                hbm=_size(totals.hbm_bytes) if totals.hbm_bytes is not None else "—", hosts=hosts)  # fmt: skip


def _slice_data(totals) -> dict:
    return {"chips": totals.chips, "flops": json_value(totals.flops), "hbm_bytes": json_value(totals.hbm_bytes),
            "hbm_bandwidth": json_value(totals.hbm_bandwidth), "hosts": totals.hosts,
            "dcn_bandwidth": json_value(totals.dcn_bandwidth), "nvlink_bandwidth": json_value(totals.nvlink_bandwidth),
            "node_bisection": json_value(totals.node_bisection)}  # fmt: skip


# -- serving -------------------------------------------------------------------------------------------


def serving_report(s, limits, ws, language: str = "en") -> tuple[str, dict]:
    """The text and JSON of serving a model (see :func:`model_report`)."""
    from ..models.inference import DECODES, KV_SHARDINGS

    lang = language
    m = s.model
    chip = s.hardware.label if s.hardware is not None else ""
    head = say_model("model.serving_head", lang, batch=_count(s.batch), context=_count(s.context), dtype=s.dtype,
                kv_dtype=s.kv_dtype, mesh=str(s.mesh), chips=_count(s.chips), chip=chip)  # fmt: skip
    lines = [model_text(m, lang), " ".join(head.split())]
    rows = [
        (say_model("model.row.kv", lang), say_model("model.kv", lang, formula="2·L·K·H", bytes=format_bytes(s.kv_bytes_per_token),
         dtype=s.kv_dtype)),
        ("", say_model("model.kv_batch", lang, per_sequence=_size(s.kv_bytes_per_sequence), total=_size(s.kv_bytes))),
    ]  # fmt: skip
    weights = s.weight_bytes / s.chips
    kv = s.kv_bytes_per_chip
    if s.kv_shard != "heads":
        rows.append((say_model("model.row.kv_shard", lang), sentence(KV_SHARDINGS[s.kv_shard], lang)))
    if s.fits is not None and s.hardware is not None and s.hardware.hbm_bytes is not None:
        verdict = (
            say_model("model.fits", lang)
            if s.fits
            else say_model("model.too_big", lang, hbm=_size(s.hardware.hbm_bytes))
        )
        rows.append((say_model("model.row.per_chip", lang), say_model("model.per_chip", lang, weights=_size(weights),
                     kv=_size(kv), total=_size(s.memory_per_chip), hbm=_size(s.hardware.hbm_bytes), verdict=verdict,
                     largest=_count(s.max_batch) if s.max_batch is not None else "—")))  # fmt: skip
    else:
        rows.append((say_model("model.row.per_chip", lang), say_model("model.per_chip_symbolic", lang, weights=_size(weights),
                     kv=_size(kv), total=_size(s.memory_per_chip))))  # fmt: skip
        if s.max_batch is not None:
            rows.append((say_model("model.row.largest", lang), say_model("model.largest", lang,
                         largest=_count(s.max_batch) if as_expr(s.max_batch).is_number else pretty(s.max_batch))))  # fmt: skip
    regime = s.regime
    if regime is not None:
        regime_words = bound(regime, lang) if regime != "memory" else _memory_bound(lang)
        if s.decode == "book":
            rows.append((say_model("model.row.decode", lang), say_model("model.decode_book", lang,
                         kv=format_seconds(s.kv_time), weights=format_seconds(s.weights_time),
                         math=format_seconds(s.math_time), comm=format_seconds(s.comm_time), bound=regime_words,
                         step=format_seconds(s.step_time), throughput=format_number(s.throughput),
                         per_chip=format_number(s.throughput / s.chips))))  # fmt: skip
        else:
            rows.append((say_model("model.row.decode", lang), say_model("model.decode", lang, hbm=format_seconds(s.memory_time),
                         math=format_seconds(s.math_time), comm=format_seconds(s.comm_time), bound=regime_words,
                         step=format_seconds(s.step_time), throughput=format_number(s.throughput),
                         per_chip=format_number(s.throughput / s.chips))))  # fmt: skip
        if s.expected_step_time is not None:  # a calibrated chip: beside the bound, what it attains
            rows.append(("", say_model("model.expected_decode", lang, time=format_seconds(s.expected_step_time),
                         throughput=format_number(s.expected_throughput),
                         kernels=_count(sum(k.runs for k in s.decode_kernels)))))  # fmt: skip
        cross = s.compute_bound_batch
        rows.append((say_model("model.row.crossover", lang), say_model("model.crossover", lang, batch=format_number(cross))
                     if cross is not None else say_model("model.crossover_never", lang)))  # fmt: skip
        rows.append(
            (
                say_model("model.row.prefill", lang),
                say_model("model.prefill", lang, seconds=format_seconds(s.prefill_time)),
            )
        )
        if s.expected_prefill_time is not None:
            rows.append(("", say_model("model.expected_prefill", lang, time=format_seconds(s.expected_prefill_time))))
    if s.network is not None and s.network.binding is not None:
        c = s.network.binding
        rows.append((say_model("model.row.network", lang), say_model("model.network", lang, mesh=str(s.mesh),
                     levels=", ".join(f"{lv.fabric.value} {lv.devices}" for lv in c.levels),
                     level=sentence(c.binding.fabric.describe, lang), bandwidth=format_number(c.bandwidth))))  # fmt: skip
    if limits is not None:
        prefill, decode, values = limits
        rows.append((say_model("model.row.tp", lang), say_model("model.tp", lang, prefill=pretty(prefill.bound),
                     prefill_value=format_number(prefill.at(values)), decode=pretty(decode.bound),
                     decode_value=format_number(decode.at(values)), batch=_count(s.batch))))  # fmt: skip
    if ws is not None:
        w, wvalues = ws
        rows.append((say_model("model.row.ws", lang), say_model("model.ws", lang, one_d=pretty(w.one_d_time),
                     best_x=pretty(w.best_x), best=pretty(w.best_time), crossover=condition(w.crossover.text(), lang),
                     value=format_number(as_expr(w.crossover_chips).xreplace(wvalues)))))  # fmt: skip
    colls = []
    costs = s.decode_collectives() if s.hardware is not None and s.batch.is_number and s.chips != 1 else ()
    if all(as_expr(c.time).is_number for c in costs):  # a chip without a level's figure: no rows
        for i, c in enumerate(costs):
            shard = as_expr(c.bytes_in if "AllGather" in c.collective else c.bytes_out)
            colls.append({"collective": c.collective, "bytes": json_value(c.bytes), "bytes_per_shard": json_value(
                shard), "time_s": json_value(c.time), "regime": c.regime, "latency_bound_below_bytes": json_value(
                c.crossover_bytes)})  # fmt: skip
            rows.append((say_model("model.row.collectives", lang) if i == 0 else "", say_model("model.collective", lang,
                         collective=c.collective, bytes=format_bytes(shard), time=format_seconds(c.time),
                         bound=bound(c.regime or "bandwidth", lang))))  # fmt: skip
    lines.append(table(rows))
    lines += _note_lines(s.notes, lang)
    data = {
        **model_data(m),
        "serving": {
            "hardware": None if s.hardware is None else s.hardware.name,
            "dtype": s.dtype, "kv_dtype": s.kv_dtype, "batch": json_value(s.batch), "context": json_value(s.context),
            "mesh": str(s.mesh), "chips": json_value(s.chips),
            "weight_bytes": json_value(s.weight_bytes), "kv_bytes_per_token": json_value(s.kv_bytes_per_token),
            "kv_bytes_per_sequence": json_value(s.kv_bytes_per_sequence), "kv_bytes": json_value(s.kv_bytes),
            "kv_split": json_value(s.kv_split), "memory_per_chip": json_value(s.memory_per_chip), "fits": s.fits,
            "max_batch": json_value(s.max_batch), "memory_time_s": json_value(s.memory_time),
            "math_time_s": json_value(s.math_time), "comm_time_s": json_value(s.comm_time),
            "step_time_s": json_value(s.step_time), **_expected_serving(s), "regime": regime,
            "throughput_tokens_per_s": json_value(s.throughput) if regime is not None else None,
            "compute_bound_batch": json_value(s.compute_bound_batch) if regime is not None else None,
            "prefill_time_s": json_value(s.prefill_time), "collectives": colls, "notes": _notes_json(s.notes),
            "kv_shard": s.kv_shard, "kv_shard_means": str(KV_SHARDINGS[s.kv_shard]),
            "kv_bytes_per_chip": json_value(s.kv_bytes_per_chip), "decode": s.decode,
            "decode_means": str(DECODES[s.decode]), "kv_time_s": json_value(s.kv_time),
            "weights_time_s": json_value(s.weights_time),
            "network": None if s.network is None or s.network.binding is None else {
                "binding": s.network.binding.binding.fabric.value,
                "bandwidth": json_value(s.network.binding.bandwidth),
                "levels": [{"fabric": lv.fabric.value, "devices": json_value(lv.devices),
                            "bandwidth": json_value(lv.bandwidth)} for lv in s.network.binding.levels]},
        },
        "tp_limits": None if limits is None else {
            "prefill": {"condition": limits[0].condition.text(), "bound": json_value(limits[0].at(limits[2]))},
            "decode": {"condition": limits[1].condition.text(), "bound": json_value(limits[1].at(limits[2]))}},
        "weight_stationary": None if ws is None else {
            "one_d": pretty(ws[0].one_d_time), "two_d": pretty(ws[0].two_d_time), "best_x": pretty(ws[0].best_x),
            "crossover": ws[0].crossover.text(),
            "crossover_chips": json_value(as_expr(ws[0].crossover_chips).xreplace(ws[1]))},
    }  # fmt: skip
    return "\n".join(lines), data


def _expected_serving(s) -> dict:
    """The expected times beside the bound's (``step_time_s``, ``prefill_time_s`` stay the bound's), with the
    decode step's kernels; nothing on a chip without attained rates."""
    from ..machines.chips import attained_rates

    step, prefill = s.expected_step_time, s.expected_prefill_time
    out: dict = {}
    if step is not None:
        rates = attained_rates(s.hardware, s.dtype)
        out["expected_step_time_s"] = json_value(step)
        out["expected_throughput_tokens_per_s"] = json_value(s.expected_throughput)
        out["expected_kernels"] = [{"kernel": k.name, "runs": json_value(k.runs), "flops": json_value(k.flops),
                                    "hbm_bytes": json_value(k.hbm_bytes),
                                    "expected_time_s": json_value(k.expected_time(rates))}
                                   for k in s.decode_kernels]  # fmt: skip
    if prefill is not None:
        out["expected_prefill_time_s"] = json_value(prefill)
    return out


def _memory_bound(language: str) -> str:
    if language == "en":
        return "memory-bound"
    from ..i18n import term

    return term("memory_bound", language)


# -- the command's entry point ---------------------------------------------------------------------------


def model_report(
    name: str,
    *,
    mode: str = "describe",
    sizes: Mapping[str, object] | None = None,
    hardware=None,
    tokens: object = None,
    chips: object = None,
    mfu: object = None,
    batch: object = None,
    policy: object = "mlp",
    optimizer: str = "adam",
    gradients: bool = False,
    context: object = None,
    mesh: object = None,
    dtype: str = "bf16",
    kv_dtype: str | None = None,
    overlap: str = "axes",
    language: str = "en",
    stages: object = None,
    microbatches: object = None,
    kv_shard: str = "heads",
    decode: str = "overlap",
) -> tuple[str, dict]:
    """Everything ``symshard model NAME`` prints: ``mode`` is ``describe``, ``train`` or ``serve``.

    Training gives every scheme's roofline (through a GPU network's levels for ``chips``; the pipelined
    schemes with ``stages``); serving splits the KV cache as ``kv_shard`` says and combines a decode step
    as ``decode`` says.

    Raises:
        ModelError, UnknownPresetError, UnknownHardwareError, PlanError: bad input.
    """
    from ..models.transformer import model

    m = model(name)
    if sizes:
        m = m.with_sizes(**sizes)
    if mode == "describe":
        return model_text(m, language), model_data(m)
    if mode == "train":
        return _train(m, hardware=hardware, tokens=tokens, chips=chips, mfu=mfu, batch=batch, policy=policy,
                      optimizer=optimizer, gradients=gradients, context=context, dtype=dtype, overlap=overlap,
                      language=language, stages=stages, microbatches=microbatches)  # fmt: skip
    return _serve(m, hardware=hardware, batch=batch, context=context, mesh=mesh, chips=chips, dtype=dtype,
                  kv_dtype=kv_dtype, language=language, kv_shard=kv_shard, decode=decode)  # fmt: skip


def _train(m, *, hardware, tokens, chips, mfu, batch, policy, optimizer, gradients, context, dtype, overlap, language,
           stages=None, microbatches=None):  # fmt: skip
    from ..models.parallelism import roofline, rooflines
    from ..models.training import train
    from ..models.transfers import slice_totals
    from ..models.verdicts import best_split, verdict

    run = train(m, tokens=tokens, chips=chips, hardware=hardware, mfu=mfu, batch=batch, policy=policy,
                optimizer=optimizer, gradients=gradients, dtype=dtype, context=context)  # fmt: skip
    roofs = rooflines(hardware=run.hardware, model=m, overlap=overlap, dtype=dtype,
                      chips=run.chips if run.chips.is_number else None, stages=stages,
                      microbatches=microbatches)  # fmt: skip
    roofs = tuple(r for r in roofs if r.scheme != "expert" or m.is_moe)
    verdicts, split = [], None
    if run.hardware is not None and run.batch is not None and run.chips.is_number:
        for scheme in ("dp", "fsdp", "fsdp+tp"):
            try:
                verdicts.append(verdict(scheme, batch=run.batch, chips=run.chips, model=m, hardware=run.hardware,
                                        overlap=overlap, dtype=dtype))  # fmt: skip
            except SymshardError:
                continue
        split = best_split(run.batch, run.chips, model=m, hardware=run.hardware, overlap=overlap, dtype=dtype)
        if any(r.inside_one_domain is not None for r in roofs):  # a GPU: FSDP × TP's numbers at the best split
            at = roofline("fsdp+tp", hardware=run.hardware, model=m, overlap=overlap, dtype=dtype,
                          mesh={"X": split.x, "Y": split.y})  # fmt: skip
            roofs = tuple(at if r.scheme == "fsdp+tp" else r for r in roofs)
    totals = slice_totals(run.hardware, int(run.chips)) if run.hardware is not None and run.chips.is_number else None
    return training_report(run, roofs, verdicts, split, totals, language)


def _serve(m, *, hardware, batch, context, mesh, chips, dtype, kv_dtype, language, kv_shard="heads", decode="overlap"):
    from ..algebra.symbols import W_nvlink, dim
    from ..models.inference import decode_tp_limit, prefill_tp_limit, serve, weight_stationary

    s = serve(m, batch=batch, context=context, mesh=mesh, chips=chips, hardware=hardware, dtype=dtype,
              kv_dtype=kv_dtype, kv_shard=kv_shard, decode=decode)  # fmt: skip
    fabric = "ici" if s.hardware is None or s.hardware.ici_link_bandwidth is not None else "nvlink"
    values = dict(s.values)
    values[sympy.Symbol("M_Y", positive=True, integer=True)] = sympy.Integer(len(s.mesh.axes))
    if s.network is not None and s.network.binding is not None:  # a GPU slice: W is the binding level's
        values[W_nvlink] = s.network.binding.bandwidth
        values[sympy.Symbol("M_Y", positive=True, integer=True)] = sympy.Integer(1)
    values[dim("B")] = s.batch
    limits = (prefill_tp_limit(fabric=fabric), decode_tp_limit(fabric=fabric), values) if s.hardware else None
    ws = (weight_stationary(fabric=fabric), {dim("D"): m.d_model, dim("F"): m.d_ff})
    return serving_report(s, limits, ws, language)

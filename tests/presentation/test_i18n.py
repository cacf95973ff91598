"""Chinese problem text: same variants as English, fully translated, with the glossary's terms.

For every family and 100 seeds: the Chinese variant renders, its answer records (names, values,
units, tolerances, the values of the common mistakes) are the English variant's, no English
sentence is left in its statement, hints, solution, labels or feedback (math, code, notation,
chip and collective names excepted; a figure's drawing is shared between languages, its alt
text is not), and no wording the glossary says to avoid appears.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from helpers import english_left

from symshard.errors import UsageError
from symshard.i18n import LANGUAGES, glossary, term, ui
from symshard.problems import families, variant
from symshard.problems.writers import to_json, to_moodle

SEEDS = range(100)
FAMILIES = sorted(families())


def _answers(p):
    return [(a.name, repr(a.value), a.unit, a.rel_tol, [repr(m.value) for m in a.mistakes]) for a in p.answers]


def _texts(p):
    yield "statement", p.statement
    for i, h in enumerate(p.hints, 1):
        yield f"hint {i}", h
    yield "solution", p.solution
    yield "title", p.title
    yield "objective", p.objective
    for a in p.answers:
        yield f"label {a.name}", a.label
        for m in a.mistakes:
            yield f"feedback {a.name}", m.feedback


def test_glossary_has_every_term_in_both_languages():
    terms = glossary()
    assert len(terms) >= 40
    for key, entry in terms.items():
        for lang in LANGUAGES:
            assert str(entry[lang]).strip(), (key, lang)
    assert term("contracting_dimension", "zh") == "收缩维度"  # the chapter's own term
    assert term("shard", "zh") == "分片"
    assert ui("hint", "zh", k=1) == "提示 1" and ui("solution", "en") == "Solution"
    with pytest.raises(UsageError, match="no glossary term 'shards'"):
        term("shards", "zh")
    with pytest.raises(UsageError, match="unknown language 'fr'"):
        term("shard", "fr")


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_has_chinese_text(name):
    assert "zh" in families()[name].languages


@pytest.mark.parametrize("name", FAMILIES)
def test_chinese_variants_match_english_and_are_translated(name):
    fam = families()[name]
    avoid = [(k, w) for k, e in glossary().items() for w in e.get("avoid", [])]  # type: ignore[union-attr]
    for seed in SEEDS:
        en, zh = variant(fam, seed, "en"), variant(fam, seed, "zh")
        assert zh.language == "zh" and zh.params == en.params
        assert _answers(zh) == _answers(en), (name, seed)
        assert len(zh.hints) == len(en.hints)
        assert [f for f, _ in zh.figures] == [f for f, _ in en.figures]
        for where, text in _texts(zh):
            english = english_left(text)
            assert english is None, f"{name} seed {seed} {where}: English left: {english!r}"
            assert re.search(r"[\u4e00-\u9fff]", text), f"{name} seed {seed} {where}: no Chinese at all"
            for key, word in avoid:
                assert word not in text, f"{name} seed {seed} {where}: '{word}' (glossary {key}: use {term(key, 'zh')})"


def test_exports_carry_the_language():
    chinese = [families()[n] for n in FAMILIES]
    problems = [variant(f, 3, "zh") for f in chinese[:4]]
    data = to_json(problems, seed=3)
    assert data["language"] == "zh" and all(p["language"] == "zh" for p in data["problems"])
    root = ET.fromstring(to_moodle(problems))
    questions = [q for q in root.findall("question") if q.get("type") != "category"]
    assert questions
    for q in questions:
        tags = [t.findtext("text") for t in q.iter("tag")]
        assert "lang:zh" in tags

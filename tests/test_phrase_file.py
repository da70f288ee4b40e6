"""The relevance phrase set (tests/search_phrases.yaml) is well formed and points at things the atlas has,
and the phrase file and the concept files read the same with the pure-Python and the C YAML loaders."""
from __future__ import annotations

import re

import pytest
import yaml

from atlas.model.checks import check
from atlas.model.load import load_data
from conftest import DATA, ROOT

PHRASES = ROOT / "tests" / "search_phrases.yaml"
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def phrases():
    return yaml.safe_load(PHRASES.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def known():
    atlas = check(load_data(DATA)).atlas
    return {
        "concept": {c.id for c in atlas.concepts},
        "claim": {c.id for c in atlas.claims},
        "flow": {f.id for f in atlas.flows},
        "repo": {r.id for r in atlas.repositories},
    }


def test_shape_and_size(phrases):
    assert isinstance(phrases, list) and len(phrases) >= 60
    for row in phrases:
        assert set(row) <= {"phrase", "expect", "also", "page"}, row
        assert isinstance(row["phrase"], str) and row["phrase"].strip() == row["phrase"] != ""
        assert row["page"] in range(1, 11), row
    seen = [row["phrase"].casefold() for row in phrases]
    assert len(seen) == len(set(seen)), "a phrase is listed twice"


def test_both_languages_and_every_page(phrases):
    zh = sum(1 for row in phrases if HAN.search(row["phrase"]))
    en = len(phrases) - zh
    assert zh >= 0.4 * len(phrases) and en >= 0.4 * len(phrases), (en, zh)
    assert {row["page"] for row in phrases} == set(range(1, 11))


def test_every_answer_exists(phrases, known):
    missing = []
    for row in phrases:
        for target in [row["expect"], *row.get("also", [])]:
            kind, _, ident = target.partition(":")
            if ident not in known.get(kind, ()):
                missing.append(f'{row["phrase"]!r} -> {target}')
        assert row["expect"] not in row.get("also", []), row
    assert missing == []


def test_concepts_and_phrases_read_alike_with_both_yaml_loaders():
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML built without libyaml")
    differ = []
    for path in sorted((DATA / "concepts").rglob("*.yaml")) + [PHRASES]:
        text = path.read_text(encoding="utf-8")
        if yaml.load(text, Loader=yaml.SafeLoader) != yaml.load(text, Loader=yaml.CSafeLoader):
            differ.append(str(path.relative_to(ROOT)))
    assert differ == []

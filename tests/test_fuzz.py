"""Property test: random YAML-like input never escapes as anything but problems with a location."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.model.checks import check
from atlas.errors import AtlasError
from atlas.index.compiled import load_atlas
from atlas.model.load import load_data
from conftest import MINI

KEYS = ["id", "kind", "names", "aliases", "answers", "beginner", "professional", "relations",
        "evidence", "probes", "lifecycle", "hardware", "en", "zh", "type", "target", "pin", "url"]
scalars = st.one_of(st.sampled_from(["x", "bus-x", "link", "", "~", "1", "yes", "2026-09-01",
                                     "&a", "*a", "!!binary", "[", "{", ":", "-", "'", '"', "#",
                                     "example/hccl@" + "a" * 40 + ":f#L1", "直驱", "ＢＸ", "\t"]),
                    st.text(max_size=8))
lines = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(KEYS + ["- ", "-"]),
                           st.sampled_from([": ", ":", " ", ": [", ": {"]), scalars),
                 min_size=0, max_size=12)


def render(parts):
    return "\n".join("  " * ind + key + sep + val for ind, key, sep, val in parts)


def problems_with(where: str, raw: bytes, also_load: bool = False):
    """Load a copy of the mini atlas with `raw` written at `where`; assert only located problems."""
    tmp = Path(tempfile.mkdtemp())
    try:
        data = tmp / "data"
        shutil.copytree(MINI, data)
        target = data / where
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(raw)
        for p in check(load_data(data)).problems:
            assert p.location.file and p.code != "check-crashed", str(p)
        if also_load:
            try:
                load_atlas(data, use_cache=False)
            except AtlasError as exc:
                assert exc.location is not None
                assert all(p.location.file for p in exc.problems)
    finally:
        shutil.rmtree(tmp)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines, st.sampled_from(["concepts/x/fz.yaml", "claims/fz.yaml", "flows/fz.yaml",
                               "repositories/fz.yaml", "timeline.yaml", "questions.yaml"]))
def test_random_input_gives_only_located_problems(parts, where):
    problems_with(where, render(parts).encode("utf-8"), also_load=True)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes(raw):
    problems_with("concepts/x/raw.yaml", raw)


# Structured documents: random nesting of the schema's own keys, so the parsers' insides are reached.
leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
    ["bus-x", "lib-c", "link", "move", "uses", "has-part", "example/hccl", "read-in-source",
     "example/hccl@" + "b" * 40 + ":a.c#L2-L1", "example/hccl@" + "c" * 40 + ":a.c#L3",
     "https://example.org", "2026-09-01T00:00:00+00:00", "", "直驱", "ＢＸ", "x"]))
doc = st.recursive(leaf, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(st.sampled_from(KEYS + ["from", "to", "steps", "edges",
                                                                       "claims", "repositories",
                                                                       "sightings", "found", "sha",
                                                                       "method", "value", "status",
                                                                       "about", "statement"]),
                                                kids, max_size=6)), max_leaves=25)


@settings(max_examples=200, deadline=None)
@given(doc, st.sampled_from(["concepts/x/fz.yaml", "claims/fz.yaml", "flows/fz.yaml",
                             "repositories/fz.yaml", "timeline.yaml"]))
def test_random_structured_documents(value, where):
    import yaml

    problems_with(where, yaml.safe_dump(value, allow_unicode=True).encode("utf-8"))

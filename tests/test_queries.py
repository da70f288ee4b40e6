"""Query resolution in both languages, search filters, walks, matrix and comparison (mini atlas)."""
from __future__ import annotations

import pytest

from atlas.view import queries
from atlas.errors import AtlasError


@pytest.mark.parametrize("args, ids", [
    (["kind:library"], ["lib-c", "lib-n", "lib-s"]),
    (["answers:peer"], ["bus-x", "lib-c", "lib-s"]),
    (["status:pending-deprecation"], ["lib-c"]),
    (["hw:board-a", "kind:engine"], ["engine-u"]),
    (["repo:example/hccl"], ["bus-x", "core-v", "lib-c"]),
    (["rel:uses:bus-x"], ["lib-c"]),
    (["rel:used-by:lib-c"], ["bus-x", "net-y"]),
    (["rel:alternative-to:net-y"], ["bus-x"]),
    (["kind:link", "engine"], ["bus-x"]),          # free text in explanations
    (["answers:address", "偏移"], ["lib-s"]),        # Chinese substring
    (["text:doorbell"], ["core-v"]),
])
def test_filters(mini_atlas, args, ids):
    filters, text = queries.parse_filters(args)
    assert sorted(r["id"] for r in queries.search(mini_atlas, filters, text)) == ids


def test_bad_filter_value_is_an_atlas_error(mini_atlas):
    with pytest.raises(AtlasError, match='unknown kind "lnk"'):
        queries.search(mini_atlas, [("kind", "lnk")])


def test_related_depth(mini_atlas):
    rows = queries.related(mini_atlas, mini_atlas.concept("lib-s"), depth=2)
    assert {(r["depth"], r["id"]) for r in rows} >= {(1, "lib-c"), (1, "core-v"), (2, "engine-u")}
    only = queries.related(mini_atlas, mini_atlas.concept("lib-s"), rel="uses")
    assert [r["id"] for r in only] == ["core-v"]


def test_path_prints_direction(mini_atlas):
    steps = queries.path(mini_atlas, mini_atlas.concept("lib-n"), mini_atlas.concept("engine-u"))
    from atlas.terminal.render import path
    assert path("lib-n", "engine-u", steps) == \
        "lib-n -analogous-to-> lib-c -uses-> bus-x <-moves-over- engine-u"


def test_questions_matrix(mini_atlas):
    result = queries.questions(mini_atlas)
    rows = {r["id"]: set(r["answers"]) for r in result["rows"]}
    assert rows["bus-x"] == {"link", "peer"} and "lib-n" not in rows


def test_compare(mini_atlas):
    result = queries.compare(mini_atlas, [mini_atlas.concept(i) for i in ("lib-c", "lib-s", "bus-x")])
    assert [c["id"] for c in result["concepts"]] == ["lib-c", "lib-s", "bus-x"]
    assert result["concepts"][0]["lifecycle"] == "pending-deprecation"
    assert result["concepts"][2]["first_visible"]["precision"] == "on-or-before"


def test_flow_order(mini_atlas):
    f = queries.flow(mini_atlas, "put-signal")
    assert [s["id"] for s in f["steps"]] == ["init", "put", "wait"]
    with pytest.raises(AtlasError, match="no flow"):
        queries.flow(mini_atlas, "get-wait")


def test_claims(mini_atlas):
    assert [c["id"] for c in queries.claims(mini_atlas, mini_atlas.concept("lib-s"))] == ["lib-s-fast"]
    assert [c["id"] for c in queries.claims(mini_atlas, status="confirmed")] == ["not-layers"]

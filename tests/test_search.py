"""The ranked bilingual search, `query` choosing card or list, `claims TOPIC`, `flow NAME`, `repo`,
cards' repositories and lifecycle notes, and one displayed day per sighting (mini and bundled atlas)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.view.views import search_documents
from atlas.text import norm, squash
from atlas.view import queries, terms as resolve, views
from atlas.index import search
from atlas.cli import cli
from atlas.errors import AtlasError
from conftest import DATA, write

PHRASES = Path(__file__).resolve().parent / "search_phrases.yaml"


def run(*args, code=0, env=None):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def bundled():
    """The bundled atlas and its search index, compiled once into the session's cache (the CLI
    tests below read the same files)."""
    from atlas.opened import Opened

    opened = Opened(DATA)
    return opened.atlas, opened.compiled.search


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Put/Get", ["put", "get"]),
    ("build flags", ["build", "flag"]),
    ("topology fan-out", ["topology", "fan", "out", "fanout"]),
    ("USE_ASCEND", ["use", "ascend", "useascend"]),
    ("ＨＣＣＬ", ["hccl"]),
    ("尾延迟", ["尾延", "延迟"]),
    ("核", ["核"]),
    ("SQ/CQ 生命周期", ["sq", "cq", "生命", "命周", "周期"]),
])
def test_query_tokens(text, expected):
    assert search.tokens(text, query=True) == expected


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab9Z_-. ./é\u0301ß２十尾延迟豈\u3400\u4dbf\u9fff\ufaff\u2160"
                                            "①,;'’?？。\t\n")), max_size=40) | st.text(max_size=40))
def test_a_query_is_cut_by_hand_into_the_runs_the_pattern_finds(text):
    import re
    import unicodedata

    from atlas.ask import tokens as module

    folded = unicodedata.normalize("NFKC", text).casefold()
    pattern = re.compile(module._RUN_PATTERN)
    assert module._scan(folded) == [(m.group(1) or "", m.group(2) or "") for m in pattern.finditer(folded)]
    assert module._runs(folded, True) == module._runs(folded, False)


def test_a_chinese_phrase_inside_a_longer_sentence_matches(mini_atlas):
    index = search.build(mini_atlas)
    hits = index.search("规约")  # inside lib-c's "让多张卡一起做规约。"
    assert hits[0]["id"] == "lib-c" and "规约" in hits[0]["snippet"]["text"]


# ---------------------------------------------------------------------------------------------
# The engine against a slow, obvious definition
# ---------------------------------------------------------------------------------------------

def _osa(a: str, b: str) -> int:
    """Optimal-string-alignment distance (Damerau-Levenshtein with adjacent swaps), by the table."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def _spellings(token: str) -> set[str]:
    """Every word whose search token is `token` (the plural folding undone)."""
    from atlas.ask.tokens import stem

    out = {token, token + "s", token + "es"} | ({token[:-1] + "ies"} if token.endswith("y") else set())
    return {w for w in out if stem(w) == token}


def _typo_groups(text, query, df):
    """Each query token as its alternatives: itself, or for a Latin word no document holds, the
    most frequent indexed tokens of words one edit away; and {typo word: its alternatives}."""
    from atlas.ask.spelling import MAX_ALTERNATIVES, eligible
    from atlas.ask.tokens import latin_words

    typed = {t: w for w, t in latin_words(text) if eligible(w) and t not in df}
    groups, near_words = [], {}
    for t in query:
        near = {u for u in df if any(_osa(typed[t], w) == 1 for w in _spellings(u))} if t in typed else set()
        if near:
            groups.append(set(sorted(near, key=lambda u: (-df[u], u))[:MAX_ALTERNATIVES]))
            near_words[typed[t]] = groups[-1]
        else:
            groups.append({t})
    return groups, near_words


def _name_keys(text, near_words):
    """The keys a text names records by, and those it names with one of its typos corrected."""
    keys = {k for k in (norm(text), squash(text)) if k}
    if not 0 < len(near_words) <= 3:
        return keys
    for typo, alts in near_words.items():
        for w in (w for u in alts for w in _spellings(u) if _osa(typo, w) == 1):
            fixed = norm(text).replace(typo, w, 1)
            keys |= {k for k in (norm(fixed), squash(fixed)) if k}
    return keys


def _brute(atlas, text):
    """Every document named by the text (or by it with one typo corrected), or holding at least half
    of the query's tokens above the score floor, every place of every document read in Python."""
    docs = search_documents(atlas)
    cols = [{col: {t for _, s in d[col] for t in search.tokens(s)} for col in search.COLUMNS} for d in docs]
    df: dict[str, int] = {}
    for c in cols:
        for t in set().union(*c.values()):
            df[t] = df.get(t, 0) + 1
    query = search.query_tokens(text)
    groups, near_words = _typo_groups(text, query, df)
    keys = _name_keys(text, near_words)
    corrected = {i for i, t in enumerate(query) if groups[i] != {t}}
    held = []
    for c in cols:
        places = [set().union(*c.values()), c["names"], c["names"] | c["head"], c["names"] | c["head"] | c["body"]]
        held.append(tuple({i for i, g in enumerate(groups) if g & place} for place in places))
    name_words = {i for h in held for i in h[1]}
    out = set()
    for d, h in zip(docs, held):
        named = any(k in {norm(x), squash(x)} for x in d["keys"] if x for k in keys)
        if named or search.above_floor(len(groups), d["type"], h, name_words, corrected):
            out.add((d["type"], d["id"]))
    return out


_WORDS = ["the", "of", "bus", "x", "总线", "engine", "对称", "库", "put", "get", "doorbell", "core", "links",
          "测试", "lib-s", "Board A", "stack", "layers", "规约", "signal", "repository", "network", "网络",
          "nothing", "卡", "Vector", "S", "cores", "md", "example",
          # one-edit typos, and words only a pin's sentence or path holds
          "doorbel", "engnie", "singal", "vectro", "Boadr", "bux-x", "libary", "repositroy", "descriptros"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3))
def test_search_finds_exactly_what_the_slow_definition_finds(mini_atlas, words):
    index = _mini_index(mini_atlas)
    text = " ".join(words)
    hits = index.search(text, limit=10_000)
    assert {(h["type"], h["id"]) for h in hits} == _brute(mini_atlas, text)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


_INDEXES: dict = {}


def _mini_index(atlas):
    if "mini" not in _INDEXES:
        _INDEXES["mini"] = search.build(atlas)
    return _INDEXES["mini"]


def test_exact_names_come_first_then_words_in_names(mini_atlas):
    hits = search.build(mini_atlas).search("collective library")
    assert hits[0]["id"] == "lib-c"           # all words in its name
    assert "lib-n" in [h["id"] for h in hits]  # its explanation says "collective library"
    assert search.build(mini_atlas).search("BX")[0]["score"] >= 100


# ---------------------------------------------------------------------------------------------
# query TEXT: a card only when the text names one concept (no confident prefix over better hits)
# ---------------------------------------------------------------------------------------------

def test_a_prefix_of_one_name_inside_another_name_gives_a_ranked_list(mini):
    """The CCU case: "Collective Library" starts lib-c's name and sits inside another's."""
    write(mini / "concepts" / "x" / "lib-v.yaml",
          "id: lib-v\nkind: library\nnames: {en: Vendor Collective Library, zh: 厂商集合库}\n"
          "beginner: {en: \"Another library.\", zh: \"另一个库。\"}\n"
          "professional: {en: \"For the test.\", zh: \"测试用。\"}\nhardware: [any]\n"
          "evidence:\n  - url: https://example.org/lib-v\n    confidence: second-hand\n")
    out = json.loads(run("query", "collective", "library", "--data", str(mini), "--format", "json"))
    assert {h["id"] for h in out["hits"][:2]} == {"lib-c", "lib-v"}
    assert "Collective Library C" not in run("query", "collective", "library", "--data", str(mini)).split(
        "\n")[0]
    # an exact name still opens its card; a confident prefix too
    assert run("query", "Vendor Collective Library", "--data", str(mini)).startswith("Vendor Collective")
    assert run("query", "Vendor Coll", "--data", str(mini)).startswith("Vendor Collective")


def test_collective_communication_never_opens_ccu(bundled):
    atlas, index = bundled
    for text in ("collective communication", "集合通信", "Collective Communication"):
        ident = resolve.exact_id(atlas.concept_by_id, atlas.name_index, atlas.loose_index, text)
        prefix = resolve.prefix_id(atlas.name_index, atlas.loose_index, text)
        assert ident != "ccu" and prefix != "ccu", text
        hits = index.search(text)
        assert hits and hits[0]["id"] != "ccu", (text, hits[:3])


def test_query_cli_ranked_list_text_and_json(mini):
    out = run("query", "doorbell", "descriptors", "--data", str(mini))
    assert out.startswith('1 result(s) for "doorbell descriptors"') and "core-v" in out
    js = json.loads(run("query", "对称", "偏移", "--data", str(mini), "--format", "json"))
    assert js["query"] == "对称 偏移"
    first = js["hits"][0]
    assert set(first) == {"type", "id", "name", "score", "snippet"}
    assert (first["type"], first["id"]) == ("concept", "lib-s") and "偏移" in first["snippet"]["text"]


def test_fast_launcher_prints_the_ranked_list_the_click_cli_prints(mini):
    env = dict(os.environ, COLUMNS="90", ATLAS_DATA=str(mini))
    for args in (["query", "doorbell"], ["query", "对称", "偏移", "--lang", "zh"],
                 ["query", "collective", "library", "--format", "json"], ["query", "甲卡"]):
        fast = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, env=env)
        slow = CliRunner().invoke(cli, args, env={"ATLAS_DATA": str(mini), "COLUMNS": "90"},
                                  catch_exceptions=False)
        assert fast.returncode == 0 == slow.exit_code, (args, fast.stderr)
        assert fast.stdout == slow.output, args


# ---------------------------------------------------------------------------------------------
# Relevance: the phrases a reader of the seed types
# ---------------------------------------------------------------------------------------------

def test_relevance_of_the_seed_phrases(bundled):
    if not PHRASES.is_file():
        pytest.skip("tests/search_phrases.yaml is not in this tree")
    phrases = yaml.safe_load(PHRASES.read_text(encoding="utf-8"))
    assert len(phrases) >= 60
    assert {p.get("page") for p in phrases} >= set(range(1, 11))
    result = search.relevance(bundled[1], phrases)
    print(f"top-1 {result['top1']:.1%}  top-3 {result['top3']:.1%} of {result['phrases']}")
    assert result["top1"] >= 0.90, result["misses"]
    assert result["top3"] >= 0.98, result["misses"]


# ---------------------------------------------------------------------------------------------
# claims TOPIC, flow NAME, repo
# ---------------------------------------------------------------------------------------------

def test_claims_topic_ranks_text_and_about(bundled):
    atlas, index = bundled
    mooncake = [c["id"] for c in queries.claims_topic(atlas, index, "Mooncake")]
    assert {"mooncake-flags-not-aiv-direct-drive", "mooncake-three-paths-are-history",
            "use-ubshmem-does-not-call-shmem"} <= set(mooncake[:4])
    assert queries.claims_topic(atlas, index, "tail latency")[0]["id"] == "bottleneck-tail-latency"
    deepep = [c["id"] for c in queries.claims_topic(atlas, index, "DeepEP")]
    bottlenecks = {c.id for c in atlas.claims if c.id.startswith("bottleneck-")}
    assert len(bottlenecks) == 5 and bottlenecks <= set(deepep)
    hyp = queries.claims_topic(atlas, index, "DeepEP", status="hypothesis")
    assert {c["id"] for c in hyp} == bottlenecks
    # a strong match drops the far tail: stray shared words do not list every claim
    assert [c["id"] for c in queries.claims_topic(atlas, index, "尾延迟")] == ["bottleneck-tail-latency"]
    assert len(queries.claims_topic(atlas, index, "hccl")) < len(atlas.claims) // 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["hccl", "DeepEP", "Mooncake", "build flags", "direct drive", "doorbell", "尾延迟",
                        "UDMA", "单边", "SHMEM", "quiet", "拓扑"]))
def test_claims_for_a_topic_keep_the_share_of_the_best_score(bundled, topic):
    atlas, index = bundled
    rows = queries.claims_topic(atlas, index, topic)
    if rows:
        scores = [r["score"] for r in rows]
        assert scores == sorted(scores, reverse=True)
        assert min(scores) >= round(scores[0] * queries.CLAIMS_FLOOR, 4) - 1e-4


def test_claims_cli_topic_and_miss(mini):
    out = run("claims", "lib-s", "--data", str(mini))
    assert out.startswith("[hypothesis] lib-s-fast")
    assert "no claims match" in run("claims", "zzz", "--data", str(mini), code=1)


def test_flow_by_title_prefix_words_and_miss(bundled, mini_atlas):
    atlas, index = bundled
    assert queries.flow(atlas, "DualPath", index)["id"] == "dualpath-kv-loading"
    zh = atlas.flow_by_id["minimal-shmem-link"].title.zh
    assert queries.flow(atlas, zh, index)["id"] == "minimal-shmem-link"
    assert queries.flow(atlas, "mooncake ascend", index)["id"] == "mooncake-ascend-paths"
    with pytest.raises(AtlasError) as info:
        queries.flow(atlas, "dualpth kv", index)
    assert "dualpath-kv-loading" in info.value.hint
    assert queries.flow(mini_atlas, "put-signa")["id"] == "put-signal"   # a unique prefix


def test_repo_shows_purpose_mirror_migration_and_harvest():
    out = run("repo", "hicann/shmem", "--data", str(DATA), env={"COLUMNS": "120"})
    timeline = yaml.safe_load((DATA / "timeline.yaml").read_text(encoding="utf-8"))
    h = next(r for r in timeline["repositories"] if r["repo"] == "hicann/shmem")
    repos = yaml.safe_load((DATA / "repositories" / "cann.yaml").read_text(encoding="utf-8"))
    r = next(x for x in repos["repositories"] if x["id"] == "hicann/shmem")
    assert r["purpose"]["en"].split(",")[0] in out
    assert f"mirror of:     {r['mirror_of']}" in out
    assert "migrated from: " + ", ".join(r["migrated_from"]) in out
    assert h["head"] in out and f"cut-off head  {h['cutoff_head']}" in out
    found = sum(1 for s in timeline["sightings"] if s["repo"] == "hicann/shmem" and s["found"])
    assert re.search(rf"Probes: {found} of \d+ found", out)
    js = json.loads(run("repo", "HICANN/SHMEM", "--data", str(DATA), "--format", "json"))
    assert js["harvest"]["skipped_paths"] == h["skipped_paths"] and js["status"] == r["status"]
    listing = run("repo", "--data", str(DATA))
    assert "hicann/shmem" in listing and "repositories; show one with" in listing
    miss = CliRunner().invoke(cli, ["repo", "shmem", "--data", str(DATA)])  # hicann/ and cann/
    assert miss.exit_code == 1 and "hicann/shmem" in str(miss.exception.hint)
    assert "several repositories are named" in miss.exception.message


def test_card_prints_the_lifecycle_note_and_the_repositories_behind_its_pins(bundled):
    atlas, _ = bundled
    hccl = atlas.concept("hccl")
    out = run("query", "hccl", "--data", str(DATA), env={"COLUMNS": "200"})
    assert hccl.lifecycle.status == "active" and hccl.lifecycle.note.en
    assert " ".join(("lifecycle note: " + hccl.lifecycle.note.en).split()) in " ".join(out.split())
    pinned = {e.pin.repo for e in hccl.evidence if e.pin}
    section = out.split("Repositories behind the pins")[1].split("\nEvidence")[0]
    assert pinned and all(f"  {r} (" in section or f"  {r}" in section for r in pinned)
    for r in pinned & set(atlas.repo_by_id):
        assert atlas.repo_by_id[r].status in section


# ---------------------------------------------------------------------------------------------
# One day per sighting: card, compare and timeline agree (the UTC day of the committer date)
# ---------------------------------------------------------------------------------------------

def test_card_compare_and_timeline_show_the_same_day():
    atlas = __import__("atlas.index.compiled", fromlist=["load_atlas"]).load_atlas(DATA)
    # a sighting whose local day differs from its UTC day
    s = next(s for s in atlas.sightings
             if s.found and atlas.first_visible(s.concept) is s
             and datetime.fromisoformat(s.committer_date).astimezone(timezone.utc).date().isoformat()
             != s.committer_date[:10])
    day = datetime.fromisoformat(s.committer_date).astimezone(timezone.utc).date().isoformat()
    d = ["--data", str(DATA)]
    env = {"COLUMNS": "200"}
    card = run("query", s.concept, *d, env=env)
    line = next(x for x in card.splitlines() if s.sha[:12] in x)
    assert line.split()[0] == day
    other = next(c.id for c in atlas.concepts if c.id != s.concept)
    compare = run("compare", s.concept, other, *d, env=env)
    assert f"{day} {s.repo} {s.sha[:10]}" in compare
    timeline = run("timeline", s.concept, *d, env=env)
    row = next(x for x in timeline.splitlines() if s.sha[:12] in x)
    assert row.split()[0] == day
    shown = {x.split()[0] for out in (card, timeline) for x in out.splitlines() if s.sha[:12] in x}
    assert shown == {day}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=30))
def test_any_text_searches_without_error(mini_atlas, text):
    for h in _mini_index(mini_atlas).search(text):
        assert h["type"] in search.TYPE_ORDER and isinstance(h["snippet"]["text"], str)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(day=st.dates(min_value=datetime(2023, 1, 1).date(), max_value=datetime(2026, 8, 26).date()),
       words=st.sampled_from(["direct drive", "写门铃", "memory"]))
def test_the_ranked_list_marks_what_was_not_yet_visible_as_of_a_day(bundled, day, words):
    atlas, _index = bundled
    as_of = day.isoformat()
    js = json.loads(run("query", words, "--as-of", as_of, "--format", "json"))
    concepts = [h for h in js["hits"] if h["type"] == "concept"]
    assert concepts, words
    for h in concepts:
        first = views.card(atlas, atlas.concept(h["id"]))["first_visible"]
        day_first = first and datetime.fromisoformat(first["date"]).astimezone(timezone.utc).date().isoformat()
        assert h["as_of"] == {"date": as_of, "first": day_first or None,
                              "visible": None if not day_first else day_first <= as_of}, h
    text = run("query", words, "--as-of", as_of)
    for h in concepts:
        line = next(ln for ln in text.splitlines() if f"  {h['id']}  " in ln or ln.endswith(f"  {h['id']}"))
        assert (f"[not yet visible on {as_of}; first {h['as_of']['first']}]" in line) == \
               (h["as_of"]["visible"] is False), line
    assert all("as_of" not in h for h in json.loads(run("query", words, "--format", "json"))["hits"])

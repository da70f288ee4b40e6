"""The view layer: every face shows the same facts of a record, because every face formats the same
view (atlas/view/views.py); a field added to a view reaches every face that shows views whole."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import atlas
from atlas.mcp import markdown
from atlas.terminal import render
from atlas.view import views
from atlas.index.cards import CardStore
from atlas.index.compiled import from_atlas
from atlas.site.pages import Lookups, concept_page
from atlas.site.network import build_explorer_network, explorer_card, explorer_data
from atlas.mcp.tools import CARD_SECTIONS, AtlasTools
from atlas.model.core import (
    QUESTION_IDS, Atlas, Concept, Evidence, Pin, Probe, Question, Relation, Repository, Sighting, Text,
)
from atlas.output import to_json

PKG = Path(atlas.__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# cards (mini atlas)
# ---------------------------------------------------------------------------------------------


def test_card_groups_relations_both_directions(mini_atlas):
    card = views.card(mini_atlas, mini_atlas.concept("bus-x"))
    groups = {g["relation"]: [c["id"] for c in g["concepts"]] for g in card["relations"]}
    assert groups == {"used-by": ["lib-c"], "carries": ["engine-u"], "alternative-to": ["net-y"]}
    assert {g["relation"]: g["type"] for g in card["relations"]}["used-by"] == "uses"
    assert card["claims"][0]["id"] == "not-layers"
    assert card["first_visible"]["repo"] == "example/hccl"
    assert card["labels"]["lib-c"] == views.text(mini_atlas.concept("lib-c").names)


def test_as_of_marks(mini_atlas):
    assert views.card(mini_atlas, mini_atlas.concept("bus-x"), "2024-12-31")["as_of"]["visible"] is False
    assert views.card(mini_atlas, mini_atlas.concept("bus-x"), "2025-01-02")["as_of"]["visible"] is True
    assert views.card(mini_atlas, mini_atlas.concept("net-y"), "2025-01-02")["as_of"]["visible"] is None


def test_one_definition_of_a_concepts_repositories(mini_atlas):
    """The card, the repo filter and the overview read the same list."""
    from atlas.view import queries
    from atlas.site.overview import overview_rows

    cards = {c["id"]: c for c in views.everything(mini_atlas)["cards"]}
    rows = {r["id"]: r for g in overview_rows(list(cards.values()), "2026-08-26") for r in g["rows"]}
    for c in mini_atlas.concepts:
        repos = views.concept_repositories(mini_atlas, c)
        assert [r["id"] for r in cards[c.id]["repositories"]] == repos
        assert rows[c.id]["repos"] == sorted(repos)
        for rid in repos:
            assert c.id in [r["id"] for r in queries.search(mini_atlas, [("repo", rid)])]


# ---------------------------------------------------------------------------------------------
# the same facts in every face (generated atlases)
# ---------------------------------------------------------------------------------------------

IDS = ["c-" + x for x in "abcdefgh"]
REPOS = ["own/alpha", "own/beta", "gamma/delta"]
WORD = st.text(alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789直驱总线对称内存引擎", min_size=2,
               max_size=8)
PHRASE = st.lists(WORD, min_size=1, max_size=4).map(" ".join)
SHA = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)


@st.composite
def evidence(draw):
    if draw(st.booleans()):
        start = draw(st.integers(1, 500))
        pin = Pin(draw(st.sampled_from(REPOS)), draw(SHA), draw(WORD) + "/" + draw(WORD) + ".h", start,
                  start + draw(st.integers(0, 30)))
        return Evidence(pin=pin, supports=Text(draw(PHRASE), draw(PHRASE)))
    return Evidence(url=f"https://example.org/{draw(WORD)}", supports=Text(draw(PHRASE), draw(PHRASE)),
                    confidence="second-hand")


@st.composite
def concept(draw, ident: str):
    answers = {q: Text(draw(PHRASE), draw(PHRASE)) for q in draw(st.sets(st.sampled_from(QUESTION_IDS)))}
    others = [i for i in IDS if i != ident]
    relations = [Relation(draw(st.sampled_from(["uses", "built-on", "alternative-to", "moves-over"])),
                          ident, target, evidence=draw(st.lists(evidence(), max_size=1)))
                 for target in draw(st.sets(st.sampled_from(others), max_size=3))]
    probes = [Probe(r, "term", draw(WORD)) for r in draw(st.sets(st.sampled_from(REPOS), max_size=2))]
    return Concept(ident, draw(st.sampled_from(["library", "link", "engine", "technique"])),
                   Text(draw(PHRASE), draw(PHRASE)), aliases={"en": draw(st.lists(PHRASE, max_size=2))},
                   answers=answers, beginner=Text(draw(PHRASE), draw(PHRASE)),
                   professional=Text(draw(PHRASE), draw(PHRASE)), relations=relations,
                   evidence=draw(st.lists(evidence(), max_size=3)), probes=probes)


@st.composite
def atlases(draw):
    concepts = [draw(concept(i)) for i in IDS[:draw(st.integers(2, len(IDS)))]]
    known = {c.id for c in concepts}
    for c in concepts:
        c.relations = [r for r in c.relations if r.target in known]
    sightings = []
    for c in concepts:
        for p in c.probes:
            day = draw(st.dates(min_value=__import__("datetime").date(2020, 1, 1),
                                max_value=__import__("datetime").date(2026, 8, 26)))
            found = draw(st.booleans())
            sightings.append(Sighting(c.id, p.repo, p.method, p.value, found, sha=draw(SHA) if found else "",
                                      committer_date=f"{day.isoformat()}T10:00:00+08:00" if found else ""))
    questions = [Question(q, Text(f"Q {q}", f"问 {q}")) for q in QUESTION_IDS]
    return Atlas(questions=questions, concepts=concepts, sightings=sightings,
                 repositories=[Repository(r, urls=[f"https://github.com/{r}"]) for r in REPOS[:2]])


def facts(card: views.Card) -> list[str]:
    """What every face of a card must show: its id and names, its answers, the concepts it is related
    to, its evidence, its repositories and the commits of its history."""
    out = [card["id"], card["names"]["en"], card["names"]["zh"]]
    out += [t for a in card["answers"].values() for t in (a["en"], a["zh"])]
    out += [x["id"] for g in card["relations"] for x in g["concepts"]]
    out += [e["source"] for e in card["evidence"]]
    out += [r["id"] for r in card["repositories"]]
    out += [h["sha"][:12] for h in card["history"] if h["found"]]
    return [f for f in out if f]


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", html.unescape(text))


class _Held:
    """An opened atlas that is already in hand (the MCP tools read `.atlas`, `.concept` and the `.key`
    their stored pages are kept under)."""

    def __init__(self, a: Atlas):
        self.atlas = a
        self.key = f"held-{id(a)}"

    def concept(self, term: str):
        from atlas.view import terms as resolve

        return resolve.concept(self.atlas, term)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(atlases(), st.data())
def test_every_face_shows_the_same_facts(tmp_path_factory, a, data):
    c = data.draw(st.sampled_from(a.concepts))
    card = views.card(a, c)
    questions = views.question_names(a)
    everything = views.everything(a)
    tools = AtlasTools()
    tools._opened = _Held(a)
    faces = {
        "json": to_json(card),
        "card store": to_json(CardStore(from_atlas(a)).card(c.id)),
        "terminal": render.card(card, questions, "all"),
        "markdown": markdown.card(card, questions),
        "mcp": "".join(to_json(tools.card(c.id, section=s)) for s in CARD_SECTIONS),  # every section
        "concept page": concept_page(card, Lookups(everything)),
    }
    for face, shown in faces.items():
        flat = _flat(shown)
        missing = [f for f in facts(card) if _flat(f) not in flat]
        assert not missing, f"the {face} of {c.id} lacks {missing}"
    net = build_explorer_network(everything["cards"])
    explorer = {x["id"]: x for x in explorer_data(everything, net, a.cutoff)["concepts"]}
    # the explorer's card is the view itself, in the CLI's keys, less what the page never shows
    # (site.network.explorer_card: the sightings, referenced names, locations, relation names)
    assert explorer[c.id] == explorer_card(card)
    assert {k: v for k, v in card.items() if k in explorer[c.id] and k != "relations"} == \
        {k: v for k, v in explorer[c.id].items() if k != "relations"}


# ---------------------------------------------------------------------------------------------
# a field added to a view once reaches every face that shows views whole
# ---------------------------------------------------------------------------------------------


def test_a_field_added_once_reaches_every_face(tmp_path, mini):
    site = tmp_path / "site-packages"
    shutil.copytree(PKG, site / "atlas", ignore=shutil.ignore_patterns("__pycache__"))
    views_py = site / "atlas" / "view/views.py"
    views_py.write_text(views_py.read_text(encoding="utf-8") + (
        "\n\n_plain_card = card\n\n\ndef card(atlas, c, as_of=None):\n"
        "    out = _plain_card(atlas, c, as_of)\n"
        "    out['marker'] = {'en': 'added once', 'zh': '只加一次'}\n"
        "    return out\n"), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(site), ATLAS_CACHE=str(tmp_path / "cache"))
    env.pop("ATLAS_DATA", None)

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=site)
        assert done.returncode == 0, done.stderr
        return done.stdout

    marker = {"en": "added once", "zh": "只加一次"}
    shown = json.loads(run("-m", "atlas", "query", "bus-x", "--format", "json", "--data", str(mini)))
    assert shown["marker"] == marker  # the terminal's JSON (through the card store)
    mcp = run("-c", "import json, sys; from atlas.mcp.tools import AtlasTools; "
                    f"print(json.dumps(AtlasTools({str(mini)!r}).card('bus-x')))")
    assert json.loads(mcp)["card"]["marker"] == marker  # the MCP tool (its summary section)
    run("-m", "atlas", "map", "-o", str(tmp_path / "out"), "--data", str(mini))
    page = (tmp_path / "out" / "explorer.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="atlas-data">(.*?)</script>', page, re.S).group(1))
    assert {c["id"]: c for c in data["concepts"]}["bus-x"]["marker"] == marker  # the explorer

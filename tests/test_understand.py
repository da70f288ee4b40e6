"""Query understanding (atlas/ask/understand.py, atlas/ask/querywords.yaml) and the answers of `atlas query`
(atlas/ask/answer.py): question words and particles, intents, typos in mixed queries, the honest miss, the
limits of a query, and the property over every concept name in every question template."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas import commands
from atlas.ask import understand
from atlas.cli import cli
from atlas.text import norm, squash
from conftest import DATA


@pytest.fixture(scope="module")
def opened():
    from atlas.opened import Opened

    return Opened(DATA)


def ask_json(text: str, data=DATA) -> tuple[dict, int]:
    done = commands.show(text, "en", "json", data)
    return json.loads(done.out), done.code


def ask_text(text: str, data=DATA) -> tuple[str, str, int]:
    env = {"COLUMNS": "120"}
    result = CliRunner().invoke(cli, ["query", *text.split(), "--data", str(data)], env=env)
    return result.stdout, result.stderr, result.exit_code


# ---------------------------------------------------------------------------------------------
# The word lists
# ---------------------------------------------------------------------------------------------

def test_the_word_lists_are_data_in_both_languages():
    raw = yaml.safe_load(understand.WORDS_FILE.read_text(encoding="utf-8"))
    assert understand.words().raw == raw  # the cached copy is the file
    for kind in ("history", "comparison", "claims", "definition"):
        assert raw["intents"][kind]["en"] and raw["intents"][kind]["zh"], kind
    assert set(raw["questions"]) == {"organize", "address", "submit", "move", "link", "peer"}
    for qid, forms in raw["questions"].items():
        assert forms["en"] and forms["zh"], qid
    assert raw["strip"]["en"] and raw["strip"]["zh"] and raw["strip"]["zh_edges"]
    assert all(len(ch) == 1 for ch in raw["strip"]["zh_edges"] + raw["strip"]["zh_split"])
    # an entry says one thing: never a cue of two kinds
    seen: dict[str, str] = {}
    groups = [(k, v) for k, v in raw["intents"].items()] + [(f"question:{q}", v) for q, v in raw["questions"].items()]
    for kind, forms in groups:
        for entry in forms["en"] + forms["zh"]:
            assert seen.setdefault(norm(entry), kind) == kind, (entry, kind, seen[norm(entry)])
    templates = raw["templates"]
    assert all("{X}" in t for t in templates) and "{X}" in templates
    zh = [t for t in templates if understand.language(t) == "zh"]
    assert len(zh) >= 10 and len(templates) - len(zh) >= 10


def test_an_english_entry_matches_whole_words_only():
    lists = understand.words()
    assert lists.cues.find("can hccs scan") == []  # "can" leads a yes/no question, not inside "scan"
    assert [k for _, _, k in lists.cues.find("who submits in x")] == ["question:submit"]
    assert [k for _, _, k in lists.cues.find("x 的任务由谁下发")] == ["question:submit"]


# ---------------------------------------------------------------------------------------------
# The property: every name of every concept, in every template, answers with that concept
# ---------------------------------------------------------------------------------------------

def _unambiguous_names(atlas):
    """(concept id, name) for every id, name and alias that names one concept only (a name two
    concepts share names neither)."""
    for c in atlas.concepts:
        for name in dict.fromkeys([c.id, *c.all_names()]):
            if len(atlas.name_index.get(norm(name), ())) == 1 and len(atlas.loose_index.get(squash(name), ())) == 1:
                yield c.id, name


def test_every_name_in_every_template_is_read_as_that_concept(opened):
    atlas = opened.atlas
    names = opened.cards.names
    templates = understand.words().templates
    wrong = []
    count = 0
    for ident, name in _unambiguous_names(atlas):
        for template in templates:
            reading = understand.read(template.replace("{X}", name), names)
            count += 1
            if reading.kind == "search" or reading.concepts[:1] != (ident,):
                wrong.append((template.replace("{X}", name), reading.kind, reading.concepts))
    print(f"{count} questions")
    assert count > 20_000 and wrong == []


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_asked_through_the_command_the_concept_comes_first(opened, data):
    pairs = data.draw(st.sampled_from(sorted(_unambiguous_names(opened.atlas))))
    ident, name = pairs
    template = data.draw(st.sampled_from(understand.words().templates))
    value, code = ask_json(template.replace("{X}", name))
    assert code == 0
    if "intent" not in value:  # the plain name: its card
        assert value["id"] == ident
        return
    assert value["intent"]["concepts"][:1] == [ident], value["intent"]
    first = next(h for h in value["hits"] if h["type"] == "concept")
    assert first["id"] == ident
    if value["intent"]["kind"] != "claims":  # claims: the concept's claims come before it
        assert (value["hits"][0]["type"], value["hits"][0]["id"]) == ("concept", ident)


# ---------------------------------------------------------------------------------------------
# The classes of the issue, as typed
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["hccs 是什么", "what is hccs", "HCCS是什么？", "什么是 HCCS", "tell me about hccs"])
def test_question_words_and_particles_do_not_derail(text):
    value, code = ask_json(text)
    assert code == 0 and value["intent"]["kind"] == "definition" and value["answer"]["id"] == "hccs"
    out, _, _ = ask_text(text)
    assert out.startswith("HCCS (Huawei Cache Coherence System)")  # the card, as for the bare term


def test_history_answers_with_the_named_concepts_first_visible_day(opened):
    card = opened.cards.card("hccs")
    day = card["history"][0]["date"][:10]
    for text in ("when did hccs first appear", "hccs 首次可见", "HCCS 哪年出现的", "HCCS 什么时候出现的"):
        value, code = ask_json(text)
        assert value["intent"]["kind"] == "history" and value["answer"]["concept"] == "hccs", text
        assert value["hits"][0]["id"] == "hccs" and value["answer"]["first_visible"] == card["first_visible"]
        out, _, _ = ask_text(text)
        assert out.splitlines()[0].startswith("HCCS (Huawei Cache Coherence System)") and day in out.splitlines()[0]
    # a concept whose name holds a cue is still a name
    value, _ = ask_json("when did first visible commit first appear")
    assert value["intent"]["concepts"] == ["first-visible-commit"]


@pytest.mark.parametrize("text, concept, question", [
    ("does the peer take part in hixl", "hixl", "peer"),
    ("hixl 对端参与吗", "hixl", "peer"),
    ("who submits in hccl", "hccl", "submit"),
    ("HCCL 的任务由谁下发", "hccl", "submit"),
    ("which link does hccs use", "hccs", "link"),
    ("UDMA 是谁搬数据", "udma", "move"),
])
def test_six_question_phrasing_shows_that_answer_first(opened, text, concept, question):
    value, code = ask_json(text)
    assert code == 0 and value["intent"] == {"kind": "question", "question": question, "concepts": [concept],
                                             "lang": understand.language(text)}
    card = opened.cards.card(concept)
    assert value["answer"]["text"] == card["answers"][question] and value["hits"][0]["id"] == concept
    out, _, _ = ask_text(text)
    first, second = out.splitlines()[:2]
    assert first.startswith(card["names"]["en"])
    assert second.strip() == " ".join(card["answers"][question]["en"].split())[:len(second.strip())]


def test_a_question_the_concept_does_not_answer_says_so():
    value, _ = ask_json("who moves the data in hccl")
    assert value["answer"]["text"] is None and value["hits"][0]["id"] == "hccl"
    out, _, _ = ask_text("who moves the data in hccl")
    assert "(not answered by hccl; it answers: organize, submit, peer)" in out


@pytest.mark.parametrize("text, ids", [
    ("hccl 和 hixl 有什么区别", ["hccl", "hixl"]),
    ("hccl vs hixl", ["hccl", "hixl"]),
    ("compare hccl, hixl and shmem", ["hccl", "hixl", "ascend-shmem"]),
    ("数据面和控制面有什么区别", ["data-plane", "control-plane"]),
])
def test_comparison_phrasing_gives_the_comparison(text, ids):
    value, code = ask_json(text)
    assert code == 0 and value["intent"]["kind"] == "comparison"
    assert [c["id"] for c in value["answer"]["concepts"]] == ids
    assert value["answer"] == json.loads(commands.compare(ids, fmt="json", data_dir=DATA).out)
    out, _, _ = ask_text(text)
    assert out.split()[:len(ids)] == ids  # the comparison's header row comes first


def test_claims_phrasing_gives_the_claims_about_the_concept(opened):
    value, _ = ask_json("is it true that hccs is a layer")
    assert value["intent"]["kind"] == "claims" and value["intent"]["concepts"] == ["hccs"]
    assert [c["id"] for c in value["answer"]["claims"]] == [c["id"] for c in opened.cards.card("hccs")["claims"]]
    assert value["hits"][0] == {**value["hits"][0], "type": "claim", "id": "terms-are-not-layers"}
    value, _ = ask_json("AIV 直驱能不能替代 DualPath")
    assert value["answer"]["claims"][0]["id"] == "aiv-direct-drive-cannot-replace-dualpath"


@pytest.mark.parametrize("text, first", [("fabirc 内存", "fabric-memory"), ("fabirc memory", "fabric-memory"),
                                         ("doorbel", "doorbell"), ("hcss 是什么", "hccs"),
                                         ("when did hcss first appear", "hccs"), ("弹性 dispacth", "elastic-dispatch")])
def test_one_edit_typos_in_latin_words_are_tolerated(text, first):
    value, code = ask_json(text)
    assert code == 0 and (value.get("id") or value["hits"][0]["id"]) == first


def test_a_unique_prefix_opens_its_card():
    value, code = ask_json("memfab")  # also inside aclrtMemFabricHandle, but not at a word
    assert code == 0 and value["id"] == "memfabric-hybrid"


@pytest.mark.parametrize("text, said", [
    ("xyzzy plugh", "nothing in concepts, claims, flows or repositories matches"),
    ("how do I bake sourdough bread", "nothing in concepts, claims, flows"),
    ("hello world", "nothing in concepts, claims, flows"),
    ("今天天气怎么样", "概念、论断、流程和仓库中都没有与“今天天气怎么样”匹配的内容"),
])
def test_an_honest_miss_in_the_querys_language(text, said):
    out, err, code = ask_text(text)
    assert code == 1 and out == "" and said in err
    value, code = ask_json(text)
    assert code == 1 and said in value["error"] and value["query"] == text


@pytest.mark.parametrize("text", ["what is", "who", "的", "是什么"])
def test_nothing_but_question_words_is_a_miss(text):
    value, code = ask_json(text)
    assert code == 1 and ("nothing in concepts" in value["error"] or "都没有" in value["error"])


def test_a_miss_offers_the_nearest_names():
    for text, near in (("menfabrik-hibryd", "memfabric-hybrid"), ("hxxcs", "hccs"), ("udmaaa", "udma")):
        _, err, code = ask_text(text)  # two edits or more: not a typo the search reads through
        assert code == 1 and "nearest names:" in err, text
        assert err.splitlines()[2].split()[0] == near, err


def test_the_plain_name_is_the_card_as_before():
    value, code = ask_json("hccs")
    assert code == 0 and "intent" not in value and value["id"] == "hccs"


def test_the_json_says_which_intent_was_recognised():
    value, _ = ask_json("collective communication library")
    assert set(value) == {"query", "intent", "answer", "hits"}
    assert value["intent"] == {"kind": "search", "question": None, "concepts": ["collective-communication"],
                               "lang": "en"}  # a search names the concepts the words name, in no special place
    assert [h["id"] for h in value["hits"][:2]] == ["nccl", "hccl"]  # ranked as before: libraries first
    assert value["answer"] is None and set(value["hits"][0]) == {"type", "id", "name", "score", "snippet"}


def test_the_fast_launcher_answers_questions_as_click_does():
    env = dict(os.environ, COLUMNS="100")
    for args in (["query", "hccs", "首次可见"], ["query", "who", "submits", "in", "hccl", "--format", "json"],
                 ["query", "hccl", "vs", "hixl"], ["query", "xyzzy", "plugh"]):
        fast = subprocess.run([sys.executable, "-m", "atlas", *args, "--data", str(DATA)], capture_output=True,
                              text=True, env=env)
        slow = CliRunner().invoke(cli, [*args, "--data", str(DATA)], env={"COLUMNS": "100"})
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr), args


# ---------------------------------------------------------------------------------------------
# Bounds: the length of a query, duplicates in compare
# ---------------------------------------------------------------------------------------------

def test_a_huge_query_is_refused_at_once_with_a_usage_error(tmp_path):
    words = " ".join(f"w{i:06d}x" for i in range(120_000))  # about 1 MB of distinct words
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["query", words, "--data", str(DATA)])
    assert time.perf_counter() - started < 5
    assert result.exit_code == 2 and "characters long; at most 1000 are searched" in result.stderr
    many = " ".join(f"word{i}" for i in range(100))  # short, but more words than are searched
    result = CliRunner().invoke(cli, ["query", many, "--data", str(DATA)])
    assert result.exit_code == 2 and "100 distinct words; at most 64" in result.stderr
    from atlas.mcp.tools import AtlasTools

    with pytest.raises(Exception, match="at most 1000"):
        AtlasTools(DATA).search(words)


def test_compare_folds_duplicates_in_linear_time():
    """2,000 copies of each of two terms: two columns, in about the time of two terms (the code
    before the resolver folded duplicates drew 4,000 columns, in time growing as the square)."""
    def timed(terms):
        times, answers = [], []
        for _ in range(3):  # the best of three: a shared machine's pauses are not the code's
            started = time.perf_counter()
            answers.append(commands.compare(terms, data_dir=DATA))
            times.append(time.perf_counter() - started)
        return answers[0], min(times)

    two, base = timed(["hccs", "hixl"])
    many, spent = timed(["hccs", "hixl"] * 2000)
    assert many == two and two.out.split()[:2] == ["hccs", "hixl"]
    assert spent < max(3.0, 20 * base), (spent, base)
    as_json = json.loads(commands.compare(["hccs", "hixl"] * 2000, fmt="json", data_dir=DATA).out)
    assert [c["id"] for c in as_json["concepts"]] == ["hccs", "hixl"]

"""Unit tests of the site's graph pages (explorer and flows) on the generated files: counts, no
external URL, escaping, determinism, lanes, CLI. The browser end-to-end test is
test_map_browser.py."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas.errors import AtlasError
from atlas.site import build_site
from atlas.site.owned import MANIFEST
from hypothesis import given, settings, strategies as st

from atlas.site.layout import NONE_LANE, lane_key, lanes, marks
from atlas.view.views import answered
from atlas.site.common import VIS_FILE, script_json
from atlas.site.network import node_labels, seed_focus, vis_js
from atlas.view.views import card as card_of, everything, evidence_url
from atlas.model.core import (
    QUESTION_IDS, Atlas, Claim, Concept, Evidence, Flow, FlowEdge, FlowStep, Lifecycle, Pin, Probe, Question,
    Relation, Repository, Sighting, Text,
)

EVIL = "</script><img src=x onerror=alert(1)>"
SHA = "09300b70df9a031339f08e5f2ca06d7bf294d009"


def sample_atlas() -> Atlas:
    """A small atlas built directly from the model classes (no YAML loader)."""
    T = Text
    questions = [Question(q, T(f"Who does {q}?", f"谁{q}"), T(f"{q} explained", f"{q} 说明"))
                 for q in QUESTION_IDS]
    concepts = [
        Concept("hccl", "library", T("HCCL", "集合通信库"),
                aliases={"en": ["Huawei Collective Communication Library"], "zh": ["华为集合通信库"]},
                answers={"organize": T("the collective", "集合语义")},
                beginner=T("Beginner HCCL.", "入门 HCCL。"),
                professional=T("Professional HCCL.", "专业 HCCL。"),
                relations=[Relation("built-on", "hccl", "hcomm", note=T("since the split", "拆分后")),
                           Relation("alternative-to", "hccl", "shmem")],
                evidence=[Evidence(pin=Pin("hicann/hccl", SHA, "README.md", 25, 28),
                                   supports=T("operators only", "仅算子"))],
                probes=[Probe("hicann/hccl", "term", "HCCL")]),
        Concept("hcomm", "library", T("HCOMM", "通信基础库"),
                answers={"address": T("communicators", "通信域"), "submit": T("tasks", "任务")}),
        Concept("shmem", "library", T("SHMEM", "共享内存库"), aliases={"zh": ["对称内存"]},
                answers={"address": T("symmetric heap", "对称堆")},
                relations=[Relation("uses", "shmem", "udma")]),
        Concept("udma", "engine", T("UDMA", "UDMA 引擎"), answers={"move": T("copies", "搬运")},
                lifecycle=Lifecycle("pending-deprecation", T("maybe", "或许"))),
        Concept("hccs", "link", T("HCCS", "HCCS 互联"), answers={"link": T("wire", "链路")}),
        Concept("aiv-direct", "technique", T("AIV direct drive", "AIV 直驱"),
                aliases={"zh": ["直驱"]},
                answers={"submit": T("the AIV kernel writes WQEs", "AIV 核写 WQE")},
                relations=[Relation("submits-to", "aiv-direct", "udma"),
                           Relation("uses", "aiv-direct", "missing-concept")]),
        Concept("evil", "concept", T(EVIL, "<b>粗</b>&amp;"),
                beginner=T("</script><script>alert(2)</script>", "\u2028line\u2029sep"),
                aliases={"en": ["<!--"]}),
    ]
    sightings = [
        Sighting("hccl", "hicann/hccl", "term", "HCCL", True, sha="a" * 40,
                 committer_date="2021-03-01T10:00:00+08:00"),
        Sighting("shmem", "hicann/shmem", "term", "shmem", True, sha="b" * 40,
                 committer_date="2024-05-01T10:00:00+08:00"),
        Sighting("udma", "hicann/shmem", "term", "udma", True, sha="c" * 40,
                 committer_date="2025-01-02T10:00:00+08:00"),
        Sighting("hcomm", "hicann/hccl", "term", "hcomm", False),
    ]
    flows = [Flow("udma-put", T("UDMA put", "UDMA 写"), T("Host to kernel", "主机到核"),
                  steps=[FlowStep("alloc", T("allocate", "分配"), "host", ["shmem"]),
                         FlowStep("kernel", T("kernel writes", "核写"), "aiv",
                                  ["aiv-direct", "evil"],
                                  source=Evidence(pin=Pin("hicann/shmem", "d" * 40, "k.cpp", 7, 7))),
                         FlowStep("wait", T("wait signal", "等信号"), "host", ["udma"])],
                  edges=[FlowEdge("alloc", "kernel", "control"), FlowEdge("kernel", "wait", "sync"),
                         FlowEdge("alloc", "wait", "order")])]
    claims = [Claim("simt-submission", T("SIMT accelerates submission", "SIMT 加速提交"),
                    "confirmed", about=["aiv-direct", "evil"],
                    evidence=[Evidence(url="https://example.org/x")])]
    repos = [Repository("hicann/hccl", urls=["https://github.com/hicann/hccl",
                                             "https://gitcode.com/cann/hccl"]),
             Repository("hicann/shmem", urls=["https://gitcode.com/cann/shmem"])]
    return Atlas(questions=questions, concepts=concepts, claims=claims, flows=flows,
                 repositories=repos, sightings=sightings)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(sample_atlas(), out)
    return out


def page_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="atlas-data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_writes_explorer_flows_and_one_vis_script(tmp_path):
    out = tmp_path / "out"
    paths = build_site(sample_atlas(), out)
    names = [str(p.relative_to(out)) for p in paths]
    assert names[0] == "index.html"  # the overview
    assert names[-1] == "explorer.html"
    assert {"table.html", "map.html", "timeline.html", "flows.html", "repos.html", "seed.html",
            "flow-udma-put.html", "concepts/hccl.html", "repos/hicann/hccl.html", "api/index.html"} <= set(names)
    assert len(names) == 7 + 1 + 7 + 2 + 1 + 1  # site pages, flow, concepts, repositories, API index, explorer
    assert sorted(p.name for p in out.iterdir()) == sorted({n.split("/")[0] for n in names} | {VIS_FILE, MANIFEST})
    assert (out / VIS_FILE).read_text("utf-8") == vis_js()
    for p in paths:  # the explorer alone loads the one shared copy, by src, never inlined
        html = p.read_text("utf-8")
        assert (f'<script src="{VIS_FILE}"></script>' in html) == (p.name == "explorer.html")
        assert vis_js()[:200] not in html
    assert not (tmp_path / "lib").exists() and not Path("lib").exists()


def _cards(atlas) -> list:
    return everything(atlas)["cards"]


def _card(c: Concept) -> dict:
    return card_of(Atlas(concepts=[c]), c)


def _rels(data: dict) -> set[tuple[str, str, str]]:
    ids = [c["id"] for c in data["concepts"]]
    types = [t["type"] for t in data["relTypes"]]
    return {(ids[a], types[t], ids[b]) for a, b, t in data["rels"]}


def test_node_and_edge_counts(site):
    data = page_data((site / "explorer.html").read_text("utf-8"))
    assert len(data["nodes"]) == 7
    # 5 relations, one to a concept that is not in the atlas: 4 drawn relations
    assert _rels(data) == {
        ("hccl", "built-on", "hcomm"), ("hccl", "alternative-to", "shmem"),
        ("shmem", "uses", "udma"), ("aiv-direct", "submits-to", "udma")}
    assert data["options"]["physics"]["enabled"] is False
    # the seed's terms that the sample holds, in the seed's order
    assert data["meta"]["focus"] == seed_focus(_cards(sample_atlas())) == ["hccs", "hccl"]
    bare = sample_atlas()
    bare.concepts = [c for c in bare.concepts if c.id not in ("hccs", "hccl")]
    bare.reindex()  # no seed term left: the concepts with the most relations
    assert seed_focus(_cards(bare))[:2] == ["udma", "aiv-direct"]
    hccl = [n for n in data["nodes"] if n["id"] == "hccl"][0]
    assert hccl["labels"] == {"en": "HCCL", "zh": "集合通信库", "both": "HCCL\n集合通信库"}


def test_seed_focus_on_the_bundled_atlas():
    from atlas.index.compiled import load_atlas

    atlas = load_atlas(Path(__file__).resolve().parent.parent / "data")
    assert seed_focus(_cards(atlas)) == ["dma", "hccs", "hccl", "ascend-shmem", "fabric-memory",
                                         "aiv-direct-drive"]


EXTERNAL = [
    re.compile(r"""\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:|//|ftp:)""", re.I),
    re.compile(r"""url\(\s*["']?\s*(?:https?:|//)""", re.I),
    re.compile(r"@import", re.I),
    re.compile(r"""<link\b""", re.I),
]


@pytest.mark.parametrize("name", ["explorer.html"])
def test_no_external_resources(site, name):
    html = (site / name).read_text("utf-8")
    for pattern in EXTERNAL:
        assert not pattern.search(html), pattern.pattern
    for host in ("cdnjs.cloudflare.com", "cdn.jsdelivr.net", "unpkg.com", "bootstrap",
                 "tom-select", "fonts.googleapis"):
        assert host not in html.lower()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    script_src = csp.split("script-src")[1].split(";")[0]
    assert "default-src 'none'" in csp and "unsafe-inline" not in script_src
    assert script_src.split()[0] == "'self'" and len(script_src.split()) == 2  # 'self' + our hash
    # the only script loaded by src is the shared vis-network file next to the page
    assert re.findall(r"<script\b[^>]*\bsrc\s*=\s*\"([^\"]*)\"", html) == [VIS_FILE]
    assert len(re.findall(r"<script\b", html)) == 3  # data, vis, ours


@pytest.mark.parametrize("name", ["explorer.html"])
def test_injection_is_escaped(site, name):
    html = (site / name).read_text("utf-8")
    assert EVIL not in html
    assert "<img" not in html and "<b>" not in html and "onerror=alert(1)>" not in html
    assert "\u2028" not in html and "\u2029" not in html
    assert html.count("</script>") == 3
    m = re.search(r'id="atlas-data">(.*?)</script>', html, re.S)
    assert not re.search(r"[<>&]", m.group(1))
    text = json.dumps(page_data(html), ensure_ascii=False)
    assert "onerror=alert(1)" in text  # the text is there, as data


def test_script_json_escapes():
    out = script_json({"a": "</script>&<!--\u2028\u2029"})
    assert out == '{"a":"\\u003c/script\\u003e\\u0026\\u003c!--\\u2028\\u2029"}'
    assert json.loads(out) == {"a": "</script>&<!--\u2028\u2029"}


def test_two_builds_are_byte_identical(tmp_path):
    a = build_site(sample_atlas(), tmp_path / "a")
    atlas = sample_atlas()
    atlas.concepts.reverse()  # declaration order must not matter
    atlas.reindex()
    b = build_site(atlas, tmp_path / "b", as_of=None)
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert (tmp_path / "a" / VIS_FILE).read_bytes() == (tmp_path / "b" / VIS_FILE).read_bytes()
    assert (tmp_path / "a" / MANIFEST).read_bytes() == (tmp_path / "b" / MANIFEST).read_bytes()
    c = build_site(sample_atlas(), tmp_path / "c", as_of="2022-01-01")
    explorer = [p for p in c if p.name == "explorer.html"][0]
    assert explorer.read_bytes() != (tmp_path / "a" / "explorer.html").read_bytes()
    assert page_data(explorer.read_text("utf-8"))["meta"]["asOf"] == "2022-01-01"


def test_card_data(site):
    data = page_data((site / "explorer.html").read_text("utf-8"))
    c = {x["id"]: x for x in data["concepts"]}
    hccl = c["hccl"]
    assert hccl["names"] == {"en": "HCCL", "zh": "集合通信库"}
    assert hccl["beginner"]["zh"] and hccl["professional"]["en"]
    assert hccl["evidence"][0]["url"] == \
        f"https://github.com/hicann/hccl/blob/{SHA}/README.md#L25-L28"
    assert data["days"]["hccl"] == "2021-03-01"
    keys = data["keys"]["hccl"]
    assert "华为集合通信库" in keys and "huawei collective communication library" in keys
    assert [k["id"] for k in c["aiv-direct"]["claims"]] == ["simt-submission"]
    assert data["claims"][0]["id"] == "simt-submission"
    assert [f["id"] for f in c["aiv-direct"]["flows"]] == ["udma-put"]
    assert c["aiv-direct"]["flows"][0]["steps"] == ["kernel"]
    assert c["hcomm"]["first_visible"] is None and "hcomm" not in data["days"]  # not found: no date
    assert set(c["hcomm"]["answers"]) == {"address", "submit"}
    flow = (site / "flow-udma-put.html").read_text("utf-8")
    kernel = re.search(r'<li class="step" id="step-kernel".*?</li>\n', flow, re.S).group(0)
    assert f'href="https://gitcode.com/cann/shmem/blob/{"d" * 40}/k.cpp#L7"' in kernel
    assert 'href="concepts/aiv-direct.html"' in kernel and 'href="concepts/evil.html"' in kernel


def test_evidence_url_hosts():
    atlas = sample_atlas()
    ev = Evidence(pin=Pin("unknown/repo", SHA, "a/b.h", 3, 9))
    assert evidence_url(atlas, ev) == f"https://github.com/unknown/repo/blob/{SHA}/a/b.h#L3-L9"
    assert evidence_url(atlas, Evidence(url="javascript:alert(1)")) == ""
    assert evidence_url(atlas, Evidence(url="https://arxiv.org/abs/1")) == "https://arxiv.org/abs/1"


def test_lanes_never_put_a_concept_on_a_question_it_does_not_answer(site):
    atlas = sample_atlas()
    assert lanes() == [*QUESTION_IDS, NONE_LANE]
    cards = {c["id"]: c for c in _cards(atlas)}
    hcomm = cards["hcomm"]  # address and submit: the address lane, marked "+ submit"
    assert lane_key(hcomm) == "address" and marks(hcomm) == ["submit"]
    assert node_labels(hcomm)["both"].endswith("\n+ submit")
    assert lane_key(cards["evil"]) == NONE_LANE and marks(cards["evil"]) == []
    data = page_data((site / "explorer.html").read_text("utf-8"))
    lane_keys = [ln["key"] for ln in data["lanes"]]
    for node, c in zip(data["nodes"], data["concepts"]):
        key = lane_keys[node["lane"]]
        assert key in c["answers"] if c["answers"] else key == NONE_LANE


@settings(max_examples=200, deadline=None)
@given(st.sets(st.sampled_from(QUESTION_IDS)))
def test_lane_and_marks_cover_exactly_the_answers(qs):
    c = _card(Concept("x", "library", Text("X", "X"), answers={q: Text("a", "b") for q in qs}))
    got = [lane_key(c)] + marks(c) if lane_key(c) else []
    assert sorted(got) == sorted(qs)  # the lane and the marks name every answer, nothing else
    assert answered(c["answers"]) == [q for q in QUESTION_IDS if q in qs]
    if qs:
        assert lane_key(c) in qs


def test_node_labels_shorten_long_names():
    c = _card(Concept("hccl", "library", Text("HCCL (Huawei Collective Communication Library)",
                                              "华为集合通信库 HCCL"), answers={"organize": Text("a", "b")}))
    assert node_labels(c)["both"] == "HCCL\n华为集合通信库 HCCL"
    same = _card(Concept("m", "build-flag", Text("Mooncake USE_ASCEND (over HCCL)",
                                                 "Mooncake USE_ASCEND（基于 HCCL）")))
    assert node_labels(same)["both"] == "Mooncake USE_ASCEND"  # the zh name says the same: once


def test_bad_as_of_and_bad_flow_id(tmp_path):
    with pytest.raises(AtlasError):
        build_site(sample_atlas(), tmp_path, as_of="yesterday")
    atlas = sample_atlas()
    atlas.flows[0].id = "../evil"
    atlas.reindex()
    with pytest.raises(AtlasError):
        build_site(atlas, tmp_path / "x")


def test_stale_pages_the_manifest_lists_are_removed_others_kept(tmp_path):
    atlas = sample_atlas()
    build_site(atlas, tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    (tmp_path / "flow-mine.html").write_text("mine")
    (tmp_path / "concepts" / "mine.html").write_text("mine")
    gone = sorted(atlas.concepts, key=lambda c: c.id)[0].id
    atlas.concepts = [c for c in atlas.concepts if c.id != gone]
    atlas.reindex()
    build_site(atlas, tmp_path)  # its own folder: no --force needed
    assert not (tmp_path / "concepts" / f"{gone}.html").exists()
    for name in ("keep.txt", "flow-mine.html", "concepts/mine.html"):
        assert (tmp_path / name).read_text() == "mine"
    assert f"concepts/{gone}.html" not in json.loads((tmp_path / MANIFEST).read_text())["files"]


def test_cli_map(tmp_path, mini, mini_atlas):
    from atlas.cli import cli

    out = tmp_path / "site"
    res = CliRunner().invoke(cli, ["map", "-o", str(out), "--as-of", "2023-06-01", "--data", str(mini)])
    assert res.exit_code == 0, res.output
    # seven site pages, the explorer, api/index.html, the concepts, the flows and the repositories
    pages = 9 + len(mini_atlas.concepts) + len(mini_atlas.flows) + len(mini_atlas.repositories)
    assert f"wrote {pages} pages" in res.output
    assert page_data((out / "explorer.html").read_text("utf-8"))["meta"]["asOf"] == "2023-06-01"
    res = CliRunner().invoke(cli, ["map", "-o", str(out), "--as-of", "2023-6-1", "--data", str(mini)])
    assert res.exit_code == 2 and "YYYY-MM-DD" in res.output

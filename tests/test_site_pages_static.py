"""The reading pages of the site without a browser: the overview table (index.html), the timeline
picture (timeline.html) and the concept pages (concepts/<id>.html). Checked on the generated
files: order, contents, links, escaping, the Content-Security-Policy, determinism, and the
timeline's geometry against slow definitions. The browser tests are test_site_pages.py."""
from __future__ import annotations

import base64
import calendar
import hashlib
import json
import re
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from atlas.errors import AtlasError
from atlas.site import build_site
from atlas.site.pages import reading_pages
from atlas.site.timeline import GAP_MIN, GAP_W, MARK_GAP, MONTH_W, X0, Scale, date_x, label_width, layout_timeline
from atlas.model.core import Atlas, Concept, Sighting, Text
from atlas.view.views import everything

try:
    from tests.test_map import EVIL, SHA, sample_atlas
except ImportError:  # tests/ not a package: pytest put it on sys.path
    from test_map import EVIL, SHA, sample_atlas

ROOT = Path(__file__).resolve().parent.parent
ROW_RE = re.compile(r'<tr id="c-([a-z0-9-]+)" class="([^"]*)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(sample_atlas(), out)
    return out


@pytest.fixture(scope="module")
def bundled():
    from atlas.index.compiled import load_atlas

    return load_atlas(ROOT / "data")


def read(site: Path, name: str) -> str:
    return (site / name).read_text("utf-8")


def rows(html: str) -> list[tuple[str, str]]:
    return ROW_RE.findall(html)


def row_html(html: str, ident: str) -> str:
    m = re.search(rf'<tr id="c-{ident}" .*?</tr>', html, re.S)
    assert m, ident
    return m.group(0)


# ---------------------------------------------------------------------------------------------
# overview
# ---------------------------------------------------------------------------------------------


def test_table_rows_in_first_visible_order_undated_last(site):
    html = read(site, "table.html")
    found = rows(html)
    # dated by day (hccl 2021, shmem 2024, udma 2025), then the undated ones by id
    assert [i for i, _ in found] == ["hccl", "shmem", "udma", "aiv-direct", "evil", "hccs", "hcomm"]
    undated = [i for i, cls in found if "undated" in cls.split()]
    assert undated == ["aiv-direct", "evil", "hccs", "hcomm"]
    assert "no dated sighting" in row_html(html, "hcomm")
    groups = re.findall(r'<tbody data-group="([^"]+)">', html)
    assert groups == ["2021", "2024", "2025", "undated"]


def test_overview_grid_groups_by_kind_one_glyph_per_question(site):
    html = read(site, "index.html")
    groups = re.findall(r'<tbody data-group="([^"]+)"', html)
    assert groups == ["library", "link", "engine", "technique", "concept"]  # the schema's order of kinds
    assert [i for i, _ in rows(html)] == ["hccl", "hcomm", "shmem", "hccs", "udma", "aiv-direct", "evil"]
    hcomm = row_html(html, "hcomm")
    cells = re.findall(r'<td class="(y|n)"', hcomm)  # in the questions' order: address and submit
    assert cells == ["n", "y", "y", "n", "n", "n"]
    assert hcomm.count('<td class="y" aria-label="answers 回答">●</td>') == 2
    assert '<td class="kind" data-k="library"></td>' in hcomm and '<td class="life" data-l="active"></td>' in hcomm
    assert "communicators" not in hcomm  # the sentences are in the page's data, shown on demand
    data = json.loads(re.search(r'id="atlas-data">(.*?)</script>', html, re.S).group(1))
    assert data["sentences"]["hcomm"]["address"] == {"en": "communicators", "zh": "通信域"}
    assert '<time datetime="2021-03-01">2021</time>' in row_html(html, "hccl")
    assert 'td[data-k="library"]::before { content: "library"; }' in html  # the words, by CSS


def test_table_cells_hold_the_answers_under_their_question(site):
    html = read(site, "table.html")
    heads = re.findall(r'<th scope="col" class="q" data-q="([a-z]+)">', html)
    assert heads == ["organize", "address", "submit", "move", "link", "peer"]
    row = row_html(html, "hcomm")
    cells = dict(re.findall(r'<td class="ans" data-q="([a-z]+)"[^>]*>(.*?)</td>', row, re.S))
    assert cells["address"] == \
        '<span><span class="en" lang="en">communicators</span><span class="zh" lang="zh">通信域</span></span>'

    assert "tasks" in cells["submit"] and "任务" in cells["submit"]
    assert cells["organize"].strip() == "" and cells["move"].strip() == ""
    hccl = row_html(html, "hccl")
    assert 'href="concepts/hccl.html"' in hccl and "2021-03-01" in hccl and "exact" in hccl
    assert 'first seen in' in hccl and 'href="repos/hicann/hccl.html"' in hccl


def test_overview_as_of_marks_later_rows(tmp_path):
    out = tmp_path / "s"
    build_site(sample_atlas(), out, as_of="2022-01-01")
    for page in ("index.html", "table.html"):
        later = [i for i, cls in rows(read(out, page)) if "later" in cls.split()]
        assert sorted(later) == ["shmem", "udma"]
    # the default as-of is the cut-off: nothing is later
    build_site(sample_atlas(), tmp_path / "t")
    assert not [i for i, cls in rows(read(tmp_path / "t", "index.html")) if "later" in cls.split()]


def test_flows_page_and_table_questions(site):
    assert 'href="flow-udma-put.html"' in read(site, "flows.html")
    html = read(site, "table.html")
    assert "Who does organize?" in html and "organize explained" in html


# ---------------------------------------------------------------------------------------------
# concept pages
# ---------------------------------------------------------------------------------------------


def test_concept_page_holds_the_whole_card(site):
    html = read(site, "concepts/hccl.html")
    for text in ("HCCL", "集合通信库", "Huawei Collective Communication Library", "华为集合通信库",
                 "the collective", "集合语义", "Beginner HCCL.", "入门 HCCL。",
                 "Professional HCCL.", "专业 HCCL。", "since the split", "拆分后",
                 "operators only", "仅算子", "2021-03-01"):
        assert text in html, text
    assert f'href="https://github.com/hicann/hccl/blob/{SHA}/README.md#L25-L28"' in html
    assert 'href="hcomm.html"' in html and 'href="shmem.html"' in html  # relations as links
    assert f'href="https://github.com/hicann/hccl/commit/{"a" * 40}"' in html  # history
    assert 'href="../index.html#concept=hccl"' in html and 'href="../explorer.html#concept=hccl"' in html


def test_concept_page_relations_both_ways_claims_flows(site):
    udma = read(site, "concepts/udma.html")
    # incoming relations under their inverse names, linked to the source concept
    rel = (r'<span class="rel" data-type="{}"><span class="en" lang="en">{}</span>'
           r'<span class="zh" lang="zh">[^<]+</span> →</span> <a class="concept-link" href="{}.html">')
    assert re.search(rel.format("used-by", "used by", "shmem"), udma)
    assert re.search(rel.format("receives-work-from", "receives work from", "aiv-direct"), udma)
    assert "pending-deprecation" in udma
    aiv = read(site, "concepts/aiv-direct.html")
    assert "missing-concept" in aiv and 'href="missing-concept.html"' not in aiv  # unknown: no link
    assert "simt-submission" in aiv and "SIMT accelerates submission" in aiv
    assert 'href="https://example.org/x"' in aiv
    assert 'href="../flow-udma-put.html#step=kernel"' in aiv
    assert "No dated sighting" in aiv
    hcomm = read(site, "concepts/hcomm.html")
    assert "not found" in hcomm  # a not-found sighting is listed, never as a date


def test_flow_step_source_pin_host(site):
    shmem = read(site, "concepts/shmem.html")
    # the repository's own host is used for its commits
    assert f'href="https://gitcode.com/cann/shmem/commit/{"b" * 40}"' in shmem


# ---------------------------------------------------------------------------------------------
# all three: safety, offline, determinism
# ---------------------------------------------------------------------------------------------

PAGES = ["index.html", "timeline.html", "concepts/evil.html", "concepts/aiv-direct.html"]


@pytest.mark.parametrize("name", PAGES)
def test_injection_stays_text(site, name):
    html = read(site, name)
    assert EVIL not in html
    assert "<img" not in html and "<b>" not in html and "<!--" not in html
    assert "&amp;lt;" not in html  # escaped once, never twice
    if name in ("index.html", "concepts/evil.html"):
        assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    scripts = re.findall(r"<script\b[^>]*>", html)
    # one inline script (the language switch, then the page's own); the overview adds its data
    assert scripts == (['<script type="application/json" id="atlas-data">', "<script>"]
                       if name == "index.html" else ["<script>"])


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, as the browser's parser sees them."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize("name", PAGES)
def test_offline_and_csp(site, name):
    html = read(site, name)
    tags = Tags(html).tags
    assert not [t for t, a in tags if "src" in a or t in ("link", "img", "iframe", "object", "embed")]
    assert not [a for t, a in tags for k in a if k.startswith("on")]  # no event handler attribute
    assert not re.search(r"@import|url\(", html, re.I)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp and "form-action 'none'" in csp
    script_src = csp.split("script-src ")[1].split(";")[0]
    m = re.search(r"<script>(.*?)</script>", html, re.S)
    digest = base64.b64encode(hashlib.sha256(m.group(1).encode()).digest()).decode()
    assert script_src == f"'sha256-{digest}'"
    # every link is ours (relative) or a browsable http(s) URL; never javascript: or data:
    hrefs = [a["href"] for t, a in tags if "href" in a]
    assert hrefs
    for href in hrefs:
        local = r"[a-z0-9-]+\.html|(concepts|api)/[a-z0-9-]+\.html|repos/[\w.-]+/[\w.-]+\.html"
        assert re.match(rf"^(https?://|#|\.\./|{local})", href), href


def test_byte_identical_rebuild_on_bundled_data(tmp_path, bundled):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        out.mkdir()
        for path, html in reading_pages(everything(bundled), out, bundled.cutoff):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(html, encoding="utf-8")
    files = sorted(p.relative_to(a) for p in a.rglob("*.html"))
    assert len(files) == 7 + len(bundled.flows) + len(bundled.concepts) + len(bundled.repositories)
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_bundled_overview_and_concept_pages(tmp_path, bundled):
    pages = dict((str(p.relative_to(tmp_path)), html) for p, html in
                 reading_pages(everything(bundled), tmp_path, bundled.cutoff))
    found = rows(pages["table.html"])
    assert len(found) == len(bundled.concepts)
    dates = [bundled.first_visible(i).date if bundled.first_visible(i) else "" for i, _ in found]
    dated = [d for d in dates if d]
    assert dated == sorted(dated) and dates == dated + [""] * (len(dates) - len(dated))
    for c in bundled.concepts:
        html = pages[f"concepts/{c.id}.html"]
        for name in (c.names.en, c.names.zh):
            assert str(escape(name)) in html, (c.id, name)
        for ev in c.evidence:
            if ev.pin:
                assert f"/blob/{ev.pin.sha}/" in html and str(escape(ev.pin.path)) in html, c.id


def escape(text: str):
    from markupsafe import escape as esc

    return esc(text)


def test_stale_concept_pages_removed_and_bad_ids_refused(tmp_path):
    atlas = sample_atlas()
    gone = atlas.concepts[-1].id
    build_site(atlas, tmp_path)
    (tmp_path / "concepts" / "notes.txt").write_text("mine")
    (tmp_path / "concepts" / "mine.html").write_text("mine")
    atlas.concepts.pop()
    atlas.reindex()
    build_site(atlas, tmp_path)
    assert not (tmp_path / "concepts" / f"{gone}.html").exists()  # the map wrote it: removed
    assert (tmp_path / "concepts" / "notes.txt").exists() and (tmp_path / "concepts" / "mine.html").exists()
    atlas = sample_atlas()
    atlas.concepts[0].id = "../../etc"
    atlas.reindex()
    with pytest.raises(AtlasError, match="cannot name a page"):
        build_site(atlas, tmp_path / "x")


def test_mini_fixture_builds(tmp_path, mini_atlas):
    site = tmp_path / "site"  # tmp_path holds the mini data folder
    paths = build_site(mini_atlas, site)
    names = {str(p.relative_to(site)) for p in paths}
    assert {"index.html", "timeline.html", "explorer.html"} <= names
    assert {f"concepts/{c.id}.html" for c in mini_atlas.concepts} <= names
    assert len(rows(read(site, "index.html"))) == len(mini_atlas.concepts)


def test_cli_writes_every_page(tmp_path, mini):
    from atlas.cli import cli

    out = tmp_path / "site"
    res = CliRunner().invoke(cli, ["map", "-o", str(out), "--data", str(mini)])
    assert res.exit_code == 0, res.output
    for name in ("index.html", "timeline.html", "explorer.html"):
        assert (out / name).is_file(), name
    assert len(list((out / "concepts").glob("*.html"))) >= 1


# ---------------------------------------------------------------------------------------------
# the timeline
# ---------------------------------------------------------------------------------------------


def test_timeline_events_lanes_and_lines(site):
    html = read(site, "timeline.html")
    events = re.findall(r'<a class="ev[^"]*" href="concepts/([a-z0-9-]+)\.html" data-id="[^"]+" '
                        r'data-date="([0-9-]+)" data-repo="([^"]+)" data-sha="([0-9a-f]*)"', html)
    assert sorted(events) == sorted([("hccl", "2021-03-01", "hicann/hccl", "a" * 40),
                                     ("shmem", "2024-05-01", "hicann/shmem", "b" * 40),
                                     ("udma", "2025-01-02", "hicann/shmem", "c" * 40)])
    assert re.findall(r'<text class="lane-name"[^>]*>([^<]+)</text>', html) == \
        ["hicann/hccl", "hicann/shmem"]
    assert re.search(r'cut-off</tspan><tspan class="zh" lang="zh">截止</tspan> 2026-08-26</text>', html)
    assert '<tspan id="asof-day">2026-08-26</tspan>' in html
    assert "sha " + "a" * 40 in html and "probe term: HCCL" in html  # the <title> of a mark
    assert 'class="muted below"' not in html  # every repository has a lane: no list of others


def test_timeline_precision_has_its_own_shape():
    atlas = sample_atlas()
    atlas.sightings[0].precision = "on-or-before"
    atlas.reindex()
    tl = layout_timeline(everything(atlas), atlas.cutoff)
    precs = {e.concept: e.precision for lane in tl.lanes for e in lane.events}
    assert precs == {"hccl": "on-or-before", "shmem": "exact", "udma": "exact"}
    from atlas.site.pages import timeline_page

    html = timeline_page(everything(atlas), atlas.cutoff)
    assert html.count('<path class="m-before"') == 1  # (the legend's path is written d= first)
    assert html.count('<circle class="m-exact"') == 2


def test_timeline_cutoff_and_as_of_lines():
    atlas = sample_atlas()
    tl = layout_timeline(everything(atlas), "2022-01-01")
    assert tl.start == "2021-03"
    xs = {e.concept: e.x for lane in tl.lanes for e in lane.events}
    assert xs["hccl"] < tl.as_of_x < xs["shmem"] < xs["udma"] < tl.cutoff_x <= tl.scale_end
    assert [e.concept for lane in tl.lanes for e in lane.events if e.later] == ["shmem", "udma"]
    assert tl.width >= tl.cutoff_x + 100
    # months without a mark between 2022-02 and 2024-04 are folded into one marked break
    assert [(g.first, g.last) for g in tl.gaps] == [("2021-04", "2021-12"), ("2022-02", "2024-04"),
                                                   ("2024-06", "2024-12"), ("2025-02", "2026-07")]
    assert all(round(g.x1 - g.x0) == GAP_W for g in tl.gaps)


def test_scale_without_gaps_is_the_plain_month_scale():
    scale = Scale((2025, 1), 12, set(range(12)))
    for d in ("2025-01-01", "2025-02-28", "2025-07-15", "2025-12-31"):
        assert scale.x(d) == date_x(d, (2025, 1))
    assert scale.end_x == X0 + 12 * MONTH_W and scale.gaps() == []


def days_oracle(d: str, start: tuple[int, int]) -> float:
    """Slow definition of a day's x: count the months before it one by one, then the days."""
    y, m, day = (int(p) for p in d.split("-"))
    months = 0
    cy, cm = start
    while (cy, cm) < (y, m):
        months += 1
        cy, cm = (cy + 1, 1) if cm == 12 else (cy, cm + 1)
    return round(X0 + (months + (day - 1) / calendar.monthrange(y, m)[1]) * MONTH_W, 1)


DAYS = st.dates(min_value=date(2019, 1, 1), max_value=date(2026, 8, 26))


@settings(max_examples=150, deadline=None)
@given(a=DAYS, b=DAYS, kept=st.sets(st.integers(0, 91), max_size=30))
def test_scales_match_oracle_and_keep_order(a, b, kept):
    start = (2019, 1)
    xa, xb = date_x(a.isoformat(), start), date_x(b.isoformat(), start)
    assert xa == days_oracle(a.isoformat(), start)
    if a < b:
        assert xa < xb
    # the folded scale: still in date order, kept months full width, each fold GAP_W wide
    ma, mb = (a.year - 2019) * 12 + a.month - 1, (b.year - 2019) * 12 + b.month - 1
    scale = Scale(start, 92, kept | {ma, mb})
    ya, yb = scale.x(a.isoformat()), scale.x(b.isoformat())
    if a < b:
        assert ya < yb
    assert scale.month_x(ma + 1) - scale.month_x(ma) == pytest.approx(MONTH_W)
    folded = sum(g.m1 - g.m0 for g in scale.gaps())
    assert scale.end_x == pytest.approx(X0 + (92 - folded) * MONTH_W + len(scale.gaps()) * GAP_W)
    assert all(g.m1 - g.m0 >= GAP_MIN for g in scale.gaps())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["r/a", "r/b", "r/c"]), DAYS,
                          st.text(alphabet="abcdefghij 集合通信", min_size=1, max_size=30),
                          st.text(alphabet="abc 集合通信库", max_size=12)),
                min_size=1, max_size=40))
def test_timeline_labels_never_overlap(items):
    concepts, sightings = [], []
    for i, (repo, day, name, zh) in enumerate(items):
        cid = f"c{i}"
        concepts.append(Concept(cid, "library", Text(name.strip() or cid, zh.strip())))
        sightings.append(Sighting(cid, repo, "term", "x", True, sha="f" * 40,
                                  committer_date=day.isoformat() + "T12:00:00+00:00"))
    tl = layout_timeline(everything(Atlas(concepts=concepts, sightings=sightings)), "2026-08-26")
    assert sum(len(lane.events) for lane in tl.lanes) == len(items)
    for lane in tl.lanes:
        assert lane.y1 > lane.y0
        # a label's extent holds both languages (what "both" shows), never cut
        assert all("\u2026" not in e.label for e in lane.events)
        boxes = [(e.y, e.x - 6, e.x + 1 + e.extent) for e in lane.events]
        for e in lane.events:
            assert e.extent >= MARK_GAP + label_width(e.label) + (label_width(e.label_zh) if e.label_zh else 0)
            assert lane.y0 < e.y < lane.y1
            assert e.x + 1 + e.extent <= tl.width  # inside the picture
        for i, (y1, l1, r1) in enumerate(boxes):
            for y2, l2, r2 in boxes[i + 1:]:
                assert y1 != y2 or r1 <= l2 or r2 <= l1, "two labels overlap"
    ys = [(lane.y0, lane.y1) for lane in tl.lanes]
    assert all(a[1] <= b[0] for a, b in zip(ys, ys[1:]))

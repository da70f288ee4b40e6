"""End-to-end tests of the site's graph pages (explorer and flows) in headless Chromium.

The pages are opened from file:// with every non-file request aborted (and recorded: none may
be attempted), on the sample atlas of test_map.py (with the injection fixture), on the bundled
atlas (data/) and on the mini fixture. Skipped when Chromium or playwright is missing, unless
ATLAS_REQUIRE_BROWSER=1. Screenshots go to tests/artifacts/ (git-ignored)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from atlas.htmlmap import build_site
from atlas.index import load_atlas

try:
    from tests.browserkit import Page, artifacts, axe_script, browser, tab  # noqa: F401
except ImportError:
    from browserkit import Page, artifacts, axe_script, browser, tab  # noqa: F401

try:
    from tests.test_map import EVIL, sample_atlas
except ImportError:  # tests/ not a package: pytest put it on sys.path
    from test_map import EVIL, sample_atlas

ROOT = Path(__file__).resolve().parent.parent
MIN_LABEL_PX = 12
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(sample_atlas(), out, as_of=None)
    return out


@pytest.fixture(scope="module")
def real_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("real")
    build_site(load_atlas(ROOT / "data"), out)
    return out


@pytest.fixture(scope="module")
def mini_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mini")
    build_site(load_atlas(ROOT / "tests" / "fixtures" / "mini"), out)
    return out


def click_node(page, ident: str):
    pos = page.evaluate("id => atlasMap.focus(id)", ident)
    assert pos is not None
    page.mouse.click(pos["x"], pos["y"])


def no_sideways_scroll(page):
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), \
        "the page scrolls sideways"


def serious_axe(page) -> list[dict]:
    """axe-core's serious and critical violations. The pages' CSP forbids inline scripts, so
    axe.min.js is evaluated through the debugging protocol rather than added as a tag."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_script())
    result = page.evaluate("async () => await axe.run(document)")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "targets": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def wait_js(page, expr: str, timeout_s: float = 10.0):
    """Poll a JS expression from Python (the CSP forbids playwright's eval-based waits)."""
    import time

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if page.evaluate(expr):
                return
        except Exception:  # navigation in progress
            pass
        page.wait_for_timeout(50)
    raise AssertionError(f"timed out waiting for {expr}")


def check_view(page):
    """Labels at least 12 CSS px at the view the page set; no box overlaps another; no drawn
    edge (sampled with vis-network's own curve) passes through a box other than its ends."""
    assert page.evaluate("atlasMap.labelPx()") >= MIN_LABEL_PX - 1e-6
    assert page.evaluate("atlasMap.overlaps()") == []
    assert page.evaluate("atlasMap.crossings()") == []


# ---- the sample atlas: behaviour -----------------------------------------------------------


def test_explorer_focus_search_listbox_click(tab, site, artifacts):
    page = tab.open((site / "explorer.html").as_uri(), "atlasMap")
    assert page.evaluate("atlasMap.conceptCount()") == 7
    # opens on the seed's terms, not on everything
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "hccs"]
    assert page.evaluate("atlasMap.selected()") is None
    # search: Chinese alias, full-width Latin, case
    assert page.evaluate("atlasMap.search('直驱')")[0] == "aiv-direct"
    assert page.evaluate("atlasMap.search('ＨＣＣＬ')")[0] == "hccl"
    assert page.evaluate("atlasMap.search('对称内存')") == ["shmem"]
    # the results are a named listbox: arrow keys move, Enter opens
    page.fill("#search", "h")
    page.wait_for_selector("#results li.result")
    assert page.get_attribute("#results", "role") == "listbox"
    assert page.get_attribute("#results", "aria-label")
    assert page.get_attribute("#search", "aria-expanded") == "true"
    first = page.get_attribute("#search", "aria-activedescendant")
    page.keyboard.press("ArrowDown")
    second = page.get_attribute("#search", "aria-activedescendant")
    assert first != second
    want = page.get_attribute(f"#{second}", "data-id")
    assert page.get_attribute(f"#{second}", "aria-selected") == "true"
    page.keyboard.press("Enter")
    assert page.evaluate("atlasMap.selected()") == want
    assert page.get_attribute("#results", "hidden") is not None
    # focus mode: the concept and its direct neighbours only
    page.evaluate("atlasMap.open('hccl')")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "hcomm", "shmem"]
    assert page.evaluate("atlasMap.inView('hccl')")
    assert page.text_content("#card h2") == "HCCL"
    # edge labels only for the selection, and only where they fit (these short arrows carry none)
    assert set(page.evaluate("atlasMap.edgeLabels()")) <= \
        set(page.evaluate("atlasMap.edgesOf('hccl')"))
    # clicking a neighbour expands it (its neighbours join)
    click_node(page, "shmem")
    assert page.evaluate("atlasMap.selected()") == "shmem"
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "hcomm", "shmem", "udma"]
    card = page.inner_text("#card")
    assert "SHMEM" in card and "symmetric heap" in card and "对称堆" in card
    assert page.url.endswith("#concept=shmem")
    # the shown list reaches every drawn node from the keyboard
    assert page.eval_on_selector_all("#shown-list button", "bs => bs.map(b => b.dataset.id)") == \
        page.evaluate("atlasMap.drawnIds()")
    page.focus("#shown-list button[data-id='udma']")
    page.keyboard.press("Enter")
    assert page.evaluate("atlasMap.selected()") == "udma"
    assert page.evaluate("document.activeElement.closest('#card') !== null")
    # following a concept link in the card keeps focus in the card
    page.focus("#card a.concept-link")
    target = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("Enter")
    wait_js(page, f"location.hash === {target.split('explorer.html')[1]!r}")
    wait_js(page, "document.activeElement.closest('#card') !== null")
    check_view(page)
    page.screenshot(path=str(artifacts / "explorer-sample.png"))
    tab.check_clean()


def test_explorer_card_links(tab, site):
    page = tab.open((site / "explorer.html").as_uri() + "#concept=aiv-direct", "atlasMap")
    assert page.evaluate("atlasMap.selected()") == "aiv-direct"
    card = page.inner_text("#card")
    assert "the AIV kernel writes WQEs" in card and "AIV 核写 WQE" in card
    assert page.get_attribute("#card a[href^='flow-udma-put.html']", "href") == \
        "flow-udma-put.html#step=kernel"
    assert page.get_attribute("#card a.page-link", "href") == "concepts/aiv-direct.html"
    page.evaluate("atlasMap.open('hccl')")
    href = page.get_attribute("#card a.pin", "href")
    assert href.startswith("https://github.com/hicann/hccl/blob/09300b70df9a") and \
        href.endswith("#L25-L28")
    tab.check_clean()


def test_injection_shows_text_and_runs_nothing(tab, site, artifacts):
    page = tab.open((site / "explorer.html").as_uri() + "#concept=evil", "atlasMap")
    assert page.evaluate("atlasMap.selected()") == "evil"
    assert page.text_content("#card h2") == EVIL
    assert "<b>粗</b>&amp;" in page.inner_text("#card")
    assert "</script><script>alert(2)</script>" in page.inner_text("#card")
    assert page.evaluate("document.querySelectorAll('img, #card b, #card script').length") == 0
    # the tooltip is text too
    pos = page.evaluate("atlasMap.focus('evil')")
    page.mouse.move(pos["x"], pos["y"])
    page.wait_for_selector("div.vis-tooltip", state="visible")
    assert EVIL in page.inner_text("div.vis-tooltip")
    assert page.evaluate("document.querySelectorAll('div.vis-tooltip *:not(br)').length") == 0
    page.fill("#search", "<!--")
    page.wait_for_selector("#results li.result")
    assert page.get_attribute("#results li.result", "data-id") == "evil"
    page.screenshot(path=str(artifacts / "explorer-injection.png"))
    tab.check_clean()


def test_as_of_and_filters_refit(tab, site):
    page = tab.open((site / "explorer.html").as_uri() + "#concept=shmem", "atlasMap")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "shmem", "udma"]
    page.click("#filters summary")
    page.fill("#asof", "2022-01-01")
    page.dispatch_event("#asof", "change")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "shmem", "udma"]  # greyed, drawn
    page.check("#asof-hide")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "shmem"]  # the selection stays
    assert page.evaluate("atlasMap.inView('shmem') && atlasMap.inView('hccl')")
    page.uncheck("#asof-hide")
    page.select_option("#f-question", "move")
    assert page.evaluate("atlasMap.drawnIds()") == ["shmem", "udma"]
    assert page.evaluate("atlasMap.inView('udma')")
    page.click("#reset")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "shmem", "udma"]
    page.select_option("#f-lifecycle", "pending-deprecation")
    assert page.evaluate("atlasMap.drawnIds()") == ["shmem", "udma"]
    page.click("#reset")
    page.select_option("#f-repo", "hicann/hccl")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "shmem"]
    page.click("#reset")
    page.click("#seed")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "hccs"]
    tab.check_clean()


def test_flow_page_links_and_language(tab, site, artifacts):
    page = tab.open((site / "flow-udma-put.html").as_uri(), "atlasFlow")
    assert page.evaluate("atlasFlow.nodeCount()") == 3
    assert page.evaluate("atlasFlow.edgeCount()") == 3
    pos = page.evaluate("atlasFlow.focus('kernel')")
    page.mouse.click(pos["x"], pos["y"])
    assert page.evaluate("atlasFlow.selected()") == "kernel"
    card = page.inner_text("#card")
    assert "kernel writes" in card and "actor: aiv" in card
    assert page.get_attribute("#card a.pin", "href") == \
        f"https://gitcode.com/cann/shmem/blob/{'d' * 40}/k.cpp#L7"
    links = page.eval_on_selector_all("#card a.concept-link", "els => els.map(a => a.getAttribute('href'))")
    assert links == ["concepts/aiv-direct.html", "concepts/evil.html"]
    graph = page.eval_on_selector_all("#card a.explore-link", "els => els.map(a => a.getAttribute('href'))")
    assert graph == ["explorer.html#concept=aiv-direct", "explorer.html#concept=evil"]
    assert EVIL in card
    labels = {f["id"]: f["label"] for f in page.evaluate("atlasFlow.labelFit()")}
    assert labels["kernel"] == "kernel writes\n核写"
    page.check("#lang input[value='zh']")
    assert {f["id"]: f["label"] for f in page.evaluate("atlasFlow.labelFit()")}["kernel"] == "核写"
    page.check("#lang input[value='en']")
    assert {f["id"]: f["label"] for f in page.evaluate("atlasFlow.labelFit()")}["kernel"] == \
        "kernel writes"
    page.click("#card a.explore-link")
    wait_js(page, "!!(window.atlasMap && window.atlasMap.ready)")
    assert page.evaluate("atlasMap.selected()") == "aiv-direct"
    tab.check_clean()


# ---- the bundled atlas and the mini fixture: what a reader sees ------------------------------


def open_at(browser, url: str, hook: str, viewport: dict):
    t = Page(browser)
    t.page.set_viewport_size(viewport)
    return t, t.open(url, hook)


def test_explorer_real_atlas_desktop(browser, real_site, artifacts):
    t, page = open_at(browser, (real_site / "explorer.html").as_uri(), "atlasMap", DESKTOP)
    try:
        seed = ["aiv-direct-drive", "ascend-shmem", "dma", "fabric-memory", "hccl", "hccs"]
        assert page.evaluate("atlasMap.drawnIds()") == seed
        assert all(page.evaluate(f"atlasMap.inView('{i}')") for i in seed)
        check_view(page)
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / "explorer-seed-1440.png"))
        # search "hccs" as a user: only its neighbourhood is drawn, and the view contains it
        page.fill("#search", "hccs")
        page.keyboard.press("Enter")
        assert page.evaluate("atlasMap.selected()") == "hccs"
        want = sorted(set(page.evaluate("atlasMap.neighbours('hccs')")) | {"hccs"})
        assert page.evaluate("atlasMap.drawnIds()") == want
        assert page.evaluate("atlasMap.nodeCount()") == len(want)
        assert all(page.evaluate(f"atlasMap.inView('{i}')") for i in want)  # the view fits
        check_view(page)
        for ident in want:  # x: the lane is a question the concept answers (or none)
            answers = page.evaluate(f"atlasMap.answers('{ident}')")
            lane = page.evaluate(f"atlasMap.laneOf('{ident}')")
            assert lane in answers if answers else lane == ""
        # expanding a neighbour keeps every edge clear of the boxes
        page.evaluate("atlasMap.select('ascend-shmem')")
        assert page.evaluate("atlasMap.selected()") == "ascend-shmem"
        assert page.evaluate("atlasMap.crossings()") == []
        assert page.evaluate("atlasMap.overlaps()") == []
        page.evaluate("atlasMap.open('hccs')")
        # lane titles are HTML, on screen
        titles = page.eval_on_selector_all("#lanes .lane:not([hidden])", "ls => ls.map(l => l.dataset.lane)")
        assert "link" in titles
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / "explorer-hccs-1440.png"))
        t.check_clean()
    finally:
        t.close()


def test_explorer_real_atlas_phone(browser, real_site, artifacts):
    t, page = open_at(browser, (real_site / "explorer.html").as_uri() + "#concept=hccs",
                      "atlasMap", PHONE)
    try:
        assert page.evaluate("atlasMap.selected()") == "hccs"
        assert page.evaluate("atlasMap.inView('hccs')")
        check_view(page)
        no_sideways_scroll(page)
        # the card comes below the graph
        g = page.eval_on_selector("#graph", "e => e.getBoundingClientRect().bottom")
        c = page.eval_on_selector("#panel", "e => e.getBoundingClientRect().top")
        assert c >= g - 1
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / "explorer-hccs-390.png"))
        t.check_clean()
    finally:
        t.close()


@pytest.mark.parametrize("flow", ["mooncake-ascend-paths", "full-mesh-dispatch-path"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_flow_real_atlas(browser, real_site, artifacts, flow, viewport):
    t, page = open_at(browser, (real_site / f"flow-{flow}.html").as_uri(), "atlasFlow", viewport)
    try:
        assert page.evaluate("atlasFlow.labelPx()") >= MIN_LABEL_PX
        fits = page.evaluate("atlasFlow.labelFit()")
        assert fits and all(f["textW"] <= f["boxW"] + 0.5 and f["textH"] <= f["boxH"] + 0.5
                            for f in fits), [f for f in fits if f["textW"] > f["boxW"]]
        assert all("\u2026" not in f["label"] for f in fits)  # never truncated
        assert page.evaluate("atlasFlow.overlaps()") == []
        assert page.evaluate("atlasFlow.crossings()") == []
        assert page.evaluate("atlasFlow.outside()") == []
        assert page.evaluate("atlasFlow.inView()")  # the whole flow is drawn at the first view
        no_sideways_scroll(page)
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / f"flow-{flow}-{viewport['width']}.png"),
                        full_page=True)
        t.check_clean()
    finally:
        t.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_every_flow_edge_inside_the_drawing(browser, real_site, viewport):
    """Every drawn edge of every flow of the bundled atlas, sampled with vis-network's own
    getPoint, stays inside the canvas (a long curve that bulges past the page's side is cut),
    and no edge passes through a box."""
    flows = sorted(real_site.glob("flow-*.html"))
    assert len(flows) >= 7
    t = Page(browser)
    t.page.set_viewport_size(viewport)
    try:
        bad = {}
        for f in flows:
            page = t.open(f.as_uri(), "atlasFlow")
            out = page.evaluate("atlasFlow.outside()")
            cross = page.evaluate("atlasFlow.crossings()")
            if out or cross:
                bad[f.name] = {"outside": out, "crossings": cross}
        assert bad == {}
        t.check_clean()
    finally:
        t.close()


def test_every_focus_fits_the_view_desktop(browser, real_site):
    """Opening each concept of the bundled atlas at 1440x900: every shown concept's box is inside
    the canvas, labels stay at least 12 px, no box overlaps and no edge passes through a box."""
    ids = sorted(p.stem for p in (real_site / "concepts").glob("*.html"))
    assert len(ids) >= 100
    t, page = open_at(browser, (real_site / "explorer.html").as_uri(), "atlasMap", DESKTOP)
    try:
        bad = {}
        for ident in ids:
            page.evaluate("id => atlasMap.open(id)", ident)
            r = page.evaluate("""() => ({off: atlasMap.drawnIds().filter(i => !atlasMap.inView(i)),
                                      px: atlasMap.labelPx(), cross: atlasMap.crossings(),
                                      over: atlasMap.overlaps()})""")
            if r["off"] or r["px"] < MIN_LABEL_PX - 1e-6 or r["cross"] or r["over"]:
                bad[ident] = r
        assert bad == {}
        t.check_clean()
    finally:
        t.close()


LABEL_CHECK = """() => { var b = atlasMap.labelBoxes(), s = atlasMap.canvasSize(), bad = [];
  for (var i = 0; i < b.length; i++) { var a = b[i];
    if (a.left < -0.5 || a.top < -0.5 || a.right > s[0] + 0.5 || a.bottom > s[1] + 0.5) bad.push(['clipped', a.id]);
    for (var j = i + 1; j < b.length; j++) { var c = b[j];
      if (a.left < c.right && c.left < a.right && a.top < c.bottom && c.top < a.bottom)
        bad.push(['overlap', a.id, c.id]); } }
  return {n: b.length, bad: bad}; }"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_explorer_edge_labels_apart_and_inside(browser, real_site, viewport):
    """The edge labels vis-network draws (its own measured label boxes) never overlap one another
    and none is cut by the canvas's edge, for the seed view and the biggest neighbourhoods."""
    t, page = open_at(browser, (real_site / "explorer.html").as_uri() + "#concept=hccs",
                      "atlasMap", viewport)
    try:
        shown = 0
        for ident in ["hccs", "hccl", "ascend-shmem", "dma", "fabric-memory"]:
            page.evaluate("id => atlasMap.open(id)", ident)
            r = page.evaluate(LABEL_CHECK)
            assert r["bad"] == [], ident
            shown += r["n"]
        assert shown > 0  # some labels are shown at all
        page.click("#seed")
        assert page.evaluate(LABEL_CHECK)["bad"] == []
        t.check_clean()
    finally:
        t.close()


CJK = re.compile("[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def bad_breaks(text: str, lines: list[str]) -> list[tuple[str, str]]:
    """The line breaks that cut a word. A name may break at a space or a line break of its text,
    after _, -, /, at a CamelCase step or beside a Chinese character."""
    bad, at = [], 0
    for x, y in zip(lines, lines[1:]):
        at = text.index(x.strip(), at) + len(x.strip())
        if at < len(text) and text[at].isspace():
            continue
        a, b = x.rstrip()[-1:], y.lstrip()[:1]
        if not (a in "_-/" or CJK.match(a) or CJK.match(b) or (a.islower() and b.isupper())):
            bad.append((x, y))
    return bad


def test_explorer_names_break_between_words(browser, real_site):
    """No node label is cut inside a word ("Memory-seman|tic", "USE_ASCEND_D|IRECT")."""
    t, page = open_at(browser, (real_site / "explorer.html").as_uri(), "atlasMap", DESKTOP)
    try:
        bad = []
        for ident in ["hccs", "hccl", "ascend-shmem", "dma"]:
            page.evaluate("id => atlasMap.open(id)", ident)
            for node in page.evaluate("atlasMap.drawnIds()"):
                lines = page.evaluate("id => atlasMap.labelLines(id)", node)
                text = page.evaluate("id => atlasMap.labelText(id)", node)
                bad += [(node, *pair) for pair in bad_breaks(text, lines)]
        assert bad == []
        t.check_clean()
    finally:
        t.close()


def test_mini_fixture_pages(browser, mini_site, artifacts):
    t, page = open_at(browser, (mini_site / "explorer.html").as_uri(), "atlasMap", DESKTOP)
    try:
        assert page.evaluate("atlasMap.drawnIds()")
        check_view(page)
        assert serious_axe(page) == []
        flows = sorted(mini_site.glob("flow-*.html"))
        assert flows
        page.goto(flows[0].as_uri())
        wait_js(page, "!!(window.atlasFlow && window.atlasFlow.ready)")
        assert page.evaluate("atlasFlow.labelPx()") >= MIN_LABEL_PX
        assert page.evaluate("atlasFlow.overlaps()") == []
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / "mini-flow.png"), full_page=True)
        t.check_clean()
    finally:
        t.close()

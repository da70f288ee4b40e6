"""End-to-end tests of the relation explorer in headless Chromium (the flow pages are HTML and are
tested with the other document pages in test_site_pages.py).

The pages are opened from file:// with every non-file request aborted (and recorded: none may
be attempted), on the sample atlas of test_map.py (with the injection fixture), on the bundled
atlas (data/) and on the mini fixture. Skipped when Chromium or playwright is missing, unless
ATLAS_REQUIRE_BROWSER=1. Screenshots go to tests/artifacts/ (git-ignored)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from atlas.site import build_site
from atlas.index.compiled import load_atlas

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
    assert page.inner_text("#card h2") == "HCCL"  # English: the page's default language
    # edge labels only for the selection, and only where they fit (these short arrows carry none)
    assert set(page.evaluate("atlasMap.edgeLabels()")) <= \
        set(page.evaluate("atlasMap.edgesOf('hccl')"))
    # clicking a neighbour expands it (its neighbours join)
    click_node(page, "shmem")
    assert page.evaluate("atlasMap.selected()") == "shmem"
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "hcomm", "shmem", "udma"]
    card = page.inner_text("#card")
    assert "SHMEM" in card and "symmetric heap" in card and "对称堆" not in card  # one language
    page.click("label:has(#lang-both)")
    card = page.inner_text("#card")
    assert "symmetric heap" in card and "对称堆" in card
    page.click("label:has(#lang-en)")
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
    assert "the AIV kernel writes WQEs" in card and "AIV 核写 WQE" not in card
    page.click("label:has(#lang-zh)")
    card = page.inner_text("#card")
    assert "the AIV kernel writes WQEs" not in card and "AIV 核写 WQE" in card
    page.click("label:has(#lang-en)")
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
    assert page.inner_text("#card h2") == EVIL
    page.click("label:has(#lang-both)")
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
        # a phone gets the neighbourhood as lists, relation -> concepts, all on screen
        assert page.evaluate("atlasMap.listMode()") and not page.is_visible("#graph")
        groups = page.eval_on_selector_all("#neigh-list .neigh-group", "gs => gs.length")
        want = page.evaluate("atlasMap.neighbours('hccs')")
        got = sorted(set(page.eval_on_selector_all("#neigh-list button.neigh-item", "bs => bs.map(b => b.dataset.id)")))
        assert groups >= 3 and got == want
        no_sideways_scroll(page)
        assert page.evaluate("""[...document.querySelectorAll('#neigh-list button')].every(b => {
            const r = b.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth + 1; })""")
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / "explorer-hccs-390.png"))
        # a tap on a concept opens its neighbourhood, as a history entry
        page.click("#neigh-list button.neigh-item[data-id='hccl']")
        assert page.evaluate("atlasMap.selected()") == "hccl"
        page.go_back()
        wait_js(page, "atlasMap.selected() === 'hccs'")
        # the canvas is one tap away, the selection in view, labels at 12 px or more
        page.click("#show-graph")
        assert page.is_visible("#graph") and not page.evaluate("atlasMap.listMode()")
        assert page.evaluate("atlasMap.inView('hccs')")
        check_view(page)
        no_sideways_scroll(page)
        # the card comes below the graph
        g = page.eval_on_selector("#graph", "e => e.getBoundingClientRect().bottom")
        c = page.eval_on_selector("#panel", "e => e.getBoundingClientRect().top")
        assert c >= g - 1
        assert serious_axe(page) == []
        page.screenshot(path=str(artifacts / "explorer-hccs-390-graph.png"))
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
        if page.evaluate("atlasMap.listMode()"):
            page.click("#show-graph")
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
        t.check_clean()
    finally:
        t.close()


# ---- history, trail, expand, hide, pin, path, search ranking, edge labels ------------------------


def test_back_after_search_and_expand_returns_to_the_previous_focus(tab, site):
    page = tab.open((site / "explorer.html").as_uri(), "atlasMap")
    seed = page.evaluate("atlasMap.drawnIds()")
    page.fill("#search", "hcomm")
    page.keyboard.press("Enter")
    assert page.evaluate("atlasMap.selected()") == "hcomm"
    after_search = page.evaluate("atlasMap.drawnIds()")
    click_node(page, "hccl")  # an expand
    assert page.evaluate("atlasMap.selected()") == "hccl"
    assert page.evaluate("atlasMap.trail()") == [None, "hcomm", "hccl"]
    assert page.inner_text("#crumbs").split("\n")[-1] == "HCCL"
    page.go_back()
    wait_js(page, "atlasMap.selected() === 'hcomm'")
    assert page.evaluate("atlasMap.drawnIds()") == after_search
    page.go_back()
    wait_js(page, "atlasMap.selected() === null")
    assert page.evaluate("atlasMap.drawnIds()") == seed
    assert page.url.endswith("explorer.html") or page.url.endswith("#seed")
    page.go_forward()
    wait_js(page, "atlasMap.selected() === 'hcomm'")
    # a crumb goes back to its step
    page.go_forward()
    wait_js(page, "atlasMap.selected() === 'hccl'")
    page.click("#crumbs li:nth-child(2) button")
    wait_js(page, "atlasMap.selected() === 'hcomm'")
    tab.check_clean()


def test_hide_pin_and_path(tab, site):
    page = tab.open((site / "explorer.html").as_uri() + "#concept=hccl", "atlasMap")
    assert page.evaluate("atlasMap.drawnIds()") == ["hccl", "hcomm", "shmem"]
    page.click("#card .hide-btn")  # hides the selection itself
    assert page.evaluate("atlasMap.hidden()") == ["hccl"] and "hccl" not in page.evaluate("atlasMap.drawnIds()")
    assert "1 hidden" in page.inner_text("#status")
    page.click("#status button.unhide")
    assert page.evaluate("atlasMap.hidden()") == []
    page.evaluate("atlasMap.open('shmem')")
    page.click("#card .pin-btn")  # SHMEM pinned: it stays through the next focus
    assert page.evaluate("atlasMap.pinned()") == ["shmem"]
    page.evaluate("atlasMap.open('aiv-direct')")
    assert "shmem" in page.evaluate("atlasMap.drawnIds()")
    page.evaluate("atlasMap.hide('udma')")
    assert "udma" not in page.evaluate("atlasMap.drawnIds()")
    page.evaluate("atlasMap.pin('shmem', false)")
    # the path control: names as typed, the chain of relations drawn
    page.click("#pathbox summary")
    page.fill("#path-from", "HCCL")
    page.fill("#path-to", "直驱")
    page.click("#pathform button")
    assert page.evaluate("atlasMap.drawnIds()") == ["aiv-direct", "hccl", "shmem", "udma"]
    assert "path from HCCL to AIV direct drive (3 steps)" in page.inner_text("#status")
    assert page.evaluate("atlasMap.edgeCount()") == 3
    page.go_back()
    wait_js(page, "atlasMap.selected() === 'aiv-direct'")
    tab.check_clean()


def test_prefix_search_ranks_names_first(browser, real_site):
    t, page = open_at(browser, (real_site / "explorer.html").as_uri(), "atlasMap", DESKTOP)
    try:
        assert page.evaluate("atlasMap.search('hcc')")[:2] == ["hccl", "hccs"]
        assert page.evaluate("atlasMap.search('shm')")[0] == "ascend-shmem" or \
            page.evaluate("atlasMap.search('shm')")[0].startswith("shmem")
        # every concept comes first for its own id, and ahead of every concept whose names merely
        # contain the text for its short English name
        ids = sorted(p.stem for p in (real_site / "concepts").glob("*.html"))
        bad = page.evaluate("""ids => ids.filter(id => atlasMap.search(id)[0] !== id)""", ids)
        assert bad == []
        t.check_clean()
    finally:
        t.close()


def test_expand_keeps_the_origin_in_view(browser, real_site, artifacts):
    """Expanding a neighbour of a focus: the focus (the origin) and the expanded concept are both
    on the canvas, labels stay at 12 px or more, every edge label too."""
    t, page = open_at(browser, (real_site / "explorer.html").as_uri() + "#concept=hccs", "atlasMap", DESKTOP)
    try:
        bad = {}
        for origin in ("hccs", "hccl", "ascend-shmem", "dma"):
            for nb in page.evaluate("id => atlasMap.neighbours(id)", origin)[:8]:
                page.evaluate("id => atlasMap.open(id)", origin)
                page.evaluate("id => atlasMap.select(id)", nb)
                r = page.evaluate("""([o, n]) => ({o: atlasMap.inView(o), n: atlasMap.inView(n),
                    px: atlasMap.labelPx(),
                    lab: atlasMap.edgeLabels().length ? atlasMap.edgeFontPx() : 99})""", [origin, nb])
                if not (r["o"] and r["n"] and r["px"] >= MIN_LABEL_PX - 1e-6 and r["lab"] >= MIN_LABEL_PX - 1e-6):
                    bad[f"{origin}->{nb}"] = r
        assert bad == {}
        page.evaluate("atlasMap.open('hccs')")
        page.evaluate("atlasMap.select('hccl')")
        page.evaluate("atlasMap.select('ascend-shmem')")
        assert page.evaluate("atlasMap.trail()")[-3:] == ["hccs", "hccl", "ascend-shmem"]
        page.screenshot(path=str(artifacts / "explorer-two-expands-1440.png"))
        t.check_clean()
    finally:
        t.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440", "390"])
def test_every_edge_label_is_at_least_12_px(browser, real_site, viewport):
    """vis-network draws an edge label at its font size times the view's scale: at every view
    the page sets, that is 12 CSS px or more, or the label is not drawn."""
    t, page = open_at(browser, (real_site / "explorer.html").as_uri(), "atlasMap", viewport)
    try:
        if page.evaluate("atlasMap.listMode()"):
            page.click("#show-graph")
        small = []
        for ident in ["hccs", "hccl", "ascend-shmem", "dma", "fabric-memory", "aiv-direct-drive"]:
            page.evaluate("id => atlasMap.open(id)", ident)
            boxes = page.evaluate("atlasMap.labelBoxes()")
            px = page.evaluate("atlasMap.edgeFontPx()")
            if boxes and px < MIN_LABEL_PX - 1e-6:
                small.append((ident, px, len(boxes)))
            # measured: the label's drawn height holds a 12 px line
            small += [(ident, b["id"]) for b in boxes if b["bottom"] - b["top"] < MIN_LABEL_PX - 0.5]
        assert small == []
        t.check_clean()
    finally:
        t.close()


def test_path_matches_atlas_path(browser, real_site):
    """The explorer's path has the length of `atlas path` (networkx's shortest path over the
    relations either way) for random pairs of the bundled atlas: the oracle."""
    import random

    from atlas.view import queries

    atlas = load_atlas(ROOT / "data")
    ids = sorted(c.id for c in atlas.concepts)
    rnd = random.Random(22)
    pairs = [tuple(rnd.sample(ids, 2)) for _ in range(60)]
    t, page = open_at(browser, (real_site / "explorer.html").as_uri(), "atlasMap", DESKTOP)
    try:
        got = page.evaluate("ps => ps.map(p => atlasMap.shortestPath(p[0], p[1]))", pairs)
        for (a, b), ours in zip(pairs, got):
            want = queries.path(atlas, atlas.concept(a), atlas.concept(b))
            if not want:
                assert ours is None, (a, b)
                continue
            assert ours[0] == a and ours[-1] == b and len(ours) == len(want) + 1, (a, b)
            for x, y in zip(ours, ours[1:]):  # each step is a relation of the atlas
                assert y in page.evaluate("id => atlasMap.neighbours(id)", x)
        t.check_clean()
    finally:
        t.close()

"""The reading pages in headless Chromium: the overview table (index.html), the timeline picture
(timeline.html) and the concept pages, built from the sample atlas of test_map.py (with the
injection fixture) and from the bundled data. Every page is opened from file:// with the network
cut off; axe-core must report no serious or critical violation; at 390 px nothing scrolls
sideways. Screenshots go to tests/artifacts/. Skipped without Chromium unless
ATLAS_REQUIRE_BROWSER=1."""
from __future__ import annotations

from pathlib import Path

import pytest

from atlas.htmlmap import build_site

try:
    from tests.browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
    from tests.test_map import EVIL, SHA, sample_atlas
except ImportError:  # tests/ not a package: pytest put it on sys.path
    from browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
    from test_map import EVIL, SHA, sample_atlas

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(sample_atlas(), out)
    return out


@pytest.fixture(scope="module")
def real_site(tmp_path_factory) -> Path:
    from atlas.index import load_atlas

    out = tmp_path_factory.mktemp("real")
    build_site(load_atlas(ROOT / "data"), out)
    return out


def open_page(tab, path: Path, hook: str | None):
    if hook:
        return tab.open(path.as_uri(), hook)
    tab.page.goto(path.as_uri())
    return tab.page


def until(page, expression: str, timeout: float = 5.0):
    """Poll an expression with page.evaluate: wait_for_function compiles its predicate with
    eval in the page, which the pages' Content-Security-Policy refuses."""
    import time

    end = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value or time.monotonic() > end:
            assert value, f"timed out waiting for {expression}"
            return value
        page.wait_for_timeout(20)


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


PAGES = [("index.html", "atlasOverview", "overview"), ("timeline.html", "atlasTimeline", "timeline"),
         ("concepts/hccl.html", None, "concept")]


@pytest.mark.parametrize("name,hook,shot", PAGES)
def test_bundled_pages_clean_accessible_and_narrow(tab, real_site, artifacts, name, hook, shot):
    page = open_page(tab, real_site / name, hook)
    # landmarks: the shared navigation and one main region
    assert page.locator("nav.sitenav a").count() == 5 and page.locator("main").count() == 1
    assert page.evaluate("[...document.querySelectorAll('h1, h2, h3')].map(h => +h.tagName[1])")[0] == 1
    page.screenshot(path=str(artifacts / f"site-{shot}-1440.png"))
    assert axe_violations(page) == []
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(100)
    assert no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"site-{shot}-390.png"))
    tab.check_clean()


@pytest.mark.parametrize("name,hook,shot", PAGES)
def test_sample_pages_at_390_px(tab, site, name, hook, shot):
    """The phone width, with axe (the sample atlas keeps axe quick; the bundled pages share the
    same templates and style)."""
    tab.page.set_viewport_size({"width": 390, "height": 844})
    page = open_page(tab, site / name, hook)
    assert no_sideways_scroll(page)
    assert axe_violations(page) == []
    tab.check_clean()


def test_overview_order_filters_and_as_of(tab, site, artifacts):
    page = tab.open((site / "index.html").as_uri(), "atlasOverview")
    order = page.evaluate("atlasOverview.order()")
    assert order == ["hccl", "shmem", "udma", "aiv-direct", "evil", "hccs", "hcomm"]
    assert page.evaluate("[...document.querySelectorAll('tr.row.undated')].map(r => r.dataset.id)") \
        == ["aiv-direct", "evil", "hccs", "hcomm"]
    shown = lambda: page.evaluate("atlasOverview.shown()")  # noqa: E731
    # text: Chinese alias, full-width Latin, case; over both languages
    page.fill("#f-text", "直驱")  # typing filters after a short pause, by itself
    until(page, "document.querySelectorAll('tr.row:not(.filtered)').length === 1")
    assert shown() == ["aiv-direct"]
    page.fill("#f-text", "ＨＣＣＬ")
    assert shown() == ["hccl"]
    page.fill("#f-text", "通信域")  # a Chinese answer
    assert shown() == ["hcomm"]
    page.fill("#f-text", "")
    page.select_option("#f-kind", "library")
    assert shown() == ["hccl", "shmem", "hcomm"]
    page.select_option("#f-kind", "")
    page.select_option("#f-question", "address")
    assert shown() == ["shmem", "hcomm"]
    tint = "getComputedStyle(document.querySelector('#c-hcomm td[data-q=%s]')).backgroundColor"
    assert page.evaluate(tint % "address") != page.evaluate(tint % "submit")  # its column tinted
    assert page.evaluate("[...document.querySelectorAll('tbody.empty')].map(b => b.dataset.group)") \
        == ["2021", "2025"]
    page.select_option("#f-question", "_none")
    assert shown() == ["evil"]
    page.select_option("#f-question", "")
    page.select_option("#f-repo", "hicann/shmem")
    assert shown() == ["shmem", "udma"]
    page.select_option("#f-repo", "")
    page.select_option("#f-life", "pending-deprecation")
    assert shown() == ["udma"]
    page.click("#f-reset")
    until(page, "atlasOverview.shown().length === 7")
    # as of: rows first visible later are marked, in words too
    page.fill("#f-asof", "2022-01-01")
    assert page.evaluate("atlasOverview.later()") == ["shmem", "udma"]
    assert "not yet visible" in page.inner_text("#c-udma")
    assert "not yet visible" not in page.inner_text("#c-hccl")
    assert "2 not yet visible as of 2022-01-01" in page.inner_text("#status")
    page.check("#f-hide")
    assert shown() == ["hccl", "aiv-direct", "evil", "hccs", "hcomm"]
    page.screenshot(path=str(artifacts / "site-overview-asof.png"))
    page.click("#f-reset")
    until(page, "atlasOverview.later().length === 0")
    tab.check_clean()


def test_overview_reads_as_text_language_toggle_and_print(tab, site, artifacts):
    page = tab.open((site / "index.html").as_uri(), "atlasOverview")
    # the browser's own find sees the cells: they are text, not a picture
    assert page.evaluate("window.find('symmetric heap')") and page.evaluate("window.find('对称堆')")
    zh = "#c-shmem td.ans[data-q=address] .zh"
    en = "#c-shmem td.ans[data-q=address] .en"
    assert page.is_visible(zh) and page.is_visible(en)
    page.check("#lang-en")
    assert not page.is_visible(zh) and page.is_visible(en)
    page.check("#lang-zh")
    assert page.is_visible(zh) and not page.is_visible(en)
    page.check("#lang-both")
    # the header stays on screen while the table scrolls
    page.evaluate("window.scrollTo(0, 400)")
    top = page.evaluate("document.querySelector('#overview thead th').getBoundingClientRect().top")
    assert top >= -1
    page.emulate_media(media="print")
    assert not page.is_visible("#filterbox") and not page.is_visible("nav.sitenav")
    assert page.evaluate("getComputedStyle(document.querySelector('.tablebox')).overflowX") == "visible"
    page.emulate_media(media="screen")
    # a row's name opens the concept page
    page.click("#c-hcomm a.name")
    page.wait_for_url("**/concepts/hcomm.html")
    assert "communicators" in page.inner_text("main")
    tab.check_clean()


def test_overview_hash_marks_the_row(tab, site):
    page = tab.open((site / "index.html").as_uri() + "#concept=udma", "atlasOverview")
    assert page.evaluate("document.querySelector('tr.row.target').dataset.id") == "udma"
    assert page.evaluate("document.activeElement.closest('tr').id") == "c-udma"
    tab.check_clean()


def test_injection_inert_on_reading_pages(tab, site):
    page = tab.open((site / "index.html").as_uri(), "atlasOverview")
    assert EVIL in page.inner_text("#c-evil")
    page.fill("#f-text", "<!--")
    assert page.evaluate("atlasOverview.shown()") == ["evil"]
    page.goto((site / "concepts" / "evil.html").as_uri())
    assert page.inner_text("h1").startswith(EVIL)
    assert "</script><script>alert(2)</script>" in page.inner_text("main")
    assert page.evaluate("document.querySelectorAll('img, main b, script').length") == 0
    tab.check_clean()


def test_concept_page_without_javascript(browser, site, real_site, artifacts):
    ctx = browser.new_context(java_script_enabled=False, viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((site / "concepts" / "hccl.html").as_uri())
        text = page.inner_text("main")
        for want in ("HCCL", "集合通信库", "Huawei Collective Communication Library", "华为集合通信库",
                     "the collective", "集合语义", "Beginner HCCL.", "Professional HCCL.",
                     "First visible", "2021-03-01"):
            assert want in text, want
        hrefs = page.eval_on_selector_all("a.pin", "els => els.map(a => a.href)")
        assert f"https://github.com/hicann/hccl/blob/{SHA}/README.md#L25-L28" in hrefs
        rels = page.eval_on_selector_all("#relations a.concept-link",
                                         "els => els.map(a => a.getAttribute('href'))")
        assert sorted(rels) == ["hcomm.html", "shmem.html"]
        # the bundled atlas: a real card, names and pins
        from atlas.index import load_atlas

        atlas = load_atlas(ROOT / "data")
        c = atlas.concept("hccs")
        page.goto((real_site / "concepts" / "hccs.html").as_uri())
        text = page.inner_text("main")
        assert c.names.en in text and c.names.zh in text
        hrefs = page.eval_on_selector_all("a.pin", "els => els.map(a => a.href)")
        for ev in c.evidence:
            if ev.pin:
                assert any(f"/blob/{ev.pin.sha}/" in h and f"#L{ev.pin.start}" in h for h in hrefs)
        page.screenshot(path=str(artifacts / "site-concept-nojs.png"), full_page=True)
        assert all(u.startswith("file:") for u in requests)
    finally:
        ctx.close()


def test_timeline_as_of_tooltip_and_click(tab, site, artifacts):
    page = tab.open((site / "timeline.html").as_uri(), "atlasTimeline")
    assert page.evaluate("atlasTimeline.count()") == 3
    assert page.evaluate("atlasTimeline.later()") == []
    page.fill("#t-asof", "2024-12-31")
    assert page.evaluate("atlasTimeline.later()") == ["udma"]
    x_line = float(page.get_attribute("#asof-line", "x1"))
    x_udma = float(page.evaluate("document.querySelector('a.ev[data-id=udma] circle').getAttribute('cx')"))
    x_shmem = float(page.evaluate("document.querySelector('a.ev[data-id=shmem] circle').getAttribute('cx')"))
    assert x_shmem < x_line < x_udma
    page.hover("a.ev[data-id=hccl] circle")
    tip = page.inner_text("#tip")
    assert "a" * 40 in tip and "term: HCCL" in tip and "exact" in tip and "集合通信库" in tip
    page.screenshot(path=str(artifacts / "site-timeline-tip.png"))
    page.click("a.ev[data-id=shmem] circle")
    page.wait_for_url("**/concepts/shmem.html")
    assert "SHMEM" in page.inner_text("h1")
    # the keyboard: marks are links in the tab order; focus shows the tooltip, Enter opens
    page.go_back()
    until(page, "!!(window.atlasTimeline && window.atlasTimeline.ready)")
    assert page.evaluate("[...document.querySelectorAll('a.ev')].every(a => a.tabIndex === 0)")
    page.focus("a.ev[data-id=udma]")
    assert page.is_visible("#tip") and "c" * 40 in page.inner_text("#tip")
    page.keyboard.press("Escape")
    assert not page.is_visible("#tip")
    page.keyboard.press("Enter")
    page.wait_for_url("**/concepts/udma.html")
    tab.check_clean()


def test_timeline_lane_names_stay_in_view_when_scrolled_sideways(tab, site, artifacts):
    tab.page.set_viewport_size({"width": 390, "height": 844})
    page = tab.open((site / "timeline.html").as_uri(), "atlasTimeline")
    page.evaluate("document.querySelector('.picbox').scrollIntoView()")
    assert page.evaluate("(b => b.scrollWidth > b.clientWidth + 150)(document.querySelector('.picbox'))")
    seen = """(() => {
      const box = document.querySelector('.picbox').getBoundingClientRect();
      return [...document.querySelectorAll('.lane-pin .lane-name')].map(t => {
        const r = t.getBoundingClientRect(), bg = t.parentNode.querySelector('rect').getBoundingClientRect();
        return [t.textContent, r.left >= box.left && r.right <= box.right, bg.right >= r.right];
      });
    })()"""
    for scroll in ("0", "b.scrollWidth"):
        page.evaluate(f"(b => {{ b.scrollLeft = {scroll}; }})(document.querySelector('.picbox'))")
        page.wait_for_timeout(50)
        assert page.evaluate(seen) == [["hicann/hccl", True, True], ["hicann/shmem", True, True]]
    assert page.evaluate("document.querySelector('.picbox').scrollLeft") > 150
    # the pinned labels let clicks through to the picture under them
    assert page.evaluate("""(() => { const r = document.querySelector('.lane-pin .lane-name').getBoundingClientRect();
        return !document.elementFromPoint(r.left + 4, r.top + 4).closest('.lane-pin'); })()""")
    page.screenshot(path=str(artifacts / "site-timeline-390-scrolled.png"))
    tab.check_clean()

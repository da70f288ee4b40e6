"""The site's document pages in headless Chromium: the compact overview (index.html), the full table,
the two-axis map, the timeline, the flows and each flow page, the repositories and a repository
page, the seed page and the concept pages, built from the sample atlas of test_map.py (with the
injection fixture) and from the bundled data. Every page is opened from file:// with the network
cut off; axe-core must report no serious or critical violation, no console error may appear, and
at 390 px nothing scrolls sideways. Every page shows one language at a time. Screenshots go to
tests/artifacts/. Skipped without Chromium unless ATLAS_REQUIRE_BROWSER=1."""
from __future__ import annotations

from pathlib import Path

import pytest

from atlas.site import build_site

try:
    from tests.browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
    from tests.test_map import EVIL, SHA, sample_atlas
except ImportError:  # tests/ not a package: pytest put it on sys.path
    from browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
    from test_map import EVIL, SHA, sample_atlas

ROOT = Path(__file__).resolve().parent.parent
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(sample_atlas(), out)
    return out


@pytest.fixture(scope="module")
def real_site(tmp_path_factory) -> Path:
    """The site of the bundled data as `atlas map` builds it (commands.site): with the API pages of
    the API store (no clone, so no source pages)."""
    from atlas.opened import Opened

    out = tmp_path_factory.mktemp("real")
    with pytest.MonkeyPatch.context() as mp:  # conftest.py sets the private cache per test: too late here
        mp.setenv("ATLAS_CACHE", str(tmp_path_factory.getbasetemp() / "atlas-cache"))
        opened = Opened(ROOT / "data")
        build_site(opened.atlas, out, api=[opened.api.page(r) for r in opened.api.repos()])
    return out


def open_page(tab, path: Path, hook: str | None, frag: str = ""):
    if hook:
        return tab.open(path.as_uri() + frag, hook)
    tab.page.goto(path.as_uri() + frag)
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


# Every visible piece of text is in the chosen language: its nearest element with a lang
# attribute (below <html>, which the switch changes) says so, untagged text being English. Ids,
# code, text the data holds in one language only (`.mono`), the switch itself and text with no
# letters (dates, numbers, glyphs) are exempt.
LANGUAGE_CHECK = r"""want => {
  const bad = [], skip = 'code, kbd, pre, .mono, [translate="no"], .langs, script, style, select, option, #atlas-data';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walker.nextNode())) {
    const t = n.nodeValue.trim(), el = n.parentElement;
    if (!t || !/[A-Za-z\u3400-\u9fff]/.test(t) || !el || el.closest(skip)) continue;
    const r = document.createRange(); r.selectNodeContents(n);
    if (!r.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
    const tagged = el.closest('[lang]:not(html)');
    const lang = tagged ? tagged.getAttribute('lang') : 'en';
    if (!lang.startsWith(want)) bad.push(t.slice(0, 50));
  }
  return [...new Set(bad)];
}"""


def set_lang(page, value: str):
    page.click(f"label:has(#lang-{value})")
    page.wait_for_timeout(60)


# page, its test hook (None: a page without one), what the first screen must hold
PAGES = [("index.html", "atlasOverview", ""), ("table.html", None, ""), ("map.html", None, ""),
         ("timeline.html", "atlasTimeline", ""), ("flows.html", None, ""),
         ("flow-full-mesh-dispatch-path.html", "atlasFlow", "#step=scan-and-ring"),
         ("flow-mooncake-ascend-paths.html", "atlasFlow", ""), ("repos.html", None, ""),
         ("repos/hicann/hccl.html", None, ""), ("seed.html", None, "#page-8"),
         ("concepts/hccs.html", None, ""), ("explorer.html", "atlasMap", "#concept=hccs"),
         ("api/index.html", None, ""), ("api/hicann+shmem.html", "atlasApi", "")]


@pytest.mark.parametrize("name,hook,frag", PAGES, ids=[p[0] for p in PAGES])
def test_every_page_type_clean_accessible_narrow_and_in_one_language(browser, real_site, artifacts, name, hook, frag):
    shot = name.replace("/", "-").removesuffix(".html")
    t = Page(browser)
    try:
        t.page.set_viewport_size(DESKTOP)
        page = open_page(t, real_site / name, hook, frag)
        # landmarks: the shared navigation and one main region; headings start at h1
        assert page.locator("nav.sitenav ul a").count() == 9 and page.locator("main").count() == 1
        assert page.evaluate("[...document.querySelectorAll('h1, h2, h3')].map(h => +h.tagName[1])")[0] == 1
        assert no_sideways_scroll(page)
        assert axe_violations(page) == []
        for lang in ("en", "zh"):
            set_lang(page, lang)
            assert page.evaluate(LANGUAGE_CHECK, lang) == [], (name, lang)
            page.screenshot(path=str(artifacts / f"site-{shot}-{lang}-1440.png"))
        set_lang(page, "en")
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(200)
        assert no_sideways_scroll(page), name
        assert axe_violations(page) == []
        page.screenshot(path=str(artifacts / f"site-{shot}-390.png"))
        t.check_clean()
    finally:
        t.close()


def test_no_invalid_host_and_no_link_to_a_missing_page(browser, real_site):
    """Every link of every page: none to an `.invalid` host; every local one to a file the map
    wrote (and a #fragment to an element of that page)."""
    from html.parser import HTMLParser

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs, self.ids = [], set()

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if a.get("id"):
                self.ids.add(a["id"])
            if tag == "a" and a.get("href"):
                self.hrefs.append(a["href"])

    pages = {p: Links() for p in real_site.rglob("*.html")}
    for p, parser in pages.items():
        parser.feed(p.read_text("utf-8"))
    bad = []
    for p, parser in pages.items():
        for href in parser.hrefs:
            if ".invalid" in href:
                bad.append((p.name, href))
            if href.startswith(("http://", "https://")):
                continue
            target, _, frag = href.partition("#")
            dest = (p.parent / target).resolve() if target else p
            if not dest.is_file():
                bad.append((p.name, href))
            elif frag and not ("=" in frag or frag in pages[dest].ids):
                bad.append((p.name, href))
    assert bad == []
    seed_links = [h for parser in pages.values() for h in parser.hrefs if "seed.html#page-" in h]
    assert len(seed_links) >= 7  # the second-hand citations of the seed, at home now


def test_language_is_remembered_across_pages_and_works_without_script(browser, real_site):
    t = Page(browser)
    try:
        page = t.open((real_site / "index.html").as_uri(), "atlasOverview")
        set_lang(page, "zh")
        page.goto((real_site / "concepts" / "hccl.html").as_uri())
        page.wait_for_timeout(100)
        assert page.is_checked("#lang-zh") and page.evaluate("document.documentElement.lang") == "zh"
        assert page.evaluate(LANGUAGE_CHECK, "zh") == []
        page.goto((real_site / "explorer.html").as_uri() + "#concept=hccl")
        until(page, "!!(window.atlasMap && atlasMap.ready)")
        assert page.evaluate(LANGUAGE_CHECK, "zh") == []
        set_lang(page, "en")
        t.check_clean()
    finally:
        t.close()
    ctx = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        page = ctx.new_page()
        page.goto((real_site / "concepts" / "hccl.html").as_uri())
        assert page.is_visible("#beginner .en") and not page.is_visible("#beginner .zh")
        page.click("label:has(#lang-zh)")
        assert page.is_visible("#beginner .zh") and not page.is_visible("#beginner .en")
        assert "For a newcomer" not in page.inner_text("main") and "入门" in page.inner_text("main")
    finally:
        ctx.close()


# ---- the compact overview ----------------------------------------------------------------------


def test_overview_first_screen_holds_25_concepts_and_opens_sentences(browser, real_site, artifacts):
    t = Page(browser)
    try:
        t.page.set_viewport_size(DESKTOP)
        page = t.open((real_site / "index.html").as_uri(), "atlasOverview")
        seen = page.evaluate("""[...document.querySelectorAll('#grid tr.row')].filter(tr => {
            const r = tr.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }).length""")
        assert seen >= 25
        heights = page.evaluate("[...document.querySelectorAll('#grid tr.row')].slice(0, 40)"
                                ".map(tr => tr.getBoundingClientRect().height)")
        assert sorted(heights)[len(heights) // 2] <= 28
        # HCCL is on the first screen, and its organise cell opens the sentence on focus
        hccl = page.evaluate("document.getElementById('c-hccl').getBoundingClientRect().bottom")
        assert hccl <= 900
        page.click("#c-hccl td:nth-child(2)")  # organise: a click focuses the cell and opens it
        assert page.evaluate("document.activeElement.closest('tr').id") == "c-hccl"
        assert page.is_visible("#detail")
        assert "organises" in page.inner_text("#detail").lower() or "organize" in page.inner_text("#detail").lower()
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.cellIndex") == 3  # submit: HCCL does not answer address
        page.keyboard.press("Escape")
        assert not page.is_visible("#detail")
        # the grid is one tab stop: the first ● cell
        assert page.evaluate("document.querySelectorAll('#grid td[tabindex=\"0\"]').length") == 1
        page.click("#c-hccs td:nth-child(6)")  # link
        assert "NPU-to-NPU" in page.inner_text("#detail")
        page.screenshot(path=str(artifacts / "overview-sentence-1440.png"))
        # grouped by first seen year instead of kind
        page.evaluate("atlasOverview.groupBy('year')")
        groups = page.evaluate("atlasOverview.groups()")
        assert groups[0] < groups[1] and groups[-1] == "undated"
        page.evaluate("atlasOverview.groupBy('kind')")
        assert page.evaluate("atlasOverview.groups()")[0] == "library"
        # the phone's first screen: the concept column and all six questions
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(200)
        right = page.evaluate("document.querySelector('#grid thead th[data-q=peer]').getBoundingClientRect().right")
        assert right <= 390
        t.check_clean()
    finally:
        t.close()


def test_overview_filters_group_and_as_of(tab, site, artifacts):
    page = tab.open((site / "index.html").as_uri(), "atlasOverview")
    assert page.evaluate("atlasOverview.order()") == ["hccl", "hcomm", "shmem", "hccs", "udma", "aiv-direct", "evil"]
    shown = lambda: page.evaluate("atlasOverview.shown()")  # noqa: E731
    page.click("#filterbox summary")
    page.fill("#f-text", "直驱")
    until(page, "document.querySelectorAll('tr.row:not(.filtered)').length === 1")
    assert shown() == ["aiv-direct"]
    page.fill("#f-text", "ＨＣＣＬ")
    assert shown() == ["hccl"]
    page.fill("#f-text", "通信域")  # a Chinese answer: the sentences are searched too
    assert shown() == ["hcomm"]
    page.fill("#f-text", "")
    page.select_option("#f-kind", "library")
    assert shown() == ["hccl", "hcomm", "shmem"]
    page.select_option("#f-kind", "")
    page.select_option("#f-question", "address")
    assert shown() == ["hcomm", "shmem"]
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
    page.fill("#f-asof", "2022-01-01")
    assert page.evaluate("atlasOverview.later()") == ["shmem", "udma"]
    assert page.evaluate("""[...document.querySelectorAll('tr.later')].map(tr => tr.id)""") == ["c-shmem", "c-udma"]
    mark = "getComputedStyle(document.querySelector('#c-%s td.first'), '::after').content"
    assert "not yet" in page.evaluate(mark % "udma") and page.evaluate(mark % "hccl") == "none"
    assert "2 not yet visible as of 2022-01-01" in page.inner_text("#status")
    page.check("#f-hide")
    assert shown() == ["hccl", "hcomm", "hccs", "aiv-direct", "evil"]
    page.click("#f-reset")
    until(page, "atlasOverview.later().length === 0")
    page.evaluate("atlasOverview.groupBy('year')")
    assert page.evaluate("atlasOverview.order()") == ["hccl", "shmem", "udma", "aiv-direct", "evil", "hccs", "hcomm"]
    tab.check_clean()


def test_overview_hash_marks_the_row_and_injection_is_text(tab, site):
    page = tab.open((site / "index.html").as_uri() + "#concept=udma", "atlasOverview")
    assert page.evaluate("document.querySelector('tr.row.target').id") == "c-udma"
    assert page.evaluate("document.activeElement.closest('tr').id") == "c-udma"
    assert EVIL in page.get_attribute("#c-evil th a", "title")  # the grid shows the short name
    assert page.inner_text("#c-evil th a").startswith("</script><img src=x")
    page.click("#filterbox summary")
    page.fill("#f-text", "<!--")
    assert page.evaluate("atlasOverview.shown()") == ["evil"]
    page.goto((site / "concepts" / "evil.html").as_uri())
    assert page.inner_text("h1").startswith(EVIL)
    assert "</script><script>alert(2)</script>" in page.inner_text("main")
    assert page.evaluate("document.querySelectorAll('img, main b, main script').length") == 0
    tab.check_clean()


def test_full_table_reads_as_text_and_prints(tab, site):
    page = open_page(tab, site / "table.html", None)
    assert page.evaluate("window.find('symmetric heap')")
    set_lang(page, "zh")
    assert page.evaluate("window.find('对称堆')") and not page.is_visible("#c-shmem td.ans[data-q=address] .en")
    set_lang(page, "en")
    page.evaluate("window.scrollTo(0, 400)")
    assert page.evaluate("document.querySelector('#overview thead th').getBoundingClientRect().top") >= -1
    page.emulate_media(media="print")
    assert not page.is_visible("nav.sitenav")
    assert page.evaluate("getComputedStyle(document.querySelector('.tablebox')).overflowX") == "visible"
    page.emulate_media(media="screen")
    page.click("#c-hcomm a.name")
    page.wait_for_url("**/concepts/hcomm.html")
    tab.check_clean()


# ---- flows ---------------------------------------------------------------------------------------


def test_flow_pages_without_javascript_hold_every_step(browser, real_site):
    from atlas.index.compiled import load_atlas

    atlas = load_atlas(ROOT / "data")
    ctx = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        page = ctx.new_page()
        for f in atlas.flows:
            page.goto((real_site / f"flow-{f.id}.html").as_uri())
            text = page.inner_text("main")
            assert f.title.en in page.inner_text("h1")
            for s in f.steps:
                assert (s.title.en or s.label.en) in text, (f.id, s.id)
                assert s.label.en[:40] in text, (f.id, s.id)  # the detail, shown in place
                if s.source and s.source.pin:
                    assert page.locator(f"#step-{s.id} a.pin").count() == 1
    finally:
        ctx.close()


def test_flow_reads_in_three_screens_selects_and_goes_back(browser, real_site, artifacts):
    t = Page(browser)
    try:
        t.page.set_viewport_size(DESKTOP)
        page = t.open((real_site / "flow-full-mesh-dispatch-path.html").as_uri(), "atlasFlow")
        assert len(page.evaluate("atlasFlow.steps()")) == 21
        assert page.evaluate("document.documentElement.scrollHeight") <= 3 * 900
        assert page.evaluate("[...document.querySelectorAll('a.step-link')]"
                             ".every(a => a.getBoundingClientRect().height <= 44)")
        page.click("#step-stage-pack a.step-link")
        assert page.evaluate("atlasFlow.selected()") == "stage-pack"
        assert "480 B payload" in page.inner_text("#card")
        page.click("#step-wqe-desc a.step-link")
        assert page.evaluate("atlasFlow.selected()") == "wqe-desc"  # at once, not on the next event
        # the keyboard lands on the heading of the step just chosen, inside the panel
        assert page.evaluate("(() => { const a = document.activeElement, c = document.getElementById('card');"
                             " return c.contains(a) && a.classList.contains('dtitle') && c.dataset.step; })()"
                             ) == "wqe-desc"
        page.go_back()
        until(page, "atlasFlow.selected() === 'stage-pack'")
        page.screenshot(path=str(artifacts / "flow-21-1440.png"))
        # alternatives side by side, labelled
        page.goto((real_site / "flow-mooncake-ascend-paths.html").as_uri())
        until(page, "!!(window.atlasFlow && atlasFlow.ready)")
        tops = page.evaluate("[...document.querySelectorAll('.choice .branch')]"
                             ".map(b => Math.round(b.getBoundingClientRect().top))")
        assert len(tops) == 3 and len(set(tops)) == 1  # one row
        assert "one is taken" in page.inner_text(".choice .choice-head")
        page.set_viewport_size(PHONE)
        page.click("#step-adxl-transfer a.step-link")
        assert page.is_visible("#step-adxl-transfer .detail")  # opened in place on a phone
        assert no_sideways_scroll(page)
        t.check_clean()
    finally:
        t.close()


# ---- concept, repository and seed pages ----------------------------------------------------------


def test_concept_page_without_javascript(browser, site, real_site, artifacts):
    ctx = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        page = ctx.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((site / "concepts" / "hccl.html").as_uri())
        page.click("label:has(#lang-both)")
        text = page.inner_text("main")
        for want in ("HCCL", "集合通信库", "Huawei Collective Communication Library", "华为集合通信库",
                     "the collective", "集合语义", "Beginner HCCL.", "Professional HCCL.",
                     "First seen in", "2021-03-01"):
            assert want in text, want
        hrefs = page.eval_on_selector_all("a.pin", "els => els.map(a => a.href)")
        assert f"https://github.com/hicann/hccl/blob/{SHA}/README.md#L25-L28" in hrefs
        rels = page.eval_on_selector_all("#relations a.concept-link",
                                         "els => els.map(a => a.getAttribute('href'))")
        assert sorted(rels) == ["hcomm.html", "shmem.html"]
        from atlas.index.compiled import load_atlas

        atlas = load_atlas(ROOT / "data")
        c = atlas.concept("hccs")
        page.goto((real_site / "concepts" / "hccs.html").as_uri())
        page.click("label:has(#lang-both)")
        text = page.inner_text("main")
        assert c.names.en in text and c.names.zh in text
        assert "`" not in text  # code spans rendered, not shown raw
        hrefs = page.eval_on_selector_all("a.pin", "els => els.map(a => a.href)")
        for ev in c.evidence:
            if ev.pin:
                assert any(f"/blob/{ev.pin.sha}/" in h and f"#L{ev.pin.start}" in h for h in hrefs)
        page.screenshot(path=str(artifacts / "site-concept-nojs.png"), full_page=True)
        assert all(u.startswith("file:") for u in requests)
    finally:
        ctx.close()


def test_no_raw_backticks_on_concept_pages_explorer_card_and_flow_panel(browser, real_site):
    t = Page(browser)
    try:
        page = t.page
        raw = 0
        for p in sorted((real_site / "concepts").glob("*.html")):
            page.goto(p.as_uri())
            raw += page.evaluate("document.querySelector('main').innerText.split('`').length - 1")
        assert raw == 0
        page.goto((real_site / "explorer.html").as_uri() + "#concept=aiv-direct-drive")
        until(page, "!!(window.atlasMap && atlasMap.ready)")
        set_lang(page, "both")
        assert "`" not in page.inner_text("#card") and page.locator("#card code").count() > 3
        page.goto((real_site / "flow-tensor-to-wqe-lowering.html").as_uri() + "#step=quiet")
        until(page, "!!(window.atlasFlow && atlasFlow.ready)")
        assert "`" not in page.inner_text("#card")
        set_lang(page, "en")
        t.check_clean()
    finally:
        t.close()


def test_repository_page_and_seed_anchors(tab, real_site):
    page = open_page(tab, real_site / "repos" / "kvcache-ai" / "Mooncake.html", None)
    text = page.inner_text("main")
    assert "Mooncake" in text and "Concepts first seen here" in text and "first seen in" in text
    assert page.locator("#first-seen li").count() >= 3
    page.goto((real_site / "concepts" / "deepep-moe-dis-dispatch-h.html").as_uri())
    page.click("a.pin.seed[href$='page-3']")
    page.wait_for_url("**/seed.html#page-3")
    assert page.evaluate("document.querySelector(':target').id") == "page-3"
    assert "three" in page.inner_text("#page-3").lower()
    tab.check_clean()


# ---- the timeline --------------------------------------------------------------------------------


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
    set_lang(page, "both")
    page.hover("a.ev[data-id=hccl] circle")
    tip = page.inner_text("#tip")
    assert "a" * 40 in tip and "term: HCCL" in tip and "exact" in tip and "集合通信库" in tip
    page.screenshot(path=str(artifacts / "site-timeline-tip.png"))
    set_lang(page, "en")
    page.click("a.ev[data-id=shmem] circle")
    page.wait_for_url("**/concepts/shmem.html")
    assert "SHMEM" in page.inner_text("h1")
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


def test_timeline_labels_are_never_cut(tab, real_site):
    page = tab.open((real_site / "timeline.html").as_uri(), "atlasTimeline")
    labels = page.eval_on_selector_all("text.ev-label", "ts => ts.map(t => t.textContent)")
    assert labels and not [x for x in labels if "\u2026" in x]
    tab.check_clean()


def test_timeline_lane_names_stay_in_view_when_scrolled_sideways(tab, site, artifacts):
    tab.page.set_viewport_size(PHONE)
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
    assert page.evaluate("""(() => { const r = document.querySelector('.lane-pin .lane-name').getBoundingClientRect();
        return !document.elementFromPoint(r.left + 4, r.top + 4).closest('.lane-pin'); })()""")
    tab.check_clean()

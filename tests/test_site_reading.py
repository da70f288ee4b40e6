"""The site read in Chinese and on a phone, in headless Chromium, on the bundled atlas's site: the
explorer's header and lane titles in 中文, the overview's question heads at 390 px measured against
their boxes, both axes on the overview's first screen at 1440, flow steps numbered in the order
shown, and no box that scrolls sideways at 390. Each layout check runs in English and in Chinese at
1440 and 390, with axe-core (serious and critical) in both languages. Screenshots go to
tests/artifacts/. Skipped without Chromium unless ATLAS_REQUIRE_BROWSER=1."""
from __future__ import annotations

import pytest

try:
    from tests.browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
    from tests.test_site_pages import DESKTOP, PHONE, ROOT, open_page, real_site, set_lang  # noqa: F401
except ImportError:  # tests/ not a package: pytest put it on sys.path
    from browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
    from test_site_pages import DESKTOP, PHONE, ROOT, open_page, real_site, set_lang  # noqa: F401

SIZES = [("1440", DESKTOP), ("390", PHONE)]
LANGS = ("en", "zh")

# Elements whose content is wider than their box and that scroll (or clip) it sideways: a phone
# reader would have to scroll inside them to read a cell.
SIDEWAYS = r"""() => [...document.querySelectorAll('body *')].filter(e => {
  const s = getComputedStyle(e);
  if (!/(auto|scroll)/.test(s.overflowX) || e.clientWidth === 0) return false;
  return e.scrollWidth > e.clientWidth + 1;
}).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
          + (typeof e.className === 'string' && e.className ? '.' + e.className : ''))"""

# Each heading cell's text against the cell: the rectangle of its rendered text inside the cell's
# box (a header clipped into "organaddresubm" sticks out of it).
HEAD_FITS = r"""sel => [...document.querySelectorAll(sel)].filter(th => th.offsetParent).map(th => {
  const r = document.createRange(); r.selectNodeContents(th);
  const t = r.getBoundingClientRect(), b = th.getBoundingClientRect();
  return [th.dataset.q || th.className, t.width > 0 && t.left >= b.left - 0.5 && t.right <= b.right + 0.5
          && t.top >= b.top - 0.5 && t.bottom <= b.bottom + 0.5];
})"""


def _sized(t, size: dict, lang: str, url: str, hook: str | None):
    t.page.set_viewport_size(size)
    page = t.page
    page.goto(url)
    if hook:
        page.wait_for_function(f"window.{hook} && window.{hook}.ready")
    set_lang(page, lang)
    page.wait_for_timeout(150)
    return page


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("width,size", SIZES, ids=[s[0] for s in SIZES])
def test_explorer_header_and_lanes_read_in_each_language(browser, real_site, artifacts, width, size, lang):
    """The navigation keeps its light text on navy in 中文 (axe color-contrast), the folded forms'
    titles stay on one line, and a lane title names its question once."""
    t = Page(browser)
    try:
        page = _sized(t, size, lang, (real_site / "explorer.html").as_uri(), "atlasMap")
        assert axe_violations(page) == [], (width, lang)
        colours = page.evaluate("[...document.querySelectorAll('.sitenav ul a span')].filter(s => s.offsetParent)"
                                ".map(s => getComputedStyle(s).color)")
        assert colours and all(c in ("rgb(255, 255, 255)", "rgb(26, 54, 93)") for c in colours)
        for sel in ("#pathbox summary", "#filters summary"):
            h = page.evaluate(f"(s => [s.getBoundingClientRect().height, parseFloat(getComputedStyle(s).lineHeight)"
                              f" || 22])(document.querySelector('{sel}'))")
            assert h[0] <= h[1] * 1.3, (sel, h)  # one line
        if width == "1440":  # the lanes are drawn on the desktop's canvas (the phone opens on lists)
            lanes = page.evaluate("[...document.querySelectorAll('#lanes .lane')].filter(l => !l.hidden)"
                                  ".map(l => l.innerText.replace(/\\s+/g, ' ').trim())")
            assert lanes, "no lane titles drawn"
            questions = page.evaluate("[...document.querySelectorAll('#lanes .lane .lane-q')]"
                                      ".map(q => q.innerText.trim()).filter(Boolean)")
            for text, q in zip(lanes, questions):
                assert text.count(q) == 1, (text, q)
        page.screenshot(path=str(artifacts / f"reading-explorer-{lang}-{width}.png"))
        t.check_clean()
    finally:
        t.close()


@pytest.mark.parametrize("lang", (*LANGS, "both"))
def test_overview_question_heads_legible_on_a_phone(browser, real_site, artifacts, lang):
    """At 390 px each question head (and the kind's) shows its whole text inside its box, the
    columns fit the screen (nothing scrolls sideways) and axe finds nothing serious."""
    t = Page(browser)
    try:
        page = _sized(t, PHONE, lang, (real_site / "index.html").as_uri(), "atlasOverview")
        heads = page.evaluate(HEAD_FITS, "#grid thead th")
        assert len(heads) >= 8 and all(ok for _h, ok in heads), heads
        right = page.evaluate("Math.max(...[...document.querySelectorAll('#grid thead th')]"
                              ".filter(th => th.offsetParent).map(th => th.getBoundingClientRect().right))")
        assert right <= 390
        assert page.evaluate(SIDEWAYS) == []
        # a lifecycle other than active is still said, on a line under its row
        life = "getComputedStyle(document.querySelector('td.life:not([data-l=active])')).display"
        assert page.evaluate(life) != "none"
        if lang != "both":
            assert axe_violations(page) == [], lang
        page.screenshot(path=str(artifacts / f"reading-overview-{lang}-390.png"))
        t.check_clean()
    finally:
        t.close()


@pytest.mark.parametrize("lang", LANGS)
def test_overview_first_screen_shows_both_axes(browser, real_site, artifacts, lang):
    """At 1440x900 the first screen holds the six question columns and, on every row in view, the
    history strip's dot at the row's first seen day (left to right in date order)."""
    t = Page(browser)
    try:
        page = _sized(t, DESKTOP, lang, (real_site / "index.html").as_uri(), "atlasOverview")
        qs = page.evaluate("[...document.querySelectorAll('#grid thead th.q')].map(th => (r => r.top >= 0"
                           " && r.bottom <= innerHeight && r.right <= innerWidth)(th.getBoundingClientRect()))")
        assert qs == [True] * 6
        rows = page.evaluate("""[...document.querySelectorAll('#grid tr.row')].filter(tr => {
            const r = tr.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }).map(tr => {
            const dot = tr.querySelector('.strip i'), time = tr.querySelector('time');
            if (!dot) return null;
            const d = dot.getBoundingClientRect();
            return [time.dateTime, d.left, d.width > 0 && d.right <= innerWidth && d.bottom <= innerHeight];
        })""")
        dated = [r for r in rows if r]
        assert len(rows) >= 25 and len(dated) >= 20 and all(r[2] for r in dated)
        by_day = sorted(dated)
        assert all(a[1] <= b[1] + 0.01 for a, b in zip(by_day, by_day[1:]))  # later day, further right
        assert axe_violations(page) == [], lang
        page.screenshot(path=str(artifacts / f"reading-overview-{lang}-1440.png"))
        t.check_clean()
    finally:
        t.close()


def test_flow_steps_are_numbered_in_the_order_shown(browser, real_site):
    """Every flow page numbers its steps 1, 2, 3 ... down the page (token-journey-128p listed its
    alternatives last in the data and showed them after the step that chooses)."""
    from atlas.index.compiled import load_atlas

    t = Page(browser)
    try:
        for f in load_atlas(ROOT / "data").flows:
            page = t.page
            page.goto((real_site / f"flow-{f.id}.html").as_uri())
            nums = page.evaluate("[...document.querySelectorAll('li.step a.step-link .num')].map(n => +n.textContent)")
            assert nums == list(range(1, len(f.steps) + 1)), (f.id, nums)
            # a predecessor's number is the number its step shows
            shown = page.evaluate("Object.fromEntries([...document.querySelectorAll('li.step')]"
                                  ".map(li => [li.dataset.step, li.dataset.n]))")
            preds = page.evaluate("[...document.querySelectorAll('a.pred')].map(a => [a.getAttribute('href')"
                                  ".slice(6), a.textContent.replace(/[^0-9]/g, '')])")
            assert all(shown[s] == n for s, n in preds)
        t.check_clean()
    finally:
        t.close()


# ---- API pages ------------------------------------------------------------------------------------

API = "api/hicann+shmem.html"


def _api_rows(page) -> list[list]:
    import json

    return json.loads(page.evaluate("document.getElementById('atlas-data').textContent"))


def test_api_sorts_by_every_column_and_keeps_the_filter_across_reload(browser, real_site, artifacts):
    """Each sortable head orders the rows as its key says (oracle: the page's own rows sorted in
    Python), a second click reverses it, and the filters, order and page live in the address: a
    reload opens the same view."""
    t = Page(browser)
    try:
        t.page.set_viewport_size(DESKTOP)
        page = t.open((real_site / API).as_uri(), "atlasApi")
        d = _api_rows(page)
        rows, rels = d["rows"], d["releases"]
        ix = {n: i for i, n in enumerate(rels)}
        keys = {"name": lambda r: (r[0].lower(), r[0]), "kind": lambda r: (r[1], r[0].lower()),
                "first": lambda r: (r[2] or "9999", r[0].lower()),
                "release": lambda r: (ix.get(r[5], len(rels)), r[2] or "9999", r[0].lower())}
        for col, key in keys.items():
            for direction in ("asc", "desc"):
                if page.evaluate("atlasApi.sort()") != [col, direction]:
                    page.click(f"#api thead th[data-sort={col}] button")
                assert page.evaluate("atlasApi.sort()") == [col, direction]
                order = sorted(range(len(rows)), key=lambda i: key(rows[i]), reverse=direction == "desc")
                if direction == "desc":  # ties keep the page's order, as in the page
                    order = sorted(range(len(rows)), key=lambda i: (key(rows[i]), -i), reverse=True)
                want = [rows[i][0] for i in order][:d["pageRows"]]
                assert page.evaluate("atlasApi.names()") == want, (col, direction)
                aria = page.get_attribute(f"#api thead th[data-sort={col}]", "aria-sort")
                assert aria == ("ascending" if direction == "asc" else "descending")
        page.select_option("#f-kind", "function")
        page.fill("#f-text", "put")
        page.wait_for_timeout(300)
        page.click("#api thead th[data-sort=name] button")
        shown, names = page.evaluate("atlasApi.shown()"), page.evaluate("atlasApi.names()")
        assert 0 < shown < len(rows) and "kind=function" in page.evaluate("location.hash")
        page.reload()
        page.wait_for_function("window.atlasApi && window.atlasApi.ready")
        assert page.input_value("#f-kind") == "function" and page.input_value("#f-text") == "put"
        assert page.evaluate("atlasApi.shown()") == shown and page.evaluate("atlasApi.names()") == names
        assert page.evaluate("atlasApi.sort()") == ["name", "asc"]
        page.screenshot(path=str(artifacts / "reading-api-sorted-1440.png"))
        t.check_clean()
    finally:
        t.close()


def test_api_rows_all_reachable_without_javascript_and_concepts_named(browser, real_site):
    ctx = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        page = ctx.new_page()
        page.goto((real_site / API).as_uri())
        total = int(page.get_attribute("#api", "data-total") or 0) or None
        listed = page.evaluate("document.querySelectorAll('#rows tr').length + "
                               "document.querySelectorAll('ol.restlist li').length")
        from atlas.opened import Opened

        opened = Opened(ROOT / "data")
        want = opened.api.page("hicann/shmem")["items"]
        assert listed == len(want) and (total is None or total == listed)
        text = page.inner_text("main")
        assert "aclshmemx_udma_put_nbi" in text
        # a concept is named in the chosen language, not by its id
        page.click("label:has(#lang-zh)")
        names = page.eval_on_selector_all("main a[href^='../concepts/']", "as => as.map(a => a.innerText)")
        assert names and any("\u4e00" <= ch <= "\u9fff" for n in names for ch in n)
        page.goto((real_site / "api" / "index.html").as_uri())
        for row in page.query_selector_all("table.apiindex tbody tr"):
            cells = row.query_selector_all("td")
            if cells[0].inner_text().startswith("0"):
                assert "no declaration was found" in cells[0].inner_text()
    finally:
        ctx.close()


PHONE_PAGES = ["concepts/hccl.html", "repos/hicann/hccl.html", "repos.html", "api/index.html", API, "table.html"]


@pytest.mark.parametrize("lang", LANGS)
def test_tables_stack_on_a_phone(browser, real_site, artifacts, lang):
    """At 390 px the History, repository and API tables reflow into stacked rows: no box scrolls
    sideways, each cell is named in the chosen language, and axe finds nothing serious."""
    t = Page(browser)
    try:
        for name in PHONE_PAGES:
            page = _sized(t, PHONE, lang, (real_site / name).as_uri(), "atlasApi" if name == API else None)
            assert page.evaluate(SIDEWAYS) == [], name
            # stacked: the cells of a row sit one under the other, at one left edge
            lefts = page.evaluate("[...document.querySelector('table.stack tbody tr:has(td[data-en])').children]"
                                  ".filter(c => c.offsetParent && c.hasAttribute('data-en'))"
                                  ".map(c => Math.round(c.getBoundingClientRect().left))")
            assert len(lefts) >= 2 and len(set(lefts)) == 1, (name, lefts)
            label = page.evaluate("(td => td && getComputedStyle(td, '::before').content)"
                                  "(document.querySelector('table.stack tbody td[data-en]'))")
            assert label and (("\u4e00" <= label[1] <= "\u9fff") == (lang == "zh")), (name, label)
            assert axe_violations(page) == [], (name, lang)
            page.screenshot(path=str(artifacts / f"reading-{name.replace('/', '-')[:-5]}-{lang}-390.png"))
        t.check_clean()
    finally:
        t.close()


# ---- the explorer on a phone ----------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_phone_explorer_keeps_the_navigation_and_its_legend_off_the_boxes(browser, real_site, artifacts, lang):
    """At 390 px, opening the graph does not scroll the navigation away, and the colour legend sits
    under the canvas, clear of every box drawn."""
    t = Page(browser)
    try:
        page = _sized(t, PHONE, lang, (real_site / "explorer.html").as_uri() + "#concept=hccs", "atlasMap")
        assert page.evaluate("scrollY") == 0
        page.click("#show-graph")
        page.wait_for_timeout(600)
        assert page.evaluate("scrollY") == 0 and page.is_visible("nav.sitenav")
        overlap = page.evaluate("""(() => {
            const leg = document.getElementById('rel-legend').getBoundingClientRect();
            const net = document.getElementById('network').getBoundingClientRect();
            return leg.height > 0 && leg.top >= net.bottom - 1; })()""")
        assert overlap, "the legend sits under the canvas"
        assert axe_violations(page) == [], lang
        page.screenshot(path=str(artifacts / f"reading-explorer-graph-{lang}-390.png"))
        t.check_clean()
    finally:
        t.close()


def test_explorer_without_javascript_says_where_to_read(browser, real_site):
    ctx = browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        page = ctx.new_page()
        page.goto((real_site / "explorer.html").as_uri())
        assert page.is_visible(".nojs") and not page.is_visible("#search") and not page.is_visible("#graph")
        assert page.eval_on_selector_all(".nojs a", "as => as.map(a => a.getAttribute('href'))") == \
            ["index.html", "table.html", "map.html"]
    finally:
        ctx.close()

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
    from atlas.index import load_atlas

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

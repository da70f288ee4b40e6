"""The source pages and the code workspace in a real Chromium, built by `atlas map` from the fixture
atlas of tests/test_code.py over the git repositories it builds: the three tracks follow a step
and a call, Back returns, the state is the URL fragment; axe-core finds nothing serious, nothing
is requested outside file:, nothing scrolls sideways on a phone; the source pages read with
JavaScript off. Screenshots go to tests/artifacts/."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from atlas import commands

try:
    from tests.browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401
except ImportError:  # run from tests/
    from browserkit import Page, artifacts, axe_violations, browser, tab  # noqa: F401

from test_code import PUT_C, _fixture_atlas
from test_site_pages import until


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(site folder, data folder, shmem commit): the map of the fixture atlas with its clones."""
    tmp = tmp_path_factory.mktemp("srcsite")
    os.environ["ATLAS_CACHE"] = str(tmp / "cache")
    _atlas, root, c1, _c2 = _fixture_atlas(tmp)
    answer = commands.site(str(tmp / "site"), data_dir=tmp / "data", repos_dir=root)
    assert "source pages:" in answer.out
    return tmp / "site", tmp / "data", c1


def _put_page(site: Path, c1: str) -> Path:
    return site / "source" / "example" / "shmem" / c1 / "src" / "put.c.html"


def _track_shows(page, selector: str) -> bool:
    """Whether the first element matching `selector` in the source track is inside the track's
    visible box."""
    return page.evaluate("""sel => {
        const t = document.getElementById('track-source'), e = t.querySelector(sel);
        if (!e) return false;
        const a = t.getBoundingClientRect(), b = e.getBoundingClientRect();
        return b.top >= a.top - 1 && b.top < a.bottom && b.bottom > a.top;
    }""", selector)


def test_the_workspace_outline_shows_each_calls_confidence(built):
    site, _data, _c1 = built
    html = (site / "code-put-signal.html").read_text(encoding="utf-8")
    assert html.count('class="confidence conf-exact"') >= 2  # put_signal's clamp and ring_doorbell
    assert "精确" in html and "exact" in html


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_workspace_follows_a_step_and_a_call_and_back(tab, built, artifacts, width, height):
    site, _data, _c1 = built
    page = tab.page
    page.set_viewport_size({"width": width, "height": height})
    page.goto((site / "code-put-signal.html").as_uri())
    until(page, "window.atlasWorkspace && window.atlasWorkspace.ready")
    page.click("#node-put")
    until(page, "atlasWorkspace.state().step === 'put'")
    assert "step=put" in page.evaluate("location.hash")
    assert "put_signal" in page.inner_text("#track-outline .fname")
    assert _track_shows(page, ".l.p") and page.evaluate(
        "document.querySelector('#track-source .l.p').dataset.line") == "11"
    page.click("#node-wait")
    until(page, "atlasWorkspace.state().step === 'wait'")
    assert "ring_doorbell" in page.inner_text("#track-outline .fname")
    page.go_back()
    until(page, "atlasWorkspace.state().step === 'put'")
    # a call in the middle track opens its callee; Back returns to the step's own function
    page.click("#track-outline a.call:has-text('clamp')")
    until(page, "document.querySelector('#track-outline .fname').textContent.includes('clamp')")
    assert "fn=" in page.evaluate("location.hash")
    assert page.evaluate("document.querySelector('#track-source .l').dataset.line") == "6"
    page.go_back()
    until(page, "document.querySelector('#track-outline .fname').textContent.includes('put_signal')")
    # and a call in the right track too
    page.click("#track-source a.call:has-text('ring_doorbell')")
    until(page, "document.querySelector('#track-outline .fname').textContent.includes('ring_doorbell')")
    page.go_back()
    until(page, "document.querySelector('#track-outline .fname').textContent.includes('put_signal')")
    page.screenshot(path=str(artifacts / f"workspace-{width}.png"))
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert axe_violations(page) == []
    tab.check_clean()


def test_workspace_position_is_a_link(tab, built):
    site, _data, _c1 = built
    page = tab.page
    page.goto((site / "code-put-signal.html").as_uri() + "#step=wait")
    until(page, "window.atlasWorkspace && window.atlasWorkspace.ready")
    assert page.evaluate("atlasWorkspace.state().step") == "wait"
    assert "ring_doorbell" in page.inner_text("#track-outline .fname")
    assert page.evaluate("document.querySelector('#node-wait').getAttribute('aria-current')") == "step"


def test_workspace_without_javascript_reads_in_order(browser, built, artifacts):
    site, _data, _c1 = built
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1000, "height": 900})
    page = context.new_page()
    page.goto((site / "code-put-signal.html").as_uri())
    ids = \
        [a.get_attribute("data-step") for a in page.query_selector_all("article.step")]
    assert ids == ["init", "put", "wait"]
    put = page.inner_text("#step-put")
    # a compact phase list: the function's outline and a link to its lines, not the source inline
    assert "put_signal" in put and "int n = clamp(v);" not in put
    assert not page.is_visible("#step-put .src") and page.is_visible("#dag")
    assert page.get_attribute("#step-put .srclink a", "href").endswith("put.c.html#L11")
    href = page.get_attribute("#step-put .outline a.call:has-text('clamp')", "href")
    assert href.startswith("#fn-") and page.query_selector(href) is not None  # an anchor on the page
    page.screenshot(path=str(artifacts / "workspace-nojs.png"), full_page=True)
    context.close()


def test_source_page_without_javascript_shows_lines_and_margin_notes(browser, built, artifacts):
    site, _data, c1 = built
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1440, "height": 900})
    page = context.new_page()
    attempted: list[str] = []
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                  else (attempted.append(r.request.url), r.abort()))
    page.goto(_put_page(site, c1).as_uri() + "#L13")
    lines = PUT_C.splitlines()
    assert page.eval_on_selector_all(".src .l", "els => els.length") == len(lines)
    for n in (1, 11, 13, len(lines)):
        assert page.inner_text(f"#L{n} code").rstrip() == lines[n - 1].rstrip()
    notes = page.inner_text("#L13 .m")
    # the record by its name (a claim on its concept), its ids as the tooltip
    assert "a claim on" in notes and "claim ring-steps" in page.get_attribute("#L13 .m a", "title")
    assert page.get_attribute("#L13 .m a", "href").startswith("../../../../../concepts/")
    assert "put_signal" in page.inner_text("#L11 .m") and "called by 1" in page.inner_text("#L11 .m")
    assert page.get_attribute("#L13 a.call", "href") == "#L6"  # clamp, in the same file
    assert page.get_attribute("#L15 a.call", "href") == "doorbell.c.html#L1"  # ring_doorbell
    assert page.evaluate("getComputedStyle(document.querySelector('#L13 code')).borderLeftColor") != \
        page.evaluate("getComputedStyle(document.querySelector('#L2 code')).borderLeftColor")  # marked
    page.screenshot(path=str(artifacts / "source-page-nojs.png"))
    assert attempted == []
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    context.close()


def test_source_page_axe_clean(tab, built):
    site, _data, c1 = built
    tab.page.goto(_put_page(site, c1).as_uri())
    assert axe_violations(tab.page) == []
    tab.check_clean()


def test_evidence_opens_the_source_page_first_with_upstream_beside(tab, built):
    site, _data, c1 = built
    page = tab.page
    page.goto((site / "concepts" / "lib-c.html").as_uri())
    local = page.query_selector_all("a.pin.local")
    assert local and all(a.get_attribute("href").startswith("../source/") for a in local)
    assert page.query_selector("a.pin.local + a.upstream") is not None
    assert page.query_selector("#claims a.pin.local") is not None  # a claim's pins too
    page.goto((site / "flow-put-signal.html").as_uri())
    until(page, "window.atlasFlow && window.atlasFlow.ready")
    assert page.get_attribute(".workspace-link a", "href") == "code-put-signal.html"
    page.evaluate("location.hash = '#step=put'")
    until(page, "document.querySelector('#card a.pin.local')")
    href = page.get_attribute("#card a.pin.local", "href")
    assert href.startswith("source/example/shmem/") and href.endswith("put.c.html#L11")
    assert page.query_selector("#card a.pin.local + a.upstream") is not None
    # the step panel opens the code workspace at the selected step
    assert page.get_attribute("#card .code-link a", "href") == "code-put-signal.html#step-put"
    page.click("#card .code-link a")
    until(page, "window.atlasWorkspace && window.atlasWorkspace.ready")
    assert page.evaluate("atlasWorkspace.state().step") == "put"
    # the explorer's card opens the source page too
    page.goto((site / "explorer.html").as_uri() + "#concept=lib-c")
    until(page, "window.atlasMap && window.atlasMap.ready")
    until(page, "document.querySelector('#card a.pin.local')")
    assert all(a.get_attribute("href").startswith("source/") for a in page.query_selector_all("#card a.pin.local"))
    assert page.query_selector("#card a.pin.local + a.upstream") is not None
    tab.check_clean()


def test_flow_page_without_javascript_links_source_and_workspace(browser, built):
    """Built from clones, the HTML flow page reads without script: every step with a pin links
    its source page and the workspace at that step."""
    site, _data, _c1 = built
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto((site / "flow-put-signal.html").as_uri())
        assert page.get_attribute(".workspace-link a", "href") == "code-put-signal.html"
        local = page.get_attribute("#step-put .detail a.pin.local", "href")
        assert local.startswith("source/example/shmem/") and local.endswith("put.c.html#L11")
        assert page.get_attribute("#step-put .code-link a", "href") == "code-put-signal.html#step-put"
        page.click("#step-put .code-link a")
        assert page.url.endswith("code-put-signal.html#step-put")
        assert page.evaluate("document.getElementById('step-put').getBoundingClientRect().top") < 900
    finally:
        ctx.close()


def test_without_clones_the_pages_say_which_clone_brings_the_source(tmp_path):
    _atlas, _root, _c1, _c2 = _fixture_atlas(tmp_path)
    empty = tmp_path / "none"
    empty.mkdir()
    answer = commands.site(str(tmp_path / "site"), data_dir=tmp_path / "data", repos_dir=empty)
    assert "source pages: none" in answer.out and "atlas refresh --clone" in answer.out
    site = tmp_path / "site"
    assert not (site / "source").exists() and not list(site.glob("code-*.html"))
    text = (site / "concepts" / "lib-c.html").read_text(encoding="utf-8")
    assert "atlas refresh --clone --repo example/hccl" in text and "a.pin.local" not in text
    assert 'class="pin local"' not in text
    assert "atlas refresh --clone" in (site / "flow-put-signal.html").read_text(encoding="utf-8")


CODE_PAGES = [("flow-put-signal.html", "atlasFlow", "#step=put"),
              ("code-put-signal.html", "atlasWorkspace", "#step=put"),
              ("concepts/lib-c.html", None, ""), ("explorer.html", "atlasMap", "#concept=lib-c"), ("source", None, "")]


@pytest.mark.parametrize("name,hook,frag", CODE_PAGES, ids=[p[0] for p in CODE_PAGES])
def test_pages_built_from_clones_clean_narrow_and_in_one_language(browser, built, artifacts, name, hook, frag):
    """The pages a build from clones changes or adds, at 1440 and 390: axe-clean, no request
    outside file:, no sideways scroll, and every visible string in the chosen language."""
    from test_site_pages import LANGUAGE_CHECK, no_sideways_scroll, open_page, set_lang

    site, _data, c1 = built
    path = _put_page(site, c1) if name == "source" else site / name
    shot = "code-" + name.replace("/", "-").removesuffix(".html")
    t = Page(browser)
    try:
        t.page.set_viewport_size({"width": 1440, "height": 900})
        page = open_page(t, path, hook, frag)
        assert axe_violations(page) == [] and no_sideways_scroll(page)
        for lang in ("en", "zh"):
            set_lang(page, lang)
            assert page.evaluate(LANGUAGE_CHECK, lang) == [], (name, lang)
            page.screenshot(path=str(artifacts / f"{shot}-{lang}-1440.png"))
        set_lang(page, "en")
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(200)
        assert no_sideways_scroll(page), name
        assert axe_violations(page) == []
        page.screenshot(path=str(artifacts / f"{shot}-390.png"))
        t.check_clean()
    finally:
        t.close()


def test_margin_notes_hold_no_link_inside_a_summary(tab, built):
    """A line cited by several records folds its notes into a <details>: its summary is the
    control, so it names the first citation as text and the list under it links every one (axe
    `nested-interactive` on a link inside a summary)."""
    site, _data, _c1 = built
    pages = sorted((site / "source").rglob("*.html"))
    folded = [p for p in pages if 'details class="cite"' in p.read_text(encoding="utf-8")]
    assert folded, "the fixture has a line that two records cite"
    page = tab.page
    for p in pages:
        page.goto(p.as_uri())
        assert page.evaluate("document.querySelectorAll('summary a, summary button, summary input').length") == 0, p
    page.goto(folded[0].as_uri())
    cites = page.evaluate("[...document.querySelectorAll('details.cite')].map(d => [d.querySelectorAll('li').length,"
                          " d.querySelectorAll('li a').length, d.querySelector('summary').innerText])")
    assert cites and all(n >= 2 and links >= 1 and "more" in s for n, links, s in cites)
    assert [v for v in axe_violations(page) if v["id"] == "nested-interactive"] == []
    tab.check_clean()


def test_workspace_segment_opens_its_record_in_one_click_and_phases_show_edge_types(tab, built):
    """A pinned segment of the outline names its record (a concept by its name, not its id) and
    links its page: one click lands there. The phases carry each step's predecessors framed in the
    edge's type, with a legend of the types."""
    site, _data, _c1 = built
    page = tab.page
    page.goto((site / "code-put-signal.html").as_uri() + "#step=put")
    until(page, "window.atlasWorkspace && window.atlasWorkspace.ready")
    segs = page.evaluate("[...document.querySelectorAll('#track-outline .seg a.record')]"
                         ".map(a => [a.getAttribute('href'), a.innerText, a.title])")
    assert segs, "a pinned segment with a record"
    concept = [s for s in segs if s[0].startswith("concepts/")]
    assert concept and all(not s[1].startswith(s[2]) for s in concept)  # the name, the ids as tooltip
    page.click("#track-outline .seg a.record[href^='concepts/']")
    page.wait_for_url(re.compile(r"/concepts/[^/]+\.html(#claims)?$"))
    assert page.locator("h1").count() == 1 and page.evaluate("location.href").startswith("file:")
    page.goto((site / "code-put-signal.html").as_uri())
    until(page, "window.atlasWorkspace && window.atlasWorkspace.ready")
    types = page.evaluate("[...document.querySelectorAll('#dag .edges-legend .etype')].map(e => e.className)")
    assert len(types) >= 3
    preds = page.evaluate("[...document.querySelectorAll('#dag .stepnode .pred')].map(p => p.className)")
    assert preds and all(p.startswith("pred e-") for p in preds)
    tab.check_clean()


def test_repository_page_lists_its_source_pages(browser, built):
    """Built from clones, a repository's page lists the files the site shows with their lines,
    each a link to its source page (and nothing of the sort without clones)."""
    site, _data, _c1 = built
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto((site / "repos" / "example" / "shmem.html").as_uri())
        links = page.eval_on_selector_all("#source-pages a", "as => as.map(a => [a.innerText, a.href])")
        assert any(t == "src/put.c" for t, _h in links)
        for _t, href in links:
            page.goto(href)
            assert page.locator(".src .l").count() > 0
    finally:
        ctx.close()


def test_workspace_search_finds_a_function_by_name_and_a_line(tab, built):
    site, _data, _c1 = built
    page = tab.page
    page.goto((site / "code-put-signal.html").as_uri() + "#step=put")
    until(page, "window.atlasWorkspace && window.atlasWorkspace.ready")
    page.fill("#ws-q", "clamp")
    until(page, "document.querySelectorAll('#ws-hits .hit').length > 0")
    assert ["fn", "clamp"] in [[k, t.split("(")[0].strip()] for k, t in page.evaluate("atlasWorkspace.search('clamp')")]
    page.click("#ws-hits .hit.fn")
    until(page, "document.querySelector('#track-outline .fname').textContent.includes('clamp')")
    page.fill("#ws-q", "int n = clamp")
    until(page, "document.querySelectorAll('#ws-hits .hit.line').length > 0")
    page.click("#ws-hits .hit.line")
    until(page, "document.querySelector('#track-outline .fname').textContent.includes('put_signal')")
    assert page.evaluate("document.querySelector('#track-source .l.at').dataset.line") == "13"
    assert _track_shows(page, ".l.at")
    tab.check_clean()

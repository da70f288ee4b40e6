"""End-to-end test of the HTML map in headless Chromium (playwright, python API).

The pages are opened from file:// with every non-file request aborted (and recorded: none may
be attempted). Skipped when Chromium or playwright is missing, unless ATLAS_REQUIRE_BROWSER=1.
Screenshots go to tests/artifacts/ (git-ignored through tests/artifacts/.gitignore)."""
from __future__ import annotations

from pathlib import Path

import pytest

from atlas.htmlmap import build_site

try:
    from tests.browserkit import Page, artifacts, browser, tab  # noqa: F401  (fixtures)
except ImportError:
    from browserkit import Page, artifacts, browser, tab  # noqa: F401

try:
    from tests.test_map import EVIL, sample_atlas
except ImportError:  # tests/ not a package: pytest put it on sys.path
    from test_map import EVIL, sample_atlas


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(sample_atlas(), out, as_of=None)
    return out


def click_node(page, ident: str):
    pos = page.evaluate("id => atlasMap.focus(id)", ident)
    assert pos is not None
    page.mouse.click(pos["x"], pos["y"])


def test_index_offline_counts_search_click(tab, site, artifacts):
    page = tab.open((site / "explorer.html").as_uri(), "atlasMap")
    assert page.evaluate("atlasMap.nodeCount()") == 7
    assert page.evaluate("atlasMap.edgeCount()") == 4
    # search: Chinese alias, full-width Latin, case
    assert page.evaluate("atlasMap.search('直驱')")[0] == "aiv-direct"
    assert page.evaluate("atlasMap.search('ＨＣＣＬ')")[0] == "hccl"
    assert page.evaluate("atlasMap.search('对称内存')") == ["shmem"]
    assert page.evaluate("atlasMap.search('huawei collective')") == ["hccl"]
    # through the search box, as a user
    page.fill("#search", "直驱")
    page.wait_for_selector("#results li.result")
    assert page.get_attribute("#results li.result", "data-id") == "aiv-direct"
    page.click("#results li.result")
    assert page.evaluate("atlasMap.selected()") == "aiv-direct"
    assert page.text_content("#card h2") == "AIV direct drive"
    card = page.inner_text("#card")
    assert "the AIV kernel writes WQEs" in card and "AIV 核写 WQE" in card
    assert page.get_attribute("#card a[href^='flow-udma-put.html']", "href") == \
        "flow-udma-put.html#step=kernel"
    # a real mouse click at the node's DOM position shows its card
    click_node(page, "hccl")
    assert page.evaluate("atlasMap.selected()") == "hccl"
    card = page.inner_text("#card")
    for text in ("HCCL", "集合通信库", "Beginner HCCL.", "入门 HCCL。", "Professional HCCL.",
                 "专业 HCCL。", "the collective", "built-on", "first visible 2021-03-01"):
        assert text in card
    href = page.get_attribute("#card a.pin", "href")
    assert href.startswith("https://github.com/hicann/hccl/blob/09300b70df9a") and \
        href.endswith("#L25-L28")
    assert page.url.endswith("#concept=hccl")
    page.screenshot(path=str(artifacts / "map-index.png"))
    tab.check_clean()


def test_injection_shows_text_and_runs_nothing(tab, site, artifacts):
    page = tab.open((site / "explorer.html").as_uri(), "atlasMap")
    click_node(page, "evil")
    assert page.evaluate("atlasMap.selected()") == "evil"
    assert page.text_content("#card h2") == EVIL
    assert "<b>粗</b>&amp;" in page.inner_text("#card")
    assert "</script><script>alert(2)</script>" in page.inner_text("#card")
    assert page.evaluate("document.querySelectorAll('img, #card b, #card script').length") == 0
    page.fill("#search", "<!--")
    page.wait_for_selector("#results li.result")
    assert page.get_attribute("#results li.result", "data-id") == "evil"
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / "map-injection.png"))
    tab.check_clean()


def test_as_of_view_filters_and_hash(tab, site):
    page = tab.open((site / "explorer.html").as_uri() + "#concept=udma", "atlasMap")
    assert page.evaluate("atlasMap.selected()") == "udma"
    assert page.evaluate("atlasMap.greyCount()") == 0
    page.fill("#asof", "2022-01-01")
    page.dispatch_event("#asof", "change")
    assert page.evaluate("atlasMap.greyCount()") == 2  # shmem (2024), udma (2025)
    assert page.evaluate("atlasMap.shownCount()") == 7
    page.check("#asof-hide")
    assert page.evaluate("atlasMap.shownCount()") == 5
    page.uncheck("#asof-hide")
    page.select_option("#f-question", "address")
    assert page.evaluate("atlasMap.shownCount()") == 2  # hcomm, shmem
    page.select_option("#f-question", "_none")
    assert page.evaluate("atlasMap.shownCount()") == 1
    page.click("#reset")
    assert page.evaluate("atlasMap.shownCount()") == 7
    page.select_option("#f-lifecycle", "pending-deprecation")
    assert page.evaluate("atlasMap.shownCount()") == 1
    page.click("#reset")
    page.select_option("#f-repo", "hicann/shmem")
    assert page.evaluate("atlasMap.shownCount()") == 2
    page.click("#reset")
    before = page.evaluate("atlasMap.focus('hccl')")
    page.select_option("#view", "kind")
    assert page.evaluate("atlasMap.view()") == "kind"
    assert page.evaluate("atlasMap.focus('hccl')") is not None
    page.evaluate("location.hash = '#concept=hccs'")
    page.wait_for_function("atlasMap.selected() === 'hccs'")
    assert before is not None
    tab.check_clean()


def test_flow_page_links_both_ways(tab, site, artifacts):
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
    assert links == ["index.html#concept=aiv-direct", "index.html#concept=evil"]
    assert EVIL in card
    page.screenshot(path=str(artifacts / "map-flow.png"))
    page.click("#card a.concept-link")  # index.html is the overview: the row is marked
    page.wait_for_url("**/index.html#concept=aiv-direct")  # (load event: its script has run)
    assert page.evaluate("document.querySelector('tr.row.target').dataset.id") == "aiv-direct"
    tab.check_clean()

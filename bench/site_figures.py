"""The figures of the site review (issue 22), measured again on the bundled atlas in Chromium at
1440x900 and 390x844. Not a test; run by hand after `pip install -e .`:

    python bench/site_figures.py [--out DIR]

It builds the site, opens each page from file:// with the network cut off and prints one line per
figure: the overview's height, row height, rows on the first screen, where HCCL is, the cells that
hold a glyph, the phone's first screen; the explorer after expanding HCCL from HCCS, Back after a
search, the phone's first screen, edge label sizes and the labels of SHMEM's relations; the flows'
box lines and heights, alternatives, the page without script; raw backticks; strings in the wrong
language; repository pages; `.invalid` links and labels cut with "…"; the search for "hcc".
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

CHROMIUM = "/usr/bin/chromium"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


class Browser:
    """New pages at a viewport, with every request outside file: aborted."""

    def __init__(self, browser):
        self.browser = browser

    def new_page(self, viewport: dict, js: bool = True):
        ctx = self.browser.new_context(viewport=viewport, java_script_enabled=js)
        ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        return ctx.new_page()


def wait(page, expr: str, timeout_ms: int = 15_000) -> None:
    for _ in range(timeout_ms // 20):
        if page.evaluate(expr):
            return
        page.wait_for_timeout(20)
    raise RuntimeError(f"timed out: {expr}")


def ready(page, hook: str) -> None:
    wait(page, f"!!(window.{hook} && window.{hook}.ready)")


def overview(browser, site: Path, say) -> None:
    page = browser.new_page(DESKTOP)
    page.goto((site / "index.html").as_uri())
    ready(page, "atlasOverview")
    rows = page.evaluate("[...document.querySelectorAll('#grid tr.row')].map(tr => tr.getBoundingClientRect())"
                         ".map(r => [r.top, r.height])")
    box = page.evaluate("(b => [b.scrollHeight, b.getBoundingClientRect().top])(document.querySelector('.gridbox'))")
    say("overview: page height at 1440 (the grid scrolls in its box)",
        f"{page.evaluate('document.documentElement.scrollHeight')} px; the grid {box[0]} px tall")
    say("overview: median row height", f"{statistics.median(h for _t, h in rows):.0f} px")
    say("overview: concepts fully on the first desktop screen",
        sum(1 for t, h in rows if t >= 0 and t + h <= DESKTOP["height"]))
    hccl = page.evaluate("document.getElementById('c-hccl').getBoundingClientRect().top")
    say("overview: HCCL's row at y", f"{hccl:.0f} px")
    cells = page.evaluate("[document.querySelectorAll('#grid td.y').length, "
                          "document.querySelectorAll('#grid td.n').length]")
    say("overview: question cells with a glyph (answers ● / no ·)",
        f"{cells[0] + cells[1]} of {cells[0] + cells[1]} ({cells[0]} answer, {cells[1]} do not)")
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(200)
    heads = page.evaluate("""[...document.querySelectorAll('#grid thead th')].filter(th => {
        const r = th.getBoundingClientRect(); return r.right <= innerWidth + 1 && r.left >= 0; })
        .map(th => th.dataset.q || th.className)""")
    say("overview: columns on the phone's first screen", ", ".join(heads))
    page.close()


def explorer(browser, site: Path, say) -> None:
    page = browser.new_page(DESKTOP)
    page.goto((site / "explorer.html").as_uri() + "#concept=hccs")
    ready(page, "atlasMap")
    page.evaluate("atlasMap.select('hccl')")
    drawn = page.evaluate("atlasMap.drawnIds()")
    off = [i for i in drawn if not page.evaluate("id => atlasMap.inView(id)", i)]
    origin = page.evaluate("atlasMap.inView('hccs')")
    say("explorer: expanding HCCL from HCCS, concepts off the canvas",
        f"{len(off)} of {len(drawn)}; HCCS in view: {origin}")
    page.fill("#search", "hcomm")
    page.keyboard.press("Enter")
    page.go_back()
    wait(page, "atlasMap.selected() === 'hccl'")
    say("explorer: Back after a search", f"returns to {page.evaluate('atlasMap.selected()')} "
        f"({len(page.evaluate('atlasMap.drawnIds()'))} drawn, as before); trail: "
        + " > ".join(x or "seed" for x in page.evaluate("atlasMap.trail()")))
    sizes = []
    for ident in ("hccs", "hccl", "ascend-shmem", "dma", "fabric-memory", "aiv-direct-drive"):
        page.evaluate("id => atlasMap.open(id)", ident)
        if page.evaluate("atlasMap.labelBoxes().length"):
            sizes.append(page.evaluate("atlasMap.edgeFontPx()"))
    say("explorer: edge label size on screen (six focuses)", f"{min(sizes):.1f}-{max(sizes):.1f} px")
    page.evaluate("atlasMap.open('ascend-shmem')")
    rels = page.evaluate("atlasMap.edgesOf('ascend-shmem')")
    labelled = set(page.evaluate("atlasMap.edgeLabels()"))
    legend = page.eval_on_selector_all("#rel-legend li", "ls => ls.length")
    say("explorer: Ascend SHMEM's relations with a drawn label",
        f"{len(labelled & set(rels))} of {len(rels)}; every type named in the colour legend ({legend} types); "
        f"{len(page.evaluate('atlasMap.rerouted()'))} detoured, each type labelled once")
    page.set_viewport_size(PHONE)
    page.goto((site / "explorer.html").as_uri())
    ready(page, "atlasMap")
    off = page.evaluate("""[...document.querySelectorAll('#neigh-list button')].filter(b => {
        const r = b.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth; }).length""")
    say("explorer: phone, seed terms off screen", f"{off} of {len(page.evaluate('atlasMap.drawnIds()'))} (lists)")
    page.evaluate("atlasMap.open('hccs')")
    n = page.eval_on_selector_all("#neigh-list button", "bs => bs.length")
    off = page.evaluate("""[...document.querySelectorAll('#neigh-list button')].filter(b => {
        const r = b.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth; }).length""")
    say("explorer: phone, HCCS neighbours off screen", f"{off} of {n} (grouped lists; the canvas one tap away)")
    page.close()


def flows(browser, site: Path, say) -> None:
    page = browser.new_page(DESKTOP)
    name = "flow-full-mesh-dispatch-path.html"
    for vp, label in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page.set_viewport_size(vp)
        page.goto((site / name).as_uri())
        ready(page, "atlasFlow")
        lines = page.evaluate("""Math.max(...[...document.querySelectorAll('a.step-link')].map(a =>
            Math.round(a.getBoundingClientRect().height / parseFloat(getComputedStyle(a).lineHeight || 20))))""")
        say(f"flows: the 21-step flow's height, {label}",
            f"{page.evaluate('document.documentElement.scrollHeight')} px; a step title takes at most {lines} lines")
    page.set_viewport_size(DESKTOP)
    page.goto((site / "flow-mooncake-ascend-paths.html").as_uri())
    tops = page.evaluate("[...document.querySelectorAll('.choice .branch')]"
                         ".map(b => Math.round(b.getBoundingClientRect().top))")
    say("flows: Mooncake's one-of-three choice", f"{len(tops)} branches side by side on one row: {len(set(tops)) == 1}")
    page.close()
    page = browser.new_page(DESKTOP, js=False)
    page.goto((site / name).as_uri())
    say("flows: without JavaScript", f"title {'shown' if page.inner_text('h1') else 'missing'}, "
        f"{page.locator('li.step').count()} steps with {page.locator('li.step a.pin').count()} pins")
    page.close()


def text(browser, site: Path, say) -> None:
    from test_site_pages import LANGUAGE_CHECK

    page = browser.new_page(DESKTOP)
    ticks = 0
    for p in sorted((site / "concepts").glob("*.html")):
        page.goto(p.as_uri())
        ticks += page.evaluate("document.querySelector('main').innerText.split('`').length - 1")
    page.goto((site / "explorer.html").as_uri() + "#concept=aiv-direct-drive")
    ready(page, "atlasMap")
    page.click("label:has(#lang-both)")
    ticks_card = page.evaluate("document.querySelector('#card').innerText.split('`').length - 1")
    say("markdown: literal backticks on the concept pages / the explorer card", f"{ticks} / {ticks_card}")
    wrong = {}
    pages = ["index.html", "table.html", "map.html", "timeline.html", "flows.html", "seed.html", "repos.html",
             "concepts/hccs.html", "flow-mooncake-ascend-paths.html", "repos/hicann/hccl.html", "explorer.html"]
    for lang in ("en", "zh"):
        n = 0
        for name in pages:
            page.goto((site / name).as_uri())
            page.wait_for_timeout(150)
            page.click(f"label:has(#lang-{lang})")
            n += len(page.evaluate(LANGUAGE_CHECK, lang))
        wrong[lang] = n
    page.click("label:has(#lang-en)")
    say("language: visible strings not in the chosen language (11 page types)", f"en {wrong['en']}, zh {wrong['zh']}")
    page.goto((site / "index.html").as_uri())
    say("language: '无日期' visible in English mode",
        page.evaluate("document.body.innerText.split('无日期').length - 1"))
    page.close()


def links(browser, site: Path, say) -> None:
    from atlas.site.common import repo_file

    htmls = list(site.rglob("*.html"))
    invalid = sum(p.read_text("utf-8").count('href="https://ascend-atlas.invalid') for p in htmls)
    say("links: links to an `.invalid` host", invalid)
    say("repositories: pages", len(list((site / repo_file("x/y")).parent.parent.rglob("*.html"))))
    page = browser.new_page(DESKTOP)
    page.goto((site / "timeline.html").as_uri())
    cut = page.eval_on_selector_all("text.ev-label", "ts => ts.filter(t => t.textContent.includes('\u2026')).length")
    page.goto((site / "explorer.html").as_uri())
    ready(page, "atlasMap")
    names = 0
    for ident in ("hccs", "hccl", "ascend-shmem", "dma"):
        page.evaluate("id => atlasMap.open(id)", ident)
        names += page.evaluate("atlasMap.drawnIds()"
                               ".filter(i => atlasMap.labelLines(i).join('').includes('\u2026')).length")
    say("labels cut with …: timeline / explorer names", f"{cut} / {names}")
    say("search 'hcc' (explorer), first five", ", ".join(page.evaluate("atlasMap.search('hcc')")[:5]))
    page.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from atlas.site import build_site
    from atlas.index.compiled import load_atlas

    site = Path(args.out or tempfile.mkdtemp(prefix="atlas-figures-"))
    build_site(load_atlas(ROOT / "data"), site)

    def say(what, value):
        print(f"{what}: {value}", flush=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for part in (overview, explorer, flows, text, links):
            part(Browser(browser), site, say)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Redraw the README's pictures of the graph pages from the bundled atlas (run after data or
page changes; needs Chromium and playwright, like the browser tests).

    python scripts/graph_pictures.py

docs/img/explorer-hccs.png: the relation explorer focused on HCCS (the graph and its HTML lane
titles, at the view the page sets itself, 1440 x 900 window). docs/img/flow-21.png: the largest
flow (21 steps) at the first view of its page, both languages. Both are taken at device scale 1,
so every label is in the picture at the size the page draws it (12 CSS px or more).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"


def main() -> int:
    from playwright.sync_api import sync_playwright

    from atlas.htmlmap import build_site
    from atlas.index import load_atlas

    atlas = load_atlas(ROOT / "data")
    largest = max(atlas.flows, key=lambda f: (len(f.steps), f.id))
    out = Path(tempfile.mkdtemp(prefix="atlas-pictures-"))
    build_site(atlas, out)
    img = ROOT / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto((out / "explorer.html").as_uri() + "#concept=hccs")
        while not page.evaluate("!!(window.atlasMap && atlasMap.ready)"):
            page.wait_for_timeout(20)
        page.wait_for_timeout(200)
        page.locator("#graph").screenshot(path=str(img / "explorer-hccs.png"))
        page.goto((out / f"flow-{largest.id}.html").as_uri())
        while not page.evaluate("!!(window.atlasFlow && atlasFlow.ready)"):
            page.wait_for_timeout(20)
        page.wait_for_timeout(200)
        page.locator("#graph").screenshot(path=str(img / "flow-21.png"))
        browser.close()
    print(f"wrote {img / 'explorer-hccs.png'} and {img / 'flow-21.png'} ({largest.id}, "
          f"{len(largest.steps)} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

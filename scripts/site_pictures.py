"""Regenerate the README's pictures of the reading pages from the bundled atlas, in Chromium:

    docs/img/overview.png   the overview table scrolled to the 2025 rows under its sticky header,
                            with the concept column and all six question columns (kind, first
                            visible and lifecycle hidden) in a 1,000 CSS px window (shown at true
                            size), cut at the last column edge
    docs/img/timeline.png   the timeline picture: the first lanes, full width

    python scripts/site_pictures.py [--out docs/img] [--scale 2]

Needs playwright and Chromium (/usr/bin/chromium), like the browser tests.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
MAX_W = 1000  # CSS px: about the width a README column shows an image at


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--scale", type=float, default=2.0, help="device scale factor (default 2)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from atlas.htmlmap import build_site
    from atlas.index import load_atlas

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        build_site(load_atlas(ROOT / "data"), site)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                # a window as wide as the picture: the table lays itself out to that width, so
                # all six question columns are in it (rather than cropping a wider table)
                ctx = browser.new_context(viewport={"width": MAX_W, "height": 1000},
                                          device_scale_factor=args.scale)
                page = ctx.new_page()
                page.goto((site / "index.html").as_uri())
                page.wait_for_function("window.atlasOverview && window.atlasOverview.ready")
                # the picture shows the concept column and the six question columns: kind, first
                # visible and lifecycle are hidden (through the CSSOM, which the page's CSP allows)
                # so the six questions fit the README's width at true size
                page.evaluate("""() => {
                    const heads = [...document.querySelectorAll('#overview thead th')];
                    const n = heads.length;
                    for (const row of document.querySelectorAll('#overview tr')) {
                        if (row.cells.length !== n) continue;
                        for (const i of [1, 2, 3]) row.cells[i].style.display = 'none';
                    }
                    // the columns share the window's width again; the box does not scroll
                    const table = document.querySelector('#overview');
                    table.style.minWidth = '0';
                    // hidden cells free their grid columns, so the shown cells take the first
                    // seven: the concept column a fifth, the six questions share the rest
                    const cols = [...table.querySelectorAll('col')];
                    cols.forEach((col, i) => {
                        col.style.width = i === 0 ? '20%' : i < n - 3 ? (80 / (n - 4)).toFixed(3) + '%' : '0';
                    });
                    const box = table.closest('.tablebox');
                    box.style.maxHeight = 'none';
                    box.style.overflow = 'visible';
                }""")
                # cut at the right edge of the last column that fits
                right = page.evaluate("""max => {
                    const heads = [...document.querySelectorAll('#overview thead th')];
                    let edge = heads[0].getBoundingClientRect().right;
                    for (const th of heads) {
                        const r = th.getBoundingClientRect();
                        if (r.right <= max) edge = r.right;
                    }
                    return Math.ceil(edge) + 1;
                }""", MAX_W)
                # scroll the 2025 rows under the sticky header: the table as one reads it
                page.evaluate("""() => {
                    const head = document.querySelector('#overview thead').getBoundingClientRect();
                    const group = document.querySelector('#overview tbody[data-group="2025"]')
                        || document.querySelector('#overview tbody');
                    const box = document.querySelector('#overview').closest('.tablebox');
                    if (box && box.scrollHeight > box.clientHeight + 1) {
                        // narrower than the table's natural width the table scrolls in its box
                        window.scrollBy(0, box.getBoundingClientRect().top);
                        box.scrollTop += group.getBoundingClientRect().top
                            - box.getBoundingClientRect().top - head.height;
                    } else {
                        window.scrollBy(0, group.getBoundingClientRect().top - head.height);
                    }
                }""")
                page.wait_for_timeout(100)
                page.screenshot(path=str(args.out / "overview.png"),
                                clip={"x": 0, "y": 0, "width": right, "height": 1000})
                ctx.close()

                ctx = browser.new_context(viewport={"width": 1100, "height": 1000},
                                          device_scale_factor=args.scale)
                page = ctx.new_page()
                page.goto((site / "timeline.html").as_uri())
                page.wait_for_function("window.atlasTimeline && window.atlasTimeline.ready")
                box = page.evaluate("(() => { const r = document.querySelector('.picbox')"
                                    ".getBoundingClientRect(); return [r.right, r.bottom]; })()")
                page.screenshot(path=str(args.out / "timeline.png"),
                                clip={"x": 0, "y": 0, "width": min(box[0] + 16, 1100),
                                      "height": 980})
                ctx.close()
            finally:
                browser.close()
    for name in ("overview.png", "timeline.png"):
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

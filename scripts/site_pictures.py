"""Regenerate the README's pictures of the reading pages from the bundled atlas, in Chromium:

    docs/img/overview.png   the overview table scrolled to the 2025 rows under its sticky header,
                            cropped at a column edge to about 1,000 CSS px (shown at true size)
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
                ctx = browser.new_context(viewport={"width": 1440, "height": 1000},
                                          device_scale_factor=args.scale)
                page = ctx.new_page()
                page.goto((site / "index.html").as_uri())
                page.wait_for_function("window.atlasOverview && window.atlasOverview.ready")
                # cut at the left edge of the first question column that does not fit
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
                    window.scrollBy(0, group.getBoundingClientRect().top - head.height);
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

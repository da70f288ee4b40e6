"""Regenerate the pictures of the site (README and docs/) from the bundled atlas, in Chromium, each taken at
the width a README column shows it (about 980 CSS px or less), so every label in it is at the size
the page draws it:

    docs/img/overview.png      the compact overview: the concept column and the six question
                               columns (kind, first seen and lifecycle left out), first screen
    docs/img/general-map.png   the two-axis map: question lanes across, quarters down
    docs/img/explorer-trail.png  the explorer after two expands (HCCS, then HCCL, then
                               HCOMM), its trail of crumbs and the drawing
    docs/img/flow-21.png       the 21-step Full-Mesh dispatch flow with a step selected
    docs/img/repo.png          a repository page (kvcache-ai/Mooncake)
    docs/img/timeline.png      the timeline picture: the first lanes
    docs/img/workspace.png     a flow's code workspace (code-put-signal.html at its step put),
                               built from the fixture atlas of tests/test_code.py over git
                               repositories this script builds with the tests' own text: no
                               third-party source is ever pictured (the CANN and MemFabric sources
                               are under other licences)

    python scripts/site_pictures.py [--out docs/img] [--scale 1]

Needs playwright and Chromium (/usr/bin/chromium), like the browser tests.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
NAMES = ("overview.png", "general-map.png", "explorer-trail.png", "flow-21.png", "repo.png", "timeline.png",
         "workspace.png")


def _wait(page, hook: str) -> None:
    while not page.evaluate(f"!!(window.{hook} && window.{hook}.ready)"):
        page.wait_for_timeout(20)
    page.wait_for_timeout(200)


def _page(browser, scale: float, width: int, height: int):
    ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=scale)
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
    return ctx, ctx.new_page()


def overview(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 900, 760)
    page.goto((site / "index.html").as_uri())
    _wait(page, "atlasOverview")
    # the picture shows the names and the six questions: the last three columns are left out
    # (through the CSSOM, which the page's CSP allows)
    page.evaluate("""() => {
        const st = document.createElement('style');
        st.textContent = 'table.grid { min-width: 0 !important; }'
            + ' table.grid tr:not(.group) { grid-template-columns: minmax(200px, 1fr) repeat(6, 86px) !important; }'
            + ' table.grid tr > :nth-child(n+8) { display: none !important; }';
        document.head.appendChild(st);
    }""")
    page.wait_for_timeout(100)
    page.screenshot(path=str(out / "overview.png"))
    ctx.close()


def general_map(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 980, 900)
    page.goto((site / "map.html").as_uri())
    page.wait_for_timeout(300)
    page.evaluate("() => { document.querySelector('#twoaxis').style.minWidth = '0'; }")
    page.screenshot(path=str(out / "general-map.png"))
    ctx.close()


def explorer(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 1340, 860)
    page.goto((site / "explorer.html").as_uri() + "#concept=hccs")
    _wait(page, "atlasMap")
    for ident in ("hccl", "hcomm"):
        pos = page.evaluate("id => atlasMap.focus(id)", ident)
        page.mouse.click(pos["x"], pos["y"])  # an expand, as a reader does it
        page.wait_for_timeout(300)
    box = page.evaluate("""() => { const g = document.querySelector('#graph').getBoundingClientRect();
        return {x: 0, y: document.querySelector('#bar').getBoundingClientRect().top, width: g.right,
                height: g.bottom - document.querySelector('#bar').getBoundingClientRect().top}; }""")
    page.screenshot(path=str(out / "explorer-trail.png"), clip=box)
    ctx.close()


def flow(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 980, 900)
    page.goto((site / "flow-full-mesh-dispatch-path.html").as_uri() + "#step=scan-and-ring")
    _wait(page, "atlasFlow")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(out / "flow-21.png"))
    ctx.close()


def repo(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 900, 760)
    page.goto((site / "repos" / "kvcache-ai" / "Mooncake.html").as_uri())
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "repo.png"))
    ctx.close()


def timeline(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 980, 900)
    page.goto((site / "timeline.html").as_uri())
    _wait(page, "atlasTimeline")
    page.screenshot(path=str(out / "timeline.png"))
    ctx.close()


def code_site(tmp: Path) -> Path:
    """The site of the fixture atlas of tests/test_code.py, built with its source pages and code
    workspace from the git repositories the fixture writes (our own text, never upstream source)."""
    import os

    from atlas import commands

    sys.path.insert(0, str(ROOT / "tests"))  # the fixture's module imports the tests' conftest
    from test_code import _fixture_atlas

    os.environ["ATLAS_CACHE"] = str(tmp / "cache")
    _atlas, root, _c1, _c2 = _fixture_atlas(tmp)
    commands.site(str(tmp / "site"), data_dir=tmp / "data", repos_dir=root)
    return tmp / "site"


def workspace(browser, site: Path, out: Path, scale: float) -> None:
    ctx, page = _page(browser, scale, 980, 570)
    page.goto((site / "code-put-signal.html").as_uri() + "#step=put")
    _wait(page, "atlasWorkspace")
    page.screenshot(path=str(out / "workspace.png"))
    ctx.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--scale", type=float, default=1.0, help="device scale factor (default 1)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from atlas.site import build_site
    from atlas.index.compiled import load_atlas

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        build_site(load_atlas(ROOT / "data"), site / "bundled")
        code = code_site(site / "fixture")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            try:
                for take in (overview, general_map, explorer, flow, repo, timeline):
                    take(browser, site / "bundled", args.out, args.scale)
                workspace(browser, code, args.out, args.scale)
            finally:
                browser.close()
    for name in NAMES:
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Regenerate the README's picture of a flow's code workspace:

    docs/img/workspace.png   code-put-signal.html at its `put` step, 1,440 x 900 CSS px

    python scripts/workspace_picture.py [--out docs/img]

The workspace is built over the small atlas and git repositories that tests/test_code.py writes
(`example/shmem`, text of our own), so the picture shows no third-party source: the sources behind
the real atlas's pins are under their own licences and appear only in sites users build from their
own clones. Needs playwright and Chromium (/usr/bin/chromium).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOW, STEP = "put-signal", "put"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = ap.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from playwright.sync_api import sync_playwright
    from test_code import _fixture_atlas

    from atlas import commands

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ATLAS_CACHE"] = str(Path(tmp) / "cache")
        _atlas, clones, _c1, _c2 = _fixture_atlas(Path(tmp))
        site = Path(tmp) / "site"
        print(commands.site(str(site), data_dir=Path(tmp) / "data", repos_dir=clones).out)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto((site / f"code-{FLOW}.html").as_uri() + f"#step={STEP}")
            page.wait_for_function("window.atlasWorkspace && window.atlasWorkspace.ready")
            page.wait_for_timeout(300)
            args.out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out / "workspace.png"))
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate the README's picture of a flow's code workspace, built from local clones:

    docs/img/workspace-tensor-to-wqe.png   code-tensor-to-wqe-lowering.html at the doorbell step,
                                           1,440 x 900 CSS px

    ATLAS_REPOS=/path/to/clones python scripts/workspace_picture.py [--out docs/img]

Needs the clone of hicann/shmem, playwright and Chromium (/usr/bin/chromium). The picture shows a
few lines of the pinned function; the site itself, with the source it embeds, is never committed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOW, STEP = "tensor-to-wqe-lowering", "doorbell"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = ap.parse_args(argv)
    if not os.environ.get("ATLAS_REPOS"):
        print("set ATLAS_REPOS to the folder of the clones", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from atlas import commands

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        print(commands.site(str(site), data_dir=ROOT / "data").out)
        page_file = site / f"code-{FLOW}.html"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(page_file.as_uri() + f"#step={STEP}")
            page.wait_for_timeout(500)
            args.out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out / "workspace-tensor-to-wqe.png"))
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

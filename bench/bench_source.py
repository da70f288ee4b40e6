"""The code behind the pins, measured on the bundled atlas and the local clones ($ATLAS_REPOS):

1. `atlas where PATH:LINE` and `atlas source PIN|CONCEPT` (piped: plain text) against the floor
   `python -c pass`, interleaved medians, with the code table warm (target: <= 3x each);
2. `atlas map` with source pages: build time (cold code table and warm), page count, size in MB
   (all pages, the source pages, the workspaces), and the time to interactive in Chromium of the
   largest source page and of the largest workspace (navigation start to the load event; the
   source pages have no script, the workspace's `atlasWorkspace.ready`).

Run: ATLAS_REPOS=/path/to/clones python bench/bench_source.py [--hops N] [--skip-map]
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import atlas_exe, interleaved

WHERE = ["where", "shmem_device_udma.hpp:490"]
SOURCES = [["source", "hicann/shmem@643bfb73b50d88042234d3f5e0c7c9841cdedbbe:"
            "src/device/gm2gm/engine/shmem_device_udma.hpp#L487-L496"],
           ["source", "aiv-direct-drive"], ["source", "tensor-to-wqe-lowering", "doorbell"]]


def command_ratios(exe: list[str], hops: list[str]) -> None:
    for args in [WHERE, *SOURCES]:  # warm: the pin table, the code table (built here if missing)
        subprocess.run(exe + args + hops, capture_output=True, check=False)
    cmds = {"python -c pass": [sys.executable, "-c", "pass"]}
    for args in [WHERE, *SOURCES]:
        cmds["atlas " + " ".join(a if len(a) < 40 else a[:18] + "..." + a[-14:] for a in args)] = exe + args + hops
    result = interleaved(cmds, runs=21)
    floor = result.pop("python -c pass")
    print(f"floor  python -c pass: {floor * 1000:.1f} ms")
    worst = 0.0
    for name, t in result.items():
        worst = max(worst, t / floor)
        print(f"{name:<64} {t * 1000:6.1f} ms  ratio {t / floor:4.2f}x")
    print(f"worst ratio {worst:.2f}x (target <= 3x): {'OK' if worst <= 3 else 'OVER'}")


def size(paths: list[Path]) -> float:
    return sum(p.stat().st_size for p in paths) / 1e6


def build(exe: list[str], out: Path, hops: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(exe + ["map", "-o", str(out), *hops], capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(done.stderr)
    print(done.stdout.strip())
    return took


def interactive(url: str, hook: str | None) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        t0 = time.perf_counter()
        page.goto(url)
        if hook:
            while not page.evaluate(f"!!(window.{hook} && window.{hook}.ready)"):
                page.wait_for_timeout(5)
        took = time.perf_counter() - t0
        browser.close()
    return took


def site_figures(exe: list[str], hops: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "site"
        warm = build(exe, out, hops)
        shutil.rmtree(out)
        warm = min(warm, build(exe, out, hops))
        pages = [p for p in out.rglob("*.html")]
        source = [p for p in pages if "source" in p.relative_to(out).parts[:1]]
        spaces = sorted(out.glob("code-*.html"), key=lambda p: p.stat().st_size)
        everything = [p for p in out.rglob("*") if p.is_file()]
        print(f"site: {len(pages)} pages, {size(everything):.1f} MB; source pages {len(source)}, "
              f"{size(source):.1f} MB; workspaces {len(spaces)}, {size(spaces):.1f} MB; built in {warm:.1f} s "
              "(code table warm)")
        largest = max(source, key=lambda p: p.stat().st_size)
        t = interactive(largest.as_uri(), None)
        print(f"largest source page {largest.relative_to(out)} ({largest.stat().st_size / 1e6:.1f} MB): "
              f"loaded in {t:.2f} s")
        if spaces:
            t = interactive(spaces[-1].as_uri(), "atlasWorkspace")
            print(f"largest workspace {spaces[-1].name} ({spaces[-1].stat().st_size / 1e6:.1f} MB): "
                  f"interactive in {t:.2f} s")


def main(argv: list[str]) -> None:
    if not os.environ.get("ATLAS_REPOS"):
        raise SystemExit("set ATLAS_REPOS to the folder of the clones")
    hops = ["--hops", argv[argv.index("--hops") + 1]] if "--hops" in argv else []
    exe = atlas_exe()
    command_ratios(exe, hops)
    if "--skip-map" not in argv:
        site_figures(exe, hops)


if __name__ == "__main__":
    main(sys.argv[1:])

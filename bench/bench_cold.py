"""The long jobs a new user waits for, from an empty cache, with the local clones ($ATLAS_REPOS or repos/):

1. the first `atlas where` on a pinned line (builds the compiled index, then the code index: every
   file behind the pins and the files defining what they call, parsed in one process per core);
2. the same question from a second data folder holding the same files (an installed copy): the
   code table is keyed by the data's content and the clones, so it is read, not built;
3. `atlas map --repos` into a new folder (with the code table of step 1), then again with nothing
   changed (no page is rewritten);
4. the cache's size after these steps, per part (`atlas cache`).

Each figure is printed with the floor measured in the same run (`python -c pass`, and `git log -p` of
the largest clone read to /dev/null) and the load average. Run from a checkout:

    python bench/bench_cold.py [--repos repos] [--line PATH:LINE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import atlas_exe

ROOT = Path(__file__).resolve().parent.parent
LINE = "shmem_device_udma.hpp:490"


def timed(cmd: list[str], env: dict, cwd: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    return time.perf_counter() - t0, done


def floor(env: dict, repos: Path) -> None:
    t, _ = timed([sys.executable, "-c", "pass"], env)
    print(f"floor  python -c pass: {t:.2f} s")
    local = repos / "local.yaml"
    if local.is_file():
        import yaml

        clones = yaml.safe_load(local.read_text()) or {}
        path = clones.get("hicann/shmem") or next(iter(clones.values()), None)
        if path:
            t0 = time.perf_counter()
            subprocess.run(["git", "--git-dir", str(path), "log", "-p", "-n", "2000"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
            print(f"floor  git log -p -n 2000 (hicann/shmem): {time.perf_counter() - t0:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", default=str(ROOT / "repos"))
    ap.add_argument("--line", default=LINE)
    args = ap.parse_args()
    exe = atlas_exe()
    repos = Path(args.repos).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = {**os.environ, "ATLAS_CACHE": str(base / "cache"), "ATLAS_REPOS": str(repos)}
        print(f"load average at the start: {os.getloadavg()}; {os.cpu_count()} cores")
        floor(env, repos)
        t, done = timed(exe + ["where", args.line, "--data", str(ROOT / "data")], env)
        print(f"first `atlas where` (empty cache): {t:.1f} s (exit {done.returncode})")
        other = base / "elsewhere" / "data"
        shutil.copytree(ROOT / "data", other)
        t, done = timed(exe + ["where", args.line, "--data", str(other)], env)
        print(f"the same from a second data folder: {t:.1f} s (exit {done.returncode})")
        for run in ("first build (code table warm)", "rebuild, nothing changed"):
            t, done = timed(exe + ["map", "-o", str(base / "site"), "--data", str(ROOT / "data"),
                                   "--repos", str(repos)], env)
            said = done.stdout.splitlines()[0] if done.stdout else done.stderr
            print(f"`atlas map --repos`, {run}: {t:.1f} s ({said})")
        report = json.loads(subprocess.run(exe + ["cache", "--format", "json"], capture_output=True, text=True,
                                           env=env, check=False).stdout)
        parts = ", ".join(f"{p['kind']} {p['bytes'] / 2**20:.1f} MB" for p in report["parts"])
        print(f"cache: {report['bytes'] / 2**20:.1f} MB ({parts})")
        print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""Benchmark (not a test): a full `atlas refresh` of every readable repository, `-j 1` against `-j N`.

Each run starts from the bundled data without its timeline (so every repository is read whole) in a
fresh temporary copy, as a separate `python -m atlas refresh` process; `python -c pass` is the floor
measured in the same run. The timelines of both runs must be identical (harvest times aside).
Run: ATLAS_REPOS=/path/to/clones python bench/bench_refresh_jobs.py [--jobs 2] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_refresh(jobs: int, work: Path) -> tuple[float, list[str], str]:
    data = work / f"data-j{jobs}"
    if data.exists():
        shutil.rmtree(data)
    shutil.copytree(ROOT / "data", data)
    (data / "timeline.yaml").unlink(missing_ok=True)
    env = dict(os.environ, ATLAS_CACHE=str(work / f"cache-j{jobs}"))
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "atlas", "refresh", "--data", str(data), "-j", str(jobs)],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    lines = [ln for ln in (data / "timeline.yaml").read_text(encoding="utf-8").splitlines()
             if "harvested_at" not in ln] if (data / "timeline.yaml").exists() else []
    return dt, lines, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    if not os.environ.get("ATLAS_REPOS"):
        sys.exit("set ATLAS_REPOS to the root of the local clones")
    work = Path(tempfile.mkdtemp(prefix="atlas-bench-jobs-"))
    try:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floor = time.perf_counter() - t
        best: dict[int, float] = {}
        out: dict[int, list[str]] = {}
        table = ""
        for _ in range(args.repeat):
            for jobs in (1, args.jobs):
                dt, lines, stdout = run_refresh(jobs, work)
                best[jobs] = min(best.get(jobs, dt), dt)
                out[jobs] = lines
                table = stdout if jobs == 1 else table
        print(table)
        print(f"python -c pass      {floor:8.3f} s")
        print(f"refresh -j 1        {best[1]:8.2f} s")
        print(f"refresh -j {args.jobs:<8} {best[args.jobs]:8.2f} s   speed-up {best[1] / best[args.jobs]:.2f}x "
              f"on {os.cpu_count()} CPUs")
        print("timelines identical:", out[1] == out[args.jobs] and bool(out[1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

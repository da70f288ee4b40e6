"""Benchmark (not a test): the API history of every real clone that declares a public surface.

1. The floor: one `git log -p` pass over each of those repositories, the same command the harvest runs
   (`--first-parent -p -U0 --full-index --reverse`, without the paths of missing blobs where a clone
   lacks some), two repositories at a time, output thrown away.
2. `atlas refresh -j 2 --repo ...` of the same repositories from an empty timeline and no API files,
   once with an empty parse cache (cold: every public header blob parsed) and once with the parses
   cached (warm). The probes of those repositories ride the same pass. Goal: at most 1.5x the floor.
3. A no-op incremental refresh of the bundled data (nothing changed since the last run; its API
   histories and the tags of every clone are checked too) against `python -c pass`: goal at most 3x.
4. The symbols per repository (by kind) and the size of each stored file.

Run: ATLAS_REPOS=/path/to/clones python bench/bench_api.py [--runs 5]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import atlas_exe, interleaved  # noqa: E402

FLOOR = ["log", "--first-parent", "--diff-merges=first-parent", "-p", "-U0", "--no-renames", "--no-color",
         "--no-ext-diff", "--no-textconv", "--full-index", "--reverse"]


def surfaces(data: Path, repos: Path) -> list[tuple[str, Path, str]]:
    """(repository, git dir, branch) of each repository with `api:` and a clone."""
    from atlas.harvest import locate
    from atlas.index.compiled import load_atlas

    atlas = load_atlas(data)
    out = []
    for r in atlas.repositories:
        clone = locate.find_clone(r.id, repos)
        if r.api is not None and clone is not None:
            out.append((r.id, clone.gitdir, locate.resolve_branch(clone, r.branch)[1]))
    return out


def floor(targets, skipped: dict[str, list[str]]) -> float:
    def one(t):
        rid, gitdir, head = t
        excl = [f":(exclude,literal){p}" for p in skipped.get(rid, [])]
        subprocess.run(["git", "--git-dir", str(gitdir), *FLOOR, head, "--", *excl], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, sorted(targets, key=lambda t: -_size(t[1]))))
    return time.perf_counter() - t0


def _size(gitdir: Path) -> int:
    return sum(f.stat().st_size for f in (Path(gitdir) / "objects" / "pack").glob("*.pack"))


def fresh_data(work: Path, name: str) -> Path:
    data = work / name
    if data.exists():
        shutil.rmtree(data)
    shutil.copytree(ROOT / "data", data)
    (data / "timeline.yaml").unlink(missing_ok=True)
    shutil.rmtree(data / "api", ignore_errors=True)
    return data


def refresh(data: Path, cache: Path, rids: list[str]) -> float:
    env = dict(os.environ, ATLAS_CACHE=str(cache))
    args = [a for rid in rids for a in ("--repo", rid)]
    t0 = time.perf_counter()
    p = subprocess.run([*atlas_exe(), "refresh", "--data", str(data), "-j", "2", *args], env=env,
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(p.stderr or p.stdout)
    return dt


def counts(data: Path) -> list[tuple[str, dict, int, int]]:
    rows = []
    for f in sorted((data / "api").glob("*.jsonl")):
        kinds: dict[str, int] = {}
        removed = 0
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec.get("type") == "symbol":
                    kinds[rec["kind"]] = kinds.get(rec["kind"], 0) + 1
                    removed += bool(rec["history"]) and rec["history"][-1][2] == "removed"
        rows.append((f.name, kinds, removed, f.stat().st_size))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5, help="no-op refresh runs (interleaved with the floor)")
    args = ap.parse_args()
    repos = Path(os.environ.get("ATLAS_REPOS", ""))
    if not repos.is_dir():
        sys.exit("set ATLAS_REPOS to the root of the local clones")
    work = Path(tempfile.mkdtemp(prefix="atlas-bench-api-"))
    try:
        targets = surfaces(ROOT / "data", repos)
        rids = [t[0] for t in targets]
        cache = work / "cache"
        cold_data = fresh_data(work, "cold")
        cold = refresh(cold_data, cache, rids)
        warm = refresh(fresh_data(work, "warm"), cache, rids)
        from atlas.harvest.timeline import read_state

        skipped = {h.repo: h.skipped_paths for h in read_state(cold_data / "timeline.yaml")[0]}
        base = min(floor(targets, skipped) for _ in range(2))
        env = dict(os.environ, ATLAS_CACHE=str(cache))
        bundled = work / "bundled"  # the bundled data (every repository harvested, API histories included)
        shutil.copytree(ROOT / "data", bundled)
        cmd = [*atlas_exe(), "refresh", "--data", str(bundled)]
        for _ in range(2):  # up to date, then a no-op that is remembered
            subprocess.run(cmd, env=env, capture_output=True)
        noop = interleaved({"pass": [sys.executable, "-c", "pass"], "noop": cmd}, runs=args.runs, env=env)
        print(f"repositories: {len(rids)} ({', '.join(rids)})")
        print(f"floor: git log -p over them, -j 2          {base:7.2f} s")
        print(f"atlas refresh -j 2, cold parse cache      {cold:7.2f} s  = {cold / base:.2f}x the floor")
        print(f"atlas refresh -j 2, parses cached (warm)  {warm:7.2f} s  = {warm / base:.2f}x the floor")
        print(f"no-op refresh {noop['noop'] * 1000:.0f} ms vs python -c pass {noop['pass'] * 1000:.0f} ms = "
              f"{noop['noop'] / noop['pass']:.2f}x")
        print("\nrepository file                         symbols  function enum-constant macro type removed   bytes")
        total = 0
        for name, kinds, removed, size in counts(cold_data):
            n = sum(kinds.values())
            total += n
            print(f"{name:<40} {n:7} {kinds.get('function', 0):9} {kinds.get('enum-constant', 0):13} "
                  f"{kinds.get('macro', 0):5} {kinds.get('type', 0):4} {removed:7} {size:8}")
        print(f"total symbols {total}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

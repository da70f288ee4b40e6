"""The code index (atlas.code) on the bundled atlas and real clones, against its floor: one
`git cat-file --batch` per repository reading the same blobs. Not a timed test; run by hand:

    ATLAS_REPOS=/path/to/clones python bench/bench_code.py [--hops 0 1] [--runs 3] [--strategies grep tree]

For each hop count: the floor (cat-file of every blob the index holds, one process per repository,
median of --runs), a cold index (an empty parse cache, one run: hops=1 parses thousands of files),
and a warm one (the cache kept, median of --runs), with the search strategies asked for. Figures are
seconds and multiples of the floor. The bundled atlas is read through its compiled index first, so
loading it is not counted.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import atlas  # noqa: E402
from atlas.code.build import index_atlas  # noqa: E402
from atlas.harvest import locate  # noqa: E402
from atlas.paths import repos_root  # noqa: E402


def floor(index, root: Path) -> float:
    """Seconds for `git cat-file --batch` of every indexed blob, one process per repository."""
    by_repo: dict[str, list[str]] = {}
    for f in index.files:
        by_repo.setdefault(f.repo, []).append(f.blob)
    t0 = time.perf_counter()
    for repo, blobs in sorted(by_repo.items()):
        clone = locate.find_clone(repo, root)
        data = "".join(b + "\n" for b in blobs).encode()
        subprocess.run(["git", "--git-dir", str(clone.gitdir), "cat-file", "--batch"], input=data,
                       stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def timed(a, root: Path, hops: int, strategy: str, cache: Path):
    os.environ["ATLAS_CACHE"] = str(cache)
    t0 = time.perf_counter()
    index = index_atlas(a, root, hops=hops, strategy=strategy)
    return time.perf_counter() - t0, index


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hops", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--strategies", nargs="+", default=["grep", "tree"])
    args = ap.parse_args(argv)
    a = atlas.load()
    root = repos_root()
    print(f"repositories under {root}")
    for hops in args.hops:
        for strategy in args.strategies:
            with tempfile.TemporaryDirectory(prefix="atlas-bench-code-") as tmp:
                cold, index = timed(a, root, hops, strategy, Path(tmp))
                warm = statistics.median(timed(a, root, hops, strategy, Path(tmp))[0] for _ in range(args.runs))
            base = statistics.median(floor(index, root) for _ in range(args.runs))
            size = sum(f.lines for f in index.files)
            print(f"hops={hops} strategy={strategy}: {len(index.files)} files ({size:,} lines, "
                  f"{sum(len(f.functions) for f in index.files):,} functions, {len(index.links):,} calls linked), "
                  f"{len(index.missing)} missing blobs, {len(index.unindexed)} pinned files without a clone or commit")
            print(f"  floor (git cat-file --batch of the same blobs) {base:.3f} s")
            print(f"  cold {cold:.2f} s = {cold / base:.1f}x floor; warm {warm:.2f} s = {warm / base:.1f}x floor")


if __name__ == "__main__":
    main()

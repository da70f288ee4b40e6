"""Where the call links of the real code index lead. Not a timed test; run by hand over the real clones:

    python bench/bench_calls.py [--data data] [--repos repos] [--sample 100] [--seed 32] [--out FILE]

It indexes the code behind the bundled atlas's pins (one hop, as `atlas where` does), then:

1. checks that no call written `std::...` (or on a receiver of a `std::` type) links into a vendored
   folder, and that no call from a project's own code links into a vendored folder its file does not
   include (exit 1 when one does, each one listed);
2. counts the links by status and by confidence (exact, by name, unresolved);
3. draws `--sample` links at random (seeded) and writes them, with the source line of the call and of
   each target, as a table to judge by hand (`--out`; bench/calls_judged.md holds the judged one).
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atlas.code.build import index_atlas  # noqa: E402
from atlas.harvest import locate  # noqa: E402
from atlas.index.compiled import load_atlas  # noqa: E402


def vendored_trees(index, root: Path) -> dict:
    """(repo, commit) -> its vendored folders, read from the tree as the index does."""
    from atlas.code.gitread import GitReader
    from atlas.code.vendored import Vendored

    out = {}
    for repo, commit in sorted({(f.repo, f.commit) for f in index.files}):
        clone = locate.find_clone(repo, root)
        out[(repo, commit)] = Vendored(p for p, _ in GitReader(clone.gitdir, repo).list_files(commit, ("",)))
    return out


def violations(index, trees: dict) -> tuple[list, list]:
    """(std:: calls that reach vendored code, own code reaching a vendored folder it does not include)."""
    files = {f.key: f for f in index.files}
    into_std, unincluded = [], []
    for ln in index.links:
        tree = trees[(ln.caller.repo, ln.caller.commit)]
        caller = files[(ln.caller.repo, ln.caller.commit, ln.caller.path)]
        for t in ln.targets:
            root = tree.root_of(t.path)
            if not root:
                continue
            if ln.call.qualifier.removeprefix("::").split("::")[0] == "std" or ln.status == "stdlib":
                into_std.append((ln, t))
            if root != tree.root_of(caller.path) and root not in tree.included(caller.includes):
                unincluded.append((ln, t))
    return into_std, unincluded


def source_line(root: Path, repo: str, commit: str, path: str, line: int, memo: dict) -> str:
    key = (repo, commit, path)
    if key not in memo:
        clone = locate.find_clone(repo, root)
        done = subprocess.run(["git", "--git-dir", str(clone.gitdir), "show", f"{commit}:{path}"], capture_output=True)
        memo[key] = done.stdout.decode("utf-8", "replace").split("\n")
    lines = memo[key]
    return lines[line - 1].strip() if 0 < line <= len(lines) else "?"


def sample_table(index, root: Path, n: int, seed: int) -> str:
    memo: dict = {}
    rows = ["| # | call (repository@commit:path:line, in) | as written | status | confidence | targets |",
            "|---|---|---|---|---|---|"]
    for i, at in enumerate(random.Random(seed).sample(range(len(index.links)), n), 1):
        ln = index.links[at]
        c = ln.caller
        text = source_line(root, c.repo, c.commit, c.path, ln.call.line, memo).replace("|", "\\|")[:100]
        targets = "; ".join(f"{t.path}:{t.start} `{t.qualified}`" for t in ln.targets[:3])
        more = f" (+{len(ln.targets) - 3})" if len(ln.targets) > 3 else ""
        rows.append(f"| {i} | {c.repo}@{c.commit[:10]}:{c.path}:{ln.call.line} in `{c.qualified}` | `{text}` | "
                    f"{ln.status} | {ln.confidence} | {targets}{more} |")
    return "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--repos", default="repos")
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    root = Path(args.repos)
    index = index_atlas(load_atlas(Path(args.data)), root, hops=1)
    trees = vendored_trees(index, root)
    into_std, unincluded = violations(index, trees)
    print(f"{len(index.files)} files, {len(index.links)} call links")
    print("by status:", dict(Counter(ln.status for ln in index.links).most_common()))
    print("by confidence:", dict(Counter(ln.confidence for ln in index.links).most_common()))
    print(f"vendored folders: {sum(len(t.roots) for t in trees.values())} over {len(trees)} repository@commits")
    print(f"std:: calls linked into vendored code: {len(into_std)}")
    print(f"own code linked into a vendored folder it does not include: {len(unincluded)}")
    for ln, t in (into_std + unincluded)[:20]:
        print(f"  {ln.caller.repo}:{ln.caller.path}:{ln.call.line} {ln.call.text} -> {t.path}:{t.start}")
    if args.out:
        Path(args.out).write_text(sample_table(index, root, args.sample, args.seed), encoding="utf-8")
        print(f"{args.sample} links drawn with seed {args.seed}: {args.out}")
    return 1 if into_std or unincluded else 0


if __name__ == "__main__":
    sys.exit(main())

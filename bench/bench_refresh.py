"""Benchmark of `atlas refresh` (not a test). Run: python bench/bench_refresh.py [--commits N] [--real DIR]

1. Generates a linear repository of >= 5,000 commits with git fast-import and 50 term probes
   (45 planted at random commits, 5 never present).
2. Times: refresh (one streaming pass) vs the naive loop of one
   `git log -S<term> --first-parent --reverse` per probe (answers must be identical), vs one bare
   `git log -p --first-parent` over the same history (the floor), and a no-op refresh (a fresh
   Python process) vs `python -c pass`.
3. With --real ID (default: hicann/hccl, found under $ATLAS_REPOS as `atlas refresh` finds clones),
   the same against that real clone with 50 identifiers taken from its history.
Targets: >= 10x faster than naive, <= 1.5x the floor, no-op <= 5x python -c pass.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atlas.harvest import read_state  # noqa: E402
from atlas.harvest.refresh import refresh  # noqa: E402
from atlas.model.core import Atlas, Concept, Probe, Text  # noqa: E402

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def sh(argv, cwd=None, input=None) -> bytes:
    return subprocess.run(argv, cwd=cwd, env=ENV, input=input, check=True,
                          stdout=subprocess.PIPE).stdout


def timed(fn, repeat=1):
    best = None
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def generate(path: Path, commits: int, seed: int = 7):
    rnd = random.Random(seed)
    words = [f"w{i:04d}" for i in range(3000)]
    terms = [f"atlas_probe_{i:02d}_Symbol" for i in range(45)] + ["直驱_探针", "a.b(*)[x", "HCCS::link",
                                                                   "never_there_1", "never_there_2"]
    plant = {rnd.randrange(1, commits): t for t in terms[:47]}
    files: dict[str, list[str]] = {}
    stream = []
    t0 = 1_700_000_000
    for i in range(commits):
        name = f"src/mod{rnd.randrange(300):03d}/f{rnd.randrange(8)}.c"
        lines = files.setdefault(name, [])
        for _ in range(rnd.randrange(3, 25)):
            lines.insert(rnd.randrange(len(lines) + 1), " ".join(rnd.choices(words, k=8)))
        if len(lines) > 60:
            del lines[rnd.randrange(len(lines))]
        if i in plant:
            lines.append(f"call {plant[i]} here")
        body = ("\n".join(lines) + "\n").encode()
        msg = f"commit {i}".encode()
        stream.append(b"commit refs/heads/master\n")
        stream.append(f"mark :{i + 1}\n".encode())
        stream.append(f"author A <a@x> {t0 + i * 600} +0000\n".encode())
        stream.append(f"committer C <c@x> {t0 + i * 600} +0000\n".encode())
        stream.append(b"data %d\n%s\n" % (len(msg), msg))
        if i:
            stream.append(f"from :{i}\n".encode())
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(body), body))
    path.mkdir(parents=True)
    sh(["git", "init", "-q", "--bare", str(path)])
    sh(["git", "--git-dir", str(path), "fast-import", "--quiet"], input=b"".join(stream))
    sh(["git", "--git-dir", str(path), "symbolic-ref", "HEAD", "refs/heads/master"])
    return terms


def atlas_for(rid: str, terms):
    concepts = [Concept(id=f"c{i}", kind="concept", names=Text("x", "x"),
                        probes=[Probe(rid, "term", t)]) for i, t in enumerate(terms)]
    return Atlas(concepts=concepts)


def naive(gitdir: str, head: str, terms):
    out = {}
    for t in terms:
        r = sh(["git", "--git-dir", gitdir, "log", "--first-parent", "--diff-merges=first-parent",
                "--no-renames", "--reverse", "--format=%H", f"-S{t}", head, "--"])
        out[t] = r.split(b"\n", 1)[0].decode() if r else ""
    return out


def floor(gitdir: str, head: str):
    subprocess.run(["git", "--git-dir", gitdir, "log", "-p", "--first-parent", head],
                   env=ENV, stdout=subprocess.DEVNULL, check=True)


def measure(label: str, repos: Path, rid: str, gitdir: str, terms, naive_too=True):
    print(f"\n== {label}: {gitdir}")
    data = Path(tempfile.mkdtemp(prefix="atlas-bench-data-"))
    try:
        atlas = atlas_for(rid, terms)

        def full():
            if (data / "timeline.yaml").exists():
                (data / "timeline.yaml").unlink()
            return refresh(atlas, data, repos_root=repos, cutoff="2026-08-26")

        t_ref, rep = timed(full, repeat=3)
        row = rep.rows[0]
        print(f"refresh (full)           {t_ref:8.3f} s  ({row.found} found, {row.not_found} not found, "
              f"{row.commits} mainline commits, read {row.read})")
        harvest = read_state(data / "timeline.yaml")[0][0]
        head = harvest.cutoff_head
        ours = {s.value: s.sha for s in read_state(data / "timeline.yaml")[1]}
        t_floor, _ = timed(lambda: floor(gitdir, head), repeat=3)
        print(f"git log -p (floor)       {t_floor:8.3f} s   ratio refresh/floor = {t_ref / t_floor:.2f}")
        if naive_too:
            t_naive, theirs = timed(lambda: naive(gitdir, head, terms))
            same = sum(ours.get(t, "") == theirs[t] for t in terms)
            print(f"naive -S loop ({len(terms)} runs)  {t_naive:8.3f} s   naive/refresh = {t_naive / t_ref:.1f}x; "
                  f"identical answers {same}/{len(terms)}")
            diff = [t for t in terms if ours.get(t, "") != theirs[t]]
            if diff:
                print("  differing:", ", ".join(f"{t!r}: ours {ours.get(t, '')[:10]} naive {theirs[t][:10]}"
                                                for t in diff[:5]))
        script = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(ROOT)!r})
            from atlas.harvest.refresh import refresh
            from atlas.model.core import Atlas, Concept, Probe, Text
            terms = {list(terms)!r}
            a = Atlas(concepts=[Concept(id=f"c{{i}}", kind="concept", names=Text("x", "x"),
                                        probes=[Probe({rid!r}, "term", t)]) for i, t in enumerate(terms)])
            rep = refresh(a, {str(data)!r}, repos_root={str(repos)!r}, cutoff="2026-08-26")
            assert rep.rows[0].status == "up-to-date", rep.rows[0].status
            assert "git" not in sys.modules
        """)
        t_noop, _ = timed(lambda: subprocess.run([sys.executable, "-c", script], check=True), repeat=7)
        t_pass, _ = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), repeat=7)
        t_inproc, rep2 = timed(lambda: refresh(atlas, data, repos_root=repos, cutoff="2026-08-26"), repeat=5)
        print(f"no-op refresh (process)  {t_noop * 1000:8.1f} ms  python -c pass {t_pass * 1000:.1f} ms  "
              f"ratio = {t_noop / t_pass:.2f}  (in-process call {t_inproc * 1000:.1f} ms, {rep2.rows[0].status})")
    finally:
        shutil.rmtree(data, ignore_errors=True)


def real_terms(gitdir: str, n: int = 50, seed: int = 3):
    """Identifiers from the patches of random mainline commits, plus a few absent ones."""
    rnd = random.Random(seed)
    shas = sh(["git", "--git-dir", gitdir, "rev-list", "--first-parent", "HEAD"]).split()
    seen = []
    ident = re.compile(rb"^\+.*?\b([A-Za-z_][A-Za-z0-9_]{10,40})\b", re.M)
    while len(seen) < n - 3 and shas:
        sha = shas.pop(rnd.randrange(len(shas))).decode()
        patch = sh(["git", "--git-dir", gitdir, "show", "--first-parent", "-U0", "--format=", sha])
        for m in ident.finditer(patch[:200_000]):
            t = m.group(1).decode()
            if t not in seen:
                seen.append(t)
                break
    return seen + ["never_in_this_repo_1", "never_in_this_repo_2", "直驱"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--real", default="hicann/hccl", help="repository id of a local clone")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="atlas-bench-"))
    try:
        repos = work / "repos"
        gitdir = repos / "bench" / "gen"
        t, terms = timed(lambda: generate(gitdir, args.commits))
        print(f"generated {args.commits} commits with fast-import in {t:.1f} s; {len(terms)} probes")
        measure("generated", repos, "bench/gen", str(gitdir), terms)
        from atlas.harvest import locate
        from atlas.paths import repos_root

        root = repos_root(None)
        clone = locate.find_clone(args.real, root) if root.is_dir() else None
        if clone is not None:
            measure(f"real clone {args.real}", root, args.real, str(clone.gitdir),
                    real_terms(str(clone.gitdir)))
        else:
            print(f"no clone of {args.real} under {root} (set ATLAS_REPOS); real measure skipped")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

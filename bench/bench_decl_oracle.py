"""Benchmark and oracle run (not a test): the declaration reader (`atlas.code.decls`, tree-sitter)
against libclang (tests/declclang.py) on every public header of every repository with an API history,
at every release and at the cut-off head (data/api/*.jsonl say which commits), each header blob once.

Each commit's public files are written to a scratch folder so that clang resolves their includes of
one another (the repository's decorations are then defined where its headers define them); the standard
headers are small stubs. A declaration tree-sitter reads in a branch clang skipped is set apart (the
reader counts every branch by design). Every other disagreement must be listed, with its reason, in
tests/fixtures/decl_oracle_known.yaml (by repository, path, kind, name and side); the run prints the
figures and the disagreements not listed, and exits 1 when there is one.

Run: python bench/bench_decl_oracle.py [--repos repos] [--repo ID]... [--write-known]
(--write-known adds the disagreements found to the fixture with an empty reason, to be filled by hand.)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import yaml  # noqa: E402

import declclang  # noqa: E402
from atlas.model import apifile  # noqa: E402
from atlas.harvest.locate import find_clone, local_map  # noqa: E402
from atlas.harvest.publicfiles import PathRule, TreeReader  # noqa: E402
from atlas.index.compiled import load_atlas  # noqa: E402

KNOWN = ROOT / "tests" / "fixtures" / "decl_oracle_known.yaml"


def read_blobs(git_dir: Path, blobs: list[str]) -> dict[str, bytes]:
    p = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], input="".join(
        b + "\n" for b in blobs).encode(), capture_output=True, check=True)
    out, data, pos = {}, p.stdout, 0
    for b in blobs:
        nl = data.index(b"\n", pos)
        head = data[pos:nl].split()
        pos = nl + 1
        if len(head) == 3:
            size = int(head[2])
            out[b] = data[pos:pos + size]
            pos += size + 1
    return out


def commits_of(data_dir: Path, repo: str) -> list[tuple[str, str]]:
    got = apifile.read(apifile.path(data_dir, repo))
    if got is None:
        return []
    header, releases, _symbols = got
    return [(r["name"], r["commit"]) for r in releases] + [("cut-off", header["cutoff_head"])]


def run_repo(repo, clone, data_dir: Path, progress) -> tuple[dict, list[dict]]:
    rule = PathRule(repo.api.public, repo.api.exclude)
    decorations = tuple(repo.api.decorations)
    argv = ["git", "--git-dir", str(clone.gitdir)]
    env = {**os.environ, "GIT_ALLOW_PROTOCOL": "none"}
    seen: set[str] = set()
    figures = {"commits": 0, "headers": 0, "declarations": 0, "agree": 0, "inactive": 0, "disagree": 0,
               "seconds": 0.0}
    found: list[dict] = []
    started = time.perf_counter()
    with TreeReader(argv, env, repo.id, rule) as reader:
        for label, sha in commits_of(data_dir, repo.id):
            files = reader.public_files(sha)
            figures["commits"] += 1
            blobs = read_blobs(clone.gitdir, sorted(set(files.values())))
            with tempfile.TemporaryDirectory(prefix="decl-oracle-") as tmp:
                for path, blob in files.items():
                    if blob in blobs:
                        (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
                        (Path(tmp) / path).write_bytes(blobs[blob])
                folders = sorted({str((Path(tmp) / p).parent) for p in files} | {tmp})
                folders += [str(Path(tmp) / g.split("*")[0].rstrip("/")) for g in repo.api.public]
                for path, blob in sorted(files.items()):
                    if blob in seen or blob not in blobs:
                        continue
                    seen.add(blob)
                    text = blobs[blob]
                    ts = declclang.tree_sitter(text, decorations)
                    full = str(Path(tmp) / path)
                    tu = declclang.parse(full, text, folders)
                    cl = declclang.from_unit(tu, full)
                    skipped = declclang.skipped(tu, full)
                    only_ts, only_cl = declclang.compare(ts, cl, skipped)
                    errors = declclang.errors(tu, full)
                    figures["headers"] += 1
                    figures["declarations"] += len(ts | cl)
                    figures["inactive"] += len({d for d in ts - cl if d[2] in skipped})
                    figures["agree"] += len(ts & cl)
                    lines = text.split(b"\n")
                    for side, items in (("tree-sitter only", only_ts), ("clang only", only_cl)):
                        for kind, name, line in sorted(items):
                            figures["disagree"] += 1
                            row = {"repo": repo.id, "path": path, "kind": kind, "name": name, "side": side,
                                   "line": line, "blob": blob, "at": label, "clang": errors.get(line, "")}
                            row["reason"] = guess(row, lines[line - 1] if 0 < line <= len(lines) else b"")
                            found.append(row)
            progress(f"{repo.id} {label}: {figures['headers']} headers, {figures['disagree']} disagreements")
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures, found


def guess(row: dict, line: bytes) -> str:
    """The reason code of a disagreement when a rule shows it (else "": to be written by hand):
    `macro-expansion` when clang declares a name its line does not spell (an X-macro expanded);
    `clang-unresolved` when clang reported an error where tree-sitter reads the declaration."""
    short = row["name"].split("::")[-1]
    if row["side"] == "clang only" and not re.search(r"\b" + re.escape(short) + r"\b", line.decode("utf-8", "replace")):
        return "macro-expansion"
    if row["side"] == "tree-sitter only" and row["clang"]:
        return "clang-unresolved"
    return ""


def known_rows() -> list[dict]:
    if not KNOWN.is_file():
        return []
    return (yaml.safe_load(KNOWN.read_text(encoding="utf-8")) or {}).get("disagreements") or []


def key(row: dict) -> tuple:
    return row["repo"], row["path"], row["kind"], row["name"], row["side"]


def write_known(rows: list[dict]) -> None:
    """The fixture: its reasons (kept) and one line per disagreement."""
    head = KNOWN.read_text(encoding="utf-8").split("\ndisagreements:")[0] if KNOWN.is_file() else "reasons: {}\n"
    lines = [head.rstrip("\n"), "disagreements:"]
    for r in sorted(rows, key=key):
        lines.append("  - " + json.dumps({k: r[k] for k in ("repo", "path", "kind", "name", "side", "reason")},
                                         ensure_ascii=False))
    KNOWN.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", default=str(ROOT / "repos"))
    ap.add_argument("--data", default=str(ROOT / "data"))
    ap.add_argument("--repo", action="append", default=[])
    ap.add_argument("--write-known", action="store_true")
    ap.add_argument("--out", help="write every disagreement (JSON lines) to this file")
    args = ap.parse_args()
    data_dir = Path(args.data)
    atlas = load_atlas(data_dir)
    mapping = local_map(Path(args.repos))
    tty = sys.stderr.isatty()

    def progress(msg: str) -> None:
        if tty:
            sys.stderr.write("\r\033[K" + msg[:150])
            sys.stderr.flush()

    totals: dict[str, dict] = {}
    found: list[dict] = []
    for repo in atlas.repositories:
        if repo.api is None or not repo.api.public or (args.repo and repo.id not in args.repo):
            continue
        clone = find_clone(repo.id, Path(args.repos), mapping)
        if clone is None:
            print(f"{repo.id}: no local clone, skipped")
            continue
        figures, rows = run_repo(repo, clone, data_dir, progress)
        totals[repo.id] = figures
        found += rows
    if tty:
        sys.stderr.write("\r\033[K")
    known = {key(r): r for r in known_rows()}
    new = [r for r in found if key(r) not in known]
    print(f"{'repository':32} {'commits':>7} {'headers':>7} {'decls':>7} {'agree':>7} {'inactive':>8} "
          f"{'disagree':>8} {'listed':>6} {'seconds':>7}")
    for rid, f in totals.items():
        listed = sum(1 for r in found if r["repo"] == rid and key(r) in known)
        print(f"{rid:32} {f['commits']:7} {f['headers']:7} {f['declarations']:7} {f['agree']:7} {f['inactive']:8} "
              f"{f['disagree']:8} {listed:6} {f['seconds']:7}")
    s = {k: sum(f[k] for f in totals.values()) for k in ("headers", "declarations", "agree", "inactive", "disagree")}
    print(f"total: {s['headers']} header blobs, {s['declarations']} declarations, {s['agree']} agree, "
          f"{s['inactive']} in branches clang skipped, {s['disagree']} disagreements "
          f"({s['disagree'] - len(new)} listed with a reason, {len(new)} not listed)")
    for r in new[:200]:
        print("NOT LISTED:", json.dumps(r, ensure_ascii=False))
    if args.out:
        Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in found), encoding="utf-8")
    if args.write_known and new:
        write_known(list(known.values()) + [{**{k: r[k] for k in ("repo", "path", "kind", "name", "side")},
                                             "reason": r["reason"]} for r in {key(r): r for r in new}.values()])
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())

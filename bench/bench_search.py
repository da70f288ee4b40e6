"""Search relevance and the engine choice, measured in one run.

1. Relevance: top-1 and top-3 rates of the phrase set (tests/search_phrases.yaml) against the atlas.
2. Engine: the SQLite FTS5 index (atlas.index.search) against a small in-memory inverted index (marshal,
   bm25 computed in Python, the same documents, tokens and weights, without the closeness bonus):
   build time, size, and the time a new process takes to load the index and answer one phrase or
   all of them, each against `python -c pass`.

Run: python bench/bench_search.py [--data DIR] [--phrases FILE]
"""
from __future__ import annotations

import argparse
import math
import marshal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from atlas.index import search
from atlas.index.compiled import load_atlas

ROOT = Path(__file__).resolve().parent.parent


def build_inverted(atlas) -> dict:
    """The alternative engine: postings token -> {doc: [tf per column]}, doc lengths, names keys."""
    from atlas.text import norm, squash

    docs, postings, lengths, keys = [], {}, [], {}
    for n, d in enumerate(search.documents(atlas)):
        docs.append((d["type"], d["id"]))
        lens = []
        for c, col in enumerate(search.COLUMNS):
            toks = [t for _, s in d[col] for t in search.tokens(s)]
            lens.append(len(toks))
            for t in toks:
                postings.setdefault(t, {}).setdefault(n, [0] * len(search.COLUMNS))[c] += 1
        lengths.append(lens)
        for name in d["keys"]:
            for k in (norm(name), squash(name)):
                if k:
                    keys.setdefault(k, set()).add(n)
    return {"docs": docs, "postings": postings, "lengths": lengths,
            "keys": {k: sorted(v) for k, v in keys.items()}}


def search_inverted(ix: dict, text: str, limit: int = 10) -> list[tuple[str, str]]:
    from atlas.text import norm, squash

    query = search.query_tokens(text)
    n_docs = len(ix["docs"])
    avg = [sum(row[c] for row in ix["lengths"]) / n_docs for c in range(len(search.COLUMNS))]
    exact = {d for k in (norm(text), squash(text)) for d in ix["keys"].get(k, [])}
    bm, anywhere, names = {}, {}, {}
    for t in query:
        post = ix["postings"].get(t, {})
        idf = math.log(1 + (n_docs - len(post) + 0.5) / (len(post) + 0.5))
        for d, tfs in post.items():
            tf = sum(w * f / (1 - 0.75 + 0.75 * ix["lengths"][d][c] / (avg[c] or 1))
                     for c, (w, f) in enumerate(zip(search.WEIGHTS, tfs)))
            bm[d] = bm.get(d, 0.0) + idf * tf * 2.2 / (tf + 1.2)
            anywhere[d] = anywhere.get(d, 0) + 1
            if tfs[0]:
                names[d] = names.get(d, 0) + 1
    n = len(query)
    scored = []
    for d in set(bm) | exact:
        if d not in exact and (not n or anywhere.get(d, 0) / n < search.MIN_COVERAGE):
            continue
        b = bm.get(d, 0.0)
        score = (100.0 if d in exact else 0.0) \
            + (search.NAME_WEIGHT * (names.get(d, 0) / n) ** search.NAME_POWER if n else 0.0) \
            + search.TEXT_WEIGHT * (anywhere.get(d, 0) / n if n else 0.0) + b / (1 + b)
        scored.append((-score, search.TYPE_ORDER[ix["docs"][d][0]], ix["docs"][d][1], d))
    scored.sort()
    return [ix["docs"][d] for *_, d in scored[:limit]]


def rates(ranked: list[list[str]], phrases: list[dict]) -> tuple[float, float]:
    top1 = sum(1 for got, p in zip(ranked, phrases) if got[:1] == [p["expect"]])
    top3 = sum(1 for got, p in zip(ranked, phrases) if p["expect"] in got[:3])
    return top1 / len(phrases), top3 / len(phrases)


_SQLITE_RUN = """
import sys, sqlite3
sys.path.insert(0, {root!r})
from atlas.index.search import SearchIndex
ix = SearchIndex(sqlite3.connect({path!r}))
for p in {phrases!r}:
    ix.search(p, limit=10)
"""

_INVERTED_RUN = """
import sys, marshal
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
from bench_search import search_inverted
ix = marshal.loads(open({path!r}, 'rb').read())
for p in {phrases!r}:
    search_inverted(ix, p)
"""


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "data"))
    ap.add_argument("--phrases", default=str(ROOT / "tests" / "search_phrases.yaml"))
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args(argv)
    if not Path(args.phrases).is_file():
        print(f"no phrase set at {args.phrases} (pass --phrases FILE)", file=sys.stderr)
        return 1
    atlas = load_atlas(args.data)
    phrases = yaml.safe_load(Path(args.phrases).read_text(encoding="utf-8"))

    t0 = time.perf_counter()
    fts = search.build(atlas)
    fts_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    inv = build_inverted(atlas)
    inv_build = time.perf_counter() - t0

    result = search.relevance(fts, phrases)
    inv_ranked = [[f"{t}:{i}" for t, i in search_inverted(inv, p["phrase"])] for p in phrases]
    inv_top1, inv_top3 = rates(inv_ranked, phrases)
    print(f"phrases: {result['phrases']}")
    print(f"relevance (FTS5, shipped): top-1 {result['top1']:.1%}  top-3 {result['top3']:.1%}"
          f"  (targets >= 90% and >= 98%)")
    for m in result["misses"]:
        print(f"  {'top-3' if m.get('top3') else 'miss '}  {m['phrase']!r}: expected {m['expect']}, got {m['got']}")
    print(f"relevance (in-memory inverted index): top-1 {inv_top1:.1%}  top-3 {inv_top3:.1%}")

    texts = [p["phrase"] for p in phrases]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "search.sqlite"
        fts.con.execute(f"VACUUM INTO '{db}'")
        mar = Path(tmp) / "inverted.marshal"
        mar.write_bytes(marshal.dumps(inv))
        floor = wall([sys.executable, "-c", "pass"], args.runs)
        f_run = wall([sys.executable, "-c", _SQLITE_RUN.format(root=str(ROOT), path=str(db), phrases=texts)],
                     args.runs)
        i_run = wall([sys.executable, "-c", _INVERTED_RUN.format(
            root=str(ROOT), bench=str(ROOT / "bench"), path=str(mar), phrases=texts)], args.runs)
        one = ["collective communication library"]
        f_one = wall([sys.executable, "-c", _SQLITE_RUN.format(root=str(ROOT), path=str(db), phrases=one)],
                     args.runs)
        i_one = wall([sys.executable, "-c", _INVERTED_RUN.format(
            root=str(ROOT), bench=str(ROOT / "bench"), path=str(mar), phrases=one)], args.runs)
        print(f"floor python -c pass: {floor * 1000:.1f} ms")
        for name, build, size, every, single in (
                ("FTS5", fts_build, db.stat().st_size, f_run, f_one),
                ("inverted", inv_build, mar.stat().st_size, i_run, i_one)):
            print(f"{name:<9} build {build:5.2f} s  size {size / 1e6:5.2f} MB  new process + 1 search "
                  f"{single * 1000:6.1f} ms ({single / floor:.2f}x floor);  + {len(texts)} searches "
                  f"{every * 1000:6.1f} ms ({every / floor:.2f}x floor)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

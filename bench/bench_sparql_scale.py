"""SPARQL at scale: the bundled data plus N synthetic concepts (bench/gen_atlas.py), against
`python -c pass` measured in the same run. Not a test; run by hand (after `pip install -e .`):

    python bench/bench_sparql_scale.py [--sizes 10000 30000] [--runs 11]

For each size, in a fresh cache: the first query (which compiles the index and builds the on-disk
store), a warm `SELECT ... LIMIT 10` and `ASK { ?s ?p ?o }` (medians of interleaved runs, as ratios of
the floor), the first SPARQL query after editing one concept file (wall time, and the part spent
updating the store, measured in-process), and the store's size beside the data's.
Targets (issue 27): warm SELECT <= 10x the floor, ASK answers, first query after an edit < 2 s.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _timing import atlas_exe, interleaved  # noqa: E402

SELECT = "SELECT ?c ?l WHERE { ?c a skos:Concept ; skos:prefLabel ?l } LIMIT 10"
ASK = "ASK { ?s ?p ?o }"


def _run(cmd: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, env=env)
    return time.perf_counter() - start, r


def _rename(data: Path, i: int) -> Path:
    from gen_atlas import concept_file

    path = concept_file(data, 0)
    text = path.read_text(encoding="utf-8")
    old = text.split("HCCS copy ", 1)[1].split("\n", 1)[0]
    path.write_text(text.replace(f"HCCS copy {old}", f"HCCS copy c000000 renamed {i}", 1), encoding="utf-8")
    return path


def _store_update_seconds(data: Path, i: int) -> float:
    """After one more edit: the index is brought up to date first (not timed), then the store."""
    from atlas import commands
    from atlas.linked import triplestore as sparqlstore
    from atlas.index.compiled import load_keyed

    _rename(data, i)
    load, key = load_keyed(data, lazy=True)
    source = sparqlstore.Source(load, data.resolve(), key)
    source.atlas()  # the records, as the index has them (not timed: the index's own cost)
    start = time.perf_counter()
    version = sparqlstore.open_version(data.resolve(), key, lambda: source)
    elapsed = time.perf_counter() - start
    version.close()
    del commands
    return elapsed


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(n: int, runs: int) -> dict:
    from gen_atlas import generate

    out: dict = {"concepts": n}
    with tempfile.TemporaryDirectory(prefix=f"atlas-sparql-{n}-") as tmp:
        data = generate(n, Path(tmp)) if n else HERE.parent / "data"
        cache = Path(tmp) / "cache"
        env = {**os.environ, "ATLAS_DATA": str(data), "ATLAS_CACHE": str(cache)}
        os.environ.update({"ATLAS_DATA": str(data), "ATLAS_CACHE": str(cache)})
        exe = atlas_exe()
        first, r = _run(exe + ["query", "--sparql", ASK], env)
        out["first"] = first
        out["ask"] = r.stdout.decode().strip()
        assert r.returncode == 0, r.stderr.decode()
        select = exe + ["query", "--sparql", SELECT]
        ask = exe + ["query", "--sparql", ASK]
        t = interleaved({"floor": [sys.executable, "-c", "pass"], "select": select, "ask": ask}, runs=runs, env=env)
        out.update(floor=t["floor"], select=t["select"], ask_time=t["ask"])
        if n:
            _rename(data, 1)
            out["after_edit"], r = _run(select, env)
            assert r.returncode == 0, r.stderr.decode()
            out["store_update"] = _store_update_seconds(data, 2)
        stores = list(cache.glob("sparql-*"))
        out["store_mb"] = sum(_size(s) for s in stores) / 1e6
        out["data_mb"] = sum(p.stat().st_size for p in data.rglob("*.yaml")) / 1e6
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[0, 10_000, 30_000],
                    help="synthetic concepts added to the bundled data (0: the bundled atlas alone)")
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args(argv)
    for n in args.sizes:
        m = measure(n, args.runs)
        floor = m["floor"]
        print(f"{147 + n:,} concepts ({m['data_mb']:.1f} MB of YAML):")
        print(f"  first query (index + store built): {m['first']:.1f} s")
        print(f"  floor python -c pass: {floor * 1000:.1f} ms")
        print(f"  warm SELECT ... LIMIT 10: {m['select'] * 1000:.0f} ms = {m['select'] / floor:.1f}x "
              f"({'OK' if m['select'] <= 10 * floor else 'OVER'} <= 10x)")
        print(f"  warm ASK {{ ?s ?p ?o }}: {m['ask']} in {m['ask_time'] * 1000:.0f} ms = {m['ask_time'] / floor:.1f}x")
        if n:
            print(f"  first SPARQL query after editing one file: {m['after_edit']:.2f} s "
                  f"({'OK' if m['after_edit'] < 2 else 'OVER'} < 2 s); of which the store update "
                  f"{m['store_update'] * 1000:.0f} ms")
        print(f"  store on disk: {m['store_mb']:.1f} MB ({m['store_mb'] / m['data_mb']:.2f}x the YAML)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Costs that do not grow with the atlas: the bundled atlas plus N synthetic concepts
(bench/gen_atlas.py: renamed copies of hccs.yaml with their evidence and relations), each figure
against `python -c pass` measured in the same run (medians of interleaved runs):

- the first build of the compiled index (cold), and its size against the data's;
- `atlas query hccs` (a card) and `atlas query who rings the doorbell` (ranked search), warm;
- the first `atlas query` after editing one data file (median of several edits, each to another
  copy, then a card shown by that copy and the card of that copy);
- `atlas query --sparql` SELECT ... LIMIT 10 and ASK { ?s ?p ?o }, warm, and the first SPARQL
  query after editing one file (the index and the store's named graphs updated);
- `atlas validate --no-shacl`: the first run (after the first query built the index), warm, and
  after editing one file;
- the cache folder's size against the data's (after the edits: every kept version counts).

Targets (issue 27): card <= 3x, ranked search <= 4x, SELECT <= 10x, ASK answers, first query
after one edit < 2 s, cache < 3x the data's size. Not a test; run by hand, with the Python of a
regular install (`pip install .` into a fresh virtual environment; an editable install's floor is
heavier, see _timing.install_kind):

    /path/to/venv/bin/python bench/bench_scale.py 0 10000 30000     # 0: the bundled atlas as it is
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import atlas_exe, install_kind, interleaved
from gen_atlas import DATA, concept_file, generate, size_of

RUNS = 11
EDITS = 3
SELECT = "SELECT ?c ?l WHERE { ?c a skos:Concept ; skos:prefLabel ?l } LIMIT 10"
ASK = "ASK { ?s ?p ?o }"


def _run(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
    return took


def _folder_size(folder: Path) -> int:
    """Bytes of the files under `folder`, a file with several hard links once (a SPARQL store version
    shares its unchanged table files with the previous one)."""
    seen = {}
    for p in folder.rglob("*"):
        if p.is_file():
            st = p.stat()
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


def _edit(path: Path, i: int) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("HCCS is Huawei", f"HCCS (edit {i}) is Huawei", 1), encoding="utf-8")


def measure(n: int, work: Path) -> dict:
    data = generate(n, work) if n else DATA
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, ATLAS_CACHE=str(cache))
    env.pop("ATLAS_DATA", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed atlas has its bytecode; compiling each run is not its cost
    exe = atlas_exe()
    data_args = ["--data", str(data)]
    out = {"n": n, "data_mb": size_of(data) / 1e6}
    out["build_s"] = _run(exe + ["query", "hccs", *data_args], env)
    _run(exe + ["query", "who", "rings", "the", "doorbell", *data_args], env)
    out["validate_first_s"] = _run(exe + ["validate", "--no-shacl", *data_args], env)
    out["sparql_build_s"] = _run(exe + ["query", "--sparql", SELECT, *data_args], env)
    out["cache_mb"] = _folder_size(cache) / 1e6
    times = _warm(exe, data_args, env)
    ask = subprocess.run(exe + ["query", "--sparql", ASK, "--results", "json", *data_args], env=env,
                         capture_output=True, text=True)
    out["ask_answer"] = ask.stdout.strip()[-60:]
    out.update({k: v for k, v in times.items()})
    out["validate_s"] = statistics.median(_run(exe + ["validate", "--no-shacl", *data_args], env) for _ in range(3))
    if n:
        out.update(_after_edits(n, data, data_args, exe, env))
    out["cache_mb"] = _folder_size(cache) / 1e6
    return out


def _warm(exe: list[str], data_args: list[str], env: dict) -> dict:
    """The warm card, search, SELECT and ASK, interleaved with the floor: median seconds each."""
    return interleaved({
        "floor": [sys.executable, "-c", "pass"],
        "card": exe + ["query", "hccs", *data_args],
        "search": exe + ["query", "who", "rings", "the", "doorbell", *data_args],
        "select": exe + ["query", "--sparql", SELECT, *data_args],
        "ask": exe + ["query", "--sparql", ASK, *data_args],
    }, runs=RUNS, env=env)


def _after_edits(n: int, data: Path, data_args: list[str], exe: list[str], env: dict) -> dict:
    """The first query after editing one file: the card of the edited copy, and the card of hccs
    (untouched); then validate after one more edit."""
    first, other, sparql = [], [], []
    for i in range(EDITS):
        copy = concept_file(data, (i * 7919) % n)
        _edit(copy, i)
        first.append(_run(exe + ["query", copy.stem, *data_args], env))
        other.append(_run(exe + ["query", "hccs", *data_args], env))
        _edit(concept_file(data, (i * 7919 + 13) % n), 50 + i)
        sparql.append(_run(exe + ["query", "--sparql", SELECT, *data_args], env))
    _edit(concept_file(data, 1), 99)
    validate_edit = _run(exe + ["validate", "--no-shacl", *data_args], env)
    return {"edit_s": statistics.median(first), "edit_max_s": max(first),
            "after_edit_other_s": statistics.median(other), "validate_edit_s": validate_edit,
            "sparql_edit_s": statistics.median(sparql), "sparql_edit_max_s": max(sparql)}


def row(m: dict) -> str:
    floor = m["floor"]
    size = f"{m['cache_mb']:.0f} MB for {m['data_mb']:.0f} MB of YAML: **{m['cache_mb'] / m['data_mb']:.1f}x**"
    edit = (f"{m['edit_s']:.2f} s (worst {m['edit_max_s']:.2f} s)" if "edit_s" in m else "-")
    sedit = (f"{m['sparql_edit_s']:.2f} s (worst {m['sparql_edit_max_s']:.2f} s)" if "sparql_edit_s" in m else "-")
    vedit = f"{m['validate_edit_s']:.1f} s" if "validate_edit_s" in m else "-"
    return (f"| {m['n'] + 147 if m['n'] else 147:,} concepts | "
            f"built in {m['build_s']:.1f} s, store {m['sparql_build_s']:.1f} s | "
            f"{m['card'] * 1000:.0f} ms: **{m['card'] / floor:.1f}x** | "
            f"{m['search'] * 1000:.0f} ms: **{m['search'] / floor:.1f}x** | "
            f"{m['select'] * 1000:.0f} ms: **{m['select'] / floor:.1f}x** | "
            f"{m['ask'] * 1000:.0f} ms: **{m['ask'] / floor:.1f}x** | {edit} | {sedit} | {size} | "
            f"{m['validate_first_s']:.1f} s / {m['validate_s']:.1f} s / {vedit} | {floor * 1000:.0f} ms |")


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [0, 10_000]
    kind = install_kind()
    print(f"atlas: {' '.join(atlas_exe())} ({kind} install); floor: {sys.executable} -c pass")
    if kind == "editable":
        print("note: an editable install's floor is heavier than a user's: run from `pip install .` to quote figures")
    print("| atlas | first build | card, warm | ranked search, warm | SELECT LIMIT 10, warm | ASK, warm "
          "| first card after one edit | first SPARQL after one edit | cache size (after the edits) "
          "| validate --no-shacl, first / warm / after one edit | floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="atlas-scale-") as tmp:
            m = measure(n, Path(tmp))
            print(row(m), flush=True)
            print(f"    {m}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

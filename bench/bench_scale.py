"""Costs that do not grow with the atlas: the bundled atlas plus N synthetic concepts
(bench/gen_atlas.py: renamed copies of hccs.yaml with their evidence and relations), each figure
against `python -c pass` measured in the same run (medians of interleaved runs):

- the first build of the compiled index (cold), and its size against the data's;
- `atlas query hccs` (a card) and `atlas query who rings the doorbell` (ranked search), warm;
- the first `atlas query` after editing one data file (median of several edits, each to another
  copy, then a card shown by that copy and the card of that copy);
- `atlas validate --no-shacl`, warm and after editing one file.

Targets (issue 27): card <= 3x, ranked search <= 4x, first query after one edit < 2 s, cache
< 3x the data's size. Not a test; run by hand:

    python bench/bench_scale.py 0 10000 30000     # 0: the bundled atlas as it is
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

from _timing import atlas_exe, interleaved
from gen_atlas import DATA, concept_file, generate, size_of

RUNS = 11
EDITS = 5


def _run(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
    return took


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _edit(path: Path, i: int) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("HCCS is Huawei", f"HCCS (edit {i}) is Huawei", 1), encoding="utf-8")


def measure(n: int, work: Path) -> dict:
    data = generate(n, work) if n else DATA
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, ATLAS_CACHE=str(cache))
    env.pop("ATLAS_DATA", None)
    exe = atlas_exe()
    data_args = ["--data", str(data)]
    out = {"n": n, "data_mb": size_of(data) / 1e6}
    out["build_s"] = _run(exe + ["query", "hccs", *data_args], env)
    _run(exe + ["query", "who", "rings", "the", "doorbell", *data_args], env)
    _run(exe + ["validate", "--no-shacl", *data_args], env)
    out["cache_mb"] = _folder_size(cache) / 1e6
    times = interleaved({
        "floor": [sys.executable, "-c", "pass"],
        "card": exe + ["query", "hccs", *data_args],
        "search": exe + ["query", "who", "rings", "the", "doorbell", *data_args],
    }, runs=RUNS, env=env)
    out.update({k: v for k, v in times.items()})
    out["validate_s"] = statistics.median(_run(exe + ["validate", "--no-shacl", *data_args], env) for _ in range(3))
    if n:
        out.update(_after_edits(n, data, data_args, exe, env))
    out["cache_after_mb"] = _folder_size(cache) / 1e6
    return out


def _after_edits(n: int, data: Path, data_args: list[str], exe: list[str], env: dict) -> dict:
    """The first query after editing one file: the card of the edited copy, and the card of hccs
    (untouched); then validate after one more edit."""
    first, other = [], []
    for i in range(EDITS):
        copy = concept_file(data, (i * 7919) % n)
        _edit(copy, i)
        first.append(_run(exe + ["query", copy.stem, *data_args], env))
        other.append(_run(exe + ["query", "hccs", *data_args], env))
    _edit(concept_file(data, 1), 99)
    validate_edit = _run(exe + ["validate", "--no-shacl", *data_args], env)
    return {"edit_s": statistics.median(first), "edit_max_s": max(first),
            "after_edit_other_s": statistics.median(other), "validate_edit_s": validate_edit}


def row(m: dict) -> str:
    floor = m["floor"]
    size = f"{m['cache_mb']:.0f} MB for {m['data_mb']:.0f} MB of YAML: **{m['cache_mb'] / m['data_mb']:.1f}x**"
    edit = (f"{m['edit_s']:.2f} s (worst {m['edit_max_s']:.2f} s)" if "edit_s" in m else "-")
    vedit = f"{m['validate_edit_s']:.1f} s" if "validate_edit_s" in m else "-"
    return (f"| {m['n'] + 147 if m['n'] else 147:,} concepts | built in {m['build_s']:.1f} s | "
            f"{m['card'] * 1000:.0f} ms: **{m['card'] / floor:.1f}x** | "
            f"{m['search'] * 1000:.0f} ms: **{m['search'] / floor:.1f}x** | {edit} | {size} | "
            f"{m['validate_s']:.1f} s / {vedit} | {floor * 1000:.0f} ms |")


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [0, 10_000]
    print("| atlas | first build | card, warm | ranked search, warm | first query after one edit | cache size "
          "| validate --no-shacl, warm / after one edit | floor |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="atlas-scale-") as tmp:
            m = measure(n, Path(tmp))
            print(row(m), flush=True)
            print(f"    {m}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

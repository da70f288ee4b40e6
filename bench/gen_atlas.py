"""A synthetic atlas of N extra concepts, as YAML files: the bundled data/ copied, plus N renamed
copies of data/concepts/links/hccs.yaml with its evidence, relations and probes (about 7.5 KB of
YAML each, so 10,000 copies are about 75 MB). The copies' relations keep their targets, so the
concepts they point at (pcie, roce, nvlink, ...) gain thousands of inverse relations, as a grown
atlas would. Not a test; used by bench/bench_scale.py and by hand:

    python bench/gen_atlas.py 10000 /tmp/atlas-10k      # writes /tmp/atlas-10k/data
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
TEMPLATE = DATA / "concepts" / "links" / "hccs.yaml"
PER_FOLDER = 100
MARK = "SYNTHETICMARK"


def template() -> str:
    """hccs.yaml with its id, names and aliases replaced by ones carrying MARK (renamed per copy)."""
    doc = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    doc["id"] = f"hccs-{MARK}"
    doc["names"] = {"en": f"HCCS copy {MARK}", "zh": f"HCCS 副本 {MARK}"}
    doc["aliases"] = {"en": [f"{a} {MARK}" for a in doc["aliases"]["en"]],
                      "zh": [f"{a} {MARK}" for a in doc["aliases"]["zh"]]}
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=10_000)


def concept_file(root: Path, i: int) -> Path:
    """Where copy number `i` lives (100 files per folder)."""
    return root / "concepts" / "synthetic" / f"s{i // PER_FOLDER:04d}" / f"hccs-c{i:06d}.yaml"


def generate(n: int, out: Path) -> Path:
    """Write data/ plus `n` copies under `out`/data; return that folder."""
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns(".*"))
    text = template()
    for i in range(n):
        path = concept_file(data, i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace(MARK, f"c{i:06d}"), encoding="utf-8")
    return data


def size_of(folder: Path) -> int:
    """Bytes of the YAML files under `folder`."""
    return sum(p.stat().st_size for p in folder.rglob("*.yaml"))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="number of synthetic concepts")
    ap.add_argument("out", type=Path, help="folder to write data/ into")
    args = ap.parse_args(argv)
    data = generate(args.n, args.out)
    print(f"{data}: {args.n} synthetic concepts, {size_of(data) / 1e6:.1f} MB of YAML")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

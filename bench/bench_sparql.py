"""A simple SELECT through `atlas query --sparql` against `python -c pass`, in one run (the bundled
atlas; bench/bench_sparql_scale.py measures generated atlases of 10,000 and 30,000 concepts).

Target: ratio <= 10 on the bundled atlas. Run: python bench/bench_sparql.py
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _timing import atlas_exe, interleaved

QUERY = "SELECT ?c ?l WHERE { ?c a atlas:Link ; skos:prefLabel ?l FILTER(lang(?l) = 'en') } ORDER BY ?c"


def main():
    exe = atlas_exe()
    cmd = exe + ["query", "--sparql", QUERY]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # warm the index and the N-Triples cache
    r = interleaved({"floor": [sys.executable, "-c", "pass"], "sparql": cmd}, runs=21)
    ratio = r["sparql"] / r["floor"]
    print(f"floor python -c pass: {r['floor'] * 1000:.1f} ms")
    print(f"atlas query --sparql (simple SELECT, embedded pyoxigraph): {r['sparql'] * 1000:.1f} ms")
    print(f"ratio {ratio:.2f}x (target <= 10x): {'OK' if ratio <= 10 else 'OVER'}")
    # the rdflib route, for the README's comparison
    code = ("import rdflib,sys; g=rdflib.Graph(); g.parse(sys.argv[1], format='nt'); "
            "list(g.query(sys.argv[2]))")
    import tempfile

    from atlas.index.compiled import load_atlas
    from atlas.paths import data_dir
    from atlas.linked.rdf import build_graph, serialize
    from atlas.linked.sparql import with_prefixes
    nt = Path(tempfile.mkdtemp()) / "atlas.nt"
    nt.write_text(serialize(build_graph(load_atlas(), data_dir(None) / "ontology.ttl"), "nt"), encoding="utf-8")
    q, _ = with_prefixes(QUERY)
    rr = interleaved({"rdflib": [sys.executable, "-c", code, str(nt), q]}, runs=7)
    print(f"same query through rdflib's store (parse N-Triples + query): {rr['rdflib'] * 1000:.1f} ms "
          f"= {rr['rdflib'] / r['floor']:.1f}x")


if __name__ == "__main__":
    main()

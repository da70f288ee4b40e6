"""The persistent SPARQL store: one named graph per data file with the default graph their union (the
export), updates that replace only the changed files' graphs and agree with a full build (a hypothesis
oracle over random edit sequences), readers that see the old version or the new one, damage that is a
cache miss, eviction that spares what a reader holds. Real files, real processes, real RocksDB stores."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from atlas import commands
from atlas.linked import triplestore as sparqlstore
from atlas.linked.rdf import build_graph, serialize
from atlas.index.compiled import load_atlas
from conftest import MINI
from test_incremental import api_text

QUERY_COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def atlas(*args, data=None, timeout=120, env=None):
    cmd = [sys.executable, "-m", "atlas", *args] + (["--data", str(data)] if data else [])
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})})


def dump(data: Path) -> set[str]:
    """Every quad of the data's current store, as N-Quads lines."""
    with commands.sparql_store(data) as version:
        store = ox.Store.read_only(str(version.path))
        return {f"{q} ." for q in store.quads_for_pattern(None, None, None, None)}


def triples_and_graphs(data: Path) -> dict[str, str]:
    """The store as triple -> the file whose graph holds it, checking that each triple is held once,
    by a file that states it (the records' own triples, `rdf.graphs_by_file`), and that the triples
    are exactly the export."""
    from rdflib import Graph

    from atlas.linked.rdf import graphs_by_file

    held: dict[str, str] = {}
    for line in dump(data):
        triple, graph = line[:-2].rsplit(" <", 1)
        assert triple not in held, f"{triple} is in two graphs"
        held[triple] = unquote(graph.rstrip(">")[len(sparqlstore.GRAPHS):])  # (a graph's name is an IRI)
    onto = Graph().parse(data / "ontology.ttl")
    stating: dict[str, set] = {}
    for key, items in graphs_by_file(load_atlas(data), onto).items():
        for s, p, o in items:
            stating.setdefault(f"{s.n3()} {p.n3()} {o.n3()}", set()).add(key)
    exported = {ln[:-2] for ln in serialize(build_graph(load_atlas(data), data / "ontology.ttl"), "nt").splitlines()
                if ln}
    assert set(held) == exported
    wrong = {t: g for t, g in held.items() if t in stating and g not in stating[t]}
    assert not wrong, list(wrong.items())[:3]
    return held


def full_build(data: Path, monkeypatch, tmp_path: Path) -> set[str]:
    """The same data's store built from nothing, in a cache of its own: its triples."""
    fresh = tmp_path / f"fresh-{os.urandom(4).hex()}"
    with monkeypatch.context() as m:
        m.setenv("ATLAS_CACHE", str(fresh))
        return set(triples_and_graphs(data))


def test_each_triple_is_in_the_graph_of_a_file_that_states_it_and_their_union_is_the_export(mini):
    held = triples_and_graphs(mini)
    graphs = set(held.values())
    files = {str(p.relative_to(mini)) for p in mini.rglob("*.yaml")} - {"atlas.yaml"}
    assert files | {"ontology.ttl", "#scheme"} == graphs
    r = atlas("query", "--sparql", QUERY_COUNT, "--results", "json", data=mini)
    assert int(json.loads(r.stdout)["results"]["bindings"][0]["n"]["value"]) == len(held)
    r = atlas("query", "--sparql", "SELECT DISTINCT ?g WHERE { GRAPH ?g { concept:lib-c skos:prefLabel ?l } }",
              "--results", "json", data=mini)
    rows = json.loads(r.stdout)["results"]["bindings"]
    assert [b["g"]["value"] for b in rows] == [sparqlstore.GRAPHS + "concepts/x/lib-c.yaml"]


# --------------------------------------------------------------------------------------------------
# Updates proportional to the change, checked against a full build
# --------------------------------------------------------------------------------------------------

def _set_name(data: Path, rel: str, name: str) -> None:
    path = data / rel
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = [f"names: {{en: {name}, zh: {name} 中文}}" if ln.startswith("names:") else ln for ln in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit(data: Path, edit: tuple) -> None:
    kind, arg = edit
    if kind == "rename":
        _set_name(data, "concepts/x/" + ("lib-c.yaml", "bus-x.yaml", "net-y.yaml")[arg % 3], f"Renamed {arg}")
    elif kind == "add":
        new = data / "concepts" / "x" / f"extra-{arg}.yaml"
        text = (data / "concepts/x/lib-n.yaml").read_text(encoding="utf-8").replace("id: lib-n", f"id: extra-{arg}")
        new.write_text(text, encoding="utf-8")
        _set_name(data, f"concepts/x/extra-{arg}.yaml", f"Extra {arg}")
    elif kind == "remove":
        for p in (data / "concepts" / "x").glob("extra-*.yaml"):
            p.unlink()
    elif kind == "repo-url":  # every evidence IRI of that repository changes: a full rebuild
        path = data / "repositories" / "repos.yaml"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("https://github.com/example/hccl", f"https://example.org/hccl-{arg}", 1),
                        encoding="utf-8")
    elif kind == "claim":
        path = data / "claims" / "claims.yaml"
        path.write_text(path.read_text(encoding="utf-8") + f"\n# edit {arg}\n", encoding="utf-8")
    elif kind == "api":  # an API history: the symbols concepts name, its releases
        path = data / "api" / "example+hccl.jsonl"
        path.parent.mkdir(exist_ok=True)
        names = [["T_LIB_C", "Lib C"], ["T_LIB_C"], ["Bus X", "lib_put"], []][arg % 4]
        path.write_text(api_text("example/hccl", names, "none" if arg % 2 else "2025-05-01T00:00:00Z"),
                        encoding="utf-8")
    elif kind == "api-list":  # a concept names a symbol by its api: list
        path = data / "concepts" / "x" / "net-y.yaml"
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("api:")]
        path.write_text("\n".join(lines + (["api: [lib_put]"] if arg % 2 else [])) + "\n", encoding="utf-8")


EDITS = st.tuples(st.sampled_from(["rename", "add", "remove", "repo-url", "claim", "api", "api-list"]),
                  st.integers(0, 5))


@example([("api", 2), ("api-list", 1), ("rename", 1), ("api", 0), ("rename", 0)])  # the naming outlives edits
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(EDITS, min_size=1, max_size=4))
def test_updates_agree_with_a_full_build_after_every_edit(tmp_path, monkeypatch, edits):
    data = tmp_path / f"data-{os.urandom(4).hex()}"
    shutil.copytree(MINI, data)
    dump(data)
    for edit in edits:
        _edit(data, edit)
        assert set(triples_and_graphs(data)) == full_build(data, monkeypatch, tmp_path), edit


def test_an_edit_replaces_one_graph_and_the_store_is_copied_not_rebuilt(mini, monkeypatch):
    before = dump(mini)
    calls = []
    real = sparqlstore.Source.graphs

    def spy(self, only):
        calls.append(None if only is None else sorted(only))
        return real(self, only)

    monkeypatch.setattr(sparqlstore.Source, "graphs", spy)
    _set_name(mini, "concepts/x/lib-c.yaml", "Library C renamed")
    after = dump(mini)
    assert calls == [["#scheme", "concepts/x/lib-c.yaml"]]
    changed = {q.rsplit(" <", 1)[-1] for q in before ^ after if "/graph/" in q.rsplit(" <", 1)[-1]}
    assert changed <= {"https://ascend-atlas.invalid/graph/concepts/x/lib-c.yaml> ."}
    assert any("Library C renamed" in q for q in after)


# --------------------------------------------------------------------------------------------------
# Readers during an update; damage; eviction
# --------------------------------------------------------------------------------------------------

def test_readers_during_updates_see_the_old_version_or_the_new_never_a_mix(mini):
    """One file holds two facts (the English and the Chinese name); it is replaced whole, again and
    again, while queries run in other processes: every answer is one version's pair."""
    q = ("SELECT ?en ?zh WHERE { concept:lib-c skos:prefLabel ?en , ?zh "
         "FILTER(lang(?en) = 'en' && lang(?zh) = 'zh') }")
    answers: list = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            r = atlas("query", "--sparql", q, "--results", "json", data=mini)
            if r.returncode == 0:
                rows = json.loads(r.stdout)["results"]["bindings"]
                answers.append(tuple((b["en"]["value"], b["zh"]["value"]) for b in rows))

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for i in range(6):
            tmp = mini / "concepts/x/.lib-c.tmp"
            src = (mini / "concepts/x/lib-c.yaml").read_text(encoding="utf-8").splitlines()
            src = [f"names: {{en: Version {i}, zh: Version {i} 中文}}" if ln.startswith("names:") else ln for ln in src]
            tmp.write_text("\n".join(src) + "\n", encoding="utf-8")
            os.replace(tmp, mini / "concepts/x/lib-c.yaml")
            dump(mini)  # this process updates the store while the readers query
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    assert len(answers) >= 4
    for rows in answers:
        assert len(rows) == 1, rows
        en, zh = rows[0]
        assert zh == en + " 中文" or (en, zh) == ("Collective Library C", "集合通信库 C"), rows


def _store_files(mini: Path) -> list[Path]:
    base = sparqlstore.folder(mini.resolve())
    folder = base / sparqlstore.read_current(base)[0]["folder"]
    return sorted(folder.glob("*.sst"))


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete-folder", "current"])
def test_a_damaged_store_is_a_miss_rebuilt_without_help(mini, damage):
    good = atlas("query", "--sparql", QUERY_COUNT, "--results", "json", data=mini)
    assert good.returncode == 0
    base = sparqlstore.folder(mini.resolve())
    if damage == "flip":
        for sst in _store_files(mini):
            raw = bytearray(sst.read_bytes())
            for at in range(40, len(raw) - 100, 97):
                raw[at] ^= 0x5A
            sst.write_bytes(bytes(raw))
    elif damage == "truncate":
        for sst in _store_files(mini):
            sst.write_bytes(sst.read_bytes()[: sst.stat().st_size // 3])
    elif damage == "delete-folder":
        shutil.rmtree(base / sparqlstore.read_current(base)[0]["folder"])
    else:
        raw = bytearray((base / "current").read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        (base / "current").write_bytes(bytes(raw))
    again = atlas("query", "--sparql", QUERY_COUNT, "--results", "json", data=mini)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(good.stdout)
    assert atlas("query", "--sparql", QUERY_COUNT, "--results", "json", data=mini).stdout == again.stdout


def test_eviction_spares_a_version_a_reader_holds(mini):
    held = commands.sparql_store(mini)
    try:
        for i in range(sparqlstore.KEEP + 2):
            _set_name(mini, "concepts/x/bus-x.yaml", f"Bus {i}")
            r = atlas("query", "--sparql", "ASK { ?s ?p ?o }", data=mini)
            assert r.returncode == 0, r.stderr
        assert held.path.is_dir()  # older than KEEP versions, but open here
        assert bool(ox.Store.read_only(str(held.path)).query("ASK { ?s ?p ?o }", use_default_graph_as_union=True))
    finally:
        held.close()
    _set_name(mini, "concepts/x/bus-x.yaml", "Bus last")
    assert atlas("query", "--sparql", "ASK { ?s ?p ?o }", data=mini).returncode == 0
    assert not held.path.exists()
    base = sparqlstore.folder(mini.resolve())
    assert len([p for p in base.iterdir() if p.is_dir()]) <= sparqlstore.KEEP


def test_a_process_with_an_older_key_still_finds_its_version(mini):
    """A query that read the data before an edit answers from the version it read, not a rebuild."""
    from atlas.index.compiled import load_keyed

    load, old_key = load_keyed(mini, lazy=True)
    dump(mini)
    _set_name(mini, "concepts/x/lib-c.yaml", "Newer name")
    dump(mini)
    version = sparqlstore.open_version(mini.resolve(), old_key, lambda: pytest.fail("must not rebuild"))
    with version:
        store = ox.Store.read_only(str(version.path))
        labels = {q.object.value for q in store.quads_for_pattern(
            ox.NamedNode("https://ascend-atlas.invalid/id/concept/lib-c"),
            ox.NamedNode("http://www.w3.org/2004/02/skos/core#prefLabel"), None, None)}
    assert "Collective Library C" in labels and "Newer name" not in labels

"""The SHACL shapes stand alone: pySHACL, run by hand as any consumer would (its own command, no
reasoner), rejects what the atlas rejects. Kinds have identifiers and labels of their own. A shapes or
ontology file that cannot be used is a located error, never a traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, RDF, SH, SKOS, XSD

from atlas.index.compiled import load_atlas
from atlas.model.core import RELATION_TYPES
from atlas.linked.rdf import ATLAS, ID, build_graph, kind_iri, relation_property
from conftest import DATA, ROOT

PYSHACL = Path(sys.executable).with_name("pyshacl")


def atlas(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ), timeout=timeout)


def pyshacl(data: Path) -> tuple[int, set[tuple[str, str]]]:
    """pySHACL's own command over `data` with data/shapes.ttl: its exit code and (focus, message) pairs."""
    r = subprocess.run([str(PYSHACL), "-s", str(DATA / "shapes.ttl"), "-i", "none", "-f", "turtle", str(data)],
                       capture_output=True, text=True, timeout=300)
    report = Graph().parse(data=r.stdout, format="turtle")
    found = {(str(report.value(res, SH.focusNode)), str(report.value(res, SH.resultMessage)))
             for res in report.subjects(RDF.type, SH.ValidationResult)}
    return r.returncode, found


@pytest.fixture(scope="module")
def bundled() -> Graph:
    return build_graph(load_atlas(DATA), DATA / "ontology.ttl")


def _found_sightings(g: Graph) -> list[URIRef]:
    return sorted(s for s in g.subjects(ATLAS.found, Literal(True)) if (s, ATLAS.commit, None) in g)


def test_pyshacl_reports_each_of_five_planted_breaks(bundled, tmp_path):
    """A relation to a claim, a found sighting without its commit, one without its repository, a day
    that is not of the calendar, a day after the cut-off: each is reported, in its own words (the
    badly typed day is not also called "after the cut-off")."""
    clean = tmp_path / "clean.nt"
    clean.write_text(bundled.serialize(format="nt"), encoding="utf-8")
    code, found = pyshacl(clean)
    assert code == 0 and not found, sorted(found)[:5]

    g = Graph()
    for t in bundled:
        g.add(t)
    claim = next(g.subjects(RDF.type, ATLAS.Claim))
    hccs = ID["concept/hccs"]
    g.add((hccs, ATLAS.uses, claim))
    no_commit, no_repo, bad_day, late_day = _found_sightings(g)[:4]
    g.remove((no_commit, ATLAS.commit, None))
    g.remove((no_repo, ATLAS.repository, None))
    g.set((bad_day, DCTERMS.date, Literal("2025-02-30", datatype=XSD.date)))
    g.set((late_day, DCTERMS.date, Literal("2026-09-01", datatype=XSD.date)))
    broken = tmp_path / "broken.nt"
    broken.write_text(g.serialize(format="nt"), encoding="utf-8")
    code, found = pyshacl(broken)
    assert code == 1
    by_focus = defaultdict(list)
    for focus, message in found:
        by_focus[focus].append(message)
    assert by_focus[str(hccs)] == ["the target of uses must be a concept of the atlas (not a claim, a flow or a "
                                   "literal)"], by_focus[str(hccs)]
    assert by_focus[str(no_commit)] == ["a found sighting needs its commit (atlas:commit)"]
    assert by_focus[str(no_repo)] == ["a sighting is of one listed repository"]
    assert by_focus[str(bad_day)] == ["a sighting date must be one valid xsd:date: a day of the calendar "
                                      "(YYYY-MM-DD)"]
    assert sorted(by_focus[str(late_day)]) == [
        "a sighting date (the UTC day of its committer date) must not be after its own cut-off",
        "a sighting date (the UTC day of its committer date) must not be after the research cut-off 2026-08-26"]
    assert set(by_focus) == {str(hccs), str(no_commit), str(no_repo), str(bad_day), str(late_day)}, by_focus


def test_the_shapes_cover_every_relation_property():
    shapes = Graph().parse(DATA / "shapes.ttl")
    relation = URIRef("https://ascend-atlas.invalid/shapes#Relation")
    targets = set(shapes.objects(relation, SH.targetSubjectsOf))
    paths = {shapes.value(p, SH.path) for p in shapes.objects(relation, SH.property)}
    wanted = {relation_property(t) for pair in RELATION_TYPES.items() for t in pair} | {SKOS.related}
    assert targets == wanted and paths == wanted
    for p in shapes.objects(relation, SH.property):
        assert shapes.value(p, SH["class"]) == SKOS.Concept and shapes.value(p, SH.message)


# --------------------------------------------------------------------------------------------------
# Kinds are told apart from the concepts of the same name
# --------------------------------------------------------------------------------------------------

def test_dcterms_identifier_is_unique_across_the_graph(bundled):
    owners = defaultdict(set)
    for s, o in bundled.subject_objects(DCTERMS.identifier):
        owners[str(o)].add(s)
    assert not {k: v for k, v in owners.items() if len(v) > 1}
    assert str(bundled.value(kind_iri("build-flag"), DCTERMS.identifier)) == "kind:build-flag"
    assert str(bundled.value(ID["concept/build-flag"], DCTERMS.identifier)) == "build-flag"


def test_no_two_concepts_share_a_preferred_label_in_a_language(bundled):
    owners = defaultdict(set)
    for s in bundled.subjects(RDF.type, SKOS.Concept):
        for label in bundled.objects(s, SKOS.prefLabel):
            owners[(str(label), label.language)].add(s)
    assert not {k: v for k, v in owners.items() if len(v) > 1}


def test_kinds_have_labels_of_their_own(bundled):
    labels = {o.language: str(o) for o in bundled.objects(kind_iri("build-flag"), SKOS.prefLabel)}
    assert labels == {"en": "Build flag (kind)", "zh": "编译开关（类别）"}
    assert {o.language: str(o) for o in bundled.objects(kind_iri("api"), SKOS.prefLabel)} == {
        "en": "API (kind)", "zh": "接口（类别）"}


def test_a_record_id_used_twice_across_kinds_of_record_is_an_error(mini):
    claims = mini / "claims" / "claims.yaml"
    claims.write_text(claims.read_text(encoding="utf-8").replace("id: lib-s-fast", "id: lib-s"), encoding="utf-8")
    r = atlas("validate", "--no-shacl", "--data", str(mini), "--format", "json")
    found = [p for p in json.loads(r.stdout)["problems"] if p["code"] == "duplicate-identifier"]
    assert r.returncode == 1 and len(found) == 1 and found[0]["file"].endswith("claims/claims.yaml"), found
    assert 'claim id "lib-s" is also the id of a concept' in found[0]["message"]


# --------------------------------------------------------------------------------------------------
# An ontology or shapes file that cannot be used is a located error
# --------------------------------------------------------------------------------------------------

BROKEN = [
    ("syntax", lambda f: f.write_text(f.read_text(encoding="utf-8") + "\n@prefix x: <a:> .\nx:a x:b .\n",
                                      encoding="utf-8"), "not valid Turtle"),
    ("encoding", lambda f: f.write_bytes(f.read_bytes() + b"\n# \xff\xfe\n"), "not valid UTF-8"),
    ("folder", lambda f: (f.unlink(), f.mkdir()), "not a regular file"),
]


def _line_of(f: Path, text: str) -> int:
    return next(i for i, t in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                if text in t)


@pytest.mark.parametrize("name", ["ontology.ttl", "shapes.ttl"])
@pytest.mark.parametrize("how, break_it, words", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_turtle_file_is_a_located_error(mini, name, how, break_it, words):
    f = mini / name
    break_it(f)
    where = f"{f}:{_line_of(f, 'x:a x:b')}:" if how == "syntax" else (
        f"{f}:{len(f.read_bytes().splitlines())}:" if how == "encoding" else str(f))
    commands = [["validate"]]
    if name == "ontology.ttl":
        commands += [["query", "--sparql", "ASK { ?s ?p ?o }"], ["export", "--format", "nt"]]
    for args in commands:
        r = atlas(*args, "--data", str(mini))
        out = r.stdout + r.stderr
        assert r.returncode == 1 and "Traceback" not in out, (args, out)
        assert where in out and words in out, (args, where, out)
    if name == "shapes.ttl":
        assert "[bad-turtle]" in atlas("validate", "--data", str(mini)).stdout


def test_validate_without_shapes_runs_the_yaml_stage_only(mini):
    (mini / "shapes.ttl").unlink()
    r = atlas("validate", "--data", str(mini))
    assert r.returncode == 0 and "0 error(s)" in r.stdout, r.stdout + r.stderr


def test_the_ontology_read_is_bounded(mini, tmp_path):
    from atlas.errors import AtlasError
    from atlas.linked.rdf import MAX_TURTLE, read_turtle

    big = tmp_path / "big.ttl"
    with open(big, "wb") as f:
        f.truncate(MAX_TURTLE + 1)
    with pytest.raises(AtlasError) as err:
        read_turtle(big)
    assert "larger than" in err.value.message and err.value.location.file == str(big)

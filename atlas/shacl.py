"""SHACL validation of the RDF export with pySHACL (shapes in data/shapes.ttl)."""
from __future__ import annotations

from pathlib import Path

from .errors import Location, Problem
from .model import Atlas


def shapes_path(data_dir: Path) -> Path:
    return data_dir / "shapes.ttl"


def validate_graph(atlas: Atlas, data_dir: Path) -> list[dict]:
    """Run the shapes; return readable violations: focus id, path, message, severity."""
    import pyshacl
    from rdflib import Graph
    from rdflib.namespace import SH

    from .rdf import ID, build_graph

    shapes = Graph().parse(shapes_path(data_dir), format="turtle")
    data = build_graph(atlas, data_dir / "ontology.ttl")
    conforms, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none",
                                           allow_warnings=True)
    out = []
    if conforms:
        return out
    for result in report.subjects(predicate=None, object=SH.ValidationResult):
        focus = str(report.value(result, SH.focusNode))
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        severity = str(report.value(result, SH.resultSeverity)).rsplit("#", 1)[-1]
        local = focus[len(str(ID)):] if focus.startswith(str(ID)) else focus
        out.append({"focus": local, "path": str(path) if path else "",
                    "message": str(message) if message else "constraint violated",
                    "severity": severity})
    out.sort(key=lambda v: (v["focus"], v["path"], v["message"]))
    return out


def shacl_problems(loaded) -> list[Problem]:
    """Violations as problems, located at the concept / claim file where possible."""
    atlas = loaded.atlas
    data_dir = Path(loaded.data_dir or "data")
    if not shapes_path(data_dir).is_file():
        return []
    problems = []
    for v in validate_graph(atlas, data_dir):
        kind, _, ident = v["focus"].partition("/")
        ident = ident.split("/")[0]
        record = {"concept": atlas.concept_by_id, "claim": atlas.claim_by_id,
                  "flow": atlas.flow_by_id}.get(kind, {}).get(ident)
        loc = record.loc if record is not None and record.loc else Location(str(shapes_path(data_dir)))
        level = "error" if v["severity"] == "Violation" else "warning"
        prop = v["path"].rsplit("#", 1)[-1].rsplit("/", 1)[-1]
        problems.append(Problem(loc, level, "shacl", f"{v['focus']}: {v['message']}"
                                + (f" (property {prop})" if prop else "")))
    return problems

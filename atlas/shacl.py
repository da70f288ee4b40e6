"""SHACL validation of the RDF export with pySHACL (shapes in data/shapes.ttl).

Each violation is reported where its focus node comes from: the data file and line the loader
recorded for that concept, claim, flow step, repository, sighting or harvest.
"""
from __future__ import annotations

from pathlib import Path

from .errors import Location, Problem
from .model import Atlas


def shapes_path(data_dir: Path) -> Path:
    return data_dir / "shapes.ttl"


def check(data, shapes) -> list[dict]:
    """Run `shapes` (a graph) over `data` (a graph); readable results: focus IRI, path, message,
    severity, value, sorted."""
    import pyshacl
    from rdflib.namespace import SH

    conforms, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none",
                                           allow_warnings=True)
    out = []
    if conforms:
        return out
    for result in report.subjects(predicate=None, object=SH.ValidationResult):
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        value = report.value(result, SH.value)
        severity = str(report.value(result, SH.resultSeverity)).rsplit("#", 1)[-1]
        out.append({"focus": str(report.value(result, SH.focusNode)),
                    "path": str(path) if path is not None and not _blank(path) else "",
                    "message": str(message) if message else "constraint violated",
                    "severity": severity, "value": "" if value is None else str(value)})
    out.sort(key=lambda v: (v["focus"], v["path"], v["message"], v["value"]))
    return out


def _blank(node) -> bool:
    from rdflib import BNode

    return isinstance(node, BNode)


def validate_graph(atlas: Atlas, data_dir: Path) -> list[dict]:
    """Run the shapes over the atlas's export: violations with the focus as a local id
    (`concept/hccs`) and `location`, the Location of the data the focus node comes from (or None)."""
    from rdflib import Graph, URIRef

    from .rdf import ID, build_graph

    shapes = Graph().parse(shapes_path(data_dir), format="turtle")
    where: dict = {}
    data = build_graph(atlas, data_dir / "ontology.ttl", where)
    out = []
    for v in check(data, shapes):
        focus = v["focus"]
        v["location"] = where.get(URIRef(focus))
        v["focus"] = focus[len(str(ID)):] if focus.startswith(str(ID)) else focus
        out.append(v)
    return out


def shacl_problems(loaded) -> list[Problem]:
    """Violations as problems, located at the data file and line of the offending node."""
    atlas = loaded.atlas
    data_dir = Path(loaded.data_dir or "data")
    if not shapes_path(data_dir).is_file():
        return []
    problems = []
    for v in validate_graph(atlas, data_dir):
        loc = v["location"] or Location(str(shapes_path(data_dir)))
        level = "error" if v["severity"] == "Violation" else "warning"
        prop = v["path"].rsplit("#", 1)[-1].rsplit("/", 1)[-1]
        value = f" (value {v['value']})" if v["value"] and len(v["value"]) < 80 else ""
        problems.append(Problem(loc, level, "shacl", f"{v['focus']}: {v['message']}"
                                + (f" (property {prop})" if prop else "") + value))
    return problems

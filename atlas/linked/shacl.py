"""SHACL validation of the RDF export with pySHACL (shapes in data/shapes.ttl).

Each violation is reported where its focus node comes from: the data file and line the loader
recorded for that concept, claim, flow step, repository, sighting or harvest.
"""
from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from ..errors import Location, Problem
from ..model.core import Atlas


def shapes_path(data_dir: Path) -> Path:
    return data_dir / "shapes.ttl"


def check(data, shapes) -> list[dict]:
    """Run `shapes` (a graph) over `data` (a graph); readable results: focus IRI, path, message,
    severity, value, sorted."""
    import pyshacl
    from rdflib.namespace import SH

    conforms, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none",
                                           allow_warnings=True)
    out: list = []
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
    (`concept/hccs`) and `location`, the Location of the data the focus node comes from (or None).
    A shapes or ontology file that cannot be read or parsed raises AtlasError at its file and line."""
    from rdflib import URIRef

    from .rdf import ID, build_graph, read_turtle

    shapes = read_turtle(shapes_path(data_dir))
    where: dict = {}
    with _quiet_literals():
        data = build_graph(atlas, data_dir / "ontology.ttl", where)
        found = check(data, shapes)
    out = []
    for v in found:
        focus = v["focus"]
        v["location"] = where.get(URIRef(focus))
        v["focus"] = focus[len(str(ID)):] if focus.startswith(str(ID)) else focus
        out.append(v)
    return out


@contextlib.contextmanager
def _quiet_literals():
    """rdflib logs a traceback for a literal that is not of its datatype (a date of 30 February); the
    shapes report such a value as a located violation, so the log is held back meanwhile."""
    log = logging.getLogger("rdflib.term")
    was, log.disabled = log.disabled, True
    try:
        yield
    finally:
        log.disabled = was


def shacl_problems(loaded) -> list[Problem]:
    """Violations as problems, located at the data file and line of the offending node. The stage runs
    on whatever loaded, also when the YAML stage found errors (a record that did not load is not in
    the graph). A shapes or ontology file that cannot be used is one located error (`bad-turtle`)."""
    from ..errors import AtlasError

    data_dir = Path(loaded.data_dir or "data")
    shapes = shapes_path(data_dir)
    if not (shapes.exists() or shapes.is_symlink()):
        return []
    try:
        violations = validate_graph(loaded.atlas, data_dir)
    except AtlasError as exc:
        return [Problem(exc.location or Location(str(shapes)), "error", "bad-turtle", exc.message, exc.hint)]
    problems: list[Problem] = []
    for v in violations:
        problem = _problem(v, shapes)
        if problem not in problems:
            problems.append(problem)
    return problems


def _problem(v: dict, shapes: Path) -> Problem:
    loc = v["location"] or Location(str(shapes))
    level = "error" if v["severity"] == "Violation" else "warning"
    prop = v["path"].rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    value = f" (value {v['value']})" if v["value"] and len(v["value"]) < 80 else ""
    return Problem(loc, level, "shacl", f"{v['focus']}: {v['message']}" + (f" (property {prop})" if prop else "")
                   + value)

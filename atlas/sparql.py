"""Read-only SPARQL: over the embedded store (pyoxigraph, loaded from a cached N-Triples export) or
over a SPARQL 1.1 endpoint; plus loading the atlas into a server through the Graph Store Protocol.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from .errors import AtlasError, Location

UPDATE_WORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY")
TIMEOUT = 10.0

_STRIP = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""' r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"' r"|'(?:[^'\\\n]|\\.)*'"
    r"|<[^<>\"{}|^`\\\s]*>" r"|#[^\n]*", re.S)
_WORD = re.compile(r"(?<![\w:?$@-])([A-Za-z]+)(?![\w:-])")


def _prefix_block() -> str:
    from .vocab import PREFIXES

    return "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in sorted(PREFIXES.items()))


def guard(query: str, where: str = "query") -> None:
    """Refuse SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP, ...) with a clear message."""
    bare = _STRIP.sub(" ", query)
    for m in _WORD.finditer(bare):
        word = m.group(1).upper()
        if word in UPDATE_WORDS:
            line = bare[: m.start()].count("\n") + 1
            raise AtlasError(f"{word} is SPARQL Update; the atlas answers read-only queries only",
                             Location(where, line, m.start() - bare.rfind("\n", 0, m.start())),
                             "use SELECT, ASK, CONSTRUCT or DESCRIBE; change data/ and rerun instead")


def with_prefixes(query: str) -> tuple[str, int]:
    """Prepend the atlas's standard prefixes, always: a query's own PREFIX lines come later and
    win (redeclaring a prefix is legal SPARQL), and the others stay available."""
    block = _prefix_block()
    return block + query, block.count("\n")


def nt_cache(load, key: str, data_dir: Path) -> Path:
    """The cached N-Triples export for data `key` (which covers the code: rdf.py, vocab.py, ...)
    and data/ontology.ttl; `load()` gives the atlas when it must be built."""
    from . import cache

    ontology = data_dir / "ontology.ttl"
    path = cache.path("graph", f"{key}-{cache.file_crc(ontology)}", ".nt")
    if not path.is_file():
        from .rdf import build_graph, serialize

        cache.atomic_write(path, serialize(build_graph(load(), ontology), "nt"))
    return path


def _syntax_error(exc: Exception, offset: int, where: str) -> AtlasError:
    msg = str(exc).split("\n")[0]
    m = re.search(r"(\d+):(\d+)", msg)
    line, col = (max(int(m.group(1)) - offset, 1), int(m.group(2))) if m else (0, 0)
    if m:
        msg = msg[: m.start()] + f"{line}:{col}" + msg[m.end():]
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return AtlasError(f"malformed SPARQL: {msg}", Location(where, line, col),
                      "check the query's syntax (PREFIXes for atlas:, concept:, skos:, prov:, dcterms:, "
                      "doap: ... are always added for you)")


def run_embedded(query: str, nt_path: Path, where: str = "query") -> dict:
    import pyoxigraph as ox

    guard(query, where)
    full, offset = with_prefixes(query)
    store = ox.Store()
    # the file is our own rdflib export: lenient parsing (no IRI re-validation) halves the load time
    store.bulk_load(path=str(nt_path), format=ox.RdfFormat.N_TRIPLES, lenient=True)
    try:
        result = store.query(full)
    except SyntaxError as exc:
        raise _syntax_error(exc, offset, where) from None
    if isinstance(result, ox.QueryBoolean):
        return {"type": "boolean", "boolean": bool(result)}
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        rows = []
        for sol in result:
            rows.append({n: _term(sol[n]) for n in names if sol[n] is not None})
        return {"type": "bindings", "vars": names, "rows": rows}
    triples = [f"{t.subject} {t.predicate} {t.object} ." for t in result]
    return {"type": "graph", "triples": sorted(triples)}


def _term(t) -> dict:
    import pyoxigraph as ox

    if isinstance(t, ox.NamedNode):
        return {"type": "uri", "value": t.value}
    if isinstance(t, ox.BlankNode):
        return {"type": "bnode", "value": t.value}
    out = {"type": "literal", "value": t.value}
    if t.language:
        out["xml:lang"] = t.language
    elif t.datatype and t.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
        out["datatype"] = t.datatype.value
    return out


def _http(req, timeout: float):
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        body = exc.read()[:300].decode("utf-8", "replace").strip()
        raise AtlasError(f"HTTP {exc.code} {exc.reason} from {req.full_url}" + (f": {body}" if body else ""),
                         Location(req.full_url)) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise AtlasError(f"cannot reach {req.full_url}: {reason}", Location(req.full_url),
                         "is the SPARQL server running, and is the URL its query endpoint?") from None


def _check_url(url: str, where: str = "--endpoint") -> None:
    import urllib.parse

    if urllib.parse.urlparse(url).scheme not in ("http", "https"):
        raise AtlasError(f"not an http(s) URL: {url!r}", Location(where))


def run_endpoint(query: str, url: str, timeout: float = TIMEOUT, where: str = "query") -> dict:
    import urllib.request

    _check_url(url)
    guard(query, where)
    full, _ = with_prefixes(query)
    req = urllib.request.Request(url, data=full.encode("utf-8"), method="POST", headers={
        "Content-Type": "application/sparql-query; charset=utf-8",
        "Accept": "application/sparql-results+json, application/n-triples;q=0.9"})
    _, body = _http(req, timeout)
    try:
        doc = json.loads(body)
    except ValueError:
        lines = [ln for ln in body.decode("utf-8", "replace").splitlines() if ln.strip()]
        return {"type": "graph", "triples": sorted(lines)}
    if "boolean" in doc:
        return {"type": "boolean", "boolean": bool(doc["boolean"])}
    names = doc.get("head", {}).get("vars", [])
    rows = [{k: {kk: vv for kk, vv in v.items()} for k, v in b.items()}
            for b in doc.get("results", {}).get("bindings", [])]
    return {"type": "bindings", "vars": names, "rows": rows}


def load_endpoint(nt_text: str, url: str, graph: str | None = None, timeout: float = TIMEOUT) -> int:
    """PUT the atlas into a Graph Store Protocol endpoint (replacing that graph); return the status."""
    import urllib.parse
    import urllib.request

    _check_url(url, "--to-endpoint")
    sep = "&" if "?" in url else "?"
    target = url + sep + ("graph=" + urllib.parse.quote(graph, safe="") if graph else "default")
    req = urllib.request.Request(target, data=nt_text.encode("utf-8"), method="PUT",
                                 headers={"Content-Type": "application/n-triples"})
    status, _ = _http(req, timeout)
    return status


def render(result: dict, fmt: str) -> str:
    """Text for a result: `table` for people; `json` = SPARQL 1.1 Query Results JSON (SELECT, ASK)
    or compacted JSON-LD (CONSTRUCT, DESCRIBE); `csv` / `tsv` = SPARQL 1.1 CSV / TSV results."""
    if result["type"] == "boolean":
        return json.dumps({"boolean": result["boolean"]}) if fmt == "json" else str(result["boolean"]).lower()
    if result["type"] == "graph":
        if fmt == "json":
            return graph_jsonld(result["triples"])
        return "\n".join(result["triples"])
    names, rows = result["vars"], result["rows"]
    doc = {"head": {"vars": names}, "results": {"bindings": rows}}
    if fmt == "json":
        return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True)
    if fmt in ("csv", "tsv"):
        return _csv_tsv(doc, fmt)
    cells = [[_show(r.get(n)) for n in names] for r in rows]
    from .render import table

    return table(names, cells) + f"\n{len(rows)} row(s)"


def _csv_tsv(doc: dict, fmt: str) -> str:
    """SPARQL 1.1 CSV (full IRIs, bare values, CRLF) or TSV (terms in N-Triples syntax), written by
    pyoxigraph from the JSON results - the same for the embedded store and an endpoint."""
    import pyoxigraph as ox

    solutions = ox.parse_query_results(json.dumps(doc).encode("utf-8"), ox.QueryResultsFormat.JSON)
    target = ox.QueryResultsFormat.CSV if fmt == "csv" else ox.QueryResultsFormat.TSV
    return solutions.serialize(format=target).decode("utf-8")  # ends with its own line break


def graph_jsonld(triples: list[str]) -> str:
    """CONSTRUCT / DESCRIBE results (N-Triples lines) as compacted JSON-LD with the atlas's @context."""
    from rdflib import Graph

    from .rdf import jsonld

    g = Graph()
    g.parse(data="\n".join(triples) + "\n", format="nt")
    return jsonld(g).rstrip("\n")


def _show(term: dict | None) -> str:
    if not term:
        return ""
    value = term["value"]
    from .vocab import BASE

    ids = BASE + "id/"
    if term["type"] == "uri" and value.startswith(ids):
        kind, _, local = value[len(ids):].partition("/")
        return f"{kind}:{local}"
    if term.get("xml:lang"):
        return f"{value}@{term['xml:lang']}"
    return value

"""The atlas as RDF (rdflib): a SKOS concept scheme, PROV-O evidence and harvests, DCTERMS dates,
DOAP repositories, plus the project ontology in data/ontology.ttl. Every node has a stable IRI under
`BASE`; there are no blank nodes, so serialisations are deterministic.

What the ontology entails for relations is written out: each relation triple comes with its inverse
(or its mirror, for a symmetric relation) and with the SKOS triples its `rdfs:subPropertyOf` implies,
so a store without a reasoner answers from either end and a plain SKOS tool sees the links.
"""
from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from ..bounded import DATA_FILE, read_bounded
from ..errors import AtlasError, Location
from ..model.core import (
    KINDS, RELATION_TYPES, ApiSurface, ApiSymbol, Atlas, Concept, Evidence, Repository, Text, named_by, utc_day,
)
from ..model.vocab import BASE, PREFIXES, SCHEME


class Sink(Protocol):
    """Where the builders put triples: an rdflib Graph, or a list of one data file's triples."""

    def add(self, triple: Any) -> Any: ...

    def objects(self, subject: Any, predicate: Any) -> Any: ...

ATLAS = Namespace(BASE + "ontology#")
ID = Namespace(BASE + "id/")
CONCEPT = Namespace(BASE + "id/concept/")
DOAP = Namespace("http://usefulinc.com/ns/doap#")
SCHEME_IRI = URIRef(SCHEME)
SCHEME_TITLE = Text(en="Ascend communication atlas", zh="昇腾通信图谱")
SCHEME_DESCRIPTION = Text(
    en="How data moves between Huawei Ascend NPUs: libraries, APIs, protocols, hardware, links and "
       "engines, each read against six questions (who organises the communication, who establishes "
       "the addresses, who submits the tasks, who moves the data, which physical link the data takes, "
       "whether the peer participates), with evidence pinned to source lines and the commit where "
       "each first became visible.",
    zh="数据如何在华为昇腾 NPU 之间流动：库、接口、协议、硬件、链路与引擎，逐一对照六个问题"
       "（谁组织通信、谁建立地址、谁提交任务、谁搬数据、数据走哪条物理链路、对端是否参与），"
       "证据钉到源码行，并记录每个概念首次可见的提交。")

# The SKOS relation each atlas relation specialises (declared as rdfs:subPropertyOf in the ontology).
# All are associative. part-of is a partitive hierarchy, but the data also links wholes to their
# (direct or indirect) parts by uses, implements or replaces, and SKOS forbids skos:related between
# concepts joined by skos:broaderTransitive (integrity condition S27); so the SKOS hierarchy is the
# kinds (a concept is skos:broader its kind), and part-of stays associative in SKOS terms.
SKOS_OF = {rtype: SKOS.related for rtype in RELATION_TYPES}


def kind_class(kind: str) -> URIRef:
    return ATLAS["".join(part.capitalize() for part in kind.split("-"))]


def relation_property(rtype: str) -> URIRef:
    head, *rest = rtype.split("-")
    return ATLAS[head + "".join(p.capitalize() for p in rest)]


def concept_iri(ident: str) -> URIRef:
    return ID[f"concept/{ident}"]


def kind_iri(kind: str) -> URIRef:
    return ID[f"kind/{kind}"]


def inverse_property(rtype: str) -> URIRef:
    """The property read from the target's end: the inverse, or the same one when symmetric."""
    return relation_property(RELATION_TYPES[rtype])


def repo_local(ident: str) -> str:
    """owner/name -> owner.name (owners never contain dots), usable as `repo:owner.name` in SPARQL."""
    return quote(ident.replace("/", ".", 1), safe="")


def repo_iri(ident: str) -> URIRef:
    return ID[f"repo/{repo_local(ident)}"]


def source_iri(ev: Evidence, atlas: Atlas) -> URIRef:
    """A public IRI for the source: the file at the pinned commit and lines, or the URL."""
    if ev.url:
        return URIRef(ev.url)
    pin = ev.pin
    assert pin is not None  # evidence has a url or a pin
    repo = atlas.repo_by_id.get(pin.repo)
    lines = f"L{pin.start}" if pin.start == pin.end else f"L{pin.start}-L{pin.end}"
    path = quote(pin.path, safe="/")
    home = repo.urls[0].rstrip("/") if repo and repo.urls else f"https://github.com/{pin.repo}"
    return URIRef(f"{home}/blob/{pin.sha}/{path}#{lines}")


_DATETIME = re.compile(r"(-?)0*(\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def canonical_datetime(text: str) -> str:
    """The canonical lexical form of an xsd:dateTime (XSD 1.1 Part 2, 3.3.7): `Z` for a zero offset
    (`+00:00`, `-00:00`), any other offset kept, no trailing zeros in the fractional seconds, a year of at
    least four digits without extra leading zeros. RDF compares literals by lexical form, and this is the
    form SPARQL stores (Oxigraph) give back, so the export and a store's answers agree literal for
    literal. Text that is not a dateTime comes back unchanged (validate reports it)."""
    m = _DATETIME.fullmatch(text)
    if not m:
        return text
    sign, year, month, day, hour, minute, second, fraction, zone = m.groups()
    fraction = (fraction or "").rstrip("0")
    if fraction == ".":
        fraction = ""
    if zone in ("+00:00", "-00:00"):
        zone = "Z"
    return f"{sign}{year}-{month}-{day}T{hour}:{minute}:{second}{fraction}{zone or ''}"


def datetime_literal(text: str) -> Literal:
    """An xsd:dateTime literal in canonical form. `normalize=False`: rdflib would otherwise rewrite
    the lexical form from its Python value (`Z` becomes `+00:00`, `.500` becomes `.500000`)."""
    return Literal(canonical_datetime(text), datatype=XSD.dateTime, normalize=False)


def _texts(g: Sink, s, p, text: Text) -> None:
    for lang in ("en", "zh"):
        value = text.get(lang)
        if value:
            g.add((s, p, Literal(value, lang=lang)))


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:16]


def _at(where: dict | None, node, loc: Location | None) -> None:
    """Remember the data file and line a node comes from (the first one wins)."""
    if where is not None and loc is not None and node not in where:
        where[node] = loc


def _evidence(g: Sink, atlas: Atlas, subject, ev: Evidence, prop=None, where=None,
              fallback: Location | None = None) -> None:
    node = ID[f"evidence/{_digest(ev.source, ev.supports.en, ev.supports.zh, ev.symbol)}"]
    _at(where, node, ev.loc or fallback)
    g.add((subject, prop or ATLAS.evidence, node))
    g.add((node, RDF.type, PROV.Entity))
    g.add((node, PROV.hadPrimarySource, source_iri(ev, atlas)))
    g.add((node, ATLAS.confidence, Literal(ev.confidence)))
    _texts(g, node, ATLAS.supports, ev.supports)
    if ev.symbol:
        g.add((node, ATLAS.symbol, Literal(ev.symbol)))
    if ev.pin:
        g.add((node, ATLAS.pin, Literal(str(ev.pin))))
        g.add((node, ATLAS.repository, repo_iri(ev.pin.repo)))
        g.add((node, ATLAS.commit, Literal(ev.pin.sha)))
        g.add((node, ATLAS.path, Literal(ev.pin.path)))
        g.add((node, ATLAS.lineStart, Literal(ev.pin.start)))
        g.add((node, ATLAS.lineEnd, Literal(ev.pin.end)))


def _repository(g: Sink, atlas: Atlas, r: Repository, where=None) -> None:
    node = repo_iri(r.id)
    _at(where, node, r.loc)
    g.add((node, RDF.type, DOAP.Project))
    g.add((node, DOAP.name, Literal(r.id)))
    _texts(g, node, DOAP.description, r.purpose)
    g.add((node, ATLAS.status, Literal(r.status)))
    for i, url in enumerate(r.urls):
        git = ID[f"repo/{repo_local(r.id)}/git/{i}"]
        _at(where, git, r.loc)
        g.add((node, DOAP.repository, git))
        g.add((git, RDF.type, DOAP.GitRepository))
        g.add((git, DOAP.location, URIRef(url)))
    if r.mirror_of:
        g.add((node, ATLAS.mirrorOf, Literal(r.mirror_of)))
    for m in r.migrated_from:
        g.add((node, ATLAS.migratedFrom, Literal(m)))
    for hw in r.hardware:
        if hw != "any":
            g.add((node, ATLAS.hardware, concept_iri(hw)))
    for ev in r.evidence:
        _evidence(g, atlas, node, ev, where=where, fallback=r.loc)


def _stamp(iso: str) -> str:
    return "".join(ch for ch in iso if ch.isalnum())


def harvest_iri(repo: str, harvested_at: str, head: str) -> URIRef:
    """One refresh of one repository, named by the repository and the time it ended (or its head):
    `harvest:hicann.hccl-20261202T172118Z`, a prefixed name that works as typed in SPARQL."""
    return ID[f"harvest/{repo_local(repo)}-{_stamp(harvested_at) or head or 'unknown'}"]


def _harvests(g: Sink, atlas: Atlas, where=None) -> dict:
    """Each refresh of a repository as a prov:Activity; returns (repo, harvested_at) and (repo, head)
    -> activity, for linking the sightings it generated."""
    acts: dict = {}
    for h in atlas.harvests:
        node = harvest_iri(h.repo, h.harvested_at, h.head)
        _at(where, node, h.loc)
        acts.setdefault((h.repo, h.harvested_at), node)
        acts.setdefault((h.repo, "@" + h.head), node)
        g.add((node, RDF.type, PROV.Activity))
        g.add((node, RDF.type, ATLAS.Harvest))
        g.add((node, ATLAS.repository, repo_iri(h.repo)))
        if h.started_at:  # absent from harvests recorded before the start time was kept
            g.add((node, PROV.startedAtTime, datetime_literal(h.started_at)))
        if h.harvested_at:  # the harvester stamps a repository when its scan is done
            g.add((node, PROV.endedAtTime, datetime_literal(h.harvested_at)))
        if h.head:
            g.add((node, PROV.used, _revision(g, h.repo, h.head, where, h.loc)))
        if h.branch:
            g.add((node, ATLAS.branch, Literal(h.branch)))
        if h.cutoff:
            g.add((node, ATLAS.cutoff, Literal(h.cutoff, datatype=XSD.date)))
        if h.cutoff_head:
            g.add((node, ATLAS.cutoffHead, Literal(h.cutoff_head)))
        g.add((node, ATLAS.mainlineCommits, Literal(h.commits)))
        g.add((node, ATLAS.shallow, Literal(h.shallow)))
        for path in h.skipped_paths:
            g.add((node, ATLAS.skippedPath, Literal(path)))
    return acts


def _revision(g: Sink, repo: str, sha: str, where, loc) -> URIRef:
    """The repository at one commit: what a harvest read."""
    node = ID[f"repo/{repo_local(repo)}/commit/{sha}"]
    _at(where, node, loc)
    g.add((node, RDF.type, PROV.Entity))
    g.add((node, RDF.type, ATLAS.Revision))
    g.add((node, ATLAS.repository, repo_iri(repo)))
    g.add((node, ATLAS.commit, Literal(sha)))
    return node


def _scheme(g: Sink, atlas: Atlas) -> None:
    g.add((SCHEME_IRI, RDF.type, SKOS.ConceptScheme))
    _texts(g, SCHEME_IRI, DCTERMS.title, SCHEME_TITLE)
    _texts(g, SCHEME_IRI, SKOS.prefLabel, SCHEME_TITLE)
    _texts(g, SCHEME_IRI, DCTERMS.description, SCHEME_DESCRIPTION)
    # the data records no edit times; its newest timestamp is the latest harvest's
    stamps = [h.harvested_at for h in atlas.harvests if h.harvested_at]
    stamps += [s.harvested_at for s in atlas.sightings if s.harvested_at]
    if stamps:
        g.add((SCHEME_IRI, DCTERMS.modified, datetime_literal(max(stamps))))
    for kind in KINDS:
        _kind(g, kind)


# A kind's label says that it is a kind: "build-flag" is also a concept (the idea of a build flag), and
# no two concepts of one scheme may share a prefLabel in a language (SKOS S14) or an identifier.
KIND_LABEL = {"en": "{} (kind)", "zh": "{}（类别）"}


def _kind(g: Sink, kind: str) -> None:
    """The top concept of one kind: identifier `kind:<id>`, labels from the ontology's label of its class
    with "(kind)" / "（类别）" added, the class's comment as its definition."""
    node = kind_iri(kind)
    g.add((node, RDF.type, SKOS.Concept))
    g.add((node, RDF.type, ATLAS.Kind))
    g.add((node, DCTERMS.identifier, Literal(f"kind:{kind}")))
    g.add((node, SKOS.inScheme, SCHEME_IRI))
    g.add((node, SKOS.topConceptOf, SCHEME_IRI))
    g.add((SCHEME_IRI, SKOS.hasTopConcept, node))
    cls = kind_class(kind)
    labels = {str(getattr(o, "language")): str(o) for o in g.objects(cls, RDFS.label)
              if getattr(o, "language", None) in KIND_LABEL}
    labels.setdefault("en", kind)
    for lang, label in sorted(labels.items()):
        g.add((node, SKOS.prefLabel, Literal(KIND_LABEL[lang].format(label), lang=lang)))
    for o in g.objects(cls, RDFS.comment):
        g.add((node, SKOS.definition, o))
    g.add((node, RDFS.seeAlso, cls))


def build_graph(atlas: Atlas, ontology: Path | None = None, where: dict | None = None,
                api: list | None = None) -> Graph:
    """The atlas as one graph. With `where` (a dict), also record node -> data Location. `api` is
    every repository's (surface, symbols) from the API store: all symbols as resources; without it,
    the symbols concepts name (`atlas.symbols`). Releases come from the atlas either way."""
    g = Graph()
    for prefix, ns in PREFIXES.items():
        g.bind(prefix, ns)
    if ontology is not None and (ontology.exists() or ontology.is_symlink()):
        read_turtle(ontology, g)
    _scheme(g, atlas)
    for q in atlas.questions:
        _question(g, q, where)
    for c in atlas.concepts:
        _concept(g, atlas, c, where)
    for cl in atlas.claims:
        _claim(g, atlas, cl, where)
    for f in atlas.flows:
        _flow(g, atlas, f, where)
    for r in atlas.repositories:
        _repository(g, atlas, r, where)
    acts = _harvests(g, atlas, where)
    for s in atlas.sightings:
        _sighting(g, s, acts, where)
    _api(g, atlas, where, api)
    return g


# -- the public API: releases (doap:Version) and symbols --------------------------------------------


def release_iri(repo: str, name: str) -> URIRef:
    return ID[f"repo/{repo_local(repo)}/release/{quote(name, safe='')}"]


@functools.lru_cache(maxsize=1 << 16)
def symbol_iri(repo: str, kind: str, name: str) -> URIRef:
    """`id/api/<owner.name>/<kind>/<name>` (a C++ name's `::` kept as written, percent-encoded;
    kept: thousands of concepts may name one symbol)."""
    return ID[f"api/{repo_local(repo)}/{kind}/{quote(name, safe='')}"]


def _api(g: Sink, atlas: Atlas, where, api: list | None) -> None:
    """Releases, symbols (every one in `api`, else those concepts name) and the symbols each concept
    names. A found sighting's first release is written with the sighting (`_found`)."""
    for surface in atlas.surfaces:
        _releases(g, surface, where)
    pairs = api if api is not None else [(atlas.surface_by_repo.get(s.repo), [s]) for s in atlas.symbols]
    for owner, symbols in pairs:
        for sym in symbols:
            _symbol(g, atlas, owner, sym, where)
    _names_symbols(g, atlas)


def _names_symbols(g: Sink, atlas: Atlas) -> None:
    for c, named in _naming(atlas):
        _names(g, c, named)


def _names(g: Sink, c: Concept, named: list[tuple[str, str, str]]) -> None:
    for repo, kind, name in named:
        g.add((concept_iri(c.id), ATLAS.namesSymbol, symbol_iri(repo, kind, name)))


def _naming(atlas: Atlas, naming: dict[str, list[tuple[str, str, str]]] | None = None):
    """Each concept of `atlas` with the (repository, kind, name) of the symbols it names: from
    `naming` (concept id -> them) when given, else found among `atlas.symbols`."""
    if naming is not None:
        for c in atlas.concepts:
            yield c, naming.get(c.id, [])
        return
    index: dict = {}
    for sym in atlas.symbols:
        for key in {sym.name, sym.short}:
            index.setdefault(key, []).append(sym)
    for c in atlas.concepts:
        yield c, [(sym.repo, sym.kind, sym.name) for sym in named_by(c, index)]


def _api_by_file(atlas: Atlas, sink, naming: dict[str, list[tuple[str, str, str]]] | None = None) -> None:
    """The API triples by file: a repository's releases with its API history file; that a concept
    names a symbol, with the concept's file (it changes with that file, or with a history: the SPARQL
    store compares each file's naming, see `naming_digests`); the named symbols themselves, which the
    concepts and the histories decide together, with the triples derived from the whole atlas
    (SCHEME_GRAPH, rebuilt on every update: one set of triples per distinct symbol named)."""
    for surface in atlas.surfaces:
        target = sink(surface.loc)
        if target is not None:
            _releases(target, surface, None)
    for c, named in _naming(atlas, naming):
        target = sink(c.loc) if named else None
        if target is not None:
            _names(target, c, named)
    whole = sink(Location(SCHEME_GRAPH))
    if whole is not None:
        for sym in atlas.symbols:
            _symbol(whole, atlas, atlas.surface_by_repo.get(sym.repo), sym, None)


def naming_rows(atlas: Atlas):
    """(data file, concept id, repository, kind, name) of each symbol a concept of `atlas` names."""
    for c, named in sorted(_naming(atlas), key=lambda x: (data_file(x[0].loc), x[0].id)):
        for repo, kind, name in named:
            yield data_file(c.loc), c.id, repo, kind, name


def naming_digests(rows) -> dict[str, str]:
    """data file -> a digest of which symbols its concepts name, from rows (file, concept id,
    repository, kind, name) in that order; a file whose concepts name nothing is absent."""
    out: dict[str, hashlib.blake2b] = {}
    for rel, *rest in rows:
        h = out.get(rel)
        if h is None:
            h = out[rel] = hashlib.blake2b(digest_size=12)
        h.update("\t".join(rest).encode("utf-8", "surrogateescape") + b"\n")
    return {rel: h.hexdigest() for rel, h in out.items()}


def _releases(g: Sink, surface: ApiSurface, where) -> None:
    repo = repo_iri(surface.repo)
    for r in surface.releases:
        node = release_iri(surface.repo, r.name)
        _at(where, node, surface.loc)
        g.add((repo, DOAP.release, node))
        g.add((node, RDF.type, DOAP.Version))
        g.add((node, DOAP.name, Literal(r.name)))
        g.add((node, DOAP.revision, Literal(r.name)))
        g.add((node, DOAP.created, Literal(utc_day(r.date), datatype=XSD.date)))
        g.add((node, ATLAS.repository, repo))
        g.add((node, ATLAS.commit, Literal(r.commit)))
        g.add((node, ATLAS.releaseIndex, Literal(r.index)))


def _symbol(g: Sink, atlas: Atlas, surface: ApiSurface | None, sym: ApiSymbol, where) -> None:
    node = symbol_iri(sym.repo, sym.kind, sym.name)
    _at(where, node, sym.loc)
    g.add((node, RDF.type, ATLAS.ApiSymbol))
    g.add((node, RDFS.label, Literal(sym.name)))
    g.add((node, ATLAS.symbolKind, Literal(sym.kind)))
    g.add((node, ATLAS.repository, repo_iri(sym.repo)))
    if sym.signature:
        g.add((node, ATLAS.signature, Literal(sym.signature)))
    if sym.history:
        sha, date, _event, _sig, precision = sym.first
        g.add((node, ATLAS.firstCommit, Literal(sha)))
        g.add((node, ATLAS.firstDate, datetime_literal(date)))
        g.add((node, DCTERMS.date, Literal(utc_day(date), datatype=XSD.date)))
        g.add((node, ATLAS.firstPrecision, Literal(precision)))
        if sym.introduced and sym.introduced != sha:
            g.add((node, ATLAS.symbolIntroducedBy, Literal(sym.introduced)))
    if sym.first_release:
        g.add((node, ATLAS.firstRelease, release_iri(sym.repo, sym.first_release)))
    removed = sym.removed
    if removed:
        g.add((node, ATLAS.removedIn, Literal(removed[0])))
    head = surface.cutoff_head if surface is not None else ""
    home = _home(atlas, sym.repo)
    for path, line in sym.where[:1]:
        if head:
            g.add((node, ATLAS.sourceLocation, URIRef(f"{home}/blob/{head}/{quote(path, safe='/')}#L{line}")))


def _home(atlas: Atlas, repo: str) -> str:
    r = atlas.repo_by_id.get(repo)
    return r.urls[0].rstrip("/") if r and r.urls else f"https://github.com/{repo}"


MAX_TURTLE = DATA_FILE  # bytes of the ontology or the shapes; each is tens of kilobytes


def read_turtle(path: Path, into: Graph | None = None) -> Graph:
    """The Turtle file `path` (data/ontology.ttl, data/shapes.ttl) parsed into `into` (or a new graph).
    A file that is not a regular file, cannot be read, is too large, is not UTF-8 or is not Turtle
    raises AtlasError at its file (and line)."""
    import os
    import stat

    g = into if into is not None else Graph()
    where = str(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise AtlasError("not a regular file", Location(where), "data/ontology.ttl and shapes.ttl are Turtle files")
        raw = read_bounded(path, MAX_TURTLE, "Turtle file")
    except OSError as exc:
        raise AtlasError(f"cannot read: {exc.strerror or exc}", Location(where)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AtlasError("not valid UTF-8", Location(where, raw[:exc.start].count(b"\n") + 1, 1)) from None
    try:
        g.parse(data=text, format="turtle")
    except Exception as exc:  # rdflib's parser raises BadSyntax and a few plain exceptions
        raise _turtle_error(exc, where) from None
    return g


def _turtle_error(exc: Exception, where: str) -> AtlasError:
    """A Turtle syntax error at its line and column: rdflib's BadSyntax keeps the text and the offset
    where it stopped (its own line counter runs ahead on multi-line statements), and says why."""
    text, at = getattr(exc, "_str", None), getattr(exc, "_i", None)
    loc = Location(where)
    if isinstance(text, bytes) and isinstance(at, int):
        before = text.decode("utf-8", "replace")[:at]
        loc = Location(where, before.count("\n") + 1, at - before.rfind("\n"))
    why = getattr(exc, "_why", None) or str(exc).split("\n")[0]
    return AtlasError(f"not valid Turtle: {why}", loc,
                      "fix the syntax, or restore the file from the atlas's repository")


SCHEME_GRAPH = "#scheme"  # the key of the triples derived from the whole atlas (the scheme, its kinds)


class _Triples(list):
    """A list that takes triples like a Graph (`add`), and reads an ontology graph (`objects`)."""

    def __init__(self, ontology: Graph | None = None):
        super().__init__()
        self.ontology = ontology

    def add(self, triple) -> None:
        self.append(triple)

    def objects(self, s, p):
        return self.ontology.objects(s, p) if self.ontology is not None else iter(())


def data_file(loc: Location | None) -> str:
    """The data file a record was read from, relative to the data folder (`concepts/links/hccs.yaml`):
    its location without the data folder's own name; "" for a record without a location."""
    if loc is None or not loc.file:
        return ""
    return loc.file.replace("\\", "/").split("/", 1)[-1]


def graphs_by_file(atlas: Atlas, ontology: Graph | None = None, only: set[str] | None = None,
                   naming: dict[str, list[tuple[str, str, str]]] | None = None) -> dict:
    """The triples of `build_graph`, grouped by the data file whose records produce them (relative
    paths, see `data_file`): a relation's inverse and skos:related triples go with the file that states
    the relation. The ontology's triples are under "ontology.ttl", what is derived from the whole atlas
    (the scheme and its kinds) under SCHEME_GRAPH. With `only`, just those keys are built. The union
    of the values is `build_graph(atlas, ontology)`; a triple may be in more than one list. `naming`
    (concept id -> the (repository, kind, name) of each symbol it names), when given, stands for
    naming the symbols from `atlas.concepts` (an atlas holding only some of the concepts)."""
    def want(key: str) -> bool:
        return only is None or key in only

    out: dict[str, _Triples] = {}

    def sink(loc) -> _Triples | None:
        key = data_file(loc)
        return out.setdefault(key, _Triples()) if want(key) else None

    if ontology is not None and want("ontology.ttl"):
        out["ontology.ttl"] = _Triples()
        out["ontology.ttl"].extend(ontology)
    if want(SCHEME_GRAPH):
        out[SCHEME_GRAPH] = _Triples(ontology)
        _scheme(out[SCHEME_GRAPH], atlas)
    for records, emit in ((atlas.questions, lambda g, r: _question(g, r, None)),
                          (atlas.concepts, lambda g, r: _concept(g, atlas, r, None)),
                          (atlas.claims, lambda g, r: _claim(g, atlas, r, None)),
                          (atlas.flows, lambda g, r: _flow(g, atlas, r, None)),
                          (atlas.repositories, lambda g, r: _repository(g, atlas, r, None))):
        for record in records:
            target = sink(record.loc)
            if target is not None:
                emit(target, record)
    _timeline_by_file(atlas, sink)
    _api_by_file(atlas, sink, naming)
    return out


def _timeline_by_file(atlas: Atlas, sink) -> None:
    """Harvests and sightings by file; a sighting is linked to its harvest as in `build_graph`."""
    acts = _harvests(_Triples(), atlas, None)  # the activity of every harvest, wherever it is written
    for h in atlas.harvests:
        target = sink(h.loc)
        if target is not None:
            _harvests(target, Atlas(harvests=[h], cutoff=atlas.cutoff), None)
    for s in atlas.sightings:
        target = sink(s.loc)
        if target is not None:
            _sighting(target, s, acts, None)
        else:
            _sighting_activity(_Triples(), s, acts, None)  # named as in a full build, in order


def _question(g: Sink, q, where) -> None:
    node = ID[f"question/{q.id}"]
    _at(where, node, q.loc)
    g.add((node, RDF.type, ATLAS.Question))
    g.add((node, DCTERMS.identifier, Literal(q.id)))
    _texts(g, node, SKOS.prefLabel, q.names)
    _texts(g, node, SKOS.definition, q.explanation)


def _concept(g: Sink, atlas: Atlas, c, where) -> None:
    node = concept_iri(c.id)
    _at(where, node, c.loc)
    g.add((node, RDF.type, SKOS.Concept))
    g.add((node, RDF.type, kind_class(c.kind)))
    g.add((node, SKOS.inScheme, SCHEME_IRI))
    g.add((node, SKOS.broader, kind_iri(c.kind)))
    g.add((kind_iri(c.kind), SKOS.narrower, node))
    g.add((node, DCTERMS.identifier, Literal(c.id)))
    _texts(g, node, SKOS.prefLabel, c.names)
    for lang, aliases in c.aliases.items():
        for a in aliases:
            g.add((node, SKOS.altLabel, Literal(a, lang=lang)))
    _texts(g, node, SKOS.definition, c.professional)
    _texts(g, node, ATLAS.beginnerDefinition, c.beginner)
    _answers(g, c, node, where)
    for hw in c.hardware:
        if hw != "any":
            g.add((node, ATLAS.hardware, concept_iri(hw)))
    _texts(g, node, ATLAS.hardwareNote, c.hardware_note)
    g.add((node, ATLAS.lifecycle, Literal(c.lifecycle.status)))
    _texts(g, node, ATLAS.lifecycleNote, c.lifecycle.note)
    _relations(g, c)
    for ev in c.evidence:
        _evidence(g, atlas, node, ev, where=where, fallback=c.loc)
    for p in c.probes:
        g.add((node, ATLAS.probe, Literal(f"{p.repo} {p.method}:{p.value}")))


def _answers(g: Sink, c, node, where) -> None:
    for qid, answer in c.answers.items():
        q = ID[f"question/{qid}"]
        a = ID[f"concept/{c.id}/answer/{qid}"]
        _at(where, a, c.loc)
        g.add((node, ATLAS.answersQuestion, q))
        g.add((node, ATLAS.answer, a))
        g.add((a, RDF.type, ATLAS.Answer))
        g.add((a, ATLAS.question, q))
        _texts(g, a, RDFS.label, answer)


def _relations(g: Sink, c) -> None:
    """Every relation from its source, its inverse from the target, and skos:related both ways."""
    for r in c.relations:
        s, t = concept_iri(r.source), concept_iri(r.target)
        g.add((s, relation_property(r.type), t))
        g.add((t, inverse_property(r.type), s))
        g.add((s, SKOS_OF[r.type], t))
        g.add((t, SKOS_OF[r.type], s))  # skos:related is symmetric


def _claim(g: Sink, atlas: Atlas, cl, where) -> None:
    node = ID[f"claim/{cl.id}"]
    _at(where, node, cl.loc)
    g.add((node, RDF.type, ATLAS.Claim))
    g.add((node, DCTERMS.identifier, Literal(cl.id)))
    _texts(g, node, ATLAS.statement, cl.statement)
    g.add((node, ATLAS.status, Literal(cl.status)))
    _texts(g, node, RDFS.comment, cl.note)
    for ident in cl.about:
        g.add((node, DCTERMS.subject, concept_iri(ident)))
    for ev in cl.evidence:
        _evidence(g, atlas, node, ev, where=where, fallback=cl.loc)
    if cl.test_plan is not None:
        _test_plan(g, atlas, node, cl, where)


def _test_plan(g: Sink, atlas: Atlas, claim_node, cl, where) -> None:
    """A hypothesis's test plan: a node with its decision order, the flow step it instruments, the
    texts (measure, confirm, refute) and the pinned lines to time or print at (atlas:instrumentAt)."""
    plan = cl.test_plan
    node = ID[f"claim/{cl.id}/test-plan"]
    _at(where, node, plan.loc or cl.loc)
    g.add((claim_node, ATLAS.testPlan, node))
    g.add((node, RDF.type, ATLAS.TestPlan))
    g.add((node, ATLAS.decisionOrder, Literal(plan.order)))
    if plan.step:
        flow_id, step_id = plan.flow_step
        g.add((node, ATLAS.instruments, ID[f"flow/{flow_id}/step/{step_id}"]))
    _texts(g, node, ATLAS.measure, plan.measure)
    _texts(g, node, ATLAS.confirmIf, plan.confirm)
    _texts(g, node, ATLAS.refuteIf, plan.refute)
    for ev in plan.where:
        _evidence(g, atlas, node, ev, ATLAS.instrumentAt, where=where, fallback=plan.loc or cl.loc)


def _flow(g: Sink, atlas: Atlas, f, where) -> None:
    node = ID[f"flow/{f.id}"]
    _at(where, node, f.loc)
    g.add((node, RDF.type, ATLAS.Flow))
    g.add((node, DCTERMS.identifier, Literal(f.id)))
    _texts(g, node, DCTERMS.title, f.title)
    _texts(g, node, DCTERMS.description, f.summary)
    for ev in f.evidence:
        _evidence(g, atlas, node, ev, where=where, fallback=f.loc)
    for i, s in enumerate(f.ordered_steps(), 1):
        step = ID[f"flow/{f.id}/step/{s.id}"]
        _at(where, step, s.loc or f.loc)
        g.add((node, ATLAS.step, step))
        g.add((step, RDF.type, ATLAS.FlowStep))
        g.add((step, ATLAS.order, Literal(i)))
        g.add((step, ATLAS.actor, Literal(s.actor)))
        _texts(g, step, RDFS.label, s.label)
        for ident in s.concepts:
            g.add((step, ATLAS.touches, concept_iri(ident)))
        if s.source:
            _evidence(g, atlas, step, s.source, ATLAS.source, where=where, fallback=s.loc)
    for e in f.edges:
        g.add((ID[f"flow/{f.id}/step/{e.source}"], ATLAS[e.type + "To"],
               ID[f"flow/{f.id}/step/{e.target}"]))


def _sighting(g: Sink, s, acts: dict, where) -> None:
    node = ID[f"sighting/{s.concept}/{_digest(s.repo, s.method, s.value)}"]
    _at(where, node, s.loc)
    g.add((node, RDF.type, ATLAS.Sighting))
    g.add((node, RDF.type, PROV.Entity))
    g.add((node, ATLAS.concept, concept_iri(s.concept)))
    g.add((node, ATLAS.repository, repo_iri(s.repo)))
    g.add((node, ATLAS.method, Literal(s.method)))
    g.add((node, ATLAS.probeValue, Literal(s.value)))
    g.add((node, ATLAS.found, Literal(s.found)))
    g.add((node, ATLAS.cutoff, Literal(s.cutoff, datatype=XSD.date)))
    if s.found:
        _found(g, node, s)
    if s.head:
        g.add((node, ATLAS.harvestedHead, Literal(s.head)))
    act = _sighting_activity(g, s, acts, where)
    if act is not None:
        g.add((node, PROV.wasGeneratedBy, act))
    if s.harvested_at:
        g.add((node, PROV.generatedAtTime, datetime_literal(s.harvested_at)))


def _found(g: Sink, node, s) -> None:
    """The commit a found sighting names: its day, dates, sha and precision."""
    g.add((node, DCTERMS.date, Literal(utc_day(s.committer_date), datatype=XSD.date)))
    g.add((node, ATLAS.committerDate, datetime_literal(s.committer_date)))
    if s.author_date:
        g.add((node, ATLAS.authorDate, datetime_literal(s.author_date)))
    g.add((node, ATLAS.commit, Literal(s.sha)))
    g.add((node, ATLAS.precision, Literal(s.precision)))
    if s.introduced:
        g.add((node, ATLAS.introducedBy, Literal(s.introduced)))
    if s.introduced_date:
        g.add((node, ATLAS.introducedDate, datetime_literal(s.introduced_date)))
    if s.first_release:
        g.add((node, ATLAS.firstRelease, release_iri(s.repo, s.first_release)))


def _sighting_activity(g: Sink, s, acts: dict, where):
    """The harvest that produced sighting `s`: its refresh's row, else one named for it here."""
    act = acts.get((s.repo, s.harvested_at)) if s.harvested_at else None
    act = act or acts.get((s.repo, "@" + s.head))
    if act is None and (s.harvested_at or s.head):  # a sighting whose refresh has no row: name it
        act = harvest_iri(s.repo, s.harvested_at, s.head)
        acts[(s.repo, s.harvested_at or "@" + s.head)] = act
        _at(where, act, s.loc)
        g.add((act, RDF.type, PROV.Activity))
        g.add((act, RDF.type, ATLAS.Harvest))
        g.add((act, ATLAS.repository, repo_iri(s.repo)))
        if s.harvested_at:
            g.add((act, PROV.endedAtTime, datetime_literal(s.harvested_at)))
        if s.head:
            g.add((act, PROV.used, _revision(g, s.repo, s.head, where, s.loc)))
        g.add((act, ATLAS.cutoff, Literal(s.cutoff, datatype=XSD.date)))
    return act


def serialize(g: Graph, fmt: str) -> str:
    """Deterministic text: sorted N-Triples; rdflib's sorted Turtle; JSON-LD with sorted nodes."""
    if fmt == "nt":
        lines = g.serialize(format="nt").splitlines()
        return "\n".join(sorted(line for line in lines if line.strip())) + "\n"
    if fmt == "ttl":
        return g.serialize(format="turtle")
    if fmt == "jsonld":
        return jsonld(g)
    raise ValueError(fmt)


def jsonld(g: Graph) -> str:
    """Compacted JSON-LD: one `@context` holding the atlas's prefixes (so `concept:hccs`,
    `skos:prefLabel` work as short names), nodes sorted by `@id`, values sorted."""
    import json

    context = dict(sorted(PREFIXES.items()))
    doc = json.loads(g.serialize(format="json-ld", context=context, auto_compact=True))
    if isinstance(doc, list):
        nodes = doc
    else:
        doc.pop("@context", None)
        nodes = doc.pop("@graph", None)
        if nodes is None:
            nodes = [doc] if doc else []

    def norm(value):
        if isinstance(value, list):
            items = [norm(v) for v in value]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        return value

    nodes = sorted((norm(n) for n in nodes), key=lambda n: n.get("@id", ""))
    return json.dumps({"@context": context, "@graph": nodes}, ensure_ascii=False, indent=1,
                      sort_keys=True) + "\n"


# -- the dataset's own description: VoID, licence, creator, version ---------------------------------

VOID = Namespace("http://rdfs.org/ns/void#")
SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
FOAF = Namespace("http://xmlns.com/foaf/0.1/")
DATASET_IRI = ID["dataset"]
MAINTAINERS = ID["agent/maintainers"]
DATA_LICENSE = URIRef("https://creativecommons.org/licenses/by/4.0/")  # LICENSE-DATA
CODE_LICENSE = URIRef("https://www.apache.org/licenses/LICENSE-2.0")  # LICENSE
MAINTAINERS_NAME = Text(en="The maintainers of the Ascend communication atlas", zh="昇腾通信图谱的维护者")
VOCABULARIES = (BASE + "ontology#", str(SKOS), str(PROV), str(DCTERMS), str(DOAP))


def package_version() -> str:
    """The atlas's release (the installed package's version; "0" in a source tree not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ascend-atlas")
    except PackageNotFoundError:
        return "0"


def describe_dataset(g: Graph, graphs: dict[str, int] | None = None, endpoint: str | None = None) -> Graph:
    """The VoID description of the export `g`: title, licence (CC BY 4.0, LICENSE-DATA), creator and
    publisher, `owl:versionInfo` (the atlas's release and the data's date: its newest harvest, the
    scheme's `dcterms:modified`), the counts (triples, entities, classes, properties), a partition per
    class and per property, one per named graph of the SPARQL store (`graphs`: graph IRI -> triples,
    each a `sd:NamedGraph` named by `sd:name`) and the SPARQL endpoint when one serves it. A graph of
    its own: it describes `g` and is not counted in it."""
    from collections import Counter

    from rdflib.namespace import OWL

    d = Graph()
    for prefix, ns in {"void": VOID, "sd": SD, "foaf": FOAF, "dcterms": DCTERMS, "owl": OWL, "atlas": ATLAS,
                       "xsd": XSD}.items():
        d.bind(prefix, ns)
    d.add((DATASET_IRI, RDF.type, VOID.Dataset))
    _texts(d, DATASET_IRI, DCTERMS.title, SCHEME_TITLE)
    _texts(d, DATASET_IRI, DCTERMS.description, SCHEME_DESCRIPTION)
    d.add((DATASET_IRI, DCTERMS.license, DATA_LICENSE))
    for role in (DCTERMS.creator, DCTERMS.publisher):
        d.add((DATASET_IRI, role, MAINTAINERS))
    d.add((MAINTAINERS, RDF.type, FOAF.Organization))
    d.add((MAINTAINERS, RDF.type, DCTERMS.Agent))
    _texts(d, MAINTAINERS, FOAF.name, MAINTAINERS_NAME)
    modified = g.value(SCHEME_IRI, DCTERMS.modified)
    day = str(modified)[:10] if modified is not None else "undated"
    d.add((DATASET_IRI, OWL.versionInfo, Literal(f"atlas {package_version()}, data {day}")))
    if modified is not None:
        d.add((DATASET_IRI, DCTERMS.modified, modified))
    d.add((DATASET_IRI, VOID.rootResource, SCHEME_IRI))
    d.add((DATASET_IRI, VOID.uriSpace, Literal(str(ID))))
    for vocabulary in VOCABULARIES:
        d.add((DATASET_IRI, VOID.vocabulary, URIRef(vocabulary)))
    d.add((DATASET_IRI, VOID.feature, URIRef("http://www.w3.org/ns/formats/Turtle")))
    if endpoint:
        d.add((DATASET_IRI, VOID.sparqlEndpoint, URIRef(endpoint)))
    classes: Counter[Any] = Counter(o for o in g.objects(None, RDF.type) if isinstance(o, URIRef))
    properties: Counter[Any] = Counter(p for _, p, _ in g)
    counts = {VOID.triples: len(g), VOID.entities: len({s for s in g.subjects() if isinstance(s, URIRef)}),
              VOID.classes: len(classes), VOID.properties: len(properties),
              VOID.distinctSubjects: len(set(g.subjects())), VOID.distinctObjects: len(set(g.objects()))}
    for prop, n in counts.items():
        d.add((DATASET_IRI, prop, Literal(n)))
    for cls, n in sorted(classes.items()):
        part = ID[f"dataset/class/{_digest(str(cls))}"]
        d.add((DATASET_IRI, VOID.classPartition, part))
        d.add((part, VOID["class"], cls))
        d.add((part, VOID.entities, Literal(n)))
    for prop, n in sorted(properties.items()):
        part = ID[f"dataset/property/{_digest(str(prop))}"]
        d.add((DATASET_IRI, VOID.propertyPartition, part))
        d.add((part, VOID.property, prop))
        d.add((part, VOID.triples, Literal(n)))
    d.add((DATASET_IRI, RDF.type, SD.Dataset))  # as the SPARQL store holds it: named graphs, their union
    union = ID["dataset/union"]
    d.add((DATASET_IRI, SD.defaultGraph, union))
    d.add((union, RDF.type, SD.Graph))
    d.add((union, VOID.triples, Literal(len(g))))
    for name, n in sorted((graphs or {}).items()):
        named, part = ID[f"dataset/named/{_digest(name)}"], ID[f"dataset/graph/{_digest(name)}"]
        d.add((DATASET_IRI, SD.namedGraph, named))
        d.add((named, RDF.type, SD.NamedGraph))
        d.add((named, SD.name, URIRef(name)))
        d.add((named, SD.graph, part))
        d.add((DATASET_IRI, VOID.subset, part))
        d.add((part, RDF.type, VOID.Dataset))
        d.add((part, RDF.type, SD.Graph))
        d.add((part, VOID.triples, Literal(n)))
    return d


RESULT_FORMATS = ("SPARQL_Results_XML", "SPARQL_Results_JSON", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                  "Turtle", "JSON-LD", "N-Triples", "RDF_XML", "N-Quads", "TriG")


def service_description(described: Graph, endpoint: str) -> Graph:
    """The SPARQL 1.1 Service Description of the endpoint at `endpoint`: a read-only SPARQL 1.1 Query
    service whose default dataset is the atlas (the VoID description `described`, with the endpoint
    added), its default graph the union of the named graphs."""
    from rdflib import BNode

    out = Graph()
    for prefix, ns in described.namespaces():
        out.bind(prefix, ns)
    out.bind("sd", SD)
    for triple in described:
        out.add(triple)
    service, formats = BNode(), Namespace("http://www.w3.org/ns/formats/")
    out.add((DATASET_IRI, VOID.sparqlEndpoint, URIRef(endpoint)))
    out.add((service, RDF.type, SD.Service))
    out.add((service, SD.endpoint, URIRef(endpoint)))
    out.add((service, SD.supportedLanguage, SD.SPARQL11Query))
    out.add((service, SD.feature, SD.UnionDefaultGraph))
    out.add((service, SD.defaultEntailmentRegime, URIRef("http://www.w3.org/ns/entailment/Simple")))
    for name in RESULT_FORMATS:
        out.add((service, SD.resultFormat, formats[name]))
    out.add((service, SD.defaultDataset, DATASET_IRI))
    return out


# -- published IRIs: each record's IRI under a base where the site is served -------------------------


def record_pages(atlas: Atlas) -> dict[URIRef, str]:
    """Each concept's, flow's and repository's IRI -> its page in the site, relative to the site root
    (the paths `atlas map` writes)."""
    pages: dict[URIRef, str] = {concept_iri(c.id): f"concepts/{c.id}.html" for c in atlas.concepts}
    pages.update({ID[f"flow/{f.id}"]: f"flow-{f.id}.html" for f in atlas.flows})
    pages.update({repo_iri(r.id): f"repos/{r.id}.html" for r in atlas.repositories})
    return pages


def published_iri(base: str, page: str) -> URIRef:
    """A record's IRI when the site is published at `base`: its page's URL with the fragment `#it`
    (the page describes the record; fetching the IRI fetches the page)."""
    return URIRef(base + page + "#it")


def rebase(g: Graph, atlas: Atlas, base: str) -> Graph:
    """`g` with every concept, flow and repository IRI replaced by its published IRI under `base`, and
    each linked to its page (`foaf:page`) and its Turtle beside the page (`rdfs:seeAlso`)."""
    pages = record_pages(atlas)
    renamed: dict[Any, URIRef] = {iri: published_iri(base, page) for iri, page in pages.items()}
    out = Graph()
    for prefix, ns in g.namespaces():
        out.bind(prefix, ns)
    out.bind("foaf", FOAF)
    for s, p, o in g:
        out.add((renamed.get(s, s), p, renamed.get(o, o)))
    for iri, page in pages.items():
        out.add((renamed[iri], FOAF.page, URIRef(base + page)))
        out.add((renamed[iri], RDFS.seeAlso, URIRef(base + page[:-len(".html")] + ".ttl")))
    return out


def check_base(base: str) -> str:
    """A base IRI to publish under: absolute http(s), ending with a slash."""
    from urllib.parse import urlsplit

    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or not base.endswith("/") or parts.query \
            or parts.fragment:
        raise AtlasError(f'"{base[:80]}" cannot be a base IRI', Location("--base"),
                         "give the site's address, http(s) and ending with a slash: https://example.org/atlas/")
    return base

"""The site published under a base IRI (`atlas map --base`): each concept, flow and repository page
names its record's IRI, links its Turtle (written beside it, `rel="alternate"`) and embeds the same
triples as JSON-LD, so that the IRIs of the export (`atlas export --base`) lead somewhere.

The pages themselves are the site's; this adds to a page only what publishing needs, in its head (the
link and the JSON-LD) and at the end of its body (the IRI line)."""
from __future__ import annotations

from html import escape

from rdflib import Graph

from ..model.core import Atlas


def published_files(atlas: Atlas, graph: Graph, base: str, files: dict[str, bytes]) -> dict[str, bytes]:
    """The site's files with the record pages completed and each record's Turtle beside its page.
    `graph` is the export under `base` (`rdf.rebase`)."""
    from ..linked.rdf import jsonld, published_iri, record_pages

    out = dict(files)
    for page in sorted(record_pages(atlas).values()):
        if page not in files:
            continue
        iri = published_iri(base, page)
        own = Graph()
        for prefix, ns in graph.namespaces():
            own.bind(prefix, ns)
        for triple in graph.triples((iri, None, None)):
            own.add(triple)
        turtle = page[:-len(".html")] + ".ttl"
        out[turtle] = own.serialize(format="turtle").encode("utf-8")
        html = _completed(files[page].decode("utf-8"), str(iri), turtle.rsplit("/", 1)[-1], jsonld(own))
        out[page] = html.encode("utf-8")
    return out


def _completed(html: str, iri: str, turtle: str, data: str) -> str:
    safe = data.replace("</", "<\\/")  # no end tag inside the script element
    head = (f'<link rel="alternate" type="text/turtle" href="{escape(turtle)}">\n'
            f'<script type="application/ld+json">{safe}</script>\n')
    line = (f'<p class="iri">IRI · 标识: <code>{escape(iri)}</code> · '
            f'<a href="{escape(turtle)}" type="text/turtle">Turtle</a></p>\n')
    html = html.replace("</head>", head + "</head>", 1)
    at = html.rfind("</body>")
    return html[:at] + line + html[at:]

"""The site published under a base IRI (`atlas map --base`, `atlas export --base`): the site is
served by a real HTTP server on 127.0.0.1 at that base, and each record's IRI is dereferenced to its
page and, through the page's `rel="alternate"` link, to Turtle that parses and holds the record."""
from __future__ import annotations

import functools
import html.parser
import json
import re
import threading
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urldefrag, urljoin

import pytest
from click.testing import CliRunner
from rdflib import Graph, URIRef
from rdflib.namespace import RDFS, SKOS

from atlas.cli import cli

FOAF_PAGE = URIRef("http://xmlns.com/foaf/0.1/page")


def run(*args, code=0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


class Head(html.parser.HTMLParser):
    """The alternate Turtle link, the embedded JSON-LD and the IRI line of a page."""

    def __init__(self):
        super().__init__()
        self.alternate, self.jsonld, self.iri, self._in = None, "", None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and a.get("rel") == "alternate" and a.get("type") == "text/turtle":
            self.alternate = a["href"]
        if tag == "script" and a.get("type") == "application/ld+json":
            self._in = "jsonld"
        if tag == "p" and a.get("class") == "iri":
            self._in = "iri"

    def handle_endtag(self, tag):
        if tag in ("script", "p"):
            self._in = None

    def handle_data(self, data):
        if self._in == "jsonld":
            self.jsonld += data
        elif self._in == "iri" and self.iri is None and data.startswith("http"):
            self.iri = data


def _more_concepts(data, n=10):
    """n more concepts, written by the test, so that the mini atlas has over twenty records."""
    for i in range(n):
        (data / "concepts" / "x" / f"extra-{i}.yaml").write_text(
            f"id: extra-{i}\nkind: library\nnames: {{en: Extra {i}, zh: 额外 {i}}}\n"
            f"beginner: {{en: \"Extra library {i}.\", zh: \"额外的库 {i}。\"}}\n"
            f"professional: {{en: \"Extra library {i} for the test.\", zh: \"测试用的额外库 {i}。\"}}\n"
            "relations:\n  - {type: built-on, target: lib-c}\n"
            f"evidence:\n  - url: https://example.org/extra-{i}\n    confidence: second-hand\n", encoding="utf-8")


@pytest.fixture
def served(mini, tmp_path):
    """The site of the mini atlas (and ten more concepts), built for and served at http://127.0.0.1:PORT/."""
    site = tmp_path / "site"
    site.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(site)))
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    _more_concepts(mini)
    empty = tmp_path / "no-clones"
    empty.mkdir()
    run("map", "-o", str(site), "--base", base, "--data", str(mini), "--repos", str(empty))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield base, mini
    finally:
        server.shutdown()
        server.server_close()


def _get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.headers.get("Content-Type", ""), resp.read()


def test_twenty_iris_lead_to_their_page_and_their_turtle(served):
    base, data = served
    export = Graph().parse(data=run("export", "--data", str(data), "--base", base), format="turtle")
    records = sorted({s for s in export.subjects(FOAF_PAGE, None)})
    assert len(records) >= 20
    for iri in records[:20]:
        assert str(iri).startswith(base) and str(iri).endswith(".html#it")
        page_url, _ = urldefrag(str(iri))
        assert export.value(iri, FOAF_PAGE) == URIRef(page_url)
        ctype, body = _get(page_url)  # dereferencing the IRI: the page
        assert ctype.startswith("text/html")
        head = Head()
        head.feed(body.decode("utf-8"))
        assert head.iri == str(iri), (page_url, head.iri)
        turtle_url = urljoin(page_url, head.alternate)
        assert export.value(iri, RDFS.seeAlso) == URIRef(turtle_url)
        _, turtle = _get(turtle_url)
        own = Graph().parse(data=turtle.decode("utf-8"), format="turtle")
        assert set(own.subjects()) == {iri} and len(own) >= 3
        assert set(own) <= set(export)  # the record's triples, as the export states them
        embedded = Graph().parse(data=head.jsonld, format="json-ld")
        assert set(embedded) == set(own)
    hccs_like = URIRef(base + "concepts/bus-x.html#it")
    assert export.value(hccs_like, SKOS.prefLabel) is not None
    old = re.compile(r"https://ascend-atlas\.invalid/id/(concept/[^/]+|flow/[^/]+|repo/[^/]+/[^/]+)")
    assert not any(old.fullmatch(str(t)) for t in export.all_nodes())  # (answers and steps keep their IRIs)


def test_without_a_base_the_stable_iris_stay_and_no_turtle_is_written(mini, tmp_path):
    site = tmp_path / "site"
    empty = tmp_path / "no-clones"
    empty.mkdir()
    run("map", "-o", str(site), "--data", str(mini), "--repos", str(empty))
    assert not list(site.rglob("*.ttl"))
    page = (site / "concepts" / "bus-x.html").read_text(encoding="utf-8")
    assert "application/ld+json" not in page and 'class="iri"' not in page
    g = Graph().parse(data=run("export", "--data", str(mini)), format="turtle")
    assert URIRef("https://ascend-atlas.invalid/id/concept/bus-x") in set(g.subjects())
    assert not list(g.triples((None, FOAF_PAGE, None)))


def test_a_base_that_is_not_an_address_is_refused(mini, tmp_path):
    for bad in ("example.org/atlas/", "https://example.org/atlas", "ftp://example.org/"):
        result = CliRunner().invoke(cli, ["export", "--data", str(mini), "--base", bad])
        assert result.exit_code == 1 and "cannot be a base IRI" in str(result.exception), bad
    assert json.dumps  # (json is used by the JSON-LD parser's input above)

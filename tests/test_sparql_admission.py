"""Which requests `atlas serve --sparql` admits: only the loopback names in `Host` (and the names given
with --allow-host), so that a web page which rebinds its own name to 127.0.0.1 cannot read answers or
take the query slots (DNS rebinding); and a request whose framing is ambiguous (Content-Length and
Transfer-Encoding both) is refused and its connection closed, so that nothing smuggled after it is
served. A real server process on 127.0.0.1, raw sockets."""
from __future__ import annotations

import socket
import time
import urllib.parse

import pytest

from atlas.linked.endpoint import host_allowed

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from test_sparql_server import _start  # noqa: E402 - after the skips

QUERY = "ASK { ?s ?p ?o }"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    import shutil

    from conftest import MINI

    data = tmp_path_factory.mktemp("admitted") / "data"
    shutil.copytree(MINI, data)
    proc, url = _start(data, "--allow-host", "atlas.example.org", "--allow-host", "Intra.Example")
    try:
        yield urllib.parse.urlsplit(url).port
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def exchange(port: int, raw: bytes, wait: float = 3.0) -> bytes:
    """Send `raw` on a fresh connection to 127.0.0.1 and read until the server closes it or `wait`
    seconds pass without data."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(raw)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (TimeoutError, socket.timeout):
            pass
        return got


def get(port: int, host: str | None) -> tuple[int, bytes]:
    head = f"GET /sparql?query={urllib.parse.quote(QUERY)} HTTP/1.1\r\n"
    head += (f"Host: {host}\r\n" if host is not None else "") + "Accept: application/sparql-results+json\r\n"
    got = exchange(port, (head + "Connection: close\r\n\r\n").encode("latin-1"))
    status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/1.1 ") else 0
    return status, got


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "127.0.0.1", "127.0.0.1:{port}", "[::1]",
                                  "[::1]:{port}", "LOCALHOST:{port}", "atlas.example.org", "atlas.example.org:80",
                                  "intra.example:{port}"])
def test_loopback_names_and_allowed_names_are_answered(served, host):
    status, got = get(served, host.format(port=served))
    assert status == 200 and b'"boolean"' in got, got[:300]


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:{port}", "localhost.attacker.example",
                                  "127.0.0.1.nip.io:{port}", "evil.example.org", "atlas.example.org.evil",
                                  "[::2]:{port}", "127.0.0.2", "", "localhost:x", "localhost:{port}:1", None])
def test_any_other_host_is_refused_with_a_clear_body(served, host):
    status, got = get(served, host.format(port=served) if host is not None else None)
    assert status in (400, 421), got[:300]  # h11 answers 400 itself for an HTTP/1.1 request without Host
    if status == 421:
        assert b"--allow-host" in got and b'"boolean"' not in got


def test_a_refused_host_takes_no_query_slot(served):
    """The refusal comes before the query: 40 refused requests at once and a good one still answers."""
    socks = []
    raw = f"GET /sparql?query={urllib.parse.quote(QUERY)} HTTP/1.1\r\nHost: attacker.example\r\n\r\n".encode()
    for _ in range(40):
        s = socket.create_connection(("127.0.0.1", served), timeout=5)
        s.sendall(raw)
        socks.append(s)
    try:
        start = time.monotonic()
        status, _ = get(served, "localhost")
        assert status == 200 and time.monotonic() - start < 10
    finally:
        for s in socks:
            s.close()


def test_conflicting_framing_is_refused_and_the_connection_closed(served):
    """RFC 9112 6.3: a request with both Transfer-Encoding and Content-Length may be an attempt at
    request smuggling; the server must close the connection after answering. The trailing request must
    not be served."""
    body = "query=" + urllib.parse.quote(QUERY)
    chunked = f"{len(body):x}\r\n{body}\r\n0\r\n\r\n"
    smuggled = (f"GET /sparql?query={urllib.parse.quote(QUERY)} HTTP/1.1\r\nHost: localhost\r\n"
                "Accept: application/sparql-results+json\r\n\r\n")
    raw = ("POST /sparql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
           f"Content-Length: {len(chunked)}\r\nTransfer-Encoding: chunked\r\n\r\n{chunked}{smuggled}")
    got = exchange(served, raw.encode("latin-1"), wait=5)
    assert got.startswith(b"HTTP/1.1 400 "), got[:300]
    assert got.count(b"HTTP/1.1 ") == 1 and b'"boolean"' not in got, got  # the trailing request is not served


def test_a_plain_keep_alive_connection_still_serves_two_requests(served):
    """The control: without the conflict, two requests on one connection are both answered."""
    one = (f"GET /sparql?query={urllib.parse.quote(QUERY)} HTTP/1.1\r\nHost: localhost\r\n"
           "Accept: application/sparql-results+json\r\n\r\n")
    got = exchange(served, (one + one).encode(), wait=3)
    assert got.count(b"HTTP/1.1 200 ") == 2, got


@pytest.mark.parametrize("host, allowed, ok", [
    ("localhost", (), True), ("127.0.0.1:7979", (), True), ("[::1]", (), True), ("[::1]:1", (), True),
    ("LocalHost", (), True), ("localhost.", (), False), ("::1", (), False), ("[::1", (), False),
    ("a.example:8080", ("a.example",), True), ("A.EXAMPLE", ("a.example",), True), ("b.example", ("a.example",), False),
    ("localhost:", (), False), ("localhost:99999x", (), False), ("", (), False), (None, (), False),
    ("127.0.0.1 ", (), False), ("127.0.0.1,evil", (), False),
])
def test_host_allowed(host, allowed, ok):
    assert host_allowed(host, allowed) is ok

"""Hostile and unlucky input: no network from a query, bounded waits and results, one walk of data/,
safe terminal output, linear paths and clear messages. Real processes, real files, real servers on
127.0.0.1 (a listener that must receive nothing, a server that trickles its headers)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.linked import sparql
from atlas.model.checks import check
from atlas.cli import cli
from atlas.errors import AtlasError
from atlas.index.compiled import load_atlas, validate
from atlas.model.load import load_data
from atlas.output import UNSAFE as ESCAPED, terminal_safe, to_json
from atlas.terminal.render import _cut, wrap
from atlas.text import width
from atlas.model.walk import list_files
from conftest import write

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def atlas(*args, data=None, timeout=60, env=None):
    """`python -m atlas ARGS` as a real process (the console script's fast paths included)."""
    cmd = [sys.executable, "-m", "atlas", *args] + (["--data", str(data)] if data else [])
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})})


def invoke(*args):
    """The click command in this process; an AtlasError (which `atlas.cli.main` prints as
    "Error: ...", exit 1) is added to the output."""
    r = CliRunner().invoke(cli, list(args))
    if isinstance(r.exception, AtlasError):
        return 1, r.output + f"Error: {r.exception}"
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


# --------------------------------------------------------------------------------------------------
# No network from a query; time, row and memory limits
# --------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def listener():
    """A TCP listener on 127.0.0.1 that accepts nothing: `received()` says whether anyone connected."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)

    def received() -> bool:
        try:
            srv.accept()[0].close()
            return True
        except BlockingIOError:
            return False

    try:
        yield srv.getsockname()[1], received
    finally:
        srv.close()


def test_service_is_refused_and_the_listener_receives_nothing(mini):
    with listener() as (port, received):
        for q in (f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}",
                  f"SELECT * WHERE {{\n  SERVICE SILENT <http://127.0.0.1:{port}/q> {{ ?s ?p ?o }} }}",
                  f"SELECT * WHERE {{ \\u0053ERVICE <http://127.0.0.1:{port}/q> {{ ?s ?p ?o }} }}",
                  f"SELECT * WHERE {{ BIND(<http://127.0.0.1:{port}/q> AS ?u) service ?u {{ ?s ?p ?o }} }}"):
            r = atlas("query", "--sparql", q, data=mini, timeout=30)
            err = r.stderr.decode()
            assert r.returncode == 1 and "SERVICE would send the query to another server" in err, err
            assert "Traceback" not in err and re.search(r"query:\d+:\d+: ", err), err
        time.sleep(0.2)
        assert not received()


def test_service_is_refused_for_an_endpoint_unless_allowed(mini):
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
            body = json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": [
                {"x": {"type": "literal", "value": "ok\x1b]0;pwned\x07"}}]}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/query"
    q = "SELECT ?x WHERE { SERVICE <http://10.0.0.1/sparql> { ?x ?p ?o } }"
    try:
        refused = atlas("query", "--sparql", q, "--endpoint", url, timeout=30)
        assert refused.returncode == 1 and b"SERVICE" in refused.stderr and not seen
        allowed = atlas("query", "--sparql", q, "--endpoint", url, "--allow-service", timeout=30)
        assert allowed.returncode == 0, allowed.stderr
        assert len(seen) == 1 and "SERVICE" in seen[0]
        # the endpoint's text reaches the terminal escaped: no ESC, no BEL
        assert b"ok\\x1b]0;pwned\\x07" in allowed.stdout and b"\x1b" not in allowed.stdout
        code, out = invoke("query", "--sparql", "ASK {}", "--allow-service", "--data", str(mini))
        assert code == 2 and "--allow-service needs --endpoint" in out  # a usage error
    finally:
        server.shutdown()


def test_update_guard_decodes_unicode_escapes():
    for q in ("\\u0044ELETE WHERE { ?s ?p ?o }", "\\U00000049NSERT DATA { <a:b> <a:c> <a:d> }",
              "SELECT * { ?s ?p ?o } ; \\u0044\\u0052\\u004fP ALL"):
        with pytest.raises(AtlasError, match="is SPARQL Update"):
            sparql.guard(q)
    sparql.guard('SELECT * WHERE { ?s ?p "\\u0044ELETE" }')  # inside a string it is text
    with pytest.raises(AtlasError, match="SERVICE"):  # an escaped quote does not hide it either way
        sparql.guard('SELECT * { ?s ?p \\u0022 } SERVICE <http://127.0.0.1:9/q> { } #" }')


def test_embedded_query_stops_at_the_time_limit(mini):
    q = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    start = time.monotonic()
    r = atlas("query", "--sparql", q, "--timeout", "1", data=mini, timeout=60)
    took = time.monotonic() - start
    err = r.stderr.decode()
    assert r.returncode == 1 and "the time limit, --timeout" in err and "longer than 1 s" in err, err
    assert took < 30  # the product has ~10^10 rows: only the deadline ends it
    assert "Traceback" not in err


def _children() -> set:
    me = os.getpid()
    return set(Path(f"/proc/{me}/task/{me}/children").read_text().split())


def test_the_killed_query_leaves_no_process_behind(mini):
    from atlas.commands import sparql_store

    before = _children()
    with sparql_store(mini) as store:
        with pytest.raises(AtlasError, match="the time limit"):
            sparql.run_embedded("SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }", store,
                                timeout=0.5)
        assert _children() == before
        assert sparql.run_embedded("ASK { ?s ?p ?o }", store, formats="table") == ("boolean", "true")
    assert _children() == before


def test_embedded_query_stops_at_the_row_limit(mini):
    r = atlas("query", "--sparql", "SELECT * WHERE { ?s ?p ?o }", "--max-rows", "5", data=mini)
    assert r.returncode == 1 and b"more than 5 rows (the result-size limit, --max-rows)" in r.stderr
    ok = atlas("query", "--sparql", "SELECT * WHERE { ?s ?p ?o } LIMIT 5", "--max-rows", "5", data=mini)
    assert ok.returncode == 0 and b"5 row(s)" in ok.stdout


def test_sparql_answers_with_a_cache_that_cannot_be_written(mini, tmp_path):
    blocker = write(tmp_path / "not-a-folder", "x")  # the cache folder would have to be inside a file
    r = atlas("query", "--sparql", "ASK { ?s a skos:Concept }", data=mini,
              env={"ATLAS_CACHE": str(blocker / "cache")})
    assert r.returncode == 0 and r.stdout.strip() == b"true", r.stderr


# --------------------------------------------------------------------------------------------------
# Bounded HTTP
# --------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def trickler(body_bytes: int = 0):
    """A server that sends a status line, then one header byte every 0.1 s (for at most 20 s), or
    with body_bytes, a body of that many bytes; it stops by itself."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(20)

    def serve():
        with contextlib.suppress(OSError):
            conn, _ = srv.accept()
            with conn:
                conn.settimeout(5)
                conn.recv(65536)
                if body_bytes:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 + f"Content-Length: {body_bytes}\r\n\r\n".encode())
                    chunk = b"a" * (1 << 20)
                    for _ in range(body_bytes >> 20):
                        conn.sendall(chunk)
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                end = time.monotonic() + 20
                while time.monotonic() < end:
                    conn.sendall(b"X")
                    time.sleep(0.1)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.getsockname()[1]}/query"
    finally:
        srv.close()
        t.join(25)


def test_trickling_headers_do_not_hold_the_command():
    with trickler() as url:
        start = time.monotonic()
        r = atlas("query", "--sparql", "ASK {}", "--endpoint", url, "--timeout", "1", timeout=30)
        took = time.monotonic() - start
    err = r.stderr.decode()
    assert r.returncode == 1 and "no complete answer" in err and "within 1 s" in err, err
    assert took < 15


def test_response_size_is_capped():
    with trickler(body_bytes=4 << 20) as url:
        with pytest.raises(AtlasError, match="larger than 1 MB"):
            sparql._http("POST", url, b"ASK {}", {}, 10, "--endpoint", limit=1 << 20)


class _Moved(BaseHTTPRequestHandler):
    """Answers every request with a redirect to another host; counts what it received."""
    seen: list = []

    def do_POST(self):  # noqa: N802 - the http.server name
        self.seen.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(301)
        self.send_header("Location", "http://203.0.113.9/sparql")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_a):
        pass


def test_a_redirect_is_reported_with_its_target_and_not_followed():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Moved)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/query"
        r = atlas("query", "--sparql", "ASK {}", "--endpoint", url, "--timeout", "5", timeout=30)
    finally:
        srv.shutdown()
        srv.server_close()
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err, err
    assert "HTTP 301" in err and "'http://203.0.113.9/sparql'" in err and "--endpoint http://203.0.113.9/sparql" in err
    assert len(_Moved.seen) == 1, "exactly one request, to the URL given"


@pytest.mark.parametrize("url, words", [
    ("http://[::1/q", "not a valid URL"),
    ("http://127.0.0.1:7878/q\r\nX-Injected: 1", "control or space character"),
    ("http://127.0.0.1:99999/q", "not a valid URL"),
    ("ftp://127.0.0.1/q", "not an http(s) URL"),
])
def test_bad_urls_get_a_message(url, words):
    for args in (["query", "--sparql", "ASK {}", "--endpoint", url], ["export", "--to-endpoint", url]):
        code, out = invoke(*args)
        assert code == 1 and words in out and "Traceback" not in out, out


# --------------------------------------------------------------------------------------------------
# One walk of data/
# --------------------------------------------------------------------------------------------------

def _codes(problems):
    return {(Path(p.location.file).name, p.code) for p in problems}


@pytest.mark.parametrize("make, name, code", [
    (lambda d: os.mkfifo(d / "concepts" / "pipe.yaml"), "pipe.yaml", "special-file"),
    (lambda d: (os.symlink("b", d / "concepts" / "a"), os.symlink("a", d / "concepts" / "b")), "a", "link-loop"),
    (lambda d: os.symlink("..", d / "concepts" / "up"), "up", "link-loop"),
    (lambda d: os.symlink("gone.yaml", d / "concepts" / "dangling.yaml"), "dangling.yaml", "broken-link"),
    (lambda d: os.symlink("/dev/zero", d / "concepts" / "zero.yaml"), "zero.yaml", "link-outside"),
])
def test_bad_entries_are_located_errors_everywhere(mini, make, name, code):
    make(mini)
    assert (name, code) in _codes(validate(mini).problems)
    for args in (["validate", "--no-shacl"], ["query", "board-a"], ["export", "--format", "nt"],
                 ["query", "--sparql", "ASK {}"]):
        r = atlas(*args, data=mini, timeout=60)
        err = (r.stdout + r.stderr).decode()
        assert r.returncode == 1 and f"{name}: error:" in err and f"[{code}]" in err, (args, err)
        assert "Traceback" not in err


def test_a_link_inside_the_data_folder_is_followed(mini):
    (mini / "concepts" / "x" / "board-a.yaml").rename(mini / "board-a.keep")
    os.symlink("../../board-a.keep", mini / "concepts" / "x" / "board-a.yaml")
    assert not validate(mini).errors
    assert load_atlas(mini).concept_by_id["board-a"]


def test_the_filesystem_root_is_refused():
    for args in (["validate"], ["query", "hccs"], ["query", "--sparql", "ASK {}"], ["map", "-o", "/tmp/never"]):
        r = atlas(*args, data="/", timeout=30)
        err = r.stderr.decode() + r.stdout.decode()
        assert r.returncode == 1 and "refusing to read a filesystem root" in err, (args, err)


@contextlib.contextmanager
def as_nobody():
    """Run a block without root's power to read everything: as root, drop the effective ids to
    nobody (and back); as another user, permissions apply already."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_an_unreadable_folder_is_an_error_not_zero_flows(mini):
    # a folder nobody may read: outside pytest's private tmp (mode 0700) so that the reduced
    # identity can reach it at all
    base = Path(tempfile.mkdtemp(prefix="atlas-unreadable-"))
    try:
        import shutil

        shutil.copytree(mini, base / "data")
        os.chmod(base, 0o755)
        for p in [base / "data", *(base / "data").rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(base / "data" / "flows", 0)
        with as_nobody():
            listing = list_files(base / "data")
            loaded = validate(base / "data")
            with pytest.raises(AtlasError) as raised:
                load_atlas(base / "data", use_cache=False)
            code, out = invoke("validate", "--no-shacl", "--data", str(base / "data"))
        assert ("flows", "unreadable-folder") in _codes(listing.problems)
        assert ("flows", "unreadable-folder") in _codes(loaded.problems)
        assert ("flows", "unreadable-folder") in _codes(raised.value.problems)
        assert code == 1 and "flows: error: cannot read folder" in out
    finally:
        os.chmod(base / "data" / "flows", 0o755)
        shutil.rmtree(base)


def test_a_folder_is_read_at_its_real_place_before_any_link_to_it(tmp_path):
    """Found by the random trees: a link walked before the folder it points to made the folder's
    FIFO appear under the link's path and the real folder look like a loop."""
    root = tmp_path / "data"
    (root / "z").mkdir(parents=True)
    os.mkfifo(root / "z" / "p.yaml")
    (root / "z" / "ok.yaml").write_text("a: 1\n")
    os.symlink(root / "z", root / "a")
    listing = list_files(root, display=lambda rel: rel)
    assert [rel for rel, _, _ in listing.files] == ["z/ok.yaml"]
    assert {(p.location.file, p.code) for p in listing.problems} == {("z/p.yaml", "special-file"),
                                                                      ("a", "link-loop")}


KINDS_OF_ENTRY = st.sampled_from(["file", "yaml", "dir", "fifo", "link-in", "link-up", "link-out", "dangling"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 6), KINDS_OF_ENTRY), min_size=1, max_size=14))
def test_walk_over_random_trees(tmp_path_factory, plan):
    """Oracle: the regular YAML files at their real places (os.walk, no links) are all listed; every
    listed file is a regular file inside the folder; every special file, dangling or outward link is
    an error naming it; the walk ends."""
    root = tmp_path_factory.mktemp("walk")
    dirs = [root]
    made = {}
    for i, (parent, kind) in enumerate(plan):
        where = dirs[parent % len(dirs)]
        name = f"e{i}.yaml" if kind != "dir" and kind != "file" else f"e{i}" + (".txt" if kind == "file" else "")
        p = where / name
        if kind == "dir":
            p.mkdir()
            dirs.append(p)
        elif kind in ("file", "yaml"):
            p.write_text("a: 1\n")
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "link-in":
            os.symlink(dirs[i % len(dirs)], p)  # a folder inside (possibly an ancestor: a loop)
        elif kind == "link-up":
            os.symlink(root, p)
        elif kind == "link-out":
            os.symlink("/dev/null", p)
        else:
            os.symlink(where / "missing", p)
        made[os.path.relpath(p, root)] = kind
    listing = list_files(root, display=lambda rel: rel)
    listed = {rel for rel, _, _ in listing.files}
    flagged = {p.location.file: p.code for p in listing.problems}
    real_yaml = {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                 if f.endswith(".yaml") and os.path.isfile(os.path.join(d, f))
                 and not os.path.islink(os.path.join(d, f))}
    assert real_yaml <= listed
    for rel in listed:
        real = os.path.realpath(root / rel)
        assert os.path.isfile(real) and real.startswith(str(os.path.realpath(root)) + os.sep)
    for rel, kind in made.items():
        expect = {"fifo": "special-file", "link-out": "link-outside", "dangling": "broken-link"}.get(kind)
        if expect:
            assert flagged.get(rel) == expect, (rel, kind, flagged)
        if kind == "link-up":
            assert flagged.get(rel) == "link-loop"


# --------------------------------------------------------------------------------------------------
# Safe terminal output
# --------------------------------------------------------------------------------------------------

def test_control_characters_in_data_are_located_errors_and_never_printed_raw(mini):
    f = mini / "concepts" / "x" / "board-a.yaml"
    text = f.read_text(encoding="utf-8")
    f.write_text(text.replace('beginner: {en: "A test board."', 'beginner: {en: "A test \\e]0;owned\\a board."'),
                 encoding="utf-8")
    line = next(i for i, t in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if t.startswith("beginner"))
    r = atlas("validate", "--no-shacl", data=mini)
    out = r.stdout.decode()
    assert r.returncode == 1 and re.search(rf"board-a.yaml:{line}:\d+: error: control character U\+001B", out), out
    assert "[control-character]" in out
    # a term typed by a user reaches the terminal escaped (the suggestions repeat it)
    r = atlas("query", "zz\x1b]52;c;aGk=\x07zz")
    assert r.returncode == 1 and b"\x1b" not in r.stdout + r.stderr and b"\\x1b]52" in r.stderr


SAFE_CHARS = st.characters(blacklist_categories=("Cs",), max_codepoint=0x3000)
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # embeddings, overrides, isolates
INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad\u061c\u2028\U000e0041"  # zero-width, marks, tags
RISKY = st.sampled_from("\x1b\x07\x9b\r\n\t\x00\x7f\x85" + BIDI + INVISIBLE)


def unsafe_for_a_terminal(s: str) -> bool:
    """The definition, by Unicode category: a control (Cc) other than tab and newline, a CR that does
    not end a CRLF line, a format character (Cf: zero-width spaces and joiners, direction marks, the
    bidirectional embeddings, overrides and isolates, tag characters) or a line or paragraph separator."""
    for i, ch in enumerate(s):
        if ch == "\r":
            if s[i + 1:i + 2] != "\n":
                return True
        elif unicodedata.category(ch) in ("Cf", "Zl", "Zp") or (unicodedata.category(ch) == "Cc" and ch not in "\t\n"):
            return True
    return False


def test_the_invisible_characters_are_unicode_format_characters():
    """What the terminal sees escaped: output.INVISIBLE (which validate refuses too) holds every format
    character (Cf) of this Python's Unicode database and the line and paragraph separators; with the
    controls and the lone surrogates (bytes that were not UTF-8) that is all, but for the format
    characters of later Unicode versions (U+13439-U+1343F)."""
    listed = {c for c in range(0x110000) if ESCAPED.fullmatch(chr(c))} - {ord("\r")}
    wanted = {c for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp", "Cs")
              or (unicodedata.category(chr(c)) == "Cc" and chr(c) not in "\t\n\r")}
    assert wanted <= listed, sorted(hex(c) for c in wanted - listed)
    assert listed - wanted <= set(range(0x13430, 0x13440)), sorted(hex(c) for c in listed - wanted)


@settings(max_examples=300, deadline=None)
@given(st.text(SAFE_CHARS | RISKY, max_size=40))
def test_terminal_safe_and_json_over_random_strings(s):
    out = terminal_safe(s)
    assert not unsafe_for_a_terminal(out)
    if not unsafe_for_a_terminal(s):
        assert out == s
    js = to_json({"v": s})
    assert json.loads(js) == {"v": s} and not UNSAFE.search(js.replace("\n", ""))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(SAFE_CHARS | RISKY.filter(lambda c: c != "\n"), min_size=1, max_size=30))
def test_validate_flags_control_characters_over_random_text(mini, s):
    f = mini / "concepts" / "x" / "board-a.yaml"
    original = f.read_text(encoding="utf-8")
    try:
        f.write_text(original.replace('beginner: {en: "A test board."',
                                      "beginner: {en: " + json.dumps(s, ensure_ascii=False)), encoding="utf-8")
        codes = {p.code for p in load_data(mini).problems if p.location.file.endswith("board-a.yaml")}
        assert ("control-character" in codes) == (unsafe_for_a_terminal(s) or "\r" in s), (s, codes)
    finally:
        f.write_text(original, encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# Linear and iterative
# --------------------------------------------------------------------------------------------------

def _chain(mini: Path, n: int, close: bool = False) -> None:
    folder = mini / "concepts" / "chain"
    folder.mkdir()
    for i in range(n):
        target = f"link-{i + 1}" if i + 1 < n else ("link-0" if close else "board-a")
        (folder / f"link-{i}.yaml").write_text(
            f"id: link-{i}\nkind: concept\nnames: {{en: Link {i}, zh: 环{i}}}\n"
            f"beginner: {{en: a, zh: 甲}}\nprofessional: {{en: b, zh: 乙}}\n"
            f"relations:\n  - {{type: part-of, target: {target}}}\n"
            "evidence:\n  - {url: 'https://example.org/x', confidence: unverified}\n", encoding="utf-8")


def test_a_1500_long_part_of_chain_is_valid(mini):
    _chain(mini, 1500)
    loaded = check(load_data(mini))
    assert not [p for p in loaded.errors], loaded.errors[:3]


def test_a_cycle_at_the_end_of_a_long_chain_is_found(mini):
    _chain(mini, 1500, close=True)
    loaded = check(load_data(mini))
    assert [p for p in loaded.errors if p.code == "cycle"]


def test_a_100_kb_term_answers_quickly():
    r = atlas("query", "q" * 100_000, timeout=20)  # it took 27 s when every name was compared in full
    # now over the query's length limit: refused at once, a usage error that says so
    assert r.returncode == 2 and b"100000 characters long; at most 1000 are searched" in r.stderr
    r = atlas("query", "q" * 1000, timeout=20)  # at the limit: searched, nothing found, the nearest names
    assert r.returncode == 1 and b"nothing in concepts, claims, flows or repositories matches" in r.stderr


def test_a_giant_value_is_refused_at_validate(mini):
    f = mini / "concepts" / "x" / "board-a.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace('"A test board."', '"' + "a" * 1_000_001 + '"'),
                 encoding="utf-8")
    problems = [p for p in load_data(mini).problems if p.code == "too-long"]
    assert problems and problems[0].location.line == 5


def _old_wrap(s: str, w: int) -> list[str]:
    """The quadratic definition, kept as the oracle."""
    lines = []
    for para in (s or "").split("\n"):
        while width(para) > w:
            head, para = _cut(para, w)
            lines.append(head.rstrip())
        lines.append(para)
    return lines or [""]


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab c 直驱\n\u3000/-_"), max_size=80), st.integers(2, 20))
def test_wrap_matches_the_quadratic_definition(s, w):
    assert wrap(s, w) == _old_wrap(s, w)


def test_long_names_break_after_a_separator_not_inside_a_word():
    assert wrap("mirror of gitcode.com/Ascend/memfabric_hybrid", 36) == [
        "mirror of gitcode.com/Ascend/", "memfabric_hybrid"]
    assert wrap("USE_ASCEND_DIRECT", 12) == ["USE_ASCEND_", "DIRECT"]


def test_wrapping_a_megabyte_is_linear():
    code = "from atlas.terminal.render import wrap; import sys; sys.exit(len(wrap('word ' * 200_000, 70)) < 10_000)"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)  # over 120 s when quadratic


# --------------------------------------------------------------------------------------------------
# Minor
# --------------------------------------------------------------------------------------------------

def test_a_nul_character_is_reported_with_its_line(mini):
    f = mini / "concepts" / "x" / "board-a.yaml"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace("BA", "B\x00A")
    f.write_text("".join(lines), encoding="utf-8")
    found = [p for p in load_data(mini).problems if p.code == "control-character"]
    assert found and found[0].location.line == 4 and "NUL" in found[0].message


def test_an_impossible_cutoff_is_flagged(mini):
    write(mini / "atlas.yaml", "cutoff: 2026-02-30\n")
    found = [p for p in load_data(mini).problems if p.code == "bad-date"]
    assert found and found[0].location.file.endswith("atlas.yaml") and found[0].location.line == 1


@pytest.mark.parametrize("args", [["query", "board-a"], ["map", "-o", "never-written"]])
def test_impossible_as_of_is_rejected(mini, args):
    for bad in ("2026-13-45", "2026-02-30"):
        code, out = invoke(*args, "--as-of", bad, "--data", str(mini))
        assert code == 2 and "is not a day" in out
    assert not Path("never-written").exists()


def test_export_into_a_folder_that_refuses_writes_gives_a_message(mini, tmp_path):
    blocker = write(tmp_path / "file", "x")
    for target in (blocker / "atlas.ttl", Path("/proc/atlas-export.ttl")):
        r = atlas("export", "-o", str(target), data=mini)
        err = r.stderr.decode()
        assert r.returncode == 1 and "cannot write the export" in err and "Traceback" not in err, err

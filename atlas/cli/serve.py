"""`atlas serve`: the atlas for coding assistants (`--mcp`, the Model Context Protocol over stdio) or
for SPARQL clients (`--sparql`, a read-only SPARQL 1.1 Protocol endpoint over HTTP)."""
from __future__ import annotations

import click

from ..errors import AtlasError, Location
from .common import data_option, table_option


@click.command()
@click.option("--mcp", "mcp_", is_flag=True, help="Speak the Model Context Protocol over stdio.")
@click.option("--sparql", "sparql_", is_flag=True, help="Serve a read-only SPARQL 1.1 Protocol endpoint over HTTP.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --sparql: the address to listen on (loopback unless you say otherwise).")
@click.option("--port", type=click.IntRange(0, 65535), default=7979, show_default=True,
              help="With --sparql: the TCP port (0: any free one; the URL is printed).")
@click.option("--max-concurrent", type=click.IntRange(1, 64), default=2, show_default=True,
              help="With --sparql: queries evaluated at once; others wait up to the time limit, then get 503.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="With --sparql: also answer requests whose Host is NAME (repeatable; by default only "
                   "localhost, 127.0.0.1 and [::1]).")
@click.option("--cors", default=None, metavar="ORIGIN",
              help="With --sparql: let pages from this origin (https://example.org) query the endpoint (CORS; off "
                   "by default).")
@table_option("timeout")
@table_option("max_rows")
@data_option
def serve(mcp_, sparql_, host, port, max_concurrent, allow_hosts, cors, timeout, max_rows, data_dir):
    """Serve the atlas: to a coding assistant (--mcp) or to SPARQL clients (--sparql).

    --mcp needs the optional extra: pip install 'ascend-atlas[mcp]'. --sparql needs
    pip install 'ascend-atlas[server]' and answers GET and POST queries at http://HOST:PORT/sparql
    (JSON, XML, CSV, TSV, Turtle, JSON-LD, N-Triples, N-Quads, TriG by content negotiation) under
    the same limits as `atlas query --sparql`; updates and SERVICE are refused; GET /sparql without
    a query answers with the SPARQL 1.1 Service Description. Either server reads the atlas, writes
    nothing into the data directory and makes no network request of its own.

    \b
    Examples (an assistant's MCP configuration runs the first):
      atlas serve --mcp
      atlas serve --mcp --data ./data
      atlas serve --sparql
      atlas serve --sparql --port 8000 --timeout 10
      atlas serve --sparql --cors https://yasgui.example.org
    """
    if mcp_ == sparql_:
        raise click.UsageError("say which protocol to serve: --mcp or --sparql")
    if cors and not sparql_:
        raise click.UsageError("--cors goes with --sparql")
    if sparql_:
        _serve_sparql(data_dir, host, port, max_concurrent, timeout, max_rows, allow_hosts, cors)
        return
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise AtlasError("the MCP server needs the optional extra", Location("--mcp"),
                         "pip install 'ascend-atlas[mcp]'") from None
    from ..mcp.sdk import serve as run
    from ..opened import Opened

    Opened(data_dir)  # a broken atlas fails here, with located problems, before the protocol starts (the
    # records themselves are read when a tool first needs them, so that start-up does not wait for them)
    run(data_dir)


def _serve_sparql(data_dir, host, port, max_concurrent, timeout, max_rows, allow_hosts=(), cors=None) -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise AtlasError("the SPARQL endpoint needs the optional extra", Location("--sparql"),
                         "pip install 'ascend-atlas[server]'") from None
    from ..linked.endpoint import Limits, allowed_hosts, serve as run

    limits = Limits(max_concurrent=max_concurrent)
    if timeout is not None:
        limits.timeout = timeout
    if max_rows is not None:
        limits.max_rows = max_rows
    if cors is not None:
        _check_origin(cors)
    run(data_dir, host, port, limits, allowed_hosts(allow_hosts), cors)


def _check_origin(origin: str) -> None:
    """An origin is a scheme, a host and maybe a port: https://example.org or http://127.0.0.1:8080."""
    from urllib.parse import urlsplit

    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query or parts.fragment:
        raise AtlasError(f'"{origin[:80]}" is not an origin', Location("--cors"),
                         "give a scheme and a host, and a port if any: https://example.org or http://127.0.0.1:8080")

"""`atlas serve --mcp`: the atlas for coding assistants, as a Model Context Protocol server."""
from __future__ import annotations

import click

from ..errors import AtlasError, Location
from .common import data_option


@click.command()
@click.option("--mcp", "mcp_", is_flag=True, help="Speak the Model Context Protocol over stdio.")
@data_option
def serve(mcp_, data_dir):
    """Serve the atlas to a coding assistant (Model Context Protocol over stdio).

    Needs the optional extra: pip install 'ascend-atlas[mcp]'. The server reads the atlas, writes
    nothing into the data directory and makes no network request.

    \b
    Example (an assistant's MCP configuration runs this):
      atlas serve --mcp
      atlas serve --mcp --data ./data
    """
    if not mcp_:
        raise click.UsageError("say which protocol to serve: --mcp")
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise AtlasError("the MCP server needs the optional extra", Location("--mcp"),
                         "pip install 'ascend-atlas[mcp]'") from None
    from ..mcpserver import serve as run
    from ..opened import Opened

    Opened(data_dir).atlas  # a broken atlas fails here, with located problems, before the protocol starts
    run(data_dir)

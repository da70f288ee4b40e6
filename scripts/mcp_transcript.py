"""Record a real MCP session for the README: the SDK's stdio client starts `atlas serve --mcp`,
calls `search` and then `card` on 直驱, and the exchange is printed (long JSON is shortened).

    python scripts/mcp_transcript.py            # print the transcript
    python scripts/mcp_transcript.py --readme   # rewrite README.md between the mcp markers
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- mcp:start -->", "<!-- mcp:end -->"
CALLS = [("search", {"text": "直驱", "limit": 3}), ("card", {"term": "直驱", "lang": "en"})]
# keys of a card shown in full; the others are named only (the client receives everything)
CARD_KEYS = ("id", "kind", "names", "answers", "evidence", "first_visible")


def _short(value, depth=0):
    """Keep the shape of a JSON value but cut long lists and strings."""
    if isinstance(value, dict):
        return {k: _short(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        head = [_short(v, depth + 1) for v in value[:2]]
        return head + ([f"... {len(value) - 2} more"] if len(value) > 2 else [])
    if isinstance(value, str) and len(value) > 90:
        return value[:87] + "..."
    return value


async def _session() -> list[str]:
    env = {k: os.environ[k] for k in ("ATLAS_CACHE", "ATLAS_DATA") if k in os.environ}
    params = StdioServerParameters(command=sys.executable, args=["-m", "atlas", "serve", "--mcp"], env=env)
    lines = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                info = await s.initialize()
                lines.append(f"-> initialize\n<- server {info.server_info.name} {info.server_info.version}")
                tools = await s.list_tools()
                lines.append("-> tools/list\n<- " + ", ".join(t.name for t in tools.tools))
                for name, args in CALLS:
                    r = await s.call_tool(name, args)
                    value = json.loads(r.content[0].text)
                    if name == "card":
                        rest = sorted(k for k in value if k not in CARD_KEYS)
                        value = {k: value[k] for k in CARD_KEYS} | {"(also)": ", ".join(rest)}
                    body = json.dumps(_short(value), ensure_ascii=False, indent=2)
                    lines.append(f"-> tools/call {name} {json.dumps(args, ensure_ascii=False)}\n<- {body}")
    return lines


def render() -> str:
    return "```text\n" + "\n\n".join(anyio.run(_session)) + "\n```\n"


def main(argv):
    text = render()
    if "--readme" not in argv:
        print(text)
        return 0
    readme = ROOT / "README.md"
    old = readme.read_text(encoding="utf-8")
    head, _, rest = old.partition(START)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{START}\n{text}{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

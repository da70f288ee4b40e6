"""Record a real MCP session for docs/mcp.md: the SDK's stdio client starts `atlas serve --mcp`,
lists its tools (titles, hints, output schemas) and resources, calls `search` and then `card` on 直驱,
and asks for the first page of every claim; the exchange is printed (long JSON is shortened; the
client receives everything, and validates each answer against the tool's output schema).

    python scripts/mcp_transcript.py            # print the transcript
    python scripts/mcp_transcript.py --docs     # rewrite docs/mcp.md between the mcp markers
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
CALLS = [("search", {"text": "直驱", "limit": 3}), ("card", {"term": "直驱", "lang": "en"}),
         ("claims", {"status": "confirmed"})]
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


def _tool_line(t) -> str:
    hints = t.annotations
    marks = [h for h, on in (("read-only", hints.read_only_hint), ("idempotent", hints.idempotent_hint)) if on]
    shape = t.output_schema["title"]
    return f"{t.name}: {t.title} ({', '.join(marks)}; answers {shape})"


def _shown(name: str, value: dict) -> dict:
    """The part of an answer docs/mcp.md shows."""
    if name == "card":
        rest = sorted(k for k in value if k not in CARD_KEYS)
        return {k: value[k] for k in CARD_KEYS} | {"(also)": ", ".join(rest)}
    if name == "claims":
        return {"claims": [{"id": c["id"], "status": c["status"]} for c in value["claims"]], "page": value["page"]}
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
                lines.append("-> tools/list\n<- " + "\n   ".join(_tool_line(t) for t in (await s.list_tools()).tools))
                resources = (await s.list_resources()).resources
                lines.append("-> resources/list\n<- " + "\n   ".join(f"{r.uri}  {r.title}" for r in resources))
                for name, args in CALLS:
                    r = await s.call_tool(name, args)
                    value = _shown(name, r.structured_content)
                    body = json.dumps(_short(value), ensure_ascii=False, indent=2)
                    lines.append(f"-> tools/call {name} {json.dumps(args, ensure_ascii=False)}\n<- {body}")
    return lines


def render() -> str:
    return "```text\n" + "\n\n".join(anyio.run(_session)) + "\n```\n"


def main(argv):
    text = render()
    if "--docs" not in argv:
        print(text)
        return 0
    readme = ROOT / "docs" / "mcp.md"
    old = readme.read_text(encoding="utf-8")
    head, _, rest = old.partition(START)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{START}\n{text}{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

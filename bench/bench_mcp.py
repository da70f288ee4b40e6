"""The MCP server under load, through the SDK's own stdio client against `atlas serve --mcp`:

1. answer sizes: the bytes of the text an assistant receives from `claims()`, `timeline()`,
   `search(limit=100)` and a 2,000-row `sparql` SELECT - the whole answer, or its largest page and
   the number of pages when the server pages (a page must stay under 20,000 bytes);
2. the latency of a `search` sent while six slow (cartesian, time-limited) SPARQL queries run,
   against the same search on an idle server.

Run: python bench/bench_mcp.py (uses the bundled data and the normal cache).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
BIG = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 2000"
SIZED = [("claims", {}), ("timeline", {}), ("search", {"text": "hccl", "limit": 100}), ("sparql", {"query": BIG})]


def _next(value) -> str | None:
    page = value.get("page") if isinstance(value, dict) else None
    return page.get("next_cursor") if isinstance(page, dict) else None


async def _sizes(s: ClientSession) -> list[str]:
    lines = []
    for name, args in SIZED:
        sizes, cursor = [], None
        while True:
            r = await s.call_tool(name, {**args, **({"cursor": cursor} if cursor else {})})
            text = r.content[0].text
            sizes.append(len(text.encode()))
            cursor = _next(json.loads(text))
            if not cursor:
                break
        total = sum(sizes)
        lines.append(f"{name}{json.dumps(args)[:40]}: {len(sizes)} page(s), largest {max(sizes):,} bytes, "
                     f"all {total:,} bytes")
    return lines


async def _timed(s: ClientSession, name: str, args: dict) -> float:
    t0 = time.perf_counter()
    await s.call_tool(name, args)
    return time.perf_counter() - t0


async def _behind_slow(s: ClientSession) -> tuple[float, float]:
    """Seconds for one search while six slow queries run, and for all six to finish."""
    done: list[float] = []
    t0 = time.perf_counter()

    async def slow():
        await s.call_tool("sparql", {"query": SLOW})
        done.append(time.perf_counter() - t0)

    async with anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(slow)
        await anyio.sleep(0.5)  # the six have started
        search = await _timed(s, "search", {"text": "direct drive"})
    return search, max(done)


async def main() -> None:
    env = {k: v for k, v in os.environ.items() if k.startswith(("ATLAS_", "PATH", "HOME", "XDG_"))}
    params = StdioServerParameters(command=sys.executable, args=["-m", "atlas", "serve", "--mcp"], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("sparql", {"query": "ASK { ?s ?p ?o }"})  # warm the triples and the index
                for line in await _sizes(s):
                    print(line)
                idle = statistics.median([await _timed(s, "search", {"text": "direct drive"}) for _ in range(9)])
                behind, slowest = await _behind_slow(s)
    print(f"search on an idle server: {idle * 1000:.0f} ms (median of 9)")
    print(f"search behind six cartesian SPARQL queries: {behind * 1000:.0f} ms; "
          f"the six finished after {slowest:.1f} s")


if __name__ == "__main__":
    anyio.run(main)

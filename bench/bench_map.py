"""Scale check of `atlas map` (issue 5): a generated atlas of 10,000 concepts and 30,000
relations must be written in <= 10 s and open in the browser in a usable state.

Not a timed test; run by hand:

    /work/venv/bin/python bench/bench_map.py [--concepts 10000] [--relations 30000] [--out DIR]
                                             [--no-browser]

Prints the build time, the page size and, when Chromium is available, the time until the page
is ready (network drawn, test hook installed) and the time of a search and of a card.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atlas.model import (  # noqa: E402
    KINDS, QUESTION_IDS, RELATION_TYPES, Atlas, Concept, Evidence, Flow, FlowEdge, FlowStep, Pin,
    Question, Relation, Repository, Sighting, Text)

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def generate(n_concepts: int, n_relations: int, seed: int = 5) -> Atlas:
    rnd = random.Random(seed)
    repos = [Repository(f"org{i}/repo{i}", urls=[f"https://github.com/org{i}/repo{i}"])
             for i in range(40)]
    questions = [Question(q, Text(f"Who does {q}?", f"谁{q}")) for q in QUESTION_IDS]
    concepts, sightings = [], []
    for i in range(n_concepts):
        cid = f"c{i:05d}"
        answers = {q: Text(f"{cid} answers {q}", f"{cid} 回答 {q}")
                   for q in rnd.sample(QUESTION_IDS, rnd.choice((0, 1, 1, 1, 2, 2, 3)))}
        repo = repos[i % len(repos)].id
        concepts.append(Concept(
            cid, KINDS[i % len(KINDS)], Text(f"Concept {i}", f"概念{i}"),
            aliases={"en": [f"alias-{i}"], "zh": [f"别名{i}"]}, answers=answers,
            beginner=Text(f"Beginner text of concept {i}.", f"概念{i}的入门解释。"),
            professional=Text(f"Professional text of concept {i}.", f"概念{i}的专业解释。"),
            evidence=[Evidence(pin=Pin(repo, f"{i:040x}", f"src/f{i}.cc", 10, 20),
                               supports=Text("shows it", "证明"))]))
        if i % 10:
            year = 2018 + i % 9
            sightings.append(Sighting(cid, repo, "term", f"t{i}", True, sha=f"{i:040x}",
                                      committer_date=f"{year}-{1 + i % 12:02d}-{1 + i % 28:02d}"
                                                     "T00:00:00+00:00"))
    types = sorted(RELATION_TYPES)
    seen = set()
    while len(seen) < n_relations:
        a, b = rnd.randrange(n_concepts), rnd.randrange(n_concepts)
        t = rnd.choice(types)
        if a == b or (a, t, b) in seen:
            continue
        seen.add((a, t, b))
        concepts[a].relations.append(Relation(t, concepts[a].id, concepts[b].id))
    flows = []
    for f in range(20):
        steps = [FlowStep(f"s{j}", Text(f"step {j}", f"步骤{j}"), ("host", "aiv", "nic")[j % 3],
                          [concepts[(f * 97 + j * 13) % n_concepts].id]) for j in range(12)]
        edges = [FlowEdge(f"s{j}", f"s{j + 1}", ("data", "sync", "control", "order")[j % 4])
                 for j in range(11)]
        flows.append(Flow(f"flow-{f}", Text(f"Flow {f}", f"流程{f}"), steps=steps, edges=edges))
    return Atlas(questions=questions, concepts=concepts, flows=flows, repositories=repos,
                 sightings=sightings)


def open_in_browser(index: Path) -> dict:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        blocked = []
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                   else (blocked.append(r.request.url), r.abort()))
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        t0 = time.perf_counter()
        page.goto(index.as_uri(), timeout=120_000)
        page.wait_for_function("window.atlasMap && window.atlasMap.ready", timeout=120_000)
        # one animation frame after ready: the first drawing is on screen
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        out["open_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        hits = page.evaluate("atlasMap.search('别名4242')")
        out["search_s"] = time.perf_counter() - t1
        out["search_hits"] = len(hits)
        t2 = time.perf_counter()
        page.evaluate("atlasMap.select('c04242')")
        page.wait_for_selector("#card h2")
        out["card_s"] = time.perf_counter() - t2
        t3 = time.perf_counter()
        page.evaluate("atlasMap.setAsOf('2020-01-01')")
        out["asof_s"] = time.perf_counter() - t3
        t4 = time.perf_counter()
        page.evaluate("atlasMap.setView('kind')")
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        out["view_s"] = time.perf_counter() - t4
        out["nodes"] = page.evaluate("atlasMap.nodeCount()")
        out["edges"] = page.evaluate("atlasMap.edgeCount()")
        out["errors"] = errors
        out["blocked"] = blocked
        page.screenshot(path=str(index.parent / "bench.png"))
        browser.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concepts", type=int, default=10_000)
    ap.add_argument("--relations", type=int, default=30_000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()

    t = time.perf_counter()
    atlas = generate(args.concepts, args.relations)
    gen_s = time.perf_counter() - t
    out = Path(args.out or tempfile.mkdtemp(prefix="atlas-bench-"))
    from atlas.htmlmap import build_site

    t = time.perf_counter()
    paths = build_site(atlas, out)
    build_s = time.perf_counter() - t
    size = paths[0].stat().st_size
    print(f"generated {args.concepts} concepts / {args.relations} relations in {gen_s:.2f} s")
    print(f"build_site: {build_s:.2f} s for {len(paths)} pages; index.html {size / 1e6:.1f} MB "
          f"({'OK' if build_s <= 10 else 'OVER'} the 10 s budget)  -> {out}")
    if args.no_browser:
        return 0 if build_s <= 10 else 1
    if not Path(CHROMIUM).exists():
        print("chromium not found at /usr/bin/chromium: browser timing skipped")
        return 0 if build_s <= 10 else 1
    r = open_in_browser(paths[0])
    print(f"browser: ready and drawn in {r['open_s']:.2f} s; search {r['search_s'] * 1000:.0f} ms "
          f"({r['search_hits']} hit); card {r['card_s'] * 1000:.0f} ms; as-of change "
          f"{r['asof_s'] * 1000:.0f} ms; view toggle {r['view_s'] * 1000:.0f} ms; "
          f"{r['nodes']} nodes, {r['edges']} edges; console errors {len(r['errors'])}; "
          f"blocked requests {len(r['blocked'])}; screenshot {out / 'bench.png'}")
    return 0 if build_s <= 10 and not r["errors"] and not r["blocked"] else 1


if __name__ == "__main__":
    sys.exit(main())

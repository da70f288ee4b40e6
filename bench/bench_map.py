"""Time to interactive of the site's pages, at the bundled atlas's size and at a generated
10,000 concepts / 30,000 relations. Not a timed test; run by hand (after `pip install -e .`):

    python bench/bench_map.py [--concepts 10000] [--relations 30000] [--no-browser]

For each size it builds the site once, then opens in Chromium every page that the build wrote
among index.html (the compact overview), explorer.html, timeline.html and map.html, and the flow
page with the most steps (21 in both atlases),
and prints the time until the page's test hook reports ready and two animation frames have
passed (drawn and usable). On the explorer it also times a search, opening a concept's
neighbourhood (focus mode) and a click that expands a neighbour. The floor is `python -c pass`
measured in the same run; figures are printed as seconds and as multiples of the floor.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atlas.model.core import (
    KINDS, QUESTION_IDS, RELATION_TYPES, Atlas, Concept, Evidence, Flow, FlowEdge, FlowStep, Pin, Question,
    Relation, Repository, Sighting, Text,
)

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _long_label(j: int) -> Text:
    return Text(f"step {j}: " + "words of a long label " * 6, f"步骤{j}：" + "一段较长的说明" * 6)


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
        n = 21 if f == 0 else 12  # one flow as long as the bundled atlas's longest
        steps = [FlowStep(f"s{j}", _long_label(j),
                          ("host", "aiv", "nic")[j % 3], [concepts[(f * 97 + j * 13) % n_concepts].id],
                          title=Text(f"Step {j} title", f"步骤{j}标题"),
                          source=Evidence(pin=Pin(repos[0].id, f"{j:040x}", "src/x.cc", j + 1, j + 2)))
                 for j in range(n)]
        edges = [FlowEdge(f"s{j}", f"s{j + 1}", ("data", "sync", "control", "order")[j % 4])
                 for j in range(n - 1)]
        flows.append(Flow(f"flow-{f}", Text(f"Flow {f}", f"流程{f}"), steps=steps, edges=edges))
    return Atlas(questions=questions, concepts=concepts, flows=flows, repositories=repos,
                 sightings=sightings)


PAGES = (("index.html", "atlasOverview"), ("explorer.html", "atlasMap"), ("timeline.html", "atlasTimeline"),
         ("map.html", None))


def _ready(page, hook: str | None, timeout_s: float = 120.0):
    """Wait for the page's test hook (or the load event), then two animation frames."""
    end = time.perf_counter() + timeout_s
    if hook:
        while not page.evaluate(f"!!(window.{hook} && window.{hook}.ready)"):
            if time.perf_counter() > end:
                raise RuntimeError(f"{hook} never became ready")
            page.wait_for_timeout(10)
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _hook_of(path: Path) -> str | None:
    """The page's test hook: window.atlas<Name> if its script sets one, else none."""
    import re

    m = re.search(r"window\.(atlas[A-Z][A-Za-z]*) = Object\.freeze", path.read_text("utf-8"))
    return m.group(1) if m else None


def open_pages(out: Path, flows: list[Path]) -> list[dict]:
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        targets = [(out / name, hook) for name, hook in PAGES if (out / name).exists()]
        if flows:  # the flow with the most steps
            largest = max(flows, key=lambda f: (f.read_text("utf-8").count('<li class="step"'), f.name))
            targets.append((largest, "atlasFlow"))
        for path, hook in targets:
            hook = hook or _hook_of(path)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            blocked, errors = [], []
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else (blocked.append(r.request.url), r.abort()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            t0 = time.perf_counter()
            page.goto(path.as_uri(), timeout=120_000)
            _ready(page, hook)
            r = {"page": path.name, "ready_s": time.perf_counter() - t0,
                 "bytes": path.stat().st_size}
            if path.name == "explorer.html":
                ids = page.evaluate("atlasMap.drawnIds()")
                r["drawn_at_open"] = len(ids)
                t1 = time.perf_counter()
                hit = page.evaluate("atlasMap.search('hccs')")[:1] or page.evaluate("atlasMap.search('c04242')")[:1]
                r["search_s"] = time.perf_counter() - t1
                target = hit[0] if hit else ids[0]
                t2 = time.perf_counter()
                page.evaluate(f"atlasMap.open({target!r})")
                page.evaluate("new Promise(r => requestAnimationFrame(r))")
                r["focus_s"] = time.perf_counter() - t2
                r["focus_drawn"] = page.evaluate("atlasMap.nodeCount()")
                r["label_px"] = page.evaluate("atlasMap.labelPx()")
                nb = [i for i in page.evaluate("atlasMap.drawnIds()") if i != target]
                if nb:
                    t3 = time.perf_counter()
                    page.evaluate(f"atlasMap.select({nb[0]!r})")
                    page.evaluate("new Promise(r => requestAnimationFrame(r))")
                    r["expand_s"] = time.perf_counter() - t3
                r["crossings"] = len(page.evaluate("atlasMap.crossings()"))
                page.screenshot(path=str(out / "bench-explorer.png"))
            r["errors"], r["blocked"] = errors, blocked
            results.append(r)
            page.close()
        browser.close()
    return results


def floor_s(runs: int = 5) -> float:
    import subprocess

    best = None
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        d = time.perf_counter() - t
        best = d if best is None else min(best, d)
    return best


def run(label: str, atlas: Atlas, out: Path, browser: bool, floor: float) -> bool:
    from atlas.site import build_site

    t = time.perf_counter()
    paths = build_site(atlas, out)
    build_s = time.perf_counter() - t
    print(f"[{label}] {len(atlas.concepts)} concepts, {len(list(atlas.relations()))} relations: "
          f"build_site {build_s:.2f} s ({build_s / floor:.0f}x floor) for {len(paths)} pages -> {out}")
    ok = True
    if not browser:
        return ok
    if not Path(CHROMIUM).exists():
        print("chromium not found at /usr/bin/chromium: browser timing skipped")
        return ok
    for r in open_pages(out, [p for p in paths if p.name.startswith("flow-")]):
        extra = ""
        if "focus_s" in r:
            extra = (f"; {r['drawn_at_open']} drawn at open; search {r['search_s'] * 1000:.0f} ms; "
                     f"focus {r['focus_s'] * 1000:.0f} ms ({r['focus_drawn']} drawn, labels "
                     f"{r['label_px']:.1f} px); expand {r.get('expand_s', 0) * 1000:.0f} ms; "
                     f"edges through boxes {r['crossings']}")
        print(f"  {r['page']}: interactive in {r['ready_s']:.2f} s ({r['ready_s'] / floor:.0f}x "
              f"floor), {r['bytes'] / 1e6:.2f} MB{extra}; console errors {len(r['errors'])}, "
              f"blocked requests {len(r['blocked'])}")
        ok = ok and not r["errors"] and not r["blocked"]
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concepts", type=int, default=10_000)
    ap.add_argument("--relations", type=int, default=30_000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    from atlas.index.compiled import load_atlas

    floor = floor_s()
    print(f"floor: python -c pass {floor * 1000:.0f} ms")
    base = Path(args.out or tempfile.mkdtemp(prefix="atlas-bench-"))
    ok = run("bundled", load_atlas(Path(__file__).resolve().parent.parent / "data"),
             base / "bundled", not args.no_browser, floor)
    t = time.perf_counter()
    atlas = generate(args.concepts, args.relations)
    print(f"generated {args.concepts} concepts / {args.relations} relations in "
          f"{time.perf_counter() - t:.2f} s")
    ok = run("generated", atlas, base / "generated", not args.no_browser, floor) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

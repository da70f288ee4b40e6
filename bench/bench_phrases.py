"""The phrase suite (bench/phrases.yaml): how often `atlas query PHRASE` gives an acceptable first
answer (top-1) or one among its first three (top-3), by class of phrase, and how long the slowest
phrases take in a new process against the floor `python -c pass`.

Each phrase runs through the command function of `atlas query` (`atlas.commands.show`, JSON). The
answers of a result, in order: a comparison ("compare:a+b"), then the ranked hits; a concept card
is "concept:ID"; an honest miss is no answer. With `--code ROOT` the atlas package is imported from
another checkout (e.g. the main branch before a change), so that both are measured by one script.

Targets: top-1 >= 95 %; the slowest phrase <= 3x `python -c pass`.
Run: python bench/bench_phrases.py [--code ROOT] [--data DIR] [--phrases FILE] [--runs N] [--no-time]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent


def answers_of(value) -> list[str]:
    """The answers a query's JSON gives, first answer first ("type:id", "compare:a+b")."""
    if not isinstance(value, dict) or "error" in value:
        return []
    if "hits" not in value:  # a concept card
        return [f"concept:{value['id']}"]
    out = []
    intent = value.get("intent") or {}
    if intent.get("kind") == "comparison":
        out.append("compare:" + "+".join(intent.get("concepts", [])))
    out += [f"{h['type']}:{h['id']}" for h in value["hits"]]
    return out


def same(got: str, want: str) -> bool:
    if want.startswith("compare:") and got.startswith("compare:"):
        return set(want[8:].split("+")) == set(got[8:].split("+"))
    return got == want


def score(row: dict, got: list[str]) -> tuple[bool, bool]:
    """(top-1, top-3) of one phrase: an acceptable answer first / among the first three. A phrase
    that should find nothing scores only when nothing is found."""
    want = row["answers"]
    if not want:
        return not got, not got
    first = bool(got) and any(same(got[0], w) for w in want)
    three = any(same(g, w) for g in got[:3] for w in want)
    return first, three


def run_suite(phrases: list[dict], data: str | None) -> list[dict]:
    from atlas import commands

    results = []
    for row in phrases:
        t0 = time.perf_counter()
        done = commands.show(row["phrase"], "en", "json", data)
        seconds = time.perf_counter() - t0
        value = json.loads(done.out) if done.out else {}
        got = answers_of(value)
        top1, top3 = score(row, got)
        intent = (value.get("intent") or {}) if isinstance(value, dict) else {}
        results.append({"row": row, "got": got[:3], "top1": top1, "top3": top3, "code": done.code,
                        "intent": intent.get("kind"), "question": intent.get("question"),
                        "seconds": seconds})
    return results


def report(results: list[dict]) -> None:
    n = len(results)
    top1 = sum(r["top1"] for r in results)
    top3 = sum(r["top3"] for r in results)
    print(f"phrases: {n} ({sum(1 for r in results if _zh(r['row']['phrase']))} Chinese), "
          f"top-1 {top1}/{n} = {top1 / n:.1%}, top-3 {top3}/{n} = {top3 / n:.1%}  (goal: top-1 >= 95%)")
    classes: dict[str, list[dict]] = {}
    for r in results:
        classes.setdefault(r["row"].get("class", "-"), []).append(r)
    for name, rows in sorted(classes.items()):
        print(f"  {name:<8} {len(rows):>4}  top-1 {sum(r['top1'] for r in rows) / len(rows):6.1%}"
              f"  top-3 {sum(r['top3'] for r in rows) / len(rows):6.1%}")
    scored = [r for r in results if r["row"].get("intent")]
    if scored:
        right = sum(1 for r in scored if r["intent"] == r["row"]["intent"]
                    and r["row"].get("question") in (None, r["question"]))
        print(f"  intent recognised: {right}/{len(scored)} = {right / len(scored):.1%}")
    for r in results:
        if not r["top1"]:
            mark = "top-3" if r["top3"] else "miss "
            print(f"  {mark} {r['row']['phrase']!r}: want {r['row']['answers']}, got {r['got']}")
    for r in scored:
        if r["intent"] != r["row"]["intent"] or r["row"].get("question") not in (None, r["question"]):
            print(f"  intent {r['row']['phrase']!r}: want {r['row']['intent']}"
                  f"{'/' + r['row']['question'] if r['row'].get('question') else ''}, got {r['intent']}"
                  f"{'/' + r['question'] if r['question'] else ''}")


def _zh(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def latency(results: list[dict], code: str | None, data: str | None, runs: int, worst: int = 8) -> None:
    """Every phrase timed as a new `atlas query` process (the best of three); the slowest `worst`
    then timed again `runs` times, interleaved with the floor `python -c pass`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode kept
    if code:
        env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
    extra = ["--data", data] if data else []
    cmds = {r["row"]["phrase"]: [sys.executable, "-m", "atlas", "query", *r["row"]["phrase"].split(), *extra]
            for r in results}
    first = {name: min(_wall(cmd, env) for _ in range(3)) for name, cmd in cmds.items()}
    slow = sorted(first, key=lambda name: -first[name])[:worst]
    timed = {"python -c pass": [sys.executable, "-c", "pass"], **{name: cmds[name] for name in slow}}
    samples: dict[str, list[float]] = {k: [] for k in timed}
    for _ in range(runs):
        for name, cmd in timed.items():
            samples[name].append(_wall(cmd, env))
    floor = statistics.median(samples.pop("python -c pass"))
    print(f"floor python -c pass: {floor * 1000:.1f} ms (median of {runs}); all {len(cmds)} phrases: median "
          f"{statistics.median(first.values()) * 1000:.1f} ms ({statistics.median(first.values()) / floor:.2f}x)")
    ratios = []
    for name, times in samples.items():
        t = statistics.median(times)
        ratios.append(t / floor)
        print(f"  {t * 1000:6.1f} ms  {t / floor:4.2f}x  atlas query {name}")
    print(f"slowest phrase {max(ratios):.2f}x the floor (goal <= 3x)")


def _wall(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", help="import the atlas package from this checkout")
    ap.add_argument("--data", help="data folder (default: the checkout's)")
    ap.add_argument("--phrases", default=str(HERE / "phrases.yaml"))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-time", action="store_true", help="relevance only")
    args = ap.parse_args(argv)
    if args.code:
        sys.path.insert(0, str(Path(args.code).resolve()))
    phrases = yaml.safe_load(Path(args.phrases).read_text(encoding="utf-8"))
    run_suite(phrases[:3], args.data)  # warm the caches
    results = run_suite(phrases, args.data)
    report(results)
    if not args.no_time:
        latency(results, args.code, args.data, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

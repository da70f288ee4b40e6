"""Regenerate the tour (docs/tour.md) from real command output (run after data changes).

    python scripts/docs_tour.py          # rewrite docs/tour.md between the tour markers
    python scripts/docs_tour.py --check  # exit 1 if docs/tour.md is stale (tests/test_docs.py runs this)
    ATLAS_REPOS=DIR python scripts/docs_tour.py --code  # also the code part (needs the clones)

The code part of the tour (`atlas where`, `atlas source`) shows source lines read from local clones,
so it is written only with --code and never checked: a checkout without clones prints the hint instead.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- tour:start -->", "<!-- tour:end -->"
CODE_START, CODE_END = "<!-- tour-code:start -->", "<!-- tour-code:end -->"
WIDTH = 110

TOUR = [
    ("A concept card: every question it answers, both explanations, relations, claims, evidence, history.",
     ["query", "hccs"]),
    ("Chinese works the same way (case- and width-insensitive, aliases and unique prefixes too).",
     ["query", "直驱", "--lang", "zh"]),
    ("HCCL, HiXL and SHMEM answer different questions:", ["compare", "hccl", "hixl", "ascend-shmem"]),
    ("Mooncake's three Ascend build flags side by side: none is AIV direct drive.",
     ["compare", "use-ascend", "use-ascend-direct", "use-ubshmem"]),
    ("The six-question matrix - the table that shows these terms are not layers of one stack:",
     ["questions"]),
    ("Words that name no single concept give one ranked search over concepts, claims, flows and repositories,"
     " each hit with the text it matched in:", ["query", "collective", "communication", "library"]),
    ("The same in Chinese: a phrase inside a longer sentence matches.", ["query", "集合通信", "算法"]),
    ("A question is read before anything is ranked: the answer comes first (here the history of the concept"
     " it names), then the ranked list.", ["query", "when", "did", "hccs", "first", "appear"]),
    ("One of the six questions, asked in Chinese, answered with that answer:",
     ["query", "hixl", "对端参与吗", "--lang", "zh"]),
    ("Nothing found is said plainly, in the question's language, with the nearest names (exit code 1):",
     ["query", "menfabrik-hibryd"]),
    ("Filters and free text:", ["query", "kind:engine"]),
    ("A typed path through the graph:", ["path", "use-ubshmem", "ascend-shmem"]),
    ("Every claim, one line each, grouped by status (`--full` for the evidence):", ["claims"]),
    ("Claims with status and evidence, ranked for a topic (their text and the concepts they are about):",
     ["claims", "Mooncake"]),
    ("What the atlas knows about a repository: purpose, mirror and migration, harvest and probes:",
     ["repo", "hicann/shmem"]),
    ("A flow as ordered steps with actors, concepts and pins:", ["flow", "minimal-shmem-link"]),
    ("The history axis:", ["timeline", "--repo", "kvcache-ai/Mooncake"]),
    ("Every public API symbol of the harvested repositories (read from their public headers at every mainline "
     "commit), with the commit and the release where it first appeared, its signature changes and its release "
     "columns (★ first, ✓ present, Δ changed, ✗ removed):", ["api", "aclshmemx_udma_put_nbi"]),
    ("What changed in HCCL's public headers between two releases - the release notes nobody writes:",
     ["api", "--diff", "v8.5.0", "v9.0.0", "--repo", "hicann/hccl"]),
    ("What appeared after a release (first released after it, then what no release holds yet):",
     ["api", "--repo", "hicann/hixl", "--since", "v9.0.0"]),
]


CODE_TOUR = [
    ("Back from a line to the atlas: every record whose pin covers it, the function around it (from the clones)"
     " and the nearest pins.", ["where", "shmem_device_udma.hpp:490"]),
    ("Forward from a flow step to its code: the lines, who cites them, the function, its calls and its callers"
     " (piped, so plain; a terminal gets colours). The source lines themselves are printed from your clone;"
     " the tour folds them into one bracketed line, because the project copies no third-party code.",
     ["source", "tensor-to-wqe-lowering", "doorbell"]),
    ("A line number alone, or a function name, is a query too:", ["query", "aclshmemi_udma_post_send"]),
]


_SOURCE_LINE = re.compile(r"^\s*(\d+) \| ")


def without_source_lines(out: str) -> str:
    """The output with each run of numbered source lines folded into one line that says what it held:
    the sources behind the pins are under their own licences, so the tour shows where, not what."""
    kept: list[str] = []
    run: list[str] = []
    for line in out.splitlines() + [""]:
        m = _SOURCE_LINE.match(line)
        if m:
            run.append(m[1])
            continue
        if run:
            kept.append(f"[lines {run[0]}-{run[-1]} of the file: {len(run)} source lines, printed from your clone]")
            run = []
        kept.append(line)
    return "\n".join(kept[:-1])


def render(tour=TOUR) -> str:
    os.environ["COLUMNS"] = str(WIDTH)
    os.environ.pop("ATLAS_DATA", None)
    from click.testing import CliRunner

    from atlas.cli import cli

    parts = []
    for text, args in tour:
        result = CliRunner().invoke(cli, args, terminal_width=WIDTH)
        out = without_source_lines(result.output.rstrip("\n"))
        parts.append(f"{text}\n\n```console\n$ atlas {' '.join(args)}\n{out}\n```\n")
    return "\n".join(parts)


def main(argv):
    readme = ROOT / "docs" / "tour.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    new = f"{head}{START}\n{render()}{END}{tail}"
    if "--code" in argv:
        if not os.environ.get("ATLAS_REPOS"):
            print("--code needs ATLAS_REPOS (the folder of the clones)", file=sys.stderr)
            return 2
        before, _, rest = new.partition(CODE_START)
        _, _, after = rest.partition(CODE_END)
        new = f"{before}{CODE_START}\n{render(CODE_TOUR)}{CODE_END}{after}"
    if "--check" in argv:
        if new != text:
            print("docs/tour.md is stale: run python scripts/docs_tour.py", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

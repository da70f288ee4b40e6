"""Regenerate the README's tour from real command output (run after data changes).

    python scripts/readme_tour.py          # rewrite README.md between the tour markers
    python scripts/readme_tour.py --check  # exit 1 if README.md is stale (tests/test_docs.py runs this)
    ATLAS_REPOS=DIR python scripts/readme_tour.py --code  # also the code part (needs the clones)

The code part of the tour (`atlas where`, `atlas source`) shows source lines read from local clones,
so it is written only with --code and never checked: a checkout without clones prints the hint instead.
"""
from __future__ import annotations

import os
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
]


CODE_TOUR = [
    ("Back from a line to the atlas: every record whose pin covers it, the function around it (from the clones)"
     " and the nearest pins.", ["where", "shmem_device_udma.hpp:490"]),
    ("Forward from a flow step to its code: the lines, who cites them, the function, its calls and its callers"
     " (piped, so plain; a terminal gets colours).", ["source", "tensor-to-wqe-lowering", "doorbell"]),
    ("A line number alone, or a function name, is a query too:", ["query", "aclshmemi_udma_post_send"]),
]


def render(tour=TOUR) -> str:
    os.environ["COLUMNS"] = str(WIDTH)
    os.environ.pop("ATLAS_DATA", None)
    from click.testing import CliRunner

    from atlas.cli import cli

    parts = []
    for text, args in tour:
        result = CliRunner().invoke(cli, args, terminal_width=WIDTH)
        out = result.output.rstrip("\n")
        parts.append(f"{text}\n\n```console\n$ atlas {' '.join(args)}\n{out}\n```\n")
    return "\n".join(parts)


def main(argv):
    readme = ROOT / "README.md"
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
            print("README.md tour is stale: run python scripts/readme_tour.py", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

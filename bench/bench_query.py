"""`atlas query TEXT` median wall time against the floor `python -c pass`, measured in one run:
a concept card and ranked searches (English and Chinese phrases that name no single concept).

Target: ratio <= 5 for each. Run: python bench/bench_query.py [--data DIR] [TEXT ...]
"""
from __future__ import annotations

import subprocess
import sys

from _timing import atlas_exe, interleaved

DEFAULT = ["hccl", "collective communication library", "集合通信 算法", "who rings the doorbell"]


def main(argv):
    data = []
    if argv[:1] == ["--data"]:
        data, argv = argv[:2], argv[2:]
    texts = argv or DEFAULT
    exe = atlas_exe()
    kinds = {}
    for text in texts:  # warm the compiled index, the card store and the search index
        out = subprocess.run(exe + ["query", *text.split(), *data], capture_output=True, text=True).stdout
        kinds[text] = "ranked" if " result(s) for " in out.split("\n", 1)[0] else "card"
    cmds = {"python -c pass": [sys.executable, "-c", "pass"]}
    for text in texts:
        cmds[f"atlas query {text}"] = exe + ["query", *text.split(), *data]
    result = interleaved(cmds, runs=21)
    floor = result.pop("python -c pass")
    print(f"floor  python -c pass: {floor * 1000:.1f} ms")
    worst = 0.0
    for (name, t), text in zip(result.items(), texts):
        ratio = t / floor
        worst = max(worst, ratio)
        print(f"{name:<44} {kinds[text]:<6} {t * 1000:6.1f} ms  ratio {ratio:4.2f}x")
    print(f"worst ratio {worst:.2f}x (target <= 5x): {'OK' if worst <= 5 else 'OVER'}")


if __name__ == "__main__":
    main(sys.argv[1:])

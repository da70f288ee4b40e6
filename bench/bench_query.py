"""`atlas query TERM` median wall time against the floor `python -c pass`, measured in one run.

Target (issue 2): ratio <= 5. Run: python bench/bench_query.py [TERM ...]
"""
from __future__ import annotations

import subprocess
import sys

from _timing import atlas_exe, interleaved


def main(terms):
    exe = atlas_exe()
    for term in terms:  # warm the compiled index
        subprocess.run(exe + ["query", term], stdout=subprocess.DEVNULL, check=True)
    cmds = {"python -c pass": [sys.executable, "-c", "pass"]}
    for term in terms:
        cmds[f"atlas query {term}"] = exe + ["query", term]
    result = interleaved(cmds, runs=21)
    floor = result.pop("python -c pass")
    print(f"floor  python -c pass: {floor * 1000:.1f} ms")
    worst = 0.0
    for name, t in result.items():
        ratio = t / floor
        worst = max(worst, ratio)
        print(f"{name:<40} {t * 1000:6.1f} ms  ratio {ratio:4.2f}x")
    print(f"worst ratio {worst:.2f}x (target <= 5x): {'OK' if worst <= 5 else 'OVER'}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["bus-x"])

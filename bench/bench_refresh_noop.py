"""`atlas refresh` with nothing new, on the bundled atlas, against `python -c pass` (one run).

Target: <= 5x. Needs clones of the atlas's repositories: ATLAS_REPOS=/path/to/clones.
Run: ATLAS_REPOS=... python bench/bench_refresh_noop.py
"""
from __future__ import annotations

import subprocess
import sys

from _timing import atlas_exe, interleaved


def main():
    exe = atlas_exe()
    subprocess.run(exe + ["refresh"], stdout=subprocess.DEVNULL, check=False)  # bring it up to date
    subprocess.run(exe + ["refresh"], stdout=subprocess.DEVNULL, check=False)  # a no-op: stamps it
    r = interleaved({"floor": [sys.executable, "-c", "pass"], "noop": exe + ["refresh"]}, runs=15)
    ratio = r["noop"] / r["floor"]
    print(f"floor python -c pass: {r['floor'] * 1000:.1f} ms")
    print(f"atlas refresh, nothing new: {r['noop'] * 1000:.1f} ms")
    print(f"ratio {ratio:.2f}x (target <= 5x): {'OK' if ratio <= 5 else 'OVER'}")


if __name__ == "__main__":
    main()

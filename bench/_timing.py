"""Shared timing helpers for the benchmark scripts (not part of the test suite)."""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def atlas_exe() -> list[str]:
    exe = shutil.which("atlas", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return [exe] if exe else [sys.executable, "-m", "atlas"]


def install_kind() -> str:
    """How the atlas these scripts time is installed: "regular" (`pip install .`, what users run) or
    "editable" (`pip install -e .`). An editable install's finder imports pathlib and more when
    Python starts, which makes the floor (`python -c pass`) about twice as heavy and every ratio
    look better than a user will see: quote figures from a regular install."""
    import json

    done = subprocess.run([sys.executable, "-c", _WHERE], capture_output=True, text=True, cwd="/")
    if done.returncode:
        return "not installed"
    return "editable" if json.loads(done.stdout or "{}").get("dir_info", {}).get("editable") else "regular"


# (run from /, so that a checkout in the working folder is not what is found)
_WHERE = ("from importlib.metadata import distribution as d\n"
          "print(d('ascend-atlas').read_text('direct_url.json') or '{}')")


def median_wall(cmd: list[str], runs: int = 21, env=None) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(cmds: dict[str, list[str]], runs: int = 21, env=None) -> dict[str, float]:
    """Median wall time of each command, runs interleaved so machine noise hits all alike."""
    samples = {k: [] for k in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
            samples[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in samples.items()}

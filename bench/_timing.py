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

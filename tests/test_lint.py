"""ruff finds nothing, with the settings in pyproject.toml: pyflakes, pycodestyle and a complexity
limit per function (C901), with no per-file exception."""
from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           "atlas", "tests", "bench", "scripts"], cwd=ROOT, capture_output=True, text=True)
    assert "No module named ruff" not in done.stderr, "ruff is missing: pip install -e '.[test]'"
    assert done.returncode == 0, done.stdout + done.stderr

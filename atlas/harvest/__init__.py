"""The history axis: when each probe first became visible on a repository's mainline.

`refresh()` harvests probes into data/timeline.yaml, `verify()` checks evidence pins against local
clones. Importing this package does not import gitpython (an unchanged repository is recognised
from its ref files); the scanner (`gitscan`) is imported when git has to run.
"""
from __future__ import annotations

from .run import RefreshReport, RepoRow, refresh
from .timeline import read_state, write_state
from .verify import PinRow, VerifyReport, verify

__all__ = ["refresh", "RefreshReport", "RepoRow", "verify", "VerifyReport", "PinRow",
           "read_state", "write_state"]

"""The history axis: when each probe first became visible on a repository's mainline.

`refresh()` harvests probes into data/timeline.yaml, `verify()` checks evidence pins against local
clones. Importing this package does not import gitpython (an unchanged repository is recognised
from its ref files); the scanner (`gitscan`) is imported when git has to run.
"""
from __future__ import annotations

import importlib

_EXPORTS = {"refresh": "run", "RefreshReport": "report", "RepoRow": "report", "verify": "pincheck",
            "VerifyReport": "pincheck", "PinRow": "pincheck", "read_state": "timeline",
            "write_state": "timeline",
            "account_repositories": "accounts", "RepoAccount": "accounts"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):  # imported on first use: `atlas refresh`'s no-op path needs none of them
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(name)

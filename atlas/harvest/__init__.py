"""The history axis: first visibility of every probe, the API histories and releases, clones, pin checks.
May import: base, model, view, index (cache), code (the declaration parser).

The history axis: when each probe first became visible on a repository's mainline.

`atlas.harvest.refresh.refresh()` harvests probes into data/timeline.yaml,
`atlas.harvest.verify.verify()` checks evidence pins against local clones; each function lives in
the module of its name and is imported from there (the package does not re-export them, so
`atlas.harvest.refresh` always means the module). Importing this package does not import the
scanner (an unchanged repository is recognised from its ref files); `gitscan` is imported when git
has to run, and git runs through atlas.gitrun.
"""
from __future__ import annotations

import importlib

_EXPORTS = {"RefreshReport": "report", "RepoRow": "report",
            "VerifyReport": "verify", "PinRow": "verify", "read_state": "timeline",
            "write_state": "timeline",
            "account_repositories": "accounts", "RepoAccount": "accounts",
            "account_undated": "accounts", "UndatedAccount": "accounts"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):  # imported on first use: `atlas refresh`'s no-op path needs none of them
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(name)

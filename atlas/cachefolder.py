"""Where the cache folder is ($ATLAS_CACHE, else $XDG_CACHE_HOME/ascend-atlas, else
~/.cache/ascend-atlas), as a plain string: the console script asks before anything else is imported
(is a resident process serving this folder?), so this module imports nothing but os."""
from __future__ import annotations

import os


def cache_folder() -> str:
    env = os.environ.get("ATLAS_CACHE")
    if env:
        return os.path.abspath(os.path.expanduser(env))  # (links and `..` kept as written)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ascend-atlas")

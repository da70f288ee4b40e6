"""The HTML map (issue 5): `build_site(atlas, out_dir, as_of=None)` writes index.html and one
flow-<id>.html per flow, self-contained and working from file:// without any network."""
from __future__ import annotations

from .render import build_site

__all__ = ["build_site"]

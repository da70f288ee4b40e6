"""The HTML site: `build_site(atlas, out_dir, as_of=None)` writes explorer.html (the relation
explorer), one flow-<id>.html per flow and the shared vis-network.min.js; the pages work from
file:// without any network."""
from __future__ import annotations

from .render import build_site

__all__ = ["build_site"]

"""The offline site (`atlas map`): pages, the map network, the timeline, overview, explorer, source pages,
API pages, templates and assets. May import: base, model, view, index (cache), code, terminal.

The HTML site: `build_site(atlas, out_dir, as_of=None, force=False)` writes the overview, the
timeline, the concept pages, explorer.html (the relation explorer), one flow-<id>.html per flow,
the shared vis-network.min.js and the manifest atlas-map.json (the files the map owns); the pages
work from file:// without any network."""
from __future__ import annotations

from .network import build_site

__all__ = ["build_site"]

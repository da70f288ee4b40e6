"""The Ascend communication atlas: a curated knowledge graph of how data moves between Ascend NPUs."""
from __future__ import annotations

TYPE_CHECKING = False  # (typing's own costs its import: the console script's first step imports nothing)
if TYPE_CHECKING:
    from .errors import AtlasError, Location, Problem

__all__ = ["AtlasError", "Location", "Problem", "load", "__version__"]
__version__ = "0.1.0"


def load(data_dir=None):
    """Load (through the compiled index) and return the `Atlas` of a data directory."""
    from .index.compiled import load_atlas

    return load_atlas(data_dir)


def __getattr__(name: str):
    """The error types, imported when first asked for (the console script's first step imports none
    of the package's modules but its own)."""
    if name in ("AtlasError", "Location", "Problem"):
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The Ascend communication atlas: a curated knowledge graph of how data moves between Ascend NPUs."""
from .errors import AtlasError, Location, Problem

__all__ = ["AtlasError", "Location", "Problem", "load", "__version__"]
__version__ = "0.1.0"


def load(data_dir=None):
    """Load (through the compiled index) and return the `Atlas` of a data directory."""
    from .index import load_atlas

    return load_atlas(data_dir)

"""The rules of an API harvest, shared by the probe method and the run: which paths are public
(`path_rule`) and the keys that say whether a stored history answers (`rules_key`,
`extractor_key`)."""
from __future__ import annotations

from ..index.cache import crc
from ..model.core import Repository
from .publicfiles import PathRule


def path_rule(values: list[str]) -> PathRule:
    """The matcher's values: the public globs, and the excluded ones written `!glob`."""
    return PathRule([v for v in values if not v.startswith("!")], [v[1:] for v in values if v.startswith("!")])


def rules_key(repo: Repository) -> str:
    a, r = repo.api, repo.releases
    parts: list = [] if a is None else [a.public, a.exclude, a.kinds, a.decorations]
    parts += [] if r is None else [r.scheme, r.tags, r.prefix, r.order, r.exclude]
    return crc(repr(parts))


def extractor_key() -> str:
    from ..code.decls import VERSION
    from ..code.parse import grammar_versions

    return f"{VERSION}/{grammar_versions()}"

"""Probe methods: how a probe's value is found in a repository's history.

Each method is one module here exposing `METHOD`, an object with the interface of `base.Method`:
how its value is checked and normalised, what it looks for in each commit's diff during the one
pass over the mainline (its `Matcher`), how a scan that skipped paths with missing blobs is
completed, and how a commit is checked independently (does its tree hold the value?). `REGISTRY`
maps the method's name, as the data write it (`term:`, `path:`), to it.

A new method: add its name to `model.core.METHODS` (the data's vocabulary, read by the loader), write
one module here and add its `METHOD` to `REGISTRY`. Nothing in `refresh` or `gitscan` names a method.

A surface method (`surface = True`, the shape of `base.Surface`) is not fed a probe's values but
what a repository declares (`api`: its public headers and releases): the same pass drives its
matcher, and it keeps its own file per repository. `SURFACES` lists them.
"""
from __future__ import annotations

from typing import Any

from . import api, path, term
from .base import Method, Surface

REGISTRY: dict[str, Any] = {m.name: m for m in (term.METHOD, path.METHOD, api.METHOD)}
SURFACES: list[Surface] = [m for m in REGISTRY.values() if getattr(m, "surface", False)]


def method(name: str) -> Method:
    return REGISTRY[name]


__all__ = ["REGISTRY", "SURFACES", "Method", "Surface", "method"]

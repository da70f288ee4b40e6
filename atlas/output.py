"""Formatting a command's result as JSON or text (no click here: the fast launcher uses it too)."""
from __future__ import annotations

import json


def to_json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True)


def format_result(fmt: str, obj, render) -> str:
    """The text a command prints for `obj`: stable JSON, or `render(obj)`."""
    return to_json(obj) if fmt == "json" else render(obj)

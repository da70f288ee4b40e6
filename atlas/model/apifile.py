"""The API history file of one repository, `data/api/<owner>+<name>.jsonl`: its text, line by line.

One JSON object per line (keys sorted, no spaces, UTF-8), so that the file is deterministic, small and
diffable and a change to one symbol changes one line:

1. `{"type": "surface", ...}`: the header (the fields of `model.ApiSurface` but its releases);
2. `{"type": "release", ...}` per release, in release order (`model.Release` without `repo`);
3. `{"type": "symbol", ...}` per symbol, sorted by (name, kind) (`model.ApiSymbol` without `repo`).

`atlas refresh` writes it (atomically, under the data folder's lock); the loader reads it into
records and checks every field (`atlas validate`); refresh reads it back to continue from where the
last harvest stopped. This module only turns records' fields into lines and lines into dicts.
"""
from __future__ import annotations

import re
from pathlib import Path

FOLDER = "api"
SUFFIX = ".jsonl"
SURFACE_KEYS = ("branch", "head", "cutoff", "cutoff_head", "commits", "started_at", "harvested_at", "rules",
                "extractor", "files", "skipped_paths", "missing_blobs", "tags", "symbols", "ignored_tags")
RELEASE_KEYS = ("name", "commit", "date", "index", "annotated", "missing")
SYMBOL_KEYS = ("kind", "name", "history", "introduced", "introduced_date", "note", "signature", "where",
               "first_release", "releases", "release_signatures")


def file_name(repo: str) -> str:
    """`owner/name` -> `owner+name.jsonl` (a repository id holds one `/` and no `+`)."""
    return repo.replace("/", "+") + SUFFIX


def repo_of(name: str) -> str:
    """The repository id a file name stands for (the inverse of `file_name`)."""
    return name[: -len(SUFFIX)].replace("+", "/", 1) if name.endswith(SUFFIX) else ""


def path(data_dir, repo: str) -> Path:
    return Path(data_dir) / FOLDER / file_name(repo)


def _line(kind: str, record: dict) -> str:
    import json  # (imported where used: the index imports this module on every query)

    return json.dumps({"type": kind, **record}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def dumps(header: dict, releases: list[dict], symbols: list[dict]) -> str:
    """The file's text; `symbols` are sorted here, `releases` are in release order."""
    lines = [_line("surface", {k: header[k] for k in SURFACE_KEYS if k in header})]
    lines += [_line("release", {k: r[k] for k in RELEASE_KEYS if k in r}) for r in releases]
    lines += [_line("symbol", {k: s[k] for k in SYMBOL_KEYS if k in s})
              for s in sorted(symbols, key=lambda s: (s["name"], s["kind"]))]
    return "\n".join(lines) + "\n"


class BadLine(ValueError):
    """A line that is not one JSON object: its number and why."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


MAX_LINE = 1 << 22  # characters of one line (the largest header of the bundled atlas has 8,000)
MAX_DEPTH = 16  # nested arrays and objects in one line (a symbol's history is 3 deep)
_BRACKETS = re.compile(r"[\[\]{}]")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def depth(raw: str, bound: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in a line of JSON (brackets inside strings do not count);
    counted in one pass, without the recursion of a parser, and only when the line has more
    brackets than `bound` (else 0: it cannot nest deeper than that)."""
    if raw.count("[") + raw.count("{") <= bound:
        return 0
    level = deepest = 0
    for m in _BRACKETS.finditer(_STRING.sub('""', raw)):
        level += 1 if m.group(0) in "[{" else -1
        deepest = max(deepest, level)
    return deepest


def loads(raw: str, line: int = 1):
    """One line of JSON, bounded: at most MAX_LINE characters and MAX_DEPTH levels (checked before
    the parser, whose recursion a 100,000-deep line would exhaust); else BadLine."""
    import json

    if len(raw) > MAX_LINE:
        raise BadLine(line, f"a line of {len(raw)} characters (at most {MAX_LINE})")
    if depth(raw) > MAX_DEPTH:
        raise BadLine(line, f"arrays and objects nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadLine(line, f"not JSON: {exc}") from None


def records(text: str):
    """(line number, record) for each line that holds something; a line that is not a JSON object
    (or is longer or deeper than `loads` allows) raises BadLine."""
    for i, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        value = loads(raw, i)
        if not isinstance(value, dict):
            raise BadLine(i, "not a JSON object")
        yield i, value


def read_header(file: Path) -> dict | None:
    """The first line (the header) of a stored file, or None when there is none or it is unreadable."""
    try:
        with open(file, "rb") as fh:
            first = fh.readline(1 << 20)
        value = loads(first.decode("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and value.get("type") == "surface" else None


def read(file: Path) -> tuple[dict, list[dict], list[dict]] | None:
    """(header, releases, symbols) of a stored file, or None when it is missing or not well formed."""
    try:
        text = file.read_text(encoding="utf-8")
        rows = [r for _i, r in records(text)]
    except (OSError, UnicodeDecodeError, BadLine):
        return None
    if not rows or rows[0].get("type") != "surface":
        return None
    return (rows[0], [r for r in rows if r.get("type") == "release"],
            [r for r in rows if r.get("type") == "symbol"])

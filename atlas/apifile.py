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


def records(text: str):
    """(line number, record) for each line that holds something; a line that is not a JSON object
    raises BadLine."""
    import json

    for i, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise BadLine(i, f"not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise BadLine(i, "not a JSON object")
        yield i, value


def read_header(file: Path) -> dict | None:
    """The first line (the header) of a stored file, or None when there is none or it is unreadable."""
    import json

    try:
        with open(file, "rb") as fh:
            first = fh.readline(1 << 20)
        value = json.loads(first)
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

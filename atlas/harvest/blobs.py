"""Record each pin's git blob id in the data (`blob: <40 hex>` beside the pin), where a clone holds
the pinned commit and file.

`atlas refresh` calls `record_blobs` under the data folder's lock. An evidence item gets the id
when it has none, or an abbreviation of it (7+ hex digits, as git abbreviates); an id that differs
from the clone's is left as it is for `atlas verify` to report. The edit is a text edit of the
YAML file, a line `blob: ...` at the pin's indentation (block style) or `, blob: ...` before the
closing brace of a one-line flow mapping, so comments and layout stay; a mapping laid out
otherwise is left alone and counted as skipped. Each file is replaced atomically, and only when
every edit in it could be placed.
"""
from __future__ import annotations

from pathlib import Path

from ..index.cache import atomic_write
from ..errors import AtlasError
from ..model.core import SHA_RE, Atlas, Evidence, Record
from ..view.views import owned_evidence
from . import locate


class BlobReport(Record):
    written: int = 0  # evidence items whose blob id was written
    skipped: int = 0  # items that should get one but whose YAML could not be edited


def record_blobs(atlas: Atlas, data_dir: Path, root: Path) -> BlobReport:
    """Write the blob id of every pin that a clone can answer and the data lack (see the module)."""
    mapping = locate.local_map(root) if root.is_dir() else {}
    by_repo: dict[str, list[Evidence]] = {}
    for _o, e in owned_evidence(atlas):
        if e.pin is not None and len(e.blob) < 40 and SHA_RE.match(e.pin.sha) and "\n" not in e.pin.path:
            by_repo.setdefault(e.pin.repo, []).append(e)
    found: dict[int, tuple[Evidence, str]] = {}
    for rid, items in sorted(by_repo.items()):
        clone = locate.find_clone(rid, root, mapping)
        if clone is None:
            continue
        from ..code.gitread import GitReader

        names = sorted({f"{e.pin.sha}:{e.pin.path}" for e in items if e.pin is not None})
        try:
            info = GitReader(clone.gitdir, rid).info(names)
        except AtlasError:
            continue  # an unreadable clone records nothing; verify says why
        for e in items:
            assert e.pin is not None
            obj = info.get(f"{e.pin.sha}:{e.pin.path}")
            if obj is not None and obj.kind == "blob" and obj.oid.startswith(e.blob):
                found[id(e)] = (e, obj.oid)
    return write_blobs(data_dir, list(found.values()))


def write_blobs(data_dir: Path, edits: list[tuple[Evidence, str]]) -> BlobReport:
    """Set `blob: <id>` on each evidence item of `edits`, in its data file."""
    report = BlobReport()
    by_file: dict[Path, list[tuple[Evidence, str]]] = {}
    for e, oid in edits:
        f = _data_file(data_dir, e)
        if f is None:
            report.skipped += 1
        else:
            by_file.setdefault(f, []).append((e, oid))
    for f, items in sorted(by_file.items()):
        lines = f.read_text(encoding="utf-8").split("\n")
        placed = 0
        # bottom-up, so that an inserted line does not move the ones still to place
        for e, oid in sorted(items, key=lambda it: (it[0].loc.line, it[0].loc.col) if it[0].loc else (0, 0),
                             reverse=True):
            placed += _place(lines, e, oid)
        if placed == len(items):
            atomic_write(f, "\n".join(lines))
            report.written += placed
        else:
            report.skipped += len(items)
    return report


def _data_file(data_dir: Path, e: Evidence) -> Path | None:
    """The data file an evidence item was read from (locations name it `<data folder>/<path>`)."""
    if e.loc is None or not e.loc.line:
        return None
    parts = Path(e.loc.file).parts
    f = Path(data_dir, *parts[1:]) if len(parts) > 1 else None
    return f if f is not None and f.is_file() else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _place(lines: list[str], e: Evidence, oid: str) -> int:
    """Put the blob id into the mapping that starts at the item's location; 1 when placed."""
    assert e.loc is not None
    i, col = e.loc.line - 1, e.loc.col - 1
    if i >= len(lines):
        return 0
    if lines[i][col:col + 1] == "{":
        return _place_flow(lines, i, col, oid)
    end = i + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > col or
                                (_indent(lines[end]) == col and not lines[end].lstrip().startswith("- "))):
        end += 1
    keys = {lines[k][col:].split(":", 1)[0]: k for k in range(i, end)
            if (k == i or _indent(lines[k]) == col) and ":" in lines[k][col:]}
    if "blob" in keys:
        k = keys["blob"]
        lines[k] = lines[k][:col] + f"blob: {oid}"
        return 1
    if "pin" not in keys:
        return 0
    lines.insert(keys["pin"] + 1, " " * col + f"blob: {oid}")
    return 1


def _place_flow(lines: list[str], i: int, col: int, oid: str) -> int:
    """A one-line flow mapping `{pin: ..., ...}`: `, blob: <id>` before its closing brace."""
    text = lines[i]
    depth, quote = 0, ""
    for j in range(col, len(text)):
        ch = text[j]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if "blob:" in text[col:j]:
                    return 0
                lines[i] = text[:j] + f", blob: {oid}" + text[j:]
                return 1
    return 0

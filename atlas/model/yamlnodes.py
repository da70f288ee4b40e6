"""YAML nodes read with their locations: the safe loader, the reading context and the readers of
one value (a mapping's fields, text, ids, dates), each problem recorded with file:line:col."""
from __future__ import annotations
from dataclasses import dataclass, field
import difflib
import re
from pathlib import Path
import yaml
from ..errors import Location, Problem
from .core import (
    DATE_RE, ID_RE, LANGS, Atlas, Text,
)
from ..text import day


_CORE_TAGS = {
    "tag:yaml.org,2002:" + t
    for t in ("str", "int", "float", "bool", "null", "timestamp", "map", "seq", "binary")
}


_STR_TAGS = {"tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "timestamp")}


@dataclass
class Ref:
    """A reference one record makes to another, checked once everything is loaded."""

    kind: str  # concept | hardware | repo | question
    target: str
    loc: Location
    what: str  # e.g. "relation target", "claim subject"


@dataclass
class Loaded:
    atlas: Atlas
    problems: list[Problem] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    data_dir: Path | None = None
    display_dir: str = "data"  # the data folder as locations name it
    api: dict = field(default_factory=dict)  # repository -> every ApiSymbol of its API history file
    unread: set[str] = field(default_factory=set)  # files (as locations name them) that could not be read

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.is_error]


class _Ctx:
    """Per-file reading context: the display path and the shared problem and ref lists."""

    def __init__(self, display: str, loaded: Loaded):
        self.file = display
        self.loaded = loaded
        self.unknown = 0  # unknown keys met in the file
        self.more_at: Location | None = None  # the first one that was counted, not listed

    def unknown_key(self, node, key: str, what: str, allowed: tuple) -> None:
        """The first MAX_UNKNOWN unknown keys of a file are listed, each at its place with the closest
        allowed key; the rest are counted (`finish` reports the count), so a file of 200,000 of them
        costs a count, not 200,000 suggestions and lines."""
        self.unknown += 1
        if self.unknown <= MAX_UNKNOWN:
            self.error(node, "unknown-key", f'unknown key "{key}" in {what}', _did_you_mean(key, allowed))
        elif self.more_at is None:
            self.more_at = self.loc(node)

    def finish(self) -> None:
        if self.more_at is not None:
            more = self.unknown - MAX_UNKNOWN
            self.error(self.more_at, "many-unknown-keys", f"{more} more unknown key{'s' if more > 1 else ''} in "
                       f"the file from here on (the first {MAX_UNKNOWN} are listed)",
                       "see docs/schema.md for the keys of each record")

    def loc(self, node) -> Location:
        mark = node.start_mark
        return Location(self.file, mark.line + 1, mark.column + 1)

    def error(self, node_or_loc, code: str, message: str, hint: str = "") -> None:
        loc = node_or_loc if isinstance(node_or_loc, Location) else self.loc(node_or_loc)
        self.loaded.problems.append(Problem(loc, "error", code, message, hint))

    def warning(self, node_or_loc, code: str, message: str, hint: str = "") -> None:
        loc = node_or_loc if isinstance(node_or_loc, Location) else self.loc(node_or_loc)
        self.loaded.problems.append(Problem(loc, "warning", code, message, hint))

    def ref(self, kind: str, target: str, node, what: str) -> None:
        self.loaded.refs.append(Ref(kind, target, self.loc(node), what))


def _did_you_mean(word: str, options) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.5)
    return f'did you mean "{close[0]}"?' if close else ""


def _check_tag(ctx: _Ctx, node) -> bool:
    if node.tag not in _CORE_TAGS:
        ctx.error(node, "unsafe-tag", f"unsupported YAML tag {node.tag!r}",
                  "the atlas only reads plain YAML: strings, numbers, lists and mappings")
        return False
    return True


def _mapping(ctx: _Ctx, node, what: str) -> dict | None:
    """key -> (key_node, value_node) for a mapping node, or None (problem reported)."""
    if not isinstance(node, yaml.MappingNode) or not _check_tag(ctx, node):
        ctx.error(node, "wrong-type", f"{what} must be a mapping (key: value)")
        return None
    out: dict = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _STR_TAGS:
            ctx.error(key_node, "wrong-type", f"a key in {what} must be a plain string")
            continue
        key = key_node.value
        if key in out:
            ctx.error(key_node, "duplicate-key", f'key "{key}" appears twice in {what}')
            continue
        out[key] = (key_node, value_node)
    return out


def _fields(ctx: _Ctx, node, what: str, allowed: tuple, required: tuple = ()) -> dict | None:
    m = _mapping(ctx, node, what)
    if m is None:
        return None
    for key, (key_node, _) in m.items():
        if key not in allowed:
            ctx.unknown_key(key_node, key, what, allowed)
    for key in required:
        if key not in m:
            ctx.error(node, "missing-field", f'{what} has no "{key}"')
    return {k: v[1] for k, v in m.items() if k in allowed}


def _str(ctx: _Ctx, node, what: str) -> str | None:
    if isinstance(node, yaml.ScalarNode) and node.tag in _STR_TAGS:
        return node.value
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        ctx.error(node, "wrong-type", f"{what} is empty")
        return None
    _check_tag(ctx, node)
    ctx.error(node, "wrong-type", f"{what} must be a string")
    return None


def _int(ctx: _Ctx, node, what: str) -> int | None:
    value = _str(ctx, node, what)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        ctx.error(node, "wrong-type", f"{what} must be a whole number, not {value!r}")
        return None


def _bool(ctx: _Ctx, node, what: str) -> bool | None:
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:bool":
        return node.value.lower() in ("true", "yes", "on", "y")
    ctx.error(node, "wrong-type", f"{what} must be true or false")
    return None


def _enum(ctx: _Ctx, node, what: str, options: tuple) -> str | None:
    value = _str(ctx, node, what)
    if value is None:
        return None
    if value not in options:
        ctx.error(node, "bad-value", f"{what} {value!r} is not one of: {', '.join(options)}",
                  _did_you_mean(value, options))
        return None
    return value


def _list(ctx: _Ctx, node, what: str) -> list:
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return []
    if not isinstance(node, yaml.SequenceNode) or not _check_tag(ctx, node):
        ctx.error(node, "wrong-type", f"{what} must be a list")
        return []
    return list(node.value)


def _str_list(ctx: _Ctx, node, what: str) -> list[tuple[str, object]]:
    out = []
    for item in _list(ctx, node, what):
        value = _str(ctx, item, f"an item of {what}")
        if value is not None:
            out.append((value, item))
    return out


def _text(ctx: _Ctx, node, what: str, required: bool = True) -> Text:
    """`{en: ..., zh: ...}`; a plain string is English. Both languages when required."""
    if isinstance(node, yaml.ScalarNode) and node.tag in _STR_TAGS:
        text = Text(en=node.value.strip())
    else:
        if isinstance(node, yaml.MappingNode) and node.flow_style:
            stray = [k for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value not in LANGS
                     and isinstance(v, yaml.ScalarNode) and v.tag == "tag:yaml.org,2002:null"]
            for key_node in stray:
                ctx.error(key_node, "unquoted-comma",
                          f'"{key_node.value}" became a key of {what}: a comma ended the text',
                          'in {en: ..., zh: ...} quote text that contains a comma: {en: "a, b"}')
            if stray:
                node = yaml.MappingNode(node.tag, [(k, v) for k, v in node.value if k not in stray],
                                        node.start_mark, node.end_mark)
        f = _fields(ctx, node, what, LANGS)
        if f is None:
            return Text()
        text = Text(**{k: (_str(ctx, v, f"{what}.{k}") or "").strip() for k, v in f.items()})
    if required:
        for lang in LANGS:
            if not text.get(lang):
                ctx.error(node, "missing-translation", f"{what} has no {lang} text",
                          f"write {what} in both languages: {{en: ..., zh: ...}}")
    return text


def _id(ctx: _Ctx, node, what: str) -> str | None:
    value = _str(ctx, node, what)
    if value is not None and not ID_RE.match(value):
        ctx.error(node, "bad-id", f"{what} {value!r} is not lowercase kebab-case",
                  "use letters, digits and single hyphens, e.g. aiv-direct-drive")
        return None
    return value


def _date(ctx: _Ctx, node, what: str) -> str | None:
    value = _str(ctx, node, what)
    if value is None:
        return None
    value = value.strip()
    return value if _when_ok(ctx, node, what, value, stamp=False) else None


# An xsd:dateTime as the harvester writes it: seconds, an optional fraction, and an offset (Z or
# +hh:mm), since a day shown to people is the UTC day of the committer date
_STAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


_CALENDAR_HINT = "check the month (01-12), the day of that month, the time (00:00:00-23:59:59) and the offset"


def _when_ok(ctx: _Ctx, node, what: str, value: str, stamp: bool) -> bool:
    """A day (YYYY-MM-DD) or, with `stamp`, a timestamp with its offset, that is a real value of the
    calendar (2025-02-30 is not); else a `bad-date` error at the value's line."""
    if not stamp:
        if not DATE_RE.match(value):
            ctx.error(node, "bad-date", f"{what} {value!r} is not a date (YYYY-MM-DD)")
        elif day(value) is None:
            ctx.error(node, "bad-date", f"{what} {value!r} is not a day of the calendar", _CALENDAR_HINT)
        else:
            return True
        return False
    if not _STAMP_RE.fullmatch(value):
        ctx.error(node, "bad-date", f"{what} {value!r} is not a timestamp YYYY-MM-DDThh:mm:ss with an offset "
                  "(Z or +hh:mm)", "the harvester writes git's dates as they are, e.g. 2025-11-30T10:00:00+08:00")
        return False
    from datetime import datetime, timedelta

    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    offset = moment.utcoffset() if moment is not None else None
    if offset is None or abs(offset) > timedelta(hours=14):
        ctx.error(node, "bad-date", f"{what} {value!r} is not a moment of the calendar", _CALENDAR_HINT)
        return False
    return True


MAX_UNKNOWN = 20  # unknown keys listed one by one in a file; the rest are counted

"""The only reader of data/: YAML (safe, composed to nodes so every value keeps its file:line:col)
into model objects, collecting every problem instead of stopping at the first.

`load_data(dir)` returns a `Loaded` with the `Atlas`, the problems and the references each file
made (checked afterwards by `checks.check`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import difflib
import re
from pathlib import Path

import yaml

from .bounded import DATA_FILE, TooLarge, read_bounded
from .errors import AtlasError, Location, Problem
from .model import (
    API_KINDS, CLAIM_STATUSES, CONFIDENCES, DATE_RE, EDGE_TYPES, ID_RE, KINDS, LANGS, LIFECYCLES,
    METHODS, PRECISIONS, QUESTION_IDS, RELEASE_SCHEMES, REPO_RE, REPO_STATUSES, SHA_RE, ApiFolder, ApiRule, ApiSurface,
    ApiSymbol, Atlas, Claim, Concept, Evidence, Flow, FlowEdge, FlowStep, Lifecycle, Pin, Probe, Question,
    Relation, ReleaseRule, RepoHarvest, Repository, SeedPage, Sighting, TestPlan, Text, Undated, WindowRegion,
    canonical_relation, RELATION_TYPES, INVERSE_TO_FORWARD, DEFAULT_CUTOFF, plain, unplain,
)
from .output import INVISIBLE
from .text import branch_problem, day, norm, pin_path_problem, repo_url_problem, width
from .walk import list_files

_Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
try:  # libyaml is much faster and keeps marks too
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pure-Python PyYAML
    _Loader = yaml.SafeLoader

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


# ---------------------------------------------------------------------------------------------
# Node helpers
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------

_EVIDENCE_KEYS = ("pin", "url", "supports", "symbol", "confidence", "blob")
_BLOB_RE = re.compile(r"^[0-9a-f]{7,40}$")


def _evidence(ctx: _Ctx, node, what: str) -> Evidence | None:
    f = _fields(ctx, node, what, _EVIDENCE_KEYS)
    if f is None:
        return None
    ev = Evidence(loc=ctx.loc(node))
    if ("pin" in f) == ("url" in f):
        ctx.error(node, "bad-evidence", f"{what} needs exactly one of pin or url")
    if "pin" in f:
        ev.pin = _pin(ctx, f["pin"], what)
    if "url" in f:
        ev.url = _url(ctx, f["url"], what) or ""
    if "supports" in f:
        ev.supports = _text(ctx, f["supports"], f"{what} supports", required=False)
    if "symbol" in f:
        ev.symbol = _str(ctx, f["symbol"], f"{what} symbol") or ""
    if "confidence" in f:
        ev.confidence = _enum(ctx, f["confidence"], f"{what} confidence", CONFIDENCES) or ""
    if "blob" in f:
        ev.blob = _blob(ctx, f["blob"], what, "pin" in f)
    return ev if (ev.pin is not None) != bool(ev.url) else None  # kept with exactly one good source


def _blob(ctx: _Ctx, node, what: str, pinned: bool) -> str:
    """The git blob id of a pin's file: 7 to 40 lowercase hex digits, only beside a pin."""
    raw = _str(ctx, node, f"{what} blob") or ""
    if not _BLOB_RE.match(raw):
        ctx.error(node, "bad-sha", f"blob id {raw!r} is not 7 to 40 lowercase hex digits")
        return ""
    if not pinned:
        ctx.error(node, "bad-evidence", f"{what} has a blob id but no pin")
        return ""
    return raw


def _pin(ctx: _Ctx, node, what: str) -> Pin | None:
    """A source pin `owner/repo@<40-hex sha>:<path>#L<a>-L<b>`; its repository is a reference."""
    raw = _str(ctx, node, f"{what} pin")
    if raw is None:
        return None
    pin = Pin.parse(raw)
    if pin is None:
        ctx.error(node, "bad-pin", f"malformed pin {raw!r}",
                  "write owner/repo@<40-hex sha>:<path>#L<a> or ...#L<a>-L<b>")
        return None
    if not SHA_RE.match(pin.sha):
        ctx.error(node, "bad-sha", f"pin sha {pin.sha!r} is not 40 lowercase hex digits",
                  "give the full commit id you opened; never shorten or invent one")
        return None
    if pin.start < 1 or pin.end < pin.start:
        ctx.error(node, "bad-pin", f"pin line range L{pin.start}-L{pin.end} is empty")
        return None
    why = pin_path_problem(pin.path)
    if why:  # reported, and kept: the code index and the map skip it alone (and say why)
        ctx.error(node, "bad-pin", f"pin path {pin.path!r} {why}",
                  "write the file's path from the top of its repository, as git lists it (src/x.c)")
    ctx.ref("repo", pin.repo, node, "evidence pin repository")
    return pin


def _url(ctx: _Ctx, node, what: str) -> str | None:
    url = _str(ctx, node, f"{what} url")
    if url is None:
        return None
    if not url.startswith(("https://", "http://")):
        ctx.error(node, "bad-url", f"evidence url {url!r} is not an http(s) URL")
        return None
    return url


def _evidence_list(ctx: _Ctx, node, what: str) -> list[Evidence]:
    out = []
    for i, item in enumerate(_list(ctx, node, what)):
        ev = _evidence(ctx, item, f"{what}[{i}]")
        if ev is not None:
            out.append(ev)
    return out


_RELATION_KEYS = ("type", "target", "note", "evidence")


def _relation(ctx: _Ctx, node, owner: str) -> Relation | None:
    f = _fields(ctx, node, "a relation", _RELATION_KEYS, ("type", "target"))
    if f is None:
        return None
    canon = _relation_type(ctx, f["type"]) if "type" in f else None
    target = _id(ctx, f["target"], "relation target") if "target" in f else None
    if target is not None:
        ctx.ref("concept", target, f["target"], "relation target")
    rel = Relation("", "", "", loc=ctx.loc(node))
    if "note" in f:
        rel.note = _text(ctx, f["note"], "relation note", required=False)
    if "evidence" in f:
        rel.evidence = _evidence_list(ctx, f["evidence"], "relation evidence")
    if canon is None or target is None:
        return None
    rel.type, reverse = canon
    rel.source, rel.target = (target, owner) if reverse else (owner, target)
    return rel


def _relation_type(ctx: _Ctx, node) -> tuple[str, bool] | None:
    """(forward type, whether the name given is the inverse) of a relation's `type`."""
    rtype = _str(ctx, node, "relation type")
    if rtype is None:
        return None
    canon = canonical_relation(rtype)
    if canon is None:
        names = list(RELATION_TYPES) + list(INVERSE_TO_FORWARD)
        ctx.error(node, "bad-value", f"unknown relation type {rtype!r}",
                  _did_you_mean(rtype, names) or "see docs/schema.md for the vocabulary")
    return canon


def _probe(ctx: _Ctx, node) -> Probe | None:
    f = _fields(ctx, node, "a probe", ("repo", *METHODS), ("repo",))
    if f is None:
        return None
    repo = _str(ctx, f["repo"], "probe repo") if "repo" in f else None
    if repo is not None:
        ctx.ref("repo", repo, f["repo"], "probe repository")
    methods = [m for m in METHODS if m in f]
    if len(methods) != 1:
        ctx.error(node, "bad-probe", "a probe needs exactly one of " + " or ".join(METHODS))
    values = [_str(ctx, f[m], f"probe {m}") for m in methods]  # each checked, also when there are two
    method, value = (methods[0], values[0]) if len(methods) == 1 else ("", None)
    if not value or repo is None:
        return None
    if method == "path":  # a folder is written with or without its trailing slash
        value = value.strip("/")
    return Probe(repo, method, value, loc=ctx.loc(node))


_CONCEPT_KEYS = ("id", "kind", "names", "aliases", "answers", "beginner", "professional",
                 "hardware", "hardware_note", "lifecycle", "relations", "evidence", "probes", "undated", "api")


def _file_id(ctx: _Ctx, f: dict, what: str, stem: str) -> str | None:
    """The id of a record that is one file: its `id`, which must equal the file's name. A missing or
    malformed id is reported and the file's name stands in for it (when that is an id), so the rest
    of the record is still read and checked: one error never hides the others."""
    ident = _id(ctx, f["id"], f"{what} id") if "id" in f else None
    if ident is not None and ident != stem:
        ctx.error(f["id"], "id-mismatch", f'{what} id "{ident}" differs from its file name "{stem}"',
                  f"rename the file to {ident}.yaml or change the id")
    return ident or (stem if ID_RE.match(stem) else None)


def parse_concept(ctx: _Ctx, node, stem: str) -> Concept | None:
    f = _fields(ctx, node, "a concept", _CONCEPT_KEYS,
                ("id", "kind", "names", "beginner", "professional", "evidence"))
    if f is None:
        return None
    ident = _file_id(ctx, f, "concept", stem)
    kind = _enum(ctx, f["kind"], "kind", KINDS) if "kind" in f else None
    c = Concept(ident or stem, kind or "concept", Text(), loc=ctx.loc(node))
    for key, read in _CONCEPT_FIELDS:
        if key in f:
            read(ctx, c, f[key])
    return c if ident else None


def _concept_names(ctx: _Ctx, c: Concept, node) -> None:
    c.names = _text(ctx, node, "names")


def _concept_aliases(ctx: _Ctx, c: Concept, node) -> None:
    """The aliases per language; none may be the concept's own id or name (as names are matched:
    case- and width-insensitively), which would only repeat it."""
    af = _fields(ctx, node, "aliases", LANGS)
    if not af:
        return
    own = {norm(name): (what, name) for name, what in ((c.names.zh, "Chinese name"), (c.names.en, "English name"),
                                                       (c.id, "id")) if name}
    for lang, lang_node in af.items():
        items = _str_list(ctx, lang_node, f"aliases.{lang}")
        for value, item in items:
            if norm(value) in own:
                what, name = own[norm(value)]
                ctx.error(item, "self-alias", f'alias "{value}" of concept "{c.id}" repeats its {what} "{name}"',
                          "remove it: a concept is found by its id and names already, case- and width-insensitively")
        c.aliases[lang] = [v for v, _ in items]


def _concept_answers(ctx: _Ctx, c: Concept, node) -> None:
    m = _mapping(ctx, node, "answers")
    for qid, (key_node, value_node) in (m or {}).items():
        if qid not in QUESTION_IDS:
            ctx.error(key_node, "bad-value", f"unknown question {qid!r} in answers",
                      _did_you_mean(qid, QUESTION_IDS) or "questions: " + ", ".join(QUESTION_IDS))
            continue
        c.answers[qid] = _text(ctx, value_node, f"answer to {qid}")


def _concept_text(key: str):
    def read(ctx: _Ctx, c: Concept, node) -> None:
        setattr(c, key, _text(ctx, node, key))
    return read


def _concept_hardware(ctx: _Ctx, c: Concept, node) -> None:
    c.hardware.extend(_hardware(ctx, node, "hardware scope"))


def _concept_hardware_note(ctx: _Ctx, c: Concept, node) -> None:
    c.hardware_note = _text(ctx, node, "hardware_note", required=False)


def _concept_lifecycle(ctx: _Ctx, c: Concept, node) -> None:
    lf = _fields(ctx, node, "lifecycle", ("status", "note"), ("status",))
    if lf and "status" in lf:
        status = _enum(ctx, lf["status"], "lifecycle status", LIFECYCLES) or "active"
        note = _text(ctx, lf["note"], "lifecycle note") if "note" in lf else Text()
        if status != "active" and not note:
            ctx.error(node, "missing-field", f'lifecycle "{status}" needs a note saying what replaces it or why')
        c.lifecycle = Lifecycle(status, note)


def _concept_relations(ctx: _Ctx, c: Concept, node) -> None:
    for item in _list(ctx, node, "relations"):
        rel = _relation(ctx, item, c.id)
        if rel is not None:
            c.relations.append(rel)


def _concept_evidence(ctx: _Ctx, c: Concept, node) -> None:
    c.evidence = _evidence_list(ctx, node, "evidence")
    if not c.evidence and not any(p.location == ctx.loc(node) for p in ctx.loaded.problems):
        ctx.error(node, "no-evidence", f'concept "{c.id}" has no evidence')


def _concept_probes(ctx: _Ctx, c: Concept, node) -> None:
    for item in _list(ctx, node, "probes"):
        probe = _probe(ctx, item)
        if probe is not None:
            c.probes.append(probe)


def _concept_undated(ctx: _Ctx, c: Concept, node) -> None:
    """`undated: {repos: [owner/name, ...], note: {en, zh}}`: why no probe dates the concept.
    `repos` names the public repositories that hold it (each must be listed), empty when none does."""
    f = _fields(ctx, node, "undated", ("repos", "note"), ("note",))
    if f is None:
        return
    c.undated = Undated(loc=ctx.loc(node))
    if "repos" in f:
        for value, item in _str_list(ctx, f["repos"], "undated repos"):
            c.undated.repos.append(value)
            ctx.ref("repo", value, item, "undated repository")
    if "note" in f:
        c.undated.note = _text(ctx, f["note"], "undated note")


_SYMBOL_NAME = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*:)?[A-Za-z_~][A-Za-z0-9_:~]*$")


def _concept_api(ctx: _Ctx, c: Concept, node) -> None:
    """`api: [aclrtMallocPhysical, hicann/shmem:aclshmem_malloc, ...]`: the API symbols the concept
    names (`owner/name:` narrows one to a repository)."""
    for value, item in _str_list(ctx, node, "api"):
        if not _SYMBOL_NAME.match(value):
            ctx.error(item, "bad-value", f"{value!r} is not a symbol name (an identifier, `ns::name`, or "
                      "`owner/name:symbol`)")
            continue
        if ":" in value.split("::", 1)[0] and "/" in value.split(":", 1)[0]:
            ctx.ref("repo", value.split(":", 1)[0], item, "API symbol repository")
        c.api.append(value)


# A concept's fields after id and kind, in the order they are read (and their problems reported):
# field -> reader(ctx, concept, node), which checks the value and sets it on the concept.
_CONCEPT_FIELDS = (
    ("names", _concept_names), ("aliases", _concept_aliases), ("answers", _concept_answers),
    ("beginner", _concept_text("beginner")), ("professional", _concept_text("professional")),
    ("hardware", _concept_hardware), ("hardware_note", _concept_hardware_note),
    ("lifecycle", _concept_lifecycle), ("relations", _concept_relations), ("evidence", _concept_evidence),
    ("probes", _concept_probes), ("undated", _concept_undated), ("api", _concept_api),
)


def parse_question(ctx: _Ctx, node) -> Question | None:
    f = _fields(ctx, node, "a question", ("id", "names", "explanation"), ("id", "names"))
    if f is None:
        return None
    qid = _enum(ctx, f["id"], "question id", QUESTION_IDS) if "id" in f else None
    q = Question(qid or "", Text(), loc=ctx.loc(node))
    if "names" in f:
        q.names = _text(ctx, f["names"], "question names")
    if "explanation" in f:
        q.explanation = _text(ctx, f["explanation"], "question explanation")
    return q if qid else None


_REPO_KEYS = ("id", "urls", "purpose", "hardware", "status", "branch", "mirror_of",
              "migrated_from", "note", "evidence", "api", "releases")


def parse_repository(ctx: _Ctx, node) -> Repository | None:
    f = _fields(ctx, node, "a repository", _REPO_KEYS, ("id", "urls", "purpose", "status"))
    if f is None:
        return None
    rid = _str(ctx, f["id"], "repository id") if "id" in f else None
    if rid is not None and not REPO_RE.match(rid):
        ctx.error(f["id"], "bad-id", f"repository id {rid!r} is not owner/name")
        rid = None
    r = Repository(rid or "", loc=ctx.loc(node))
    if "urls" in f:
        r.urls = _repo_urls(ctx, f["urls"])
    if "purpose" in f:
        r.purpose = _text(ctx, f["purpose"], "purpose")
    if "hardware" in f:
        r.hardware.extend(_hardware(ctx, f["hardware"], "repository hardware scope"))
    if "status" in f:
        r.status = _enum(ctx, f["status"], "repository status", REPO_STATUSES) or "active"
    _repo_history(ctx, r, f)
    if "note" in f:
        r.note = _text(ctx, f["note"], "repository note", required=False)
    if "evidence" in f:
        r.evidence = _evidence_list(ctx, f["evidence"], "repository evidence")
    if "api" in f:
        r.api = _api_rule(ctx, f["api"])
    if "releases" in f:
        r.releases = _release_rule(ctx, f["releases"])
    return r if rid else None


_GLOB = re.compile(r"^[^/\\\s][^\\\s]*$")
_DECORATION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _api_rule(ctx: _Ctx, node) -> ApiRule | None:
    """`api: {public: [globs], exclude: [globs], kinds: [...], decorations: [MACROS], surfaces: [...]}`."""
    f = _fields(ctx, node, "api", ("public", "exclude", "kinds", "decorations", "surfaces"), ("public",))
    if f is None or "public" not in f:
        return None
    rule = ApiRule(loc=ctx.loc(node))
    for key in ("public", "exclude"):
        for value, item in _str_list(ctx, f[key], f"api {key}") if key in f else []:
            if not _GLOB.match(value) or ".." in value.split("/"):
                ctx.error(item, "bad-value", f"{value!r} is not a path glob inside the repository",
                          "e.g. include/**/*.h (`*` within a folder, `**` any folders)")
                continue
            getattr(rule, key).append(value)
    if "kinds" in f:
        rule.kinds = [k for k in (_enum(ctx, item, "api kind", API_KINDS) for item in _list(ctx, f["kinds"], "kinds"))
                      if k]
    for value, item in _str_list(ctx, f["decorations"], "api decorations") if "decorations" in f else []:
        if not _DECORATION.match(value):
            ctx.error(item, "bad-value", f"{value!r} is not a macro name")
            continue
        rule.decorations.append(value)
    for i, item in enumerate(_list(ctx, f["surfaces"], "api surfaces") if "surfaces" in f else []):
        folder = _api_folder(ctx, item, f"api surfaces[{i}]")
        if folder is not None:
            rule.surfaces.append(folder)
    return rule


def _api_folder(ctx: _Ctx, node, what: str) -> ApiFolder | None:
    """`{folder: path, scanned: bool, reason: {en, zh}, evidence: [...]}` (tests/test_data.py checks that
    the `public` globs reach exactly the folders stated scanned)."""
    f = _fields(ctx, node, what, ("folder", "scanned", "reason", "evidence"), ("folder", "scanned", "reason"))
    if f is None or "folder" not in f or "scanned" not in f:
        return None
    folder = (_str(ctx, f["folder"], f"{what} folder") or "").strip("/")
    scanned = f["scanned"].value if isinstance(f["scanned"], yaml.ScalarNode) else ""
    if scanned not in ("true", "false"):
        ctx.error(f["scanned"], "bad-value", f"{what} scanned must be true or false")
        return None
    if not folder or not _GLOB.match(folder) or ".." in folder.split("/"):
        ctx.error(f["folder"], "bad-value", f"{folder!r} is not a path inside the repository")
        return None
    out = ApiFolder(folder=folder, scanned=scanned == "true", loc=ctx.loc(node))
    if "reason" in f:
        out.reason = _text(ctx, f["reason"], f"{what} reason")
    if "evidence" in f:
        out.evidence = _evidence_list(ctx, f["evidence"], f"{what} evidence")
    return out


def _release_rule(ctx: _Ctx, node) -> ReleaseRule | None:
    """`releases: {scheme: semver|date|list, tags: glob, prefix: text, order: [tags], exclude: [tags], note}`."""
    f = _fields(ctx, node, "releases", ("scheme", "tags", "prefix", "order", "exclude", "note"), ("scheme",))
    if f is None or "scheme" not in f:
        return None
    rule = ReleaseRule(scheme=_enum(ctx, f["scheme"], "release scheme", RELEASE_SCHEMES) or "semver",
                       loc=ctx.loc(node))
    for key in ("tags", "prefix"):
        if key in f:
            setattr(rule, key, _str(ctx, f[key], f"releases {key}") or getattr(rule, key))
    for key in ("order", "exclude"):
        if key in f:
            setattr(rule, key, [v for v, _ in _str_list(ctx, f[key], f"releases {key}")])
    if "note" in f:
        rule.note = _text(ctx, f["note"], "releases note", required=False)
    if rule.scheme == "list" and not rule.order:
        ctx.error(node, "missing-field", "a release list (`scheme: list`) needs `order`, the tags oldest first")
    return rule


def _repo_history(ctx: _Ctx, r: Repository, f: dict) -> None:
    """Branch, mirror and migration of a repository."""
    for key in ("branch", "mirror_of"):
        if key in f:
            setattr(r, key, _str(ctx, f[key], key) or "")
    if r.branch and branch_problem(r.branch):
        ctx.error(f["branch"], "bad-branch", f"branch {r.branch!r}: {branch_problem(r.branch)}",
                  "name the mainline branch (main, master, or a full ref such as refs/heads/main)")
    if "migrated_from" in f:
        r.migrated_from = [v for v, _ in _str_list(ctx, f["migrated_from"], "migrated_from")]


def _repo_urls(ctx: _Ctx, node) -> list[str]:
    items = _str_list(ctx, node, "urls")
    for value, item in items:
        why = repo_url_problem(value)
        if why:
            ctx.error(item, "bad-url", f"repository url {value!r}: {why}",
                      "list the repository's public https:// address (git's url.<base>.insteadOf reaches it "
                      "over ssh if you prefer)")
    return [v for v, _ in items]


def _hardware(ctx: _Ctx, node, what: str) -> list[str]:
    """A hardware scope: "any", or hardware concepts (each a reference checked later)."""
    values = []
    for value, item in _str_list(ctx, node, "hardware"):
        values.append(value)
        if value != "any":
            ctx.ref("hardware", value, item, what)
    return values


def parse_claim(ctx: _Ctx, node) -> Claim | None:
    f = _fields(ctx, node, "a claim", ("id", "statement", "status", "about", "evidence", "note", "test_plan"),
                ("id", "statement", "status", "about", "evidence"))
    if f is None:
        return None
    cid = _id(ctx, f["id"], "claim id") if "id" in f else None
    cl = Claim(cid or "", Text(), "open", loc=ctx.loc(node))
    if "statement" in f:
        cl.statement = _text(ctx, f["statement"], "claim statement")
    if "status" in f:
        cl.status = _enum(ctx, f["status"], "claim status", CLAIM_STATUSES) or "open"
    if "about" in f:
        for value, item in _str_list(ctx, f["about"], "about"):
            cl.about.append(value)
            ctx.ref("concept", value, item, "claim subject")
    if "evidence" in f:
        cl.evidence = _evidence_list(ctx, f["evidence"], "claim evidence")
        if not cl.evidence:
            ctx.error(f["evidence"], "no-evidence", f'claim "{cid or "?"}" has no evidence')
    if "note" in f:
        cl.note = _text(ctx, f["note"], "claim note", required=False)
    if "test_plan" in f:
        cl.test_plan = parse_test_plan(ctx, f["test_plan"], cid or "?")
    return cl if cid else None


_TEST_PLAN_KEYS = ("order", "step", "where", "measure", "confirm", "refute")


def parse_test_plan(ctx: _Ctx, node, cid: str) -> TestPlan | None:
    """A claim's test plan: the pinned lines to time or print at (`where`), what to measure, the
    results that confirm or refute the claim, its decision `order` and optionally the flow `step`
    ("flow-id/step-id") it instruments. The step is checked once every flow is loaded."""
    f = _fields(ctx, node, "a test plan", _TEST_PLAN_KEYS, ("order", "where", "measure", "confirm", "refute"))
    if f is None:
        return None
    plan = TestPlan(loc=ctx.loc(node))
    if "order" in f:
        order = _int(ctx, f["order"], "test plan order")
        if order is not None and order < 1:
            ctx.error(f["order"], "bad-value", f"test plan order {order} of claim \"{cid}\" is not 1 or more")
        plan.order = order or 0
    if "step" in f:
        plan.step = _str(ctx, f["step"], "test plan step") or ""
        if plan.step and not re.match(r"^[a-z0-9-]+/[a-z0-9-]+$", plan.step):
            ctx.error(f["step"], "bad-value", f"test plan step {plan.step!r} is not flow-id/step-id")
    if "where" in f:
        plan.where = _evidence_list(ctx, f["where"], "test plan where")
        if not plan.where:
            ctx.error(f["where"], "no-evidence", f'the test plan of claim "{cid}" pins no line to time or print at')
    for key in ("measure", "confirm", "refute"):
        if key in f:
            setattr(plan, key, _text(ctx, f[key], f"test plan {key}"))
    return plan


def parse_flow(ctx: _Ctx, node, stem: str) -> Flow | None:
    f = _fields(ctx, node, "a flow", ("id", "title", "summary", "steps", "edges", "evidence", "layout"),
                ("id", "title", "steps"))
    if f is None:
        return None
    fid = _file_id(ctx, f, "flow", stem)
    flow = Flow(fid or stem, Text(), loc=ctx.loc(node))
    if "title" in f:
        flow.title = _text(ctx, f["title"], "flow title")
    if "summary" in f:
        flow.summary = _text(ctx, f["summary"], "flow summary", required=False)
    if "evidence" in f:
        flow.evidence = _evidence_list(ctx, f["evidence"], "flow evidence")
    step_ids: dict[str, object] = {}
    for item in _list(ctx, f.get("steps"), "steps") if "steps" in f else []:
        step = _flow_step(ctx, item, flow.id, step_ids)
        if step is not None:
            flow.steps.append(step)
    for item in _list(ctx, f.get("edges"), "edges") if "edges" in f else []:
        edge = _flow_edge(ctx, item, flow.id, step_ids)
        if edge is not None:
            flow.edges.append(edge)
    for item in _list(ctx, f.get("layout"), "layout") if "layout" in f else []:
        region = _window_region(ctx, item, flow)
        if region is not None:
            flow.layout.append(region)
    return flow if fid else None


def _window_region(ctx: _Ctx, item, flow: Flow) -> WindowRegion | None:
    """One region of a flow's `layout`; `part_of` must name a region listed before it."""
    rf = _fields(ctx, item, "a layout region",
                 ("id", "label", "offset", "size", "writers", "readers", "part_of", "evidence"),
                 ("id", "label", "evidence"))
    if rf is None:
        return None
    rid = _id(ctx, rf["id"], "layout region id") if "id" in rf else None
    if rid and any(r.id == rid for r in flow.layout):
        ctx.error(rf["id"], "duplicate-id", f'layout region "{rid}" appears twice in flow "{flow.id}"')
        rid = None
    region = WindowRegion(rid or "?", loc=ctx.loc(item))
    if "label" in rf:
        region.label = _text(ctx, rf["label"], "layout region label")
    for key in ("offset", "size"):
        if key in rf:
            setattr(region, key, _str(ctx, rf[key], f"layout region {key}") or "")
    for key in ("writers", "readers"):
        if key in rf:
            setattr(region, key, _text(ctx, rf[key], f"layout region {key}", required=False))
    if "part_of" in rf:
        region.part_of = _str(ctx, rf["part_of"], "layout region part_of") or ""
        if not any(r.id == region.part_of for r in flow.layout):
            ctx.error(rf["part_of"], "unknown-ref", f'part_of "{region.part_of}" is not a region listed '
                      f'before "{rid}" in flow "{flow.id}"')
    if "evidence" in rf:
        region.evidence = _evidence_list(ctx, rf["evidence"], "layout region evidence")
    return region if rid else None


def _flow_step(ctx: _Ctx, item, fid: str, step_ids: dict) -> FlowStep | None:
    """One step of flow `fid`; its id is added to `step_ids` (a repeated id is an error)."""
    sf = _fields(ctx, item, "a flow step", ("id", "label", "title", "actor", "concepts", "source", "note"),
                 ("id", "label", "actor"))
    if sf is None:
        return None
    sid = _id(ctx, sf["id"], "step id") if "id" in sf else None
    if sid in step_ids:
        ctx.error(sf["id"], "duplicate-id", f'step "{sid}" appears twice in flow "{fid}"')
        sid = None
    if sid:
        step_ids[sid] = item
    step = FlowStep(sid or "?", Text(), "", loc=ctx.loc(item))
    if "label" in sf:
        step.label = _text(ctx, sf["label"], "step label")
    if "title" in sf:
        step.title = _step_title(ctx, sf["title"])
    if "actor" in sf:
        step.actor = _str(ctx, sf["actor"], "step actor") or ""
    if "concepts" in sf:
        for value, cnode in _str_list(ctx, sf["concepts"], "step concepts"):
            step.concepts.append(value)
            ctx.ref("concept", value, cnode, f'concept of step "{sid}"')
    if "source" in sf:
        step.source = _evidence(ctx, sf["source"], f'source of step "{sid}"')
    if "note" in sf:
        step.note = _text(ctx, sf["note"], "step note", required=False)
    return step if sid else None


TITLE_MAX = 60  # columns of a step title (a Chinese character takes two)


def _step_title(ctx: _Ctx, node) -> Text:
    """A step's short title: one line in each language, at most TITLE_MAX columns wide."""
    title = _text(ctx, node, "step title")
    for lang, value in (("en", title.en), ("zh", title.zh)):
        if "\n" in value.strip():
            ctx.error(node, "long-title", f"step title ({lang}) must be one line")
        elif width(value) > TITLE_MAX:
            ctx.warning(node, "long-title", f"step title ({lang}) is {width(value)} columns wide",
                        f"keep it under {TITLE_MAX}: the label holds the detail")
    return title


def parse_seed_page(ctx: _Ctx, node) -> SeedPage | None:
    """One page of the seed (data/seed.yaml): its number, title and summary in our words."""
    f = _fields(ctx, node, "a seed page", ("page", "title", "summary", "flows"), ("page", "title", "summary"))
    if f is None or "page" not in f:
        return None
    number = _int(ctx, f["page"], "seed page number")
    if number is None:
        return None
    if not 1 <= number <= 99:
        ctx.error(f["page"], "bad-value", f"seed page number {number} is out of range (1-99)")
        return None
    page = SeedPage(f"page-{number}", number, Text(), loc=ctx.loc(node))
    if "title" in f:
        page.title = _text(ctx, f["title"], "seed page title")
    if "summary" in f:
        page.summary = _text(ctx, f["summary"], "seed page summary")
    if "flows" in f:
        for value, fnode in _str_list(ctx, f["flows"], "seed page flows"):
            page.flows.append(value)
            ctx.ref("flow", value, fnode, f"flow of seed {page.id}")
    return page


def _flow_edge(ctx: _Ctx, item, fid: str, step_ids: dict) -> FlowEdge | None:
    """One edge of flow `fid` between two of its steps."""
    ef = _fields(ctx, item, "a flow edge", ("from", "to", "type", "label"), ("from", "to", "type"))
    if ef is None or not {"from", "to", "type"} <= set(ef):
        return None
    src = _str(ctx, ef["from"], "edge from")
    dst = _str(ctx, ef["to"], "edge to")
    etype = _enum(ctx, ef["type"], "edge type", EDGE_TYPES)
    for end, node_ in ((src, ef["from"]), (dst, ef["to"])):
        if end is not None and end not in step_ids:
            ctx.error(node_, "unknown-ref", f'edge end "{end}" is not a step of flow "{fid}"',
                      _did_you_mean(end, step_ids))
    if src in step_ids and dst in step_ids and etype:
        label = _str(ctx, ef["label"], "edge label") if "label" in ef else ""
        return FlowEdge(src, dst, etype, label or "", loc=ctx.loc(item))
    return None


_SIGHTING_KEYS = ("concept", "repo", "method", "value", "found", "sha", "committer_date",
                  "author_date", "mainline", "introduced", "introduced_date", "precision", "head",
                  "cutoff", "harvested_at", "note", "first_release")
_HARVEST_KEYS = ("repo", "branch", "head", "cutoff", "cutoff_head", "started_at", "harvested_at", "commits",
                 "shallow", "skipped_paths")


def parse_timeline(ctx: _Ctx, node) -> tuple[list[Sighting], list[RepoHarvest], str]:
    f = _fields(ctx, node, "the timeline", ("cutoff", "repositories", "sightings"))
    if f is None:
        return [], [], ""
    cutoff = _date(ctx, f["cutoff"], "timeline cutoff") if "cutoff" in f else ""
    harvests = []
    for item in _list(ctx, f.get("repositories"), "repositories") if "repositories" in f else []:
        h = _harvest_row(ctx, item)
        if h is not None:
            harvests.append(h)
    sightings = []
    for item in _list(ctx, f.get("sightings"), "sightings") if "sightings" in f else []:
        sighting = _sighting(ctx, item)
        if sighting is not None:
            sightings.append(sighting)
    return sightings, harvests, cutoff or ""


_STAMPS = ("committer_date", "author_date", "introduced_date", "harvested_at", "started_at")


def _dates(ctx: _Ctx, f: dict, record) -> None:
    """Every date (`cutoff`) and timestamp of a timeline record is a real value of the calendar, at
    its line; the value stays as written (the SHACL stage reports it again in its own terms)."""
    for key, node in f.items():
        if key == "cutoff" or key in _STAMPS:
            value = getattr(record, key)
            if value:
                _when_ok(ctx, node, key, value, stamp=key != "cutoff")


def _harvest_row(ctx: _Ctx, item) -> RepoHarvest | None:
    """One harvested repository of the timeline: its head, cut-off and counts (every field is checked,
    also when a required one is missing; the row is kept only when it is whole)."""
    hf = _fields(ctx, item, "a harvested repository", _HARVEST_KEYS, ("repo", "head"))
    if not hf:
        return None
    h = RepoHarvest(repo="", head="", branch="", cutoff="", cutoff_head="", harvested_at="",
                    loc=ctx.loc(item))
    for key, value_node in hf.items():
        if key == "commits":
            h.commits = _int(ctx, value_node, key) or 0
        elif key == "shallow":
            h.shallow = bool(_bool(ctx, value_node, key))
        elif key == "skipped_paths":
            h.skipped_paths = [v for v, _ in _str_list(ctx, value_node, key)]
        else:
            setattr(h, key, _str(ctx, value_node, key) or "")
    _check_shas(ctx, hf, ("head", "cutoff_head"))
    _dates(ctx, hf, h)
    if "repo" not in hf:
        return None
    ctx.ref("repo", h.repo, hf["repo"], "harvested repository")
    return h


_SIGHTING_REQUIRED = ("concept", "repo", "method", "value", "found")


def _sighting(ctx: _Ctx, item) -> Sighting | None:
    """One sighting of the timeline: a probe found (or not) on a repository's mainline. Every field is
    checked, also when a required one is missing; the sighting is kept only when it is whole."""
    sf = _fields(ctx, item, "a sighting", _SIGHTING_KEYS, _SIGHTING_REQUIRED)
    if not sf:
        return None
    s = Sighting(concept="", repo="", method="term", value="", found=False, loc=ctx.loc(item))
    for key, value_node in sf.items():
        if key == "found":
            s.found = bool(_bool(ctx, value_node, key))
        elif key == "method":
            s.method = _enum(ctx, value_node, "sighting method", METHODS) or "term"
        elif key == "precision":
            s.precision = _enum(ctx, value_node, "sighting precision", PRECISIONS) or "exact"
        else:
            setattr(s, key, _str(ctx, value_node, key) or "")
    _check_shas(ctx, sf, ("sha", "mainline", "introduced", "head"))
    _dates(ctx, sf, s)
    if s.found:
        for key in ("sha", "committer_date"):
            if not getattr(s, key):
                ctx.error(item, "missing-field", f'a found sighting needs its "{key}"')
    if "concept" in sf:
        ctx.ref("concept", s.concept, sf["concept"], "sighting concept")
    return s if set(_SIGHTING_REQUIRED) <= set(sf) else None


def _check_shas(ctx: _Ctx, f: dict, keys) -> None:
    for key in keys:
        if key in f:
            value = f[key].value if isinstance(f[key], yaml.ScalarNode) else None
            if value and not SHA_RE.match(str(value)):
                ctx.error(f[key], "bad-sha", f"{key} {value!r} is not 40 lowercase hex digits")


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

_FLOW_INDICATORS = "?:,[]{}#"


def _flow_scalar_hint(text: str, exc: yaml.MarkedYAMLError) -> str:
    """What to quote when an unquoted scalar inside `{...}` or `[...]` hits an indicator.

    libyaml accepts `{en: Who moves the data?, zh: ...}`; PyYAML's pure-Python reader stops the
    scalar at `?` (and both stop at `[`, `]`, `{`, `}`), so such text must be quoted to read the same
    everywhere."""
    if "flow" not in (exc.context or "") or exc.problem_mark is None:
        return ""
    mark = exc.problem_mark
    lines = text.splitlines()
    char = lines[mark.line][mark.column:mark.column + 1] if mark.line < len(lines) else ""
    if not char or char not in _FLOW_INDICATORS:
        return ""
    return (f'inside {{...}} or [...] a text value that contains "{char}" must be quoted; '
            'quote the whole value: {en: "Who moves the data?", zh: "谁搬数据"}')


# control characters other than tab and newline (CR is a line break in a file, not in a value) and
# the invisible format characters (zero-width spaces, direction marks, the bidirectional embeddings,
# overrides and isolates, which reorder what a reader sees); a byte-order mark may open a file. A
# control character or a line or paragraph separator (YAML breaks lines there) in a file stops its
# reading; an invisible character is reported at each line that holds one, and the file is read on.
_STOP_IN_FILE = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\u2028\\u2029]")
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")
MAX_TEXT = 1_000_000  # characters of one value; far beyond any card, far below the RDF store's limit
MAX_UNKNOWN = 20  # unknown keys listed one by one in a file; the rest are counted
MAX_ALIASES = 50  # alias uses (*name) in one file; the bundled atlas uses none
MAX_DEPTH = 64  # nested lists and mappings in one file; the deepest record (a flow step's text) takes 5
MAX_NUMBER = 1000  # characters of a number (Python reads no whole number of more than 4,300 digits)
_NUMBER_TAGS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_CONTROL_HINT = ("remove it: an ESC or OSC sequence could rewrite the reader's terminal, and an invisible "
                 "character (a zero-width space, a direction mark or override) makes the text read as something "
                 "else than it is; only newline and tab are allowed in text")


def _char_name(ch: str) -> str:
    if ch == "\0":
        return "a NUL character"
    import unicodedata

    kind = "control" if unicodedata.category(ch) == "Cc" else "invisible"
    name = unicodedata.name(ch, "")
    return f"{kind} character U+{ord(ch):04X}" + (f" ({name})" if name else "")


def _at(ctx: _Ctx, text: str, index: int) -> Location:
    line = text.count("\n", 0, index) + 1
    return Location(ctx.file, line, index - text.rfind("\n", 0, index))


def _control_at(ctx: _Ctx, text: str) -> bool:
    """Report the first control character of a file's text (a NUL included) at its line: True, the
    file is not read. Each line that holds an invisible character is reported too (the file is read)."""
    first = 1 if text.startswith("\ufeff") else 0
    m = _STOP_IN_FILE.search(text)
    if m is not None:
        ctx.error(_at(ctx, text, m.start()), "control-character", f"{_char_name(m.group(0))} in the file",
                  _CONTROL_HINT)
        return True
    line = 0
    for m in _INVISIBLE.finditer(text, first):
        loc = _at(ctx, text, m.start())
        if loc.line != line:
            line = loc.line
            ctx.error(loc, "control-character", f"{_char_name(m.group(0))} in the file", _CONTROL_HINT)
    return False


def _check_scalar(ctx: _Ctx, node, text: str) -> None:
    if _CONTROL.search(node.value) is not None:
        for m in _CONTROL.finditer(node.value):
            if not _written_as_itself(m.group(0), node, text):
                ctx.error(node, "control-character", f"{_char_name(m.group(0))} in a value", _CONTROL_HINT)
                break
    if len(node.value) <= MAX_NUMBER:
        return
    if len(node.value) > MAX_TEXT:
        ctx.error(node, "too-long", f"a value of {len(node.value)} characters (at most {MAX_TEXT})",
                  "shorten it; the RDF export and the SPARQL store refuse giant literals")
    elif node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER:
        ctx.error(node, "too-long", f"a number written with {len(node.value)} characters (at most {MAX_NUMBER})",
                  "no field of the atlas holds such a number; quote the value if it is text")


def _written_as_itself(ch: str, node, text: str) -> bool:
    """An invisible character that the value's own text holds (reported at its line already), not one
    that an escape such as "\\u200b" made."""
    return bool(_INVISIBLE.match(ch)) and ch in text[node.start_mark.index:node.end_mark.index]


def _check_values(ctx: _Ctx, root, text: str) -> bool:
    """Every scalar of a document (keys included): no control character but newline and tab (an
    escape such as "\\e" or "\\x1b" in a quoted string makes one), no invisible character, no giant
    value. The walk goes by identity: a node that aliases reach again is not walked again, so nine
    levels of ten aliases cost what they take to write. More than MAX_ALIASES alias uses is an error
    (`yaml-aliases`, at the alias over the limit) and the file is not read: False."""
    seen: set[int] = set()
    repeats = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            repeats += 1
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            _check_scalar(ctx, node, text)
            continue
        if depth > MAX_DEPTH:
            ctx.error(node, "too-deep", f"lists and mappings nested deeper than {MAX_DEPTH} levels: the file was "
                      "not read", "no record of the atlas nests more than a few levels; flatten the value")
            return False
        if isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend(((key, depth + 1), (value, depth + 1)))
    if repeats <= MAX_ALIASES:
        return True
    ctx.error(_alias_over_limit(ctx, text), "yaml-aliases",
              f"{repeats} alias uses (*name) in one file, more than {MAX_ALIASES}: the file was not read",
              "write the values out; the atlas's data files need no anchors or aliases")
    return False


def _alias_over_limit(ctx: _Ctx, text: str) -> Location:
    """Where the first alias over MAX_ALIASES is written (the events are read again: only when the
    limit is passed)."""
    count = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            count += 1
            if count > MAX_ALIASES:
                mark = event.start_mark
                return Location(ctx.file, mark.line + 1, mark.column + 1) if mark else Location(ctx.file)
    return Location(ctx.file)


def _compose(path: Path, ctx: _Ctx, raw: bytes | None = None):
    try:
        raw = read_bounded(path, DATA_FILE, "data file") if raw is None else raw
    except FileNotFoundError:
        ctx.warning(Location(ctx.file), "vanished", "the file disappeared while the data folder was read; "
                    "skipped")
        return None
    except OSError as exc:
        ctx.error(Location(ctx.file), "unreadable", f"cannot read file: {exc.strerror or exc}")
        return None
    except TooLarge as exc:
        ctx.error(Location(ctx.file), "too-large", exc.message, exc.hint)
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        ctx.error(Location(ctx.file, line, 1), "bad-encoding", "file is not valid UTF-8")
        return None
    if _control_at(ctx, text):
        return None
    try:
        root = yaml.compose(text, Loader=_Loader)
        if root is not None and not _check_values(ctx, root, text):
            return None
        return root
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(ctx.file, mark.line + 1, mark.column + 1) if mark else Location(ctx.file)
        if "nesting depth" in str(exc.problem):  # libyaml's own bound (1,000 levels)
            ctx.error(loc, "too-deep", f"lists and mappings nested deeper than {MAX_DEPTH} levels: the file was "
                      "not read", "no record of the atlas nests more than a few levels; flatten the value")
        else:
            ctx.error(loc, "yaml-syntax", f"YAML syntax error: {exc.problem or exc.context}",
                      _flow_scalar_hint(text, exc))
    except yaml.YAMLError as exc:
        ctx.error(Location(ctx.file), "yaml-syntax", f"YAML error: {exc}")
    return None


def portable_problems(text: str, display: str) -> list[Problem]:
    """What in one data file's text only libyaml can read (empty where libyaml is missing: then the
    pure-Python reader is the one that reads the atlas anyway)."""
    if _Loader is yaml.SafeLoader:
        return []
    loaded = Loaded(Atlas())
    _check_portable(_Ctx(display, loaded), text)
    return loaded.problems


def _check_portable(ctx: _Ctx, text: str) -> None:
    """The file must read the same with PyYAML's pure-Python reader as with libyaml: the atlas is
    read with whichever the machine has."""
    hint = "quote the value, e.g. {en: \"Who moves the data?\", zh: \"谁搬数据\"}"
    try:
        pure = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        ctx.error(Location(ctx.file), "too-deep", "PyYAML's pure-Python reader stops: the file nests too deep",
                  "flatten the value")
        return
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(ctx.file, mark.line + 1, mark.column + 1) if mark else Location(ctx.file)
        ctx.error(loc, "yaml-portability", "libyaml reads this but PyYAML's pure-Python reader stops: "
                  f"{exc.problem or exc.context}", _flow_scalar_hint(text, exc) or hint)
        return
    except yaml.YAMLError as exc:
        ctx.error(Location(ctx.file), "yaml-portability", f"PyYAML's pure-Python reader fails: {exc}", hint)
        return
    where = differing_node(pure, yaml.compose(text, Loader=_Loader), ctx.file)
    if where is not None:
        ctx.error(where, "yaml-portability",
                  "libyaml and PyYAML's pure-Python reader read this file differently", hint)


def _node_at(ctx_file: str, node) -> Location:
    mark = getattr(node, "start_mark", None)
    return Location(ctx_file, mark.line + 1, mark.column + 1) if mark is not None else Location(ctx_file)


def differing_node(a, b, file: str = "") -> Location | None:
    """Where two composed documents differ (None: they are the same). Nodes, not values, are
    compared: both readers resolve tags with the same Python code, so equal nodes make equal values,
    and nothing is constructed (an impossible day or a 5,000-digit number cannot be built as a value,
    yet it is a node like any other, reported by the value checks at its line). The walk goes by
    identity, as `same_value` does: an alias reached again is not compared again."""
    seen: set[tuple[int, int]] = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y or (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if type(x) is not type(y) or getattr(x, "tag", None) != getattr(y, "tag", None):
            return _node_at(file, y if y is not None else x)
        if isinstance(x, yaml.ScalarNode):
            if x.value != y.value:
                return _node_at(file, y)
        elif isinstance(x, (yaml.SequenceNode, yaml.MappingNode)):
            if len(x.value) != len(y.value):
                return _node_at(file, y)
            if isinstance(x, yaml.MappingNode):
                for (k, v), (k2, v2) in zip(x.value, y.value):
                    stack.extend(((k, k2), (v, v2)))
            else:
                stack.extend(zip(x.value, y.value))
    return None


def same_value(a, b) -> bool:
    """`a == b` for two values read from YAML, walked by identity: a pair of nodes already compared
    (an alias reached again, or a recursive list) is not compared again, so shared and recursive
    values cost their written size, not their expanded size. NaN equals NaN."""
    seen: set[tuple[int, int]] = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y or (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y and not (isinstance(x, float) and x != x and y != y):
            return False
    return True


def _list_file(ctx: _Ctx, root, key: str) -> list:
    f = _fields(ctx, root, f"{ctx.file}", (key,), (key,))
    if not f or key not in f:
        return []
    return _list(ctx, f[key], key)


class _Reading:
    """One file being read: the records it defines (kept in order, duplicates included: which one
    wins is decided when the files are put together, see `assemble`), its settings and a sink for
    its problems and references."""

    def __init__(self):
        self.loaded = Loaded(Atlas())
        self.atlas = self.loaded.atlas
        self.records: list[tuple[str, object, Location]] = []
        self.cutoff: str | None = None
        self.surface: ApiSurface | None = None  # an API history's header, and its symbols
        self.symbols: list[ApiSymbol] = []

    def add(self, ctx: _Ctx, kind: str, record, node) -> None:
        """Keep `record` (if it parsed) with the location of its node."""
        if record is not None:
            self.records.append((kind, record, ctx.loc(node)))


@dataclass
class FileResult:
    """What one data file says when read on its own, consulting no other file: its records in
    order (kind, record, location; duplicates kept), the problems and references found in it, the
    cut-off it sets (atlas.yaml), the sightings and harvests it holds (timeline.yaml) and the surface
    and every symbol of an API history (data/api/*.jsonl). Its plain
    form (`to_plain`) is what the compiled index caches per file content."""

    display: str
    records: list = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    cutoff: str | None = None
    sightings: list[Sighting] = field(default_factory=list)
    harvests: list[RepoHarvest] = field(default_factory=list)
    unread: bool = False  # the file could not be read at all (reported once, by its own problem)
    surface: ApiSurface | None = None
    symbols: list[ApiSymbol] = field(default_factory=list)

    def to_plain(self) -> dict:
        return {
            "display": self.display,
            "records": [(kind, plain(r), tuple(loc)) for kind, r, loc in self.records],
            "problems": [(tuple(p.location), p.level, p.code, p.message, p.hint) for p in self.problems],
            "refs": [(r.kind, r.target, tuple(r.loc), r.what) for r in self.refs],
            "cutoff": self.cutoff,
            "sightings": [plain(s) for s in self.sightings],
            "harvests": [plain(h) for h in self.harvests],
            "unread": self.unread,
            "surface": None if self.surface is None else plain(self.surface),
            "symbols": [plain(s) for s in self.symbols],
        }

    @classmethod
    def from_plain(cls, data: dict) -> "FileResult":
        return cls(
            data["display"],
            [(kind, unplain(_LISTS_OF[kind], r), Location(*loc)) for kind, r, loc in data["records"]],
            [Problem(Location(*loc), *rest) for loc, *rest in data["problems"]],
            [Ref(kind, target, Location(*loc), what) for kind, target, loc, what in data["refs"]],
            data["cutoff"],
            [unplain("sightings", s) for s in data["sightings"]],
            [unplain("harvests", h) for h in data["harvests"]],
            bool(data.get("unread")),
            None if data.get("surface") is None else unplain("surfaces", data["surface"]),
            [unplain("symbols", s) for s in data.get("symbols", ())])


_LISTS_OF = {"question": "questions", "repository": "repositories", "concept": "concepts", "claim": "claims",
             "flow": "flows", "seed page": "seed_pages"}


def _read_settings(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
    f = _fields(ctx, root, "atlas.yaml", ("cutoff",), ("cutoff",))
    if f and "cutoff" in f:
        reading.cutoff = _date(ctx, f["cutoff"], "cutoff") or DEFAULT_CUTOFF


def _read_timeline(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
    sightings, harvests, _ = parse_timeline(ctx, root)
    reading.atlas.sightings.extend(sightings)
    reading.atlas.harvests.extend(harvests)


def _list_of(kind: str, key: str, parse):
    """A reader of a file holding `key:` with a list of records."""
    def read(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
        for item in _list_file(ctx, root, key):
            reading.add(ctx, kind, parse(ctx, item), item)
    return read


def _one_per_file(kind: str, parse):
    """A reader of a file holding one record whose id is the file's name."""
    def read(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
        reading.add(ctx, kind, parse(ctx, root, path.stem), root)
    return read


# Where each kind of record lives (docs/schema.md): files at the top of data/, by name, and folders
# under it, by the folder's name; reader(reading, ctx, root node, path).
_TOP_FILES = {
    "atlas.yaml": _read_settings,
    "questions.yaml": _list_of("question", "questions", parse_question),
    "timeline.yaml": _read_timeline,
    "seed.yaml": _list_of("seed page", "pages", parse_seed_page),
}
_FOLDERS = {
    "repositories": _list_of("repository", "repositories", parse_repository),
    "concepts": _one_per_file("concept", parse_concept),
    "claims": _list_of("claim", "claims", parse_claim),
    "flows": _one_per_file("flow", parse_flow),
}


def _display(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def _read_api_file(reading: _Reading, path: Path, rel: Path, file: str, raw: bytes | None) -> None:
    """A generated API history (`data/api/<owner>+<name>.jsonl`, read by `atlas.apiload`)."""
    from .apiload import read_file as read_api

    if len(rel.parts) != 2 or rel.parts[0] != "api":
        reading.loaded.problems.append(Problem(Location(file), "warning", "unknown-file",
                                               "file is not part of the atlas layout and was not read",
                                               "API histories live in data/api/ (see docs/schema.md)"))
        return
    got = read_api(path, file, raw)
    reading.loaded.problems.extend(got.problems)
    if got.surface is not None:
        reading.surface = got.surface
        reading.symbols = got.symbols
        reading.loaded.refs.append(Ref("repo", got.surface.repo, Location(file, 1, 1), "API history"))


def _read_file(reading: _Reading, path: Path, rel: Path, file: str, raw: bytes | None = None) -> None:
    if path.suffix == ".jsonl":
        _read_api_file(reading, path, rel, file, raw)
        return
    ctx = _Ctx(file, reading.loaded)
    before = len(reading.loaded.problems)
    root = _compose(path, ctx, raw)
    if root is None:
        if len(reading.loaded.problems) > before:
            reading.loaded.unread.add(ctx.file)
        else:
            ctx.warning(Location(ctx.file), "empty-file", "file is empty")
        return
    read = _TOP_FILES.get(rel.name) if len(rel.parts) == 1 else _FOLDERS.get(rel.parts[0])
    if read is None:
        ctx.warning(Location(ctx.file), "unknown-file", "file is not part of the atlas layout and was not read",
                    "see docs/schema.md for where each kind of record lives")
        return
    read(reading, ctx, root, path)
    ctx.finish()


def read_file(path: Path, rel: Path, display: str, raw: bytes | None = None) -> FileResult:
    """Read one data file on its own (`rel`: its path under the data folder; `display`: its name
    in locations; `raw`: its bytes, when read already). Never raises for bad data: the problems are
    in the result."""
    reading = _Reading()
    _read_file(reading, path, rel, display, raw)
    loaded = reading.loaded
    return FileResult(display, reading.records, loaded.problems, loaded.refs, reading.cutoff,
                      reading.atlas.sightings, reading.atlas.harvests, bool(loaded.unread),
                      reading.surface, reading.symbols)


def _sort(atlas: Atlas) -> None:
    atlas.concepts.sort(key=lambda c: c.id)
    atlas.claims.sort(key=lambda c: c.id)
    atlas.flows.sort(key=lambda f: f.id)
    atlas.repositories.sort(key=lambda r: r.id.lower())
    order = {q: i for i, q in enumerate(QUESTION_IDS)}
    atlas.questions.sort(key=lambda q: order[q.id])
    atlas.seed_pages.sort(key=lambda p: p.number)


def duplicate(kind: str, ident: str, loc: Location, first: Location) -> Problem:
    """The problem of a record whose id an earlier record (in file order) took already."""
    return Problem(loc, "error", "duplicate-id", f'{kind} id "{ident}" is defined twice',
                   f"the other definition is at {first}")


def assemble(loaded: Loaded, results) -> Loaded:
    """Put files read on their own together, in the order given (the walk's order): the first
    record of a kind and id is kept, a later one is a `duplicate-id` error; the lists are sorted
    and indexed. `results` yields (path, FileResult)."""
    atlas = loaded.atlas
    seen: dict[tuple[str, str], Location] = {}
    for path, result in results:
        loaded.files.append(path)
        loaded.problems.extend(result.problems)
        loaded.refs.extend(result.refs)
        if result.unread:
            loaded.unread.add(result.display)
        for kind, record, loc in result.records:
            key = (kind, record.id)
            if key in seen:
                loaded.problems.append(duplicate(kind, record.id, loc, seen[key]))
                continue
            seen[key] = loc
            getattr(atlas, _LISTS_OF[kind]).append(record)
        if result.cutoff is not None:
            atlas.cutoff = result.cutoff
        atlas.sightings.extend(result.sightings)
        atlas.harvests.extend(result.harvests)
        _add_api(loaded, result)
    _sort(atlas)
    _name_symbols(loaded)
    atlas.reindex()
    return loaded


def _add_api(loaded: Loaded, result: FileResult) -> None:
    """An API history's surface and symbols (one file per repository: a second one is reported by
    `checks.check_api`)."""
    if result.surface is not None:
        loaded.atlas.surfaces.append(result.surface)
        loaded.api[result.surface.repo] = result.symbols


def _name_symbols(loaded: Loaded) -> None:
    """The surfaces in repository order, and the symbols that concepts name (`apiload.named`)."""
    if loaded.api:
        from .apiload import named

        loaded.atlas.surfaces.sort(key=lambda x: x.repo)
        loaded.atlas.symbols = named(loaded.atlas, [s for syms in loaded.api.values() for s in syms])


def listing(data_dir: Path, display_base: Path | None = None):
    """(Loaded without records, the files to read as (path, rel, display)) for a data folder:
    the walk's problems are in the Loaded already; None for the files when the folder cannot be
    read at all."""
    data_dir = Path(data_dir)
    loaded = Loaded(Atlas(), data_dir=data_dir)
    base = display_base if display_base is not None else data_dir.parent
    loaded.display_dir = _display(data_dir, base)
    if not data_dir.is_dir():
        loaded.problems.append(Problem(Location(str(data_dir)), "error", "no-data",
                                       "data directory does not exist"))
        return loaded, None
    try:
        found = list_files(data_dir, lambda rel: _display(data_dir / rel, base))
    except AtlasError as exc:
        loaded.problems.append(Problem(exc.location, "error", "data-root", exc.message, exc.hint))
        return loaded, None
    loaded.problems.extend(found.problems)
    files = [(data_dir / rel, Path(rel), _display(data_dir / rel, base)) for rel, _, _ in found.files]
    return loaded, files


def load_data(data_dir: Path, display_base: Path | None = None) -> Loaded:
    """Read every file of a data directory. Never raises for bad data: see `Loaded.problems`."""
    loaded, files = listing(data_dir, display_base)
    if files is None:
        return loaded
    return assemble(loaded, ((path, read_file(path, rel, display)) for path, rel, display in files))

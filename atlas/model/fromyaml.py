"""The record parsers: one YAML node -> one record of the model (concepts, questions, repositories,
claims, flows, seed pages, the timeline), every field checked."""
from __future__ import annotations
import re
import yaml
from .core import (
    API_KINDS, CLAIM_STATUSES, CONFIDENCES, EDGE_TYPES, ID_RE, KINDS, LANGS, LIFECYCLES, METHODS, PRECISIONS,
    QUESTION_IDS, RELEASE_SCHEMES, REPO_RE, REPO_STATUSES, SHA_RE, ApiFolder, ApiRule, Claim, Concept, Evidence,
    Flow, FlowEdge, FlowStep, Lifecycle, Pin, Probe, Question, Relation, ReleaseRule, RepoHarvest, Repository,
    SeedPage, Sighting, TestPlan, Text, Undated, WindowRegion, canonical_relation, RELATION_TYPES,
    INVERSE_TO_FORWARD,
)
from ..text import branch_problem, norm, pin_path_problem, repo_url_problem, width
from .yamlnodes import (
    _Ctx, _bool, _date, _did_you_mean, _enum, _fields, _id, _int, _list, _mapping, _str, _str_list, _text,
    _when_ok,
)


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

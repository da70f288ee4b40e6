"""Whole-atlas checks run after loading: references, collisions, cycles, dates, coverage.

Each check appends `Problem`s; `check(loaded)` runs them all (a crashing check becomes a
problem of its own so the others still run).
"""
from __future__ import annotations

import traceback

from ..errors import Location, Problem
from .yamlnodes import Loaded
from .core import ACYCLIC_RELATIONS, QUESTION_IDS, SYMMETRIC, seed_page_of, utc_day
from ..text import norm, suggest

HARDWARE_KINDS = ("hardware", "system")


def _problem(loaded: Loaded, loc, level, code, message, hint=""):
    loaded.problems.append(Problem(loc or Location("data"), level, code, message, hint))


def check_refs(loaded: Loaded) -> None:
    """Every reference names a record of its kind (concept, hardware, flow, repository)."""
    atlas = loaded.atlas
    names: dict[str, str] = {}

    def all_names() -> dict[str, str]:  # for the hints only: built when a reference is wrong
        if not names:
            names.update({n: c.id for c in atlas.concepts for n in [c.id, *c.all_names()]})
        return names

    for ref in loaded.refs:
        check = _REF_CHECKS.get(ref.kind)
        if check is not None:
            check(loaded, ref, all_names)


def _concept_ref(loaded: Loaded, ref, all_names) -> None:
    if ref.target not in loaded.atlas.concept_by_id:
        hint = suggest(ref.target, all_names(), 1)
        _problem(loaded, ref.loc, "error" if ref.what != "sighting concept" else "warning",
                 "unknown-ref", f'{ref.what} "{ref.target}" is not a concept',
                 f'did you mean "{hint[0]}"?' if hint else "")


def _hardware_ref(loaded: Loaded, ref, all_names) -> None:
    atlas = loaded.atlas
    c = atlas.concept_by_id.get(ref.target)
    if c is None:
        hint = suggest(ref.target, {k: v for k, v in all_names().items()
                                    if atlas.concept_by_id[v].kind in HARDWARE_KINDS}, 1)
        _problem(loaded, ref.loc, "error", "unknown-ref",
                 f'{ref.what} "{ref.target}" is not a concept',
                 f'did you mean "{hint[0]}"? (or use "any")' if hint else 'use a hardware id or "any"')
    elif c.kind not in HARDWARE_KINDS:
        _problem(loaded, ref.loc, "error", "wrong-kind",
                 f'{ref.what} "{ref.target}" is a {c.kind}, not hardware or a system')


def _flow_ref(loaded: Loaded, ref, all_names) -> None:
    atlas = loaded.atlas
    if ref.target not in atlas.flow_by_id:
        hint = suggest(ref.target, {f.id: f.id for f in atlas.flows}, 1)
        _problem(loaded, ref.loc, "error", "unknown-ref", f'{ref.what} "{ref.target}" is not a flow',
                 f'did you mean "{hint[0]}"?' if hint else "")


def _repo_ref(loaded: Loaded, ref, all_names) -> None:
    atlas = loaded.atlas
    if ref.target not in atlas.repo_by_id:
        ids = {r.id: r.id for r in atlas.repositories}
        hint = suggest(ref.target, ids, 1)
        _problem(loaded, ref.loc, "error", "unknown-repo",
                 f'{ref.what} "{ref.target}" is not listed in data/repositories/',
                 f'did you mean "{hint[0]}"?' if hint else "add it to data/repositories/*.yaml")


_REF_CHECKS = {"concept": _concept_ref, "hardware": _hardware_ref, "flow": _flow_ref, "repo": _repo_ref}


def check_questions(loaded: Loaded) -> None:
    have = {q.id for q in loaded.atlas.questions}
    missing = [q for q in QUESTION_IDS if q not in have]
    where = f"{loaded.display_dir}/questions.yaml"
    if missing and where not in loaded.unread:
        # (a file that did not read is reported once, not again as lacking its questions)
        _problem(loaded, Location(where), "error", "missing-question",
                 "questions.yaml lacks: " + ", ".join(missing))


def check_collisions(loaded: Loaded) -> None:
    """No two concepts may share an id, name or alias after case/width folding."""
    owner: dict[str, tuple[str, str]] = {}
    for c in loaded.atlas.concepts:
        for name in dict.fromkeys([c.id, *c.all_names()]):
            key = norm(name)
            if not key:
                continue
            other = owner.get(key)
            if other and other[0] != c.id:
                _problem(loaded, c.loc, "error", "alias-collision",
                         f'"{name}" of concept "{c.id}" collides with "{other[1]}" of concept "{other[0]}"',
                         "names and aliases must identify one concept; add a disambiguation concept "
                         "with `disambiguates` relations instead")
            else:
                owner[key] = (c.id, name)


def check_identifiers(loaded: Loaded) -> None:
    """A concept, a claim, a flow and a question never share an id: each id is the dcterms:identifier
    of one resource of the RDF export (kinds are `kind:<id>`, apart from these)."""
    atlas = loaded.atlas
    owner: dict[str, str] = {}
    for kind, records in (("question", atlas.questions), ("concept", atlas.concepts), ("claim", atlas.claims),
                          ("flow", atlas.flows)):
        for record in records:
            first = owner.setdefault(record.id, kind)
            if first != kind:
                _problem(loaded, record.loc, "error", "duplicate-identifier",
                         f'{kind} id "{record.id}" is also the id of a {first}',
                         "give it another id: every id is the dcterms:identifier of one resource in the RDF export")


def check_cycles(loaded: Loaded) -> None:
    for rtype in ACYCLIC_RELATIONS:
        succ: dict[str, list] = {}
        for r in loaded.atlas.relations():
            if r.type == rtype:
                succ.setdefault(r.source, []).append(r)
        _find_cycles(loaded, rtype, succ)


def _find_cycles(loaded: Loaded, rtype: str, succ: dict) -> None:
    """Depth-first search with an explicit stack (a chain of any length, no recursion): an edge
    back to a node on the current path closes a cycle, reported once per set of nodes."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    reported: set = set()
    for start in sorted(succ):
        if start in state:
            continue
        path, position = [start], {start: 0}
        todo = [iter(succ.get(start, []))]
        state[start] = 1
        while todo:
            r = next(todo[-1], None)
            if r is None:
                todo.pop()
                state[path.pop()] = 2
                continue
            if state.get(r.target) == 1:
                cycle = path[position[r.target]:] + [r.target]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    _problem(loaded, r.loc, "error", "cycle",
                             f"{rtype} relations form a cycle: " + " -> ".join(cycle))
            elif r.target not in state:
                state[r.target] = 1
                position[r.target] = len(path)
                path.append(r.target)
                todo.append(iter(succ.get(r.target, [])))


def check_relations(loaded: Loaded) -> None:
    check_relation_pairs(loaded, loaded.atlas.relations())
    check_lonely(loaded, loaded.atlas.concepts, loaded.atlas.touching)


def check_relation_pairs(loaded: Loaded, relations) -> None:
    """No relation of a concept to itself; a relation stated twice (in either direction, for a
    symmetric type) is a warning at the second."""
    seen: dict = {}
    for r in relations:
        if r.source == r.target:
            _problem(loaded, r.loc, "error", "self-relation", f'"{r.source}" {r.type} itself')
            continue
        key = relation_key(r)
        if key in seen:
            _problem(loaded, r.loc, "warning", "duplicate-relation",
                     f"{r.source} {r.type} {r.target} is stated twice", f"first at {seen[key]}")
        else:
            seen[key] = r.loc


def relation_key(r) -> tuple:
    """What makes two relations the same statement: the type and both ends (unordered when the
    type is symmetric)."""
    return (r.type, *sorted((r.source, r.target))) if r.type in SYMMETRIC else (r.type, r.source, r.target)


def check_lonely(loaded: Loaded, concepts, touching) -> None:
    """A concept that no relation touches is a warning (`touching`: id -> relations)."""
    for c in concepts:
        if not touching.get(c.id):
            _problem(loaded, c.loc, "warning", "no-relation", f'concept "{c.id}" has no relation')


def check_dates(loaded: Loaded) -> None:
    cutoff = loaded.atlas.cutoff
    for s in loaded.atlas.sightings:
        for key in ("committer_date", "introduced_date"):
            value = getattr(s, key)
            if value and utc_day(value) > cutoff:
                _problem(loaded, s.loc, "error", "after-cutoff",
                         f"{key} {value} of {s.concept} in {s.repo} is after the cut-off {cutoff}")


def check_flows(loaded: Loaded) -> None:
    for flow in loaded.atlas.flows:
        order = [s.id for s in flow.ordered_steps()]
        pos = {sid: i for i, sid in enumerate(order)}
        for e in flow.edges:
            if pos.get(e.source, 0) >= pos.get(e.target, 0):
                _problem(loaded, e.loc, "error", "cycle",
                         f'flow "{flow.id}" is not a DAG: edge {e.source} -> {e.target} closes a cycle',
                         "describe loops in the step label instead of a back edge")
                break
        if not flow.steps:
            _problem(loaded, flow.loc, "error", "missing-field", f'flow "{flow.id}" has no steps')


def _rests_on_source(claim) -> bool:
    """A confirmed claim needs a line read in source, or a derivation made only from pinned sources."""
    conf = [e.confidence for e in claim.evidence]
    if "read-in-source" in conf:
        return True
    return "derived" in conf and all(e.pin and e.confidence == "derived" for e in claim.evidence)


def check_claim_status(loaded: Loaded) -> None:
    for claim in loaded.atlas.claims:
        if claim.status == "confirmed" and not _rests_on_source(claim):
            kinds = ", ".join(sorted({e.confidence or "unstated" for e in claim.evidence})) or "none"
            _problem(loaded, claim.loc, "error", "status-exceeds-evidence",
                     f'claim "{claim.id}" is confirmed but no evidence item was read in source '
                     f"(its evidence is {kinds})",
                     "add a read-in-source pin (or derive it only from pinned sources), "
                     "or lower the status to hypothesis or open")


# ---------------------------------------------------------------------------------------------
# Planes, test plans and history coverage (truth and coverage, third pass)
# ---------------------------------------------------------------------------------------------

PLANE_SUFFIX = "-plane"  # a concept whose id ends so is a plane (control-plane, data-plane, sync-plane)


def _questions_of(atlas, ids) -> set[str]:
    return {q for i in ids if i in atlas.concept_by_id for q in atlas.concept_by_id[i].answers}


def check_planes(loaded: Loaded) -> None:
    """A flow step that names a plane says which plane does its work. Its other concepts answer
    some of the six questions; when they answer any, one of them must be a question the plane
    answers, or the plane's answers and the flow's tag tell two different stories."""
    atlas = loaded.atlas
    for flow in atlas.flows:
        for step in flow.steps:
            planes = [i for i in step.concepts if i.endswith(PLANE_SUFFIX) and i in atlas.concept_by_id]
            asked = _questions_of(atlas, [i for i in step.concepts if i not in planes])
            for plane in planes:
                pc = atlas.concept_by_id[plane]
                answers = set(pc.answers)
                if asked and not asked & answers:
                    _problem(loaded, step.loc or flow.loc, "error", "plane-mismatch",
                             f'step "{step.id}" of flow "{flow.id}" is tagged {plane}, which answers '
                             f'{_listed(answers)}, but its concepts answer {_listed(asked)}',
                             f"tag the step with the plane that answers {_listed(asked)}, or let "
                             f"{plane} answer the question the step shows"
                             + (f" ({pc.loc.file})" if pc.loc else ""))


def _listed(questions: set[str]) -> str:
    return ", ".join(q for q in QUESTION_IDS if q in questions) or "nothing"


def check_test_plans(loaded: Loaded) -> None:
    """A hypothesis needs a test plan; a plan's step must be a step of a flow; no two plans of the
    same flow (or two plans without a step) share a place in the decision order."""
    atlas = loaded.atlas
    seen: dict[tuple[str, int], str] = {}
    for claim in atlas.claims:
        plan = claim.test_plan
        if plan is None:
            if claim.status == "hypothesis":
                _problem(loaded, claim.loc, "error", "missing-test-plan",
                         f'claim "{claim.id}" is a hypothesis without a test plan',
                         "add test_plan: {order, where: [pins to time or print at], measure, confirm, "
                         "refute} (docs/schema.md, Claim)")
            continue
        _check_plan_step(loaded, claim.id, plan)
        key = (plan.flow_step[0], plan.order)
        if plan.order and key in seen:
            _problem(loaded, plan.loc, "error", "duplicate-order",
                     f'the test plans of claims "{seen[key]}" and "{claim.id}" both have '
                     f"decision order {plan.order}" + (f" in flow {key[0]}" if key[0] else ""))
        seen.setdefault(key, claim.id)


def _check_plan_step(loaded: Loaded, cid: str, plan) -> None:
    if not plan.step:
        return
    flow_id, step_id = plan.flow_step
    flow = loaded.atlas.flow_by_id.get(flow_id)
    if flow is None or step_id not in {s.id for s in flow.steps}:
        what = f'flow "{flow_id}"' if flow is None else f'step "{step_id}" of flow "{flow_id}"'
        _problem(loaded, plan.loc, "error", "unknown-ref",
                 f'the test plan of claim "{cid}" names {what}, which does not exist')


def check_undated(loaded: Loaded) -> None:
    """Every concept is dated by a probe or says why it cannot be (`undated`); a concept with both
    is a contradiction, and so is an `undated` repository that has been harvested."""
    atlas = loaded.atlas
    harvested = {h.repo for h in atlas.harvests}
    for c in atlas.concepts:
        if c.undated is None:
            if not c.probes:
                _problem(loaded, c.loc, "warning", "undated-without-reason",
                         f'concept "{c.id}" has no probe and does not say why (undated)',
                         "add a probe in a harvested repository, or undated: {repos: [...], note: ...}")
            continue
        if c.probes:
            _problem(loaded, c.undated.loc or c.loc, "warning", "undated-with-probes",
                     f'concept "{c.id}" has probes and an undated reason', "keep one of the two")
        for repo in c.undated.repos:
            if repo in harvested:
                _problem(loaded, c.undated.loc or c.loc, "warning", "undated-but-harvested",
                         f'concept "{c.id}" is undated, but {repo} has been harvested',
                         f"add a probe in {repo} instead of the undated reason")


def check_api(loaded: Loaded) -> None:
    """The API histories: each belongs to a repository that declares `api:` or `releases:`, a symbol's
    first release is dated no later than the cut-off, and each name of a concept's `api:` list names a
    symbol of some history (when there are histories)."""
    from .core import name_index

    atlas = loaded.atlas
    for surface in atlas.surfaces:
        r = atlas.repo_by_id.get(surface.repo)
        if r is not None and r.api is None and r.releases is None:
            _problem(loaded, surface.loc, "warning", "api-undeclared",
                     f"{surface.repo} has an API history but declares neither api: nor releases:",
                     "declare them in data/repositories/, or let `atlas refresh` remove the file")
        late = [x.name for x in surface.releases if utc_day(x.date) > atlas.cutoff]
        if late:
            _problem(loaded, surface.loc, "error", "release-after-cutoff",
                     f"{surface.repo}: release(s) dated after the cut-off {atlas.cutoff}: {', '.join(late)}",
                     "run `atlas refresh` with the atlas's cut-off")
    if not loaded.api:
        return
    index = name_index([s for syms in loaded.api.values() for s in syms])
    for c in atlas.concepts:
        for entry in c.api:
            head, sep, rest = entry.partition(":")
            repo, name = (head, rest) if sep and "/" in head and not rest.startswith(":") else ("", entry)
            if not any(not repo or sym.repo == repo for sym in index.get(name, [])):
                _problem(loaded, c.loc, "warning", "api-name-unknown",
                         f'concept "{c.id}" names the API symbol {entry!r}, which no API history holds',
                         "check the spelling (case matters), or the repository's public globs")


def _all_evidence(atlas) -> list:
    """Every evidence item of the atlas: concepts, their relations, claims, flows, steps, repositories."""
    items = [e for c in atlas.concepts for e in [*c.evidence, *(e for r in c.relations for e in r.evidence)]]
    items += [e for cl in atlas.claims for e in cl.evidence]
    items += [e for f in atlas.flows for e in [*f.evidence, *(s.source for s in f.steps if s.source)]]
    items += [e for r in atlas.repositories if r.api for s in r.api.surfaces for e in s.evidence]
    return items + [e for r in atlas.repositories for e in r.evidence]


def check_seed_citations(loaded: Loaded) -> None:
    """A citation of the seed names a page data/seed.yaml summarises (once that file exists)."""
    pages = {p.number for p in loaded.atlas.seed_pages}
    if not pages:
        return
    for ev in _all_evidence(loaded.atlas):
        n = seed_page_of(ev.url)
        if n is not None and n not in pages:
            _problem(loaded, ev.loc, "error", "unknown-seed-page",
                     f"the seed has no page {n} in seed.yaml", f"pages: {min(pages)}-{max(pages)}")


CHECKS = (check_refs, check_questions, check_collisions, check_identifiers, check_cycles, check_relations,
          check_dates, check_flows, check_claim_status, check_planes, check_test_plans, check_undated, check_api,
          check_seed_citations)


def check(loaded: Loaded) -> Loaded:
    for fn in CHECKS:
        try:
            fn(loaded)
        except Exception:  # a crashing check must not hide the others' findings
            _problem(loaded, Location("atlas/model/checks.py"), "error", "check-crashed",
                     f"check {fn.__name__} crashed:\n{traceback.format_exc()}")
    loaded.problems.sort(key=lambda p: (p.location.file, p.location.line, p.location.col, p.code))
    return loaded

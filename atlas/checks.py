"""Whole-atlas checks run after loading: references, collisions, cycles, dates, coverage.

Each check appends `Problem`s; `check(loaded)` runs them all (a crashing check becomes a
problem of its own so the others still run).
"""
from __future__ import annotations

import traceback

from .errors import Location, Problem
from .loader import Loaded
from .model import ACYCLIC_RELATIONS, QUESTION_IDS, SYMMETRIC, utc_day
from .text import norm, suggest

HARDWARE_KINDS = ("hardware", "system")


def _problem(loaded: Loaded, loc, level, code, message, hint=""):
    loaded.problems.append(Problem(loc or Location("data"), level, code, message, hint))


def check_refs(loaded: Loaded) -> None:
    atlas = loaded.atlas
    names: dict[str, str] = {}

    def all_names() -> dict[str, str]:  # for the hints only: built when a reference is wrong
        if not names:
            names.update({n: c.id for c in atlas.concepts for n in [c.id, *c.all_names()]})
        return names

    for ref in loaded.refs:
        if ref.kind == "concept":
            if ref.target not in atlas.concept_by_id:
                hint = suggest(ref.target, all_names(), 1)
                _problem(loaded, ref.loc, "error" if ref.what != "sighting concept" else "warning",
                         "unknown-ref", f'{ref.what} "{ref.target}" is not a concept',
                         f'did you mean "{hint[0]}"?' if hint else "")
        elif ref.kind == "hardware":
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
        elif ref.kind == "repo":
            if ref.target not in atlas.repo_by_id:
                ids = {r.id: r.id for r in atlas.repositories}
                hint = suggest(ref.target, ids, 1)
                _problem(loaded, ref.loc, "error", "unknown-repo",
                         f'{ref.what} "{ref.target}" is not listed in data/repositories/',
                         f'did you mean "{hint[0]}"?' if hint else "add it to data/repositories/*.yaml")


def check_questions(loaded: Loaded) -> None:
    have = {q.id for q in loaded.atlas.questions}
    missing = [q for q in QUESTION_IDS if q not in have]
    where = f"{loaded.display_dir}/questions.yaml"
    if missing and not any(p.is_error and p.location.file == where for p in loaded.problems):
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


CHECKS = (check_refs, check_questions, check_collisions, check_cycles, check_relations,
          check_dates, check_flows, check_claim_status)


def check(loaded: Loaded) -> Loaded:
    for fn in CHECKS:
        try:
            fn(loaded)
        except Exception:  # a crashing check must not hide the others' findings
            _problem(loaded, Location("atlas/checks.py"), "error", "check-crashed",
                     f"check {fn.__name__} crashed:\n{traceback.format_exc()}")
    loaded.problems.sort(key=lambda p: (p.location.file, p.location.line, p.location.col, p.code))
    return loaded

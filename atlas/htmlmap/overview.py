"""The overview table (index.html): the seed's general map as rows and columns.

Rows are the concepts, every kind, in order of their first visible commit (the history axis);
concepts without a dated sighting come last. Columns are the six questions (the technical axis),
each cell the concept's one-line answer. This module only gathers the rows as plain dicts; the
template writes the HTML.
"""
from __future__ import annotations

from ..model import QUESTION_IDS, Atlas, Concept, Text
from ..text import norm

UNDATED = "undated"


def text(t: Text | None) -> dict:
    return {"en": t.en, "zh": t.zh} if t else {"en": "", "zh": ""}


def concept_repos(atlas: Atlas, c: Concept) -> list[str]:
    """Every repository a concept is tied to: probes, found sightings, evidence pins."""
    repos = {p.repo for p in c.probes}
    repos |= {s.repo for s in atlas.sightings_by_concept.get(c.id, []) if s.found}
    repos |= {e.pin.repo for e in c.evidence if e.pin}
    return sorted(repos)


def first_date(atlas: Atlas, ident: str) -> str:
    first = atlas.first_visible(ident)
    return first.date if first is not None and first.date else ""


def history_order(atlas: Atlas) -> list[Concept]:
    """Concepts by first visible day, then id; those without a dated sighting last."""
    return sorted(atlas.concepts, key=lambda c: (first_date(atlas, c.id) or "9999-99-99", c.id))


def questions(atlas: Atlas) -> list[dict]:
    out = []
    for qid in QUESTION_IDS:
        q = atlas.question_by_id.get(qid)
        out.append({"id": qid, "names": text(q.names) if q else {"en": qid, "zh": ""},
                    "explanation": text(q.explanation if q else None)})
    return out


def overview_rows(atlas: Atlas, as_of: str) -> list[dict]:
    """Row groups for the overview: [{key, label, rows: [...]}], years oldest first, then undated."""
    groups: list[dict] = []
    for c in history_order(atlas):
        first = atlas.first_visible(c.id)
        date = first.date if first is not None else ""
        key = date[:4] if date else UNDATED
        if not groups or groups[-1]["key"] != key:
            groups.append({"key": key, "rows": []})
        keys = sorted({norm(n) for n in [c.id, *c.all_names()] if norm(n)})
        groups[-1]["rows"].append({
            "id": c.id, "kind": c.kind, "names": text(c.names),
            "answers": [text(c.answers.get(q)) for q in QUESTION_IDS],
            "answered": [q for q in QUESTION_IDS if c.answers.get(q)],
            "lifecycle": c.lifecycle.status,
            "date": date, "repo": first.repo if first is not None else "",
            "precision": first.precision if first is not None else "",
            "repos": concept_repos(atlas, c), "search": " ".join(keys),
            "later": bool(date) and date > as_of,
        })
    return groups

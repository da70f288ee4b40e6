"""The overview table (index.html): the seed's general map as rows and columns.

Rows are the concepts' cards, every kind, in order of their first visible day (the history axis);
concepts without a dated sighting come last. Columns are the six questions (the technical axis),
each cell the concept's one-line answer. This module only arranges the cards for the template,
which writes the HTML.
"""
from __future__ import annotations

from ..model import QUESTION_IDS, utc_day
from ..text import norm
from ..views import Card, answered

UNDATED = "undated"
EMPTY = {"en": "", "zh": ""}


def first_day(card: Card) -> str:
    """The UTC day a concept was first visible, "" when nothing dates it."""
    first = card["first_visible"]
    return utc_day(first["date"]) if first and first["date"] else ""


def history_order(cards: list[Card]) -> list[Card]:
    """Cards by first visible day, then id; those without a dated sighting last."""
    return sorted(cards, key=lambda c: (first_day(c) or "9999-99-99", c["id"]))


def search_keys(card: Card) -> list[str]:
    """The folded names a filter or search box matches: id, names and aliases."""
    names = [card["id"], card["names"]["en"], card["names"]["zh"],
             *(a for lang in ("en", "zh") for a in card["aliases"].get(lang, []))]
    return sorted({norm(n) for n in names if n and norm(n)})


def overview_rows(cards: list[Card], as_of: str) -> list[dict]:
    """Row groups for the overview: [{key, rows: [...]}], years oldest first, then undated."""
    groups: list[dict] = []
    for c in history_order(cards):
        date = first_day(c)
        key = date[:4] if date else UNDATED
        if not groups or groups[-1]["key"] != key:
            groups.append({"key": key, "rows": []})
        first = c["first_visible"]
        groups[-1]["rows"].append({
            "id": c["id"], "kind": c["kind"], "names": c["names"],
            "answers": [c["answers"].get(q, EMPTY) for q in QUESTION_IDS],
            "answered": answered(c["answers"]), "lifecycle": c["lifecycle"]["status"],
            "date": date, "repo": first["repo"] if first else "",
            "precision": first["precision"] if first else "",
            "repos": sorted(r["id"] for r in c["repositories"]), "search": " ".join(search_keys(c)),
            "later": bool(date) and date > as_of,
        })
    return groups

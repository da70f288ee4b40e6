"""The general map, arranged for three pages (the templates write the HTML):

* the compact overview (index.html): one short row per concept, grouped by kind (or, in the page,
  by first visible year), one glyph per question cell, the sentences in the page's data;
* the full table (table.html): every answer written out, rows by first visible day, for the
  browser's find and for print;
* the two-axis picture (map.html): question lanes across, first visible years down, one mark per
  concept, in the lane of the first question it answers.
"""
from __future__ import annotations

import re

from ..model.core import KINDS, QUESTION_IDS, utc_day
from ..text import norm
from ..view.views import Card, answered

UNDATED = "undated"
EMPTY = {"en": "", "zh": ""}
PAREN_RE = re.compile(r"\s*[(\uff08].*$", re.S)

# kind -> (colour, glyph): the glyph's shape tells the kind without its colour
KIND_GLYPH: dict[str, tuple[str, str]] = {
    "library": ("#2b6cb0", "\u25cf"), "api": ("#2c5282", "\u25c6"), "protocol": ("#6b46c1", "\u25b2"),
    "hardware": ("#9c4221", "\u25a0"), "link": ("#b7410e", "\u25bc"), "engine": ("#c53030", "\u2605"),
    "data-path-attribute": ("#276749", "\u2b22"), "build-flag": ("#4a5568", "\u25a1"),
    "memory-model": ("#2f855a", "\u25c7"), "technique": ("#b83280", "\u25d0"), "system": ("#744210", "\u2b21"),
    "paper": ("#975a16", "\u25b3"), "source-artifact": ("#4a5568", "\u25bd"), "concept": ("#285e61", "\u2606"),
}
OTHER_GLYPH = ("#4a5568", "\u25cb")


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


def alias_keys(card: Card) -> list[str]:
    """The folded aliases (the names are in the row's text already)."""
    return sorted({norm(a) for lang in ("en", "zh") for a in card["aliases"].get(lang, []) if norm(a)})


def vocabulary_css() -> str:
    """The words of the compact grid's kind and lifecycle cells, written by CSS from one data-*
    attribute per cell (a 10,000-row grid stays small): each language, and both."""
    from ..view.views import LABELS

    rules = []
    for vocab, attr in (("kind", "k"), ("lifecycle", "l")):
        for value, t in LABELS[vocab].items():
            sel = f'td[data-{attr}="{value}"]::before'
            rules.append(f'{sel} {{ content: "{t["en"]}"; }}')
            rules.append(f'body:has(#lang-zh:checked) {sel} {{ content: "{t["zh"]}"; }}')
            rules.append(f'body:has(#lang-both:checked) {sel} {{ content: "{t["en"]} {t["zh"]}"; }}')
    for kind, (colour, glyph) in KIND_GLYPH.items():  # a phone's kind column: the glyph, named
        t = LABELS["kind"].get(kind, {"en": kind, "zh": kind})
        sel = f'table.grid td.kind[data-k="{kind}"]::before'
        rules.append(f'@media (max-width: 760px) {{ {sel} {{ content: "{glyph}" / "{t["en"]}" !important; '
                     f'color: {colour}; }} body:has(#lang-zh:checked) {sel} {{ content: "{glyph}" / "{t["zh"]}" '
                     f'!important; }} }}')
    later = 'table.grid tr.later td.first::after'
    rules += [f'{later} {{ content: " not yet"; color: #9b2c2c; font-weight: 600; }}',
              f'body:has(#lang-zh:checked) {later} {{ content: " 尚未"; }}',
              f'body:has(#lang-both:checked) {later} {{ content: " not yet 尚未"; }}']
    return "\n".join(rules)


def short(name: str) -> str:
    """A name without its parenthesised expansion ("HCCL (Huawei ...)" -> "HCCL")."""
    return PAREN_RE.sub("", name).strip() or name.strip()


def short_names(card: Card) -> dict[str, str]:
    en = short(card["names"]["en"] or card["id"])
    zh = short(card["names"]["zh"]) if card["names"]["zh"] else ""
    return {"en": en, "zh": zh if zh and zh != en else ""}


def _row(c: Card, as_of: str) -> dict:
    """What every page of the general map shows of one concept."""
    date = first_day(c)
    first = c["first_visible"]
    qs = answered(c["answers"])
    return {
        "id": c["id"], "kind": c["kind"], "names": c["names"], "short": short_names(c),
        "answers": [c["answers"].get(q, EMPTY) for q in QUESTION_IDS], "answered": qs,
        "lifecycle": c["lifecycle"]["status"], "date": date, "year": date[:4],
        "repo": first["repo"] if first else "", "precision": first["precision"] if first else "",
        "repos": sorted(r["id"] for r in c["repositories"]), "search": " ".join(search_keys(c)),
        "akeys": " ".join(alias_keys(c)),
        "later": bool(date) and date > as_of,
    }


def overview_rows(cards: list[Card], as_of: str) -> list[dict]:
    """Row groups for the full table: [{key, rows: [...]}], years oldest first, then undated."""
    groups: list[dict] = []
    for c in history_order(cards):
        row = _row(c, as_of)
        key = row["year"] or UNDATED
        if not groups or groups[-1]["key"] != key:
            groups.append({"key": key, "rows": []})
        groups[-1]["rows"].append(row)
    return groups


def kind_groups(cards: list[Card], as_of: str) -> list[dict]:
    """Row groups for the compact overview: one per kind in the schema's order (others after),
    rows by short name. Each group: {key, colour, glyph, rows}."""
    order = {k: i for i, k in enumerate(KINDS)}
    rows = sorted((_row(c, as_of) for c in cards),
                  key=lambda r: (order.get(r["kind"], len(order)), r["kind"], norm(r["short"]["en"]), r["id"]))
    groups: list[dict] = []
    for r in rows:
        if not groups or groups[-1]["key"] != r["kind"]:
            colour, glyph = KIND_GLYPH.get(r["kind"], OTHER_GLYPH)
            groups.append({"key": r["kind"], "colour": colour, "glyph": glyph, "rows": []})
        groups[-1]["rows"].append(r)
    return groups


def strip_scale(cards: list[Card], cutoff: str) -> dict:
    """The history strip of the compact overview's first-seen column: whole years, from 1 January
    of the first year a concept was seen to the end of the cut-off's year. {first, last, years}."""
    days = [d for d in (first_day(c) for c in cards) if d]
    first = int(min(days)[:4]) if days else int(cutoff[:4])
    last = max(int(cutoff[:4]), *(int(d[:4]) for d in days)) if days else int(cutoff[:4])
    return {"first": first, "last": last, "years": last - first + 1}


def strip_x(day: str, scale: dict) -> float:
    """Where a day sits on the strip, in percent of its width (0: 1 January of the first year)."""
    from datetime import date

    start, end = date(scale["first"], 1, 1), date(scale["last"] + 1, 1, 1)
    return round(100 * (date.fromisoformat(day) - start).days / (end - start).days, 1)


def sentences(cards: list[Card]) -> dict[str, dict]:
    """The answer sentences the compact overview opens on click or focus: id -> question -> text."""
    return {c["id"]: dict(c["answers"]) for c in cards if c["answers"]}


def lane_of(card: Card) -> str:
    """The lane of a concept in the two-axis picture: the first question it answers, or ''."""
    qs = answered(card["answers"])
    return qs[0] if qs else ""


def quarter(day: str) -> str:
    """The quarter of a day, "2025 Q4"; "" for no day."""
    return f"{day[:4]} Q{(int(day[5:7]) - 1) // 3 + 1}" if day else ""


def two_axis(cards: list[Card], as_of: str) -> dict:
    """The two-axis picture: {lanes: [question id or ''], years: [{key, cells: {lane: [row]}}]},
    one row per quarter of first visible days, oldest first, then undated; inside a cell,
    concepts by first visible day."""
    lanes = [*QUESTION_IDS, ""]
    years: dict[str, dict[str, list[dict]]] = {}
    for c in history_order(cards):
        row = _row(c, as_of)
        years.setdefault(quarter(row["date"]) or UNDATED, {lane: [] for lane in lanes})[lane_of(c)].append(row)
    used = [lane for lane in lanes if any(cells[lane] for cells in years.values())]
    return {"lanes": used, "years": [{"key": k, "cells": v} for k, v in years.items()]}

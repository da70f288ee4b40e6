"""Text helpers shared by the model, the loader and the queries: normalisation for matching
(case- and width-insensitive, so full-width and half-width forms meet) and display width."""
from __future__ import annotations

import unicodedata


def norm(text: str) -> str:
    """Fold a name for matching: NFKC (full-width -> half-width), casefold, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def squash(text: str) -> str:
    """A looser key: `norm` without spaces, hyphens, underscores and dots ("AIV 直驱" == "aiv直驱")."""
    folded = norm(text)
    return "".join(ch for ch in folded if ch not in " -_./()（）")


def day(value: str) -> str | None:
    """`value` if it is a day of the calendar written YYYY-MM-DD (2026-02-28), else None
    (2026-02-30, 2026-13-45, 26-1-1). The one parser for dates given by people: data and options."""
    import re

    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return None
    from datetime import date

    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        return None


def width(text: str) -> int:
    """Terminal columns taken by text: East Asian wide and full-width characters take two."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def suggest(word: str, candidates: dict[str, str], limit: int = 5) -> list[str]:
    """Rank candidate ids for a misspelt word. `candidates` maps a display key to its id."""
    import difflib

    key = norm(word)
    scored: dict[str, float] = {}
    for name, ident in candidates.items():
        n = norm(name)
        matcher = difflib.SequenceMatcher(None, key, n)
        # real_quick_ratio is an upper bound computed from the lengths alone: a long input (a
        # pasted page) skips the quadratic comparison with every name
        score = matcher.ratio() if matcher.real_quick_ratio() >= 0.45 else 0.0
        if key and (key in n or n in key):
            score = max(score, 0.75 + 0.2 * min(len(key), len(n)) / max(len(key), len(n)))
        if score > scored.get(ident, 0.0):
            scored[ident] = score
    ranked = sorted((s, i) for i, s in scored.items() if s >= 0.45)
    ranked.sort(key=lambda pair: (-pair[0], pair[1]))
    return [ident for _, ident in ranked[:limit]]

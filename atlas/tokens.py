"""The search tokeniser: how documents and queries are cut into tokens, the same way for both.

- English and other alphabetic text by words: NFKC, case-folded, simple plural folding
  ("flags" -> "flag"); `Put/Get` gives put, get; a compound joined by - _ or . gives its parts and
  the whole ("fan-out" -> fan, out, fanout).
- Chinese (CJK) runs by overlapping character pairs plus single characters, so a phrase inside a
  longer Chinese sentence matches, and a one-character query still finds something.
"""
from __future__ import annotations

import re
import unicodedata

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:[-_.][^\W_{_CJK}]+)*)")
_JOIN = re.compile(r"[-_.]")
_DIGIT = re.compile(r"\d")


_STEMS: dict[str, str] = {}


def _stem(word: str) -> str:
    stem = _STEMS.get(word)
    if stem is None:
        stem = _STEMS[word] = _stem1(word)
    return stem


def _stem1(word: str) -> str:
    if len(word) <= 3 or _DIGIT.search(word):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


STOPWORDS = frozenset("a an and are as at by for from in is it its of on or the to with".split())


def query_tokens(text: str) -> list[str]:
    """Distinct tokens of a query; common English words are dropped unless nothing else is left."""
    found = list(dict.fromkeys(tokens(text, query=True)))
    kept = [t for t in found if t not in STOPWORDS]
    return kept or found


def tokens(text: str, query: bool = False) -> list[str]:
    """Search tokens of a text (documents and queries alike; a query skips the single CJK
    characters of runs longer than one, which only serve one-character queries)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for m in _RUN.finditer(folded):
        cjk, word = m.group(1), m.group(2)
        if cjk:
            if len(cjk) == 1:
                out.append(cjk)
                continue
            out.extend(cjk[i:i + 2] for i in range(len(cjk) - 1))
            if not query:
                out.extend(cjk)
        else:
            parts = [p for p in _JOIN.split(word) if p]
            out.extend(_stem(p) for p in parts)
            if len(parts) > 1:
                out.append(_stem("".join(parts)))
    return out

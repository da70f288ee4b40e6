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
# A run of Chinese characters, or a word (letters and digits) with parts joined by - _ or .; the
# pattern (for documents, many at a time) is compiled on first use: a class of these ranges takes
# milliseconds to compile, which a query (cut by `_scan`, the same runs) does not pay
_RUN_PATTERN = rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:[-_.][^\W_{_CJK}]+)*)"
_RUN: re.Pattern[str] | None = None
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


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


def _word_char(ch: str) -> bool:
    return ch.isalnum() and not _cjk(ch)  # what [^\W_] matches, Chinese characters apart


def _scan(folded: str) -> list[tuple[str, str]]:
    """The runs of `_RUN_PATTERN` as (chinese, word) pairs (one of them ""), found by hand: what the
    pattern finds, without compiling it (tests/test_search.py compares the two)."""
    out = []
    i, n = 0, len(folded)
    while i < n:
        j = i
        if _cjk(folded[i]):
            while j < n and _cjk(folded[j]):
                j += 1
            out.append((folded[i:j], ""))
        elif _word_char(folded[i]):
            while j < n and _word_char(folded[j]):
                j += 1
            while j + 1 < n and folded[j] in "-_." and _word_char(folded[j + 1]):
                j += 1
                while j < n and _word_char(folded[j]):
                    j += 1
            out.append(("", folded[i:j]))
        else:
            j = i + 1
        i = j
    return out


def _runs(folded: str, query: bool) -> list[tuple[str, str]]:
    """The Chinese runs and words of a folded text: by hand for a query, by the pattern else."""
    global _RUN
    if query:
        return _scan(folded)
    if _RUN is None:
        _RUN = re.compile(_RUN_PATTERN)
    return [(m.group(1) or "", m.group(2) or "") for m in _RUN.finditer(folded)]


def latin_words(text: str) -> list[tuple[str, str]]:
    """The Latin words of a text as typed (folded, split at - _ and ., not plural-folded; a compound
    also whole, as `tokens` gives it), each with its search token: [(word, token)]."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    out: list[tuple[str, str]] = []
    for _, word in _scan(folded):
        if word:
            parts = [p for p in _JOIN.split(word) if p]
            out.extend((p, _stem(p)) for p in parts)
            if len(parts) > 1:
                out.append(("".join(parts), _stem("".join(parts))))
    return out


stem = _stem


def tokens(text: str, query: bool = False) -> list[str]:
    """Search tokens of a text (documents and queries alike; a query skips the single CJK
    characters of runs longer than one, which only serve one-character queries)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for cjk, word in _runs(folded, query):
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

"""Query understanding: what a question asks and which concepts it names, before anything is ranked.

`read(text, names)` finds, in this order:

1. the concepts the text names: every stretch of the text that is an id, name or alias of exactly one
   concept (case-, width- and punctuation-folded as everywhere), longest first, never inside a Latin
   word ("ub" is not found in "pub");
2. the cues of `atlas/ask/querywords.yaml` around them: intents (history, comparison, claims,
   definition) and the six questions as people ask them; a name that lies inside a cue ("首次可见"
   in "hccs 首次可见") is a cue when the text names another concept, and a cue that overlaps a name is
   part of the name;
3. the question words and particles of the same file, which are dropped.

What is left besides the names and the cues is the question's own content. The intent, by priority:
comparison (a cue and two concepts or more), question (one of the six), release (which release first
ships a public symbol), history, claims (a cue, or
an English question that asks yes or no), definition (one concept and nothing else), else search.
An intent that needs a concept and names none keeps `concepts` empty; the caller may take the
concept that the words find by all of its name (`atlas.ask.answer`).

The word lists are parsed once and kept in the cache, keyed by the file's bytes and the code.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from pathlib import Path
from typing import Any, Callable, NamedTuple

from ..text import norm

WORDS_FILE = Path(__file__).with_name("querywords.yaml")
MAX_CHARS = 200  # longer text is searched as it is: no names or cues are looked for
_RUN_PUNCTUATION = "？。，"
_POSSESSIVE = re.compile(r"['’]s(?![0-9a-z])")
_LOOSE = re.compile("[ \\-_./()（）]")  # what `text.squash` drops


class Reading(NamedTuple):
    """What a question asks: the intent, the question id (intent "question"), the concepts named
    (in the order named), the words to rank (`text`: cues and question words removed; `plain`:
    only question words removed; both empty when the text is nothing but question words),
    whether anything besides names and cues is asked (`content`), the question's language and the
    cues found."""

    kind: str
    question: str | None
    concepts: tuple[str, ...]
    text: str
    plain: str
    content: bool
    lang: str
    cues: tuple[str, ...]


# ---------------------------------------------------------------------------------------------
# The word lists
# ---------------------------------------------------------------------------------------------

class Words:
    """The word lists, ready to find: the cues (each entry with its intent or question), the
    question words, the particles and the joins."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        intents = raw["intents"]
        cues = [(kind, intents[kind]["en"], intents[kind]["zh"])
                for kind in ("comparison", "release", "history", "claims", "definition")]
        cues += [(f"question:{qid}", forms["en"], forms["zh"]) for qid, forms in raw["questions"].items()]
        kinds: dict[str, str] = {}
        for kind, en, zh in cues:
            for entry in _longest_first([*en, *zh]):
                kinds.setdefault(entry, kind)
        self.cues = Entries(kinds)
        self.yes_no = re.compile(r"^(?:%s)(?![0-9a-z])" % "|".join(
            re.escape(w) for w in _longest_first(intents["claims"]["en_start"])))
        strip = raw["strip"]
        self.strip = Entries(dict.fromkeys(_longest_first([*strip["en"], *strip["zh"]]), "strip"))
        self.edges = frozenset(strip["zh_edges"])
        self.splits = frozenset(strip["zh_split"])
        self.joins = _pattern(raw["joins"]["en"], raw["joins"]["zh"])
        self.zh_joins = frozenset(raw["joins"]["zh"])
        self.templates: list[str] = list(raw["templates"])


def _longest_first(items) -> list[str]:
    return sorted({norm(str(x)) for x in items if str(x).strip()}, key=lambda s: (-len(s), s))


class Entries:
    """Finds the entries of a list in a text, left to right without overlaps; where two start at
    one place the longer wins. An English entry matches whole words only ("can" is not in "scan");
    a Chinese one anywhere. `kind[entry]` says what each entry is."""

    def __init__(self, kind: dict[str, str]) -> None:
        self.kind = kind
        self.starting: dict[str, list[str]] = {}
        for entry in sorted(kind, key=lambda e: (-len(e), e)):
            self.starting.setdefault(entry[0], []).append(entry)

    def find(self, text: str) -> list[tuple[int, int, str]]:
        out = []
        i = 0
        while i < len(text):
            entry = next((e for e in self.starting.get(text[i], ()) if text.startswith(e, i) and _whole(text, i, e)),
                         None)
            if entry is None:
                i += 1
                continue
            out.append((i, i + len(entry), self.kind[entry]))
            i += len(entry)
        return out


def _ascii_word(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _whole(text: str, at: int, entry: str) -> bool:
    """An English entry (its ends letters or digits) neither starts nor ends inside a word."""
    end = at + len(entry)
    if _ascii_word(entry[0]) and at > 0 and _ascii_word(text[at - 1]):
        return False
    return not (_ascii_word(entry[-1]) and end < len(text) and _ascii_word(text[end]))


def _pattern(en, zh) -> re.Pattern[str]:
    """One alternation, longest first: English entries as whole words, Chinese ones anywhere."""
    parts = []
    for w in _longest_first([*en, *zh]):
        head = r"(?<![0-9a-z])" if _ascii_word(w[0]) else ""
        tail = r"(?![0-9a-z])" if _ascii_word(w[-1]) else ""
        parts.append(head + re.escape(w) + tail)
    return re.compile("|".join(parts) or "(?!)")


_WORDS: Words | None = None


def words() -> Words:
    """The word lists of `atlas/ask/querywords.yaml` (parsed once, then read from the cache)."""
    global _WORDS
    if _WORDS is None:
        _WORDS = Words(_raw_words())
    return _WORDS


def _raw_words() -> dict[str, Any]:
    from ..index import cache

    data = WORDS_FILE.read_bytes()
    key = cache.crc(data.decode("utf-8", "replace") + cache.code_key())
    file = cache.path("querywords", key)
    raw = cache.read(file)
    if not isinstance(raw, dict):
        import yaml

        raw = yaml.safe_load(data)
        cache.write(file, raw)
    return raw


# ---------------------------------------------------------------------------------------------
# Reading a question
# ---------------------------------------------------------------------------------------------

def _cjk(ch: str) -> bool:
    """A Chinese (CJK) character: compared by range, as a regular expression's class of these ranges
    costs milliseconds to compile at every start."""
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


def _latin(ch: str) -> bool:
    """A letter or digit of a Latin (non-Chinese) word."""
    return ch.isalnum() and not _cjk(ch)


def language(text: str) -> str:
    """"zh" when the text holds Chinese, else "en"."""
    return "zh" if any(_cjk(ch) for ch in text) else "en"


def read(text: str, names: dict[str, Any], lists: Words | None = None) -> Reading:
    """What `text` asks, given the concept name indexes `names` ({ids, name_index, loose_index}:
    the card store's or the atlas's)."""
    lists = lists or words()
    folded = norm(text)
    lang = language(folded)
    if len(folded) > MAX_CHARS:
        return Reading("search", None, (), text, text, True, lang, ())
    spans = _names(folded, names)
    folded = _without_possessives(folded, spans)
    spans, cues = _settle(spans, _cues(folded, lists))
    in_name = bytearray(len(folded))
    for start, end, _ in spans:
        in_name[start:end] = b"\1" * (end - start)
    plain_gone = bytearray(in_name)  # names are set aside while the question words are found
    _strip(folded, plain_gone, lists)
    gone = bytearray(in_name)
    for start, end, _ in cues:
        gone[start:end] = b"\1" * (end - start)
    _strip(folded, gone, lists)
    content = bool(_has_words(_keep(folded, gone)))
    named = tuple(dict.fromkeys(ident for _, _, ident in spans))
    kinds = [k for _, _, k in cues]
    kind, question = _intent(kinds, named, content, bool(lists.yes_no.match(folded)))
    searched = _keep(folded, gone, in_name)
    plain = _keep(folded, plain_gone, in_name)
    return Reading(kind, question, named, searched or plain, plain, content, lang, tuple(kinds))


def _keep(folded: str, gone: bytearray, keep: bytearray | None = None) -> str:
    """The text without what is gone (but what `keep` marks), single-spaced."""
    if keep is None:
        chars = [" " if g else ch for ch, g in zip(folded, gone)]
    else:
        chars = [" " if g and not k else ch for ch, g, k in zip(folded, gone, keep)]
    return " ".join("".join(chars).split())


def _intent(kinds: list[str], named: tuple[str, ...], content: bool, yes_no: bool) -> tuple[str, str | None]:
    questions = [k.split(":", 1)[1] for k in kinds if k.startswith("question:")]
    if "comparison" in kinds and len(named) >= 2:
        return "comparison", None
    if questions:
        return "question", questions[0]
    if "release" in kinds:
        return "release", None
    if "history" in kinds:
        return "history", None
    if "claims" in kinds:
        return "claims", None
    if len(named) == 1 and not content:
        return "definition", None
    if "comparison" in kinds:
        return "comparison", None
    if yes_no:
        return "claims", None
    if "definition" in kinds and not named:
        return "definition", None
    return "search", None


def _has_words(text: str) -> list[str]:
    from .tokens import query_tokens

    return query_tokens(text) if text.strip() else []


def _without_possessives(folded: str, spans) -> str:
    """"what's dma", "mooncake's flags": the 's blanked outside names, so the word stands alone."""
    out = list(folded)
    for m in _POSSESSIVE.finditer(folded):
        if not any(start <= m.start() < end for start, end, _ in spans):
            out[m.start():m.end()] = " " * (m.end() - m.start())
    return "".join(out)


def _boundaries(folded: str) -> list[int]:
    """Positions where a name may start or end: anywhere but inside a Latin word, or after the
    apostrophe of "what's" (no name starts with its s)."""
    out = [0]
    for i in range(1, len(folded)):
        inside_word = _latin(folded[i - 1]) and _latin(folded[i])
        if not inside_word and not (folded[i - 1] in "'’" and _latin(folded[i])):
            out.append(i)
    out.append(len(folded))
    return out


def _one(found) -> str | None:
    if found and len(found) == 1:
        return next(iter(found))
    return None


class _Keys(NamedTuple):
    """The name keys spotting looks up, beyond the name indexes: the parts of bracketed names, and
    whether some key starts with a stretch of text (one that starts no name is not extended)."""

    parts: dict[str, set[str]]
    loose_parts: dict[str, set[str]]
    starts: Callable[[str], bool]
    loose_starts: Callable[[str], bool]


_KEYS: dict[int, _Keys] = {}


def name_keys(exact: Any, loose: Any) -> _Keys:
    """A name with a part in brackets is also named by each part: "弹性分发（elastic dispatch）" by
    弹性分发, "aclshmem_putmem_signal (put with signal)" by "put with signal" ({part: ids}, folded
    as names and loosely; a part that is a whole name of another concept is that concept's); and
    a prefix test over every key. Computed once per name index (about a millisecond). A lookup kept
    in a database (the compiled index's, with `bracketed()` and `starting(prefix)`) is not read
    whole: only its bracketed names are, and prefixes are asked of it."""
    stored = hasattr(exact, "starting")
    known = getattr(exact, "understood", None) if stored else _KEYS.get(id(exact))
    if known is None:
        split: list[tuple[str, set[str]]] = []
        for name, ids in (exact.bracketed() if stored else exact.items()):
            cut = name.find("(")
            if cut > 0 and name.endswith(")"):
                split.extend((part, ids) for part in (name[:cut].strip(), name[cut + 1:-1].strip()) if part)
        named = exact.present(p for p, _ in split) if stored else {p for p, _ in split if p in exact}
        parts: dict[str, set[str]] = {}
        for part, ids in split:
            if part not in named:  # a part that is a whole name is that concept's
                parts.setdefault(part, set()).update(ids)
        loose_parts: dict[str, set[str]] = {}
        for part, ids in parts.items():
            loose_parts.setdefault(_LOOSE.sub("", part), set()).update(ids)
        if stored:
            own, loose_own = sorted(parts), sorted(loose_parts)
            known = _Keys(parts, loose_parts, lambda t: exact.starting(t) or _starts_a_key(own, t),
                          lambda t: loose.starting(t) or _starts_a_key(loose_own, t))
            exact.understood = known
        else:
            ordered, loose_ordered = sorted({*exact, *parts}), sorted({*loose, *loose_parts})
            known = _KEYS[id(exact)] = _Keys(parts, loose_parts, lambda t: _starts_a_key(ordered, t),
                                             lambda t: _starts_a_key(loose_ordered, t))
    return known


def _starts_a_key(ordered: list[str], text: str) -> bool:
    """Some key of the sorted list starts with `text`."""
    at = bisect_left(ordered, text)
    return at < len(ordered) and ordered[at].startswith(text)


def _names(folded: str, names: dict[str, Any]) -> list[tuple[int, int, str]]:
    """Every stretch of the text that names exactly one concept, longest first, not overlapping
    (a whole name before a part of one)."""
    ids, exact, loose = names["ids"], names["name_index"], names["loose_index"]
    keys = name_keys(exact, loose)
    bounds = _boundaries(folded)
    found = []
    for a, start in enumerate(bounds):
        if start == len(folded) or folded[start] == " ":
            continue
        for end in bounds[a + 1:]:
            key = folded[start:end]
            squashed = _LOOSE.sub("", key)
            if not keys.starts(key) and not keys.loose_starts(squashed):
                break  # no name starts with this stretch, nor with a longer one
            if folded[end - 1] == " ":
                continue
            ident = key if key in ids else _one(exact.get(key)) or _one(loose.get(squashed)) \
                or _one(keys.parts.get(key)) or _one(keys.loose_parts.get(squashed))
            if ident:
                found.append((start, end, ident))
    return _longest_apart(found)


def _longest_apart(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    chosen: list[tuple[int, int, str]] = []
    for span in sorted(found, key=lambda s: (s[0] - s[1], s[0])):
        if all(span[1] <= c[0] or span[0] >= c[1] for c in chosen):
            chosen.append(span)
    return sorted(chosen)


def _cues(folded: str, lists: Words) -> list[tuple[int, int, str]]:
    return lists.cues.find(folded)


def _settle(spans, cues):
    """A name inside a cue is a cue when another name lies outside every cue; a cue overlapping a
    kept name is part of that name."""
    def within(span, others):
        return any(o[0] <= span[0] and span[1] <= o[1] for o in others)

    outside = [s for s in spans if not within(s, cues)]
    if outside:
        spans = outside
    cues = [c for c in cues if all(c[1] <= s[0] or c[0] >= s[1] for s in spans)]
    return spans, cues


def _strip(folded: str, gone: bytearray, lists: Words) -> None:
    """Mark the question words: English words and Chinese phrases anywhere outside what is already
    gone, then single Chinese particles at the edges of each Chinese run, a join standing alone,
    and the particles that split a run."""
    masked = "".join("\0" if g else ch for ch, g in zip(folded, gone))
    for start, end, _ in lists.strip.find(masked):
        gone[start:end] = b"\1" * (end - start)
    for start, end in _chinese_runs(folded, gone):
        while start < end and folded[start] in lists.edges:
            gone[start] = 1
            start += 1
        while end > start and folded[end - 1] in lists.edges:
            gone[end - 1] = 1
            end -= 1
        if folded[start:end] in lists.zh_joins:  # "hccl 和 hixl": a join standing alone
            gone[start:end] = b"\1" * (end - start)
        for i in range(start, end):  # "吞吐的一半": a particle inside a run splits it
            if folded[i] in lists.splits:
                gone[i] = 1


def _chinese_runs(folded: str, gone: bytearray) -> list[tuple[int, int]]:
    """(start, end) of each run of Chinese characters (and Chinese punctuation) not yet gone."""
    runs = []
    start = -1
    for i, ch in enumerate(folded):
        inside = not gone[i] and (_cjk(ch) or ch in _RUN_PUNCTUATION)
        if inside and start < 0:
            start = i
        elif not inside and start >= 0:
            runs.append((start, i))
            start = -1
    if start >= 0:
        runs.append((start, len(folded)))
    return runs


def sides(text: str, lists: Words | None = None) -> list[str]:
    """The parts of a comparison's words, split at the joins ("a 和 b", "a vs b, c")."""
    lists = lists or words()
    parts = lists.joins.split(norm(text))
    return [p.strip() for p in parts if p and p.strip()]

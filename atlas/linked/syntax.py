"""SPARQL text read the way a SPARQL parser reads it, for the checks made before a query runs anywhere
(the embedded store, an endpoint, `atlas serve --sparql`, the MCP server): SPARQL Update and SERVICE
are refused, and so are a query too long or nested too deep.

The query is cut into the terminals of the SPARQL 1.1 grammar (section 19.8): IRIs, strings (short
and long, with their escapes), comments, variables, prefixed names, blank-node labels, language tags,
numbers, bare words (keywords and function names) and punctuation, after the `\\uXXXX` escapes are
decoded, as section 19.2 says a parser does first. Only the grammar's bare words and prefixes can be
keywords, so a SERVICE hidden in a string, an IRI, a comment or a variable is none, and one glued to
what stands before it (`1SERVICE`, `trueSERVICE`, `SERVICE:x` read back by a parser as SERVICE and
`:x`) is found. Both readings of the text are checked, escapes decoded and as written, so an escaped
quote cannot turn code into what only looks like a string.
"""
from __future__ import annotations

import re
from typing import Iterator, NamedTuple

from ..errors import AtlasError, Location

UPDATE_WORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY")
MAX_QUERY = 1 << 20  # characters of a query (and bytes of a query file or request body)
MAX_DEPTH = 200  # nested { ( [ of a query; Oxigraph's recursive parser overflows its stack near 3,000

# The character classes of the grammar's names (section 19.8), as code point ranges. Each class is
# written as the negation of its complement: the regular expression compiler walks every character
# of a range it is given, and a name class holds 54,000 characters of the BMP, its complement 11,500,
# which makes compiling the token pattern (done by every query process) four times faster.
_PN_CHARS_BASE = ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x2FF), (0x370, 0x37D),
                  (0x37F, 0x1FFF), (0x200C, 0x200D), (0x2070, 0x218F), (0x2C00, 0x2FEF), (0x3001, 0xD7FF),
                  (0xF900, 0xFDCF), (0xFDF0, 0xFFFD), (0x10000, 0xEFFFF))
_PN_CHARS_U = (*_PN_CHARS_BASE, (0x5F, 0x5F))  # _
_DIGITS = ((0x30, 0x39),)
_NAME_EXTRA = ((0xB7, 0xB7), (0x300, 0x36F), (0x203F, 0x2040))
_PN_CHARS = (*_PN_CHARS_U, (0x2D, 0x2D), *_DIGITS, *_NAME_EXTRA)  # - 0-9 and the combining marks
_DOT, _COLON = ((0x2E, 0x2E),), ((0x3A, 0x3A),)


def char_class(*sets) -> str:
    """A regular-expression class matching the code points of the union of `sets` (tuples of
    inclusive ranges), written as the negation of the union's complement."""
    gaps, at = [], 0
    for lo, hi in sorted(r for ranges in sets for r in ranges):
        if lo > at:
            gaps.append((at, lo - 1))
        at = max(at, hi + 1)
    if at <= 0x10FFFF:
        gaps.append((at, 0x10FFFF))
    return "[^" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in gaps) + "]"


_PN_PREFIX = f"{char_class(_PN_CHARS_BASE)}(?:{char_class(_PN_CHARS, _DOT)}*{char_class(_PN_CHARS)})?"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_LOCAL = (f"(?:{char_class(_PN_CHARS_U, _COLON, _DIGITS)}|{_PLX})"
             f"(?:(?:{char_class(_PN_CHARS, _DOT, _COLON)}|{_PLX})*(?:{char_class(_PN_CHARS, _COLON)}|{_PLX}))?")
_VARNAME = f"{char_class(_PN_CHARS_U, _DIGITS)}{char_class(_PN_CHARS_U, _DIGITS, _NAME_EXTRA)}*"
_ECHAR = r"\\[tbnrf\\\"']"

# One alternative per terminal, in the order that gives the grammar's longest match.
_TOKEN = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in (
    ("ws", r"[ \t\r\n]+"),
    ("comment", r"#[^\r\n]*"),
    ("string", f"'''(?:(?:'|'')?(?:[^'\\\\]|{_ECHAR}))*'''" f'|"""(?:(?:"|"")?(?:[^"\\\\]|{_ECHAR}))*"""'
               f"|'(?:[^'\\\\\\n\\r]|{_ECHAR})*'" f'|"(?:[^"\\\\\\n\\r]|{_ECHAR})*"'),
    ("iri", r"<[^<>\"{}|^`\\\x00-\x20]*>"),
    ("var", f"[?$]{_VARNAME}"),
    ("bnode", f"_:{char_class(_PN_CHARS_U, _DIGITS)}(?:{char_class(_PN_CHARS, _DOT)}*{char_class(_PN_CHARS)})?"),
    ("pname", f"(?:{_PN_PREFIX})?:(?:{_PN_LOCAL})?"),
    ("langtag", r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*"),
    ("number", r"[0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.[0-9]+[eE][+-]?[0-9]+|[0-9]+[eE][+-]?[0-9]+"
               r"|[0-9]*\.[0-9]+|[0-9]+"),
    ("word", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("open", r"[{(\[]"),
    ("close", r"[})\]]"),
    ("other", r"[\s\S]"),
)))
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


class Token(NamedTuple):
    kind: str  # one of the names in _TOKEN
    text: str
    start: int  # offset in the text that was cut


def unescape(query: str) -> str:
    """The query as a SPARQL parser reads it: `\\uXXXX` and `\\UXXXXXXXX` escapes are decoded
    before parsing, anywhere in the text (SPARQL 1.1, section 19.2), so `\\u0053ERVICE` is SERVICE."""
    def one(m: re.Match) -> str:
        code = int(m.group(1) or m.group(2), 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)

    return _ESCAPE.sub(one, query)


def tokens(text: str) -> Iterator[Token]:
    """The terminals of `text`, blanks included; every character belongs to exactly one token."""
    for m in _TOKEN.finditer(text):
        yield Token(m.lastgroup or "other", m.group(), m.start())


def where_at(text: str, start: int, where: str) -> Location:
    """Line and column (1-based) of offset `start` in `text`."""
    return Location(where, text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start))


def _keyword_part(tok: Token) -> str:
    """What a parser could read as keywords in this token: a bare word, a prefixed name's prefix (a
    parser that backtracks reads `SERVICE:x` as SERVICE and `:x`) or a language tag; else nothing."""
    if tok.kind in ("word", "langtag"):
        return tok.text.upper()
    if tok.kind == "pname":
        return tok.text.split(":", 1)[0].upper()
    return ""


FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")


def query_form(query: str) -> str | None:
    """SELECT, ASK, CONSTRUCT or DESCRIBE: the query's form (its first such keyword; the prologue
    before it holds only BASE and PREFIX), or None when it has none."""
    for tok in tokens(unescape(query)):
        if tok.kind == "word" and tok.text.upper() in FORMS:
            return tok.text.upper()
    return None


class Scan(NamedTuple):
    update: tuple[str, int] | None  # the first update keyword and its offset
    service: int | None  # offset of the first SERVICE
    depth: tuple[int, int]  # the deepest nesting and the offset where it is reached


def scan(text: str) -> Scan:
    """Update keywords, SERVICE and nesting depth in one reading of `text`."""
    update = service = None
    depth = deepest = deepest_at = 0
    for tok in tokens(text):
        if tok.kind == "open":
            depth += 1
            if depth > deepest:
                deepest, deepest_at = depth, tok.start
        elif tok.kind == "close":
            depth = max(depth - 1, 0)
        part = _keyword_part(tok)
        if not part:
            continue
        if service is None and "SERVICE" in part:
            service = tok.start + part.index("SERVICE")
        if update is None:
            word = next((w for w in UPDATE_WORDS if w in part), None)
            if word:
                update = (word, tok.start + part.index(word))
    return Scan(update, service, (deepest, deepest_at))


def check(query: str, where: str = "query", allow_service: bool = False) -> None:
    """Refuse what the atlas never runs: a query longer than MAX_QUERY characters or nested deeper
    than MAX_DEPTH, SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP, ...), and, unless
    `allow_service`, SERVICE (the store or the endpoint would call another server). Positions are
    the user's own line and column."""
    if len(query) > MAX_QUERY:
        raise AtlasError(f"the query is {len(query):,} characters long; the limit is {MAX_QUERY:,}",
                         Location(where), "a SPARQL query that long is almost certainly not meant")
    decoded = unescape(query)
    for text in [decoded] + ([query] if decoded != query else []):
        found = scan(text)
        if found.update:
            word, at = found.update
            raise AtlasError(f"{word} is SPARQL Update; the atlas answers read-only queries only",
                             where_at(text, at, where),
                             "use SELECT, ASK, CONSTRUCT or DESCRIBE; change data/ and rerun instead")
        if found.service is not None and not allow_service:
            raise AtlasError("SERVICE would send the query to another server; the atlas answers from "
                             "its own data only", where_at(text, found.service, where),
                             "remove the SERVICE clause (with --endpoint, --allow-service lets the endpoint "
                             "follow it)")
        deepest, at = found.depth
        if deepest > MAX_DEPTH:
            raise AtlasError(f"the query nests {deepest} levels deep (braces, brackets and parentheses); "
                             f"the depth limit is {MAX_DEPTH}", where_at(text, at, where),
                             "flatten the query: a real query rarely nests more than a few levels")

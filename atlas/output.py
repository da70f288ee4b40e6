"""Formatting a command's result as JSON or text (no click here: the fast launcher uses it too).

Everything a command prints passes through here last, so this is where untrusted text (data,
query results, an endpoint's answer) is made safe for a terminal: a control character other than
newline and tab (an ESC or OSC sequence could retitle or clear the terminal, or write the
clipboard) and an invisible format character (a zero-width space, a direction mark: text that reads
as something else than it is) are printed as a visible escape instead.
"""
from __future__ import annotations

import re

# Unicode's format characters (category Cf: soft hyphen, zero-width spaces and joiners, direction
# marks, the bidirectional embeddings, overrides and isolates that reorder what the reader sees - a
# "Trojan source" line -, invisible operators, tag characters) and the line and paragraph separators:
# none is visible, so text that holds one may read as something else than it is
INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
             "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
             "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
# C0 controls except tab and newline, a carriage return not ending a CRLF line (CSV results), DEL,
# the C1 controls (U+009B is a one-character CSI), the invisible characters above, and lone surrogates
# (bytes that were not UTF-8, in a path or an argument: they cannot be written to a UTF-8 terminal at all)
UNSAFE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{INVISIBLE}\ud800-\udfff]|\r(?!\n)")


def _visible(m: re.Match) -> str:
    code = ord(m.group(0))
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control character except newline and tab (and CRLF line ends), and every
    invisible format character, written as a visible `\\xNN`, `\\uXXXX` or `\\UXXXXXXXX` escape."""
    return UNSAFE.sub(_visible, text) if UNSAFE.search(text) else text


def _json_escape(m: re.Match) -> str:
    code = ord(m.group(0))
    if code > 0xFFFF:  # JSON writes a character beyond the BMP as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def to_json(obj) -> str:
    """Stable JSON; every control character (C1 and DEL included) and invisible format character is a
    \\u escape (a surrogate pair beyond the BMP)."""
    import json  # (a card drawn for the terminal does without it)

    text = json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True)
    return UNSAFE.sub(_json_escape, text) if UNSAFE.search(text) else text


def format_result(fmt: str, obj, render) -> str:
    """The text a command prints for `obj`: stable JSON, or `render(obj)`, safe for a terminal."""
    return to_json(obj) if fmt == "json" else terminal_safe(render(obj))


def wants_color(stream=None) -> bool:
    """Whether to colour what goes to `stream` (standard output): a terminal, unless NO_COLOR is
    set or TERM is dumb."""
    import os
    import sys

    stream = sys.stdout if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR") \
        and os.environ.get("TERM") != "dumb"

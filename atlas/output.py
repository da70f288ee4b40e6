"""Formatting a command's result as JSON or text (no click here: the fast launcher uses it too).

Everything a command prints passes through here last, so this is where untrusted text (data,
query results, an endpoint's answer) is made safe for a terminal: a control character other than
newline and tab (an ESC or OSC sequence could retitle or clear the terminal, or write the
clipboard) is printed as a visible escape instead.
"""
from __future__ import annotations

import json
import re

# C0 controls except tab and newline, a carriage return not ending a CRLF line (CSV results), DEL,
# the C1 controls (U+009B is a one-character CSI) and the bidirectional embeddings, overrides and
# isolates (they reorder what the reader sees: a "Trojan source" line), and lone surrogates (bytes
# that were not UTF-8, in a path or an argument: they cannot be written to a UTF-8 terminal at all)
UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]|\r(?!\n)")


def _visible(m: re.Match) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control character except newline and tab (and CRLF line ends) written
    as a visible `\\xNN` escape."""
    return UNSAFE.sub(_visible, text) if UNSAFE.search(text) else text


def _json_escape(m: re.Match) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def to_json(obj) -> str:
    """Stable JSON; every control character (C1 and DEL included) is a \\u escape."""
    text = json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True)
    return UNSAFE.sub(_json_escape, text) if UNSAFE.search(text) else text


def format_result(fmt: str, obj, render) -> str:
    """The text a command prints for `obj`: stable JSON, or `render(obj)`, safe for a terminal."""
    return to_json(obj) if fmt == "json" else terminal_safe(render(obj))

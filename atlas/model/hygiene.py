"""A data file's hygiene before and while it is read: its size, control and invisible characters,
aliases, flow-scalar pitfalls, and values that read the same with every YAML reader."""
from __future__ import annotations
import re
from pathlib import Path
import yaml
from ..bounded import DATA_FILE, TooLarge, read_bounded
from ..errors import Location, Problem
from .core import (
    Atlas,
)
from ..output import INVISIBLE
from .yamlnodes import Loaded, _Ctx


_Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]


try:  # libyaml is much faster and keeps marks too
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pure-Python PyYAML
    _Loader = yaml.SafeLoader


_FLOW_INDICATORS = "?:,[]{}#"


def _flow_scalar_hint(text: str, exc: yaml.MarkedYAMLError) -> str:
    """What to quote when an unquoted scalar inside `{...}` or `[...]` hits an indicator.

    libyaml accepts `{en: Who moves the data?, zh: ...}`; PyYAML's pure-Python reader stops the
    scalar at `?` (and both stop at `[`, `]`, `{`, `}`), so such text must be quoted to read the same
    everywhere."""
    if "flow" not in (exc.context or "") or exc.problem_mark is None:
        return ""
    mark = exc.problem_mark
    lines = text.splitlines()
    char = lines[mark.line][mark.column:mark.column + 1] if mark.line < len(lines) else ""
    if not char or char not in _FLOW_INDICATORS:
        return ""
    return (f'inside {{...}} or [...] a text value that contains "{char}" must be quoted; '
            'quote the whole value: {en: "Who moves the data?", zh: "谁搬数据"}')


# control characters other than tab and newline (CR is a line break in a file, not in a value) and
# the invisible format characters (zero-width spaces, direction marks, the bidirectional embeddings,
# overrides and isolates, which reorder what a reader sees); a byte-order mark may open a file. A
# control character or a line or paragraph separator (YAML breaks lines there) in a file stops its
# reading; an invisible character is reported at each line that holds one, and the file is read on.
_STOP_IN_FILE = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\u2028\\u2029]")


_INVISIBLE = re.compile(f"[{INVISIBLE}]")


_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")


MAX_TEXT = 1_000_000  # characters of one value; far beyond any card, far below the RDF store's limit


MAX_ALIASES = 50  # alias uses (*name) in one file; the bundled atlas uses none


MAX_DEPTH = 64  # nested lists and mappings in one file; the deepest record (a flow step's text) takes 5


MAX_NUMBER = 1000  # characters of a number (Python reads no whole number of more than 4,300 digits)


_NUMBER_TAGS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}


_CONTROL_HINT = ("remove it: an ESC or OSC sequence could rewrite the reader's terminal, and an invisible "
                 "character (a zero-width space, a direction mark or override) makes the text read as something "
                 "else than it is; only newline and tab are allowed in text")


def _char_name(ch: str) -> str:
    if ch == "\0":
        return "a NUL character"
    import unicodedata

    kind = "control" if unicodedata.category(ch) == "Cc" else "invisible"
    name = unicodedata.name(ch, "")
    return f"{kind} character U+{ord(ch):04X}" + (f" ({name})" if name else "")


def _at(ctx: _Ctx, text: str, index: int) -> Location:
    line = text.count("\n", 0, index) + 1
    return Location(ctx.file, line, index - text.rfind("\n", 0, index))


def _control_at(ctx: _Ctx, text: str) -> bool:
    """Report the first control character of a file's text (a NUL included) at its line: True, the
    file is not read. Each line that holds an invisible character is reported too (the file is read)."""
    first = 1 if text.startswith("\ufeff") else 0
    m = _STOP_IN_FILE.search(text)
    if m is not None:
        ctx.error(_at(ctx, text, m.start()), "control-character", f"{_char_name(m.group(0))} in the file",
                  _CONTROL_HINT)
        return True
    line = 0
    for m in _INVISIBLE.finditer(text, first):
        loc = _at(ctx, text, m.start())
        if loc.line != line:
            line = loc.line
            ctx.error(loc, "control-character", f"{_char_name(m.group(0))} in the file", _CONTROL_HINT)
    return False


def _check_scalar(ctx: _Ctx, node, text: str) -> None:
    if _CONTROL.search(node.value) is not None:
        for m in _CONTROL.finditer(node.value):
            if not _written_as_itself(m.group(0), node, text):
                ctx.error(node, "control-character", f"{_char_name(m.group(0))} in a value", _CONTROL_HINT)
                break
    if len(node.value) <= MAX_NUMBER:
        return
    if len(node.value) > MAX_TEXT:
        ctx.error(node, "too-long", f"a value of {len(node.value)} characters (at most {MAX_TEXT})",
                  "shorten it; the RDF export and the SPARQL store refuse giant literals")
    elif node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER:
        ctx.error(node, "too-long", f"a number written with {len(node.value)} characters (at most {MAX_NUMBER})",
                  "no field of the atlas holds such a number; quote the value if it is text")


def _written_as_itself(ch: str, node, text: str) -> bool:
    """An invisible character that the value's own text holds (reported at its line already), not one
    that an escape such as "\\u200b" made."""
    return bool(_INVISIBLE.match(ch)) and ch in text[node.start_mark.index:node.end_mark.index]


def _check_values(ctx: _Ctx, root, text: str) -> bool:
    """Every scalar of a document (keys included): no control character but newline and tab (an
    escape such as "\\e" or "\\x1b" in a quoted string makes one), no invisible character, no giant
    value. The walk goes by identity: a node that aliases reach again is not walked again, so nine
    levels of ten aliases cost what they take to write. More than MAX_ALIASES alias uses is an error
    (`yaml-aliases`, at the alias over the limit) and the file is not read: False."""
    seen: set[int] = set()
    repeats = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            repeats += 1
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            _check_scalar(ctx, node, text)
            continue
        if depth > MAX_DEPTH:
            ctx.error(node, "too-deep", f"lists and mappings nested deeper than {MAX_DEPTH} levels: the file was "
                      "not read", "no record of the atlas nests more than a few levels; flatten the value")
            return False
        if isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend(((key, depth + 1), (value, depth + 1)))
    if repeats <= MAX_ALIASES:
        return True
    ctx.error(_alias_over_limit(ctx, text), "yaml-aliases",
              f"{repeats} alias uses (*name) in one file, more than {MAX_ALIASES}: the file was not read",
              "write the values out; the atlas's data files need no anchors or aliases")
    return False


def _alias_over_limit(ctx: _Ctx, text: str) -> Location:
    """Where the first alias over MAX_ALIASES is written (the events are read again: only when the
    limit is passed)."""
    count = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            count += 1
            if count > MAX_ALIASES:
                mark = event.start_mark
                return Location(ctx.file, mark.line + 1, mark.column + 1) if mark else Location(ctx.file)
    return Location(ctx.file)


def _compose(path: Path, ctx: _Ctx, raw: bytes | None = None):
    try:
        raw = read_bounded(path, DATA_FILE, "data file") if raw is None else raw
    except FileNotFoundError:
        ctx.warning(Location(ctx.file), "vanished", "the file disappeared while the data folder was read; "
                    "skipped")
        return None
    except OSError as exc:
        ctx.error(Location(ctx.file), "unreadable", f"cannot read file: {exc.strerror or exc}")
        return None
    except TooLarge as exc:
        ctx.error(Location(ctx.file), "too-large", exc.message, exc.hint)
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        ctx.error(Location(ctx.file, line, 1), "bad-encoding", "file is not valid UTF-8")
        return None
    if _control_at(ctx, text):
        return None
    try:
        root = yaml.compose(text, Loader=_Loader)
        if root is not None and not _check_values(ctx, root, text):
            return None
        return root
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(ctx.file, mark.line + 1, mark.column + 1) if mark else Location(ctx.file)
        if "nesting depth" in str(exc.problem):  # libyaml's own bound (1,000 levels)
            ctx.error(loc, "too-deep", f"lists and mappings nested deeper than {MAX_DEPTH} levels: the file was "
                      "not read", "no record of the atlas nests more than a few levels; flatten the value")
        else:
            ctx.error(loc, "yaml-syntax", f"YAML syntax error: {exc.problem or exc.context}",
                      _flow_scalar_hint(text, exc))
    except yaml.YAMLError as exc:
        ctx.error(Location(ctx.file), "yaml-syntax", f"YAML error: {exc}")
    return None


def portable_problems(text: str, display: str) -> list[Problem]:
    """What in one data file's text only libyaml can read (empty where libyaml is missing: then the
    pure-Python reader is the one that reads the atlas anyway)."""
    if _Loader is yaml.SafeLoader:
        return []
    loaded = Loaded(Atlas())
    _check_portable(_Ctx(display, loaded), text)
    return loaded.problems


def _check_portable(ctx: _Ctx, text: str) -> None:
    """The file must read the same with PyYAML's pure-Python reader as with libyaml: the atlas is
    read with whichever the machine has."""
    hint = "quote the value, e.g. {en: \"Who moves the data?\", zh: \"谁搬数据\"}"
    try:
        pure = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        ctx.error(Location(ctx.file), "too-deep", "PyYAML's pure-Python reader stops: the file nests too deep",
                  "flatten the value")
        return
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(ctx.file, mark.line + 1, mark.column + 1) if mark else Location(ctx.file)
        ctx.error(loc, "yaml-portability", "libyaml reads this but PyYAML's pure-Python reader stops: "
                  f"{exc.problem or exc.context}", _flow_scalar_hint(text, exc) or hint)
        return
    except yaml.YAMLError as exc:
        ctx.error(Location(ctx.file), "yaml-portability", f"PyYAML's pure-Python reader fails: {exc}", hint)
        return
    where = differing_node(pure, yaml.compose(text, Loader=_Loader), ctx.file)
    if where is not None:
        ctx.error(where, "yaml-portability",
                  "libyaml and PyYAML's pure-Python reader read this file differently", hint)


def _node_at(ctx_file: str, node) -> Location:
    mark = getattr(node, "start_mark", None)
    return Location(ctx_file, mark.line + 1, mark.column + 1) if mark is not None else Location(ctx_file)


def differing_node(a, b, file: str = "") -> Location | None:
    """Where two composed documents differ (None: they are the same). Nodes, not values, are
    compared: both readers resolve tags with the same Python code, so equal nodes make equal values,
    and nothing is constructed (an impossible day or a 5,000-digit number cannot be built as a value,
    yet it is a node like any other, reported by the value checks at its line). The walk goes by
    identity, as `same_value` does: an alias reached again is not compared again."""
    seen: set[tuple[int, int]] = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y or (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if type(x) is not type(y) or getattr(x, "tag", None) != getattr(y, "tag", None):
            return _node_at(file, y if y is not None else x)
        if isinstance(x, yaml.ScalarNode):
            if x.value != y.value:
                return _node_at(file, y)
        elif isinstance(x, (yaml.SequenceNode, yaml.MappingNode)):
            if len(x.value) != len(y.value):
                return _node_at(file, y)
            if isinstance(x, yaml.MappingNode):
                for (k, v), (k2, v2) in zip(x.value, y.value):
                    stack.extend(((k, k2), (v, v2)))
            else:
                stack.extend(zip(x.value, y.value))
    return None


def same_value(a, b) -> bool:
    """`a == b` for two values read from YAML, walked by identity: a pair of nodes already compared
    (an alias reached again, or a recursive list) is not compared again, so shared and recursive
    values cost their written size, not their expanded size. NaN equals NaN."""
    seen: set[tuple[int, int]] = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y or (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y and not (isinstance(x, float) and x != x and y != y):
            return False
    return True

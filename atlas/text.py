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


def not_a_day(value: object) -> str:
    """The one wording for a day that does not parse (options, MCP arguments)."""
    return f"{value!r} is not a day (use YYYY-MM-DD)"


def width(text: str) -> int:
    """Terminal columns taken by text: East Asian wide and full-width characters take two."""
    if text.isascii():
        return len(text)  # (one column each: what the loop below gives, without looking up each character)
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


MAX_RATIOS = 48


def suggest(word: str, candidates: dict[str, str], limit: int = 5, folded: bool = False) -> list[str]:
    """Rank candidate ids for a misspelt word. `candidates` maps a display key to its id (`folded`:
    the keys are folded already, as `norm` gives them). A name scores difflib's ratio, or at least
    0.75 when one holds the other; the `limit` best ids scoring 0.45 or more, best first."""
    import difflib
    from collections import Counter

    key = norm(word)
    counts = Counter(key)
    scored: dict[str, float] = {}
    bounded: list[tuple[float, str, str]] = []
    for name, ident in candidates.items():
        n = name if folded else norm(name)
        if key and (key in n or n in key):
            scored[ident] = max(scored.get(ident, 0.0), 0.75 + 0.2 * min(len(key), len(n)) / max(len(key), len(n)))
        bound = _ratio_bound(key, counts, n)
        if bound >= 0.45:
            bounded.append((bound, n, ident))
    # best bound first: once a name's bound is below the limit-th best score, no later name can
    # enter the result or change its order (ratio never exceeds the bound); and at most
    # MAX_RATIOS comparisons, so that a long phrase (most names share its letters) costs no more
    bounded.sort(key=lambda b: -b[0])
    for i, (bound, n, ident) in enumerate(bounded[:MAX_RATIOS]):
        if i % 8 == 0 and bound < _kth(scored, limit):
            break
        scored[ident] = max(scored.get(ident, 0.0), difflib.SequenceMatcher(None, key, n).ratio())
    ranked = sorted((s, i) for i, s in scored.items() if s >= 0.45)
    ranked.sort(key=lambda pair: (-pair[0], pair[1]))
    return [ident for _, ident in ranked[:limit]]


def _kth(scored: dict[str, float], k: int) -> float:
    """The k-th best score so far (0.45 while fewer than k ids reach it)."""
    best = sorted((s for s in scored.values() if s >= 0.45), reverse=True)
    return best[k - 1] if len(best) >= k else 0.45


def _ratio_bound(key: str, counts, name: str) -> float:
    """An upper bound of difflib's ratio of key and name: the lengths (its real_quick_ratio), then
    the letters they share, counted with repeats (its quick_ratio); 0 when below 0.45."""
    total = len(key) + len(name)
    if not total or 2 * min(len(key), len(name)) < 0.45 * total:
        return 0.0
    shared = sum(min(c, name.count(ch)) for ch, c in counts.items())
    return 2 * shared / total if 2 * shared >= 0.45 * total else 0.0


PULL_REF_PATTERN = r"^refs/(?:pull|merge-requests|remotes/[^/]+/(?:pull|merge-requests))/"


def refname_problem(name: str) -> str:
    """'' when `name` is a full ref name as `git check-ref-format` accepts it, else why not.

    The rules: at least two components separated by single slashes, none empty, none starting
    with a dot or ending with `.lock`; no `..`, no `@{`, no backslash, no control character, space,
    `~ ^ : ? * [`; not ending with a dot; not the single character `@`."""
    if not isinstance(name, str) or not name:
        return "empty"
    bad = next((ch for ch in name if ord(ch) < 32 or ord(ch) == 127 or ch in " ~^:?*[\\"), None)
    if bad is not None:
        return f"contains {bad!r}"
    for needle in ("..", "@{", "//"):
        if needle in name:
            return f"contains {needle!r}"
    if name == "@":
        return "is '@'"
    if name.startswith("/") or name.endswith("/"):
        return "starts or ends with '/'"
    if name.endswith("."):
        return "ends with '.'"
    parts = name.split("/")
    if len(parts) < 2:
        return "has a single component"
    for part in parts:
        if part.startswith("."):
            return f"a component starts with '.' ({part!r})"
        if part.endswith(".lock"):
            return f"a component ends with '.lock' ({part!r})"
    return ""


def branch_problem(branch: str) -> str:
    """'' when `branch` (a repository's `branch:`: a name such as `main`, or a full ref name) is a
    valid ref name that is not a pull-request or merge-request ref, else why not."""
    import re

    if branch.startswith("-"):
        return "starts with '-' (git refuses such a branch name)"
    full = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    why = refname_problem(full)
    if why:
        return f"not a ref name git accepts: {why}"
    names = [full] if branch.startswith("refs/") else [full, f"refs/remotes/origin/{branch}",
                                                      f"refs/remotes/{branch}"]
    if any(re.match(PULL_REF_PATTERN, n) for n in names) or branch.split("/", 1)[0] in (
            "pull", "merge-requests"):
        return "a pull-request or merge-request ref, not a mainline branch"
    return ""


def pin_path_problem(path: str) -> str:
    """'' when `path` (a pin's or a location's path) names a file inside a repository as git stores
    it, else why not: an absolute path, a `..` that climbs out, an empty, `.` or `.git` component, a
    control character (a line break would end an object name given to git), or pathspec magic (a
    leading `:`) — what git refuses or reads as something else than a path in the tree."""
    import re

    if not path:
        return "is empty"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return "holds a control character"
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        return "is absolute; a pin names a path inside its repository"
    parts = path.split("/")
    if ".." in parts:
        return "climbs out of its repository (..)"
    if path.startswith(":"):
        return "starts with ':', which git reads as pathspec magic"
    if "" in parts or "." in parts:
        return "has an empty or '.' component (git stores no such path)"
    if any(part.lower() == ".git" for part in parts):
        return "names git's own folder (.git)"
    return ""


def repo_url_problem(url: str) -> str:
    """'' when `url` may stand in a repository's `urls:` (and so be cloned by `refresh --clone`), else
    why not. Only https://: the address is public data that readers open (the first one is the base
    of every pin's source link in the RDF export), and anyone can clone it without a key; an ssh://
    or file:// address is neither (git's own `url.<base>.insteadOf` takes a clone over ssh)."""
    from urllib.parse import urlsplit

    if not isinstance(url, str) or not url:
        return "empty URL"
    if any(ord(ch) < 32 or ch.isspace() or ord(ch) == 127 for ch in url):
        return "contains white space or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme.lower() != "https" or not url.lower().startswith("https://"):
        return "not an https:// URL (the public address; ssh:// and file:// are refused)"
    host = parts.hostname or ""
    if not host:
        return "no host"
    if host.startswith("-") or (parts.username or "").startswith("-"):
        return "host or user starts with '-'"
    return ""


def argument_problem(args: list[str]) -> str | None:
    """Why the command line cannot be read as text, or None. Python keeps bytes that are not UTF-8
    as lone surrogates (surrogateescape); such an argument is named with its bytes."""
    for i, arg in enumerate(args, 1):
        if any("\ud800" <= ch <= "\udfff" for ch in arg):
            raw = arg.encode("utf-8", "surrogateescape") if _escaped_only(arg) else \
                arg.encode("utf-8", "backslashreplace")
            return (f"argument {i} is not UTF-8 text: {str(raw)[1:]} "
                    "(every argument is read as UTF-8; check the terminal's or the script's encoding)")
    return None


def _escaped_only(arg: str) -> bool:
    return all(not ("\ud800" <= ch <= "\udfff") or "\udc80" <= ch <= "\udcff" for ch in arg)

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

"""A repository's releases: which of its tags are releases, in which order, and the first release that
contains a commit (docs/history.md, "Releases").

The rule is data (`releases:` of a repository in data/repositories/): the tags it reads (`tags`, a
glob on the tag's name), an optional `prefix` taken off the name, the `scheme` that orders them, and
the tags that are not releases (`exclude`). Schemes:

- `semver`: `MAJOR.MINOR.PATCH` after the prefix and an optional `v`, then an optional suffix after
  `-` or `.`: a pre-release (`alpha`/`a` < `beta`/`b` < `pre`/`preview` < `rc`/`c`, each with optional
  numbers, dotted parts compared one by one as semver does: `beta.2 < beta.2.pre < beta.3`), or a
  post-release (`post1`, after the final release). Pre-releases < the release < its post-releases. A
  tag whose suffix is anything else (`v1.3.2-temp`, `v1.5.1-cn-test`) is not a release.
- `date`: every tag, ordered by its date (the tagger's date of an annotated tag, else the tagged
  commit's committer date), ties by name.
- `list`: the tags of `order`, in that order; any other tag is not a release.

A release's date is that same date; a release dated after the cut-off (its UTC day) is not a release
at the cut-off. Tags that are not releases are listed with the reason.
"""
from __future__ import annotations

import fnmatch
import re
from datetime import datetime, timezone
from typing import NamedTuple

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-.]?(.*))?$")
_POST = re.compile(r"^post[.-]?(\d+)$")
LABELS = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "pre": 2, "preview": 2, "c": 3, "rc": 3}
_RUNS = re.compile(r"[A-Za-z]+|\d+")


class Tag(NamedTuple):
    name: str
    commit: str  # the commit it names (annotated tags peeled)
    date: str  # ISO 8601 with offset: the tagger's date, else the commit's committer date
    annotated: bool


def semver_key(version: str) -> tuple | None:
    """The order of one version (prefix removed), or None when it is not a release under `semver`."""
    m = _SEMVER.match(version)
    if not m:
        return None
    base = (int(m[1]), int(m[2]), int(m[3]))
    suffix = m[4] or ""
    if not suffix:
        return (*base, 1, ())
    post = _POST.match(suffix)
    if post:
        return (*base, 2, ((0, int(post[1])),))
    parts: list[tuple] = []
    for ident in re.split(r"[.-]", suffix):
        runs = _RUNS.findall(ident)
        if not runs or "".join(runs) != ident:
            return None
        for run in runs:
            if run.isdigit():
                parts.append((0, int(run)))
            elif run.lower() in LABELS:
                parts.append((1, LABELS[run.lower()]))
            else:
                return None
    if parts[0][0] != 1:
        return None  # a pre-release starts with its label
    return (*base, 0, tuple(parts))


def _stamp(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def utc_day(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(timezone.utc).strftime("%Y-%m-%d")
    except ValueError:
        return iso[:10]


def order(rule, tags: list[Tag], cutoff: str) -> tuple[list[Tag], list[tuple[str, str]]]:
    """(the releases in release order, [(tag, why it is not a release)]) under `rule` (a
    `model.ReleaseRule`), at the cut-off day `cutoff`."""
    ignored: list[tuple[str, str]] = []
    keyed: list[tuple[tuple, Tag]] = []
    listed = {name: i for i, name in enumerate(rule.order)}
    excluded = set(rule.exclude)
    for tag in sorted(tags, key=lambda t: t.name):
        why, key = _judge(rule, tag, listed, excluded, cutoff)
        if why:
            ignored.append((tag.name, why))
        else:
            keyed.append((key, tag))
    keyed.sort(key=lambda kt: kt[0])
    return [t for _k, t in keyed], ignored


def _judge(rule, tag: Tag, listed: dict[str, int], excluded: set[str], cutoff: str) -> tuple[str, tuple]:
    """('', the release's sort key), or (why the tag is not a release, ())."""
    if not fnmatch.fnmatchcase(tag.name, rule.tags or "*"):
        return f"does not match the release tags {rule.tags!r}", ()
    if tag.name in excluded:
        return "excluded in the data (not a release)", ()
    if not tag.commit:
        return "does not name a commit", ()
    if utc_day(tag.date) > cutoff:
        return f"dated {utc_day(tag.date)}, after the cut-off {cutoff}", ()
    if rule.scheme == "list":
        if tag.name not in listed:
            return "not in the stated release list", ()
        return "", (listed[tag.name],)
    if rule.scheme == "date":
        return "", (_stamp(tag.date), tag.name)
    version = tag.name[len(rule.prefix):] if rule.prefix and tag.name.startswith(rule.prefix) else tag.name
    key = semver_key(version)
    if key is None:
        return "not MAJOR.MINOR.PATCH with a pre-release (alpha, beta, pre, rc) or post-release suffix", ()
    return "", (key, tag.name)


# -- git ------------------------------------------------------------------------------------------

_FORMAT = "%(refname)%00%(objecttype)%00%(*objectname)%00%(objectname)%00%(taggerdate:iso-strict)%00" \
          "%(*committerdate:iso-strict)%00%(committerdate:iso-strict)"


def list_tags(g) -> list[Tag]:
    """Every tag of the clone that names a commit (one `git for-each-ref`)."""
    _status, out, _err = g.run("for-each-ref", f"--format={_FORMAT}", "refs/tags/", check=False)
    tags = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        ref, kind, peeled, obj, tagger, peeled_date, date = (line.split("\x00") + [""] * 7)[:7]
        name = ref[len("refs/tags/"):]
        if kind == "tag" and peeled:
            tags.append(Tag(name, peeled, tagger or peeled_date, True))
        elif kind == "commit":
            tags.append(Tag(name, obj, date, False))
        else:  # a tag of a tree or a blob, or of a missing object
            tags.append(Tag(name, "", tagger or date, kind == "tag"))
    return tags


def first_release_map(g, releases: list[Tag]) -> dict[str, int]:
    """commit -> the index of the first release (in release order) whose commit contains it: one
    `git rev-list` per release, each leaving out what the earlier releases contain."""
    out: dict[str, int] = {}
    for i, tag in enumerate(releases):
        earlier = ["^" + t.commit for t in releases[:i]]
        _status, text, _err = g.run("rev-list", tag.commit, *earlier, "--", check=False)
        for sha in text.decode().split():
            out.setdefault(sha, i)
    return out

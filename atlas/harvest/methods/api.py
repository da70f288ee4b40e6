"""`api`: a surface method. Not the value of a probe but the whole public surface a repository declares
(`api:` in data/repositories/: the public header globs, the kinds of symbols, the decorations to blank)
and its releases (`releases:`): every public symbol's first appearance on the mainline, its removal and
signature changes, its place at the cut-off, and the first release that contains it
(docs/history.md, "The public API"). It also gives the probes' sightings of the repository the first
release that contains the commit that introduced them.

It rides the same one pass as the probes: its matcher reads the blob ids of the public files from the
`--full-index` diff headers of each mainline commit; the blobs are parsed after the pass
(`harvest.apihistory`). The result is one file per repository, `data/api/<owner>+<name>.jsonl`
(`atlas.model.apifile`), written under the refresh lock; the next refresh continues from its cut-off head.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...model import apifile
from ...model.core import API_KINDS, Repository, Sighting
from ..gitformat import Commit, header_path
from ..publicfiles import PathRule
from ..apirules import extractor_key, path_rule, rules_key

if TYPE_CHECKING:
    from ..apirun import ApiRun
    from ..gitscan import _History

Change = tuple[str, str, str]  # (path, old blob, new blob)


class SurfaceMatcher:
    """Records, per mainline commit, the public files it changed (path, old blob, new blob)."""

    def __init__(self, rule: PathRule):
        import re

        self.rule = rule
        self.commits: list[tuple[Commit, list[Change]]] = []
        self.pending: list[Change] = []
        folders = rule.folders()
        starts = b"|".join(re.escape(b'a/' + f.encode()) + b"|" + re.escape(b'"a/' + f.encode()) for f in folders) \
            if folders is not None else b""
        self.headers = re.compile(b"\ndiff --git (?:" + starts + b")" if starts else b"\ndiff --git ")

    def done(self) -> bool:
        return not self.rule.public  # releases only: the pass need not run for it

    def segment(self, data: bytes, start: int, end: int) -> None:
        """The changed public files of the segment: only the file headers that can name one are read
        (those under the globs' literal folders, found by one regular expression)."""
        if not self.rule.public:
            return
        for m in self.headers.finditer(data, max(start - 1, 0), end):
            p = m.start()
            nl = data.find(b"\n", p + 1)
            path = header_path(data[p + 12:nl])
            if not self.rule.match(path):
                continue
            nxt = data.find(b"\ndiff --git ", nl, end)
            stop = nxt if nxt >= 0 else end
            hunk = data.find(b"\n@@", nl, stop)
            at = data.find(b"\nindex ", nl - 1, hunk if hunk >= 0 else stop)
            if at >= 0:
                ids = data[at + 7:data.find(b"\n", at + 1)].split(b" ", 1)[0].split(b"..")
                if len(ids) == 2:
                    self.pending.append((path, ids[0].decode(), ids[1].decode()))

    def commit_done(self, commit: Commit) -> list[str]:
        self.commits.append((commit, self.pending))
        self.pending = []
        return []

    def result(self) -> list[tuple[Commit, list[Change]]]:
        return self.commits


class Api:
    name = "api"
    surface = True
    reads_contents = True

    def declared(self, repo: Repository | None) -> bool:
        return repo is not None and (repo.api is not None or repo.releases is not None)

    def values(self, repo: Repository) -> list[str]:
        if repo.api is None:
            return []
        return list(repo.api.public) + ["!" + g for g in repo.api.exclude]

    def matcher(self, values: list[str]) -> SurfaceMatcher:
        return SurfaceMatcher(path_rule(values))

    def from_history(self, history: "_History", values: list[str]) -> list[tuple[Commit, list[Change]]]:
        """The matcher's result made from the `--raw` listing of a scan that met missing blobs (it
        holds every change, those of the skipped paths too)."""
        rule = path_rule(values)
        return [(c.commit(), [(p, old, new) for p, old, new, _st in c.changes if rule.match(p)])
                for c in history.commits]

    def current(self, data_dir, repo: Repository, clone, ref: str, head: str, cutoff: str,
                fetch_missing: bool) -> bool:
        """Whether the stored file answers for this head, cut-off, rules and tags (read without git)."""
        from ..locate import tags_key

        h = apifile.read_header(apifile.path(data_dir, repo.id))
        if h is None:
            return False
        return (h.get("head") == head and h.get("branch") == ref and h.get("cutoff") == cutoff
                and h.get("rules") == rules_key(repo) and h.get("extractor") == extractor_key()
                and h.get("tags") == tags_key(clone) and not (h.get("skipped_paths") and fetch_missing))

    def start(self, data_dir, repo: Repository, clone, cutoff: str) -> "ApiRun":
        from ..apirun import ApiRun

        return ApiRun(self, data_dir, repo, clone, cutoff)

    def write(self, data_dir, repo: str, text: str) -> None:
        from ...index.cache import atomic_write

        atomic_write(apifile.path(data_dir, repo), text)

    def prune(self, data_dir, keep: set[str]) -> list[str]:
        """Remove the files of repositories that declare no surface any more; their ids."""
        from pathlib import Path

        folder = Path(data_dir) / apifile.FOLDER
        gone = []
        for f in sorted(folder.glob("*" + apifile.SUFFIX)) if folder.is_dir() else []:
            rid = apifile.repo_of(f.name)
            if rid and rid not in keep:
                f.unlink(missing_ok=True)
                gone.append(rid)
        return gone

    def annotate(self, sightings: list[Sighting], first_release) -> list[Sighting]:
        """The sightings with the first release that contains the commit that introduced each."""
        return [s.replace(first_release=first_release(s.introduced or s.sha)) if s.found else s
                for s in sightings]


METHOD = Api()
KINDS = API_KINDS

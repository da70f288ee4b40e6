"""One repository's `api` harvest in a refresh job: where the stored history ends (`prepare`), and, after
the one pass over the mainline, the symbols, the merges' side commits and the releases (`finish`).
See atlas/harvest/methods/api.py and docs/history.md."""
from __future__ import annotations

from typing import Callable

from ..model import apifile
from ..model.core import Repository
from .apihistory import Declarations, Replay, introductions, records, release_states
from .apirules import extractor_key, path_rule, rules_key
from .publicfiles import TreeReader
from .releases import first_release_map, list_tags, order


class ApiRun:
    def __init__(self, method, data_dir, repo: Repository, clone, cutoff: str):
        self.method = method
        self.data_dir = data_dir
        self.repo = repo
        self.clone = clone
        self.cutoff = cutoff
        self.values = method.values(repo)
        self.reads = bool(self.values)  # releases only: nothing to read in the pass
        self.stored = apifile.read(apifile.path(data_dir, repo.id))
        self.base = ""  # the commit the stored history ends at ("": read from the root)
        self.replay: Replay | None = None
        self.decls: Declarations | None = None
        self.releases: list = []
        self.first_map: dict[str, int] | None = None
        self.text = ""  # the file to write ("" when it did not change)

    # -- before the pass ------------------------------------------------------------------------

    def prepare(self, g, line, fetch_missing: bool = False) -> None:
        """Continue from the stored history when it is on this mainline, made under the same rules,
        complete, and consistent with its own files; else read the whole history."""
        api = self.repo.api
        self.decls = Declarations(g.read_blobs, list(api.kinds) if api else [], list(api.decorations) if api else [],
                                  g.present)
        self.replay = Replay(self.decls, shallow=line.shallow)
        if not self.reads:
            self.base = line.cutoff_head
            return
        h = self.stored[0] if self.stored else None
        if not (h and h.get("rules") == rules_key(self.repo) and h.get("extractor") == extractor_key()
                and h.get("branch") == line.ref and not h.get("skipped_paths") and not fetch_missing
                and h.get("cutoff_head") and not line.shallow):
            return
        if h["cutoff_head"] not in {sha for _ts, sha in line.walk[line.idx or 0:]}:
            return  # rewritten history, an earlier cut-off, another branch
        stored = {(s["kind"], s["name"]): s for s in self.stored[2]} if self.stored else {}
        if self.replay.start(h.get("files") or {}, stored):
            self.base = h["cutoff_head"]
        else:
            self.replay = Replay(self.decls, shallow=line.shallow)

    # -- after the pass -------------------------------------------------------------------------

    def finish(self, g, line, commits, full: bool, started: str, now: str) -> None:
        """Replay the commits the pass read (from the root when `full`), then the merges and releases."""
        assert self.decls is not None and self.replay is not None
        if full and self.base:
            self.replay = Replay(self.decls, shallow=line.shallow)
        replay = self.replay
        commits = commits or []
        pairs = [(p, new) for _c, changes in commits for p, _o, new in changes if new.strip("0")]
        self.decls.prefetch([b for _p, b in pairs], [p for p, _b in pairs])
        for c, changes in commits:
            replay.commit(c, changes)
        api = self.repo.api
        rule = path_rule(self.values) if api else path_rule([])
        with TreeReader(g.git, self.repo.id, rule) as reader:
            introductions(g, reader, self.decls, replay)
            self.releases, ignored = order(self.repo.releases, list_tags(g), self.cutoff) \
                if self.repo.releases is not None else ([], [])
            states, unread = release_states(reader, self.decls, self.releases) if self.reads else (
                [{} for _ in self.releases], [0 for _ in self.releases])
        self.first_map = first_release_map(g, self.releases)
        symbols = records(replay, states, [t.name for t in self.releases])
        header = self._header(line, replay, ignored, len(symbols), started, now)
        rels = [{"name": t.name, "commit": t.commit, "date": t.date, "index": i, "annotated": t.annotated,
                 "missing": unread[i]} for i, t in enumerate(self.releases)]
        text = apifile.dumps(header, rels, symbols)
        self.text = "" if self._unchanged(text) else text

    def _header(self, line, replay: Replay, ignored, count: int, started: str, now: str) -> dict:
        from .locate import tags_key

        return {"branch": line.ref, "head": line.head, "cutoff": self.cutoff, "cutoff_head": line.cutoff_head,
                "commits": line.commits, "started_at": started, "harvested_at": now,
                "rules": rules_key(self.repo), "extractor": extractor_key(),
                "files": dict(sorted(replay.files.items())),
                "skipped_paths": sorted({p for ps in replay.missing.values() for p in ps}),
                "missing_blobs": sorted(replay.missing), "tags": tags_key(self.clone), "symbols": count,
                "ignored_tags": [list(x) for x in ignored]}

    def _unchanged(self, text: str) -> bool:
        """The same file but for the times of the harvest: nothing to write."""
        old = apifile.path(self.data_dir, self.repo.id)
        try:
            before = old.read_text(encoding="utf-8")
        except OSError:
            return False
        strip = _without_times
        return strip(before) == strip(text)

    def first_release(self, sha: str) -> str:
        if self.first_map is None or not sha:
            return ""
        i = self.first_map.get(sha)
        return self.releases[i].name if i is not None else ""

    def annotator(self) -> Callable[[str], str]:
        return self.first_release


def _without_times(text: str) -> str:
    import json

    first, _, rest = text.partition("\n")
    try:
        head = json.loads(first)
    except ValueError:
        return text
    head.pop("started_at", None)
    head.pop("harvested_at", None)
    return json.dumps(head, sort_keys=True) + "\n" + rest


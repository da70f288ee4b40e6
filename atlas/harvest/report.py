"""What a refresh reports, per repository (kept light: the no-op fast path builds it too)."""
from __future__ import annotations

from ..errors import Problem
from ..model.core import F, Record


class RepoRow(Record):
    repo: str
    probes: int = 0
    found: int = 0
    not_found: int = 0
    unknown: int = 0  # not seen, but missing blobs could hold them
    errors: int = 0
    seconds: float = 0.0
    status: str = ""  # up-to-date | scanned | incremental | failed | no-probes
    messages: list[str] = F(list)
    head: str = ""
    commits: int = 0
    read: int = 0  # mainline commits read by this run

    def to_plain(self) -> dict:
        return {n: getattr(self, n) for n in self._fields}


class RefreshReport(Record):
    cutoff: str
    timeline: str
    rows: list[RepoRow] = F(list)
    problems: list[Problem] = F(list)
    written: bool = False
    blobs: int = 0  # pins whose blob id this run wrote into the data

    @property
    def failed(self) -> bool:
        return any(r.errors or r.not_found for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_plain(self) -> dict:
        return {
            "cutoff": self.cutoff, "timeline": self.timeline, "written": self.written, "blobs": self.blobs,
            "ok": not self.failed, "repositories": [r.to_plain() for r in self.rows],
            "problems": [{"location": str(p.location), "level": p.level, "code": p.code,
                          "message": p.message, "hint": p.hint} for p in self.problems],
        }

"""Geometry of the timeline picture (timeline.html), computed in Python and drawn as SVG.

One lane per repository that holds a concept's first visible commit; each concept is a mark at
its true day on a month scale (long runs of months without any mark are folded into a marked
break, see `Scale`): a filled circle when the date is exact, an open diamond when it is
only "on or before" (a root commit or a shallow history). Labels are packed into rows inside their
lane so that no two overlap: a label takes the first row whose previous label ends left of its
mark. A label is the concept's short name (its name without a parenthesised expansion), never cut,
in English and in Chinese (the page's language switch shows one or both); the packing reserves room
for both. Widths of labels are estimated (a Latin character about 7 px, a wide one 12 px at 12 px
font), with room to spare.
"""
from __future__ import annotations

import calendar
import math
import re
from dataclasses import dataclass, field

from ..model.core import utc_day
from ..text import width
from ..view.views import AtlasViews

LABEL_X = 12  # px of left margin before the lane labels
X0 = 230  # px where the month scale starts
MONTH_W = 30  # px per month
RIGHT = 190  # px to the right of the last month, for labels
TOP = 64  # px above the first lane: years, months, cut-off and as-of labels
ROW_H = 18  # px per label row
LANE_PAD = 6  # px above and below the rows of a lane
MARK_GAP = 8  # px between a mark and its label
LABEL_GAP = 10  # px between two labels on one row
BOTTOM = 30  # px below the last lane
GAP_MIN = 4  # a run of this many months without a mark is folded
GAP_W = 40  # px of a folded run
PAREN_RE = re.compile(r"\s*[(\uff08].*$", re.S)


@dataclass
class Event:
    concept: str
    name: dict
    label: str
    date: str
    repo: str
    sha: str
    precision: str
    probe: str
    commit_url: str
    x: float
    y: float = 0.0
    row: int = 0
    later: bool = False
    label_zh: str = ""  # the Chinese short name ("" when it is the English one or absent)

    @property
    def extent(self) -> float:
        """px from the mark's x to the end of its label (both languages, as "both" shows them)."""
        return MARK_GAP + label_width(self.label) + (label_width(self.label_zh) + 4 if self.label_zh else 0)


@dataclass
class ReleaseTick:
    x: float
    name: str
    date: str  # its UTC day


@dataclass
class Lane:
    repo: str
    y0: float
    y1: float
    events: list[Event] = field(default_factory=list)
    name_w: int = 0  # px of the pinned label box: the name (13 px bold) and its margins
    releases: list[ReleaseTick] = field(default_factory=list)  # the repository's releases on the scale


@dataclass
class Tick:
    x: float
    label: str
    year: str  # the year when the tick opens a year (or the scale), else ""


@dataclass
class Gap:
    x0: float
    x1: float
    first: str  # YYYY-MM of the first folded month
    last: str  # YYYY-MM of the last folded month


@dataclass
class TimelineLayout:
    width: int
    height: int
    start: str  # YYYY-MM of the first month
    months: int
    month_w: int
    segments: str  # the scale for the page script (Scale.encode)
    scale_end: float  # x of the end of the last month
    ticks: list[Tick]
    gaps: list[Gap]
    lanes: list[Lane]
    cutoff: str
    cutoff_x: float
    as_of: str
    as_of_x: float
    others: list[str]  # repositories with no first visible concept
    lane_w: int = X0  # px of the lane labels that stay on screen when the picture scrolls sideways


def short_label(name: str) -> str:
    """A name without its parenthesised expansion, never cut."""
    return PAREN_RE.sub("", name).strip() or name.strip()


def label_width(label: str) -> float:
    return width(label) * 6.6 + 4


def _month_index(date: str, start: tuple[int, int]) -> float:
    y, m, d = (int(p) for p in date.split("-"))
    days = calendar.monthrange(y, m)[1]
    return (y - start[0]) * 12 + (m - start[1]) + (d - 1) / days


def date_x(date: str, start: tuple[int, int]) -> float:
    """x of a day on the plain month scale (no gaps)."""
    return round(X0 + _month_index(date, start) * MONTH_W, 1)


@dataclass
class Segment:
    m0: int  # first month (index from the scale's start)
    m1: int  # one past the last month
    x0: float  # x of the start of month m0
    w: float  # px per month inside the segment


class Scale:
    """A month scale that folds long runs of months without any mark into one narrow gap.

    Months with a mark (and the months of the cut-off and the as-of date) keep MONTH_W px; a run
    of at least GAP_MIN months without any is drawn GAP_W px wide and marked as a break, so the
    picture stays readable without hiding that time passed. Inside each segment x is linear in
    the day, so every mark still sits at its true date."""

    def __init__(self, start: tuple[int, int], months: int, kept: set[int]):
        self.start = start
        self.months = months
        self.segments: list[Segment] = []
        x = float(X0)
        m = 0
        while m < months:
            if m in kept:
                n = m + 1
                while n < months and n in kept:
                    n += 1
                self.segments.append(Segment(m, n, x, MONTH_W))
                x += (n - m) * MONTH_W
            else:
                n = m + 1
                while n < months and n not in kept:
                    n += 1
                if n - m >= GAP_MIN:
                    self.segments.append(Segment(m, n, x, GAP_W / (n - m)))
                    x += GAP_W
                else:
                    self.segments.append(Segment(m, n, x, MONTH_W))
                    x += (n - m) * MONTH_W
            m = n
        self.end_x = x

    def gaps(self) -> list[Segment]:
        return [g for g in self.segments if g.w != MONTH_W]

    def month_x(self, f: float) -> float:
        for seg in self.segments:
            if f < seg.m1 or seg is self.segments[-1]:
                return round(seg.x0 + (f - seg.m0) * seg.w, 1)
        return float(X0)

    def x(self, date: str) -> float:
        return self.month_x(_month_index(date, self.start))

    def encode(self) -> str:
        """The segments for the page script: "m0,m1,x0,w;..."."""
        return ";".join(f"{g.m0},{g.m1},{g.x0:g},{g.w:g}" for g in self.segments)


def layout_timeline(v: AtlasViews, as_of: str) -> TimelineLayout:
    cutoff = v["cutoff"]
    firsts = [(c, c["first_visible"]) for c in v["cards"] if c["first_visible"] and c["first_visible"]["date"]]
    dates = [utc_day(f["date"]) for _, f in firsts]
    lo = min(dates + [cutoff, as_of])
    hi = max(dates + [cutoff, as_of])
    start = (int(lo[:4]), int(lo[5:7]))
    end = (int(hi[:4]), int(hi[5:7]))
    months = (end[0] - start[0]) * 12 + end[1] - start[1] + 1
    kept = {int(_month_index(d, start)) for d in dates + [cutoff, as_of]}
    scale = Scale(start, months, kept)
    ticks = []
    gap_starts = {g.m0 for g in scale.gaps()}
    gap_months = {m for g in scale.gaps() for m in range(g.m0, g.m1)}
    for i in range(months + 1):
        y, m = start[0] + (start[1] - 1 + i) // 12, (start[1] - 1 + i) % 12 + 1
        if i in gap_months and i not in gap_starts:
            continue
        x = scale.month_x(i)
        if i in gap_starts or i == months:
            ticks.append(Tick(x, "", ""))
            continue
        opens = m == 1 or i == 0 or (i - 1) in gap_months
        ticks.append(Tick(x, str(m), str(y) if opens else ""))  # month numbers read in both languages

    by_repo: dict[str, list[Event]] = {}
    for c, f in firsts:
        en, day = c["names"]["en"] or c["id"], utc_day(f["date"])
        zh = short_label(c["names"]["zh"]) if c["names"]["zh"] else ""
        by_repo.setdefault(f["repo"], []).append(Event(
            concept=c["id"], name={"en": en, "zh": c["names"]["zh"]}, label=short_label(en), date=day,
            repo=f["repo"], sha=f["sha"], precision=f["precision"], probe=f"{f['method']}: {f['value']}",
            commit_url=f["url"], x=scale.x(day), later=day > as_of,
            label_zh=zh if zh != short_label(en) else ""))
    order = sorted(by_repo, key=lambda r: (min(e.date for e in by_repo[r]), r.lower()))
    lanes = []
    y = TOP
    for repo in order:
        events = sorted(by_repo[repo], key=lambda e: (e.date, e.concept))
        ends: list[float] = []
        for e in events:
            for row, end_x in enumerate(ends):
                if end_x + LABEL_GAP <= e.x:
                    break
            else:
                row = len(ends)
                ends.append(0.0)
            ends[row] = e.x + e.extent
            e.row = row
            e.y = y + LANE_PAD + row * ROW_H + ROW_H / 2
        y1 = y + 2 * LANE_PAD + max(2, len(ends)) * ROW_H  # two rows: name and count
        lanes.append(Lane(repo, y, y1, events, _name_w(repo), _release_ticks(v, repo, scale, lo, hi)))
        y = y1
    label_ends = [e.x + e.extent + 10 for lane in lanes for e in lane.events]
    width_px = max([scale.end_x + RIGHT, *label_ends])
    shown = set(order)
    others = sorted((r["id"] for r in v["repositories"] if r["id"] not in shown), key=str.lower)
    gaps = []
    for g in scale.gaps():
        first = start[0] * 12 + start[1] - 1 + g.m0
        last = start[0] * 12 + start[1] - 1 + g.m1 - 1
        gaps.append(Gap(g.x0, g.x0 + GAP_W, f"{first // 12:04d}-{first % 12 + 1:02d}",
                        f"{last // 12:04d}-{last % 12 + 1:02d}"))
    return TimelineLayout(width=math.ceil(width_px), height=int(y + BOTTOM),
                          start=f"{start[0]:04d}-{start[1]:02d}", months=months, month_w=MONTH_W,
                          segments=scale.encode(), scale_end=scale.end_x, ticks=ticks, gaps=gaps, lanes=lanes,
                          cutoff=cutoff, cutoff_x=scale.x(cutoff), as_of=as_of,
                          as_of_x=scale.x(as_of), others=others,
                          lane_w=max([lane.name_w + LABEL_X for lane in lanes] + [LABEL_X]))


def _release_ticks(v: AtlasViews, repo: str, scale: Scale, lo: str, hi: str) -> list[ReleaseTick]:
    """The releases of a lane's repository that fall on the scale (its first to its last day)."""
    out = []
    for r in v.get("releases", {}).get(repo, []):
        day = utc_day(r["date"])
        if lo <= day <= hi:
            out.append(ReleaseTick(scale.x(day), r["name"], day))
    return out


def _name_w(repo: str) -> int:
    """Width of a lane's pinned label box: the name (13 px bold, wider than the count below it) and
    its margins, at most the margin before the scale."""
    return min(X0 - 2 * LABEL_X, math.ceil(max(width(repo), 10) * 8.6 + LABEL_X))

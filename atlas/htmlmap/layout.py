"""Positions for the map, computed in Python so the page opens instantly and never moves.

The map carries the seed's two axes:

* **x - the six questions.** Each question owns a column. A concept sits at the mean of the
  columns of the questions it answers, so a concept answering "submit" and "move" sits between
  those two columns; concepts that answer none get a separate column on the right.
* **y - history or kind.** In the *history* view the rows are bands of years of the concept's
  first visible commit (`Atlas.first_visible`), oldest at the top, with a last band for concepts
  without a dated sighting; inside a band, concepts go down in date order. In the *kind* view
  the bands are the kinds, in `KINDS` order.

Overlaps are avoided deterministically on a grid of cells: each concept has an ideal cell column
(its lane); it drops into the least filled of the cell columns within `SPREAD` of its lane
(ties: the lane first, then right, then left), in (date, id) order, so every concept gets its own
cell and the same data always gives the same picture.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..model import KINDS, QUESTION_IDS, Atlas, Concept, Flow

CELL_W = 180  # px between neighbouring cell columns
CELL_H = 80  # px between rows
COLS_PER_QUESTION = 4  # cell columns between two question columns
SPREAD = 1  # a concept may move this many cell columns away from its lane
BAND_GAP = 1  # empty rows between two bands
NONE_LANE = len(QUESTION_IDS) * COLS_PER_QUESTION + 1  # "answers none" column, set apart
UNDATED = "undated"


@dataclass
class Band:
    key: str  # a year, "undated", or a kind
    y0: int  # top of the band (px)
    y1: int  # bottom of the band (px)
    count: int


@dataclass
class Column:
    key: str  # a question id, or "" for the none column
    x: int


@dataclass
class MapLayout:
    columns: list[Column]
    # view ("history" | "kind") -> concept id -> (x, y)
    positions: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    bands: dict[str, list[Band]] = field(default_factory=dict)


def answered(concept: Concept) -> list[str]:
    """The question ids a concept answers, in the questions' order (unknown keys ignored)."""
    return [q for q in QUESTION_IDS if concept.answers.get(q)]


def lane(concept: Concept) -> int:
    """The ideal cell column: mean of the answered question columns, or the none column."""
    qs = answered(concept)
    if not qs:
        return NONE_LANE
    idx = [QUESTION_IDS.index(q) for q in qs]
    # round half up on exact integers: the mean of column indices times COLS_PER_QUESTION
    total = sum(idx) * COLS_PER_QUESTION
    return (2 * total + len(idx)) // (2 * len(idx))


def first_date(atlas: Atlas, ident: str) -> str:
    first = atlas.first_visible(ident)
    return first.date if first is not None and first.date else ""


def _place(items: list[tuple[str, int]], top_row: int) -> tuple[dict[str, tuple[int, int]], int]:
    """Place (id, lane) items, already in order, into cells below `top_row`.

    Returns cell (col, row) per id and the number of rows used (at least 1)."""
    heights: dict[int, int] = {}
    cells: dict[str, tuple[int, int]] = {}
    offsets = [0]
    for d in range(1, SPREAD + 1):
        offsets += [d, -d]
    for ident, ln in items:
        best_col, best_h = ln, None
        for off in offsets:
            col = ln + off
            h = heights.get(col, 0)
            if best_h is None or h < best_h:
                best_col, best_h = col, h
        heights[best_col] = (best_h or 0) + 1
        cells[ident] = (best_col, top_row + (best_h or 0))
    return cells, max(heights.values(), default=1)


def _stack(groups: list[tuple[str, list[tuple[str, int]]]]) -> tuple[dict[str, tuple[int, int]],
                                                                  list[Band]]:
    positions: dict[str, tuple[int, int]] = {}
    bands: list[Band] = []
    row = 0
    for key, items in groups:
        cells, rows = _place(items, row)
        for ident, (col, r) in cells.items():
            positions[ident] = (col * CELL_W, r * CELL_H)
        y0 = row * CELL_H - CELL_H // 2
        row += rows
        bands.append(Band(key, y0, row * CELL_H - CELL_H // 2, len(items)))
        row += BAND_GAP
    return positions, bands


def layout_map(atlas: Atlas) -> MapLayout:
    columns = [Column(q, i * COLS_PER_QUESTION * CELL_W) for i, q in enumerate(QUESTION_IDS)]
    columns.append(Column("", NONE_LANE * CELL_W))
    concepts = sorted(atlas.concepts, key=lambda c: c.id)
    dates = {c.id: first_date(atlas, c.id) for c in concepts}
    lanes = {c.id: lane(c) for c in concepts}
    order = sorted(concepts, key=lambda c: (dates[c.id] or "9999", c.id))

    by_year: dict[str, list[tuple[str, int]]] = {}
    for c in order:
        by_year.setdefault(dates[c.id][:4] or UNDATED, []).append((c.id, lanes[c.id]))
    years = sorted(k for k in by_year if k != UNDATED)
    if UNDATED in by_year:
        years.append(UNDATED)
    hist_pos, hist_bands = _stack([(y, by_year[y]) for y in years])

    by_kind: dict[str, list[tuple[str, int]]] = {}
    for c in order:
        by_kind.setdefault(c.kind, []).append((c.id, lanes[c.id]))
    rank = {k: i for i, k in enumerate(KINDS)}
    kinds = sorted(by_kind, key=lambda k: (rank.get(k, len(KINDS)), k))
    kind_pos, kind_bands = _stack([(k, by_kind[k]) for k in kinds])

    return MapLayout(columns, {"history": hist_pos, "kind": kind_pos},
                     {"history": hist_bands, "kind": kind_bands})


def flow_levels(flow: Flow) -> dict[str, int]:
    """Longest-path level of each step (0 for sources), following `Flow.ordered_steps`.

    Edges that would go backwards (cycles) are ignored, so every step still gets a level."""
    order = [s.id for s in flow.ordered_steps()]
    pos = {sid: i for i, sid in enumerate(order)}
    level = {sid: 0 for sid in order}
    preds: dict[str, list[str]] = {sid: [] for sid in order}
    for e in flow.edges:
        if e.source in pos and e.target in pos and pos[e.source] < pos[e.target]:
            preds[e.target].append(e.source)
    for sid in order:
        if preds[sid]:
            level[sid] = max(level[p] for p in preds[sid]) + 1
    return level

"""What the graph pages need to place things, computed in Python so every build is the same.

* **Explorer lanes (x).** The seed's technical axis is the six questions: one lane per question,
  in question order, and a last lane for concepts that answer none. A concept sits in the lane
  of the first question it answers, and a concept that answers several carries a mark naming
  the others (`+ submit, peer`), so x never puts a concept on a question it does not answer and
  no position is an average of columns. The page places the lanes that hold visible concepts,
  left to right.
* **Flow levels (rows).** A flow is drawn top-down: the level of a step is its longest-path
  depth, so every edge points down; the page wraps wide levels and routes edges around boxes.
"""
from __future__ import annotations

from ..model import QUESTION_IDS
from ..views import Card, FlowView, answered

NONE_LANE = ""  # key of the lane of concepts that answer none of the questions


def lane_key(card: Card) -> str:
    """The lane of a concept: the first question it answers, or '' (none)."""
    qs = answered(card["answers"])
    return qs[0] if qs else NONE_LANE


def marks(card: Card) -> list[str]:
    """The other questions a concept answers, shown as a mark on its node."""
    return answered(card["answers"])[1:]


def lanes() -> list[str]:
    """The lanes in order: the six questions, then the none lane."""
    return [*QUESTION_IDS, NONE_LANE]


def flow_levels(flow: FlowView) -> dict[str, int]:
    """Longest-path level of each step (0 for sources), following the view's step order (the
    flow's topological order).

    Edges that would go backwards (cycles) are ignored, so every step still gets a level."""
    order = [s["id"] for s in flow["steps"]]
    pos = {sid: i for i, sid in enumerate(order)}
    level = {sid: 0 for sid in order}
    preds: dict[str, list[str]] = {sid: [] for sid in order}
    for e in flow["edges"]:
        if e["from"] in pos and e["to"] in pos and pos[e["from"]] < pos[e["to"]]:
            preds[e["to"]].append(e["from"])
    for sid in order:
        if preds[sid]:
            level[sid] = max(level[p] for p in preds[sid]) + 1
    return level

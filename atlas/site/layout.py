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

from ..model.core import QUESTION_IDS
from ..view.views import Card, FlowView, answered

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


def _descendants(start: str, succ: dict[str, list[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for t in succ.get(todo.pop(), []):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def _branches(flow: FlowView, succ: dict[str, list[str]]) -> dict[str, dict]:
    """Each choice of the flow with its branches: the option's target and the steps only it leads
    to (reached from no other option of the same choice), in the flow's order."""
    order = {s["id"]: i for i, s in enumerate(flow["steps"])}
    out: dict[str, dict] = {}
    for ch in flow["choices"]:
        reach = {o["to"]: _descendants(o["to"], succ) for o in ch["options"]}
        branches = []
        for o in ch["options"]:
            others = set().union(*(r for t, r in reach.items() if t != o["to"]))
            own = sorted((reach[o["to"]] - others) - {ch["from"]}, key=order.__getitem__)
            branches.append({"label": o["label"], "steps": own})
        out[ch["from"]] = {"from": ch["from"], "branches": branches}
    return out


def flow_blocks(flow: FlowView) -> list[dict]:
    """The flow page's step list, top-down: blocks of steps that share a level (drawn side by side:
    they run alongside), and after the step that opens a choice, one block of its alternatives
    (one column per branch, labelled with its condition). Every step appears exactly once.

    [{"kind": "level", "steps": [ids]} | {"kind": "choice", "from": id, "branches": [{label, steps}]}]"""
    succ: dict[str, list[str]] = {s["id"]: [] for s in flow["steps"]}
    for e in flow["edges"]:
        if e["from"] in succ and e["to"] in succ:
            succ[e["from"]].append(e["to"])
    choices = _branches(flow, succ)
    in_branch = {sid for ch in choices.values() for b in ch["branches"] for sid in b["steps"]}
    levels = flow_levels(flow)
    blocks: list[dict] = []
    for lvl in sorted(set(levels.values())):
        ids = [s["id"] for s in flow["steps"] if levels[s["id"]] == lvl and s["id"] not in in_branch]
        if ids:
            blocks.append({"kind": "level", "steps": ids})
        blocks.extend({"kind": "choice", **choices[sid]} for sid in ids if sid in choices)
    return blocks


def step_numbers(flow: FlowView) -> dict[str, int]:
    """Each step's number: its place in the order the page shows the steps (the blocks top-down,
    a block's steps left to right, a choice's branches one after the other), so the numbers run
    1, 2, 3 ... down the page whatever order the data lists the steps in."""
    shown: list[str] = []
    for b in flow_blocks(flow):
        shown += b["steps"] if b["kind"] == "level" else [s for br in b["branches"] for s in br["steps"]]
    shown += [s["id"] for s in flow["steps"] if s["id"] not in shown]  # none, as every step is shown once
    return {sid: i + 1 for i, sid in enumerate(shown)}

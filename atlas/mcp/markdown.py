"""Cards, claims and flows as Markdown, for readers that render it (coding assistants, chat).

Input is the view layer's views (`views.card`, `views.claim`, `views.flow`);
both languages are kept side by side so an answer can quote either.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.core import QUESTION_IDS
from ..view.views import Card, ClaimView, EvidenceView, FlowView, TextView


def _both(text: TextView | None) -> str:
    en, zh = (text["en"], text["zh"]) if text else ("", "")
    if en and zh and en != zh:
        return f"{en}<br>{zh}"
    return en or zh


def _evidence(items: Sequence[EvidenceView]) -> list[str]:
    out = []
    for e in items:
        out.append(f"- `{e['source']}` ({e['confidence']})")
        sup = _both(e.get("supports", {}))
        if sup:
            out.append(f"  {sup}")
    return out


def _head(c: Card) -> list[str]:
    names = c["names"]
    lines = [f"# {names['en']}" + (f" · {names['zh']}" if names.get("zh") else ""), "",
             f"id `{c['id']}` · kind **{c['kind']}** · lifecycle **{c['lifecycle']['status']}**"]
    note = _both(c["lifecycle"].get("note", {}))
    if note:
        lines.append(f"lifecycle note: {note}")
    aliases = [a for lg in ("en", "zh") for a in c["aliases"].get(lg, [])]
    if aliases:
        lines.append("aliases: " + ", ".join(aliases))
    if c.get("as_of"):
        vis = {True: "visible", False: "not yet visible", None: "undated"}[c["as_of"]["visible"]]
        lines.append(f"as of {c['as_of']['date']}: {vis}")
    return lines


def _answers(c: Card, questions: Mapping[str, Any]) -> list[str]:
    lines = ["", "## Answers to the six questions"]
    if not c["answers"]:
        return lines + ["(answers none of the six questions)"]
    return lines + [f"- **{_both(questions[q])}** {_both(c['answers'][q])}"
                    for q in QUESTION_IDS if q in c["answers"]]


def _links(c: Card) -> list[str]:
    lines = []
    if c["hardware"]:
        lines += ["", "## Hardware", ", ".join(c["hardware"])]
        if _both(c["hardware_note"]):
            lines.append(_both(c["hardware_note"]))
    if c["relations"]:
        lines += ["", "## Relations"]
        lines += [f"- {g['relation']}: " + ", ".join(f"`{x['id']}`" for x in g["concepts"])
                  for g in c["relations"]]
    if c["claims"]:
        lines += ["", "## Claims"]
        lines += [f"- [{cl['status']}] `{cl['id']}`: {_both(cl['statement'])}" for cl in c["claims"]]
    if c["flows"]:
        lines += ["", "## Flows", ", ".join(f"`{f['id']}`" for f in c["flows"])]
    if c["repositories"]:
        lines += ["", "## Repositories"]
        lines += [f"- `{r['id']}`" + (f" ({r['status']})" if r["status"] else "")
                  + (f": {_both(r['purpose'])}" if _both(r["purpose"]) else "") for r in c["repositories"]]
    return lines


def _history(c: Card) -> list[str]:
    if not c["history"] and not c.get("api"):
        return []
    cutoff = f", cut-off {c['history'][0]['cutoff']}" if c["history"] else ""
    lines = ["", f"## History (first visible{cutoff})"]
    for h in c["history"]:
        when = f"{h['date']} `{h['sha'][:12]}` {h['precision']}" if h["found"] else "not seen"
        shipped = f", first release {h['needs_release']}" if h.get("needs_release") else ""
        lines.append(f"- {h['repo']}: {when} ({h['method']} `{h['value']}`{shipped})")
    for a in c.get("api", []):
        first = f"{a['first']['date']} `{a['first']['sha'][:12]}`" if a["first"] else "releases only"
        rel = a["first_release"] or _never(a["first_release_label"])
        lines.append(f"- API {a['kind']} `{a['name']}` ({a['repo']}): {first}, first release {rel}"
                     + (f", removed {a['removed']['date']}" if a["removed"] else ""))
    return lines


def _never(label: TextView) -> str:
    return f"{label['en']} · {label['zh']}"


def card(c: Card, questions: Mapping[str, Any]) -> str:
    lines = _head(c) + _answers(c, questions)
    for title, text in (("For a newcomer · 小白版", c["beginner"]), ("For a professional · 专业版", c["professional"])):
        lines += ["", f"## {title}", text["en"], "", text["zh"]]
    lines += _links(c) + ["", "## Evidence", *_evidence(c["evidence"])] + _history(c)
    return "\n".join(lines) + "\n"


def claim(cl: ClaimView) -> str:
    lines = [f"# Claim `{cl['id']}`", "", f"status **{cl['status']}** · about "
             + ", ".join(f"`{a}`" for a in cl["about"]), "", _both(cl["statement"])]
    if _both(cl.get("note", {})):
        lines += ["", _both(cl["note"])]
    lines += ["", "## Evidence", *_evidence(cl["evidence"])]
    return "\n".join(lines) + "\n"


def flow(f: FlowView) -> str:
    lines = [f"# {_both(f['title'])}", "", f"id `{f['id']}`"]
    if _both(f["summary"]):
        lines += ["", _both(f["summary"])]
    lines += ["", "## Steps"]
    for i, s in enumerate(f["steps"], 1):
        lines.append(f"{i}. **{s['id']}** [{s['actor']}] {_both(s['label'])}")
        if s["concepts"]:
            lines.append("   concepts: " + ", ".join(f"`{x}`" for x in s["concepts"]))
        if s["source"]:
            lines.append(f"   source: `{s['source']['source']}` ({s['source']['confidence']})")
    if f["evidence"]:
        lines += ["", "## Evidence", *_evidence(f["evidence"])]
    return "\n".join(lines) + "\n"


def _inline(value: Any) -> str | None:
    """A value short enough for one line (a scalar or a bilingual text), else None."""
    if isinstance(value, dict) and value and set(value) <= {"en", "zh"} and \
            all(isinstance(v, str) for v in value.values()):
        return " / ".join(v for v in dict.fromkeys(value.values()) if v)
    if value is None or isinstance(value, (str, int, float, bool)):
        return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(str(v) for v in value)
    return None


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or _inline(value) == ""


def _outline(value: Any, indent: str) -> list[str]:
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if _empty(item):
                continue
            short = _inline(item)
            if short is not None:
                lines.append(f"{indent}- {key}: {short}")
            else:
                lines.append(f"{indent}- {key}:")
                lines += _outline(item, indent + "  ")
    elif isinstance(value, list):
        for item in value:
            lines += _item(item, indent)
    else:
        lines.append(f"{indent}- {_inline(value)}")
    return lines


def _item(item: Any, indent: str) -> list[str]:
    """One list item: its short fields on the bullet's line ("key: value; ..."), the others below."""
    short = _inline(item)
    if short is not None:
        return [f"{indent}- {short}"]
    if not isinstance(item, dict):
        return [f"{indent}-", *_outline(item, indent + "  ")]
    head = [f"{k}: {_inline(v)}" for k, v in item.items() if not _empty(v) and _inline(v) is not None]
    rest = {k: v for k, v in item.items() if not _empty(v) and _inline(v) is None}
    return [f"{indent}- " + "; ".join(head), *_outline(rest, indent + "  ")]


def outline(value: Any) -> str:
    """Any answer (a view, a page of one) as a Markdown outline: a bullet per field or item,
    nested as the value is, bilingual texts on one line (English / 中文), empty fields left out."""
    return "\n".join(_outline(value, "")) + "\n"

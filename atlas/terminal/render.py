"""Text rendering of query results: cards, tables (CJK-aware widths), matrices, paths and flows."""
from __future__ import annotations

import os
import sys
from typing import Callable

from ..model.core import QUESTION_IDS, utc_day
from ..text import width

QUESTION_SHORT = {"organize": "organize", "address": "address", "submit": "submit",
                  "move": "move", "link": "link", "peer": "peer"}
QUESTION_ZH = {"organize": "组织", "address": "地址", "submit": "提交", "move": "搬运",
               "link": "链路", "peer": "对端"}


def term_width() -> int:
    """The width to draw for, between 60 and 200: $COLUMNS, else the terminal of standard output,
    else 120 (what shutil.get_terminal_size reads; shutil itself is not imported, as its import
    would cost every query more than drawing the card does)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(60, min(columns or 120, 200))


def pick(text: dict, lang: str) -> str:
    if lang == "all":
        parts = [text.get("en", ""), text.get("zh", "")]
        return " / ".join(p for p in parts if p)
    return text.get(lang) or text.get("en") or text.get("zh") or ""


SOFT = "/-_"  # a long name may break after one of these when no space is near the end of a line


def _soft_break(s: str, start: int, end: int) -> int:
    """The index just after the last soft break character in s[start:end-1], or -1."""
    return max(s.rfind(ch, start, end - 1) for ch in SOFT) + 1 or -1


def _cut(s: str, w: int) -> tuple[str, str]:
    """Split s so that the head takes at most w columns (prefer a break at a space, then after a
    `/`, `-` or `_`, in the second half of the line)."""
    total = 0
    for i, ch in enumerate(s):
        cw = width(ch)
        if total + cw > w:
            head = s[:i]
            space = head.rfind(" ")
            if space > len(head) // 2:
                return head[:space], s[space + 1:].lstrip()
            soft = _soft_break(s, 0, i)
            if soft > i // 2:
                return s[:soft], s[soft:].lstrip()
            return head, s[i:].lstrip()
        total += cw
    return s, ""


def wrap(s: str, w: int) -> list[str]:
    """Lines of at most w columns, as repeated `_cut` would give, in one pass over s (linear)."""
    lines = []
    for para in (s or "").split("\n"):
        start, n = 0, len(para)
        while True:
            i, total = start, 0
            while i < n and total + width(para[i]) <= w:
                total += width(para[i])
                i += 1
            if i >= n:
                lines.append(para[start:])
                break
            i = max(i, start + 1)  # a character wider than the line still moves on
            space = para.rfind(" ", start, i) - start
            soft = _soft_break(para, start, i)
            if space > (i - start) // 2:
                cut, skip = start + space, 1
            elif soft - start > (i - start) // 2:
                cut, skip = soft, 0
            else:
                cut, skip = i, 0
            lines.append(para[start:cut].rstrip())
            start = cut + skip
            while start < n and para[start].isspace():
                start += 1
    return lines or [""]


def hang(text: str, w: int, first: str, rest: str) -> list[str]:
    """Wrap text to w columns: the first line behind `first`, the others behind `rest`."""
    head, tail = _cut(text, max(10, w - width(first)))
    out = [(first + head).rstrip()]
    if tail:
        out.extend(rest + x for x in wrap(tail, max(10, w - width(rest))))
    return out


def pad(s: str, w: int) -> str:
    return s + " " * max(0, w - width(s))


def table(headers: list[str], rows: list[list[str]], max_total: int | None = None,
          min_col: int = 6, right: tuple[int, ...] = ()) -> str:
    """A plain-text table; columns wrap so the table fits the terminal; `right` lists the
    columns (numbers) aligned to the right."""
    max_total = max_total or term_width()
    n = len(headers)
    natural = [max([width(headers[i])] + [max((width(x) for x in (r[i] or "").split("\n")), default=0)
                                          for r in rows]) for i in range(n)]
    budget = max_total - 2 * (n - 1)
    widths = list(natural)
    while sum(widths) > budget:
        i = max(range(n), key=lambda k: widths[k])
        if widths[i] <= min_col:
            break
        widths[i] -= 1
    def cell(text: str, i: int) -> str:
        return " " * max(0, widths[i] - width(text)) + text if i in right else pad(text, widths[i])

    out = ["  ".join(cell(h, i) for i, h in enumerate(headers)).rstrip(),
           "  ".join("-" * widths[i] for i in range(n))]
    for r in rows:
        cells = [wrap(r[i] or "", widths[i]) for i in range(n)]
        for k in range(max(len(c) for c in cells)):
            out.append("  ".join(cell(c[k] if k < len(c) else "", i)
                                 for i, c in enumerate(cells)).rstrip())
    return "\n".join(out)


def _section(title: str) -> str:
    return f"\n{title}"


def card(c: dict, questions: dict, lang: str = "en") -> str:
    """A concept card as text: the head, then one block per section of CARD_SECTIONS."""
    width_ = term_width() - 2
    lines = []
    for section in CARD_SECTIONS:
        lines.extend(section(c, questions, lang, width_))
    return "\n".join(lines)


def _card_head(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    names = c["names"]
    head = f"{names['en']}" + (f"  {names['zh']}" if names.get("zh") else "")
    lines = [head, "=" * min(width(head), term_width()),
             f"id: {c['id']}    kind: {c['kind']}    lifecycle: {c['lifecycle']['status']}"]
    aliases = [a for lang_ in ("en", "zh") for a in c["aliases"].get(lang_, [])]
    if aliases:
        lines.append("aliases: " + ", ".join(aliases))
    if pick(c["lifecycle"]["note"], lang):
        lines.extend(hang(pick(c["lifecycle"]["note"], lang), term_width(), "lifecycle note: ", "    "))
    if c.get("as_of"):
        vis = c["as_of"]["visible"]
        state = {True: "visible", False: "NOT YET VISIBLE", None: "undated (no sighting)"}[vis]
        lines.append(f"as of {c['as_of']['date']}: {state}")
    return lines


def _card_answers(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    lines = [_section("Answers to the six questions")]
    if not c["answers"]:
        return lines + ["  (none: this concept answers none of the six questions)"]
    for q in QUESTION_IDS:
        if q in c["answers"]:
            lines.append(f"  {pick(questions[q], lang)}")
            lines.extend("      " + x for x in wrap(pick(c["answers"][q], lang), term_width() - 8))
    return lines


def _card_explanations(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    lines = []
    for key, title in (("beginner", "For a newcomer"), ("professional", "For a professional")):
        lines.append(_section(title))
        langs = ("en", "zh") if lang == "all" else (lang,)
        for lg in langs:
            text = c[key].get(lg) or c[key].get("en", "")
            lines.extend("  " + x for x in wrap(text, width_))
    return lines


def _card_hardware(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    if not c["hardware"]:
        return []
    lines = [_section("Hardware: " + ", ".join(c["hardware"]))]
    if pick(c["hardware_note"], lang):
        lines.extend("  " + x for x in wrap(pick(c["hardware_note"], lang), width_))
    return lines


def _card_relations(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    if not c["relations"]:
        return []
    lines = [_section("Relations")]
    for g in c["relations"]:
        ids = ", ".join(x["id"] for x in g["concepts"])
        lines.extend(hang(ids, width_, f"  {g['relation']}: ", "      "))
    return lines


def _card_claims(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    if not c["claims"]:
        return []
    lines = [_section("Claims")]
    for cl in c["claims"]:
        lines.extend(hang(pick(cl["statement"], lang), width_, f"  [{cl['status']}] {cl['id']}: ", "      "))
    return lines


def _card_flows(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    return [_section("Flows: " + ", ".join(f["id"] for f in c["flows"]))] if c["flows"] else []


def _card_repositories(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    if not c.get("repositories"):
        return []
    lines = [_section("Repositories behind the pins")]
    for r in c["repositories"]:
        state = f"mirror of {r['mirror_of']}" if r["status"] == "mirror" and r["mirror_of"] else \
            r["status"] + (f", copy of {r['mirror_of']}" if r["mirror_of"] else "")
        lead = f"  {r['id']}" + (f" ({state})" if state else "")
        purpose = pick(r["purpose"], lang)
        lines.extend(hang(purpose, width_, lead + ": ", "      ") if purpose else [lead])
    return lines


def _card_evidence(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    lines = [_section("Evidence")]
    for e in c["evidence"]:
        lines.append(f"  - {e['source']}  ({e['confidence']})")
        sup = pick(e["supports"], lang)
        if sup:
            lines.extend("      " + x for x in wrap(sup, width_ - 6))
    return lines


UNDATED_WORDS = {
    "no-public-repository": "no public repository holds it",
    "not-harvested": "the repositories that hold it were not harvested here (no clone)",
    "not-found": "its probes found nothing before the cut-off",
    "no-reason": "no probe, and no reason given",
}


def _card_undated(c: dict, lang: str, width_: int) -> list[str]:
    u = c.get("undated")
    if not u:
        return []
    lead = UNDATED_WORDS.get(u["reason"], u["reason"]) + (f" ({', '.join(u['repos'])})" if u["repos"] else "")
    lines = [_section("History: undated")] + hang(lead, width_, "  ", "  ")
    if pick(u["note"], lang):
        lines.extend("  " + x for x in wrap(pick(u["note"], lang), width_))
    return lines


def _card_history(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    if not c["history"]:
        return _card_undated(c, lang, width_)
    return [_section(f"History (first visible on the mainline, cut-off {c['history'][0]['cutoff']})")] \
        + history_lines(c["history"])


def history_lines(history: list[dict]) -> list[str]:
    """One line per probe of a concept's history: the day first visible, or not seen."""
    lines = []
    for h in history:
        if h["found"]:
            shipped = f"  first release: {h['needs_release']}" if h.get("needs_release") else ""
            lines.append(f"  {utc_day(h['date'])}  {h['repo']}  {h['sha'][:12]}  {h['precision']}"
                         f"  {h['method']}: {h['value']}{shipped}")
        else:
            lines.append(f"  ----------  {h['repo']}  not seen before the cut-off"
                         f"  {h['method']}: {h['value']}")
    return lines


def _never() -> str:
    """"never released" in both languages (the views' one wording)."""
    from ..view.views import NEVER_RELEASED

    return f"{NEVER_RELEASED['en']} · {NEVER_RELEASED['zh']}"


def _card_api(c: dict, questions: dict, lang: str, width_: int) -> list[str]:
    """The API symbols the concept names: when each appeared, its first release, its removal."""
    items = c.get("api") or []
    if not items:
        return []
    lines = [_section("API symbols it names (first commit on the mainline, first release)")]
    for it in items:
        first = it["first"]
        when = f"{utc_day(first['date'])}  {first['sha'][:12]}  {first['precision']}" if first else \
            "in releases only"
        rel = it["first_release"] or _never()
        gone = f"  removed {utc_day(it['removed']['date'])}" if it["removed"] else ""
        lines.append(_short(f"  {when}  {rel}  {it['repo']}  {it['kind']} {it['name']}{gone}", width_))
    return lines


# The sections of a card, in order; each returns its lines (none when the card has nothing for it).
CARD_SECTIONS = (_card_head, _card_answers, _card_explanations, _card_hardware, _card_relations, _card_claims,
                 _card_flows, _card_repositories, _card_evidence, _card_history, _card_api)


def rows_table(rows: list[dict], lang: str = "en") -> str:
    if not rows:
        return "no concept matches"
    has_vis = any("visible" in r for r in rows)
    headers = ["id", "kind", "name", "answers", "first visible"] + (["as-of"] if has_vis else [])
    body = []
    for r in rows:
        line = [r["id"], r["kind"], pick(r["name"], lang), " ".join(r["answers"]),
                r.get("first_visible", "")]
        if has_vis:
            line.append({True: "visible", False: "not yet", None: "undated"}[r.get("visible")])
        body.append(line)
    return table(headers, body) + f"\n{len(rows)} concept(s)"


HIT_OPEN = {"concept": "atlas query ID", "flow": "atlas flow ID", "claim": "atlas claims ID",
            "repo": "atlas repo ID", "line": "atlas where ID", "function": "atlas source ID"}


def _short(text: str, w: int) -> str:
    return text if width(text) <= w else _cut(text, w - 1)[0].rstrip() + "…"


def hits(result: dict, lang: str = "en") -> str:
    """The ranked search: per hit its rank, type, id and name, then the text it matched in."""
    rows = result["hits"]
    if not rows:
        return f'nothing matches "{result["query"]}"'
    w = term_width()
    lines = [f'{len(rows)} result(s) for "{result["query"]}", best first']
    for i, h in enumerate(rows, 1):
        head = f"{i:>2}  {h['type']:<7}  {h['id']}"
        name = pick(h["name"], lang)
        later = _not_yet(h.get("as_of"))
        if name and name != h["id"]:
            head += "  " + _short(name, max(20, w - width(head) - width(later) - 2))
        lines.append(head + later)
        if h["snippet"]["text"] and h["snippet"]["text"] != name:
            lines.extend(hang(h["snippet"]["text"], w, "             ", "             "))
    kinds = [k for k in HIT_OPEN if any(h["type"] == k for h in rows)]
    lines.append("\nopen one: " + "; ".join(HIT_OPEN[k] for k in kinds))
    return "\n".join(lines)


def _not_yet(as_of: dict | None) -> str:
    """A hit's mark under --as-of: not yet visible on that day (first visible later), or undated."""
    if not as_of or as_of["visible"]:
        return ""
    if as_of["visible"] is None:
        return "  [no sighting]"
    return f"  [not yet visible on {as_of['date']}; first {as_of['first']}]"


# ---------------------------------------------------------------------------------------------
# A question's answer (atlas.ask): the answer itself first, in the question's language, then the
# ranked list
# ---------------------------------------------------------------------------------------------

SAID = {
    "en": {
        "first": "{name}: first visible {day} in {repo} ({sha}, {precision}; {method}: {value})",
        "unseen": "{name}: not seen on the mainline of any harvested repository before the cut-off {cutoff}",
        "undated": "{name}: undated - {why}",
        "no_probe": "the atlas has no probe for it",
        "cutoff": "  (first visible on the mainline, cut-off {cutoff}; docs/history.md)",
        "question": "{name} - {question}",
        "no_answer": "(not answered by {id}; it answers: {answers})",
        "no_answers": "(not answered by {id}, which answers none of the six questions)",
        "claims": "Claims about {ids}: {n}",
        "claims_found": "Claims: {n}",
        "no_claims": "No claims about {ids}",
        "nothing": 'nothing in concepts, claims, flows or repositories matches "{term}"',
        "ambiguous": '"{term}" is ambiguous: several concepts have names starting with it',
        "nearest": "nearest names:",
        "none_near": "no name is near it either; try other words (atlas query --help)",
        "released": "first release {release} ({day}) - {name} in {repo}; introduced by commit {sha} ({intro_day})",
        "never": "never released - {name} in {repo}: no release up to the cut-off declares it; introduced by "
                 "commit {sha} ({intro_day})",
        "off_mainline": "not on the mainline up to the cut-off",
        "removed": "    removed by commit {sha} ({day})",
        "named_by": "The public symbols {ids} names:",
        "more": "... and {n} more (atlas api SYMBOL shows each)",
    },
    "zh": {
        "first": "{name}：{day} 首次可见于 {repo}（{sha}，{precision}；{method}: {value}）",
        "unseen": "{name}：截至 {cutoff}，在已收录仓库的主线上未见",
        "undated": "{name}：未定时间 - {why}",
        "no_probe": "图谱没有它的探针",
        "cutoff": "  （主线上首次可见，截止日 {cutoff}；见 docs/history.md）",
        "question": "{name}：{question}",
        "no_answer": "（{id} 不回答这个问题；它回答的是：{answers}）",
        "no_answers": "（{id} 不回答六个问题中的任何一个）",
        "claims": "关于 {ids} 的论断：{n} 条",
        "claims_found": "论断：{n} 条",
        "no_claims": "没有关于 {ids} 的论断",
        "nothing": "概念、论断、流程和仓库中都没有与“{term}”匹配的内容",
        "ambiguous": "“{term}”有歧义：多个概念的名称以它开头",
        "nearest": "最接近的名称：",
        "none_near": "也没有相近的名称；换个说法试试（atlas query --help）",
        "released": "首次发布于 {release}（{day}）- {repo} 的 {name}；引入提交 {sha}（{intro_day}）",
        "never": "从未发布 - {repo} 的 {name}：截止日前没有哪个发布版本声明它；引入提交 {sha}（{intro_day}）",
        "off_mainline": "截止日前不在主线上",
        "removed": "    已被提交 {sha} 移除（{day}）",
        "named_by": "{ids} 所指的公开符号：",
        "more": "…… 另有 {n} 个（atlas api 符号名 可逐个查看）",
    },
}


def answer(value: dict, questions: dict, lang: str = "en") -> str:
    """An answered question: the card for a definition; else the answer itself (the first visible
    day, the one-line answer, the comparison, the claims) and then the ranked list."""
    intent = value["intent"]
    if intent["kind"] == "definition":
        return card(value["answer"], questions, lang)
    said = SAID.get(lang) or SAID.get(intent["lang"], SAID["en"])  # the answer's language; with all, the question's
    head = ANSWER_HEADS[intent["kind"]](value["answer"], questions, lang, said)
    listing = hits(value, lang) if value["hits"] else ""
    return "\n\n".join(part for part in ("\n".join(head), listing) if part)


def _history_head(a: dict, questions: dict, lang: str, said: dict) -> list[str]:
    name = pick(a["name"], lang)
    fv, history = a["first_visible"], a["history"]
    if not history:
        u = a.get("undated")
        why = (UNDATED_WORDS.get(u["reason"], u["reason"]) + (f" ({', '.join(u['repos'])})" if u["repos"] else "")
               if u else said["no_probe"])
        return hang(said["undated"].format(name=name, why=why), term_width(), "", "    ")
    cutoff = history[0]["cutoff"]
    if not fv:
        return [said["unseen"].format(name=name, cutoff=cutoff)] + history_lines(history)
    line = said["first"].format(name=name, day=utc_day(fv["date"]), repo=fv["repo"], sha=fv["sha"][:12],
                                precision=fv["precision"], method=_method_of(history, fv), value=fv["value"])
    return hang(line, term_width(), "", "    ") + history_lines(history) + [said["cutoff"].format(cutoff=cutoff)]


def _method_of(history: list[dict], fv: dict) -> str:
    return next((h["method"] for h in history if h["found"] and h["sha"] == fv["sha"] and h["value"] == fv["value"]),
                "term")


def _question_head(a: dict, questions: dict, lang: str, said: dict) -> list[str]:
    name = pick(a["name"], lang)
    lines = hang(said["question"].format(name=name, question=pick(a["question"]["names"], lang)),
                 term_width(), "", "    ")
    if a["text"]:
        return lines + ["  " + x for x in wrap(pick(a["text"], lang), term_width() - 4)]
    short = QUESTION_ZH if lang == "zh" else QUESTION_SHORT
    answered = [short.get(q, q) for q in QUESTION_IDS if q in a["answers"]]
    note = said["no_answer"].format(id=a["concept"], answers=", ".join(answered)) if answered \
        else said["no_answers"].format(id=a["concept"])
    return lines + ["  " + note]


def _comparison_head(a: dict, questions: dict, lang: str, said: dict) -> list[str]:
    return compare(a, lang).split("\n")


def _claims_head(a: dict, questions: dict, lang: str, said: dict) -> list[str]:
    ids = ", ".join(a["concepts"])
    rows = a["claims"]
    if not rows:
        return [said["no_claims"].format(ids=ids)] if ids else []
    lines = [said["claims"].format(ids=ids, n=len(rows)) if ids else said["claims_found"].format(n=len(rows))]
    for cl in rows:
        lines.extend(hang(pick(cl["statement"], lang), term_width(), f"  [{cl['status']}] {cl['id']}: ", "      "))
    return lines


def _search_head(a: None, questions: dict, lang: str, said: dict) -> list[str]:
    return []


def _release_head(a: dict, questions: dict, lang: str, said: dict) -> list[str]:
    """Each symbol's first release first (its day and the introducing commit), per repository."""
    lines = [said["named_by"].format(ids=", ".join(a["concepts"]))] if a["concepts"] else []
    for sym in a["symbols"]:
        rel = sym["first_release"]
        intro = sym["introduced"]
        fields = {"name": sym["name"], "repo": sym["repo"], "sha": intro[:12] if intro else said["off_mainline"],
                  "intro_day": utc_day(sym["introduced_date"]) if intro and sym["introduced_date"] else "-"}
        line = said["released"].format(release=rel["name"], day=utc_day(rel["date"]), **fields) if rel else \
            said["never"].format(**fields)
        lines += hang(line, term_width(), "", "    ")
        if sym["removed"]:
            lines.append(said["removed"].format(sha=sym["removed"]["sha"][:12], day=utc_day(sym["removed"]["date"])))
    if a["more"]:
        lines.append(said["more"].format(n=a["more"]))
    return lines


ANSWER_HEADS: dict[str, Callable[..., list[str]]] = {
    "release": _release_head, "history": _history_head, "question": _question_head, "comparison": _comparison_head,
    "claims": _claims_head, "search": _search_head}


def miss_message(term: str, said_lang: str, ambiguous: bool = False) -> str:
    """Nothing matches `term` (or it is an ambiguous prefix), in the question's language."""
    said = SAID.get(said_lang, SAID["en"])
    return said["ambiguous" if ambiguous else "nothing"].format(term=term)


def miss(term: str, rows: list, lang: str, said_lang: str, ambiguous: bool = False) -> str:
    """The honest miss: what was searched, then the nearest names (or that none is near)."""
    said = SAID.get(said_lang, SAID["en"])
    lines = [miss_message(term, said_lang, ambiguous)]
    if rows:
        lines.append(said["nearest"])
        lines.extend(f"  {r['id']:<32} {r['kind']:<20} {pick(r['name'], lang)}" for r in rows)
    else:
        lines.append(said["none_near"])
    return "\n".join(lines)


def suggestions(term: str, rows: list[dict], lang: str = "en", message: str = "") -> str:
    lines = [message or f'no concept matches "{term}"']
    if rows:
        lines.append("did you mean:")
        lines.extend(f"  {r['id']:<32} {r['kind']:<20} {pick(r['name'], lang)}" for r in rows)
    return "\n".join(lines)


def related(c: dict, rows: list[dict], lang: str = "en") -> str:
    if not rows:
        return f"{c['id']} has no relations" + (" of that type" if rows == [] else "")
    return table(["depth", "from", "relation", "concept", "kind", "name"],
                 [[str(r["depth"]), r["from"], r["relation"], r["id"], r["kind"], pick(r["name"], lang)]
                  for r in rows])


def path(a: str, b: str, steps: list[dict]) -> str:
    if not steps:
        return f"no path between {a} and {b}"
    out = steps[0]["from"]
    for s in steps:
        if s["direction"] == "forward":
            out += f" -{s['relation']}-> {s['to']}"
        else:
            out += f" <-{s['relation']}- {s['to']}"
    return out


def questions(result: dict, lang: str = "en", answers: bool = False) -> str:
    qs = [q["id"] for q in result["questions"]]
    if answers:  # questions as rows, concepts as columns: the answers read across
        headers = [""] + [r["id"] for r in result["rows"]]
        body = [[pick(q["names"], lang)] + [pick(r["answers"][q["id"]], lang) if q["id"] in r["answers"]
                                            else "-" for r in result["rows"]]
                for q in result["questions"]]
        return table(headers, body, min_col=8)
    short = QUESTION_ZH if lang == "zh" else QUESTION_SHORT
    headers = ["concept", "kind"] + [short[q] for q in qs]
    body = [[r["id"], r["kind"]] + ["●" if q in r["answers"] else "·" for q in qs]
            for r in result["rows"]]
    legend = "\n".join(f"  {short[q['id']]:<9} {pick(q['names'], lang)}" for q in result["questions"])
    counts = {q: sum(1 for r in result["rows"] if q in r["answers"]) for q in qs}
    multi = sum(1 for r in result["rows"] if len(r["answers"]) >= 2)
    every = sum(1 for r in result["rows"] if len(r["answers"]) == len(qs))
    summary = (f"{len(result['rows'])} concepts; per question: "
               + ", ".join(f"{short[q]} {counts[q]}" for q in qs)
               + f"; {multi} answer two or more, {every} answer all six.")
    return table(headers, body, min_col=4) + "\n\n" + legend + "\n" + summary


def compare(result: dict, lang: str = "en") -> str:
    cols = result["concepts"]
    headers = [""] + [c["id"] for c in cols]
    body = [["kind"] + [c["kind"] for c in cols],
            ["name"] + [pick(c["name"], lang) for c in cols]]
    for q in result["questions"]:
        body.append([pick(q["names"], lang)] +
                    [pick(c["answers"][q["id"]], lang) if q["id"] in c["answers"] else "-" for c in cols])
    body.append(["hardware"] + [", ".join(c["hardware"]) or "-" for c in cols])
    body.append(["lifecycle"] + [c["lifecycle"] + (": " + pick(c["lifecycle_note"], lang)
                                                   if c["lifecycle"] != "active" else "") for c in cols])
    body.append(["first visible"] + [
        (f"{utc_day(c['first_visible']['date'])} {c['first_visible']['repo']}"
         f" {c['first_visible']['sha'][:10]} ({c['first_visible']['precision']})")
        if c["first_visible"] else "-" for c in cols])
    body.append(["first release"] + [_needs(c) for c in cols])
    return table(headers, body, min_col=10)


def _needs(col: dict) -> str:
    """The release a compared concept needs: its first visible commit's first release, else '-'."""
    need = col.get("needs_release")
    return f"{col['first_visible']['repo']} {need}" if need else "-"


def flows(rows: list[dict], lang: str = "en") -> str:
    return table(["flow", "title", "steps", "edges"],
                 [[r["id"], pick(r["title"], lang), str(r["steps"]), str(r["edges"])] for r in rows])


def flow(f: dict, lang: str = "en") -> str:
    lines = [pick(f["title"], lang), "=" * min(width(pick(f["title"], lang)), term_width())]
    if pick(f["summary"], lang):
        lines.extend(wrap(pick(f["summary"], lang), term_width()))
    w = term_width() - 6
    for i, s in enumerate(f["steps"], 1):
        lines.append(f"\n{i:>2}. [{s['actor']}] {s['id']}")
        lines.extend("    " + x for x in wrap(pick(s["label"], lang), w))
        if s["concepts"]:
            lines.append("    concepts: " + ", ".join(s["concepts"]))
        if pick(s.get("note") or {}, lang):
            lines.extend(hang(pick(s["note"], lang), w + 2, "    note: ", "      "))
        if s["source"]:
            lines.append(f"    source: {s['source']['source']} ({s['source']['confidence']})")
        for t in s.get("test_plans", []):
            lines.append(f"    test plan: {t['claim']} (decision order {t['order']}; atlas claims {t['claim']})")
        for a in s["after"]:
            lines.append(f"    after {a['from']} ({a['type']}{': ' + a['label'] if a['label'] else ''})")
    if f.get("layout"):
        lines.append("\n" + ("共享窗口（按地址顺序）" if lang == "zh" else "The shared window (address order)"))
        for r in f["layout"]:
            pad = "      " if r["part_of"] else "  "
            lines.append(f"{pad}{pick(r['label'], lang)}: + {r['offset']}; {r['size']}")
            for key, name in (("writers", "written by"), ("readers", "read by")):
                if pick(r[key], lang):
                    lines.extend(hang(pick(r[key], lang), w, f"{pad}  {name}: ", pad + "    "))
    return "\n".join(lines)


def claims(rows: list[dict], lang: str = "en") -> str:
    if not rows:
        return "no claims"
    out = []
    w = term_width() - 4
    for cl in rows:
        out.append(f"[{cl['status']}] {cl['id']}  (about: {', '.join(cl['about'])})")
        out.extend("    " + x for x in wrap(pick(cl["statement"], lang), w))
        for e in cl["evidence"]:
            out.append(f"    - {e['source']} ({e['confidence']})")
        out.extend(_test_plan_lines(cl.get("test_plan"), lang, w))
    return "\n".join(out)


def claims_by_status(rows: list[dict], lang: str = "en") -> str:
    """Every claim on one line (status, id, statement cut to the terminal), grouped by status in
    the order of the statuses, each group with its count; then the totals."""
    if not rows:
        return "no claims"
    from ..model.core import CLAIM_STATUSES

    w = term_width()
    groups: dict[str, list[dict]] = {}
    for cl in rows:
        groups.setdefault(cl["status"], []).append(cl)
    order = [s for s in CLAIM_STATUSES if s in groups] + sorted(s for s in groups if s not in CLAIM_STATUSES)
    out = []
    for status in order:
        out.append(f"{status} ({len(groups[status])})")
        for cl in sorted(groups[status], key=lambda c: c["id"]):
            head = f"  [{status}] {cl['id']}: "
            out.append(head + _short(" ".join(pick(cl["statement"], lang).split()), max(20, w - width(head))))
    counts = ", ".join(f"{len(groups[s])} {s}" for s in order)
    out.append(f"\n{len(rows)} claims: {counts}; the evidence: atlas claims --full, or atlas claims ID")
    return "\n".join(out)


def _test_plan_lines(plan: dict | None, lang: str, w: int) -> list[str]:
    """A claim's test plan: decision order, flow step, what to measure, what confirms or refutes
    it, and the pinned lines to time or print at."""
    if not plan:
        return []
    step = f", flow step {plan['step']}" if plan["step"] else ""
    out = [f"    Test plan (decision order {plan['order']}{step})"]
    for key, title in (("measure", "measure"), ("confirm", "confirms"), ("refute", "refutes")):
        out.extend(hang(pick(plan[key], lang), w, f"      {title}: ", "        "))
    out.append("      time or print at:")
    for e in plan["where"]:
        out.append(f"        - {e['source']}" + (f"  ({e['symbol']})" if e.get("symbol") else ""))
        sup = pick(e["supports"], lang)
        if sup:
            out.extend("            " + x for x in wrap(sup, w - 12))
    return out


def repos(rows: list[dict], lang: str = "en") -> str:
    if not rows:
        return "no repositories"
    body = [[r["id"], r["status"] + (f" of {r['mirror_of']}" if r["mirror_of"] else ""),
             f"{r['found']}/{r['probes']}" if r["harvested"] else "-", pick(r["purpose"], lang)]
            for r in rows]
    return table(["repository", "status", "probes found", "purpose"], body, right=(2,)) \
        + f"\n{len(rows)} repositories; show one with: atlas repo ID"


def repo(r: dict, lang: str = "en") -> str:
    w = term_width()
    lines = [r["id"], "=" * min(width(r["id"]), w)]
    lines.extend(hang(pick(r["purpose"], lang) or "-", w, "purpose:       ", "               "))
    lines.append(f"status:        {r['status']}")
    if r["mirror_of"]:
        lines.append(f"mirror of:     {r['mirror_of']}")
    if r["migrated_from"]:
        lines.append("migrated from: " + ", ".join(r["migrated_from"]))
    if r["branch"]:
        lines.append(f"branch:        {r['branch']}")
    lines.append("hardware:      " + (", ".join(r["hardware"]) or "-"))
    if r["urls"]:
        lines.append("urls:          " + ", ".join(r["urls"]))
    if pick(r["note"], lang):
        lines.extend(hang(pick(r["note"], lang), w, "note:          ", "               "))
    h = r["harvest"]
    lines.append(_section("Harvest"))
    if h is None:
        lines.append("  not harvested (no entry in the timeline)")
    else:
        lines.append(f"  head          {h['head']}  ({h['branch']}, {h['commits']} commits"
                     + (", shallow" if h["shallow"] else "") + ")")
        lines.append(f"  cut-off head  {h['cutoff_head'] or '-'}  (cut-off {h['cutoff']})")
        lines.append(f"  harvested at  {h['harvested_at']}")
        lines.append("  skipped paths " + (", ".join(h["skipped_paths"]) or "none"))
    found = [p for p in r["probes"] if p["found"]]
    lines.append(_section(f"Probes: {len(found)} of {len(r['probes'])} found before the cut-off"))
    for p in r["probes"]:
        when = f"{utc_day(p['date'])}  {p['sha'][:12]}" if p["found"] else "----------  not seen    "
        lines.append(f"  {when}  {p['concept']}  {p['method']}: {p['value']}")
    if r["evidence"]:
        lines.append(_section("Evidence"))
        for e in r["evidence"]:
            lines.append(f"  - {e['source']}  ({e['confidence']})")
            sup = pick(e["supports"], lang)
            if sup:
                lines.extend("      " + x for x in wrap(sup, w - 8))
    return "\n".join(lines)


def refresh_table(report) -> str:
    """The summary of `atlas refresh`: a row per repository, its messages, where the timeline is."""
    rows = [[r.repo, str(r.probes), str(r.found), str(r.not_found), str(r.unknown), str(r.errors),
             f"{r.seconds:.2f}", r.status] for r in report.rows]
    if not rows:
        return "no probes to harvest"
    text = table(["repository", "probes", "found", "not found before cut-off", "unknown", "errors",
                  "seconds", "status"], rows, right=(1, 2, 3, 4, 5, 6))
    msgs = [m for r in report.rows for m in r.messages]
    if msgs:
        text += "\n\n" + "\n".join(f"- {m}" for m in msgs)
    where = report.timeline if report.written else f"{report.timeline} unchanged"
    text += f"\n\ncut-off {report.cutoff}; {where}"
    if report.blobs:
        text += f"; blob ids recorded beside {report.blobs} pin(s)"
    return text


def validation(problems, atlas) -> str:
    """`atlas validate`: every problem as file:line:col, then the counts."""
    errors = sum(1 for p in problems if p.is_error)
    lines = [str(p) for p in problems]
    files = len({p.location.file for p in problems})
    where = f" in {files} file(s)" if files else ""
    lines.append(f"{errors} error(s), {len(problems) - errors} warning(s){where}; "
                 f"{len(atlas.concepts)} concepts, {len(atlas.claims)} claims, {len(atlas.flows)} flows, "
                 f"{len(atlas.repositories)} repositories, {len(atlas.sightings)} sightings")
    return "\n".join(lines)


def _probe_lines(title: str, rows: list[dict]) -> list[str]:
    if not rows:
        return []
    return ["", title] + [f"  {s['repo']}  {s['concept']}  ({s['method']} {s['value']}, cut-off {s['cutoff']})"
                          for s in rows]


def timeline(value: dict) -> str:
    """`atlas timeline`: the sightings oldest first, then what was not found or is unknown."""
    found, as_of = value["sightings"], value["as_of"]
    if found:
        lines = [table(["date (UTC)", "repository", "concept", "sha", "precision", "probe"],
                       [[s["date"], s["repo"], s["concept"], s["sha"][:12], s["precision"],
                         f"{s['method']} {s['value']}"] for s in found])]
    else:
        lines = ["no sightings" + (f" on or before {as_of}" if as_of else "")]
    if value["hidden_after_as_of"]:
        lines.append(f"({value['hidden_after_as_of']} sighting(s) after {as_of} hidden)")
    lines += _probe_lines("not found before the cut-off:", value["not_found"])
    lines += _probe_lines("unknown (blobs missing from the clone could hold them):", value["unknown"])
    return "\n".join(lines)


def repos_report(value: dict) -> str:
    """`atlas timeline --repos-report`: a row per listed repository, the reasons, the counts."""
    accounts = value["repositories"]
    rows = [[a["repo"], a["state"], str(a["probes"]), str(a["found"]), str(a["not_found"]),
             str(a["unknown"]), a["first_day"] or "-"] for a in accounts]
    out = [table(["repository", "state", "probes", "found", "not found", "unknown", "first (UTC)"],
                 rows, right=(2, 3, 4, 5)), ""]
    out += [f"- {a['repo']}: {a['reason']}" for a in accounts if a["reason"]]
    out += ["", ", ".join(f"{n} {s}" for s, n in sorted(value["counts"].items()))]
    return "\n".join(out + _undated_lines(value["undated"]))


def _undated_lines(undated: list[dict]) -> list[str]:
    """The concepts no sighting dates, each with its reason, the state of the repositories that
    hold it and the data's note."""
    if not undated:
        return []
    out = ["", f"Undated concepts ({len(undated)}): no sighting dates them"]
    for u in undated:
        where = f" [{u['detail']}]" if u["detail"] else (f" [{', '.join(u['repos'])}]" if u["repos"] else "")
        out.append(f"- {u['concept']}: {u['reason']}{where}" + (f": {u['note']['en']}" if u["note"].get("en") else ""))
    return out


def verify(report, every: bool = False) -> str:
    """`atlas verify`: the counts, then the problems (broken and stale pins with their YAML location),
    then the unchecked pins: one line per repository with how to get a clone, or (`every`) each pin."""
    counts = ", ".join(f"{report.count(s)} {s}" for s in ("ok", "broken", "stale", "unchecked"))
    lines = ["pins: " + counts + (" (unchecked pins are not passed)" if report.count("unchecked") else "")]
    shown = ("broken", "stale", "unchecked") if every else ("broken", "stale")
    lines += [f"{r.location}: {r.status}: {r.pin}: {r.reason}" for r in report.rows if r.status in shown]
    if report.count("unchecked") and not every:
        for u in report.unchecked_repos():
            lines.append(f"unchecked: {u['repo']}: {u['pins']} pin{'s' if u['pins'] != 1 else ''}: {u['reason']}"
                         + (f"; {u['hint']}" if u["hint"] else ""))
        lines.append("(atlas verify --all lists every unchecked pin with its place)")
    return "\n".join(lines)


# -- the public API (`atlas api`) -------------------------------------------------------------------


def _event(e: dict | None) -> str:
    return f"{utc_day(e['date'])}  {e['sha'][:12]}  {e['precision']}" if e else "-"


def symbol_cards(value: dict) -> str:
    return "\n\n".join(symbol_card(c) for c in value["symbols"])


def symbol_card(c: dict) -> str:
    w = term_width() - 2
    head = f"{c['name']}  ({c['kind']}, {c['repo']})"
    lines = [head, "=" * min(width(head), term_width())]
    lines += hang(c["signature"] or "-", w, "signature: ", "           ")
    for where in c["where"]:
        lines.append(f"at the cut-off: {where['path']}:{where['line']}")
    first = c["first"]
    if first:
        lines.append(f"first commit:   {_event(first)}  {first['url']}")
        if c["introduced"] and c["introduced"] != first["sha"]:
            lines.append(f"introduced by:  {c['introduced'][:12]} ({utc_day(c['introduced_date'])}) on a side branch")
    else:
        lines.append("first commit:   not on the mainline up to the cut-off (in releases only)")
    rel = c["first_release"]
    lines.append(f"first release:  {rel['name']} ({utc_day(rel['date'])}), the first release that declares it"
                 if rel else f"first release:  {_never()} (no release up to the cut-off declares it)")
    if c["removed"]:
        lines.append(f"removed:        {_event(c['removed'])}")
    if c["note"]:
        lines += hang(c["note"], w, "note: ", "      ")
    changes = [e for e in c["changes"] if e["event"] != "removed" or e is not c["changes"][-1]]
    if changes:
        lines.append(_section("Changes on the mainline").lstrip("\n"))
        for e in changes:
            lines.append(_short(f"  {_event(e)}  {e['event']}  {e['signature']}", w))
    if c["releases"]:
        marks = {"absent": "·", "first": "★", "present": "✓", "changed": "Δ", "removed": "✗"}
        lines += hang("  ".join(f"{r['name']} {marks[r['state']]}" for r in c["releases"]), w, "releases:       ",
                      "                ")
    if c["concepts"]:
        lines.append("concepts:       " + ", ".join(x["id"] for x in c["concepts"]))
    return "\n".join(lines)


def api_summary(v: dict) -> str:
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(v["kinds"].items()))
    lines = [f"{v['repo']}: {v['symbols']} public symbols ({kinds or 'none'}), cut-off {v['cutoff']} "
             f"at {v['cutoff_head'][:12]}"]
    lines.append("releases, oldest first: " + (", ".join(r["name"] for r in v["releases"]) or "none"))
    for tag, why in v["ignored_tags"]:
        lines.append(f"  not a release: {tag}: {why}")
    for f in v.get("surfaces", []):
        mark = "scanned" if f["scanned"] else "not scanned"
        lines.append(f"  {f['folder']}: {mark} · {'读取' if f['scanned'] else '不读取'}: {f['reason']['en']}")
        lines.append(f"  {' ' * len(f['folder'])}  {f['reason']['zh']}")
    return "\n".join(lines)


def api_since(v: dict) -> str:
    rows = [[it["first_release"] or _never(), utc_day(it["first"]["date"]) if it["first"] else "-",
             it["kind"], it["name"], utc_day(it["removed"]["date"]) if it["removed"] else ""]
            for it in v["symbols"]]
    head = f"{v['repo']}: {len(rows)} symbol(s) first released after {v['since']['name']} (or never released)"
    return head + "\n" + table(["first release", "first commit", "kind", "symbol", "removed"], rows) if rows else \
        head


def api_diff(v: dict) -> str:
    w = term_width() - 2
    lines = [f"{v['repo']}: {v['base']['name']} -> {v['target']['name']}: {len(v['added'])} added, "
             f"{len(v['removed'])} removed, {len(v['changed'])} changed signature"]
    for name, n in v["unreadable"].items():
        lines.append(f"  ({name}: {n} public file(s) unreadable in the clone; answers there may miss symbols)")
    for title, key, mark in (("Added", "added", "+"), ("Removed", "removed", "-"), ("Changed", "changed", "~")):
        if v[key]:
            lines.append(f"\n{title}")
        for ch in v[key]:
            lines.append(_short(f"  {mark} {ch['kind']:<13} {ch['name']}  {ch['after'] or ch['before']}", w))
            if key == "changed":
                lines.append(_short(f"      was: {ch['before']}", w))
    return "\n".join(lines)

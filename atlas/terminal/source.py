"""The terminal face of the code behind the pins: `atlas where` (what cites a line) and `atlas
source` (the pinned lines, numbered, with the function around them, its calls and its callers).
On a terminal the lines are highlighted with Pygments; piped, they are plain text."""
from __future__ import annotations

from ..output import terminal_safe
from .render import hang, pick, term_width

_MAX_CALLS = 25
_MAX_CALLERS = 12


def _short(commit: str) -> str:
    return commit[:12]


def _file_head(v: dict) -> str:
    return f"{v['repo']}@{_short(v['commit'])}:{v['path']}"


def _where_span(ev: dict) -> str:
    pin = ev.get("pin")
    if not pin:
        return ev["source"]
    return f"L{pin['start']}" if pin["start"] == pin["end"] else f"L{pin['start']}-L{pin['end']}"


def _citation_lines(c: dict, lang: str, w: int) -> list[str]:
    ev = c["evidence"]
    out = [f"    {c['owner']['label']}  {_where_span(ev)}  ({ev['confidence']})"]
    said = pick(ev["supports"], lang)
    if said:
        out += hang(said, w, "        ", "        ")
    return out


def _function_line(fn: dict | None) -> str:
    if fn is None:
        return "  outside every function"
    return (f"  in {fn['qualified']} (lines {fn['start']}-{fn['end']}): {len(fn['calls'])} call(s), "
            f"{fn['callers_total']} caller(s)")


def _neighbours(p: dict) -> list[str]:
    out = []
    for side, rows in (("above", p["before"]), ("below", p["after"])):
        if rows:
            labels = ", ".join(dict.fromkeys(c["owner"]["label"] for c in rows))
            out.append(f"  nearest pin {side}: {_where_span(rows[0]['evidence'])} {labels}")
    return out


def where(value: dict, lang: str = "en") -> str:
    """Each matching file: the line's function, the records citing it, the nearest pins."""
    w = term_width()
    places = value["places"]
    q = value["query"]
    lines: list[str] = []
    if not places:
        lines += miss(value["miss"], lang, "where") if "miss" in value else \
            [f"no pinned or indexed file matches {q['path']}" + (f" in {q['repo']}" if q["repo"] else "")]
    for p in places:
        mark = "" if p["indexed"] else "  (not indexed)"
        lines.append(f"{_file_head(p)}:{p['line']}{mark}")
        if p["indexed"]:
            lines.append(_function_line(p["function"]))
        if p["covering"]:
            lines.append("  cited by")
            for c in p["covering"]:
                lines += _citation_lines(c, lang, w)
        else:
            lines.append(f"  no pin covers line {p['line']}")
        lines += _neighbours(p)
        lines.append("")
    return "\n".join(lines + _clone_hint(value["clones"], w, lang)).rstrip("\n")


def _hint(hint: str, w: int) -> list[str]:
    """The clone hint: its sentence wrapped, its command line as it is."""
    if not hint:
        return []
    sentence, _, command = hint.partition("\n")
    return hang(sentence, w, "", "  ") + ([command] if command else [])


def _clone_hint(clones: dict, w: int, lang: str) -> list[str]:
    """The clone hint in `lang`: English as the view words it, Chinese from the same facts, or both."""
    if not clones["hint"]:
        return []
    out = _hint(clones["hint"], w) if lang != "zh" else []
    if lang in ("zh", "all"):
        absent = clones["absent"]
        names = "、".join(absent[:3]) + ("等" if len(absent) > 3 else "")
        command = clones["hint"].partition("\n")[2]
        out += hang(f"{clones['root']} 下没有 {names} 的本地克隆；有了克隆才有函数、调用和源码行"
                    "（或用 --repos / ATLAS_REPOS 指向你的克隆）：", w, "", "  ") + ([command] if command else [])
    return out


# ---------------------------------------------------------------------------------------------
# source
# ---------------------------------------------------------------------------------------------


def _lexer(language: str, path: str):
    from pygments.lexers import CLexer, CppLexer, PythonLexer, TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    known = {"c": CLexer, "cpp": CppLexer, "python": PythonLexer}
    if language in known:
        return known[language]()
    try:
        return get_lexer_for_filename(path)
    except ClassNotFound:
        return TextLexer()


def highlighted(lines: list[str], language: str, path: str) -> list[str]:
    """The lines coloured for a 256-colour terminal (Pygments), one output line per input line."""
    from pygments import highlight
    from pygments.formatters import Terminal256Formatter

    text = highlight("\n".join(lines) + "\n", _lexer(language, path), Terminal256Formatter(style="monokai"))
    out = text.split("\n")
    return (out + [""] * len(lines))[:len(lines)]


def _numbered(x: dict, color: bool) -> list[str]:
    """The lines with their numbers; with colour, the lines are made safe before Pygments adds
    its escapes (so a control character in the source never reaches the terminal raw)."""
    safe = [terminal_safe(line) for line in x["lines"]]
    shown = highlighted(safe, x.get("language", ""), x["path"]) if color else safe
    width_ = len(str(x["start"] + len(shown)))
    return [f"{n:>{width_}} | {text}" for n, text in enumerate(shown, x["start"])]


def _call_line(c: dict) -> str:
    targets = c["targets"]
    if c["status"] == "resolved":
        t = targets[0]
        to = f"{t['qualified']} at {t['path']}:{t['start']}"
    elif targets:
        shown = "; ".join(f"{t['path']}:{t['start']}" for t in targets[:4])
        to = f"{c['candidates']} candidates: {shown}" + (" ..." if c["candidates"] > 4 else "")
    elif c["concepts"]:
        to = "concept " + ", ".join(c["concepts"])
    else:
        to = ""
    status = "standard library" if c["status"] == "stdlib" else c["status"]
    return f"    L{c['line']} {c['text']} -> {status} [{c['confidence']}]" + (f": {to}" if to else "")


def _function_block(fn: dict, x: dict) -> list[str]:
    out = [f"function {fn['qualified']} (lines {fn['start']}-{fn['end']})"]
    inside = [c for c in fn["calls"] if x["start"] <= c["line"] <= x["end"]] or fn["calls"]
    scope = "in these lines" if inside is not fn["calls"] else "in the function"
    if inside:
        out.append(f"  calls {scope} ({len(inside)} of {len(fn['calls'])}):")
        out += [_call_line(c) for c in inside[:_MAX_CALLS]]
        if len(inside) > _MAX_CALLS:
            out.append(f"    ... and {len(inside) - _MAX_CALLS} more (--format json lists them all)")
    callers = fn["callers"]
    out.append(f"  called by ({fn['callers_total']}):" if callers else "  called by: no indexed caller")
    out += [f"    {c['path']}:{c['line']} in {c['function']}" + (f" ({c['repo']})" if c["repo"] != x["repo"] else "")
            for c in callers[:_MAX_CALLERS]]
    if fn["callers_total"] > _MAX_CALLERS:
        out.append(f"    ... and {fn['callers_total'] - _MAX_CALLERS} more")
    return out


def excerpt(x: dict, color: bool = False) -> list[str]:
    span = f"#L{x['start']}" if x["start"] == x["end"] else f"#L{x['start']}-L{x['end']}"
    head = [f"{_file_head(x)}{span}"]
    if x["owners"]:
        head.append("cited by: " + ", ".join(o["label"] for o in x["owners"]))
    if x["url"]:
        head.append(f"upstream: {x['url']}")
    if x["missing"]:
        head.append(f"lines not shown: {x['missing']}")
    tail = [line for fn in x["functions"] for line in _function_block(fn, x)]
    return [terminal_safe(h) for h in head] + _numbered(x, color) + [terminal_safe(t) for t in tail]


def source(value: dict, color: bool = False, lang: str = "en") -> str:
    """Every excerpt, then the clone hint; the text is safe for a terminal (the only escapes are
    the colours Pygments adds when `color`). Nothing to show: what was looked for (`miss`)."""
    lines = [terminal_safe(line) for line in miss(value["miss"], lang, "source")] if "miss" in value else []
    for x in value["excerpts"]:
        lines += excerpt(x, color)
        lines.append("")
    clones = value["clones"]
    hint = [terminal_safe(h) for h in (_clone_hint(clones, term_width(), lang) if "miss" in value
                                       else _hint(clones["hint"], term_width()))]
    return "\n".join(lines + hint).rstrip("\n")


# What `atlas where` and `atlas source` say when nothing matched: what they looked for, in what, why
# it cannot match, and what to try; in English, Chinese or both (--lang)
MISS = {
    "en": {
        "head": 'atlas {cmd}: nothing to show for "{term}": no pinned or indexed file matches {path}',
        "absolute": "{path} is an absolute path; a location is a path inside a pinned repository, and the atlas "
                    "reads no file outside its clones",
        "climbs": "{path} climbs out of its repository (..); a location is a path inside a pinned repository",
        "bad-repo": '"{repo}" is not a repository name (owner/name, in letters, digits, ".", "-" and "_")',
        "unknown-repo": "{repo} is not a repository of the atlas (atlas repo lists them)",
        "no-file": "",
        "looked": "looked in: the {files} pinned files of {repos} repositories and the code index of {clones} "
                  "clone(s)",
        "closest": "pinned files with a close name: {names}",
        "try": "try: the end of a pinned path (atlas where dispatch.h:4166), REPO:PATH:LINE "
               "(atlas where hicann/shmem:src/x.cpp:12), a pin as the atlas writes it, or a concept or flow "
               "(atlas source aiv-direct-drive)",
    },
    "zh": {
        "head": "atlas {cmd}：“{term}”没有可显示的内容：没有与 {path} 匹配的已钉住或已索引的文件",
        "absolute": "{path} 是绝对路径；位置是已钉住仓库内的路径，图谱不读取克隆之外的任何文件",
        "climbs": "{path} 用 .. 跳出了所在仓库；位置是已钉住仓库内的路径",
        "bad-repo": "“{repo}”不是仓库名（owner/name，只含字母、数字、“.”、“-”和“_”）",
        "unknown-repo": "{repo} 不是图谱中的仓库（atlas repo 列出全部仓库）",
        "no-file": "",
        "looked": "查找范围：{repos} 个仓库中已钉住的 {files} 个文件，以及 {clones} 个克隆的代码索引",
        "closest": "名称相近的已钉住文件：{names}",
        "try": "可以试试：已钉住路径的末段（atlas where dispatch.h:4166）、REPO:PATH:LINE"
               "（atlas where hicann/shmem:src/x.cpp:12）、图谱写法的钉（pin），"
               "或概念、流程（atlas source aiv-direct-drive）",
    },
}


def miss(m: dict, lang: str, cmd: str) -> list[str]:
    """The lines of a miss (`code.answers.miss`), in `lang` (both languages for "all")."""
    out: list[str] = []
    w = term_width()
    for said in [MISS[x] for x in (("en", "zh") if lang == "all" else (lang if lang in MISS else "en",))]:
        words = {**m, "cmd": cmd, "names": ", ".join(m["closest"])}
        out += hang(said["head"].format(**words), w, "", "  ")
        keys = [k for k in (m["reason"], "looked") if said[k]] + (["closest"] if m["closest"] else []) + ["try"]
        for key in keys:
            out += hang(said[key].format(**words), w, "  ", "    ")
    return out

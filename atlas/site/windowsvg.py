"""The picture of a flow's shared memory window (`FlowView.layout`): one band per region in address
order, the parts of a region inside it, each with its start and size as the source computes them,
and a table beside it of who writes and who reads each region, with the pins. Drawn not to scale:
the sizes are expressions of the kernel's parameters, not numbers."""
from __future__ import annotations

from markupsafe import Markup, escape

from ..view.viewtypes import RegionView, TextView

WIDTH = 760
ROW = 40  # a region without parts
HEAD = 24  # the title line of a region with parts
INDENT = 28


def _both(t: TextView, x: int, y: int, cls: str) -> str:
    """A text of both languages at (x, y), each shown when its language is chosen."""
    out = []
    for lang, value in (("en", t["en"]), ("zh", t["zh"] or t["en"])):
        out.append(f'<text x="{x}" y="{y}" class="{cls} {lang}" lang="{lang}">{escape(value)}</text>')
    return "".join(out)


def _band(r: RegionView, x: int, y: int, w: int, h: int, depth: int) -> str:
    tip = f"{r['label'].get('en', '')}: {r['offset']} / {r['size']}"
    return (f'<g class="region depth-{depth}" id="region-{escape(r["id"])}"><title>{escape(tip)}</title>'
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3"/>'
            + _both(r["label"], x + 8, y + 16, "rlabel")
            + f'<text x="{x + w - 8}" y="{y + 16}" class="rsize" text-anchor="end" translate="no">'
            + f'{escape(_short(r["size"]))}</text>'
            + f'<text x="{x + 8}" y="{y + 31}" class="roffset" translate="no">'
            + f'+ {escape(_short(r["offset"]))}</text></g>')


def _short(expr: str, limit: int = 70) -> str:
    return expr if len(expr) <= limit else expr[:limit - 1] + "\u2026"


def window_svg(layout: list[RegionView]) -> Markup:
    """The SVG of a layout; "" when the flow has none."""
    if not layout:
        return Markup("")
    parts: dict[str, list[RegionView]] = {}
    for r in layout:
        if r["part_of"]:
            parts.setdefault(r["part_of"], []).append(r)
    y, body = 8, []
    for r in (r for r in layout if not r["part_of"]):
        inner = parts.get(r["id"], [])
        h = ROW if not inner else HEAD + 18 + len(inner) * (ROW + 4) + 4
        body.append(_band(r, 8, y, WIDTH - 16, h, 0))
        iy = y + HEAD + 18
        for p in inner:
            body.append(_band(p, 8 + INDENT, iy, WIDTH - 16 - 2 * INDENT, ROW, 1))
            iy += ROW + 4
        y += h + 6
    label = "Window layout, in address order (not to scale) / 窗口布局，按地址顺序（未按比例）"
    return Markup(f'<svg class="window-svg" role="img" aria-label="{escape(label)}" viewBox="0 0 {WIDTH} {y + 2}" '
                  f'width="{WIDTH}" height="{y + 2}" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>")

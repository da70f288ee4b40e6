/* Shared helpers of the atlas pages. Text from data is only ever set with textContent; links
   are built only from http(s) URLs or from our own page names. */
"use strict";
var AtlasUI = (function () {
  function data() {
    return JSON.parse(document.getElementById("atlas-data").textContent);
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null && text !== "") e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  var SOURCE = /^source\/[A-Za-z0-9._+@\/-]+\.html(#L\d+)?$/;  // a source page (atlas.site.source)
  var LOCAL = /^((((index|table|map|explorer|timeline|flows|repos|seed)\.html)|flow-[a-z0-9]+(-[a-z0-9]+)*\.html|concepts\/[a-z0-9]+(-[a-z0-9]+)*\.html)(#[A-Za-z0-9=&%._~,-]*)?|#[A-Za-z0-9=&%._~,-]*)$/;
  function safeHref(href) {
    href = String(href || "");
    if (/^https?:\/\/[^\s]+$/i.test(href)) return href;
    if (LOCAL.test(href)) return href;
    if (SOURCE.test(href) && !/(^|\/)\.\.?(\/|#|$)/.test(href)) return href;
    return "";
  }
  /* A link when the href is safe, plain text otherwise. */
  function link(href, text, cls) {
    var h = safeHref(href);
    var a = el(h ? "a" : "span", cls, text);
    if (/\bpin\b/.test(cls || "")) a.setAttribute("translate", "no");  /* a pin, a sha: an identifier */
    if (!h) return a;
    a.href = h;
    if (/^https?:/i.test(h)) {
      a.target = "_blank";
      a.rel = "noopener noreferrer";
    }
    return a;
  }
  /* The Markdown the data uses: inline code spans (`x`) as <code>, the rest as text; an unpaired
     backtick stays. atlas/site/common.py `md` does the same on the server. */
  function md(text, parent) {
    var re = /`([^`\n]+)`/g, at = 0, m, s = String(text);
    while ((m = re.exec(s)) !== null) {
      if (m.index > at) parent.appendChild(document.createTextNode(s.slice(at, m.index)));
      parent.appendChild(el("code", null, m[1]));
      at = m.index + m[0].length;
    }
    if (at < s.length) parent.appendChild(document.createTextNode(s.slice(at)));
    return parent;
  }
  /* Both languages of a {en, zh} text, each in its own element (.en / .zh, with lang), code spans
     rendered; one the data holds in one language only is `mono` (shown whatever is chosen);
     nothing when both are empty. */
  function bi(t, tag, cls) {
    if (!t || (!t.en && !t.zh)) return null;
    var box = el(tag || "div", cls), mono = !(t.en && t.zh);
    ["en", "zh"].forEach(function (lang) {
      if (!t[lang]) return;
      var s = el("span", lang + (mono ? " mono" : ""));
      s.lang = lang;
      box.appendChild(md(t[lang], s));
    });
    return box;
  }
  /* A string of ours in both languages. */
  function tr(en, zh, tag, cls) { return bi({ en: en, zh: zh }, tag || "span", cls); }
  function section(title, level) {
    var s = el("section", "sec");
    var h = el(level || "h3");
    if (typeof title === "string") h.textContent = title; else h.appendChild(tr(title[0], title[1]));
    s.appendChild(h);
    return s;
  }
  function normalize(q) {
    return String(q || "").normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean).join(" ");
  }
  function hashParams() {
    var out = {};
    var h = location.hash.replace(/^#/, "");
    h.split("&").forEach(function (part) {
      if (!part) return;
      var i = part.indexOf("=");
      var k = i < 0 ? part : part.slice(0, i);
      var v = i < 0 ? "" : part.slice(i + 1);
      try { out[decodeURIComponent(k)] = decodeURIComponent(v); } catch (e) { /* ignore */ }
    });
    return out;
  }
  var sources = {};  // "repo@sha:path" -> the file's source page, when the site was built with clones
  function useSources(map) { sources = map || {}; }
  function sourceHref(ev) {
    var p = ev && ev.pin, page = p && sources[p.repo + "@" + p.sha + ":" + p.path];
    return page ? page + "#L" + p.start : "";
  }
  /* An evidence item: a seed citation links to its summary on the seed page; a pin whose file
     the site holds (built with clones) links to its source page, the upstream URL beside it;
     anything else links to its URL. */
  function evidenceList(list, vocab) {
    var ul = el("ul", "evidence");
    (list || []).forEach(function (ev) {
      var li = el("li");
      var local = ev.seed_page ? "" : sourceHref(ev);
      var pin = ev.seed_page ? link("seed.html#page-" + ev.seed_page, "seed #page-" + ev.seed_page, "pin seed")
              : local ? link(local, ev.source, "pin local")
              : link(ev.url, ev.source || ev.url, "pin");
      pin.setAttribute("translate", "no");
      add(li, pin);
      if (local && ev.url) {
        var up = link(ev.url, "", "upstream");
        add(li, document.createTextNode(" "), add(up, tr("upstream", "\u4e0a\u6e38")));
      }
      if (ev.symbol) add(li, el("code", "symbol", ev.symbol));
      if (ev.confidence) {
        var c = vocab && vocab.confidence[ev.confidence];
        add(li, c ? tr(c.en, c.zh, "span", "tag") : el("span", "tag", ev.confidence));
      }
      add(li, bi(ev.supports, "div", "supports"));
      ul.appendChild(li);
    });
    return ul;
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }
  /* ---- edges that go around boxes ----------------------------------------------------------
     An edge is drawn straight when the segment between its ends clears every other box; else
     the page tries vis-network's curvedCW / curvedCCW with growing roundness and keeps the first
     curve that clears. The curve is computed with vis-network's own formula for those types
     (a quadratic Bezier through its "via" point), sampled finely, and tested against each box. */
  function via(a, b, type, r) {
    var dx = b.x - a.x, dy = a.y - b.y, len = Math.sqrt(dx * dx + dy * dy), pi = Math.PI;
    var f = 0.5 * r + 0.5;
    var ang = (Math.atan2(dy, dx) + (type === "curvedCW" ? f : 0.5 * -r + 0.5) * pi) % (2 * pi);
    return { x: a.x + f * len * Math.sin(ang), y: a.y + f * len * Math.cos(ang) };
  }
  function curvePoints(a, b, smooth, n) {
    var pts = [];
    var v = smooth ? via(a, b, smooth.type, smooth.roundness) : null;
    for (var i = 0; i <= n; i++) {
      var t = i / n, u = 1 - t;
      pts.push(v ? { x: u * u * a.x + 2 * t * u * v.x + t * t * b.x,
                     y: u * u * a.y + 2 * t * u * v.y + t * t * b.y }
                 : { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t });
    }
    return pts;
  }
  function segHitsBox(p, q, bx) {
    /* Liang-Barsky clipping of segment p-q against the box {left, right, top, bottom} */
    var t0 = 0, t1 = 1, dx = q.x - p.x, dy = q.y - p.y;
    var ps = [-dx, dx, -dy, dy], qs = [p.x - bx.left, bx.right - p.x, p.y - bx.top, bx.bottom - p.y];
    for (var i = 0; i < 4; i++) {
      if (ps[i] === 0) { if (qs[i] < 0) return false; }
      else {
        var r = qs[i] / ps[i];
        if (ps[i] < 0) { if (r > t1) return false; if (r > t0) t0 = r; }
        else { if (r < t0) return false; if (r < t1) t1 = r; }
      }
    }
    return true;
  }
  function pathHits(pts, boxes, skip) {
    var hits = 0, x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (var j = 0; j < pts.length; j++) {
      x0 = Math.min(x0, pts[j].x); x1 = Math.max(x1, pts[j].x);
      y0 = Math.min(y0, pts[j].y); y1 = Math.max(y1, pts[j].y);
    }
    for (var k = 0; k < boxes.length; k++) {
      var bx = boxes[k];
      if (skip[bx.id] || bx.right < x0 || bx.left > x1 || bx.bottom < y0 || bx.top > y1) continue;
      for (var i = 0; i + 1 < pts.length; i++) {
        if (segHitsBox(pts[i], pts[i + 1], bx)) { hits++; break; }
      }
    }
    return hits;
  }
  var CANDIDATES = [null];
  [0.2, 0.35, 0.5, 0.7, 0.9].forEach(function (r) {
    CANDIDATES.push({ enabled: true, type: "curvedCW", roundness: r });
    CANDIDATES.push({ enabled: true, type: "curvedCCW", roundness: r });
  });
  /* edges: [{id, from, to}], pos: id -> {x, y}, boxes: [{id, left, right, top, bottom}]
     (already padded). Returns {smooth: id -> smooth option (false for straight), failed: [ids]} */
  /* The largest overshoot of sampled points beyond bounds {left, right, top, bottom} (0: inside). */
  function overshoot(pts, bounds) {
    var worst = 0;
    for (var i = 0; i < pts.length; i++) {
      var p = pts[i];
      worst = Math.max(worst, bounds.left - p.x, p.x - bounds.right, bounds.top - p.y, p.y - bounds.bottom);
    }
    return worst;
  }
  /* bounds (optional): the drawing's rectangle; a curve that leaves it counts as failing, so a
     long edge whose every curve bulges past the page's side takes the detour instead. */
  function route(edges, pos, boxes, pad, bounds) {
    var out = {}, failed = [], used = {};
    var padded = boxes.map(function (b) {
      return { id: b.id, left: b.left - pad, right: b.right + pad, top: b.top - pad, bottom: b.bottom + pad };
    });
    edges.forEach(function (e) {
      var a = pos[e.from], b = pos[e.to];
      if (!a || !b) return;
      var skip = {}; skip[e.from] = skip[e.to] = true;
      var pair = e.from < e.to ? e.from + "|" + e.to : e.to + "|" + e.from;
      var best = null, bestHits = Infinity, bestKey = null;
      for (var i = 0; i < CANDIDATES.length; i++) {
        var c = CANDIDATES[i];
        /* two relations between one pair take different curves; a reversed pair flips CW/CCW */
        var key = pair + "|" + (c ? (e.from < e.to ? c.type : (c.type === "curvedCW" ? "curvedCCW" : "curvedCW")) + c.roundness : "s");
        if (used[key]) continue;
        var pts = curvePoints(a, b, c, 48);
        var h = pathHits(pts, padded, skip);
        if (bounds && c && overshoot(pts, bounds) > 0) h += 1000;
        if (h < bestHits) { best = c; bestHits = h; bestKey = key; }
        if (h === 0) break;
      }
      if (bestHits > 0) failed.push(e.id);
      used[bestKey] = true;
      out[e.id] = best || false;
    });
    return { smooth: out, failed: failed };
  }
  /* An edge drawn as a polyline through invisible waypoint nodes: pts are the inner corners.
     The segments keep the edge's colour and dashes; the arrow(s) sit on the end segments and
     the label on the middle one. Every segment carries `rel` (the edge's id) for hover. */
  var CLEAR = "rgba(0,0,0,0)";
  function chain(e, pts) {
    var ids = [e.from], nodesOut = [], edgesOut = [];
    pts.forEach(function (p, i) {
      var id = e.id + "~" + i;
      ids.push(id);
      nodesOut.push({ id: id, x: p.x, y: p.y, shape: "dot", size: 1, borderWidth: 0, label: undefined,
                      chosen: false, waypoint: true, physics: false,
                      color: { background: CLEAR, border: CLEAR, highlight: { background: CLEAR, border: CLEAR },
                               hover: { background: CLEAR, border: CLEAR } } });
    });
    ids.push(e.to);
    var arrows = String(e.arrows || "");
    var mid = Math.floor((ids.length - 2) / 2);
    for (var i = 0; i + 1 < ids.length; i++) {
      var seg = {};
      Object.keys(e).forEach(function (k) { seg[k] = e[k]; });
      seg.id = e.id + "~s" + i; seg.from = ids[i]; seg.to = ids[i + 1]; seg.rel = e.id; seg.smooth = false;
      var a = [];
      if (i === ids.length - 2 && arrows.indexOf("to") >= 0) a.push("to");
      if (i === 0 && arrows.indexOf("from") >= 0) a.push("from");
      seg.arrows = a.length ? a.join(", ") : { to: { enabled: false } };
      if (i !== mid) delete seg.label;
      edgesOut.push(seg);
    }
    return { nodes: nodesOut, edges: edgesOut };
  }
  /* The drawn check (for tests): sample each drawn edge with vis-network's own getPoint and
     count the edges that pass through a box other than their ends. */
  function crossings(network, nodeIds, edgeIds) {
    var boxes = nodeIds.map(function (id) {
      var b = network.getBoundingBox(id);
      return { id: id, left: b.left, right: b.right, top: b.top, bottom: b.bottom };
    });
    var bad = [];
    edgeIds.forEach(function (eid) {
      var e = network.body.edges[eid];
      if (!e || !e.edgeType) return;
      var pts = [];
      for (var i = 0; i <= 64; i++) pts.push(e.edgeType.getPoint(i / 64));
      var skip = {}; skip[e.fromId] = skip[e.toId] = true;
      if (pathHits(pts, boxes, skip)) bad.push(eid);
    });
    return bad;
  }
  /* Edges that leave the drawing (for tests): each drawn edge sampled with vis-network's own
     getPoint, in DOM pixels of the canvas; an edge with a point outside [0, w] x [0, h] (1 px
     slack) is listed with its worst overshoot. */
  function outside(network, edgeIds, w, h) {
    var bad = [];
    edgeIds.forEach(function (eid) {
      var e = network.body.edges[eid];
      if (!e || !e.edgeType) return;
      var worst = 0;
      for (var i = 0; i <= 64; i++) {
        var p = network.canvasToDOM(e.edgeType.getPoint(i / 64));
        worst = Math.max(worst, -p.x, p.x - w, -p.y, p.y - h);
      }
      if (worst > 1) bad.push([eid, Math.round(worst)]);
    });
    return bad;
  }
  /* Box overlaps among the drawn nodes (for tests). */
  function overlaps(network, nodeIds) {
    var bs = nodeIds.map(function (id) { return [id, network.getBoundingBox(id)]; }), out = [];
    for (var i = 0; i < bs.length; i++) for (var j = i + 1; j < bs.length; j++) {
      var a = bs[i][1], b = bs[j][1];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push([bs[i][0], bs[j][0]]);
    }
    return out;
  }
  /* Names broken only where a reader expects it: each line of text wider than maxW (px in the
     given canvas font) is cut after a space, "_", "-" or "/", before a CamelCase capital, or
     between Chinese characters, filling lines greedily. vis-network itself breaks only at
     spaces and cuts a longer word anywhere ("Memory-seman|tic"); given lines that fit, it
     keeps them. A single piece wider than maxW stays whole on its own line. */
  var ruler = null;
  var CJK = /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/;
  function pieces(line) {
    var out = [], cur = "";
    for (var i = 0; i < line.length; i++) {
      var c = line[i], p = i ? line[i - 1] : "";
      var cut = cur && ((/[a-z]/.test(p) && /[A-Z]/.test(c)) || CJK.test(c) || CJK.test(p));
      if (cut) { out.push(cur); cur = ""; }
      cur += c;
      if (/[\s_\-\/]/.test(c)) { out.push(cur); cur = ""; }
    }
    if (cur) out.push(cur);
    return out;
  }
  function wrapName(text, maxW, font) {
    ruler = ruler || document.createElement("canvas").getContext("2d");
    ruler.font = font;
    var fits = function (t) { return ruler.measureText(t.replace(/\s+$/, "")).width <= maxW; };
    return String(text).split("\n").map(function (line) {
      if (fits(line)) return line;
      var lines = [], cur = "";
      pieces(line).forEach(function (pc) {
        if (!cur || fits(cur + pc)) cur += pc;
        else { lines.push(cur.replace(/\s+$/, "")); cur = pc; }
      });
      if (cur) lines.push(cur.replace(/\s+$/, ""));
      return lines.join("\n");
    }).join("\n");
  }
  return { data: data, el: el, add: add, wrapName: wrapName, link: link, safeHref: safeHref, bi: bi, tr: tr, md: md,
           section: section, normalize: normalize, hashParams: hashParams,
           evidenceList: evidenceList, useSources: useSources, sourceHref: sourceHref, clear: clear, route: route, curvePoints: curvePoints,
           crossings: crossings, overlaps: overlaps, outside: outside, chain: chain };
})();

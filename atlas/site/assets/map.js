/* The relation explorer (explorer.html): a focus and its neighbours, never the whole atlas.

   Only the visible concepts are in the drawing. x: lanes, one per exact set of questions a
   concept answers (from Python, in question order); inside a lane concepts go down in order of
   first visible date. Every edge is routed (AtlasUI.route) so it does not pass through a box
   other than its ends. The view fits the visible set but never goes below a scale at which
   node labels are 12 CSS px. */
(function () {
  var U = AtlasUI, el = U.el, add = U.add;
  var D = U.data();
  U.useSources(D.sources);
  var N = D.concepts.length;
  var byId = {}, ix = {};
  D.concepts.forEach(function (c, i) { byId[c.id] = c; ix[c.id] = i; });
  var rec = {};
  D.nodes.forEach(function (n) { rec[n.id] = n; });
  var qById = {};
  D.questions.forEach(function (q) { qById[q.id] = q; });
  var kindById = {};
  D.kinds.forEach(function (k) { kindById[k.id] = k; });
  var FONT = D.options.nodes.font.size, MIN_SCALE = D.meta.minFont / FONT, MAX_SCALE = 1.5;
  var BOX_W = D.meta.nodeW + 2 * D.options.nodes.margin;  /* updated to the widest drawn box */
  var COL_GAP = 26, ROW_GAP = 28, LANE_GAP = 10;

  /* adjacency: i -> [[j, rel index]] both ways */
  var adj = new Array(N);
  for (var a0 = 0; a0 < N; a0++) adj[a0] = [];
  D.rels.forEach(function (r, k) { adj[r[0]].push([r[1], k]); adj[r[1]].push([r[0], k]); });
  var claimById = {};
  D.claims.forEach(function (k) { claimById[k.id] = k; });
  /* a card's relations, read from its side: those it is the source of, and those it is the target of */
  function related(c, direction) {
    var out = [];
    c.relations.forEach(function (g) {
      g.concepts.forEach(function (x) {
        if (x.direction === direction) out.push({ type: g.type, name: g.relation, id: x.id, note: x.note || EMPTY, evidence: x.evidence });
      });
    });
    return out;
  }
  function repoIds(c) { return c.repositories.map(function (r) { return r.id; }); }

  var nodes = new vis.DataSet([]);
  var edges = new vis.DataSet([]);
  var container = document.getElementById("network");
  var network = new vis.Network(container, { nodes: nodes, edges: edges }, D.options);

  var state = { asOf: D.meta.asOf || D.meta.cutoff, hide: false, kinds: {}, question: "",
                repo: "", lifecycle: "", selected: null, shown: {}, expanded: {},
                hidden: {}, pinned: {}, trail: [], origin: null, path: null };
  var V = D.vocab, EMPTY = { en: "", zh: "" };
  function lang() { return AtlasLang.current(); }
  function vname(vocab, value) { return (V[vocab] && V[vocab][value]) || { en: value, zh: value }; }
  function term(vocab, value, cls) { var t = vname(vocab, value); return U.tr(t.en, t.zh, "span", cls); }
  D.kinds.forEach(function (k) { state.kinds[k.id] = true; });
  var drawn = [], lanesDrawn = [], rerouted = [], lastFit = null;

  function visibleAt(c) { return !D.days[c.id] || D.days[c.id] <= state.asOf; }
  function passes(c) {
    if (c.id === state.selected) return true;
    if (c.kind in state.kinds && !state.kinds[c.kind]) return false;
    if (state.question === "_none") { if (Object.keys(c.answers).length) return false; }
    else if (state.question && !c.answers[state.question]) return false;
    if (state.repo && repoIds(c).indexOf(state.repo) < 0) return false;
    if (state.lifecycle && c.lifecycle.status !== state.lifecycle) return false;
    if (state.hide && !visibleAt(c)) return false;
    return true;
  }
  /* a concept's name in one language ("en" or "zh"; the English name when it has no Chinese one) */
  function nameIn(id, l) {
    var c = byId[id];
    if (!c) return id;
    return l === "zh" ? (c.names.zh || c.names.en || c.id) : (c.names.en || c.id);
  }
  /* in the chosen language: both names when both are shown (tooltips, edge titles) */
  function nameOf(id) {
    var c = byId[id], l = lang();
    if (!c) return id;
    if (l !== "both") return nameIn(id, l);
    return (c.names.en || c.id) + (c.names.zh && c.names.zh !== c.names.en ? " / " + c.names.zh : "");
  }
  /* the short names (without a parenthesised expansion), for the trail */
  function shortSpans(id) {
    var c = byId[id], cut = function (t) { return String(t || "").replace(/\s*[(\uff08][\s\S]*$/, "") || t; };
    if (!c) return el("code", null, id);
    var en = cut(c.names.en || c.id), zh = cut(c.names.zh);
    return U.bi({ en: en, zh: zh && zh !== en ? zh : "" }, "span", "nm");
  }
  function nameSpans(id) {
    var c = byId[id];
    return c ? U.bi({ en: c.names.en || c.id, zh: c.names.zh && c.names.zh !== c.names.en ? c.names.zh : "" }, "span", "nm")
             : el("code", null, id);
  }
  function dateOf(id) { return D.days[id] || "9999"; }

  /* ---- layout of the visible set ----
     Lanes left to right; inside a lane, concepts go down by first visible date. A lane with
     many concepts wraps into several columns; the number of boxes per column is the one that
     lets the whole set fit the canvas at the largest scale. Heights are the measured boxes. */
  function layout(ids, cw, ch, hOf, g) {
    var COL_W = BOX_W + COL_GAP * g, RG = ROW_GAP * g, LG = LANE_GAP * g;
    var byLane = {};
    ids.forEach(function (id) { (byLane[rec[id].lane] = byLane[rec[id].lane] || []).push(id); });
    var laneIx = Object.keys(byLane).map(Number).sort(function (a, b) { return a - b; });
    laneIx.forEach(function (l) {
      byLane[l].sort(function (a, b) {
        var da = dateOf(a), db = dateOf(b);
        return da < db ? -1 : da > db ? 1 : (a < b ? -1 : a > b ? 1 : 0);
      });
    });
    function columns(rows) {
      var out = [];
      laneIx.forEach(function (l) {
        var list = byLane[l], nc = Math.ceil(list.length / rows);
        for (var k = 0; k < nc; k++) out.push({ lane: l, ids: list.slice(k * rows, (k + 1) * rows) });
      });
      return out;
    }
    function colHeight(col) {
      return col.ids.reduce(function (s, id) { return s + hOf[id] + RG; }, -RG);
    }
    var best = null;
    var maxLane = Math.max.apply(null, laneIx.map(function (l) { return byLane[l].length; }));
    for (var rows = 1; rows <= maxLane; rows++) {
      var cols = columns(rows);
      var w = cols.length * COL_W + (laneIx.length - 1) * LG;
      var h = Math.max.apply(null, cols.map(colHeight)) + 2 * RG;
      var s = Math.min(cw / w, ch / h);
      if (!best || s > best.s + 1e-9) best = { rows: rows, s: s, h: h };
    }
    var pos = {}, lanesOut = [], x = 0, lastLane = null, cur = null, colsOut = [];
    columns(best.rows).forEach(function (col) {
      colsOut.push({ ids: col.ids, h: colHeight(col) });
      if (col.lane !== lastLane) {
        if (cur) { cur.x1 = x; lanesOut.push(cur); x += LG; }
        cur = { lane: col.lane, x0: x };
        lastLane = col.lane;
      }
      var y = -colHeight(col) / 2;
      col.ids.forEach(function (id) {
        pos[id] = { x: x + COL_W / 2, y: y + hOf[id] / 2 };
        y += hOf[id] + RG;
      });
      x += COL_W;
    });
    if (cur) { cur.x1 = x; lanesOut.push(cur); }
    return { pos: pos, lanes: lanesOut, w: x, h: best.h, cols: colsOut, g: g };
  }

  /* A short column may slide up or down inside the drawing's height; keep the slide that lets
     the most edges through (greedy, column by column, ties keep the column centred). */
  function slide(L, ers, boxes, rt, hOf) {
    var byId2 = {};
    boxes.forEach(function (b) { byId2[b.id] = b; });
    L.cols.forEach(function (col) {
      if (!rt.failed.length) return;
      var room = (L.h - 2 * ROW_GAP - col.h) / 2;
      if (room < 20) return;
      var steps = [0], n = 4;
      for (var k = 1; k <= n; k++) { steps.push(room * k / n); steps.push(-room * k / n); }
      var bestDy = 0, bestRt = rt;
      steps.forEach(function (dy) {
        if (!dy) return;
        col.ids.forEach(function (id) { L.pos[id].y += dy; byId2[id].top += dy; byId2[id].bottom += dy; });
        var r = U.route(ers, L.pos, boxes, 6);
        if (r.failed.length < bestRt.failed.length) { bestRt = r; bestDy = dy; }
        col.ids.forEach(function (id) { L.pos[id].y -= dy; byId2[id].top -= dy; byId2[id].bottom -= dy; });
      });
      if (bestDy) col.ids.forEach(function (id) { L.pos[id].y += bestDy; byId2[id].top += bestDy; byId2[id].bottom += bestDy; });
      rt = bestRt;
    });
    return rt;
  }

  /* ---- drawing ---- */
  var GREY = { background: "#edf2f7", border: "#718096",
               highlight: { background: "#fefcbf", border: "#1a202c" },
               hover: { background: "#edf2f7", border: "#1a202c" } };
  function visibleIds() {
    return Object.keys(state.shown).filter(function (id) {
      var onPath = state.path && state.path.ids.indexOf(id) >= 0;
      return byId[id] && (!state.hidden[id] || id === state.selected || onPath) && (state.pinned[id] || onPath || passes(byId[id]));
    }).sort();
  }
  /* The relations drawn: those of the expanded concepts (the ones whose neighbours were asked
     for); with none expanded (the seed view), those among the shown concepts. */
  function edgeRecords(ids) {
    var on = {};
    ids.forEach(function (id) { on[ix[id]] = true; });
    var from = ids.filter(function (id) { return state.expanded[id]; });
    if (!from.length) from = ids;
    var out = [], seen = {}, onPath = null;
    if (state.path) {
      onPath = {};
      state.path.rels.forEach(function (k) { onPath[k] = true; });
      from = ids;
    }
    from.forEach(function (id) {
      adj[ix[id]].forEach(function (p) {
        if (!on[p[0]] || seen[p[1]] || (onPath && !onPath[p[1]])) return;
        seen[p[1]] = true;
        var r = D.rels[p[1]], t = D.relTypes[r[2]];
        out.push({ id: "r" + p[1], from: D.concepts[r[0]].id, to: D.concepts[r[1]].id, type: t.type,
                   color: { color: t.color, highlight: t.color, hover: t.color, inherit: false },
                   arrows: t.symmetric ? "to, from" : "to", dashes: t.symmetric ? [6, 4] : false });
      });
    });
    out.sort(function (a, b) { return a.id < b.id ? -1 : a.id > b.id ? 1 : 0; });
    return out;
  }
  function nodeRecord(id, p) {
    var r = rec[id], c = byId[id];
    /* measured bold (the selected box's label is bold), so a line never outgrows its box */
    var n = { id: id, label: U.wrapName(r.labels[lang()] || r.label, D.meta.nodeW - 2, "bold " + FONT + "px " + D.options.nodes.font.face),
              title: r.title, group: r.group, x: p.x, y: p.y };
    if (r.color) n.color = r.color;
    if (r.shapeProperties) n.shapeProperties = r.shapeProperties;
    if (!visibleAt(c)) { n.color = GREY; n.font = { color: "#2d3748" }; n.title = r.title + "\nnot yet visible on " + state.asOf; }
    if (state.expanded[id]) n.borderWidth = 3;
    if (state.pinned[id]) { n.shapeProperties = { borderDashes: [2, 2] }; n.borderWidth = 3; }
    return n;
  }
  function draw(refit) {
    var ids = visibleIds();
    status(ids);  /* the status line can change the header's height: before measuring the canvas */
    var w = container.clientWidth || 800, h = container.clientHeight || 600;
    laidFor = w + "x" + h;
    nodes.clear(); edges.clear();
    nodes.add(ids.map(function (id) { return nodeRecord(id, { x: 0, y: 0 }); }));
    network.redraw();
    var hOf = {};
    BOX_W = D.meta.nodeW + 2 * D.options.nodes.margin;
    ids.forEach(function (id) {
      var b = network.getBoundingBox(id);
      hOf[id] = b.bottom - b.top + 4;  /* + the selected border */
      BOX_W = Math.max(BOX_W, b.right - b.left + 4);
    });
    var ers = edgeRecords(ids);
    /* more room between boxes until every edge finds a clear path, while labels stay >= 12 px */
    var L = null, rt = null;
    function attempt(g) {
      var L2 = layout(ids, w, h, hOf, g);
      var boxes = ids.map(function (id) {
        var p = L2.pos[id];
        return { id: id, left: p.x - BOX_W / 2, right: p.x + BOX_W / 2, top: p.y - hOf[id] / 2, bottom: p.y + hOf[id] / 2 };
      });
      var rt2 = U.route(ers, L2.pos, boxes, 6);
      if (rt2.failed.length) rt2 = slide(L2, ers, boxes, rt2, hOf);
      /* the detour corridors above and below the boxes count in the height */
      var extra = rt2.failed.length ? 2 * 18 + 4 * rt2.failed.length : 0;
      return { L: L2, rt: rt2, fits: Math.min((w - 24) / L2.w, (h - 24) / (L2.h + extra)) >= MIN_SCALE };
    }
    /* gaps: narrower until the set fits at the 12 px scale; when it fits, wider while that lets
       more edges through without a detour */
    var best = attempt(1);
    if (!best.fits) {
      [0.7, 0.5, 0.35, 0.25].some(function (g) { best = attempt(g); return best.fits; });
    } else if (best.rt.failed.length) {
      [1.6, 2.3].some(function (g) {
        var t = attempt(g);
        if (!t.fits) return true;
        if (t.rt.failed.length < best.rt.failed.length) best = t;
        return !best.rt.failed.length;
      });
    }
    L = best.L; rt = best.rt;
    lanesDrawn = L.lanes;
    nodes.update(ids.map(function (id) { return { id: id, x: L.pos[id].x, y: L.pos[id].y }; }));
    network.redraw();
    /* an edge no curve gets through goes around: out of its box sideways into the gap next to
       its column, along that gap (no box stands in a gap) to a corridor above (or below) every
       box, and down (or up) the gap next to the other end. */
    var top = Infinity, bottom = -Infinity, failed = {};
    ids.forEach(function (id) {
      top = Math.min(top, L.pos[id].y - hOf[id] / 2); bottom = Math.max(bottom, L.pos[id].y + hOf[id] / 2);
    });
    rt.failed.forEach(function (id) { failed[id] = true; });
    var side = BOX_W / 2 + COL_GAP * L.g / 2, waypoints = [], out = [], track = 0, tracks = { up: 0, down: 0 };
    var detourLabelled = {};
    var step = Math.max(0, Math.min(4, (COL_GAP * L.g / 2 - 4) / 2));
    ers.forEach(function (e) {
      e.smooth = rt.smooth[e.id] || false;
      if ((state.selected && (e.from === state.selected || e.to === state.selected)) || state.path) e.label = vname("relation", e.type)[lang() === "zh" ? "zh" : "en"];
      /* detours share the gaps: a bundle carries its relation once */
      if (e.label && failed[e.id]) { if (detourLabelled[e.type]) delete e.label; else detourLabelled[e.type] = true; }
      e.title = nameOf(e.from) + " \u2192 " + e.type + " \u2192 " + nameOf(e.to);
      e.rel = e.id;
      if (!failed[e.id]) { out.push(e); return; }
      var a = L.pos[e.from], b = L.pos[e.to], off = ((track % 5) - 2) * step, pts;
      var ca = a.x + (b.x >= a.x ? side : -side) + off, cb = b.x + (b.x > a.x ? -side : side) + off;
      if (Math.abs(a.x - b.x) < 1) {
        pts = [{ x: ca, y: a.y }, { x: ca, y: b.y }];
      } else {
        var up = (a.y - top) + (b.y - top) <= (bottom - a.y) + (bottom - b.y);
        /* one corridor above and one below, each with its own tracks 4 px apart */
        var cy = up ? top - 18 - 4 * tracks.up++ : bottom + 18 + 4 * tracks.down++;
        pts = [{ x: ca, y: a.y }, { x: ca, y: cy }, { x: cb, y: cy }, { x: cb, y: b.y }];
      }
      track++;
      var c = U.chain(e, pts);
      waypoints = waypoints.concat(c.nodes);
      out = out.concat(c.edges);
    });
    rerouted = rt.failed.slice();
    if (waypoints.length) nodes.add(waypoints);
    ers = out;
    labelled = ers.filter(function (e) { return e.label; }).map(function (e) { return { id: e.id, label: e.label }; });
    edges.add(ers);
    drawn = ids;
    if (state.selected && byId[state.selected] && L.pos[state.selected]) network.selectNodes([state.selected]);
    else network.unselectAll();
    status(ids);  /* first: the status line can change the header's height and so the canvas */
    renderShownList(ids);
    renderLegend(ers);
    network.setSize("100%", "100%");
    if (refit !== false) fit(); else placeLabels();
    renderLaneTitles();
  }
  /* Fit the drawn boxes with a 12 px margin (vis-network's own fit leaves 10 % on each axis);
     never above MAX_SCALE nor below MIN_SCALE (then centred on the selection). */
  function fit() {
    if (!drawn.length) return;
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    nodes.get().forEach(function (n) {
      var b = n.waypoint ? { left: n.x, right: n.x, top: n.y, bottom: n.y } : network.getBoundingBox(n.id);
      x0 = Math.min(x0, b.left); x1 = Math.max(x1, b.right);
      y0 = Math.min(y0, b.top); y1 = Math.max(y1, b.bottom);
    });
    var cw = container.clientWidth - 24, ch = container.clientHeight - 24;
    var s = Math.min(cw / Math.max(1, x1 - x0), ch / Math.max(1, y1 - y0), MAX_SCALE);
    var at = { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
    if (s < MIN_SCALE) {
      s = MIN_SCALE;
      var keep = [state.selected, state.origin].filter(function (id, i, a) {
        return id && drawn.indexOf(id) >= 0 && a.indexOf(id) === i;
      });
      if (keep.length) {
        var ps = network.getPositions(keep), kx = keep.map(function (k) { return ps[k].x; }), ky = keep.map(function (k) { return ps[k].y; });
        at = { x: (Math.min.apply(null, kx) + Math.max.apply(null, kx)) / 2, y: (Math.min.apply(null, ky) + Math.max.apply(null, ky)) / 2 };
      }
    }
    network.moveTo({ position: at, scale: s, animation: false });
    lastFit = s;
    placeLabels();
  }

  /* ---- edge labels: only those that fit ----
     The selected concept's relations want a label (the relation type, drawn level at the
     middle of the edge). A label is shown only when its box, in order of the relations, clears
     every box (its own ends too: a short arrow between near boxes carries none), every label
     already shown, and stays inside the canvas at the view the page set. The relation stays
     readable in the edge's tooltip and in the card. */
  var measure = document.createElement("canvas").getContext("2d");
  var EFONT = D.options.edges.font;
  function labelBox(eid, text) {
    var e = network.body.edges[eid];
    if (!e || !e.edgeType) return null;
    var c = e.edgeType.getPoint(0.5);
    measure.font = EFONT.size + "px " + EFONT.face;
    var w = measure.measureText(text).width + EFONT.strokeWidth + 4, h = EFONT.size + EFONT.strokeWidth + 2;
    return { left: c.x - w / 2, right: c.x + w / 2, top: c.y - h / 2, bottom: c.y + h / 2 };
  }
  function meets(a, b) { return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom; }
  function placeLabels() {
    if (!labelled.length) return;
    var small = EFONT.size * network.getScale() < D.meta.minFont - 1e-6;  /* never under 12 px: not drawn */
    var boxes = drawn.map(function (id) { return network.getBoundingBox(id); });
    var cw = container.clientWidth, ch = container.clientHeight, kept = [], upd = [];
    labelled.forEach(function (l) {
      var b = labelBox(l.id, l.label), ok = !!b;
      if (ok) {
        var tl = network.canvasToDOM({ x: b.left, y: b.top }), br = network.canvasToDOM({ x: b.right, y: b.bottom });
        ok = !small && tl.x >= 0 && tl.y >= 0 && br.x <= cw && br.y <= ch &&
          !boxes.some(function (x) { return meets(b, x); }) && !kept.some(function (x) { return meets(b, x); });
      }
      if (ok) kept.push(b);
      var cur = edges.get(l.id);
      if (!cur || !!cur.label === ok) return;
      /* vis-network keeps a label an update leaves out: the edge is replaced without it */
      if (ok) cur.label = l.label; else delete cur.label;
      upd.push(cur);
    });
    if (upd.length) {
      edges.remove(upd.map(function (e) { return e.id; }));
      edges.add(upd);
    }
  }

  /* ---- lane titles: HTML above the canvas, following pan and zoom ---- */
  var laneBox = document.getElementById("lanes");
  function renderLaneTitles() {
    U.clear(laneBox);
    lanesDrawn.forEach(function (ld) {
      var ln = D.lanes[ld.lane];
      var t = el("div", "lane");
      t.dataset.lane = ln.key;
      var top = el("span", "lane-name");
      if (ln.key) {  /* the question's id (an identifier), then the question in the chosen language */
        var id = el("b", "lane-id", ln.key);
        id.setAttribute("translate", "no");
        add(top, id);
      } else add(top, U.tr(ln.names.en, ln.names.zh, "b"));
      add(t, top, U.tr(ln.question.en || "papers, flags, plain concepts", ln.question.zh || "论文、开关与一般概念", "span", "lane-q"));
      t.title = ln.key ? ln.question.en + " / " + ln.question.zh + " (first question answered; a mark + names the others)"
                       : "answers none of the six questions / 不回答六问";
      add(laneBox, t);
    });
    placeLaneTitles();
  }
  function placeLaneTitles() {
    var kids = laneBox.children;
    var w = laneBox.clientWidth;
    for (var i = 0; i < kids.length && i < lanesDrawn.length; i++) {
      var ld = lanesDrawn[i];
      var a = network.canvasToDOM({ x: ld.x0, y: 0 }), b = network.canvasToDOM({ x: ld.x1, y: 0 });
      var left = Math.max(0, a.x), right = Math.min(w, b.x);
      var t = kids[i];
      t.hidden = right - left < 24;
      t.style.left = left + "px";
      t.style.width = Math.max(0, right - left - 4) + "px";
    }
  }
  network.on("afterDrawing", placeLaneTitles);
  /* vis rescales the view when the canvas changes size (the header wraps, fonts load): fit again */
  var refitTimer = null, laidFor = "", labelled = [];
  network.on("resize", function () {
    clearTimeout(refitTimer);
    /* a canvas of another size than the layout was made for: lay out again (the columns per
       lane depend on it), else fit again */
    refitTimer = setTimeout(function () {
      var now = container.clientWidth + "x" + container.clientHeight;
      if (drawn.length && now !== laidFor) draw(true);
      else fit();
      placeLaneTitles();
    }, 50);
  });

  /* ---- hover: the node's own edges stay, the others fade ---- */
  network.on("hoverNode", function (p) {
    var keep = {};
    if (!byId[p.node]) return;
    edges.get().forEach(function (e) {
      var r = D.rels[+e.rel.slice(1)];
      if (r && (D.concepts[r[0]].id === p.node || D.concepts[r[1]].id === p.node)) keep[e.id] = true;
    });
    edges.update(edges.get().map(function (e) {
      var c = edges.get(e.id).color;
      return { id: e.id, color: { color: c.highlight, highlight: c.highlight, hover: c.highlight,
                                  opacity: keep[e.id] ? 1 : 0.15, inherit: false },
               width: keep[e.id] ? 3 : 1.5 };
    }));
  });
  network.on("blurNode", function () {
    edges.update(edges.get().map(function (e) {
      var c = e.color;
      return { id: e.id, color: { color: c.highlight, highlight: c.highlight, hover: c.highlight,
                                  opacity: 1, inherit: false }, width: 1.5 };
    }));
  });

  /* ---- focus, expand, select ---- */
  function neighbours(id) {
    return adj[ix[id]].map(function (p) { return D.concepts[p[0]].id; });
  }
  /* ---- focus, expand, path: every one is a history entry ----
     The state of the drawing (shown, expanded, selected, hidden, pinned, path, the trail of
     steps taken) is kept in history.state; the URL fragment names the selected concept, so a
     link or a reload opens its neighbourhood. Back and Forward restore the drawing as it was. */
  function pinnedIds() { return Object.keys(state.pinned).filter(function (id) { return byId[id]; }); }
  function focusOn(ids, selected, how) {
    state.shown = {}; state.expanded = {}; state.path = null; state.origin = null;
    ids.forEach(function (id) { if (byId[id]) state.shown[id] = true; });
    pinnedIds().forEach(function (id) { state.shown[id] = true; });
    if (selected && byId[selected]) {
      state.shown[selected] = true;
      state.expanded[selected] = true;
      neighbours(selected).forEach(function (n) { state.shown[n] = true; });
    }
    state.selected = selected && byId[selected] ? selected : null;
    step(how || "focus", state.selected);
  }
  /* Expanding keeps where one came from in view: the neighbours join the drawing; when the whole
     does not fit at the 12 px scale, the earlier concepts that are neither on the trail, nor
     pinned, nor next to the expanded one leave it, and the view fits the rest. */
  function expand(id) {
    if (!byId[id]) return false;
    var origin = state.selected || (state.trail.length ? state.trail[state.trail.length - 1].id : null);
    state.origin = origin && origin !== id ? origin : null;
    state.selected = id;
    state.path = null;
    state.shown[id] = true;
    state.expanded[id] = true;
    var near = {};
    neighbours(id).forEach(function (n) { state.shown[n] = true; near[n] = true; });
    function prune() {
      var keep = {}, gone = 0;
      state.trail.forEach(function (t) { if (t.id) keep[t.id] = true; });
      pinnedIds().forEach(function (p) { keep[p] = true; });
      keep[id] = true;
      if (state.origin) keep[state.origin] = true;
      Object.keys(state.shown).forEach(function (k) { if (!keep[k] && !near[k]) { delete state.shown[k]; gone++; } });
      Object.keys(state.expanded).forEach(function (k) { if (!keep[k]) delete state.expanded[k]; });
      return gone;
    }
    if (!fitsAt(visibleIds())) prune();
    step("expand", id);
    /* the layout's estimate was kind: what is drawn does not all fit, so the rest leaves now */
    if (!drawn.every(inViewOf) && prune()) { render(); amend(); }
    return true;
  }
  function inViewOf(nid) {
    var b = network.getBoundingBox(nid);
    if (!b) return false;
    var tl = network.canvasToDOM({ x: b.left, y: b.top }), br = network.canvasToDOM({ x: b.right, y: b.bottom });
    return tl.x >= -1 && tl.y >= -1 && br.x <= container.clientWidth + 1 && br.y <= container.clientHeight + 1;
  }
  /* whether a set of concepts fits the canvas with labels at 12 px (the layout's own test) */
  function fitsAt(ids) {
    var w = container.clientWidth || 800, h = container.clientHeight || 600, hOf = {};
    ids.forEach(function (i) { hOf[i] = 48; });
    var L = layout(ids, w, h, hOf, 0.25);
    return Math.min((w - 24) / L.w, (h - 24) / L.h) >= MIN_SCALE;
  }
  /* the shortest chain of relations between two concepts, either direction (as `atlas path`) */
  function shortestPath(a, b) {
    if (!byId[a] || !byId[b]) return null;
    var prev = {}, seen = {}, queue = [ix[a]];
    seen[ix[a]] = true;
    while (queue.length) {
      var i = queue.shift();
      if (i === ix[b]) break;
      adj[i].slice().sort(function (x, y) { return x[0] - y[0]; }).forEach(function (p) {
        if (seen[p[0]]) return;
        seen[p[0]] = true; prev[p[0]] = [i, p[1]]; queue.push(p[0]);
      });
    }
    if (!seen[ix[b]]) return null;
    var ids = [b], rels = [], at = ix[b];
    while (at !== ix[a]) { rels.unshift(prev[at][1]); at = prev[at][0]; ids.unshift(D.concepts[at].id); }
    return { ids: ids, rels: rels };
  }
  function showPath(a, b) {
    var p = shortestPath(a, b);
    if (!p) return false;
    state.shown = {}; state.expanded = {}; state.origin = a;
    p.ids.forEach(function (id) { state.shown[id] = true; });
    pinnedIds().forEach(function (id) { state.shown[id] = true; });
    state.path = { from: a, to: b, ids: p.ids, rels: p.rels };
    state.selected = b;
    step("path", b, a);
    return true;
  }
  function snapshot() {
    return { shown: Object.keys(state.shown), expanded: Object.keys(state.expanded), selected: state.selected,
             hidden: Object.keys(state.hidden), pinned: Object.keys(state.pinned), path: state.path,
             origin: state.origin, trail: state.trail.slice() };
  }
  function restore(snap) {
    function set(list) { var o = {}; (list || []).forEach(function (k) { if (byId[k]) o[k] = true; }); return o; }
    state.shown = set(snap.shown); state.expanded = set(snap.expanded); state.hidden = set(snap.hidden);
    state.pinned = set(snap.pinned); state.selected = byId[snap.selected] ? snap.selected : null;
    state.path = snap.path || null; state.origin = snap.origin || null; state.trail = snap.trail || [];
    render();
  }
  function hashFor(id) { return id ? "#concept=" + encodeURIComponent(id) : "#seed"; }
  /* a new step: drawn, added to the trail and pushed as a history entry */
  function step(how, id, from) {
    state.trail = state.trail.concat([{ how: how, id: id || null, from: from || null }]).slice(-12);
    render();
    history.pushState(snapshot(), "", hashFor(state.selected));
  }
  function render() {
    /* the trail and the lists first: they change the header's height, which the layout measures */
    renderTrail();
    renderNeighbourhood();
    draw(true);
    if (state.selected) renderCard(state.selected); else renderAbout();
  }
  /* the current entry changed without a new step (hide, pin, a filter): replaced */
  function amend() { history.replaceState(snapshot(), "", hashFor(state.selected)); }
  window.addEventListener("popstate", function (e) {
    if (e.state && e.state.trail) { restore(e.state); return; }
    /* a link to #concept=<id> inside the page (a card link): a new focus in this entry */
    var h = U.hashParams();
    var inCard = document.getElementById("card").contains(document.activeElement) || cardLinkFollowed;
    if (h.concept && byId[h.concept]) {
      state.trail = state.trail.concat([{ how: "focus", id: h.concept }]).slice(-12);
      focusState([], h.concept); render(); amend();
      if (inCard) { cardLinkFollowed = false; focusCardHeading(); }
    }
  });
  function focusState(ids, selected) {
    state.shown = {}; state.expanded = {}; state.path = null; state.origin = null;
    ids.forEach(function (id) { if (byId[id]) state.shown[id] = true; });
    pinnedIds().forEach(function (id) { state.shown[id] = true; });
    if (selected) {
      state.shown[selected] = true; state.expanded[selected] = true;
      neighbours(selected).forEach(function (n) { state.shown[n] = true; });
    }
    state.selected = selected || null;
  }
  function hideNode(id) {
    if (!byId[id]) return false;
    state.hidden[id] = true; delete state.pinned[id];
    if (state.selected === id) { state.selected = null; }
    render(); amend();
    return true;
  }
  function pinNode(id, on) {
    if (!byId[id]) return false;
    if (on === undefined) on = !state.pinned[id];
    if (on) { state.pinned[id] = true; state.shown[id] = true; delete state.hidden[id]; }
    else delete state.pinned[id];
    render(); amend();
    return true;
  }
  function unhideAll() { state.hidden = {}; render(); amend(); }
  network.on("click", function (p) {
    if (p.nodes && p.nodes.length && byId[p.nodes[0]]) expand(p.nodes[0]);
  });

  /* ---- the trail: one crumb per step; a crumb goes back (or forward) to it ---- */
  var crumbs = document.getElementById("crumbs");
  function renderTrail() {
    U.clear(crumbs);
    var n = state.trail.length;
    state.trail.forEach(function (t, i) {
      var li = el("li"), b = el("button", "crumb");
      b.type = "button";
      if (t.how === "seed" || !t.id) add(b, U.tr("seed's six terms", "六个起点"));
      else if (t.how === "path") add(b, shortSpans(t.from), el("span", null, " \u2192 "), shortSpans(t.id));
      else add(b, shortSpans(t.id));
      if (t.how === "expand") b.classList.add("expand");
      if (i === n - 1) b.setAttribute("aria-current", "step");
      b.addEventListener("click", function () { if (i < n - 1) history.go(i - (n - 1)); });
      add(crumbs, add(li, b));
    });
  }

  /* ---- the neighbourhood as lists (phones): relation -> concepts; the graph one tap away ---- */
  var neigh = document.getElementById("neigh"), neighList = document.getElementById("neigh-list");
  var graphBox = document.getElementById("graph"), phone = window.matchMedia("(max-width: 760px)");
  var graphOpen = false;
  function listMode() { return phone.matches && !graphOpen; }
  function renderNeighbourhood() {
    neigh.hidden = !listMode();
    graphBox.classList.toggle("folded", listMode());
    if (!listMode()) return;
    U.clear(neighList);
    var c = state.selected && byId[state.selected];
    if (!c) {
      var ul0 = el("ul", "neigh-items");
      D.meta.focus.forEach(function (id) { add(ul0, add(el("li"), conceptButton(id))); });
      add(neighList, add(el("div", "neigh-group"), add(el("h3"), U.tr("The seed's six terms", "六个起点")), ul0));
      return;
    }
    c.relations.forEach(function (g) {
      var box = el("div", "neigh-group"), h = el("h3");
      add(h, term("relation", g.relation), el("span", "count", " " + g.concepts.length));
      var ul = el("ul", "neigh-items");
      g.concepts.forEach(function (x) { add(ul, add(el("li"), byId[x.id] ? conceptButton(x.id) : el("code", null, x.id))); });
      add(neighList, add(box, h, ul));
    });
    if (!c.relations.length) add(neighList, U.tr("No relations.", "没有关系。", "p", "muted"));
  }
  function conceptButton(id) {
    var b = el("button", "neigh-item"), c = byId[id];
    b.type = "button"; b.dataset.id = id;
    add(b, U.bi({ en: rec[id].labels.en.split("\n")[0], zh: (c.names.zh ? rec[id].labels.zh.split("\n")[0] : "") }, "span", "nm"),
        term("kind", c.kind, "tag"));
    b.addEventListener("click", function () { expand(id); window.scrollTo(0, 0); });
    return b;
  }
  document.getElementById("show-graph").addEventListener("click", function () {
    graphOpen = true; renderNeighbourhood(); draw(true);
    document.getElementById("network").focus({ preventScroll: true });  /* the navigation stays in view */
  });
  phone.addEventListener("change", function () { renderNeighbourhood(); draw(true); });

  /* ---- the shown list: a keyboard route to every drawn node ---- */
  var shownList = document.getElementById("shown-list");
  function renderShownList(ids) {
    U.clear(shownList);
    ids.forEach(function (id) {
      var li = el("li");
      var b = add(el("button", "shown-item"), nameSpans(id));
      b.type = "button";
      b.dataset.id = id;
      if (id === state.selected) b.setAttribute("aria-current", "true");
      b.addEventListener("click", function () { expand(id); focusCardHeading(); });
      add(li, b, term("kind", byId[id].kind, "tag"));
      if (state.pinned[id]) add(li, U.tr("pinned", "已固定", "span", "tag pin-tag"));
      add(shownList, li);
    });
  }
  function status(ids) {
    var grey = ids.filter(function (id) { return !visibleAt(byId[id]); }).length;
    var hid = Object.keys(state.hidden).length, box = U.clear(document.getElementById("status"));
    var sel = state.selected ? nameIn(state.selected, "en") : "", selz = state.selected ? nameIn(state.selected, "zh") : "";
    var en = ids.length + " of " + N + " concepts shown" +
      (state.path ? ", the path from " + nameIn(state.path.from, "en") + " to " + sel + " (" + state.path.rels.length + " steps)"
                  : sel ? ", around " + sel : ", the seed's six terms") +
      (grey ? "; " + grey + " greyed (first visible after " + state.asOf + ")" : "") + (hid ? "; " + hid + " hidden" : "") + ".";
    var zh = "显示 " + N + " 个概念中的 " + ids.length + " 个" +
      (state.path ? "，" + nameIn(state.path.from, "zh") + " 到 " + selz + " 的路径（" + state.path.rels.length + " 步）"
                  : selz ? "，围绕 " + selz : "，六个起点") +
      (grey ? "；" + grey + " 个为灰色（" + state.asOf + " 之后才可见）" : "") + (hid ? "；隐藏 " + hid + " 个" : "") + "。";
    add(box, U.tr(en, zh));
    if (hid) {
      var b = el("button", "unhide");
      b.type = "button";
      add(b, U.tr("show hidden", "显示隐藏的"));
      b.addEventListener("click", unhideAll);
      add(box, el("span", null, " "), b);
    }
  }
  var legend = document.getElementById("rel-legend");
  function renderLegend(ers) {
    U.clear(legend);
    var seen = {};
    ers.forEach(function (e) {
      if (seen[e.type]) return;
      seen[e.type] = true;
      var li = el("li"), sw = el("span", "rel-swatch");
      sw.style.borderTopColor = e.color.color;
      sw.style.borderTopStyle = e.dashes ? "dashed" : "solid";
      add(legend, add(li, sw, term("relation", e.type)));
    });
    legend.hidden = !Object.keys(seen).length;
  }

  /* ---- the card ---- */
  var cardLinkFollowed = false;
  function focusCardHeading() {
    var h = document.querySelector("#card h2");
    if (h) { h.tabIndex = -1; h.focus({ preventScroll: false }); }
  }
  function conceptLink(id) {
    var a = el("a", "concept-link");
    a.href = "explorer.html#concept=" + encodeURIComponent(id);
    var c = byId[id];
    add(a, c ? U.bi({ en: c.names.en || id, zh: c.names.zh }, "span") : el("span", null, id));
    a.addEventListener("click", function () { cardLinkFollowed = true; });
    return a;
  }
  function actionButton(en, zh, cls, f) {
    var b = el("button", cls);
    b.type = "button";
    add(b, U.tr(en, zh));
    b.addEventListener("click", f);
    return b;
  }
  function renderCard(id) {
    var card = U.clear(document.getElementById("card"));
    var c = byId[id];
    if (!c) return;
    card.dataset.concept = c.id;
    var h2 = el("h2", "name");
    add(h2, U.bi({ en: c.names.en || c.id, zh: c.names.zh }, "span"));
    add(card, h2);
    var meta = el("div", "meta");
    add(meta, el("code", null, c.id), term("kind", c.kind, "tag kind"), term("lifecycle", c.lifecycle.status, "tag life-" + c.lifecycle.status));
    var page = el("a", "page-link");
    page.href = "concepts/" + c.id + ".html";
    add(page, U.tr("concept page", "概念页"));
    add(meta, page);
    add(card, meta, U.bi(c.lifecycle.note, "div", "note"));
    var acts = el("div", "actions");
    add(acts, actionButton(state.pinned[c.id] ? "Unpin" : "Pin", state.pinned[c.id] ? "取消固定" : "固定", "pin-btn",
                           function () { pinNode(c.id); }),
        actionButton("Hide", "隐藏", "hide-btn", function () { hideNode(c.id); }));
    add(card, acts);
    var ae = (c.aliases.en || []).join(" \u00b7 "), az = (c.aliases.zh || []).join(" \u00b7 ");
    if (ae || az) {
      var ad = el("div", "aliases");
      add(ad, U.tr("aliases: ", "别名："), U.bi({ en: ae, zh: az }, "span", "alias-list"));
      add(card, ad);
    }
    var s2 = U.section(["Answers", "回答的问题"]);
    if (!Object.keys(c.answers).length) add(s2, U.tr("answers none of the six questions", "不回答六问", "p", "muted"));
    D.questions.forEach(function (q) {
      if (!c.answers[q.id]) return;
      var div = el("div", "answer");
      add(div, U.bi(q.names, "div", "q"), U.bi(c.answers[q.id], "div", "a"));
      add(s2, div);
    });
    add(card, s2);
    [[["For a newcomer", "入门"], c.beginner], [["For a professional", "专业"], c.professional]].forEach(function (p) {
      if (!p[1].en && !p[1].zh) return;
      add(card, add(U.section(p[0]), U.bi(p[1], "div", "prose")));
    });
    if (c.hardware.length || c.hardware_note.en || c.hardware_note.zh) {
      var hs = U.section(["Hardware", "硬件"]);
      var ul = el("ul");
      c.hardware.forEach(function (h) { add(ul, add(el("li"), byId[h] ? conceptLink(h) : el("code", null, h))); });
      add(hs, ul, U.bi(c.hardware_note, "div", "note"));
      add(card, hs);
    }
    if (c.relations.length) {
      var rs = U.section(["Relations", "关系"]);
      var rl = el("ul", "rels");
      c.relations.forEach(function (g) {
        g.concepts.forEach(function (x) {
          var li = el("li");
          add(li, term("relation", g.relation, "rel"), el("span", "rel", " \u2192 "),
              byId[x.id] ? conceptLink(x.id) : el("code", null, x.id), U.bi(x.note || EMPTY, "div", "note"));
          if (x.direction === "out" && x.evidence.length) add(li, U.evidenceList(x.evidence, V));
          add(rl, li);
        });
      });
      add(rs, rl);
      add(card, rs);
    }
    if (c.claims.length) {
      var cs = U.section(["Claims", "论断"]);
      var cl = el("ul", "claims");
      c.claims.forEach(function (ref) {
        var k = claimById[ref.id];
        var li = el("li");
        add(li, term("claim", k.status, "tag status-" + k.status), el("code", null, k.id),
            U.bi(k.statement, "div"), U.bi(k.note, "div", "note"));
        if (k.evidence.length) add(li, U.evidenceList(k.evidence, V));
        add(cl, li);
      });
      add(cs, cl);
      add(card, cs);
    }
    if (c.evidence.length) add(card, add(U.section(["Evidence", "证据"]), U.evidenceList(c.evidence, V)));
    var hsec = U.section(["History", "历史"]);
    var first = c.first_visible;
    if (first) {
      var p = el("p");
      add(p, U.tr("first seen in ", "首见于 "), el("code", null, first.repo), el("span", null, " " + D.days[c.id] + " "));
      if (first.precision === "on-or-before") add(p, el("span", null, "("), term("precision", "on-or-before"), el("span", null, ") "));
      add(p, U.link(first.url, first.sha ? first.sha.slice(0, 12) : "", "pin"));
      add(p, el("code", "muted", " " + first.method + ": " + first.value));
      add(hsec, p);
    } else {
      add(hsec, U.tr("no dated sighting", "无带日期的发现", "p", "muted"));
    }
    if (c.repositories.length) {
      var rp = el("div", "repos");
      add(rp, U.tr("repositories: ", "仓库："), el("code", null, repoIds(c).join(", ")));
      add(hsec, rp);
    }
    add(card, hsec);
    if (c.flows.length) {
      var fs = U.section(["Flows", "流程"]);
      var fl = el("ul");
      c.flows.forEach(function (f) {
        var li = el("li"), a = el("a");
        a.href = "flow-" + f.id + ".html#step=" + encodeURIComponent(f.steps[0]);
        add(a, U.bi(f.title, "span"));
        add(li, a, el("span", "muted", " (" + f.steps.length + ")"));
        add(fl, li);
      });
      add(fs, fl);
      add(card, fs);
    }
    if (state.path && state.selected === id) {
      var ps = U.section(["Path", "路径"]);
      var ol = el("ol", "pathlist");
      state.path.ids.forEach(function (pid, k) {
        var li = add(el("li"), conceptLink(pid));
        if (k < state.path.rels.length) {
          var r = D.rels[state.path.rels[k]], t = D.relTypes[r[2]].type;
          var fwd = D.concepts[r[0]].id === pid;
          add(li, el("span", "muted", fwd ? " \u2014 " : " \u2190 "), term("relation", t, "rel"), el("span", "muted", fwd ? " \u2192" : " \u2014"));
        }
        add(ol, li);
      });
      add(ps, ol);
      card.insertBefore(ps, card.children[3] || null);
    }
    document.getElementById("panel").scrollTop = 0;
  }

  /* ---- about: shown when no concept is selected ---- */
  function renderAbout() {
    var card = U.clear(document.getElementById("card"));
    delete card.dataset.concept;
    var h = el("h2");
    add(h, U.tr("The seed's six terms", "六个起点"));
    add(card, h);
    add(card, U.tr("Search, or click a concept: it and its direct neighbours are shown, the rest is hidden. " +
                   "Clicking a neighbour expands it; Back returns to the step before, and the trail above lists the steps. " +
                   "Lanes (x) are the six questions: a concept sits in the lane of the first question it answers, and a mark (+ ...) " +
                   "names the others; inside a lane, older first visible is higher.",
                   "搜索或点击概念：显示它与直接相邻的概念，其余隐藏。点击相邻概念可展开；后退回到上一步，上方的路径列出每一步。" +
                   "横向分道是六问：概念位于它回答的第一个问题的分道，“+”标出其余问题；分道内越早首次可见越靠上。", "p", "hint"));
    var qs = U.section(["The six questions", "六问"]);
    var ql = el("dl");
    D.questions.forEach(function (q) {
      var dt = el("dt");
      add(dt, el("code", null, q.id), el("span", null, " "), U.bi(q.names, "span"));
      add(ql, dt, U.bi(q.explanation, "dd"));
    });
    add(qs, ql);
    var ks = U.section(["Kinds", "种类"]);
    var ul = el("ul", "legend");
    D.kinds.forEach(function (k) {
      if (!k.count) return;
      var g = el("span", "glyph", "\u25a0");
      g.style.color = k.color;
      g.setAttribute("aria-hidden", "true");
      add(ul, add(el("li"), g, el("span", null, " "), term("kind", k.id)));
    });
    add(ks, ul);
    var fs = U.section(["Flows", "流程"]);
    var fl2 = el("ul");
    D.flows.forEach(function (f) {
      var a = el("a");
      a.href = f.file;
      add(a, U.bi(f.title, "span"));
      add(fl2, add(el("li"), a));
    });
    if (!D.flows.length) add(fl2, U.tr("no flows", "没有流程", "li", "muted"));
    add(fs, fl2);
    add(card, qs, ks, fs);
  }

  /* ---- search: a combobox with a named listbox ---- */
  /* Ranked: an exact name or alias first; then a name (id, names, short names) that starts with
     the text ("hcc" -> HCCL, HCCS), an alias that starts with it, a word inside a name or alias
     that starts with it, and last the text anywhere; ties go to the shorter name, then the id. */
  var WORD = /[\s_\-\/.:()（）]+/;
  function rank(nq, k, isName) {
    if (k === nq) return 0;
    if (k.indexOf(nq) === 0) return isName ? 1 : 2;
    if (k.split(WORD).some(function (w) { return w && w.indexOf(nq) === 0; })) return 3;
    return k.indexOf(nq) > 0 ? 4 : 9;
  }
  function search(q) {
    var nq = U.normalize(q);
    if (!nq) return [];
    var hits = [];
    D.concepts.forEach(function (c) {
      var best = 9, len = Infinity, names = D.nameKeys[c.id];
      D.keys[c.id].forEach(function (k) {
        var r = rank(nq, k, names.indexOf(k) >= 0);
        if (r < best || (r === best && k.length < len)) { best = r; len = k.length; }
      });
      names.forEach(function (k) {
        var r = rank(nq, k, true);
        if (r < best || (r === best && k.length < len)) { best = r; len = k.length; }
      });
      if (best < 9) hits.push([best, len, c.id]);
    });
    hits.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0); });
    return hits.map(function (h) { return h[2]; });
  }
  var input = document.getElementById("search"), results = document.getElementById("results");
  var active = -1, hitIds = [];
  function setActive(i) {
    var opts = results.querySelectorAll("[role=option]");
    if (!opts.length) { active = -1; input.removeAttribute("aria-activedescendant"); return; }
    active = (i + opts.length) % opts.length;
    for (var k = 0; k < opts.length; k++) opts[k].setAttribute("aria-selected", k === active ? "true" : "false");
    input.setAttribute("aria-activedescendant", opts[active].id);
    opts[active].scrollIntoView({ block: "nearest" });
  }
  function closeResults() {
    results.hidden = true; input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant"); active = -1;
  }
  function open(id) { closeResults(); focusOn([], id); }
  function showResults() {
    U.clear(results);
    hitIds = search(input.value).slice(0, 30);
    hitIds.forEach(function (id, i) {
      var li = el("li", "result");
      li.setAttribute("role", "option");
      li.id = "hit-" + i;
      li.dataset.id = id;
      li.setAttribute("aria-selected", "false");
      add(li, nameSpans(id), term("kind", byId[id].kind, "tag"));
      li.addEventListener("mousedown", function (e) { e.preventDefault(); });
      li.addEventListener("click", function () { open(id); });
      add(results, li);
    });
    if (input.value && !hitIds.length) {
      var none = add(el("li", "muted"), U.tr("no match", "无匹配"));
      none.setAttribute("role", "option"); none.id = "hit-none"; none.setAttribute("aria-disabled", "true");
      add(results, none);
    }
    var on = !!input.value;
    results.hidden = !on;
    input.setAttribute("aria-expanded", on ? "true" : "false");
    active = -1;
    if (hitIds.length) setActive(0);
  }
  input.addEventListener("input", showResults);
  input.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") { e.preventDefault(); if (results.hidden) showResults(); else setActive(active + 1); }
    else if (e.key === "ArrowUp") { e.preventDefault(); setActive(active - 1); }
    else if (e.key === "Enter") {
      e.preventDefault();
      if (!hitIds.length) hitIds = search(input.value);
      var id = hitIds[active >= 0 && active < hitIds.length ? active : 0];
      if (id) open(id);
    } else if (e.key === "Escape") { closeResults(); }
  });
  input.addEventListener("blur", function () { setTimeout(closeResults, 150); });

  /* ---- filters and as of: both re-fit the view ---- */
  function option(sel, value, text) {
    var o = el("option", null, text);
    o.value = value;
    sel.appendChild(o);
  }
  var fq = document.getElementById("f-question");
  D.questions.forEach(function (q) { option(fq, q.id, q.id + " \u2014 " + q.names.en + " / " + q.names.zh); });
  option(fq, "_none", "answers none / 不回答六问");
  var fr = document.getElementById("f-repo");
  D.repos.forEach(function (r) { option(fr, r, r); });
  var fl = document.getElementById("f-lifecycle");
  D.lifecycles.forEach(function (l) { option(fl, l, l); });
  var boxes = document.getElementById("kind-boxes");
  D.kinds.forEach(function (k) {
    if (!k.count) return;
    var lab = el("label", "kindbox");
    var cb = el("input");
    cb.type = "checkbox"; cb.checked = true; cb.value = k.id;
    cb.addEventListener("change", function () { state.kinds[k.id] = cb.checked; draw(true); });
    var g = el("span", "glyph", "\u25a0");
    g.style.color = k.color;
    g.setAttribute("aria-hidden", "true");
    add(lab, cb, g, term("kind", k.id), el("span", null, " (" + k.count + ")"));
    add(boxes, lab);
  });
  fq.addEventListener("change", function () { state.question = fq.value; draw(true); });
  fr.addEventListener("change", function () { state.repo = fr.value; draw(true); });
  fl.addEventListener("change", function () { state.lifecycle = fl.value; draw(true); });
  var asof = document.getElementById("asof");
  var dates = D.concepts.map(function (c) { return D.days[c.id] || ""; }).filter(Boolean).sort();
  if (dates.length) asof.min = dates[0];
  if (D.meta.cutoff) asof.max = D.meta.cutoff;
  asof.value = state.asOf || "";
  asof.addEventListener("change", function () {
    if (/^\d{4}-\d{2}-\d{2}$/.test(asof.value)) { state.asOf = asof.value; draw(true); }
  });
  var hide = document.getElementById("asof-hide");
  hide.addEventListener("change", function () { state.hide = hide.checked; draw(true); });
  document.getElementById("reset").addEventListener("click", function () {
    state.question = state.repo = state.lifecycle = ""; fq.value = fr.value = fl.value = "";
    Object.keys(state.kinds).forEach(function (k) { state.kinds[k] = true; });
    boxes.querySelectorAll("input").forEach(function (cb) { cb.checked = true; });
    state.asOf = D.meta.asOf || D.meta.cutoff; asof.value = state.asOf || "";
    state.hide = hide.checked = false;
    draw(true);
  });
  document.getElementById("seed").addEventListener("click", function () { focusOn(D.meta.focus, null, "seed"); });
  document.getElementById("pathform").addEventListener("submit", function (e) {
    e.preventDefault();
    var a = search(document.getElementById("path-from").value)[0], b = search(document.getElementById("path-to").value)[0];
    if (!a || !b || !showPath(a, b)) {
      U.clear(document.getElementById("status")).appendChild(
        U.tr("No path: " + (a ? "" : "the first name matches no concept; ") + (b ? "" : "the second name matches no concept; ") + "no chain of relations joins them.",
             "没有路径：" + (a ? "" : "第一个名称没有匹配的概念；") + (b ? "" : "第二个名称没有匹配的概念；") + "它们之间没有关系链。"));
    }
  });
  AtlasLang.onChange(function () { render(); });
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { draw(true); }, 150);
  });

  /* the first entry: the concept the URL names, else the seed's six terms (replaced, not pushed) */
  var h0 = U.hashParams();
  if (history.state && history.state.trail) restore(history.state);
  else {
    var first = h0.concept && byId[h0.concept] ? h0.concept : null;
    focusState(first ? [] : D.meta.focus, first);
    state.trail = [{ how: first ? "focus" : "seed", id: first }];
    render();
    amend();
  }

  function domOf(id) {
    var p = network.getPositions([id])[id];
    if (!p) return null;
    var dom = network.canvasToDOM(p), r = container.getBoundingClientRect();
    return { x: r.left + dom.x, y: r.top + dom.y };
  }
  window.atlasMap = Object.freeze({
    ready: true,
    conceptCount: function () { return N; },
    nodeCount: function () { return nodes.get({ filter: function (n) { return !n.waypoint; } }).length; },
    edgeCount: function () {
      return edges.get().map(function (e) { return e.rel; }).filter(function (r, i, a) { return a.indexOf(r) === i; }).length;
    },
    drawnIds: function () { return drawn.slice(); },
    neighbours: function (id) { return byId[id] ? neighbours(id).filter(function (n, i, a) { return a.indexOf(n) === i; }).sort() : []; },
    search: search,
    open: function (id) { if (!byId[id]) return false; focusOn([], id); return true; },
    hide: hideNode,
    pin: function (id, on) { return pinNode(id, on === undefined ? true : on); },
    path: function (a, b) { return showPath(a, b) ? state.path.ids.slice() : null; },
    shortestPath: function (a, b) { var p = shortestPath(a, b); return p ? p.ids : null; },
    trail: function () { return state.trail.map(function (t) { return t.id; }); },
    crumbs: function () { return Array.prototype.map.call(document.querySelectorAll("#crumbs button"), function (b) { return b.textContent; }); },
    hidden: function () { return Object.keys(state.hidden).sort(); },
    pinned: function () { return Object.keys(state.pinned).sort(); },
    origin: function () { return state.origin; },
    listMode: listMode,
    edgeFontPx: function () { return EFONT.size * network.getScale(); },
    select: function (id) { return expand(id); },
    seed: function () { focusOn(D.meta.focus, null); },
    selected: function () { return state.selected; },
    setAsOf: function (d) { asof.value = d; state.asOf = d; draw(true); },
    scale: function () { return network.getScale(); },
    labelPx: function () { return network.getScale() * FONT; },
    laneOf: function (id) { return D.lanes[rec[id].lane].key; },
    answers: function (id) { return Object.keys(byId[id].answers); },
    laneRange: function (key) {
      for (var i = 0; i < lanesDrawn.length; i++) if (D.lanes[lanesDrawn[i].lane].key === key) return [lanesDrawn[i].x0, lanesDrawn[i].x1];
      return null;
    },
    /* DOM box of the canvas and of each drawn node, to check the view contains them */
    inView: function (id) {
      var b = network.getBoundingBox(id);
      if (!b) return false;
      var tl = network.canvasToDOM({ x: b.left, y: b.top }), br = network.canvasToDOM({ x: b.right, y: b.bottom });
      return tl.x >= -1 && tl.y >= -1 && br.x <= container.clientWidth + 1 && br.y <= container.clientHeight + 1;
    },
    crossings: function () { return U.crossings(network, drawn, edges.getIds()); },
    overlaps: function () { return U.overlaps(network, drawn); },
    rerouted: function () { return rerouted.slice(); },
    /* the DOM boxes of the edge labels vis-network drew (its own measured label sizes) */
    labelBoxes: function () {
      /* what vis-network holds as each drawn edge's label, not our records */
      return edges.get().filter(function (e) {
        var ve = network.body.edges[e.id];
        return ve && ve.labelModule.elementOptions.label;
      }).map(function (e) {
        var s = network.body.edges[e.id].labelModule.size;
        var tl = network.canvasToDOM({ x: s.left, y: s.top }), br = network.canvasToDOM({ x: s.left + s.width, y: s.top + s.height });
        return { id: e.rel, label: network.body.edges[e.id].labelModule.elementOptions.label, left: tl.x, top: tl.y, right: br.x, bottom: br.y };
      });
    },
    labelText: function (id) { return rec[id] ? rec[id].label : null; },
    /* the lines vis-network drew a node's label in */
    labelLines: function (id) {
      var nd = network.body.nodes[id];
      return nd ? (nd.labelModule.lines || []).map(function (l) {
        return l.blocks.map(function (b) { return b.text; }).join("");
      }) : [];
    },
    canvasSize: function () { return [container.clientWidth, container.clientHeight]; },
    edgeLabels: function () {
      return edges.get().filter(function (e) { return e.label; }).map(function (e) { return e.rel; })
        .filter(function (r, i, a) { return a.indexOf(r) === i; }).sort();
    },
    edgesOf: function (id) {
      return edges.get().filter(function (e) {
        var r = D.rels[+e.rel.slice(1)];
        return D.concepts[r[0]].id === id || D.concepts[r[1]].id === id;
      }).map(function (e) { return e.rel; }).filter(function (r, i, a) { return a.indexOf(r) === i; }).sort();
    },
    positions: function () { return network.getPositions(drawn); },
    boxes: function () {
      var o = {};
      drawn.forEach(function (id) { o[id] = network.getBoundingBox(id); });
      return o;
    },
    segments: function (eid) {
      var e = network.body.edges[eid], pts = [];
      for (var i = 0; i <= 8; i++) pts.push(e.edgeType.getPoint(i / 8));
      return { from: e.fromId, to: e.toId, pts: pts };
    },
    focus: function (id) { return domOf(id); }
  });
})();

/* One flow, read top-down (flow-<id>.html).

   Rows are the step levels from Python (longest path, so every edge points down). A level
   wider than the page wraps into several rows. Boxes are as wide as the page allows (never
   narrower than 150 px); each box grows to hold its whole label, and rows are spaced by the
   measured box heights, so no box overlaps another. The drawing is shown at scale 1 (labels at
   their font size, 14 px) and the page scrolls down through it; edges are routed around boxes
   (AtlasUI.route). */
(function () {
  var U = AtlasUI, el = U.el, add = U.add;
  var D = U.data();
  U.useSources(D.sources);
  var stepById = {};
  D.flow.steps.forEach(function (s) { stepById[s.id] = s; });
  var recById = {};
  D.nodes.forEach(function (n) { recById[n.id] = n; });
  document.getElementById("flow-title").textContent =
    (D.flow.title.en || D.flow.id) + (D.flow.title.zh ? " / " + D.flow.title.zh : "");
  document.title = (D.flow.title.en || D.flow.id) + " \u00b7 Ascend communication atlas";
  var summary = document.getElementById("flow-summary");
  var sb = U.bi(D.flow.summary, "span");
  if (sb) summary.appendChild(sb);

  var legend = document.getElementById("legend");
  D.actors.forEach(function (a) {
    var sw = el("span", "swatch");
    sw.style.background = a.color;
    add(legend, add(el("span", "legend-item"), sw, el("span", null, a.name)));
  });
  D.edgeTypes.forEach(function (t) {
    var line = el("span", "line");
    line.style.borderTopColor = t.color;
    line.style.borderTopStyle = t.dashes ? (t.type === "sync" ? "dashed" : "dotted") : "solid";
    add(legend, add(el("span", "legend-item"), line, el("span", null, t.type)));
  });

  var FONT = D.options.nodes.font.size, MARGIN = D.options.nodes.margin;
  var GAP_X = 56, GAP_Y = 64, PAD = 40;
  var nodes = new vis.DataSet([]);
  var edges = new vis.DataSet([]);
  var container = document.getElementById("network");
  var network = new vis.Network(container, { nodes: nodes, edges: edges }, D.options);
  var canvas = container.querySelector("canvas");
  if (canvas) canvas.style.touchAction = "pan-y";
  var lang = "both", selected = null, rerouted = [], boxW = D.meta.boxW, contentH = 0;
  var rows = [], rowOf = {}, pos = {}, width = 0;

  function labelOf(n) { return n.labels[lang]; }
  function levels() {
    var byLevel = {};
    D.nodes.forEach(function (n) { (byLevel[n.level] = byLevel[n.level] || []).push(n.id); });
    return Object.keys(byLevel).map(Number).sort(function (a, b) { return a - b; })
      .map(function (l) { return byLevel[l]; });
  }
  function preds() {
    var p = {};
    D.edges.forEach(function (e) { (p[e.to] = p[e.to] || []).push(e.from); });
    return p;
  }

  function layout() {
    width = Math.max(320, container.clientWidth);
    rows = []; rowOf = {}; pos = {};
    var lv = levels(), P = preds();
    var widest = Math.max.apply(null, lv.map(function (l) { return l.length; }));
    /* the box width that puts the widest level on one row, within [MIN_W, D.meta.boxW] */
    var inner = function (k) { return Math.floor((width - 2 * PAD - (k - 1) * GAP_X) / k) - 2 * MARGIN; };
    /* boxes no narrower than 200 px where the page is wide enough (else 150): a wider level wraps */
    var MIN_W = width >= 600 ? 200 : 150;
    boxW = Math.max(MIN_W, Math.min(D.meta.boxW, inner(widest)));
    var perRow = Math.max(1, Math.floor((width - 2 * PAD + GAP_X) / (boxW + 2 * MARGIN + GAP_X)));
    var full = boxW + 2 * MARGIN;
    /* first pass: labels and widths, so vis measures every box */
    nodes.clear(); edges.clear();
    nodes.add(D.nodes.map(function (n) {
      return { id: n.id, label: U.wrapName(labelOf(n), boxW - 2, "bold " + FONT + "px " + D.options.nodes.font.face), title: n.title, color: n.color, x: 0, y: 0,
               widthConstraint: { minimum: boxW, maximum: boxW } };
    }));
    network.redraw();
    var hOf = {};
    D.nodes.forEach(function (n) { var b = network.getBoundingBox(n.id); hOf[n.id] = b.bottom - b.top; });
    /* rows: each level in order, wrapped at perRow; inside a level, steps go by the mean x of
       their predecessors (ties: step order) */
    var y = PAD, order = {};
    D.nodes.forEach(function (n, i) { order[n.id] = i; });
    lv.forEach(function (ids) {
      var key = {};
      ids.forEach(function (id) {
        var xs = (P[id] || []).filter(function (p) { return pos[p]; }).map(function (p) { return pos[p].x; });
        key[id] = xs.length ? xs.reduce(function (a, b) { return a + b; }, 0) / xs.length : width / 2;
      });
      var sorted = ids.slice().sort(function (a, b) { return key[a] - key[b] || order[a] - order[b]; });
      for (var k = 0; k < sorted.length; k += perRow) {
        var row = sorted.slice(k, k + perRow);
        var rowW = row.length * full + (row.length - 1) * GAP_X;
        var x0 = (width - rowW) / 2;
        var rowH = Math.max.apply(null, row.map(function (id) { return hOf[id]; }));
        row.forEach(function (id, i) {
          pos[id] = { x: x0 + i * (full + GAP_X) + full / 2, y: y + rowH / 2 };
          rowOf[id] = rows.length;
        });
        rows.push({ top: y, bottom: y + rowH });
        y += rowH + GAP_Y;
      }
    });
    contentH = y - GAP_Y + PAD;
    nodes.update(D.nodes.map(function (n) { return { id: n.id, x: pos[n.id].x, y: pos[n.id].y }; }));
    container.style.height = contentH + "px";
    network.setSize(width + "px", contentH + "px");
    network.redraw();
    var boxes = D.nodes.map(function (n) {
      var b = network.getBoundingBox(n.id);
      return { id: n.id, left: b.left, right: b.right, top: b.top, bottom: b.bottom };
    });
    /* curves stay inside the drawing (a few px from its edges), else they go around */
    var rt = U.route(D.edges, pos, boxes, 6, { left: 4, right: width - 4, top: 4, bottom: contentH - 4 });
    rerouted = rt.failed;
    routed = rt.smooth;
    drawEdges();
    network.moveTo({ position: { x: width / 2, y: contentH / 2 }, scale: 1, animation: false });
    if (selected) network.selectNodes([selected]);
  }

  /* An edge no curve gets through goes around: down (or up) out of its box into the empty
     gap between rows, along it to a corridor at the page's side, along the corridor to the gap
     next to the other end's row, and into that box. No box stands in a gap or a corridor. */
  function detour(e, track) {
    var a = pos[e.from], b = pos[e.to], ra = rows[rowOf[e.from]], rb = rows[rowOf[e.to]];
    var down = rowOf[e.to] >= rowOf[e.from];
    var gA = down ? ra.bottom + GAP_Y / 2 : ra.top - GAP_Y / 2;
    var gB = down ? rb.top - GAP_Y / 2 : rb.bottom + GAP_Y / 2;
    if (Math.abs(gA - gB) < 1 || rowOf[e.to] === rowOf[e.from]) return [{ x: a.x, y: gA }, { x: b.x, y: gA }];
    var left = (a.x + b.x) / 2 < width / 2;
    var sx = left ? 12 + 6 * (track % 4) : width - 12 - 6 * (track % 4);
    return [{ x: a.x, y: gA }, { x: sx, y: gA }, { x: sx, y: gB }, { x: b.x, y: gB }];
  }
  var routed = {};
  function drawEdges() {
    edges.clear();
    nodes.remove(nodes.get({ filter: function (n) { return n.waypoint; } }).map(function (n) { return n.id; }));
    var failed = {}, track = 0, out = [], waypoints = [];
    rerouted.forEach(function (id) { failed[id] = true; });
    D.edges.forEach(function (e) {
      var o = {};
      Object.keys(e).forEach(function (k) { o[k] = e[k]; });
      o.smooth = routed[e.id] || false;
      o.title = e.label;
      o.rel = e.id;
      if (!(selected && (e.from === selected || e.to === selected))) delete o.label;
      if (!failed[e.id]) { out.push(o); return; }
      var c = U.chain(o, detour(e, track++));
      waypoints = waypoints.concat(c.nodes);
      out = out.concat(c.edges);
    });
    if (waypoints.length) nodes.add(waypoints);
    edges.add(out);
  }
  function renderCard(id) {
    var card = U.clear(document.getElementById("card"));
    var s = stepById[id];
    if (!s) return;
    card.dataset.step = s.id;
    add(card, el("h2", "name-en", s.label.en || s.id));
    if (s.label.zh) { var z = el("div", "name-zh", s.label.zh); z.lang = "zh"; add(card, z); }
    add(card, add(el("div", "meta"), el("code", null, s.id), el("span", "tag", "actor: " + s.actor)));
    add(card, U.bi(s.note, "div", "note"));
    var cs = U.section("Concepts / 概念");
    var ul = el("ul");
    s.concepts.forEach(function (cid) {
      var li = el("li"), names = D.flow.labels[cid];
      if (names) {
        add(li, U.link("concepts/" + cid + ".html",
                       (names.en || cid) + (names.zh ? " / " + names.zh : ""), "concept-link"),
            el("span", null, " \u00b7 "),
            U.link("explorer.html#concept=" + encodeURIComponent(cid), "in the explorer / 关系浏览", "explore-link"));
      } else {
        add(li, el("span", "muted", cid + " (not in the atlas)"));
      }
      add(ul, li);
    });
    if (!s.concepts.length) add(ul, el("li", "muted", "none"));
    add(cs, ul);
    add(card, cs);
    if (s.source) add(card, add(U.section("Source / 源码"), U.evidenceList([s.source])));
  }
  function select(id) {
    if (!stepById[id]) return false;
    selected = id;
    drawEdges();
    network.selectNodes([id]);
    renderCard(id);
    var want = "#step=" + encodeURIComponent(id);
    if (location.hash !== want) history.replaceState(null, "", want);
    return true;
  }
  network.on("click", function (p) { if (p.nodes && p.nodes.length && stepById[p.nodes[0]]) select(p.nodes[0]); });
  window.addEventListener("hashchange", function () {
    var h = U.hashParams();
    if (h.step) select(h.step);
  });
  var evidence = document.getElementById("steps");
  if (D.flow.evidence.length) add(evidence, add(U.section("Flow evidence / 证据", "h2"), U.evidenceList(D.flow.evidence)));
  (function () {
    var steps = U.section("Steps / 步骤", "h2");
    var ol = el("ol", "steps");
    D.flow.steps.forEach(function (s) {
      var li = el("li");
      var a = U.link("#step=" + encodeURIComponent(s.id), s.label.en || s.id, "step-link");
      a.addEventListener("click", function (e) {
        e.preventDefault(); select(s.id);
        var h = document.querySelector("#card h2");
        if (h) { h.tabIndex = -1; h.focus(); }
      });
      add(li, a);
      if (s.label.zh) { var z = el("span", "zh", s.label.zh); z.lang = "zh"; add(li, z); }
      add(li, el("code", "step-id", s.id), el("span", "tag", s.actor));
      add(ol, li);
    });
    add(steps, ol);
    add(document.getElementById("steps"), steps);
  })();
  document.querySelectorAll("#lang input").forEach(function (r) {
    r.addEventListener("change", function () { if (r.checked) { lang = r.value; layout(); } });
  });
  var lastW = 0, timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (container.clientWidth !== lastW) { lastW = container.clientWidth; layout(); }
    }, 150);
  });
  layout();
  lastW = container.clientWidth;
  var h0 = U.hashParams();
  if (h0.step) select(h0.step);

  window.atlasFlow = Object.freeze({
    ready: true,
    nodeCount: function () { return nodes.get({ filter: function (n) { return !n.waypoint; } }).length; },
    edgeCount: function () {
      return edges.get().map(function (e) { return e.rel; }).filter(function (r, i, a) { return a.indexOf(r) === i; }).length;
    },
    select: select,
    selected: function () { return selected; },
    setLang: function (l) {
      var r = document.querySelector("#lang input[value='" + l + "']");
      if (r) { r.checked = true; lang = l; layout(); }
    },
    scale: function () { return network.getScale(); },
    labelPx: function () { return network.getScale() * FONT; },
    /* each box against its label: the label's measured size must fit inside the box */
    labelFit: function () {
      return D.nodes.map(function (n) {
        var nd = network.body.nodes[n.id];
        return { id: n.id, boxW: nd.shape.width, boxH: nd.shape.height,
                 textW: nd.labelModule.size.width, textH: nd.labelModule.size.height,
                 lines: nd.labelModule.lines ? nd.labelModule.lines.length : 0,
                 label: nd.options.label };
      });
    },
    /* every box's DOM rectangle is inside the canvas at the initial view */
    inView: function () {
      var w = container.clientWidth, h = container.clientHeight;
      return D.nodes.every(function (n) {
        var b = network.getBoundingBox(n.id);
        var tl = network.canvasToDOM({ x: b.left, y: b.top }), br = network.canvasToDOM({ x: b.right, y: b.bottom });
        return tl.x >= -1 && tl.y >= -1 && br.x <= w + 1 && br.y <= h + 1;
      });
    },
    crossings: function () { return U.crossings(network, D.nodes.map(function (n) { return n.id; }), edges.getIds()); },
    overlaps: function () { return U.overlaps(network, D.nodes.map(function (n) { return n.id; })); },
    /* drawn edges with a sampled point outside the canvas: [[edge id, overshoot px]] */
    outside: function () { return U.outside(network, edges.getIds(), container.clientWidth, container.clientHeight); },
    rerouted: function () { return rerouted.slice(); },
    focus: function (id) {
      var p = network.getPositions([id])[id];
      if (!p) return null;
      var dom = network.canvasToDOM(p);
      var r = container.getBoundingClientRect();
      return { x: r.left + dom.x, y: r.top + dom.y };
    }
  });
})();

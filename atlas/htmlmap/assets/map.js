/* The concept map (index.html). Positions come from Python; physics is off. */
(function () {
  var U = AtlasUI, el = U.el, add = U.add;
  var D = U.data();
  var byId = {};
  D.concepts.forEach(function (c) { byId[c.id] = c; });
  var qById = {};
  D.questions.forEach(function (q) { qById[q.id] = q; });
  var kindById = {};
  D.kinds.forEach(function (k) { kindById[k.id] = k; });
  var incoming = {};
  D.concepts.forEach(function (c) {
    c.rels.forEach(function (r) {
      (incoming[r.to] = incoming[r.to] || []).push({ type: r.type, from: c.id, note: r.note,
                                                     evidence: r.evidence });
    });
  });
  var GREY = { background: "#edf2f7", border: "#cbd5e0",
               highlight: { background: "#f6e05e", border: "#1a202c" } };
  var baseColor = {};
  D.nodes.forEach(function (n) {
    var k = kindById[n.group];
    var c = n.color || (k ? k.color : "#a0aec0");
    baseColor[n.id] = { background: c, border: c,
                        highlight: { background: "#f6e05e", border: "#1a202c" } };
  });

  var nodes = new vis.DataSet(D.nodes);
  var edges = new vis.DataSet(D.edges.length <= D.meta.edgeBudget ? D.edges :
    D.edges.map(function (e) { var o = Object.assign({}, e); o.hidden = true; return o; }));
  var container = document.getElementById("network");
  var network = new vis.Network(container, { nodes: nodes, edges: edges }, D.options);

  /* Large atlases: vis-network draws every edge with its arrow on every frame (about 4 s for
     30,000 edges), so above meta.edgeBudget only the relations of the selected concept are
     drawn until "all relations" is ticked. */
  var edgesAll = D.edges.length <= D.meta.edgeBudget;
  var incident = {}, edgeOn = {};
  D.edges.forEach(function (e) {
    (incident[e.from] = incident[e.from] || []).push(e.id);
    if (e.to !== e.from) (incident[e.to] = incident[e.to] || []).push(e.id);
  });
  function showEdgesOf(id) {
    if (edgesAll) return;
    var ups = {};
    Object.keys(edgeOn).forEach(function (eid) { ups[eid] = true; });
    edgeOn = {};
    (incident[id] || []).forEach(function (eid) { edgeOn[eid] = 1; ups[eid] = false; });
    edges.update(Object.keys(ups).sort().map(function (eid) { return { id: eid, hidden: ups[eid] }; }));
  }
  function setAllEdges(on) {
    edgesAll = !!on;
    edgeOn = {};
    edges.update(D.edges.map(function (e) { return { id: e.id, hidden: !edgesAll }; }));
    if (!edgesAll && state.selected) showEdgesOf(state.selected);
    document.getElementById("edges-all").checked = edgesAll;
  }

  var state = { view: "history", asOf: D.meta.asOf || D.meta.cutoff, hide: false,
                kinds: {}, question: "", repo: "", lifecycle: "", selected: null };
  D.kinds.forEach(function (k) { state.kinds[k.id] = true; });
  var shown = {}; // id -> "on" | "grey" | "off"

  function visibleAt(c) { return !c.first || !c.first.date || c.first.date <= state.asOf; }
  function passes(c) {
    if (c.kind in state.kinds && !state.kinds[c.kind]) return false;
    if (state.question === "_none") { if (Object.keys(c.answers).length) return false; }
    else if (state.question && !c.answers[state.question]) return false;
    if (state.repo && c.repos.indexOf(state.repo) < 0) return false;
    if (state.lifecycle && c.lifecycle.status !== state.lifecycle) return false;
    return true;
  }
  function apply() {
    var updates = [], on = 0, grey = 0;
    D.concepts.forEach(function (c) {
      var vis_ = visibleAt(c);
      var s = !passes(c) || (state.hide && !vis_) ? "off" : (vis_ ? "on" : "grey");
      if (s !== "off") on++;
      if (s === "grey") grey++;
      if (shown[c.id] === s) return;
      var u = { id: c.id, hidden: s === "off" };
      if (s === "grey") { u.color = GREY; u.font = { color: "#a0aec0" }; }
      else if (s === "on") { u.color = baseColor[c.id]; u.font = { color: "#1a202c" }; }
      if (shown[c.id] !== undefined || s !== "on") updates.push(u);
      shown[c.id] = s;
    });
    if (updates.length) nodes.update(updates);
    document.getElementById("status").textContent =
      on + " of " + D.concepts.length + " concepts shown" +
      (grey ? " (" + grey + " greyed: not yet visible)" : "") + ", as of " + state.asOf;
  }

  /* ---- axes drawn on the canvas (text via fillText, never HTML) ---- */
  var minX = 0, maxX = 0;
  D.columns.forEach(function (col) { minX = Math.min(minX, col.x); maxX = Math.max(maxX, col.x); });
  minX -= D.meta.cellW * 2; maxX += D.meta.cellW * 2;
  function bandLabel(b) {
    if (state.view === "kind") return b.key;
    return b.key === "undated" ? "no dated sighting" : b.key;
  }
  network.on("beforeDrawing", function (ctx) {
    var bands = D.bands[state.view] || [];
    if (!bands.length) return;
    var top = bands[0].y0, bottom = bands[bands.length - 1].y1;
    ctx.save();
    bands.forEach(function (b, i) {
      ctx.fillStyle = i % 2 ? "#f7fafc" : "#edf2f7";
      ctx.fillRect(minX, b.y0, maxX - minX, b.y1 - b.y0);
      ctx.fillStyle = "#4a5568";
      ctx.font = "bold 22px sans-serif";
      ctx.textAlign = "left";
      ctx.textBaseline = "top";
      ctx.fillText(bandLabel(b) + " (" + b.count + ")", minX + 8, b.y0 + 6);
    });
    ctx.strokeStyle = "#cbd5e0";
    ctx.lineWidth = 2;
    D.columns.forEach(function (col) {
      ctx.beginPath(); ctx.moveTo(col.x, top - 20); ctx.lineTo(col.x, bottom); ctx.stroke();
      var q = qById[col.key];
      ctx.fillStyle = "#2d3748";
      ctx.textAlign = "center";
      ctx.textBaseline = "bottom";
      ctx.font = "bold 20px sans-serif";
      ctx.fillText(q ? q.id : "answers none", col.x, top - 46);
      ctx.font = "16px sans-serif";
      ctx.fillText(q ? (q.names.en + " " + q.names.zh) : "不回答六问", col.x, top - 24);
    });
    ctx.restore();
  });

  /* ---- the card ---- */
  function nameOf(id) {
    var c = byId[id];
    return c ? (c.names.en || c.id) + (c.names.zh && c.names.zh !== c.names.en ? " / " + c.names.zh : "") : id;
  }
  function conceptLink(id) {
    var a = U.link("index.html#concept=" + encodeURIComponent(id), nameOf(id), "concept-link");
    return a;
  }
  function renderCard(id) {
    var card = U.clear(document.getElementById("card"));
    var c = byId[id];
    if (!c) return;
    card.dataset.concept = c.id;
    add(card, el("h2", "name-en", c.names.en || c.id));
    if (c.names.zh) { var z = el("div", "name-zh", c.names.zh); z.lang = "zh"; add(card, z); }
    var meta = el("div", "meta");
    add(meta, el("code", null, c.id), el("span", "tag kind", c.kind),
        el("span", "tag life-" + c.lifecycle.status, c.lifecycle.status));
    add(card, meta, U.bi(c.lifecycle.note, "div", "note"));
    var al = [].concat(c.aliases.en || [], c.aliases.zh || []);
    if (al.length) add(card, el("div", "aliases", "aliases: " + al.join(" · ")));

    var s = U.section("Answers / 回答的问题");
    var qs = Object.keys(c.answers);
    if (!qs.length) add(s, el("p", "muted", "answers none of the six questions"));
    D.questions.forEach(function (q) {
      if (!c.answers[q.id]) return;
      var div = el("div", "answer");
      add(div, el("div", "q", q.names.en + " · " + q.names.zh), U.bi(c.answers[q.id], "div", "a"));
      add(s, div);
    });
    add(card, s);
    [["Beginner / 入门", c.beginner], ["Professional / 专业", c.professional]].forEach(function (p) {
      if (!p[1].en && !p[1].zh) return;
      var sec = U.section(p[0]);
      if (p[1].en) add(sec, el("p", "en", p[1].en));
      if (p[1].zh) { var zz = el("p", "zh", p[1].zh); zz.lang = "zh"; add(sec, zz); }
      add(card, sec);
    });
    if (c.hardware.length || c.hardwareNote.en || c.hardwareNote.zh) {
      var hs = U.section("Hardware / 硬件");
      var ul = el("ul");
      c.hardware.forEach(function (h) { add(ul, add(el("li"), conceptLink(h))); });
      add(hs, ul, U.bi(c.hardwareNote, "div", "note"));
      add(card, hs);
    }
    var out = c.rels, inc = incoming[c.id] || [];
    if (out.length || inc.length) {
      var rs = U.section("Relations / 关系");
      var rl = el("ul", "rels");
      out.forEach(function (r) {
        var li = el("li");
        add(li, el("span", "rel", r.type + " \u2192 "), conceptLink(r.to), U.bi(r.note, "div", "note"));
        if (r.evidence.length) add(li, U.evidenceList(r.evidence));
        add(rl, li);
      });
      inc.forEach(function (r) {
        var li = el("li");
        add(li, conceptLink(r.from), el("span", "rel", " \u2192 " + r.type + " (this)"));
        add(rl, li);
      });
      add(rs, rl);
      add(card, rs);
    }
    if (c.claims.length) {
      var cs = U.section("Claims / 论断");
      var cl = el("ul", "claims");
      c.claims.forEach(function (i) {
        var k = D.claims[i];
        var li = el("li");
        add(li, el("span", "tag status-" + k.status, k.status), el("code", null, k.id),
            U.bi(k.statement, "div"), U.bi(k.note, "div", "note"));
        if (k.evidence.length) add(li, U.evidenceList(k.evidence));
        add(cl, li);
      });
      add(cs, cl);
      add(card, cs);
    }
    if (c.evidence.length) add(card, add(U.section("Evidence / 证据"), U.evidenceList(c.evidence)));
    var hsec = U.section("History / 历史");
    if (c.first) {
      var p = el("p");
      add(p, el("span", null, "first visible " + c.first.date +
                (c.first.precision === "on-or-before" ? " (on or before)" : "") + " in "));
      add(p, el("code", null, c.first.repo), el("span", null, " "));
      add(p, U.link(c.first.href, c.first.sha ? c.first.sha.slice(0, 12) : "", "pin"));
      add(p, el("span", "muted", " (" + c.first.method + ": " + c.first.value + ")"));
      add(hsec, p);
    } else {
      add(hsec, el("p", "muted", "no dated sighting"));
    }
    if (c.repos.length) add(hsec, el("div", "repos", "repositories: " + c.repos.join(", ")));
    add(card, hsec);
    if (c.flows.length) {
      var fs = U.section("Flows / 流程");
      var fl = el("ul");
      c.flows.forEach(function (f) {
        var li = el("li");
        add(li, U.link(f.file + "#step=" + encodeURIComponent(f.steps[0]), f.title.en || f.id),
            f.title.zh ? el("span", "zh", " " + f.title.zh) : null,
            el("span", "muted", " (" + f.steps.length + " step" + (f.steps.length > 1 ? "s" : "") + ")"));
        add(fl, li);
      });
      add(fs, fl);
      add(card, fs);
    }
    document.getElementById("panel").scrollTop = 0;
  }

  function select(id, focus) {
    if (!byId[id]) return false;
    state.selected = id;
    showEdgesOf(id);
    network.selectNodes([id]);
    renderCard(id);
    if (focus) {
      var p = network.getPositions([id])[id];
      if (p) network.moveTo({ position: p, scale: Math.max(network.getScale(), 1), animation: false });
    }
    var want = "#concept=" + encodeURIComponent(id);
    if (location.hash !== want) history.replaceState(null, "", want);
    return true;
  }
  network.on("click", function (params) {
    if (params.nodes && params.nodes.length) select(params.nodes[0], false);
  });
  window.addEventListener("hashchange", function () {
    var h = U.hashParams();
    if (h.concept) select(h.concept, true);
  });

  /* ---- search ---- */
  function search(q) {
    var nq = U.normalize(q);
    if (!nq) return [];
    var hits = [];
    D.concepts.forEach(function (c) {
      var best = 9;
      c.keys.forEach(function (k) {
        if (k === nq) best = Math.min(best, 0);
        else if (k.indexOf(nq) === 0) best = Math.min(best, 1);
        else if (k.indexOf(nq) > 0) best = Math.min(best, 2);
      });
      if (best < 9) hits.push([best, c.id]);
    });
    hits.sort(function (a, b) { return a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0); });
    return hits.map(function (h) { return h[1]; });
  }
  var input = document.getElementById("search"), results = document.getElementById("results");
  function showResults() {
    U.clear(results);
    var ids = search(input.value);
    ids.slice(0, 30).forEach(function (id) {
      var li = el("li", "result");
      li.setAttribute("role", "option");
      li.dataset.id = id;
      add(li, el("span", null, nameOf(id)), el("span", "tag", byId[id].kind));
      li.addEventListener("click", function () { select(id, true); results.hidden = true; });
      add(results, li);
    });
    if (input.value && !ids.length) add(results, el("li", "muted", "no match"));
    else if (ids.length > 30) add(results, el("li", "muted", (ids.length - 30) + " more"));
    results.hidden = !input.value;
  }
  input.addEventListener("input", showResults);
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter") {
      var ids = search(input.value);
      if (ids.length) { select(ids[0], true); results.hidden = true; }
    } else if (e.key === "Escape") { results.hidden = true; }
  });

  /* ---- controls ---- */
  function option(sel, value, text) {
    var o = el("option", null, text);
    o.value = value;
    sel.appendChild(o);
  }
  var fq = document.getElementById("f-question");
  D.questions.forEach(function (q) { option(fq, q.id, q.id + " \u2014 " + q.names.en); });
  option(fq, "_none", "answers none");
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
    cb.addEventListener("change", function () { state.kinds[k.id] = cb.checked; apply(); });
    var g = el("span", "glyph", k.glyph);
    g.style.color = k.color;
    add(lab, cb, g, el("span", null, k.id + " (" + k.count + ")"));
    add(boxes, lab);
  });
  fq.addEventListener("change", function () { state.question = fq.value; apply(); });
  fr.addEventListener("change", function () { state.repo = fr.value; apply(); });
  fl.addEventListener("change", function () { state.lifecycle = fl.value; apply(); });
  var asof = document.getElementById("asof");
  var dates = D.concepts.map(function (c) { return c.first ? c.first.date : ""; }).filter(Boolean).sort();
  if (dates.length) asof.min = dates[0];
  asof.max = D.meta.cutoff;
  asof.value = state.asOf;
  asof.addEventListener("change", function () {
    if (/^\d{4}-\d{2}-\d{2}$/.test(asof.value)) { state.asOf = asof.value; apply(); }
  });
  var allBox = document.getElementById("edges-all");
  allBox.checked = edgesAll;
  allBox.addEventListener("change", function () { setAllEdges(allBox.checked); });
  var hide = document.getElementById("asof-hide");
  hide.addEventListener("change", function () { state.hide = hide.checked; apply(); });
  function setView(view) {
    if (!D.bands[view]) return false;
    state.view = view;
    document.getElementById("view").value = view;
    nodes.update(D.concepts.map(function (c) { return { id: c.id, x: c.pos[view][0], y: c.pos[view][1] }; }));
    network.fit({ animation: false });
    return true;
  }
  document.getElementById("view").addEventListener("change", function (e) { setView(e.target.value); });
  document.getElementById("reset").addEventListener("click", function () {
    state.question = state.repo = state.lifecycle = ""; fq.value = fr.value = fl.value = "";
    Object.keys(state.kinds).forEach(function (k) { state.kinds[k] = true; });
    boxes.querySelectorAll("input").forEach(function (cb) { cb.checked = true; });
    state.asOf = D.meta.asOf || D.meta.cutoff; asof.value = state.asOf;
    state.hide = hide.checked = false;
    apply(); network.fit({ animation: false });
  });

  /* ---- about: legend, questions, flows ---- */
  (function () {
    var about = document.getElementById("about");
    var ks = U.section("Kinds / 种类");
    var ul = el("ul", "legend");
    D.kinds.forEach(function (k) {
      if (!k.count) return;
      var g = el("span", "glyph", k.glyph);
      g.style.color = k.color;
      add(ul, add(el("li"), g, el("span", null, " " + k.id)));
    });
    add(ks, ul);
    var qs = U.section("The six questions / 六问");
    var ql = el("dl");
    D.questions.forEach(function (q) {
      add(ql, el("dt", null, q.id + ": " + q.names.en + " · " + q.names.zh), U.bi(q.explanation, "dd"));
    });
    add(qs, ql);
    var fs = U.section("Flows / 流程");
    var fl2 = el("ul");
    D.flows.forEach(function (f) {
      add(fl2, add(el("li"), U.link(f.file, f.title.en || f.id),
                   f.title.zh ? el("span", "zh", " " + f.title.zh) : null));
    });
    if (!D.flows.length) add(fl2, el("li", "muted", "no flows"));
    add(fs, fl2);
    add(about, el("p", "hint", "Click a concept to see its card. x: the six questions; y: first visible date or kind."),
        ks, qs, fs);
  })();

  apply();
  var h0 = U.hashParams();
  if (h0.concept) select(h0.concept, true);

  var api = {
    ready: true,
    nodeCount: function () { return nodes.length; },
    edgeCount: function () { return edges.length; },
    drawnEdgeCount: function () { return edges.get({ filter: function (e) { return !e.hidden; } }).length; },
    setAllEdges: setAllEdges,
    shownCount: function () { return nodes.get({ filter: function (n) { return !n.hidden; } }).length; },
    greyCount: function () { return Object.keys(shown).filter(function (k) { return shown[k] === "grey"; }).length; },
    search: function (q) { return search(q); },
    select: function (id) { return select(id, true); },
    selected: function () { return state.selected; },
    view: function () { return state.view; },
    setView: setView,
    setAsOf: function (d) { asof.value = d; state.asOf = d; apply(); },
    focus: function (id) {
      var p = network.getPositions([id])[id];
      if (!p) return null;
      network.moveTo({ position: p, scale: 1.5, animation: false });
      network.redraw();
      var dom = network.canvasToDOM(p);
      var r = container.getBoundingClientRect();
      return { x: r.left + dom.x, y: r.top + dom.y };
    }
  };
  window.atlasMap = Object.freeze(api);
})();

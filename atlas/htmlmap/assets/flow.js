/* One flow as a left-to-right DAG (flow-<id>.html). Levels come from Python; physics is off. */
(function () {
  var U = AtlasUI, el = U.el, add = U.add;
  var D = U.data();
  var stepById = {};
  D.steps.forEach(function (s) { stepById[s.id] = s; });
  document.getElementById("flow-title").textContent =
    (D.flow.title.en || D.flow.id) + (D.flow.title.zh ? " / " + D.flow.title.zh : "");
  document.title = D.flow.title.en || D.flow.id;
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

  var nodes = new vis.DataSet(D.nodes);
  var edges = new vis.DataSet(D.edges);
  var container = document.getElementById("network");
  var network = new vis.Network(container, { nodes: nodes, edges: edges }, D.options);
  var selected = null;

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
    s.concepts.forEach(function (c) {
      var li = el("li");
      if (c.known) {
        add(li, U.link("index.html#concept=" + encodeURIComponent(c.id),
                       (c.names.en || c.id) + (c.names.zh ? " / " + c.names.zh : ""), "concept-link"));
      } else {
        add(li, el("span", "muted", c.id + " (not in the atlas)"));
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
    network.selectNodes([id]);
    renderCard(id);
    var want = "#step=" + encodeURIComponent(id);
    if (location.hash !== want) history.replaceState(null, "", want);
    return true;
  }
  network.on("click", function (p) { if (p.nodes && p.nodes.length) select(p.nodes[0]); });
  window.addEventListener("hashchange", function () {
    var h = U.hashParams();
    if (h.step) select(h.step);
  });
  if (D.flow.evidence.length) {
    var card = document.getElementById("card");
    add(card, add(U.section("Flow evidence / 证据"), U.evidenceList(D.flow.evidence)));
  }
  (function () {
    var steps = U.section("Steps / 步骤");
    var ol = el("ol", "steps");
    D.steps.forEach(function (s) {
      var li = el("li");
      var a = U.link("#step=" + encodeURIComponent(s.id),
                     (s.label.en || s.id) + (s.label.zh ? " / " + s.label.zh : ""));
      a.addEventListener("click", function (e) { e.preventDefault(); select(s.id); });
      add(li, a, el("span", "tag", s.actor));
      add(ol, li);
    });
    add(steps, ol);
    add(document.getElementById("steps"), steps);
  })();
  var h0 = U.hashParams();
  if (h0.step) select(h0.step);

  window.atlasFlow = Object.freeze({
    ready: true,
    nodeCount: function () { return nodes.length; },
    edgeCount: function () { return edges.length; },
    select: select,
    selected: function () { return selected; },
    focus: function (id) {
      var p = network.getPositions([id])[id];
      if (!p) return null;
      var dom = network.canvasToDOM(p);
      var r = container.getBoundingClientRect();
      return { x: r.left + dom.x, y: r.top + dom.y };
    }
  });
})();

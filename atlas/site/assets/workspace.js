/* The code workspace: the reading order (every step with its function and source, then the
   functions they call) becomes three linked tracks. The state is the URL fragment,
   #step=<id> or #step=<id>&fn=<fn-id>: choosing a step or a call sets it (a history entry), so
   Back and Forward move the three tracks and a position can be linked. The page's own anchors
   (#step-<id>, #fn-<id>) are read the same way. Only this page's server-rendered elements are
   cloned; no text is parsed as HTML. */
(function () {
  "use strict";
  var main = document.getElementById("main");
  var outlineTrack = document.getElementById("track-outline");
  var outline = document.getElementById("outline-body") || outlineTrack;
  var source = document.getElementById("track-source");
  var steps = Array.prototype.slice.call(document.querySelectorAll("article.step"));
  if (!main || !outlineTrack || !source || !steps.length) return;
  var stepIds = steps.map(function (a) { return a.getAttribute("data-step"); });
  var state = { step: "", fn: "" };

  function article(id) { return document.getElementById("step-" + id); }
  function fnBox(fn) {
    return document.getElementById(fn) || document.querySelector('.fn[data-fn="' + fn + '"]');
  }
  function firstFn(step) {
    var box = article(step).querySelector(".fn");
    return box ? box.getAttribute("data-fn") : "";
  }
  function parse(hash) {
    var h = String(hash || "").replace(/^#/, ""), out = { step: "", fn: "" };
    if (h.indexOf("step-") === 0) { out.step = decodeURIComponent(h.slice(5)); return out; }
    if (h.indexOf("fn-") === 0) { out.fn = h; return out; }
    h.split("&").forEach(function (part) {
      var i = part.indexOf("=");
      if (i < 0) return;
      var k = part.slice(0, i), v = "";
      try { v = decodeURIComponent(part.slice(i + 1)); } catch (e) { return; }
      if (k === "step" || k === "fn") out[k] = v;
    });
    return out;
  }
  function fragment(s) {
    return "#step=" + encodeURIComponent(s.step) + (s.fn && s.fn !== firstFn(s.step) ? "&fn=" + encodeURIComponent(s.fn) : "");
  }
  /* Links inside the cloned tracks: a call to an embedded function keeps the step and opens it. */
  function relink(node, step) {
    node.querySelectorAll('a[href^="#fn-"]').forEach(function (a) {
      a.setAttribute("href", fragment({ step: step, fn: a.getAttribute("href").slice(1) }));
    });
    node.querySelectorAll("[id]").forEach(function (e) { e.removeAttribute("id"); });
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function heading(step) {
    var a = article(step), h = document.createElement("div");
    h.className = "stephead";
    var t = a.querySelector("h2");
    if (t) h.appendChild(relink(t.cloneNode(true), step));
    var note = a.querySelector(".note");
    if (note) h.appendChild(note.cloneNode(true));
    var pin = a.querySelector(".pinline, .nosrc");
    if (pin) h.appendChild(pin.cloneNode(true));
    return h;
  }
  function show(s) {
    if (stepIds.indexOf(s.step) < 0) s.step = stepIds[0];
    var box = s.fn ? fnBox(s.fn) : null;
    if (!box) { s.fn = firstFn(s.step); box = s.fn ? fnBox(s.fn) : null; }
    var inStep = box && article(s.step).contains(box);
    if (box && !inStep) {  /* the same function may also belong to the step: use its marked copy */
      var own = article(s.step).querySelector('.fn[data-fn="' + s.fn + '"]');
      if (own) { box = own; inStep = true; }
    }
    state = { step: s.step, fn: s.fn };
    document.querySelectorAll(".stepnode").forEach(function (n) {
      var on = n.getAttribute("data-step") === s.step;
      n.classList.toggle("sel", on);
      if (on) n.setAttribute("aria-current", "step"); else n.removeAttribute("aria-current");
    });
    clear(outline); clear(source);
    outline.appendChild(heading(s.step));
    if (box) {
      outline.appendChild(relink(box.querySelector(".outline-box").cloneNode(true), s.step));
      source.appendChild(relink(box.querySelector(".source-box").cloneNode(true), s.step));
    } else {
      var loose = article(s.step).querySelector(".source-box");
      var p = document.createElement("p");
      p.className = "muted";
      p.textContent = loose ? "No indexed function holds these lines. / 这些行不在已索引的函数中。"
                            : "No source for this step. / 此步骤没有源码。";
      outline.appendChild(p);
      if (loose) source.appendChild(relink(loose.cloneNode(true), s.step));
    }
    var node = document.getElementById("node-" + s.step), dag = document.getElementById("dag");
    if (node && dag) {  /* inside the track only: the window does not move */
      var top = node.offsetTop - dag.offsetTop, bottom = top + node.offsetHeight;
      if (top < dag.scrollTop || bottom > dag.scrollTop + dag.clientHeight) dag.scrollTop = Math.max(0, top - 40);
    }
    var at = s.line ? source.querySelector('.l[data-line="' + s.line + '"]') : null;
    if (at) at.classList.add("at");
    var mark = at || (inStep ? source.querySelector(".l.p") : source.querySelector(".l"));
    source.scrollTop = mark ? Math.max(0, mark.offsetTop - source.offsetTop - 24) : 0;
    outlineTrack.scrollTop = 0;
  }
  function go(s, push) {
    var want = fragment(s);
    if (location.hash !== want) {
      if (push) history.pushState(null, "", want); else history.replaceState(null, "", want);
    }
    show(parse(want));
  }
  main.classList.add("js");
  outlineTrack.hidden = false;
  source.hidden = false;
  steps.forEach(function (a) {
    var node = document.getElementById("node-" + a.getAttribute("data-step"));
    if (node && !a.querySelector(".fn, .source-box")) node.classList.add("nocode");
  });
  document.querySelectorAll(".stepnode").forEach(function (n) {
    n.setAttribute("href", "#step=" + encodeURIComponent(n.getAttribute("data-step")));
    n.addEventListener("click", function (e) {
      e.preventDefault();
      go({ step: n.getAttribute("data-step"), fn: "" }, true);
      outline.focus && outline.setAttribute("tabindex", "-1");
    });
  });
  window.addEventListener("hashchange", function () {
    var s = parse(location.hash);
    if (!s.step) s.step = state.step;
    show(s);
  });
  var start = parse(location.hash);
  if (!start.step) {
    var withCode = steps.filter(function (a) { return a.querySelector(".fn"); })[0];
    start.step = start.fn ? state.step || stepIds[0] : (withCode || steps[0]).getAttribute("data-step");
  }
  go(start, false);
  /* ---- search over the functions and the lines the page holds ---- */
  var q = document.getElementById("ws-q"), hits = document.getElementById("ws-hits");
  function stepOf(box) { var a = box.closest("article.step"); return a ? a.getAttribute("data-step") : state.step; }
  function search(text) {
    var want = text.trim().toLowerCase(), out = [], seen = {};
    if (!want) return out;
    document.querySelectorAll("#reading .fn").forEach(function (box) {
      var fn = box.getAttribute("data-fn"), name = box.querySelector(".fname");
      if (seen[fn]) return;
      seen[fn] = true;
      if (name && name.textContent.toLowerCase().indexOf(want) >= 0)
        out.push({ kind: "fn", step: stepOf(box), fn: fn, text: name.textContent, line: 0 });
    });
    var lines = {};
    document.querySelectorAll("#reading .fn .src .l").forEach(function (l) {
      var box = l.closest(".fn"), fn = box.getAttribute("data-fn"), key = fn + ":" + l.dataset.line;
      if (lines[key] || out.length >= 40) return;
      var code = l.querySelector("code").textContent;
      if (code.toLowerCase().indexOf(want) < 0) return;
      lines[key] = true;
      out.push({ kind: "line", step: stepOf(box), fn: fn, text: l.dataset.line + ": " + code.trim(), line: +l.dataset.line });
    });
    return out;
  }
  function renderHits() {
    clear(hits);
    search(q.value).slice(0, 40).forEach(function (h) {
      var li = document.createElement("li"), b = document.createElement("button");
      b.type = "button"; b.className = "hit " + h.kind; b.textContent = h.text;
      b.setAttribute("translate", "no");
      b.addEventListener("click", function () {
        go({ step: h.step, fn: h.fn }, true);
        if (h.line) show({ step: h.step, fn: h.fn, line: h.line });
      });
      li.appendChild(b); hits.appendChild(li);
    });
  }
  var qTimer = 0;
  q.addEventListener("input", function () { clearTimeout(qTimer); qTimer = setTimeout(renderHits, 120); });
  window.atlasWorkspace = Object.freeze({
    ready: true,
    state: function () { return { step: state.step, fn: state.fn }; },
    search: function (text) { return search(text).map(function (h) { return [h.kind, h.text]; }); }
  });
})();

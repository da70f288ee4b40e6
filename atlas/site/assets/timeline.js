/* The timeline picture (timeline.html): the as-of control and a tooltip. The SVG is drawn on
   the server; this script moves the as-of line, greys the later marks and shows the details of
   a mark on hover or focus. Text goes in with textContent only. */
(function () {
  "use strict";
  var svg = document.getElementById("timeline");
  var form = document.getElementById("controls");
  var input = document.getElementById("t-asof");
  var status = document.getElementById("status");
  var tip = document.getElementById("tip");
  var line = document.getElementById("asof-line"), label = document.getElementById("asof-label");
  var labelDay = document.getElementById("asof-day");
  var after = document.getElementById("after");
  var start = svg.dataset.start.split("-").map(Number);
  var end = Number(svg.dataset.end);
  /* the month scale as drawn in Python: segments "m0,m1,x0,w" (folded runs have a small w) */
  var segs = svg.dataset.segs.split(";").map(function (s) { return s.split(",").map(Number); });
  var events = Array.prototype.slice.call(svg.querySelectorAll("a.ev"));
  var initial = input.value;

  /* the pinned lane labels: fit each box to its text as drawn (the server only estimates) */
  Array.prototype.forEach.call(document.querySelectorAll(".lane-pin g.lane"), function (g) {
    var box = g.querySelector("rect"), w = 0;
    g.querySelectorAll("text").forEach(function (t) { w = Math.max(w, t.getComputedTextLength()); });
    if (w > 0) box.setAttribute("width", Math.ceil(w + 12));
  });

  function dateX(d) {
    var p = d.split("-").map(Number);
    var days = new Date(Date.UTC(p[0], p[1], 0)).getUTCDate();
    var f = (p[0] - start[0]) * 12 + (p[1] - start[1]) + (p[2] - 1) / days;
    var seg = segs[segs.length - 1];
    for (var k = 0; k < segs.length; k++) if (f < segs[k][1]) { seg = segs[k]; break; }
    return Math.round((seg[2] + (f - seg[0]) * seg[3]) * 10) / 10;
  }
  function setAsOf(d) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) d = initial;
    var x = dateX(d), later = 0;
    line.setAttribute("x1", x); line.setAttribute("x2", x);
    label.setAttribute("x", x - 4);
    labelDay.textContent = d;
    after.setAttribute("x", x);
    after.setAttribute("width", Math.max(end - x, 0));
    events.forEach(function (a) {
      var l = a.dataset.date > d;
      a.classList.toggle("later", l);
      if (l) later++;
    });
    AtlasLang.say(status, (events.length - later) + " of " + events.length + " dated concepts visible as of " + d + ".",
          "截至 " + d + "，" + events.length + " 个有日期的概念中可见 " + (events.length - later) + " 个。");
  }
  function show(a, x, y) {
    var zh = AtlasLang.current() === "zh", both = AtlasLang.current() === "both";
    var prec = a.dataset.precision === "on-or-before" ? (zh ? "不晚于" : "on or before") : (zh ? "确切" : "exact");
    var name = zh ? (a.dataset.zh || a.dataset.en) : a.dataset.en + (both && a.dataset.zh ? " \u00b7 " + a.dataset.zh : "");
    tip.lang = zh ? "zh" : "en";
    tip.textContent = name + "\n" + (zh ? "首见于 " : "first seen in ") + a.dataset.repo + " \u00b7 " +
      a.dataset.date + " (" + prec + ")\nsha " + a.dataset.sha + "\n" + (zh ? "探针 " : "probe ") + a.dataset.probe;
    tip.hidden = false;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var left = Math.min(x + 14, window.innerWidth - w - 8), top = y + 14;
    if (top + h > window.innerHeight - 8) top = y - h - 10;
    tip.style.left = Math.max(left, 8) + "px";
    tip.style.top = Math.max(top, 8) + "px";
  }
  function hide() { tip.hidden = true; }
  events.forEach(function (a) {
    var t = a.querySelector("title");
    if (t) a.removeChild(t); /* the scripted tooltip replaces the browser's own */
    a.addEventListener("mouseenter", function (e) { show(a, e.clientX, e.clientY); });
    a.addEventListener("mousemove", function (e) { show(a, e.clientX, e.clientY); });
    a.addEventListener("mouseleave", hide);
    a.addEventListener("focus", function () {
      var r = a.getBoundingClientRect();
      show(a, r.left, r.bottom);
    });
    a.addEventListener("blur", hide);
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") hide(); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  input.addEventListener("change", function () { setAsOf(input.value); });
  input.addEventListener("input", function () { setAsOf(input.value); });
  form.hidden = false;
  setAsOf(input.value);

  window.atlasTimeline = Object.freeze({
    ready: true,
    setAsOf: function (d) { input.value = d; setAsOf(d); },
    later: function () {
      return events.filter(function (a) { return a.classList.contains("later"); })
                   .map(function (a) { return a.dataset.id; });
    },
    count: function () { return events.length; }
  });
})();

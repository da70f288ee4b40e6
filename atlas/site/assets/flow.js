/* One flow (flow-<id>.html). The page is server-written HTML: the step list (#phases), each step
   with its full detail, reads completely without script. This script adds a selected step,
   shown in the step panel (#panel) beside the list, or opened in place on a narrow screen.

   Three parts that know nothing of each other's insides, so the page can grow into a workspace
   of several tracks (phases, the current function, the source):
     FlowState  the selection, kept in the URL fragment (#step=<id>); Back and Forward work;
     StepList   marks the selected step in the list and scrolls it into view;
     StepPanel  shows the selected step's detail (a copy of the detail the list carries).
   FlowState.onChange(f) is how a track hears of a selection; a new track adds one listener. */
(function () {
  "use strict";
  document.body.classList.add("js");
  var steps = {};
  Array.prototype.forEach.call(document.querySelectorAll("#phases li.step"), function (li) {
    steps[li.dataset.step] = li;
  });
  var narrow = window.matchMedia ? window.matchMedia("(max-width: 760px)") : { matches: false };

  var FlowState = (function () {
    var listeners = [], selected = null;
    function parse() {
      var m = /^#step=(.+)$/.exec(location.hash);
      var id = null;
      if (m) { try { id = decodeURIComponent(m[1]); } catch (e) { id = null; } }
      return id && steps[id] ? id : null;
    }
    function tell() { listeners.forEach(function (f) { f(selected); }); }
    function fromUrl() { selected = parse(); tell(); }
    /* Back and Forward, or a typed address; a click has already told the tracks */
    window.addEventListener("hashchange", function () { if (parse() !== selected) fromUrl(); });
    return {
      get: function () { return selected; },
      /* a new selection is a history entry (Back returns to the previous one) */
      select: function (id) {
        if (!steps[id]) return false;
        if (id === selected) { tell(); return true; }
        selected = id;
        tell();  /* at once, so the panel the click focuses is the new step's */
        location.hash = "#step=" + encodeURIComponent(id);
        return true;
      },
      onChange: function (f) { listeners.push(f); },
      start: fromUrl
    };
  })();

  var StepList = (function () {
    function show(id) {
      Object.keys(steps).forEach(function (k) {
        var on = k === id;
        steps[k].classList.toggle("selected", on);
        var a = steps[k].querySelector(".step-link");
        if (on) a.setAttribute("aria-current", "step"); else a.removeAttribute("aria-current");
      });
      if (id) steps[id].scrollIntoView({ block: "nearest" });
    }
    return { show: show };
  })();

  var StepPanel = (function () {
    var card = document.getElementById("card"), hint = Array.prototype.slice.call(card.childNodes);
    function show(id) {
      while (card.firstChild) card.removeChild(card.firstChild);
      if (!id) { hint.forEach(function (n) { card.appendChild(n); }); delete card.dataset.step; return; }
      var detail = steps[id].querySelector(".detail").cloneNode(true);
      detail.removeAttribute("id");
      detail.classList.add("open");
      card.appendChild(detail);
      card.dataset.step = id;
    }
    return { show: show, heading: function () { return card.querySelector(".dtitle"); } };
  })();

  FlowState.onChange(StepList.show);
  FlowState.onChange(StepPanel.show);

  /* a click on a step's title selects it; on a narrow screen its detail opens in place */
  document.getElementById("phases").addEventListener("click", function (e) {
    var a = e.target.closest("a.step-link, a.pred");
    if (!a) return;
    e.preventDefault();
    var li = a.classList.contains("pred") ? steps[decodeURIComponent(a.getAttribute("href").slice(6))] : a.closest("li.step");
    if (!li) return;
    FlowState.select(li.dataset.step);
    if (!narrow.matches && a.classList.contains("step-link")) {
      var h = StepPanel.heading();
      if (h) { h.tabIndex = -1; h.focus({ preventScroll: true }); }
    }
  });
  FlowState.start();

  window.atlasFlow = Object.freeze({
    ready: true,
    select: function (id) { return FlowState.select(id); },
    selected: FlowState.get,
    steps: function () { return Object.keys(steps).sort(function (a, b) { return steps[a].dataset.n - steps[b].dataset.n; }); },
    onChange: FlowState.onChange
  });
})();

/* The overview table (index.html): filters and the as-of date. The table itself is rendered on
   the server; this script only hides, shows and marks rows, reading their data-* attributes. It
   never writes HTML: text goes in with textContent. */
(function () {
  "use strict";
  function fold(s) {
    return String(s || "").normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean).join(" ");
  }
  var form = document.getElementById("filters");
  var table = document.getElementById("overview");
  var status = document.getElementById("status");
  var f = {
    text: document.getElementById("f-text"), kind: document.getElementById("f-kind"),
    question: document.getElementById("f-question"), repo: document.getElementById("f-repo"),
    life: document.getElementById("f-life"), asof: document.getElementById("f-asof"),
    hide: document.getElementById("f-hide")
  };
  var initialAsOf = f.asof.value;
  var rows = Array.prototype.map.call(table.querySelectorAll("tr.row"), function (tr) {
    return {
      tr: tr, id: tr.dataset.id, kind: tr.dataset.kind, date: tr.dataset.date,
      life: tr.dataset.life, qs: tr.dataset.qs ? tr.dataset.qs.split(" ") : [],
      repos: tr.dataset.repos ? tr.dataset.repos.split(" ") : [],
      text: fold(tr.dataset.keys + " " + tr.textContent)
    };
  });
  var groups = Array.prototype.slice.call(table.tBodies);

  function passes(r, st) {
    if (st.kind && r.kind !== st.kind) return false;
    if (st.question === "_none") { if (r.qs.length) return false; }
    else if (st.question && r.qs.indexOf(st.question) < 0) return false;
    if (st.repo && r.repos.indexOf(st.repo) < 0) return false;
    if (st.life && r.life !== st.life) return false;
    if (st.words.length) {
      for (var i = 0; i < st.words.length; i++) if (r.text.indexOf(st.words[i]) < 0) return false;
    }
    return true;
  }
  function state() {
    var asof = /^\d{4}-\d{2}-\d{2}$/.test(f.asof.value) ? f.asof.value : initialAsOf;
    return { words: fold(f.text.value).split(" ").filter(Boolean), kind: f.kind.value,
             question: f.question.value, repo: f.repo.value, life: f.life.value, asof: asof,
             hide: f.hide.checked };
  }
  function apply() {
    var st = state(), shown = 0, later = 0;
    rows.forEach(function (r) {
      var isLater = !!r.date && r.date > st.asof;
      var on = passes(r, st) && !(st.hide && isLater);
      r.tr.classList.toggle("later", isLater);
      r.tr.classList.toggle("filtered", !on);
      if (on) { shown++; if (isLater) later++; }
    });
    if (st.question && st.question !== "_none") table.dataset.q = st.question;
    else delete table.dataset.q;
    groups.forEach(function (g) {
      g.classList.toggle("empty", !g.querySelector("tr.row:not(.filtered)"));
    });
    status.textContent = shown + " of " + rows.length + " concepts shown" +
      (later ? "; " + later + " not yet visible as of " + st.asof : "; as of " + st.asof) + ".";
  }
  function target(id) {
    rows.forEach(function (r) { r.tr.classList.toggle("target", r.id === id); });
    var tr = document.getElementById("c-" + id);
    if (!tr) return false;
    tr.scrollIntoView({ block: "center" });
    var a = tr.querySelector("a.name");
    if (a) a.focus({ preventScroll: true });
    return true;
  }
  function fromHash() {
    var m = /^#concept=([a-z0-9-]+)$/.exec(location.hash);
    if (m) target(m[1]);
  }
  /* typing waits for a short pause: a large table re-lays out on every filter */
  var pending = null;
  function flush() {
    if (pending !== null) { clearTimeout(pending); pending = null; apply(); }
  }
  form.addEventListener("submit", function (e) { e.preventDefault(); flush(); });
  form.addEventListener("input", function (e) {
    if (e.target === f.text) {
      if (pending !== null) clearTimeout(pending);
      pending = setTimeout(function () { pending = null; apply(); }, rows.length > 2000 ? 250 : 60);
    } else {
      apply();
    }
  });
  form.addEventListener("change", function (e) { if (e.target === f.text) flush(); else apply(); });
  form.addEventListener("reset", function () { setTimeout(apply, 0); });
  window.addEventListener("hashchange", fromHash);
  var box = document.getElementById("filterbox");
  box.hidden = false;
  if (window.matchMedia && window.matchMedia("(max-width: 700px)").matches) box.open = false;
  apply();
  fromHash();

  window.atlasOverview = Object.freeze({
    ready: true,
    order: function () { return rows.map(function (r) { return r.id; }); },
    shown: function () {
      flush();
      return rows.filter(function (r) { return !r.tr.classList.contains("filtered"); })
                 .map(function (r) { return r.id; });
    },
    later: function () {
      flush();
      return rows.filter(function (r) { return r.tr.classList.contains("later"); })
                 .map(function (r) { return r.id; });
    }
  });
})();

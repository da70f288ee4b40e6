/* The compact overview (index.html): filters, the as-of date, grouping by kind or by first seen
   year, and the answer sentence of a ● cell on click or focus. The grid itself is rendered on the
   server; this script hides, shows, moves and marks rows, reading their data-* attributes, and
   finds the sentences in the page's data. Text goes in with textContent only. */
(function () {
  "use strict";
  var L = AtlasLang;
  function fold(s) {
    return String(s || "").normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean).join(" ");
  }
  var D = JSON.parse(document.getElementById("atlas-data").textContent);
  var qById = {};
  D.questions.forEach(function (q) { qById[q.id] = q; });
  var form = document.getElementById("filters");
  var table = document.getElementById("grid");
  var status = document.getElementById("status");
  var detail = document.getElementById("detail");
  var f = {
    text: document.getElementById("f-text"), kind: document.getElementById("f-kind"),
    question: document.getElementById("f-question"), repo: document.getElementById("f-repo"),
    life: document.getElementById("f-life"), asof: document.getElementById("f-asof"),
    hide: document.getElementById("f-hide")
  };
  var initialAsOf = f.asof.value;
  /* a row's data: its id, the kind and lifecycle cells' data-*, the day of its <time>, the
     questions of its ● cells (by column) */
  var QS = D.questions.map(function (q) { return q.id; });
  function questionOf(td) { return QS[td.cellIndex - 1]; }
  function readRows() {
    var out = Array.prototype.map.call(table.querySelectorAll("tr.row"), function (tr) {
    var time = tr.cells[QS.length + 2].querySelector("time");
    return {
      tr: tr, id: tr.id.slice(2), kind: tr.cells[QS.length + 1].dataset.k, date: time ? time.dateTime : "",
      life: tr.cells[QS.length + 3].dataset.l,
      qs: Array.prototype.filter.call(tr.cells, function (c) { return c.className === "y"; }).map(questionOf),
      repos: tr.dataset.repos ? tr.dataset.repos.split(" ") : [], text: null
    };
  });
    out.forEach(function (r) { rowById[r.id] = r; });
    return out;
  }
  /* read once, when first needed (a 10,000-row grid is not walked at load) */
  var rowsRead = null, rowById = {};
  function R() { return rowsRead || (rowsRead = readRows()); }
  var byKind = Array.prototype.slice.call(table.tBodies);
  var byYear = null, grouping = "kind";

  /* ---- filters ---- */
  function textOf(r) {
    if (r.text === null) {
      var s = D.sentences[r.id] || {}, parts = [r.tr.dataset.keys, r.tr.textContent];
      Object.keys(s).forEach(function (q) { parts.push(s[q].en, s[q].zh); });
      r.text = fold(parts.join(" "));
    }
    return r.text;
  }
  function passes(r, st) {
    if (st.kind && r.kind !== st.kind) return false;
    if (st.question === "_none") { if (r.qs.length) return false; }
    else if (st.question && r.qs.indexOf(st.question) < 0) return false;
    if (st.repo && r.repos.indexOf(st.repo) < 0) return false;
    if (st.life && r.life !== st.life) return false;
    for (var i = 0; i < st.words.length; i++) if (textOf(r).indexOf(st.words[i]) < 0) return false;
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
    R().forEach(function (r) {
      var isLater = !!r.date && r.date > st.asof;
      var on = passes(r, st) && !(st.hide && isLater);
      r.tr.classList.toggle("later", isLater);
      r.tr.classList.toggle("filtered", !on);
      if (on) { shown++; if (isLater) later++; }
    });
    if (st.question && st.question !== "_none") table.dataset.q = st.question;
    else delete table.dataset.q;
    var live = {};
    R().forEach(function (r) { if (!r.tr.classList.contains("filtered")) live[r.tr.parentNode.dataset.group] = true; });
    Array.prototype.forEach.call(table.tBodies, function (g) { g.classList.toggle("empty", !live[g.dataset.group]); });
    L.say(status, shown + " of " + R().length + " concepts shown" +
          (later ? "; " + later + " not yet visible as of " + st.asof : "; as of " + st.asof) + ".",
          "显示 " + R().length + " 个概念中的 " + shown + " 个" +
          (later ? "；截至 " + st.asof + " 有 " + later + " 个尚未可见" : "；截至 " + st.asof) + "。");
    hideDetail();
  }

  /* ---- grouping: by kind (as rendered) or by first seen year ---- */
  function yearBodies() {
    var groups = {}, keys = [];
    R().slice().sort(function (a, b) {
      var da = a.date || "9999", db = b.date || "9999";
      return da < db ? -1 : da > db ? 1 : (a.id < b.id ? -1 : 1);
    }).forEach(function (r) {
      var k = r.date ? r.date.slice(0, 4) : "undated";
      if (!groups[k]) { groups[k] = []; keys.push(k); }
      groups[k].push(r.tr);
    });
    var cols = table.tHead.rows[0].cells.length;
    return keys.map(function (k) {
      var tb = document.createElement("tbody"), head = document.createElement("tr"), th = document.createElement("th");
      tb.dataset.group = k;
      tb.dataset.rows = groups[k].map(function (tr) { return tr.id.slice(2); }).join(" ");
      tb.style.containIntrinsicSize = "auto " + (26 * (groups[k].length + 1)) + "px";
      head.className = "group"; th.scope = "rowgroup"; th.colSpan = cols;
      if (k === "undated") th.appendChild(L.both("no dated sighting", "无日期"));
      else th.appendChild(document.createTextNode(k));
      var n = document.createElement("span");
      n.className = "count"; n.textContent = " \u00b7 " + groups[k].length;
      th.appendChild(n); head.appendChild(th); tb.appendChild(head);
      groups[k].forEach(function (tr) { tb.appendChild(tr); });
      return tb;
    });
  }
  function regroup(by) {
    if (by === grouping) return;
    if (by === "year") {
      byKind.forEach(function (tb) {  /* where each row goes back to */
        if (!tb.dataset.rows) tb.dataset.rows = Array.prototype.filter.call(tb.rows, function (tr) {
          return tr.classList.contains("row"); }).map(function (tr) { return tr.id.slice(2); }).join(" ");
      });
      if (!byYear) byYear = yearBodies();
      else byYear.forEach(function (tb) {  /* the rows go back in their year, in order */
        tb.dataset.rows.split(" ").forEach(function (id) { R(); tb.appendChild(rowById[id].tr); });
      });
      byKind.forEach(function (tb) { table.removeChild(tb); });
      byYear.forEach(function (tb) { table.appendChild(tb); });
    } else {
      byYear.forEach(function (tb) { table.removeChild(tb); });
      byKind.forEach(function (tb) {
        R();
        tb.dataset.rows.split(" ").forEach(function (id) { if (id) tb.appendChild(rowById[id].tr); });
        table.appendChild(tb);
      });
    }
    grouping = by;
    apply();
  }

  /* ---- the sentence of a cell: one tab stop for the grid, arrows move, focus or click opens ---- */
  var cells = null, current = null;
  function answerCells() {
    return Array.prototype.filter.call(table.querySelectorAll("td.y"), function (td) {
      return td.offsetParent !== null;
    });
  }
  function showDetail(td) {
    var tr = td.parentNode, id = tr.id.slice(2), q = questionOf(td);
    var s = (D.sentences[id] || {})[q];
    if (!s) return;
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    var head = document.createElement("div");
    head.className = "dhead";
    var name = tr.querySelector("th a").cloneNode(true);
    name.removeAttribute("href"); name.removeAttribute("title");
    head.appendChild(name);
    head.appendChild(document.createTextNode(" \u2014 "));
    var qn = qById[q] ? qById[q].names : { en: q, zh: q };
    head.appendChild(L.both(qn.en, qn.zh));
    detail.appendChild(head);
    [["en", s.en], ["zh", s.zh]].forEach(function (p) {
      if (!p[1]) return;
      var d = document.createElement("div");
      d.className = p[0] + (s.en && s.zh ? "" : " mono"); d.lang = p[0];
      d.textContent = p[1];
      detail.appendChild(d);
    });
    detail.hidden = false;
    var r = td.getBoundingClientRect(), w = Math.min(420, window.innerWidth - 16);
    detail.style.width = w + "px";
    detail.style.left = Math.max(8, Math.min(r.left + window.scrollX, window.scrollX + window.innerWidth - w - 8)) + "px";
    detail.style.top = (r.bottom + window.scrollY + 4) + "px";
    if (current && current !== td) current.removeAttribute("aria-describedby");
    td.setAttribute("aria-describedby", "detail");
    current = td;
  }
  function hideDetail() {
    detail.hidden = true;
    if (current) current.removeAttribute("aria-describedby");
  }
  function roving(td) {
    table.querySelectorAll('td.y[tabindex="0"]').forEach(function (c) { c.tabIndex = -1; });
    td.tabIndex = 0;
  }
  function focusCell(td) { if (td.tabIndex !== 0) td.tabIndex = -1; td.focus(); }
  var firstCell = table.querySelector("td.y");
  if (firstCell) firstCell.tabIndex = 0;
  table.addEventListener("focusin", function (e) {
    var td = e.target.closest && e.target.closest("td.y");
    if (td) { roving(td); showDetail(td); }
  });
  table.addEventListener("click", function (e) {
    var td = e.target.closest && e.target.closest("td.y");
    if (td) { focusCell(td); showDetail(td); }
  });
  table.addEventListener("mouseover", function (e) {
    var td = e.target.closest && e.target.closest("td.y");
    if (td && td !== current) showDetail(td);
  });
  table.addEventListener("keydown", function (e) {
    var td = e.target.closest && e.target.closest("td.y");
    if (!td) return;
    if (e.key === "Escape") { hideDetail(); return; }
    var moves = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] };
    var m = moves[e.key];
    if (!m) return;
    e.preventDefault();
    cells = answerCells();
    var i = cells.indexOf(td), next = null;
    if (m[0] === 0) next = cells[i + m[1]];
    else {
      var x = td.getBoundingClientRect().left, y = td.getBoundingClientRect().top, best = Infinity;
      cells.forEach(function (c) {
        var r = c.getBoundingClientRect(), dy = (r.top - y) * m[0];
        if (dy <= 1) return;
        var cost = dy * 4 + Math.abs(r.left - x);
        if (cost < best) { best = cost; next = c; }
      });
    }
    if (next) { focusCell(next); next.scrollIntoView({ block: "nearest", inline: "nearest" }); }
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") hideDetail(); });
  document.addEventListener("click", function (e) {
    if (!e.target.closest("td.y") && !e.target.closest("#detail")) hideDetail();
  });

  /* ---- a row named by the URL (#concept=id) ---- */
  function target(id) {
    R().forEach(function (r) { r.tr.classList.toggle("target", r.id === id); });
    var tr = document.getElementById("c-" + id);
    if (!tr) return false;
    tr.scrollIntoView({ block: "center" });
    var a = tr.querySelector("th a");
    if (a) a.focus({ preventScroll: true });
    return true;
  }
  function fromHash() {
    var m = /^#concept=([a-z0-9-]+)$/.exec(location.hash);
    if (m) target(m[1]);
  }

  /* typing waits for a short pause: a large grid re-lays out on every filter */
  var pending = null;
  function flush() {
    if (pending !== null) { clearTimeout(pending); pending = null; apply(); }
  }
  form.addEventListener("submit", function (e) { e.preventDefault(); flush(); });
  form.addEventListener("input", function (e) {
    if (e.target === f.text) {
      if (pending !== null) clearTimeout(pending);
      pending = setTimeout(function () { pending = null; apply(); }, R().length > 2000 ? 250 : 60);
    } else {
      apply();
    }
  });
  form.addEventListener("change", function (e) { if (e.target === f.text) flush(); else apply(); });
  form.addEventListener("reset", function () { setTimeout(apply, 0); });
  window.addEventListener("hashchange", fromHash);
  var group = document.getElementById("groupby");
  group.hidden = false;
  group.addEventListener("change", function (e) { if (e.target.checked) regroup(e.target.value); });
  var box = document.getElementById("filterbox");
  box.hidden = false;
  box.open = false;
  /* the server marked the rows later than its as-of day; the status line stays as written until
     a filter changes (a 10,000-row grid is not walked at load) */
  fromHash();

  window.atlasOverview = Object.freeze({
    ready: true,
    order: function () {
      return Array.prototype.map.call(table.querySelectorAll("tr.row"), function (tr) { return tr.id.slice(2); });
    },
    shown: function () {
      flush();
      return R().filter(function (r) { return !r.tr.classList.contains("filtered"); })
                 .map(function (r) { return r.id; });
    },
    later: function () {
      flush();
      return R().filter(function (r) { return r.tr.classList.contains("later"); })
                 .map(function (r) { return r.id; });
    },
    groupBy: function (by) {
      var r = document.querySelector('#groupby input[value="' + by + '"]');
      if (r) { r.checked = true; regroup(by); }
      return grouping;
    },
    groups: function () {
      return Array.prototype.map.call(table.tBodies, function (tb) { return tb.dataset.group; })
        .filter(function (g, i, a) { return a.indexOf(g) === i; });
    },
    apply: apply
  });
})();

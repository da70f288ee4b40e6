/* The API page of one repository: filters and pages over the symbols carried in the page's JSON
   block. Only one page of rows is in the document at a time (a repository may have tens of
   thousands of symbols). Text goes in with textContent; links are built from the page's own data.
   Our words go in both languages (AtlasLang.both: .en and .zh spans, the switch shows one);
   symbol names, signatures, releases and concept ids are identifiers (translate="no"). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("atlas-data").textContent);
  var rows = data.rows, rels = data.releases, per = data.pageRows;
  var body = document.getElementById("rows");
  var status = document.getElementById("status");
  var form = document.getElementById("filters");
  var pager = document.getElementById("pager");
  var f = { text: document.getElementById("f-text"), kind: document.getElementById("f-kind"),
            state: document.getElementById("f-state"), release: document.getElementById("f-release") };
  var L = AtlasLang, MARK = data.marks, LABEL = data.labels;  /* MARK: state -> [glyph, class, en, zh] */
  var shown = rows, page = 0;

  function columns(s) {
    var out = [], prev = ".", seen = false;
    for (var i = 0; i < s.length; i++) {
      var c = s.charAt(i);
      if (c === ".") out.push(prev !== "." ? "removed" : "absent");
      else { out.push(!seen ? "first" : (prev !== "." && prev !== c ? "changed" : "present")); seen = true; }
      prev = c;
    }
    return out;
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function link(href, text) { var a = el("a", text); a.href = href; return a; }
  function ours(tag, en, zh, cls) { var e = el(tag, "", cls); e.appendChild(L.both(en, zh)); return e; }
  function term(vocabulary, value) {
    var t = LABEL[vocabulary][value] || { en: value, zh: value };
    return L.both(t.en, t.zh);
  }
  function code(tag, text) { var e = el(tag, text); e.setAttribute("translate", "no"); return e; }
  /* a cell with its column's name, shown before the value when a phone stacks the rows */
  function cell(tag, en, zh) { var e = el(tag); e.setAttribute("data-en", en); e.setAttribute("data-zh", zh); return e; }
  function conceptName(c) {
    var n = data.names[c] || [c, ""], box = el("span");
    [["en", n[0]], ["zh", n[1]]].forEach(function (p) {
      if (!p[1]) return;
      var s = el("span", p[1], p[0] + (n[0] && n[1] ? "" : " mono")); s.lang = p[0]; box.appendChild(s);
    });
    return box;
  }
  function row(r) {
    var tr = document.createElement("tr");
    var th = code("th", ""); th.className = "c-sym"; th.scope = "row";
    var local = data.source[r[10]];  /* the site's own source page of the file, when the map wrote one */
    var where = local ? local + "#L" + r[11] : data.base + "/blob/" + data.head + "/" + r[10] + "#L" + r[11];
    th.appendChild(r[10] ? link(where, r[0]) : el("span", r[0]));
    var sig = el("span", r[8], "sig");
    sig.title = r[8];
    th.appendChild(sig);
    tr.appendChild(th);
    tr.appendChild(cell("td", "Kind", "种类")).appendChild(term("kind", r[1]));
    var first = cell("td", "First commit", "首次提交");
    if (r[3]) {
      first.appendChild(link(data.base + "/commit/" + r[3], r[2]));
      if (r[4] !== "exact") {
        first.appendChild(document.createTextNode(" "));
        first.appendChild(el("span", "", "prec")).appendChild(term("precision", r[4]));
      }
    } else first.appendChild(ours("span", "releases only", "仅按发布版本", "muted"));
    tr.appendChild(first);
    tr.appendChild(cell("td", "First release", "首个发布")).appendChild(r[5] ? code("span", r[5]) : L.both("never released", "从未发布"));
    columns(r[6]).forEach(function (c) {
      var td = el("td", "", "st st-" + MARK[c][1]);
      var g = el("span", MARK[c][0]); g.setAttribute("aria-hidden", "true");
      td.appendChild(g); td.appendChild(ours("span", MARK[c][2], MARK[c][3], "vh"));
      tr.appendChild(td);
    });
    var removed = cell("td", "Removed", "移除"); removed.textContent = r[7];
    tr.appendChild(removed);
    var cs = cell("td", "Concepts", "概念");
    r[9].forEach(function (c, i) {
      if (i) cs.appendChild(document.createTextNode(", "));
      cs.appendChild(link("../concepts/" + c + ".html", "")).appendChild(conceptName(c));
    });
    tr.appendChild(cs);
    return tr;
  }
  function render() {
    var pages = Math.max(1, Math.ceil(shown.length / per));
    page = Math.min(page, pages - 1);
    var frag = document.createDocumentFragment();
    shown.slice(page * per, page * per + per).forEach(function (r) { frag.appendChild(row(r)); });
    body.replaceChildren(frag);
    L.say(status, shown.length + " of " + rows.length + " symbols; page " + (page + 1) + " of " + pages + ".",
          rows.length + " 个符号中的 " + shown.length + " 个；第 " + (page + 1) + " / " + pages + " 页。");
    L.say(document.getElementById("p-where"), "page " + (page + 1) + " / " + pages, "第 " + (page + 1) + " / " + pages + " 页");
    document.getElementById("p-prev").disabled = page === 0;
    document.getElementById("p-next").disabled = page >= pages - 1;
    writeState();
  }
  /* ---- sorting: by name, kind, first commit or first release; the order of the releases is
     the page's (oldest first), a symbol in no release after every release ---- */
  var relIx = {};
  rels.forEach(function (n, i) { relIx[n] = i; });
  var KEYS = {
    name: function (r) { return [fold(r[0]), r[0]]; },
    kind: function (r) { return [r[1], fold(r[0])]; },
    first: function (r) { return [r[2] || "9999", fold(r[0])]; },
    release: function (r) { return [r[5] in relIx ? relIx[r[5]] : rels.length, r[2] || "9999", fold(r[0])]; }
  };
  var sort = "first", dir = 1;
  function cmp(a, b) {
    for (var i = 0; i < a.length; i++) { if (a[i] < b[i]) return -1; if (a[i] > b[i]) return 1; }
    return 0;
  }
  function sorted(list) {
    var key = KEYS[sort];
    return list.map(function (r, i) { return [key(r), i, r]; })
      .sort(function (a, b) { return dir * cmp(a[0], b[0]) || a[1] - b[1]; })
      .map(function (x) { return x[2]; });
  }
  var heads = Array.prototype.slice.call(document.querySelectorAll("#api thead th[data-sort]"));
  heads.forEach(function (th) {
    var b = el("button", "", "sort"); b.type = "button";
    while (th.firstChild) b.appendChild(th.firstChild);
    var arrow = el("span", "", "arrow"); arrow.setAttribute("aria-hidden", "true"); b.appendChild(arrow);
    th.appendChild(b);
    b.addEventListener("click", function () {
      var k = th.getAttribute("data-sort");
      dir = sort === k ? -dir : 1; sort = k;
      apply(true);
    });
  });
  function markSort() {
    heads.forEach(function (th) {
      var on = th.getAttribute("data-sort") === sort;
      if (on) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending"); else th.removeAttribute("aria-sort");
      th.querySelector(".arrow").textContent = on ? (dir > 0 ? " \u25b2" : " \u25bc") : "";
    });
  }
  /* ---- the state in the address: #q=..&kind=..&state=..&release=..&sort=..&dir=desc&page=N ---- */
  function writeState() {
    var parts = [];
    [["q", f.text.value], ["kind", f.kind.value], ["state", f.state.value], ["release", f.release.value]]
      .forEach(function (p) { if (p[1]) parts.push(p[0] + "=" + encodeURIComponent(p[1])); });
    if (sort !== "first" || dir < 0) parts.push("sort=" + sort, "dir=" + (dir > 0 ? "asc" : "desc"));
    if (page) parts.push("page=" + (page + 1));
    var h = parts.length ? "#" + parts.join("&") : "";
    if (h !== location.hash && !(h === "" && location.hash === "#")) history.replaceState(null, "", h || location.pathname + location.search);
  }
  function readState() {
    var st = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (p) {
      var i = p.indexOf("=");
      if (i > 0) { try { st[p.slice(0, i)] = decodeURIComponent(p.slice(i + 1)); } catch (e) { /* ignore */ } }
    });
    f.text.value = st.q || "";
    [[f.kind, st.kind], [f.state, st.state], [f.release, st.release]].forEach(function (p) {
      p[0].value = p[1] && Array.prototype.some.call(p[0].options, function (o) { return o.value === p[1]; }) ? p[1] : "";
    });
    sort = KEYS[st.sort] ? st.sort : "first";
    dir = st.dir === "desc" ? -1 : 1;
    return Math.max(0, (parseInt(st.page, 10) || 1) - 1);
  }
  function fold(s) { return String(s || "").toLowerCase(); }
  function apply(keepPage) {
    var words = fold(f.text.value).split(/\s+/).filter(Boolean);
    var kind = f.kind.value, state = f.state.value, rel = f.release.value;
    shown = rows.filter(function (r) {
      if (kind && r[1] !== kind) return false;
      if (rel && r[5] !== rel) return false;
      if (state === "present" && r[7]) return false;
      if (state === "removed" && !r[7]) return false;
      if (state === "unreleased" && r[5]) return false;
      if (words.length) {
        var hay = fold(r[0] + " " + r[8]);
        for (var i = 0; i < words.length; i++) if (hay.indexOf(words[i]) < 0) return false;
      }
      return true;
    });
    shown = sorted(shown);
    if (keepPage !== true) page = 0;
    markSort();
    render();
  }
  var timer = 0;
  f.text.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 120); });
  [f.kind, f.state, f.release].forEach(function (s) { s.addEventListener("change", apply); });
  form.addEventListener("reset", function () { setTimeout(apply, 0); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  document.getElementById("p-prev").addEventListener("click", function () { page--; render(); });
  document.getElementById("p-next").addEventListener("click", function () { page++; render(); });
  form.hidden = false;
  pager.hidden = false;
  /* a link to one symbol (api/<repo>.html#q=<name>) or a reload: the filters, order and page
     the address names */
  var startPage = readState();
  apply();
  if (startPage) { page = startPage; render(); }
  window.addEventListener("hashchange", function () { var p = readState(); apply(); if (p) { page = p; render(); } });
  window.atlasApi = { ready: true, shown: function () { return shown.length; },
    names: function () { return Array.prototype.map.call(body.querySelectorAll("th.c-sym > :first-child"),
                                                          function (a) { return a.textContent; }); },
    sort: function () { return [sort, dir > 0 ? "asc" : "desc"]; } };
})();

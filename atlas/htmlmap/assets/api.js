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
    tr.appendChild(el("td")).appendChild(term("kind", r[1]));
    var first = el("td");
    if (r[3]) {
      first.appendChild(link(data.base + "/commit/" + r[3], r[2]));
      if (r[4] !== "exact") {
        first.appendChild(document.createTextNode(" "));
        first.appendChild(el("span", "", "prec")).appendChild(term("precision", r[4]));
      }
    } else first.appendChild(ours("span", "releases only", "仅按发布版本", "muted"));
    tr.appendChild(first);
    tr.appendChild(el("td")).appendChild(r[5] ? code("span", r[5]) : L.both("never released", "从未发布"));
    columns(r[6]).forEach(function (c) {
      var td = el("td", "", "st st-" + MARK[c][1]);
      var g = el("span", MARK[c][0]); g.setAttribute("aria-hidden", "true");
      td.appendChild(g); td.appendChild(ours("span", MARK[c][2], MARK[c][3], "vh"));
      tr.appendChild(td);
    });
    tr.appendChild(el("td", r[7]));
    var cs = code("td", "");
    r[9].forEach(function (c, i) {
      if (i) cs.appendChild(document.createTextNode(", "));
      cs.appendChild(link("../concepts/" + c + ".html", c));
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
  }
  function fold(s) { return String(s || "").toLowerCase(); }
  function apply() {
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
    page = 0;
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
  void rels;
  if (/^#q=/.test(location.hash)) {  // a link to one symbol: api/<repo>.html#q=<name>
    f.text.value = decodeURIComponent(location.hash.slice(3));
    apply();
  } else render();
  window.atlasApi = { ready: true, shown: function () { return shown.length; } };
})();

/* Shared helpers of the atlas pages. Text from data is only ever set with textContent; links
   are built only from http(s) URLs or from our own page names. */
"use strict";
var AtlasUI = (function () {
  function data() {
    return JSON.parse(document.getElementById("atlas-data").textContent);
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null && text !== "") e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  var LOCAL = /^((index\.html|flow-[a-z0-9]+(-[a-z0-9]+)*\.html)(#[A-Za-z0-9=&%._~-]*)?|#[A-Za-z0-9=&%._~-]*)$/;
  function safeHref(href) {
    href = String(href || "");
    if (/^https?:\/\/[^\s]+$/i.test(href)) return href;
    if (LOCAL.test(href)) return href;
    return "";
  }
  /* A link when the href is safe, plain text otherwise. */
  function link(href, text, cls) {
    var h = safeHref(href);
    if (!h) return el("span", cls, text);
    var a = el("a", cls, text);
    a.href = h;
    if (/^https?:/i.test(h)) {
      a.target = "_blank";
      a.rel = "noopener noreferrer";
    }
    return a;
  }
  /* Both languages of a {en, zh} text, each in its own element; nothing when both are empty. */
  function bi(t, tag, cls) {
    if (!t || (!t.en && !t.zh)) return null;
    var box = el(tag || "div", cls);
    if (t.en) box.appendChild(el("span", "en", t.en));
    if (t.en && t.zh) box.appendChild(document.createTextNode(" "));
    if (t.zh) {
      var z = el("span", "zh", t.zh);
      z.lang = "zh";
      box.appendChild(z);
    }
    return box;
  }
  function section(title) {
    var s = el("section", "sec");
    s.appendChild(el("h3", null, title));
    return s;
  }
  function normalize(q) {
    return String(q || "").normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean).join(" ");
  }
  function hashParams() {
    var out = {};
    var h = location.hash.replace(/^#/, "");
    h.split("&").forEach(function (part) {
      if (!part) return;
      var i = part.indexOf("=");
      var k = i < 0 ? part : part.slice(0, i);
      var v = i < 0 ? "" : part.slice(i + 1);
      try { out[decodeURIComponent(k)] = decodeURIComponent(v); } catch (e) { /* ignore */ }
    });
    return out;
  }
  function evidenceList(list) {
    var ul = el("ul", "evidence");
    (list || []).forEach(function (ev) {
      var li = el("li");
      add(li, link(ev.href, ev.source || ev.href, "pin"));
      if (ev.symbol) add(li, el("code", "symbol", ev.symbol));
      if (ev.confidence) add(li, el("span", "tag", ev.confidence));
      add(li, bi(ev.supports, "div", "supports"));
      ul.appendChild(li);
    });
    return ul;
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }
  return { data: data, el: el, add: add, link: link, safeHref: safeHref, bi: bi,
           section: section, normalize: normalize, hashParams: hashParams,
           evidenceList: evidenceList, clear: clear };
})();

/* The language switch of every page (templates/nav.html): the radio buttons rule the page through
   CSS; this remembers the choice across pages (localStorage) and tells the page's own script. */
var AtlasLang = (function () {
  "use strict";
  var KEY = "atlas-lang", listeners = [];
  var radios = Array.prototype.slice.call(document.querySelectorAll('input[name="atlas-lang"]'));
  function current() {
    for (var i = 0; i < radios.length; i++) if (radios[i].checked) return radios[i].value;
    return "en";
  }
  function set(value, remember) {
    radios.forEach(function (r) { r.checked = r.value === value; });
    document.documentElement.lang = value === "zh" ? "zh" : "en";
    if (remember) { try { localStorage.setItem(KEY, value); } catch (e) { /* storage off */ } }
    listeners.forEach(function (f) { f(value); });
  }
  var saved = null;
  try { saved = localStorage.getItem(KEY); } catch (e) { /* storage off */ }
  if (saved === "en" || saved === "zh" || saved === "both") set(saved, false);
  radios.forEach(function (r) {
    r.addEventListener("change", function () { if (r.checked) set(r.value, true); });
  });
  /* Both languages of a string of ours, as the templates write them (.en / .zh spans). */
  function both(en, zh, tag) {
    var box = document.createDocumentFragment();
    [["en", en], ["zh", zh]].forEach(function (p) {
      var s = document.createElement(tag || "span");
      s.className = p[0]; s.lang = p[0]; s.textContent = p[1];
      box.appendChild(s);
    });
    return box;
  }
  /* Replace an element's text with a string of ours in both languages. */
  function say(el, en, zh) {
    while (el.firstChild) el.removeChild(el.firstChild);
    el.appendChild(both(en, zh));
  }
  return { current: current, set: function (v) { set(v, true); }, both: both, say: say,
           onChange: function (f) { listeners.push(f); } };
})();

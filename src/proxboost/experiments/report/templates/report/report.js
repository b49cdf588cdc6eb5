// The statement filters of index.html (by verdict and by family) and the opening of a statement
// named in the address (index.html#s-6c). Plain JavaScript, no library. The page works without
// it: every statement is written open and the controls that need this script are written hidden;
// the script shows the controls and closes every statement but the one the address names.
"use strict";
(function () {
  var form = document.getElementById("filters");
  var statements = Array.prototype.slice.call(document.querySelectorAll("details.statement"));
  var shown = document.getElementById("shown");

  function apply() {
    if (!form) {
      return;
    }
    var verdicts = Array.prototype.slice
      .call(form.querySelectorAll('input[name="verdict"]:checked'))
      .map(function (box) { return box.value; });
    var family = form.elements.family.value;
    var count = 0;
    statements.forEach(function (s) {
      var keep = verdicts.indexOf(s.dataset.verdict) >= 0 &&
        (family === "" || s.dataset.family === family);
      s.hidden = !keep;
      count += keep ? 1 : 0;
    });
    shown.textContent = count + " of " + statements.length + " statements shown";
  }

  function named() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    return target && target.tagName === "DETAILS" ? target : null;
  }

  function openNamed() {
    var target = named();
    if (target) {
      if (target.hidden && form) {
        form.reset();  // a statement named in the address is shown whatever the filters
        apply();
      }
      target.open = true;
      target.scrollIntoView();
    }
  }

  function openAll(open) {
    statements.forEach(function (s) { if (!s.hidden) { s.open = open; } });
  }

  // with the script, the list starts closed (a line per statement) but for the one named
  var first = named();
  statements.forEach(function (s) { s.open = s === first; });
  if (form) {
    form.hidden = false;
    shown.hidden = false;
    form.addEventListener("change", apply);
    document.getElementById("open-all").addEventListener("click", function () { openAll(true); });
    document.getElementById("close-all").addEventListener("click", function () { openAll(false); });
    apply();
  }
  window.addEventListener("hashchange", openNamed);
  openNamed();
})();

"use strict";
// Filters of the PyTorch API support section: status, file and API text.
// Rows carry data-status and data-file; filtering only hides rows, so the
// section reads the same without scripts.
(function () {
  var section = document.getElementById("api-support");
  if (!section) return;
  var status = document.getElementById("as-status");
  var file = document.getElementById("as-file");
  var search = document.getElementById("as-search");
  var count = document.getElementById("as-count");
  var rows = section.querySelectorAll("tbody tr");
  function apply() {
    var shown = 0;
    var text = search.value.toLowerCase();
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var visible = (!status.value || row.getAttribute("data-status") === status.value) &&
        (!file.value || row.getAttribute("data-file") === file.value) &&
        (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
      row.classList.toggle("hidden", !visible);
      if (visible) shown++;
    }
    count.textContent = shown + " of " + rows.length + " rows";
  }
  status.addEventListener("change", apply);
  file.addEventListener("change", apply);
  search.addEventListener("input", apply);
  apply();
})();

"use strict";
// Errors anywhere on the page are shown in #page-errors, so a headless test
// (and a reviewer) sees them without a console.
function reportError(text) {
  var box = document.getElementById("page-errors");
  box.hidden = false;
  box.textContent += text + "\n";
}
window.onerror = function (message, source, line) { reportError("error: " + message + " (line " + line + ")"); };
window.addEventListener("unhandledrejection", function (e) { reportError("error: " + e.reason); });

var EAGER_FILES = 20;
var KEYWORDS = {
  c: "auto bool break case catch char class const constexpr continue default delete do double else enum explicit extern false float for friend goto if inline int long namespace new nullptr operator private protected public register return short signed sizeof size_t static static_cast struct switch template this throw true try typedef typename union unsigned using virtual void volatile while __global__ __device__ __host__ __shared__ __constant__ dim3 half #include #define #if #ifdef #ifndef #endif #else #elif #pragma",
  py: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self",
  cmake: "if else elif endif foreach endforeach function endfunction macro endmacro set project add_library add_executable target_link_libraries find_package include_directories option",
};
var KW_SETS = {};
Object.keys(KEYWORDS).forEach(function (k) {
  KW_SETS[k] = Object.create(null);
  KEYWORDS[k].split(" ").forEach(function (w) { KW_SETS[k][w] = true; });
});
function flavour(language) {
  if (language === "python") return "py";
  if (language === "cmake") return "cmake";
  return "c";
}

var data = JSON.parse(document.getElementById("report-data").textContent);
var files = data.files.map(prepareFile).filter(function (f) { return f.hunks.length > 0; });
var filters = { level: "", library: "", code: "", file: "", q: "" };

// Splits a unified diff into hunks and attaches the edits and diagnostics
// whose (original) line falls inside each; the rest go to a trailing
// pseudo-hunk so no diagnostic is lost.
function prepareFile(file) {
  var str = data.strings;
  file.edits = file.edits.map(function (e) {
    return { line: e[0], code: e[1], status: e[2], cuda_name: str[e[3]], replacement: str[e[4]] };
  });
  file.diagnostics = file.diags.map(function (d) {
    return { line: d[0], level: d[1], code: d[2], library: d[3], cuda_name: str[d[4]], message: str[d[5]], suggestion: d[6] < 0 ? "" : str[d[6]] };
  });
  var hunks = [];
  var lines = (file.diff || "").split("\n");
  var hunk = null;
  lines.forEach(function (text) {
    var m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(text);
    if (m) {
      hunk = { header: text, oldStart: +m[1], oldLen: m[2] === undefined ? 1 : +m[2], newStart: +m[3], lines: [], edits: [], diags: [] };
      hunks.push(hunk);
    } else if (hunk && text.length > 0 && " +-".indexOf(text[0]) >= 0) {
      hunk.lines.push(text);
    }
  });
  function home(line) {
    for (var i = 0; i < hunks.length; i++) {
      var h = hunks[i];
      if (line >= h.oldStart && line < h.oldStart + Math.max(h.oldLen, 1)) return h;
    }
    return null;
  }
  var rest = { header: "", oldStart: 0, oldLen: 0, newStart: 0, lines: [], edits: [], diags: [], outside: true };
  file.edits.forEach(function (e) { (home(e.line) || rest).edits.push(e); });
  file.diagnostics.forEach(function (d) { (home(d.line) || rest).diags.push(d); });
  if (rest.edits.length || rest.diags.length) hunks.push(rest);
  hunks.forEach(function (h) { describeHunk(h, file); });
  var libs = Object.create(null);
  file.libraries.forEach(function (l) { libs[l] = true; });
  var stats = { converted: file.converted, not_converted: file.left, effort_hours: file.hours };
  return { path: file.path, language: file.language, stats: stats, hunks: hunks, libraries: libs, section: null, rendered: false };
}

function describeHunk(h, file) {
  var statuses = Object.create(null), codes = Object.create(null);
  h.edits.forEach(function (e) { statuses[e.status] = true; codes[e.code] = true; });
  h.diags.forEach(function (d) { statuses[d.level] = true; codes[d.code] = true; });
  h.statuses = statuses;
  h.codes = codes;
  h.haystack = (file.path + "\n" + h.lines.join("\n") + "\n" +
    h.edits.map(function (e) { return e.cuda_name + " " + e.replacement; }).join("\n") + "\n" +
    h.diags.map(function (d) { return d.cuda_name + " " + d.message + " " + (d.suggestion || ""); }).join("\n")).toLowerCase();
}

function hunkMatches(file, h) {
  if (filters.level && !h.statuses[filters.level]) return false;
  if (filters.code && !h.codes[filters.code]) return false;
  if (filters.q && h.haystack.indexOf(filters.q) < 0) return false;
  return true;
}
function fileMatches(file) {
  if (filters.file && file.path.toLowerCase().indexOf(filters.file) < 0) return false;
  if (filters.library && !file.libraries[filters.library]) return false;
  return file.hunks.some(function (h) { return hunkMatches(file, h); });
}

// ---- rendering (all text through textContent, never innerHTML) ----
function el(tag, className, text) {
  var node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
function badge(status) { return el("span", "badge b-" + status, status); }

function highlight(target, code, kind) {
  var words = KW_SETS[kind];
  var comment = kind === "c" ? /^(\/\/.*|\/\*.*?(\*\/|$))/ : /^#.*/;
  var token = /^("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|#?[A-Za-z_]\w*|\d[\w.]*|\s+|.)/;
  var rest = code;
  while (rest.length > 0) {
    var m = comment.exec(rest);
    var cls = m ? "tk-com" : "";
    if (!m) m = token.exec(rest);
    var text = m[0];
    if (!cls) {
      if (text[0] === '"' || text[0] === "'") cls = "tk-str";
      else if (words[text]) cls = "tk-kw";
      else if (/^\d/.test(text)) cls = "tk-num";
    }
    target.appendChild(cls ? el("span", cls, text) : document.createTextNode(text));
    rest = rest.slice(text.length);
  }
}

function diagNode(d) {
  var node = el("span", "diag " + d.level);
  node.appendChild(badge(d.level));
  node.appendChild(document.createTextNode(" "));
  node.appendChild(el("span", "code", d.code + " line " + d.line));
  node.appendChild(document.createTextNode(" " + d.message));
  if (d.suggestion) node.appendChild(el("span", "note", " → " + d.suggestion));
  return node;
}

function renderHunk(file, h) {
  var node = el("div", "hunk");
  var label = el("div", "label");
  label.appendChild(el("span", "range", h.outside ? "outside the diff" : h.header));
  Object.keys(h.statuses).forEach(function (s) { label.appendChild(badge(s)); });
  Object.keys(h.codes).forEach(function (c) { label.appendChild(el("span", "code", c)); });
  // One entry per distinct rewrite, with a count: a hunk of a hundred edits
  // keeps a label a reviewer can read (and that fits on the screen).
  var seen = Object.create(null), order = [];
  h.edits.forEach(function (e) {
    var text = e.cuda_name + (e.replacement && e.status !== "annotation" ? " → " + e.replacement.trim() : "");
    if (!(text in seen)) { seen[text] = 0; order.push(text); }
    seen[text] += 1;
  });
  order.forEach(function (text) {
    label.appendChild(el("span", "note", seen[text] > 1 ? text + " ×" + seen[text] : text));
  });
  node.appendChild(label);
  var pre = el("pre", "diff");
  var byLine = Object.create(null);
  h.diags.forEach(function (d) { (byLine[d.line] = byLine[d.line] || []).push(d); });
  var oldNo = h.oldStart, newNo = h.newStart, kind = flavour(file.language);
  h.lines.forEach(function (text) {
    var sign = text[0];
    var row = el("span", "ln" + (sign === "+" ? " add" : sign === "-" ? " del" : ""));
    row.appendChild(el("span", "no", sign === "+" ? "" : String(oldNo)));
    row.appendChild(el("span", "no", sign === "-" ? "" : String(newNo)));
    row.appendChild(document.createTextNode(sign === " " ? " " : sign));
    highlight(row, text.slice(1), kind);
    pre.appendChild(row);
    var attachAt = sign === "+" ? null : oldNo;
    if (sign !== "+") oldNo++;
    if (sign !== "-") newNo++;
    if (attachAt !== null && byLine[attachAt]) {
      byLine[attachAt].forEach(function (d) { pre.appendChild(diagNode(d)); });
      delete byLine[attachAt];
    }
  });
  Object.keys(byLine).forEach(function (k) { byLine[k].forEach(function (d) { pre.appendChild(diagNode(d)); }); });
  node.appendChild(pre);
  h.node = node;
  return node;
}

function renderBody(file) {
  if (file.rendered) return;
  file.rendered = true;
  var body = file.section.querySelector(".body");
  file.hunks.forEach(function (h) { body.appendChild(renderHunk(file, h)); });
  applyToFile(file);
}

function fileSection(file) {
  var section = el("section", "file");
  section.dataset.path = file.path;
  var head = el("div", "head");
  head.appendChild(el("span", "path", file.path));
  var s = file.stats;
  head.appendChild(el("span", "code", s.converted + " converted, " + s.not_converted + " left, " + s.effort_hours.toFixed(1) + " h"));
  head.addEventListener("click", function () { section.classList.toggle("collapsed"); renderBody(file); });
  section.appendChild(head);
  section.appendChild(el("div", "body"));
  file.section = section;
  return section;
}

function applyToFile(file) {
  var show = fileMatches(file);
  file.section.classList.toggle("hidden", !show);
  if (!file.rendered) return;
  file.hunks.forEach(function (h) { h.node.classList.toggle("hidden", !hunkMatches(file, h)); });
}

function applyFilters() {
  var shown = 0;
  files.forEach(function (f) { applyToFile(f); if (fileMatches(f)) shown++; });
  document.getElementById("f-count").textContent = shown + " of " + files.length + " files";
}

// ---- filters, URL hash, keyboard ----
function fillSelect(id, values) {
  var select = document.getElementById(id);
  values.sort().forEach(function (v) { var o = el("option", "", v); o.value = v; select.appendChild(o); });
}
function collectOptions() {
  var levels = {}, codes = {}, libs = {};
  files.forEach(function (f) {
    Object.keys(f.libraries).forEach(function (l) { libs[l] = true; });
    f.hunks.forEach(function (h) {
      Object.keys(h.statuses).forEach(function (s) { levels[s] = true; });
      Object.keys(h.codes).forEach(function (c) { codes[c] = true; });
    });
  });
  fillSelect("f-level", Object.keys(levels));
  fillSelect("f-library", Object.keys(libs));
  fillSelect("f-code", Object.keys(codes));
}

var CONTROLS = { level: "f-level", library: "f-library", code: "f-code", file: "f-file", q: "search" };
// Free-text filters ignore case; the others are exact ids.
function normalise(key, value) { return key === "q" || key === "file" ? value.toLowerCase() : value; }
function readHash() {
  var params = new URLSearchParams(location.hash.replace(/^#/, ""));
  Object.keys(CONTROLS).forEach(function (key) {
    filters[key] = normalise(key, params.get(key) || "");
    document.getElementById(CONTROLS[key]).value = params.get(key) || "";
  });
  applyFilters();
}
function writeHash() {
  var params = new URLSearchParams();
  Object.keys(CONTROLS).forEach(function (key) {
    var value = document.getElementById(CONTROLS[key]).value;
    filters[key] = normalise(key, value);
    if (value) params.set(key, value);
  });
  history.replaceState(null, "", "#" + params.toString());
  applyFilters();
}

// Brings a hunk into view below the sticky filter bar: centred when it fits,
// else with its label (status, rule codes) just under the bar, which
// scrollIntoView({ block: "center" }) would push off the top of a tall hunk.
function reveal(node) {
  // The bar's height, where it sticks; above the fold it is still lower.
  var bar = document.getElementById("filters").offsetHeight;
  var box = node.getBoundingClientRect();
  var room = window.innerHeight - bar;
  var gap = box.height < room ? (room - box.height) / 2 : 8;
  window.scrollBy(0, box.top - bar - gap);
}
function visibleHunks() {
  // A folded file's hunks are not on screen either.
  return Array.prototype.slice.call(document.querySelectorAll("section.file:not(.hidden):not(.collapsed) .hunk:not(.hidden)"));
}
// The index `step` away from `current` among `hunks`. A current hunk that a
// filter or a fold has since hidden still marks the place: the next step
// goes to the visible hunk just after (or before) it, not back to the top.
function stepFrom(hunks, current, step) {
  var at = hunks.indexOf(current);
  if (at >= 0 || !current) return at + step;
  var after = 0;
  while (after < hunks.length && current.compareDocumentPosition(hunks[after]) & Node.DOCUMENT_POSITION_PRECEDING) after++;
  return step > 0 ? after : after - 1;
}
function moveHunk(step) {
  var hunks = visibleHunks();
  var current = document.querySelector(".hunk.current");
  var index = stepFrom(hunks, current, step);
  if (index >= hunks.length) {
    var next = files.filter(function (f) { return !f.rendered && fileMatches(f); })[0];
    if (next) { renderBody(next); hunks = visibleHunks(); }
  }
  var target = hunks[Math.max(0, Math.min(index, hunks.length - 1))];
  if (!target) return;
  if (current) current.classList.remove("current");
  target.classList.add("current");
  reveal(target);
}
document.addEventListener("keydown", function (e) {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") { if (e.key === "Escape") e.target.blur(); return; }
  // Ctrl+P prints, Ctrl+K searches the web: chords are the browser's.
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "j" || e.key === "n") moveHunk(1);
  else if (e.key === "k" || e.key === "p") moveHunk(-1);
  else if (e.key === "/") { e.preventDefault(); document.getElementById("search").focus(); }
});

function start() {
  var main = document.getElementById("files");
  if (files.length === 0) main.appendChild(el("p", "empty", "No file changed and nothing left for a person."));
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) { observer.unobserve(entry.target); renderBody(entry.target.file); }
    });
  }, { rootMargin: "1200px" }) : null;
  files.forEach(function (f, i) {
    main.appendChild(fileSection(f));
    f.section.file = f;
    if (i < EAGER_FILES || !observer) renderBody(f); else observer.observe(f.section);
  });
  collectOptions();
  Object.keys(CONTROLS).forEach(function (key) {
    document.getElementById(CONTROLS[key]).addEventListener("input", writeHash);
  });
  document.querySelectorAll("#work-left a").forEach(function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      var file = files.filter(function (f) { return f.path === a.dataset.file; })[0];
      if (file) { renderBody(file); file.section.scrollIntoView(); }
    });
  });
  window.addEventListener("hashchange", readHash);
  readHash();
  document.body.dataset.ready = "true";
  // Time from navigation to a usable page; lets a test or a reviewer check speed.
  document.body.dataset.readyMs = String(Math.round(performance.now()));
}
start();

// rffbench report: every data table sortable (click or Enter on a header; again: the other
// way) and filterable (the box above it keeps the rows containing its text). No dependency.
(function () {
  "use strict";
  // a cell's sort key: a number where the text is one ("0.25", "1.2e-05", "0.4 (n=2)",
  // "1.27x"), else its lower-case text; null for an empty or n/a cell (always last)
  function key(text) {
    var t = text.replace(/\s*\(n=\d+\)$/, "").trim();
    if (t === "" || t === "n/a") return null;
    var v = Number(t.replace(/x$/, ""));
    return isNaN(v) ? t.toLowerCase() : v;
  }
  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === "number" ? -1 : 1; // numbers before text
  }
  function setUp(table) {
    var body = table.tBodies[0];
    var head = table.tHead.rows[0];
    var rows = Array.prototype.slice.call(body.rows);
    Array.prototype.forEach.call(head.cells, function (th, col) {
      th.setAttribute("role", "button");
      th.tabIndex = 0;
      th.title = "sort by this column";
      function sort() {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(head.cells, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var keyed = rows.map(function (r, i) { return [key(r.cells[col].textContent), i, r]; });
        keyed.sort(function (a, b) {
          if (a[0] === null || b[0] === null) {
            return (a[0] === null) - (b[0] === null) || a[1] - b[1];
          }
          return (asc ? 1 : -1) * compare(a[0], b[0]) || a[1] - b[1]; // stable
        });
        keyed.forEach(function (k) { body.appendChild(k[2]); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
    var box = document.createElement("input");
    box.type = "search";
    box.className = "filter";
    box.placeholder = "filter rows";
    box.setAttribute("aria-label", "filter the rows of the table below");
    box.addEventListener("input", function () {
      var q = box.value.toLowerCase();
      rows.forEach(function (r) {
        r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
    table.parentNode.insertBefore(box, table);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.data"), setUp);
})();

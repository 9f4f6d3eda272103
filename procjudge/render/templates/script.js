(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function openFinding(hash) {
    if (!hash || hash.length < 2) return;
    var target = document.getElementById(decodeURIComponent(hash.slice(1)));
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.classList.add("flash");
      window.setTimeout(function () { target.classList.remove("flash"); }, 1600);
    }
  }
  window.addEventListener("hashchange", function () { openFinding(window.location.hash); });
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (link) openFinding(link.getAttribute("href"));
  });
  openFinding(window.location.hash);
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });

  var natural = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  // Headers whose button sorts rows by that column: text in natural order (HumanEval/2 before
  // HumanEval/10), numbers as numbers, the page's order breaking ties; each key is read once.
  // rowsOf() gives the rows to sort, done(sorted) puts them back.
  function sortBy(headers, rowsOf, done) {
    Array.prototype.forEach.call(headers, function (th) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var key = th.getAttribute("data-key"), numeric = th.getAttribute("data-type") === "number";
        var descending = th.getAttribute("aria-sort") !== "descending";
        Array.prototype.forEach.call(headers, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        var keyed = Array.prototype.map.call(rowsOf(), function (row) {
          var value = row.getAttribute("data-" + key);
          return { row: row, value: numeric ? parseFloat(value) : value, k: parseInt(row.getAttribute("data-k"), 10) };
        });
        keyed.sort(function (a, b) {
          var order = numeric ? a.value - b.value : natural.compare(a.value, b.value);
          if (order === 0) order = a.k - b.k;
          return descending ? -order : order;
        });
        done(keyed.map(function (entry) { return entry.row; }));
      });
    });
  }

  // a small table of class "sortable" (compare's every pair): every row stays in the document
  document.querySelectorAll("table.sortable").forEach(function (sortable) {
    var tbody = sortable.tBodies[0];
    sortBy(sortable.tHead.rows[0].cells, function () { return tbody.rows; }, function (sorted) {
      var fragment = document.createDocumentFragment();
      sorted.forEach(function (row) { fragment.appendChild(row); });
      tbody.appendChild(fragment);
    });
  });

  var table = document.getElementById("runs");
  if (!table) return;
  // The table holds every run; with the script, only the rows that match the filters are in
  // the document, sorted, a page at a time (a browser lays out 500 rows at once, not 10,000).
  var PAGE = 500;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var matches = rows;
  var limit = PAGE;
  var filters = {
    agent: document.getElementById("filter-agent"),
    tier: document.getElementById("filter-tier"),
    finding: document.getElementById("filter-finding"),
    text: document.getElementById("filter-text")
  };
  var shown = document.getElementById("shown");
  var more = document.getElementById("more");

  function render() {
    body.textContent = "";
    var fragment = document.createDocumentFragment();
    matches.slice(0, limit).forEach(function (row) { fragment.appendChild(row); });
    body.appendChild(fragment);
    var visible = Math.min(limit, matches.length);
    shown.textContent = matches.length + " of " + rows.length + " runs match" +
      (visible < matches.length ? "; the first " + visible + " are shown" : "");
    more.hidden = visible >= matches.length;
  }

  function applyFilters() {
    var agent = filters.agent.value, tier = filters.tier.value, finding = filters.finding.value;
    var text = filters.text.value.toLowerCase();
    matches = rows.filter(function (row) {
      return (!agent || row.getAttribute("data-agent") === agent) && (!tier || row.getAttribute("data-tier") === tier) &&
        (!finding || (" " + row.getAttribute("data-findings") + " ").indexOf(" " + finding + " ") >= 0) &&
        (!text || row.getAttribute("data-id").toLowerCase().indexOf(text) >= 0);
    });
    limit = PAGE;
    render();
  }
  Object.keys(filters).forEach(function (key) {
    filters[key].addEventListener(key === "text" ? "input" : "change", applyFilters);
  });
  more.addEventListener("click", function () { limit += PAGE; render(); });

  // the runs table: sorted, then shown a page at a time through the filters
  sortBy(table.tHead.rows[0].cells, function () { return rows; }, function (sorted) {
    rows = sorted;
    applyFilters();
  });
  applyFilters();
})();

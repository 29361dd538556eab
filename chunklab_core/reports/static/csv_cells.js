/* Cells that cannot start a formula, and CSV text a spreadsheet reads back row for row: the
   browser's copy of chunklab_core/core/csv_cells.py (one rule, two languages; the tests run both
   on the same hostile rows and require identical bytes: tests/test_faults_round4_csv.py).

   csvCell(v): a string beginning with = + - @ TAB or CR gets a leading ' (OWASP, "CSV Injection");
   so does one beginning with ' followed by one of those or another ' (the rule stays reversible);
   numbers and other non-strings are returned as given.
   csvText(rows): rows (arrays of cells) as CSV text, every cell through csvCell, a field holding a
   comma, a double quote, LF or a lone CR quoted (RFC 4180), rows ended by "\n".

   A page includes this file (a <script src> or its text inlined) and calls csvText where it used
   its own CSV writer. Not handled: downloading (the page's own Blob and link). */
(function (root) {
  "use strict";
  var FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"];
  var QUOTE = "'";

  function csvCell(value) {
    if (typeof value !== "string" || value === "") return value;
    var first = value.charAt(0), second = value.charAt(1);
    if (FORMULA_STARTS.indexOf(first) >= 0 ||
        (first === QUOTE && second !== "" && (FORMULA_STARTS.indexOf(second) >= 0 || second === QUOTE))) {
      return QUOTE + value;
    }
    return value;
  }

  function csvField(value) {
    // a missing value and a number that is not finite are empty, as pandas writes NaN
    var missing = value === null || value === undefined || (typeof value === "number" && !isFinite(value));
    var text = missing ? "" : String(value);
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function csvLine(cells) {
    if (cells.length === 1 && csvField(cells[0]) === "") return '""\n';  // an empty line is no row
    return cells.map(csvField).join(",") + "\n";
  }

  function csvText(rows) {
    return rows.map(function (row) { return csvLine(row.map(csvCell)); }).join("");
  }

  var api = { csvCell: csvCell, csvField: csvField, csvLine: csvLine, csvText: csvText };
  if (typeof module !== "undefined" && module.exports) module.exports = api;  // node (the tests)
  else { root.csvCell = csvCell; root.csvText = csvText; root.chunklabCsv = api; }  // a page
})(this);

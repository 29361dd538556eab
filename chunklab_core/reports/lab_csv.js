/* CSV cells that cannot start a formula, for pages that export what they show (the lab).
 *
 * The same rule as the Python side's chunklab_core/core/csv_cells.py (OWASP, "CSV Injection"):
 * a text cell beginning with =, +, -, @, a tab or a carriage return gets a leading single quote,
 * and so does one beginning with a quote followed by one of those characters or another quote
 * (so the rule is reversible, as csv_cells.restored_cell undoes it). Numbers stay numbers: a
 * spreadsheet does not evaluate -0.5. A cell holding a comma, a double quote, a CR or an LF is
 * quoted (RFC 4180: quotes doubled); rows end with CRLF, as Python's csv module writes them.
 * Tested on the same hostile rows as the Python side (tests/test_lab_browser.py).
 * Not handled: reading CSV back, other separators.
 */
"use strict";
const LabCsv = (() => {
  const STARTS = ["=", "+", "-", "@", "\t", "\r"];
  const QUOTE = "'";
  function neutralCell(value) {
    if (typeof value !== "string" || value === "") return value;
    const first = value[0], second = value.slice(1, 2);
    if (STARTS.includes(first) || (first === QUOTE && second !== "" && (STARTS.includes(second) || second === QUOTE)))
      return QUOTE + value;
    return value;
  }
  function field(value) {
    if (value === null || value === undefined) return "";
    const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : String(neutralCell(String(value)));
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }
  function csvText(rows) { return rows.map(row => row.map(field).join(",")).join("\r\n") + "\r\n"; }
  return { neutralCell, field, csvText };
})();
if (typeof window !== "undefined") window.LabCsv = LabCsv;
if (typeof module !== "undefined") module.exports = LabCsv;

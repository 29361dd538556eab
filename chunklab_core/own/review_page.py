"""The review page of ``chunklab-own review`` (``own.review``): one generated question at a time.

Handles: the HTML and script. Every string from the file or the documents is put in the page with
``textContent`` (never ``innerHTML``); the only server-filled string is the file name, escaped by
``own.review``. Keys: ``a`` accept, ``r`` reject, ``e`` edit (Enter saves the edit, Esc leaves
it), ``j``/``k`` next/previous. The secret comes from the address's fragment (``#s=...``), kept
in ``sessionStorage``, and is sent with every request.

Not handled: the server (``own.review``), several tabs (the last decision written wins).
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>review {title}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
.meta{color:#555}.reasons{color:#a40}.gold{background:#ffe58a}.ctx{white-space:pre-wrap;border-left:3px solid #ccc;
padding-left:1rem}button{margin-right:.5rem}input{width:100%;font:inherit}.state{font-weight:bold}
</style></head><body>
<h1>Review generated questions: {title}</h1>
<p class="meta" id="progress"></p>
<p class="meta"><span id="qid"></span> · <span id="doc"></span> · <span class="state" id="state"></span></p>
<p class="reasons" id="reasons"></p>
<h2 id="query"></h2>
<p>gold snippet: <span class="gold" id="gold"></span></p>
<div id="editor" hidden><label>question <input id="edit-query"></label>
<label>gold snippet (as the document writes it) <input id="edit-gold"></label></div>
<p><button id="accept">accept (a)</button><button id="reject">reject (r)</button><button id="edit">edit (e)</button>
<button id="prev">previous (k)</button><button id="next">next (j)</button></p>
<h3>In the document</h3>
<p class="ctx"><span id="before"></span><span class="gold" id="ctx-gold"></span><span id="after"></span></p>
<p class="meta" id="error"></p>
<script>
const params = new URLSearchParams(location.hash.slice(1));
if (params.get("s")) { sessionStorage.setItem("secret", params.get("s")); history.replaceState(null, "", "/"); }
const secret = sessionStorage.getItem("secret") || "";
let items = [], at = 0, editing = false;
const $ = id => document.getElementById(id);
async function call(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify({secret, ...body})});
  const data = await r.json();
  if (!r.ok) { $("error").textContent = data.error || ("error " + r.status); return null; }
  $("error").textContent = ""; return data;
}
function show() {
  if (!items.length) { $("query").textContent = "no entries"; return; }
  const it = items[at];
  const done = items.filter(i => i.decision).length;
  $("progress").textContent = `${at + 1} of ${items.length} · ${done} reviewed · ` +
      `${items.filter(i => i.active).length} active (read by chunklab-own run)`;
  $("qid").textContent = it.id; $("doc").textContent = it.doc;
  $("state").textContent = it.decision || (it.reasons.length ? "flagged, not reviewed" : "passed the checks, not reviewed");
  $("reasons").textContent = it.reasons.length ? "flagged: " + it.reasons.join("; ") : "";
  $("query").textContent = it.query; $("gold").textContent = it.gold;
  $("before").textContent = it.before; $("ctx-gold").textContent = it.gold; $("after").textContent = it.after;
  $("editor").hidden = !editing;
}
async function decide(decision, extra) {
  const data = await call("/api/decide", {index: at, decision, ...(extra || {})});
  if (data) { items = data.items; if (decision !== "edit" && at < items.length - 1) at++; }
  show();
}
function startEdit() { editing = true; $("edit-query").value = items[at].query; $("edit-gold").value = items[at].gold;
  show(); $("edit-query").focus(); }
async function saveEdit() { editing = false; await decide("edit", {query: $("edit-query").value, gold: $("edit-gold").value}); }
$("accept").onclick = () => decide("accept"); $("reject").onclick = () => decide("reject"); $("edit").onclick = startEdit;
$("prev").onclick = () => { at = Math.max(0, at - 1); show(); };
$("next").onclick = () => { at = Math.min(items.length - 1, at + 1); show(); };
document.addEventListener("keydown", e => {
  if (editing) { if (e.key === "Enter") saveEdit(); if (e.key === "Escape") { editing = false; show(); } return; }
  const keys = {a: () => decide("accept"), r: () => decide("reject"), e: startEdit,
                j: $("next").onclick, k: $("prev").onclick};
  if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
});
call("/api/state", {}).then(data => { if (data) { items = data.items;
  at = Math.max(0, items.findIndex(i => !i.decision)); show(); } });
</script></body></html>
"""

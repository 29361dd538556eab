"""The workbench's page (style and script), served by :mod:`chunklab_core.audit.workbench`.

Handles: the layout (question, answer, reference, passage with the reference highlighted, note,
progress), the keys (c/p/w/s/b/n/?), the tab token and the server's secret (read once from the
address's fragment) in ``sessionStorage``, the claim's renewal, and the
messages (refused tab, sheet changed on disk). Every text from the sheet is put in the page with
``textContent`` (never ``innerHTML``), so it is shown, never interpreted.

Not handled: saving (the server does), anything that needs a network beyond 127.0.0.1.
"""

PAGE = r"""<style>
body{font-family:system-ui,sans-serif;max-width:62rem;margin:1rem auto;padding:0 1rem;line-height:1.45;color:#222}
h1{font-size:1.1rem;margin:0 0 .5rem} .label{font-weight:600;color:#555;margin-top:.8rem}
#passage{white-space:pre-wrap;border:1px solid #ccc;padding:.5rem;max-height:22rem;overflow:auto;background:#fafafa}
mark{background:#ffe066;padding:0 1px} #progress{color:#444} #message{margin:.5rem 0;font-weight:600}
.refused{color:#b00020} .saved{color:#1b5e20} #keys{color:#555;font-size:.9rem}
#grade{font-weight:700} #note{width:100%;box-sizing:border-box} #verdicts{color:#6a1b9a}
</style>
<h1>Grading <span id="sheet"></span> <span id="progress"></span></h1>
<div id="message" role="status"></div>
<div id="namebox" hidden><label>Your name or initials (saved with each grade): <input id="name"></label></div>
<div id="item" hidden>
  <div id="position"></div>
  <div class="label">Question</div><div id="question"></div>
  <div class="label">Answer</div><div id="answer"></div>
  <div class="label">Reference (alternatives: | or OR; parts that are all needed: ; or AND)</div><div id="reference"></div>
  <div class="label">Retrieved passage (the reference highlighted)</div><div id="passage"></div>
  <div class="label">Grade: <span id="grade"></span></div>
  <div id="verdicts"></div>
  <div class="label">Note (n to edit, Enter saves, Esc leaves)</div><input id="note" autocomplete="off">
</div>
<p id="keys">c correct · p partial · w wrong · s skip · b back · n note · ? help</p>
<script>
"use strict";
// the secret comes in the address's fragment (#s=...), never in a response; kept for reloads of this tab
const fragment = new URLSearchParams(location.hash.slice(1)).get("s");
if (fragment) { sessionStorage.setItem("workbench-secret", fragment); history.replaceState(null, "", location.pathname); }
const secret = sessionStorage.getItem("workbench-secret") || "";
let token = sessionStorage.getItem("workbench-token");
if (!token) { token = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2); sessionStorage.setItem("workbench-token", token); }
const page = String(Math.random()).slice(2) + String(performance.now());  // this load of the tab
let state = null, index = 0, shownAt = performance.now(), refused = false, stopped = false, pending = null;
const $ = (id) => document.getElementById(id);
function say(text, kind) { const m = $("message"); m.textContent = text; m.className = kind || ""; }
async function api(path, payload) {
  const response = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify(Object.assign({secret: secret, token: token, page: page}, payload || {}))});
  const body = await response.json();
  if (response.status === 423) { refused = true; $("item").hidden = true; say(body.error, "refused"); document.body.dataset.refused = "1"; return null; }
  if (response.status === 409) { stopped = true; state = body; say(body.error, "refused"); document.body.dataset.stopped = "1"; return null; }
  if (!response.ok) { say(body.error || ("error " + response.status), "refused"); return null; }
  refused = false; delete document.body.dataset.refused; return body;
}
function fill(id, text) { $(id).textContent = text; }
function renderPassage(text, spans) {
  const box = $("passage"); box.textContent = ""; let at = 0;
  for (const [start, end] of spans) {
    if (start > at) box.appendChild(document.createTextNode(text.slice(at, start)));
    const mark = document.createElement("mark"); mark.textContent = text.slice(start, end); box.appendChild(mark); at = end;
  }
  if (at < text.length) box.appendChild(document.createTextNode(text.slice(at)));
}
function render() {
  if (!state) return;
  fill("sheet", state.sheet);
  const todo = state.total - state.graded;
  const pace = state.median_seconds ? ", " + state.median_seconds.toFixed(0) + " s per item (median, this session)" : "";
  fill("progress", "— " + state.graded + " graded, " + todo + " to go" + pace);
  document.body.dataset.graded = String(state.graded);
  if (!state.grader) { $("namebox").hidden = false; $("item").hidden = true; $("name").focus(); return; }
  $("namebox").hidden = true;
  const item = state.items[index]; if (!item) return;
  $("item").hidden = false;
  fill("position", "Item " + (index + 1) + " of " + state.total + " [" + item.item_id + "]");
  fill("question", item.question); fill("answer", item.answer); fill("reference", item.reference);
  renderPassage(item.passage, item.highlights);
  fill("grade", item.grade ? item.grade + " (by " + item.grader + " at " + item.graded_at + ")" : "not graded");
  fill("verdicts", item.verdicts ? "NOT BLIND: verdicts " + JSON.stringify(item.verdicts) : "");
  $("note").value = item.note; document.body.dataset.index = String(index);
}
function go(i) { index = Math.max(0, Math.min(state.total - 1, i)); pending = null; shownAt = performance.now(); render(); }
async function load() {
  const body = await api("/api/state"); if (!body) return;
  state = body; go(body.start);
  if (body.graded === body.total) say("Every item is graded. b goes back to review.", "saved"); else say("");
}
async function grade(letter) {
  const item = state.items[index], names = {c: "correct", p: "partial", w: "wrong"};
  if (item.grade && item.grade !== names[letter] && pending !== letter) {
    pending = letter; say("Press " + letter + " again to overwrite " + item.grade + " with " + names[letter] + ".", ""); return;
  }
  const body = await api("/api/grade", {index: index, grade: letter, seconds: (performance.now() - shownAt) / 1000});
  if (!body) return;
  state = body; say("saved: " + names[letter] + " (" + item.item_id + ")", "saved");
  if (index + 1 < state.total) go(index + 1); else { pending = null; render(); say("That was the last item; every grade is saved.", "saved"); }
}
async function saveNote() {
  const body = await api("/api/note", {index: index, note: $("note").value}); $("note").blur();
  if (body) { state = body; render(); say("note saved", "saved"); }
}
document.addEventListener("keydown", async (event) => {
  if (refused || stopped || !state) return;
  if (event.target === $("name")) {
    if (event.key === "Enter") { const body = await api("/api/grader", {grader: $("name").value}); if (body) { state = body; render(); $("name").blur(); } }
    return;
  }
  if (event.target === $("note")) {
    if (event.key === "Enter") { event.preventDefault(); await saveNote(); }
    else if (event.key === "Escape") { $("note").value = state.items[index].note; $("note").blur(); }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  if (key === "c" || key === "p" || key === "w") { event.preventDefault(); await grade(key); }
  else if (key === "s") { go(index + 1); say("skipped"); }
  else if (key === "b") { go(index - 1); }
  else if (key === "n") { event.preventDefault(); $("note").focus(); }
  else if (key === "?") { say("c correct, p partial, w wrong (each saved at once), s skip, b back, n note (Enter saves), ? help"); }
});
setInterval(() => { if (!refused && !stopped) api("/api/state").then((b) => { if (b && state) { state.graded = b.graded; state.median_seconds = b.median_seconds; } }); }, 5000);
window.addEventListener("pagehide", () => { navigator.sendBeacon("/api/release", new Blob([JSON.stringify({secret: secret, token: token, page: page})], {type: "application/json"})); });
if (secret) load(); else { say("Open the address the command printed (with its #s=... part): this page has no secret.", "refused"); document.body.dataset.refused = "1"; refused = true; }
</script>
</body></html>
"""

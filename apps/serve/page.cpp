#include "page.h"

namespace attn::serve {
namespace {

const char* const kPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attn serve</title>
<style>
:root { --ink:#1d2330; --muted:#6b7385; --line:#e4e7ee; --accent:#2457c5; --bg:#f6f7fb; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color:var(--ink); background:var(--bg); }
header { padding:16px 28px; background:#fff; border-bottom:1px solid var(--line); display:flex; gap:18px; align-items:center; flex-wrap:wrap; }
h1 { font-size:19px; margin:0; font-weight:600; }
h1 small { color:var(--muted); font-weight:400; font-size:13px; margin-left:6px; }
label { color:var(--muted); font-size:13px; }
select { font:inherit; padding:4px 6px; border:1px solid var(--line); border-radius:6px; background:#fff; }
main { display:grid; grid-template-columns:1fr 1fr; gap:20px; padding:20px 28px; }
.panel { background:#fff; border:1px solid var(--line); border-radius:10px; padding:14px 16px; min-height:200px; }
.panel h2 { font-size:13px; text-transform:uppercase; letter-spacing:.05em; color:var(--muted); margin:0 0 8px; font-weight:600; }
textarea { width:100%; min-height:150px; border:none; outline:none; resize:vertical; font:inherit; color:var(--ink); }
.sentence { padding:6px 0 10px; border-bottom:1px dashed var(--line); }
.sentence:last-child { border-bottom:none; }
.src { color:var(--muted); font-size:12px; }
.word { cursor:pointer; padding:1px 2px; border-radius:4px; }
.word:hover { background:#dfe8fb; color:var(--accent); }
.bar { height:8px; background:var(--accent); border-radius:4px; display:inline-block; vertical-align:middle; margin:0 8px; }
.hint { color:var(--muted); font-size:12px; margin-top:10px; }
#status { color:var(--muted); font-size:13px; margin-left:auto; }
.error { color:#b3261e; }
#overlay { position:fixed; inset:0; background:rgba(20,24,35,.35); display:none; }
#overlay.open { display:block; }
#sheet { position:absolute; inset:330px 3% 2% 3%; background:#fff; border-radius:10px; overflow:hidden; display:flex; flex-direction:column; }
#sheet .bar-top { display:flex; align-items:center; padding:8px 14px; border-bottom:1px solid var(--line); gap:10px; }
#sheet iframe { flex:1; border:none; width:100%; }
button { font:inherit; border:1px solid var(--line); background:#fff; border-radius:6px; padding:3px 10px; cursor:pointer; }
</style></head>
<body data-models="0" data-translated="0" data-attention="">
<header>
  <h1>attn serve<small>Transformer translation and classification on the CPU</small></h1>
  <label>model <select id="model"></select></label>
  <label>beam <select id="beam"><option>1</option><option>2</option><option selected>4</option><option>8</option></select></label>
  <span id="status">loading models&hellip;</span>
</header>
<main>
  <section class="panel"><h2 id="in-title">Text</h2>
    <textarea id="text" placeholder="Type here, one sentence a line." autofocus></textarea></section>
  <section class="panel"><h2 id="out-title">Translation</h2><div id="out"></div>
    <div class="hint" id="hint"></div></section>
</main>
<div id="overlay"><div id="sheet"><div class="bar-top"><b id="sheet-title">Attention</b>
  <span class="src" id="sheet-note"></span><button id="close" style="margin-left:auto">Close</button></div>
  <iframe id="frame" title="attention"></iframe></div></div>
<script>
"use strict";
const $ = id => document.getElementById(id);
let models = [], seq = 0, timer = null, shown = [];

function model() { return models.find(m => m.name === $("model").value); }
function isIds(m) { return m.task === "translation" && m.input === "ids"; }

async function loadModels() {
  const r = await fetch("/v1/models");
  models = (await r.json()).models;
  for (const m of models) {
    const o = document.createElement("option");
    o.value = m.name;
    o.textContent = m.name + " (" + m.kind + ", " + m.precision + ")";
    $("model").appendChild(o);
  }
  document.body.dataset.models = models.length;
  $("status").textContent = models.length + " model(s)";
  describe();
}

function describe() {
  const m = model();
  if (!m) return;
  const cls = m.task === "classification";
  $("out-title").textContent = cls ? "Class" : "Translation";
  $("in-title").textContent = isIds(m) ? "Token ids (space-separated)" : "Text";
  $("hint").textContent = cls ? "Click a label to see the encoder's attention." : "Click a word of a translation to see the attention behind it.";
  $("beam").disabled = cls;
  schedule();
}

function schedule() { clearTimeout(timer); timer = setTimeout(run, 250); }

function requestOf(m, lines) {
  if (m.task === "classification") return ["/v1/classify", {model: m.name, text: lines, top_k: Math.min(3, m.labels.length)}];
  const body = {model: m.name, beam: +$("beam").value};
  if (isIds(m)) body.ids = lines.map(l => l.trim().split(/\s+/).map(Number));
  else body.text = lines;
  return ["/v1/translate", body];
}

async function run() {
  const m = model();
  const lines = $("text").value.split("\n").filter(l => l.trim() !== "");
  if (!m || lines.length === 0) { $("out").innerHTML = ""; return; }
  const mine = ++seq, t0 = performance.now();
  const [url, body] = requestOf(m, lines);
  $("status").textContent = "working\u2026";
  let r, j;
  try {
    r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    j = await r.json();
  } catch (e) { j = {error: String(e)}; r = {ok: false}; }
  if (mine !== seq) return;  // a newer request is on its way
  if (!r.ok) { $("out").innerHTML = ""; const d = document.createElement("div"); d.className = "error"; d.textContent = j.error; $("out").appendChild(d); $("status").textContent = "error"; return; }
  shown = lines;
  if (m.task === "classification") showClasses(m, lines, j.classes); else showTranslations(m, lines, j.translations);
  $("status").textContent = lines.length + " sentence(s) in " + Math.round(performance.now() - t0) + " ms";
  document.body.dataset.translated = +document.body.dataset.translated + 1;
}

// Words of a translation: SentencePiece pieces starting with U+2581 begin a word; each word keeps
// the index of its first token (the decoder position whose output it is).
function words(tokens) {
  const out = [];
  tokens.forEach((t, i) => {
    const starts = t.startsWith("\u2581") || out.length === 0 || /^\d+$/.test(t);
    const text = t.replace(/^\u2581/, "");
    if (starts) out.push({text, first: i}); else out[out.length - 1].text += text;
  });
  return out;
}

function showTranslations(m, lines, translations) {
  const out = $("out");
  out.innerHTML = "";
  translations.forEach((t, i) => {
    const d = document.createElement("div");
    d.className = "sentence";
    const s = document.createElement("div");
    s.className = "src";
    s.textContent = lines[i];
    d.appendChild(s);
    for (const w of words(t.tokens)) {
      const span = document.createElement("span");
      span.className = "word";
      span.textContent = w.text;
      span.dataset.line = i;
      span.dataset.token = w.first;
      span.onclick = () => openAttention(m, i, w.first, w.text);
      d.appendChild(span);
      d.appendChild(document.createTextNode(" "));
    }
    out.appendChild(d);
  });
}

function showClasses(m, lines, classes) {
  const out = $("out");
  out.innerHTML = "";
  classes.forEach((c, i) => {
    const d = document.createElement("div");
    d.className = "sentence";
    d.innerHTML = '<div class="src"></div>';
    d.firstChild.textContent = lines[i];
    for (const t of c.top) {
      const row = document.createElement("div");
      const name = document.createElement("span");
      name.className = "word";
      name.textContent = t.label;
      name.onclick = () => openAttention(m, i, -1, t.label);
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = Math.round(160 * t.probability) + "px";
      row.append(name, bar, (100 * t.probability).toFixed(1) + "%");
      d.appendChild(row);
    }
    out.appendChild(d);
  });
}

function openAttention(m, line, token, word) {
  const q = new URLSearchParams({model: m.name, format: "html"});
  if (isIds(m)) q.set("ids", shown[line].trim()); else q.set("text", shown[line]);
  if (m.task !== "classification") q.set("beam", $("beam").value);
  const frag = m.task === "classification" ? "#stack=encoder_self" : "#stack=cross&head=0&click=" + token;
  $("sheet-title").textContent = "Attention: \u201c" + word + "\u201d";
  $("sheet-note").textContent = shown[line] + (m.task === "classification" ? "" :
    "  \u00b7  highlighted: the decoder position that outputs \u201c" + word + "\u201d (its input is the token before)");
  document.body.dataset.attention = "opening";
  $("frame").onload = () => {
    const st = $("frame").contentDocument && $("frame").contentDocument.getElementById("state");
    document.body.dataset.attention = st && st.dataset.ready === "1" ? "loaded" : "failed";
  };
  $("frame").src = "/v1/attention?" + q.toString() + frag;
  $("overlay").classList.add("open");
}

$("close").onclick = () => { $("overlay").classList.remove("open"); document.body.dataset.attention = ""; };
$("text").addEventListener("input", schedule);
$("model").addEventListener("change", describe);
$("beam").addEventListener("change", schedule);
loadModels();
</script>
</body></html>
)PAGE";

}  // namespace

const std::string& page_html() {
  static const std::string page = kPage;
  return page;
}

}  // namespace attn::serve

// The page of attn attend: one HTML file, the document (attend.h) inlined as JSON and drawn by
// its own script into SVG, nothing fetched. The token view is seed 000's picture: the query
// tokens in a column on the left, the keys on the right, a line from the chosen token to each key,
// as thick as its weight (one colour per head, or the heads' mean).
//
// For tests and screenshots the page reads its address's fragment: #stack=ID&layer=L&head=H
// (head 0: all) chooses the view, #click=I clicks query token I (the same click a person makes).
// It writes what it shows into <div id="state">: the number of heatmaps drawn, the chosen token,
// and the highlighted weights (the mean over the shown heads of the chosen token's row) before and
// after the click.
#include <string>

#include "attn/attend/attend.h"

namespace attn {
namespace {

const char* const kPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>attn attend</title>
<style>
:root { --ink:#1d2330; --muted:#6b7385; --line:#e4e7ee; --accent:#2457c5; --bg:#fbfcfe; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color:var(--ink); background:var(--bg); }
header { padding:18px 28px 12px; border-bottom:1px solid var(--line); background:#fff; }
h1 { font-size:19px; margin:0 0 6px; font-weight:600; }
h1 small { color:var(--muted); font-weight:400; font-size:13px; margin-left:8px; }
h2 { font-size:15px; margin:0 0 10px; font-weight:600; }
.meta { display:grid; grid-template-columns:max-content 1fr; gap:2px 12px; color:var(--ink); }
.meta b { color:var(--muted); font-weight:500; }
.pred { display:inline-block; padding:1px 8px; border-radius:10px; background:#e8effc; color:var(--accent); font-weight:600; }
main { padding:16px 28px 28px; }
section { background:#fff; border:1px solid var(--line); border-radius:8px; padding:14px 16px; margin-bottom:16px; }
.controls { display:flex; flex-wrap:wrap; gap:14px; align-items:center; margin-bottom:8px; }
.group { display:flex; gap:4px; align-items:center; }
.group > span { color:var(--muted); margin-right:4px; }
button { font:inherit; font-size:13px; border:1px solid #cfd5e2; background:#fff; color:var(--ink); padding:3px 10px; border-radius:5px; cursor:pointer; }
button.on { background:var(--accent); border-color:var(--accent); color:#fff; }
.hint { color:var(--muted); font-size:12.5px; }
#tokens text { font-size:14px; cursor:pointer; }
#tokens text.sel { font-weight:700; fill:var(--accent); }
#tokens .cap { font-size:12px; fill:var(--muted); cursor:default; }
.stack { margin-bottom:14px; }
.stack h3 { font-size:13.5px; margin:6px 0; font-weight:600; }
.grid { display:grid; gap:10px; align-items:start; }
.cell { text-align:center; font-size:11.5px; color:var(--muted); cursor:pointer; }
.cell svg { border:1px solid var(--line); background:#fff; display:block; margin:auto; }
.cell.on svg { outline:2px solid var(--accent); }
.rowlab { font-size:12px; color:var(--muted); align-self:center; writing-mode:vertical-rl; transform:rotate(180deg); }
table { border-collapse:collapse; font-size:12.5px; }
th, td { padding:3px 8px; border-bottom:1px solid var(--line); text-align:right; }
th { color:var(--muted); font-weight:500; }
td.l, th.l { text-align:left; }
.bar { display:inline-block; height:8px; background:var(--accent); opacity:.75; vertical-align:middle; margin-left:5px; border-radius:2px; }
.tag { font-size:11px; padding:0 6px; border-radius:8px; background:#eef1f6; color:#445; }
</style></head>
<body>
<header><h1>Attention <small id="kind"></small></h1><div class="meta" id="meta"></div></header>
<main>
<section>
  <div class="controls">
    <div class="group" id="stacks"></div>
    <div class="group" id="layers"><span>layer</span></div>
    <div class="group" id="heads"><span>head</span></div>
  </div>
  <div class="hint">Hover a token on the left to see where it attends (line thickness = weight); click to keep it.
  Click a heatmap below to show that layer and head here.</div>
  <svg id="tokens" xmlns="http://www.w3.org/2000/svg"></svg>
</section>
<section><h2>Every layer and head</h2><div id="grids"></div></section>
<section><h2>Per-head summary</h2>
  <div class="hint" style="margin-bottom:6px">Entropy in bits (mean over queries; low = focused). Mean weight on the previous, same and next
  position (self-attention) and on the end-of-sentence token: a head with most of its weight on one relative position is positional,
  one with weight spread by content is not; a head parked on eos often has nothing to do.</div>
  <table id="summary"></table></section>
<div id="state" hidden></div>
</main>
<script>
const DOC = /*ATTEND_DATA*/null;
const COLORS = ["#2457c5","#e0672b","#2e9e5b","#c33a5a","#8a5cc7","#8c6d31","#d45fb0","#5f6b7a","#b3a21d","#1fa3b8",
                "#5474d6","#f09a5b","#62bf85","#e0708a","#ad8be0","#b89a63"];
const SVGNS = "http://www.w3.org/2000/svg";
const view = { stack: 0, layer: 0, head: -1, selected: -1, pinned: false };

function el(tag, attrs, parent, text) {
  // SVG inside SVG, HTML elsewhere
  const svg = tag === "svg" || (parent && parent.namespaceURI === SVGNS);
  const e = svg ? document.createElementNS(SVGNS, tag) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
// SentencePiece pieces as words: "▁the" -> "the", a piece inside a word gets a leading "·".
function label(tok, i) {
  if (tok.startsWith("\u2581")) return tok.slice(1) || "\u2581";
  if (i === 0 || /^<.*>$/.test(tok) || DOC.kind === "classifier") return tok;
  return "\u00b7" + tok;
}
function tokensOf(side) { return side === "source" ? DOC.source.tokens : DOC.target.tokens; }
function stack() { return DOC.stacks[view.stack]; }
function layer() { return stack().layers[view.layer]; }
// The shown heads' rows: [{head, weights}], one entry per head (or just the chosen one).
function shownHeads() { const hs = layer().heads; return view.head < 0 ? hs : [hs[view.head]]; }
function meanRow(i) {
  const hs = shownHeads(), n = hs[0].weights[i].length, out = new Array(n).fill(0);
  for (const h of hs) for (let j = 0; j < n; ++j) out[j] += h.weights[i][j] / hs.length;
  return out;
}
function shade(w) {  // white -> accent blue
  const t = Math.max(0, Math.min(1, w)), c = [255 - 219 * t, 255 - 168 * t, 255 - 58 * t].map(Math.round);
  return "rgb(" + c.join(",") + ")";
}

function header() {
  document.getElementById("kind").textContent = DOC.kind + " \u00b7 " + DOC.model;
  const m = document.getElementById("meta");
  const row = (k, v) => { el("b", {}, m, k); el("span", {}, m, v); };
  row("source", DOC.source.text);
  if (DOC.target) row(DOC.target.given ? "target (given)" : "target (model's translation)", DOC.target.text);
  if (DOC.prediction) {
    el("b", {}, m, "prediction");
    el("span", {class: "pred"}, el("span", {}, m), DOC.prediction.label + "  " + (100 * DOC.prediction.probability).toFixed(1) + "%");
  }
}

function controls() {
  const s = document.getElementById("stacks"), l = document.getElementById("layers"), h = document.getElementById("heads");
  s.querySelectorAll("button").forEach(b => b.remove());
  l.querySelectorAll("button").forEach(b => b.remove());
  h.querySelectorAll("button").forEach(b => b.remove());
  DOC.stacks.forEach((st, i) => {
    const b = el("button", {class: i === view.stack ? "on" : ""}, s, st.title);
    b.onclick = () => { view.stack = i; view.layer = 0; view.selected = -1; view.pinned = false; redraw(); };
  });
  stack().layers.forEach((ly, i) => {
    const b = el("button", {class: i === view.layer ? "on" : ""}, l, String(ly.layer));
    b.onclick = () => { view.layer = i; redraw(); };
  });
  const heads = layer().heads;
  if (heads.length > 1) {
    const b = el("button", {class: view.head < 0 ? "on" : ""}, h, "all");
    b.onclick = () => { view.head = -1; redraw(); };
  }
  heads.forEach((hd, i) => {
    const on = view.head === i || (heads.length === 1);
    const b = el("button", {class: on ? "on" : ""}, h, String(hd.head));
    b.style.borderBottom = "3px solid " + COLORS[(hd.head - 1) % COLORS.length];
    b.onclick = () => { view.head = i; redraw(); };
  });
}

// Seed 000's picture: queries left, keys right, lines from the chosen query to every key.
function tokenView() {
  const svg = document.getElementById("tokens");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const st = stack(), q = tokensOf(st.queries), k = tokensOf(st.keys), outs = DOC.target ? DOC.target.outputs : null;
  const rowH = 24, top = 40, leftX = 210, rightX = 520, width = 760;
  const n = Math.max(q.length, k.length);
  svg.setAttribute("width", width); svg.setAttribute("height", top + n * rowH + 10);
  el("text", {x: leftX, y: 22, "text-anchor": "end", class: "cap"}, svg, st.queries === "target" ? "target position (input token)" : "query");
  el("text", {x: rightX, y: 22, class: "cap"}, svg, st.keys + " (keys)");
  const y = i => top + i * rowH + rowH / 2;
  const lines = el("g", {}, svg);
  const sel = view.selected;
  const keyRow = sel >= 0 ? meanRow(sel) : null;
  // key backgrounds: the mean weight of the chosen token on each key
  const top1 = keyRow ? Math.max(...keyRow) : 1;
  k.forEach((t, j) => {
    if (keyRow) {  // shaded relative to the row's largest weight, the weight itself beside
      el("rect", {x: rightX - 6, y: y(j) - rowH / 2 + 2, width: 150, height: rowH - 4, rx: 3,
                  fill: shade(keyRow[j] / top1), opacity: 0.55}, svg);
      el("text", {x: rightX + 190, y: y(j) + 5, "text-anchor": "end", class: "cap"}, svg, keyRow[j].toFixed(2));
    }
    el("text", {x: rightX, y: y(j) + 5}, svg, label(t, j));
  });
  const hs = shownHeads();
  const rows = sel >= 0 ? [sel] : q.map((_, i) => i);
  const maxW = sel >= 0 ? 14 : 3, spread = hs.length > 1 ? 3 : 0;
  hs.forEach((h, hi) => {
    const color = hs.length > 1 || layer().heads.length > 1 ? COLORS[(h.head - 1) % COLORS.length] : COLORS[0];
    for (const i of rows) h.weights[i].forEach((w, j) => {
      if (w < 0.01) return;
      const off = (hi - (hs.length - 1) / 2) * spread * (sel >= 0 ? 1 : 0);
      el("line", {x1: leftX + 8, y1: y(i) + off, x2: rightX - 10, y2: y(j) + off, stroke: color,
                  "stroke-width": (maxW * w).toFixed(2), "stroke-opacity": sel >= 0 ? 0.75 : Math.min(0.9, 0.25 + w).toFixed(2),
                  "stroke-linecap": "round", class: "wline"}, lines);
    });
  });
  q.forEach((t, i) => {
    const txt = el("text", {x: leftX, y: y(i) + 5, "text-anchor": "end", class: i === sel ? "sel" : "", "data-i": i}, svg, label(t, i));
    if (st.queries === "target" && outs) el("title", {}, txt, "position " + i + ": reads " + t + ", predicts " + outs[i]);
    txt.addEventListener("mouseenter", () => { if (!view.pinned) { view.selected = i; tokenView(); } });
    txt.addEventListener("click", () => {
      view.pinned = !(view.pinned && view.selected === i); view.selected = i; redraw(); });
  });
  svg.onmouseleave = () => { if (!view.pinned && view.selected >= 0) { view.selected = -1; tokenView(); } };
  writeState();
}

function heatmap(weights, qn, kn, cell, parent, labels) {
  const svg = el("svg", {width: kn * cell, height: qn * cell, class: "heatmap"}, parent);
  weights.forEach((row, i) => row.forEach((w, j) => {
    const r = el("rect", {x: j * cell, y: i * cell, width: cell, height: cell, fill: shade(w)}, svg);
    el("title", {}, r, labels.q[i] + " \u2192 " + labels.k[j] + ": " + w.toFixed(3));
  }));
  return svg;
}

function grids() {
  const root = document.getElementById("grids");
  while (root.firstChild) root.removeChild(root.firstChild);
  DOC.stacks.forEach((st, si) => {
    const box = el("div", {class: "stack"}, root);
    el("h3", {}, box, st.title);
    const q = tokensOf(st.queries).length, k = tokensOf(st.keys).length;
    const labels = {q: tokensOf(st.queries).map(label), k: tokensOf(st.keys).map(label)};
    const heads = st.layers[0].heads.length;
    const cell = Math.max(3, Math.min(12, Math.floor(150 / Math.max(q, k))));
    const g = el("div", {class: "grid"}, box);
    g.style.gridTemplateColumns = "18px repeat(" + heads + ", max-content)";
    st.layers.forEach((ly, li) => {
      el("div", {class: "rowlab"}, g, "layer " + ly.layer);
      ly.heads.forEach((h, hi) => {
        const on = si === view.stack && li === view.layer && (view.head === hi || view.head < 0);
        const c = el("div", {class: "cell" + (on ? " on" : "")}, g);
        const svg = heatmap(h.weights, q, k, cell, c, labels);
        if (si === view.stack && li === view.layer && view.selected >= 0)
          el("rect", {x: 0, y: view.selected * cell, width: k * cell, height: cell, fill: "none", stroke: "#e0672b", "stroke-width": 1.5}, svg);
        el("div", {}, c, "head " + h.head);
        c.onclick = () => { view.stack = si; view.layer = li; view.head = hi; if (si !== view.stack) view.selected = -1; redraw(); };
      });
    });
  });
}

function summary() {
  const t = document.getElementById("summary");
  while (t.firstChild) t.removeChild(t.firstChild);
  const hr = el("tr", {}, t);
  ["attention", "layer", "head", "entropy", "previous", "same", "next", "eos", ""].forEach((h, i) => el("th", {class: i < 1 ? "l" : ""}, hr, h));
  const pct = (v, tr) => { const td = el("td", {}, tr, v === null ? "\u2013" : (100 * v).toFixed(0) + "%");
    if (v !== null) el("span", {class: "bar", style: "width:" + Math.round(40 * v) + "px"}, td); };
  DOC.stacks.forEach(st => st.layers.forEach(ly => ly.heads.forEach(h => {
    const s = h.summary, tr = el("tr", {}, t);
    el("td", {class: "l"}, tr, st.title); el("td", {}, tr, ly.layer); el("td", {}, tr, h.head);
    el("td", {}, tr, s.entropy.toFixed(2));
    pct(s.previous, tr); pct(s.same, tr); pct(s.next, tr); pct(s.eos, tr);
    const best = [["previous", s.previous], ["same", s.same], ["next", s.next], ["eos", s.eos]]
      .filter(p => p[1] !== null).sort((a, b) => b[1] - a[1])[0];
    el("span", {class: "tag"}, el("td", {class: "l"}, tr), best && best[1] > 0.5 ? best[0] : "content");
  })));
}

function writeState() {
  const st = document.getElementById("state");
  st.setAttribute("data-heatmaps", document.querySelectorAll("svg.heatmap").length);
  st.setAttribute("data-selected", view.selected);
  st.setAttribute("data-lines", document.querySelectorAll("#tokens line.wline").length);
  st.setAttribute("data-highlight", view.selected >= 0 ? meanRow(view.selected).map(w => w.toFixed(5)).join(" ") : "");
}
function redraw() { controls(); grids(); tokenView(); }

function fromFragment() {
  const args = new URLSearchParams(location.hash.slice(1));
  const si = DOC.stacks.findIndex(s => s.id === args.get("stack"));
  if (si >= 0) view.stack = si;
  if (args.has("layer")) view.layer = Math.max(0, stack().layers.findIndex(l => l.layer === +args.get("layer")));
  if (args.has("head")) view.head = +args.get("head") > 0 ? layer().heads.findIndex(h => h.head === +args.get("head")) : -1;
  return args.has("click") ? +args.get("click") : -1;
}

header();
summary();
const click = fromFragment();
redraw();
const st = document.getElementById("state");
st.setAttribute("data-highlight-before", st.getAttribute("data-highlight"));
if (click >= 0) {
  const target = document.querySelector('#tokens text[data-i="' + click + '"]');
  if (target) target.dispatchEvent(new MouseEvent("click", {bubbles: true}));
}
st.setAttribute("data-ready", "1");
</script>
</body></html>
)PAGE";

// "</" inside a script would end it early: JSON escapes it as "<\/".
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') out += '\\';
  }
  return out;
}

}  // namespace

std::string attend_html(const nlohmann::json& doc) {
  std::string page = kPage;
  const std::string slot = "/*ATTEND_DATA*/null";
  page.replace(page.find(slot), slot.size(),
               script_safe(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  return page;
}

}  // namespace attn

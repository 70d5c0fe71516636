// mustcite web page: calls /api/recommend and /api/audit and renders the ranked list.
"use strict";

const $ = (id) => document.getElementById(id);
// what each tier means (the tooltip), and the tier probabilities in the same words as the tier names
const TIER_HELP = { I: "Type I: an experimental baseline or a dataset or benchmark it evaluates on",
                    II: "Type II: core to the paper's method or question", III: "Type III: mentioned three or more times",
                    "must-cite": "likely a must-cite", cited: "likely cited" };
const PROB_NAMES = { type1: "baseline or dataset", type2: "core", type3: "used throughout", must_cite: "must-cite",
                     cited: "cited" };
let lastResults = [];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c) node.append(c);
  return node;
}

function setStatus(text, isError = false) {
  const s = $("status");
  s.textContent = text;
  s.className = isError ? "error" : "";
}

function safeUrl(u) {
  try {
    const url = new URL(u);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch (e) { return null; }
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {   // clipboard API needs a secure context; fall back to a hidden textarea
    const ta = el("textarea");
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
  $("copied").textContent = "copied";
  setTimeout(() => { $("copied").textContent = ""; }, 1500);
}

function renderResult(r) {
  const href = safeUrl(r.url) || safeUrl(r.pdf);
  const title = href ? el("a", { class: "title", href, target: "_blank", rel: "noopener", text: r.title })
                     : el("span", { class: "title", text: r.title });
  const tier = el("span", { class: `tier t-${r.tier}`, title: TIER_HELP[r.tier] || r.tier, text: r.tier_name || r.tier });
  const head = el("div", { class: "head" }, title, tier,
    el("span", { class: "score", text: `score ${r.score.toFixed(3)}` }));
  const meta = el("div", { class: "meta",
    text: [r.venue, r.year, (r.authors || []).slice(0, 4).join(", ") + ((r.authors || []).length > 4 ? " et al." : "")]
      .filter(Boolean).join(" · ") });
  const probs = el("div", { class: "probs", text: "Chance it is: " + Object.entries(r.tiers || {})
    .map(([k, v]) => `${PROB_NAMES[k] || k} ${Math.round(100 * v)}%`).join(" · ") });
  const evidence = el("ul", { class: "evidence" });
  if (r.message) {   // an audit finding: what it says, where, and how sure
    const loc = r.location || {};
    const where = loc.file ? (loc.line ? `${loc.file}:${loc.line}` : loc.file) : "";
    evidence.append(el("li", { class: "finding", text: `${r.finding} (confidence ${(r.confidence || 0).toFixed(2)})` +
      `${where ? " at " + where : ""}: ${r.message}` + (loc.quote ? ` "${loc.quote}"` : "") }));
  }
  for (const reason of r.reasons || []) evidence.append(el("li", { text: reason }));
  const closest = ((r.evidence || {}).neighbours || []).slice(0, 3);
  if (closest.length) {
    evidence.append(el("li", { class: "closest", text: "Closest papers citing it: " + closest
      .map((n) => `${n.title} (similarity ${n.similarity.toFixed(2)}${n.must_cite ? ", must-cite" : ""})`).join("; ") }));
  }
  const links = el("div", { class: "links" });
  for (const [label, u] of [["page", r.url], ["pdf", r.pdf]]) {
    const s = safeUrl(u);
    if (s) links.append(el("a", { href: s, target: "_blank", rel: "noopener", text: label }));
  }
  const bib = el("button", { class: "bib", type: "button", text: "Copy BibTeX" });
  bib.addEventListener("click", () => copyText(r.bibtex));
  return el("li", { class: "result", "data-paper-id": r.paper_id }, head, meta, probs, evidence, links, bib);
}

function render(results, summary, notes = []) {
  lastResults = results;
  const list = $("results");
  list.replaceChildren(...results.map(renderResult));
  $("summary").textContent = summary || "";
  // notes on how the draft was read (files not read, keys defined nowhere, ...): always shown
  $("notes").replaceChildren(...notes.map((n) => el("li", { class: "note", text: n })));
  $("notes").hidden = notes.length === 0;
  $("toolbar").hidden = results.length === 0;
}

// a server started with an API key answers 401: the key box appears; the key is kept for this tab only
function apiKey() {
  return ($("api-key").value || sessionStorage.getItem("mustcite-api-key") || "").trim();
}

async function callApi(url, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (apiKey()) headers["X-API-Key"] = apiKey();
  const resp = await fetch(url, Object.assign({}, options, { headers }));
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (resp.status === 401) {
    $("key-box").hidden = false;
    throw new Error("This server needs an API key: enter it in the box above and try again.");
  }
  if (resp.status === 503 && resp.headers.get("Retry-After") && body && /busy/.test(body.error || "")) {
    throw new Error(`The server is busy; try again in ${resp.headers.get("Retry-After")} s.`);
  }
  if (!resp.ok) throw new Error((body && body.error) || `request failed (${resp.status})`);
  return body;
}

// the "Year" box: a whole number, or null when empty (the server then uses today's year)
function yearValue() {
  const text = $("year").value.trim();
  return text ? Number(text) : null;
}

async function onRecommend(ev) {
  ev.preventDefault();
  const title = $("title").value.trim();
  const abstract = $("abstract").value.trim();
  const top = parseInt($("top").value, 10) || 20;
  if (!title) { setStatus("Please give a title.", true); return; }
  $("recommend-btn").disabled = true;
  setStatus("Searching…");
  const t0 = performance.now();
  try {
    const body = await callApi("/api/recommend", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(yearValue() === null ? { title, abstract, top } : { title, abstract, top, year: yearValue() }),
    });
    render(body.results, body.notice ||
      `${body.results.length} recommendations as of ${body.year} (papers of ${body.year} or earlier)`);
    setStatus(`Done in ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
  } catch (e) {
    render([], "");
    setStatus(e.message, true);
  } finally {
    $("recommend-btn").disabled = false;
  }
}

async function onAudit(ev) {
  ev.preventDefault();
  const file = $("draft").files[0];
  if (!file) { setStatus("Choose a draft file first.", true); return; }
  const form = new FormData();
  form.append("file", file, file.name);
  form.append("top", String(parseInt($("top").value, 10) || 20));
  if (yearValue() !== null) form.append("year", String(yearValue()));
  $("audit-btn").disabled = true;
  setStatus("Reading the draft…");
  try {
    const body = await callApi("/api/audit", { method: "POST", body: form });
    render(body.missing, `"${body.title}" as of ${body.year}: ${body.references} references (${body.linked} found in the pool). ` +
      `${body.missing.length} of ${(body.findings || []).length} findings shown (confidence ${body.threshold ?? "?"} or more: ` +
      `the probability that a careful reviewer calls it a genuine omission); ${body.cited.length} recommended papers are already cited.`,
      body.notes || []);
    setStatus("Audit done.");
  } catch (e) {
    render([], "");
    setStatus(e.message, true);
  } finally {
    $("audit-btn").disabled = false;
  }
}

async function checkHealth() {
  try {
    const body = await callApi("/api/health");
    $("health").textContent = `model ready: ${body.pool} pool papers, ${body.labelled} labelled papers` +
      (body.dense ? ", BM25 + dense" : ", BM25");
  } catch (e) {
    $("health").textContent = `model not ready: ${e.message}`;
    setTimeout(checkHealth, 3000);
  }
}

$("api-key").addEventListener("change", () => sessionStorage.setItem("mustcite-api-key", $("api-key").value.trim()));
$("recommend-form").addEventListener("submit", onRecommend);
$("audit-form").addEventListener("submit", onAudit);
$("copy-all").addEventListener("click", () => copyText(lastResults.map((r) => r.bibtex).join("\n")));
checkHealth();

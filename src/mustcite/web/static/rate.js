// mustcite rater page: one instance of the sample at a time; Type I (0/1) then Type II (1-5).
// Every answer is POSTed at once (the server fsyncs it to OUT/<rater>.csv), so a closed tab loses
// nothing; reopening the page resumes at the first unrated instance. All text goes in as textContent.
"use strict";

const $ = (id) => document.getElementById(id);
const RATER_KEY = "mustcite.rater";
const RATER_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const state = { rater: null, instance: null, type1: null, type2: null, busy: false, done: false };

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(text, kind = "") {
  const s = $("status");
  s.textContent = text;
  s.className = kind;
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) throw new Error((data && data.error) || `HTTP ${res.status}`);
  return data;
}

function showProgress(p) {
  const bar = $("progress-bar");
  bar.max = Math.max(1, p.total);
  bar.value = p.rated;
  $("progress-text").textContent = `${p.rated} / ${p.total} rated`;
}

function renderInstance(x) {
  $("citing-title").textContent = x.citing_title || x.citing || "";
  $("citing-meta").textContent = [x.venue, x.year].filter(Boolean).join(" ");
  $("item-id").textContent = x.item;
  const box = $("contexts");
  box.replaceChildren();
  for (const c of x.contexts) {
    const div = el("div", "context");
    div.append(el("p", "section", c.section ? `Section: ${c.section}` : "Section: (none)"));
    const p = el("p", "paragraph");
    for (const s of c.segments) p.append(s.cite ? el("mark", "cite", s.text) : document.createTextNode(s.text));
    div.append(p);
    box.append(div);
  }
  $("ref-title").textContent = x.ref_title + (x.ref_year ? ` (${x.ref_year})` : "");
  const abs = $("ref-abstract");
  abs.textContent = x.ref_abstract || "(no abstract available)";
  abs.className = x.ref_abstract ? "abstract" : "abstract missing";
}

function renderChoices() {
  for (const b of document.querySelectorAll("[data-type1]")) {
    b.classList.toggle("selected", String(state.type1) === b.dataset.type1);
  }
  for (const b of document.querySelectorAll("[data-type2]")) {
    b.classList.toggle("selected", String(state.type2) === b.dataset.type2);
  }
  const stage1 = state.type1 === null;
  $("q-type1").classList.toggle("active", stage1);
  $("q-type2").classList.toggle("active", !stage1);
  $("hint").textContent = stage1 ? "Type I: press 0 or 1"
    : state.type2 === null ? `Type I = ${state.type1}. Type II: press 1-5 (Backspace: change Type I)`
    : `Type I = ${state.type1}, Type II = ${state.type2}: press Enter to save`;
}

function show(data) {
  showProgress(data);
  state.instance = data.instance;
  state.done = !data.instance;
  $("instance").hidden = state.done;
  $("answer").hidden = state.done;
  $("done").hidden = !state.done;
  if (state.done) {
    $("done-file").textContent = data.file;
  } else {
    renderInstance(data.instance);
    state.type1 = data.previous ? data.previous.type1 : null;
    state.type2 = null;
    renderChoices();
  }
  document.body.dataset.item = state.done ? "" : data.instance.item;
  document.body.dataset.rated = String(data.rated);
}

async function loadNext(previous) {
  const data = await api("GET", `/api/rate/next?rater=${encodeURIComponent(state.rater)}`);
  if (previous && data.instance && data.instance.item === previous.item) data.previous = previous;
  show(data);
}

async function run(task) {
  if (state.busy) return;
  state.busy = true;
  document.body.dataset.busy = "1";
  try {
    await task();
  } catch (e) {
    setStatus(String(e.message || e), "error");
  } finally {
    state.busy = false;
    document.body.dataset.busy = "";
  }
}

function save() {
  if (!state.instance || state.type1 === null || state.type2 === null) return;
  const answer = { rater: state.rater, item: state.instance.item, type1: state.type1, type2: state.type2 };
  run(async () => {
    await api("POST", "/api/rate", answer);
    setStatus(`saved ${answer.item}: Type I ${answer.type1}, Type II ${answer.type2}`, "ok");
    await loadNext();
  });
}

function undo() {
  run(async () => {
    const r = await api("POST", "/api/rate/undo", { rater: state.rater });
    setStatus(r.undone ? `undid ${r.undone.item} (was Type I ${r.undone.type1}, Type II ${r.undone.type2})`
                       : "nothing to undo", r.undone ? "ok" : "");
    await loadNext(r.undone);
  });
}

function chooseType1(v) {
  if (!state.instance) return;
  state.type1 = v;
  state.type2 = null;
  renderChoices();
}

function chooseType2(v) {
  if (!state.instance || state.type1 === null) return;
  state.type2 = v;
  renderChoices();
  save();
}

function onKey(ev) {
  if (ev.target instanceof HTMLInputElement || ev.ctrlKey || ev.metaKey || ev.altKey || !state.rater) return;
  const k = ev.key;
  if (k === "u" || k === "U") { undo(); ev.preventDefault(); return; }
  if (state.done || state.busy || !state.instance) return;
  if (state.type1 === null) {
    if (k === "0" || k === "1") { chooseType1(Number(k)); ev.preventDefault(); }
  } else if (state.type2 === null && /^[1-5]$/.test(k)) {
    chooseType2(Number(k));
    ev.preventDefault();
  } else if (k === "Backspace" || k === "Escape") {
    state.type1 = null;
    state.type2 = null;
    renderChoices();
    ev.preventDefault();
  } else if (k === "Enter") {
    save();
    ev.preventDefault();
  }
}

function askRater() {
  state.rater = null;
  $("who").hidden = true;
  $("rater-form").hidden = false;
  $("instance").hidden = $("answer").hidden = $("done").hidden = true;
  $("rater-name").value = localStorage.getItem(RATER_KEY) || "";
  $("rater-name").focus();
  setStatus("Enter your rater name to start (your answers go to <name>.csv).");
}

function startAs(name) {
  state.rater = name;
  localStorage.setItem(RATER_KEY, name);
  $("rater-form").hidden = true;
  $("who").hidden = false;
  $("rater-label").textContent = name;
  setStatus("");
  $("rater-name").blur();
  run(() => loadNext());
}

document.addEventListener("DOMContentLoaded", () => {
  $("rater-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const name = $("rater-name").value.trim();
    if (!RATER_RE.test(name)) {
      setStatus("A rater name is 1-64 letters, digits, '_', '.' or '-'.", "error");
      return;
    }
    startAs(name);
  });
  $("change-rater").addEventListener("click", askRater);
  for (const b of document.querySelectorAll("[data-type1]")) {
    b.addEventListener("click", () => chooseType1(Number(b.dataset.type1)));
  }
  for (const b of document.querySelectorAll("[data-type2]")) {
    b.addEventListener("click", () => { if (!state.busy) chooseType2(Number(b.dataset.type2)); });
  }
  $("undo-btn").addEventListener("click", undo);
  $("done-undo").addEventListener("click", undo);
  document.addEventListener("keydown", onKey);
  const saved = localStorage.getItem(RATER_KEY);
  if (saved && RATER_RE.test(saved)) startAs(saved); else askRater();
});

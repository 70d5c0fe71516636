"""The measured tables of the documentation, generated from ``benchmarks/results/*.json``.

A page holds a marker pair ``<!-- table: NAME -->`` ... ``<!-- /table -->``; ``TABLES[NAME]`` reads
its JSON and returns the markdown table that goes between them.

    python scripts/docs_tables.py            # rewrite every table in docs/*.md and README.md
    python scripts/docs_tables.py --check    # exit 1 and name every page/table that disagrees

The script also copies the screenshot of the web page into ``docs/assets/``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"
ASSETS = [(RESULTS / "web_screenshot.png", DOCS / "assets" / "web_screenshot.png")]
MARKER = re.compile(r"(<!-- table: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)
TRUTHS = ["type1", "type2", "type3", "mustcite", "cited"]
TRUTH_NAMES = {"type1": "Type I", "type2": "Type II", "type3": "Type III", "mustcite": "combined",
               "cited": "cited"}


@cache
def load(name: str):
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- formatting helpers
def table(header: list[str], rows: list[list], align: list[str] | None = None) -> str:
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def f3(x) -> str:
    return "" if x is None else f"{x:.3f}"


def n(x) -> str:
    return f"{x:,}"


def pct(x, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def ratio(x, digits: int = 2) -> str:
    return f"{x:.{digits}f}x"


def p_text(p: float) -> str:
    """A p-value the way the pages write it: ``p < 0.001`` or ``p = 0.03``."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.2f}".rstrip("0").rstrip(".")


def rm(d: dict) -> str:
    """``R@100 / MRR`` of one metrics dict."""
    return f"{f3(d['R@100'])} / {f3(d['MRR'])}"


def rm_v(d: dict) -> str:
    """``R@100 / MRR`` of a ``{"values": {...}}`` row of a benchmark table."""
    return rm(d["values"])


def bold(s: str) -> str:
    return f"**{s}**"


# ---------------------------------------------------------------------------- README
def headline() -> str:
    v2 = load("recommend_test_neurips-2024.json")["tables"]
    v3 = load("recommend_test_v3.json")["tables"]
    rows = [["BM25", *(rm(v2[t]["BM25"]) for t in TRUTHS)],
            ["MiniLM (zero-shot)", *(rm(v2[t]["MiniLM"]) for t in TRUTHS)],
            [bold("mustcite"), *(bold(rm(v2[t]["mustcite"])) for t in TRUTHS)],
            ["mustcite / BM25", *(f"{ratio(v2[t]['mustcite']['R@100 ratio'])} / "
                                  f"{ratio(v2[t]['mustcite']['MRR ratio'])}" for t in TRUTHS)],
            ["papers and cited works (v3): BM25", *(rm(v3[t]["BM25"]) for t in TRUTHS)],
            [bold("papers and cited works (v3): mustcite"), *(bold(rm(v3[t]["mustcite"])) for t in TRUTHS)]]
    return table(["R@100 / MRR, held-out test", *(TRUTH_NAMES[t] for t in TRUTHS)], rows)


# ---------------------------------------------------------------------------- performance and serving
def cold_start() -> str:
    d = load("cold_start.json")
    rows = []
    for cmd, speed in d["speedup"].items():
        b, a = d["versions"]["before"][cmd], d["versions"]["after"][cmd]
        rows.append([cmd, f"{b['seconds']:.1f} s", f"{b['peak_rss_mb']:,.0f} MB", bold(f"{a['seconds']:.1f} s"),
                     f"{a['peak_rss_mb']:,.0f} MB", f"{speed:.1f}x"])
    return table(["command", "indexes rebuilt", "peak RSS", "indexes mapped from disk", "peak RSS", "faster"], rows)


def load_test() -> str:
    rows = []
    for f, model in (("load_test_light.json", "light (`--no-dense`)"), ("load_test.json", "default (int8 MiniLM)")):
        s = load(f)["settings"]
        one = s["old"]["loaded"]["throughput_rps"]
        for key, what in (("old", "one process, one request at a time"), ("new", "`--workers 2`")):
            x = s[key]
            tp = f"{x['loaded']['throughput_rps']:.1f} req/s"
            if key == "new":
                tp = bold(f"{tp} ({x['loaded']['throughput_rps'] / one:.2f}x)")
            p95 = f"{x['loaded']['p95_ms'] / 1000:.2f} s"
            rows.append([model, what, tp, f"{x['loaded']['p50_ms'] / 1000:.2f} s", bold(p95) if key == "new" else p95,
                         f"{x['one_client']['p50_ms']:.0f} ms", f"{x['rss_mb_all_processes'] / 1000:.1f} GB"])
    return table(["model", "setting", "throughput", "p50", "p95", "one client p50", "RSS, all processes"], rows)


def bad_inputs() -> str:
    d = load("bad_inputs.json")

    def cell(s: str) -> str:
        s = s.replace("|", "\\|").replace("\n", " ")
        s = s if len(s) <= 110 else s[:107] + "..."
        return f"`{s}`" if s else ""

    rows = []
    for r in d["rows"]:
        rss = r.get("peak_rss_mb")
        if rss is None and r.get("rss_increase_mb") is not None:
            rss_s = f"+{r['rss_increase_mb']:.1f}"
        else:
            rss_s = "" if rss is None else f"{rss:,.0f}"
        rows.append([f"`{r['case']}`", r["result"], cell(r.get("message") or ""), rss_s,
                     f"{r['wall_s']:.2f}", r["target"], "yes" if r["meets"] else "**no**"])
    return table(["case", "exit / HTTP", "message", "RSS MB", "s", "target", "meets"], rows,
                 ["---", "---", "---", "---:", "---:", "---", "---"])


def bad_inputs_summary() -> str:
    d = load("bad_inputs.json")
    rows = d["rows"]
    cli = [r for r in rows if r.get("peak_rss_mb") is not None]
    srv = [r for r in rows if r.get("rss_increase_mb") is not None]
    out = [["rows", n(d["rows_total"])], ["rows meeting their targets", n(d["meet_targets"])],
           ["slowest row", f"{max(r['wall_s'] for r in rows):.2f} s"],
           ["heaviest command (peak RSS)", f"{max(r['peak_rss_mb'] for r in cli):,.0f} MB"]]
    if srv:
        out.append(["largest server RSS increase in one request", f"+{max(r['rss_increase_mb'] for r in srv):.1f} MB"])
    out.append(["tracebacks", n(sum(1 for r in rows if r.get("traceback")))])
    return table(["", ""], out, ["---", "---:"])


def memory_caps() -> str:
    d = load("memory_caps.json")
    rows = []
    for c in d["cases"]:
        rows.append([c.get("case", c.get("name", "")), c.get("status", ""),
                     *[c.get(k, "") for k in ("seconds",)]])
    return table(["case", "HTTP", "s"], rows)


# ---------------------------------------------------------------------------- Ray
def ray_engine() -> str:
    d = load("ray_engine.json")
    e, a, c = d["extract_link"], d["annotate_offline"], d["encoding_onnx_int8_64tok"]
    rows = [[f"extract + link ({d['corpus_papers'] // 1000}K-paper corpus)",
             f"{e['local']['papers_per_s']:.1f} papers/s",
             f"{e['ray']['papers_per_s']:.1f} papers/s", f"{e['ray_over_local']:.2f}"],
            [f"annotate, offline judge ({n(a['local']['instances'])} instances)",
             f"{a['local']['papers_per_s']:.1f} papers/s",
             f"{a['ray']['papers_per_s']:.1f} papers/s", f"{a['ray_over_local']:.2f}"],
            [f"pool encoding, int8 ONNX MiniLM, 64 tokens ({c['local']['texts']} texts)",
             f"{c['local']['texts_per_s']:.0f} texts/s", f"{c['ray']['texts_per_s']:.0f} texts/s",
             f"{c['ray_over_local']:.2f}"]]
    return table(["stage", "local", "Ray", "Ray / local"], rows)


def _hours(h: float) -> str:
    m = h * 60
    if m < 1:
        return "under 1 min"
    if m < 10:
        return f"{m:.1f} min"
    if m < 60:
        return f"{m:.0f} min"
    return f"{h:.1f} h"


def ray_projection() -> str:
    hours = load("ray_engine.json")["projection"]["hours"]
    rows = []
    for key, h in hours.items():
        rows.append([key.split("_")[0], _hours(h["extract_link_153k_papers_h"]), _hours(h["encode_153k_papers_h"]),
                     _hours(h["offline_judge_2m_instances_h"])])
    return table(["workers", "extract + link, 153K papers", "encode 153K papers", "offline judge, 2M instances"], rows)


# ---------------------------------------------------------------------------- collect
def collect_import() -> str:
    d = load("collect_import.json")
    rows = []
    for c in d["collected"]:
        tracks = ", ".join(f"{name} {t['papers']:,} ({'main' if t['main'] else 'not main'}, {t['rule']})"
                           for name, t in c["tracks"].items())
        rows.append([f"{c['venue']} {c['year']} ({c['collector']})", n(c["collected"]), n(c["main_track"]),
                     n(c["with_abstract"]), tracks])
    return table(["venue-year (collector)", "collected", "main track", "with abstract",
                  "tracks: papers (decision, by)"],
                 rows, ["---", "---:", "---:", "---:", "---"])


# ---------------------------------------------------------------------------- labels
def judges() -> str:
    d = load("neural_judge_multicite.json")
    s, mc = d["summary_test3_rule_any"], d["mcnemar_vs_lr_test3"]
    loc = load("local_judge_multicite_test.json")
    names = {"offline-lr-v1": ("offline-lr-v1 (logistic regression)", None),
             "neural-minilm-v1 torch": ("neural-minilm-v1, torch", "neural"),
             "neural-minilm-v1 onnx-int8": ("neural-minilm-v1, int8 ONNX", None),
             "cascade-lr-neural-v1": (bold("cascade-lr-neural-v1") + " (LR on every item, int8 neural where unsure)",
                                      "cascade"),
             "average LR + neural": ("average of LR and neural on every item", "average")}
    best = {k: max(v[k] for v in s.values()) for k in ("accuracy", "cohen_kappa", "type2_qwk")}
    rows = []
    for key, (label, mkey) in names.items():
        v = s[key]
        cells = [bold(f3(v[k])) if v[k] == best[k] else f3(v[k]) for k in ("accuracy", "cohen_kappa", "type2_qwk")]
        p = "" if mkey is None else f"p = {mc[mkey]['p_value']:.2g}"
        rows.append([label, *cells, f"{v['instances_per_second']:,.0f}", p])
    c = loc["calibrated"]
    rows.append([f"local LLM, Qwen2.5-Coder-1.5B ({loc['judged']} items, calibrated)", f3(c["accuracy"]),
                 f3(c["cohen_kappa"]), "", f"{1 / loc['seconds_per_call']:.1f}", ""])
    return table(["judge", "accuracy", "Cohen's kappa", "Type II quadratic kappa", "instances/s",
                  "vs LR (exact McNemar)"],
                 rows, ["---", "---:", "---:", "---:", "---:", "---:"])


def label_distributions() -> str:
    d = load("relabel_cascade.json")
    b, a = d["before"], d["after"]

    def c(x, pos_key, pos, total):
        k = x[pos_key][pos]
        return f"{k:,} ({pct(k / total)})"

    def t2(x):
        k = sum(v for lvl, v in x["type2"].items() if int(lvl) >= x["type2_threshold"])
        return f"{k:,} ({pct(k / x['references'])})"

    rows = [["Type I positive", c(b, "type1", "1", b["references"]), c(a, "type1", "1", a["references"]), "25% (1:3)"],
            ["Type II >= 4", t2(b), t2(a), ""],
            [f"Type III (>= {b['type3_threshold']} mentions)", c(b, "type3", "1", b["references"]),
             c(a, "type3", "1", a["references"]), "15.9%"],
            ["combined must-cite", c(b, "must_cite", "true", b["references"]),
             c(a, "must_cite", "true", a["references"]), ""]]
    return table(["", "offline-lr-v1", "cascade-lr-neural-v1", "MasterSet (Figure 1)"], rows,
                 ["---", "---:", "---:", "---:"])


def labels_effect() -> str:
    d = load("labels_effect.json")["truths"]
    rows = []
    names = [("BM25", "BM25"), ("MiniLM", "MiniLM"), ("mustcite", "mustcite")]
    for t in ("type1", "type2", "mustcite"):
        m = d[t]["methods"]
        cells = []
        for _, key in names:
            r, q = m[key]["R@100"], m[key]["MRR"]
            cells.append(f"{f3(r['old'])} -> {f3(r['new'])} ({f3(q['old'])} -> {f3(q['new'])})")
        r = m["mustcite"]["R@100"]
        cells.append(f"{r['ratio_vs_bm25_old']:.2f}x -> {r['ratio_vs_bm25_new']:.2f}x")
        rows.append([TRUTH_NAMES[t], *cells])
    return table(["ground truth", "BM25", "MiniLM (int8, 64 tokens)", "mustcite", "mustcite / BM25"], rows)


# ---------------------------------------------------------------------------- cited works and names
def works_build() -> str:
    d = load("works_build.json")
    c, k = d["coverage"], d["by_kind"]
    kinds = ", ".join(f"{v:,} {name + ('s' if not name.endswith('s') and name not in ('software',) else '')}"
                      for name, v in k.items())
    rows = [["labelled papers", n(c["labelled_papers"])],
            ["unlinked references", n(d["unlinked_references"])],
            ["works", f"{d['works']:,}: {kinds}"],
            ["works cited by two or more papers", n(d["cited_by_two_or_more"])],
            ["references that identify no work (no usable title or identifier)", n(d["unidentified_references"])],
            ["build, names included: time, peak memory (2 cores, other jobs running)",
             f"{d['elapsed_s']:.0f} s, {d['measured']['peak_rss_gb']:.2f} GB"],
            ["must-cite references a corpus paper can stand for",
             f"{pct(c['must_cite_share_linked'])} ({c['must_cite_linked']:,} of {c['must_cite']:,})"],
            ["... a corpus paper or a work another paper also cites (leave-one-out)",
             f"{bold(pct(c['must_cite_share_covered']))} (+{c['must_cite_work']:,})"],
            ["all references, the same two figures",
             f"{pct(c['references_share_linked'])} -> {pct(c['references_share_covered'])}"]]
    return table(["", ""], rows, ["---", "---:"])


def names_build() -> str:
    d = load("works_build.json")["names"]
    wk = d["works_by_kind"]
    rows = [["names", f"{d['names']:,}, for {d['corpus_papers']:,} corpus papers and {d['works']:,} works "
                      f"({wk['dataset']:,} datasets, {wk['software']:,} software)"],
            ["support: 2 / 3-9 / 10+ citing papers",
             f"{d['support_2']:,} / {d['support_3_9']:,} / {d['support_10_plus']:,}"]]
    return table(["", ""], rows, ["---", "---:"])


def works_check() -> str:
    d = load("works_check.json")
    rows = []
    for k, v in d.items():
        rows.append([k, *[v.get(x, "") if not isinstance(v.get(x), float) else f3(v[x])
                          for x in ("works", "mentions", "precision", "recall")]])
    return table(["sample", "works", "mentions", "precision", "recall"], rows)


def names_check() -> str:
    d = load("names_check.json")
    rows = []
    for k, v in d.items():
        if isinstance(v, dict):
            rows.append([k, *[("" if v.get(x) is None else f3(v[x]) if isinstance(v[x], float) else v[x])
                              for x in ("names", "right", "precision")]])
    return table(["support", "names", "right", "precision"], rows)


# ---------------------------------------------------------------------------- benchmarks
def recommend_test_v1_v2() -> str:
    rows = []
    for f, tag in (("recommend_test_neurips-2024.json", "v2"), ("recommend_test_neurips-2024-v1.json", "v1")):
        t = load(f)["tables"]
        rows.append([f"{tag} BM25", *(rm(t[x]["BM25"]) for x in TRUTHS)])

        def with_p(d, m):
            p = d.get(f"{m} p_ttest")
            s = f3(d[m])
            return s if p is None or p < 0.001 else f"{s} (p={p:.1g})"

        rows.append([f"{tag} MiniLM", *(f"{with_p(t[x]['MiniLM'], 'R@100')} / {with_p(t[x]['MiniLM'], 'MRR')}"
                                        for x in TRUTHS)])
        rows.append([f"{tag} {bold('mustcite')}", *(bold(rm(t[x]["mustcite"])) for x in TRUTHS)])
        rows.append([f"{tag} mustcite / BM25", *(f"{ratio(t[x]['mustcite']['R@100 ratio'])} / "
                                                 f"{ratio(t[x]['mustcite']['MRR ratio'])}" for x in TRUTHS)])
    return table(["R@100 / MRR", *(TRUTH_NAMES[t] for t in TRUTHS)], rows)


TIER_LONG = {"type1": "Type I (baseline)", "type2": "Type II (core)", "type3": "Type III (used throughout)",
             "mustcite": "must-cite (any)", "cited": "cited"}


def recommend_test_v3() -> str:
    t = load("recommend_test_v3.json")["tables"]
    rows = []
    for x in TRUTHS:
        b, m = t[x]["BM25"], t[x]["mustcite"]
        rows.append([f"{TIER_LONG[x]} ({b['queries']})", rm(b), rm(m),
                     f"{ratio(m['R@100 ratio'])} / {ratio(m['MRR ratio'])}"])
    return table(["ground truth (queries)", "BM25 R@100 / MRR", "mustcite R@100 / MRR", "ratio R@100 / MRR"], rows)


def works_share() -> str:
    d = load("works_benchmark.json")
    s = d["all_references_named_top100"]
    labels = {"BM25 (v2 pool)": "BM25 (v2 pool)",
              "mustcite (v2 pool)": "mustcite (v2 pool; the model without cited works and names)",
              "BM25 (v3 pool)": "BM25 (v3 pool)",
              "mustcite (v3 pool: papers and works)": "mustcite (v3 pool: papers and works, with names)"}
    rows = [[labels.get(k, k), f3(v)] for k, v in s.items()]
    a, b = d["mustcite_v3_vs_v2"], d["mustcite_v3_vs_bm25_v3"]
    rows.append(["mustcite v3 / mustcite v2", f"{bold(ratio(a['ratio']))} (p = {a['p']:.1e})"])
    rows.append(["mustcite v3 / BM25 v3", ratio(b["ratio"])])
    q, e = d["queries"]["common"], d["reference_entries"]["common_queries"]
    return table([f"run ({q} v2 test queries, {e:,} reference entries)", "share named in the top 100"], rows,
                 ["---", "---:"])


def _p_short(p: float) -> str:
    return f"p {p:.2g}" if p >= 0.001 else f"p {p:.1g}"


def works_v2_figures() -> str:
    d = load("works_benchmark.json")["v2_figures_of_the_v3_model"]
    rows = []
    for t in TRUTHS:
        cells = [f"{f3(d[t][m]['before'])} -> {f3(d[t][m]['after'])} ({_p_short(d[t][m]['p'])})"
                 for m in ("R@100", "MRR", "MAP")]
        rows.append([TIER_LONG[t], *cells])
    return table(["ground truth", "R@100 v2 model -> v3 model", "MRR", "MAP"], rows)


def works_entries_by_kind() -> str:
    d = load("works_benchmark.json")
    e, total = d["entries_by_kind"], d["reference_entries"]["common_queries"]
    rows = []
    for kind, v in e.items():
        cells = []
        for key in ("mustcite (v2 pool)", "mustcite (v3 pool: papers and works)"):
            k = v[key]
            cells.append("-" if k == 0 else f"{k:,} ({k / v['entries']:.0%})" if k >= 100 else f"{k:,}")
        rows.append([kind, f"{v['entries']:,} ({v['entries'] / total:.0%})", *cells])
    return table(["entry kind", "entries", "named by the v2 model", "named by the v3 model"], rows,
                 ["---", "---:", "---:", "---:"])


def _bench_rows(name: str, labels: dict[str, str] | None = None, skip=()):
    d = load(name)["tables"]
    labels = labels or {}
    rows = []
    for method in d["type1"]:
        if method in skip:
            continue
        cells = [rm_v(d[t][method]) for t in TRUTHS]
        label = labels.get(method, method)
        if method == "mustcite":
            label, cells = bold(label), [bold(c) for c in cells]
        rows.append([label, *cells])
    return table(["R@100 / MRR", *(TRUTH_NAMES[t] for t in TRUTHS)], rows)


def baselines() -> str:
    return _bench_rows("baselines_table.json", {
        "MiniLM (int8, 64 tok)": "MiniLM (int8, 64 tokens, zero-shot)",
        "MiniLM (128 tok)": "MiniLM (128 tokens, zero-shot)", "MiniLM (256 tok)": "MiniLM (256 tokens, zero-shot)",
        "MiniLM-NTX (128 tok)": "MiniLM-NTX (128 tokens, NT-Xent on the train queries)",
        "ColBERT (full pool)": "ColBERT, full pool (exhaustive MaxSim)",
        "ColBERT-NTX (full pool)": "ColBERT-NTX, full pool",
        "ColBERT (rerank BM25@50)": "ColBERT, re-ranking BM25's top 50",
        "ColBERT-NTX (rerank BM25@50)": "ColBERT-NTX, re-ranking BM25's top 50",
        "BM25 + cross-encoder (listwise, rerank @50)": "BM25 + MiniLM cross-encoder, re-ranking the top 50 (listwise)",
        "KTR-PPR": "KTR-like PPR", "GNN (AR-GNN/LitFM-like)": "GNN (AR-GNN / LitFM-like)"})


def rerank() -> str:
    d = load("rerank_table.json")["tables"]
    rows = []
    for method in d["mustcite"]:
        label = ("none (BM25's order)" if method == "BM25"
                 else method.replace("BM25 + CE, ", "").replace(" (re-rank @50)", ""))
        cells = [f"{f3(d[t][method]['values']['MAP'])} / {f3(d[t][method]['values']['MRR'])}"
                 for t in ("mustcite", "type3", "cited")]
        rows.append([label, *cells])
    return table(["re-ranker of BM25's top 50", "combined MAP / MRR", "Type III MAP / MRR", "cited MAP / MRR"], rows)


def _secs(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min"


def _mb(mb: float | None) -> str:
    if mb is None:
        return ""
    return f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb:.0f} MB"


def method_costs() -> str:
    d = load("method_costs.json")["methods"]
    rows = []
    for method, m in d.items():
        tr = m.get("training") or {}
        tr_s = ("-" if not tr.get("seconds")
                else ", ".join(x for x in (_secs(tr["seconds"]), _mb(tr.get("peak_rss_mb"))) if x))
        pe = m.get("pool_encoding")
        if pe:
            pe_s = (f"{pe['texts_per_second']:.0f} texts/s ({pe['full_pool_minutes']:.0f} min), "
                    f"{_mb(pe.get('peak_rss_mb'))}")
        else:
            pe_s = "-"
        tr_run = m.get("test_run") or {}
        run_s = ", ".join(x for x in (_secs(tr_run.get("seconds")), _mb(tr_run.get("peak_rss_mb"))) if x)
        rows.append([method, tr_s, pe_s, run_s])
    return table(["method", "training", "pool encoding (2 cores; minutes for the whole pool)",
                  "test run, 257 queries (warm caches)"], rows)


def benchmark_v1(truth: str) -> str:
    sys.path.insert(0, str(ROOT / "src"))
    from mustcite.benchmark.report import Row, render

    d = load("benchmark_table.json")["tables"][truth]
    rows = [Row(method=m, values=v["values"], pvalues=v["pvalues_vs_first"], queries=v["queries"])
            for m, v in d.items()]
    return render(rows, "markdown", title="").rstrip("\n").rsplit("\n", 2)[0] + "\n"


def dense_subset() -> str:
    d = load("dense_subset.json")
    methods = list(d["methods"]) if isinstance(d["methods"], (list, dict)) else []
    text = d["tables"]
    rows = []
    parsed = {}
    for t, md in text.items():
        for line in md.splitlines():
            if line.startswith("| ") and not line.startswith("| Method"):
                cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
                parsed.setdefault(cells[0], {})[t] = cells
    header = "| Method | MAP | MRR | nD@10 | nD@20 | nD@30 | R@50 | R@100 | HR@10 | HR@20 |".strip("|").split("|")
    idx = {h.strip(): i for i, h in enumerate(header)}
    for method, per in parsed.items():
        cells = []
        for t in ("type1", "type2", "type3", "mustcite"):
            c = per[t]
            cells.append(f"{float(c[idx['R@100']].rstrip('*')):.3f} / {float(c[idx['MRR']].rstrip('*')):.3f}")
        rows.append([method, *cells])
    del methods
    return table(["R@100 / MRR", "Type I", "Type II", "Type III", "combined"], rows)


def retrieval_speed() -> str:
    d = load("retrieval_speed.json")
    rows = [["BM25 index build", f"{d['bm25_index_build_s']:.1f} s"],
            ["BM25 query, median / p95",
             f"{d['bm25_query_latency']['median_ms']:.1f} / {d['bm25_query_latency']['p95_ms']:.1f} ms"],
            ["BM25 batch", f"{d['bm25_batch_qps']:.0f} queries/s"]]
    return table(["", ""], rows, ["---", "---:"])


# ---------------------------------------------------------------------------- recommender
def _dev_cells(dev: dict, truths=TRUTHS) -> list[str]:
    return [rm(dev[t]) for t in truths]


ABLATION = {"full": bold("mustcite, default"), "-contexts": "- citation contexts", "-cocitation": "- co-citation",
            "-dense": "- dense step (BM25 only, also for neighbours)", "-neighbours": "- neighbour votes",
            "-citers": "- citer similarity", "-metadata": "- year, venue, title overlap",
            "-refs": "- NeurIPS 2023 neighbours (train queries only)", "-bm25": "- BM25 first stage",
            "-tiers": "- learned tier models (RRF + votes)", "+popularity": "+ popularity features"}


def ablation_v2() -> str:
    d = load("recommend_ablation_v2.json")
    light = load("recommend_ablation_v2_light.json")["variants"]
    onnx = load("recommend_ablation_v2_onnx.json")["variants"]
    cfg = d["variants"]["-contexts"]["config"]
    rows = [["BM25 alone", *_dev_cells(d["bm25 alone"])],
            [bold("mustcite, default") + f" (int8 MiniLM, {cfg['max_tokens']} tokens)",
             *_dev_cells(load("recommend_test_neurips-2024.json")["trained"]["dev"])]
            if "dev" in (load("recommend_test_neurips-2024.json").get("trained") or {}) else None,
            ["* the same with 128 tokens", *_dev_cells(onnx["full"]["dev"])],
            ["* without the dense step", *_dev_cells(light["full"]["dev"])],
            ["* without the dense step and the citation contexts", *_dev_cells(light["-contexts"]["dev"])]]
    rows = [r for r in rows if r]
    rows += [[ABLATION.get(k, k), *_dev_cells(v["dev"])] for k, v in d["variants"].items()]
    return table(["v2 dev, R@100 / MRR", *(TRUTH_NAMES[t] for t in TRUTHS)], rows)


def ablation_v1() -> str:
    d = load("recommend_ablation.json")
    rows = [["BM25 alone", *_dev_cells(d["bm25 alone"])]]
    for k, v in d["variants"].items():
        label = bold("final model") + " (all signals but popularity)" if k == "full" else ABLATION.get(k, k)
        rows.append([label, *_dev_cells(v["dev"])])
    return table(["v1 dev, R@100 / MRR", *(TRUTH_NAMES[t] for t in TRUTHS)], rows)


def static_encoder() -> str:
    return load("static_encoder.json")["table"].rstrip("\n") + "\n"


def learners() -> str:
    d = load("recommend_learners.json")["learners"]
    truths = ["type1", "type3", "mustcite", "cited"]
    labels = {"hgb-100": "HistGB 100 trees, lr 0.08", "hgb-300": bold("HistGB 300 trees, lr 0.05") + " (the default)",
              "hgb-63-leaves": "HistGB 63 leaves", "hgb-unweighted": "HistGB without class weights",
              "lambdarank": "LightGBM LambdaRank",
              "lambdarank-graded": "LambdaRank, graded (2 tier, 1 other citation)"}
    rows = [[labels.get(k, k), *_dev_cells(v["dev"], truths), f"{v['seconds']:.0f} s"]
            for k, v in d.items() if "dev" in v]
    return table(["dev, R@100 / MRR", *(TRUTH_NAMES[t] for t in truths), "training"], rows)


def unseen_share() -> str:
    d = load("unseen_contract.json")["conventions"]
    w, wo = d["with year"]["all_references_named"], d["without year"]["all_references_named"]
    rows = [["BM25 over corpus + works", f3(w["bm25"]), f3(wo["bm25"])],
            ["mustcite (corpus papers, cited works and names)",
             f"{bold(f3(w['mustcite']))} ({ratio(w['mustcite'] / w['bm25'])})",
             f"{bold(f3(wo['mustcite']))} ({ratio(wo['mustcite'] / wo['bm25'])})"]]
    return table(["share of all reference entries named in the top 100", 'with `"year": 2024`', "without a year"],
                 rows, ["---", "---:", "---:"])


def unseen_contract() -> str:
    d = load("unseen_contract.json")["conventions"]
    w, wo = d["with year"], d["without year"]
    rows = [["mustcite, year 2024", *(rm(w["mustcite"][t]) for t in TRUTHS)],
            ["BM25, year 2024", *(rm(w["bm25"][t]) for t in TRUTHS)],
            ["ratio, year 2024", *(f"{ratio(w['ratio'][t]['R@100'])} / {ratio(w['ratio'][t]['MRR'])}" for t in TRUTHS)],
            ["ratio, no year", *(f"{ratio(wo['ratio'][t]['R@100'])} / {ratio(wo['ratio'][t]['MRR'])}" for t in TRUTHS)]]
    return table(["R@100 / MRR", *(TRUTH_NAMES[t] for t in TRUTHS)], rows)


def unseen_gap() -> str:
    d = load("test_unseen_gap.json")
    rows = [[step, f3(v["mustcite_R@100"]), f3(v["bm25_R@100"]), ratio(v["ratio"])] for step, v in d["steps"].items()]
    b = d["benchmark_v2_test"]["tables_cited"]
    rows.append(["the benchmark: v2 test, train-only model, v2 pool", f3(b["mustcite"]["R@100"]),
                 f3(b["BM25"]["R@100"]), ratio(b["mustcite"]["R@100 ratio"])])
    return table(["step", "mustcite R@100", "BM25 R@100", "ratio"], rows, ["---", "---:", "---:", "---:"])


def recommend_latency() -> str:
    d = load("recommend_latency.json")
    rows = [["load the model", f"{d['load_s']:.0f} s"]]
    for k in ("python_warm", "rest_api"):
        v = d[k]
        rows.append([{"python_warm": "`Recommender.recommend`, model loaded",
                      "rest_api": "REST API, one request at a time"}[k],
                     f"median {v['median_ms']:.0f} ms / p95 {v['p95_ms']:.0f} ms"])
    rows.append(["batch", f"{d['batch']['qps']:.1f} queries/s"])
    return table(["", ""], rows, ["---", "---:"])


# ---------------------------------------------------------------------------- audit
def audit_simulation() -> str:
    m = load("audit_simulation_test.json")["methods"]
    base, aud = m["title+abstract"], m["audit"]
    ks = ["R@10", "R@20", "R@100", "MRR"]
    rows = [["title and abstract alone (the recommender)", *(f3(base[k]) for k in ks)],
            ["audit with the draft's references and words", *(bold(f3(aud[k])) for k in ks)],
            ["ratio (paired t-test and randomisation, 10,000 flips)",
             *(f"{ratio(aud[k + '_ratio'])} ({p_text(max(aud[k + '_p_ttest'], aud[k + '_p_randomisation']))})"
               for k in ks)]]
    return table(["", "recall@10", "recall@20", "recall@100", "MRR"], rows, ["---", "---:", "---:", "---:", "---:"])


def audit_latency() -> str:
    d = load("audit_latency.json")
    rows = []
    for k in ("python_warm", "rest_api", "cli_process"):
        v = d[k]
        rows.append([{"python_warm": "in-process, model loaded", "rest_api": "REST `POST /api/audit` with the zip",
                      "cli_process": "the CLI as a new process"}[k],
                     f"{v['median_ms'] / 1000:.2f} s", f"{v['p95_ms'] / 1000:.2f} s"])
    return table(["", "median", "p95"], rows)


# ---------------------------------------------------------------------------- SCIDOCA
def scidoca_floors() -> str:
    tasks = load("scidoca_floors.json")["tasks"]
    rows = []
    for t, v in tasks.items():
        for floor, r in v["test"].items():
            if not isinstance(r, dict) or "f1" not in r:
                continue
            label = "all" if floor == "all" else f"BM25 ({v.get('k_meaning', 'k')} {v.get('chosen_k')})"
            rows.append([t, label, f3(r["f1"]), f3(r.get("precision")), f3(r.get("recall")), f3(r.get("micro_f1")),
                         f3(r.get("no_citation_accuracy"))])
    return table(["Task", "floor", "F1", "P", "R", "micro F1", "no-citation acc."], rows,
                 ["---", "---", "---:", "---:", "---:", "---:", "---:"])


def scidoca_masked() -> str:
    rows = []
    for f, system in (("scidoca_masked.json", "lexical"), ("scidoca_masked_dense.json", "+ dense (`--dense`)"),
                      ("scidoca_masked_discovery.json", "+ Task 1 probabilities (`--discovery`)")):
        d = load(f)
        for split in ("dev", "test"):
            v = d.get(split)
            if not v or "learned" not in v:
                continue
            c = v["learned_vs_bm25"]
            rows.append([f"{split} ({v['learned']['masks']:,} masks)", system, f3(v["bm25"]["f1"]),
                         f3(v["learned"]["f1"]), ratio(c["ratio"]), p_text(c["p_randomisation"]).removeprefix("p "),
                         f"{v['learned']['paragraphs_per_s']:.0f}"])
    return table(["split", "system", "BM25 floor", "learned", "ratio", "p (randomisation, per paragraph)",
                  "paragraphs/s (learned)"], rows)


def scidoca_task1() -> str:
    rows = []
    for f, system in (("scidoca_task1_lexical_dev.json", "learned, lexical"),
                      ("scidoca_task1_dense_dev.json", "learned, + dense"),
                      ("scidoca_task1.json", "learned, + dense + title name + cross-encoder (pointwise)"),
                      ("scidoca_task1_listwise.json",
                       "learned, + dense + title name (listwise cross-encoder, weight 0)")):
        d = load(f)
        for split in ("dev", "test"):
            v = d.get(split) or {}
            if "learned" not in v:
                continue
            r = v["learned"]
            rows.append([split, system, f3(r["f1"]), f3(r.get("precision")), f3(r.get("recall")),
                         "" if r.get("paragraphs_per_s") is None else f"{r['paragraphs_per_s']:.1f}"])
    t = load("scidoca_task1.json")
    for split in ("dev", "test"):
        for floor in ("all", "bm25"):
            r = t[split][floor]
            rows.append([split, "all candidates" if floor == "all" else "BM25 top 8", f3(r["f1"]), f3(r["precision"]),
                         f3(r["recall"]), "" if floor == "all" else f"{r['paragraphs_per_s']:.0f}"])
    return table(["split", "system", "F1", "P", "R", "paragraphs/s"], rows,
                 ["---", "---", "---:", "---:", "---:", "---:"])


def scidoca_cross() -> str:
    rows = []
    for f, label in (("scidoca_cross_encoder_classifier_pilot.json", "new [CLS] head, listwise"),
                     ("scidoca_cross_encoder_untrained.json", "segment cosine, untrained"),
                     ("scidoca_cross_encoder.json", "segment cosine, listwise"),
                     ("scidoca_cross_encoder_late_cross.json", "late-cross, listwise")):
        d = load(f)["dev"]
        c = d["cross_encoder"]
        rows.append([f"{label} ({d['paragraphs']} dev paragraphs)", f3(c["auc_pooled"]), f3(c["auc_per_paragraph"]),
                     f"{c['top1_cited']:.2f}"])
    b = load("scidoca_cross_encoder.json")["dev"]["bm25"]
    rows.append(["BM25 alone", f3(b["auc_pooled"]), f3(b["auc_per_paragraph"]), f"{b['top1_cited']:.2f}"])
    u = load("scidoca_cross_encoder_untrained.json")["dev"]
    if "bi_encoder" in u:
        bi = u["bi_encoder"]
        rows.append(["MiniLM bi-encoder, untrained, each text alone", f3(bi["auc_pooled"]), f3(bi["auc_per_paragraph"]),
                     f"{bi['top1_cited']:.2f}"])
    return table(["scorer", "AUC pooled", "AUC per paragraph", "best-scored is cited"], rows,
                 ["---", "---:", "---:", "---:"])


def scidoca_task3() -> str:
    d = load("scidoca_task3.json")
    names = {"bm25": "BM25 top 1", "learned_ungated": "learned, every sentence answered",
             "learned": "learned, need-gated", "all": "all candidates"}
    rows = []
    for split in ("dev", "test"):
        for k, label in names.items():
            r = d[split][k]
            if split == "dev" and k == "all":
                continue
            rows.append([split, label, f3(r["f1"]), f3(r["precision"]), f3(r["recall"]), f3(r["micro_f1"]),
                         f3(r["no_citation_accuracy"]), "" if k == "all" else f"{r['paragraphs_per_s']:.0f}"])
    return table(["split", "system", "F1", "P", "R", "micro F1", "no-citation acc.", "paragraphs/s"], rows,
                 ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"])


# ---------------------------------------------------------------------------- reference checks, editor
REFCHECK_KINDS = {"wrong_year": "wrong year", "wrong_venue": "wrong venue", "authors_dropped": "an author dropped",
                  "authors_added": "an author added", "authors_swapped": "two authors swapped",
                  "title_joined": "a title joining two papers",
                  "arxiv_version": "the arXiv version of a published paper",
                  "wrong_identifier": "a DOI or URL of another paper", "invented": "an invented paper",
                  "misattributed": "a real work claimed at a held venue-year"}


def _wilson(d: dict) -> str:
    lo, hi = d["ci95"]
    return f"{lo:.3f}-{hi:.3f}"


def refcheck_eval() -> str:
    t = load("refcheck_eval.json")["test"]
    rows = [[what, n(t[k]["n"]), f3(t[k]["rate"]), _wilson(t[k]), pct(t[k]["unverifiable_share"])]
            for k, what in REFCHECK_KINDS.items()]
    o = t["overall_perturbed"]
    rows.append([bold("all perturbed entries"), n(o["n"]), bold(f3(o["rate"])), _wilson(o), ""])
    for k, what in (("intact", "intact, venues the corpus holds (false positives)"),
                    ("side_track_intact", "intact, Findings / Datasets & Benchmarks / workshop papers cited with "
                                          "the main booktitle (false positives)"),
                    ("outside_intact", "intact, outside the corpus (false positives)"),
                    ("real_references", "reference strings from NeurIPS full texts (flagged)")):
        rows.append([what, n(t[k]["n"]), f3(t[k]["rate"]), _wilson(t[k]), pct(t[k]["unverifiable_share"])])
    return table(["entries (held-out test split)", "n", "detected / flagged", "95% interval", "unverifiable"], rows)


def refcheck_speed() -> str:
    d = load("refcheck_eval.json")
    w, c = d["warm"], d["new_process_60"]
    rss = sorted(r["peak_rss_mb"] for r in c["runs"])[len(c["runs"]) // 2]
    rows = [["warm process (index loaded)", f"{n(w['entries'])} entries in {w['seconds']:.1f} s",
             f"{w['entries_per_s']:,.0f} entries/s"],
            ["new process, 60-entry .bib", f"{c['median_wall_s']:.2f} s (median of {len(c['runs'])})",
             f"peak RSS {rss:,.0f} MB"],
            ["first run after a corpus rebuild", f"+{d['index_build_s']:.1f} s", "the index is built once"]]
    return table(["check-refs", "time", ""], rows)


def lsp_latency() -> str:
    d = load("lsp_latency.json")
    head = f"language server, {d['references']}-reference LaTeX project"
    if "ratio" not in d:
        rows = [[step, f"{s:.3f} s"] for step, s in d["seconds"].items()]
        return table([head, "wall time"], rows)
    (first, a), (last, b) = list(d["median"].items())[0], list(d["median"].items())[-1]
    rows = [[step, f"{a[step]:.3f} s", f"{b[step]:.3f} s", f"{d['ratio'][step]:.2f}"] for step in b]
    n = d["sessions_per_tree"]
    return table([head, f"{first} (median of {n})", f"{last} (median of {n})", f"{last} / {first}"], rows)


def reproducible_install() -> str:
    d = load("reproducible_install.json")
    f = d["per_file"]
    rows = [[f"`{name}`", f"`{f[name]['sha256'][:16]}…`", "yes" if f[name]["identical"] else "no"]
            for name in ("tiers.joblib", "pool_vectors.npy", "labelled_vectors.npy", "bm25/bm25s/data.csc.index.npy",
                         "pool.parquet") if name in f]
    rows.append([f"all {d['files']} files of the model", "", f"{d['identical']} identical"])
    for name, v in f.items():
        if not v["identical"]:
            why = "same once the clone's path is replaced" if v.get("identical_after_path_replaced") else \
                "records times or file stamps"
            rows.append([f"`{name}`", "", f"no: {why}"])
    rows.append([f"`pip freeze` ({d['packages']} packages)", f"`{d['pip_freeze_sha256'][:16]}…`",
                 "yes" if d["pip_freeze_identical"] else "no"])
    return table(["two fresh clones, each `make venv` + `mustcite train --no-refit --fit-queries 1500`",
                  "sha256", "identical"], rows)


# ---------------------------------------------------------------------------- corpus reach (ML Anthology)
def corpus_reach() -> str:
    d = load("corpus_reach.json")
    b, a = d["before"], d["after"]
    rows = [["papers (main tracks of the 15 venues)", n(b["papers"]), n(a["papers"])],
            ["without an abstract", f'{n(b["without_abstract"])} ({pct(b["without_abstract"] / b["papers"])})',
             f'{n(a["without_abstract"])} ({pct(a["without_abstract"] / a["papers"])})'],
            ["2013-2025 papers without an abstract",
             f'{n(b["main_2013_2025"]["without_abstract"])} of {n(b["main_2013_2025"]["papers"])} '
             f'({pct(b["main_2013_2025"]["share_without"])})',
             f'{n(a["main_2013_2025"]["without_abstract"])} of {n(a["main_2013_2025"]["papers"])} '
             f'({pct(a["main_2013_2025"]["share_without"])})'],
            ["side records (workshops, journals, other venues and tracks)", n(b.get("side_records", 0)),
             n(a.get("side_records", 0))],
            ["records read", n(b["records_read"]), n(a["records_read"])],
            ["build time (s)", b["build_seconds"], a["build_seconds"]]]
    bands_b = {r["band"]: r for r in b["by_year_band"]}
    for r in a["by_year_band"]:
        rb = bands_b.get(r["band"], {"papers": 0, "without_abstract": 0})
        rows.append([f'papers of {r["band"]} (without abstract)', f'{n(rb["papers"])} ({n(rb["without_abstract"])})',
                     f'{n(r["papers"])} ({n(r["without_abstract"])})'])
    return table(["", "paper lists alone", "paper lists + ML Anthology"], rows, ["---", "---:", "---:"])


def anthology_effect() -> str:
    """mustcite before and after ML Anthology in the pool, each run scored on the after build's test
    qrels (the same queries), with BM25 of each build for the ratio."""
    d = load("anthology_effect.json")
    rows = []
    for tag in ("v2", "v3"):
        paired = d[tag].get("paired_on_after_qrels", {})
        for gt in ("mustcite", "cited"):
            row = paired.get(gt)
            if not row:
                continue
            own = [t[gt]["mustcite"]["R@100"] for t in (d[tag]["before"], d[tag]["after"])]
            ratios = [f'{t[gt]["mustcite"]["R@100"] / t[gt]["BM25"]["R@100"]:.2f}x'
                      for t in (d[tag]["before"], d[tag]["after"])]
            rows.append([f"{tag} test, {gt}", n(row["queries"]),
                         *[f'{row[m]["before"]:.3f} -> {row[m]["after"]:.3f} (p={row[m]["p"]:.2g})'
                           for m in ("MAP", "MRR", "nDCG@10", "R@100")],
                         f"{own[0]:.3f} -> {own[1]:.3f}", f"{ratios[0]} -> {ratios[1]}"])
    ub, ua = d["unseen"]["before"], d["unseen"]["after"]
    for conv, cb in ub["conventions"].items():
        ca = ua["conventions"][conv]
        for gt in ("mustcite", "cited"):
            rows.append([f"unseen contract ({conv}), {gt}", n(ca["mustcite"][gt]["queries"]),
                         *[f'{cb["mustcite"][gt][m]:.3f} -> {ca["mustcite"][gt][m]:.3f}'
                           for m in ("MAP", "MRR", "nDCG@10", "R@100")],
                         f'{cb["mustcite"][gt]["R@100"]:.3f} -> {ca["mustcite"][gt]["R@100"]:.3f}',
                         f'{cb["mustcite"][gt]["R@100"] / cb["bm25"][gt]["R@100"]:.2f}x -> '
                         f'{ca["mustcite"][gt]["R@100"] / ca["bm25"][gt]["R@100"]:.2f}x'])
    return table(["benchmark, ground truth", "queries", "MAP", "MRR", "nDCG@10", "R@100",
                  "R@100, each on its own qrels", "R@100 / BM25"], rows,
                 ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])


def corpus_venues() -> str:
    d = load("corpus_reach.json")
    before = {r["venue"]: r for r in d["before"]["by_venue"]}
    rows = []
    for r in d["after"]["by_venue"]:
        rb = before.get(r["venue"])
        rows.append([r["venue"], f'{rb["first"]}-{rb["last"]}' if rb else "", n(rb["papers"]) if rb else "0",
                     f'{r["first"]}-{r["last"]}', n(r["papers"]), n(r["without_abstract"])])
    return table(["venue", "years before", "papers before", "years after", "papers after", "after: without abstract"],
                 rows, ["---", "---", "---:", "---", "---:", "---:"])


def corpus_side() -> str:
    d = load("corpus_reach.json")["after"]
    rows = [[r["track"], n(r["records"]), r["venues"]] for r in d["side_by_track"]]
    return table(["track of the side record", "records", "venues"], rows, ["---", "---:", "---:"])


def corpus_versions() -> str:
    d = load("corpus_reach.json")["after"]
    rows = [[r["kinds"], r["evidence"], n(r["links"])] for r in d["version_links"]]
    return table(["the two versions", "evidence", "links"], rows, ["---", "---", "---:"])


def corpus_disagreements() -> str:
    d = load("corpus_reach.json")["after"]
    rows = [[r["field"], r["kind"], n(r["papers"])] for r in d["disagreements"]]
    return table(["field", "kind", "papers"], rows, ["---", "---", "---:"])


def refcheck_drafts() -> str:
    runs = load("refcheck_drafts.json")["runs"]
    statuses = sorted({s for r in runs.values() for s in r["statuses"]})
    rows = []
    for label, r in runs.items():
        lo, hi = r["ci95"]
        rows.append([label, n(r["entries"]), *[n(r["statuses"].get(s, 0)) for s in statuses],
                     f'{pct(r["answered_share"])} ({pct(lo)}-{pct(hi)})'])
    return table(["run", "entries", *statuses, "answered (95% CI)"], rows,
                 ["---", "---:", *["---:"] * len(statuses), "---:"])


def refcheck_hallmark() -> str:
    runs = load("refcheck_hallmark.json")
    rows = []
    for label, d in runs.items():
        for name, o in (("all entries", d["overall"]),
                        ("without the disputed VALID labels", d["without_disputed_valid"])):
            rows.append([label, name, f3(o["detection"]), f3(o["fp_rate"]), f3(o["f1"]), f3(o["f1_answered"]),
                         f3(o["answered"])])
    b = next(iter(runs.values()))["baseline"]
    rows.append([b["tool"], "published, online", f3(b["detection"]), f3(b["fp_rate"]), f3(b["f1"]), "", ""])
    return table(["run", "entries", "detection", "false positives", "F1", "F1 over answered", "answered"], rows,
                 ["---", "---", "---:", "---:", "---:", "---:", "---:"])


def refcheck_hallmark_kinds() -> str:
    d = list(load("refcheck_hallmark.json").values())[-1]
    rows = [[k, v["n"], f3(v["detection"] if v["detection"] is not None else None),
             f3(v["fp_rate"]) if v.get("fp_rate") is not None else "", f3(v["answered"])]
            for k, v in d["per_kind"].items()]
    return table(["kind", "entries", "detection", "false positives", "answered"], rows,
                 ["---", "---:", "---:", "---:", "---:"])


TABLES = {
    "reproducible_install": reproducible_install,
    "refcheck_eval": refcheck_eval,
    "refcheck_speed": refcheck_speed,
    "lsp_latency": lsp_latency,
    "anthology_effect": anthology_effect,
    "headline": headline,
    "cold_start": cold_start,
    "load_test": load_test,
    "bad_inputs": bad_inputs,
    "bad_inputs_summary": bad_inputs_summary,
    "ray_engine": ray_engine,
    "ray_projection": ray_projection,
    "collect_import": collect_import,
    "judges": judges,
    "label_distributions": label_distributions,
    "labels_effect": labels_effect,
    "works_build": works_build,
    "names_build": names_build,
    "recommend_test_v1_v2": recommend_test_v1_v2,
    "recommend_test_v3": recommend_test_v3,
    "works_share": works_share,
    "works_v2_figures": works_v2_figures,
    "works_entries_by_kind": works_entries_by_kind,
    "baselines": baselines,
    "rerank": rerank,
    "method_costs": method_costs,
    **{f"benchmark_v1_{t}": (lambda t=t: benchmark_v1(t)) for t in TRUTHS},
    "dense_subset": dense_subset,
    "ablation_v2": ablation_v2,
    "ablation_v1": ablation_v1,
    "static_encoder": static_encoder,
    "learners": learners,
    "unseen_contract": unseen_contract,
    "unseen_gap": unseen_gap,
    "audit_simulation": audit_simulation,
    "scidoca_floors": scidoca_floors,
    "scidoca_masked": scidoca_masked,
    "scidoca_task1": scidoca_task1,
    "scidoca_cross": scidoca_cross,
    "scidoca_task3": scidoca_task3,
    "unseen_share": unseen_share,
    "works_check": works_check,
    "retrieval_speed": retrieval_speed,
    "recommend_latency": recommend_latency,
    "audit_latency": audit_latency,
    "corpus_reach": corpus_reach,
    "corpus_venues": corpus_venues,
    "corpus_side": corpus_side,
    "corpus_versions": corpus_versions,
    "corpus_disagreements": corpus_disagreements,
    "refcheck_drafts": refcheck_drafts,
    "refcheck_hallmark": refcheck_hallmark,
    "refcheck_hallmark_kinds": refcheck_hallmark_kinds,
}


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def render_page(text: str, where: str, problems: list[str]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group("name")
        if name not in TABLES:
            problems.append(f"{where}: unknown table {name!r}")
            return m.group(0)
        return m.group(1) + TABLES[name]() + m.group(4)

    return MARKER.sub(sub, text)


def run(check: bool, root: Path = ROOT) -> list[str]:
    """Rewrite (or, with ``check``, compare) every generated table; the problems found, one line each."""
    problems: list[str] = []
    for page in pages(root):
        if not page.exists():
            continue
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(root)
        local: list[str] = []
        new = render_page(text, str(rel), local)
        problems += local
        if new == text:
            continue
        if check:
            old_tables = {m.group("name"): m.group("body") for m in MARKER.finditer(text)}
            new_tables = {m.group("name"): m.group("body") for m in MARKER.finditer(new)}
            for name, body in new_tables.items():
                if old_tables.get(name) != body:
                    problems.append(f"{rel}: table {name!r} disagrees with its JSON")
        else:
            page.write_text(new, encoding="utf-8")
    for src, dst in ASSETS:
        if check:
            if not dst.exists() or dst.read_bytes() != src.read_bytes():
                problems.append(f"{dst.relative_to(root)}: differs from {src.relative_to(root)}")
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a table disagrees")
    args = ap.parse_args(argv)
    problems = run(args.check)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

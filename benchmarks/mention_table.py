"""The mention table of the NeurIPS 2023-2024 full texts, the link probability of its names, and the
learned confidence scored on the held-out papers.

    python benchmarks/mention_table.py [--work DIR] [--out DIR] [-w 2]
        -> benchmarks/results/mention_table.json, docs/img/mention_reliability.png

``--work``: a work folder with a linked extraction (``extract/``) and the catalogue of cited works
(``corpus/works.parquet``...), as ``make demo`` builds; it is only read. ``--out``: where the table
(``<out>/mentions``) and the models (``<out>/models/mentions``) go. The split is
``benchmarks/splits/mentions_split.json`` (fixed before any fit).

Reported: papers, mentions, rows, forms and the share of mentions cited; the link probability of 20
forms spread over its range (forms written by at least 20 train papers, at the 20 quantiles of their
link probability) and of a few forms named in advance; and per label, the held-out Brier score
against the base rate's, the AUC, and a reliability table of 10 bins, with two references: the
out-of-fold cite share of the (form, work) alone, and the constant train base rate.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq

from mustcite.extract import MENTIONS_FILE as TABLE_FILE
from mustcite.extract import MENTIONS_SUMMARY_FILE as SUMMARY_FILE
from mustcite.extract import build_mention_table, form_stats, out_of_fold_stats, paper_uses, target_stats
from mustcite.extract import mention_arrow_table as arrow_table
from mustcite.recommend import MENTION_FEATURES as FEATURES
from mustcite.recommend import MENTION_FORM_TARGETS_FILE as FORM_TARGETS_FILE
from mustcite.recommend import MENTION_FORMS_FILE as FORMS_FILE
from mustcite.recommend import MENTION_LABELS as LABELS
from mustcite.recommend import fit_mention_model
from mustcite.recommend import mention_feature_rows as feature_rows
from mustcite.recommend import mention_reliability as reliability
from mustcite.recommend import mention_scores as scores

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
FIGURE = ROOT / "docs" / "img" / "mention_reliability.png"
SPLIT = ROOT / "benchmarks" / "splits" / "mentions_split.json"
#: forms whose link probability is reported whatever their rank (when the train papers write them)
NAMED_FORMS = ("titan", "volta", "ampere", "rtx", "workshop", "imagenet", "squad", "pytorch", "adam", "cifar10",
               "gemma", "llama", "transformer", "bert", "svd", "tpr")
MIN_FORM_PAPERS = 20


def spread_forms(forms: list[dict], n: int = 20) -> list[dict]:
    """``n`` forms written by at least :data:`MIN_FORM_PAPERS` train papers, at evenly spaced
    quantiles of their link probability (ties broken by papers, then key)."""
    common = sorted((f for f in forms if f["papers"] >= MIN_FORM_PAPERS),
                    key=lambda f: (f["link_probability"], -f["papers"], f["key"]))
    if len(common) <= n:
        return common
    idx = np.unique(np.round(np.linspace(0, len(common) - 1, n)).astype(int))
    return [common[i] for i in idx]


def form_row(f: dict, surface: dict[str, str]) -> dict:
    return {"form": surface.get(f["key"], f["key"]), "key": f["key"], "papers": int(f["papers"]),
            "link_probability": round(float(f["link_probability"]), 3),
            "link_probability_sentence": round(float(f["link_probability_sentence"]), 3),
            "linked_papers": int(f["linked_papers"])}


def plot(bins: dict[str, list[dict]], path: Path, xlabel: str = "predicted probability (10 bins)") -> None:
    """A reliability diagram per label: mean predicted against observed share, rows per bin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(bins), figsize=(5 * len(bins), 4.4))
    for ax, (title, rows) in zip(np.atleast_1d(axes), bins.items()):
        pts = [(r["mean_predicted"], r["observed"], r["rows"]) for r in rows if r["rows"]]
        x, y, n = map(np.array, zip(*pts))
        ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--")
        ax.plot(x, y, marker="o", color="C0")
        for xi, yi, ni in zip(x, y, n):
            ax.annotate(f"{ni:,}", (xi, yi), textcoords="offset points", xytext=(4, -10), fontsize=7)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("observed share")
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/work/demo-work"))
    ap.add_argument("--out", type=Path, default=ROOT / "mustcite-work")
    ap.add_argument("-w", "--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    table_dir = args.out / "mentions"
    s = build_mention_table(args.work / "extract", args.work / "corpus", table_dir, split_file=SPLIT,
                            workers=args.workers)
    build_s = time.perf_counter() - t0
    table = table_dir / TABLE_FILE
    model_dir = args.out / "models" / "mentions"
    model_dir.mkdir(parents=True, exist_ok=True)

    t1 = time.perf_counter()
    con = duckdb.connect()
    con.execute("set threads to 2").fetchall()
    uses = paper_uses(con, table, split="train")
    con.register("train_uses", uses)
    forms_t = form_stats(con, "train_uses")
    pq.write_table(forms_t, model_dir / FORMS_FILE)
    pq.write_table(target_stats(con, "train_uses"), model_dir / FORM_TARGETS_FILE)
    forms = forms_t.to_pylist()
    surface = dict(con.execute(f"""select key, mode(surface) from read_parquet('{table}') where split = 'train'
                                   group by key""").fetchall())
    stats = out_of_fold_stats(con, table)
    con.register("oof_stats", stats)
    X, meta = feature_rows(con, table, "oof_stats")
    counts = arrow_table(con, f"""select count(*) as rows, count(distinct paper) as papers,
        count(distinct key) as forms,
        count(distinct (paper, unit, section, sentence_index, "offset", sentence)) as mentions
        from read_parquet('{table}')""").to_pylist()[0]
    con.close()
    stats_s = time.perf_counter() - t1

    summary = json.loads((table_dir / SUMMARY_FILE).read_text())
    held = meta["split"] == "held_out"
    out: dict = {
        "command": "python benchmarks/mention_table.py --work /work/demo-work --out mustcite-work -w 2",
        "split": {"file": "benchmarks/splits/mentions_split.json", **{k: v for k, v in
                  json.loads(SPLIT.read_text()).items() if k != "held_out"}},
        "table": {"papers": summary["papers"], "papers_ok": summary["papers_ok"],
                  "papers_skipped": summary["papers_skipped"], "mentions": summary["mentions"],
                  "rows": summary["rows"], "surface_forms": summary["surface_forms"], "names": summary["names"],
                  "name_targets": summary["name_targets"], "by_split": summary["by_split"],
                  "share_rows_cited_sentence": summary["share_cited_sentence"],
                  "share_rows_cited_paper": summary["share_cited_paper"], "checked": counts},
        "timing": {"table_build_s": round(build_s, 1), "table_cached": s.cached,
                   "table_built_in_s": summary["elapsed_s"],
                   "statistics_and_features_s": round(stats_s, 1)},
        "link_probability": {
            "definition": "share of the train papers writing the form that cite a work it names (any version) "
                          "anywhere; _sentence: in a sentence that writes it",
            "spread": [form_row(f, surface) for f in spread_forms(forms)],
            "named": [form_row(f, surface) for f in forms if f["key"] in NAMED_FORMS],
            "forms_with_20_papers": sum(f["papers"] >= MIN_FORM_PAPERS for f in forms)},
        "models": {},
    }
    bins = {}
    for label in LABELS:
        t2 = time.perf_counter()
        model, p = fit_mention_model(X, meta, label=label, seed=args.seed,
                                     inputs={"table": str(table), "inputs_key": summary["inputs_key"]})
        model.save(model_dir / label)
        y = meta[label][held].astype(float)
        base = model.card["train_base_rate"]
        share_col = "cite_share_sentence" if label == "cited_sentence" else "cite_share"
        lp = X[held, FEATURES.index(share_col)].astype(float)
        out["models"][label] = {
            "held_out": model.card["held_out"], "train_base_rate": base, "iterations": model.card["iterations"],
            "fit_rows": model.card["fit_rows"], "fit_s": round(time.perf_counter() - t2, 1),
            "cite_share_alone": {**scores(y, lp, base), "reliability": reliability(y, lp)},
        }
        if label == "cited_paper":
            # per (held-out paper, work): the highest confidence of its rows against whether the paper
            # cites the work at all, as the audit decides once per named work
            pairs: dict[tuple[str, str], list[float]] = {}
            for paper, target, pi, yi in zip(meta["paper"][held], meta["target"][held], p, y):
                pairs.setdefault((paper, target), [0.0, yi])[0] = max(pairs.get((paper, target), [0.0])[0], pi)
            pp = np.array([v[0] for v in pairs.values()])
            py = np.array([v[1] for v in pairs.values()])
            out["models"][label]["per_paper_and_work"] = {**scores(py, pp, float(py.mean())),
                                                          "base_rate_note": "the held-out pairs' own share",
                                                          "reliability": reliability(py, pp)}
        bins[f"{label}: held-out papers (Brier {model.card['held_out']['brier']:.3f}, "
             f"base rate {model.card['held_out']['brier_base_rate']:.3f})"] = model.card["held_out"]["reliability"]
    out["timing"]["peak_rss_mb"] = round(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                                             resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024)
    plot(bins, FIGURE)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mention_table.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("table", "timing")}, indent=1))
    for label, m in out["models"].items():
        h = m["held_out"]
        print(f"{label}: Brier {h['brier']} vs base {h['brier_base_rate']}, AUC {h['auc']}; cite share alone "
              f"Brier {m['cite_share_alone']['brier']}, AUC {m['cite_share_alone']['auc']}")


if __name__ == "__main__":
    main()

"""Relabel every citation instance of an extraction folder with another judge, beside the old labels,
and compare the two label sets (MasterSet Figure 1, before and after).

The extraction folder ``--refs`` keeps its labels (``DIR/labels/``, e.g. from ``offline-lr-v1``).
The new labels go to a *view* folder (``--view``): symbolic links to the same reference and metadata
files, with its own ``labels/``, so both label sets stay and a benchmark can be built on either
(``mustcite benchmark build --refs VIEW --out ...``).  ``mustcite annotate VIEW --backend B`` does the
relabelling (a rerun keeps what an earlier run of the same judge finished).

Writes ``benchmarks/results/relabel_<backend>.json``: the time and instances per second of the
relabelling, label counts before and after, the share of Type I positives against MasterSet's
(1:3, i.e. 25%), per-instance agreement of the two label sets (Type I accuracy and Cohen's kappa,
Type II quadratic-weighted kappa, transition counts), and the figure
``benchmarks/results/label_distributions_before_after.png``.

    MUSTCITE_NEURAL_RUNTIME=onnx-int8 python benchmarks/relabel_compare.py --refs mustcite-work/extract \\
        --view mustcite-work/extract-cascade --backend cascade
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mustcite.extract import LABELS_SUBDIR  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.labels import SUMMARY_NAME, annotate_dir, label_counts, plot_counts  # noqa: E402  # noqa: E402

RESULTS = Path(__file__).parent / "results"
PAPER_TYPE1_SHARE = 0.25      # MasterSet Figure 1(a): "a 1:3 positive-to-negative ratio"


def make_view(refs: Path, view: Path) -> int:
    """Link every file of ``refs`` (not its labels) into ``view``; returns the number linked now."""
    view.mkdir(parents=True, exist_ok=True)
    made = 0
    for f in sorted(refs.iterdir()):
        if not f.is_file() or f.name == SUMMARY_NAME or f.name.startswith("."):
            continue
        link = view / f.name
        if not link.exists():
            link.symlink_to(f.resolve())
            made += 1
    return made


def compare(old_dir: Path, new_dir: Path) -> dict:
    """Per-instance agreement of two label folders over the reference files both hold."""
    from sklearn.metrics import cohen_kappa_score

    t1: Counter = Counter()
    t2: Counter = Counter()
    mc: Counter = Counter()
    a1, b1, a2, b2 = [], [], [], []
    papers = 0
    for new in sorted(new_dir.glob("*.json")):
        old = old_dir / new.name
        if not old.is_file():
            continue
        papers += 1
        for x, y in zip(json.loads(old.read_text("utf-8")), json.loads(new.read_text("utf-8"))):
            if x.get("type1") is None or y.get("type1") is None:
                continue
            a1.append(int(x["type1"]))
            b1.append(int(y["type1"]))
            a2.append(int(x["type2"]))
            b2.append(int(y["type2"]))
            t1[f"{x['type1']}->{y['type1']}"] += 1
            t2[f"{x['type2']}->{y['type2']}"] += 1
            mc[f"{bool(x.get('must_cite'))}->{bool(y.get('must_cite'))}".lower()] += 1
    n = len(a1)
    return {"papers": papers, "instances": n,
            "type1_agreement": round(sum(x == y for x, y in zip(a1, b1)) / n, 4) if n else None,
            "type1_cohen_kappa": round(float(cohen_kappa_score(a1, b1)), 4) if n else None,
            "type2_exact_agreement": round(sum(x == y for x, y in zip(a2, b2)) / n, 4) if n else None,
            "type2_quadratic_kappa": round(float(cohen_kappa_score(a2, b2, weights="quadratic")), 4) if n else None,
            "type1_transitions": dict(sorted(t1.items())), "must_cite_transitions": dict(sorted(mc.items())),
            "type2_transitions": dict(sorted(t2.items()))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refs", type=Path, required=True, help="labelled extraction folder (the old labels)")
    ap.add_argument("--view", type=Path, required=True, help="folder for the new labels (links to --refs)")
    ap.add_argument("--backend", default="cascade")
    ap.add_argument("--model", default=None, help="model folder / name for the backend")
    ap.add_argument("--compare-only", action="store_true", help="do not annotate, compare what is there")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--figure", type=Path, default=RESULTS / "label_distributions_before_after.png")
    args = ap.parse_args()
    out = args.out or RESULTS / f"relabel_{args.backend}.json"
    linked = make_view(args.refs, args.view)
    result: dict = {"refs": str(args.refs), "view": str(args.view), "backend": args.backend, "linked_now": linked}
    if not args.compare_only:
        t0 = time.perf_counter()
        summary = annotate_dir(args.view, backend=args.backend, model=args.model, progress=sys.stderr.isatty())
        secs = time.perf_counter() - t0
        result["annotate"] = {"seconds": round(secs, 1), "summary_instances_per_s": summary.get("instances_per_s"),
                              "instances": summary["instances"], "skipped_papers": summary["skipped"],
                              "judge": summary["judge"], "cpu_count": os.cpu_count()}
    summary = json.loads((args.view / SUMMARY_NAME).read_text("utf-8"))
    old_summary = json.loads((args.refs / SUMMARY_NAME).read_text("utf-8"))
    before = label_counts(args.refs / LABELS_SUBDIR)
    after = label_counts(args.view / LABELS_SUBDIR)
    for c in (before, after):
        c["type1_positive_share"] = round(c["type1"].get("1", 0) / max(1, c["references"]), 4)
        c["type2_must_cite_share"] = round(sum(v for k, v in c["type2"].items() if k in ("4", "5"))
                                           / max(1, c["references"]), 4)
        c["type3_share"] = round(c["type3"].get("1", 0) / max(1, c["references"]), 4)
        c["must_cite_share"] = round(c["must_cite"].get("true", 0) / max(1, c["references"]), 4)
    names = (old_summary["judge"].split("/")[0], summary["judge"].split("/")[0])
    result["judges"] = {"before": old_summary["judge"], "after": summary["judge"]}
    result["paper_type1_positive_share"] = PAPER_TYPE1_SHARE
    result["agreement_before_after"] = compare(args.refs / LABELS_SUBDIR, args.view / LABELS_SUBDIR)
    fig = plot_counts({names[0]: before, names[1]: after}, args.figure)
    after.pop("mentions")           # the same extraction: the mention counts do not change
    result["before"], result["after"] = before, after
    result["figure"] = str(fig)
    atomic_write_json(out, result)
    short = {k: {s: v[s] for s in ("references", "type1_positive_share", "type2_must_cite_share", "type3_share",
                                   "must_cite_share")} for k, v in (("before", before), ("after", after))}
    print(json.dumps({**short, "agreement": {k: v for k, v in result["agreement_before_after"].items()
                                             if not k.endswith("transitions")},
                      "annotate": result.get("annotate")}, indent=1))
    print("wrote", out)


if __name__ == "__main__":
    main()

"""Fit the audit's confidence on the real development drafts, choose the default threshold, and draw
the reliability diagram.

Run after ``benchmarks/audit_drafts.py``::

    .venv/bin/python benchmarks/audit_calibration.py [--write-calibration]
    # reads benchmarks/results/audit_drafts.json and benchmarks/audit_judgements.json
    # writes benchmarks/results/audit_calibration.json and docs/img/audit_reliability.png
    # --write-calibration: also src/mustcite/recommend/finding_calibration.json

Labels: a seeded omission found by the audit is genuine (1); a finding of an intact draft is what the
hand judgement of ``benchmarks/audit_judgements.json`` says (``genuine`` 1; ``optional``, ``wrong``,
``cited`` 0). Findings without a judgement are left out of the fit and the diagram.

The logistic model is fit on every labelled finding; the figures and the diagram use leave-one-
project-out predictions (each project scored by a model fit without it), so the curve shows how the
confidence holds on a draft it was not fit on; ``default_leave_one_project_out`` is what the default
output (the chosen threshold) shows each project when its confidences come from the model fit
without it. The threshold is the lowest confidence at which the
intact drafts get at most ``--per-draft`` findings each on average and at least ``--precision`` of the
judged findings shown are genuine (swept in steps of 0.01 with the final model).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
JUDGED = ROOT / "benchmarks" / "audit_judgements.json"
GENUINE = {"genuine": 1, "optional": 0, "wrong": 0, "cited": 0}


def labelled(drafts: dict, judged: dict) -> list[dict]:
    """Every labelled finding: ``{"project", "features", "label", "source"}``."""
    out = []
    for p in drafts["rows"]:
        marks = judged.get(p["project"], {})
        for r in p["intact"]:
            mark = marks.get(r["paper_id"] or r["key"] or "")
            if mark in GENUINE:
                out.append({"project": p["project"], "features": r["features"], "label": GENUINE[mark],
                            "source": "intact", "finding": r["finding"], "title": r["title"] or r["key"]})
        for s in p["seeds"]:
            if s.get("reported") and not s.get("still_cited") and s.get("features"):
                out.append({"project": p["project"], "features": s["features"], "label": 1, "source": "seeded",
                            "finding": s["finding"], "title": s["title"]})
    return out


def reliability(conf: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict]:
    """Equal-count bins of ``conf``: mean confidence and share genuine in each."""
    order = np.argsort(conf, kind="stable")
    out = []
    for part in np.array_split(order, bins):
        if len(part):
            out.append({"n": int(len(part)), "mean_confidence": round(float(conf[part].mean()), 4),
                        "share_genuine": round(float(y[part].mean()), 4)})
    return out


def main() -> None:
    from mustcite.recommend import FINDING_CALIBRATION_FILE, FINDING_FEATURES, confidence, fit_calibration

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--drafts", type=Path, default=RESULTS / "audit_drafts.json")
    ap.add_argument("--per-draft", type=float, default=2.0)
    ap.add_argument("--precision", type=float, default=0.6, help="share of judged shown findings that are genuine")
    ap.add_argument("--c", type=float, default=1.0, help="inverse regularisation of the logistic model")
    ap.add_argument("--write-calibration", action="store_true")
    args = ap.parse_args()
    drafts = json.loads(args.drafts.read_text())
    judged = json.loads(JUDGED.read_text())
    rows = labelled(drafts, judged)
    projects = sorted({r["project"] for r in rows})
    y = np.array([r["label"] for r in rows])
    loo = np.zeros(len(rows))
    held_out: dict[str, dict] = {}
    for held in projects:
        train = [i for i, r in enumerate(rows) if r["project"] != held]
        cal = fit_calibration([rows[i]["features"] for i in train], [rows[i]["label"] for i in train], c=args.c)
        held_out[held] = cal
        for i, r in enumerate(rows):
            if r["project"] == held:
                loo[i] = confidence(r["features"], cal)
    final = fit_calibration([r["features"] for r in rows], list(y), c=args.c)
    # placeholders ("[ref]", an empty \cite{}) have no example in the dev drafts: they are given the
    # rate of their nearest kind, cited keys without an entry (genuine / judged, Laplace-smoothed)
    undef = [r["label"] for r in rows if r["finding"] == "undefined_key"]
    rate = (sum(undef) + 1) / (len(undef) + 2)
    final["coef"][FINDING_FEATURES.index("kind_placeholder")] = round(math.log(rate / (1 - rate))
                                                            - final["intercept"], 6)
    # the threshold: the lowest at which the intact drafts are shown at most --per-draft findings on
    # average and at least --precision of the judged ones shown are genuine
    judged_rows = {(p["project"], r["paper_id"] or r["key"]): r for p in drafts["rows"] for r in p["intact"]}
    n_drafts = len(drafts["rows"])
    sweep, threshold = [], None
    seeds = [s for p in drafts["rows"] for s in p["seeds"] if not s.get("still_cited")]
    for t in np.round(np.arange(0.30, 0.96, 0.01), 2):
        shown = [(p["project"], r) for p in drafts["rows"] for r in p["intact"]
                 if confidence(r["features"], final) >= t]
        marks = [judged.get(proj, {}).get(r["paper_id"] or r["key"]) for proj, r in shown]
        genuine = sum(m == "genuine" for m in marks) / max(1, sum(m is not None for m in marks))
        seeded = sum(1 for s in seeds if s.get("features") and confidence(s["features"], final) >= t)
        sweep.append({"threshold": float(t), "shown_per_draft": round(len(shown) / n_drafts, 2),
                      "shown_genuine": round(genuine, 3), "shown_cited": sum(m == "cited" for m in marks),
                      "seeded_shown": round(seeded / max(1, len(seeds)), 3)})
        if threshold is None and len(shown) / n_drafts <= args.per_draft and genuine >= args.precision:
            threshold = float(t)
    final["threshold"] = threshold if threshold is not None else 0.5
    del judged_rows
    final["fitted_on"] = (f"{len(rows)} labelled findings of {len(projects)} real development drafts "
                          f"({int(y.sum())} genuine): benchmarks/audit_calibration.py")
    seeded = [r for r in rows if r["source"] == "seeded"]
    intact = [r for r in rows if r["source"] == "intact"]
    # the default output as a draft the confidence was not fit on would get it: each project's findings
    # scored by the model fit without that project, at the chosen threshold
    t = final["threshold"]
    cal_of = lambda proj: held_out.get(proj, final)  # noqa: E731
    lopo_seeded = sum(1 for p in drafts["rows"] for s in p["seeds"] if not s.get("still_cited")
                      and s.get("features") and confidence(s["features"], cal_of(p["project"])) >= t)
    lopo_shown = [(p["project"], r) for p in drafts["rows"] for r in p["intact"]
                  if confidence(r["features"], cal_of(p["project"])) >= t]
    lopo_marks = [judged.get(proj, {}).get(r["paper_id"] or r["key"]) for proj, r in lopo_shown]
    held_out_default = {
        "seeded_shown": lopo_seeded, "seeds": len(seeds),
        "intact_shown_per_draft": round(len(lopo_shown) / n_drafts, 2),
        "intact_shown_genuine": round(sum(m == "genuine" for m in lopo_marks)
                                      / max(1, sum(m is not None for m in lopo_marks)), 3),
        "intact_shown_unjudged": sum(m is None for m in lopo_marks),
    }
    out = {
        "what": "the audit's confidence against hand judgements and seeded omissions of the real dev drafts",
        "labelled": len(rows), "genuine": int(y.sum()), "seeded": len(seeded), "intact_judged": len(intact),
        "projects": len(projects), "threshold": final["threshold"],
        "brier_leave_one_project_out": round(float(np.mean((loo - y) ** 2)), 4),
        "brier_base_rate": round(float(np.mean((y.mean() - y) ** 2)), 4),
        "reliability_leave_one_project_out": reliability(loo, y),
        "by_finding": {k: {"n": sum(r["finding"] == k for r in rows),
                           "genuine": sum(r["label"] for r in rows if r["finding"] == k)}
                       for k in sorted({r["finding"] for r in rows})},
        "threshold_sweep": sweep,
        "default_leave_one_project_out": held_out_default,
        "calibration": final,
    }
    (RESULTS / "audit_calibration.json").write_text(json.dumps(out, indent=1) + "\n")
    _plot(out["reliability_leave_one_project_out"], ROOT / "docs" / "img" / "audit_reliability.png")
    if args.write_calibration:
        FINDING_CALIBRATION_FILE.write_text(json.dumps(final, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k not in ("calibration",)}, indent=1))
    assert list(final["features"]) == list(FINDING_FEATURES)


def _plot(bins: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [b["mean_confidence"] for b in bins]
    y = [b["share_genuine"] for b in bins]
    fig, ax = plt.subplots(figsize=(4.2, 4.2), dpi=120)
    ax.plot([0, 1], [0, 1], ls="--", c="grey", lw=1, label="perfect calibration")
    ax.plot(x, y, marker="o", c="#1f5fa8", label="audit findings (10 equal-count bins)")
    ax.set_xlabel("mean confidence in the bin")
    ax.set_ylabel("share judged genuine")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("Audit confidence on real drafts\n(leave one project out)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


if __name__ == "__main__":
    main()

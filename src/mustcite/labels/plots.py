"""Label distributions of labelled reference files (MasterSet Figure 1): counts and a 3-panel PNG.

(a) Type I 0/1 counts, (b) Type II 1-5 histogram with the must-cite threshold dashed,
(c) mention counts truncated at 15 (the Type III basis) with the Type III threshold dashed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mustcite.errors import MustciteError
from mustcite.labels.sample import _read_json, reference_files
from mustcite.labels.tiers import LabelConfig, mention_count

TRUNCATE = 15


def label_counts(refs_dir: str | Path, config: LabelConfig = LabelConfig()) -> dict[str, Any]:
    """Counts per label value over every reference item of the folder (``null`` = not labelled)."""
    t1: Counter = Counter()
    t2: Counter = Counter()
    t3: Counter = Counter()
    mc: Counter = Counter()
    mentions: Counter = Counter()
    files = reference_files(refs_dir)
    n = 0
    for _, path in files:
        refs = _read_json(path)
        if not isinstance(refs, list):
            raise MustciteError("a reference file must hold a JSON list", path=path)
        for i, r in enumerate(refs):
            if not isinstance(r, dict):
                raise MustciteError(f"item {i} is not an object", path=path)
            n += 1
            t1[str(r.get("type1"))] += 1
            t2[str(r.get("type2"))] += 1
            m = mention_count(r)
            mentions[m] += 1
            t3[str(r["type3"]) if r.get("type3") is not None else str(int(m >= config.n_mentions))] += 1
            mc[str(r.get("must_cite")).lower() if r.get("must_cite") is not None else "null"] += 1
    key = lambda c: {k.replace("None", "null"): c[k] for k in sorted(c)}  # noqa: E731
    return {"folder": str(refs_dir), "files": len(files), "references": n,
            "type1": key(t1), "type2": key(t2), "type3": key(t3), "must_cite": key(mc),
            "mentions": {str(k): mentions[k] for k in sorted(mentions)},
            "type3_threshold": config.n_mentions, "type2_threshold": config.type2_threshold}


def plot_counts(counts: dict[str, Any], out: str | Path) -> Path:
    """Write the 3-panel figure as PNG (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    v1 = [counts["type1"].get("0", 0), counts["type1"].get("1", 0)]
    ax[0].bar(["0", "1"], v1, color=["#9aa5b1", "#d9534f"])
    ax[0].set_title("(a) Type I: experimental baseline")
    ax[0].set_ylabel("references")
    v2 = [counts["type2"].get(str(s), 0) for s in range(1, 6)]
    ax[1].bar([str(s) for s in range(1, 6)], v2, color="#5b8bd9")
    ax[1].axvline(counts["type2_threshold"] - 1.5, ls="--", color="k")
    ax[1].set_title(f"(b) Type II: core relevance (must-cite >= {counts['type2_threshold']})")
    hist: Counter = Counter()
    for k, v in counts["mentions"].items():
        hist[min(int(k), TRUNCATE)] += v
    xs = list(range(0, TRUNCATE + 1))
    ax[2].bar(xs, [hist.get(x, 0) for x in xs], color="#5cb85c")
    ax[2].axvline(counts["type3_threshold"] - 0.5, ls="--", color="k")
    ax[2].set_title(f"(c) Type III: mentions (>= {counts['type3_threshold']}; {TRUNCATE} = {TRUNCATE}+)")
    ax[2].set_xticks(range(0, TRUNCATE + 1, 3))
    ax[2].set_xlabel("in-text mentions")
    for a in ax:
        a.spines[["top", "right"]].set_visible(False)
    fig.suptitle(f"{counts['references']} references in {counts['files']} papers", fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out

"""Label distributions of labelled reference files (MasterSet Figure 1): counts and a 3-panel PNG.

(a) Type I 0/1 counts, (b) Type II 1-5 histogram with the must-cite threshold dashed,
(c) mention counts truncated at 15 (the Type III basis) with the Type III threshold dashed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mustcite import lazy_libs
from mustcite.errors import MustciteError
from mustcite.io import read_json
from mustcite.labels.sample import reference_files
from mustcite.labels.tiers import LabelConfig, mention_count

TRUNCATE = 15
# the MasterSet thresholds (a frozen dataclass: one shared default is safe)
_DEFAULT_CONFIG = LabelConfig()


def label_counts(refs_dir: str | Path, config: LabelConfig = _DEFAULT_CONFIG) -> dict[str, Any]:
    """Counts per label value over every reference item of the folder (``null`` = not labelled)."""
    t1: Counter = Counter()
    t2: Counter = Counter()
    t3: Counter = Counter()
    mc: Counter = Counter()
    mentions: Counter = Counter()
    files = reference_files(refs_dir)
    n = 0
    for _, path in files:
        refs = read_json(path)
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


def plot_counts(counts: dict[str, Any] | dict[str, dict[str, Any]], out: str | Path) -> Path:
    """Write the 3-panel figure as PNG (matplotlib, Agg backend).  ``counts`` is one
    :func:`label_counts` result, or several by name (e.g. before and after a relabelling): their
    bars stand side by side, Type I and Type II as shares of each set's references."""
    lazy_libs.matplotlib("the label plot").use("Agg")
    plt = lazy_libs.matplotlib_pyplot("the label plot")

    named = {"": counts} if "type1" in counts else dict(counts)
    several = len(named) > 1
    width = 0.8 / len(named)
    colours = ["#5b8bd9", "#d9534f", "#5cb85c", "#f0ad4e"]
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    first = next(iter(named.values()))
    for i, (name, c) in enumerate(named.items()):
        off = (i - (len(named) - 1) / 2) * width if several else 0.0
        scale = 1.0 / max(1, c["references"]) if several else 1.0
        colour = colours[i % len(colours)]
        v1 = [c["type1"].get("0", 0) * scale, c["type1"].get("1", 0) * scale]
        ax[0].bar([x + off for x in (0, 1)], v1, width=width if several else 0.8,
                  color=colour if several else ["#9aa5b1", "#d9534f"], label=name or None)
        v2 = [c["type2"].get(str(s), 0) * scale for s in range(1, 6)]
        ax[1].bar([x + off for x in range(5)], v2, width=width if several else 0.8, color=colour, label=name or None)
        hist: Counter = Counter()
        for k, v in c["mentions"].items():
            hist[min(int(k), TRUNCATE)] += v
        xs = list(range(0, TRUNCATE + 1))
        ax[2].bar([x + off for x in xs], [hist.get(x, 0) * scale for x in xs], width=width if several else 0.8,
                  color=colour if several else "#5cb85c", label=name or None)
    ax[0].set_xticks([0, 1], ["0", "1"])
    ax[0].set_title("(a) Type I: experimental baseline")
    ax[0].set_ylabel("share of references" if several else "references")
    ax[1].set_xticks(range(5), [str(s) for s in range(1, 6)])
    ax[1].axvline(first["type2_threshold"] - 1.5, ls="--", color="k")
    ax[1].set_title(f"(b) Type II: core relevance (must-cite >= {first['type2_threshold']})")
    ax[2].axvline(first["type3_threshold"] - 0.5, ls="--", color="k")
    ax[2].set_title(f"(c) Type III: mentions (>= {first['type3_threshold']}; {TRUNCATE} = {TRUNCATE}+)")
    ax[2].set_xticks(range(0, TRUNCATE + 1, 3))
    ax[2].set_xlabel("in-text mentions")
    for a in ax:
        a.spines[["top", "right"]].set_visible(False)
    if several:
        ax[0].legend(fontsize=8)
    fig.suptitle(" | ".join(f"{name + ': ' if name else ''}{c['references']} references in {c['files']} papers"
                            for name, c in named.items()), fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out

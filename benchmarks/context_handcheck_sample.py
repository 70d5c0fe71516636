"""Draw 20 random citation contexts (fixed seed) from the NeurIPS full texts for a hand check.

Writes ``benchmarks/results/context_handcheck_sample.json``: paper, cite key, the reference's raw
string, section label, context, and the nearest heading above the context in the source (to
help the reader judge the label). Verdicts are added by hand in ``context_handcheck.json``.

    .venv/bin/python benchmarks/context_handcheck_sample.py
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from mustcite.config import find_data_dir
from mustcite.extract import extract_markdown
from mustcite.io import atomic_write_json

SEED, N = 2024, 20
OUT = Path(__file__).parent / "results" / "context_handcheck_sample.json"


def main() -> None:
    data = find_data_dir()
    files = sorted(p for y in ("fulltext_2024", "fulltext_2023") for p in (data / "neurips" / y).glob("*.md.gz"))
    rng = random.Random(SEED)
    sample = []
    while len(sample) < N:
        path = rng.choice(files)
        text = gzip.open(path, "rt", encoding="utf-8").read()
        paper = extract_markdown(text, str(path))
        pairs = [(r, c) for r in paper.references for c in r.contexts]
        if not pairs:
            continue
        ref, ctx = rng.choice(pairs)
        probe = ctx.context[:50]
        pos = text.find(probe)
        heading = ""
        if pos >= 0:
            heads = [ln for ln in text[:pos].split("\n") if ln.startswith("#")]
            heading = heads[-1] if heads else ""
        sample.append({"paper": f"{path.parent.name}/{path.name}", "status": paper.status,
                       "style": paper.stats.get("citation_style"), "target": ref.target,
                       "cite": ref.cite, "ref_raw": ref.raw[:200], "ref_title": ref.title,
                       "section": ctx.section, "heading_above_in_source": heading,
                       "context": ctx.context})
    atomic_write_json(OUT, sample)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

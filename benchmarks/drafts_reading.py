"""Is the title and abstract of each real LaTeX draft read right? The 30 projects of
``<data>/drafts/manifest.json``, read as ``mustcite audit PROJECT`` reads them.

Run::

    .venv/bin/python benchmarks/drafts_reading.py      # writes benchmarks/results/drafts_reading.json

**Title**: read right when it equals the manifest's title after case folding and white-space
collapsing, or is within rapidfuzz ratio 95 of it (a dash or quote typeset another way).
**Abstract**: the manifest gives none, so each project's abstract is recorded (its length, its first
200 characters and the reader's messages) for reading by hand; ``abstract_read`` counts those with
at least 300 characters, and a project whose abstract is a venue template's placeholder text (the
reader says so in a message and reads none) is listed apart. The main file the reader picked is
compared with the manifest's.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from rapidfuzz import fuzz

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "drafts_reading.json"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def main() -> None:
    from mustcite.config import find_data_dir
    from mustcite.extract import find_main, project_files
    from mustcite.recommend import extract_draft

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--drafts", type=Path, default=None, help="the drafts folder (default <data>/drafts)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    drafts = args.drafts or find_data_dir() / "drafts"
    manifest = json.loads((drafts / "manifest.json").read_text())
    rows = []
    t0 = time.perf_counter()
    for p in manifest:
        folder = drafts / "projects" / p["name"]
        messages: list[str] = []
        main_file = find_main(folder, project_files(folder, messages), messages)
        _, paper = extract_draft(folder)
        title, abstract = (paper.title or "").strip(), (paper.abstract or "").strip()
        ratio = fuzz.ratio(_norm(title), _norm(p["title"]))
        placeholder = any("placeholder" in m for m in paper.messages)
        rows.append({"project": p["name"], "title": title, "expected": p["title"], "title_ratio": round(ratio, 1),
                     "title_right": _norm(title) == _norm(p["title"]) or ratio >= 95,
                     "main": str(main_file.relative_to(folder)), "main_expected": p["main"],
                     "abstract_chars": len(abstract), "abstract_start": abstract[:200],
                     "template_placeholder": placeholder,
                     "messages": [m for m in paper.messages if "placeholder" in m or "title" in m.lower()]})
    out = {
        "what": "title and abstract of the 30 real LaTeX drafts as the audit reads them",
        "projects": len(rows),
        "titles_right": sum(r["title_right"] for r in rows),
        "main_file_right": sum(r["main"] == r["main_expected"] for r in rows),
        "abstract_read": sum(r["abstract_chars"] >= 300 for r in rows),
        "template_placeholder": [r["project"] for r in rows if r["template_placeholder"]],
        "seconds": round(time.perf_counter() - t0, 1),
        "rows": rows,
    }
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"titles right {out['titles_right']}/{len(rows)}; main file right {out['main_file_right']}/{len(rows)}; "
          f"abstracts of 300+ characters {out['abstract_read']}/{len(rows)}; template placeholder: "
          f"{', '.join(out['template_placeholder']) or 'none'} -> {args.out}")


if __name__ == "__main__":
    main()

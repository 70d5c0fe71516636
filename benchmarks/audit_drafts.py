"""What ``mustcite audit`` tells the 30 real LaTeX drafts: seeded omissions found, and what an
intact draft is shown.

Run::

    .venv/bin/python benchmarks/audit_drafts.py [--model DIR] [--top 20]
    # writes benchmarks/results/audit_drafts.json

**Seeded omissions.** For each project of ``<data>/drafts/manifest.json`` (read as the audit reads
it, with the model's linker), up to :data:`SEEDS` cited references are removed that

* link to a paper of the model's pool (else no audit could name the paper it lacks), and
* are *named* in the draft's text: the name their title starts with ("LoRA: ..." -> LoRA), of at
  least three characters, appears in a context where the draft cites them;

preferring the references mentioned most, one per name, in a fixed order (mentions, then key).
Their keys are deleted from every citation command of every ``.tex`` file (a command left without
keys is deleted too) and their entries from every ``.bib`` file; the text stays. A seeded omission
is *reported* when its pool paper is among the audit's ``missing`` results (the top ``--top``, and
apart the ones at or above ``--min-score``). Each project is audited as of the manifest's year.

**Intact drafts.** Each project as it is: the ``missing`` list (title, score, tier, reasons), for
reading by hand. Nothing of the drafts shapes the model: the recommender is the work folder's default
model, trained on the corpus.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "audit_drafts.json"
SEEDS = 3
_CITE = re.compile(r"(~?)\\([A-Za-z]*cite[A-Za-z]*\*?)((?:\s*\[[^\]]{0,300}\]){0,2})\s*\{([^{}]{0,3000})\}")


def drop_citations(tex: str, keys: set[str]) -> str:
    """``tex`` without the citation keys ``keys``; a citation command left without keys is dropped."""
    def repl(m: re.Match) -> str:
        kept = [k for k in m.group(4).split(",") if k.strip() not in keys]
        if not kept:
            return ""
        return f"{m.group(1)}\\{m.group(2)}{m.group(3)}{{{','.join(kept)}}}"
    return _CITE.sub(repl, tex)


def drop_entries(bib: str, keys: set[str]) -> str:
    """``bib`` without the entries whose key is in ``keys`` (case-insensitive, as BibTeX compares)."""
    low = {k.lower() for k in keys}
    out, pos = [], 0
    for m in re.finditer(r"@\s*\w+\s*[{(]\s*([^,\s]+)\s*,", bib):
        if m.start() < pos or m.group(1).lower() not in low:
            continue
        # the entry runs from "@" to the brace closing the one after its type
        j = bib.find("{", m.start()) if "{" in bib[m.start():m.end()] else bib.find("(", m.start())
        depth, k = 0, j
        while k < len(bib):
            c = bib[k]
            if c == "{" or c == "(":
                depth += 1
            elif c == "}" or c == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        out.append(bib[pos:m.start()])
        pos = k + 1
    out.append(bib[pos:])
    return "".join(out)


def pick_seeds(result, refs: list[dict]) -> list[dict]:
    """The references to remove (see the module doc): linked, named in their own contexts."""
    from mustcite.corpus.records import title_short_name
    from mustcite.extract.works import name_key

    chosen, names = [], set()
    for r in sorted(refs, key=lambda r: (-(r.get("mentions") or 0), r.get("bibkey") or "")):
        name = title_short_name(r.get("title") or "")
        key = name_key(name)
        if not r.get("paper_id") or not r.get("bibkey") or len(key) < 3 or key in names:
            continue
        texts = " ".join(c.get("context") or "" for c in r.get("contexts") or ())
        if key not in name_key(texts):
            continue
        names.add(key)
        chosen.append({"key": r["bibkey"], "title": r.get("title"), "paper_id": r["paper_id"], "name": name,
                       "mentions": r.get("mentions")})
        if len(chosen) == SEEDS:
            break
    return chosen


def linked_references(rec, folder: Path, year: int) -> list[dict]:
    from mustcite.extract.link import link_references
    from mustcite.recommend.audit import title_index
    from mustcite.recommend.draft import read_draft

    draft = read_draft(folder)
    return link_references(draft.paper.to_reference_list(), title_index(rec), citing_year=rec.effective_year(year))


def seeded_copy(src: Path, dst: Path, keys: set[str]) -> None:
    shutil.copytree(src, dst)
    for f in dst.rglob("*"):
        if f.suffix.lower() in (".tex", ".ltx"):
            f.write_text(drop_citations(f.read_text(encoding="utf-8", errors="replace"), keys), encoding="utf-8")
        elif f.suffix.lower() == ".bib":
            f.write_text(drop_entries(f.read_text(encoding="utf-8", errors="replace"), keys), encoding="utf-8")
        elif f.suffix.lower() == ".bbl":
            f.unlink()                  # a stale .bbl would still define the removed keys


def rows(result) -> list[dict]:
    return [{"paper_id": r.paper_id, "title": r.title, "year": r.year, "score": round(r.score, 4),
             "tier": r.tier_name, "reasons": r.reasons} for r in result.missing]


def main() -> None:
    from mustcite.config import find_data_dir
    from mustcite.recommend.shortcuts import load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--drafts", type=Path, default=None)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--min-score", type=float, default=0.5)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    drafts = args.drafts or find_data_dir() / "drafts"
    manifest = json.loads((drafts / "manifest.json").read_text())
    from mustcite.recommend.train import default_model

    model_folder = (args.model or default_model(None)).resolve()
    rec = load(model_folder)
    projects, t0 = [], time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-audit-drafts-"))
    try:
        for p in tqdm(manifest, desc="drafts", unit="draft"):
            folder, year = drafts / "projects" / p["name"], int(p["year"])
            intact = rec.audit(folder, top=args.top, year=year)
            seeds = pick_seeds(intact, linked_references(rec, folder, year))
            row = {"project": p["name"], "year": year, "intact": rows(intact), "seeds": seeds}
            if seeds:
                copy = tmp / p["name"]
                seeded_copy(folder, copy, {s["key"] for s in seeds})
                after = rec.audit(copy, top=args.top, year=year)
                got = {r.paper_id: (k, r.score) for k, r in enumerate(after.missing, 1)}
                still = {r["paper_id"] for r in linked_references(rec, copy, year) if r.get("paper_id")}
                for s in seeds:
                    rank, score = got.get(s["paper_id"], (None, None))
                    s.update(rank=rank, score=None if score is None else round(score, 4),
                             reported=rank is not None, reported_default=score is not None and score >= args.min_score,
                             still_cited=s["paper_id"] in still)
                row["seeded_missing"] = rows(after)
            projects.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seeds = [s for p in projects for s in p["seeds"]]
    valid = [s for s in seeds if not s.get("still_cited")]
    out = {
        "what": "audit of the 30 real drafts: seeded omissions reported, and what intact drafts are shown",
        "model": str(model_folder), "top": args.top, "min_score": args.min_score,
        "projects": len(projects), "seeds": len(seeds), "seeds_still_cited": len(seeds) - len(valid),
        "seeded_reported_top": sum(s["reported"] for s in valid),
        "seeded_reported_default": sum(s["reported_default"] for s in valid),
        "intact_shown_default": sum(sum(r["score"] >= args.min_score for r in p["intact"]) for p in projects),
        "seconds": round(time.perf_counter() - t0, 1),
        "rows": projects,
    }
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(valid)} seeded omissions in {len(projects)} drafts: {out['seeded_reported_top']} in the top "
          f"{args.top}, {out['seeded_reported_default']} at score >= {args.min_score}; intact drafts shown "
          f"{out['intact_shown_default'] / max(1, len(projects)):.1f} results at score >= {args.min_score} per draft "
          f"-> {args.out}")


if __name__ == "__main__":
    main()

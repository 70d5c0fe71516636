"""What ``mustcite audit`` tells the 30 real LaTeX drafts: seeded omissions found, and what an
intact draft is shown.

Run::

    .venv/bin/python benchmarks/audit_drafts.py [--model DIR] [--only NAME] [--split dev]
    # writes benchmarks/results/audit_drafts.json
    .venv/bin/python benchmarks/audit_drafts.py --split dev --compare rules=src learned=src:learned \
        [--mentions DIR]
    # each source tree audits the drafts in a process of its own (``PYTHONPATH`` set to it);
    # writes benchmarks/results/audit_drafts_compare_dev.json: the figures side by side and every
    # finding shown by default on an intact draft, for judging

``--split dev`` audits only the projects of ``benchmarks/splits/drafts_split.json`` "dev";
``--split test`` only the frozen "test" projects, which are run and judged once, at the end, with
the method as it stands then. ``--mentions DIR``: the name
models the audit loads (``MUSTCITE_MENTION_MODEL``), when they are not beside the recommender;
``--named learned`` (or ``NAME=SRC:learned`` in ``--compare``) has the audit decide named works with
them instead of the name rules.

**Seeded omissions.** For each project of ``<data>/drafts/manifest.json`` (read as the audit reads
it, with the model's linker), up to :data:`SEEDS` cited references are removed that

* link to a paper of the model's pool (else no audit could name the paper it lacks), and
* are *named* in the draft's text: the name their title starts with ("LoRA: ..." -> LoRA), of at
  least three characters, appears in a context where the draft cites them;

preferring the references mentioned most, one per name, in a fixed order (mentions, then key).
Their keys are deleted from every citation command of every ``.tex`` file (a command left without
keys is deleted too) and their entries from every ``.bib`` file; the text stays. A seeded omission
is *found* when the audit has a finding about its pool paper or another record of the same work (the
same normalised title as that paper or as the removed reference's own title, or one extending it:
:func:`one_work`), and *shown* when that finding is at or
above the default confidence threshold (what ``mustcite audit`` prints). Each project is audited as
of the manifest's year.

**Intact drafts.** Each project as it is: every finding (kind, confidence, where, the sentence, its
features), and whether it is shown by default, for judging by hand
(``benchmarks/audit_judgements.json``) and for fitting the confidence
(``benchmarks/audit_calibration.py``). Nothing of the drafts shapes the recommender: it is the
work folder's default model, trained on the corpus.
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
SPLIT = ROOT / "benchmarks" / "splits" / "drafts_split.json"
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
    from mustcite.corpus import title_short_name
    from mustcite.extract import name_key

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


def one_work(a: str, b: str) -> bool:
    """Whether two normalised titles are one work: equal, or one extends the other by more words
    after at least three ("umap uniform manifold approximation and projection" and "... for dimension
    reduction"), as the audit reads two pool records whose titles extend one another."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short.split()) >= 3 and long_.startswith(short + " ")


def linked_references(rec, folder: Path, year: int) -> list[dict]:
    from mustcite.extract import link_references
    from mustcite.recommend import read_draft

    draft = read_draft(folder)
    return link_references(draft.paper.to_reference_list(), rec.draft_indexes.titles(),
                           citing_year=rec.effective_year(year))


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
    """Every finding of an audit (shown by default or not), with what a reader needs to judge it."""
    shown = {(r.finding, r.paper_id or "", (r.location or {}).get("line")) for r in result.missing}
    out = []
    for f in result.findings:
        title = year = venue = None
        if f.row is not None:
            rec_row = _POOL[0][f.row]
            title, year, venue = (rec_row.get("title"), rec_row.get("published") or rec_row.get("year"),
                                  rec_row.get("venue"))
        out.append({"finding": f.kind, "paper_id": f.paper_id, "title": title, "year": year, "venue": venue,
                    "name": f.name, "key": f.key, "confidence": round(f.confidence, 4), "message": f.message,
                    "location": f.location.to_dict(), "features": {k: round(v, 4) for k, v in f.features.items()},
                    "shown": (f.kind, f.paper_id or "", f.location.line) in shown})
    return out


_POOL: list = [None]


def main() -> None:
    from mustcite import load
    from mustcite.config import find_data_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--drafts", type=Path, default=None)
    ap.add_argument("--only", default=None, help="projects whose name holds this")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--split", choices=("dev", "test"), default=None,
                    help="only the projects of this split of benchmarks/splits/drafts_split.json (test: the "
                         "frozen projects, run once, at the end)")
    ap.add_argument("--compare", nargs="+", default=None, metavar="NAME=SRC",
                    help="audit with each source tree in a process of its own and compare")
    ap.add_argument("--mentions", type=Path, default=None, help="the name models' folder")
    ap.add_argument("--named", choices=("rules", "learned"), default="rules",
                    help="how the audit decides the works a draft names (--compare: NAME=SRC:learned per side)")
    args = ap.parse_args()
    if args.compare:
        return compare(args)
    args.out = args.out or (OUT if not args.split else OUT.with_name(f"audit_drafts_{args.split}.json"))
    drafts = args.drafts or find_data_dir() / "drafts"
    only = set(json.loads(SPLIT.read_text())[args.split]) if args.split else None
    manifest = [p for p in json.loads((drafts / "manifest.json").read_text())
                if (not args.only or args.only in p["name"]) and (only is None or p["name"] in only)]
    from mustcite.recommend import audit_draft as _audit_draft
    from mustcite.recommend import default_model

    def audit_draft(*a, **kw):
        # older source trees know only the name rules: the choice is passed only when it is not theirs
        return _audit_draft(*a, **kw) if args.named == "rules" else _audit_draft(*a, named=args.named, **kw)

    model_folder = (args.model or default_model(None)).resolve()
    rec = load(model_folder)
    _POOL[0] = rec.pool
    from mustcite.corpus import normalize_title

    row_of = {pid: i for i, pid in enumerate(rec.pool.ids)}

    def work(pid: str) -> str:
        """The work a pool record is: its normalised title (its id when it has none)."""
        row = row_of.get(pid)
        return (normalize_title(rec.pool.titles[row]) if row is not None else "") or pid
    projects, t0 = [], time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-audit-drafts-"))
    try:
        for p in tqdm(manifest, desc="drafts", unit="draft"):
            folder, year = drafts / "projects" / p["name"], int(p["year"])
            intact = audit_draft(rec, folder, top=500, year=year)
            seeds = pick_seeds(intact, linked_references(rec, folder, year))
            row = {"project": p["name"], "year": year, "title_read": intact.title, "intact": rows(intact),
                   "seeds": seeds}
            if seeds:
                copy = tmp / p["name"]
                seeded_copy(folder, copy, {s["key"] for s in seeds})
                after = audit_draft(rec, copy, top=500, year=year)
                # a finding about another record of the same work (same normalised title) finds it
                found = {work(f.paper_id): f for f in reversed(after.findings) if f.paper_id}
                shown = {work(r.paper_id) for r in after.missing if r.paper_id}
                still = {work(r["paper_id"]) for r in linked_references(rec, copy, year) if r.get("paper_id")}
                for s in seeds:
                    # the pool paper the reference was linked to, or a record with the reference's own title
                    same = [work(s["paper_id"]), normalize_title(s.get("title") or "")]
                    f = next((found[w] for w in same if w in found), None) or next(
                        (found[w] for w in found if any(one_work(w, v) for v in same)), None)
                    s.update(finding=f.kind if f else None, confidence=None if f is None else round(f.confidence, 4),
                             features=None if f is None else {k: round(v, 4) for k, v in f.features.items()},
                             reported=f is not None,
                             reported_default=any(one_work(w, v) for w in shown for v in same),
                             still_cited=work(s["paper_id"]) in still)
                seeded_ids = {s["paper_id"] for s in seeds}
                row["seeded_other"] = [r for r in rows(after) if r["paper_id"] not in seeded_ids]
            projects.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seeds = [s for p in projects for s in p["seeds"]]
    valid = [s for s in seeds if not s.get("still_cited")]
    shown = [r for p in projects for r in p["intact"] if r["shown"]]
    out = {
        "what": "audit of the real drafts: seeded omissions reported, and what intact drafts are shown",
        "model": str(model_folder), "threshold": intact.threshold,
        "projects": len(projects), "seeds": len(seeds), "seeds_still_cited": len(seeds) - len(valid),
        "seeded_found": sum(s["reported"] for s in valid),
        "seeded_reported_default": sum(s["reported_default"] for s in valid),
        "intact_findings": sum(len(p["intact"]) for p in projects),
        "intact_shown_default": len(shown),
        "intact_shown_per_draft": round(len(shown) / max(1, len(projects)), 2),
        "seconds": round(time.perf_counter() - t0, 1),
        "rows": projects,
    }
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(valid)} seeded omissions in {len(projects)} drafts: {out['seeded_found']} found, "
          f"{out['seeded_reported_default']} shown by default; intact drafts shown "
          f"{out['intact_shown_per_draft']} findings per draft ({out['intact_findings']} in all) -> {args.out}")


def summary(d: dict) -> dict:
    """The figures of one run: findings shown per intact draft, seeded named omissions shown."""
    seeds = [s for p in d["rows"] for s in p["seeds"] if not s.get("still_cited")]
    shown = [r for p in d["rows"] for r in p["intact"] if r["shown"]]
    kinds: dict[str, int] = {}
    for r in shown:
        kinds[r["finding"]] = kinds.get(r["finding"], 0) + 1
    return {"projects": d["projects"], "intact_shown": len(shown),
            "intact_shown_per_draft": round(len(shown) / max(1, d["projects"]), 2), "shown_by_kind": kinds,
            "seeds": len(seeds), "seeded_found": sum(s["reported"] for s in seeds),
            "seeded_shown": sum(s["reported_default"] for s in seeds),
            "seeded_shown_share": round(sum(s["reported_default"] for s in seeds) / max(1, len(seeds)), 3),
            "seconds": d["seconds"]}


def compare(args) -> None:
    """Run the benchmark once per source tree (``NAME=SRC``), each in a process of its own, and write
    the figures side by side with every finding shown by default on an intact draft."""
    import os
    import subprocess
    import sys

    runs = {}
    tag = args.split or "all"
    for spec in args.compare:
        name, _, src = spec.partition("=")
        src, _, named = src.partition(":")
        out = OUT.with_name(f"audit_drafts_{tag}_{name}.json")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--out", str(out), "--named", named or "rules"]
        for flag, value in (("--split", args.split), ("--model", args.model), ("--drafts", args.drafts),
                            ("--only", args.only)):
            if value:
                cmd += [flag, str(value)]
        env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
        if args.mentions:
            env["MUSTCITE_MENTION_MODEL"] = str(args.mentions.resolve())
        subprocess.run(cmd, env=env, check=True)
        runs[name] = json.loads(out.read_text())
    result = {"what": "the audit of the same drafts by each source tree, in one run", "split": args.split,
              "sources": dict(s.partition("=")[::2] for s in args.compare),
              "figures": {n: summary(d) for n, d in runs.items()},
              "shown": {n: [{"project": p["project"], **{k: r[k] for k in ("finding", "name", "title", "year",
                                                                         "confidence", "message", "location")}}
                            for p in d["rows"] for r in p["intact"] if r["shown"]] for n, d in runs.items()},
              "seeds": {n: [{"project": p["project"], **{k: s.get(k) for k in ("name", "title", "finding",
                                                                               "confidence", "reported_default")}}
                            for p in d["rows"] for s in p["seeds"] if not s.get("still_cited")]
                        for n, d in runs.items()}}
    path = OUT.with_name(f"audit_drafts_compare_{tag}.json")
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    for n, f in result["figures"].items():
        print(f"{n}: {f}")
    print(f"-> {path}")


if __name__ == "__main__":
    main()

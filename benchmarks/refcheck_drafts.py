"""What ``mustcite check-refs`` answers on the ``.bib`` files of the 30 real LaTeX drafts.

Run::

    .venv/bin/python benchmarks/refcheck_drafts.py --split dev --label before   # -> results/refcheck_drafts_dev.json
    .venv/bin/python benchmarks/refcheck_drafts.py --split dev --label after    # adds a second run to the same file

**Population.** The projects of ``<data>/drafts/manifest.json`` (``PROVENANCE.md`` there), or only
those of one split of ``benchmarks/splits/drafts_split.json`` (``--split dev``: the 20 projects the
rules are tuned on; ``--split test``: the 10 frozen ones, for the final measurement only; each split
writes its own file, ``refcheck_drafts_<split>.json``, so that one split's outputs are never read
while working on the other): every
``.bib`` the manifest names (``projects/<name>/<bib>``), the entries of one project de-duplicated by
key (first occurrence kept, keys compared case-insensitively as BibTeX does). Nothing goes online.

**Figures per run** (``runs[label]``; other labels in an existing ``--out`` are kept): the entries,
the count of each status (whatever statuses the checker gives), ``answered_share`` (entries whose
status is not ``unverifiable``) with a Wilson 95 % interval, the counts per project, the
unverifiable entries by reason class (from the ``why`` text and the venue the entry claims, see
:func:`reason`), the 30 most frequent venue texts among them (lower-cased, braces dropped, arXiv ids
masked), the entries where a witness check kept a field from being flagged (``witness_checks``,
``witness_fired``: :mod:`mustcite.refcheck.witness`) and every flagged entry (any status other
than verified and unverifiable: mismatch, not_found, ...) with its project, key, status, why, title
and venue, for classifying by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from refcheck_eval import wilson  # the same interval as the generated-entry evaluation
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "refcheck_drafts.json"
SPLITS = ROOT / "benchmarks" / "splits" / "drafts_split.json"
QUIET = ("verified", "unverifiable")          # every other status is a flag

_JOURNAL = re.compile(r"\bjournal\b|\btransactions\b|\bletters\b|\breview\b|\bnature\b|\bscience\b|\bj\.|"
                      r"\bmagazine\b|\bbulletin\b|\bannals\b|\bplos\b|\bpnas\b|national academy|"
                      r"\bcommunications\b", re.I)
_PROCEEDINGS = re.compile(r"\bproc|\bconference\b|\bsymposium\b|\bcongress\b|\bmeeting\b|\bworkshop\b", re.I)
_WEB = re.compile(r"https?://|\bgithub\b|\bblog\b|\bhugging ?face\b|\bwebsite\b|\btechnical report\b|"
                  r"\btech\.? rep|\bpreprint\b|\bopenai\b|\bbook\b|\bpress\b|\bpublish", re.I)


def venue_of(check) -> str:
    return (check.entry or {}).get("venue") or ""


def reason(check) -> str:
    """A short class for an unverifiable entry, from its ``why`` and the venue it claims."""
    why, venue = check.why or "", venue_of(check)
    if why.startswith("no title"):
        return "no title"
    if why.startswith("an arXiv preprint"):
        return "arXiv preprint"
    if why.startswith("no venue"):
        return "no venue"
    if " without a year" in why:
        return "held venue, no year"
    if why.startswith("a paper of the ") and "track of" in why:
        return "side-track paper (found in side tracks)"
    if "a paper of this title appeared at" in why:
        return ("held venue but year not held (title in corpus)" if why.startswith("the corpus does not hold")
                else "other venue claimed (title in corpus)")
    if why.startswith("the corpus does not hold"):
        return "held venue but year not held"
    if "side tracks are not in the corpus" in why:
        return "workshop/side track"
    if "is not a venue the corpus holds" in why:
        if not _JOURNAL.search(venue) and _PROCEEDINGS.search(venue):
            return "other venue: conference/proceedings"
        if not _JOURNAL.search(venue) and _WEB.search(venue):
            return "other venue: book/report/web"
        return "other venue: journal/other"     # most texts without a journal word are journals too
    return "unclassified: " + " ".join(why.split()[:6])     # a new why text: show it, don't hide it


def norm_venue(text: str) -> str:
    t = re.sub(r"\d{4}\.\d{4,5}(v\d+)?", "<id>", text.replace("{", "").replace("}", "").replace("\\", ""))
    return " ".join(t.split()).lower() or "(none)"


def bib_paths(project: dict, drafts: Path) -> list[Path]:
    base = drafts / "projects" / project["name"]
    out = []
    for b in project["bib"]:
        p = base / b
        if not p.is_file() and project.get("dir"):          # a layout that keeps the repository folder
            p = base / project["dir"] / b
        out.append(p)
    return out


def check_project(project: dict, drafts: Path, index, work: Path) -> tuple[list, list[str]]:
    from mustcite.errors import MustciteError
    from mustcite.refcheck import check_file

    seen: dict[str, object] = {}
    messages: list[str] = []
    for path in bib_paths(project, drafts):
        if not path.is_file():
            messages.append(f"missing: {path.relative_to(drafts)}")
            continue
        try:
            checks, msgs = check_file(path, work=work, index=index)
        except MustciteError as e:
            messages.append(f"unreadable: {path.relative_to(drafts)}: {e}")
            continue
        messages += msgs
        for c in checks:
            seen.setdefault(c.key.lower(), c)
    return list(seen.values()), messages


def git_state() -> dict:
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True).stdout.strip()
    return {"rev": git("rev-parse", "HEAD"), "dirty_src": bool(git("status", "--porcelain", "--", "src"))}


def summarise(results: dict[str, tuple[list, list[str]]], work: Path, seconds: float) -> dict:
    from mustcite.refcheck import checks_fired

    allc = [(name, c) for name, (checks, _) in results.items() for c in checks]
    n = len(allc)
    statuses = Counter(c.status for _, c in allc)
    answered = n - statuses.get("unverifiable", 0)
    unv = [c for _, c in allc if c.status == "unverifiable"]
    return {
        "work": str(work), **git_state(), "date": time.strftime("%Y-%m-%d %H:%M"),
        "seconds": round(seconds, 2),  # index load included
        "projects": len(results), "entries": n, "statuses": dict(statuses.most_common()),
        "answered": answered, "answered_share": round(answered / n, 4) if n else None, "ci95": wilson(answered, n),
        "per_project": {name: {"entries": len(checks), "statuses": dict(Counter(c.status for c in checks)),
                               "messages": msgs} for name, (checks, msgs) in results.items()},
        "unverifiable_reasons": dict(Counter(reason(c) for c in unv).most_common()),
        "unverifiable_venues_top30": Counter(norm_venue(venue_of(c)) for c in unv).most_common(30),
        "witness_checks": dict(Counter(k for _, c in allc for k in checks_fired(c.notes))),
        "witness_fired": [{"project": name, "key": c.key, "status": c.status, "checks": checks_fired(c.notes),
                           "notes": list(c.notes), "entry": c.entry, "record": c.record}
                          for name, c in allc if checks_fired(c.notes)],
        "flagged": [{"project": name, "key": c.key, "status": c.status, "why": c.why,
                     "title": (c.entry or {}).get("title", ""), "venue": venue_of(c),
                     "year": (c.entry or {}).get("year"), "fields": sorted({i.field for i in c.issues}),
                     "record": c.record, "source": c.source, "entry": c.entry,
                     "issues": [i.to_json() for i in c.issues], "notes": list(c.notes)}
                    for name, c in allc if c.status not in QUIET],
    }


def table(label: str, run: dict) -> str:
    lines = [f"run {label!r}: {run['projects']} projects, {run['entries']} entries",
             *(f"  {s:24s} {k:5d}  {k / run['entries']:6.1%}" for s, k in run["statuses"].items()),
             f"  answered share {run['answered_share']:.1%}  (95% CI {run['ci95'][0]:.1%}-{run['ci95'][1]:.1%})",
             "unverifiable by reason:",
             *(f"  {r:48s} {k:5d}" for r, k in run["unverifiable_reasons"].items()),
             "unverifiable venue texts (top 30):",
             *(f"  {k:4d}  {v[:90]}" for v, k in run["unverifiable_venues_top30"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace, find_data_dir
    from mustcite.refcheck import load_index

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=None, help="mustcite work folder (default: the package's)")
    ap.add_argument("--label", default="current", help="name of this run in the JSON (before, after, ...)")
    ap.add_argument("--split", choices=("all", "dev", "test"), default="all",
                    help="the projects of one split of benchmarks/splits/drafts_split.json (default: all)")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: benchmarks/results/refcheck_drafts.json, refcheck_drafts_<split>.json for a split")
    ap.add_argument("--citations", type=Path, default=None,
                    help="reference lists of other papers (<data>/citations_cs768/papers.jsonl.xz) as evidence")
    ap.add_argument("--drafts", type=Path, default=None, help="the drafts folder (default: <data>/drafts)")
    args = ap.parse_args(argv)
    work = Workspace.resolve(args.work).root
    drafts = args.drafts or find_data_dir() / "drafts"

    projects = json.loads((drafts / "manifest.json").read_text(encoding="utf-8"))
    if args.split != "all":
        names = set(json.loads(SPLITS.read_text(encoding="utf-8"))[args.split])
        projects = [p for p in projects if p["name"] in names]
    if args.out is None:
        args.out = OUT if args.split == "all" else OUT.with_name(f"refcheck_drafts_{args.split}.json")
    t0 = time.perf_counter()
    index = load_index(work, citations=args.citations)
    index_s = time.perf_counter() - t0
    results: dict[str, tuple[list, list[str]]] = {}
    for p in tqdm(projects, desc=f"check-refs {args.label}", unit="project"):
        results[p["name"]] = check_project(p, drafts, index, work)
    run = summarise(results, work, time.perf_counter() - t0)
    run.update(drafts=str(drafts), index_s=round(index_s, 2), split=args.split, citations=str(args.citations or ""))

    doc = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    doc["rules"] = __doc__
    doc.setdefault("runs", {})[args.label] = run
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(table(args.label, run))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What ``mustcite audit`` shows on held-out NeurIPS full texts: seeded named omissions, and the
findings an intact, published paper is shown.

Run::

    python benchmarks/audit_fulltext_simulation.py [--papers 500] [--workers 2] [--work DIR]
    python benchmarks/audit_fulltext_simulation.py --compare before=SRC_A after=SRC_B
    # writes benchmarks/results/audit_fulltext_simulation.json and, per side, a sample of 50 shown
    # findings on intact papers (audit_fulltext_simulation_sample[_SIDE].jsonl) for a separate judge

**Papers.** The held-out papers of ``benchmarks/splits/mentions_split.json``, drawn in a seeded
order (``--seed``) until ``--papers`` of them could be seeded: their Nougat Markdown full texts, and their extraction
records in ``<work>/extract`` (which reference each citation marker points to, the corpus paper it
links to) with the catalogue of cited works in ``<work>/corpus`` (the work an unlinked reference
names, the names citing papers give each work, the versions of a paper).

**Seeded omission.** In each paper one *named, cited* work is picked (seeded by the paper id): a
reference that links to a corpus paper or a catalogue work, is cited at least once, and whose name
appears in the body (a name the catalogue says citing papers give the work, or the name its title
starts with, "LoRA: ...", written as the name is written, three or more letters). Every citation
of it is deleted from the Markdown (a numeric or alpha key from its bracket, a bracket left empty
with it; an author-year part from its parentheses; a narrative "Smith et al. (2020)" whole) and
its entry from the reference list; the rest of the text stays. The edit is checked by extracting
the text again: one reference fewer, none with the work's title, every other reference cited as
often as before (a paper whose edit fails the check, or whose numeric keys follow list position so
that an entry cannot be removed without renumbering, is left out and counted). Whether the seeded
draft, as the audit reads it, still writes the name in a sentence it reads is recorded (a Markdown
draft's sentences are its references' citation contexts). The seeded file is
read with :func:`mustcite.recommend.read_draft` and audited with the default decision,
``audit_draft(rec, draft, year=<the paper's year>)``; the omission is *shown* when a finding that
``mustcite audit`` prints (``AuditResult.missing``) is about the work: the same id, a version of
it, or a record whose normalised title equals or extends the reference's or the work's title.

**Intact papers.** The same papers unmodified: every shown finding is a candidate false alarm (the
paper is finished and published). A seeded sample of 50 of them is written for a separate judge.

``--compare NAME=SRC ...`` audits the same prepared files once per side, each in a subprocess whose
``PYTHONPATH`` is ``SRC`` (a ``src`` folder holding ``mustcite``); without it the one side is this
checkout's ``src``. Each side runs a process pool over papers (one model load per worker).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUT = RESULTS / "audit_fulltext_simulation.json"
SPLIT = ROOT / "benchmarks" / "splits" / "mentions_split.json"
SEED = 20261207
SAMPLE = 50
BOOTSTRAP = 2000
MIN_NAME_LETTERS = 3


class NotSeedable(ValueError):
    """The paper's citations of a work cannot be deleted faithfully (the reason is the message)."""


# ---------------------------------------------------------------- picking the named, cited work


def name_pattern(name: str) -> re.Pattern:
    """``name`` as a whole word (no letter, digit, hyphen or underscore glued on either side)."""
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")


def named_cited(refs: list[dict], names_of: dict[str, list[str]], body: str) -> list[dict]:
    """The references of an extraction record (each with ``paper_id``, a corpus paper or catalogue
    work, and ``target``) that are cited (``mentions`` >= 1) and whose work ``body`` names: a name of
    ``names_of[paper_id]`` or the name its title starts with, as written; one per work, in list order."""
    from mustcite.corpus import title_short_name
    from mustcite.extract import name_key

    out, seen = [], set()
    for r in refs:
        pid = r.get("paper_id")
        if not pid or not (r.get("mentions") or 0) or pid in seen or r.get("target") is None:
            continue
        names = [*names_of.get(pid, ()), title_short_name(r.get("title") or "")]
        for name in dict.fromkeys(n.strip() for n in names if n):
            if len(name_key(name)) >= MIN_NAME_LETTERS and name_pattern(name).search(body):
                seen.add(pid)
                out.append({"target": int(r["target"]), "paper_id": pid, "title": r.get("title") or "",
                            "name": name, "mentions": int(r.get("mentions") or 0), "year": r.get("year")})
                break
    return out


def pick(cands: list[dict], seed: int, paper: str) -> dict | None:
    """One candidate, drawn with a generator seeded by ``seed`` and the paper id (None when none)."""
    if not cands:
        return None
    return random.Random(f"{seed}:{paper}").choice(sorted(cands, key=lambda c: c["target"]))


# ---------------------------------------------------------------- deleting its citations


def _numeric_bracket(keys: list[str]) -> str:
    return "[" + ", ".join(keys) + "]" if keys else ""


def _edit_sentence(s: str, mentions: list, entry: int, style: str, index) -> str:
    """``s`` without the citations of ``entry`` (``mentions``: :func:`find_citations` of ``s``)."""
    from mustcite.extract import find_citations

    spans: dict[tuple[int, int], list] = {}
    for m in mentions:
        spans.setdefault((m.start, m.end), []).append(m)
    out, last = [], 0
    for (a, b), ms in sorted(spans.items()):
        if not any(m.entry == entry for m in ms):
            continue
        if style in ("numeric", "alpha"):
            new = _numeric_bracket([m.key for m in ms if m.entry != entry])
        elif all(m.entry == entry for m in ms):
            new = ""                                  # the whole narrative or parenthetical citation
        elif s[a] not in "([":
            raise NotSeedable("a narrative citation of several works")
        else:
            inner = s[a + 1:b - 1]
            kept = []
            for part in inner.split(";"):
                pm = find_citations(f"({part.strip()})", style, index)
                if any(m.entry == entry for m in pm):
                    if any(m.entry != entry for m in pm):
                        raise NotSeedable("an author-year citation part of several works")
                    continue
                kept.append(part.strip())
            new = s[a] + "; ".join(kept) + s[b - 1]
        start = a
        if not new:                                   # take the space before it too
            while start > last and s[start - 1] == " ":
                start -= 1
        out += [s[last:start], new]
        last = b
    out.append(s[last:])
    return "".join(out)


def delete_work(text: str, target: int) -> tuple[str, int]:
    """``(text, markers edited)``: the Nougat Markdown ``text`` without every citation of the
    reference whose extraction ``target`` is ``target`` (its 1-based place among the entries with
    a year, as the extraction records number them) and without its reference entry."""
    from mustcite.extract import (
        RefIndex,
        citation_style,
        iter_cited_sentences,
        parse_document,
        reference_entries,
        reference_targets,
        searched_body,
    )

    doc = parse_document(text)
    entries = reference_entries(doc)
    body = searched_body(doc)
    style, _, _ = citation_style(entries, body)
    index = RefIndex(entries)
    if style == "numeric" and index.numbers_by_position:
        raise NotSeedable("numeric keys follow list position: an entry cannot be removed without renumbering")
    targets = reference_targets(entries, index, style)
    if target not in targets:
        raise NotSeedable(f"no reference entry {target}")
    entry = targets.index(target)
    edits, done = 0, set()
    for _pi, sents, i, ms in iter_cited_sentences(body, style, index):
        if not any(m.entry == entry for m in ms) or sents[i] in done:
            continue                       # a sentence written twice is edited everywhere at once
        old = sents[i]
        done.add(old)
        new = _edit_sentence(old, ms, entry, style, index)
        if old not in text:
            raise NotSeedable("a citing sentence is not written as read")
        text = text.replace(old, new)
        edits += 1
    raw = entries[entry].raw
    at = text.rfind(raw)
    if at < 0:
        raise NotSeedable("the reference entry is not written as read")
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at + len(raw))
    line_end = len(text) if line_end < 0 else line_end
    rest = (text[line_start:at] + text[at + len(raw):line_end]).strip(" *-\t")
    text = text[:line_start] + rest + text[line_end:] if rest else text[:line_start] + text[line_end + 1:]
    return text, edits


def check_deleted(before: str, after: str, title: str) -> str | None:
    """Why the edit is not a clean deletion of the reference titled ``title`` (None when it is):
    read again, the text must have one reference fewer, none with that title, and every other
    reference cited as often as before."""
    from mustcite.corpus import normalize_title
    from mustcite.extract import extract_markdown

    seeded = extract_markdown(after, keep_undated=True)
    if seeded.status == "failed":
        return "the seeded text cannot be read: " + "; ".join(seeded.messages)
    a, b = extract_markdown(before, keep_undated=True).references, seeded.references
    gone = normalize_title(title)
    if len(b) != len(a) - 1:
        return "the reference list did not lose exactly one entry"
    if any(normalize_title(r.title) == gone for r in b):
        return "the reference is still in the list"
    others = Counter((normalize_title(r.title), r.mentions) for r in a if normalize_title(r.title) != gone)
    if others != Counter((normalize_title(r.title), r.mentions) for r in b):
        return "other references are cited a different number of times"
    if any(r.mentions for r in b if normalize_title(r.title) == gone):
        return "the work is still cited"
    return None


# ---------------------------------------------------------------- preparing the cases


def read_gz(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read()


def body_text(text: str) -> str:
    """The paragraphs of the body that the extraction searches for citations, one a line."""
    from mustcite.extract import parse_document, searched_body

    return "\n".join(p.text for p in searched_body(parse_document(text)))


def catalogue_names(corpus: Path) -> dict[str, list[str]]:
    """``paper id -> the names citing papers give it`` (the catalogue's ``names.parquet``)."""
    import pyarrow.parquet as pq

    out: dict[str, list[str]] = {}
    t = pq.read_table(corpus / "names.parquet", columns=["name", "target"])
    for name, target in zip(t.column("name").to_pylist(), t.column("target").to_pylist()):
        out.setdefault(target, []).append(name)
    return out


def version_ids(corpus: Path) -> dict[str, set[str]]:
    """``paper id -> ids of its other versions`` (the corpus's version links)."""
    import pyarrow.parquet as pq

    out: dict[str, set[str]] = {}
    path = corpus / "versions.parquet"
    if path.is_file():
        t = pq.read_table(path, columns=["paper_id", "version_id"])
        for a, b in zip(t.column("paper_id").to_pylist(), t.column("version_id").to_pylist()):
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return out


def name_still_read(path: Path, name: str) -> bool:
    """Whether the seeded draft at ``path``, as the audit reads it, still writes ``name`` in a
    sentence it reads (a Markdown draft's sentences are its references' citation contexts)."""
    from mustcite.recommend import read_draft

    paper = read_draft(path).paper
    pattern = name_pattern(name)
    return any(pattern.search(c.context or "") for r in paper.references for c in r.contexts)


def fulltext_path(meta: dict, data: Path, paper: str) -> Path | None:
    src = Path(meta.get("source_path") or "")
    if src.is_file():
        return src
    return next(iter(sorted((data / "neurips").glob(f"fulltext_*/{paper}.md.gz"))), None)


def prepare(papers: list[str], work: Path, data: Path, folder: Path, seed: int, want: int | None = None,
            ) -> tuple[list[dict], Counter]:
    """One case per paper that could be seeded, in the order of ``papers`` until ``want`` of them
    (None: all): the seeded Markdown file written to ``folder``; and why the others were left out."""
    from mustcite.corpus import normalize_title
    from mustcite.extract import WorkIndex
    from mustcite.io import read_json

    works = WorkIndex.load(work / "corpus")
    names_of = catalogue_names(work / "corpus")
    versions = version_ids(work / "corpus")
    cases, skipped = [], Counter()
    for paper in papers:
        if want is not None and len(cases) >= want:
            break
        meta_path, rec_path = work / "extract" / f"{paper}.meta.json", work / "extract" / f"{paper}.json"
        if not rec_path.is_file():
            skipped["no extraction record"] += 1
            continue
        meta = read_json(meta_path) if meta_path.is_file() else {}
        src = fulltext_path(meta, data, paper)
        if src is None:
            skipped["no full text"] += 1
            continue
        text = read_gz(src)
        refs = works.resolve(paper, [r for r in read_json(rec_path) if isinstance(r, dict)])
        choice = pick(named_cited(refs, names_of, body_text(text)), seed, paper)
        if choice is None:
            skipped["no named, cited work"] += 1
            continue
        try:
            seeded, edits = delete_work(text, choice["target"])
        except NotSeedable as exc:
            skipped[str(exc)] += 1
            continue
        why = check_deleted(text, seeded, choice["title"])
        if why:
            skipped[f"check failed: {why}"] += 1
            continue
        wid = choice["paper_id"]
        titles = {normalize_title(choice["title"])}
        if wid in works.works:
            titles.add(normalize_title(works.works[wid].get("title") or ""))
        (folder / "seeded").mkdir(parents=True, exist_ok=True)
        path = folder / "seeded" / f"{paper}.md"
        path.write_text(seeded, encoding="utf-8")
        choice["name_read"] = name_still_read(path, choice["name"])
        cases.append({"paper": paper, "year": int(meta.get("year") or 2024), "intact": str(src),
                      "seeded": str(path), "work": {**choice, "ids": sorted({wid} | versions.get(wid, set())),
                                                    "titles": sorted(t for t in titles if t),
                                                    "markers_edited": edits}})
    return cases, skipped


# ---------------------------------------------------------------- auditing (one side)


def one_work(a: str, b: str) -> bool:
    """Whether two normalised titles are one work: equal, or one extends the other by more words
    after at least three."""
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short.split()) >= 3 and long_.startswith(short + " ")


_REC: list = [None]
#: how this process's audit decides named works ("rules": the default, passed to no older tree)
_NAMED: list = ["rules"]


def _init(model: str, named: str = "rules") -> None:
    from mustcite import load

    _REC[0] = load(model)
    _NAMED[0] = named


def shown_rows(result) -> list[dict]:
    """The findings ``mustcite audit`` prints, with what a judge needs."""
    names = {(f.kind, f.paper_id or f.key or ""): f.name for f in getattr(result, "findings", ())}
    out = []
    for r in result.missing:
        loc = r.location or {}
        out.append({"finding": r.finding, "paper_id": r.paper_id or None, "title": r.title, "year": r.year,
                    "name": names.get((r.finding, r.paper_id or r.title or "")), "confidence": r.confidence,
                    "message": r.message, "sentence": loc.get("quote") or "", "section": loc.get("section"),
                    "where": ":".join(str(x) for x in (loc.get("file"), loc.get("line")) if x) or None})
    return out


def audit_case(case: dict) -> dict:
    """The audits of one paper, intact and seeded (``error``: why a draft could not be audited)."""
    from mustcite.errors import MustciteError

    try:
        return _audit_case(case)
    except MustciteError as exc:
        return {"paper": case["paper"], "error": str(exc)}


def _audit_case(case: dict) -> dict:
    from mustcite.corpus import normalize_title
    from mustcite.recommend import audit_draft, read_draft

    rec = _REC[0]
    kw = {} if _NAMED[0] == "rules" else {"named": _NAMED[0]}
    t0 = time.perf_counter()
    intact = audit_draft(rec, read_draft(case["intact"]), year=case["year"], **kw)
    seeded = audit_draft(rec, read_draft(case["seeded"]), year=case["year"], **kw)
    w = case["work"]
    ids, titles = set(w["ids"]), set(w["titles"])
    row_of = getattr(rec.candidates, "row", {})
    for pid in ids:
        if pid in row_of:
            titles.add(normalize_title(rec.pool.titles[row_of[pid]] or ""))

    def about(pid: str | None, title: str | None) -> bool:
        t = normalize_title(title or "")
        return (pid in ids) or any(one_work(t, v) for v in titles)
    shown = shown_rows(seeded)
    hit = next((r for r in shown if about(r["paper_id"], r["title"])), None)
    found = next((f for f in seeded.findings if about(f.paper_id, rec.pool.titles[f.row] if f.row is not None
                                                      else None)), None)
    return {"paper": case["paper"], "work": w["paper_id"], "shown": hit is not None,
            "shown_kind": hit["finding"] if hit else None, "shown_confidence": hit["confidence"] if hit else None,
            "found": found is not None, "found_kind": found.kind if found else None,
            "found_confidence": round(found.confidence, 4) if found else None,
            "threshold": seeded.threshold, "seeded_shown": len(shown), "intact": shown_rows(intact),
            "seconds": round(time.perf_counter() - t0, 2)}


def run_side(cases_file: Path, out: Path, model: str, workers: int, named: str = "rules") -> None:
    """Audit every case of ``cases_file`` (this process's ``mustcite``, named works decided by
    ``named``) and write the rows to ``out``."""
    from multiprocessing import get_context

    from tqdm import tqdm

    cases = json.loads(cases_file.read_text())
    rows = []
    with get_context("spawn").Pool(workers, initializer=_init, initargs=(model, named)) as pool:
        for row in tqdm(pool.imap_unordered(audit_case, cases), total=len(cases), desc="papers", unit="paper",
                        file=sys.stderr):
            rows.append(row)
    out.write_text(json.dumps(sorted(rows, key=lambda r: r["paper"]), ensure_ascii=False))


# ---------------------------------------------------------------- figures


def case_fields(case: dict, year_offset: int = 0) -> dict:
    """What a result row keeps of its case: the seeded work's name, title, year and source, and
    the paper's own year."""
    w = case["work"]
    return {"work_name": w["name"], "work_title": w["title"], "work_year": w.get("year"),
            "name_read": w.get("name_read"),
            "work_source": "catalogue work" if str(w["paper_id"]).startswith("w-") else "corpus paper",
            "paper_year": case["year"] - year_offset}


def share(rows: list[dict], seed: int) -> dict:
    """How many of ``rows`` show their seeded omission, the share, and its 95% bootstrap interval."""
    hits = [r["shown"] for r in rows]
    return {"papers": len(rows), "shown": sum(hits), "share_shown": round(sum(hits) / max(1, len(hits)), 4),
            "ci95": bootstrap_ci(hits, seed=seed)}


def bootstrap_ci(hits: list[bool], n: int = BOOTSTRAP, seed: int = SEED) -> list[float]:
    """95% percentile bootstrap interval of the share of ``hits`` (papers resampled)."""
    if not hits:
        return [0.0, 0.0]
    a = np.asarray(hits, dtype=np.float64)
    means = np.random.default_rng(seed).choice(a, size=(n, len(a)), replace=True).mean(axis=1)
    return [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)]


def summary(rows: list[dict], seed: int) -> tuple[dict, list[dict]]:
    """The figures of one side, and its seeded sample of shown findings on intact papers."""
    hits = [r["shown"] for r in rows]
    per = [len(r["intact"]) for r in rows]
    kinds = Counter(f["finding"] for r in rows for f in r["intact"])
    dist = Counter(min(n, 5) for n in per)
    shown_all = [{"paper": r["paper"], **f} for r in sorted(rows, key=lambda r: r["paper"]) for f in r["intact"]]
    sample = random.Random(seed).sample(shown_all, min(SAMPLE, len(shown_all)))
    secs = [r["seconds"] for r in rows]
    return {
        "papers": len(rows),
        "seeded": {"shown": sum(hits), "share_shown": round(sum(hits) / max(1, len(hits)), 4),
                   "ci95": bootstrap_ci(hits, seed=seed),
                   "found_any_confidence": sum(r["found"] for r in rows),
                   "shown_by_kind": dict(Counter(r["shown_kind"] for r in rows if r["shown"]).most_common()),
                   "found_by_kind": dict(Counter(r["found_kind"] for r in rows if r["found"]).most_common()),
                   "shown_per_seeded_paper": round(sum(r["seeded_shown"] for r in rows) / max(1, len(rows)), 3)},
        "intact": {"shown": sum(per), "mean_per_paper": round(float(np.mean(per)) if per else 0.0, 3),
                   "median_per_paper": float(np.median(per)) if per else 0.0,
                   "papers_with_none": sum(n == 0 for n in per),
                   "distribution": {("5+" if k == 5 else str(k)): dist[k] for k in sorted(dist)},
                   "by_kind": dict(kinds.most_common()),
                   "per_paper_by_kind": {k: round(v / max(1, len(rows)), 3) for k, v in kinds.most_common()}},
        "seeded_subsets": {
            "work_older_than_paper": share([r for r in rows if (r.get("work_year") or 9999) < r.get("paper_year", 0)],
                                           seed),
            "name_still_read": share([r for r in rows if r.get("name_read")], seed),
            "name_no_longer_read": share([r for r in rows if r.get("name_read") is False], seed),
            **{f"source: {k}": share([r for r in rows if r.get("work_source") == k], seed)
               for k in ("corpus paper", "catalogue work")}},
        "threshold": rows[0]["threshold"] if rows else None,
        "seconds_per_paper_two_audits": round(float(np.mean(secs)), 2) if secs else None,
    }, sample


def parse_sides(pairs: list[str] | None) -> dict[str, tuple[Path, str]]:
    """``NAME=SRC`` or ``NAME=SRC:learned`` -> ``{NAME: (SRC, how named works are decided)}``."""
    if not pairs:
        return {"current": (ROOT / "src", "rules")}
    out = {}
    for p in pairs:
        name, sep, src = p.partition("=")
        src, _, named = src.partition(":")
        if not sep or not name or not src or named not in ("", "rules", "learned"):
            raise SystemExit(f"--compare: expected NAME=SRC_DIR[:learned], got {p!r}")
        if not (Path(src) / "mustcite" / "__init__.py").is_file():
            raise SystemExit(f"--compare {name}: {src} holds no mustcite package (give its src folder)")
        out[name] = (Path(src).resolve(), named or "rules")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=500, help="seeded papers wanted (held-out papers are drawn "
                    "in a seeded order until this many could be seeded)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None, help="work folder (extract/, corpus/, models/recommender)")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--year-offset", type=int, default=0,
                    help="audit as of the paper's year plus this (-1: no paper of its own year gives evidence)")
    ap.add_argument("--compare", nargs="+", metavar="NAME=SRC", default=None,
                    help="audit with each source tree in a process of its own (NAME=SRC:learned: with the "
                         "mention models deciding named works)")
    ap.add_argument("--mentions", type=Path, default=None,
                    help="the mention models' folder (default: models/mentions beside the recommender)")
    ap.add_argument("--named", default="rules", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--run-side", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--side-out", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run_side:
        run_side(args.run_side, args.side_out, str(args.model), args.workers, args.named)
        return
    from mustcite.config import find_data_dir

    work = (args.work or Path(os.environ.get("MUSTCITE_WORK") or "work")).resolve()
    model = (args.model or work / "models" / "recommender").resolve()
    sides = parse_sides(args.compare)
    held = sorted(json.loads(SPLIT.read_text())["held_out"])
    order = random.Random(args.seed).sample(held, len(held))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mustcite-fulltext-sim-") as tmp:
        tmp = Path(tmp)
        cases, skipped = prepare(order, work, Path(find_data_dir()), tmp, args.seed, args.papers)
        for c in cases:
            c["year"] += args.year_offset
        drawn = len(cases) + sum(skipped.values())
        print(f"{len(cases)} of {drawn} papers drawn seeded ({dict(skipped)}) in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr)
        by_paper = {c["paper"]: c for c in cases}
        (tmp / "cases.json").write_text(json.dumps(cases, ensure_ascii=False))
        out: dict[str, Any] = {
            "what": "seeded named omissions and intact-paper findings of mustcite audit on held-out full texts",
            "command": "python benchmarks/audit_fulltext_simulation.py " + " ".join(sys.argv[1:]),
            "seed": args.seed, "year_offset": args.year_offset, "papers_drawn": drawn, "papers_seeded": len(cases),
            "left_out": dict(skipped.most_common()), "model": str(model),
            "seeded_markers_edited": int(sum(c["work"]["markers_edited"] for c in cases)),
            "seeded_by_source": dict(Counter("catalogue work" if c["work"]["paper_id"].startswith("w-")
                                             else "corpus paper" for c in cases)),
            "sides": {}}
        for name, (src, named) in sides.items():
            t1 = time.perf_counter()
            side_out = tmp / f"side_{name}.json"
            env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
            if args.mentions is not None:
                env["MUSTCITE_MENTION_MODEL"] = str(args.mentions.resolve())
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run-side", str(tmp / "cases.json"),
                            "--side-out", str(side_out), "--model", str(model), "--workers", str(args.workers),
                            "--named", named], env=env, check=True)
            rows = [{**r, **case_fields(by_paper[r["paper"]], args.year_offset)}
                    for r in json.loads(side_out.read_text())]
            errors = {r["paper"]: r["error"] for r in rows if r.get("error")}
            rows = [r for r in rows if not r.get("error")]
            figures, sample = summary(rows, args.seed)
            figures.update(src=str(src), named=named, errors=errors, seconds=round(time.perf_counter() - t1, 1),
                           rows=rows)
            out["sides"][name] = figures
            suffix = "" if len(sides) == 1 else f"_{name}"
            sample_path = args.out.with_name(args.out.stem + f"_sample{suffix}.jsonl")
            sample_path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sample))
            s, i = figures["seeded"], figures["intact"]
            print(f"[{name}] seeded omissions shown {s['shown']}/{len(rows)} = {s['share_shown']:.1%} "
                  f"(95% CI {s['ci95'][0]:.1%}-{s['ci95'][1]:.1%}); intact papers shown {i['mean_per_paper']} "
                  f"findings each ({i['by_kind']}) -> {sample_path.name}", file=sys.stderr)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"-> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

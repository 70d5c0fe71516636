"""Build a benchmark from the corpus store and labelled reference files, as in MasterSet (Section 6.2).

Inputs:

* the corpus ``papers.parquet`` (paper_id, title, abstract, venue, year, source_id, source_ids);
* one or more labelled extraction folders: ``<stem>.json`` reference lists (references linked to
  corpus ``paper_id`` by ``mustcite link``, labelled with ``type1``/``type2``/``type3``/``must_cite``
  by ``mustcite annotate``) and ``<stem>.meta.json`` sidecars (title, abstract, year, venue of the
  citing paper).

Output, under ``<work>/benchmarks/<recipe>/``::

    pool.parquet                 candidate pool (paper_id, title, abstract, venue, year)
    queries/{train,dev,test}.jsonl   {"id","title","abstract","year","venue","source"}
    qrels/{split}.{gt}.qrels     TREC qrels per split and ground truth (type1/2/3, mustcite, cited)
    labels.jsonl                 one line per (query, pool paper) cited pair: the ground-truth flags
                                 and the raw labels they come from
    manifest.json                recipe, pool snapshot sha, split boundaries, label version,
                                 counts per split and ground truth, sha256 of every file

The recipe's ``pool_rule`` says which citing papers' references enter the core set (v1: every
target-venue citing paper, dev/test queries included; v2: only papers of earlier years and train
queries, so nothing a held-out query cites shapes the pool) and its ``split_rule`` how queries are
split (v2: by a hash of each id, fixed before the pool is built; full texts that lost a page in
OCR are train queries only).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..corpus.records import VENUES, make_paper_id, normalize_title
from ..errors import DataMissingError, MustciteError
from ..extract.records import validate_reference_list
from ..extract.runner import iter_reference_files
from ..extract.works import WorkIndex, is_work_id, pool_works
from ..io import atomic_write_json, sha256_file, write_jsonl
from .recipes import GROUND_TRUTHS, SPLITS, Recipe
from .trec import write_qrels

_VENUE_ALIASES = {v.lower(): v for v in VENUES} | {"nips": "NeurIPS", "neurips": "NeurIPS"}


def normalize_venue(value: Any) -> str:
    """``"NeurIPS 2024"``, ``"nips"``, ``"ICML"`` -> the corpus venue code ("" if unknown)."""
    if not value:
        return ""
    head = str(value).strip().split()[0].lower()
    return _VENUE_ALIASES.get(head, "")


@dataclass
class PairLabels:
    """Labels of one (citing paper, cited pool paper) pair, OR-combined over duplicate references."""

    type1: int | None = None
    type2: int | None = None
    mentions: int = 0
    type3: int | None = None
    must_cite: bool | None = None
    link_score: float | None = None
    judges: set[str] = field(default_factory=set)

    def add(self, ref: dict[str, Any]) -> None:
        if ref.get("type1") is not None:
            self.type1 = max(self.type1 or 0, int(ref["type1"]))
        if ref.get("type2") is not None:
            self.type2 = max(self.type2 or 0, int(ref["type2"]))
        mentions = ref.get("mentions")
        if not mentions:
            mentions = len(ref.get("contexts") or [])
        self.mentions = max(self.mentions, int(mentions))
        if ref.get("type3") is not None:
            self.type3 = max(self.type3 or 0, int(ref["type3"]))
        if ref.get("must_cite") is not None:
            self.must_cite = bool(self.must_cite) or bool(ref["must_cite"])
        if ref.get("link_score") is not None:
            self.link_score = max(self.link_score or 0.0, float(ref["link_score"]))
        if ref.get("judge"):
            self.judges.add(str(ref["judge"]))

    def truths(self, recipe: Recipe) -> dict[str, bool]:
        t1 = self.type1 == 1
        t2 = (self.type2 or 0) >= recipe.type2_min
        t3 = bool(self.type3) if self.type3 is not None else self.mentions >= recipe.type3_min_mentions
        combined = t1 or t2 or t3 or bool(self.must_cite)
        return {"type1": t1, "type2": t2, "type3": t3, "mustcite": combined, "cited": True}


@dataclass
class CitingPaper:
    stem: str
    ref_file: str
    title: str
    abstract: str
    year: int | None
    venue: str
    paper_id: str
    in_corpus: bool
    cited: dict[str, PairLabels]
    #: pages OCR failed on (None: unknown, e.g. an extraction without that count)
    failed_pages: int | None = 0
    #: a failed page lies in or next to the reference list (extraction's ``incomplete_bibliography``)
    incomplete_bibliography: bool = False
    #: every reference entry: the corpus paper or work it resolves to (None: neither), must-cite or not
    entries: list[tuple[str | None, bool]] = field(default_factory=list)

    def text_issue(self) -> str | None:
        """Why this paper's references are no complete gold list, or None when they can be."""
        if self.incomplete_bibliography:
            return "failed_page_near_references"
        if self.failed_pages is None:
            return "failed_pages_unknown"
        if self.failed_pages > 0:
            return "failed_page_in_body"
        return None


def _failed_pages(meta: dict[str, Any]) -> int | None:
    stats = meta.get("stats") if isinstance(meta.get("stats"), dict) else {}
    if isinstance(stats.get("failed_pages"), int):
        return stats["failed_pages"]
    if stats.get("missing_pages") == 0:     # an older extraction: no page marker at all
        return 0
    return None


def load_corpus(path: str | Path) -> dict[str, dict[str, Any]]:
    """Corpus rows by paper_id (only the columns the builder needs)."""
    path = Path(path)
    if not path.is_file():
        raise DataMissingError(f"no corpus store at {path}", hint="run `mustcite corpus build` first or pass --corpus")
    try:
        schema = pq.read_schema(path)
        cols = [c for c in ("paper_id", "title", "abstract", "venue", "year", "source_id", "source_ids")
                if c in schema.names]
        rows = pq.read_table(path, columns=cols).to_pylist()
    except Exception as exc:
        raise MustciteError(f"cannot read corpus Parquet: {exc}", path=path) from None
    missing = {"paper_id", "title", "venue", "year"} - set(cols)
    if missing:
        raise MustciteError(f"corpus Parquet lacks column(s) {', '.join(sorted(missing))}", path=path)
    return {r["paper_id"]: r for r in rows}


class _CorpusLookup:
    """Find the corpus record of a citing paper: by source id (e.g. OpenReview id), else by title."""

    def __init__(self, corpus: dict[str, dict[str, Any]]):
        self.by_source: dict[str, str] = {}
        self.by_title: dict[str, list[str]] = {}
        for pid, r in corpus.items():
            for sid in [r.get("source_id") or "", *(r.get("source_ids") or [])]:
                if sid:
                    self.by_source.setdefault(str(sid).split(":")[-1], pid)
            self.by_title.setdefault(normalize_title(r.get("title")), []).append(pid)
        self.corpus = corpus

    def find(self, stem: str, title: str, year: int | None, venue: str) -> str | None:
        if stem in self.by_source:
            return self.by_source[stem]
        cands = self.by_title.get(normalize_title(title), []) if title else []
        for want_year, want_venue in ((True, True), (True, False)):
            for pid in cands:
                r = self.corpus[pid]
                if (not want_year or year is None or r.get("year") == year) and \
                        (not want_venue or not venue or r.get("venue") == venue):
                    return pid
        return None


def read_citing_papers(ref_dirs: list[str | Path], corpus: dict[str, dict[str, Any]], recipe: Recipe,
                       duplicates: list[dict[str, str]] | None = None,
                       works: WorkIndex | None = None) -> list[CitingPaper]:
    """Every labelled reference file of the folders, with its citing paper resolved.

    A second file of an already seen citing paper (same corpus record) is skipped and listed in
    ``duplicates`` (the first in file-name order is kept). With ``works`` (a catalogue of cited
    works), a reference that links to no corpus paper cites the work it names."""
    duplicates = duplicates if duplicates is not None else []
    lookup = _CorpusLookup(corpus)
    out: list[CitingPaper] = []
    seen: dict[str, str] = {}
    for d in ref_dirs:
        d = Path(d)
        if not d.is_dir():
            raise DataMissingError(f"reference folder {d} does not exist",
                                   hint="run `mustcite extract`, `mustcite link` and `mustcite annotate` first")
        for stem, f in iter_reference_files(d, labelled=True):
            try:
                refs = json.loads(f.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise MustciteError(f"malformed JSON: {exc.msg}", path=f, line=exc.lineno) from None
            validate_reference_list(refs, path=f)
            if works is not None:
                refs = works.resolve(stem, refs)
            meta_path = d / (stem + ".meta.json")
            meta: dict[str, Any] = {}
            if meta_path.is_file():
                try:
                    meta = json.loads(meta_path.read_text(encoding="utf-8"))
                except json.JSONDecodeError as exc:
                    raise MustciteError(f"malformed JSON: {exc.msg}", path=meta_path, line=exc.lineno) from None
            title, year = str(meta.get("title") or ""), meta.get("year")
            venue = normalize_venue(meta.get("venue"))
            pid = lookup.find(stem, title, year, venue)
            rec = corpus.get(pid) if pid else None
            if rec is not None:
                venue = venue or rec.get("venue") or ""
                year = year if year is not None else rec.get("year")
            if not title and rec is not None:
                title = rec.get("title") or ""
            if not title:
                raise MustciteError("citing paper has no title in its .meta.json and is not in the corpus",
                                    path=f, hint="re-run `mustcite extract` so the .meta.json sidecar exists")
            if recipe.query_text == "refs":
                abstract = str(meta.get("abstract") or (rec or {}).get("abstract") or "")
            else:
                abstract = str((rec or {}).get("abstract") or meta.get("abstract") or "")
                title = (rec or {}).get("title") or title
            paper_id = pid or make_paper_id(title, venue or "unknown", year, stem)
            if paper_id in seen:           # the same paper twice (e.g. two full texts of one paper)
                duplicates.append({"file": str(f), "paper_id": paper_id, "kept": seen[paper_id]})
                continue
            seen[paper_id] = str(f)
            cited: dict[str, PairLabels] = {}
            entries: list[tuple[str | None, bool]] = []
            for ref in refs:
                cid = ref.get("paper_id")
                known = bool(cid) and (cid in corpus or (works is not None and cid in works.works))
                entries.append((cid if known and cid != paper_id else None, bool(ref.get("must_cite"))))
                if not known or cid == paper_id:
                    continue
                score = ref.get("link_score")
                if score is not None and score < recipe.min_link_score:
                    continue
                cited.setdefault(cid, PairLabels()).add(ref)
            out.append(CitingPaper(stem, str(f), title, abstract, int(year) if year is not None else None,
                                   venue, paper_id, rec is not None, cited, _failed_pages(meta),
                                   "incomplete_bibliography" in (meta.get("failure_modes") or []), entries))
    return out


def _coverage(papers: list[CitingPaper], corpus_pool: set[str], pool: set[str]) -> dict[str, Any]:
    """How many of the papers' reference entries (and must-cite ones) the pool can hold: with its
    corpus papers only, and with everything it holds (corpus papers and works)."""
    refs = [e for c in papers for e in c.entries]
    must = [e for e in refs if e[1]]
    out: dict[str, Any] = {"queries": len(papers), "reference_entries": len(refs), "must_cite_entries": len(must)}
    for name, ids in (("corpus_papers", corpus_pool), ("pool", pool)):
        out[f"entries_in_{name}"] = round(sum(e[0] in ids for e in refs) / max(1, len(refs)), 4)
        out[f"must_cite_in_{name}"] = round(sum(e[0] in ids for e in must) / max(1, len(must)), 4)
    return out


def split_queries(qids: list[str], fractions: tuple[float, float, float], seed: int) -> dict[str, list[str]]:
    """Shuffle sorted ids with ``random.Random(seed)`` and cut train/dev/test by the fractions."""
    order = sorted(qids)
    random.Random(seed).shuffle(order)
    n = len(order)
    n_train = round(n * fractions[0])
    n_dev = round(n * (fractions[0] + fractions[1])) - n_train
    return {"train": sorted(order[:n_train]), "dev": sorted(order[n_train:n_train + n_dev]),
            "test": sorted(order[n_train + n_dev:])}


def hash_split(qid: str, fractions: tuple[float, float, float], seed: int) -> str:
    """The split of one query from a seeded hash of its id alone (v2): adding or removing other
    papers never moves it."""
    u = int(hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()[:12], 16) / float(16 ** 12)
    if u < fractions[0]:
        return "train"
    return "dev" if u < fractions[0] + fractions[1] else "test"


def build_benchmark(recipe: Recipe, *, corpus_path: str | Path, ref_dirs: list[str | Path],
                    out_dir: str | Path, works_dir: str | Path | None = None) -> dict[str, Any]:
    """Build the benchmark files under ``out_dir``; returns the manifest. A recipe with ``works``
    reads the catalogue of cited works from ``works_dir`` (default: beside the corpus file)."""
    t0 = time.time()
    corpus = load_corpus(corpus_path)
    works = WorkIndex.load(works_dir or Path(corpus_path).parent) if recipe.works else None
    duplicates: list[dict[str, str]] = []
    citing = read_citing_papers(ref_dirs, corpus, recipe, duplicates, works)
    targets = set(recipe.target_venues)
    target_citing = [c for c in citing if c.venue in targets]

    query_cands = sorted((c for c in target_citing if c.year == recipe.query_year), key=lambda c: c.paper_id)
    # v2: each query's split is fixed before the pool exists, so the pool can leave dev/test out
    planned: dict[str, str] = {}
    train_only: Counter = Counter()
    if recipe.split_rule == "hash":
        for c in query_cands:
            planned[c.paper_id] = hash_split(c.paper_id, recipe.split_fractions, recipe.seed)
            issue = c.text_issue() if recipe.heldout_needs_whole_text else None
            if issue and planned[c.paper_id] != "train":
                planned[c.paper_id] = "train"
                train_only[issue] += 1

    # core set: target-venue corpus papers + the corpus papers cited by the contributing citing papers
    core = {pid for pid, r in corpus.items() if r.get("venue") in targets}
    if recipe.pool_rule == "all-citing":          # v1 / MasterSet: every target-venue citing paper
        contributors = target_citing
    else:                                         # v2: earlier-year labelled papers and train queries
        contributors = [c for c in target_citing if c.year is not None and c.year < recipe.query_year] + \
            [c for c in query_cands if planned.get(c.paper_id) == "train"]
    cited_by_target = set().union(*(c.cited.keys() for c in contributors)) if contributors else set()
    earlier = [c for c in contributors if c.year is not None and c.year < recipe.query_year]
    cited_by_earlier = set().union(*(c.cited.keys() for c in earlier)) if earlier else set()
    core |= cited_by_target
    lo, hi = recipe.pool_years
    pool_ids = sorted(pid for pid in core if not is_work_id(pid)
                      and corpus[pid].get("year") is not None and lo <= corpus[pid]["year"] <= hi)
    corpus_pool = set(pool_ids)
    # works: those a contributing paper cites, seen from the year the first one appeared
    work_rows = pool_works(works, allowed={c.stem for c in contributors}, until=recipe.query_year) \
        if works is not None else []
    work_ids = [r["paper_id"] for r in work_rows]
    pool_ids += work_ids
    pool = set(pool_ids)
    if not pool:
        raise MustciteError(f"the pool is empty: no core-set paper of {lo}-{hi} in the corpus")

    # queries: target-venue papers of the query year with >= 1 must-cite paper in the pool
    queries, labels, excluded = [], [], Counter()
    for c in query_cands:
        in_pool = {pid: lab for pid, lab in c.cited.items() if pid in pool}
        truths = {pid: lab.truths(recipe) for pid, lab in in_pool.items()}
        if not any(t["mustcite"] for t in truths.values()):
            excluded["no_mustcite_in_pool" + (f"_{planned[c.paper_id]}" if planned else "")] += 1
            continue
        queries.append(c)
        for pid in sorted(in_pool):
            lab = in_pool[pid]
            labels.append({"qid": c.paper_id, "paper_id": pid, **truths[pid],
                           "raw": {"type1": lab.type1, "type2": lab.type2, "type3": lab.type3,
                                   "mentions": lab.mentions, "must_cite": lab.must_cite,
                                   "link_score": lab.link_score}})
    if not queries:
        raise MustciteError(f"no query paper of {recipe.query_year} from {', '.join(recipe.target_venues)} "
                            "has a must-cite paper in the pool",
                            hint="check that the reference files are linked (`mustcite link`) and labelled "
                                 "(`mustcite annotate`)")
    if planned:
        splits = {sp: sorted(q.paper_id for q in queries if planned[q.paper_id] == sp) for sp in SPLITS}
    else:
        splits = split_queries([q.paper_id for q in queries], recipe.split_fractions, recipe.seed)
    split_of = {qid: s for s, ids in splits.items() for qid in ids}
    for row in labels:
        row["split"] = split_of[row["qid"]]

    out = Path(out_dir)
    (out / "queries").mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    pool_rows = [{"paper_id": pid, "title": corpus[pid].get("title") or "",
                  "abstract": corpus[pid].get("abstract") or "",
                  "venue": corpus[pid].get("venue") or "", "year": int(corpus[pid]["year"])}
                 for pid in pool_ids if not is_work_id(pid)]
    if works is not None:          # papers and works in one table: kind, and the year it was published
        for r in pool_rows:
            rec = corpus[r["paper_id"]]
            r |= {"kind": "paper", "published": r["year"], "authors": list(rec.get("authors") or []),
                  "url": rec.get("url") or None}
        pool_rows += [{k: v for k, v in r.items() if k != "pdf"} for r in work_rows]
    tmp = out / ".pool.parquet.tmp"
    pq.write_table(pa.Table.from_pylist(pool_rows), tmp, compression="zstd")
    tmp.replace(out / "pool.parquet")
    by_id = {q.paper_id: q for q in queries}
    for s in SPLITS:
        write_jsonl(out / "queries" / f"{s}.jsonl",
                    ({"id": qid, "title": by_id[qid].title, "abstract": by_id[qid].abstract,
                      "year": by_id[qid].year, "venue": by_id[qid].venue, "source": by_id[qid].stem}
                     for qid in splits[s]))
    write_jsonl(out / "labels.jsonl", labels)
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for s in SPLITS:
        counts[s] = {}
        for gt in GROUND_TRUTHS:
            qrels: dict[str, dict[str, int]] = {}
            for row in labels:
                if row["split"] == s and row[gt]:
                    qrels.setdefault(row["qid"], {})[row["paper_id"]] = 1
            write_qrels(out / "qrels" / f"{s}.{gt}.qrels", qrels)
            counts[s][gt] = {"queries": len(qrels), "pairs": sum(len(v) for v in qrels.values())}
        counts[s]["queries"] = len(splits[s])
    judges = Counter(j for c in queries for lab in c.cited.values() for j in lab.judges)
    files = sorted(p for p in out.rglob("*")
                   if p.is_file() and p.name != "manifest.json" and not p.name.startswith("."))
    manifest = {
        "recipe": recipe.to_dict(),
        "benchmark": f"{recipe.name}",
        "version": recipe.version,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(time.time() - t0, 2),
        "inputs": {"corpus": str(corpus_path), "corpus_sha256": sha256_file(Path(corpus_path)),
                   "corpus_papers": len(corpus), "ref_dirs": [str(d) for d in ref_dirs],
                   "citing_papers": len(citing), "citing_in_corpus": sum(c.in_corpus for c in citing),
                   "target_venue_citing_papers": len(target_citing),
                   "duplicate_citing_files_skipped": duplicates},
        "pool": {"papers": len(pool_ids), "years": list(recipe.pool_years),
                 "snapshot_sha256": hashlib.sha256("\n".join(pool_ids).encode()).hexdigest(),
                 "with_abstract": sum(1 for r in pool_rows if r["abstract"].strip()),
                 "by_venue": dict(sorted(Counter(r["venue"] for r in pool_rows
                                                 if not is_work_id(r["paper_id"])).items())),
                 "core_set_papers": len(core), "cited_by_target_venues": len(cited_by_target),
                 "rule": recipe.pool_rule,
                 "contributing_citing_papers": len(contributors),
                 "other_venue": sum(1 for pid in corpus_pool if corpus[pid].get("venue") not in targets),
                 "other_venue_cited_by_earlier_years": sum(
                     1 for pid in corpus_pool if corpus[pid].get("venue") not in targets and pid in cited_by_earlier),
                 "other_venue_cited_only_by_train_queries": sum(
                     1 for pid in corpus_pool
                     if corpus[pid].get("venue") not in targets and pid not in cited_by_earlier)},
        "works": None if works is None else {
            "catalogue": str(works.folder), "catalogue_works": len(works.works), "in_pool": len(work_ids),
            "by_kind": dict(Counter(works.works[w]["kind"] for w in work_ids).most_common())},
        "coverage": _coverage([q for q in queries if split_of[q.paper_id] == "test"], corpus_pool, pool),
        "queries": {"year": recipe.query_year, "total": len(queries),
                    "with_abstract": sum(1 for q in queries if q.abstract.strip()),
                    "candidates": len(query_cands),
                    "excluded": dict(excluded), "query_text": recipe.query_text,
                    "train_only": dict(train_only),
                    "with_failed_pages": sum(1 for q in queries if q.text_issue() is not None)},
        "splits": {"rule": recipe.split_rule, "fractions": list(recipe.split_fractions), "seed": recipe.seed,
                   "sizes": {s: len(splits[s]) for s in SPLITS},
                   "first_last_ids": {s: [splits[s][0], splits[s][-1]] if splits[s] else [] for s in SPLITS}},
        "labels": {"version": ",".join(sorted(judges)) or "unlabelled", "judges": dict(judges),
                   "type2_min": recipe.type2_min, "type3_min_mentions": recipe.type3_min_mentions,
                   "pairs": len(labels)},
        "counts": counts,
        "files": {str(p.relative_to(out)): sha256_file(p) for p in files},
    }
    atomic_write_json(out / "manifest.json", manifest)
    return manifest

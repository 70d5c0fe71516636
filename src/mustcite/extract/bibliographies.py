"""Reference lists from bibliographies alone: papers' ``.bbl`` files -> extraction records.

Input: a JSON-lines file (optionally ``.xz`` or ``.gz``), one citing paper a line:
``{"id": arXiv id, "title", "abstract", "bbl": [{"file": name, "text": the .bbl file}]}``
(``citations_cs768/papers.jsonl.xz`` of the data folder). Every ``.bbl`` is read with
:func:`mustcite.extract.bibtex.parse_bbl`; each item with a year becomes a reference entry of the
per-paper reference file (``references.schema.json``): title, authors, year, venue, DOI, arXiv id,
URL, BibTeX key, the cite label ("Vaswani et al., 2017") and the item's text as ``raw``. There are
no citation contexts and no mention counts (``contexts`` is empty, ``mentions`` 0): such a paper
gives "cited" evidence only. Its ``.meta.json`` says so with ``method: "bbl"`` and
``contexts: false``.

The citing paper's identity and year come from the corpus (:class:`CitingLookup`): its arXiv id,
then its normalised title, find the corpus record it is a version of (``corpus_paper_id``); its year
is that record's conference year when it is plausible for the arXiv id (``year_source: "corpus"``),
else the arXiv id's year (``year_source: "arxiv"``). References link to corpus papers with the
linker of :mod:`mustcite.extract.link` under time order (a candidate's year <= the citing year).

Leakage guard (:class:`Guard`): a paper that is the same work as a full-text paper already
extracted (its corpus record or a version of it, or the same normalised title), or as a dev or test
query of a benchmark, is written under ``excluded/`` with the reasons in its ``.meta.json``
(``exclude``); the readers of an extraction folder (link, works, benchmark, training) never look
there.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import lzma
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema

from ..corpus.identifiers import normalize_arxiv
from ..corpus.records import normalize_title
from ..errors import DataMissingError, MustciteError
from ..io import atomic_write_json
from .bibtex import BibEntry, parse_bbl
from .records import Reference, validate_reference_list
from .runner import META_SUFFIX, SUMMARY, iter_reference_files

#: bump when the records written change (a rerun then rebuilds them)
IMPORT_VERSION = 1
#: the sub-folder of papers whose bibliography must not be used (see :class:`Guard`)
EXCLUDED_SUBDIR = "excluded"
#: the JSON Schema of the ``.meta.json`` sidecar
META_SCHEMA = "bibliography_meta.schema.json"
#: what the ``method`` field of the records says
METHOD = "bbl"
#: a corpus record's year is taken as the citing paper's when it lies this many years before to
#: this many after the arXiv id's year (a first arXiv version precedes its proceedings by up to a year
#: or two; a record further off is another paper with the same title)
YEAR_BEFORE, YEAR_AFTER = 1, 3
#: the venues whose record is preferred as a paper's conference version
CONFERENCES = ("NeurIPS", "ICML", "ICLR")


# ------------------------------------------------------------------------------- reading input

def open_text(path: Path):
    """A text handle of a plain, ``.xz`` or ``.gz`` file (UTF-8, bad bytes replaced)."""
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", errors="replace")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open("r", encoding="utf-8", errors="replace")


def read_papers(path: str | Path, bad: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, paper)`` of every well-formed line; a bad line (no JSON object, no ``id``,
    no ``bbl`` list of ``{file, text}``) is reported in ``bad`` as ``file:line: why`` and skipped."""
    path = Path(path)
    if not path.is_file():
        raise DataMissingError("bibliography file not found", path=path)
    try:
        with open_text(path) as fh:
            for ln, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                why = None
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    obj, why = None, f"malformed JSON: {exc.msg}"
                if why is None:
                    why = paper_problem(obj)
                if why:
                    bad.append(f"{path}:{ln}: {why}")
                    continue
                yield ln, obj
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise MustciteError(f"cannot read the file: {exc}", path=path) from None


def paper_problem(obj: Any) -> str | None:
    """Why a line's value is no citing paper, or None."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    if not isinstance(obj.get("id"), str) or not obj["id"].strip():
        return "missing field 'id'"
    bbl = obj.get("bbl")
    if not isinstance(bbl, list) or not bbl:
        return "missing field 'bbl' (a list of {file, text})"
    for i, b in enumerate(bbl):
        if not isinstance(b, dict) or not isinstance(b.get("text"), str):
            return f"field 'bbl[{i}].text' is not a string"
    if not isinstance(obj.get("title", ""), str):
        return "field 'title' is not a string"
    return None


def arxiv_year(arxiv_id: str) -> int | None:
    """The year of an arXiv id's first version: ``1706.03762`` -> 2017, ``cs/0112017`` -> 2001."""
    m = re.match(r"(\d{2})(\d{2})\.\d{4,5}", arxiv_id) or re.search(r"/(\d{2})(\d{2})\d{3}", arxiv_id)
    if not m:
        return None
    yy = int(m.group(1))
    return 2000 + yy if yy < 90 else 1900 + yy


def stem_of(paper_id: str) -> str:
    """The file name stem of a paper id (an arXiv id with its version: ``1706.03762v2``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", paper_id.strip())


# ------------------------------------------------------------------------------- references

def _reference(e: BibEntry, target: int) -> Reference:
    return Reference(target=target, title=e.title, year=e.year, cite=e.label(), raw=e.raw,
                     authors=list(e.authors), bibkey=e.key, doi=e.doi, arxiv=e.arxiv, url=e.url,
                     venue=e.venue or None)


def references_from_bbls(bbls: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The reference entries of a paper's ``.bbl`` files (in order; an item whose key an earlier
    file had is the same reference), the counts and the reader's messages."""
    refs: list[Reference] = []
    keys: set[str] = set()
    messages: list[str] = []
    items = no_year = repeated = 0
    for b in bbls:
        entries, msgs = parse_bbl(b.get("text") or "", str(b.get("file") or "x.bbl"))
        messages += msgs
        items += len(entries) + len(msgs)
        for e in entries:
            if e.key in keys:
                repeated += 1
                continue
            keys.add(e.key)
            if e.year is None:          # the reference-file schema needs a year (as the full-text path)
                no_year += 1
                continue
            refs.append(_reference(e, len(refs) + 1))
    stats = {"bbl_files": len(bbls), "n_raw_entries": items, "n_unreadable": len(messages),
             "n_repeated_keys": repeated, "n_dropped_no_year": no_year, "n_references": len(refs),
             "n_with_title": sum(1 for r in refs if r.title),
             "n_with_authors": sum(1 for r in refs if r.authors),
             "n_with_venue": sum(1 for r in refs if r.venue),
             "n_with_arxiv": sum(1 for r in refs if r.arxiv), "n_with_doi": sum(1 for r in refs if r.doi)}
    return [r.to_dict() for r in refs], stats, messages


# ------------------------------------------------------------------------------- the citing paper

@dataclass
class CitingMatch:
    paper_id: str | None             # the corpus record the paper is (a version of)
    by: str | None                   # "arxiv" | "title"
    year: int | None                 # the citing year
    year_source: str                 # "corpus" | "arxiv" | "none"
    venue: str = ""
    family: list[str] = field(default_factory=list)   # the record and its versions


class CitingLookup:
    """Corpus records of citing papers: by arXiv id, then normalised title; and their versions."""

    def __init__(self, corpus_dir: str | Path):
        import pyarrow.parquet as pq

        corpus_dir = Path(corpus_dir)
        papers = corpus_dir / "papers.parquet"
        if not papers.is_file():
            raise DataMissingError("corpus store not found", path=papers, hint="build it with `mustcite corpus build`")
        try:
            names = pq.read_schema(papers).names
            cols = [c for c in ("paper_id", "title", "title_norm", "year", "venue", "source_id", "source_ids",
                                "url", "pdf") if c in names]
            rows = pq.read_table(papers, columns=cols).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise MustciteError(f"cannot read corpus store: {exc}", path=papers) from None
        self.year: dict[str, int | None] = {}
        self.venue: dict[str, str] = {}
        self.by_title: dict[str, list[str]] = defaultdict(list)
        self.by_arxiv: dict[str, list[str]] = defaultdict(list)
        self.by_source: dict[str, str] = {}
        for r in rows:
            pid = r["paper_id"]
            self.year[pid], self.venue[pid] = r.get("year"), r.get("venue") or ""
            norm = r.get("title_norm") or normalize_title(r.get("title"))
            if norm:
                self.by_title[norm].append(pid)
            for sid in [r.get("source_id") or "", *(r.get("source_ids") or [])]:
                sid = str(sid)
                if sid.startswith("arxiv:"):
                    a = normalize_arxiv(sid.split(":", 1)[1])
                    if a:
                        self.by_arxiv[a].append(pid)
                if sid:
                    self.by_source.setdefault(sid.split(":")[-1], pid)
            for u in (r.get("url"), r.get("pdf")):
                if u and "arxiv.org" in u:
                    a = normalize_arxiv(u)
                    if a:
                        self.by_arxiv[a].append(pid)
        self.versions: dict[str, set[str]] = defaultdict(set)
        vpath = corpus_dir / "versions.parquet"
        if vpath.is_file():
            try:
                for v in pq.read_table(vpath, columns=["paper_id", "version_id"]).to_pylist():
                    self.versions[v["paper_id"]].add(v["version_id"])
                    self.versions[v["version_id"]].add(v["paper_id"])
            except Exception as exc:
                raise MustciteError(f"cannot read corpus versions: {exc}", path=vpath) from None

    def family(self, pid: str) -> list[str]:
        """The record and every record the corpus says is a version of it (transitively)."""
        seen, todo = {pid}, [pid]
        while todo:
            for v in self.versions.get(todo.pop(), ()):
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
        return sorted(seen)

    def _plausible(self, pid: str, ay: int | None) -> bool:
        y = self.year.get(pid)
        return ay is None or y is None or ay - YEAR_BEFORE <= y <= ay + YEAR_AFTER

    def _best(self, pids: list[str], ay: int | None) -> str | None:
        """The conference version among the records (and their versions) of about the arXiv year:
        NeurIPS/ICML/ICLR first, then the earliest year."""
        cands = {q for p in pids for q in self.family(p)}
        ok = [p for p in cands if self._plausible(p, ay) and self.year.get(p) is not None]
        if not ok:
            return None
        return min(ok, key=lambda p: (self.venue.get(p) not in CONFERENCES, self.year[p], p))

    def find(self, arxiv_id: str, title: str) -> CitingMatch:
        a = normalize_arxiv(arxiv_id)
        ay = arxiv_year(a or arxiv_id)
        pid, by = None, None
        if a and self.by_arxiv.get(a):
            pid, by = self._best(self.by_arxiv[a], None), "arxiv"
        if pid is None:
            norm = normalize_title(title)
            if norm and self.by_title.get(norm):
                pid, by = self._best(self.by_title[norm], ay), "title"
        if pid is None:
            return CitingMatch(None, None, ay, "arxiv" if ay else "none")
        return CitingMatch(pid, by, self.year[pid], "corpus", self.venue.get(pid, ""), self.family(pid))

    def find_extracted(self, stem: str, title: str) -> str | None:
        """The corpus record of an already extracted paper: by its file name (a source id such
        as an OpenReview id), else by its title."""
        if stem in self.by_source:
            return self.by_source[stem]
        hits = self.by_title.get(normalize_title(title), [])
        return hits[0] if hits else None


class Guard:
    """What must not be imported as a training citing paper: the works already extracted from full
    texts (one citing paper per work: the full text, with its contexts) and the dev and test queries
    of benchmarks (their bibliographies must never enter training)."""

    def __init__(self) -> None:
        self.ids: dict[str, set[str]] = defaultdict(set)       # corpus id -> reasons
        self.titles: dict[str, set[str]] = defaultdict(set)    # normalised title -> reasons
        self.sources: dict[str, int] = Counter()

    def add(self, reason: str, pids: list[str], title: str) -> None:
        for p in pids:
            self.ids[p].add(reason)
        norm = normalize_title(title)
        if norm:
            self.titles[norm].add(reason)
        self.sources[reason] += 1

    def add_fulltext(self, folder: str | Path, lookup: CitingLookup) -> None:
        folder = Path(folder)
        for stem, _ in iter_reference_files(folder):
            meta_path = folder / f"{stem}{META_SUFFIX}"
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                meta = {}
            title = str(meta.get("title") or "") if isinstance(meta, dict) else ""
            pid = lookup.find_extracted(stem, title)
            self.add("fulltext", lookup.family(pid) if pid else [], title)

    def add_benchmarks(self, folder: str | Path, lookup: CitingLookup) -> None:
        """The dev and test queries of every benchmark folder under ``folder``."""
        for qfile in sorted(Path(folder).glob("*/queries/*.jsonl")):
            split = qfile.stem
            if split not in ("dev", "test"):
                continue
            reason = f"benchmark:{qfile.parent.parent.name}:{split}"
            with qfile.open(encoding="utf-8") as fh:
                for ln, line in enumerate(fh, 1):
                    try:
                        q = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise MustciteError(f"malformed JSON: {exc.msg}", path=qfile, line=ln) from None
                    pid = q.get("id")
                    pids = lookup.family(pid) if isinstance(pid, str) and pid in lookup.year else \
                        ([pid] if isinstance(pid, str) else [])
                    self.add(reason, pids, str(q.get("title") or ""))

    def reasons(self, family: list[str], title: str) -> list[str]:
        got: set[str] = set()
        for p in family:
            got |= self.ids.get(p, set())
        got |= self.titles.get(normalize_title(title), set())
        return sorted(got)


# ------------------------------------------------------------------------------- one paper

def import_paper(paper: dict[str, Any], match: CitingMatch, exclude: list[str], *, source: str,
                 index: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The reference list and ``.meta.json`` of one citing paper (pure). With a title ``index``
    (:class:`mustcite.extract.link.TitleIndex`) the references are linked to corpus papers of the
    citing year or earlier."""
    refs, stats, messages = references_from_bbls(paper["bbl"])
    if index is not None:
        from .link import link_references
        refs = link_references(refs, index, match.year)
    validate_reference_list(refs, path=source)
    status = "ok" if refs else "failed"
    failure_modes = [] if refs else ["no_references"]
    meta = {
        "paper": stem_of(paper["id"]), "extractor_version": IMPORT_VERSION, "method": METHOD,
        "contexts": False, "title": str(paper.get("title") or "").strip(),
        "abstract": str(paper.get("abstract") or "").strip(), "year": match.year,
        "year_source": match.year_source, "venue": match.venue, "arxiv": normalize_arxiv(paper["id"]),
        "arxiv_year": arxiv_year(normalize_arxiv(paper["id"]) or paper["id"]),
        "corpus_paper_id": match.paper_id, "corpus_link_by": match.by, "corpus_versions": match.family,
        "exclude": exclude, "source_path": source, "bbl_files": [str(b.get("file") or "") for b in paper["bbl"]],
        "status": status, "failure_modes": failure_modes, "messages": messages[:50],
        "stats": {**stats, "n_contexts": 0, "mentions_total": 0,
                  "n_linked": sum(1 for r in refs if r.get("paper_id"))},
    }
    validate_meta(meta, path=source)
    return refs, meta


@lru_cache(maxsize=1)
def _meta_validator():
    schema = json.loads(resources.files("mustcite.schemas").joinpath(META_SCHEMA).read_text())
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"   # the same keywords, a draft it compiles
    return fastjsonschema.compile(schema)


def validate_meta(meta: dict[str, Any], *, path: str | Path = "<memory>") -> None:
    """Raise MustciteError when a sidecar breaks ``bibliography_meta.schema.json``."""
    try:
        _meta_validator()(meta)
    except fastjsonschema.JsonSchemaException as exc:
        raise MustciteError(f"does not follow the bibliography sidecar schema: {exc.message}", path=path) from None


_JOB: dict[str, Any] = {}


def _import_job(item: tuple[int, dict[str, Any], CitingMatch, list[str]]) -> dict[str, Any]:
    ln, paper, match, exclude = item
    out: Path = _JOB["out"]
    source = f"{_JOB['source']}:{ln}"
    stem = stem_of(paper["id"])
    where = out / EXCLUDED_SUBDIR if exclude else out
    try:
        refs, meta = import_paper(paper, match, exclude, source=source, index=_JOB.get("index"))
    except MustciteError as exc:        # never a traceback: the paper is reported
        return {"paper": stem, "status": "failed", "error": str(exc), "line": ln}
    if meta["status"] != "failed":       # as the full-text path: a failed paper has no reference file
        atomic_write_json(where / f"{stem}.json", refs, indent=None)
    atomic_write_json(where / f"{stem}{META_SUFFIX}", meta)
    s = meta["stats"]
    return {"paper": stem, "line": ln, "status": meta["status"], "excluded": exclude, "year": meta["year"],
            "year_source": meta["year_source"], "arxiv_year": meta["arxiv_year"],
            "corpus_link_by": meta["corpus_link_by"], **{k: s[k] for k in (
                "bbl_files", "n_raw_entries", "n_unreadable", "n_dropped_no_year", "n_references", "n_with_title",
                "n_with_authors", "n_with_venue", "n_with_arxiv", "n_with_doi", "n_linked")}}


# ------------------------------------------------------------------------------- a whole file

@dataclass
class ImportSummary:
    source: str
    out: str
    papers: int
    bad_lines: list[str]
    written: int
    excluded: dict[str, int]
    failed: int
    items: int
    references: int
    linked: int
    year_source: dict[str, int]
    corpus_link_by: dict[str, int]
    by_arxiv_year: dict[str, dict[str, int]]
    by_citing_year: dict[str, dict[str, int]]
    elapsed_s: float
    cached: bool = False
    inputs_key: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _stat_key(path: Path) -> list[Any]:
    st = path.stat()
    return [str(path.resolve()), st.st_size, int(st.st_mtime)]


def inputs_key(source: Path, corpus_dir: Path, excluded: list[str]) -> str:
    """What the output depends on: the input file, the corpus, which papers the guard excludes (so
    full texts or benchmark queries that exclude no other paper keep the output) and this
    importer's version."""
    parts: list[Any] = [IMPORT_VERSION, _stat_key(source)]
    for f in ("papers.parquet", "versions.parquet"):
        if (corpus_dir / f).is_file():
            parts.append(_stat_key(corpus_dir / f))
    parts.append(sorted(excluded))
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def _update_reasons(folder: Path, excluded: dict[str, list[str]]) -> None:
    """Write the current reasons into the sidecars of excluded papers (a benchmark built since the
    import adds one to papers already excluded as full texts)."""
    for stem, why in excluded.items():
        path = folder / f"{stem}{META_SUFFIX}"
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if meta.get("exclude") != why:
            meta["exclude"] = why
            atomic_write_json(path, meta)


def _band_counts(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        y = r.get(key)
        c = out[str(y) if y is not None else "unknown"]
        c["papers"] += 1
        c["excluded"] += bool(r.get("excluded"))
        for k in ("n_raw_entries", "n_references", "n_with_title", "n_with_authors", "n_linked"):
            c[k[2:] if k.startswith("n_") else k] += r.get(k, 0)
    return {k: dict(out[k]) for k in sorted(out)}


def import_bibliographies(source: str | Path, out_dir: str | Path, corpus_dir: str | Path, *,
                          fulltext: list[str | Path] = (), benchmarks: str | Path | None = None,
                          link: bool = True, workers: int | None = None, progress: bool = True,
                          force: bool = False, engine: Any = None) -> ImportSummary:
    """Import every paper of ``source`` into ``out_dir`` (see the module's docstring); skipped
    when ``out_dir/summary.json`` records the same inputs (:func:`inputs_key`; unless ``force``)."""
    from ..parallel import pmap

    source, out, corpus_dir = Path(source), Path(out_dir), Path(corpus_dir)
    ft = [Path(d) for d in fulltext if Path(d).is_dir()]
    bench = Path(benchmarks) if benchmarks is not None else None
    if not source.is_file():
        raise DataMissingError("bibliography file not found", path=source)
    t0 = time.perf_counter()
    lookup = CitingLookup(corpus_dir)
    guard = Guard()
    for d in ft:
        guard.add_fulltext(d, lookup)
    if bench is not None and bench.is_dir():
        guard.add_benchmarks(bench, lookup)
    bad: list[str] = []
    items = []
    for ln, p in read_papers(source, bad):
        m = lookup.find(p["id"], str(p.get("title") or ""))
        items.append((ln, p, m, guard.reasons(m.family, str(p.get("title") or ""))))
    excluded = {stem_of(p["id"]): why for _, p, _, why in items if why}
    key = inputs_key(source, corpus_dir, sorted(excluded))
    prev = out / SUMMARY
    if not force and prev.is_file():
        try:
            doc = json.loads(prev.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
        if isinstance(doc, dict) and doc.get("import", {}).get("inputs_key") == key:
            s = ImportSummary(**{k: v for k, v in doc["import"].items() if k in ImportSummary.__dataclass_fields__})
            s.cached = True
            _update_reasons(out / EXCLUDED_SUBDIR, excluded)
            return s
    (out / EXCLUDED_SUBDIR).mkdir(parents=True, exist_ok=True)
    # stale records of an earlier run (a paper now excluded, or no longer in the input) go first
    for folder in (out, out / EXCLUDED_SUBDIR):
        for path in list(folder.glob("*.json")):
            if path.name != SUMMARY:
                path.unlink(missing_ok=True)
    _JOB.clear()
    _JOB.update(out=out, source=str(source))
    if link:
        from .link import load_index
        _JOB["index"] = load_index(corpus_dir / "papers.parquet")   # built once; forked workers share it
    rows = list(pmap(_import_job, items, workers=workers, desc="import bibliographies", progress=progress,
                     engine=engine, unit="paper", chunksize=8))
    errors = [r for r in rows if r.get("error")]
    ok = [r for r in rows if not r.get("error")]
    excluded: Counter = Counter()
    for r in ok:
        for why in r.get("excluded") or []:
            excluded[why.split(":")[0] if why == "fulltext" else why] += 1
        excluded["papers"] += bool(r.get("excluded"))
    s = ImportSummary(
        source=str(source), out=str(out), papers=len(items) + len(bad), bad_lines=bad[:100],
        written=sum(1 for r in ok if not r.get("excluded") and r["status"] == "ok"), excluded=dict(excluded),
        failed=sum(1 for r in rows if r["status"] == "failed"), items=sum(r.get("n_raw_entries", 0) for r in ok),
        references=sum(r.get("n_references", 0) for r in ok), linked=sum(r.get("n_linked", 0) for r in ok),
        year_source=dict(Counter(r["year_source"] for r in ok)),
        corpus_link_by=dict(Counter(str(r["corpus_link_by"]) for r in ok)),
        by_arxiv_year=_band_counts(ok, "arxiv_year"), by_citing_year=_band_counts(ok, "year"),
        elapsed_s=round(time.perf_counter() - t0, 2), inputs_key=key, errors=errors[:50])
    atomic_write_json(out / SUMMARY, {"import": s.to_dict(), "papers": rows})
    _JOB.clear()
    return s

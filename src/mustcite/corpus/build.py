"""``build_corpus``: import every paper list and ML Anthology, merge them record by record, write the store.

Steps: list ``proceedings/*/*.jsonl.gz`` -> :func:`import_file` each (errors name file:line) ->
``anthology/records/*.jsonl.gz`` -> :func:`import_anthology_file` each -> count skips (unknown
venue, no year) with a warning naming file and line -> :func:`dedup` (one paper per group of
records that share an identifier or a venue-year and title; ancillary-track groups set apart) ->
:func:`merge_same_work` -> :func:`version_links`. Written, each atomically:

* ``papers.parquet``: the corpus, the main tracks of the 15 venues (what the benchmark, the
  labels and the recommender read);
* ``side_tracks.parquet``: every other record (workshops, Findings, Datasets & Benchmarks,
  journals and conferences outside the 15), with its ``venue`` and ``track`` (what check-refs and
  the catalogue of cited works read besides the corpus);
* ``versions.parquet``: the version links between the two (:mod:`.versions`);
* ``disagreements.parquet``: where the sources of one paper disagree on title, year or authors;
* ``build.json``: what was read, merged, dropped and written.

Nothing is written until every input has been read, so a failed build leaves the previous store as
it was.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..config import Workspace
from ..errors import DataMissingError
from ..io import atomic_write_json, sha256_file
from .anthology import SOURCE as ANTHOLOGY_SOURCE
from .anthology import import_anthology_file, list_anthology_files
from .dedup import dedup, merge_same_work
from .importers import (
    COLLECTED_PREFIX,
    ImportedRecord,
    import_collected,
    import_file,
    list_collected_files,
    list_source_files,
)
from .records import VENUES, normalize_title
from .store import (
    BUILD_FILE,
    DISAGREEMENTS_FILE,
    SIDE_TRACKS_FILE,
    VERSIONS_FILE,
    corpus_dir,
    disagreements_table,
    write_papers,
    write_table,
)
from .versions import link_kinds, version_links, versions_table

log = logging.getLogger("mustcite.corpus")

#: at most this many skip warnings are logged per file (all are counted)
MAX_WARNINGS_PER_FILE = 5


@dataclass
class BuildReport:
    """What a build read, dropped, merged and wrote (saved as ``build.json``)."""

    total: int = 0
    with_abstract: int = 0
    duplicates_merged: int = 0
    #: later versions of a work (same title and authors, another venue or year) folded into its first
    same_work_merged: int = 0
    multi_source_papers: int = 0
    records_read: int = 0
    records_main_track: int = 0
    #: papers of ancillary tracks, written apart (``side_tracks.parquet``)
    side_tracks: int = 0
    #: side records by venue and track ("TMLR/journal" -> n)
    side_by_venue_track: dict[str, int] = field(default_factory=dict)
    #: corpus papers by the sources that list them ("mlanthology+paperlists" -> n)
    papers_by_sources: dict[str, int] = field(default_factory=dict)
    #: corpus papers whose abstract came from each source
    abstract_sources: dict[str, int] = field(default_factory=dict)
    #: anthology records of a main conference that share their DOI with a workshop record (read as
    #: the workshop paper)
    workshop_refiled: int = 0
    #: version links, each counted once, by the kinds of its two ends ("conference+workshop")
    version_links: dict[str, int] = field(default_factory=dict)
    #: disagreements between sources: field -> kind -> count
    disagreements: dict[str, dict[str, int]] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)     # rel path -> counts, sha256
    sources: dict[str, dict[str, int]] = field(default_factory=dict)   # folder -> counts
    skipped: dict[str, int] = field(default_factory=dict)              # reason -> count
    skipped_examples: list[str] = field(default_factory=list)
    dropped_tracks: dict[str, dict[str, int]] = field(default_factory=dict)  # source -> track -> n
    dropped_linked: dict[str, int] = field(default_factory=dict)
    unconfirmed: dict[str, int] = field(default_factory=dict)          # source -> records no other source lists
    by_venue_year: list[dict[str, Any]] = field(default_factory=list)
    #: records of ``mustcite collect`` imported with the lists (empty when none): records, main_track,
    #: new, merged, abstracts_filled, dropped_track, in_corpus, dir, files
    collected: dict[str, Any] = field(default_factory=dict)
    data_dir: str = ""
    store: str = ""
    seconds: float = 0.0
    built_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BuildReport:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def _by_venue_year(papers) -> list[dict[str, Any]]:
    c: Counter = Counter()
    a: Counter = Counter()
    for p in papers:
        c[(p.venue, p.year)] += 1
        a[(p.venue, p.year)] += p.has_abstract
    order = {v: i for i, v in enumerate(VENUES)}
    return [{"venue": v, "year": y, "papers": c[(v, y)], "with_abstract": a[(v, y)]}
            for v, y in sorted(c, key=lambda k: (order.get(k[0], 99), k[1] or 0))]


def import_all(data_dir: Path, report: BuildReport, *, progress: bool = False,
               with_anthology: bool = True) -> list[ImportedRecord]:
    """Read every source file (the paper lists, then ML Anthology unless ``with_anthology`` is
    false); fill the per-file/per-source counts and skips of ``report``."""
    proc = data_dir / "proceedings"
    files = list_source_files(proc)
    if not files:
        raise DataMissingError(f"no paper lists (*/*.jsonl.gz) under {proc}",
                               hint="`mustcite data check proceedings` says what is missing and where to get it")
    anthology = set(list_anthology_files(data_dir)) if with_anthology else set()
    kept: list[ImportedRecord] = []
    skipped: Counter = Counter()
    for path in tqdm([*files, *sorted(anthology)], desc="import", unit="file", disable=not progress):
        n = n_abs = n_skip = 0
        reader = import_anthology_file(path, data_dir) if path in anthology else import_file(path, data_dir)
        for rec in reader:
            n += 1
            n_abs += rec.has_abstract
            if rec.skip:
                n_skip += 1
                skipped[rec.skip] += 1
                msg = f"{rec.file}:{rec.line}: skipped: {rec.skip}"
                if len(report.skipped_examples) < 20:
                    report.skipped_examples.append(msg)
                if n_skip <= MAX_WARNINGS_PER_FILE:
                    log.warning(msg)
                continue
            kept.append(rec)
        if n_skip > MAX_WARNINGS_PER_FILE:
            log.warning("%s: %d records skipped in all", path.relative_to(data_dir), n_skip)
        rel = str(path.relative_to(data_dir))
        report.files[rel] = {"records": n, "with_abstract": n_abs, "skipped": n_skip,
                             "sha256": sha256_file(path)}
        src = report.sources.setdefault(ANTHOLOGY_SOURCE if path in anthology else path.parent.name,
                                        {"files": 0, "records": 0, "with_abstract": 0, "skipped": 0})
        src["files"] += 1
        src["records"] += n
        src["with_abstract"] += n_abs
        src["skipped"] += n_skip
        report.records_read += n
    report.skipped = dict(sorted(skipped.items()))
    return kept


def refile_workshop_copies(records: list[ImportedRecord]) -> int:
    """Read an anthology main-conference record that shares its DOI with a workshop record of the
    same venue as that workshop paper (ECCV 2010-2016 and CVPR 2004-2005 list workshop papers
    twice); returns how many were refiled."""
    workshop_dois = {(r.venue, k) for r in records if r.source == ANTHOLOGY_SOURCE and r.track == "workshop"
                     for k in r.id_keys if k.startswith("doi:")}
    n = 0
    for r in records:
        if r.source == ANTHOLOGY_SOURCE and r.track != "workshop" and any(
                (r.venue, k) in workshop_dois for k in r.id_keys if k.startswith("doi:")):
            r.track, r.main_track, r.group = "workshop", False, f"{r.venue} workshops"
            n += 1
    return n


def _keys(r: ImportedRecord) -> list[tuple]:
    keys = [(r.venue, r.year, "t", normalize_title(r.title))]
    if r.openreview_id:
        keys.append((r.venue, r.year, "or", r.openreview_id))
    if r.anthology_id:
        keys.append((r.venue, r.year, "acl", r.anthology_id))
    return keys


class ListedPapers:
    """The paper lists' records by venue-year + title / OpenReview id / Anthology id, to say of a
    collected record whether it is new, merges with a listed paper, and fills a missing abstract."""

    def __init__(self, lists: list[ImportedRecord]):
        self._abstract: dict[tuple, bool] = {}
        for r in lists:
            for k in _keys(r):
                self._abstract[k] = self._abstract.get(k, False) or r.has_abstract

    def listed_abstract(self, rec: ImportedRecord) -> bool | None:
        """None when ``rec`` is new; else whether the listed paper it merges with has an abstract
        (if not and ``rec`` has one, collecting fills it)."""
        hits = [k for k in _keys(rec) if k in self._abstract]
        return any(self._abstract[k] for k in hits) if hits else None


def default_collected_dir(work: str | Path | Workspace | None) -> Path:
    ws = work if isinstance(work, Workspace) else Workspace.resolve(work)
    return ws.root / "collect" / "records"


def import_collected_dir(records_dir: Path, report: BuildReport, lists: list[ImportedRecord]) -> list[ImportedRecord]:
    """Read every collector record file; count, against the paper lists, which records are new,
    which merge with a listed paper and how many of those bring an abstract the lists lack."""
    files = list_collected_files(records_dir)
    listed = ListedPapers(lists)
    out: list[ImportedRecord] = []
    st = {"dir": str(records_dir), "files": len(files), "records": 0, "main_track": 0, "skipped": 0,
          "new": 0, "merged": 0, "abstracts_filled": 0, "with_abstract": 0, "dropped_track": 0, "in_corpus": 0}
    for path in files:
        for rec in import_collected(path, records_dir):
            st["records"] += 1
            if rec.skip:
                st["skipped"] += 1
                continue
            out.append(rec)
            if not rec.main_track:
                st["dropped_track"] += 1
                continue
            st["main_track"] += 1
            st["with_abstract"] += rec.has_abstract
            had = listed.listed_abstract(rec)
            if had is None:
                st["new"] += 1
                continue
            st["merged"] += 1
            st["abstracts_filled"] += rec.has_abstract and not had
    report.collected = st
    return out


def build_corpus(data_dir: str | Path, work: str | Path | Workspace | None = None, *,
                 progress: bool = False, collected: str | Path | bool | None = None,
                 anthology: bool = True) -> BuildReport:
    """Build ``<work>/corpus/`` (see the module doc) from ``<data_dir>/proceedings`` and, unless
    ``anthology`` is false, ``<data_dir>/anthology``.

    ``collected``: a folder of ``mustcite collect`` record files to import with the lists; None
    (default) uses ``<work>/collect/records`` when that folder exists; False imports none.
    """
    t0 = time.perf_counter()
    data_dir = Path(data_dir).resolve()
    report = BuildReport(data_dir=str(data_dir))
    records = import_all(data_dir, report, progress=progress, with_anthology=anthology)
    report.workshop_refiled = refile_workshop_copies(records)
    if collected is None:
        cdir = default_collected_dir(work)
        cdir = cdir if cdir.is_dir() else None
    elif collected is False:
        cdir = None
    else:
        cdir = Path(collected)
        if not cdir.is_dir():
            raise DataMissingError(f"collected records folder {cdir} does not exist",
                                   hint="`mustcite collect VENUE YEAR` writes <work>/collect/records")
    if cdir is not None:
        records += import_collected_dir(cdir.resolve(), report, records)
    report.records_main_track = sum(r.main_track for r in records)
    result = dedup(records)
    del records                      # the merged papers hold what is kept; free the rest early
    folded: list = []
    papers, report.same_work_merged = merge_same_work(result.papers, folded)
    order = {v: i for i, v in enumerate(VENUES)}
    papers.sort(key=lambda p: (order.get(p.venue, 99), p.year or 0, p.paper_id))
    report.total = len(papers)
    report.with_abstract = sum(p.has_abstract for p in papers)
    report.duplicates_merged = result.duplicates_merged
    report.multi_source_papers = result.groups_multi_source
    dropped: dict[str, dict[str, int]] = {}
    for (src, track), n in sorted(result.dropped_track.items()):
        dropped.setdefault(src, {})[track] = n
    report.dropped_tracks = dropped
    report.dropped_linked = dict(sorted(result.dropped_linked.items()))
    report.unconfirmed = dict(sorted(result.unconfirmed.items()))
    report.by_venue_year = _by_venue_year(papers)
    if report.collected:
        report.collected["in_corpus"] = sum(
            any(ref.startswith(COLLECTED_PREFIX + "-") for ref in p.source_ids) for p in papers)

    report.papers_by_sources = dict(Counter("+".join(sorted({r.split(":", 1)[0] for r in p.source_ids
                                                              if not r.startswith("paper:")}))
                                            for p in papers).most_common())
    report.abstract_sources = dict(Counter(p.field_sources.get("abstract", "") for p in papers
                                           if p.has_abstract).most_common())
    report.side_by_venue_track = dict(Counter(f"{p.venue}/{p.track or 'ancillary'}"
                                              for p in result.side_track).most_common())
    links = version_links(papers, result.side_track, folded)
    report.version_links = link_kinds(links)
    dis: dict[str, Counter] = {}
    for d in result.disagreements:
        dis.setdefault(d["field"], Counter())[d["kind"]] += 1
    report.disagreements = {k: dict(v.most_common()) for k, v in sorted(dis.items())}

    out = corpus_dir(work)
    report.store = str(out / "papers.parquet")
    write_papers(papers, out / "papers.parquet")
    write_papers(result.side_track, out / SIDE_TRACKS_FILE)
    write_table(versions_table(links), out / VERSIONS_FILE)
    write_table(disagreements_table(result.disagreements), out / DISAGREEMENTS_FILE)
    report.side_tracks = len(result.side_track)
    report.built_at = datetime.now(UTC).isoformat(timespec="seconds")
    report.seconds = round(time.perf_counter() - t0, 2)
    atomic_write_json(out / BUILD_FILE, report.to_dict())
    return report

"""The look-up index over the corpus and the catalogue of cited works, built once and cached.

:func:`load_index` returns a :class:`RefIndex`: the corpus titles in the linker's
:class:`~mustcite.extract.link.TitleIndex` (exact, blocked fuzzy and subtitle look-ups, identifier
keys from the records' URLs: ACL Anthology, OpenReview, NeurIPS proceedings and PMLR ids), the
fields each check compares (title, authors, venue, year, the other venues of the same work), the
catalogue of cited works (``works.parquet``: title, authors, year, venue text, DOI/arXiv ids) in a
second TitleIndex, the side records the corpus leaves out (``side_tracks.parquet``: workshops, demos,
Findings, Datasets & Benchmarks of the 15 venues, and the venues outside them: TMLR, WACV, CoRL,
MLJ, ...) in a third with their fields, the version links between records of both files
(``versions.parquet``), and the venue-years the corpus, and the side records, hold completely.

**Identifiers.** Both title indexes carry the records' identifier keys (URL ids and DOIs; a store
written before the ``doi`` column existed has URL ids only). A ``nips:`` key names a paper only
with its year (:func:`~mustcite.corpus.identifiers.year_scoped`): :meth:`RefIndex.id_rows` gives
only the records of the year asked for.

The index is pickled under ``<cache>/refcheck/`` with a name made of the size and modification
time of ``papers.parquet`` and ``works.parquet``: a rebuilt corpus or catalogue gives a new name,
so a stale index is never read. Loading it takes well under a second; nothing here imports torch
or loads the recommender.

**Which venue-years are held completely** is measured (:mod:`.coverage`: an official count, the
proceedings' own list, or two lists that agree; one list measures nothing) and must also pass the
neighbour test of :func:`complete_venue_years`: a venue-year passes it
when the corpus has at least :data:`MIN_COMPLETE` papers of it and at least
:data:`NEIGHBOUR_SHARE` of the papers of the largest of the :data:`NEIGHBOUR_YEARS` years before it
and of the year after (a full list never holds under half of a recent year's, nor of the next one:
venues grow, by less than twice a year, so later years are not compared: ICLR 2022's 1,095 papers
are all of them, though 2025 has 3,721). A year read only from a partial list (orals, a hand-picked
sample, a lost file) fails the test and its entries are answered ``unverifiable``, never
``not_found``. A venue-year that is not in the corpus at all (AAAI 2023-2025, ACL 2025, ...) is not
held, nor is any year of a journal (:data:`NOT_CLOSED`: JMLR papers are dated by their volume or
their publication, and a volume spans years). The same rule runs on the side records, per (venue,
track): :meth:`RefIndex.side_is_complete` says whether a venue outside the 15 (its main track or
journal) is held completely in a year (JAIR 2020, WACV 2023, TMLR 2024). The rule is applied when
the index is loaded, so a cached index follows it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from ..config import Workspace
from ..corpus.identifiers import year_scoped
from ..corpus.records import surname_key
from ..corpus.store import DISAGREEMENTS_FILE, SIDE_TRACKS_FILE, VERSIONS_FILE
from ..errors import DataMissingError, MustciteError
from ..extract.link import TitleIndex, identifier_keys
from ..io import load_pickle, remove_stale_temps, write_pickle_cache
from .coverage import OFFICIAL_COUNTS, Coverage, list_name, measure
from .person_names import name_tokens
from .venue import track_kind, venue_key
from .volumes import volume_years

#: a venue-year with fewer corpus papers is never held completely
MIN_COMPLETE = 20
#: ... nor one with fewer than this share of the papers of its largest nearby year
NEIGHBOUR_SHARE = 0.5
NEIGHBOUR_YEARS = 3
#: a venue-year whose lists of three authors or more are in alphabetical order this often is one
#: whose source sorted them (chance: one in six for three names)
ALPHABETISED_SHARE = 0.5
#: a DOI registrant no record has is only suspect when the data has DOIs of this many registrants
MIN_REGISTRANTS = 20
#: arXiv's DOI registrant (its DOIs are of no proceedings' series)
ARXIV_DOI = "10.48550"
#: venues no year of which is a closed list (journals whose papers are dated by volume or publication)
NOT_CLOSED = frozenset({"JMLR"})
#: a venue-year's DOIs accuse only when this many are confirmed by a title witness (and none contradicted)
MIN_DOI_WITNESSES = 3
#: a witness title has at least this many words
MIN_WITNESS_WORDS = 4
#: bump when the pickled layout changes
INDEX_VERSION = 10
#: the tracks of a side venue that make up its proceedings or journal (completeness is read on these)
MAIN_TRACKS = ("main", "journal")


@dataclass
class Record:
    """A corpus paper or a catalogue work as the checks see it."""

    paper_id: str
    title: str
    authors: list[str]
    venue: str
    year: int | None
    source: str = "corpus"          # "corpus" | "catalogue" | "side track"
    also: list[tuple[str, int]] = field(default_factory=list)   # other (venue, year) of the same work
    url: str = ""
    identifiers: list[str] = field(default_factory=list)
    track: str = ""                 # a side record's track ("workshop", "journal", "main", ...)

    def venue_years(self) -> list[tuple[str, int | None]]:
        return [(self.venue, self.year), *self.also]

    def to_json(self) -> dict[str, Any]:
        d = {"title": self.title, "authors": list(self.authors), "year": self.year, "venue": self.venue,
             "paper_id": self.paper_id, "source": self.source}
        if self.also:
            d["also_published"] = [f"{v} {y}" for v, y in self.also]
        if self.url:
            d["url"] = self.url
        if self.track:
            d["track"] = self.track
        return d


def doi_series(doi: str) -> str | None:
    """A DOI without its last dotted part (``10.1609/aaai.v36i10.20969`` -> ``10.1609/aaai.v36i10``);
    None for one without a dot after the registrant."""
    doi = doi.lower().strip()
    head, _, tail = doi.partition("/")
    return f"{head}/{tail.rsplit('.', 1)[0]}" if "." in tail and head != ARXIV_DOI else None


def _doi_stem(series: str) -> str:
    """A series' publisher part (``10.1609/aaai.v36i10`` -> ``10.1609/aaai``, ``10.18653/v1/2022.acl-long``
    -> ``10.18653/v1/2022``)."""
    return series.split(".", 2)[0] + "." + series.split(".", 2)[1] if series.count(".") >= 2 else series


def _sorted_by_surname(names: list[str]) -> bool:
    keys = [surname_key(n) for n in names]
    return keys == sorted(keys)


def complete_venue_years(counts: dict[tuple[str, int], int]) -> set[tuple[str, int]]:
    """The venue-years held completely, by the rule in the module doc."""
    by_venue: dict[str, dict[int, int]] = defaultdict(dict)
    for (v, y), n in counts.items():
        if y is not None:
            by_venue[v][int(y)] = n
    out = set()
    for v, years in by_venue.items():
        if (v[0] if isinstance(v, tuple) else v) in NOT_CLOSED:
            continue
        for y, n in years.items():
            near = [m for yy, m in years.items() if y - NEIGHBOUR_YEARS <= yy < y or yy == y + 1]
            if n >= MIN_COMPLETE and (not near or n >= NEIGHBOUR_SHARE * max(near)):
                out.add((v, y))
    return out


def _parse_also(items: list[str] | None) -> list[tuple[str, int]]:
    out = []
    for s in items or ():
        bits = str(s).rsplit(" ", 1)
        if len(bits) == 2 and bits[1].isdigit():
            out.append((bits[0], int(bits[1])))
    return out


@dataclass
class RefIndex:
    titles: TitleIndex
    title: list[str]
    authors: list[list[str]]
    venue: list[str]
    year: list[int | None]
    also: list[list[tuple[str, int]]]
    url: list[str]
    counts: dict[tuple[str, int], int]
    complete: set[tuple[str, int]]
    works: TitleIndex | None = None
    work_fields: dict[str, list] = field(default_factory=dict)
    #: (venue, year) -> corpus rows (the other venues of a work included)
    by_venue_year: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    #: papers of the ancillary tracks the corpus leaves out (``side_tracks.parquet``), when built
    side: TitleIndex | None = None
    side_fields: dict[str, list] = field(default_factory=dict)
    #: corpus DOIs (normalised, "" when none), aligned with ``title``
    doi: list[str] = field(default_factory=list)
    #: ((side venue, track), year) -> side records; the side venue-years held completely
    side_counts: dict[tuple[tuple[str, str], int], int] = field(default_factory=dict)
    side_complete: set[tuple[tuple[str, str], int]] = field(default_factory=set)
    #: (side venue, year) -> side rows
    side_by_venue_year: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    #: paper_id -> the paper_ids of its other versions (``versions.parquet``; corpus and side records)
    versions: dict[str, list[str]] = field(default_factory=dict)
    #: the lists each venue-year was read from: (venue, year) -> ({list: papers}, papers in both of
    #: the two largest); the same for each (side venue, track kind) and year
    lists: dict[tuple[str, int], tuple[dict[str, int], int]] = field(default_factory=dict)
    track_lists: dict[tuple[str, str, int], tuple[dict[str, int], int]] = field(default_factory=dict)
    side_lists: dict = field(default_factory=dict)
    #: the measured completeness of each venue-year (:mod:`.coverage`), and of each side track
    coverage: dict[tuple[str, int], Coverage] = field(default_factory=dict)
    track_coverage: dict[tuple[str, str, int], Coverage] = field(default_factory=dict)
    #: how many lists hold each corpus paper (a second list is a second witness of its fields)
    n_lists: list[int] = field(default_factory=list)
    #: paper_id -> field -> [(source, value)]: where the sources of a corpus paper disagree
    disputes: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)
    #: the consensus of citing papers (:mod:`.consensus`), when reference lists are given to :func:`load_index`
    consensus: Any = None
    #: (venue, year) -> the later year its proceedings volume is dated (:mod:`.volumes`: UAI 2019 -> 2020)
    volume_years: dict[tuple[str, int], int] = field(default_factory=dict)
    #: (venue, year) -> (DOIs confirmed, DOIs contradicted) by a title witness (:meth:`dois_witnessed`)
    doi_checks: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    _row_of: dict[str, int] = field(default_factory=dict, repr=False)
    _side_row: dict[str, int] = field(default_factory=dict, repr=False)
    _work_row: dict[str, int] = field(default_factory=dict, repr=False)
    _surnames: dict[tuple[str, int], dict[str, list[int]]] = field(default_factory=dict, repr=False)

    # ---- records ---------------------------------------------------------------------------

    def record(self, row: int) -> Record:
        keys = identifier_keys(url=self.url[row], doi=self.doi[row] if self.doi else None)
        return Record(self.titles.ids[row], self.title[row], list(self.authors[row]), self.venue[row], self.year[row],
                      "corpus", list(self.also[row]), self.url[row], keys)

    def row_of(self, paper_id: str) -> int | None:
        if not self._row_of:
            self._row_of = {p: i for i, p in enumerate(self.titles.ids)}
        return self._row_of.get(paper_id)

    def work(self, row: int) -> Record:
        f = self.work_fields
        return Record(self.works.ids[row], f["title"][row], list(f["authors"][row] or []), f["venue"][row] or "",
                      f["year"][row], "catalogue", [], "", list(f["identifiers"][row] or []))

    def side_record(self, row: int) -> Record:
        f = self.side_fields
        keys = identifier_keys(url=f["url"][row], doi=f["doi"][row] if "doi" in f else None)
        return Record(self.side.ids[row], f["title"][row], list(f["authors"][row] or []), f["venue"][row] or "",
                      f["year"][row], "side track", [], f["url"][row] or "", keys, f["track"][row] or "ancillary")

    def side_row(self, paper_id: str) -> int | None:
        if not self._side_row and self.side is not None:
            self._side_row = {p: i for i, p in enumerate(self.side.ids)}
        return self._side_row.get(paper_id)

    def work_citing(self, row: int) -> int:
        return int(self.work_fields["n_citing"][row] or 0)

    def work_kind(self, row: int) -> str:
        return self.work_fields["kind"][row] or ""

    def work_row(self, work_id: str) -> int | None:
        if not self._work_row and self.works is not None:
            self._work_row = {p: i for i, p in enumerate(self.works.ids)}
        return self._work_row.get(work_id)

    def id_rows(self, key: str, year: int | None, *, side: bool = False) -> list[int]:
        """Rows (corpus, or side with ``side``) carrying identifier ``key``; for a year-scoped key
        (``nips:``) only those of ``year`` (none when ``year`` is None)."""
        t = self.side if side else self.titles
        rows = t.id_rows.get(key, []) if t is not None else []
        if not rows or not year_scoped(key):
            return list(rows)
        if year is None:
            return []
        return [r for r in rows if year in self._years_of(r, side)]

    def _years_of(self, row: int, side: bool) -> set[int | None]:
        if side:
            return {self.side_fields["year"][row]}
        return {self.year[row], *(y for _, y in self.also[row])}

    def version_rows(self, paper_id: str) -> tuple[list[int], list[int]]:
        """(corpus rows, side rows) of the other versions of ``paper_id``."""
        corpus, side = [], []
        for v in self.versions.get(paper_id, ()):
            r = self.row_of(v)
            if r is not None:
                corpus.append(r)
            elif (r := self.side_row(v)) is not None:
                side.append(r)
        return corpus, side

    def _doi_sets(self) -> dict[str, set[str]]:
        """The DOI registrants (``10.1609``) of every record and catalogue work, and the series
        (``10.1609/aaai.v36i10``) and stems (``10.1609/aaai``) of the corpus papers' DOIs."""
        got = self.__dict__.get("_dois")
        if got is None:
            reg, series, stems = set(), set(), set()
            for d in self.doi:
                if d:
                    reg.add(d.split("/", 1)[0])
                    if (s := doi_series(d)) is not None:
                        series.add(s)
                        stems.add(_doi_stem(s))
            for d in self.side_fields.get("doi") or ():
                if d:
                    reg.add(d.lower().split("/", 1)[0])
            for ids in self.work_fields.get("identifiers") or ():
                reg.update(k[4:].split("/", 1)[0] for k in ids or () if k.startswith("doi:"))
            got = self.__dict__["_dois"] = {"registrants": reg, "series": series, "stems": stems}
        return got

    def doi_registrant_known(self, doi: str) -> bool:
        """Whether any record or catalogue work has a DOI of this registrant (``10.47281/...``: none);
        True for any when the data has DOIs of under :data:`MIN_REGISTRANTS` registrants (too few to tell)."""
        known = self._doi_sets()["registrants"]
        return len(known) < MIN_REGISTRANTS or doi.lower().split("/", 1)[0] in known

    def doi_untracked(self, doi: str | None) -> bool:
        """Whether a DOI is of a venue the corpus has DOIs of, but of a series none of its papers is in
        (``10.1609/aaai.v36i11``: a special track of AAAI 2022; ``10.18653/v1/2022.findings-acl``):
        a track the corpus does not hold."""
        s = doi_series(doi or "")
        sets = self._doi_sets()
        return s is not None and s not in sets["series"] and _doi_stem(s) in sets["stems"]

    def latest_year(self) -> int:
        """The latest year of any record (the data's present)."""
        got = self.__dict__.get("_latest")
        if got is None:
            years = [y for y in self.year if y is not None] + [y for y in self.side_fields.get("year") or () if y]
            got = self.__dict__["_latest"] = int(max(years, default=0))
        return got

    def venue_named(self, text: str) -> bool:
        """Whether any work of the catalogue of cited works or any side record names this venue
        (:func:`~.venue.venue_key`: a venue no citing paper names may not exist)."""
        keys = self.__dict__.get("_venue_keys")
        if keys is None:
            texts = {v for v in self.work_fields.get("venue") or () if v} | set(self.side_fields.get("venue") or ())
            keys = {venue_key(v) for v in texts if v}
            self.__dict__["_venue_keys"] = keys
        return venue_key(text) in keys

    def order_trusted(self, rec: Record) -> bool:
        """Whether the order of a record's authors is the paper's: not when the list (three names or
        more) is in alphabetical order of family names, nor when most such lists of its venue-year
        are (:data:`ALPHABETISED_SHARE`: a source that sorted its lists), since then the source
        may have sorted it."""
        if len(rec.authors) >= 3 and _sorted_by_surname(rec.authors):
            return False
        if rec.source != "corpus" or rec.year is None:
            return True
        return not self._alphabetised(rec.venue, int(rec.year))

    def _alphabetised(self, venue: str, year: int) -> bool:
        """Whether most author lists (three names or more) of a venue-year are in alphabetical order."""
        cache = self.__dict__.setdefault("_alphabetised_venue_years", {})
        key = (venue, year)
        if key not in cache:
            rows = self.by_venue_year.get(key, np.zeros(0, dtype=np.int32)).tolist()
            lists = [self.authors[r] for r in rows if len(self.authors[r]) >= 3]
            cache[key] = len(lists) >= MIN_COMPLETE and \
                sum(map(_sorted_by_surname, lists)) >= ALPHABETISED_SHARE * len(lists)
        return cache[key]

    # ---- venue-years -----------------------------------------------------------------------

    def is_complete(self, venue: str, year: int | None) -> bool:
        return year is not None and (venue, int(year)) in self.complete

    def held_years(self, venue: str) -> list[int]:
        return sorted(y for v, y in self.complete if v == venue)

    def side_is_complete(self, venues: tuple[str, ...], year: int | None) -> bool:
        """Whether the side records hold one of ``venues`` (its main track or journal) completely in ``year``."""
        return year is not None and any(((v, t), int(year)) in self.side_complete for v in venues for t in MAIN_TRACKS)

    def venue_coverage(self, venue: str, year: int | None) -> Coverage | None:
        """The measured completeness of a venue-year's main track (None: not in the data)."""
        return self.coverage.get((venue, int(year))) if year is not None else None

    def track_is_complete(self, venue: str, kind: str, year: int) -> tuple[bool, str]:
        """Whether the side records hold the ``kind`` track (:func:`~.venue.track_kind`) of a venue-year
        completely, and why not. A workshop track never is: there is no official list of a venue's
        workshops to measure it against."""
        if kind == "workshop":
            return False, f"{venue} workshops are not held completely (no official list of them exists)"
        if kind == "co-located":
            return False, f"the co-located events printed in the {venue} proceedings are not held"
        cov = self.track_coverage.get((venue, kind, int(year)))
        if cov is None:
            return False, f"the {kind} track of {venue} {year} is not held"
        if not cov.complete:
            return False, f"the {kind} track of {venue} {year} is not held completely ({cov.why_not()})"
        return True, ""

    def dois_witnessed(self, venue: str, year: int | None) -> bool:
        """Whether the DOIs of a venue-year's records may accuse an entry: at least
        :data:`MIN_DOI_WITNESSES` of them are carried, under the same title, by a work the papers of
        the data cite or by another record, and none under another title (a source whose DOIs point
        at neighbouring papers is caught so)."""
        ok, bad = self.doi_checks.get((venue, int(year)), (0, 0)) if year is not None else (0, 0)
        return ok >= MIN_DOI_WITNESSES and bad == 0

    def check_dois(self) -> None:
        """Fill :attr:`doi_checks`: each corpus DOI against the titles of the catalogue works and
        side records carrying it (a work title of under :data:`MIN_WITNESS_WORDS` words is a
        parser's fragment, "Springer", and is no witness)."""
        from rapidfuzz import fuzz

        from ..corpus.records import normalize_title

        checks: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
        work_rows = self.works.id_rows if self.works is not None else {}
        side_rows = self.side.id_rows if self.side is not None else {}
        for r, d in enumerate(self.doi):
            if not d or self.year[r] is None:
                continue
            titles = [self.work_fields["title"][w] or "" for w in work_rows.get(f"doi:{d}", ())]
            titles += [self.side_fields["title"][w] or "" for w in side_rows.get(f"doi:{d}", ())]
            titles = [t for t in titles if len(t.split()) >= MIN_WITNESS_WORDS]
            if not titles:
                continue
            key = (self.venue[r], int(self.year[r]))
            sims = [fuzz.ratio(normalize_title(t), normalize_title(self.title[r])) for t in titles]
            checks[key][0 if max(sims) >= 80 else 1] += 1
        self.doi_checks = {k: (a, b) for k, (a, b) in checks.items()}

    def witnesses(self, row: int) -> int:
        """How many lists hold a corpus paper (1 when unknown)."""
        return self.n_lists[row] if self.n_lists else 1

    def side_count(self, venues: tuple[str, ...], year: int) -> int:
        return sum(self.side_counts.get(((v, t), int(year)), 0) for v in venues for t in MAIN_TRACKS)

    def rows_by_surname(self, venue: str, year: int, surname: str, *, side: bool = False) -> list[int]:
        """Rows (corpus, or side with ``side``) of ``venue`` ``year`` with an author whose last name
        word is ``surname``."""
        key = (venue, int(year), side) if side else (venue, int(year))
        table = self._surnames.get(key)
        if table is None:
            table = defaultdict(list)
            rows = (self.side_by_venue_year if side else self.by_venue_year).get(key[:2], np.zeros(0, dtype=np.int32))
            authors = self.side_fields["authors"] if side else self.authors
            for r in rows.tolist():
                for a in authors[r] or ():
                    toks = name_tokens(a)
                    for t in set(toks[-2:]):      # the last two words: "Van Gool", "Zhang Wei"
                        table[t].append(r)
            self._surnames[key] = table = dict(table)
        return table.get(surname, [])

    # ---- building ----------------------------------------------------------------------------

    @classmethod
    def build(cls, papers: Path, works: Path | None = None, side: Path | None = None,
              versions: Path | None = None) -> RefIndex:
        col = _read(papers, ["paper_id", "title", "authors", "venue", "year", "url", "pdf", "also_published",
                             "title_norm"], ["doi", "source_ids", "source"], "corpus store")
        titles = TitleIndex.build(col["paper_id"], col["title"], col["year"], col["title_norm"])
        titles.add_identifiers(col["url"], col["pdf"], col["doi"])
        also = [_parse_also(a) for a in col["also_published"]]
        counts: dict[tuple[str, int], int] = defaultdict(int)
        vy: dict[tuple[str, int], list[int]] = defaultdict(list)
        for i, (v, y) in enumerate(zip(col["venue"], col["year"])):
            if y is not None:
                counts[(v, int(y))] += 1
                vy[(v, int(y))].append(i)
            for v2, y2 in also[i]:
                vy[(v2, y2)].append(i)
        idx = cls(titles, col["title"], [a or [] for a in col["authors"]], col["venue"], col["year"], also,
                  [u or "" for u in col["url"]], dict(counts), complete_venue_years(counts),
                  by_venue_year={k: np.asarray(v, dtype=np.int32) for k, v in vy.items()},
                  doi=[d or "" for d in col["doi"]])
        row_lists = [_lists_of(ids, src) for ids, src in zip(col["source_ids"], col["source"])]
        idx.n_lists = [len(x) for x in row_lists]
        idx.lists = _list_counts(((v, int(y)), ls) for v, y, ls in zip(col["venue"], col["year"], row_lists)
                                 if y is not None)
        if works is not None and works.is_file():
            wf = _read(works, ["work_id", "title", "year", "authors", "venue", "identifiers", "kind", "n_citing"], [],
                       "the catalogue of cited works")
            wt = TitleIndex.build(wf["work_id"], [x or "" for x in wf["title"]], wf["year"])
            rows: dict[str, list[int]] = defaultdict(list)
            for i, ids in enumerate(wf["identifiers"]):
                for k in ids or ():
                    rows[k].append(i)
            wt.id_rows = dict(rows)
            idx.works = wt
            idx.work_fields = {k: wf[k]
                               for k in ("title", "year", "authors", "venue", "identifiers", "kind", "n_citing")}
        if side is not None and side.is_file():
            idx._add_side(_read(side, ["paper_id", "title", "authors", "venue", "year", "url", "track"],
                                ["pdf", "doi", "source_ids", "source"], "the side-track papers"))
        rows = [(v, y, (u, p)) for v, y, u, p in zip(col["venue"], col["year"], col["url"], col["pdf"])]
        if idx.side_fields:
            f = idx.side_fields
            rows += [(v, y, (u,)) for v, y, u in zip(f["venue"], f["year"], f["url"])]
        idx.volume_years = volume_years(rows)
        if versions is not None and versions.is_file():
            v = _read(versions, ["paper_id", "version_id"], [], "the version links")
            links: dict[str, list[str]] = defaultdict(list)
            for a, b in zip(v["paper_id"], v["version_id"]):
                links[a].append(b)
            idx.versions = dict(links)
        disputes = papers.parent / DISAGREEMENTS_FILE
        if disputes.is_file():
            d = _read(disputes, ["paper_id", "field", "values"], [], "the disagreements between sources")
            got: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(dict)
            for pid, fld, values in zip(d["paper_id"], d["field"], d["values"]):
                got[pid][fld] = [(str(a), str(b)) for a, b in (values or ())]
            idx.disputes = dict(got)
        idx.precompute()
        return idx

    def precompute(self) -> None:
        """Fill the look-ups that the first checks would otherwise build lazily (the DOI series,
        the data's latest year, the venue names, which venue-years list their authors sorted), so
        that they are saved with the index and no editor's first check pays for them. The tables
        of authors by family name stay lazy: built for all venue-years they would make the index a
        third larger, and only the venue-years that entries name are needed."""
        self._doi_sets()
        self.check_dois()
        self.latest_year()
        self.venue_named("")
        for venue, year in self.by_venue_year:
            if year is not None:
                self._alphabetised(venue, int(year))

    def _add_side(self, sf: dict[str, list]) -> None:
        """Index the side records: titles, identifiers, fields, and their counts per venue, track and year."""
        self.side = TitleIndex.build(sf["paper_id"], sf["title"], sf["year"])
        self.side.add_identifiers(sf["url"], sf["pdf"], sf["doi"])
        self.side_fields = {k: sf[k] for k in ("title", "authors", "venue", "year", "url", "track", "doi")}
        counts: dict[tuple[tuple[str, str], int], int] = defaultdict(int)
        vy: dict[tuple[str, int], list[int]] = defaultdict(list)
        for i, (v, t, y) in enumerate(zip(sf["venue"], sf["track"], sf["year"])):
            if v and y is not None:
                counts[((v, t or ""), int(y))] += 1
                vy[(v, int(y))].append(i)
        self.side_counts = dict(counts)
        self.side_complete = complete_venue_years(counts)
        rl = [_lists_of(ids, src) for ids, src in zip(sf["source_ids"], sf["source"])]
        self.track_lists = _list_counts(((v, track_kind(t or ""), int(y)), ls)
                                        for v, t, y, ls in zip(sf["venue"], sf["track"], sf["year"], rl)
                                        if v and y is not None)
        self.side_lists = _list_counts((((v, t or ""), int(y)), ls) for v, t, y, ls in zip(sf["venue"], sf["track"],
                                                                                          sf["year"], rl)
                                       if v and y is not None)
        self.side_by_venue_year = {k: np.asarray(r, dtype=np.int32) for k, r in vy.items()}


def _lists_of(source_ids: list[str] | None, source: str | None) -> frozenset[str]:
    """The lists a record was read from (its ``source_ids``' sources, else its ``source``)."""
    got = frozenset(list_name(s) for s in source_ids or ())
    return got or (frozenset([source]) if source else frozenset())


def _list_counts(items) -> dict:
    """key -> ({list: records of the key in it}, records in both of its two largest lists) from
    (key, lists of one record) pairs."""
    per: dict = defaultdict(list)
    for key, ls in items:
        per[key].append(ls)
    out = {}
    for key, rows in per.items():
        c = Counter(x for ls in rows for x in ls)
        top = [k for k, _ in c.most_common(2)]
        both = sum(1 for ls in rows if len(top) == 2 and top[0] in ls and top[1] in ls)
        out[key] = (dict(c), both)
    return out


def measure_all(counts: dict, lists: dict, neighbours: set, official: dict | None = None) -> dict:
    """key -> :class:`~.coverage.Coverage` for every key of ``counts`` (module doc of :mod:`.coverage`)."""
    official = official or {}
    out = {}
    for key, n in counts.items():
        got, both = lists.get(key, ({}, 0))
        out[key] = measure(n, Counter(got), both, official.get(key), key in neighbours)
    return out


def apply_coverage(idx: RefIndex) -> None:
    """Set the venue-years (and side venue-years and tracks) held completely: the neighbour test of
    :func:`complete_venue_years` and the measure of :mod:`.coverage`."""
    idx.coverage = measure_all(idx.counts, idx.lists, complete_venue_years(idx.counts), OFFICIAL_COUNTS)
    idx.complete = {k for k, c in idx.coverage.items() if c.complete}
    side_cov = measure_all(idx.side_counts, idx.side_lists, complete_venue_years(idx.side_counts))
    idx.side_complete = {k for k, c in side_cov.items() if c.complete}
    tracks: dict[tuple[tuple[str, str], int], int] = defaultdict(int)
    for ((v, t), y), n in idx.side_counts.items():
        tracks[((v, track_kind(t)), y)] += n
    near = complete_venue_years(tracks)
    idx.track_coverage = {(v, k, y): measure(n, Counter(idx.track_lists.get((v, k, y), ({}, 0))[0]),
                                             idx.track_lists.get((v, k, y), ({}, 0))[1], None, ((v, k), y) in near)
                          for ((v, k), y), n in tracks.items()}


def _read(path: Path, columns: list[str], optional: list[str], what: str) -> dict[str, list]:
    """The columns of a Parquet file as lists; an ``optional`` column the file lacks (a store written
    before it existed) reads as all None."""
    try:
        have = set(pq.read_schema(path).names)
        t = pq.read_table(path, columns=columns + [c for c in optional if c in have])
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise MustciteError(f"cannot read {what}: {exc}", path=path) from None
    col = {c: t.column(c).to_pylist() for c in t.column_names}
    for c in optional:
        col.setdefault(c, [None] * t.num_rows)
    return col


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path.name}:absent"
    return f"{path.name}:{st.st_size}:{st.st_mtime_ns}"


def index_cache_path(papers: Path, works: Path | None, cache_dir: Path) -> Path:
    key = "|".join([str(INDEX_VERSION), str(papers.resolve()), _stamp(papers),
                    _stamp(works) if works is not None else "-", _stamp(papers.parent / SIDE_TRACKS_FILE),
                    _stamp(papers.parent / VERSIONS_FILE)])
    return cache_dir / "refcheck" / f"index-{hashlib.sha1(key.encode()).hexdigest()[:16]}.pickle"


_LOADED: dict[str, RefIndex] = {}
#: cached indexes kept in a cache folder (the newest): an index is written again whenever the
#: corpus or the index layout changes, and each is about as large as the corpus store
KEEP_INDEXES = 2


def drop_stale_indexes(folder: Path, keep: int = KEEP_INDEXES) -> list[Path]:
    """Remove all but the ``keep`` newest cached indexes in ``folder``; the ones removed."""
    found = sorted(folder.glob("index-*.pickle"), key=lambda f: f.stat().st_mtime, reverse=True)
    gone = []
    for f in found[keep:]:
        try:
            f.unlink()
            gone.append(f)
        except OSError:          # another process removed it, or it is not ours to remove
            pass
    return gone


#: the temporary file an index is written to before its rename (``.index-<key>.pickle.<pid>.tmp``)
_TEMP_INDEX = re.compile(r"\.index-[^/]+\.pickle\.(?P<pid>\d+)\.tmp")


#: values of ``$MUSTCITE_CITATIONS`` that turn the consensus of citing papers off
CITATIONS_OFF = ("off", "none", "0", "no", "false")


def load_index(work: str | Path | Workspace | None = None, *, papers: str | Path | None = None,
               works: str | Path | None = None, cache: bool = True,
               citations: str | Path | bool | None = None) -> RefIndex:
    """The index of ``<work>/corpus/papers.parquet`` (+ ``works.parquet`` when there), from the
    on-disk cache when it is current, else built and cached; kept per process.

    The consensus of citing papers (:mod:`.consensus`): ``citations`` a file of reference lists (else
    ``$MUSTCITE_CITATIONS``), read once and cached; by default the table built into the corpus folder
    (``mustcite works consensus``) when it is there; ``citations=False`` (or ``$MUSTCITE_CITATIONS``
    set to ``off``) runs without it."""
    ws = work if isinstance(work, Workspace) else Workspace.resolve(work)
    papers = Path(papers) if papers else ws.root / "corpus" / "papers.parquet"
    if works is None:
        cand = papers.parent / "works.parquet"
        works = cand if cand.is_file() else None
    works = Path(works) if works else None
    if not papers.is_file():
        raise DataMissingError(f"no corpus store at {papers}",
                               hint="run `mustcite corpus build` first, or pass --work DIR")
    cache_dir = ws.cache if cache else None
    path = index_cache_path(papers, works, cache_dir) if cache_dir is not None else None
    mem_key = str(path) if path is not None else f"{papers}|{works}|{_stamp(papers)}"
    got = _LOADED.get(mem_key)
    if got is not None:
        got.consensus = _consensus(citations, papers.parent, ws, cache)
        return got
    if path is not None:        # the temporary files of builds killed before their rename
        remove_stale_temps(path.parent, _TEMP_INDEX)
    idx = None
    if path is not None and path.is_file():
        try:
            idx = load_pickle(path)
        except Exception:  # a damaged or foreign cache file: rebuild it
            idx = None
    if idx is None:
        idx = RefIndex.build(papers, works, papers.parent / SIDE_TRACKS_FILE, papers.parent / VERSIONS_FILE)
        if path is not None and write_pickle_cache(path, idx):
            drop_stale_indexes(path.parent, keep=KEEP_INDEXES)
    apply_coverage(idx)
    _LOADED[mem_key] = idx
    idx.consensus = _consensus(citations, papers.parent, ws, cache)
    return idx


def _consensus(citations: str | Path | bool | None, corpus_dir: Path, ws: Workspace, cache: bool) -> Any:
    """The consensus of citing papers :func:`load_index` attaches (None: off, or none built)."""
    if citations is False:
        return None
    if citations is None or citations is True:
        citations = os.environ.get("MUSTCITE_CITATIONS") or None
    if citations is not None and str(citations).strip().lower() in CITATIONS_OFF:
        return None
    if citations:
        from .consensus import load as load_consensus

        path = Path(citations)
        if not path.is_file():
            raise DataMissingError(f"no reference lists at {path}", hint="pass a papers.jsonl(.xz) of .bbl files")
        return load_consensus(path, ws.cache if cache else None)
    from .consensus import CONSENSUS_FILE, load_built

    return load_built(corpus_dir) if (corpus_dir / CONSENSUS_FILE).is_file() else None

"""The catalogue built and read back: :func:`build_catalogue` writes ``works.parquet``,
``work_citations.parquet``, ``names.parquet`` and ``works.json``; :class:`WorkIndex` reads them; :func:`pool_works`
turns works into pool entries under the time rule."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...corpus.store import SIDE_TRACKS_FILE
from ...errors import DataMissingError, MustciteError
from ...io import atomic_write_json, read_json
from ...parallel import pmap
from ..runner import META_SUFFIX, iter_reference_files
from .cluster import Work, cluster_mentions, identifies, make_work
from .mentions import Mention, PaperRefs, read_paper
from .names import Name, aggregate_names
from .side import SideRecords

# ------------------------------------------------------------------------------- the build


@dataclass
class CatalogueSummary:
    papers: int
    unlinked_references: int
    works: int
    by_kind: dict[str, int]
    cited_by_two_or_more: int
    unidentified_references: int        # no identifying title and no identifier
    coverage: dict[str, Any]
    names: dict[str, Any]               # the short names citing papers give corpus papers and works
    elapsed_s: float
    #: works that are records of the corpus's side file: the file, its records, the works linked,
    #: by "venue/track"
    side_records: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


WORKS_FILE = "works.parquet"
CITATIONS_FILE = "work_citations.parquet"
NAMES_FILE = "names.parquet"
SUMMARY_FILE = "works.json"


def _citing_years(folder: Path, stems: list[str]) -> dict[str, int | None]:
    years = {}
    for s in stems:
        meta = read_json(folder / f"{s}{META_SUFFIX}", missing_ok=True) or {}
        y = meta.get("year") if isinstance(meta, dict) else None
        years[s] = int(y) if isinstance(y, int) else None
    return years


def read_folders(folders: list[str | Path], *, workers: int | None = None, progress: bool = True,
                 engine: Any = None) -> list[PaperRefs]:
    """:func:`read_paper` of every (labelled, where labelled) reference file in the folders."""
    items: list[tuple[str, int | None]] = []
    for folder in folders:
        folder = Path(folder)
        if not folder.is_dir():
            raise DataMissingError("extraction folder not found", path=folder,
                                   hint="run `mustcite extract PATH... --out DIR` and `mustcite link DIR` first")
        files = list(iter_reference_files(folder, labelled=True))
        years = _citing_years(folder, [s for s, _ in files])
        items += [(str(p), years[s]) for s, p in files]
    return list(pmap(read_paper, items, workers=workers, desc="works: read references",
                     progress=progress, engine=engine, unit="paper", chunksize=16))


def collect_mentions(folders: list[str | Path], **options: Any) -> list[Mention]:
    """Every unlinked reference of the folders (:func:`read_folders`)."""
    return [m for p in read_folders(folders, **options) for m in p.mentions]


def coverage(papers: list[PaperRefs], works_of: dict[tuple[str, int], str],
             citing_of: dict[str, set[str]]) -> dict[str, Any]:
    """The share of labelled must-cite references (and of all references) that a corpus paper or a
    work can stand for, leave-one-out: a work counts for a citing paper only when another paper
    cites it too. ``works_of``: (citing paper, target) -> work id; ``citing_of``: work id -> papers."""
    out = {"must_cite": 0, "must_cite_linked": 0, "must_cite_work": 0,
           "references": 0, "references_linked": 0, "references_work": 0, "labelled_papers": 0}
    for p in papers:
        out["references"] += p.references
        out["references_linked"] += p.linked
        if p.labelled:
            out["labelled_papers"] += 1
            out["must_cite"] += p.must_cite
            out["must_cite_linked"] += p.must_cite_linked
        for m in p.mentions:
            w = works_of.get((m.citing, m.target))
            if w is None or len(citing_of[w] - {m.citing}) == 0:
                continue
            out["references_work"] += 1
            if m.must_cite:
                out["must_cite_work"] += 1
    for what in ("must_cite", "references"):
        n = out[what] or 1
        out[f"{what}_share_linked"] = round(out[f"{what}_linked"] / n, 4)
        out[f"{what}_share_covered"] = round((out[f"{what}_linked"] + out[f"{what}_work"]) / n, 4)
    return out


def names_summary(names: list[Name], kinds: dict[str, str]) -> dict[str, Any]:
    """How many names, for how many corpus papers and works (by kind), by support."""
    targets = {n.target for n in names}
    return {"names": len(names), "corpus_papers": sum(not is_work_id(t) for t in targets),
            "works": sum(is_work_id(t) for t in targets),
            "works_by_kind": dict(Counter(kinds.get(t, "paper") for t in targets if is_work_id(t)).most_common()),
            "support_2": sum(n.support == 2 for n in names), "support_3_9": sum(3 <= n.support < 10 for n in names),
            "support_10_plus": sum(n.support >= 10 for n in names)}


def link_side_records(works: list[Work], side: SideRecords) -> dict[str, int]:
    """Link each work that is a record of the side file to it (:meth:`.side.SideRecords.match`);
    the number linked by "venue/track"."""
    linked: Counter[str] = Counter()
    for w in works:
        r = side.match(w.title, w.year, w.authors)
        if r is not None:
            w.link_record(r)
            linked[f"{r.venue}/{r.track}"] += 1
    return dict(linked.most_common())


def _previous_works(out: Path) -> dict[tuple[str, int], str]:
    """``(citing, target) -> work_id`` of the catalogue already in ``out`` (empty when there is none
    or it cannot be read)."""
    path = out / CITATIONS_FILE
    if not path.is_file():
        return {}
    try:
        rows = pq.read_table(path, columns=["citing", "target", "work_id"]).to_pylist()
    except Exception:  # an unreadable earlier catalogue only costs the ids' stability
        return {}
    return {(r["citing"], r["target"]): r["work_id"] for r in rows}


def kept_ids(groups: list[list[Mention]], previous: dict[tuple[str, int], str]) -> dict[int, str]:
    """Group index -> the id of the earlier catalogue's work it keeps: the work most of its references
    belonged to, given to the group holding most of that work's references (so adding citing papers
    keeps the ids of the works that existed; a group of no earlier work gets a new id)."""
    claims = []
    for gi, ms in enumerate(groups):
        votes = Counter(previous[(m.citing, m.target)] for m in ms if (m.citing, m.target) in previous)
        if votes and identifies(ms):
            wid, n = min(votes.items(), key=lambda kv: (-kv[1], kv[0]))
            claims.append((-n, gi, wid))
    kept: dict[int, str] = {}
    used: set[str] = set()
    for _, gi, wid in sorted(claims):
        if wid not in used:
            kept[gi] = wid
            used.add(wid)
    return kept


def build_catalogue(folders: list[str | Path], out_dir: str | Path, *, workers: int | None = None,
                    progress: bool = True, engine: Any = None,
                    side_records: str | Path | None = None) -> CatalogueSummary:
    """Resolve every unlinked reference of the extraction folders to a work and mine the names
    citing papers give corpus papers and works; write ``out_dir/works.parquet``,
    ``out_dir/work_citations.parquet``, ``out_dir/names.parquet`` and ``out_dir/works.json``. A work
    of the catalogue already in ``out_dir`` keeps its id (:func:`kept_ids`).

    Works that are records of the corpus's side file (``side_records``, default
    ``out_dir/side_tracks.parquet`` when it exists) carry that record (:mod:`.side`)."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    side_path = Path(side_records) if side_records is not None else out / SIDE_TRACKS_FILE
    if side_records is not None and not side_path.is_file():
        raise DataMissingError("no side records file", path=side_path,
                               hint="run `mustcite corpus build` (it writes corpus/side_tracks.parquet)")
    papers = read_folders(folders, workers=workers, progress=progress, engine=engine)
    mentions = [m for p in papers for m in p.mentions]
    works, rows = [], []
    unidentified = 0
    works_of: dict[tuple[str, int], str] = {}
    taken: set[str] = set()
    citing_of: dict[str, set[str]] = {}
    groups = [[mentions[i] for i in g] for g in cluster_mentions(mentions)]
    kept = kept_ids(groups, _previous_works(out))
    taken.update(kept.values())
    for gi, ms in enumerate(groups):
        if not identifies(ms):
            unidentified += len(ms)
            continue
        w = make_work(ms, taken, kept.get(gi))
        works.append(w)
        citing_of[w.work_id] = {m.citing for m in ms}
        for m in ms:
            works_of[(m.citing, m.target)] = w.work_id
            rows.append({"work_id": w.work_id, "citing": m.citing, "citing_year": m.citing_year,
                         "target": m.target, "title": m.title, "year": m.year, "must_cite": m.must_cite,
                         "type1": m.type1, "type2": m.type2, "type3": m.type3, "contexts": m.contexts,
                         "mentions": m.mentions})
    works.sort(key=lambda w: (-w.n_citing, w.work_id))
    side_summary: dict[str, Any] = {"file": None, "records": 0, "works_linked": 0, "by_venue_track": {}}
    if side_path.is_file():
        side = SideRecords.load(side_path)
        linked = link_side_records(works, side)
        side_summary = {"file": str(side_path), "records": len(side), "works_linked": sum(linked.values()),
                        "by_venue_track": linked}
    names = aggregate_names((p.paper, pid or works_of.get((p.paper, target)), name, p.year)
                            for p in papers for name, target, pid in p.names
                            if pid or (p.paper, target) in works_of)
    out.mkdir(parents=True, exist_ok=True)
    wt = pa.Table.from_pylist([asdict(w) for w in works], schema=WORKS_SCHEMA)
    ct = pa.Table.from_pylist(rows, schema=CITATIONS_SCHEMA)
    nt = pa.Table.from_pylist([asdict(n) for n in names], schema=NAMES_SCHEMA)
    for table, name in ((wt, WORKS_FILE), (ct, CITATIONS_FILE), (nt, NAMES_FILE)):
        tmp = out / f".{name}.tmp"
        pq.write_table(table, tmp)
        tmp.replace(out / name)
    summary = CatalogueSummary(
        papers=len({m.citing for m in mentions}), unlinked_references=len(mentions), works=len(works),
        by_kind=dict(Counter(w.kind for w in works).most_common()),
        cited_by_two_or_more=sum(w.n_citing >= 2 for w in works), unidentified_references=unidentified,
        coverage=coverage(papers, works_of, citing_of), names=names_summary(names, {w.work_id: w.kind for w in works}),
        elapsed_s=round(time.perf_counter() - t0, 2), side_records=side_summary)
    atomic_write_json(out / SUMMARY_FILE, {**summary.to_dict(), "folders": [str(f) for f in folders]})
    return summary


#: the works columns added with the side records: a catalogue built before them reads them as null
RECORD_COLUMNS = ("doi", "record_id", "record_venue", "record_year", "record_track")


def _schemas():
    works = pa.schema([
        ("work_id", pa.string()), ("title", pa.string()), ("year", pa.int32()),
        ("authors", pa.list_(pa.string())), ("venue", pa.string()), ("identifiers", pa.list_(pa.string())),
        ("kind", pa.string()), ("n_citing", pa.int32()), ("first_cited", pa.int32()),
        ("n_must_cite", pa.int32()), ("title_forms", pa.list_(pa.string())),
        ("doi", pa.string()), ("record_id", pa.string()), ("record_venue", pa.string()),
        ("record_year", pa.int32()), ("record_track", pa.string()),
    ])
    cites = pa.schema([
        ("work_id", pa.string()), ("citing", pa.string()), ("citing_year", pa.int32()),
        ("target", pa.int32()), ("title", pa.string()), ("year", pa.int32()), ("must_cite", pa.bool_()),
        ("type1", pa.int8()), ("type2", pa.int8()), ("type3", pa.int8()), ("contexts", pa.int32()),
        ("mentions", pa.int32()),
    ])
    names = pa.schema([
        ("key", pa.string()), ("name", pa.string()), ("target", pa.string()), ("support", pa.int32()),
        ("share", pa.float32()), ("first_year", pa.int32()),
    ])
    return works, cites, names


WORKS_SCHEMA, CITATIONS_SCHEMA, NAMES_SCHEMA = _schemas()


def works_schema_json() -> dict[str, Any]:
    """The published schema of the two tables (``mustcite/schemas/works.schema.json``)."""
    return json.loads(resources.files("mustcite.schemas").joinpath("works.schema.json").read_text())


# ------------------------------------------------------------------------------- reading it back


def _read_table(path: Path, columns: list[str], optional: Iterable[str] = ()) -> pa.Table:
    """A catalogue table with the columns the schema promises (those in ``optional`` only when the
    file has them); a file that is not one is an error naming it."""
    try:
        if optional:
            have = set(pq.read_schema(path).names)
            columns = [c for c in columns if c in have or c not in optional]
        return pq.read_table(path, columns=columns)
    except Exception as exc:  # pyarrow raises several types for corrupt files and missing columns
        raise MustciteError(f"not a catalogue table: {exc}", path=path,
                            hint="rebuild it with `mustcite works build`") from None


@dataclass
class WorkIndex:
    """A built catalogue read back: which work each unlinked reference names, and the works."""

    folder: Path
    by_ref: dict[tuple[str, int], str]          # (citing paper, reference position) -> work id
    works: dict[str, dict[str, Any]]            # work id -> its works.parquet row
    citing: dict[str, list[tuple[str, int | None]]]   # work id -> (citing paper, its year)

    @classmethod
    def load(cls, folder: str | Path) -> WorkIndex:
        """The catalogue in ``folder`` (``works.parquet`` + ``work_citations.parquet``)."""
        folder = Path(folder)
        for name in (WORKS_FILE, CITATIONS_FILE):
            if not (folder / name).is_file():
                raise DataMissingError("no catalogue of cited works", path=folder / name,
                                       hint="run `mustcite works build` first")
        table = _read_table(folder / WORKS_FILE, WORKS_SCHEMA.names, optional=RECORD_COLUMNS)
        works = {r["work_id"]: {**dict.fromkeys(RECORD_COLUMNS), **r} for r in table.to_pylist()}
        cites = _read_table(folder / CITATIONS_FILE, ["work_id", "citing", "citing_year", "target"])
        by_ref: dict[tuple[str, int], str] = {}
        citing: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
        for w, c, y, t in zip(*(cites.column(n).to_pylist() for n in ("work_id", "citing", "citing_year", "target"))):
            by_ref[(c, int(t))] = w
            citing[w].append((c, y))
        return cls(folder, by_ref, works, dict(citing))

    def work_of(self, citing: str, target: Any) -> str | None:
        try:
            return self.by_ref.get((citing, int(target)))
        except (TypeError, ValueError):
            return None

    def resolve(self, citing: str, refs: list[Any]) -> list[Any]:
        """The reference list with each unlinked reference that names a work given the work's id
        as its ``paper_id`` (``work_id`` too); linked references and the input are left unchanged."""
        out = []
        for r in refs:
            if isinstance(r, dict) and not r.get("paper_id"):
                w = self.work_of(citing, r.get("target"))
                if w is not None:
                    r = {**r, "paper_id": w, "work_id": w}
            out.append(r)
        return out


def is_work_id(paper_id: str | None) -> bool:
    """Whether an id names a catalogue work (``w-...``) rather than a corpus paper."""
    return bool(paper_id) and str(paper_id).startswith("w-")


def work_url(identifiers: Iterable[str]) -> str | None:
    """A link to a work from its identifiers: arXiv, then DOI, ACL Anthology, OpenReview, PMLR,
    NeurIPS proceedings, GitHub."""
    ids = dict(i.split(":", 1) for i in identifiers if ":" in i)
    forms = (("arxiv", "https://arxiv.org/abs/{}"), ("doi", "https://doi.org/{}"),
             ("acl", "https://aclanthology.org/{}"), ("openreview", "https://openreview.net/forum?id={}"),
             ("pmlr", "https://proceedings.mlr.press/{}.html"),
             ("nips", "https://papers.nips.cc/paper_files/paper/hash/{}-Abstract.html"),
             ("github", "https://github.com/{}"))
    return next((f.format(ids[k]) for k, f in forms if k in ids), None)


def pool_works(index: WorkIndex, *, allowed: set[str] | None = None, min_citing: int = 1,
               until: int | None = None) -> list[dict[str, Any]]:
    """The works as pool entries (the columns of :data:`mustcite.corpus.pool.POOL_COLUMNS` and
    ``WORK_COLUMNS``), each introduced by the citing papers in ``allowed`` (None: all) and kept
    when at least ``min_citing`` of them cite it. ``year`` is the year from which a query may see
    it: the later of its own year and the year of the first allowed paper that cites it
    (``published`` is its own year); ``until`` drops works first seen after that year."""
    out = []
    for wid, citers in index.citing.items():
        years = [y for c, y in citers if (allowed is None or c in allowed) and y is not None]
        if len({c for c, _ in citers if allowed is None or c in allowed}) < min_citing or not years:
            continue
        w = index.works[wid]
        seen = max(min(years), w.get("year") or min(years))
        if until is not None and seen > until:
            continue
        ids = list(w.get("identifiers") or []) + ([f"doi:{w['doi']}"] if w.get("doi") else [])
        out.append({"paper_id": wid, "title": w["title"], "abstract": "", "authors": list(w.get("authors") or []),
                    "venue": w.get("venue") or "", "year": seen, "url": work_url(ids),
                    "pdf": None, "kind": w["kind"], "published": w.get("year")})
    return sorted(out, key=lambda r: r["paper_id"])


def resolved_entries(folders: list[str | Path], stems: set[str], works: WorkIndex | None = None,
                     ) -> dict[str, list[str | None]]:
    """Per citing paper (file stem) of the folders: what every entry of its reference list resolves
    to, the linked corpus paper, else the work it names (with ``works``), else None."""
    out: dict[str, list[str | None]] = {}
    for folder in folders:
        for stem, path in iter_reference_files(folder, labelled=True):
            if stem in stems and stem not in out:
                refs = [r for r in read_json(path) if isinstance(r, dict)]
                out[stem] = [r.get("paper_id") or (works.work_of(stem, r.get("target")) if works else None)
                             for r in refs]
    return out

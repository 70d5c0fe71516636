"""The mention table: every occurrence, in the full texts, of every name the field gives a cited work.

:func:`build_mention_table` reads a linked extraction folder (the reference files with the corpus
paper each reference links to) and the catalogue of cited works (the work each unlinked reference
names), and:

1. splits the papers by :func:`mention_split` (every paper of 2023 or earlier is a train paper; a
   seeded share of the later ones is held out), before anything is learned;
2. builds the :class:`~.occurrences.NameLexicon` from the **train papers only**: the names they give
   the references they cite (:func:`~.names.aggregate_names`: at least two papers, three for a name
   of capitalised words only, and 30% of the papers using the name), plus the name a title starts
   with ("SqueezeLLM: ...", written with a capital or a digit) for every corpus paper (as the audit's
   name index reads the pool's titles) and for the works two or more train papers cite, unless more
   than :data:`MAX_TITLE_TARGETS` of them share it. Versions of one work (the corpus's version
   links, the same normalised title) form one family;
3. maps :func:`~.occurrences.paper_occurrences` over the papers (process pool, progress bar) and
   writes ``mentions.parquet`` (schema :data:`MENTIONS_SCHEMA`, published in
   ``mustcite/schemas/mentions.schema.json``) in batches, with ``mentions.json`` (figures, and the
   key of the inputs: a rerun with the same inputs reads the table back instead of building it).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...corpus.records import normalize_title, title_short_name
from ...errors import DataMissingError
from ...io import atomic_write_json, read_json
from ...parallel import pmap
from ..runner import META_SUFFIX, iter_reference_files
from .catalogue import CITATIONS_FILE, WORKS_FILE, WorkIndex
from .names import aggregate_names, name_key, paper_names, surname
from .occurrences import Candidate, NameLexicon, PaperInput, PaperOccurrences, paper_occurrences

#: bump when the rows change: a table of another version is rebuilt
TABLE_VERSION = 4
TABLE_FILE = "mentions.parquet"
SUMMARY_FILE = "mentions.json"
LEXICON_FILE = "lexicon.pkl"
#: the held-out papers: this share of the papers of :data:`HOLD_OUT_FROM` or later, drawn with :data:`SEED`
SEED = 20261207
HELD_OUT_SHARE = 0.5
HOLD_OUT_FROM = 2024
#: a title name shared by more cited works than this names none of them
MAX_TITLE_TARGETS = 3
#: a title name needs this many train papers citing the work
MIN_TITLE_CITING = 2
_GENERIC_TITLE_NAMES = frozenset({"introduction", "review", "survey", "position", "tutorial", "overview", "abstract",
                                  "preface", "editorial", "erratum", "keynote", "invitedtalk", "benchmark",
                                  "dataset"})


# ------------------------------------------------------------------------------------ split


def mention_split(years: dict[str, int | None], *, seed: int = SEED, share: float = HELD_OUT_SHARE,
                  hold_out_from: int = HOLD_OUT_FROM) -> dict[str, str]:
    """``paper -> "train" | "held_out"``: papers before ``hold_out_from`` train; of the others (in
    sorted order) ``random.Random(seed).sample`` draws ``round(share * n)`` held out. A paper
    without a year is left out."""
    late = sorted(p for p, y in years.items() if y is not None and y >= hold_out_from)
    held = set(random.Random(seed).sample(late, round(share * len(late))))
    return {p: ("held_out" if p in held else "train") for p, y in years.items() if y is not None}


def read_split_file(path: str | Path) -> dict[str, Any]:
    """A split file written by :func:`split_file_content` (``held_out``: the held-out paper ids)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("held_out"), list):
        raise DataMissingError("not a mention split file (no 'held_out' list)", path=path)
    return data


def split_file_content(split: dict[str, str], *, seed: int = SEED, share: float = HELD_OUT_SHARE,
                       hold_out_from: int = HOLD_OUT_FROM) -> dict[str, Any]:
    held = sorted(p for p, s in split.items() if s == "held_out")
    return {"seed": seed, "share": share, "hold_out_from": hold_out_from,
            "how": f"papers before {hold_out_from} are train; of the papers of {hold_out_from} or later, sorted "
                   f"by id, random.Random({seed}).sample(ids, round({share} * n)) are held out",
            "train": sum(s == "train" for s in split.values()), "held_out_count": len(held), "held_out": held}


# ------------------------------------------------------------------------------ references


@dataclass
class PaperRefList:
    paper: str
    refs: list[tuple[int, str | None, str]]       # (target, linked corpus paper, title)
    names: list[tuple[str, int]]                  # (name, target) the paper's contexts give


def read_ref_list(path: str) -> PaperRefList:
    """One reference file's targets, links, titles and the names its contexts give (pure)."""
    data = read_json(path)
    refs = [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []
    return PaperRefList(Path(path).name[:-len(".json")],
                        [(int(r.get("target") or 0), r.get("paper_id") or None, str(r.get("title") or ""))
                         for r in refs],
                        [(u.name, u.target) for u in paper_names(refs)])


class _Families:
    """Union-find over ids."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(x, x) != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _title_family_key(title: str) -> str:
    norm = normalize_title(title)
    return norm if len(norm) >= 12 and len(norm.split()) >= 2 else ""


def build_lexicon(lists: list[PaperRefList], train: set[str], years: dict[str, int | None], works: WorkIndex,
                  corpus_dir: Path) -> NameLexicon:
    """The names of the train papers (see the module doc) and the families of every resolved id."""
    resolved = {p.paper: {t: pid or works.work_of(p.paper, t) for t, pid, _ in p.refs} for p in lists}
    uses = [(p.paper, resolved[p.paper].get(t), name, years.get(p.paper))
            for p in lists if p.paper in train for name, t in p.names if resolved[p.paper].get(t)]
    mined = aggregate_names(uses)
    citing: Counter[str] = Counter()
    for p in lists:
        if p.paper in train:
            citing.update({r for r in resolved[p.paper].values() if r})
    ids = {r for rs in resolved.values() for r in rs.values() if r}
    corpus, pool_titled = _corpus_rows(corpus_dir, {i for i in ids if not i.startswith("w-")})
    info: dict[str, tuple[str, list[str], str]] = {}          # id -> (title, authors, kind)
    records: dict[str, tuple[tuple[str, ...], int | None, tuple[str, ...]]] = {}
    for pid, (title, authors, year) in corpus.items():
        info[pid] = (title, authors, "paper")
        records[pid] = ((title,), year, ())
    ids = ids | pool_titled
    for wid, w in works.works.items():
        if wid in ids:
            info[wid] = (w.get("title") or "", list(w.get("authors") or []), w.get("kind") or "paper")
            records[wid] = ((w.get("title") or "", *(w.get("title_forms") or ())),
                            w.get("year") if isinstance(w.get("year"), int) else None,
                            tuple(w.get("identifiers") or ()))
    fam = _Families()
    by_title: dict[str, str] = {}
    for i, (title, _, _) in sorted(info.items()):
        k = _title_family_key(title)
        if k:
            if k in by_title:
                fam.union(by_title[k], i)
            else:
                by_title[k] = i
    versions = corpus_dir / "versions.parquet"
    if versions.is_file():
        t = pq.read_table(versions, columns=["paper_id", "version_id"])
        for a, b in zip(t.column(0).to_pylist(), t.column(1).to_pylist()):
            fam.union(a, b)
    family = {i: fam.find(i) for i in ids if fam.find(i) != i}

    def cand(target: str, name: str, source: str, support: int) -> Candidate:
        title, authors, kind = info.get(target, ("", [], "paper"))
        return Candidate(target, family.get(target, target), name, source, support, kind,
                         frozenset(s for s in (surname(a) for a in authors) if s))

    entries: dict[str, list[Candidate]] = defaultdict(list)
    for n in mined:
        entries[n.key].append(cand(n.target, n.name, "mined", n.support))
    titled: dict[str, list[str]] = defaultdict(list)
    for i in sorted(pool_titled | {w for w, c in citing.items() if c >= MIN_TITLE_CITING}):
        if i in info:
            short = title_short_name(info[i][0])
            k = name_key(short)
            form = info[i][0].split(":", 1)[0].strip()
            if not any(ch.isupper() or ch.isdigit() for ch in form):
                continue                     # "imitation: ...", "powerlaw: ...": a word, not a name
            if len(k) >= 3 and not k.isdigit() and k not in _GENERIC_TITLE_NAMES:
                titled[k].append(i)
    for k, targets in titled.items():
        if len(targets) > MAX_TITLE_TARGETS:
            continue
        have = {c.target for c in entries.get(k, ())}
        for i in sorted(targets):
            if i not in have:
                form = info[i][0].split(":", 1)[0].strip()
                entries[k].append(cand(i, form, "title", 0))
    named = {c.target for cs in entries.values() for c in cs}
    fams = {family.get(i, i) for i in named}
    kept = {i: r for i, r in records.items() if i in named or family.get(i, i) in fams}
    return NameLexicon(dict(entries), family, records=kept)


def _corpus_rows(corpus_dir: Path, ids: set[str]) -> tuple[dict[str, tuple[str, list[str], int | None]], set[str]]:
    """Title, authors and year of the corpus papers (and side records) in ``ids`` and of every corpus
    paper whose title starts with a name written with a capital or a digit ("SqueezeLLM: ..."), and
    the ids of the latter."""
    out: dict[str, tuple[str, list[str], int | None]] = {}
    titled: set[str] = set()
    for name in ("papers.parquet", "side_tracks.parquet"):
        path = corpus_dir / name
        if not path.is_file():
            continue
        cols = [c for c in ("paper_id", "title", "authors", "year") if c in pq.read_schema(path).names]
        t = pq.read_table(path, columns=cols)
        years = t.column("year").to_pylist() if "year" in cols else [None] * t.num_rows
        for pid, title, authors, year in zip(*(t.column(c).to_pylist() for c in ("paper_id", "title", "authors")),
                                             years):
            named = name == "papers.parquet" and ":" in (title or "") and bool(title_short_name(title))
            if named:
                form = title.split(":", 1)[0]
                named = any(ch.isupper() or ch.isdigit() for ch in form)
            if pid in ids or named:
                out[pid] = (title or "", list(authors or []), int(year) if isinstance(year, int) else None)
            if named:
                titled.add(pid)
    return out, titled


# ---------------------------------------------------------------------------------- the build


_LEXICON: dict[str, NameLexicon] = {}


def _occurrences_of(args: tuple[PaperInput, str]) -> PaperOccurrences:
    """:func:`paper_occurrences` with the lexicon read once per worker process from its file."""
    inp, lexicon_path = args
    lex = _LEXICON.get(lexicon_path)
    if lex is None:
        with open(lexicon_path, "rb") as fh:
            lex = pickle.load(fh)
        _LEXICON.clear()
        _LEXICON[lexicon_path] = lex
    return paper_occurrences(inp, lex)


def _stat(path: Path) -> list[Any]:
    st = path.stat() if path.exists() else None
    return [path.name, st.st_size if st else None, st.st_mtime_ns if st else None]


def inputs_key(ref_files: list[Path], corpus_dir: Path, split: dict[str, str]) -> str:
    """A hash of what the table is built from: its version, the reference files, the catalogue, the
    corpus's papers and versions, and the split."""
    h = hashlib.sha256(json.dumps([TABLE_VERSION, sorted(split.items())]).encode())
    for p in [*ref_files, *(corpus_dir / n for n in (WORKS_FILE, CITATIONS_FILE, "papers.parquet",
                                                      "versions.parquet"))]:
        h.update(json.dumps(_stat(p)).encode())
    return h.hexdigest()[:24]


@dataclass
class MentionSummary:
    papers: int
    papers_ok: int
    papers_skipped: dict[str, int]
    mentions: int
    rows: int
    surface_forms: int
    names: int
    name_targets: int
    share_cited_sentence: float
    share_cited_paper: float
    by_split: dict[str, dict[str, int]]
    elapsed_s: float
    inputs_key: str
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _paper_years(folder: Path, stems: list[str]) -> tuple[dict[str, int | None], dict[str, str]]:
    years: dict[str, int | None] = {}
    texts: dict[str, str] = {}
    for s in stems:
        meta = read_json(folder / f"{s}{META_SUFFIX}", missing_ok=True) or {}
        y = meta.get("year") if isinstance(meta, dict) else None
        years[s] = int(y) if isinstance(y, int) else None
        if isinstance(meta, dict) and meta.get("source_path"):
            texts[s] = str(meta["source_path"])
    return years, texts


def build_mention_table(extract_dir: str | Path, corpus_dir: str | Path, out_dir: str | Path, *,
                        split_file: str | Path | None = None, workers: int | None = None, progress: bool = True,
                        engine: Any = None, force: bool = False, papers: set[str] | None = None) -> MentionSummary:
    """Build (or read back, when its inputs are unchanged) ``out_dir/mentions.parquet`` from a linked
    extraction folder and the catalogue in ``corpus_dir`` (see the module doc). ``split_file``: the
    held-out papers (:func:`read_split_file`); default :func:`mention_split` of the papers' years.
    ``papers``: only these papers (a slice)."""
    t0 = time.perf_counter()
    folder, corpus_dir, out = Path(extract_dir), Path(corpus_dir), Path(out_dir)
    if not folder.is_dir():
        raise DataMissingError("extraction folder not found", path=folder,
                               hint="run `mustcite extract PATH... --out DIR` and `mustcite link DIR` first")
    works = WorkIndex.load(corpus_dir)
    files = [(s, p) for s, p in iter_reference_files(folder) if papers is None or s in papers]
    if not files:
        raise DataMissingError("no reference files in the extraction folder", path=folder)
    years, texts = _paper_years(folder, [s for s, _ in files])
    if split_file is not None:
        held = set(read_split_file(split_file)["held_out"])
        split = {s: ("held_out" if s in held else "train") for s, y in years.items() if y is not None}
    else:
        split = mention_split(years)
    key = inputs_key([p for _, p in files], corpus_dir, split)
    summary_path = out / SUMMARY_FILE
    old = read_json(summary_path, missing_ok=True)
    if not force and isinstance(old, dict) and old.get("inputs_key") == key and (out / TABLE_FILE).is_file():
        return MentionSummary(**{**{k: v for k, v in old.items() if k in MentionSummary.__dataclass_fields__},
                                 "cached": True})
    lists = list(pmap(read_ref_list, [str(p) for _, p in files], workers=workers, desc="mentions: read references",
                      progress=progress, engine=engine, unit="paper", chunksize=16))
    train = {p for p, s in split.items() if s == "train"}
    lex = build_lexicon(lists, train, years, works, corpus_dir)
    out.mkdir(parents=True, exist_ok=True)
    lexicon_path = out / LEXICON_FILE
    with open(lexicon_path, "wb") as fh:
        pickle.dump(lex, fh, protocol=5)
    items = []
    for pl in lists:
        if pl.paper not in split or pl.paper not in texts:
            continue
        items.append((PaperInput(pl.paper, texts[pl.paper], years[pl.paper], split[pl.paper],
                                 {t: pid or works.work_of(pl.paper, t) for t, pid, _ in pl.refs},
                                 {t: name_key(title) for t, _, title in pl.refs}), str(lexicon_path)))
    del lists
    tmp = out / f".{TABLE_FILE}.tmp"
    writer = pq.ParquetWriter(tmp, MENTIONS_SCHEMA, compression="zstd")
    skipped: Counter[str] = Counter()
    rows_n = mentions_n = cited_s = cited_p = ok = 0
    forms: set[str] = set()
    by_split: dict[str, Counter[str]] = defaultdict(Counter)
    batch: list[dict[str, Any]] = []
    try:
        for res in pmap(_occurrences_of, items, workers=workers, desc="mentions: find names", progress=progress,
                        engine=engine, unit="paper", chunksize=8):
            if res.status != "ok":
                skipped[res.status.split(" (")[0].split(":")[0]] += 1
                continue
            ok += 1
            sp = split[res.paper]
            by_split[sp]["papers"] += 1
            occ = {(r["unit"], r["section"], r["sentence_index"], r["offset"], r["sentence"]) for r in res.rows}
            mentions_n += len(occ)
            by_split[sp]["mentions"] += len(occ)
            by_split[sp]["rows"] += len(res.rows)
            for r in res.rows:
                forms.add(r["key"])
                cited_s += r["cited_sentence"]
                cited_p += r["cited_paper"]
            rows_n += len(res.rows)
            batch += res.rows
            if len(batch) >= 50_000:
                writer.write_table(pa.Table.from_pylist(batch, schema=MENTIONS_SCHEMA))
                batch = []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=MENTIONS_SCHEMA))
    finally:
        writer.close()
    tmp.replace(out / TABLE_FILE)
    summary = MentionSummary(
        papers=len(items), papers_ok=ok, papers_skipped=dict(skipped), mentions=mentions_n, rows=rows_n,
        surface_forms=len(forms), names=len(lex.entries), name_targets=sum(len(v) for v in lex.entries.values()),
        share_cited_sentence=round(cited_s / max(rows_n, 1), 4), share_cited_paper=round(cited_p / max(rows_n, 1), 4),
        by_split={k: dict(v) for k, v in by_split.items()}, elapsed_s=round(time.perf_counter() - t0, 1),
        inputs_key=key)
    atomic_write_json(summary_path, {**summary.to_dict(), "extract": str(folder), "corpus": str(corpus_dir)})
    return summary


# ------------------------------------------------------------------------------------ schema


def _schema() -> pa.Schema:
    b, s, i = pa.bool_(), pa.string(), pa.int32()
    return pa.schema([
        ("paper", s), ("year", i), ("split", s), ("section", s), ("section_class", s), ("unit", s),
        ("sentence_index", i), ("sentence", s), ("offset", i), ("surface", s), ("key", s), ("words", pa.int8()),
        ("all_caps", b), ("has_digit", b), ("inner_caps", b), ("capitalised", b), ("lower", b), ("possessive", b),
        ("hyphen_part", b), ("hyphen_rest", s), ("version_suffix", b), ("size_suffix", b), ("in_parens", b),
        ("spelled_out", b), ("in_math", b), ("sentence_start", b), ("prev_word", s), ("next_word", s),
        ("next_head", b), ("next_et_al", b), ("in_front_matter", b), ("names_in_sentence", i), ("names_close", i),
        ("markers_sentence", i), ("markers_clause", i), ("markers_adjacent", i), ("clause_families", pa.list_(s)),
        ("target", s), ("family", s), ("target_kind", s), ("name_source", s), ("support", i), ("candidates", i),
        ("author_surname", b), ("other_adjacent", b), ("other_clause", b), ("adjacent_title_has_name", b),
        ("cited_adjacent", b), ("cited_clause", b), ("cited_sentence", b), ("cited_paper", b),
    ])


MENTIONS_SCHEMA = _schema()


def mentions_schema_json() -> dict[str, Any]:
    """The published schema of a row of ``mentions.parquet`` (``mustcite/schemas/mentions.schema.json``)."""
    return json.loads(resources.files("mustcite.schemas").joinpath("mentions.schema.json").read_text())

"""The consensus of citing papers: how other papers' reference lists cite a work.

``shared/data/citations_cs768/papers.jsonl.xz`` holds the ``.bbl`` files of 6,506 NeurIPS and ICML
papers (313,618 ``\\bibitem`` s). Each is read with the project's ``.bbl`` reader
(:func:`~mustcite.extract.bibtex.parse_bbl`); :class:`Consensus` keeps, per normalised title, the
citing papers with the first author's family name and the year each gives.

:meth:`Consensus.cited_so` answers how many independent papers cite a title as an entry does: same
normalised title, same first-author family name, a year within one (a preprint and its published
version). ``check-refs`` uses it where no proceedings or journal record holds a paper: an entry
cited so by at least :data:`~.check.MIN_ATTESTED` papers is ``verified`` as "cited so by N papers".

**What it proves:** the work exists and is written as other researchers write it (not an invented
title, not a made-up first author or year). **What it does not:** that the venue is right (most of
these items name arXiv or no venue), nor the full author list; a form every citer copied wrongly
passes. Where a record of the paper exists, the record is what the entry is compared with, and a
common wrong form is still wrong.

``mustcite works consensus`` builds the table once into the work folder (``<work>/corpus/consensus.pickle``,
with ``consensus.json``: its source's checksum and figures; ``make demo`` runs it, about a minute of
CPU on 2 cores), and :func:`~.index.load_index` uses it by default when it is there. Another file
given with ``--citations`` (or ``$MUSTCITE_CITATIONS``) is read once and pickled in the cache folder
under a name made of the file's size and modification time.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus.records import normalize_title, surname_key
from ..io import load_pickle, write_pickle_cache

#: bump when the pickled layout changes
CONSENSUS_VERSION = 2
#: titles shorter than this (normalised characters) are too generic to be a work's
MIN_TITLE_CHARS = 12
#: the table built into ``<work>/corpus`` (:func:`build_file`), and its figures
CONSENSUS_FILE = "consensus.pickle"
CONSENSUS_META = "consensus.json"
# one citing item in a title's string: "paper index<TAB>family name<TAB>year", items joined by newlines
# (one string per title, not a list of tuples: the table loads in a new process ten times faster)
_FIELD, _ITEM = "\t", "\n"


@dataclass
class Consensus:
    #: normalised title -> its citing items, "paper index\tfirst author's family name\tyear or 0" joined
    #: by newlines (:meth:`items_of`)
    cites: dict[str, str] = field(default_factory=dict)
    papers: int = 0
    items: int = 0
    version: int = CONSENSUS_VERSION

    def items_of(self, title: str) -> list[tuple[int, str, int]]:
        """The citing items of a normalised title: (citing paper index, family name, year or 0)."""
        got = self.cites.get(title)
        if not got:
            return []
        out = []
        for item in got.split(_ITEM):
            p, fam, year = item.split(_FIELD)
            out.append((int(p), fam, int(year)))
        return out

    def cited_so(self, title: str, first_author: str, year: int | None) -> int:
        """How many papers cite ``title`` with this first author's family name and a year within one."""
        if not first_author or year is None:
            return 0
        got = self.items_of(normalize_title(title or ""))
        fam = surname_key(first_author)
        return len({p for p, s, y in got if s == fam and y and abs(y - int(year)) <= 1})

    def cited(self, title: str) -> int:
        """How many papers cite ``title`` at all."""
        return len({p for p, _, _ in self.items_of(normalize_title(title or ""))})


def _read_paper(line: str) -> list[tuple[str, str, int]]:
    from ..extract.bibtex import parse_bbl

    p = json.loads(line)
    out = []
    for b in p.get("bbl") or ():
        try:
            entries, _ = parse_bbl(b.get("text") or "", b.get("file") or "x.bbl")
        except Exception:  # a malformed .bbl: its items are not read
            continue
        for e in entries:
            norm = normalize_title(e.title or "")
            if len(norm) >= MIN_TITLE_CHARS:
                out.append((norm, surname_key(e.authors[0]) if e.authors else "", int(e.year or 0)))
    return out


def build(path: Path, workers: int | None = None) -> Consensus:
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        lines = [ln for ln in fh if ln.strip()]
    cites: dict[str, list[str]] = defaultdict(list)
    items = 0
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    with ProcessPoolExecutor(workers) as pool:
        for i, got in enumerate(pool.map(_read_paper, lines, chunksize=32)):
            for norm, fam, year in dict.fromkeys(got):          # a paper citing a work twice counts once
                cites[norm].append(f"{i}{_FIELD}{fam.replace(_FIELD, ' ').replace(_ITEM, ' ')}{_FIELD}{year}")
                items += 1
    return Consensus({t: _ITEM.join(v) for t, v in cites.items()}, len(lines), items)


def source_digest(path: Path) -> str:
    """The SHA-256 of a reference-list file: what a built table was made from."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def built_meta(corpus_dir: Path) -> dict | None:
    """The figures of the table built into ``corpus_dir`` (None when there is none)."""
    meta = Path(corpus_dir) / CONSENSUS_META
    try:
        got = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return got if isinstance(got, dict) and (Path(corpus_dir) / CONSENSUS_FILE).is_file() else None


def is_current(source: Path, corpus_dir: Path) -> bool:
    """Whether the table in ``corpus_dir`` was built from ``source`` (same checksum) by this version."""
    meta = built_meta(corpus_dir)
    return bool(meta and meta.get("version") == CONSENSUS_VERSION and meta.get("sha256") == source_digest(source))


def build_file(source: Path, corpus_dir: Path, workers: int | None = None) -> dict:
    """Build the table of ``source`` into ``corpus_dir`` (:data:`CONSENSUS_FILE` and its figures,
    :data:`CONSENSUS_META`); the figures."""
    import time

    t0 = time.perf_counter()
    got = build(source, workers)
    corpus_dir = Path(corpus_dir)
    if not write_pickle_cache(corpus_dir / CONSENSUS_FILE, got):
        raise OSError(f"cannot write {corpus_dir / CONSENSUS_FILE}")
    meta = {"version": CONSENSUS_VERSION, "source": str(source), "sha256": source_digest(source),
            "papers": got.papers, "items": got.items, "titles": len(got.cites),
            "elapsed_s": round(time.perf_counter() - t0, 1)}
    (corpus_dir / CONSENSUS_META).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


#: tables loaded in this process, by file and modification time
_LOADED: dict[tuple[str, int], Consensus] = {}


def load_built(corpus_dir: Path) -> Consensus | None:
    """The table built into ``corpus_dir`` (None when there is none, or it cannot be read)."""
    path = Path(corpus_dir) / CONSENSUS_FILE
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        return None
    if key not in _LOADED:
        try:
            got = load_pickle(path)
        except Exception:  # a damaged file: the checker runs without it
            return None
        if not isinstance(got, Consensus) or getattr(got, "version", 1) != CONSENSUS_VERSION:
            return None             # another version's table: `works consensus` rebuilds it
        _LOADED[key] = got
    return _LOADED[key]


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{CONSENSUS_VERSION}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def load(path: Path, cache_dir: Path | None) -> Consensus:
    """The :class:`Consensus` of a reference-list file, from the cache when current."""
    cached = None
    if cache_dir is not None:
        cached = cache_dir / "refcheck" / f"consensus-{hashlib.sha1(_stamp(path).encode()).hexdigest()[:16]}.pickle"
        if cached.is_file():
            try:
                got = load_pickle(cached)
                if isinstance(got, Consensus) and getattr(got, "version", 1) == CONSENSUS_VERSION:
                    return got
            except Exception:  # a damaged cache file: rebuild it
                pass
    got = build(path)
    if cached is not None:
        write_pickle_cache(cached, got)
    return got

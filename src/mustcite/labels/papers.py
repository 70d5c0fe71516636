"""Labelled papers: citing papers whose references are linked to the pool and (maybe) labelled.

A labelled paper is one extraction output ``<stem>.json`` (reference list, MasterSet Appendix C, with
``paper_id`` from linking and ``type1``/``type2``/``type3``/``must_cite`` from labelling) plus its
``<stem>.meta.json`` (title, abstract, year). Benchmark train queries with qrels are labelled papers
too (:func:`from_qrels`). Every cited pool paper gets per-tier flags; missing labels stay ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.records import normalize_title
from ..errors import DataMissingError, MustciteError
from ..extract.runner import iter_reference_files
from ..extract.works import WorkIndex, paper_names
from ..io import read_json

#: Tiers a recommendation is scored on, in display order.
TIERS: tuple[str, ...] = ("type1", "type2", "type3", "must_cite", "cited")
TIER_NAMES = {"type1": "Type I (baseline)", "type2": "Type II (core)", "type3": "Type III (mentioned >= 3x)",
              "must_cite": "must-cite", "cited": "cited"}
TYPE3_MENTIONS = 3


@dataclass(slots=True)
class CitedPaper:
    """One linked reference of a labelled paper, with its tier flags (None = not labelled)."""

    paper_id: str
    type1: int | None = None
    type2: int | None = None       # 1..5
    type3: int | None = None
    must_cite: bool | None = None

    def __reduce__(self):
        # pickled as its constructor's arguments, not as a slot-state dict per object: a saved model's
        # hundreds of thousands of citations then load without one temporary dict each (their
        # scattered frees kept a third of the loaded list's memory from being reused)
        return CitedPaper, (self.paper_id, self.type1, self.type2, self.type3, self.must_cite)

    def to_dict(self) -> dict[str, Any]:
        return {"paper_id": self.paper_id, "type1": self.type1, "type2": self.type2, "type3": self.type3,
                "must_cite": self.must_cite}

    def flags(self) -> dict[str, int | None]:
        """0/1 per tier (None where unknown); ``cited`` is always 1."""
        t2 = None if self.type2 is None else int(self.type2 >= 4)
        mc = self.must_cite
        if mc is None:
            known = [v for v in (self.type1, t2, self.type3) if v is not None]
            mc = bool(max(known)) if known else None
        return {"type1": self.type1, "type2": t2, "type3": self.type3,
                "must_cite": None if mc is None else int(mc), "cited": 1}

    def weight(self, flags: dict[str, int | None] | None = None) -> float:
        """Vote weight: 1 for a plain citation, up to 3 for a must-cite one (``flags``: this
        citation's :meth:`flags`, when already at hand)."""
        f = self.flags() if flags is None else flags
        return 1.0 + sum(1.0 for t in ("type1", "type2", "type3") if f[t]) * (2.0 / 3.0)


@dataclass
class LabelledPaper:
    id: str
    title: str
    abstract: str = ""
    year: int | None = None
    cites: list[CitedPaper] = field(default_factory=list)
    source: str = ""
    #: cited pool paper -> what this paper says where it cites it (its citation contexts, joined)
    contexts: dict[str, str] = field(default_factory=dict)
    #: cited pool paper -> the short names this paper gives it in the text ("CIFAR-10 [23]")
    names: dict[str, list[str]] = field(default_factory=dict)
    #: other ids of the same paper: the corpus paper it is a version of (a bibliography imported
    #: under its arXiv id), so a query of that paper never learns from this reference list
    versions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = {"id": self.id, "title": self.title, "abstract": self.abstract, "year": self.year,
             "source": self.source, "cites": [c.to_dict() for c in self.cites], "contexts": self.contexts,
             "names": self.names}
        if self.versions:
            d["versions"] = list(self.versions)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LabelledPaper:
        return cls(d["id"], d.get("title") or "", d.get("abstract") or "", d.get("year"),
                   [CitedPaper(**c) for c in d.get("cites", [])], d.get("source", ""),
                   dict(d.get("contexts") or {}), {k: list(v) for k, v in (d.get("names") or {}).items()},
                   [str(v) for v in d.get("versions") or []])

    def ids(self) -> set[str]:
        """Every id this paper goes by: its own and its :attr:`versions`."""
        return {self.id, *self.versions}

    def keep_pool(self, pool_ids: set[str]) -> None:
        """Keep only the citations, contexts and names of pool papers."""
        self.cites = [c for c in self.cites if c.paper_id in pool_ids]
        self.contexts = {k: v for k, v in self.contexts.items() if k in pool_ids}
        self.names = {k: v for k, v in self.names.items() if k in pool_ids}


def _int_or_none(v: Any) -> int | None:
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def cited_from_references(refs: list[dict[str, Any]], pool_ids: set[str] | None = None) -> list[CitedPaper]:
    """Linked references as :class:`CitedPaper` (one per pool paper, strongest labels kept)."""
    by_id: dict[str, CitedPaper] = {}
    for r in refs:
        pid = r.get("paper_id")
        if not pid or (pool_ids is not None and pid not in pool_ids):
            continue
        t3 = _int_or_none(r.get("type3"))
        if t3 is None and isinstance(r.get("mentions"), int) and r.get("mentions"):
            t3 = int(r["mentions"] >= TYPE3_MENTIONS)
        mc = r.get("must_cite")
        c = CitedPaper(pid, _int_or_none(r.get("type1")), _int_or_none(r.get("type2")), t3,
                       None if mc is None else bool(mc))
        old = by_id.get(pid)
        if old is None or c.weight() > old.weight():
            by_id[pid] = c
    return list(by_id.values())


#: characters of citation context kept per (citing paper, cited paper) pair
MAX_CONTEXT_CHARS = 1500
_INLINE_MATH = re.compile(r"\\\(.*?\\\)|\$[^$]*\$")


def contexts_from_references(refs: list[dict[str, Any]], pool_ids: set[str] | None = None) -> dict[str, str]:
    """Cited pool paper -> its citation contexts in this reference list, joined (inline math removed,
    at most :data:`MAX_CONTEXT_CHARS` characters)."""
    out: dict[str, list[str]] = {}
    for r in refs:
        pid = r.get("paper_id")
        if not pid or (pool_ids is not None and pid not in pool_ids):
            continue
        for c in r.get("contexts") or []:
            text = c.get("context") if isinstance(c, dict) else None
            if isinstance(text, str) and text.strip():
                out.setdefault(pid, []).append(" ".join(_INLINE_MATH.sub(" ", text).split()))
    return {pid: " ".join(dict.fromkeys(parts))[:MAX_CONTEXT_CHARS] for pid, parts in out.items()}


def names_from_references(refs: list[dict[str, Any]], pool_ids: set[str] | None = None) -> dict[str, list[str]]:
    """Cited pool paper -> the names this reference list's contexts give it
    (:func:`~mustcite.extract.works.paper_names`)."""
    pid_of = {int(r.get("target") or 0): r.get("paper_id") for r in refs if isinstance(r, dict)}
    out: dict[str, list[str]] = {}
    for use in paper_names(refs):
        pid = pid_of.get(use.target)
        if pid and (pool_ids is None or pid in pool_ids):
            out.setdefault(pid, []).append(use.name)
    return out


@dataclass
class CitingText:
    """What one citing paper says of the pool papers it cites: contexts and names."""

    contexts: dict[str, str]
    names: dict[str, list[str]]


def _read_refs(path: Path, stem: str, works: WorkIndex | None) -> list[Any] | None:
    """A reference file's list (None when it holds no list), with the works its unlinked
    references name as their ``paper_id`` when a catalogue is given."""
    refs = read_json(path)
    if not isinstance(refs, list):
        return None
    return works.resolve(stem, refs) if works is not None else refs


def meta_versions(meta: dict[str, Any], stem: str) -> list[str]:
    """The other ids a reference file's paper goes by, from its ``<stem>.meta.json``: the corpus
    paper it is a version of (``corpus_paper_id``, or ``paper_id``) and every corpus record listed as
    a version of it (``corpus_versions``, or ``versions``)."""
    found: list[Any] = [meta.get("corpus_paper_id"), meta.get("paper_id")]
    for key in ("corpus_versions", "versions"):
        if isinstance(meta.get(key), list):
            found += meta[key]
    return [str(v) for v in dict.fromkeys(found) if isinstance(v, str) and v and v != stem]


def load_reference_dir(folder: str | Path, pool_ids: set[str] | None = None,
                       manifest_titles: dict[str, dict[str, Any]] | None = None,
                       works: WorkIndex | None = None) -> list[LabelledPaper]:
    """Every ``<stem>.json`` reference file of ``folder`` with at least one linked pool paper (or,
    given a catalogue of cited works, a pool work)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataMissingError(f"reference folder {folder} does not exist",
                               hint="run `mustcite extract` and `mustcite link` first")
    out = []
    for stem, path in iter_reference_files(folder, labelled=True):
        refs = _read_refs(path, stem, works)
        if refs is None:
            continue
        try:
            meta = read_json(folder / f"{stem}.meta.json", missing_ok=True) or {}
        except MustciteError:
            meta = {}
        meta = meta if isinstance(meta, dict) else {}
        extra = (manifest_titles or {}).get(stem, {})
        title = meta.get("title") or extra.get("title") or ""
        if not title:
            continue
        cites = cited_from_references(refs, pool_ids)
        if not cites:
            continue
        out.append(LabelledPaper(stem, title, meta.get("abstract") or extra.get("abstract") or "",
                                 _int_or_none(meta.get("year") or extra.get("year")), cites, str(folder),
                                 contexts_from_references(refs, pool_ids), names_from_references(refs, pool_ids),
                                 meta_versions(meta, stem)))
    return out


def read_citing_text(folders: list[str | Path], stems: set[str], pool_ids: set[str] | None = None,
                  works: WorkIndex | None = None) -> dict[str, CitingText]:
    """Citation contexts and names of the papers ``stems`` (file stems) found in the reference
    ``folders``."""
    out: dict[str, CitingText] = {}
    for folder in folders:
        for stem, path in iter_reference_files(folder, labelled=True):
            if stem not in stems or stem in out:
                continue
            refs = _read_refs(path, stem, works)
            if refs is not None:
                out[stem] = CitingText(contexts_from_references(refs, pool_ids), names_from_references(refs, pool_ids))
    return out


def from_qrels(queries: list[dict[str, Any]], qrels: dict[str, dict[str, dict[str, int]]],
               source: str = "benchmark") -> list[LabelledPaper]:
    """Benchmark queries plus per-ground-truth qrels ``{gt: {qid: {pid: rel}}}`` as labelled papers.

    Ground-truth names containing ``type1``/``type2``/``type3``/``combined``/``must`` fill the
    matching flags; any qrels entry counts as a citation.
    """
    out = []
    for q in queries:
        qid = str(q["id"])
        per: dict[str, CitedPaper] = {}
        for gt, table in qrels.items():
            g = gt.lower().replace("-", "").replace("_", "")
            for pid, rel in table.get(qid, {}).items():
                c = per.setdefault(pid, CitedPaper(pid))
                pos = int(rel > 0)
                if "type1" in g or g == "typei":
                    c.type1 = max(c.type1 or 0, pos)
                elif "type2" in g or g == "typeii":
                    c.type2 = max(c.type2 or 0, 5 if pos else 1)
                elif "type3" in g or g == "typeiii":
                    c.type3 = max(c.type3 or 0, pos)
                elif "combined" in g or "must" in g:
                    c.must_cite = bool(c.must_cite) or bool(pos)
        for c in per.values():   # a ground truth that exists but omits a cited paper says "no"
            gts = {gt.lower().replace("-", "").replace("_", "") for gt in qrels}
            if c.type1 is None and ("type1" in gts or "typei" in gts):
                c.type1 = 0
            if c.type2 is None and ("type2" in gts or "typeii" in gts):
                c.type2 = 1
            if c.type3 is None and ("type3" in gts or "typeiii" in gts):
                c.type3 = 0
            if c.must_cite is None and any("must" in g or "combined" in g for g in gts):
                c.must_cite = False
        if per:
            out.append(LabelledPaper(qid, q.get("title") or "", q.get("abstract") or "", _int_or_none(q.get("year")),
                                     list(per.values()), source))
    return out


def load_reference_dirs(refs: list[str | Path], pool_ids: set[str], works: WorkIndex | None = None,
                        exclude: set[str] | frozenset[str] = frozenset()) -> list[LabelledPaper]:
    """The labelled papers of several reference folders, each paper once: the first folder wins,
    and a paper counts as already read when any of its ids (:meth:`LabelledPaper.ids`) or its
    normalised title is (a bibliography imported under an arXiv id and the full text of the same
    paper are one citing paper). ``exclude``: ids and normalised titles of papers that must not
    become labelled papers under any of their ids (held-out queries)."""
    labelled: list[LabelledPaper] = []
    seen: set[str] = set(exclude)
    for folder in refs:
        for p in load_reference_dir(folder, pool_ids, works=works):
            keys = p.ids() | ({normalize_title(p.title)} - {""})
            if keys.isdisjoint(seen):
                seen |= keys
                labelled.append(p)
    return labelled


def paper_keys(papers: list[dict[str, Any]]) -> set[str]:
    """Every id (``id``, ``paper_id``, ``versions``) and normalised title of ``papers`` (query
    records): what :func:`load_reference_dirs` needs to keep them, under any id, out of the
    labelled papers."""
    out: set[str] = set()
    for q in papers:
        out |= {str(v) for v in (q.get("id"), q.get("paper_id"), *(q.get("versions") or [])) if v}
        out |= {normalize_title(q.get("title"))} - {""}
    return out

"""Citation linking: match each extracted reference to a corpus paper by its title.

Two steps per reference: the normalised title (:func:`normalize_title`) looked up exactly, then a
fuzzy match (rapidfuzz ``ratio`` on normalised titles, threshold :data:`FUZZY_THRESHOLD`) among
candidates that share one of the title's two rarest significant words (blocking on an inverted
index of title words) and have a similar length, so one lookup touches tens to hundreds of
titles, not 150K. A reference never links to a paper published after the citing paper
(candidate year <= citing year). The match is stored in the reference file as ``paper_id`` and
``link_score`` (1.0 exact, else ratio/100).

Identifiers first: when a reference carries a DOI, an arXiv id or a URL (the LaTeX/BibTeX path
fills ``doi``/``arxiv``/``url``) and the index knows identifiers of its papers
(:meth:`TitleIndex.add_identifiers`, from the corpus ``url``/``pdf`` columns or a pool's ``doi``/
``arxiv`` fields), an identifier match wins over the title (``link_score`` 1.0, ``link_by`` names
the identifier). :func:`identifier_keys` maps a URL, DOI or arXiv id to comparable keys
(``doi:``, ``arxiv:``, and ACL Anthology, OpenReview, NeurIPS-proceedings and PMLR page ids, which
is what the corpus URLs carry: it holds almost no DOIs or arXiv URLs).

:class:`TitleIndex` is built once per process; :func:`link_references` is a pure per-paper
function; :func:`link_dir` updates an extraction folder in place and records the link rate.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from rapidfuzz import fuzz, process

from ..corpus.identifiers import identifier_keys, normalize_arxiv, normalize_doi  # noqa: F401
from ..corpus.records import normalize_title
from ..errors import DataMissingError, MustciteError
from ..io import atomic_write_json
from ..parallel import pmap
from ..run_markers import run_marker
from .records import validate_reference_list
from .runner import META_SUFFIX, SUMMARY, iter_reference_files

#: Fuzzy threshold (rapidfuzz ratio on normalised titles, 0-100). Chosen by inspecting every fuzzy
#: match of 60 NeurIPS 2023 papers' references against the 120K-paper corpus: from 93 up the pairs
#: are the same work with OCR or casing noise ("Howt0100m", "Tramception", "Generative adversarial
#: networks" vs "... Nets"); between 90 and 93 they are mostly different papers with templated
#: titles ("Deep learning with differential privacy" vs "... with label differential privacy",
#: "P-tuning v2" vs "P-Tuning", "Invariant risk minimization" vs "... Games").
FUZZY_THRESHOLD = 93.0
MIN_FUZZY_LEN = 12        # shorter normalised titles ("Attention", "BERT") only match exactly
LENGTH_SLACK = 0.25       # candidate length within +-25 % of the query's
BLOCK_WORDS = 2           # candidates share at least one of the query's 2 rarest significant words
MIN_SUBTITLE_WORDS = 5    # a title matches a corpus title's part after its colon only from 5 words
MIN_SUBTITLE_CHARS = 30

STOPWORDS = frozenset("""a an the of for on in to and with via from by at as is are be using towards toward
what when how why do does can we our your its their new learning""".split())


# a year or "June 2020" that the reference parser left at the end of a title
_TRAILING_DATE = re.compile(r"(?:[,.]?\s*(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?)?"
                            r"[,.]?\s*\(?(?:19|20)\d\d[a-z]?\)?\.?\s*$", re.I)

_NUMBER = re.compile(r"\d+")

_ENDS_WITH_YEAR = re.compile(r"(?:19|20)\d\d[a-z]?\)?\.?\s*$")


def clean_title(title: str) -> str:
    """A reference title without a trailing year ("Densely connected convolutional networks, 2018")."""
    title = title or ""
    if not _ENDS_WITH_YEAR.search(title[-8:]):
        return title
    cleaned = _TRAILING_DATE.sub("", title).strip()
    return cleaned if len(cleaned) >= 4 else (title or "")


_INITIAL = re.compile(r"(?:^|[\s,])[A-Z]\.(?=\s|-|,|$)")
_QUOTE_CHARS = re.compile(r"[\"“”]")
_QUOTED = re.compile(r"[\"“]([^\"“”]{10,300}?)[\"”]")


def looks_like_authors(title: str) -> bool:
    """Whether a parsed title is really an author list ("Chang, K. Lee, and K. Toutanova")."""
    return len(_INITIAL.findall(title or "")) >= 2


def recover_title(title: str, raw: str) -> str:
    """A reference's title where the parser took its author list for it: the quoted title of an
    IEEE-style reference (``V. Nair and G. E. Hinton, "Rectified linear units ...," in ...``), or the
    sentence after an author list (``T.-Y. Lin, ..., and P. Dollar. Focal loss for dense object
    detection. In ...``); else the title as given."""
    title = title or ""
    authorish = looks_like_authors(title)
    if not authorish and not _QUOTE_CHARS.search(title):
        return title
    for text in (title, raw or ""):
        m = _QUOTED.search(text)
        if m and len(m.group(1).split()) >= 3:
            return m.group(1).strip(" ,.")
    if authorish and raw:
        i = raw.find(title)
        if i >= 0:
            rest = re.sub(r"^[\s.,]+", "", raw[i + len(title):])
            sentence = re.split(r"(?<=[a-z0-9?!)])\.\s|[?!]\s", rest, maxsplit=1)[0].strip(" .")
            if len(sentence.split()) >= 3 and not re.match(r"(In\b|Proceedings|arXiv|Advances in)", sentence):
                return sentence
    return title


# ---- other readings of a title the parser got wrong ----------------------------------------

#: a parsed "title" that is no title: page/volume fragments ("33, pp", "3844-3852, Curran Associates
#: Inc., 2016", "Inter"), a URL, or empty -- what the parser leaves when the real title is quoted
#: (IEEE style) or follows an author list it did not recognise
_URLISH = re.compile(r"^\s*(?:url\b|https?:|www\.|doi\b)", re.I)
_ALPHA_WORD = re.compile(r"[A-Za-z][A-Za-z\-']{2,}")
_DUP_PREFIX = re.compile(r"^\s*([^:]{2,60}?)\s*:\s*\1\s*:\s*", re.I)
_YEAR_TAIL = re.compile(r",\s*(?:19|20)\d\d\b.*$")
_VENUE_IN = re.compile(r"\b[Ii]n:?\s+_[^_]{3,}_")
_SEGMENT_SPLIT = re.compile(r"(?<=[^\sA-Z])\.\s+|(?<=[A-Z]\.):\s+|[\"“”_*]|,\s+in:?\s+|\(\s*(?:19|20)\d\d[a-z]?\s*\)")
_VENUEISH = re.compile(r"^(?:the\s+)?(?:proceedings|advances in|journal|transactions|international|conference|"
                       r"workshop|annual|symposium|ieee|acm|arxiv|corr|url|https?|doi|springer|pmlr|vol|pages|pp|"
                       r"technical report)\b",
                       re.I)
#: a raw-text segment is looked up (exactly) only with at least this many words and characters
MIN_SEGMENT_WORDS = 4
MIN_SEGMENT_CHARS = 20
#: a title found by one of the repairs below links only to a paper of about the reference's year
#: (``ref_year - 1 <= year <= ref_year + YEAR_SLACK``; an arXiv version precedes its proceedings)
YEAR_SLACK = 3


def is_title_like(title: str) -> bool:
    """False for what the parser took for a title but names no work: page or volume fragments
    (``"33, pp"``, ``"3844-3852, Curran Associates Inc., 2016"``), a URL, an author list, empty."""
    t = (title or "").strip()
    if not t or _URLISH.match(t) or looks_like_authors(t):
        return False
    return len(_ALPHA_WORD.findall(t)) >= 2 and not re.match(r"^\W*\d", t)


def repaired_titles(title: str, raw: str) -> list[str]:
    """Other readings of a reference's title, best first, for when the parsed one links to nothing:
    :func:`recover_title` (author list taken for the title); the quoted title of an IEEE-style
    ``raw`` when the parsed title is a page/volume fragment or a URL (``"33, pp"``); a doubled name
    written once (``"Adaptformer: Adaptformer: Adapting ..."``); the title cut before a trailing
    ``", 2023 (also accepted in Neurips23)"``. Each is matched like a title (exact, then fuzzy)."""
    title, raw = title or "", raw or ""
    out = [recover_title(title, raw)]
    if not is_title_like(title):
        m = _QUOTED.search(raw)
        if m and len(m.group(1).split()) >= 3:
            out.append(m.group(1).strip(" ,."))
    for t in list(out):
        d = _DUP_PREFIX.sub(lambda m: m.group(1) + ": ", t)
        if d != t:
            out.append(d)
        cut = _YEAR_TAIL.sub("", t).strip(" ,.")
        if cut != t and len(cut.split()) >= 4:
            out.append(cut)
    return [t for t in dict.fromkeys(out) if t and t != title]


def raw_segments(raw: str) -> list[str]:
    """Title-sized pieces of a raw reference string (split at sentence ends, quotes, italics and
    "In"), venue names and author lists left out; each is looked up as an exact title. Finds the
    title the parser missed after an author list it took for the title, a title cut at a "?"
    (``"What to pre-train on? efficient intermediate task selection"``) or an empty title."""
    text = _VENUE_IN.sub(" | ", raw or "")
    out = []
    for seg in _SEGMENT_SPLIT.split(text):
        seg = seg.strip(" ,.;:|")
        if len(seg) < MIN_SEGMENT_CHARS or len(seg.split()) < MIN_SEGMENT_WORDS:
            continue
        if _VENUEISH.match(re.sub(r"^[Ii]n:?\s+", "", seg)) or looks_like_authors(seg) or _URLISH.match(seg):
            continue
        out.append(clean_title(seg))
    return list(dict.fromkeys(out))


# ---- identifiers: mustcite.corpus.identifiers (re-exported here for the linker's users) ------------


def _words(norm: str) -> list[str]:
    """Significant words of a normalised title (the blocking keys)."""
    words = [w for w in norm.split() if len(w) > 2 and w not in STOPWORDS]
    return list(dict.fromkeys(words or norm.split()[:1]))


@dataclass
class TitleIndex:
    """Normalised corpus titles with exact and blocked-fuzzy lookup."""

    ids: list[str]
    years: list[int | None]
    norms: list[str]
    exact: dict[str, list[int]] = field(default_factory=dict)
    blocks: dict[str, np.ndarray] = field(default_factory=dict)
    _lens: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32), repr=False)
    _years: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32), repr=False)
    _norms: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object), repr=False)
    _block_lens: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    #: identifier key (:func:`identifier_keys`) -> rows; empty unless :meth:`add_identifiers` ran
    id_rows: dict[str, list[int]] = field(default_factory=dict, repr=False)
    #: normalised part after the first colon of a title ("SparseGPT: Massive language models can be
    #: accurately pruned in one-shot" -> "massive language models ...") -> rows (:meth:`match_subtitle`)
    subtitles: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def add_identifiers(self, urls: list[str | None] | None = None, pdfs: list[str | None] | None = None,
                        dois: list[str | None] | None = None, arxiv: list[str | None] | None = None
                        ) -> TitleIndex:
        """Index the papers' identifiers (lists aligned with ``ids``; any may be None); returns self."""
        n = len(self.ids)
        cols = [c if c is not None else [None] * n for c in (urls, pdfs, dois, arxiv)]
        rows: dict[str, list[int]] = defaultdict(list)
        for i, (u, p, d, a) in enumerate(zip(*cols)):
            for k in identifier_keys(doi=d, arxiv=a, url=u, pdf=p):
                rows[k].append(i)
        self.id_rows = dict(rows)
        return self

    # pickled with the postings in one array: a dict of tens of thousands of small arrays takes
    # seconds to unpickle, one array and its offsets a few milliseconds
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        keys = list(self.blocks)
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(self.blocks[k]) for k in keys])
        rows = np.concatenate([self.blocks[k] for k in keys]) if keys else np.zeros(0, dtype=np.int32)
        state["blocks"] = ("postings", keys, offsets, rows)
        state.pop("_block_lens", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        blocks = state.get("blocks")
        if isinstance(blocks, tuple) and blocks and blocks[0] == "postings":
            _, keys, offsets, rows = blocks
            lens = state["_lens"][rows]
            bounds = list(zip(keys, offsets[:-1].tolist(), offsets[1:].tolist()))
            state["blocks"] = {k: rows[a:b] for k, a, b in bounds}
            state["_block_lens"] = {k: lens[a:b] for k, a, b in bounds}
        self.__dict__.update(state)

    @classmethod
    def from_pool(cls, pool: list[dict[str, Any]]) -> TitleIndex:
        """The index of a recommender's pool (dicts with ``paper_id``, ``title``, ``year`` and,
        where present, ``url``, ``pdf``, ``doi``, ``arxiv``), identifiers included."""
        idx = cls.build([p["paper_id"] for p in pool], [p.get("title") or "" for p in pool],
                        [p.get("year") for p in pool])
        return idx.add_identifiers([p.get("url") for p in pool], [p.get("pdf") for p in pool],
                                   [p.get("doi") for p in pool], [p.get("arxiv") for p in pool])

    def match_identifiers(self, ref: dict[str, Any], *, max_year: int | None = None) -> tuple[str, str] | None:
        """``(paper_id, key kind)`` of the paper sharing an identifier with the reference, or None."""
        if not self.id_rows:
            return None
        for k in identifier_keys(doi=ref.get("doi"), arxiv=ref.get("arxiv"), url=ref.get("url")):
            rows = [i for i in self.id_rows.get(k, ()) if self._allowed(i, max_year)]
            if rows:
                return self.ids[self._pick(rows, ref.get("year"))], k.split(":", 1)[0]
        return None

    @classmethod
    def build(cls, ids: list[str], titles: list[str], years: list[int | None],
              norms: list[str] | None = None) -> TitleIndex:
        norms = norms if norms is not None else [normalize_title(t) for t in titles]
        idx = cls(list(ids), list(years), [n or "" for n in norms])
        exact: dict[str, list[int]] = defaultdict(list)
        blocks: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(idx.norms):
            if not n:
                continue
            exact[n].append(i)
            for k in _words(n):
                blocks[k].append(i)
        idx.exact = dict(exact)
        subs: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(titles):
            head, sep, tail = (t or "").partition(":")
            if not sep:
                continue
            sub = normalize_title(tail)
            if len(sub) >= MIN_SUBTITLE_CHARS and len(sub.split()) >= MIN_SUBTITLE_WORDS and sub not in exact:
                subs[sub].append(i)
        idx.subtitles = dict(subs)
        idx._norms = np.array(idx.norms, dtype=object)
        idx._lens = np.fromiter((len(n) for n in idx.norms), dtype=np.int32, count=len(idx.norms))
        # postings sorted by title length, so a length window is two binary searches
        for k, v in blocks.items():
            arr = np.asarray(v, dtype=np.int32)
            arr = arr[np.argsort(idx._lens[arr], kind="stable")]
            idx.blocks[k] = arr
            idx._block_lens[k] = idx._lens[arr]
        # unknown year: never excluded by the year constraint
        idx._years = np.fromiter((y if y is not None else -1 for y in idx.years), dtype=np.int32,
                                 count=len(idx.years))
        return idx

    @classmethod
    def from_parquet(cls, path: str | Path) -> TitleIndex:
        path = Path(path)
        if not path.is_file():
            raise DataMissingError("corpus store not found", path=path,
                                   hint="build it with `mustcite corpus build`")
        try:
            names = pq.read_schema(path).names
            extra = [c for c in ("title_norm", "url", "pdf", "doi", "arxiv") if c in names]
            t = pq.read_table(path, columns=["paper_id", "title", "year"] + extra)
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise MustciteError(f"cannot read corpus store: {exc}", path=path) from None
        norms = t.column("title_norm").to_pylist() if "title_norm" in extra else None
        idx = cls.build(t.column("paper_id").to_pylist(), t.column("title").to_pylist(),
                        t.column("year").to_pylist(), norms)
        col = {c: t.column(c).to_pylist() for c in ("url", "pdf", "doi", "arxiv") if c in extra}
        if col:
            idx.add_identifiers(col.get("url"), col.get("pdf"), col.get("doi"), col.get("arxiv"))
        return idx

    def __len__(self) -> int:
        return len(self.ids)

    def _allowed(self, i: int, max_year: int | None) -> bool:
        y = self.years[i]
        return max_year is None or y is None or y <= max_year

    def _pick(self, rows: list[int], ref_year: int | None) -> int:
        """Among equally good rows, prefer the year closest to the reference's year."""
        if ref_year is None or len(rows) == 1:
            return rows[0]
        return min(rows, key=lambda i: (abs((self.years[i] or 0) - ref_year), i))

    def _near_year(self, i: int, ref_year: int | None) -> bool:
        y = self.years[i]
        return ref_year is None or y is None or ref_year - 1 <= y <= ref_year + YEAR_SLACK

    def match_exact(self, title: str, *, ref_year: int | None = None, max_year: int | None = None,
                    near_year: bool = False) -> tuple[str, float] | None:
        """``(paper_id, 1.0)`` of the corpus paper whose normalised title is ``title``'s, or None
        (``near_year``: only a paper of about ``ref_year``, see :data:`YEAR_SLACK`)."""
        norm = normalize_title(clean_title(title))
        rows = [i for i in self.exact.get(norm, ()) if self._allowed(i, max_year)
                and (not near_year or self._near_year(i, ref_year))]
        return (self.ids[self._pick(rows, ref_year)], 1.0) if rows else None

    def match_subtitle(self, title: str, *, ref_year: int | None = None,
                       max_year: int | None = None) -> tuple[str, float] | None:
        """``(paper_id, 1.0)`` of the corpus paper whose title after its name and colon is ``title``
        ("Massive language models can be accurately pruned in one-shot" -> "SparseGPT: Massive ..."),
        a paper of about ``ref_year`` only; None if none."""
        norm = normalize_title(clean_title(title))
        if len(norm) < MIN_SUBTITLE_CHARS or len(norm.split()) < MIN_SUBTITLE_WORDS:
            return None
        rows = [i for i in self.subtitles.get(norm, ()) if self._allowed(i, max_year) and self._near_year(i, ref_year)]
        return (self.ids[self._pick(rows, ref_year)], 1.0) if rows else None

    def match(self, title: str, *, ref_year: int | None = None,
              max_year: int | None = None, near_year: bool = False) -> tuple[str, float] | None:
        """``(paper_id, score in 0-1)`` of the best corpus title for ``title``, or None."""
        norm = normalize_title(clean_title(title))
        if not norm:
            return None
        rows = [i for i in self.exact.get(norm, ()) if self._allowed(i, max_year)
                and (not near_year or self._near_year(i, ref_year))]
        if rows:
            return self.ids[self._pick(rows, ref_year)], 1.0
        if len(norm) < MIN_FUZZY_LEN:
            return None
        lo, hi = len(norm) * (1 - LENGTH_SLACK), len(norm) * (1 + LENGTH_SLACK)
        # blocking: the postings of the query's rarest words (an OCR-garbled word is simply not
        # in the index, so it is never chosen)
        present = sorted((len(self.blocks[w]), w) for w in _words(norm) if w in self.blocks)
        if not present:
            return None
        parts = []
        for _, w in present[:BLOCK_WORDS]:
            bl = self._block_lens[w]
            parts.append(self.blocks[w][np.searchsorted(bl, lo, "left"):np.searchsorted(bl, hi, "right")])
        rows_arr = np.concatenate(parts)  # a title in both postings is scored twice: harmless
        if max_year is not None and len(rows_arr):
            rows_arr = rows_arr[self._years[rows_arr] <= max_year]
        if not len(rows_arr):
            return None
        choices = self._norms[rows_arr]
        hits = process.extract(norm, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_THRESHOLD, limit=5)
        if not hits:
            return None
        hits = [(h[0], h[1], int(rows_arr[h[2]])) for h in hits]
        if near_year:   # a repaired title: also the same numbers ("SEED-Bench-2" is not "SEED-Bench")
            nums = sorted(_NUMBER.findall(norm))
            hits = [h for h in hits if self._near_year(h[2], ref_year) and sorted(_NUMBER.findall(h[0])) == nums]
            if not hits:
                return None
        best = max(h[1] for h in hits)
        rows = [h[2] for h in hits if h[1] == best]
        return self.ids[self._pick(rows, ref_year)], round(best / 100.0, 4)


def match_reference(ref: dict[str, Any], index: TitleIndex,
                    citing_year: int | None = None) -> tuple[str, float, str] | None:
    """``(paper_id, link_score, rule)`` of the corpus paper a reference names, or None. Rules, in
    order: ``doi``/``arxiv``/``acl``/... (an identifier), ``title`` (the parsed title, exact then
    fuzzy), then, only when those fail, repairs of a title the parser got wrong, each linking only to
    a paper of about the reference's year (:data:`YEAR_SLACK`): ``repaired`` (:func:`repaired_titles`,
    exact then fuzzy), ``raw_segment`` (:func:`raw_segments`, exact), ``subtitle`` (the title is the
    part after a corpus title's colon, :meth:`TitleIndex.match_subtitle`)."""
    by_id = index.match_identifiers(ref, max_year=citing_year)
    if by_id is not None:
        return by_id[0], 1.0, by_id[1]
    title, raw = str(ref.get("title") or ""), str(ref.get("raw") or "")
    year = ref.get("year") if isinstance(ref.get("year"), int) else None
    hit = index.match(title, ref_year=year, max_year=citing_year)
    if hit:
        return hit[0], hit[1], "title"
    repaired = repaired_titles(title, raw)
    for t in repaired:
        hit = index.match(t, ref_year=year, max_year=citing_year, near_year=True)
        if hit:
            return hit[0], hit[1], "repaired"
    for seg in raw_segments(raw):
        hit = index.match_exact(seg, ref_year=year, max_year=citing_year, near_year=True)
        if hit:
            return hit[0], hit[1], "raw_segment"
    for t in [title, *repaired]:
        hit = index.match_subtitle(t, ref_year=year, max_year=citing_year)
        if hit:
            return hit[0], hit[1], "subtitle"
    return None


def link_references(refs: list[dict[str, Any]], index: TitleIndex,
                    citing_year: int | None = None) -> list[dict[str, Any]]:
    """Return copies of ``refs`` with ``paper_id``/``link_score`` set (None when unmatched).
    A reference's DOI / arXiv id / URL is tried first (``link_by`` then names it), then its title,
    then repairs of a mis-parsed title (:func:`match_reference`)."""
    out = []
    for r in refs:
        r = dict(r)
        hit = match_reference(r, index, citing_year)
        if hit is None:
            r["paper_id"], r["link_score"] = None, None
        else:
            r["paper_id"], r["link_score"] = hit[0], hit[1]
            if hit[2] not in _TITLE_RULES:
                r["link_by"] = hit[2]
        out.append(r)
    return out


_TITLE_RULES = frozenset({"title", "repaired", "raw_segment", "subtitle"})


# ---- an extraction folder ----------------------------------------------------------------

_INDEX: TitleIndex | None = None
_INDEX_PATH: str | None = None


def load_index(corpus_path: str | Path) -> TitleIndex:
    """The process-wide index for ``corpus_path`` (built on first use; forked workers inherit it)."""
    global _INDEX, _INDEX_PATH
    key = str(Path(corpus_path).resolve())
    if _INDEX is None or _INDEX_PATH != key:
        _INDEX, _INDEX_PATH = TitleIndex.from_parquet(corpus_path), key
    return _INDEX


def _citing_year(meta_path: Path) -> int | None:
    try:
        y = json.loads(meta_path.read_text(encoding="utf-8")).get("year")
    except (OSError, ValueError):
        return None
    return int(y) if isinstance(y, int) else None


def link_file(args: tuple[str, str]) -> dict[str, Any]:
    """Link one reference file in place (atomically); returns ``{paper, references, linked, ...}``."""
    ref_path, corpus_path = Path(args[0]), args[1]
    stem = ref_path.name[: -len(".json")]
    try:
        try:
            refs = json.loads(ref_path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:
            raise MustciteError(f"unreadable reference file: {exc}", path=ref_path) from None
        validate_reference_list(refs, path=ref_path)
    except MustciteError as exc:
        return {"paper": stem, "references": 0, "linked": 0, "exact": 0, "error": str(exc)}
    year = _citing_year(ref_path.with_name(stem + META_SUFFIX))
    linked = link_references(refs, load_index(corpus_path), year)
    atomic_write_json(ref_path, linked, indent=None)
    n_linked = sum(1 for r in linked if r["paper_id"])
    return {"paper": stem, "references": len(linked), "linked": n_linked,
            "exact": sum(1 for r in linked if r["link_score"] == 1.0), "citing_year": year}


@dataclass
class LinkSummary:
    papers: int
    references: int
    linked: int
    exact: int
    errors: int
    corpus: str
    corpus_papers: int
    threshold: float
    elapsed_s: float

    @property
    def rate(self) -> float:
        return self.linked / self.references if self.references else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["link_rate"] = round(self.rate, 4)
        return d


def _link_lost(args: tuple[str, str], message: str) -> dict[str, Any]:
    """The row of a file the engine could not link (its worker died): an error, file untouched."""
    stem = Path(args[0]).name[: -len(".json")]
    return {"paper": stem, "references": 0, "linked": 0, "exact": 0, "error": message}


def link_dir(out_dir: str | Path, corpus_path: str | Path, *, workers: int | None = None,
             progress: bool = True, engine: Any = None) -> LinkSummary:
    """Link every reference file in an extraction folder; writes the link figures into summary.json.
    The files are rewritten in place inside the run marker ``out_dir/.mustcite/run-link.json``
    (:mod:`mustcite.run_markers`), so a crash leaves the folder marked as partially linked.

    ``engine`` (:mod:`mustcite.engine`) runs :func:`link_file` per paper; on Ray each worker
    process builds the title index once from ``corpus_path`` (which must be readable there)."""
    out = Path(out_dir)
    if not out.is_dir():
        raise DataMissingError("extraction folder not found", path=out,
                               hint="run `mustcite extract PATH... --out DIR` first")
    t0 = time.perf_counter()
    index = load_index(corpus_path)  # built here once; forked workers share it
    files = [str(p) for _, p in iter_reference_files(out)]
    with run_marker(out, "link", expected=len(files), options={"corpus": str(corpus_path)}) as counts:
        rows = list(pmap(link_file, [(f, str(corpus_path)) for f in files], workers=workers,
                         desc="link", progress=progress, engine=engine, on_fail=_link_lost, unit="paper"))
        summary = LinkSummary(
            papers=len(rows), references=sum(r["references"] for r in rows),
            linked=sum(r["linked"] for r in rows), exact=sum(r["exact"] for r in rows),
            errors=sum(1 for r in rows if r.get("error")), corpus=str(corpus_path), corpus_papers=len(index),
            threshold=FUZZY_THRESHOLD, elapsed_s=round(time.perf_counter() - t0, 3))
        summary_path = out / SUMMARY
        try:
            doc = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
        if not isinstance(doc, dict):
            doc = {}
        by_paper = {r["paper"]: r for r in rows}
        for row in doc.get("papers", []):
            r = by_paper.get(row.get("paper"))
            if r is not None:
                row["linked"] = r["linked"]
        doc["link"] = summary.to_dict()
        doc["link"]["errors_detail"] = [r for r in rows if r.get("error")][:50]
        atomic_write_json(summary_path, doc)
        counts.update(papers=summary.papers, references=summary.references, linked=summary.linked,
                      errors=summary.errors)
    return summary

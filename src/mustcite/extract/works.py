"""The catalogue of cited works: every extracted reference that links to no corpus paper, resolved
to one record per work (a paper outside the corpus, a dataset, software, a book, a web page).

Per paper (:func:`unlinked_mentions`, a pure function of one reference file): the references with
no ``paper_id``, each with its identifiers (DOI, arXiv id and venue page ids read from the
reference's own fields and its raw text, :func:`~mustcite.extract.link.identifier_keys`), its
normalised title, year, first-author surname and labels.

Across papers (:func:`cluster_mentions`): union-find over the mentions.

1. An identifier shared by two mentions joins them.
2. The same normalised title joins mentions whose first authors agree (or one is unknown) and
   whose years are within :data:`YEAR_SLACK_SAME_AUTHOR` (arXiv and proceedings years of one
   paper differ); without an author on either side, within one year. A title of at least
   :data:`LONG_TITLE_WORDS` significant words needs no agreeing author.
3. Titles that differ by OCR or wording slips join when rapidfuzz's ``ratio`` is at least the
   linker's threshold (:data:`~mustcite.extract.link.FUZZY_THRESHOLD`), among titles that share
   one of their rarest significant words, with years within one and first authors that agree
   (or a long title).

Titles too short or generic to identify a work alone ("Technical report", "Online") take part
only through their identifiers. Each cluster becomes a :class:`Work` with the commonest title,
year, authors and venue of its mentions, all its identifiers, its :func:`work_kind`, and the papers
that cite it (with their years and labels): :func:`build_catalogue` writes both tables beside the
corpus papers (``corpus/works.parquet`` and ``corpus/work_citations.parquet``; schema
``mustcite/schemas/works.schema.json``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rapidfuzz import fuzz

from ..corpus.records import normalize_title
from ..errors import DataMissingError
from ..io import atomic_write_json, read_json
from .link import FUZZY_THRESHOLD, STOPWORDS, clean_title, identifier_keys

#: first authors agree: a normalised title may join mentions this many years apart
YEAR_SLACK_SAME_AUTHOR = 3
#: otherwise (and for fuzzy matches) at most one year apart
YEAR_SLACK = 1
#: mentions that share an identifier join when their titles agree this much (token_set_ratio)
ID_TITLE_AGREEMENT = 80
#: fuzzy matching compares a title with those sharing one of its BLOCK_WORDS rarest words, each
#: shared by at most MAX_BLOCK titles
BLOCK_WORDS = 4
MAX_BLOCK = 2000
#: a title of this many significant words joins mentions whatever their first authors (corporate
#: authors, misspelt or reordered author lists); shorter titles need agreeing first authors
LONG_TITLE_WORDS = 6
#: a title identifies a work alone only with at least this many characters and words
MIN_TITLE_CHARS = 12
MIN_TITLE_WORDS = 2
#: titles that name no work ("Technical report", "arXiv preprint", "Online")
GENERIC_TITLES = frozenset({
    "technical report", "tech rep", "arxiv preprint", "in proceedings", "personal communication",
    "unpublished manuscript", "in preparation", "under review", "supplementary material",
    "available online", "github repository", "online", "website", "web page", "software", "dataset",
})

KINDS = ("paper", "dataset", "software", "book", "web page")

_URL = re.compile(r"https?://[^\s<>\"{}]+", re.I)
_ARXIV_TEXT = re.compile(r"arxiv(?:\s*preprint)?\s*(?:arxiv)?\s*[:/]?\s*((?:\d{4}\.\d{4,5})|(?:[a-z\-]+(?:\.[a-z]{2})?/\d{7}))",
                         re.I)
_DOI_TEXT = re.compile(r"(?:doi\s*:?\s*|doi\.org/)(10\.\d{4,9}/[^\s\"<>{},;\[\]*]+)", re.I)
_DATASET = re.compile(r"\b(data ?sets?|benchmarks?|corpus|corpora|database|treebank|tiny images|suite|"
                      r"challenge|collection of|images? dataset)\b", re.I)
_SOFTWARE = re.compile(r"(github\.com|gitlab\.com|pypi\.org|zenodo\.org|\bsoftware\b|\blibrary\b|\btoolkit\b|"
                       r"\btoolbox\b|\bpackage\b|\bversion \d|\bv\d+\.\d+|\bcode\b|\bimplementation\b)", re.I)
_BOOK = re.compile(r"(\bpress\b|\bisbn\b|\bedition\b|\bpublishers?\b|\bwiley\b|o'?reilly|\bspringer(?!\s*(?:lncs|lecture))|"
                   r"\belsevier\b|\btextbook\b|\bprentice hall\b|\baddison)", re.I)
_VENUE_WORDS = re.compile(r"(\bproceedings\b|\bconference\b|\bjournal\b|\btransactions\b|\bworkshop\b|"
                          r"\bsymposium\b|\barxiv\b|\bneurips\b|\bicml\b|\biclr\b|\bcvpr\b|\biccv\b|\beccv\b|"
                          r"\bacl\b|\bemnlp\b|\baaai\b|\bijcai\b|\bletters\b|\breview\b|\bnature\b|\bscience\b)",
                          re.I)
_WEB = re.compile(r"(\baccessed\b|\bblog\b|\bonline\]|\[online|\bwebsite\b|\bweb page\b|\bretrieved\b|"
                  r"openai\.com|\.html?\b)", re.I)
_QUOTE_CHARS = re.compile(r"[\"“”]")
_QUOTED = re.compile(r"[\"“]([^\"“”]{10,300}?)[\"”]")
_NOT_A_TITLE = re.compile(r"\b(?:arxiv \d{4}|arxiv abs|arxiv org|url https?|https? |doi org|preprint arxiv|"
                          r"arxiv preprint|arxiv cs)\b|^(?:url|https?|doi|in proceedings|in advances|proceedings of)\b")
_INITIAL = re.compile(r"(?:^|[\s,])[A-Z]\.(?=\s|-|,|$)")
_GITHUB = re.compile(r"github\.com/([A-Za-z0-9_.\-]+/[A-Za-z0-9_\-]+)", re.I)
_CITED_BY = re.compile(r"\s*Cited by:.*$", re.S)


# ---------------------------------------------------------------------------------- records


@dataclass
class Mention:
    """One reference, in one citing paper, that links to no corpus paper."""

    citing: str                # the citing paper's id (its reference file's stem)
    citing_year: int | None
    target: int                # its position in the citing paper's reference list
    title: str
    norm: str                  # normalised title (empty: the title identifies nothing alone)
    year: int | None
    surname: str               # the first author's surname, normalised ("" when unknown)
    authors: list[str]
    venue: str
    keys: list[str]            # identifier keys (doi:, arxiv:, acl:, openreview:, nips:, pmlr:, url:)
    raw: str
    contexts: int              # how many contexts cite it in the body
    mentions: int
    must_cite: bool | None     # from the labels stage (None: the paper is not labelled)
    type1: int | None = None
    type2: int | None = None
    type3: int | None = None


@dataclass
class Work:
    """One cited work outside the corpus."""

    work_id: str
    title: str
    year: int | None
    authors: list[str]
    venue: str
    identifiers: list[str]
    kind: str
    n_citing: int              # distinct citing papers
    first_cited: int | None    # the earliest citing paper's year
    n_must_cite: int           # citing papers that label it must-cite
    title_forms: list[str] = field(default_factory=list)   # other titles it is cited under (up to 5)


# ------------------------------------------------------------------------------- per paper


def surname(author: str) -> str:
    """``"D. P. Kingma"`` / ``"Kingma, Diederik P."`` / ``"Diederik Kingma"`` -> ``"kingma"``."""
    a = (author or "").strip()
    if not a:
        return ""
    if "," in a:
        a = a.split(",", 1)[0]
    else:
        words = [w for w in re.split(r"\s+", a) if w]
        tail = [w for w in words if not (re.fullmatch(r"(?:[A-Z]\.?-?)+", w)
                                         or re.fullmatch(r"jr\.?|sr\.?|ii|iii|iv", w, re.I))]
        a = tail[-1] if tail else words[-1]
    a = unicodedata.normalize("NFKD", a)
    a = "".join(ch for ch in a if not unicodedata.combining(ch)).lower()
    a = re.sub(r"[^a-z]", "", a)
    return "" if a in ("et", "al", "etal", "others") else a


def _identifiers(ref: dict[str, Any]) -> list[str]:
    raw = ref.get("raw") or ""
    urls = _URL.findall(raw)
    doi = ref.get("doi") or next(iter(_DOI_TEXT.findall(raw)), None)
    arxiv = ref.get("arxiv") or next(iter(_ARXIV_TEXT.findall(raw)), None)
    keys: list[str] = []
    for u in [ref.get("url"), *urls] or [None]:
        keys += identifier_keys(doi=doi, arxiv=arxiv, url=u)
    if not keys:
        keys = identifier_keys(doi=doi, arxiv=arxiv)
    keys = [re.sub(r"[\])*.,;]+$", "", k.split("](")[0]) for k in keys]
    for u in [ref.get("url"), *urls]:        # a repository identifies software
        m = _GITHUB.search(u or "")
        if m:
            keys.append(f"github:{m.group(1).lower()}")
    return list(dict.fromkeys(keys))


def title_key(title: str) -> str:
    """The normalised title when it can identify a work alone, else ``""``."""
    if len(_INITIAL.findall(title or "")) >= 2:       # "Chang, K. Lee, and K. Toutanova": authors
        return ""
    norm = normalize_title(clean_title(title))
    if _NOT_A_TITLE.search(norm):                       # "arXiv preprint arXiv:1412.6980", "URL http://..."
        return ""
    if len(norm) < MIN_TITLE_CHARS or len(norm.split()) < MIN_TITLE_WORDS or norm in GENERIC_TITLES:
        return ""
    return norm


def recover_title(title: str, raw: str) -> str:
    """A reference's title where the parser took its author list for it: the quoted title of an
    IEEE-style reference (``V. Nair and G. E. Hinton, "Rectified linear units ...," in ...``), or the
    sentence after an author list (``T.-Y. Lin, ..., and P. Dollar. Focal loss for dense object
    detection. In ...``); else the title as given."""
    title = title or ""
    authorish = len(_INITIAL.findall(title)) >= 2
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


def venue_of(ref: dict[str, Any]) -> str:
    """The venue a reference names: its ``venue`` field, else the text after its title in ``raw``."""
    if ref.get("venue"):
        return str(ref["venue"]).strip()
    raw = _CITED_BY.sub("", ref.get("raw") or "")
    title = (ref.get("title") or "").strip()
    i = raw.lower().find(title.lower()) if title else -1
    if i < 0:
        return ""
    rest = raw[i + len(title):]
    rest = re.sub(r"^[\s.,:;\"'”]+", "", rest)
    rest = re.sub(r"^(?:In:?|In Proceedings of)\s+", "", rest)
    rest = re.split(r"(?:,\s*(?:pp\.|vol\.|volume|pages)|\s+pp\.|\(\d|\.\s|,\s*(?:19|20)\d\d|https?://)", rest)[0]
    rest = re.sub(r"\d+\s*$", "", rest.replace("*", "").replace("_", " ")).strip(" .,;:")
    return " ".join(rest.split())[:200]


def unlinked_mentions(path: str | Path, citing_year: int | None = None, *,
                      refs: list[dict[str, Any]] | None = None) -> list[Mention]:
    """The references of one reference file (a labelled copy or the extraction's) that link to no
    corpus paper (``refs``: the file's content, when already read). A pure function of the file."""
    path = Path(path)
    if refs is None:
        refs = read_json(path)
    citing = path.name[: -len(".json")]
    out = []
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, dict) or ref.get("paper_id"):
            continue
        title = recover_title(str(ref.get("title") or "").strip(), ref.get("raw") or "")
        authors = [str(a) for a in (ref.get("authors") or []) if a]
        year = ref.get("year")
        year = int(year) if isinstance(year, int) and 1800 < year < 2100 else None
        labelled = "must_cite" in ref
        out.append(Mention(
            citing=citing, citing_year=citing_year, target=int(ref.get("target") or 0),
            title=clean_title(title), norm=title_key(title), year=year,
            surname=surname(authors[0]) if authors else "", authors=authors, venue=venue_of(ref),
            keys=_identifiers(ref), raw=_CITED_BY.sub("", ref.get("raw") or "")[:600],
            contexts=len(ref.get("contexts") or []), mentions=int(ref.get("mentions") or 0),
            must_cite=bool(ref["must_cite"]) if labelled else None,
            type1=ref.get("type1"), type2=ref.get("type2"), type3=ref.get("type3")))
    return out


@dataclass
class PaperRefs:
    """One citing paper's references: its unlinked ones, and counts of all of them."""

    paper: str
    mentions: list[Mention]
    references: int
    linked: int
    must_cite: int            # labelled must-cite references (0 when the paper is not labelled)
    must_cite_linked: int
    labelled: bool


def read_paper(args: tuple[str, int | None]) -> PaperRefs:
    """:func:`unlinked_mentions` of one reference file with its reference counts (pure)."""
    path, year = args
    refs = read_json(path)
    refs = [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
    return PaperRefs(
        paper=Path(path).name[: -len(".json")], mentions=unlinked_mentions(path, year, refs=refs),
        references=len(refs), linked=sum(bool(r.get("paper_id")) for r in refs),
        must_cite=sum(bool(r.get("must_cite")) for r in refs),
        must_cite_linked=sum(bool(r.get("must_cite")) and bool(r.get("paper_id")) for r in refs),
        labelled=any("must_cite" in r for r in refs))


# ------------------------------------------------------------------------------- clustering


class _Union:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:
            self.parent[i], i = root, self.parent[i]
        return root

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _years_close(a: int | None, b: int | None, slack: int) -> bool:
    return a is None or b is None or abs(a - b) <= slack


def _authors_agree(a: str, b: str) -> bool:
    return not a or not b or a == b


def _titles_agree(a: str | None, b: str | None) -> bool:
    """Two titles that may name one work: either unknown, or close in their words."""
    return not a or not b or fuzz.token_set_ratio(a, b) >= ID_TITLE_AGREEMENT


def _significant(norm: str) -> list[str]:
    return [w for w in norm.split() if len(w) > 2 and w not in STOPWORDS] or norm.split()[:1]


def cluster_mentions(mentions: list[Mention]) -> list[list[int]]:
    """Groups of mention indices, one per work (see the module docstring for the rules)."""
    uf = _Union(len(mentions))
    # 1. identifiers, between mentions whose titles agree (a reference parser sometimes hands one
    #    reference the arXiv id or DOI of its neighbour in the list)
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(mentions):
        for k in m.keys:
            by_key[k].append(i)
    for rows in by_key.values():
        if len(rows) < 2:
            continue
        anchor_norm = _mode(mentions[i].norm for i in rows)
        anchor = next((i for i in rows if mentions[i].norm == anchor_norm), rows[0])
        for i in rows:
            if i != anchor and _titles_agree(mentions[i].norm, anchor_norm):
                uf.join(anchor, i)
    # 2. the same normalised title: one sub-group per (surname, year band)
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(mentions):
        if m.norm:
            by_title[m.norm].append(i)
    reps: dict[str, list[int]] = {}       # normalised title -> representative mentions of its groups
    for norm, rows in by_title.items():
        long_title = len(_significant(norm)) >= LONG_TITLE_WORDS
        groups: list[list[int]] = []
        # mentions with an author first, so that authorless ones join the group they fit best
        for i in sorted(rows, key=lambda r: (not mentions[r].surname, mentions[r].year or 0)):
            m = mentions[i]
            for g in groups:
                h = mentions[g[0]]
                same_author = bool(m.surname) and m.surname == h.surname
                slack = YEAR_SLACK_SAME_AUTHOR if same_author or long_title else YEAR_SLACK
                if (long_title or _authors_agree(m.surname, h.surname)) and any(
                        _years_close(m.year, mentions[j].year, slack) for j in g):
                    g.append(i)
                    uf.join(g[0], i)
                    break
            else:
                groups.append([i])
        reps[norm] = [g[0] for g in groups]
    # 3. near-identical titles, compared with the titles that share one of their rarest words (a
    #    typo makes a word rare, so four words are tried; words of very common titles are skipped)
    df: Counter[str] = Counter()
    for norm in reps:
        df.update(set(_significant(norm)))
    blocks: dict[str, list[str]] = defaultdict(list)
    for norm in reps:
        for w in set(_significant(norm)):
            blocks[w].append(norm)
    for norm in reps:
        seen = {norm}
        n = len(norm)
        rare = sorted(set(_significant(norm)), key=lambda w: (df[w], w))
        for w in [w for w in rare[:BLOCK_WORDS] if df[w] <= MAX_BLOCK] or rare[:1]:
            for other in blocks[w]:
                if other in seen or other < norm:     # each pair once
                    continue
                seen.add(other)
                if abs(len(other) - n) > 0.25 * n or fuzz.ratio(norm, other) < FUZZY_THRESHOLD:
                    continue
                long_title = min(len(_significant(norm)), len(_significant(other))) >= LONG_TITLE_WORDS
                for i in reps[norm]:
                    for j in reps[other]:
                        a, b = mentions[i], mentions[j]
                        if (long_title or _authors_agree(a.surname, b.surname)) \
                                and _years_close(a.year, b.year, YEAR_SLACK):
                            uf.join(i, j)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(mentions)):
        groups[uf.find(i)].append(i)
    # a group with no identifying title and no identifier is one mention of an unknown work
    return [g for g in groups.values()]


# ------------------------------------------------------------------------------- works


def work_kind(title: str, raw: str, venue: str) -> str:
    """``paper``, ``dataset``, ``software``, ``book`` or ``web page``, from the title and the raw
    reference text (rules, in this order: dataset words in the title; a repository or package;
    a publisher; a web page with no venue; else a paper)."""
    text = f"{title} {raw}"
    if _DATASET.search(title):
        return "dataset"
    if _SOFTWARE.search(title) or re.search(r"(github\.com|gitlab\.com|pypi\.org|zenodo\.org)", raw, re.I):
        return "software"
    if _BOOK.search(raw) and not _VENUE_WORDS.search(venue or ""):
        return "book"
    if (_WEB.search(text) or _URL.search(raw)) and not _VENUE_WORDS.search(f"{venue} {raw}"):
        return "web page"
    return "paper"


def _mode(values: Iterable[Any]) -> Any:
    c = Counter(v for v in values if v not in (None, "", [], ()))
    return c.most_common(1)[0][0] if c else None


def supported_identifiers(group: list[Mention]) -> list[str]:
    """The identifiers of a work: per kind (``arxiv``, ``doi``, ...) the one most mentions give, and
    any other that at least two mentions and a fifth as many as the first give (one mention's
    stray id, parsed from its neighbour in a reference list, is left out)."""
    counts = Counter(k for m in group for k in m.keys)
    by_kind: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for k, n in counts.items():
        by_kind[k.split(":", 1)[0]].append((n, k))
    out = []
    for rows in by_kind.values():
        rows.sort(key=lambda r: (-r[0], r[1]))
        top = rows[0][0]
        out += [k for n, k in rows if (n, k) == rows[0] or (n >= 2 and n >= 0.2 * top)]
    return sorted(out)


def make_work(group: list[Mention]) -> Work:
    """The work a group of mentions names: the commonest title, year, authors and venue."""
    title = _mode(m.title for m in group) or ""
    year = _mode(m.year for m in group)
    authors = list(_mode(tuple(m.authors) for m in group) or ())
    venue = _mode(m.venue for m in group) or ""
    ids = supported_identifiers(group)
    norm = _mode(m.norm for m in group) or normalize_title(title)
    key = ids[0] if not norm else f"{norm}|{_mode(m.surname for m in group) or ''}"
    work_id = "w-" + hashlib.sha1(key.encode()).hexdigest()[:16]
    raw = _mode(m.raw for m in group) or ""
    citing = {m.citing: m for m in group}
    forms = [t for t, _ in Counter(m.title for m in group if m.title and m.title != title).most_common(5)]
    return Work(
        work_id=work_id, title=title, year=year, authors=authors, venue=venue, identifiers=ids,
        kind=work_kind(title, raw, venue), n_citing=len(citing),
        first_cited=min((m.citing_year for m in group if m.citing_year), default=None),
        n_must_cite=len({m.citing for m in group if m.must_cite}), title_forms=forms)


def identifies(group: list[Mention]) -> bool:
    """Whether a group names a work at all: an identifying title or an identifier."""
    return any(m.norm or m.keys for m in group)


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
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


WORKS_FILE = "works.parquet"
CITATIONS_FILE = "work_citations.parquet"
SUMMARY_FILE = "works.json"


def _citing_years(folder: Path, stems: list[str]) -> dict[str, int | None]:
    from .run import META_SUFFIX

    years = {}
    for s in stems:
        meta = read_json(folder / f"{s}{META_SUFFIX}", missing_ok=True) or {}
        y = meta.get("year") if isinstance(meta, dict) else None
        years[s] = int(y) if isinstance(y, int) else None
    return years


def read_folders(folders: list[str | Path], *, workers: int | None = None, progress: bool = True,
                 engine: Any = None) -> list[PaperRefs]:
    """:func:`read_paper` of every (labelled, where labelled) reference file in the folders."""
    from ..parallel import pmap
    from .run import iter_reference_files

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


def coverage(papers: list[PaperRefs], works_of: dict[tuple[str, int], str], citing_of: dict[str, set[str]]) -> dict[str, Any]:
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


def build_catalogue(folders: list[str | Path], out_dir: str | Path, *, workers: int | None = None,
                    progress: bool = True, engine: Any = None) -> CatalogueSummary:
    """Resolve every unlinked reference of the extraction folders to a work; write
    ``out_dir/works.parquet``, ``out_dir/work_citations.parquet`` and ``out_dir/works.json``."""
    t0 = time.perf_counter()
    papers = read_folders(folders, workers=workers, progress=progress, engine=engine)
    mentions = [m for p in papers for m in p.mentions]
    works, rows = [], []
    unidentified = 0
    works_of: dict[tuple[str, int], str] = {}
    citing_of: dict[str, set[str]] = {}
    for g in cluster_mentions(mentions):
        ms = [mentions[i] for i in g]
        if not identifies(ms):
            unidentified += len(ms)
            continue
        w = make_work(ms)
        works.append(w)
        citing_of[w.work_id] = {m.citing for m in ms}
        for m in ms:
            works_of[(m.citing, m.target)] = w.work_id
            rows.append({"work_id": w.work_id, "citing": m.citing, "citing_year": m.citing_year,
                         "target": m.target, "title": m.title, "year": m.year, "must_cite": m.must_cite,
                         "type1": m.type1, "type2": m.type2, "type3": m.type3, "contexts": m.contexts,
                         "mentions": m.mentions})
    works.sort(key=lambda w: (-w.n_citing, w.work_id))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wt = pa.Table.from_pylist([asdict(w) for w in works], schema=WORKS_SCHEMA)
    ct = pa.Table.from_pylist(rows, schema=CITATIONS_SCHEMA)
    for table, name in ((wt, WORKS_FILE), (ct, CITATIONS_FILE)):
        tmp = out / f".{name}.tmp"
        pq.write_table(table, tmp)
        tmp.replace(out / name)
    summary = CatalogueSummary(
        papers=len({m.citing for m in mentions}), unlinked_references=len(mentions), works=len(works),
        by_kind=dict(Counter(w.kind for w in works).most_common()),
        cited_by_two_or_more=sum(w.n_citing >= 2 for w in works), unidentified_references=unidentified,
        coverage=coverage(papers, works_of, citing_of), elapsed_s=round(time.perf_counter() - t0, 2))
    atomic_write_json(out / SUMMARY_FILE, {**summary.to_dict(), "folders": [str(f) for f in folders]})
    return summary


def _schemas():
    works = pa.schema([
        ("work_id", pa.string()), ("title", pa.string()), ("year", pa.int32()),
        ("authors", pa.list_(pa.string())), ("venue", pa.string()), ("identifiers", pa.list_(pa.string())),
        ("kind", pa.string()), ("n_citing", pa.int32()), ("first_cited", pa.int32()),
        ("n_must_cite", pa.int32()), ("title_forms", pa.list_(pa.string())),
    ])
    cites = pa.schema([
        ("work_id", pa.string()), ("citing", pa.string()), ("citing_year", pa.int32()),
        ("target", pa.int32()), ("title", pa.string()), ("year", pa.int32()), ("must_cite", pa.bool_()),
        ("type1", pa.int8()), ("type2", pa.int8()), ("type3", pa.int8()), ("contexts", pa.int32()),
        ("mentions", pa.int32()),
    ])
    return works, cites


WORKS_SCHEMA, CITATIONS_SCHEMA = _schemas()


def works_schema_json() -> dict[str, Any]:
    """The published schema of the two tables (``mustcite/schemas/works.schema.json``)."""
    from importlib import resources

    return json.loads(resources.files("mustcite.schemas").joinpath("works.schema.json").read_text())


# ------------------------------------------------------------------------------- reading it back


@dataclass
class WorkIndex:
    """A built catalogue read back: which work each unlinked reference names, and the works."""

    folder: Path
    by_ref: dict[tuple[str, int], str]          # (citing paper, reference position) -> work id
    works: dict[str, dict[str, Any]]            # work id -> its works.parquet row
    citing: dict[str, list[tuple[str, int | None]]]   # work id -> (citing paper, its year)

    @classmethod
    def load(cls, folder: str | Path) -> "WorkIndex":
        """The catalogue in ``folder`` (``works.parquet`` + ``work_citations.parquet``)."""
        folder = Path(folder)
        for name in (WORKS_FILE, CITATIONS_FILE):
            if not (folder / name).is_file():
                raise DataMissingError("no catalogue of cited works", path=folder / name,
                                       hint="run `mustcite works build` first")
        works = {r["work_id"]: r for r in pq.read_table(folder / WORKS_FILE).to_pylist()}
        cites = pq.read_table(folder / CITATIONS_FILE, columns=["work_id", "citing", "citing_year", "target"])
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
        out.append({"paper_id": wid, "title": w["title"], "abstract": "", "authors": list(w.get("authors") or []),
                    "venue": w.get("venue") or "", "year": seen, "url": work_url(w.get("identifiers") or []),
                    "pdf": None, "kind": w["kind"], "published": w.get("year")})
    return sorted(out, key=lambda r: r["paper_id"])

"""Across citing papers: union-find over the mentions (:func:`cluster_mentions`), one
:class:`Work` per group (:func:`make_work`) with its kind (:func:`work_kind`)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from ...corpus.records import normalize_title
from ..link import FUZZY_THRESHOLD, STOPWORDS
from .mentions import _URL, Mention
from .side import SideRecord

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
KINDS = ("paper", "dataset", "software", "book", "web page")

_DATASET = re.compile(r"\b(data ?sets?|benchmarks?|corpus|corpora|database|treebank|tiny images|suite|"
                      r"challenge|collection of|images? dataset)\b", re.I)
_SOFTWARE = re.compile(r"(github\.com|gitlab\.com|pypi\.org|zenodo\.org|\bsoftware\b|\blibrary\b|\btoolkit\b|"
                       r"\btoolbox\b|\bpackage\b|\bversion \d|\bv\d+\.\d+|\bcode\b|\bimplementation\b)", re.I)
_BOOK = re.compile(r"(\bpress\b|\bisbn\b|\bedition\b|\bpublishers?\b|\bwiley\b|o'?reilly|"
                   r"\bspringer(?!\s*(?:lncs|lecture))|"
                   r"\belsevier\b|\btextbook\b|\bprentice hall\b|\baddison)", re.I)
_VENUE_WORDS = re.compile(r"(\bproceedings\b|\bconference\b|\bjournal\b|\btransactions\b|\bworkshop\b|"
                          r"\bsymposium\b|\barxiv\b|\bneurips\b|\bicml\b|\biclr\b|\bcvpr\b|\biccv\b|\beccv\b|"
                          r"\bacl\b|\bemnlp\b|\baaai\b|\bijcai\b|\bletters\b|\breview\b|\bnature\b|\bscience\b)",
                          re.I)
_WEB = re.compile(r"(\baccessed\b|\bblog\b|\bonline\]|\[online|\bwebsite\b|\bweb page\b|\bretrieved\b|"
                  r"openai\.com|\.html?\b)", re.I)

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
    doi: str = ""              # from its identifiers, else from its side record
    #: the record of the corpus's side file it is (a workshop paper, a TMLR article...;
    #: :mod:`.side`), None when it is none
    record_id: str | None = None
    record_venue: str | None = None
    record_year: int | None = None
    record_track: str | None = None

    def link_record(self, record: SideRecord) -> None:
        """Make this work the side record ``record``: its id, venue, year and track, and its DOI
        when the work has none."""
        self.record_id, self.record_venue = record.record_id, record.venue
        self.record_year, self.record_track = record.year, record.track
        self.doi = self.doi or record.doi


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
    #    titles are numbered in sorted order, so that "each pair once" is "only titles after this one"
    titles = sorted(reps)
    words = [set(_significant(norm)) for norm in titles]
    df: Counter[str] = Counter()
    for ws in words:
        df.update(ws)
    members: dict[str, list[int]] = defaultdict(list)
    for t, ws in enumerate(words):
        for w in ws:
            members[w].append(t)
    blocks = {w: np.asarray(ts, dtype=np.int64) for w, ts in members.items()}
    lengths = np.asarray([len(norm) for norm in titles], dtype=np.int64)
    for t, norm in enumerate(titles):
        n = len(norm)
        rare = sorted(words[t], key=lambda w: (df[w], w))
        chosen = [w for w in rare[:BLOCK_WORDS] if df[w] <= MAX_BLOCK] or rare[:1]
        cand = np.unique(np.concatenate([blocks[w] for w in chosen]))
        cand = cand[cand > t]
        cand = cand[np.abs(lengths[cand] - n) <= 0.25 * n]
        if not len(cand):
            continue
        close = process.extract(norm, [titles[c] for c in cand], scorer=fuzz.ratio, processor=None,
                                score_cutoff=FUZZY_THRESHOLD, limit=None)
        for other, _, _ in close:
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


def make_work(group: list[Mention], taken: set[str] | None = None, work_id: str | None = None) -> Work:
    """The work a group of mentions names: the commonest title, year, authors and venue. Its id is
    ``work_id`` when given (the caller keeps ids unique), else a hash of its normalised title and
    first author; ``taken``: the ids given so far (a hash found there is derived again, and the new
    one is added)."""
    title = _mode(m.title for m in group) or ""
    year = _mode(m.year for m in group)
    authors = list(_mode(tuple(m.authors) for m in group) or ())
    venue = _mode(m.venue for m in group) or ""
    ids = supported_identifiers(group)
    norm = _mode(m.norm for m in group) or normalize_title(title)
    key = ids[0] if not norm else f"{norm}|{_mode(m.surname for m in group) or ''}"
    if work_id is None:
        work_id = "w-" + hashlib.sha1(key.encode()).hexdigest()[:16]
        n = 1
        while taken is not None and work_id in taken:    # one title and author, two works (years apart)
            n += 1
            work_id = "w-" + hashlib.sha1(f"{key}|{n}".encode()).hexdigest()[:16]
    if taken is not None:
        taken.add(work_id)
    raw = _mode(m.raw for m in group) or ""
    citing = {m.citing: m for m in group}
    forms = [t for t, _ in Counter(m.title for m in group if m.title and m.title != title).most_common(5)]
    return Work(
        work_id=work_id, title=title, year=year, authors=authors, venue=venue, identifiers=ids,
        kind=work_kind(title, raw, venue), n_citing=len(citing),
        first_cited=min((m.citing_year for m in group if m.citing_year), default=None),
        n_must_cite=len({m.citing for m in group if m.must_cite}), title_forms=forms,
        doi=next((i[4:] for i in ids if i.startswith("doi:")), ""))


def identifies(group: list[Mention]) -> bool:
    """Whether a group names a work at all: an identifying title or an identifier."""
    return any(m.norm or m.keys for m in group)



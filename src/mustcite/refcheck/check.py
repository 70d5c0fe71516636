"""Check each entry of a bibliography against the corpus and the catalogue of cited works.

Finding the record (in this order):

1. the entry's title, as the citation linker matches it (:class:`~mustcite.extract.link.TitleIndex`:
   the normalised title exactly, then rapidfuzz ratio >= 93 among blocked candidates, then the
   title without its "Name:" prefix); every corpus paper of that title is a candidate, and the one
   that agrees best with the entry's venue, year and authors is taken; a title read from a
   reference string (``.bbl`` items, drafts) also gets the linker's repairs;
2. else the entry's DOI / arXiv id / URL, when a corpus paper carries it;
3. else, for a venue-year held completely (:func:`holds`: every track an entry of its form could
   belong to is measured complete, :func:`completeness` and :mod:`.coverage`), and a title no two
   papers of the data cite (:func:`cited_title`: a title others cite is a real paper's), a title
   that joins two corpus titles
   (the start of one and the end of another, each of at least two words, together all but at most
   one word of the entry's title) where the entry's first author or claimed venue-year is one of
   theirs;
4. else, for a venue-year held completely, a paper of it by the entry's first author sharing at
   least half of the entry's authors (two at least): a renamed version (title similarity,
   rapidfuzz token-set ratio, of at least 80, and at most a quarter (or two) of its significant
   words not in the record's title) or another paper; either way a title mismatch, showing how
   the titles differ.

A venue-year is not held completely for an entry whose DOI is of a series none of the venue's
corpus papers is in (an AAAI special track). A title found differs from the record's when a
content word differs (:func:`~.compare.title_difference`: not case, punctuation, hyphenation,
spelling or a subtitle): a title mismatch showing both. A venue text that names a conference,
symposium, journal or transactions no paper of the data names (:meth:`~.index.RefIndex.venue_named`),
for a corpus paper of the entry's title and authors, is a venue mismatch: the venue may not exist.
An entry dated after the year following the data's latest records is a year mismatch.

**Side records** (``side_tracks.parquet``: workshops, Findings, demos, Datasets & Benchmarks of the
15 venues, and the venues outside them, TMLR, WACV, CoRL, MLJ, ...) are candidates beside the
corpus papers: those of the entry's title, of its DOI or URL, and the other versions
(``versions.parquet``) of its corpus papers. A side record wins over the corpus paper when it
answers the claimed venue better (:func:`side_fit`: a TMLR claim, a workshop claim, a Datasets &
Benchmarks paper cited as NeurIPS); without a corpus paper, the best side record is taken. It is
then checked like a corpus paper (:func:`check_side`): verified when title, authors, year and venue
agree, a mismatch per field otherwise. Three cases are never called wrong: a workshop, Findings or
demo paper cited with its own venue's main name (unverifiable: the corpus holds main tracks only), a
workshop paper cited elsewhere or as an arXiv preprint (workshops are not proceedings; a workshop
paper may be shown at several), and a record without a venue (ML Anthology's hand-picked classics).
A side venue-year held completely (:meth:`~.index.RefIndex.side_is_complete`) is to a claim of it
what a complete corpus venue-year is: a paper of its authors titled otherwise (step 4), a venue
mismatch for a paper found elsewhere, else not found.

**An earlier version** (:func:`earlier_version`: an arXiv preprint, or a workshop paper) of a paper
with a published version (:func:`published_version`: its corpus paper, a corpus paper linked to its
side record, or a side record of proceedings or a journal) is compared with the earlier version,
not the published one: its authors need only agree with either list (:func:`authors_agree`), its
year may precede publication (:func:`preprint_year`). Nothing wrong: ``outdated``, with the
published version as ``record`` and its BibTeX, under the entry's key, as ``bibtex``.

**Two witnesses before an accusation** (:mod:`.witness`): an author or title mismatch needs a
record that is confirmed by a second list or consistent in itself; where the sources of a record
disagree, where its name is cut short, or where its list may be partial, the entry gets a note
instead. A record's DOI accuses only where its venue-year's DOIs are witnessed
(:meth:`~.index.RefIndex.dois_witnessed`); a journal record's year one off is a note. **Every
version**: an entry without a venue or a year is verified when one version of the work
(:func:`versions_of`) agrees with it.

The status:

* ``verified``: a record is found and title, authors, year, venue and identifiers agree;
* ``outdated``: an earlier version is cited where a published one exists, and nothing else is wrong;
* ``mismatch``: a record is found and a field disagrees (one :class:`Issue` each, naming the field,
  the entry's value and the record's);
* ``not_found``: no record, the venue-year the entry names is one the corpus (or the side records,
  for a venue outside the 15) is measured to hold completely in every track the entry could belong
  to (:mod:`.coverage`), and no two papers of the data cite its title (a title others cite is a real
  paper: ``unverifiable``, or a venue mismatch where the citing papers place it at another venue,
  :func:`consensus_conflict`);
* ``unverifiable``: anything else: an arXiv preprint, a journal, book, workshop or Findings paper,
  a venue-year not held (completely), an entry without a venue or a year, an anonymous submission.
  Such an entry is never called wrong; a same-titled corpus paper or a catalogue work is attached as
  ``record`` when there is one. A proceedings volume (``@proceedings``, the ``crossref`` parent of
  its papers) is not a paper: unverifiable, not looked up;
* ``unreadable``: a block of the file that could not be read (a brace error, a field or title over
  the caps of :mod:`mustcite.extract.bibtex`), with the reader's reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz

from ..corpus.records import normalize_title, surname_key
from ..extract.link import STOPWORDS, clean_title, identifier_keys, raw_segments, repaired_titles
from .compare import (
    compare_authors,
    compare_identifiers,
    compare_venue,
    compare_year,
    id_scope_year,
    title_difference,
    title_similarity,
)
from .coverage import possible_tracks
from .entries import Entry, read_entries
from .index import NOT_CLOSED, Record, RefIndex, load_index
from .person_names import align, name_tokens
from .published import kept_fields, record_bibtex
from .results import Issue, RefCheck
from .venue import SIDE_GROUPS, VenueClaim, classify_venue, names_a_kind, track_kind
from .witness import title_disputed, weigh_authors

#: a renamed version (step 4) needs this token-set similarity of titles to count as the same paper
RENAMED_SIMILARITY = 80
#: candidates (by shared title words) tried for a joined title
JOIN_CANDIDATES = 60
#: words so common that their postings are skipped when gathering join candidates
JOIN_MAX_POSTING = 6000
#: each of the two joined parts has at least this many words
JOIN_MIN_WORDS = 2
FUZZY_SAME = 93


# ---- reading the entry ---------------------------------------------------------------------------

def venue_text(entry: Entry) -> str:
    """The entry's venue: its field, else the reference string after the title."""
    if entry.venue:
        return entry.venue
    raw = entry.raw or ""
    if entry.title and entry.title in raw:
        return raw.split(entry.title, 1)[1]
    return raw if not entry.structured else ""


def entry_json(entry: Entry, claim: VenueClaim) -> dict:
    return {"title": entry.title, "authors": list(entry.authors) + (["others"] if entry.others else []),
            "year": entry.year, "venue": entry.venue or (claim.label() if claim.kind != "none" else ""),
            **({"doi": entry.doi} if entry.doi else {}), **({"arxiv": entry.arxiv} if entry.arxiv else {})}


# ---- finding the record ----------------------------------------------------------------------------

def _agreement(index: RefIndex, row: int, entry: Entry, claim: VenueClaim, year: int | None) -> tuple:
    pairs = [(index.venue[row], index.year[row]), *index.also[row]]
    vy = claim.kind == "held" and any(v == claim.code and y == year for v, y in pairs)
    v = claim.kind == "held" and any(v == claim.code for v, _ in pairs)
    y = year is not None and any(yy == year for _, yy in pairs)
    auth = len(align(entry.authors, index.authors[row]).matched) if entry.authors and index.authors[row] else 0
    return (vy, auth, v, y, -row)


def title_rows(index: RefIndex, title: str, year: int | None, *, raw: str = "", structured: bool = True) -> list[int]:
    """Corpus rows whose title is the entry's (see the module doc, step 1)."""
    t = index.titles
    norm = normalize_title(clean_title(title))
    rows = list(t.exact.get(norm, ())) if norm else []
    if rows:
        return rows
    hit = t.match(title, ref_year=year) if norm else None
    if hit is None:
        hit = t.match_subtitle(title, ref_year=year) if norm else None
    if hit is None and not structured:
        for cand in repaired_titles(title, raw):
            hit = t.match(cand, ref_year=year, near_year=True)
            if hit:
                break
        if hit is None:
            for seg in raw_segments(raw):
                hit = t.match_exact(seg, ref_year=year, near_year=True)
                if hit:
                    break
    if hit is None:
        return []
    row = index.row_of(hit[0])
    return list(t.exact.get(t.norms[row], (row,))) if row is not None else []


def identifier_row(index: RefIndex, entry: Entry, *, side: bool = False) -> tuple[int, str] | None:
    """(row, key) of the corpus paper (the side record with ``side``) carrying one of the entry's
    DOI / arXiv / URL keys; a NeurIPS hash only within the entry's year (the URL's, else its own)."""
    year = id_scope_year(entry)
    for k in identifier_keys(doi=entry.doi, arxiv=entry.arxiv, url=entry.url):
        rows = index.id_rows(k, year, side=side)
        if rows:
            return rows[0], k
    return None


def _contains(hay: str, words: list[str]) -> bool:
    """Whether ``hay`` (" a normalised title ") holds ``words`` as a run; more words than it has
    are answered at once (so a long entry title costs nothing here)."""
    return len(words) < hay.count(" ") and f" {' '.join(words)} " in hay


def _run(cand: list[str], words: list[str], limit: int) -> int:
    """The most words of ``words``, from its start and at most ``limit``, that ``cand`` holds as a
    run: linear in ``cand`` for a title whose words differ (the length of the run found is the
    largest ``k`` for which ``_contains(cand, words[:k])``)."""
    best, first = 0, words[0] if words else None
    for j, w in enumerate(cand):
        if w != first:
            continue
        k = 0
        while k < limit and j + k < len(cand) and cand[j + k] == words[k]:
            k += 1
        best = max(best, k)
    return best


def _candidates(index: RefIndex, words: list[str], k: int) -> list[int]:
    """Corpus rows sharing the most of ``words`` (their significant ones; very common words skipped)."""
    t = index.titles
    keys = [w for w in dict.fromkeys(words) if len(w) > 2 and w not in STOPWORDS and w in t.blocks]
    posts = [t.blocks[w] for w in keys if len(t.blocks[w]) <= JOIN_MAX_POSTING]
    if not posts:
        return []
    ids, counts = np.unique(np.concatenate(posts), return_counts=True)
    return ids[np.argsort(-counts, kind="stable")[:k]].tolist()


def joined_title(index: RefIndex, title: str, entry: Entry, claim: VenueClaim, year: int | None
                 ) -> tuple[int, int] | None:
    """(row A, row B) when the title is the start of A's and the end of B's (module doc, step 3)."""
    if not holds(index, entry, claim, year) or cited_title(index, entry):
        return None          # a title the corpus lacks is only suspect where it holds the venue-year,
        #                      and no title other papers cite is a join
    norm = normalize_title(clean_title(title))
    words = norm.split()
    n = len(words)
    if n < 5:
        return None
    t = index.titles
    half = n // 2
    top = list(dict.fromkeys(_candidates(index, words[:half + 1], JOIN_CANDIDATES // 2)
                             + _candidates(index, words[half:], JOIN_CANDIDATES // 2)
                             + _candidates(index, words, JOIN_CANDIDATES // 2)))
    heads, tails = [], []
    backwards = words[::-1]
    for r in top:
        if t.norms[r] == norm:
            return None
        # the longest start and end of the title this one holds (2 to n - 1 words, else 0); each
        # is at most the candidate's own length, so the work is linear in the entry's title
        cand = t.norms[r].split()
        p = _run(cand, words, n - 1)
        s = _run(cand[::-1], backwards, n - 1)
        if p >= JOIN_MIN_WORDS:
            heads.append((p, r))
        if s >= JOIN_MIN_WORDS:
            tails.append((s, r))
    best = None
    for p, a in heads:
        if _contains(f" {t.norms[a]} ", words[p:]):
            continue                 # A holds the rest as well: not a join
        for s, b in tails:
            if a == b or p + s < n - 1:
                continue             # the two parts leave more than one word out
            if _contains(f" {t.norms[a]} ", words[n - s:]):
                continue             # A ends as well: a word of A changed (a near miss), not a join
            if t.norms[a] != t.norms[b]:
                anchored = any(_anchor(index, r, entry, claim, year) for r in (a, b))
                if anchored and (best is None or p + s > best[0]):
                    best = (p + s, a, b)
    return (best[1], best[2]) if best else None


def completeness(index: RefIndex, entry: Entry, claim: VenueClaim, year: int | None) -> tuple[bool, str]:
    """Whether the data holds, completely, every track of the venue-year the entry claims that a paper
    of its form could belong to (:mod:`.coverage`), and why (the reason it does not, or the measure).
    Not for an entry whose DOI is of a series none of the venue's papers is in (an AAAI special
    track, a Findings DOI): a track the corpus lacks."""
    if claim.kind != "held" or year is None:
        return False, ""
    where = f"{claim.code} {year}"
    cov = index.venue_coverage(claim.code, year)
    if cov is None:
        return False, f"the corpus does not hold {where}"
    if not cov.complete:
        return False, f"the main track of {where} is not known to be held completely ({cov.why_not()})"
    if index.doi_untracked(entry.doi):
        return False, (f"not in the main track of {where}, which is held completely; its DOI is of a series of "
                       f"another track, which is not held")
    for kind, evidence in possible_tracks(claim.code, int(year), claim.text, entry.pages):
        ok, why = index.track_is_complete(claim.code, kind, int(year))
        if not ok:
            return False, (f"not in the main track of {where}, which is held completely; {why}: possibly a "
                           f"{kind} paper ({evidence})")
    basis = {"two lists": "two independent lists agree", "official count": "the proceedings' own count",
             "proceedings' own list": "the proceedings' own list"}.get(cov.basis, cov.basis)
    return True, f"{cov.held} papers, measured complete: {basis}"


def holds(index: RefIndex, entry: Entry, claim: VenueClaim, year: int | None) -> bool:
    """Whether a paper the data lacks at the venue-year the entry claims is suspect (:func:`completeness`)."""
    return completeness(index, entry, claim, year)[0]


#: a title the catalogue of cited works has, cited by this many papers, is a real paper's title
MIN_TITLE_WITNESSES = 2


def cited_title(index: RefIndex, entry: Entry) -> int:
    """How many papers of the data cite a work of the entry's title (0 when under
    :data:`MIN_TITLE_WITNESSES`): other authors citing that title show a paper of it exists."""
    work = catalogue_work(index, entry) if entry.title else None
    n = 0
    if work is not None and title_similarity(clean_title(entry.title), work.title) >= FUZZY_SAME:
        row = index.work_row(work.paper_id)
        n = index.work_citing(row) if row is not None else 0
    if index.consensus is not None and entry.title:
        n = max(n, index.consensus.cited(clean_title(entry.title)))
    return n if n >= MIN_TITLE_WITNESSES else 0


def _anchor(index: RefIndex, row: int, entry: Entry, claim: VenueClaim, year: int | None) -> bool:
    """Whether a corpus paper is the entry's: the venue-year it claims, or two of its authors
    (its only one for a one-author entry), the first among them."""
    pairs = [(index.venue[row], index.year[row]), *index.also[row]]
    if claim.kind == "held" and any(v == claim.code and y == year for v, y in pairs):
        return True
    if not entry.authors or not index.authors[row]:
        return False
    a = align(entry.authors, index.authors[row])
    return any(i == 0 for i, _ in a.matched) and len(a.matched) >= min(2, len(entry.authors))


def _foreign_words(title: str, other_norm: str) -> int:
    """How many significant words of ``title`` the other title lacks."""
    have = set(other_norm.split())
    return sum(1 for w in normalize_title(title).split() if w not in have and w not in STOPWORDS)


def by_authors(index: RefIndex, entry: Entry, venues: tuple[str, ...], year: int | None, *, side: bool = False
               ) -> tuple[int, float] | None:
    """(row, title similarity) of the entry's first author's paper of one of ``venues`` in ``year``
    (corpus rows, or side rows with ``side``) that shares at least half of the entry's authors
    (module doc, step 4)."""
    if year is None or not entry.authors:
        return None
    toks = name_tokens(entry.authors[0])
    if not toks:
        return None
    rows: set[int] = set()
    for v in venues:
        rows |= set(index.rows_by_surname(v, year, toks[-1], side=side))
        if len(toks) >= 2:
            rows |= set(index.rows_by_surname(v, year, toks[0], side=side))
    authors = index.side_fields["authors"] if side else index.authors
    norms = index.side.norms if side else index.titles.norms
    norm = normalize_title(entry.title)
    need = max(1, (len(entry.authors) + 1) // 2)
    if len(entry.authors) >= 2:
        need = max(need, 2)
    best = None
    for r in sorted(rows):
        rec = authors[r]
        if not rec:
            continue
        a = align(entry.authors, rec)
        if len(a.matched) < need or not any(i == 0 for i, _ in a.matched):
            continue
        sim = fuzz.token_set_ratio(norm, norms[r])
        if best is None or sim > best[1]:
            best = (r, sim)
    return best


# ---- the side records ----------------------------------------------------------------------------

def side_names(claim: VenueClaim) -> tuple[str, ...]:
    """The record venues the side venue a claim names stands for ("ECML-PKDD": also ECML)."""
    return SIDE_GROUPS.get(claim.side, (claim.side,)) if claim.side else ()


def archival(rec: Record) -> bool:
    """Whether a side record is a paper of proceedings or a journal (not a workshop paper, which may
    be shown at several workshops and published later, nor a record whose venue is unknown)."""
    return rec.venue not in ("", "other") and track_kind(rec.track) != "workshop"


def side_fit(claim: VenueClaim, rec: Record) -> int:
    """How well a side record answers the venue the entry claims: 3 its venue and track (a NeurIPS
    claim answered by a NeurIPS Datasets & Benchmarks paper, in the same proceedings, included); 2
    the kind of track of an ancillary claim that names no venue ("Findings of the ACL"); 1 the
    venue, another track (a Findings paper cited as ACL); 0 nothing."""
    kind = track_kind(rec.track)
    if rec.venue == "other":
        return 0
    if claim.kind == "held":
        if rec.venue != claim.code:
            return 0
        return 3 if kind == "datasets-benchmarks" else 1
    if claim.kind == "ancillary":
        named = claim.code or claim.side
        if named and rec.venue and (rec.venue == named or rec.venue in side_names(claim)):
            return 3 if kind == claim.track else 1
        if kind == claim.track != "other" and not (named and rec.venue):
            return 2
        return 1 if named and not rec.venue else 0
    if claim.kind == "other" and claim.side and rec.venue in side_names(claim):
        return 3 if kind in ("main", "journal") else 1
    return 0


def corpus_fit(claim: VenueClaim, index: RefIndex, row: int) -> int:
    """:func:`side_fit` for a corpus paper: 3 when the claimed held venue is one of its venues, 1
    for an ancillary claim of its venue, else 0."""
    venues = {index.venue[row], *(v for v, _ in index.also[row])}
    if claim.kind == "held":
        return 3 if claim.code in venues else 0
    return 1 if claim.kind == "ancillary" and claim.code in venues else 0


def side_title_rows(index: RefIndex, title: str, year: int | None) -> list[int]:
    """Side rows whose title is the entry's (exact, else the best fuzzy match and its namesakes)."""
    if index.side is None or not title or len(normalize_title(title)) < 12:
        return []
    hit = index.side.match(title, ref_year=year)
    if hit is None:
        return []
    r = index.side_row(hit[0])
    return list(index.side.exact.get(index.side.norms[r], [r]))


def side_versions(index: RefIndex, corpus_rows: list[int]) -> list[int]:
    """Side rows that are other versions (``versions.parquet``) of the given corpus papers."""
    return [s for r in corpus_rows for s in index.version_rows(index.titles.ids[r])[1]]


def best_side(index: RefIndex, rows: list[int], entry: Entry, claim: VenueClaim, year: int | None) -> int | None:
    """The side row that agrees best with the entry: venue (:func:`side_fit`), year, authors, then a
    proceedings or journal paper before a workshop one."""
    def key(r: int) -> tuple:
        rec = index.side_record(r)
        auth = len(align(entry.authors, rec.authors).matched) if entry.authors and rec.authors else 0
        return side_fit(claim, rec), rec.year == year, auth, archival(rec), -r
    return max(rows, key=key) if rows else None


def _side_where(rec: Record) -> str:
    """"TMLR 2023", "the workshop track of ICML 2023"."""
    if track_kind(rec.track) in ("main", "journal"):
        return f"{rec.venue} {rec.year}"
    return f"the {rec.track} track of {rec.venue or 'an unnamed venue'} {rec.year}"


def check_side(out: RefCheck, index: RefIndex, row: int, entry: Entry, claim: VenueClaim, year: int | None,
               title: str, issues: list[Issue], notes: list[str]) -> RefCheck:
    """The answer for an entry whose record is a side record (the module doc)."""
    rec = index.side_record(row)
    out.record = rec.to_json()
    fit, where = side_fit(claim, rec), _side_where(rec)
    if rec.venue in ("", "other") and fit < 2:
        return _unverifiable(out, f"a paper of this title ({rec.title!r}, {rec.year}) is known, but not its "
                                  f"venue: cannot verify offline", notes)
    if claim.kind == "held":
        if fit == 3:
            return _same_proceedings(out, index, rec, entry, claim, title, issues, notes)
        if fit == 0 and archival(rec) and index.is_complete(claim.code, year):
            return _venue_mismatch(out, claim.code, rec, f"the paper appeared in {where}, not at {claim.code}", notes)
        return _unverifiable(out, f"a paper of {where} ({rec.title!r}); the corpus holds main tracks only: "
                                  f"cannot verify offline", notes)
    if claim.kind == "ancillary" or (claim.kind == "other" and claim.side):
        if fit >= 2:
            return _compared(out, index, rec, entry, claim, title, issues, notes)
        names = side_names(claim)
        if claim.kind == "other" and fit == 0 and archival(rec) and index.side_is_complete(names, year):
            return _venue_mismatch(out, claim.side, rec, f"the paper appeared in {where}, not at {claim.side} {year}",
                                   notes)
        return _unverifiable(out, f"{claim.text!r} names another venue or track than this paper's, {where} "
                                  f"({rec.title!r}): cannot verify offline", notes)
    if claim.kind == "arxiv":       # a published version was answered before (:func:`published_version`)
        return _unverifiable(out, f"an arXiv preprint; a paper of this title appeared in {where}, which is not "
                                  f"proceedings: cannot verify offline", notes)
    if claim.kind == "none":
        return _compared(out, index, rec, entry, claim, title, issues, notes)
    return _unverifiable(out, f"{claim.text!r} is not held by the corpus (main tracks of 15 venues only); a paper of "
                              f"this title appeared in {where}: cannot verify offline", notes)


def _same_proceedings(out: RefCheck, index: RefIndex, rec: Record, entry: Entry, claim: VenueClaim, title: str,
                      issues: list[Issue], notes: list[str]) -> RefCheck:
    """A Datasets & Benchmarks paper cited with its venue's main name: verified (with a note) when the
    other fields agree, else unverifiable with the disagreements as notes, never wrong: the track
    is printed in the venue's proceedings, but it is not the main track the corpus checks."""
    notes.append(f"a paper of {_side_where(rec)}, cited as {claim.code}")
    got = _compared(out, index, rec, entry, claim, title, issues, notes)
    if got.status == "verified":
        return got
    got.notes = [*got.notes, *(i.why for i in got.issues)]
    got.issues = []
    return _unverifiable(got, f"a paper of {_side_where(rec)} ({rec.title!r}); the corpus holds main tracks only: "
                              f"cannot verify offline", got.notes)


def _compared(out: RefCheck, index: RefIndex, rec: Record, entry: Entry, claim: VenueClaim, title: str,
              issues: list[Issue], notes: list[str]) -> RefCheck:
    """Verified or a mismatch, after comparing the year and the authors to the record."""
    y = _journal_year(compare_year(entry, claim, rec, rec.year, venue=rec.venue, volumes=index.volume_years),
                      rec, notes)
    if y is not None:
        issues.append(y)
    if entry.structured:
        issues += compare_authors(entry, rec, order=index.order_trusted(rec), notes=notes)
    return _verdict(out, rec, title, issues, notes)


def _journal_year(issue: Issue | None, rec: Record, notes: list[str]) -> Issue | None:
    """A year one off a journal record's is no error (a note): journals date a paper by its acceptance,
    its publication or its volume, and sources pick different ones (TMLR on OpenReview and in ML
    Anthology; JMLR, whose years are never closed lists either, :data:`~.index.NOT_CLOSED`)."""
    journal = track_kind(rec.track) == "journal" if rec.source != "corpus" else rec.venue in NOT_CLOSED
    if issue is None or not journal or not (str(issue.entry).isdigit() and str(issue.record).isdigit()):
        return issue
    if abs(int(issue.entry) - int(issue.record)) != 1:
        return issue
    notes.append(f"the record dates this journal paper {issue.record}, the entry {issue.entry}: journals date a "
                 f"paper by acceptance, publication or volume")
    return None


def _verdict(out: RefCheck, rec: Record, title: str, issues: list[Issue], notes: list[str], *,
             titled: bool = True, index: RefIndex | None = None) -> RefCheck:
    """Verified or a mismatch by ``issues``, after comparing the title (with ``titled``; not for an
    earlier version, whose title may be another, nor for another version's record under its own
    title): one that differs by a content word (:func:`~.compare.title_difference`) is a title
    mismatch, one written otherwise a note."""
    if title and not any(i.field == "title" for i in issues) and normalize_title(title) != normalize_title(rec.title):
        renamed = any("renamed version" in n for n in notes)
        diff = title_difference(title, rec.title) if titled and not renamed else None
        if diff and index is not None and title_disputed(index, rec, title, notes):
            diff = None          # the record's sources disagree on the title (a note says so)
        if diff:
            issues.append(Issue("title", title, rec.title, f"the title differs from the record's: {diff}"))
        elif not notes:
            sim = title_similarity(title, rec.title)
            notes.append(f"the title is written differently from the record's ({sim:.0f}% similar)")
    out.issues, out.notes = issues, notes
    if issues:
        out.status = "mismatch"
        out.why = "; ".join(dict.fromkeys(i.why for i in issues))
    else:
        out.status = "verified"
        where = f"{rec.venue} {rec.year}" if rec.source == "corpus" else _side_where(rec)
        out.why = f"matches {where}: {rec.title!r}"
    return out


# ---- an earlier version cited --------------------------------------------------------------------------

#: an earlier version without an arXiv id may date from this many years before its published version
PREPRINT_YEARS_BEFORE = 3
_ARXIV_ID_YEAR = re.compile(r"arxiv[:.](\d\d)(\d\d)\.\d{4,5}")


def earlier_version(claim: VenueClaim) -> bool:
    """Whether the entry cites an earlier version of a paper: an arXiv preprint or a workshop paper."""
    return claim.kind == "arxiv" or (claim.kind == "ancillary" and claim.track == "workshop")


def published_version(index: RefIndex, row: int | None, side_rows: list[int], entry: Entry) -> Record | None:
    """The published version of the paper an earlier-version entry names: its corpus paper (main
    tracks: published), else a corpus paper linked (``versions.parquet``) to one of its side records,
    else the side record of proceedings or a journal that agrees best with the entry."""
    if row is not None:
        return index.record(row)
    linked = [c for r in side_rows for c in index.version_rows(index.side.ids[r])[0]]
    if linked:
        return index.record(max(linked, key=lambda r: _agreement(index, r, entry, VenueClaim("none"), entry.year)))
    recs = [index.side_record(r) for r in side_rows]
    recs = [r for r in recs if archival(r)]
    return max(recs, key=lambda r: (len(align(entry.authors, r.authors).matched) if entry.authors and r.authors
                                    else 0, r.year == entry.year)) if recs else None


def authors_agree(entry: Entry, rec: Record) -> bool:
    """Whether an earlier version's entry names the people of a version's record: at least half of
    its authors, the first among them or two at least (an earlier version may have other authors
    than the published one; the published list is not the one the entry copies)."""
    if not entry.authors or not rec.authors:
        return True
    a = align(entry.authors, rec.authors)
    n = len(a.matched)
    return n >= max(1, (len(entry.authors) + 1) // 2) and (n >= 2 or any(i == 0 for i, _ in a.matched))


def preprint_work(index: RefIndex, entry: Entry) -> Record | None:
    """The catalogue work of the entry's arXiv id (the preprint itself), when the catalogue knows it."""
    if index.works is None:
        return None
    for k in identifier_keys(doi=entry.doi, arxiv=entry.arxiv, url=entry.url):
        if k.startswith("arxiv:") and (rows := index.works.id_rows.get(k)):
            return index.work(rows[0])
    return None


def preprint_year(entry: Entry, pub: Record) -> Issue | None:
    """A year no earlier version can have: before the month of its arXiv id (``1606.06565``: June
    2016; a preprint sent in the last days of December bears the next year's id, so the year
    before is allowed), or, without an id, more than :data:`PREPRINT_YEARS_BEFORE` years before
    publication. A later year is never wrong: arXiv dates an entry by its latest version."""
    if entry.year is None or pub.year is None:
        return None
    ids = " ".join(identifier_keys(doi=entry.doi, arxiv=entry.arxiv, url=entry.url)) + " " + entry.venue.lower()
    m = _ARXIV_ID_YEAR.search(ids)
    if m and 7 <= int(m.group(1)) and 1 <= int(m.group(2)) <= 12:
        first = 2000 + int(m.group(1))
        if entry.year < first - 1:
            return Issue("year", str(entry.year), str(first), f"the arXiv id {m.group(1)}{m.group(2)}.* was given "
                         f"in {first}: its preprint is not of {entry.year}")
        return None
    first = min(y for _, y in pub.venue_years() if y is not None)
    if entry.year < first - PREPRINT_YEARS_BEFORE:
        return Issue("year", str(entry.year), str(pub.year),
                     f"the paper was published in {first}; an earlier version of it is not of {entry.year}")
    return None


def _outdated(out: RefCheck, index: RefIndex, pub: Record, entry: Entry, claim: VenueClaim, title: str,
              issues: list[Issue], notes: list[str]) -> RefCheck | None:
    """The answer for an entry citing an earlier version of ``pub``: outdated when nothing in it is
    wrong, with ``pub``'s BibTeX; a mismatch for a wrong title, authors, year or identifier, compared
    with the earlier version (authors: :func:`authors_agree` with the published list or the
    catalogue's preprint; year: :func:`preprint_year`). None for a workshop paper whose authors are
    not the published version's (another paper of that title: answered as a workshop paper)."""
    agree = not entry.structured or authors_agree(entry, pub) or (
        (w := preprint_work(index, entry)) is not None and bool(w.authors) and authors_agree(entry, w))
    if not agree and claim.kind != "arxiv":
        return None
    out.record = pub.to_json()
    issues = list(issues) + ([] if agree else compare_authors(entry, pub, order=False))
    y = preprint_year(entry, pub)
    if y is not None:
        issues.append(y)
    if pub.source == "corpus":
        issues += compare_identifiers(entry, pub, index)
    where = f"{pub.venue} {pub.year}" if pub.source == "corpus" else _side_where(pub)
    what = "an arXiv preprint" if claim.kind == "arxiv" else "a workshop version"
    if issues:
        notes.append(f"{what} is cited; a published version exists: {where}")
        return _verdict(out, pub, title, issues, notes, titled=False)
    got = _verdict(out, pub, title, [], notes, titled=False)
    got.status = "outdated"
    got.why = f"{what} is cited; the paper was published in {where}: cite that version"
    got.bibtex = record_bibtex(got.record, entry.key, entry.fields, entry.authors)
    left = kept_fields(entry.fields, got.record)[1]
    if left:
        got.notes.append(f"the proposed entry leaves out the fields of the {what.split(' ', 1)[1]}: "
                         + ", ".join(left))
    return got


def _venue_mismatch(out: RefCheck, claimed: str, rec: Record, why: str, notes: list[str]) -> RefCheck:
    out.status, out.notes = "mismatch", notes
    shown = f"{rec.venue} {rec.year}" + (f" ({rec.track})" if rec.track and rec.source != "corpus" else "")
    out.issues = [Issue("venue", claimed, shown, why)]
    out.why = why
    return out


def _unverifiable(out: RefCheck, why: str, notes: list[str]) -> RefCheck:
    out.status, out.why, out.notes = "unverifiable", why, notes
    return out


# ---- the catalogue ----------------------------------------------------------------------------------

def catalogue_work(index: RefIndex, entry: Entry) -> Record | None:
    if index.works is None:
        return None
    for k in identifier_keys(doi=entry.doi, arxiv=entry.arxiv, url=entry.url):
        rows = index.works.id_rows.get(k)
        if rows:
            w = index.work(rows[0])
            if not entry.title or title_similarity(entry.title, w.title) >= FUZZY_SAME:
                return w
    if entry.title and len(normalize_title(entry.title)) >= 12:
        hit = index.works.match(entry.title, ref_year=entry.year)
        if hit is not None:
            return index.work(index.work_row(hit[0]))
    return None


# ---- one entry ---------------------------------------------------------------------------------------

#: entry types that are volumes, not papers (a ``crossref`` parent): never checked as a paper
VOLUME_KINDS = frozenset({"proceedings", "mvproceedings"})


def unreadable_check(entry: Entry) -> RefCheck:
    """The answer for a block that could not be read: ``unreadable``, with the reader's reason."""
    return RefCheck(entry.key, "unreadable", why=entry.unreadable, source=entry.source)


def check_entry(entry: Entry, index: RefIndex) -> RefCheck:
    """The check of one entry (module doc); an entry the corpus cannot say anything else about whose
    year is after the next year of the data's latest records is a year mismatch: no paper is of it.
    A block that could not be read is ``unreadable``; a proceedings volume (``@proceedings``, the
    parent of its papers' ``crossref``) is not a paper: ``unverifiable``, not looked up."""
    if entry.unreadable:
        return unreadable_check(entry)
    if entry.kind in VOLUME_KINDS:
        claim = classify_venue(venue_text(entry), arxiv_id=entry.arxiv)
        return RefCheck(entry.key, "unverifiable", why="a proceedings volume, not a paper: not checked",
                        entry=entry_json(entry, claim), source=entry.source, notes=list(entry.notes))
    got = _check_entry(entry, index)
    latest = index.latest_year()
    if got.status == "unverifiable" and entry.year is not None and latest and entry.year > latest + 1:
        why = f"no paper can be of {entry.year}: the latest papers of the data are of {latest}"
        got.status, got.why, got.issues = "mismatch", why, [Issue("year", str(entry.year), None, why)]
    if entry.notes:
        got.notes = [*entry.notes, *got.notes]
    return got


def _check_entry(entry: Entry, index: RefIndex) -> RefCheck:
    vtext = venue_text(entry)
    claim = classify_venue(vtext, arxiv_id=entry.arxiv)
    if not entry.structured and claim.kind in ("other", "none") and entry.raw:
        whole = classify_venue(entry.raw.replace(entry.title, " ") if entry.title else entry.raw, arxiv_id=entry.arxiv)
        if whole.kind in ("held", "arxiv", "ancillary"):
            claim = whole
    year = entry.year if entry.year is not None else claim.year
    out = RefCheck(entry.key, "unverifiable", entry=entry_json(entry, claim), source=entry.source)
    if entry.authors and name_tokens(entry.authors[0])[:1] == ["anonymous"]:
        out.why = "an anonymous submission (under review): cannot verify offline"
        return out
    title = clean_title(entry.title or "")
    issues: list[Issue] = []
    notes: list[str] = []

    # a reference string whose title was not told apart is looked up by its parts: the string's
    # segments, and "authors" of four words or more (a title read as the last author)
    rows = title_rows(index, title, year, raw=entry.raw, structured=entry.structured) \
        if title or (not entry.structured and entry.raw) else []
    if not rows and not title and not entry.structured:
        for cand in (a for a in entry.authors if len(a.split()) >= 4):
            rows = title_rows(index, cand, year)
            if rows:
                title = clean_title(cand)
                break
    by_id = identifier_row(index, entry)
    row: int | None = None
    if rows:
        row = max(rows, key=lambda r: _agreement(index, r, entry, claim, year))
    elif by_id is not None:
        row = by_id[0]
        if title and title_similarity(title, index.title[row]) < FUZZY_SAME:
            issues.append(Issue("title", entry.title, index.title[row],
                                f"the entry's {by_id[1]} id is this paper's, whose title is another"))
    # side records: of the entry's title, of its DOI or URL, and the other versions of its corpus papers
    s_title = side_title_rows(index, title, year)
    s_id = identifier_row(index, entry, side=True) if index.side is not None else None
    s_versions = side_versions(index, rows or ([row] if row is not None else []))
    s_rows = list(dict.fromkeys(s_title + ([s_id[0]] if s_id else []) + s_versions))
    side = best_side(index, s_rows, entry, claim, year)
    if earlier_version(claim):
        pub = published_version(index, row, s_rows, entry)
        got = _outdated(out, index, pub, entry, claim, title, issues, notes) if pub is not None else None
        if got is not None:
            return got
    if side is not None and (row is None or side_fit(claim, index.side_record(side)) > corpus_fit(claim, index, row)):
        issues = issues if row is None else []
        s_name = index.side_fields["title"][side]
        if s_id is not None and side == s_id[0] and side not in s_title + s_versions and title \
                and title_similarity(title, s_name) < FUZZY_SAME and not issues:
            issues.append(Issue("title", entry.title, s_name,
                                f"the entry's {s_id[1]} id is this paper's, whose title is another"))
        return check_side(out, index, side, entry, claim, year, title, issues, notes)
    if row is None and title:
        found = _by_title_parts(out, index, title, entry, claim, year, issues, notes)
        if isinstance(found, RefCheck):
            return found
        row = found
    if row is None:
        return _not_found(out, entry, claim, year, index, notes)

    rec = index.record(row)
    out.record = rec.to_json()
    if rows and claim.kind == "other" and claim.side and index.side_is_complete(side_names(claim), year):
        return _side_claim_of_corpus_paper(out, index, rec, entry, claim, year, title, notes)
    if claim.kind in ("other", "ancillary") and claim.track != "workshop" and not claim.side \
            and names_a_kind(claim.text) and authors_agree(entry, rec) and not index.venue_named(claim.text):
        shown = ", ".join(f"{v} {y}" for v, y in rec.venue_years())
        return _venue_mismatch(out, claim.text, rec, f"no paper in the data names a venue {claim.text!r}; the "
                                                    f"paper appeared at {shown}", notes)
    if claim.kind in ("other", "ancillary"):
        out.status = "unverifiable"
        out.why = (f"{claim.text!r} is not held by the corpus (main tracks of 15 venues only); a paper of this title "
                   f"appeared at {rec.venue} {rec.year}: cannot verify offline")
        out.notes = notes
        return out
    if claim.kind == "held":
        # another venue is an error when the claimed venue-year is held completely, or when both
        # are conferences; a journal (JMLR) of a year not held may be an extended version
        known = index.is_complete(claim.code, year) or (claim.code != "JMLR" and rec.venue != "JMLR"
                                                         and all(v != "JMLR" for v, _ in rec.also))
        v_issues, vyear = compare_venue(claim, rec, known)
        if not known and claim.code not in {v for v, _ in rec.venue_years()}:
            out.why = (f"the corpus does not hold {claim.code} {year}; a paper of this title appeared at "
                       f"{rec.venue} {rec.year}: cannot verify offline")
            out.notes = notes
            return out
        issues += v_issues
        y = _journal_year(compare_year(entry, claim, rec, vyear, venue=rec.venue if v_issues else None,
                                       volumes=index.volume_years), rec, notes)
        if y is not None:
            issues.append(y)
    else:
        y = _journal_year(compare_year(entry, claim, rec, None, volumes=index.volume_years), rec, notes)
        if y is not None:
            issues.append(y)
    if entry.structured:        # authors parsed from a reference string are too rough to compare
        if claim.kind == "held" and claim.code != rec.venue and not authors_agree(entry, rec):
            issues += compare_authors(entry, rec, order=False, notes=notes)   # another version's list (JMLR of ICLR)
        elif claim.kind != "held" or claim.code == rec.venue:
            issues += compare_authors(entry, rec, order=index.order_trusted(rec), notes=notes)
        issues = weigh_authors(index, entry, rec, issues, notes)
    issues += compare_identifiers(entry, rec, index)
    if issues and (claim.kind == "none" or entry.year is None):
        got = _another_version(out, index, rec, entry, claim, title, issues, notes)
        if got is not None:
            return got
    return _verdict(out, rec, title, issues, notes, index=index)


def versions_of(index: RefIndex, rec: Record, entry: Entry) -> list[Record]:
    """Every other version of a corpus paper the data has: its other venues (``also_published``), the
    linked versions (``versions.parquet``: conference, journal, workshop), and the catalogue's work of
    the entry's title (an arXiv preprint, say)."""
    out = [Record(rec.paper_id, rec.title, rec.authors, v, y, "corpus") for v, y in rec.also]
    corpus, side = index.version_rows(rec.paper_id)
    out += [index.record(r) for r in corpus] + [index.side_record(r) for r in side]
    work = catalogue_work(index, entry)
    if work is not None and work.authors:
        out.append(work)
    return out


def _another_version(out: RefCheck, index: RefIndex, rec: Record, entry: Entry, claim: VenueClaim, title: str,
                     issues: list[Issue], notes: list[str]) -> RefCheck | None:
    """An entry without a venue or a year names no version: verified when one version of the work
    (:func:`versions_of`) agrees with its year and authors (the journal version's four authors, the
    arXiv year), else None (the issues against the record stand)."""
    if any(i.field not in ("authors", "year") for i in issues):
        return None
    for v in versions_of(index, rec, entry):
        year_issue = None if entry.year is None else compare_year(entry, claim, v, None, volumes=index.volume_years)
        got = [year_issue] if year_issue is not None else []
        if entry.structured:
            got += compare_authors(entry, v, order=False)
        if not got:
            where = (f"{v.venue} {v.year}".strip() if v.source != "catalogue"
                     else f"the version other papers cite ({v.year})")
            notes.append(f"the entry names no {'venue' if claim.kind == 'none' else 'year'}: compared with every "
                         f"version of the work, it matches {where}")
            return _verdict(out, rec, title, [], notes, index=index)
    return None


def _by_title_parts(out: RefCheck, index: RefIndex, title: str, entry: Entry, claim: VenueClaim,
                    year: int | None, issues: list[Issue], notes: list[str]) -> int | RefCheck | None:
    """Steps 3 and 4 of the module doc for an entry no record has the title of: the corpus row
    found (issues and notes added), the answer when it is a side record, or None."""
    joined = joined_title(index, title, entry, claim, year)
    if joined is not None:
        a, b = joined
        row = a if _anchor(index, a, entry, claim, year) else b
        issues.append(Issue("title", entry.title, index.title[row],
                            f"the title joins two papers: {index.title[a]!r} and {index.title[b]!r}"))
        return row
    if holds(index, entry, claim, year):
        hit = by_authors(index, entry, (claim.code,), year)
        # another paper of the authors is no answer for a title other papers cite (a real paper the data lacks)
        if hit is not None and (_is_renamed(index.titles.norms[hit[0]], hit[1], title)
                                or not cited_title(index, entry)):
            _renamed(index.titles.norms[hit[0]], index.title[hit[0]], hit[1], title, entry, claim, year, issues, notes)
            return hit[0]
    if claim.kind == "other" and claim.side and index.side_is_complete(side_names(claim), year):
        hit = by_authors(index, entry, side_names(claim), year, side=True)
        if hit is not None:
            _renamed(index.side.norms[hit[0]], index.side_fields["title"][hit[0]], hit[1], title, entry,
                     claim, year, issues, notes)
            return check_side(out, index, hit[0], entry, claim, year, title, issues, notes)
    return None


def _renamed(norm: str, shown: str, sim: float, title: str, entry: Entry, claim: VenueClaim, year: int | None,
             issues: list[Issue], notes: list[str]) -> None:
    """A title issue for the paper of the entry's authors found at the claimed venue-year (module
    doc, step 4): the same paper under another title (a renamed version: the venue's title is the
    one to cite; the difference shown), or another paper of the same authors."""
    if _is_renamed(norm, sim, title):
        diff = title_difference(title, shown)
        if diff is None:
            notes.append(f"the title is written differently from the record's ({sim:.0f}% similar)")
        else:
            issues.append(Issue("title", entry.title, shown, f"the title differs from the record's: {diff} (these "
                                f"authors' paper at {_claimed(claim, year)}, renamed)"))
    else:
        issues.append(Issue("title", entry.title, shown,
                            f"no paper of {_claimed(claim, year)} has this title; these authors' paper "
                            f"there is titled otherwise"))


def _is_renamed(norm: str, sim: float, title: str) -> bool:
    """Whether a paper of the entry's authors (normalised title ``norm``, token-set similarity
    ``sim``) is a renamed version of the entry's title (module doc, step 4)."""
    return sim >= RENAMED_SIMILARITY and _foreign_words(title, norm) <= max(2, len(title.split()) // 4)


def _side_claim_of_corpus_paper(out: RefCheck, index: RefIndex, rec: Record, entry: Entry, claim: VenueClaim,
                                year: int | None, title: str, notes: list[str]) -> RefCheck:
    """An entry naming a side venue-year held completely (TMLR 2024) whose title is a corpus
    paper's, with no version there: a renamed version there by the same authors, else a venue mismatch."""
    hit = by_authors(index, entry, side_names(claim), year, side=True)
    if hit is not None and _is_renamed(index.side.norms[hit[0]], hit[1], title):
        notes.append(f"the title differs from the record's ({hit[1]:.0f}% similar): a renamed version?")
        return check_side(out, index, hit[0], entry, claim, year, title, [], notes)
    shown = ", ".join(f"{v} {y}" for v, y in rec.venue_years())
    return _venue_mismatch(out, claim.side, rec, f"the paper appeared at {shown}, not at {claim.side} {year}", notes)


def _claimed(claim: VenueClaim, year: int | None) -> str:
    name = claim.code or claim.side
    return f"{name} {year}" if year is not None else str(name)


def _not_found(out: RefCheck, entry: Entry, claim: VenueClaim, year: int | None, index: RefIndex,
               notes: list[str]) -> RefCheck:
    work = catalogue_work(index, entry)
    if work is not None:
        notes.append(f"the catalogue of cited works knows this title ({work.venue or 'no venue'}, {work.year})")
    held, measure = completeness(index, entry, claim, year)
    side = claim.kind == "other" and index.side_is_complete(side_names(claim), year)
    witnesses = cited_title(index, entry) if held or side else 0
    if (held or side) and clean_title(entry.title or "").strip() and not witnesses:
        n = index.counts.get((claim.code, int(year)), 0) if held else index.side_count(side_names(claim), year)
        who = "the corpus holds" if held else "the side records hold"
        out.status = "not_found"
        out.why = (f"{who} {_claimed(claim, year)} completely ({measure if held else f'{n} papers'}) and none of "
                   f"them is this paper: very likely invented or misattributed")
        out.record = None
    elif (held or side) and witnesses and (conflict := consensus_conflict(work, claim, year)):
        out.record = work.to_json()
        return _venue_mismatch(out, _claimed(claim, year), work, f"no record of {_claimed(claim, year)} (held "
                               f"completely) has this title; {witnesses} papers of the data cite it as {conflict}",
                               notes)
    elif witnesses:
        out.status = "unverifiable"
        out.why = (f"no record of {_claimed(claim, year)} has this title, but {witnesses} papers of the data cite "
                   f"it: a real paper the data does not hold (another track or version?): cannot verify offline")
        out.record = work.to_json() if work is not None else None
    elif work is not None and (n := attested(entry, work, index)):
        out.status = "verified"
        out.why = (f"cited with this title, first author and year by {n} papers of the data (the catalogue of "
                   f"cited works); no proceedings or journal record holds it, so its venue is not checked")
        out.record = work.to_json()
    elif (n := cited_so(index, entry)):
        out.status = "verified"
        out.why = (f"cited so (title, first author, year) by {n} papers' reference lists; no proceedings or "
                   f"journal record holds it. This shows the work exists and is cited as others cite it; it "
                   f"does not check the venue or the full author list")
        out.record = work.to_json() if work is not None else None
    else:
        out.status = "unverifiable"
        out.why = _unverifiable_why(entry, claim, year, index)
        if claim.kind == "held" and measure and not held and entry.title:
            out.why = f"{measure}: cannot verify offline"
        out.record = work.to_json() if work is not None else None
    out.notes = notes
    return out


#: a preprint cited this many years before the claimed year was not a paper of that venue-year's workshops
PREPRINT_GAP = 2


def consensus_conflict(work: Record | None, claim: VenueClaim, year: int | None) -> str:
    """Where the papers citing a catalogue work place it, when that is not the venue the entry claims
    ("" when it agrees or says nothing): another venue of the 15, another venue named as a conference,
    journal, transactions, symposium or proceedings, or
    an arXiv preprint :data:`PREPRINT_GAP` years or more before the claimed year (a workshop paper's
    preprint is of its year)."""
    if work is None or not work.venue or year is None:
        return ""
    got = classify_venue(work.venue)
    where = f"{work.venue} {work.year or ''}".strip()
    if got.kind == "held" and got.code != claim.code:
        return where
    named = got.side or re.search(r"\b(?:conference|journal|transactions|symposium|proceedings)\b", work.venue, re.I)
    if got.kind == "other" and named and (got.side is None or got.side != claim.side):
        return where
    if got.kind == "arxiv" and work.year is not None and int(year) - int(work.year) >= PREPRINT_GAP:
        return f"an arXiv preprint of {work.year}"
    return ""


#: a work of the catalogue vouches for an entry outside every record when this many papers cite it ...
MIN_ATTESTED = 3
#: ... or this many when the catalogue has no author list to compare the entry's first author with
MIN_ATTESTED_NO_AUTHORS = 5


def attested(entry: Entry, work: Record, index: RefIndex) -> int:
    """How many papers of the data cite ``work`` as the entry does (0: not enough to vouch for it).

    The catalogue of cited works gathers the references of the extracted papers that link to no
    record: an entry whose title (same normalised title, or rapidfuzz ratio at least 93), year (within
    one: preprint versions) and first author agree with a work at least :data:`MIN_ATTESTED` papers
    cite is written as other researchers write it. That shows the work exists as cited, not that
    its venue is right, and a work every citer copied wrongly would pass: the answer says so."""
    row = index.work_row(work.paper_id)
    n = index.work_citing(row) if row is not None else 0
    if not entry.title or entry.year is None or work.year is None or abs(int(entry.year) - int(work.year)) > 1:
        return 0
    if title_similarity(clean_title(entry.title), work.title) < FUZZY_SAME:
        return 0
    first = surname_key(entry.authors[0]) if entry.authors else ""
    if work.authors:
        if not first or first not in {surname_key(a) for a in work.authors[:3]}:
            return 0
        return n if n >= MIN_ATTESTED else 0
    return n if n >= MIN_ATTESTED_NO_AUTHORS else 0


def cited_so(index: RefIndex, entry: Entry) -> int:
    """How many papers' reference lists (:mod:`.consensus`) cite the entry as it is written: title,
    first author's family name, a year within one (0: fewer than :data:`MIN_ATTESTED`, or no lists)."""
    if index.consensus is None or not entry.title or not entry.authors or entry.year is None:
        return 0
    n = index.consensus.cited_so(clean_title(entry.title), entry.authors[0], entry.year)
    return n if n >= MIN_ATTESTED else 0


def _unverifiable_why(entry: Entry, claim: VenueClaim, year: int | None, index: RefIndex) -> str:
    if not entry.title:
        return "no title: cannot verify offline"
    if claim.kind == "arxiv":
        return "an arXiv preprint the corpus does not hold: cannot verify offline"
    if claim.kind == "held":
        if year is None:
            return f"{claim.code} without a year: cannot verify offline"
        held = index.held_years(claim.code)
        span = f" (it holds {held[0]}-{held[-1]}, with gaps)" if held else ""
        return f"the corpus does not hold {claim.code} {year} completely{span}: cannot verify offline"
    if claim.kind == "ancillary":
        return f"{claim.text!r}: workshops, Findings and other side tracks are not in the corpus: cannot verify offline"
    if claim.kind == "other" and claim.side:
        return (f"{claim.text!r} is not a venue the corpus holds (nor is {_claimed(claim, year)} held completely by "
                f"the side records): cannot verify offline")
    if claim.kind == "other":
        return f"{claim.text!r} is not a venue the corpus holds: cannot verify offline"
    return "no venue, and no corpus paper has this title: cannot verify offline"


# ---- a file ------------------------------------------------------------------------------------------

def check_entries(entries: list[Entry], index: RefIndex) -> list[RefCheck]:
    return [check_entry(e, index) for e in entries]


def check_refs(path: str | Path, *, work: str | Path | None = None, index: RefIndex | None = None
               ) -> list[RefCheck]:
    """One :class:`RefCheck` per entry of ``path`` (a .bib, a .bbl, a LaTeX project or archive, or a
    draft), in input order. Raises MustciteError naming the file when it cannot be read."""
    return check_file(path, work=work, index=index)[0]


def check_file(path: str | Path, *, work: str | Path | None = None, index: RefIndex | None = None
               ) -> tuple[list[RefCheck], list[str]]:
    """:func:`check_refs` and the reader's messages (entries it skipped, with file and line)."""
    entries, messages = read_entries(path)
    index = index if index is not None else load_index(work)
    return check_entries(entries, index), messages



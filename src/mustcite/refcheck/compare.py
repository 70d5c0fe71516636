"""Field comparisons of an entry against the record found for it, each giving :class:`Issue` s.

* authors (:func:`compare_authors`): an entry author who is no author of the record is *added*;
  a record author the entry lacks is *dropped* (unless the entry ends in "and others"/"et al.",
  a truncated list); the same people in another order are *swapped*, but only against a record
  whose order is trustworthy; a record name whose family name is the start of the entry's is the
  same person, cut short by its source (:func:`cut_names`) (``order``: not a list its source alphabetised,
  :meth:`~.index.RefIndex.order_trusted`). A record list that cannot be trusted is not compared
  (:func:`trusted_authors`: none, one name against an entry of three or more, or stray characters
  in a name); a name a record repeats counts once (:func:`record_names`).
* year (:func:`compare_year`): the year of the venue the entry names (a work folded from several
  venues has one year per venue), the same rule for every venue: a year off by one is wrong
  (a NeurIPS volume printed the next year, a PMLR volume of UAI or CoRL dated the next year do not
  change the meeting's year); only an entry without a venue may give its preprint's year, one
  before the record's.
* venue (:func:`compare_venue`): the entry's venue code must be one of the record's venues.
* identifiers (:func:`compare_identifiers`): a DOI, arXiv id or URL that names another corpus
  paper (of another title: two records of one work may share a DOI; a NeurIPS hash only within the
  entry's year, :func:`id_scope_year`), or an ACL Anthology / NeurIPS / PMLR id other than the
  record's own (not an OpenReview id: a paper has several forums, submission, venue, workshop); a DOI
  of a registrant no record or cited work has DOIs of (invented), or of the series of the record's
  own DOI with another number (another paper of the same proceedings). A corpus record's DOI, and
  another paper's, accuse only where their venue-year's DOIs are witnessed by titles
  (:meth:`~.index.RefIndex.dois_witnessed`).
"""

from __future__ import annotations

import re
from collections import Counter

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from ..corpus.records import normalize_title, surname_key
from ..extract.link import identifier_keys
from .entries import Entry
from .index import Record, RefIndex, doi_series
from .person_names import align, name_tokens
from .results import Issue
from .venue import VenueClaim

#: identifier kinds the corpus records carry (from their URLs); others (a CVPR DOI) cannot be compared
RECORD_ID_KINDS = ("acl", "nips", "pmlr")


#: the year in a NeurIPS proceedings URL (``/paper/2017/hash/...``, ``/paper_files/paper/2017/...``)
_URL_YEAR = re.compile(r"/paper(?:_files/paper)?/((?:19|20)\d\d)/")


def id_scope_year(entry: Entry) -> int | None:
    """The year a year-scoped identifier of the entry (a NeurIPS hash) is read in: its URL's, else the entry's."""
    m = _URL_YEAR.search(entry.url or "")
    return int(m.group(1)) if m else entry.year


def _names(xs: list[str]) -> str:
    return ", ".join(xs)


#: a character no person's name holds (a record with one is a garbled list)
_STRAY = re.compile(r"[0-9@*#&;:()\[\]{}<>|/\\†‡§¶]")


def trusted_authors(entry: Entry, record: Record) -> bool:
    """Whether the record's author list can be compared with the entry's: it has names, more than
    one when the entry names three or more (a one-name record of a long list is a group name,
    "BigScience Workshop", or a cut list), and no stray character in a name."""
    names = record.authors
    if not names or (len(names) == 1 and len(entry.authors) >= 3):
        return False
    return not any(_STRAY.search(n) for n in names)


def record_names(record: Record) -> list[str]:
    """The record's author list with a name repeated by its source counted once."""
    return list(dict.fromkeys(record.authors))


#: a record's family name cut short is at least this long (shorter starts say nothing)
MIN_CUT = 3


def cut_names(entry: list[str], record: list[str], a) -> list[tuple[int, int]]:
    """(entry index, record index) of the entry authors left unmatched whose family name starts with
    the family name of an unmatched record author, who is that name cut short by the source ("Lafon"
    for "Lafontaine", "Man" for "Mané"): the same person."""
    out, used = [], set()
    for i in a.extra:
        te = name_tokens(entry[i])
        for j in a.missing:
            tr = name_tokens(record[j])
            if j in used or not te or not tr:
                continue
            if len(tr[-1]) >= MIN_CUT and te[-1] != tr[-1] and te[-1].startswith(tr[-1]):
                out.append((i, j))
                used.add(j)
                break
    return out


def compare_authors(entry: Entry, record: Record, *, order: bool = True, notes: list[str] | None = None
                    ) -> list[Issue]:
    """Issues of the entry's author list against the record's (module doc); ``order``: the record's
    order is trustworthy; a record name cut short (:func:`cut_names`) is the entry's, with a note in
    ``notes``."""
    if not entry.authors or not trusted_authors(entry, record):
        return []
    names = record_names(record)
    a = align(entry.authors, names)
    cut = cut_names(entry.authors, names, a)
    if cut:
        a.extra = [i for i in a.extra if i not in {i for i, _ in cut}]
        a.missing = [j for j in a.missing if j not in {j for _, j in cut}]
        a.matched = sorted(a.matched + cut)
        if notes is not None:
            notes.append("the record's name " + ", ".join(f"{names[j]!r}" for _, j in cut) + " looks cut short ("
                         + ", ".join(f"{entry.authors[i]!r}" for i, _ in cut) + " in the entry): taken as the same")
    issues = []
    shown_e, shown_r = _names(entry.authors) + (" and others" if entry.others else ""), _names(names)
    if a.extra:
        who = _names([entry.authors[i] for i in a.extra])
        issues.append(Issue("authors", shown_e, shown_r,
                            f"{who} {'is' if len(a.extra) == 1 else 'are'} not among the record's authors "
                            f"({len(entry.authors)} named, the record has {len(names)})"))
    if a.missing and not entry.others:
        who = _names([names[j] for j in a.missing])
        issues.append(Issue("authors", shown_e, shown_r,
                            f"{who} {'is' if len(a.missing) == 1 else 'are'} missing "
                            f"({len(entry.authors)} named, the record has {len(names)})"))
    if order and not a.extra and a.matched and not a.in_order:
        issues.append(Issue("authors", shown_e, shown_r, "the same authors in another order"))
    return issues


def compare_year(entry: Entry, claim: VenueClaim, record: Record, venue_year: int | None, *,
                 venue: str | None = None, volumes: dict[tuple[str, int], int] | None = None) -> Issue | None:
    """``venue_year``: the record's year at the venue the entry names (its main year otherwise);
    ``venue``: the record's venue, to name in the issue (the claimed held venue otherwise);
    ``volumes``: the later years venue-years' proceedings volumes are dated (:mod:`.volumes`), which
    an entry may give instead."""
    if entry.year is None:
        return None
    ref = venue_year if venue_year is not None else record.year
    if ref is None or entry.year == ref:
        return None
    at = claim.code if venue_year is not None and claim.kind == "held" else record.venue
    if volumes and volumes.get((at, ref)) == entry.year:
        return None          # the year its proceedings volume is dated (UAI 2019: PMLR v115, 2020)
    if claim.kind == "none" and entry.year == ref - 1:
        return None          # an entry without a venue may date the preprint
    where = f"{venue} " if venue else (f"{claim.code} " if claim.kind == "held" else "")
    return Issue("year", str(entry.year), str(ref), f"the record is {where}{ref}, not {entry.year}")


def compare_venue(claim: VenueClaim, record: Record, held: bool = True) -> tuple[list[Issue], int | None]:
    """Issues of a held venue that is not the record's, and the record's year at the named venue.
    ``held``: the corpus holds the claimed venue-year completely; only then is another venue an
    error (a journal version of a conference paper, JMLR 2009 say, is a venue-year it lacks)."""
    if claim.kind != "held":
        return [], None
    years = [y for v, y in record.venue_years() if v == claim.code]
    if years:
        return [], years[0] if len(years) == 1 else (claim.year if claim.year in years else years[0])
    if not held:
        return [], None
    shown = ", ".join(f"{v} {y}" for v, y in record.venue_years())
    return [Issue("venue", claim.code, shown, f"the paper appeared at {shown}, not at {claim.code}")], None


def compare_identifiers(entry: Entry, record: Record, index: RefIndex) -> list[Issue]:
    keys = identifier_keys(doi=entry.doi, arxiv=entry.arxiv, url=entry.url)
    if not keys:
        return []
    issues = []
    year = id_scope_year(entry)
    own = set(record.identifiers)
    own_kinds = {k.split(":", 1)[0] for k in own}
    for k in keys:
        kind = k.split(":", 1)[0]
        field = "doi" if kind == "doi" else "identifier"
        shown = {"doi": entry.doi, "arxiv": entry.arxiv}.get(kind) or entry.url or k
        if k in own:
            continue
        if record.source == "corpus":
            mine = normalize_title(record.title)
            rows = [r for r in index.id_rows(k, year) if index.titles.ids[r] != record.paper_id
                    and index.titles.norms[r] != mine
                    and (kind != "doi" or index.dois_witnessed(index.venue[r], index.year[r]))]
            if rows:
                other = index.record(rows[0])
                issues.append(Issue(field, shown, ", ".join(sorted(own)) or None,
                                    f"{k} is the identifier of another paper: {other.title!r} "
                                    f"({other.venue} {other.year})"))
                continue
            if kind in RECORD_ID_KINDS and kind in own_kinds:
                issues.append(Issue(field, shown, ", ".join(sorted(x for x in own if x.startswith(kind))),
                                    f"the record's {kind} id is not {k.split(':', 1)[1]}"))
                continue
        other = catalogue_work_of(k, record, index)
        if other is not None:
            issues.append(Issue(field, shown, ", ".join(sorted(own)) or None,
                                f"{k} is the identifier of another paper: {other.title!r}"
                                + (f" ({other.year})" if other.year else "")))
            continue
        if kind == "doi":
            witnessed = record.source != "corpus" or index.dois_witnessed(record.venue, record.year)
            issue = _doi_issue(k[4:], shown, sorted(x[4:] for x in own if x.startswith("doi:")), index,
                               series=witnessed)
            if issue is not None:
                issues.append(issue)
    # an ACL DOI names an Anthology id: the acl key above covers it; keep one issue per field
    seen, out = set(), []
    for i in issues:
        if (i.field, i.why) not in seen:
            seen.add((i.field, i.why))
            out.append(i)
    return out


def _doi_issue(doi: str, shown: str, own: list[str], index: RefIndex, *, series: bool = True) -> Issue | None:
    """A DOI that cannot be the record's: of a registrant no record or cited work has a DOI of (an
    invented DOI), or (with ``series``: the record's DOIs are witnessed) of the series of the record's
    own DOI (the same proceedings) with another number."""
    if not index.doi_registrant_known(doi):
        return Issue("doi", shown, ", ".join(own) or None, f"no paper in the data has a DOI of registrant "
                     f"{doi.split('/', 1)[0]}: {doi} is not this paper's")
    if not series:
        return None
    same = [d for d in own if doi_series(d) is not None and doi_series(d) == doi_series(doi)]
    if same:
        return Issue("doi", shown, same[0], f"the record's DOI is {same[0]}, not {doi}")
    return None


#: words whose presence or absence changes no title ("&" is read as nothing, "and" as a word)
_NOT_CONTENT = frozenset({"a", "an", "the", "and"})
#: British spellings and their American forms, by word ending (both titles are mapped alike)
_SPELLING = [(re.compile(p), r) for p, r in [
    (r"(?<=[a-z]{3})is(e|ed|es|ing|ation|ations|er|ers)$", r"iz\1"),
    (r"(?<=[a-z]{3})our(s|ed|ing|hood|hoods)?$", r"or\1"),
    (r"(?<=[a-z]{2})ll(ed|ing|er|ers)$", r"l\1"), (r"(?<=[a-z]{2})ys(e|ed|es|ing)$", r"yz\1"),
    (r"(?<=[a-z]{2})tre(s)?$", r"ter\1"), (r"(?<=[a-z]{3})ogue(s)?$", r"og\1"), (r"^defence$", "defense"),
    (r"^towards$", "toward"), (r"^programme(s)?$", r"program\1"), (r"^grey$", "gray")]]


def _title_words(title: str) -> list[str]:
    """The words of a title as compared: LaTeX commands dropped, normalised, American spelling."""
    words = normalize_title(re.sub(r"\\[a-zA-Z]+", " ", title or "")).split()
    out = []
    for w in words:
        for pat, rep in _SPELLING:
            w = pat.sub(rep, w)
        out.append(w)
    return out


def _main_title(title: str) -> str:
    return re.split(r":|\s[-–—]\s", title or "", maxsplit=1)[0]


def title_difference(entry: str, record: str) -> str | None:
    """How the entry's title differs from the record's by a content word ("'inference' where the
    record has 'reasoning'", a plural too), or None when they differ only in case, punctuation,
    hyphenation, British/American spelling, articles, a slip of one letter inside a long word
    (either side may have it: "Langauge"), or a subtitle one of them lacks."""
    a, b = _title_words(entry), _title_words(record)
    if a == b or "".join(a) == "".join(b):
        return None
    for x, y in ((entry, record), (record, entry)):       # "Main: Subtitle" against "Main"
        if ":" in x or " - " in x:
            if "".join(_title_words(_main_title(x))) == "".join(_title_words(y)):
                return None
    extra = [w for w in (Counter(a) - Counter(b)).elements() if w not in _NOT_CONTENT]
    lacking = [w for w in (Counter(b) - Counter(a)).elements() if w not in _NOT_CONTENT]
    for x in list(extra):          # a slip of one letter in a long word ("Langauge"), not an ending
        y = next((y for y in lacking if min(len(x), len(y)) >= 6 and OSA.distance(x, y) == 1
                  and not (x.startswith(y) or y.startswith(x))), None)
        if y is not None:
            extra.remove(x)
            lacking.remove(y)
    if not extra and not lacking:
        return None
    if extra and lacking:
        return f"{' '.join(repr(w) for w in extra)} where the record has {' '.join(repr(w) for w in lacking)}"
    if extra:
        return f"{' '.join(repr(w) for w in extra)} added"
    return f"{' '.join(repr(w) for w in lacking)} missing"


#: identifiers that name one paper whatever the year (a NeurIPS hash is scoped by its year)
CATALOGUE_ID_KINDS = ("arxiv", "doi", "openreview", "acl")
_WORDS = re.compile(r"[^\W\d_]{2,}")
#: a catalogue title read from a reference that gave none ("URL https://arxiv.org/pdf/1512.03385")
_NOT_A_TITLE = re.compile(r"https?:|www\.|\burl\b|arxiv\s*:?\s*\d{4}\.\d", re.I)
#: a catalogue work's title shares at most this much (rapidfuzz token set ratio, 0-100) with a
#: record's that it is clearly another paper's; without authors to compare, the lower bound
OTHER_TITLE, OTHER_TITLE_ALONE = 50, 35


def catalogue_work_of(key: str, record: Record, index: RefIndex) -> Record | None:
    """The catalogue work (of ``works.parquet``) that identifier ``key`` names, when it is clearly
    another paper than ``record``: its title shares little with the record's (a renamed version
    keeps most of its words) and no author of either list is the other's (each of the first five,
    by surname), or, where one side lists no authors, its title shares even less. None when the
    catalogue does not know ``key`` or the work may be a version of ``record``."""
    works = index.works
    rows = works.id_rows.get(key) if works is not None and key.split(":", 1)[0] in CATALOGUE_ID_KINDS else None
    if not rows:
        return None
    other = index.work(rows[0])
    kinds = index.work_fields.get("kind")
    if other.paper_id == record.paper_id or not record.title or (kinds is not None and kinds[rows[0]] != "paper") \
            or len(_WORDS.findall(other.title)) < 3 or _NOT_A_TITLE.search(other.title):
        return None
    overlap = fuzz.token_set_ratio(normalize_title(other.title), normalize_title(record.title))
    if record.authors and other.authors:
        theirs = {surname_key(a) for a in other.authors[:5]} - {""}
        ours = {surname_key(a) for a in record.authors[:5]} - {""}
        return other if overlap < OTHER_TITLE and theirs and ours and not theirs & ours else None
    return other if overlap < OTHER_TITLE_ALONE else None


def title_similarity(a: str, b: str) -> float:
    """0-100: rapidfuzz ratio of the normalised titles."""
    return fuzz.ratio(normalize_title(a), normalize_title(b))

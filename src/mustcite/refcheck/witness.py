"""Two witnesses before an accusation: when a record is trusted enough to call an entry's field wrong.

A record is one source's reading of a paper, and sources err: a name cut short ("Lafon" for
"Lafontaine", "Man" for "Mané"), four of a paper's nine authors, a title from an earlier version.
An author or title mismatch is reported only against a record that is confirmed or consistent
in itself; otherwise the disagreement becomes a note and the field is not flagged:

* **the sources disagree** (``disagreements.parquet``: the lists one corpus paper was read from
  give different titles or author lists): the entry is compared with each source's value; a field
  is flagged only where every source's value disagrees with the entry in the same way (each finds
  the same kind of issue: a name added, a name missing, another order); an entry that agrees with
  one of them is fine;
* **a name cut short** (:func:`~.compare.compare_authors`): a record name whose family name is the
  start of the entry's (at least three letters) is the same person, with a note; a source that cut
  a name at its accent or at a field length is the usual cause;
* **a partial list**: a record whose names are all among the entry's, in order, while the entry
  names more, is a list the source may have cut; it is trusted only when a second list of the data
  holds the paper (:meth:`~.index.RefIndex.witnesses`) and the sources do not disagree on the count.
"""

from __future__ import annotations

from .compare import compare_authors, title_difference
from .entries import Entry
from .index import Record, RefIndex
from .person_names import align
from .results import Issue


def _kind(issue: Issue) -> str:
    why = issue.why
    return "added" if "not among" in why else "missing" if "missing" in why else "order" if "order" in why else why


def weigh_authors(index: RefIndex, entry: Entry, rec: Record, issues: list[Issue], notes: list[str]) -> list[Issue]:
    """The issues with the author issues a record cannot carry alone removed, notes added (module doc)."""
    mine = [i for i in issues if i.field == "authors"]
    if not mine or rec.source != "corpus":
        return issues
    rest = [i for i in issues if i.field != "authors"]
    disputed = index.disputes.get(rec.paper_id, {}).get("authors")
    if disputed:
        kinds = {_kind(i) for i in mine}
        for _source, value in disputed:
            other = Record(rec.paper_id, rec.title, [n.strip() for n in value.split(";") if n.strip()], rec.venue,
                           rec.year)
            kinds &= {_kind(i) for i in compare_authors(entry, other, order=index.order_trusted(other))}
        kept = [i for i in mine if _kind(i) in kinds]
        if len(kept) < len(mine):
            names = ", ".join(dict.fromkeys(s for s, _ in disputed))
            notes.append(f"the record's sources ({names}) disagree on the authors; the entry agrees with one of "
                         f"them: not flagged")
        mine = kept
    a = align(entry.authors, list(dict.fromkeys(rec.authors)))
    partial = bool(a.extra) and not a.missing and a.in_order and len(rec.authors) < len(entry.authors)
    count_disputed = disputed is not None and any(len(v.split(";")) != len(rec.authors) for _, v in disputed)
    if partial and (index.witnesses(index.row_of(rec.paper_id) or 0) < 2 or count_disputed):
        mine = [i for i in mine if _kind(i) != "added"]
        notes.append(f"the record lists {len(rec.authors)} of the entry's {len(entry.authors)} authors, all of them "
                     f"among the entry's, and no second list confirms its list: a partial record? not flagged")
    return rest + mine


def alternative_titles(index: RefIndex, rec: Record) -> list[str]:
    """The titles the sources of a corpus paper give (beside the record's) where they disagree."""
    if rec.source != "corpus":
        return []
    return [v for _, v in index.disputes.get(rec.paper_id, {}).get("title", ()) if v and v != rec.title]


def title_disputed(index: RefIndex, rec: Record, title: str, notes: list[str]) -> bool:
    """Whether the sources of the record disagree on its title, so that the entry's title is not
    flagged: it agrees with one of them, or they disagree among themselves (a note either way)."""
    alts = alternative_titles(index, rec)
    if not alts:
        return False
    if any(title_difference(title, t) is None for t in alts):
        notes.append("the title agrees with another source's title of this paper")
    else:
        notes.append(f"the record's sources disagree on its title ({len(alts) + 1} titles): not flagged")
    return True


#: the note each check leaves when it keeps a field from being flagged (to count them)
CHECK_NOTES = {
    "authors: sources disagree": "disagree on the authors",
    "authors: partial record": "a partial record?",
    "authors: name cut short": "looks cut short",
    "title: sources disagree": ("disagree on its title", "agrees with another source's title"),
    "year: journal date": "journals date a paper",
    "every version": "compared with every version",
}


def checks_fired(notes: list[str]) -> list[str]:
    """The witness checks (:data:`CHECK_NOTES`) whose note is among ``notes``."""
    out = []
    for name, marks in CHECK_NOTES.items():
        marks = (marks,) if isinstance(marks, str) else marks
        if any(m in n for n in notes for m in marks):
            out.append(name)
    return out

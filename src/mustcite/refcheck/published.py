"""The BibTeX entry proposed for an ``outdated`` entry: the published version, under the entry's key.

**What it holds.** The record gives the entry type (``@article`` for a journal, else
``@inproceedings``), the title, the authors, the venue (``booktitle`` or ``journal``), the year and
its URL (which replaces the user's own, then named among the fields left out). Every other field
of the user's entry is kept as they wrote it (``doi``, ``note``, ``abstract``, ``keywords``,
``file``, ...), except the fields that describe the version being
replaced (:data:`SUPERSEDED`): its identifiers (``eprint``, ``archivePrefix``, ``primaryClass``, an
arXiv DOI or URL), its venue and where in it (``journal``, ``booktitle``, ``howpublished``,
``publisher``, ``volume``, ``number``, ``pages``, ``editor``, ``address``, ``series``, ...), its
date (``month``, ``date``), a ``crossref`` to its volume, DBLP's record of it (``biburl``,
``bibsource``, ``timestamp``), and a ``note`` that only says it is a preprint ("arXiv preprint",
"under review"). A preprint's ``pages`` or ``volume`` (``abs/1805.11111``) is not the published
paper's, so those are left out rather than carried over wrong; the check's notes name every field
left out this way, so that nothing the user wrote disappears unseen.

**How values are written** (:mod:`mustcite.bibwrite`): special characters escaped outside math
(``%`` ``&`` ``#`` ``_`` ``^`` ``~``, an unpaired ``$``), ``$...$`` math and LaTeX commands kept,
braces balanced. The title keeps the record's casing as published: it is wrapped in a second pair
of braces (``title = {{BERT: Pre-training of ...}}``), so that no bibliography style lowercases it.
Names keep the record's spelling; a name the record has in lower case only (a paper list copies
what an author typed) takes the user's spelling of the same name, else capital initials
("peter j bickel" -> "Peter J Bickel"; particles such as "van" or "de" inside a name stay lower
case, as BibTeX reads them).
"""

from __future__ import annotations

import re

from ..bibwrite import braced_value, entry, latex_text
from .person_names import name_tokens

#: the full names of the venues a record may carry, as a BibTeX entry writes them
VENUE_NAMES = {
    "NeurIPS": "Advances in Neural Information Processing Systems",
    "ICML": "International Conference on Machine Learning",
    "ICLR": "International Conference on Learning Representations",
    "AISTATS": "International Conference on Artificial Intelligence and Statistics",
    "UAI": "Conference on Uncertainty in Artificial Intelligence", "COLT": "Conference on Learning Theory",
    "IJCAI": "International Joint Conference on Artificial Intelligence",
    "AAAI": "AAAI Conference on Artificial Intelligence",
    "CVPR": "IEEE/CVF Conference on Computer Vision and Pattern Recognition",
    "ICCV": "IEEE/CVF International Conference on Computer Vision", "ECCV": "European Conference on Computer Vision",
    "EMNLP": "Conference on Empirical Methods in Natural Language Processing",
    "NAACL": "Conference of the North American Chapter of the Association for Computational Linguistics",
    "ACL": "Annual Meeting of the Association for Computational Linguistics",
    "JMLR": "Journal of Machine Learning Research", "TMLR": "Transactions on Machine Learning Research",
    "JAIR": "Journal of Artificial Intelligence Research", "MLJ": "Machine Learning",
    "DMLR": "Journal of Data-centric Machine Learning Research", "WACV": "IEEE/CVF Winter Conference on "
    "Applications of Computer Vision", "CoRL": "Conference on Robot Learning",
}
#: record venues that are journals (an ``@article``)
JOURNALS = frozenset({"JMLR", "TMLR", "JAIR", "MLJ", "DMLR", "Neural Computation", "FTML", "Distill"})

#: the fields the record writes (the user's values of these are replaced)
REPLACED = frozenset({"title", "author", "year", "booktitle", "journal", "url"})
#: the user's fields that describe the version being replaced: left out (and named in a note)
SUPERSEDED = frozenset({
    "journaltitle", "eprint", "eprinttype", "archiveprefix", "primaryclass", "eprintclass", "howpublished",
    "publisher", "volume", "number", "issue", "pages", "editor", "address", "location", "organization",
    "institution", "school", "series", "month", "date", "venue", "eventtitle", "eventdate", "booktitleaddon",
    "maintitle", "issn", "isbn", "crossref", "type", "biburl", "bibsource", "timestamp",
})
#: a ``note`` that only says which version it is (left out: the published version is none of these)
_VERSION_NOTE = re.compile(r"(?i)\b(?:arxiv|preprint|under review|submitted|to appear|workshop|corr)\b")
#: a DOI or URL of arXiv's (the preprint's, not the published paper's)
_ARXIV_ID = re.compile(r"(?i)10\.48550/|arxiv\.org/")
#: name particles that stay lower case inside a name (BibTeX reads them as the "von" part)
_PARTICLES = frozenset("van von der den de del della di da du dos das le la ter ten zu y bin ibn al".split())


def published_name(name: str, entry_authors: list[str] = ()) -> str:
    """A record's author name as the entry writes it: as the record has it, unless the record has
    it in lower case only; then the user's spelling of the same name, else capital initials."""
    if not re.search(r"[^\W\d_]", name) or name != name.lower():
        return name
    tokens = name_tokens(name)
    for a in entry_authors:
        if a != a.lower() and name_tokens(a) == tokens:
            return a
    words = name.split()
    return " ".join(w if 0 < i < len(words) - 1 and w in _PARTICLES
                    else "-".join(p[:1].upper() + p[1:] for p in w.split("-"))
                    for i, w in enumerate(words))


def _name_value(name: str) -> str:
    """A name for the ``author`` field: in braces (one name, written as it is) when BibTeX would
    otherwise read it as several or misread its parts (a comma, the word "and")."""
    text = latex_text(name)
    return "{" + text + "}" if "," in name or re.search(r"(?i)\band\b", name) else text


def _venue_name(record: dict) -> tuple[str, bool]:
    """The venue as a BibTeX entry names it, and whether it is a journal."""
    venue, track = record.get("venue") or "", record.get("track") or ""
    name = VENUE_NAMES.get(venue, venue)
    journal = venue in JOURNALS or track == "journal"
    if name and track and not journal and not re.fullmatch(r"main|oral|poster|spotlight|long|short", track):
        name = (f"Findings of the Association for Computational Linguistics: {venue} {record.get('year') or ''}".strip()
                if "findings" in track else f"{name} ({track})")
    return name, journal


def kept_fields(fields: dict[str, str] | None, record: dict) -> tuple[list[tuple[str, str]], list[str]]:
    """The user's fields the proposal keeps (name, value as written) and the names of those it
    leaves out as the earlier version's (:data:`SUPERSEDED`, an arXiv DOI, a preprint note, an
    arXiv URL) or for the record's own (a URL other than the record's, where the record has one)."""
    kept, left = [], []
    for name, value in (fields or {}).items():
        name = name.lower()
        value = str(value)
        if name == "url" and record.get("url"):
            if value.strip() != record["url"]:
                left.append(name)            # the record's URL replaces it: named, as one left out
            continue
        if name in REPLACED and name != "url":
            continue
        superseded = (name in SUPERSEDED or (name in ("doi", "url") and _ARXIV_ID.search(value))
                      or (name == "note" and _VERSION_NOTE.search(value)))
        if superseded:
            left.append(name)
        elif value.strip():
            kept.append((name, braced_value(value)))
    return kept, left


def record_bibtex(record: dict, key: str, fields: dict[str, str] | None = None,
                  entry_authors: list[str] = ()) -> str:
    """The BibTeX entry, under ``key``, of a record as :meth:`~.index.Record.to_json` gives it
    (title, authors, venue: a journal as ``@article``, a side track named, "Findings of EMNLP";
    year, URL), then the user's other ``fields`` (:func:`kept_fields`). See the module doc."""
    name, journal = _venue_name(record)
    out = [("title", "{" + latex_text(record.get("title", "")) + "}")]
    if record.get("authors"):
        out.append(("author", " and ".join(_name_value(published_name(a, list(entry_authors)))
                                           for a in record["authors"])))
    if name:
        out.append(("journal" if journal else "booktitle", latex_text(name)))
    if record.get("year"):
        out.append(("year", str(record["year"])))
    if record.get("url"):
        out.append(("url", braced_value(record["url"])))
    out += kept_fields(fields, record)[0]
    return entry("article" if journal else "inproceedings", key, out)

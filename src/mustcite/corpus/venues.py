"""Venue codes, years and main-track rules for the paper lists in ``proceedings/``.

The MasterSet paper keeps "only main-conference full papers and excludes all ancillary tracks"
(Section 3.2). This module says, for one record, which of the 15 venue codes it belongs to and
whether its track/volume/status is a main-conference one:

* ACL Anthology volumes: keep ``long``/``short``/``main`` (and the numbered volumes ``1``/``2``
  whose booktitle is the main proceedings); drop findings, demos, industry, SRW, tutorials, workshops.
* paperlists ``track``: keep ``main`` (or none); drop NeurIPS "Datasets & Benchmarks" (MasterSet's
  NeurIPS count, 28,829 for 2000-2025, matches the main track alone) and the IJCAI survey, demo,
  journal, doctoral, early-career, sister-conference and late tracks. IJCAI special tracks (AI for
  Good, AI and Arts, Human-Centred AI) are refereed full papers of the main programme: kept.
* paperlists ``status`` of ACL-family files (Findings, Industry, System Demonstrations...): same rule.
"""

from __future__ import annotations

import re

from .records import VENUES

#: file-name prefix -> venue code
PREFIX_TO_VENUE: dict[str, str] = {
    "nips": "NeurIPS", "neurips": "NeurIPS", "icml": "ICML", "iclr": "ICLR", "aaai": "AAAI",
    "ijcai": "IJCAI", "cvpr": "CVPR", "iccv": "ICCV", "eccv": "ECCV", "acl": "ACL",
    "emnlp": "EMNLP", "naacl": "NAACL", "colt": "COLT", "uai": "UAI", "aistats": "AISTATS",
    "jmlr": "JMLR",
}
_CODE_BY_LOWER = {v.lower(): v for v in VENUES}

#: words in a track / volume / status / booktitle that mark a non-main-track record
_ANCILLARY = re.compile(
    r"finding|demo|industry|student|\bsrw\b|tutorial|workshop|shared task|datasets? (&|and) benchmark|"
    r"survey|journal|doctoral|early career|sister conference|late paper|best papers",
    re.IGNORECASE)

_FILE_YEAR = re.compile(r"^(?P<prefix>[a-z]+)(?P<year>\d{4})(?:_.*)?$")
_FILE_PREFIX = re.compile(r"^(?P<prefix>[a-z]+)")


def venue_code(name: str | None) -> str | None:
    """Map a prefix or venue name (``nips``, ``NeurIPS``, ``iclr``) to its code, else None."""
    if not name:
        return None
    key = name.strip().lower()
    return PREFIX_TO_VENUE.get(key) or _CODE_BY_LOWER.get(key)


def parse_file_name(stem: str) -> tuple[str, int | None]:
    """``nips2022`` -> ("nips", 2022); ``acl2018_P18`` -> ("acl", 2018); ``jmlr_v19`` -> ("jmlr", None).

    The year is only taken from a 4-digit number; JMLR volume files carry the year in each record.
    """
    stem = stem.lower()
    m = _FILE_YEAR.match(stem)
    if m:
        return m.group("prefix"), int(m.group("year"))
    m = _FILE_PREFIX.match(stem)
    return (m.group("prefix") if m else stem), None


def track_label(text: str | None) -> str:
    """A short, stable label for a track/volume/status text (for counts): lower-case, single spaces."""
    return re.sub(r"\s+", " ", (text or "").strip().lower())


def ancillary_keyword(text: str | None) -> str:
    """The ancillary-track word found in ``text`` (lower case), or ''."""
    m = _ANCILLARY.search(text or "")
    return m.group(0).lower() if m else ""


def is_main_track(*texts: str | None) -> bool:
    """True unless one of the texts (track, volume, status, booktitle) names an ancillary track."""
    return not any(t and _ANCILLARY.search(t) for t in texts)

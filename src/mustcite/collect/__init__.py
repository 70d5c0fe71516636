"""Collect main-track papers (title, authors, abstract, PDF link) from the official proceedings sites.

One collector per source family (:mod:`.pmlr`, :mod:`.acl`, :mod:`.cvf`, :mod:`.neurips`,
:mod:`.openreview`, :mod:`.aaai`, :mod:`.ijcai`, :mod:`.jmlr`) behind :class:`.base.Collector`;
:mod:`.http` fetches politely (rate limit, robots.txt, retries, disk cache, ``--offline``);
:mod:`.tracks` decides main track; :mod:`.venue_year` runs a venue-year resumably and writes records,
report and state under ``<work>/collect/``.
"""

from __future__ import annotations

from ..corpus.venues import venue_code
from ..errors import UsageError
from ..lazy_exports import lazy_exports
from .aaai import AaaiCollector
from .acl import AclCollector
from .base import CollectedRecord, Collector, Index, Item, ItemError, ParseError
from .cvf import CvfCollector, EcvaCollector
from .http import Fetcher
from .ijcai import IjcaiCollector
from .jmlr import JmlrCollector
from .neurips import NeuripsCollector
from .openreview import OpenReviewCollector
from .pmlr import PmlrCollector

_ALL = (NeuripsCollector, OpenReviewCollector, PmlrCollector, CvfCollector, EcvaCollector, AclCollector,
        AaaiCollector, IjcaiCollector, JmlrCollector)

#: venue code -> collector class
COLLECTORS: dict[str, type[Collector]] = {v: c for c in _ALL for v in c.venues}


def collector_for(venue: str) -> Collector:
    code = venue_code(venue)
    if code is None or code not in COLLECTORS:
        raise UsageError(f"unknown venue {venue!r}", hint=f"use one of {', '.join(COLLECTORS)}")
    return COLLECTORS[code]()


#: public name -> the submodule that defines it, imported on first use
_LAZY = {
    "collect_venue_year": "venue_year",
}

__all__ = ["COLLECTORS", "Collector", "CollectedRecord", "Fetcher", "Index", "Item", "ItemError", "ParseError",
           "collector_for", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

"""Collect main-track papers (title, authors, abstract, PDF link) from the official proceedings sites.

One collector per source family (:mod:`.pmlr`, :mod:`.acl`, :mod:`.cvf`, :mod:`.neurips`,
:mod:`.openreview`, :mod:`.aaai`, :mod:`.ijcai`, :mod:`.jmlr`) behind :class:`.base.Collector`;
:mod:`.http` fetches politely (rate limit, robots.txt, retries, disk cache, ``--offline``);
:mod:`.tracks` decides main track; :mod:`.run` runs a venue-year resumably and writes records,
report and state under ``<work>/collect/``.
"""

from __future__ import annotations

from .aaai import AaaiCollector
from .acl import AclCollector
from .base import CollectedRecord, Collector, Index, Item, ItemError, ParseError
from .cvf import CvfCollector, EcvaCollector
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
    from ..corpus.venues import venue_code
    from ..errors import UsageError

    code = venue_code(venue)
    if code is None or code not in COLLECTORS:
        raise UsageError(f"unknown venue {venue!r}", hint=f"use one of {', '.join(COLLECTORS)}")
    return COLLECTORS[code]()


__all__ = ["COLLECTORS", "Collector", "CollectedRecord", "Index", "Item", "ItemError", "ParseError",
           "collector_for"]

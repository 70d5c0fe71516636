"""The year a venue-year's proceedings volume is dated, where it is a later year than the conference.

A PMLR volume is often published in the year after its conference (UAI 2019 is PMLR v115, dated
2020; CoRL 2019-2022 and 2024, ACML 2022-2024, CoLLAs 2024, LoG 2023 the same), and its own BibTeX
gives the volume's year. An entry giving that year cites the volume as it is dated: not a wrong year.

Measured from the records, not listed: a PMLR paper's citation key, the last part of its URL
(``proceedings.mlr.press/v115/abu-el-haija20a.html``), ends with the two digits of the volume's
year. :func:`volume_years` reads them from every corpus and side record with a PMLR URL, per
(venue, year); a venue-year whose papers' keys give the next year (at least :data:`MIN_PAPERS`
papers, :data:`MIN_SHARE` of them) is dated so.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

# a PMLR paper URL (and the older jmlr.org/proceedings one): volume, and the year digits of the key
_PMLR = re.compile(r"(?:proceedings\.mlr\.press|jmlr\.org/proceedings/papers)/v(\d+)/[a-z0-9_-]*?(\d\d)[a-z]{1,2}"
                   r"(?:/[^/\s]*)?\.(?:html|pdf)", re.I)
#: a venue-year is dated by its volume's later year only with this many papers' keys ...
MIN_PAPERS = 10
#: ... this share of them giving it
MIN_SHARE = 0.9


def key_year(url: str) -> int | None:
    """The year of a PMLR paper's volume, from its URL's citation key (None for another URL)."""
    m = _PMLR.search(url or "")
    if not m:
        return None
    yy = int(m.group(2))
    return 2000 + yy if yy < 70 else 1900 + yy


def volume_years(rows: Iterable[tuple[str, int | None, Iterable[str]]]) -> dict[tuple[str, int], int]:
    """(venue, year) -> the later year its proceedings volume is dated, from ``(venue, year, urls)``
    rows (a record's URL and PDF link)."""
    seen: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for venue, year, urls in rows:
        if not venue or year is None:
            continue
        got = next((y for y in map(key_year, urls) if y is not None), None)
        if got is not None:
            seen[(venue, int(year))][got] += 1
    out = {}
    for (venue, year), counts in seen.items():
        later, n = counts.most_common(1)[0]
        total = sum(counts.values())
        if later == year + 1 and n >= MIN_PAPERS and n >= MIN_SHARE * total:
            out[(venue, year)] = later
    return out

"""How completely the data holds a venue-year and each of its tracks: measured, never assumed.

A paper missing from a venue-year proves nothing unless the data is known to hold every paper of
it. Each venue-year (and each track of the side records) is measured from the lists it was read
from (the ``source_ids`` of its records: the paper lists, ML Anthology, the ACL Anthology, ...):

* **the proceedings' own count** (:data:`OFFICIAL_COUNTS`, the counts of the recorded proceedings
  sites in ``shared/data/venue_pages``), where the data has one: the held papers against it;
* else **the proceedings' own list**: a source that is the proceedings themselves
  (:data:`PROCEEDINGS_SOURCES`: the ACL Anthology's XML holds every volume of its events);
* else **two lists**: the two largest lists of the venue-year, each at least
  :data:`SECOND_LIST_SHARE` of the held papers (a list of orals or a sample is no witness), give
  the capture-recapture estimate of the whole, ``n1 * n2 / both`` (Lincoln-Petersen): two lists that
  each miss papers at random overlap less, and the estimate grows above what they hold together;
* **one list** measures nothing: a venue-year read from a single list (ICML before 2013, AAAI,
  IJCAI, the older CVPR, ECCV and UAI years) is never called complete, however many papers it has.

A venue-year is complete when it is measured, holds at least :data:`MIN_COVERAGE` of the measured
count, and passes the neighbour test of :func:`~.index.complete_venue_years` (no partial year
beside full ones). :class:`Coverage` keeps the figures, so that an answer can say why.

**Tracks.** A venue-year is more than its main track. An entry that names only the venue may be a
paper of another track printed or cited under the same name; it is ``not_found`` only when every
track it could belong to is held completely (:func:`possible_tracks`):

* the tracks the venue prints under its main name (:data:`TRACKS_UNDER_MAIN_NAME`: NeurIPS Datasets
  and Benchmarks from 2022, in the same proceedings; ACL, EMNLP and NAACL Findings from 2020, cited
  as the conference as often as not), measured like the main track from the side records;
* a workshop, when the entry shows it: a page count of at most :data:`SHORT_PAGES` (``pages={5}``,
  ``pages={1--4}``): the main tracks of these venues run 8 pages and more (in ML Anthology's
  page ranges of NeurIPS 2019, ICML 2019 and CVPR 2021 main papers, 2 of 3,854 have 5 or fewer); no
  workshop list is ever measured complete (there is no official list of a venue's workshops);
* a co-located event printed in the venue's proceedings, when the venue text names one
  (:data:`CO_LOCATED`: IAAI and EAAI in the AAAI proceedings, AAAI's special tracks and student
  abstracts, IJCAI's survey, journal and sister-conference tracks): none is held.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

#: the proceedings' own paper counts where the data records them (``shared/data/venue_pages``:
#: the CVF index pages of CVPR 2019 and 2020, PMLR volumes 247 (COLT 2024) and 286 (UAI 2025))
OFFICIAL_COUNTS: dict[tuple[str, int], int] = {("CVPR", 2019): 1294, ("CVPR", 2020): 1467, ("COLT", 2024): 170,
                                               ("UAI", 2025): 229}
#: sources whose list is the proceedings' own (a name containing one of these)
PROCEEDINGS_SOURCES = ("acl-anthology",)
#: a measured venue-year is complete when it holds this share of the measured count
MIN_COVERAGE = 0.97
#: the second list of a two-list measure holds at least this share of the held papers
SECOND_LIST_SHARE = 0.5
#: source prefixes that are not lists of a venue-year (a paper's own reference to itself)
NOT_LISTS = frozenset({"paper"})
#: a page count at most this is no main-track paper of the venues held (workshop evidence)
SHORT_PAGES = 5
#: (venue, track kind, first year): tracks cited under the venue's main name
TRACKS_UNDER_MAIN_NAME: dict[str, tuple[tuple[str, int], ...]] = {
    "NeurIPS": (("datasets-benchmarks", 2022),),
    "ACL": (("findings", 2020),), "EMNLP": (("findings", 2020),), "NAACL": (("findings", 2020),),
}
#: (venue, pattern on the venue text): co-located events printed in a venue's proceedings
CO_LOCATED: dict[str, re.Pattern] = {
    "AAAI": re.compile(r"innovative applications|\biaai\b|educational advances|\beaai\b|special track|"
                       r"senior member|student abstract|new faculty", re.I),
    "IJCAI": re.compile(r"survey track|journal track|sister conference|early career|doctoral", re.I),
}


@dataclass
class Coverage:
    """The measure of one venue-year (or one track of it)."""

    held: int
    lists: dict[str, int] = field(default_factory=dict)   # source -> papers of it in that list
    both: int = 0                 # papers in both of the two largest lists
    official: int | None = None   # the proceedings' own count
    basis: str = "one list"       # "official count" | "proceedings' own list" | "two lists" | "one list" | "no list"
    measured: int | None = None   # the measured count (None: not measured)
    neighbours_ok: bool = True    # the neighbour test of complete_venue_years
    complete: bool = False

    @property
    def share(self) -> float | None:
        return round(self.held / self.measured, 4) if self.measured else None

    def why_not(self) -> str:
        """Why the venue-year is not complete ("" when it is)."""
        if self.complete:
            return ""
        if self.measured is None:
            return ("read from one list only, which no second source confirms" if self.basis == "one list"
                    else "no list of it is held")
        if not self.neighbours_ok:
            return "far fewer papers than the years beside it: a partial list"
        return f"{self.held} of about {self.measured} papers held"

    def to_json(self) -> dict:
        return {"held": self.held, "lists": dict(self.lists), "both": self.both, "official": self.official,
                "basis": self.basis, "measured": self.measured, "share": self.share, "complete": self.complete}


def list_name(source_id: str) -> str:
    """The list a ``source:id`` comes from."""
    return source_id.split(":", 1)[0]


def measure(held: int, lists: Counter, both: int, official: int | None, neighbours_ok: bool) -> Coverage:
    """The :class:`Coverage` of a venue-year from its held count, the papers of each list, the papers in
    both of the two largest lists, the official count and the neighbour test (module doc)."""
    lists = Counter({k: v for k, v in lists.items() if k not in NOT_LISTS})
    c = Coverage(held, dict(lists), both, official, neighbours_ok=neighbours_ok)
    top = lists.most_common(2)
    own = [n for s, n in lists.items() if any(p in s for p in PROCEEDINGS_SOURCES) and n >= SECOND_LIST_SHARE * held]
    if official:
        c.basis, c.measured = "official count", official
    elif own:
        c.basis, c.measured = "proceedings' own list", max(own)
    elif len(top) == 2 and top[1][1] >= SECOND_LIST_SHARE * held and both:
        c.basis, c.measured = "two lists", max(held, round(top[0][1] * top[1][1] / both))
    elif not top:
        c.basis = "no list"
    c.complete = c.measured is not None and neighbours_ok and held >= MIN_COVERAGE * c.measured
    return c


def page_count(pages: str) -> int | None:
    """The number of pages a BibTeX ``pages`` value gives: a range's length, or a single number read
    as a count (``5``); None for none or another form (an article number ``e1234``)."""
    text = (pages or "").strip()
    r = re.fullmatch(r"(\d+)\s*(?:-+|–|—|\\textendash\s*(?:\{\})?)\s*(\d+)", text)
    if r:
        a, b = int(r.group(1)), int(r.group(2))
        return b - a + 1 if b >= a else None
    return int(text) if text.isdigit() else None


def possible_tracks(venue: str, year: int, venue_text: str, pages: str) -> list[tuple[str, str]]:
    """The tracks besides the main one that an entry naming ``venue`` ``year`` could belong to, each
    with the evidence: (track kind, why) (module doc)."""
    out = [(kind, "cited under the main name as often as not") for kind, first in TRACKS_UNDER_MAIN_NAME.get(venue, ())
           if year >= first]
    n = page_count(pages)
    if n is not None and n <= SHORT_PAGES:
        out.append(("workshop", f"{n} page{'s' if n != 1 else ''}: a short paper"))
    pat = CO_LOCATED.get(venue)
    if pat is not None and (m := pat.search(venue_text or "")):
        out.append(("co-located", f"the venue names {m.group(0)!r}"))
    return out

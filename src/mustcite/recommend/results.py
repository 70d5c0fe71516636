"""What a recommendation looks like: :class:`Recommendation` (its ``to_dict()`` is the public JSON
shape of one result, in the CLI's ``--format json``, the REST API and audits), a query's
:class:`Ranked` list, the tier label of a result and the evidence that explains it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..extract.works import is_work_id
from .features import Candidate
from .neighbours import NeighbourIndex
from .reasons import reasons, tier_name, too_recent

#: A result is labelled with its likeliest must-cite type (I/II/III) when that probability reaches
#: this; otherwise "must-cite" (if P(must-cite) does) or plain "cited".
TIER_MIN = 0.1
_TYPE_LABELS = {"type1": "I", "type2": "II", "type3": "III"}


@dataclass
class Recommendation:
    paper_id: str
    title: str
    year: int | None
    venue: str | None
    score: float
    tier: str
    tiers: dict[str, float]
    url: str | None = None
    pdf: str | None = None
    authors: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    #: what it is: ``paper``, ``dataset``, ``software``, ``book`` or ``web page``
    kind: str = "paper"
    #: ``corpus`` (a paper of the proceedings corpus) or ``references`` (a work known from the
    #: reference lists of labelled papers: the catalogue of cited works)
    source: str = "corpus"
    #: ``tier`` in words: "baseline or dataset" (I), "core" (II), "used throughout" (III), "must-cite", "cited"
    tier_name: str = ""
    #: why it was recommended, as sentences, the strongest evidence first (:func:`.reasons.reasons`)
    reasons: list[str] = field(default_factory=list)
    #: in an audit: what kind of finding it is (``named_not_cited``, ``bib_not_cited``,
    #: ``placeholder``, ``undefined_key``, ``likely_missing``), its calibrated confidence (the
    #: probability that a careful reviewer calls it a genuine omission), what it says and where
    finding: str | None = None
    confidence: float | None = None
    message: str | None = None
    location: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.tier_name:
            self.tier_name = tier_name(self.tier)

    def to_dict(self) -> dict[str, Any]:
        """The public JSON shape of one result (keys in field order)."""
        return asdict(self)


class Ranked(list):
    """One query's ranked :class:`Recommendation` list; ``year``: the year it was computed for
    (only papers of that year or earlier were used); ``notice``: why the list is empty, if it is.

    A result is made before the query's year is known to it: here the reasons of those too recent
    for any paper in the data to cite (:func:`.reasons.too_recent`) are said again with that year."""

    def __init__(self, items=(), year: int | None = None, notice: str | None = None):
        super().__init__(items)
        self.year = year
        self.notice = notice
        for r in self:
            if isinstance(r, Recommendation) and too_recent(r.evidence, r.year, year):
                r.reasons = reasons(r.evidence, r, year)


def tier_label(probs: dict[str, float]) -> str:
    """``I``/``II``/``III`` for the likeliest must-cite type when its probability reaches
    :data:`TIER_MIN`, else ``must-cite`` when P(must-cite) does, else ``cited``."""
    typed = {t: probs[t] for t in _TYPE_LABELS if t in probs}
    best = max(typed, key=lambda t: (typed[t], t)) if typed else None
    if best and typed[best] >= TIER_MIN:
        return _TYPE_LABELS[best]
    if probs.get("must_cite", 0.0) >= TIER_MIN:
        return "must-cite"
    return "cited"


def evidence_for(c: Candidate, matched_terms: list[str], nindex: NeighbourIndex,
                 cite_count: dict[str, int]) -> dict[str, Any]:
    """Why ``c`` was recommended: its sources, the labelled neighbours citing it, how many labelled
    papers (of the query's year or earlier: ``cite_count``) cite, co-cite or describe it, the
    query words it shares (``matched_terms``) and the name the query calls it by (``named``)."""
    by = sorted(c.vote.by, key=lambda t: (-t[1], t[0]))[:5]
    return {
        "sources": sorted(set(c.sources)),
        "neighbours": [{"id": nid, "title": nindex.by_id[nid].title, "similarity": round(sim, 4),
                        "must_cite": must} for nid, sim, must in by],
        "neighbours_citing": c.vote.count, "neighbours_must_citing": c.vote.must_count,
        "neighbours_baseline_citing": c.vote.baseline_count,
        # labelled papers (of the query's year or earlier) citing it
        "labelled_citing": cite_count.get(c.paper_id, 0),
        # labelled papers citing it together with the query's likeliest citations (seeds)
        "co_cited_by": int(c.cocite[2]),
        # labelled papers whose citation contexts of it match the query's words
        "described_by": c.context.citers,
        "matched_terms": matched_terms[:12],
        # the query names it: what labelled papers call it ("HDTF"), or its title's name
        "named": None if c.named is None else {"name": c.named.name, "support": c.named.support,
                                                "from_title": c.named.from_title},
    }


def recommendation(paper: dict[str, Any], score: float, probs: dict[str, float],
                   ev: dict[str, Any]) -> Recommendation:
    """The result for pool paper ``paper`` with its ranking ``score``, tier probabilities and evidence.
    A cited work's ``year`` is the year it was published (the pool's ``year`` is when queries may
    first see it)."""
    year = paper.get("published") if paper.get("published") is not None else paper.get("year")
    r = Recommendation(paper["paper_id"], paper.get("title") or "", year, paper.get("venue"),
                       round(score, 6), tier_label(probs), {t: round(v, 6) for t, v in probs.items()},
                       paper.get("url") or None, paper.get("pdf") or None, list(paper.get("authors") or []), ev,
                       paper.get("kind") or "paper", "references" if is_work_id(paper["paper_id"]) else "corpus")
    r.reasons = reasons(ev, r)
    return r

"""Auditing a draft: which predicted must-cite papers does its bibliography lack?

The draft (Markdown/Nougat ``.md``/``.mmd`` (optionally ``.gz``), GROBID ``.tei.xml`` or ``.pdf``)
goes through the extraction runner; its references are linked to the recommender's pool with the
corpus title linker; the recommender ranks papers for the draft's title + abstract, and every
recommended paper the draft does not cite is reported with its evidence.

Time order: the draft is audited as of ``year`` (given by the user, else today's calendar year):
only papers of that year or earlier are recommended; ``AuditResult.year`` says which year it was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .method import Recommender
from .query import parse_year
from .results import Recommendation


@dataclass
class AuditResult:
    draft: str
    title: str
    abstract: str
    references: int
    linked: int
    missing: list[Recommendation] = field(default_factory=list)
    cited: list[Recommendation] = field(default_factory=list)     # recommended and already cited
    extraction: dict[str, Any] = field(default_factory=dict)
    year: int | None = None       # the year audited for (papers of that year or earlier)
    notice: str | None = None     # why nothing was recommended, when nothing was

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["missing"] = [r.to_dict() for r in self.missing]
        d["cited"] = [r.to_dict() for r in self.cited]
        return d


def _title_index(rec: Recommender):
    idx = getattr(rec, "_title_index", None)
    if idx is None:
        from ..extract.link import TitleIndex

        idx = TitleIndex.build([p["paper_id"] for p in rec.pool], [p.get("title") or "" for p in rec.pool],
                               [p.get("year") for p in rec.pool])
        rec._title_index = idx
    return idx


def audit_draft(rec: Recommender, path: str | Path, *, top: int = 50, min_score: float = 0.0,
                year: int | None = None) -> AuditResult:
    """Extract, link and compare one draft as of ``year`` (default: today's); ``missing`` holds
    recommendations it does not cite."""
    from ..extract.link import link_references
    from .draft import read_draft

    year = parse_year(year)
    if min_score != min_score:   # NaN compares false with everything: it would silently list nothing
        raise UsageError("min_score must be a number, not NaN")
    draft = read_draft(path)
    paper, (title, abstract) = draft.paper, draft.query_text
    as_of = rec.effective_year(year)   # a reference cannot be to a later paper either
    refs = link_references(paper.to_reference_list(), _title_index(rec), citing_year=as_of)
    cited = {r["paper_id"] for r in refs if r.get("paper_id")}
    recs = rec.recommend_many([{"id": "draft", "title": title, "abstract": abstract,
                                "year": year}], top=top + len(cited))["draft"]
    missing = [r for r in recs if r.paper_id not in cited and r.score >= min_score][:top]
    have = [r for r in recs if r.paper_id in cited]
    return AuditResult(draft.path.name, draft.title, draft.abstract, len(refs), len(cited), missing, have,
                       {"status": paper.status, "method": paper.method, "messages": list(paper.messages)},
                       getattr(recs, "year", as_of), getattr(recs, "notice", None))

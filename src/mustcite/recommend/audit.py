"""Auditing a draft: which predicted must-cite papers does its bibliography lack?

The draft (Markdown/Nougat ``.md``/``.mmd`` (optionally ``.gz``), GROBID ``.tei.xml`` or ``.pdf``)
goes through the extraction runner; its references are linked to the recommender's pool with the
corpus title linker; the recommender ranks papers for the draft's title + abstract, and every
recommended paper the draft does not cite is reported with its evidence.

Time order: the draft is audited as of ``year`` (given by the user, else today's calendar year):
only papers of that year or earlier are recommended; ``AuditResult.year`` says which year it was.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MustciteError, UsageError
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


def check_draft_file(path: Path) -> str:
    """The draft's kind (markdown/tei/pdf); raise a clear error for anything else."""
    from ..extract.run import kind_of

    if not path.is_file():
        raise MustciteError("draft file not found", path=path)
    kind = kind_of(path)
    if kind is None:
        raise UsageError("unsupported draft type", path=path,
                         hint="give a .pdf, .tei.xml, or Markdown (.md/.mmd, optionally .gz) file")
    head = path.read_bytes()[:8]
    if kind == "pdf" and not head.startswith(b"%PDF-"):
        raise MustciteError("file is not a PDF (no %PDF- header)", path=path)
    if kind != "pdf" and not path.name.lower().endswith(".gz"):
        try:
            path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MustciteError(f"draft is not UTF-8 text (byte {exc.start})", path=path) from None
    return kind


def audit_draft(rec: Recommender, path: str | Path, *, top: int = 50, min_score: float = 0.0,
                year: int | None = None) -> AuditResult:
    """Extract, link and compare one draft as of ``year`` (default: today's); ``missing`` holds
    recommendations it does not cite."""
    from ..extract.link import link_references
    from ..extract.run import ExtractOptions, extract_one

    year = parse_year(year)
    path = Path(path)
    check_draft_file(path)
    with tempfile.TemporaryDirectory(prefix="mustcite-audit-") as tmp:
        paper, row = extract_one(path, ExtractOptions(out_dir=tmp))
    if paper.status == "failed":
        raise MustciteError("could not extract the draft: " + "; ".join(paper.messages or ["unknown reason"]),
                            path=path)
    title, abstract = (paper.title or "").strip(), (paper.abstract or "").strip()
    if not (title or abstract):
        raise MustciteError("found neither a title nor an abstract in the draft", path=path,
                            hint="put the title on the first line and an 'Abstract' section after it")
    as_of = rec.effective_year(year)   # a reference cannot be to a later paper either
    refs = link_references(paper.to_reference_list(), _title_index(rec), citing_year=as_of)
    cited = {r["paper_id"] for r in refs if r.get("paper_id")}
    recs = rec.recommend_many([{"id": "draft", "title": title or abstract[:200], "abstract": abstract,
                                "year": year}], top=top + len(cited))["draft"]
    missing = [r for r in recs if r.paper_id not in cited and r.score >= min_score][:top]
    have = [r for r in recs if r.paper_id in cited]
    return AuditResult(str(path.name), title, abstract, len(refs), len(cited), missing, have,
                       {"status": paper.status, "method": paper.method, "messages": list(paper.messages)},
                       getattr(recs, "year", as_of))

"""Auditing a draft: which predicted must-cite papers does its bibliography lack?

The draft (Markdown/Nougat ``.md``/``.mmd`` (optionally ``.gz``), GROBID ``.tei.xml``, ``.pdf``, or
a LaTeX project, see :mod:`.draft`) goes through extraction; its references are linked to the
recommender's pool with the corpus linker. The recommender scores papers for the draft's title +
abstract, and the draft's linked references add their own evidence (:mod:`.bibliography`): the
papers the labelled papers cite together with them, and what the labelled papers with the most
similar bibliographies cite. Every scored paper the draft does not cite is reported with its
evidence, best first.

Score (:func:`blend`): ``logit(P(must-cite)) + cocite * log1p(cocited_by) + share *
references_cocited / references + coupling * coupling_votes + named * [the draft's text names it]``, shown as a probability (the
logistic of that sum: exactly P(must-cite) for a draft without linked references). The weights
(:data:`DEFAULT_WEIGHTS`) were chosen on the benchmark's dev queries by removing a seeded 30% of
each paper's must-cite references and asking the audit to find them again
(``benchmarks/audit_simulation.py``).

Time order: the draft is audited as of ``year`` (given by the user, else today's calendar year):
only papers of that year or earlier are recommended, and only labelled papers of that year or
earlier give evidence; ``AuditResult.year`` says which year it was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import UsageError
from ..io import load_pickle
from ..numeric import logit
from .bibliography import BibliographySignals, bibliography_index
from .features import Candidate
from .query import parse_year
from .ranking import empty_notice, top_indices
from .results import Ranked, Recommendation, evidence_for, recommendation
from .text import terms

if TYPE_CHECKING:
    from .draft import Draft
    from .method import Recommender


@dataclass(frozen=True)
class AuditWeights:
    """How much the draft's references and words move a paper's score (see the module doc)."""

    cocite: float = 0.0
    share: float = 0.0
    coupling: float = 8.0
    named: float = 4.0           # the draft's text names the paper ("HDTF", or its title's "Name: ...")
    coupled_k: int = 10          # bibliographies that vote
    extra_k: int = 150           # papers added as candidates by co-citation, coupling and names, each

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: chosen on the neurips-2024 dev queries by recall@20 of the removed must-cite papers (180 settings,
#: ``benchmarks/audit_simulation.py --grid``; results/audit_simulation_dev.json): the co-citation
#: terms added nothing once coupling and names were in
DEFAULT_WEIGHTS = AuditWeights()


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
    #: the labelled papers whose bibliographies are closest to the draft's
    closest_bibliographies: list[dict[str, Any]] = field(default_factory=list)
    #: the draft's references as the audit read them (key, title, linked pool paper, mentions)
    reference_list: list[dict[str, Any]] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """What the reader of the audit must know about how the draft was read: the extraction's
        status when it was not clean, then each of its messages (includes not read, bibliographies
        missing, keys defined nowhere, references without a year)."""
        status = self.extraction.get("status")
        head = [f"extraction {status}: the audit may miss or misjudge references"] if status not in (None, "ok") else []
        return head + [str(m) for m in self.extraction.get("messages") or ()]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = self.notes
        d["missing"] = [r.to_dict() for r in self.missing]
        d["cited"] = [r.to_dict() for r in self.cited]
        return d


@dataclass
class DraftScores:
    """One draft's candidates with the recommender's score and feature rows (what does not depend
    on the weights, so that weights can be tried without scoring again)."""

    doc: Any                      # the parsed query (Doc)
    year: int
    candidates: list[Candidate]
    features: np.ndarray
    base: np.ndarray              # logit of P(main tier), after the optional cross-encoder
    references: list[str]         # the draft's linked pool references


def score_draft(rec: Recommender, query: dict[str, Any], references: list[str], *, text: str = "",
                weights: AuditWeights = DEFAULT_WEIGHTS) -> tuple[DraftScores, BibliographySignals]:
    """Score the candidates of a draft ``query`` (``{"id","title","abstract","year"}``) citing
    the pool papers ``references`` (``text``: the draft's words around its citations, searched for
    the names of pool papers); the papers its bibliography and its text point to join the candidates."""
    year = rec.effective_year(parse_year(query.get("year")))
    bib = bibliography_index(rec)
    refs = list(dict.fromkeys(references))
    hits = rec.names.named(text, year, rec.pool_years) if text and rec.names is not None else {}
    named = {pid: hit.name for pid, hit in hits.items()}
    signals = bib.signals(refs, year, query.get("title") or "", coupled_k=weights.coupled_k, named=named)
    extra = signals.best(weights.extra_k, set(refs))
    main = rec.tiers.main
    parsed, cands, feats, probs = rec.score([query], tiers=(main,), extra=[extra])
    (doc, year), cs, X = parsed[0], cands[0], feats[0]
    p = probs.get(main, np.zeros(len(cs)))
    learned = main in probs and "tiers" not in rec.config.disable
    if not learned:     # untrained: the fused rank and votes, as the recommender ranks them
        base = np.asarray(rec._ranking_score(X, probs, None)[0], dtype=np.float64)
    elif rec.cross is not None and rec.config.cross_top > 0:
        base = rec._rescored(doc, cs, p, True, {})      # already on the logit scale
    else:
        base = logit(p)
    return DraftScores(doc, year, cs, X, base, refs), signals


def blend(ds: DraftScores, signals: BibliographySignals, weights: AuditWeights = DEFAULT_WEIGHTS) -> np.ndarray:
    """The audit score of every candidate (logit scale; see the module doc)."""
    if not (signals.references or signals.named) or not ds.candidates:
        return ds.base.copy()
    named = np.array([c.paper_id in signals.named for c in ds.candidates], dtype=np.float64)
    col = [signals.col.get(c.paper_id, -1) for c in ds.candidates]
    idx = np.array(col)
    has = idx >= 0
    take = np.where(has, idx, 0)

    def arr(a: np.ndarray) -> np.ndarray:
        return np.where(has, a[take], 0.0)

    return (ds.base + weights.cocite * np.log1p(arr(signals.cocited_by))
            + weights.share * arr(signals.references_cocited) / max(1, len(signals.references))
            + weights.coupling * arr(signals.coupling) + weights.named * named)


def missing_order(ds: DraftScores, score: np.ndarray, cited: set[str], top: int) -> list[int]:
    """Indices of the ``top`` best candidates the draft does not cite."""
    keep = [j for j in top_indices(score, ds.candidates, top + len(cited)) if ds.candidates[j].paper_id not in cited]
    return keep[:top]


def bibliography_evidence(signals: BibliographySignals, paper_id: str) -> dict[str, Any]:
    """The evidence fields the draft's references add to a result."""
    return {"references_cocited": int(signals.value("references_cocited", paper_id)),
            "cocited_with_references_by": int(signals.value("cocited_by", paper_id)),
            "closest_bibliographies_type1": int(signals.value("coupled_type1", paper_id)),
            "coupling_votes": round(signals.value("coupling", paper_id), 4),
            "named_in_text": signals.named.get(paper_id)}


def audit_ranking(rec: Recommender, query: dict[str, Any], references: list[str], *, text: str = "",
                  top: int = 50, min_score: float = 0.0, weights: AuditWeights = DEFAULT_WEIGHTS,
                  ) -> tuple[Ranked, Ranked, BibliographySignals]:
    """(missing, recommended and already cited, signals) for a draft ``query`` citing the pool
    papers ``references`` with ``text`` around its citations; each result's ``score`` is the
    audit score as a probability."""
    if min_score != min_score:   # NaN compares false with everything: it would silently list nothing
        raise UsageError("min_score must be a number, not NaN")
    ds, signals = score_draft(rec, query, references, text=text, weights=weights)
    if not ds.candidates:
        empty = Ranked([], ds.year, empty_notice(ds.doc.text, ds.year))
        return empty, Ranked([], ds.year), signals
    score = blend(ds, signals, weights)
    prob = 1.0 / (1.0 + np.exp(-np.clip(score, -50, 50)))
    cited = set(ds.references)
    chosen = [j for j in missing_order(ds, score, cited, top) if prob[j] >= min_score]
    have = [j for j in top_indices(score, ds.candidates, top + len(cited)) if ds.candidates[j].paper_id in cited]
    rows = chosen + have
    shown = rec.tiers.predict(ds.features[rows]) if rows else {}
    qterms = terms(ds.doc.text)
    cite_count = rec.nindex.counts(ds.year)[0]
    out: list[Recommendation] = []
    for k, j in enumerate(rows):
        c = ds.candidates[j]
        ev = evidence_for(c, rec.pool_terms.shared(qterms, c.row), rec.nindex, cite_count)
        ev.update(bibliography_evidence(signals, c.paper_id))
        out.append(recommendation(rec.pool[c.row], float(prob[j]), {t: float(p[k]) for t, p in shown.items()}, ev))
    return Ranked(out[:len(chosen)], ds.year), Ranked(out[len(chosen):], ds.year), signals


def build_title_index(pool):
    """The pool's titles and the identifiers in its urls (DOI, arXiv, ...), for linking a draft's
    references (:class:`~mustcite.extract.link.TitleIndex`)."""
    from ..extract.link import TitleIndex

    return TitleIndex.build(pool.ids, [t or "" for t in pool.titles], pool.column("year")).add_identifiers(
        *(pool.column(k) for k in ("url", "pdf", "doi", "arxiv")))


def title_index(rec: Recommender):
    """The index the draft's references are linked with (:func:`build_title_index`): read from the
    model's prebuilt indexes when it has them, else built on the first audit; kept on ``rec`` (a
    server gets it as it loads, so no request pays it)."""
    idx = getattr(rec, "_title_index", None)
    if idx is None:
        saved = rec.index_dir / TITLE_INDEX_FILE if rec.index_dir is not None else None
        if saved is not None and saved.is_file():
            idx = load_pickle(saved)
        else:
            idx = build_title_index(rec.pool)
        rec._title_index = idx
    return idx


#: the file of :func:`build_title_index` among a model's prebuilt indexes
TITLE_INDEX_FILE = "titles.pickle"


def context_text(refs: list[dict[str, Any]], drop: set[str] = frozenset()) -> str:
    """The draft's words around its citations: every context of every reference, each once (the
    contexts of the references whose ``cite`` is in ``drop`` left out, and those markers removed)."""
    seen: dict[str, None] = {}
    for r in refs:
        if r.get("cite") in drop:
            continue
        for c in r.get("contexts") or ():
            seen.setdefault(c.get("context") or "")
    text = " ".join(seen)
    for marker in drop:
        if marker and not marker.isdigit():        # author-year markers; numbers carry no name
            text = text.replace(marker, " ")
    return text


def _reference_rows(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("cite", "bibkey", "title", "year", "paper_id", "mentions")
    return [{k: r.get(k) for k in keys if r.get(k) is not None} for r in refs]


def audit_draft(rec: Recommender, path: str | Path | Draft, *, top: int = 50, min_score: float = 0.0,
                year: int | None = None, weights: AuditWeights = DEFAULT_WEIGHTS) -> AuditResult:
    """Extract, link and compare one draft as of ``year`` (default: today's); ``missing`` holds
    the papers it should cite and does not, best first. ``path`` may be a draft already read with
    :func:`.draft.read_draft` (a front end reads every input before it loads a model)."""
    from ..extract.link import link_references
    from .draft import Draft, read_draft

    year = parse_year(year)
    if min_score != min_score:
        raise UsageError("min_score must be a number, not NaN")
    draft = path if isinstance(path, Draft) else read_draft(path)
    paper, (title, abstract) = draft.paper, draft.query_text
    as_of = rec.effective_year(year)   # a reference cannot be to a later paper either
    refs = link_references(paper.to_reference_list(), title_index(rec), citing_year=as_of)
    linked = [r["paper_id"] for r in refs if r.get("paper_id")]
    missing, have, signals = audit_ranking(rec, {"id": "draft", "title": title, "abstract": abstract, "year": year},
                                           linked, text=context_text(refs), top=top, min_score=min_score,
                                           weights=weights)
    return AuditResult(draft.path.name, draft.title, draft.abstract, len(refs), len(set(linked)), missing, have,
                       {"status": paper.status, "method": paper.method, "messages": list(paper.messages)},
                       getattr(missing, "year", as_of), getattr(missing, "notice", None),
                       [asdict(c) for c in signals.coupled], _reference_rows(refs))

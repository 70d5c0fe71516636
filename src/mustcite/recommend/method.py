"""The must-cite recommender: fused first-stage retrieval + labelled-neighbour votes + learned tiers.

For a query (title + abstract, :mod:`.query`):

1. candidates (:mod:`.candidates`): BM25 and (optionally) dense MiniLM retrieval over the pool,
   fused by reciprocal rank, plus the pool papers its nearest labelled papers cite (votes), cite
   together with the likeliest candidates (co-citation) or describe in words like the query's
   (citation contexts);
2. every candidate gets the features of :mod:`.features` and the per-tier models of :mod:`.tiers`
   give P(Type I), P(Type II), P(Type III), P(must-cite), P(cited); results are ranked by the main
   tier's probability (RRF + votes before any model is trained) and explained (:mod:`.results`).

While training (:mod:`.matrix`), a labelled query never sees itself: it is left out of its own
neighbours and its citations are subtracted from the citation counts (leave-one-out). Models are
kept with :mod:`.model_store`.

Time order: a query of year ``Y`` (its ``"year"``, else today's calendar year, :func:`today_year`)
is only compared with, recommended, or helped by papers of year ``Y`` or earlier. First-stage
BM25 and dense hits come from the pool papers of year <= ``Y`` (masked at the score level, so a
query still gets its full ``first_k`` eligible hits), labelled neighbours, votes, citer similarity,
co-citation and citation counts from the labelled papers of year <= ``Y`` (see :mod:`.neighbours`),
and no candidate of a later year is ever added. Same-year papers are allowed. A pool or labelled
paper of unknown year is left out (every query has a year). Training applies the same rule: a
labelled paper used as a training query gets its own year (leave-one-out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataMissingError, MustciteError, UsageError
from ..labels.papers import TIER_NAMES, TIERS, LabelledPaper
from ..retrieval.base import Doc, doc_text
from ..retrieval.cross_encoder import CrossEncoderReranker
from . import arguments as args
from . import model_store
from .candidates import CandidateGenerator
from .config import ABLATABLE, RecommenderConfig
from .draft_indexes import DraftIndexes
from .features import FEATURES, Candidate, as_matrix, feature_matrix
from .matrix import training_matrix
from .model_store import FORMAT_VERSION, ModelParts
from .pool_table import PoolTable
from .query import MAX_TEXT, MIN_YEAR, effective_year, parse_query, parse_year, today_year
from .ranking import empty_notice, has_searchable_words, top_indices
from .rescore import combine
from .results import TIER_MIN, Ranked, Recommendation, evidence_for, recommendation
from .text import PoolTerms, terms
from .tiers import TierModels

__all__ = ["ABLATABLE", "FORMAT_VERSION", "MAX_TEXT", "MIN_YEAR", "TIER_MIN", "Ranked", "Recommendation",
           "Recommender", "RecommenderConfig", "parse_year", "today_year"]


def _part(name: str, doc: str) -> property:
    """A read-only view of the candidate generator's ``name``."""
    return property(lambda self: getattr(self.candidates, name), doc=doc)


def _checked_queries(queries: Any) -> list[Any]:
    """``queries`` as a list, each one read once (:func:`.query.parse_query`: a bad one raises
    naming its field) before any model part is used."""
    queries = args.sequence(queries, "queries")
    for i, q in enumerate(queries):
        parse_query(q, i)
    return queries


class Recommender:
    """Build with :meth:`build`, train with :meth:`fit`, keep with :meth:`save` / :meth:`load`.

    The model is a set of named parts (:class:`~.model_store.ModelParts`): ``candidates``
    (:class:`~.candidates.CandidateGenerator`: the pool table and its indexes, the dense encoder),
    ``labelled`` (the labelled papers), ``tiers`` (the per-tier models), ``cross`` (the optional
    cross-encoder) and ``draft_indexes`` (:class:`~.draft_indexes.DraftIndexes`: what a draft's
    references are linked and compared with)."""

    def __init__(self, parts: ModelParts):
        self.candidates = parts.candidates
        self.labelled = parts.labelled
        self.tiers = parts.tiers
        #: the optional cross-encoder re-scoring the top ``config.cross_top`` candidates
        self.cross: CrossEncoderReranker | None = parts.cross
        self.info: dict[str, Any] = parts.info
        #: the folder of indexes prebuilt for this model (:mod:`.model_store`), when it was loaded with them
        self.index_dir: Path | None = parts.index_dir
        self.draft_indexes = DraftIndexes(self.pool, self.nindex, parts.index_dir)
        self._pool_terms: PoolTerms | None = None
        #: the folder it was loaded from (the audit's name models are looked for beside it)
        self.folder: Path | None = None

    config = _part("config", "the :class:`RecommenderConfig`")
    pool = _part("pool", "the pool papers (dicts)")
    row = _part("row", "paper_id -> row in ``pool``")
    pool_years = _part("pool_years", "the pool papers' years (int32, unknown: never eligible)")
    bm25 = _part("bm25", "the BM25 index of the pool")
    encoder = _part("encoder", "the dense encoder, or None")
    pool_vecs = _part("pool_vecs", "the pool papers' dense vectors, or None")
    nindex = _part("nindex", "the labelled papers' :class:`~.neighbours.NeighbourIndex`")
    cindex = _part("cindex", "the labelled papers' :class:`~.contexts.ContextIndex`")
    names = _part("names", "the pool's :class:`~.name_index.NameIndex`")
    cache_queries = _part("cache_queries", "whether query embeddings go to the embedding cache")

    def parts(self) -> ModelParts:
        """The model's parts, as :mod:`.model_store` saves them."""
        return ModelParts(self.candidates, self.labelled, self.tiers, self.cross, self.info, self.index_dir)

    @property
    def pool_terms(self) -> PoolTerms:
        """Title stems and document frequencies of the pool (computed on first use)."""
        if self._pool_terms is None:
            self._pool_terms = PoolTerms(self.pool, self.bm25)
        return self._pool_terms

    def use_cross_encoder(self, cross: CrossEncoderReranker | None) -> None:
        """Re-score the top ``config.cross_top`` candidates with ``cross`` from now on (None: stop)."""
        self.cross = cross

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, pool: list[dict[str, Any]], labelled: list[LabelledPaper],
              config: RecommenderConfig | None = None, *, cache_dir: str | Path | None = None) -> Recommender:
        """Index the pool and the labelled papers (no trained models yet)."""
        pool, labelled = args.sequence(pool, "pool"), args.sequence(labelled, "labelled")
        if not all(isinstance(p, dict) for p in pool):
            raise UsageError("pool must be a list of dicts (paper_id, title, ...)", field="pool")
        if not all(isinstance(p, LabelledPaper) for p in labelled):
            raise UsageError("labelled must be a list of LabelledPaper", field="labelled")
        args.instance(config, "config", RecommenderConfig, optional=True)
        args.path(cache_dir, "cache_dir", optional=True)
        if not pool:
            raise DataMissingError("the candidate pool is empty")
        config = config or RecommenderConfig()
        table = PoolTable.from_records(pool)
        ids = set(table.ids)
        for p in labelled:   # only citations of pool papers count
            p.keep_pool(ids)
        labelled = [p for p in labelled if p.cites]
        if not labelled:
            raise DataMissingError("no labelled paper cites a pool paper",
                                   hint="link the reference files to the corpus (`mustcite link`) first")
        gen = CandidateGenerator.index(table, labelled, config, cache_dir=cache_dir)
        return cls(ModelParts(gen, labelled, TierModels(seed=config.seed)))

    @staticmethod
    def effective_year(year: int | None) -> int:
        """The year a query is served for: its own, else today's calendar year."""
        return effective_year(args.year(year))

    # ------------------------------------------------------------------ features and training
    def features(self, q: Doc, year: int, cands: list[Candidate],
                 own: dict[str, dict[str, int | None]]) -> np.ndarray:
        """Feature matrix of ``cands`` for query ``q`` of ``year`` (:func:`.features.feature_matrix`;
        ``own``: the tier flags of the query's own citations, for leave-one-out)."""
        return feature_matrix(q, year, cands, own, pool=self.pool, title_terms=self.pool_terms.titles,
                              nindex=self.nindex, disable=self.config.disable)

    def fit(self, train: list[LabelledPaper] | None = None, *, batch: int = 64, negatives: float = 1.0) -> TierModels:
        """Train the per-tier models on ``train`` (default: every labelled paper), leave-one-out;
        ``negatives``: the share of negative rows they are fit on (:meth:`.tiers.TierModels.fit`)."""
        if train is not None and not all(isinstance(p, LabelledPaper) for p in args.sequence(train, "train")):
            raise UsageError("train must be a list of LabelledPaper", field="train")
        args.whole_number(batch, "batch", 1, 100_000)
        args.fraction(negatives, "negatives", open_low=True)
        train = self.labelled if train is None else train
        X, labels, groups = self.training_matrix(train, batch=batch)
        self.info["train_queries"] = len(train)
        return self.fit_matrix(X, labels, groups, negatives=negatives)

    def fit_matrix(self, X: np.ndarray, labels: dict[str, np.ndarray], groups: np.ndarray, *,
                   negatives: float = 1.0) -> TierModels:
        """Train the per-tier models on a training matrix (:meth:`training_matrix`)."""
        self.tiers = TierModels(seed=self.config.seed).fit(X, labels, groups, negatives=negatives)
        self.info["train_rows"] = int(len(X))
        if negatives < 1.0:
            self.info["negatives_kept"] = negatives
        return self.tiers

    def training_matrix(self, train: list[LabelledPaper], *, batch: int = 64,
                        ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """Training rows, labels per tier and query index per row (:func:`.matrix.training_matrix`)."""
        return training_matrix(self.candidates, self.features, train, batch=batch)

    # ------------------------------------------------------------------ recommending
    def score(self, queries: list[Any], exclude_self: bool = False, tiers: tuple[str, ...] | None = None,
              extra: list[list[str]] | None = None):
        """Parsed queries ``(doc, effective year)``, their candidates, feature matrices and per-tier
        probabilities (one array per tier (of ``tiers``, default all) over all candidates of all
        queries, in order). ``exclude_self``: a query that is a labelled paper is left out of its own
        neighbours and counts (leave-one-out, as in training). ``extra``: more candidate ids per
        query (:meth:`.candidates.CandidateGenerator.generate`)."""
        parsed = [(d, effective_year(y)) for d, y in (parse_query(q, i) for i, q in enumerate(queries))]
        docs = [d for d, _ in parsed]
        if len({d.id for d in docs}) != len(docs):
            raise MustciteError("duplicate query ids")
        exclude = [d.id for d in docs] if exclude_self else None
        cands, _, _ = self.candidates.generate(docs, exclude=exclude, years=[y for _, y in parsed], extra=extra)
        feats = []
        for (d, year), cs in zip(parsed, cands):
            lab = self.nindex.by_id.get(d.id) if exclude_self else None
            feats.append(self.features(d, year, cs, {c.paper_id: c.flags() for c in lab.cites} if lab else {}))
        X_all = np.vstack(feats) if feats else as_matrix([])
        return parsed, cands, feats, self.tiers.predict(X_all, tiers)   # one model call for the whole batch

    def paper_text(self, row: int) -> str:
        """Title and abstract of the pool paper at ``row``, as every method reads them."""
        p = self.pool[row]
        return doc_text(p.get("title") or "", p.get("abstract") or "")

    def ranking_score(self, X: np.ndarray, probs: dict[str, np.ndarray], tier: str | None) -> tuple[np.ndarray, bool]:
        """The score ranking the candidates by ``tier`` (default: the main one), and whether it is a
        learned probability."""
        tier = tier or self.tiers.main
        if tier in probs and "tiers" not in self.config.disable:
            return probs[tier], True
        # untrained: fused rank plus neighbour votes
        return X[:, FEATURES.index("rrf")] * 30 + X[:, FEATURES.index("vote_score")], False

    def rescored(self, d: Doc, cands: list[Candidate], score: np.ndarray, learned: bool,
                  memo: dict[int, float]) -> np.ndarray:
        """``score`` with the top ``config.cross_top`` candidates re-ranked by the cross-encoder
        (:func:`.rescore.combine`) when the model has one; ``memo`` keeps the cross-encoder
        logits of this query's candidates across tiers."""
        k = self.config.cross_top
        if self.cross is None or k <= 0 or not learned or not cands:
            return score
        top = top_indices(score, cands, k)
        need = [j for j in top if j not in memo]
        if need:
            pairs = [(d.text, self.paper_text(cands[j].row)) for j in need]
            memo.update(zip(need, self.cross.score(pairs).tolist()))
        return combine(score, np.array([memo[j] for j in top]), np.array(top), self.config.cross_weight)

    def recommend_many(self, queries: list[Any], top: int = 20, *, evidence: bool = True,
                       exclude_self: bool = False, rank_by: str | None = None) -> dict[str, Ranked]:
        """Ranked recommendations per query id. Queries: dicts ``{"id","title","abstract"[, "year"]}``.

        Results are ordered by the main tier's probability (must-cite once trained), or by
        ``rank_by`` (``type1``, ``type2``, ``type3``, ``must_cite`` or ``cited``) when given. A
        query of year ``Y`` (its ``"year"``, else today's) gets only papers of ``Y`` or earlier; each
        query's list is a :class:`Ranked` whose ``year`` says which year that was.
        """
        queries = _checked_queries(queries)
        top = args.top(top, "rank")
        args.flag(evidence, "evidence"), args.flag(exclude_self, "exclude_self")
        args.choice(rank_by, "rank_by", TIERS)
        # the ranking tier is scored for every candidate, the other tiers only for the results shown
        # (the same numbers: each row is scored on its own; a third of the time on a CPU)
        ranking = rank_by or self.tiers.main
        parsed, cands, feats, probs_all = self.score(queries, exclude_self, tiers=(ranking,))
        picked: list[tuple[Doc, int, list[Candidate], np.ndarray, list[int]]] = []
        start = 0
        for (d, year), cs, X in zip(parsed, cands, feats):
            sl = slice(start, start + len(cs))
            start += len(cs)
            probs = {t: p[sl] for t, p in probs_all.items()}
            if not has_searchable_words(d.text):   # no ranking for "the of and": empty_notice says why
                picked.append((d, year, cs, np.zeros(len(cs)), []))
                continue
            score = self.rescored(d, cs, *self.ranking_score(X, probs, rank_by), {})
            picked.append((d, year, cs, score, top_indices(score, cs, top)))
        rows = [X[j] for X, (*_, chosen) in zip(feats, picked) for j in chosen]
        shown: dict[str, np.ndarray] = {}
        if rows:
            # the ranking tier is known for every candidate; the other tiers are scored for those shown
            offsets = np.cumsum([0] + [len(cs) for cs in cands[:-1]])
            at = np.array([o + j for o, (*_, chosen) in zip(offsets, picked) for j in chosen], dtype=np.int64)
            known = {t: p[at] for t, p in probs_all.items()}
            both = known | self.tiers.predict(np.vstack(rows), tuple(t for t in TIERS if t not in known))
            shown = {t: both[t] for t in TIERS if t in both}    # tier order, as the model lists them
        out: dict[str, Ranked] = {}
        k = 0
        for d, year, cs, score, chosen in picked:
            if not chosen:
                out[d.id] = Ranked([], year, empty_notice(d.text, year))
                continue
            qterms = terms(d.text) if evidence else {}
            cite_count = self.nindex.counts(year)[0] if evidence else {}
            results = []
            for j in chosen:
                c = cs[j]
                ev = evidence_for(c, self.pool_terms.shared(qterms, c.row), self.nindex, cite_count) if evidence else {}
                results.append(recommendation(self.pool[c.row], float(score[j]),
                                              {t: float(p[k]) for t, p in shown.items()}, ev))
                k += 1
            out[d.id] = Ranked(results, year)
        return out

    def rank_ids(self, queries: list[Any], tiers: tuple[str, ...] = TIERS, top: int = 100, *,
                 exclude_self: bool = False) -> dict[str, dict[str, list[str]]]:
        """``{tier: {query id: [paper_id, ...]}}``, each ranked by that tier's probability (for
        evaluating every ground truth with its matching score, from one scoring pass)."""
        queries, top = _checked_queries(queries), args.top(top, "rank")
        tiers = tuple(args.choice(t, "tiers", TIERS, optional=False) for t in args.sequence(tiers, "tiers"))
        args.flag(exclude_self, "exclude_self")
        parsed, cands, feats, probs_all = self.score(queries, exclude_self)
        out: dict[str, dict[str, list[str]]] = {t: {} for t in tiers}
        start = 0
        for (d, _), cs, X in zip(parsed, cands, feats):
            sl = slice(start, start + len(cs))
            start += len(cs)
            probs = {t: p[sl] for t, p in probs_all.items()}
            memo: dict[int, float] = {}
            for t in tiers:
                score = self.rescored(d, cs, *self.ranking_score(X, probs, t), memo)
                order = top_indices(score, cs, top)
                out[t][d.id] = [cs[j].paper_id for j in order]
        return out

    def recommend(self, title: str, abstract: str = "", top: int = 20, *, year: int | None = None,
                  ) -> Ranked:
        """Ranked recommendations for one query of ``year`` (default: today's); only papers of
        that year or earlier are used. The list's ``year`` says which year that was. ``top`` (1 to
        1000), ``year`` and the texts are checked first: a wrong one raises
        :class:`~mustcite.errors.UsageError` naming it."""
        args.text(title, "title"), args.text(abstract, "abstract")
        top, year = args.top(top, "recommend"), args.year(year)
        return self.recommend_many([{"id": "q", "title": title, "abstract": abstract, "year": year}], top)["q"]

    # ------------------------------------------------------------------ persistence
    def save(self, folder: str | Path) -> Path:
        """Write the model into ``folder`` (:func:`.model_store.save`)."""
        folder = args.path(folder, "folder")
        return model_store.save(self.parts(), folder)

    def save_learned(self, folder: str | Path) -> Path:
        """Write what training changes (tier models, cross-encoder, settings) into the model
        ``folder`` saved before (:func:`.model_store.save_learned`)."""
        folder = args.path(folder, "folder")
        return model_store.save_learned(self.parts(), folder)

    @classmethod
    def load(cls, folder: str | Path, *, cache_dir: str | Path | None = None,
             cache_queries: bool = False) -> Recommender:
        """A saved recommender (:func:`.model_store.load`). ``cache_queries``: keep query embeddings in
        the embedding cache (for repeated benchmark runs); by default every query is encoded afresh."""
        folder, cache_dir = args.path(folder, "folder"), args.path(cache_dir, "cache_dir", optional=True)
        args.flag(cache_queries, "cache_queries")
        rec = cls(model_store.load(folder, cache_dir=cache_dir, cache_queries=cache_queries))
        rec.folder = Path(folder)
        return rec

    def read_into_memory(self) -> None:
        """Read every memory-mapped part now (BM25 postings, the pool's vectors and its Arrow table):
        a server does it once as it loads, a one-shot command never (it reads only what it needs)."""
        for bm25 in (self.bm25, getattr(self.cindex, "_bm25", None), getattr(self.nindex, "_bm25", None)):
            if bm25 is not None:
                bm25.read_into_memory()
        if isinstance(self.pool_vecs, np.memmap):
            self.candidates.pool_vecs = np.array(self.pool_vecs)
        self.pool.read_into_memory()

    def describe(self) -> dict[str, Any]:
        return {"pool": len(self.pool), "labelled": len(self.labelled), "dense": self.pool_vecs is not None,
                "tiers": {t: TIER_NAMES[t] for t in self.tiers.models}, "main_tier": self.tiers.main}

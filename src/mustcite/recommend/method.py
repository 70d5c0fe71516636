"""The must-cite recommender: fused first-stage retrieval + labelled-neighbour votes + learned tiers.

For a query (title + abstract):

1. BM25 and (optionally) dense MiniLM retrieval over the candidate pool, fused by reciprocal rank;
2. its nearest labelled papers (:mod:`.neighbours`) vote for the pool papers they cite, weighted
   by similarity and label tier; voted papers join the candidates;
   the papers the labelled papers cite together with the likeliest candidates join them too
   (co-citation), and so do the papers whose citation contexts in labelled papers match the query
   (:mod:`.contexts`);
3. every candidate gets the features of :mod:`.rerank` and the per-tier models of :mod:`.tiers`
   give P(Type I), P(Type II), P(Type III), P(must-cite), P(cited); results are ranked by the main
   tier's probability (RRF + votes before any model is trained).

While training, a labelled query never sees itself: it is left out of its own neighbours and its
citations are subtracted from the citation counts (leave-one-out).

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

import datetime
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataMissingError, MustciteError, UsageError
from ..io import atomic_write_json, write_jsonl, iter_jsonl
from ..retrieval.base import Doc
from ..retrieval.bm25 import BM25Retriever
from .fusion import rrf
from .labelled import TIER_NAMES, TIERS, LabelledPaper
from .contexts import ContextIndex
from .neighbours import NeighbourIndex, year_array
from .rerank import FEATURES, Candidate, as_matrix, feature_row
from .text import same_paper_title, terms
from .tiers import TierModels

FORMAT_VERSION = 4
MAX_TEXT = 20000          # characters of title + abstract a query may have
#: A result is labelled with its likeliest must-cite type (I/II/III) when that probability reaches
#: this; otherwise "must-cite" (if P(must-cite) does) or plain "cited".
TIER_MIN = 0.1
MIN_YEAR = 1900           # the earliest query year accepted


def today_year() -> int:
    """The year of a query that gives none: today's calendar year."""
    return datetime.date.today().year


def parse_year(value: Any, field: str = "year") -> int | None:
    """A query year: None (or "") for none, else a whole number from MIN_YEAR to next year;
    anything else raises MustciteError naming ``field``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        year = int(value.strip())
    if year is None:
        raise MustciteError(f"year must be a whole number such as 2024, got {value!r}", field=field)
    hi = today_year() + 1
    if not MIN_YEAR <= year <= hi:
        raise MustciteError(f"year must be between {MIN_YEAR} and {hi}, got {year}", field=field)
    return year


#: Signals an ablation can switch off, and the reranker features each one owns.
ABLATABLE: dict[str, tuple[str, ...]] = {
    "bm25": ("bm25_score", "bm25_rr"),
    "neighbours": ("vote_score", "vote_must_score", "vote_count", "vote_must_count", "vote_best_sim", "vote_share"),
    "citers": ("citer_max_sim", "citer_top3_sim", "must_citer_max_sim"),
    "cocitation": ("cocite_log", "cocite_norm", "cocite_papers", "seed_rank"),
    "contexts": ("context_best", "context_top3", "context_citers", "context_rr"),
    "popularity": ("log_cite_count", "log_must_count"),
    "metadata": ("year_gap", "venue_neurips", "venue_icml", "venue_iclr", "title_overlap",
                 "title_terms_matched", "has_abstract"),
    "tiers": (),   # no learned models: rank by fused rank + votes
}


@dataclass
class RecommenderConfig:
    first_k: int = 200        # hits taken from each first-stage retriever (tuned on dev: 100 -> 200)
    vote_k: int = 300         # voted papers added to the candidates (tuned on dev: 100 -> 300)
    neighbours: int = 20      # labelled neighbours per query
    cocite_seeds: int = 10    # the likeliest candidates (fused rank + votes) whose co-cited papers count (dev: 10-40 alike)
    cocite_k: int = 200       # co-cited papers added to the candidates (0.752 -> 0.790 of the cited papers on dev)
    context_k: int = 200      # best citation-context matches added to the candidates (contexts.py)
    popular_k: int = 0        # the most-cited labelled citations always among the candidates (0: off)
    rrf_k: int = 60
    dense: bool = True
    #: the dense encoder: "" for the shipped MiniLM, or any model spec DenseRetriever takes
    #: ("onnx-int8:minilm", "static:minilm", a folder); ``max_tokens`` 0 keeps its default length
    encoder: str = ""
    max_tokens: int = 0
    seed: int = 0
    #: signals switched off: any of ABLATABLE (``dense`` is switched off by dense=False). The
    #: popularity features (how often the labelled papers cite a candidate) are off by default:
    #: removing them raised every dev figure in the ablation (benchmarks/recommend_ablation.py).
    disable: tuple[str, ...] = ("popularity",)

    def __post_init__(self):
        self.disable = tuple(self.disable)
        unknown = set(self.disable) - set(ABLATABLE)
        if unknown:
            raise UsageError(f"unknown signal(s) to disable: {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(ABLATABLE)}")


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Ranked(list):
    """One query's ranked :class:`Recommendation` list; ``year``: the year it was computed for
    (only papers of that year or earlier were used)."""

    def __init__(self, items=(), year: int | None = None):
        super().__init__(items)
        self.year = year


def _query(q: Any, i: int = 0) -> tuple[Doc, int | None]:
    if isinstance(q, Doc):
        return q, None
    if not isinstance(q, dict):
        raise UsageError("a query is a dict with 'title' and 'abstract'")
    title, abstract = q.get("title"), q.get("abstract") or ""
    if not isinstance(title, str) or not isinstance(abstract, str):
        raise MustciteError("query 'title' and 'abstract' must be strings", field="title")
    if not (title.strip() or abstract.strip()):
        raise MustciteError("query has neither a title nor an abstract", field="title")
    if len(title) + len(abstract) > MAX_TEXT:
        raise MustciteError(f"query text is longer than {MAX_TEXT} characters", field="abstract")
    return Doc(str(q.get("id") or f"q{i + 1}"), title.strip(), abstract.strip()), parse_year(q.get("year"))


class Recommender:
    """Build with :meth:`build`, train with :meth:`fit`, keep with :meth:`save` / :meth:`load`."""

    def __init__(self, pool: list[dict[str, Any]], labelled: list[LabelledPaper],
                 config: RecommenderConfig | None = None):
        self.config = config or RecommenderConfig()
        self.pool = pool
        self.row = {p["paper_id"]: i for i, p in enumerate(pool)}
        self.pool_years = year_array([p.get("year") for p in pool])   # unknown: never eligible
        self._masks: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        self.labelled = labelled
        self.tiers = TierModels(seed=self.config.seed)
        self.bm25: BM25Retriever | None = None
        self.encoder = None
        self.pool_vecs: np.ndarray | None = None
        self.nindex: NeighbourIndex | None = None
        self.cindex: ContextIndex | None = None
        self.info: dict[str, Any] = {}
        self._title_terms: list[set[str]] | None = None
        self._df: dict[str, int] = {}
        self.cache_queries = True     # False once loaded for serving (see load)
        self._popular_ids: dict[int, list[str]] = {}

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, pool: list[dict[str, Any]], labelled: list[LabelledPaper],
              config: RecommenderConfig | None = None, *, cache_dir: str | Path | None = None) -> "Recommender":
        """Index the pool and the labelled papers (no trained models yet)."""
        if not pool:
            raise DataMissingError("the candidate pool is empty")
        rec = cls(pool, labelled, config)
        ids = set(rec.row)
        for p in labelled:   # only citations of pool papers count
            p.cites = [c for c in p.cites if c.paper_id in ids]
            p.contexts = {pid: text for pid, text in p.contexts.items() if pid in ids}
        rec.labelled = [p for p in labelled if p.cites]
        rec.bm25 = BM25Retriever()
        rec.bm25.index([Doc(p["paper_id"], p.get("title") or "", p.get("abstract") or "") for p in pool])
        lab_vecs = None
        if rec.config.dense:
            rec.encoder = _encoder(cache_dir, {"spec": rec.config.encoder or None,
                                               "max_seq_length": rec.config.max_tokens or None})
            rec.pool_vecs = rec.encoder.embed([Doc(p["paper_id"], p.get("title") or "", p.get("abstract") or "").text
                                               for p in pool], desc="encoding pool").astype(np.float32)
            if rec.labelled:
                lab_vecs = rec.encoder.embed([Doc(p.id, p.title, p.abstract).text for p in rec.labelled],
                                             desc="encoding labelled papers").astype(np.float32)
        if not rec.labelled:
            raise DataMissingError("no labelled paper cites a pool paper",
                                   hint="link the reference files to the corpus (`mustcite link`) first")
        rec.nindex = NeighbourIndex(rec.labelled, lab_vecs)
        rec.cindex = ContextIndex(rec.labelled)
        return rec

    # ------------------------------------------------------------------ time order
    @staticmethod
    def effective_year(year: int | None) -> int:
        """The year a query is served for: its own, else today's calendar year."""
        return today_year() if year is None else year

    def _pool_mask(self, year: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(pool papers a query of ``year`` may see, the same as float32 BM25 weights or None when
        every pool paper is eligible); cached per year."""
        got = self._masks.get(year)
        if got is None:
            ok = self.pool_years <= year
            got = (ok, None if ok.all() else ok.astype(np.float32))
            if len(self._masks) >= 16:
                self._masks.clear()
            self._masks[year] = got
        return got

    def _bm25_search(self, queries: list[Doc], years: list[int], k: int) -> dict[str, list[tuple[str, float]]]:
        """BM25 hits per query among the pool papers of its year or earlier: the scores of later
        papers are zeroed before the top ``k`` is taken (bm25s ``weight_mask``), so every query
        gets up to ``k`` eligible hits. Queries are searched in groups of the same year."""
        by_year: dict[int, list[Doc]] = {}
        for q, y in zip(queries, years):
            by_year.setdefault(y, []).append(q)
        out: dict[str, list[tuple[str, float]]] = {}
        for y, qs in by_year.items():
            out.update(self.bm25.search(qs, k=k, mask=self._pool_mask(y)[1]))
        return out

    def _popular(self, year: int) -> list[str]:
        """The ``popular_k`` pool papers of ``year`` or earlier most cited by the labelled papers
        of ``year`` or earlier (generic must-cites: optimisers, architectures, datasets), always
        considered."""
        if year not in self._popular_ids:
            counts = self.nindex.counts(year)[0]
            ok = self._pool_mask(year)[0]
            ids = [pid for pid in counts if pid in self.row and ok[self.row[pid]]]
            self._popular_ids[year] = sorted(ids, key=lambda pid: (-counts[pid], pid))[: self.config.popular_k]
        return self._popular_ids[year]

    def _terms_of_titles(self) -> list[set[str]]:
        if self._title_terms is None:
            self._title_terms = [set(terms(p.get("title") or "")) for p in self.pool]
            self._df = self._doc_freq()
        return self._title_terms

    def _doc_freq(self) -> dict[str, int]:
        """Stem -> number of pool papers whose title + abstract has it (from the BM25 index; titles
        only if that index does not expose its postings)."""
        try:
            b = self.bm25._bm25
            indptr = np.asarray(b.scores["indptr"])
            return {tok: int(indptr[i + 1] - indptr[i]) for tok, i in b.vocab_dict.items() if i + 1 < len(indptr)}
        except (AttributeError, KeyError, TypeError, IndexError):
            df: dict[str, int] = {}
            for ts in self._title_terms or []:
                for t in ts:
                    df[t] = df.get(t, 0) + 1
            return df

    def _evidence_terms(self, qterms: dict[str, str], row: int) -> list[str]:
        """Query words the candidate shares, title words first, then by rarity in the pool."""
        p = self.pool[row]
        title_terms = self._terms_of_titles()[row]
        cand = terms(f"{p.get('title') or ''} {p.get('abstract') or ''}")
        common = max(20, len(self.pool) // 12)   # words in over 8% of the pool say little
        def df(stem: str) -> int:   # the BM25 tokenizer splits hyphenated words: use the rarest known part
            known = [self._df[part] for part in stem.split("-") if part in self._df]
            return min(known) if known else 0
        shared = [(s, w) for s, w in qterms.items() if s in cand and df(s) <= common]
        shared.sort(key=lambda sw: (sw[0] not in title_terms, df(sw[0]), sw[1]))
        return [w for _, w in shared]

    # ------------------------------------------------------------------ candidates and features
    def _candidates(self, queries: list[Doc], exclude: list[str | None] | None = None,
                    years: list[int | None] | None = None,
                    ) -> tuple[list[list[Candidate]], list[list[tuple[str, float]]], np.ndarray | None]:
        """Candidates per query, from the papers of its year (``years``; None: today's) or earlier."""
        cfg = self.config
        years = [self.effective_year(y) for y in (years or [None] * len(queries))]
        bm = self._bm25_search(queries, years, cfg.first_k) if "bm25" not in cfg.disable else {}
        qvecs = None
        if self.pool_vecs is not None:
            texts = [q.text for q in queries]
            # training and evaluation reuse cached query embeddings; a served model encodes every
            # query afresh (honest latency, and users' drafts do not pile up in the cache)
            vecs = self.encoder.embed(texts, desc="encoding queries") if self.cache_queries else \
                self.encoder.encode(texts)
            qvecs = np.asarray(vecs, dtype=np.float32)
        sims = self.nindex.similarities(queries, qvecs, exclude, years)
        neigh = self.nindex.neighbours(queries, qvecs, cfg.neighbours, exclude, sims=sims)
        ctx = self.cindex.search(queries, exclude=exclude, years=years) \
            if self.cindex is not None and "contexts" not in cfg.disable else [{} for _ in queries]
        out = []
        for i, q in enumerate(queries):
            ok = self._pool_mask(years[i])[0]
            runs: dict[str, list[tuple[str, float]]] = {}
            if "bm25" not in cfg.disable:
                runs["bm25"] = bm.get(q.id, [])
            cos = None
            if qvecs is not None:
                cos = self.pool_vecs @ qvecs[i]
                masked = cos if ok.all() else np.where(ok, cos, -np.inf)   # later papers never rank
                k = min(cfg.first_k, int(ok.sum()))
                top = np.argpartition(-masked, min(k, len(cos) - 1))[:k]
                top = top[np.lexsort((top, -masked[top]))]
                runs["dense"] = [(self.pool[int(j)]["paper_id"], float(cos[j])) for j in top]
            cands: dict[str, Candidate] = {}
            for name, ranked in runs.items():
                for rank, (pid, s) in enumerate(ranked, 1):
                    c = cands.setdefault(pid, Candidate(pid, self.row[pid]))
                    setattr(c, name, (s, rank))
                    c.sources.append(name)
            for pid, s in rrf(runs, k=cfg.rrf_k):
                cands[pid].rrf = s
            votes = self.nindex.votes(neigh[i]) if "neighbours" not in cfg.disable else {}
            votes = {pid: v for pid, v in votes.items() if ok[self.row[pid]]}   # a later paper never joins
            for pid, v in sorted(votes.items(), key=lambda kv: (-kv[1].score, kv[0]))[: cfg.vote_k]:
                c = cands.setdefault(pid, Candidate(pid, self.row[pid]))
                c.sources.append("neighbours")
            for pid in ([] if "popularity" in cfg.disable else self._popular(years[i])):
                cands.setdefault(pid, Candidate(pid, self.row[pid])).sources.append("popular")
            matches = ctx[i]
            for pid in sorted((p for p in matches if ok[self.row[p]]), key=lambda p: matches[p].rank)[: cfg.context_k]:
                cands.setdefault(pid, Candidate(pid, self.row[pid])).sources.append("contexts")
            if cfg.cocite_seeds and "cocitation" not in cfg.disable:
                self._add_cocited(cands, self._seeds(cands, votes), sims[i], ok)
            total_sim = sum(sim for _, sim in neigh[i]) or 1.0
            for pid, c in cands.items():
                if pid in votes:
                    c.vote = votes[pid]
                    c.vote_share = votes[pid].score / total_sim
                if cos is not None:
                    c.dense_cos = float(cos[c.row])
                if pid in matches:
                    c.context = matches[pid]
                c.citer = self.nindex.citer_similarity(sims[i], pid)
            # the query's own paper (a draft already in the corpus) is never its own must-cite; the
            # year check is a safety net (every source above is already restricted)
            out.append([c for c in cands.values() if ok[c.row]
                        and not same_paper_title(self.pool[c.row].get("title") or "", q.title)])
        return out, neigh, qvecs

    def _seeds(self, cands: dict[str, Candidate], votes: dict[str, Any]) -> list[str]:
        """The query's likeliest citations by the untrained score (fused rank + votes): no learned
        model is involved, so the features built on them need no cross-fitting in training."""
        cheap = {pid: c.rrf * 30 + (votes[pid].score if pid in votes else 0.0) for pid, c in cands.items()}
        seeds = sorted(cheap, key=lambda pid: (-cheap[pid], pid))[: self.config.cocite_seeds]
        for rank, pid in enumerate(seeds, 1):
            cands[pid].seed_rank = rank
        return seeds

    def _add_cocited(self, cands: dict[str, Candidate], seeds: list[str], sims: np.ndarray,
                     ok: np.ndarray) -> None:
        """Add and annotate the papers (of the query's year or earlier: ``ok``) the labelled papers
        (of the query's year or earlier: ``sims`` >= 0) cite together with ``seeds``."""
        co = self.nindex.cocitation(seeds, sims)
        new = (p for p in co if p not in cands and ok[self.row[p]])
        for pid in sorted(new, key=lambda p: (-co[p][0], p))[: self.config.cocite_k]:
            cands[pid] = Candidate(pid, self.row[pid], sources=["cocitation"])
        for pid, c in cands.items():
            if pid in co:
                c.cocite = co[pid]

    def _features(self, q: Doc, year: int, cands: list[Candidate],
                  own: dict[str, dict[str, int | None]]) -> np.ndarray:
        """Feature matrix of ``cands`` for a query of ``year`` (its effective year). ``own``: the
        tier flags of the query's own citations when the query is itself a labelled paper of the
        index (leave-one-out: they are subtracted from the citation counts, which count the labelled
        papers of ``year`` or earlier)."""
        qt = set(terms(q.text))
        tt = self._terms_of_titles()
        cite_count, must_count = self.nindex.counts(year)
        if own:   # subtracted only where the query's own paper is among those counted
            lab = self.nindex._row.get(q.id)
            if lab is None or not self.nindex.years[lab] <= year:
                own = {}
        rows = []
        for c in cands:
            p = self.pool[c.row]
            f = own.get(c.paper_id)
            cc = cite_count.get(c.paper_id, 0) - (f is not None)
            mc = must_count.get(c.paper_id, 0) - bool(f and f["must_cite"])
            rows.append(feature_row(c, query_year=year, cand_year=p.get("year"),
                                    venue=p.get("venue") or "", has_abstract=bool(p.get("abstract")),
                                    query_terms=qt, title_terms=tt[c.row], cite_count=cc, must_count=mc))
        X = as_matrix(rows)
        masked = [FEATURES.index(f) for sig in self.config.disable for f in ABLATABLE[sig]]
        if masked:
            X[:, masked] = 0.0
        return X

    # ------------------------------------------------------------------ training
    def fit(self, train: list[LabelledPaper] | None = None, *, batch: int = 64) -> "TierModels":
        """Train the per-tier models on ``train`` (default: every labelled paper), leave-one-out."""
        train = self.labelled if train is None else train
        X, labels, groups = self.training_matrix(train, batch=batch)
        self.tiers = TierModels(seed=self.config.seed).fit(X, labels, groups)
        self.info["train_queries"] = len(train)
        self.info["train_rows"] = int(len(X))
        return self.tiers

    def training_matrix(self, train: list[LabelledPaper], *, batch: int = 64,
                        ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """Features of every candidate of every ``train`` paper (leave-one-out), its label per tier
        (1/0, -1 where that tier is unknown) and its query's index (``groups``)."""
        if not train:
            raise DataMissingError("no training queries")
        from tqdm import tqdm

        Xs, ys, gs = [], {t: [] for t in TIERS}, []
        for start in tqdm(range(0, len(train), batch), desc="training features", unit="batch",
                          total=-(-len(train) // batch), disable=len(train) <= batch):
            chunk = train[start:start + batch]
            docs = [Doc(p.id, p.title, p.abstract) for p in chunk]
            # each training query sees only the papers of its own year or earlier, as at serving time
            years = [self.effective_year(p.year) for p in chunk]
            cands, _, _ = self._candidates(docs, exclude=[p.id for p in chunk], years=years)
            for k, (p, d, cs, year) in enumerate(zip(chunk, docs, cands, years)):
                if not cs:
                    continue
                own = {c.paper_id: c.flags() for c in p.cites}
                Xs.append(self._features(d, year, cs, own if p.id in self.nindex.by_id else {}))
                gs.append(np.full(len(cs), start + k, dtype=np.int64))
                for t in TIERS:
                    col = []
                    for c in cs:
                        f = own.get(c.paper_id)
                        if f is None:
                            col.append(0)
                        else:
                            col.append(-1 if f[t] is None else int(f[t]))
                    ys[t].append(np.asarray(col, dtype=np.int64))
        if not Xs:
            raise DataMissingError("no training query has any candidate")
        return np.vstack(Xs), {t: np.concatenate(v) for t, v in ys.items() if v}, np.concatenate(gs)

    # ------------------------------------------------------------------ recommending
    def _scored(self, queries: list[Any], exclude_self: bool):
        """Parsed queries ``(doc, effective year)``, their candidates, feature matrices and per-tier
        probabilities (one array per tier over all candidates of all queries, in order)."""
        parsed = [(d, self.effective_year(y)) for d, y in (_query(q, i) for i, q in enumerate(queries))]
        docs = [d for d, _ in parsed]
        if len({d.id for d in docs}) != len(docs):
            raise MustciteError("duplicate query ids")
        exclude = [d.id for d in docs] if exclude_self else None
        cands, _, _ = self._candidates(docs, exclude=exclude, years=[y for _, y in parsed])
        feats = []
        for (d, year), cs in zip(parsed, cands):
            lab = self.nindex.by_id.get(d.id) if exclude_self else None
            feats.append(self._features(d, year, cs, {c.paper_id: c.flags() for c in lab.cites} if lab else {}))
        X_all = np.vstack(feats) if feats else as_matrix([])
        return parsed, cands, feats, self.tiers.predict(X_all)   # one model call for the whole batch

    def _ranking_score(self, X: np.ndarray, probs: dict[str, np.ndarray], tier: str | None) -> np.ndarray:
        tier = tier or self.tiers.main
        if tier in probs and "tiers" not in self.config.disable:
            return probs[tier]
        # untrained: fused rank plus neighbour votes
        return X[:, FEATURES.index("rrf")] * 30 + X[:, FEATURES.index("vote_score")]

    def recommend_many(self, queries: list[Any], top: int = 20, *, evidence: bool = True,
                       exclude_self: bool = False, rank_by: str | None = None) -> dict[str, Ranked]:
        """Ranked recommendations per query id. Queries: dicts ``{"id","title","abstract"[, "year"]}``.

        Results are ordered by the main tier's probability (must-cite once trained), or by
        ``rank_by`` (``type1``, ``type2``, ``type3``, ``must_cite`` or ``cited``) when given. A
        query of year ``Y`` (its ``"year"``, else today's) gets only papers of ``Y`` or earlier; each
        query's list is a :class:`Ranked` whose ``year`` says which year that was.
        """
        if top < 1:
            raise UsageError("top must be at least 1")
        if rank_by is not None and rank_by not in TIERS:
            raise UsageError(f"rank_by must be one of {', '.join(TIERS)}")
        parsed, cands, feats, probs_all = self._scored(queries, exclude_self)
        out: dict[str, Ranked] = {}
        start = 0
        for (d, year), cs, X in zip(parsed, cands, feats):
            sl = slice(start, start + len(cs))
            start += len(cs)
            if not cs:
                out[d.id] = Ranked([], year)
                continue
            probs = {t: p[sl] for t, p in probs_all.items()}
            score = self._ranking_score(X, probs, rank_by)
            order = _top(score, cs, top)
            qterms = terms(d.text) if evidence else {}
            cite_count = self.nindex.counts(year)[0] if evidence else {}
            out[d.id] = Ranked([self._result(cs[j], float(score[j]), {t: float(p[j]) for t, p in probs.items()},
                                             qterms, evidence, cite_count) for j in order], year)
        return out

    def rank_ids(self, queries: list[Any], tiers: tuple[str, ...] = TIERS, top: int = 100, *,
                 exclude_self: bool = False) -> dict[str, dict[str, list[str]]]:
        """``{tier: {query id: [paper_id, ...]}}``, each ranked by that tier's probability (for
        evaluating every ground truth with its matching score, from one scoring pass)."""
        parsed, cands, feats, probs_all = self._scored(queries, exclude_self)
        out: dict[str, dict[str, list[str]]] = {t: {} for t in tiers}
        start = 0
        for (d, _), cs, X in zip(parsed, cands, feats):
            sl = slice(start, start + len(cs))
            start += len(cs)
            probs = {t: p[sl] for t, p in probs_all.items()}
            for t in tiers:
                score = self._ranking_score(X, probs, t)
                order = _top(score, cs, top)
                out[t][d.id] = [cs[j].paper_id for j in order]
        return out

    def recommend(self, title: str, abstract: str = "", top: int = 20, *, year: int | None = None,
                  ) -> Ranked:
        """Ranked recommendations for one query of ``year`` (default: today's); only papers of
        that year or earlier are used. The list's ``year`` says which year that was."""
        return self.recommend_many([{"id": "q", "title": title, "abstract": abstract, "year": year}], top)["q"]

    def audit(self, path: str | Path, top: int = 50, **kw: Any):
        from .audit import audit_draft

        return audit_draft(self, path, top=top, **kw)

    def _result(self, c: Candidate, score: float, probs: dict[str, float], qterms: dict[str, str],
                evidence: bool, cite_count: dict[str, int] | None = None) -> Recommendation:
        p = self.pool[c.row]
        typed = {t: probs[t] for t in ("type1", "type2", "type3") if t in probs}
        best = max(typed, key=lambda t: (typed[t], t)) if typed else None
        if best and typed[best] >= TIER_MIN:
            tier = {"type1": "I", "type2": "II", "type3": "III"}[best]
        elif probs.get("must_cite", 0.0) >= TIER_MIN:
            tier = "must-cite"
        else:
            tier = "cited"
        ev: dict[str, Any] = {}
        if evidence:
            matched = self._evidence_terms(qterms, c.row)
            by = sorted(c.vote.by, key=lambda t: (-t[1], t[0]))[:5]
            ev = {
                "sources": sorted(set(c.sources)),
                "neighbours": [{"id": nid, "title": self.nindex.by_id[nid].title, "similarity": round(sim, 4),
                                "must_cite": must} for nid, sim, must in by],
                "neighbours_citing": c.vote.count, "neighbours_must_citing": c.vote.must_count,
                # labelled papers (of the query's year or earlier) citing it
                "labelled_citing": (self.nindex.cite_count if cite_count is None else cite_count).get(c.paper_id, 0),
                # labelled papers citing it together with the query's likeliest citations (seeds)
                "co_cited_by": int(c.cocite[2]),
                # labelled papers whose citation contexts of it match the query's words
                "described_by": c.context.citers,
                "matched_terms": matched[:12],
            }
        return Recommendation(c.paper_id, p.get("title") or "", p.get("year"), p.get("venue"), round(score, 6),
                              tier, {t: round(v, 6) for t, v in probs.items()}, p.get("url") or None,
                              p.get("pdf") or None, list(p.get("authors") or []), ev)

    # ------------------------------------------------------------------ persistence
    def save(self, folder: str | Path) -> Path:
        import joblib
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        cols = ("paper_id", "title", "abstract", "authors", "venue", "year", "url", "pdf")
        table = pa.Table.from_pylist([{k: p.get(k) for k in cols} for p in self.pool])
        pq.write_table(table, folder / "pool.parquet")
        write_jsonl(folder / "labelled.jsonl", [p.to_dict() for p in self.labelled])
        self.bm25.save(folder / "bm25")
        if self.pool_vecs is not None:
            np.save(folder / "pool_vectors.npy", self.pool_vecs)
            np.save(folder / "labelled_vectors.npy", self.nindex.vectors)
        joblib.dump(self.tiers, folder / "tiers.joblib")
        atomic_write_json(folder / "config.json", {
            "format": FORMAT_VERSION, "config": asdict(self.config), "features": list(FEATURES),
            "tiers": sorted(self.tiers.models), "main_tier": self.tiers.main, "tier_stats": self.tiers.stats,
            "pool": len(self.pool), "labelled": len(self.labelled), "info": self.info,
            "encoder": None if self.encoder is None else self.encoder.metadata(),
        })
        return folder

    @classmethod
    def load(cls, folder: str | Path, *, cache_dir: str | Path | None = None,
             cache_queries: bool = False) -> "Recommender":
        """A saved recommender. ``cache_queries``: keep query embeddings in the embedding cache
        (for repeated benchmark runs); by default every query is encoded afresh."""
        import joblib
        import pyarrow.parquet as pq

        folder = Path(folder)
        if not (folder / "config.json").exists():
            raise DataMissingError(f"no trained recommender in {folder}",
                                   hint="run `mustcite train` first (it writes <work>/models/recommender)")
        meta = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise DataMissingError(f"recommender in {folder} has format {meta.get('format')}, expected "
                                   f"{FORMAT_VERSION}", hint="rerun `mustcite train`")
        # saved before `disable` existed: none; keys of older formats (query_year) are dropped
        known = {f.name for f in fields(RecommenderConfig)}
        config = RecommenderConfig(**{"disable": (), **{k: v for k, v in meta["config"].items() if k in known}})
        pool = pq.read_table(folder / "pool.parquet").to_pylist()
        labelled = [LabelledPaper.from_dict(obj) for _, obj in iter_jsonl(folder / "labelled.jsonl")]
        rec = cls(pool, labelled, config)
        rec.bm25 = BM25Retriever.load(folder / "bm25")
        lab_vecs = None
        if config.dense and (folder / "pool_vectors.npy").exists():
            rec.encoder = _encoder(cache_dir, meta.get("encoder", {}) or {})
            rec.pool_vecs = np.load(folder / "pool_vectors.npy")
            lab_vecs = np.load(folder / "labelled_vectors.npy")
        rec.nindex = NeighbourIndex(labelled, lab_vecs)
        rec.cindex = ContextIndex(labelled)
        rec.tiers = joblib.load(folder / "tiers.joblib")
        rec.cache_queries = cache_queries
        rec.info = meta.get("info", {})
        return rec

    def describe(self) -> dict[str, Any]:
        return {"pool": len(self.pool), "labelled": len(self.labelled), "dense": self.pool_vecs is not None,
                "tiers": {t: TIER_NAMES[t] for t in self.tiers.models}, "main_tier": self.tiers.main}


def _top(score: np.ndarray, cands: list[Candidate], top: int) -> list[int]:
    """Indices of the ``top`` best-scored candidates; ties broken by paper id (deterministic)."""
    return sorted(range(len(cands)), key=lambda j: (-float(score[j]), cands[j].paper_id))[:top]


def _encoder(cache_dir: str | Path | None, meta: dict[str, Any] | None = None):
    """The dense encoder a saved model's metadata (or a config's spec) names; MiniLM by default."""
    from ..retrieval.dense import dense_from_meta

    meta = dict(meta or {})
    if meta.get("model_path") and not Path(meta["model_path"]).is_dir() and not meta.get("spec"):
        meta.pop("model_path")    # the shipped MiniLM of another environment: use this one's
    return dense_from_meta(meta, cache_dir=cache_dir)

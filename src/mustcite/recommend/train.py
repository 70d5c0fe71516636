"""Training the recommender: default (every labelled paper) and benchmark (train-only) modes.

* :func:`train_default`: pool = the corpus store (or any pool file), labelled papers = the given
  reference folders. A deterministic hold-out (``dev_fraction`` of the labelled papers, by a hash
  of their id) is scored for the model card; the shipped model is then refitted on all of them.
* :func:`train_benchmark`: pool, train queries and qrels of a built benchmark
  (``<work>/benchmarks/<name>/``). Models see the train queries (plus reference-folder papers that
  are not dev/test queries) only; metrics come from dev (and test only when asked). Nothing is
  refitted on dev or test.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..benchmark.evaluate import evaluate as ir_evaluate
from ..benchmark.loader import Benchmark
from ..benchmark.training_data import BenchmarkData, benchmark_data
from ..config import Workspace
from ..corpus.pool import load_pool
from ..errors import DataMissingError
from ..extract.works import WorkIndex, is_work_id, pool_works
from ..labels.papers import LabelledPaper, load_reference_dirs, paper_keys
from ..retrieval.base import Doc
from ..retrieval.cross_encoder import CITED_TARGET, CrossEncoderReranker
from .card import write_card
from .method import Recommender, RecommenderConfig
from .query import effective_year, parse_query, parse_year
from .ranking import top_indices
from .shared_workers import map_spans, span_workers

#: the default model's pool holds the cited works that at least this many labelled papers cite
SERVING_MIN_CITING = 2

EVAL_METRICS = ("MAP", "MRR", "nDCG@10", "R@50", "R@100", "HR@10")


#: The folder ``make demo`` trains its light model into (BM25 + votes + tiers, no dense encoder).
LIGHT_MODEL = "recommender-light"


def model_dir(work: str | Path | None = None) -> Path:
    """``<work>/models/recommender``: where ``mustcite train`` writes the full model."""
    return Workspace.resolve(work).root / "models" / "recommender"


def default_model(work: str | Path | None = None) -> Path:
    """The model ``recommend``, ``audit`` and ``serve`` use without ``--model``: the full model
    (:func:`model_dir`) once trained, else the demo's light model when that one exists."""
    full = model_dir(work)
    light = full.parent / LIGHT_MODEL
    if not (full / "config.json").exists() and (light / "config.json").exists():
        return light
    return full


def _hash_fraction(key: str, seed: int) -> float:
    return int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def split_dev(labelled: list[LabelledPaper], fraction: float, seed: int):
    dev = [p for p in labelled if _hash_fraction(p.id, seed) < fraction]
    ids = {p.id for p in dev}
    return [p for p in labelled if p.id not in ids], dev


def fit_sample(labelled: list[LabelledPaper], n: int, seed: int) -> list[LabelledPaper]:
    """The ``n`` labelled papers the tier models are fit on (all when ``n`` is 0 or larger than
    the list): those with the smallest seeded hash of their id, so the sample does not depend on
    the order the folders were read in."""
    if not n or n >= len(labelled):
        return labelled
    return sorted(labelled, key=lambda p: (_hash_fraction(p.id, seed + 1), p.id))[:n]


def qrels_of(papers: list[LabelledPaper]) -> dict[str, dict[str, dict[str, int]]]:
    """Per ground truth (``cited``, ``mustcite``, ``type1..3``) qrels of labelled papers' citations."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    names = {"cited": "cited", "must_cite": "mustcite", "type1": "type1", "type2": "type2", "type3": "type3"}
    for p in papers:
        for c in p.cites:
            for tier, gt in names.items():
                if c.flags()[tier]:
                    out.setdefault(gt, {}).setdefault(p.id, {})[c.paper_id] = 1
    return out


#: The tier probability that ranks the results evaluated against each ground truth.
TIER_OF_TRUTH = {"cited": "cited", "mustcite": "must_cite", "type1": "type1", "type2": "type2", "type3": "type3"}


def evaluate(rec: Recommender, queries: list[dict[str, Any]], qrels: dict[str, dict[str, dict[str, int]]],
             top: int = 100, *, exclude_self: bool = False, matched: bool = True) -> dict[str, Any]:
    """Mean metrics per ground truth of the recommender's top ``top`` for ``queries``.

    ``matched``: each ground truth is scored on the ranking by its own tier's probability (cited by
    P(cited), Type I by P(Type I)...); otherwise every ground truth sees the one default ranking.
    """
    if not matched:
        results = rec.recommend_many(queries, top=top, evidence=False, exclude_self=exclude_self)
        return ranking_metrics({qid: [r.paper_id for r in rs] for qid, rs in results.items()}, qrels)
    tiers = tuple(t for t in dict.fromkeys(TIER_OF_TRUTH.values()) if t in rec.tiers.models) or (None,)
    ranked = spread_rank_ids(rec, queries, tiers, top=top, exclude_self=exclude_self)
    out: dict[str, Any] = {}
    for gt, table in qrels.items():
        tier = TIER_OF_TRUTH.get(gt)
        out |= ranking_metrics(ranked[tier if tier in ranked else tiers[0]], {gt: table})
    return dict(sorted(out.items()))


#: queries per span of :func:`spread_rank_ids`
RANK_SPAN = 64


def spread_rank_ids(rec: Recommender, queries: list[dict[str, Any]], tiers: tuple[str, ...], *, top: int = 100,
                    exclude_self: bool = False) -> dict[str, dict[str, list[str]]]:
    """:meth:`.method.Recommender.rank_ids` of ``queries`` in spans on forked workers
    (:mod:`.shared_workers`); the same rankings as one call. Query vectors are encoded (and cached)
    here first, so the workers only read them."""
    gen = rec.candidates
    # a query without an id is numbered by its place in the call: one call then
    parallel = span_workers(-(-len(queries) // RANK_SPAN)) > 1 and all(isinstance(q, dict) and q.get("id")
                                                                        for q in queries)
    if parallel and gen.pool_vecs is not None:
        if gen.cache_queries:
            gen.encoder.embed([parse_query(q, i)[0].text for i, q in enumerate(queries)], desc="encoding queries")
        else:
            parallel = False
    parts = map_spans(_rank_span, (rec, queries, tiers, top, exclude_self), len(queries),
                      RANK_SPAN if parallel else max(1, len(queries)), desc="scoring hold-out", parallel=parallel)
    out: dict[str, dict[str, list[str]]] = {t: {} for t in tiers}
    for part in parts:
        for t, ranked in part.items():
            out[t] |= ranked
    return out


def _rank_span(shared: tuple, start: int, end: int) -> dict[str, dict[str, list[str]]]:
    rec, queries, tiers, top, exclude_self = shared
    return rec.rank_ids(queries[start:end], tiers, top=top, exclude_self=exclude_self)


def evaluate_bm25(rec: Recommender, queries: list[dict[str, Any]], qrels: dict[str, dict[str, dict[str, int]]],
                  top: int = 100) -> dict[str, Any]:
    """The same metrics for the recommender's own BM25 first stage alone (the baseline in the card),
    under the same time order: each query searches the pool papers of its ``year`` (else today's)
    or earlier."""
    docs = [Doc(str(q["id"]), q.get("title") or "", q.get("abstract") or "") for q in queries]
    years = [effective_year(parse_year(q.get("year"))) for q in queries]
    hits = rec.candidates.bm25_search(docs, years, top)
    return ranking_metrics({qid: [pid for pid, _ in h] for qid, h in hits.items()}, qrels)


def ranking_metrics(ranked: dict[str, list[str]], qrels: dict[str, dict[str, dict[str, int]]]) -> dict[str, Any]:
    """Mean metrics per ground truth of ranked paper ids per query (queries absent from qrels skipped)."""
    run = {qid: {pid: float(len(ids) - i) for i, pid in enumerate(ids)} for qid, ids in ranked.items()}
    out: dict[str, Any] = {}
    for gt, table in sorted(qrels.items()):
        table = {q: d for q, d in table.items() if q in run}
        if table:
            out[gt] = {"queries": len(table)} | {m: round(v, 4) for m, v in
                                                 ir_evaluate(run, table, EVAL_METRICS).items()}
    return out


def _queries(papers: list[LabelledPaper]) -> list[dict[str, Any]]:
    return [{"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year} for p in papers]


def _cites_in(papers: list[LabelledPaper], pool_ids: set[str]) -> list[LabelledPaper]:
    """The papers with their citations (contexts, names) of pool papers only; papers left citing
    none are dropped."""
    out = []
    for p in papers:
        p.keep_pool(pool_ids)
        if p.cites:
            out.append(p)
    return out


@dataclass
class DefaultTrainingData:
    """What the default model learns from: the labelled papers, their train / dev split (dev: the
    card's hold-out), the pool the dev papers are scored on (``eval_pool``: without the works only
    dev papers introduce) and the pool of the model refitted on all (``full_pool``)."""

    labelled: list[LabelledPaper]
    train: list[LabelledPaper]
    dev: list[LabelledPaper]
    eval_pool: list[dict[str, Any]]
    full_pool: list[dict[str, Any]]


def default_training_data(refs: list[str | Path], pool_path: str | Path, *, seed: int = 0,
                          dev_fraction: float = 0.1, pool_years: tuple[int, int] | None = None,
                          year: int | None = None, works: str | Path | None = None,
                          works_min_citing: int = SERVING_MIN_CITING,
                          hold_out: set[str] | frozenset[str] = frozenset()) -> DefaultTrainingData:
    """The labelled papers of ``refs`` over the pool of ``pool_path`` (and the catalogue of cited
    works ``works``), split as :func:`train_default` splits them (see there for the arguments).
    ``hold_out``: ids and normalised titles (:func:`~mustcite.labels.papers.paper_keys`) of papers
    that are no labelled paper under any of their ids, so no work enters the pool through them."""
    pool = load_pool(pool_path, pool_years)
    if year is not None:
        pool = [p for p in pool if p.get("year") is not None and p["year"] <= year]
    index = WorkIndex.load(works) if works else None
    labelled = load_reference_dirs(refs, {p["paper_id"] for p in pool} | (set(index.works) if index else set()), index,
                                   exclude=hold_out)
    if year is not None:
        labelled = [p for p in labelled if p.year is not None and p.year <= year]
    train, dev = split_dev(labelled, dev_fraction, seed)
    full_pool = eval_pool = pool
    if index is not None:
        # the works the labelled papers introduce, as of ``year``; the hold-out is scored on a pool
        # whose works its own papers did not introduce (the refitted model takes all of them)
        full_pool = pool + pool_works(index, allowed={p.id for p in labelled}, min_citing=works_min_citing, until=year)
        eval_pool = pool + pool_works(index, allowed={p.id for p in train}, min_citing=works_min_citing, until=year)
        labelled = _cites_in(labelled, {p["paper_id"] for p in full_pool})
        train, dev = split_dev(_cites_in(copy.deepcopy(labelled), {p["paper_id"] for p in eval_pool}),
                               dev_fraction, seed)
    if len(labelled) < 10:
        raise DataMissingError(f"only {len(labelled)} labelled papers cite a pool paper; need at least 10",
                               hint="run `mustcite extract` and `mustcite link` on the NeurIPS full texts first")
    return DefaultTrainingData(labelled, train, dev, eval_pool, full_pool)


def train_default(refs: list[str | Path], pool_path: str | Path, out: str | Path, *, dense: bool = True,
                  seed: int = 0, dev_fraction: float = 0.1, refit: bool = True,
                  pool_years: tuple[int, int] | None = None, year: int | None = None,
                  config: RecommenderConfig | None = None, cache_dir: str | Path | None = None,
                  fit_queries: int = 0, negatives: float = 1.0, works: str | Path | None = None,
                  works_min_citing: int = SERVING_MIN_CITING, hold_out: list[dict[str, Any]] = (),
                  log=print) -> dict[str, Any]:
    """Train on every labelled paper of ``refs``; returns the model card.

    ``works``: a catalogue of cited works (``mustcite works build``): the pool also holds the works
    that at least ``works_min_citing`` labelled papers cite, each from the year the first of them
    appeared, and the labelled papers' unlinked references cite them.

    ``fit_queries``: fit the tier models on this many of the labelled papers (a fixed sample by
    :func:`fit_sample`; 0: all). Every labelled paper is still a neighbour whose citations vote;
    only the training rows are fewer (the time they take grows with the number of queries).
    ``negatives``: the share of negative training rows the tier models are fit on (every positive
    row is kept; :meth:`.tiers.TierModels.fit`).

    ``year``: a model as of that year (pool and labelled papers of that year or earlier). The
    hold-out papers are scored as queries of their own year, so they too see only papers of their
    year or earlier.

    ``hold_out``: query records (``id``, ``title``, ``paper_id``/``versions``) kept out of
    everything the model learns from: no reference file of theirs, under any id or the same
    title, is a labelled paper (papers to evaluate the model on afterwards)."""
    t0 = time.perf_counter()
    data = default_training_data(refs, pool_path, seed=seed, dev_fraction=dev_fraction, pool_years=pool_years,
                                 year=year, works=works, works_min_citing=works_min_citing,
                                 hold_out=paper_keys(list(hold_out)))
    labelled, train, dev = data.labelled, data.train, data.dev
    full_pool, eval_pool = data.full_pool, data.eval_pool
    log(f"pool {len(full_pool)} papers; labelled {len(labelled)} (train {len(train)}, dev {len(dev)})")
    config = config or RecommenderConfig(dense=dense, seed=seed)
    rec = Recommender.build(eval_pool, train, replace(config), cache_dir=cache_dir)
    rec.fit(fit_sample(rec.labelled, fit_queries, seed), negatives=negatives)
    metrics = {"dev": evaluate(rec, _queries(dev), qrels_of(dev)),
               "dev_bm25_baseline": evaluate_bm25(rec, _queries(dev), qrels_of(dev))} if dev else {}
    log(f"dev metrics: {json.dumps(metrics.get('dev', {}))}")
    pool = eval_pool
    if refit and dev:
        pool = full_pool
        rec = Recommender.build(pool, labelled, replace(config), cache_dir=cache_dir)
        rec.fit(fit_sample(rec.labelled, fit_queries, seed), negatives=negatives)
    rec.save(out)
    data = {"pool": str(pool_path), "pool_papers": len(pool), "pool_years": pool_years,
            "works": str(works) if works else None, "pool_works": sum(1 for p in pool if is_work_id(p["paper_id"])),
            "works_min_citing": works_min_citing if works else None,
            "reference_folders": [str(r) for r in refs], "labelled_papers": len(labelled),
            "train_papers": len(train), "dev_papers": len(dev), "dev_fraction": dev_fraction,
            "refit_on_all": bool(refit and dev), "as_of_year": year, "fit_queries": rec.info.get("train_queries"),
            "negatives_kept": negatives,
            "labelled_citations": sum(len(p.cites) for p in labelled),
            "labelled_by_folder": _by_folder(labelled), "held_out_papers": len(hold_out)}
    return write_card(out, rec=rec, data=data, metrics=metrics, seed=seed, seconds=time.perf_counter() - t0)


def _by_folder(labelled: list[LabelledPaper]) -> dict[str, dict[str, Any]]:
    """Per reference folder: the labelled papers it gave, their years, their citations and how
    many of those carry no tier label beyond "cited" (a bibliography without citation contexts)."""
    out: dict[str, dict[str, Any]] = {}
    for p in labelled:
        row = out.setdefault(p.source, {"papers": 0, "citations": 0, "cited_only": 0, "years": {}})
        row["papers"] += 1
        row["citations"] += len(p.cites)
        row["cited_only"] += sum(1 for c in p.cites if c.flags()["must_cite"] is None)
        key = str(p.year) if p.year is not None else "unknown"
        row["years"][key] = row["years"].get(key, 0) + 1
    for row in out.values():
        row["years"] = dict(sorted(row["years"].items()))
    return out


def build_benchmark_model(data: BenchmarkData, config: RecommenderConfig, *, fit_extra: bool = False,
                          cache_dir: str | Path | None = None, fit_queries: int = 0) -> Recommender:
    """Index ``data`` and fit the tier models: on the train queries only unless ``fit_extra`` (the
    --refs papers are neighbours whose citations vote, but they come from an earlier year).
    ``fit_queries``: fit on this many of them (a fixed sample by :func:`fit_sample`; 0: all)."""
    rec = Recommender.build(data.pool, data.labelled, config, cache_dir=cache_dir)
    extra_ids = {p.id for p in data.extra}
    fit_on = rec.labelled if fit_extra else [p for p in rec.labelled if p.id not in extra_ids]
    rec.fit(fit_sample(fit_on, fit_queries, config.seed))
    return rec


def train_benchmark(bench: str | Path, out: str | Path, *, refs: list[str | Path] = (), dense: bool = True,
                    seed: int = 0, eval_test: bool = False, cache_dir: str | Path | None = None,
                    config: RecommenderConfig | None = None, fit_extra: bool = False, fit_queries: int = 0,
                    log=print) -> dict[str, Any]:
    """Train-only model for a built benchmark; metrics on dev (and test when ``eval_test``).
    ``fit_queries``: fit the tier models on this many of the train queries (a fixed sample; 0: all);
    every labelled paper still votes as a neighbour."""
    t0 = time.perf_counter()
    bench = Path(bench)
    data = benchmark_data(bench, refs)
    pool, extra = data.pool, data.extra
    (train_q, _), (dev_q, dev_qrels) = data.splits["train"], data.splits["dev"]
    log(f"pool {len(pool)}; labelled {len(data.labelled)} ({len(train_q)} train queries, {len(extra)} from --refs); "
        f"dev {len(dev_q)}")
    config = config or RecommenderConfig(dense=dense, seed=seed)
    rec = build_benchmark_model(data, config, fit_extra=fit_extra, cache_dir=cache_dir, fit_queries=fit_queries)
    metrics = {"dev": evaluate(rec, dev_q, dev_qrels), "dev_bm25_baseline": evaluate_bm25(rec, dev_q, dev_qrels)}
    if eval_test:
        test_q, test_qrels = data.splits["test"]
        metrics["test"] = evaluate(rec, test_q, test_qrels)
        metrics["test_bm25_baseline"] = evaluate_bm25(rec, test_q, test_qrels)
    log(f"metrics: {json.dumps(metrics)}")
    rec.save(out)
    info = {"benchmark": str(bench), "pool_papers": len(pool), "train_queries": len(train_q),
            "reference_folders": [str(r) for r in refs], "extra_labelled": len(extra),
            "dev_queries": len(dev_q), "fit_queries": rec.info.get("train_queries"),
            "train_only": True, "tier_models_fit_on": "all labelled papers"
            if fit_extra else "train queries"}
    return write_card(out, rec=rec, data=info, metrics=metrics, seed=seed, seconds=time.perf_counter() - t0)


def cross_encoder_pairs(rec: Recommender, papers: list[LabelledPaper], top: int = 20, *, batch: int = 128,
                        ) -> tuple[list[tuple[str, str]], list[float]]:
    """Training pairs for the cross-encoder: each paper of ``papers`` (labelled papers of ``rec``)
    is scored leave-one-out, and its ``top`` best candidates by P(must-cite) and by P(cited) become
    ``(paper text, candidate text)`` pairs with graded targets (:mod:`mustcite.retrieval.cross_encoder`): the
    candidates the cross-encoder will be asked about at serving time."""
    pairs: list[tuple[str, str]] = []
    targets: list[float] = []
    by_id = {p.id: p for p in papers}
    for i in range(0, len(papers), batch):
        chunk = _queries(papers[i:i + batch])
        parsed, cands, _, probs = rec.score(chunk, exclude_self=True)
        start = 0
        for (d, _), cs in zip(parsed, cands):
            sl = slice(start, start + len(cs))
            start += len(cs)
            flags = {c.paper_id: c.flags() for c in by_id[d.id].cites}
            chosen: dict[int, None] = {}
            for tier in ("must_cite", "cited"):
                if tier in probs:
                    chosen |= dict.fromkeys(top_indices(probs[tier][sl], cs, top))
            for j in chosen:
                f = flags.get(cs[j].paper_id)
                pairs.append((d.text, rec.paper_text(cs[j].row)))
                targets.append(0.0 if f is None else 1.0 if f.get("must_cite") else CITED_TARGET)
    return pairs, targets


def fit_cross_encoder(rec: Recommender, papers: list[LabelledPaper], *, queries: int = 600, top: int = 16,
                      epochs: int = 1, seed: int = 0, log=print):
    """A cross-encoder (:class:`~mustcite.retrieval.cross_encoder.CrossEncoderReranker`) trained on the top candidates
    of a fixed sample of ``queries`` of ``papers`` (:func:`fit_sample`, :func:`cross_encoder_pairs`).
    ``rec`` is left as it is; set ``rec.cross`` to use it."""
    sample = fit_sample(papers, queries, seed)
    t0 = time.perf_counter()
    pairs, targets = cross_encoder_pairs(rec, sample, top)
    t_pairs = time.perf_counter() - t0
    log(f"{len(pairs)} pairs from {len(sample)} labelled papers in {t_pairs:.0f} s "
        f"({sum(t > 0 for t in targets)} cited, {sum(t == 1 for t in targets)} must-cite)")
    ce = CrossEncoderReranker.new(seed=seed)
    t0 = time.perf_counter()
    ce.fit(pairs, targets, epochs=epochs, seed=seed)
    ce.info.update({"train_queries": len(sample), "top": top, "pair_seconds": round(t_pairs, 1),
                    "fit_seconds": round(time.perf_counter() - t0, 1)})
    return ce


def benchmark_train_papers(rec: Recommender, bench: str | Path) -> list[LabelledPaper]:
    """The labelled papers of a train-only benchmark model that are its benchmark's train queries."""
    ids = {str(q["id"]) for q in Benchmark.open(bench).queries("train")}
    return [p for p in rec.labelled if p.id in ids]

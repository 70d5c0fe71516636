"""The recommender's settings (:class:`RecommenderConfig`) and the signals an ablation can switch off."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

#: Signals an ablation can switch off, and the reranker features each one owns.
ABLATABLE: dict[str, tuple[str, ...]] = {
    "bm25": ("bm25_score", "bm25_rr"),
    "neighbours": ("vote_score", "vote_must_score", "vote_count", "vote_must_count", "vote_best_sim", "vote_share"),
    "citers": ("citer_max_sim", "citer_top3_sim", "must_citer_max_sim"),
    "cocitation": ("cocite_log", "cocite_norm", "cocite_papers", "seed_rank"),
    "contexts": ("context_best", "context_top3", "context_citers", "context_rr"),
    "names": ("name_support", "name_in_title"),
    "popularity": ("log_cite_count", "log_must_count"),
    "metadata": ("year_gap", "venue_neurips", "venue_icml", "venue_iclr", "title_overlap",
                 "title_terms_matched", "has_abstract", "is_work", "kind_dataset", "kind_software", "kind_book"),
    "tiers": (),   # no learned models: rank by fused rank + votes
}


@dataclass
class RecommenderConfig:
    first_k: int = 200        # hits taken from each first-stage retriever (tuned on dev: 100 -> 200)
    vote_k: int = 300         # voted papers added to the candidates (tuned on dev: 100 -> 300)
    neighbours: int = 20      # labelled neighbours per query
    cocite_seeds: int = 10    # likeliest candidates (fused rank + votes) whose co-cited papers count (dev: 10-40 alike)
    cocite_k: int = 200       # co-cited papers added to the candidates (0.752 -> 0.790 of the cited papers on dev)
    context_k: int = 200      # best citation-context matches added to the candidates (contexts.py)
    popular_k: int = 0        # the most-cited labelled citations always among the candidates (0: off)
    #: cited works (no abstract: BM25 and the dense step rarely find one) voted for by the query's
    #: ``work_neighbours`` nearest labelled papers; the ``work_vote_k`` best not yet candidates join
    #: (0: off). Off by default: on 240 held-out bibliographies, 100 of them made 190 more right-answer
    #: works candidates but none reached the top 100 (docs/experiments/bibliographies.md)
    work_neighbours: int = 100
    work_vote_k: int = 0
    rrf_k: int = 60
    dense: bool = True
    #: the dense encoder: any model spec DenseRetriever takes ("" for the shipped MiniLM in full
    #: precision, "static:minilm", a folder); ``max_tokens`` 0 keeps its default length. Default:
    #: MiniLM as int8 ONNX on the first 64 tokens of title + abstract, 2.5x the speed of 128 tokens
    #: (benchmarks/static_encoder.py), so the 120K-paper corpus is encoded within `make demo`.
    encoder: str = "onnx-int8:minilm"
    max_tokens: int = 64
    #: candidates re-ranked by the model's cross-encoder, when it has one (:mod:`.rescore`;
    #: ``mustcite train-cross-encoder``); 0: never. Each costs one MiniLM pass over the pair.
    cross_top: int = 0
    cross_weight: float = 1.0   # logit(P) + cross_weight * cross-encoder logit
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

"""Graph-based retrieval (KTR-like PPR, inductive heterogeneous GNN) on tiny graphs with known answers.

torch_geometric is imported at the top on purpose: without it these tests fail, never skip
(``make`` installs it: ``pip install 'mustcite[graph]'``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch_geometric  # noqa: F401  (a missing install must fail here)

from mustcite.errors import MustciteError
from mustcite.labels.papers import CitedPaper, LabelledPaper
from mustcite.retrieval.gnn import GNNParams, GNNRetriever, GraphTensors, knn_edges, save_gnn, train_gnn
from mustcite.retrieval.graph import BiblioGraph, GraphConfig, build_graph, text_neighbours
from mustcite.retrieval.ppr import PPRParams, PPRRetriever, save_ppr
from mustcite.retrieval.registry import make_retriever

DIM = 16
TOPICS = ["graph neural message passing", "diffusion image generation", "bandit regret exploration",
          "language model instruction tuning"]
CONFIG = GraphConfig(keyword_min_df=1, keyword_max_df=1.0, keywords_per_paper=3)


def unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def world(seed=0, pool_per_topic=10, citers_per_topic=12, shift=1, late_paper=False):
    """Pool papers in 4 topics (text vector = topic centre + noise); citing papers of topic t cite
    the first 3 pool papers of topic (t + shift) % 4: a planted pattern text alone does not give."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.normal(size=(4, DIM)))
    pool, pvec, authors = [], [], {}
    for t in range(4):
        for i in range(pool_per_topic):
            pid = f"p{t}_{i}"
            pool.append({"paper_id": pid, "title": f"{TOPICS[t]} study {i}", "abstract": f"we study {TOPICS[t]}",
                         "venue": ["NeurIPS", "ICML"][i % 2], "year": 2020 + i % 3})
            pvec.append(centres[t] + 0.3 * rng.normal(size=DIM))
            authors[pid] = [f"Author {t}{i % 3}", f"Author {t}{(i + 1) % 3}"]
    if late_paper:   # a pool paper from after the queries' year
        pool.append({"paper_id": "late", "title": "graph neural message passing from the future",
                     "abstract": "", "venue": "ICLR", "year": 2030})
        pvec.append(centres[0])
    labelled, lvec = [], []
    for t in range(4):
        for i in range(citers_per_topic):
            target = (t + shift) % 4
            cites = [CitedPaper(f"p{target}_{j}", type1=int(j == 0)) for j in range(3)]
            if late_paper and t == 0:
                cites.append(CitedPaper("late"))
            labelled.append(LabelledPaper(f"q{t}_{i}", f"{TOPICS[t]} paper {i}", f"about {TOPICS[t]}", 2024, cites))
            lvec.append(centres[t] + 0.3 * rng.normal(size=DIM))
    return pool, unit(pvec), labelled, unit(lvec), authors, centres


@pytest.fixture(scope="module")
def small():
    pool, pvec, labelled, lvec, authors, centres = world()
    graph = build_graph(pool, labelled, pvec, lvec, authors, CONFIG, progress=False)
    return graph, pool, labelled, centres


def test_graph_nodes_and_edges(small):
    graph, pool, labelled, _ = small
    sizes = graph.sizes()
    assert sizes["nodes"]["pool_papers"] == len(pool) == graph.n_pool
    assert sizes["nodes"]["labelled_only_papers"] == len(labelled)
    assert sizes["edges"]["cites"] == 3 * len(labelled)
    assert sizes["nodes"]["venue"] == 6                      # venue + year
    assert sizes["nodes"]["author"] == 12 and sizes["edges"]["writes"] == 2 * len(pool)
    assert sizes["nodes"]["keyword"] > 0
    cites = graph.edges["cites"]
    assert set(cites[0]) <= set(graph.citing_node.tolist())  # only labelled papers cite
    assert (cites[1] < graph.n_pool).all()                   # and only pool papers are cited


def test_labelled_pool_paper_is_merged():
    pool, pvec, labelled, lvec, authors, _ = world()
    twin = LabelledPaper("stem123", pool[0]["title"], "", pool[0]["year"], [CitedPaper("p1_0")])
    graph = build_graph(pool, labelled + [twin], pvec, np.vstack([lvec, pvec[:1]]), authors, CONFIG, progress=False)
    assert graph.n_papers == len(pool) + len(labelled)
    assert graph.citing_node[-1] == 0                        # the pool node cites p1_0
    assert [0, graph.node_of()["p1_0"]] in graph.edges["cites"].T.tolist()


def test_ppr_mass_goes_to_the_seed_neighbours_citations(small, tmp_path):
    graph, *_ = small
    save_ppr(graph, PPRParams(alpha=0.3, seeds=1, pool_weight=0.0), tmp_path / "ppr")
    r = PPRRetriever(tmp_path / "ppr")
    seed = graph.citing_node[0]                              # q0_0 cites p1_0..p1_2
    got = r.search_vectors(["new"], graph.vectors[[seed]], [2024], k=3)["new"]
    assert {pid for pid, _ in got} == {"p1_0", "p1_1", "p1_2"}
    assert all(s > 0 for _, s in got)


def test_query_never_gets_an_edge(small, tmp_path):
    graph, *_ = small
    save_ppr(graph, PPRParams(), tmp_path / "ppr")
    r = PPRRetriever(tmp_path / "ppr")
    before = {t: e.copy() for t, e in r.graph.edges.items()}
    n = r.graph.n_papers
    r.search_vectors(["a", "b"], r.graph.vectors[:2], [2024, 2024], k=5)
    assert r.graph.n_papers == n and "a" not in r.graph.paper_ids
    assert all(np.array_equal(before[t], r.graph.edges[t]) for t in before)
    tensors = GraphTensors(graph, knn_edges(graph, 3))
    sim = tensors.similar.copy()
    params = GNNParams(hidden=8, layers=1, similar_k=3, epochs=1, batch=8, negatives=8)
    model, _ = train_gnn(graph, tensors, params, progress=False)
    g = GNNRetriever(None, model=model, graph=graph, tensors=tensors, params=params)
    g.search_vectors(["a"], ["graph neural"], graph.vectors[:1], [2024], k=5)
    assert np.array_equal(sim, tensors.similar) and graph.n_papers == n
    assert all(np.array_equal(before[t], graph.edges[t]) for t in before)
    # a query's features come from its text neighbours and keywords only: no citation metapath
    f = tensors.query_features(2024, graph.vectors[:1], [[0]], [np.zeros(0, np.int64)])
    assert f.shape[1] == 4 and float(f[0, 2].abs().sum()) == 0.0     # x, S, K (none), SR


def test_time_order_later_papers_are_never_scored_or_seeds(tmp_path):
    pool, pvec, labelled, lvec, authors, centres = world(late_paper=True)
    graph = build_graph(pool, labelled, pvec, lvec, authors, CONFIG, progress=False)
    save_ppr(graph, PPRParams(seeds=5, pool_weight=0.0), tmp_path / "ppr")
    r = PPRRetriever(tmp_path / "ppr")
    q = centres[[0]]
    early = r.search_vectors(["q"], q, [2023], k=len(pool))["q"]
    assert "late" not in {pid for pid, _ in early}
    assert all(graph.years[graph.node_of()[pid]] <= 2023 for pid, _ in early)
    # 2024 labelled papers are no seeds of a 2023 query: no walk mass at all (only the cosine tie-break)
    assert max(s for _, s in early) < 1e-6
    late = r.search_vectors(["q"], q, [2030], k=len(pool))["q"]
    assert "late" in {pid for pid, _ in late}
    hits = text_neighbours(graph, q, [2023], 5, nodes=graph.citing_node)
    assert hits == [[]]


def test_gnn_learns_the_planted_pattern_and_respects_time(tmp_path):
    pool, pvec, labelled, lvec, authors, centres = world(seed=1, late_paper=True)
    graph = build_graph(pool, labelled, pvec, lvec, authors, CONFIG, progress=False)
    params = GNNParams(hidden=32, layers=2, similar_k=4, epochs=30, batch=16, lr=1e-2, seed=0)
    tensors = GraphTensors(graph, knn_edges(graph, params.similar_k))
    model, result = train_gnn(graph, tensors, params, progress=False)
    assert result.loss_per_epoch[-1] < result.loss_per_epoch[0]
    r = GNNRetriever(None, model=model, graph=graph, tensors=tensors, params=params)
    rng = np.random.default_rng(7)
    qvecs = unit(centres + 0.3 * rng.normal(size=centres.shape))   # new papers, one per topic
    got = r.search_vectors([f"n{t}" for t in range(4)], [TOPICS[t] for t in range(4)], qvecs, [2024] * 4, k=3)
    hits = sum(pid.startswith(f"p{(t + 1) % 4}_") and int(pid.split("_")[1]) < 3
               for t in range(4) for pid, _ in got[f"n{t}"])
    assert hits >= 6          # chance: 12 targets among 41 pool papers -> ~0.9 of 12 slots
    early = r.search_vectors(["e"], [TOPICS[0]], qvecs[:1], [2023], k=len(pool))["e"]
    assert "late" not in {pid for pid, _ in early}
    save_gnn(model, graph, tensors, params, tmp_path / "gnn")
    loaded = make_retriever(f"gnn:{tmp_path / 'gnn'}")
    again = loaded.search_vectors(["n0"], [TOPICS[0]], qvecs[:1], [2024], k=3)
    assert [p for p, _ in again["n0"]] == [p for p, _ in got["n0"]]


def test_make_retriever_loads_graph_models(small, tmp_path):
    graph, pool, *_ = small
    save_ppr(graph, PPRParams(alpha=0.2), tmp_path / "ppr")
    for spec in (f"ppr:{tmp_path / 'ppr'}", str(tmp_path / "ppr")):
        r = make_retriever(spec)
        assert isinstance(r, PPRRetriever) and r.params.alpha == 0.2
    r.index(pool[:5])
    assert len(r.candidates) == 5
    with pytest.raises(MustciteError):
        r.index([{"paper_id": "unknown", "title": "x"}])
    with pytest.raises(MustciteError):
        make_retriever(f"gnn:{tmp_path / 'ppr'}")            # a PPR folder is no GNN model
    with pytest.raises(MustciteError):
        make_retriever(f"ppr:{tmp_path / 'nothing'}")


def test_graph_save_load_roundtrip(small, tmp_path):
    graph, *_ = small
    graph.save(tmp_path / "g")
    back = BiblioGraph.load(tmp_path / "g")
    assert back.paper_ids == graph.paper_ids and back.keywords == graph.keywords
    assert all(np.array_equal(back.edges[t], graph.edges[t]) for t in graph.edges)
    assert back.query_keywords([TOPICS[0]])[0].tolist() == graph.query_keywords([TOPICS[0]])[0].tolist()


def _write_benchmark(root, pool, labelled_by_split):
    """A minimal benchmark folder: pool, queries and qrels per split, manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root.mkdir()
    pq.write_table(pa.Table.from_pylist(pool), root / "pool.parquet")
    (root / "queries").mkdir()
    (root / "qrels").mkdir()
    for split, papers in labelled_by_split.items():
        with open(root / "queries" / f"{split}.jsonl", "w") as fh:
            for p in papers:
                fh.write(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year}) + "\n")
        for gt in ("cited", "mustcite", "type1", "type2", "type3"):
            with open(root / "qrels" / f"{split}.{gt}.qrels", "w") as fh:
                for p in papers:
                    for c in p.cites:
                        fh.write(f"{p.id} 0 {c.paper_id} 1\n")
    (root / "manifest.json").write_text(json.dumps({"splits": {"names": list(labelled_by_split)}}))


class FakeEncoder:
    def embed(self, texts, desc=""):
        rng = [np.random.default_rng(abs(hash(t)) % 2**32) for t in texts]
        return unit([r.normal(size=DIM) for r in rng])


def test_held_out_queries_never_enter_the_graph(tmp_path, monkeypatch):
    from mustcite.benchmark import retrieval_training as graph_mod

    pool, _, labelled, *_ = world()
    splits = {"train": labelled[:30], "dev": labelled[30:40], "test": labelled[40:]}
    _write_benchmark(tmp_path / "bench", pool, splits)
    corpus = tmp_path / "papers.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"paper_id": p["paper_id"], "authors": ["A B"]} for p in pool]), corpus)
    monkeypatch.setattr(graph_mod, "encoder_for", lambda config, cache_dir=None: FakeEncoder())
    graph, data = graph_mod.graph_from_benchmark(tmp_path / "bench", corpus=corpus, config=CONFIG)
    held = {p.id for p in splits["dev"] + splits["test"]}
    assert not held & set(graph.paper_ids) and not held & set(graph.citing)
    assert set(graph.citing) == {p.id for p in splits["train"]}
    assert graph.edges["cites"].shape[1] == 3 * 30
    # the dev/test labels do not change the graph
    for split in ("dev", "test"):
        for f in (tmp_path / "bench" / "qrels").glob(f"{split}.*.qrels"):
            f.write_text(f.read_text() + "".join(f"{p.id} 0 p3_9 1\n" for p in splits[split]))
    again, _ = graph_mod.graph_from_benchmark(tmp_path / "bench", corpus=corpus, config=CONFIG)
    assert all(np.array_equal(again.edges[t], graph.edges[t]) for t in graph.edges)

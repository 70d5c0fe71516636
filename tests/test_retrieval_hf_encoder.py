"""Local Hugging Face encoder folders with their pooling (SciBERT/SPECTER/SciNCL/SPECTER2-style), the
SPECTER2 bottleneck adapter, and ready-made ONNX encoder folders (inCite's MiniLM), all on tiny
models built here (nothing is downloaded)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from mustcite.errors import MustciteError, UsageError  # noqa: E402
from mustcite.retrieval.base import Doc  # noqa: E402
from mustcite.retrieval.hf_encoder import HFRetriever, detect_pooling, hf_retriever_for, parse_hf_method  # noqa: E402
from mustcite.retrieval.registry import make_retriever  # noqa: E402

WORDS = ("graph neural network attention transformer diffusion model image text citation retrieval "
         "language vision reinforcement learning policy reward robot protein molecule kernel bayesian "
         "optimization convex gradient descent sparse matrix").split()
POOL = [Doc("p1", "Graph neural networks", "attention over graph nodes for molecule property prediction"),
        Doc("p2", "Diffusion models for images", "image generation with a diffusion model and text guidance"),
        Doc("p3", "Reinforcement learning for robots", "policy gradient with a reward model on a robot"),
        Doc("p4", "Sparse convex optimization", "gradient descent on a sparse matrix with a convex kernel")]


def _tiny_bert(folder, name_or_path: str | None = None, seed: int = 0):
    """A 2-layer BERT with hidden size 32 and a small vocabulary (every word of POOL), saved to ``folder``."""
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    words = sorted(set(WORDS) | {w for d in POOL for w in f"{d.title} {d.abstract}".lower().split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + words
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    try:
        tok = BertTokenizer(vocab=str(folder / "vocab.txt"), do_lower_case=True)       # transformers 5
    except TypeError:
        tok = BertTokenizer(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)  # transformers 4
    assert tok.tokenize("graph neural") == ["graph", "neural"]
    tok.save_pretrained(str(folder))
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    model = BertModel(cfg).eval()
    model.save_pretrained(str(folder))
    if name_or_path:
        c = json.loads((folder / "config.json").read_text())
        c["_name_or_path"] = name_or_path
        (folder / "config.json").write_text(json.dumps(c))
    return folder


def _by_hand(folder, texts, pooling, max_length=256):
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()
    out = []
    for t in texts:                       # one at a time: no padding at all
        enc = tok([t], truncation=True, max_length=max_length, return_tensors="pt")
        with torch.no_grad():
            h = model(**enc).last_hidden_state[0]
        v = h[0] if pooling == "cls" else h.mean(0)
        out.append((v / v.norm()).numpy())
    return np.stack(out)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_pooling_matches_transformers_by_hand(tiny, tmp_path, pooling):
    r = make_retriever(f"hf-{pooling}:{tiny}", cache_dir=tmp_path)
    texts = [d.text for d in POOL] + ["graph"]
    got = r.encode(texts)                 # batched, padded, length-sorted
    want = _by_hand(tiny, texts, pooling)
    assert got.shape == (5, 32) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)
    # the --pooling option does the same as the spec prefix
    r2 = make_retriever(str(tiny), pooling=pooling, cache_dir=tmp_path)
    np.testing.assert_allclose(r2.encode(texts), want, atol=1e-5)
    assert r2.spec.pooling == pooling and r.key == r2.key


def test_cls_and_mean_differ_and_key_differs(tiny, tmp_path):
    a = make_retriever(f"hf-cls:{tiny}", cache_dir=tmp_path)
    b = make_retriever(f"hf-mean:{tiny}", cache_dir=tmp_path)
    assert a.key != b.key
    assert not np.allclose(a.encode(["graph neural network"]), b.encode(["graph neural network"]))


def test_retriever_ranks_and_caches(tiny, tmp_path):
    r = make_retriever(str(tiny), cache_dir=tmp_path)
    assert isinstance(r, HFRetriever) and r.spec.pooling == "mean"      # unrecognised model: mean
    r.index(POOL)
    res = r.search([{"id": f"q{d.id}", "title": d.title, "abstract": d.abstract} for d in POOL], k=4)
    for d in POOL:
        hits = res[f"q{d.id}"]
        assert hits[0][0] == d.id and hits[0][1] == pytest.approx(1.0, abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    # exact scores are the cosine of hand-computed vectors
    v = _by_hand(tiny, [d.text for d in POOL], "mean")
    assert res["qp1"][1][1] == pytest.approx(float(np.sort(v[1:] @ v[0])[-1]), abs=1e-5)
    # a second retriever reads every vector from the cache: no model load
    r2 = make_retriever(str(tiny), cache_dir=tmp_path)
    r2.index(POOL)
    assert r2.cache.encoded_last == 0 and r2._encoder is None
    meta = r2.metadata()
    assert meta["pooling"] == "mean" and meta["encoder"] == "hf" and meta["docs"] == 4
    r2.save(tmp_path / "saved")
    r3 = HFRetriever.load(tmp_path / "saved", cache_dir=tmp_path)
    assert r3.search([{"id": "q", "title": POOL[2].title, "abstract": POOL[2].abstract}], k=1)["q"][0][0] == "p3"


@pytest.mark.parametrize("name,pooling,fmt", [("allenai/specter", "cls", "sep"), ("malteos/scincl", "cls", "sep"),
                                              ("allenai/scibert_scivocab_uncased", "mean", "plain"),
                                              ("allenai/specter2_base", "cls", "sep"),
                                              ("bert-base-uncased", "mean", "plain")])
def test_pooling_is_detected_from_the_config(tmp_path, name, pooling, fmt):
    folder = _tiny_bert(tmp_path / "m", name_or_path=name)
    p, f, reason = detect_pooling(folder)
    assert (p, f) == (pooling, fmt), reason
    spec = parse_hf_method(str(folder))
    assert spec.pooling == pooling and spec.text_format == fmt
    assert parse_hf_method(str(folder), pooling="mean").pooling == "mean"      # forced


def test_pooling_from_the_folder_name(tmp_path):
    folder = _tiny_bert(tmp_path / "scincl")
    assert detect_pooling(folder)[0] == "cls"


def test_specter_style_text_uses_sep(tmp_path):
    folder = _tiny_bert(tmp_path / "m", name_or_path="allenai/specter")
    r = make_retriever(str(folder), cache_dir=tmp_path)
    assert r.text(POOL[0]) == "Graph neural networks[SEP]attention over graph nodes for molecule property prediction"
    assert r.text(Doc("x", "Only a title")) == "Only a title"


def test_sentence_transformers_folder_keeps_dense_pipeline_unless_forced(tiny, tmp_path):
    from mustcite.retrieval.dense import DenseRetriever

    st = tmp_path / "st"
    import shutil

    shutil.copytree(tiny, st)
    (st / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (st / "1_Pooling").mkdir()
    (st / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32,
                                                              "pooling_mode_cls_token": True,
                                                              "pooling_mode_mean_tokens": False}))
    assert parse_hf_method(str(st)) is None
    assert isinstance(make_retriever(str(st), cache_dir=tmp_path), DenseRetriever)
    assert detect_pooling(st)[0] == "cls"                                  # its Pooling config
    forced = make_retriever(str(st), pooling="mean", cache_dir=tmp_path)
    assert isinstance(forced, HFRetriever) and forced.spec.pooling == "mean"
    assert make_retriever(f"hf:{st}", cache_dir=tmp_path).spec.pooling == "cls"


# ------------------------------------------------------------------------------ SPECTER2 adapter

PFEIFFER = {"original_ln_before": True, "original_ln_after": True, "residual_before_ln": True,
            "adapter_residual_before_ln": False, "ln_before": False, "ln_after": False, "mh_adapter": False,
            "output_adapter": True, "non_linearity": "relu", "reduction_factor": 16, "scaling": 1.0,
            "phm_layer": False, "use_gating": False, "architecture": "bottleneck"}


def _adapter(folder, hidden=32, layers=2, zero_up=False, seed=1, config=PFEIFFER, name="[PRX]"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adapter_config.json").write_text(json.dumps({
        "config": config, "hidden_size": hidden, "model_class": "BertAdapterModel",
        "model_name": "allenai/specter2_base", "model_type": "bert", "name": name, "version": "0.1.1"}))
    g = torch.Generator().manual_seed(seed)
    down = hidden // config["reduction_factor"]
    w = {}
    locs = (["output"] if config["output_adapter"] else []) + (["attention.output"] if config["mh_adapter"] else [])
    for i in range(layers):
        for loc in locs:
            k = f"bert.encoder.layer.{i}.{loc}.adapters.{name}"
            w[f"{k}.adapter_down.0.weight"] = torch.randn(down, hidden, generator=g)
            w[f"{k}.adapter_down.0.bias"] = torch.randn(down, generator=g)
            w[f"{k}.adapter_up.weight"] = (torch.zeros(hidden, down) if zero_up
                                           else torch.randn(hidden, down, generator=g))
            w[f"{k}.adapter_up.bias"] = torch.zeros(hidden) if zero_up else torch.randn(hidden, generator=g)
    torch.save(w, folder / "pytorch_adapter.bin")
    return folder, w


def _adapter_by_hand(base, weights, text, name="[PRX]"):
    """SPECTER2's forward written out layer by layer (adapters' Pfeiffer block after each FFN)."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(base))
    model = AutoModel.from_pretrained(str(base)).eval()
    enc = tok([text], return_tensors="pt")
    with torch.no_grad():
        x = model.embeddings(input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"])
        for i, layer in enumerate(model.encoder.layer):
            att = layer.attention(x)[0]
            h = layer.output.dropout(layer.output.dense(layer.intermediate(att)))
            k = f"bert.encoder.layer.{i}.output.adapters.{name}"
            a = layer.output.LayerNorm(h + att)
            up = torch.relu(a @ weights[f"{k}.adapter_down.0.weight"].T + weights[f"{k}.adapter_down.0.bias"]) \
                @ weights[f"{k}.adapter_up.weight"].T + weights[f"{k}.adapter_up.bias"]
            x = layer.output.LayerNorm(up + h + att)
        v = x[0, 0]
    return (v / v.norm()).numpy()


def test_specter2_adapter_matches_the_formula_by_hand(tmp_path):
    base = _tiny_bert(tmp_path / "specter2_base", name_or_path="allenai/specter2_base")
    adapter, w = _adapter(tmp_path / "specter2")
    r = make_retriever(f"{base}+{adapter}", cache_dir=tmp_path)
    assert isinstance(r, HFRetriever) and r.spec.pooling == "cls" and r.spec.adapter == str(adapter)
    text = "graph neural network attention"
    got = r.encode([text, "diffusion model"])[0]
    np.testing.assert_allclose(got, _adapter_by_hand(base, w, text), atol=1e-5)
    # the adapter changes the vectors; the base alone gives different ones
    plain = make_retriever(f"hf-cls:{base}", cache_dir=tmp_path).encode([text])[0]
    assert not np.allclose(got, plain, atol=1e-3)
    assert r.key != make_retriever(f"hf-cls:{base}", cache_dir=tmp_path).key
    meta = r.metadata()
    assert meta["adapter"]["name"] == "[PRX]" and meta["adapter"]["layers"] == 2


def test_zero_adapter_is_the_identity(tmp_path):
    base = _tiny_bert(tmp_path / "specter2_base")
    adapter, _ = _adapter(tmp_path / "zero", zero_up=True)
    texts = [d.text for d in POOL]
    with_adapter = make_retriever(f"{base}+{adapter}", cache_dir=tmp_path).encode(texts)
    np.testing.assert_allclose(with_adapter, _by_hand(base, texts, "cls"), atol=1e-5)


def test_houlsby_adapter_runs_after_attention_too(tmp_path):
    base = _tiny_bert(tmp_path / "base")
    cfg = {**PFEIFFER, "original_ln_before": False, "mh_adapter": True, "non_linearity": "swish"}
    adapter, _ = _adapter(tmp_path / "houlsby", config=cfg, name="hb")
    r = make_retriever(f"{base}+{adapter}", cache_dir=tmp_path)
    v = r.encode(["graph"])
    assert np.isfinite(v).all() and r.metadata()["adapter"]["locations"] == ["attention.output", "output"]
    # a zero up-projection is again the identity
    zero, _ = _adapter(tmp_path / "houlsby0", config=cfg, name="hb", zero_up=True)
    np.testing.assert_allclose(make_retriever(f"{base}+{zero}", cache_dir=tmp_path).encode(["graph"]),
                               _by_hand(base, ["graph"], "cls"), atol=1e-5)


def test_adapter_errors_are_clear(tmp_path):
    base = _tiny_bert(tmp_path / "base")
    adapter, _ = _adapter(tmp_path / "specter2")
    with pytest.raises(MustciteError, match="adapter, not a model"):
        make_retriever(str(adapter), cache_dir=tmp_path)
    with pytest.raises(MustciteError, match="not an adapter folder"):
        make_retriever(f"{base}+{base}", cache_dir=tmp_path)
    phm, _ = _adapter(tmp_path / "phm", config={**PFEIFFER, "phm_layer": True})
    with pytest.raises(MustciteError, match="phm_layer"):
        make_retriever(f"{base}+{phm}", cache_dir=tmp_path).encode(["x"])
    big, _ = _adapter(tmp_path / "big", hidden=64)
    with pytest.raises(MustciteError, match="hidden size"):
        make_retriever(f"{base}+{big}", cache_dir=tmp_path).encode(["x"])


def test_not_a_model_folder_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(MustciteError, match="not a model folder"):
        make_retriever(str(empty), cache_dir=tmp_path)
    with pytest.raises(MustciteError, match="not a Hugging Face model folder"):
        make_retriever(f"hf-cls:{empty}", cache_dir=tmp_path)
    with pytest.raises(MustciteError, match="not found"):
        make_retriever(f"hf:{tmp_path / 'missing'}", cache_dir=tmp_path)
    with pytest.raises(UsageError):
        make_retriever(str(empty), pooling="max", cache_dir=tmp_path)
    assert hf_retriever_for("bm25") is None


def test_cli_pooling_option(tiny, tmp_path, monkeypatch, capsys):
    from mustcite.cli.main import main

    monkeypatch.setenv("MUSTCITE_WORK", str(tmp_path / "work"))
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"paper_id": d.id, "title": d.title, "abstract": d.abstract}) + "\n"
                            for d in POOL))
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "title": POOL[1].title, "abstract": POOL[1].abstract}) + "\n")
    args = ["retrieve", "--queries", str(queries), "--pool", str(pool), "--method", str(tiny), "--top", "2"]
    assert main(args + ["--pooling", "cls", "--format", "json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["results"][0]["paper_id"] == "p2" and line["method"]["pooling"] == "cls"
    assert main(args + ["--pooling", "max"]) != 0                     # a usage error, not a traceback
    assert "pooling" in capsys.readouterr().err


# ------------------------------------------------------------------------------ ONNX encoder folders

def _onnx_folder(tiny, dest):
    """The tiny BERT exported to ``dest/model.onnx`` with its tokenizer.json (like inCite's folder)."""
    import shutil

    from transformers import AutoModel, AutoTokenizer

    dest.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(tiny))
    tok.save_pretrained(str(dest))
    shutil.copy(tiny / "config.json", dest / "config.json")
    model = AutoModel.from_pretrained(str(tiny)).eval()

    class Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    enc = tok(["graph neural", "a diffusion model for images"], padding=True, return_tensors="pt")
    torch.onnx.export(Hidden(model), tuple(enc[k] for k in names), str(dest / "model.onnx"), input_names=names,
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={k: {0: "b", 1: "s"} for k in names + ["last_hidden_state"]})
    return dest


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_onnx_folder_spec_matches_torch(tiny, tmp_path, pooling):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from mustcite.retrieval.dense import DenseRetriever

    folder = _onnx_folder(tiny, tmp_path / "tiny-onnx")
    r = make_retriever(f"onnx:{folder}", max_seq_length=512, pooling=pooling, cache_dir=tmp_path)
    assert isinstance(r, DenseRetriever) and r.onnx and r.onnx_file == "model.onnx"
    texts = [d.text for d in POOL]
    np.testing.assert_allclose(r.encode(texts), _by_hand(tiny, texts, pooling), atol=1e-4)
    r.index(POOL)
    hits = r.search([{"id": "q", "title": POOL[3].title, "abstract": POOL[3].abstract}], k=4)["q"]
    assert hits[0][0] == "p4"
    meta = r.metadata()
    assert meta["encoder"] == "onnx" and meta["pooling"] == pooling and meta["spec"] == f"onnx:{folder}"
    # the bare folder is recognised too, with the same cache key; the key covers pooling and length
    bare = make_retriever(str(folder), max_seq_length=512, pooling=pooling, cache_dir=tmp_path)
    assert bare.key == r.key and bare.cache.encoded_last == 0
    assert make_retriever(f"onnx:{folder}", max_seq_length=256, pooling=pooling, cache_dir=tmp_path).key != r.key
    # save and load keep the spec and the pooling
    r.save(tmp_path / "saved")
    again = DenseRetriever.load(tmp_path / "saved", cache_dir=tmp_path)
    assert again.key == r.key and again.pooling == pooling


def test_onnx_encodes_on_a_local_worker_pool_like_in_process(tiny, tmp_path, monkeypatch):
    """Many texts to encode go to one single-threaded ONNX encoder per CPU; the vectors and the
    cache's shards are those of the in-process encoder, and cached texts are not sent again."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from mustcite.engine import LocalEngine
    from mustcite.retrieval import dense

    folder = _onnx_folder(tiny, tmp_path / "tiny-onnx")
    texts = [f"{d.text} {i}" * (1 + i % 5) for i, d in enumerate(POOL * 30)]
    inproc = make_retriever(f"onnx:{folder}", max_seq_length=64, cache_dir=tmp_path / "a")
    want = inproc.embed(texts)
    monkeypatch.setattr(dense, "LOCAL_POOL_MIN_TEXTS", 50)
    pooled = make_retriever(f"onnx:{folder}", max_seq_length=64, batch_size=8, cache_dir=tmp_path / "b")
    pooled.engine = LocalEngine(workers=2)
    calls, local_map = [], LocalEngine.map

    def recorded(self, fn, items, **kw):
        calls.append((fn.threads, len(items), self.workers()))
        return local_map(self, fn, items, **kw)

    monkeypatch.setattr(LocalEngine, "map", recorded)
    got = pooled.embed(texts)
    assert calls and all(c[0] == 1 and c[2] == 2 for c in calls)       # single-threaded encoders, 2 workers
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert pooled.cache.encoded_last == len(set(texts))
    assert sorted(p.name for p in (tmp_path / "b" / "emb").rglob("*.npy")) == \
        sorted(p.name for p in (tmp_path / "a" / "emb").rglob("*.npy"))
    assert pooled.embed(texts).tobytes() == got.tobytes() and pooled.cache.encoded_last == 0


def test_onnx_folder_errors(tmp_path):
    with pytest.raises(MustciteError, match="make incite-model"):
        make_retriever(f"onnx:{tmp_path / 'incite-minilm-onnx'}", cache_dir=tmp_path)
    d = tmp_path / "half"
    d.mkdir()
    (d / "config.json").write_text("{}")
    with pytest.raises(MustciteError, match="not an ONNX encoder folder"):
        make_retriever(f"onnx:{d}", cache_dir=tmp_path)


def test_pooling_read_from_both_sentence_transformers_layouts():
    from mustcite.retrieval.hf_encoder import st_pooling_mode

    assert st_pooling_mode({"embedding_dimension": 384, "pooling_mode": "mean", "include_prompt": True}) == "mean"
    assert st_pooling_mode({"pooling_mode": "cls"}) == "cls"
    assert st_pooling_mode({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}) == "cls"
    assert st_pooling_mode({"pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}) == "mean"
    assert st_pooling_mode({"pooling_mode_max_tokens": True}) == "max"

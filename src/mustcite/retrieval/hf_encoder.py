"""Dense retrieval with a local Hugging Face encoder folder and the pooling it was trained with:
the scientific encoders of MasterSet's baselines (SciBERT, SPECTER, SPECTER2, SciNCL) or any other
BERT-style folder, loaded from disk only (``local_files_only``; nothing is downloaded).

Method specs (``mustcite retrieve --method ...``, ``mustcite benchmark run --method ...``):

* ``FOLDER``: a Hugging Face model folder (``config.json`` + weights, no ``modules.json``); the
  pooling is chosen from the folder (below);
* ``hf:FOLDER``, ``hf-cls:FOLDER``, ``hf-mean:FOLDER``: the same, with the pooling automatic or forced
  (``--pooling cls|mean`` forces it too, and also applies to a sentence-transformers folder, which
  otherwise keeps its own pipeline in :mod:`mustcite.retrieval.dense`);
* ``BASE+ADAPTER``: SPECTER2, i.e. the base model folder (``allenai/specter2_base``) plus an
  adapters-library bottleneck adapter folder (``adapter_config.json`` + ``pytorch_adapter.bin`` or
  ``adapter.safetensors``; the proximity adapter ``allenai/specter2`` for retrieval).

Pooling, when not forced: SPECTER, SPECTER2 and SciNCL take the [CLS] vector (as their model cards
do); SciBERT and any other folder are mean-pooled over the attention mask (sentence-transformers'
default for a plain model). The model is recognised by ``_name_or_path`` in ``config.json``, then the
folder's name. SPECTER-family models read ``title [SEP] abstract`` (their training format); others
read mustcite's ``title. abstract``. Vectors are L2-normalised and cached in the embedding cache
under a key over the base folder's content, the adapter's, the pooling, the text format and the
max length.

The adapter is applied here, not through the ``adapters`` package: adapters 1.3 pins
``transformers~=4.57`` and would downgrade the installed transformers 5. The bottleneck block
(:class:`BottleneckAdapter`) reproduces adapters' ``Adapter.pre_forward/forward/post_forward`` for
sequential bottleneck configs (Pfeiffer/``seq_bn``, which SPECTER2 uses, and Houlsby/``double_seq_bn``)
on BERT-style layers; PHM/Compacter, gating, adapter layer norms and fusion are refused with a clear
message.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..errors import MustciteError, UsageError
from ..io import read_json
from .base import Results, as_docs
from .embeddings import EmbeddingCache, model_key, model_name
from .index_meta import read_meta
from .vectors import ANN, build_faiss_index, default_cache_root, load_index, save_index

HF_PREFIXES = {"hf:": None, "hf-cls:": "cls", "hf-mean:": "mean"}
POOLINGS = ("cls", "mean")
_TORCH_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                  "pytorch_model.bin.index.json")
_ADAPTER_WEIGHTS = ("adapter.safetensors", "pytorch_adapter.bin")
#: model name fragments -> (pooling, text format); first match wins (specter2 before specter)
_KNOWN = (("specter2", "cls", "sep"), ("specter", "cls", "sep"), ("scincl", "cls", "sep"),
          ("scibert", "mean", "plain"))


@dataclass(frozen=True)
class HFSpec:
    """What to load: base folder, optional adapter folder, the pooling and why, the text format."""

    base: str
    adapter: str | None
    pooling: str
    reason: str
    text_format: str = "plain"       # plain: "title. abstract"; sep: "title [SEP] abstract"


# ------------------------------------------------------------------------------ folder detection

def _json_object(path: Path) -> dict[str, Any]:
    """A JSON object file of a model folder; {} when the file is missing or holds no object (a
    malformed or unreadable one raises MustciteError naming it)."""
    data = read_json(path, missing_ok=True)
    return data if isinstance(data, dict) else {}


def is_hf_model_folder(path: str | Path) -> bool:
    p = Path(path)
    return (p / "config.json").is_file() and any((p / w).is_file() for w in _TORCH_WEIGHTS)


def is_adapter_folder(path: str | Path) -> bool:
    p = Path(path)
    return (p / "adapter_config.json").is_file() and any((p / w).is_file() for w in _ADAPTER_WEIGHTS)


def _known(folder: Path) -> tuple[str, str, str] | None:
    """(pooling, text format, matched name) for a recognised scientific encoder, else None."""
    cfg = _json_object(folder / "config.json")
    names = [str(cfg.get("_name_or_path") or ""), folder.resolve().name, folder.resolve().parent.name]
    for name in names:
        low = name.lower()
        for frag, pooling, fmt in _KNOWN:
            if frag in low:
                return pooling, fmt, name
    return None


def st_pooling_mode(config: dict[str, Any]) -> str:
    """The pooling a sentence-transformers ``1_Pooling/config.json`` names, in either layout:
    ``{"pooling_mode": "mean"}`` (sentence-transformers 6) or ``{"pooling_mode_mean_tokens": true}``."""
    if isinstance(config.get("pooling_mode"), str):
        return config["pooling_mode"]
    for mode in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens",
                 "lasttoken"):
        if config.get(f"pooling_mode_{mode}"):
            return {"cls_token": "cls", "mean_tokens": "mean", "max_tokens": "max"}.get(mode, mode)
    return "mean"


def detect_pooling(base: str | Path, adapter: str | Path | None = None) -> tuple[str, str, str]:
    """``(pooling, text format, reason)`` chosen from the folder(s) alone."""
    base = Path(base)
    if adapter is not None:
        acfg = _json_object(Path(adapter) / "adapter_config.json")
        name = str(acfg.get("model_name") or "")
        return "cls", "sep", f"adapter folder (base {name or 'unknown'}): SPECTER2 uses the [CLS] vector"
    st_pool = _json_object(base / "1_Pooling" / "config.json")
    if (base / "modules.json").is_file() and st_pool:
        mode = "cls" if st_pooling_mode(st_pool) == "cls" else "mean"
        return mode, "plain", f"sentence-transformers folder: 1_Pooling says {mode}"
    known = _known(base)
    if known:
        return known[0], known[1], f"recognised {known[2]!r}: {known[0]} pooling"
    if (base / "modules.json").is_file():
        return "mean", "plain", "sentence-transformers folder (modules.json): mean pooling"
    arch = ",".join(_json_object(base / "config.json").get("architectures") or []) or "unknown architecture"
    return "mean", "plain", f"unrecognised model ({arch}): mean pooling (sentence-transformers' default)"


def _split_spec(rest: str) -> tuple[Path, Path | None] | None:
    """``FOLDER`` or ``BASE+ADAPTER`` (a '+' inside a real folder name is kept)."""
    path = Path(rest).expanduser()
    if path.is_dir():
        return path, None
    for i in [m.start() for m in re.finditer(r"\+", rest)]:
        base, adapter = Path(rest[:i]).expanduser(), Path(rest[i + 1:]).expanduser()
        if base.is_dir() and adapter.is_dir():
            return base, adapter
    return None


def parse_hf_method(method: str, pooling: str | None = None) -> HFSpec | None:
    """The :class:`HFSpec` a method string names, or None when it is not for this module (a
    sentence-transformers, ONNX, static or unknown name is left to :func:`make_retriever`)."""
    if pooling not in (None, *POOLINGS):
        raise UsageError(f"unknown pooling {pooling!r}", hint="use cls or mean")
    prefix = next((p for p in HF_PREFIXES if method.startswith(p)), None)
    rest = method[len(prefix):].strip() if prefix else method
    if prefix and HF_PREFIXES[prefix]:
        if pooling and pooling != HF_PREFIXES[prefix]:
            raise UsageError(f"--pooling {pooling} contradicts {prefix}")
        pooling = HF_PREFIXES[prefix]
    split = _split_spec(rest) if rest else None
    if split is None:
        if prefix or ("+" in method and not Path(method).exists()):
            why = " (BASE+ADAPTER: both must be folders)" if "+" in rest else ""
            raise MustciteError("model folder not found" + why,
                                path=rest or method,
                                hint="give a local Hugging Face model folder; nothing is downloaded")
        return None
    base, adapter = split
    if is_adapter_folder(base) and adapter is None:
        name = _json_object(base / "adapter_config.json").get("model_name") or "its base model"
        raise MustciteError("this folder is an adapter, not a model", path=str(base),
                            hint=f"pass the base model and the adapter as BASE+ADAPTER (base: {name}), e.g. "
                                 "--method /path/to/specter2_base+/path/to/specter2")
    if adapter is not None and not is_adapter_folder(adapter):
        raise MustciteError("not an adapter folder: it needs adapter_config.json and pytorch_adapter.bin "
                            "(or adapter.safetensors)", path=str(adapter))
    if not is_hf_model_folder(base):
        if prefix or adapter is not None:
            raise MustciteError("not a Hugging Face model folder: it needs config.json and model weights "
                                "(model.safetensors or pytorch_model.bin)", path=str(base))
        if not any((base / f).is_file() for f in ("config.json", "modules.json", "tokenizer.json", "model.onnx")):
            raise MustciteError("not a model folder: no config.json, modules.json or model.onnx in it", path=str(base),
                                hint="give a sentence-transformers, Hugging Face or ONNX model folder")
        return None
    if (base / "modules.json").is_file() and adapter is None and not prefix and not pooling:
        return None               # a sentence-transformers model: dense.py runs its own pipeline
    auto_pool, fmt, reason = detect_pooling(base, adapter)
    if pooling:
        reason = f"forced {pooling} (automatic: {auto_pool})"
    return HFSpec(str(base), str(adapter) if adapter else None, pooling or auto_pool, reason, fmt)


def hf_retriever_for(method: str, pooling: str | None = None, **options: Any) -> HFRetriever | None:
    """An :class:`HFRetriever` when ``method`` names a Hugging Face folder (see the module doc)."""
    spec = parse_hf_method(method, pooling)
    if spec is None:
        return None
    opts = {k: v for k, v in options.items() if k in ("batch_size", "max_seq_length", "device", "ann", "cache_dir")}
    return HFRetriever(spec, **opts)


# ------------------------------------------------------------------------------ bottleneck adapter

_KEY = re.compile(r"layer\.(\d+)\.(attention\.output|output)\.adapters\.([^.]+)\."
                  r"(adapter_down\.0|adapter_up)\.(weight|bias)$")


def _activation(name: str):
    torch = lazy_libs.torch("the Hugging Face encoder")
    name = name.lower()
    table = {"relu": torch.nn.functional.relu, "swish": torch.nn.functional.silu, "silu": torch.nn.functional.silu,
             "gelu": torch.nn.functional.gelu, "tanh": torch.tanh,
             "gelu_new": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}
    if name not in table:
        raise MustciteError(f"adapter non-linearity {name!r} is not supported", hint="relu, swish, gelu or tanh")
    return table[name]


def _adapter_config(folder: Path) -> tuple[dict[str, Any], str]:
    raw = _json_object(folder / "adapter_config.json")
    cfg = raw.get("config", raw)
    if not isinstance(cfg, dict):
        raise MustciteError("adapter_config.json has no 'config'", path=str(folder))
    arch = cfg.get("architecture")
    if arch not in (None, "bottleneck"):
        raise MustciteError(f"only bottleneck adapters are supported, this one is {arch!r}", path=str(folder))
    for flag in ("phm_layer", "use_gating", "ln_before", "ln_after"):
        if cfg.get(flag):
            raise MustciteError(f"adapter option {flag}=true is not supported", path=str(folder))
    if cfg.get("reduction_factor") is None or not isinstance(cfg.get("scaling", 1.0), (int, float)):
        raise MustciteError("adapter needs a reduction_factor and a numeric scaling", path=str(folder))
    return cfg, str(raw.get("name") or folder.name)


def _adapter_weights(folder: Path) -> dict[str, Any]:
    if (folder / "adapter.safetensors").is_file():
        return lazy_libs.safetensors_torch("the Hugging Face encoder").load_file(str(folder / "adapter.safetensors"))
    torch = lazy_libs.torch("the Hugging Face encoder")
    return torch.load(folder / "pytorch_adapter.bin", map_location="cpu", weights_only=True)


class BottleneckAdapter:
    """One bottleneck adapter after a BERT sub-layer (``attention.output`` or ``output``), computed
    as adapters' ``pre_forward -> forward -> post_forward``::

        h = dropout(dense(x_in))                      # the sub-layer's own projection
        residual = h                                  # residual_before_ln=True ("post_add": h + x)
        a = LN(h + x) if original_ln_before else h    # LN: the sub-layer's own LayerNorm
        out = up(act(down(a))) * scaling + residual   # (residual = a when residual_before_ln=False)
        y = LN(out + x) if original_ln_after else out
    """

    def __init__(self, down_w, down_b, up_w, up_b, cfg: dict[str, Any]):
        self.down_w, self.down_b, self.up_w, self.up_b = down_w, down_b, up_w, up_b
        self.act = _activation(str(cfg.get("non_linearity", "relu")))
        self.scaling = float(cfg.get("scaling", 1.0))
        self.residual_before_ln = cfg.get("residual_before_ln", True)
        self.original_ln_before = bool(cfg.get("original_ln_before", True))
        self.original_ln_after = bool(cfg.get("original_ln_after", True))

    def __call__(self, h, x, layer_norm):
        F = lazy_libs.torch("the Hugging Face encoder").nn.functional
        residual = h if self.residual_before_ln is True else None
        a = h
        if self.original_ln_before:
            a = h + x
            if self.residual_before_ln == "post_add":
                residual = a
            a = layer_norm(a)
        if not self.residual_before_ln:
            residual = a
        out = F.linear(self.act(F.linear(a, self.down_w, self.down_b)), self.up_w, self.up_b) * self.scaling
        out = out + residual
        return layer_norm(out + x) if self.original_ln_after else out


def apply_adapter(model, folder: str | Path) -> dict[str, Any]:
    """Insert the bottleneck adapter saved in ``folder`` into a BERT-style ``model`` (in place);
    returns what was applied (name, config, layers)."""
    folder = Path(folder)
    cfg, name = _adapter_config(folder)
    weights = _adapter_weights(folder)
    groups: dict[tuple[int, str], dict[str, Any]] = {}
    names = set()
    for key, tensor in weights.items():
        m = _KEY.search(key)
        if m:
            layer, loc, adapter_name, part, kind = m.groups()
            names.add(adapter_name)
            groups.setdefault((int(layer), loc), {})[f"{part}.{kind}"] = tensor.float()
    if not groups:
        raise MustciteError("no bottleneck adapter weights found (keys like "
                            "'...layer.0.output.adapters.NAME.adapter_down.0.weight')", path=str(folder))
    if len(names) > 1:
        raise MustciteError(f"the folder holds several adapters ({', '.join(sorted(names))}); give one",
                            path=str(folder))
    encoder = getattr(model, "encoder", None) or getattr(getattr(model, "bert", None), "encoder", None)
    layers = getattr(encoder, "layer", None)
    if layers is None:
        raise MustciteError("adapters are supported on BERT-style models only (model.encoder.layer)",
                            path=str(folder))
    for (i, loc), t in sorted(groups.items()):
        if i >= len(layers):
            raise MustciteError(f"adapter has a layer {i} but the model has {len(layers)}", path=str(folder))
        missing = {"adapter_down.0.weight", "adapter_down.0.bias", "adapter_up.weight", "adapter_up.bias"} - set(t)
        if missing:
            raise MustciteError(f"adapter layer {i} ({loc}) lacks {', '.join(sorted(missing))}", path=str(folder))
        sub = layers[i].attention.output if loc == "attention.output" else layers[i].output
        if not all(hasattr(sub, a) for a in ("dense", "dropout", "LayerNorm")):
            raise MustciteError(f"layer {i} {loc} is not a BERT-style sub-layer", path=str(folder))
        if t["adapter_down.0.weight"].shape[1] != sub.dense.out_features:
            raise MustciteError("the adapter's hidden size does not match the base model's", path=str(folder))
        block = BottleneckAdapter(t["adapter_down.0.weight"], t["adapter_down.0.bias"], t["adapter_up.weight"],
                                  t["adapter_up.bias"], cfg)

        def forward(hidden_states, input_tensor, _sub=sub, _block=block):
            return _block(_sub.dropout(_sub.dense(hidden_states)), input_tensor, _sub.LayerNorm)

        sub.forward = forward
    return {"name": name, "layers": len({i for i, _ in groups}),
            "locations": sorted({loc for _, loc in groups}),
            "config": {k: cfg.get(k) for k in ("reduction_factor", "non_linearity", "original_ln_before",
                                               "original_ln_after", "residual_before_ln", "scaling",
                                               "mh_adapter", "output_adapter")}}


# ------------------------------------------------------------------------------ encoder

def pool(hidden, attention_mask, pooling: str):
    """[CLS] vector or attention-masked mean of ``hidden`` ``[batch, seq, dim]`` (torch tensors)."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class HFEncoder:
    """Loads the folder(s) once; :meth:`encode` returns L2-normalised float32 vectors."""

    def __init__(self, spec: HFSpec, *, max_length: int = 256, batch_size: int = 32, device: str | None = None):
        torch = lazy_libs.torch("the Hugging Face encoder")
        transformers = lazy_libs.transformers("the Hugging Face encoder")
        AutoModel, AutoTokenizer = transformers.AutoModel, transformers.AutoTokenizer
        self.spec, self.batch_size = spec, batch_size
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(spec.base, local_files_only=True)
            self.model = AutoModel.from_pretrained(spec.base, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise MustciteError(f"cannot load the model folder: {exc}", path=spec.base) from None
        self.model.eval()
        limit = int(getattr(self.model.config, "max_position_embeddings", max_length) or max_length)
        self.max_length = min(max_length, limit)
        self.adapter = apply_adapter(self.model, spec.adapter) if spec.adapter else None
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)

    def encode(self, texts: list[str]) -> np.ndarray:
        torch = lazy_libs.torch("the Hugging Face encoder")
        if not texts:
            return np.zeros((0, int(self.model.config.hidden_size)), dtype=np.float32)
        out: list[np.ndarray | None] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for b in range(0, len(order), self.batch_size):
            idx = order[b:b + self.batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                hidden = self.model(**enc).last_hidden_state
                pooled = pool(hidden, enc["attention_mask"], self.spec.pooling)
                vec = torch.nn.functional.normalize(pooled.float(), dim=-1)
            for j, i in enumerate(idx):
                out[i] = vec[j].cpu().numpy()
        return np.stack(out).astype(np.float32)


def _file_digest(h, path: Path) -> None:
    size = path.stat().st_size
    h.update(f"{path.name}:{size}".encode())
    with open(path, "rb") as fh:
        h.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        h.update(fh.read(1 << 20))


def hf_key(spec: HFSpec, max_length: int) -> str:
    """Embedding-cache key: base folder content (:func:`model_key`), adapter content, pooling, text
    format, max length."""
    h = hashlib.sha256(f"{model_key(spec.base, max_seq_length=max_length)};pooling={spec.pooling};"
                       f"text={spec.text_format}".encode())
    name = model_name(spec.base)
    if spec.adapter:
        a = Path(spec.adapter)
        h.update((a / "adapter_config.json").read_bytes())
        for w in _ADAPTER_WEIGHTS:
            if (a / w).is_file():
                _file_digest(h, a / w)
        name = f"{name}+{model_name(a)}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
    return f"{slug}-{spec.pooling}-{h.hexdigest()[:12]}"


class HFRetriever:
    """Exact (or faiss ANN) inner-product search over the pooled, normalised vectors of an
    :class:`HFEncoder`; pool and query vectors go through the embedding cache."""

    def __init__(self, spec: HFSpec, *, batch_size: int | None = None, max_seq_length: int | None = None,
                 device: str | None = None, ann: str | None = None, cache_dir: str | Path | None = None):
        if ann not in ANN:
            raise UsageError(f"unknown ANN index {ann!r}", hint="use hnsw or ivf")
        self.spec, self.ann, self.device = spec, ann, device
        self.batch_size = batch_size or 32
        self.max_seq_length = max_seq_length or 256
        self.key = hf_key(spec, self.max_seq_length)
        self.name = model_name(spec.base) + (f"+{model_name(spec.adapter)}" if spec.adapter else "")
        self.cache = EmbeddingCache(Path(cache_dir) if cache_dir else default_cache_root(), self.key,
                                    info={"model": self.name, "normalize": True, "max_seq_length": self.max_seq_length,
                                          "encoder": "hf", "pooling": spec.pooling, "text_format": spec.text_format,
                                          "adapter": spec.adapter})
        self._encoder: HFEncoder | None = None
        self._ids: list[str] = []
        self._vectors: np.ndarray | None = None
        self._index = None

    @property
    def encoder(self) -> HFEncoder:
        if self._encoder is None:
            self._encoder = HFEncoder(self.spec, max_length=self.max_seq_length, batch_size=self.batch_size,
                                      device=self.device)
        return self._encoder

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode(texts)

    @property
    def sep_token(self) -> str:
        """The tokenizer's separator, read from its config files (no model load needed)."""
        for f in ("special_tokens_map.json", "tokenizer_config.json"):
            tok = _json_object(Path(self.spec.base) / f).get("sep_token")
            tok = tok.get("content") if isinstance(tok, dict) else tok
            if isinstance(tok, str) and tok:
                return tok
        return "[SEP]"

    def text(self, doc) -> str:
        if self.spec.text_format == "sep" and doc.abstract.strip():
            return f"{doc.title.strip()}{self.sep_token}{doc.abstract.strip()}"
        return doc.text

    def embed(self, texts: list[str], desc: str = "encoding") -> np.ndarray:
        return self.cache.embed(texts, self.encode, batch_size=self.batch_size, desc=desc)

    def index(self, pool) -> None:
        docs = as_docs(pool)
        if not docs:
            raise MustciteError("cannot index an empty pool")
        self._ids = [d.id for d in docs]
        self._vectors = self.embed([self.text(d) for d in docs], desc=f"encoding pool ({self.name})")
        self._index = build_faiss_index(self._vectors, self.ann)

    def search(self, queries, k: int = 100) -> Results:
        if self._index is None:
            raise MustciteError("dense index is empty: call index() or load() first")
        qs = as_docs(queries, id_key="id")
        qv = self.embed([self.text(q) for q in qs], desc="encoding queries")
        k = max(1, min(int(k), len(self._ids)))
        scores, idx = self._index.search(np.ascontiguousarray(qv, dtype=np.float32), k)
        return {q.id: [(self._ids[int(i)], float(s)) for i, s in zip(row_i, row_s) if i >= 0]
                for q, row_i, row_s in zip(qs, idx, scores)}

    def metadata(self) -> dict[str, Any]:
        meta = {"method": "dense", "encoder": "hf", "model": self.name, "model_path": self.spec.base,
                "adapter_path": self.spec.adapter, "pooling": self.spec.pooling, "pooling_reason": self.spec.reason,
                "text_format": self.spec.text_format, "model_key": self.key, "max_seq_length": self.max_seq_length,
                "normalize": True, "search": self.ann or "exact", "fields": "title + abstract", "docs": len(self._ids)}
        if self._encoder is not None and self._encoder.adapter:
            meta["adapter"] = self._encoder.adapter
        return meta

    def save(self, path: str | Path) -> None:
        save_index(path, self._ids, self._vectors, self.metadata())

    @classmethod
    def load(cls, path: str | Path, *, cache_dir: str | Path | None = None) -> HFRetriever:
        path = Path(path)
        meta = read_meta(path / "meta.json")
        spec = HFSpec(meta["model_path"], meta.get("adapter_path"), meta["pooling"], meta.get("pooling_reason", ""),
                      meta.get("text_format", "plain"))
        ann = None if meta.get("search") == "exact" else meta.get("search")
        r = cls(spec, max_seq_length=meta["max_seq_length"], ann=ann, cache_dir=cache_dir)
        r._ids, r._vectors = load_index(path)
        r._index = build_faiss_index(r._vectors, ann)
        return r

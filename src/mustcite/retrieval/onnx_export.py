"""mustcite's int8 ONNX export of a sentence-transformers model (``model_path="onnx-int8:minilm"``).

The (BERT-style, mean-pooled) model is exported to ONNX with torch, dynamically quantised to int8
per channel with onnxruntime and kept with its tokenizer files and a manifest in
``<cache>/onnx/<source key>-int8/``; it is made from local files only, on first use, and then
reused. :class:`~mustcite.retrieval.dense.OnnxEncoder` runs it.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from .. import lazy_libs
from ..errors import MustciteError, UsageError
from ..io import atomic_write_json, build_dir_once, read_json
from .embeddings import model_key, model_name
from .hf_encoder import st_pooling_mode
from .vectors import default_model_path

ONNX_PREFIX = "onnx-int8:"
ONNX_MANIFEST = "mustcite-onnx.json"
ONNX_FILE = "model.int8.onnx"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json", "config.json")


def is_onnx_spec(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(ONNX_PREFIX)


def is_onnx_model(path: str | Path) -> bool:
    return (Path(path) / ONNX_MANIFEST).is_file() and (Path(path) / ONNX_FILE).is_file()


def onnx_source(spec: str) -> str:
    """The source model folder an ``onnx-int8:`` spec names (``minilm``: the shipped MiniLM)."""
    rest = spec[len(ONNX_PREFIX):].strip()
    if not rest:
        raise UsageError(f"ONNX model spec {spec!r} names no source model", hint="use onnx-int8:minilm")
    return default_model_path() if rest.lower() in ("minilm", "default") else str(Path(rest).expanduser())


def ensure_onnx_int8(source: str | Path, cache_root: str | Path) -> Path:
    """``<cache_root>/onnx/<source key>-int8/``: the sentence-transformers (BERT-style, mean-pooled)
    model at ``source`` exported to ONNX and dynamically quantised to int8 (per channel), with its
    tokenizer files; made from local files only, on first use (a few seconds), then reused."""
    src = Path(source)
    if not src.is_dir():
        raise MustciteError("source model folder for the ONNX export not found", path=str(src))
    dest = Path(cache_root) / "onnx" / f"{model_key(src, max_seq_length=0)}-int8"
    return build_dir_once(dest, lambda tmp: _export_onnx_int8(src, tmp), is_onnx_model)


def _export_onnx_int8(src: Path, dest: Path) -> None:
    torch = lazy_libs.torch("the ONNX int8 encoder")
    quantization = lazy_libs.onnxruntime_quantization("the ONNX int8 encoder")
    QuantType, quantize_dynamic = quantization.QuantType, quantization.quantize_dynamic
    transformers = lazy_libs.transformers("the ONNX int8 encoder")
    AutoModel, AutoTokenizer = transformers.AutoModel, transformers.AutoTokenizer
    pooling = read_json(src / "1_Pooling" / "config.json", missing_ok=True) or {}
    if pooling and st_pooling_mode(pooling) != "mean":
        raise MustciteError("the ONNX int8 encoder supports mean-pooled models only", path=str(src))
    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(str(src), local_files_only=True)
    model = AutoModel.from_pretrained(str(src), local_files_only=True).eval()

    class Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    enc = tok(["a short text", "a somewhat longer text to trace the export"], padding=True, return_tensors="pt")
    fp32 = dest / "model.fp32.onnx"
    torch.onnx.export(Hidden(model), tuple(enc[k] for k in names), str(fp32), input_names=names,
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={k: {0: "batch", 1: "seq"} for k in names + ["last_hidden_state"]})
    quantize_dynamic(str(fp32), str(dest / ONNX_FILE), weight_type=QuantType.QInt8, per_channel=True)
    fp32.unlink()
    for name in _TOKENIZER_FILES:
        if (src / name).is_file():
            shutil.copy(src / name, dest / name)

    atomic_write_json(dest / ONNX_MANIFEST, {
        "name": f"{model_name(src)}-onnx-int8", "source_model": model_name(src),
        "source_key": model_key(src, max_seq_length=0), "quantization": "dynamic int8, per channel",
        "onnx_sha256": hashlib.sha256((dest / ONNX_FILE).read_bytes()).hexdigest(),
        "torch": version("torch"), "onnxruntime": version("onnxruntime"), "onnx": version("onnx"),
        "export_seconds": round(time.perf_counter() - t0, 1)})

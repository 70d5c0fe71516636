"""Retrieval methods by name: :func:`make_retriever` turns a method name, spec or model folder
into a :class:`~.base.Retriever`. Each method's module is imported only when it is asked for: the
recommender imports this module at start-up, and the methods' modules bring their libraries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import Workspace
from ..errors import MustciteError, UsageError
from .base import Retriever
from .bm25 import BM25Retriever
from .vectors import default_model_path


def make_retriever(method: str, **options: Any) -> Retriever:
    """``bm25``, ``minilm`` (the shipped MiniLM), ``onnx-int8:minilm`` (its int8 ONNX export),
    ``static:minilm`` (its static model2vec distillation), ``mpnet`` (needs ``model_path``),
    ``onnx:FOLDER`` (a ready-made ONNX encoder, e.g. inCite's MiniLM), a model folder, or a
    Hugging Face folder with its pooling (``hf:``/``hf-cls:``/``hf-mean:FOLDER``, ``BASE+ADAPTER``
    for SPECTER2; see :mod:`mustcite.retrieval.hf_encoder`). ``pooling="cls"|"mean"`` forces the
    pooling of a folder. ``ppr``/``gnn`` (or ``ppr:FOLDER``/``gnn:FOLDER``): the graph methods
    of ``mustcite benchmark train-graph`` (:func:`graph_retriever`). ``rerank:FOLDER`` (or a
    folder with ``rerank_model.json``): prefetch and rerank with a cross-encoder of ``mustcite
    benchmark train-rerank`` (:mod:`mustcite.retrieval.prefetch_rerank`); ``prefetch=`` overrides its depth."""
    if method == "bm25":
        return BM25Retriever(**{k: v for k, v in options.items() if k in ("k1", "b")})
    if method.startswith("colbert"):
        from .colbert import METHOD_MODES, colbert_retriever  # on demand (module doc): late interaction, PyLate

        if method.partition(":")[0] in METHOD_MODES:
            return colbert_retriever(method, **options)
    if method in ("ppr", "gnn") or method.startswith(("ppr:", "gnn:")) \
            or (Path(method).expanduser() / "graph_model.json").is_file():
        return graph_retriever(method, cache_dir=options.get("cache_dir"))
    if method.startswith("rerank:") or (Path(method).expanduser() / "rerank_model.json").is_file():
        from .prefetch_rerank import PrefetchRerankRetriever  # on demand: prefetch and rerank (HAtten-RR family)

        folder = Path(method.removeprefix("rerank:")).expanduser()
        return PrefetchRerankRetriever.load(folder, prefetch=options.get("prefetch"), make_first=make_retriever)
    from .dense import DenseRetriever, is_onnx_folder_spec, onnx_folder_file  # on demand (see the module doc)

    dense_opts = {k: v for k, v in options.items()
                  if k in ("batch_size", "max_seq_length", "device", "ann", "cache_dir", "model_path")}
    pooling = options.get("pooling") or None
    if pooling not in (None, "cls", "mean"):
        raise UsageError(f"unknown pooling {pooling!r}", hint="use cls or mean")
    if method == "minilm" and not pooling:
        return DenseRetriever(**dense_opts)
    if method == "minilm":
        method = "hf:" + default_model_path()
    if method.startswith(("onnx-int8:", "static:")) and not pooling:
        dense_opts["model_path"] = method
        return DenseRetriever(**dense_opts)
    if is_onnx_folder_spec(method):
        dense_opts["model_path"] = method
        return DenseRetriever(pooling=pooling, **dense_opts)
    from .hf_encoder import hf_retriever_for  # on demand (see the module doc)

    hf = hf_retriever_for(method, pooling=pooling, **dense_opts)
    if hf is not None:
        return hf
    if Path(method).expanduser().is_dir():
        folder = Path(method).expanduser()
        if onnx_folder_file(folder):
            return DenseRetriever(pooling=pooling, **{**dense_opts, "model_path": str(folder)})
        dense_opts["model_path"] = str(folder)
        return DenseRetriever(**dense_opts)
    if method == "mpnet" and dense_opts.get("model_path"):
        return DenseRetriever(**dense_opts)
    raise UsageError(f"unknown retrieval method {method!r}",
                     hint="use bm25, minilm, onnx-int8:minilm, static:minilm, onnx:FOLDER, hf-cls:FOLDER, "
                          "hf-mean:FOLDER, BASE+ADAPTER, or the path of a model folder")


def graph_retriever(method: str, *, cache_dir: str | Path | None = None):
    """``ppr``/``gnn`` (the default model folders), ``ppr:FOLDER``/``gnn:FOLDER``, or a graph model
    folder (its ``graph_model.json`` says which) as a retriever."""
    from .graph import DEFAULT_MODELS, MODEL_FILE  # on demand (see the module doc)

    kind, _, rest = method.partition(":")
    if kind not in DEFAULT_MODELS:                     # a folder
        folder = Path(method).expanduser()
        try:
            kind = json.loads((folder / MODEL_FILE).read_text(encoding="utf-8")).get("kind")
        except (OSError, ValueError) as exc:
            raise MustciteError(f"cannot read the graph model: {exc}", path=folder / MODEL_FILE) from None
    elif rest:
        folder = Path(rest).expanduser()
    else:
        folder = Workspace.resolve().root / "models" / DEFAULT_MODELS[kind]
    if kind == "ppr":
        from .ppr import PPRRetriever  # on demand (see the module doc)

        return PPRRetriever(folder, cache_dir=cache_dir)
    if kind == "gnn":
        from .gnn import GNNRetriever  # on demand (see the module doc)

        return GNNRetriever(folder, cache_dir=cache_dir)
    raise UsageError(f"unknown graph model kind {kind!r}", path=folder / MODEL_FILE)

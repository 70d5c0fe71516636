"""Retrieval methods over the candidate pool: the :class:`Retriever` interface, the methods by name
(:func:`make_retriever`: BM25, dense bi-encoders with an on-disk embedding cache, ColBERT, graph
methods, prefetch and rerank), queries files, and NT-Xent fine-tuning."""

import importlib

from .base import Doc, Results, Retriever, as_doc, as_docs, doc_text
from .queries import read_queries
from .registry import make_retriever

#: public name -> the submodule that defines it, imported on first use so that ``import
#: mustcite.retrieval`` stays cheap (the methods need torch, sentence-transformers, onnxruntime, ...)
_LAZY = {
    # the methods
    "BM25Retriever": "bm25",
    "DenseRetriever": "dense",
    "ColbertRetriever": "colbert",
    "pylate_version": "colbert",
    "CrossEncoderReranker": "cross_encoder",
    "HEADS": "cross_encoder",
    "GNNParams": "gnn",
    "GNNRetriever": "gnn",
    "GraphTensors": "gnn",
    "knn_edges": "gnn",
    "save_gnn": "gnn",
    "train_gnn": "gnn",
    "PPRParams": "ppr",
    "PPRRetriever": "ppr",
    "save_ppr": "ppr",
    # encoders, embeddings and vector indexes
    "default_model_path": "vectors",
    "build_faiss_index": "vectors",
    "ensure_onnx_int8": "onnx_export",
    "text_key": "embeddings",
    "peak_rss_mb": "memory",
}

__all__ = ["Doc", "Results", "Retriever", "as_doc", "as_docs", "doc_text", "make_retriever", "read_queries", *_LAZY]


def __getattr__(name: str):
    """The names of :data:`_LAZY`, imported on first use (PEP 562)."""
    try:
        module, _, attr = _LAZY[name].partition(":")
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

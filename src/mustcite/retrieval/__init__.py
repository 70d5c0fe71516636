"""Retrieval methods over the candidate pool: the :class:`Retriever` interface, the methods by name
(:func:`make_retriever`: BM25, dense bi-encoders with an on-disk embedding cache, ColBERT, graph
methods, prefetch and rerank), queries files, and NT-Xent fine-tuning."""

from ..lazy_exports import lazy_exports
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

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

"""Retrieval methods over the candidate pool: the :class:`Retriever` interface, the methods by name
(:func:`make_retriever`: BM25, dense bi-encoders with an on-disk embedding cache, ColBERT, graph
methods, prefetch and rerank), queries files, and NT-Xent fine-tuning."""

from .base import Doc, Results, Retriever, as_doc, as_docs, doc_text
from .queries import read_queries
from .registry import make_retriever

__all__ = ["Doc", "Results", "Retriever", "as_doc", "as_docs", "doc_text", "make_retriever", "read_queries"]

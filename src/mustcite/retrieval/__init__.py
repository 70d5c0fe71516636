"""Retrieval methods over the candidate pool: the :class:`Retriever` interface, BM25, dense
bi-encoders with an on-disk embedding cache, and NT-Xent fine-tuning."""

from .base import Doc, Retriever, doc_text, load_pool, make_retriever, read_queries

__all__ = ["Doc", "Retriever", "doc_text", "load_pool", "make_retriever", "read_queries"]

"""The must-cite retrieval benchmark: recipes and builder, TREC files, metrics, significance, tables."""

from .evaluate import METRICS, evaluate, per_query
from .trec import read_qrels, read_run, write_qrels, write_run

__all__ = ["METRICS", "evaluate", "per_query", "read_qrels", "read_run", "write_qrels", "write_run"]

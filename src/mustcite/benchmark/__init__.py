"""The must-cite retrieval benchmark: recipes and builder, loader, TREC files, metrics, significance, tables."""

from .evaluate import METRICS, evaluate, per_query
from .loader import Benchmark
from .trec import read_qrels, read_run, write_qrels, write_run

__all__ = ["METRICS", "Benchmark", "evaluate", "per_query", "read_qrels", "read_run", "write_qrels", "write_run"]

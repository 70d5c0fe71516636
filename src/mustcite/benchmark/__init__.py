"""The must-cite retrieval benchmark: recipes and builder, loader, TREC files, metrics, significance, tables."""

from ..lazy_exports import lazy_exports
from .evaluate import METRICS, evaluate, mean, per_query
from .loader import Benchmark
from .recipes import DEFAULT_RECIPE, GROUND_TRUTHS, benchmark_folder
from .trec import read_qrels, read_run, write_qrels, write_run

#: public name -> the submodule that defines it, imported on first use so that ``import
#: mustcite.benchmark`` stays cheap (report and significance need scipy, training pyarrow)
_LAZY = {
    "benchmark_data": "training_data",
    "build_rows": "report",
    "compare_with": "report",
    "graph_from_benchmark": "retrieval_training",
    "paired_ttest": "significance",
    "randomisation_test": "significance",
    "render": "report",
}

__all__ = ["DEFAULT_RECIPE", "GROUND_TRUTHS", "METRICS", "Benchmark", "benchmark_folder", "evaluate", "mean",
           "per_query", "read_qrels", "read_run", "write_qrels", "write_run", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

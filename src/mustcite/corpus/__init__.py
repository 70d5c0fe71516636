"""The paper corpus: import the paper lists, keep main tracks, merge duplicates, store, count.

Public API::

    build_corpus(data_dir, work) -> BuildReport     # writes <work>/corpus/papers.parquet + build.json
    load_papers(work, years=None, venues=None, columns=None) -> pyarrow.Table
    iter_papers(work, years=None, venues=None) -> list[Paper]
    CorpusStore(work).get(paper_id) / .by_title(title, venue=None, year=None)
    corpus_stats(work) -> CorpusStats
"""

import importlib

from .build import BuildReport, ListedPapers, build_corpus, import_all
from .importers import import_collected, import_file
from .records import VENUES, Paper, make_paper_id, normalize_title, title_short_name
from .stats import CorpusStats, corpus_stats
from .store import CorpusStore, iter_papers, load_papers, papers_path

#: public name -> the submodule that defines it, imported on first use
_LAZY = {
    "load_pool": "pool",
}

__all__ = ["VENUES", "BuildReport", "CorpusStats", "CorpusStore", "ListedPapers", "Paper", "build_corpus",
           "corpus_stats", "import_all", "import_collected", "import_file", "iter_papers", "load_papers",
           "make_paper_id", "normalize_title", "papers_path", "title_short_name", *_LAZY]


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

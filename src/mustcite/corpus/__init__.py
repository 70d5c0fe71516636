"""The paper corpus: import the paper lists, keep main tracks, merge duplicates, store, count.

Public API::

    build_corpus(data_dir, work) -> BuildReport     # writes <work>/corpus/papers.parquet + build.json
    load_papers(work, years=None, venues=None, columns=None) -> pyarrow.Table
    iter_papers(work, years=None, venues=None) -> list[Paper]
    CorpusStore(work).get(paper_id) / .by_title(title, venue=None, year=None)
    corpus_stats(work) -> CorpusStats
"""

from ..lazy_exports import lazy_exports
from .build import BuildReport, ListedPapers, build_corpus, import_all
from .importers import import_collected, import_file
from .records import VENUES, Paper, make_paper_id, normalize_title, title_short_name
from .stats import CorpusStats, corpus_stats
from .store import CorpusStore, iter_papers, load_papers, papers_path, write_papers

#: public name -> the submodule that defines it, imported on first use
_LAZY = {
    "load_pool": "pool",
}

__all__ = ["VENUES", "BuildReport", "CorpusStats", "CorpusStore", "ListedPapers", "Paper", "build_corpus",
           "corpus_stats", "import_all", "import_collected", "import_file", "iter_papers", "load_papers",
           "make_paper_id", "normalize_title", "papers_path", "title_short_name", "write_papers", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

"""The paper corpus: import the paper lists, keep main tracks, merge duplicates, store, count.

Public API::

    build_corpus(data_dir, work) -> BuildReport     # writes <work>/corpus/papers.parquet + build.json
    load_papers(work, years=None, venues=None, columns=None) -> pyarrow.Table
    iter_papers(work, years=None, venues=None) -> list[Paper]
    CorpusStore(work).get(paper_id) / .by_title(title, venue=None, year=None)
    corpus_stats(work) -> CorpusStats
"""

from .build import BuildReport, build_corpus
from .records import VENUES, Paper, make_paper_id, normalize_title
from .stats import CorpusStats, corpus_stats
from .store import CorpusStore, iter_papers, load_papers, papers_path

__all__ = ["VENUES", "BuildReport", "CorpusStats", "CorpusStore", "Paper", "build_corpus",
           "corpus_stats", "iter_papers", "load_papers", "make_paper_id", "normalize_title",
           "papers_path"]

"""The two indexes a draft is read against, one part of a recommender.

* the **title index** (:class:`~mustcite.extract.link.TitleIndex`): the pool's titles and the
  identifiers in its urls (DOI, arXiv, ...), which link a draft's references to pool papers;
* the **bibliography index** (:class:`~.bibliography_signals.BibliographyIndex`): the labelled papers'
  citation matrices, which give co-citation and bibliographic coupling for a draft's references.

Each is read from the model's prebuilt index folder when it has one, else built on first use, and
then kept (a server reads both as it loads, so no request pays for them).
"""

from __future__ import annotations

import pickle
from pathlib import Path

from ..extract.link import TitleIndex
from ..io import load_pickle
from .bibliography_signals import BibliographyIndex
from .neighbours import NeighbourIndex
from .pool_table import PoolTable

#: the files of the two indexes among a model's prebuilt indexes
TITLE_INDEX_FILE = "titles.pickle"
BIBLIOGRAPHY_INDEX_FILE = "bibliography.pickle"


def build_title_index(pool: PoolTable) -> TitleIndex:
    """The pool's titles and the identifiers in its urls (DOI, arXiv, ...), for linking a draft's
    references."""
    return TitleIndex.build(pool.ids, [t or "" for t in pool.titles], pool.column("year")).add_identifiers(
        *(pool.column(k) for k in ("url", "pdf", "doi", "arxiv")))


class DraftIndexes:
    """The title and bibliography indexes of one pool and its labelled papers (``nindex``);
    ``folder``: the model's prebuilt indexes (:mod:`.model_store`), or None to build them in memory."""

    def __init__(self, pool: PoolTable, nindex: NeighbourIndex, folder: Path | None = None):
        self.pool = pool
        self.nindex = nindex
        self.folder = folder
        self._titles: TitleIndex | None = None
        self._bibliography: BibliographyIndex | None = None

    def titles(self) -> TitleIndex:
        """The title index, read or built on first use."""
        if self._titles is None:
            saved = self._saved(TITLE_INDEX_FILE)
            self._titles = load_pickle(saved) if saved is not None else build_title_index(self.pool)
        return self._titles

    def bibliography(self, nindex: NeighbourIndex | None = None) -> BibliographyIndex:
        """The bibliography index of the labelled papers (of ``nindex`` when given: a copy of the
        model with other labelled papers gets its own, built), read or built on first use."""
        nindex = self.nindex if nindex is None else nindex
        idx = self._bibliography
        if idx is None or idx.nindex is not nindex:
            saved = self._saved(BIBLIOGRAPHY_INDEX_FILE) if nindex is self.nindex else None
            idx = BibliographyIndex.load(saved, nindex) if saved is not None else BibliographyIndex(nindex)
            self._bibliography = idx
        return idx

    def warm(self) -> None:
        """Read (or build) both now."""
        self.titles()
        self.bibliography()

    @staticmethod
    def write(folder: Path, pool: PoolTable, nindex: NeighbourIndex) -> None:
        """Write both indexes, built afresh, into the index folder ``folder``."""
        with open(folder / TITLE_INDEX_FILE, "wb") as fh:
            pickle.dump(build_title_index(pool), fh, protocol=5)
        BibliographyIndex(nindex).save(folder / BIBLIOGRAPHY_INDEX_FILE)

    def _saved(self, name: str) -> Path | None:
        path = self.folder / name if self.folder is not None else None
        return path if path is not None and path.is_file() else None

"""A work folder for ``check-refs`` whose corpus is one real paper list, and the real titles with
characters special to LaTeX or BibTeX (``special_titles.json``, cut from the shared data's paper
lists and ML Anthology records, each with its file and line)."""

from __future__ import annotations

import json
from pathlib import Path

from . import DATA

SPECIAL_TITLES = Path(__file__).with_name("special_titles.json")


def paperlist_work(root: Path, name: str = "nips2019") -> Path:
    """``root`` as a work folder whose ``corpus/papers.parquet`` holds the main-track papers of the
    paper list ``proceedings/paperlists/<name>.jsonl.gz``, read with the corpus importer."""
    from mustcite.corpus.importers import import_file
    from mustcite.corpus.records import Paper, make_paper_id
    from mustcite.corpus.store import write_papers

    papers = [Paper(make_paper_id(r.title, r.venue, r.year, r.source_id), r.title, r.venue, r.year,
                    authors=list(r.authors), source="paperlists", source_id=r.source_id, url=r.url, pdf=r.pdf,
                    track=r.track)
              for r in import_file(DATA / "proceedings" / "paperlists" / f"{name}.jsonl.gz", DATA)
              if not r.skip and r.main_track]
    write_papers(papers, root / "corpus" / "papers.parquet")
    return root


def special_titles() -> list[dict]:
    """The fixture's records: ``{"title", "authors", "source", "venue_year"}``."""
    return json.loads(SPECIAL_TITLES.read_text(encoding="utf-8"))["records"]

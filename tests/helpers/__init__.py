"""Helpers shared by the test modules (not a test module: pytest collects nothing here).

``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject's pytest options), so a test imports
``from helpers import DATA`` or ``from helpers import recommender as S``.

* this module: where the shared data is (``../shared/data``, found by
  :func:`mustcite.config.find_data_dir`; ``MUSTCITE_DATA`` overrides) and the proceedings slice
  of the retrieval tests;
* :mod:`helpers.recommender`: the recommender slice (NeurIPS 2019-2022 pool, NeurIPS 2023 labelled);
* :mod:`helpers.benchmark`: the small real benchmark of the benchmark tests;
* :mod:`helpers.pdfs`: the s2orc-doc2json PDF/TEI fixtures and the GROBID stub server;
* :mod:`helpers.judges`: the OpenAI/Gemini stub server of the judge tests;
* :mod:`helpers.scidoca`: hand-made SCIDOCA examples (no data);
* :mod:`helpers.waiting`: :func:`~helpers.waiting.wait_until`, for a state no event announces.

Everything that reads the data is marked ``data`` in the tests, and ``conftest.py`` skips those
tests when :data:`DATA_DIR` is None. Nothing here reads the data at import time.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from mustcite.config import find_data_dir
from mustcite.errors import DataMissingError


def find_data() -> Path | None:
    """The shared data folder, or None when there is none (never raises)."""
    try:
        return find_data_dir()
    except DataMissingError:
        return None


#: the shared data folder, or None when it is missing (the ``data`` tests are then skipped)
DATA_DIR: Path | None = find_data()
#: the data folder as a path that module constants can be built on; when the data is missing it
#: names a folder that does not exist (only ``data`` tests read below it, and they are skipped)
DATA: Path = DATA_DIR if DATA_DIR is not None else Path(__file__).resolve().parent / "no-shared-data"


# ---------------------------------------------------------------- a real slice of the proceedings

LISTS = DATA / "proceedings" / "paperlists"


def real_slice(n: int = 5000) -> list[dict]:
    """The first ``n`` papers with abstracts of NeurIPS 2018, AAAI 2021, ECCV 2020 and EMNLP 2021."""
    rows = []
    for name, venue, year in [("nips2018", "NeurIPS", 2018), ("aaai2021", "AAAI", 2021),
                              ("eccv2020", "ECCV", 2020), ("emnlp2021", "EMNLP", 2021)]:
        with gzip.open(LISTS / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r.get("abstract"):
                    rows.append({"paper_id": f"{name}-{r['id']}", "title": r["title"], "abstract": r["abstract"],
                                 "venue": venue, "year": year})
    return rows[:n]

"""The year of a proceedings volume: a PMLR volume dated the year after its conference (UAI 2019 is
PMLR v115, dated 2020), measured from the records' citation keys; an entry giving the volume's year
is not a wrong year. Real ML Anthology records of UAI 2019 and 2020."""

from __future__ import annotations

import gzip
import json

import pytest

from mustcite.refcheck.volumes import key_year, volume_years

pytestmark = pytest.mark.data("anthology/records/uai-2019.jsonl.gz")


def _records(name: str) -> list[dict]:
    from helpers import DATA

    with gzip.open(DATA / "anthology" / "records" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_key_year_reads_the_volume_year_of_a_pmlr_url():
    assert key_year("https://proceedings.mlr.press/v115/abu-el-haija20a.html") == 2020
    assert key_year("http://proceedings.mlr.press/v9/glorot10a/glorot10a.pdf") == 2010
    assert key_year("http://jmlr.org/proceedings/papers/v28/sutskever13.pdf") is None    # no letter after the digits
    assert key_year("https://openreview.net/forum?id=abc20a") is None


def test_uai_2019_is_dated_by_its_volume_year_and_uai_2020_is_not():
    rows = [("UAI", r["year"], (r["url"] or "",)) for name in ("uai-2019", "uai-2020") for r in _records(name)]
    got = volume_years(rows)
    assert got == {("UAI", 2019): 2020}
    # a few papers with another key year are no volume's measure
    assert volume_years(rows[:5]) == {}


def test_an_entry_giving_the_volume_year_is_not_flagged(tmp_path):
    from mustcite.corpus.records import Paper, make_paper_id
    from mustcite.corpus.store import write_papers
    from mustcite.refcheck import check_entries, load_index
    from mustcite.refcheck.entries import entries_from_bib

    recs = _records("uai-2019") + _records("uai-2020")
    papers = [Paper(make_paper_id(r["title"], "UAI", r["year"], r["id"]), r["title"], "UAI", r["year"],
                    authors=list(r["authors"]), source="mlanthology", source_id=r["id"], url=r["url"] or "")
              for r in recs]
    write_papers(papers, tmp_path / "corpus" / "papers.parquet")
    index = load_index(tmp_path, cache=False, citations=False)
    assert index.volume_years == {("UAI", 2019): 2020}
    r19 = next(r for r in recs if r["year"] == 2019 and len(r["authors"]) >= 2)
    r20 = next(r for r in recs if r["year"] == 2020 and len(r["authors"]) >= 2)

    def entry(key, r, year):
        return (f"@inproceedings{{{key}, title={{{r['title']}}}, author={{{' and '.join(r['authors'])}}}, "
                f"booktitle={{Proceedings of the Conference on Uncertainty in Artificial Intelligence}}, "
                f"year={{{year}}}}}\n")

    text = (entry("conf", r19, 2019) + entry("volume", r19, 2020) + entry("late", r19, 2021)
            + entry("early", r19, 2018) + entry("uai20", r20, 2021))
    got = {c.key: c for c in check_entries(entries_from_bib(text, "x.bib")[0], index)}
    assert got["conf"].status == "verified" and got["volume"].status == "verified", got["volume"].why
    assert got["late"].status == "mismatch" and got["early"].status == "mismatch"
    assert got["uai20"].status == "mismatch"          # UAI 2020's volume (PMLR v124) is dated 2020

"""The statuses a researcher acts on, in the language server: outdated is a hint, mismatch a
warning, not_found an error (no corpus needed: the checks are written by hand)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from mustcite.lsp.diagnostics import entry_diagnostics
from mustcite.refcheck.render import record_bibtex, render
from mustcite.refcheck.results import FAIL_ON, STATUSES, Issue, RefCheck

TEXT = "@inproceedings{k,\n  title = {A Title},\n  year = {2019},\n  booktitle = {NeurIPS}\n}\n"
RECORD = {"title": "A Title", "authors": ["Ada Lovelace", "Alan Turing"], "year": 2019, "venue": "NeurIPS",
          "paper_id": "p1", "source": "corpus"}


@pytest.mark.parametrize("status,severity", [("outdated", types.DiagnosticSeverity.Hint),
                                             ("mismatch", types.DiagnosticSeverity.Warning),
                                             ("not_found", types.DiagnosticSeverity.Error),
                                             ("unverifiable", types.DiagnosticSeverity.Hint)])
def test_severity_of_each_status(status, severity):
    issues = [Issue("year", "2019", "2018", "the record is NeurIPS 2018, not 2019")] if status == "mismatch" else []
    got = entry_diagnostics(TEXT, RefCheck("k", status, issues=issues, record=RECORD, why="why", source="refs.bib:1"))
    assert [d.severity for d in got] == [severity]


def test_statuses_and_gates():
    assert "outdated" in STATUSES
    assert "outdated" not in FAIL_ON["mismatch"] and "outdated" not in FAIL_ON["not_found"]
    assert set(FAIL_ON["outdated"]) == {"outdated", "mismatch", "not_found"}


def test_published_version_bibtex_and_reports():
    bib = record_bibtex(RECORD, "k")
    assert bib == ("@inproceedings{k,\n  title = {{A Title}},\n  author = {Ada Lovelace and Alan Turing},\n"
                   "  booktitle = {Advances in Neural Information Processing Systems},\n  year = {2019}\n}\n")
    tmlr = record_bibtex({**RECORD, "venue": "TMLR", "track": "journal", "source": "side track"}, "k")
    assert tmlr.startswith("@article{k,") and "journal = {Transactions on Machine Learning Research}" in tmlr
    c = RefCheck("k", "outdated", record=RECORD, why="an arXiv preprint is cited; ...", bibtex=bib)
    assert c.to_json()["bibtex"] == bib and "bibtex" not in RefCheck("v", "verified").to_json()
    assert "1 outdated" in render([c], "table")
    md = render([c], "markdown")
    assert "**outdated**" in md and "```bibtex\n" + bib in md


def test_only_the_newest_cached_indexes_are_kept(tmp_path):
    import os

    from mustcite.refcheck.index import drop_stale_indexes

    files = []
    for i in range(4):
        f = tmp_path / f"index-{i:016x}.pickle"
        f.write_bytes(b"x")
        os.utime(f, (1000 + i, 1000 + i))
        files.append(f)
    (tmp_path / "other.pickle").write_bytes(b"y")
    gone = drop_stale_indexes(tmp_path, keep=2)
    assert sorted(gone) == files[:2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index-0000000000000002.pickle",
                                                         "index-0000000000000003.pickle", "other.pickle"]

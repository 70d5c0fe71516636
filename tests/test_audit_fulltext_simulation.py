"""The pure parts of ``benchmarks/audit_fulltext_simulation.py`` on real NeurIPS 2024 full texts:
deleting every citation of one work from Nougat Markdown (numeric and author-year), refusing a
list numbered by position, picking a named, cited work, and the bootstrap interval."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.audit_fulltext_simulation import (  # noqa: E402
    NotSeedable,
    body_text,
    bootstrap_ci,
    check_deleted,
    delete_work,
    named_cited,
    pick,
    read_gz,
)

from mustcite.extract import extract_markdown  # noqa: E402


def _text(data_dir, pid: str) -> str:
    return read_gz(Path(data_dir) / "neurips" / "fulltext_2024" / f"{pid}.md.gz")


def _ref(paper, target: int):
    return next(r for r in paper.references if r.target == target)


@pytest.mark.data
def test_numeric_paper_loses_every_citation_of_one_work(data_dir):
    text = _text(data_dir, "01lhHg8H9p")      # numeric; [29] "One for all: ..." cited 10 times
    before = extract_markdown(text)
    gone = _ref(before, 29)
    assert gone.title.startswith("One for all") and gone.mentions == 10
    seeded, edits = delete_work(text, 29)
    assert edits >= 1
    assert check_deleted(text, seeded, gone.title) is None
    after = extract_markdown(seeded)
    assert len(after.references) == len(before.references) - 1
    assert not any(r.title == gone.title for r in after.references)
    body = body_text(seeded)
    assert not re.search(r"\[(?:[\d,;\s\u2013-]*\D)?29(?:\D[\d,;\s\u2013-]*)?\]", body)
    # the text is kept: only markers and the entry's line changed
    assert len(text) - len(seeded) < 400 + 40 * gone.mentions
    assert "One for all" in body or "OFA" in body


@pytest.mark.data
def test_author_year_paper_loses_its_parenthetical_and_narrative_citations(data_dir):
    text = _text(data_dir, "0ZeONp33f0")      # author-year; "Barlag et al., 2024" cited 5 times
    before = extract_markdown(text)
    gone = _ref(before, 2)
    assert gone.cite == "Barlag et al., 2024" and gone.mentions == 5
    seeded, _ = delete_work(text, 2)
    assert check_deleted(text, seeded, gone.title) is None
    others = {r.title: r.mentions for r in before.references if r.target != 2}
    assert {r.title: r.mentions for r in extract_markdown(seeded).references} == others
    assert "Barlag et al., 2024" not in body_text(seeded)


@pytest.mark.data
def test_a_list_numbered_by_position_is_not_seeded(data_dir):
    text = _text(data_dir, "0Gmi8TkUC7")      # numeric keys resolved by list position
    assert extract_markdown(text).stats["numeric_keys_by_position"]
    with pytest.raises(NotSeedable, match="list position"):
        delete_work(text, 32)


def test_check_deleted_notices_a_reference_still_there(data_dir):
    text = _text(data_dir, "01lhHg8H9p")
    title = _ref(extract_markdown(text), 29).title
    assert check_deleted(text, text, title) == "the reference list did not lose exactly one entry"


@pytest.mark.data
def test_named_cited_keeps_cited_references_whose_name_the_body_writes(data_dir):
    text = _text(data_dir, "01lhHg8H9p")
    paper = extract_markdown(text)
    refs = [{"target": r.target, "title": r.title, "mentions": r.mentions, "year": r.year, "paper_id": f"p{r.target}"}
            for r in paper.references]
    body = body_text(text)
    uncited = next(r for r in refs if not r["mentions"])
    names = {"p29": ["OFA"], uncited["paper_id"]: ["OFA"], "p1": ["Zzyzx-Net"]}
    got = named_cited(refs, names, body)
    ids = [c["paper_id"] for c in got]
    assert "OFA" in body and "p29" in ids
    assert next(c for c in got if c["paper_id"] == "p29")["name"] in ("OFA", "One for all")
    assert uncited["paper_id"] not in ids             # named but never cited
    assert all(c["mentions"] >= 1 for c in got)
    # unlinked references (no paper id) are never picked
    assert named_cited([{**r, "paper_id": None} for r in refs], names, body) == []
    assert pick(got, 1, "01lhHg8H9p") == pick(list(reversed(got)), 1, "01lhHg8H9p")
    assert pick([], 1, "x") is None


def test_bootstrap_interval():
    assert bootstrap_ci([True] * 10) == [1.0, 1.0]
    assert bootstrap_ci([]) == [0.0, 0.0]
    lo, hi = bootstrap_ci([True, False] * 100)
    assert lo < 0.5 < hi and hi - lo < 0.2
    assert bootstrap_ci([True, False] * 100) == [lo, hi]


def test_a_paper_left_without_references_is_not_a_seeded_draft(data_dir):
    path = next(Path(data_dir).glob("neurips/fulltext_2024*/AVd7DpiooC.md.gz"))   # one reference read
    text = read_gz(path)
    (only,) = extract_markdown(text).references
    seeded, _ = delete_work(text, only.target)
    assert check_deleted(text, seeded, only.title).startswith("the seeded text cannot be read")

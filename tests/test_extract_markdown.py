"""extract_markdown on real NeurIPS Nougat full texts (values checked by reading the files) and
on bad input (empty, binary, no references, huge): a status and a message, never an exception."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from mustcite.config import find_data_dir
from mustcite.extract import failures
from mustcite.extract.markdown import MAX_CHARS, extract_markdown, parse_document
from mustcite.extract.records import validate_reference_list


def _text(year: int, pid: str) -> str:
    path = Path(find_data_dir()) / "neurips" / f"fulltext_{year}" / f"{pid}.md.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def vasa(data_dir):       # VASA-1, NeurIPS 2024 oral: numeric, entries "* (1)".."* (21)" then "* [22]".."* [77]"
    return extract_markdown(_text(2024, "5zSCSE0k41"), "5zSCSE0k41.md.gz")


def _by_cite(paper, cite):
    return next(r for r in paper.references if r.cite == cite)


@pytest.mark.data
def test_numeric_paper_reference_list(vasa):
    assert vasa.status == "ok" and vasa.failure_modes == []
    assert vasa.stats["citation_style"] == "numeric"
    assert len(vasa.references) == 77 and vasa.stats["max_ref_number"] == 77
    assert [r.target for r in vasa.references] == list(range(1, 78))
    assert vasa.title == "VASA-1: Lifelike Audio-Driven Talking Faces"
    assert vasa.abstract.startswith("We introduce VASA, a framework for generating lifelike talking faces")
    r = _by_cite(vasa, "2")
    assert r.title.startswith("L2cs-net: Fine-grained gaze estimation") and r.year == 2023
    assert r.authors[0] == "Ahmed A Abdelrahman"


@pytest.mark.data
def test_numeric_group_resolves_each_member_with_section(vasa):
    sentence = "promising accuracy obtained [39, 61]."
    for cite, title in (("39", "A lip sync expert is all you need"), ("61", "Lipformer")):
        ref = _by_cite(vasa, cite)
        assert ref.title.startswith(title)
        ctx = [c for c in ref.contexts if sentence in c.context]
        # its own window, and the window of the sentence before (which cites [.., 39, 61, ..] too)
        assert len(ctx) == 2 and {c.section for c in ctx} == {"1 Introduction"}
        assert any(c.context.endswith(sentence + " The creation of expressive facial dynamics and the "
                                      "subtle nuances of lifelike facial behavior remain largely neglected.")
                   for c in ctx)


@pytest.mark.data
def test_checklist_author_block_and_captions_give_no_context(vasa):
    texts = [c.context for r in vasa.references for c in r.contexts]
    assert texts and not any("Justification:" in t or "Guidelines:" in t for t in texts)
    assert not any("Microsoft Research Asia" in t for t in texts)
    assert not any(t.startswith("Figure ") for t in texts)
    # Nougat wrote section 3's heading as a plain line "Method" between "## 2" and "## 4"
    assert {c.section for r in vasa.references for c in r.contexts} == {
        "1 Introduction", "2 Related Work", "3 Method", "4 Experiments", "5 Conclusion"}


@pytest.mark.data
def test_contexts_deduplicated_and_mentions_counted(vasa):
    for r in vasa.references:
        keys = [(c.section, c.context) for c in r.contexts]
        assert len(keys) == len(set(keys))
        assert r.mentions >= len(r.contexts)
    assert vasa.stats["mentions_resolved"] == vasa.stats["mentions_total"] > 100


@pytest.mark.data
def test_reference_file_follows_schema(vasa):
    validate_reference_list(vasa.to_reference_list())


@pytest.mark.data
def test_semicolon_groups_resolve():
    p = extract_markdown(_text(2023, "009LK0vLcY"))
    s = "independence between the treatment group and pre-treatment covariates [14; 21]."
    for cite in ("14", "21"):
        assert any(s in c.context and c.section == "1 Introduction" for c in _by_cite(p, cite).contexts)
    assert len(p.references) == 35


@pytest.mark.data
def test_author_year_paper_resolves_mentions():
    p = extract_markdown(_text(2024, "4NJBV6Wp0h"))
    assert p.stats["citation_style"] == "author-year" and p.status == "ok"
    assert len(p.references) == 38
    bai = _by_cite(p, "Bai et al., 2022")
    assert bai.title == "Constitutional ai: Harmlessness from ai feedback" and bai.year == 2022
    assert any("constitutional AI (Bai et al., 2022)" in c.context and c.section == "1 Introduction"
               for c in bai.contexts)
    assert _by_cite(p, "Bai et al., 2024").title.startswith("Benchmarking foundation models")


@pytest.mark.data
def test_unlabelled_list_with_numeric_body_resolves_by_number():
    # entries are "* Abramowitz and Stegun [1964] ..." at first, the body cites [n]
    p = extract_markdown(_text(2023, "0Wp3VHX0Gm"))
    assert p.stats["citation_style"] == "numeric" and p.stats["numeric_keys_by_position"]
    assert _by_cite(p, "2").title == "Reverse-time diffusion equation models"
    assert _by_cite(p, "39").raw.startswith("[39] Yang Song, Jascha Sohl-Dickstein")


@pytest.mark.data
def test_alpha_tag_list_with_numeric_body_is_flagged():
    p = extract_markdown(_text(2023, "1GxKVprbwM"))
    assert p.status == "flagged" and "alpha_numeric_mismatch" in p.failure_modes
    assert p.references[1].cite == "ACG+16" and p.references[1].year == 2016


@pytest.mark.data
def test_random_real_papers_are_schema_valid_and_keys_match():
    files = sorted((Path(find_data_dir()) / "neurips" / "fulltext_2024").glob("*.md.gz"))
    for path in random.Random(7).sample(files, 8):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            p = extract_markdown(fh.read(), str(path))
        assert p.status in ("ok", "flagged"), (path, p.messages)
        validate_reference_list(p.to_reference_list(), path=path)
        assert [r.target for r in p.references] == list(range(1, len(p.references) + 1))
        if p.stats["citation_style"] == "numeric" and not p.stats["numeric_keys_by_position"]:
            for r in p.references:      # the cite key is the entry's own [n] label
                if r.raw.startswith("["):
                    assert r.raw.startswith(f"[{r.cite}]"), (path, r.cite, r.raw[:30])


# --- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("text,mode", [
    ("", "empty"), ("   \n\n  ", "empty"),
    (bytes(range(256)).decode("latin-1") * 50, "garbage"),
    ("# A title\n\n## 1 Introduction\n\n" + "We study things [1] in depth. " * 50, "no_references"),
    ("# T\n\n## 1 Intro\n\nText [1] here and more words to read on. " * 3 + "\n\n## References\n\n", "no_references"),
])
def test_bad_input_fails_with_message(text, mode):
    p = extract_markdown(text, "bad.mmd")
    assert p.status == "failed" and mode in p.failure_modes and p.messages
    assert p.references == [] and p.to_reference_list() == []


def test_huge_text_fails_fast():
    p = extract_markdown("word " * (MAX_CHARS // 5 + 10), "huge.mmd")
    assert p.status == "failed" and p.failure_modes == ["too_long"]


def test_references_without_years_fail():
    text = ("# T\n\n## 1 Introduction\n\n" + "We cite a prior method [1] here. " * 20 +
            "\n\n## References\n\n* [1] A. Smith. A title without a date. Journal.\n")
    p = extract_markdown(text)
    assert p.status == "failed" and "no_references" in p.failure_modes
    assert p.stats["n_dropped_no_year"] == 1
    # a draft keeps it: the reference counts as cited (matched by title), with a note
    d = extract_markdown(text, keep_undated=True)
    assert d.status == "ok" and [(r.cite, r.year, r.mentions) for r in d.references] == [("1", None, 20)]
    assert d.stats["n_dropped_no_year"] == 0
    assert d.messages == ["1 reference(s) without a year, matched by title alone"]


def test_markdown_status_comes_from_the_failure_report(monkeypatch):
    no_entries = "# T\n\n## 1 Intro\n\nText [1] here and more words to read on. " * 3 + "\n\n## References\n\n"
    undated = ("# T\n\n## 1 Introduction\n\n" + "We cite a prior method [1] here. " * 20 +
               "\n\n## References\n\n* [1] A. Smith. A title without a date. Journal.\n")
    outcomes = [(p.status, p.failure_modes, p.messages)
                for p in (extract_markdown(""), extract_markdown(no_entries), extract_markdown(undated))]
    assert outcomes == [("failed", ["empty"], ["empty text"]),
                        ("failed", ["no_references"], ["the reference section has no entries"]),
                        ("failed", ["no_references"], ["none of the 1 reference entries has a four-digit year"])]
    # FATAL alone decides: the same modes and messages, another status
    monkeypatch.setattr(failures, "FATAL", failures.FATAL - {"empty", "no_references"})
    assert [(p.status, p.failure_modes, p.messages)
            for p in (extract_markdown(""), extract_markdown(no_entries), extract_markdown(undated))] == [
        ("flagged", *o[1:]) for o in outcomes]
    monkeypatch.setattr(failures, "FATAL", failures.FATAL | {"reordering"})
    reordered = extract_markdown("# T\n\n###### Abstract\n\nWe do things.\n\n## 1 Introduction\n\n"
                                 "Smith built it [13]. Jones refined it [5]. We extend both.\n\n## References\n\n"
                                 "* [13] A. Smith. The original method. In ICML, 2019.\n"
                                 "* [5] B. Jones. A refinement. In NeurIPS, 2020.\n")
    assert reordered.status == "failed" and reordered.failure_modes == ["reordering"]


def test_reordered_labels_flagged_but_keys_follow_labels():
    text = ("# T\n\n###### Abstract\n\nWe do things.\n\n## 1 Introduction\n\n"
            "Smith built it [13]. Jones refined it [5]. We extend both.\n\n## References\n\n"
            "* [13] A. Smith. The original method. In ICML, 2019.\n"
            "* [5] B. Jones. A refinement. In NeurIPS, 2020.\n"
            "* [6] C. Lee. Undated note. Blog.\n")
    p = extract_markdown(text)
    assert p.status == "flagged" and p.failure_modes == ["reordering"]
    assert [(r.target, r.cite, r.title) for r in p.references] == [
        (1, "13", "The original method"), (2, "5", "A refinement")]
    assert p.references[0].contexts[0].context == "Smith built it [13]. Jones refined it [5]. We extend both."
    assert p.references[0].contexts[0].section == "1 Introduction"
    assert p.stats["n_dropped_no_year"] == 1 and p.abstract == "We do things."


def test_ocr_digit_keys_repaired_and_recorded():
    text = ("# T\n\n## 2 Related Work\n\nEarly work [l0, 2] matters. It is old.\n\n## References\n\n" +
            "".join(f"* [{n}] A. Author. Title number {n}. Venue, 2019.\n" for n in range(1, 11)))
    p = extract_markdown(text)
    assert "ocr_digit" in p.failure_modes and p.status == "flagged"
    ten = _by_cite(p, "10")
    assert ten.mentions == 1 and ten.contexts[0].section == "2 Related Work"


@pytest.mark.data
def test_checklist_before_references_is_skipped_not_the_end():
    # kD1kpLtrmX puts "### NeurIPS paper checklist" before "## References" (82 entries)
    p = extract_markdown(_text(2024, "kD1kpLtrmX"))
    assert p.status == "ok" and len(p.references) == 82 and p.stats["has_checklist"]
    texts = [c.context for r in p.references for c in r.contexts]
    assert texts and not any("Justification:" in t or "Question:" in t for t in texts)
    assert {c.section for r in p.references for c in r.contexts} >= {"1 Introduction"}


@pytest.mark.data
def test_restarted_list_later_labels_win():
    # 08hStXdT1s: Nougat wrote [1]..[47] (24..47 made up, e.g. "[30] T. Lin ... Feature pyramid"),
    # then re-read the page from "[24] T.-Y. Lin, M. Maire ..." (COCO) to [54]
    p = extract_markdown(_text(2023, "08hStXdT1s"))
    assert p.status == "flagged" and "reordering" in p.failure_modes
    assert len(p.references) == 54 and p.stats["n_superseded"] == 24
    assert _by_cite(p, "24").raw.startswith("[24] T.-Y. Lin, M. Maire")
    assert _by_cite(p, "30").raw.startswith("[30] D. Y. Park")
    assert any("SFTN [30]" in c.context for c in _by_cite(p, "30").contexts)
    assert len({r.cite for r in p.references}) == 54


@pytest.mark.data
def test_second_reference_list_is_not_mixed_in():
    # lD8xaUWw24 has the paper's list [1]..[63] and a supplement's own list after it; its title is
    # a "##" heading and its abstract has no heading
    p = extract_markdown(_text(2023, "lD8xaUWw24"))
    assert p.stats["n_reference_sections"] == 2 and len(p.references) == 63
    assert p.title.startswith("An information-theoretic quantification of the content")
    assert p.abstract.startswith("Cognitive functions, such as perception and action")
    kol = _by_cite(p, "30")
    assert kol.raw.startswith("[30] A. Kolchinsky. A novel approach to the partial information")
    assert any("other PID redundancy measures [22; 5; 2; 18; 30]" in c.context for c in kol.contexts)
    assert not any(c.section == "Appendix" for r in p.references for c in r.contexts)


@pytest.mark.parametrize("stem,near", [("02HWT9c4Lp", True),    # the page before the reference heading failed
                                       ("0bfWpiwPLZ", True),    # the page right after the last entry failed
                                       ("0KseSacluJ", False)])  # an appendix page well after the list
@pytest.mark.data
def test_failed_ocr_pages_near_the_references_are_flagged(stem, near):
    path = Path(find_data_dir()) / "neurips" / "fulltext_2024_partial" / f"{stem}.md.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        text = fh.read()
    doc = parse_document(text)
    assert doc.failed_pages == 1 and doc.references_span[0] >= 0
    assert doc.bibliography_may_be_incomplete is near
    paper = extract_markdown(text)
    assert paper.stats["failed_pages"] == 1 and paper.stats["bibliography_may_be_incomplete"] is near
    assert ("incomplete_bibliography" in paper.failure_modes) is near
    if near:
        assert paper.status == "flagged" and any("failed in OCR" in m for m in paper.messages)


@pytest.mark.data
def test_whole_full_texts_have_no_failed_page():
    for path in sorted((Path(find_data_dir()) / "neurips" / "fulltext_2024").glob("*.md.gz"))[:5]:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            doc = parse_document(fh.read())
        assert doc.failed_pages == 0 and not doc.bibliography_may_be_incomplete

"""Unit tests of the extraction building blocks on hard cases: sentence splitter, reference
parser, citation finder/resolver, context windows, section labels and failure detection."""

from __future__ import annotations

import re

import pytest

from mustcite.extract import failures
from mustcite.extract.citations import RefIndex, find_citations
from mustcite.extract.contexts import context_windows, window_bounds
from mustcite.extract.failures import FATAL, FLAGS, FailureReport, detect_failures, label_disorder
from mustcite.extract.model import ExtractedPaper
from mustcite.extract.references import parse_entries, parse_reference_string, split_entries, split_label
from mustcite.extract.sections import classify, parse_heading
from mustcite.extract.sentences import split_sentences


# --- sentences -------------------------------------------------------------------------------
@pytest.mark.parametrize("text,expected", [
    ("Smith et al. [4] proposed it. We follow them.", ["Smith et al. [4] proposed it.", "We follow them."]),
    ("Results (e.g. on ImageNet) improve by 3.5 points. See Fig. 2 and Eq. 3.",
     ["Results (e.g. on ImageNet) improve by 3.5 points.", "See Fig. 2 and Eq. 3."]),
    ("As shown in Sec. 4.1, i.e. the ablation, it works. J. Smith agrees.",
     ["As shown in Sec. 4.1, i.e. the ablation, it works.", "J. Smith agrees."]),
    ("The loss is \\(x. Y\\) here. Next one.", ["The loss is \\(x. Y\\) here.", "Next one."]),
    ("Is it? Yes! Done.", ["Is it?", "Yes!", "Done."]),
    ("One sentence without a stop", ["One sentence without a stop"]),
    ("It helps [3, 7]. Then (Lee et al., 2020a) disagree.", ["It helps [3, 7].", "Then (Lee et al., 2020a) disagree."]),
])
def test_split_sentences_hard_cases(text, expected):
    assert split_sentences(text) == expected


def test_split_sentences_empty():
    assert split_sentences("") == [] and split_sentences("   ") == []


# --- reference strings -----------------------------------------------------------------------
def test_parse_numeric_entry_first_last_names():
    a, t, y = parse_reference_string("* [1] Alexander Alemi, Ben Poole, and Kevin Murphy. Fixing a broken "
                                     "elbo. In _ICML_, pages 159-168, 2018.")
    assert a == ["Alexander Alemi", "Ben Poole", "Kevin Murphy"]
    assert t == "Fixing a broken elbo" and y == 2018


def test_parse_natbib_key_entry_surname_first_with_arxiv_id():
    raw = ("* Bai et al. (2022) Bai, Y., Kadavath, S., Kundu, S., et al. Constitutional ai: "
           "Harmlessness from ai feedback. _arXiv preprint arXiv:2012.08073_, 2022.")
    assert split_label(raw)[0] == {"key_names": "Bai et al.", "key_year": "2022"}
    a, t, y = parse_reference_string(raw)
    assert a == ["Bai, Y", "Kadavath, S", "Kundu, S"]
    assert t == "Constitutional ai: Harmlessness from ai feedback" and y == 2022   # not 2012 from arXiv id


def test_parse_year_after_authors_and_pages_not_year():
    a, t, y = parse_reference_string("* [10]M. B. Cohen, Y. T. Lee, and A. Sidford (2015) Uniform sampling "
                                     "for matrix approximation. In ITCS, pp. 181-190.")
    assert a == ["M. B. Cohen", "Y. T. Lee", "A. Sidford"] and y == 2015
    assert t == "Uniform sampling for matrix approximation"
    assert parse_reference_string("A. B. Smith. Title. Journal, 33:1877-1901.")[2] is None


def test_parse_single_surname_first_author():
    a, t, y = parse_reference_string("* Flesch (1948) Flesch, R. A new readability yardstick. "
                                     "_Journal of Applied Psychology_, 32(3):221-233, 1948.")
    assert a == ["Flesch, R"] and t == "A new readability yardstick" and y == 1948


def test_labels_alpha_and_ocr():
    assert split_label("* [ACG\\({}^{+}\\)16] Martin Abadi. Deep learning. 2016.")[0] == {"tag": "ACG+16"}
    assert split_label("* [l2] A. Smith. T. 2019.")[0] == {"number": 12, "ocr_repaired_label": True}
    assert split_label("* (3) A. Smith. T. 2019.")[0] == {"number": 3}
    assert "number" not in split_label("* [2024] Gemini models. 2024.")[0]    # a year, not a label


def test_split_entries_runs_together_and_label_only_lines():
    got = split_entries(["* [1] A. Smith. First title. 2019. [2] B. Lee. Second title. 2020.",
                         "* [3]", "* C. Kim. Third title. 2021."])
    assert got == ["[1] A. Smith. First title. 2019.", "[2] B. Lee. Second title. 2020.",
                   "[3] C. Kim. Third title. 2021."]


# --- citations -------------------------------------------------------------------------------
@pytest.fixture
def numeric_index():
    return RefIndex(parse_entries([f"* [{n}] A. Author{n}. Title {n}. Venue, 20{n:02d}."
                                   for n in (1, 2, 3, 4, 5, 7, 10, 14)]))


def _keys(ms):
    return [(m.key, m.entry) for m in ms]


def test_numeric_groups_ranges_and_labels_not_positions(numeric_index):
    ms = find_citations("Prior work [3, 7, 14] and [2-4] and [1\u20132]; also [4; 10].", "numeric", numeric_index)
    assert [m.key for m in ms] == ["3", "7", "14", "2", "3", "4", "1", "2", "4", "10"]
    # [14] is the 8th entry of the list: resolved by its own label, not by position 14
    assert numeric_index.entries[ms[2].entry].number == 14


def test_numeric_ocr_repair_and_math_not_citations(numeric_index):
    ms = find_citations("See [l0, 3] and [1O] but \\(x\\in[2,3]\\) and the interval [0, 1] and [l].",
                        "numeric", numeric_index)
    assert _keys(ms) == [("10", 6), ("3", 2), ("10", 6)]
    assert [m.repaired for m in ms] == [True, False, True]


def test_unknown_number_is_unresolved(numeric_index):
    assert _keys(find_citations("As in [99].", "numeric", numeric_index)) == [("99", None)]


@pytest.fixture
def ay_index():
    return RefIndex(parse_entries([
        "* Smith et al. (2020a) Smith, J., Doe, A., and Roe, B. Foo. In ICML, 2020.",
        "* Smith et al. (2020b) Smith, J. and Poe, C. Bar. In NeurIPS, 2020.",
        "* Lee and Kim (2019) Lee, A. and Kim, B. Baz. In ICLR, 2019.",
        "* van den Oord et al. (2016) Aaron van den Oord, Sander Dieleman. Wavenet. arXiv, 2016.",
        "* Vaswani, A., Shazeer, N. (2017). Attention is all you need. NeurIPS.",
    ]))


def test_author_year_parenthetical_narrative_suffixes(ay_index):
    s = ("Prior work (e.g., Smith et al., 2020a; Lee and Kim, 2019) and Smith et al. (2020a, b) "
         "and van den Oord et al. [2016] show it, as does (Vaswani and Shazeer, 2017).")
    assert _keys(find_citations(s, "author-year", ay_index)) == [
        ("Smith et al., 2020a", 0), ("Lee and Kim, 2019", 2), ("Smith et al., 2020a", 0),
        ("Smith et al., 2020b", 1), ("van den Oord et al., 2016", 3), ("Vaswani and Shazeer, 2017", 4)]


def test_author_year_ambiguous_without_suffix_is_unresolved(ay_index):
    assert _keys(find_citations("It was shown (Smith et al., 2020).", "author-year", ay_index)) == [
        ("Smith et al., 2020", None)]


def test_alpha_tags():
    ix = RefIndex(parse_entries(["* [DKS17] A. Dwork. T. 2017.", "* [KPR\\({}^{+}\\)17] B. K. T. 2017."]))
    ms = find_citations("Following [DKS17, KPR+17] we ...", "alpha", ix)
    assert _keys(ms) == [("DKS17", 0), ("KPR+17", 1)]


# --- windows, sections, failures --------------------------------------------------------------
@pytest.mark.parametrize("n,i,bounds", [(1, 0, (0, 1)), (2, 1, (0, 2)), (5, 0, (0, 3)), (5, 4, (2, 5)),
                                        (5, 2, (1, 4))])
def test_window_edge_rules(n, i, bounds):
    assert window_bounds(n, i) == bounds


def test_context_window_text():
    assert context_windows(["A.", "B [1].", "C.", "D."], 1) == "A. B [1]. C."


def test_section_labels():
    h = parse_heading
    assert classify(h("## 4 Experiments"), after_references=False, current="3 Method") == "4 Experiments"
    assert classify(h("### 4.2 Baselines"), after_references=False, current="4 Experiments") == "4 Experiments"
    assert classify(h("### Baselines"), after_references=False, current="4 Experiments") == "4 Experiments"
    assert classify(h("###### Abstract"), after_references=False, current="") == "Abstract"
    assert classify(h("## Acknowledgments"), after_references=False, current="5 Conclusion") == "Back matter"
    assert classify(h("## Appendix A Proofs"), after_references=True, current="References") == "Appendix"
    assert classify(h("## B Extra results"), after_references=True, current="Appendix") == "Appendix"
    assert classify(h("### NeurIPS Paper Checklist"), after_references=True, current="Appendix") == "Checklist"
    assert classify(h("## References"), after_references=False, current="5 Conclusion") == "References"


def test_label_disorder_and_failure_modes():
    assert label_disorder([1, 2, 3, None, 5]) == (0, 0, 0)
    assert label_disorder([5, 13, 1, 2]) == (1, 0, 9)
    rep = detect_failures(numbers=[5, 13, 1, 2], n_tagged=0, n_entries=4, style="numeric",
                          body_counts={"numeric": 9, "alpha": 0}, mentions_total=9, mentions_resolved=9,
                          ocr_repairs=1, unknown_numbers=0)
    assert rep.modes == ["reordering", "ocr_digit"] and rep.status == "flagged"
    rep = detect_failures(numbers=[None] * 10, n_tagged=8, n_entries=10, style="alpha",
                          body_counts={"numeric": 30, "alpha": 0}, mentions_total=0, mentions_resolved=0,
                          ocr_repairs=0, unknown_numbers=0)
    assert "alpha_numeric_mismatch" in rep.modes
    assert detect_failures(numbers=[], n_tagged=0, n_entries=0, style="numeric", body_counts={},
                           mentions_total=0, mentions_resolved=0, ocr_repairs=0,
                           unknown_numbers=0).status == "failed"


def test_fatal_modes_decide_the_status(monkeypatch):
    rep = FailureReport()
    assert rep.status == "ok"
    assert rep.add("reordering", "labels out of order").add("reordering", "again") is rep
    assert (rep.modes, rep.messages, rep.status) == (["reordering"], ["labels out of order", "again"], "flagged")
    rep.add("no_references", "no reference section found")
    assert rep.status == "failed"
    # the status follows FATAL and nothing else
    monkeypatch.setattr(failures, "FATAL", FATAL - {"no_references"})
    assert rep.status == "flagged"
    monkeypatch.setattr(failures, "FATAL", FATAL | {"reordering"})
    assert FailureReport().add("reordering").status == "failed"


def test_finish_records_the_report_on_the_paper():
    paper = ExtractedPaper(source_path="p.md", method="markdown", messages=["a note of the path"])
    rep = FailureReport().add("no_mentions", "no in-text citation was found").add("undefined_keys")
    assert rep.finish(paper) is paper
    assert (paper.status, paper.failure_modes, paper.messages) == (
        "flagged", ["no_mentions", "undefined_keys"], ["a note of the path", "no in-text citation was found"])
    # a later report adds its modes once, after those there, and the status counts them all
    FailureReport().add("undefined_keys").add("schema", "bad list").finish(paper)
    assert (paper.status, paper.failure_modes) == ("failed", ["no_mentions", "undefined_keys", "schema"])
    assert paper.messages[-1] == "bad list"
    assert FailureReport().finish(ExtractedPaper(source_path="", method="tei")).status == "ok"


def test_every_mode_has_a_line_in_the_module_doc():
    assert not FATAL & FLAGS
    doc = failures.__doc__
    flags, fatal = doc.split("Fatal (status ``failed``):")
    bullet = re.compile(r"^\* ``(\w+)``", re.M)
    assert set(bullet.findall(flags)) == FLAGS and set(bullet.findall(fatal)) == FATAL


def test_plain_line_headings_fill_numbering_gaps():
    from mustcite.extract.markdown import parse_document
    text = ("# Title\n\n###### Abstract\n\nWe study.\n\n## 1 Introduction\n\nIntro text [1].\n\n"
            "## 2 Related Work\n\nOld work [2].\n\nOur Framework\n\nWe build it [3].\n\n"
            "We also know that\n\n## 4 Experiments\n\nWe test [4].\n\nConclusion\n\nDone [5].\n")
    labels = [(p.section, p.text) for p in parse_document(text).paragraphs]
    assert labels == [("Abstract", "We study."), ("1 Introduction", "Intro text [1]."),
                      ("2 Related Work", "Old work [2]."), ("3 Our Framework", "We build it [3]."),
                      ("3 Our Framework", "We also know that"), ("4 Experiments", "We test [4]."),
                      ("Conclusion", "Done [5].")]


def test_hyperparameter_grids_are_not_citations():
    # Real sentences from the appendix of 01lhHg8H9p (65 references): value lists, not citations.
    from mustcite.extract.citations import RefIndex, find_citations
    from mustcite.extract.references import RefEntry

    idx = RefIndex([RefEntry(raw=f"[{n}] A. Author. Title {n}. 2020.", position=n - 1, number=n)
                    for n in range(1, 66)])
    grid = ("For GLEM, we grid-search the GNN hyperparameters num_layers in [2, 3, 4], "
            "hidden_dim in [64, 128, 256], dropout in [0.3, 0.5, 0.6].")
    assert find_citations(grid, "numeric", idx) == []
    assert find_citations("batch_size in [4, 8, 16], label smoothing in [0, 0.1].", "numeric", idx) == []
    # ordinary citations, including "in [n]" without value cues, still count
    keys = [m.key for m in find_citations("as shown in [4], GCN [12, 13] and [2-4] differ.", "numeric", idx)]
    assert keys == ["4", "12", "13", "2", "3", "4"]


def test_reference_parser_long_acl_author_list_and_initials_first():
    from mustcite.extract.references import parse_reference_string

    many = ", ".join(f"Author{i} Name{i}" for i in range(30))
    _, title, year = parse_reference_string(
        many + ", and C. Lee Giles. 2014. CiteSeerX: AI in a digital library search engine. In AAAI.")
    assert (title, year) == ("CiteSeerX: AI in a digital library search engine", 2014)
    authors, title, year = parse_reference_string(
        "F. Pedregosa, G. Varoquaux, A. Gramfort, V. Michel, B. Thirion, O. Grisel, M. Blondel, "
        "P. Prettenhofer, R. Weiss, V. Dubourg, J. Vanderplas, A. Passos, D. Cournapeau, M. Brucher, "
        "M. Perrot, and E. Duchesnay. Scikit-learn: Machine learning in Python. Journal of Machine "
        "Learning Research, 12:2825-2830, 2011.")
    assert title == "Scikit-learn: Machine learning in Python" and year == 2011
    assert authors[:2] == ["F. Pedregosa", "G. Varoquaux"]

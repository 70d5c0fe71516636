"""The rules that keep check-refs from false alarms, and the near-miss title rule, one by one (no
corpus needed: entries and records are written by hand; the cases are those met in real drafts)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mustcite.refcheck.check import authors_agree, preprint_year
from mustcite.refcheck.compare import _doi_issue, compare_authors, compare_year, title_difference, trusted_authors
from mustcite.refcheck.entries import Entry, entries_from_bib
from mustcite.refcheck.index import Record, complete_venue_years, doi_series
from mustcite.refcheck.person_names import same_person
from mustcite.refcheck.venue import classify_venue, names_a_kind, venue_key


@pytest.mark.parametrize("text,kind,code", [
    ("Adv. Neural Inform. Process. Syst.", "held", "NeurIPS"),                  # the NeurIPS author kit
    ("IEEE Conf. Comput. Vis. Pattern Recog.", "held", "CVPR"),                 # the CVPR author kit
    ("Int. Conf. Learn. Represent.", "held", "ICLR"),
    ("Annu. Meet. Assoc. Comput. Linguist.", "held", "ACL"),
    ("Proceedings of the 2025 Conference of the Nations of the Americas Chapter of the Association for "
     "Computational Linguistics: Human Language Technologies", "held", "NAACL"),
    ("Proceedings of the 2021 AAAI/ACM Conference on AI, Ethics, and Society", "other", None),
    ("Proceedings of the International AAAI Conference on Web and Social Media", "other", None),
    ("Energy Minimization Methods in Computer Vision and Pattern Recognition", "other", None),
    ("Advances in Neural Information Processing Systems (NeurIPS); Workhop on Program Transformations",
     "ancillary", "NeurIPS"),
])
def test_venue_spellings(text, kind, code):
    claim = classify_venue(text)
    assert (claim.kind, claim.code) == (kind, code)


def test_a_misspelt_workshop_is_a_workshop():
    assert classify_venue("NeurIPS 2019 Workhop on Program Transformations").track == "workshop"


@pytest.mark.parametrize("entry,record,diff", [
    ("Self-Consistency Improves Chain of Thought Inference in Language Models",
     "Self-Consistency Improves Chain of Thought Reasoning in Language Models",
     "'inference' where the record has 'reasoning'"),
    ("Learning to Summarize with Human Feedback", "Learning to Summarize from Human Feedback", "'with' where"),
    ("Subspace Differential Privacys", "Subspace Differential Privacy", "'privacys' where the record has 'privacy'"),
    ("RRHF: Rank Responses to Align Language Models with Human Feedback without tears",
     "RRHF: Rank Responses to Align Language Models with Human Feedback", "'without' 'tears' added"),
    # not a content word: case, punctuation, hyphenation, spelling, articles, a subtitle, a slip in a long word
    ("self-supervised pretraining of visual features", "Self Supervised Pre-Training of Visual Features", None),
    ("Modelling Colour Labelled Data", "Modeling Color Labeled Data", None),
    ("Characterizing risk of fairwashing", "Characterizing the risk of fairwashing", None),
    ("Attention Is All You Need", "Attention is All you Need: Transformers for Translation", None),
    ("Predictability of Language Model Performance", "Predictability of Langauge Model Performance", None),
    ("Gauss-Newton{\\textquoteright}s Low-Rank Structure", "Gauss-Newton’s Low-Rank Structure", None),
])
def test_title_difference(entry, record, diff):
    got = title_difference(entry, record)
    assert (got is None) if diff is None else (got is not None and diff in got), got


@pytest.mark.parametrize("a,b,same", [
    ("Daniel Kuhn", "Daniel Huhn", True),          # a slip in the record: one letter, same first name
    ("David Kuhn", "Daniel Huhn", False),
    ("Shin-Fang Ch'ng", "Shin-Fang Chng", True),
    ("Wei Li", "Wei Lu", False),                   # short family names: one letter is another person
])
def test_same_person(a, b, same):
    assert same_person(a, b) is same


def test_author_lists_as_written():
    text = ("@misc{a, title={T}, author={Anonymous Author et al.}, url={https://openreview.net/forum?id=wXgk\\_iC}, "
            "year=2024}\n@misc{b, title={Task Difficulty Aware Parameter Allocation &amp; Regularization}, "
            "author={{Olof Enqvist and Fredrik Kahl}}, year=2008}\n")
    a, b = entries_from_bib(text, "x.bib")[0]
    assert (a.authors, a.others, a.url) == (["Anonymous Author"], True, "https://openreview.net/forum?id=wXgk_iC")
    assert b.authors == ["Olof Enqvist", "Fredrik Kahl"] and "&" in b.title and "amp" not in b.title


def test_complete_years_follow_growth_and_skip_journals():
    counts = {("ICLR", 2022): 1095, ("ICLR", 2023): 1575, ("ICLR", 2025): 3721, ("IJCAI", 2020): 585,
              ("IJCAI", 2021): 99, ("JMLR", 2017): 139, ("JMLR", 2016): 216}
    held = complete_venue_years(counts)
    assert ("ICLR", 2022) in held                  # a later, larger year says nothing of it
    assert ("IJCAI", 2021) not in held             # under half of the year before: a partial list
    assert not any(v == "JMLR" for v, _ in held)   # a journal's year is no closed list


def rec(authors, venue="NeurIPS", year=2019) -> Record:
    return Record("p", "T", list(authors), venue, year)


def test_record_lists_that_cannot_be_compared():
    long = Entry("e", authors=["A One", "B Two", "C Three"])
    assert not trusted_authors(long, rec(["BigScience Workshop"]))      # a group name for a long list
    assert not trusted_authors(long, rec(["A One", "B Two (Google)"]))   # stray characters
    dup = Entry("d", authors=["Tim Salimans", "Xi Chen"])
    assert compare_authors(dup, rec(["Tim Salimans", "Xi Chen", "Xi Chen"])) == []    # a name the source repeated


def test_an_earlier_version_is_dated_by_its_arxiv_id():
    pub = rec(["A One"], "NeurIPS", 2017)
    assert preprint_year(Entry("v7", year=2023, arxiv="1706.03762"), pub) is None     # arXiv dates its latest version
    assert preprint_year(Entry("dec", year=2024, arxiv="2501.00070"), pub) is None    # sent in late December
    assert preprint_year(Entry("early", year=2015, arxiv="1706.03762"), pub).field == "year"
    assert authors_agree(Entry("e", authors=["A One", "B Two"]), rec(["A One", "B Two", "C Three"]))
    assert not authors_agree(Entry("e", authors=["X Y", "Z W"]), rec(["A One", "B Two"]))


def test_a_year_off_by_one_is_wrong_in_every_venue():
    claim = classify_venue("Advances in Neural Information Processing Systems")
    late = Entry("e", year=2024, volume=36)        # volume 36 is NeurIPS 2023, printed in 2024
    assert compare_year(late, claim, rec([], "NeurIPS", 2023), 2023).field == "year"
    uai = classify_venue("Uncertainty in Artificial Intelligence")
    assert compare_year(Entry("u", year=2020), uai, rec([], "UAI", 2019), 2019) is not None


def test_doi_that_cannot_be_the_papers():
    index = SimpleNamespace(doi_registrant_known=lambda d: not d.startswith("10.47281"))
    own = ["10.1109/cvpr46437.2021.00466"]
    assert "registrant 10.47281" in _doi_issue("10.47281/bed.57189", "x", own, index).why
    assert "the record's DOI is" in _doi_issue("10.1109/cvpr46437.2021.00469", "x", own, index).why
    assert _doi_issue("10.48550/arxiv.2012.00001", "x", own, index) is None
    assert doi_series("10.1609/AAAI.V36I11.21500") == "10.1609/aaai.v36i11" and doi_series("10.48550/arXiv.1") is None


def test_venue_names_looked_up():
    key = venue_key("Proceedings of the 3rd Conference on Reward Learning and Alignment")
    assert key == "reward learning alignment"
    assert names_a_kind("Conference on Reward Learning and Alignment") and not names_a_kind("NNetNav")


# ---- completeness measured, tracks, witnesses (figures of the real data, entries met in real drafts) ----

def test_completeness_is_measured_not_assumed():
    from collections import Counter

    from mustcite.refcheck.coverage import measure

    # NeurIPS 2019: two lists (ML Anthology, the paper lists) agree: the capture-recapture estimate is what is held
    nips = measure(1445, Counter({"mlanthology": 1428, "paperlists": 1427, "paper": 2}), 1420, None, True)
    assert nips.complete and nips.basis == "two lists" and nips.measured == 1445
    # ICML 2004: 117 papers from one list: nothing says it is whole (a real ICML 2004 paper is missing from it)
    icml = measure(117, Counter({"mlanthology": 117}), 0, None, True)
    assert not icml.complete and icml.measured is None and "one list" in icml.why_not()
    # CVPR 2019: one list, but the proceedings' own count (the CVF index) says it is whole
    assert measure(1294, Counter({"paperlists": 1294}), 0, 1294, True).basis == "official count"
    # ACL 2023: the ACL Anthology's own list
    assert measure(1075, Counter({"yhamidullah-acl-anthology": 1075}), 0, None, True).complete
    # a second list of orals only (under half the papers) is no witness
    assert not measure(860, Counter({"mlanthology": 860, "ICLR-Oral": 167}), 167, None, True).complete
    # two lists that each miss papers: the estimate is above what they hold together
    short = measure(1000, Counter({"a": 900, "b": 900}), 810, None, True)
    assert short.measured == 1000 and short.complete
    assert not measure(1000, Counter({"a": 900, "b": 900}), 700, None, True).complete     # estimate 1,157
    assert not measure(1000, Counter({"a": 1000, "b": 990}), 990, None, False).complete   # a partial year


@pytest.mark.parametrize("field,pages", [
    ("pages={5}", 5), ("pages = {1--4}", 4), ('pages = "6000-6010"', 11), ("pages = 7", 7), ("pages = {e1234}", None),
    ("volume = {5}", None),
])
def test_page_count(field, pages):
    from mustcite.refcheck.coverage import page_count

    text = f"@inproceedings{{x,\n  title = {{T}},\n  {field},\n  year = {{2019}}\n}}\n@misc{{y, pages={{99}}}}\n"
    entry = entries_from_bib(text, "x.bib")[0][0]
    assert page_count(entry.pages) == pages, entry.pages


def test_tracks_an_entry_could_belong_to():
    from mustcite.refcheck.coverage import possible_tracks

    assert possible_tracks("NeurIPS", 2019, "NeurIPS", "5") == [("workshop", "5 pages: a short paper")]
    assert [k for k, _ in possible_tracks("NeurIPS", 2023, "NeurIPS", "100--110")] == ["datasets-benchmarks"]
    assert possible_tracks("NeurIPS", 2019, "Advances in Neural Information Processing Systems", "") == []
    iaai = "Proceedings of the AAAI Conference on Artificial Intelligence (Innovative Applications of AI)"
    assert [k for k, _ in possible_tracks("AAAI", 2021, iaai, "")] == ["co-located"]
    assert [k for k, _ in possible_tracks("EMNLP", 2021, "EMNLP", "")] == ["findings"]


def test_a_record_name_cut_short_is_the_same_person():
    entry = Entry("e", authors=["Stephane Lafontaine", "Jane Smith"])
    notes: list[str] = []
    assert compare_authors(entry, rec(["Stephane Lafon", "Jane Smith"]), notes=notes) == []
    assert notes and "cut short" in notes[0]
    man = Entry("m", authors=["Dandelion Mané", "Rafal Jozefowicz"])
    assert compare_authors(man, rec(["Dandelion Man", "Rafal Jozefowicz"])) == []
    # another family name is another person; a two-letter start says nothing
    assert compare_authors(Entry("x", authors=["Wei Liu", "A Two"]), rec(["Wei Li", "A Two"]))


def test_where_citing_papers_place_a_work():
    from mustcite.refcheck.check import consensus_conflict

    nips = classify_venue("Advances in Neural Information Processing Systems")
    www = Record("w", "GraphPrompt", [], "Proceedings of the ACM Web Conference 2023", 2023, "catalogue")
    assert "Web Conference" in consensus_conflict(www, nips, 2023)
    cpc = Record("w", "Representation Learning with Contrastive Predictive Coding", [], "arXiv preprint", 2018,
                 "catalogue")
    assert consensus_conflict(cpc, nips, 2021) == "an arXiv preprint of 2018"
    assert consensus_conflict(cpc, nips, 2019) == ""          # a workshop paper's preprint is of its year
    same = Record("w", "T", [], "NeurIPS", 2021, "catalogue")
    assert consensus_conflict(same, nips, 2021) == ""

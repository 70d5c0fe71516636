"""The linker's repairs of mis-parsed reference titles (:func:`mustcite.extract.link.match_reference`):
each rule on real references from the NeurIPS/ICLR extraction whose parsed title linked to nothing,
against a small index of the real corpus titles (no data folder needed)."""

from __future__ import annotations

import pytest

from mustcite.extract.link import (
    TitleIndex,
    is_title_like,
    link_references,
    match_reference,
    raw_segments,
    recover_title,
    repaired_titles,
)

CORPUS = [  # (paper_id, title, year) as in the corpus
    ("nguyen20", "Global Convergence of Deep Networks with One Wide Layer Followed by Pyramidal Topology", 2020),
    ("zhang21", "On the Convergence and Sample Efficiency of Variance-Reduced Policy Gradient Method", 2021),
    ("i2sb", "I$^2$SB: Image-to-Image Schrödinger Bridge", 2023),
    ("vit22b", "Scaling Vision Transformers to 22 Billion Parameters", 2023),
    ("mplug", "mPLUG: Effective and Efficient Vision-Language Learning by Cross-modal Skip-connections", 2022),
    ("poth21", "What to Pre-Train on? Efficient Intermediate Task Selection", 2021),
    ("sparsegpt", "SparseGPT: Massive Language Models Can be Accurately Pruned in One-Shot", 2023),
    ("adaptformer", "AdaptFormer: Adapting Vision Transformers for Scalable Visual Recognition", 2022),
    ("schioppa23", "Theoretical and Practical Perspectives on what Influence Functions Do", 2023),
    ("seedbench", "SEED-Bench: Benchmarking Multimodal Large Language Models", 2024),
    ("uai21", "Proceedings of the thirty-seventh conference on Uncertainty in Artificial Intelligence — Preface", 2021),
    ("tp4", "Tensor Programs IV: Feature Learning in Infinite-Width Neural Networks", 2021),
    ("tp6", "Tensor Programs VI: Feature Learning in Infinite Depth Neural Networks", 2024),
]


@pytest.fixture(scope="module")
def index() -> TitleIndex:
    return TitleIndex.build([c[0] for c in CORPUS], [c[1] for c in CORPUS], [c[2] for c in CORPUS])


def _ref(title, raw, year):
    return {"title": title, "raw": raw, "year": year, "paper_id": None, "link_score": None}


# ---- IEEE style: the parser kept a volume/page fragment, the title is quoted in raw ---------

IEEE = _ref("33, pp", '[35] Q. N. Nguyen and M. Mondelli, "Global convergence of deep networks with one wide layer '
            'followed by pyramidal topology," _Advances in Neural Information Processing Systems_, vol. 33, '
            'pp. 11 961-11 972, 2020.', 2020)


def test_ieee_page_fragment_title(index):
    assert index.match(IEEE["title"], ref_year=2020, max_year=2023) is None      # the parsed title alone
    assert not is_title_like("33, pp") and not is_title_like("3844-3852, Curran Associates Inc., 2016")
    assert not is_title_like("URL http://papers.nips.cc/paper/2023/hash/d529b9.html") and not is_title_like("")
    assert is_title_like("Global convergence of deep networks")
    assert match_reference(IEEE, index, 2023) == ("nguyen20", 1.0, "repaired")
    linked = link_references([IEEE], index, 2023)[0]
    assert linked["paper_id"] == "nguyen20" and linked["link_score"] == 1.0
    assert "link_by" not in linked                      # a title link: link_by names identifiers only
    assert IEEE["paper_id"] is None                      # the input is not modified


# ---- the author list taken for the title (recover_title) --------------------------------

AUTHORS = _ref("C. Ni, C. Szepesvari, M. Wang",
               "[35] Zhang, J., C. Ni, C. Szepesvari, M. Wang. On the convergence and sample efficiency of "
               "variance-reduced policy gradient method. _Advances in Neural Information Processing Systems_, "
               "34:2228-2240, 2021.", 2021)


def test_author_list_title_recovered(index):
    assert recover_title(AUTHORS["title"], AUTHORS["raw"]) == \
        "On the convergence and sample efficiency of variance-reduced policy gradient method"
    assert match_reference(AUTHORS, index, 2024)[:2] == ("zhang21", 1.0)


def test_recover_title_same_as_works_copy():
    """The extract-layer copy behaves like the works layer's ``recover_title`` it was taken from."""
    mentions = pytest.importorskip("mustcite.extract.works.mentions")
    for title, raw in [(AUTHORS["title"], AUTHORS["raw"]), (IEEE["title"], IEEE["raw"]),
                       ('K. Zhou, J. Yang, C. C. Loy, and Z. Liu, "Conditional Prompt Learning for Vision-Language '
                        'Models," in CVPR, 2022', '[35] K. Zhou, J. Yang, C. C. Loy, and Z. Liu, "Conditional Prompt '
                        'Learning for Vision-Language Models," in _CVPR_, 2022.'),
                       ("Adam: A method for stochastic optimization", "")]:
        assert recover_title(title, raw) == mentions.recover_title(title, raw)


# ---- the title found as a sentence of raw ------------------------------------------------

@pytest.mark.parametrize("ref, pid", [
    (_ref("Liu, A. Vahdat, D.-A", "[55] G.-H. Liu, A. Vahdat, D.-A. Huang, E. A. Theodorou, W. Nie, and A. Anandkumar. "
          "_I\\({}^{2}\\)SB: Image-to-Image Schrodinger Bridge_. 2023.", 2023), "i2sb"),
    # Springer style "Houlsby, N.: Title. Venue (Year)"
    (_ref("van Steenkiste, S., Elsayed, G.F., Mahendran, A., Yu, F.",
          "[6] Dehghani, M., Djolonga, J., Mustafa, B., van Steenkiste, S., Elsayed, G.F., Mahendran, A., Yu, F., "
          "Houlsby, N.: Scaling vision transformers to 22 billion parameters. ICML (2023)", 2023), "vit22b"),
    (_ref("", "Li et al. [2022] Chenliang Li, Haiyang Xu, Junfeng Tian, Wei Wang, et al. mplug: Effective and "
              "efficient vision-language learning by cross-modal skip-connections. _arXiv preprint "
              "arXiv:2205.12005_, 2022.", 2022), "mplug"),
    (_ref("What to pre-train on?", "Poth et al. [2021] Clifton Poth, Jonas Pfeiffer, Andreas Ruckle, and Iryna "
          "Gurevych. What to pre-train on? efficient intermediate task selection. _arXiv preprint "
          "arXiv:2104.08247_, 2021.", 2021), "poth21"),
])
def test_title_from_raw_segment(index, ref, pid):
    assert index.match(ref["title"], ref_year=ref["year"], max_year=2024) is None
    assert match_reference(ref, index, 2024)[:2] == (pid, 1.0)


def test_venue_segments_never_match():
    """A venue in raw is no title, even where the corpus holds a proceedings' front matter under that name
    (the corpus has "Proceedings of the thirty-seventh conference on Uncertainty in Artificial Intelligence
    — Preface"; here the same without "Preface")."""
    venue = "Proceedings of the thirty-seventh conference on Uncertainty in Artificial Intelligence"
    small = TitleIndex.build(["uai"], [venue], [2021])
    raw = ("Thomas and Kohler [2021] A. Thomas and B. Kohler. Some unknown paper on causal effects. In _" + venue +
           "_, pages 1-10, 2021.")
    assert all("proceedings" not in s.lower() for s in raw_segments(raw))
    ref = _ref("Some unknown paper on causal effects", raw, 2021)
    assert match_reference(ref, small, 2023) is None
    raw2 = raw.replace("In _Proceedings", "_Proceedings")          # not after "In": dropped as venue-like
    assert match_reference(dict(ref, raw=raw2), small, 2023) is None
    raw3 = raw.replace("In _Proceedings", "In Proceedings").replace("Intelligence_", "Intelligence")
    assert match_reference(dict(ref, raw=raw3), small, 2023) is None
    # a book the chapter is "In": not the chapter's title
    book = TitleIndex.build(["book"], ["Neural Networks: Tricks of the Trade"], [2012])
    chapter = _ref("Practical recommendations for gradient-based training of deep architectures",
                   "[5] Y. Bengio. Practical recommendations for gradient-based training of deep architectures. "
                   "In _Neural Networks: Tricks of the Trade_, pages 437-478. Springer, 2012.", 2012)
    assert match_reference(chapter, book, 2020) is None


def test_segments_keep_titles_with_in():
    """Only a venue's "In" splits raw: a title with "in" in it stays whole."""
    raw = ("[3] A. Author and B. Author. Feature learning in infinite-width neural networks. In _International "
           "Conference on Machine Learning_, pages 1-10, 2021.")
    assert raw_segments(raw) == ["Feature learning in infinite-width neural networks"]


# ---- the title is the corpus title without its name ("SparseGPT: ...") --------------------

SUBTITLE = _ref("Massive language models can be accurately pruned in one-shot",
                "Frantar and Alistarh [2023] Elias Frantar and Dan Alistarh. Massive language models can be "
                "accurately pruned in one-shot. _arXiv preprint arXiv:2301.00774_, 2023.", 2023)


def test_subtitle_match(index):
    assert index.match(SUBTITLE["title"], ref_year=2023, max_year=2024) is None   # ratio 92.3 < 93
    assert match_reference(SUBTITLE, index, 2024) == ("sparsegpt", 1.0, "subtitle")
    # infinite width vs infinite depth: two papers, each its own subtitle
    tp = _ref("Feature learning in infinite-width neural networks", "", 2020)
    assert match_reference(tp, index, 2024)[0] == "tp4"
    # a subtitle links only a paper of about the reference's year, and only when the citing year allows
    assert match_reference(dict(SUBTITLE, year=2015), index, 2024) is None
    assert match_reference(SUBTITLE, index, 2022) is None
    # short subtitles (< 5 words) are not indexed
    small = TitleIndex.build(["x"], ["Foo: Learning to Rank"], [2020])
    assert small.subtitles == {} and match_reference(_ref("Learning to rank", "", 2020), small, 2021) is None


# ---- a doubled name, trailing junk -------------------------------------------------------

def test_duplicated_name_prefix(index):
    ref = _ref("Adaptformer: Adaptformer: Adapting vision transformers for scalable visual recognition",
               "Chen et al. [2022] Shoufa Chen, Chongjian Ge, Zhan Tong, Jiangliu Wang, Yibing Song, Jue Wang, and "
               "Ping Luo. Adaptformer: Adaptformer: Adapting vision transformers for scalable visual recognition. "
               "In _NeurIPS_, 2022.", 2022)
    assert index.match(ref["title"], ref_year=2022, max_year=2023) is None        # ratio 92.3
    assert "Adaptformer: Adapting vision transformers for scalable visual recognition" in \
        repaired_titles(ref["title"], ref["raw"])
    assert match_reference(ref, index, 2023)[:2] == ("adaptformer", 1.0)


def test_trailing_junk_after_year(index):
    title = "Theoretical and practical perspectives on what influence functions do, 2023 (also accepted in Neurips23)"
    ref = _ref(title, f"[23] Andrea Schioppa, Katja Filippova, Ivan Titov, and Polina Zablotskaia. {title}.", 2023)
    assert index.match(title, ref_year=2023, max_year=2024) is None
    assert match_reference(ref, index, 2024)[:2] == ("schioppa23", 1.0)


# ---- guards: numbers and years ----------------------------------------------------------

def test_repaired_fuzzy_needs_same_numbers(index):
    """"Seed-bench-2" (another paper) is within the fuzzy threshold of "SEED-Bench" but is not it."""
    ref = _ref('B. Li, Y. Ge, Y. Ge, G. Wang, R. Wang, R. Zhang, and Y. Shan, "Seed-bench-2: Benchmarking multimodal '
               'large language models," arXiv preprint arXiv:2311.17092, 2023',
               '[54] B. Li, Y. Ge, Y. Ge, G. Wang, R. Wang, R. Zhang, and Y. Shan, "Seed-bench-2: Benchmarking '
               'multimodal large language models," _arXiv preprint arXiv:2311.17092_, 2023.', 2023)
    assert index.match("Seed-bench-2: Benchmarking multimodal large language models", max_year=2024) is not None
    assert match_reference(ref, index, 2024) is None


def test_repairs_need_a_near_year(index):
    old = dict(IEEE, year=2008)            # same title, cited as a 2008 work: not this 2020 paper
    assert match_reference(old, index, 2023) is None
    assert match_reference(dict(IEEE, year=None), index, 2023)[0] == "nguyen20"   # unknown year: allowed


def test_parsed_title_still_first(index):
    ref = _ref("Scaling vision transformers to 22 billion parameters",
               '[1] A. B. and C. D. "Global convergence of deep networks with one wide layer followed by pyramidal '
               'topology," 2020.', 2023)
    assert match_reference(ref, index, 2024) == ("vit22b", 1.0, "title")

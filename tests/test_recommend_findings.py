"""The audit's findings: the body read with its citations, names found where the text uses them and
not where a citation sits, placeholders and undefined keys, and the draft's own names left out."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mustcite.extract.latex import extract_latex
from mustcite.recommend import findings as F
from mustcite.recommend.name_index import NameHit

DRAFTS = "drafts/projects"


def _project(tmp_path: Path, body: str, bib: str = "") -> Path:
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\title{Tiny: A Test}\\begin{document}\n"
                                       + body + "\n\\bibliography{refs}\\end{document}\n")
    (tmp_path / "refs.bib").write_text(bib or "@article{a2020, title={A Title}, author={Xu, Yan}, year={2020}}\n")
    return tmp_path


# ---- what the reader keeps for the audit -----------------------------------------------------------

def test_passages_keep_every_paragraph_with_its_citations(tmp_path):
    paper = extract_latex(_project(tmp_path, "We train on CIFAR-10 \\cite{a2020}.\n\nWe also use MNIST here.\n"))
    texts = [p["text"] for p in paper.passages]
    assert any("MNIST" in t for t in texts)
    cited = next(p for p in paper.passages if "CIFAR-10" in p["text"])
    (at, keys), = cited["cites"]
    assert keys == ["a2020"] and cited["text"][:at].rstrip().endswith("CIFAR-10")
    assert list(paper.sources) == ["main.tex"]


def test_uncited_bibliography_entries_are_kept(tmp_path):
    bib = ("@article{a2020, title={A Title}, author={Xu, Yan}, year={2020}}\n"
           "@article{lora, title={LoRA: Low-Rank Adaptation of Large Language Models}, author={Hu, Edward}, "
           "year={2022}}\n")
    paper = extract_latex(_project(tmp_path, "We fine-tune with LoRA \\cite{a2020}.", bib))
    assert [r.bibkey for r in paper.uncited] == ["lora"]
    assert paper.uncited[0].title.startswith("LoRA")


def test_real_draft_passages_cover_the_body(data_dir):
    paper = extract_latex(data_dir / DRAFTS / "magnet")
    assert len(paper.passages) > 100 and sum(bool(p["cites"]) for p in paper.passages) > 10
    assert "neurips_2025.tex" in paper.sources


# ---- sentences, places and lines -----------------------------------------------------------------

def test_sentences_carry_their_citations():
    text = "We use the GSM8K data. We compare with MaxLogit [3] on it."
    sents = F.sentences([{"section": "4 Experiments", "text": text, "cites": [[text.index("[3]"), ["k"]]]}])
    assert [s.text for s in sents] == ["We use the GSM8K data.", "We compare with MaxLogit [3] on it."]
    assert sents[0].cites == [] and sents[1].cites == [(sents[1].text.index("[3]"), ["k"])]
    assert sents[1].section == "4 Experiments"


def test_locate_finds_the_line_outside_comments():
    sources = {"main.tex": "% we use GSM8K\nintro\n", "sec/exp.tex": "a\nWe evaluate on\nGSM-8K and \\textsc{MATH}.\n"}
    assert F.locate(sources, "GSM8K") == (None, None)          # only in a comment; "GSM-8K" is other words
    assert F.locate(sources, "GSM-8K") == ("sec/exp.tex", 3)
    assert F.locate(sources, "MATH") == ("sec/exp.tex", 3)


def test_acronyms_defined_and_own_names():
    text = ("We introduce conformal policy control (CPC), a new method. Unlike contrastive learning, "
            "we propose MAGNET for evaluation. Our tool, Foo (ours), is fast.")
    acr = F.defined_acronyms(text)
    assert acr["cpc"] == "conformal policy control"
    own = F.own_names("Tiny: A Test", text)
    assert {"tiny", "magnet", "foo"} <= own and "contrastive" not in own


def test_title_starts_with_a_name():
    assert F.title_starts_with("ImageNet Large Scale Visual Recognition Challenge", "imagenet")
    assert F.title_starts_with("Stable Diffusion XL: ...", "stablediffusion")
    assert not F.title_starts_with("RoBERTa: A Robustly Optimized BERT Pretraining Approach", "bert")


# ---- placeholders and undefined keys -------------------------------------------------------------

def test_placeholders_with_file_and_line():
    sources = {"main.tex": "ok\nas shown in [ref] and [?].\n\\verb|\\citep{}| is an example % [ref]\nsee \\citep{ }\n"}
    got = F.placeholder_findings(sources)
    assert [(f.key, f.location.line) for f in got] == [("[ref]", 2), ("[?]", 2), ("\\citep{ }", 4)]
    assert all(f.kind == "placeholder" for f in got)


def test_undefined_keys_say_add_an_entry():
    sources = {"main.tex": "x\nDALL-E 2 \\citep[p.~3]{dalle2, a2020}\n"}
    (f,) = F.undefined_key_findings(["dalle2"], sources, bib_entries=10)
    assert "add a .bib entry for dalle2" in f.message and "does not cite" not in f.message
    assert (f.location.file, f.location.line) == ("main.tex", 2)
    (one,) = F.undefined_key_findings(["a", "b"], sources, bib_entries=0)
    assert "no .bib or .bbl file" in one.message


# ---- names ---------------------------------------------------------------------------------------

class _Names:
    """A name index over fixed names: key -> {row: support}."""

    def __init__(self, names: dict[str, dict[int, int]]):
        self.names = names

    def occurrences(self, text, year, pool_years):
        import re

        for name, rows in self.names.items():
            for m in re.finditer(re.escape(name), text):
                yield m.start(), m.end(), name, {r: NameHit(name, s, False) for r, s in rows.items()}


class _Pool:
    def __init__(self, titles):
        self.titles = titles
        self.ids = [f"p{i}" for i in range(len(titles))]


def _named(text, names, titles, *, cites=(), cited=(), ref_titles=(), own=(), acronyms=None):
    sents = F.sentences([{"section": "Experiments", "text": text, "cites": [[text.index(c), ["k"]] for c in cites]}])
    pool = _Pool(titles)
    years = np.full(len(titles), 2020)
    cands = F.named_candidates(_Names(names), sents, 2024, years)
    found, kept = F.named_findings(cands, pool=pool, pool_years=years, year=2024, cited=set(cited),
                                   cited_titles=set(), cited_names=set(), ref_titles=list(ref_titles),
                                   own=set(own), acronyms=acronyms or {}, sources={}, score_of=lambda pid: 0.0)
    return [f.paper_id for f in found], kept


def test_a_name_without_a_citation_is_a_finding_and_one_with_a_citation_is_not():
    titles = ["GSM8K: Training Verifiers", "MaxLogit: Scaling OOD"]
    got, _ = _named("We evaluate on GSM8K and compare with MaxLogit [3].", {"GSM8K": {0: 5}, "MaxLogit": {1: 4}},
                    titles, cites=["[3]"])
    assert got == ["p0"]


def test_the_longest_name_wins():
    titles = ["Stable Diffusion", "SDXL: Stable Diffusion XL"]
    got, _ = _named("Images come from Stable Diffusion XL.",
                    {"Stable Diffusion": {0: 9}, "Stable Diffusion XL": {1: 3}}, titles)
    assert got == ["p1"]


def test_already_cited_in_any_version_or_by_a_title_that_starts_with_the_name():
    titles = ["ImageNet: A large-scale hierarchical image database"]
    got, _ = _named("We pretrain on ImageNet.", {"ImageNet": {0: 50}}, titles,
                    ref_titles=["ImageNet Large Scale Visual Recognition Challenge"])
    assert got == []
    got, _ = _named("We pretrain on ImageNet.", {"ImageNet": {0: 50}}, titles, cited=["p0"])
    assert got == []


def test_a_name_the_cited_title_gives_itself_is_cited():
    titles = ["Microsoft COCO: Common Objects in Context", "BERT: Pre-training of Deep Bidirectional Transformers"]
    got, _ = _named("Captions come from COCO and we fine-tune BERT.", {"COCO": {0: 30}, "BERT": {1: 40}}, titles,
                    ref_titles=["Microsoft COCO Captions: Data Collection and Evaluation Server",
                                "RoBERTa: A Robustly Optimized BERT Pretraining Approach"])
    assert got == ["p1"]                  # COCO Captions is cited; RoBERTa does not cite BERT
    assert "vqa" in F.name_parts(["Making the V in VQA Matter: Elevating the Role of Image Understanding"])


def test_own_names_and_spelled_out_acronyms_of_other_works():
    titles = ["Representation Learning with Contrastive Predictive Coding"]
    got, _ = _named("We call it CPC.", {"CPC": {0: 8}}, titles, own=["cpc"])
    assert got == []
    got, _ = _named("Our CPC works.", {"CPC": {0: 8}}, titles, acronyms={"cpc": "conformal policy control"})
    assert got == []
    got, _ = _named("We compare with CPC.", {"CPC": {0: 8}}, titles, acronyms={"cpc": "contrastive predictive coding"})
    assert got == ["p0"]


def test_confidence_follows_the_calibration():
    cal = {"features": ["kind_named", "use_verb"], "coef": [1.0, 2.0], "intercept": -1.0, "threshold": 0.5}
    assert abs(F.confidence({"kind_named": 1.0, "use_verb": 1.0}, cal) - 1 / (1 + np.exp(-2.0))) < 1e-9
    assert F.confidence({}, cal) < 0.5
    shipped = F.load_calibration()
    assert shipped["features"] == list(F.FEATURES) and 0.0 < shipped["threshold"] < 1.0


def test_an_author_of_a_citation_is_not_a_work():
    titles = ["LaVie: High-quality video generation", "MaxLogit: Scaling OOD"]
    for text in ("Metrics: METEOR (Banerjee and Lavie, 2005) and BLEU.", "As Lavie et al. show, and Lavie (2005).",
                 "Metrics: METEOR (Lavie, 2005)."):
        got, _ = _named(text, {"Lavie": {0: 4}}, titles)
        assert got == [], text
    got, _ = _named("Videos come from Lavie and MaxLogit.", {"Lavie": {0: 4}}, titles)
    assert got == ["p0"]


def test_a_citation_after_another_name_is_that_names():
    text = "We evaluate on HallusionBench, and AMBER [4]. Metrics are BLEU and AMBER [5]."
    sents = F.sentences([{"section": "Experiments", "text": text,
                          "cites": [[text.index("[4]"), ["amber"]], [text.index("[5]"), ["bleu", "amber"]]]}])
    hb, bleu = text.index("HallusionBench") + len("HallusionBench"), text.index("BLEU") + 4
    assert F._near_keys(sents[0], hb) == []                     # [4] is AMBER's
    assert F._near_keys(sents[1], bleu - sents[1].start) == ["bleu", "amber"]    # [5] may cite both
    assert F._near_keys(F.sentences([{"section": "", "text": "with Adam optimizer [3].",
                                      "cites": [[21, ["adam"]]]}])[0], 9) == ["adam"]
    vad = F.sentences([{"section": "", "text": "e.g., VAD-Score [4] use LLMs.", "cites": [[16, ["dubey"]]]}])[0]
    assert F._near_keys(vad, vad.text.index("VAD") + 3) == ["dubey"]          # the rest of its own word


def test_a_title_name_several_titles_share_names_the_best_ranked():
    titles = ["Jamba: A Hybrid Transformer-Mamba Language Model", "Jamba: A Jam Band Dataset"]
    sents = F.sentences([{"section": "Method", "text": "We build on Jamba.", "cites": []}])
    years = np.full(2, 2020)
    cands = {r: F.Candidate(r, "Jamba", 0, True, 2, [(sents[0], 12, 17)]) for r in (0, 1)}
    for best in (0, 1):
        found, _ = F.named_findings(dict(cands), pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                    cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                    sources={}, score_of=lambda pid, b=best: 1.0 if pid == f"p{b}" else 0.0)
        assert [f.paper_id for f in found] == [f"p{best}"] and found[0].features["ambiguous"] == 1.0
    found, _ = F.named_findings(dict(cands), pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: -1.0)
    assert found == []                    # neither favoured: the name says not which


def test_a_name_in_a_web_address_is_no_name():
    titles = ["Ctrl: A conditional transformer language model"]
    got, _ = _named("Code: <https://github.com/Ctrl-Alt-Defeat/informatiCup2024>.", {"Ctrl": {0: 3}}, titles)
    assert got == []
    got, _ = _named("We generate with Ctrl.", {"Ctrl": {0: 3}}, titles)
    assert got == ["p0"]


def _features(text, names, titles, cites=()):
    sents = F.sentences([{"section": "Experiments", "text": text, "cites": [[text.index(c), ["k"]] for c in cites]}])
    years = np.full(len(titles), 2020)
    cands = F.named_candidates(_Names(names), sents, 2024, years)
    found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: 0.0)
    return {f.name: f.features for f in found}


def test_a_name_inside_a_longer_word_and_a_name_with_scores_are_features():
    titles = ["RADAR: Robust AI-Text Detection", "POPE: Evaluating Object Hallucination", "SAGA: A fast method"]
    got = _features("For detecting we used RADAR-Vicuna-7B. Results: POPE & 86.6 & 85.9 and a SAGA update.",
                    {"RADAR": {0: 3}, "POPE": {1: 5}, "SAGA": {2: 4}}, titles)
    assert got["RADAR"]["in_longer_name"] == 1.0 and got["RADAR"]["with_scores"] == 0.0
    assert got["POPE"]["with_scores"] == 1.0 and got["POPE"]["in_longer_name"] == 0.0
    assert got["SAGA"]["in_longer_name"] == 0.0 and got["SAGA"]["with_scores"] == 0.0
    assert F._in_longer_name("a PyTorch's method", 2, 9) and not F._in_longer_name("GPT-4 and", 0, 5)


def test_a_name_that_only_starts_a_longer_hyphenated_word_is_another_name():
    assert not F.title_starts_with("pytorch-cifar-models", "pytorch")
    assert not F.title_starts_with("BERT-based Ranking of Passages", "bert")
    assert F.title_starts_with("ImageNet-21K Pretraining for the Masses", "imagenet")     # a version of it
    assert F.title_starts_with("U-Net: Convolutional Networks for Biomedical Image Segmentation", "unet")


def _named_refs(text, names, titles, refs, share):
    sents = F.sentences([{"section": "Experiments", "text": text, "cites": []}])
    years = np.full(len(titles), 2020)
    cands = F.named_candidates(_Names(names), sents, 2024, years)
    found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: 0.0, refs=refs, name_share=share)
    return [f.paper_id for f in found]


def test_a_cited_title_that_names_the_work_may_be_another_work():
    titles = ["ImageNet: A large-scale hierarchical image database"]
    text, names = "We pretrain on ImageNet.", {"ImageNet": {0: 50}}
    alexnet = {"title": "ImageNet classification with deep convolutional neural networks", "paper_id": "alexnet"}
    ilsvrc = {"title": "ImageNet Large Scale Visual Recognition Challenge", "paper_id": "ilsvrc"}
    calls = {"alexnet": 0.02, "ilsvrc": 0.18}           # citing papers that call each "ImageNet"
    share = lambda key, pid: calls.get(pid, 0.9)  # noqa: E731
    assert _named_refs(text, names, titles, [alexnet], share) == ["p0"]      # another work
    assert _named_refs(text, names, titles, [ilsvrc], share) == []           # a version citing papers name so
    assert _named_refs(text, names, titles, [{"title": alexnet["title"]}], share) == []    # unlinked: may be it
    # a name only the title gives (no citing paper uses it): a cited title that names it cites it
    assert _named_refs(text, {"ImageNet": {0: 0}}, titles, [alexnet], share) == []


def test_a_title_that_starts_with_the_word_is_not_meant_where_citing_papers_mean_another():
    titles = ["Attention is All you Need", "Transformer: Feedback attention is working memory",
              "SOTOPIA: Interactive Evaluation", "SOTOPIA-\u03c0: Interactive Learning"]
    hits = {0: NameHit("Transformer", 200, False), 1: NameHit("Transformer", 0, True)}
    assert set(F._by_citing_papers(hits, "Transformer", titles)) == {0}
    hits = {2: NameHit("Sotopia", 0, True), 3: NameHit("Sotopia", 0, True)}
    assert set(F._by_citing_papers(hits, "Sotopia", titles)) == {2}          # "SOTOPIA-\u03c0" is another name


def test_a_title_name_in_capitals_written_as_a_rare_capitalised_word():
    rare = {"Sotopia": 2, "Trust": 650}.get
    assert F._as_title_writes_it("Sotopia", "SOTOPIA: Interactive Evaluation", rare)
    assert not F._as_title_writes_it("Trust", "TRUST: Test-Time Refinement", rare)
    assert not F._as_title_writes_it("Sotopia", "SOTOPIA: Interactive Evaluation")      # no word counts
    assert not F._as_title_writes_it("To do", "TODO: Enhancing LLM Alignment", lambda w: 0)
    assert F._as_title_writes_it("BALROG", "BALROG: Benchmarking Agentic LLM")


def test_a_title_name_counts_where_any_place_writes_it_as_the_title():
    titles = ["BALROG: Benchmarking Agentic LLM and VLM Reasoning On Games"]
    sents = F.sentences([{"section": "Results", "text": "As the Balrog benchmark shows. We use the BALROG agent.",
                          "cites": []}])
    places = [(s, s.text.find(w), s.text.find(w) + 6) for s, w in zip(sents, ("Balrog", "BALROG"))]
    cand = F.Candidate(0, "Balrog", 0, True, 1, places)
    found, _ = F.named_findings({0: cand}, pool=_Pool(titles), pool_years=np.full(1, 2020), year=2024,
                                cited=set(), cited_titles=set(), cited_names=set(), ref_titles=[], own=set(),
                                acronyms={}, sources={}, score_of=lambda pid: 0.0)
    assert [f.paper_id for f in found] == ["p0"]
    cand = F.Candidate(0, "Balrog", 0, True, 1, places[:1])
    found, _ = F.named_findings({0: cand}, pool=_Pool(titles), pool_years=np.full(1, 2020), year=2024,
                                cited=set(), cited_titles=set(), cited_names=set(), ref_titles=[], own=set(),
                                acronyms={}, sources={}, score_of=lambda pid: 0.0)
    assert found == []



def test_the_title_writing_the_name_as_the_text_does_is_meant_and_versions_are_one_work():
    titles = ["SuperGLUE: A Stickier Benchmark", "SuperGlue: Learning Feature Matching", "GLUE: A Benchmark"]
    hits = {0: NameHit("SuperGLUE", 9, True), 1: NameHit("SuperGLUE", 11, True)}
    assert set(F._by_citing_papers(hits, "SuperGLUE", titles)) == {0}
    assert set(F._by_citing_papers(hits, "Superglue", titles)) == {0, 1}        # neither: both may be meant
    title_only = {0: NameHit("SuperGLUE", 0, True), 1: NameHit("SuperGLUE", 0, True)}
    assert set(F._by_citing_papers(title_only, "SuperGLUE", titles)) == {0, 1}  # no citing paper says: a choice
    assert F._works(["UMAP: Uniform Manifold Approximation and Projection",
                     "Umap: uniform manifold approximation and projection for dimension reduction"]) == 1
    assert F._works(["SuperGLUE: A Stickier Benchmark", "SuperGlue: Learning Feature Matching"]) == 2


def test_a_name_only_in_future_work_is_a_plan():
    titles = ["Fashion-MNIST: a Novel Image Dataset"]
    for section, want in (("6 Future Work", []), ("Limitations and Future Directions", []), ("4 Experiments", ["p0"])):
        sents = F.sentences([{"section": section, "text": "We could also test on FashionMNIST.", "cites": []}])
        cands = F.named_candidates(_Names({"FashionMNIST": {0: 30}}), sents, 2024, np.full(1, 2020))
        found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=np.full(1, 2020), year=2024, cited=set(),
                                    cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                    sources={}, score_of=lambda pid: 0.0)
        assert [f.paper_id for f in found] == want, section


def test_a_part_of_a_lower_case_hyphenated_word_is_a_word_and_an_authors_note_no_name():
    titles = ["Physics: A Graph Benchmark", "TODO: Enhancing LLM Alignment"]
    names = {"Physics": {0: 5}, "TODO": {1: 0}}
    got, _ = _named("Physics-informed networks. TODO", names, titles)
    assert got == ["p0"]                  # "TODO" is a note (a title-only name here anyway)
    sents = F.sentences([{"section": "Method", "text": "Physics-informed networks are physics-informed.",
                          "cites": []}])
    cands = F.named_candidates(_Names({"Physics": {0: 5}}), sents, 2024, np.full(2, 2020))
    found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=np.full(2, 2020), year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: 0.0, body=sents[0].text)
    assert found == []
    got, _ = _named("We note TODO here.", {"TODO": {1: 4}}, titles)
    assert got == []


def test_a_models_lower_case_identifier_is_no_word():
    titles = ["Gemma: Open Models"]
    sents = F.sentences([{"section": "Method", "text": "We use Gemma (gemma-2-9b) and gemma-it.", "cites": []}])
    cands = F.named_candidates(_Names({"Gemma": {0: 5}}), sents, 2024, np.full(1, 2020))
    found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=np.full(1, 2020), year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: 0.0, body="We use Gemma (gemma-2-9b).")
    assert [f.paper_id for f in found] == ["p0"]


def test_a_plain_word_after_the_drafts_own_name_is_its_own():
    own = F.own_names("AutoLibra: Agent Metric Induction", "The AutoLibra Ladder improves agents; AutoLibra GPT-4.")
    assert "ladder" in own and "autolibra" in own and "gpt4" not in own


def test_a_rare_capitalised_word_next_to_another_is_a_persons_name():
    assert F._alone("we compare with Sotopia here", 16, 23)
    assert not F._alone("Erich Kobler Thomas Pock", 13, 19)
    assert not F._alone("Excluding Lady Jane Grey, who", 15, 19)


def _sentence(text, cites):
    return F.sentences([{"section": "Experiments", "text": text,
                         "cites": [[text.index(c), keys] for c, keys in cites]}])[0]


def _others(sent, start, end, named_here, key_refs, key):
    """The sentence cites, and every citation is another name's (the ``cites_for_others`` feature)."""
    return bool(sent.cites) and not F._own_citations(sent, start, end, named_here, key_refs, key)


def test_citations_that_belong_to_other_names():
    # cut from real drafts: each name of a list with its own citation, one left without
    s = _sentence("Metrics are BLEU (Papineni et al., 2002), METEOR, CIDEr (Vedantam et al., 2015), and ROUGE.",
                  [("(Papineni", ["bleu"]), ("(Vedantam", ["cider"])])
    at = s.text.index("METEOR")
    assert _others(s, at, at + 6, {}, {}, "meteor")
    at = s.text.index("ROUGE")                     # after the last citation: still another name's
    assert _others(s, at, at + 5, {}, {}, "rouge")
    # a citation after a lower-case word may cover the names before it
    s = _sentence("We use GLUE and SuperGLUE benchmarks (Wang et al., 2019).", [("(Wang", ["glue"])])
    assert not _others(s, s.text.index("GLUE"), s.text.index("GLUE") + 4, {}, {}, "glue")
    # ... unless its reference is the paper another name of the sentence stands for
    s = _sentence("Defences exist (Cohen et al., 2019), while RobustBench and AutoAttack standardise evaluation "
                  "protocols (Croce and Hein, 2020).", [("(Cohen", ["cohen"]), ("(Croce", ["croce"])])
    at = s.text.index("RobustBench")
    refs = {"croce": {"paper_id": "autoattack"}, "cohen": {"paper_id": "smoothing"}}
    named = {"autoattack": {"autoattack"}, "robustbench": {"robustbench"}}
    assert _others(s, at, at + 11, named, refs, "robustbench")
    assert not _others(s, at, at + 11, {"robustbench": {"robustbench"}}, refs, "robustbench")
    # a citation as the subject right before the name may cite it; one ending another clause does not
    s = _sentence("Defazio et al. (2014) proposed SAGA.", [("Defazio", ["defazio"])])
    assert not _others(s, s.text.index("SAGA"), s.text.index("SAGA") + 4, {}, {}, "saga")
    s = _sentence("It uses a technique (Veprikov et al., 2024), with a SAGA-like momentum.", [("(Veprikov", ["v"])])
    assert _others(s, s.text.index("SAGA"), s.text.index("SAGA") + 4, {}, {}, "saga")
    assert not _others(_sentence("We use SAGA.", []), 7, 11, {}, {}, "saga")    # no citation at all
    # the feature of a finding: the share of its places whose sentence cites only other names
    got = _features("Metrics are BLEU [1], METEOR, CIDEr [3]. We report METEOR.", {"METEOR": {0: 4}},
                    ["Meteor: An automatic metric"], cites=["[1]", "[3]"])
    assert got["METEOR"]["cites_for_others"] == 0.5


def test_lower_headings_are_passages_marked_as_headings(tmp_path):
    body = ("\\section{Metrics}\n\\paragraph{METEOR \\cite{a2020}.} METEOR aligns texts.\n"
            "\\subsection{UMAP}\nWe plot UMAP.\n")
    paper = extract_latex(_project(tmp_path, body))
    heads = [p for p in paper.passages if p.get("heading")]
    assert [h["text"].split()[0] for h in heads] == ["METEOR", "UMAP"]
    assert heads[0]["cites"] and heads[0]["cites"][0][1] == ["a2020"]      # a citation in a heading is kept
    assert any(p["text"].startswith("METEOR aligns") and not p.get("heading") for p in paper.passages)
    assert all("\ue020" not in p["text"] for p in paper.passages)


def test_a_heading_names_a_work_but_does_not_capitalise_a_word_into_a_name():
    titles = ["UMAP: Uniform Manifold Approximation", "Diffusion models: A comprehensive survey"]
    names = {"UMAP": {0: 5}, "Diffusion models": {1: 3}}
    sents = F.sentences([{"section": "Method", "text": "UMAP", "cites": [], "heading": True},
                         {"section": "Method", "text": "Diffusion models", "cites": [], "heading": True},
                         {"section": "Method", "text": "We plot UMAP of the data.", "cites": []}])
    years = np.full(len(titles), 2020)
    cands = F.named_candidates(_Names(names), sents, 2024, years)
    found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: 0.0)
    assert [(f.name, f.features["in_heading"]) for f in found] == [("UMAP", 1.0)]
    assert "We plot" in found[0].location.quote                      # the sentence is shown, not the heading


def test_a_word_of_the_draft_in_capitals_is_no_name():
    titles = ["STOP: Integrated Spatial-Temporal Prompting", "NEED: Cross-Subject Generalization"]
    def named(text, names):
        sents = F.sentences([{"section": "Appendix", "text": text, "cites": []}])
        years = np.full(len(titles), 2020)
        found, _ = F.named_findings(F.named_candidates(_Names(names), sents, 2024, years), pool=_Pool(titles),
                                    pool_years=years, year=2024, cited=set(), cited_titles=set(), cited_names=set(),
                                    ref_titles=[], own=set(), acronyms={}, sources={}, score_of=lambda pid: 0.0,
                                    body=text)
        return [f.paper_id for f in found]
    text = 'Do not stop here; move what is not defined as "STOP". NEED MORE INFO. We need it.'
    assert named(text, {"STOP": {0: 0}, "NEED": {1: 0}}) == []
    assert named('Move what is not defined as "STOP".', {"STOP": {0: 0}}) == ["p0"]   # no word of this draft
    assert named(text, {"STOP": {0: 4}}) == ["p0"]     # citing papers call a paper so: a name


def test_a_later_citation_of_its_sentence_to_a_title_using_the_name_cites_it():
    titles = ["Are we ready for autonomous driving? The KITTI vision benchmark suite"]
    text = "We evaluate on the KITTI odometry dataset (Geiger et al., 2013) and report errors."
    sents = F.sentences([{"section": "Evaluation", "text": text, "cites": [[text.index("(Geiger"), ["geiger"]]]}])
    years = np.full(1, 2012)

    def found(ref):
        cands = F.named_candidates(_Names({"KITTI": {0: 9}}), sents, 2024, years)
        got, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                  cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                  sources={}, score_of=lambda pid: 0.0, key_refs={"geiger": ref}, refs=[ref])
        return [f.paper_id for f in got]
    assert found({"title": "Vision meets robotics: The KITTI dataset", "paper_id": "ijrr"}) == []
    assert found({"title": "Visual odometry revisited", "paper_id": "vo"}) == ["p0"]   # another work
    assert F._title_says_it({"title": "The KITTI dataset"}, "KITTI", "p0", titles[0])
    assert not F._title_says_it({"title": "KITTI-360: a dataset"}, "KITTI", "p0", titles[0])   # a longer name
    assert F._title_says_it({"title": "Are we ready? The KITTI vision benchmark suite"}, "KITTI", "p9", "x")
    assert not F._title_says_it({"title": "A zeroth-order Adam for fine-tuning"}, "Adam", "p9", "x")


def test_keys_the_bibliography_cannot_define_say_why(tmp_path):
    body = "Pythia \\cite{pythia}, BLOOM \\cite{bloom}, SQuAD \\cite{squad}."
    bib = ("@misc{Pythia, title={Pythia: A Suite}, author={Biderman, Stella}, year={2023}}\n"
           "@misc{bloom, title={BLOOM}, author={Workshop, Big}, year={2023},\n"
           "@misc{other, title={Other}, author={Xu, Yan}, year={2020}}\n")
    root = _project(tmp_path, body, bib)
    (root / "main.tex").write_text((root / "main.tex").read_text().replace("\\bibliography{refs}",
                                                                             "\\bibliography{anthology,refs}"))
    paper = extract_latex(root)
    assert paper.stats["undefined_keys"] == ["bloom", "squad"]          # "pythia" is the entry "Pythia"
    assert any("keys differ only in case" in m for m in paper.messages)
    notes = paper.stats["undefined_notes"]
    assert notes == {"bloom": {"why": "unreadable_entry", "where": "refs.bib:2"},
                     "squad": {"why": "missing_bib_file", "files": ["anthology.bib"]}}
    notes["glue"] = notes["squad"]
    msgs = [f.message for f in F.undefined_key_findings(["bloom", "squad", "glue", "x"], {}, 2, notes)]
    assert len(msgs) == 3                              # the keys the missing file may hold: one finding
    assert msgs[0].startswith("2 cited key(s) have no entry (squad, glue): anthology.bib, which \\bibliography")
    assert "refs.bib:2 could not be read: mend the entry" in msgs[1] and msgs[2].endswith("add a .bib entry for x")


def test_a_time_zone_and_a_models_variant_are_no_names():
    titles = ["UTC: A Unified Transformer", "Haiku: Sonnet for JAX"]
    names = {"UTC": {0: 0}, "Haiku": {1: 6}}
    got, _ = _named("Annotations span 19:10-23:00 UTC. Claude 3.5 Haiku exhibited the highest bias. "
                    "The bias of 3.5 Haiku's answers was low.", names, titles)
    assert got == []
    got, _ = _named("We train networks with Haiku and evaluate on UTC benchmarks.", names, titles)
    assert sorted(got) == ["p0", "p1"]


def test_a_plain_title_name_after_a_run_in_heading_starts_its_sentence():
    titles = ["Diffusion models: A comprehensive survey"]
    got, _ = _named("Diffusion formulation.Diffusion models define two Markov chains.",
                    {"Diffusion models": {0: 0}}, titles)
    assert got == []
    assert F._starts_sentence("Setup. Diffusion", 7) and not F._starts_sentence("we use Diffusion", 7)
    assert not F._starts_sentence("see Fig. 3. Then Mamba", 17)     # "3." is no sentence end here


def test_own_names_in_markdown_emphasis():
    assert "vatt" in F.own_names("Tell What You Hear", "In this work, we propose _VATT_, a multi-modal framework.")


def test_a_name_only_in_the_acknowledgements_is_no_use():
    titles = ["NSF: Neural Surface Fields"]
    sents = F.sentences([{"section": "Back matter", "text": "This work was funded by NSF grant 123.", "cites": []},
                         {"section": "Checklist", "text": "Answer: NSF funded it.", "cites": []}])
    years = np.full(1, 2020)
    cands = F.named_candidates(_Names({"NSF": {0: 3}}), sents, 2024, years)
    found, _ = F.named_findings(cands, pool=_Pool(titles), pool_years=years, year=2024, cited=set(),
                                cited_titles=set(), cited_names=set(), ref_titles=[], own=set(), acronyms={},
                                sources={}, score_of=lambda pid: 0.0)
    assert found == []


# ---- cross-references left to do are no missing citations ----------------------------------------

def test_a_placeholder_after_a_part_of_the_draft_is_a_cross_reference_not_a_citation():
    sources = {"main.tex": "x\nsee Appendix [ref] and Table~[?], Eq.\\ [?] and Fig. [??]\nas shown in [?].\n"
                           "Section ?? too.\n"}
    got = F.placeholder_findings(sources)
    assert [(f.key, f.location.line) for f in got] == [("[?]", 3)]
    notes = F.crossref_notes(sources)
    assert [n.split(": ")[0] for n in notes] == ["main.tex:2"] * 4 + ["main.tex:4"]
    assert "'Appendix [ref]'" in notes[0] and "not a missing citation" in notes[0]
    assert "'Section ??'" in notes[-1]


def test_a_ref_to_no_label_is_an_unresolved_cross_reference_and_a_cite_to_no_key_is_a_citation():
    sources = {"main.tex": "\\section{Intro}\\label{sec:intro}\nSee \\cref{sec:intro,app:proofs} and \\ref{}.\n"
                           "\\newcommand{\\figref}[1]{Figure~\\ref{#1}}\nAs \\eqref{eq:loss} says \\cite{nokey}.\n"
                           "\\begin{lstlisting}[label=lst:code]\nx\n\\end{lstlisting}\nIn \\ref{lst:code}.\n",
               "app.tex": "\\begin{equation}\\label{eq:loss} x \\end{equation}\n"}
    notes = F.crossref_notes(sources)
    assert [n.split(": ")[0] for n in notes] == ["main.tex:2", "main.tex:2"]
    assert "no \\label{app:proofs}" in notes[0] and "an empty reference" in notes[1]
    assert not any("nokey" in n for n in notes)
    (f,) = F.undefined_key_findings(["nokey"], sources, bib_entries=3)
    assert f.kind == "undefined_key" and (f.location.file, f.location.line) == ("main.tex", 4)
    external = {"main.tex": "\\externaldocument{supp}\nSee \\ref{app:proofs}.\n"}
    assert F.crossref_notes(external) == []


def test_a_cross_reference_left_in_a_markdown_or_pdf_drafts_text():
    texts = ["Details are in Appendix [?] and Table ??.", "We follow [?] here.", "Details are in Appendix [?] and "
             "Table ??."]
    notes = F.crossref_notes_text(texts)
    assert len(notes) == 2 and "'Appendix [?]'" in notes[0] and "'Table ??'" in notes[1]
    many = F.crossref_notes_text([f"Section ?? number {i}" for i in range(30)])
    assert len(many) == F.MAX_CROSSREF_NOTES + 1 and many[-1].startswith("... and 10 more")

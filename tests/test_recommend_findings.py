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


def test_own_names():
    text = ("We introduce conformal policy control (CPC), a new method. Unlike contrastive learning, "
            "we propose MAGNET for evaluation. Our tool, Foo (ours), is fast.")
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


def test_confidence_follows_the_calibration():
    cal = {"features": ["kind_named", "use_verb"], "coef": [1.0, 2.0], "intercept": -1.0, "threshold": 0.5}
    assert abs(F.confidence({"kind_named": 1.0, "use_verb": 1.0}, cal) - 1 / (1 + np.exp(-2.0))) < 1e-9
    assert F.confidence({}, cal) < 0.5
    shipped = F.load_calibration()
    assert shipped["features"] == list(F.FEATURES) and 0.0 < shipped["threshold"] < 1.0


def test_a_name_that_only_starts_a_longer_hyphenated_word_is_another_name():
    assert not F.title_starts_with("pytorch-cifar-models", "pytorch")
    assert not F.title_starts_with("BERT-based Ranking of Passages", "bert")
    assert F.title_starts_with("ImageNet-21K Pretraining for the Masses", "imagenet")     # a version of it
    assert F.title_starts_with("U-Net: Convolutional Networks for Biomedical Image Segmentation", "unet")


def test_a_title_that_starts_with_the_word_is_not_meant_where_citing_papers_mean_another():
    titles = ["Attention is All you Need", "Transformer: Feedback attention is working memory",
              "SOTOPIA: Interactive Evaluation", "SOTOPIA-\u03c0: Interactive Learning"]
    hits = {0: NameHit("Transformer", 200, False), 1: NameHit("Transformer", 0, True)}
    assert set(F._by_citing_papers(hits, "Transformer", titles)) == {0}
    hits = {2: NameHit("Sotopia", 0, True), 3: NameHit("Sotopia", 0, True)}
    assert set(F._by_citing_papers(hits, "Sotopia", titles)) == {2}          # "SOTOPIA-\u03c0" is another name


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


def test_a_plain_word_after_the_drafts_own_name_is_its_own():
    own = F.own_names("AutoLibra: Agent Metric Induction", "The AutoLibra Ladder improves agents; AutoLibra GPT-4.")
    assert "ladder" in own and "autolibra" in own and "gpt4" not in own


def _sentence(text, cites):
    return F.sentences([{"section": "Experiments", "text": text,
                         "cites": [[text.index(c), keys] for c, keys in cites]}])[0]


def test_lower_headings_are_passages_marked_as_headings(tmp_path):
    body = ("\\section{Metrics}\n\\paragraph{METEOR \\cite{a2020}.} METEOR aligns texts.\n"
            "\\subsection{UMAP}\nWe plot UMAP.\n")
    paper = extract_latex(_project(tmp_path, body))
    heads = [p for p in paper.passages if p.get("heading")]
    assert [h["text"].split()[0] for h in heads] == ["METEOR", "UMAP"]
    assert heads[0]["cites"] and heads[0]["cites"][0][1] == ["a2020"]      # a citation in a heading is kept
    assert any(p["text"].startswith("METEOR aligns") and not p.get("heading") for p in paper.passages)
    assert all("\ue020" not in p["text"] for p in paper.passages)


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


def test_own_names_in_markdown_emphasis():
    assert "vatt" in F.own_names("Tell What You Hear", "In this work, we propose _VATT_, a multi-modal framework.")


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

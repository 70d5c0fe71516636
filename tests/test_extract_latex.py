"""LaTeX drafts: small real projects built in tmp_path (numeric natbib, author-year natbib, biblatex,
multi-file, .bbl only, archives), read with :func:`mustcite.extract.latex.extract_latex`; citations
checked exactly; bad input gives a message or a MustciteError, never a traceback."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from mustcite.errors import MustciteError
from mustcite.extract import failures
from mustcite.extract.latex import extract_latex, strip_comments
from mustcite.extract.records import validate_reference_list

BIB = r"""
@inproceedings{vaswani2017attention,
  title     = {Attention is All you Need},
  author    = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and others},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2017},
  eprint    = {1706.03762},
  archivePrefix = {arXiv}
}
@inproceedings{he2016deep,
  title = {Deep Residual Learning for Image Recognition},
  author = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  booktitle = {CVPR}, year = 2016
}
@inproceedings{devlin2019bert,
  title = {{BERT}: Pre-training of Deep Bidirectional Transformers for Language Understanding},
  author = {Devlin, Jacob and Chang, Ming-Wei and Lee, Kenton and Toutanova, Kristina},
  booktitle = {NAACL}, year = {2019}, doi = {10.18653/v1/N19-1423}
}
@inproceedings{ho2020denoising,
  title = {Denoising Diffusion Probabilistic Models},
  author = {Ho, Jonathan and Jain, Ajay and Abbeel, Pieter},
  booktitle = {NeurIPS}, year = {2020}
}
@inproceedings{goodfellow2014generative,
  title = {Generative Adversarial Nets},
  author = {Goodfellow, Ian and Pouget-Abadie, Jean},
  booktitle = {NeurIPS}, year = {2014}
}
"""

TITLES = {"vaswani2017attention": "Attention is All you Need",
          "he2016deep": "Deep Residual Learning for Image Recognition",
          "devlin2019bert": "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          "ho2020denoising": "Denoising Diffusion Probabilistic Models",
          "goodfellow2014generative": "Generative Adversarial Nets"}


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return root


def by_key(paper):
    refs = paper.to_reference_list()
    validate_reference_list(refs)          # the same schema as every extraction path
    return {r["bibkey"]: r for r in refs}


NUMERIC = {
    "main.tex": r"""\documentclass{article}
\usepackage[numbers]{natbib}
\title{Sparse Attention for Long Documents}
\begin{document}
\maketitle
\begin{abstract}
We study sparse attention for long inputs.
\end{abstract}
\section{Introduction}
Transformers are the standard architecture~\cite{vaswani2017attention,he2016deep}. They scale badly. We fix that.

A second paragraph with no citation.
\section{Related Work}
Residual connections \cite{ he2016deep } made deep models trainable. % \cite{ghost2019}
It costs 50\% less memory than before. % a comment
\section*{Acknowledgments}
We thank the reviewers.
\bibliographystyle{unsrtnat}
\bibliography{refs}
\end{document}
""",
    "refs.bib": BIB,
}


def test_numeric_natbib(tmp_path):
    paper = extract_latex(write(tmp_path, NUMERIC))
    assert paper.method == "latex" and paper.status == "ok"
    assert paper.title == "Sparse Attention for Long Documents"
    assert paper.abstract == "We study sparse attention for long inputs."
    refs = by_key(paper)
    assert list(refs) == ["vaswani2017attention", "he2016deep"]          # ghost2019 is commented out
    v, h = refs["vaswani2017attention"], refs["he2016deep"]
    assert (v["target"], v["cite"], v["mentions"], v["year"]) == (1, "1", 1, 2017)
    assert (h["target"], h["cite"], h["mentions"], h["year"]) == (2, "2", 2, 2016)
    assert v["title"] == TITLES["vaswani2017attention"] and v["arxiv"] == "1706.03762"
    assert v["authors"][:2] == ["Ashish Vaswani", "Noam Shazeer"]
    assert v["contexts"] == [{"section": "1 Introduction", "context":
                              "Transformers are the standard architecture [1, 2]. They scale badly. We fix that."}]
    assert [c["section"] for c in h["contexts"]] == ["1 Introduction", "2 Related Work"]
    assert h["contexts"][1]["context"] == ("Residual connections [2] made deep models trainable. "
                                           "It costs 50% less memory than before.")
    assert paper.stats["citation_style"] == "numeric" and paper.stats["bib_files"] == ["refs.bib"]


AUTHOR_YEAR = {
    "paper.tex": r"""\documentclass{article}
\usepackage{natbib}
\title{Diffusion without Tears}
\begin{document}
\begin{abstract}Diffusion models \citep{ho2020denoising} generate images.\end{abstract}
\section{Background}
\citet{ho2020denoising} introduced denoising diffusion. Adversarial training \citep[see][p.~3]{goodfellow2014generative}
is an alternative. \Citet{goodfellow2014generative} called it a game; see also \citealt{he2016deep} and
\citeauthor{vaswani2017attention} (\citeyear{vaswani2017attention}).
\nocite{devlin2019bert}
\bibliographystyle{plainnat}
\bibliography{lib/refs.bib}
\end{document}
""",
    "lib/refs.bib": BIB,
}


def test_author_year_natbib(tmp_path):
    paper = extract_latex(write(tmp_path, AUTHOR_YEAR))
    refs = by_key(paper)
    assert list(refs) == ["ho2020denoising", "goodfellow2014generative", "he2016deep", "vaswani2017attention",
                          "devlin2019bert"]
    assert {k: r["mentions"] for k, r in refs.items()} == {
        "ho2020denoising": 2, "goodfellow2014generative": 2, "he2016deep": 1, "vaswani2017attention": 2,
        "devlin2019bert": 0}
    ho, gan = refs["ho2020denoising"], refs["goodfellow2014generative"]
    assert ho["cite"] == "Ho et al., 2020" and gan["cite"] == "Goodfellow and Pouget-Abadie, 2014"
    assert ho["contexts"][0] == {"section": "Abstract",
                                 "context": "Diffusion models (Ho et al., 2020) generate images."}
    assert ho["contexts"][1]["section"] == "1 Background"
    assert ho["contexts"][1]["context"].startswith("Ho et al. (2020) introduced denoising diffusion.")
    assert "(see Goodfellow and Pouget-Abadie, 2014, p. 3)" in gan["contexts"][0]["context"]
    assert refs["devlin2019bert"]["contexts"] == [] and refs["devlin2019bert"]["doi"] == "10.18653/v1/n19-1423"
    assert paper.stats["citation_style"] == "author-year"


BIBLATEX = {
    "thesis.tex": r"""\documentclass{article}
\usepackage[style=authoryear,backend=biber]{biblatex}
\addbibresource{refs.bib}
\title{A Study of Generators}
\begin{document}
\maketitle
\abstract{We survey generators.}
\section{Introduction}\label{sec:intro}
As \textcite{goodfellow2014generative} showed, two networks can play a game.
Diffusion is stable \autocite{ho2020denoising}.
Both are popular \parencite[e.g.][]{ho2020denoising, goodfellow2014generative}.
\subsection{Scope}
We focus on images \footcite{he2016deep}. Text is left out \cites[see][]{vaswani2017attention}{devlin2019bert}.
\paragraph{Note.} Smart citations \smartcite{he2016deep} also work.
\appendix
\section{Extra}
More \autocite{ho2020denoising}.
\printbibliography
\end{document}
""",
    "refs.bib": BIB,
}


def test_biblatex(tmp_path):
    paper = extract_latex(write(tmp_path, BIBLATEX))
    refs = by_key(paper)
    assert list(refs) == ["goodfellow2014generative", "ho2020denoising", "he2016deep", "vaswani2017attention",
                          "devlin2019bert"]
    assert {k: r["mentions"] for k, r in refs.items()} == {
        "goodfellow2014generative": 2, "ho2020denoising": 3, "he2016deep": 2, "vaswani2017attention": 1,
        "devlin2019bert": 1}
    assert paper.abstract == "We survey generators."
    ho = refs["ho2020denoising"]
    assert [c["section"] for c in ho["contexts"]] == ["1 Introduction", "Appendix"]
    assert "Diffusion is stable (Ho et al., 2020)." in ho["contexts"][0]["context"]
    he = refs["he2016deep"]
    assert {c["section"] for c in he["contexts"]} == {"1 Introduction"}    # subsection/paragraph keep the label
    assert any("Smart citations (He et al., 2016) also work." in c["context"] for c in he["contexts"])
    assert refs["goodfellow2014generative"]["contexts"][0]["context"].startswith(
        "As Goodfellow and Pouget-Abadie (2014) showed, two networks can play a game.")


MULTI = {
    "main.tex": r"""\documentclass{article}
\title{Multi File}
\begin{document}
\begin{abstract}An abstract.\end{abstract}
\input{sections/intro}
\include{method}
\subfile{sections/extra.tex}
\bibliographystyle{plain}
\bibliography{refs,more}
\end{document}
""",
    "sections/intro.tex": "\\section{Introduction}\nWe build on transformers \\cite{vaswani2017attention}.\n",
    "method.tex": "\\section{Method}\nWe use residual blocks \\cite{he2016deep} and the idea of \\cite{new2023idea}.\n",
    "sections/extra.tex": ("\\documentclass[../main.tex]{subfiles}\n\\begin{document}\n\\section{Extra}\n"
                           "GANs \\cite{goodfellow2014generative} too.\n\\end{document}\n"),
    "refs.bib": BIB,
    "more.bib": "@misc{new2023idea, title = {A New Idea}, author = {Doe, Jane}, year = {2023}}\n",
}


def test_multi_file_project(tmp_path):
    paper = extract_latex(write(tmp_path, MULTI))
    refs = by_key(paper)
    assert list(refs) == ["vaswani2017attention", "he2016deep", "new2023idea", "goodfellow2014generative"]
    assert refs["vaswani2017attention"]["contexts"] == [
        {"section": "1 Introduction", "context": "We build on transformers [1]."}]
    assert refs["he2016deep"]["contexts"][0]["section"] == "2 Method"
    assert refs["new2023idea"]["title"] == "A New Idea" and refs["new2023idea"]["authors"] == ["Jane Doe"]
    assert refs["goodfellow2014generative"]["contexts"][0] == {"section": "3 Extra", "context": "GANs [4] too."}
    assert paper.stats["files"] == ["main.tex", "sections/intro.tex", "method.tex", "sections/extra.tex"]
    assert sorted(paper.stats["bib_files"]) == ["more.bib", "refs.bib"]


BBL_NATBIB = r"""\begin{thebibliography}{2}
\providecommand{\natexlab}[1]{#1}
\bibitem[Vaswani et~al.(2017)Vaswani, Shazeer, and Parmar]{vaswani2017attention}
Ashish Vaswani, Noam Shazeer, and Niki Parmar.
\newblock Attention is all you need.
\newblock In \emph{Advances in Neural Information Processing Systems}, 2017.

\bibitem[He et~al.(2016)]{he2016deep}
Kaiming He, Xiangyu Zhang, Shaoqing Ren, and Jian Sun.
\newblock Deep residual learning for image recognition.
\newblock In \emph{CVPR}, 2016.
\end{thebibliography}
"""

BBL_BIBLATEX = r"""\refsection{0}
  \datalist[entry]{nyt/global//global/global}
    \entry{ho2020denoising}{inproceedings}{}
      \name{author}{3}{}{%
        {{hash=1}{%
           family={Ho},
           familyi={H\bibinitperiod},
           given={Jonathan},
           giveni={J\bibinitperiod}}}%
        {{hash=2}{%
           family={Jain},
           given={Ajay}}}%
        {{hash=3}{%
           family={Abbeel},
           given={Pieter}}}%
      }
      \field{booktitle}{NeurIPS}
      \field{title}{Denoising Diffusion Probabilistic Models}
      \field{year}{2020}
      \verb{eprint}
      \verb 2006.11239
      \endverb
      \field{eprinttype}{arXiv}
    \endentry
  \enddatalist
\endrefsection
"""


def test_bbl_only_projects(tmp_path):
    main = (r"\documentclass{article}\usepackage{natbib}\title{Bbl Project}\begin{document}"
            "\n\\section{Intro}\n\\citet{vaswani2017attention} and \\citet{he2016deep} matter.\n"
            "\\bibliographystyle{plainnat}\\bibliography{refs}\\end{document}\n")
    paper = extract_latex(write(tmp_path / "a", {"main.tex": main, "main.bbl": BBL_NATBIB}))
    refs = by_key(paper)
    assert {k: (r["title"], r["year"], r["cite"]) for k, r in refs.items()} == {
        "vaswani2017attention": ("Attention is all you need", 2017, "Vaswani et al., 2017"),
        "he2016deep": ("Deep residual learning for image recognition", 2016, "He et al., 2016")}
    assert refs["he2016deep"]["authors"] == ["Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"]
    assert any("refs.bib not found" in m for m in paper.messages)
    # biblatex .bbl
    main2 = (r"\documentclass{article}\usepackage[style=authoryear]{biblatex}\addbibresource{refs.bib}"
             r"\title{B}\begin{document}\section{Intro}Diffusion \autocite{ho2020denoising}.\end{document}")
    paper = extract_latex(write(tmp_path / "b", {"main.tex": main2, "main.bbl": BBL_BIBLATEX}))
    r = by_key(paper)["ho2020denoising"]
    assert (r["title"], r["year"], r["arxiv"], r["authors"]) == (
        "Denoising Diffusion Probabilistic Models", 2020, "2006.11239", ["Jonathan Ho", "Ajay Jain", "Pieter Abbeel"])
    assert r["contexts"] == [{"section": "1 Intro", "context": "Diffusion (Ho et al., 2020)."}]
    # an inline thebibliography in the .tex itself
    main3 = (r"\documentclass{article}\title{C}\begin{document}\section{Intro}See \cite{he2016deep}."
             "\n" + BBL_NATBIB + r"\end{document}")
    refs = by_key(extract_latex(write(tmp_path / "c", {"main.tex": main3})))
    assert list(refs) == ["he2016deep"]
    assert refs["he2016deep"]["title"] == "Deep residual learning for image recognition"


def _zip_project(files: dict[str, str], path: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(prefix + name, content)
    return path


def _tar_project(files: dict[str, str], path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, content in files.items():
            data = content.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_archives(tmp_path):
    expected = by_key(extract_latex(write(tmp_path / "plain", MULTI)))
    for archive in (_zip_project(MULTI, tmp_path / "p.zip", prefix="project/"),
                    _tar_project(MULTI, tmp_path / "p.tar.gz"), _tar_project(MULTI, tmp_path / "p.tgz")):
        paper = extract_latex(archive)
        got = by_key(paper)
        assert got == expected, archive.name
        assert paper.source_path == str(archive)
    # arXiv's single-file source: a gzipped .tex
    import gzip

    single = tmp_path / "2401.00001.gz"
    single.write_bytes(gzip.compress(MULTI["sections/intro.tex"].join(
        [r"\documentclass{article}\title{One}\begin{document}", r"\end{document}"]).encode()))
    assert list(by_key(extract_latex(single))) == ["vaswani2017attention"]


#: real paper lists holding the papers AUTHOR_YEAR cites (BERT: NAACL 2019 in the ACL Anthology, DDPM:
#: NeurIPS 2020, GAN: NeurIPS 2014, ResNet: CVPR 2016, the Transformer: NeurIPS 2017)
LISTS = ("yhamidullah-acl-anthology/naacl2019_N19.jsonl.gz", "rajatmodi62-ai-conf-abstract-generator/nips2020.jsonl.gz",
         "paperlists/nips2014.jsonl.gz", "paperlists/cvpr2016.jsonl.gz", "paperlists/nips2017.jsonl.gz")
from helpers import DATA  # noqa: E402


@pytest.fixture(scope="module")
def corpus_index(data_dir):
    """A title + identifier index over two real paper lists, imported as `corpus build` reads them."""
    from mustcite.corpus.importers import import_file
    from mustcite.corpus.records import make_paper_id
    from mustcite.extract.link import TitleIndex

    pool = []
    for rel in LISTS:
        for r in import_file(DATA / "proceedings" / rel, DATA):
            if not r.skip and r.title:
                pool.append({"paper_id": make_paper_id(r.title, r.venue or "", r.year, r.source_id),
                             "title": r.title, "year": r.year, "url": r.url, "pdf": r.pdf})
    assert len(pool) > 1000
    return TitleIndex.from_pool(pool)


@pytest.mark.data
def test_references_link_to_the_corpus(tmp_path, corpus_index):
    from mustcite.extract.link import link_references

    paper = extract_latex(write(tmp_path, AUTHOR_YEAR))
    linked = {r["bibkey"]: r for r in link_references(paper.to_reference_list(), corpus_index, citing_year=2024)}
    assert all(r["paper_id"] for r in linked.values()), {k: r["paper_id"] for k, r in linked.items()}
    assert linked["devlin2019bert"]["link_by"] == "acl"          # its ACL DOI = the corpus ACL Anthology URL
    assert "link_by" not in linked["ho2020denoising"]            # linked by title
    # the identifier wins over a wrong title
    wrong = dict(linked["devlin2019bert"], title="Something else entirely", paper_id=None)
    again = link_references([wrong], corpus_index)[0]
    assert again["paper_id"] == linked["devlin2019bert"]["paper_id"] and again["link_by"] == "acl"


# ---- bad input ---------------------------------------------------------------------------------

def test_circular_and_missing_inputs(tmp_path):
    files = {"main.tex": ("\\documentclass{article}\\title{Loop}\\begin{document}\\input{a}\\input{missing/part}"
                          "\\input{../outside}\\end{document}"),
             "a.tex": "\\section{A}Text \\cite{he2016deep}.\\input{b}",
             "b.tex": "More text \\cite{he2016deep}. \\input{a.tex}",
             "refs.bib": BIB}
    (tmp_path / "outside.tex").write_text("\\cite{vaswani2017attention}")
    paper = extract_latex(write(tmp_path / "proj", files))
    assert list(by_key(paper)) == ["he2016deep"] and by_key(paper)["he2016deep"]["mentions"] == 2
    msgs = " | ".join(paper.messages)
    assert "circular" in msgs and "missing/part" in msgs
    # a missing file and a path outside the project get the same message (no probing of the host)
    assert "\\input{missing/part}: not read (outside the project or missing)" in msgs
    assert "\\input{../outside}: not read (outside the project or missing)" in msgs


def test_non_utf8_and_malformed_bib(tmp_path):
    bib = ("@article{caf2020, title = {Caf\xe9 Networks}, author = {M\xfcller, Hans}, year = {2020}}\n"
           "@article{broken2019, title = {Unclosed, author = {X}\n"
           "@article{ok2018, title = {Fine}, year = {2018}}\n").encode("latin-1")
    main = ("\\documentclass{article}\\title{T}\\begin{document}\\section{Intro}"
            "We cite \\cite{caf2020,ok2018,broken2019}.\\bibliography{refs}\\end{document}")
    paper = extract_latex(write(tmp_path, {"main.tex": main, "refs.bib": bib}))
    refs = by_key(paper)
    assert refs["caf2020"]["title"] == "Café Networks" and refs["caf2020"]["authors"] == ["Hans Müller"]
    assert refs["ok2018"]["title"] == "Fine"
    assert refs["broken2019"]["title"] == "" and refs["broken2019"]["raw"] == "broken2019"   # undefined: key as text
    msgs = " | ".join(paper.messages)
    assert "refs.bib:1: not UTF-8; read as Latin-1" in msgs
    assert "refs.bib:2: malformed BibTeX entry" in msgs
    assert "defined in no .bib/.bbl file: broken2019" in msgs


def test_no_cite_is_a_valid_draft(tmp_path):
    main = ("\\documentclass{article}\\title{Quiet Paper}\\begin{document}\\begin{abstract}"
            "No citations here.\\end{abstract}\\section{Intro}Just text.\\end{document}")
    paper = extract_latex(write(tmp_path, {"main.tex": main}))
    assert paper.references == [] and paper.status == "flagged" and paper.title == "Quiet Paper"
    assert paper.failure_modes == ["empty_reference_list"]
    assert any("no \\cite command" in m for m in paper.messages)


def test_latex_status_comes_from_the_failure_report(tmp_path, monkeypatch):
    doc = ("\\documentclass{article}\\title{T}\\begin{document}\\begin{abstract}A.\\end{abstract}"
           "%s\\bibliography{refs}\\end{document}")
    bib = "@article{a, title={A}, author={Ann Author}, year={2020}}"
    quiet = write(tmp_path / "quiet", {"main.tex": doc % "Just text.", "refs.bib": bib})
    undefined = write(tmp_path / "undef", {"main.tex": doc % "See \\cite{a,b,c}.", "refs.bib": bib})
    star = write(tmp_path / "star", {"main.tex": doc % "\\nocite{*}Text.", "refs.bib": ""})
    fine = write(tmp_path / "fine", {"main.tex": doc % "See \\cite{a}.", "refs.bib": bib})
    papers = [extract_latex(p) for p in (quiet, undefined, star, fine)]
    assert [(p.status, p.failure_modes) for p in papers] == [
        ("flagged", ["empty_reference_list"]), ("flagged", ["undefined_keys"]), ("flagged", ["empty_reference_list"]),
        ("ok", [])]
    assert papers[1].messages[0] == "2 cited key(s) defined in no .bib/.bbl file: b, c"
    monkeypatch.setattr(failures, "FATAL", failures.FATAL | {"empty_reference_list"})
    assert [extract_latex(p).status for p in (quiet, undefined, star, fine)] == ["failed", "flagged", "failed", "ok"]


def test_nothing_to_read(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(MustciteError, match="no .tex file"):
        extract_latex(tmp_path / "empty")
    two = write(tmp_path / "two", {"a.tex": "Hello", "b.tex": "World"})
    with pytest.raises(MustciteError, match="no main .tex file"):
        extract_latex(two)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(MustciteError, match="bad.zip") as exc:
        extract_latex(bad)
    assert "zip" in exc.value.message


def test_strip_comments():
    assert strip_comments("a % b\nc") == "a c"
    assert strip_comments("50\\% off % gone\nnext") == "50\\% off next"
    assert strip_comments("x \\\\% comment\ny") == "x \\\\y"
    assert strip_comments("keep\n\\begin{comment}\\cite{x}\n\\end{comment}done") == "keep\ndone"


# ---- the draft reader and the CLI -------------------------------------------------------------

def test_read_draft_accepts_latex(tmp_path):
    from mustcite.recommend.draft import check_draft_file, read_draft

    proj = write(tmp_path / "proj", NUMERIC)
    zipped = _zip_project(NUMERIC, tmp_path / "proj.zip")
    for p in (proj, proj / "main.tex", zipped):
        assert check_draft_file(p) == "latex"
        d = read_draft(p)
        assert d.kind == "latex" and d.title == "Sparse Attention for Long Documents"
        assert [r.bibkey for r in d.paper.references] == ["vaswani2017attention", "he2016deep"]
    (tmp_path / "fake.zip").write_text("not a zip")
    with pytest.raises(MustciteError, match="not a zip"):
        check_draft_file(tmp_path / "fake.zip")
    (tmp_path / "notitle").mkdir()
    (tmp_path / "notitle" / "x.tex").write_text("\\documentclass{article}\\begin{document}hi\\end{document}")
    with pytest.raises(MustciteError, match="neither a \\\\title nor an abstract"):
        read_draft(tmp_path / "notitle")


def _cli_project(tmp_path):
    from helpers import recommender as S

    q = S.held_out_queries()[0]
    pool = S.pool()
    a, b = pool[0], pool[1]
    bib = "".join(f"@inproceedings{{ref{i},\n  title = {{{p['title']}}},\n  year = {{{p['year']}}}\n}}\n"
                  for i, p in enumerate((a, b)))
    main = (f"\\documentclass{{article}}\n\\title{{{q['title']}}}\n\\begin{{document}}\n\\begin{{abstract}}\n"
            f"{q['abstract']}\n\\end{{abstract}}\n\\section{{Introduction}}\nWe build on \\cite{{ref0}} and "
            "\\cite{ref1,ref0}.\n\\bibliography{refs}\n\\end{document}\n")
    return _zip_project({"main.tex": main, "refs.bib": bib}, tmp_path / "project.zip"), (a, b)


@pytest.mark.data
def test_cli_audit_of_a_zip_project(capsys, tmp_path):
    import shutil

    from helpers import recommender as S

    from mustcite.cli.main import main

    work = tmp_path / "work"
    shutil.copytree(S.model_dir(), work / "models" / "recommender")
    archive, (a, b) = _cli_project(tmp_path)
    code = main(["--work", str(work), "audit", str(archive), "--format", "json", "--top", "5"])
    out, err = capsys.readouterr()
    assert code == 0, err
    res = json.loads(out)
    assert res["references"] == 2 and res["linked"] == 2, res
    assert not {a["paper_id"], b["paper_id"]} & {r["paper_id"] for r in res["missing"]}
    assert res["extraction"]["method"] == "latex"


@pytest.mark.data
def test_a_bib_entry_without_a_year_is_kept_and_noted_in_every_format(capsys, tmp_path):
    """A reference whose .bib entry lacks a year still counts as cited (linked by its title), and
    every output format says that it had no year."""
    import shutil

    from helpers import recommender as S

    from mustcite.cli.main import main

    q = S.held_out_queries()[0]
    a, b = S.pool()[0], S.pool()[1]
    bib = (f"@inproceedings{{dated,\n  title = {{{a['title']}}},\n  author = {{Doe, Jane}},\n"
           f"  year = {{{a['year']}}}\n}}\n"
           f"@inproceedings{{velickovic_gat,\n  title = {{{b['title']}}},\n"
           "  author = {Veli{\\v{c}}kovi{\\'c}, Petar},\n"
           "  booktitle = {International Conference on Learning Representations}\n}\n")
    main_tex = (f"\\documentclass{{article}}\n\\title{{{q['title']}}}\n\\begin{{document}}\n\\begin{{abstract}}\n"
                f"{q['abstract']}\n\\end{{abstract}}\n\\section{{Introduction}}\nWe build on \\cite{{dated}} and "
                "\\cite{velickovic_gat}.\n\\bibliography{refs}\n\\end{document}\n")
    proj = write(tmp_path / "proj", {"main.tex": main_tex, "refs.bib": bib})
    paper = extract_latex(proj)
    assert [(r.bibkey, r.year) for r in paper.references] == [("dated", a["year"]), ("velickovic_gat", None)]
    assert any("without a year" in m and "velickovic_gat" in m for m in paper.messages)

    work = tmp_path / "work"
    shutil.copytree(S.model_dir(), work / "models" / "recommender")
    outputs = {}
    for fmt in ("json", "table", "markdown", "bibtex"):
        code = main(["--work", str(work), "audit", str(proj), "--format", fmt, "--top", "5"])
        out, err = capsys.readouterr()
        assert code == 0, err
        outputs[fmt] = out
    res = json.loads(outputs["json"])
    assert res["references"] == 2 and res["linked"] == 2, res
    assert b["paper_id"] not in {r["paper_id"] for r in res["missing"]}
    assert any("without a year" in n for n in res["notes"])
    # (the test model has no mention model beside it: a second note says so)
    n = len(res["notes"])
    assert f"notes on reading the draft ({n}):" in outputs["table"] and "velickovic_gat" in outputs["table"]
    assert f"Notes on reading the draft ({n})" in outputs["markdown"]
    assert "% note: 1 reference(s) without a year" in outputs["bibtex"]


def test_table_notes_are_capped_and_counted():
    from mustcite.recommend.audit import AuditResult
    from mustcite.recommend.formats import MAX_TABLE_NOTES, audit_table

    msgs = [f"\\input{{sec{i}}}: not read (outside the project or missing)" for i in range(MAX_TABLE_NOTES + 5)]
    res = AuditResult("d.tex", "T", "", 0, 0, extraction={"status": "flagged", "messages": msgs}, year=2024)
    text = audit_table(res)
    assert f"notes on reading the draft ({len(msgs) + 1}):" in text
    assert "extraction flagged" in text and "... and 6 more" in text


def test_the_audit_says_which_main_file_was_read_and_which_others_could_have_been():
    import json as _json

    from mustcite.recommend.audit import AuditResult
    from mustcite.recommend.formats import audit_bibtex, audit_markdown, audit_table
    from mustcite.shown import markdown_shown

    line = "main file: paper.tex (also a \\documentclass: old_submission.tex)"
    res = AuditResult("proj", "T", "", 0, 0, year=2024, extraction={
        "status": "ok", "messages": [], "main_file": "paper.tex", "main_others": ["old_submission.tex"]})
    assert res.main_file == line and _json.loads(_json.dumps(res.to_dict()))["main_file"] == line
    assert line in audit_table(res) and f"% {line}" in audit_bibtex(res)
    assert markdown_shown(line) in audit_markdown(res)  # Markdown escapes the backslash and the underscore
    alone = AuditResult("proj", "T", "", 0, 0, year=2024, extraction={"main_file": "main.tex"})
    assert alone.main_file == "main file: main.tex"
    assert AuditResult("d.md", "T", "", 0, 0, year=2024).main_file is None

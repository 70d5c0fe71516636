"""A draft's own macros and acronyms expanded before it is read, and the title and abstract found
where real author kits put them (checked on real projects of the public dev drafts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mustcite.extract.latex import extract_latex
from mustcite.extract.latex.macros import MAX_GROWTH, expand_macros, read_definitions

DRAFTS = "drafts/projects"


def _project(tmp_path: Path, main: str) -> Path:
    path = tmp_path / "main.tex"
    path.write_text(main)
    (tmp_path / "refs.bib").write_text("@article{a2020, title={A Title}, author={Xu, Yan}, year={2020}}\n")
    return path


# ---- the real projects whose title or abstract was lost -------------------------------------------

@pytest.mark.parametrize("name, title", [
    # \title{\papertitle}, the macro defined in an \input preamble file
    ("kfac-pinns", "Kronecker-Factored Approximate Curvature for Physics-Informed Neural Networks"),
    # the ICML kit's \icmltitle
    ("hybrid-ssm-icl", "Re-Examine Hybrid State-Space and Self-Attention for In-Context Learning"),
    ("gnc-score-matching", "Learning Gradually Non-convex Image Priors Using Score Matching"),
])
def test_real_titles_are_read(data_dir, name, title):
    paper = extract_latex(data_dir / DRAFTS / name)
    assert paper.title == title


def test_an_abstract_in_the_preamble_is_read(data_dir):
    # hzpaper.cls typesets the abstract with the title: the environment sits before \begin{document}
    paper = extract_latex(data_dir / DRAFTS / "autolibra")
    assert paper.abstract.startswith("Agents are predominantly evaluated and optimized via task success metrics")


def test_the_template_placeholder_is_no_abstract(data_dir):
    paper = extract_latex(data_dir / DRAFTS / "mechanism-membership-inference")
    assert paper.abstract == ""
    assert any("placeholder" in m for m in paper.messages)


# ---- definitions and uses --------------------------------------------------------------------------

def test_macros_with_arguments_defaults_and_xspace():
    text = (r"\newcommand{\method}{\textsc{DataComp}\xspace}\newcommand\pair[2]{#1 and #2}"
            r"\providecommand{\method}{ignored}\newcommand{\opt}[2][base]{#1-#2}\def\ours{OurNet}"
            "\n" r"\method{}: In search of. \pair{A}{B}; \opt{x}, \opt[big]{y}; \ours.")
    body = expand_macros(text).split("\n", 1)[1]
    assert body == r"\textsc{DataComp}: In search of. A and B; base-x, big-y; OurNet."


def test_the_last_definition_wins_and_protected_commands_stay():
    macros, _ = read_definitions(r"\newcommand{\m}{one}\renewcommand{\m}{two}\renewcommand{\cite}{x}"
                                 r"\renewcommand{\section}{y}\newcommand{\@int}{z}")
    assert macros["m"].body == "two"
    assert "cite" not in macros and "section" not in macros


def test_acronyms_of_the_three_packages():
    text = (r"\acro{ood}{out-of-distribution}\newacronym{llm}{LLM}{large language model}"
            r"\DeclareAcronym{vae}{short = VAE, long = variational autoencoder}"
            "\n" r"\ac*{ood} \acl{ood} \acp{llm} \acf{vae} \Acl{llm}")
    body = expand_macros(text).split("\n", 1)[1]
    assert body == "ood out-of-distribution LLMs variational autoencoder (VAE) Large language model"


def test_a_macro_in_the_title_and_a_sentence(tmp_path):
    main = _project(tmp_path, r"\documentclass{article}\newcommand{\name}{DataComp}\title{\name{}: In search of data}"
                              "\n" r"\begin{document}\maketitle\section{Intro}We evaluate on \name\ as in \cite{a2020}."
                              "\n" r"\bibliography{refs}\end{document}")
    paper = extract_latex(main)
    assert paper.title == "DataComp: In search of data"
    assert "We evaluate on DataComp" in paper.references[0].contexts[0].context


# ---- bounded ------------------------------------------------------------------------------------

def test_a_self_reproducing_macro_is_bounded():
    text = r"\newcommand{\a}{\a\a}" + "\n" + r"\a " * 1000
    out = expand_macros(text)
    assert len(out) <= MAX_GROWTH * len(text) + 2**20


def test_expansion_reads_each_argument_through_one_brace_index(monkeypatch):
    """Linear in the text: every brace group is found through one index of the text per pass (one
    scan); a scan from each unclosed "{" to the end of the text would be quadratic."""
    from mustcite.extract.latex import arguments

    scanned = []
    real = arguments._scan_close
    monkeypatch.setattr(arguments, "_scan_close", lambda text, i: scanned.append(len(text) - i) or real(text, i))
    n = 20_000
    text = r"\newcommand{\pair}[2]{#1 and #2}\newcommand{\m}{M}" + (r"\m \pair{" * n)
    out = expand_macros(text)
    assert out.count("M ") == n
    assert sum(scanned) <= 2 * len(text)


def test_names_in_text_style_commands_keep_their_text():
    # judging-the-judges: \newcommand{\judge}[1]{\texttt{\textcolor{black}{#1}}}, then \judge{GPT-4}
    from mustcite.extract.latex.text import to_text

    text = expand_macros(r"\newcommand{\judge}[1]{\texttt{\textcolor{black}{#1}}}" "\n"
                         r"LLMs such as \judge{GPT-4} and \textsf{Llama} or \mbox{Mistral 7B} judge")
    assert to_text(text.split("\n", 1)[1]) == "LLMs such as GPT-4 and Llama or Mistral 7B judge"

"""What the LaTeX reader does not read as prose, and where it stops: inline and block verbatim
blanked in place, braces nested too deep, macro expansion past its caps (each with a message naming
the file and line), and a name a macro writes located where the macro is used."""

from __future__ import annotations

from pathlib import Path

from mustcite.extract.latex import extract_latex
from mustcite.extract.latex.macros import MAX_PASSES, expand_macros, first_use
from mustcite.extract.latex.verbatim import MAX_BRACE_DEPTH, blank_verbatim, bound_braces
from mustcite.recommend import findings as F


def _project(tmp_path: Path, body: str, preamble: str = "") -> Path:
    (tmp_path / "main.tex").write_text("\\documentclass{article}\n" + preamble + "\\title{A Test}\n"
                                       "\\begin{document}\n" + body + "\n\\end{document}\n")
    return tmp_path


# ---- verbatim ------------------------------------------------------------------------------------

def test_inline_verbatim_in_every_form_is_blanked_in_place():
    text = ("Run \\verb|train --model GPT4| or \\verb*+ImageNet+ or \\verb!a%b! here % \\verb|comment|\n"
            "then \\lstinline[language=Python]{load(CIFAR)} and \\lstinline|BERT()| and "
            "\\mintinline{python}{LLaMA()} and \\mintinline{python}|Mistral| and 50\\% done.\n")
    out = blank_verbatim(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    for code in ("GPT4", "ImageNet", "a%b", "CIFAR", "BERT()", "LLaMA", "Mistral"):
        assert code not in out
    assert "\\verb|comment|" in out and "50\\% done" in out           # a comment and an escape stay
    assert out.index("then") == text.index("then")


def test_verbatim_environments_are_blanked_and_an_unclosed_one_left():
    text = "a\n\\begin{lstlisting}[caption=x]\nmodel = GPT4()\n\\end{lstlisting}\nb \\begin{Verbatim}\nBERT\n" \
           "\\end{Verbatim}\n\\begin{verbatim} never closed ImageNet"
    out = blank_verbatim(text)
    assert "GPT4" not in out and "BERT" not in out and "ImageNet" in out
    assert out.count("\n") == text.count("\n") and "\\end{lstlisting}" in out


def test_code_in_the_draft_is_no_name_no_citation_and_no_placeholder(tmp_path):
    paper = extract_latex(_project(tmp_path, "We call \\verb|ResNet.fit(ImageNet)| and \\lstinline{\\cite{x}}.\n\n"
                                   "\\begin{verbatim}\nfrom transformers import BERT \\cite{y}\n\\end{verbatim}\n"
                                   "Our own text names Transformer models.\n"))
    text = " ".join(p["text"] for p in paper.passages)
    assert "ImageNet" not in text and "BERT" not in text and "Transformer" in text
    assert paper.references == []                       # neither \cite in code is a citation
    sources = {"main.tex": "a\nsee \\verb|[ref]| and \\lstinline|[?]|\n\\begin{verbatim}\n[citation needed]\n"
                           "\\end{verbatim}\nbut [ref] here\n"}
    assert [(f.key, f.location.line) for f in F.placeholder_findings(sources)] == [("[ref]", 6)]
    assert F.locate({"main.tex": "x\n\\verb|CLIP|\nwe use CLIP\n"}, "CLIP") == ("main.tex", 3)


# ---- braces nested too deep ----------------------------------------------------------------------

def test_braces_nested_too_deep_are_blanked_keeping_the_rest_balanced():
    deep = "{" * (MAX_BRACE_DEPTH + 5) + "x" + "}" * (MAX_BRACE_DEPTH + 5)
    out, where = bound_braces("a " + deep + " b")
    assert len(out) == len(deep) + 4 and where == [2 + MAX_BRACE_DEPTH]
    assert out.count("{") == out.count("}") == MAX_BRACE_DEPTH and "x" not in out and out.endswith(" b")
    assert bound_braces("% {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\nok", 3)[1] == []   # a comment
    ok = "{" * MAX_BRACE_DEPTH + "y" + "}" * MAX_BRACE_DEPTH
    assert bound_braces(ok) == (ok, [])


def test_deeply_nested_commands_are_read_up_to_the_bound_with_a_message(tmp_path):
    n = 250_000 // len("\\textbf{\\emph{")
    paper = extract_latex(_project(tmp_path, "Before the deep part.\n\n" + "\\textbf{\\emph{" * n + "inside"
                                   + "}}" * n + "\n\nAfter the deep part.\n"))
    text = " ".join(p["text"] for p in paper.passages)
    assert "Before the deep part." in text and "After the deep part." in text and "inside" not in text
    assert any(m.startswith(f"main.tex:6: braces nested deeper than {MAX_BRACE_DEPTH}") for m in paper.messages)


# ---- macro expansion at its caps -----------------------------------------------------------------

def test_a_macro_that_uses_itself_stops_with_a_message_naming_it_and_its_first_use(tmp_path):
    paper = extract_latex(_project(tmp_path, "Some text.\n\\f{a}\n", "\\newcommand{\\f}[1]{\\f{\\f{#1}}}\n"))
    (msg,) = [m for m in paper.messages if "macro expansion" in m]
    assert msg.startswith("macro expansion stopped at \\f (first used at main.tex:6)")
    assert f"after {MAX_PASSES} rounds" in msg


def test_a_macro_that_grows_the_text_past_its_cap_stops_there_with_a_message(tmp_path):
    body = "\\newcommand{\\f}[1]{" + "#1" * 16 + "}\n" + "\\f{" * 6 + "x" + "}" * 6       # 60 bytes
    paper = extract_latex(_project(tmp_path, body))
    (msg,) = [m for m in paper.messages if "macro expansion" in m]
    assert "\\f (first used at main.tex:5)" in msg and "would grow past" in msg
    stops: list = []
    out = expand_macros("\\newcommand{\\g}{G}\\g and " + body, stops)
    assert [s.name for s in stops] == ["f"] and "G and" in out and len(out) < 3 * len(body) + 20_000


def test_macro_expansion_within_its_caps_says_nothing():
    stops: list = []
    assert expand_macros("\\newcommand{\\m}{MAGNET}\\def\\n{N}We use \\m{} and \\n.", stops).endswith(
        "We use MAGNET and N.")
    assert stops == []


# ---- a name a macro writes is where the macro is used --------------------------------------------

def test_a_name_from_a_macro_is_located_at_its_use_not_its_definition():
    sources = {"main.tex": "\\documentclass{article}\n\\newcommand{\\data}{ImageNet\\xspace}\n"
                           "\\newcommand{\\both}[1]{\\textsc{CLIP} and #1}\n\\begin{document}\n\\input{sec}\n",
               "sec.tex": "Intro.\nWe train on \\data{} here.\n% \\both{x}\nThen \\both{x}.\nCLIP again.\n"}
    assert F.locate(sources, "ImageNet") == ("sec.tex", 2)
    assert F.locate(sources, "CLIP") == ("sec.tex", 4)              # the use, before the plain "CLIP"
    assert first_use(sources, "data") == ("sec.tex", 2)
    plain = {"main.tex": "CLIP first.\n\\newcommand{\\c}{CLIP}\n\\c\n"}
    assert F.locate(plain, "CLIP") == ("main.tex", 1)               # written out before any use


def test_unclosed_verbatim_environments_are_searched_to_the_end_once():
    from mustcite.extract.latex.verbatim import blank_verbatim

    text = "\\begin{comment} x\n" * 2000 + "\\begin{verbatim}\\cite{a}\\end{verbatim} \\verb|\\cite{b}| \\cite{c}"
    out = blank_verbatim(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    # the unclosed comments stay as written; the closed block and the inline code after them are blanked
    assert out.count("\\begin{comment} x") == 2000 and "\\cite{a}" not in out and "\\cite{b}" not in out
    assert "\\cite{c}" in out

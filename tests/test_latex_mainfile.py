"""The main file of a LaTeX project is the one its build compiles: named by latexmkrc or a Makefile,
else the top-level file no other includes with the most text in its include graph; a wrapper is read
through; a ``\\documentclass`` in a comment or verbatim block does not count; the audit says which
file was read and which others could have been."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mustcite.extract.latex import choose_main, extract_latex, main_file_line, project_files

SPLIT = Path(__file__).resolve().parents[1] / "benchmarks" / "splits" / "drafts_split.json"

PROSE = ("We study how second-order optimisers behave on physics-informed networks, and we compare them with "
         "first-order methods on several problems. ")


def _doc(title: str, body: str, preamble: str = "") -> str:
    return (f"\\documentclass{{article}}\n{preamble}\\title{{{title}}}\n\\begin{{document}}\n\\maketitle\n"
            f"{body}\n\\end{{document}}\n")


def _choose(root: Path):
    messages: list[str] = []
    return choose_main(root, project_files(root, messages), messages), messages


@pytest.mark.data("drafts/manifest.json")
def test_the_main_file_of_every_dev_draft_is_the_one_its_authors_compile(data_dir):
    dev = set(json.loads(SPLIT.read_text())["dev"])
    manifest = [p for p in json.loads((data_dir / "drafts" / "manifest.json").read_text()) if p["name"] in dev]
    assert len(manifest) == 20
    wrong = []
    for p in manifest:
        root = data_dir / "drafts" / "projects" / p["name"]
        choice, _ = _choose(root)
        if str(choice.main.relative_to(root)) != p["main"]:
            wrong.append((p["name"], str(choice.main.relative_to(root)), p["main"]))
    assert wrong == []


@pytest.mark.data("drafts/projects/tokenizer-revisited")
def test_a_copied_example_paper_in_a_subfolder_and_other_versions_are_named(data_dir):
    root = data_dir / "drafts" / "projects" / "tokenizer-revisited"
    choice, _ = _choose(root)
    assert choice.main.name == "main.tex" and choice.main.parent == root
    assert "example-arXiv-2412.06845v2/main.tex" in choice.others and "turkish_main.tex" in choice.others
    assert main_file_line("main.tex", ["old.tex"]) == "main file: main.tex (also a \\documentclass: old.tex)"


def test_a_nested_sub_main_does_not_take_over(tmp_path):
    (tmp_path / "paper.tex").write_text(_doc("Real Paper", PROSE * 3))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "main.tex").write_text(_doc("Some Example", PROSE * 40))
    choice, _ = _choose(tmp_path)
    assert choice.main == tmp_path / "paper.tex" and choice.others == ["sub/main.tex"]


def test_a_documentclass_in_a_verbatim_or_comment_block_does_not_count(tmp_path):
    (tmp_path / "a_guide.tex").write_text(
        "How to start a paper:\n\\begin{verbatim}\n\\documentclass{article}\n\\begin{document}\n\\end{verbatim}\n"
        "\\begin{comment}\n\\documentclass{article}\\begin{document}\n\\end{comment}\n" + PROSE * 50)
    (tmp_path / "b_notes.tex").write_text("Also \\verb|\\documentclass{article}| and \\lstinline{\\begin{document}}.\n")
    (tmp_path / "paper.tex").write_text(_doc("Real Paper", PROSE))
    choice, _ = _choose(tmp_path)
    assert choice.main == tmp_path / "paper.tex" and choice.others == []


def test_latexmkrc_names_the_main_file(tmp_path):
    (tmp_path / "a_old_submission.tex").write_text(_doc("Old", PROSE * 30))
    (tmp_path / "paper.tex").write_text(_doc("New", PROSE))
    (tmp_path / ".latexmkrc").write_text("$pdf_mode = 1;\n@default_files = ('paper.tex');\n")
    choice, _ = _choose(tmp_path)
    assert choice.main == tmp_path / "paper.tex" and "latexmkrc" in choice.why
    assert choice.others == ["a_old_submission.tex"]


@pytest.mark.parametrize("makefile", [
    "all:\n\tpdflatex camera_ready.tex\n\tbibtex camera_ready\n",
    "MAIN = camera_ready\nall: $(MAIN).pdf\n%.pdf: %.tex\n\tlatexmk -pdf $(MAIN)\n",
    "camera_ready.pdf: camera_ready.tex refs.bib\n\tlatexmk -pdf $<\n",
])
def test_a_makefile_names_the_main_file(tmp_path, makefile):
    (tmp_path / "a_draft.tex").write_text(_doc("Draft", PROSE * 30))
    (tmp_path / "camera_ready.tex").write_text(_doc("Camera ready", PROSE))
    (tmp_path / "Makefile").write_text(makefile)
    choice, _ = _choose(tmp_path)
    assert choice.main == tmp_path / "camera_ready.tex"


def test_the_largest_include_graph_wins_over_an_alphabetically_first_stale_copy(tmp_path):
    (tmp_path / "sections").mkdir()
    for name in ("intro", "method", "experiments"):
        (tmp_path / "sections" / f"{name}.tex").write_text(PROSE * 20)
    (tmp_path / "a_submission_v1.tex").write_text(_doc("Old version", PROSE * 10))
    (tmp_path / "neurips_2025.tex").write_text(_doc("Current version", "\\input{sections/intro}\n"
                                                    "\\input{sections/method}\n\\input{sections/experiments}\n"))
    choice, _ = _choose(tmp_path)
    assert choice.main == tmp_path / "neurips_2025.tex"
    assert "most text" in choice.why and choice.others == ["a_submission_v1.tex"]


def test_a_file_included_by_another_main_file_is_not_the_main_file_and_a_wrapper_is_read_through(tmp_path):
    (tmp_path / "paper.tex").write_text(_doc("Wrapped Paper", PROSE * 10,
                                             "\\newcommand{\\method}{Kronecker}\n"))
    (tmp_path / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\n\\input{paper}\n\\end{document}\n")
    choice, messages = _choose(tmp_path)
    assert choice.main == tmp_path / "paper.tex"
    assert any("main.tex only wraps paper.tex" in m for m in messages)
    paper = extract_latex(tmp_path)
    assert paper.title == "Wrapped Paper" and paper.stats["main_file"] == "paper.tex"
    assert paper.stats["main_others"] == ["main.tex"]
    given = extract_latex(tmp_path / "main.tex")            # the wrapper named on the command line
    assert given.title == "Wrapped Paper" and given.stats["main_file"] == "paper.tex"
    assert any("main.tex only wraps paper.tex" in m for m in given.messages)


def test_a_main_file_with_text_of_its_own_is_no_wrapper(tmp_path):
    (tmp_path / "appendix_standalone.tex").write_text(_doc("Appendix", PROSE))
    (tmp_path / "main.tex").write_text(_doc("Main", PROSE * 5 + "\\input{appendix_standalone}\n"))
    choice, messages = _choose(tmp_path)
    assert choice.main == tmp_path / "main.tex" and not any("wraps" in m for m in messages)

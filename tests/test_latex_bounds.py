"""Bounds of the LaTeX draft reader (``mustcite audit DRAFT``, ``POST /api/audit``): repeated bad
constructs (unclosed arguments and environments, nested arguments, unclosed math, hostile .bib/.bbl
files, include fan-out) are read to what a correct reading yields, includes have a budget, and an
include that is not read says nothing about whether its path exists on the host.

No test here times anything: that each scanner is linear in its input (time at 2n <= 3 x time at n)
is measured by ``benchmarks/scaling.py`` (cases ``latex/*``), on a quiet machine.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from mustcite.extract.latex import extract_latex

N = 2_000            # repeats of each construct (a correct reading takes well under a second)

HEAD = "\\documentclass{article}\\title{Bounds}\\begin{document}\\section{Intro}Text \\cite{a2020}.\n"
END = "\\end{document}\n"
BIB = "@article{a2020, title={A Title}, author={Xu, Yan}, year={2020}}\n"


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder / "main.tex"


# ---- every scanner reads repeated bad constructs ------------------------------------------------

#: construct -> (the project's files with n repeats, what a correct reading finds of ``a2020``, cited
#: once in HEAD: "bib" its .bib entry (title "A Title"), "bbl" its .bbl record (whose title field is
#: unclosed: no title), None no entry (the project has no .bib/.bbl file holding it: undefined key))
CONSTRUCTS = {
    # an unclosed command argument: each one used to rescan to the end of the text
    "cite": (lambda n: {"main.tex": HEAD + "\\cite{" * n + END, "refs.bib": BIB}, "bib"),
    "citep_opt": (lambda n: {"main.tex": HEAD + "\\citep[p.~1]{" * n + END, "refs.bib": BIB}, "bib"),
    "input": (lambda n: {"main.tex": HEAD + "\\input{" * n + END}, None),
    "bibliography": (lambda n: {"main.tex": HEAD + "\\bibliography{" * n + END, "refs.bib": BIB}, "bib"),
    "section": (lambda n: {"main.tex": HEAD + "\\section{" * n + END}, None),
    "ref": (lambda n: {"main.tex": HEAD + "\\ref{" * n + END}, None),
    # nested arguments that do close: each used to be copied and split again
    "nested_bibliography": (lambda n: {"main.tex": HEAD + "\\bibliography{" * n + "}" * n + END,
                                       "refs.bib": BIB}, "bib"),
    "nested_caption": (lambda n: {"main.tex": HEAD + "\\begin{figure}" + "\\caption{" * n + "}" * n
                                  + "\\end{figure}" + END}, None),
    # an unclosed \begin{...} (or \iffalse): each used to search to the end for its \end
    "begin_comment": (lambda n: {"main.tex": HEAD + "\\begin{comment}" * n + END}, None),
    "begin_figure": (lambda n: {"main.tex": HEAD + "\\begin{figure}x" * n + END}, None),
    "begin_equation": (lambda n: {"main.tex": HEAD + "\\begin{equation}x" * n + END}, None),
    "iffalse": (lambda n: {"main.tex": HEAD + "\\iffalse " * n + END}, None),
    # unclosed math: left in the plain text, each delimiter made the sentence splitter search to the end
    "math_paren": (lambda n: {"main.tex": HEAD + "\\( a. B " * n + END}, None),
    "math_bracket": (lambda n: {"main.tex": HEAD + "\\[" * n + END}, None),
    # the bibliography: an unclosed "{" in a .bib entry, a long white-space run in an author list,
    # .bbl records without their end, many \bibitem of one key, unclosed \bibitem labels
    "bib_unclosed_brace": (lambda n: {"main.tex": HEAD + "\\bibliography{refs}" + END,
                                      "refs.bib": BIB + "@article{k, title={" * n}, "bib"),
    "bib_author_spaces": (lambda n: {"main.tex": HEAD + "\\cite{k2020}\\bibliography{refs}" + END,
                                     "refs.bib": BIB + "@article{k2020, year=2020, author={A" + " " * (10 * n)
                                     + "B}}"}, "bib"),
    # (a field that never closes: the record cannot be read, so a2020 has no entry)
    "bbl_unclosed_field": (lambda n: {"main.tex": HEAD + END, "main.bbl": "\\entry{a2020}{article}{}"
                                      + "\\field{title}{" * n + "\\endentry"}, None),
    "bbl_unended_entry": (lambda n: {"main.tex": HEAD + END,
                                     "main.bbl": "\\endentry" + "\\entry{a2020}{article}{}" * n}, None),
    "bbl_bibitems": (lambda n: {"main.tex": HEAD + END, "main.bbl": "\\bibitem{k} A. B. Title. 2020.\n" * n}, None),
    "bbl_unclosed_labels": (lambda n: {"main.tex": HEAD + END, "main.bbl": "\\bibitem[A{\\'c}{" * n}, None),
    # fan-out: \input b repeated in main.tex, \input c repeated in b.tex, c.tex empty
    "include_fanout": (lambda n: {"main.tex": HEAD + "\\input{b}" * n + END, "b.tex": "\\input{c}" * n,
                                  "c.tex": ""}, None),
}


@pytest.mark.parametrize("kind", list(CONSTRUCTS))
def test_repeated_bad_construct_is_read(tmp_path, kind):
    """The project is read (no exception), its title and the text before the construct kept, and
    ``a2020`` cited once, with its entry where the construct leaves it readable."""
    make, found = CONSTRUCTS[kind]
    paper = extract_latex(_write(tmp_path, make(N)))
    assert paper.title == "Bounds" and paper.status != "failed", (paper.status, paper.messages[:3])
    assert any("Text" in p["text"] for p in paper.passages)
    refs = {r.bibkey: r for r in paper.references}
    a = refs["a2020"]
    assert (a.mentions, a.year) == (1, 2020)
    assert ("undefined_keys" in paper.failure_modes) == (found is None), paper.failure_modes
    assert a.title == ("A Title" if found == "bib" else "")
    assert set(refs) == ({"a2020", "k2020"} if kind == "bib_author_spaces" else {"a2020"})
    if kind == "include_fanout":
        assert any(m.startswith("include budget reached") for m in paper.messages)


# ---- the include budget ---------------------------------------------------------------------------

def test_include_fanout_stops_at_the_budget(tmp_path, monkeypatch):
    from mustcite.extract.latex import includes
    from mustcite.extract.latex.includes import MAX_INCLUDES

    main = _write(tmp_path, {"main.tex": HEAD + "\\input b\n" * 1000 + END,
                             "b.tex": "\\input c\n" * 1000, "c.tex": ""})

    reads, names = [], []
    read_text, resolve = includes.read_text, includes._resolve_include

    def counting_read(path, *a, **k):
        reads.append(path.name)
        return read_text(path, *a, **k)

    def counting_resolve(name, *a, **k):
        names.append(name)
        return resolve(name, *a, **k)
    monkeypatch.setattr(includes, "read_text", counting_read)
    monkeypatch.setattr(includes, "_resolve_include", counting_resolve)
    paper = extract_latex(main)
    # 1,000 x 1,000 includes written; the main file and MAX_INCLUDES of them read, each name looked up once
    assert len(reads) == 1 + MAX_INCLUDES and reads[0] == "main.tex"
    assert sorted(names) == ["b", "c"]
    budget = [m for m in paper.messages if m.startswith("include budget reached")]
    assert budget == [f"include budget reached: {MAX_INCLUDES:,} includes followed; the rest are not read"]
    assert len(paper.stats["files"]) == 1 + MAX_INCLUDES          # the main file and each one followed
    assert paper.references and paper.references[0].bibkey == "a2020"   # the text before is still read


def test_include_budget_counts_empty_files_and_keeps_the_text(tmp_path):
    from mustcite.extract.latex.includes import MAX_INCLUDES

    body = "\\input{empty}" * (MAX_INCLUDES + 5) + "\\section{After}Late text \\cite{a2020}.\n"
    paper = extract_latex(_write(tmp_path, {"main.tex": HEAD + body + END, "empty.tex": "", "refs.bib": BIB}))
    assert sum(m.startswith("include budget reached") for m in paper.messages) == 1
    assert paper.references[0].mentions == 2                      # the text after the includes is read


# ---- one message for every include that is not read --------------------------------------------

def _not_read(tmp_path: Path, name: str, command: str = "input") -> list[str]:
    proj = tmp_path / "proj"
    main = _write(proj, {"main.tex": HEAD + f"\\{command}{{{name}}}" + END, "refs.bib": BIB})
    paper = extract_latex(main)
    return [m.replace(name, "NAME") for m in paper.messages if name in m]


@pytest.mark.parametrize("command", ["input", "include", "subfile"])
def test_outside_and_missing_read_the_same(tmp_path, command):
    (tmp_path / "outside.tex").write_text("\\cite{secret2020}")
    exists_abs = "/etc/hostname" if Path("/etc/hostname").is_file() else str(tmp_path / "outside.tex")
    said = {name: _not_read(tmp_path, name, command) for name in
            (exists_abs, "/nonexistent-mustcite/nope", "../outside.tex", "../outside", "../missing.tex")}
    first = said[exists_abs]
    assert first == [f"main.tex: \\{command}{{NAME}}: not read (outside the project or missing)"]
    assert all(v == first for v in said.values()), said


def test_paths_outside_are_never_looked_at(tmp_path, monkeypatch):
    """The decision is made on the path string: nothing outside the project is stat-ed or opened."""
    (tmp_path / "outside.tex").write_text("\\cite{secret2020}")
    (tmp_path / "outside.bib").write_text(BIB)
    names = ["/etc/hostname", "/nonexistent-mustcite/nope", "../outside", "sub/../../outside"]
    body = "".join(f"\\input{{{n}}}\\include{{{n}}}\\import{{/etc/}}{{hostname}}" for n in names)
    main = _write(tmp_path / "proj", {"main.tex": HEAD + body + "\\bibliography{../outside,/etc/hostname}" + END,
                                      "refs.bib": BIB})
    seen: list[str] = []
    for mod, name in ((os, "stat"), (os, "lstat"), (io, "open")):
        real = getattr(mod, name)

        def spy(p, *a, _real=real, **k):
            seen.append(os.fsdecode(p) if isinstance(p, (str, bytes, os.PathLike)) else str(p))
            return _real(p, *a, **k)
        monkeypatch.setattr(mod, name, spy)
    paper = extract_latex(main)
    monkeypatch.undo()
    assert paper.references and not any(r.bibkey == "secret2020" for r in paper.references)
    probed = {"hostname", "hostname.tex", "hostname.bib", "outside", "outside.tex", "outside.bib"}
    leaked = [p for p in seen if os.path.basename(p) in probed or "nonexistent-mustcite" in p]
    assert leaked == [], leaked


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_a_link_leaving_the_project_reads_as_missing(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "o.tex").write_text("\\cite{secret2020}")
    proj = tmp_path / "proj"
    main = _write(proj, {"main.tex": HEAD + "\\input{lnout/o}\\input{lnin/part}\\input{nolink/o}" + END,
                         "sub/part.tex": "Inside \\cite{b2019}.", "refs.bib": BIB})
    try:
        os.symlink(tmp_path / "out", proj / "lnout")
        os.symlink("sub", proj / "lnin")
    except OSError:
        pytest.skip("cannot make symbolic links here")
    paper = extract_latex(main)
    keys = [r.bibkey for r in paper.references]
    assert "b2019" in keys and "secret2020" not in keys             # a link inside is followed
    msgs = [m.replace("lnout", "X").replace("nolink", "X") for m in paper.messages if "not read" in m]
    assert msgs == ["main.tex: \\input{X/o}: not read (outside the project or missing)"] * 2

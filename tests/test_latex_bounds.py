"""Bounds of the LaTeX draft reader (``mustcite audit DRAFT``, ``POST /api/audit``): every scanner is
linear in its input, includes have a budget, and an include that is not read says nothing about
whether its path exists on the host.

The timing tests read a whole project with :func:`mustcite.extract.latex.extract_latex` (what the
audit calls) at n and 2n repeats of one bad construct and require time(2n) <= 3 * time(n), best of 3
runs each. A scan that restarts at each occurrence and runs to the end of the text is quadratic
(time(2n) ~ 4 * time(n)); a single run over SLOW seconds fails at once.
"""

from __future__ import annotations

import gc
import io
import os
import time
from pathlib import Path

import pytest

from mustcite.extract.latex import extract_latex

N = 10_000
SLOW = 10.0          # seconds for one reading at n: far above a linear reading, far below a quadratic one
NOISE = 0.25         # below this (seconds at 2n) a ratio is timer noise, not growth

HEAD = "\\documentclass{article}\\title{Bounds}\\begin{document}\\section{Intro}Text \\cite{a2020}.\n"
END = "\\end{document}\n"
BIB = "@article{a2020, title={A Title}, author={Xu, Yan}, year={2020}}\n"


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder / "main.tex"


def _best(main: Path, n: int) -> float:
    best = float("inf")
    for _ in range(3):
        gc.collect()
        t0 = time.perf_counter()
        extract_latex(main)
        took = time.perf_counter() - t0
        assert took < SLOW, f"n={n}: {took:.1f} s for one reading (quadratic scanning?)"
        best = min(best, took)
    return best


def _assert_linear(tmp_path: Path, make) -> None:
    """``make(n)`` -> the project files with n repeats; time(2n) <= 3 * time(n) for n = N."""
    t1 = _best(_write(tmp_path / "n", make(N)), N)
    t2 = _best(_write(tmp_path / "2n", make(2 * N)), 2 * N)
    assert t2 <= 3 * t1 or t2 < NOISE, f"time({2 * N}) = {t2:.3f} s > 3 x time({N}) = {t1:.3f} s"


# ---- every scanner is linear --------------------------------------------------------------------

SCANNERS = {
    # an unclosed command argument: each one used to rescan to the end of the text
    "cite": lambda n: {"main.tex": HEAD + "\\cite{" * n + END, "refs.bib": BIB},
    "citep_opt": lambda n: {"main.tex": HEAD + "\\citep[p.~1]{" * n + END, "refs.bib": BIB},
    "input": lambda n: {"main.tex": HEAD + "\\input{" * n + END},
    "bibliography": lambda n: {"main.tex": HEAD + "\\bibliography{" * n + END, "refs.bib": BIB},
    "section": lambda n: {"main.tex": HEAD + "\\section{" * n + END},
    "ref": lambda n: {"main.tex": HEAD + "\\ref{" * n + END},
    # nested arguments that do close: each used to be copied and split again
    "nested_bibliography": lambda n: {"main.tex": HEAD + "\\bibliography{" * n + "}" * n + END, "refs.bib": BIB},
    "nested_caption": lambda n: {"main.tex": HEAD + "\\begin{figure}" + "\\caption{" * n + "}" * n
                                 + "\\end{figure}" + END},
    # an unclosed \begin{...} (or \iffalse): each used to search to the end for its \end
    "begin_comment": lambda n: {"main.tex": HEAD + "\\begin{comment}" * n + END},
    "begin_figure": lambda n: {"main.tex": HEAD + "\\begin{figure}x" * n + END},
    "begin_equation": lambda n: {"main.tex": HEAD + "\\begin{equation}x" * n + END},
    "iffalse": lambda n: {"main.tex": HEAD + "\\iffalse " * n + END},
    # unclosed math: left in the plain text, each delimiter made the sentence splitter search to the end
    "math_paren": lambda n: {"main.tex": HEAD + "\\( a. B " * n + END},
    "math_bracket": lambda n: {"main.tex": HEAD + "\\[" * n + END},
    # the bibliography: an unclosed "{" in a .bib entry (bibtexparser: linear already, kept as a
    # guard), a long white-space run in an author list, .bbl records without their end
    "bib_unclosed_brace": lambda n: {"main.tex": HEAD + "\\bibliography{refs}" + END,
                                     "refs.bib": BIB + "@article{k, title={" * n},
    "bib_author_spaces": lambda n: {"main.tex": HEAD + "\\cite{k2020}\\bibliography{refs}" + END,
                                    "refs.bib": BIB + "@article{k2020, year=2020, author={A" + " " * (10 * n) + "B}}"},
    "bbl_unclosed_field": lambda n: {"main.tex": HEAD + END,
                                     "main.bbl": "\\entry{a2020}{article}{}" + "\\field{title}{" * n + "\\endentry"},
    "bbl_unended_entry": lambda n: {"main.tex": HEAD + END,
                                    "main.bbl": "\\endentry" + "\\entry{a2020}{article}{}" * n},
    "bbl_bibitems": lambda n: {"main.tex": HEAD + END, "main.bbl": "\\bibitem{k} A. B. Title. 2020.\n" * n},
    # fan-out: \input b repeated in main.tex, \input c repeated in b.tex, c.tex empty
    "include_fanout": lambda n: {"main.tex": HEAD + "\\input{b}" * n + END, "b.tex": "\\input{c}" * n, "c.tex": ""},
}


@pytest.mark.parametrize("kind", list(SCANNERS))
def test_scanner_is_linear(tmp_path, kind):
    _assert_linear(tmp_path, SCANNERS[kind])


# ---- the include budget ---------------------------------------------------------------------------

def test_include_fanout_stops_at_the_budget(tmp_path):
    from mustcite.extract.latex.includes import MAX_INCLUDES

    main = _write(tmp_path, {"main.tex": HEAD + "\\input b\n" * 1000 + END,
                             "b.tex": "\\input c\n" * 1000, "c.tex": ""})
    t0 = time.perf_counter()
    paper = extract_latex(main)
    took = time.perf_counter() - t0
    assert took < SLOW, f"{took:.1f} s"
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

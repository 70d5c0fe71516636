"""The BibTeX proposed for an ``outdated`` entry reads back and compiles.

Real titles with ``%`` ``&`` ``#`` ``^`` ``_`` ``$`` ``~``, braces and backslashes (the fixture
``helpers/special_titles.json``, cut from the shared data with file and line; and, where the data is
here, every such title of the paper lists and ML Anthology records) are written as proposals with
a user's other fields, then read back by bibtexparser and by mustcite's own reader, and, where the
``bibtex`` program is installed, run through it with a minimal ``.aux`` (and through ``pdflatex``
when that is installed too). A check-refs run on a real NeurIPS 2019 paper cited as an arXiv
preprint shows the whole path.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import bibtexparser
import pytest
from helpers.refcheck_work import special_titles

from mustcite.bibwrite import braced_value, latex_text
from mustcite.extract.bibtex import parse_bib
from mustcite.refcheck.published import kept_fields, published_name, record_bibtex

#: a user's arXiv entry's other fields (as a .bib file writes them)
USER_FIELDS = {"title": "old title", "author": "Someone Else", "journal": "arXiv preprint arXiv:2001.00001",
               "eprint": "2001.00001", "archiveprefix": "arXiv", "primaryclass": "cs.LG", "year": "2020",
               "pages": "1--10", "doi": "10.1000/some_thing", "note": r"Code at \url{https://x.org/a_b}",
               "keywords": "quantization, LLM", "url": "https://arxiv.org/abs/2001.00001"}


def record(r: dict, venue: str = "NeurIPS") -> dict:
    return {"title": r["title"], "authors": r["authors"], "venue": venue, "year": 2020,
            "url": "https://example.org/paper?id=1&v=2#x"}


def balanced(text: str) -> bool:
    """Braces balanced as BibTeX counts them (every brace, escaped or not)."""
    depth = 0
    for c in text:
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
    return depth == 0


def _outside_math(text: str) -> str:
    return re.sub(r"(?<!\\)\$(?:[^$\\]|\\.)+?(?<!\\)\$|\\\(.*?\\\)", "", text)


def test_each_special_character_is_escaped_outside_math():
    assert latex_text("PAC-Bayes & Margins") == r"PAC-Bayes \& Margins"
    assert latex_text("SlimSAM: 0.1% Data") == r"SlimSAM: 0.1\% Data"
    assert latex_text("DVAE#: Discrete") == r"DVAE\#: Discrete"
    assert latex_text("(RF)^2 -- Random") == r"(RF)\textasciicircum{}2 -- Random"
    assert latex_text("Actions ~ Transformations") == r"Actions \textasciitilde{} Transformations"
    assert latex_text("Vancouver or _______") == r"Vancouver or \_\_\_\_\_\_\_"
    assert latex_text("Stability of $K$-Means, $\\ell_1$") == "Stability of $K$-Means, $\\ell_1$"   # math kept
    assert latex_text("QuIP$#$: Even Better") == r"QuIP$\#$: Even Better"        # "#" stops LaTeX in math too
    assert latex_text("costs $5 only") == r"costs \$5 only"                       # a lone "$" is a dollar
    assert latex_text(r"L\_2 kernel \textit{x}") == r"L\_2 kernel \textit{x}"     # the record's LaTeX kept
    assert latex_text("a } b { c") == r"a \textbraceright{} b \textbraceleft{} c"
    assert latex_text("$\\{0,1\\}^n$ and \\{") == "$\\{0,1\\}^n$ and \\textbraceleft{}"
    assert latex_text("ends in \\") == r"ends in \textbackslash{}"
    assert latex_text("bell\x07 rlo\u202e") == r"bell\textbackslash{}x07 rlo\textbackslash{}u202e"
    assert braced_value("50\\% of {it}}") == "50\\% of {it}\\textbraceright{}"


def test_names_keep_their_casing_and_stay_one_name():
    assert published_name("Ashish Vaswani") == "Ashish Vaswani"
    assert published_name("peter j bickel", ["Peter J. Bickel", "Bin Yu"]) == "Peter J. Bickel"
    assert published_name("peter j bickel") == "Peter J Bickel"
    assert published_name("guy van den broeck") == "Guy van den Broeck"
    assert published_name("jean-philippe vert") == "Jean-Philippe Vert"
    bib = record_bibtex({"title": "T", "authors": ["Research and Development Team", "Doe, Jane", "arthur szlam"],
                         "venue": "ICML", "year": 2019}, "k")
    assert "author = {{Research and Development Team} and {Doe, Jane} and Arthur Szlam}" in bib


def test_the_users_other_fields_are_kept_and_the_preprints_left_out():
    rec = record({"title": "A 100% Title", "authors": ["Ziyu Jiang"]})
    kept, left = kept_fields(USER_FIELDS, rec)
    assert dict(kept) == {"doi": "10.1000/some_thing", "note": r"Code at \url{https://x.org/a_b}",
                          "keywords": "quantization, LLM"}
    assert sorted(left) == ["archiveprefix", "eprint", "pages", "primaryclass", "url"]
    bib = record_bibtex(rec, "jiang2019", USER_FIELDS)
    got = bibtexparser.parse_string(bib, parse_stack=[])
    assert not got.failed_blocks and len(got.entries) == 1
    e = got.entries[0]
    assert e.entry_type == "inproceedings" and e.key == "jiang2019"
    assert {f.key for f in e.fields} == {"title", "author", "booktitle", "year", "url", "doi", "note", "keywords"}
    assert e["title"] == r"{{A 100\% Title}}" and e["url"] == "{https://example.org/paper?id=1&v=2#x}"
    # an arXiv DOI and a note that only says "preprint" describe the version replaced
    _, left = kept_fields({"doi": "10.48550/arXiv.2001.00001", "note": "arXiv preprint", "abstract": "A."}, rec)
    assert left == ["doi", "note"]
    # without a URL of the record's, the user's own (not arXiv's) stays
    assert dict(kept_fields({"url": "https://github.com/x/y"}, {**rec, "url": ""})[0]) == \
        {"url": "https://github.com/x/y"}


def _check_entries(bib: str, titles: list[str]) -> None:
    """Every proposal reads back whole, by bibtexparser and by mustcite's reader, with balanced
    values, no special character raw outside math, and plain titles decoded as they were."""
    got = bibtexparser.parse_string(bib, parse_stack=[])
    assert not got.failed_blocks, [b.error for b in got.failed_blocks][:3]
    assert len(got.entries) == len(titles)
    for e, title in zip(got.entries, titles):
        for f in e.fields:
            assert balanced(f.value), (e.key, f.key, f.value)
        value = e["title"][2:-2]
        assert not re.search(r"(?<!\\)[%&#_^~]", _outside_math(value).replace("\\textasciicircum{}", "")
                             .replace("\\textasciitilde{}", "")), (title, value)
        assert not re.search(r"(?<!\\)[%&#]", value), (title, value)       # not even in math
    entries, messages = parse_bib(bib, "proposed.bib")
    assert messages == [] and len(entries) == len(titles)
    for e, title in zip(entries, titles):
        if not re.search(r"[$\\{}]", title):            # plain text: read back as it was
            back = e.title.replace("\u02c6", "^").replace("\u02dc", "~")    # pylatexenc's circumflex and tilde
            typed = title.replace("---", "\u2014").replace("--", "\u2013")   # LaTeX's dashes, as typed
            assert " ".join(back.split()) == " ".join(typed.split()).rstrip("."), (title, e.title)


def _run_bibtex(tmp_path: Path, bib: str, *, latex: bool) -> None:
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    (tmp_path / "doc.aux").write_text("\\citation{*}\n\\bibdata{refs}\n\\bibstyle{plain}\n", encoding="utf-8")
    run = subprocess.run(["bibtex", "doc"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1) and "error message" not in run.stdout, run.stdout[-2000:]  # 1: warnings only
    if not latex:
        return
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n\\usepackage{amsmath}\n"
        "\\usepackage{url}\n\\begin{document}\n\\nocite{*}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n"
        "\\end{document}\n", encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, errors="replace", timeout=300)
    assert run.returncode == 0, "\n".join(line for line in run.stdout.splitlines() if line.startswith("!"))[:2000]


def _typesettable(title: str) -> bool:
    """A title pdflatex can set without the record's own LaTeX (commands) or characters outside
    Latin-1 (pdflatex needs a package for Greek or math symbols typed as Unicode)."""
    return "\\" not in title and all(ord(c) < 0x100 or c in "‘’“”–—" for c in title)


def _fixture_bib(recs: list[dict]) -> str:
    return "".join(record_bibtex(record(r), f"k{i}", USER_FIELDS) for i, r in enumerate(recs))


def test_fixture_titles_read_back():
    recs = special_titles()
    assert len(recs) >= 80 and {c for r in recs for c in "%&#^_$~{}" if c in r["title"]} == set("%&#^_$~{}")
    bib = _fixture_bib(recs)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]", bib)
    _check_entries(bib, [r["title"] for r in recs])


@pytest.mark.skipif(shutil.which("bibtex") is None, reason="no bibtex program here")
def test_fixture_titles_through_bibtex(tmp_path):
    _run_bibtex(tmp_path, _fixture_bib(special_titles()), latex=False)


def _has_latex() -> bool:
    return shutil.which("pdflatex") is not None and shutil.which("kpsewhich") is not None and \
        subprocess.run(["kpsewhich", "article.cls"], capture_output=True).returncode == 0


@pytest.mark.skipif(shutil.which("bibtex") is None or not _has_latex(), reason="no bibtex and pdflatex here")
def test_fixture_titles_compile(tmp_path):
    """The titles pdflatex can set as text (no LaTeX of the record's own, no Greek typed as
    Unicode) compile without one error."""
    plain = [r for r in special_titles() if _typesettable(r["title"])]
    assert len(plain) >= 50
    _run_bibtex(tmp_path, _fixture_bib(plain), latex=True)


@pytest.mark.data
def test_every_special_title_of_the_data_reads_back(data_dir, tmp_path):
    """All titles of the paper lists and ML Anthology records with a special character."""
    titles, seen = [], set()
    files = sorted((data_dir / "proceedings" / "paperlists").glob("*.jsonl.gz")) + \
        sorted((data_dir / "anthology" / "records").glob("*.jsonl.gz"))
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh.read().split("\n"):
                if '"title"' not in line:
                    continue
                t = (json.loads(line).get("title") or "").strip()
                if t and t not in seen and re.search(r"[%&#^_$~{}]", t):
                    seen.add(t)
                    titles.append(t)
    assert len(titles) > 1000
    bib = "".join(record_bibtex({"title": t, "authors": ["A. Author"], "venue": "ICML", "year": 2020}, f"k{i}")
                  for i, t in enumerate(titles))
    _check_entries(bib, titles)
    if shutil.which("bibtex"):
        _run_bibtex(tmp_path, bib, latex=False)


@pytest.mark.data("proceedings/paperlists/nips2019.jsonl.gz")
def test_check_refs_proposes_the_published_version(tmp_path, capsys):
    """A real NeurIPS 2019 paper with "%" in its title, cited as an arXiv preprint with a DOI, a
    note, pages and eprint fields: the proposal is the published version, with the note and the
    DOI kept, and the check's notes name the fields left out."""
    from helpers.refcheck_work import paperlist_work

    from mustcite.cli.main import main

    work = paperlist_work(tmp_path / "work")
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{jiang2019e2,\n  title = {E2-Train: Training State-of-the-art CNNs with Over 80\\% Less "
                   "Energy},\n  author = {Jiang, Ziyu and Wang, Yue and Chen, Xiaohan and Xu, Pengfei and Zhao, Yang "
                   "and Lin, Yingyan and Wang, Zhangyang},\n  journal = {arXiv preprint arXiv:1910.13349},\n"
                   "  eprint = {1910.13349},\n  archivePrefix = {arXiv},\n  pages = {1--12},\n"
                   "  doi = {10.5555/e2train},\n  note = {Our baseline; code at \\url{https://github.com/x/e2_train}},\n"
                   "  year = {2019}\n}\n", encoding="utf-8")
    assert main(["--work", str(work), "check-refs", str(bib), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["status"] == "outdated", got
    assert any("leaves out" in n and "eprint, archiveprefix, pages" in n for n in got["notes"]), got["notes"]
    e = bibtexparser.parse_string(got["bibtex"], parse_stack=[]).entries[0]
    assert e.key == "jiang2019e2" and e.entry_type == "inproceedings"
    assert e["title"] == "{{E2-Train: Training State-of-the-art CNNs with Over 80\\% Less Energy}}"
    assert e["author"].startswith("{Ziyu Jiang and Yue Wang") and e["year"] == "{2019}"
    assert e["booktitle"] == "{Advances in Neural Information Processing Systems}"
    assert e["doi"] == "{10.5555/e2train}" and e["note"] == "{Our baseline; code at \\url{https://github.com/x/e2_train}}"
    assert {f.key for f in e.fields}.isdisjoint({"eprint", "archiveprefix", "pages", "journal"})

"""Hostile bibliographies for check-refs: a field line without its comma, a biblatex record whose
field never closes, "et al." ending an author field, an over-long ``\\bibitem`` label or key, and
accented LaTeX decoded as pylatexenc decodes it. The corpus is the one of ``test_refcheck`` (real
paper lists); the bibliographies are written for each case."""

from __future__ import annotations

import json
import re

import pytest
from test_refcheck import bib, rec, records, work  # noqa: F401  (the corpus fixtures)

from mustcite.cli.main import main
from mustcite.extract import bibtex as B
from mustcite.refcheck.compare import compare_authors
from mustcite.refcheck.entries import read_entries
from mustcite.refcheck.index import Record

corpus = pytest.mark.data("proceedings/paperlists/nips2019.jsonl.gz")


def run(work_dir, *args: str) -> int:
    return main(["--work", str(work_dir), "check-refs", *args])


# ---- a field line without its comma ---------------------------------------------------------------

MISSING_COMMA = {       # (entry text, the field whose comma is missing, the one it swallows, the line)
    "before author": ("@article{k,\n  title = {A}\n  author = {B},\n  year = {2020}\n}\n", "title", "author", 2),
    "before year": ("@article{k,\n  title = {A Title},\n  author = {Doe, Jane}\n  year = {2020},\n}\n",
                    "author", "year", 3),
    "braced then quoted": ('@article{k,\n  title = {A Title}\n  author = "Doe, Jane",\n  year = 2020\n}\n',
                           "title", "author", 2),
    "quoted then braced": ('@article{k,\n  title = "A Title"\n  author = {Doe, Jane},\n  year = 2020\n}\n',
                           "title", "author", 2),
    "number value": ("@article{k,\n  title = {A Title},\n  year = 2020\n  author = {Doe, Jane},\n}\n",
                     "year", "author", 3),
    "month macro": ("@article{k,\n  title = {A Title},\n  month = jan\n  journal = {J},\n  year = 2020\n}\n",
                    "month", "journal", 3),
    "same line": ("@article{k,\n  title = {A Title} author = {Doe, Jane},\n  year = 2020\n}\n", "title", "author", 2),
}


@pytest.mark.parametrize("case", list(MISSING_COMMA))
def test_a_field_without_its_comma_makes_the_entry_unreadable_at_its_line(case):
    text, field, swallowed, line = MISSING_COMMA[case]
    (e,), messages = B.parse_bib("% refs\n" + text, "refs.bib", keep_unreadable=True)
    assert (e.key, e.source, e.title) == ("k", "refs.bib:2", "") and not messages
    assert e.unreadable == (f"malformed BibTeX entry: no comma after the field '{field}' (line {line + 1}), "
                            f"before '{swallowed} =': BibTeX stops on it")
    entries, messages = B.parse_bib(text, "refs.bib")
    assert entries == [] and len(messages) == 1 and messages[0].startswith("refs.bib:1: malformed BibTeX entry "
                                                                         "skipped ('@article{k,'): no comma")


@pytest.mark.parametrize("text", [
    "@article{k,\n  title = {A Title},\n  year = 2020\n}\n",                  # no comma after the last field
    "@article{k,\n  title = {A Title} # { and More},\n  year = 2020}\n",      # a joined value
    '@article{k,\n  title = {A {B} x = 1},\n  note = "y = 2", year = 2020}\n',   # "=" inside values
    "@article{k, title={T}, author = {Doe, J.}, year = 2020,}\n",
])
def test_whole_values_are_read(text):
    (e,), messages = B.parse_bib(text, "refs.bib", keep_unreadable=True)
    assert not e.unreadable and not messages and e.title.startswith(("A Title", "A B x = 1", "T")) and e.year == 2020


@corpus
def test_check_refs_fails_on_an_entry_without_its_comma(work, records, tmp_path, capsys):  # noqa: F811
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    path = tmp_path / "refs.bib"
    path.write_text(bib("ok", g["title"], g["authors"], 2019, "booktitle = {NeurIPS}")
                    + "@inproceedings{swallowed,\n  title = {" + g["title"] + "}\n  author = {"
                    + " and ".join(g["authors"]) + "},\n  booktitle = {NeurIPS},\n  year = 2019\n}\n",
                    encoding="utf-8")
    assert run(work, str(path), "--format", "json", "--fail-on", "mismatch") == 1
    got = capsys.readouterr()
    rows = {r["key"]: r for r in map(json.loads, got.out.splitlines())}
    assert rows["ok"]["status"] == "verified"
    assert (rows["swallowed"]["status"], rows["swallowed"]["source"]) == ("unreadable", "refs.bib:7")
    assert "no comma after the field 'title' (line 8)" in json.dumps(rows["swallowed"])
    assert "1 unreadable" in got.err


# ---- "et al." ending the author field -------------------------------------------------------------

@pytest.mark.parametrize("value,names", [
    ("Smith, J. et al.", ["J. Smith"]),
    ("J. Smith et al.", ["J. Smith"]),
    ("J. Smith et al", ["J. Smith"]),
    ("Smith, J., et al.", ["J. Smith"]),
    ("Smith, John and Doe, Jane et~al.", ["John Smith", "Jane Doe"]),
    ("J. Smith et. al.", ["J. Smith"]),
    ("Smith, J. Et Al.", ["J. Smith"]),
    ("J. Smith and others", ["J. Smith"]),
])
def test_a_name_ending_in_et_al_is_a_shortened_list(value, names):
    assert B.split_authors(value) == (names, True)


@pytest.mark.parametrize("value", ["Al Etal", "Metal, Petal", "Bet al", "Vaswani, Ashish and Shazeer, Noam"])
def test_names_that_only_look_like_et_al_are_names(value):
    assert B.split_authors(value)[1] is False


def test_et_al_after_the_first_author_is_no_missing_author():
    record = Record("p", "Denoising Diffusion Probabilistic Models", ["Jonathan Ho", "Ajay Jain", "Pieter Abbeel"],
                    "NeurIPS", 2020)
    for authors in ("Ho, Jonathan et al.", "J. Ho et al", "Ho, J., et al."):
        (e,), _ = B.parse_bib("@inproceedings{ho2020, title = {Denoising Diffusion Probabilistic Models},\n"
                              f"  author = {{{authors}}}, booktitle = {{NeurIPS}}, year = {{2020}}}}\n", "refs.bib")
        assert e.others and len(e.authors) == 1 and "al" not in e.authors[0].lower().split(), e.authors
        assert compare_authors(e, record) == [], authors


# ---- biblatex records whose field never closes ----------------------------------------------------

BIBLATEX = r"""\begin{refcontext}[sorting=nyt]{}
  \entry{good}{article}{}
    \field{title}{A Good Title}
    \field{year}{2020}
  \endentry
  \entry{bad}{article}{}
    \field{year}{2021}
    \field{title}{An Unclosed {Title
    \field{journal}{J}
  \endentry
  \entry{badverb}{misc}{}
    \field{title}{Fine}
    \verb{url}
    \verb http://example.org
  \endentry
  \entry{badname}{misc}{}
    \name{author}{1}{}{%
      {{hash=1}{family={Doe}, given={Jane}}%
    \field{title}{Named}
  \endentry
\endrefcontext
"""


def test_a_biblatex_field_that_never_closes_makes_its_record_unreadable(tmp_path):
    bbl = tmp_path / "refs.bbl"
    bbl.write_text(BIBLATEX, encoding="utf-8")
    got = read_entries(bbl)[0]
    assert [(e.key, e.source, e.unreadable) for e in got] == [
        ("good", "refs.bbl:2", ""),
        ("bad", "refs.bbl:6", "the field 'title' (line 8) never closes before \\endentry (an unclosed brace)"),
        ("badverb", "refs.bbl:11", "the field 'url' (line 13) never closes before \\endentry "
                                   "(a \\verb without \\endverb)"),
        ("badname", "refs.bbl:16", "the field 'author' (line 17) never closes before \\endentry (an unclosed brace)")]
    assert got[0].title == "A Good Title"


@corpus
def test_check_refs_fails_on_a_biblatex_record_that_never_closes(work, tmp_path, capsys):  # noqa: F811
    bbl = tmp_path / "refs.bbl"
    bbl.write_text(BIBLATEX, encoding="utf-8")
    for level in ("not_found", "mismatch", "outdated"):
        assert run(work, str(bbl), "--format", "json", "--fail-on", level) == 1
        rows = {r["key"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
        assert {k: (r["status"], r["source"]) for k, r in rows.items() if k != "good"} == {
            "bad": ("unreadable", "refs.bbl:6"), "badverb": ("unreadable", "refs.bbl:11"),
            "badname": ("unreadable", "refs.bbl:16")}


# ---- \bibitem heads over their caps ----------------------------------------------------------------

def _items(head: str) -> str:
    return ("\\begin{thebibliography}{3}\n\\bibitem[One(2019)]{one}\nA. One.\n\\newblock Title A.\n\\newblock 2019.\n\n"
            + head + "\nB. Two.\n\\newblock Title B.\n\\newblock 2020.\n\n"
            "\\bibitem{three}\nC. Three.\n\\newblock Title C.\n\\newblock 2021.\n\\end{thebibliography}\n")


@pytest.mark.parametrize("head,why", [
    ("\\bibitem[" + "Ili{\\'c}" * 300 + "]{ilic2020}",
     "a \\bibitem whose label is 2,400 characters long, over the cap of 2,000 characters"),
    ("\\bibitem{" + "k" * 1500 + "}",
     "a \\bibitem whose key is 1,500 characters long, over the cap of 1,000 characters"),
    ("\\bibitem[" + "A" * 3000 + "{ilic2020}", "a \\bibitem whose key cannot be read (an unclosed brace or bracket?)"),
])
def test_an_over_long_bibitem_label_or_key_is_called_over_long(head, why):
    got, messages = B.parse_bbl(_items(head), "refs.bbl")
    assert [e.key for e in got] == ["one", "three"]
    assert messages == [f"refs.bbl:7: ?: item skipped: {why}"]


# ---- accented LaTeX -------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "Schr{\\\"o}dinger", "Schr\\\"odinger", "Schr\\\"{o}dinger", "Ren\\'e Doe", "{\\v S}ara Bo{\\v{s}}njak",
    "Fran\\c cois and Fran\\c{c}ois", "Ili{\\'c}, Anastasija", "Erd\\H{o}s", "G{\\\"u}nter -- {K}laus",
    "Mart{\\'\\i}n", "M\\\"{\\i}", "\\\"\\=a", "\\i\\\"o", "\\textbf{\\\"o} and \\emph\\'e", "caf\\'e~au~lait",
    "\\\\\\\"o", "a\\&\\\"o", "\\\"%c\n\\={a}", "\\~n\\^o\\`e\\.z\\u a\\r a\\k a\\d a\\b a",
])
def test_accents_decode_as_the_converter_decodes_them_whole(value):
    whole = re.sub(r"\s+", " ", B._converter().latex_to_text(value)).strip()
    assert B.decode_latex(value) == whole


@pytest.mark.parametrize("value", [
    "{\\em Proc. {AI}{S}tats}.", "\\emph{a {\\em b} c}", "a \\em b", "x\\rm y", "{\\bf\\em x}", "a\\/b",
    "{1203--1209} and a---b", "A \\& B", "pp.\\ 545", "2019{\\natexlab{a}}", "\\textit{a}\\textbf{b}\\textsc{c}",
    "\\em\\'e", "a \\& b --- \\url{x}", "\\\\em x", "{\\em 131}, 1203--1209", "{\\tt x} {\\sf y} {\\sl z}",
    "{\\itshape x}{\\bfseries y}", "\\textsl{x}\\textnormal{y}", "\\textmd{x}",
])
def test_font_commands_and_dashes_decode_as_the_converter_decodes_them(value):
    whole = re.sub(r"\s+", " ", B._converter().latex_to_text(value)).strip()
    assert B.decode_latex(value) == whole


@pytest.mark.parametrize("value", ["\\textsf{x}", "\\textup{x}", "\\texttt{x}", "\\mbox{x}"])
def test_font_commands_the_converter_drops_keep_their_text(value):
    # pylatexenc reads these as nothing, which would cut a word out of a title or a name ("Cs.")
    assert B._converter().latex_to_text(value).strip() == ""
    assert B.decode_latex(value) == "x"


@pytest.mark.data("citations_cs768/papers.jsonl.xz")
def test_bbl_blocks_decode_as_the_converter_decodes_them():
    """Every block of the items of 40 real .bbl files decodes as pylatexenc reads it whole, most
    of them without pylatexenc (font commands, "\\&", dashes)."""
    import lzma

    from helpers import DATA

    blocks = []
    with lzma.open(DATA / "citations_cs768" / "papers.jsonl.xz", "rt", encoding="utf-8") as fh:
        for i, line in zip(range(400), fh):
            if i % 10 == 0:
                for b in json.loads(line)["bbl"]:
                    blocks += [blk.strip() for blk in re.split(r"\\newblock\b", b["text"]) if "\\bibitem" not in blk]
    quick = marked = 0
    for value in blocks:
        accented = B._accents(value)
        if B._PLAIN_UNSAFE.search(accented) is None:
            continue
        marked += 1
        quick += B._simple_markup(accented) is not None
        try:
            whole = "".join((" " if p[:1].isspace() else "") + B._converter().latex_to_text(p)
                            for p in B.latex_pieces(accented))
        except Exception:  # the reader's own fallback
            continue
        assert B._decode(value) == re.sub(r"\s+", " ", whole).strip(), value
    assert len(blocks) > 500 and quick > marked // 2, (quick, marked)


def test_a_long_accented_field_is_decoded_without_spaces_added():
    assert B.decode_latex("{\\\"o}" * 13_000) == "ö" * 13_000          # 65,000 characters, no white space
    assert B.decode_latex("\\'{e}\\textit{x}" * 4_000) == "éx" * 4_000  # the converter, in pieces


# ---- identifiers of another paper: the catalogue of cited works ------------------------------------

#: works of the real catalogue of cited works (demo work folder, works.parquet), as written there
WORKS = [
    {"work_id": "w-95676f05f1479f5e", "title": "Gpt-4 technical report", "year": 2023, "authors": ["OpenAI"],
     "venue": "arXiv preprint arXiv:2303", "identifiers": ["arxiv:2303.08774", "doi:10.48550/arxiv.2303.08774"],
     "kind": "paper", "n_citing": 458},
    {"work_id": "w-3150a0e32357be6f", "title": "Hierarchical text-conditional image generation with clip latents",
     "year": 2022, "authors": ["Aditya Ramesh", "Prafulla Dhariwal", "Alex Nichol", "Casey Chu", "Mark Chen"],
     "venue": "arXiv preprint arXiv:2204", "identifiers": ["arxiv:2204.06125", "doi:10.48550/arxiv.2204.06125"],
     "kind": "paper", "n_citing": 278},
    {"work_id": "w-junk", "title": "URL https://arxiv.org/pdf/1512.03385", "year": 2016, "authors": ["Kaiming He"],
     "venue": "", "identifiers": ["arxiv:1512.03385"], "kind": "paper", "n_citing": 3},
]
GRAPH = "(Nearly) Efficient Algorithms for the Graph Matching"


@pytest.fixture(scope="module")
def catalogue_work(work, records, tmp_path_factory):  # noqa: F811
    """The corpus of test_refcheck plus a catalogue: the real works above, and the arXiv version of
    one corpus paper (its title with a subtitle dropped, its authors; the id is made up)."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from mustcite.extract.works import WORKS_SCHEMA

    root = tmp_path_factory.mktemp("catalogue-work")
    shutil.copytree(work / "corpus", root / "corpus")
    g = rec(records, GRAPH)
    version = {"work_id": "w-version", "title": g["title"].split(":")[0], "year": 2019, "authors": g["authors"],
               "venue": "arXiv", "identifiers": ["arxiv:1906.00001"], "kind": "paper", "n_citing": 2}
    rows = [{f: r.get(f) for f in WORKS_SCHEMA.names} for r in WORKS + [version]]
    pq.write_table(pa.Table.from_pylist(rows, schema=WORKS_SCHEMA), root / "corpus" / "works.parquet")
    return root


@corpus
@pytest.mark.parametrize("ident,flagged", [
    ("eprint = {2303.08774}, archivePrefix = {arXiv}", "arxiv:2303.08774 is the identifier of another paper: "
                                                      "'Gpt-4 technical report' (2023)"),
    ("url = {https://arxiv.org/abs/2204.06125}", "arxiv:2204.06125 is the identifier of another paper: "
                                                 "'Hierarchical text-conditional image generation with clip latents'"),
    ("doi = {10.48550/arXiv.2204.06125}", "is the identifier of another paper: 'Hierarchical text-conditional"),
    ("eprint = {1906.00001}", None),               # the paper's own arXiv version: a shorter title, its authors
    ("eprint = {1512.03385}", None),               # a catalogue title that is no title
    ("eprint = {2501.00001}", None),               # an id nothing in the data knows
])
def test_an_identifier_of_another_catalogued_paper_is_a_mismatch(catalogue_work, records, tmp_path, capsys,  # noqa: F811
                                                                 ident, flagged):
    from mustcite.refcheck import index as I

    I._LOADED.clear()
    g = rec(records, GRAPH)
    path = tmp_path / "refs.bib"
    path.write_text(bib("k", g["title"], g["authors"], 2019, "booktitle = {NeurIPS}", extra=",\n  " + ident),
                    encoding="utf-8")
    code = run(catalogue_work, str(path), "--format", "json", "--fail-on", "mismatch")
    (row,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    whys = [i["why"] for i in row.get("issues", [])]
    if flagged is None:
        assert (code, row["status"], whys) == (0, "verified", []), row
    else:
        assert code == 1 and row["status"] == "mismatch" and any(flagged in w for w in whys), row


def test_a_file_of_unreadable_entries_is_reported_without_the_index(tmp_path, capsys, monkeypatch):
    from mustcite.refcheck import index as I

    def no_index(*a, **k):
        raise AssertionError("the index was loaded")

    monkeypatch.setattr(I, "load_index", no_index)
    path = tmp_path / "refs.bib"
    path.write_text(MISSING_COMMA["before author"][0], encoding="utf-8")
    assert run(tmp_path / "no-work", str(path), "--fail-on", "mismatch") == 1      # no corpus needed either
    got = capsys.readouterr()
    assert "unreadable" in got.out and "no comma after the field 'title'" in got.out
    assert got.err.strip().endswith("check-refs failed: 1 entry mismatch or not_found or unreadable: k")

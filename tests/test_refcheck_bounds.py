"""``check-refs`` on odd and hostile .bib/.bbl input: ``@string`` concatenation, ``crossref``,
blocks that cannot be read, the caps, bounded work, "et al." lists, escaped Markdown, file names
after ``--`` and ``--out``.

The bad-input cases are small generated texts; the cases that need records use the corpus cut
from the real NeurIPS 2019 / ICML 2019 / ICLR 2020 / ACL 2022 paper lists of ``test_refcheck``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from lsprotocol import types
from test_refcheck import bib, rec, records, work  # noqa: F401  (the corpus fixtures)

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.extract import bibtex as B
from mustcite.lsp.diagnostics import cite_diagnostics, entry_diagnostics
from mustcite.lsp.documents import Cite
from mustcite.refcheck import check_refs, load_index
from mustcite.refcheck.check import check_entries, joined_title
from mustcite.refcheck.compare import compare_authors, compare_year
from mustcite.refcheck.entries import MAX_ENTRIES, Entry, entries_from_bib, read_entries
from mustcite.refcheck.index import Record
from mustcite.refcheck.render import render, render_markdown, summary
from mustcite.refcheck.results import FAIL_ON, STATUSES, Issue, RefCheck, fail_statuses
from mustcite.refcheck.venue import classify_venue

REPO = Path(__file__).resolve().parents[1]
#: the tests that build the corpus of ``test_refcheck``
corpus = pytest.mark.data("proceedings/paperlists/nips2019.jsonl.gz")

NIPS19 = ("@proceedings{DBLP:conf/nips/2019,\n  editor = {Hanna M. Wallach and Hugo Larochelle},\n"
          "  title = {Advances in Neural Information Processing Systems 32: Annual Conference on Neural "
          "Information Processing Systems 2019, NeurIPS 2019, December 8-14, 2019, Vancouver, BC, Canada},\n"
          "  year = {2019},\n  url = {https://proceedings.neurips.cc/paper/2019}\n}\n")


def run(work_dir: Path, *args: str) -> int:
    return main(["--work", str(work_dir), "check-refs", *args])


def one(text: str) -> Entry:
    (e,), _ = entries_from_bib(text, "refs.bib")
    return e


# ---- 1. @string concatenation --------------------------------------------------------------------

def test_string_concatenation_is_the_joined_text():
    e = one('@string{nips20 = "Advances in Neural Information Processing Systems 33"}\n'
            '@inproceedings{k,\n  title = {T},\n  booktitle = "Proc. " # NIPS20,\n  year = 2020\n}\n')
    assert e.venue == "Proc. Advances in Neural Information Processing Systems 33" and e.year == 2020
    e = one('@String{conf = {Advances in } # "Neural Information " # sys}\n@string{SYS = {Processing Systems}}\n'
            '@inproceedings{k, title = {T}, booktitle = conf # { 33}, year = {2020}}\n')
    assert e.venue == "Advances in Neural Information Processing Systems 33"
    values = B._Values({})
    assert values.value("jan") == "January" and values.value('"May " # 2020') == "May 2020"
    assert values.value("undefined") == "undefined"          # a name no @string defines stays as written


def test_a_string_defined_again_holds_its_new_value_for_the_entries_after_it():
    """As in BibTeX: the CVPR author kit's .bib (three of the real drafts) defines the venue names
    long, then again short; the second definition is no duplicate key and no note."""
    text = ("@String(PAMI = {IEEE Trans. Pattern Anal. Mach. Intell.})\n"
            "@String(CVPR= {IEEE Conf. Comput. Vis. Pattern Recog.})\n\n"
            "@article{early, title = {T}, journal = CVPR, year = 2005}\n"
            "@String(PAMI  = {IEEE TPAMI})\n@String(CVPR  = {CVPR})\n@String(both = PAMI # { and } # CVPR)\n"
            "@article{late, title = {U}, journal = both, year = 2005}\n"
            "@article{late2, title = {V}, journal = PAMI, year = 2005}\n")
    entries, messages = entries_from_bib(text, "refs.bib")
    assert [(e.key, e.venue) for e in entries] == [
        ("early", "IEEE Conf. Comput. Vis. Pattern Recog."), ("late", "IEEE TPAMI and CVPR"), ("late2", "IEEE TPAMI")]
    assert messages == []
    _, messages = entries_from_bib(text + "@misc{early, title = {W}}\n", "refs.bib")
    assert messages == ["refs.bib:10: duplicate BibTeX key 'early'; the first entry is used"]


def test_string_cycles_depth_and_blowup_terminate(monkeypatch):
    """Each case ends, and the work is linear in the file: every @string name is expanded at most
    twice (once per use, its value memoised), never once per path to it (2^40 for the doubling)."""
    expansions: list[str] = []
    macro = B._Values.macro

    def counting(self, name, depth):
        expansions.append(name)
        return macro(self, name, depth)
    monkeypatch.setattr(B._Values, "macro", counting)

    def strings(text: str) -> int:
        return text.count("@string")

    cycle = "@string{a = b}\n@string{b = a}\n@misc{k, title = {T}, note = a # b, year = 2020}\n"
    e = one(cycle)
    assert e.year == 2020                                     # read; the cycle ended
    assert len(expansions) <= 2 * strings(cycle), expansions
    expansions.clear()
    chain = "".join(f"@string{{s{i} = s{i + 1}}}\n" for i in range(100)) + '@string{s100 = "end"}\n'
    e = one(chain + "@misc{k, title = s0, year = 2020}\n")
    assert e.title == f"s{B.MAX_STRING_DEPTH}"                # expanded MAX_STRING_DEPTH levels, then left
    assert len(expansions) <= 2 * strings(chain)
    expansions.clear()
    doubling = '@string{d0 = "xx"}\n' + "".join(f"@string{{d{i + 1} = d{i} # d{i}}}\n" for i in range(40))
    (e,), _ = entries_from_bib(doubling + "@misc{k, title = {T}, note = d40}\n", "refs.bib")
    assert "note" in e.unreadable and f"{B.MAX_FIELD_CHARS:,}" in e.unreadable and e.source == "refs.bib:42"
    assert len(expansions) <= 2 * strings(doubling)


# ---- 2. crossref ---------------------------------------------------------------------------------

def test_crossref_children_take_what_they_lack_with_a_bound():
    text = (NIPS19 + "@inproceedings{child, title = {A Paper}, author = {Ada Lovelace},\n"
            "  crossref = {dblp:conf/nips/2019}}\n"
            "@inproceedings{noauthor, title = {Another Paper}, crossref = {DBLP:conf/nips/2019}}\n")
    parent, child, noauthor = entries_from_bib(text, "refs.bib")[0]
    assert parent.kind == "proceedings"
    assert child.year == 2019 and child.venue.startswith("Advances in Neural Information Processing Systems 32")
    assert child.authors == ["Ada Lovelace"] and child.url is None      # the volume's URL is not the paper's
    assert noauthor.authors == []                                        # the editors are not its authors
    # a chain of parents is followed MAX_CROSSREF_DEPTH levels up (the year is one level further
    # up than the child reaches, and just as far as the first parent reaches); a cycle ends
    top = B.MAX_CROSSREF_DEPTH + 1
    chain = "@misc{c, title = {C}, crossref = {p1}}\n" + "".join(
        f"@misc{{p{i}, title = {{P{i}}}, crossref = {{p{i + 1}}}}}\n" for i in range(1, top)) \
        + f"@misc{{p{top}, title = {{P}}, year = 2001}}\n"
    got = entries_from_bib(chain, "refs.bib")[0]
    assert (got[0].year, got[1].year) == (None, 2001)
    cycle = "@misc{a, title = {A}, crossref = {b}}\n@misc{b, title = {B}, crossref = {a}}\n"
    assert [e.year for e in entries_from_bib(cycle, "refs.bib")[0]] == [None, None]


@corpus
def test_crossref_entries_are_checked_with_their_parent(work, records, tmp_path):  # noqa: F811
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")            # NeurIPS 2019
    authors = " and ".join(g["authors"])
    path = tmp_path / "dblp.bib"
    path.write_text(f"@inproceedings{{child,\n  title = {{{g['title']}}},\n  author = {{{authors}}},\n"
                    f"  crossref = {{DBLP:conf/nips/2019}}\n}}\n"
                    f"@inproceedings{{child_late,\n  title = {{{g['title']}}},\n  author = {{{authors}}},\n"
                    f"  year = {{2020}},\n  crossref = {{DBLP:conf/nips/2019}}\n}}\n" + NIPS19, encoding="utf-8")
    got = {c.key: c for c in check_refs(path, work=work)}
    assert got["child"].status == "verified", got["child"]
    late = got["child_late"]
    assert late.status == "mismatch"
    assert [(i.field, i.entry, i.record) for i in late.issues] == [("year", "2020", "2019")]
    volume = got["DBLP:conf/nips/2019"]
    assert volume.status == "unverifiable" and "a proceedings volume, not a paper" in volume.why
    assert volume.source == "dblp.bib:12"


# ---- 3. unreadable blocks ------------------------------------------------------------------------

BROKEN = ("@article{ok, title = {Fine}, year = {2019}}\n"
          "@article{broken,\n  title = {Unclosed {brace,\n  year = 2020\n}\n"
          "@article{after, title = {After}, year = {2019}}\n")


def test_a_block_that_cannot_be_read_is_an_unreadable_entry():
    entries, _ = entries_from_bib(BROKEN, "refs.bib")
    assert [(e.key, bool(e.unreadable)) for e in entries] == [("ok", False), ("broken", True), ("after", False)]
    (c,) = check_entries([entries[1]], index=None)             # needs no index
    assert (c.status, c.source) == ("unreadable", "refs.bib:2") and "malformed BibTeX" in c.why
    assert "Unexpected block start" in c.why                   # the parser's own message
    assert STATUSES[:5] == ("verified", "outdated", "mismatch", "not_found", "unverifiable")
    assert STATUSES[-1] == "unreadable"
    assert all("unreadable" in fail_statuses(level) for level in FAIL_ON)
    assert "1 unreadable" in summary([c]) and "1 unreadable" in render([c], "table")
    assert json.loads(render([c], "json"))["status"] == "unreadable"
    assert "**unreadable**" in render([c], "markdown")


def test_bbl_items_that_cannot_be_read_are_unreadable(tmp_path):
    bbl = tmp_path / "refs.bbl"
    bbl.write_text("\\begin{thebibliography}{3}\n\\bibitem{a}\nA. One.\n\\newblock Title A.\n\\newblock 2019.\n"
                   "\\bibitem{broken\nB. Two.\n\\newblock Title B.\n\\bibitem{}\nC.\n\\bibitem{c}\nC. Three.\n"
                   "\\newblock Title C.\n\\newblock 2019.\n\\end{thebibliography}\n", encoding="utf-8")
    got = read_entries(bbl)[0]
    assert [(e.key, e.source, bool(e.unreadable)) for e in got] == [
        ("a", "refs.bbl:2", False), ("?", "refs.bbl:6", True), ("?", "refs.bbl:9", True), ("c", "refs.bbl:11", False)]
    cut = tmp_path / "cut.bbl"          # biblatex, cut short after its first record
    cut.write_text("\\entry{a}{inproceedings}{}\n\\field{title}{T}\n\\endentry\n"
                   "\\entry{b}{article}{}\n\\field{title}{U}\n", encoding="utf-8")
    got = read_entries(cut)[0]
    assert [(e.key, e.source, bool(e.unreadable)) for e in got] == [("a", "cut.bbl:1", False), ("b", "cut.bbl:4", True)]


# items cut from a real natbib .bbl (attanchor's iclr2026_conference.bbl): labels with accents in braces
NATBIB_ITEMS = r"""\begin{thebibliography}{49}
\bibitem[Banerjee \& Lavie(2005)Banerjee and Lavie]{banerjee2005meteor}
Satanjeev Banerjee and Alon Lavie.
\newblock Meteor: An automatic metric for mt evaluation with improved correlation with human judgments.
\newblock In \emph{Proceedings of the acl workshop on intrinsic and extrinsic evaluation measures}, pp.\  65--72, 2005.

\bibitem[Bica et~al.(2024)Bica, Ili{\'c}, Bauer, Erdogan, Bo{\v{s}}njak, Kaplanis, Gritsenko, Minderer, Blundell, Pascanu, et~al.]{bica2024improving}
Ioana Bica, Anastasija Ili{\'c}, Matthias Bauer, Goker Erdogan, Matko Bo{\v{s}}njak, Christos Kaplanis, Alexey~A Gritsenko, Matthias Minderer, Charles Blundell, Razvan Pascanu, et~al.
\newblock Improving fine-grained understanding in image-text pre-training.
\newblock \emph{arXiv preprint arXiv:2401.09865}, 2024.

\bibitem[Chen et~al.(2023{\natexlab{a}})Chen, Han, Zhao, Zhang, Shi, Xu, and Xu]{chen2023x}
Feilong Chen, Minglun Han, Haozhi Zhao, Qingyang Zhang, Jing Shi, Shuang Xu, and Bo~Xu.
\newblock X-llm: Bootstrapping advanced large language models by treating multi-modalities as foreign languages.
\newblock \emph{arXiv preprint arXiv:2305.04160}, 2023{\natexlab{a}}.

\bibitem[Auer et~al.(2012)]{auer2012imputation}
Paul~L Auer, Jill~M Johnsen, et~al.
\newblock Imputation of exome sequence variants into population-based samples.
\newblock \emph{The American Journal of Human Genetics}, 91\penalty0 (5):\penalty0 794--808, 2012.

\bibitem[O\'Neil \{\] {a{b{c{d}}}}(2019)O'Neil]
  {oneil2019}
Cathy O'Neil.
\newblock A title.
\newblock 2019.
\end{thebibliography}
"""  # noqa: E501  (the real lines)


def test_a_bbl_label_with_nested_braces_and_escapes_is_read():
    got, messages = B.parse_bbl(NATBIB_ITEMS, "refs.bbl")
    assert messages == []
    assert [(e.key, e.source, e.year) for e in got] == [
        ("banerjee2005meteor", "refs.bbl:2", 2005), ("bica2024improving", "refs.bbl:7", 2024),
        ("chen2023x", "refs.bbl:12", 2023), ("auer2012imputation", "refs.bbl:17", 2012),
        ("oneil2019", "refs.bbl:22", 2019)]
    meteor, bica, chen, auer, oneil = got
    assert auer.raw.endswith("Genetics, 91(5):794–808, 2012.")     # \penalty0 prints nothing
    assert meteor.raw.endswith("pp. 65–72, 2005.")          # the next item's text is not part of it
    assert bica.title == "Improving fine-grained understanding in image-text pre-training"
    assert bica.authors[:5] == ["Ioana Bica", "Anastasija Ilić", "Matthias Bauer", "Goker Erdogan", "Matko Bošnjak"]
    assert bica.raw.endswith("arXiv preprint arXiv:2401.09865, 2024.")
    assert chen.title.startswith("X-llm: Bootstrapping") and chen.raw.endswith("2023a.")
    assert oneil.title == "A title"
    heads = [B._bibitem_head(NATBIB_ITEMS, m.start(), len(NATBIB_ITEMS))
             for m in B._BIBITEM_HEAD.finditer(NATBIB_ITEMS)]
    assert [h.label for h in heads] == [
        "Banerjee \\& Lavie(2005)Banerjee and Lavie",
        "Bica et~al.(2024)Bica, Ili{\\'c}, Bauer, Erdogan, Bo{\\v{s}}njak, Kaplanis, Gritsenko, Minderer, "
        "Blundell, Pascanu, et~al.",
        "Chen et~al.(2023{\\natexlab{a}})Chen, Han, Zhao, Zhang, Shi, Xu, and Xu",
        "Auer et~al.(2012)",
        "O\\'Neil \\{\\] {a{b{c{d}}}}(2019)O'Neil"]


@pytest.mark.parametrize("head", [
    "\\bibitem[Ili{\\'c} (2020){ilic2020}",          # "[" never closed before the next item
    "\\bibitem[Ili{\\'c (2020)]{ilic2020}",           # "{" never closed: the "]" is inside it
    "\\bibitem[Ili}c (2020)]{ilic2020}",              # a "}" that closes nothing
    "\\bibitem[Ili{\\'c} (2020)\n\nText]{ilic2020}",   # a blank line inside the label
    "\\bibitem[Ili{\\'c} (2020)]\n",                  # no key
    "\\bibitem{ilic2020\n",                           # the key never closed on its line
])
def test_a_bbl_head_that_cannot_be_read_is_noted_and_the_next_item_is_read(head, tmp_path):
    text = ("\\begin{thebibliography}{3}\n\\bibitem[One(2019)]{one}\nA. One.\n\\newblock Title A.\n\\newblock 2019.\n\n"
            + head + "\nB. Ili\\'c.\n\\newblock Title B.\n\\newblock 2020.\n\n"
            "\\bibitem[Three(2021)]{three}\nC. Three.\n\\newblock Title C.\n\\newblock 2021.\n\\end{thebibliography}\n")
    got, messages = B.parse_bbl(text, "refs.bbl")
    assert [(e.key, e.title, e.year) for e in got] == [("one", "Title A", 2019), ("three", "Title C", 2021)]
    assert got[0].raw == "A. One. Title A. 2019."
    assert messages == ["refs.bbl:7: ?: item skipped: a \\bibitem whose key cannot be read (an unclosed brace or "
                        "bracket?)"]
    bbl = tmp_path / "refs.bbl"
    bbl.write_text(text, encoding="utf-8")
    assert [(e.key, e.source, bool(e.unreadable)) for e in read_entries(bbl)[0]] == [
        ("one", "refs.bbl:2", False), ("?", "refs.bbl:7", True),
        ("three", f"refs.bbl:{12 + head.count(chr(10))}", False)]


def test_a_repeated_field_keeps_its_first_value_with_a_note():
    (e,), messages = entries_from_bib("@article{k,\n  title = {First},\n  title = {Second},\n  year = 2019\n}\n",
                                      "refs.bib")
    assert not e.unreadable and e.title == "First" and e.year == 2019
    assert any("first value" in n for n in e.notes) and any("refs.bib:1" in m for m in messages)


def test_the_editor_shows_an_unreadable_entry_as_an_error_at_its_line(monkeypatch):
    from mustcite.lsp import server
    from mustcite.refcheck import check

    c = RefCheck("broken", "unreadable", why="malformed BibTeX entry: ...", source="refs.bib:2")
    (d,) = entry_diagnostics(BROKEN, c)
    assert d.severity == types.DiagnosticSeverity.Error and d.range.start.line == 1 and d.code == "unreadable"
    cite = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=5))
    (w,) = cite_diagnostics([Cite("broken", cite)], {"broken": c}, ["refs.bib"])
    assert w.code == "unreadable" and "cannot be read" in w.message
    # the server reads the buffer with the same code: the block is an error, the others are checked
    monkeypatch.setattr(check, "check_entries", lambda es, index: [RefCheck(e.key, "verified") for e in es])
    monkeypatch.setattr(server.CitationServer, "index", lambda self: None)
    diags = server.CitationServer().check_bib("file:///tmp/refs.bib", BROKEN)
    assert [(d.code, d.range.start.line, d.severity) for d in diags] == [
        ("unreadable", 1, types.DiagnosticSeverity.Error)]


@corpus
def test_every_gate_fails_on_an_unreadable_entry(work, records, tmp_path, capsys):  # noqa: F811
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    path = tmp_path / "refs.bib"
    path.write_text(bib("ok", g["title"], g["authors"], 2019, "booktitle = {NeurIPS}")
                    + "@article{broken,\n  title = {Unclosed {brace,\n  year = 2020\n}\n", encoding="utf-8")
    assert run(work, str(path)) == 0                           # no gate: reported, not failed
    out = capsys.readouterr().out
    assert "broken" in out and "unreadable" in out and "1 verified" in out and "1 unreadable" in out
    for level in FAIL_ON:
        assert run(work, str(path), "--format", "json", "--fail-on", level) == 1
        got = capsys.readouterr()
        rows = [json.loads(x) for x in got.out.splitlines()]
        assert [(r["key"], r["status"], r["source"]) for r in rows][1] == ("broken", "unreadable", "refs.bib:7")
        assert "broken" in got.err and "1 unreadable" in got.err


# ---- 4. caps -------------------------------------------------------------------------------------

def test_more_entries_than_the_cap_are_refused_at_the_first_over_it(tmp_path, capsys, monkeypatch):
    from mustcite.refcheck import entries

    text = "@string{x = {X}}\n" + "".join(f"@misc{{k{i}, title = {{T{i}}}}}\n" for i in range(MAX_ENTRIES + 5))
    path = tmp_path / "many.bib"
    path.write_text(text, encoding="utf-8")
    parsed: list[str] = []                  # refused before any entry is read: the parsers are never called
    monkeypatch.setattr(entries, "parse_bib", lambda text, name, **k: parsed.append(name) or ([], []))
    monkeypatch.setattr(entries, "parse_bbl", lambda text, name, **k: parsed.append(name) or ([], []))
    with pytest.raises(MustciteError) as err:
        read_entries(path)
    assert parsed == []
    assert err.value.line == MAX_ENTRIES + 2 and "more than 10,000 entries" in err.value.message
    assert str(err.value).startswith(f"{path}:{MAX_ENTRIES + 2}:")
    # the command says so and stops before it loads any corpus (there is none here)
    assert run(tmp_path / "no-work", str(path)) == 1
    assert f"many.bib:{MAX_ENTRIES + 2}: more than 10,000 entries" in capsys.readouterr().err
    bbl = tmp_path / "many.bbl"
    bbl.write_text("".join(f"\\bibitem{{k{i}}} A. Author. Title {i}. 2019.\n" for i in range(MAX_ENTRIES + 1)))
    with pytest.raises(MustciteError, match="more than 10,000 entries"):
        read_entries(bbl)
    assert parsed == []


def test_a_field_or_title_over_the_caps_makes_its_entry_unreadable(tmp_path, monkeypatch):
    huge = "x " * (B.MAX_FIELD_CHARS // 2 + 10)
    long_title = " ".join(["word"] * (B.MAX_TITLE_WORDS + 1))
    path = tmp_path / "refs.bib"
    path.write_text("@misc{ok, title = {Fine}, year = 2020}\n"
                    f"@article{{huge,\n  title = {{T}},\n  abstract = {{{huge}}}\n}}\n"
                    f"@article{{long, title = {{{long_title}}}, year = 2020}}\n"
                    f"@article{{fine, title = {{{' '.join(['word'] * B.MAX_TITLE_WORDS)}}}}}\n", encoding="utf-8")
    decoded: list[str] = []                 # what the LaTeX converter is given: never a value over the caps
    decode = B.decode_latex
    monkeypatch.setattr(B, "decode_latex", lambda value: decoded.append(value or "") or decode(value))
    ok, huge_e, long_e, fine = read_entries(path)[0]
    assert decoded and max(len(v) for v in decoded) <= B.MAX_FIELD_CHARS
    assert max(len(v.split()) for v in decoded) <= B.MAX_TITLE_WORDS
    assert not ok.unreadable and not fine.unreadable
    assert huge_e.source == "refs.bib:2" and "'abstract'" in huge_e.unreadable and "65,536" in huge_e.unreadable
    assert long_e.source == "refs.bib:6" and "201 words" in long_e.unreadable and "200 words" in long_e.unreadable
    checks = check_entries([huge_e, long_e], index=None)
    assert [c.status for c in checks] == ["unreadable", "unreadable"]
    bbl = tmp_path / "refs.bbl"
    bbl.write_text("\\begin{thebibliography}{3}\n\\bibitem{ok}\nJane Doe.\n\\newblock A fine title.\n"
                   "\\newblock In NeurIPS, 2019.\n\\bibitem{huge}\nJane Doe.\n\\newblock " + huge + ".\n"
                   "\\bibitem{long}\nJane Doe.\n\\newblock " + long_title + ".\n\\newblock In NeurIPS, 2019.\n"
                   "\\end{thebibliography}\n", encoding="utf-8")
    decoded.clear()
    got = read_entries(bbl)[0]
    assert [(e.key, e.source, bool(e.unreadable)) for e in got] == [
        ("ok", "refs.bbl:2", False), ("huge", "refs.bbl:6", True), ("long", "refs.bbl:9", True)]
    assert decoded and max(len(v) for v in decoded) <= B.MAX_FIELD_CHARS    # the huge item is never converted


# ---- 5. bounded work ------------------------------------------------------------------------------

def test_decode_latex_reads_pieces_of_bounded_size(monkeypatch):
    """The work of the converter (quadratic in the length of each call: the reason for the pieces)
    doubles with the text, and no piece is much longer than :data:`LATEX_PIECE`."""
    calls: list[int] = []

    class Counting:
        def latex_to_text(self, text):
            calls.append(len(text))
            return text

    monkeypatch.setattr(B, "_converter", lambda: Counting())

    def work_of(text):
        calls.clear()
        B.decode_latex(text)
        return sum(k * k for k in calls)

    assert work_of("{A} -- \\emph{word} " * 5000) == 0           # common markup: read without the converter
    for unit in ("{A} -- \\ell ", "{a & ", "$x$ ", "\\textbf{"):       # text the converter must read
        n = 5 * B.LATEX_PIECE
        small, large = unit * (n // len(unit)), unit * (2 * n // len(unit))
        assert work_of(large) / work_of(small) < 3, unit
        assert max(calls) <= 4 * B.LATEX_PIECE + len(unit)


def test_accents_braces_and_ties_never_reach_the_converter_whole(monkeypatch):
    """Accent commands on one letter go to the converter one at a time (once per spelling); what is
    left, braces and "~", needs no converter: the converter never sees the long text."""
    real, calls = B._converter(), []

    class Counting:
        def latex_to_text(self, text):
            calls.append(len(text))
            return real.latex_to_text(text)

    monkeypatch.setattr(B, "_converter", lambda: Counting())
    B._accented.cache_clear()
    text = '{\\"o}~\\\'{e} {A} \\v{s}\\" u' * 20_000
    assert B.decode_latex(text) == "ö é A šü" * 20_000
    assert sorted(calls) == [3, 4, 5, 5]        # \"o, \" u, \'{e}, \v{s}: once each
    B._accented.cache_clear()


@corpus
def test_joined_title_of_a_run_on_title_is_none(work, records):  # noqa: F811
    """A title of n (and 2n) real NeurIPS title words in a row is no join of two papers' titles (the
    quadratic version took seconds at n; its time at n and 2n is measured by benchmarks/scaling.py,
    case refcheck/joined_title, not here)."""
    index = load_index(work)
    words = [w for r in records.values() if r["venue"] == "NeurIPS" for w in r["title"].split()]
    claim = classify_venue("Advances in Neural Information Processing Systems")
    n = 2000

    def join(k):
        title = " ".join(words[:k])
        return joined_title(index, title, Entry("k", title=title, authors=["Jane Doe"], year=2019), claim, 2019)

    assert len(words) >= 2 * n
    assert join(n) is None and join(2 * n) is None


# ---- 6. "et al." ---------------------------------------------------------------------------------

def test_et_al_in_the_author_field_is_a_shortened_list():
    e = one("@inproceedings{ho2020, title = {Denoising Diffusion Probabilistic Models},\n"
            "  author = {Jonathan Ho et al.}, booktitle = {NeurIPS}, year = {2020}}\n")
    assert (e.authors, e.others) == (["Jonathan Ho"], True)
    record = Record("p", "Denoising Diffusion Probabilistic Models", ["Jonathan Ho", "Ajay Jain", "Pieter Abbeel"],
                    "NeurIPS", 2020)
    assert compare_authors(e, record) == []                   # not "2 authors missing"


# ---- 7. Markdown ---------------------------------------------------------------------------------

HOSTILE = ("![x](http://evil.example/x.png) <img src=x onerror=alert(1)> [click](javascript:alert(1)) "
           "<http://evil.example> http://bare.example www.evil.example *em* _u_ `code` | # heading\nnext line")


def test_markdown_report_copies_no_markup_from_entries_or_records():
    bibtex = "@inproceedings{k,\n  title = {```\n<img src=x onerror=alert(1)>\n````}\n}\n"
    checks = [RefCheck("k`ey|<b>", "mismatch", issues=[Issue("title", HOSTILE, HOSTILE, HOSTILE)],
                       record={"title": HOSTILE, "venue": "<b>V</b>", "year": 2019}, why=HOSTILE, source="x.bib:1"),
              RefCheck("vaswani2017", "outdated", record={"title": "A", "venue": "NeurIPS", "year": 2017},
                       why=HOSTILE, bibtex=bibtex)]
    md = render_markdown(checks)
    table, _, block = md.partition("```bibtex")
    for bad in ("![", "<img", "<http", "<b>", "](", "*em*", "_u_", "http://", "www.evil", "`code`", "\nnext line"):
        assert not re.search(r"(?<!\\)" + re.escape(bad), table), bad       # only escaped, if at all
    assert "`vaswani2017`" in table                              # a plain key stays a readable code span
    assert all(line.count("|") - line.count("\\|") == 5 for line in table.splitlines()[2:4])   # 4 cells each
    # the BibTeX block is fenced by more backticks than any run in it: no value closes it
    fence = md[md.index("bibtex\n") - 5:md.index("bibtex\n")]
    assert fence == "`````" and md.rstrip().endswith("\n`````") and "<img src=x onerror=alert(1)>" in block


# ---- 8. the hook, "--" and --out ---------------------------------------------------------------

def test_the_hook_passes_file_names_after_a_double_dash():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    hook = hooks["mustcite-check-refs"]
    assert (hook["entry"].split() + hook["args"])[-1] == "--"


def test_a_file_named_like_an_option_is_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run(tmp_path / "no-work", "--fail-on", "mismatch", "--", "--out=refs.bib") == 1
    assert "--out=refs.bib: file not found" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []                      # nothing written


def test_out_may_not_be_an_input_file(tmp_path, capsys):
    path = tmp_path / "refs.bib"
    path.write_text(BROKEN, encoding="utf-8")
    (tmp_path / "link.bib").symlink_to(path)
    os.link(path, tmp_path / "hard.bib")
    for out in (path, tmp_path / "." / "refs.bib", tmp_path / "link.bib", tmp_path / "hard.bib"):
        assert run(tmp_path / "no-work", str(path), "--out", str(out)) == 2
        assert "--out is the input file" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == BROKEN


# ---- the NeurIPS year rule -----------------------------------------------------------------------

def test_a_neurips_entry_a_year_late_is_a_mismatch_despite_its_volume():
    e = one('@string{neurips = "Advances in Neural Information Processing Systems"}\n'
            "@inproceedings{brown2020, title = {Language Models are Few-Shot Learners},\n"
            "  author = {Tom B. Brown and Benjamin Mann}, booktitle = neurips, volume = {33}, year = {2021}}\n")
    assert (e.volume, e.year) == (33, 2021)
    claim = classify_venue(e.venue)
    gpt3 = Record("p", "Language Models are Few-Shot Learners", ["Tom B. Brown", "Benjamin Mann"], "NeurIPS", 2020)
    issue = compare_year(e, claim, gpt3, 2020)
    assert issue is not None and (issue.field, issue.entry, issue.record) == ("year", "2021", "2020")

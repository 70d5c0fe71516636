"""Positions the language server computes from a document's text alone."""

from lsprotocol import types

from mustcite.lsp.documents import Lines, appended_entry, bibliographies, cites, field_value

BIB = """@inproceedings{a,
  title = {A {BERT} Study of \\"{o}},
  year = 2021,
  author = "Doe, Jane and Roe, Richard"
}

@article{b, title={Second}, year={2020}}
"""


def _at(text, span):
    return text[span[0]:span[1]]


def test_field_values_in_braces_quotes_and_bare():
    assert _at(BIB, field_value(BIB, 1, "title")) == 'A {BERT} Study of \\"{o}'
    assert _at(BIB, field_value(BIB, 1, "year")) == "2021"
    assert _at(BIB, field_value(BIB, 1, "author")) == "Doe, Jane and Roe, Richard"
    assert _at(BIB, field_value(BIB, 7, "year")) == "2020"
    assert field_value(BIB, 1, "doi") is None
    # the first entry's fields never come from the next entry
    assert field_value(BIB, 7, "author") is None


def test_positions_count_utf16_units():
    text = "ä😀x\nnext"
    lines = Lines(text)
    assert lines.position(text.index("x")) == types.Position(line=0, character=3)   # ä 1 unit, 😀 2
    assert lines.position(text.index("next")) == types.Position(line=1, character=0)


def test_cite_keys_outside_comments_and_bibliography_commands():
    tex = "See \\citep[p.~2]{a, b}. % \\cite{hidden}\n\\bibliography{refs,more}\n"
    got = [(c.key, c.range.start.line, c.range.start.character) for c in cites(tex)]
    assert got == [("a", 0, 17), ("b", 0, 20)]
    (bib,) = bibliographies(tex)
    assert bib.names == ["refs.bib", "more.bib"] and bib.range.start.line == 1


def test_an_added_entry_is_separated_by_one_blank_line():
    for before, sep in (("", ""), ("@a{x}\n", "\n"), ("@a{x}", "\n\n"), ("@a{x}\n\n", "")):
        edit = appended_entry(before, "@misc{k,\n}\n")
        assert edit.new_text == sep + "@misc{k,\n}\n"
        assert edit.range.start == Lines(before).end()

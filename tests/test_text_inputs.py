"""Text files as the ``.bib`` and LaTeX readers take them (:func:`mustcite.io.decode_text`):
UTF-8 with or without a byte-order mark, UTF-16 and UTF-32 with one, and UTF-16 without one are
text; a NUL anywhere (not only in the first kilobytes) is binary content, refused with the file,
line and byte offset; bytes that are not UTF-8 are named by line and offset."""

from __future__ import annotations

import pytest

from mustcite.errors import MustciteError
from mustcite.io import BinaryContentError, decode_text, text_encoding

BIB = "@inproceedings{k,\n  title = {Caf\u00e9 \u00dcber \u4e2d\u6587 \U0001F600},\n  year = {2020}\n}\n"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_unicode_encodings_read_as_text(encoding):
    data = BIB.encode(encoding)
    assert decode_text(data, "refs.bib") == BIB
    assert text_encoding(data)[0].startswith(encoding.replace("-sig", ""))


def test_a_nul_anywhere_is_binary_content_with_its_place():
    data = ("x" * 5000 + "\n" * 3).encode() + b"ab\x00cd"
    with pytest.raises(BinaryContentError) as info:
        decode_text(data, "refs.bib")
    assert info.value.path == "refs.bib" and info.value.line == 4
    assert "offset 5,005" in str(info.value)
    with pytest.raises(BinaryContentError) as info:         # a NUL character in UTF-16 text
        decode_text("ab\ncd\x00".encode("utf-16"), "refs.bib")
    assert info.value.line == 2 and "offset 12" in str(info.value)
    with pytest.raises(BinaryContentError):
        decode_text(bytes(range(256)) * 40, "paper.tex")


def test_bytes_that_are_not_utf8_are_named_by_line_and_offset():
    with pytest.raises(MustciteError) as info:
        decode_text(b"@article{a,\n title={Caf\xe9}}\n", "refs.bib")
    assert not isinstance(info.value, BinaryContentError)
    assert info.value.line == 2 and "0xe9 at offset 23" in str(info.value)
    assert decode_text(b"Caf\xe9", "refs.bib", errors="replace") == "Caf\ufffd"


def test_plain_ascii_and_empty_input_are_utf8():
    assert text_encoding(b"") == ("utf-8", 0)
    assert decode_text(b"", "a.tex") == ""
    assert text_encoding(b"\\section{A}\n") == ("utf-8", 0)


# ---- outputs: a corpus write killed half-way leaves no temporary file behind for good -----------


def test_a_corpus_write_removes_the_temp_files_a_killed_write_left(tmp_path):
    import os
    import subprocess
    import sys

    from mustcite.corpus.records import Paper
    from mustcite.corpus.store import load_papers, write_papers

    out = tmp_path / "corpus" / "papers.parquet"
    out.parent.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    stale = [out.parent / f".papers.parquet.{dead.stdout.strip()}.abcd1234.tmp",    # its process is gone
             out.parent / ".papers.parquet.k2j4h5g6.tmp"]                           # an older version's name
    alive = out.parent / f".papers.parquet.{os.getppid()}.live0000.tmp"             # a write still running
    other = out.parent / ".works.parquet.1.x.tmp"                                   # another file's
    for p in stale + [alive, other]:
        p.write_bytes(b"PAR1 half-written")
    write_papers([Paper(paper_id="p1", title="A Title", year=2020, venue="NeurIPS")], out)
    assert [p.exists() for p in stale] == [False, False] and alive.exists() and other.exists()
    assert load_papers(tmp_path).column("paper_id").to_pylist() == ["p1"]
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".papers.parquet.") and p != alive]

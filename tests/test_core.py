"""Core helpers: errors, JSONL reading, atomic writes, ids, the reference-file schema, CLI exit codes."""

from __future__ import annotations

import gzip
import json

import pytest
from helpers import DATA

from mustcite.cli.main import main
from mustcite.corpus.records import make_paper_id, normalize_title
from mustcite.errors import MustciteError
from mustcite.extract.records import Context, Reference, validate_reference_file, validate_reference_list
from mustcite.io import atomic_write_json, iter_jsonl


@pytest.mark.data
def test_iter_jsonl_survives_unicode_line_separators():
    # The data README: some files hold U+2028/U+0085 inside JSON strings; splitlines() breaks them.
    path = DATA / "proceedings" / "paperlists" / "nips2012.jsonl.gz"
    raw = gzip.open(path, "rt", encoding="utf-8").read()
    assert len(raw.splitlines()) == 375  # the trap: more "lines" than records
    assert sum(1 for _ in iter_jsonl(path)) == 370  # manifest: records 370


def test_iter_jsonl_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(MustciteError) as exc:
        list(iter_jsonl(bad))
    assert exc.value.line == 2 and "bad.jsonl:2" in str(exc.value)


def test_iter_jsonl_non_utf8(tmp_path):
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes('{"title": "Caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(MustciteError, match="not UTF-8"):
        list(iter_jsonl(bad))


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "out.json"
    atomic_write_json(target, {"v": 1})
    with pytest.raises(TypeError):
        atomic_write_json(target, {"v": object()})
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_paper_id_is_stable_and_normalised():
    a = make_paper_id("BERT: Pre-training of Deep Bidirectional Transformers", "NAACL", 2019, "N19-1423")
    b = make_paper_id("BERT_ Pre-Training of deep  bidirectional transformers", "naacl", 2019, "N19-1423")
    assert a == b
    assert a != make_paper_id("BERT: Pre-training of Deep Bidirectional Transformers", "NAACL", 2020, "N19-1423")
    assert normalize_title("Élan: Ünïcode—Titles!") == "elan unicode titles"


def test_reference_schema_accepts_masterset_items_and_rejects_bad_ones(tmp_path):
    ref = Reference(target=1, title="Attention is all you need", year=2017, cite="1",
                    contexts=[Context("3 Method", "We follow the Transformer [1].")], mentions=1)
    validate_reference_list([ref.to_dict()])
    bad = [dict(ref.to_dict(), year="2017")]
    with pytest.raises(MustciteError) as exc:
        validate_reference_list(bad, path="x.json")
    assert exc.value.field == "0/year"
    path = tmp_path / "refs.json"
    path.write_text(json.dumps([{"target": 1, "title": "t", "year": 2020, "cite": "1"}]))
    with pytest.raises(MustciteError, match="contexts"):
        validate_reference_file(path)


def test_cli_exit_codes(capsys):
    assert main(["--help"]) == 0
    assert main(["no-such-command"]) == 2


def test_write_jsonl_streams_gzips_and_never_leaves_half_a_file(tmp_path):
    from mustcite.io import JsonlWriter, iter_jsonl, write_jsonl

    rows = [{"id": i, "text": "ä" * i} for i in range(5)]
    for name in ("a.jsonl", "a.jsonl.gz"):
        assert write_jsonl(tmp_path / name, rows) == 5
        assert [obj for _, obj in iter_jsonl(tmp_path / name)] == rows
    assert (tmp_path / "a.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"

    def failing():
        yield {"id": "new"}
        raise RuntimeError("stopped half-way")

    with pytest.raises(RuntimeError):
        write_jsonl(tmp_path / "a.jsonl", failing())
    assert [obj for _, obj in iter_jsonl(tmp_path / "a.jsonl")] == rows   # the old file stands
    w = JsonlWriter(tmp_path / "b.jsonl")
    w.write({"x": 1})
    w.abort()
    assert not (tmp_path / "b.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "a.jsonl.gz"]   # no temp files left

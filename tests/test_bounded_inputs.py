"""Every compressed or archived input is read through one budgeted reader: a small hostile upload
(a tar header claiming gigabytes, a gzip bomb) is refused early with an error naming the file,
without the memory or time it claims. Each hostile file is built here, small, in ``tmp_path``."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest

from mustcite.cli.main import main
from mustcite.collect.http import FetchError, OfflineSource, untar
from mustcite.errors import MustciteError
from mustcite.extract.archive import ArchiveLimits, unpack
from mustcite.io import MAX_DECOMPRESSED_BYTES, iter_jsonl, iter_text_lines, read_json, read_text

MAIN = b"\\documentclass{article}\\title{Safe}\\begin{document}Hi.\\end{document}"
#: 16 MiB of "a" as one gzip member; gzip members concatenate, so N copies decompress to N * 16 MiB
_A16: bytes = b""


def _a16() -> bytes:
    global _A16
    if not _A16:
        _A16 = gzip.compress(b"a" * (16 * 2**20), compresslevel=6)
    return _A16


def _header(name: str, size: int, typ: bytes) -> bytes:
    """One raw 512-byte tar header declaring ``size`` bytes of type ``typ`` (nothing checked)."""
    ti = tarfile.TarInfo(name)
    ti.size, ti.type = size, typ
    return ti._create_header(ti.get_info(), tarfile.GNU_FORMAT, "utf-8", "surrogateescape")


def _hostile_tar(path: Path, typ: bytes, claim: int, body_mib: int = 64) -> Path:
    """A .tar.gz whose first header (a long-name or PAX header) claims ``claim`` bytes, followed by
    ``body_mib`` MiB of real data (so a reader that trusts the header allocates at least that)."""
    name = "././@LongLink" if typ in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK) else "./PaxHeaders/x"
    path.write_bytes(gzip.compress(_header(name, claim, typ)) + _a16() * (body_mib // 16))
    return path


def _tar_gz(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _peak(fn) -> tuple[int, BaseException | None]:
    """(peak traced bytes, the exception) of calling ``fn``."""
    tracemalloc.start()
    err = None
    try:
        fn()
    except BaseException as exc:     # noqa: BLE001 - returned to the test
        err = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, err


def _cli(capsys, tmp_path, *args):
    code = main(["--work", str(tmp_path / "work"), *args])
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- tar headers

@pytest.mark.parametrize("typ,claim", [(tarfile.GNUTYPE_LONGNAME, 2**31), (tarfile.GNUTYPE_LONGLINK, 2**31),
                                       (tarfile.XHDTYPE, 400 * 2**20), (tarfile.XGLTYPE, 400 * 2**20)])
def test_long_name_and_pax_headers_are_refused_unread(tmp_path, typ, claim, monkeypatch):
    import mustcite.io

    evil = _hostile_tar(tmp_path / "evil.tar.gz", typ, claim)
    (tmp_path / "dest").mkdir()
    decompressed: list[int] = []
    readinto = mustcite.io._CappedReader.readinto
    monkeypatch.setattr(mustcite.io._CappedReader, "readinto",
                        lambda self, b: decompressed.append(readinto(self, b)) or decompressed[-1])
    peak, err = _peak(lambda: unpack(evil, tmp_path / "dest"))
    assert isinstance(err, MustciteError), err
    assert str(evil) in str(err) and f"declares {claim} bytes; at most 65536" in str(err)
    assert "long name/PAX record" in str(err)
    assert peak < 50 * 2**20, f"{peak / 2**20:.0f} MB traced"       # the header body is never read
    assert sum(decompressed) <= 2**20, sum(decompressed)     # nor decompressed (one 64 KiB buffer of its 64 MiB)


def test_long_link_draft_is_a_clear_cli_error(capsys, tmp_path):
    evil = _hostile_tar(tmp_path / "draft.tar.gz", tarfile.GNUTYPE_LONGNAME, 2**31, body_mib=16)
    code, out, err = _cli(capsys, tmp_path, "recommend", "--draft", str(evil))
    assert code == 1 and out == ""
    assert err.startswith("error: ") and "draft.tar.gz" in err and "declares 2147483648 bytes" in err
    assert "Traceback" not in err


def test_chained_and_sparse_headers_are_refused(tmp_path):
    (tmp_path / "dest").mkdir()
    chain = b"".join(_header("././@LongLink", 5, tarfile.GNUTYPE_LONGNAME) + b"x" * 512 for _ in range(3000))
    (tmp_path / "chain.tar").write_bytes(chain + b"\0" * 1024)
    with pytest.raises(MustciteError, match="long-name/PAX headers in a row"):
        unpack(tmp_path / "chain.tar", tmp_path / "dest")
    sparse = _header("big.tex", 10, tarfile.GNUTYPE_SPARSE) + b"\0" * 1024
    (tmp_path / "sparse.tar").write_bytes(sparse)
    with pytest.raises(MustciteError, match="sparse"):
        unpack(tmp_path / "sparse.tar", tmp_path / "dest")


def test_tar_stream_is_capped_and_member_caps_still_apply(tmp_path):
    (tmp_path / "dest").mkdir()
    # a figure never written, but decompressed: the stream cap stops it
    arc = _tar_gz(tmp_path / "a.tar.gz", [("main.tex", MAIN), ("fig.png", b"\0" * (4 * 2**20))])
    with pytest.raises(MustciteError, match="expands beyond 1 MB"):
        unpack(arc, tmp_path / "dest", ArchiveLimits(max_stream_bytes=2**20))
    assert ArchiveLimits().stream_bytes() > ArchiveLimits().max_total_bytes
    (tmp_path / "d2").mkdir()
    with pytest.raises(MustciteError, match="tar bomb"):
        unpack(arc, tmp_path / "d2", ArchiveLimits(max_total_bytes=2**20))
    (tmp_path / "d3").mkdir()
    with pytest.raises(MustciteError, match="more than 1 members"):
        unpack(arc, tmp_path / "d3", ArchiveLimits(max_members=1))
    (tmp_path / "d4").mkdir()
    up = unpack(arc, tmp_path / "d4")
    assert [str(p) for p in up.files] == ["main.tex"] and up.members == 2
    # a truncated .tar.gz keeps the members before the break, with a message
    (tmp_path / "cut.tar.gz").write_bytes(arc.read_bytes()[:-200])
    (tmp_path / "d5").mkdir()
    up = unpack(tmp_path / "cut.tar.gz", tmp_path / "d5")
    assert [str(p) for p in up.files] == ["main.tex"]
    assert any("truncated or corrupt" in m for m in up.messages), up.messages


def test_single_gzip_draft_is_capped(tmp_path):
    (tmp_path / "dest").mkdir()
    (tmp_path / "paper.gz").write_bytes(_a16() * 3)               # 48 MiB of text: not a tar
    with pytest.raises(MustciteError, match="expands beyond 32 MB"):
        unpack(tmp_path / "paper.gz", tmp_path / "dest")


# --------------------------------------------------------------------------- gzip data files

def test_line_reader_matches_file_iteration_and_skips_blank_runs(tmp_path):
    text = "a\r\n\n \r b\rc\n\u2028\n" + "\n" * 5000 + "last"
    fh = io.StringIO(text, newline="")
    want = [(i, line.rstrip("\r\n")) for i, line in enumerate(io.StringIO(text, newline=""), 1) if line.strip()]
    assert list(iter_text_lines(fh, "x")) == want
    with pytest.raises(MustciteError, match=r"x:2: line longer than 10 characters"):
        list(iter_text_lines(io.StringIO("ok\n" + "y" * 50, newline=""), "x", max_line_chars=10))


def test_gzip_jsonl_json_and_text_are_capped(tmp_path):
    p = tmp_path / "q.jsonl.gz"
    p.write_bytes(gzip.compress(b"\n" * (3 * 2**20)))
    with pytest.raises(MustciteError, match=r"q.jsonl.gz: expands beyond 2 MB \(a compressed file this large"):
        list(iter_jsonl(p, max_bytes=2 * 2**20))
    assert list(iter_jsonl(p, max_bytes=None)) == []
    j = tmp_path / "x.json.gz"
    j.write_bytes(gzip.compress(b" " * (3 * 2**20) + b"{}"))
    with pytest.raises(MustciteError, match="x.json.gz: expands beyond 1 MB"):
        read_json(j, max_bytes=2**20)
    assert read_json(j) == {}
    with pytest.raises(MustciteError, match="expands beyond"):
        read_text(j, max_bytes=2**20)
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"id": 1}\n' * 1000)[:-30])
    with pytest.raises(MustciteError, match="bad.jsonl.gz: cannot read"):
        list(iter_jsonl(bad))


def _newline_bomb(path: Path) -> Path:
    """~288 MiB of blank lines (past the 256 MiB default cap) in ~300 KB."""
    path.write_bytes(gzip.compress(b"\n" * (16 * 2**20), compresslevel=9) * 18)
    assert 18 * 16 * 2**20 > MAX_DECOMPRESSED_BYTES
    return path


def test_queries_gzip_bomb_is_refused(capsys, tmp_path):
    bomb = _newline_bomb(tmp_path / "q.jsonl.gz")
    t0 = time.perf_counter()
    code, out, err = _cli(capsys, tmp_path, "recommend", "--queries", str(bomb))
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith(f"error: {bomb}: expands beyond 256 MB (a compressed file this large is refused)")
    # a hang detector, not a speed target (the refusal itself is the message above)
    assert time.perf_counter() - t0 < 60
    # one endless line: refused at the line cap, long before the whole file
    line = tmp_path / "line.jsonl.gz"
    line.write_bytes(gzip.compress(b'{"id": "q", "title": "') + _a16() * 3)
    peak, exc = _peak(lambda: list(iter_jsonl(line)))
    assert isinstance(exc, MustciteError) and "line.jsonl.gz:1: line longer than" in str(exc)
    assert peak < 120 * 2**20


def test_run_and_qrels_gzip_bombs_are_refused(capsys, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 t\n") + _a16() * 3)
    code, out, err = _cli(capsys, tmp_path, "evaluate", "--run", str(run), "--qrels", str(qrels))
    assert code == 1 and "Traceback" not in err
    assert err.startswith(f"error: {run}:2: line longer than") and out == ""
    bomb = _newline_bomb(tmp_path / "qrels.gz")
    code, out, err = _cli(capsys, tmp_path, "evaluate", "--run", str(run), "--qrels", str(bomb))
    assert code == 1 and err.startswith(f"error: {bomb}: expands beyond 256 MB")


def test_scidoca_pred_gzip_bomb_is_refused(capsys, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "p1", "predicted_citations": ["a"]}) + "\n")
    pred = _newline_bomb(tmp_path / "pred.jsonl.gz")
    code, out, err = _cli(capsys, tmp_path, "scidoca", "evaluate", "--task", "1", "--pred", str(pred),
                          "--gold", str(gold))
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith(f"error: {pred}: expands beyond 256 MB")


# --------------------------------------------------------------------------- collect --offline

def test_collect_offline_archive_bombs(tmp_path):
    url = "https://github.com/mlresearch/v286/archive/refs/heads/gh-pages.tar.gz"
    big = _tar_gz(tmp_path / "big.tar.gz", [("v/_config.yml", b"volume: 286\n"),
                                            ("v/_posts/huge.md", b"\0" * (48 * 2**20)),
                                            ("v/paper.pdf", b"%PDF" + b"\0" * 2**20)])
    peak, err = _peak(lambda: untar(url, big))
    assert err is None and peak < 20 * 2**20, (err, peak)
    members = untar(url, big)
    assert members == {"v/_config.yml": b"volume: 286\n"}             # the huge post and the PDF are skipped
    assert untar(url, big.read_bytes()) == members
    evil = _hostile_tar(tmp_path / "evil.tar.gz", tarfile.GNUTYPE_LONGNAME, 2**31, body_mib=16)
    with pytest.raises(FetchError, match="declares 2147483648 bytes") as exc:
        untar(url, evil)
    assert exc.value.kind == "archive"
    page = tmp_path / "example.org" / "index.html.gz"
    page.parent.mkdir()
    page.write_bytes(_newline_bomb(tmp_path / "page.gz").read_bytes())
    with pytest.raises(FetchError, match="expands beyond 64 MB") as exc:      # a page is parsed whole
        OfflineSource(tmp_path).read("https://example.org/")
    assert exc.value.kind == "archive"


def test_collect_cli_offline_tar_bomb(capsys, tmp_path):
    off = tmp_path / "offline"
    (off / "pmlr").mkdir(parents=True)
    _hostile_tar(off / "pmlr" / "v286_uai2025.tar.gz", tarfile.XHDTYPE, 400 * 2**20, body_mib=16)
    code, out, err = _cli(capsys, tmp_path, "collect", "UAI", "2025", "--offline", str(off),
                          "--out", str(tmp_path / "out"), "--quiet")
    assert code == 1 and "Traceback" not in err
    assert "declares 419430400 bytes; at most 65536" in err and err.rstrip().splitlines()[-1].startswith("error:")

"""Safe unpacking of LaTeX source archives: zip slip, absolute paths, links, devices, zip bombs and
too many members give a clear error or message, and nothing is written outside the temp folder."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

from mustcite.errors import MustciteError
from mustcite.extract.archive import ArchiveLimits, unpack, unpacked
from mustcite.extract.latex import extract_latex

MAIN = (b"\\documentclass{article}\\title{Safe}\\begin{document}\\section{Intro}"
        b"See \\cite{he2016deep}.\\end{document}")
BIB = b"@inproceedings{he2016deep, title={Deep Residual Learning for Image Recognition}, year={2016}}"


def _zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def _tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                tf.addfile(info, io.BytesIO(m[1]))
    return path


def _snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Temp folders go under tmp_path/tmp; returns (workdir, tmpdir) so tests can check both."""
    t = tmp_path / "tmp"
    t.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(t))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path, t


def _nothing_left(tmp_path: Path, tmpdir: Path, before: set[str]):
    assert list(tmpdir.iterdir()) == []                       # the temp folder is cleaned up
    assert _snapshot(tmp_path) - before <= {str(p.relative_to(tmp_path)) for p in tmpdir.rglob("*")}
    assert not (tmp_path.parent / "evil.tex").exists() and not Path("/tmp/evil.tex").exists()


@pytest.mark.parametrize("bad_name,needle", [
    ("../../evil.tex", "path traversal"),
    ("proj/../../evil.tex", "path traversal"),
    ("/tmp/evil.tex", "absolute path"),
    ("C:/evil.tex", "absolute path"),
    ("..\\..\\evil.tex", "path traversal"),
])
def test_zip_slip_and_absolute_members_are_refused(sandbox, bad_name, needle):
    tmp_path, tmpdir = sandbox
    archive = _zip(tmp_path / "a.zip", [("main.tex", MAIN), (bad_name, b"\\cite{evil}")])
    before = _snapshot(tmp_path)
    with pytest.raises(MustciteError, match=needle) as exc:
        extract_latex(archive)
    assert exc.value.path == str(archive)
    _nothing_left(tmp_path, tmpdir, before)
    tarred = _tar(tmp_path / "a.tar.gz", [("main.tex", MAIN), (bad_name, b"x")])
    with pytest.raises(MustciteError, match=needle):
        extract_latex(tarred)
    _nothing_left(tmp_path, tmpdir, before | {"a.tar.gz"})


def test_links_and_devices_are_skipped_with_a_message(sandbox):
    tmp_path, tmpdir = sandbox
    link = zipfile.ZipInfo("refs.bib")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive = _zip(tmp_path / "l.zip", [("main.tex", MAIN), (link, b"/etc/passwd")])
    paper = extract_latex(archive)
    assert any("skipped symbolic link 'refs.bib'" in m for m in paper.messages)
    assert [r.bibkey for r in paper.references] == ["he2016deep"] and paper.references[0].title == ""

    sym = tarfile.TarInfo("refs.bib")
    sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hard = tarfile.TarInfo("other.bib")
    hard.type, hard.linkname = tarfile.LNKTYPE, "main.tex"
    dev = tarfile.TarInfo("dev.tex")
    dev.type = tarfile.CHRTYPE
    fifo = tarfile.TarInfo("fifo.bib")
    fifo.type = tarfile.FIFOTYPE
    tarred = _tar(tmp_path / "l.tgz", [("main.tex", MAIN), sym, hard, dev, fifo])
    paper = extract_latex(tarred)
    msgs = " | ".join(paper.messages)
    assert "skipped symbolic link 'refs.bib'" in msgs and "skipped hard link 'other.bib'" in msgs
    assert "skipped special file 'dev.tex'" in msgs and "skipped special file 'fifo.bib'" in msgs
    assert list(tmpdir.iterdir()) == []


def test_zip_bomb_is_stopped(sandbox):
    tmp_path, tmpdir = sandbox
    limits = ArchiveLimits(max_members=100, max_member_bytes=2 * 2**20, max_total_bytes=4 * 2**20)
    bomb = _zip(tmp_path / "bomb.zip", [("main.tex", MAIN), ("huge.tex", b"\0" * (8 * 2**20))])
    assert bomb.stat().st_size < 64 * 1024                       # small on disk
    with pytest.raises(MustciteError, match="zip bomb"):
        extract_latex(bomb, limits=limits)
    # a header that lies about the size: never more than the declared bytes are read (zipfile stops
    # there and the CRC fails), so the member is skipped with a message
    liar = tmp_path / "liar.zip"
    _zip(liar, [("main.tex", MAIN), ("huge.tex", b"A" * (3 * 2**20))])
    data = bytearray(liar.read_bytes())
    start = data.rfind(b"PK\x01\x02", 0, data.find(b"huge.tex", data.find(b"PK\x01\x02")))
    data[start + 24:start + 28] = (10).to_bytes(4, "little")      # central directory: uncompressed size
    liar.write_bytes(bytes(data))
    paper = extract_latex(liar, limits=limits)
    assert any("'huge.tex' unreadable" in m for m in paper.messages), paper.messages
    # a tar.gz bomb: refused from its declared size, before decompressing it
    tbomb = _tar(tmp_path / "bomb.tar.gz", [("main.tex", MAIN), ("huge.tex", b"\0" * (8 * 2**20))])
    with pytest.raises(MustciteError, match="tar bomb"):
        extract_latex(tbomb, limits=limits)
    assert list(tmpdir.iterdir()) == []


def test_too_many_members(sandbox):
    tmp_path, tmpdir = sandbox
    members = [("main.tex", MAIN)] + [(f"fig/{i}.png", b"x") for i in range(60)]
    with pytest.raises(MustciteError, match="more than 50"):
        extract_latex(_zip(tmp_path / "m.zip", members), limits=ArchiveLimits(max_members=50))
    with pytest.raises(MustciteError, match="more than 50"):
        extract_latex(_tar(tmp_path / "m.tgz", members), limits=ArchiveLimits(max_members=50))
    assert list(tmpdir.iterdir()) == []


def test_only_sources_are_written_and_cleaned_up(sandbox):
    tmp_path, tmpdir = sandbox
    archive = _zip(tmp_path / "ok.zip", [("main.tex", MAIN), ("refs.bib", BIB), ("fig/plot.png", b"\x89PNG" * 100),
                                         ("__MACOSX/._main.tex", b"junk")])
    with unpacked(archive) as up:
        assert sorted(str(p) for p in up.files) == ["main.tex", "refs.bib"] and up.members == 4
        assert up.root.parent == tmpdir
        root = up.root
    assert not root.exists()
    paper = extract_latex(archive)
    assert paper.references[0].title == "Deep Residual Learning for Image Recognition"
    assert list(tmpdir.iterdir()) == []


def test_corrupt_archives(sandbox, tmp_path):
    tmp_path, tmpdir = sandbox
    (tmp_path / "x.tar.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(MustciteError, match="x.tar.gz"):
        extract_latex(tmp_path / "x.tar.gz")
    (tmp_path / "y.zip").write_bytes(b"PK\x03\x04" + os.urandom(64))
    with pytest.raises(MustciteError, match="y.zip"):
        extract_latex(tmp_path / "y.zip")
    with pytest.raises(MustciteError, match="no .tex file"):
        extract_latex(_zip(tmp_path / "empty.zip", [("readme.md", b"# hi")]))
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(MustciteError, match="not a zip, tar or gzip"):
        (tmp_path / "z.tar").write_bytes(b"plain text, no archive")
        unpack(tmp_path / "z.tar", dest)
    assert list(tmpdir.iterdir()) == []


def _deep(n: int) -> str:
    return "/".join(f"d{i}" for i in range(n)) + "/part.tex"


@pytest.mark.parametrize("make", ["zip", "tgz"])
def test_members_nested_too_deep_are_refused_naming_the_member(sandbox, make):
    tmp_path, tmpdir = sandbox
    def build(p: Path, members: list) -> Path:
        return _zip(p.with_suffix(".zip"), members) if make == "zip" else _tar(p.with_suffix(".tgz"), members)

    deep = build(tmp_path / "deep", [("main.tex", MAIN), (_deep(1000), b"\\cite{x}")])
    with pytest.raises(MustciteError) as exc:
        extract_latex(deep)
    msg = str(exc.value)
    assert "1,000 folders deep" in msg and "32 allowed" in msg and "part.tex" in msg and "d0/d1/" in msg, msg
    assert exc.value.path == str(deep) and len(msg) < 400
    assert list(tmpdir.iterdir()) == []
    # at the bound: unpacked, one folder level at a time
    ok = build(tmp_path / "ok", [("main.tex", MAIN), (_deep(32), b"x")])
    with unpacked(ok) as up:
        assert Path(_deep(32)) in up.files and (up.root / _deep(32)).read_bytes() == b"x"
    # a folder entry alone (nothing to write) past the bound is refused as well
    folder = "/".join(f"d{i}" for i in range(34)) + "/"
    if make == "zip":
        dirs = _zip(tmp_path / "dirs.zip", [("main.tex", MAIN), (folder, b"")])
    else:
        entry = tarfile.TarInfo(folder)
        entry.type = tarfile.DIRTYPE
        dirs = _tar(tmp_path / "dirs.tgz", [("main.tex", MAIN), entry])
    with pytest.raises(MustciteError, match="33 folders deep"):
        extract_latex(dirs)
    assert list(tmpdir.iterdir()) == []


def test_deep_zip_from_the_command_line_names_the_member(sandbox, capsys):
    from mustcite.cli.main import main

    tmp_path, _ = sandbox
    deep = _zip(tmp_path / "deep.zip", [("main.tex", MAIN), (_deep(1000), b"x")])
    assert main(["audit", str(deep)]) == 1
    err = capsys.readouterr().err
    assert "part.tex" in err and "folders deep" in err and "Traceback" not in err and "brackets" not in err, err


@pytest.mark.parametrize("name", ["x" * 300 + ".tex", "/".join(["y" * 250] * 20) + "/a.tex"])
def test_names_too_long_for_the_file_system_are_skipped_with_a_message(sandbox, name):
    tmp_path, tmpdir = sandbox
    for archive in (_zip(tmp_path / "n.zip", [("main.tex", MAIN), (name, b"x")]),
                    _tar(tmp_path / "n.tgz", [("main.tex", MAIN), (name, b"x")])):
        paper = extract_latex(archive)
        msgs = [m for m in paper.messages if "cannot be written" in m]
        assert len(msgs) == 1 and "\u2026" in msgs[0] and str(tmpdir) not in msgs[0], paper.messages
    assert list(tmpdir.iterdir()) == []

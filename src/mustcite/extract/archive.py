"""Safe unpacking of a LaTeX source archive (``.zip``, ``.tar.gz``/``.tgz``/``.tar``, or an arXiv
single-file ``.gz``) into a private temporary folder.

Only the files a LaTeX reading needs (``.tex``, ``.bib``, ``.bbl`` and friends,
:data:`TEXT_SUFFIXES`, and the top folder's build files, which name the main file,
:data:`BUILD_NAMES`) are written; figures and other members are counted but never decompressed.
Every member name is checked before anything is written: absolute paths, drive letters, ``..``
components and NUL characters reject the archive (path traversal, "zip slip"); symbolic and hard
links, devices and FIFOs are skipped with a message. Caps (:class:`ArchiveLimits`): member count,
folder depth of a member (folders are created one level at a time, never recursively), per-member
size and total uncompressed size, checked on the sizes the archive declares *and* on the bytes
actually decompressed (a lying header stops at the cap: zip bombs). Files are created with
``O_EXCL`` and ``O_NOFOLLOW`` under a resolved destination, so nothing is written outside it.

A tar archive (compressed or not) is read once, as a stream (:func:`mustcite.tarstream.iter_tar`): the decompressed
stream goes through :func:`mustcite.io.open_decompressed`, capped at
:meth:`ArchiveLimits.stream_bytes`, and every raw 512-byte header is checked before ``tarfile``
acts on it: a GNU long-name/long-link or PAX header declaring more than
:data:`mustcite.tarstream.MAX_TAR_META_BYTES` is refused without reading its body (``tarfile`` would read it whole),
as are sparse members, negative sizes and long chains of such headers.

:func:`unpacked` is the context manager callers use: it yields the folder and always removes it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from ..errors import MustciteError
from ..io import CorruptCompressedError, open_decompressed
from ..tarstream import TarCorrupt, iter_tar

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".gz")
#: Members written out: the LaTeX sources and bibliographies (everything else is skipped unread).
TEXT_SUFFIXES = (".tex", ".bib", ".bbl", ".ltx", ".latex", ".sty", ".cls", ".bst", ".txt")
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    max_members: int = 5000                  # members of any kind
    max_member_bytes: int = 32 * 2**20       # one extracted member, uncompressed
    max_total_bytes: int = 256 * 2**20       # declared sizes of all members, and bytes extracted
    max_depth: int = 32                      # folders above a member (a/b/c.tex: 2)
    #: decompressed bytes of a whole compressed tar stream (headers, skipped members and all);
    #: None: the declared total plus room for every member's headers (:meth:`stream_bytes`)
    max_stream_bytes: int | None = None

    def stream_bytes(self) -> int:
        if self.max_stream_bytes is not None:
            return self.max_stream_bytes
        return self.max_total_bytes + (self.max_members + 2) * 4096 + 2**20


@dataclass
class Unpacked:
    root: Path
    files: list[Path] = field(default_factory=list)       # written files, relative to root
    messages: list[str] = field(default_factory=list)
    members: int = 0


def is_archive(path: str | Path) -> bool:
    name = Path(path).name.lower()
    return name.endswith(ARCHIVE_SUFFIXES) and not name.endswith((".md.gz", ".mmd.gz"))


def safe_member_name(name: str, archive: str | Path) -> PurePosixPath | None:
    """The member's relative path, None for a folder entry; MustciteError for a name that could
    write outside the destination (absolute, a drive letter, '..', NUL)."""
    raw = name.replace("\\", "/")
    if "\x00" in raw:
        raise MustciteError(f"archive member name {name!r} holds a NUL character; refusing the archive",
                            path=archive)
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise MustciteError(f"archive member {name!r} has an absolute path; refusing the archive "
                            "(nothing was unpacked outside the temporary folder)", path=archive)
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise MustciteError(f"archive member {name!r} points outside the archive ('..', path traversal); "
                            "refusing the archive", path=archive)
    if not parts:
        return None
    return PurePosixPath(*parts)


#: build files kept too (in the archive's top folder): they name the main file
BUILD_NAMES = ("latexmkrc", ".latexmkrc", "Makefile", "makefile", "GNUmakefile")


def shown_member(name: str, limit: int = 120) -> str:
    """A member name for a message: whole when short, else its start and its end around an ellipsis."""
    if len(name) <= limit:
        return name
    half = (limit - 1) // 2
    return f"{name[:half]}\u2026{name[-half:]}"


def check_depth(rel: PurePosixPath, name: str, archive: str | Path, limits: ArchiveLimits) -> None:
    """MustciteError, naming the member, when ``rel`` lies deeper than ``limits.max_depth`` folders."""
    depth = len(rel.parts) - 1
    if depth > limits.max_depth:
        raise MustciteError(f"archive member {shown_member(name)!r} lies {depth:,} folders deep, more than the "
                            f"{limits.max_depth} allowed; refusing the archive", path=archive)


def _wanted(rel: PurePosixPath) -> bool:
    if any(p.startswith("__MACOSX") for p in rel.parts):
        return False
    return rel.name.lower().endswith(TEXT_SUFFIXES) or (len(rel.parts) == 1 and rel.name in BUILD_NAMES)


class _Writer:
    """Writes members under ``root`` within the caps; counts what it wrote."""

    def __init__(self, root: Path, archive: Path, limits: ArchiveLimits, out: Unpacked):
        self.root, self.archive, self.limits, self.out = root.resolve(), archive, limits, out
        self.total = 0

    def _folder(self, rel: PurePosixPath) -> Path:
        """The member's folder, created one level at a time (a loop, not ``mkdir(parents=True)``'s
        recursion); each level must be a real folder under the root, never a link."""
        folder = self.root
        for part in rel.parts[:-1]:
            folder = folder / part
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    raise MustciteError(f"archive member {shown_member(str(rel))!r} needs folder {part!r}, which is "
                                        "a file in the archive; refusing the archive", path=self.archive) from None
        return folder

    def write(self, rel: PurePosixPath, src: IO[bytes], declared: int) -> None:
        lim = self.limits
        if declared > lim.max_member_bytes:
            raise MustciteError(f"archive member {str(rel)!r} declares {declared:,} bytes, over the "
                                f"{lim.max_member_bytes:,}-byte cap per file; refusing the archive", path=self.archive)
        try:
            parent = self._folder(rel)
            fd = os.open(parent / rel.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            self.out.messages.append(f"{self.archive.name}: member {shown_member(str(rel))!r} appears twice; "
                                     "the first copy is used")
            return
        except OSError as exc:          # a name too long for the file system, and the like
            self.out.messages.append(f"{self.archive.name}: member {shown_member(str(rel))!r} cannot be written "
                                     f"({exc.strerror or type(exc).__name__}); skipped")
            return
        n = 0
        with os.fdopen(fd, "wb") as fh:
            while True:
                chunk = src.read(_CHUNK)
                if not chunk:
                    break
                n += len(chunk)
                self.total += len(chunk)
                if n > lim.max_member_bytes:
                    raise MustciteError(f"archive member {str(rel)!r} expands beyond the {lim.max_member_bytes:,}-byte "
                                        "cap per file (a zip bomb?); refusing the archive", path=self.archive)
                if self.total > lim.max_total_bytes:
                    raise MustciteError(f"the archive expands beyond {lim.max_total_bytes:,} bytes (a zip bomb?); "
                                        "refusing it", path=self.archive)
                fh.write(chunk)
        self.out.files.append(Path(*rel.parts))


def _count(out: Unpacked, archive: Path, limits: ArchiveLimits) -> None:
    out.members += 1
    if out.members > limits.max_members:
        raise MustciteError(f"the archive has more than {limits.max_members:,} members; refusing it", path=archive)


def _unzip(archive: Path, root: Path, limits: ArchiveLimits, out: Unpacked) -> None:
    w = _Writer(root, archive, limits, out)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise MustciteError(f"not a readable zip archive: {exc}", path=archive) from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_members:
            raise MustciteError(f"the archive has {len(infos):,} members, more than {limits.max_members:,}; "
                                "refusing it", path=archive)
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_total_bytes:
            raise MustciteError(f"the archive declares {declared:,} bytes uncompressed, over the "
                                f"{limits.max_total_bytes:,}-byte cap (a zip bomb?); refusing it", path=archive)
        for info in infos:                  # every name checked before anything is written
            rel = safe_member_name(info.filename, archive)
            if rel is not None:
                check_depth(rel, info.filename, archive, limits)
        for info in infos:
            _count(out, archive, limits)
            rel = safe_member_name(info.filename, archive)
            if rel is None or info.is_dir():
                continue
            mode = info.external_attr >> 16
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                kind = "symbolic link" if stat.S_ISLNK(mode) else "special file"
                out.messages.append(f"{archive.name}: skipped {kind} {info.filename!r}")
                continue
            if not _wanted(rel):
                continue
            try:
                with zf.open(info) as src:
                    w.write(rel, src, info.file_size)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
                if isinstance(exc, MustciteError):
                    raise
                out.messages.append(f"{archive.name}: member {info.filename!r} unreadable ({exc}); skipped")


def _untar(archive: Path, root: Path, limits: ArchiveLimits, out: Unpacked) -> None:
    w = _Writer(root, archive, limits, out)
    declared = 0
    try:
        for tf, m in iter_tar(archive, archive, max_stream_bytes=limits.stream_bytes()):
            _count(out, archive, limits)
            declared += max(m.size, 0)
            if declared > limits.max_total_bytes:
                raise MustciteError(f"the archive declares more than {limits.max_total_bytes:,} bytes uncompressed "
                                    "(a tar bomb?); refusing it", path=archive)
            rel = safe_member_name(m.name, archive)
            if rel is not None:
                check_depth(rel, m.name, archive, limits)
            if rel is None or m.isdir():
                continue
            if m.issym() or m.islnk():
                out.messages.append(f"{archive.name}: skipped {'symbolic' if m.issym() else 'hard'} link "
                                    f"{m.name!r} -> {m.linkname!r}")
                continue
            if not m.isreg():
                out.messages.append(f"{archive.name}: skipped special file {m.name!r} (device, FIFO or other)")
                continue
            if not _wanted(rel):
                continue
            src = tf.extractfile(m)
            if src is None:
                continue
            try:
                w.write(rel, src, m.size)
            except (tarfile.TarError, EOFError, CorruptCompressedError) as exc:
                out.messages.append(f"{archive.name}: member {m.name!r} unreadable ({exc}); skipped")
    except TarCorrupt as exc:
        out.messages.append(f"{archive.name}: {exc.message}; read what came before")


def _gunzip_single(archive: Path, root: Path, limits: ArchiveLimits, out: Unpacked) -> None:
    """arXiv serves a one-file source as a gzipped .tex (not a tar): unpack it as main.tex."""
    w = _Writer(root, archive, limits, out)
    try:
        with open_decompressed(archive, max_bytes=limits.max_member_bytes, sniff=True) as src:
            w.write(PurePosixPath("main.tex"), src, 0)
    except (OSError, EOFError) as exc:
        raise MustciteError(f"not a readable gzip or tar archive: {exc}", path=archive) from None
    out.members = 1


def unpack(archive: str | Path, dest: str | Path, limits: ArchiveLimits | None = None) -> Unpacked:
    """Unpack ``archive`` into the (existing, empty) folder ``dest`` within ``limits``."""
    archive, root = Path(archive), Path(dest)
    limits = limits or ArchiveLimits()
    out = Unpacked(root)
    if not archive.is_file():
        raise MustciteError("archive not found", path=archive)
    with open(archive, "rb") as fh:
        head = fh.read(4)
    if head.startswith(b"PK"):
        _unzip(archive, root, limits, out)
    else:
        try:
            _untar(archive, root, limits, out)
        except tarfile.ReadError:
            if head[:2] != b"\x1f\x8b":
                raise MustciteError("not a zip, tar or gzip archive", path=archive) from None
            _gunzip_single(archive, root, limits, out)
    return out


@contextlib.contextmanager
def unpacked(archive: str | Path, limits: ArchiveLimits | None = None) -> Iterator[Unpacked]:
    """Unpack into a fresh private temporary folder; the folder is removed on exit, error or not."""
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-latex-"))
    try:
        yield unpack(archive, tmp, limits)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

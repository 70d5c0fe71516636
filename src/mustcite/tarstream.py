"""Reading a tar archive as a bounded stream: :func:`iter_tar`.

The archive (plain, or gzip/bzip2/xz-compressed: the first bytes decide) is decompressed through
:func:`mustcite.io.open_decompressed`, capped, and every raw 512-byte header is checked before
``tarfile`` acts on it: a GNU long-name/long-link or PAX header declaring more than
:data:`MAX_TAR_META_BYTES` is refused without reading its body (``tarfile`` would read it whole),
as are sparse members, negative sizes and long chains of such headers. Used by the LaTeX draft
unpacker and by the collectors' offline archives.
"""

from __future__ import annotations

import contextlib
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .errors import MustciteError
from .io import open_decompressed

#: Largest body of a GNU long-name/long-link or PAX extended header read from a tar archive.
MAX_TAR_META_BYTES = 64 * 1024
#: At most this many long-name/PAX headers in a row (tarfile reads them recursively).
MAX_TAR_META_CHAIN = 16


_META_TYPES = {tarfile.GNUTYPE_LONGNAME: "a GNU long name", tarfile.GNUTYPE_LONGLINK: "a GNU long link name",
               tarfile.XHDTYPE: "a PAX record", tarfile.SOLARIS_XHDTYPE: "a PAX record",
               tarfile.XGLTYPE: "a global PAX record"}
_SPARSE = tarfile.GNUTYPE_SPARSE


class _HeaderRefused(Exception):
    """Raised from inside ``tarfile`` for a header we do not let it read; :func:`iter_tar` names the archive."""


class _GuardedTarInfo(tarfile.TarInfo):
    """A TarInfo that checks each raw header before ``tarfile`` acts on it: ``tarfile`` reads a GNU
    long-name or PAX header's body whole (a 2 GB claim is 2 GB of memory), recurses once per
    such header, and builds a list entry per sparse-map record."""

    def _proc_member(self, tarfile):
        name = self.name or "?"
        if self.size < 0:
            raise _HeaderRefused(f"tar header {name!r} declares a negative size ({self.size}); refusing the archive")
        kind = _META_TYPES.get(self.type)
        if kind is None:
            if self.type == _SPARSE:
                raise _HeaderRefused(f"tar member {name!r} is a GNU sparse file; refusing the archive")
            return super()._proc_member(tarfile)
        if self.size > MAX_TAR_META_BYTES:
            raise _HeaderRefused(f"tar header {name!r} for a long name/PAX record ({kind}) declares "
                                 f"{self.size} bytes; at most {MAX_TAR_META_BYTES}; refusing the archive")
        depth = getattr(tarfile, "_mustcite_meta_depth", 0)
        if depth >= MAX_TAR_META_CHAIN:
            raise _HeaderRefused(f"more than {MAX_TAR_META_CHAIN} long-name/PAX headers in a row "
                                 f"(at {name!r}); refusing the archive")
        tarfile._mustcite_meta_depth = depth + 1
        try:
            return super()._proc_member(tarfile)
        finally:
            tarfile._mustcite_meta_depth = depth

    def _proc_gnusparse_00(self, next, pax_headers, buf):
        raise _HeaderRefused(f"tar member {next.name!r} is a sparse file (PAX GNU.sparse); refusing the archive")

    def _proc_gnusparse_01(self, next, pax_headers):
        raise _HeaderRefused(f"tar member {next.name!r} is a sparse file (PAX GNU.sparse); refusing the archive")

    def _proc_gnusparse_10(self, next, pax_headers, tarfile):
        raise _HeaderRefused(f"tar member {next.name!r} is a sparse file (PAX GNU.sparse); refusing the archive")



class TarCorrupt(MustciteError):
    """The tar data broke off (truncated or corrupt) after ``members`` members."""

    def __init__(self, message: str, *, path: str | Path, members: int):
        super().__init__(message, path=path)
        self.members = members


def iter_tar(source: str | Path | IO[bytes], name: str | Path, *,
             max_stream_bytes: int | None) -> Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]:
    """``(tarfile, member)`` for each member of a tar archive (plain, or gzip/bzip2/xz-compressed:
    the first bytes decide), read once as a stream: read a member through
    ``tarfile.extractfile(member)`` before asking for the next one.

    Raises ``tarfile.ReadError`` when ``source`` is not a tar archive at all; MustciteError naming
    ``name`` for a refused header (a long-name/PAX header over :data:`MAX_TAR_META_BYTES`, a sparse
    member, a negative size, a long chain of headers) or decompressed data beyond
    ``max_stream_bytes``; :class:`TarCorrupt` when the data breaks off after some members (those
    were yielded)."""
    reader = open_decompressed(source, max_bytes=max_stream_bytes, sniff=True, name=name)
    with contextlib.closing(reader):
        try:
            tf = tarfile.open(fileobj=reader, mode="r|", tarinfo=_GuardedTarInfo)
        except _HeaderRefused as exc:
            raise MustciteError(str(exc), path=name) from None
        except RecursionError:
            raise MustciteError("tar headers nested too deeply; refusing the archive", path=name) from None
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise tarfile.ReadError(str(exc)) from None
        with tf:
            n = 0
            while True:
                try:
                    m = tf.next()
                except _HeaderRefused as exc:
                    raise MustciteError(str(exc), path=name) from None
                except RecursionError:
                    raise MustciteError("tar headers nested too deeply; refusing the archive", path=name) from None
                except (tarfile.TarError, OSError, EOFError) as exc:
                    raise TarCorrupt(f"the archive is truncated or corrupt after {n} members ({exc})",
                                     path=name, members=n) from None
                if m is None:
                    return
                n += 1
                yield tf, m

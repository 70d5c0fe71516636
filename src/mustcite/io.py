"""Small file helpers shared by every stage: JSONL reading that names file and line, atomic writes.

Every compressed input is read through one budgeted reader, :func:`open_decompressed`: it
decompresses a block at a time and raises :class:`~mustcite.errors.MustciteError` naming the file
("expands beyond N MB") as soon as more than ``max_bytes`` decompressed bytes would be read, so a
small hostile ``.gz`` never becomes gigabytes in memory or minutes of work. :func:`open_text`,
:func:`read_text`, :func:`read_json` and :func:`iter_jsonl` use it for ``.gz`` files (default cap
:data:`MAX_DECOMPRESSED_BYTES`); the tar reader of :mod:`mustcite.extract.archive` and the
collectors' archives use it too. Line readers (:func:`iter_text_lines`) also cap one line's length
(:data:`MAX_LINE_CHARS`) and skip runs of blank lines a block at a time.

CSV files are read through :func:`iter_csv`: a file that is not UTF-8, a field longer than the
``csv`` module's field size limit, an overlong line or a malformed row raise MustciteError naming
the file and line.
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gc
import gzip
import hashlib
import io
import json
import lzma
import os
import pickle
import re
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import MustciteError, UsageError

_UMASK = os.umask(0)
os.umask(_UMASK)

#: Default cap on the decompressed bytes of one compressed data file (``.gz`` JSONL, runs, qrels...).
MAX_DECOMPRESSED_BYTES = 256 * 2**20
#: Cap on the decompressed bytes of a compressed file read whole into memory and parsed at once (a
#: JSON document, a web page): parsing holds several copies, so it is lower than a streamed file's.
MAX_DOCUMENT_BYTES = 64 * 2**20
#: Longest line a line reader accepts (JSONL, TREC runs and qrels): one line is held whole in memory.
MAX_LINE_CHARS = 32 * 2**20
_TEXT_BLOCK = 1 << 20


def _size_text(n: int) -> str:
    return f"{n / 2**20:g} MB" if n >= 2**20 and n % 2**20 == 0 else f"{n:,} bytes"


class CorruptCompressedError(OSError):
    """Compressed data that is corrupt or truncated (an OSError, so ``except OSError`` callers see it)."""


class _CappedReader(io.RawIOBase):
    """Reads ``inner`` (a decompressing file object), at most ``max_bytes`` bytes in all: the read
    that would pass the cap raises MustciteError naming ``name``. Decompression errors become
    :class:`CorruptCompressedError`."""

    def __init__(self, inner: IO[bytes], max_bytes: int | None, name: str, owned: tuple[Any, ...] = ()):
        super().__init__()
        self._inner, self._max, self._name, self._owned = inner, max_bytes, name, owned
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        view = memoryview(b).cast("B")
        if self._max is not None:
            view = view[:max(1, min(len(view), self._max - self.total + 1))]
        try:
            data = self._inner.read(len(view))
        except (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile) as exc:
            why = str(exc) or type(exc).__name__
            raise CorruptCompressedError(f"corrupt or truncated compressed data ({why})") from None
        except OSError as exc:
            if isinstance(exc, CorruptCompressedError) or exc.errno is not None:
                raise
            raise CorruptCompressedError(f"corrupt compressed data ({exc})") from None   # bz2: "Invalid data stream"
        n = len(data)
        self.total += n
        if self._max is not None and self.total > self._max:
            raise MustciteError(f"expands beyond {_size_text(self._max)} (a compressed file this large is refused)",
                                path=self._name)
        view[:n] = data
        return n

    def close(self) -> None:
        if not self.closed:
            try:
                for f in (self._inner, *self._owned):
                    f.close()
            finally:
                super().close()


def _sniff(head: bytes) -> str | None:
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    return None


def open_decompressed(source: str | Path | IO[bytes], *, max_bytes: int | None = MAX_DECOMPRESSED_BYTES,
                      sniff: bool = False, name: str | Path | None = None) -> io.BufferedReader:
    """A binary reader of ``source`` (a path or a binary file object), decompressed a block at a time.

    What is decompressed: a path ending in ``.gz`` is gunzipped; with ``sniff`` the first bytes decide
    instead (gzip, bzip2 or xz; anything else is read as is). Decompressed data is capped at
    ``max_bytes`` (None: no cap): reading past it raises MustciteError naming the file ("expands
    beyond N MB"); corrupt compressed data raises :class:`CorruptCompressedError` (an OSError).
    Data read as is (not compressed) is never capped: its size is the file's.
    """
    owned: tuple[Any, ...] = ()
    if isinstance(source, (str, Path)):
        label = str(name if name is not None else source)
        raw: IO[bytes] = open(source, "rb")
        owned = (raw,)
    else:
        label = str(name if name is not None else getattr(source, "name", "<stream>"))
        raw = source
    try:
        if sniff:
            head = raw.read(6)
            raw.seek(-len(head), os.SEEK_CUR)
            kind = _sniff(head)
        else:
            kind = "gzip" if str(source if isinstance(source, (str, Path)) else label).endswith(".gz") else None
        if kind == "gzip":
            inner: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="rb")
        elif kind == "bz2":
            inner = bz2.BZ2File(raw, mode="rb")
        elif kind == "xz":
            inner = lzma.LZMAFile(raw, mode="rb")
        else:
            inner, max_bytes = raw, None
            owned = ()
    except BaseException:
        for f in owned:
            f.close()
        raise
    return io.BufferedReader(_CappedReader(inner, max_bytes, label, owned), buffer_size=64 * 1024)


def open_text(path: str | Path, *, max_bytes: int | None = MAX_DECOMPRESSED_BYTES):
    """Open a text file, transparently gunzipping ``.gz`` (at most ``max_bytes`` decompressed
    bytes, see :func:`open_decompressed`); strict UTF-8."""
    path = Path(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(open_decompressed(path, max_bytes=max_bytes), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def iter_text_lines(fh, path: str | Path, *, max_line_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` for each non-blank line of the text file ``fh`` (opened with
    ``newline=""``), without its line end. Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (as file
    iteration splits them; never at U+2028 or U+0085). The file is read a block at a time: a run of
    blank lines costs no Python work per line, and a line longer than ``max_line_chars`` raises
    MustciteError naming ``path`` and the line (never held whole)."""
    lineno = 0                 # lines completed so far
    pending: list[str] = []    # pieces of the unfinished line
    pending_len = 0
    prev_cr = False            # the last block ended with \r: a \n starting this one is the same line end

    def too_long(n: int) -> MustciteError:
        return MustciteError(f"line longer than {max_line_chars:,} characters (the cap; is this a text file?)",
                             path=path, line=n)

    while True:
        block = fh.read(_TEXT_BLOCK)
        if not block:
            break
        if prev_cr and block[0] == "\n":
            block = block[1:]
            if not block:
                prev_cr = False
                continue
        prev_cr = block[-1] == "\r"
        if "\r" in block:
            block = block.replace("\r\n", "\n").replace("\r", "\n")
        first = block.find("\n")
        if first < 0:
            pending.append(block)
            pending_len += len(block)
            if pending_len > max_line_chars:
                raise too_long(lineno + 1)
            continue
        head = block[:first]
        if pending_len + len(head) > max_line_chars:
            raise too_long(lineno + 1)
        line = "".join(pending) + head if pending else head
        pending, pending_len = [], 0
        lineno += 1
        if line.strip():
            yield lineno, line
        del line
        last = block.rfind("\n")
        if last > first:
            body = block[first + 1:last]
            if not body.strip():
                lineno += body.count("\n") + 1        # blank lines only: skipped in one step
            else:
                for part in body.split("\n"):
                    lineno += 1
                    if len(part) > max_line_chars:
                        raise too_long(lineno)
                    if part.strip():
                        yield lineno, part
        tail = block[last + 1:]
        if tail:
            if len(tail) > max_line_chars:
                raise too_long(lineno + 1)
            pending, pending_len = [tail], len(tail)
    if pending:
        line = "".join(pending)
        if line.strip():
            yield lineno + 1, line


def read_text(path: str | Path, max_chars: int | None = None, *,
              max_bytes: int | None = MAX_DECOMPRESSED_BYTES) -> str:
    """Whole file as text; a non-UTF-8 or corrupt file raises MustciteError naming it.

    With ``max_chars`` the text is read (and a ``.gz`` file decompressed) a block at a time and a
    file holding more characters raises MustciteError once the cap is passed: a small compressed
    file never becomes gigabytes in memory. A ``.gz`` file is also capped at ``max_bytes``
    decompressed bytes (:func:`open_decompressed`).
    """
    try:
        with open_text(path, max_bytes=max_bytes) as fh:
            if max_chars is None:
                return fh.read()
            text = fh.read(max_chars + 1)
    except UnicodeDecodeError as exc:
        raise MustciteError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (OSError, EOFError, zlib.error) as exc:   # gzip.BadGzipFile is an OSError
        raise MustciteError(f"cannot read: {_reason(exc)}", path=path) from None
    if len(text) > max_chars:
        what = "decompresses to" if Path(path).suffix == ".gz" else "holds"
        raise MustciteError(f"{what} more than {max_chars:,} characters of text (the cap)", path=path)
    return text


class BinaryContentError(MustciteError):
    """A file read as text holds a NUL character: binary content, not text."""


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def text_encoding(data: bytes) -> tuple[str, int]:
    """``(encoding, bytes of its byte-order mark)`` of a text file's bytes: the encoding its BOM
    names (UTF-8, UTF-16 or UTF-32), UTF-16 without a BOM when the first 4 KB hold NUL bytes in
    one half of most byte pairs and hardly any in the other (mostly ASCII text saved as UTF-16), else UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    head = data[:4096]
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if len(head) >= 2 and len(head) % 2 == 0:
        if odd >= len(head) // 4 and even * 8 <= odd:
            return "utf-16-le", 0
        if even >= len(head) // 4 and odd * 8 <= even:
            return "utf-16-be", 0
    return "utf-8", 0


def decode_text(data: bytes, path: str | Path, *, errors: str = "strict") -> str:
    """The bytes of a text file (a ``.bib``, a LaTeX source) as text, in the encoding
    :func:`text_encoding` finds, its byte-order mark dropped. MustciteError naming ``path`` when
    they are not text: :class:`BinaryContentError` for a NUL character anywhere (with its line and
    byte offset), and, with ``errors="strict"``, MustciteError for bytes that are not valid in that
    encoding (with line and offset; a caller may then read the bytes as Latin-1 instead)."""
    encoding, skip = text_encoding(data)
    if encoding == "utf-8":
        nul = data.find(b"\x00", skip)
        if nul >= 0:
            raise BinaryContentError(f"not a text file: a NUL byte at offset {nul:,} (binary content)", path=path,
                                line=_line_ends(data[:nul]) + 1)
    try:
        text = codecs.decode(data[skip:], encoding, errors)
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        line = _line_ends(data[:at]) + 1 if encoding == "utf-8" else None
        name = encoding.upper().replace("-LE", "").replace("-BE", "")
        raise MustciteError(f"not {name} text (byte 0x{data[at]:02x} at offset {at:,})", path=path, line=line,
                            hint="save the file as UTF-8 text") from None
    nul = text.find("\x00")
    if nul >= 0:
        at = skip + len(text[:nul].encode(encoding))
        raise BinaryContentError(f"not a text file: a NUL character at offset {at:,} (binary content)", path=path,
                            line=text.count("\n", 0, nul) + 1)
    return text


def _reason(exc: BaseException) -> str:
    """An OS error's reason without the path (the caller names the file)."""
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or exc.__class__.__name__


def _json_limit(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def read_json(path: str | Path, *, missing_ok: bool = False, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> Any:
    """A JSON file's value; an unreadable or malformed file raises MustciteError naming it.

    A missing file raises too, unless ``missing_ok``: then it is ``None``. A ``.gz`` file is read
    within ``max_bytes`` decompressed bytes.
    """
    if missing_ok and not Path(path).is_file():
        return None
    text = read_text(path, max_bytes=max_bytes)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MustciteError(f"malformed JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except (RecursionError, ValueError) as exc:   # nesting too deep; an integer of too many digits
        raise MustciteError(f"malformed JSON: {_json_limit(exc)}", path=path) from None


def _line_ends(data: bytes) -> int:
    """Line ends in ``data`` (``\\n``, ``\\r\\n`` or a lone ``\\r``), as text-mode reading counts them."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def first_non_utf8(path: str | Path) -> tuple[int, int, int] | None:
    """``(line, offset, byte)`` of the first byte of the file at ``path`` that is not UTF-8 text
    (line numbered from 1, counted as text-mode reading counts lines; offset from 0), or None when
    the whole file is UTF-8. Read a block at a time."""
    line, offset, pending, prev_cr = 1, 0, b"", False
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_TEXT_BLOCK)
            data = pending + block
            if not data:
                return None
            try:
                _, used = codecs.utf_8_decode(data, "strict", not block)
            except UnicodeDecodeError as exc:
                head = data[:exc.start]
                n = _line_ends(head) - (prev_cr and head.startswith(b"\n"))
                return line + n, offset + exc.start, data[exc.start]
            done = data[:used]
            line += _line_ends(done) - (prev_cr and done.startswith(b"\n"))
            if done:
                prev_cr = done.endswith(b"\r")
            pending, offset = data[used:], offset + used
            if not block:
                return None


def not_utf8_error(path: str | Path, exc: UnicodeDecodeError | None = None) -> MustciteError:
    """The MustciteError for a file that is not UTF-8: its line and the offending byte where the
    file can be read again, else the position ``exc`` gives."""
    try:
        where = first_non_utf8(path)
    except OSError:
        where = None
    hint = "save the file as UTF-8 text"
    if where is None:
        at = f" (byte {exc.start})" if exc is not None else ""
        return MustciteError(f"not UTF-8 text{at}", path=path, hint=hint)
    line, offset, byte = where
    return MustciteError(f"not UTF-8 text (byte 0x{byte:02x} at offset {offset:,})", path=path, line=line,
                         hint=hint)


def _capped_lines(fh, path: str | Path, max_line_chars: int) -> Iterator[str]:
    """The lines of ``fh`` (opened with ``newline=""``, line ends kept), one longer than
    ``max_line_chars`` raising MustciteError naming ``path`` and the line (never held whole)."""
    n = 0
    while True:
        line = fh.readline(max_line_chars + 1)
        if not line:
            return
        n += 1
        if len(line) > max_line_chars and not line.endswith(("\n", "\r")):
            raise MustciteError(f"line longer than {max_line_chars:,} characters (the cap; is this a CSV file?)",
                                path=path, line=n)
        yield line


def iter_csv(path: str | Path, *, required: tuple[str, ...] | list[str] = (), hint: str | None = None,
             what: str = "CSV", max_line_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` for each row of a CSV file with a header line, ``line`` the row's last line
    in the file and ``row`` keyed by the stripped header names. UTF-8 (a leading BOM is dropped).

    Raises MustciteError naming the file, and the line where known, when the file cannot be read
    (``cannot read {what}: ...``), is not UTF-8, lacks a column of ``required`` (with ``hint``),
    holds a field longer than ``csv.field_size_limit()`` or a line longer than ``max_line_chars``,
    or is otherwise malformed CSV. Close the generator (``contextlib.closing``) when stopping early.
    """
    try:
        fh = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise MustciteError(f"cannot read {what}: {_reason(exc)}", path=path) from None
    reader = None
    try:
        with fh:
            reader = csv.DictReader(_capped_lines(fh, path, max_line_chars))
            header = [h.strip() for h in reader.fieldnames or []]
            missing = [c for c in required if c not in header]
            if missing:
                raise MustciteError(f"missing column(s) {', '.join(missing)}; header is {header}", path=path,
                                    line=1, hint=hint)
            reader.fieldnames = header
            for row in reader:
                yield reader.line_num, row
    except UnicodeDecodeError as exc:
        raise not_utf8_error(path, exc) from None
    except csv.Error as exc:
        line = reader.reader.line_num if reader is not None and reader.reader.line_num else None
        text = str(exc)
        if text.startswith("field larger than field limit"):
            raise MustciteError(f"field longer than {csv.field_size_limit():,} characters (the CSV field size limit)",
                                path=path, line=line) from None
        raise MustciteError(f"malformed CSV: {text}", path=path, line=line) from None
    except OSError as exc:
        raise MustciteError(f"cannot read {what}: {_reason(exc)}", path=path) from None


def check_output_file(path: str | Path) -> Path:
    """``path`` as an output file, checked before any work is done: not a folder, and its folder
    exists (or can be made) and is writable. Raises UsageError naming the path."""
    path = Path(path)
    if path.is_dir():
        raise UsageError("is a folder; give a file name to write to", path=path)
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write here: {parent} is not a writable folder", path=path)
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError("cannot write: the file is read-only", path=path)
    return path


def check_output_dir(path: str | Path) -> Path:
    """``path`` as an output folder, checked before any work is done: not an existing file, and it
    (or its nearest existing parent) is a writable folder. Raises UsageError naming the path."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError("is a file; give a folder to write into", path=path)
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write here: {probe} is not a writable folder", path=path)
    return path


def iter_jsonl(path: str | Path, *, max_bytes: int | None = MAX_DECOMPRESSED_BYTES,
               max_line_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; lines are split on ``\\n`` only (never ``splitlines``).

    A UTF-8 byte order mark at the start of the file is skipped (as ``utf-8-sig`` reads it). A
    malformed line raises MustciteError with the file and line number; so does a line longer
    than ``max_line_chars`` and a ``.gz`` file expanding beyond ``max_bytes`` (None: no cap; for
    the large training files read a line at a time).
    """
    try:
        with open_text(path, max_bytes=max_bytes) as fh:
            for lineno, line in iter_text_lines(fh, path, max_line_chars=max_line_chars):
                # split on \n (and \r\n, \r), never on U+2028 / U+0085; blank lines are skipped
                if lineno == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                    if not line.strip():
                        continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise MustciteError(f"malformed JSON: {exc.msg} (column {exc.colno})",
                                        path=path, line=lineno) from None
                except (RecursionError, ValueError) as exc:
                    raise MustciteError(f"malformed JSON: {_json_limit(exc)}", path=path, line=lineno) from None
                if not isinstance(obj, dict):
                    raise MustciteError(f"expected a JSON object, got {type(obj).__name__}",
                                        path=path, line=lineno)
                yield lineno, obj
    except UnicodeDecodeError as exc:
        raise MustciteError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (OSError, EOFError, zlib.error) as exc:   # gzip.BadGzipFile is an OSError
        raise MustciteError(f"cannot read: {exc}", path=path) from None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write via a temporary file and rename, so a crash never leaves a half-written file."""
    path = Path(path)
    if path.is_dir():
        raise MustciteError("is a folder; cannot write a file there", path=path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise MustciteError(f"cannot write: {_reason(exc)}", path=path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file normal permissions
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise MustciteError(f"cannot write: {_reason(exc)}", path=path) from None
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 1) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=indent) + "\n")


#: a temporary file or folder older than this is stale whatever its pid says (a write of an index
#: takes seconds; a pid that old is another process's now)
STALE_TEMP_SECONDS = 6 * 3600


def process_running(pid: int) -> bool:
    """Whether a process ``pid`` runs (as any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:               # running, as another user
        return True
    return True


def remove_stale_temps(folder: str | Path, name: re.Pattern[str], *, max_age: float = STALE_TEMP_SECONDS,
                       now: float | None = None) -> list[Path]:
    """Remove the temporary files and folders in ``folder`` that an interrupted write left (a process
    killed before its rename): those whose name matches ``name`` (whole; its group ``pid`` the
    writer's process id) and whose writer no longer runs, or which are older than ``max_age``
    seconds. One whose writer still runs is left alone (a write in progress). Returns those removed;
    one that cannot be removed (another process's, a read-only folder) is kept silently."""
    folder, now = Path(folder), time.time() if now is None else now
    gone = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return gone
    for e in entries:
        m = name.fullmatch(e.name)
        if m is None:
            continue
        try:
            age = now - e.stat(follow_symlinks=False).st_mtime
            pid = int(m.group("pid"))
            if age <= max_age and process_running(pid):
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
            gone.append(Path(e.path))
        except (OSError, ValueError):
            continue
    return gone


def build_dir_once(dest: str | Path, build: Callable[[Path], None], done: Callable[[Path], bool]) -> Path:
    """``dest``, built by ``build(tmp)`` into a temporary folder beside it and renamed into place
    unless ``done(dest)`` already holds: an interrupted build leaves nothing half-written, and of
    two concurrent builds one complete folder wins."""
    dest = Path(dest)
    if done(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        build(tmp)
        try:
            tmp.rename(dest)
        except OSError:
            if not done(dest):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


class JsonlWriter:
    """JSONL written a row at a time (constant memory) to a temporary file beside ``path`` that
    replaces it on :meth:`close`, so a crash or :meth:`abort` never leaves a half-written file.
    A ``.gz`` path is gzipped (reproducibly: no timestamp). Several can be open at once."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        self._raw = os.fdopen(fd, "wb")
        self._fh = (gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=1, mtime=0)
                    if self.path.name.endswith(".gz") else self._raw)
        self._sha = hashlib.sha256()
        self.lines = 0

    def write(self, row: Any) -> None:
        data = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
        self._sha.update(data)
        self._fh.write(data)
        self.lines += 1

    def close(self) -> dict[str, Any]:
        """Finish the file; returns ``{lines, sha256}`` (sha256 of the uncompressed JSONL)."""
        try:
            if self._fh is not self._raw:
                self._fh.close()
            self._raw.close()
            os.chmod(self._tmp, 0o666 & ~_UMASK)   # mkstemp creates 0600
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        return {"lines": self.lines, "sha256": self._sha.hexdigest()}

    def abort(self) -> None:
        """Drop what was written; ``path`` stays as it was."""
        self._raw.close()
        if os.path.exists(self._tmp):
            os.unlink(self._tmp)

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_jsonl(path: str | Path, rows) -> int:
    """Atomically write an iterable of dicts as JSONL (gzipped for a ``.gz`` path), a row at a
    time; returns the row count."""
    with JsonlWriter(path) as w:
        for row in rows:
            w.write(row)
    return w.lines


def sha256_file(path: str | Path, *, gunzip: bool = False) -> str:
    """sha256 hex of a file's bytes (of its gunzipped content with ``gunzip=True``), read in 1 MiB blocks."""
    h = hashlib.sha256()
    opener = gzip.open if gunzip else open
    try:
        with opener(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except (OSError, EOFError, zlib.error) as exc:
        raise MustciteError(f"cannot read: {_reason(exc)}", path=path) from None
    return h.hexdigest()


def write_pickle_cache(path: str | Path, obj: Any) -> bool:
    """Pickle ``obj`` to the cache file ``path`` through a temporary file beside it
    (``.<name>.<pid>.tmp``, which :func:`remove_stale_temps` can find after a killed run), renamed
    into place; whether it was written (a full or read-only disk only loses the cache)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp.exists():
            tmp.unlink()
        return False


def load_pickle(path: str | Path) -> Any:
    """The object pickled in ``path`` (one of our own caches or model files), read with the cyclic
    garbage collector paused: unpickling an index of millions of small objects otherwise runs the
    collector over and over (three times slower on the look-up index of check-refs). The objects
    loaded are then frozen (``gc.freeze``): indexes and models stay loaded, and later collections
    skip them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        with open(path, "rb") as fh:
            got = pickle.load(fh)
        # what was loaded is kept for the life of the process: later collections need not walk it
        gc.freeze()
        return got
    finally:
        if enabled:
            gc.enable()

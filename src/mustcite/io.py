"""Small file helpers shared by every stage: JSONL reading that names file and line, atomic writes."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import MustciteError

_UMASK = os.umask(0)
os.umask(_UMASK)


def open_text(path: str | Path):
    """Open a text file, transparently gunzipping ``.gz``; strict UTF-8."""
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def read_text(path: str | Path, max_chars: int | None = None) -> str:
    """Whole file as text; a non-UTF-8 or corrupt file raises MustciteError naming it.

    With ``max_chars`` the text is read (and a ``.gz`` file decompressed) a block at a time and a
    file holding more characters raises MustciteError once the cap is passed: a small compressed
    file never becomes gigabytes in memory.
    """
    try:
        with open_text(path) as fh:
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


def _reason(exc: BaseException) -> str:
    """An OS error's reason without the path (the caller names the file)."""
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or exc.__class__.__name__


def _json_limit(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def read_json(path: str | Path, *, missing_ok: bool = False) -> Any:
    """A JSON file's value; an unreadable or malformed file raises MustciteError naming it.

    A missing file raises too, unless ``missing_ok``: then it is ``None``.
    """
    if missing_ok and not Path(path).is_file():
        return None
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MustciteError(f"malformed JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except (RecursionError, ValueError) as exc:   # nesting too deep; an integer of too many digits
        raise MustciteError(f"malformed JSON: {_json_limit(exc)}", path=path) from None


def check_output_file(path: str | Path) -> Path:
    """``path`` as an output file, checked before any work is done: not a folder, and its folder
    exists (or can be made) and is writable. Raises UsageError naming the path."""
    from .errors import UsageError

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
    from .errors import UsageError

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError("is a file; give a folder to write into", path=path)
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write here: {probe} is not a writable folder", path=path)
    return path


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; lines are split on ``\\n`` only (never ``splitlines``).

    A malformed line raises MustciteError with the file and line number.
    """
    try:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                # file iteration with newline="" splits on \n (and \r\n), never on U+2028 / U+0085
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


def build_dir_once(dest: str | Path, build: Callable[[Path], None], done: Callable[[Path], bool]) -> Path:
    """``dest``, built by ``build(tmp)`` into a temporary folder beside it and renamed into place
    unless ``done(dest)`` already holds: an interrupted build leaves nothing half-written, and of
    two concurrent builds one complete folder wins."""
    import shutil

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

    def __enter__(self) -> "JsonlWriter":
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

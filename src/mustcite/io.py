"""Small file helpers shared by every stage: JSONL reading that names file and line, atomic writes."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
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


def read_text(path: str | Path) -> str:
    """Whole file as text; a non-UTF-8 or corrupt file raises MustciteError naming it."""
    try:
        with open_text(path) as fh:
            return fh.read()
    except UnicodeDecodeError as exc:
        raise MustciteError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise MustciteError(f"cannot read: {exc}", path=path) from None


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
                if not isinstance(obj, dict):
                    raise MustciteError(f"expected a JSON object, got {type(obj).__name__}",
                                        path=path, line=lineno)
                yield lineno, obj
    except UnicodeDecodeError as exc:
        raise MustciteError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise MustciteError(f"cannot read: {exc}", path=path) from None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write via a temporary file and rename, so a crash never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file normal permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
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
    except (OSError, EOFError) as exc:
        raise MustciteError(f"cannot read: {exc}", path=path) from None
    return h.hexdigest()

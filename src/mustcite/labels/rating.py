"""Human ratings of a validation sample, one answer at a time (``mustcite rate``, the ``/rate`` page).

The sample is the CSV of ``mustcite agreement sample`` (:mod:`mustcite.labels.sample`): one citation
instance per row (``item``, ``contexts`` as ``[section] text || ...``, ``cite``, ``ref_title``, ...;
an optional ``ref_abstract`` column, or abstracts looked up by title in a JSONL file).

Each rater's answers go to ``OUT/<rater>.csv`` with the columns ``item,rater,type1,type2``: the
long-form format of ``mustcite agreement`` (``--label type1`` or ``--label type2``; several raters'
files are read together: ``mustcite agreement OUT/*.csv --label type2``).  Rows are in the order
they were answered; every answer rewrites the file through a temporary file that is fsynced and
renamed, so a closed tab or a killed server loses nothing already answered and never leaves half a
file.  Resuming is picking the first instance of the sample without an answer; undo removes the last
answer given.
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
import threading
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from mustcite.corpus.records import normalize_title
from mustcite.errors import MustciteError
from mustcite.io import iter_csv, iter_jsonl

RATING_COLUMNS = ["item", "rater", "type1", "type2"]
SAMPLE_REQUIRED = ("item", "contexts", "ref_title")
RATER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
TYPE1_VALUES = (0, 1)
TYPE2_VALUES = (1, 2, 3, 4, 5)
_CTX = re.compile(r"^\[([^\]]*)\]\s?(.*)$", re.S)
_BRACKET = re.compile(r"\[([^\[\]]{1,200})\]")


class RatingsFileError(MustciteError):
    """A rater's ratings file on disk cannot be read or written (not UTF-8, malformed, a bad
    answer in it, a folder in its place...): the file's fault, not the request's. Names the file
    and line."""

    @classmethod
    def of(cls, exc: MustciteError) -> RatingsFileError:
        return cls(exc.message, path=exc.path, line=exc.line, field=exc.field, hint=exc.hint)


def check_rater(name: str | None) -> str:
    """The rater name if it is a plain name usable as a file name (letters, digits, ``_.-``)."""
    name = (name or "").strip()
    if not RATER_NAME.match(name):
        raise MustciteError("rater name must be 1-64 letters, digits, '_', '.' or '-' (starting with a letter "
                            f"or digit), got {name!r}", field="rater")
    return name


def _split_contexts(text: str) -> list[dict[str, str]]:
    out = []
    for part in (text or "").split(" || "):
        if not part.strip():
            continue
        m = _CTX.match(part)
        out.append({"section": m.group(1), "text": m.group(2)} if m else {"section": "", "text": part})
    return out


def cite_spans(text: str, cite: str) -> list[tuple[int, int]]:
    """Character spans of ``text`` that cite ``cite``: a bracket group such as ``[3, 12]`` or
    ``[12; 5]`` or ``[10-14]`` holding the numeric marker, else every literal occurrence of the marker
    (author-year markers such as ``Smith et al., 2020``)."""
    cite = (cite or "").strip()
    if not cite:
        return []
    spans = []
    if cite.isdigit():
        n = int(cite)
        for m in _BRACKET.finditer(text):
            for tok in re.split(r"[,;]", m.group(1)):
                tok = tok.strip()
                rng = re.fullmatch(r"(\d+)\s*[-\u2013]\s*(\d+)", tok)
                if tok == cite or (tok.isdigit() and int(tok) == n) or (rng and int(rng[1]) <= n <= int(rng[2])):
                    spans.append(m.span())
                    break
        return spans
    start = text.find(cite)
    while start >= 0:
        spans.append((start, start + len(cite)))
        start = text.find(cite, start + len(cite))
    return spans


def segments(text: str, cite: str) -> list[dict[str, Any]]:
    """``text`` cut into ``{"text", "cite"}`` pieces, ``cite`` true on the citation marker."""
    out, pos = [], 0
    for a, b in cite_spans(text, cite):
        if a > pos:
            out.append({"text": text[pos:a], "cite": False})
        out.append({"text": text[a:b], "cite": True})
        pos = b
    if pos < len(text) or not out:
        out.append({"text": text[pos:], "cite": False})
    return out


def load_abstracts(path: str | Path) -> dict[str, str]:
    """normalised title -> abstract from a JSONL file of records with ``title`` and ``abstract``, or
    from a corpus store (``papers.parquet``: every paper of the corpus)."""
    out: dict[str, str] = {}
    if str(path).endswith(".parquet"):
        try:
            table = pq.read_table(path, columns=["title", "abstract"])
        except Exception as exc:  # noqa: BLE001 - not a readable corpus store: name it
            raise MustciteError(f"cannot read titles and abstracts: {exc}", path=path) from None
        records = zip(table.column("title").to_pylist(), table.column("abstract").to_pylist())
    else:
        records = ((rec.get("title"), rec.get("abstract")) for _, rec in iter_jsonl(path) if isinstance(rec, dict))
    for title, abstract in records:
        if title and abstract:
            out.setdefault(normalize_title(str(title)), str(abstract))
    return out


def load_sample(path: str | Path, abstracts: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The instances of a sample CSV, in file order, ready to show. Raises MustciteError naming the
    file, line and field on a missing column, an empty or repeated item, or an instance without text."""
    path = Path(path)
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    with closing(iter_csv(path, required=SAMPLE_REQUIRED, what="the sample",
                          hint="give the CSV written by `mustcite agreement sample`")) as rows:
        for line, row in rows:
            item = (row.get("item") or "").strip()
            if not item:
                raise MustciteError("empty item", path=path, line=line, field="item")
            if item in seen:
                raise MustciteError(f"item {item!r} appears twice (first on line {seen[item]})", path=path,
                                    line=line, field="item")
            seen[item] = line
            contexts = _split_contexts(row.get("contexts") or "")
            if not contexts:
                raise MustciteError(f"item {item!r} has no citing text", path=path, line=line, field="contexts")
            cite = (row.get("cite") or "").strip()
            title = (row.get("ref_title") or "").strip()
            abstract = (row.get("ref_abstract") or "").strip() or (abstracts or {}).get(normalize_title(title), "")
            out.append({
                "item": item, "index": len(out), "citing": row.get("citing") or "",
                "citing_title": row.get("citing_title") or "", "venue": row.get("venue") or "",
                "year": row.get("year") or "", "cite": cite, "mentions": row.get("mentions") or "",
                "ref_title": title, "ref_year": row.get("ref_year") or "", "ref_abstract": abstract,
                "contexts": [{"section": c["section"], "segments": segments(c["text"], cite)} for c in contexts],
            })
    if not out:
        raise MustciteError("the sample has no instances", path=path)
    return out


def _fsync_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, fsync it, rename it over ``path`` and
    fsync the folder: after this returns the answer is on disk."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _int_label(value: str | None, allowed: tuple[int, ...], path: Path, line: int, name: str) -> int:
    text = (value or "").strip()
    if not text.lstrip("-").isdigit() or int(text) not in allowed:
        raise MustciteError(f"{name} must be one of {', '.join(map(str, allowed))}, got {text!r}",
                            path=path, line=line, field=name)
    return int(text)


@dataclass
class RatingStore:
    """The sample and the ratings folder; answers are read from and written to disk on every call
    (a restarted server, or a second server on the same folder, sees every saved answer)."""

    sample_path: Path
    out_dir: Path
    instances: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, sample: str | Path, out_dir: str | Path, abstracts: str | Path | None = None) -> RatingStore:
        instances = load_sample(sample, load_abstracts(abstracts) if abstracts else None)
        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise MustciteError("is not a folder; give a folder for the ratings files", path=out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MustciteError(f"cannot make the ratings folder: {exc.strerror}", path=out) from None
        if not os.access(out, os.W_OK | os.X_OK):
            raise MustciteError("the ratings folder is not writable", path=out)
        store = cls(Path(sample), out, instances)
        for f in sorted(out.glob("*.csv")):   # refuse a folder with a broken ratings file now, not mid-session
            if RATER_NAME.match(f.stem):
                store.answers(f.stem)
        return store

    @property
    def by_item(self) -> dict[str, dict[str, Any]]:
        return {x["item"]: x for x in self.instances}

    def path_for(self, rater: str) -> Path:
        return self.out_dir / f"{check_rater(rater)}.csv"

    def answers(self, rater: str) -> dict[str, dict[str, int]]:
        """item -> {"type1", "type2"} in the order answered (empty when the rater has no file yet)."""
        path = self.path_for(rater)
        if not path.exists():
            return {}
        try:
            return self._read_answers(rater, path)
        except RatingsFileError:
            raise
        except MustciteError as exc:
            raise RatingsFileError.of(exc) from None

    def _read_answers(self, rater: str, path: Path) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        known = self.by_item
        with closing(iter_csv(path, required=RATING_COLUMNS, what="the ratings file")) as rows:
            for line, row in rows:
                item = (row.get("item") or "").strip()
                if item not in known:
                    raise MustciteError(f"item {item!r} is not in the sample {self.sample_path}", path=path,
                                        line=line, field="item")
                if (row.get("rater") or "").strip() != rater:
                    raise MustciteError(f"rater {row.get('rater')!r} in the file of rater {rater!r}", path=path,
                                        line=line, field="rater")
                if item in out:
                    raise MustciteError(f"item {item!r} answered twice", path=path, line=line, field="item")
                out[item] = {"type1": _int_label(row.get("type1"), TYPE1_VALUES, path, line, "type1"),
                             "type2": _int_label(row.get("type2"), TYPE2_VALUES, path, line, "type2")}
        return out

    def _write(self, rater: str, answers: dict[str, dict[str, int]]) -> None:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(RATING_COLUMNS)
        for item, a in answers.items():
            w.writerow([item, rater, a["type1"], a["type2"]])
        path = self.path_for(rater)
        try:
            _fsync_write(path, buf.getvalue())
        except OSError as exc:
            raise RatingsFileError(f"cannot save the answer: {exc.strerror or exc}", path=path) from None

    def save(self, rater: str, item: str, type1: int, type2: int) -> dict[str, Any]:
        """Record (or replace) ``rater``'s answer for ``item``; on disk when this returns."""
        rater = check_rater(rater)
        if item not in self.by_item:
            raise MustciteError(f"item {item!r} is not in the sample", field="item")
        if type1 not in TYPE1_VALUES or isinstance(type1, bool):
            raise MustciteError(f"Type I must be 0 or 1, got {type1!r}", field="type1")
        if type2 not in TYPE2_VALUES or isinstance(type2, bool):
            raise MustciteError(f"Type II must be 1..5, got {type2!r}", field="type2")
        with self._lock:
            answers = self.answers(rater)
            answers.pop(item, None)          # a replaced answer moves to the end: undo takes it back
            answers[item] = {"type1": int(type1), "type2": int(type2)}
            self._write(rater, answers)
            return self.progress(rater, answers)

    def undo(self, rater: str) -> dict[str, Any]:
        """Remove ``rater``'s last answer; returns it (``undone``: None when there was none)."""
        rater = check_rater(rater)
        with self._lock:
            answers = self.answers(rater)
            undone = None
            if answers:
                item = next(reversed(answers))
                undone = {"item": item, **answers.pop(item)}
                self._write(rater, answers)
            return {"undone": undone, **self.progress(rater, answers)}

    def progress(self, rater: str, answers: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
        answers = self.answers(rater) if answers is None else answers
        return {"rater": rater, "rated": len(answers), "total": len(self.instances),
                "file": str(self.path_for(rater))}

    def all_progress(self) -> dict[str, int]:
        """rater -> answers, for every ratings file in the folder."""
        return {f.stem: len(self.answers(f.stem)) for f in sorted(self.out_dir.glob("*.csv"))
                if RATER_NAME.match(f.stem)}

    def next(self, rater: str) -> dict[str, Any]:
        """The first instance of the sample ``rater`` has not answered (``instance`` None when done)."""
        rater = check_rater(rater)
        answers = self.answers(rater)
        todo = next((x for x in self.instances if x["item"] not in answers), None)
        return {**self.progress(rater, answers), "instance": todo}

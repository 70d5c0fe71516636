"""TREC run and qrels files: read, write, validate.

Run lines: ``qid Q0 docid rank score tag``; qrels lines: ``qid 0 docid rel``. Whitespace separated.
A malformed line raises :class:`~mustcite.errors.MustciteError` naming ``file:line``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import MustciteError
from ..io import atomic_write_text, iter_text_lines, open_text

Run = dict[str, dict[str, float]]      # qid -> {docid: score}
Qrels = dict[str, dict[str, int]]      # qid -> {docid: relevance}


def _lines(path: str | Path):
    """``(line_number, fields)`` of each non-blank line; a ``.gz`` file is decompressed within
    :data:`mustcite.io.MAX_DECOMPRESSED_BYTES` and a line is at most :data:`mustcite.io.MAX_LINE_CHARS`.
    A UTF-8 byte order mark at the start of the file is skipped."""
    try:
        with open_text(path) as fh:
            for lineno, line in iter_text_lines(fh, path):
                if lineno == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                    if not line.strip():
                        continue
                yield lineno, line.split()
    except FileNotFoundError:
        raise MustciteError("file not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise MustciteError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (OSError, EOFError, zlib.error) as exc:      # EOFError, zlib.error: a truncated/corrupt .gz
        raise MustciteError(f"cannot read: {exc}", path=path) from None


def read_run(path: str | Path) -> Run:
    """Read a TREC run file into ``{qid: {docid: score}}``."""
    run: Run = {}
    for lineno, parts in _lines(path):
        if len(parts) != 6:
            raise MustciteError(f"a run line needs 6 fields 'qid Q0 docid rank score tag', got {len(parts)}",
                                path=path, line=lineno)
        qid, _, docid, rank, score, _tag = parts
        try:
            int(rank)
            value = float(score)
        except ValueError:
            raise MustciteError(f"rank must be an integer and score a number, got {rank!r} {score!r}",
                                path=path, line=lineno) from None
        if not math.isfinite(value):
            raise MustciteError(f"score is not finite: {score!r}", path=path, line=lineno)
        docs = run.setdefault(qid, {})
        if docid in docs:
            raise MustciteError(f"document {docid!r} appears twice for query {qid!r}", path=path, line=lineno)
        docs[docid] = value
    return run


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file into ``{qid: {docid: relevance}}``. A (query, document) pair given
    twice with the same relevance is read once; with different relevances it is an error naming
    both lines."""
    qrels: Qrels = {}
    first_line: dict[tuple[str, str], int] = {}
    for lineno, parts in _lines(path):
        if len(parts) != 4:
            raise MustciteError(f"a qrels line needs 4 fields 'qid 0 docid rel', got {len(parts)}",
                                path=path, line=lineno)
        qid, _, docid, rel = parts
        try:
            value = int(rel)
        except ValueError:
            raise MustciteError(f"relevance must be an integer, got {rel!r}", path=path, line=lineno) from None
        docs = qrels.setdefault(qid, {})
        if docid in docs:
            if docs[docid] != value:
                first = first_line[(qid, docid)]
                raise MustciteError(f"query {qid!r}, document {docid!r} has relevance {docs[docid]} on line "
                                    f"{first} and {value} on line {lineno}", path=path, line=lineno,
                                    hint="give each (query, document) pair one relevance")
            continue
        first_line[(qid, docid)] = lineno
        docs[docid] = value
    return qrels


def _check_token(value: str, what: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise MustciteError(f"{what} {value!r} is empty or contains whitespace; TREC files cannot hold it")
    return value


def format_run(results: Mapping[str, Sequence[tuple[str, float]]], tag: str = "mustcite") -> str:
    """TREC run text; each query's list is written in the given order with ranks 1..n."""
    _check_token(tag, "run tag")
    out = []
    for qid, hits in results.items():
        _check_token(qid, "query id")
        for rank, (docid, score) in enumerate(hits, 1):
            out.append(f"{qid} Q0 {_check_token(docid, 'document id')} {rank} {float(score):.6f} {tag}")
    return "\n".join(out) + ("\n" if out else "")


def write_run(path: str | Path, results: Mapping[str, Sequence[tuple[str, float]]], tag: str = "mustcite") -> None:
    atomic_write_text(path, format_run(results, tag))


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> int:
    """Write qrels sorted by qid then docid; returns the number of lines."""
    out = []
    for qid in sorted(qrels):
        for docid in sorted(qrels[qid]):
            q, d = _check_token(qid, "query id"), _check_token(docid, "document id")
            out.append(f"{q} 0 {d} {int(qrels[qid][docid])}")
    atomic_write_text(path, "\n".join(out) + ("\n" if out else ""))
    return len(out)

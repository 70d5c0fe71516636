"""Queries files: JSONL, one ``{"id", "title", "abstract"}`` a line, read into :class:`~.base.Doc`."""

from __future__ import annotations

from pathlib import Path

from ..errors import MustciteError
from ..io import iter_jsonl
from .base import Doc


def read_queries(path: str | Path) -> list[Doc]:
    """Read a queries JSONL file (``{"id","title","abstract"}`` a line); bad lines name file:line."""
    path = Path(path)
    if not path.exists():
        raise MustciteError("queries file not found", path=path)
    out, seen = [], set()
    for lineno, obj in iter_jsonl(path):
        qid = obj.get("id")
        if not isinstance(qid, (str, int)) or str(qid).strip() == "" or any(c.isspace() for c in str(qid)):
            raise MustciteError("query needs a non-empty 'id' without whitespace", path=path, line=lineno,
                                field="id")
        title, abstract = obj.get("title"), obj.get("abstract", "")
        if not isinstance(title, str) or not title.strip():
            raise MustciteError("query needs a non-empty 'title'", path=path, line=lineno, field="title")
        if abstract is None:
            abstract = ""
        if not isinstance(abstract, str):
            raise MustciteError("'abstract' must be a string", path=path, line=lineno, field="abstract")
        if str(qid) in seen:
            raise MustciteError(f"duplicate query id {qid!r}", path=path, line=lineno, field="id")
        seen.add(str(qid))
        out.append(Doc(str(qid), title, abstract))
    if not out:
        raise MustciteError("no queries in file", path=path)
    return out

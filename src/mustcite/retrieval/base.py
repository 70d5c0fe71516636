"""The retriever interface shared by every retrieval method, and its inputs.

A :class:`Retriever` indexes a candidate pool (``Paper`` objects or dicts with ``paper_id``,
``title``, ``abstract``) and answers queries ``{"id", "title", "abstract"}`` with a ranked list of
``(paper_id, score)`` per query id. Methods live one per module (``bm25``, ``dense``);
:func:`~.registry.make_retriever` picks one by name or model path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import MustciteError

Results = dict[str, list[tuple[str, float]]]


@dataclass(frozen=True)
class Doc:
    """A pool candidate or a query, reduced to what retrieval reads."""

    id: str
    title: str
    abstract: str = ""

    @property
    def text(self) -> str:
        return doc_text(self.title, self.abstract)


def doc_text(title: str, abstract: str) -> str:
    """The one text every method sees: title and abstract joined (title alone if no abstract)."""
    title = (title or "").strip()
    abstract = (abstract or "").strip()
    if not abstract:
        return title
    sep = " " if title.endswith((".", "?", "!", ":")) else ". "
    return f"{title}{sep}{abstract}"


def as_doc(item: Any, *, id_key: str = "paper_id") -> Doc:
    """A ``Paper``, a pool dict (``paper_id``) or a query dict (``id``) as a :class:`Doc`."""
    if isinstance(item, Doc):
        return item
    if not isinstance(item, dict):
        item = item.to_dict() if hasattr(item, "to_dict") else vars(item)
    pid = item.get(id_key) or item.get("id") or item.get("paper_id")
    if not pid:
        raise MustciteError(f"record without '{id_key}'", field=id_key)
    return Doc(str(pid), str(item.get("title") or ""), str(item.get("abstract") or ""))


def as_docs(items, *, id_key: str = "paper_id") -> list[Doc]:
    return [as_doc(x, id_key=id_key) for x in items]


@runtime_checkable
class Retriever(Protocol):
    name: str

    def index(self, pool: list[Any]) -> None: ...

    def search(self, queries: list[Any], k: int = 100) -> Results: ...

    def save(self, path: str | Path) -> None: ...

    def metadata(self) -> dict[str, Any]: ...

"""Recommender queries: checking a query's text and year, and the year it is served for.

A query is a dict ``{"id", "title", "abstract"[, "year"]}`` (or a :class:`~mustcite.retrieval.base.Doc`);
:func:`parse_query` checks it and returns its text and year. A query without a year is served as
of today's calendar year (:func:`effective_year`).
"""

from __future__ import annotations

import datetime
from typing import Any

from ..errors import MustciteError, UsageError
from ..retrieval.base import Doc

MAX_TITLE = 1000          # characters of a query's title (the REST API's limit too)
MAX_ABSTRACT = 20000      # characters of a query's abstract
MAX_TEXT = MAX_TITLE + MAX_ABSTRACT   # characters of title + abstract a query may have
MIN_YEAR = 1900           # the earliest query year accepted


def today_year() -> int:
    """The year of a query that gives none: today's calendar year."""
    return datetime.date.today().year


def effective_year(year: int | None) -> int:
    """The year a query is served for: its own, else today's calendar year."""
    return today_year() if year is None else year


def parse_year(value: Any, field: str = "year") -> int | None:
    """A query year: None (or "") for none, else a whole number from MIN_YEAR to next year;
    anything else raises MustciteError naming ``field``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        year = int(value.strip())
    if year is None:
        raise MustciteError(f"year must be a whole number such as 2024, got {value!r}", field=field)
    hi = today_year() + 1
    if not MIN_YEAR <= year <= hi:
        raise MustciteError(f"year must be between {MIN_YEAR} and {hi}, got {year}", field=field)
    return year


def check_text_length(title: str, abstract: str) -> None:
    """Refuse a query whose title and abstract together exceed MAX_TEXT characters, naming the
    field to shorten (``title`` when the title alone is too long, else ``abstract``)."""
    size = len(title) + len(abstract)
    if size > MAX_TEXT:
        field = "title" if len(title) > MAX_TEXT else "abstract"
        raise MustciteError(f"query title + abstract is {size:,} characters, longer than the {MAX_TEXT:,} "
                            "a query may have", field=field)


def parse_query(q: Any, i: int = 0) -> tuple[Doc, int | None]:
    """``(doc, year)`` of the ``i``-th query (its id defaults to ``q<i+1>``); a bad query raises
    MustciteError naming the field. A :class:`Doc` is taken as it is, without a year."""
    if isinstance(q, Doc):
        return q, None
    if not isinstance(q, dict):
        raise UsageError(f"query {i + 1} is a {type(q).__name__}: a query is a dict with 'title' and 'abstract'",
                         field="queries")
    title, abstract = q.get("title"), q.get("abstract") or ""
    for name, value in (("title", title), ("abstract", abstract)):
        if not isinstance(value, str):
            raise MustciteError(f"query {name} must be a string, got {type(value).__name__}", field=name)
    if not (title.strip() or abstract.strip()):
        raise MustciteError("query has neither a title nor an abstract", field="title")
    check_text_length(title, abstract)
    return Doc(str(q.get("id") or f"q{i + 1}"), title.strip(), abstract.strip()), parse_year(q.get("year"))

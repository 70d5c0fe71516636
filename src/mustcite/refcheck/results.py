"""What a check says about one entry: :class:`RefCheck` with its :class:`Issue` list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: the statuses, in report order (new ones are appended: a JSON reader's names never change);
#: ``unreadable``: a block of the file that could not be read (a brace error, a field over the caps)
STATUSES = ("verified", "outdated", "mismatch", "not_found", "unverifiable", "unreadable")

#: the statuses each ``--fail-on`` level fails on (each level includes the graver ones: mismatch
#: fails on not_found too; outdated, an earlier version cited where a published one exists, fails
#: only on its own level, since nothing in such an entry is wrong); every level also fails on
#: :data:`FAIL_ALWAYS` (:func:`fail_statuses` gives the whole gate)
FAIL_ON = {"not_found": ("not_found",), "mismatch": ("mismatch", "not_found"),
           "outdated": ("outdated", "mismatch", "not_found")}
#: statuses every ``--fail-on`` level fails on: what could not be read was not checked, so a gate
#: must not pass it
FAIL_ALWAYS = ("unreadable",)


def fail_statuses(level: str) -> tuple[str, ...]:
    """The statuses a ``--fail-on`` level fails on: :data:`FAIL_ON` and :data:`FAIL_ALWAYS`."""
    return FAIL_ON[level] + FAIL_ALWAYS


@dataclass
class Issue:
    field: str                 # title | authors | year | venue | doi | identifier
    entry: Any
    record: Any
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "entry": self.entry, "record": self.record, "why": self.why}


@dataclass
class RefCheck:
    key: str
    status: str                                   # one of STATUSES
    issues: list[Issue] = field(default_factory=list)
    record: dict[str, Any] | None = None          # {title, authors, year, venue, paper_id, source, ...}
    why: str = ""                                 # one line: the reason for the status
    notes: list[str] = field(default_factory=list)   # what was noticed but is not an error
    entry: dict[str, Any] = field(default_factory=dict)   # the entry as read (title, authors, year, venue)
    source: str = ""                              # "refs.bib:12"
    bibtex: str = ""                              # outdated: the published version's entry, under this key

    def to_json(self) -> dict[str, Any]:
        out = {"key": self.key, "status": self.status, "issues": [i.to_json() for i in self.issues],
               "record": self.record, "why": self.why, "notes": list(self.notes), "entry": self.entry,
               "source": self.source}
        if self.bibtex:
            out["bibtex"] = self.bibtex
        return out

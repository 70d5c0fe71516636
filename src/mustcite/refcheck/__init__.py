"""Checking a bibliography against the corpus: is each entry a real paper, cited correctly?

Public API::

    check_refs(path, work=None) -> list[RefCheck]     # .bib, .bbl, LaTeX project/archive or draft
    RefCheck.to_json() -> {"key", "status", "issues", "record", ...}
    load_index(work=None) -> RefIndex                  # built once, cached under <work>/cache/refcheck

Statuses: ``verified``, ``outdated`` (an arXiv preprint or workshop version is cited where a
published version exists; nothing else is wrong), ``mismatch`` (a field is wrong), ``not_found`` (the
claimed venue-year is measured to be held completely, in every track the entry could belong to, and
no record matches; :mod:`.coverage`), ``unverifiable`` (the corpus cannot
say), ``unreadable`` (a block of the file that could not be read: a brace error, a field over the
caps; every ``--fail-on`` level fails on it). See :mod:`.check` for the rules.
"""

from .check import check_entries, check_entry, check_file, check_refs, joined_title
from .coverage import SHORT_PAGES, TRACKS_UNDER_MAIN_NAME, Coverage
from .entries import Entry, entries_from_bib, read_entries, volume_in_text
from .index import RefIndex, load_index
from .person_names import name_tokens, same_person
from .results import FAIL_ALWAYS, FAIL_ON, STATUSES, Issue, RefCheck, fail_statuses
from .venue import classify_venue
from .witness import CHECK_NOTES, checks_fired

__all__ = ["CHECK_NOTES", "FAIL_ALWAYS", "FAIL_ON", "SHORT_PAGES", "STATUSES", "TRACKS_UNDER_MAIN_NAME", "Coverage",
           "Entry", "Issue", "RefCheck", "RefIndex", "check_entries", "checks_fired",
           "check_entry", "check_file", "check_refs", "classify_venue", "entries_from_bib", "fail_statuses",
           "joined_title", "load_index", "name_tokens", "read_entries", "same_person", "volume_in_text"]

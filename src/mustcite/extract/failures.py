"""Failure modes of an extraction and the paper's status: every reading path (Markdown, PDF, TEI,
LaTeX, and the runner around them) records its modes in a :class:`FailureReport`, whose status is
``failed`` when a mode is in :data:`FATAL`, ``flagged`` when any mode is recorded, else ``ok``.

Flags (status ``flagged``); the first six are those of the MasterSet paper, Appendix B:

* ``reordering`` (Case I): the list's own ``[n]`` labels are out of order, repeated or skip
  numbers, so list position and cite key disagree (we still resolve by label).
* ``ocr_digit`` (Case II): numeric keys with OCR look-alikes (``[l0]``, ``[1O]``) were repaired.
* ``alpha_numeric_mismatch`` (Case III): more than 30% of entries carry alpha tags while the body
  cites with numbers; the numeric keys cannot be linked.
* ``keys_beyond_list``: numeric keys cite numbers that no entry carries (list incomplete or merged).
* ``low_resolution``: fewer than half of the in-text mentions resolved.
* ``no_mentions``: a reference list but no in-text citation found.
* ``incomplete_bibliography``: a page OCR failed on (Nougat's ``[MISSING_PAGE_FAIL]``) lies in or
  next to the reference list, so entries may be lost: such a paper's references are no gold list.
* ``empty_reference_list``: the PDF, TEI or LaTeX reading found no reference (no References section,
  no entry with a year, no ``\\cite``); the paper is kept with an empty list (the runner tries its
  next path; a draft is audited from its title and abstract). The Markdown reading fails such a
  paper instead, as ``no_references``.
* ``no_citations``: the PDF reading found references but no in-text citation matching one.
* ``undefined_keys``: more than half of a LaTeX draft's cited keys are defined in no .bib/.bbl file.

Fatal (status ``failed``):

* ``no_references``: the Markdown has no reference section, or none of its entries has a year.
* ``empty``: the text or the file is empty.
* ``garbage``: the text does not look like prose (binary or garbled).
* ``too_long``: the text is longer than a paper can be.
* ``too_large``: the file is over the runner's size cap.
* ``binary``: a Markdown file holds NUL bytes.
* ``unreadable``: the file cannot be read (or decoded).
* ``unsupported``: the file type is none the runner reads.
* ``unreadable_pdf``: not a PDF, a damaged one, or one that needs a password.
* ``no_text_layer``: the PDF has (almost) no text: a scan.
* ``malformed_tei``: the TEI is not well-formed XML, or not a TEI document.
* ``grobid_error``: the GROBID service did not return a TEI document.
* ``error``: the reading path raised a :class:`~mustcite.errors.MustciteError`.
* ``crash``: the reading path raised an unexpected exception.
* ``schema``: the reference list fails its schema (MasterSet Appendix C).
* ``worker_lost``: the worker that ran the paper died; it is written nowhere, so a rerun tries again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import ExtractedPaper

FATAL = frozenset({"no_references", "empty", "garbage", "too_long", "too_large", "binary", "unreadable",
                   "unsupported", "unreadable_pdf", "no_text_layer", "malformed_tei", "grobid_error", "error",
                   "crash", "schema", "worker_lost"})
#: the modes that only flag a paper (for reference: a mode in neither set flags it too)
FLAGS = frozenset({"reordering", "ocr_digit", "alpha_numeric_mismatch", "keys_beyond_list", "low_resolution",
                   "no_mentions", "incomplete_bibliography", "empty_reference_list", "no_citations",
                   "undefined_keys"})
ALPHA_SHARE = 0.30


def status_of(modes: Iterable[str]) -> str:
    """The status these failure modes give: ``failed`` with a fatal one, ``flagged`` with any, else ``ok``."""
    modes = list(modes)
    if any(m in FATAL for m in modes):
        return "failed"
    return "flagged" if modes else "ok"


@dataclass
class FailureReport:
    modes: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def add(self, mode: str, message: str | None = None) -> FailureReport:
        """Record ``mode`` (once) and its message (when there is one); returns self."""
        if mode not in self.modes:
            self.modes.append(mode)
        if message is not None:
            self.messages.append(message)
        return self

    @property
    def status(self) -> str:
        return status_of(self.modes)

    def finish(self, paper: ExtractedPaper) -> ExtractedPaper:
        """Record the report on ``paper``: its modes after those already there (each once), its
        messages after the paper's own, and the status all the paper's modes give; returns ``paper``."""
        paper.failure_modes.extend(m for m in self.modes if m not in paper.failure_modes)
        paper.messages.extend(self.messages)
        paper.status = status_of(paper.failure_modes)
        return paper


def label_disorder(numbers: list[int | None]) -> tuple[int, int, int]:
    """(inversions, repeated labels, missing numbers) of a list's numeric labels in list order.

    Missing numbers count the labels below the highest one that no entry carries, taking an
    unlabelled entry as the previous label + 1.
    """
    nums = [n for n in numbers if n is not None]
    inv = sum(1 for a, b in zip(nums, nums[1:]) if b < a)
    dup = len(nums) - len(set(nums))
    filled, prev = set(), 0
    for n in numbers:
        prev = n if n is not None else prev + 1
        filled.add(prev)
    gaps = (max(filled) - len(filled)) if filled else 0
    return inv, dup, max(0, gaps)


def detect_failures(*, numbers: list[int | None], n_tagged: int, n_entries: int, style: str,
                    body_counts: dict[str, int], mentions_total: int, mentions_resolved: int,
                    ocr_repairs: int, unknown_numbers: int, report: FailureReport | None = None
                    ) -> FailureReport:
    """Check one paper's reference list and mentions for the failure modes above.

    ``numbers``: each entry's own numeric label (None when it has none), in list order;
    ``n_tagged``: entries with an alpha tag; ``body_counts``: citation markers per style in the body;
    ``unknown_numbers``: numeric keys cited in the body that no entry carries.
    """
    rep = report or FailureReport()
    if n_entries == 0:
        rep.add("no_references", "the reference section has no entries")
        return rep
    labelled = sum(n is not None for n in numbers)
    if labelled >= n_entries / 2:
        inv, dup, gaps = label_disorder(numbers)
        if inv:
            rep.add("reordering", f"reference labels out of order ({inv} descents, {dup} repeated); "
                    "keys resolved by each entry's own label")
    if n_tagged > ALPHA_SHARE * n_entries and body_counts.get("numeric", 0) > body_counts.get("alpha", 0):
        rep.add("alpha_numeric_mismatch",
                f"{n_tagged}/{n_entries} entries carry alpha tags but the body cites numerically "
                f"({body_counts.get('numeric', 0)} numeric vs {body_counts.get('alpha', 0)} alpha markers)")
    if ocr_repairs:
        rep.add("ocr_digit", f"repaired {ocr_repairs} numeric keys with OCR look-alike characters")
    if style == "numeric" and unknown_numbers > max(2, 0.05 * mentions_total):
        rep.add("keys_beyond_list", f"{unknown_numbers} numeric keys name no reference entry")
    if mentions_total == 0:
        rep.add("no_mentions", "no in-text citation was found")
    elif mentions_total >= 10 and mentions_resolved < 0.5 * mentions_total \
            and "alpha_numeric_mismatch" not in rep.modes:
        rep.add("low_resolution", f"only {mentions_resolved}/{mentions_total} in-text mentions resolved")
    return rep

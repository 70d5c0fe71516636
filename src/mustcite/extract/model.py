"""The result of extracting one paper: its parsed references with contexts, plus a status.

Every extraction path (Nougat Markdown, GROBID TEI, built-in PDF text, LaTeX) returns an
:class:`ExtractedPaper`; :meth:`ExtractedPaper.to_reference_list` gives the per-paper reference file
content (MasterSet's Appendix C schema). Its ``status``, ``failure_modes`` and their messages come
from a :class:`~mustcite.extract.failures.FailureReport` (:meth:`~mustcite.extract.failures.FailureReport.finish`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .records import Reference

STATUSES = ("ok", "flagged", "failed")


@dataclass
class ExtractedPaper:
    source_path: str
    method: str                                   # "markdown" | "tei" | "grobid" | "pdf" | "latex"
    title: str = ""
    abstract: str = ""
    references: list[Reference] = field(default_factory=list)
    status: str = "ok"                            # "ok" | "flagged" | "failed": FailureReport.finish sets it
    failure_modes: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    #: the body as read (LaTeX drafts): one dict per paragraph, ``{"section", "text", "cites"}`` with
    #: ``cites`` the ``[offset, [keys]]`` of each citation in the rendered ``text``, and ``"heading": True``
    #: for a heading below the main sections (``\subsection``, ``\paragraph``)
    passages: list[dict[str, Any]] = field(default_factory=list)
    #: the sentences of the citation contexts as read (Markdown drafts, ``keep_sentences``), each once,
    #: in text order: ``{"section", "paragraph", "index", "text", "cites"}`` with ``cites`` the
    #: ``[start, end, [targets]]`` of every key of every citation marker in the sentence (the targets
    #: of the references its key resolves to; empty for a key that resolves to none)
    cited_sentences: list[dict[str, Any]] = field(default_factory=list)
    #: the bibliography's entries that no citation command uses (LaTeX drafts)
    uncited: list[Reference] = field(default_factory=list)
    #: the project's ``.tex`` files as written (relative path -> text), to point at a line
    sources: dict[str, str] = field(default_factory=dict)

    def to_reference_list(self) -> list[dict[str, Any]]:
        """The reference file content: one dict per reference, in ``target`` order."""
        return [r.to_dict() for r in sorted(self.references, key=lambda r: r.target)]

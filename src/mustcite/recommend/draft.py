"""A user's draft: exactly the file named, read within caps, or an error that says why.

A draft is never a neighbour of the file given: unlike a corpus run (which may fall back from
``abc.md`` to a sibling ``abc.tei.xml`` or ``abc.pdf``), :func:`read_draft` extracts only ``path``.
Compressed text is decompressed a block at a time up to ``max_chars`` characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import MustciteError, UsageError
from ..extract.model import ExtractedPaper

DRAFT_TYPES = ".pdf, .tei.xml, or Markdown (.md/.mmd, optionally .gz)"
#: A draft's size on disk and its text once decompressed.
MAX_DRAFT_BYTES = 64 * 2**20
MAX_DRAFT_CHARS = 8_000_000


@dataclass
class Draft:
    path: Path
    kind: str                 # markdown | tei | pdf
    title: str
    abstract: str
    paper: ExtractedPaper     # the extraction (references, status, messages)

    @property
    def query_text(self) -> tuple[str, str]:
        """(title, abstract) for the recommender: the abstract's start stands in for a missing title."""
        return self.title or self.abstract[:200], self.abstract


def check_draft_file(path: str | Path, *, max_bytes: int = MAX_DRAFT_BYTES) -> str:
    """The draft's kind (markdown/tei/pdf); a clear error for a missing file, a folder, an
    unsupported type, an empty file, a file over ``max_bytes``, or a .pdf that is not a PDF.
    Cheap (8 bytes read): callers run it before loading a model."""
    from ..extract.run import kind_of

    path = Path(path)
    if path.is_dir():
        raise UsageError("is a folder; give one draft file", path=path, hint=f"a draft is a {DRAFT_TYPES} file")
    if not path.is_file():
        raise MustciteError("draft file not found", path=path)
    kind = kind_of(path)
    if kind is None:
        raise UsageError("unsupported draft type", path=path, hint=f"give a {DRAFT_TYPES} file")
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise MustciteError(f"cannot read: {exc.strerror or exc}", path=path) from None
    if size > max_bytes:
        raise MustciteError(f"too large: {size / 2**20:.1f} MB > {max_bytes / 2**20:.0f} MB cap", path=path)
    if not head:
        raise MustciteError("the draft is empty", path=path)
    if kind == "pdf" and not head.startswith(b"%PDF-"):
        raise MustciteError("file is not a PDF (no %PDF- header)", path=path)
    if kind != "pdf" and head.startswith(b"%PDF-"):
        raise MustciteError(f"file is a PDF but named as {kind}", path=path, hint="rename it to .pdf")
    return kind


def read_draft(path: str | Path, *, max_bytes: int = MAX_DRAFT_BYTES,
               max_chars: int = MAX_DRAFT_CHARS) -> Draft:
    """Extract the draft at ``path`` (only that file); raises MustciteError naming the file and the
    reason when it cannot be read, extracted, or holds neither a title nor an abstract."""
    from ..extract.run import ExtractOptions, extract_paper

    path = Path(path)
    kind = check_draft_file(path, max_bytes=max_bytes)
    paper = extract_paper(path, ExtractOptions(out_dir="", fallbacks=False, max_bytes=max_bytes,
                                               max_chars=max_chars))
    reasons = "; ".join(paper.messages or ["unknown reason"])
    if paper.status == "failed":
        raise MustciteError(f"could not extract the draft: {reasons}", path=path)
    title, abstract = (paper.title or "").strip(), (paper.abstract or "").strip()
    if not (title or abstract):
        why = f" (extraction {paper.status}: {reasons})" if paper.messages else ""
        raise MustciteError(f"found neither a title nor an abstract in the draft{why}", path=path,
                            hint="put the title on the first line and an 'Abstract' section after it")
    return Draft(path, kind, title, abstract, paper)

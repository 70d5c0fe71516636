"""A user's draft: exactly the file named, read within caps, or an error that says why.

A draft is never a neighbour of the file given: unlike a corpus run (which may fall back from
``abc.md`` to a sibling ``abc.tei.xml`` or ``abc.pdf``), :func:`read_draft` extracts only ``path``.
Compressed text is decompressed a block at a time up to ``max_chars`` characters.

A LaTeX draft (kind ``"latex"``) is a ``.tex`` file, a project folder holding ``.tex`` files, or a
source archive (``.zip``, ``.tar.gz``/``.tgz``/``.tar``): :func:`mustcite.extract.latex.extract_latex`
reads it (an archive is unpacked, within caps, into a temporary folder that is always removed), and
its references carry ``bibkey``, ``doi``, ``arxiv``, ``url`` and ``venue`` from the bibliography.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import MustciteError, UsageError
from ..extract.latex import extract_latex
from ..extract.model import ExtractedPaper
from ..extract.runner import ExtractOptions, extract_paper, kind_of

DRAFT_TYPES = (".pdf, .tei.xml, Markdown (.md/.mmd, optionally .gz), or LaTeX (a .tex file, a project "
               "folder, or a .zip/.tar.gz/.tgz source archive)")
LATEX_FILE_SUFFIXES = (".tex", ".ltx", ".latex", ".zip", ".tar.gz", ".tgz", ".tar")
#: A draft's size on disk and its text once decompressed.
MAX_DRAFT_BYTES = 64 * 2**20
MAX_DRAFT_CHARS = 8_000_000


@dataclass
class Draft:
    path: Path
    kind: str                 # markdown | tei | pdf | latex
    title: str
    abstract: str
    paper: ExtractedPaper     # the extraction (references, status, messages)

    @property
    def query_text(self) -> tuple[str, str]:
        """(title, abstract) for the recommender: the abstract's start stands in for a missing title."""
        return self.title or self.abstract[:200], self.abstract


def draft_kind(path: str | Path) -> str | None:
    """The draft kind a file name says (markdown/tei/pdf/latex), None when unsupported."""
    name = Path(path).name.lower()
    if name.endswith(LATEX_FILE_SUFFIXES):
        return "latex"
    return kind_of(Path(path))


def _has_tex(folder: Path, limit: int = 20000) -> bool:
    for i, p in enumerate(folder.rglob("*")):
        if i > limit:
            return False
        if p.name.lower().endswith((".tex", ".ltx", ".latex")) and p.is_file():
            return True
    return False


def check_draft_file(path: str | Path, *, max_bytes: int = MAX_DRAFT_BYTES) -> str:
    """The draft's kind (markdown/tei/pdf/latex); a clear error for a missing file, a folder
    without .tex files, an unsupported type, an empty file, a file over ``max_bytes``, or a .pdf
    that is not a PDF. Cheap (8 bytes read): callers run it before loading a model."""
    path = Path(path)
    if path.is_dir():
        if _has_tex(path):
            return "latex"
        raise UsageError("is a folder with no .tex file; give one draft file or a LaTeX project folder",
                         path=path, hint=f"a draft is a {DRAFT_TYPES}")
    if not path.is_file():
        raise MustciteError("draft file not found", path=path)
    kind = draft_kind(path)
    if kind is None:
        raise UsageError("unsupported draft type", path=path, hint=f"give a {DRAFT_TYPES}")
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
    if kind == "latex" and path.name.lower().endswith(".zip") and not head.startswith(b"PK"):
        raise MustciteError("file is not a zip archive", path=path)
    if kind == "latex" and path.name.lower().endswith((".tar.gz", ".tgz")) and not head.startswith(b"\x1f\x8b"):
        raise MustciteError("file is not a gzip-compressed tar archive", path=path)
    if kind != "pdf" and head.startswith(b"%PDF-"):
        raise MustciteError(f"file is a PDF but named as {kind}", path=path, hint="rename it to .pdf")
    return kind


def extract_draft(path: str | Path, *, max_bytes: int = MAX_DRAFT_BYTES,
                  max_chars: int = MAX_DRAFT_CHARS) -> tuple[str, ExtractedPaper]:
    """``(kind, extracted paper)`` of the draft at ``path`` (only that file, within the size caps);
    raises MustciteError naming the file and the reason when it cannot be read or extracted."""
    path = Path(path)
    kind = check_draft_file(path, max_bytes=max_bytes)
    if kind == "latex":
        return kind, extract_latex(path)
    paper = extract_paper(path, ExtractOptions(out_dir="", fallbacks=False, max_bytes=max_bytes,
                                               max_chars=max_chars, keep_undated=True,
                                               keep_sentences=True))
    if paper.status == "failed":
        raise MustciteError("could not extract the draft: " + "; ".join(paper.messages or ["unknown reason"]),
                            path=path)
    return kind, paper


def read_draft(path: str | Path, *, max_bytes: int = MAX_DRAFT_BYTES,
               max_chars: int = MAX_DRAFT_CHARS) -> Draft:
    """Extract the draft at ``path`` (only that file); raises MustciteError naming the file and the
    reason when it cannot be read, extracted, or holds neither a title nor an abstract."""
    path = Path(path)
    kind, paper = extract_draft(path, max_bytes=max_bytes, max_chars=max_chars)
    if kind == "latex":
        title, abstract = (paper.title or "").strip(), (paper.abstract or "").strip()
        if not (title or abstract):
            raise MustciteError("found neither a \\title nor an abstract in the LaTeX project", path=path,
                                hint="give the main file a \\title{...} and a \\begin{abstract}...\\end{abstract}")
        return Draft(path, kind, title, abstract, paper)
    reasons = "; ".join(paper.messages or ["unknown reason"])
    title, abstract = (paper.title or "").strip(), (paper.abstract or "").strip()
    if not (title or abstract):
        why = f" (extraction {paper.status}: {reasons})" if paper.messages else ""
        raise MustciteError(f"found neither a title nor an abstract in the draft{why}", path=path,
                            hint="put the title on the first line and an 'Abstract' section after it")
    return Draft(path, kind, title, abstract, paper)
